/* streaminfer — the command line: options, then run, plan or info. Uses only
 * include/streaminfer.h. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

static const char usage[] =
    "usage: streaminfer [options] MODEL\n"
    "       streaminfer [options] MODEL1 MODEL2 ...\n"
    "       streaminfer plan [--vram SIZE] [--input ...] MODEL\n"
    "       streaminfer plan --smallest [--within PCT] [--input ...] MODEL\n"
    "       streaminfer info [--json] [--input ...] MODEL\n"
    "\n"
    "Runs a TensorFlow.js graph model (MODEL: a folder holding model.json, or a\n"
    "graph-model .json file with its shards beside it) on the GPU through OpenGL ES\n"
    "compute shaders, and prints its outputs and the GPU memory it used.\n"
    "`plan` prints the plan for that budget as a table (segments, steps, working\n"
    "sets, uploads, evictions, GPU bytes in use, peak) without running anything,\n"
    "made for the GPU a run would use (the host's where no GPU opens);\n"
    "a model whose input sizes are free takes them from --input.\n"
    "`plan --smallest` finds the smallest --vram budget B whose plan is accepted\n"
    "(B-1's refused) by a search over plans, running nothing (from the budget a\n"
    "refusal at 1 byte names, then bisection that tries first the budgets refusals\n"
    "name), and prints it as a\n"
    "line \"smallest accepted budget X MiB (N bytes) ...\" and a line \"bytes N\";\n"
    "acceptance is taken to be monotone in the budget and checked at N-1 and N only.\n"
    "A model with parts the host interpreter runs (loops, NonMaxSuppression, ...)\n"
    "has GPU stages after them that are planned only as it runs: from stage 1's\n"
    "smallest budget on, the bisection goes on over runs on the inputs given (or\n"
    "the seeded ones), each stage accepted, and the line says how many it made.\n"
    "With --within PCT the search stops once the last refused budget is within PCT\n"
    "percent below the accepted one it prints (the probes nearest the smallest\n"
    "budget are the slowest, so it tries first where one probe ends the search);\n"
    "the line names both.\n"
    "`info` describes the model without running it: inputs and outputs (names,\n"
    "shapes with free dimensions as -1, dtypes), ops and how often each occurs,\n"
    "weights (count, bytes, stored dtypes), control flow, the lower bound and the\n"
    "smallest budget that could work, the GPU and its limits; --json as JSON.\n"
    "Several MODELs make a pipeline: all are opened into one GPU context and one\n"
    "--vram budget, and run in turn --runs times (a frame: each model once, in the\n"
    "order given); their weights compete for the budget (a model whose next run is\n"
    "farthest gives its GPU memory up first), and outputs are those of each model run\n"
    "alone; a --host-mem budget bounds their host pools together (each model takes\n"
    "the least that works for it, in the order given). Printed: each model's outputs of the last frame, a line of figures per model\n"
    "(lower bound, its own arena, bytes uploaded, ms a run), the shared budget and peak,\n"
    "and the traffic (bytes uploaded a frame after the first); --stats FILE.json writes\n"
    "the same figures per model and shared. Inputs by model: --input MODELNAME:INPUT=FILE\n"
    "(MODELNAME: the file's or folder's name, as emotion for emotion.json), else random.\n"
    "--output DIR writes DIR/MODELNAME/OUTPUT.npy; --trace is for one model.\n"
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
    "                       buffer) and the smallest budget that could work. Quantized\n"
    "                       weights cross the bus as stored and are dequantized as they\n"
    "                       are loaded (with no limit: once, and kept on the GPU).\n"
    "  --host-mem SIZE      host memory budget for the tensors a run holds on the host:\n"
    "                       the inputs it is given (read in place, not copied) and the\n"
    "                       host pool (weights' host copies, spills, outputs, and the\n"
    "                       staging of what comes from files), as --vram takes\n"
    "                       sizes (default: no limit: every weight read once and kept,\n"
    "                       every spill kept). Within it, weights that do not fit are\n"
    "                       read again from the model's shards each time the plan\n"
    "                       loads them (the next one read ahead), and spills that do not\n"
    "                       fit go to a spill file (same results, bit for bit); a budget\n"
    "                       no plan fits is refused, naming the smallest that works.\n"
    "                       Outputs are handed back from their homes in the pool, not\n"
    "                       copied (those that do not fit come back from the file).\n"
    "                       Other host memory (the GL context, the program, folded\n"
    "                       constants) is not in it\n"
    "  --spill-dir DIR      where the spill file is made (default: $TMPDIR, else /tmp); it\n"
    "                       is unlinked as soon as it is made, so none is left behind\n"
    "  --plan-cache DIR     where plans are kept and found again (default:\n"
    "                       $XDG_CACHE_HOME/streaminfer/plans, else ~/.cache/...): a\n"
    "                       plan is stored keyed by the model's bytes, the input shapes,\n"
    "                       the budget, the GPU and its limits and the version, and the\n"
    "                       next start with the same key takes it instead of planning\n"
    "                       (a stale, cut or edited entry is planned again); `plan`\n"
    "                       stores the plan it prints, so an image can carry its plans;\n"
    "                       the GPU programs a run compiles are kept there too (the\n"
    "                       driver's binaries, by source and driver: a start takes them\n"
    "                       instead of compiling; a cut or edited one is compiled again),\n"
    "                       and a run points the NVIDIA driver's own shader cache at\n"
    "                       DIR/gl unless __GL_SHADER_DISK_CACHE(_PATH) is set\n"
    "  --no-plan-cache      plan and compile every time, store nothing\n"
    "  --max-buffer SIZE    lower the GPU's limit on the bytes of one buffer a step binds\n"
    "                       (its storage block size, 128M on llvmpipe) to SIZE, as on a\n"
    "                       GPU whose limit is that small: tensors bigger than it live\n"
    "                       as bands of rows (same results); for tests\n"
    "  --precision f32|f16  how float tensors are stored on the GPU and in the host pool:\n"
    "                       f32 (default) or f16, IEEE half, two a 32-bit word: half\n"
    "                       the bytes of activations, float32 weights and constants, so\n"
    "                       less VRAM and less to copy; kernels compute in float32 and\n"
    "                       round once on store, saturating at 65504. Float32 stay: the\n"
    "                       model's outputs, what the host reads, tensors\n"
    "                       under 4096 elements, floats that become indices, sizes or\n"
    "                       masks (casts to int or bool, comparisons, and the\n"
    "                       elementwise steps before them), the arguments of Exp, Log,\n"
    "                       Softplus and Pow, and what ops with no half kernel yet read\n"
    "                       or write. --stats: f16_tensors and f32_tensors (activations\n"
    "                       each way), f16_overflows (values a run saturated; with\n"
    "                       --check-steps each step that did is named). Outputs at every\n"
    "                       budget are bitwise those of f16 with no budget (not f32's)\n"
    "  --f32-ops LIST       with --precision f16: ops (model.json's names, comma-separated,\n"
    "                       as info lists them: Sigmoid,_FusedConv2D) whose steps keep\n"
    "                       every tensor they read or write float32; Placeholder keeps\n"
    "                       the model's inputs float32 (else rounded as they are\n"
    "                       uploaded), Const its float32 weights and folded constants\n"
    "  --input FILE         input for a one-input model: .npy (any numeric dtype, converted\n"
    "                       to the input's as tf.cast does; refused where int32 cannot\n"
    "                       hold a value), or an image (.jpg/.png/.bmp/...; gray, RGB or\n"
    "                       RGBA, converted to the channels the input takes: 1, 3 or 4)\n"
    "                       fitted to the input's height x width as --resize says, with\n"
    "                       tf.image.resizeBilinear's defaults; float inputs scaled to\n"
    "                       [0,1], int inputs 0..255; how it was fitted is printed\n"
    "  --input NAME=FILE    input by name (repeat for several inputs)\n"
    "  --resize MODE        how an image is fitted: stretch (default: to height x width),\n"
    "                       fit (aspect kept, centred, the rest 0) or crop (aspect kept,\n"
    "                       the centre of an image resized to cover)\n"
    "  --seed N             seed of the random input used when --input is absent\n"
    "                       (default 1; float inputs uniform in [0,1), int inputs 0..255)\n"
    "  --output DIR         write one .npy per output, named after the output tensor\n"
    "                       (characters outside [A-Za-z0-9._-] become _)\n"
    "  --stats FILE.json    write memory and time figures and the output list as JSON\n"
    "                       (- for standard output)\n"
    "  --trace FILE.json    write a Chrome trace of the (last) run: compute, uploads,\n"
    "                       spills, GPU bytes in use as issued, and where the GPU has\n"
    "                       timer queries each kernel and copy in GPU time (with flops);\n"
    "                       without them it waits for the GPU after each action\n"
    "  --io mmap|uring      how weight shards are read (default mmap)\n"
    "  --backend gpu|host   run kernels on the GPU (default) or with the host reference\n"
    "                       (which prints no GPU figures)\n"
    "  --runs N             run N times (default 1); with N > 1 the first run warms up\n"
    "                       and is not timed, and the min, median, p90 and max run time\n"
    "                       of the others are printed (and in --stats as run_ms_min,\n"
    "                       run_ms_median, run_ms_p90, run_ms_max); other figures are\n"
    "                       from the last run\n"
    "  --smallest           plan: find and print the smallest accepted budget (above)\n"
    "  --within PCT         plan --smallest: stop within PCT percent of it (above)\n"
    "  --json               info: print JSON\n"
    "  -q, --quiet          print nothing on success\n"
    "  -V, --version        the version of streaminfer\n"
    "  -h, --help           this text\n"
    "\n"
    "debug options (the environment variables SI_STAGES, SI_DRIVER_RESERVE,\n"
    "SI_CHECK_STEPS, SI_PLAN_PREFETCH, SI_PLAN_DEBUG, SI_COPY_KERNELS and SI_CONV override\n"
    "them):\n"
    "  --no-stages          everything after the first host-interpreter node stays on\n"
    "                       the host (no later GPU stages)\n"
    "  --driver-reserve     leave the GPU driver's share of the budget free on llvmpipe\n"
    "                       too, as on a real GPU\n"
    "  --check-steps TOL    after each GPU step run the host reference and name the\n"
    "                       steps whose outputs differ by more than TOL (> 0)\n"
    "  --plan-prefetch[=N]  plan the loads of the next N steps (1 if no N; 0: off, the\n"
    "                       default) beside the dispatch before them where the budget\n"
    "                       leaves room at every step between; with N > 1 a step takes\n"
    "                       them while its estimated time lasts\n"
    "  --plan-debug         print each planning attempt on stderr (plan --smallest:\n"
    "                       each probe: its budget, what it found, how long)\n"
    "  --copy-kernels MODE  how loads reach the GPU: auto (default: transfer kernels,\n"
    "                       which the next step runs beside, on a GPU; glCopyBufferSubData\n"
    "                       on a CPU device like llvmpipe), on or off; the same bytes arrive\n"
    "                       (with on, also an output one step writes whole goes by that\n"
    "                       step's kernel straight into host memory, not by a copy after\n"
    "                       it: --stats bytes_out_in_place; not auto's until measured)\n"
    "  --loop-nodes MODE    where the host interpreter's nodes that move big tensors run:\n"
    "                       off (default: the host) or on (the GPU, with no --vram only;\n"
    "                       measured no faster on the H200); the same bits either way\n"
    "  --conv-kernel KIND   which conv2d kernel runs: auto (default: the device's choice),\n"
    "                       gpu (a GPU's choice, on any device), plain, vec, oc4,\n"
    "                       tiled[:BM,BN,TM,TN,BK] (the same bits) or\n"
    "                       split[:DIV,MAX,AIM] (faster on a GPU, other bits: not always\n"
    "                       TensorFlow.js's answer where a model selects)\n"
    "\n"
    "Options may come in any order, as --opt VALUE or --opt=VALUE; -- ends them.\n"
    "On a terminal, work that lasts over a second (planning, reading weights, runs, the\n"
    "search of plan --smallest) shows its progress on stderr; nothing is shown when stderr\n"
    "is not a terminal, or with -q.\n"
    "\n"
    "Exit status: 0 success; 1 any other failure (out of memory, a file not written);\n"
    "2 bad usage (options, numbers); 3 the model or an input is missing, malformed or\n"
    "unsupported; 4 no plan fits the budget; 5 the GPU failed (no EGL/GLES 3.1 device).\n"
    "On failure one line on stderr says what went wrong.\n";

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

/* A positive finite decimal (1e-3, 0.01): no suffix. */
static int parse_tolerance(const char *v, double *out)
{
    if (!v || !((*v >= '0' && *v <= '9') || *v == '.'))
        return -1;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || !isfinite(x) || x <= 0)
        return -1;
    *out = x;
    return 0;
}

enum {
    O_VRAM = 256, O_MAXBUF, O_HOSTMEM, O_SPILLDIR, O_INPUT, O_SEED, O_OUTPUT, O_STATS, O_TRACE, O_IO, O_BACKEND, O_RUNS,
    O_JSON, O_RESIZE, O_NO_STAGES, O_DRIVER_RESERVE, O_CHECK_STEPS, O_PLAN_PREFETCH, O_PLAN_DEBUG, O_SMALLEST, O_WITHIN,
    O_PLAN_CACHE, O_NO_PLAN_CACHE, O_COPY_KERNELS, O_CONV_KERNEL, O_PRECISION, O_F32_OPS,
    O_LOOP_NODES
};

static const struct option longopts[] = {
    {"vram", required_argument, NULL, O_VRAM},       {"input", required_argument, NULL, O_INPUT},
    {"max-buffer", required_argument, NULL, O_MAXBUF},
    {"host-mem", required_argument, NULL, O_HOSTMEM}, {"spill-dir", required_argument, NULL, O_SPILLDIR},
    {"seed", required_argument, NULL, O_SEED},       {"output", required_argument, NULL, O_OUTPUT},
    {"stats", required_argument, NULL, O_STATS},     {"trace", required_argument, NULL, O_TRACE},
    {"io", required_argument, NULL, O_IO},           {"backend", required_argument, NULL, O_BACKEND},
    {"runs", required_argument, NULL, O_RUNS},       {"json", no_argument, NULL, O_JSON},
    {"resize", required_argument, NULL, O_RESIZE},
    {"no-stages", no_argument, NULL, O_NO_STAGES},
    {"driver-reserve", no_argument, NULL, O_DRIVER_RESERVE},
    {"check-steps", required_argument, NULL, O_CHECK_STEPS},
    {"plan-prefetch", optional_argument, NULL, O_PLAN_PREFETCH},
    {"plan-debug", no_argument, NULL, O_PLAN_DEBUG},
    {"copy-kernels", required_argument, NULL, O_COPY_KERNELS},
    {"loop-nodes", required_argument, NULL, O_LOOP_NODES},
    {"conv-kernel", required_argument, NULL, O_CONV_KERNEL},
    {"precision", required_argument, NULL, O_PRECISION},
    {"f32-ops", required_argument, NULL, O_F32_OPS},
    {"smallest", no_argument, NULL, O_SMALLEST},
    {"within", required_argument, NULL, O_WITHIN},
    {"plan-cache", required_argument, NULL, O_PLAN_CACHE},
    {"no-plan-cache", no_argument, NULL, O_NO_PLAN_CACHE},
    {"quiet", no_argument, NULL, 'q'},
    {"version", no_argument, NULL, 'V'},             {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

/* One option; 0, -1 for --help/--version done, or the exit code. */
static int parse_one(int c, const char *v, const char *arg, cli_args *a)
{
    unsigned long long num;
    switch (c) {
    case 'h': fputs(usage, stdout); return -1;
    case 'V': printf("streaminfer %s\n", si_version()); return -1;
    case 'q': a->quiet = 1; return 0;
    case O_VRAM:
        if (si_parse_size(v, &a->opt.vram_budget) || a->opt.vram_budget == 0)
            return cli_fail(EXIT_USAGE, "--vram: '%s' is not a size like 512M, 1G, 1.5G or a byte count", v);
        return 0;
    case O_HOSTMEM:
        if (si_parse_size(v, &a->opt.host_mem_budget) || !a->opt.host_mem_budget)
            return cli_fail(EXIT_USAGE, "--host-mem: '%s' is not a size like 256M, 1G or a byte count", v);
        return 0;
    case O_SPILLDIR: {
        struct stat sb;
        if (!v[0] || stat(v, &sb) || !S_ISDIR(sb.st_mode))
            return cli_fail(EXIT_USAGE, "--spill-dir: '%s' is not a folder", v);
        a->opt.spill_dir = v;
        return 0;
    }
    case O_PLAN_CACHE:
        if (!v[0])
            return cli_fail(EXIT_USAGE, "--plan-cache: a folder is required");
        a->opt.plan_cache_dir = v;
        a->no_plan_cache = 0;
        return 0;
    case O_NO_PLAN_CACHE:
        a->no_plan_cache = 1;
        return 0;
    case O_MAXBUF:
        if (si_parse_size(v, &a->opt.max_buffer_bytes) || !a->opt.max_buffer_bytes)
            return cli_fail(EXIT_USAGE, "--max-buffer: '%s' is not a size like 8M or a byte count", v);
        return 0;
    case O_INPUT: {
        if (a->n_ins == MAX_INPUTS)
            return cli_fail(EXIT_USAGE, "too many --input options");
        const char *eq = strchr(v, '=');
        /* NAME=FILE unless the whole thing is an existing file */
        struct stat sb;
        if (eq && stat(v, &sb) != 0)
            a->ins[a->n_ins++] = (input_arg){strndup(v, (size_t)(eq - v)), eq + 1};
        else
            a->ins[a->n_ins++] = (input_arg){NULL, v};
        return 0;
    }
    case O_SEED:
        if (parse_count(v, 0, UINT32_MAX, &num))
            return cli_fail(EXIT_USAGE, "--seed: '%s' is not a number from 0 to 4294967295", v);
        a->seed = (uint32_t)num;
        return 0;
    case O_OUTPUT: a->outdir = v; return 0;
    case O_STATS: a->stats_path = v; return 0;
    case O_TRACE: a->opt.trace_path = v; return 0;
    case O_IO:
        if (strcmp(v, "mmap") && strcmp(v, "uring"))
            return cli_fail(EXIT_USAGE, "--io: '%s' is not mmap or uring", v);
        a->opt.io_mode = !strcmp(v, "mmap") ? SI_IO_MMAP : SI_IO_URING;
        return 0;
    case O_BACKEND:
        if (strcmp(v, "gpu") && strcmp(v, "host"))
            return cli_fail(EXIT_USAGE, "--backend: '%s' is not gpu or host", v);
        a->opt.backend = !strcmp(v, "gpu") ? SI_BACKEND_GPU : SI_BACKEND_HOST;
        a->backend_set = 1;
        return 0;
    case O_RUNS:
        if (parse_count(v, 1, 1000000, &num))
            return cli_fail(EXIT_USAGE, "--runs: '%s' is not a whole number from 1 to 1000000", v);
        a->runs = (int)num;
        return 0;
    case O_JSON: a->json = 1; return 0;
    case O_RESIZE:
        if (!strcmp(v, "stretch"))
            a->fit = SI_FIT_STRETCH;
        else if (!strcmp(v, "fit"))
            a->fit = SI_FIT_FIT;
        else if (!strcmp(v, "crop"))
            a->fit = SI_FIT_CROP;
        else
            return cli_fail(EXIT_USAGE, "--resize: '%s' is not stretch, fit or crop", v);
        return 0;
    case O_NO_STAGES: a->opt.no_stages = 1; return 0;
    case O_DRIVER_RESERVE: a->opt.driver_reserve = 1; return 0;
    case O_CHECK_STEPS:
        if (parse_tolerance(v, &a->opt.check_steps))
            return cli_fail(EXIT_USAGE, "--check-steps: '%s' is not a tolerance above 0 like 1e-3", v);
        return 0;
    case O_PLAN_PREFETCH: {
        unsigned long long num = 1;
        if (v && parse_count(v, 0, 64, &num))
            return cli_fail(EXIT_USAGE, "--plan-prefetch: '%s' is not a number of steps from 0 to 64", v);
        a->opt.plan_prefetch = (int)num;
        return 0;
    }
    case O_PLAN_DEBUG: a->opt.plan_debug = 1; return 0;
    case O_COPY_KERNELS:
        if (!strcmp(v, "auto"))
            a->opt.copy_kernels = 0;
        else if (!strcmp(v, "on"))
            a->opt.copy_kernels = 1;
        else if (!strcmp(v, "off"))
            a->opt.copy_kernels = -1;
        else
            return cli_fail(EXIT_USAGE, "--copy-kernels: '%s' is not auto, on or off", v);
        return 0;
    case O_LOOP_NODES:
        if (!strcmp(v, "on"))
            a->opt.loop_nodes = 1;
        else if (!strcmp(v, "off"))
            a->opt.loop_nodes = -1;
        else
            return cli_fail(EXIT_USAGE, "--loop-nodes: '%s' is not on or off", v);
        return 0;
    case O_CONV_KERNEL: /* the library checks the rest (SI_ERR_ARG at si_open) */
        a->opt.conv_kernel = strcmp(v, "auto") ? v : NULL;
        return 0;
    case O_PRECISION:
        if (!strcmp(v, "f16"))
            a->opt.precision = SI_PRECISION_F16;
        else if (!strcmp(v, "f32"))
            a->opt.precision = SI_PRECISION_F32;
        else
            return cli_fail(EXIT_USAGE, "--precision: '%s' is not f32 or f16", v);
        return 0;
    case O_F32_OPS: /* the library checks the names (SI_ERR_ARG at si_open) */
        a->opt.f32_ops = v;
        return 0;
    case O_SMALLEST: a->smallest = 1; return 0;
    case O_WITHIN:
        if (parse_tolerance(v, &a->within) || a->within >= 100)
            return cli_fail(EXIT_USAGE, "--within: '%s' is not a percentage above 0 and below 100", v);
        return 0;
    case ':': return cli_fail(EXIT_USAGE, "option %s needs a value; see --help", arg);
    }
    return cli_fail(EXIT_USAGE, "unknown option '%s'; see --help", arg);
}

/* Options a command ignores are refused rather than dropped. */
static int check_command(const cli_args *a)
{
    const char *extra = NULL;
    if (a->cmd != CMD_RUN)
        extra = a->stats_path ? "--stats" : a->outdir ? "--output" : a->opt.trace_path ? "--trace"
              : a->runs != 1 ? "--runs" : NULL;
    if (extra)
        return cli_fail(EXIT_USAGE, "%s runs nothing: it takes no %s", a->cmd == CMD_PLAN ? "plan" : "info",
                        extra);
    if (a->cmd == CMD_INFO && a->opt.vram_budget)
        return cli_fail(EXIT_USAGE, "info takes no --vram: it reports the smallest budget itself");
    if (a->smallest && a->cmd != CMD_PLAN)
        return cli_fail(EXIT_USAGE, "--smallest is for plan: streaminfer plan --smallest MODEL");
    if (a->within > 0 && !a->smallest)
        return cli_fail(EXIT_USAGE, "--within is for plan --smallest: streaminfer plan --smallest --within 1 MODEL");
    if (a->smallest && a->opt.vram_budget)
        return cli_fail(EXIT_USAGE, "plan --smallest takes no --vram: it finds the budget itself");
    if (a->cmd != CMD_INFO && a->json)
        return cli_fail(EXIT_USAGE, "--json is for info; --stats writes a run's figures as JSON");
    return 0;
}

/* Fills a from argv; returns 0 to go on, else the exit status (*done set). */
int cli_parse(int argc, char **argv, cli_args *a, int *done)
{
    *a = (cli_args){.runs = 1, .seed = 1};
    *done = 1;
    if (argc > 1 && (!strcmp(argv[1], "plan") || !strcmp(argv[1], "info"))) {
        a->cmd = !strcmp(argv[1], "plan") ? CMD_PLAN : CMD_INFO;
        argv++;
        argc--;
    }
    opterr = 0; /* our own messages, one line each */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":qVh", longopts, NULL)) != -1) {
        /* its number is optional, so it comes after '=': "--plan-prefetch 3"
         * would make 3 a model (unless a model is named so) */
        if (c == O_PLAN_PREFETCH && !optarg && optind < argc && argv[optind][0] &&
            strspn(argv[optind], "0123456789") == strlen(argv[optind]) && access(argv[optind], F_OK) != 0)
            return cli_fail(EXIT_USAGE, "--plan-prefetch: give its number as --plan-prefetch=%s", argv[optind]);
        int rc = parse_one(c, optarg, argv[optind - 1], a);
        if (rc)
            return rc < 0 ? 0 : rc;
    }
    for (int i = optind; i < argc; i++) {
        if (a->model && a->cmd != CMD_RUN)
            return cli_fail(EXIT_USAGE, "%s takes one MODEL (got '%s' and '%s'); see --help",
                            a->cmd == CMD_PLAN ? "plan" : "info", a->model, argv[i]);
        if (a->n_models == MAX_MODELS)
            return cli_fail(EXIT_USAGE, "at most %d models", MAX_MODELS);
        a->models[a->n_models++] = argv[i];
        if (!a->model)
            a->model = argv[i];
    }
    if (!a->model)
        return cli_fail(EXIT_USAGE, "no MODEL given; see --help");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (a->no_plan_cache)
        a->opt.plan_cache_dir = NULL;
    else if (!a->opt.plan_cache_dir && xdg && xdg[0] == '/')
        snprintf(a->plan_cache_default, sizeof a->plan_cache_default, "%s/streaminfer/plans", xdg);
    else if (!a->opt.plan_cache_dir && home && home[0] == '/')
        snprintf(a->plan_cache_default, sizeof a->plan_cache_default, "%s/.cache/streaminfer/plans", home);
    if (!a->no_plan_cache && !a->opt.plan_cache_dir && a->plan_cache_default[0])
        a->opt.plan_cache_dir = a->plan_cache_default;
    int rc = check_command(a);
    *done = rc != 0;
    return rc;
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

static int check_paths(const cli_args *a)
{
    if (a->outdir && make_dirs(a->outdir))
        return cli_fail(EXIT_OTHER, "--output: cannot create folder '%s': %s", a->outdir, strerror(errno));
    if (a->stats_path && strcmp(a->stats_path, "-") && !writable_file(a->stats_path))
        return cli_fail(EXIT_OTHER, "--stats: cannot write '%s': %s", a->stats_path, strerror(errno));
    if (a->opt.trace_path && !writable_file(a->opt.trace_path))
        return cli_fail(EXIT_OTHER, "--trace: cannot write '%s': %s", a->opt.trace_path, strerror(errno));
    return 0;
}

/* A run's GPU programs kept by the NVIDIA driver's own shader disk cache too,
 * in the plan cache's folder (DIR/gl): the programs streaminfer stores there
 * save the compile but not the driver's finishing of each one at its first
 * dispatch, which its disk cache does save (bench/results/startup.md, session
 * 35: package models start in 78 ms instead of 393). The driver reads these
 * variables when the context is made; it keeps no cache for root unless a
 * folder is named, and does not make a named folder. Not where the user set
 * either variable, never with --no-plan-cache (nothing stored), and not for
 * --backend host (no GL context opens). Other drivers ignore the variables. */
static void keep_driver_programs(const cli_args *a)
{
    char dir[4096];
    const char *pc = a->opt.plan_cache_dir;
    if (a->cmd != CMD_RUN || a->opt.backend == SI_BACKEND_HOST || !pc || !pc[0] ||
        getenv("__GL_SHADER_DISK_CACHE_PATH") || getenv("__GL_SHADER_DISK_CACHE") ||
        snprintf(dir, sizeof dir, "%s/gl", pc) >= (int)sizeof dir || make_dirs(dir))
        return; /* a folder that cannot be made: the driver's default, as before */
    setenv("__GL_SHADER_DISK_CACHE_PATH", dir, 0);
    setenv("__GL_SHADER_DISK_CACHE", "1", 0);
}

int main(int argc, char **argv)
{
    cli_args a;
    int done, rc = cli_parse(argc, argv, &a, &done);
    if (!done && !(rc = check_paths(&a))) {
        cli_progress_install(&a.opt, a.quiet);
        /* A plan is pure data, but it is made for a GPU (its alignment, its loop
         * limit, the driver's share of the budget): `plan` and `info` plan for the
         * GPU a run would use, or for the host reference where none opens. */
        if (a.cmd != CMD_RUN && !a.backend_set)
            a.opt.backend = SI_BACKEND_AUTO;
        keep_driver_programs(&a);
        rc = cli_command_run(&a);
        cli_progress_done();
    }
    for (int k = 0; k < a.n_ins; k++)
        free((char *)a.ins[k].name);
    return rc;
}
