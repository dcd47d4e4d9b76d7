/* The host interpreter's internals, shared by its files: interp.c (the value
 * map, contexts, the tensor map, scheduling and the run), interp_control.c (one
 * node: its inputs, then TF1 control flow or a handler), interp_lists.c
 * (TensorArray and TensorList), interp_ops.c (host values, the helpers every
 * handler uses, NonMaxSuppression, Where and ordinary ops), interp_cplx.c
 * (complex64 values and the spectral ops). Internal to core/. */
#ifndef SI_CORE_INTERP_INTERNAL_H
#define SI_CORE_INTERP_INTERNAL_H

#include "graph.h"
#include "interp.h"

/* A host value, counted. Values are never written once made (shared by refs),
 * so a view (base set) reads part of its base's data in place. */
typedef struct ival {
    core_buf b;
    int refs;
    struct ival *base;   /* a view: b.data points into base's, base held */
    int lent;            /* b.data is someone else's (a valmap's the run reads): never freed */
} ival;

typedef struct {
    int parent;          /* -1 for the root */
    const char *frame;   /* frame name (points into a node's attr) */
    int iter;
    char *id;            /* tfjs context id: "" or "/frame-0/inner-3" */
} ictx;

typedef struct {
    int node, ctx;
    int n;
    int lazy;            /* a Const not read yet: output 0 present, value NULL */
    ival **v;            /* NULL: absent (dead) */
} ientry;

/* open-addressing map from a 64-bit key to an int */
typedef struct {
    size_t cap, n;
    uint64_t *keys;
    int *vals;
} imap;

typedef struct {
    int kind;            /* 0 TensorArray, 1 TensorList */
    si_dtype dtype;
    int shape_known;     /* element shape: 0 = unknown rank */
    core_shape shape;    /* dims may be -1 */
    int n, cap;
    ival **items;        /* NULL: never written */
    uint8_t *read;       /* TensorArray: read flags */
    int max_size, dynamic, clear_after_read, closed;
    int max_elems;       /* TensorList: -1 unbounded */
    const char *name;
} iresource;

typedef struct {
    int node, ctx;
} item;

typedef struct {
    int node, key_ctx, ctx_after, n;
    ival **outs;
} pending;

/* A hash table (HashTable, HashTableV2): keys as tfjs's Map holds them
 * (strings decoded, as JavaScript strings compare; numbers by SameValueZero),
 * each with the row of the values tensor it was last imported with. One per
 * HashTable node and run, as tfjs-converter's ResourceManager keeps them. */
typedef struct {
    int node;            /* the HashTable node that made it */
    si_dtype key_dt, val_dt;
    int n, cap;          /* entries */
    int n_slots;         /* open addressing: slot[] holds entry indices, -1 empty */
    int *slot;
    uint64_t *hash;      /* per entry */
    uint8_t **kstr;      /* string keys (normalized bytes) */
    size_t *klen;
    uint64_t *knum;      /* numeric keys */
    int64_t *row;        /* the row of vals */
    ival *vals;          /* the last import's values */
} itable;

typedef struct {
    const core_graph *g;
    core_weight_loader load;
    void *load_user;
    const core_offload *gpu; /* may be NULL */
    si_error *err;
    ictx *ctx;
    int n_ctx, cap_ctx;
    imap ctx_map;        /* hash of id string → ctx index (chained by probing on equal hash) */
    ientry *ent;
    int n_ent, cap_ent;
    imap ent_map;        /* (node, ctx) → entry */
    imap added;          /* (node, ctx) → 1 */
    int *child_start, *child;
    uint8_t *used;
    uint8_t *defer;      /* staged run: static nodes left for the next GPU stage */
    item *stack;
    int n_stack, cap_stack;
    pending *pend;
    int n_pend, cap_pend;
    iresource *res;
    int n_res, cap_res;
    itable *tables;
    int n_tables, cap_tables;
    long long executed;
} interp;

#define RES_HANDLE_BASE 0x51000000 /* TensorArray/TensorList handles: this + resource index */
#define TABLE_HANDLE_BASE 0x52000000 /* hash table handles: this + table index */
#define MAX_ITERATIONS 1000000
#define MAX_EXECUTED 2000000000LL

/* One node being run: what its handler sees. */
typedef struct {
    interp *in;
    int node;
    const io_node *n;
    int ctx;
    int n_data;
    ival **data;         /* data inputs in order (control inputs skipped) */
    ival **outs;
    int n_outs;
} opctx;

/* ---- interp.c ---- */
si_result ip_nomem(interp *in);
/* Fails naming the model file, the node and its op. */
si_result ip_node_fail(interp *in, int k, si_result st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The context (parent's frames + frame at iter), interned by its tfjs id; -1: no memory. */
int ip_ctx_intern(interp *in, int parent, const char *frame, int iter);
/* Value of edge (node, idx) seen from ctx; NULL if absent (or on failure, *st set). */
ival *ip_tensor_get(interp *in, int node, int idx, int ctx, si_result *st);
void ip_free_outs(ival **outs, int n);

/* ---- interp_control.c ---- */
/* Runs node k in ctx; on success *outs (n entries) and *ctx_after are set. */
si_result ip_execute(interp *in, int k, int ctx, ival ***outs_p, int *n_outs_p, int *ctx_after);

/* ---- interp_lists.c ---- */
/* TensorArray..., TensorList... and EmptyTensorList ops; any other name of the
 * prefix fails as not implemented. */
si_result ip_tensor_array(opctx *o);
si_result ip_tensor_list(opctx *o);

/* ---- interp_ops.c ---- */
/* Values are reference counted; the constructors return NULL when out of memory. */
ival *ip_val_new(si_dtype dt, const core_shape *s);
ival *ip_val_wrap(core_buf b);
/* A view of base's data from byte off, of shape s (base's dtype): no copy. */
ival *ip_val_view(ival *base, const core_shape *s, size_t off);
ival *ip_val_ref(ival *v);
void ip_val_unref(ival *v);
ival *ip_val_scalar_f(float x);
ival *ip_val_scalar_i(int32_t x);
/* Element i of an int32 or float32 buffer, as a number. */
double ip_buf_num(const core_buf *b, int64_t i);

si_result ip_need_inputs(opctx *o, int count);
si_result ip_in_number(opctx *o, int i, double *v);
si_result ip_in_int(opctx *o, int i, int64_t *v);
/* tfjs 'shape' param: a scalar means unknown rank (*known = 0), a vector the dims. */
si_result ip_in_shape(opctx *o, int i, int *known, core_shape *s);
int ip_attr_bool(const io_node *n, const char *name, int dflt);
/* *given = 0 when the attr is absent (then *dt is left as it was). */
si_result ip_attr_dtype(opctx *o, const char *name, si_dtype *dt, int *given);
/* Output i becomes v (taken over; v NULL: out of memory; i past the outputs: dropped). */
si_result ip_set_out(opctx *o, int i, ival *v);
const char *ip_dt_name(si_dtype t);

si_result ip_nms(opctx *o);
si_result ip_where(opctx *o);
/* ---- interp_sparse.c ---- */
si_result ip_sparse(opctx *o);
si_result ip_unique(opctx *o);
si_result ip_listdiff(opctx *o);
/* ---- interp_ragged.c ---- */
si_result ip_ragged_to_tensor(opctx *o);
/* Any op of the op table, through core_eval_node. */
si_result ip_eval_ordinary(opctx *o);

/* ---- interp_cplx.c ---- */
/* Complex, Real, Imag, ComplexAbs, FFT, IFFT, RFFT, IRFFT; and the ordinary
 * ops that ip_complex_runs says run here: Identity, Add, AddV2, Sub, Mul,
 * Cast, Reshape, Squeeze, ExpandDims, Concat, ConcatV2, Pack on complex64
 * values, and a Cast to complex64. */
si_result ip_complex(opctx *o);
int ip_is_complex_op(const char *op);
int ip_complex_runs(const opctx *o);
/* Does one of o's data inputs hold a complex64 value? */
int ip_reads_complex(const opctx *o);
/* Fails, naming the node, when an op that does not take complex64 values is
 * given one. */
si_result ip_check_complex_inputs(opctx *o);

/* ---- interp_strings.c ---- */
/* String tensors live only here: dtype IP_STRING, data one block of count+1
 * uint64 offsets, then the bytes; element i is bytes [off[i], off[i+1]) of
 * the part after the offsets. Not an si_dtype: nothing outside the
 * interpreter ever sees one (ip_execute, the value exports and the outputs
 * refuse them). */
#define IP_STRING ((si_dtype)16)
/* Element i of a string tensor: its bytes and length. */
const uint8_t *ip_str(const core_buf *b, int64_t i, size_t *len);
/* Builds a string tensor element by element: ip_sv_add appends bytes to the
 * element under way, ip_sv_end closes it; ip_sv_finish makes the value (of
 * shape s, whose count must be the number of elements) and frees the builder. */
typedef struct {
    int64_t n, cap_n;
    uint64_t *off;       /* off[0..n]: where each element starts (off[n]: the open one) */
    uint8_t *bytes;
    uint64_t cur, cap;   /* bytes so far; room */
    int oom;
} ip_strvec;
void ip_sv_add(ip_strvec *sv, const uint8_t *p, size_t n);
void ip_sv_end(ip_strvec *sv);
ival *ip_sv_finish(ip_strvec *sv, const core_shape *s);
void ip_sv_free(ip_strvec *sv);
/* The value of a Const whose weight is a string weight. */
si_result ip_string_const(interp *in, int node, ival **out);
/* Ops that only move elements (Reshape, Gather, Concat, Select, ...), run on
 * string inputs through their lowerings with index stand-ins. */
int ip_moves_elements(const char *op);
si_result ip_string_moved(opctx *o);
/* StaticRegexReplace, StringNGrams, StringSplit, StringToHashBucketFast. */
si_result ip_string_op(opctx *o);
/* TextDecoder('utf-8') (U+FFFD for bad bytes, a leading BOM dropped) and back
 * (TextEncoder), for tfjs's JavaScript strings; interp_regex.c. */
int ip_utf8_to_utf16(const uint8_t *b, size_t len, uint16_t **out, size_t *n);
void ip_utf16_to_utf8(const uint16_t *u, size_t n, ip_strvec *sv);

/* ---- interp_regex.c ---- */
typedef struct rx_prog rx_prog;
/* Compiles a pattern (after tfjs's lowercasing); -1 with why set when it is
 * outside the supported syntax. */
int ip_regex_compile(const char *pattern, size_t len, rx_prog **out, char *why, size_t why_n);
void ip_regex_free(rx_prog *r);
/* s with the first (or, global, every) match replaced as JavaScript's
 * String.prototype.replace does, appended to sv as one element. Returns 0,
 * -1 out of memory, -2 the match needed more steps than allowed. */
int ip_regex_replace(const rx_prog *r, const uint8_t *s, size_t len, const char *rewrite,
                     size_t rewrite_len, int global, ip_strvec *sv);

/* ---- interp_hash.c ---- */
/* HashTable(V2), LookupTableImport(V2), InitializeTable(V2), LookupTableFind(V2),
 * LookupTableSize(V2). */
si_result ip_hash_table(opctx *o);
void ip_tables_free(interp *in);

#endif
