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
 * empty, as their promises do.
 *
 * This file holds the value map, contexts, the tensor map, the scheduling
 * and the run; one node's execution is in interp_control.c, its handlers in
 * interp_lists.c and interp_ops.c (interp_internal.h lists who has what). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp_internal.h"

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
    core_buf c = *v;
    if (v->shape.rank >= 0 && v->shape.rank <= SI_MAX_RANK) { /* else refused below */
        size_t bytes = (size_t)core_shape_count(&v->shape) * core_elem_bytes(v->dtype);
        if (!(c.data = malloc(bytes ? bytes : 1)))
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        if (bytes)
            memcpy(c.data, v->data, bytes);
    }
    si_result st = core_valmap_adopt(vm, node, idx, &c, err);
    if (st != SI_OK && c.data != v->data)
        free(c.data);
    return st;
}

si_result core_valmap_adopt(core_valmap *vm, int node, int idx, core_buf *v, si_error *err)
{
    if (node < 0 || (vm->g && node >= vm->g->n_nodes) || idx < 0 || v->shape.rank < 0 ||
        v->shape.rank > SI_MAX_RANK)
        return base_fail(err, SI_ERR_ARG, "valmap: bad tensor (node %d, output %d)", node, idx);
    if ((vm->n + 1) * 2 > vm->cap && vm_grow(vm))
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    void *d = v->data;
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

void core_valmap_take(core_valmap *vm, int node, int idx)
{
    vm_slot *s = vm_find(vm, node, idx);
    if (s->node >= 0)
        s->b.data = NULL;
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
           !strncmp(op, "NonMaxSuppression", 17) || !strcmp(op, "Where") || !strcmp(op, "If") ||
           !strcmp(op, "StatelessIf") || !strcmp(op, "While") || !strcmp(op, "StatelessWhile") ||
           !strcmp(op, "ListDiff") || !strncmp(op, "HashTable", 9) || !strncmp(op, "LookupTable", 11) ||
           !strncmp(op, "InitializeTable", 15);
}

/* Synchronous in tfjs, but their output shapes hang on input values (ListDiff
 * is async there, with the dynamic ops). */
static const char *const shape_from_values_ops[] = {"SparseFillEmptyRows", "SparseReshape",
                                                   "SparseSegmentSum", "SparseSegmentMean",
                                                   "RaggedRange", "RaggedGather", "Unique",
                                                   "UniqueV2", "RaggedTensorToTensor",
                                                   "StaticRegexReplace", "StringNGrams",
                                                   "StringSplit", "StringToHashBucketFast", NULL};

int core_op_is_dynamic(const char *op)
{
    /* not NoOp: it only orders, and rvm hangs its weights off one; the
     * complex ops, because complex64 values live only here (core.h) */
    return op && (op_is_async(op) || in_list(op, shape_from_values_ops) || ip_is_complex_op(op));
}

/* Exactly the ops ip_execute() below implements (ip_tensor_array, ip_tensor_list
 * and ip_nms refuse any other name of their prefix at run time, so a prefix
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
    "NonMaxSuppressionV5", "Where", "SparseFillEmptyRows", "SparseReshape", "SparseSegmentSum",
    "SparseSegmentMean", "RaggedRange", "RaggedGather", "Unique",
    "UniqueV2", "ListDiff", "If", "StatelessIf", "While", "StatelessWhile",
    "RaggedTensorToTensor", "Complex", "Real", "Imag", "ComplexAbs", "FFT", "IFFT", "RFFT",
    "IRFFT", "StaticRegexReplace", "StringNGrams", "StringSplit", "StringToHashBucketFast",
    "HashTable", "HashTableV2", "InitializeTable", "InitializeTableV2", "LookupTableFind",
    "LookupTableFindV2", "LookupTableImport", "LookupTableImportV2", "LookupTableSize",
    "LookupTableSizeV2", NULL};

int core_interp_runs_op(const char *op) { return op && in_list(op, interp_ops); }

const char *core_interp_op(int i)
{
    return i >= 0 && i < (int)(sizeof interp_ops / sizeof interp_ops[0]) ? interp_ops[i] : NULL;
}


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

si_result ip_nomem(interp *in) { return base_fail(in->err, SI_ERR_NOMEM, "out of memory"); }

si_result ip_node_fail(interp *in, int k, si_result st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

si_result ip_node_fail(interp *in, int k, si_result st, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return base_fail(in->err, st, "%s: node '%s' (%s): %s", in->g->m->json_path, node_name(in, k),
                     node_op(in, k), msg);
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
int ip_ctx_intern(interp *in, int parent, const char *frame, int iter)
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
            ip_val_unref(e->v[i]);
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
        *st = ip_nomem(in);
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
    int w = in->g->weight_of[e->node];
    if (w >= 0 && in->g->m->weights[w].dtype == IO_DT_STRING) {
        si_result st = ip_string_const(in, e->node, &e->v[0]);
        if (st == SI_OK)
            e->lazy = 0;
        return st;
    }
    int n = in->g->n_outs[e->node];
    core_buf *out = calloc((size_t)n + 1, sizeof *out);
    if (!out)
        return ip_nomem(in);
    si_result st = core_eval_node(in->g, e->node, NULL, 0, out, n, in->load, in->load_user, in->err);
    if (st == SI_OK && !out[0].data)
        st = ip_node_fail(in, e->node, SI_ERR_FORMAT, "the constant has no value");
    for (int i = 0; i < n && st == SI_OK; i++) {
        if (!out[i].data)
            continue;
        if (!(e->v[i] = ip_val_wrap(out[i])))
            st = ip_nomem(in);
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
ival *ip_tensor_get(interp *in, int node, int idx, int ctx, si_result *st)
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
            return ip_nomem(in);
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
            return ip_nomem(in);
        if ((st = push_item(in, k, ctx)) != SI_OK)
            return st;
    }
    return SI_OK;
}

void ip_free_outs(ival **outs, int n)
{
    if (!outs)
        return;
    for (int i = 0; i < n; i++)
        ip_val_unref(outs[i]);
    free(outs);
}

/* Moves outs into the entry of node under key_ctx. */
static si_result store(interp *in, int node, int key_ctx, ival **outs, int n)
{
    ientry *e = entry_make(in, node, key_ctx, n);
    if (!e) {
        ip_free_outs(outs, n);
        return ip_nomem(in);
    }
    for (int i = 0; i < n; i++)
        e->v[i] = outs[i];
    free(outs);
    return SI_OK;
}

/* Does node k read a complex64 value already computed (a deferred node's
 * inputs are all present when it is processed)? */
static int reads_complex(interp *in, int k, int ctx)
{
    const io_node *n = &in->g->m->nodes[k];
    for (int i = 0; i < n->n_inputs; i++) {
        const core_edge *ed = &in->g->edges[k][i];
        si_result st = SI_OK;
        const ientry *e = ed->ctrl ? NULL : tensor_entry(in, ed->node, ctx, &st);
        /* a Const not read yet is never complex (io refuses complex64 weights) */
        if (e && !e->lazy && ed->idx < e->n && e->v[ed->idx] &&
            e->v[ed->idx]->b.dtype == CORE_COMPLEX64)
            return 1;
    }
    return 0;
}

static si_result process_item(interp *in, item it)
{
    const core_graph *g = in->g;
    const io_node *n = &g->m->nodes[it.node];
    si_result st = SI_OK;
    int key_ctx = -1;
    if (!strcmp(n->op, "Enter") && ip_attr_bool(n, "is_constant", 0))
        key_ctx = it.ctx;
    /* tfjs tests the bare node name: a node with a root value never reruns */
    if (entry_lookup(in, it.node, 0, &st) || st != SI_OK)
        return st != SI_OK ? st : process_children(in, it.node, it.ctx);
    if (in->defer && it.ctx == 0 && in->defer[it.node]) {
        if (!reads_complex(in, it.node, it.ctx))
            return SI_OK; /* the next GPU stage computes it */
        in->defer[it.node] = 0; /* complex64 values stay here: so does the node */
    }
    if (++in->executed > MAX_EXECUTED)
        return ip_node_fail(in, it.node, SI_ERR_ARG, "more than %lld node runs", MAX_EXECUTED);
    ival **outs = NULL;
    int n_outs = 0, ctx_after = it.ctx;
    if ((st = ip_execute(in, it.node, it.ctx, &outs, &n_outs, &ctx_after)) != SI_OK)
        return st;
    if (key_ctx < 0)
        key_ctx = ctx_after;
    if (op_is_async(n->op)) {
        if (in->n_pend == in->cap_pend) {
            int cap = in->cap_pend ? in->cap_pend * 2 : 64;
            pending *p = realloc(in->pend, (size_t)cap * sizeof *p);
            if (!p) {
                ip_free_outs(outs, n_outs);
                return ip_nomem(in);
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
        return ip_nomem(in);
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
        return ip_nomem(in);
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
        return ip_nomem(in);
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
            ip_val_unref(in->ent[i].v[j]);
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
            ip_val_unref(in->res[i].items[j]);
        free(in->res[i].items);
        free(in->res[i].read);
    }
    free(in->res);
    ip_tables_free(in);
    for (int i = 0; i < in->n_pend; i++)
        ip_free_outs(in->pend[i].outs, in->pend[i].n);
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
        int data_in = 0, host_in = 0;
        for (int j = 0; j < n->n_inputs; j++) {
            data_in |= !g->edges[k][j].ctrl;
            /* strings and table handles never leave the interpreter */
            host_in |= !g->edges[k][j].ctrl &&
                       core_edge_host_only(g, g->edges[k][j].node, g->edges[k][j].idx);
        }
        d[k] = !known[k] && data_in && !core_op_is_dynamic(n->op) && !core_node_makes_complex(n) &&
               strcmp(n->op, "Const") && strncmp(n->op, "Placeholder", 11) &&
               !(host_only && host_only[k]) && !host_in;
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
            ival *v = ip_tensor_get(in, k, j, 0, &st);
            /* complex64 never goes to a GPU stage: a deferred node that reads
             * one waits for the interpreter's last run (which runs or refuses it);
             * strings stay here: what reads them is never deferred (defer_set) */
            if (st == SI_OK && v && v->b.dtype != CORE_COMPLEX64 && v->b.dtype != IP_STRING)
                st = core_valmap_put(vm, k, j, &v->b, in->err);
        }
    }
    return st;
}

/* The root context and the tables, empty. */
static si_result interp_init(interp *in)
{
    in->cap_ctx = 16;
    in->cap_ent = 256;
    in->ctx = malloc((size_t)in->cap_ctx * sizeof *in->ctx);
    in->ent = malloc((size_t)in->cap_ent * sizeof *in->ent);
    if (!in->ctx || !in->ent || imap_init(&in->ctx_map) || imap_init(&in->ent_map) ||
        imap_init(&in->added))
        return ip_nomem(in);
    in->ctx[0] = (ictx){.parent = -1, .frame = "", .iter = 0, .id = strdup("")};
    in->n_ctx = 1;
    return in->ctx[0].id ? SI_OK : ip_nomem(in);
}

/* Every tensor in vm is known, like a fed input: its node is never run, and
 * its values are copied into the root context. */
static si_result seed_known(interp *in, const core_valmap *vm, uint8_t *known)
{
    const core_graph *g = in->g;
    for (size_t i = 0; i < vm->cap; i++) {
        const vm_slot *s = &vm->slots[i];
        if (s->node < 0)
            continue;
        if (s->node >= g->n_nodes)
            return base_fail(in->err, SI_ERR_ARG, "valmap holds node %d of a graph of %d", s->node,
                             g->n_nodes);
        known[s->node] = 1;
    }
    for (int k = 0; k < g->n_nodes; k++) {
        if (!known[k])
            continue;
        int n = g->n_outs[k];
        ientry *e = entry_make(in, k, 0, n);
        if (!e)
            return ip_nomem(in);
        for (int j = 0; j < n; j++) {
            const core_buf *b = core_valmap_get(vm, k, j);
            if (!b)
                continue;
            /* read in place: vm outlives the run and values are never written */
            ival *v = ip_val_wrap(*b);
            if (!v)
                return ip_nomem(in);
            v->lent = 1;
            e->v[j] = v;
        }
    }
    return SI_OK;
}

/* tfjs's first stack: inputs, weights, init nodes (popped from the end). */
static si_result push_initial(interp *in, const uint8_t *known)
{
    const core_graph *g = in->g;
    si_result st = SI_OK;
    for (int k = 0; k < g->n_nodes && st == SI_OK; k++)
        if (known[k] && in->used[k])
            st = push_item(in, k, 0);
    for (int k = 0; k < g->n_nodes && st == SI_OK; k++)
        if (!known[k] && in->used[k] && is_const_node(in, k))
            st = push_item(in, k, 0);
    for (int k = 0; k < g->n_nodes && st == SI_OK; k++)
        if (!known[k] && in->used[k] && !is_const_node(in, k) && g->m->nodes[k].n_inputs == 0 &&
            strncmp(g->m->nodes[k].op, "Placeholder", 11))
            st = push_item(in, k, 0);
    return st;
}

/* Runs the stack empty, then lets the pending (async) nodes' promises
 * resolve: publish their outputs, then schedule their children; until
 * neither is left. */
static si_result run_all(interp *in)
{
    si_result st = SI_OK;
    while (st == SI_OK && (in->n_stack > 0 || in->n_pend > 0)) {
        while (st == SI_OK && in->n_stack > 0)
            st = process_item(in, in->stack[--in->n_stack]);
        int np = in->n_pend;
        pending *p = in->pend;
        in->pend = NULL;
        in->n_pend = in->cap_pend = 0;
        int i = 0;
        for (; i < np && st == SI_OK; i++) {
            st = store(in, p[i].node, p[i].key_ctx, p[i].outs, p[i].n);
            p[i].outs = NULL;
            if (st == SI_OK)
                st = process_children(in, p[i].node, p[i].ctx_after);
        }
        for (; i < np; i++)
            ip_free_outs(p[i].outs, p[i].n);
        free(p);
    }
    return st;
}

/* Output i has no value: the error names one needed node that never ran, to
 * point at the cause. */
static si_result output_missing(interp *in, const uint8_t *known, int i)
{
    const core_graph *g = in->g;
    const core_edge *o = &g->outputs[i];
    const char *why = "";
    char buf[300] = "";
    for (int k = 0; k < g->n_nodes; k++)
        if (in->used[k] && !known[k] && g->m->nodes[k].n_inputs == 0 && !is_const_node(in, k) &&
            !entry_find(in, k, 0)) {
            snprintf(buf, sizeof buf, "; node '%s' (%s) has no value", node_name(in, k),
                     node_op(in, k));
            why = buf;
            break;
        }
    if (!*why)
        why = "; it depends on a cycle, a dead branch or a missing input";
    return base_fail(in->err, SI_ERR_FORMAT, "%s: cannot compute output %d '%s:%d' (%s)%s",
                     g->m->json_path, i, node_name(in, o->node), o->idx, node_op(in, o->node), why);
}

/* Every graph output not in vm yet goes there. */
static si_result collect_outputs(interp *in, core_valmap *vm, const uint8_t *known)
{
    const core_graph *g = in->g;
    si_result st = SI_OK;
    for (int i = 0; i < g->n_outputs; i++) {
        const core_edge *o = &g->outputs[i];
        if (core_valmap_get(vm, o->node, o->idx))
            continue;
        ival *v = ip_tensor_get(in, o->node, o->idx, 0, &st);
        if (st != SI_OK)
            return st;
        if (!v)
            return output_missing(in, known, i);
        if (v->b.dtype == IP_STRING)
            return ip_node_fail(in, o->node, SI_ERR_UNSUPPORTED,
                                "model output %d is a string tensor; outputs must be numeric", i);
        if ((st = core_valmap_put(vm, o->node, o->idx, &v->b, in->err)) != SI_OK)
            return st;
    }
    return SI_OK;
}

/* A staged run's values go to vm; *complete: every graph output is there. */
static si_result finish_stage(interp *in, core_valmap *vm, const uint8_t *known, int *complete)
{
    const core_graph *g = in->g;
    si_result st = export_values(in, vm, known);
    if (st != SI_OK)
        return st;
    *complete = 1;
    for (int i = 0; i < g->n_outputs; i++)
        if (!core_valmap_get(vm, g->outputs[i].node, g->outputs[i].idx))
            *complete = 0;
    return SI_OK;
}

static si_result interp_run(const core_graph *g, core_valmap *vm, const uint8_t *host_only,
                            core_weight_loader load, void *load_user, const core_offload *gpu,
                            int staged, int *complete, si_error *err)
{
    interp in = {.g = g, .load = load, .load_user = load_user, .gpu = gpu, .err = err};
    uint8_t *known = calloc((size_t)g->n_nodes + 1, 1);
    si_result st = interp_init(&in);
    if (st == SI_OK && !known)
        st = ip_nomem(&in);
    if (st == SI_OK)
        st = seed_known(&in, vm, known);
    if (st == SI_OK)
        st = build_children(&in);
    if (st == SI_OK)
        st = mark_used(&in, known);
    if (st == SI_OK && staged && !(in.defer = defer_set(g, known, host_only)))
        st = ip_nomem(&in);
    if (st == SI_OK)
        st = push_initial(&in, known);
    if (st == SI_OK)
        st = run_all(&in);
    if (st == SI_OK)
        st = staged ? finish_stage(&in, vm, known, complete) : collect_outputs(&in, vm, known);
    if (st != SI_OK && err)
        err->status = st;
    free(known);
    interp_free(&in);
    return st;
}

si_result core_interp_run(const core_graph *g, core_valmap *vm, core_weight_loader load,
                          void *load_user, const core_offload *gpu, si_error *err)
{
    return interp_run(g, vm, NULL, load, load_user, gpu, 0, NULL, err);
}

si_result core_interp_run_stage(const core_graph *g, core_valmap *vm, const uint8_t *host_only,
                                core_weight_loader load, void *load_user,
                                const core_offload *gpu, int *complete, si_error *err)
{
    return interp_run(g, vm, host_only, load, load_user, gpu, 1, complete, err);
}
