/* The options a handle runs with, and the one place the library reads the
 * environment: the debug variables SI_STAGES, SI_DRIVER_RESERVE, SI_CHECK_STEPS,
 * SI_PLAN_PREFETCH, SI_PLAN_DEBUG, SI_NO_FUSE, SI_COPY_KERNELS, SI_CONV, SI_PRECISION, SI_FAIL_SPILL_WRITE and SI_FAIL_GPU_* override si_options' fields of the same
 * meaning where they are set (as they did before they were fields). The pager
 * gets its part through pg_options. TMPDIR is where the spill file goes
 * when si_options.spill_dir is not set. */
#include <stdlib.h>
#include <string.h>
#include "session_internal.h"

void rt_effective_options(const si_options *opt, si_options *eff)
{
    if (opt)
        *eff = *opt;
    else
        memset(eff, 0, sizeof *eff);
    const char *e;
    if ((e = getenv("SI_STAGES"))) /* 0: the interpreter does all that follows */
        eff->no_stages = !strcmp(e, "0");
    if (getenv("SI_DRIVER_RESERVE")) /* set, whatever its value */
        eff->driver_reserve = 1;
    if ((e = getenv("SI_CHECK_STEPS"))) /* the tolerance; not a positive number: off */
        eff->check_steps = atof(e);
    if (!(eff->check_steps > 0))
        eff->check_steps = 0;
    if ((e = getenv("SI_PLAN_PREFETCH"))) { /* a number n: n steps ahead (0: off); set otherwise: 1 */
        char *end;
        long v = strtol(e, &end, 10);
        eff->plan_prefetch = *e && !*end && v >= 0 ? (int)(v < 64 ? v : 64) : 1;
    }
    if (getenv("SI_PLAN_DEBUG"))
        eff->plan_debug = 1;
    if (getenv("SI_NO_FUSE"))
        eff->no_fuse = 1;
    if ((e = getenv("SI_COPY_KERNELS")))
        eff->copy_kernels = atoi(e) > 0 ? 1 : atoi(e) < 0 ? -1 : 0;
    if ((e = getenv("SI_LOOP_NODES")))
        eff->loop_nodes = atoi(e) > 0 ? 1 : atoi(e) < 0 ? -1 : 0;
    if ((e = getenv("SI_CONV")))
        eff->conv_kernel = e;
    if ((e = getenv("SI_PRECISION"))) /* anything but f32 or f16: refused at si_open */
        eff->precision = !strcmp(e, "f16") ? SI_PRECISION_F16 : !strcmp(e, "f32") ? SI_PRECISION_F32 : (si_precision)-1;
    if ((e = getenv("SI_FAIL_SPILL_WRITE")))
        eff->fail_spill_write = atoi(e);
    if ((e = getenv("SI_FAIL_GPU_ALLOC")))
        eff->fail_gpu_alloc = atoi(e);
    if ((e = getenv("SI_FAIL_GPU_COMMAND")))
        eff->fail_gpu_command = atoi(e);
    if ((e = getenv("SI_FAIL_GPU_LOST")))
        eff->fail_gpu_lost = atoi(e);
    if (getenv("SI_FAIL_GPU_NO_STORAGE")) /* set, whatever its value */
        eff->fail_gpu_no_storage = 1;
    if (!eff->spill_dir || !eff->spill_dir[0]) /* the usual place for temporary files */
        eff->spill_dir = (e = getenv("TMPDIR")) && e[0] ? e : "/tmp";
}

/* The next name of a comma-separated list from *p: its start and *len; NULL at
 * the end. */
static const char *next_name(const char **p, size_t *len)
{
    const char *name = *p;
    if (!name || !*name)
        return NULL;
    const char *e = strchr(name, ',');
    *len = e ? (size_t)(e - name) : strlen(name);
    *p = e ? e + 1 : NULL;
    return name;
}

int rt_name_listed(const char *list, const char *name)
{
    size_t n = strlen(name), len;
    for (const char *p = list, *item; (item = next_name(&p, &len));)
        if (len == n && !strncmp(item, name, n))
            return 1;
    return 0;
}

si_result rt_check_op_list(const char *what, const char *list, si_error *err)
{
    size_t len;
    for (const char *p = list, *item; (item = next_name(&p, &len));) {
        char name[128];
        if (len == 0 || len >= sizeof name)
            return base_fail(err, SI_ERR_ARG, "%s: '%s' is not a comma-separated list of ops", what, list);
        memcpy(name, item, len);
        name[len] = 0;
        if (!core_op_family(name))
            return base_fail(err, SI_ERR_ARG, "%s: '%s' is no op TensorFlow.js's converter writes "
                             "(model.json's names, such as Sigmoid or _FusedConv2D)", what, name);
    }
    return SI_OK;
}
