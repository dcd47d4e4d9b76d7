/* streaminfer — the command line. Uses only include/streaminfer.h. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "streaminfer.h"

static const char usage[] =
    "usage: streaminfer [options] MODEL\n"
    "       streaminfer plan [--vram SIZE] [--input ...] MODEL\n"
    "\n"
    "Runs a TensorFlow.js graph model (MODEL: a folder holding model.json, or a\n"
    "graph-model .json file with its shards beside it) on the GPU through OpenGL ES\n"
    "compute shaders, and prints its outputs and the GPU memory it used.\n"
    "`plan` prints the plan for that budget as a table (segments, steps, working\n"
    "sets, uploads, evictions, GPU bytes in use, peak) without running anything,\n"
    "made for the GPU a run would use (the host's where no GPU opens);\n"
    "a model whose input sizes are free takes them from --input.\n"
    "\n"
    "options:\n"
    "  --vram SIZE          GPU memory budget: 512M, 1G, 1.5G or plain bytes (default: no\n"
    "                       limit). Every GPU byte streaminfer owns stays within it, and\n"
    "                       so does what the driver allocates for it (page tables of\n"
    "                       the host memory the GPU copies through, left free by the plan):\n"
    "                       weights are streamed and activations spilled as needed,\n"
    "                       and a step too big for it is split into parts along output\n"
    "                       rows or channels (same results, bit for bit); a budget no\n"
    "                       plan fits is refused, naming the step that does not fit, the\n"
    "                       limit that bound it (the budget, or the GPU's limit on one\n"
    "                       buffer) and the smallest budget that could work.\n"
    "  --max-buffer SIZE    lower the GPU's limit on the bytes of one buffer a step binds\n"
    "                       (its storage block size, 128M on llvmpipe) to SIZE, as on a\n"
    "                       GPU whose limit is that small: tensors bigger than it live\n"
    "                       as bands of rows (same results); for tests\n"
    "  --input FILE         input for a one-input model: .npy, or .jpg/.png (resized to\n"
    "                       the input's height x width as tf.image.resizeBilinear does by\n"
    "                       default, RGB; float inputs scaled to [0,1], int inputs 0..255)\n"
    "  --input NAME=FILE    input by name (repeat for several inputs)\n"
    "  --seed N             seed of the random input used when --input is absent\n"
    "                       (default 1; float inputs uniform in [0,1), int inputs 0..255)\n"
    "  --output DIR         write one .npy per output, named after the output tensor\n"
    "                       (characters outside [A-Za-z0-9._-] become _)\n"
    "  --stats FILE.json    write memory and time figures and the output list as JSON\n"
    "                       (- for standard output)\n"
    "  --trace FILE.json    write a Chrome trace of the (last) run: compute, uploads,\n"
    "                       spills, GPU bytes in use (waits for the GPU after each action)\n"
    "  --io mmap|uring      how weight shards are read (default mmap)\n"
    "  --backend gpu|host   run kernels on the GPU (default) or with the host reference\n"
    "  --runs N             run N times (figures are from the last run; default 1)\n"
    "  -q, --quiet          print nothing on success\n"
    "  -V, --version        the version of streaminfer\n"
    "  -h, --help           this text\n"
    "\n"
    "Options may come in any order, as --opt VALUE or --opt=VALUE; -- ends them.\n"
    "\n"
    "Exit status: 0 success; 1 any other failure (out of memory, a file not written);\n"
    "2 bad usage (options, numbers); 3 the model or an input is missing, malformed or\n"
    "unsupported; 4 no plan fits the budget; 5 the GPU failed (no EGL/GLES 3.1 device).\n"
    "On failure one line on stderr says what went wrong.\n";

enum { EXIT_OTHER = 1, EXIT_USAGE = 2, EXIT_MODEL = 3, EXIT_BUDGET = 4, EXIT_GPU = 5 };

static int exit_code(si_result st)
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
    case SI_ERR_NOMEM: break;
    }
    return EXIT_OTHER;
}

#define MAX_INPUTS 64

typedef struct {
    const char *name; /* NULL: positional */
    const char *file;
} input_arg;

static int die_code(int code, const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "streaminfer: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    return code;
}

/* a problem with the model or an input */
static int die(const char *fmt, const char *a, const char *b) { return die_code(EXIT_MODEL, fmt, a, b); }
static int usage_error(const char *fmt, const char *a, const char *b)
{
    return die_code(EXIT_USAGE, fmt, a, b);
}
static int die_status(const si_error *err) { return die_code(exit_code(err->status), "%s%s", err->message, ""); }

/* A whole decimal number in [lo, hi]: no sign, no suffix, no overflow. */
static int parse_count(const char *v, unsigned long long lo, unsigned long long hi,
                       unsigned long long *out)
{
    if (!v || *v < '0' || *v > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

/* --output is made (as mkdir -p) and --stats checked before any work. */
static int make_dirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    if (mkdir(buf, 0777) && errno != EEXIST)
        return -1;
    struct stat sb;
    return stat(buf, &sb) || !S_ISDIR(sb.st_mode) ? -1 : 0;
}

static int writable_file(const char *path)
{
    if (access(path, F_OK) == 0)
        return access(path, W_OK) == 0;
    char *d = strdup(path);
    int ok = d && access(dirname(d), W_OK) == 0;
    free(d);
    return ok;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

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

static void sanitize(const char *in, char *out, size_t n)
{
    size_t i = 0;
    for (; in[i] && i + 1 < n; i++) {
        char c = in[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        out[i] = ok ? c : '_';
    }
    out[i] = 0;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void print_shape(FILE *f, int rank, const int64_t *shape)
{
    fputc('[', f);
    for (int d = 0; d < rank; d++)
        fprintf(f, d ? ",%lld" : "%lld", (long long)shape[d]);
    fputc(']', f);
}

static const char *mib(uint64_t b, char *buf)
{
    snprintf(buf, 32, "%.2f MiB", b / 1048576.0);
    return buf;
}

/* Loads the tensor for model input i from a file. */
static int load_input(si_model *m, int i, const char *file, si_tensor_in *t, void **owned)
{
    const char *name;
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    si_input_info(m, i, &name, &dt, &rank, shape);
    si_error err = {0};
    t->name = name;
    if (ends_with(file, ".npy")) {
        if (si_npy_read(file, &t->dtype, &t->rank, t->shape, owned, &err) != SI_OK)
            return die("%s%s", err.message, "");
        /* .npy files often come as float64/int64; io converts. Rank-3 images get a batch. */
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
        if (shape[lead + 2] != 3 && shape[lead + 2] != -1)
            return die("input '%s' does not take 3 channels; give a .npy%s", name, "");
        h = shape[lead] > 0 ? (int)shape[lead] : 0;
        w = shape[lead + 1] > 0 ? (int)shape[lead + 1] : 0;
        si_dtype want = dt == SI_INT32 ? SI_INT32 : SI_FLOAT32;
        if (dt == SI_BOOL)
            return die("input '%s' is bool; give a .npy%s", name, "");
        if (si_image_read(file, &h, &w, want, owned, &err) != SI_OK)
            return die("%s%s", err.message, "");
        t->dtype = want;
        t->rank = rank;
        if (lead)
            t->shape[0] = 1;
        t->shape[lead] = h;
        t->shape[lead + 1] = w;
        t->shape[lead + 2] = 3;
    }
    t->data = *owned;
    return 0;
}

int main(int argc, char **argv)
{
    si_options opt = {0};
    input_arg ins[MAX_INPUTS];
    int n_ins = 0, runs = 1, quiet = 0;
    const char *model = NULL, *outdir = NULL, *stats_path = NULL;
    uint32_t seed = 1;
    int plan_only = 0, backend_set = 0;
    if (argc > 1 && !strcmp(argv[1], "plan")) {
        plan_only = 1;
        argv++;
        argc--;
    }
    enum { O_VRAM = 256, O_MAXBUF, O_INPUT, O_SEED, O_OUTPUT, O_STATS, O_TRACE, O_IO, O_BACKEND, O_RUNS };
    static const struct option longopts[] = {
        {"vram", required_argument, NULL, O_VRAM},       {"input", required_argument, NULL, O_INPUT},
        {"max-buffer", required_argument, NULL, O_MAXBUF},
        {"seed", required_argument, NULL, O_SEED},       {"output", required_argument, NULL, O_OUTPUT},
        {"stats", required_argument, NULL, O_STATS},     {"trace", required_argument, NULL, O_TRACE},
        {"io", required_argument, NULL, O_IO},           {"backend", required_argument, NULL, O_BACKEND},
        {"runs", required_argument, NULL, O_RUNS},       {"quiet", no_argument, NULL, 'q'},
        {"version", no_argument, NULL, 'V'},             {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    opterr = 0; /* our own messages, one line each */
    optind = 1;
    int c, trace_set = 0;
    unsigned long long num;
    while ((c = getopt_long(argc, argv, ":qVh", longopts, NULL)) != -1) {
        const char *v = optarg;
        switch (c) {
        case 'h': fputs(usage, stdout); return 0;
        case 'V': printf("streaminfer %s\n", si_version()); return 0;
        case 'q': quiet = 1; break;
        case O_VRAM:
            if (si_parse_size(v, &opt.vram_budget) || opt.vram_budget == 0)
                return usage_error("--vram: '%s' is not a size like 512M, 1G, 1.5G or a byte count%s",
                                   v, "");
            break;
        case O_MAXBUF:
            if (si_parse_size(v, &opt.max_buffer_bytes) || !opt.max_buffer_bytes)
                return usage_error("--max-buffer: '%s' is not a size like 8M or a byte count%s", v, "");
            break;
        case O_INPUT: {
            if (n_ins == MAX_INPUTS)
                return usage_error("too many --input options%s%s", "", "");
            const char *eq = strchr(v, '=');
            /* NAME=FILE unless the whole thing is an existing file */
            struct stat sb;
            if (eq && stat(v, &sb) != 0) {
                char *name = strndup(v, (size_t)(eq - v));
                ins[n_ins++] = (input_arg){name, eq + 1};
            } else {
                ins[n_ins++] = (input_arg){NULL, v};
            }
            break;
        }
        case O_SEED:
            if (parse_count(v, 0, UINT32_MAX, &num))
                return usage_error("--seed: '%s' is not a number from 0 to 4294967295%s", v, "");
            seed = (uint32_t)num;
            break;
        case O_OUTPUT: outdir = v; break;
        case O_STATS: stats_path = v; break;
        case O_TRACE: opt.trace_path = v; trace_set = 1; break;
        case O_IO:
            if (!strcmp(v, "mmap"))
                opt.io_mode = SI_IO_MMAP;
            else if (!strcmp(v, "uring"))
                opt.io_mode = SI_IO_URING;
            else
                return usage_error("--io: '%s' is not mmap or uring%s", v, "");
            break;
        case O_BACKEND:
            if (!strcmp(v, "gpu"))
                opt.backend = SI_BACKEND_GPU;
            else if (!strcmp(v, "host"))
                opt.backend = SI_BACKEND_HOST;
            else
                return usage_error("--backend: '%s' is not gpu or host%s", v, "");
            backend_set = 1;
            break;
        case O_RUNS:
            if (parse_count(v, 1, 1000000, &num))
                return usage_error("--runs: '%s' is not a whole number from 1 to 1000000%s", v, "");
            runs = (int)num;
            break;
        case ':': return usage_error("option %s needs a value%s; see --help", argv[optind - 1], "");
        default:
            return usage_error("unknown option '%s'%s; see --help", argv[optind - 1], "");
        }
    }
    for (int i = optind; i < argc; i++) {
        if (model)
            return usage_error("one MODEL only (got '%s' and '%s'); see --help", model, argv[i]);
        model = argv[i];
    }
    if (!model)
        return usage_error("no MODEL given%s%s; see --help", "", "");
    if (plan_only && (stats_path || outdir || trace_set || runs != 1))
        return usage_error("plan runs nothing: it takes no %s%s", stats_path ? "--stats"
                           : outdir ? "--output" : trace_set ? "--trace" : "--runs", "");
    if (outdir && make_dirs(outdir))
        return die_code(EXIT_OTHER, "--output: cannot create folder '%s': %s", outdir, strerror(errno));
    if (stats_path && strcmp(stats_path, "-") && !writable_file(stats_path))
        return die_code(EXIT_OTHER, "--stats: cannot write '%s': %s", stats_path, strerror(errno));
    if (opt.trace_path && !writable_file(opt.trace_path))
        return die_code(EXIT_OTHER, "--trace: cannot write '%s': %s", opt.trace_path, strerror(errno));


    double t0 = now_ms();
    si_model *m = NULL;
    si_error err = {0};
    /* A plan is pure data, but it is made for a GPU (its alignment, its loop
     * limit, the driver's share of the budget): `plan` plans for the GPU a run
     * would use, or for the host reference where none opens. */
    if (plan_only && !backend_set)
        opt.backend = SI_BACKEND_AUTO;
    if (si_open(model, &opt, &m, &err) != SI_OK)
        return die_status(&err);

    int ni = si_input_count(m), rc = 1;
    si_tensor_in tin[MAX_INPUTS];
    void *owned[MAX_INPUTS] = {0};
    if (ni > MAX_INPUTS) {
        rc = die("the model has too many inputs%s%s", "", "");
        goto out;
    }
    if (n_ins > 0 && n_ins != ni) {
        char a[16], b[16];
        snprintf(a, sizeof a, "%d", ni);
        snprintf(b, sizeof b, "%d", n_ins);
        rc = die("the model has %s inputs but %s --input given", a, b);
        goto out;
    }
    for (int k = 0; k < n_ins; k++) {
        if (!ins[k].name)
            continue;
        int found = 0;
        char names[512] = "";
        for (int i = 0; i < ni; i++) {
            const char *nm;
            si_input_info(m, i, &nm, NULL, NULL, NULL);
            found |= !strcmp(nm, ins[k].name);
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", nm);
        }
        if (!found) {
            rc = die("the model has no input named '%s' (its inputs: %s)", ins[k].name, names);
            goto out;
        }
    }
    for (int i = 0; i < ni; i++) {
        memset(&tin[i], 0, sizeof tin[i]);
        if (n_ins > 0) {
            int which = -1;
            for (int k = 0; k < n_ins; k++) {
                const char *nm;
                si_input_info(m, i, &nm, NULL, NULL, NULL);
                if (ins[k].name ? !strcmp(ins[k].name, nm) : (ni == 1 || k == i))
                    which = k;
            }
            if (which < 0) {
                const char *nm;
                si_input_info(m, i, &nm, NULL, NULL, NULL);
                rc = die("no --input for model input '%s'%s", nm, "");
                goto out;
            }
            if ((rc = load_input(m, i, ins[which].file, &tin[i], &owned[i])) != 0)
                goto out;
            rc = EXIT_OTHER;
        } else {
            const char *nm;
            si_dtype dt;
            int rank;
            int64_t shape[SI_MAX_RANK];
            si_input_info(m, i, &nm, &dt, &rank, shape);
            int64_t n = 1;
            for (int d = 0; d < rank; d++) {
                if (shape[d] < 0) {
                    if (d != 0) {
                        rc = die("input '%s' has a free dimension other than the batch; give --input%s",
                            nm, "");
                        goto out;
                    }
                    shape[d] = 1;
                }
                n *= shape[d];
            }
            tin[i] = (si_tensor_in){.name = nm, .dtype = dt, .rank = rank};
            memcpy(tin[i].shape, shape, sizeof shape);
            owned[i] = random_input(dt, n, seed + 7919u * (uint32_t)i);
            tin[i].data = owned[i];
        }
    }
    if (plan_only) {
        if (si_plan(m, tin, ni, &err) != SI_OK || si_print_plan(m, stdout, &err) != SI_OK) {
            rc = die_status(&err);
            goto out;
        }
        rc = 0;
        goto out;
    }
    for (int r = 0; r < runs; r++)
        if (si_run(m, tin, ni, &err) != SI_OK) {
            rc = die_status(&err);
            goto out;
        }
    double wall = now_ms() - t0;
    si_stats st;
    si_get_stats(m, &st);
    int no = si_output_count(m);
    char files[64][300];
    for (int o = 0; o < no && o < 64; o++) {
        char base[256];
        sanitize(si_output_name(m, o), base, sizeof base);
        snprintf(files[o], sizeof files[o], "%s.npy", base);
        if (outdir) {
            si_dtype dt;
            int rank;
            int64_t shape[SI_MAX_RANK];
            const void *data;
            si_output(m, o, &dt, &rank, shape, &data, NULL);
            char *path = NULL;
            if (asprintf(&path, "%s/%s", outdir, files[o]) < 0) {
                rc = die_code(EXIT_OTHER, "out of memory%s%s", "", "");
                goto out;
            }
            si_result ws = si_npy_write(path, dt, rank, shape, data, &err);
            free(path);
            if (ws != SI_OK) {
                rc = die_code(EXIT_OTHER, "%s%s", err.message, "");
                goto out;
            }
        }
    }
    if (!quiet) {
        char b1[32], b2[32], b3[32], b4[32];
        printf("model    %s\n", model);
        for (int o = 0; o < no; o++) {
            si_dtype dt;
            int rank;
            int64_t shape[SI_MAX_RANK];
            const void *data;
            si_output(m, o, &dt, &rank, shape, &data, NULL);
            int64_t n = 1;
            for (int d = 0; d < rank; d++)
                n *= shape[d];
            printf("output   %s %s ", si_output_name(m, o), si_dtype_name(dt));
            print_shape(stdout, rank, shape);
            printf(" first values:");
            for (int64_t k = 0; k < n && k < 5; k++) {
                if (dt == SI_FLOAT32)
                    printf(" %.6g", ((const float *)data)[k]);
                else if (dt == SI_INT32)
                    printf(" %d", ((const int32_t *)data)[k]);
                else
                    printf(" %d", ((const uint8_t *)data)[k]);
            }
            printf("%s\n", n > 5 ? " ..." : "");
        }
        printf("memory   budget %s, peak GPU %s, lower bound %s, weights %s\n"
               "paging   %llu segments, %llu evictions, spilled %.2f MiB, reloaded %.2f MiB\n",
               st.budget_bytes ? mib(st.budget_bytes, b1) : "none", mib(st.peak_vram_bytes, b2),
               mib(st.lower_bound_bytes, b3), mib(st.weights_bytes, b4),
               (unsigned long long)st.segments, (unsigned long long)st.evictions,
               st.bytes_spilled / 1048576.0, st.bytes_reloaded / 1048576.0);
        if (st.steps_split)
            printf("tiling   %llu steps split into parts of at most %s (largest step untiled %s)\n",
                   (unsigned long long)st.steps_split,
                   st.tile_limit_bytes ? mib(st.tile_limit_bytes, b1) : "one buffer",
                   mib(st.untiled_bound_bytes, b2));
        printf("limits   one buffer at most %s (GPU storage block %s, %llu elements a dispatch, "
               "%llu by 32-bit indices)\n", mib(st.max_buffer_bytes, b1),
               st.storage_block_bytes ? mib(st.storage_block_bytes, b2) : "none",
               (unsigned long long)st.max_dispatch_elements,
               (unsigned long long)st.max_index_elements);
        printf("traffic  uploaded %s, downloaded %s\n", mib(st.bytes_uploaded, b1),
               mib(st.bytes_downloaded, b2));
        printf("time     open %.1f ms, run %.1f ms (%llu GPU steps%s), wall %.1f ms\n", st.open_ms,
               st.run_ms, (unsigned long long)st.gpu_steps,
               st.host_ms > 0 ? ", then the host interpreter" : "", wall);
    }
    if (stats_path) {
        int to_stdout = !strcmp(stats_path, "-");
        FILE *f = to_stdout ? stdout : fopen(stats_path, "w");
        if (!f) {
            rc = die_code(EXIT_OTHER, "--stats: cannot write '%s': %s", stats_path, strerror(errno));
            goto out;
        }
        fprintf(f, "{\n  \"model\": ");
        json_str(f, model);
        fprintf(f, ",\n  \"budget_bytes\": %llu,\n  \"peak_vram_bytes\": %llu,\n"
                   "  \"lower_bound_bytes\": %llu,\n  \"untiled_bound_bytes\": %llu,\n"
                   "  \"tile_limit_bytes\": %llu,\n  \"steps_split\": %llu,\n"
                   "  \"weights_bytes\": %llu,\n  \"host_pool_bytes\": %llu,\n"
                   "  \"driver_reserve_bytes\": %llu,\n"
                   "  \"max_buffer_bytes\": %llu,\n  \"storage_block_bytes\": %llu,\n"
                   "  \"max_dispatch_elements\": %llu,\n  \"max_index_elements\": %llu,\n"
                   "  \"largest_buffer_bytes\": %llu,\n"
                   "  \"bytes_uploaded\": %llu,\n  \"bytes_downloaded\": %llu,\n"
                   "  \"bytes_spilled\": %llu,\n  \"bytes_reloaded\": %llu,\n"
                   "  \"evictions\": %llu,\n  \"segments\": %llu,\n  \"gpu_steps\": %llu,\n"
                   "  \"open_ms\": %.3f,\n  \"run_ms\": %.3f,\n  \"upload_ms\": %.3f,\n"
                   "  \"compute_ms\": %.3f,\n  \"stall_ms\": %.3f,\n  \"host_ms\": %.3f,\n"
                   "  \"wall_ms\": %.3f,\n"
                   "  \"outputs\": [",
                (unsigned long long)st.budget_bytes, (unsigned long long)st.peak_vram_bytes,
                (unsigned long long)st.lower_bound_bytes, (unsigned long long)st.untiled_bound_bytes,
                (unsigned long long)st.tile_limit_bytes, (unsigned long long)st.steps_split,
                (unsigned long long)st.weights_bytes, (unsigned long long)st.host_pool_bytes,
                (unsigned long long)st.driver_reserve_bytes,
                (unsigned long long)st.max_buffer_bytes, (unsigned long long)st.storage_block_bytes,
                (unsigned long long)st.max_dispatch_elements, (unsigned long long)st.max_index_elements,
                (unsigned long long)st.largest_buffer_bytes,
                (unsigned long long)st.bytes_uploaded,
                (unsigned long long)st.bytes_downloaded,
                (unsigned long long)st.bytes_spilled, (unsigned long long)st.bytes_reloaded,
                (unsigned long long)st.evictions, (unsigned long long)st.segments,
                (unsigned long long)st.gpu_steps, st.open_ms, st.run_ms, st.upload_ms,
                st.compute_ms, st.stall_ms, st.host_ms, wall);
        for (int o = 0; o < no && o < 64; o++) {
            si_dtype dt;
            int rank;
            int64_t shape[SI_MAX_RANK];
            si_output(m, o, &dt, &rank, shape, NULL, NULL);
            fprintf(f, "%s\n    {\"name\": ", o ? "," : "");
            json_str(f, si_output_name(m, o));
            fprintf(f, ", \"file\": ");
            json_str(f, files[o]);
            fprintf(f, ", \"shape\": ");
            print_shape(f, rank, shape);
            fprintf(f, ", \"dtype\": \"%s\"}", si_dtype_name(dt));
        }
        fprintf(f, "\n  ]\n}\n");
        if (to_stdout ? fflush(f) != 0 : fclose(f) != 0) {
            rc = die_code(EXIT_OTHER, "--stats: cannot write '%s': %s", stats_path, strerror(errno));
            goto out;
        }
    }
    rc = 0;
out:
    for (int i = 0; i < ni && i < MAX_INPUTS; i++)
        free(owned[i]);
    for (int k = 0; k < n_ins; k++)
        free((char *)ins[k].name);
    si_close(m);
    return rc;
}
