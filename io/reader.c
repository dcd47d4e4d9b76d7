#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader_internal.h"

si_result io_reader_open(const io_model *m, si_io_mode mode, io_reader **out, si_error *err)
{
    if (!out)
        return base_fail(err, SI_ERR_ARG, "io_reader_open: out is NULL");
    *out = NULL;
    if (!m)
        return base_fail(err, SI_ERR_ARG, "io_reader_open: model is NULL");
    switch (mode) {
    /* SI_IO_MMAP keeps its name (the API, --io mmap); it reads with pread: reader_pread.c says why */
    case SI_IO_MMAP: return io_reader_pread_open(m, out, err);
    case SI_IO_URING: return io_reader_uring_open(m, out, err);
    }
    return base_fail(err, SI_ERR_ARG, "%s: unknown io mode %d", m->json_path, (int)mode);
}

si_result io_reader_submit(io_reader *r, int w, void *dst, si_error *err)
{
    if (!r)
        return base_fail(err, SI_ERR_ARG, "io_reader_submit: reader is NULL");
    if (w < 0 || w >= r->m->n_weights)
        return base_fail(err, SI_ERR_ARG, "%s: no weight #%d (the model has %d)", r->m->json_path, w,
                       r->m->n_weights);
    const io_weight *wt = &r->m->weights[w];
    if (wt->nbytes == 0)
        return SI_OK;
    if (!dst)
        return base_fail(err, SI_ERR_ARG, "%s: weight '%s': destination is NULL", r->m->json_path, wt->name);
    return r->ops->submit(r, wt, dst, err);
}

si_result io_reader_wait(io_reader *r, si_error *err)
{
    if (!r)
        return base_fail(err, SI_ERR_ARG, "io_reader_wait: reader is NULL");
    return r->ops->wait(r, err);
}

si_result io_reader_read(io_reader *r, int w, void *dst, si_error *err)
{
    si_result st = io_reader_submit(r, w, dst, err);
    if (st) {
        /* Reads already queued may still write into caller memory: finish them. */
        si_error ignored;
        if (r)
            io_reader_wait(r, &ignored);
        return st;
    }
    return io_reader_wait(r, err);
}

void io_reader_close(io_reader *r)
{
    if (r)
        r->ops->close(r);
}

si_result io_reader_spans(io_reader *r, const io_weight *w, void *dst, io_span_fn fn, si_error *err)
{
    const io_model *m = r->m;
    if (w->group < 0 || w->group >= m->n_groups)
        return base_fail(err, SI_ERR_FORMAT, "%s: weight '%s': bad group %d", m->json_path, w->name, w->group);
    const io_group *g = &m->groups[w->group];
    uint64_t off = w->offset, left = w->nbytes;
    uint8_t *d = dst;
    int s = 0;
    while (s < g->n_paths && off >= g->sizes[s])
        off -= g->sizes[s++];
    for (; left > 0; s++, off = 0) {
        if (s >= g->n_paths)
            return base_fail(err, SI_ERR_FORMAT, "%s: weight '%s' runs past the end of group %d's shards",
                           m->json_path, w->name, w->group + 1);
        uint64_t n = g->sizes[s] - off;
        if (n > left)
            n = left;
        if (n == 0)
            continue;
        si_result st = fn(r, w->group, s, off, d, n, err);
        if (st)
            return st;
        d += n;
        left -= n;
    }
    return SI_OK;
}

si_result io_shard_open(const io_model *m, int g, int shard, int *fd, si_error *err)
{
    const char *path = m->groups[g].paths[shard];
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return base_fail(err, SI_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(f, &st)) {
        int e = errno;
        close(f);
        return base_fail(err, SI_ERR_IO, "%s: %s", path, strerror(e));
    }
    if ((uint64_t)st.st_size < m->groups[g].sizes[shard]) {
        close(f);
        return base_fail(err, SI_ERR_FORMAT, "%s: shard shrank to %llu bytes since the model was loaded (%llu)",
                       path, (unsigned long long)st.st_size, (unsigned long long)m->groups[g].sizes[shard]);
    }
    *fd = f;
    return SI_OK;
}
