/* Per-op tests against TensorFlow.js (issue 15): runs every case folder that
 * tests/ops/gen.js wrote (a single-op graph model, its inputs and tfjs's
 * outputs) on the host backend and on the GPU, and compares. float32:
 * |out - ref| <= tol * max(1, |ref|) (tol from case.txt, DESIGN's 1e-3 unless
 * the op's rounding says otherwise), NaN where tfjs has NaN, infinities equal;
 * int32 and bool exact. On the GPU the case runs once more at a budget below
 * its largest step: where the plan splits the step, the outputs must be
 * bitwise the unsplit ones.
 *
 *   test_ops CASES_DIR [RESULTS.tsv]   run the cases (results: one row a case:
 *                                      op, case, host, gpu, GPU steps, tiled, covers)
 *   test_ops --list-ops                every op streaminfer knows, with its family
 * (tests/run_all.sh runs it after gen.js, in its models block, not in its
 * loop over test binaries.) */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "streaminfer.h"
#include "core.h"

#define MAX_IO 8

typedef struct {
    char op[128];
    char covers[1024]; /* the other ops of the case's graph it tests: "A,B" or "-" */
    int n_in, n_out;
    char in_name[MAX_IO][128], in_file[MAX_IO][128], out_file[MAX_IO][128];
    double tol;
    /* unseeded random ops (tfjs draws a new seed every run): the values must
     * lie in [lo, hi] and, with moments, their mean and standard deviation be
     * within mtol of mean and std; tfjs's outputs give only shape and dtype */
    int has_range, has_moments;
    double lo, hi, mean, std, mtol;
} case_spec;

typedef struct {
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    void *data;
} tensor;

typedef struct {
    int n;
    tensor t[MAX_IO];
} outputs;

static int64_t count_of(const tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

static int read_spec(const char *dir, case_spec *c)
{
    char path[1024], key[32], a[128], b[128];
    snprintf(path, sizeof path, "%.1000s/case.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    memset(c, 0, sizeof *c);
    c->tol = 1e-3;
    snprintf(c->covers, sizeof c->covers, "-");
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        int k = sscanf(line, "%31s %127s %127s", key, a, b);
        if (k >= 2 && !strcmp(key, "op"))
            snprintf(c->op, sizeof c->op, "%s", a);
        else if (k >= 2 && !strcmp(key, "covers")) {
            /* "covers A B C" → "A,B,C" (a column of the results row) */
            size_t n = 0;
            for (char *t = strtok(line + 6, " \t\r\n"); t; t = strtok(NULL, " \t\r\n")) {
                int w = snprintf(c->covers + n, sizeof c->covers - n, "%s%s", n ? "," : "", t);
                if (w < 0 || (size_t)w >= sizeof c->covers - n) {
                    fclose(f);
                    return -1; /* too long to be credited whole */
                }
                n += (size_t)w;
            }
        } else if (k == 3 && !strcmp(key, "input") && c->n_in < MAX_IO) {
            snprintf(c->in_name[c->n_in], 128, "%s", a);
            snprintf(c->in_file[c->n_in++], 128, "%s", b);
        } else if (k == 2 && !strcmp(key, "output") && c->n_out < MAX_IO)
            snprintf(c->out_file[c->n_out++], 128, "%s", a);
        else if (k == 2 && !strcmp(key, "tol"))
            c->tol = atof(a);
        else if (k == 3 && !strcmp(key, "range")) {
            c->has_range = 1;
            c->lo = atof(a);
            c->hi = atof(b);
        } else if (!strcmp(key, "moments") &&
                   sscanf(line, "%*s %lf %lf %lf", &c->mean, &c->std, &c->mtol) == 3)
            c->has_moments = 1;
    }
    fclose(f);
    return c->op[0] && c->n_out ? 0 : -1;
}

static int read_npy(const char *dir, const char *file, tensor *t, si_error *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%.700s/%.300s", dir, file);
    return si_npy_read(path, &t->dt, &t->rank, t->shape, &t->data, err) == SI_OK ? 0 : -1;
}

static void free_outputs(outputs *o)
{
    for (int i = 0; i < o->n; i++)
        free(o->t[i].data);
    o->n = 0;
}

/* Runs the case; fills out (copies) and stats. 2: refused for the budget. */
static int run_case(const char *dir, const case_spec *c, const tensor *ins, si_backend be,
                    uint64_t budget, outputs *out, si_stats *stats, char *why, size_t why_n)
{
    char path[1024];
    snprintf(path, sizeof path, "%.1000s/model.json", dir);
    si_model *m = NULL;
    si_error err = {0};
    si_tensor_in tin[MAX_IO];
    for (int i = 0; i < c->n_in; i++) {
        tin[i] = (si_tensor_in){.name = c->in_name[i], .dtype = ins[i].dt, .rank = ins[i].rank,
                                .data = ins[i].data};
        memcpy(tin[i].shape, ins[i].shape, sizeof tin[i].shape);
    }
    si_options opt = {.backend = be, .vram_budget = budget};
    out->n = 0;
    if (si_open(path, &opt, &m, &err) != SI_OK || si_run(m, tin, c->n_in, &err) != SI_OK) {
        snprintf(why, why_n, "%s", err.message);
        si_close(m);
        return err.status == SI_ERR_BUDGET ? 2 : -1;
    }
    si_get_stats(m, stats);
    for (int k = 0; k < si_output_count(m) && k < MAX_IO; k++) {
        tensor *t = &out->t[k];
        const void *d;
        if (si_output(m, k, &t->dt, &t->rank, t->shape, &d, &err) != SI_OK) {
            snprintf(why, why_n, "%s", err.message);
            si_close(m);
            return -1;
        }
        size_t bytes = (size_t)count_of(t) * si_dtype_size(t->dt);
        t->data = malloc(bytes ? bytes : 1);
        memcpy(t->data, d, bytes);
        out->n++;
    }
    si_close(m);
    return 0;
}

static double elem(const tensor *t, int64_t i)
{
    if (t->dt == SI_FLOAT32)
        return ((const float *)t->data)[i];
    if (t->dt == SI_INT32)
        return ((const int32_t *)t->data)[i];
    return ((const uint8_t *)t->data)[i];
}

/* The range and moments of an unseeded random op's output (case_spec). */
static int check_random(const tensor *out, const case_spec *c, char *why, size_t n)
{
    int64_t cnt = count_of(out);
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < cnt; i++) {
        double v = elem(out, i);
        if (!(v >= c->lo && v <= c->hi)) {
            snprintf(why, n, "element %lld: %.9g outside [%g, %g]", (long long)i, v, c->lo, c->hi);
            return -1;
        }
        sum += v;
        sq += v * v;
    }
    if (c->has_moments && cnt > 1) {
        double mean = sum / (double)cnt, sd = sqrt(fmax(0, sq / (double)cnt - mean * mean));
        if (fabs(mean - c->mean) > c->mtol || fabs(sd - c->std) > c->mtol) {
            snprintf(why, n, "mean %.4g and standard deviation %.4g, expected %g and %g (+-%g)",
                     mean, sd, c->mean, c->std, c->mtol);
            return -1;
        }
    }
    return 0;
}

/* 0 when out matches ref (or, for an unseeded random op, its range); else why. */
static int compare(const tensor *out, const tensor *ref, const case_spec *c, char *why, size_t n)
{
    double tol = c->tol;
    if (out->dt != ref->dt) {
        snprintf(why, n, "dtype %s, tfjs %s", si_dtype_name(out->dt), si_dtype_name(ref->dt));
        return -1;
    }
    int same = out->rank == ref->rank;
    for (int i = 0; same && i < out->rank; i++)
        same = out->shape[i] == ref->shape[i];
    if (!same) {
        snprintf(why, n, "shape (rank %d, dim0 %lld), tfjs (rank %d, dim0 %lld)", out->rank,
                 out->rank ? (long long)out->shape[0] : 0LL, ref->rank,
                 ref->rank ? (long long)ref->shape[0] : 0LL);
        return -1;
    }
    if (c->has_range)
        return check_random(out, c, why, n);
    for (int64_t i = 0; i < count_of(ref); i++) {
        double o = elem(out, i), r = elem(ref, i);
        int ok;
        if (ref->dt != SI_FLOAT32 || isnan(r))
            ok = ref->dt != SI_FLOAT32 ? o == r : isnan(o);
        else if (isinf(r))
            ok = o == r;
        else
            ok = fabs(o - r) <= tol * fmax(1.0, fabs(r));
        if (!ok) {
            snprintf(why, n, "element %lld: %.9g, tfjs %.9g", (long long)i, o, r);
            return -1;
        }
    }
    return 0;
}

static int bitwise_same(const outputs *a, const outputs *b)
{
    if (a->n != b->n)
        return 0;
    for (int k = 0; k < a->n; k++) {
        size_t bytes = (size_t)count_of(&a->t[k]) * si_dtype_size(a->t[k].dt);
        if (a->t[k].dt != b->t[k].dt || count_of(&a->t[k]) != count_of(&b->t[k]) ||
            memcmp(a->t[k].data, b->t[k].data, bytes))
            return 0;
    }
    return 1;
}

static int check_against(const char *what, const char *name, const case_spec *c, const outputs *o,
                         const tensor *refs)
{
    char why[600];
    if (o->n != c->n_out) {
        printf("FAIL %s (%s): %s gave %d outputs, tfjs %d\n", name, c->op, what, o->n, c->n_out);
        return -1;
    }
    for (int k = 0; k < c->n_out; k++)
        if (compare(&o->t[k], &refs[k], c, why, sizeof why)) {
            printf("FAIL %s (%s): %s output %d: %s\n", name, c->op, what, k, why);
            return -1;
        }
    return 0;
}

/* One case: host, GPU, GPU under a budget below its largest step. Writes a
 * results row. Returns 0 when everything that ran matched. */
static int one_case(const char *root, const char *name, FILE *res)
{
    char dir[1024], why[600];
    snprintf(dir, sizeof dir, "%.700s/%.300s", root, name);
    case_spec c;
    tensor ins[MAX_IO] = {0}, refs[MAX_IO] = {0};
    si_error err = {0};
    int bad = 0;
    if (read_spec(dir, &c)) {
        printf("FAIL %s: no readable case.txt\n", name);
        return -1;
    }
    for (int i = 0; i < c.n_in && !bad; i++)
        bad = read_npy(dir, c.in_file[i], &ins[i], &err);
    for (int k = 0; k < c.n_out && !bad; k++)
        bad = read_npy(dir, c.out_file[k], &refs[k], &err);
    if (bad) {
        printf("FAIL %s (%s): %s\n", name, c.op, err.message);
        return -1;
    }
    outputs host = {0}, gpu = {0}, small = {0};
    si_stats st = {0}, st_small = {0};
    int host_bad = run_case(dir, &c, ins, SI_BACKEND_HOST, 0, &host, &st, why, sizeof why);
    if (host_bad)
        printf("FAIL %s (%s): host: %s\n", name, c.op, why);
    else
        host_bad = check_against("host", name, &c, &host, refs);
    int gpu_bad = run_case(dir, &c, ins, SI_BACKEND_GPU, 0, &gpu, &st, why, sizeof why);
    if (gpu_bad)
        printf("FAIL %s (%s): gpu: %s\n", name, c.op, why);
    else
        gpu_bad = check_against("gpu", name, &c, &gpu, refs);
    const char *tiled = "-";
    if (!gpu_bad && st.gpu_steps > 0 && st.untiled_bound_bytes > 0) {
        uint64_t budget = st.untiled_bound_bytes * 3 / 4;
        int r = run_case(dir, &c, ins, SI_BACKEND_GPU, budget, &small, &st_small, why, sizeof why);
        if (r == 2)
            tiled = "no";
        else if (r) {
            printf("FAIL %s (%s): gpu at %llu bytes: %s\n", name, c.op, (unsigned long long)budget, why);
            gpu_bad = 1;
        } else if (!bitwise_same(&small, &gpu)) {
            printf("FAIL %s (%s): gpu at %llu bytes: not bitwise the no-limit outputs\n", name,
                   c.op, (unsigned long long)budget);
            gpu_bad = 1;
        } else {
            tiled = st_small.steps_split > 0 ? "yes" : "no";
        }
    }
    if (res)
        fprintf(res, "%s\t%s\t%s\t%s\t%llu\t%s\t%s\n", c.op, name, host_bad ? "FAIL" : "ok",
                gpu_bad ? "FAIL" : "ok", (unsigned long long)st.gpu_steps, tiled, c.covers);
    free_outputs(&host);
    free_outputs(&gpu);
    free_outputs(&small);
    for (int i = 0; i < MAX_IO; i++) {
        free(ins[i].data);
        free(refs[i].data);
    }
    return host_bad || gpu_bad ? -1 : 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--list-ops")) {
        for (int i = 0; core_op_at(i); i++)
            printf("%s\t%s\n", core_op_at(i), core_op_family(core_op_at(i)));
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: test_ops CASES_DIR [RESULTS.tsv] | --list-ops\n");
        return 2;
    }
    char root[1024];
    struct stat sb;
    snprintf(root, sizeof root, "%.1000s", argv[1]);
    DIR *d = opendir(root);
    if (!d) {
        fprintf(stderr, "test_ops: cannot open %s\n", root);
        return 1;
    }
    char **names = NULL;
    int n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char p[1400];
        snprintf(p, sizeof p, "%s/%s/case.txt", root, e->d_name);
        if (e->d_name[0] == '.' || stat(p, &sb))
            continue;
        if (n == cap)
            names = realloc(names, (size_t)(cap = cap ? cap * 2 : 64) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n == 0) { /* nothing checked is not a pass */
        fprintf(stderr, "test_ops: no cases under %s (tests/ops/gen.js writes them)\n", root);
        free(names);
        return 1;
    }
    qsort(names, (size_t)n, sizeof *names, by_name);
    FILE *res = argc > 2 ? fopen(argv[2], "w") : NULL;
    int failed = 0;
    for (int i = 0; i < n; i++) {
        failed += one_case(root, names[i], res) != 0;
        free(names[i]);
    }
    free(names);
    if (res)
        fclose(res);
    printf("test_ops: %d of %d cases pass (host and GPU vs TensorFlow.js)\n", n - failed, n);
    return failed || n == 0 ? 1 : 0;
}
