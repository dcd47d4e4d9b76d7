// CK_CROP_RESIZE: P = {n, batch, in_h, in_w, c, crop_h, crop_w, bilinear,
// extrapolation}; in0 the image (NHWC), in1 the table CK_CROP_BOXES made on the
// host: per box [image, crop_h x (lo, hi, lerp bits), crop_w x (lo, hi, lerp
// bits)], with -1 extrapolated, -2 NaN, -3 a skipped box (CK_CROP_* in
// core/core.h). One invocation per output element; ck_host_crop_resize
// (core/op_image.c) is the same arithmetic.
void main() {
    uint o = gidx();
    if (o >= NT) return;
    int in_h = P[2], in_w = P[3], c = P[4], ch = P[5], cw = P[6];
    int t = int(o);
    int k = t % c; t /= c;
    int x = t % cw; t /= cw;
    int y = t % ch;
    int b = t / ch;
    int row = b * (1 + 3 * (ch + cw));
    int img = in1[row];
    int ya = row + 1 + 3 * y, xa = row + 1 + 3 * ch + 3 * x;
    int y0 = in1[ya], x0 = in1[xa];
    if (img == -3) {
        outv[o] = 0.0;
    } else if (y0 == -1 || x0 == -1) {
        outv[o] = PF(8);
    } else if (img < 0 || y0 < 0 || x0 < 0) {
        outv[o] = intBitsToFloat(0x7fc00000);
    } else if (P[7] == 0) {
        outv[o] = float(in0[((img * in_h + y0) * in_w + x0) * c + k]);
    } else {
        int y1 = in1[ya + 1], x1 = in1[xa + 1];
        float fy = intBitsToFloat(in1[ya + 2]), fx = intBitsToFloat(in1[xa + 2]);
        float tl = float(in0[((img * in_h + y0) * in_w + x0) * c + k]);
        float tr = float(in0[((img * in_h + y0) * in_w + x1) * c + k]);
        float bl = float(in0[((img * in_h + y1) * in_w + x0) * c + k]);
        float br = float(in0[((img * in_h + y1) * in_w + x1) * c + k]);
        // precise: no fma contraction, so the GPU rounds as the host reference does
        precise float top = tl + (tr - tl) * fx;
        precise float bot = bl + (br - bl) * fx;
        precise float r = top + (bot - top) * fy;
        outv[o] = r;
    }
}
