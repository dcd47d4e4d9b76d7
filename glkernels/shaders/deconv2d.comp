// CK_DECONV2D (Conv2DBackpropInput): P = ck_conv_p (see conv2d.comp) with in_* the dy
// dims, out_* the result's, pad_* the forward conv's. in0 dy, in1 filter
// [k_h, k_w, out_c, in_c]. Each output pixel gathers the dy pixels whose forward
// window tap lands on it, taps walked from the last one down as on the host.
float tanh_safe(float x) { float e = exp(-2.0 * abs(clamp(x, -20.0, 20.0))); return sign(x) * (1.0 - e) / (1.0 + e); }
// Bias add then activation, as ck_apply_act on the host. PReLU alphas come one
// per output channel, or one for all.
float epilogue(float v, int oc, int has_bias, int act, int has_alpha, float alpha) {
    if (has_bias != 0) v += float(in2[oc]);
    if (act == ACT_RELU) return v > 0.0 ? v : 0.0;
    if (act == ACT_RELU_OP) return v < 0.0 ? 0.0 : v;
    if (act == ACT_RELU6) return v < 0.0 ? 0.0 : (v > 6.0 ? 6.0 : v);
    if (act == ACT_PRELU) {
        float a = has_alpha != 0 ? float(in3[in3.length() == 1 ? 0 : oc]) : alpha;
        return v < 0.0 ? a * v : v;
    }
    if (act == ACT_LEAKYRELU) return v < 0.0 ? alpha * v : v;
    if (act == ACT_ELU) return v >= 0.0 ? v : exp(v) - 1.0;
    if (act == ACT_SIGMOID) return 1.0 / (1.0 + exp(-v));
    if (act == ACT_TANH) return tanh_safe(v);
    return v;
}
#if OPC == 1
// (glk_program.c quad_variant) Four output channels an invocation (out_c and in_c
// multiples of 4): dy read four input channels a load and used for four outputs, each
// output's filter row read four input channels a load (vec4 bindings, or two words of
// halves), the output written four at once; each output's sum the one below, tap by tap
// and channel by channel in the same order with the same dd_mad: the same bits.
// (LDQk, STQ, mad1v: the prelude, glk_program.c compile)
vec2 dd_mad4(vec4 x, vec4 w, vec2 d) {
    return dd_mad(x.w, w.w, dd_mad(x.z, w.z, dd_mad(x.y, w.y, dd_mad(x.x, w.x, d))));
}
void main() {
    uint gq = gidx();
    if (gq >= NT) return;
    int in_h = P[1], in_w = P[2], out_h = P[4], out_w = P[5], out_c = P[6], i4 = P[3] / 4, c4 = P[6] / 4;
    int k_h = P[7], k_w = P[8], s_h = P[9], s_w = P[10];
    int i = int(gq);
    int q = i % c4;
    int t = i / c4;
    int ox = t % out_w;
    t /= out_w;
    int oy = t % out_h;
    int b = t / out_h;
    int y0 = oy + P[13], x0 = ox + P[14];
    vec2 d0 = vec2(0.0), d1 = vec2(0.0), d2 = vec2(0.0), d3 = vec2(0.0);
    for (int fy = k_h - 1; fy >= 0; fy--) {
        int ny = y0 - fy * P[11];
        if (ny < 0) continue;
        int iy = ny / s_h;
        if (iy * s_h != ny || iy >= in_h) continue;
        for (int fx = k_w - 1; fx >= 0; fx--) {
            int nx = x0 - fx * P[12];
            if (nx < 0) continue;
            int ix = nx / s_w;
            if (ix * s_w != nx || ix >= in_w) continue;
            int di = ((b * in_h + iy) * in_w + ix) * i4;
            int wi = ((fy * k_w + fx) * out_c + 4 * q) * i4; // output channel 4q's row, in fours
            for (int r = 0; r < i4; r++) {
                vec4 xv = LDQ0(di + r);
                d0 = dd_mad4(xv, LDQ1(wi + r), d0);
                d1 = dd_mad4(xv, LDQ1(wi + i4 + r), d1);
                d2 = dd_mad4(xv, LDQ1(wi + 2 * i4 + r), d2);
                d3 = dd_mad4(xv, LDQ1(wi + 3 * i4 + r), d3);
            }
        }
    }
    int oc = 4 * q;
    precise vec4 acc = vec4(d0.x + d0.y, d1.x + d1.y, d2.x + d2.y, d3.x + d3.y);
    vec4 v = vec4(epilogue(acc.x, oc, P[16], P[17], P[18], PF(19)), epilogue(acc.y, oc + 1, P[16], P[17], P[18], PF(19)),
                  epilogue(acc.z, oc + 2, P[16], P[17], P[18], PF(19)), epilogue(acc.w, oc + 3, P[16], P[17], P[18], PF(19)));
    STQ(i, v);
}
#else
void main() {
    uint gi = gidx();
    if (gi >= NT) return;
    int in_h = P[1], in_w = P[2], in_c = P[3], out_h = P[4], out_w = P[5], out_c = P[6];
    int k_h = P[7], k_w = P[8], s_h = P[9], s_w = P[10];
    int i = int(gi);
    int oc = i % out_c;
    int t = i / out_c;
    int ox = t % out_w;
    t /= out_w;
    int oy = t % out_h;
    int b = t / out_h;
    int y0 = oy + P[13], x0 = ox + P[14];
    vec2 dot = vec2(0.0);  // summed like a double, rounded once as tfjs
    for (int fy = k_h - 1; fy >= 0; fy--) {
        int ny = y0 - fy * P[11];
        if (ny < 0) continue;
        int iy = ny / s_h;
        if (iy * s_h != ny || iy >= in_h) continue;
        for (int fx = k_w - 1; fx >= 0; fx--) {
            int nx = x0 - fx * P[12];
            if (nx < 0) continue;
            int ix = nx / s_w;
            if (ix * s_w != nx || ix >= in_w) continue;
            int di = ((b * in_h + iy) * in_w + ix) * in_c;
            int wi = ((fy * k_w + fx) * out_c + oc) * in_c;
            for (int d = 0; d < in_c; d++)
                dot = dd_mad(float(LD0(di + d)), float(LD1(wi + d)), dot);
        }
    }
    precise float acc = dot.x + dot.y;
    ST(gi, VO(epilogue(acc, oc, P[16], P[17], P[18], PF(19))));
}
#endif
