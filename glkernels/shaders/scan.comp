// CK_SCAN: P = {op, outer, n, inner, exclusive, reverse}; OPC = op (0 sum, 1 product).
// One invocation per line along n, in tfjs's order: inclusive out[j] = x[j] op out[j-1]
// (out[0] = x[0]), exclusive out[j] = x[j-1] op out[j-1] (out[0] = 0 or 1); reverse
// walks the line from its end. int32 sums wrap; an int32 product is tfjs's float64
// product of two int32s rounded to 53 bits, then stored into an Int32Array (mod 2^32).
float comb(float a, float b) {
#if OPC == 0
    return a + b;
#else
    return a * b;
#endif
}
int comb(int a, int b) {
#if OPC == 0
    return a + b;
#else
    bool neg = (a < 0) != (b < 0);
    uint hi, lo;
    umulExtended(uint(a < 0 ? -a : a), uint(b < 0 ? -b : b), hi, lo);
    // |a*b| < 2^62: round to 53 significant bits, to nearest, ties to even
    int bits = hi != 0u ? 33 + findMSB(hi) : findMSB(lo) + 1;
    if (bits > 53) {
        int d = bits - 53;
        uint q = (lo >> uint(d)) | (hi << uint(32 - d));
        uint rem = lo & ((1u << uint(d)) - 1u), hf = 1u << uint(d - 1);
        if (rem > hf || (rem == hf && (q & 1u) != 0u)) q += 1u;
        lo = q << uint(d);
    }
    return neg ? -int(lo) : int(lo);
#endif
}
void main() {
    uint g = gidx();
    if (g >= NT) return;
    int n = P[2], inner = P[3];
    int o = int(g) / inner;
    int at = o * n * inner + (int(g) - o * inner), step = inner;
    if (P[5] != 0) {
        at += (n - 1) * inner;
        step = -inner;
    }
    TO prev_out = TO(0), prev_x = TO(0);
    for (int j = 0; j < n; j++, at += step) {
        TO x = TO(in0[at]), y;
        if (P[4] != 0) y = j == 0 ? TO(OPC == 0 ? 0 : 1) : comb(prev_x, prev_out);
        else y = j == 0 ? x : comb(x, prev_out);
        outv[at] = y;
        prev_out = y;
        prev_x = x;
    }
}
