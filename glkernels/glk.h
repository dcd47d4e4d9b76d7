/* glkernels — executes steps on the GPU through OpenGL ES 3.1 compute shaders
 * in a headless EGL context. Knows shaders, not files. Buffers are created
 * only at the pager's request (invariant: nothing else calls glBufferData). */
#ifndef SI_GLK_H
#define SI_GLK_H

#include <stdint.h>
#include "streaminfer.h"
#include "../core/step.h"

typedef struct glk_ctx glk_ctx;

/* glk_open leaves the new context current in the calling thread (a caller
 * that must keep the thread's previous context saves it first:
 * glk_current_save); glk_close makes g current to free its objects, and
 * then puts back what was current unless that was g. A caller holding
 * several contexts, or used from several threads, wraps every use of g in
 * glk_bind / glk_unbind: a context is current in one thread at a time. */
si_result glk_open(glk_ctx **out, si_error *err);
void glk_close(glk_ctx *g);
typedef struct {
    void *dpy, *ctx, *draw, *read; /* what was current before (EGL handles) */
    unsigned api;
} glk_binding;
si_result glk_bind(glk_ctx *g, glk_binding *saved, si_error *err);
void glk_unbind(glk_ctx *g, const glk_binding *saved);
void glk_current_save(glk_binding *saved);
void glk_current_restore(const glk_binding *saved);
/* The saved binding was g's own context. */
int glk_binding_is(const glk_binding *b, const glk_ctx *g);
const char *glk_renderer(const glk_ctx *g);
/* Offsets of bound ranges must be multiples of this. */
uint32_t glk_offset_align(const glk_ctx *g);
/* Most loop iterations one invocation may run; steps needing more run on the host. */
uint64_t glk_max_loop_iterations(const glk_ctx *g);
/* Largest range one kernel argument may bind. */
uint64_t glk_max_binding(const glk_ctx *g);

/* What one dispatch may cover and one buffer it binds may hold, as this
 * device and these kernels allow: inputs of the plan like the budget (DESIGN,
 * invariant 3), so that no tensor a step binds is larger (tiling cuts bigger
 * ones into bands). */
typedef struct {
    uint64_t storage_block_bytes; /* GL_MAX_SHADER_STORAGE_BLOCK_SIZE: one bound range */
    uint64_t dispatch_elements;   /* invocations of one dispatch: workgroup counts x 64, and
                                   * gidx() in 32 bits */
    uint64_t index_elements;      /* elements one tensor may have: kernels index with int */
    uint64_t loop_iterations;     /* glk_max_loop_iterations */
} glk_limits;
void glk_get_limits(const glk_ctx *g, glk_limits *l);
/* The most bytes one tensor a step binds may hold: the least of the limits. */
uint64_t glk_max_tensor_bytes(const glk_limits *l);

/* A GPU context can be lost (a driver reset, a hung kernel killed): from then on
 * every call that would touch the GPU fails with SI_ERR_GPU, and only closing
 * it and opening a new one helps. Seen as GL_CONTEXT_LOST or, where the driver
 * has KHR/EXT_robustness, a reset status other than none. */
/* Whether the shaders' `precise` holds (GLSL ES 3.2): a fused product then sum
 * rounds twice, as the steps it replaces (core_fuse_epilogues' exact_mul_add). */
int glk_precise(const glk_ctx *g);
/* Whether the device is a CPU (llvmpipe, softpipe, SwiftShader; or none). */
int glk_software(const glk_ctx *g);
/* conv2d's variant (glk_program.c conv_variant): NULL or "" the device's choice, "plain"
 * (an invocation an output), "vec" (plain reading x four channels a load where
 * it can), "oc4" (four output channels an invocation where the channels come in
 * fours, else vec), "tiled[:BM,BN,TM,TN,BK]" (all the same bits),
 * "split[:DIV,MAX,AIM]" (runs of taps added in a tree: other bits); anything else
 * is SI_ERR_ARG. g NULL: the spec checked alone. */
si_result glk_set_conv(glk_ctx *g, const char *spec, si_error *err);
/* Whether conv2d, matmul, 3x3 depthwise convs, wide average pools and means
 * in lanes load a round of their operands before its sums (the same sums in
 * the same order, so the same bits): 1 on, 0 off, -1 the device's default (on
 * but for software rasterizers). */
void glk_set_ahead(glk_ctx *g, int on);
/* Whether depthwise convs with one output channel an input channel and transposed
 * convs, their channels in fours, make four output channels an invocation (the same
 * sums in the same order, so the same bits): 1 on, 0 off, -1 the default (on, on
 * every device: llvmpipe gains too). */
void glk_set_quad(glk_ctx *g, int on);
/* Whether conv2d's, depthwise conv2d's and matmul's programs are compiled for
 * their step's epilogue (bias, activation, clips, scale, residual as constants,
 * a program for each such set; else read from P as the step runs): the same
 * operations in the same order, so the same bits. 1 on, 0 off, -1 the device's
 * default (on but for software rasterizers, where each program is megabytes of
 * JIT code). */
void glk_set_epi(glk_ctx *g, int on);
/* The programs a context may hold before the steps glk_set_epi compiles for their
 * epilogue take the programs that read it from P instead (the same bits), so that a
 * context holding many models never runs out: n, or (n < 0) three quarters of all it
 * keeps, the default. */
void glk_set_epi_room(glk_ctx *g, int n);
int glk_lost(const glk_ctx *g);

/* Injected failures, so that what a GPU failure leaves behind can be tested on
 * any GPU (llvmpipe included); counts start at glk_set_faults, 0 = none. */
typedef struct {
    int alloc;   /* the nth buffer allocation (device buffer or host pool) fails: out of memory */
    int command; /* the nth command (dispatch, copy, upload, download) fails: out of memory */
    int lost;    /* the context is lost at the nth command */
    int no_storage; /* 1: as if GL_EXT_buffer_storage were missing: no mapped host memory (the
                     * host pool in plain memory, read backs mapped each time, no half overflow count) */
} glk_faults;
void glk_set_faults(glk_ctx *g, const glk_faults *f);

/* Compiled programs kept between processes (glProgramBinary): the driver's
 * binary of each program compiled, keyed by a digest of its full source, the
 * renderer, vendor and GL version. load: 1 where an entry for the key is
 * found and checked (*bytes malloc'd, the caller frees it), else 0; store:
 * keeps one (best effort). A binary the driver refuses is compiled again and
 * stored anew. NULL functions: none kept. Counted since glk_open: programs
 * taken from the store and programs compiled. */
typedef struct {
    int (*load)(void *user, const uint64_t key[2], uint32_t *format, void **bytes, size_t *len);
    void (*store)(void *user, const uint64_t key[2], uint32_t format, const void *bytes, size_t len);
    void *user;
} glk_binaries;
void glk_set_binaries(glk_ctx *g, const glk_binaries *b);
/* Called with the whole GLSL source of every program compiled from source
 * from now on (NULL: none): for tests that check the sources with a stricter
 * compiler than the one at hand (tests/test_shader_sources.c). */
typedef void (*glk_source_fn)(void *user, const char *shader, const char *source);
void glk_set_source_hook(glk_ctx *g, glk_source_fn fn, void *user);
/* Values past the largest half (at least 65520 in magnitude, not inf) that
 * half stores saturated since the last call, after every command queued so far
 * ended; 0 where no half was stored. Counted in host memory (binding 9). */
uint64_t glk_half_overflows(glk_ctx *g);
void glk_program_counts(const glk_ctx *g, uint64_t *loaded, uint64_t *compiled);

/* Device buffers: plain GL buffer names. */
si_result glk_buffer_create(glk_ctx *g, uint64_t bytes, uint32_t *name, si_error *err);
void glk_buffer_destroy(glk_ctx *g, uint32_t name);
si_result glk_upload(glk_ctx *g, uint32_t buf, uint64_t offset, const void *src, uint64_t bytes,
                     si_error *err);
si_result glk_download(glk_ctx *g, uint32_t buf, uint64_t offset, void *dst, uint64_t bytes,
                       si_error *err);

/* Host memory the GPU copies from and to: a persistently mapped GL buffer in
 * client (host) storage, so uploads, spills and reloads are GPU-side copies at
 * bus speed with no CPU memcpy and no stall. Its bytes are host memory, but
 * the driver's page tables that map it for the GPU are not: 1/256 of its size
 * in VRAM on the H200 (bench/pool_cost.sh), which the session's plan leaves
 * free inside the budget. Fails with SI_ERR_UNSUPPORTED where
 * GL_EXT_buffer_storage is missing. */
si_result glk_host_pool_create(glk_ctx *g, uint64_t bytes, uint32_t *name, void **ptr,
                               si_error *err);
void glk_host_pool_destroy(glk_ctx *g, uint32_t name);
/* Copies between buffers on the GPU's timeline (ordered after earlier steps). */
si_result glk_copy(glk_ctx *g, uint32_t src, uint64_t src_off, uint32_t dst, uint64_t dst_off,
                   uint64_t bytes, si_error *err);

typedef struct {
    uint32_t buf;
    uint64_t offset;   /* bytes, aligned */
    uint64_t bytes;
} glk_range;

/* glk_copy as a compute kernel (a grid of fixed size striding over the words):
 * unlike glCopyBufferSubData, a dispatch after it that does not touch its
 * ranges runs beside it (measured on the H200: ../shared/gpu/probes/overlap.c),
 * so a load hides behind the step dispatched after it. Offsets and bytes are
 * multiples of 4 (any alignment otherwise). Transfers between the same two
 * buffers queue up and go as one dispatch before the next other command,
 * barrier, fence or wait (up to 21 of them, each side within one binding, no
 * two touching the same bytes); one past a binding goes alone. */
si_result glk_copy_words(glk_ctx *g, uint32_t src, uint64_t src_off, uint32_t dst, uint64_t dst_off,
                         uint64_t bytes, si_error *err);
/* A load that dequantizes as it moves (issues 19, 20): count elements stored
 * quantized at src_off of src (quant: 1 uint8, 2 uint16, 3 float16, as
 * ck_dequant_p's; the stored bytes padded to a word) written at dst_off of dst
 * as float32, or with half as IEEE halves two a word (the padding half of an
 * odd count 0), each q * scale + min as CK_DEQUANT's kernel computes it; a
 * half past 65504 saturates and is counted (glk_half_overflows). Queued with
 * glk_copy_words' transfers, as one of them. */
si_result glk_dequant_words(glk_ctx *g, uint32_t src, uint64_t src_off, uint32_t dst, uint64_t dst_off,
                            int64_t count, int quant, float scale, float min, int half, si_error *err);
/* Dispatches of the transfer kernel so far (tests: batching). */
uint64_t glk_xfer_dispatches(const glk_ctx *g);
/* Issues the barrier a dispatch reading ins[0..n_in) (buf 0: none) and
 * writing out would need now, if any, so that commands queued after this and
 * before that dispatch run beside it (glk_run_step would find no conflict). */
void glk_sync(glk_ctx *g, const glk_range *ins, int n_in, const glk_range *out);
/* Barriers issued since glk_open (dispatches follow one only where they
 * depend on an earlier command). */
uint64_t glk_barriers(const glk_ctx *g);

/* Dispatches one step; ins[i] ignored where s->in[i] < 0. in_dtypes give the
 * tensors' dtypes (shader variants), out_dtype the output's. */
si_result glk_run_step(glk_ctx *g, const ck_step *s, const glk_range *ins,
                       const si_dtype *in_dtypes, const glk_range *out, si_dtype out_dtype,
                       si_error *err);
/* Compiles the program step s would run with these dtypes (glk_run_step's
 * argument), if it is not compiled yet, without running anything: so that a
 * model's shaders are compiled when it is opened, not in its first run. */
si_result glk_prepare_step(glk_ctx *g, const ck_step *s, const si_dtype *in_dtypes,
                           si_dtype out_dtype, si_error *err);
/* Between these two, programs glk_prepare_step compiles are handed to the
 * driver without waiting for each (GL_KHR_parallel_shader_compile: it may
 * build them on several threads); glk_finish_compiles waits for them all and
 * returns the first failure. A program is always finished before it runs. */
void glk_begin_compiles(glk_ctx *g);
si_result glk_finish_compiles(glk_ctx *g, si_error *err);
/* Called after each command submitted in a run (bytes: what a copy moves, 0
 * for a dispatch): once a batch holds GLK_BATCH commands or GLK_BATCH_BYTES
 * of copies, waits until the batch before it has finished, so that no more
 * than two batches are queued. A driver keeps what a queued command needs
 * (its uniforms, copy staging) until the command has run; this bounds that.
 * On the H200 it made no measurable difference to the card's memory (what
 * exceeded the pager's count there was the host pool's page tables: see
 * glk_host_pool_create), so it is a bound for other drivers, waiting on the
 * batch before the last so the GPU is never left idle by it. */
#define GLK_BATCH 128
#define GLK_BATCH_BYTES (32ull << 20)
si_result glk_throttle(glk_ctx *g, uint64_t bytes, si_error *err);
/* A fence after the commands submitted so far (waiting first for the one
 * *fence held, if any); glk_fence_wait waits for it to pass and deletes it
 * (*fence NULL: nothing to wait for). Host memory a queued copy reads (the
 * mapped pool) may be written again once its fence has passed. */
si_result glk_fence(glk_ctx *g, void **fence, si_error *err);
si_result glk_fence_wait(glk_ctx *g, void **fence, si_error *err);
/* Waits for all submitted work (timing, tests). */
si_result glk_finish(glk_ctx *g, si_error *err);
/* A kernel queued since the last glk_finish wrote a persistently mapped host
 * buffer (an output written in place into the host pool) that the CPU reads
 * next: glk_finish puts GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT before its wait. */
void glk_client_writes(glk_ctx *g);

/* GPU timestamps (GL_EXT_disjoint_timer_query; --trace). With timing on, every
 * command sent (a step's dispatch, a transfer kernel, a buffer copy, an upload,
 * a read back's copy) is bracketed by two timestamps and tagged with the tag
 * set last (a batch of transfers: the tag when its first was queued). A
 * timestamp is taken once the commands before it are done, so t0 is when the
 * GPU could start the command and t1 when it and everything before it had
 * finished. glk_timing returns whether timing is on (0: no timer queries, or
 * off). glk_gpu_now: the GPU's clock now (ns), without waiting. glk_stamps,
 * after glk_finish: the commands timed since timing went on or the last call
 * (then forgotten), *disjoint set where the GPU's clock jumped meanwhile (the
 * times are then not to be trusted); -1 out of memory. */
typedef struct {
    int copy;   /* 0 a step's dispatch, 1 a copy (transfer kernel, copy, upload, read back) */
    int tag;    /* glk_set_tag's when it was sent */
    int ranges; /* a transfer kernel's ranges (1 for other copies, 0 for a dispatch) */
    uint64_t bytes;  /* a copy's bytes (0 for a dispatch) */
    uint64_t t0, t1; /* ns on the GPU's clock */
} glk_stamp;
int glk_timing(glk_ctx *g, int on);
void glk_set_tag(glk_ctx *g, int tag);
int64_t glk_gpu_now(glk_ctx *g);
int glk_stamps(glk_ctx *g, glk_stamp **out, int *n, int *disjoint);

#endif
