// CK_GATHER: P = {outer, n, inner, k}; out[o, j, i] = x[o, idx[j], i], 0 where
// idx[j] is outside [0, n). Indices may be int or float (truncated, as tfjs casts).
void main() {
    uint g = gidx();
    if (g >= NT) return;
    int n = P[1], inner = P[2], k = P[3];
    int e = int(g);
    int t = e / inner;
    int i = e - t * inner;
    int a = t / k;
    int j = t - a * k;
    int idx = int(LD1(j));
    if (idx >= 0 && idx < n) ST(g, VO(LD0((a * n + idx) * inner + i)));
    else ST(g, VO(0));
}
