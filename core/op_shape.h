/* The shape-op family's internals: the lowering helpers op_shape.c defines
 * and op_slice.c and op_concat.c use, and the lowerings those two files
 * define for the family's one table (core_ops_shape, in op_shape.c). Internal
 * to core/. */
#ifndef SI_CORE_OP_SHAPE_H
#define SI_CORE_OP_SHAPE_H

#include "ops.h"

#define MAX_SPEC 32 /* entries in a shape argument we accept (StridedSlice specs) */
#define MAX_VIEW (2 * SI_MAX_RANK) /* dims of a copy view before coalescing */

/* ---- helpers (op_shape.c) ---- */
si_result sh_nomem(const lower_ctx *c, si_error *err);
const char *sh_str(const core_shape *s, char *buf, size_t n);
/* Shapes whose element counts and offsets fit the kernels' int32 slots. */
si_result sh_check_shape(const lower_ctx *c, si_error *err, const core_shape *s, const char *what);
/* Integer values of constant input i (a shape argument); fails when it depends
 * on the model's input or holds more than max values. */
si_result sh_const_ints(lower_ctx *c, si_error *err, int i, const char *what, int64_t *out,
                        int max, int *n);
/* One constant scalar (first value) as a double, as tfjs reads a number param. */
si_result sh_const_scalar(lower_ctx *c, si_error *err, int i, const char *what, double *v);
/* Input i as a program tensor; fails when it is absent. */
si_result sh_input_tensor(const lower_ctx *c, si_error *err, int i, const char *what, int *t);
/* Axis in [-rank, rank) → [0, rank). */
si_result sh_norm_axis(const lower_ctx *c, si_error *err, int64_t axis, int rank, int *out);
/* Output k is t seen with shape (an alias, no copy). */
si_result sh_set_alias(lower_ctx *c, si_error *err, int k, int t, const core_shape *shape);
/* Output k is a host constant of shape/dtype; data may be NULL for zeros. */
si_result sh_set_const(lower_ctx *c, si_error *err, int k, si_dtype dt, const core_shape *shape,
                       const void *data);
/* Value v stored as dtype dt the way a JS typed array of that dtype stores it. */
int32_t sh_store_as(si_dtype dt, double v);
si_result sh_new_tensor(lower_ctx *c, si_error *err, si_dtype dt, const core_shape *shape, int *t);
/* Emits one CK_COPY of the region dims[0..n) of in into out. */
si_result sh_emit_copy(lower_ctx *c, si_error *err, int in, int out, int n, const int64_t *dims,
                       const int64_t *istr, const int64_t *ostr, int64_t in_off,
                       int64_t out_off, int accumulate);
/* Output k: out[i] = x[begin + i*step] over dims (x's rank), stored
 * contiguously with out_shape (same element count). Empty results become
 * constants. */
si_result sh_emit_slice(lower_ctx *c, si_error *err, int k, int x, const int64_t *begin,
                        const int64_t *step, const int64_t *dims, const core_shape *out_shape);

/* The lowerings of the other files of the family, all
 * si_result sh_lower_<name>(lower_ctx *, si_error *); the rows of the
 * family's table in op_shape.c name them. */
#define SH_LOWERINGS(X)                                                      \
    /* slices, split, unpack, gather (op_slice.c) */                         \
    X(slice) X(strided_slice) X(split) X(split_v) X(unpack) X(gather)        \
    X(gather_nd)                                                             \
    /* concat, pack, pad, depth/space/batch (op_concat.c) */                 \
    X(concat) X(pack) X(pad) X(depth_space) X(space_to_batch) X(batch_to_space)
#define SH_DECLARE_LOWERING(name) si_result sh_lower_##name(lower_ctx *c, si_error *err);
SH_LOWERINGS(SH_DECLARE_LOWERING)
#undef SH_DECLARE_LOWERING

#endif
