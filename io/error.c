#include <stdarg.h>
#include <stdio.h>

#include "io.h"

si_result io_fail(si_error *err, si_result st, const char *fmt, ...)
{
    if (!err)
        return st;
    err->status = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    /* Names come from the model file; keep the message one line whatever they hold. */
    for (char *c = err->message; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    return st;
}
