// CK_REDUCE: P = {op, outer, n, inner, dtype, divisor, has_init, carry}; OPC = op. Input
// [outer, n, inner], output [outer, inner], one invocation per output element, reducing
// j = 0..n-1 in order like the host reference. has_init: start from in1[i] (the result
// of the parts before, in a tiled reduction) instead of the identity. TO int: wrapping int32 arithmetic (tfjs stores its
// exact sum into an Int32Array). Float Sum, Mean and Prod accumulate in a float-float
// pair (tfjs: a JS number), rounded to float32 once; carry bit 0: in1 holds the running
// pairs, bit 1: so does the output (2 floats an element).
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
        outv[i] = TO(dd_round(acc));
    }
}
void main() {
    uint i = gidx();
    if (i >= NT) return;
    int n = P[2], inner = P[3];
    int o = int(i) / inner;
    int base = o * n * inner + (int(i) - o * inner);
#if OPC == R_MEAN
    // tfjs Mean: cast to float32, divide each element by n, then sum.
    float fn = float(P[5] != 0 ? P[5] : n);
    vec2 acc = carry_in(0.0);
    for (int j = 0; j < n; j++) {
        precise float q = float(in0[base + j * inner]) / fn;
        acc = dd_add(acc, q);
    }
    carry_out(acc);
#elif OPC == R_SUM || OPC == R_PROD
    if (P[4] == 0) { // float32: wide
        vec2 acc = carry_in(OPC == R_SUM ? 0.0 : 1.0);
        for (int j = 0; j < n; j++) {
            float v = float(in0[base + j * inner]);
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
