/* Maps every shard once; a read is a memcpy, so the page cache does the work. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reader_internal.h"

typedef struct {
    io_reader base;
    int n_maps;
    uint8_t **maps;   /* one per shard, groups back to back */
    uint64_t *lens;
    int *first;       /* index in maps of each group's first shard */
} io_mmap_reader;

static si_result io_mmap_copy(io_reader *r, int group, int shard, uint64_t off, uint8_t *dst,
                              uint64_t len, si_error *err)
{
    io_mmap_reader *mr = (io_mmap_reader *)r;
    (void)err;
    memcpy(dst, mr->maps[mr->first[group] + shard] + off, (size_t)len);
    return SI_OK;
}

static si_result io_mmap_submit(io_reader *r, const io_weight *w, void *dst, si_error *err)
{
    return io_reader_spans(r, w, dst, io_mmap_copy, err);
}

static si_result io_mmap_wait(io_reader *r, si_error *err)
{
    (void)r;
    (void)err;
    return SI_OK;
}

static void io_mmap_close(io_reader *r)
{
    io_mmap_reader *mr = (io_mmap_reader *)r;
    for (int i = 0; mr->maps && i < mr->n_maps; i++)
        if (mr->maps[i])
            munmap(mr->maps[i], (size_t)mr->lens[i]);
    free(mr->maps);
    free(mr->lens);
    free(mr->first);
    free(mr);
}

static const io_reader_ops io_mmap_ops = {io_mmap_submit, io_mmap_wait, io_mmap_close};

si_result io_reader_mmap_open(const io_model *m, io_reader **out, si_error *err)
{
    io_mmap_reader *mr = calloc(1, sizeof *mr);
    if (!mr)
        return io_fail(err, SI_ERR_NOMEM, "%s: out of memory", m->json_path);
    mr->base.ops = &io_mmap_ops;
    mr->base.m = m;
    int n = 0;
    for (int g = 0; g < m->n_groups; g++)
        n += m->groups[g].n_paths;
    mr->maps = calloc((size_t)n + 1, sizeof *mr->maps);
    mr->lens = calloc((size_t)n + 1, sizeof *mr->lens);
    mr->first = calloc((size_t)m->n_groups + 1, sizeof *mr->first);
    if (!mr->maps || !mr->lens || !mr->first) {
        io_mmap_close(&mr->base);
        return io_fail(err, SI_ERR_NOMEM, "%s: out of memory", m->json_path);
    }
    mr->n_maps = n;
    int k = 0;
    for (int g = 0; g < m->n_groups; g++) {
        mr->first[g] = k;
        for (int s = 0; s < m->groups[g].n_paths; s++, k++) {
            uint64_t len = m->groups[g].sizes[s];
            if (len == 0)
                continue; /* mmap refuses empty mappings, and nothing is read from it */
            int fd;
            si_result st = io_shard_open(m, g, s, &fd, err);
            if (st) {
                io_mmap_close(&mr->base);
                return st;
            }
            void *p = mmap(NULL, (size_t)len, PROT_READ, MAP_PRIVATE, fd, 0);
            int e = errno;
            close(fd);
            if (p == MAP_FAILED) {
                io_mmap_close(&mr->base);
                return io_fail(err, SI_ERR_IO, "%s: mmap: %s", m->groups[g].paths[s], strerror(e));
            }
            mr->maps[k] = p;
            mr->lens[k] = len;
        }
    }
    *out = &mr->base;
    return SI_OK;
}
