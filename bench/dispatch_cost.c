/* What one step of a chain costs on the GPU, piece by piece (issue 17). Traced
 * runs show 7-11 us of GPU time for the smallest steps of every model (a 1x1
 * conv of a pooled vector: 9 us), where a bare dependent dispatch with a
 * barrier costs 2.6 us (../shared/gpu/probes). Each variant runs N dependent
 * steps of a tiny kernel (G workgroups of 64, each invocation reading one
 * float of the step before and writing one), adding one of the things a
 * streaminfer step does, and prints us a step (best of R runs, glFinish at
 * each end):
 *   alt      two programs alternating, each its fixed bindings, no barrier
 *   bar      + glMemoryBarrier(SHADER_STORAGE | BUFFER_UPDATE) before each
 *   bind9    one program, all 9 bindings set by glBindBufferRange each step
 *            (the ranges of one arena buffer, moving), + barrier
 *   unif     + glUniform1iv of 64 ints (changing) and glUniform1ui each step
 *   err      + glGetError each step
 *   stamps   + two glQueryCounter timestamps around each dispatch (a traced run's)
 *   base     one program, the whole arena bound once, the offsets in the
 *            uniforms (no binding a step), + barrier + uniforms + glGetError
 *   ubo      as base, but P read from a uniform buffer holding every step's
 *            (made once), a range of it bound each step instead of glUniform
 *   ubo1     as ubo, the same range every step (no binding change)
 *   nobar    bind9 with no barrier (the steps then race: a cost, not a schedule)
 *   bar_ssbo bind9 with GL_SHADER_STORAGE_BARRIER_BIT alone
 *   bar_region bind9 with glMemoryBarrierByRegion(GL_SHADER_STORAGE_BARRIER_BIT)
 * Each line also gives the CPU's time to issue the steps (before the last
 * glFinish): where it is near the whole, the CPU, not the GPU, set the pace.
 *   make bench (build/bench/dispatch_cost), or cc -O2 bench/dispatch_cost.c -lepoxy;
 *   ./dispatch_cost [steps] [runs] [groups]
 * Needs a GPU's EGL (a device platform) or Mesa's surfaceless one. */
#include <string.h>
#include "gl_probe.h"

#define NB 9 /* 8 inputs and the output, as streaminfer binds */

static const char *HEAD = "#version 310 es\nlayout(local_size_x = 64) in;\n"
                          "uniform int P[64];\nuniform uint NT;\n";
static GLuint arena, pa, pb, pr, pw, pu, ubo;
static GLint loc_p, loc_nt, loc_pw;
static int steps = 2000, groups = 4;

static GLuint make(const char *body)
{
    static char src[4096];
    snprintf(src, sizeof src, "%s%s", HEAD, body);
    return prog(src);
}

/* step k of variant v */
static void step(int v, int k, GLuint *q)
{
    uint32_t n = (uint32_t)groups * 64, half = 64u << 20;
    if (v <= 1) { /* alt, bar */
        if (v == 1)
            glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
        glUseProgram(k % 2 ? pb : pa);
    } else if (v <= 5 || v >= 9) { /* bind9, unif, stamps, err; nobar, bar_ssbo, bar_region */
        if (v == 10)
            glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
        else if (v == 11)
            glMemoryBarrierByRegion(GL_SHADER_STORAGE_BARRIER_BIT);
        else if (v != 9)
            glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
        for (int i = 0; i < NB; i++) {
            /* input 0: the last step's output; the others somewhere else each step */
            uint64_t off = i == 0 ? (uint64_t)(k % 2) * half : i == NB - 1 ? (uint64_t)((k + 1) % 2) * half
                                                                       : ((uint64_t)(k * NB + i) % 64 + 2) * (1u << 20);
            glBindBufferRange(GL_SHADER_STORAGE_BUFFER, (GLuint)i, arena, (GLintptr)off, (GLsizeiptr)n * 4);
        }
        if (v >= 3 && v < 9) {
            GLint P[64];
            for (int i = 0; i < 64; i++)
                P[i] = k + i;
            glUniform1iv(loc_p, 64, P);
            glUniform1ui(loc_nt, n + (uint32_t)(k % 2));
        }
    } else if (v >= 7) { /* ubo: each step's P a range of one buffer made before the run */
        glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
        GLintptr off = v == 7 ? (GLintptr)(k % 1024) * 512 : 0;
        glBindBufferRange(GL_UNIFORM_BUFFER, 0, ubo, off, 512);
    } else { /* base: the arena bound once */
        glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
        GLint P[64];
        for (int i = 0; i < 64; i++)
            P[i] = k + i;
        P[0] = (int)((uint64_t)(k % 2) * half / 4);
        P[1] = (int)((uint64_t)((k + 1) % 2) * half / 4);
        glUniform1iv(loc_pw, 64, P);
    }
    if (v == 4) /* stamps: as a traced run, the query objects reused */
        glQueryCounterEXT(q[0], GL_TIMESTAMP_EXT);
    glDispatchCompute((GLuint)groups, 1, 1);
    if (v == 4)
        glQueryCounterEXT(q[1], GL_TIMESTAMP_EXT);
    if (v >= 4 && v < 9) /* stamps, err, base, ubo */
        (void)glGetError();
}

int main(int argc, char **argv)
{
    if (argc > 1)
        steps = atoi(argv[1]);
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (argc > 3)
        groups = atoi(argv[3]);
    if (probe_context())
        return 0;
    printf("%s, %d steps of %d groups of 64\n", (const char *)glGetString(GL_RENDERER), steps, groups);
    glGenBuffers(1, &arena);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, arena);
    glBufferData(GL_SHADER_STORAGE_BUFFER, 128u << 20, NULL, GL_DYNAMIC_DRAW);
    char decl[2048];
    int o = 0;
    for (int i = 0; i < NB - 1; i++)
        o += snprintf(decl + o, sizeof decl - (size_t)o,
                      "layout(std430, binding=%d) readonly buffer B%d { float in%d[]; };\n", i, i, i);
    char body[4096];
    /* alt: binding 0 -> 8 and 8 -> 0 */
    pa = make("layout(std430, binding=0) buffer X { float x[]; };\nlayout(std430, binding=8) buffer Y { float y[]; };\n"
              "void main(){ uint i = gl_GlobalInvocationID.x; y[i] = x[i] * 1.0001 + 1.0; }\n");
    pb = make("layout(std430, binding=0) buffer X { float x[]; };\nlayout(std430, binding=8) buffer Y { float y[]; };\n"
              "void main(){ uint i = gl_GlobalInvocationID.x; x[i] = y[i] * 1.0001 + 1.0; }\n");
    snprintf(body, sizeof body, "%slayout(std430, binding=8) buffer BO { float outv[]; };\n"
             "void main(){ uint i = gl_GlobalInvocationID.x; if (i >= NT) return;\n"
             " outv[i] = in0[i] * 1.0001 + float(P[3] & 1) + in1[i & 3u] * 0.0; }\n", decl);
    pr = make(body);
    pw = make("layout(std430, binding=0) buffer A { float a[]; };\n"
              "void main(){ uint i = gl_GlobalInvocationID.x;\n"
              " a[uint(P[1]) + i] = a[uint(P[0]) + i] * 1.0001 + float(P[3] & 1); }\n");
    pu = prog("#version 310 es\nlayout(local_size_x = 64) in;\n"
              "layout(std140, binding = 0) uniform Params { ivec4 PB[17]; };\n"
              "#define P(i) PB[(i) >> 2][(i) & 3]\n"
              "layout(std430, binding=0) buffer A { float a[]; };\n"
              "void main(){ uint i = gl_GlobalInvocationID.x; if (i >= uint(P(64))) return;\n"
              " a[uint(P(1)) + i] = a[uint(P(0)) + i] * 1.0001 + float(P(3) & 1); }\n");
    loc_p = glGetUniformLocation(pr, "P");
    loc_nt = glGetUniformLocation(pr, "NT");
    loc_pw = glGetUniformLocation(pw, "P");
    { /* every step's P (and NT at 64), 512 bytes apart (NVIDIA's UBO offset alignment is 256) */
        static GLint u[1024 * 128];
        for (int k = 0; k < 1024; k++) {
            for (int i = 0; i < 64; i++)
                u[k * 128 + i] = k + i;
            u[k * 128] = (int)((uint64_t)(k % 2) * (64u << 20) / 4);
            u[k * 128 + 1] = (int)((uint64_t)((k + 1) % 2) * (64u << 20) / 4);
            u[k * 128 + 64] = groups * 64;
        }
        glGenBuffers(1, &ubo);
        glBindBuffer(GL_UNIFORM_BUFFER, ubo);
        glBufferData(GL_UNIFORM_BUFFER, sizeof u, u, GL_STATIC_DRAW);
    }
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, arena, 0, 1 << 20);
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 8, arena, 64u << 20, 1 << 20);
    GLuint q[2];
    glGenQueriesEXT(2, q);
    static const char *names[] = {"alt", "bar", "bind9", "unif", "stamps", "err", "base", "ubo", "ubo1",
                                  "nobar", "bar_ssbo", "bar_region"};
    /* v: 0 alt, 1 bar, 2 bind9, 3 unif, 5 err (on 3), 4 stamps (on 5), 6 base, 7 ubo, 8 ubo1,
     * 9 nobar, 10 bar_ssbo, 11 bar_region (9-11: bind9's with another barrier, or none) */
    static const int order[] = {0, 1, 2, 3, 5, 4, 6, 7, 8, 9, 10, 11};
    for (int r = 0; r < 2; r++) /* twice: the first warms the driver */
        for (int oi = 0; oi < 12; oi++) {
            int v = order[oi];
            double best = 1e9, issue = 0;
            for (int run = 0; run < runs; run++) {
                if (v == 7 || v == 8) {
                    glUseProgram(pu);
                    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, arena);
                } else if (v == 6) {
                    glUseProgram(pw);
                    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, arena);
                } else if (v >= 2) { /* bind9 .. err, nobar .. bar_region */
                    glUseProgram(pr);
                } else {
                    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, arena, 0, 1 << 20);
                    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 8, arena, 64u << 20, 1 << 20);
                }
                glFinish();
                double t0 = now();
                for (int k = 0; k < steps; k++)
                    step(v, k, q);
                double ti = (now() - t0) / steps * 1e6;
                glFinish();
                double t = (now() - t0) / steps * 1e6;
                if (t < best) {
                    best = t;
                    issue = ti;
                }
            }
            if (r == 1)
                printf("%-7s %.2f us a step (the CPU issued it in %.2f)\n", names[v], best, issue);
        }
    return 0;
}
