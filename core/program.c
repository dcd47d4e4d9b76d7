/* From graph to program: binds input shapes, lowers every needed node in
 * dependency order, folds on the host whatever does not depend on the inputs,
 * and keeps the steps the outputs need. What a lowering sees of the builder
 * (the lower_ctx API of ops.h) is in lower_ctx.c, its tables' growth in
 * program_tables.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "program_internal.h"

static si_result eval_storage(builder *b, int root, si_error *err);

si_result pg_host_input(builder *b, int t, core_buf *out, si_error *err)
{
    core_program *p = b->p;
    int r = core_storage(p, t);
    si_result st = eval_storage(b, r, err);
    if (st != SI_OK)
        return st;
    out->dtype = p->tensors[t].dtype;
    out->shape = p->tensors[t].shape;
    out->data = p->tensors[r].host;
    return SI_OK;
}

static si_result eval_storage(builder *b, int root, si_error *err)
{
    core_program *p = b->p;
    core_tensor *t = &p->tensors[root];
    if (t->host)
        return SI_OK;
    uint64_t n = (uint64_t)core_shape_count(&t->shape);
    if (t->kind == PT_WEIGHT) {
        t->host = calloc(n ? n : 1, CORE_ELEM);
        if (!t->host)
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        return b->load(b->load_user, t->weight, t->host, err);
    }
    if (t->kind != PT_ACT || !b->is_const[root])
        return base_fail(err, SI_ERR_ARG, "internal: tensor %s is not constant",
                         t->name ? t->name : "?");
    void *data = calloc(n ? n : 1, CORE_ELEM);
    if (!data)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int k = 0; k < p->n_steps; k++) {
        const ck_step *s = &p->steps[k];
        if (s->out < 0 || core_storage(p, s->out) != root)
            continue;
        core_buf out = {.dtype = t->dtype, .shape = t->shape, .data = data};
        si_result st;
        if (s->kind == CK_DEQUANT && p->tensors[s->in[0]].kind == PT_WEIGHT) {
            /* The loader dequantizes exactly as tfjs does. */
            st = b->load(b->load_user, p->tensors[s->in[0]].weight, data, err);
        } else {
            core_buf ins[CK_MAX_IN];
            const core_buf *insp[CK_MAX_IN] = {0};
            st = SI_OK;
            for (int i = 0; i < s->n_in && st == SI_OK; i++) {
                if (s->in[i] < 0)
                    continue;
                st = pg_host_input(b, s->in[i], &ins[i], err);
                insp[i] = &ins[i];
            }
            /* pg_host_input may have grown nothing, but re-fetch t: tensors don't move here */
            if (st == SI_OK)
                st = ck_host_run(s, insp, &out, err);
        }
        if (st != SI_OK) {
            free(data);
            return st;
        }
    }
    p->tensors[root].host = data;
    return SI_OK;
}

/* ---- building ---- */

const core_op_def *core_find_op(const char *op)
{
    static const core_op_def *const tables[] = {core_ops_elementwise, core_ops_conv,
                                                core_ops_pool_reduce, core_ops_shape,
                                                core_ops_select, core_ops_math,
                                                core_ops_creation, core_ops_image,
                                                core_ops_random,
                                                core_ops_conv3d,
                                                core_ops_scatter,
                                                core_ops_transform,
                                                core_ops_misc};
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (const core_op_def *d = tables[t]; d->op; d++)
            if (!strcmp(d->op, op))
                return d;
    return NULL;
}

/* Depth-first post-order over data inputs from the outputs: only needed nodes. */
/* Post-order DFS from root over data edges, appending to order. */
/* Known from an earlier stage (constants are not: they are the model's own). */
static int is_given_node(const core_graph *g, const core_valmap *vm, int k)
{
    return vm && core_valmap_get(vm, k, 0) && strcmp(g->m->nodes[k].op, "Const");
}
#define is_given(vm, k) is_given_node(g, vm, k)

static si_result order_from(const core_graph *g, const core_valmap *vm, int root, uint8_t *state,
                            int *stack, int *pos, int *order, int *n_order, si_error *err)
{
    int sp = 0;
    if (state[root])
        return SI_OK;
    stack[sp] = root;
    pos[sp++] = 0;
    state[root] = 1;
    while (sp > 0) {
        int k = stack[sp - 1];
        const io_node *n = &g->m->nodes[k];
        if (pos[sp - 1] < n->n_inputs && !is_given(vm, k)) {
            const core_edge *e = &g->edges[k][pos[sp - 1]++];
            /* a loop's back edge (NextIteration → Merge) is not an ordering
             * edge: the interpreter runs loops */
            if (e->ctrl || !strcmp(g->m->nodes[e->node].op, "NextIteration"))
                continue;
            if (state[e->node] == 1)
                return base_fail(err, SI_ERR_UNSUPPORTED,
                                 "%s: node '%s' is part of a cycle (control flow loops are not "
                                 "supported yet)", g->m->json_path, g->m->nodes[e->node].name);
            if (state[e->node] == 0) {
                state[e->node] = 1;
                stack[sp] = e->node;
                pos[sp++] = 0;
            }
        } else {
            state[k] = 2;
            order[(*n_order)++] = k;
            sp--;
        }
    }
    return SI_OK;
}

/* The nodes the outputs need, inputs first. A loop body hangs off its Merge
 * nodes only through the back edge (NextIteration), so bodies are walked too:
 * the static tensors a body reads (say a backbone's output a TensorArray
 * scatters) must be computed for the interpreter. */
static si_result order_nodes(const core_graph *g, const core_valmap *vm, int target, int *order,
                             int *n_order, si_error *err)
{
    uint8_t *state = calloc((size_t)g->n_nodes + 1, 1);
    int *stack = malloc(((size_t)g->n_nodes + 1) * sizeof *stack);
    int *pos = malloc(((size_t)g->n_nodes + 1) * sizeof *pos);
    si_result st = SI_OK;
    if (!state || !stack || !pos) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
        goto done;
    }
    *n_order = 0;
    if (target >= 0) { /* one node's program: what it reads, given or constant */
        st = order_from(g, vm, target, state, stack, pos, order, n_order, err);
        goto done;
    }
    for (int o = 0; o < g->n_outputs && st == SI_OK; o++)
        st = order_from(g, vm, g->outputs[o].node, state, stack, pos, order, n_order, err);
    for (int i = 0; i < *n_order && st == SI_OK; i++) {
        int k = order[i];
        if (strcmp(g->m->nodes[k].op, "Merge"))
            continue;
        for (int j = 0; j < g->m->nodes[k].n_inputs && st == SI_OK; j++) {
            const core_edge *e = &g->edges[k][j];
            if (!e->ctrl && !strcmp(g->m->nodes[e->node].op, "NextIteration"))
                st = order_from(g, vm, e->node, state, stack, pos, order, n_order, err);
        }
    }
done:
    free(state);
    free(stack);
    free(pos);
    return st;
}

static si_result lower_const(builder *b, int k, si_error *err)
{
    const core_graph *g = b->g;
    const io_node *n = &g->m->nodes[k];
    int w = g->weight_of[k];
    int t = -1;
    if (w >= 0) {
        const io_weight *wt = &g->m->weights[w];
        core_shape shape = {.rank = wt->rank};
        for (int i = 0; i < wt->rank; i++)
            shape.d[i] = wt->shape[i];
        if (wt->quant == IO_Q_NONE && wt->dtype != IO_DT_BOOL) {
            t = pg_add_tensor(b, n->name, (si_dtype)wt->dtype, &shape, PT_WEIGHT);
            if (t >= 0)
                b->p->tensors[t].weight = w;
        } else if (wt->quant != IO_Q_NONE && wt->dtype == IO_DT_FLOAT) {
            /* Quantized: stored bytes in the host pool, dequantized as they are
             * loaded into the arena (core_tensor.quant), no step of its own */
            t = pg_add_tensor(b, n->name, SI_FLOAT32, &shape, PT_WEIGHT);
            if (t >= 0) {
                core_tensor *ct = &b->p->tensors[t];
                ct->weight = w;
                ct->quant = wt->quant;
                ct->q_scale = wt->q_scale;
                ct->q_min = wt->q_min;
                ct->stored_bytes = (wt->nbytes + 3) / 4 * 4;
            }
        } else if (wt->quant == IO_Q_NONE) {
            /* bool weights are stored a byte an element: widen once on the host */
            t = pg_add_tensor(b, n->name, SI_BOOL, &shape, PT_WEIGHT);
            if (t >= 0) {
                b->p->tensors[t].weight = w;
                si_result st = eval_storage(b, t, err);
                if (st != SI_OK)
                    return st;
                b->p->tensors[t].kind = PT_CONST;
                b->p->tensors[t].weight = -1;
            }
        } else {
            /* Quantized, of another dtype: upload the stored bytes, dequantize on the GPU. */
            core_shape raw = {.rank = 1, .d = {(int64_t)((wt->nbytes + 3) / 4)}};
            int r = pg_add_tensor(b, n->name, SI_INT32, &raw, PT_WEIGHT);
            if (r < 0)
                return base_fail(err, SI_ERR_NOMEM, "out of memory");
            b->p->tensors[r].weight = w;
            t = pg_add_tensor(b, n->name, (si_dtype)wt->dtype, &shape, PT_ACT);
            if (t < 0)
                return base_fail(err, SI_ERR_NOMEM, "out of memory");
            ck_step s = {.kind = CK_DEQUANT, .n_in = 1, .in = {r}, .out = t, .node = k};
            s.u.dequant.count = (int32_t)wt->count;
            s.u.dequant.quant = wt->quant;
            s.u.dequant.min = wt->q_min;
            s.u.dequant.scale = wt->q_scale;
            if (pg_add_step(b, &s) < 0)
                return base_fail(err, SI_ERR_NOMEM, "out of memory");
        }
    } else {
        const io_attr *v = io_node_attr(n, "value");
        if (!v || v->kind != IO_ATTR_TENSOR)
            return base_fail(err, SI_ERR_FORMAT, "%s: Const node '%s' has no weight in the manifest",
                             g->m->json_path, n->name);
        const io_tensor_value *tv = &v->tensor;
        if (tv->dtype == IO_DT_OTHER)
            return base_fail(err, SI_ERR_UNSUPPORTED, "Const node '%s': unsupported dtype", n->name);
        core_shape shape = {.rank = tv->shape.rank};
        for (int i = 0; i < tv->shape.rank; i++)
            shape.d[i] = tv->shape.dim[i];
        int64_t cnt = core_shape_count(&shape);
        /* a Const with no values at all was refused when the graph was built */
        if (tv->n != (size_t)cnt && !(tv->n == 1) && !(tv->n == 0 && cnt == 0))
            return base_fail(err, SI_ERR_FORMAT, "Const node '%s': %zu values for %lld elements",
                             n->name, tv->n, (long long)cnt);
        int32_t *data = calloc((size_t)(cnt ? cnt : 1), CORE_ELEM);
        if (!data)
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < cnt && tv->n > 0 && tv->data; i++) {
            size_t j = tv->n == 1 ? 0 : (size_t)i;
            if (tv->dtype == IO_DT_FLOAT)
                ((float *)data)[i] = ((const float *)tv->data)[j];
            else if (tv->dtype == IO_DT_INT32)
                data[i] = ((const int32_t *)tv->data)[j];
            else
                data[i] = ((const uint8_t *)tv->data)[j] != 0;
        }
        t = pg_add_tensor(b, n->name, (si_dtype)tv->dtype, &shape, PT_CONST);
        if (t < 0) {
            free(data);
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        }
        b->p->tensors[t].host = data;
    }
    if (t < 0)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    b->node_out[k][0] = t;
    return SI_OK;
}

#define DEAD (-2) /* a tensor on the branch a Switch did not take */

/* Switch and Merge with a predicate known when the program is built: the
 * untaken branch is dead, and Merge forwards the live one. A Switch whose
 * predicate depends on the inputs' values (tf.cond in a TF1 graph) is left to
 * the host interpreter, with all that follows from it. */
static si_result lower_switch_merge(builder *b, int k, const int *in, int n_in, si_error *err)
{
    const core_graph *g = b->g;
    const io_node *n = &g->m->nodes[k];
    if (!strcmp(n->op, "Merge")) {
        for (int i = 0; i < n_in; i++)
            if (in[i] != DEAD) {
                b->node_out[k][0] = in[i];
                if (g->n_outs[k] > 1) {
                    int32_t which = i;
                    core_shape sc = {0};
                    int t = pg_add_tensor(b, n->name, SI_INT32, &sc, PT_CONST);
                    if (t < 0 || !(b->p->tensors[t].host = malloc(4)))
                        return base_fail(err, SI_ERR_NOMEM, "out of memory");
                    memcpy(b->p->tensors[t].host, &which, 4);
                    b->node_out[k][1] = t;
                }
                return SI_OK;
            }
        for (int j = 0; j < g->n_outs[k]; j++)
            b->node_out[k][j] = DEAD;
        return SI_OK;
    }
    /* Switch(data, pred) */
    if (n_in < 2)
        return base_fail(err, SI_ERR_FORMAT, "node '%s' (Switch): needs data and predicate", n->name);
    int pr = core_storage(b->p, in[1]);
    if (!b->is_const[pr]) {
        b->to_host = 1;
        return SI_OK;
    }
    core_buf v;
    si_result st = pg_host_input(b, in[1], &v, err);
    if (st != SI_OK)
        return st;
    /* tfjs tests the first element's truth: NaN and -0 are false, and so is
     * an empty predicate */
    int taken = 0;
    if (core_shape_count(&v.shape) > 0) {
        if (v.dtype == SI_FLOAT32) {
            float f = ((const float *)v.data)[0];
            taken = f != 0.0f && !isnan(f);
        } else {
            taken = ((const int32_t *)v.data)[0] != 0;
        }
    }
    for (int j = 0; j < g->n_outs[k]; j++)
        b->node_out[k][j] = DEAD;
    if (taken < g->n_outs[k])
        b->node_out[k][taken] = in[0];
    return SI_OK;
}

static si_result lower_node(builder *b, int k, const core_shape *input_shapes,
                            const core_buf *const *input_values, si_error *err)
{
    const core_graph *g = b->g;
    const io_node *n = &g->m->nodes[k];
    if (!strcmp(n->op, "Const"))
        return lower_const(b, k, err);
    if (!strcmp(n->op, "NoOp")) {
        /* it only orders; tfjs's graph executor gives a float32 scalar 1 for
         * an output read all the same */
        core_shape s = {.rank = 0};
        int t = pg_add_tensor(b, n->name, SI_FLOAT32, &s, PT_CONST);
        if (t < 0 || !(b->p->tensors[t].host = malloc(CORE_ELEM)))
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        const float one = 1.0f;
        memcpy(b->p->tensors[t].host, &one, sizeof one);
        b->node_out[k][0] = t;
        return SI_OK;
    }
    if (!strncmp(n->op, "Placeholder", 11)) {
        int which = -1;
        for (int i = 0; i < g->n_inputs; i++)
            if (g->inputs[i] == k)
                which = i;
        if (which >= 0 && input_shapes[which].rank == CORE_UNFED_RANK)
            which = -1; /* not fed (the session lets only a default go unfed) */
        if (which < 0) {
            /* PlaceholderWithDefault feeds its default when not an input */
            if (!strcmp(n->op, "PlaceholderWithDefault") && n->n_inputs > 0) {
                const core_edge *e = &g->edges[k][0];
                b->node_out[k][0] = b->node_out[e->node][e->idx];
                return SI_OK;
            }
            return base_fail(err, SI_ERR_ARG, "%s: placeholder '%s' is needed but not an input",
                             g->m->json_path, n->name);
        }
        const core_io_info *info = &g->input_info[which];
        const core_buf *val = input_values ? input_values[which] : NULL;
        int small = val && core_shape_count(&input_shapes[which]) <= CORE_VALUE_INPUT_MAX;
        int t = pg_add_tensor(b, n->name, info->dtype, &input_shapes[which], small ? PT_CONST : PT_INPUT);
        if (t < 0)
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        if (small) {
            size_t bytes = (size_t)core_shape_count(&input_shapes[which]) * CORE_ELEM;
            if (!(b->p->tensors[t].host = malloc(bytes ? bytes : 1)))
                return base_fail(err, SI_ERR_NOMEM, "out of memory");
            memcpy(b->p->tensors[t].host, val->data, bytes);
        } else {
            b->p->tensors[t].input = which;
        }
        b->p->inputs[which] = t;
        b->node_out[k][0] = t;
        return SI_OK;
    }
    int is_sm = !strcmp(n->op, "Switch") || !strcmp(n->op, "Merge");
    const core_op_def *def = is_sm ? NULL : core_find_op(n->op);
    if (!def && !is_sm)
        return base_fail(err, SI_ERR_UNSUPPORTED, "%s: unknown op '%s' at node '%s'",
                         g->m->json_path, n->op, n->name);
    int in[64];
    int *inp = n->n_inputs <= 64 ? in : malloc((size_t)n->n_inputs * sizeof *inp);
    if (!inp)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    lower_ctx c = {.b = b, .node = k, .n = n, .n_in = 0, .in = inp};
    si_result st = SI_OK;
    int dead = 0;
    for (int i = 0; i < n->n_inputs; i++) {
        const core_edge *e = &g->edges[k][i];
        if (e->ctrl)
            continue;
        int t = b->node_out[e->node][e->idx];
        if (t == DEAD)
            dead = 1;
        else if (t < 0) {
            st = base_fail(err, SI_ERR_UNSUPPORTED, "node '%s' (%s): input %d ('%s') has no value",
                           n->name, n->op, i, n->inputs[i]);
            break;
        }
        inp[c.n_in++] = t;
    }
    if (st == SI_OK && is_sm)
        st = dead && !strcmp(n->op, "Switch") ? SI_OK : lower_switch_merge(b, k, inp, c.n_in, err);
    if (st == SI_OK && (dead || is_sm)) {
        /* a dead input makes every output dead (Merge aside, handled above) */
        if (dead && strcmp(n->op, "Merge"))
            for (int j = 0; j < g->n_outs[k]; j++)
                b->node_out[k][j] = DEAD;
    } else if (st == SI_OK)
        st = def->lower(&c, err);
    if (st == SI_OK && b->p->n_steps < 0)
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (inp != in)
        free(inp);
    return st;
}

/* Keeps the steps the outputs need; everything constant among them is folded. */
static si_result finalize(builder *b, si_error *err)
{
    core_program *p = b->p;
    uint8_t *needed = calloc((size_t)p->n_tensors + 1, 1);
    uint8_t *live = calloc((size_t)p->n_steps + 1, 1);
    si_result st = SI_OK;
    if (!needed || !live) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int o = 0; o < p->n_outputs; o++)
        if (p->outputs[o] >= 0)
            needed[core_storage(p, p->outputs[o])] = 1;
    for (int q = 0; q < p->n_boundary; q++)
        needed[core_storage(p, p->boundary[q])] = 1;
    for (int k = p->n_steps - 1; k >= 0; k--) {
        const ck_step *s = &p->steps[k];
        int root = core_storage(p, s->out);
        if (!needed[root])
            continue;
        int dequant_weight = s->kind == CK_DEQUANT && p->tensors[s->in[0]].kind == PT_WEIGHT;
        if (b->is_const[root] && !dequant_weight) {
            st = eval_storage(b, root, err);
            if (st != SI_OK)
                goto done;
            continue;
        }
        live[k] = 1;
        for (int i = 0; i < s->n_in; i++)
            if (s->in[i] >= 0)
                needed[core_storage(p, s->in[i])] = 1;
    }
    /* Outputs (and boundary tensors) that are constant get their values now. */
    for (int o = 0; o < p->n_outputs + p->n_boundary; o++) {
        int t = o < p->n_outputs ? p->outputs[o] : p->boundary[o - p->n_outputs];
        if (t < 0)
            continue;
        int root = core_storage(p, t);
        if (b->is_const[root] && p->tensors[root].kind == PT_ACT) {
            int made_on_gpu = 0;
            for (int k = 0; k < p->n_steps; k++)
                if (live[k] && core_storage(p, p->steps[k].out) == root)
                    made_on_gpu = 1;
            if (!made_on_gpu && (st = eval_storage(b, root, err)) != SI_OK)
                goto done;
        }
    }
    /* Folded activations become constants; the dead steps go. */
    for (int t = 0; t < p->n_tensors; t++)
        if (p->tensors[t].kind == PT_ACT && p->tensors[t].alias_of < 0 && p->tensors[t].host) {
            int gpu_written = 0;
            for (int k = 0; k < p->n_steps && !gpu_written; k++)
                gpu_written = live[k] && core_storage(p, p->steps[k].out) == t;
            if (!gpu_written)
                p->tensors[t].kind = PT_CONST;
            else {
                free(p->tensors[t].host);
                p->tensors[t].host = NULL;
            }
        }
    for (int t = 0; t < p->n_tensors; t++)
        if (p->tensors[t].alias_of >= 0)
            p->tensors[t].kind = p->tensors[core_storage(p, t)].kind;
    int n = 0;
    for (int k = 0; k < p->n_steps; k++)
        if (live[k])
            p->steps[n++] = p->steps[k];
    p->n_steps = n;
    /* Weights read for folding only are not kept on the host. */
    for (int t = 0; t < p->n_tensors; t++)
        if (p->tensors[t].kind == PT_WEIGHT && p->tensors[t].host) {
            free(p->tensors[t].host);
            p->tensors[t].host = NULL;
        }
done:
    free(needed);
    free(live);
    return st;
}

/* What a builder holds besides node_out (whose rows its user knows). */
static void builder_free(builder *b)
{
    free(b->is_const);
    free(b->written);
    free(b->vals);
    free(b->step_const);
    pg_release_retired(b);
    free(b->retired);
    core_program_free(b->p);
}

/* A node whose values an earlier stage computed: its outputs are inputs of
 * this program (seeds, uploaded every run), or constants when they are small
 * enough to be bound by value like small model inputs. */
static si_result given_node(builder *b, int k, si_error *err)
{
    const core_graph *g = b->g;
    core_program *p = b->p;
    for (int j = 0; j < g->n_outs[k]; j++) {
        const core_buf *v = core_valmap_get(b->given, k, j);
        if (!v)
            continue;
        if (v->dtype == CORE_COMPLEX64) /* the interpreter never exports one */
            return base_fail(err, SI_ERR_UNSUPPORTED,
                             "%s: node '%s': a complex64 value cannot enter a GPU program",
                             g->m->json_path, g->m->nodes[k].name);
        int64_t n = core_shape_count(&v->shape);
        int small = n <= CORE_VALUE_INPUT_MAX;
        char name[512];
        snprintf(name, sizeof name, "%s:%d", g->m->nodes[k].name, j);
        int t = pg_add_tensor(b, name, v->dtype, &v->shape, small ? PT_CONST : PT_INPUT);
        if (t < 0)
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        if (small) {
            if (!(p->tensors[t].host = malloc((size_t)(n ? n : 1) * CORE_ELEM)))
                return base_fail(err, SI_ERR_NOMEM, "out of memory");
            memcpy(p->tensors[t].host, v->data, (size_t)n * CORE_ELEM);
        } else {
            int q = p->n_seeds;
            int *sn = realloc(p->seed_node, (size_t)(q + 1) * sizeof *sn);
            if (sn)
                p->seed_node = sn;
            int *si = sn ? realloc(p->seed_idx, (size_t)(q + 1) * sizeof *si) : NULL;
            if (si)
                p->seed_idx = si;
            if (!sn || !si)
                return base_fail(err, SI_ERR_NOMEM, "out of memory");
            sn[q] = k;
            si[q] = j;
            p->n_seeds++;
            p->tensors[t].input = g->n_inputs + q;
        }
        b->node_out[k][j] = t;
    }
    return SI_OK;
}

si_result core_program_build(const core_graph *g, const core_shape *input_shapes,
                             const core_buf *const *input_values,
                             core_weight_loader load, void *load_user, core_program **out,
                             si_error *err)
{
    return core_program_build_given(g, input_shapes, input_values, NULL, NULL, load, load_user,
                                    out, NULL, err);
}

/* Nodes the host interpreter runs (loops, tensor arrays, data-dependent
 * shapes) and all that depends on them are not lowered; the static tensors
 * they read are the program's boundary, brought back after the GPU part. */
static void mark_dynamic(const core_graph *g, const core_valmap *given, const uint8_t *host_only,
                         const int *order, int n_order, uint8_t *dyn)
{
    for (int i = 0; i < n_order; i++) {
        int k = order[i];
        const io_node *nk = &g->m->nodes[k];
        if (is_given(given, k))
            continue;
        /* string Consts live in the interpreter only (core/interp_strings.c) */
        dyn[k] = (core_op_is_dynamic(nk->op) && strcmp(nk->op, "Switch") && strcmp(nk->op, "Merge")) ||
                 core_node_makes_complex(nk) ||
                 (host_only && host_only[k]) ||
                 (!strcmp(nk->op, "Const") && core_edge_is_string(g, k, 0));
        for (int j = 0; j < nk->n_inputs && !dyn[k]; j++)
            if (!g->edges[k][j].ctrl && dyn[g->edges[k][j].node])
                dyn[k] = 1;
    }
    /* NextIteration edges were skipped: what a loop feeds back is dynamic too */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < n_order; i++) {
            int k = order[i];
            for (int j = 0; j < g->m->nodes[k].n_inputs && !dyn[k] && !is_given(given, k); j++)
                if (!g->edges[k][j].ctrl && dyn[g->edges[k][j].node])
                    dyn[k] = changed = 1;
        }
    }
}

/* Every node of order that is not dynamic: lowered, or bound to its given
 * values. *fail_node (may be NULL): the node that failed. */
static si_result lower_all(builder *b, const int *order, int n_order, uint8_t *dyn,
                           const core_shape *input_shapes, const core_buf *const *input_values,
                           int *fail_node, si_error *err)
{
    const core_graph *g = b->g;
    for (int i = 0; i < n_order; i++) {
        int k = order[i];
        b->node_out[k] = malloc((size_t)g->n_outs[k] * sizeof **b->node_out);
        if (!b->node_out[k])
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        for (int j = 0; j < g->n_outs[k]; j++)
            b->node_out[k][j] = -1;
        /* what reads a node left to the host while lowering is dynamic too */
        for (int j = 0; j < g->m->nodes[k].n_inputs && !dyn[k] && !is_given(b->given, k); j++)
            if (!g->edges[k][j].ctrl && dyn[g->edges[k][j].node])
                dyn[k] = 1;
        if (dyn[k])
            continue;
        b->to_host = 0;
        si_result st = is_given(b->given, k) ? given_node(b, k, err)
                                             : lower_node(b, k, input_shapes, input_values, err);
        pg_release_retired(b);
        if (st != SI_OK) {
            if (fail_node)
                *fail_node = k;
            return st;
        }
        if (b->to_host) {
            dyn[k] = 1;
            for (int j = 0; j < g->n_outs[k]; j++)
                b->node_out[k][j] = -1;
        }
    }
    return SI_OK;
}

/* Tensor t (graph edge node:idx) joins the boundary once. */
static si_result add_boundary(core_program *p, int t, int node, int idx, si_error *err)
{
    for (int q = 0; q < p->n_boundary; q++)
        if (p->boundary_node[q] == node && p->boundary_idx[q] == idx)
            return SI_OK;
    int q = p->n_boundary++;
    int *bt = realloc(p->boundary, (size_t)(q + 1) * sizeof *bt);
    int *bn = bt ? realloc(p->boundary_node, (size_t)(q + 1) * sizeof *bn) : NULL;
    if (bt)
        p->boundary = bt;
    if (bn)
        p->boundary_node = bn;
    int *bi = bn ? realloc(p->boundary_idx, (size_t)(q + 1) * sizeof *bi) : NULL;
    if (!bt || !bn || !bi)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    p->boundary_idx = bi;
    bt[q] = t;
    bn[q] = node;
    bi[q] = idx;
    return SI_OK;
}

/* The static tensors the dynamic nodes read. */
static si_result find_boundary(builder *b, const int *order, int n_order, const uint8_t *dyn,
                               si_error *err)
{
    const core_graph *g = b->g;
    for (int i = 0; i < n_order; i++) {
        int k = order[i];
        if (!dyn[k])
            continue;
        for (int j = 0; j < g->m->nodes[k].n_inputs; j++) {
            const core_edge *e = &g->edges[k][j];
            /* the interpreter reads constants itself */
            if (e->ctrl || dyn[e->node] || !strcmp(g->m->nodes[e->node].op, "Const"))
                continue;
            int t = b->node_out[e->node] ? b->node_out[e->node][e->idx] : -1;
            if (t < 0)
                continue;
            si_result st = add_boundary(b->p, t, e->node, e->idx, err);
            if (st != SI_OK)
                return st;
        }
    }
    return SI_OK;
}

/* The program's outputs; those of dynamic nodes are the interpreter's (-1). */
static si_result set_outputs(builder *b, const uint8_t *dyn, si_error *err)
{
    const core_graph *g = b->g;
    for (int o = 0; o < g->n_outputs; o++) {
        if (dyn[g->outputs[o].node]) {
            b->p->outputs[o] = -1;
            b->p->has_dynamic = 1;
            continue;
        }
        int t = b->node_out[g->outputs[o].node][g->outputs[o].idx];
        if (t == DEAD)
            return base_fail(err, SI_ERR_UNSUPPORTED, "output '%s' is on a branch not taken",
                             g->m->nodes[g->outputs[o].node].name);
        if (t < 0)
            return base_fail(err, SI_ERR_UNSUPPORTED, "output '%s' has no value",
                             g->m->nodes[g->outputs[o].node].name);
        b->p->outputs[o] = t;
    }
    return SI_OK;
}

/* The empty program and the builder's per-node table. */
static si_result builder_init(builder *b, si_error *err)
{
    const core_graph *g = b->g;
    b->p = calloc(1, sizeof *b->p);
    b->node_out = calloc((size_t)g->n_nodes + 1, sizeof *b->node_out);
    if (!b->p || !b->node_out)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    b->p->n_inputs = g->n_inputs;
    b->p->inputs = malloc(((size_t)g->n_inputs + 1) * sizeof *b->p->inputs);
    b->p->n_outputs = g->n_outputs;
    b->p->outputs = malloc(((size_t)g->n_outputs + 1) * sizeof *b->p->outputs);
    if (!b->p->inputs || !b->p->outputs)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_inputs; i++)
        b->p->inputs[i] = -1;
    return SI_OK;
}

/* A node's program: every graph output the interpreter's (-1), and the
 * node's outputs its boundary, brought back after it runs. */
static si_result node_outputs(builder *b, int target, const uint8_t *dyn, si_error *err)
{
    const core_graph *g = b->g;
    if (dyn[target])
        return base_fail(err, SI_ERR_UNSUPPORTED, "%s: node '%s' (%s) runs on the host",
                         g->m->json_path, g->m->nodes[target].name, g->m->nodes[target].op);
    for (int o = 0; o < g->n_outputs; o++)
        b->p->outputs[o] = -1;
    b->p->has_dynamic = 1;
    for (int j = 0; j < g->n_outs[target]; j++) {
        int t = b->node_out[target][j];
        if (t < 0)
            return base_fail(err, SI_ERR_UNSUPPORTED, "%s: node '%s' output %d has no value",
                             g->m->json_path, g->m->nodes[target].name, j);
        si_result st = add_boundary(b->p, t, target, j, err);
        if (st != SI_OK)
            return st;
    }
    return SI_OK;
}

static si_result build(const core_graph *g, const core_shape *input_shapes,
                       const core_buf *const *input_values, const core_valmap *given,
                       const uint8_t *host_only, int target, core_weight_loader load,
                       void *load_user, core_program **out, int *fail_node, si_error *err)
{
    if (fail_node)
        *fail_node = -1;
    builder b = {.g = g, .given = given, .load = load, .load_user = load_user};
    int n_order = 0;
    int *order = malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    uint8_t *dyn = calloc((size_t)g->n_nodes + 1, 1);
    si_result st = builder_init(&b, err);
    if (st == SI_OK && (!order || !dyn))
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (st == SI_OK)
        st = order_nodes(g, given, target, order, &n_order, err);
    if (st == SI_OK) {
        mark_dynamic(g, given, host_only, order, n_order, dyn);
        st = lower_all(&b, order, n_order, dyn, input_shapes, input_values, fail_node, err);
    }
    if (st == SI_OK && target >= 0)
        st = node_outputs(&b, target, dyn, err);
    if (st == SI_OK && target < 0)
        st = find_boundary(&b, order, n_order, dyn, err);
    if (st == SI_OK && target < 0)
        st = set_outputs(&b, dyn, err);
    if (st == SI_OK)
        st = finalize(&b, err);
    if (st == SI_OK) {
        *out = b.p;
        b.p = NULL;
    }
    if (st != SI_OK && err)
        err->status = st;
    if (b.node_out)
        for (int k = 0; k < g->n_nodes; k++)
            free(b.node_out[k]);
    free(b.node_out);
    free(order);
    free(dyn);
    builder_free(&b);
    return st;
}

si_result core_program_build_given(const core_graph *g, const core_shape *input_shapes,
                                   const core_buf *const *input_values, const core_valmap *given,
                                   const uint8_t *host_only, core_weight_loader load,
                                   void *load_user, core_program **out, int *fail_node,
                                   si_error *err)
{
    return build(g, input_shapes, input_values, given, host_only, -1, load, load_user, out,
                 fail_node, err);
}

si_result core_program_build_node(const core_graph *g, const core_shape *input_shapes,
                                  const core_buf *const *input_values, const core_valmap *given,
                                  int node, core_weight_loader load, void *load_user,
                                  core_program **out, int *fail_node, si_error *err)
{
    return build(g, input_shapes, input_values, given, NULL, node, load, load_user, out,
                 fail_node, err);
}

void core_program_free(core_program *p)
{
    if (!p)
        return;
    for (int t = 0; t < p->n_tensors; t++) {
        free(p->tensors[t].name);
        if (p->tensors[t].alias_of < 0)
            free(p->tensors[t].host);
    }
    free(p->tensors);
    free(p->steps);
    free(p->inputs);
    free(p->outputs);
    free(p->boundary);
    free(p->boundary_node);
    free(p->boundary_idx);
    free(p->seed_node);
    free(p->seed_idx);
    free(p->out_bands);
    free(p);
}

/* ---- one node on the host ---- */

/* May output k of node take storage root r's buffer rather than a copy? When
 * r holds exactly its bytes, is not an input read in place, and no other output
 * of the node is a view of it. */
static int takes_storage(const builder *b, int node, int k, int n_in, const int *ins, int r,
                         size_t bytes)
{
    const core_program *p = b->p;
    if (!p->tensors[r].host || p->tensors[r].bytes != bytes || !bytes)
        return 0;
    for (int i = 0; i < n_in; i++)
        if (core_storage(p, ins[i]) == r)
            return 0;
    for (int j = 0; j < b->g->n_outs[node]; j++)
        if (j != k && b->node_out[node][j] >= 0 && core_storage(p, b->node_out[node][j]) == r)
            return 0;
    return 1;
}

si_result core_eval_node(const core_graph *g, int node, const core_buf *const *in, int n_in,
                         core_buf *out, int max_out, core_weight_loader load, void *load_user,
                         si_error *err)
{
    builder b = {.g = g, .load = load, .load_user = load_user};
    si_result st = SI_OK;
    const io_node *n = &g->m->nodes[node];
    int n_outs = g->n_outs[node] > max_out ? max_out : g->n_outs[node];
    int *ins = calloc((size_t)n_in + 1, sizeof *ins), n_lent = 0;
    b.p = calloc(1, sizeof *b.p);
    b.node_out = calloc((size_t)g->n_nodes + 1, sizeof *b.node_out);
    if (!ins || !b.p || !b.node_out ||
        !(b.node_out[node] = malloc(((size_t)g->n_outs[node] + 1) * sizeof **b.node_out))) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int j = 0; j < g->n_outs[node]; j++)
        b.node_out[node][j] = -1;
    for (int k = 0; k < max_out; k++)
        out[k] = (core_buf){.data = NULL};
    for (int i = 0; i < n_in; i++) {
        /* the op table's kernels know 4-byte elements only (core.h) */
        if (in[i]->dtype == CORE_COMPLEX64) {
            st = base_fail(err, SI_ERR_UNSUPPORTED, "%s: node '%s' (%s): input %d is complex64",
                           g->m->json_path, n->name, n->op, i);
            goto done;
        }
        int t = pg_add_tensor(&b, n->name, in[i]->dtype, &in[i]->shape, PT_CONST);
        if (t < 0) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
            goto done;
        }
        /* read in place, never written (steps write their own outputs); given
         * back before the program is freed. The interpreter's loops pass
         * tensors of many MiB through here. */
        b.p->tensors[t].host = (void *)in[i]->data;
        ins[i] = t;
        n_lent = i + 1;
    }
    if (!strcmp(n->op, "Const")) {
        st = lower_const(&b, node, err);
    } else {
        const core_op_def *def = core_find_op(n->op);
        if (!def) {
            st = base_fail(err, SI_ERR_UNSUPPORTED, "%s: unknown op '%s' at node '%s'",
                           g->m->json_path, n->op, n->name);
            goto done;
        }
        lower_ctx c = {.b = &b, .node = node, .n = n, .n_in = n_in, .in = ins};
        st = def->lower(&c, err);
        if (st == SI_OK && b.p->n_steps < 0)
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < n_outs && st == SI_OK; k++) {
        int t = b.node_out[node][k];
        if (t < 0)
            continue;
        core_buf v;
        st = pg_host_input(&b, t, &v, err);
        if (st != SI_OK)
            break;
        size_t bytes = (size_t)core_shape_count(&v.shape) * CORE_ELEM;
        int r = core_storage(b.p, t);
        if (takes_storage(&b, node, k, n_in, ins, r, bytes)) {
            out[k] = (core_buf){.dtype = v.dtype, .shape = v.shape, .data = b.p->tensors[r].host};
            b.p->tensors[r].host = NULL; /* the output's now */
            continue;
        }
        out[k] = (core_buf){.dtype = v.dtype, .shape = v.shape, .data = malloc(bytes ? bytes : 1)};
        if (!out[k].data) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
            break;
        }
        memcpy(out[k].data, v.data, bytes);
    }
done:
    for (int i = 0; i < n_lent; i++)
        if (b.p->tensors[ins[i]].host == in[i]->data)
            b.p->tensors[ins[i]].host = NULL; /* the caller's */
    if (st != SI_OK) {
        if (err)
            err->status = st;
        for (int k = 0; k < max_out; k++) {
            free(out[k].data);
            out[k].data = NULL;
        }
    }
    if (b.node_out)
        free(b.node_out[node]);
    free(b.node_out);
    free(ins);
    builder_free(&b);
    return st;
}
