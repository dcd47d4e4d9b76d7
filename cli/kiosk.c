/* streaminfer MODEL1 MODEL2 ...: a pipeline of models in one si_context, run
 * in turn --runs times (a frame: each model once) within one --vram budget;
 * each model's outputs of the last frame (--output DIR: DIR/MODELNAME/), the
 * shared memory and traffic, and (always) a line of figures per model;
 * --stats FILE.json writes them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>
#include "cli.h"

typedef struct {
    const char *path;
    char name[256];          /* --input NAME:INPUT=FILE */
    si_model *m;
    si_tensor_in tin[MAX_INPUTS];
    void *owned[MAX_INPUTS];
    int ni;
    uint64_t uploaded, downloaded; /* all runs */
    double run_ms;                 /* all runs */
} stage;

/* emotion.json -> emotion; models/facemesh/ or .../facemesh/model.json -> facemesh */
static void model_name(const char *path, char *out, size_t n)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    size_t len = strlen(buf);
    while (len > 1 && buf[len - 1] == '/')
        buf[--len] = 0;
    if (len > 11 && !strcmp(buf + len - 11, "/model.json"))
        buf[len -= 11] = 0;
    else if (len > 5 && !strcmp(buf + len - 5, ".json"))
        buf[len -= 5] = 0;
    const char *slash = strrchr(buf, '/');
    snprintf(out, n, "%s", slash ? slash + 1 : buf);
}

/* The --input options for stage s: MODEL:INPUT=FILE with the MODEL: cut off. */
static int stage_inputs(stage *s, const cli_args *a)
{
    cli_args mine = *a;
    mine.n_ins = 0;
    size_t k = strlen(s->name);
    for (int i = 0; i < a->n_ins; i++) {
        const char *nm = a->ins[i].name;
        if (!nm || !strchr(nm, ':'))
            return cli_fail(EXIT_USAGE, "--input for several models is MODELNAME:INPUT=FILE "
                            "(got '%s%s%s')", nm ? nm : "", nm ? "=" : "", a->ins[i].file);
        if (!strncmp(nm, s->name, k) && nm[k] == ':')
            mine.ins[mine.n_ins++] = (input_arg){nm + k + 1, a->ins[i].file};
    }
    s->ni = si_input_count(s->m);
    return cli_make_inputs(s->m, &mine, s->tin, s->owned);
}

static void add_count(cJSON *o, const char *key, uint64_t v)
{
    char num[24]; /* exact past 2^53 */
    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    cJSON_AddRawToObject(o, key, num);
}

static int write_stats(const cli_args *a, const stage *st, int n, const si_context_stats *cs,
                       uint64_t steady_up, double wall_ms)
{
    cJSON *r = cJSON_CreateObject(), *models = cJSON_AddArrayToObject(r, "models");
    add_count(r, "budget_bytes", cs->budget_bytes);
    add_count(r, "peak_vram_bytes", cs->peak_vram_bytes);
    add_count(r, "host_pool_bytes", cs->host_pool_bytes);
    add_count(r, "bytes_uploaded", cs->bytes_uploaded);
    add_count(r, "bytes_downloaded", cs->bytes_downloaded);
    add_count(r, "bytes_uploaded_per_frame_steady", steady_up);
    add_count(r, "arenas_released", cs->arenas_released);
    cJSON_AddNumberToObject(r, "frames", a->runs);
    cJSON_AddNumberToObject(r, "wall_ms", wall_ms);
    for (int i = 0; i < n; i++) {
        si_stats ms;
        si_get_stats(st[i].m, &ms);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", st[i].name);
        cJSON_AddStringToObject(e, "path", st[i].path);
        add_count(e, "peak_vram_bytes", ms.peak_vram_bytes);
        add_count(e, "lower_bound_bytes", ms.lower_bound_bytes);
        add_count(e, "weights_bytes", ms.weights_bytes);
        add_count(e, "host_pool_bytes", ms.host_pool_bytes);
        add_count(e, "bytes_uploaded", st[i].uploaded);
        add_count(e, "bytes_downloaded", st[i].downloaded);
        cJSON_AddNumberToObject(e, "run_ms_mean", st[i].run_ms / a->runs);
        cJSON_AddItemToArray(models, e);
    }
    char *text = cJSON_Print(r);
    cJSON_Delete(r);
    int to_stdout = !strcmp(a->stats_path, "-");
    FILE *f = !text ? NULL : to_stdout ? stdout : fopen(a->stats_path, "w");
    int bad = !f || fprintf(f, "%s\n", text) < 0;
    free(text);
    if (f && (to_stdout ? fflush(f) != 0 : fclose(f) != 0))
        bad = 1;
    return bad ? cli_fail(EXIT_OTHER, "--stats: cannot write '%s': %s", a->stats_path, strerror(errno))
               : 0;
}

static void print_figures(const cli_args *a, const stage *st, int n, const si_context_stats *cs,
                          uint64_t steady_up, double wall_ms)
{
    char b1[64], b2[64], b3[64];
    for (int i = 0; i < n; i++) {
        si_stats ms;
        si_get_stats(st[i].m, &ms);
        printf("model    %s: lower bound %s, own arena %s, uploaded %s in %d runs, %.1f ms a run\n",
               st[i].name, cli_size(ms.lower_bound_bytes, b1), cli_size(ms.peak_vram_bytes, b2),
               cli_size(st[i].uploaded, b3), a->runs, st[i].run_ms / a->runs);
    }
    printf("memory   budget %s, peak GPU %s (all models together), host pools %s\n",
           cs->budget_bytes ? cli_size(cs->budget_bytes, b1) : "none",
           cli_size(cs->peak_vram_bytes, b2), cli_size(cs->host_pool_bytes, b3));
    printf("traffic  uploaded %s, downloaded %s, %s a frame after the first; %llu times a "
           "model gave its arena up\n", cli_size(cs->bytes_uploaded, b1),
           cli_size(cs->bytes_downloaded, b2), a->runs > 1 ? cli_size(steady_up, b3) : "-",
           (unsigned long long)cs->arenas_released);
    printf("time     %d frames of %d models, wall %.1f ms\n", a->runs, n, wall_ms);
}

int cli_kiosk_run(const cli_args *a, double t0_ms, double (*now)(void))
{
    if (a->opt.trace_path)
        return cli_fail(EXIT_USAGE, "several models: --trace is for one model");
    stage *st = calloc((size_t)a->n_models, sizeof *st);
    if (!st)
        return cli_fail(EXIT_OTHER, "out of memory");
    si_error err = {0};
    si_context *c = NULL;
    int rc = 0, n = 0;
    if (si_context_open(&a->opt, &c, &err) != SI_OK) {
        free(st);
        return cli_fail_status(&err);
    }
    for (; n < a->n_models && !rc; n++) {
        stage *s = &st[n];
        s->path = a->models[n];
        model_name(s->path, s->name, sizeof s->name);
        if (si_context_open_model(c, s->path, &a->opt, &s->m, &err) != SI_OK) {
            rc = cli_fail(cli_exit_code(err.status), "%s: %s", s->path, err.message);
            break;
        }
        rc = stage_inputs(s, a);
    }
    uint64_t first_up = 0;
    for (int f = 0; f < a->runs && !rc; f++) {
        cli_progress_run(f + 1, a->runs);
        for (int i = 0; i < n && !rc; i++) {
            if (si_run(st[i].m, st[i].tin, st[i].ni, &err) != SI_OK) {
                rc = cli_fail(cli_exit_code(err.status), "%s: %s", st[i].name, err.message);
                break;
            }
            si_stats ms;
            si_get_stats(st[i].m, &ms);
            st[i].uploaded += ms.bytes_uploaded;
            st[i].downloaded += ms.bytes_downloaded;
            st[i].run_ms += ms.run_ms;
            if (f == 0)
                first_up += ms.bytes_uploaded;
        }
    }
    double wall = now() - t0_ms;
    si_context_stats cs;
    si_context_get_stats(c, &cs);
    uint64_t steady = a->runs > 1 ? (cs.bytes_uploaded - first_up) / (uint64_t)(a->runs - 1) : 0;
    if (!rc && !a->quiet) {
        for (int i = 0; i < n; i++)
            for (int o = 0; o < si_output_count(st[i].m); o++)
                cli_print_output(st[i].m, st[i].name, o);
        print_figures(a, st, n, &cs, steady, wall);
    }
    if (!rc && a->stats_path)
        rc = write_stats(a, st, n, &cs, steady, wall);
    for (int i = 0; i < n && !rc && a->outdir; i++) { /* DIR/MODELNAME/OUTPUT.npy */
        char dir[4096], files[MAX_OUTPUTS][300];
        snprintf(dir, sizeof dir, "%s/%s", a->outdir, st[i].name);
        if (mkdir(dir, 0777) && errno != EEXIST)
            rc = cli_fail(EXIT_OTHER, "--output: cannot create folder '%s': %s", dir, strerror(errno));
        else
            rc = cli_write_outputs(st[i].m, dir, files);
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < st[i].ni && k < MAX_INPUTS; k++)
            free(st[i].owned[k]);
    si_context_close(c);
    free(st);
    return rc;
}
