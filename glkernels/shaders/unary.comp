// CK_UNARY: P = {op, count, in_dtype, out_dtype, alpha, beta, ilo, ihi}; OPC = op.
float tanh_safe(float x) { float e = exp(-2.0 * abs(clamp(x, -20.0, 20.0))); return sign(x) * (1.0 - e) / (1.0 + e); }
// asinh/acosh/atanh as tfjs (Math.*): NaN outside the domain, and no
// overflow of x*x for large |x| (GLSL's built-ins may square first).
float nan_() { return uintBitsToFloat(0x7fc00000u); }
float asinh_(float x) {
    float a = abs(x);
    float r = a > 1e4 ? log(a) + 0.69314718 : log(a + sqrt(a * a + 1.0));
    return x < 0.0 ? -r : r;
}
float acosh_(float x) {
    if (!(x >= 1.0)) return nan_();
    return x > 1e4 ? log(x) + 0.69314718 : log(x + sqrt((x - 1.0) * (x + 1.0)));
}
float atanh_(float x) {
    if (abs(x) > 1.0) return nan_();
    if (abs(x) == 1.0) return x * uintBitsToFloat(0x7f800000u);
    return 0.5 * log((1.0 + x) / (1.0 - x));
}
float unary_f(float x) {
    float alpha = PF(4);
#if OPC == U_NEG
    return -x;
#elif OPC == U_ABS
    return abs(x);
#elif OPC == U_RELU
    return x < 0.0 ? 0.0 : x;
#elif OPC == U_RELU6
    return x < 0.0 ? 0.0 : (x > 6.0 ? 6.0 : x);
#elif OPC == U_LEAKYRELU
    return x < 0.0 ? alpha * x : x;
#elif OPC == U_ELU
    return x >= 0.0 ? x : exp(x) - 1.0;
#elif OPC == U_SELU
    return x >= 0.0 ? 1.0507009873554804934193349852946 * x
                    : 1.0507009873554804934193349852946 * 1.6732632423543772848170429916717 * (exp(x) - 1.0);
#elif OPC == U_SIGMOID
    return 1.0 / (1.0 + exp(-x));
#elif OPC == U_TANH
    return tanh_safe(x);
#elif OPC == U_EXP
    return exp(x);
#elif OPC == U_LOG
    return log(x);
#elif OPC == U_SQRT
    return sqrt(x);
#elif OPC == U_RSQRT
    return 1.0 / sqrt(x);
#elif OPC == U_SQUARE
    return x * x;
#elif OPC == U_RECIPROCAL
    return 1.0 / x;
#elif OPC == U_FLOOR
    return floor(x);
#elif OPC == U_CEIL
    return ceil(x);
#elif OPC == U_ROUND
    return roundEven(x);
#elif OPC == U_SIN
    return sin(x);
#elif OPC == U_COS
    return cos(x);
#elif OPC == U_TAN
    return tan(x);
#elif OPC == U_ASIN
    return asin(x);
#elif OPC == U_ACOS
    return acos(x);
#elif OPC == U_ATAN
    return atan(x);
#elif OPC == U_SINH
    return sinh(x);
#elif OPC == U_COSH
    return cosh(x);
#elif OPC == U_SIGN
    return sign(x);
#elif OPC == U_SOFTPLUS
    return x > 0.0 ? x + log(1.0 + exp(-x)) : log(1.0 + exp(x));
#elif OPC == U_EXPM1
    return exp(x) - 1.0;
#elif OPC == U_LOG1P
    return log(1.0 + x);
#elif OPC == U_HARDSWISH
    return x * clamp(x + 3.0, 0.0, 6.0) / 6.0;
#elif OPC == U_ASINH
    return asinh_(x);
#elif OPC == U_ACOSH
    return acosh_(x);
#elif OPC == U_ATANH
    return atanh_(x);
#elif OPC == U_CLIP
    // tfjs's clip: NaN passes (both its tests are false); the compiler may turn
    // the tests into min/max, which drop a NaN, so it is tested first
    return isnan(x) ? x : (x > PF(5) ? PF(5) : (x < alpha ? alpha : x));
#elif OPC == U_ERF
    // Abramowitz-Stegun 7.1.26 is too coarse; use a high-order rational fit.
    float t = 1.0 / (1.0 + 0.5 * abs(x));
    float y = 1.0 - t * exp(-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
              t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
              t * (-0.82215223 + t * 0.17087277)))))))));
    return x >= 0.0 ? y : -y;
#else
    return x;
#endif
}
int unary_i(int x) {
#if OPC == U_NEG
    return -x;
#elif OPC == U_ABS
    return abs(x);
#elif OPC == U_RELU
    return max(x, 0);
#elif OPC == U_RELU6
    return clamp(x, 0, 6);
#elif OPC == U_SQUARE
    return x * x;
#elif OPC == U_SIGN
    return sign(x);
#elif OPC == U_CLIP
    return x > P[7] ? P[7] : (x < P[6] ? P[6] : x);
#else
    return x;
#endif
}
// float -> int32 as Int32Array.from (ToInt32): NaN and +-Inf give 0, else
// truncation toward zero modulo 2^32. Past 2^31 a float is m * 2^e (m the
// 24-bit significand, e >= 8), whose low 32 bits are m << e.
int f2i_(float x) {
    if (isnan(x) || isinf(x)) return 0;
    if (abs(x) < 2147483648.0) return int(x);
    uint b = floatBitsToUint(x);
    int e = int((b >> 23) & 0xffu) - 150;
    if (e >= 32) return 0;
    uint r = ((b & 0x7fffffu) | 0x800000u) << uint(e);
    return int(x < 0.0 ? 0u - r : r);
}
void main() {
    uint i = gidx();
    if (i >= NT) return;
#if OPC == U_CAST
    // in/out element types come from T0/TO (values V0/VO); float->int truncates toward zero.
    int outdt = P[3];
    int indt = P[2];
    if (outdt == 2) ST(i, VO(LD0(i) != V0(0) ? 1 : 0));
    else if (indt == 2) ST(i, VO(LD0(i) != V0(0) ? 1 : 0));
    else if (indt == 0 && outdt == 1) ST(i, VO(f2i_(float(LD0(i)))));
    else ST(i, VO(LD0(i)));
#elif OPC == U_LOGICAL_NOT
    ST(i, VO(LD0(i) == V0(0) ? 1 : 0));
#elif OPC == U_ISNAN
    ST(i, VO(isnan(float(LD0(i))) ? 1 : 0));
#elif OPC == U_ISFINITE
    ST(i, VO(isnan(float(LD0(i))) || isinf(float(LD0(i))) ? 0 : 1));
#elif OPC == U_ISINF
    ST(i, VO(isinf(float(LD0(i))) ? 1 : 0));
#elif OPC == U_CLIP
    // int32 stays integer all the way: a float detour rounds past 2^24
    if (P[2] == 0) ST(i, VO(unary_f(float(LD0(i)))));
    else ST(i, VO(unary_i(int(LD0(i)))));
#else
    ST(i, VO(P[2] == 0 ? unary_f(float(LD0(i))) : float(unary_i(int(LD0(i))))));
#endif
}
