/* Shared by the kernel tests: run one step with the host reference and on the
 * GPU (llvmpipe in CI) on the same random inputs and compare. */
#ifndef SI_TEST_KERNEL_UTIL_H
#define SI_TEST_KERNEL_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core.h"
#include "glk.h"

static glk_ctx *kt_gpu;

/* Deterministic PRNG so a failure can be replayed. */
static uint64_t kt_state = 0x9e3779b97f4a7c15ull;
static inline uint32_t kt_rand(void)
{
    kt_state ^= kt_state << 13;
    kt_state ^= kt_state >> 7;
    kt_state ^= kt_state << 17;
    return (uint32_t)(kt_state >> 11);
}
static inline int kt_randint(int lo, int hi) { return (int)(lo + (int64_t)(kt_rand() % (uint32_t)((int64_t)hi - lo + 1))); }
static inline float kt_randf(float lo, float hi) { return lo + (hi - lo) * (float)(kt_rand() % 1000003u) / 1000003.f; }

static inline core_buf kt_buf(si_dtype dt, int rank, const int64_t *dims)
{
    core_buf b = {.dtype = dt};
    b.shape.rank = rank;
    for (int i = 0; i < rank; i++)
        b.shape.d[i] = dims[i];
    int64_t n = core_shape_count(&b.shape);
    b.data = calloc((size_t)(n ? n : 1), CORE_ELEM);
    return b;
}

/* Random values, never all zeros: floats in [lo,hi], ints in [lo,hi]. */
static inline core_buf kt_random(si_dtype dt, int rank, const int64_t *dims, float lo, float hi)
{
    core_buf b = kt_buf(dt, rank, dims);
    int64_t n = core_shape_count(&b.shape);
    for (int64_t i = 0; i < n; i++) {
        if (dt == SI_FLOAT32)
            ((float *)b.data)[i] = kt_randf(lo, hi);
        else if (dt == SI_BOOL)
            ((int32_t *)b.data)[i] = (int32_t)(kt_rand() & 1);
        else
            ((int32_t *)b.data)[i] = kt_randint((int)lo, (int)hi);
    }
    return b;
}

static inline void kt_free(core_buf *b) { free(b->data); b->data = NULL; }

static inline int kt_gpu_open(void)
{
    if (kt_gpu)
        return 0;
    si_error err = {0};
    if (glk_open(&kt_gpu, &err) != SI_OK) {
        fprintf(stderr, "no GPU context: %s\n", err.message);
        return -1;
    }
    return 0;
}

static inline void kt_gpu_close(void)
{
    glk_close(kt_gpu);
    kt_gpu = NULL;
}

/* A cmocka group's setup and teardown: the GPU context opened, then closed. */
static inline int kt_group_setup(void **state)
{
    (void)state;
    return kt_gpu_open();
}

static inline int kt_group_teardown(void **state)
{
    (void)state;
    kt_gpu_close();
    return 0;
}

/* The GPU bytes of b: 4 an element, or (half) 2 an element rounded up to 4,
 * filled from b's floats (the halves nearest them); into *data (malloc'ed). */
static inline uint64_t kt_stored(const core_buf *b, int half, void **data)
{
    int64_t n = core_shape_count(&b->shape);
    uint64_t bytes = half ? ((uint64_t)n * 2 + 3) / 4 * 4 : (uint64_t)n * CORE_ELEM;
    if (bytes == 0)
        bytes = 4;
    *data = calloc(1, bytes);
    if (!*data)
        return 0;
    if (!half)
        memcpy(*data, b->data, (size_t)n * CORE_ELEM);
    for (int64_t i = 0; half && i < n; i++)
        ((uint16_t *)*data)[i] = io_float_to_half(((const float *)b->data)[i]);
    return bytes;
}

/* Runs s on the GPU. ins[i] for i < s->n_in (NULL where s->in[i] < 0); out must
 * be allocated with its shape and dtype (its contents are uploaded first, for
 * accumulating steps). Bindings s->half marks are stored as halves (the
 * nearest to the floats given; a half output comes back widened to floats).
 * Returns 0 on success. */
static inline int kt_run_gpu(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    si_error err = {0};
    uint32_t bufs[CK_MAX_IN + 1] = {0};
    glk_range r[CK_MAX_IN], ro;
    si_dtype dts[CK_MAX_IN] = {0};
    int rc = -1, ho = s->half >> CK_MAX_IN & 1;
    void *tmp = NULL;
    for (int i = 0; i < s->n_in; i++) {
        if (s->in[i] < 0 || !ins[i])
            continue;
        uint64_t bytes = kt_stored(ins[i], s->half >> i & 1, &tmp);
        if (!bytes || glk_buffer_create(kt_gpu, bytes, &bufs[i], &err) != SI_OK ||
            glk_upload(kt_gpu, bufs[i], 0, tmp, bytes, &err) != SI_OK)
            goto done;
        free(tmp);
        tmp = NULL;
        r[i] = (glk_range){bufs[i], 0, bytes};
        dts[i] = ins[i]->dtype;
    }
    int64_t n_out = core_shape_count(&out->shape);
    uint64_t ob = kt_stored(out, ho, &tmp);
    if (!ob || glk_buffer_create(kt_gpu, ob, &bufs[CK_MAX_IN], &err) != SI_OK ||
        glk_upload(kt_gpu, bufs[CK_MAX_IN], 0, tmp, ob, &err) != SI_OK)
        goto done;
    /* as the runtime binds a half output: its elements' bytes */
    ro = (glk_range){bufs[CK_MAX_IN], 0, ho ? (uint64_t)n_out * 2 : ob};
    if (glk_run_step(kt_gpu, s, r, dts, &ro, out->dtype, &err) != SI_OK ||
        glk_download(kt_gpu, bufs[CK_MAX_IN], 0, tmp, ob, &err) != SI_OK)
        goto done;
    if (ho)
        for (int64_t i = 0; i < n_out; i++)
            ((float *)out->data)[i] = io_half_to_float(((uint16_t *)tmp)[i]);
    else
        memcpy(out->data, tmp, (size_t)n_out * CORE_ELEM);
    rc = 0;
done:
    free(tmp);
    if (rc)
        fprintf(stderr, "GPU step %s failed: %s\n", ck_kind_name(s->kind), err.message);
    for (int i = 0; i <= CK_MAX_IN; i++)
        if (bufs[i])
            glk_buffer_destroy(kt_gpu, bufs[i]);
    return rc;
}

/* Step s on the GPU with a switch of the kernels off (set(g, 0)) and on (set(g, 1)),
 * the default after (set(g, -1)): 0 where both give the same bits, -1 where a run
 * failed, 1 where they differ. */
static inline int kt_same_both_ways(void (*set)(glk_ctx *, int), const ck_step *s,
                                    const core_buf *const *ins, si_dtype out_dt, const core_shape *os)
{
    core_buf y0 = kt_buf(out_dt, os->rank, os->d), y1 = kt_buf(out_dt, os->rank, os->d);
    set(kt_gpu, 0);
    int rc = kt_run_gpu(s, ins, &y0);
    set(kt_gpu, 1);
    rc |= kt_run_gpu(s, ins, &y1);
    set(kt_gpu, -1);
    int r = rc ? -1 : memcmp(y0.data, y1.data, (size_t)core_shape_count(os) * CORE_ELEM) != 0;
    kt_free(&y0);
    kt_free(&y1);
    return r;
}

/* ... with its loads issued ahead of its sums and without (glk_set_ahead) */
static inline int kt_same_ahead(const ck_step *s, const core_buf *const *ins, si_dtype out_dt,
                                const core_shape *os)
{
    return kt_same_both_ways(glk_set_ahead, s, ins, out_dt, os);
}

/* ... with four output channels an invocation where it can and one (glk_set_quad) */
static inline int kt_same_quad(const ck_step *s, const core_buf *const *ins, si_dtype out_dt,
                               const core_shape *os)
{
    return kt_same_both_ways(glk_set_quad, s, ins, out_dt, os);
}

/* ... with its program compiled for its epilogue and not (glk_set_epi) */
static inline int kt_same_epi(const ck_step *s, const core_buf *const *ins, si_dtype out_dt,
                              const core_shape *os)
{
    return kt_same_both_ways(glk_set_epi, s, ins, out_dt, os);
}

/* Host and GPU on the same inputs; returns max |gpu-host| / max(1,|host|) over
 * the output (ints compared exactly: any difference returns 1e30). -1 on failure.
 * init (may be NULL) gives the output's initial contents. */
static inline double kt_compare(const ck_step *s, const core_buf *const *ins, si_dtype out_dt,
                                const core_shape *out_shape, const core_buf *init)
{
    core_buf h = {.dtype = out_dt, .shape = *out_shape};
    core_buf g = h;
    int64_t n = core_shape_count(out_shape);
    size_t bytes = (size_t)(n ? n : 1) * CORE_ELEM;
    h.data = calloc(1, bytes);
    g.data = calloc(1, bytes);
    if (init) {
        memcpy(h.data, init->data, (size_t)n * CORE_ELEM);
        memcpy(g.data, init->data, (size_t)n * CORE_ELEM);
    }
    si_error err = {0};
    double worst = -1;
    if (ck_host_run(s, ins, &h, &err) != SI_OK) {
        fprintf(stderr, "host step failed: %s\n", err.message);
        goto done;
    }
    if (kt_run_gpu(s, ins, &g) != 0)
        goto done;
    worst = 0;
    for (int64_t i = 0; i < n; i++) {
        if (out_dt == SI_FLOAT32) {
            float a = ((float *)h.data)[i], b = ((float *)g.data)[i];
            if (isnan(a) && isnan(b))
                continue;
            double e = fabs((double)a - (double)b) / fmax(1.0, fabs((double)a));
            if (!(e <= worst))
                worst = isnan(e) ? 1e30 : e;
        } else if (((int32_t *)h.data)[i] != ((int32_t *)g.data)[i]) {
            worst = 1e30;
        }
    }
done:
    free(h.data);
    free(g.data);
    return worst;
}

#endif
