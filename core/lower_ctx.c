/* The lower_ctx API (ops.h): what an op's lowering sees of the program
 * builder (program.c) — its node, inputs, attrs, constant input values — and
 * how it adds tensors, constants, aliases and steps. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "program_internal.h"

const io_node *lc_node(const lower_ctx *c) { return c->n; }
int lc_n_inputs(const lower_ctx *c) { return c->n_in; }
int lc_in(const lower_ctx *c, int i) { return i >= 0 && i < c->n_in ? c->in[i] : -1; }
const core_tensor *lc_tensor(const lower_ctx *c, int t) { return &c->b->p->tensors[t]; }
core_program *lc_program(lower_ctx *c) { return c->b->p; }

si_result lc_fail(const lower_ctx *c, si_error *err, si_result st, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return base_fail(err, st, "node '%s' (%s): %s", c->n->name, c->n->op, msg);
}

static const io_attr *attr(const lower_ctx *c, const char *name) { return io_node_attr(c->n, name); }

int64_t lc_attr_int(const lower_ctx *c, const char *name, int64_t dflt)
{
    const io_attr *a = attr(c, name);
    if (!a)
        return dflt;
    if (a->kind == IO_ATTR_I)
        return a->i;
    if (a->kind == IO_ATTR_TYPE)
        return a->type;
    if (a->kind == IO_ATTR_B)
        return a->b;
    return dflt;
}

double lc_attr_float(const lower_ctx *c, const char *name, double dflt)
{
    const io_attr *a = attr(c, name);
    if (!a)
        return dflt;
    if (a->kind == IO_ATTR_F)
        return a->f;
    if (a->kind == IO_ATTR_I)
        return (double)a->i;
    return dflt;
}

int lc_attr_bool(const lower_ctx *c, const char *name, int dflt)
{
    const io_attr *a = attr(c, name);
    return a && a->kind == IO_ATTR_B ? a->b : dflt;
}

const char *lc_attr_str(const lower_ctx *c, const char *name, const char *dflt)
{
    const io_attr *a = attr(c, name);
    return a && a->kind == IO_ATTR_S && a->s ? a->s : dflt;
}

int lc_attr_ints(const lower_ctx *c, const char *name, int64_t *out, int max)
{
    const io_attr *a = attr(c, name);
    if (!a || a->kind != IO_ATTR_LIST)
        return -1;
    if (a->list_kind == IO_ATTR_EMPTY)
        return 0;
    if (a->list_kind != IO_ATTR_I)
        return -1;
    int n = a->n < max ? a->n : max;
    for (int i = 0; i < n; i++)
        out[i] = a->li[i];
    return a->n;
}

int lc_attr_strs(const lower_ctx *c, const char *name, const char **out, int max)
{
    const io_attr *a = attr(c, name);
    if (!a || a->kind != IO_ATTR_LIST)
        return -1;
    if (a->list_kind == IO_ATTR_EMPTY)
        return 0;
    if (a->list_kind != IO_ATTR_S)
        return -1;
    int n = a->n < max ? a->n : max;
    for (int i = 0; i < n; i++)
        out[i] = a->ls[i];
    return a->n;
}

const core_buf *lc_value(lower_ctx *c, int i, si_result *st, si_error *err)
{
    *st = SI_OK;
    int t = lc_in(c, i);
    if (t < 0)
        return NULL;
    builder *b = c->b;
    if (!b->is_const[core_storage(b->p, t)])
        return NULL;
    core_buf v;
    *st = pg_host_input(b, t, &v, err);
    if (*st != SI_OK)
        return NULL;
    b->vals[t] = v;
    return &b->vals[t];
}

int lc_value_ints(lower_ctx *c, int i, int64_t *out, int max, si_error *err)
{
    si_result st;
    const core_buf *v = lc_value(c, i, &st, err);
    if (st != SI_OK)
        return -2;
    if (!v)
        return -1;
    int64_t n = core_shape_count(&v->shape);
    for (int64_t k = 0; k < n && k < max; k++)
        out[k] = v->dtype == SI_FLOAT32 ? (int64_t)((const float *)v->data)[k]
                                        : (int64_t)((const int32_t *)v->data)[k];
    return (int)n;
}

int lc_new_tensor(lower_ctx *c, si_dtype dt, const core_shape *shape)
{
    char name[512];
    snprintf(name, sizeof name, "%s#%d", c->n->name, c->b->p->n_tensors);
    return pg_add_tensor(c->b, name, dt, shape, PT_ACT);
}

int lc_new_const(lower_ctx *c, si_dtype dt, const core_shape *shape, const void *data)
{
    int t = pg_add_tensor(c->b, c->n->name, dt, shape, PT_CONST);
    if (t < 0)
        return -1;
    core_tensor *ct = &c->b->p->tensors[t];
    size_t bytes = (size_t)ct->bytes;
    ct->host = malloc(bytes ? bytes : 1);
    if (!ct->host)
        return -1;
    memcpy(ct->host, data, bytes);
    return t;
}

int lc_new_alias(lower_ctx *c, int t, const core_shape *shape)
{
    core_program *p = c->b->p;
    si_dtype dt = p->tensors[t].dtype;
    int a = pg_add_tensor(c->b, c->n->name, dt, shape, p->tensors[t].kind);
    if (a < 0)
        return -1;
    p->tensors[a].alias_of = t;
    p->tensors[a].bytes = p->tensors[t].bytes;
    p->tensors[a].weight = p->tensors[t].weight;
    p->tensors[a].input = p->tensors[t].input;
    c->b->is_const[a] = c->b->is_const[core_storage(p, t)];
    return a;
}

void lc_emit(lower_ctx *c, const ck_step *s)
{
    ck_step st = *s;
    st.node = c->node;
    if (pg_add_step(c->b, &st) < 0)
        c->b->p->n_steps = -1; /* reported after the lowering returns */
}

void lc_set_output(lower_ctx *c, int k, int t)
{
    if (k >= 0 && k < c->b->g->n_outs[c->node])
        c->b->node_out[c->node][k] = t;
}

