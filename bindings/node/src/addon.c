/* Node-API binding of streaminfer: the few calls index.js builds the GraphModel on.
 * Runs go to libuv's worker threads (napi_async_work), one at a time per model, in
 * the order they were asked for: a model's queue starts the next run when the
 * last one completes, so si_output's data is read (copied into the result) before
 * any later si_run can replace it. The library's handles may be used from any
 * thread (include/streaminfer.h), so open, run and close need not share one. */
#define NAPI_VERSION 8
#include <node_api.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "streaminfer.h"

static atomic_int live_handles; /* si_model handles open, for tests of leaks */

typedef struct run_job run_job;

typedef struct {
    si_model *m;          /* NULL once closed */
    int disposed;         /* dispose() was called: nothing new runs */
    int finalized;        /* the JS object was collected */
    run_job *head, *tail; /* runs asked for; head is the one on a worker */
} handle;

struct run_job {
    handle *h;
    napi_async_work work;
    napi_deferred deferred;
    napi_ref keep; /* the handle's JS object: not collected while the job lives */
    int n_in;
    si_tensor_in *in;
    char *block; /* the inputs' names and data, copied: the caller may reuse its arrays */
    int n_sel;
    int *sel; /* outputs to return, by index; NULL: all */
    si_result st;
    si_error err;
    run_job *next;
};

static const napi_type_tag handle_tag = {0x73747265616d696eULL, 0x666572686e646c31ULL};

/* ---- errors: Error objects with the library's message and a code ---- */

static const char *status_name(si_result st)
{
    static const char *names[] = {"SI_OK", "SI_ERR_ARG", "SI_ERR_IO", "SI_ERR_FORMAT",
                                  "SI_ERR_UNSUPPORTED", "SI_ERR_SHAPE", "SI_ERR_GPU",
                                  "SI_ERR_BUDGET", "SI_ERR_NOMEM", "SI_ERR_CANCELLED"};
    return (unsigned)st < sizeof names / sizeof *names ? names[st] : "SI_ERR_UNKNOWN";
}

/* The code says whose fault it is, as the CLI's exit status does: at open every
 * read or parse failure is the model's; at run a bad argument is the input's. */
static const char *code_of(si_result st, int at_open)
{
    switch (st) {
    case SI_ERR_BUDGET: return "SI_BUDGET";
    case SI_ERR_GPU: return "SI_GPU";
    case SI_ERR_NOMEM: return "SI_NOMEM";
    case SI_ERR_ARG:
    case SI_ERR_SHAPE: return at_open ? "SI_MODEL" : "SI_INPUT";
    case SI_ERR_IO:
    case SI_ERR_FORMAT:
    case SI_ERR_UNSUPPORTED: return "SI_MODEL";
    default: return "SI_ERROR";
    }
}

static napi_value make_error(napi_env env, const char *code, const char *status, const char *msg)
{
    napi_value c, m, e, s;
    if (napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &c) != napi_ok ||
        napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &m) != napi_ok ||
        napi_create_error(env, c, m, &e) != napi_ok)
        return NULL;
    if (status && napi_create_string_utf8(env, status, NAPI_AUTO_LENGTH, &s) == napi_ok)
        napi_set_named_property(env, e, "status", s);
    return e;
}

static void throw_code(napi_env env, const char *code, const char *msg)
{
    napi_value e = make_error(env, code, NULL, msg);
    if (e)
        napi_throw(env, e);
    else
        napi_throw_error(env, code, msg);
}

static napi_value lib_error(napi_env env, si_result st, const si_error *err, int at_open)
{
    return make_error(env, code_of(st, at_open), status_name(st),
                      err->message[0] ? err->message : status_name(st));
}

/* Any Node-API failure not otherwise reported becomes a thrown Error. */
#define CALL(env, call)                                                                          \
    do {                                                                                         \
        if ((call) != napi_ok) {                                                                 \
            bool pending_ = false;                                                               \
            napi_is_exception_pending((env), &pending_);                                         \
            if (!pending_)                                                                       \
                napi_throw_error((env), "SI_ERROR", "streaminfer binding: " #call " failed");    \
            return NULL;                                                                         \
        }                                                                                        \
    } while (0)

static napi_value undefined(napi_env env)
{
    napi_value u;
    napi_get_undefined(env, &u);
    return u;
}

/* ---- handles ---- */

static void close_model(handle *h)
{
    if (h->m) {
        si_close(h->m);
        h->m = NULL;
        atomic_fetch_sub(&live_handles, 1);
    }
}

static void handle_finalize(napi_env env, void *data, void *hint)
{
    (void)env;
    (void)hint;
    handle *h = data;
    /* A job keeps the object alive, so only teardown finds one here; a worker may
     * still be inside si_run then, and the process is ending: leave it. */
    if (h->head) {
        h->finalized = 1;
        return;
    }
    close_model(h);
    free(h);
}

static handle *get_handle(napi_env env, napi_value v)
{
    bool ok = false;
    napi_valuetype t;
    if (napi_typeof(env, v, &t) != napi_ok || t != napi_object ||
        napi_check_object_type_tag(env, v, &handle_tag, &ok) != napi_ok || !ok) {
        throw_code(env, "SI_ARG", "not a streaminfer model handle");
        return NULL;
    }
    void *h = NULL;
    if (napi_unwrap(env, v, &h) != napi_ok || !h) {
        throw_code(env, "SI_ARG", "not a streaminfer model handle");
        return NULL;
    }
    return h;
}

static handle *live_handle(napi_env env, napi_value v)
{
    handle *h = get_handle(env, v);
    if (h && (h->disposed || !h->m)) {
        throw_code(env, "SI_DISPOSED", "the model was disposed");
        return NULL;
    }
    return h;
}

/* ---- open: si_open on a worker ---- */

typedef struct {
    napi_async_work work;
    napi_deferred deferred;
    char *path, *trace;
    si_options opt;
    si_model *m;
    si_result st;
    si_error err;
} open_job;

static void open_execute(napi_env env, void *data)
{
    (void)env;
    open_job *j = data;
    j->st = si_open(j->path, &j->opt, &j->m, &j->err);
    if (j->st == SI_OK)
        atomic_fetch_add(&live_handles, 1);
}

static napi_value wrap_handle(napi_env env, si_model *m)
{
    handle *h = calloc(1, sizeof *h);
    napi_value obj;
    if (!h)
        return NULL;
    if (napi_create_object(env, &obj) != napi_ok ||
        napi_type_tag_object(env, obj, &handle_tag) != napi_ok ||
        napi_wrap(env, obj, h, handle_finalize, NULL, NULL) != napi_ok) {
        free(h);
        return NULL; /* the caller closes m */
    }
    h->m = m; /* from here on the finalizer closes it */
    return obj;
}

static void open_complete(napi_env env, napi_status status, void *data)
{
    open_job *j = data;
    napi_value v = NULL;
    if (status == napi_ok && j->st == SI_OK) {
        v = wrap_handle(env, j->m);
        if (!v) {
            si_close(j->m);
            atomic_fetch_sub(&live_handles, 1);
            j->st = SI_ERR_NOMEM;
            snprintf(j->err.message, sizeof j->err.message, "cannot make the model's handle");
        }
    } else if (status != napi_ok) {
        j->st = SI_ERR_ARG;
        snprintf(j->err.message, sizeof j->err.message, "the open was cancelled");
    }
    if (v)
        napi_resolve_deferred(env, j->deferred, v);
    else
        napi_reject_deferred(env, j->deferred, lib_error(env, j->st, &j->err, 1));
    napi_delete_async_work(env, j->work);
    free(j->path);
    free(j->trace);
    free(j);
}

static char *get_string(napi_env env, napi_value v)
{
    size_t n;
    if (napi_get_value_string_utf8(env, v, NULL, 0, &n) != napi_ok)
        return NULL;
    char *s = malloc(n + 1);
    if (s && napi_get_value_string_utf8(env, v, s, n + 1, &n) != napi_ok) {
        free(s);
        s = NULL;
    }
    return s;
}

static int get_int_prop(napi_env env, napi_value obj, const char *key, int64_t *out)
{
    napi_value v;
    return napi_get_named_property(env, obj, key, &v) == napi_ok &&
           napi_get_value_int64(env, v, out) == napi_ok;
}

/* open(path, {vram, io, backend, precision, trace}) -> Promise<handle>; the
 * options come checked by index.js (vram in bytes, io, backend and precision
 * as the C enums). */
static napi_value js_open(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2], promise, name, tr;
    CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 2) {
        throw_code(env, "SI_ARG", "open(path, options)");
        return NULL;
    }
    open_job *j = calloc(1, sizeof *j);
    if (!j || !(j->path = get_string(env, argv[0]))) {
        free(j);
        throw_code(env, "SI_ARG", "the model's path must be a string");
        return NULL;
    }
    int64_t vram = 0, io = 0, backend = 0, precision = 0;
    bool has_trace = false;
    if (!get_int_prop(env, argv[1], "vram", &vram) || !get_int_prop(env, argv[1], "io", &io) ||
        !get_int_prop(env, argv[1], "backend", &backend) ||
        !get_int_prop(env, argv[1], "precision", &precision) || vram < 0) {
        free(j->path);
        free(j);
        throw_code(env, "SI_ARG", "open: bad options");
        return NULL;
    }
    napi_has_named_property(env, argv[1], "trace", &has_trace);
    if (has_trace && napi_get_named_property(env, argv[1], "trace", &tr) == napi_ok) {
        napi_valuetype t;
        napi_typeof(env, tr, &t);
        if (t == napi_string)
            j->trace = get_string(env, tr);
    }
    j->opt = (si_options){.vram_budget = (uint64_t)vram, .io_mode = (si_io_mode)io,
                          .backend = (si_backend)backend, .trace_path = j->trace,
                          .precision = (si_precision)precision};
    if (napi_create_promise(env, &j->deferred, &promise) != napi_ok ||
        napi_create_string_utf8(env, "streaminfer.open", NAPI_AUTO_LENGTH, &name) != napi_ok ||
        napi_create_async_work(env, NULL, name, open_execute, open_complete, j, &j->work) !=
            napi_ok ||
        napi_queue_async_work(env, j->work) != napi_ok) {
        free(j->path);
        free(j->trace);
        free(j);
        throw_code(env, "SI_ERROR", "open: cannot queue the work");
        return NULL;
    }
    return promise;
}

/* ---- what the model takes and gives ---- */

static napi_value js_info(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], res, ins, outs;
    CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    handle *h = live_handle(env, argv[0]);
    if (!h)
        return NULL;
    CALL(env, napi_create_object(env, &res));
    int ni = si_input_count(h->m), no = si_output_count(h->m);
    CALL(env, napi_create_array_with_length(env, (size_t)ni, &ins));
    for (int i = 0; i < ni; i++) {
        const char *nm;
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        napi_value o, v, sh;
        if (si_input_info(h->m, i, &nm, &dt, &rank, shape) != SI_OK) {
            throw_code(env, "SI_ERROR", "si_input_info failed");
            return NULL;
        }
        CALL(env, napi_create_object(env, &o));
        CALL(env, napi_create_string_utf8(env, nm, NAPI_AUTO_LENGTH, &v));
        CALL(env, napi_set_named_property(env, o, "name", v));
        CALL(env, napi_create_int32(env, (int32_t)dt, &v));
        CALL(env, napi_set_named_property(env, o, "dtype", v));
        if (rank >= 0) {
            CALL(env, napi_create_array_with_length(env, (size_t)rank, &sh));
            for (int d = 0; d < rank; d++) {
                CALL(env, napi_create_int64(env, shape[d], &v));
                CALL(env, napi_set_element(env, sh, (uint32_t)d, v));
            }
        } else {
            napi_get_null(env, &sh); /* unknown rank */
        }
        CALL(env, napi_set_named_property(env, o, "shape", sh));
        CALL(env, napi_set_element(env, ins, (uint32_t)i, o));
    }
    CALL(env, napi_create_array_with_length(env, (size_t)no, &outs));
    for (int i = 0; i < no; i++) {
        napi_value v;
        CALL(env, napi_create_string_utf8(env, si_output_name(h->m, i), NAPI_AUTO_LENGTH, &v));
        CALL(env, napi_set_element(env, outs, (uint32_t)i, v));
    }
    CALL(env, napi_set_named_property(env, res, "inputs", ins));
    CALL(env, napi_set_named_property(env, res, "outputs", outs));
    return res;
}

/* ---- runs ---- */

/* Reads the inputs, [{name, dtype, shape, data}], as index.js made them. The data
 * must be the dtype's typed array with one element per shape element; with copy,
 * names and data are copied into *block, else they point into the JS values
 * (valid for a synchronous call only). */
static int read_inputs(napi_env env, napi_value arr, int copy, si_tensor_in **out, int *n_out,
                       char **block)
{
    uint32_t n;
    bool is_arr = false;
    *out = NULL;
    *block = NULL;
    if (napi_is_array(env, arr, &is_arr) != napi_ok || !is_arr ||
        napi_get_array_length(env, arr, &n) != napi_ok || n > 4096)
        return throw_code(env, "SI_ARG", "inputs must be an array"), 0;
    si_tensor_in *in = calloc((size_t)n + 1, sizeof *in);
    void **data = calloc((size_t)n + 1, sizeof *data);
    size_t *bytes = calloc((size_t)n + 1, sizeof *bytes);
    char **names = calloc((size_t)n + 1, sizeof *names);
    size_t total = 0;
    int ok = in && data && bytes && names;
    for (uint32_t i = 0; ok && i < n; i++) {
        napi_value o, v, sh;
        int64_t dt;
        uint32_t rank;
        ok = napi_get_element(env, arr, i, &o) == napi_ok && get_int_prop(env, o, "dtype", &dt) &&
             dt >= SI_FLOAT32 && dt <= SI_BOOL &&
             napi_get_named_property(env, o, "name", &v) == napi_ok &&
             (names[i] = get_string(env, v)) &&
             napi_get_named_property(env, o, "shape", &sh) == napi_ok &&
             napi_get_array_length(env, sh, &rank) == napi_ok && rank <= SI_MAX_RANK;
        if (!ok)
            break;
        in[i].dtype = (si_dtype)dt;
        in[i].rank = (int)rank;
        int64_t count = 1;
        for (uint32_t d = 0; ok && d < rank; d++) {
            napi_value e;
            ok = napi_get_element(env, sh, d, &e) == napi_ok &&
                 napi_get_value_int64(env, e, &in[i].shape[d]) == napi_ok && in[i].shape[d] >= 0 &&
                 in[i].shape[d] <= ((int64_t)1 << 31);
            count *= ok ? in[i].shape[d] : 0;
            ok = ok && count <= ((int64_t)1 << 40); /* no overflow; no typed array is longer */
        }
        napi_typedarray_type tt;
        size_t len;
        napi_value ab;
        size_t off;
        ok = ok && napi_get_named_property(env, o, "data", &v) == napi_ok &&
             napi_get_typedarray_info(env, v, &tt, &len, &data[i], &ab, &off) == napi_ok &&
             tt == (dt == SI_FLOAT32 ? napi_float32_array
                    : dt == SI_INT32 ? napi_int32_array : napi_uint8_array) &&
             (int64_t)len == count;
        if (!ok) {
            char msg[300];
            snprintf(msg, sizeof msg, "input '%s': data is not a %s array of its shape's size",
                     names[i] ? names[i] : "?", si_dtype_name((si_dtype)dt));
            throw_code(env, "SI_INPUT", msg);
            break;
        }
        bytes[i] = len * si_dtype_size((si_dtype)dt);
        total += strlen(names[i]) + 1 + bytes[i] + 8;
    }
    char *b = ok && copy ? malloc(total + 1) : NULL;
    if (ok && copy && !b) {
        throw_code(env, "SI_NOMEM", "out of memory");
        ok = 0;
    }
    size_t at = 0;
    for (uint32_t i = 0; ok && i < n; i++) {
        if (copy) {
            at = (at + 7) & ~(size_t)7; /* floats aligned */
            memcpy(b + at, data[i], bytes[i]);
            in[i].data = b + at;
            at += bytes[i];
            size_t ln = strlen(names[i]) + 1;
            memcpy(b + at, names[i], ln);
            in[i].name = b + at;
            at += ln;
            free(names[i]);
            names[i] = NULL;
        } else {
            in[i].data = data[i];
            in[i].name = names[i]; /* the caller frees them with free_names */
        }
    }
    for (uint32_t i = 0; copy && i < n; i++)
        free(names[i]);
    if (!ok) {
        for (uint32_t i = 0; !copy && i < n; i++)
            free(names[i]);
        free(in);
        in = NULL;
        free(b);
        b = NULL;
    }
    free(data);
    free(bytes);
    free(names);
    if (!ok) {
        bool pending = false;
        napi_is_exception_pending(env, &pending);
        if (!pending)
            throw_code(env, "SI_ARG", "inputs: each must be {name, dtype, shape, data}");
        return 0;
    }
    *out = in;
    *n_out = (int)n;
    *block = b;
    return 1;
}

static void free_names(si_tensor_in *in, int n)
{
    for (int i = 0; i < n; i++)
        free((void *)in[i].name);
}

/* sel: undefined (all outputs) or an array of output indices */
static int read_selection(napi_env env, handle *h, napi_value v, int **sel, int *n_sel)
{
    napi_valuetype t;
    *sel = NULL;
    *n_sel = -1;
    if (napi_typeof(env, v, &t) != napi_ok)
        return 0;
    if (t == napi_undefined || t == napi_null)
        return 1;
    uint32_t n;
    if (napi_get_array_length(env, v, &n) != napi_ok || n > 4096)
        return throw_code(env, "SI_ARG", "outputs must be an array of indices"), 0;
    int *s = calloc((size_t)n + 1, sizeof *s);
    if (!s)
        return throw_code(env, "SI_NOMEM", "out of memory"), 0;
    for (uint32_t i = 0; i < n; i++) {
        napi_value e;
        int32_t k;
        if (napi_get_element(env, v, i, &e) != napi_ok || napi_get_value_int32(env, e, &k) != napi_ok ||
            k < 0 || k >= si_output_count(h->m)) {
            free(s);
            return throw_code(env, "SI_ARG", "no such output"), 0;
        }
        s[i] = k;
    }
    *sel = s;
    *n_sel = (int)n;
    return 1;
}

/* The outputs of the last run as [{name, dtype, shape, data}], data copied into
 * fresh typed arrays (the library's buffers are reused by the next run). */
static napi_value make_outputs(napi_env env, handle *h, const int *sel, int n_sel)
{
    int n = n_sel < 0 ? si_output_count(h->m) : n_sel;
    napi_value arr;
    CALL(env, napi_create_array_with_length(env, (size_t)n, &arr));
    for (int k = 0; k < n; k++) {
        int i = n_sel < 0 ? k : sel[k];
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        const void *data;
        si_error err = {0};
        si_result st = si_output(h->m, i, &dt, &rank, shape, &data, &err);
        if (st != SI_OK) {
            napi_throw(env, lib_error(env, st, &err, 0));
            return NULL;
        }
        napi_value o, v, sh, ab, ta;
        CALL(env, napi_create_object(env, &o));
        CALL(env, napi_create_string_utf8(env, si_output_name(h->m, i), NAPI_AUTO_LENGTH, &v));
        CALL(env, napi_set_named_property(env, o, "name", v));
        CALL(env, napi_create_string_utf8(env, si_dtype_name(dt), NAPI_AUTO_LENGTH, &v));
        CALL(env, napi_set_named_property(env, o, "dtype", v));
        CALL(env, napi_create_array_with_length(env, (size_t)rank, &sh));
        size_t count = 1;
        for (int d = 0; d < rank; d++) {
            CALL(env, napi_create_int64(env, shape[d], &v));
            CALL(env, napi_set_element(env, sh, (uint32_t)d, v));
            count *= (size_t)shape[d];
        }
        CALL(env, napi_set_named_property(env, o, "shape", sh));
        void *dst;
        size_t bytes = count * si_dtype_size(dt);
        CALL(env, napi_create_arraybuffer(env, bytes, &dst, &ab));
        if (bytes)
            memcpy(dst, data, bytes);
        CALL(env, napi_create_typedarray(env,
                                         dt == SI_FLOAT32 ? napi_float32_array
                                         : dt == SI_INT32 ? napi_int32_array : napi_uint8_array,
                                         count, ab, 0, &ta));
        CALL(env, napi_set_named_property(env, o, "data", ta));
        CALL(env, napi_set_element(env, arr, (uint32_t)k, o));
    }
    return arr;
}

static void free_job(napi_env env, run_job *j)
{
    if (j->work)
        napi_delete_async_work(env, j->work);
    if (j->keep)
        napi_delete_reference(env, j->keep);
    free(j->in);
    free(j->block);
    free(j->sel);
    free(j);
}

static void run_execute(napi_env env, void *data)
{
    (void)env;
    run_job *j = data;
    j->st = si_run(j->h->m, j->in, j->n_in, &j->err);
}

static void run_complete(napi_env env, napi_status status, void *data)
{
    run_job *j = data;
    handle *h = j->h;
    if (status == napi_ok && j->st == SI_OK) {
        napi_value out = make_outputs(env, h, j->sel, j->n_sel);
        if (out) {
            napi_resolve_deferred(env, j->deferred, out);
        } else {
            napi_value e;
            napi_get_and_clear_last_exception(env, &e);
            napi_reject_deferred(env, j->deferred, e);
        }
    } else {
        if (status != napi_ok) {
            j->st = SI_ERR_ARG;
            snprintf(j->err.message, sizeof j->err.message, "the run was cancelled");
        }
        napi_reject_deferred(env, j->deferred, lib_error(env, j->st, &j->err, 0));
    }
    h->head = j->next;
    if (!h->head)
        h->tail = NULL;
    free_job(env, j);
    if (h->head) {
        if (napi_queue_async_work(env, h->head->work) != napi_ok) {
            /* cannot happen short of teardown; fail the rest rather than hang them */
            while (h->head) {
                run_job *k = h->head;
                h->head = k->next;
                napi_reject_deferred(env, k->deferred,
                                     make_error(env, "SI_ERROR", NULL, "cannot queue the run"));
                free_job(env, k);
            }
            h->tail = NULL;
        }
    } else if (h->disposed || h->finalized) {
        close_model(h); /* dispose() came while this run was on a worker */
        if (h->finalized)
            free(h);
    }
}

/* run(handle, inputs, outputIndices, async): async gives a Promise and queues the
 * run behind the model's earlier ones; sync runs now, refused while runs are
 * queued (they would be overtaken). */
static napi_value js_run(napi_env env, napi_callback_info info)
{
    size_t argc = 4;
    napi_value argv[4];
    CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 4) {
        throw_code(env, "SI_ARG", "run(handle, inputs, outputs, async)");
        return NULL;
    }
    handle *h = live_handle(env, argv[0]);
    if (!h)
        return NULL;
    bool async;
    CALL(env, napi_get_value_bool(env, argv[3], &async));
    if (!async && h->head) {
        throw_code(env, "SI_BUSY",
                   "execute() while executeAsync() runs are queued on this model; await them "
                   "first or use executeAsync()");
        return NULL;
    }
    int *sel, n_sel;
    if (!read_selection(env, h, argv[2], &sel, &n_sel))
        return NULL;
    si_tensor_in *in;
    int n_in;
    char *block;
    if (!read_inputs(env, argv[1], async, &in, &n_in, &block)) {
        free(sel);
        return NULL;
    }
    if (!async) {
        si_error err = {0};
        si_result st = si_run(h->m, in, n_in, &err);
        free_names(in, n_in);
        free(in);
        napi_value out = NULL;
        if (st == SI_OK)
            out = make_outputs(env, h, sel, n_sel);
        else
            napi_throw(env, lib_error(env, st, &err, 0));
        free(sel);
        return out;
    }
    run_job *j = calloc(1, sizeof *j);
    napi_value promise, name;
    if (!j) {
        free(in);
        free(block);
        free(sel);
        throw_code(env, "SI_NOMEM", "out of memory");
        return NULL;
    }
    *j = (run_job){.h = h, .n_in = n_in, .in = in, .block = block, .n_sel = n_sel, .sel = sel};
    if (napi_create_reference(env, argv[0], 1, &j->keep) != napi_ok ||
        napi_create_string_utf8(env, "streaminfer.run", NAPI_AUTO_LENGTH, &name) != napi_ok ||
        napi_create_async_work(env, NULL, name, run_execute, run_complete, j, &j->work) !=
            napi_ok ||
        napi_create_promise(env, &j->deferred, &promise) != napi_ok) {
        free_job(env, j);
        throw_code(env, "SI_ERROR", "run: cannot queue the work");
        return NULL;
    }
    if (!h->head) {
        if (napi_queue_async_work(env, j->work) != napi_ok) {
            napi_reject_deferred(env, j->deferred,
                                 make_error(env, "SI_ERROR", NULL, "cannot queue the run"));
            free_job(env, j);
            return promise;
        }
        h->head = h->tail = j;
    } else {
        h->tail->next = j;
        h->tail = j;
    }
    return promise;
}

/* dispose(handle): runs not yet started are rejected; the one on a worker
 * finishes, then the model closes. Disposing twice is harmless. */
static napi_value js_dispose(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    handle *h = get_handle(env, argv[0]);
    if (!h)
        return NULL;
    h->disposed = 1;
    if (!h->head) {
        close_model(h);
        return undefined(env);
    }
    while (h->head->next) {
        run_job *k = h->head->next;
        h->head->next = k->next;
        napi_reject_deferred(env, k->deferred,
                             make_error(env, "SI_DISPOSED", NULL,
                                        "the model was disposed before this run started"));
        free_job(env, k);
    }
    h->tail = h->head;
    return undefined(env);
}

static napi_value set_num(napi_env env, napi_value o, const char *key, double v)
{
    napi_value n;
    CALL(env, napi_create_double(env, v, &n));
    CALL(env, napi_set_named_property(env, o, key, n));
    return o;
}

/* stats(handle): si_get_stats with the names of the CLI's --stats */
static napi_value js_stats(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], o;
    CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    handle *h = live_handle(env, argv[0]);
    if (!h)
        return NULL;
    si_stats st;
    si_get_stats(h->m, &st);
    CALL(env, napi_create_object(env, &o));
#define NUM(f)                                                                                   \
    if (!set_num(env, o, #f, (double)st.f))                                                      \
        return NULL;
    NUM(budget_bytes) NUM(peak_vram_bytes) NUM(lower_bound_bytes) NUM(untiled_bound_bytes)
    NUM(tile_limit_bytes) NUM(tile_limit_max_bytes) NUM(steps_split) NUM(weights_bytes) NUM(host_pool_bytes) NUM(host_pool_mapped)
    NUM(driver_reserve_bytes) NUM(bytes_uploaded) NUM(bytes_downloaded) NUM(bytes_spilled)
    NUM(bytes_reloaded) NUM(evictions) NUM(segments) NUM(gpu_steps) NUM(gpu_host_nodes) NUM(dynamic_part) NUM(open_ms) NUM(run_ms)
    NUM(upload_ms) NUM(compute_ms) NUM(issue_ms) NUM(stall_ms) NUM(host_ms) NUM(open_read_ms) NUM(open_gpu_ms)
    NUM(open_plan_ms) NUM(open_tile_ms) NUM(open_compile_ms) NUM(run_plan_ms) NUM(run_tile_ms)
    NUM(run_compile_ms) NUM(programs_from_cache) NUM(programs_compiled) NUM(derived_bytes)
    NUM(f16_tensors) NUM(f32_tensors) NUM(f16_overflows)
#undef NUM
    return o;
}

static napi_value js_live_handles(napi_env env, napi_callback_info info)
{
    (void)info;
    napi_value v;
    CALL(env, napi_create_int32(env, atomic_load(&live_handles), &v));
    return v;
}

static napi_value js_version(napi_env env, napi_callback_info info)
{
    (void)info;
    napi_value v;
    CALL(env, napi_create_string_utf8(env, si_version(), NAPI_AUTO_LENGTH, &v));
    return v;
}

/* parseSize("256M") -> bytes, or null */
static napi_value js_parse_size(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], v;
    CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    char *s = argc ? get_string(env, argv[0]) : NULL;
    uint64_t bytes;
    int bad = !s || si_parse_size(s, &bytes) != 0;
    free(s);
    if (bad)
        CALL(env, napi_get_null(env, &v));
    else
        CALL(env, napi_create_double(env, (double)bytes, &v));
    return v;
}

static napi_value init(napi_env env, napi_value exports)
{
    static const struct {
        const char *name;
        napi_callback fn;
    } fns[] = {{"open", js_open},       {"info", js_info},
               {"run", js_run},         {"dispose", js_dispose},
               {"stats", js_stats},     {"liveHandles", js_live_handles},
               {"version", js_version}, {"parseSize", js_parse_size}};
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
        napi_value f;
        CALL(env, napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f));
        CALL(env, napi_set_named_property(env, exports, fns[i].name, f));
    }
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
