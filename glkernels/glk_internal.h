#ifndef SI_GLK_INTERNAL_H
#define SI_GLK_INTERNAL_H

#include <epoxy/egl.h>
#include <epoxy/gl.h>
#include "../base/base.h"
#include "glk.h"

#ifndef GL_CONTEXT_LOST
#define GL_CONTEXT_LOST 0x0507 /* KHR_robustness, GLES 3.2 */
#endif

#define GLK_LOCAL 64
/* programs a context keeps: with conv2d's, depthwise conv2d's and matmul's compiled
 * for their epilogues (glk_set_epi) a model takes more, and a context may hold
 * several models; past three quarters of it those take the programs that read
 * their epilogue from P (glk_program.c epi_values) */
#define GLK_MAX_PROGRAMS 1024
#define GLK_PROGRAM_KEY 96 /* a program's key: variant, bindings' types, epilogue */
#define GLK_PROGRAM_SLOTS (2 * GLK_MAX_PROGRAMS) /* find_program's table */
#define GLK_PENDING 64
/* transfers one dispatch of xfer.comp may carry: P holds 1 + 3 a range of 64 */
#define GLK_XFER_BATCH 21

typedef struct {
    char key[GLK_PROGRAM_KEY];
    GLuint prog;
    GLint loc_p, loc_nt;
    int pair; /* two elements an invocation (PAIR): half the invocations dispatched */
    /* a compile not yet waited for (glk_begin_compiles): its shader, the
     * shader's name and its binary store key; failed: it did not build */
    GLuint pending_sh;
    const char *shader;
    uint64_t bin_key[2];
    int failed;
    /* the uniforms last set (set_uniforms): a program keeps its own */
    GLint last_p[CK_MAX_P];
    GLuint last_nt;
    int p_set, nt_set;
} glk_program;

struct glk_ctx {
    EGLDisplay dpy;
    EGLContext ctx;
    char renderer[256];
    uint32_t offset_align;
    uint64_t max_binding;
    uint64_t max_groups_y;   /* GL_MAX_COMPUTE_WORK_GROUP_COUNT[1] (x is at least 65535) */
    int fused_fma;           /* fma() rounds once */
    int gles32;              /* GLSL ES 3.2: `precise` holds (glk_precise) */
    int n_programs;
    glk_program programs[GLK_MAX_PROGRAMS];
    uint16_t slot[GLK_PROGRAM_SLOTS]; /* program index + 1 by key's hash, 0 empty */
    uint64_t batch_cmds, batch_bytes; /* the batch being queued (glk_throttle) */
    GLsync batch_fence;      /* end of the previous batch, or 0 */
    glk_faults faults;       /* injected failures (glk_set_faults) */
    int n_allocs, n_cmds;    /* counted since glk_set_faults */
    int lost;                /* the context was lost: every later call fails */
    int client_writes;       /* glk_client_writes since the last glk_finish */
    glk_binaries bins;       /* glk_set_binaries */
    glk_source_fn on_source; /* glk_set_source_hook */
    void *source_user;
    int max_blocks;          /* GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS */
    /* glk_half_overflows: the count half stores add to (host memory, mapped
     * persistently and coherently: no VRAM), made at the first half store */
    GLuint ovf_buf;
    uint32_t *ovf_ptr;
    uint64_t n_loaded, n_compiled;
    int defer_compiles; /* glk_begin_compiles .. glk_finish_compiles */
    /* glk_download's staging: GLK_READBACK bytes of mapped host memory the
     * GPU copies into (0: not made yet, or no GL_EXT_buffer_storage) */
    GLuint rb;
    uint8_t *rb_ptr;
    int rb_tried;
    /* What the shader commands since the last glMemoryBarrier read and wrote
     * (glk.c hazard()): a command that touches what one of them wrote, or
     * writes what one of them read, waits behind a barrier; others may run
     * beside them. */
    struct glk_span {
        uint32_t buf;
        uint64_t lo, hi;
    } pend_r[GLK_PENDING], pend_w[GLK_PENDING];
    int n_r, n_w;
    uint64_t n_barriers;
    /* CK_CONV2D's variant (glk_program.c glk_conv_setup, conv_variant): conv_mode 0 plain
     * (conv2d.comp OPC 0), 1 tiled (OPC 1; conv_tile: a big and a small tile,
     * each rows, columns, outputs an invocation makes down and across, taps
     * staged at once), 2 split along k where it pays (OPC 2; conv_split: least
     * taps a run, most runs, invocations aimed at), 3 vec (OPC 3 where x can
     * be read four channels a load, else plain), 4 oc4 (OPC 4 where the channels
     * come in fours); conv_auto: the device's choice (glk_conv_setup), which on a
     * GPU takes oc4 for convs of GLK_OC4_OUTPUTS outputs and more */
    int conv_mode, conv_auto;
    /* conv2d, matmul, 3x3 depthwise convs, wide average pools and means in
     * lanes load a round of their operands before its sums (AHEAD; the same
     * sums): on GPUs, where it keeps loads in flight; not on llvmpipe, where
     * conv2d's arrays made selfie 1.24x slower (glk_set_ahead) */
    int ahead;
    /* CK_DWCONV2D and CK_DECONV2D four output channels an invocation (their shaders' OPC 1:
     * channels in fours, float32 bindings 16-byte aligned; the same sums in the same
     * order): on by default (glk_set_quad, glk_program.c quad_variant) */
    int quad;
    /* conv2d, depthwise conv2d and matmul compiled for their epilogue (glk_set_epi)
     * while the context holds fewer than epi_room programs (glk_set_epi_room) */
    int epi, epi_room;
    int conv_tile[2][5], conv_split[3];
    /* glk_copy_words' batch: transfers from one buffer into another queued
     * and not yet dispatched; xfer_flush dispatches them as one kernel before
     * any other command, barrier, fence or wait (their ranges are already in
     * pend_r/pend_w) */
    struct glk_xfer {
        uint64_t src_off, dst_off, bytes; /* bytes: written (and read, but by a dequantizing one) */
        uint64_t src_bytes;               /* read */
        int mode;                         /* 0 a copy, else glk_dequant_words' (xfer.comp) */
        float scale, min;
    } xb[GLK_XFER_BATCH];
    int n_xb, xb_words; /* xb_words: the P words the queue's table takes */
    uint32_t xb_src, xb_dst;
    uint64_t n_xfer_dispatches; /* glk_xfer_dispatches */
    glk_program *xfer_prog[3];  /* xfer.comp in words, in 16 bytes an element, in words counting
                                 * the halves that saturate (xfer_programs) */
    /* The program in use and the storage bindings made, as last set through
     * use_program and bind_range (0: not known), so that a dispatch skips the
     * GL calls that would change nothing; a buffer deleted is unbound by GL,
     * so deleting one forgets the bindings (forget_bindings). */
    GLuint cur_prog;
    struct glk_bound {
        GLuint buf;
        uint64_t off, size;
    } bound[CK_MAX_IN + 2];
    /* glk_timing: commands bracketed by timestamp queries (two names each,
     * kept for the next run), at most GLK_MAX_STAMPS a run */
    int has_timer; /* GL_EXT_disjoint_timer_query, looked up at glk_open */
    int has_storage; /* GL_EXT_buffer_storage (mapped host buffers), looked up at glk_open;
                      * 0 where glk_faults.no_storage hides it */
    int storage_ext; /* the extension as glk_open found it */
    int timing, tag, xb_tag;
    GLuint *queries;
    int n_queries;
    struct glk_timed {
        int copy, tag, ranges;
        uint64_t bytes;
    } *timed;
    int n_timed, cap_timed;
};

#define GLK_MAX_STAMPS (1 << 21)

#define GLK_READBACK (1u << 20)

si_result glk_egl_open(glk_ctx *g, si_error *err);
void glk_egl_close(glk_ctx *g);

/* Embedded shader sources (generated from the .comp files at build time). */
const char *glk_shader_source(const char *name);

/* ---- shared by glk.c (context, buffers, transfers, ordering, dispatch) and
 * glk_program.c (variants, kernel table, shader assembly, program cache) ---- */

/* A conv2d step's variant: OPC, the tile (OPC 1) and the runs (OPC 2). */
typedef struct {
    int opc;
    const int *tile;
    int slices;
} glk_conv_pick;

/* What each kernel kind runs: its shader, which parameter (if any) selects a
 * compile-time op variant, and how many invocations. */
typedef struct {
    const char *shader; /* NULL: runs on the host */
    int op_slot;        /* -1: none */
    uint64_t (*invocations)(const ck_step *s, uint64_t out_elems);
} glk_kernel;

extern const glk_kernel glk_kernels[CK__COUNT];

/* glk_program.c */
void glk_conv_setup(glk_ctx *g);
uint64_t glk_conv_inv(glk_conv_pick v, const ck_step *s, uint64_t out_elems);
void glk_clear_errors(glk_ctx *g);
/* aligned: bit i set where binding i (CK_MAX_IN: the output) starts at a multiple of 16
 * bytes, as variants that read or write four floats a load need; pick: the variant of
 * a conv2d, a depthwise or a transposed conv */
si_result glk_get_program(glk_ctx *g, const ck_step *s, const si_dtype *in_dt, si_dtype out_dt,
                          unsigned aligned, glk_program **out, glk_conv_pick *pick, si_error *err);
si_result glk_get_named_program(glk_ctx *g, const char *key, const char *shader, const char *defines,
                                glk_program **out, si_error *err);
/* glk.c */
int glk_count_overflows(const glk_ctx *g);

#endif
