#ifndef SI_TRACE_H
#define SI_TRACE_H

#include <stdint.h>

/* Tracks: 0 the counter only, 1 compute, 2 uploads, 3 spills (as the host
 * issued them), 4 GPU kernels, 5 GPU copies (GPU timestamps: glk_timing). */
enum { TRACE_GPU_KERNELS = 4, TRACE_GPU_COPIES = 5 };

typedef struct {
    int track;
    const char *name, *detail;
    double t0, t1;          /* microseconds since the run began */
    uint64_t bytes_in_use;  /* the counter's value at t1 (not on the GPU tracks) */
    double flops;           /* a GPU kernel's floating-point operations (0: not counted) */
    int transfers;          /* a GPU copy's ranges (a transfer kernel's batch) */
    uint64_t bytes;         /* a GPU copy's bytes */
} si_trace_event;

typedef struct {
    si_trace_event *ev;
    int n, cap;
} si_trace;

void trace_reset(si_trace *t);
void trace_add(si_trace *t, int track, const char *name, const char *detail, double t0_us,
               double t1_us, uint64_t bytes_in_use);
/* An event on a GPU track (no counter sample). */
void trace_add_gpu(si_trace *t, int track, const char *name, const char *detail, double t0_us,
                   double t1_us, double flops, int transfers, uint64_t bytes);
int trace_write(const si_trace *t, const char *path);
void trace_free(si_trace *t);

#endif
