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
