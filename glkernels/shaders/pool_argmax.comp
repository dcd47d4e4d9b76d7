// CK_POOL_ARGMAX: P = ck_pool_p {0 is_max, 1 n, 2 in_h, 3 in_w, 4 c, 5 out_h, 6 out_w, 7 k_h,
// 8 k_w, 9 stride_h, 10 stride_w, 11 pad_top, 12 pad_left, 13 include_batch}. One invocation
// per NHWC output element: the flat input position of the first in-bounds max (tfjs's
// maxPoolPositions: from -inf, `v > m`, so NaN never wins; -1 when nothing does), counting
// the batch when include_batch is set.
void main() {
    uint o = gidx();
    if (o >= NT) return;
    int c = P[4], out_h = P[5], out_w = P[6], in_h = P[2], in_w = P[3];
    int t = int(o);
    int ch = t % c; t /= c;
    int ox = t % out_w; t /= out_w;
    int oy = t % out_h;
    int b = t / out_h;
    int y0 = oy * P[9] - P[11], x0 = ox * P[10] - P[12];
    int ylo = max(y0, 0), yhi = min(y0 + P[7], in_h);
    int xlo = max(x0, 0), xhi = min(x0 + P[8], in_w);
    float m = intBitsToFloat(int(0xff800000u));
    int pos = -1;
    for (int y = ylo; y < yhi; y++)
        for (int x = xlo; x < xhi; x++) {
            float v = float(in0[((b * in_h + y) * in_w + x) * c + ch]);
            if (v > m) {
                m = v;
                pos = (y * in_w + x) * c + ch;
            }
        }
    if (pos >= 0 && P[13] != 0)
        pos += b * in_h * in_w * c;
    outv[o] = TO(pos);
}
