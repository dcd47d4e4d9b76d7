/* The reader vtable: reader.c checks arguments and dispatches; each backend
 * embeds struct io_reader as its first member. */
#ifndef SI_IO_READER_INTERNAL_H
#define SI_IO_READER_INTERNAL_H

#include "io.h"

typedef struct io_reader_ops {
    si_result (*submit)(io_reader *r, const io_weight *w, void *dst, si_error *err);
    si_result (*wait)(io_reader *r, si_error *err);
    void (*close)(io_reader *r);
} io_reader_ops;

struct io_reader {
    const io_reader_ops *ops;
    const io_model *m; /* borrowed: the model must outlive the reader */
};

/* One piece of a weight that lies inside a single shard file. */
typedef si_result (*io_span_fn)(io_reader *r, int group, int shard, uint64_t shard_offset,
                                uint8_t *dst, uint64_t len, si_error *err);

/* Splits weight w's bytes at shard boundaries and calls fn for each piece, in order. */
si_result io_reader_spans(io_reader *r, const io_weight *w, void *dst, io_span_fn fn, si_error *err);

/* Opens shard `shard` of group g read-only and checks it still holds the bytes
 * io_model_load saw. */
si_result io_shard_open(const io_model *m, int g, int shard, int *fd, si_error *err);

si_result io_reader_pread_open(const io_model *m, io_reader **out, si_error *err);
si_result io_reader_uring_open(const io_model *m, io_reader **out, si_error *err);

#endif
