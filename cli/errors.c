/* streaminfer — exit codes, one-line failures, sizes as people read them. */
#include <stdarg.h>
#include <stdio.h>
#include "cli.h"

int cli_exit_code(si_result st)
{
    switch (st) {
    case SI_OK: return 0;
    case SI_ERR_ARG:
    case SI_ERR_IO:
    case SI_ERR_FORMAT:
    case SI_ERR_UNSUPPORTED:
    case SI_ERR_SHAPE: return EXIT_MODEL;
    case SI_ERR_BUDGET: return EXIT_BUDGET;
    case SI_ERR_GPU: return EXIT_GPU;
    case SI_ERR_NOMEM:
    case SI_ERR_CANCELLED: break;
    }
    return EXIT_OTHER;
}

int cli_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_progress_done();
    fprintf(stderr, "streaminfer: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return code;
}

int cli_fail_status(const si_error *err) { return cli_fail(cli_exit_code(err->status), "%s", err->message); }

const char *cli_size(uint64_t b, char *buf) { return si_size_str(b, buf); }
