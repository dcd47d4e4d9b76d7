/* The program's tables as lowering fills them: tensors and steps added to a
 * builder, the old blocks kept until pg_release_retired (program_internal.h). */
#include <stdlib.h>
#include <string.h>
#include "program_internal.h"

/* ---- the program's tables ---- */

/* Moves a table to a block of cap elements, keeping the old block until
 * pg_release_retired: lowerings hold pointers into it across calls that add tensors. */
static void *grow_keeping(builder *b, void *old, size_t used, size_t cap, size_t elem)
{
    if (b->n_retired == b->cap_retired) {
        int rc = b->cap_retired ? b->cap_retired * 2 : 16;
        void **r = realloc(b->retired, (size_t)rc * sizeof *r);
        if (!r)
            return NULL;
        b->retired = r;
        b->cap_retired = rc;
    }
    void *nb = malloc(cap * elem);
    if (!nb)
        return NULL;
    if (used)
        memcpy(nb, old, used * elem);
    if (old)
        b->retired[b->n_retired++] = old;
    return nb;
}

void pg_release_retired(builder *b)
{
    for (int i = 0; i < b->n_retired; i++)
        free(b->retired[i]);
    b->n_retired = 0;
}

static int grow_tensors(builder *b)
{
    core_program *p = b->p;
    if (p->n_tensors < p->cap_tensors)
        return 0;
    int cap = p->cap_tensors ? p->cap_tensors * 2 : 256;
    size_t used = (size_t)p->n_tensors;
    core_tensor *t = grow_keeping(b, p->tensors, used, (size_t)cap, sizeof *t);
    if (!t)
        return -1;
    p->tensors = t;
    uint8_t *c = realloc(b->is_const, (size_t)cap); /* read by index only, never held */
    if (!c)
        return -1;
    b->is_const = c;
    uint8_t *w = realloc(b->written, (size_t)cap);
    if (!w)
        return -1;
    b->written = w;
    core_buf *v = grow_keeping(b, b->vals, used, (size_t)cap, sizeof *v);
    if (!v)
        return -1;
    b->vals = v;
    p->cap_tensors = cap;
    return 0;
}

int pg_add_tensor(builder *b, const char *name, si_dtype dt, const core_shape *shape,
                  pt_kind kind)
{
    if (grow_tensors(b))
        return -1;
    core_program *p = b->p;
    int id = p->n_tensors++;
    core_tensor *t = &p->tensors[id];
    memset(t, 0, sizeof *t);
    t->name = name ? strdup(name) : NULL;
    t->dtype = dt;
    t->shape = *shape;
    t->bytes = (uint64_t)core_shape_count(shape) * CORE_ELEM;
    t->kind = kind;
    t->weight = -1;
    t->input = -1;
    t->alias_of = -1;
    b->is_const[id] = kind == PT_WEIGHT || kind == PT_CONST;
    b->written[id] = 0;
    memset(&b->vals[id], 0, sizeof b->vals[id]);
    return id;
}

int pg_add_step(builder *b, const ck_step *s)
{
    core_program *p = b->p;
    if (p->n_steps == p->cap_steps) {
        int cap = p->cap_steps ? p->cap_steps * 2 : 256;
        ck_step *ns = realloc(p->steps, (size_t)cap * sizeof *ns);
        if (!ns)
            return -1;
        p->steps = ns;
        uint8_t *sc = realloc(b->step_const, (size_t)cap);
        if (!sc)
            return -1;
        b->step_const = sc;
        p->cap_steps = cap;
    }
    int id = p->n_steps++;
    p->steps[id] = *s;
    int c = 1;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i] >= 0 && !b->is_const[core_storage(p, s->in[i])])
            c = 0;
    b->step_const[id] = (uint8_t)c;
    int root = core_storage(p, s->out);
    /* the first step to write a storage sets whether it is constant; a later
     * one can only take that away (a flag per storage: scanning the steps
     * before made building frcnn-irv2 quadratic) */
    b->is_const[root] = !b->written[root] ? (uint8_t)c : (uint8_t)(b->is_const[root] && c);
    b->written[root] = 1;
    return id;
}

/* ---- host evaluation of constant tensors ---- */
