/* Does a transfer kernel overlap the step dispatched after it when steps are
 * separated by barriers, as streaminfer issues them (issue 19)? A run of N
 * steps, each: glMemoryBarrier, a copy kernel of C bytes from a persistently
 * mapped host buffer into the GPU, and a compute kernel of about T us. Timed
 * (best of 20 runs, glFinish at each end) with:
 *   kernels alone, copies alone, copy then kernel writing ranges of one buffer,
 *   copy then kernel writing two buffers, kernel then copy (one buffer),
 *   and copy then kernel with no barriers at all (one buffer).
 * The kernel is an ALU loop (burn) or, with a fourth argument pw, a 1x1
 * convolution of 128 channels into 512 reading its input and weights from
 * device memory, one output an invocation, as streaminfer's plain conv does
 * (the number of pixels set for the time asked). The copy kernel's grid is
 * 1,024 groups of 64 unless a fifth argument says how many.
 *   make bench (build/bench/overlap_steps), or cc -O2 bench/overlap_steps.c -lepoxy -o overlap_steps;
 *   ./overlap_steps [KiB] [us] [steps] [burn|pw] [copy groups]
 * Needs a GPU's EGL (a device platform) or Mesa's surfaceless one. */
#include <string.h>
#include "gl_probe.h"

static const char *BURN = "#version 310 es\nlayout(local_size_x=256) in;\n"
    "layout(std430, binding=0) buffer O { float o[]; };\nuniform int iters;\n"
    "void main(){ float a=float(gl_GlobalInvocationID.x)*1e-7, b=1.0001, c=0.9999, e=0.5;\n"
    " for(int i=0;i<iters;i++){ a=a*b+c; e=e*c+b; b=b*0.99999+1e-6; }\n o[gl_GlobalInvocationID.x]=a+e; }\n";
/* as streaminfer's xfer.comp: a fixed grid of 1,024 groups of 64 striding over 16-byte elements */
static const char *KCOPY = "#version 310 es\nlayout(local_size_x=64) in;\n"
    "layout(std430, binding=1) readonly buffer I { ivec4 v[]; };\n"
    "layout(std430, binding=2) writeonly buffer W { ivec4 w[]; };\nuniform uint n4;\n"
    "void main(){ uint g=gl_GlobalInvocationID.x, st=gl_NumWorkGroups.x*64u;\n"
    " for(uint i=g;i<n4;i+=st) w[i]=v[i]; }\n";

static const char *PW = "#version 310 es\nlayout(local_size_x=256) in;\n"
    "layout(std430, binding=0) buffer O { float o[]; };\n"
    "layout(std430, binding=3) readonly buffer X { float x[]; };\n"
    "layout(std430, binding=4) readonly buffer F { float f[]; };\nuniform int iters;\n"
    "void main(){ int g=int(gl_GlobalInvocationID.x); if (g >= iters * 512) return;\n"
    " int p=g/512, co=g%512; float s=0.0;\n"
    " for(int ci=0;ci<128;ci++) s+=x[p*512+ci]*f[ci*512+co];\n o[g]=s; }\n";

static GLuint pburn, pcopy, host, big, other, xin, wts;
static GLint loc_iters, loc_n4;
static int use_pw;
static GLuint copy_groups = 1024;
static size_t C;
static int iters, steps;
static const GLuint BURN_GROUPS = 528; /* 4 an SM of an H100/H200 */

static void burn(GLuint buf, size_t off)
{
    if (use_pw) { /* iters: pixels */
        glUseProgram(pburn);
        glUniform1i(loc_iters, iters);
        glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, buf, (GLintptr)off, (GLsizeiptr)iters * 512 * 4);
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, xin);
        glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 4, wts);
        glDispatchCompute((GLuint)((iters * 512 + 255) / 256), 1, 1);
        return;
    }
    glUseProgram(pburn);
    glUniform1i(loc_iters, iters);
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 0, buf, (GLintptr)off, BURN_GROUPS * 256 * 4);
    glDispatchCompute(BURN_GROUPS, 1, 1);
}

static void kcopy(int i)
{
    glUseProgram(pcopy);
    glUniform1ui(loc_n4, (GLuint)(C / 16));
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 1, host, (GLintptr)((size_t)i * C), (GLsizeiptr)C);
    glBindBufferRange(GL_SHADER_STORAGE_BUFFER, 2, big, (GLintptr)((size_t)i * C), (GLsizeiptr)C);
    GLuint groups = (GLuint)((C / 16 + 63) / 64);
    glDispatchCompute(groups < copy_groups ? groups : copy_groups, 1, 1);
}

enum { KERNELS, COPIES, COPY_KERNEL, COPY_KERNEL_2BUF, KERNEL_COPY, NO_BARRIER };

static void run(int mode)
{
    size_t koff = (size_t)steps * C; /* the kernels' range of `big`, after the copies' */
    for (int i = 0; i < steps; i++) {
        if (mode != NO_BARRIER)
            glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
        if (mode == KERNEL_COPY)
            burn(big, koff);
        if (mode != KERNELS)
            kcopy(i);
        if (mode == KERNELS || mode == COPY_KERNEL || mode == NO_BARRIER)
            burn(big, koff);
        if (mode == COPY_KERNEL_2BUF)
            burn(other, 0);
    }
}

static double timed(int mode, int reps)
{
    double best = 1e9;
    for (int r = 0; r < reps; r++) {
        glFinish();
        double t = now();
        run(mode);
        glFinish();
        t = now() - t;
        best = t < best ? t : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    C = (size_t)(argc > 1 ? atol(argv[1]) : 1024) << 10;
    double want_us = argc > 2 ? atof(argv[2]) : 25;
    steps = argc > 3 ? atoi(argv[3]) : 40;
    use_pw = argc > 4 && argv[4][0] == 'p';
    if (argc > 5)
        copy_groups = (GLuint)atoi(argv[5]);
    if (probe_context())
        return 1;
    printf("%s: %d steps, a copy of %zu KiB and a kernel of ~%.0f us each\n", (const char *)glGetString(GL_RENDERER),
           steps, C >> 10, want_us);
    pburn = prog(use_pw ? PW : BURN);
    pcopy = prog(KCOPY);
    loc_iters = glGetUniformLocation(pburn, "iters");
    loc_n4 = glGetUniformLocation(pcopy, "n4");
    size_t hostb = (size_t)steps * C;
    glGenBuffers(1, &host);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, host);
    glBufferStorageEXT(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)hostb, NULL,
                       GL_MAP_WRITE_BIT | GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT_EXT | GL_MAP_COHERENT_BIT_EXT |
                           GL_CLIENT_STORAGE_BIT_EXT);
    float *m = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)hostb,
                                GL_MAP_WRITE_BIT | GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT_EXT | GL_MAP_COHERENT_BIT_EXT);
    if (!m) {
        printf("map failed 0x%x\n", glGetError());
        return 1;
    }
    for (size_t i = 0; i < hostb / 4; i++)
        m[i] = (float)(i % 1000);
    glGenBuffers(1, &big);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, big);
    glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)(hostb + (size_t)16384 * 512 * 4), NULL, GL_DYNAMIC_COPY);
    enum { MAXPIX = 16384 };
    glGenBuffers(1, &xin);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, xin);
    glBufferData(GL_SHADER_STORAGE_BUFFER, MAXPIX * 512 * 4, NULL, GL_DYNAMIC_COPY);
    glGenBuffers(1, &wts);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, wts);
    glBufferData(GL_SHADER_STORAGE_BUFFER, 512 * 512 * 4, NULL, GL_DYNAMIC_COPY);
    glGenBuffers(1, &other);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, other);
    glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)16384 * 512 * 4, NULL, GL_DYNAMIC_COPY);
    /* the kernel's length: iterations scaled until a step of kernels alone takes want_us */
    iters = 64;
    timed(KERNELS, 2);
    if (use_pw)
        printf("kernel: 1x1 convolution, 128 -> 512 channels; copy grid %u groups\n", copy_groups);
    for (int r = 0; r < 8; r++) {
        double per = timed(KERNELS, 3) / steps * 1e6;
        iters = (int)(iters * want_us / per);
        iters = iters < 1 ? 1 : iters;
        if (use_pw && iters > 16384)
            iters = 16384;
    }
    static const char *names[] = {"kernels alone", "copies alone", "copy, then kernel (one buffer)",
                                  "copy, then kernel (two buffers)", "kernel, then copy (one buffer)",
                                  "copy, then kernel, no barriers"};
    double t[6];
    for (int k = 0; k < 6; k++)
        t[k] = timed(k, 20);
    if (use_pw)
        printf("%d pixels\n", iters);
    for (int k = 0; k < 6; k++)
        printf("%-34s %8.1f us a step%s\n", names[k], t[k] / steps * 1e6,
               k == COPIES ? "" : "");
    printf("copies alone: %.1f GB/s; sum of both alone %.1f us, larger %.1f us\n", C / (t[COPIES] / steps) / 1e9,
           (t[KERNELS] + t[COPIES]) / steps * 1e6, (t[KERNELS] > t[COPIES] ? t[KERNELS] : t[COPIES]) / steps * 1e6);
    printf("GL error 0x%x\n", glGetError());
    return 0;
}
