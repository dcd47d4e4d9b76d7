// Transfers as a kernel (glk_copy_words, glk_dequant_words): P = {ranges, then
// per range: elements, src offset, dst offset} in elements (ivec4 or int: T0 =
// TO), in0 the source (the mapped host pool, or the arena for a spill), outv
// the destination. A range whose first value is negative, -mode, dequantizes
// as it moves (only in words: XWORDS): {-mode, output words, src word, dst
// word, scale, min}, mode = quant (1 uint8, 2 uint16, 3 float16) + 4 for
// halves out (two a word) + 8 where the last word holds one element; each
// value q * scale + min as CK_DEQUANT's kernel computes it, a half saturated
// at +-65504 (and counted, HC). The loads queued together run as one dispatch
// (glk.c's batch). A fixed grid strides over each range in turn, four loads
// in flight an invocation, so the kernel takes a part of the GPU and a step
// dispatched after it runs beside it (issue 19).
#ifndef XWORDS
#define XWORDS 0
#endif
#if XWORDS
float dq_half(float v)
{
#if HC
    if (abs(v) >= 65520.0 && !isinf(v)) atomicAdd(overflows[0], 1u);
#endif
    return isinf(v) || isnan(v) ? v : clamp(v, -65504.0, 65504.0);
}

// Output word i of a dequantizing range at P[k] (its scale at P[k + 4]).
int dq_word(int mode, uint s, uint i, uint n, int k)
{
    int q = mode & 3;
    if ((mode & 4) == 0) { // float32: element i
        uint w = uint(in0[s + (q == 1 ? i >> 2u : i >> 1u)]);
        uint e = q == 1 ? (w >> (8u * (i & 3u))) & 0xffu : (w >> (16u * (i & 1u))) & 0xffffu;
        if (q == 3)
            return floatBitsToInt(unpackHalf2x16(w)[i & 1u]);
        return floatBitsToInt(float(e) * PF(k + 4) + PF(k + 5));
    }
    // halves: elements 2i and 2i + 1
    uint w = uint(in0[s + (q == 1 ? i >> 1u : i)]);
    uint e0 = q == 1 ? (w >> (16u * (i & 1u))) & 0xffu : w & 0xffffu;
    uint e1 = q == 1 ? (w >> (16u * (i & 1u) + 8u)) & 0xffu : w >> 16u;
    uint r;
    if (q == 3) {
        r = w;
    } else {
        float v0 = dq_half(float(e0) * PF(k + 4) + PF(k + 5));
        float v1 = dq_half(float(e1) * PF(k + 4) + PF(k + 5));
        r = packHalf2x16(vec2(v0, v1));
    }
    if ((mode & 8) != 0 && i + 1u == n) // the padding half of an odd count
        r &= 0xffffu;
    return int(r);
}
#endif

void main() {
    int nr = P[0], k = 1;
    uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 64u;
    for (int r = 0; r < nr; r++) {
#if XWORDS
        if (P[k] < 0) {
            int mode = -P[k];
            uint n = uint(P[k + 1]), s = uint(P[k + 2]), d = uint(P[k + 3]);
            for (uint i = gidx(); i < n; i += stride)
                outv[d + i] = dq_word(mode, s, i, n, k);
            k += 6;
            continue;
        }
#endif
        uint n = uint(P[k]), s = uint(P[k + 1]), d = uint(P[k + 2]);
        k += 3;
        uint i = gidx();
        for (; i + 3u * stride < n; i += 4u * stride) {
            TO a = in0[s + i], b = in0[s + i + stride], c = in0[s + i + 2u * stride],
               e = in0[s + i + 3u * stride];
            outv[d + i] = a;
            outv[d + i + stride] = b;
            outv[d + i + 2u * stride] = c;
            outv[d + i + 3u * stride] = e;
        }
        for (; i < n; i += stride)
            outv[d + i] = in0[s + i];
    }
}
