// CK_ARGMAX: P = {outer, n, inner, is_min, in_dtype}. Input [outer, n, inner], int32
// output [outer, inner]. Strict comparison: ties keep the first index, as tfjs;
// a NaN is never chosen and a leading NaN never displaced (value > NaN is
// false in JS; GLSL does not promise IEEE comparisons with NaN, so tested).
bool nan_(T0 v) { return isnan(float(v)); }
void main() {
    uint i = gidx();
    if (i >= NT) return;
    int n = P[1], inner = P[2];
    int o = int(i) / inner;
    int base = o * n * inner + (int(i) - o * inner);
    T0 m = in0[base];
    int best = 0;
    if (P[3] != 0) {
        for (int j = 1; j < n; j++) {
            T0 v = in0[base + j * inner];
            if (v < m && !nan_(v) && !nan_(m)) { m = v; best = j; }
        }
    } else {
        for (int j = 1; j < n; j++) {
            T0 v = in0[base + j * inner];
            if (v > m && !nan_(v) && !nan_(m)) { m = v; best = j; }
        }
    }
    outv[i] = TO(best);
}
