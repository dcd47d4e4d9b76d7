/* Programs: which compiled variant a step runs (conv2d's from the device),
 * the kernel table generated out of core/step.h, shader assembly, the binary
 * store and the program cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "glk_internal.h"

/* Which conv2d variant runs (conv2d.comp's OPC; bench/results/speed-h200.md):
 * - on a GPU, vec (OPC 3): plain (OPC 0, an invocation an output) reading x
 *   four channels a load where in_c is a multiple of 4 and x's binding is
 *   16-byte aligned (the same bits, up to 7% faster); the tiled one measured
 *   slower there (too few invocations in flight on batch-1 layers), and split
 *   (OPC 2: runs of each output's taps added in a tree where K is long and the
 *   whole op has few outputs), up to 1.7x faster, moves away from TensorFlow.js's
 *   rounding (it sums each output's taps one by one in float32) by more than the
 *   models' tolerance on two rows (faceboxes at 320x320 keeps another box), so it
 *   is asked for, never chosen;
 *   On a GPU, a conv of GLK_OC4_OUTPUTS outputs or more takes oc4 instead (OPC 4:
 *   four output channels an invocation, each summed in the plain order, the same
 *   bits) where the channels come in fours: on the H100, efficientpose 3.23 ->
 *   3.04 ms, movenet-thunder, blazepose-heavy and selfie within 1% (session 30);
 *   oc4 on every conv was slower (blazepose-heavy 4.42 -> 6.48 ms);
 * - on a device that is a CPU (llvmpipe), tiled (OPC 1), the big tile or, where
 *   its ragged edges would add over half the work, the small one, else (a few
 *   pixels, or a few channels) vec where it can, else plain.
 * Plain and tiled give the same bits; split others, the same in every tile.
 * glk_set_conv overrides it (si_options.conv_kernel, SI_CONV: a bench's knob,
 * bench/conv_tiles.sh): "gpu" (a GPU's choice, on any device), "plain", "vec",
 * "oc4" (four output channels an invocation, where the channels come in fours:
 * conv_oc4), "tiled[:BM,BN,TM,TN,BK]" (that tile alone) or "split[:DIV,MAX,AIM]". */
static const int conv_tiles_dflt[2][5] = {{64, 64, 8, 8, 16}, {32, 32, 4, 4, 16}};
static const int conv_split_dflt[3] = {64, 8, 1 << 18};
#define GLK_OC4_OUTPUTS (1u << 19)

static int conv_tile_ok(const int t[5])
{
    int bm = t[0], bn = t[1], tm = t[2], tn = t[3], bk = t[4];
    return bm > 0 && bn > 0 && tm > 0 && tn > 0 && bk > 0 && bm % tm == 0 && bn % tn == 0 &&
           (bm / tm) * (bn / tn) == GLK_LOCAL && GLK_LOCAL % bk == 0 && GLK_LOCAL % bn == 0 &&
           bm * bk % GLK_LOCAL == 0 && bn * bk % GLK_LOCAL == 0 && bm <= 256 && bk <= 64 &&
           bk * (bm + 1 + bn) * 4 <= 16384; /* the shared memory GLES 3.1 promises */
}

/* the device's choice (conv_variant's comment) */
void glk_conv_setup(glk_ctx *g)
{
    memcpy(g->conv_tile, conv_tiles_dflt, sizeof g->conv_tile);
    memcpy(g->conv_split, conv_split_dflt, sizeof g->conv_split);
    g->conv_mode = glk_software(g) ? 1 : 3;
    g->conv_auto = 1;
}

void glk_set_ahead(glk_ctx *g, int on) { g->ahead = on < 0 ? !glk_software(g) : on != 0; }

/* Whether x, the filter and the output of a conv can be read and written four floats at
 * a time: floats, each float32 one 16-byte aligned (bit i of aligned: glk_get_program's),
 * a half one read and written by words */
static int quads_ok(const ck_step *s, const si_dtype *in_dt, si_dtype out_dt, unsigned aligned)
{
    static const int bound[3] = {0, 1, CK_MAX_IN};
    if (in_dt[0] != SI_FLOAT32 || in_dt[1] != SI_FLOAT32 || out_dt != SI_FLOAT32)
        return 0;
    for (int j = 0; j < 3; j++)
        if (!(s->half >> bound[j] & 1) && !(aligned >> bound[j] & 1))
            return 0;
    return 1;
}

void glk_set_quad(glk_ctx *g, int on) { g->quad = on != 0; } /* -1: on, on every device */
void glk_set_epi(glk_ctx *g, int on) { g->epi = on < 0 ? !glk_software(g) : on != 0; }
void glk_set_epi_room(glk_ctx *g, int n) { g->epi_room = n < 0 || n > GLK_MAX_PROGRAMS ? GLK_MAX_PROGRAMS / 4 * 3 : n; }

/* The epilogue fields a conv2d, depthwise conv2d or matmul program is compiled
 * for (glk_set_epi): their P indices and the shaders' names for them (E_BIAS
 * ...; each shader reads P[i] where its program is not compiled for them) */
static const struct { const char *name; int conv, matmul; } epi_fields[] = {
    {"E_BIAS", 16, 8}, {"E_ACT", 17, 9}, {"E_ALPHAT", 18, 10}, {"E_NCLIP", 20, 12},
    {"E_OP0", 21, 13}, {"E_OP1", 22, 14}, {"E_HS", 23, 15}, {"E_SCALE", 24, 16}, {"E_RES", 26, -1},
};
#define N_EPI ((int)(sizeof epi_fields / sizeof epi_fields[0]))

/* one character a field value in a program's key (epi_values) */
static const char epi_digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/* Step s's epilogue values (v[N_EPI], 0 for a field its kind has not); 0 where
 * its program is not compiled for them: off, another kind, a value with no
 * character in epi_digits, or the context holding epi_room programs (three
 * quarters of its table by default, glk_set_epi_room; then the program that
 * reads them from P, the same bits, so that contexts holding many
 * models never run out of programs). Runs at every dispatch: no formatting. */
static int epi_values(const glk_ctx *g, const ck_step *s, int *v)
{
    if (!g->epi || (s->kind != CK_CONV2D && s->kind != CK_DWCONV2D && s->kind != CK_MATMUL) ||
        g->n_programs >= g->epi_room)
        return 0;
    for (int i = 0; i < N_EPI; i++) {
        int at = s->kind == CK_MATMUL ? epi_fields[i].matmul : epi_fields[i].conv;
        v[i] = at < 0 ? 0 : s->u.p[at];
        if (v[i] < 0 || v[i] >= (int)sizeof epi_digits - 1)
            return 0;
    }
    return 1;
}

/* dwconv2d.comp's and deconv2d.comp's variant: 1 (four output channels an invocation,
 * each summed as OPC 0 sums it) where the output channels come in fours, each its input
 * channel's (a depthwise conv's ch_mult 1) or (a transposed conv) the input channels in
 * fours too, and each float32 binding read or written four at a time is 16-byte
 * aligned (a half one is read and written by words); else 0 */
static int quad_variant(const glk_ctx *g, const ck_step *s, const si_dtype *in_dt, si_dtype out_dt,
                        unsigned aligned)
{
    const ck_conv_p *c = &s->u.conv;
    if (!g->quad || c->out_c % 4 || (s->kind == CK_DWCONV2D ? c->ch_mult != 1 : c->in_c % 4 != 0))
        return 0;
    return quads_ok(s, in_dt, out_dt, aligned);
}

si_result glk_set_conv(glk_ctx *g, const char *spec, si_error *err)
{
    int mode, tile[2][5], split[3], t[5], n = 0;
    memcpy(tile, conv_tiles_dflt, sizeof tile);
    memcpy(split, conv_split_dflt, sizeof split);
    if (!spec || !*spec) {
        if (g)
            glk_conv_setup(g);
        return SI_OK;
    }
    if (!strcmp(spec, "plain"))
        mode = 0;
    else if (!strcmp(spec, "vec") || !strcmp(spec, "gpu"))
        mode = 3;
    else if (!strcmp(spec, "oc4"))
        mode = 4;
    else if (!strcmp(spec, "tiled") || (sscanf(spec, "tiled:%d,%d,%d,%d,%d%n", &t[0], &t[1], &t[2],
                                               &t[3], &t[4], &n) == 5 && !spec[n] && conv_tile_ok(t))) {
        mode = 1;
        if (n) {
            memcpy(tile[0], t, sizeof t);
            memcpy(tile[1], t, sizeof t);
        }
    } else if (!strcmp(spec, "split") ||
               (sscanf(spec, "split:%d,%d,%d%n", &t[0], &t[1], &t[2], &n) == 3 && !spec[n] &&
                t[0] > 0 && t[1] > 0 && t[1] <= GLK_LOCAL && t[2] > 0)) {
        mode = 2;
        if (n)
            memcpy(split, t, sizeof split);
    } else
        return base_fail(err, SI_ERR_ARG, "conv2d variant \"%s\": not gpu, plain, vec, oc4, tiled, "
                         "tiled:BM,BN,TM,TN,BK (BM/TM x BN/TN = 64 invocations), split or "
                         "split:DIV,MAX,AIM", spec);
    if (g) {
        g->conv_mode = mode;
        g->conv_auto = !strcmp(spec, "gpu");
        memcpy(g->conv_tile, tile, sizeof tile);
        memcpy(g->conv_split, split, sizeof split);
    }
    return SI_OK;
}

/* rows (pixels) and columns (channels) of the output as a GEMM, padded to whole tiles */
static uint64_t conv_padded(const ck_conv_p *c, const int *t)
{
    uint64_t m = (uint64_t)c->n * (uint64_t)c->out_h * (uint64_t)c->out_w, n = (uint64_t)c->out_c;
    return (m + (uint64_t)t[0] - 1) / (uint64_t)t[0] * (uint64_t)t[0] *
           ((n + (uint64_t)t[1] - 1) / (uint64_t)t[1] * (uint64_t)t[1]);
}

/* The whole op's outputs, which a tile of it carries in whole_out (set at lowering):
 * a variant chosen by it is the same in every tile. */
static int64_t whole_outputs(const ck_conv_p *c)
{
    return c->whole_out > 0 ? c->whole_out : ck_conv_whole_out(c);
}

/* conv2d.comp's OPC 4, four output channels an invocation (each summed in the plain
 * order): where x's and the filter's channels come in fours and each float32 binding
 * it reads or writes four floats at a time (x, the filter, the output) is 16-byte
 * aligned; forced ("oc4"), or the GPU's choice for convs of GLK_OC4_OUTPUTS outputs
 * and more (the whole op's, so every tile of a conv runs the same variant) */
static int conv_oc4(const glk_ctx *g, const ck_step *s, const si_dtype *in_dt, si_dtype out_dt,
                    unsigned aligned)
{
    const ck_conv_p *c = &s->u.conv;
    int want = g->conv_mode == 4 ||
               (g->conv_auto && g->conv_mode == 3 && whole_outputs(c) >= (int64_t)GLK_OC4_OUTPUTS);
    return want && c->in_c % 4 == 0 && c->out_c % 4 == 0 && quads_ok(s, in_dt, out_dt, aligned);
}

/* The variant of one conv2d step (aligned: glk_get_program's; x_aligned: x is float32 and
 * its binding 16-byte aligned).
 * Split: the runs each output's taps are cut into, a power of two, at most
 * conv_split[1], each run at least conv_split[0] taps, and no more runs than
 * bring the whole op's outputs times runs to conv_split[2] invocations. It hangs
 * on K and the whole op's outputs alone, which no split of rows or channels
 * changes: every tile of a conv sums in the same order. */
static glk_conv_pick conv_variant(const glk_ctx *g, const ck_step *s, const si_dtype *in_dt,
                                  si_dtype out_dt, unsigned aligned)
{
    const ck_conv_p *c = &s->u.conv;
    int x_aligned = in_dt[0] == SI_FLOAT32 && (aligned & 1);
    if (conv_oc4(g, s, in_dt, out_dt, aligned))
        return (glk_conv_pick){4, g->conv_tile[0], 1};
    /* plain, or vec where x can be read four channels a load */
    glk_conv_pick r = {(g->conv_mode == 3 || g->conv_mode == 1 || g->conv_mode == 4) && c->in_c % 4 == 0 && x_aligned ? 3 : 0,
                   g->conv_tile[0], 1};
    if (g->conv_mode == 1) { /* the first tile whose ragged edges add at most half */
        uint64_t real = (uint64_t)c->n * (uint64_t)c->out_h * (uint64_t)c->out_w * (uint64_t)c->out_c;
        for (int i = 0; i < 2 && r.opc != 1; i++)
            if (conv_padded(c, g->conv_tile[i]) * 2 <= real * 3) {
                r.opc = 1;
                r.tile = g->conv_tile[i];
            }
    }
    if (g->conv_mode != 2)
        return r;
    int64_t k = (int64_t)c->k_h * c->k_w * c->in_c, n = 1, whole = whole_outputs(c);
    while (n * 2 <= g->conv_split[1] && n * 2 <= k / g->conv_split[0] &&
           whole * n * 2 <= g->conv_split[2])
        n *= 2;
    r.slices = (int)n;
    r.opc = n > 1 ? 2 : 0;
    return r;
}

/* invocations of a conv2d run as v: an output's (plain, vec), a quarter (oc4), its runs'
 * (split) or 64 a tile; of a depthwise or transposed conv: an output's, or a quarter
 * (quad_variant's OPC 1) */
uint64_t glk_conv_inv(glk_conv_pick v, const ck_step *s, uint64_t out_elems)
{
    if (s->kind != CK_CONV2D)
        return v.opc == 1 ? out_elems / 4 : out_elems;
    if (v.opc == 4)
        return out_elems / 4;
    if (v.opc != 1)
        return out_elems * (uint64_t)v.slices;
    return conv_padded(&s->u.conv, v.tile) / ((uint64_t)v.tile[0] * (uint64_t)v.tile[1]) * GLK_LOCAL;
}

/* ---- programs ---- */

/* The op enums of core/step.h as GLSL macros (U_RELU, B_ADD, R_SUM, ACT_RELU ...). */
static int enum_defines(char *buf, size_t n)
{
    int k = 0;
#define DEF(prefix, name, value)                                                                   \
    k += snprintf(buf + k, n - (size_t)k, "#define %s%s %d\n", prefix, #name, (int)(value));
#define ACT(x) DEF("ACT_", x, CK_ACT_##x)
#define UNARY(x) DEF("U_", x, CK_U_##x)
#define BINARY(x) DEF("B_", x, CK_B_##x)
#define REDUCE(x) DEF("R_", x, CK_R_##x)
    CK_ACTS(ACT)
    CK_UNARY_OPS(UNARY)
    CK_BINARY_OPS(BINARY)
    CK_REDUCE_OPS(REDUCE)
#undef ACT
#undef UNARY
#undef BINARY
#undef REDUCE
#undef DEF
    return k;
}

static const char *dtype_glsl(si_dtype t) { return t == SI_FLOAT32 ? "float" : "int"; }

/* Exact-product helpers, so sums round the way TensorFlow.js's float32 and
 * double arithmetic does. With a fused fma() (NVIDIA) they are one instruction;
 * where fma() is not fused (Mesa llvmpipe) they fall back to Dekker's split. */
static const char *prelude =
    "void two_prod(float a, float b, out float p, out float e) {\n"
    "    precise float pp = a * b; p = pp;\n"
    "#if FUSED_FMA\n"
    "    e = fma(a, b, -pp);\n"
    "#else\n"
    "    precise float c = 4097.0 * a; precise float ah = c - (c - a); precise float al = a - ah;\n"
    "    precise float d = 4097.0 * b; precise float bh = d - (d - b); precise float bl = b - bh;\n"
    "    precise float r = ((ah * bh - pp) + ah * bl + al * bh) + al * bl; e = r;\n"
    "#endif\n"
    "}\n"
    "void two_sum(float a, float b, out float s, out float e) {\n"
    "    precise float ss = a + b; precise float bb = ss - a;\n"
    "    precise float r = (a - (ss - bb)) + (b - bb); s = ss; e = r;\n"
    "}\n"
    "/* fl(a*b + c), rounded once */\n"
    "float mad1(float a, float b, float c) {\n"
    "#if FUSED_FMA\n"
    "    precise float r = fma(a, b, c); return r;\n"
    "#else\n"
    "    float p, e, s, t; two_prod(a, b, p, e); two_sum(c, p, s, t);\n"
    "    precise float r = s + (t + e); return r;\n"
    "#endif\n"
    "}\n"
    "/* four of them at once, each as mad1 */\n"
    "vec4 mad1v(vec4 a, vec4 b, vec4 c) {\n"
    "    return vec4(mad1(a.x, b.x, c.x), mad1(a.y, b.y, c.y), mad1(a.z, b.z, c.z), mad1(a.w, b.w, c.w));\n"
    "}\n"
    "/* a double-like accumulator (hi, lo) += a*b */\n"
    "vec2 dd_mad(float a, float b, vec2 acc) {\n"
    "    float p, e, s, t; two_prod(a, b, p, e); two_sum(acc.x, p, s, t);\n"
    "    precise float lo = acc.y + (t + e); float h, l; two_sum(s, lo, h, l); return vec2(h, l);\n"
    "}\n"
    "/* fl(f + (hi + lo)) */\n"
    "float dd_add_to(float f, vec2 d) {\n"
    "    float s, t; two_sum(f, d.x, s, t); precise float r = s + (t + d.y); return r;\n"
    "}\n"
    "/* a double-like sum (hi, lo) += v, as tfjs sums float32 values in a JS number; the\n"
    " * pair assumes finite values: once an infinity or NaN enters (or the pair overflows)\n"
    " * it is plain IEEE float from there on */\n"
    "bool wild(float v) { return isinf(v) || isnan(v); }\n"
    "vec2 dd_add(vec2 a, float v) {\n"
    "    if (wild(a.x) || wild(v)) return vec2(a.x + v, 0.0);\n"
    "    vec2 r = dd_mad(v, 1.0, a);\n"
    "    return wild(r.x) ? vec2(a.x + v, 0.0) : r;\n"
    "}\n"
    "/* the pair rounded to float once */\n"
    "float dd_round(vec2 a) { return wild(a.x) ? a.x : dd_add_to(0.0, a); }\n"
    "/* (hi, lo) / d, rounded to float: the first quotient corrected by the remainder */\n"
    "float dd_div(vec2 a, float d) {\n"
    "    if (wild(a.x)) return a.x / d;\n"
    "    float q1 = a.x / d, p, e;\n"
    "    two_prod(q1, d, p, e);\n"
    "    precise float r = ((a.x - p) - e) + a.y;\n"
    "    precise float q = q1 + r / d;\n"
    "    return q;\n"
    "}\n"
    "/* AHEAD_LOADS: a round of loads issued before its sums is kept in named vec4s\n"
    " * (a0, a1, ...) and summed in order by EACH4(F, a): F(a.x) ... F(a.w). An array\n"
    " * the compiler does not unroll lives in local memory, which the NVIDIA driver\n"
    " * sizes for every thread the GPU can hold: float v[32] made faceres-deep use 50 MiB\n"
    " * of the card past the pager's count (bench/results/gpu-h200.md, session 38) */\n"
    "#define EACH4(F, a) F(a.x) F(a.y) F(a.z) F(a.w)\n"
    "/* a round of 8 (or 32) loads L(0) ... L(7) into a0, a1 (... a7), then S of each in order */\n"
    "#define AHEAD8(L, S) { vec4 a0 = vec4(L(0), L(1), L(2), L(3)), a1 = vec4(L(4), L(5), L(6), L(7)); \\\n"
    "    EACH4(S, a0) EACH4(S, a1) }\n"
    "#define AHEAD32(L, S) { \\\n"
    "    vec4 a0 = vec4(L(0), L(1), L(2), L(3)), a1 = vec4(L(4), L(5), L(6), L(7)), \\\n"
    "         a2 = vec4(L(8), L(9), L(10), L(11)), a3 = vec4(L(12), L(13), L(14), L(15)), \\\n"
    "         a4 = vec4(L(16), L(17), L(18), L(19)), a5 = vec4(L(20), L(21), L(22), L(23)), \\\n"
    "         a6 = vec4(L(24), L(25), L(26), L(27)), a7 = vec4(L(28), L(29), L(30), L(31)); \\\n"
    "    EACH4(S, a0) EACH4(S, a1) EACH4(S, a2) EACH4(S, a3) EACH4(S, a4) EACH4(S, a5) EACH4(S, a6) \\\n"
    "    EACH4(S, a7) }\n"
    "/* a conv's or matmul's clips after its epilogue (core/fuse.c): n of them, each a\n"
    " * Minimum or Maximum of the value and the scalar in4[0] (then in5[0]), binary.comp's\n"
    " * formula with the value as a */\n"
    "float clip1(float v, int op, float c) {\n"
    "    if (op == B_MIN) return (v < c || isnan(v)) ? v : c;\n"
    "    return (v > c || isnan(v)) ? v : c;\n"
    "}\n"
    "/* a conv's or matmul's per-channel scale before its bias (has 1: fused), rounded\n"
    " * (has 2 and 3: after the bias, the conv shaders' epilogue()) */\n"
    "float scaled(float v, int oc, int has) {\n"
    "    if (has != 1) return v;\n"
    "    precise float t = v * float(in6[oc]);\n"
    "    return t;\n"
    "}\n"
    "/* or (hs 1) a hard swish, (c1 * v) * relu6(v + c2), c1 in4[0], c2 in5[0], (hs 2)\n"
    " * a hard sigmoid, relu6(v + c2) * c1, each op rounded as binary.comp's Mul and\n"
    " * Add and unary.comp's Relu6 do */\n"
    "float clips(float v, int n, int op0, int op1, int hs) {\n"
    "    if (hs == 2) {\n"
    "        precise float a = v + float(in5[0]);\n"
    "        float r = a < 0.0 ? 0.0 : (a > 6.0 ? 6.0 : a);\n"
    "        precise float y = r * float(in4[0]);\n"
    "        return y;\n"
    "    }\n"
    "    if (hs != 0) {\n"
    "        precise float m = float(in4[0]) * v;\n"
    "        precise float a = v + float(in5[0]);\n"
    "        float r = a < 0.0 ? 0.0 : (a > 6.0 ? 6.0 : a);\n"
    "        precise float y = m * r;\n"
    "        return y;\n"
    "    }\n"
    "    if (n > 0) v = clip1(v, op0, float(in4[0]));\n"
    "    if (n > 1) v = clip1(v, op1, float(in5[0]));\n"
    "    return v;\n"
    "}\n";

void glk_set_source_hook(glk_ctx *g, glk_source_fn fn, void *user)
{
    g->on_source = fn;
    g->source_user = user;
}

void glk_set_binaries(glk_ctx *g, const glk_binaries *b)
{
    g->bins = b ? *b : (glk_binaries){0};
}

void glk_program_counts(const glk_ctx *g, uint64_t *loaded, uint64_t *compiled)
{
    *loaded = g ? g->n_loaded : 0;
    *compiled = g ? g->n_compiled : 0;
}

/* Clears what a refused binary or an unsupported query left in the error
 * flags (bounded: a lost context is noted, never spun on). */
void glk_clear_errors(glk_ctx *g)
{
    for (int i = 0; i < 8; i++) {
        GLenum e = glGetError();
        if (e == GL_NO_ERROR)
            return;
        if (e == GL_CONTEXT_LOST)
            g->lost = 1;
    }
}

/* The program of srcs from the binary store where it has one the driver takes;
 * 0 where not (nothing left behind). */
static GLuint load_binary(glk_ctx *g, const uint64_t key[2])
{
    GLint formats = 0;
    glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
    uint32_t format = 0;
    void *bytes = NULL;
    size_t len = 0;
    if (formats <= 0 || !g->bins.load || !g->bins.load(g->bins.user, key, &format, &bytes, &len))
        return 0;
    GLuint prog = glCreateProgram();
    GLint ok = 0;
    if (len <= 0x7fffffff) {
        glProgramBinary(prog, (GLenum)format, bytes, (GLsizei)len);
        glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    }
    free(bytes);
    if (!ok) { /* another driver's, or refused: compiled again */
        glDeleteProgram(prog);
        glk_clear_errors(g);
        return 0;
    }
    return prog;
}

static void store_binary(glk_ctx *g, GLuint prog, const uint64_t key[2])
{
    GLint formats = 0, len = 0;
    glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
    if (formats <= 0 || !g->bins.store)
        return;
    glGetProgramiv(prog, GL_PROGRAM_BINARY_LENGTH, &len);
    void *b = len > 0 ? malloc((size_t)len) : NULL;
    GLsizei got = 0;
    GLenum format = 0;
    if (b)
        glGetProgramBinary(prog, len, &got, &format, b);
    if (b && got > 0 && glGetError() == GL_NO_ERROR)
        g->bins.store(g->bins.user, key, format, b, (size_t)got);
    free(b);
    glk_clear_errors(g);
}

/* Waits for p's build (compile's), checks it and keeps its binary. A program
 * that did not build is kept as failed, its GL objects deleted. */
static si_result finish_compile(glk_ctx *g, glk_program *p, si_error *err)
{
    GLuint sh = p->pending_sh;
    if (!sh)
        return SI_OK;
    p->pending_sh = 0;
    GLint ok = 0;
    char log[1024] = "";
    si_result st = SI_OK;
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        glGetShaderInfoLog(sh, sizeof log, NULL, log);
        st = base_fail(err, SI_ERR_GPU, "shader %s failed to compile: %.400s", p->shader, log);
    } else {
        glGetProgramiv(p->prog, GL_LINK_STATUS, &ok);
        if (!ok) {
            glGetProgramInfoLog(p->prog, sizeof log, NULL, log);
            st = base_fail(err, SI_ERR_GPU, "shader %s failed to link: %.400s", p->shader, log);
        }
    }
    glDetachShader(p->prog, sh);
    glDeleteShader(sh);
    if (st != SI_OK) {
        glDeleteProgram(p->prog);
        p->prog = 0;
        p->failed = 1;
        return st;
    }
    g->n_compiled++;
    store_binary(g, p->prog, p->bin_key);
    p->loc_p = glGetUniformLocation(p->prog, "P");
    p->loc_nt = glGetUniformLocation(p->prog, "NT");
    return SI_OK;
}

static si_result compile(glk_ctx *g, const char *shader, const char *defines, glk_program *out,
                         si_error *err)
{
    int fused = g->fused_fma;
    static const char *head32 =
        "#version 320 es\n"
        "precision highp float;\nprecision highp int;\n"
        "layout(local_size_x = 64) in;\n"
        "uniform int P[64];\nuniform uint NT;\n"
        "#define PF(i) intBitsToFloat(P[i])\n";
    const char *body = glk_shader_source(shader);
    if (!body)
        return base_fail(err, SI_ERR_GPU, "no shader named %s", shader);
    const char *head =
        "#version 310 es\n"
        "precision highp float;\nprecision highp int;\n"
        "layout(local_size_x = 64) in;\n"
        "uniform int P[64];\nuniform uint NT;\n"
        "#define PF(i) intBitsToFloat(P[i])\n"
        "#define precise\n#define fma(a, b, c) ((a) * (b) + (c))\n";
    if (epoxy_gl_version() >= 32)
        head = head32;
    char decl[16384]; /* about 7.5 KB: the defines, the bindings and their loads and stores */
    int n = 0;
    n += snprintf(decl + n, sizeof decl - (size_t)n, "#define FUSED_FMA %d\n%s", fused, defines);
    for (int i = 0; i < CK_MAX_IN; i++)
        n += snprintf(decl + n, sizeof decl - (size_t)n,
                      "layout(std430, binding=%d) readonly buffer B%d { T%d in%d[]; };\n", i, i,
                      i, i);
    /* PAIR (get_program: a half output, a kernel of one invocation an element
     * with no workgroup ties): an invocation runs the kernel's main (kmain here)
     * for elements 2g and 2g + 1, and a word whose two halves it stored is
     * written whole, without atomics (st_half) */
    n += snprintf(decl + n, sizeof decl - (size_t)n,
                  "layout(std430, binding=%d) buffer BO { TO outv[]; };\n"
                  "#ifndef PAIR\n#define PAIR 0\n#endif\n"
                  "uint gidx1() { return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * "
                  "gl_NumWorkGroups.x * 64u; }\n"
                  "#if PAIR\nuint pair_gi;\nuint gidx() { return pair_gi; }\n#define main kmain\n#else\n"
                  "uint gidx() { return gidx1(); }\n#endif\n",
                  CK_MAX_IN);
    /* Kernels read element i of input k as LDk(i) and store through ST(i, v):
     * a float32 or int32 binding is its array; a half one (Hk, HO: ck_step.half)
     * holds IEEE halves two a 32-bit word (element i in word i/2, the low half
     * first), read as floats. A half store rounds once (packHalf2x16), values
     * past the largest half saturated to it, and writes its 16 bits by atomics,
     * as the word's other half is another invocation's (or another step's). */
    /* (a program that is no step's defines none of Hk, Qk, HO: plain arrays; GLSL ES,
     * unlike C, refuses an undefined name in #if). LDQk(i): elements 4i..4i+3 of input
     * k, where a variant reads it four at a time (get_program's Qk: a vec4 binding) or
     * it holds halves (two words). */
    for (int i = 0; i < CK_MAX_IN; i++) {
        n += snprintf(decl + n, sizeof decl - (size_t)n,
                      "#ifndef H%d\n#define H%d 0\n#endif\n#if H%d\nfloat ld%d(int i) { return unpackHalf2x16(in%d[i >> 1])[i & 1]; }\n"
                      "float ld%d(uint i) { return ld%d(int(i)); }\n#define LD%d(i) ld%d(i)\n"
                      "#else\n#define LD%d(i) in%d[i]\n#endif\n",
                      i, i, i, i, i, i, i, i, i, i, i);
        n += snprintf(decl + n, sizeof decl - (size_t)n,
                      "#ifndef Q%d\n#define Q%d 0\n#endif\n#if H%d\n"
                      "vec4 ldq%d(int i) { return vec4(unpackHalf2x16(in%d[2 * i]), unpackHalf2x16(in%d[2 * i + 1])); }\n"
                      "#define LDQ%d(i) ldq%d(i)\n#elif Q%d\n#define LDQ%d(i) in%d[i]\n#endif\n",
                      i, i, i, i, i, i, i, i, i, i, i);
    }
    n += snprintf(decl + n, sizeof decl - (size_t)n,
                  "#ifndef HO\n#define HO 0\n#endif\n#ifndef HC\n#define HC 0\n#endif\n"
                  "#if HC\nlayout(std430, binding=%d) buffer BV { uint overflows[]; };\n#endif\n"
                  "#if HO\nvoid st_bits(int i, uint h) {\n"
                  "    if ((i & 1) == 0) { atomicAnd(outv[i >> 1], 0xffff0000u); atomicOr(outv[i >> 1], h); }\n"
                  "    else { atomicAnd(outv[i >> 1], 0xffffu); atomicOr(outv[i >> 1], h << 16); }\n"
                  "}\n"
                  "#if PAIR\nint pend_i = -1;\nuint pend_h = 0u;\n"
                  "void st_flush() { if (pend_i >= 0) st_bits(pend_i, pend_h); pend_i = -1; }\n#endif\n"
                  "uint half_bits(float v) {\n"
                  "#if HC\n    if (abs(v) >= 65520.0 && !isinf(v)) atomicAdd(overflows[0], 1u);\n#endif\n"
                  "    if (!isinf(v) && !isnan(v)) v = clamp(v, -65504.0, 65504.0);\n"
                  "    return packHalf2x16(vec2(v, 0.0)) & 0xffffu;\n"
                  "}\n"
                  "void st_half(int i, float v) {\n"
                  "    uint h = half_bits(v);\n"
                  "#if PAIR\n"
                  "    if ((pend_i ^ 1) == i) { outv[i >> 1] = (i & 1) == 0 ? h | (pend_h << 16) : pend_h | (h << 16); pend_i = -1; return; }\n"
                  "    st_flush(); pend_i = i; pend_h = h;\n"
                  "#else\n    st_bits(i, h);\n#endif\n"
                  "}\nvoid st_half(uint i, float v) { st_half(int(i), v); }\n#define ST(i, v) st_half(i, v)\n"
                  "#else\n#define ST(i, v) outv[i] = (v)\n#endif\n"
                  /* STQ(i, v): output elements 4i..4i+3, two words of halves (each rounded
                   * as st_half rounds) or one vec4 (QO) */
                  "#ifndef QO\n#define QO 0\n#endif\n#if HO\n"
                  "void stq(int i, vec4 v) {\n"
                  "    outv[2 * i] = half_bits(v.x) | (half_bits(v.y) << 16);\n"
                  "    outv[2 * i + 1] = half_bits(v.z) | (half_bits(v.w) << 16);\n"
                  "}\n#define STQ(i, v) stq(i, v)\n#elif QO\n#define STQ(i, v) outv[i] = (v)\n#endif\n",
                  CK_MAX_IN + 1);
    if (n >= (int)sizeof decl) /* snprintf cut it short: a bug here, not the caller's */
        return base_fail(err, SI_ERR_GPU, "shader %s: declarations of %d bytes, over %zu", shader, n,
                         sizeof decl);
    const char *tail = "#if PAIR\n#undef main\nvoid main() {\n"
                       "    pair_gi = 2u * gidx1(); kmain();\n    pair_gi++; kmain();\n    st_flush();\n}\n#endif\n";
    const char *srcs[5] = {head, decl, prelude, body, tail};
    /* the key of the binary store (where one is set): what the driver's binary depends on */
    uint64_t key[2] = {0, 0};
    if (g->bins.load || g->bins.store) {
        base_digest d = {0};
        const char *ids[3] = {(const char *)glGetString(GL_RENDERER),
                              (const char *)glGetString(GL_VENDOR),
                              (const char *)glGetString(GL_VERSION)};
        base_digest_add(&d, "streaminfer program 1", 22);
        for (int i = 0; i < 3; i++)
            base_digest_add(&d, ids[i] ? ids[i] : "", strlen(ids[i] ? ids[i] : "") + 1);
        for (int i = 0; i < 5; i++)
            base_digest_add(&d, srcs[i], strlen(srcs[i]) + 1);
        key[0] = d.a;
        key[1] = d.b;
    }
    GLuint prog = g->bins.load ? load_binary(g, key) : 0;
    if (prog) {
        g->n_loaded++;
        *out = (glk_program){.prog = prog, .shader = shader};
        out->loc_p = glGetUniformLocation(prog, "P");
        out->loc_nt = glGetUniformLocation(prog, "NT");
        return SI_OK;
    }
    if (g->on_source) {
        size_t len = 1;
        for (int i = 0; i < 5; i++)
            len += strlen(srcs[i]);
        char *all = malloc(len);
        if (all) {
            all[0] = 0;
            for (int i = 0; i < 5; i++)
                strcat(all, srcs[i]);
            g->on_source(g->source_user, shader, all);
            free(all);
        }
    }
    GLuint sh = glCreateShader(GL_COMPUTE_SHADER);
    glShaderSource(sh, 5, srcs, NULL);
    glCompileShader(sh);
    prog = glCreateProgram();
    glAttachShader(prog, sh);
    if (g->bins.store)
        glProgramParameteri(prog, GL_PROGRAM_BINARY_RETRIEVABLE_HINT, GL_TRUE);
    glLinkProgram(prog);
    *out = (glk_program){.prog = prog, .pending_sh = sh, .shader = shader, .bin_key = {key[0], key[1]}};
    /* the status is asked for at once unless compiles are deferred: asking
     * waits for the build */
    return g->defer_compiles ? SI_OK : finish_compile(g, out, err);
}

/* ---- invocations of one dispatch: the invocations column of CK_KINDS.
 * Each kernel's shader maps gidx() the same way. ---- */

/* one an output element */
static uint64_t glk_inv_out(const ck_step *s, uint64_t out_elems)
{
    (void)s;
    return out_elems;
}

/* CK_POOL's variant: an average over a window of at least GLK_POOL_WIDE elements
 * (a global pool) runs as one workgroup an output (pool.comp's OPC 1); chosen by
 * the window alone, which no split of the output changes */
#define GLK_POOL_WIDE 256
_Static_assert(CK_REDUCE_LANES == GLK_LOCAL, "a reduction's (and an argmax's) lanes are one workgroup");
static int glk_pool_wide(const ck_step *s)
{
    const ck_pool_p *p = &s->u.pool;
    return !p->is_max && (int64_t)p->k_h * p->k_w >= GLK_POOL_WIDE;
}

static uint64_t glk_inv_pool(const ck_step *s, uint64_t out_elems)
{
    return glk_pool_wide(s) ? out_elems * GLK_LOCAL : out_elems;
}

/* CK_MATMUL's variant: few outputs (fewer than the GPU has invocations to
 * keep busy) with long sums (a dense head at batch 1: 63 outputs of 1152
 * taps took 60 us on the H100, each invocation waiting on its loads in turn)
 * run as one workgroup an output, a block of 48 taps an invocation
 * (matmul.comp's OPC 1; the same bits) */
#define GLK_MM_WIDE_K 192
#define GLK_MM_WIDE_OUT 16384
static int glk_matmul_wide(const ck_step *s)
{
    const ck_matmul_p *p = &s->u.matmul;
    return p->k >= GLK_MM_WIDE_K && (int64_t)p->batch * p->m * p->n <= GLK_MM_WIDE_OUT;
}

static uint64_t glk_inv_matmul(const ck_step *s, uint64_t out_elems)
{
    return glk_matmul_wide(s) ? out_elems * GLK_LOCAL : out_elems;
}

/* the compiled variant (OPC) of a step: its variant slot's value, or for
 * CK_POOL and CK_MATMUL whether it runs wide */
static int glk_variant(const ck_step *s, int op_slot)
{
    if (op_slot >= 0)
        return s->u.p[op_slot];
    return s->kind == CK_POOL ? glk_pool_wide(s) : s->kind == CK_MATMUL ? glk_matmul_wide(s) : -1;
}

/* one an element of the copied region */
static uint64_t glk_inv_copy(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    uint64_t n = 1;
    for (int i = 0; i < s->u.copy.rank; i++)
        n *= (uint64_t)s->u.copy.dim[i];
    return n;
}

/* outer x inner outputs: one an output, or one workgroup an output in lanes */
static uint64_t inv_lanes(int32_t outer, int32_t inner, int32_t lanes)
{
    uint64_t n = (uint64_t)outer * (uint64_t)inner;
    return lanes ? n * GLK_LOCAL : n;
}

/* one an output, or one workgroup an output where it sums in lanes */
static uint64_t glk_inv_reduce(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    return inv_lanes(s->u.reduce.outer, s->u.reduce.inner, s->u.reduce.lanes);
}

/* one a row */
static uint64_t glk_inv_softmax(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    return (uint64_t)s->u.softmax.outer;
}

/* one an output, or one workgroup an output in lanes (a long row) */
static uint64_t glk_inv_argmax(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    return inv_lanes(s->u.argmax.outer, s->u.argmax.inner, s->u.argmax.lanes);
}

/* one a line along the scanned axis */
static uint64_t glk_inv_scan(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    return (uint64_t)s->u.scan.outer * (uint64_t)s->u.scan.inner;
}

/* one workgroup a block of a level */
static uint64_t glk_inv_topkb(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    return (uint64_t)s->u.topkb.outer * (uint64_t)s->u.topkb.nb * GLK_LOCAL;
}

static uint64_t glk_inv_dequant(const ck_step *s, uint64_t out_elems)
{
    (void)out_elems;
    return (uint64_t)s->u.dequant.count;
}

const glk_kernel glk_kernels[CK__COUNT] = {
#define KERNEL(K, name, params, shader, variant, inv, iters, tiling)                               \
    [CK_##K] = {shader, variant, glk_inv_##inv},
    CK_KINDS(KERNEL)
#undef KERNEL
};

/* The slot of key in g->slot (open addressing: GLK_PROGRAM_SLOTS, twice the
 * programs, so a probe ends at an empty slot): where it is, or where it goes. */
static int program_slot(const glk_ctx *g, const char *key)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *c = key; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    int i = (int)(h % GLK_PROGRAM_SLOTS);
    while (g->slot[i] && strcmp(g->programs[g->slot[i] - 1].key, key))
        i = (i + 1) % GLK_PROGRAM_SLOTS;
    return i;
}

/* Looked up once a dispatch: a hash, not a walk over every program made. */
static glk_program *find_program(glk_ctx *g, const char *key)
{
    int i = program_slot(g, key);
    return g->slot[i] ? &g->programs[g->slot[i] - 1] : NULL;
}

/* A program found under its key, ready to run: its build waited for if it
 * was deferred; one that did not build is refused again. */
static si_result ready_program(glk_ctx *g, glk_program *p, si_error *err)
{
    if (p->pending_sh && !g->defer_compiles)
        return finish_compile(g, p, err);
    if (p->failed)
        return base_fail(err, SI_ERR_GPU, "shader %s failed to build (an earlier error said how)", p->shader);
    return SI_OK;
}

void glk_begin_compiles(glk_ctx *g)
{
    g->defer_compiles = 1;
}

si_result glk_finish_compiles(glk_ctx *g, si_error *err)
{
    g->defer_compiles = 0;
    si_result first = SI_OK;
    for (int i = 0; i < g->n_programs; i++) {
        si_error e = {0};
        si_result st = finish_compile(g, &g->programs[i], &e);
        if (st != SI_OK && first == SI_OK) {
            first = st;
            if (err)
                *err = e;
        }
    }
    return first;
}

/* Compiles shader with the op enums and defines, and keeps it under key. */
static si_result add_program(glk_ctx *g, const char *key, const char *shader, const char *defines,
                             glk_program **out, si_error *err)
{
    if (g->n_programs == GLK_MAX_PROGRAMS)
        return base_fail(err, SI_ERR_GPU, "program cache full");
    char defs[4096];
    int m = enum_defines(defs, sizeof defs);
    snprintf(defs + m, sizeof defs - (size_t)m, "%s", defines);
    glk_program *p = &g->programs[g->n_programs];
    si_result st = compile(g, shader, defs, p, err);
    if (st != SI_OK)
        return st;
    snprintf(p->key, sizeof p->key, "%s", key);
    g->slot[program_slot(g, p->key)] = (uint16_t)(g->n_programs + 1);
    g->n_programs++;
    *out = p;
    return SI_OK;
}

/* Kernels that may store a half output two elements an invocation (PAIR in
 * compile): one invocation an output element, nothing shared within a
 * workgroup, and a short sum an element (conv2d's sums of over PAIR_MAX_K taps and
 * matmul's run one an invocation: two in a row would halve what is in flight). Measured on
 * the H200: a half stored alone takes two atomics, which made f16 slower than
 * f32 on every model (bench/results/f16.md). */
#define PAIR_MAX_K 128
static int pairs(const ck_step *s, int opc)
{
    if (!(s->half >> CK_MAX_IN & 1))
        return 0;
    switch (s->kind) {
    case CK_CONV2D: /* plain or vec, with short sums (1x1 convs over few channels) */
        return (opc == 0 || opc == 3) && (int64_t)s->u.conv.k_h * s->u.conv.k_w * s->u.conv.in_c <= PAIR_MAX_K;
    case CK_ADDN:
    case CK_BINARY:
    case CK_COPY:
    case CK_DEQUANT:
    case CK_GATHER:
    case CK_PAD:
    case CK_RESIZE:
    case CK_SELECT:
    case CK_UNARY:
        return 1;
    case CK_DWCONV2D: /* four channels an invocation (OPC 1) write their two words whole */
        return opc != 1;
    default:
        return 0;
    }
}

/* Whether binding i (CK_MAX_IN: the output) of a float32 step is declared as vec4s in
 * variant opc: conv2d's vec reads x so; conv2d's oc4 and the four-channel ones of
 * dwconv2d and deconv2d x, the filter and the output */
static int vec4_binding(const ck_step *s, int opc, int i)
{
    if (s->kind == CK_CONV2D)
        return (opc == 3 && i == 0) || (opc == 4 && (i <= 1 || i == CK_MAX_IN));
    return (s->kind == CK_DWCONV2D || s->kind == CK_DECONV2D) && opc == 1 && (i <= 1 || i == CK_MAX_IN);
}

si_result glk_get_program(glk_ctx *g, const ck_step *s, const si_dtype *in_dt, si_dtype out_dt,
                          unsigned aligned, glk_program **out, glk_conv_pick *pick, si_error *err)
{
    if ((unsigned)s->kind >= CK__COUNT || !glk_kernels[s->kind].shader)
        return base_fail(err, SI_ERR_UNSUPPORTED, "no GPU kernel for %s", ck_kind_name(s->kind));
    const glk_kernel *k = &glk_kernels[s->kind];
    char key[GLK_PROGRAM_KEY];
    int opc = glk_variant(s, k->op_slot);
    glk_conv_pick cv = {opc, g->conv_tile[0], 1};
    int n = snprintf(key, sizeof key, "%s:%d:", k->shader, opc);
    if (s->kind == CK_CONV2D) { /* the variant, its runs or its tile */
        opc = (cv = conv_variant(g, s, in_dt, out_dt, aligned)).opc;
        n = snprintf(key, sizeof key, "%s:%d:%d.%d.%d.%d.%d.%d:", k->shader, opc, cv.slices,
                     cv.tile[0], cv.tile[1], cv.tile[2], cv.tile[3], cv.tile[4]);
    }
    if (s->kind == CK_DWCONV2D || s->kind == CK_DECONV2D) {
        cv.opc = opc = quad_variant(g, s, in_dt, out_dt, aligned);
        n = snprintf(key, sizeof key, "%s:%d:", k->shader, opc);
    }
    if (pick)
        *pick = cv;
    /* an absent input's binding is declared as a float32 one (below): the same
     * source, so the same program as with a float32 input there (a conv with
     * and without its fused residual, say: one program, not two; on llvmpipe
     * each costs megabytes of JIT code) */
    for (int i = 0; i < CK_MAX_IN && n < (int)sizeof key - 3; i++)
        key[n++] = i < s->n_in && s->in[i] >= 0
                       ? (in_dt[i] == SI_FLOAT32 ? (s->half >> i & 1 ? 'h' : 'f') : 'i')
                       : 'f';
    key[n++] = out_dt == SI_FLOAT32 ? (s->half >> CK_MAX_IN & 1 ? 'h' : 'f') : 'i';
    int pair = pairs(s, opc);
    key[n++] = pair ? 'p' : '1';
    key[n++] = g->ahead ? 'a' : 's';
    key[n] = 0;
    /* the epilogue the program is compiled for ends its key, a character a field;
     * where the key has no room for them all, the program that reads P */
    int ev[N_EPI], epi = epi_values(g, s, ev) && n + 1 + N_EPI < (int)sizeof key;
    if (epi) {
        key[n++] = 'e';
        for (int i = 0; i < N_EPI; i++)
            key[n++] = epi_digits[ev[i]];
        key[n] = 0;
    }
    if ((*out = find_program(g, key)))
        return ready_program(g, *out, err);
    char defs[2048];
    int m = snprintf(defs, sizeof defs, "#define OPC %d\n#define AHEAD %d\n", opc, g->ahead);
    if (s->kind == CK_CONV2D) {
        const int *t = cv.tile;
        m += snprintf(defs + m, sizeof defs - (size_t)m,
                      "#define CT_BM %d\n#define CT_BN %d\n#define CT_TM %d\n#define CT_TN %d\n"
                      "#define CT_BK %d\n#define CL_S %d\n", t[0], t[1], t[2], t[3], t[4], cv.slices);
    }
    /* Tk / TO the bindings' element types, Vk / VO the values kernels compute with */
    for (int i = 0; i < CK_MAX_IN; i++) {
        const char *t = dtype_glsl(i < s->n_in && s->in[i] >= 0 ? in_dt[i] : SI_FLOAT32);
        int h = s->half >> i & 1;
        int q = vec4_binding(s, opc, i) && !h;
        m += snprintf(defs + m, sizeof defs - (size_t)m,
                      "#define T%d %s\n#define V%d %s\n#define H%d %d\n#define Q%d %d\n", i,
                      q ? "vec4" : h ? "uint" : t, i, h ? "float" : t, i, h, i, q);
    }
    int ho = s->half >> CK_MAX_IN & 1;
    int qo = !ho && vec4_binding(s, opc, CK_MAX_IN);
    for (int i = 0; epi && i < N_EPI; i++)
        m += snprintf(defs + m, sizeof defs - (size_t)m, "#define %s %d\n", epi_fields[i].name, ev[i]);
    snprintf(defs + m, sizeof defs - (size_t)m,
             "#define TO %s\n#define VO %s\n#define HO %d\n#define HC %d\n#define PAIR %d\n#define QO %d\n",
             ho ? "uint" : qo ? "vec4" : dtype_glsl(out_dt), ho ? "float" : dtype_glsl(out_dt), ho,
             ho && glk_count_overflows(g), pair, qo);
    si_result st = add_program(g, key, k->shader, defs, out, err);
    if (st == SI_OK)
        (*out)->pair = pair;
    return st;
}

/* A program that is no step's (the transfer kernel), by shader name. */
si_result glk_get_named_program(glk_ctx *g, const char *key, const char *shader, const char *defines,
                                glk_program **out, si_error *err)
{
    if ((*out = find_program(g, key)))
        return ready_program(g, *out, err);
    return add_program(g, key, shader, defines, out, err);
}
