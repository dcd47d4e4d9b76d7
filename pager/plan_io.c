/* A plan as bytes and back (runtime/plancache.c keeps them in files). The
 * bytes are read as untrusted: every count and index is checked against the
 * problem before anything is indexed with it, and the plan read must pass
 * pg_plan_check, so a plan that was cut short, edited or made for another
 * problem is refused, never used. Integers are written in the machine's own
 * byte order (a cache is for the machine that wrote it). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "../base/base.h"
#include "pager_internal.h"

#define PLAN_FIELDS 14 /* the uint64 scalars below, in this order */

static void scalars(const pg_plan *p, uint64_t *v)
{
    uint64_t s[PLAN_FIELDS] = {p->budget, p->arena_bytes, p->lower_bound, (uint64_t)(int64_t)p->lower_bound_step,
                               p->resident_bytes, p->capacity, p->align, p->bytes_uploaded, p->bytes_spilled,
                               p->bytes_reloaded, p->bytes_downloaded, p->evictions, p->segments,
                               ((uint64_t)(uint32_t)p->n_prologue << 32) | (uint32_t)p->n_actions};
    memcpy(v, s, sizeof s);
}

enum { ACTION_BYTES = 1 + 4 + 4 + 8 };

static void put_action(uint8_t *q, const pg_action *a)
{
    int32_t buf = a->buf, step = a->step;
    q[0] = (uint8_t)a->kind;
    memcpy(q + 1, &buf, 4);
    memcpy(q + 5, &step, 4);
    memcpy(q + 9, &a->offset, 8);
}

si_result pg_plan_write(const pg_plan *p, uint8_t **out, size_t *len, si_error *err)
{
    size_t n = PLAN_FIELDS * 8 + ((size_t)p->n_prologue + (size_t)p->n_actions) * ACTION_BYTES;
    uint8_t *b = malloc(n ? n : 1);
    if (!b)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    uint64_t v[PLAN_FIELDS];
    scalars(p, v);
    memcpy(b, v, sizeof v);
    uint8_t *q = b + sizeof v;
    for (int i = 0; i < p->n_prologue; i++, q += ACTION_BYTES)
        put_action(q, &p->prologue[i]);
    for (int i = 0; i < p->n_actions; i++, q += ACTION_BYTES)
        put_action(q, &p->actions[i]);
    *out = b;
    *len = n;
    return SI_OK;
}

/* One action, checked against pb: its kind known, its buffer and step in range. */
static int get_action(const pg_problem *pb, const uint8_t *q, pg_action *a)
{
    int32_t buf, step;
    memcpy(&buf, q + 1, 4);
    memcpy(&step, q + 5, 4);
    memcpy(&a->offset, q + 9, 8);
    a->kind = (pa_kind)q[0];
    a->buf = buf;
    a->step = step;
    if (q[0] > PA_FREE || step < -1 || step > pb->n_steps)
        return -1;
    if (buf < -1 || buf >= pb->n_buffers) /* a run's is not used, but read where it is not -1 */
        return -1;
    if (a->kind == PA_RUN) /* a step of the problem, not the prologue's -1 */
        return step >= 0 && step < pb->n_steps ? 0 : -1;
    return buf >= 0 ? 0 : -1;
}

si_result pg_plan_read(const pg_problem *pb, const uint8_t *b, size_t len, pg_plan **out, si_error *err)
{
    *out = NULL;
    uint64_t v[PLAN_FIELDS];
    if (len < sizeof v)
        return base_fail(err, SI_ERR_FORMAT, "plan: %zu bytes, shorter than its header", len);
    memcpy(v, b, sizeof v);
    uint64_t n_pro = v[13] >> 32, n_act = v[13] & 0xffffffffu;
    if (n_pro > INT32_MAX || n_act > INT32_MAX ||
        len != sizeof v + (n_pro + n_act) * (uint64_t)ACTION_BYTES)
        return base_fail(err, SI_ERR_FORMAT, "plan: %zu bytes do not hold its %llu + %llu actions", len,
                         (unsigned long long)n_pro, (unsigned long long)n_act);
    uint64_t align = v[6];
    if (!align || (align & (align - 1)) || align > (1u << 20))
        return base_fail(err, SI_ERR_FORMAT, "plan: alignment %llu is not a power of two",
                         (unsigned long long)align);
    pg_plan *p = calloc(1, sizeof *p);
    if (!p)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    p->budget = v[0];
    p->arena_bytes = v[1];
    p->lower_bound = v[2];
    p->lower_bound_step = (int)(int64_t)v[3];
    p->resident_bytes = v[4];
    p->capacity = v[5];
    p->align = (uint32_t)align;
    p->bytes_uploaded = v[7];
    p->bytes_spilled = v[8];
    p->bytes_reloaded = v[9];
    p->bytes_downloaded = v[10];
    p->evictions = v[11];
    p->segments = v[12];
    p->n_prologue = (int)n_pro;
    p->n_actions = (int)n_act;
    p->prologue = malloc((n_pro + 1) * sizeof *p->prologue);
    p->actions = malloc((n_act + 1) * sizeof *p->actions);
    if (!p->prologue || !p->actions) {
        pg_plan_free(p);
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    const uint8_t *q = b + sizeof v;
    for (uint64_t i = 0; i < n_pro + n_act; i++, q += ACTION_BYTES) {
        pg_action *a = i < n_pro ? &p->prologue[i] : &p->actions[i - n_pro];
        if (get_action(pb, q, a)) {
            pg_plan_free(p);
            return base_fail(err, SI_ERR_FORMAT, "plan: action %llu names no buffer or step of this problem",
                             (unsigned long long)i);
        }
    }
    for (int i = 0; i < p->n_prologue + p->n_actions; i++) { /* placed inside the arena, no wrap */
        const pg_action *a = i < p->n_prologue ? &p->prologue[i] : &p->actions[i - p->n_prologue];
        uint64_t sz = a->kind == PA_ALLOC ? pg_size(p, pb->buffers[a->buf].bytes) : 0;
        if (a->kind == PA_ALLOC && (a->offset > p->arena_bytes || sz > p->arena_bytes - a->offset)) {
            pg_plan_free(p);
            return base_fail(err, SI_ERR_FORMAT, "plan: action %d places a buffer outside the arena", i);
        }
    }
    char msg[256];
    if (p->lower_bound_step < -1 || p->lower_bound_step >= pb->n_steps ||
        pg_plan_check(pb, p, msg, sizeof msg)) {
        if (p->lower_bound_step < -1 || p->lower_bound_step >= pb->n_steps)
            snprintf(msg, sizeof msg, "lower-bound step %d out of range", p->lower_bound_step);
        pg_plan_free(p);
        return base_fail(err, SI_ERR_FORMAT, "plan: not a valid plan of this problem: %s", msg);
    }
    *out = p;
    return SI_OK;
}
