// CK_BINARY: P = {op, rank, out_dim[6], a_stride[6], b_stride[6], in_dtype, out_dtype, count}.
// JS's a % b (C's fmod), exactly: |a| less |b| * 2^k while it is at least |b|, each
// subtraction exact (the operands within a factor of two); the sign is a's.
float js_rem(float a, float b) {
    if (isnan(a) || isnan(b) || isinf(a) || b == 0.0) return uintBitsToFloat(0x7fc00000u);
    if (isinf(b)) return a;
    float r = abs(a), d = abs(b);
    for (int i = 0; i < 300 && r >= d; i++) {
        int er, ed;
        frexp(r, er);
        frexp(d, ed);
        float t = ldexp(d, er - ed);
        if (t > r) t = ldexp(d, er - ed - 1);
        r -= t;
    }
    return (floatBitsToUint(a) >> 31) != 0u ? -r : r;
}
float binary_f(float a, float b) {
#if OPC == B_ADD
    return a + b;
#elif OPC == B_SUB
    return a - b;
#elif OPC == B_MUL
    return a * b;
#elif OPC == B_DIV
    return a / b;
#elif OPC == B_DIVNONAN
    return b == 0.0 ? 0.0 : a / b;
#elif OPC == B_MAX
    return (a > b || isnan(a)) ? a : b;
#elif OPC == B_MIN
    return (a < b || isnan(a)) ? a : b;
#elif OPC == B_POW
    return pow(a, b);
#elif OPC == B_SQDIFF
    return (a - b) * (a - b);
#elif OPC == B_FLOORDIV
    return floor(a / b);
#elif OPC == B_FLOORMOD
    // tfjs's mod: rem = a % b, kept where a and b have the same sign, else
    // (rem + b) % b in float64: NaN for an infinite b; b % b (a zero of b's
    // sign) where rem + b rounds to b itself (rem 0, or at most half the
    // float64 spacing below |b|: the spacing halves below a power of two);
    // else rem + b itself (|rem + b| < |b|), which float rounds as float64 did
    float r = js_rem(a, b);
    if ((a < 0.0 && b < 0.0) || (a >= 0.0 && b >= 0.0)) return r;
    if (isinf(b)) return uintBitsToFloat(0x7fc00000u);
    int e;
    float m = frexp(abs(b), e);
    if (abs(r) <= ldexp(1.0, e - (m == 0.5 ? 55 : 54)))
        return uintBitsToFloat(floatBitsToUint(b) & 0x80000000u);
    return r + b;
#elif OPC == B_PRELU
    return a < 0.0 ? b * a : a;
#elif OPC == B_ATAN2
    return atan(a, b);
#else
    return 0.0;
#endif
}
int binary_i(int a, int b) {
#if OPC == B_ADD
    return a + b;
#elif OPC == B_SUB
    return a - b;
#elif OPC == B_MUL
    return a * b;
#elif OPC == B_DIV || OPC == B_FLOORDIV || OPC == B_DIVNONAN
    if (b == 0) return 0;
    int q = a / b;
    return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
#elif OPC == B_MAX
    return max(a, b);
#elif OPC == B_MIN
    return min(a, b);
#elif OPC == B_SQDIFF
    return (a - b) * (a - b);
#elif OPC == B_FLOORMOD
    if (b == 0) return 0;
    int r = a - (a / b) * b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
#elif OPC == B_PRELU
    return a < 0 ? b * a : a;
#elif OPC == B_POW
    return int(pow(float(a), float(b)));
#elif OPC == B_BITAND
    return a & b;
#else
    return 0;
#endif
}
void main() {
    uint o = gidx();
    if (o >= NT) return;
    int rank = P[1];
    int rem = int(o), ia = 0, ib = 0;
    for (int d = rank - 1; d >= 0; d--) {
        int dim = P[2 + d];
        int q = rem / dim;
        int id = rem - q * dim;
        rem = q;
        ia += id * P[8 + d];
        ib += id * P[14 + d];
    }
#if OPC >= B_EQUAL && OPC <= B_OR
    // int32 and bool compare as ints: as floats, values past 2^24 would round
    // together (16777217 == 16777216)
#if OPC == B_EQUAL
#define CMP(a, b, z) ((a) == (b))
#elif OPC == B_NOTEQUAL
#define CMP(a, b, z) ((a) != (b))
#elif OPC == B_LESS
#define CMP(a, b, z) ((a) < (b))
#elif OPC == B_LESSEQ
#define CMP(a, b, z) ((a) <= (b))
#elif OPC == B_GREATER
#define CMP(a, b, z) ((a) > (b))
#elif OPC == B_GREATEREQ
#define CMP(a, b, z) ((a) >= (b))
#elif OPC == B_AND
#define CMP(a, b, z) ((a) != (z) && (b) != (z))
#else
#define CMP(a, b, z) ((a) != (z) || (b) != (z))
#endif
    bool r;
    if (P[20] == 0) {
        float a = float(LD0(ia)), b = float(LD1(ib));
        r = CMP(a, b, 0.0);
    } else {
        int a = int(LD0(ia)), b = int(LD1(ib));
        r = CMP(a, b, 0);
    }
    ST(o, VO(r ? 1 : 0));
#else
    if (P[21] == 0) ST(o, VO(binary_f(float(LD0(ia)), float(LD1(ib)))));
    else ST(o, VO(binary_i(int(LD0(ia)), int(LD1(ib)))));
#endif
}
