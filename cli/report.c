/* streaminfer — what a run gives back: .npy outputs, the summary on stdout,
 * the --stats JSON (cJSON values, one key a line: scripts read them with sed). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "cli.h"

static void sanitize(const char *in, char *out, size_t n)
{
    size_t i = 0;
    for (; in[i] && i + 1 < n; i++) {
        char c = in[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        out[i] = ok ? c : '_';
    }
    out[i] = 0;
}

int cli_write_outputs(si_model *m, const char *outdir, char files[][300])
{
    int no = si_output_count(m);
    for (int o = 0; o < no && o < MAX_OUTPUTS; o++) {
        char base[256];
        sanitize(si_output_name(m, o), base, sizeof base);
        snprintf(files[o], 300, "%s.npy", base);
        if (!outdir)
            continue;
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        const void *data;
        si_error err = {0};
        si_output(m, o, &dt, &rank, shape, &data, NULL);
        char *path = NULL;
        if (asprintf(&path, "%s/%s", outdir, files[o]) < 0)
            return cli_fail(EXIT_OTHER, "out of memory");
        si_result ws = si_npy_write(path, dt, rank, shape, data, &err);
        free(path);
        if (ws != SI_OK)
            return cli_fail(EXIT_OTHER, "%s", err.message);
    }
    return 0;
}

/* One line for output o: name (after "MODEL/" when model is set), dtype,
 * shape and its first values. */
void cli_print_output(si_model *m, const char *model, int o)
{
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    const void *data;
    si_output(m, o, &dt, &rank, shape, &data, NULL);
    int64_t n = 1;
    printf("output   %s%s%s %s [", model ? model : "", model ? "/" : "", si_output_name(m, o),
           si_dtype_name(dt));
    for (int d = 0; d < rank; d++) {
        printf(d ? ",%lld" : "%lld", (long long)shape[d]);
        n *= shape[d];
    }
    printf("] first values:");
    for (int64_t k = 0; k < n && k < 5; k++) {
        if (dt == SI_FLOAT32)
            printf(" %.6g", ((const float *)data)[k]);
        else if (dt == SI_INT32)
            printf(" %d", ((const int32_t *)data)[k]);
        else
            printf(" %d", ((const uint8_t *)data)[k]);
    }
    printf("%s\n", n > 5 ? " ..." : "");
}

/* The GPU's figures; with --backend host they would describe host memory and
 * memcpy, so they are not printed there. */
static void print_gpu_figures(const si_stats *st)
{
    char b1[64], b2[64], b3[64], b4[64];
    printf("memory   budget %s, peak GPU %s, lower bound %s, weights %s\n",
           st->budget_bytes ? cli_size(st->budget_bytes, b1) : "none", cli_size(st->peak_vram_bytes, b2),
           cli_size(st->lower_bound_bytes, b3), cli_size(st->weights_bytes, b4));
    if (st->driver_reserve_bytes)
        printf("driver   %s of the budget left to the GPU driver\n", cli_size(st->driver_reserve_bytes, b1));
    printf("paging   %llu segments, %llu evictions, spilled %s, reloaded %s\n",
           (unsigned long long)st->segments, (unsigned long long)st->evictions,
           cli_size(st->bytes_spilled, b1), cli_size(st->bytes_reloaded, b2));
    if (st->steps_split && st->tile_limit_max_bytes > st->tile_limit_bytes)
        printf("tiling   %llu steps split into parts of at most %s where the budget binds, %s "
               "elsewhere (largest step untiled %s)\n", (unsigned long long)st->steps_split,
               cli_size(st->tile_limit_bytes, b1), cli_size(st->tile_limit_max_bytes, b3),
               cli_size(st->untiled_bound_bytes, b2));
    else if (st->steps_split)
        printf("tiling   %llu steps split into parts of at most %s (largest step untiled %s)\n",
               (unsigned long long)st->steps_split,
               st->tile_limit_bytes ? cli_size(st->tile_limit_bytes, b1) : "one buffer",
               cli_size(st->untiled_bound_bytes, b2));
    printf("limits   one buffer at most %s (GPU storage block %s, %llu elements a dispatch, "
           "%llu by 32-bit indices)\n", cli_size(st->max_buffer_bytes, b1),
           st->storage_block_bytes ? cli_size(st->storage_block_bytes, b2) : "none",
           (unsigned long long)st->max_dispatch_elements, (unsigned long long)st->max_index_elements);
    printf("traffic  uploaded %s, downloaded %s\n", cli_size(st->bytes_uploaded, b1),
           cli_size(st->bytes_downloaded, b2));
    printf("host     pool %s (budget %s), read from files %s, spilled to file %s, peak RSS %s "
           "(empty context %s)\n", cli_size(st->host_pool_bytes, b1),
           st->host_budget_bytes ? cli_size(st->host_budget_bytes, b2) : "none",
           cli_size(st->file_bytes_read, b3), cli_size(st->bytes_spilled_to_file, b4),
           cli_size(st->rss_peak_bytes, (char[64]){0}), cli_size(st->rss_baseline_bytes, (char[64]){0}));
}

void cli_print_results(si_model *m, const cli_args *a, const cli_timing *t)
{
    si_stats st;
    si_get_stats(m, &st);
    char b1[64];
    printf("model    %s\n", a->model);
    for (int o = 0; o < si_output_count(m); o++)
        cli_print_output(m, NULL, o);
    if (a->opt.backend == SI_BACKEND_HOST)
        printf("memory   weights %s (host reference: no GPU figures)\n", cli_size(st.weights_bytes, b1));
    else
        print_gpu_figures(&st);
    printf("time     open %.1f ms, run %.1f ms (%llu %ssteps%s), wall %.1f ms\n", st.open_ms,
           st.run_ms, (unsigned long long)st.gpu_steps, a->opt.backend == SI_BACKEND_HOST ? "" : "GPU ",
           st.host_ms > 0 ? ", then the host interpreter" : "", t->wall_ms);
    if (t->timed > 1 || t->runs > 1)
        printf("runs     %d timed%s: min %.1f ms, median %.1f ms, p90 %.1f ms, max %.1f ms\n",
               t->timed, t->runs > t->timed ? " after 1 warm-up run" : "", t->min, t->median,
               t->p90, t->max);
}

/* Milliseconds to the microsecond: cJSON then never writes an exponent. */
static double ms3(double ms) { return round(ms * 1e3) / 1e3; }

/* {"key": value, ...} a key a line, each value printed by cJSON; arrays an
 * element a line. */
static int print_lines(FILE *f, const cJSON *obj)
{
    fputs("{\n", f);
    for (const cJSON *c = obj->child; c; c = c->next) {
        fprintf(f, "  \"%s\": ", c->string);
        if (cJSON_IsArray(c)) {
            fputs("[", f);
            for (const cJSON *e = c->child; e; e = e->next) {
                char *s = cJSON_PrintUnformatted(e);
                if (!s)
                    return -1;
                fprintf(f, "%s\n    %s", e == c->child ? "" : ",", s);
                free(s);
            }
            fputs(c->child ? "\n  ]" : "]", f);
        } else {
            char *s = cJSON_PrintUnformatted(c);
            if (!s)
                return -1;
            fputs(s, f);
            free(s);
        }
        fputs(c->next ? ",\n" : "\n", f);
    }
    fputs("}\n", f);
    return 0;
}

static void add_outputs(cJSON *root, si_model *m, char files[][300])
{
    cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
    for (int o = 0; o < si_output_count(m) && o < MAX_OUTPUTS; o++) {
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        si_output(m, o, &dt, &rank, shape, NULL, NULL);
        cJSON *e = cJSON_CreateObject(), *sh = cJSON_CreateArray();
        cJSON_AddStringToObject(e, "name", si_output_name(m, o));
        cJSON_AddStringToObject(e, "file", files[o]);
        for (int d = 0; d < rank; d++)
            cJSON_AddItemToArray(sh, cJSON_CreateNumber((double)shape[d]));
        cJSON_AddItemToObject(e, "shape", sh);
        cJSON_AddStringToObject(e, "dtype", si_dtype_name(dt));
        cJSON_AddItemToArray(outs, e);
    }
}

static cJSON *stats_json(si_model *m, const cli_args *a, const cli_timing *t, char files[][300])
{
    si_stats st;
    si_get_stats(m, &st);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "model", a->model);
    const struct { const char *key; uint64_t v; } counts[] = {
        {"budget_bytes", st.budget_bytes}, {"peak_vram_bytes", st.peak_vram_bytes},
        {"lower_bound_bytes", st.lower_bound_bytes}, {"untiled_bound_bytes", st.untiled_bound_bytes},
        {"tile_limit_bytes", st.tile_limit_bytes}, {"tile_limit_max_bytes", st.tile_limit_max_bytes},
        {"steps_split", st.steps_split},
        {"weights_bytes", st.weights_bytes}, {"host_pool_bytes", st.host_pool_bytes},
        {"host_budget_bytes", st.host_budget_bytes}, {"host_pool_mapped", st.host_pool_mapped},
        {"file_bytes_read", st.file_bytes_read},
        {"bytes_spilled_to_file", st.bytes_spilled_to_file}, {"rss_peak_bytes", st.rss_peak_bytes},
        {"rss_baseline_bytes", st.rss_baseline_bytes},
        {"driver_reserve_bytes", st.driver_reserve_bytes}, {"max_buffer_bytes", st.max_buffer_bytes},
        {"storage_block_bytes", st.storage_block_bytes},
        {"max_dispatch_elements", st.max_dispatch_elements},
        {"max_index_elements", st.max_index_elements}, {"largest_buffer_bytes", st.largest_buffer_bytes},
        {"bytes_uploaded", st.bytes_uploaded}, {"bytes_downloaded", st.bytes_downloaded},
        {"bytes_spilled", st.bytes_spilled}, {"bytes_reloaded", st.bytes_reloaded},
        {"evictions", st.evictions}, {"segments", st.segments}, {"gpu_steps", st.gpu_steps},
        {"gpu_host_nodes", st.gpu_host_nodes},
        {"dynamic_part", st.dynamic_part},
        {"plan_from_cache", st.plan_from_cache}, {"programs_from_cache", st.programs_from_cache},
        {"programs_compiled", st.programs_compiled}, {"derived_bytes", st.derived_bytes},
        {"f16_tensors", st.f16_tensors}, {"f32_tensors", st.f32_tensors},
        {"f16_overflows", st.f16_overflows}, {"bytes_out_in_place", st.bytes_out_in_place}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        char num[24]; /* exact past 2^53, where a double is not */
        snprintf(num, sizeof num, "%llu", (unsigned long long)counts[i].v);
        cJSON_AddRawToObject(r, counts[i].key, num);
    }
    const struct { const char *key; double v; } times[] = {
        {"open_ms", st.open_ms}, {"run_ms", st.run_ms}, {"upload_ms", st.upload_ms},
        {"compute_ms", st.compute_ms}, {"issue_ms", st.issue_ms}, {"stall_ms", st.stall_ms}, {"host_ms", st.host_ms},
        {"file_ms", st.file_ms}, {"open_read_ms", st.open_read_ms}, {"open_gpu_ms", st.open_gpu_ms},
        {"open_plan_ms", st.open_plan_ms}, {"open_tile_ms", st.open_tile_ms},
        {"open_compile_ms", st.open_compile_ms}, {"run_plan_ms", st.run_plan_ms},
        {"run_tile_ms", st.run_tile_ms}, {"run_compile_ms", st.run_compile_ms},
        {"wall_ms", t->wall_ms}, {"run_ms_min", t->min}, {"run_ms_median", t->median},
        {"run_ms_p90", t->p90}, {"run_ms_max", t->max}, {"first_run_ms", t->first}};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        cJSON_AddNumberToObject(r, times[i].key, ms3(times[i].v));
    cJSON_AddNumberToObject(r, "runs", t->runs);
    cJSON_AddNumberToObject(r, "timed_runs", t->timed);
    add_outputs(r, m, files);
    return r;
}

int cli_write_stats(si_model *m, const cli_args *a, const cli_timing *t, char files[][300])
{
    int to_stdout = !strcmp(a->stats_path, "-");
    cJSON *root = stats_json(m, a, t, files);
    FILE *f = !root ? NULL : to_stdout ? stdout : fopen(a->stats_path, "w");
    if (!f) {
        cJSON_Delete(root);
        return cli_fail(EXIT_OTHER, "--stats: cannot write '%s': %s", a->stats_path,
                        root ? strerror(errno) : "out of memory");
    }
    int bad = print_lines(f, root);
    cJSON_Delete(root);
    if ((to_stdout ? fflush(f) != 0 : fclose(f) != 0) || bad)
        return cli_fail(EXIT_OTHER, "--stats: cannot write '%s': %s", a->stats_path,
                        bad ? "out of memory" : strerror(errno));
    return 0;
}
