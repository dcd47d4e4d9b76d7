// CK_ARGMAX: P = {outer, n, inner, is_min, in_dtype, lanes}. Input [outer, n, inner],
// int32 output [outer, inner]. Strict comparison: ties keep the first index, as tfjs;
// a NaN is never chosen and a leading NaN never displaced (value > NaN is
// false in JS; GLSL does not promise IEEE comparisons with NaN, so tested).
bool nan_(T0 v) { return isnan(float(v)); }
// Is v (at index j) a better pick than m (at index k, k < 0: none yet)? Strictly
// larger (smaller for ArgMin), or equal at a lower index: so the first index of
// the extreme value wins, whichever lane met it first.
bool better(T0 v, int j, T0 m, int k) {
    if (k < 0) return true;
    if (P[3] != 0 ? v < m : v > m) return true;
    return v == m && j < k;
}
// P[5] lanes (CK_REDUCE_LANES, n >= CK_REDUCE_WIDE): one workgroup of 64 an output
// element t; lane l picks among the j with j % 64 == l, NaNs skipped, then the 64
// picks are combined in a tree by better(). The first index of the extreme value
// among the non-NaN ones is what the serial scan below finds, unless element 0 is
// NaN: then the scan never moves from it, and neither does this.
shared T0 lane_v[64];
shared int lane_j[64];
void main_lanes(uint gi) {
    uint lane = gl_LocalInvocationID.x;
    int n = P[1], inner = P[2];
    int t = int(gi / 64u);
    int o = t / inner;
    int base = o * n * inner + (t - o * inner);
    T0 m = in0[base];
    int best = -1;
    for (int j = int(lane); j < n; j += 64) {
        T0 v = in0[base + j * inner];
        if (!nan_(v) && better(v, j, m, best)) { m = v; best = j; }
    }
    lane_v[lane] = m;
    lane_j[lane] = best;
    memoryBarrierShared();
    barrier();
    for (uint h = 32u; h > 0u; h >>= 1u) {
        if (lane < h) {
            int k = lane_j[lane + h];
            if (k >= 0 && better(lane_v[lane + h], k, lane_v[lane], lane_j[lane])) {
                lane_v[lane] = lane_v[lane + h];
                lane_j[lane] = k;
            }
        }
        memoryBarrierShared();
        barrier();
    }
    if (lane == 0u) outv[t] = TO(nan_(in0[base]) || lane_j[0] < 0 ? 0 : lane_j[0]);
}
void main() {
    uint i = gidx();
    if (i >= NT) return; /* with lanes NT is a multiple of 64: whole workgroups return */
    if (P[5] != 0) {
        main_lanes(i);
        return;
    }
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
