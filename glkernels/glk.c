/* Context, buffers, transfers, ordering and the dispatch of one step (its
 * program: glk_program.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "glk_internal.h"

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
    glk_conv_setup(g);
    glk_set_ahead(g, -1);
    glk_set_quad(g, -1);
    glk_set_epi(g, -1);
    glk_set_epi_room(g, -1);
    /* the driver may build programs on as many threads as it likes (gpu_prepare
     * hands them over together) */
    if (epoxy_has_gl_extension("GL_KHR_parallel_shader_compile"))
        glMaxShaderCompilerThreadsKHR(0xffffffffu);
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
    glk_clear_errors(g);
    const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT_EXT | GL_MAP_COHERENT_BIT_EXT;
    GLuint b = 0;
    glGenBuffers(1, &b);
    glBindBuffer(GL_COPY_WRITE_BUFFER, b);
    glBufferStorageEXT(GL_COPY_WRITE_BUFFER, GLK_READBACK, NULL, flags | GL_CLIENT_STORAGE_BIT_EXT);
    void *p = glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, GLK_READBACK, flags);
    if (glGetError() != GL_NO_ERROR || !p) {
        glDeleteBuffers(1, &b);
        glk_clear_errors(g);
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
        st = glk_get_named_program(g, "xfer", "xfer", XFER_DEFS("int") "#define XWORDS 1\n", &g->xfer_prog[0], err);
    if (st == SI_OK && !g->xfer_prog[1])
        st = glk_get_named_program(g, "xfer4", "xfer", XFER_DEFS("ivec4"), &g->xfer_prog[1], err);
    if (st == SI_OK && counting && !g->xfer_prog[2])
        st = glk_get_named_program(g, "xferhc", "xfer", XFER_DEFS("int") "#define XWORDS 1\n#define HC 1\n",
                               &g->xfer_prog[2], err);
    return st;
}

/* Whether half stores count their overflows: a binding to spare for the
 * count, and mapped host memory to keep it in (ovf_ensure) */
int glk_count_overflows(const glk_ctx *g) { return g->max_blocks >= CK_MAX_IN + 2 && g->has_storage; }

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
    int counting = half && quant != 3 && glk_count_overflows(g);
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
    if (g->client_writes) /* shader writes the CPU reads through its mapping */
        glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT_EXT);
    g->client_writes = 0;
    glFinish();
    return gl_check(g, err, "finish");
}

void glk_client_writes(glk_ctx *g) { g->client_writes = 1; }

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

si_result glk_prepare_step(glk_ctx *g, const ck_step *s, const si_dtype *in_dtypes,
                           si_dtype out_dtype, si_error *err)
{
    if (g->lost)
        return lost_fail(err, "compile");
    glk_program *p;
    return glk_get_program(g, s, in_dtypes, out_dtype, ~0u, &p, NULL, err); /* bindings are aligned, as a rule */
}

si_result glk_run_step(glk_ctx *g, const ck_step *s, const glk_range *ins,
                       const si_dtype *in_dtypes, const glk_range *out, si_dtype out_dtype,
                       si_error *err)
{
    si_result st = cmd_gate(g, ck_kind_name(s->kind), err);
    if (st != SI_OK)
        return st;
    glk_program *p;
    unsigned aligned = out->offset % 16 == 0 ? 1u << CK_MAX_IN : 0; /* bit i: binding i at 16 bytes */
    for (int i = 0; i < s->n_in && i < CK_MAX_IN; i++)
        aligned |= (unsigned)(s->in[i] >= 0 && ins[i].offset % 16 == 0) << i;
    glk_conv_pick cv;
    st = glk_get_program(g, s, in_dtypes, out_dtype, aligned, &p, &cv, err);
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
    int conv = s->kind == CK_CONV2D || s->kind == CK_DWCONV2D || s->kind == CK_DECONV2D;
    uint64_t inv = conv ? glk_conv_inv(cv, s, n_out) : glk_kernels[s->kind].invocations(s, n_out);
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
    if (s->half >> CK_MAX_IN & 1 && glk_count_overflows(g)) {
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
