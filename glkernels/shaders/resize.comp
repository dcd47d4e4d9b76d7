// CK_RESIZE: P = {bilinear, n, in_h, in_w, c, out_h, out_w, align_corners,
// half_pixel_centers, y0, in_y0, rows, in_rows}: a row tile computes output rows
// y0.. of the whole resize (rows of them) from input rows in_y0.. (in_rows). One invocation per NHWC output element. Source coordinates are
// exact rationals num/den in integers (see resize_src in core/op_pool_reduce.c): the
// floors are the same on every GPU, since GLSL float division is not exact.
int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
void resize_src(int r, int in_, int out_, bool bil, out int num, out int den) {
    bool align = P[7] != 0 && out_ > 1;
    int in_eff = align ? in_ - 1 : in_, out_eff = align ? out_ - 1 : out_;
    if (P[8] != 0) {
        num = in_eff * (2 * r + 1) - (bil ? out_eff : 0);
        den = 2 * out_eff;
    } else {
        num = in_eff * r;
        den = out_eff;
    }
}
void bilinear_axis(int r, int in_, int out_, out int lo, out int hi, out float frac) {
    int num, den;
    resize_src(r, in_, out_, true, num, den);
    int fl = floor_div(num, den);
    int ce = fl + (num != fl * den ? 1 : 0);
    lo = clamp(fl, 0, in_ - 1);
    hi = min(ce, in_ - 1);
    frac = float(num - lo * den) / float(den);
}
int nearest_axis(int r, int in_, int out_) {
    int num, den;
    resize_src(r, in_, out_, false, num, den);
    int i = P[7] != 0 ? (2 * num + den) / (2 * den) : num / den;
    i = min(i, in_ - 1);
    if (P[8] != 0) i = max(i, 0);
    return i;
}
void main() {
    uint o = gidx();
    if (o >= NT) return;
    int in_h = P[2], in_w = P[3], c = P[4], out_h = P[5], out_w = P[6];
    int rows = P[11] != 0 ? P[11] : out_h, in_rows = P[11] != 0 ? P[12] : in_h;
    int t = int(o);
    int ch = t % c; t /= c;
    int ox = t % out_w; t /= out_w;
    int oy = t % rows + P[9];
    int b = t / rows;
    int bo = b * in_rows - P[10];
    if (P[0] != 0) {
        int y0, y1, x0, x1;
        float fy, fx;
        bilinear_axis(oy, in_h, out_h, y0, y1, fy);
        bilinear_axis(ox, in_w, out_w, x0, x1, fx);
        float tl = float(LD0(((bo + y0) * in_w + x0) * c + ch));
        float tr = float(LD0(((bo + y0) * in_w + x1) * c + ch));
        float bl = float(LD0(((bo + y1) * in_w + x0) * c + ch));
        float br = float(LD0(((bo + y1) * in_w + x1) * c + ch));
        float top = tl + (tr - tl) * fx;
        float bot = bl + (br - bl) * fx;
        ST(o, VO(top + (bot - top) * fy));
    } else {
        int sy = nearest_axis(oy, in_h, out_h);
        int sx = nearest_axis(ox, in_w, out_w);
        ST(o, VO(LD0(((bo + sy) * in_w + sx) * c + ch)));
    }
}
