/* Context, buffers, program cache and the dispatch of one step. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "glk_internal.h"


#ifndef GL_CONTEXT_LOST
#define GL_CONTEXT_LOST 0x0507 /* KHR_robustness, GLES 3.2 */
#endif

static si_result lost_fail(si_error *err, const char *what)
{
    return base_fail(err, SI_ERR_GPU,
                     "the GPU context was lost (%s): close the model (or context) and open it again", what);
}

/* A reset the driver reports (robustness extensions); 0 where it cannot say. */
static int reset_seen(void)
{
    if (epoxy_has_gl_extension("GL_KHR_robustness"))
        return glGetGraphicsResetStatusKHR() != GL_NO_ERROR;
    if (epoxy_has_gl_extension("GL_EXT_robustness"))
        return glGetGraphicsResetStatusEXT() != GL_NO_ERROR;
    return 0;
}

static si_result gl_check(glk_ctx *g, si_error *err, const char *what)
{
    GLenum e = glGetError();
    if (e == GL_NO_ERROR)
        return SI_OK;
    if (e == GL_CONTEXT_LOST || reset_seen()) {
        g->lost = 1;
        return lost_fail(err, what);
    }
    if (e == GL_OUT_OF_MEMORY)
        return base_fail(err, SI_ERR_GPU, "GPU out of memory in %s", what);
    return base_fail(err, SI_ERR_GPU, "GL error 0x%x in %s", (unsigned)e, what);
}

int glk_lost(const glk_ctx *g) { return g->lost; }

static GLuint readback_buffer(glk_ctx *g);

/* GLSL ES 3.2: `precise` keeps a product and a sum apart (3.1 has no such
 * word: the compiler may fuse them into one rounding) */
int glk_precise(const glk_ctx *g) { return g && g->gles32; }

/* a rasterizer that runs on the CPU: Mesa's llvmpipe and softpipe, SwiftShader */
int glk_software(const glk_ctx *g)
{
    return !g || strstr(g->renderer, "llvmpipe") || strstr(g->renderer, "softpipe") ||
           strstr(g->renderer, "SwiftShader");
}

/* Which conv2d variant runs (conv2d.comp's OPC; bench/results/speed-h200.md):
 * - on a GPU, vec (OPC 3): plain (OPC 0, an invocation an output) reading x
 *   four channels a load where in_c is a multiple of 4 and x's binding is
 *   16-byte aligned (the same bits, up to 7% faster); the tiled one measured
 *   slower there (too few invocations in flight on batch-1 layers), and split
 *   (OPC 2: runs of each output's taps added in a tree where K is long and the
 *   whole op has few outputs), up to 1.7x faster, moves away from TensorFlow.js's
 *   rounding (it sums each output's taps one by one in float32) by more than the
 *   models' tolerance on two rows (faceboxes at 320x320 keeps another box), so it
 *   is asked for, never chosen;
 * - on a device that is a CPU (llvmpipe), tiled (OPC 1), the big tile or, where
 *   its ragged edges would add over half the work, the small one, else (a few
 *   pixels, or a few channels) vec where it can, else plain.
 * Plain and tiled give the same bits; split others, the same in every tile.
 * glk_set_conv overrides it (si_options.conv_kernel, SI_CONV: a bench's knob,
 * bench/conv_tiles.sh): "plain", "vec", "tiled[:BM,BN,TM,TN,BK]" (that tile
 * alone) or "split[:DIV,MAX,AIM]". */
static const int conv_tiles_dflt[2][5] = {{64, 64, 8, 8, 16}, {32, 32, 4, 4, 16}};
static const int conv_split_dflt[3] = {64, 8, 1 << 18};

static int conv_tile_ok(const int t[5])
{
    int bm = t[0], bn = t[1], tm = t[2], tn = t[3], bk = t[4];
    return bm > 0 && bn > 0 && tm > 0 && tn > 0 && bk > 0 && bm % tm == 0 && bn % tn == 0 &&
           (bm / tm) * (bn / tn) == GLK_LOCAL && GLK_LOCAL % bk == 0 && GLK_LOCAL % bn == 0 &&
           bm * bk % GLK_LOCAL == 0 && bn * bk % GLK_LOCAL == 0 && bm <= 256 && bk <= 64 &&
           bk * (bm + 1 + bn) * 4 <= 16384; /* the shared memory GLES 3.1 promises */
}

/* the device's choice (conv_variant's comment) */
static void conv_setup(glk_ctx *g)
{
    memcpy(g->conv_tile, conv_tiles_dflt, sizeof g->conv_tile);
    memcpy(g->conv_split, conv_split_dflt, sizeof g->conv_split);
    g->conv_mode = glk_software(g) ? 1 : 3;
}

void glk_set_ahead(glk_ctx *g, int on) { g->ahead = on < 0 ? !glk_software(g) : on != 0; }

si_result glk_set_conv(glk_ctx *g, const char *spec, si_error *err)
{
    int mode, tile[2][5], split[3], t[5], n = 0;
    memcpy(tile, conv_tiles_dflt, sizeof tile);
    memcpy(split, conv_split_dflt, sizeof split);
    if (!spec || !*spec) {
        if (g)
            conv_setup(g);
        return SI_OK;
    }
    if (!strcmp(spec, "plain"))
        mode = 0;
    else if (!strcmp(spec, "vec"))
        mode = 3;
    else if (!strcmp(spec, "tiled") || (sscanf(spec, "tiled:%d,%d,%d,%d,%d%n", &t[0], &t[1], &t[2],
                                               &t[3], &t[4], &n) == 5 && !spec[n] && conv_tile_ok(t))) {
        mode = 1;
        if (n) {
            memcpy(tile[0], t, sizeof t);
            memcpy(tile[1], t, sizeof t);
        }
    } else if (!strcmp(spec, "split") ||
               (sscanf(spec, "split:%d,%d,%d%n", &t[0], &t[1], &t[2], &n) == 3 && !spec[n] &&
                t[0] > 0 && t[1] > 0 && t[1] <= GLK_LOCAL && t[2] > 0)) {
        mode = 2;
        if (n)
            memcpy(split, t, sizeof split);
    } else
        return base_fail(err, SI_ERR_ARG, "conv2d variant \"%s\": not plain, vec, tiled, "
                         "tiled:BM,BN,TM,TN,BK (BM/TM x BN/TN = 64 invocations), split or "
                         "split:DIV,MAX,AIM", spec);
    if (g) {
        g->conv_mode = mode;
        memcpy(g->conv_tile, tile, sizeof tile);
        memcpy(g->conv_split, split, sizeof split);
    }
    return SI_OK;
}

/* A conv2d step's variant: OPC, the tile (OPC 1) and the runs (OPC 2). */
typedef struct {
    int opc;
    const int *tile;
    int slices;
} conv_pick;

/* rows (pixels) and columns (channels) of the output as a GEMM, padded to whole tiles */
static uint64_t conv_padded(const ck_conv_p *c, const int *t)
{
    uint64_t m = (uint64_t)c->n * (uint64_t)c->out_h * (uint64_t)c->out_w, n = (uint64_t)c->out_c;
    return (m + (uint64_t)t[0] - 1) / (uint64_t)t[0] * (uint64_t)t[0] *
           ((n + (uint64_t)t[1] - 1) / (uint64_t)t[1] * (uint64_t)t[1]);
}

/* The variant of one conv2d step (x_aligned: x's binding is 16-byte aligned).
 * Split: the runs each output's taps are cut into, a power of two, at most
 * conv_split[1], each run at least conv_split[0] taps, and no more runs than
 * bring the whole op's outputs times runs to conv_split[2] invocations. It hangs
 * on K and the whole op's outputs alone, which no split of rows or channels
 * changes: every tile of a conv sums in the same order. */
static conv_pick conv_variant(const glk_ctx *g, const ck_step *s, int x_aligned)
{
    const ck_conv_p *c = &s->u.conv;
    /* plain, or vec where x can be read four channels a load */
    conv_pick r = {(g->conv_mode == 3 || g->conv_mode == 1) && c->in_c % 4 == 0 && x_aligned ? 3 : 0,
                   g->conv_tile[0], 1};
    if (g->conv_mode == 1) { /* the first tile whose ragged edges add at most half */
        uint64_t real = (uint64_t)c->n * (uint64_t)c->out_h * (uint64_t)c->out_w * (uint64_t)c->out_c;
        for (int i = 0; i < 2 && r.opc != 1; i++)
            if (conv_padded(c, g->conv_tile[i]) * 2 <= real * 3) {
                r.opc = 1;
                r.tile = g->conv_tile[i];
            }
    }
    if (g->conv_mode != 2)
        return r;
    int64_t k = (int64_t)c->k_h * c->k_w * c->in_c, n = 1;
    int64_t whole = c->whole_out > 0 ? c->whole_out : (int64_t)c->n * c->out_h * c->out_w * c->out_c;
    while (n * 2 <= g->conv_split[1] && n * 2 <= k / g->conv_split[0] &&
           whole * n * 2 <= g->conv_split[2])
        n *= 2;
    r.slices = (int)n;
    r.opc = n > 1 ? 2 : 0;
    return r;
}

/* invocations of a conv2d run as v: an output's (plain, vec), its runs' (split) or 64 a tile */
static uint64_t conv_inv(conv_pick v, const ck_step *s, uint64_t out_elems)
{
    if (v.opc != 1)
        return out_elems * (uint64_t)v.slices;
    return conv_padded(&s->u.conv, v.tile) / ((uint64_t)v.tile[0] * (uint64_t)v.tile[1]) * GLK_LOCAL;
}

void glk_set_faults(glk_ctx *g, const glk_faults *f)
{
    g->faults = f ? *f : (glk_faults){0};
    g->n_allocs = g->n_cmds = 0;
    /* no GL call here: the context need not be current */
    g->has_storage = g->storage_ext && !g->faults.no_storage;
}

/* Before a command goes to the GPU: refused on a lost context, or failed
 * where a fault is injected at this one. */
static void xfer_flush(glk_ctx *g);

static si_result count_gate(glk_ctx *g, const char *what, si_error *err)
{
    if (g->lost)
        return lost_fail(err, what);
    g->n_cmds++;
    if (g->faults.lost && g->n_cmds == g->faults.lost) {
        g->lost = 1;
        return lost_fail(err, "injected: fail_gpu_lost");
    }
    if (g->faults.command && g->n_cmds == g->faults.command)
        return base_fail(err, SI_ERR_GPU, "GPU out of memory in %s (injected: fail_gpu_command)", what);
    return SI_OK;
}

/* Before every command but a transfer kernel: the transfers queued go first. */
static si_result cmd_gate(glk_ctx *g, const char *what, si_error *err)
{
    xfer_flush(g);
    return count_gate(g, what, err);
}

/* ---- ordering: barriers only where a command depends on an earlier one ----
 * A dispatch is not followed by a barrier of its own. What the shader commands
 * since the last barrier read and wrote is kept (pend_r, pend_w); a shader
 * command that reads or writes a range one of them wrote, or writes one they
 * read, gets a barrier first (and the lists start again). Commands that do not
 * touch each other's ranges may so run at once: a transfer kernel of the next
 * step's weights beside this step (issue 19), independent branches. Other GL
 * commands (copies, uploads, read backs) come after a barrier whenever a
 * shader command is pending, as every command did before. */
static int span_hits(const struct glk_span *v, int n, const glk_range *r)
{
    uint64_t lo = r->offset, hi = r->offset + (r->bytes ? r->bytes : 4);
    for (int i = 0; i < n; i++)
        if (v[i].buf == r->buf && v[i].lo < hi && lo < v[i].hi)
            return 1;
    return 0;
}

static void barrier(glk_ctx *g)
{
    xfer_flush(g); /* queued before the barrier, so they come before it */
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
    g->n_r = g->n_w = 0;
    g->n_barriers++;
}

/* Before a GL command other than a dispatch. */
static void settle(glk_ctx *g)
{
    if (g->n_r || g->n_w)
        barrier(g);
}

/* ---- GL state a dispatch sets, set only where it changes ---- */
static void use_program(glk_ctx *g, GLuint prog)
{
    if (g->cur_prog != prog)
        glUseProgram(prog);
    g->cur_prog = prog;
}

static void bind_range(glk_ctx *g, int i, GLuint buf, uint64_t off, uint64_t size)
{
    struct glk_bound *b = &g->bound[i];
    if (b->buf == buf && b->off == off && b->size == size)
        return;
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, (GLuint)i, buf, (GLintptr)off, (GLsizeiptr)size);
    *b = (struct glk_bound){buf, off, size};
}

static void forget_bindings(glk_ctx *g) { memset(g->bound, 0, sizeof g->bound); }

/* P, all CK_MAX_P numbers */
static void set_p(glk_program *p, const GLint *v)
{
    if (p->loc_p < 0 || (p->p_set && !memcmp(p->last_p, v, sizeof p->last_p)))
        return;
    glUniform1iv(p->loc_p, CK_MAX_P, v);
    memcpy(p->last_p, v, sizeof p->last_p);
    p->p_set = 1;
}

/* [lo, hi) widened to hold [off, off + n) */
static void span_add(uint64_t *lo, uint64_t *hi, uint64_t off, uint64_t n)
{
    *lo = off < *lo ? off : *lo;
    *hi = off + n > *hi ? off + n : *hi;
}

static int conflicts(const glk_ctx *g, const glk_range *rd, int nr, const glk_range *wr)
{
    for (int i = 0; i < nr; i++)
        if (rd[i].buf && span_hits(g->pend_w, g->n_w, &rd[i]))
            return 1;
    return wr && (span_hits(g->pend_w, g->n_w, wr) || span_hits(g->pend_r, g->n_r, wr));
}

/* Before a dispatch reading rd[0..nr) (buf 0: none) and writing wr: a barrier
 * if it depends on a pending command; then its ranges are pending. */
static void hazard(glk_ctx *g, const glk_range *rd, int nr, const glk_range *wr)
{
    if (conflicts(g, rd, nr, wr) || g->n_r + nr > GLK_PENDING || g->n_w + 1 > GLK_PENDING)
        barrier(g);
    for (int i = 0; i < nr; i++)
        if (rd[i].buf)
            g->pend_r[g->n_r++] = (struct glk_span){rd[i].buf, rd[i].offset,
                                                    rd[i].offset + (rd[i].bytes ? rd[i].bytes : 4)};
    g->pend_w[g->n_w++] = (struct glk_span){wr->buf, wr->offset, wr->offset + (wr->bytes ? wr->bytes : 4)};
}

uint64_t glk_barriers(const glk_ctx *g) { return g->n_barriers; }

static si_result alloc_gate(glk_ctx *g, const char *what, si_error *err)
{
    if (g->lost)
        return lost_fail(err, what);
    if (g->faults.alloc && ++g->n_allocs == g->faults.alloc)
        return base_fail(err, SI_ERR_GPU, "GPU out of memory in %s (injected: fail_gpu_alloc)", what);
    return SI_OK;
}

/* Does fma() round once here? One tiny dispatch tells: with a = b = 1 + 2^-12,
 * fma(a, b, -1) is 2^-11 + 2^-24 when fused and 2^-11 when not. The 4-byte probe
 * buffer is gone before any plan exists, so it never counts against a budget. */
static si_result probe_fma(glk_ctx *g, si_error *err)
{
    static const char *src =
        "#version 320 es\nlayout(local_size_x = 1) in;\n"
        "layout(std430, binding = 0) buffer B { float v[]; };\n"
        "uniform float a;\n"
        "void main() { precise float r = fma(a, a, -1.0); v[0] = r; }\n";
    g->fused_fma = 0;
    if (epoxy_gl_version() < 32)
        return SI_OK;
    GLuint sh = glCreateShader(GL_COMPUTE_SHADER);
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    GLint ok = 0;
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    GLuint prog = glCreateProgram();
    glAttachShader(prog, sh);
    glLinkProgram(prog);
    glDeleteShader(sh);
    GLint linked = 0;
    glGetProgramiv(prog, GL_LINK_STATUS, &linked);
    if (ok && linked) {
        GLuint b = 0;
        float v = 0.f;
        glGenBuffers(1, &b);
        glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
        glBufferData(GL_SHADER_STORAGE_BUFFER, 4, &v, GL_DYNAMIC_DRAW);
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, b);
        glUseProgram(prog);
        glUniform1f(glGetUniformLocation(prog, "a"), 1.0f + 1.0f / 4096.0f);
        glDispatchCompute(1, 1, 1);
        glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
        const float *p = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, 4, GL_MAP_READ_BIT);
        if (p) {
            g->fused_fma = *p == 1.0f / 2048.0f + 1.0f / 16777216.0f;
            glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
        }
        glDeleteBuffers(1, &b);
        g->cur_prog = 0; /* not known */
        forget_bindings(g);
    }
    glDeleteProgram(prog);
    return gl_check(g, err, "fma probe");
}

si_result glk_open(glk_ctx **out, si_error *err)
{
    glk_ctx *g = calloc(1, sizeof *g);
    if (!g)
        return base_fail(err, SI_ERR_NOMEM, "out of host memory");
    g->dpy = EGL_NO_DISPLAY;
    g->ctx = EGL_NO_CONTEXT;
    si_result st = glk_egl_open(g, err);
    if (st != SI_OK) {
        glk_egl_close(g);
        free(g);
        return st;
    }
    const char *r = (const char *)glGetString(GL_RENDERER);
    const char *v = (const char *)glGetString(GL_VERSION);
    snprintf(g->renderer, sizeof g->renderer, "%s (%s)", r ? r : "?", v ? v : "?");
    GLint align = 0, blocks = 0;
    GLint64 maxsz = 0;
    glGetIntegerv(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, &align);
    glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &maxsz);
    glGetIntegerv(GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS, &blocks);
    GLint groups_y = 0;
    glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, 1, &groups_y);
    g->offset_align = align > 0 ? (uint32_t)align : 256;
    g->max_binding = maxsz > 0 ? (uint64_t)maxsz : (1u << 27);
    g->max_groups_y = groups_y > 0 ? (uint64_t)groups_y : 65535; /* the least ES 3.1 allows */
    g->gles32 = epoxy_gl_version() >= 32;
    g->max_blocks = blocks;
    if (blocks < CK_MAX_IN + 1) {
        glk_close(g);
        return base_fail(err, SI_ERR_GPU, "GPU allows %d storage buffers per compute shader, %d needed",
                        blocks, CK_MAX_IN + 1);
    }
    if ((st = probe_fma(g, err)) != SI_OK) {
        glk_close(g);
        return st;
    }
    conv_setup(g);
    glk_set_ahead(g, -1);
    g->has_timer = epoxy_has_gl_extension("GL_EXT_disjoint_timer_query");
    g->has_storage = g->storage_ext = epoxy_has_gl_extension("GL_EXT_buffer_storage");
    readback_buffer(g); /* made with the context, so its memory is the empty context's */
    *out = g;
    return SI_OK;
}

void glk_close(glk_ctx *g)
{
    if (!g)
        return;
    glk_binding saved;
    si_error ignored;
    int bound = g->ctx != EGL_NO_CONTEXT && glk_bind(g, &saved, &ignored) == SI_OK;
    g->n_xb = 0; /* transfers still queued are for a run that will not come */
    if (bound) {
        for (int i = 0; i < g->n_programs; i++)
            glDeleteProgram(g->programs[i].prog);
        if (g->batch_fence)
            glDeleteSync(g->batch_fence);
        if (g->rb) {
            glBindBuffer(GL_COPY_WRITE_BUFFER, g->rb);
            glUnmapBuffer(GL_COPY_WRITE_BUFFER);
            glDeleteBuffers(1, &g->rb);
        }
        if (g->ovf_buf)
            glk_host_pool_destroy(g, g->ovf_buf);
        if (g->n_queries)
            glDeleteQueriesEXT(g->n_queries, g->queries);
    }
    free(g->queries);
    free(g->timed);
    EGLContext mine = g->ctx;
    glk_egl_close(g);
    if (bound && saved.ctx != mine)
        glk_current_restore(&saved);
    free(g);
}

const char *glk_renderer(const glk_ctx *g) { return g->renderer; }
int glk_binding_is(const glk_binding *b, const glk_ctx *g) { return b->ctx == g->ctx; }
uint32_t glk_offset_align(const glk_ctx *g) { return g->offset_align; }
uint64_t glk_max_binding(const glk_ctx *g) { return g->max_binding; }

/* glk_run_step dispatches 65535 x gy groups of GLK_LOCAL and computes the
 * invocation's index in 32 bits (gidx), which wraps past 2^32: invocations are
 * kept below 2^31 so that gx * gy * 64 never wraps. */
void glk_get_limits(const glk_ctx *g, glk_limits *l)
{
    uint64_t by_groups = 65535ull * g->max_groups_y * GLK_LOCAL;
    l->storage_block_bytes = g->max_binding;
    l->dispatch_elements = by_groups < 0x7fffffffull ? by_groups : 0x7fffffffull;
    l->index_elements = CK_MAX_INDEX_ELEMS;
    l->loop_iterations = glk_max_loop_iterations(g);
}

uint64_t glk_max_tensor_bytes(const glk_limits *l)
{
    uint64_t b = l->storage_block_bytes;
    if (l->dispatch_elements * CK_ELEM < b)
        b = l->dispatch_elements * CK_ELEM;
    if (l->index_elements * CK_ELEM < b)
        b = l->index_elements * CK_ELEM;
    return b;
}

/* Mesa's software rasterizers stop any shader loop after 65535 iterations (a
 * guard against endless loops; nested loops share the count), silently. */
uint64_t glk_max_loop_iterations(const glk_ctx *g)
{
    return strstr(g->renderer, "llvmpipe") || strstr(g->renderer, "softpipe") ? 65535 : UINT64_MAX;
}

si_result glk_buffer_create(glk_ctx *g, uint64_t bytes, uint32_t *name, si_error *err)
{
    si_result gate = alloc_gate(g, "buffer allocation", err);
    if (gate != SI_OK)
        return gate;
    GLuint b = 0;
    while (glGetError() != GL_NO_ERROR) {
    }
    glGenBuffers(1, &b);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
    glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(bytes ? bytes : 4), NULL, GL_DYNAMIC_DRAW);
    si_result st = gl_check(g, err, "buffer allocation");
    if (st != SI_OK) {
        glDeleteBuffers(1, &b);
        return st;
    }
    *name = b;
    return SI_OK;
}

void glk_buffer_destroy(glk_ctx *g, uint32_t name)
{
    xfer_flush(g);
    forget_bindings(g);
    GLuint b = name;
    if (b)
        glDeleteBuffers(1, &b);
}

/* ---- GPU timestamps (glk_timing) ---- */

int glk_timing(glk_ctx *g, int on)
{
    if (on && !g->has_timer)
        on = 0;
    if (on && !g->timing) {
        GLint d = 0;
        glGetIntegerv(GL_GPU_DISJOINT_EXT, &d); /* reading it clears it */
        g->n_timed = 0;
    }
    g->timing = on;
    return on;
}

void glk_set_tag(glk_ctx *g, int tag) { g->tag = tag; }

int64_t glk_gpu_now(glk_ctx *g)
{
    if (!g->timing)
        return -1;
    GLint64 t = 0;
    glGetInteger64v(GL_TIMESTAMP_EXT, &t);
    return t;
}

/* The first timestamp of a command about to be sent; its slot, or -1 (not
 * timing, the run's stamps spent, or no memory: the command goes untimed). */
static int stamp_begin(glk_ctx *g, int copy, int tag, int ranges, uint64_t bytes)
{
    if (!g->timing || g->n_timed >= GLK_MAX_STAMPS)
        return -1;
    if (g->n_timed == g->cap_timed) {
        int cap = g->cap_timed ? 2 * g->cap_timed : 1024;
        struct glk_timed *t = realloc(g->timed, (size_t)cap * sizeof *t);
        if (t)
            g->timed = t;
        GLuint *q = t ? realloc(g->queries, 2 * (size_t)cap * sizeof *q) : NULL;
        if (!q)
            return -1;
        g->queries = q;
        glGenQueriesEXT(2 * cap - g->n_queries, q + g->n_queries);
        g->n_queries = 2 * cap;
        g->cap_timed = cap;
    }
    g->timed[g->n_timed] = (struct glk_timed){copy, tag, ranges, bytes};
    glQueryCounterEXT(g->queries[2 * g->n_timed], GL_TIMESTAMP_EXT);
    return g->n_timed;
}

static void stamp_end(glk_ctx *g, int k)
{
    if (k < 0)
        return;
    glQueryCounterEXT(g->queries[2 * k + 1], GL_TIMESTAMP_EXT);
    g->n_timed = k + 1;
}

int glk_stamps(glk_ctx *g, glk_stamp **out, int *n, int *disjoint)
{
    *out = NULL;
    *n = 0;
    *disjoint = 0;
    int m = g->n_timed;
    g->n_timed = 0;
    if (!m)
        return 0;
    glk_stamp *v = malloc((size_t)m * sizeof *v);
    if (!v)
        return -1;
    for (int k = 0; k < m; k++) {
        GLuint64 a = 0, b = 0;
        glGetQueryObjectui64vEXT(g->queries[2 * k], GL_QUERY_RESULT_EXT, &a);
        glGetQueryObjectui64vEXT(g->queries[2 * k + 1], GL_QUERY_RESULT_EXT, &b);
        v[k] = (glk_stamp){g->timed[k].copy, g->timed[k].tag, g->timed[k].ranges, g->timed[k].bytes, a, b};
    }
    GLint d = 0;
    glGetIntegerv(GL_GPU_DISJOINT_EXT, &d);
    *disjoint = d != 0;
    *out = v;
    *n = m;
    return 0;
}

si_result glk_upload(glk_ctx *g, uint32_t buf, uint64_t offset, const void *src, uint64_t bytes,
                     si_error *err)
{
    si_result gate = cmd_gate(g, "upload", err);
    if (gate != SI_OK)
        return gate;
    settle(g);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
    int k = stamp_begin(g, 1, g->tag, 1, bytes);
    glBufferSubData(GL_SHADER_STORAGE_BUFFER, (GLintptr)offset, (GLsizeiptr)bytes, src);
    stamp_end(g, k);
    return gl_check(g, err, "upload");
}

static GLenum wait_sync(GLsync sync);
static void clear_errors(glk_ctx *g);

/* The readback staging buffer (GLK_READBACK bytes of mapped host memory, the
 * GPU's page tables for it a few KiB), made with the context where the driver
 * maps buffers persistently; 0 where it cannot be (downloads map then). */
static GLuint readback_buffer(glk_ctx *g)
{
    if (!g->has_storage) /* glk_faults.no_storage: the one made at glk_open goes unused */
        return 0;
    if (g->rb || g->rb_tried)
        return g->rb;
    g->rb_tried = 1;
    clear_errors(g);
    const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT_EXT | GL_MAP_COHERENT_BIT_EXT;
    GLuint b = 0;
    glGenBuffers(1, &b);
    glBindBuffer(GL_COPY_WRITE_BUFFER, b);
    glBufferStorageEXT(GL_COPY_WRITE_BUFFER, GLK_READBACK, NULL, flags | GL_CLIENT_STORAGE_BIT_EXT);
    void *p = glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, GLK_READBACK, flags);
    if (glGetError() != GL_NO_ERROR || !p) {
        glDeleteBuffers(1, &b);
        clear_errors(g);
        return 0;
    }
    g->rb = b;
    g->rb_ptr = p;
    return b;
}

/* A read back: GPU copies into the mapped staging buffer, a fence, then a
 * memcpy, GLK_READBACK bytes at a time. Mapping a range of a GPU buffer for
 * reading instead (the fallback) cost the H200's driver about 1.5 ms even for
 * a few hundred bytes. */
si_result glk_download(glk_ctx *g, uint32_t buf, uint64_t offset, void *dst, uint64_t bytes,
                       si_error *err)
{
    si_result gate = cmd_gate(g, "download", err);
    if (gate != SI_OK)
        return gate;
    settle(g);
    GLuint rb = readback_buffer(g);
    if (rb) {
        for (uint64_t at = 0; at < bytes; at += GLK_READBACK) {
            uint64_t n = bytes - at < GLK_READBACK ? bytes - at : GLK_READBACK;
            glBindBuffer(GL_COPY_READ_BUFFER, buf);
            glBindBuffer(GL_COPY_WRITE_BUFFER, rb);
            int k = stamp_begin(g, 1, g->tag, 1, n);
            glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)(offset + at), 0,
                                (GLsizeiptr)n);
            stamp_end(g, k);
            GLsync s = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
            if (!s || wait_sync(s) == GL_WAIT_FAILED)
                return gl_check(g, err, "download") != SI_OK
                           ? err->status
                           : base_fail(err, SI_ERR_GPU, "waiting for the GPU failed");
            memcpy((uint8_t *)dst + at, g->rb_ptr, n);
        }
        return gl_check(g, err, "download");
    }
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
    void *p = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, (GLintptr)offset, (GLsizeiptr)bytes,
                               GL_MAP_READ_BIT);
    if (!p)
        return gl_check(g, err, "download") != SI_OK ? err->status
                                                  : base_fail(err, SI_ERR_GPU, "cannot map buffer");
    memcpy(dst, p, bytes);
    glUnmapBuffer(GL_SHADER_STORAGE_BUFFER);
    return gl_check(g, err, "download");
}

si_result glk_host_pool_create(glk_ctx *g, uint64_t bytes, uint32_t *name, void **ptr,
                               si_error *err)
{
    si_result gate = alloc_gate(g, "host pool", err);
    if (gate != SI_OK)
        return gate;
    if (!g->has_storage)
        return base_fail(err, SI_ERR_UNSUPPORTED, "GL_EXT_buffer_storage is missing");
    while (glGetError() != GL_NO_ERROR) {
    }
    GLuint b = 0;
    const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT_EXT |
                             GL_MAP_COHERENT_BIT_EXT;
    glGenBuffers(1, &b);
    glBindBuffer(GL_COPY_WRITE_BUFFER, b);
    glBufferStorageEXT(GL_COPY_WRITE_BUFFER, (GLsizeiptr)(bytes ? bytes : 4), NULL,
                       flags | GL_CLIENT_STORAGE_BIT_EXT);
    void *p = glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, (GLsizeiptr)(bytes ? bytes : 4), flags);
    si_result st = gl_check(g, err, "host pool");
    if (st != SI_OK || !p) {
        glDeleteBuffers(1, &b);
        return st != SI_OK ? st : base_fail(err, SI_ERR_GPU, "cannot map the host pool");
    }
    *name = b;
    *ptr = p;
    return SI_OK;
}

void glk_host_pool_destroy(glk_ctx *g, uint32_t name)
{
    xfer_flush(g);
    forget_bindings(g);
    GLuint b = name;
    if (!b)
        return;
    glBindBuffer(GL_COPY_WRITE_BUFFER, b);
    glUnmapBuffer(GL_COPY_WRITE_BUFFER);
    glDeleteBuffers(1, &b);
}

si_result glk_copy(glk_ctx *g, uint32_t src, uint64_t src_off, uint32_t dst, uint64_t dst_off,
                   uint64_t bytes, si_error *err)
{
    si_result gate = cmd_gate(g, "copy", err);
    if (gate != SI_OK)
        return gate;
    settle(g);
    glBindBuffer(GL_COPY_READ_BUFFER, src);
    glBindBuffer(GL_COPY_WRITE_BUFFER, dst);
    int k = stamp_begin(g, 1, g->tag, 1, bytes);
    glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)src_off,
                        (GLintptr)dst_off, (GLsizeiptr)bytes);
    stamp_end(g, k);
    return gl_check(g, err, "copy");
}

static si_result get_named_program(glk_ctx *g, const char *key, const char *shader, const char *defines,
                                   glk_program **out, si_error *err);

/* The transfer kernel's grid: 1,024 workgroups of 64 (65,536 invocations)
 * keep enough reads in flight for the bus, and leave most of a big GPU to the
 * step dispatched after it. */
#define XFER_GROUPS 1024u
#define XFER_DEFS(t)                                                                               \
    "#define T0 " t "\n#define T1 " t "\n#define T2 " t "\n#define T3 " t "\n#define T4 " t "\n"     \
    "#define T5 " t "\n#define T6 " t "\n#define T7 " t "\n#define TO " t "\n"

/* The most bytes one binding of a transfer covers: a multiple of the offset
 * alignment, with element indices below 2^31. */
static uint64_t xfer_span(const glk_ctx *g)
{
    uint64_t a = g->offset_align > 16 ? g->offset_align : 16, chunk = (g->max_binding - 2 * a) / a * a;
    return chunk > (1ull << 30) ? 1ull << 30 : chunk;
}

/* The transfer kernel's programs (words, 16 bytes an element), made at the
 * first transfer and kept (g->xfer_prog); the one in words that counts the
 * halves a dequantizing transfer saturates, at the first that needs it. */
static si_result xfer_programs(glk_ctx *g, int counting, si_error *err)
{
    si_result st = SI_OK;
    if (!g->xfer_prog[0])
        st = get_named_program(g, "xfer", "xfer", XFER_DEFS("int") "#define XWORDS 1\n", &g->xfer_prog[0], err);
    if (st == SI_OK && !g->xfer_prog[1])
        st = get_named_program(g, "xfer4", "xfer", XFER_DEFS("ivec4"), &g->xfer_prog[1], err);
    if (st == SI_OK && counting && !g->xfer_prog[2])
        st = get_named_program(g, "xferhc", "xfer", XFER_DEFS("int") "#define XWORDS 1\n#define HC 1\n",
                               &g->xfer_prog[2], err);
    return st;
}

/* Whether half stores count their overflows: a binding to spare for the
 * count, and mapped host memory to keep it in (ovf_ensure) */
static int count_overflows(const glk_ctx *g) { return g->max_blocks >= CK_MAX_IN + 2 && g->has_storage; }

/* P words a transfer's entry takes in xfer.comp's table */
static int xfer_words(int mode) { return mode ? 6 : 3; }

/* The buffer dequantizing transfers (and half stores) count saturated halves in. */
static si_result ovf_ensure(glk_ctx *g, si_error *err)
{
    if (g->ovf_buf)
        return SI_OK;
    void *p = NULL;
    si_result st = glk_host_pool_create(g, 16, &g->ovf_buf, &p, err);
    if (st != SI_OK)
        return st;
    g->ovf_ptr = p;
    g->ovf_ptr[0] = 0;
    return SI_OK;
}

/* One dispatch of xfer.comp over v[0..n) from src into dst, 16 bytes an
 * element where every offset and size allows and none dequantizes, else
 * words; each side bound from an aligned offset below its least start (the
 * spans within xfer_span). */
static void xfer_dispatch(glk_ctx *g, uint32_t src, uint32_t dst, const struct glk_xfer *v, int n, int tag)
{
    uint64_t es = 16, s0 = UINT64_MAX, d0 = UINT64_MAX, s1 = 0, d1 = 0, most = 0, moved = 0;
    int halves = 0;
    for (int i = 0; i < n; i++) {
        if ((v[i].src_off | v[i].dst_off | v[i].bytes) % 16 || v[i].mode)
            es = 4;
        halves |= v[i].mode & 4;
        span_add(&s0, &s1, v[i].src_off, v[i].src_bytes);
        span_add(&d0, &d1, v[i].dst_off, v[i].bytes);
        most = v[i].bytes > most ? v[i].bytes : most;
        moved += v[i].src_bytes;
    }
    int counting = halves && g->xfer_prog[2] && g->ovf_buf; /* made when the transfers were queued */
    glk_program *p = g->xfer_prog[counting ? 2 : es == 16];
    uint64_t a = g->offset_align > es ? g->offset_align : es;
    s0 = s0 / a * a;
    d0 = d0 / a * a;
    GLint P[CK_MAX_P] = {n};
    for (int i = 0, k = 1; i < n; k += xfer_words(v[i].mode), i++) {
        GLint *e = &P[k];
        if (v[i].mode) {
            *e++ = -v[i].mode;
            memcpy(&e[3], &v[i].scale, 4);
            memcpy(&e[4], &v[i].min, 4);
        }
        e[0] = (GLint)(v[i].bytes / es);
        e[1] = (GLint)((v[i].src_off - s0) / es);
        e[2] = (GLint)((v[i].dst_off - d0) / es);
    }
    use_program(g, p->prog);
    set_p(p, P);
    bind_range(g, 0, src, s0, s1 - s0);
    for (int i = 1; i <= CK_MAX_IN; i++) /* declared blocks must be backed; CK_MAX_IN: outv */
        bind_range(g, i, dst, d0, d1 - d0);
    if (counting)
        bind_range(g, CK_MAX_IN + 1, g->ovf_buf, 0, 16);
    uint64_t groups = (most / es + GLK_LOCAL - 1) / GLK_LOCAL;
    int k = stamp_begin(g, 1, tag, n, moved);
    glDispatchCompute(groups < XFER_GROUPS ? (GLuint)groups : XFER_GROUPS, 1, 1);
    stamp_end(g, k);
    g->n_xfer_dispatches++;
}

/* The queued transfers as one dispatch (before any other command). */
static void xfer_flush(glk_ctx *g)
{
    int n = g->n_xb;
    g->n_xb = 0;
    g->xb_words = 1;
    if (n && !g->lost)
        xfer_dispatch(g, g->xb_src, g->xb_dst, g->xb, n, g->xb_tag);
}

static int spans_meet(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) { return a < b + bn && b < a + an; }

/* Whether transfer t joins the queued ones: the same two buffers, room in
 * P, both spans within one binding, and no range one of them writes read or
 * written by it (they run at once). */
static int xfer_joins(const glk_ctx *g, uint32_t src, uint32_t dst, const struct glk_xfer *t)
{
    if (!g->n_xb)
        return 1;
    if (g->n_xb >= GLK_XFER_BATCH || g->xb_words + xfer_words(t->mode) > CK_MAX_P || src != g->xb_src ||
        dst != g->xb_dst)
        return 0;
    uint64_t so = t->src_off, d = t->dst_off, bytes = t->bytes, sb = t->src_bytes;
    uint64_t s0 = so, s1 = so + sb, d0 = d, d1 = d + bytes, lim = xfer_span(g);
    for (int i = 0; i < g->n_xb; i++) {
        const struct glk_xfer *x = &g->xb[i];
        if (spans_meet(x->dst_off, x->bytes, d, bytes) ||
            (src == dst && (spans_meet(x->dst_off, x->bytes, so, sb) || spans_meet(x->src_off, x->src_bytes, d, bytes))))
            return 0;
        span_add(&s0, &s1, x->src_off, x->src_bytes);
        span_add(&d0, &d1, x->dst_off, x->bytes);
    }
    return s1 - s0 <= lim && d1 - d0 <= lim;
}

/* Queues transfer t (within one binding on each side) from src into dst. */
static void xfer_queue(glk_ctx *g, uint32_t src, uint32_t dst, const struct glk_xfer *t)
{
    if (!xfer_joins(g, src, dst, t))
        xfer_flush(g);
    glk_range rd = {src, t->src_off, t->src_bytes}, wr = {dst, t->dst_off, t->bytes};
    hazard(g, &rd, 1, &wr); /* a barrier here dispatches the queue ahead of it */
    if (!g->n_xb) {
        g->xb_src = src;
        g->xb_dst = dst;
        g->xb_tag = g->tag;
        g->xb_words = 1;
    }
    g->xb[g->n_xb++] = *t;
    g->xb_words += xfer_words(t->mode);
}

si_result glk_copy_words(glk_ctx *g, uint32_t src, uint64_t src_off, uint32_t dst, uint64_t dst_off,
                         uint64_t bytes, si_error *err)
{
    if ((src_off | dst_off | bytes) & 3)
        return base_fail(err, SI_ERR_ARG, "internal: a transfer kernel moves whole words");
    si_result st = count_gate(g, "copy", err);
    if (st == SI_OK)
        st = xfer_programs(g, 0, err);
    if (st != SI_OK || !bytes)
        return st;
    uint64_t lim = xfer_span(g);
    if (bytes > lim) { /* past one binding: dispatches of its own, a binding's worth each */
        xfer_flush(g);
        for (uint64_t at = 0; at < bytes; at += lim) {
            uint64_t n = bytes - at < lim ? bytes - at : lim;
            struct glk_xfer x = {src_off + at, dst_off + at, n, n, 0, 0, 0};
            glk_range rd = {src, x.src_off, x.bytes}, wr = {dst, x.dst_off, x.bytes};
            hazard(g, &rd, 1, &wr);
            xfer_dispatch(g, src, dst, &x, 1, g->tag);
        }
        return gl_check(g, err, "copy");
    }
    struct glk_xfer x = {src_off, dst_off, bytes, bytes, 0, 0, 0};
    xfer_queue(g, src, dst, &x);
    return SI_OK;
}

si_result glk_dequant_words(glk_ctx *g, uint32_t src, uint64_t src_off, uint32_t dst, uint64_t dst_off,
                            int64_t count, int quant, float scale, float min, int half, si_error *err)
{
    if (quant < 1 || quant > 3 || count < 0)
        return base_fail(err, SI_ERR_ARG, "internal: a dequantizing transfer of quant %d, %lld elements",
                         quant, (long long)count);
    if ((src_off | dst_off) & 3)
        return base_fail(err, SI_ERR_ARG, "internal: a transfer kernel moves whole words");
    uint64_t words = half ? ((uint64_t)count + 1) / 2 : (uint64_t)count;
    uint64_t stored = ((uint64_t)count * (quant == 1 ? 1 : 2) + 3) / 4 * 4;
    uint64_t lim = xfer_span(g);
    if (words * 4 > lim || stored > lim) /* (a binding's elements are below 2^31: xfer_span) */
        return base_fail(err, SI_ERR_GPU, "a quantized weight of %lld elements: more than one binding of the GPU "
                         "holds (%llu bytes)", (long long)count, (unsigned long long)lim);
    int counting = half && quant != 3 && count_overflows(g);
    si_result st = count_gate(g, "copy", err);
    if (st == SI_OK && counting)
        st = ovf_ensure(g, err);
    if (st == SI_OK)
        st = xfer_programs(g, counting, err);
    if (st != SI_OK || !count)
        return st;
    struct glk_xfer x = {src_off, dst_off, words * 4, stored, quant | (half ? 4 : 0) | (half && (count & 1) ? 8 : 0),
                         scale, min};
    xfer_queue(g, src, dst, &x);
    return SI_OK;
}

uint64_t glk_xfer_dispatches(const glk_ctx *g) { return g->n_xfer_dispatches; }

void glk_sync(glk_ctx *g, const glk_range *ins, int n_in, const glk_range *out)
{
    if (conflicts(g, ins, n_in, out))
        barrier(g);
}

/* Waits for sync (GPU commands complete), then deletes it. */
static GLenum wait_sync(GLsync sync)
{
    GLenum r;
    do
        r = glClientWaitSync(sync, GL_SYNC_FLUSH_COMMANDS_BIT, 1000000000ull);
    while (r == GL_TIMEOUT_EXPIRED);
    glDeleteSync(sync);
    return r;
}

si_result glk_throttle(glk_ctx *g, uint64_t bytes, si_error *err)
{
    if (g->lost)
        return lost_fail(err, "fence");
    g->batch_cmds++;
    g->batch_bytes += bytes;
    if (g->batch_cmds < GLK_BATCH && g->batch_bytes < GLK_BATCH_BYTES)
        return SI_OK;
    g->batch_cmds = 0;
    g->batch_bytes = 0;
    xfer_flush(g);
    if (g->batch_fence) {
        GLenum r = wait_sync(g->batch_fence);
        g->batch_fence = 0;
        if (r == GL_WAIT_FAILED)
            return base_fail(err, SI_ERR_GPU, "waiting for the GPU failed");
    }
    g->batch_fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    return gl_check(g, err, "fence");
}

si_result glk_fence(glk_ctx *g, void **fence, si_error *err)
{
    xfer_flush(g);
    si_result st = glk_fence_wait(g, fence, err);
    if (st != SI_OK)
        return st;
    *fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    return gl_check(g, err, "fence");
}

si_result glk_fence_wait(glk_ctx *g, void **fence, si_error *err)
{
    if (!*fence)
        return SI_OK;
    GLsync sync = *fence;
    *fence = NULL;
    if (g->lost) {
        glDeleteSync(sync);
        return lost_fail(err, "fence");
    }
    if (wait_sync(sync) == GL_WAIT_FAILED)
        return base_fail(err, SI_ERR_GPU, "waiting for the GPU failed");
    return gl_check(g, err, "fence");
}

si_result glk_finish(glk_ctx *g, si_error *err)
{
    if (g->lost)
        return lost_fail(err, "finish");
    xfer_flush(g);
    glFinish();
    return gl_check(g, err, "finish");
}

/* ---- programs ---- */

/* The op enums of core/step.h as GLSL macros (U_RELU, B_ADD, R_SUM, ACT_RELU ...). */
static int enum_defines(char *buf, size_t n)
{
    int k = 0;
#define DEF(prefix, name, value)                                                                   \
    k += snprintf(buf + k, n - (size_t)k, "#define %s%s %d\n", prefix, #name, (int)(value));
#define ACT(x) DEF("ACT_", x, CK_ACT_##x)
#define UNARY(x) DEF("U_", x, CK_U_##x)
#define BINARY(x) DEF("B_", x, CK_B_##x)
#define REDUCE(x) DEF("R_", x, CK_R_##x)
    CK_ACTS(ACT)
    CK_UNARY_OPS(UNARY)
    CK_BINARY_OPS(BINARY)
    CK_REDUCE_OPS(REDUCE)
#undef ACT
#undef UNARY
#undef BINARY
#undef REDUCE
#undef DEF
    return k;
}

static const char *dtype_glsl(si_dtype t) { return t == SI_FLOAT32 ? "float" : "int"; }

/* Exact-product helpers, so sums round the way TensorFlow.js's float32 and
 * double arithmetic does. With a fused fma() (NVIDIA) they are one instruction;
 * where fma() is not fused (Mesa llvmpipe) they fall back to Dekker's split. */
static const char *prelude =
    "void two_prod(float a, float b, out float p, out float e) {\n"
    "    precise float pp = a * b; p = pp;\n"
    "#if FUSED_FMA\n"
    "    e = fma(a, b, -pp);\n"
    "#else\n"
    "    precise float c = 4097.0 * a; precise float ah = c - (c - a); precise float al = a - ah;\n"
    "    precise float d = 4097.0 * b; precise float bh = d - (d - b); precise float bl = b - bh;\n"
    "    precise float r = ((ah * bh - pp) + ah * bl + al * bh) + al * bl; e = r;\n"
    "#endif\n"
    "}\n"
    "void two_sum(float a, float b, out float s, out float e) {\n"
    "    precise float ss = a + b; precise float bb = ss - a;\n"
    "    precise float r = (a - (ss - bb)) + (b - bb); s = ss; e = r;\n"
    "}\n"
    "/* fl(a*b + c), rounded once */\n"
    "float mad1(float a, float b, float c) {\n"
    "#if FUSED_FMA\n"
    "    precise float r = fma(a, b, c); return r;\n"
    "#else\n"
    "    float p, e, s, t; two_prod(a, b, p, e); two_sum(c, p, s, t);\n"
    "    precise float r = s + (t + e); return r;\n"
    "#endif\n"
    "}\n"
    "/* a double-like accumulator (hi, lo) += a*b */\n"
    "vec2 dd_mad(float a, float b, vec2 acc) {\n"
    "    float p, e, s, t; two_prod(a, b, p, e); two_sum(acc.x, p, s, t);\n"
    "    precise float lo = acc.y + (t + e); float h, l; two_sum(s, lo, h, l); return vec2(h, l);\n"
    "}\n"
    "/* fl(f + (hi + lo)) */\n"
    "float dd_add_to(float f, vec2 d) {\n"
    "    float s, t; two_sum(f, d.x, s, t); precise float r = s + (t + d.y); return r;\n"
    "}\n"
    "/* a double-like sum (hi, lo) += v, as tfjs sums float32 values in a JS number; the\n"
    " * pair assumes finite values: once an infinity or NaN enters (or the pair overflows)\n"
    " * it is plain IEEE float from there on */\n"
    "bool wild(float v) { return isinf(v) || isnan(v); }\n"
    "vec2 dd_add(vec2 a, float v) {\n"
    "    if (wild(a.x) || wild(v)) return vec2(a.x + v, 0.0);\n"
    "    vec2 r = dd_mad(v, 1.0, a);\n"
    "    return wild(r.x) ? vec2(a.x + v, 0.0) : r;\n"
    "}\n"
    "/* the pair rounded to float once */\n"
    "float dd_round(vec2 a) { return wild(a.x) ? a.x : dd_add_to(0.0, a); }\n"
    "/* a conv's or matmul's clips after its epilogue (core/fuse.c): n of them, each a\n"
    " * Minimum or Maximum of the value and the scalar in4[0] (then in5[0]), binary.comp's\n"
    " * formula with the value as a */\n"
    "float clip1(float v, int op, float c) {\n"
    "    if (op == B_MIN) return (v < c || isnan(v)) ? v : c;\n"
    "    return (v > c || isnan(v)) ? v : c;\n"
    "}\n"
    "/* a conv's or matmul's per-channel scale before its bias (has: fused), rounded */\n"
    "float scaled(float v, int oc, int has) {\n"
    "    if (has == 0) return v;\n"
    "    precise float t = v * float(in6[oc]);\n"
    "    return t;\n"
    "}\n"
    "/* or (hs 1) a hard swish, (c1 * v) * relu6(v + c2), c1 in4[0], c2 in5[0], (hs 2)\n"
    " * a hard sigmoid, relu6(v + c2) * c1, each op rounded as binary.comp's Mul and\n"
    " * Add and unary.comp's Relu6 do */\n"
    "float clips(float v, int n, int op0, int op1, int hs) {\n"
    "    if (hs == 2) {\n"
    "        precise float a = v + float(in5[0]);\n"
    "        float r = a < 0.0 ? 0.0 : (a > 6.0 ? 6.0 : a);\n"
    "        precise float y = r * float(in4[0]);\n"
    "        return y;\n"
    "    }\n"
    "    if (hs != 0) {\n"
    "        precise float m = float(in4[0]) * v;\n"
    "        precise float a = v + float(in5[0]);\n"
    "        float r = a < 0.0 ? 0.0 : (a > 6.0 ? 6.0 : a);\n"
    "        precise float y = m * r;\n"
    "        return y;\n"
    "    }\n"
    "    if (n > 0) v = clip1(v, op0, float(in4[0]));\n"
    "    if (n > 1) v = clip1(v, op1, float(in5[0]));\n"
    "    return v;\n"
    "}\n";

void glk_set_source_hook(glk_ctx *g, glk_source_fn fn, void *user)
{
    g->on_source = fn;
    g->source_user = user;
}

void glk_set_binaries(glk_ctx *g, const glk_binaries *b)
{
    g->bins = b ? *b : (glk_binaries){0};
}

void glk_program_counts(const glk_ctx *g, uint64_t *loaded, uint64_t *compiled)
{
    *loaded = g ? g->n_loaded : 0;
    *compiled = g ? g->n_compiled : 0;
}

/* Clears what a refused binary or an unsupported query left in the error
 * flags (bounded: a lost context is noted, never spun on). */
static void clear_errors(glk_ctx *g)
{
    for (int i = 0; i < 8; i++) {
        GLenum e = glGetError();
        if (e == GL_NO_ERROR)
            return;
        if (e == GL_CONTEXT_LOST)
            g->lost = 1;
    }
}

/* The program of srcs from the binary store where it has one the driver takes;
 * 0 where not (nothing left behind). */
static GLuint load_binary(glk_ctx *g, const uint64_t key[2])
{
    GLint formats = 0;
    glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
    uint32_t format = 0;
    void *bytes = NULL;
    size_t len = 0;
    if (formats <= 0 || !g->bins.load || !g->bins.load(g->bins.user, key, &format, &bytes, &len))
        return 0;
    GLuint prog = glCreateProgram();
    GLint ok = 0;
    if (len <= 0x7fffffff) {
        glProgramBinary(prog, (GLenum)format, bytes, (GLsizei)len);
        glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    }
    free(bytes);
    if (!ok) { /* another driver's, or refused: compiled again */
        glDeleteProgram(prog);
        clear_errors(g);
        return 0;
    }
    return prog;
}

static void store_binary(glk_ctx *g, GLuint prog, const uint64_t key[2])
{
    GLint formats = 0, len = 0;
    glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
    if (formats <= 0 || !g->bins.store)
        return;
    glGetProgramiv(prog, GL_PROGRAM_BINARY_LENGTH, &len);
    void *b = len > 0 ? malloc((size_t)len) : NULL;
    GLsizei got = 0;
    GLenum format = 0;
    if (b)
        glGetProgramBinary(prog, len, &got, &format, b);
    if (b && got > 0 && glGetError() == GL_NO_ERROR)
        g->bins.store(g->bins.user, key, format, b, (size_t)got);
    free(b);
    clear_errors(g);
}

static si_result compile(glk_ctx *g, const char *shader, const char *defines, glk_program *out,
                         si_error *err)
{
    int fused = g->fused_fma;
    static const char *head32 =
        "#version 320 es\n"
        "precision highp float;\nprecision highp int;\n"
        "layout(local_size_x = 64) in;\n"
        "uniform int P[64];\nuniform uint NT;\n"
        "#define PF(i) intBitsToFloat(P[i])\n";
    const char *body = glk_shader_source(shader);
    if (!body)
        return base_fail(err, SI_ERR_GPU, "no shader named %s", shader);
    const char *head =
        "#version 310 es\n"
        "precision highp float;\nprecision highp int;\n"
        "layout(local_size_x = 64) in;\n"
        "uniform int P[64];\nuniform uint NT;\n"
        "#define PF(i) intBitsToFloat(P[i])\n"
        "#define precise\n#define fma(a, b, c) ((a) * (b) + (c))\n";
    if (epoxy_gl_version() >= 32)
        head = head32;
    char decl[8192];
    int n = 0;
    n += snprintf(decl + n, sizeof decl - (size_t)n, "#define FUSED_FMA %d\n%s", fused, defines);
    for (int i = 0; i < CK_MAX_IN; i++)
        n += snprintf(decl + n, sizeof decl - (size_t)n,
                      "layout(std430, binding=%d) readonly buffer B%d { T%d in%d[]; };\n", i, i,
                      i, i);
    /* PAIR (get_program: a half output, a kernel of one invocation an element
     * with no workgroup ties): an invocation runs the kernel's main (kmain here)
     * for elements 2g and 2g + 1, and a word whose two halves it stored is
     * written whole, without atomics (st_half) */
    n += snprintf(decl + n, sizeof decl - (size_t)n,
                  "layout(std430, binding=%d) buffer BO { TO outv[]; };\n"
                  "#ifndef PAIR\n#define PAIR 0\n#endif\n"
                  "uint gidx1() { return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * "
                  "gl_NumWorkGroups.x * 64u; }\n"
                  "#if PAIR\nuint pair_gi;\nuint gidx() { return pair_gi; }\n#define main kmain\n#else\n"
                  "uint gidx() { return gidx1(); }\n#endif\n",
                  CK_MAX_IN);
    /* Kernels read element i of input k as LDk(i) and store through ST(i, v):
     * a float32 or int32 binding is its array; a half one (Hk, HO: ck_step.half)
     * holds IEEE halves two a 32-bit word (element i in word i/2, the low half
     * first), read as floats. A half store rounds once (packHalf2x16), values
     * past the largest half saturated to it, and writes its 16 bits by atomics,
     * as the word's other half is another invocation's (or another step's). */
    /* (a program that is no step's defines none of Hk, HO: plain arrays; GLSL ES,
     * unlike C, refuses an undefined name in #if) */
    for (int i = 0; i < CK_MAX_IN; i++)
        n += snprintf(decl + n, sizeof decl - (size_t)n,
                      "#ifndef H%d\n#define H%d 0\n#endif\n#if H%d\nfloat ld%d(int i) { return unpackHalf2x16(in%d[i >> 1])[i & 1]; }\n"
                      "float ld%d(uint i) { return ld%d(int(i)); }\n#define LD%d(i) ld%d(i)\n"
                      "#else\n#define LD%d(i) in%d[i]\n#endif\n",
                      i, i, i, i, i, i, i, i, i, i, i);
    n += snprintf(decl + n, sizeof decl - (size_t)n,
                  "#ifndef HO\n#define HO 0\n#endif\n#ifndef HC\n#define HC 0\n#endif\n"
                  "#if HC\nlayout(std430, binding=%d) buffer BV { uint overflows[]; };\n#endif\n"
                  "#if HO\nvoid st_bits(int i, uint h) {\n"
                  "    if ((i & 1) == 0) { atomicAnd(outv[i >> 1], 0xffff0000u); atomicOr(outv[i >> 1], h); }\n"
                  "    else { atomicAnd(outv[i >> 1], 0xffffu); atomicOr(outv[i >> 1], h << 16); }\n"
                  "}\n"
                  "#if PAIR\nint pend_i = -1;\nuint pend_h = 0u;\n"
                  "void st_flush() { if (pend_i >= 0) st_bits(pend_i, pend_h); pend_i = -1; }\n#endif\n"
                  "void st_half(int i, float v) {\n"
                  "#if HC\n    if (abs(v) >= 65520.0 && !isinf(v)) atomicAdd(overflows[0], 1u);\n#endif\n"
                  "    if (!isinf(v) && !isnan(v)) v = clamp(v, -65504.0, 65504.0);\n"
                  "    uint h = packHalf2x16(vec2(v, 0.0)) & 0xffffu;\n"
                  "#if PAIR\n"
                  "    if ((pend_i ^ 1) == i) { outv[i >> 1] = (i & 1) == 0 ? h | (pend_h << 16) : pend_h | (h << 16); pend_i = -1; return; }\n"
                  "    st_flush(); pend_i = i; pend_h = h;\n"
                  "#else\n    st_bits(i, h);\n#endif\n"
                  "}\nvoid st_half(uint i, float v) { st_half(int(i), v); }\n#define ST(i, v) st_half(i, v)\n"
                  "#else\n#define ST(i, v) outv[i] = (v)\n#endif\n", CK_MAX_IN + 1);
    const char *tail = "#if PAIR\n#undef main\nvoid main() {\n"
                       "    pair_gi = 2u * gidx1(); kmain();\n    pair_gi++; kmain();\n    st_flush();\n}\n#endif\n";
    const char *srcs[5] = {head, decl, prelude, body, tail};
    /* the key of the binary store (where one is set): what the driver's binary depends on */
    uint64_t key[2] = {0, 0};
    if (g->bins.load || g->bins.store) {
        base_digest d = {0};
        const char *ids[3] = {(const char *)glGetString(GL_RENDERER),
                              (const char *)glGetString(GL_VENDOR),
                              (const char *)glGetString(GL_VERSION)};
        base_digest_add(&d, "streaminfer program 1", 22);
        for (int i = 0; i < 3; i++)
            base_digest_add(&d, ids[i] ? ids[i] : "", strlen(ids[i] ? ids[i] : "") + 1);
        for (int i = 0; i < 5; i++)
            base_digest_add(&d, srcs[i], strlen(srcs[i]) + 1);
        key[0] = d.a;
        key[1] = d.b;
    }
    GLuint prog = g->bins.load ? load_binary(g, key) : 0;
    if (prog) {
        g->n_loaded++;
        out->prog = prog;
        out->loc_p = glGetUniformLocation(prog, "P");
        out->loc_nt = glGetUniformLocation(prog, "NT");
        return SI_OK;
    }
    if (g->on_source) {
        size_t len = 1;
        for (int i = 0; i < 5; i++)
            len += strlen(srcs[i]);
        char *all = malloc(len);
        if (all) {
            all[0] = 0;
            for (int i = 0; i < 5; i++)
                strcat(all, srcs[i]);
            g->on_source(g->source_user, shader, all);
            free(all);
        }
    }
    GLuint sh = glCreateShader(GL_COMPUTE_SHADER);
    glShaderSource(sh, 5, srcs, NULL);
    glCompileShader(sh);
    GLint ok = 0;
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetShaderInfoLog(sh, sizeof log, NULL, log);
        glDeleteShader(sh);
        return base_fail(err, SI_ERR_GPU, "shader %s failed to compile: %.400s", shader, log);
    }
    prog = glCreateProgram();
    glAttachShader(prog, sh);
    if (g->bins.store)
        glProgramParameteri(prog, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE);
    glLinkProgram(prog);
    glDeleteShader(sh);
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetProgramInfoLog(prog, sizeof log, NULL, log);
        glDeleteProgram(prog);
        return base_fail(err, SI_ERR_GPU, "shader %s failed to link: %.400s", shader, log);
    }
    g->n_compiled++;
    store_binary(g, prog, key);
    out->prog = prog;
    out->loc_p = glGetUniformLocation(prog, "P");
    out->loc_nt = glGetUniformLocation(prog, "NT");
    return SI_OK;
}

/* ---- invocations of one dispatch: the invocations column of CK_KINDS.
 * Each kernel's shader maps gidx() the same way. ---- */

/* one an output element */
static uint64_t glk_inv_out(const ck_step *s, uint64_t out_elems)
{
    (void)s;
    return out_elems;
}

/* CK_POOL's variant: an average over a window of at least GLK_POOL_WIDE elements
 * (a global pool) runs as one workgroup an output (pool.comp's OPC 1); chosen by
 * the window alone, which no split of the output changes */
#define GLK_POOL_WIDE 256
_Static_assert(CK_REDUCE_LANES == GLK_LOCAL, "a reduction's (and an argmax's) lanes are one workgroup");
static int glk_pool_wide(const ck_step *s)
{
    const ck_pool_p *p = &s->u.pool;
    return !p->is_max && (int64_t)p->k_h * p->k_w >= GLK_POOL_WIDE;
}

static uint64_t glk_inv_pool(const ck_step *s, uint64_t out_elems)
{
    return glk_pool_wide(s) ? out_elems * GLK_LOCAL : out_elems;
}

/* CK_MATMUL's variant: few outputs (fewer than the GPU has invocations to
 * keep busy) with long sums (a dense head at batch 1: 63 outputs of 1152
 * taps took 60 us on the H100, each invocation waiting on its loads in turn)
 * run as one workgroup an output, a block of 48 taps an invocation
 * (matmul.comp's OPC 1; the same bits) */
#define GLK_MM_WIDE_K 192
#define GLK_MM_WIDE_OUT 16384
static int glk_matmul_wide(const ck_step *s)
{
    const ck_matmul_p *p = &s->u.matmul;
    return p->k >= GLK_MM_WIDE_K && (int64_t)p->batch * p->m * p->n <= GLK_MM_WIDE_OUT;
}

static uint64_t glk_inv_matmul(const ck_step *s, uint64_t out_elems)
{
    return glk_matmul_wide(s) ? out_elems * GLK_LOCAL : out_elems;
}

/* the compiled variant (OPC) of a step: its variant slot's value, or for
 * CK_POOL and CK_MATMUL whether it runs wide */
static int glk_variant(const ck_step *s, int op_slot)
{
    if (op_slot >= 0)
        return s->u.p[op_slot];
    return s->kind == CK_POOL ? glk_pool_wide(s) : s->kind == CK_MATMUL ? glk_matmul_wide(s) : -1;
}

/* one an element of the copied region */
static uint64_t glk_inv_copy(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    uint64_t n = 1;
    for (int i = 0; i < s->u.copy.rank; i++)
        n *= (uint64_t)s->u.copy.dim[i];
    return n;
}

/* one an output, or one workgroup an output where it sums in lanes */
static uint64_t glk_inv_reduce(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    uint64_t n = (uint64_t)s->u.reduce.outer * (uint64_t)s->u.reduce.inner;
    return s->u.reduce.lanes ? n * GLK_LOCAL : n;
}

/* one a row */
static uint64_t glk_inv_softmax(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    return (uint64_t)s->u.softmax.outer;
}

static uint64_t glk_inv_argmax(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    uint64_t n = (uint64_t)s->u.argmax.outer * (uint64_t)s->u.argmax.inner;
    return s->u.argmax.lanes ? n * GLK_LOCAL : n;
}

/* one a line along the scanned axis */
static uint64_t glk_inv_scan(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    return (uint64_t)s->u.scan.outer * (uint64_t)s->u.scan.inner;
}

/* one workgroup a block of a level */
static uint64_t glk_inv_topkb(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    return (uint64_t)s->u.topkb.outer * (uint64_t)s->u.topkb.nb * GLK_LOCAL;
}

static uint64_t glk_inv_dequant(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    return (uint64_t)s->u.dequant.count;
}

/* What each kernel kind runs: its shader, which parameter (if any) selects a
 * compile-time op variant, and how many invocations. */
typedef struct {
    const char *shader; /* NULL: runs on the host */
    int op_slot;        /* -1: none */
    uint64_t (*invocations)(const ck_step *s, uint64_t out_elems);
} glk_kernel;

static const glk_kernel kernels[CK__COUNT] = {
#define KERNEL(K, name, params, shader, variant, inv, iters, tiling)                               \
    [CK_##K] = {shader, variant, glk_inv_##inv},
    CK_KINDS(KERNEL)
#undef KERNEL
};

/* The slot of key in g->slot (open addressing: GLK_PROGRAM_SLOTS, twice the
 * programs, so a probe ends at an empty slot): where it is, or where it goes. */
static int program_slot(const glk_ctx *g, const char *key)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *c = key; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    int i = (int)(h % GLK_PROGRAM_SLOTS);
    while (g->slot[i] && strcmp(g->programs[g->slot[i] - 1].key, key))
        i = (i + 1) % GLK_PROGRAM_SLOTS;
    return i;
}

/* Looked up once a dispatch: a hash, not a walk over every program made. */
static glk_program *find_program(glk_ctx *g, const char *key)
{
    int i = program_slot(g, key);
    return g->slot[i] ? &g->programs[g->slot[i] - 1] : NULL;
}

/* Compiles shader with the op enums and defines, and keeps it under key. */
static si_result add_program(glk_ctx *g, const char *key, const char *shader, const char *defines,
                             glk_program **out, si_error *err)
{
    if (g->n_programs == GLK_MAX_PROGRAMS)
        return base_fail(err, SI_ERR_GPU, "program cache full");
    char defs[4096];
    int m = enum_defines(defs, sizeof defs);
    snprintf(defs + m, sizeof defs - (size_t)m, "%s", defines);
    glk_program *p = &g->programs[g->n_programs];
    si_result st = compile(g, shader, defs, p, err);
    if (st != SI_OK)
        return st;
    snprintf(p->key, sizeof p->key, "%s", key);
    g->slot[program_slot(g, p->key)] = (uint16_t)(g->n_programs + 1);
    g->n_programs++;
    *out = p;
    return SI_OK;
}

uint64_t glk_half_overflows(glk_ctx *g)
{
    if (!g->ovf_ptr || g->lost)
        return 0;
    xfer_flush(g);
    glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT_EXT);
    glFinish();
    uint64_t n = g->ovf_ptr[0];
    g->ovf_ptr[0] = 0;
    return n;
}

/* Kernels that may store a half output two elements an invocation (PAIR in
 * compile): one invocation an output element, nothing shared within a
 * workgroup, and a short sum an element (conv2d's sums of over PAIR_MAX_K taps and
 * matmul's run one an invocation: two in a row would halve what is in flight). Measured on
 * the H200: a half stored alone takes two atomics, which made f16 slower than
 * f32 on every model (bench/results/f16.md). */
#define PAIR_MAX_K 128
static int pairs(const ck_step *s, int opc)
{
    if (!(s->half >> CK_MAX_IN & 1))
        return 0;
    switch (s->kind) {
    case CK_CONV2D: /* plain or vec, with short sums (1x1 convs over few channels) */
        return (opc == 0 || opc == 3) && (int64_t)s->u.conv.k_h * s->u.conv.k_w * s->u.conv.in_c <= PAIR_MAX_K;
    case CK_ADDN:
    case CK_BINARY:
    case CK_COPY:
    case CK_DEQUANT:
    case CK_DWCONV2D:
    case CK_GATHER:
    case CK_PAD:
    case CK_RESIZE:
    case CK_SELECT:
    case CK_UNARY:
        return 1;
    default:
        return 0;
    }
}

static si_result get_program(glk_ctx *g, const ck_step *s, const si_dtype *in_dt, si_dtype out_dt,
                             int x_aligned, glk_program **out, conv_pick *pick, si_error *err)
{
    if ((unsigned)s->kind >= CK__COUNT || !kernels[s->kind].shader)
        return base_fail(err, SI_ERR_UNSUPPORTED, "no GPU kernel for %s", ck_kind_name(s->kind));
    const glk_kernel *k = &kernels[s->kind];
    char key[96];
    int opc = glk_variant(s, k->op_slot);
    conv_pick cv = {opc, g->conv_tile[0], 1};
    int n = snprintf(key, sizeof key, "%s:%d:", k->shader, opc);
    if (s->kind == CK_CONV2D) { /* the variant, its runs or its tile */
        opc = (cv = conv_variant(g, s, x_aligned && in_dt[0] == SI_FLOAT32)).opc;
        n = snprintf(key, sizeof key, "%s:%d:%d.%d.%d.%d.%d.%d:", k->shader, opc, cv.slices,
                     cv.tile[0], cv.tile[1], cv.tile[2], cv.tile[3], cv.tile[4]);
    }
    if (pick)
        *pick = cv;
    /* an absent input's binding is declared as a float32 one (below): the same
     * source, so the same program as with a float32 input there (a conv with
     * and without its fused residual, say: one program, not two; on llvmpipe
     * each costs megabytes of JIT code) */
    for (int i = 0; i < CK_MAX_IN && n < (int)sizeof key - 3; i++)
        key[n++] = i < s->n_in && s->in[i] >= 0
                       ? (in_dt[i] == SI_FLOAT32 ? (s->half >> i & 1 ? 'h' : 'f') : 'i')
                       : 'f';
    key[n++] = out_dt == SI_FLOAT32 ? (s->half >> CK_MAX_IN & 1 ? 'h' : 'f') : 'i';
    int pair = pairs(s, opc);
    key[n++] = pair ? 'p' : '1';
    key[n++] = g->ahead ? 'a' : 's';
    key[n] = 0;
    if ((*out = find_program(g, key)))
        return SI_OK;
    char defs[2048];
    int m = snprintf(defs, sizeof defs, "#define OPC %d\n#define AHEAD %d\n", opc, g->ahead);
    if (s->kind == CK_CONV2D) {
        const int *t = cv.tile;
        m += snprintf(defs + m, sizeof defs - (size_t)m,
                      "#define CT_BM %d\n#define CT_BN %d\n#define CT_TM %d\n#define CT_TN %d\n"
                      "#define CT_BK %d\n#define CL_S %d\n", t[0], t[1], t[2], t[3], t[4], cv.slices);
    }
    /* Tk / TO the bindings' element types, Vk / VO the values kernels compute with */
    for (int i = 0; i < CK_MAX_IN; i++) {
        const char *t = dtype_glsl(i < s->n_in && s->in[i] >= 0 ? in_dt[i] : SI_FLOAT32);
        int h = s->half >> i & 1;
        m += snprintf(defs + m, sizeof defs - (size_t)m, "#define T%d %s\n#define V%d %s\n#define H%d %d\n",
                      i, opc == 3 && s->kind == CK_CONV2D && i == 0 && !h ? "vec4" : h ? "uint" : t, i,
                      h ? "float" : t, i, h);
    }
    int ho = s->half >> CK_MAX_IN & 1;
    snprintf(defs + m, sizeof defs - (size_t)m,
             "#define TO %s\n#define VO %s\n#define HO %d\n#define HC %d\n#define PAIR %d\n",
             ho ? "uint" : dtype_glsl(out_dt), ho ? "float" : dtype_glsl(out_dt), ho,
             ho && count_overflows(g), pair);
    si_result st = add_program(g, key, k->shader, defs, out, err);
    if (st == SI_OK)
        (*out)->pair = pair;
    return st;
}

/* A program that is no step's (the transfer kernel), by shader name. */
static si_result get_named_program(glk_ctx *g, const char *key, const char *shader, const char *defines,
                                   glk_program **out, si_error *err)
{
    if ((*out = find_program(g, key)))
        return SI_OK;
    return add_program(g, key, shader, defines, out, err);
}

si_result glk_prepare_step(glk_ctx *g, const ck_step *s, const si_dtype *in_dtypes,
                           si_dtype out_dtype, si_error *err)
{
    if (g->lost)
        return lost_fail(err, "compile");
    glk_program *p;
    return get_program(g, s, in_dtypes, out_dtype, 1, &p, NULL, err); /* bindings are aligned, as a rule */
}

si_result glk_run_step(glk_ctx *g, const ck_step *s, const glk_range *ins,
                       const si_dtype *in_dtypes, const glk_range *out, si_dtype out_dtype,
                       si_error *err)
{
    si_result st = cmd_gate(g, ck_kind_name(s->kind), err);
    if (st != SI_OK)
        return st;
    glk_program *p;
    int x_aligned = s->n_in > 0 && s->in[0] >= 0 && ins[0].offset % 16 == 0;
    conv_pick cv;
    st = get_program(g, s, in_dtypes, out_dtype, x_aligned, &p, &cv, err);
    if (st != SI_OK)
        return st;
    glk_range rd[CK_MAX_IN];
    for (int i = 0; i < CK_MAX_IN; i++)
        rd[i] = i < s->n_in && s->in[i] >= 0 ? ins[i] : (glk_range){0, 0, 0};
    hazard(g, rd, CK_MAX_IN, out);
    use_program(g, p->prog);
    set_p(p, s->u.p);
    /* a half output's range is its elements' bytes, not rounded up to a word */
    uint64_t n_out = s->half >> CK_MAX_IN & 1 ? out->bytes / 2 : out->bytes / CK_ELEM;
    uint64_t inv = s->kind == CK_CONV2D ? conv_inv(cv, s, n_out) : kernels[s->kind].invocations(s, n_out);
    glk_limits lim;
    glk_get_limits(g, &lim);
    if (inv > lim.dispatch_elements) /* the plan keeps tensors smaller: not reached */
        return base_fail(err, SI_ERR_GPU, "%s step of %llu invocations: more than one dispatch "
                        "covers (%llu)", ck_kind_name(s->kind), (unsigned long long)inv,
                        (unsigned long long)lim.dispatch_elements);
    if (p->loc_nt >= 0 && (!p->nt_set || p->last_nt != (GLuint)inv)) {
        glUniform1ui(p->loc_nt, (GLuint)inv);
        p->last_nt = (GLuint)inv;
        p->nt_set = 1;
    }
    /* Unused bindings get the output range: declared blocks must be backed. */
    for (int i = 0; i < CK_MAX_IN; i++) {
        const glk_range *r = i < s->n_in && s->in[i] >= 0 ? &ins[i] : out;
        bind_range(g, i, r->buf, r->offset, r->bytes ? (r->bytes + 3) / 4 * 4 : 4);
    }
    bind_range(g, CK_MAX_IN, out->buf, out->offset, out->bytes ? (out->bytes + 3) / 4 * 4 : 4);
    if (s->half >> CK_MAX_IN & 1 && count_overflows(g)) {
        si_result st2 = ovf_ensure(g, err);
        if (st2 != SI_OK)
            return st2;
        bind_range(g, CK_MAX_IN + 1, g->ovf_buf, 0, 16);
    }
    uint64_t groups = ((p->pair ? (inv + 1) / 2 : inv) + GLK_LOCAL - 1) / GLK_LOCAL;
    if (groups > 0) {
        GLuint gx = groups > 65535 ? 65535 : (GLuint)groups;
        GLuint gy = (GLuint)((groups + gx - 1) / gx);
        int k = stamp_begin(g, 0, g->tag, 0, 0);
        glDispatchCompute(gx, gy, 1);
        stamp_end(g, k);
    }
    return gl_check(g, err, ck_kind_name(s->kind));
}
