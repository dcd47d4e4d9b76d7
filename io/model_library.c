/* modelTopology.library.function → io_model.functions: each function's
 * body an io_model of its own (Placeholders for its input args, then its
 * node_def; signature outputs its ret refs), as tfjs-converter's
 * operation_mapper.js mapFunction reads it. Every error names the file and
 * the function. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_json_internal.h"

/* "node:output_name:k" (a function body's form) → "node:k", as tfjs reads it
 * when the op names no outputs (operation_mapper.js mapFunction). */
static si_result io_fn_ref(const io_ctx *c, char **ref)
{
    char *a = strchr(*ref, ':'), *b = strrchr(*ref, ':');
    if (!a || a == b)
        return SI_OK;
    memmove(a + 1, b + 1, strlen(b + 1) + 1);
    (void)c;
    return SI_OK;
}

static si_result io_fn_bad(const io_ctx *c, const char *fn, const char *why)
{
    return base_fail(c->err, SI_ERR_FORMAT, "%s: function '%s': %s", c->file, fn ? fn : "?", why);
}

static si_result io_json_function(io_ctx *c, const io_model *root, const cJSON *v, io_function *f)
{
    const cJSON *sig = cJSON_IsObject(v) ? io_get(v, "signature", NULL) : NULL;
    const cJSON *name = cJSON_IsObject(sig) ? io_get(sig, "name", NULL) : NULL;
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return base_fail(c->err, SI_ERR_FORMAT, "%s: a library function has no signature name",
                         c->file);
    if (!(f->name = io_strdup(name->valuestring)))
        return io_nomem(c);
    const cJSON *ins = io_get(sig, "inputArg", "input_arg");
    const cJSON *outs = io_get(sig, "outputArg", "output_arg");
    const cJSON *nodes = io_get(v, "nodeDef", "node_def");
    const cJSON *ret = io_get(v, "ret", NULL);
    if ((ins && !cJSON_IsArray(ins)) || (outs && !cJSON_IsArray(outs)) ||
        (nodes && !cJSON_IsArray(nodes)))
        return io_fn_bad(c, f->name, "inputArg, outputArg or nodeDef is not an array");
    if (ret && !cJSON_IsObject(ret))
        return io_fn_bad(c, f->name, "ret is not an object");
    f->n_in = cJSON_GetArraySize(ins);
    f->n_out = cJSON_GetArraySize(outs);
    if (f->n_out < 1)
        return io_fn_bad(c, f->name, "it has no outputs");
    int nn = f->n_in + cJSON_GetArraySize(nodes);
    io_model *b = f->body = calloc(1, sizeof *b);
    if (!b)
        return io_nomem(c);
    b->borrowed = 1;
    b->weights = root->weights;
    b->n_weights = root->n_weights;
    b->groups = root->groups;
    b->n_groups = root->n_groups;
    size_t len = strlen(c->file) + strlen(f->name) + 16;
    b->json_path = malloc(len);
    b->dir = io_strdup(root->dir ? root->dir : ".");
    b->format = io_strdup("graph-model");
    b->nodes = calloc((size_t)nn + 1, sizeof *b->nodes);
    b->sig_input_keys = calloc((size_t)f->n_in + 1, sizeof(char *));
    b->sig_input_names = calloc((size_t)f->n_in + 1, sizeof(char *));
    b->sig_output_keys = calloc((size_t)f->n_out + 1, sizeof(char *));
    b->sig_output_names = calloc((size_t)f->n_out + 1, sizeof(char *));
    if (!b->json_path || !b->dir || !b->format || !b->nodes || !b->sig_input_keys ||
        !b->sig_input_names || !b->sig_output_keys || !b->sig_output_names)
        return io_nomem(c);
    snprintf(b->json_path, len, "%s: function '%s'", c->file, f->name);
    io_ctx fc = {b->json_path, NULL, c->err};
    si_result st;
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, ins) {
        const cJSON *an = cJSON_IsObject(e) ? io_get(e, "name", NULL) : NULL;
        const cJSON *at = cJSON_IsObject(e) ? io_get(e, "type", NULL) : NULL;
        if (!cJSON_IsString(an) || !an->valuestring[0] || strchr(an->valuestring, ':'))
            return io_fn_bad(c, f->name, "an inputArg has no name (or a name with ':')");
        cJSON *ph = cJSON_CreateObject(), *attr = cJSON_CreateObject(), *dt = cJSON_CreateObject();
        if (!ph || !attr || !dt || !cJSON_AddStringToObject(ph, "name", an->valuestring) ||
            !cJSON_AddStringToObject(ph, "op", "Placeholder") ||
            (at && !cJSON_AddItemToObject(dt, "type", cJSON_Duplicate(at, 1)))) {
            cJSON_Delete(ph);
            cJSON_Delete(attr);
            cJSON_Delete(dt);
            return io_nomem(c);
        }
        cJSON_AddItemToObject(attr, "dtype", dt);
        cJSON_AddItemToObject(ph, "attr", attr);
        b->n_nodes = i + 1;
        st = io_json_node(&fc, i, ph, &b->nodes[i]);
        cJSON_Delete(ph);
        if (st)
            return st;
        if (!(b->sig_input_keys[i] = io_strdup(an->valuestring)) ||
            !(b->sig_input_names[i] = io_strdup(an->valuestring)))
            return io_nomem(c);
        b->n_sig_inputs = i + 1;
        i++;
    }
    cJSON_ArrayForEach(e, nodes) {
        b->n_nodes = i + 1;
        if ((st = io_json_node(&fc, i - f->n_in, e, &b->nodes[i])))
            return st;
        io_node *n = &b->nodes[i];
        for (int j = 0; j < n->n_inputs; j++)
            if ((st = io_fn_ref(c, &n->inputs[j])))
                return st;
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(e, outs) {
        const cJSON *on = cJSON_IsObject(e) ? io_get(e, "name", NULL) : NULL;
        const cJSON *r = cJSON_IsString(on) ? io_get(ret, on->valuestring, NULL) : NULL;
        if (!cJSON_IsString(on))
            return io_fn_bad(c, f->name, "an outputArg has no name");
        if (!cJSON_IsString(r))
            return io_fn_bad(c, f->name, "an outputArg has no ret entry");
        if (!(b->sig_output_keys[i] = io_strdup(on->valuestring)) ||
            !(b->sig_output_names[i] = io_strdup(r->valuestring)))
            return io_nomem(c);
        b->n_sig_outputs = i + 1;
        io_fn_ref(c, &b->sig_output_names[i]);
        i++;
    }
    return SI_OK;
}

si_result io_json_library(io_ctx *c, io_model *m, const cJSON *fns)
{
    if (!fns)
        return SI_OK;
    if (!cJSON_IsArray(fns))
        return base_fail(c->err, SI_ERR_FORMAT, "%s: library.function is not an array", c->file);
    int k = cJSON_GetArraySize(fns);
    if (!(m->functions = calloc(k ? (size_t)k : 1, sizeof *m->functions)))
        return io_nomem(c);
    const cJSON *e;
    cJSON_ArrayForEach(e, fns) {
        io_function *f = &m->functions[m->n_functions++];
        si_result st = io_json_function(c, m, e, f);
        if (st)
            return st;
        for (int i = 0; i + 1 < m->n_functions; i++)
            if (!strcmp(m->functions[i].name, f->name))
                return io_fn_bad(c, f->name, "two library functions have this name");
    }
    for (int i = 0; i < m->n_functions; i++) {
        m->functions[i].body->functions = m->functions;
        m->functions[i].body->n_functions = m->n_functions;
    }
    return SI_OK;
}

const io_function *io_model_function(const io_model *m, const char *name)
{
    for (int i = 0; name && i < m->n_functions; i++)
        if (!strcmp(m->functions[i].name, name))
            return &m->functions[i];
    return NULL;
}
