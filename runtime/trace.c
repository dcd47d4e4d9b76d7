/* Chrome trace-event JSON (Perfetto, chrome://tracing): one track for compute,
 * one for uploads and reads, one for spills and downloads, and a counter of GPU
 * bytes in use. */
#include <stdio.h>
#include <stdlib.h>
#include "trace.h"

void trace_reset(si_trace *t)
{
    t->n = 0;
}

void trace_add(si_trace *t, int track, const char *name, const char *detail, double t0_us,
               double t1_us, uint64_t bytes_in_use)
{
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 1024;
        si_trace_event *e = realloc(t->ev, (size_t)cap * sizeof *e);
        if (!e)
            return; /* a trace with gaps beats a failed run */
        t->ev = e;
        t->cap = cap;
    }
    t->ev[t->n++] = (si_trace_event){track, name, detail, t0_us, t1_us, bytes_in_use};
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

int trace_write(const si_trace *t, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    static const char *tracks[] = {"compute", "uploads and reads", "spills and downloads"};
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": "
               "\"streaminfer\"}}");
    for (int i = 0; i < 3; i++)
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %d, "
                   "\"args\": {\"name\": \"%s\"}}",
                i + 1, tracks[i]);
    for (int i = 0; i < t->n; i++) {
        const si_trace_event *e = &t->ev[i];
        if (e->track > 0) {
            fprintf(f, ",\n{\"name\": ");
            json_str(f, e->name);
            fprintf(f, ", \"ph\": \"X\", \"pid\": 1, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, "
                       "\"args\": {\"detail\": ",
                    e->track, e->t0, e->t1 - e->t0);
            json_str(f, e->detail);
            fprintf(f, "}}");
        }
        fprintf(f, ",\n{\"name\": \"GPU bytes in use\", \"ph\": \"C\", \"pid\": 1, \"ts\": %.3f, "
                   "\"args\": {\"bytes\": %llu}}",
                e->t1, (unsigned long long)e->bytes_in_use);
    }
    fprintf(f, "\n]}\n");
    return fclose(f) == 0 ? 0 : -1;
}

void trace_free(si_trace *t)
{
    free(t->ev);
    t->ev = NULL;
    t->n = t->cap = 0;
}
