/* Hash tables as tfjs-converter runs them (executors/hash_table_executor.js,
 * executor/hash_table.js): HashTable(V2) makes one per node (a node run again
 * gets the same), LookupTableImport(V2) and InitializeTable(V2) replace its
 * contents with keys (flattened) and the rows of values (unstacked along axis
 * 0), a later duplicate key winning; LookupTableFind(V2) stacks, per key, its
 * row or the default value; LookupTableSize(V2) counts the distinct keys.
 * Import and Init return the handle, as tfjs does. Keys compare as tfjs's Map
 * compares what keys.data() gives: strings decoded from UTF-8 (so bytes that
 * decode alike are one key), floats by SameValueZero (NaN is one key, -0 is
 * 0). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp_internal.h"

static const char *dt_name(si_dtype t) { return t == IP_STRING ? "string" : ip_dt_name(t); }

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return k ^ (k >> 33);
}

static uint64_t bytes_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return mix(h);
}

static uint64_t num_key(const core_buf *b, int64_t i)
{
    if (b->dtype == SI_FLOAT32) {
        float f = ((const float *)b->data)[i];
        uint32_t bits;
        if (isnan(f))
            return 0x7fc00000u;
        if (f == 0.0f)
            return 0;
        memcpy(&bits, &f, 4);
        return bits;
    }
    return (uint32_t)((const int32_t *)b->data)[i];
}

static void table_clear(itable *t)
{
    for (int i = 0; t->kstr && i < t->n; i++)
        free(t->kstr[i]);
    free(t->kstr);
    free(t->klen);
    free(t->knum);
    free(t->hash);
    free(t->row);
    free(t->slot);
    ip_val_unref(t->vals);
    int node = t->node;
    si_dtype k = t->key_dt, v = t->val_dt;
    memset(t, 0, sizeof *t);
    t->node = node;
    t->key_dt = k;
    t->val_dt = v;
}

void ip_tables_free(interp *in)
{
    for (int i = 0; i < in->n_tables; i++)
        table_clear(&in->tables[i]);
    free(in->tables);
}

/* A string key as a JavaScript string: decoded, then encoded back (decoding
 * never yields lone surrogates, so equal strings give equal bytes). */
static int norm_string(const uint8_t *s, size_t n, uint8_t **out, size_t *len)
{
    uint16_t *u = NULL;
    size_t nu = 0;
    ip_strvec sv = {0};
    if (ip_utf8_to_utf16(s, n, &u, &nu))
        return -1;
    ip_utf16_to_utf8(u, nu, &sv);
    free(u);
    if (sv.oom) {
        ip_sv_free(&sv);
        return -1;
    }
    *out = sv.bytes ? sv.bytes : malloc(1);
    *len = (size_t)sv.cur;
    sv.bytes = NULL;
    ip_sv_free(&sv);
    return *out ? 0 : -1;
}

/* Entry index of the key, or -1; *slot_out: its slot or the empty one. */
static int table_find(const itable *t, uint64_t h, const uint8_t *ks, size_t kl, uint64_t kn,
                      int *slot_out)
{
    if (!t->n_slots)
        return -1;
    for (int s = (int)(h & (uint64_t)(t->n_slots - 1));; s = (s + 1) & (t->n_slots - 1)) {
        int e = t->slot[s];
        if (e < 0) {
            if (slot_out)
                *slot_out = s;
            return -1;
        }
        if (t->hash[e] != h)
            continue;
        if (t->key_dt == IP_STRING ? t->klen[e] == kl && !memcmp(t->kstr[e], ks, kl)
                                   : t->knum[e] == kn) {
            if (slot_out)
                *slot_out = s;
            return e;
        }
    }
}

static si_result table_fill(opctx *o, itable *t, const core_buf *keys, ival *vals)
{
    int64_t n = core_shape_count(&keys->shape);
    if (n > (1 << 28))
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "%lld keys are too many", (long long)n);
    int cap = (int)n + 1, slots = 16;
    while (slots < 2 * cap)
        slots *= 2;
    t->slot = malloc((size_t)slots * sizeof *t->slot);
    t->hash = malloc((size_t)cap * sizeof *t->hash);
    t->row = malloc((size_t)cap * sizeof *t->row);
    t->knum = malloc((size_t)cap * sizeof *t->knum);
    if (t->key_dt == IP_STRING) {
        t->kstr = calloc((size_t)cap, sizeof *t->kstr);
        t->klen = malloc((size_t)cap * sizeof *t->klen);
    }
    if (!t->slot || !t->hash || !t->row || !t->knum ||
        (t->key_dt == IP_STRING && (!t->kstr || !t->klen)))
        return ip_nomem(o->in);
    t->n_slots = slots;
    t->cap = cap;
    for (int s = 0; s < slots; s++)
        t->slot[s] = -1;
    t->vals = ip_val_ref(vals);
    for (int64_t i = 0; i < n; i++) {
        uint8_t *ks = NULL;
        size_t kl = 0;
        uint64_t kn = 0, h;
        if (t->key_dt == IP_STRING) {
            size_t len;
            const uint8_t *s = ip_str(keys, i, &len);
            if (norm_string(s, len, &ks, &kl))
                return ip_nomem(o->in);
            h = bytes_hash(ks, kl);
        } else {
            kn = num_key(keys, i);
            h = mix(kn + 1);
        }
        int slot = 0, e = table_find(t, h, ks, kl, kn, &slot);
        if (e >= 0) {
            free(ks);
            t->row[e] = i; /* Map.set: the later value wins */
            continue;
        }
        e = t->n++;
        t->hash[e] = h;
        t->knum[e] = kn;
        t->row[e] = i;
        if (t->key_dt == IP_STRING) {
            t->kstr[e] = ks;
            t->klen[e] = kl;
        }
        t->slot[slot] = e;
    }
    return SI_OK;
}

/* The table of input 0's handle. */
static si_result table_of(opctx *o, itable **t)
{
    const core_buf *h = &o->data[0]->b;
    int64_t idx = -1;
    if (h->dtype == SI_INT32 && h->shape.rank == 0)
        idx = (int64_t)((const int32_t *)h->data)[0] - TABLE_HANDLE_BASE;
    if (idx < 0 || idx >= o->in->n_tables)
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "input 0 is not a hash table handle");
    *t = &o->in->tables[idx];
    return SI_OK;
}

static si_result check_dt(opctx *o, const itable *t, const core_buf *k, const core_buf *v)
{
    if (k->dtype != t->key_dt)
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "Expect key dtype %s, but got %s",
                            dt_name(t->key_dt), dt_name(k->dtype));
    if (v->dtype != t->val_dt)
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "Expect value dtype %s, but got %s",
                            dt_name(t->val_dt), dt_name(v->dtype));
    return SI_OK;
}

static si_result attr_table_dtype(opctx *o, const char *name, si_dtype *dt)
{
    const io_attr *a = io_node_attr(o->n, name);
    if (a && a->kind == IO_ATTR_TYPE && a->type_name && !strcmp(a->type_name, "DT_STRING")) {
        *dt = IP_STRING;
        return SI_OK;
    }
    if (a && a->kind == IO_ATTR_TYPE && a->type != IO_DT_OTHER) {
        *dt = (si_dtype)a->type;
        return SI_OK;
    }
    return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "attr '%s' is %s", name,
                        a && a->kind == IO_ATTR_TYPE ? "not a dtype tables hold here" : "missing");
}

static si_result hash_table_new(opctx *o)
{
    interp *in = o->in;
    for (int i = 0; i < in->n_tables; i++)
        if (in->tables[i].node == o->node)
            return ip_set_out(o, 0, ip_val_scalar_i(TABLE_HANDLE_BASE + i));
    itable t = {.node = o->node};
    si_result st = attr_table_dtype(o, "key_dtype", &t.key_dt);
    if (st || (st = attr_table_dtype(o, "value_dtype", &t.val_dt)))
        return st;
    if (in->n_tables == in->cap_tables) {
        int cap = in->cap_tables ? in->cap_tables * 2 : 4;
        itable *nt = realloc(in->tables, (size_t)cap * sizeof *nt);
        if (!nt)
            return ip_nomem(in);
        in->tables = nt;
        in->cap_tables = cap;
    }
    in->tables[in->n_tables] = t;
    return ip_set_out(o, 0, ip_val_scalar_i(TABLE_HANDLE_BASE + in->n_tables++));
}

static si_result table_import(opctx *o)
{
    itable *t;
    si_result st = ip_need_inputs(o, 3);
    if (st || (st = table_of(o, &t)))
        return st;
    const core_buf *k = &o->data[1]->b, *v = &o->data[2]->b;
    if ((st = check_dt(o, t, k, v)))
        return st;
    if (v->shape.rank < 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "values must have rank 1 or more to unstack");
    int64_t nk = core_shape_count(&k->shape);
    if (nk != v->shape.d[0])
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "The number of elements doesn't match, keys has %lld elements, the values has %lld elements.",
                            (long long)nk, (long long)v->shape.d[0]);
    table_clear(t);
    if ((st = table_fill(o, t, k, o->data[2])) != SI_OK) {
        table_clear(t);
        return st;
    }
    return ip_set_out(o, 0, ip_val_ref(o->data[0]));
}

/* One row of rows tensor src (its axis 0) into sv or a numeric buffer. */
static void put_row(const core_buf *src, int64_t row, int64_t per, ip_strvec *sv, uint8_t *dst)
{
    if (src->dtype == IP_STRING) {
        for (int64_t j = 0; j < per; j++) {
            size_t len;
            const uint8_t *s = ip_str(src, row * per + j, &len);
            ip_sv_add(sv, s, len);
            ip_sv_end(sv);
        }
    } else {
        memcpy(dst, (const uint8_t *)src->data + (size_t)(row * per) * CORE_ELEM,
               (size_t)per * CORE_ELEM);
    }
}

static si_result table_find_op(opctx *o)
{
    itable *t;
    si_result st = ip_need_inputs(o, 3);
    if (st || (st = table_of(o, &t)))
        return st;
    const core_buf *k = &o->data[1]->b, *d = &o->data[2]->b;
    if ((st = check_dt(o, t, k, d)))
        return st;
    int64_t nk = core_shape_count(&k->shape);
    if (nk == 0)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "Pass at least one tensor to tf.stack");
    if (d->shape.rank >= SI_MAX_RANK || (t->vals && t->vals->b.shape.rank > SI_MAX_RANK))
        return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "values of rank %d are too many dims",
                            SI_MAX_RANK);
    int64_t *rows = malloc((size_t)nk * sizeof *rows);
    if (!rows)
        return ip_nomem(o->in);
    for (int64_t i = 0; i < nk; i++) {
        uint8_t *ks = NULL;
        size_t kl = 0;
        uint64_t kn = 0, h;
        if (t->key_dt == IP_STRING) {
            size_t len;
            const uint8_t *s = ip_str(k, i, &len);
            if (norm_string(s, len, &ks, &kl)) {
                free(rows);
                return ip_nomem(o->in);
            }
            h = bytes_hash(ks, kl);
        } else {
            kn = num_key(k, i);
            h = mix(kn + 1);
        }
        int e = table_find(t, h, ks, kl, kn, NULL);
        free(ks);
        rows[i] = e >= 0 ? t->row[e] : -1;
    }
    /* tf.stack: every row has the shape of the first */
    core_shape elem = {0}, vrow = {0};
    if (t->vals) {
        vrow.rank = t->vals->b.shape.rank - 1;
        for (int j = 0; j < vrow.rank; j++)
            vrow.d[j] = t->vals->b.shape.d[j + 1];
    }
    elem = rows[0] >= 0 ? vrow : d->shape;
    for (int64_t i = 1; i < nk; i++)
        if (!core_shape_eq(rows[i] >= 0 ? &vrow : &d->shape, &elem)) {
            char a[96], b[96];
            free(rows);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                "All tensors passed to stack must have matching shapes: %s and %s",
                                core_shape_str(&vrow, a, sizeof a), core_shape_str(&d->shape, b, sizeof b));
        }
    core_shape os = {.rank = elem.rank + 1, .d = {nk}};
    for (int j = 0; j < elem.rank; j++)
        os.d[j + 1] = elem.d[j];
    int64_t per = core_shape_count(&elem);
    ival *out = NULL;
    ip_strvec sv = {0};
    if (t->val_dt != IP_STRING && !(out = ip_val_new(t->val_dt, &os))) {
        free(rows);
        return ip_nomem(o->in);
    }
    for (int64_t i = 0; i < nk; i++) {
        uint8_t *dst = out ? (uint8_t *)out->b.data + (size_t)(i * per) * CORE_ELEM : NULL;
        if (rows[i] >= 0)
            put_row(&t->vals->b, rows[i], per, &sv, dst);
        else
            put_row(d, 0, per, &sv, dst);
    }
    free(rows);
    if (t->val_dt == IP_STRING && !(out = ip_sv_finish(&sv, &os)))
        return ip_nomem(o->in);
    return ip_set_out(o, 0, out);
}

si_result ip_hash_table(opctx *o)
{
    const char *op = o->n->op;
    if (!strcmp(op, "HashTable") || !strcmp(op, "HashTableV2"))
        return hash_table_new(o);
    if (!strncmp(op, "LookupTableImport", 17) || !strncmp(op, "InitializeTable", 15))
        return table_import(o);
    if (!strncmp(op, "LookupTableFind", 15))
        return table_find_op(o);
    if (!strncmp(op, "LookupTableSize", 15)) {
        itable *t;
        si_result st = ip_need_inputs(o, 1);
        if (st || (st = table_of(o, &t)))
            return st;
        return ip_set_out(o, 0, ip_val_scalar_i(t->n));
    }
    return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "not a hash table op");
}
