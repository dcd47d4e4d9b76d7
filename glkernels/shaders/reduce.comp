// CK_REDUCE: P = {op, outer, n, inner, dtype, divisor, has_init, carry, lanes, j0, pairs,
// post_div}; OPC = op. Input
// [outer, n, inner], output [outer, inner], one invocation per output element, reducing
// j = 0..n-1 in order like the host reference. has_init: start from in1[i] (the result
// of the parts before, in a tiled reduction) instead of the identity. TO int: wrapping int32 arithmetic (tfjs stores its
// exact sum into an Int32Array). Float Sum, Mean and Prod accumulate in a float-float
// pair (tfjs: a JS number), rounded to float32 once; carry bit 0: in1 holds the running
// pairs, bit 1: so does the output (2 floats an element). pairs (a float Sum): each
// element of in0 is such a pair (the part sums of a split reduction), added whole;
// post_div: the result is the pair divided by it (an average pool's count), rounded once.
// A split reduction's part sums may read x as halves (core_step_half_ok): LD0 there.
bool nan_(float v) { return isnan(v); }
bool nan_(int v) { return false; }
// a double-like product (dd_add, wild: the prelude, glkernels/glk.c)
vec2 dd_mul(vec2 a, float b) {
    if (wild(a.x) || wild(b)) return vec2(a.x * b, 0.0);
    float p, e; two_prod(a.x, b, p, e);
    precise float lo = e + a.y * b; float h, l; two_sum(p, lo, h, l);
    return wild(h) ? vec2(a.x * b, 0.0) : vec2(h, l);
}
vec2 carry_in(float identity) {
    if (P[6] == 0) return vec2(identity, 0.0);
    if ((P[7] & 1) != 0) return vec2(float(in1[2u * gidx()]), float(in1[2u * gidx() + 1u]));
    return vec2(float(in1[gidx()]), 0.0);
}
void carry_out(vec2 acc) {
    uint i = gidx();
    if ((P[7] & 2) != 0) {
        outv[2u * i] = TO(acc.x);
        outv[2u * i + 1u] = TO(acc.y);
    } else {
        outv[i] = TO(P[11] != 0 ? dd_div(acc, float(P[11])) : dd_round(acc));
    }
}
// element e of in0 as a pair (pairs: two words an element)
vec2 pair_at(int e) { return vec2(float(in0[2 * e]), float(in0[2 * e + 1])); }
vec2 dd_add2(vec2 a, vec2 b) { return dd_add(dd_add(a, b.x), b.y); }
// P[8] lanes (CK_REDUCE_LANES, a float Sum or Mean): one workgroup of 64 an output
// element t; lane l sums, in its pair, the elements j of the whole n with j % 64 == l
// (P[9] = j0: this part's first j), from its own carried pair; then the output is
// either the 64 pairs (carry bit 1, lane l's at 2 * (64 t + l)) or their sum in a fixed
// tree (as pool.comp's OPC 1), rounded once.
shared vec2 lane_acc[64];
#if OPC == R_MEAN || OPC == R_SUM
void main_lanes(uint gi) {
    uint lane = gl_LocalInvocationID.x;
    int n = P[2], inner = P[3];
    int t = int(gi / 64u);
    int o = t / inner;
    int base = o * n * inner + (t - o * inner);
    uint c = uint(t) * 64u + lane;
    vec2 acc = (P[7] & 1) != 0 ? vec2(float(in1[2u * c]), float(in1[2u * c + 1u])) : vec2(0.0);
#if OPC == R_MEAN
    float fn = float(P[5] != 0 ? P[5] : n);
#endif
    int j = (int(lane) - P[9] % 64 + 64) % 64;
#if OPC == R_SUM
    if (P[10] != 0) { /* the part sums of a split reduction, few a lane */
        for (; j < n; j += 64) acc = dd_add2(acc, pair_at(base + j * inner));
    } /* (j >= n now: the loops below add nothing more) */
#endif
    // (AHEAD, on GPUs) 32, then eight loads a round issued before their sums: the
    // same sums in the same order (a global mean has few workgroups, and each lane
    // waited on its loads, inner floats apart, one by one)
    // (the loads in named vec4s, not an array: AHEAD_LOADS in the prelude)
#define AL(u) float(in0[base + (j + 64 * (u)) * inner])
#if OPC == R_MEAN
#define AS(x) { precise float q = (x) / fn; acc = dd_add(acc, q); }
#else
#define AS(x) acc = dd_add(acc, (x));
#endif
    for (; AHEAD != 0 && j + 31 * 64 < n; j += 32 * 64) {
        AHEAD32(AL, AS)
    }
    for (; AHEAD != 0 && j + 7 * 64 < n; j += 8 * 64) {
        AHEAD8(AL, AS)
    }
#undef AL
#undef AS
    for (; j < n; j += 64) {
#if OPC == R_MEAN
        precise float q = float(in0[base + j * inner]) / fn;
        acc = dd_add(acc, q);
#else
        acc = dd_add(acc, float(in0[base + j * inner]));
#endif
    }
    if ((P[7] & 2) != 0) { /* the same branch for the whole workgroup */
        outv[2u * c] = TO(acc.x);
        outv[2u * c + 1u] = TO(acc.y);
        return;
    }
    lane_acc[lane] = acc;
    memoryBarrierShared();
    barrier();
    for (uint h = 32u; h > 0u; h >>= 1u) {
        if (lane < h) {
            vec2 q = lane_acc[lane + h];
            lane_acc[lane] = dd_add(dd_add(lane_acc[lane], q.x), q.y);
        }
        memoryBarrierShared();
        barrier();
    }
    if (lane == 0u) outv[t] = TO(P[11] != 0 ? dd_div(lane_acc[0], float(P[11])) : dd_round(lane_acc[0]));
}
#endif
void main() {
    uint i = gidx();
    if (i >= NT) return; /* with lanes NT is a multiple of 64: whole workgroups return */
#if OPC == R_MEAN || OPC == R_SUM
    if (P[8] != 0) {
        main_lanes(i);
        return;
    }
#endif
    int n = P[2], inner = P[3];
    int o = int(i) / inner;
    int base = o * n * inner + (int(i) - o * inner);
    // (AHEAD, on GPUs) a float sum's loads eight a round before their sums, in the
    // same order: faceres-deep's 7x7 global mean, 49 loads each waited on, took 32 us
    // traced on the H100
#if OPC == R_MEAN
    // tfjs Mean: cast to float32, divide each element by n, then sum.
    float fn = float(P[5] != 0 ? P[5] : n);
    vec2 acc = carry_in(0.0);
    int j = 0;
#define AL(u) float(LD0(base + (j + (u)) * inner))
#define AS(x) { precise float q = (x) / fn; acc = dd_add(acc, q); }
    for (; AHEAD != 0 && j + 7 < n; j += 8) {
        AHEAD8(AL, AS)
    }
#undef AL
#undef AS
    for (; j < n; j++) {
        precise float q = float(LD0(base + j * inner)) / fn;
        acc = dd_add(acc, q);
    }
    carry_out(acc);
#elif OPC == R_SUM || OPC == R_PROD
    if (P[4] == 0) { // float32: wide
        vec2 acc = carry_in(OPC == R_SUM ? 0.0 : 1.0);
        int j = 0;
#if OPC == R_SUM
        if (P[10] != 0) {
            for (; AHEAD != 0 && j + 3 < n; j += 4) {
                vec2 v0 = pair_at(base + j * inner), v1 = pair_at(base + (j + 1) * inner),
                     v2 = pair_at(base + (j + 2) * inner), v3 = pair_at(base + (j + 3) * inner);
                acc = dd_add2(acc, v0);
                acc = dd_add2(acc, v1);
                acc = dd_add2(acc, v2);
                acc = dd_add2(acc, v3);
            }
            for (; j < n; j++) acc = dd_add2(acc, pair_at(base + j * inner));
        }
#endif
#define AL(u) float(LD0(base + (j + (u)) * inner))
#if OPC == R_SUM
#define AS(x) acc = dd_add(acc, (x));
#else
#define AS(x) acc = dd_mul(acc, (x));
#endif
        for (; AHEAD != 0 && j + 7 < n; j += 8) {
            AHEAD8(AL, AS)
        }
#undef AL
#undef AS
        for (; j < n; j++) {
            float v = float(LD0(base + j * inner));
#if OPC == R_SUM
            acc = dd_add(acc, v);
#else
            acc = dd_mul(acc, v);
#endif
        }
        carry_out(acc);
        return;
    }
    TO acc = P[6] != 0 ? TO(in1[i]) : TO(OPC == R_SUM ? 0 : 1);
#if OPC == R_SUM
    for (int j = 0; j < n; j++) acc += TO(in0[base + j * inner]);
#else
    for (int j = 0; j < n; j++) acc *= TO(in0[base + j * inner]);
#endif
    outv[i] = acc;
#elif OPC == R_MAX || OPC == R_MIN
    T0 m = P[6] != 0 ? T0(in1[i]) : in0[base];
    for (int j = 0; j < n; j++) {
        T0 v = in0[base + j * inner];
#if OPC == R_MAX
        if (nan_(v) || v > m) m = v;
#else
        if (nan_(v) || v < m) m = v;
#endif
    }
    outv[i] = TO(m);
#else
    bool acc = P[6] != 0 ? in1[i] != T1(0) : in0[base] != T0(0);
    for (int j = P[6] != 0 ? 0 : 1; j < n; j++) {
        bool v = in0[base + j * inner] != T0(0);
#if OPC == R_ANY
        acc = acc || v;
#else
        acc = acc && v;
#endif
    }
    outv[i] = TO(acc ? 1 : 0);
#endif
}
