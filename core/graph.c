/* The graph: nodes of the io_model with their data edges resolved, and the
 * model's inputs and outputs chosen exactly as TensorFlow.js chooses them. */
#include <stdlib.h>
#include <string.h>
#include "graph.h"

static uint64_t hash_str(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

int core_graph_find(const core_graph *g, const char *name, size_t len)
{
    uint64_t h = hash_str(name, len);
    for (size_t i = h & (g->hash_cap - 1);; i = (i + 1) & (g->hash_cap - 1)) {
        int k = g->hash[i];
        if (k < 0)
            return -1;
        const char *nm = g->m->nodes[k].name;
        if (strlen(nm) == len && !memcmp(nm, name, len))
            return k;
    }
}

/* "node:2" → (node index, 2); "^node" is a control input (returns 1). */
static si_result parse_ref(const core_graph *g, const char *ref, int *node, int *idx, int *ctrl,
                           const char *user, si_error *err)
{
    *ctrl = ref[0] == '^';
    if (*ctrl)
        ref++;
    size_t len = strlen(ref);
    *idx = 0;
    const char *colon = strrchr(ref, ':');
    if (colon) {
        char *end;
        long v = strtol(colon + 1, &end, 10);
        if (*end == 0 && end != colon + 1 && v >= 0 && v < 4096) {
            *idx = (int)v;
            len = (size_t)(colon - ref);
        }
    }
    *node = core_graph_find(g, ref, len);
    if (*node < 0)
        return base_fail(err, SI_ERR_FORMAT, "%s: node '%s' has input '%s' that no node produces",
                         g->m->json_path, user, ref);
    return SI_OK;
}

static si_result input_info(const core_graph *g, int node, core_io_info *info, si_error *err)
{
    const io_node *n = &g->m->nodes[node];
    info->name = n->name;
    info->has_default = 0;
    if (!strcmp(n->op, "PlaceholderWithDefault"))
        for (int i = 0; i < n->n_inputs; i++)
            info->has_default |= !g->edges[node][i].ctrl;
    const io_attr *dt = io_node_attr(n, "dtype");
    info->dtype = SI_FLOAT32;
    if (dt && dt->kind == IO_ATTR_TYPE) {
        if (dt->type == IO_DT_OTHER && dt->type_name && !strcmp(dt->type_name, "DT_STRING"))
            return base_fail(err, SI_ERR_UNSUPPORTED,
                             "%s: input '%s' is a string tensor; inputs must be numeric here "
                             "(strings come from the model's Consts)", g->m->json_path, n->name);
        /* a library function's argument may be complex64 (If, While hand the
         * interpreter's values on); a model's input may not (core.h) */
        int complex_arg = g->m->borrowed && dt->type == IO_DT_OTHER && dt->type_name &&
                          !strcmp(dt->type_name, "DT_COMPLEX64");
        if (dt->type == IO_DT_OTHER && !complex_arg)
            return base_fail(err, SI_ERR_UNSUPPORTED, "%s: input '%s' has dtype %s",
                             g->m->json_path, n->name, dt->type_name ? dt->type_name : "?");
        info->dtype = complex_arg ? CORE_COMPLEX64 : (si_dtype)dt->type;
    }
    const io_attr *sh = io_node_attr(n, "shape");
    info->shape.rank = 0;
    if (sh && sh->kind == IO_ATTR_SHAPE && !sh->shape.unknown_rank) {
        info->shape.rank = sh->shape.rank;
        for (int i = 0; i < sh->shape.rank; i++)
            info->shape.d[i] = sh->shape.dim[i] < 0 ? -1 : sh->shape.dim[i];
    } else if (sh && sh->kind == IO_ATTR_SHAPE) {
        info->shape.rank = -1; /* any rank: the given input decides */
    }
    /* The declared shape is what runs when the caller gives none: its byte size
     * must be a number, whatever the free (-1) dimensions are bound to later. */
    core_shape known = {.rank = 0};
    for (int i = 0; i < info->shape.rank; i++)
        if (info->shape.d[i] >= 0)
            known.d[known.rank++] = info->shape.d[i];
    int64_t count;
    if (core_shape_count_checked(&known, &count)) {
        char buf[160];
        return base_fail(err, SI_ERR_SHAPE, "%s: input '%s': shape %s has more bytes than memory can hold",
                         g->m->json_path, n->name, core_shape_str(&info->shape, buf, sizeof buf));
    }
    return SI_OK;
}

/* A Const takes its value from the manifest or from its own "value" tensor;
 * with neither, a missing manifest entry would run as zeros (a wrong answer
 * with SI_OK), so it is refused here, before anything is planned. Values of
 * dtypes streaminfer does not compute with are not kept by io; lower_const
 * refuses those Consts if they are used. */
static si_result check_const(const core_graph *g, int k, si_error *err)
{
    const io_node *n = &g->m->nodes[k];
    if (strcmp(n->op, "Const") || g->weight_of[k] >= 0)
        return SI_OK;
    const io_attr *v = io_node_attr(n, "value");
    if (v && v->kind == IO_ATTR_TENSOR && v->tensor.dtype == IO_DT_OTHER)
        return SI_OK;
    int64_t count = 1;
    if (v && v->kind == IO_ATTR_TENSOR) {
        for (int i = 0; i < v->tensor.shape.rank; i++)
            count = v->tensor.shape.dim[i] == 0 ? 0 : count;
        if (v->tensor.n > 0 || count == 0)
            return SI_OK;
    }
    return base_fail(err, SI_ERR_FORMAT,
                     "%s: Const node '%s' has no weight in the manifest and no value of its own",
                     g->m->json_path, n->name);
}

/* The name index (duplicates refused) and each node's weight. */
static si_result index_nodes(core_graph *g, si_error *err)
{
    const io_model *m = g->m;
    size_t cap = g->hash_cap;
    for (size_t i = 0; i < cap; i++)
        g->hash[i] = -1;
    for (int k = 0; k < m->n_nodes; k++) {
        const char *nm = m->nodes[k].name;
        size_t len = strlen(nm);
        if (core_graph_find(g, nm, len) >= 0)
            return base_fail(err, SI_ERR_FORMAT, "%s: two nodes are named '%s'", m->json_path, nm);
        size_t i = hash_str(nm, len) & (cap - 1);
        while (g->hash[i] >= 0)
            i = (i + 1) & (cap - 1);
        g->hash[i] = k;
        g->weight_of[k] = -1;
        g->n_outs[k] = 1;
    }
    for (int w = 0; w < m->n_weights; w++) {
        int k = core_graph_find(g, m->weights[w].name, strlen(m->weights[w].name));
        if (k >= 0)
            g->weight_of[k] = w;
    }
    return SI_OK;
}

/* Every node's input edges; the uses and output counts they imply. */
static si_result build_edges(core_graph *g, si_error *err)
{
    const io_model *m = g->m;
    for (int k = 0; k < m->n_nodes; k++) {
        const io_node *n = &m->nodes[k];
        g->edges[k] = calloc((size_t)n->n_inputs + 1, sizeof **g->edges);
        if (!g->edges[k])
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        for (int i = 0; i < n->n_inputs; i++) {
            core_edge *e = &g->edges[k][i];
            si_result st = parse_ref(g, n->inputs[i], &e->node, &e->idx, &e->ctrl, n->name, err);
            if (st != SI_OK)
                return st;
            g->n_uses[e->node]++;
            if (!e->ctrl && e->idx + 1 > g->n_outs[e->node])
                g->n_outs[e->node] = e->idx + 1;
        }
    }
    return SI_OK;
}

/* Inputs: the signature's, else every Placeholder in file order. Outputs: the
 * signature's in its order, else nodes nothing consumes. */
static si_result find_inputs_outputs(core_graph *g, si_error *err)
{
    const io_model *m = g->m;
    if (m->n_sig_inputs > 0) {
        for (int i = 0; i < m->n_sig_inputs; i++) {
            int node, idx, ctrl;
            if (parse_ref(g, m->sig_input_names[i], &node, &idx, &ctrl, "signature", err) != SI_OK)
                continue; /* tfjs skips signature entries naming no node */
            g->inputs[g->n_inputs++] = node;
        }
    } else {
        for (int k = 0; k < m->n_nodes; k++)
            if (!strncmp(m->nodes[k].op, "Placeholder", 11))
                g->inputs[g->n_inputs++] = k;
    }
    for (int i = 0; i < g->n_inputs; i++) {
        si_result st = input_info(g, g->inputs[i], &g->input_info[i], err);
        if (st != SI_OK)
            return st;
    }
    if (m->n_sig_outputs > 0) {
        for (int i = 0; i < m->n_sig_outputs; i++) {
            int node, idx, ctrl;
            if (parse_ref(g, m->sig_output_names[i], &node, &idx, &ctrl, "signature", err) != SI_OK)
                continue;
            g->outputs[g->n_outputs++] = (core_edge){node, idx, 0};
        }
    } else {
        for (int k = 0; k < m->n_nodes; k++)
            if (g->n_uses[k] == 0)
                g->outputs[g->n_outputs++] = (core_edge){k, 0, 0};
    }
    if (g->n_outputs == 0)
        return base_fail(err, SI_ERR_FORMAT, "%s: the model has no outputs", m->json_path);
    return SI_OK;
}

static si_result graph_build(const io_model *m, core_graph **out, si_error *err);

static int fn_index(const io_model *m, const char *name)
{
    const io_function *f = io_model_function(m, name);
    return f ? (int)(f - m->functions) : -1;
}

/* Every func attr of g's nodes names a library function; If/While nodes'
 * data inputs agree with their functions' arity. */
static si_result check_calls(const core_graph *g, const io_model *root, si_error *err)
{
    const io_model *m = g->m;
    for (int k = 0; k < m->n_nodes; k++) {
        const io_node *n = &m->nodes[k];
        int n_data = 0;
        for (int i = 0; i < n->n_inputs; i++)
            n_data += !g->edges[k][i].ctrl;
        int is_if = !strcmp(n->op, "If") || !strcmp(n->op, "StatelessIf");
        int is_while = !strcmp(n->op, "While") || !strcmp(n->op, "StatelessWhile");
        static const char *const if_attrs[] = {"then_branch", "else_branch", NULL};
        static const char *const while_attrs[] = {"cond", "body", NULL};
        for (int i = 0; (is_if || is_while) && (is_if ? if_attrs : while_attrs)[i]; i++) {
            const char *an = (is_if ? if_attrs : while_attrs)[i];
            const io_attr *a = io_node_attr(n, an);
            if (!a || a->kind != IO_ATTR_FUNC)
                return base_fail(err, SI_ERR_FORMAT, "%s: node '%s' (%s) has no '%s' function",
                                 m->json_path, n->name, n->op, an);
        }
        for (int j = 0; j < n->n_attrs; j++) {
            const io_attr *a = &n->attrs[j];
            if (a->kind != IO_ATTR_FUNC)
                continue;
            int f = fn_index(root, a->s);
            if (f < 0)
                return base_fail(err, SI_ERR_FORMAT,
                                 "%s: node '%s' calls function '%s', which is not in the library",
                                 m->json_path, n->name, a->s);
            const io_function *fn = &root->functions[f];
            int want_in = is_if ? n_data - 1 : n_data;
            if ((is_if || is_while) && fn->n_in != want_in)
                return base_fail(err, SI_ERR_FORMAT,
                                 "%s: node '%s' (%s) passes %d values to function '%s', which takes %d",
                                 m->json_path, n->name, n->op, want_in, fn->name, fn->n_in);
            if (is_while && !strcmp(a->name, "body") && fn->n_out != n_data)
                return base_fail(err, SI_ERR_FORMAT,
                                 "%s: node '%s' (%s): body function '%s' returns %d values for %d loop values",
                                 m->json_path, n->name, n->op, fn->name, fn->n_out, n_data);
            if ((is_if || is_while) && g->n_outs[k] > (is_if ? fn->n_out : n_data) &&
                strcmp(a->name, "cond"))
                return base_fail(err, SI_ERR_FORMAT,
                                 "%s: node '%s' (%s): output %d is read but function '%s' returns %d",
                                 m->json_path, n->name, n->op, g->n_outs[k] - 1, fn->name, fn->n_out);
        }
    }
    return SI_OK;
}

/* A function that calls itself, directly or through others, would never end. */
static si_result check_recursion(const io_model *m, int f, uint8_t *state, si_error *err)
{
    if (state[f] == 2)
        return SI_OK;
    if (state[f] == 1)
        return base_fail(err, SI_ERR_FORMAT, "%s: function '%s' calls itself (recursion)",
                         m->json_path, m->functions[f].name);
    state[f] = 1;
    const io_model *b = m->functions[f].body;
    for (int k = 0; k < b->n_nodes; k++)
        for (int j = 0; j < b->nodes[k].n_attrs; j++) {
            const io_attr *a = &b->nodes[k].attrs[j];
            int g = a->kind == IO_ATTR_FUNC ? fn_index(m, a->s) : -1;
            si_result st = g >= 0 ? check_recursion(m, g, state, err) : SI_OK;
            if (st != SI_OK)
                return st;
        }
    state[f] = 2;
    return SI_OK;
}

si_result core_graph_build(const io_model *m, core_graph **out, si_error *err)
{
    si_result st = graph_build(m, out, err);
    if (st != SI_OK || m->borrowed || m->n_functions == 0)
        return st;
    core_graph *g = *out;
    g->fns = calloc((size_t)m->n_functions, sizeof *g->fns);
    uint8_t *state = calloc((size_t)m->n_functions, 1);
    g->owns_fns = 1;
    if (!g->fns || !state)
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int f = 0; st == SI_OK && f < m->n_functions; f++) {
        st = graph_build(m->functions[f].body, &g->fns[f], err);
        if (st == SI_OK)
            g->n_fns = f + 1;
    }
    for (int f = 0; st == SI_OK && f < m->n_functions; f++)
        st = check_recursion(m, f, state, err);
    if (st == SI_OK)
        st = check_calls(g, m, err);
    for (int f = 0; st == SI_OK && f < m->n_functions; f++) {
        g->fns[f]->fns = g->fns;
        g->fns[f]->n_fns = g->n_fns;
        st = check_calls(g->fns[f], m, err);
    }
    free(state);
    if (st != SI_OK) {
        err->status = st;
        core_graph_free(g);
        *out = NULL;
    }
    return st;
}

static si_result graph_build(const io_model *m, core_graph **out, si_error *err)
{
    core_graph *g = calloc(1, sizeof *g);
    if (!g)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    g->m = m;
    g->n_nodes = m->n_nodes;
    size_t cap = 16;
    while (cap < (size_t)m->n_nodes * 2)
        cap <<= 1;
    g->hash_cap = cap;
    g->hash = malloc(cap * sizeof *g->hash);
    g->edges = calloc((size_t)m->n_nodes + 1, sizeof *g->edges);
    g->n_uses = calloc((size_t)m->n_nodes + 1, sizeof *g->n_uses);
    g->n_outs = calloc((size_t)m->n_nodes + 1, sizeof *g->n_outs);
    g->weight_of = malloc(((size_t)m->n_nodes + 1) * sizeof *g->weight_of);
    si_result st = SI_OK;
    if (!g->hash || !g->edges || !g->n_uses || !g->n_outs || !g->weight_of)
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (st == SI_OK)
        st = index_nodes(g, err);
    for (int k = 0; k < m->n_nodes && st == SI_OK; k++)
        st = check_const(g, k, err);
    if (st == SI_OK)
        st = build_edges(g, err);
    if (st == SI_OK) {
        g->inputs = calloc((size_t)m->n_nodes + 1, sizeof *g->inputs);
        g->input_info = calloc((size_t)m->n_nodes + 1, sizeof *g->input_info);
        g->outputs = calloc((size_t)m->n_nodes + 1, sizeof *g->outputs);
        if (!g->inputs || !g->input_info || !g->outputs)
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    if (st == SI_OK)
        st = find_inputs_outputs(g, err);
    if (st != SI_OK) {
        err->status = st;
        core_graph_free(g);
        return st;
    }
    *out = g;
    return SI_OK;
}

void core_graph_free(core_graph *g)
{
    if (!g)
        return;
    if (g->edges)
        for (int k = 0; k < g->n_nodes; k++)
            free(g->edges[k]);
    free(g->edges);
    free(g->hash);
    free(g->n_uses);
    free(g->n_outs);
    free(g->weight_of);
    free(g->inputs);
    free(g->input_info);
    free(g->outputs);
    if (g->owns_fns) {
        for (int f = 0; f < g->n_fns; f++)
            core_graph_free(g->fns[f]);
        free(g->fns);
    }
    free(g);
}

int core_graph_n_inputs(const core_graph *g) { return g->n_inputs; }
int core_graph_n_nodes(const core_graph *g) { return g->n_nodes; }
const core_io_info *core_graph_input(const core_graph *g, int i) { return &g->input_info[i]; }
int core_graph_n_outputs(const core_graph *g) { return g->n_outputs; }
const char *core_graph_output_name(const core_graph *g, int i)
{
    return g->m->nodes[g->outputs[i].node].name;
}

void core_graph_output_ref(const core_graph *g, int i, int *node, int *idx)
{
    *node = g->outputs[i].node;
    *idx = g->outputs[i].idx;
}

int core_graph_input_node(const core_graph *g, int i) { return g->inputs[i]; }
