// CK_SEARCH: P = {batch, n, nv, upper}; out[b, i] = the first j of sorted row b
// with row[j] >= v (upper: > v), v = values[b, i]; tfjs's binary search, so a
// NaN anywhere compares false.
void main() {
    uint g = gidx();
    if (g >= NT) return;
    int n = P[1], nv = P[2];
    int b = int(g) / nv;
    T1 v = in1[g];
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        T0 a = in0[b * n + mid];
        bool right = P[3] != 0 ? a <= T0(v) : a < T0(v);
        if (right) lo = mid + 1;
        else hi = mid;
    }
    outv[g] = TO(hi);
}
