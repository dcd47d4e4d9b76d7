/* Random ops as TensorFlow.js 4.22 runs them (tfjs-core's rand_util.js on
 * seedrandom's alea; tfjs-backend-cpu's Multinomial): RandomUniform,
 * RandomUniformInt, RandomStandardNormal, TruncatedNormal built on the host as
 * constants of the program (their shape is known before the run), and
 * Multinomial, whose logits may be data, as a host step (CK_MULTINOMIAL).
 *
 * Seeds, as tfjs reads them: RandomStandardNormal, TruncatedNormal and
 * Multinomial use the seed attr when it is not 0; RandomUniformInt uses it
 * even when it is 0 (the string "0"); RandomUniform never gets one from the
 * converter. Where tfjs would seed from Math.random (a new draw every run),
 * streaminfer seeds from the node's name instead: the values are fixed for the
 * model, the same at every budget, backend and run (the invariant that every
 * budget gives the same bits), and drawn from the same distributions. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ops.h"

/* ---- seedrandom's alea, in the float64 arithmetic JavaScript does it in */
typedef struct {
    double s0, s1, s2, c;
} alea;

typedef struct {
    double n;
} mash;

static double mash_str(mash *m, const char *data)
{
    double n = m->n;
    for (const unsigned char *p = (const unsigned char *)data; *p; p++) {
        n += *p;
        double h = 0.02519603282416938 * n;
        n = (double)(uint32_t)(uint64_t)h; /* h >>> 0 (0 <= h < 2^32) */
        h -= n;
        h *= n;
        n = (double)(uint32_t)(uint64_t)h;
        h -= n;
        n += h * 4294967296.0;
    }
    m->n = n;
    return (double)(uint32_t)(uint64_t)n * 2.3283064365386963e-10;
}

static void alea_init(alea *a, const char *seed)
{
    mash m = {4022871197.0}; /* 0xefc8249d */
    a->c = 1;
    a->s0 = mash_str(&m, " ");
    a->s1 = mash_str(&m, " ");
    a->s2 = mash_str(&m, " ");
    a->s0 -= mash_str(&m, seed);
    if (a->s0 < 0)
        a->s0 += 1;
    a->s1 -= mash_str(&m, seed);
    if (a->s1 < 0)
        a->s1 += 1;
    a->s2 -= mash_str(&m, seed);
    if (a->s2 < 0)
        a->s2 += 1;
}

static double alea_next(alea *a)
{
    double t = 2091639 * a->s0 + a->c * 2.3283064365386963e-10;
    a->s0 = a->s1;
    a->s1 = a->s2;
    a->c = (double)(int32_t)t; /* t | 0 (0 <= t < 2^31) */
    return a->s2 = t - a->c;
}

/* The seed string: the attr as JavaScript prints an integer, or, where tfjs
 * would draw one from Math.random, one made from the node's name. */
static uint64_t name_hash(const char *name) /* FNV-1a */
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

static void seed_string_of(int derived, uint64_t v, char *out, size_t n)
{
    if (derived)
        snprintf(out, n, "streaminfer:%016llx", (unsigned long long)v);
    else
        snprintf(out, n, "%lld", (long long)v);
}

static void seed_string(const lower_ctx *c, int use_attr, int64_t seed, char *out, size_t n)
{
    seed_string_of(!use_attr, use_attr ? (uint64_t)seed : name_hash(lc_node(c)->name), out, n);
}

/* ---- Marsaglia's polar method (rand_util.js MPRandGauss) */
typedef struct {
    alea r;
    double mean, std, upper, lower, next;
    int truncated, has_next;
} gauss;

static int gauss_valid(const gauss *g, double v) { return v <= g->upper && v >= g->lower; }

static double gauss_value(gauss *g)
{
    if (g->has_next) {
        g->has_next = 0;
        return g->next;
    }
    double x, y;
    for (;;) {
        double v1, v2, s;
        do {
            v1 = 2 * alea_next(&g->r) - 1;
            v2 = 2 * alea_next(&g->r) - 1;
            s = v1 * v1 + v2 * v2;
        } while (s >= 1 || s == 0);
        double mul = sqrt(-2.0 * log(s) / s);
        x = g->mean + g->std * v1 * mul;
        y = g->mean + g->std * v2 * mul;
        if (!g->truncated || gauss_valid(g, x))
            break;
    }
    if (!g->truncated || gauss_valid(g, y)) {
        g->next = y;
        g->has_next = 1;
    }
    return x;
}

/* ---- the constants */

/* Output shape from input 0 (a constant list of sizes) and the element count. */
static si_result random_shape(lower_ctx *c, si_error *err, core_shape *s, int64_t *count)
{
    int64_t dims[SI_MAX_RANK + 1];
    if (lc_n_inputs(c) < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs a shape");
    int n = lc_value_ints(c, 0, dims, SI_MAX_RANK + 1, err);
    if (n == -2)
        return err->status;
    if (n < 0)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "the shape must be known before the run");
    if (n > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "rank %d (at most %d)", n, SI_MAX_RANK);
    *s = (core_shape){.rank = n};
    *count = 1;
    for (int i = 0; i < n; i++) {
        if (dims[i] < 0 || dims[i] > (1 << 30) || (*count *= dims[i]) > (1 << 28))
            return lc_fail(c, err, SI_ERR_SHAPE, "shape dimension %d (%lld) is out of range", i,
                           (long long)dims[i]);
        s->d[i] = dims[i];
    }
    return SI_OK;
}

/* Stores double v as tfjs's typed array of dtype dt does: Float32Array rounds,
 * Int32Array takes ToInt32 (truncation, modulo 2^32). */
static void store(void *data, si_dtype dt, int64_t i, double v)
{
    if (dt == SI_FLOAT32) {
        ((float *)data)[i] = (float)v;
        return;
    }
    double t = isfinite(v) ? fmod(trunc(v), 4294967296.0) : 0;
    if (t < 0)
        t += 4294967296.0;
    ((int32_t *)data)[i] = (int32_t)(uint32_t)t;
}

enum { R_UNIFORM, R_UNIFORM_INT, R_NORMAL, R_TRUNCATED };

static si_result lower_random(lower_ctx *c, si_error *err)
{
    const char *op = lc_node(c)->op;
    int kind = !strcmp(op, "RandomUniform")      ? R_UNIFORM
               : !strcmp(op, "RandomUniformInt") ? R_UNIFORM_INT
               : !strcmp(op, "TruncatedNormal")  ? R_TRUNCATED
                                                 : R_NORMAL;
    core_shape s;
    int64_t count = 0;
    si_result st = random_shape(c, err, &s, &count);
    if (st != SI_OK)
        return st;
    /* RandomUniformInt is always int32 (tfjs: randomUniform(..., 'int32')) */
    int64_t dt = kind == R_UNIFORM_INT ? SI_INT32 : lc_attr_int(c, "dtype", SI_FLOAT32);
    if (dt != SI_FLOAT32 && dt != SI_INT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "dtype is not float32 or int32 (tfjs: %s)",
                       dt == SI_BOOL ? "bool is refused" : "unsupported");
    int64_t seed = lc_attr_int(c, "seed", 0);
    char seed_s[256];
    /* RandomUniform: the converter never passes the seed; RandomUniformInt:
     * any seed, 0 included (seed == null is the only unseeded case) */
    int use_attr = kind == R_UNIFORM ? 0 : kind == R_UNIFORM_INT ? 1 : seed != 0;
    seed_string(c, use_attr, seed, seed_s, sizeof seed_s);
    void *data = calloc((size_t)(count ? count : 1), CORE_ELEM);
    if (!data)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    if (kind == R_UNIFORM || kind == R_UNIFORM_INT) {
        /* UniformRandom(min, max, dtype null): min + range * random(), stored
         * by the buffer's dtype; minval/maxval are attrs as tfjs's op list
         * reads them (absent: 0 and 1) */
        double lo = lc_attr_float(c, "minval", 0), hi = lc_attr_float(c, "maxval", 1);
        alea r;
        alea_init(&r, seed_s);
        for (int64_t i = 0; i < count; i++)
            store(data, (si_dtype)dt, i, lo + (hi - lo) * alea_next(&r));
    } else {
        gauss g = {.mean = kind == R_TRUNCATED ? lc_attr_float(c, "means", 0) : 0,
                   .std = kind == R_TRUNCATED ? lc_attr_float(c, "stddev", 1) : 1,
                   .truncated = kind == R_TRUNCATED};
        g.upper = g.mean + g.std * 2;
        g.lower = g.mean - g.std * 2;
        alea_init(&g.r, seed_s);
        for (int64_t i = 0; i < count; i++) {
            double v = gauss_value(&g);
            store(data, (si_dtype)dt, i, dt == SI_FLOAT32 ? v : floor(v + 0.5)); /* Math.round */
        }
    }
    int t = lc_new_const(c, (si_dtype)dt, &s, data);
    free(data);
    lc_set_output(c, 0, t);
    return SI_OK;
}

/* ---- Multinomial: per row, a float32 cdf of the probabilities (softmax of
 * the logits unless they are normalized; tfjs's graph op never is) without
 * its last event, and for each sample the first event whose cdf exceeds the
 * next alea draw, else the last. Every row restarts the generator from the
 * seed, as tfjs-backend-cpu does. */
void ck_host_multinomial(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_multinomial_p *p = &s->u.multinomial;
    const float *lg = ins[0]->data;
    int32_t *o = out->data;
    float *prob = malloc((size_t)p->events * sizeof *prob);
    float *cdf = malloc((size_t)p->events * sizeof *cdf);
    if (!prob || !cdf) {
        free(prob);
        free(cdf);
        return;
    }
    char seed_s[64];
    seed_string_of(p->derived, ((uint64_t)(uint32_t)p->seed_hi << 32) | (uint32_t)p->seed_lo,
                   seed_s, sizeof seed_s);
    for (int64_t b = 0; b < p->batch; b++) {
        const float *x = lg + b * p->events;
        /* tfjs's softmax kernels: max, sub, exp (float64, stored float32),
         * a float64 sum stored float32, div */
        float mx = x[0];
        for (int e = 1; e < p->events; e++)
            if (x[e] > mx || isnan(x[e]))
                mx = isnan(mx) ? mx : x[e];
        double sum = 0;
        for (int e = 0; e < p->events; e++) {
            prob[e] = (float)exp((double)(x[e] - mx));
            sum += prob[e];
        }
        float fsum = (float)sum;
        for (int e = 0; e < p->events; e++)
            prob[e] = prob[e] / fsum;
        int nc = p->events - 1;
        if (nc > 0)
            cdf[0] = prob[0];
        for (int e = 1; e < nc; e++)
            cdf[e] = cdf[e - 1] + prob[e];
        alea r;
        alea_init(&r, seed_s);
        for (int64_t k = 0; k < p->samples; k++) {
            double v = alea_next(&r);
            int32_t pick = nc;
            for (int e = 0; e < nc; e++)
                if (v < cdf[e]) {
                    pick = e;
                    break;
                }
            o[b * p->samples + k] = pick;
        }
    }
    free(prob);
    free(cdf);
}

static si_result lower_multinomial(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs logits and num_samples");
    const core_tensor *lg = lc_tensor(c, lc_in(c, 0));
    if (lg->dtype != SI_FLOAT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "logits must be float32");
    if (lg->shape.rank != 2)
        return lc_fail(c, err, SI_ERR_SHAPE, "logits of rank %d (the op takes rank 2)",
                       lg->shape.rank);
    int64_t ns[2];
    int n = lc_value_ints(c, 1, ns, 2, err);
    if (n == -2)
        return err->status;
    if (n != 1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "num_samples must be one number known before the run");
    int64_t batch = lg->shape.d[0], events = lg->shape.d[1];
    if (events < 2)
        return lc_fail(c, err, SI_ERR_SHAPE, "%lld outcomes (tfjs needs at least 2)",
                       (long long)events);
    if (ns[0] < 0 || ns[0] > (1 << 24) || events > (1 << 24) || batch * ns[0] > (1 << 28))
        return lc_fail(c, err, SI_ERR_SHAPE, "num_samples %lld is out of range", (long long)ns[0]);
    int64_t seed = lc_attr_int(c, "seed", 0);
    int derived = seed == 0; /* tfjs: seed || Math.random() */
    uint64_t sv = derived ? name_hash(lc_node(c)->name) : (uint64_t)seed;
    ck_step st = {.kind = CK_MULTINOMIAL, .n_in = 1, .in = {lc_in(c, 0)}};
    st.u.multinomial = (ck_multinomial_p){.batch = (int32_t)batch, .events = (int32_t)events,
                                          .samples = (int32_t)ns[0],
                                          .seed_lo = (int32_t)(uint32_t)sv,
                                          .seed_hi = (int32_t)(uint32_t)(sv >> 32),
                                          .derived = derived};
    core_shape os = {.rank = 2, .d = {batch, ns[0]}};
    st.out = lc_new_tensor(c, SI_INT32, &os);
    lc_emit(c, &st);
    lc_set_output(c, 0, st.out);
    return SI_OK;
}

const core_op_def core_ops_random[] = {{"RandomUniform", lower_random},
                                       {"RandomUniformInt", lower_random},
                                       {"RandomStandardNormal", lower_random},
                                       {"TruncatedNormal", lower_random},
                                       {"Multinomial", lower_multinomial},
                                       {NULL, NULL}};
