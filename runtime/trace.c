/* Chrome trace-event JSON (Perfetto, chrome://tracing): one track for compute,
 * one for uploads and reads, one for spills and downloads (as the host issued
 * them), a counter of GPU bytes in use and, where the GPU has timer queries,
 * its kernels and its copies on two tracks of GPU time. Each event is made and printed by cJSON, one a line, so a long
 * trace never needs a tree of all its events in memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <cjson/cJSON.h>
#include "trace.h"

void trace_reset(si_trace *t)
{
    t->n = 0;
}

static void push(si_trace *t, si_trace_event ev)
{
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 1024;
        si_trace_event *e = realloc(t->ev, (size_t)cap * sizeof *e);
        if (!e)
            return; /* a trace with gaps beats a failed run */
        t->ev = e;
        t->cap = cap;
    }
    t->ev[t->n++] = ev;
}

void trace_add(si_trace *t, int track, const char *name, const char *detail, double t0_us,
               double t1_us, uint64_t bytes_in_use)
{
    push(t, (si_trace_event){track, name, detail, t0_us, t1_us, bytes_in_use, 0, 0, 0});
}

void trace_add_gpu(si_trace *t, int track, const char *name, const char *detail, double t0_us,
                   double t1_us, double flops, int transfers, uint64_t bytes)
{
    push(t, (si_trace_event){track, name, detail, t0_us, t1_us, 0, flops, transfers, bytes});
}

/* Microseconds to the nanosecond, as the trace viewers show them. */
static double us3(double us) { return round(us * 1e3) / 1e3; }

static cJSON *event(const char *name, const char *ph, int tid, double ts)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", name ? name : "");
    cJSON_AddStringToObject(e, "ph", ph);
    cJSON_AddNumberToObject(e, "pid", 1);
    if (tid)
        cJSON_AddNumberToObject(e, "tid", tid);
    if (ts >= 0)
        cJSON_AddNumberToObject(e, "ts", us3(ts));
    return e;
}

/* Prints e (then frees it) after a separator; 0, or -1 when out of memory. */
static int emit(FILE *f, cJSON *e, int first)
{
    char *s = e ? cJSON_PrintUnformatted(e) : NULL;
    cJSON_Delete(e);
    if (!s)
        return -1;
    fprintf(f, "%s%s", first ? "" : ",\n", s);
    free(s);
    return 0;
}

static cJSON *metadata(const char *what, int tid, const char *name)
{
    cJSON *e = event(what, "M", tid, -1);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(e, "args"), "name", name);
    return e;
}

int trace_write(const si_trace *t, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    static const char *tracks[] = {"compute", "uploads and reads", "spills and downloads",
                                   "GPU kernels", "GPU copies"};
    int gpu = 0;
    for (int i = 0; i < t->n && !gpu; i++)
        gpu = t->ev[i].track >= TRACE_GPU_KERNELS;
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    int bad = emit(f, metadata("process_name", 0, "streaminfer"), 1);
    for (int i = 0; i < (gpu ? 5 : 3); i++)
        bad |= emit(f, metadata("thread_name", i + 1, tracks[i]), 0);
    for (int i = 0; i < t->n; i++) {
        const si_trace_event *ev = &t->ev[i];
        if (ev->track > 0) {
            cJSON *e = event(ev->name, "X", ev->track, ev->t0);
            cJSON_AddNumberToObject(e, "dur", us3(ev->t1 - ev->t0));
            cJSON *args = cJSON_AddObjectToObject(e, "args");
            cJSON_AddStringToObject(args, "detail", ev->detail ? ev->detail : "");
            if (ev->flops > 0)
                cJSON_AddNumberToObject(args, "flops", ev->flops);
            if (ev->transfers > 0)
                cJSON_AddNumberToObject(args, "transfers", ev->transfers);
            if (ev->bytes > 0)
                cJSON_AddNumberToObject(args, "bytes", (double)ev->bytes);
            bad |= emit(f, e, 0);
        }
        if (ev->track >= TRACE_GPU_KERNELS)
            continue;
        cJSON *c = event("GPU bytes in use", "C", 0, ev->t1);
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(c, "args"), "bytes", (double)ev->bytes_in_use);
        bad |= emit(f, c, 0);
    }
    fprintf(f, "\n]}\n");
    return fclose(f) == 0 && !bad ? 0 : -1;
}

void trace_free(si_trace *t)
{
    free(t->ev);
    t->ev = NULL;
    t->n = t->cap = 0;
}
