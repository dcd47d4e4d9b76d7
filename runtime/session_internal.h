/* runtime internals shared by its files: the handle (si_model), the backend
 * interface the executor runs through, and each file's entry points.
 *   session.c      the public API, lifecycle, the handle's lock
 *   options.c      si_options with the environment's debug overrides
 *   program.c      one binding's program, its pager problem and host pool
 *   budget.c       the budget's one owner: tiling schedule, driver's share,
 *                  re-planning, and making room between stages at run time
 *   exec.c         the executor: the plan's actions, through a backend
 *   backend_gpu.c  the backend on a GL context (glkernels)
 *   backend_host.c the backend in host memory (the reference kernels)
 *   stages.c       the stages of dynamic models */
#ifndef SI_RUNTIME_SESSION_INTERNAL_H
#define SI_RUNTIME_SESSION_INTERNAL_H

#include <pthread.h>
#include <time.h>
#include "runtime.h"
#include "trace.h"
#include "limits.h"
#include "../base/base.h"
#include "../core/interp.h"

typedef struct {
    si_dtype dtype;
    core_shape shape;
    void *data; /* user layout: float32 / int32 / 1-byte bool */
} out_tensor;

typedef struct rt_backend rt_backend;

struct si_model {
    si_options opt;          /* with the environment's overrides (rt_effective_options) */
    const rt_backend *be;    /* where the plan runs: rt_backend_gpu or rt_backend_host */
    io_model *io;
    core_graph *g;
    io_reader *rd;
    glk_ctx *gpu;
    /* the current program */
    core_shape *bound;       /* per input */
    core_buf *bound_vals;    /* per input: the value, for inputs bound by value (data NULL if not) */
    core_program *prog;
    pg_problem pb;
    pg_plan *plan;
    int *buf_of;             /* per tensor storage root: buffer id or -1 */
    int resident;            /* the plan's prologue has run */
    uint32_t arena;          /* GL buffer, arena_bytes long */
    uint8_t *host_arena;     /* host backend: the same arena in host memory */
    uint64_t *off;           /* per buffer: its offset while allocated */
    /* The host pool: each buffer's home in host memory (a weight's stored bytes,
     * a constant, the input, an activation's spilled or downloaded copy). With
     * GL_EXT_buffer_storage it is one persistently mapped GL buffer in client
     * storage, so every transfer is a GPU-side copy; otherwise plain memory. */
    uint8_t *home;
    uint32_t home_buf;
    uint64_t home_bytes;
    uint64_t reserve;        /* of the budget, left to the GPU driver (driver_reserve) */
    uint64_t *home_off;      /* per buffer; UINT64_MAX: none */
    int weights_read;        /* weights are in their homes */
    /* the last run */
    int n_out;
    out_tensor *outs;
    void **in_dev;           /* per model input: 4-byte-element copy of the given data */
    si_stats st;
    si_trace trace;
    int plan_only;           /* si_plan: bind the inputs and plan, run nothing */
    uint64_t in_use;         /* bytes allocated in the arena now (for the trace) */
    uint64_t tile_limit;     /* steps were split into parts within this many bytes (0: none) */
    int n_split;             /* steps split */
    glk_limits limits;       /* the device's, for stats and plans */
    uint64_t max_tensor;     /* the most bytes one tensor a step binds may hold (rt_plan_limits) */
    uint64_t untiled_bound;  /* the largest step's working set before splitting */
    /* the last rt_build_program's time: splitting steps (core_program_tile), and
     * the rest of it (program, problem, plans), for si_stats' open_*_ms */
    double build_tile_ms, build_plan_ms;
    /* Models with dynamic parts run in stages: the GPU program above, the host
     * interpreter, then GPU programs for what follows (built once per shape of
     * what they are given, kept here), the interpreter again ... */
    const core_valmap *given; /* while building a later stage: what it is given */
    si_model *parent;         /* a later stage: shares opt, be, io, g, rd, gpu */
    si_model **stages;
    int n_stages;
    char *stage_key;          /* a later stage: the shapes (and small values) it was built for */
    int fail_node;            /* the node a failed build stopped at, or -1 */
    uint8_t *host_only;       /* per graph node: the interpreter runs it, never a later stage */
    /* A handle opened by si_open: calls on it take the lock, one at a time,
     * and make its GL context current in the calling thread (glk_bind). */
    pthread_mutex_t lock;
    int has_lock;
};

/* Where the executor's actions happen, as ggml's backend interface: the arena
 * and the host pool, the moves between them, and the steps. The executor and
 * the budget ask the backend instead of testing m->gpu. */
struct rt_backend {
    const char *name;
    int holds_vram;   /* its arenas are GPU memory: they count against the budget */
    const char *(*renderer)(const si_model *m);
    uint32_t (*offset_align)(const si_model *m); /* offsets of buffers a step binds */
    si_result (*arena_ensure)(si_model *m, si_error *err); /* m->plan->arena_bytes, if not held */
    /* gives the arena up between turns of stages (what was resident goes) */
    void (*arena_release)(si_model *m);
    void (*arena_free)(si_model *m);                        /* with the program */
    si_result (*pool_create)(si_model *m, uint64_t bytes, si_error *err); /* m->home */
    void (*pool_free)(si_model *m);
    /* buffer b between its home and its place in the arena */
    si_result (*transfer)(si_model *m, int b, int to_arena, si_error *err);
    si_result (*run_step)(si_model *m, int s, si_error *err);
    /* compiles what the plan's steps run (shaders), before any run; NULL: nothing to compile */
    si_result (*prepare)(si_model *m, si_error *err);
    /* after step s: the host reference on the same inputs, steps that differ
     * by more than opt.check_steps named on stderr; NULL: nothing to compare */
    void (*check_step)(si_model *m, int s);
    /* after an action that moved bytes (0: a step): lets the queue drain */
    si_result (*throttle)(si_model *m, uint64_t bytes, si_error *err);
    si_result (*finish)(si_model *m, si_error *err); /* waits for what is queued */
};

extern const rt_backend rt_backend_gpu;
extern const rt_backend rt_backend_host;

static inline double rt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* options.c: the options a handle runs with: opt (NULL: all defaults) with
 * the debug environment variables, where set, over its fields. The one place
 * the runtime and the pager read the environment. */
void rt_effective_options(const si_options *opt, si_options *eff);

/* session.c */
void rt_progress(si_model *m, const char *phase, int done, int total);
si_result rt_load_weight(void *user, int w, void *dst4, si_error *err); /* a core_weight_loader */
void rt_free_run(si_model *m);

/* program.c */
void rt_drop_program(si_model *m);
si_result rt_make_problem(si_model *m, si_error *err);
si_result rt_make_homes(si_model *m, uint64_t total, si_error *err);
int rt_same_binding(const si_model *m, const core_shape *shapes, void *const *vals);

/* budget.c */
/* The program and plan for these input shapes (and small inputs' values),
 * splitting steps until the plan fits; kept while the binding stays. */
si_result rt_build_program(si_model *m, const core_shape *shapes, void *const *vals,
                           si_error *err);
si_model *rt_member(const si_model *root, int i);
uint64_t rt_arenas_held(const si_model *root);
void rt_make_room(si_model *root, si_model *active);

/* exec.c */
si_result rt_run_plan(si_model *m, si_error *err);
si_result rt_tensor_value(si_model *m, int t, int32_t *words, si_error *err);
si_result rt_put_value(si_model *m, int t, core_valmap *vm, int node, int idx, si_error *err);

/* stages.c */
void rt_stage_free(si_model *s);
si_result rt_run_dynamic_part(si_model *m, core_valmap *vm, si_error *err);

#endif
