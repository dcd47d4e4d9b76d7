// CK_BINARY: P = {op, rank, out_dim[6], a_stride[6], b_stride[6], in_dtype, out_dtype, count}.
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
    // JS's %: a finite a modulo +-Inf is a (a / b * b would be 0 * Inf)
    float r = isinf(b) && !isinf(a) ? a : a - b * trunc(a / b);
    return ((a < 0.0 && b < 0.0) || (a >= 0.0 && b >= 0.0)) ? r : (r + b) - b * trunc((r + b) / b);
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
    float a = float(in0[ia]), b = float(in1[ib]);
    bool r;
#if OPC == B_EQUAL
    r = a == b;
#elif OPC == B_NOTEQUAL
    r = a != b;
#elif OPC == B_LESS
    r = a < b;
#elif OPC == B_LESSEQ
    r = a <= b;
#elif OPC == B_GREATER
    r = a > b;
#elif OPC == B_GREATEREQ
    r = a >= b;
#elif OPC == B_AND
    r = a != 0.0 && b != 0.0;
#else
    r = a != 0.0 || b != 0.0;
#endif
    outv[o] = TO(r ? 1 : 0);
#else
    if (P[21] == 0) outv[o] = TO(binary_f(float(in0[ia]), float(in1[ib])));
    else outv[o] = TO(binary_i(int(in0[ia]), int(in1[ib])));
#endif
}
