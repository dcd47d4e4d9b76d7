/* streaminfer — run TensorFlow.js graph models on a GPU inside a VRAM budget.
 * The whole public interface: opaque handles, status codes, an error struct. */
#ifndef STREAMINFER_H
#define STREAMINFER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; si_version() gives the library's ("0.4.0"). */
#define SI_VERSION_MAJOR 0
#define SI_VERSION_MINOR 4
#define SI_VERSION_PATCH 0

typedef enum {
    SI_OK = 0,
    SI_ERR_ARG,      /* bad argument from the caller */
    SI_ERR_IO,       /* a file could not be read or written */
    SI_ERR_FORMAT,   /* malformed model.json, manifest, shard or .npy */
    SI_ERR_UNSUPPORTED, /* an op or attribute streaminfer does not implement */
    SI_ERR_SHAPE,    /* shapes or dtypes do not agree */
    SI_ERR_GPU,      /* EGL/GL failure */
    SI_ERR_BUDGET,   /* no plan fits the VRAM budget */
    SI_ERR_NOMEM,    /* host allocation failed */
    SI_ERR_CANCELLED /* si_options.progress_stop asked to stop */
} si_result;

typedef struct {
    si_result status;
    char message[512];
} si_error;

typedef enum { SI_FLOAT32 = 0, SI_INT32 = 1, SI_BOOL = 2 } si_dtype;

typedef enum { SI_IO_MMAP = 0, SI_IO_URING = 1 } si_io_mode;

/* Where steps execute. SI_BACKEND_HOST runs every step with the host reference
 * implementation (no GL at all); it exists for tests and debugging. */
/* SI_BACKEND_AUTO: the GPU where a context opens, else the host (for plans,
 * which depend on the GPU they are made for). */
typedef enum { SI_BACKEND_GPU = 0, SI_BACKEND_HOST = 1, SI_BACKEND_AUTO = 2 } si_backend;

/* How float tensors are stored on the GPU (si_options.precision). */
typedef enum { SI_PRECISION_F32 = 0, SI_PRECISION_F16 = 1 } si_precision;

#define SI_MAX_RANK 6

typedef struct {
    const char *name;       /* input name as in the graph (NULL: the only input) */
    si_dtype dtype;
    int rank;
    int64_t shape[SI_MAX_RANK];
    const void *data;       /* float32 / int32 / bool (1 byte each) in C order */
} si_tensor_in;

typedef struct {
    uint64_t vram_budget;   /* bytes; 0 = no limit */
    si_io_mode io_mode;
    si_backend backend;
    /* Called between phases and steps; may be NULL. */
    void (*progress)(void *user, const char *phase, int done, int total);
    void *progress_user;
    /* Cancellation; may be NULL. Called with progress_user at the same points
     * as progress, after it (phases "plan", "weights", "run": each step); a
     * nonzero return stops the si_open, si_plan or si_run under way at that
     * point with SI_ERR_CANCELLED ("cancelled by the progress callback ...").
     * The handle stays usable: the next call starts afresh (a cancelled run
     * gives its arena up, so resident weights are uploaded again); a cancelled
     * si_open returns no handle and leaves nothing behind. */
    int (*progress_stop)(void *user, const char *phase, int done, int total);
    /* When set, each si_run writes a Chrome trace-event file here (open it in
     * Perfetto or chrome://tracing): compute, uploads/reads and spills as the
     * host issued them, GPU bytes in use as a counter, and where the GPU has
     * timer queries (GL_EXT_disjoint_timer_query) its kernels and copies in GPU
     * time on two more tracks (kernels with "flops" in their args); the run then
     * waits for nothing. Without timer queries tracing waits for the GPU after
     * every action so durations are real; it slows the run. */
    const char *trace_path;
    /* Lowers the device's limit on the bytes of one buffer a step binds
     * (GL_MAX_SHADER_STORAGE_BLOCK_SIZE: 128 MiB on llvmpipe), never raises it;
     * 0: the device's. Tensors bigger than the limit live as bands, as on a GPU
     * whose limit is that small: for tests of that on any machine. */
    uint64_t max_buffer_bytes;
    /* Host memory for the tensors a run holds on the host: the inputs given
     * to si_run (read in place, not copied) and the host pool (weights' host
     * copies, spills, outputs, and the staging of what comes from files);
     * 0 = no limit (every weight read once and kept, every spill kept).
     * Within a limit, weights that do not fit are read again from the model's
     * shards each time the plan loads them, and spills that do not fit go to a
     * spill file; too small for any plan: SI_ERR_BUDGET naming the smallest
     * host budget that works. si_output hands outputs back from their homes in
     * the pool (not copied; those that did not fit are read back from the
     * file). */
    uint64_t host_mem_budget;
    /* Where the spill file is made (NULL: $TMPDIR, else /tmp). It is unlinked
     * as soon as it is created, so nothing is left behind on close, failure or
     * a crash. */
    const char *spill_dir;
    /* Tools for tests and kernel work; 0 is the default of each. The
     * environment variables of the same names (SI_STAGES, SI_DRIVER_RESERVE,
     * SI_CHECK_STEPS, SI_PLAN_PREFETCH, SI_PLAN_DEBUG) override them, as debug
     * overrides only. */
    int no_stages;          /* 1: everything after the first host-interpreter node stays on the host */
    int driver_reserve;     /* 1: leave the GPU driver's share free on llvmpipe too (as on a real GPU) */
    double check_steps;     /* > 0: after each GPU step run the host reference, name steps off by more */
    int plan_prefetch;      /* n > 0: the planner loads what the next n steps need ahead of them where it fits */
    int plan_debug;         /* 1: print each planning attempt on stderr */
    int fail_spill_write;   /* n > 0: the nth write to the spill file fails (tests of the clean-up) */
    /* Injected GPU failures (tests of what a failure leaves behind, on any GPU;
     * counted per GL context from its opening; SI_FAIL_GPU_ALLOC,
     * SI_FAIL_GPU_COMMAND, SI_FAIL_GPU_LOST override them): n > 0 makes the nth
     * GPU buffer allocation fail as out of memory, the nth GPU command
     * (dispatch, copy, upload, download) fail as out of memory, or the GL
     * context be lost at the nth command. A failed call returns SI_ERR_GPU;
     * after an out-of-memory the handle stays usable (the next run starts
     * afresh); after a lost context every call on the handle (or on every model
     * of its si_context) returns SI_ERR_GPU until it is closed, and opening
     * again works. */
    int fail_gpu_alloc;
    int fail_gpu_command;
    int fail_gpu_lost;
    /* 1: act as if the GPU lacked GL_EXT_buffer_storage (SI_FAIL_GPU_NO_STORAGE
     * set overrides it): no mapped host memory, so the host pool is plain
     * memory, loads are uploads (a quantized weight dequantized on the host
     * first) and read backs map each time; the same results (tests of that
     * path on any GPU) */
    int fail_gpu_no_storage;
    /* 1: compile the shaders of the plan's steps in the first si_run instead
     * of in si_open (for a handle opened to plan or describe, never to run) */
    int defer_compile;
    /* A folder for the plan cache (NULL or "": none). A model's plan is kept
     * there, keyed by a digest of the model's bytes (model.json and shards),
     * the input shapes, the budget, the device's limits and renderer, the
     * options that change plans and the version, and taken from there by the
     * next si_open or si_run with the same key instead of planning again; an
     * entry that is stale, cut short or edited is found out (checksum, and the
     * plan checked against the model's program) and planned again. The GPU
     * programs compiled are kept there too, as the driver's binaries
     * (glProgramBinary) keyed by their source, the renderer and the driver's
     * version; one cut short, edited or refused by the driver is compiled
     * again and replaced. The folder is made if its parent exists; failing to
     * write costs only the saving. */
    const char *plan_cache_dir;
    /* 1: run every step as lowered: no epilogue fusion (a per-channel scale or
     * bias, a residual Add, an activation, a clip, a hard swish or a hard sigmoid
     * after a conv or matmul as steps
     * of their own, as the model's graph has them); the outputs are bitwise the
     * same either way.
     * SI_NO_FUSE (set, whatever its value) overrides it. For comparing. */
    int no_fuse;
    /* How loads from the host pool reach the GPU: 0 (default) as transfer
     * kernels, which a following step runs beside, on a GPU, and as
     * glCopyBufferSubData (which never overlaps a kernel) on a CPU device
     * (llvmpipe, softpipe, SwiftShader); 1: transfer kernels everywhere; -1:
     * glCopyBufferSubData everywhere. The same bytes arrive either way. With 1,
     * also a model output that one step writes whole and no step reads after
     * is written by that step's kernel straight into its place in the mapped
     * host pool, not copied there after the step (si_stats.bytes_out_in_place;
     * not the default on a GPU until measured there).
     * SI_COPY_KERNELS (1 or -1) overrides it. For measuring and tests. */
    int copy_kernels;
    /* Where the host interpreter's ordinary nodes over big tensors that only
     * move data (a detector's loop body transposing and splitting its
     * [anchors, classes] scores) run: 0 or -1 (default) on the host; 1 on the
     * GPU as programs of their own, with no VRAM budget only. The same bits
     * either way (--stats gpu_host_nodes counts them). Not the default: the
     * values go back to the host for what follows (NMS), so the round trip
     * bought no time on the H200, and under a budget the card's memory
     * measured over it (effdet-d7-od: 273 MiB at 256M, bench/results/big-h200.md).
     * SI_LOOP_NODES (1 or -1) overrides it. */
    int loop_nodes;
    /* Which conv2d kernel runs: NULL or "" (default) the device's choice (on a
     * GPU "vec": an invocation an output, x read four channels a load where it
     * can; on a CPU device tiles of the output through shared memory; both the
     * bits of "plain", an invocation an output); "plain", "vec", "oc4" (four
     * output channels an invocation where the channels come in fours),
     * "tiled[:BM,BN,TM,TN,BK]" or "split[:DIV,MAX,AIM]" force one
     * (glkernels/glk_program.c conv_variant). split cuts
     * each output's taps into runs added in a tree where the op has few outputs
     * and long sums: faster on a GPU (up to 1.7x), but other bits, which move
     * away from TensorFlow.js's by more than float rounding where a model
     * selects (faceboxes keeps another box). Outputs are bitwise the same at
     * every budget whichever runs. Models in an si_context run with the
     * context's. Anything else: SI_ERR_ARG at si_open. SI_CONV overrides it. */
    const char *conv_kernel;
    /* SI_PRECISION_F32 (0, default) or SI_PRECISION_F16: float tensors stored
     * on the GPU and in the host pool as IEEE half, two a 32-bit word, where
     * every step that writes or reads one loads and stores halves
     * (elementwise, copies, pads, pooling, resizes, gathers, selects,
     * convolutions and matmuls: their x and filter): activations, float32
     * weights (rounded once when read from the shards; quantized ones stay as
     * stored in the host pool and across the bus, dequantized into halves as
     * they are loaded), folded constants and the model's
     * inputs (rounded as they are uploaded). Kernels compute in float32 and
     * round once on store, saturating at the largest half.
     * Never half: int32 and bool tensors, the model's outputs, what
     * the host interpreter or a host step reads, tensors of fewer than 4096
     * elements, floats that become indices, sizes or masks (casts to int or
     * bool, comparisons, and the elementwise steps before them), the
     * arguments of Exp, Log, Softplus and Pow (core/precision.c). Budgets count
     * the stored bytes; outputs at every budget are bitwise those of f16 with
     * no budget (not those of f32). The GPU backend only (the host backend
     * computes in float32). SI_PRECISION (f32 or f16) overrides it; anything
     * else: SI_ERR_ARG at si_open. */
    si_precision precision;
    /* With SI_PRECISION_F16: ops (as model.json names them, comma-separated:
     * "Sigmoid,_FusedConv2D") whose steps keep every tensor they read or
     * write float32, for a model that needs more precision somewhere;
     * "Placeholder" keeps the model's inputs float32, "Const" its float32
     * weights and folded constants. NULL or
     * "": none. A name that is no op TensorFlow.js's converter writes:
     * SI_ERR_ARG at si_open. */
    const char *f32_ops;
} si_options;

typedef struct {
    uint64_t budget_bytes;
    uint64_t peak_vram_bytes;    /* counted by the pager, every GPU byte we own */
    uint64_t lower_bound_bytes;  /* largest working set of any step (after tiling) */
    uint64_t untiled_bound_bytes; /* largest working set of any step before tiling */
    uint64_t tile_limit_bytes;   /* steps were split into parts of at most this (0: none) */
    /* the coarsest parts: where only the nodes that bind a budget were split
     * within tile_limit_bytes, the others' parts are up to this; else
     * tile_limit_bytes */
    uint64_t tile_limit_max_bytes;
    uint64_t steps_split;        /* steps split into parts */
    uint64_t weights_bytes;      /* bytes of weights as stored in the shards */
    /* host memory holding what moves between host and GPU (weights, inputs,
     * spills, outputs); its GPU page tables take VRAM, inside the budget */
    uint64_t host_pool_bytes;
    uint64_t host_budget_bytes;   /* si_options.host_mem_budget (0: none) */
    /* 1: the host pool is mapped for the GPU (GL_EXT_buffer_storage), which
     * reads and writes it in place; 0: plain memory (the host backend, or a
     * driver without the extension), each load an upload */
    uint64_t host_pool_mapped;
    /* per run: bytes read from the model's shards (weights, their first
     * reading included) and from the spill file; bytes written to the spill file */
    uint64_t file_bytes_read;
    uint64_t bytes_spilled_to_file;
    /* the process's resident memory: its peak so far (VmHWM, at the end of the
     * run) and what it was with an empty context (after the GL context opened,
     * before the model's program and pool were made) */
    uint64_t rss_peak_bytes;
    uint64_t rss_baseline_bytes;
    /* of the budget, left free for what the GPU driver allocates for us beyond
     * the arena (the host pool's page tables, page rounding); 0 on llvmpipe */
    uint64_t driver_reserve_bytes;
    /* Device limits the plan was made within (invariant: every limit that
     * bounds a buffer or a dispatch is an input of the plan): the most bytes
     * one buffer a step binds may hold, the least of the storage block size
     * (GL_MAX_SHADER_STORAGE_BLOCK_SIZE, 0 with no GPU), 4 x the invocations one
     * dispatch covers, 4 x the elements 32-bit indexing reaches, and
     * si_options.max_buffer_bytes. */
    uint64_t max_buffer_bytes;
    uint64_t storage_block_bytes;
    uint64_t max_dispatch_elements;
    uint64_t max_index_elements;
    uint64_t largest_buffer_bytes; /* the largest buffer a step of the plan binds */
    uint64_t bytes_uploaded;
    uint64_t bytes_downloaded;
    uint64_t bytes_spilled;
    uint64_t bytes_reloaded;
    uint64_t evictions;
    uint64_t segments;
    uint64_t gpu_steps;          /* kernel dispatches per run */
    /* per run: ordinary nodes the host interpreter met over big tensors (1 MiB
     * and more in and out: a detector's loop body transposing and splitting its
     * scores) and ran on the GPU as programs of their own, in the budget */
    uint64_t gpu_host_nodes;
    double open_ms, run_ms, upload_ms, compute_ms, stall_ms;
    double host_ms;              /* in the host interpreter (loops, NMS, ...) */
    double file_ms;              /* reading the shards (waits for reads ahead) and the spill file */
    /* What open_ms was spent on: reading model.json, building the graph and
     * opening the shards (read); opening the GPU's context (gpu); binding the
     * shapes, folding, and planning every attempt of the tiling schedule
     * (plan); splitting steps into parts in those attempts (tile); compiling
     * the shaders of the plan's GPU steps (compile). The rest of open_ms is
     * bookkeeping. A model whose input sizes are free is planned in its first
     * si_run, not here (plan, tile and compile 0). */
    double open_read_ms, open_gpu_ms, open_plan_ms, open_tile_ms, open_compile_ms;
    /* The same phases inside the last si_run's run_ms: 0 where that run used
     * the program already bound (the common case); else the input sizes were
     * new (free sizes are planned at the first si_run), and the program was
     * planned (plan), its steps split (tile) and its shaders compiled
     * (compile) in that run. */
    double run_plan_ms, run_tile_ms, run_compile_ms;
    /* 1: the plan of the last si_open/si_run came from si_options.plan_cache_dir */
    uint64_t plan_from_cache;
    /* GPU programs (shaders) of this handle's GL context since it was made:
     * taken from si_options.plan_cache_dir as the driver's compiled binary
     * (glProgramBinary), and compiled from source (and stored there) */
    uint64_t programs_from_cache, programs_compiled;
    /* Always 0 (kept for callers that read it): quantized weights
     * are no longer made by steps into a buffer of their own; they are
     * dequantized as they are loaded into the arena, like any weight (with no
     * budget: once, and kept). */
    uint64_t derived_bytes;
    /* 1: the model has parts the host interpreter runs (loops, NMS, Where,
     * ...) with GPU stages after them that take shapes only the interpreter
     * computes, so they are planned as it runs, in the same budget: the plan
     * made at si_open/si_plan is stage 1's only (streaminfer plan --smallest
     * finds such a model's smallest budget by running it). */
    uint64_t dynamic_part;
    /* The float32 activations of the plan (every stage's so far) stored on the
     * GPU as halves (si_options.precision f16), and those stored as float32
     * (all of them at f32). */
    uint64_t f16_tensors, f32_tensors;
    /* per run: values past the largest half (at least 65520 in magnitude)
     * that half stores saturated to +-65504 (--check-steps names the steps) */
    uint64_t f16_overflows;
    /* summed over the runs, as upload_ms and compute_ms: the CPU's time in
     * issuing the steps (their GL calls, or the host backend's work; a step
     * the host runs between GPU steps counts whole, its read back included),
     * without the waits that bound the queue. Where it is near run_ms a run is
     * bound by the CPU issuing its dispatches, not by the GPU running them. */
    double issue_ms;
    /* per run: output bytes the kernel that made them wrote straight into
     * the mapped host pool, instead of its GPU memory and a copy after the
     * step (si_options.copy_kernels 1; an output that one step writes whole
     * and none reads after it). They count in bytes_downloaded too. */
    uint64_t bytes_out_in_place;
} si_stats;

typedef struct si_model si_model;

/* Threads and handles. A handle may be used from any thread. Calls on one
 * handle are serialized: each takes the handle's lock, so a second thread's
 * call waits for the first to return (si_output's data stays valid until the
 * next si_run or si_close on the handle, whichever thread makes it). Handles
 * are independent: any number may be open in one process and used in any
 * order or from different threads at once. Each handle opened by si_open
 * has its own GL context (models of a context share the context's, and its
 * lock: see si_context above), made current in the calling thread for the duration of a call;
 * whatever context the thread had current before (the application's own, or
 * none) is current again when the call returns. si_close must not race with
 * other calls on the same handle. */

/* Contexts: several models in one budget (a kiosk's pipeline: detector, mesh,
 * iris, ... every frame). A context owns one GL context and one VRAM budget;
 * models opened into it (si_context_open_model) plan within that budget, run
 * one at a time, and their arenas (each model's resident weights with its
 * working space) compete for it: before a model runs, the others give theirs
 * up, the one whose next run is farthest first, until what it needs fits
 * beside what they keep, so the bytes of GPU buffers the context owns never
 * exceed the budget. The next runs are the order the application declared
 * (si_context_set_order), else what followed this model's previous run in
 * the sequence of runs, else the least recently run gives up first. No
 * activation's value outlives its run: only resident weights carry over to
 * the next run (a model that gave its arena up uploads them again); the
 * working space of a kept arena stays allocated with it. Under a budget
 * the arenas are ranges of one GL buffer the context makes once (the budget
 * less the driver's share, or what the arenas take together where that is
 * less), and a model gives its range up when the next run finds no hole
 * that fits; with no budget each model keeps a buffer of its own. Each
 * model's outputs are bitwise those it gives opened alone (si_open) with the
 * same budget. Each model keeps its own host pool (si_context_stats sums
 * them); a host_mem_budget given to si_context_open bounds them together:
 * each model opened into the context (and each stage of a model with
 * stages) takes the least host pool its plan works with, out of what the
 * models before it and its own inputs left, and an open that does not fit is refused
 * (SI_ERR_BUDGET) naming the smallest host budget for all of them.
 *
 * A model opened with si_open is alone in a context of its own (its own GL
 * context, budget and lock): programs written for si_open/si_run are
 * unchanged.
 *
 * Threads: a context may be used from any thread. Every call on a context or
 * on any of its models takes the context's one lock, so calls are serialized
 * inside (a second thread's call waits; no busy error); the context's GL
 * context is current in the calling thread only for the duration of a call,
 * and what the thread had current before is current again after it. Distinct
 * contexts are independent and run concurrently in different threads.
 * si_close of a model of a context and si_context_close must not race with
 * other calls on that context. */
typedef struct si_context si_context;

typedef struct {
    uint64_t budget_bytes;
    uint64_t peak_vram_bytes;   /* counted: the arenas of all its models held at once, at most */
    uint64_t held_vram_bytes;   /* held now, between runs */
    uint64_t host_pool_bytes;   /* the host pools of its models together */
    uint64_t bytes_uploaded, bytes_downloaded, bytes_spilled, bytes_reloaded; /* all runs */
    uint64_t runs;              /* si_run calls that ran */
    uint64_t arenas_released;   /* times a model gave its arena up for another's run */
    int models;                 /* open now */
} si_context_stats;

/* opt: vram_budget (0: no limit), host_mem_budget (0: no limit), backend,
 * io_mode and the debug fields are the context's; progress and trace_path are each model's own (given to
 * si_context_open_model). */
si_result si_context_open(const si_options *opt, si_context **out, si_error *err);
/* Opens the model at path into c, as si_open would with c's budget,
 * backend and GL context; opt (may be NULL) gives io_mode, progress,
 * trace_path and max_buffer_bytes, its vram_budget and backend are ignored.
 * Close it with si_close (before or with si_context_close). */
si_result si_context_open_model(si_context *c, const char *path, const si_options *opt,
                                si_model **out, si_error *err);
/* Declares the order the models run in, repeated (a frame): n models of c,
 * each once. n = 0 forgets it (the context learns the order from its runs). */
si_result si_context_set_order(si_context *c, si_model *const *order, int n, si_error *err);
void si_context_get_stats(const si_context *c, si_context_stats *st);
/* Closes the models still open in c, then c. */
void si_context_close(si_context *c);

/* path: a folder holding model.json, or a path to a graph-model .json file. */
si_result si_open(const char *path, const si_options *opt, si_model **out, si_error *err);
void si_close(si_model *m);

int si_input_count(const si_model *m);
/* Shape as declared by the model; -1 marks a dimension bound by the input. */
si_result si_input_info(const si_model *m, int i, const char **name, si_dtype *dtype,
                        int *rank, int64_t shape[SI_MAX_RANK]);
int si_output_count(const si_model *m);
const char *si_output_name(const si_model *m, int i);

/* Runs the model. inputs[i] are matched by name (or position when name is NULL).
 * Any dimension declared -1 is bound from the given input; the program is
 * planned once per distinct set of input shapes. */
si_result si_run(si_model *m, const si_tensor_in *inputs, int n_inputs, si_error *err);

/* Binds the inputs' shapes (and small inputs' values) and makes the plan, as
 * si_run would, without running anything: for si_print_plan on models whose
 * input sizes are free. */
si_result si_plan(si_model *m, const si_tensor_in *inputs, int n_inputs, si_error *err);

/* Valid after a successful si_run until the next si_run or si_close. */
si_result si_output(const si_model *m, int i, si_dtype *dtype, int *rank,
                    int64_t shape[SI_MAX_RANK], const void **data, si_error *err);

void si_get_stats(const si_model *m, si_stats *st);

/* Prints the plan for the current input shapes as a table: segments, steps,
 * working sets, uploads, evictions, GPU bytes in use, peak. Needs no GPU run. */
si_result si_print_plan(const si_model *m, FILE *f, si_error *err);

/* Describes the model at path (`streaminfer info`) without running it: its
 * inputs and outputs (names, shapes with free dimensions as -1, dtypes), op
 * histogram, weights (count, bytes, stored dtypes: uint8/uint16/float16 where
 * quantized), control flow (loops, switch/merge, TensorList ops), and, planned
 * for inputs (NULL: zeros of the declared shapes with a free batch of 1; not
 * planned when another size is free), the lower bound, the smallest budget that
 * could work, the GPU's renderer and limits. opt->vram_budget is ignored.
 * json: one JSON object instead of text. */
si_result si_print_info(const char *path, const si_options *opt, const si_tensor_in *inputs,
                        int n_inputs, FILE *f, int json, si_error *err);

/* Tensor files, for callers that have no reader of their own (the CLI).
 * si_npy_read allocates *data (free with free()); bool is 1 byte an element. */
si_result si_npy_read(const char *path, si_dtype *dtype, int *rank, int64_t shape[SI_MAX_RANK],
                      void **data, si_error *err);
/* Reads a .npy of float16/32/64, bool, int8/16/32/64 or uint8/16/32/64 (little-endian,
 * C order) as want (float32, int32 or bool: a model input's dtype), as TensorFlow.js
 * takes the numbers (tf.tensor, then tf.cast): to float32 the nearest float (an int64
 * or uint64 goes through a JS number, a double, first; a float64 beyond float32's
 * range becomes +-inf, as Float32Array makes it); to int32 floats are cut toward
 * zero; to bool, value != 0 (NaN is true). Refused (SI_ERR_FORMAT, naming the file,
 * the value and its index) where int32 cannot hold a value: NaN, +-inf, or outside
 * -2^31..2^31-1 (JS would wrap it modulo 2^32). A bad want is SI_ERR_ARG. float32 and
 * int32 files read as their own dtype keep their bits. *data as si_npy_read. */
si_result si_npy_read_as(const char *path, si_dtype want, int *rank, int64_t shape[SI_MAX_RANK],
                         void **data, si_error *err);
si_result si_npy_write(const char *path, si_dtype dtype, int rank, const int64_t *shape,
                       const void *data, si_error *err);
/* Decodes an image (jpg, png, bmp, ...), resizes it to height x width as
 * tf.image.resizeBilinear does by default (int32: then cut as tf.cast), RGB, HWC;
 * float32 scaled to [0,1], int32 0..255. height/width 0 keep the image's own size,
 * reported back through them. */
si_result si_image_read(const char *path, int *height, int *width, si_dtype dtype, void **data,
                        si_error *err);

/* How an image meets a height x width input. STRETCH: resized to it (si_image_read's);
 * FIT: aspect kept, resized to fit inside, centred, the rest 0; CROP: aspect kept,
 * resized to cover it, the centre cut out. Sizes round to the nearest pixel; an odd
 * margin puts its extra pixel after the image (bottom, right). */
typedef enum { SI_FIT_STRETCH, SI_FIT_FIT, SI_FIT_CROP } si_fit;

/* What si_image_read_as did. Channels: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA. */
typedef struct {
    int src_height, src_width, src_channels; /* the file's */
    int height, width, channels;             /* the result's */
    si_fit fit;
    int resized_height, resized_width;       /* the image once resized */
    /* FIT: where the resized image sits in the result (rows top..top+resized_height-1);
     * CROP: the result's place in the resized image; STRETCH: 0 */
    int top, left;
} si_image_info;

/* si_image_read with a choice of channels (1, 3 or 4) and of fitting. The file's
 * channels are converted first, at its own size: gray to RGB(A) replicates; RGB(A)
 * to gray is tf.image.rgbToGrayscale of the int32 pixels tf.browser.fromPixels gives
 * (0.2989 R + 0.5870 G + 0.1140 B in float32, cut to an integer); RGBA to RGB drops
 * alpha; no alpha to RGBA adds 255. Then resized as si_image_read does (resizeBilinear
 * defaults), float32 scaled to [0,1], int32 cut. height/width 0 keep the image's own.
 * info (may be NULL) says what was done. si_image_read is
 * si_image_read_as(..., 3, dtype, SI_FIT_STRETCH, data, NULL, err). */
si_result si_image_read_as(const char *path, int *height, int *width, int channels, si_dtype dtype,
                           si_fit fit, void **data, si_image_info *info, si_error *err);
/* One line (no newline) for a person: "1280x720 RGBA -> 256x256 RGB, fit: resized to
 * 256x144, at rows 56..199, the rest 0" (sizes width x height). Returns what
 * snprintf returns. */
int si_image_info_format(const si_image_info *info, char *buf, size_t n);

const char *si_version(void);
const char *si_dtype_name(si_dtype t);
size_t si_dtype_size(si_dtype t); /* host bytes per element: 4, 4, 1 */
/* "1.50 MiB (1572864 bytes)", GiB from 1 GiB on, KiB below 1 MiB, into buf (64 chars); returns buf. */
const char *si_size_str(uint64_t bytes, char *buf);
/* Parses "512M", "1G", "1.5G", "123456" into bytes; returns 0 on success. */
int si_parse_size(const char *s, uint64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
