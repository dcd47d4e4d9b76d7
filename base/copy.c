/* base_copy: a large memcpy shared with a few threads kept for it.
 *
 * Measured on the GPU machine (bench/results/speed-h200.md, session 34): a
 * run's input costs the CPU's one-core memcpy of the caller's bytes into the
 * mapped pool, 10-12 GB/s, more than the GPU's copy of them after; and bytes
 * just written through the CPU's caches are read by the GPU more slowly than
 * bytes stored past them. So the copy is cut into chunks that the caller and
 * the workers take in turn from a counter: the caller starts at once and takes
 * every chunk no worker has, so a worker slow to wake (an idle core's sleep
 * state costs tens of microseconds) never makes the copy slower than one
 * core's. The threads are made at the first large copy and then sleep on a
 * condition variable; a copy that finds them serving another thread's copy,
 * or could not make them, copies alone. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include "base.h"

enum { MAX_WORKERS = 7, CHUNK = 64 << 10, MIN_SHARED = 512 << 10 };

#if defined(__SSE2__)
#include <emmintrin.h>
/* memcpy with stores past the caches: the bytes go to memory, so a GPU
 * reading them over the bus finds no line dirty in a core's cache. */
static void copy_chunk(unsigned char *d, const unsigned char *s, size_t n, int nt)
{
    if (!nt || n < 256) {
        memcpy(d, s, n);
        return;
    }
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; n >= 64; d += 64, s += 64, n -= 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s), b = _mm_loadu_si128((const __m128i *)(s + 16)),
                c = _mm_loadu_si128((const __m128i *)(s + 32)), e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, a);
        _mm_stream_si128((__m128i *)(d + 16), b);
        _mm_stream_si128((__m128i *)(d + 32), c);
        _mm_stream_si128((__m128i *)(d + 48), e);
    }
    memcpy(d, s, n);
    _mm_sfence();
}
#else
static void copy_chunk(unsigned char *d, const unsigned char *s, size_t n, int nt)
{
    (void)nt;
    memcpy(d, s, n);
}
#endif

typedef struct {
    unsigned char *dst;
    const unsigned char *src;
    size_t n;
    int nt;
} job;

static struct {
    pthread_mutex_t use; /* held by the one copy the workers serve */
    pthread_mutex_t mu;  /* guards what follows but next */
    pthread_cond_t go, idle;
    job j;
    atomic_size_t next; /* the job's next chunk to take */
    unsigned gen;       /* bumped for each job handed out */
    int busy;           /* workers holding a copy of the job */
    int workers;        /* threads running: 0 until the first copy (and in a fork's
                           child, by fork_child), -1 if none could be made */
} pool = {.use = PTHREAD_MUTEX_INITIALIZER,
          .mu = PTHREAD_MUTEX_INITIALIZER,
          .go = PTHREAD_COND_INITIALIZER,
          .idle = PTHREAD_COND_INITIALIZER};

/* Takes chunks of j until none is left. */
static void take_chunks(const job *j)
{
    size_t chunks = (j->n + CHUNK - 1) / CHUNK, c;
    while ((c = atomic_fetch_add(&pool.next, 1)) < chunks) {
        size_t at = c * (size_t)CHUNK;
        copy_chunk(j->dst + at, j->src + at, j->n - at < CHUNK ? j->n - at : CHUNK, j->nt);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    unsigned seen = 0;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (pool.gen == seen)
            pthread_cond_wait(&pool.go, &pool.mu);
        seen = pool.gen;
        /* busy keeps the job, and its counter, from being replaced while
         * this thread may still take a chunk of it */
        job j = pool.j;
        pool.busy++;
        pthread_mutex_unlock(&pool.mu);
        take_chunks(&j);
        pthread_mutex_lock(&pool.mu);
        if (--pool.busy == 0)
            pthread_cond_signal(&pool.idle);
    }
    return NULL;
}

/* A fork in the parent waits until no worker holds pool.mu (one woken late by
 * the last copy's broadcast may take it after that copy has returned), so the
 * child's copy of it is never locked by a thread the child does not have. The
 * child's condition variables are made anew: the copies it inherits still
 * count the parent's sleeping workers as waiters, and a signal handed to one
 * of those would never wake the child's own (test_io's fork case hung so). */
static void fork_prepare(void) { pthread_mutex_lock(&pool.mu); }
static void fork_parent(void) { pthread_mutex_unlock(&pool.mu); }
static void fork_child(void)
{
    pthread_mutex_unlock(&pool.mu);
    pool.go = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    pool.idle = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
    pool.workers = 0; /* none of the parent's threads came along */
    pool.busy = 0;
}

/* With pool.use held: the workers, made once per process. fork_child is what
 * tells a fork's child it has none; where it cannot be registered, no workers
 * are made at all (a child would wait on the parent's condition variables), and
 * every copy is the caller's alone. */
static int ensure_workers(void)
{
    static int at_fork; /* registered (1) or refused (-1); a child inherits both */
    if (pool.workers != 0)
        return pool.workers;
    if (!at_fork)
        at_fork = pthread_atfork(fork_prepare, fork_parent, fork_child) ? -1 : 1;
    if (at_fork < 0)
        return pool.workers = -1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int want = cpus < 2 ? 0 : cpus - 1 > MAX_WORKERS ? MAX_WORKERS : (int)cpus - 1;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&at, 64 << 10);
    int made = 0;
    pool.gen = 0;
    pool.busy = 0;
    for (int i = 0; i < want; i++) {
        pthread_t t;
        if (pthread_create(&t, &at, worker, NULL))
            break;
        made++;
    }
    pthread_attr_destroy(&at);
    pool.workers = made ? made : -1;
    return pool.workers;
}

void base_copy(void *dst, const void *src, size_t n, int bypass_cache)
{
    job j = {dst, src, n, bypass_cache};
    if (n < MIN_SHARED || pthread_mutex_trylock(&pool.use)) {
        copy_chunk(j.dst, j.src, n, bypass_cache);
        return;
    }
    if (ensure_workers() < 1) {
        pthread_mutex_unlock(&pool.use);
        copy_chunk(j.dst, j.src, n, bypass_cache);
        return;
    }
    pthread_mutex_lock(&pool.mu);
    /* a worker that woke after the last copy's end may hold that job still:
     * its counter is past the end, and stays so until it lets go */
    while (pool.busy)
        pthread_cond_wait(&pool.idle, &pool.mu);
    pool.j = j;
    atomic_store(&pool.next, 0);
    pool.gen++;
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.mu);
    take_chunks(&j);
    /* every chunk is taken; wait for those still being copied (and for late
     * workers, who find none left, to let go of the job) */
    pthread_mutex_lock(&pool.mu);
    while (pool.busy)
        pthread_cond_wait(&pool.idle, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    pthread_mutex_unlock(&pool.use);
}
