#include <stdio.h>

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
