// CK_REDUCE: P = {op, outer, n, inner, dtype, divisor, has_init}; OPC = op. Input
// [outer, n, inner], output [outer, inner], one invocation per output element, reducing
// j = 0..n-1 in order like the host reference. has_init: start from in1[i] (the result
// of the parts before, in a tiled reduction) instead of the identity. TO int: wrapping int32 arithmetic (tfjs stores its
// exact sum into an Int32Array).
bool nan_(float v) { return isnan(v); }
bool nan_(int v) { return false; }
void main() {
    uint i = gidx();
    if (i >= NT) return;
    int n = P[2], inner = P[3];
    int o = int(i) / inner;
    int base = o * n * inner + (int(i) - o * inner);
#if OPC == R_MEAN
    // tfjs Mean: cast to float32, divide each element by n, then sum.
    float fn = float(P[5] != 0 ? P[5] : n), acc = P[6] != 0 ? float(in1[i]) : 0.0;
    for (int j = 0; j < n; j++) acc += float(in0[base + j * inner]) / fn;
    outv[i] = TO(acc);
#elif OPC == R_SUM
    TO acc = P[6] != 0 ? TO(in1[i]) : TO(0);
    for (int j = 0; j < n; j++) acc += TO(in0[base + j * inner]);
    outv[i] = acc;
#elif OPC == R_PROD
    TO acc = P[6] != 0 ? TO(in1[i]) : TO(1);
    for (int j = 0; j < n; j++) acc *= TO(in0[base + j * inner]);
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
