/* What a run's input upload and output download cost, by path (issue 17: on
 * the H100 the input's copy took 118-314 us of a small model's ~1 ms run,
 * 2-10 GB/s, where weights of the same size load at 27 GB/s from the same
 * pool). A "run" here: the input from the caller's memory to the GPU, one
 * memory-bound kernel reading it and writing the output, the output back to
 * the caller's memory; the GPU idle between runs, as streaminfer's steady
 * state is. Median wall time of R runs for each path:
 *   in:  pool+copy   memcpy into a persistently mapped pool (read|write,
 *                    coherent, client storage: streaminfer's host pool), then
 *                    glCopyBufferSubData into the device buffer (today's path)
 *        pool+copy,stale  the same copy without the memcpy (the pool's bytes
 *                    not just written by the CPU)
 *        subdata     glBufferSubData from the caller's memory
 *        pool+kernel memcpy into the pool, a copy kernel into the device buffer
 *        in place    memcpy into the pool, the kernel reads it there
 *        wpool+copy  memcpy into a pool mapped write-only, then the copy
 *        mt pool+copy  today's path with the memcpy split over threads
 *                    (base_copy)
 *        mt nt pool+copy  the same with stores past the CPU's caches
 *        device      none (the input already on the GPU): the floor
 *   out: rb 1MiB     glCopyBufferSubData into a 1 MiB mapped staging buffer, a
 *                    fence waited for, memcpy out; a chunk at a time (before
 *                    session 34)
 *        rb 1MiB mt  the same, each chunk's memcpy split over threads (base_copy)
 *        rb whole    one copy into a staging buffer as big as the output
 *        kernel->host the kernel writes the output into mapped host memory
 *        none        no download: the floor
 * and the GPU time of the input's copy (GL_EXT_disjoint_timer_query) where
 * there is one.
 *   make bench (it links libstreaminfer.a for base_copy)
 *   ./transfer_io [runs] [in bytes,...] [out bytes]
 * Needs a GPU's EGL (a device platform) or Mesa's surfaceless one. */
#include <string.h>
#include "gl_probe.h"
#include "../base/base.h"

/* the model: reads the input, writes the output (w[i] = 2 v[i mod n_in]) */
static const char *WORK = "#version 310 es\nlayout(local_size_x=256) in;\n"
                          "layout(std430, binding=1) readonly buffer I { vec4 v[]; };\n"
                          "layout(std430, binding=2) writeonly buffer W { vec4 w[]; };\nuniform uint n_in, n_out;\n"
                          "void main(){ uint g=gl_GlobalInvocationID.x, st=gl_NumWorkGroups.x*256u;\n"
                          " for(uint i=g;i<n_out;i+=st) w[i]=2.0*v[i%n_in]; }\n";
static const char *KCOPY = "#version 310 es\nlayout(local_size_x=64) in;\n"
                           "layout(std430, binding=1) readonly buffer I { ivec4 v[]; };\n"
                           "layout(std430, binding=2) writeonly buffer W { ivec4 w[]; };\nuniform uint n4;\n"
                           "void main(){ uint g=gl_GlobalInvocationID.x, st=gl_NumWorkGroups.x*64u;\n"
                           " for(uint i=g;i<n4;i+=st) w[i]=v[i]; }\n";

enum { IN_POOL, IN_STALE, IN_SUBDATA, IN_KERNEL, IN_INPLACE, IN_WPOOL, IN_POOLMT, IN_POOLNT, IN_DEVICE, N_IN };
enum { OUT_RB1, OUT_RB1MT, OUT_RBALL, OUT_HOST, OUT_NONE, N_OUT };
static const char *in_name[N_IN] = {"pool+copy", "pool+copy,stale", "subdata", "pool+kernel",
                                    "in place", "wpool+copy", "mt pool+copy", "mt nt pool+copy", "device"};
static const char *out_name[N_OUT] = {"rb 1MiB", "rb 1MiB mt", "rb whole", "kernel->host", "none"};

static GLuint pwork, pcopy, pool, wpool, din, dout, rb1, rball, hout;
static void *pool_p, *wpool_p, *rb1_p, *rball_p, *hout_p;
static float *user_in, *user_out;
static size_t S_in, S_out;
static GLuint q[2];
static int have_tq;

static void *mapped(GLuint *b, size_t n, GLbitfield access, GLbitfield extra)
{
    glGenBuffers(1, b);
    glBindBuffer(GL_COPY_WRITE_BUFFER, *b);
    glBufferStorageEXT(GL_COPY_WRITE_BUFFER, (GLsizeiptr)n, NULL,
                       access | GL_MAP_PERSISTENT_BIT_EXT | GL_MAP_COHERENT_BIT_EXT | extra);
    void *p = glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, (GLsizeiptr)n,
                               access | GL_MAP_PERSISTENT_BIT_EXT | GL_MAP_COHERENT_BIT_EXT);
    if (!p) {
        printf("map failed 0x%x\n", glGetError());
        exit(1);
    }
    return p;
}

static void copy(GLuint src, size_t so, GLuint dst, size_t dof, size_t n)
{
    glBindBuffer(GL_COPY_READ_BUFFER, src);
    glBindBuffer(GL_COPY_WRITE_BUFFER, dst);
    glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)so, (GLintptr)dof, (GLsizeiptr)n);
}

static void wait_gpu(void)
{
    GLsync s = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    glClientWaitSync(s, GL_SYNC_FLUSH_COMMANDS_BIT, 10000000000ull);
    glDeleteSync(s);
}

static double gpu_copy_us = -1;

static void run(int in, int out, int timed_copy)
{
    GLuint src = din;
    if (in == IN_POOL || in == IN_KERNEL || in == IN_INPLACE)
        memcpy(pool_p, user_in, S_in);
    if (in == IN_WPOOL)
        memcpy(wpool_p, user_in, S_in);
    if (in == IN_POOLMT || in == IN_POOLNT)
        base_copy(pool_p, user_in, S_in, in == IN_POOLNT);
    if (timed_copy && have_tq)
        glQueryCounterEXT(q[0], GL_TIMESTAMP_EXT);
    if (in == IN_POOL || in == IN_STALE || in == IN_POOLMT || in == IN_POOLNT)
        copy(pool, 0, din, 0, S_in);
    else if (in == IN_WPOOL)
        copy(wpool, 0, din, 0, S_in);
    else if (in == IN_SUBDATA) {
        glBindBuffer(GL_SHADER_STORAGE_BUFFER, din);
        glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)S_in, user_in);
    } else if (in == IN_KERNEL) {
        glUseProgram(pcopy);
        glUniform1ui(glGetUniformLocation(pcopy, "n4"), (GLuint)(S_in / 16));
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, pool);
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, din);
        glDispatchCompute(1024, 1, 1);
    } else if (in == IN_INPLACE)
        src = pool;
    if (timed_copy && have_tq)
        glQueryCounterEXT(q[1], GL_TIMESTAMP_EXT);
    glMemoryBarrier(GL_ALL_BARRIER_BITS);
    glUseProgram(pwork);
    glUniform1ui(glGetUniformLocation(pwork, "n_in"), (GLuint)(S_in / 16));
    glUniform1ui(glGetUniformLocation(pwork, "n_out"), (GLuint)(S_out / 16));
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, src);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, out == OUT_HOST ? hout : dout);
    glDispatchCompute(528, 1, 1);
    glMemoryBarrier(GL_ALL_BARRIER_BITS);
    if (out == OUT_RB1 || out == OUT_RB1MT) {
        for (size_t at = 0; at < S_out; at += 1u << 20) {
            size_t n = S_out - at < (1u << 20) ? S_out - at : 1u << 20;
            copy(dout, at, rb1, 0, n);
            wait_gpu();
            if (out == OUT_RB1MT)
                base_copy((char *)user_out + at, rb1_p, n, 0);
            else
                memcpy((char *)user_out + at, rb1_p, n);
        }
    } else if (out == OUT_RBALL) {
        copy(dout, 0, rball, 0, S_out);
        wait_gpu();
        memcpy(user_out, rball_p, S_out);
    } else if (out == OUT_HOST) {
        wait_gpu();
        memcpy(user_out, hout_p, S_out);
    } else
        wait_gpu();
    if (timed_copy && have_tq) {
        GLuint64 a = 0, b = 0;
        glGetQueryObjectui64vEXT(q[0], GL_QUERY_RESULT_EXT, &a);
        glGetQueryObjectui64vEXT(q[1], GL_QUERY_RESULT_EXT, &b);
        gpu_copy_us = (double)(b - a) * 1e-3;
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_run(int in, int out, int runs, double *copy_us)
{
    double *t = malloc((size_t)runs * sizeof *t), *c = malloc((size_t)runs * sizeof *c);
    for (int r = 0; r < 5; r++)
        run(in, out, 0);
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        run(in, out, 0);
        t[r] = now() - t0;
    }
    for (int r = 0; r < runs && have_tq; r++) {
        run(in, out, 1);
        c[r] = gpu_copy_us;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_d);
    qsort(c, (size_t)runs, sizeof *c, cmp_d);
    double m = t[runs / 2];
    *copy_us = have_tq ? c[runs / 2] : -1;
    free(t);
    free(c);
    return m;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 200;
    const char *ins = argc > 2 ? argv[2] : "602112,1769472,3145728";
    S_out = argc > 3 ? (size_t)atol(argv[3]) : 262144;
    if (probe_context())
        return 1;
    have_tq = epoxy_has_gl_extension("GL_EXT_disjoint_timer_query");
    printf("%s | %s | runs %d, output %zu bytes | timer queries %s\n", glGetString(GL_RENDERER),
           glGetString(GL_VERSION), runs, S_out, have_tq ? "yes" : "no");
    if (have_tq)
        glGenQueriesEXT(2, q);
    pwork = prog(WORK);
    pcopy = prog(KCOPY);
    size_t max_in = 16;
    for (const char *p = ins; *p;) {
        size_t v = (size_t)strtoull(p, (char **)&p, 10);
        max_in = v > max_in ? v : max_in;
        if (*p == ',')
            p++;
    }
    pool_p = mapped(&pool, max_in, GL_MAP_READ_BIT | GL_MAP_WRITE_BIT, GL_CLIENT_STORAGE_BIT_EXT);
    wpool_p = mapped(&wpool, max_in, GL_MAP_WRITE_BIT, 0);
    rb1_p = mapped(&rb1, 1u << 20, GL_MAP_READ_BIT, GL_CLIENT_STORAGE_BIT_EXT);
    rball_p = mapped(&rball, S_out, GL_MAP_READ_BIT, GL_CLIENT_STORAGE_BIT_EXT);
    hout_p = mapped(&hout, S_out, GL_MAP_READ_BIT | GL_MAP_WRITE_BIT, GL_CLIENT_STORAGE_BIT_EXT);
    GLuint *dev[2] = {&din, &dout};
    size_t dsz[2] = {max_in, S_out};
    for (int i = 0; i < 2; i++) {
        glGenBuffers(1, dev[i]);
        glBindBuffer(GL_SHADER_STORAGE_BUFFER, *dev[i]);
        glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)dsz[i], NULL, GL_DYNAMIC_COPY);
    }
    user_in = malloc(max_in);
    user_out = malloc(S_out);
    for (size_t i = 0; i < max_in / 4; i++)
        user_in[i] = (float)(i % 977) * 0.25f;
    memcpy(pool_p, user_in, max_in);
    memcpy(wpool_p, user_in, max_in);
    printf("| input bytes | input path | output path | run us (median) | GPU us of the input's copy |\n|---:|---|---|---:|---:|\n");
    for (const char *p = ins; *p;) {
        S_in = (size_t)strtoull(p, (char **)&p, 10) / 16 * 16;
        if (*p == ',')
            p++;
        for (int in = 0; in < N_IN; in++)
            for (int out = 0; out < N_OUT; out++) {
                if (in != IN_POOL && out != OUT_RB1 && out != OUT_NONE)
                    continue; /* output paths only beside today's input path */
                double cu, m = median_run(in, out, runs, &cu);
                /* the output must be 2x the input, whatever the path */
                int ok = 1;
                if (out != OUT_NONE)
                    for (size_t i = 0; i < S_out / 4; i += 997)
                        ok &= user_out[i] == 2.0f * user_in[i % (S_in / 4)];
                char cs[32] = "-";
                if (cu >= 0)
                    snprintf(cs, sizeof cs, "%.1f", cu);
                printf("| %zu | %s | %s | %.1f%s | %s |\n", S_in, in_name[in], out_name[out], m * 1e6,
                       ok ? "" : " WRONG OUTPUT", cs);
            }
    }
    printf("GL error 0x%x\n", glGetError());
    return 0;
}
