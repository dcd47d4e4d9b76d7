// CK_CONV2D: P = ck_conv_p {0 n, 1 in_h, 2 in_w, 3 in_c, 4 out_h, 5 out_w, 6 out_c, 7 k_h, 8 k_w,
// 9 stride_h, 10 stride_w, 11 dil_h, 12 dil_w, 13 pad_top, 14 pad_left, 15 ch_mult, 16 has_bias,
// 17 act, 18 has_alpha_tensor, 19 alpha, 20 n_clip, 21 clip_op0, 22 clip_op1, 23 hswish, 24 has_scale,
// 25 whole_out, 26 has_res}. in0 x NHWC, in1 filter HWIO, in2 bias, in3 alpha (has_scale 3: the shift), in4
// and in5 the clips' (or hard swish's) scalars (clips(), the prelude), in6 the scale (has_scale 1: scaled(),
// before the bias; 2 and 3: epilogue(), after it), in7 a residual added after the bias (and any scale).
// One invocation per output element; sums taps (ky, kx, ic) in the host's order.
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
#define E_RES P[26]
#endif
float tanh_safe(float x) { float e = exp(-2.0 * abs(clamp(x, -20.0, 20.0))); return sign(x) * (1.0 - e) / (1.0 + e); }
// Bias add, a fused residual's add (E_RES: output element gi of in7, one float32
// add as the Add step's), then activation, as ck_apply_act on the host. PReLU
// alphas come one per output channel, or one for all.
float epilogue(float v, int oc, int gi, int has_bias, int act, int has_alpha, float alpha) {
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
    if (E_RES != 0) {
        precise float r = v + float(LD7(gi));
        v = r;
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
// output element i's channel, batch and window corner (y0, x0)
void out_pos(int i, out int oc, out int b, out int y0, out int x0) {
    int out_h = P[4], out_w = P[5], out_c = P[6];
    oc = i % out_c;
    int t = i / out_c;
    int ox = t % out_w;
    t /= out_w;
    int oy = t % out_h;
    b = t / out_h;
    y0 = oy * P[9] - P[13];
    x0 = ox * P[10] - P[14];
}
// output element gi's sum's way out: the scale, the bias, the residual, the activation,
// the clips, the store's type
VO finish(float acc, int oc, int gi) {
    return VO(clips(epilogue(scaled(acc, oc, E_SCALE), oc, gi, E_BIAS, E_ACT, E_ALPHAT, PF(19)), E_NCLIP, E_OP0,
                    E_OP1, E_HS));
}
#if OPC == 1
// The tiled variant (glk.c conv_variant): a workgroup makes a CT_BM x CT_BN tile of the
// output as a GEMM (rows: output pixels, columns: output channels, k: the taps
// (ky, kx, ic) in the order above), staging CT_BK taps of x and of the filter in
// shared memory; each invocation makes CT_TM x CT_TN outputs, rows CT_BM / CT_TM apart
// and columns CT_BN / CT_TN apart. Each output still sums its taps one by one in
// the order above, the same mad1: a tap in the padding adds 0 * w, which leaves
// the sum as it was (the sum is never -0), so its bits are the plain variant's
// (for finite weights).
#define CT_RM (CT_BM / CT_TM)
#define CT_RN (CT_BN / CT_TN)
#define CT_AR (CT_BM * CT_BK / 64)
#define CT_BR (CT_BN * CT_BK / 64)
shared float As[CT_BK][CT_BM + 1];
shared float Bs[CT_BK][CT_BN];
void main() {
    int in_h = P[1], in_w = P[2], in_c = P[3], out_h = P[4], out_w = P[5], out_c = P[6];
    int k_w = P[8], dil_h = P[11], dil_w = P[12];
    int M = P[0] * out_h * out_w, N = out_c, K = P[7] * k_w * in_c;
    int lane = int(gl_LocalInvocationID.x);
    int wg = int(gidx() / 64u);
    int tiles_n = (N + CT_BN - 1) / CT_BN;
    if (wg >= ((M + CT_BM - 1) / CT_BM) * tiles_n) return; // the whole workgroup
    int m0 = (wg / tiles_n) * CT_BM, n0 = (wg % tiles_n) * CT_BN;
    // the rows of x this invocation stages: tap lane % CT_BK of rows lane / CT_BK + 64 / CT_BK * r
    int akl = lane % CT_BK;
    int abase[CT_AR], ay[CT_AR], ax[CT_AR];
    for (int r = 0; r < CT_AR; r++) {
        int m = m0 + lane / CT_BK + (64 / CT_BK) * r;
        if (m < M) {
            int ox = m % out_w, t = m / out_w, oy = t % out_h, b = t / out_h;
            abase[r] = b * in_h;
            ay[r] = oy * P[9] - P[13];
            ax[r] = ox * P[10] - P[14];
        } else {
            abase[r] = -1; ay[r] = 0; ax[r] = 0;
        }
    }
    int bnl = lane % CT_BN, bkl = lane / CT_BN;
    int tn = lane % CT_RN, tm = lane / CT_RN;
    float acc[CT_TM][CT_TN];
    for (int i = 0; i < CT_TM; i++)
        for (int j = 0; j < CT_TN; j++) acc[i][j] = 0.0;
    for (int k0 = 0; k0 < K; k0 += CT_BK) {
        int k = k0 + akl;
        int ic = k % in_c, tap = k / in_c;
        int ky = tap / k_w, kx = tap % k_w;
        for (int r = 0; r < CT_AR; r++) {
            int iy = ay[r] + ky * dil_h, ix = ax[r] + kx * dil_w;
            float v = 0.0;
            if (k < K && abase[r] >= 0 && iy >= 0 && iy < in_h && ix >= 0 && ix < in_w)
                v = float(LD0(((abase[r] + iy) * in_w + ix) * in_c + ic));
            As[akl][lane / CT_BK + (64 / CT_BK) * r] = v;
        }
        for (int r = 0; r < CT_BR; r++) {
            int kb = k0 + bkl + (64 / CT_BN) * r, n = n0 + bnl;
            Bs[bkl + (64 / CT_BN) * r][bnl] = (kb < K && n < N) ? float(LD1(kb * N + n)) : 0.0;
        }
        barrier();
        for (int kk = 0; kk < CT_BK; kk++) {
            float a[CT_TM], w[CT_TN];
            for (int i = 0; i < CT_TM; i++) a[i] = As[kk][tm + CT_RM * i];
            for (int j = 0; j < CT_TN; j++) w[j] = Bs[kk][tn + CT_RN * j];
            for (int i = 0; i < CT_TM; i++)
                for (int j = 0; j < CT_TN; j++) acc[i][j] = mad1(a[i], w[j], acc[i][j]);
        }
        barrier();
    }
    for (int i = 0; i < CT_TM; i++) {
        int m = m0 + tm + CT_RM * i;
        if (m >= M) continue;
        for (int j = 0; j < CT_TN; j++) {
            int oc = n0 + tn + CT_RN * j;
            if (oc < N)
                ST(m * N + oc, finish(acc[i][j], oc, m * N + oc));
        }
    }
}
#elif OPC == 2
// The split variant (glk.c conv_variant): CL_S invocations of a workgroup share an
// output, each summing one of CL_S runs of its taps (the order above cut into runs of
// ceil(K / CL_S)) one by one, the runs' sums then added in a fixed tree ((s0 + s1) +
// (s2 + s3)) ...; CL_S hangs on K and the whole op's outputs alone, which no split of
// rows or channels changes.
shared float part[64];
void main() {
    int in_h = P[1], in_w = P[2], in_c = P[3], out_c = P[6];
    int k_w = P[8];
    int K = P[7] * k_w * in_c, per = 64 / CL_S;
    int lane = int(gl_LocalInvocationID.x), sl = lane / per;
    int o = int(gidx() / 64u) * per + lane % per;
    bool live = uint(o) < NT / uint(CL_S);
    float acc = 0.0;
    int oc = 0;
    if (live) {
        int b, y0, x0;
        out_pos(o, oc, b, y0, x0);
        int chunk = (K + CL_S - 1) / CL_S;
        int k = sl * chunk, ke = min(K, k + chunk);
        int ic = k % in_c, tap = k / in_c;
        int ky = tap / k_w, kx = tap % k_w;
        while (k < ke) {
            int run = min(in_c - ic, ke - k);
            int iy = y0 + ky * P[11], ix = x0 + kx * P[12];
            if (iy >= 0 && iy < in_h && ix >= 0 && ix < in_w) {
                int xi = ((b * in_h + iy) * in_w + ix) * in_c + ic;
                int wi = k * out_c + oc;
                for (int r = 0; r < run; r++) {
                    acc = mad1(float(LD0(xi + r)), float(LD1(wi)), acc);
                    wi += out_c;
                }
            }
            k += run;
            ic = 0;
            if (++kx == k_w) { kx = 0; ky++; }
        }
    }
    part[lane] = acc;
    barrier();
    for (int h = 1; h < CL_S; h *= 2) {
        if (sl % (2 * h) == 0) {
            precise float v = part[lane] + part[lane + h * per];
            part[lane] = v;
        }
        barrier();
    }
    if (live && sl == 0)
        ST(o, finish(part[lane], oc, o));
}
#elif OPC == 4
// (glk_program.c conv_oc4) Four output channels an invocation (out_c and in_c multiples
// of 4): x read four channels a load and used for four outputs, the filter read four
// output channels a load (vec4 bindings, or two words of halves), the output written
// four at once; each output's taps summed in the plain order with the same mad1: the
// same bits.
// (LDQk, STQ, mad1v: the prelude, glk_program.c compile)
vec4 mad4s(float x, vec4 w, vec4 a) { return mad1v(vec4(x), w, a); }
void main() {
    uint gq = gidx();
    if (gq >= NT) return;
    int in_h = P[1], in_w = P[2], in_c = P[3], out_h = P[4], out_w = P[5], c4 = P[6] / 4, i4 = P[3] / 4;
    int k_h = P[7], k_w = P[8];
    int i = int(gq);
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
        for (int kx = 0; kx < k_w; kx++) {
            int ix = x0 + kx * P[12];
            if (ix < 0 || ix >= in_w) continue;
            int xi = ((b * in_h + iy) * in_w + ix) * i4;
            int wi = (ky * k_w + kx) * in_c * c4 + q; // filter rows of this tap, in fours
            int r = 0;
            // (AHEAD, on GPUs) eight input channels a round, its loads before its sums
            for (; AHEAD != 0 && r + 2 <= i4; r += 2) {
                vec4 xv[2], wv[8];
                for (int u = 0; u < 2; u++) xv[u] = LDQ0(xi + r + u);
                for (int u = 0; u < 8; u++) wv[u] = LDQ1(wi + u * c4);
                for (int u = 0; u < 2; u++) {
                    acc = mad4s(xv[u].x, wv[4 * u], acc);
                    acc = mad4s(xv[u].y, wv[4 * u + 1], acc);
                    acc = mad4s(xv[u].z, wv[4 * u + 2], acc);
                    acc = mad4s(xv[u].w, wv[4 * u + 3], acc);
                }
                wi += 8 * c4;
            }
            for (; r < i4; r++) {
                vec4 xv = LDQ0(xi + r);
                acc = mad4s(xv.x, LDQ1(wi), acc);
                acc = mad4s(xv.y, LDQ1(wi + c4), acc);
                acc = mad4s(xv.z, LDQ1(wi + 2 * c4), acc);
                acc = mad4s(xv.w, LDQ1(wi + 3 * c4), acc);
                wi += 4 * c4;
            }
        }
    }
    int oc = 4 * q, gi = 4 * i;
    vec4 v = vec4(finish(acc.x, oc, gi), finish(acc.y, oc + 1, gi + 1), finish(acc.z, oc + 2, gi + 2),
                  finish(acc.w, oc + 3, gi + 3));
    STQ(i, v);
}
#else
// The plain variant (OPC 0), or (OPC 3, glk.c conv_variant) the same reading x four
// channels a load (in0 is vec4 then, or two words of halves: in_c a multiple of 4,
// the binding 16-byte aligned): the same sums in the same order, fewer loads.
// (x four channels a load: LDQ0, the prelude's; i counts fours)
void main() {
    uint gi = gidx();
    if (gi >= NT) return;
    int in_h = P[1], in_w = P[2], in_c = P[3], out_c = P[6];
    int k_h = P[7], k_w = P[8];
    int oc, b, y0, x0;
    out_pos(int(gi), oc, b, y0, x0);
    float acc = 0.0;
    for (int ky = 0; ky < k_h; ky++) {
        int iy = y0 + ky * P[11];
        if (iy < 0 || iy >= in_h) continue;
        for (int kx = 0; kx < k_w; kx++) {
            int ix = x0 + kx * P[12];
            if (ix < 0 || ix >= in_w) continue;
            int wi = (ky * k_w + kx) * in_c * out_c + oc;
#if OPC == 3
            int xi = ((b * in_h + iy) * in_w + ix) * (in_c / 4);
            int q = 0;
            // (AHEAD, on GPUs) sixteen channels a round, every load of the round issued
            // before its sums (the same sums in the same order: the loads only come
            // earlier, so more of them are in flight where few invocations are, as in a
            // 1x1 conv of one pixel)
            for (; AHEAD != 0 && q + 4 <= in_c / 4; q += 4) {
                vec4 xv[4];
                float wv[16];
                for (int u = 0; u < 4; u++) xv[u] = LDQ0(xi + q + u);
                for (int u = 0; u < 16; u++) wv[u] = float(LD1(wi + u * out_c));
                for (int u = 0; u < 4; u++) {
                    acc = mad1(xv[u].x, wv[4 * u], acc);
                    acc = mad1(xv[u].y, wv[4 * u + 1], acc);
                    acc = mad1(xv[u].z, wv[4 * u + 2], acc);
                    acc = mad1(xv[u].w, wv[4 * u + 3], acc);
                }
                wi += 16 * out_c;
            }
            for (; q < in_c / 4; q++) {
                vec4 xv = LDQ0(xi + q);
                acc = mad1(xv.x, float(LD1(wi)), acc);
                acc = mad1(xv.y, float(LD1(wi + out_c)), acc);
                acc = mad1(xv.z, float(LD1(wi + 2 * out_c)), acc);
                acc = mad1(xv.w, float(LD1(wi + 3 * out_c)), acc);
                wi += 4 * out_c;
            }
#else
            int xi = ((b * in_h + iy) * in_w + ix) * in_c;
            int ic = 0;
            for (; AHEAD != 0 && ic + 8 <= in_c; ic += 8) { // eight a round, the loads first (as above)
                float xv[8], wv[8];
                for (int u = 0; u < 8; u++) {
                    xv[u] = float(LD0(xi + ic + u));
                    wv[u] = float(LD1(wi + u * out_c));
                }
                for (int u = 0; u < 8; u++) acc = mad1(xv[u], wv[u], acc);
                wi += 8 * out_c;
            }
            for (; ic < in_c; ic++) {
                acc = mad1(float(LD0(xi + ic)), float(LD1(wi)), acc);
                wi += out_c;
            }
#endif
        }
    }
    ST(gi, finish(acc, oc, int(gi)));
}
#endif
