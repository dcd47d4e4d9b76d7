/* base — what every folder shares: the error value's one formatter and sizes.
 * It includes only the public header; every other folder may include it. */
#ifndef SI_BASE_H
#define SI_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include "streaminfer.h"

/* Sets err->status and a printf-style message kept to one line (names come
 * from model files and may hold newlines); returns the status. err may be NULL. */
si_result base_fail(si_error *err, si_result st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
si_result base_vfail(si_error *err, si_result st, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* "1.50 MiB (1572864 bytes)", GiB from 1 GiB on, KiB below 1 MiB: how every message gives a
 * size. buf holds BASE_SIZE_CHARS; returns buf. */
#define BASE_SIZE_CHARS 64
const char *base_size(uint64_t bytes, char *buf);

/* GPU buffers and host homes are placed on this boundary (the largest
 * offset alignment GL drivers ask for). */
#define BASE_ALIGN 256u

static inline uint64_t base_align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
/* Milliseconds on a monotonic clock (for durations). */
double base_now_ms(void);

/* memcpy, split over a few threads kept for it when n is large (from 512 KiB):
 * one core copies 10-12 GB/s into a GPU's mapped memory. bypass_cache: stores
 * that go past the CPU's caches (where the CPU has them), for bytes the GPU
 * reads next, not the CPU. dst and src must not overlap. Safe from any thread;
 * a copy while another is under way copies alone. */
void base_copy(void *dst, const void *src, size_t n, int bypass_cache);

/* A 128-bit digest of bytes fed in any pieces (the plan cache's keys and
 * checksums): not cryptographic, it tells content apart, it does not stand
 * up to someone forging it. Start with {0}; the same bytes in the same
 * pieces give the same digest. */
typedef struct {
    uint64_t a, b, n;
} base_digest;
void base_digest_add(base_digest *d, const void *data, size_t len);

#endif
