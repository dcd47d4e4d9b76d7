/* The op table and the lowering context: how one graph node becomes steps.
 * Each op family file (op_*.c) holds its ops' shape rules and lowerings and its
 * kernels' host references. Internal to core/. */
#ifndef SI_CORE_OPS_H
#define SI_CORE_OPS_H

#include "core.h"
#include "../io/io.h"

typedef struct lower_ctx lower_ctx;

typedef si_result (*core_lower_fn)(lower_ctx *c, si_error *err);

typedef struct {
    const char *op;     /* TF op name */
    core_lower_fn lower;
} core_op_def;

/* Each family exports a table terminated by {NULL, NULL}. */
extern const core_op_def core_ops_elementwise[];
extern const core_op_def core_ops_conv[];
extern const core_op_def core_ops_pool_reduce[];
extern const core_op_def core_ops_shape[];
extern const core_op_def core_ops_select[];
extern const core_op_def core_ops_math[];
extern const core_op_def core_ops_creation[];
extern const core_op_def core_ops_image[];
extern const core_op_def core_ops_random[];
extern const core_op_def core_ops_conv3d[];
extern const core_op_def core_ops_scatter[];
extern const core_op_def core_ops_transform[];
extern const core_op_def core_ops_misc[];

const core_op_def *core_find_op(const char *op);

/* ---- what a lowering sees ----
 * Inputs are the node's data inputs (control inputs dropped), as program tensor ids.
 * The views lc_tensor and lc_value return stay valid until the node's lowering
 * returns, however many tensors it adds meanwhile (they show the tensor as it
 * was when the table last grew: shapes and dtypes never change). */
const io_node *lc_node(const lower_ctx *c);
int lc_n_inputs(const lower_ctx *c);
int lc_in(const lower_ctx *c, int i);
const core_tensor *lc_tensor(const lower_ctx *c, int t);
core_program *lc_program(lower_ctx *c);

/* Attrs, with defaults when absent. */
int64_t lc_attr_int(const lower_ctx *c, const char *name, int64_t dflt);
double lc_attr_float(const lower_ctx *c, const char *name, double dflt);
int lc_attr_bool(const lower_ctx *c, const char *name, int dflt);
/* String attr (decoded); dflt when absent. */
const char *lc_attr_str(const lower_ctx *c, const char *name, const char *dflt);
/* List of ints: returns the count (≤ max) or -1 when absent. */
int lc_attr_ints(const lower_ctx *c, const char *name, int64_t *out, int max);
/* List of strings: returns the count or -1; out[] points into the node. */
int lc_attr_strs(const lower_ctx *c, const char *name, const char **out, int max);

/* Host value of input i when it does not depend on the model's inputs
 * (folding it now if needed), else NULL. Errors (a weight that can't be read)
 * come back through *st. The buffer belongs to the program. */
const core_buf *lc_value(lower_ctx *c, int i, si_result *st, si_error *err);
/* Same, asked as integers (int32 or float tensors), for shape arguments.
 * Returns count or -1 if not constant; sets err and returns -2 on failure. */
int lc_value_ints(lower_ctx *c, int i, int64_t *out, int max, si_error *err);

/* A new tensor produced by steps of this node. */
int lc_new_tensor(lower_ctx *c, si_dtype dt, const core_shape *shape);
/* A new host constant (data copied, count*4 bytes). */
int lc_new_const(lower_ctx *c, si_dtype dt, const core_shape *shape, const void *data);
/* A tensor sharing t's storage with another shape (same element count). */
int lc_new_alias(lower_ctx *c, int t, const core_shape *shape);
/* Appends a step; in[]/out/kind/params filled by the caller (node is set here). */
void lc_emit(lower_ctx *c, const ck_step *s);
/* Output k of the node is tensor t. Every output the graph uses must be set. */
void lc_set_output(lower_ctx *c, int k, int t);

/* Fails with the node's name and op in the message. */
si_result lc_fail(const lower_ctx *c, si_error *err, si_result st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Helpers shared by families. */
/* SAME/VALID/EXPLICIT padding, TF rules: output size and the before-padding. */
si_result core_conv_out(const lower_ctx *c, si_error *err, int64_t in, int64_t k, int64_t stride,
                        int64_t dil, const char *padding, const int64_t *explicit_pad,
                        int64_t *out, int64_t *pad_before);

#endif
