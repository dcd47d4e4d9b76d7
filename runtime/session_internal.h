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
 *   stages.c       the stages of dynamic models
 *   context.c      si_context: several models in one GL context and budget */
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
    int in_pool; /* data is the output's home in the host pool (not to be freed) */
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
    uint32_t arena;          /* GL buffer holding the arena (0: none held) */
    uint64_t arena_base;     /* where the arena starts in it: 0 in a buffer of its own, or
                              * its place in the context's one arena buffer (arena_shared) */
    int arena_shared;        /* the arena is a range of the context's arena buffer */
    uint64_t arena_cap;      /* the size of arena when it is a buffer of its own (it can be
                              * larger than this plan's arena: a stage's, passed on) */
    /* the root: the arena a stage gave up for another's turn, kept for the next
     * to take (0: none). A buffer deleted and another made at once can hold the
     * card's memory for both: the driver frees the old one only later. */
    uint32_t spare_arena;
    uint64_t spare_cap;
    /* the root: the bytes of the arena buffers made for the model and its
     * stages, and the largest of them. The card keeps a deleted buffer's memory
     * for a while after (H200: frcnn-irv2-od at --vram 256M measured 403 MiB
     * when its stages' 148.5 and 252.9 MiB arenas were made in turn), so a
     * later stage plans within the largest made (it takes that one in its
     * turn) or within what the budget has beyond all made (rt_stage_budget). */
    uint64_t arena_made, arena_largest;
    uint64_t made_before;    /* a later stage: the root's arena_made when its budget was cut
                              * to what is left beside it (0: not cut), for its refusal */
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
    uint64_t reserve_hint;   /* tile_schedule: a share to plan with first, where more than
                              * the least pool's (0: none) */
    int hinted;              /* plan_within planned with reserve_hint */
    uint64_t share_missed;   /* plan_within: the share of the last plan whose arena fit
                              * and the arena plus its share did not (0: none) */
    uint64_t *home_off;      /* per buffer; UINT64_MAX: none */
    /* Outputs written in place (backend_gpu.c): per step, the buffer whose home in
     * the mapped pool its kernel writes instead of its arena slot, -1 none; per
     * buffer, set where so (its copy home after the run is then left out).
     * NULL: not worked out for this plan yet (rt_forget_in_place). */
    int *in_place;
    uint8_t *in_place_buf;
    int weights_read;        /* weights are in their homes */
    /* Under a host-memory budget (runtime/hostmem.c, pg_host_tiers): each
     * buffer's tier; what has no home comes through staging slots at the end
     * of the pool (2 for weights read from the shards, 1 for the spill
     * file), each with the fence of the last copy that reads it */
    uint8_t *tier;           /* per buffer: PG_TIER_* */
    uint64_t *file_off;      /* per buffer: its place in the spill file */
    pg_host_plan hplan;
    uint8_t *wslot[2], *sslot;
    void *wfence[2], *sfence;
    int pend_buf, pend_slot; /* a weight read ahead into wslot[pend_slot] (-1: none) */
    int spill_fd, has_spill_fd; /* the spill file, unlinked at creation */
    int spill_writes;        /* writes to it so far (si_options.fail_spill_write) */
    char *spill_dir;         /* the handle's copy of si_options.spill_dir */
    char *f32_ops;           /* and of si_options.f32_ops (NULL: none) */
    /* the last run */
    int n_out;
    out_tensor *outs;
    void **in_dev;           /* per model input, during a run: the given data where it has
                              * 4-byte elements, else a 4-byte-element copy (in_copy) */
    uint8_t *in_copy;        /* per model input: in_dev is a copy of the run's own */
    si_stats st;
    si_trace trace;
    int plan_only;           /* si_plan: bind the inputs and plan, run nothing */
    uint64_t in_use;         /* bytes allocated in the arena now (for the trace) */
    uint64_t tile_limit;     /* steps were split into parts within this many bytes (0: none) */
    uint64_t *node_limit;    /* per graph node, the limit its steps were split within where
                              * that is coarser (budget.c tile_schedule); NULL: tile_limit */
    uint64_t tile_limit_max; /* the largest of tile_limit and node_limit's (si_stats) */
    int unfused;             /* the program runs as lowered, no epilogue fusion (budget.c) */
    /* the plan cache (runtime/plancache.c) */
    base_digest model_digest; /* model.json and the shards, once digested */
    int model_digested;
    const uint8_t *cached_plan; /* while a cached plan is tried: its bytes */
    size_t cached_plan_len;
    uint64_t cached_reserve;
    int plan_from_cache;     /* the plan in use came from the cache */
    int n_split;             /* steps split */
    glk_limits limits;       /* the device's, for stats and plans */
    uint64_t max_tensor;     /* the most bytes one tensor a step binds may hold (rt_plan_limits) */
    uint64_t untiled_bound;  /* the largest step's working set before splitting */
    /* the last rt_build_program's time: splitting steps (core_program_tile), and
     * the rest of it (program, problem, plans), for si_stats' open_*_ms */
    double build_tile_ms, build_plan_ms;
    int rebuilt; /* rt_build_program built the program anew (not the one bound) */
    /* Models with dynamic parts run in stages: the GPU program above, the host
     * interpreter, then GPU programs for what follows (built once per shape of
     * what they are given, kept here), the interpreter again ... */
    const core_valmap *given; /* while building a later stage: what it is given */
    si_model *parent;         /* a later stage: shares opt, be, io, g, rd, gpu */
    si_model **stages;
    int n_stages;
    char *stage_key;          /* a later stage: the shapes (and small values) it was built for */
    int node_prog;            /* a later stage that is one node's program (stages.c
                               * rt_offload): the node + 1; 0 otherwise */
    char **declined;          /* the root: keys of nodes the GPU was not given (outputs
                               * too small, or no GPU lowering): the host runs them */
    int n_declined;
    double offload_ms;        /* the root, in a run: the interpreter's time in node programs */
    int fail_node;            /* the node a failed build stopped at, or -1 */
    uint8_t *host_only;       /* per graph node: the interpreter runs it, never a later stage */
    /* A handle opened by si_open: calls on it take the lock, one at a time,
     * and make its GL context current in the calling thread (glk_bind). */
    pthread_mutex_t lock;
    int has_lock;
    pthread_mutex_t *lockp;   /* &lock, or the context's for a model opened into one */
    si_context *ctx;          /* opened into a context (shares its gpu, be, budget), or NULL */
    int ctx_id;               /* its number in the context's order and history */
    int cancelled;            /* progress_stop asked to stop the call under way (root model) */
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
    /* bytes [at, at+len) of buffer b between host memory at p (not in the
     * pool) and the arena; done with p when it returns */
    si_result (*transfer_ptr)(si_model *m, int b, uint64_t at, uint64_t len, void *p, int to_arena,
                              si_error *err);
    /* bytes [at, at+len) of buffer b between the pool at pool_off and the
     * arena: a GPU-side copy where the pool is mapped for the GPU. A
     * download's bytes are in the pool when it returns; an upload's may be
     * written again once *fence (set by it) is waited for (fence_wait) */
    si_result (*transfer_pool)(si_model *m, int b, uint64_t at, uint64_t len, uint64_t pool_off,
                               int to_arena, void **fence, si_error *err);
    si_result (*fence_wait)(si_model *m, void **fence, si_error *err);
    /* 1: a load queued between a step's own loads and its dispatch runs
     * beside that dispatch (transfer kernels); then sync_step(m, s) issues
     * what step s waits for, so that loads queued after it (the next step's)
     * overlap it. NULL: loads and dispatches run one after another. */
    int (*copies_overlap)(const si_model *m);
    void (*sync_step)(si_model *m, int s);
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

static inline double rt_now_ms(void) { return base_now_ms(); }

/* program.c: n floats as the halves nearest them (core_tensor.half), into
 * n x 2 bytes rounded up to 4; dst may be src (in place) */
void rt_store_halves(void *dst, const void *src, int64_t n);
/* The caller's data of model-input tensor t (PT_INPUT) during a run: its
 * input's, from the window's first element (core_tensor.input_off). */
static inline const void *rt_input_data(const si_model *m, const core_tensor *t)
{
    return (const char *)m->in_dev[t->input] + t->input_off * CORE_ELEM; /* in_dev: 4 bytes an element */
}
/* a conv's, depthwise conv's or matmul's multiplies and adds; 0 for other kinds */
double rt_step_flops(const ck_step *s);
/* Buffer b's quantized weight (core_tensor.quant) from its stored bytes into
 * dst as the arena holds it, on the host: dequantized as TensorFlow.js does,
 * then as halves where the tensor is half (dst: 4 bytes an element; may not
 * be stored). */
void rt_dequant_weight(const si_model *m, int b, const void *stored, void *dst);

/* options.c: whether name is one of list's comma-separated names */
int rt_name_listed(const char *list, const char *name);
/* options.c: SI_ERR_ARG naming the first of list's names that is no op
 * TensorFlow.js's converter writes (or an empty one); SI_OK for NULL or "". */
si_result rt_check_op_list(const char *what, const char *list, si_error *err);

/* options.c: the options a handle runs with: opt (NULL: all defaults) with
 * the debug environment variables, where set, over its fields. The one place
 * the runtime and the pager read the environment. */
void rt_effective_options(const si_options *opt, si_options *eff);

/* session.c */
/* si_open's body; ctx NULL: a model alone. */
si_result rt_open_model(si_context *ctx, const char *path, const si_options *opt, si_model **out,
                        si_error *err);
void rt_progress(si_model *m, const char *phase, int done, int total);
/* SI_ERR_CANCELLED where progress_stop asked to stop the call under way, else SI_OK. */
si_result rt_check_cancel(const si_model *m, si_error *err);
si_result rt_load_weight(void *user, int w, void *dst4, si_error *err); /* a core_weight_loader */
void rt_free_run(si_model *m);

/* program.c */
void rt_drop_program(si_model *m);
/* The outputs written in place, to be worked out again (a new plan or new homes). */
void rt_forget_in_place(si_model *m);
si_result rt_make_problem(si_model *m, si_error *err);
si_result rt_make_homes(si_model *m, uint64_t total, si_error *err);
int rt_same_binding(const si_model *m, const core_shape *shapes, void *const *vals);

/* hostmem.c: the host tiers of the current plan within the host budget
 * (home_off, tier, file_off, hplan; *homes: the bytes of the pool's homes,
 * its staging slots after them), then, once the pool exists, the staging
 * slots and the spill file. */
si_result rt_host_tiers(si_model *m, uint64_t *homes, si_error *err);
/* The staging slots, in the pool after its homes (homes bytes), and the
 * spill file where the plan has one. */
si_result rt_host_open(si_model *m, uint64_t homes, si_error *err);
void rt_host_close(si_model *m);
/* Moves buffer b of action ac (index a in the run's actions; -1: the
 * prologue) between its host side, whatever the tier, and the arena. */
si_result rt_host_move(si_model *m, const pg_action *ac, int a, si_error *err);
/* An output's (or a boundary tensor's) bytes after the run, wherever its tier
 * put them, into dst. */
si_result rt_host_read_back(si_model *m, int b, void *dst, uint64_t bytes, si_error *err);
/* The process's VmHWM or VmRSS (field "VmHWM:" ...) in bytes; 0 if unknown. */
uint64_t rt_proc_bytes(const char *field);

/* budget.c */
/* The program and plan for these input shapes (and small inputs' values),
 * splitting steps until the plan fits; kept while the binding stays. */
/* The plan cache (runtime/plancache.c): on where si_options.plan_cache_dir is
 * set, for a model's first program (not a later stage's). rt_pcache_find
 * digests the key and reads a checked entry (1: found; e must be freed
 * either way); rt_pcache_store writes m's plan under e's key. */
typedef struct {
    base_digest key;
    int keyed;
    unsigned char *bytes;
    const uint8_t *plan;
    size_t plan_len;
    uint64_t tile_limit, reserve;
    int unfused;
    uint64_t *node_limit; /* si_model.node_limit's (NULL: tile_limit for every node) */
} rt_pcache_entry;
int rt_pcache_on(const si_model *m);
int rt_pcache_find(si_model *m, const core_shape *shapes, const core_buf **vp, uint32_t align,
                   rt_pcache_entry *e);
void rt_pcache_store(si_model *m, const rt_pcache_entry *e);
void rt_pcache_entry_free(rt_pcache_entry *e);
/* Compiled programs kept in the plan cache's folder dir (NULL or "": none):
 * glk_set_binaries with files there; dir must outlive g. */
void rt_programs_bind(glk_ctx *g, const char *dir);
si_result rt_build_program(si_model *m, const core_shape *shapes, void *const *vals,
                           si_error *err);
si_model *rt_member(const si_model *root, int i);
uint64_t rt_arenas_held(const si_model *root);
uint64_t rt_stage_budget(const si_model *root);
void rt_make_room(si_model *root, si_model *active);

/* exec.c */
si_result rt_run_plan(si_model *m, si_error *err);
si_result rt_tensor_value(si_model *m, int t, int32_t *words, si_error *err);
si_result rt_put_value(si_model *m, int t, core_valmap *vm, int node, int idx, si_error *err);

/* context.c: a model opened into a context takes its GL context, backend,
 * lock and budget (rt_ctx_attach, before anything is planned); the context
 * forgets it when it closes (caller holds the lock); rt_ctx_after_run adds a
 * run's traffic to the context's and its turn to the history. */
void rt_ctx_attach(si_context *c, si_model *m);
void rt_ctx_forget(si_model *m);
void rt_ctx_after_run(si_model *m);
/* Before root (a model of c) runs with need bytes of arenas held: the other
 * models give theirs up, farthest next use first, until need fits beside what
 * they keep; returns the bytes they keep. */
uint64_t rt_ctx_make_room(si_context *c, si_model *root, uint64_t need);
/* The arenas all the models of c hold now; its peak follows them. */
uint64_t rt_ctx_held(const si_context *c);
void rt_ctx_note_peak(si_context *c);
/* The host pools of c's models other than m (for the driver's share). */
uint64_t rt_ctx_other_pools(const si_context *c, const si_model *m);
/* A context with a VRAM budget on the GPU keeps one arena buffer; its
 * members' arenas are ranges of it (rt_ctx_arena_take gives m one, making
 * room as rt_ctx_make_room does where no hole fits). */
int rt_ctx_one_arena(const si_context *c);
si_result rt_ctx_arena_take(si_context *c, si_model *m, si_error *err);
/* The driver's share of the budget with every host pool of m's context (or
 * m's stages) counted: what the one arena buffer leaves free. */
uint64_t rt_driver_reserve_all(const si_model *m, uint64_t budget);

/* stages.c */
void rt_stage_free(si_model *s);
si_result rt_run_dynamic_part(si_model *m, core_valmap *vm, si_error *err);

#endif
