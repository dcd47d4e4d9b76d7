/* io_uring reader: reads are queued on submit and started at once, so a caller
 * can prefetch the next weights while it computes; wait drains the queue. */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Valgrind does not see the kernel write through io_uring; tell it, or every
 * byte read this way looks uninitialised in the memcheck runs. */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define IO_MARK_DEFINED(p, n) VALGRIND_MAKE_MEM_DEFINED(p, n)
#endif
#endif
#ifndef IO_MARK_DEFINED
#define IO_MARK_DEFINED(p, n) ((void)(p), (void)(n))
#endif

#include "reader_internal.h"

#define IO_URING_DEPTH 64
/* Linux reads at most 0x7ffff000 bytes per call; stay well below. */
#define IO_URING_CHUNK (UINT64_C(1) << 30)

typedef struct {
    int fd;
    const char *path;
    uint64_t off;
    uint8_t *dst;
    uint64_t len;
} io_req;

typedef struct {
    io_reader base;
    struct io_uring ring;
    int ring_ok;
    int n_fds;
    int *fds;                  /* one per shard, groups back to back */
    int *first;                /* index in fds of each group's first shard */
    io_req *queue;             /* not yet handed to the kernel */
    size_t q_head, q_len, q_cap;
    io_req slots[IO_URING_DEPTH];
    int free_slots[IO_URING_DEPTH];
    int n_free;
    si_error fail;             /* first failure since the last wait */
    int failed;
    int broken;                /* the ring itself failed: nothing more can be read */
} io_uring_reader;

static void io_uring_record(io_uring_reader *ur, si_result st, const char *path, const char *what, int e)
{
    if (!ur->failed)
        base_fail(&ur->fail, st, "%s: io_uring %s: %s", path, what, strerror(e));
    ur->failed = 1;
}

static int io_uring_push(io_uring_reader *ur, const io_req *q)
{
    if (ur->q_head == ur->q_len)
        ur->q_head = ur->q_len = 0;
    if (ur->q_len == ur->q_cap) {
        if (ur->q_head > 0) {
            memmove(ur->queue, ur->queue + ur->q_head, (ur->q_len - ur->q_head) * sizeof *ur->queue);
            ur->q_len -= ur->q_head;
            ur->q_head = 0;
        } else {
            size_t cap = ur->q_cap ? 2 * ur->q_cap : 256;
            io_req *nq = realloc(ur->queue, cap * sizeof *nq);
            if (!nq)
                return -1;
            ur->queue = nq;
            ur->q_cap = cap;
        }
    }
    ur->queue[ur->q_len++] = *q;
    return 0;
}

static void io_uring_complete(io_uring_reader *ur, struct io_uring_cqe *cqe)
{
    int slot = (int)(uintptr_t)io_uring_cqe_get_data(cqe);
    io_req q = ur->slots[slot];
    int res = cqe->res;
    io_uring_cqe_seen(&ur->ring, cqe);
    ur->free_slots[ur->n_free++] = slot;
    if (res == -EINTR || res == -EAGAIN) {
        res = 0;
    } else if (res < 0) {
        io_uring_record(ur, SI_ERR_IO, q.path, "read", -res);
        return;
    } else if (res == 0) {
        if (!ur->failed)
            base_fail(&ur->fail, SI_ERR_FORMAT, "%s: unexpected end of file at byte %llu", q.path,
                    (unsigned long long)q.off);
        ur->failed = 1;
        return;
    }
    IO_MARK_DEFINED(q.dst, (size_t)res);
    if ((uint64_t)res >= q.len || ur->failed)
        return;
    /* A short read: queue what is left. */
    q.off += (uint64_t)res;
    q.dst += res;
    q.len -= (uint64_t)res;
    if (io_uring_push(ur, &q)) {
        if (!ur->failed)
            base_fail(&ur->fail, SI_ERR_NOMEM, "%s: out of memory", q.path);
        ur->failed = 1;
    }
}

static void io_uring_start(io_uring_reader *ur)
{
    if (ur->failed)
        ur->q_head = ur->q_len = 0;
    unsigned added = 0;
    while (ur->n_free > 0 && ur->q_head < ur->q_len) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ur->ring);
        if (!sqe)
            break;
        int slot = ur->free_slots[--ur->n_free];
        io_req *q = &ur->queue[ur->q_head];
        uint64_t len = q->len > IO_URING_CHUNK ? IO_URING_CHUNK : q->len;
        ur->slots[slot] = *q;
        ur->slots[slot].len = len;
        io_uring_prep_read(sqe, q->fd, q->dst, (unsigned)len, q->off);
        io_uring_sqe_set_data(sqe, (void *)(uintptr_t)slot);
        if (len < q->len) {
            q->off += len; /* the rest stays at the head of the queue */
            q->dst += len;
            q->len -= len;
        } else {
            ur->q_head++;
        }
        added++;
    }
    if (added == 0)
        return;
    int ret;
    do
        ret = io_uring_submit(&ur->ring);
    while (ret == -EINTR);
    if (ret < 0) {
        /* Prepared entries would never complete; the ring cannot be trusted now. */
        io_uring_record(ur, SI_ERR_IO, ur->base.m->json_path, "submit", -ret);
        ur->broken = 1;
    }
}

static int io_uring_in_flight(const io_uring_reader *ur)
{
    return IO_URING_DEPTH - ur->n_free;
}

static si_result io_uring_enqueue(io_reader *r, int group, int shard, uint64_t off, uint8_t *dst,
                                  uint64_t len, si_error *err)
{
    io_uring_reader *ur = (io_uring_reader *)r;
    int k = ur->first[group] + shard;
    io_req q = {ur->fds[k], r->m->groups[group].paths[shard], off, dst, len};
    if (io_uring_push(ur, &q))
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", q.path);
    return SI_OK;
}

static si_result io_uring_submit_w(io_reader *r, const io_weight *w, void *dst, si_error *err)
{
    io_uring_reader *ur = (io_uring_reader *)r;
    if (ur->broken)
        return base_fail(err, ur->fail.status, "%s", ur->fail.message);
    si_result st = io_reader_spans(r, w, dst, io_uring_enqueue, err);
    /* Reap what is done without blocking, then start as much as fits. */
    struct io_uring_cqe *cqe;
    while (io_uring_in_flight(ur) > 0 && io_uring_peek_cqe(&ur->ring, &cqe) == 0)
        io_uring_complete(ur, cqe);
    io_uring_start(ur);
    return st;
}

static si_result io_uring_wait_all(io_reader *r, si_error *err)
{
    io_uring_reader *ur = (io_uring_reader *)r;
    for (;;) {
        if (ur->broken)
            break;
        io_uring_start(ur);
        if (io_uring_in_flight(ur) == 0)
            break;
        struct io_uring_cqe *cqe;
        int ret = io_uring_wait_cqe(&ur->ring, &cqe);
        if (ret == -EINTR || ret == -EAGAIN)
            continue;
        if (ret < 0) {
            /* The kernel may still own some buffers; all we can do is stop. */
            io_uring_record(ur, SI_ERR_IO, r->m->json_path, "wait", -ret);
            ur->broken = 1;
            break;
        }
        io_uring_complete(ur, cqe);
    }
    ur->q_head = ur->q_len = 0;
    if (ur->failed) {
        si_result st = base_fail(err, ur->fail.status, "%s", ur->fail.message);
        if (!ur->broken)
            ur->failed = 0;
        return st;
    }
    return SI_OK;
}

static void io_uring_close(io_reader *r)
{
    io_uring_reader *ur = (io_uring_reader *)r;
    if (ur->ring_ok) {
        si_error ignored;
        if (!ur->broken)
            io_uring_wait_all(r, &ignored);
        io_uring_queue_exit(&ur->ring);
    }
    for (int i = 0; ur->fds && i < ur->n_fds; i++)
        if (ur->fds[i] >= 0)
            close(ur->fds[i]);
    free(ur->fds);
    free(ur->first);
    free(ur->queue);
    free(ur);
}

static const io_reader_ops io_uring_ops = {io_uring_submit_w, io_uring_wait_all, io_uring_close};

si_result io_reader_uring_open(const io_model *m, io_reader **out, si_error *err)
{
    io_uring_reader *ur = calloc(1, sizeof *ur);
    if (!ur)
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", m->json_path);
    ur->base.ops = &io_uring_ops;
    ur->base.m = m;
    for (int i = 0; i < IO_URING_DEPTH; i++)
        ur->free_slots[i] = i;
    ur->n_free = IO_URING_DEPTH;
    int n = 0;
    for (int g = 0; g < m->n_groups; g++)
        n += m->groups[g].n_paths;
    ur->fds = malloc(((size_t)n + 1) * sizeof *ur->fds);
    ur->first = calloc((size_t)m->n_groups + 1, sizeof *ur->first);
    if (!ur->fds || !ur->first) {
        io_uring_close(&ur->base);
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", m->json_path);
    }
    for (int i = 0; i < n; i++)
        ur->fds[i] = -1;
    ur->n_fds = n;
    int ret = io_uring_queue_init(IO_URING_DEPTH, &ur->ring, 0);
    if (ret < 0) {
        io_uring_close(&ur->base);
        return base_fail(err, SI_ERR_IO,
                       "%s: io_uring is not available here (io_uring_queue_init: %s); use the mmap reader",
                       m->json_path, strerror(-ret));
    }
    ur->ring_ok = 1;
    int k = 0;
    for (int g = 0; g < m->n_groups; g++) {
        ur->first[g] = k;
        for (int s = 0; s < m->groups[g].n_paths; s++, k++) {
            si_result st = io_shard_open(m, g, s, &ur->fds[k], err);
            if (st) {
                io_uring_close(&ur->base);
                return st;
            }
        }
    }
    *out = &ur->base;
    return SI_OK;
}
