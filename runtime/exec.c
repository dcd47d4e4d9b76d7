/* The executor: walks a plan's actions (uploads, reloads, steps, spills,
 * downloads) through the model's backend (rt_backend: GPU or host), counts the
 * traffic, records the trace, and reads values back after a run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "session_internal.h"

/* Reads every weight the plan uploads straight into its home, all reads queued
 * at once so io_uring can overlap them; later uploads copy from there. */
static si_result read_weights(si_model *m, si_error *err)
{
    /* Reads are waited for every WEIGHTS_STEP bytes so that progress (KiB
     * done of KiB in all) can say how far it is and how fast it goes; the
     * bytes that land are the same. */
    enum { WEIGHTS_STEP = 32 << 20 };
    uint64_t total = 0, done = 0, since = 0;
    for (int b = 0; b < m->pb.n_buffers; b++)
        if (m->prog->tensors[m->pb.buffers[b].tensor].kind == PT_WEIGHT && m->home_off[b] != UINT64_MAX)
            total += m->pb.buffers[b].bytes;
    double t0 = rt_now_ms();
    rt_progress(m, "weights", 0, (int)(total >> 10) + 1);
    si_result st = rt_check_cancel(m, err);
    for (int b = 0; b < m->pb.n_buffers && st == SI_OK; b++) {
        const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
        if (t->kind != PT_WEIGHT || m->home_off[b] == UINT64_MAX || (t->half && !t->quant))
            continue;
        uint8_t *dst = m->home + m->home_off[b];
        memset(dst, 0, pg_home_bytes(&m->pb.buffers[b])); /* the padding to 4 bytes */
        st = io_reader_submit(m->rd, t->weight, dst, err);
        m->st.file_bytes_read += m->io->weights[t->weight].nbytes;
        done += m->pb.buffers[b].bytes;
        if (st == SI_OK && (since += m->pb.buffers[b].bytes) >= WEIGHTS_STEP) {
            since = 0;
            st = io_reader_wait(m->rd, err);
            rt_progress(m, "weights", (int)(done >> 10), (int)(total >> 10) + 1);
            if (st == SI_OK)
                st = rt_check_cancel(m, err);
        }
    }
    si_result w = io_reader_wait(m->rd, err);
    /* weights stored as halves (si_options.precision f16): read, then rounded */
    for (int b = 0; b < m->pb.n_buffers && st == SI_OK && w == SI_OK; b++) {
        const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
        if (t->kind != PT_WEIGHT || m->home_off[b] == UINT64_MAX || !t->half || t->quant)
            continue;
        int64_t n = core_shape_count(&t->shape);
        float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
        st = v ? rt_load_weight(m, t->weight, v, err) : base_fail(err, SI_ERR_NOMEM, "out of memory");
        if (st == SI_OK)
            rt_store_halves(m->home + m->home_off[b], v, n);
        free(v);
        m->st.file_bytes_read += m->io->weights[t->weight].nbytes;
    }
    m->st.file_ms += rt_now_ms() - t0;
    if (st == SI_OK && w == SI_OK) {
        rt_progress(m, "weights", (int)(total >> 10) + 1, (int)(total >> 10) + 1);
        st = rt_check_cancel(m, err);
    }
    return st != SI_OK ? st : w;
}

/* Executes one action of the plan (a: its index in the run; -1 the prologue). */
static si_result do_action(si_model *m, const pg_action *ac, int a, si_error *err)
{
    const core_program *p = m->prog;
    const pg_buffer *pbuf = ac->buf >= 0 ? &m->pb.buffers[ac->buf] : NULL;
    si_result st = SI_OK;
    double t0 = rt_now_ms();
    switch (ac->kind) {
    case PA_ALLOC:
        m->off[ac->buf] = ac->offset;
        return SI_OK;
    case PA_FREE:
        return SI_OK;
    case PA_UPLOAD:
    case PA_RELOAD:
        st = rt_host_move(m, ac, a, err);
        if (st == SI_OK)
            st = m->be->throttle(m, pbuf->bytes, err);
        m->st.bytes_uploaded += pg_home_bytes(pbuf); /* a quantized weight's stored bytes */
        if (ac->kind == PA_RELOAD)
            m->st.bytes_reloaded += pbuf->bytes;
        m->st.upload_ms += rt_now_ms() - t0;
        return st;
    case PA_SPILL:
    case PA_DOWNLOAD:
        st = rt_host_move(m, ac, a, err);
        if (st == SI_OK)
            st = m->be->throttle(m, pbuf->bytes, err);
        m->st.bytes_downloaded += pbuf->bytes;
        if (ac->kind == PA_SPILL)
            m->st.bytes_spilled += pbuf->bytes;
        m->st.stall_ms += rt_now_ms() - t0;
        return st;
    case PA_RUN:
        st = m->be->run_step(m, ac->step, err);
        m->st.issue_ms += rt_now_ms() - t0;
        if (st == SI_OK)
            st = m->be->throttle(m, 0, err);
        if (st == SI_OK && m->opt.check_steps > 0 && m->be->check_step)
            m->be->check_step(m, ac->step);
        if (st != SI_OK && err->message[0]) {
            char msg[sizeof err->message];
            snprintf(msg, sizeof msg, "%s", err->message);
            base_fail(err, st, "step %d (%s, node '%s'): %s", ac->step,
                 ck_kind_name(p->steps[ac->step].kind), m->io->nodes[p->steps[ac->step].node].name,
                 msg);
        }
        m->st.compute_ms += rt_now_ms() - t0;
        rt_progress(m, "run", ac->step + 1, p->n_steps);
        return st == SI_OK ? rt_check_cancel(m, err) : st;
    }
    return SI_OK;
}

/* The trace's event for action ac, which began at ta (ms; run0: the run's start). */
static void trace_action(si_model *m, const pg_action *ac, double run0, double ta)
{
    const core_program *p = m->prog;
    const pg_plan *pl = m->plan;
    double tb = rt_now_ms();
    uint64_t sz = ac->buf >= 0 ? pg_size(pl, m->pb.buffers[ac->buf].bytes) : 0;
    int track = 0;
    const char *name = "", *detail = "";
    switch (ac->kind) {
    case PA_ALLOC: m->in_use += sz; break;
    case PA_FREE: m->in_use -= sz; break;
    case PA_RUN:
        track = 1;
        name = ck_kind_name(p->steps[ac->step].kind);
        detail = m->io->nodes[p->steps[ac->step].node].name;
        break;
    case PA_UPLOAD:
    case PA_RELOAD:
        track = 2;
        name = ac->kind == PA_UPLOAD ? "upload" : "reload";
        detail = p->tensors[m->pb.buffers[ac->buf].tensor].name;
        break;
    case PA_SPILL:
    case PA_DOWNLOAD:
        track = 3;
        name = ac->kind == PA_SPILL ? "spill" : "download";
        detail = p->tensors[m->pb.buffers[ac->buf].tensor].name;
        break;
    }
    trace_add(&m->trace, track, name, detail, (ta - run0) * 1e3, (tb - run0) * 1e3, m->in_use);
}

/* The GPU's timestamps of the run (glk_timing) as events on the trace's GPU
 * tracks, each named by the action whose commands it timed (gpu0: the GPU's
 * clock when the run began). */
static void trace_gpu(si_model *m, int64_t gpu0)
{
    glk_stamp *v = NULL;
    int n = 0, disjoint = 0;
    if (glk_stamps(m->gpu, &v, &n, &disjoint) || disjoint) {
        trace_add_gpu(&m->trace, TRACE_GPU_KERNELS,
                      disjoint ? "the GPU's clock jumped: no GPU times" : "out of memory: no GPU times",
                      "", 0, 0, 0, 0, 0);
        free(v);
        return;
    }
    const pg_plan *pl = m->plan;
    const core_program *p = m->prog;
    for (int i = 0; i < n; i++) {
        const char *name = v[i].copy ? "copy" : "dispatch", *detail = "";
        double flops = 0;
        if (v[i].tag >= 0 && v[i].tag < pl->n_actions) {
            const pg_action *ac = &pl->actions[v[i].tag];
            if (ac->kind == PA_RUN) {
                name = ck_kind_name(p->steps[ac->step].kind);
                detail = m->io->nodes[p->steps[ac->step].node].name;
                flops = v[i].copy ? 0 : rt_step_flops(&p->steps[ac->step]);
            } else if (ac->buf >= 0) {
                name = ac->kind == PA_UPLOAD ? "upload" : ac->kind == PA_RELOAD ? "reload"
                     : ac->kind == PA_SPILL ? "spill" : ac->kind == PA_DOWNLOAD ? "download" : name;
                detail = p->tensors[m->pb.buffers[ac->buf].tensor].name;
            }
        }
        trace_add_gpu(&m->trace, v[i].copy ? TRACE_GPU_COPIES : TRACE_GPU_KERNELS, name, detail,
                      (double)((int64_t)v[i].t0 - gpu0) / 1e3, (double)((int64_t)v[i].t1 - gpu0) / 1e3,
                      flops, v[i].copy ? v[i].ranges : 0, v[i].bytes);
    }
    free(v);
}

/* Is the load at action a one the next step does without (a prefetch of a
 * later step's)? Then, where loads overlap dispatches, it is held back and
 * queued after what the next step waits for, so it runs beside that step. */
static int held_back(const si_model *m, const pg_plan *pl, int a)
{
    const pg_action *ac = &pl->actions[a];
    if (ac->kind != PA_UPLOAD && ac->kind != PA_RELOAD)
        return 0;
    for (int n = a + 1; n < pl->n_actions; n++) {
        const pg_action *r = &pl->actions[n];
        if (r->kind != PA_RUN)
            continue;
        for (int k = m->pb.step_start[r->step]; k < m->pb.step_start[r->step + 1]; k++)
            if (m->pb.step_bufs[k] == ac->buf)
                return 0;
        return 1;
    }
    return 0; /* loads after the last step (the next run's resident set) */
}

/* Runs the current program's plan: inputs into their homes, weights read once,
 * the prologue where the resident set is not resident, then every action. */
si_result rt_run_plan(si_model *m, si_error *err)
{
    si_result st = SI_OK;
    if ((st = m->be->arena_ensure(m, err)) != SI_OK)
        return st;
    /* the peak: the arenas held together (a model's stages keep theirs while
     * they fit the budget together) */
    si_model *root = m->parent ? m->parent : m;
    if (m->be->holds_vram && rt_arenas_held(root) > root->st.peak_vram_bytes)
        root->st.peak_vram_bytes = rt_arenas_held(root);
    if (root->ctx)
        rt_ctx_note_peak(root->ctx);
    const pg_plan *pl = m->plan;
    for (int b = 0; b < m->pb.n_buffers; b++) {
        const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
        if (t->kind != PT_INPUT || m->home_off[b] == UINT64_MAX)
            continue;
        if (t->half) /* si_options.precision f16: the halves nearest its floats */
            rt_store_halves(m->home + m->home_off[b], rt_input_data(m, t), core_shape_count(&t->shape));
        else
            /* by several threads, past the CPU's caches: the GPU reads it next
             * (bench/results/speed-h200.md, session 34) */
            base_copy(m->home + m->home_off[b], rt_input_data(m, t), t->bytes, 1);
    }
    if (!m->weights_read) {
        if ((st = read_weights(m, err)) != SI_OK)
            return st;
        m->weights_read = 1;
    }
    if (!m->resident) {
        for (int a = 0; a < pl->n_prologue && st == SI_OK; a++)
            st = do_action(m, &pl->prologue[a], -1, err);
        if (st != SI_OK)
            return st;
        m->resident = 1;
    }
    trace_reset(&m->trace);
    if (m->be == &rt_backend_gpu) /* a failed run's, never read */
        glk_half_overflows(m->gpu);
    /* A trace on a GPU with timer queries times each command on the GPU and
     * waits for nothing, so the run goes as untraced (loads beside steps
     * included); without them, each action is waited for, so that its
     * event's duration is its own. */
    int gpu_times = m->opt.trace_path && m->be == &rt_backend_gpu && glk_timing(m->gpu, 1);
    int64_t gpu0 = gpu_times ? glk_gpu_now(m->gpu) : 0;
    double run0 = rt_now_ms();
    m->in_use = pl->resident_bytes;
    /* loads held back for the next step's dispatch (held_back) */
    enum { HELD = 64 };
    int held[HELD], n_held = 0;
    int overlap = m->be->copies_overlap && m->be->copies_overlap(m) && (!m->opt.trace_path || gpu_times);
    for (int a = 0; a < pl->n_actions && st == SI_OK; a++) {
        const pg_action *ac = &pl->actions[a];
        if (overlap && n_held < HELD && held_back(m, pl, a)) {
            held[n_held++] = a;
            continue;
        }
        if (ac->kind == PA_RUN && n_held) {
            m->be->sync_step(m, ac->step);
            for (int h = 0; h < n_held && st == SI_OK; h++) {
                double ta = rt_now_ms();
                if (gpu_times)
                    glk_set_tag(m->gpu, held[h]);
                st = do_action(m, &pl->actions[held[h]], held[h], err);
                if (st == SI_OK && m->opt.trace_path)
                    trace_action(m, &pl->actions[held[h]], run0, ta);
            }
            n_held = 0;
            if (st != SI_OK)
                break;
        }
        double ta = rt_now_ms();
        if (gpu_times)
            glk_set_tag(m->gpu, a);
        st = do_action(m, ac, a, err);
        if (!m->opt.trace_path || st != SI_OK)
            continue;
        if (!gpu_times) /* wait for the GPU so each event's duration is its own */
            st = m->be->finish(m, err);
        trace_action(m, ac, run0, ta);
    }
    if (st != SI_OK) {
        /* stopped between actions (cancelled, or a GPU command failed): what
         * should be resident may not be, so the next run starts afresh */
        m->be->arena_release(m);
        m->resident = 0;
    }
    if (st == SI_OK) {
        double tf = rt_now_ms();
        st = m->be->finish(m, err);
        m->st.compute_ms += rt_now_ms() - tf;
    }
    if (gpu_times) {
        if (st == SI_OK) /* a failed run's stamps are not read: timing on again forgets them */
            trace_gpu(m, gpu0);
        glk_set_tag(m->gpu, -1);
        glk_timing(m->gpu, 0);
    }
    if (st == SI_OK && m->opt.trace_path && trace_write(&m->trace, m->opt.trace_path))
        st = base_fail(err, SI_ERR_IO, "%s: cannot write the trace", m->opt.trace_path);
    if (st == SI_OK && m->be == &rt_backend_gpu)
        m->st.f16_overflows += glk_half_overflows(m->gpu);
    return st;
}

/* A program tensor's value after a run, 4 bytes an element, into words. */
si_result rt_tensor_value(si_model *m, int t, int32_t *words, si_error *err)
{
    const core_program *p = m->prog;
    int r = core_storage(p, t);
    const core_tensor *ct = &p->tensors[t], *rt = &p->tensors[r];
    size_t bytes = (size_t)core_shape_count(&ct->shape) * 4;
    int banded = 0;
    for (int i = 0; i < p->n_out_bands; i++) {
        const struct core_band *bd = &p->out_bands[i];
        int b = bd->root == r ? m->buf_of[bd->tensor] : -1;
        if (bd->root != r)
            continue;
        if (b < 0)
            return base_fail(err, SI_ERR_ARG, "internal: a band of %s was never brought back", ct->name);
        si_result st = rt_host_read_back(m, b, words + bd->e0, (uint64_t)(bd->e1 - bd->e0) * 4, err);
        if (st != SI_OK)
            return st;
        banded = 1;
    }
    if (banded)
        return SI_OK;
    if (m->buf_of[r] >= 0 && rt->kind == PT_ACT) {
        /* downloaded at the end of the run, or spilled after its last write */
        si_result st = rt_host_read_back(m, m->buf_of[r], words, bytes, err);
        if (st != SI_OK)
            return st;
    } else if (rt->kind == PT_CONST || (rt->kind == PT_ACT && rt->host)) {
        memcpy(words, rt->host, bytes);
    } else if (rt->kind == PT_INPUT) {
        memcpy(words, rt_input_data(m, rt), bytes);
    } else if (rt->kind == PT_WEIGHT) {
        return rt_load_weight(m, rt->weight, words, err);
    } else {
        return base_fail(err, SI_ERR_ARG, "internal: %s has no value", ct->name);
    }
    return SI_OK;
}

/* Program tensor t's value into vm as graph tensor (node, idx). */
si_result rt_put_value(si_model *m, int t, core_valmap *vm, int node, int idx, si_error *err)
{
    const core_tensor *ct = &m->prog->tensors[t];
    int64_t n = core_shape_count(&ct->shape);
    int32_t *words = malloc((size_t)(n ? n : 1) * 4);
    if (!words)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    si_result st = rt_tensor_value(m, t, words, err);
    if (st == SI_OK) {
        core_buf v = {ct->dtype, ct->shape, words};
        if ((st = core_valmap_adopt(vm, node, idx, &v, err)) == SI_OK)
            return st; /* the map's now */
    }
    free(words);
    return st;
}
