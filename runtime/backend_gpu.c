/* The backend on a GL context: the arena is one GL buffer, the host pool a
 * persistently mapped GL buffer where the driver has GL_EXT_buffer_storage
 * (else host memory), steps are glkernels dispatches; host-only steps run on
 * the host with their inputs read back and their output sent up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "session_internal.h"

static const char *gpu_renderer(const si_model *m) { return glk_renderer(m->gpu); }
static uint32_t gpu_offset_align(const si_model *m) { return glk_offset_align(m->gpu); }

/* The one GPU allocation: the arena the plan asks for, made before a run.
 * The stages of a model run in turns, each with its own plan: only the one
 * running holds its arena (the budget is for all of them together). The
 * arena a stage gave up for this turn (the root's spare) is taken where it is
 * large enough, else deleted before another is made. */
static si_result gpu_arena_ensure(si_model *m, si_error *err)
{
    if (m->arena)
        return SI_OK;
    si_model *root = m->parent ? m->parent : m;
    if (root->ctx && rt_ctx_one_arena(root->ctx)) /* a range of the context's one buffer */
        return rt_ctx_arena_take(root->ctx, m, err);
    m->arena_base = 0;
    uint64_t need = m->plan->arena_bytes;
    if (root->spare_arena && root->spare_cap >= need) {
        m->arena = root->spare_arena;
        m->arena_cap = root->spare_cap;
        root->spare_arena = 0;
        root->spare_cap = 0;
        return SI_OK;
    }
    if (root->spare_arena)
        glk_buffer_destroy(m->gpu, root->spare_arena);
    root->spare_arena = 0;
    root->spare_cap = 0;
    m->arena_cap = need;
    root->arena_made += need;
    if (need > root->arena_largest)
        root->arena_largest = need;
    return glk_buffer_create(m->gpu, need, &m->arena, err);
}

static void gpu_arena_free(si_model *m)
{
    if (m->arena && !m->arena_shared) /* a range of the context's goes back to it */
        glk_buffer_destroy(m->gpu, m->arena);
    if (!m->parent && m->spare_arena) /* the root's program goes: its stages are gone */
        glk_buffer_destroy(m->gpu, m->spare_arena);
    if (!m->parent)
        m->spare_arena = 0, m->spare_cap = 0;
    m->arena = 0;
    m->arena_base = 0;
    m->arena_shared = 0;
    m->arena_cap = 0;
}

/* Between turns: the arena of a buffer of its own is kept as the root's spare
 * for the stage that runs next (the larger where there is one already). */
static void gpu_arena_release(si_model *m)
{
    if (!m->arena)
        return;
    si_model *root = m->parent ? m->parent : m;
    if (!m->arena_shared) {
        uint32_t give = m->arena;
        uint64_t cap = m->arena_cap;
        if (root->spare_arena && root->spare_cap >= cap) {
            glk_buffer_destroy(m->gpu, give);
        } else {
            if (root->spare_arena)
                glk_buffer_destroy(m->gpu, root->spare_arena);
            root->spare_arena = give;
            root->spare_cap = cap;
        }
    }
    m->arena = 0; /* (a range of the context's goes back to it) */
    m->arena_base = 0;
    m->arena_shared = 0;
    m->arena_cap = 0;
    m->resident = 0; /* what stayed between runs is gone */
}

/* The pool mapped for the GPU, else (no GL_EXT_buffer_storage) host memory;
 * a GPU that fails to make it (out of memory, lost) fails the call. */
static si_result gpu_pool_create(si_model *m, uint64_t bytes, si_error *err)
{
    si_result st = glk_host_pool_create(m->gpu, bytes, &m->home_buf, (void **)&m->home, err);
    if (st != SI_ERR_UNSUPPORTED)
        return st;
    *err = (si_error){0};
    m->home_buf = 0;
    if (!(m->home = malloc(bytes ? bytes : 16)))
        return base_fail(err, SI_ERR_NOMEM, "out of memory for the host pool");
    return SI_OK;
}

static void gpu_pool_free(si_model *m)
{
    if (m->home_buf)
        glk_host_pool_destroy(m->gpu, m->home_buf);
    else
        free(m->home);
    m->home_buf = 0;
}

/* Where buffer b is for a step: its place in the arena. */
static glk_range buf_range(const si_model *m, int b)
{
    return (glk_range){m->arena, m->arena_base + m->off[b], m->pb.buffers[b].bytes};
}

/* Buffer b's bytes read back, from wherever buf_range says it is. */
static si_result read_buf(si_model *m, int b, void *dst, si_error *err)
{
    glk_range r = buf_range(m, b);
    return glk_download(m->gpu, r.buf, r.offset, dst, r.bytes, err);
}

/* Loads from the mapped pool, and spills into it, as transfer kernels (si_options.copy_kernels):
 * by default on a GPU, not on a CPU device (where glCopyBufferSubData is a
 * memcpy and nothing runs beside it). */
static int gpu_copies_overlap(const si_model *m)
{
    if (!m->home_buf || m->opt.copy_kernels < 0)
        return 0;
    return m->opt.copy_kernels > 0 || !glk_software(m->gpu);
}

/* A quantized weight's load (core_tensor.quant): its stored bytes at `from`
 * in the pool, dequantized into its place in the arena by the transfer kernel
 * (glk_dequant_words), at every budget, so its values are the same bits
 * wherever it is loaded. Without a mapped pool (no GL_EXT_buffer_storage: no
 * driver this was tested on; the pool is host memory, every load an upload)
 * they are dequantized on the host as TensorFlow.js does, at every budget
 * too, and uploaded: no GPU memory past the plan's. */
static si_result gpu_dequant_load(si_model *m, int b, uint64_t from, si_error *err)
{
    const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
    uint64_t off = m->arena_base + m->off[b];
    int64_t n = core_shape_count(&t->shape);
    if (m->home_buf)
        return glk_dequant_words(m->gpu, m->home_buf, from, m->arena, off, n, t->quant, t->q_scale, t->q_min,
                                 t->half, err);
    void *v = malloc((size_t)(n ? n : 1) * 4);
    if (!v)
        return base_fail(err, SI_ERR_NOMEM, "out of memory dequantizing %s", t->name ? t->name : "a weight");
    rt_dequant_weight(m, b, m->home + from, v);
    si_result st = glk_upload(m->gpu, m->arena, off, v, m->pb.buffers[b].bytes, err); /* copied at the call */
    free(v);
    return st;
}

static int quantized(const si_model *m, int b) { return m->prog->tensors[m->pb.buffers[b].tensor].quant != 0; }

/* Moves a buffer between its home and its place in the arena: a GPU-side copy
 * from the mapped pool, else an upload or a download. */
static si_result gpu_transfer(si_model *m, int b, int to_arena, si_error *err)
{
    uint64_t bytes = m->pb.buffers[b].bytes, home = m->home_off[b], off = m->arena_base + m->off[b];
    if (home == UINT64_MAX)
        return base_fail(err, SI_ERR_ARG, "internal: buffer %d has no host copy", b);
    if (!to_arena && m->in_place_buf && m->in_place_buf[b])
        return SI_OK; /* its kernel wrote its home */
    if (to_arena && quantized(m, b))
        return gpu_dequant_load(m, b, home, err);
    /* an input the CPU has just written goes by the copy engine: a kernel
     * reading it took 0.1-0.8 ms more a run on the H200 (the lines still in
     * the CPU's cache, it seems) */
    if (to_arena && gpu_copies_overlap(m) && m->prog->tensors[m->pb.buffers[b].tensor].kind != PT_INPUT)
        return glk_copy_words(m->gpu, m->home_buf, home, m->arena, off, bytes, err);
    /* a spill no one on the host reads (not an output, a band of one or a
     * stage's boundary): only a later reload (a kernel too) reads it back */
    if (!to_arena && gpu_copies_overlap(m) && !m->pb.buffers[b].is_output)
        return glk_copy_words(m->gpu, m->arena, off, m->home_buf, home, bytes, err);
    if (m->home_buf)
        return to_arena ? glk_copy(m->gpu, m->home_buf, home, m->arena, off, bytes, err)
                        : glk_copy(m->gpu, m->arena, off, m->home_buf, home, bytes, err);
    return to_arena ? glk_upload(m->gpu, m->arena, off, m->home + home, bytes, err)
                    : glk_download(m->gpu, m->arena, off, m->home + home, bytes, err);
}

/* glBufferSubData and the read back copy p at the call, so p is free after it */
static si_result gpu_transfer_ptr(si_model *m, int b, uint64_t at, uint64_t bytes, void *p, int to_arena,
                                  si_error *err)
{
    uint64_t off = m->arena_base + m->off[b] + at;
    return to_arena ? glk_upload(m->gpu, m->arena, off, p, bytes, err)
                    : glk_download(m->gpu, m->arena, off, p, bytes, err);
}

static si_result gpu_transfer_pool(si_model *m, int b, uint64_t at, uint64_t bytes, uint64_t pool_off,
                                   int to_arena, void **fence, si_error *err)
{
    uint64_t off = m->arena_base + m->off[b] + at;
    si_result st;
    if (to_arena && quantized(m, b)) /* a weight's stored bytes in its staging slot */
        st = gpu_dequant_load(m, b, pool_off, err);
    else if (!m->home_buf) /* plain memory: copied at the call */
        return gpu_transfer_ptr(m, b, at, bytes, m->home + pool_off, to_arena, err);
    else
        st = to_arena ? glk_copy(m->gpu, m->home_buf, pool_off, m->arena, off, bytes, err)
                      : glk_copy(m->gpu, m->arena, off, m->home_buf, pool_off, bytes, err);
    if (st == SI_OK)
        st = glk_fence(m->gpu, fence, err);
    if (st == SI_OK && !to_arena)
        st = glk_fence_wait(m->gpu, fence, err);
    return st;
}

static si_result gpu_fence_wait(si_model *m, void **fence, si_error *err)
{
    return glk_fence_wait(m->gpu, fence, err);
}

/* Steps no kernel runs here: host-only kinds, and loops longer than the
 * driver lets one dispatch run. */
static int on_host(const si_model *m, const ck_step *st)
{
    return ck_runs_on_host(st->kind) || ck_loop_iterations(st) > glk_max_loop_iterations(m->gpu);
}

/* Outputs written in place: where one GPU step writes a model output whole
 * and no step reads it after, and the output has its home in the mapped pool
 * (at the device's binding alignment), the step's kernel writes that home
 * instead of the output's slot in the arena, and the copy home after it
 * (the plan's spill or download of the buffer) is left out: the bytes cross
 * to the host as the kernel makes them, beside its work, not in a copy after
 * it (efficientpose's 8.7 MB of outputs took 0.18 ms of GPU copies a run on
 * the H100, after the last step). The same kernel, the same values: the same
 * bits. Only where si_options.copy_kernels asks for transfer kernels (1, not
 * the default's choice: not measured on a GPU yet, bench/results/s41-call6.sh
 * is the call that would), for an output a host budget keeps in the pool
 * (not in the spill file), and with no step checks (they read the output
 * back from the arena). Worked out once a plan (rt_forget_in_place). */
static si_result in_place_ready(si_model *m, si_error *err)
{
    if (m->in_place)
        return SI_OK;
    const core_program *p = m->prog;
    int ns = p->n_steps, nb = m->pb.n_buffers;
    m->in_place = malloc(((size_t)ns + 1) * sizeof *m->in_place);
    m->in_place_buf = calloc((size_t)nb + 1, 1);
    int *writer = malloc(((size_t)nb + 1) * sizeof *writer); /* the one step writing b, -2: several */
    uint8_t *read = calloc((size_t)nb + 1, 1); /* read by some step: b is then no output alone */
    if (!m->in_place || !m->in_place_buf || !writer || !read) {
        free(writer);
        free(read);
        rt_forget_in_place(m);
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    for (int s = 0; s < ns; s++)
        m->in_place[s] = -1;
    int on = m->home_buf && m->opt.check_steps <= 0 && m->opt.copy_kernels > 0;
    for (int b = 0; b < nb; b++)
        writer[b] = -1;
    for (int s = 0; on && s < ns; s++) {
        const ck_step *st = &p->steps[s];
        for (int i = 0; i < st->n_in; i++)
            if (st->in[i] >= 0 && m->buf_of[core_storage(p, st->in[i])] >= 0)
                read[m->buf_of[core_storage(p, st->in[i])]] = 1;
        int b = m->buf_of[core_storage(p, st->out)];
        if (b >= 0)
            writer[b] = writer[b] == -1 && !st->accumulate ? s : -2;
    }
    uint64_t align = gpu_offset_align(m);
    for (int o = 0; on && o < p->n_outputs; o++) {
        int t = p->outputs[o];
        if (t < 0)
            continue;
        int r = core_storage(p, t), b = m->buf_of[r], s = b >= 0 ? writer[b] : -1;
        const core_tensor *rt = &p->tensors[r];
        int banded = 0;
        for (int i = 0; i < p->n_out_bands; i++)
            banded |= p->out_bands[i].root == r || p->out_bands[i].tensor == r;
        if (s < 0 || banded || read[b] || rt->kind != PT_ACT || rt->half || rt->dtype == SI_BOOL ||
            p->tensors[t].dtype == SI_BOOL || on_host(m, &p->steps[s]) || (p->steps[s].half >> CK_MAX_IN & 1) ||
            (m->tier && m->tier[b] != PG_TIER_POOL) || m->home_off[b] == UINT64_MAX || (align && m->home_off[b] % align))
            continue;
        m->in_place[s] = b;
        m->in_place_buf[b] = 1;
    }
    free(writer);
    free(read);
    return SI_OK;
}

/* A half tensor's n elements, read back two a word, widened in place to
 * float32 (from the last: each float lands at or after the half it is made of). */
static void widen_halves(void *data, int64_t n)
{
    const uint16_t *h = data;
    float *f = data;
    for (int64_t i = n - 1; i >= 0; i--)
        f[i] = io_half_to_float(h[i]);
}

/* Host bytes for tensor t read back: its stored bytes, or float32 for a half one. */
static size_t host_bytes(const si_model *m, int t, int b)
{
    uint64_t n = (uint64_t)core_shape_count(&m->prog->tensors[t].shape) * 4, s = m->pb.buffers[b].bytes;
    return (size_t)(n > s ? n : s) + 4;
}

/* A reduction's wide running sums (ck_reduce_p's carries, and the pairs a
 * split reduction's second step sums) are float-float pairs on the GPU (lane
 * l's pair of element e at floats 2 (cw e + l)) and a double on the host (at
 * double cw e). Pairs an element of step st's input i (i == CK_MAX_IN: its
 * output) in that form, or 0 where it is plain. */
static int64_t carry_lanes(const ck_step *st, int i)
{
    if (st->kind != CK_REDUCE)
        return 0;
    const ck_reduce_p *r = &st->u.reduce;
    int64_t cw = r->lanes ? r->lanes : 1;
    if (i == 0)
        return r->pairs ? 1 : 0;
    if (i == 1)
        return r->has_init && (r->carry & 1) ? cw : 0;
    return i == CK_MAX_IN && (r->carry & 2) ? cw : 0;
}

/* The GPU's pairs in buf (of that many floats) as the host's doubles, in place */
static void pairs_to_host(void *buf, int64_t floats, int64_t cw)
{
    float *f = buf;
    for (int64_t e = 0; e < floats / (2 * cw); e++) {
        double d = 0;
        for (int64_t l = 0; l < cw; l++)
            d += (double)f[2 * (e * cw + l)] + (double)f[2 * (e * cw + l) + 1];
        memcpy(f + 2 * e * cw, &d, sizeof d);
    }
}

/* ... and back: each double as its nearest pair in lane 0, the other lanes 0 */
static void pairs_to_gpu(void *buf, int64_t floats, int64_t cw)
{
    float *f = buf;
    for (int64_t e = 0; e < floats / (2 * cw); e++) {
        double d;
        memcpy(&d, f + 2 * e * cw, sizeof d);
        float hi = (float)d;
        f[2 * e * cw] = hi;
        f[2 * e * cw + 1] = isinf(hi) || isnan(hi) ? 0.f : (float)(d - hi);
        for (int64_t w = 2; w < 2 * cw; w++)
            f[2 * e * cw + w] = 0.f;
    }
}

/* The inputs of step st read back from the arena into host buffers (freed
 * by free_inputs, also after a failure); insp[i] NULL where there is none.
 * From the last: one the step does without, given those after it, stays
 * unread (ck_host_skips_input: CK_TOPK's x when the GPU's answer holds). */
static si_result read_inputs(si_model *m, const ck_step *st, core_buf *ins,
                             const core_buf **insp, si_error *err)
{
    const core_program *p = m->prog;
    si_result rc = SI_OK;
    for (int i = st->n_in - 1; i >= 0 && rc == SI_OK; i--) {
        if (st->in[i] < 0 || ck_host_skips_input(st, i, insp))
            continue;
        const core_tensor *t = &p->tensors[st->in[i]];
        int b = m->buf_of[core_storage(p, st->in[i])];
        ins[i] = (core_buf){t->dtype, t->shape, malloc(host_bytes(m, st->in[i], b))};
        insp[i] = &ins[i];
        rc = ins[i].data ? read_buf(m, b, ins[i].data, err)
                         : base_fail(err, SI_ERR_NOMEM, "out of memory");
        if (rc == SI_OK && p->tensors[core_storage(p, st->in[i])].half)
            widen_halves(ins[i].data, core_shape_count(&t->shape));
        if (rc == SI_OK && carry_lanes(st, i))
            pairs_to_host(ins[i].data, core_shape_count(&t->shape), carry_lanes(st, i));
        m->st.bytes_downloaded += m->pb.buffers[b].bytes;
    }
    return rc;
}

static void free_inputs(const ck_step *st, core_buf *ins, const core_buf **insp)
{
    for (int i = 0; i < st->n_in; i++)
        if (insp[i])
            free(ins[i].data);
}

/* A host step in a GPU plan: its inputs come back, its output goes up. */
static si_result run_host_step_on_gpu_data(si_model *m, const ck_step *st, si_error *err)
{
    const core_program *p = m->prog;
    core_buf ins[CK_MAX_IN];
    const core_buf *insp[CK_MAX_IN] = {0};
    const core_tensor *o = &p->tensors[st->out];
    int ob = m->buf_of[core_storage(p, st->out)];
    core_buf out = {o->dtype, o->shape, malloc(m->pb.buffers[ob].bytes + 4)};
    if (!out.data)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    si_result rc = read_inputs(m, st, ins, insp, err);
    if (rc == SI_OK)
        rc = ck_host_run(st, insp, &out, err);
    if (rc == SI_OK && carry_lanes(st, CK_MAX_IN))
        pairs_to_gpu(out.data, core_shape_count(&o->shape), carry_lanes(st, CK_MAX_IN));
    if (rc == SI_OK) {
        rc = glk_upload(m->gpu, m->arena, m->arena_base + m->off[ob], out.data, m->pb.buffers[ob].bytes, err);
        m->st.bytes_uploaded += m->pb.buffers[ob].bytes;
    }
    free_inputs(st, ins, insp);
    free(out.data);
    return rc;
}

/* The ranges GPU step s reads (r[i], buf 0 where it has no input i) and writes. */
static void step_ranges(const si_model *m, int s, glk_range *r, si_dtype *dts, glk_range *ro)
{
    const core_program *p = m->prog;
    const ck_step *st = &p->steps[s];
    for (int i = 0; i < CK_MAX_IN; i++) {
        r[i] = (glk_range){0, 0, 0};
        dts[i] = SI_FLOAT32;
        if (i >= st->n_in || st->in[i] < 0)
            continue;
        r[i] = buf_range(m, m->buf_of[core_storage(p, st->in[i])]);
        dts[i] = p->tensors[st->in[i]].dtype;
    }
    int ob = m->buf_of[core_storage(p, st->out)];
    *ro = buf_range(m, ob);
    if (m->in_place && m->in_place[s] == ob) /* written in place into its home */
        *ro = (glk_range){m->home_buf, m->home_off[ob], m->pb.buffers[ob].bytes};
    if (p->tensors[core_storage(p, st->out)].half) /* the kernel counts its outputs by it */
        ro->bytes = (uint64_t)core_shape_count(&p->tensors[st->out].shape) * 2;
}

static void gpu_sync_step(si_model *m, int s)
{
    if (on_host(m, &m->prog->steps[s]))
        return; /* its read backs wait for everything before them */
    si_error ignored;
    if (in_place_ready(m, &ignored) != SI_OK)
        return; /* out of memory: the step's run says so */
    glk_range r[CK_MAX_IN], ro;
    si_dtype dts[CK_MAX_IN];
    step_ranges(m, s, r, dts, &ro);
    glk_sync(m->gpu, r, CK_MAX_IN, &ro);
}

static si_result gpu_run_step(si_model *m, int s, si_error *err)
{
    const core_program *p = m->prog;
    const ck_step *st = &p->steps[s];
    if (on_host(m, st))
        return run_host_step_on_gpu_data(m, st, err);
    si_result rc = in_place_ready(m, err);
    if (rc != SI_OK)
        return rc;
    glk_range r[CK_MAX_IN], ro;
    si_dtype dts[CK_MAX_IN];
    step_ranges(m, s, r, dts, &ro);
    if (m->in_place[s] >= 0) {
        glk_client_writes(m->gpu);
        m->st.bytes_out_in_place += m->pb.buffers[m->in_place[s]].bytes;
    }
    return glk_run_step(m->gpu, st, r, dts, &ro, p->tensors[st->out].dtype, err);
}

/* Every program a GPU step of the plan runs, compiled now. */
static si_result gpu_prepare(si_model *m, si_error *err)
{
    const core_program *p = m->prog;
    si_result rc = SI_OK;
    /* handed to the driver all at once, waited for together: it may build
     * them in parallel (glk_begin_compiles) */
    glk_begin_compiles(m->gpu);
    for (int s = 0; s < p->n_steps && rc == SI_OK; s++) {
        const ck_step *st = &p->steps[s];
        if (on_host(m, st))
            continue;
        si_dtype dts[CK_MAX_IN];
        for (int i = 0; i < st->n_in; i++)
            dts[i] = st->in[i] >= 0 ? p->tensors[st->in[i]].dtype : SI_FLOAT32;
        rc = glk_prepare_step(m->gpu, st, dts, p->tensors[st->out].dtype, err);
    }
    si_error ferr = {0};
    si_result frc = glk_finish_compiles(m->gpu, &ferr);
    if (rc == SI_OK && frc != SI_OK) {
        rc = frc;
        if (err)
            *err = ferr;
    }
    return rc;
}

/* si_options.check_steps (SI_CHECK_STEPS) = tolerance: after each GPU step,
 * runs the host reference on the same (downloaded) inputs and reports the step
 * if they differ by more. A debugging aid for kernels; it slows a run a lot. */
static void gpu_check_step(si_model *m, int s)
{
    double tol = m->opt.check_steps;
    if (on_host(m, &m->prog->steps[s]))
        return;
    const core_program *p = m->prog;
    const ck_step *st = &p->steps[s];
    core_buf ins[CK_MAX_IN];
    const core_buf *insp[CK_MAX_IN] = {0};
    si_error err = {0};
    const core_tensor *o = &p->tensors[st->out];
    int ob = m->buf_of[core_storage(p, st->out)];
    uint64_t bytes = host_bytes(m, st->out, ob), down = m->st.bytes_downloaded;
    core_buf gpu = {o->dtype, o->shape, malloc(bytes)}, host = {o->dtype, o->shape, malloc(bytes)};
    si_result rc = gpu.data && host.data ? read_inputs(m, st, ins, insp, &err) : SI_ERR_NOMEM;
    m->st.bytes_downloaded = down; /* a check is not the run's traffic */
    if (rc == SI_OK)
        rc = read_buf(m, ob, gpu.data, &err);
    if (rc == SI_OK && p->tensors[core_storage(p, st->out)].half)
        widen_halves(gpu.data, core_shape_count(&o->shape));
    if (rc != SI_OK) {
        fprintf(stderr, "check: step %d not checked: %s\n", s, rc == SI_ERR_NOMEM ? "out of memory" : err.message);
        free_inputs(st, ins, insp);
        free(gpu.data);
        free(host.data);
        return;
    }
    memcpy(host.data, gpu.data, bytes); /* accumulating copies keep earlier writes */
    ck_host_run(st, insp, &host, &err);
    double worst = 0, scale = 1;
    int64_t n = core_shape_count(&o->shape), at = 0, cw = carry_lanes(st, CK_MAX_IN);
    if (cw) { /* running sums: compared as the host's doubles */
        pairs_to_host(gpu.data, n, cw);
        n /= 2 * cw;
    }
#define CHECK_AT(b, i) (cw ? ((const double *)(b))[(i) * cw] : (double)((const float *)(b))[i])
    for (int64_t i = 0; i < n; i++)
        if (o->dtype == SI_FLOAT32 && fabs(CHECK_AT(host.data, i)) > scale)
            scale = fabs(CHECK_AT(host.data, i));
    for (int64_t i = 0; i < n; i++) {
        double d = o->dtype == SI_FLOAT32 ? fabs(CHECK_AT(host.data, i) - CHECK_AT(gpu.data, i))
                                          : (((int32_t *)host.data)[i] != ((int32_t *)gpu.data)[i]);
        if (!(d <= worst)) {
            worst = d;
            at = i;
        }
    }
#undef CHECK_AT
    if (worst / scale > tol)
        fprintf(stderr, "check: step %d %s node '%s': max|gpu-host| %g (scale %g) at %lld\n", s,
                ck_kind_name(st->kind), m->io->nodes[st->node].name, worst, scale, (long long)at);
    uint64_t over = glk_half_overflows(m->gpu); /* this step's: the count is read after each */
    m->st.f16_overflows += over;
    if (over)
        fprintf(stderr, "check: step %d %s node '%s': %llu values past the largest half, stored as "
                "+-65504\n", s, ck_kind_name(st->kind), m->io->nodes[st->node].name, (unsigned long long)over);
    free_inputs(st, ins, insp);
    free(gpu.data);
    free(host.data);
}

static si_result gpu_throttle(si_model *m, uint64_t bytes, si_error *err)
{
    return glk_throttle(m->gpu, bytes, err);
}

static si_result gpu_finish(si_model *m, si_error *err) { return glk_finish(m->gpu, err); }

const rt_backend rt_backend_gpu = {
    .name = "gpu",
    .holds_vram = 1,
    .renderer = gpu_renderer,
    .offset_align = gpu_offset_align,
    .arena_ensure = gpu_arena_ensure,
    .arena_release = gpu_arena_release,
    .arena_free = gpu_arena_free,
    .pool_create = gpu_pool_create,
    .pool_free = gpu_pool_free,
    .transfer = gpu_transfer,
    .transfer_ptr = gpu_transfer_ptr,
    .transfer_pool = gpu_transfer_pool,
    .fence_wait = gpu_fence_wait,
    .copies_overlap = gpu_copies_overlap,
    .sync_step = gpu_sync_step,
    .run_step = gpu_run_step,
    .prepare = gpu_prepare,
    .check_step = gpu_check_step,
    .throttle = gpu_throttle,
    .finish = gpu_finish,
};
