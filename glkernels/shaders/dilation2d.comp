// CK_DILATION2D: P = ck_conv_p {0 n, 1 in_h, 2 in_w, 3 in_c, 4 out_h, 5 out_w, 6 out_c, 7 k_h,
// 8 k_w, 9 stride_h, 10 stride_w, 11 dil_h, 12 dil_w, 13 pad_top, 14 pad_left}. in0 x NHWC,
// in1 filter [k_h, k_w, c]. One invocation per output element: the max of x + filter over
// the in-bounds taps, from tfjs's start -2^53 (Number.MIN_SAFE_INTEGER as a float32), kept
// by `v > m` so NaN never wins, as the host reference.
void main() {
    uint gi = gidx();
    if (gi >= NT) return;
    int in_h = P[1], in_w = P[2], c = P[3], out_h = P[4], out_w = P[5];
    int k_h = P[7], k_w = P[8];
    int i = int(gi);
    int ch = i % c;
    int t = i / c;
    int ox = t % out_w;
    t /= out_w;
    int oy = t % out_h;
    int b = t / out_h;
    float m = -9007199254740992.0;
    for (int ky = 0; ky < k_h; ky++) {
        int iy = oy * P[9] - P[13] + ky * P[11];
        if (iy < 0 || iy >= in_h) continue;
        for (int kx = 0; kx < k_w; kx++) {
            int ix = ox * P[10] - P[14] + kx * P[12];
            if (ix < 0 || ix >= in_w) continue;
            precise float v = float(in0[((b * in_h + iy) * in_w + ix) * c + ch]) +
                              float(in1[(ky * k_w + kx) * c + ch]);
            if (v > m) m = v;
        }
    }
    outv[gi] = TO(m);
}
