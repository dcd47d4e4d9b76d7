// CK_SOFTMAX: P = {outer, n, log}. One invocation per row of the last axis, as tfjs:
// m = max (NaN sticks), e = exp(x - m), s = sum(e) in order (a double-like sum, as
// tfjs's in a JS number, rounded to float32 once), out = e / s
// (LogSoftmax: (x - m) - log(s)).
// (AHEAD, on GPUs) the max's and the sum's loads eight a round before they are used, in
// the same order: a row of a hundred, each load waited on, took 30 us traced on the H100.
void main() {
    uint r = gidx();
    if (r >= NT) return;
    int n = P[1];
    int base = int(r) * n;
    float m = float(in0[base]);
    int j = 0;
    // (the loads in named vec4s, not an array: AHEAD_LOADS in the prelude)
#define AL(u) float(in0[base + j + (u)])
#define AS(x) if (isnan(x) || (x) > m) m = (x);
    for (; AHEAD != 0 && j + 7 < n; j += 8) {
        AHEAD8(AL, AS)
    }
#undef AS
    for (; j < n; j++) {
        float v = float(in0[base + j]);
        if (isnan(v) || v > m) m = v;
    }
    vec2 acc = vec2(0.0);
    j = 0;
#define AS(x) acc = dd_add(acc, exp((x) - m));
    for (; AHEAD != 0 && j + 7 < n; j += 8) {
        AHEAD8(AL, AS)
    }
#undef AL
#undef AS
    for (; j < n; j++) acc = dd_add(acc, exp(float(in0[base + j]) - m));
    float s = dd_round(acc);
    if (P[2] != 0) {
        float ls = log(s);
        for (int j = 0; j < n; j++) outv[base + j] = TO((float(in0[base + j]) - m) - ls);
    } else {
        for (int j = 0; j < n; j++) outv[base + j] = TO(exp(float(in0[base + j]) - m) / s);
    }
}
