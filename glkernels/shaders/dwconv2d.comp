// CK_DWCONV2D: P = ck_conv_p (see conv2d.comp). in1 filter [k_h, k_w, in_c, ch_mult];
// output channel oc reads input channel oc / ch_mult and filter column oc.
// The epilogue's fields: constants where the program is compiled for them
// (glk_program.c epi_fields), else P's.
#ifndef E_ACT
#define E_BIAS P[16]
#define E_ACT P[17]
#define E_ALPHAT P[18]
#define E_NCLIP P[20]
#define E_OP0 P[21]
#define E_OP1 P[22]
#define E_HS P[23]
#define E_SCALE P[24]
#endif
float tanh_safe(float x) { float e = exp(-2.0 * abs(clamp(x, -20.0, 20.0))); return sign(x) * (1.0 - e) / (1.0 + e); }
// Bias add then activation, as ck_apply_act on the host. PReLU alphas come one
// per output channel, or one for all.
float epilogue(float v, int oc, int has_bias, int act, int has_alpha, float alpha) {
    if (has_bias != 0) v += float(LD2(oc));
    if (E_SCALE >= 2) { // a scale after the bias, then (3) a shift: each op rounded as its step's,
        // each one value a channel or one for all
        precise float m = v * float(in6[in6.length() == 1 ? 0 : oc]);
        v = m;
        if (E_SCALE == 3) {
            precise float a = v + float(LD3(in3.length() == 1 ? 0 : oc));
            v = a;
        }
    }
    if (act == ACT_RELU) return v > 0.0 ? v : 0.0;
    if (act == ACT_RELU_OP) return v < 0.0 ? 0.0 : v;
    if (act == ACT_RELU6) return v < 0.0 ? 0.0 : (v > 6.0 ? 6.0 : v);
    if (act == ACT_PRELU) {
        float a = has_alpha != 0 ? float(LD3(in3.length() == 1 ? 0 : oc)) : alpha;
        return v < 0.0 ? a * v : v;
    }
    if (act == ACT_LEAKYRELU) return v < 0.0 ? alpha * v : v;
    if (act == ACT_ELU) return v >= 0.0 ? v : exp(v) - 1.0;
    if (act == ACT_SIGMOID) return 1.0 / (1.0 + exp(-v));
    if (act == ACT_TANH) return tanh_safe(v);
    return v;
}
// an output's sum's way out: the scale, the bias, the activation, the clips
float finish(float acc, int oc) {
    return clips(epilogue(scaled(acc, oc, E_SCALE), oc, E_BIAS, E_ACT, E_ALPHAT, PF(19)), E_NCLIP, E_OP0, E_OP1,
                 E_HS);
}
#if OPC == 1
// (glk_program.c dw_variant) Four output channels an invocation, each its input
// channel's (ch_mult 1, out_c a multiple of 4): x, the filter and the output read and
// written four channels at once (vec4 bindings, or two words of halves), each
// channel's taps summed in OPC 0's order with the same mad1: the same bits, a quarter
// of the index arithmetic and of the load instructions.
// (LDQk, STQ, mad1v: the prelude, glk_program.c compile)
// (AHEAD) a row of N taps: every load issued before the sums (a tap outside the input
// reads an address inside it and is skipped, as the loop below skips it)
#define ROW_AHEAD(N)                                                                    \
    {                                                                                   \
        vec4 xv[N], wv[N];                                                              \
        bool ok[N];                                                                     \
        for (int kx = 0; kx < N; kx++) {                                                \
            int ix = x0 + kx * P[12];                                                   \
            ok[kx] = ix >= 0 && ix < in_w;                                              \
            xv[kx] = LDQ0((xrow + clamp(ix, 0, in_w - 1)) * c4 + q);                    \
            wv[kx] = LDQ1((ky * N + kx) * c4 + q);                                      \
        }                                                                               \
        for (int kx = 0; kx < N; kx++)                                                  \
            if (ok[kx]) acc = mad1v(xv[kx], wv[kx], acc);                                \
    }
void main() {
    uint gi = gidx();
    if (gi >= NT) return;
    int in_h = P[1], in_w = P[2], out_h = P[4], out_w = P[5], c4 = P[6] / 4;
    int k_h = P[7], k_w = P[8];
    int i = int(gi);
    int q = i % c4;
    int t = i / c4;
    int ox = t % out_w;
    t /= out_w;
    int oy = t % out_h;
    int b = t / out_h;
    int y0 = oy * P[9] - P[13], x0 = ox * P[10] - P[14];
    vec4 acc = vec4(0.0);
    for (int ky = 0; ky < k_h; ky++) {
        int iy = y0 + ky * P[11];
        if (iy < 0 || iy >= in_h) continue;
        int xrow = (b * in_h + iy) * in_w;
#if AHEAD
        if (k_w == 3) ROW_AHEAD(3)
        else if (k_w == 5) ROW_AHEAD(5)
        else
#endif
        for (int kx = 0; kx < k_w; kx++) {
            int ix = x0 + kx * P[12];
            if (ix < 0 || ix >= in_w) continue;
            acc = mad1v(LDQ0((xrow + ix) * c4 + q), LDQ1((ky * k_w + kx) * c4 + q), acc);
        }
    }
    int oc = 4 * q;
    vec4 r = vec4(finish(acc.x, oc), finish(acc.y, oc + 1), finish(acc.z, oc + 2), finish(acc.w, oc + 3));
    STQ(i, r);
}
#else
void main() {
    uint gi = gidx();
    if (gi >= NT) return;
    int in_h = P[1], in_w = P[2], in_c = P[3], out_h = P[4], out_w = P[5], out_c = P[6];
    int k_h = P[7], k_w = P[8];
    int i = int(gi);
    int oc = i % out_c;
    int t = i / out_c;
    int ox = t % out_w;
    t /= out_w;
    int oy = t % out_h;
    int b = t / out_h;
    int ic = oc / max(P[15], 1);
    int y0 = oy * P[9] - P[13], x0 = ox * P[10] - P[14];
    float acc = 0.0;
#if AHEAD
    // (on GPUs) a 3x3 window: its nine taps' loads issued before the sums (a
    // tap outside the input reads an address inside it and is skipped, as
    // below), in loops of constant length so that the arrays stay registers:
    // the same sums in the same order
    if (k_h == 3 && k_w == 3) {
        float xv[9], wv[9];
        bool ok[9];
        for (int q = 0; q < 9; q++) {
            int iy = y0 + (q / 3) * P[11], ix = x0 + (q % 3) * P[12];
            ok[q] = iy >= 0 && iy < in_h && ix >= 0 && ix < in_w;
            xv[q] = float(LD0(((b * in_h + clamp(iy, 0, in_h - 1)) * in_w + clamp(ix, 0, in_w - 1)) * in_c + ic));
            wv[q] = float(LD1(q * out_c + oc));
        }
        for (int q = 0; q < 9; q++)
            if (ok[q]) acc = mad1(xv[q], wv[q], acc);
        ST(gi, VO(finish(acc, oc)));
        return;
    }
#endif
    for (int ky = 0; ky < k_h; ky++) {
        int iy = y0 + ky * P[11];
        if (iy < 0 || iy >= in_h) continue;
        int xrow = (b * in_h + iy) * in_w;
        for (int kx = 0; kx < k_w; kx++) {
            int ix = x0 + kx * P[12];
            if (ix < 0 || ix >= in_w) continue;
            acc = mad1(float(LD0((xrow + ix) * in_c + ic)), float(LD1((ky * k_w + kx) * out_c + oc)), acc);
        }
    }
    ST(gi, VO(finish(acc, oc)));
}
#endif
