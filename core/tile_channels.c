/* Tiling along output channels (core/tile.c has rows and the pass): a step
 * whose weights alone are over the limit (MatMul, convolution: the kinds
 * whose rule, core/tile_rules.c, gives their channel geometry) runs as parts
 * over slices of its output channels, with host slices of the weights, each
 * part copied into its columns of the whole output (a Conv2D's fused residual
 * gathered into each part's columns first). Each output element is the same
 * dot product as untiled: bitwise the same. */
#include <stdint.h>
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
    /* (not a quantized one: the loader dequantizes as TensorFlow.js does, its
     * load into the arena as the GPU does, and every part must read the same) */
    if (ct->kind == PT_WEIGHT && !ct->quant && T->load && ct->bytes == core_tensor_bytes(ct, n) &&
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

/* Bytes of one output channel's column of s's weights [rows_w, cols] (stored
 * as halves at f16). */
static uint64_t col_bytes(const core_program *p, const ck_step *s, int64_t rows_w)
{
    return (uint64_t)rows_w * (p->tensors[core_storage(p, s->in[1])].half ? 2 : CORE_ELEM);
}

/* Host slices of a step's weights (and of its per-channel bias, alpha and
 * scale) along output channels, made once and read by every part: by the
 * channel parts of the whole step, or of each of its row parts. */
struct tile_chslices {
    int n;      /* slices */
    int64_t per; /* output channels a slice (the last may have fewer) */
    int64_t cols;
    int (*t)[4]; /* per slice: weights, bias, alpha, scale (-1: none or whole) */
};

void tile_chslices_free(tile_chslices *cs)
{
    if (cs)
        free(cs->t);
    free(cs);
}

tile_chslices *tile_channel_slices(tiler *T, const ck_step *s, const tile_rule *r, uint64_t room,
                                   int64_t max_slices, si_error *err)
{
    core_program *p = T->p;
    int64_t rows_w, cols, out_rows; /* weights as [rows_w, cols] */
    if (!r->channels || r->channels(s, &rows_w, &cols, &out_rows) || cols < 2)
        return NULL;
    uint64_t col = col_bytes(p, s, rows_w); /* output channels a slice: its columns */
    uint64_t per_max = room < T->max_tensor ? room : T->max_tensor;
    int64_t per = (int64_t)(per_max / (col ? col : 1));
    if (per < 1)
        per = 1;
    if ((cols + per - 1) / per > max_slices)
        return NULL;
    tile_chslices *cs = calloc(1, sizeof *cs);
    float *v[4] = {NULL};
    int has[4] = {1, s->n_in > 2 && s->in[2] >= 0, s->n_in > 3 && s->in[3] >= 0,
                  s->n_in > 6 && s->in[6] >= 0}; /* in 6: a fused per-channel Mul (core/fuse.c) */
    const int at[4] = {1, 2, 3, 6};
    /* alpha (or a shift) of one value (a scalar) is read whole by every slice, and
     * so is a scale of one (after the bias: ck_conv_p.has_scale) */
    if (has[2] && tile_count(p, s->in[3]) <= 1)
        has[2] = 0;
    if (has[3] && tile_count(p, s->in[6]) <= 1)
        has[3] = 0;
    int ok = cs != NULL;
    for (int i = 0; i < 4 && ok; i++)
        ok = !has[i] || (v[i] = host_value(T, s->in[at[i]], err)) != NULL;
    if (ok) {
        cs->per = per;
        cs->cols = cols;
        cs->n = (int)((cols + per - 1) / per);
        ok = (cs->t = malloc((size_t)cs->n * sizeof *cs->t)) != NULL;
    }
    for (int k = 0; ok && k < cs->n; k++) {
        int64_t c0 = k * per, c1 = c0 + per < cols ? c0 + per : cols;
        for (int i = 0; i < 4 && ok; i++)
            ok = (cs->t[k][i] = has[i] ? const_cols(T, s->in[at[i]], v[i], i ? 1 : rows_w, cols, c0, c1)
                                       : -1) >= 0 || !has[i];
    }
    for (int i = 0; i < 4; i++)
        free(v[i]);
    if (!ok) {
        tile_chslices_free(cs);
        return NULL;
    }
    return cs;
}

/* A copy step between columns [c0, c1) of a tensor viewed as [rows, cols]
 * and a tensor of just those columns: gathered out of the wide one into
 * narrow (into_wide 0), or put from narrow into the wide one's columns
 * (into_wide 1; the first slice's copy starts it, the others add to it). */
static void cols_copy(tiler *T, int from, int to, int64_t rows, int64_t cols, int64_t c0, int64_t c1,
                      int into_wide)
{
    ck_step cp = {.kind = CK_COPY, .n_in = 1, .out = to, .accumulate = into_wide && c0 > 0};
    cp.in[0] = from;
    cp.u.copy.rank = 2;
    cp.u.copy.dim[0] = (int32_t)rows;
    cp.u.copy.dim[1] = (int32_t)(c1 - c0);
    cp.u.copy.in_stride[0] = (int32_t)(into_wide ? c1 - c0 : cols);
    cp.u.copy.out_stride[0] = (int32_t)(into_wide ? cols : c1 - c0);
    cp.u.copy.in_stride[1] = cp.u.copy.out_stride[1] = 1;
    *(into_wide ? &cp.u.copy.out_offset : &cp.u.copy.in_offset) = (int32_t)c0;
    tile_emit(T, &cp);
}

void tile_emit_channels(tiler *T, const ck_step *s, const tile_rule *r, const tile_chslices *cs)
{
    core_program *p = T->p;
    int64_t rows_w, cols, out_rows;
    r->channels(s, &rows_w, &cols, &out_rows);
    const int at[4] = {1, 2, 3, 6};
    int out_root = core_storage(p, s->out);
    for (int k = 0; k < cs->n && !T->oom; k++) {
        int64_t c0 = k * cs->per, c1 = c0 + cs->per < cols ? c0 + cs->per : cols;
        ck_step ts = *s;
        for (int i = 0; i < 4; i++)
            if (cs->t[k][i] >= 0)
                ts.in[at[i]] = cs->t[k][i];
        r->set_channels(&ts, (int32_t)(c1 - c0));
        if (s->kind == CK_CONV2D && s->u.conv.has_res) {
            /* the residual's columns [c0, c1), gathered as the part's output is laid out */
            int res = tile_new_tensor(T, core_storage(p, s->in[7]), out_rows * (c1 - c0), "(%lld:%lld)", c0, c1);
            if (res < 0)
                break;
            cols_copy(T, s->in[7], res, out_rows, cols, c0, c1, 0);
            ts.in[7] = res;
        }
        ts.out = tile_new_tensor(T, out_root, out_rows * (c1 - c0), "(%lld:%lld)", c0, c1);
        if (ts.out < 0)
            break;
        tile_emit(T, &ts);
        cols_copy(T, ts.out, s->out, out_rows, cols, c0, c1, 1); /* into the whole output's columns */
    }
}

int tile_channels(tiler *T, const ck_step *s, const tile_rule *r, si_error *err)
{
    core_program *p = T->p;
    if (!r->channels)
        return -1;
    uint64_t wraw = p->tensors[core_storage(p, s->in[1])].bytes, wbytes = tile_rnd(wraw);
    if (wbytes <= T->limit / 2 && wraw <= T->max_tensor)
        return -1;
    /* the rest of the working set: input, and the whole output the parts land in */
    uint64_t rest = tile_rnd(p->tensors[core_storage(p, s->in[0])].bytes) +
                    tile_rnd(p->tensors[core_storage(p, s->out)].bytes);
    int64_t rows_w, cols, out_rows;
    if (r->channels(s, &rows_w, &cols, &out_rows))
        return -1;
    uint64_t col = col_bytes(p, s, rows_w);
    /* Half the limit for the weights' slices; where the rest takes more, what
     * it leaves, if the weights alone are past the limit (no split along rows
     * then fits: each part would read them whole) and a column fits beside it. */
    int thin = rest >= T->limit / 2;
    uint64_t room = !thin ? T->limit / 2
                    : wbytes >= T->limit && rest + tile_rnd(col) <= T->limit ? T->limit - rest
                                                                              : 0;
    if (!room || p->tensors[core_storage(p, s->out)].bytes > T->max_tensor ||
        p->tensors[core_storage(p, s->in[0])].bytes > T->max_tensor)
        return -1;
    tile_chslices *cs = tile_channel_slices(T, s, r, room, thin ? TILE_MAX_SLICES : INT64_MAX, err);
    if (!cs)
        return -1;
    tile_materialize(T, core_storage(p, s->in[0]));
    if (s->kind == CK_CONV2D && s->u.conv.has_res)
        tile_materialize(T, core_storage(p, s->in[7]));
    tile_emit_channels(T, s, r, cs);
    tile_chslices_free(cs);
    return 0;
}
