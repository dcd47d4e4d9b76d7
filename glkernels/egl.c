/* Headless EGL: the device platform first (NVIDIA, Mesa), then Mesa's
 * surfaceless platform. No window, no X. */
#include <epoxy/egl.h>
#include <epoxy/gl.h>
#include <string.h>
#include "glk_internal.h"

static int has_ext(const char *list, const char *ext)
{
    size_t n = strlen(ext);
    for (const char *p = list; p && (p = strstr(p, ext)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

static EGLDisplay try_device_platform(const char *client)
{
    /* NVIDIA advertises device enumeration as part of EGL_EXT_device_base. */
    if (!has_ext(client, "EGL_EXT_platform_device") ||
        !(has_ext(client, "EGL_EXT_device_enumeration") || has_ext(client, "EGL_EXT_device_base")))
        return EGL_NO_DISPLAY;
    EGLDeviceEXT devs[16];
    EGLint n = 0;
    if (!eglQueryDevicesEXT(16, devs, &n))
        return EGL_NO_DISPLAY;
    for (EGLint i = 0; i < n; i++) {
        EGLDisplay d = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL);
        if (d == EGL_NO_DISPLAY)
            continue;
        EGLint maj, min;
        if (eglInitialize(d, &maj, &min))
            return d;
    }
    return EGL_NO_DISPLAY;
}

static EGLDisplay try_surfaceless(const char *client)
{
    if (!has_ext(client, "EGL_MESA_platform_surfaceless"))
        return EGL_NO_DISPLAY;
    EGLDisplay d = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    EGLint maj, min;
    if (d != EGL_NO_DISPLAY && eglInitialize(d, &maj, &min))
        return d;
    return EGL_NO_DISPLAY;
}

static si_result egl_open_display(glk_ctx *g, si_error *err)
{
    const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!client)
        return base_fail(err, SI_ERR_GPU, "EGL: no client extensions (is libEGL installed?)");
    g->dpy = try_device_platform(client);
    if (g->dpy == EGL_NO_DISPLAY)
        g->dpy = try_surfaceless(client);
    if (g->dpy == EGL_NO_DISPLAY)
        return base_fail(err, SI_ERR_GPU,
                        "EGL: no device or surfaceless display could be initialized");
    return SI_OK;
}

si_result glk_egl_open(glk_ctx *g, si_error *err)
{
    si_result st = egl_open_display(g, err);
    if (st != SI_OK)
        return st;
    if (!eglBindAPI(EGL_OPENGL_ES_API))
        return base_fail(err, SI_ERR_GPU, "EGL: OpenGL ES API not available");
    const EGLint cfg_attr[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE, 0,
                               EGL_NONE};
    EGLConfig cfg = NULL;
    EGLint ncfg = 0;
    if (!eglChooseConfig(g->dpy, cfg_attr, &cfg, 1, &ncfg) || ncfg < 1) {
        const EGLint any[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_NONE};
        if (!eglChooseConfig(g->dpy, any, &cfg, 1, &ncfg) || ncfg < 1)
            cfg = EGL_NO_CONFIG_KHR;
    }
    /* ES 3.2 where there is one: its fma() and `precise` make accumulations
     * round once per term, as TensorFlow.js's float32 arrays do. */
    const EGLint ctx32[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 2, EGL_NONE};
    const EGLint ctx31[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1, EGL_NONE};
    g->ctx = eglCreateContext(g->dpy, cfg, EGL_NO_CONTEXT, ctx32);
    if (g->ctx == EGL_NO_CONTEXT)
        g->ctx = eglCreateContext(g->dpy, cfg, EGL_NO_CONTEXT, ctx31);
    if (g->ctx == EGL_NO_CONTEXT)
        return base_fail(err, SI_ERR_GPU, "EGL: cannot create an OpenGL ES 3.1 context (0x%x)",
                        (unsigned)eglGetError());
    if (!eglMakeCurrent(g->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, g->ctx))
        return base_fail(err, SI_ERR_GPU, "EGL: cannot make the context current (0x%x)",
                        (unsigned)eglGetError());
    if (epoxy_gl_version() < 31)
        return base_fail(err, SI_ERR_GPU, "OpenGL ES %d.%d found, 3.1 needed for compute shaders",
                        epoxy_gl_version() / 10, epoxy_gl_version() % 10);
    return SI_OK;
}

void glk_egl_close(glk_ctx *g)
{
    if (g->dpy != EGL_NO_DISPLAY) {
        if (g->ctx != EGL_NO_CONTEXT) {
            if (eglGetCurrentContext() == g->ctx)
                eglMakeCurrent(g->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
            eglDestroyContext(g->dpy, g->ctx);
        }
        /* The display is not terminated: an EGLDisplay is one per device and
         * process, shared by every handle and by the application's own GL,
         * and eglTerminate would end every context on it. Initializing it
         * again is a no-op, so nothing accumulates across opens. */
    }
    g->dpy = EGL_NO_DISPLAY;
    g->ctx = EGL_NO_CONTEXT;
}

/* Every call into a handle makes its context current in the calling thread
 * and puts back what was current before (the application's own context, or
 * none): a handle then works from any thread, and never disturbs another
 * handle's or the application's GL state. */
void glk_current_save(glk_binding *saved)
{
    saved->api = eglQueryAPI();
    saved->dpy = eglGetCurrentDisplay();
    saved->ctx = eglGetCurrentContext();
    saved->draw = eglGetCurrentSurface(EGL_DRAW);
    saved->read = eglGetCurrentSurface(EGL_READ);
}

void glk_current_restore(const glk_binding *saved)
{
    if (eglGetCurrentContext() != saved->ctx) {
        if (saved->ctx != EGL_NO_CONTEXT) {
            /* the application's context may be of another client API */
            eglBindAPI(saved->api);
            eglMakeCurrent(saved->dpy, saved->draw, saved->read, saved->ctx);
        } else if (eglGetCurrentDisplay() != EGL_NO_DISPLAY) {
            eglMakeCurrent(eglGetCurrentDisplay(), EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        }
    }
    if (eglQueryAPI() != saved->api)
        eglBindAPI(saved->api);
}

si_result glk_bind(glk_ctx *g, glk_binding *saved, si_error *err)
{
    glk_current_save(saved);
    if (saved->api != EGL_OPENGL_ES_API && !eglBindAPI(EGL_OPENGL_ES_API))
        return base_fail(err, SI_ERR_GPU, "EGL: OpenGL ES API not available");
    if (eglGetCurrentContext() == g->ctx)
        return SI_OK;
    if (!eglMakeCurrent(g->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, g->ctx)) {
        EGLint e = eglGetError();
        glk_current_restore(saved);
        return base_fail(err, SI_ERR_GPU,
                        "EGL: cannot make the model's context current in this thread (0x%x)",
                        (unsigned)e);
    }
    return SI_OK;
}

void glk_unbind(glk_ctx *g, const glk_binding *saved)
{
    (void)g;
    glk_current_restore(saved);
}
