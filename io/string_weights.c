/* The stored size of string weights, walked from their length prefixes in
 * the shards when model.json is loaded (io/model_json.c io_json_group). */
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "model_json_internal.h"

/* The concatenation of a group's shards, read forward. */
typedef struct {
    const io_group *g;
    int file;
    FILE *f;
    uint64_t file_left; /* bytes of the open file not read yet */
} io_cat;

static void io_cat_close(io_cat *s)
{
    if (s->f)
        fclose(s->f);
    s->f = NULL;
}

/* Moves to concatenation offset off. */
static int io_cat_seek(io_cat *s, uint64_t off)
{
    io_cat_close(s);
    for (s->file = 0; s->file < s->g->n_paths && off >= s->g->sizes[s->file]; s->file++)
        off -= s->g->sizes[s->file];
    if (s->file == s->g->n_paths)
        return 0;
    if (!(s->f = fopen(s->g->paths[s->file], "rb")) || fseeko(s->f, (off_t)off, SEEK_SET))
        return -1;
    s->file_left = s->g->sizes[s->file] - off;
    return 0;
}

/* n bytes into buf (NULL: skipped); -1 if the shards end first or a read fails. */
static int io_cat_read(io_cat *s, unsigned char *buf, uint64_t n)
{
    while (n > 0) {
        while (s->file < s->g->n_paths && (!s->f || s->file_left == 0)) {
            io_cat_close(s);
            if (++s->file >= s->g->n_paths || !(s->f = fopen(s->g->paths[s->file], "rb")))
                return -1;
            s->file_left = s->g->sizes[s->file];
        }
        if (s->file >= s->g->n_paths)
            return -1;
        uint64_t k = n < s->file_left ? n : s->file_left;
        if (buf ? fread(buf, 1, (size_t)k, s->f) != k : fseeko(s->f, (off_t)k, SEEK_CUR) != 0)
            return -1;
        if (buf)
            buf += k;
        s->file_left -= k;
        n -= k;
    }
    return 0;
}

/* A string weight at offset off of its group: walks its length prefixes, as
 * TensorFlow.js's decodeWeights does, to its stored size; a prefix that runs
 * past the shards (a hostile or cut shard) is refused here, before any read
 * of its bytes. */
si_result io_string_weight_bytes(const io_ctx *c, const io_group *g, io_weight *w,
                                        uint64_t off)
{
    if (off > g->total || w->count > (g->total - off) / 4)
        return base_fail(c->err, SI_ERR_FORMAT,
                         "%s: weight '%s': %llu strings need at least %llu bytes, the shards hold %llu after offset %llu",
                         c->file, w->name, (unsigned long long)w->count,
                         (unsigned long long)w->count * 4, (unsigned long long)(off > g->total ? 0 : g->total - off),
                         (unsigned long long)off);
    io_cat s = {.g = g};
    uint64_t pos = off;
    si_result st = SI_OK;
    if (io_cat_seek(&s, off))
        st = base_fail(c->err, SI_ERR_IO, "%s: weight '%s': cannot read its shard", c->file, w->name);
    for (uint64_t i = 0; st == SI_OK && i < w->count; i++) {
        unsigned char len4[4];
        if (pos + 4 > g->total || io_cat_read(&s, len4, 4)) {
            st = base_fail(c->err, SI_ERR_FORMAT, "%s: weight '%s': string %llu of %llu runs past the end of its shards",
                           c->file, w->name, (unsigned long long)i, (unsigned long long)w->count);
            break;
        }
        uint64_t len = (uint64_t)len4[0] | (uint64_t)len4[1] << 8 | (uint64_t)len4[2] << 16 |
                       (uint64_t)len4[3] << 24;
        pos += 4;
        if (len > g->total - pos || io_cat_read(&s, NULL, len)) {
            st = base_fail(c->err, SI_ERR_FORMAT,
                           "%s: weight '%s': string %llu of %llu is %llu bytes long, past the end of its shards",
                           c->file, w->name, (unsigned long long)i, (unsigned long long)w->count,
                           (unsigned long long)len);
            break;
        }
        pos += len;
    }
    io_cat_close(&s);
    if (st == SI_OK)
        w->nbytes = pos - off;
    return st;
}
