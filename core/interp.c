/* The host interpreter: TensorFlow.js's GraphExecutor.executeAsync in C.
 *
 * Like tfjs (graph_executor.js, execution_context.js) it keeps a stack of
 * (node, context) items and runs a node once every input it names, control
 * inputs included, has a value in the node's context; Merge runs once any has.
 * A context is a stack of loop frames, each with its iteration; a tensor is
 * stored under its node and the context it was made in, and read back from
 * the innermost enclosing context that holds its node. Switch leaves its
 * untaken output absent ("dead"), which stops everything downstream except a
 * Merge. Ops tfjs runs asynchronously (control flow, TensorArray/TensorList,
 * NonMaxSuppression, Where) publish their outputs only once the stack is
 * empty, as their promises do. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph.h"
#include "interp.h"

/* ---- the value map ------------------------------------------------------ */

typedef struct {
    int node, idx; /* node < 0: empty slot */
    core_buf b;
} vm_slot;

struct core_valmap {
    const core_graph *g;
    size_t cap, n;
    vm_slot *slots;
};

static size_t vm_hash(int node, int idx)
{
    uint64_t k = ((uint64_t)(uint32_t)node << 32) | (uint32_t)idx;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k;
}

core_valmap *core_valmap_new(const core_graph *g)
{
    core_valmap *vm = calloc(1, sizeof *vm);
    if (!vm)
        return NULL;
    vm->g = g;
    vm->cap = 64;
    vm->slots = malloc(vm->cap * sizeof *vm->slots);
    if (!vm->slots) {
        free(vm);
        return NULL;
    }
    for (size_t i = 0; i < vm->cap; i++)
        vm->slots[i].node = -1;
    return vm;
}

void core_valmap_free(core_valmap *vm)
{
    if (!vm)
        return;
    for (size_t i = 0; i < vm->cap; i++)
        if (vm->slots[i].node >= 0)
            free(vm->slots[i].b.data);
    free(vm->slots);
    free(vm);
}

size_t core_valmap_size(const core_valmap *vm) { return vm->n; }

int core_valmap_next(const core_valmap *vm, int slot, int *node, int *idx)
{
    for (size_t i = (size_t)(slot + 1); i < vm->cap; i++)
        if (vm->slots[i].node >= 0) {
            *node = vm->slots[i].node;
            *idx = vm->slots[i].idx;
            return (int)i;
        }
    return -1;
}

static vm_slot *vm_find(const core_valmap *vm, int node, int idx)
{
    for (size_t i = vm_hash(node, idx) & (vm->cap - 1);; i = (i + 1) & (vm->cap - 1)) {
        vm_slot *s = &vm->slots[i];
        if (s->node < 0 || (s->node == node && s->idx == idx))
            return s;
    }
}

static int vm_grow(core_valmap *vm)
{
    size_t cap = vm->cap * 2;
    vm_slot *ns = malloc(cap * sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < cap; i++)
        ns[i].node = -1;
    vm_slot *old = vm->slots;
    size_t old_cap = vm->cap;
    vm->slots = ns;
    vm->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].node >= 0)
            *vm_find(vm, old[i].node, old[i].idx) = old[i];
    free(old);
    return 0;
}

si_result core_valmap_put(core_valmap *vm, int node, int idx, const core_buf *v, si_error *err)
{
    if (node < 0 || (vm->g && node >= vm->g->n_nodes) || idx < 0 || v->shape.rank < 0 ||
        v->shape.rank > SI_MAX_RANK)
        return base_fail(err, SI_ERR_ARG, "valmap: bad tensor (node %d, output %d)", node, idx);
    if ((vm->n + 1) * 2 > vm->cap && vm_grow(vm))
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    size_t bytes = (size_t)core_shape_count(&v->shape) * CORE_ELEM;
    void *d = malloc(bytes ? bytes : 1);
    if (!d)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (bytes)
        memcpy(d, v->data, bytes);
    vm_slot *s = vm_find(vm, node, idx);
    if (s->node >= 0) {
        free(s->b.data);
    } else {
        s->node = node;
        s->idx = idx;
        vm->n++;
    }
    s->b = *v;
    s->b.data = d;
    return SI_OK;
}

const core_buf *core_valmap_get(const core_valmap *vm, int node, int idx)
{
    vm_slot *s = vm_find(vm, node, idx);
    return s->node >= 0 ? &s->b : NULL;
}

/* ---- which ops are ours -------------------------------------------------- */

static const char *const control_ops[] = {
    "Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond", NULL};

static int in_list(const char *op, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(op, list[i]))
            return 1;
    return 0;
}

/* tfjs runs these asynchronously (categories control and dynamic). */
static int op_is_async(const char *op)
{
    return in_list(op, control_ops) || !strncmp(op, "TensorArray", 11) ||
           !strncmp(op, "TensorList", 10) || !strcmp(op, "EmptyTensorList") ||
           !strncmp(op, "NonMaxSuppression", 17) || !strcmp(op, "Where");
}

int core_op_is_dynamic(const char *op)
{
    /* not NoOp: it only orders, and rvm hangs its weights off one */
    return op && op_is_async(op);
}

/* Exactly the ops execute() below implements (op_tensor_array, op_tensor_list
 * and op_nms refuse any other name of their prefix at run time, so a prefix
 * test would let a model open that cannot run). */
static const char *const interp_ops[] = {
    "Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond", "NoOp",
    "TensorArrayV3", "TensorArrayWriteV3", "TensorArrayReadV3", "TensorArrayGatherV3",
    "TensorArrayConcatV3", "TensorArrayScatterV3", "TensorArraySplitV3", "TensorArraySizeV3",
    "TensorArrayCloseV3", "EmptyTensorList", "TensorListReserve", "TensorListFromTensor",
    "TensorListScatter", "TensorListScatterV2", "TensorListSplit", "TensorListLength",
    "TensorListSetItem", "TensorListPushBack", "TensorListResize", "TensorListGetItem",
    "TensorListPopBack", "TensorListStack", "TensorListGather", "TensorListConcat",
    "TensorListConcatV2", "NonMaxSuppressionV2", "NonMaxSuppressionV3", "NonMaxSuppressionV4",
    "NonMaxSuppressionV5", "Where", NULL};

int core_interp_runs_op(const char *op) { return op && in_list(op, interp_ops); }

const char *core_interp_op(int i)
{
    return i >= 0 && i < (int)(sizeof interp_ops / sizeof interp_ops[0]) ? interp_ops[i] : NULL;
}

/* ---- interpreter state ---------------------------------------------------- */

typedef struct {
    core_buf b;
    int refs;
} ival;

typedef struct {
    int parent;          /* -1 for the root */
    const char *frame;   /* frame name (points into a node's attr) */
    int iter;
    char *id;            /* tfjs context id: "" or "/frame-0/inner-3" */
} ictx;

typedef struct {
    int node, ctx;
    int n;
    int lazy;            /* a Const not read yet: output 0 present, value NULL */
    ival **v;            /* NULL: absent (dead) */
} ientry;

/* open-addressing map from a 64-bit key to an int */
typedef struct {
    size_t cap, n;
    uint64_t *keys;
    int *vals;
} imap;

typedef struct {
    int kind;            /* 0 TensorArray, 1 TensorList */
    si_dtype dtype;
    int shape_known;     /* element shape: 0 = unknown rank */
    core_shape shape;    /* dims may be -1 */
    int n, cap;
    ival **items;        /* NULL: never written */
    uint8_t *read;       /* TensorArray: read flags */
    int max_size, dynamic, clear_after_read, closed;
    int max_elems;       /* TensorList: -1 unbounded */
    const char *name;
} iresource;

typedef struct {
    int node, ctx;
} item;

typedef struct {
    int node, key_ctx, ctx_after, n;
    ival **outs;
} pending;

typedef struct {
    const core_graph *g;
    core_weight_loader load;
    void *load_user;
    si_error *err;
    ictx *ctx;
    int n_ctx, cap_ctx;
    imap ctx_map;        /* hash of id string → ctx index (chained by probing on equal hash) */
    ientry *ent;
    int n_ent, cap_ent;
    imap ent_map;        /* (node, ctx) → entry */
    imap added;          /* (node, ctx) → 1 */
    int *child_start, *child;
    uint8_t *used;
    uint8_t *defer;      /* staged run: static nodes left for the next GPU stage */
    item *stack;
    int n_stack, cap_stack;
    pending *pend;
    int n_pend, cap_pend;
    iresource *res;
    int n_res, cap_res;
    long long executed;
} interp;

#define RES_HANDLE_BASE 0x51000000
#define MAX_ITERATIONS 1000000
#define MAX_EXECUTED 2000000000LL

static uint64_t mix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    k ^= k >> 33;
    return k;
}

static int imap_init(imap *m)
{
    m->cap = 256;
    m->n = 0;
    m->keys = malloc(m->cap * sizeof *m->keys);
    m->vals = malloc(m->cap * sizeof *m->vals);
    if (!m->keys || !m->vals)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        m->vals[i] = -1;
    return 0;
}

static void imap_free(imap *m)
{
    free(m->keys);
    free(m->vals);
}

/* Slot of key (vals[slot] < 0 when absent). */
static size_t imap_slot(const imap *m, uint64_t key)
{
    for (size_t i = mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
        if (m->vals[i] < 0 || m->keys[i] == key)
            return i;
}

static int imap_get(const imap *m, uint64_t key)
{
    return m->vals[imap_slot(m, key)];
}

static int imap_put(imap *m, uint64_t key, int val)
{
    if ((m->n + 1) * 2 > m->cap) {
        imap old = *m;
        m->cap *= 2;
        m->keys = malloc(m->cap * sizeof *m->keys);
        m->vals = malloc(m->cap * sizeof *m->vals);
        if (!m->keys || !m->vals) {
            free(m->keys);
            free(m->vals);
            *m = old;
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++)
            m->vals[i] = -1;
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.vals[i] >= 0) {
                size_t s = imap_slot(m, old.keys[i]);
                m->keys[s] = old.keys[i];
                m->vals[s] = old.vals[i];
                m->n++;
            }
        imap_free(&old);
    }
    size_t s = imap_slot(m, key);
    if (m->vals[s] < 0)
        m->n++;
    m->keys[s] = key;
    m->vals[s] = val;
    return 0;
}

static uint64_t nc_key(int node, int ctx) { return ((uint64_t)(uint32_t)node << 32) | (uint32_t)ctx; }

static const char *node_name(const interp *in, int k) { return in->g->m->nodes[k].name; }
static const char *node_op(const interp *in, int k) { return in->g->m->nodes[k].op; }

static si_result nomem(interp *in) { return base_fail(in->err, SI_ERR_NOMEM, "out of memory"); }

static si_result node_fail(interp *in, int k, si_result st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static si_result node_fail(interp *in, int k, si_result st, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return base_fail(in->err, st, "%s: node '%s' (%s): %s", in->g->m->json_path, node_name(in, k),
                     node_op(in, k), msg);
}

/* ---- values ---- */

static ival *ival_new(si_dtype dt, const core_shape *s)
{
    ival *v = malloc(sizeof *v);
    if (!v)
        return NULL;
    size_t bytes = (size_t)core_shape_count(s) * CORE_ELEM;
    v->b = (core_buf){.dtype = dt, .shape = *s, .data = malloc(bytes ? bytes : 1)};
    v->refs = 1;
    if (!v->b.data) {
        free(v);
        return NULL;
    }
    return v;
}

static ival *ival_wrap(core_buf b)
{
    ival *v = malloc(sizeof *v);
    if (!v)
        return NULL;
    v->b = b;
    v->refs = 1;
    return v;
}

static ival *ival_ref(ival *v)
{
    if (v)
        v->refs++;
    return v;
}

static void ival_unref(ival *v)
{
    if (v && --v->refs == 0) {
        free(v->b.data);
        free(v);
    }
}

static ival *ival_scalar_f(float x)
{
    core_shape s = {.rank = 0};
    ival *v = ival_new(SI_FLOAT32, &s);
    if (v)
        *(float *)v->b.data = x;
    return v;
}

static ival *ival_scalar_i(int32_t x)
{
    core_shape s = {.rank = 0};
    ival *v = ival_new(SI_INT32, &s);
    if (v)
        *(int32_t *)v->b.data = x;
    return v;
}

static double buf_num(const core_buf *b, int64_t i)
{
    return b->dtype == SI_FLOAT32 ? (double)((const float *)b->data)[i]
                                  : (double)((const int32_t *)b->data)[i];
}

/* ---- contexts ---- */

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* The context (parent's frames + frame at iter); interned by its tfjs id. */
static int ctx_intern(interp *in, int parent, const char *frame, int iter)
{
    const char *pid = in->ctx[parent].id;
    size_t len = strlen(pid) + strlen(frame) + 24;
    char *id = malloc(len);
    if (!id)
        return -1;
    snprintf(id, len, "%s/%s-%d", pid, frame, iter);
    uint64_t h = str_hash(id);
    /* equal hashes of different ids probe on with a perturbed key */
    for (uint64_t k = h;; k = mix64(k + 1)) {
        int c = imap_get(&in->ctx_map, k);
        if (c < 0)
            break;
        if (!strcmp(in->ctx[c].id, id)) {
            free(id);
            return c;
        }
    }
    if (in->n_ctx == in->cap_ctx) {
        int cap = in->cap_ctx * 2;
        ictx *n = realloc(in->ctx, (size_t)cap * sizeof *n);
        if (!n) {
            free(id);
            return -1;
        }
        in->ctx = n;
        in->cap_ctx = cap;
    }
    int c = in->n_ctx;
    uint64_t k = h;
    while (imap_get(&in->ctx_map, k) >= 0)
        k = mix64(k + 1);
    if (imap_put(&in->ctx_map, k, c)) {
        free(id);
        return -1;
    }
    in->ctx[c] = (ictx){.parent = parent, .frame = frame, .iter = iter, .id = id};
    in->n_ctx++;
    return c;
}

/* ---- the tensor map ---- */

static ientry *entry_find(const interp *in, int node, int ctx)
{
    int e = imap_get(&in->ent_map, nc_key(node, ctx));
    return e >= 0 ? &in->ent[e] : NULL;
}

static int is_const_node(const interp *in, int k) { return !strcmp(node_op(in, k), "Const"); }

/* Creates (or empties) the entry of node in ctx with n output slots. */
static ientry *entry_make(interp *in, int node, int ctx, int n)
{
    ientry *e = entry_find(in, node, ctx);
    if (e) {
        for (int i = 0; i < e->n; i++)
            ival_unref(e->v[i]);
        free(e->v);
    } else {
        if (in->n_ent == in->cap_ent) {
            int cap = in->cap_ent * 2;
            ientry *ne = realloc(in->ent, (size_t)cap * sizeof *ne);
            if (!ne)
                return NULL;
            in->ent = ne;
            in->cap_ent = cap;
        }
        if (imap_put(&in->ent_map, nc_key(node, ctx), in->n_ent))
            return NULL;
        e = &in->ent[in->n_ent++];
    }
    *e = (ientry){.node = node, .ctx = ctx, .n = n, .v = calloc((size_t)n + 1, sizeof(ival *))};
    return e->v ? e : NULL;
}

/* Weights are in tfjs's tensor map from the start; ours are read on first use. */
static ientry *entry_lookup(interp *in, int node, int ctx, si_result *st)
{
    ientry *e = entry_find(in, node, ctx);
    if (e || ctx != 0 || !is_const_node(in, node))
        return e;
    e = entry_make(in, node, 0, in->g->n_outs[node]);
    if (!e) {
        *st = nomem(in);
        return NULL;
    }
    e->lazy = 1;
    return e;
}

/* tfjs getTensor: the innermost enclosing context holding the node decides. */
static ientry *tensor_entry(interp *in, int node, int ctx, si_result *st)
{
    for (int c = ctx; c >= 0; c = in->ctx[c].parent) {
        ientry *e = entry_lookup(in, node, c, st);
        if (e || *st != SI_OK)
            return e;
    }
    return NULL;
}

static int entry_has(const ientry *e, int idx)
{
    if (!e || idx >= e->n)
        return 0;
    return e->lazy ? idx == 0 : e->v[idx] != NULL;
}

static si_result materialize(interp *in, ientry *e)
{
    if (!e->lazy)
        return SI_OK;
    int n = in->g->n_outs[e->node];
    core_buf *out = calloc((size_t)n + 1, sizeof *out);
    if (!out)
        return nomem(in);
    si_result st = core_eval_node(in->g, e->node, NULL, 0, out, n, in->load, in->load_user, in->err);
    if (st == SI_OK && !out[0].data)
        st = node_fail(in, e->node, SI_ERR_FORMAT, "the constant has no value");
    for (int i = 0; i < n && st == SI_OK; i++) {
        if (!out[i].data)
            continue;
        if (!(e->v[i] = ival_wrap(out[i])))
            st = nomem(in);
        else
            out[i].data = NULL;
    }
    for (int i = 0; i < n; i++)
        free(out[i].data);
    free(out);
    if (st == SI_OK)
        e->lazy = 0;
    return st;
}

/* Value of edge (node, idx) seen from ctx; NULL if absent. */
static ival *tensor_get(interp *in, int node, int idx, int ctx, si_result *st)
{
    ientry *e = tensor_entry(in, node, ctx, st);
    if (!entry_has(e, idx))
        return NULL;
    if (e->lazy && (*st = materialize(in, e)) != SI_OK)
        return NULL;
    return e->v[idx];
}

static int tensor_present(interp *in, const core_edge *ed, int ctx, si_result *st)
{
    return entry_has(tensor_entry(in, ed->node, ctx, st), ed->idx);
}

/* ---- scheduling ---- */

static si_result push_item(interp *in, int node, int ctx)
{
    if (in->n_stack == in->cap_stack) {
        int cap = in->cap_stack ? in->cap_stack * 2 : 1024;
        item *s = realloc(in->stack, (size_t)cap * sizeof *s);
        if (!s)
            return nomem(in);
        in->stack = s;
        in->cap_stack = cap;
    }
    in->stack[in->n_stack++] = (item){node, ctx};
    return SI_OK;
}

static si_result process_children(interp *in, int node, int ctx)
{
    const core_graph *g = in->g;
    si_result st = SI_OK;
    for (int c = in->child_start[node]; c < in->child_start[node + 1]; c++) {
        int k = in->child[c];
        if (!in->used[k] || imap_get(&in->added, nc_key(k, ctx)) >= 0)
            continue;
        const io_node *n = &g->m->nodes[k];
        int is_merge = !strcmp(n->op, "Merge");
        int ready = !is_merge;
        for (int i = 0; i < n->n_inputs; i++) {
            int has = tensor_present(in, &g->edges[k][i], ctx, &st);
            if (st != SI_OK)
                return st;
            if (is_merge && has) {
                ready = 1;
                break;
            }
            if (!is_merge && !has) {
                ready = 0;
                break;
            }
        }
        if (!ready)
            continue;
        if (imap_put(&in->added, nc_key(k, ctx), 1))
            return nomem(in);
        if ((st = push_item(in, k, ctx)) != SI_OK)
            return st;
    }
    return SI_OK;
}

static void free_outs(ival **outs, int n)
{
    if (!outs)
        return;
    for (int i = 0; i < n; i++)
        ival_unref(outs[i]);
    free(outs);
}

/* Moves outs into the entry of node under key_ctx. */
static si_result store(interp *in, int node, int key_ctx, ival **outs, int n)
{
    ientry *e = entry_make(in, node, key_ctx, n);
    if (!e) {
        free_outs(outs, n);
        return nomem(in);
    }
    for (int i = 0; i < n; i++)
        e->v[i] = outs[i];
    free(outs);
    return SI_OK;
}

/* ---- op helpers ---- */

typedef struct {
    interp *in;
    int node;
    const io_node *n;
    int ctx;
    int n_data;
    ival **data;         /* data inputs in order (control inputs skipped) */
    ival **outs;
    int n_outs;
} opctx;

static si_result need_inputs(opctx *o, int count)
{
    if (o->n_data < count)
        return node_fail(o->in, o->node, SI_ERR_FORMAT, "needs %d inputs, has %d", count,
                         o->n_data);
    return SI_OK;
}

static si_result in_number(opctx *o, int i, double *v)
{
    const core_buf *b = &o->data[i]->b;
    if (core_shape_count(&b->shape) < 1)
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "input %d is empty, a number is needed", i);
    *v = buf_num(b, 0);
    return SI_OK;
}

static si_result in_int(opctx *o, int i, int64_t *v)
{
    double d = 0;
    si_result st = in_number(o, i, &d);
    if (st != SI_OK)
        return st;
    if (!(d >= -2147483648.0 && d <= 2147483647.0))
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "input %d: %g is not an index", i, d);
    *v = (int64_t)d;
    return SI_OK;
}

/* tfjs 'shape' param: a scalar means unknown rank, a vector the dims. */
static si_result in_shape(opctx *o, int i, int *known, core_shape *s)
{
    const core_buf *b = &o->data[i]->b;
    if (b->shape.rank == 0) {
        *known = 0;
        return SI_OK;
    }
    int64_t n = core_shape_count(&b->shape);
    if (b->shape.rank != 1 || n > SI_MAX_RANK)
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "element shape input %d is not a shape", i);
    *known = 1;
    s->rank = (int)n;
    for (int d = 0; d < n; d++) {
        double x = buf_num(b, d);
        s->d[d] = x < 0 ? -1 : (int64_t)x;
    }
    return SI_OK;
}

static int attr_bool(const io_node *n, const char *name, int dflt)
{
    const io_attr *a = io_node_attr(n, name);
    return a && a->kind == IO_ATTR_B ? a->b : dflt;
}

static si_result attr_dtype(opctx *o, const char *name, si_dtype *dt, int *given)
{
    const io_attr *a = io_node_attr(o->n, name);
    *given = 0;
    if (!a || a->kind != IO_ATTR_TYPE)
        return SI_OK;
    if (a->type == IO_DT_OTHER)
        return node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "dtype %s",
                         a->type_name ? a->type_name : "?");
    *dt = (si_dtype)a->type;
    *given = 1;
    return SI_OK;
}

static si_result set_out(opctx *o, int i, ival *v)
{
    if (!v)
        return nomem(o->in);
    if (i >= o->n_outs) {
        ival_unref(v);
        return SI_OK;
    }
    ival_unref(o->outs[i]);
    o->outs[i] = v;
    return SI_OK;
}

static const char *dt_name(si_dtype t) { return t == SI_FLOAT32 ? "float32" : t == SI_INT32 ? "int32" : "bool"; }

static void shape_text(int known, const core_shape *s, char *buf, size_t n)
{
    if (!known) {
        snprintf(buf, n, "(unknown rank)");
        return;
    }
    core_shape_str(s, buf, n);
}

/* assertShapesMatchAllowUndefinedSize */
static int shapes_match(int ka, const core_shape *a, int kb, const core_shape *b)
{
    if (!ka || !kb)
        return 1;
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->d[i] >= 0 && b->d[i] >= 0 && a->d[i] != b->d[i])
            return 0;
    return 1;
}

/* mergeElementShape; -1 when the ranks or dims disagree */
static int merge_shape(int ka, const core_shape *a, int kb, const core_shape *b, int *kout,
                       core_shape *out)
{
    if (!ka) {
        *kout = kb;
        if (kb)
            *out = *b;
        return 0;
    }
    if (!kb) {
        *kout = 1;
        *out = *a;
        return 0;
    }
    if (a->rank != b->rank)
        return -1;
    *kout = 1;
    out->rank = a->rank;
    for (int i = 0; i < a->rank; i++) {
        if (a->d[i] >= 0 && b->d[i] >= 0 && a->d[i] != b->d[i])
            return -1;
        out->d[i] = a->d[i] >= 0 ? a->d[i] : b->d[i];
    }
    return 0;
}

static int fully_defined(int known, const core_shape *s)
{
    if (!known)
        return 0;
    for (int i = 0; i < s->rank; i++)
        if (s->d[i] < 0)
            return 0;
    return 1;
}

/* inferElementShape(list shape, list items, requested shape) */
static si_result infer_elem_shape(opctx *o, const iresource *r, int kreq, const core_shape *req,
                                  core_shape *out)
{
    int k;
    core_shape s;
    char a[96], b[96];
    if (merge_shape(r->shape_known, &r->shape, kreq, req, &k, &s)) {
        shape_text(r->shape_known, &r->shape, a, sizeof a);
        shape_text(kreq, req, b, sizeof b);
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "incompatible element shapes %s and %s", a, b);
    }
    if (!fully_defined(k, &s)) {
        int any = 0;
        for (int i = 0; i < r->n; i++) {
            if (!r->items[i])
                continue;
            any = 1;
            int k2;
            core_shape s2;
            if (merge_shape(1, &r->items[i]->b.shape, k, &s, &k2, &s2))
                return node_fail(o->in, o->node, SI_ERR_SHAPE, "list elements disagree in shape");
            k = k2;
            s = s2;
        }
        if (!any)
            return node_fail(o->in, o->node, SI_ERR_SHAPE,
                             "element shape of an empty list is not fully defined");
    }
    if (!fully_defined(k, &s)) {
        shape_text(k, &s, a, sizeof a);
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "element shape %s is not fully defined", a);
    }
    *out = s;
    return SI_OK;
}

/* A new tensor stacking items[idx[0..n)] (each reshaped to elem) along a new axis 0. */
static si_result stack_items(opctx *o, iresource *r, const int *idx, int n, const core_shape *elem,
                             ival **out)
{
    if (elem->rank + 1 > SI_MAX_RANK)
        return node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "stacked rank over %d", SI_MAX_RANK);
    core_shape s = {.rank = elem->rank + 1};
    s.d[0] = n;
    for (int i = 0; i < elem->rank; i++)
        s.d[i + 1] = elem->d[i];
    int64_t per = core_shape_count(elem);
    ival *v = ival_new(r->dtype, &s);
    if (!v)
        return nomem(o->in);
    for (int i = 0; i < n; i++) {
        const ival *it = idx[i] >= 0 && idx[i] < r->n ? r->items[idx[i]] : NULL;
        if (!it) {
            ival_unref(v);
            return node_fail(o->in, o->node, SI_ERR_SHAPE, "element %d of '%s' is not set", idx[i],
                             r->name);
        }
        if (core_shape_count(&it->b.shape) != per) {
            char a[96], b[96];
            core_shape_str(&it->b.shape, a, sizeof a);
            core_shape_str(elem, b, sizeof b);
            ival_unref(v);
            return node_fail(o->in, o->node, SI_ERR_SHAPE, "element %d of shape %s is not %s",
                             idx[i], a, b);
        }
        memcpy((char *)v->b.data + (size_t)(i * per) * CORE_ELEM, it->b.data,
               (size_t)per * CORE_ELEM);
    }
    *out = v;
    return SI_OK;
}

/* Row i of x (along axis 0) as a new tensor of shape s (same count). */
static ival *slice_rows(const core_buf *x, int64_t row0, int64_t rows, const core_shape *s)
{
    int64_t per = x->shape.rank ? core_shape_count(&x->shape) / (x->shape.d[0] ? x->shape.d[0] : 1) : 1;
    ival *v = ival_new(x->dtype, s);
    if (v && rows * per > 0)
        memcpy(v->b.data, (const char *)x->data + (size_t)(row0 * per) * CORE_ELEM,
               (size_t)(rows * per) * CORE_ELEM);
    return v;
}

static int res_reserve(iresource *r, int n)
{
    if (n <= r->cap)
        return 0;
    int cap = r->cap ? r->cap : 8;
    while (cap < n)
        cap *= 2;
    ival **it = realloc(r->items, (size_t)cap * sizeof *it);
    if (!it)
        return -1;
    r->items = it;
    uint8_t *rd = realloc(r->read, (size_t)cap);
    if (!rd)
        return -1;
    r->read = rd;
    for (int i = r->cap; i < cap; i++) {
        r->items[i] = NULL;
        r->read[i] = 0;
    }
    r->cap = cap;
    return 0;
}

static si_result new_resource(opctx *o, int kind, iresource **out, int32_t *handle)
{
    interp *in = o->in;
    if (in->n_res == in->cap_res) {
        int cap = in->cap_res ? in->cap_res * 2 : 16;
        iresource *r = realloc(in->res, (size_t)cap * sizeof *r);
        if (!r)
            return nomem(in);
        in->res = r;
        in->cap_res = cap;
    }
    iresource *r = &in->res[in->n_res];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->max_elems = -1;
    r->name = o->n->name;
    *handle = RES_HANDLE_BASE + in->n_res++;
    *out = r;
    return SI_OK;
}

static si_result get_resource(opctx *o, int i, int kind, iresource **out, int32_t *handle)
{
    const core_buf *b = &o->data[i]->b;
    int32_t h = b->dtype == SI_INT32 && core_shape_count(&b->shape) == 1 ? *(int32_t *)b->data : -1;
    int idx = h - RES_HANDLE_BASE;
    if (idx < 0 || idx >= o->in->n_res || o->in->res[idx].kind != kind)
        return node_fail(o->in, o->node, SI_ERR_FORMAT, "input %d is not a %s handle", i,
                         kind ? "TensorList" : "TensorArray");
    *out = &o->in->res[idx];
    *handle = h;
    return SI_OK;
}

/* ---- TensorArray (tensor_array.js) ---- */

static si_result ta_write(opctx *o, iresource *r, int64_t index, ival *t)
{
    if (r->closed)
        return node_fail(o->in, o->node, SI_ERR_ARG, "TensorArray '%s' is closed", r->name);
    if (index < 0 || (!r->dynamic && index >= r->max_size))
        return node_fail(o->in, o->node, SI_ERR_SHAPE,
                         "write to index %lld of TensorArray '%s' of size %d", (long long)index,
                         r->name, r->max_size);
    if (index > 100000000)
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "index %lld too large", (long long)index);
    if (t->b.dtype != r->dtype)
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "writes %s to TensorArray '%s' of %s",
                         dt_name(t->b.dtype), r->name, dt_name(r->dtype));
    if (r->n == 0 && (!r->shape_known || r->shape.rank == 0)) {
        r->shape_known = 1;
        r->shape = t->b.shape;
    }
    if (!shapes_match(r->shape_known, &r->shape, 1, &t->b.shape)) {
        char a[96], b[96];
        shape_text(r->shape_known, &r->shape, a, sizeof a);
        core_shape_str(&t->b.shape, b, sizeof b);
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "TensorArray '%s' of %s gets %s", r->name, a, b);
    }
    if (res_reserve(r, (int)index + 1))
        return nomem(o->in);
    if (r->read[index])
        return node_fail(o->in, o->node, SI_ERR_ARG, "index %lld of '%s' written after a read",
                         (long long)index, r->name);
    if (r->items[index])
        return node_fail(o->in, o->node, SI_ERR_ARG, "index %lld of '%s' written twice",
                         (long long)index, r->name);
    r->items[index] = ival_ref(t);
    if (index + 1 > r->n)
        r->n = (int)index + 1;
    return SI_OK;
}

static si_result ta_read(opctx *o, iresource *r, int64_t index, ival **out)
{
    if (r->closed)
        return node_fail(o->in, o->node, SI_ERR_ARG, "TensorArray '%s' is closed", r->name);
    if (index < 0 || index >= r->n)
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "read of index %lld, TensorArray size %d",
                         (long long)index, r->n);
    if (!r->items[index])
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "index %lld was never written (or was cleared)",
                         (long long)index);
    *out = r->items[index];
    r->read[index] = 1;
    return SI_OK;
}

static si_result op_tensor_array(opctx *o)
{
    interp *in = o->in;
    const char *op = o->n->op;
    si_result st;
    iresource *r;
    int32_t h;
    if (!strcmp(op, "TensorArrayV3")) {
        int64_t size;
        if ((st = need_inputs(o, 1)) || (st = in_int(o, 0, &size)))
            return st;
        si_dtype dt = SI_FLOAT32;
        int given;
        if ((st = attr_dtype(o, "dtype", &dt, &given)) || (st = new_resource(o, 0, &r, &h)))
            return st;
        r->dtype = dt;
        r->max_size = (int)size;
        r->dynamic = attr_bool(o->n, "dynamic_size", 0);
        r->clear_after_read = attr_bool(o->n, "clear_after_read", 0);
        const io_attr *es = io_node_attr(o->n, "element_shape");
        if (es && es->kind == IO_ATTR_SHAPE && !es->shape.unknown_rank) {
            r->shape_known = 1;
            r->shape.rank = es->shape.rank;
            for (int i = 0; i < es->shape.rank; i++)
                r->shape.d[i] = es->shape.dim[i] < 0 ? -1 : es->shape.dim[i];
        }
        if ((st = set_out(o, 0, ival_scalar_i(h))))
            return st;
        return set_out(o, 1, ival_scalar_f(1.0f));
    }
    if ((st = need_inputs(o, 1)) || (st = get_resource(o, 0, 0, &r, &h)))
        return st;
    if (!strcmp(op, "TensorArrayWriteV3")) {
        int64_t index;
        if ((st = need_inputs(o, 3)) || (st = in_int(o, 1, &index)) ||
            (st = ta_write(o, r, index, o->data[2])))
            return st;
        return set_out(o, 0, ival_scalar_i(h));
    }
    if (!strcmp(op, "TensorArrayReadV3")) {
        int64_t index;
        ival *v;
        if ((st = need_inputs(o, 2)) || (st = in_int(o, 1, &index)) || (st = ta_read(o, r, index, &v)))
            return st;
        ival_ref(v);
        if (r->clear_after_read) {
            ival_unref(r->items[index]);
            r->items[index] = NULL;
        }
        return set_out(o, 0, v);
    }
    if (!strcmp(op, "TensorArrayGatherV3") || !strcmp(op, "TensorArrayConcatV3")) {
        int concat = !strcmp(op, "TensorArrayConcatV3");
        si_dtype dt;
        int given;
        if ((st = attr_dtype(o, "dtype", &dt, &given)))
            return st;
        if (given && dt != r->dtype)
            return node_fail(in, o->node, SI_ERR_SHAPE, "TensorArray is %s, %s asked",
                             dt_name(r->dtype), dt_name(dt));
        int n = r->n;
        int *idx = NULL;
        if (!concat) {
            if ((st = need_inputs(o, 2)))
                return st;
            int64_t ni = core_shape_count(&o->data[1]->b.shape);
            n = ni < r->n ? (int)ni : r->n; /* indices.slice(0, size()) */
        }
        idx = malloc(((size_t)n + 1) * sizeof *idx);
        if (!idx)
            return nomem(in);
        for (int i = 0; i < n; i++)
            idx[i] = concat ? i : (int)buf_num(&o->data[1]->b, i);
        if (n == 0) {
            free(idx);
            if (!fully_defined(r->shape_known, &r->shape) || r->shape.rank + 1 > SI_MAX_RANK)
                return node_fail(in, o->node, SI_ERR_SHAPE,
                                 "empty TensorArray with an unknown element shape");
            core_shape s = {.rank = r->shape.rank + 1};
            for (int i = 0; i < r->shape.rank; i++)
                s.d[i + 1] = r->shape.d[i];
            if (concat && r->shape.rank > 0) {
                s.rank--;
                for (int i = 0; i < s.rank; i++)
                    s.d[i] = i == 0 ? 0 : r->shape.d[i];
            }
            return set_out(o, 0, ival_new(r->dtype, &s));
        }
        for (int i = 0; i < n; i++) {
            ival *v;
            if ((st = ta_read(o, r, idx[i], &v))) {
                free(idx);
                return st;
            }
        }
        const core_shape *first = &r->items[idx[0]]->b.shape;
        if (!shapes_match(r->shape_known, &r->shape, 1, first)) {
            free(idx);
            return node_fail(in, o->node, SI_ERR_SHAPE, "TensorArray shape mismatch");
        }
        ival *v = NULL;
        if (!concat) {
            st = stack_items(o, r, idx, n, first, &v);
        } else {
            /* concat along axis 0: every element has the first's trailing dims */
            if (first->rank < 1) {
                free(idx);
                return node_fail(in, o->node, SI_ERR_SHAPE, "cannot concat scalars");
            }
            core_shape s = *first;
            int64_t rows = 0;
            for (int i = 0; i < n; i++) {
                const core_shape *si = &r->items[idx[i]]->b.shape;
                int ok = si->rank == first->rank;
                for (int d = 1; ok && d < si->rank; d++)
                    ok = si->d[d] == first->d[d];
                if (!ok) {
                    free(idx);
                    return node_fail(in, o->node, SI_ERR_SHAPE, "concat of mismatched elements");
                }
                rows += si->d[0];
            }
            s.d[0] = rows;
            v = ival_new(r->dtype, &s);
            if (!v)
                st = nomem(in);
            size_t off = 0;
            for (int i = 0; v && i < n; i++) {
                const core_buf *b = &r->items[idx[i]]->b;
                size_t bytes = (size_t)core_shape_count(&b->shape) * CORE_ELEM;
                memcpy((char *)v->b.data + off, b->data, bytes);
                off += bytes;
            }
        }
        if (st == SI_OK && r->clear_after_read)
            for (int i = 0; i < n; i++) {
                ival_unref(r->items[idx[i]]);
                r->items[idx[i]] = NULL;
            }
        free(idx);
        if (st != SI_OK)
            return st;
        return set_out(o, 0, v);
    }
    if (!strcmp(op, "TensorArrayScatterV3")) {
        if ((st = need_inputs(o, 3)))
            return st;
        const core_buf *ib = &o->data[1]->b, *t = &o->data[2]->b;
        int64_t ni = core_shape_count(&ib->shape);
        if (t->dtype != r->dtype)
            return node_fail(in, o->node, SI_ERR_SHAPE, "TensorArray is %s, tensor %s",
                             dt_name(r->dtype), dt_name(t->dtype));
        if (t->shape.rank < 1 || ni != t->shape.d[0])
            return node_fail(in, o->node, SI_ERR_SHAPE, "%lld indices for %lld rows", (long long)ni,
                             (long long)(t->shape.rank ? t->shape.d[0] : 0));
        core_shape es = {.rank = t->shape.rank - 1};
        for (int d = 1; d < t->shape.rank; d++)
            es.d[d - 1] = t->shape.d[d];
        for (int64_t i = 0; i < ni; i++) {
            ival *row = slice_rows(t, i, 1, &es);
            if (!row)
                return nomem(in);
            st = ta_write(o, r, (int64_t)buf_num(ib, i), row);
            ival_unref(row);
            if (st != SI_OK)
                return st;
        }
        return set_out(o, 0, ival_scalar_i(h));
    }
    if (!strcmp(op, "TensorArraySplitV3")) {
        if ((st = need_inputs(o, 3)))
            return st;
        const core_buf *t = &o->data[1]->b, *lb = &o->data[2]->b;
        int64_t nl = core_shape_count(&lb->shape), total = 0;
        for (int64_t i = 0; i < nl; i++)
            total += (int64_t)buf_num(lb, i);
        if (t->dtype != r->dtype || t->shape.rank < 1 || total != t->shape.d[0])
            return node_fail(in, o->node, SI_ERR_SHAPE, "lengths do not split the tensor");
        if (!r->dynamic && nl != r->max_size)
            return node_fail(in, o->node, SI_ERR_SHAPE, "%lld lengths for a TensorArray of %d",
                             (long long)nl, r->max_size);
        int64_t row = 0;
        for (int64_t i = 0; i < nl; i++) {
            int64_t len = (int64_t)buf_num(lb, i);
            core_shape s = t->shape;
            s.d[0] = len;
            ival *part = slice_rows(t, row, len, &s);
            if (!part)
                return nomem(in);
            if (fully_defined(r->shape_known, &r->shape) &&
                core_shape_count(&r->shape) == core_shape_count(&s))
                part->b.shape = r->shape;
            st = ta_write(o, r, i, part);
            ival_unref(part);
            if (st != SI_OK)
                return st;
            row += len;
        }
        return set_out(o, 0, ival_scalar_i(h));
    }
    if (!strcmp(op, "TensorArraySizeV3"))
        return set_out(o, 0, ival_scalar_i(r->n));
    if (!strcmp(op, "TensorArrayCloseV3")) {
        for (int i = 0; i < r->n; i++) {
            ival_unref(r->items[i]);
            r->items[i] = NULL;
        }
        r->n = 0;
        r->closed = 1;
        return set_out(o, 0, ival_scalar_i(h));
    }
    return node_fail(in, o->node, SI_ERR_UNSUPPORTED, "op not implemented");
}

/* ---- TensorList (tensor_list.js) ---- */

static si_result tl_check_dtype(opctx *o, iresource *r)
{
    si_dtype dt;
    int given;
    si_result st = attr_dtype(o, "element_dtype", &dt, &given);
    if (st == SI_OK && given && dt != r->dtype)
        st = node_fail(o->in, o->node, SI_ERR_SHAPE, "list of %s, op wants %s", dt_name(r->dtype),
                       dt_name(dt));
    return st;
}

static si_result tl_set(opctx *o, iresource *r, int64_t index, ival *t)
{
    if (t->b.dtype != r->dtype)
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "list of %s gets %s", dt_name(r->dtype),
                         dt_name(t->b.dtype));
    if (index < 0 || (r->max_elems != -1 && index >= r->max_elems) || index > 100000000)
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "set of element %lld, list max %d",
                         (long long)index, r->max_elems);
    if (!shapes_match(r->shape_known, &r->shape, 1, &t->b.shape))
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "element shape mismatch");
    if (res_reserve(r, (int)index + 1))
        return nomem(o->in);
    ival_unref(r->items[index]);
    r->items[index] = ival_ref(t);
    if (index + 1 > r->n)
        r->n = (int)index + 1;
    return SI_OK;
}

static si_result tl_new(opctx *o, si_dtype dt, int known, const core_shape *s, int max_elems,
                        iresource **r, int32_t *h)
{
    si_result st = new_resource(o, 1, r, h);
    if (st != SI_OK)
        return st;
    (*r)->dtype = dt;
    (*r)->shape_known = known;
    if (known)
        (*r)->shape = *s;
    (*r)->max_elems = max_elems;
    return SI_OK;
}

static si_result op_tensor_list(opctx *o)
{
    interp *in = o->in;
    const char *op = o->n->op;
    si_result st;
    iresource *r;
    int32_t h;
    si_dtype dt = SI_FLOAT32;
    int given, known;
    core_shape es;
    if ((st = attr_dtype(o, "element_dtype", &dt, &given)))
        return st;
    if (!strcmp(op, "TensorListReserve") || !strcmp(op, "EmptyTensorList")) {
        int64_t num;
        if ((st = need_inputs(o, 2)) || (st = in_shape(o, 0, &known, &es)) || (st = in_int(o, 1, &num)))
            return st;
        /* tfjs reserves nothing: the list starts empty */
        if ((st = tl_new(o, dt, known, &es, !strcmp(op, "EmptyTensorList") ? (int)num : -1, &r, &h)))
            return st;
        return set_out(o, 0, ival_scalar_i(h));
    }
    if (!strcmp(op, "TensorListFromTensor") || !strcmp(op, "TensorListScatter") ||
        !strcmp(op, "TensorListScatterV2") || !strcmp(op, "TensorListSplit")) {
        int from = !strcmp(op, "TensorListFromTensor"), split = !strcmp(op, "TensorListSplit");
        int shape_in = from || split ? 1 : 2;
        if ((st = need_inputs(o, shape_in + 1)) || (st = in_shape(o, shape_in, &known, &es)))
            return st;
        const core_buf *t = &o->data[0]->b;
        if (t->shape.rank < 1)
            return node_fail(in, o->node, SI_ERR_SHAPE, "tensor must be at least a vector");
        if (given && from && t->dtype != dt)
            return node_fail(in, o->node, SI_ERR_SHAPE, "tensor is %s, list %s", dt_name(t->dtype),
                             dt_name(dt));
        core_shape rs = {.rank = t->shape.rank - 1};
        for (int d = 1; d < t->shape.rank; d++)
            rs.d[d - 1] = t->shape.d[d];
        if (from && !shapes_match(1, &rs, known, &es))
            return node_fail(in, o->node, SI_ERR_SHAPE, "tensor rows do not match the element shape");
        int64_t num = -1;
        if (!strcmp(op, "TensorListScatterV2") && o->n_data > 3 && (st = in_int(o, 3, &num)))
            return st;
        int64_t rows = t->shape.d[0];
        if (split) {
            const core_buf *lb = &o->data[2]->b;
            int64_t nl = core_shape_count(&lb->shape), total = 0;
            for (int64_t i = 0; i < nl; i++)
                total += (int64_t)buf_num(lb, i);
            if (total != rows)
                return node_fail(in, o->node, SI_ERR_SHAPE, "lengths sum to %lld, tensor has %lld",
                                 (long long)total, (long long)rows);
            int km;
            core_shape ms;
            if (merge_shape(1, &rs, known, &es, &km, &ms))
                return node_fail(in, o->node, SI_ERR_SHAPE, "incompatible element shapes");
            if ((st = tl_new(o, t->dtype, known, &es, (int)nl, &r, &h)))
                return st;
            int64_t row = 0;
            for (int64_t i = 0; i < nl; i++) {
                int64_t len = (int64_t)buf_num(lb, i);
                core_shape s = t->shape;
                s.d[0] = len;
                ival *part = slice_rows(t, row, len, &s);
                if (!part)
                    return nomem(in);
                st = tl_set(o, r, i, part);
                ival_unref(part);
                if (st != SI_OK)
                    return st;
                row += len;
            }
            return set_out(o, 0, ival_scalar_i(h));
        }
        if ((st = tl_new(o, from ? dt : t->dtype, known, &es, from ? -1 : (int)num, &r, &h)))
            return st;
        const core_buf *ib = from ? NULL : &o->data[1]->b;
        if (ib && core_shape_count(&ib->shape) != rows)
            return node_fail(in, o->node, SI_ERR_SHAPE, "indices do not match the tensor's rows");
        for (int64_t i = 0; i < rows; i++) {
            ival *row = slice_rows(t, i, 1, &rs);
            if (!row)
                return nomem(in);
            st = tl_set(o, r, ib ? (int64_t)buf_num(ib, i) : i, row);
            ival_unref(row);
            if (st != SI_OK)
                return st;
        }
        return set_out(o, 0, ival_scalar_i(h));
    }
    if ((st = need_inputs(o, 1)) || (st = get_resource(o, 0, 1, &r, &h)))
        return st;
    if (!strcmp(op, "TensorListLength"))
        return set_out(o, 0, ival_scalar_i(r->n));
    if (!strcmp(op, "TensorListSetItem")) {
        int64_t index;
        if ((st = need_inputs(o, 3)) || (st = in_int(o, 1, &index)) ||
            (st = tl_set(o, r, index, o->data[2])))
            return st;
        return set_out(o, 0, ival_scalar_i(h));
    }
    if (!strcmp(op, "TensorListPushBack")) {
        if ((st = need_inputs(o, 2)))
            return st;
        if (r->max_elems == r->n)
            return node_fail(in, o->node, SI_ERR_SHAPE, "push into a full list");
        if ((st = tl_set(o, r, r->n, o->data[1])))
            return st;
        return set_out(o, 0, ival_scalar_i(h));
    }
    if (!strcmp(op, "TensorListResize")) {
        int64_t size;
        if ((st = need_inputs(o, 2)) || (st = in_int(o, 1, &size)))
            return st;
        if (size < 0 || (r->max_elems != -1 && size > r->max_elems) || size > 100000000)
            return node_fail(in, o->node, SI_ERR_SHAPE, "bad size %lld", (long long)size);
        iresource *d;
        int32_t dh;
        int src = (int)(r - in->res);
        if ((st = tl_new(o, r->dtype, r->shape_known, &r->shape, r->max_elems, &d, &dh)))
            return st;
        r = &in->res[src]; /* the table may have moved */
        if (res_reserve(d, (int)size))
            return nomem(in);
        for (int i = 0; i < size && i < r->n; i++)
            d->items[i] = ival_ref(r->items[i]);
        d->n = (int)size;
        return set_out(o, 0, ival_scalar_i(dh));
    }
    if ((st = tl_check_dtype(o, r)))
        return st;
    if (!strcmp(op, "TensorListGetItem")) {
        int64_t index;
        core_shape out;
        if ((st = need_inputs(o, 3)) || (st = in_int(o, 1, &index)) || (st = in_shape(o, 2, &known, &es)))
            return st;
        if (index < 0 || index >= r->n || !r->items[index])
            return node_fail(in, o->node, SI_ERR_SHAPE, "element %lld of a list of %d is not set",
                             (long long)index, r->n);
        ival *it = r->items[index];
        if (!shapes_match(1, &it->b.shape, known, &es) ||
            (st = infer_elem_shape(o, r, known, &es, &out)) != SI_OK)
            return st ? st : node_fail(in, o->node, SI_ERR_SHAPE, "element shape mismatch");
        if (core_shape_count(&out) != core_shape_count(&it->b.shape))
            return node_fail(in, o->node, SI_ERR_SHAPE, "cannot reshape the element");
        ival *v = ival_new(it->b.dtype, &out);
        if (!v)
            return nomem(in);
        memcpy(v->b.data, it->b.data, (size_t)core_shape_count(&out) * CORE_ELEM);
        return set_out(o, 0, v);
    }
    if (!strcmp(op, "TensorListPopBack")) {
        core_shape out;
        if ((st = need_inputs(o, 2)) || (st = in_shape(o, 1, &known, &es)))
            return st;
        if (r->n == 0)
            return node_fail(in, o->node, SI_ERR_SHAPE, "pop from an empty list");
        if ((st = infer_elem_shape(o, r, known, &es, &out)))
            return st;
        ival *it = r->items[r->n - 1];
        if (!it || core_shape_count(&out) != core_shape_count(&it->b.shape))
            return node_fail(in, o->node, SI_ERR_SHAPE, "cannot pop the last element");
        ival *v = ival_new(it->b.dtype, &out);
        if (!v)
            return nomem(in);
        memcpy(v->b.data, it->b.data, (size_t)core_shape_count(&out) * CORE_ELEM);
        ival_unref(it);
        r->items[--r->n] = NULL;
        return set_out(o, 0, v);
    }
    if (!strcmp(op, "TensorListStack") || !strcmp(op, "TensorListGather") ||
        !strcmp(op, "TensorListConcat") || !strcmp(op, "TensorListConcatV2")) {
        int gather = !strcmp(op, "TensorListGather");
        int concat = !strncmp(op, "TensorListConcat", 16);
        if (concat) {
            known = 0;
            const io_attr *a = io_node_attr(o->n, "element_shape");
            if (a && a->kind == IO_ATTR_SHAPE && !a->shape.unknown_rank) {
                known = 1;
                es.rank = a->shape.rank;
                for (int i = 0; i < es.rank; i++)
                    es.d[i] = a->shape.dim[i] < 0 ? -1 : a->shape.dim[i];
            }
        } else if ((st = need_inputs(o, gather ? 3 : 2)) ||
                   (st = in_shape(o, gather ? 2 : 1, &known, &es))) {
            return st;
        }
        if (!shapes_match(r->shape_known, &r->shape, known, &es))
            return node_fail(in, o->node, SI_ERR_SHAPE, "element shape mismatch");
        core_shape out;
        if ((st = infer_elem_shape(o, r, known, &es, &out)))
            return st;
        int n = r->n;
        if (gather) {
            int64_t ni = core_shape_count(&o->data[1]->b.shape);
            n = ni < r->n ? (int)ni : r->n;
        }
        int *idx = malloc(((size_t)n + 1) * sizeof *idx);
        if (!idx)
            return nomem(in);
        for (int i = 0; i < n; i++)
            idx[i] = gather ? (int)buf_num(&o->data[1]->b, i) : i;
        ival *v = NULL;
        st = stack_items(o, r, idx, n, &out, &v);
        free(idx);
        if (st != SI_OK)
            return st;
        if (concat) {
            /* concat along axis 0 of the elements = the stack with dims 0 and 1 merged */
            if (out.rank < 1) {
                ival_unref(v);
                return node_fail(in, o->node, SI_ERR_SHAPE, "cannot concat scalars");
            }
            core_shape s = out;
            s.d[0] = out.d[0] * n;
            v->b.shape = s;
        }
        return set_out(o, 0, v);
    }
    return node_fail(in, o->node, SI_ERR_UNSUPPORTED, "op not implemented");
}

/* ---- NonMaxSuppression, Where ---- */

static si_result op_nms(opctx *o)
{
    const char *op = o->n->op;
    int v5 = !strcmp(op, "NonMaxSuppressionV5"), v4 = !strcmp(op, "NonMaxSuppressionV4");
    int v2 = !strcmp(op, "NonMaxSuppressionV2");
    si_result st;
    if ((st = need_inputs(o, v2 ? 4 : v5 ? 6 : 5)))
        return st;
    const core_buf *boxes = &o->data[0]->b, *scores = &o->data[1]->b;
    double max_out, iou, score_thr = -INFINITY, sigma = 0.0;
    if ((st = in_number(o, 2, &max_out)) || (st = in_number(o, 3, &iou)) ||
        (!v2 && (st = in_number(o, 4, &score_thr))) || (v5 && (st = in_number(o, 5, &sigma))))
        return st;
    if (boxes->shape.rank != 2 || boxes->shape.d[1] != 4)
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "boxes must be [n,4]");
    if (scores->shape.rank != 1 || scores->shape.d[0] != boxes->shape.d[0])
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "scores must be [n] with n boxes");
    if (boxes->dtype != SI_FLOAT32 || scores->dtype != SI_FLOAT32)
        return node_fail(o->in, o->node, SI_ERR_SHAPE, "boxes and scores must be float32");
    if (!(iou >= 0 && iou <= 1))
        return node_fail(o->in, o->node, SI_ERR_ARG, "iouThreshold must be in [0, 1], but was %g", iou);
    if (!(sigma >= 0 && sigma <= 1))
        return node_fail(o->in, o->node, SI_ERR_ARG, "softNmsSigma must be in [0, 1], but was %g",
                         sigma);
    int n = (int)boxes->shape.d[0];
    int m = max_out < 0 ? 0 : max_out > n ? n : (int)max_out;
    int pad = v4 && attr_bool(o->n, "pad_to_max_output_size", 0);
    int32_t *idx = malloc(((size_t)n + 1) * sizeof *idx);
    float *sc = malloc(((size_t)n + 1) * sizeof *sc);
    if (!idx || !sc) {
        free(idx);
        free(sc);
        return nomem(o->in);
    }
    int ns = core_nms_host(boxes->data, scores->data, n, m, iou, score_thr, sigma, pad, idx, sc);
    if (ns < 0) {
        free(idx);
        free(sc);
        return nomem(o->in);
    }
    int total = pad && ns < m ? m : ns;
    core_shape s = {.rank = 1, .d = {total}};
    ival *vi = ival_new(SI_INT32, &s);
    ival *vs = v5 ? ival_new(SI_FLOAT32, &s) : NULL;
    if (vi)
        memcpy(vi->b.data, idx, (size_t)total * 4);
    if (vs)
        memcpy(vs->b.data, sc, (size_t)total * 4);
    free(idx);
    free(sc);
    if ((st = set_out(o, 0, vi))) {
        ival_unref(vs);
        return st;
    }
    if (v5)
        return set_out(o, 1, vs);
    if (v4)
        return set_out(o, 1, ival_scalar_i(ns));
    return SI_OK;
}

static si_result op_where(opctx *o)
{
    si_result st = need_inputs(o, 1);
    if (st != SI_OK)
        return st;
    if (o->n_data > 1)
        return node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "Where with x and y");
    core_buf out;
    if ((st = core_where_host(&o->data[0]->b, &out, o->in->err)))
        return st;
    ival *v = ival_wrap(out);
    if (!v)
        free(out.data);
    return set_out(o, 0, v);
}

/* ---- executing one node ---- */

static si_result eval_ordinary(opctx *o)
{
    interp *in = o->in;
    const core_buf **bufs = malloc(((size_t)o->n_data + 1) * sizeof *bufs);
    core_buf *out = calloc((size_t)o->n_outs + 1, sizeof *out);
    if (!out || !bufs) {
        free(bufs);
        free(out);
        return nomem(in);
    }
    for (int i = 0; i < o->n_data; i++)
        bufs[i] = &o->data[i]->b;
    si_result st = core_eval_node(in->g, o->node, bufs, o->n_data, out, o->n_outs, in->load,
                                  in->load_user, in->err);
    for (int i = 0; i < o->n_outs; i++) {
        if (st == SI_OK && out[i].data) {
            ival *v = ival_wrap(out[i]);
            if (!v) {
                st = nomem(in);
            } else {
                o->outs[i] = v;
                continue;
            }
        }
        free(out[i].data);
    }
    free(out);
    free(bufs);
    return st;
}

static int pred_true(const core_buf *b)
{
    if (core_shape_count(&b->shape) < 1)
        return 0;
    if (b->dtype == SI_FLOAT32) {
        float f = *(const float *)b->data;
        return f != 0.0f && !isnan(f);
    }
    return *(const int32_t *)b->data != 0;
}

/* Runs node k in ctx; on success *outs (n entries) and *ctx_after are set. */
static si_result execute(interp *in, int k, int ctx, ival ***outs_p, int *n_outs_p, int *ctx_after)
{
    const core_graph *g = in->g;
    const io_node *n = &g->m->nodes[k];
    opctx o = {.in = in, .node = k, .n = n, .ctx = ctx};
    si_result st = SI_OK;
    *ctx_after = ctx;
    o.n_outs = g->n_outs[k] < 2 ? 2 : g->n_outs[k];
    o.outs = calloc((size_t)o.n_outs, sizeof *o.outs);
    o.data = malloc(((size_t)n->n_inputs + 1) * sizeof *o.data);
    if (!o.outs || !o.data) {
        free(o.outs);
        free(o.data);
        return nomem(in);
    }
    int is_merge = !strcmp(n->op, "Merge");
    if (!is_merge) {
        for (int i = 0; i < n->n_inputs; i++) {
            const core_edge *e = &g->edges[k][i];
            if (e->ctrl)
                continue;
            ival *v = tensor_get(in, e->node, e->idx, ctx, &st);
            if (st != SI_OK)
                goto done;
            if (!v) {
                st = node_fail(in, k, SI_ERR_FORMAT, "input '%s' has no value", n->inputs[i]);
                goto done;
            }
            o.data[o.n_data++] = v;
        }
    }
    if (is_merge) {
        for (int i = 0; i < n->n_inputs; i++) {
            ival *v = tensor_get(in, g->edges[k][i].node, g->edges[k][i].idx, ctx, &st);
            if (st != SI_OK)
                goto done;
            if (v) {
                if ((st = set_out(&o, 0, ival_ref(v))) || (st = set_out(&o, 1, ival_scalar_i(i))))
                    goto done;
                break;
            }
        }
    } else if (!strcmp(n->op, "Enter")) {
        if ((st = need_inputs(&o, 1)))
            goto done;
        const io_attr *fa = io_node_attr(n, "frame_name");
        const char *frame = fa && fa->kind == IO_ATTR_S && fa->s ? fa->s : "";
        int c = ctx_intern(in, ctx, frame, 0);
        if (c < 0) {
            st = nomem(in);
            goto done;
        }
        *ctx_after = c;
        st = set_out(&o, 0, ival_ref(o.data[0]));
    } else if (!strcmp(n->op, "Exit")) {
        if ((st = need_inputs(&o, 1)))
            goto done;
        if (in->ctx[ctx].parent < 0) {
            st = node_fail(in, k, SI_ERR_FORMAT, "Exit outside of any loop frame");
            goto done;
        }
        *ctx_after = in->ctx[ctx].parent;
        st = set_out(&o, 0, ival_ref(o.data[0]));
    } else if (!strcmp(n->op, "NextIteration")) {
        if ((st = need_inputs(&o, 1)))
            goto done;
        const ictx *c = &in->ctx[ctx];
        if (c->parent < 0) {
            st = node_fail(in, k, SI_ERR_FORMAT, "NextIteration outside of any loop frame");
            goto done;
        }
        if (c->iter + 1 >= MAX_ITERATIONS) {
            st = node_fail(in, k, SI_ERR_ARG, "loop frame '%s' ran %d iterations", c->frame,
                           MAX_ITERATIONS);
            goto done;
        }
        int nc = ctx_intern(in, c->parent, c->frame, c->iter + 1);
        if (nc < 0) {
            st = nomem(in);
            goto done;
        }
        *ctx_after = nc;
        st = set_out(&o, 0, ival_ref(o.data[0]));
    } else if (!strcmp(n->op, "LoopCond")) {
        if (!(st = need_inputs(&o, 1)))
            st = set_out(&o, 0, ival_ref(o.data[0]));
    } else if (!strcmp(n->op, "Switch")) {
        if (!(st = need_inputs(&o, 2)))
            st = set_out(&o, pred_true(&o.data[1]->b) ? 1 : 0, ival_ref(o.data[0]));
    } else if (!strcmp(n->op, "NoOp")) {
        st = set_out(&o, 0, ival_scalar_f(1.0f));
    } else if (!strncmp(n->op, "TensorArray", 11)) {
        st = op_tensor_array(&o);
    } else if (!strncmp(n->op, "TensorList", 10) || !strcmp(n->op, "EmptyTensorList")) {
        st = op_tensor_list(&o);
    } else if (!strncmp(n->op, "NonMaxSuppressionV", 18) && n->op[18] >= '2' && n->op[18] <= '5' &&
               !n->op[19]) {
        st = op_nms(&o);
    } else if (!strcmp(n->op, "Where")) {
        st = op_where(&o);
    } else if (!strcmp(n->op, "If") || !strcmp(n->op, "StatelessIf") || !strcmp(n->op, "While") ||
               !strcmp(n->op, "StatelessWhile")) {
        st = node_fail(in, k, SI_ERR_UNSUPPORTED, "function-based control flow is not supported");
    } else if (!strncmp(n->op, "Placeholder", 11)) {
        st = node_fail(in, k, SI_ERR_ARG, "the input has no value");
    } else {
        st = eval_ordinary(&o);
    }
done:
    free(o.data);
    if (st != SI_OK) {
        free_outs(o.outs, o.n_outs);
        return st;
    }
    *outs_p = o.outs;
    *n_outs_p = o.n_outs;
    return SI_OK;
}

static si_result process_item(interp *in, item it)
{
    const core_graph *g = in->g;
    const io_node *n = &g->m->nodes[it.node];
    si_result st = SI_OK;
    int key_ctx = -1;
    if (!strcmp(n->op, "Enter") && attr_bool(n, "is_constant", 0))
        key_ctx = it.ctx;
    /* tfjs tests the bare node name: a node with a root value never reruns */
    if (entry_lookup(in, it.node, 0, &st) || st != SI_OK)
        return st != SI_OK ? st : process_children(in, it.node, it.ctx);
    if (in->defer && it.ctx == 0 && in->defer[it.node])
        return SI_OK; /* the next GPU stage computes it */
    if (++in->executed > MAX_EXECUTED)
        return node_fail(in, it.node, SI_ERR_ARG, "more than %lld node runs", MAX_EXECUTED);
    ival **outs = NULL;
    int n_outs = 0, ctx_after = it.ctx;
    if ((st = execute(in, it.node, it.ctx, &outs, &n_outs, &ctx_after)) != SI_OK)
        return st;
    if (key_ctx < 0)
        key_ctx = ctx_after;
    if (op_is_async(n->op)) {
        if (in->n_pend == in->cap_pend) {
            int cap = in->cap_pend ? in->cap_pend * 2 : 64;
            pending *p = realloc(in->pend, (size_t)cap * sizeof *p);
            if (!p) {
                free_outs(outs, n_outs);
                return nomem(in);
            }
            in->pend = p;
            in->cap_pend = cap;
        }
        in->pend[in->n_pend++] = (pending){it.node, key_ctx, ctx_after, n_outs, outs};
        return SI_OK;
    }
    if ((st = store(in, it.node, key_ctx, outs, n_outs)) != SI_OK)
        return st;
    return process_children(in, it.node, ctx_after);
}

/* ---- setup and the run ---- */

static si_result build_children(interp *in)
{
    const core_graph *g = in->g;
    int nn = g->n_nodes;
    in->child_start = calloc((size_t)nn + 2, sizeof *in->child_start);
    size_t total = 0;
    if (!in->child_start)
        return nomem(in);
    for (int k = 0; k < nn; k++)
        for (int i = 0; i < g->m->nodes[k].n_inputs; i++) {
            in->child_start[g->edges[k][i].node + 1]++;
            total++;
        }
    for (int k = 0; k < nn; k++)
        in->child_start[k + 1] += in->child_start[k];
    in->child = malloc((total + 1) * sizeof *in->child);
    int *fill = malloc(((size_t)nn + 1) * sizeof *fill);
    if (!in->child || !fill) {
        free(fill);
        return nomem(in);
    }
    memcpy(fill, in->child_start, (size_t)nn * sizeof *fill);
    for (int k = 0; k < nn; k++)
        for (int i = 0; i < g->m->nodes[k].n_inputs; i++)
            in->child[fill[g->edges[k][i].node]++] = k;
    free(fill);
    return SI_OK;
}

/* getExecutionSubgraph: back from the outputs, stopping at known values,
 * weights and nodes with no inputs. */
static si_result mark_used(interp *in, const uint8_t *known)
{
    const core_graph *g = in->g;
    in->used = calloc((size_t)g->n_nodes + 1, 1);
    int *front = malloc(((size_t)g->n_nodes + 1) * sizeof *front);
    uint8_t *seen = calloc((size_t)g->n_nodes + 1, 1);
    if (!in->used || !front || !seen) {
        free(front);
        free(seen);
        return nomem(in);
    }
    int nf = 0;
    for (int i = 0; i < g->n_outputs; i++) {
        int k = g->outputs[i].node;
        if (!seen[k]) {
            seen[k] = 1;
            front[nf++] = k;
        }
    }
    while (nf > 0) {
        int k = front[--nf];
        in->used[k] = 1;
        if (known[k] || is_const_node(in, k))
            continue;
        for (int i = 0; i < g->m->nodes[k].n_inputs; i++) {
            int p = g->edges[k][i].node;
            if (!seen[p]) {
                seen[p] = 1;
                front[nf++] = p;
            }
        }
    }
    free(front);
    free(seen);
    return SI_OK;
}

static void interp_free(interp *in)
{
    for (int i = 0; i < in->n_ent; i++) {
        for (int j = 0; j < in->ent[i].n; j++)
            ival_unref(in->ent[i].v[j]);
        free(in->ent[i].v);
    }
    free(in->ent);
    for (int i = 0; i < in->n_ctx; i++)
        free(in->ctx[i].id);
    free(in->ctx);
    imap_free(&in->ctx_map);
    imap_free(&in->ent_map);
    imap_free(&in->added);
    for (int i = 0; i < in->n_res; i++) {
        for (int j = 0; j < in->res[i].cap; j++)
            ival_unref(in->res[i].items[j]);
        free(in->res[i].items);
        free(in->res[i].read);
    }
    free(in->res);
    for (int i = 0; i < in->n_pend; i++)
        free_outs(in->pend[i].outs, in->pend[i].n);
    free(in->pend);
    free(in->stack);
    free(in->child_start);
    free(in->child);
    free(in->defer);
    free(in->used);
}

/* Nodes a staged run leaves to the GPU: ordinary ops at the top level (not in
 * a loop frame) that have data inputs; constants and the interpreter's own ops
 * (control flow, tensor arrays and lists, data-dependent shapes) run here. */
static uint8_t *defer_set(const core_graph *g, const uint8_t *known, const uint8_t *host_only)
{
    uint8_t *d = calloc((size_t)g->n_nodes + 1, 1);
    if (!d)
        return NULL;
    for (int k = 0; k < g->n_nodes; k++) {
        const io_node *n = &g->m->nodes[k];
        int data_in = 0;
        for (int j = 0; j < n->n_inputs; j++)
            data_in |= !g->edges[k][j].ctrl;
        d[k] = !known[k] && data_in && !core_op_is_dynamic(n->op) && strcmp(n->op, "Const") &&
               strncmp(n->op, "Placeholder", 11) && !(host_only && host_only[k]);
    }
    return d;
}

/* After a staged run: the values a deferred node or a graph output reads go
 * into vm (whole nodes, all their outputs), for the next stage. */
static si_result export_values(interp *in, core_valmap *vm, const uint8_t *known)
{
    const core_graph *g = in->g;
    si_result st = SI_OK;
    for (int k = 0; k < g->n_nodes && st == SI_OK; k++) {
        if (known[k] || !entry_find(in, k, 0) || is_const_node(in, k))
            continue;
        int want = 0;
        for (int i = 0; i < g->n_outputs; i++)
            want |= g->outputs[i].node == k;
        for (int c = in->child_start[k]; c < in->child_start[k + 1] && !want; c++)
            want = in->defer[in->child[c]];
        if (!want)
            continue;
        for (int j = 0; j < g->n_outs[k] && st == SI_OK; j++) {
            ival *v = tensor_get(in, k, j, 0, &st);
            if (st == SI_OK && v)
                st = core_valmap_put(vm, k, j, &v->b, in->err);
        }
    }
    return st;
}

static si_result interp_run(const core_graph *g, core_valmap *vm, const uint8_t *host_only,
                            core_weight_loader load, void *load_user, int staged, int *complete,
                            si_error *err);

si_result core_interp_run(const core_graph *g, core_valmap *vm, core_weight_loader load,
                          void *load_user, si_error *err)
{
    return interp_run(g, vm, NULL, load, load_user, 0, NULL, err);
}

si_result core_interp_run_stage(const core_graph *g, core_valmap *vm, const uint8_t *host_only,
                                core_weight_loader load, void *load_user, int *complete,
                                si_error *err)
{
    return interp_run(g, vm, host_only, load, load_user, 1, complete, err);
}

static si_result interp_run(const core_graph *g, core_valmap *vm, const uint8_t *host_only,
                            core_weight_loader load, void *load_user, int staged, int *complete,
                            si_error *err)
{
    interp in = {.g = g, .load = load, .load_user = load_user, .err = err};
    si_result st = SI_OK;
    uint8_t *known = NULL;
    in.cap_ctx = 16;
    in.cap_ent = 256;
    in.ctx = malloc((size_t)in.cap_ctx * sizeof *in.ctx);
    in.ent = malloc((size_t)in.cap_ent * sizeof *in.ent);
    known = calloc((size_t)g->n_nodes + 1, 1);
    if (!in.ctx || !in.ent || !known || imap_init(&in.ctx_map) || imap_init(&in.ent_map) ||
        imap_init(&in.added)) {
        st = nomem(&in);
        goto done;
    }
    in.ctx[0] = (ictx){.parent = -1, .frame = "", .iter = 0, .id = strdup("")};
    in.n_ctx = 1;
    if (!in.ctx[0].id) {
        st = nomem(&in);
        goto done;
    }
    /* Every tensor in vm is known, like a fed input: its node is never run. */
    for (size_t i = 0; i < vm->cap; i++) {
        const vm_slot *s = &vm->slots[i];
        if (s->node < 0)
            continue;
        if (s->node >= g->n_nodes) {
            st = base_fail(err, SI_ERR_ARG, "valmap holds node %d of a graph of %d", s->node,
                           g->n_nodes);
            goto done;
        }
        known[s->node] = 1;
    }
    for (int k = 0; k < g->n_nodes; k++) {
        if (!known[k])
            continue;
        int n = g->n_outs[k];
        ientry *e = entry_make(&in, k, 0, n);
        if (!e) {
            st = nomem(&in);
            goto done;
        }
        for (int j = 0; j < n; j++) {
            const core_buf *b = core_valmap_get(vm, k, j);
            if (!b)
                continue;
            ival *v = ival_new(b->dtype, &b->shape);
            if (!v) {
                st = nomem(&in);
                goto done;
            }
            memcpy(v->b.data, b->data, (size_t)core_shape_count(&b->shape) * CORE_ELEM);
            e->v[j] = v;
        }
    }
    if ((st = build_children(&in)) || (st = mark_used(&in, known)))
        goto done;
    if (staged && !(in.defer = defer_set(g, known, host_only))) {
        st = nomem(&in);
        goto done;
    }
    /* tfjs's first stack: inputs, weights, init nodes (popped from the end) */
    for (int k = 0; k < g->n_nodes && st == SI_OK; k++)
        if (known[k] && in.used[k])
            st = push_item(&in, k, 0);
    for (int k = 0; k < g->n_nodes && st == SI_OK; k++)
        if (!known[k] && in.used[k] && is_const_node(&in, k))
            st = push_item(&in, k, 0);
    for (int k = 0; k < g->n_nodes && st == SI_OK; k++)
        if (!known[k] && in.used[k] && !is_const_node(&in, k) && g->m->nodes[k].n_inputs == 0 &&
            strncmp(g->m->nodes[k].op, "Placeholder", 11))
            st = push_item(&in, k, 0);
    while (st == SI_OK && (in.n_stack > 0 || in.n_pend > 0)) {
        while (st == SI_OK && in.n_stack > 0)
            st = process_item(&in, in.stack[--in.n_stack]);
        /* the promises resolve: publish outputs, then schedule children */
        int np = in.n_pend;
        pending *p = in.pend;
        in.pend = NULL;
        in.n_pend = in.cap_pend = 0;
        int i = 0;
        for (; i < np && st == SI_OK; i++) {
            st = store(&in, p[i].node, p[i].key_ctx, p[i].outs, p[i].n);
            p[i].outs = NULL;
            if (st == SI_OK)
                st = process_children(&in, p[i].node, p[i].ctx_after);
        }
        for (; i < np; i++)
            free_outs(p[i].outs, p[i].n);
        free(p);
    }
    if (st != SI_OK)
        goto done;
    if (staged) {
        if ((st = export_values(&in, vm, known)) != SI_OK)
            goto done;
        *complete = 1;
        for (int i = 0; i < g->n_outputs; i++)
            if (!core_valmap_get(vm, g->outputs[i].node, g->outputs[i].idx))
                *complete = 0;
        goto done;
    }
    for (int i = 0; i < g->n_outputs; i++) {
        const core_edge *o = &g->outputs[i];
        if (core_valmap_get(vm, o->node, o->idx))
            continue;
        ival *v = tensor_get(&in, o->node, o->idx, 0, &st);
        if (st != SI_OK)
            goto done;
        if (!v) {
            /* name one needed node that never ran, to point at the cause */
            const char *why = "";
            char buf[300] = "";
            for (int k = 0; k < g->n_nodes; k++)
                if (in.used[k] && !known[k] && g->m->nodes[k].n_inputs == 0 &&
                    !is_const_node(&in, k) && !entry_find(&in, k, 0)) {
                    snprintf(buf, sizeof buf, "; node '%s' (%s) has no value", node_name(&in, k),
                             node_op(&in, k));
                    why = buf;
                    break;
                }
            if (!*why)
                why = "; it depends on a cycle, a dead branch or a missing input";
            st = base_fail(err, SI_ERR_FORMAT, "%s: cannot compute output %d '%s:%d' (%s)%s",
                           g->m->json_path, i, node_name(&in, o->node), o->idx,
                           node_op(&in, o->node), why);
            goto done;
        }
        if ((st = core_valmap_put(vm, o->node, o->idx, &v->b, err)) != SI_OK)
            goto done;
    }
done:
    if (st != SI_OK && err)
        err->status = st;
    free(known);
    interp_free(&in);
    return st;
}
