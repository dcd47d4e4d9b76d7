/* `streaminfer info`: what a model is (inputs, outputs, ops, weights, control
 * flow) and what it needs (lower bound, smallest budget, the GPU's limits),
 * gathered once into a cJSON document, printed as JSON or as text. */
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "runtime.h"

static cJSON *shape_json(int rank, const int64_t *d)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < rank; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)d[i])); /* -1: free */
    return a;
}

static void add_count(cJSON *obj, const char *key, double by)
{
    cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (c)
        cJSON_SetNumberValue(c, c->valuedouble + by);
    else
        cJSON_AddNumberToObject(obj, key, by);
}

static int is_control_flow(const char *op)
{
    static const char *ops[] = {"Enter", "Exit", "LoopCond", "NextIteration", "Switch", "Merge",
                                "While", "StatelessWhile", "If", "StatelessIf"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(op, ops[i]))
            return 1;
    return !strncmp(op, "TensorList", 10) || !strncmp(op, "TensorArray", 11);
}

static const char *stored_dtype(const io_weight *w)
{
    switch (w->quant) {
    case IO_Q_UINT8: return "uint8";
    case IO_Q_UINT16: return "uint16";
    case IO_Q_FLOAT16: return "float16";
    case IO_Q_NONE: break;
    }
    if (w->dtype == IO_DT_STRING)
        return "string";
    return w->dtype < IO_DT_OTHER ? si_dtype_name((si_dtype)w->dtype) : "other";
}

/* From model.json: the op histogram, the weights, the control flow. */
static void add_graph(cJSON *r, const io_model *io)
{
    cJSON *ops = cJSON_AddObjectToObject(r, "ops"), *cf = cJSON_CreateObject();
    for (int i = 0; i < io->n_nodes; i++) {
        add_count(ops, io->nodes[i].op, 1);
        if (is_control_flow(io->nodes[i].op))
            add_count(cf, io->nodes[i].op, 1);
    }
    cJSON_AddNumberToObject(r, "nodes", io->n_nodes);
    cJSON *w = cJSON_AddObjectToObject(r, "weights");
    cJSON_AddNumberToObject(w, "count", io->n_weights);
    cJSON_AddNumberToObject(w, "bytes", (double)io->weights_bytes);
    int files = 0;
    for (int g = 0; g < io->n_groups; g++)
        files += io->groups[g].n_paths;
    cJSON_AddNumberToObject(w, "shard_files", files);
    cJSON *count = cJSON_AddObjectToObject(w, "stored_dtypes"), *bytes = cJSON_AddObjectToObject(w, "stored_bytes");
    for (int i = 0; i < io->n_weights; i++) {
        add_count(count, stored_dtype(&io->weights[i]), 1);
        add_count(bytes, stored_dtype(&io->weights[i]), (double)io->weights[i].nbytes);
    }
    cJSON *c = cJSON_AddObjectToObject(r, "control_flow");
    cJSON_AddBoolToObject(c, "loops", cJSON_HasObjectItem(cf, "LoopCond") || cJSON_HasObjectItem(cf, "While") ||
                                          cJSON_HasObjectItem(cf, "StatelessWhile"));
    cJSON_AddBoolToObject(c, "switch", cJSON_HasObjectItem(cf, "Switch") || cJSON_HasObjectItem(cf, "If") ||
                                           cJSON_HasObjectItem(cf, "StatelessIf"));
    cJSON_AddBoolToObject(c, "functions", io->has_functions);
    cJSON_AddItemToObject(c, "ops", cf);
}

/* Zeros of the declared shapes, a free batch as 1; 0 when another size is free. */
static int default_inputs(si_model *m, si_tensor_in *in, void **data)
{
    int n = si_input_count(m);
    for (int i = 0; i < n; i++) {
        in[i] = (si_tensor_in){0};
        si_input_info(m, i, &in[i].name, &in[i].dtype, &in[i].rank, in[i].shape);
        int64_t count = 1;
        for (int d = 0; d < in[i].rank; d++) {
            if (in[i].shape[d] < 0 && d > 0)
                return 0;
            in[i].shape[d] = in[i].shape[d] < 0 ? 1 : in[i].shape[d];
            count *= in[i].shape[d];
        }
        in[i].data = data[i] = calloc((size_t)(count ? count : 1), si_dtype_size(in[i].dtype));
        if (!data[i])
            return 0;
    }
    return 1;
}

static void add_io(cJSON *r, si_model *m)
{
    cJSON *ins = cJSON_AddArrayToObject(r, "inputs"), *outs = cJSON_AddArrayToObject(r, "outputs");
    for (int i = 0; i < si_input_count(m); i++) {
        const char *name;
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        si_input_info(m, i, &name, &dt, &rank, shape);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", name);
        cJSON_AddItemToObject(e, "shape", shape_json(rank, shape));
        cJSON_AddStringToObject(e, "dtype", si_dtype_name(dt));
        cJSON_AddItemToArray(ins, e);
    }
    const core_program *p = si_model_program(m);
    for (int o = 0; o < si_output_count(m); o++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", si_output_name(m, o));
        int t = p && o < p->n_outputs ? p->outputs[o] : -1; /* -1: made by the host interpreter */
        if (t >= 0) {
            cJSON_AddItemToObject(e, "shape", shape_json(p->tensors[t].shape.rank, p->tensors[t].shape.d));
            cJSON_AddStringToObject(e, "dtype", si_dtype_name(p->tensors[t].dtype));
        } else {
            cJSON_AddNullToObject(e, "shape"); /* known only once it runs */
            cJSON_AddNullToObject(e, "dtype");
        }
        cJSON_AddItemToArray(outs, e);
    }
}

static void add_limits(cJSON *r, si_model *m)
{
    si_stats st;
    si_get_stats(m, &st);
    cJSON *g = cJSON_AddObjectToObject(r, "gpu");
    cJSON_AddStringToObject(g, "renderer", si_model_renderer(m));
    cJSON_AddNumberToObject(g, "max_buffer_bytes", (double)st.max_buffer_bytes);
    cJSON_AddNumberToObject(g, "storage_block_bytes", (double)st.storage_block_bytes);
    cJSON_AddNumberToObject(g, "max_dispatch_elements", (double)st.max_dispatch_elements);
    cJSON_AddNumberToObject(g, "max_index_elements", (double)st.max_index_elements);
    cJSON_AddNumberToObject(r, "lower_bound_bytes", (double)st.lower_bound_bytes);
}

/* N of the "X MiB (N bytes)" that follows phrase in a message (base_size's
 * form); 0 where there is none. */
static unsigned long long bytes_after(const char *msg, const char *phrase)
{
    const char *s = strstr(msg, phrase);
    unsigned long long n = 0;
    if (!s || !(s = strchr(s + strlen(phrase), '(')) || sscanf(s, "(%llu bytes)", &n) != 1)
        return 0;
    return n;
}

/* The smallest budget: what a budget of one byte's refusal names, plus the
 * driver's share it says to add. 0 where it names none. */
static uint64_t smallest_budget(const char *path, const si_options *opt, const si_tensor_in *in, int n)
{
    si_options o = *opt;
    o.defer_compile = 1; /* nothing runs */
    o.vram_budget = 1;
    o.progress = NULL;
    si_model *m = NULL;
    si_error err = {0};
    unsigned long long need = 0, reserve = 0;
    /* a model of static shapes is planned by si_open already */
    si_result st = si_open(path, &o, &m, &err);
    if (st == SI_OK)
        st = si_plan(m, in, n, &err);
    if (st == SI_ERR_BUDGET) {
        need = bytes_after(err.message, "the smallest budget that could work is ");
        reserve = bytes_after(err.message, "on this GPU ");
        if (need)
            need += reserve;
    }
    si_close(m);
    return need;
}

static const char *size_text(double b, char *buf) { return base_size((uint64_t)b, buf); }

static double num(const cJSON *o, const char *key)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static void print_tensor(FILE *f, const char *what, const cJSON *e)
{
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "dtype"));
    fprintf(f, "%-9s %s %s ", what, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name")),
            dt ? dt : "?");
    if (!cJSON_IsArray(sh)) {
        fprintf(f, "(shape known once it runs)\n");
        return;
    }
    fputc('[', f);
    for (const cJSON *d = sh->child; d; d = d->next)
        fprintf(f, "%s%.0f", d == sh->child ? "" : ",", d->valuedouble);
    fprintf(f, "]\n");
}

/* "name count, name count, ..." */
static void print_counts(FILE *f, const cJSON *o)
{
    for (const cJSON *c = o->child; c; c = c->next)
        fprintf(f, "%s%s %.0f", c == o->child ? "" : ", ", c->string, c->valuedouble);
}

static void print_text(FILE *f, const cJSON *r)
{
    char b1[64], b2[64], b3[64];
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(r, "ops"), *w = cJSON_GetObjectItemCaseSensitive(r, "weights");
    const cJSON *cf = cJSON_GetObjectItemCaseSensitive(r, "control_flow"), *g = cJSON_GetObjectItemCaseSensitive(r, "gpu");
    const cJSON *e;
    fprintf(f, "model     %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "model")));
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r, "inputs")) print_tensor(f, "input", e);
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r, "outputs")) print_tensor(f, "output", e);
    fprintf(f, "ops       %.0f nodes, %d ops: ", num(r, "nodes"), cJSON_GetArraySize(ops));
    print_counts(f, ops);
    fprintf(f, "\nweights   %.0f tensors, %s in %.0f shard files; stored as ", num(w, "count"),
            size_text(num(w, "bytes"), b1), num(w, "shard_files"));
    print_counts(f, cJSON_GetObjectItemCaseSensitive(w, "stored_dtypes"));
    const cJSON *cfo = cJSON_GetObjectItemCaseSensitive(cf, "ops");
    fprintf(f, "\ncontrol   loops %s, switch %s, functions %s%s", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cf, "loops")) ? "yes" : "no",
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cf, "switch")) ? "yes" : "no",
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cf, "functions")) ? "yes" : "no",
            cfo->child ? ": " : "");
    print_counts(f, cfo);
    fputc('\n', f);
    if (!g) {
        fprintf(f, "plan      none: %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "not_planned")));
        return;
    }
    double small = num(r, "smallest_budget_bytes");
    fprintf(f, "memory    lower bound %s, smallest budget %s\n", size_text(num(r, "lower_bound_bytes"), b1),
            small > 0 ? size_text(small, b2) : "not named");
    fprintf(f, "gpu       %s: one buffer at most %s, storage block %s, %.0f elements a dispatch, "
               "%.0f by 32-bit indices\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(g, "renderer")),
            size_text(num(g, "max_buffer_bytes"), b1),
            num(g, "storage_block_bytes") > 0 ? size_text(num(g, "storage_block_bytes"), b3) : "none",
            num(g, "max_dispatch_elements"), num(g, "max_index_elements"));
}

static si_result gather(const char *path, const si_options *opt, const si_tensor_in *inputs, int n_inputs,
                        cJSON *r, si_error *err)
{
    si_options o = opt ? *opt : (si_options){0};
    o.vram_budget = 0;
    o.defer_compile = 1; /* nothing runs */
    io_model *io = NULL;
    si_model *m = NULL;
    si_result st = io_model_load(path, &io, err);
    if (st == SI_OK)
        st = si_open(path, &o, &m, err);
    if (st != SI_OK) {
        io_model_free(io);
        return st;
    }
    int n = inputs ? n_inputs : si_input_count(m);
    si_tensor_in *def = calloc((size_t)n + 1, sizeof *def);
    void **data = calloc((size_t)n + 1, sizeof *data);
    const si_tensor_in *in = inputs;
    if (!def || !data)
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    else if (!in && default_inputs(m, def, data))
        in = def;
    if (st == SI_OK && in)
        st = si_plan(m, in, n, err);
    if (st == SI_OK) {
        cJSON_AddStringToObject(r, "model", path);
        add_io(r, m);
        add_graph(r, io);
        if (in) {
            add_limits(r, m);
            cJSON_AddNumberToObject(r, "smallest_budget_bytes", (double)smallest_budget(path, &o, in, n));
        } else {
            cJSON_AddStringToObject(r, "not_planned", "input sizes other than the batch are free: give --input");
        }
    }
    for (int i = 0; data && i < n; i++)
        free(data[i]);
    free(data);
    free(def);
    si_close(m);
    io_model_free(io);
    return st;
}

si_result si_print_info(const char *path, const si_options *opt, const si_tensor_in *inputs, int n_inputs,
                        FILE *f, int json, si_error *err)
{
    if (!path || !f)
        return base_fail(err, SI_ERR_ARG, "si_print_info: no model or no file");
    cJSON *r = cJSON_CreateObject();
    if (!r)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    si_result st = gather(path, opt, inputs, n_inputs, r, err);
    char *s = st == SI_OK && json ? cJSON_Print(r) : NULL;
    if (st == SI_OK && json && !s)
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    else if (st == SI_OK && json)
        fprintf(f, "%s\n", s);
    else if (st == SI_OK)
        print_text(f, r);
    free(s);
    cJSON_Delete(r);
    if (st == SI_OK && fflush(f) != 0)
        st = base_fail(err, SI_ERR_IO, "cannot write the model's description");
    return st;
}
