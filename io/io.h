/* io — reads bytes: model.json (cJSON), the weight table, shard readers
 * (pread, io_uring), .npy files and images. No GL here. */
#ifndef SI_IO_H
#define SI_IO_H

#include <stddef.h>
#include <stdint.h>
#include "streaminfer.h"

#include "../base/base.h"

/* TF DataType as written by the converter ("DT_FLOAT" ...). Values below
 * IO_DT_OTHER map 1:1 to si_dtype. */
typedef enum {
    IO_DT_FLOAT = SI_FLOAT32, IO_DT_INT32 = SI_INT32, IO_DT_BOOL = SI_BOOL,
    IO_DT_OTHER = 100, /* DT_STRING, DT_INT64, DT_HALF ...; name kept in type_name */
    /* A weight of dtype 'string' (never an attr's type): the shard holds, per
     * element, a 4-byte little-endian length and then that many bytes. Only
     * the host interpreter reads these (core/interp_strings.c). */
    IO_DT_STRING = 101
} io_dtype;

typedef enum {
    IO_ATTR_I, IO_ATTR_F, IO_ATTR_B, IO_ATTR_S, IO_ATTR_TYPE, IO_ATTR_SHAPE,
    IO_ATTR_LIST, IO_ATTR_TENSOR, IO_ATTR_FUNC, IO_ATTR_EMPTY
} io_attr_kind;

typedef struct {
    int unknown_rank;
    int rank;
    int64_t dim[SI_MAX_RANK]; /* -1 = unknown */
} io_shape;

typedef struct {           /* a tensor written inline in an attr ("value") */
    io_dtype dtype;
    io_shape shape;
    size_t n;              /* number of values given (may be 1 for a splat) */
    void *data;            /* float / int32_t / uint8_t(bool) per dtype; NULL if none */
} io_tensor_value;

typedef struct {
    char *name;
    io_attr_kind kind;
    int64_t i;             /* IO_ATTR_I */
    double f;              /* IO_ATTR_F */
    int b;                 /* IO_ATTR_B */
    char *s; size_t s_len; /* IO_ATTR_S (base64-decoded bytes, NUL-terminated) or IO_ATTR_FUNC name */
    io_dtype type; const char *type_name; /* IO_ATTR_TYPE */
    io_shape shape;        /* IO_ATTR_SHAPE */
    /* IO_ATTR_LIST: exactly one of these arrays is used, list_kind tells which */
    io_attr_kind list_kind; /* I, F, B, S, TYPE, SHAPE; IO_ATTR_EMPTY for [] */
    int n;
    int64_t *li; double *lf; int *lb; char **ls; io_dtype *ltype; io_shape *lshape;
    io_tensor_value tensor; /* IO_ATTR_TENSOR */
} io_attr;

typedef struct {
    char *name;
    char *op;
    int n_inputs;
    char **inputs;         /* raw: "node", "node:1", "^ctrl" */
    int n_attrs;
    io_attr *attrs;
} io_node;

typedef enum { IO_Q_NONE, IO_Q_UINT8, IO_Q_UINT16, IO_Q_FLOAT16 } io_quant;

typedef struct {
    char *name;
    io_dtype dtype;        /* dtype after dequantization */
    int rank;
    int64_t shape[SI_MAX_RANK];
    io_quant quant;
    float q_min, q_scale;  /* uint8/uint16 affine quantization */
    int group;             /* index into io_model.groups */
    uint64_t offset;       /* byte offset in the concatenation of the group's shards */
    uint64_t nbytes;       /* stored bytes (a string weight: its length prefixes and bytes,
                            * walked in the shards when the model is loaded) */
    uint64_t count;        /* elements */
    /* min and scale as the manifest writes them: TensorFlow.js dequantizes in
     * double, so bit-exact host results need these, not the float copies. */
    double q_min64, q_scale64;
} io_weight;

typedef struct {
    int n_paths;
    char **paths;          /* full paths, relative to the model file's folder */
    uint64_t *sizes;       /* real file sizes */
    uint64_t total;        /* sum of sizes */
} io_group;

typedef struct io_function io_function;

typedef struct {
    char *json_path;
    char *dir;
    char *format;          /* "graph-model" */
    int n_nodes;
    io_node *nodes;
    int n_weights;
    io_weight *weights;
    int n_groups;
    io_group *groups;
    uint64_t weights_bytes; /* sum of stored weight bytes */
    /* "signature" block, when present (keys in file order) */
    int n_sig_inputs, n_sig_outputs;
    char **sig_input_keys, **sig_input_names;   /* names like "input_1:0" */
    char **sig_output_keys, **sig_output_names;
    int has_functions;     /* modelTopology.library.function present */
    /* modelTopology.library.function, in file order. A function's body is an
     * io_model of its own: one Placeholder per input arg (its signature
     * inputs), then its node_def, its signature outputs the ret refs as
     * "node:index"; it borrows the root's weights, groups and functions. */
    int n_functions;
    io_function *functions;
    int borrowed;          /* a function body: weights, groups, functions not owned */
} io_model;

struct io_function {
    char *name;
    int n_in, n_out;
    io_model *body;
};

/* The function named name, or NULL. */
const io_function *io_model_function(const io_model *m, const char *name);

/* path: a folder holding model.json, or a path to a graph-model .json.
 * Checks: JSON well formed, format graph-model, shards exist and are at least as
 * long as the manifest says, every weight's bytes agree with shape and dtype. */
si_result io_model_load(const char *path, io_model **out, si_error *err);
void io_model_free(io_model *m);

const io_attr *io_node_attr(const io_node *n, const char *name);

/* Element size of a weight's stored form (quantized or not). */
size_t io_weight_stored_elem_size(const io_weight *w);
/* Converts stored bytes to float32 (or int32/bool as 4-byte ints) exactly as
 * TensorFlow.js does: uint8 → q*scale+min, float16 → float32. dst holds count*4 bytes
 * (a string weight: nbytes, its stored bytes copied as they are). */
void io_weight_dequantize(const io_weight *w, const void *stored, void *dst);
float io_half_to_float(uint16_t h);
/* The IEEE half nearest f (ties to even); past the largest half: inf. */
uint16_t io_float_to_half(float f);
/* n floats (4 bytes each at src) to halves (2 bytes each at dst) as
 * io_float_to_half, bit for bit, by the CPU's F16C instructions where it has
 * them (8 a step: a model's input is converted on every run). dst may be src
 * itself: each half lands below the floats not read yet. */
void io_floats_to_halves(void *dst, const void *src, int64_t n);

/* Shard readers: one interface, two implementations. */
typedef struct io_reader io_reader;
si_result io_reader_open(const io_model *m, si_io_mode mode, io_reader **out, si_error *err);
/* Queue a read of weight w's stored bytes into dst (nbytes of the weight). */
si_result io_reader_submit(io_reader *r, int w, void *dst, si_error *err);
/* Wait for every queued read. */
si_result io_reader_wait(io_reader *r, si_error *err);
si_result io_reader_read(io_reader *r, int w, void *dst, si_error *err); /* submit + wait */
void io_reader_close(io_reader *r);

/* The whole regular file path in a new buffer (*buf, free it) of *len bytes
 * and one spare; a file over max bytes fails as "path: too_large" before any
 * read. For the small files read at once (.npy, images). */
si_result io_read_whole(const char *path, int64_t max, const char *too_large, unsigned char **buf,
                        size_t *len, si_error *err);

/* .npy: reads <f2 <f4 <f8 |b1 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8, C order, to the
 * file's own kind: floats → float32, bool → bool, integers → int32 (range
 * checked). Data: float32, int32, or 1 byte per bool. */
si_result io_npy_read(const char *path, si_dtype *dtype, int *rank, int64_t shape[SI_MAX_RANK],
                      void **data, si_error *err);
/* The same files converted to want (float32, int32, bool) as TensorFlow.js
 * would (si_npy_read_as in streaminfer.h says how). */
si_result io_npy_read_as(const char *path, si_dtype want, int *rank, int64_t shape[SI_MAX_RANK],
                         void **data, si_error *err);
si_result io_npy_write(const char *path, si_dtype dtype, int rank, const int64_t *shape,
                       const void *data, si_error *err);

/* Decodes an image (.jpg/.png/.bmp ... via stb_image) to RGB bytes, HWC, at
 * its own size (*rgb malloc'ed). Fitting it to a model's input is the
 * runtime's (si_image_read), with the bilinear resize of the op table. */
si_result io_image_decode(const char *path, int *height, int *width, unsigned char **rgb,
                          si_error *err);
/* The same with the file's own channels (*channels: 1 gray, 2 gray+alpha, 3 RGB,
 * 4 RGBA), HWC; *px malloc'ed. */
si_result io_image_decode_any(const char *path, int *height, int *width, int *channels,
                              unsigned char **px, si_error *err);

#endif
