#ifndef SI_TRACE_H
#define SI_TRACE_H

#include <stdint.h>

typedef struct {
    int track;              /* 0 counter only, 1 compute, 2 uploads, 3 spills */
    const char *name, *detail;
    double t0, t1;          /* microseconds since the run began */
    uint64_t bytes_in_use;
} si_trace_event;

typedef struct {
    si_trace_event *ev;
    int n, cap;
} si_trace;

void trace_reset(si_trace *t);
void trace_add(si_trace *t, int track, const char *name, const char *detail, double t0_us,
               double t1_us, uint64_t bytes_in_use);
int trace_write(const si_trace *t, const char *path);
void trace_free(si_trace *t);

#endif
