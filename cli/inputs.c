/* streaminfer — the model's inputs: from --input files (.npy, images) or
 * seeded random as tests/oracle/reference.js makes them. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "cli.h"

/* a problem with the model or an input */
static int die(const char *fmt, const char *a, const char *b) { return cli_fail(EXIT_MODEL, fmt, a, b); }

/* mulberry32: the same inputs as tests/oracle/reference.js for the same seed. */
static double next_rand(uint32_t *s)
{
    *s += 0x6D2B79F5u;
    uint32_t t = *s;
    t = (t ^ t >> 15) * (t | 1);
    t ^= t + (t ^ t >> 7) * (t | 61);
    return (double)(t ^ t >> 14) / 4294967296.0;
}

static void *random_input(si_dtype dt, int64_t n, uint32_t seed)
{
    void *d = malloc((size_t)(n ? n : 1) * si_dtype_size(dt));
    if (!d)
        return NULL;
    uint32_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        double r = next_rand(&s);
        if (dt == SI_FLOAT32)
            ((float *)d)[i] = (float)r;
        else if (dt == SI_INT32)
            ((int32_t *)d)[i] = (int32_t)(r * 256);
        else
            ((uint8_t *)d)[i] = r < 0.5;
    }
    return d;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcasecmp(s + a - b, suf);
}

/* Loads the tensor for model input i from a file: a .npy converted to the
 * input's dtype, or an image fitted to its height, width and channels. */
static int load_input(si_model *m, int i, const char *file, const cli_args *a, si_tensor_in *t,
                      void **owned)
{
    const char *name;
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    si_input_info(m, i, &name, &dt, &rank, shape);
    si_error err = {0};
    t->name = name;
    if (ends_with(file, ".npy")) {
        if (si_npy_read_as(file, dt, &t->rank, t->shape, owned, &err) != SI_OK)
            return die("%s%s", err.message, "");
        t->dtype = dt;
        /* Rank-3 images get a batch. */
        if (t->rank == rank - 1 && rank > 0 && (shape[0] == 1 || shape[0] == -1)) {
            memmove(t->shape + 1, t->shape, (size_t)t->rank * sizeof t->shape[0]);
            t->shape[0] = 1;
            t->rank++;
        }
    } else {
        int h = 0, w = 0, lead = rank == 4 ? 1 : 0;
        if (rank != 3 && rank != 4)
            return die("input '%s' has rank %s; an image needs rank 3 or 4 (HWC or NHWC)", name,
                       rank == 0 ? "0" : rank < 3 ? "< 3" : "> 4");
        int64_t c = shape[lead + 2];
        if (c != 1 && c != 3 && c != 4 && c != -1)
            return die("input '%s' does not take 1, 3 or 4 channels; give a .npy%s", name, "");
        int channels = c == -1 ? 3 : (int)c;
        h = shape[lead] > 0 ? (int)shape[lead] : 0;
        w = shape[lead + 1] > 0 ? (int)shape[lead + 1] : 0;
        si_dtype want = dt == SI_INT32 ? SI_INT32 : SI_FLOAT32;
        if (dt == SI_BOOL)
            return die("input '%s' is bool; give a .npy%s", name, "");
        si_image_info info;
        if (si_image_read_as(file, &h, &w, channels, want, a->fit, owned, &info, &err) != SI_OK)
            return die("%s%s", err.message, "");
        if (!a->quiet) {
            char how[256];
            si_image_info_format(&info, how, sizeof how);
            printf("input %s: %s\n", name, how);
        }
        t->dtype = want;
        t->rank = rank;
        if (lead)
            t->shape[0] = 1;
        t->shape[lead] = h;
        t->shape[lead + 1] = w;
        t->shape[lead + 2] = channels;
    }
    t->data = *owned;
    return 0;
}

/* Every --input names a model input, and there is one for each. */
static int check_input_args(si_model *m, const cli_args *a)
{
    int ni = si_input_count(m);
    if (ni > MAX_INPUTS)
        return die("the model has too many inputs%s%s", "", "");
    if (a->n_ins > 0 && a->n_ins != ni)
        return cli_fail(EXIT_MODEL, "the model has %d inputs but %d --input given", ni, a->n_ins);
    for (int k = 0; k < a->n_ins; k++) {
        if (!a->ins[k].name)
            continue;
        int found = 0;
        char names[512] = "";
        for (int i = 0; i < ni; i++) {
            const char *nm;
            si_input_info(m, i, &nm, NULL, NULL, NULL);
            found |= !strcmp(nm, a->ins[k].name);
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", nm);
        }
        if (!found)
            return die("the model has no input named '%s' (its inputs: %s)", a->ins[k].name, names);
    }
    return 0;
}

static int seeded_input(si_model *m, int i, uint32_t seed, si_tensor_in *t, void **owned)
{
    const char *nm;
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    si_input_info(m, i, &nm, &dt, &rank, shape);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 0) {
            if (d != 0)
                return die("input '%s' has a free dimension other than the batch; give --input%s", nm, "");
            shape[d] = 1;
        }
        n *= shape[d];
    }
    *t = (si_tensor_in){.name = nm, .dtype = dt, .rank = rank};
    memcpy(t->shape, shape, sizeof shape);
    if (!(*owned = random_input(dt, n, seed + 7919u * (uint32_t)i)))
        return cli_fail(EXIT_OTHER, "out of memory");
    t->data = *owned;
    return 0;
}

int cli_make_inputs(si_model *m, const cli_args *a, si_tensor_in *tin, void **owned)
{
    int rc = check_input_args(m, a), ni = si_input_count(m);
    for (int i = 0; i < ni && !rc; i++) {
        memset(&tin[i], 0, sizeof tin[i]);
        if (a->n_ins == 0) {
            rc = seeded_input(m, i, a->seed, &tin[i], &owned[i]);
            continue;
        }
        const char *nm;
        si_input_info(m, i, &nm, NULL, NULL, NULL);
        int which = -1;
        for (int k = 0; k < a->n_ins; k++)
            if (a->ins[k].name ? !strcmp(a->ins[k].name, nm) : (ni == 1 || k == i))
                which = k;
        rc = which < 0 ? die("no --input for model input '%s'%s", nm, "")
                       : load_input(m, i, a->ins[which].file, a, &tin[i], &owned[i]);
    }
    return rc;
}
