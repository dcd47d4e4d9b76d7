/* The backend in host memory (si_options.backend = SI_BACKEND_HOST, or no GPU
 * under SI_BACKEND_AUTO): the arena is a block of host memory laid out as the
 * plan says, every step runs the host reference implementation in place. It
 * holds no VRAM, so the budget shapes its plan but never its memory. */
#include <stdlib.h>
#include <string.h>
#include "session_internal.h"

static const char *host_renderer(const si_model *m)
{
    (void)m;
    return "host";
}

static uint32_t host_offset_align(const si_model *m)
{
    (void)m;
    return BASE_ALIGN;
}

static si_result host_arena_ensure(si_model *m, si_error *err)
{
    if (!m->host_arena &&
        !(m->host_arena = calloc(1, m->plan->arena_bytes ? m->plan->arena_bytes : 4)))
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    return SI_OK;
}

/* Host memory is not the budget's: the arena stays between turns of stages. */
static void host_arena_release(si_model *m) { (void)m; }

static void host_arena_free(si_model *m)
{
    free(m->host_arena);
    m->host_arena = NULL;
}

static si_result host_pool_create(si_model *m, uint64_t bytes, si_error *err)
{
    m->home_buf = 0;
    if (!(m->home = malloc(bytes ? bytes : 16)))
        return base_fail(err, SI_ERR_NOMEM, "out of memory for the host pool");
    return SI_OK;
}

static void host_pool_free(si_model *m) { free(m->home); }

/* A quantized weight's load: its stored bytes at `from` in the pool,
 * dequantized into the arena as TensorFlow.js does (1 if b is one). */
static int host_dequant_load(si_model *m, int b, uint64_t from)
{
    if (!m->prog->tensors[m->pb.buffers[b].tensor].quant)
        return 0;
    rt_dequant_weight(m, b, m->home + from, m->host_arena + m->off[b]);
    return 1;
}

static si_result host_transfer(si_model *m, int b, int to_arena, si_error *err)
{
    uint64_t bytes = m->pb.buffers[b].bytes, home = m->home_off[b], off = m->off[b];
    if (home == UINT64_MAX)
        return base_fail(err, SI_ERR_ARG, "internal: buffer %d has no host copy", b);
    if (to_arena && host_dequant_load(m, b, home))
        return SI_OK;
    if (to_arena)
        memcpy(m->host_arena + off, m->home + home, bytes);
    else
        memcpy(m->home + home, m->host_arena + off, bytes);
    return SI_OK;
}

static si_result host_transfer_ptr(si_model *m, int b, uint64_t at, uint64_t bytes, void *p, int to_arena,
                                   si_error *err)
{
    (void)err;
    uint64_t off = m->off[b] + at;
    if (to_arena)
        memcpy(m->host_arena + off, p, bytes);
    else
        memcpy(p, m->host_arena + off, bytes);
    return SI_OK;
}

static si_result host_transfer_pool(si_model *m, int b, uint64_t at, uint64_t bytes, uint64_t pool_off,
                                    int to_arena, void **fence, si_error *err)
{
    *fence = NULL; /* done at the call */
    if (to_arena && host_dequant_load(m, b, pool_off))
        return SI_OK;
    return host_transfer_ptr(m, b, at, bytes, m->home + pool_off, to_arena, err);
}

static si_result host_fence_wait(si_model *m, void **fence, si_error *err)
{
    (void)m;
    (void)err;
    *fence = NULL;
    return SI_OK;
}

/* The step's reference implementation on its tensors where the arena holds them. */
static si_result host_run_step(si_model *m, int s, si_error *err)
{
    const core_program *p = m->prog;
    const ck_step *st = &p->steps[s];
    core_buf ins[CK_MAX_IN];
    const core_buf *insp[CK_MAX_IN] = {0};
    for (int i = 0; i < st->n_in; i++) {
        if (st->in[i] < 0)
            continue;
        const core_tensor *t = &p->tensors[st->in[i]];
        int b = m->buf_of[core_storage(p, st->in[i])];
        ins[i] = (core_buf){t->dtype, t->shape, m->host_arena + m->off[b]};
        insp[i] = &ins[i];
    }
    const core_tensor *o = &p->tensors[st->out];
    core_buf out = {o->dtype, o->shape,
                    m->host_arena + m->off[m->buf_of[core_storage(p, st->out)]]};
    return ck_host_run(st, insp, &out, err);
}

/* Nothing is queued on the host. */
static si_result host_throttle(si_model *m, uint64_t bytes, si_error *err)
{
    (void)m;
    (void)bytes;
    (void)err;
    return SI_OK;
}

static si_result host_finish(si_model *m, si_error *err)
{
    (void)m;
    (void)err;
    return SI_OK;
}

const rt_backend rt_backend_host = {
    .name = "host",
    .holds_vram = 0,
    .renderer = host_renderer,
    .offset_align = host_offset_align,
    .arena_ensure = host_arena_ensure,
    .arena_release = host_arena_release,
    .arena_free = host_arena_free,
    .pool_create = host_pool_create,
    .pool_free = host_pool_free,
    .transfer = host_transfer,
    .transfer_ptr = host_transfer_ptr,
    .transfer_pool = host_transfer_pool,
    .fence_wait = host_fence_wait,
    .run_step = host_run_step,
    .check_step = NULL, /* the host is the reference */
    .throttle = host_throttle,
    .finish = host_finish,
};
