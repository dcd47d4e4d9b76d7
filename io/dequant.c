#include <math.h>
#include <stdint.h>
#include <string.h>

#include "io.h"

size_t io_weight_stored_elem_size(const io_weight *w)
{
    switch (w->quant) {
    case IO_Q_UINT8: return 1;
    case IO_Q_UINT16:
    case IO_Q_FLOAT16: return 2;
    case IO_Q_NONE: break;
    }
    return w->dtype == IO_DT_BOOL ? 1 : 4;
}

float io_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else {
        /* Subnormal half: every one is a normal float, shift it into place. */
        int e = 113;
        while (!(man & 0x400u)) {
            man <<= 1;
            e--;
        }
        bits = sign | ((uint32_t)e << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t io_float_to_half(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    uint16_t sign = (uint16_t)((b >> 16) & 0x8000u);
    uint32_t exp = (b >> 23) & 0xffu, man = b & 0x7fffffu;
    if (exp == 0xff) /* inf, or NaN kept a NaN (quiet) */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) { /* a subnormal half, or zero: the implicit bit shifted in */
        if (e < -10)
            return sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e), h = man >> shift, rest = man & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rest > half || (rest == half && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is right, up to inf */
    return (uint16_t)(sign | h);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define IO_F16C 1
/* VCVTPS2PH with an immediate of 0: to nearest, ties to even, whatever MXCSR
 * says; a NaN quieted with its payload's top bits, past 65504 rounded as
 * io_float_to_half does (up to inf). The loads and stores may alias. */
__attribute__((target("avx,f16c"))) static void f16c_floats_to_halves(uint8_t *d, const uint8_t *s, int64_t n8)
{
    for (int64_t i = 0; i < n8; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(d + 2 * i),
                         _mm256_cvtps_ph(_mm256_loadu_ps((const float *)(const void *)(s + 4 * i)), 0));
}

/* AVX usable (the OS saves its registers) and F16C present (asked once; two
 * threads asking at once both find the same answer) */
static int have_f16c(void)
{
    static _Atomic int known = -1;
    if (known < 0) {
        unsigned a, b, c, d;
        int ok = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) && (c & bit_AVX) && (c & bit_OSXSAVE);
        if (ok) {
            unsigned lo, hi;
            __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
            ok = (lo & 6u) == 6u;
        }
        known = ok;
    }
    return known;
}
#endif

void io_floats_to_halves(void *dst, const void *src, int64_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    int64_t i = 0;
#ifdef IO_F16C
    if (n >= 8 && have_f16c()) {
        i = n / 8 * 8;
        f16c_floats_to_halves(d, s, i);
    }
#endif
    for (; i < n; i++) {
        float f;
        memcpy(&f, s + 4 * i, 4);
        uint16_t h = io_float_to_half(f);
        memcpy(d + 2 * i, &h, 2);
    }
}

/* The float copies in io_weight may be all a caller set (a hand-built weight);
 * use the double only when it is the one the float came from. */
static double io_exact(float f, double d)
{
    return (float)d == f ? d : (double)f;
}

/* JavaScript's Math.round: halves go toward +infinity. */
static int32_t io_js_round(double v)
{
    double r = floor(v);
    if (v - r >= 0.5)
        r += 1.0;
    if (!(r >= INT32_MIN))
        return INT32_MIN;
    if (r > INT32_MAX)
        return INT32_MAX;
    return (int32_t)r;
}

void io_weight_dequantize(const io_weight *w, const void *stored, void *dst)
{
    const uint8_t *src = stored;
    uint64_t n = w->count;
    if (w->quant == IO_Q_NONE) {
        if (w->dtype == IO_DT_STRING) {
            memcpy(dst, stored, (size_t)w->nbytes);
        } else if (w->dtype == IO_DT_BOOL) {
            int32_t *d = dst;
            for (uint64_t i = 0; i < n; i++)
                d[i] = src[i] != 0;
        } else {
            memcpy(dst, stored, (size_t)n * 4);
        }
        return;
    }
    if (w->quant == IO_Q_FLOAT16) {
        float *d = dst;
        for (uint64_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            d[i] = io_half_to_float(h);
        }
        return;
    }
    double scale = io_exact(w->q_scale, w->q_scale64);
    double min = io_exact(w->q_min, w->q_min64);
    for (uint64_t i = 0; i < n; i++) {
        uint16_t q;
        if (w->quant == IO_Q_UINT8) {
            q = src[i];
        } else {
            memcpy(&q, src + 2 * i, 2);
        }
        double v = q * scale + min;
        if (w->dtype == IO_DT_INT32)
            ((int32_t *)dst)[i] = io_js_round(v);
        else
            ((float *)dst)[i] = (float)v;
    }
}
