/* What the stand-alone GL probes of bench/ share (overlap_steps.c,
 * transfer_io.c): a clock, a compute program from source, and a GLES 3.1
 * context current on a GPU's EGL device (or Mesa's surfaceless display). */
#ifndef BENCH_GL_PROBE_H
#define BENCH_GL_PROBE_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime */
#endif
#include <epoxy/egl.h>
#include <epoxy/gl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static GLuint prog(const char *src)
{
    GLuint s = glCreateShader(GL_COMPUTE_SHADER);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2000];
        glGetShaderInfoLog(s, 2000, NULL, log);
        printf("compile: %s\n", log);
        exit(1);
    }
    GLuint p = glCreateProgram();
    glAttachShader(p, s);
    glLinkProgram(p);
    return p;
}

/* 0 with a context current, -1 (said on stdout) where there is no display */
static int probe_context(void)
{
    EGLDisplay d = EGL_NO_DISPLAY;
    if (epoxy_has_egl_extension(EGL_NO_DISPLAY, "EGL_EXT_device_enumeration")) {
        EGLDeviceEXT devs[8];
        EGLint n = 0;
        eglQueryDevicesEXT(8, devs, &n);
        for (int i = 0; i < n && d == EGL_NO_DISPLAY; i++) {
            EGLDisplay dd = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL);
            EGLint a, b;
            if (dd && eglInitialize(dd, &a, &b))
                d = dd;
        }
    }
    if (d == EGL_NO_DISPLAY) {
        d = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
        EGLint a, b;
        if (!eglInitialize(d, &a, &b)) {
            printf("no EGL display\n");
            return -1;
        }
    }
    eglBindAPI(EGL_OPENGL_ES_API);
    EGLint ca[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1, EGL_NONE};
    EGLContext c = eglCreateContext(d, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, ca);
    eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, c);
    return 0;
}
#endif
