/* The session: the public API of include/streaminfer.h (si_open, si_run,
 * si_plan, si_output, si_close ...), a handle's life and its lock. A program
 * (and its plan) is built for one set of input shapes and kept until the
 * shapes change (budget.c); running it is the executor's (exec.c), and a
 * dynamic model's later stages are stages.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "session_internal.h"

/* Entering a public call on m: its lock, then its context in this thread. */
typedef struct {
    si_model *m;
    glk_binding saved;
    int bound;
} api_call;

static si_result api_enter(api_call *c, const si_model *cm, si_error *err)
{
    si_model *m = (si_model *)cm; /* the lock is not part of the model's value */
    c->m = m;
    c->bound = 0;
    if (m->has_lock)
        pthread_mutex_lock(m->lockp);
    if (m->gpu) {
        si_result st = glk_bind(m->gpu, &c->saved, err);
        if (st != SI_OK) {
            if (m->has_lock)
                pthread_mutex_unlock(m->lockp);
            return st;
        }
        c->bound = 1;
    }
    return SI_OK;
}

static void api_leave(api_call *c)
{
    if (c->bound)
        glk_unbind(c->m->gpu, &c->saved);
    if (c->m->has_lock)
        pthread_mutex_unlock(c->m->lockp);
}

static si_result output_locked(const si_model *m, int i, si_dtype *dtype, int *rank,
                               int64_t shape[SI_MAX_RANK], const void **data, si_error *err);

void rt_progress(si_model *m, const char *phase, int done, int total)
{
    if (m->opt.progress)
        m->opt.progress(m->opt.progress_user, phase, done, total);
    if (m->opt.progress_stop && m->opt.progress_stop(m->opt.progress_user, phase, done, total))
        (m->parent ? m->parent : m)->cancelled = 1;
}

si_result rt_check_cancel(const si_model *m, si_error *err)
{
    if (!(m->parent ? m->parent : m)->cancelled)
        return SI_OK;
    return base_fail(err, SI_ERR_CANCELLED, "cancelled by the progress callback");
}

/* core_weight_loader: a weight's value on the host, dequantized as tfjs does. */
si_result rt_load_weight(void *user, int w, void *dst4, si_error *err)
{
    si_model *m = user;
    const io_weight *wt = &m->io->weights[w];
    void *raw = malloc(wt->nbytes ? wt->nbytes : 1);
    if (!raw)
        return base_fail(err, SI_ERR_NOMEM, "out of memory reading weight %s", wt->name);
    si_result st = io_reader_read(m->rd, w, raw, err);
    if (st == SI_OK)
        io_weight_dequantize(wt, raw, dst4);
    free(raw);
    return st;
}

/* Default shapes: a -1 batch becomes 1; other -1 dims wait for an input. */
static int default_shapes(const si_model *m, core_shape *shapes)
{
    for (int i = 0; i < core_graph_n_inputs(m->g); i++) {
        shapes[i] = core_graph_input(m->g, i)->shape;
        if (shapes[i].rank < 0)
            return 0;
        for (int d = 0; d < shapes[i].rank; d++)
            if (shapes[i].d[d] < 0) {
                if (d != 0)
                    return 0;
                shapes[i].d[d] = 1;
            }
    }
    return 1;
}

/* A model alone (ctx NULL: its own GL context and lock) or one of a context's
 * (its GL context, lock and budget: context.c). */
si_result rt_open_model(si_context *ctx, const char *path, const si_options *opt, si_model **out,
                        si_error *err)
{
    si_error dummy;
    if (!err)
        err = &dummy;
    err->status = SI_OK;
    err->message[0] = 0;
    if (!path || !out)
        return base_fail(err, SI_ERR_ARG, "si_open: path and out are required");
    *out = NULL;
    double t0 = rt_now_ms();
    si_model *m = calloc(1, sizeof *m);
    if (!m)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (pthread_mutex_init(&m->lock, NULL)) {
        free(m);
        return base_fail(err, SI_ERR_NOMEM, "cannot create the handle's lock");
    }
    m->has_lock = 1;
    m->lockp = &m->lock;
    rt_effective_options(opt, &m->opt);
    m->be = &rt_backend_host; /* until a GL context is open */
    if (ctx)
        rt_ctx_attach(ctx, m);
    double t_read = rt_now_ms(), t_gpu = 0;
    si_result st = SI_OK;
    if (!(m->spill_dir = strdup(m->opt.spill_dir)))
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    m->opt.spill_dir = m->spill_dir;
    if (st == SI_OK && (st = rt_check_op_list("f32_ops", m->opt.f32_ops, err)) == SI_OK &&
        m->opt.f32_ops && !(m->f32_ops = strdup(m->opt.f32_ops)))
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    m->opt.f32_ops = m->f32_ops;
    if (st == SI_OK && (unsigned)m->opt.precision > SI_PRECISION_F16)
        st = base_fail(err, SI_ERR_ARG, "si_open: precision %d is neither SI_PRECISION_F32 nor "
                       "SI_PRECISION_F16 (SI_PRECISION: f32 or f16)", (int)m->opt.precision);
    if (st == SI_OK)
        st = io_model_load(path, &m->io, err);
    if (st == SI_OK)
        st = core_graph_build(m->io, &m->g, err);
    if (st == SI_OK)
        st = core_graph_check_ops(m->g, err);
    if (st == SI_OK &&
        (!(m->bound = calloc((size_t)core_graph_n_inputs(m->g) + 1, sizeof *m->bound)) ||
         !(m->bound_vals = calloc((size_t)core_graph_n_inputs(m->g) + 1, sizeof *m->bound_vals))))
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (st == SI_OK)
        st = io_reader_open(m->io, m->opt.io_mode, &m->rd, err);
    m->st.open_read_ms = rt_now_ms() - t_read;
    glk_binding before; /* the caller's current context, put back on return */
    int saved = 0;
    if (st == SI_OK && !ctx)
        st = glk_set_conv(NULL, m->opt.conv_kernel, err); /* a bad one is the caller's error */
    if (st == SI_OK && !ctx && m->opt.backend != SI_BACKEND_HOST) {
        t_gpu = rt_now_ms();
        glk_current_save(&before);
        saved = 1;
        st = glk_open(&m->gpu, err);
        if (st == SI_OK) {
            m->be = &rt_backend_gpu;
            glk_set_conv(m->gpu, m->opt.conv_kernel, NULL);
            glk_set_faults(m->gpu, &(glk_faults){m->opt.fail_gpu_alloc, m->opt.fail_gpu_command,
                                                 m->opt.fail_gpu_lost, m->opt.fail_gpu_no_storage});
            rt_programs_bind(m->gpu, m->opt.plan_cache_dir);
        }
        if (st != SI_OK && m->opt.backend == SI_BACKEND_AUTO) {
            m->opt.backend = SI_BACKEND_HOST;
            st = SI_OK;
            if (err)
                *err = (si_error){0};
        }
        m->st.open_gpu_ms = rt_now_ms() - t_gpu;
    }
    /* an empty context: what the process holds before the program and its pool */
    m->st.rss_baseline_bytes = rt_proc_bytes("VmRSS:");
    api_call call;
    if (st == SI_OK && (st = api_enter(&call, m, err)) == SI_OK) {
        core_shape *shapes = calloc((size_t)core_graph_n_inputs(m->g) + 1, sizeof *shapes);
        if (!shapes)
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
        else if (default_shapes(m, shapes)) {
            st = rt_build_program(m, shapes, NULL, err);
            m->st.open_plan_ms = m->build_plan_ms;
            m->st.plan_from_cache = (uint64_t)m->plan_from_cache;
            m->st.open_tile_ms = m->build_tile_ms;
            if (st == SI_OK && m->be->prepare && !m->opt.defer_compile) {
                double t_compile = rt_now_ms();
                st = m->be->prepare(m, err);
                m->st.open_compile_ms = rt_now_ms() - t_compile;
            }
        }
        free(shapes);
        api_leave(&call);
    }
    if (st != SI_OK)
        si_close(m);
    if (saved)
        glk_current_restore(&before);
    if (st != SI_OK)
        return st;
    m->st.open_ms = rt_now_ms() - t0;
    *out = m;
    return SI_OK;
}

si_result si_open(const char *path, const si_options *opt, si_model **out, si_error *err)
{
    return rt_open_model(NULL, path, opt, out, err);
}

static void free_inputs(si_model *m)
{
    if (m->in_dev && m->in_copy)
        for (int i = 0; i < core_graph_n_inputs(m->g); i++)
            if (m->in_copy[i])
                free(m->in_dev[i]);
    free(m->in_dev);
    free(m->in_copy);
    m->in_dev = NULL;
    m->in_copy = NULL;
}

void rt_free_run(si_model *m)
{
    for (int i = 0; i < m->n_out; i++)
        if (!m->outs[i].in_pool)
            free(m->outs[i].data);
    free(m->outs);
    m->outs = NULL;
    m->n_out = 0;
    free_inputs(m);
}

void si_close(si_model *m)
{
    if (!m)
        return;
    api_call call;
    si_error ignored;
    /* without its context the GL objects go with it (glk_close destroys it) */
    int entered = api_enter(&call, m, &ignored) == SI_OK;
    int restore = entered && call.bound && !glk_binding_is(&call.saved, m->gpu);
    if (m->ctx && entered)
        rt_ctx_forget(m); /* its turns are no longer the context's */
    if (m->g)
        rt_free_run(m);
    free(m->host_only);
    rt_drop_program(m);
    free(m->bound);
    if (m->bound_vals && m->g)
        for (int i = 0; i < core_graph_n_inputs(m->g); i++)
            free(m->bound_vals[i].data);
    free(m->bound_vals);
    if (m->ctx && entered) {
        api_leave(&call); /* the context's GL context and lock stay */
        entered = 0;
    } else if (!m->ctx) {
        glk_close(m->gpu);
        if (restore)
            glk_current_restore(&call.saved); /* what the caller had current */
    }
    trace_free(&m->trace);
    io_reader_close(m->rd);
    core_graph_free(m->g);
    io_model_free(m->io);
    free(m->spill_dir);
    free(m->f32_ops);
    if (m->has_lock) {
        if (entered)
            pthread_mutex_unlock(m->lockp);
        pthread_mutex_destroy(&m->lock);
    }
    free(m);
}

int si_input_count(const si_model *m) { return core_graph_n_inputs(m->g); }

si_result si_input_info(const si_model *m, int i, const char **name, si_dtype *dtype, int *rank,
                        int64_t shape[SI_MAX_RANK])
{
    if (i < 0 || i >= core_graph_n_inputs(m->g))
        return SI_ERR_ARG;
    const core_io_info *in = core_graph_input(m->g, i);
    if (name)
        *name = in->name;
    if (dtype)
        *dtype = in->dtype;
    if (rank)
        *rank = in->shape.rank;
    if (shape)
        for (int d = 0; d < in->shape.rank; d++)
            shape[d] = in->shape.d[d];
    return SI_OK;
}

int si_output_count(const si_model *m) { return core_graph_n_outputs(m->g); }
const char *si_output_name(const si_model *m, int i)
{
    return i >= 0 && i < core_graph_n_outputs(m->g) ? core_graph_output_name(m->g, i) : NULL;
}

/* ---- running ---- */

/* p lies in the model's host pool: an output of its last run, handed back from there. */
static int in_pool(const si_model *m, const void *p)
{
    uintptr_t a = (uintptr_t)p, h = (uintptr_t)m->home;
    return m->home && a >= h && a - h < m->home_bytes;
}

/* Input i as the run reads it, 4 bytes an element: the caller's data itself
 * (valid for the whole si_run, never written), or a copy where it is bool
 * (widened) or where it is an output of the last run fed back (its home in
 * the pool is written by this run, or freed when new input sizes make a new
 * program). */
static si_result to_dev(si_model *m, int i, const si_tensor_in *in, int64_t n, si_error *err)
{
    if (in->dtype != SI_BOOL && !in_pool(m, in->data)) {
        m->in_dev[i] = (void *)(uintptr_t)in->data;
        return SI_OK;
    }
    int32_t *d = malloc((size_t)(n ? n : 1) * 4);
    if (!d)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (in->dtype == SI_BOOL)
        for (int64_t k = 0; k < n; k++)
            d[k] = ((const uint8_t *)in->data)[k] != 0;
    else
        memcpy(d, in->data, (size_t)n * 4);
    m->in_dev[i] = d;
    m->in_copy[i] = 1;
    return SI_OK;
}

static si_result match_inputs(si_model *m, const si_tensor_in *inputs, int n_inputs,
                              core_shape *shapes, const si_tensor_in **given, si_error *err)
{
    int ni = core_graph_n_inputs(m->g), n_default = 0;
    for (int i = 0; i < ni; i++)
        n_default += core_graph_input(m->g, i)->has_default;
    /* a PlaceholderWithDefault may go unfed, as in tfjs: its default runs */
    if (n_inputs > ni || n_inputs < ni - n_default)
        return base_fail(err, SI_ERR_ARG, "the model has %d input%s, %d given", ni, ni == 1 ? "" : "s",
                    n_inputs);
    for (int i = 0; i < ni; i++)
        given[i] = NULL;
    for (int k = 0; k < n_inputs; k++) {
        int which = -1;
        if (inputs[k].name) {
            for (int i = 0; i < ni; i++)
                if (!strcmp(core_graph_input(m->g, i)->name, inputs[k].name))
                    which = i;
            if (which < 0) {
                /* "name:0" is the same tensor */
                size_t len = strcspn(inputs[k].name, ":");
                for (int i = 0; i < ni; i++) {
                    const char *nm = core_graph_input(m->g, i)->name;
                    if (strlen(nm) == len && !strncmp(nm, inputs[k].name, len))
                        which = i;
                }
            }
            if (which < 0)
                return base_fail(err, SI_ERR_ARG, "the model has no input named '%s'", inputs[k].name);
        } else {
            which = k;
        }
        if (given[which])
            return base_fail(err, SI_ERR_ARG, "input '%s' given twice", core_graph_input(m->g, which)->name);
        given[which] = &inputs[k];
    }
    for (int i = 0; i < ni; i++) {
        const core_io_info *info = core_graph_input(m->g, i);
        const si_tensor_in *in = given[i];
        if (!in && info->has_default) {
            shapes[i] = (core_shape){.rank = CORE_UNFED_RANK};
            continue;
        }
        if (!in)
            return base_fail(err, SI_ERR_ARG, "input '%s' is not given (the model has %d input%s, "
                             "%d given)", info->name, ni, ni == 1 ? "" : "s", n_inputs);
        if (in->dtype != info->dtype)
            return base_fail(err, SI_ERR_SHAPE, "input '%s' must be %s, got %s", info->name,
                        si_dtype_name(info->dtype), si_dtype_name(in->dtype));
        char want[128], got[128];
        core_shape gs = {.rank = in->rank};
        if (in->rank < 0 || in->rank > SI_MAX_RANK)
            return base_fail(err, SI_ERR_SHAPE, "input '%s': rank %d not supported", info->name, in->rank);
        for (int d = 0; d < in->rank; d++)
            gs.d[d] = in->shape[d];
        int ok = in->rank == info->shape.rank || info->shape.rank < 0;
        for (int d = 0; ok && d < in->rank; d++)
            ok = in->shape[d] >= 0 && (info->shape.rank < 0 || info->shape.d[d] < 0 ||
                                       info->shape.d[d] == in->shape[d]);
        if (!ok)
            return base_fail(err, SI_ERR_SHAPE, "input '%s' must have shape %s, got %s", info->name,
                        core_shape_str(&info->shape, want, sizeof want),
                        core_shape_str(&gs, got, sizeof got));
        if (core_shape_count(&gs) > 0 && !in->data)
            return base_fail(err, SI_ERR_ARG, "input '%s' has no data", info->name);
        if (core_shape_count(&gs) > ((int64_t)1 << 31) / 4)
            return base_fail(err, SI_ERR_SHAPE, "input '%s' is too large", info->name);
        shapes[i] = gs;
    }
    return SI_OK;
}

/* 4-byte words → the caller's layout (bool as one byte). Takes words. */
static si_result set_output(out_tensor *ot, si_dtype dt, const core_shape *shape, int32_t *words,
                            si_error *err)
{
    int64_t n = core_shape_count(shape);
    ot->dtype = dt;
    ot->shape = *shape;
    if (dt != SI_BOOL) {
        ot->data = words;
        return SI_OK;
    }
    uint8_t *b = malloc((size_t)(n ? n : 1));
    if (!b) {
        free(words);
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < n; i++)
        b[i] = words[i] != 0;
    free(words);
    ot->data = b;
    return SI_OK;
}

/* Buffer b's home in the pool where it has one there (UINT64_MAX: none). */
static uint64_t pool_home(const si_model *m, int b)
{
    if (b < 0 || (m->tier && m->tier[b] != PG_TIER_POOL))
        return UINT64_MAX;
    return m->home_off[b];
}

/* Where output tensor t's final bytes already lie in the host pool, whole and
 * in the caller's layout (float32, int32): handed back from there, no copy;
 * NULL where it must be copied (bool, spilled to the file, no home). An
 * output in bands has its bands' homes side by side (pg_home_layout). */
static void *output_in_pool(const si_model *m, int t)
{
    const core_program *p = m->prog;
    int r = core_storage(p, t);
    if (p->tensors[t].dtype == SI_BOOL || p->tensors[r].kind != PT_ACT)
        return NULL;
    uint64_t at = UINT64_MAX;
    int banded = 0;
    for (int i = 0; i < p->n_out_bands; i++) {
        const struct core_band *bd = &p->out_bands[i];
        if (bd->root != r)
            continue;
        uint64_t h = pool_home(m, m->buf_of[bd->tensor]), start = h - (uint64_t)bd->e0 * 4;
        if (h == UINT64_MAX || h < (uint64_t)bd->e0 * 4 || (banded && start != at))
            return NULL;
        at = start;
        banded = 1;
    }
    if (!banded)
        at = pool_home(m, m->buf_of[r]);
    return at == UINT64_MAX ? NULL : m->home + at;
}

static si_result collect_outputs(si_model *m, si_error *err)
{
    const core_program *p = m->prog;
    m->n_out = p->n_outputs;
    m->outs = calloc((size_t)p->n_outputs + 1, sizeof *m->outs);
    if (!m->outs)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    core_valmap *vm = NULL;
    si_result st = SI_OK;
    if (p->has_dynamic) {
        if (!(vm = core_valmap_new(m->g)))
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        st = rt_run_dynamic_part(m, vm, err);
    }
    for (int o = 0; o < p->n_outputs && st == SI_OK; o++) {
        int t = p->outputs[o];
        if (t < 0) {
            int node, idx;
            core_graph_output_ref(m->g, o, &node, &idx);
            const core_buf *v = core_valmap_get(vm, node, idx);
            if (!v) {
                st = base_fail(err, SI_ERR_ARG, "output '%s' was not computed",
                          core_graph_output_name(m->g, o));
                break;
            }
            /* core_graph_check_ops refuses such models at open; this keeps the
             * interpreter's own dtype out of the API whatever the graph says */
            if (v->dtype == CORE_COMPLEX64) {
                st = base_fail(err, SI_ERR_UNSUPPORTED,
                               "output '%s' is complex64, which streaminfer keeps inside its "
                               "host interpreter",
                               core_graph_output_name(m->g, o));
                break;
            }
            int64_t n = core_shape_count(&v->shape);
            int32_t *words = malloc((size_t)(n ? n : 1) * 4);
            if (!words) {
                st = base_fail(err, SI_ERR_NOMEM, "out of memory");
                break;
            }
            memcpy(words, v->data, (size_t)n * 4);
            st = set_output(&m->outs[o], v->dtype, &v->shape, words, err);
            continue;
        }
        const core_tensor *ct = &p->tensors[t];
        void *home = output_in_pool(m, t);
        if (home) {
            m->outs[o] = (out_tensor){ct->dtype, ct->shape, home, 1};
            continue;
        }
        int64_t n = core_shape_count(&ct->shape);
        int32_t *words = malloc((size_t)(n ? n : 1) * 4);
        if (!words) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
            break;
        }
        st = rt_tensor_value(m, t, words, err);
        if (st != SI_OK) {
            free(words);
            break;
        }
        st = set_output(&m->outs[o], ct->dtype, &ct->shape, words, err);
    }
    core_valmap_free(vm);
    return st;
}

/* The run's figures beside the traffic and times the run counted. */
static void fill_stats(si_model *m)
{
    if (m->plan) {
        m->st.budget_bytes = m->opt.vram_budget;
        /* later stages added theirs: the peak and bound are the largest of all */
        if (m->be->holds_vram && m->plan->arena_bytes > m->st.peak_vram_bytes)
            m->st.peak_vram_bytes = m->plan->arena_bytes;
        if (m->plan->lower_bound > m->st.lower_bound_bytes)
            m->st.lower_bound_bytes = m->plan->lower_bound;
        m->st.untiled_bound_bytes = m->untiled_bound;
        m->st.tile_limit_bytes = m->tile_limit;
        m->st.tile_limit_max_bytes = m->tile_limit_max;
        m->st.driver_reserve_bytes = m->reserve;
        for (int i = 0; i < m->n_stages; i++) /* the largest share any stage left */
            if (m->stages[i]->reserve > m->st.driver_reserve_bytes)
                m->st.driver_reserve_bytes = m->stages[i]->reserve;
        m->st.steps_split = (uint64_t)m->n_split;
        m->st.f16_tensors = m->st.f32_tensors = 0;
        core_program_count_half(m->prog, &m->st.f16_tensors, &m->st.f32_tensors);
        for (int i = 0; i < m->n_stages; i++)
            if (m->stages[i]->prog)
                core_program_count_half(m->stages[i]->prog, &m->st.f16_tensors, &m->st.f32_tensors);
        m->st.dynamic_part = m->prog && m->prog->has_dynamic;
        m->st.max_buffer_bytes = m->max_tensor;
        m->st.storage_block_bytes = m->limits.storage_block_bytes;
        m->st.max_dispatch_elements = m->limits.dispatch_elements;
        m->st.max_index_elements = m->limits.index_elements;
        for (int b = 0; b < m->pb.n_buffers; b++)
            if (m->pb.buffers[b].bytes > m->st.largest_buffer_bytes)
                m->st.largest_buffer_bytes = m->pb.buffers[b].bytes;
        m->st.gpu_steps += (uint64_t)m->prog->n_steps;
        m->st.segments += m->plan->segments;
        m->st.evictions += m->plan->evictions;
    }
    m->st.weights_bytes = m->io->weights_bytes;
    m->st.host_pool_bytes = m->home_bytes;
    for (int i = 0; i < m->n_stages; i++)
        m->st.host_pool_bytes += m->stages[i]->home_bytes;
    m->st.host_budget_bytes = m->opt.host_mem_budget;
    m->st.host_pool_mapped = m->home_buf != 0;
    m->st.plan_from_cache = (uint64_t)m->plan_from_cache;
    if (m->be == &rt_backend_gpu)
        glk_program_counts(m->gpu, &m->st.programs_from_cache, &m->st.programs_compiled);
    m->st.rss_peak_bytes = rt_proc_bytes("VmHWM:");
}

static si_result run_locked(si_model *m, const si_tensor_in *inputs, int n_inputs, si_error *err)
{
    si_error dummy;
    if (!err)
        err = &dummy;
    err->status = SI_OK;
    err->message[0] = 0;
    if (!m || (n_inputs > 0 && !inputs))
        return base_fail(err, SI_ERR_ARG, "si_run: model and inputs are required");
    m->cancelled = 0;
    double t0 = rt_now_ms();
    int ni = core_graph_n_inputs(m->g);
    rt_free_run(m);
    si_stats keep = {.open_ms = m->st.open_ms, .open_read_ms = m->st.open_read_ms,
                     .open_gpu_ms = m->st.open_gpu_ms, .open_plan_ms = m->st.open_plan_ms,
                     .open_tile_ms = m->st.open_tile_ms, .open_compile_ms = m->st.open_compile_ms,
                     .rss_baseline_bytes = m->st.rss_baseline_bytes};
    m->st = keep;
    core_shape *shapes = calloc((size_t)ni + 1, sizeof *shapes);
    const si_tensor_in **given = calloc((size_t)ni + 1, sizeof *given);
    m->in_dev = calloc((size_t)ni + 1, sizeof *m->in_dev);
    m->in_copy = calloc((size_t)ni + 1, 1);
    si_result st = SI_OK;
    if (!shapes || !given || !m->in_dev || !m->in_copy) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = match_inputs(m, inputs, n_inputs, shapes, given, err)) != SI_OK)
        goto done;
    for (int i = 0; i < ni; i++)
        if (given[i] && (st = to_dev(m, i, given[i], core_shape_count(&shapes[i]), err)) != SI_OK)
            goto done;
    m->rebuilt = 0;
    st = rt_build_program(m, shapes, m->in_dev, err);
    if (m->rebuilt) { /* new input sizes: planned in this run */
        m->st.run_plan_ms = m->build_plan_ms;
        m->st.run_tile_ms = m->build_tile_ms;
        if (st == SI_OK && !m->plan_only && m->be->prepare && !m->opt.defer_compile) {
            double t_compile = rt_now_ms();
            st = m->be->prepare(m, err);
            m->st.run_compile_ms = rt_now_ms() - t_compile;
        }
    }
    if (st != SI_OK || m->plan_only)
        goto done;
    rt_make_room(m, m);
    if ((st = rt_run_plan(m, err)) == SI_OK)
        st = collect_outputs(m, err);
done:
    free(shapes);
    free(given);
    free_inputs(m); /* the caller's data is the caller's again */
    fill_stats(m);
    m->st.run_ms = rt_now_ms() - t0;
    if (st != SI_OK)
        rt_free_run(m);
    return st;
}

si_result si_run(si_model *m, const si_tensor_in *inputs, int n_inputs, si_error *err)
{
    if (!m)
        return base_fail(err, SI_ERR_ARG, "si_run: no model");
    api_call call;
    si_result st = api_enter(&call, m, err);
    if (st != SI_OK)
        return st;
    st = run_locked(m, inputs, n_inputs, err);
    if (m->ctx)
        rt_ctx_after_run(m);
    api_leave(&call);
    return st;
}

si_result si_plan(si_model *m, const si_tensor_in *inputs, int n_inputs, si_error *err)
{
    if (!m)
        return base_fail(err, SI_ERR_ARG, "si_plan: no model");
    api_call call;
    si_result st = api_enter(&call, m, err);
    if (st != SI_OK)
        return st;
    m->plan_only = 1;
    st = run_locked(m, inputs, n_inputs, err);
    m->plan_only = 0;
    rt_free_run(m);
    api_leave(&call);
    return st;
}

si_result si_print_plan(const si_model *m, FILE *f, si_error *err)
{
    if (!m)
        return base_fail(err, SI_ERR_ARG, "si_print_plan: no model");
    api_call call;
    si_result st = api_enter(&call, m, err);
    if (st != SI_OK)
        return st;
    st = si_report_plan(m, f, err);
    api_leave(&call);
    return st;
}

si_result si_output(const si_model *m, int i, si_dtype *dtype, int *rank,
                    int64_t shape[SI_MAX_RANK], const void **data, si_error *err)
{
    if (!m)
        return base_fail(err, SI_ERR_ARG, "si_output: no model");
    si_model *mm = (si_model *)m; /* its lock only */
    if (m->has_lock)
        pthread_mutex_lock(mm->lockp);
    si_result st = output_locked(m, i, dtype, rank, shape, data, err);
    if (m->has_lock)
        pthread_mutex_unlock(mm->lockp);
    return st;
}

static si_result output_locked(const si_model *m, int i, si_dtype *dtype, int *rank,
                               int64_t shape[SI_MAX_RANK], const void **data, si_error *err)
{
    if (i < 0 || i >= m->n_out)
        return base_fail(err, SI_ERR_ARG, "no output %d (run the model first)", i);
    const out_tensor *o = &m->outs[i];
    if (dtype)
        *dtype = o->dtype;
    if (rank)
        *rank = o->shape.rank;
    if (shape)
        for (int d = 0; d < o->shape.rank; d++)
            shape[d] = o->shape.d[d];
    if (data)
        *data = o->data;
    return SI_OK;
}

void si_get_stats(const si_model *m, si_stats *st)
{
    si_model *mm = (si_model *)m; /* its lock only */
    if (m->has_lock)
        pthread_mutex_lock(mm->lockp);
    *st = m->st;
    if (m->has_lock)
        pthread_mutex_unlock(mm->lockp);
}

/* The stats without the lock: for si_report_plan, called under it. */
const si_stats *si_model_stats(const si_model *m) { return &m->st; }

const pg_plan *si_model_plan(const si_model *m) { return m->plan; }
const core_program *si_model_program(const si_model *m) { return m->prog; }
const char *si_model_renderer(const si_model *m) { return m->be->renderer(m); }
uint64_t si_model_driver_reserve(const si_model *m) { return m->reserve; }
const pg_problem *si_model_problem(const si_model *m) { return &m->pb; }
const char *si_model_node_name(const si_model *m, int node)
{
    return node >= 0 && node < m->io->n_nodes ? m->io->nodes[node].name : "?";
}
