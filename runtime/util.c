/* Small public helpers. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "streaminfer.h"

#define SI_STR_(x) #x
#define SI_STR(x) SI_STR_(x)
const char *si_version(void)
{
    return SI_STR(SI_VERSION_MAJOR) "." SI_STR(SI_VERSION_MINOR) "." SI_STR(SI_VERSION_PATCH);
}

const char *si_dtype_name(si_dtype t)
{
    switch (t) {
    case SI_FLOAT32: return "float32";
    case SI_INT32: return "int32";
    case SI_BOOL: return "bool";
    }
    return "?";
}

size_t si_dtype_size(si_dtype t) { return t == SI_BOOL ? 1 : 4; }

int si_parse_size(const char *s, uint64_t *bytes)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v >= 0) || isinf(v))
        return -1;
    double mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 0: break;
    case 'K': mul = 1024.0; end++; break;
    case 'M': mul = 1024.0 * 1024; end++; break;
    case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: return -1;
    }
    if (*end == 'i' && mul > 1)
        end++;
    if ((*end == 'B' || *end == 'b'))
        end++;
    if (*end)
        return -1;
    double b = v * mul;
    if (b >= 18446744073709551615.0 || (mul == 1 && v != floor(v)))
        return -1;
    *bytes = (uint64_t)b;
    return 0;
}

#include "../io/io.h"

si_result si_npy_read(const char *path, si_dtype *dtype, int *rank, int64_t shape[SI_MAX_RANK],
                      void **data, si_error *err)
{
    return io_npy_read(path, dtype, rank, shape, data, err);
}

si_result si_npy_write(const char *path, si_dtype dtype, int rank, const int64_t *shape,
                       const void *data, si_error *err)
{
    return io_npy_write(path, dtype, rank, shape, data, err);
}

si_result si_image_read(const char *path, int *height, int *width, si_dtype dtype, void **data,
                        si_error *err)
{
    return io_image_read(path, height, width, dtype, data, err);
}
