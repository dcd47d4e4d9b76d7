/* The stages of dynamic models: after the first GPU program the host
 * interpreter runs loops and data-dependent ops; what follows them runs as a
 * later stage, a GPU program of its own built once per shape (and small
 * values) of what it is given and kept by its key; then the interpreter again.
 * A stage is an si_model sharing its parent's graph, reader and backend. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "session_internal.h"

/* What a later stage is built for: every given tensor's shape, and the values
 * of those small enough to be bound by value. */
static char *stage_key(const core_valmap *vm, int node_prog)
{
    size_t cap = 256, n = 0;
    char *k = malloc(cap);
    if (k)
        n += (size_t)snprintf(k, cap, "%d@", node_prog);
    int node, idx;
    for (int slot = core_valmap_next(vm, -1, &node, &idx); k && slot >= 0;
         slot = core_valmap_next(vm, slot, &node, &idx)) {
        const core_buf *v = core_valmap_get(vm, node, idx);
        int64_t cnt = core_shape_count(&v->shape);
        if (cap - n < 64 + 16 * 12 + SI_MAX_RANK * 21) {
            cap *= 2;
            char *nk = realloc(k, cap);
            if (!nk) {
                free(k);
                return NULL;
            }
            k = nk;
        }
        n += (size_t)snprintf(k + n, cap - n, "%d:%d:%d[", node, idx, (int)v->dtype);
        for (int d = 0; d < v->shape.rank; d++)
            n += (size_t)snprintf(k + n, cap - n, "%lld,", (long long)v->shape.d[d]);
        k[n++] = ']';
        for (int64_t i = 0; i < cnt && cnt <= CORE_VALUE_INPUT_MAX; i++)
            n += (size_t)snprintf(k + n, cap - n, "%d,", ((const int32_t *)v->data)[i]);
        k[n++] = ';';
        k[n] = 0;
    }
    return k;
}

void rt_stage_free(si_model *s)
{
    if (!s)
        return;
    rt_free_run(s);
    rt_drop_program(s);
    free(s->bound);
    if (s->bound_vals && s->g) /* a stage binds small inputs by value too */
        for (int i = 0; i < core_graph_n_inputs(s->g); i++)
            free(s->bound_vals[i].data);
    free(s->bound_vals);
    free(s->stage_key);
    free(s);
}

/* The later stage for what vm holds now: found by its key, or built. */
static si_result stage_get(si_model *m, const core_valmap *vm, int node_prog, si_model **out,
                           int *fail_node, si_error *err)
{
    char *key = stage_key(vm, node_prog);
    if (!key)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int i = 0; i < m->n_stages; i++)
        if (!strcmp(m->stages[i]->stage_key, key)) {
            free(key);
            *out = m->stages[i];
            return SI_OK;
        }
    int ni = core_graph_n_inputs(m->g);
    si_model *s = calloc(1, sizeof *s);
    si_model **ns = realloc(m->stages, (size_t)(m->n_stages + 1) * sizeof *ns);
    if (ns)
        m->stages = ns;
    if (!s || !ns || !(s->bound = calloc((size_t)ni + 1, sizeof *s->bound)) ||
        !(s->bound_vals = calloc((size_t)ni + 1, sizeof *s->bound_vals))) {
        rt_stage_free(s);
        free(key);
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    s->opt = m->opt;
    s->opt.vram_budget = rt_stage_budget(m);
    if (s->opt.vram_budget && s->opt.vram_budget < m->opt.vram_budget)
        s->made_before = m->arena_made;
    s->opt.trace_path = NULL;
    s->io = m->io;
    s->g = m->g;
    s->rd = m->rd;
    s->gpu = m->gpu;
    s->be = m->be;
    s->parent = m;
    s->node_prog = node_prog;
    s->stage_key = key;
    s->given = vm;
    si_result st = rt_build_program(s, m->bound, m->in_dev, err);
    s->given = NULL;
    *fail_node = s->fail_node;
    if (st != SI_OK) {
        rt_stage_free(s);
        return st;
    }
    m->stages[m->n_stages++] = s;
    *out = s;
    return SI_OK;
}

/* Runs the later stage for what vm holds and puts what it computed (outputs,
 * and what the interpreter reads next) into vm. */
static si_result run_stage(si_model *m, core_valmap *vm, int node_prog, int *fail_node,
                           si_error *err)
{
    si_model *s = NULL;
    si_result st = stage_get(m, vm, node_prog, &s, fail_node, err);
    if (st != SI_OK)
        return st;
    const core_program *p = s->prog;
    int ni = core_graph_n_inputs(m->g);
    s->in_dev = calloc((size_t)(ni + p->n_seeds) + 1, sizeof *s->in_dev);
    if (!s->in_dev)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int i = 0; i < ni; i++)
        s->in_dev[i] = m->in_dev[i];
    for (int q = 0; q < p->n_seeds; q++)
        s->in_dev[ni + q] = core_valmap_get(vm, p->seed_node[q], p->seed_idx[q])->data;
    rt_make_room(m, s);
    memset(&s->st, 0, sizeof s->st);
    st = rt_run_plan(s, err);
    m->st.bytes_uploaded += s->st.bytes_uploaded;
    m->st.f16_overflows += s->st.f16_overflows;
    m->st.bytes_downloaded += s->st.bytes_downloaded;
    m->st.bytes_spilled += s->st.bytes_spilled;
    m->st.bytes_reloaded += s->st.bytes_reloaded;
    m->st.file_bytes_read += s->st.file_bytes_read;
    m->st.bytes_spilled_to_file += s->st.bytes_spilled_to_file;
    m->st.file_ms += s->st.file_ms;
    m->st.upload_ms += s->st.upload_ms;
    m->st.compute_ms += s->st.compute_ms;
    m->st.issue_ms += s->st.issue_ms;
    m->st.stall_ms += s->st.stall_ms;
    m->st.gpu_steps += (uint64_t)p->n_steps;
    m->st.segments += s->plan->segments;
    m->st.evictions += s->plan->evictions;
    if (s->plan->lower_bound > m->st.lower_bound_bytes)
        m->st.lower_bound_bytes = s->plan->lower_bound;
    for (int o = 0; o < p->n_outputs + p->n_boundary && st == SI_OK; o++) {
        int t = o < p->n_outputs ? p->outputs[o] : p->boundary[o - p->n_outputs];
        int node, idx;
        if (o < p->n_outputs)
            core_graph_output_ref(m->g, o, &node, &idx);
        else {
            node = p->boundary_node[o - p->n_outputs];
            idx = p->boundary_idx[o - p->n_outputs];
        }
        if (t >= 0 && !core_valmap_get(vm, node, idx))
            st = rt_put_value(s, t, vm, node, idx, err);
    }
    free(s->in_dev);
    s->in_dev = NULL;
    return st;
}

/* A later stage (or a node's program) that cannot run as planned fails the
 * run, naming it (where: "GPU stage 2 ..."): the host interpreter is the
 * fallback only for what the GPU cannot express. */
static si_result stage_failed(si_model *m, si_result st, const char *where, si_error *err)
{
    if (!err)
        return st;
    char inner[sizeof err->message];
    snprintf(inner, sizeof inner, "%s", err->message);
    return base_fail(err, st, "%s: %s: %s", m->io->json_path, where, inner);
}

/* Only steps that move 4-byte words (copies, gathers, constant pads): the
 * GPU's result is the host's bit for bit, so where the node runs (the GPU, or
 * the host where its program does not fit the budget) changes no output. */
static int moves_only(const core_program *p)
{
    for (int i = 0; i < p->n_steps; i++) {
        ck_kind k = p->steps[i].kind;
        if (k != CK_COPY && k != CK_GATHER && k != CK_GATHERND && k != CK_TAKE &&
            !(k == CK_PAD && p->steps[i].u.pad.mode == 0))
            return 0;
    }
    return 1;
}

/* Key *key joins the declined (the host runs that node): SI_ERR_UNSUPPORTED. */
static si_result decline(si_model *m, char **key, si_error *err)
{
    char **nd = realloc(m->declined, (size_t)(m->n_declined + 1) * sizeof *nd);
    if (!nd)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    m->declined = nd;
    m->declined[m->n_declined++] = *key;
    *key = NULL;
    return SI_ERR_UNSUPPORTED;
}

static si_result rt_offload(void *user, const core_graph *g, int node, const int *in_node,
                            const int *in_idx, const core_buf *const *in, int n_in,
                            core_buf *out, int n_out, si_error *err)
{
    si_model *m = user;
    if (g != m->g)
        return SI_ERR_UNSUPPORTED; /* a library function's graph (TF2 bodies): host */
    core_valmap *vm = core_valmap_new(g);
    if (!vm)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    si_result st = SI_OK;
    /* what the node reads, lent to the map (taken back below) */
    for (int d = 0; d < n_in && st == SI_OK; d++) {
        core_buf v = *in[d];
        if (!core_valmap_get(vm, in_node[d], in_idx[d]))
            st = core_valmap_adopt(vm, in_node[d], in_idx[d], &v, err);
    }
    char *key = st == SI_OK ? stage_key(vm, node + 1) : NULL;
    if (st == SI_OK && !key)
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int i = 0; st == SI_OK && i < m->n_declined; i++)
        if (!strcmp(m->declined[i], key))
            st = SI_ERR_UNSUPPORTED;
    if (st == SI_OK) {
        /* decided once: a node the GPU cannot hold, or whose outputs are small */
        int known = 0;
        for (int i = 0; i < m->n_stages && !known; i++)
            known = !strcmp(m->stages[i]->stage_key, key);
        core_program *p = NULL;
        if (!known) {
            si_error ignored;
            int fail = -1;
            size_t bytes = 0;
            if (core_program_build_node(m->g, m->bound, NULL, vm, node, rt_load_weight, m, &p,
                                        &fail, &ignored) == SI_OK)
                for (int q = 0; q < p->n_boundary; q++)
                    bytes += (size_t)p->tensors[p->boundary[q]].bytes;
            if (!p || bytes < CORE_OFFLOAD_MIN || !moves_only(p))
                st = decline(m, &key, err);
            core_program_free(p);
        }
    }
    double t0 = rt_now_ms();
    int fail_node = -1;
    si_model *s = NULL;
    if (st == SI_OK && (st = stage_get(m, vm, node + 1, &s, &fail_node, err)) == SI_ERR_BUDGET)
        st = decline(m, &key, err); /* no plan fits this budget: the host copies it */
    free(key);
    if (st == SI_OK && (st = run_stage(m, vm, node + 1, &fail_node, err)) == SI_OK)
        m->st.gpu_host_nodes++;
    for (int j = 0; j < n_out && st == SI_OK; j++) {
        const core_buf *v = core_valmap_get(vm, node, j); /* every output the node has */
        out[j] = v ? *v : (core_buf){.data = NULL};
        core_valmap_take(vm, node, j); /* the interpreter's now */
    }
    m->offload_ms += rt_now_ms() - t0;
    for (int d = 0; d < n_in; d++)
        core_valmap_take(vm, in_node[d], in_idx[d]);
    core_valmap_free(vm);
    if (st != SI_OK && st != SI_ERR_UNSUPPORTED && st != SI_ERR_CANCELLED) {
        char where[600];
        snprintf(where, sizeof where, "node '%s' (%s) on the GPU (the host interpreter's)",
                 m->io->nodes[node].name, m->io->nodes[node].op);
        st = stage_failed(m, st, where, err);
    }
    return st;
}

/* The part after the first GPU program: the interpreter runs loops and
 * data-dependent ops, then a GPU program what follows them once their shapes
 * are known, and so on. Where a stage cannot be made (or makes no progress),
 * the interpreter computes the rest on the host. */
si_result rt_run_dynamic_part(si_model *m, core_valmap *vm, si_error *err)
{
    const core_program *p = m->prog;
    si_result st = SI_OK;
    for (int i = 0; i < p->n_inputs && st == SI_OK; i++) {
        if (m->bound[i].rank == CORE_UNFED_RANK)
            continue; /* an unfed PlaceholderWithDefault: the interpreter runs its default */
        core_buf v = {core_graph_input(m->g, i)->dtype, m->bound[i], m->in_dev[i]};
        st = core_valmap_put(vm, core_graph_input_node(m->g, i), 0, &v, err);
    }
    for (int q = 0; q < p->n_boundary && st == SI_OK; q++)
        st = rt_put_value(m, p->boundary[q], vm, p->boundary_node[q], p->boundary_idx[q], err);
    if (st != SI_OK)
        return st;
    if (!m->host_only && !(m->host_only = calloc((size_t)core_graph_n_nodes(m->g) + 1, 1)))
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    int stage_no = 2; /* the first GPU program is stage 1 */
    /* the loop nodes on the GPU only where asked for and with no budget (see
     * si_options.loop_nodes); never with no_stages */
    const core_offload gpu = {rt_offload, m};
    const core_offload *off =
        m->opt.no_stages || m->opt.loop_nodes <= 0 || m->opt.vram_budget ? NULL : &gpu;
    m->offload_ms = 0;
    /* si_options.no_stages (SI_STAGES=0): the interpreter does all that follows */
    for (int round = 0; round < 64 && !m->opt.no_stages; round++) {
        int complete = 0;
        double t0 = rt_now_ms();
        double o0 = m->offload_ms;
        st = core_interp_run_stage(m->g, vm, m->host_only, rt_load_weight, m, off, &complete,
                                   err);
        m->st.host_ms += rt_now_ms() - t0 - (m->offload_ms - o0);
        if (st != SI_OK || complete)
            return st;
        size_t before = core_valmap_size(vm);
        int fail_node = -1;
        si_result rs = run_stage(m, vm, 0, &fail_node, err);
        if (rs == SI_ERR_CANCELLED)
            return rs; /* not a reason to move the rest to the host */
        if (rs != SI_OK && fail_node >= 0 && m->host_only && !m->host_only[fail_node]) {
            /* a node the GPU program cannot hold (a shape that depends on a value
             * computed in the same stage): the interpreter runs it from now on */
            m->host_only[fail_node] = 1;
            continue;
        }
        if (rs == SI_ERR_BUDGET || rs == SI_ERR_GPU || rs == SI_ERR_NOMEM || rs == SI_ERR_IO) {
            char where[96];
            snprintf(where, sizeof where, "GPU stage %d (after the host interpreter's part)", stage_no);
            return stage_failed(m, rs, where, err); /* never a silent move to the host */
        }
        if (rs != SI_OK || core_valmap_size(vm) == before)
            break;
        stage_no++;
    }
    double t0 = rt_now_ms(), o0 = m->offload_ms;
    st = core_interp_run(m->g, vm, rt_load_weight, m, off, err);
    m->st.host_ms += rt_now_ms() - t0 - (m->offload_ms - o0);
    return st;
}
