/* Copies by a second context (glk_side_copy, glk.h): a GL context sharing
 * g's objects, current in a thread of its own. One context's commands run in
 * order on this driver, so its glCopyBufferSubData waits for its kernels and
 * they for it; another context's copies go to the copy engine beside them
 * (../shared/gpu/probes/overlap.c on the H200: a copy and a kernel of about
 * 5 ms each took 9.6 ms in one context, 5.7 ms with the copy in a second).
 *
 * The two contexts meet only through sync objects, which they share:
 * - a batch is sent with a fence of g made after every command g had then
 *   (fm; none where g was given nothing since the last one: the thread's
 *   context runs its batches in order, so the last wait still holds), and the
 *   thread's context waits for it (glWaitSync) before the batch's copies;
 * - after the copies the thread makes a fence of its own (fc) and flushes, and
 *   glk_side_wait has g wait for it (glWaitSync). fc passing means every
 *   batch before it is done too, so waiting for a batch takes (deletes) the
 *   fences of those before it.
 * The CPU waits only for the thread to have issued a batch (a few GL calls),
 * spinning a little first: a run sends batches every few steps. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "glk_internal.h"

#define SIDE_RING 64      /* batches sent and not yet taken by g */
#define SIDE_SPIN_NS 200000 /* how long either side spins before it sleeps */

struct side_copy {
    uint32_t src, dst;
    uint64_t src_off, dst_off, bytes;
    int tag, timed; /* glk_set_tag's when it was queued, and whether g was timing then */
};

struct side_job {
    GLsync fm; /* g's fence the copies wait for (0: none) */
    GLsync fc; /* the thread's, after the copies (set once done reaches it) */
    int n, cap;
    struct side_copy *v;
};

/* A copy timed in the thread's context (queries are not shared): its two
 * queries are q[2k] and q[2k + 1]. */
struct side_stamp {
    int tag;
    uint64_t bytes;
};

struct glk_side {
    EGLDisplay dpy;
    EGLContext ctx;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv_job, cv_done;
    /* batch k (from 1) in ring[k % SIDE_RING]; the open one is sent + 1 */
    struct side_job ring[SIDE_RING];
    _Atomic uint64_t sent, done; /* batches sent to the thread; issued by it */
    uint64_t taken;              /* batches whose fc g has taken: waited for, or one after them */
    _Atomic int failed;          /* a GL error in the thread's context */
    _Atomic int flags;           /* SIDE_QUIT, SIDE_COLLECT: asked of the thread */
    int started;                 /* the thread: 1 its context current, -1 it could not */
    char msg[160];
    uint64_t n_copies, n_batches, n_fences;
    /* the thread's: copies timed since the last collection, and its queries */
    struct side_stamp *st;
    GLuint *q;
    int n_st, cap_st;
    /* a collection's result (SIDE_COLLECT), for glk_side_stamps */
    glk_stamp *out;
    int n_out;
};

enum { SIDE_QUIT = 1, SIDE_COLLECT = 2 };

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Spins while *v < want (and *stop is 0) for at most SIDE_SPIN_NS; whether
 * it got there. */
static int spin_until(_Atomic uint64_t *v, uint64_t want, _Atomic int *stop)
{
    uint64_t t0 = 0;
    for (int i = 0;; i++) {
        if (atomic_load(v) >= want || (stop && atomic_load(stop)))
            return 1;
        if (i % 64 == 63) {
            uint64_t t = now_ns();
            if (!t0)
                t0 = t;
            else if (t - t0 > SIDE_SPIN_NS)
                return 0;
            sched_yield();
        }
    }
}

static void side_fail(struct glk_side *s, const char *what, GLenum e)
{
    pthread_mutex_lock(&s->mu);
    if (!s->failed)
        snprintf(s->msg, sizeof s->msg, "%s (GL error 0x%x)", what, (unsigned)e);
    atomic_store(&s->failed, 1);
    pthread_mutex_unlock(&s->mu);
}

/* The thread's: the next copy's two timestamps (-1: none, out of memory). */
static int stamp_slot(struct glk_side *s, const struct side_copy *c)
{
    if (s->n_st == s->cap_st) {
        int cap = s->cap_st ? 2 * s->cap_st : 256;
        struct side_stamp *st = realloc(s->st, (size_t)cap * sizeof *st);
        if (st)
            s->st = st;
        GLuint *q = st ? realloc(s->q, 2 * (size_t)cap * sizeof *q) : NULL;
        if (!q)
            return -1;
        s->q = q;
        glGenQueriesEXT(2 * (cap - s->cap_st), q + 2 * s->cap_st);
        s->cap_st = cap;
    }
    s->st[s->n_st] = (struct side_stamp){c->tag, c->bytes};
    return s->n_st++;
}

/* The thread's: the timed copies' times into s->out (g has finished: every
 * query has its result), then forgotten. */
static void collect(struct glk_side *s)
{
    free(s->out);
    s->out = s->n_st ? malloc((size_t)s->n_st * sizeof *s->out) : NULL;
    s->n_out = s->out ? s->n_st : 0;
    for (int k = 0; k < s->n_out; k++) {
        GLuint64 a = 0, b = 0;
        glGetQueryObjectui64vEXT(s->q[2 * k], GL_QUERY_RESULT_EXT, &a);
        glGetQueryObjectui64vEXT(s->q[2 * k + 1], GL_QUERY_RESULT_EXT, &b);
        s->out[k] = (glk_stamp){2, s->st[k].tag, 1, s->st[k].bytes, a, b};
    }
    s->n_st = 0;
}

static void *side_main(void *arg)
{
    struct glk_side *s = arg;
    int ok = eglBindAPI(EGL_OPENGL_ES_API) && eglMakeCurrent(s->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, s->ctx);
    pthread_mutex_lock(&s->mu);
    s->started = ok ? 1 : -1;
    pthread_cond_broadcast(&s->cv_done);
    pthread_mutex_unlock(&s->mu);
    if (!ok)
        return NULL;
    for (uint64_t k = 1;;) {
        if (!spin_until(&s->sent, k, &s->flags)) {
            pthread_mutex_lock(&s->mu);
            while (atomic_load(&s->sent) < k && !atomic_load(&s->flags))
                pthread_cond_wait(&s->cv_job, &s->mu);
            pthread_mutex_unlock(&s->mu);
        }
        if (atomic_load(&s->flags) & SIDE_COLLECT) {
            collect(s);
            pthread_mutex_lock(&s->mu);
            atomic_fetch_and(&s->flags, ~SIDE_COLLECT);
            pthread_cond_broadcast(&s->cv_done);
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        if (atomic_load(&s->sent) < k) /* quit, every batch sent issued */
            break;
        struct side_job *j = &s->ring[k % SIDE_RING];
        if (j->fm) {
            glWaitSync(j->fm, 0, GL_TIMEOUT_IGNORED);
            glDeleteSync(j->fm);
            j->fm = 0;
        }
        for (int i = 0; i < j->n; i++) {
            const struct side_copy *c = &j->v[i];
            int t = c->timed ? stamp_slot(s, c) : -1; /* between two timestamps */
            glBindBuffer(GL_COPY_READ_BUFFER, c->src);
            glBindBuffer(GL_COPY_WRITE_BUFFER, c->dst);
            if (t >= 0)
                glQueryCounterEXT(s->q[2 * t], GL_TIMESTAMP_EXT);
            glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)c->src_off,
                                (GLintptr)c->dst_off, (GLsizeiptr)c->bytes);
            if (t >= 0)
                glQueryCounterEXT(s->q[2 * t + 1], GL_TIMESTAMP_EXT);
        }
        /* bound, a buffer g deletes would keep its memory in this context */
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        j->fc = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        glFlush(); /* so that g's wait for fc can pass */
        GLenum e = glGetError();
        if (e != GL_NO_ERROR || !j->fc)
            side_fail(s, "a copy on the second context failed", e);
        pthread_mutex_lock(&s->mu);
        s->n_copies += (uint64_t)j->n;
        s->n_batches++;
        j->n = 0;
        atomic_store(&s->done, k);
        pthread_cond_broadcast(&s->cv_done);
        pthread_mutex_unlock(&s->mu);
        k++;
    }
    if (s->cap_st)
        glDeleteQueriesEXT(2 * s->cap_st, s->q);
    glFinish();
    eglMakeCurrent(s->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    return NULL;
}

static si_result side_start(glk_ctx *g, si_error *err)
{
    struct glk_side *s = calloc(1, sizeof *s);
    if (!s)
        return base_fail(err, SI_ERR_NOMEM, "out of host memory");
    s->dpy = g->dpy;
    s->ctx = glk_egl_share(g);
    if (!s->ctx) {
        EGLint e = eglGetError();
        free(s);
        return base_fail(err, SI_ERR_GPU, "EGL: cannot make a second context for copies (0x%x)", (unsigned)e);
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv_job, NULL);
    pthread_cond_init(&s->cv_done, NULL);
    int rc = pthread_create(&s->th, NULL, side_main, s);
    if (!rc) {
        pthread_mutex_lock(&s->mu);
        while (!s->started)
            pthread_cond_wait(&s->cv_done, &s->mu);
        pthread_mutex_unlock(&s->mu);
        if (s->started < 0)
            pthread_join(s->th, NULL);
    }
    if (rc || s->started < 0) {
        eglDestroyContext(s->dpy, s->ctx);
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv_job);
        pthread_cond_destroy(&s->cv_done);
        free(s);
        return base_fail(err, SI_ERR_GPU, rc ? "cannot start the copy thread"
                                             : "EGL: cannot make the second context current in its thread");
    }
    g->side = s;
    return SI_OK;
}

static si_result side_check(const glk_ctx *g, si_error *err)
{
    if (g->lost)
        return base_fail(err, SI_ERR_GPU, "the GPU context was lost");
    if (g->side && atomic_load(&g->side->failed))
        return base_fail(err, SI_ERR_GPU, "%s", g->side->msg);
    return SI_OK;
}

/* Waits until the thread has issued batch k (its fc made). */
static si_result wait_done(glk_ctx *g, uint64_t k, si_error *err)
{
    struct glk_side *s = g->side;
    if (!spin_until(&s->done, k, NULL)) {
        pthread_mutex_lock(&s->mu);
        while (atomic_load(&s->done) < k)
            pthread_cond_wait(&s->cv_done, &s->mu);
        pthread_mutex_unlock(&s->mu);
    }
    return side_check(g, err);
}

/* g waits for batch k (k <= done), and takes the fences up to it. */
static void take(glk_ctx *g, uint64_t k)
{
    struct glk_side *s = g->side;
    for (uint64_t i = s->taken + 1; i <= k; i++) {
        struct side_job *j = &s->ring[i % SIDE_RING];
        if (!j->fc)
            continue;
        if (i == k)
            glWaitSync(j->fc, 0, GL_TIMEOUT_IGNORED);
        glDeleteSync(j->fc);
        j->fc = 0;
    }
    if (k > s->taken)
        s->taken = k;
}

si_result glk_side_copy(glk_ctx *g, uint32_t src, uint64_t src_off, uint32_t dst, uint64_t dst_off,
                        uint64_t bytes, uint64_t *ticket, si_error *err)
{
    si_result st = side_check(g, err);
    if (st == SI_OK && !g->side)
        st = side_start(g, err);
    if (st != SI_OK)
        return st;
    struct glk_side *s = g->side;
    uint64_t k = atomic_load(&s->sent) + 1;
    struct side_job *j = &s->ring[k % SIDE_RING];
    if (!j->n && k - s->taken > SIDE_RING - 1) { /* its slot's fence not taken yet */
        if ((st = wait_done(g, s->taken + 1, err)) != SI_OK)
            return st;
        take(g, s->taken + 1); /* g waits for the oldest: a wait a later one would make anyway */
    }
    if (j->n == j->cap) {
        int cap = j->cap ? 2 * j->cap : 16;
        struct side_copy *v = realloc(j->v, (size_t)cap * sizeof *v);
        if (!v)
            return base_fail(err, SI_ERR_NOMEM, "out of host memory");
        j->v = v;
        j->cap = cap;
    }
    j->v[j->n++] = (struct side_copy){src, dst, src_off, dst_off, bytes, g->tag, g->timing};
    *ticket = k;
    return SI_OK;
}

si_result glk_side_send(glk_ctx *g, si_error *err)
{
    struct glk_side *s = g->side;
    if (!s)
        return SI_OK;
    uint64_t k = atomic_load(&s->sent) + 1;
    struct side_job *j = &s->ring[k % SIDE_RING];
    if (!j->n)
        return side_check(g, err);
    GLsync fm = 0;
    if (g->side_dirty) {
        glk_flush_queued(g); /* transfer kernels queued: commands given before this */
        fm = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        glFlush(); /* the other context's wait for it can pass only once it is sent */
        if (!fm)
            return base_fail(err, SI_ERR_GPU, "cannot make a fence for the copy thread");
        g->side_dirty = 0;
        s->n_fences++;
    }
    pthread_mutex_lock(&s->mu);
    j->fm = fm;
    atomic_store(&s->sent, k);
    pthread_cond_signal(&s->cv_job);
    pthread_mutex_unlock(&s->mu);
    return side_check(g, err);
}

si_result glk_side_wait(glk_ctx *g, uint64_t ticket, si_error *err)
{
    struct glk_side *s = g->side;
    if (!s || ticket <= s->taken)
        return side_check(g, err);
    si_result st = SI_OK;
    if (ticket > atomic_load(&s->sent) && (st = glk_side_send(g, err)) != SI_OK)
        return st;
    if (ticket > atomic_load(&s->sent))
        return base_fail(err, SI_ERR_ARG, "internal: side copy batch %llu was never queued",
                         (unsigned long long)ticket);
    if ((st = wait_done(g, ticket, err)) != SI_OK)
        return st;
    take(g, ticket);
    return SI_OK;
}

si_result glk_side_quiesce(glk_ctx *g, si_error *err)
{
    struct glk_side *s = g->side;
    if (!s)
        return SI_OK;
    si_result st = glk_side_send(g, err);
    uint64_t k = atomic_load(&s->sent);
    if (st == SI_OK && k > s->taken)
        st = glk_side_wait(g, k, err);
    return st;
}

void glk_side_counts(const glk_ctx *g, uint64_t *copies, uint64_t *batches, uint64_t *fences)
{
    struct glk_side *s = g->side;
    if (s) /* (read while the thread may be adding: tests call it after a wait) */
        pthread_mutex_lock((pthread_mutex_t *)&s->mu);
    *copies = s ? s->n_copies : 0;
    *batches = s ? s->n_batches : 0;
    *fences = s ? s->n_fences : 0;
    if (s)
        pthread_mutex_unlock((pthread_mutex_t *)&s->mu);
}

int glk_side_stamps(glk_ctx *g, glk_stamp **out, int *n)
{
    struct glk_side *s = g->side;
    *out = NULL;
    *n = 0;
    if (!s)
        return 0;
    si_error ignored;
    glk_side_quiesce(g, &ignored);
    glFinish(); /* every timestamp of the thread's has its result */
    pthread_mutex_lock(&s->mu);
    atomic_fetch_or(&s->flags, SIDE_COLLECT);
    pthread_cond_signal(&s->cv_job);
    while (atomic_load(&s->flags) & SIDE_COLLECT)
        pthread_cond_wait(&s->cv_done, &s->mu);
    *out = s->out;
    *n = s->n_out;
    s->out = NULL;
    s->n_out = 0;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

void glk_side_close(glk_ctx *g)
{
    struct glk_side *s = g->side;
    if (!s)
        return;
    si_error ignored;
    glk_side_quiesce(g, &ignored);
    pthread_mutex_lock(&s->mu);
    atomic_fetch_or(&s->flags, SIDE_QUIT);
    pthread_cond_signal(&s->cv_job);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
    for (int i = 0; i < SIDE_RING; i++) {
        if (s->ring[i].fm)
            glDeleteSync(s->ring[i].fm);
        if (s->ring[i].fc)
            glDeleteSync(s->ring[i].fc);
        free(s->ring[i].v);
    }
    free(s->st);
    free(s->q);
    free(s->out);
    eglDestroyContext(s->dpy, s->ctx);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv_job);
    pthread_cond_destroy(&s->cv_done);
    free(s);
    g->side = NULL;
}
