/* One binding's program and what it holds: the pager's problem made from the
 * program, the host pool of the plan's homes, and dropping all of it when the
 * input shapes change. */
#include <stdlib.h>
#include <string.h>
#include "session_internal.h"

void rt_forget_in_place(si_model *m)
{
    free(m->in_place);
    free(m->in_place_buf);
    m->in_place = NULL;
    m->in_place_buf = NULL;
}

void rt_drop_program(si_model *m)
{
    rt_forget_in_place(m);
    /* later stages were built for this program's binding */
    for (int i = 0; i < m->n_stages; i++)
        rt_stage_free(m->stages[i]);
    free(m->stages);
    m->stages = NULL;
    m->n_stages = 0;
    for (int i = 0; i < m->n_declined; i++)
        free(m->declined[i]);
    free(m->declined);
    m->declined = NULL;
    m->n_declined = 0;
    m->be->arena_free(m);
    rt_host_close(m);
    m->be->pool_free(m);
    m->home = NULL;
    m->home_buf = 0;
    m->home_bytes = 0;
    free(m->home_off);
    m->home_off = NULL;
    free(m->node_limit);
    m->node_limit = NULL;
    m->weights_read = 0;
    free(m->off);
    m->off = NULL;
    pg_plan_free(m->plan);
    m->plan = NULL;
    free(m->pb.buffers);
    free(m->pb.step_start);
    free(m->pb.step_bufs);
    free((void *)m->pb.step_us);
    memset(&m->pb, 0, sizeof m->pb);
    free(m->buf_of);
    m->buf_of = NULL;
    core_program_free(m->prog);
    m->prog = NULL;
    m->resident = 0;
}

/* Floating-point operations of a step that multiplies and adds (a multiply
 * and an add each), for the trace's achieved rate and the steps' estimated
 * times; 0 for other kinds. */
double rt_step_flops(const ck_step *s)
{
    switch (s->kind) {
    case CK_CONV2D: {
        const ck_conv_p *c = &s->u.conv;
        return 2.0 * c->n * c->out_h * c->out_w * c->out_c * c->k_h * c->k_w * c->in_c;
    }
    case CK_DWCONV2D: {
        const ck_conv_p *c = &s->u.conv;
        return 2.0 * c->n * c->out_h * c->out_w * c->out_c * c->k_h * c->k_w;
    }
    case CK_MATMUL: {
        const ck_matmul_p *mm = &s->u.matmul;
        return 2.0 * mm->batch * mm->m * mm->n * mm->k;
    }
    default:
        return 0;
    }
}

/* Each step's GPU time as the pager's prefetch estimates it (pg_problem.step_us):
 * a dispatch's fixed cost, its multiply-adds at 4 TFLOP/s and the bytes it
 * binds at 1 TB/s, about what streaminfer's kernels reach on the H100
 * (bench/results/speed-h200.md); a load, 8 us and 40 GB/s (bench/overlap_steps.c,
 * bench/results/stream-h200.md, session 27). Only the order of magnitude
 * matters: it decides which step a load goes beside. */
static si_result estimate_steps(si_model *m, si_error *err)
{
    const core_program *p = m->prog;
    pg_problem *pb = &m->pb;
    double *us = malloc(((size_t)p->n_steps + 1) * sizeof *us);
    if (!us)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int s = 0; s < p->n_steps; s++) {
        double bytes = 0;
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++)
            bytes += (double)pb->buffers[pb->step_bufs[k]].bytes;
        us[s] = 3.0 + rt_step_flops(&p->steps[s]) / 4e6 + bytes / 1e6;
    }
    pb->step_us = us;
    pb->load_us = 8.0;
    pb->load_bytes_us = 40e3;
    return SI_OK;
}

/* The pager's view of the program: one buffer per storage root that a step
 * touches or an output needs from the GPU. */
si_result rt_make_problem(si_model *m, si_error *err)
{
    core_program *p = m->prog;
    pg_problem *pb = &m->pb;
    m->buf_of = malloc(((size_t)p->n_tensors + 1) * sizeof *m->buf_of);
    pb->buffers = calloc((size_t)p->n_tensors + 1, sizeof *pb->buffers);
    pb->step_start = calloc((size_t)p->n_steps + 1, sizeof *pb->step_start);
    pb->step_bufs = calloc((size_t)p->n_steps * (CK_MAX_IN + 1) + 1, sizeof *pb->step_bufs);
    if (!m->buf_of || !pb->buffers || !pb->step_start || !pb->step_bufs)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int t = 0; t < p->n_tensors; t++)
        m->buf_of[t] = -1;
    int n = 0;
    pb->n_steps = p->n_steps;
    for (int s = 0; s < p->n_steps; s++) {
        const ck_step *st = &p->steps[s];
        pb->step_start[s] = n;
        for (int i = 0; i <= st->n_in; i++) {
            int t = i < st->n_in ? st->in[i] : st->out;
            if (t < 0)
                continue;
            int r = core_storage(p, t);
            if (m->buf_of[r] < 0) {
                const core_tensor *ct = &p->tensors[r];
                int b = pb->n_buffers++;
                m->buf_of[r] = b;
                pb->buffers[b].bytes = ct->bytes;
                if (ct->kind == PT_WEIGHT && ct->quant) /* stored bytes, dequantized as loaded */
                    pb->buffers[b].home_bytes = ct->stored_bytes;
                else if (ct->kind == PT_WEIGHT && ct->half) /* read as float32, rounded in its slot */
                    pb->buffers[b].src_bytes = (uint64_t)core_shape_count(&ct->shape) * 4;
                pb->buffers[b].tensor = r;
                pb->buffers[b].kind = ct->kind == PT_WEIGHT ? PG_WEIGHT
                                      : ct->kind == PT_CONST ? PG_CONST
                                      : ct->kind == PT_INPUT ? PG_INPUT : PG_ACT;
            }
            pb->step_bufs[n++] = m->buf_of[r];
        }
    }
    pb->step_start[p->n_steps] = n;
    for (int o = 0; o < p->n_outputs + p->n_boundary; o++) {
        int t = o < p->n_outputs ? p->outputs[o] : p->boundary[o - p->n_outputs];
        if (t < 0)
            continue;
        int r = core_storage(p, t);
        if (m->buf_of[r] >= 0 && p->tensors[r].kind == PT_ACT)
            pb->buffers[m->buf_of[r]].is_output = 1;
    }
    for (int i = 0; i < p->n_out_bands; i++) { /* an output too big for one buffer, in bands */
        const struct core_band *bd = &p->out_bands[i];
        int b = m->buf_of[bd->tensor], lead = -1;
        if (b < 0)
            continue;
        pb->buffers[b].is_output = 1;
        for (int k = 0; k < i && lead < 0; k++) /* the group's first band with a buffer */
            if (p->out_bands[k].root == bd->root && m->buf_of[p->out_bands[k].tensor] >= 0)
                lead = m->buf_of[p->out_bands[k].tensor];
        pb->buffers[b].band_total = (uint64_t)p->tensors[bd->root].bytes;
        pb->buffers[b].band_at = (uint64_t)bd->e0 * 4;
        pb->buffers[b].band_first = lead >= 0 ? lead : b;
    }
    /* only where the pager reads them: a tiled detector has millions of steps */
    return m->opt.plan_prefetch > 1 ? estimate_steps(m, err) : SI_OK;
}

void rt_store_halves(void *dst, const void *src, int64_t n)
{
    io_floats_to_halves(dst, src, n); /* dst may be src itself */
    if (n & 1)
        memset((uint8_t *)dst + 2 * n, 0, 2); /* the padding to 4 bytes */
}

void rt_dequant_weight(const si_model *m, int b, const void *stored, void *dst)
{
    const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
    io_weight_dequantize(&m->io->weights[t->weight], stored, dst);
    if (t->half)
        rt_store_halves(dst, dst, core_shape_count(&t->shape));
}

/* The host pool: `total` bytes for the homes rt_host_tiers laid out, then
 * its staging slots (rt_host_open makes them and the spill file). */
si_result rt_make_homes(si_model *m, uint64_t total, si_error *err)
{
    int nb = m->pb.n_buffers;
    const pg_host_plan *hp = &m->hplan;
    m->home_bytes = total + 2 * hp->weight_slot_bytes + hp->spill_slot_bytes;
    si_result st = m->be->pool_create(m, m->home_bytes, err);
    if (st != SI_OK)
        return st;
    /* constants now; weights at the first run; inputs every run */
    for (int b = 0; b < nb; b++) {
        const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
        if (m->home_off[b] == UINT64_MAX || t->kind != PT_CONST)
            continue;
        if (t->half)
            rt_store_halves(m->home + m->home_off[b], t->host, core_shape_count(&t->shape));
        else
            memcpy(m->home + m->home_off[b], t->host, t->bytes);
    }
    return rt_host_open(m, total, err);
}

static int shapes_equal(const core_shape *a, const core_shape *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!core_shape_eq(&a[i], &b[i]))
            return 0;
    return 1;
}

/* The program depends on the input shapes and on the values of inputs small
 * enough to be bound by value (CORE_VALUE_INPUT_MAX). */
int rt_same_binding(const si_model *m, const core_shape *shapes, void *const *vals)
{
    int ni = core_graph_n_inputs(m->g);
    if (!m->prog || !shapes_equal(m->bound, shapes, ni))
        return 0;
    for (int i = 0; i < ni; i++) {
        int64_t n = core_shape_count(&shapes[i]);
        if (n > CORE_VALUE_INPUT_MAX || shapes[i].rank == CORE_UNFED_RANK)
            continue;
        if (!vals || !vals[i] || !m->bound_vals[i].data ||
            memcmp(m->bound_vals[i].data, vals[i], (size_t)n * 4))
            return 0;
    }
    return 1;
}
