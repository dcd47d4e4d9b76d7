// CK_LRN: P = {outer, c, radius, bias, alpha, beta} (the last three float bits).
// out = x * pow(bias + alpha * sum, -beta), sum of the squares of channels
// [c - radius, c + radius] clipped to the row, added in channel order. tfjs adds
// in float64: where the float32 sum overflows while the values are finite, the
// window is scaled by its largest magnitude and the power taken in log2.
void main() {
    uint i = gidx();
    if (i >= NT) return;
    int c = P[1], r = P[2];
    int ch = int(i) % c, row = int(i) - ch;
    int lo = max(0, ch - r), hi = min(ch + r, c - 1);
    float s = 0.0, m = 0.0;
    for (int k = lo; k <= hi; k++) {
        float z = float(in0[row + k]);
        s += z * z;
        m = max(m, abs(z));
    }
    float x = float(in0[i]), b = PF(3) + PF(4) * s, y;
    if (isnan(b) || isnan(x)) {
        y = b + x; // NaN, as tfjs's float64 product gives
    } else if (isinf(b) && !isinf(m)) {
        float t = 0.0;
        for (int k = lo; k <= hi; k++) {
            float z = float(in0[row + k]) / m;
            t += z * z;
        }
        float lb = 2.0 * log2(m) + log2(PF(4) * t + PF(3) / (m * m));
        y = x == 0.0 ? x : sign(x) * exp2(log2(abs(x)) - PF(5) * lb);
    } else {
        y = x * pow(b, -PF(5));
    }
    outv[i] = TO(y);
}
