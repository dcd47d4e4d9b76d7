// CK_CONV3D: P = ck_conv3d_p {0 n, 1 in_d, 2 in_h, 3 in_w, 4 in_c, 5 out_d, 6 out_h, 7 out_w,
// 8 out_c, 9 k_d, 10 k_h, 11 k_w, 12 stride_d, 13 stride_h, 14 stride_w, 15 dil_d, 16 dil_h,
// 17 dil_w, 18 pad_front, 19 pad_top, 20 pad_left}. in0 x NDHWC, in1 filter DHWIO.
// One invocation per output element; sums taps (kz, ky, kx, ic) in the host's order,
// each product added and rounded once, as tfjs's float32 `y += x * w`.
void main() {
    uint gi = gidx();
    if (gi >= NT) return;
    int in_d = P[1], in_h = P[2], in_w = P[3], in_c = P[4];
    int out_d = P[5], out_h = P[6], out_w = P[7], out_c = P[8];
    int k_d = P[9], k_h = P[10], k_w = P[11];
    int i = int(gi);
    int oc = i % out_c;
    int t = i / out_c;
    int ox = t % out_w;
    t /= out_w;
    int oy = t % out_h;
    t /= out_h;
    int oz = t % out_d;
    int b = t / out_d;
    int z0 = oz * P[12] - P[18], y0 = oy * P[13] - P[19], x0 = ox * P[14] - P[20];
    float acc = 0.0;
    for (int kz = 0; kz < k_d; kz++) {
        int iz = z0 + kz * P[15];
        if (iz < 0 || iz >= in_d) continue;
        for (int ky = 0; ky < k_h; ky++) {
            int iy = y0 + ky * P[16];
            if (iy < 0 || iy >= in_h) continue;
            for (int kx = 0; kx < k_w; kx++) {
                int ix = x0 + kx * P[17];
                if (ix < 0 || ix >= in_w) continue;
                int xi = (((b * in_d + iz) * in_h + iy) * in_w + ix) * in_c;
                int wi = ((kz * k_h + ky) * k_w + kx) * in_c * out_c + oc;
                for (int ic = 0; ic < in_c; ic++) {
                    acc = mad1(float(in0[xi + ic]), float(in1[wi]), acc);
                    wi += out_c;
                }
            }
        }
    }
    outv[gi] = TO(acc);
}
