/* Tiling along output channels (core/tile.c has rows and the pass): a step
 * whose weights alone are over the limit (MatMul, convolution: the kinds
 * whose rule, core/tile_rules.c, gives their channel geometry) runs as parts
 * over slices of its output channels, with host slices of the weights, each
 * part copied into its columns of the whole output. Each output element is
 * the same dot product as untiled: bitwise the same. */
#include <stdlib.h>
#include <string.h>
#include "tile_internal.h"

/* Host value of a constant or float32 weight tensor (4 bytes an element, or
 * stored as halves), or NULL. */
static float *host_value(tiler *T, int t, si_error *err)
{
    core_program *p = T->p;
    int r = core_storage(p, t);
    const core_tensor *ct = &p->tensors[r];
    int64_t n = tile_count(p, r);
    float *v = malloc((size_t)(n ? n : 1) * CORE_ELEM);
    if (!v)
        return NULL;
    if (ct->kind == PT_CONST && ct->host) {
        memcpy(v, ct->host, (size_t)n * CORE_ELEM);
        return v;
    }
    if (ct->kind == PT_WEIGHT && T->load && ct->bytes == core_tensor_bytes(ct, n) &&
        T->load(T->load_user, ct->weight, v, err) == SI_OK)
        return v;
    free(v);
    return NULL;
}

/* A host constant holding columns [c0, c1) of v viewed as [rows, cols]. */
static int const_cols(tiler *T, int like, const float *v, int64_t rows, int64_t cols, int64_t c0,
                      int64_t c1)
{
    int t = tile_new_tensor(T, like, rows * (c1 - c0), "(%lld:%lld)", c0, c1);
    if (t < 0)
        return -1;
    core_tensor *ct = &T->p->tensors[t];
    int64_t nd = rows * (c1 - c0);
    float *d = malloc((size_t)(nd > 0 ? nd : 1) * CORE_ELEM);
    if (!d) {
        T->oom = 1;
        return -1;
    }
    for (int64_t r = 0; r < rows; r++)
        memcpy(d + r * (c1 - c0), v + r * cols + c0, (size_t)(c1 - c0) * CORE_ELEM);
    ct->kind = PT_CONST;
    ct->host = d;
    return t;
}

int tile_channels(tiler *T, const ck_step *s, const tile_rule *r, si_error *err)
{
    core_program *p = T->p;
    int64_t rows_w, cols, out_rows; /* weights as [rows_w, cols]; output as [out_rows, cols] */
    if (!r->channels || r->channels(s, &rows_w, &cols, &out_rows))
        return -1;
    uint64_t wraw = p->tensors[core_storage(p, s->in[1])].bytes, wbytes = tile_rnd(wraw);
    if ((wbytes <= T->limit / 2 && wraw <= T->max_tensor) || cols < 2)
        return -1;
    /* the rest of the working set: input, and the whole output the parts land in */
    uint64_t rest = tile_rnd(p->tensors[core_storage(p, s->in[0])].bytes) +
                    tile_rnd(p->tensors[core_storage(p, s->out)].bytes);
    /* output channels a part: its columns of the weights (stored as halves at f16) */
    const core_tensor *wt = &p->tensors[core_storage(p, s->in[1])];
    uint64_t col = (uint64_t)rows_w * (wt->half ? 2 : CORE_ELEM);
    /* Half the limit for the weights' slices; where the rest takes more, what
     * it leaves, if the weights alone are past the limit (no split along rows
     * then fits: each part would read them whole) and a column fits beside it. */
    uint64_t room = rest < T->limit / 2 ? T->limit / 2
                    : wbytes >= T->limit && rest + tile_rnd(col) <= T->limit ? T->limit - rest
                                                                              : 0;
    if (!room || p->tensors[core_storage(p, s->out)].bytes > T->max_tensor ||
        p->tensors[core_storage(p, s->in[0])].bytes > T->max_tensor)
        return -1;
    float *w = host_value(T, s->in[1], err);
    if (!w)
        return -1;
    float *bias = NULL, *alpha = NULL, *scale = NULL;
    int has_bias = s->n_in > 2 && s->in[2] >= 0, has_alpha = s->n_in > 3 && s->in[3] >= 0;
    int has_scale = s->n_in > 6 && s->in[6] >= 0; /* a fused per-channel Mul (core/fuse.c) */
    int64_t alpha_n = has_alpha ? tile_count(p, s->in[3]) : 0;
    if ((has_bias && !(bias = host_value(T, s->in[2], err))) ||
        (has_alpha && !(alpha = host_value(T, s->in[3], err))) ||
        (has_scale && !(scale = host_value(T, s->in[6], err)))) {
        free(w);
        free(bias);
        free(alpha);
        free(scale);
        return -1;
    }
    uint64_t per_max = room < T->max_tensor ? room : T->max_tensor;
    int64_t per = (int64_t)(per_max / (col ? col : 1));
    if (per < 1)
        per = 1;
    tile_materialize(T, core_storage(p, s->in[0]));
    int out_root = core_storage(p, s->out);
    for (int64_t c0 = 0; c0 < cols && !T->oom; c0 += per) {
        int64_t c1 = c0 + per < cols ? c0 + per : cols;
        ck_step ts = *s;
        ts.in[1] = const_cols(T, s->in[1], w, rows_w, cols, c0, c1);
        if (has_bias)
            ts.in[2] = const_cols(T, s->in[2], bias, 1, cols, c0, c1);
        if (has_alpha && alpha_n > 1)
            ts.in[3] = const_cols(T, s->in[3], alpha, 1, cols, c0, c1);
        if (has_scale)
            ts.in[6] = const_cols(T, s->in[6], scale, 1, cols, c0, c1);
        r->set_channels(&ts, (int32_t)(c1 - c0));
        ts.out = tile_new_tensor(T, out_root, out_rows * (c1 - c0), "(%lld:%lld)", c0, c1);
        if (ts.out < 0)
            break;
        tile_emit(T, &ts);
        /* into columns [c0, c1) of the whole output */
        ck_step cp = {.kind = CK_COPY, .n_in = 1, .out = s->out, .accumulate = c0 > 0};
        cp.in[0] = ts.out;
        cp.u.copy.rank = 2;
        cp.u.copy.dim[0] = (int32_t)out_rows;
        cp.u.copy.dim[1] = (int32_t)(c1 - c0);
        cp.u.copy.in_stride[0] = (int32_t)(c1 - c0);
        cp.u.copy.in_stride[1] = 1;
        cp.u.copy.out_stride[0] = (int32_t)cols;
        cp.u.copy.out_stride[1] = 1;
        cp.u.copy.out_offset = (int32_t)c0;
        tile_emit(T, &cp);
    }
    free(w);
    free(bias);
    free(alpha);
    free(scale);
    return 0;
}

