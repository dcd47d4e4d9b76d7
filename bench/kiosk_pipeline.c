/* A kiosk's pipeline (issue 21): face detection, face mesh, iris, face
 * description and hand landmarks run on every frame of a short synthetic clip,
 * all in one si_context within 1.25x the largest of their lower bounds. Each
 * frame's outputs are compared bitwise with the same model opened alone
 * (si_open, same budget) on the same frame. Prints one markdown row:
 * budget, bytes uploaded a frame in the steady state (frames after the
 * first two, when the learned order has been seen once), the counted peak
 * of GPU bytes, host RSS at frame RSS_AT and at the end, ms a frame.
 *   kiosk_pipeline [--no-alone] MODELS_DIR FRAMES [MODEL ...]
 * --no-alone: no handle opened alone and no comparison, so that the process
 * holds the context's GPU memory only (bench/kiosk_gpu.sh measures it) and
 * a frame's time is the context's runs alone.
 * (default models: blazeface facemesh iris faceres handlandmark-full; the
 * RSS is sampled at frame 10, or at FRAMES/2 for fewer than 20 frames.)
 * Exit 0 when every output matched, the peak stayed within the budget and
 * the RSS at the end exceeds the RSS at the sample frame by at most 1 MiB
 * plus the budget: on llvmpipe the arenas are host memory, and a driver may
 * free an arena given up some time after (the RSS at one moment swings by
 * about an arena; a leak grows frame after frame). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "streaminfer.h"

#define MAX_MODELS 16

typedef struct {
    char path[1024];
    const char *name;
    si_model *alone, *shared;
    int ni;
    si_tensor_in in[4];
    char in_names[4][256];
    float *data[4];
} stage;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

/* Shapes of s's inputs (a free dimension 1) and room for their data. */
static int setup_inputs(stage *s, si_model *m)
{
    s->ni = si_input_count(m);
    if (s->ni < 1 || s->ni > 4)
        return fprintf(stderr, "%s: %d inputs\n", s->name, s->ni), -1;
    for (int i = 0; i < s->ni; i++) {
        si_tensor_in *t = &s->in[i];
        const char *nm;
        si_input_info(m, i, &nm, &t->dtype, &t->rank, t->shape);
        snprintf(s->in_names[i], sizeof s->in_names[i], "%s", nm);
        t->name = s->in_names[i];
        int64_t n = 1;
        for (int d = 0; d < t->rank; d++)
            n *= t->shape[d] = t->shape[d] < 0 ? 1 : t->shape[d];
        if (!(s->data[i] = malloc((size_t)n * 4 + 4)))
            return -1;
        t->data = s->data[i];
    }
    return 0;
}

/* Frame f of the clip at each input's size: a bright disc (a "face") moving
 * across a gradient, RGB in [0,1] (0..255 for int inputs); inputs that are
 * not images get fixed values. */
static void make_frame(stage *s, int f)
{
    for (int i = 0; i < s->ni; i++) {
        si_tensor_in *t = &s->in[i];
        int image = t->rank == 4;
        int64_t H = image ? t->shape[1] : 1, W = image ? t->shape[2] : 1, C = image ? t->shape[3] : 1;
        int64_t n = 1;
        for (int d = 0; d < t->rank; d++)
            n *= t->shape[d];
        double cx = 0.3 + 0.4 * (f % 20) / 20.0, cy = 0.45 + 0.1 * sin(f * 0.3);
        for (int64_t k = 0; k < n; k++) {
            int64_t c = k % C, x = (k / C) % W, y = (k / C / W) % H;
            double u = (x + 0.5) / W - cx, v = (y + 0.5) / H - cy;
            double val = image ? 0.15 + 0.25 * (double)y / H + 0.55 * exp(-(u * u + v * v) / 0.02) +
                                     0.05 * (double)c
                               : 0.5;
            if (val > 1)
                val = 1;
            if (t->dtype == SI_FLOAT32)
                s->data[i][k] = (float)val;
            else
                ((int32_t *)s->data[i])[k] = (int32_t)(val * 255);
        }
    }
}

/* 0 when a's outputs are bitwise b's */
static int same_outputs(si_model *a, si_model *b)
{
    if (si_output_count(a) != si_output_count(b))
        return 1;
    for (int o = 0; o < si_output_count(a); o++) {
        si_dtype da, db;
        int ra, rb;
        int64_t sa[SI_MAX_RANK], sb[SI_MAX_RANK];
        const void *pa, *pb;
        if (si_output(a, o, &da, &ra, sa, &pa, NULL) != SI_OK ||
            si_output(b, o, &db, &rb, sb, &pb, NULL) != SI_OK || da != db || ra != rb)
            return 1;
        size_t n = si_dtype_size(da);
        for (int d = 0; d < ra; d++) {
            if (sa[d] != sb[d])
                return 1;
            n *= (size_t)sa[d];
        }
        if (memcmp(pa, pb, n))
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *defaults[] = {"blazeface", "facemesh", "iris", "faceres", "handlandmark-full"};
    int check = 1;
    if (argc > 1 && !strcmp(argv[1], "--no-alone")) {
        check = 0;
        argv++;
        argc--;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: kiosk_pipeline [--no-alone] MODELS_DIR FRAMES [MODEL ...]\n");
        return 2;
    }
    int frames = atoi(argv[2]);
    int n = argc > 3 ? argc - 3 : 5;
    if (frames < 2 || n > MAX_MODELS) {
        fprintf(stderr, "kiosk_pipeline: FRAMES must be 2 or more, at most %d models\n", MAX_MODELS);
        return 2;
    }
    int rss_at = frames >= 20 ? 10 : frames / 2;
    static stage st[MAX_MODELS];
    si_error err = {0};
    uint64_t lb = 0;
    for (int i = 0; i < n; i++) { /* the lower bounds, from plans at no budget */
        st[i].name = argc > 3 ? argv[3 + i] : defaults[i];
        snprintf(st[i].path, sizeof st[i].path, "%s/%s.json", argv[1], st[i].name);
        si_model *m;
        if (si_open(st[i].path, &(si_options){0}, &m, &err) != SI_OK)
            return fprintf(stderr, "%s: %s\n", st[i].name, err.message), 1;
        if (setup_inputs(&st[i], m))
            return 1;
        make_frame(&st[i], 0);
        si_stats s;
        if (si_plan(m, st[i].in, st[i].ni, &err) != SI_OK)
            return fprintf(stderr, "%s: %s\n", st[i].name, err.message), 1;
        si_get_stats(m, &s);
        if (s.lower_bound_bytes > lb)
            lb = s.lower_bound_bytes;
        si_close(m);
    }
    uint64_t budget = lb + lb / 4;
    si_options opt = {.vram_budget = budget};
    si_context *c;
    if (si_context_open(&opt, &c, &err) != SI_OK)
        return fprintf(stderr, "context: %s\n", err.message), 1;
    for (int i = 0; i < n; i++)
        if ((check && si_open(st[i].path, &opt, &st[i].alone, &err) != SI_OK) ||
            si_context_open_model(c, st[i].path, NULL, &st[i].shared, &err) != SI_OK)
            return fprintf(stderr, "%s: %s\n", st[i].name, err.message), 1;
    int mismatches = 0;
    long rss_mid = 0, rss_end = 0;
    uint64_t up_before = 0, up_steady = 0;
    double ms_shared = 0;
    for (int f = 0; f < frames; f++) {
        si_context_stats cs;
        si_context_get_stats(c, &cs);
        if (f == 2)
            up_before = cs.bytes_uploaded;
        for (int i = 0; i < n; i++) {
            make_frame(&st[i], f);
            double t0 = now_ms();
            if (si_run(st[i].shared, st[i].in, st[i].ni, &err) != SI_OK)
                return fprintf(stderr, "%s frame %d: %s\n", st[i].name, f, err.message), 1;
            if (f >= 2)
                ms_shared += now_ms() - t0;
            if (!check)
                continue;
            if (si_run(st[i].alone, st[i].in, st[i].ni, &err) != SI_OK)
                return fprintf(stderr, "%s alone, frame %d: %s\n", st[i].name, f, err.message), 1;
            if (same_outputs(st[i].shared, st[i].alone)) {
                fprintf(stderr, "%s frame %d: outputs differ from the model alone\n", st[i].name, f);
                mismatches++;
            }
        }
        if (f + 1 == rss_at)
            rss_mid = rss_kib();
    }
    rss_end = rss_kib();
    si_context_stats cs;
    si_context_get_stats(c, &cs);
    up_steady = (cs.bytes_uploaded - up_before) / (uint64_t)(frames - 2 > 0 ? frames - 2 : 1);
    printf("| models | frames | budget (1.25x largest lower bound) | uploaded a frame (steady) | "
           "peak GPU (counted) | arenas given up | RSS at frame %d | RSS at frame %d | ms a frame | "
           "outputs vs alone |\n|---|---|---|---|---|---|---|---|---|---|\n", rss_at, frames);
    printf("| %d | %d | %llu | %llu | %llu | %llu | %ld KiB | %ld KiB | %.0f | %s |\n", n, frames,
           (unsigned long long)budget, (unsigned long long)up_steady,
           (unsigned long long)cs.peak_vram_bytes, (unsigned long long)cs.arenas_released, rss_mid,
           rss_end, frames > 2 ? ms_shared / (frames - 2) : 0.0,
           !check ? "not compared (--no-alone)" : mismatches ? "DIFFER" : "bitwise identical");
    long slack_kib = 1024 + (long)(budget >> 10);
    int bad = mismatches || cs.peak_vram_bytes > budget || rss_end - rss_mid > slack_kib;
    if (cs.peak_vram_bytes > budget)
        fprintf(stderr, "kiosk_pipeline: peak %llu over the budget %llu\n",
                (unsigned long long)cs.peak_vram_bytes, (unsigned long long)budget);
    if (rss_end - rss_mid > slack_kib)
        fprintf(stderr, "kiosk_pipeline: RSS grew by %ld KiB after frame %d (more than 1 MiB + the budget)\n",
                rss_end - rss_mid, rss_at);
    for (int i = 0; i < n; i++) {
        si_close(st[i].alone);
        for (int k = 0; k < st[i].ni; k++)
            free(st[i].data[k]);
    }
    si_context_close(c);
    if (!bad)
        printf("kiosk_pipeline: ok\n");
    return bad;
}
