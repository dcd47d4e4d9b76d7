/* si_open / si_run / si_close: the model's life. A program (and its plan) is
 * built for one set of input shapes and kept until the shapes change. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime.h"
#include "trace.h"
#include "limits.h"
#include "../core/interp.h"

typedef struct {
    si_dtype dtype;
    core_shape shape;
    void *data; /* user layout: float32 / int32 / 1-byte bool */
} out_tensor;

struct si_model {
    si_options opt;
    io_model *io;
    core_graph *g;
    io_reader *rd;
    glk_ctx *gpu;
    /* the current program */
    core_shape *bound;       /* per input */
    core_buf *bound_vals;    /* per input: the value, for inputs bound by value (data NULL if not) */
    core_program *prog;
    pg_problem pb;
    pg_plan *plan;
    int *buf_of;             /* per tensor storage root: buffer id or -1 */
    int resident;            /* the plan's prologue has run */
    uint32_t arena;          /* GL buffer, arena_bytes long */
    uint8_t *host_arena;     /* host backend: the same arena in host memory */
    uint64_t *off;           /* per buffer: its offset while allocated */
    /* The host pool: each buffer's home in host memory (a weight's stored bytes,
     * a constant, the input, an activation's spilled or downloaded copy). With
     * GL_EXT_buffer_storage it is one persistently mapped GL buffer in client
     * storage, so every transfer is a GPU-side copy; otherwise plain memory. */
    uint8_t *home;
    uint32_t home_buf;
    uint64_t home_bytes;
    uint64_t reserve;        /* of the budget, left to the GPU driver (driver_reserve) */
    uint64_t *home_off;      /* per buffer; UINT64_MAX: none */
    int weights_read;        /* weights are in their homes */
    /* the last run */
    int n_out;
    out_tensor *outs;
    void **in_dev;           /* per model input: 4-byte-element copy of the given data */
    si_stats st;
    si_trace trace;
    int plan_only;           /* si_plan: bind the inputs and plan, run nothing */
    uint64_t in_use;         /* bytes allocated in the arena now (for the trace) */
    uint64_t tile_limit;     /* steps were split into parts within this many bytes (0: none) */
    int n_split;             /* steps split */
    glk_limits limits;       /* the device's, for stats and plans */
    uint64_t max_tensor;     /* the most bytes one tensor a step binds may hold (rt_plan_limits) */
    uint64_t untiled_bound;  /* the largest step's working set before splitting */
    /* Models with dynamic parts run in stages: the GPU program above, the host
     * interpreter, then GPU programs for what follows (built once per shape of
     * what they are given, kept here), the interpreter again ... */
    const core_valmap *given; /* while building a later stage: what it is given */
    si_model *parent;         /* a later stage: shares opt, io, g, rd, gpu */
    si_model **stages;
    int n_stages;
    char *stage_key;          /* a later stage: the shapes (and small values) it was built for */
    int fail_node;            /* the node a failed build stopped at, or -1 */
    uint8_t *host_only;       /* per graph node: the interpreter runs it, never a later stage */
    /* A handle opened by si_open: calls on it take the lock, one at a time,
     * and make its GL context current in the calling thread (glk_bind). */
    pthread_mutex_t lock;
    int has_lock;
};

/* Entering a public call on m: its lock, then its context in this thread. */
typedef struct {
    si_model *m;
    glk_binding saved;
    int bound;
} api_call;

static si_result api_enter(api_call *c, const si_model *cm, si_error *err)
{
    si_model *m = (si_model *)cm; /* the lock is not part of the model's value */
    c->m = m;
    c->bound = 0;
    if (m->has_lock)
        pthread_mutex_lock(&m->lock);
    if (m->gpu) {
        si_result st = glk_bind(m->gpu, &c->saved, err);
        if (st != SI_OK) {
            if (m->has_lock)
                pthread_mutex_unlock(&m->lock);
            return st;
        }
        c->bound = 1;
    }
    return SI_OK;
}

static void api_leave(api_call *c)
{
    if (c->bound)
        glk_unbind(c->m->gpu, &c->saved);
    if (c->m->has_lock)
        pthread_mutex_unlock(&c->m->lock);
}

static void stage_free(si_model *s);
static si_result run_plan(si_model *m, si_error *err);
static si_result output_locked(const si_model *m, int i, si_dtype *dtype, int *rank,
                               int64_t shape[SI_MAX_RANK], const void **data, si_error *err);

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}


static void progress(si_model *m, const char *phase, int done, int total)
{
    if (m->opt.progress)
        m->opt.progress(m->opt.progress_user, phase, done, total);
}

/* core_weight_loader: a weight's value on the host, dequantized as tfjs does. */
static si_result load_weight(void *user, int w, void *dst4, si_error *err)
{
    si_model *m = user;
    const io_weight *wt = &m->io->weights[w];
    void *raw = malloc(wt->nbytes ? wt->nbytes : 1);
    if (!raw)
        return base_fail(err, SI_ERR_NOMEM, "out of memory reading weight %s", wt->name);
    si_result st = io_reader_read(m->rd, w, raw, err);
    if (st == SI_OK)
        io_weight_dequantize(wt, raw, dst4);
    free(raw);
    return st;
}

static void drop_program(si_model *m)
{
    /* later stages were built for this program's binding */
    for (int i = 0; i < m->n_stages; i++)
        stage_free(m->stages[i]);
    free(m->stages);
    m->stages = NULL;
    m->n_stages = 0;
    if (m->gpu && m->arena)
        glk_buffer_destroy(m->gpu, m->arena);
    m->arena = 0;
    free(m->host_arena);
    m->host_arena = NULL;
    if (m->home_buf)
        glk_host_pool_destroy(m->gpu, m->home_buf);
    else
        free(m->home);
    m->home = NULL;
    m->home_buf = 0;
    m->home_bytes = 0;
    free(m->home_off);
    m->home_off = NULL;
    m->weights_read = 0;
    free(m->off);
    m->off = NULL;
    pg_plan_free(m->plan);
    m->plan = NULL;
    free(m->pb.buffers);
    free(m->pb.step_start);
    free(m->pb.step_bufs);
    memset(&m->pb, 0, sizeof m->pb);
    free(m->buf_of);
    m->buf_of = NULL;
    core_program_free(m->prog);
    m->prog = NULL;
    m->resident = 0;
}

/* The pager's view of the program: one buffer per storage root that a step
 * touches or an output needs from the GPU. */
static si_result make_problem(si_model *m, si_error *err)
{
    core_program *p = m->prog;
    pg_problem *pb = &m->pb;
    m->buf_of = malloc(((size_t)p->n_tensors + 1) * sizeof *m->buf_of);
    pb->buffers = calloc((size_t)p->n_tensors + 1, sizeof *pb->buffers);
    pb->step_start = calloc((size_t)p->n_steps + 1, sizeof *pb->step_start);
    pb->step_bufs = calloc((size_t)p->n_steps * (CK_MAX_IN + 1) + 1, sizeof *pb->step_bufs);
    if (!m->buf_of || !pb->buffers || !pb->step_start || !pb->step_bufs)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int t = 0; t < p->n_tensors; t++)
        m->buf_of[t] = -1;
    int n = 0;
    pb->n_steps = p->n_steps;
    for (int s = 0; s < p->n_steps; s++) {
        const ck_step *st = &p->steps[s];
        pb->step_start[s] = n;
        for (int i = 0; i <= st->n_in; i++) {
            int t = i < st->n_in ? st->in[i] : st->out;
            if (t < 0)
                continue;
            int r = core_storage(p, t);
            if (m->buf_of[r] < 0) {
                const core_tensor *ct = &p->tensors[r];
                int b = pb->n_buffers++;
                m->buf_of[r] = b;
                pb->buffers[b].bytes = ct->bytes;
                pb->buffers[b].tensor = r;
                pb->buffers[b].kind = ct->kind == PT_WEIGHT ? PG_WEIGHT
                                      : ct->kind == PT_CONST ? PG_CONST
                                      : ct->kind == PT_INPUT ? PG_INPUT : PG_ACT;
            }
            pb->step_bufs[n++] = m->buf_of[r];
        }
    }
    pb->step_start[p->n_steps] = n;
    for (int o = 0; o < p->n_outputs + p->n_boundary; o++) {
        int t = o < p->n_outputs ? p->outputs[o] : p->boundary[o - p->n_outputs];
        if (t < 0)
            continue;
        int r = core_storage(p, t);
        if (m->buf_of[r] >= 0 && p->tensors[r].kind == PT_ACT)
            pb->buffers[m->buf_of[r]].is_output = 1;
    }
    for (int i = 0; i < p->n_out_bands; i++) /* an output too big for one buffer, in bands */
        if (m->buf_of[p->out_bands[i].tensor] >= 0)
            pb->buffers[m->buf_of[p->out_bands[i].tensor]].is_output = 1;
    return SI_OK;
}

/* Homes in the host pool for every buffer the plan moves between host and GPU,
 * into off; returns the pool's size (UINT64_MAX: out of memory). Weights, constants,
 * inputs and what is read after the run (outputs, tensors handed to later
 * stages) keep theirs; an activation spilled and reloaded within the run
 * needs its home only from its first spill to its last reload, so those homes
 * share space, first fit in time. That keeps the pool near the most that is
 * spilled at once, not all that is ever spilled (3.4 GiB for effdet-d7 at
 * 256 MB), and the pool costs VRAM: the driver's page tables for it
 * (driver_reserve). */
static uint64_t home_layout(const si_model *m, const pg_plan *pl, uint64_t *o)
{
    int nb = m->pb.n_buffers, na = pl->n_prologue + pl->n_actions;
    int *first = malloc(((size_t)nb + 1) * sizeof *first);
    int *last = malloc(((size_t)nb + 1) * sizeof *last);
    int *order = malloc(((size_t)nb + 1) * sizeof *order);
    if (!first || !last || !order) {
        free(first);
        free(last);
        free(order);
        return UINT64_MAX;
    }
    for (int b = 0; b < nb; b++) {
        first[b] = -1;
        last[b] = -1;
        o[b] = UINT64_MAX;
    }
    for (int a = 0; a < na; a++) {
        const pg_action *ac = a < pl->n_prologue ? &pl->prologue[a] : &pl->actions[a - pl->n_prologue];
        if (ac->kind == PA_ALLOC || ac->kind == PA_FREE || ac->kind == PA_RUN)
            continue;
        if (first[ac->buf] < 0)
            first[ac->buf] = a;
        last[ac->buf] = a;
    }
    /* the kept homes first, in order of first use */
    uint64_t total = 0;
    int n_moving = 0;
    for (int a = 0; a < na; a++) {
        const pg_action *ac = a < pl->n_prologue ? &pl->prologue[a] : &pl->actions[a - pl->n_prologue];
        if (ac->kind == PA_ALLOC || ac->kind == PA_FREE || ac->kind == PA_RUN || first[ac->buf] != a)
            continue;
        const pg_buffer *pb = &m->pb.buffers[ac->buf];
        if (pb->kind == PG_ACT && !pb->is_output && ac->kind == PA_SPILL) {
            order[n_moving++] = ac->buf;
            continue;
        }
        o[ac->buf] = total;
        total += (pb->bytes + 15) / 16 * 16;
    }
    /* then the spilled activations, in order of first spill: each at the lowest
     * offset clear of every home placed before it whose time overlaps */
    uint64_t base = total;
    for (int i = 0; i < n_moving; i++) {
        int b = order[i];
        uint64_t sz = (m->pb.buffers[b].bytes + 15) / 16 * 16, at = base;
        for (int again = 1; again;) {
            again = 0;
            for (int j = 0; j < i; j++) {
                int c = order[j];
                uint64_t cz = (m->pb.buffers[c].bytes + 15) / 16 * 16;
                if (last[c] < first[b] || o[c] + cz <= at || at + sz <= o[c])
                    continue;
                at = o[c] + cz;
                again = 1;
            }
        }
        o[b] = at;
        if (at + sz > total)
            total = at + sz;
    }
    free(first);
    free(last);
    free(order);
    return total;
}

/* The host pool of `total` bytes for the homes plan_within laid out. */
static si_result make_homes(si_model *m, uint64_t total, si_error *err)
{
    int nb = m->pb.n_buffers;
    si_result st = SI_ERR_UNSUPPORTED;
    if (m->gpu)
        st = glk_host_pool_create(m->gpu, total, &m->home_buf, (void **)&m->home, err);
    m->home_bytes = total;
    if (st != SI_OK) {
        m->home_buf = 0;
        if (!(m->home = malloc(total ? total : 16)))
            return base_fail(err, SI_ERR_NOMEM, "out of memory for the host pool");
    }
    /* constants now; weights at the first run; inputs every run */
    for (int b = 0; b < nb; b++) {
        const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
        if (m->home_off[b] != UINT64_MAX && t->kind == PT_CONST)
            memcpy(m->home + m->home_off[b], t->host, t->bytes);
    }
    return SI_OK;
}

static int shapes_equal(const core_shape *a, const core_shape *b, int n)
{
    for (int i = 0; i < n; i++)
        if (!core_shape_eq(&a[i], &b[i]))
            return 0;
    return 1;
}

/* The program depends on the input shapes and on the values of inputs small
 * enough to be bound by value (CORE_VALUE_INPUT_MAX). */
static int same_binding(const si_model *m, const core_shape *shapes, void *const *vals)
{
    int ni = core_graph_n_inputs(m->g);
    if (!m->prog || !shapes_equal(m->bound, shapes, ni))
        return 0;
    for (int i = 0; i < ni; i++) {
        int64_t n = core_shape_count(&shapes[i]);
        if (n > CORE_VALUE_INPUT_MAX)
            continue;
        if (!vals || !vals[i] || !m->bound_vals[i].data ||
            memcmp(m->bound_vals[i].data, vals[i], (size_t)n * 4))
            return 0;
    }
    return 1;
}

/* The one GPU allocation: the arena the plan asks for, made before a run.
 * The stages of a model run in turns, each with its own plan: only the one
 * running holds its arena (the budget is for all of them together). */
static si_result ensure_arena(si_model *m, si_error *err)
{
    if (m->gpu && !m->arena)
        return glk_buffer_create(m->gpu, m->plan->arena_bytes, &m->arena, err);
    if (!m->gpu && !m->host_arena &&
        !(m->host_arena = calloc(1, m->plan->arena_bytes ? m->plan->arena_bytes : 4)))
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    return SI_OK;
}

static void release_arena(si_model *m)
{
    if (m->gpu && m->arena) {
        glk_buffer_destroy(m->gpu, m->arena);
        m->arena = 0;
        m->resident = 0; /* what stayed between runs is gone */
    }
}

/* The model (i = -1) or its i-th later stage. */
static si_model *member(const si_model *root, int i)
{
    return i < 0 ? (si_model *)root : root->stages[i];
}

/* Bytes of the arenas the model and its stages hold now. */
static uint64_t arenas_held(const si_model *root)
{
    uint64_t held = 0;
    for (int i = -1; i < root->n_stages; i++)
        if (member(root, i)->arena)
            held += member(root, i)->plan->arena_bytes;
    return held;
}

/* Before `active` (the model or one of its stages) runs: the arenas held must
 * fit the budget together, else the others give theirs up (and re-upload what
 * they keep between runs when they run next). */
static void make_room(si_model *root, si_model *active)
{
    uint64_t budget = root->opt.vram_budget;
    if (!budget || !root->gpu ||
        arenas_held(root) + (active->arena ? 0 : active->plan->arena_bytes) <= budget)
        return;
    for (int i = -1; i < root->n_stages; i++)
        if (member(root, i) != active)
            release_arena(member(root, i));
}

/* What a GPU driver allocates in VRAM for us beyond an empty context and our
 * arenas: not ours to place, but the card's memory must stay within the
 * budget, so the plan leaves it free. Measured on the H200 (bench/hold_context,
 * bench/results/big-h200.md): the page tables that map the host pools for the
 * GPU take 1/256 of their size (1 GiB of pool, 4 MiB of VRAM; 8 GiB, 32 MiB),
 * and the arena is allocated in 2 MiB pages. pool: this plan's host pool;
 * the pools of the model's other stages count too. Mesa's llvmpipe has no
 * VRAM. */
static uint64_t driver_reserve(const si_model *m, uint64_t budget, uint64_t pool)
{
    if (!budget || !m->gpu)
        return 0;
    /* SI_DRIVER_RESERVE=1 keeps the share on llvmpipe too: tests of the rule */
    if (strstr(glk_renderer(m->gpu), "llvmpipe") && !getenv("SI_DRIVER_RESERVE"))
        return 0;
    uint64_t r = budget / 64;
    if (r > (2u << 20))
        r = 2u << 20;
    const si_model *root = m->parent ? m->parent : m;
    for (int i = -1; i < root->n_stages; i++)
        if (member(root, i) != m)
            pool += member(root, i)->home_bytes;
    return r + (pool + 255) / 256;
}

/* The largest working set of a step of p, and (node may be NULL) its node. */
static uint64_t largest_step(const core_program *p, int *node)
{
    uint64_t w = 0;
    for (int k = 0; k < p->n_steps; k++) {
        uint64_t ws = core_step_working_set(p, k);
        if (ws > w || k == 0) {
            w = ws;
            if (node)
                *node = p->steps[k].node;
        }
    }
    return w;
}

/* The plan of m's problem within budget, with the driver's share left free,
 * and its homes laid out (m->home_off; *pool: the host pool's size). The share
 * grows with the host pool, which the plan decides, so it plans again until
 * the arena and the share fit together. */
static si_result plan_within(si_model *m, uint64_t budget, uint32_t align, uint64_t *pool,
                             si_error *err)
{
    free(m->home_off);
    if (!(m->home_off = malloc(((size_t)m->pb.n_buffers + 1) * sizeof *m->home_off)))
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    uint64_t reserve = driver_reserve(m, budget, 0);
    for (int k = 0;; k++) {
        m->reserve = reserve;
        if (budget && reserve >= budget)
            return base_fail(err, SI_ERR_BUDGET, "the driver's own share (%llu bytes) leaves nothing "
                        "of the budget", (unsigned long long)reserve);
        si_result st = pg_plan_build(&m->pb, budget - reserve, align, &m->plan, err);
        if (st != SI_OK)
            return st;
        if ((*pool = home_layout(m, m->plan, m->home_off)) == UINT64_MAX)
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        uint64_t need = driver_reserve(m, budget, *pool);
        if (m->plan->arena_bytes + need <= budget || !budget) {
            m->reserve = need; /* what the driver takes beside this plan */
            return SI_OK;
        }
        pg_plan_free(m->plan);
        m->plan = NULL;
        if (k == 3)
            return base_fail(err, SI_ERR_BUDGET, "the plan and the driver's share for its host pool "
                        "(%llu bytes) do not fit together", (unsigned long long)need);
        reserve = need;
    }
}

static si_result build_program(si_model *m, const core_shape *shapes, void *const *vals,
                               si_error *err)
{
    int ni = core_graph_n_inputs(m->g);
    if (same_binding(m, shapes, vals))
        return SI_OK;
    drop_program(m);
    progress(m, "plan", 0, 1);
    const core_buf **vp = calloc((size_t)ni + 1, sizeof *vp);
    if (!vp)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int i = 0; i < ni; i++) {
        free(m->bound_vals[i].data);
        m->bound_vals[i] = (core_buf){.data = NULL};
        int64_t n = core_shape_count(&shapes[i]);
        if (!vals || !vals[i] || n > CORE_VALUE_INPUT_MAX)
            continue;
        m->bound_vals[i] = (core_buf){core_graph_input(m->g, i)->dtype, shapes[i],
                                      malloc((size_t)(n ? n : 1) * 4)};
        if (m->bound_vals[i].data)
            memcpy(m->bound_vals[i].data, vals[i], (size_t)n * 4);
        vp[i] = &m->bound_vals[i];
    }
    /* Untiled first (but tensors over the device's limit for one buffer cut
     * into bands); where no plan fits, steps are split into parts of at most
     * the sizes of rt_tile_first's ladder (core/tile.c) and planned again. */
    si_result st = SI_OK;
    uint64_t best_ws = 0, best_limit = 0, pool = 0, over_bytes = 0;
    int best_node = -1;
    si_error over_err = {0}; /* the largest tensor over the device's limit, named */
    uint64_t budget = m->opt.vram_budget, limit = 0;
    uint32_t align = m->gpu ? glk_offset_align(m->gpu) : 256;
    if (align < 256)
        align = 256;
    m->max_tensor = rt_plan_limits(m->gpu, m->opt.max_buffer_bytes, &m->limits);
    for (int attempt = 0;; attempt++) {
        drop_program(m);
        m->fail_node = -1;
        if ((st = core_program_build_given(m->g, shapes, vp, m->given,
                                           m->parent ? m->parent->host_only : NULL, load_weight,
                                           m, &m->prog, &m->fail_node, err)) != SI_OK)
            break;
        m->untiled_bound = largest_step(m->prog, NULL);
        m->tile_limit = limit;
        m->n_split = 0;
        if ((limit || rt_largest_tensor(m->prog) > m->max_tensor) &&
            (st = core_program_tile(m->prog, limit, m->max_tensor, load_weight, m, &m->n_split,
                                    err)) != SI_OK)
            break;
        if ((st = make_problem(m, err)) != SI_OK)
            break;
        int over = rt_oversized(&m->pb, m->max_tensor);
        st = over >= 0 ? SI_ERR_BUDGET : plan_within(m, budget, align, &pool, err);
        if (getenv("SI_PLAN_DEBUG"))
            fprintf(stderr, "plan attempt %d: limit %llu, largest step %llu, %d steps: %s at %.1f ms\n", attempt,
                    (unsigned long long)m->tile_limit, (unsigned long long)largest_step(m->prog, NULL),
                    m->prog->n_steps, st == SI_OK ? "fits" : over >= 0 ? "over the device's limit" : "refused", now_ms());
        if (st == SI_OK || st == SI_ERR_NOMEM)
            break;
        if (over >= 0 && m->pb.buffers[over].bytes > over_bytes) {
            over_bytes = m->pb.buffers[over].bytes;
            rt_device_refusal(m, m->prog, m->pb.buffers[over].tensor, over_bytes, m->max_tensor,
                              &m->limits, &over_err);
        }
        /* the closest attempt within the device's limits, for the message */
        int node = -1;
        uint64_t ws = largest_step(m->prog, &node);
        if (over < 0 && (!best_ws || ws <= best_ws)) { /* ties: the split one, named in the message */
            best_ws = ws;
            best_node = node;
            best_limit = m->tile_limit;
        }
        if (!(limit = limit ? rt_tile_next(limit, m->untiled_bound)
                            : rt_tile_first(budget, m->untiled_bound)))
            break;
    }
    free(vp);
    if (st != SI_OK) {
        if (st == SI_ERR_BUDGET && !best_ws && over_bytes) { /* only the device's limit bound it */
            st = over_err.status;
            if (err)
                *err = over_err;
        } else if (err && st == SI_ERR_BUDGET && best_limit)
            /* the figures a user acts on first: a node's name can be long, and the
             * message is cut at sizeof err->message */
            base_fail(err, st, "no plan fits in a budget of %llu bytes; the smallest budget that could "
                 "work is %llu bytes (the limit that bound it: the budget, every tensor within "
                 "the device's %llu-byte max_buffer_bytes; even with steps split into parts of "
                 "%llu bytes, a step of %llu bytes is left, node '%s'; untiled, the largest step "
                 "needs %llu bytes)",
                 (unsigned long long)budget, (unsigned long long)best_ws,
                 (unsigned long long)m->max_tensor, (unsigned long long)best_limit,
                 (unsigned long long)best_ws, si_model_node_name(m, best_node),
                 (unsigned long long)m->untiled_bound);
        if (err && st == SI_ERR_BUDGET && m->reserve) {
            size_t k = strlen(err->message);
            snprintf(err->message + k, sizeof err->message - k,
                     " (figures for the arena: on this GPU %llu bytes of the budget are left to the "
                     "driver, for the host pool's page tables and page rounding; add them)",
                     (unsigned long long)m->reserve);
        }
        goto fail;
    }
    memcpy(m->bound, shapes, (size_t)ni * sizeof *shapes);
    m->off = calloc((size_t)m->pb.n_buffers + 1, sizeof *m->off);
    if (!m->off || (st = make_homes(m, pool, err)) != SI_OK) {
        if (st == SI_OK)
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
        goto fail;
    }
    progress(m, "plan", 1, 1);
    return SI_OK;
fail:
    drop_program(m);
    return st;
}

/* Default shapes: a -1 batch becomes 1; other -1 dims wait for an input. */
static int default_shapes(const si_model *m, core_shape *shapes)
{
    for (int i = 0; i < core_graph_n_inputs(m->g); i++) {
        shapes[i] = core_graph_input(m->g, i)->shape;
        if (shapes[i].rank < 0)
            return 0;
        for (int d = 0; d < shapes[i].rank; d++)
            if (shapes[i].d[d] < 0) {
                if (d != 0)
                    return 0;
                shapes[i].d[d] = 1;
            }
    }
    return 1;
}

si_result si_open(const char *path, const si_options *opt, si_model **out, si_error *err)
{
    si_error dummy;
    if (!err)
        err = &dummy;
    err->status = SI_OK;
    err->message[0] = 0;
    if (!path || !out)
        return base_fail(err, SI_ERR_ARG, "si_open: path and out are required");
    *out = NULL;
    double t0 = now_ms();
    si_model *m = calloc(1, sizeof *m);
    if (!m)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (pthread_mutex_init(&m->lock, NULL)) {
        free(m);
        return base_fail(err, SI_ERR_NOMEM, "cannot create the handle's lock");
    }
    m->has_lock = 1;
    if (opt)
        m->opt = *opt;
    si_result st = io_model_load(path, &m->io, err);
    if (st == SI_OK)
        st = core_graph_build(m->io, &m->g, err);
    if (st == SI_OK)
        st = core_graph_check_ops(m->g, err);
    if (st == SI_OK &&
        (!(m->bound = calloc((size_t)core_graph_n_inputs(m->g) + 1, sizeof *m->bound)) ||
         !(m->bound_vals = calloc((size_t)core_graph_n_inputs(m->g) + 1, sizeof *m->bound_vals))))
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (st == SI_OK)
        st = io_reader_open(m->io, m->opt.io_mode, &m->rd, err);
    glk_binding before; /* the caller's current context, put back on return */
    int saved = 0;
    if (st == SI_OK && m->opt.backend != SI_BACKEND_HOST) {
        glk_current_save(&before);
        saved = 1;
        st = glk_open(&m->gpu, err);
        if (st != SI_OK && m->opt.backend == SI_BACKEND_AUTO) {
            m->opt.backend = SI_BACKEND_HOST;
            st = SI_OK;
            if (err)
                *err = (si_error){0};
        }
    }
    api_call call;
    if (st == SI_OK && (st = api_enter(&call, m, err)) == SI_OK) {
        core_shape *shapes = calloc((size_t)core_graph_n_inputs(m->g) + 1, sizeof *shapes);
        if (!shapes)
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
        else if (default_shapes(m, shapes))
            st = build_program(m, shapes, NULL, err);
        free(shapes);
        api_leave(&call);
    }
    if (st != SI_OK)
        si_close(m);
    if (saved)
        glk_current_restore(&before);
    if (st != SI_OK)
        return st;
    m->st.open_ms = now_ms() - t0;
    *out = m;
    return SI_OK;
}

static void free_run(si_model *m)
{
    for (int i = 0; i < m->n_out; i++)
        free(m->outs[i].data);
    free(m->outs);
    m->outs = NULL;
    m->n_out = 0;
    if (m->in_dev)
        for (int i = 0; i < core_graph_n_inputs(m->g); i++)
            free(m->in_dev[i]);
    free(m->in_dev);
    m->in_dev = NULL;
}

void si_close(si_model *m)
{
    if (!m)
        return;
    api_call call;
    si_error ignored;
    /* without its context the GL objects go with it (glk_close destroys it) */
    int entered = api_enter(&call, m, &ignored) == SI_OK;
    int restore = entered && call.bound && !glk_binding_is(&call.saved, m->gpu);
    if (m->g)
        free_run(m);
    free(m->host_only);
    drop_program(m);
    free(m->bound);
    if (m->bound_vals && m->g)
        for (int i = 0; i < core_graph_n_inputs(m->g); i++)
            free(m->bound_vals[i].data);
    free(m->bound_vals);
    glk_close(m->gpu);
    if (restore)
        glk_current_restore(&call.saved); /* what the caller had current */
    trace_free(&m->trace);
    io_reader_close(m->rd);
    core_graph_free(m->g);
    io_model_free(m->io);
    if (m->has_lock) {
        if (entered)
            pthread_mutex_unlock(&m->lock);
        pthread_mutex_destroy(&m->lock);
    }
    free(m);
}

int si_input_count(const si_model *m) { return core_graph_n_inputs(m->g); }

si_result si_input_info(const si_model *m, int i, const char **name, si_dtype *dtype, int *rank,
                        int64_t shape[SI_MAX_RANK])
{
    if (i < 0 || i >= core_graph_n_inputs(m->g))
        return SI_ERR_ARG;
    const core_io_info *in = core_graph_input(m->g, i);
    if (name)
        *name = in->name;
    if (dtype)
        *dtype = in->dtype;
    if (rank)
        *rank = in->shape.rank;
    if (shape)
        for (int d = 0; d < in->shape.rank; d++)
            shape[d] = in->shape.d[d];
    return SI_OK;
}

int si_output_count(const si_model *m) { return core_graph_n_outputs(m->g); }
const char *si_output_name(const si_model *m, int i)
{
    return i >= 0 && i < core_graph_n_outputs(m->g) ? core_graph_output_name(m->g, i) : NULL;
}

/* ---- running ---- */

/* Reads the arena, on the GPU or (host backend) in host memory. */
static si_result dev_read(si_model *m, uint64_t off, void *dst, uint64_t bytes, si_error *err)
{
    if (m->gpu)
        return glk_download(m->gpu, m->arena, off, dst, bytes, err);
    memcpy(dst, m->host_arena + off, bytes);
    return SI_OK;
}

/* Reads every weight the plan uploads straight into its home, all reads queued
 * at once so io_uring can overlap them; later uploads copy from there. */
static si_result read_weights(si_model *m, si_error *err)
{
    si_result st = SI_OK;
    for (int b = 0; b < m->pb.n_buffers && st == SI_OK; b++) {
        const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
        if (t->kind != PT_WEIGHT || m->home_off[b] == UINT64_MAX)
            continue;
        uint8_t *dst = m->home + m->home_off[b];
        memset(dst, 0, m->pb.buffers[b].bytes); /* the padding to 4 bytes */
        st = io_reader_submit(m->rd, t->weight, dst, err);
    }
    si_result w = io_reader_wait(m->rd, err);
    return st != SI_OK ? st : w;
}

/* Moves a buffer between its home and its place in the arena. */
static si_result transfer(si_model *m, int b, int to_gpu, si_error *err)
{
    uint64_t bytes = m->pb.buffers[b].bytes, home = m->home_off[b], off = m->off[b];
    if (home == UINT64_MAX)
        return base_fail(err, SI_ERR_ARG, "internal: buffer %d has no host copy", b);
    if (!m->gpu) {
        if (to_gpu)
            memcpy(m->host_arena + off, m->home + home, bytes);
        else
            memcpy(m->home + home, m->host_arena + off, bytes);
        return SI_OK;
    }
    if (m->home_buf)
        return to_gpu ? glk_copy(m->gpu, m->home_buf, home, m->arena, off, bytes, err)
                      : glk_copy(m->gpu, m->arena, off, m->home_buf, home, bytes, err);
    return to_gpu ? glk_upload(m->gpu, m->arena, off, m->home + home, bytes, err)
                  : glk_download(m->gpu, m->arena, off, m->home + home, bytes, err);
}

/* A host step in a GPU plan: its inputs come back, its output goes up. */
static si_result run_host_step_on_gpu_data(si_model *m, const ck_step *st, si_error *err)
{
    const core_program *p = m->prog;
    core_buf ins[CK_MAX_IN];
    const core_buf *insp[CK_MAX_IN] = {0};
    si_result rc = SI_OK;
    const core_tensor *o = &p->tensors[st->out];
    int ob = m->buf_of[core_storage(p, st->out)];
    core_buf out = {o->dtype, o->shape, malloc(m->pb.buffers[ob].bytes + 4)};
    if (!out.data)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int i = 0; i < st->n_in && rc == SI_OK; i++) {
        if (st->in[i] < 0)
            continue;
        const core_tensor *t = &p->tensors[st->in[i]];
        int b = m->buf_of[core_storage(p, st->in[i])];
        ins[i] = (core_buf){t->dtype, t->shape, malloc(m->pb.buffers[b].bytes + 4)};
        insp[i] = &ins[i];
        rc = ins[i].data ? dev_read(m, m->off[b], ins[i].data, m->pb.buffers[b].bytes, err)
                         : base_fail(err, SI_ERR_NOMEM, "out of memory");
        m->st.bytes_downloaded += m->pb.buffers[b].bytes;
    }
    if (rc == SI_OK)
        rc = ck_host_run(st, insp, &out, err);
    if (rc == SI_OK) {
        rc = glk_upload(m->gpu, m->arena, m->off[ob], out.data, m->pb.buffers[ob].bytes, err);
        m->st.bytes_uploaded += m->pb.buffers[ob].bytes;
    }
    for (int i = 0; i < st->n_in; i++)
        if (insp[i])
            free(ins[i].data);
    free(out.data);
    return rc;
}

static si_result run_step(si_model *m, int s, si_error *err)
{
    const core_program *p = m->prog;
    const ck_step *st = &p->steps[s];
    if (m->gpu && (ck_runs_on_host(st->kind) ||
                   ck_loop_iterations(st) > glk_max_loop_iterations(m->gpu)))
        return run_host_step_on_gpu_data(m, st, err);
    if (!m->gpu) {
        core_buf ins[CK_MAX_IN];
        const core_buf *insp[CK_MAX_IN] = {0};
        for (int i = 0; i < st->n_in; i++) {
            if (st->in[i] < 0)
                continue;
            const core_tensor *t = &p->tensors[st->in[i]];
            int b = m->buf_of[core_storage(p, st->in[i])];
            ins[i] = (core_buf){t->dtype, t->shape, m->host_arena + m->off[b]};
            insp[i] = &ins[i];
        }
        const core_tensor *o = &p->tensors[st->out];
        core_buf out = {o->dtype, o->shape,
                        m->host_arena + m->off[m->buf_of[core_storage(p, st->out)]]};
        return ck_host_run(st, insp, &out, err);
    }
    glk_range r[CK_MAX_IN];
    si_dtype dts[CK_MAX_IN];
    for (int i = 0; i < st->n_in; i++) {
        if (st->in[i] < 0)
            continue;
        int b = m->buf_of[core_storage(p, st->in[i])];
        r[i] = (glk_range){m->arena, m->off[b], m->pb.buffers[b].bytes};
        dts[i] = p->tensors[st->in[i]].dtype;
    }
    int b = m->buf_of[core_storage(p, st->out)];
    glk_range ro = {m->arena, m->off[b], m->pb.buffers[b].bytes};
    return glk_run_step(m->gpu, st, r, dts, &ro, p->tensors[st->out].dtype, err);
}

/* SI_CHECK_STEPS=tolerance: after each GPU step, runs the host reference on
 * the same (downloaded) inputs and reports the step if they differ by more. A
 * debugging aid for kernels; it slows a run a lot. */
static void check_step(si_model *m, int s)
{
    static double tol = -1;
    if (tol < 0) {
        const char *e = getenv("SI_CHECK_STEPS");
        tol = e ? atof(e) : 0;
        if (tol <= 0)
            tol = 0;
    }
    if (tol == 0 || !m->gpu || ck_runs_on_host(m->prog->steps[s].kind) ||
        ck_loop_iterations(&m->prog->steps[s]) > glk_max_loop_iterations(m->gpu))
        return;
    const core_program *p = m->prog;
    const ck_step *st = &p->steps[s];
    core_buf ins[CK_MAX_IN];
    const core_buf *insp[CK_MAX_IN] = {0};
    si_error err = {0};
    for (int i = 0; i < st->n_in; i++) {
        if (st->in[i] < 0)
            continue;
        const core_tensor *t = &p->tensors[st->in[i]];
        int b = m->buf_of[core_storage(p, st->in[i])];
        ins[i] = (core_buf){t->dtype, t->shape, malloc(m->pb.buffers[b].bytes + 4)};
        dev_read(m, m->off[b], ins[i].data, m->pb.buffers[b].bytes, &err);
        insp[i] = &ins[i];
    }
    const core_tensor *o = &p->tensors[st->out];
    int ob = m->buf_of[core_storage(p, st->out)];
    uint64_t bytes = m->pb.buffers[ob].bytes;
    core_buf gpu = {o->dtype, o->shape, malloc(bytes + 4)}, host = {o->dtype, o->shape, malloc(bytes + 4)};
    dev_read(m, m->off[ob], gpu.data, bytes, &err);
    memcpy(host.data, gpu.data, bytes); /* accumulating copies keep earlier writes */
    ck_host_run(st, insp, &host, &err);
    double worst = 0, scale = 1;
    int64_t n = core_shape_count(&o->shape), at = 0;
    for (int64_t i = 0; i < n; i++)
        if (o->dtype == SI_FLOAT32 && fabs(((float *)host.data)[i]) > scale)
            scale = fabs(((float *)host.data)[i]);
    for (int64_t i = 0; i < n; i++) {
        double d = o->dtype == SI_FLOAT32
                       ? fabs((double)((float *)host.data)[i] - ((float *)gpu.data)[i])
                       : (((int32_t *)host.data)[i] != ((int32_t *)gpu.data)[i]);
        if (!(d <= worst)) {
            worst = d;
            at = i;
        }
    }
    if (worst / scale > tol)
        fprintf(stderr, "check: step %d %s node '%s': max|gpu-host| %g (scale %g) at %lld\n", s,
                ck_kind_name(st->kind), m->io->nodes[st->node].name, worst, scale, (long long)at);
    for (int i = 0; i < st->n_in; i++)
        if (insp[i])
            free(ins[i].data);
    free(gpu.data);
    free(host.data);
}

/* Executes one action of the plan. */
static si_result do_action(si_model *m, const pg_action *ac, si_error *err)
{
    const core_program *p = m->prog;
    const pg_buffer *pbuf = ac->buf >= 0 ? &m->pb.buffers[ac->buf] : NULL;
    si_result st = SI_OK;
    double t0 = now_ms();
    switch (ac->kind) {
    case PA_ALLOC:
        m->off[ac->buf] = ac->offset;
        return SI_OK;
    case PA_FREE:
        return SI_OK;
    case PA_UPLOAD:
    case PA_RELOAD:
        st = transfer(m, ac->buf, 1, err);
        if (st == SI_OK && m->gpu)
            st = glk_throttle(m->gpu, pbuf->bytes, err);
        m->st.bytes_uploaded += pbuf->bytes;
        if (ac->kind == PA_RELOAD)
            m->st.bytes_reloaded += pbuf->bytes;
        m->st.upload_ms += now_ms() - t0;
        return st;
    case PA_SPILL:
    case PA_DOWNLOAD:
        st = transfer(m, ac->buf, 0, err);
        if (st == SI_OK && m->gpu)
            st = glk_throttle(m->gpu, pbuf->bytes, err);
        m->st.bytes_downloaded += pbuf->bytes;
        if (ac->kind == PA_SPILL)
            m->st.bytes_spilled += pbuf->bytes;
        m->st.stall_ms += now_ms() - t0;
        return st;
    case PA_RUN:
        st = run_step(m, ac->step, err);
        if (st == SI_OK && m->gpu)
            st = glk_throttle(m->gpu, 0, err);
        if (st == SI_OK)
            check_step(m, ac->step);
        if (st != SI_OK && err->message[0]) {
            char msg[sizeof err->message];
            snprintf(msg, sizeof msg, "%s", err->message);
            base_fail(err, st, "step %d (%s, node '%s'): %s", ac->step,
                 ck_kind_name(p->steps[ac->step].kind), m->io->nodes[p->steps[ac->step].node].name,
                 msg);
        }
        m->st.compute_ms += now_ms() - t0;
        progress(m, "run", ac->step + 1, p->n_steps);
        return st;
    }
    return SI_OK;
}

/* Given data → 4 bytes an element (bool widened). */
static void *to_dev(const si_tensor_in *in, int64_t n)
{
    int32_t *d = malloc((size_t)(n ? n : 1) * 4);
    if (!d)
        return NULL;
    if (in->dtype == SI_BOOL)
        for (int64_t i = 0; i < n; i++)
            d[i] = ((const uint8_t *)in->data)[i] != 0;
    else
        memcpy(d, in->data, (size_t)n * 4);
    return d;
}

static si_result match_inputs(si_model *m, const si_tensor_in *inputs, int n_inputs,
                              core_shape *shapes, const si_tensor_in **given, si_error *err)
{
    int ni = core_graph_n_inputs(m->g);
    if (n_inputs != ni)
        return base_fail(err, SI_ERR_ARG, "the model has %d input%s, %d given", ni, ni == 1 ? "" : "s",
                    n_inputs);
    for (int i = 0; i < ni; i++)
        given[i] = NULL;
    for (int k = 0; k < n_inputs; k++) {
        int which = -1;
        if (inputs[k].name) {
            for (int i = 0; i < ni; i++)
                if (!strcmp(core_graph_input(m->g, i)->name, inputs[k].name))
                    which = i;
            if (which < 0) {
                /* "name:0" is the same tensor */
                size_t len = strcspn(inputs[k].name, ":");
                for (int i = 0; i < ni; i++) {
                    const char *nm = core_graph_input(m->g, i)->name;
                    if (strlen(nm) == len && !strncmp(nm, inputs[k].name, len))
                        which = i;
                }
            }
            if (which < 0)
                return base_fail(err, SI_ERR_ARG, "the model has no input named '%s'", inputs[k].name);
        } else {
            which = k;
        }
        if (given[which])
            return base_fail(err, SI_ERR_ARG, "input '%s' given twice", core_graph_input(m->g, which)->name);
        given[which] = &inputs[k];
    }
    for (int i = 0; i < ni; i++) {
        const core_io_info *info = core_graph_input(m->g, i);
        const si_tensor_in *in = given[i];
        if (in->dtype != info->dtype)
            return base_fail(err, SI_ERR_SHAPE, "input '%s' must be %s, got %s", info->name,
                        si_dtype_name(info->dtype), si_dtype_name(in->dtype));
        char want[128], got[128];
        core_shape gs = {.rank = in->rank};
        if (in->rank < 0 || in->rank > SI_MAX_RANK)
            return base_fail(err, SI_ERR_SHAPE, "input '%s': rank %d not supported", info->name, in->rank);
        for (int d = 0; d < in->rank; d++)
            gs.d[d] = in->shape[d];
        int ok = in->rank == info->shape.rank || info->shape.rank < 0;
        for (int d = 0; ok && d < in->rank; d++)
            ok = in->shape[d] >= 0 && (info->shape.rank < 0 || info->shape.d[d] < 0 ||
                                       info->shape.d[d] == in->shape[d]);
        if (!ok)
            return base_fail(err, SI_ERR_SHAPE, "input '%s' must have shape %s, got %s", info->name,
                        core_shape_str(&info->shape, want, sizeof want),
                        core_shape_str(&gs, got, sizeof got));
        if (core_shape_count(&gs) > 0 && !in->data)
            return base_fail(err, SI_ERR_ARG, "input '%s' has no data", info->name);
        if (core_shape_count(&gs) > ((int64_t)1 << 31) / 4)
            return base_fail(err, SI_ERR_SHAPE, "input '%s' is too large", info->name);
        shapes[i] = gs;
    }
    return SI_OK;
}

/* A program tensor's value after a run, 4 bytes an element, into words. */
static si_result tensor_value(si_model *m, int t, int32_t *words, si_error *err)
{
    const core_program *p = m->prog;
    int r = core_storage(p, t);
    const core_tensor *ct = &p->tensors[t], *rt = &p->tensors[r];
    size_t bytes = (size_t)core_shape_count(&ct->shape) * 4;
    int banded = 0;
    for (int i = 0; i < p->n_out_bands; i++) {
        const struct core_band *bd = &p->out_bands[i];
        int b = bd->root == r ? m->buf_of[bd->tensor] : -1;
        if (bd->root != r)
            continue;
        if (b < 0 || m->home_off[b] == UINT64_MAX)
            return base_fail(err, SI_ERR_ARG, "internal: a band of %s was never brought back", ct->name);
        memcpy(words + bd->e0, m->home + m->home_off[b], (size_t)(bd->e1 - bd->e0) * 4);
        banded = 1;
    }
    if (banded)
        return SI_OK;
    if (m->buf_of[r] >= 0 && rt->kind == PT_ACT) {
        /* downloaded at the end of the run, or spilled after its last write */
        int b = m->buf_of[r];
        if (m->home_off[b] == UINT64_MAX)
            return base_fail(err, SI_ERR_ARG, "internal: %s was never brought back", ct->name);
        memcpy(words, m->home + m->home_off[b], bytes);
    } else if (rt->kind == PT_CONST || (rt->kind == PT_ACT && rt->host)) {
        memcpy(words, rt->host, bytes);
    } else if (rt->kind == PT_INPUT) {
        memcpy(words, m->in_dev[rt->input], bytes);
    } else if (rt->kind == PT_WEIGHT) {
        return load_weight(m, rt->weight, words, err);
    } else {
        return base_fail(err, SI_ERR_ARG, "internal: %s has no value", ct->name);
    }
    return SI_OK;
}

/* Program tensor t's value into vm as graph tensor (node, idx). */
static si_result put_value(si_model *m, int t, core_valmap *vm, int node, int idx, si_error *err)
{
    const core_tensor *ct = &m->prog->tensors[t];
    int64_t n = core_shape_count(&ct->shape);
    int32_t *words = malloc((size_t)(n ? n : 1) * 4);
    if (!words)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    si_result st = tensor_value(m, t, words, err);
    if (st == SI_OK) {
        core_buf v = {ct->dtype, ct->shape, words};
        st = core_valmap_put(vm, node, idx, &v, err);
    }
    free(words);
    return st;
}

/* 4-byte words → the caller's layout (bool as one byte). Takes words. */
static si_result set_output(out_tensor *ot, si_dtype dt, const core_shape *shape, int32_t *words,
                            si_error *err)
{
    int64_t n = core_shape_count(shape);
    ot->dtype = dt;
    ot->shape = *shape;
    if (dt != SI_BOOL) {
        ot->data = words;
        return SI_OK;
    }
    uint8_t *b = malloc((size_t)(n ? n : 1));
    if (!b) {
        free(words);
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < n; i++)
        b[i] = words[i] != 0;
    free(words);
    ot->data = b;
    return SI_OK;
}

/* What a later stage is built for: every given tensor's shape, and the values
 * of those small enough to be bound by value. */
static char *stage_key(const core_valmap *vm)
{
    size_t cap = 256, n = 0;
    char *k = malloc(cap);
    int node, idx;
    for (int slot = core_valmap_next(vm, -1, &node, &idx); k && slot >= 0;
         slot = core_valmap_next(vm, slot, &node, &idx)) {
        const core_buf *v = core_valmap_get(vm, node, idx);
        int64_t cnt = core_shape_count(&v->shape);
        if (cap - n < 64 + 16 * 12 + SI_MAX_RANK * 21) {
            cap *= 2;
            char *nk = realloc(k, cap);
            if (!nk) {
                free(k);
                return NULL;
            }
            k = nk;
        }
        n += (size_t)snprintf(k + n, cap - n, "%d:%d:%d[", node, idx, (int)v->dtype);
        for (int d = 0; d < v->shape.rank; d++)
            n += (size_t)snprintf(k + n, cap - n, "%lld,", (long long)v->shape.d[d]);
        k[n++] = ']';
        for (int64_t i = 0; i < cnt && cnt <= CORE_VALUE_INPUT_MAX; i++)
            n += (size_t)snprintf(k + n, cap - n, "%d,", ((const int32_t *)v->data)[i]);
        k[n++] = ';';
        k[n] = 0;
    }
    return k;
}

static void stage_free(si_model *s)
{
    if (!s)
        return;
    free_run(s);
    drop_program(s);
    free(s->bound);
    if (s->bound_vals && s->g) /* a stage binds small inputs by value too */
        for (int i = 0; i < core_graph_n_inputs(s->g); i++)
            free(s->bound_vals[i].data);
    free(s->bound_vals);
    free(s->stage_key);
    free(s);
}

/* The later stage for what vm holds now: found by its key, or built. */
static si_result stage_get(si_model *m, const core_valmap *vm, si_model **out, int *fail_node,
                           si_error *err)
{
    char *key = stage_key(vm);
    if (!key)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int i = 0; i < m->n_stages; i++)
        if (!strcmp(m->stages[i]->stage_key, key)) {
            free(key);
            *out = m->stages[i];
            return SI_OK;
        }
    int ni = core_graph_n_inputs(m->g);
    si_model *s = calloc(1, sizeof *s);
    si_model **ns = realloc(m->stages, (size_t)(m->n_stages + 1) * sizeof *ns);
    if (ns)
        m->stages = ns;
    if (!s || !ns || !(s->bound = calloc((size_t)ni + 1, sizeof *s->bound)) ||
        !(s->bound_vals = calloc((size_t)ni + 1, sizeof *s->bound_vals))) {
        stage_free(s);
        free(key);
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    s->opt = m->opt;
    s->opt.trace_path = NULL;
    s->io = m->io;
    s->g = m->g;
    s->rd = m->rd;
    s->gpu = m->gpu;
    s->parent = m;
    s->stage_key = key;
    s->given = vm;
    si_result st = build_program(s, m->bound, m->in_dev, err);
    s->given = NULL;
    *fail_node = s->fail_node;
    if (st != SI_OK) {
        stage_free(s);
        return st;
    }
    m->stages[m->n_stages++] = s;
    *out = s;
    return SI_OK;
}

/* Runs the later stage for what vm holds and puts what it computed (outputs,
 * and what the interpreter reads next) into vm. */
static si_result run_stage(si_model *m, core_valmap *vm, int *fail_node, si_error *err)
{
    si_model *s = NULL;
    si_result st = stage_get(m, vm, &s, fail_node, err);
    if (st != SI_OK)
        return st;
    const core_program *p = s->prog;
    int ni = core_graph_n_inputs(m->g);
    s->in_dev = calloc((size_t)(ni + p->n_seeds) + 1, sizeof *s->in_dev);
    if (!s->in_dev)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int i = 0; i < ni; i++)
        s->in_dev[i] = m->in_dev[i];
    for (int q = 0; q < p->n_seeds; q++)
        s->in_dev[ni + q] = core_valmap_get(vm, p->seed_node[q], p->seed_idx[q])->data;
    make_room(m, s);
    memset(&s->st, 0, sizeof s->st);
    st = run_plan(s, err);
    m->st.bytes_uploaded += s->st.bytes_uploaded;
    m->st.bytes_downloaded += s->st.bytes_downloaded;
    m->st.bytes_spilled += s->st.bytes_spilled;
    m->st.bytes_reloaded += s->st.bytes_reloaded;
    m->st.upload_ms += s->st.upload_ms;
    m->st.compute_ms += s->st.compute_ms;
    m->st.stall_ms += s->st.stall_ms;
    m->st.gpu_steps += (uint64_t)p->n_steps;
    m->st.segments += s->plan->segments;
    m->st.evictions += s->plan->evictions;
    if (s->plan->lower_bound > m->st.lower_bound_bytes)
        m->st.lower_bound_bytes = s->plan->lower_bound;
    for (int o = 0; o < p->n_outputs + p->n_boundary && st == SI_OK; o++) {
        int t = o < p->n_outputs ? p->outputs[o] : p->boundary[o - p->n_outputs];
        int node, idx;
        if (o < p->n_outputs)
            core_graph_output_ref(m->g, o, &node, &idx);
        else {
            node = p->boundary_node[o - p->n_outputs];
            idx = p->boundary_idx[o - p->n_outputs];
        }
        if (t >= 0 && !core_valmap_get(vm, node, idx))
            st = put_value(s, t, vm, node, idx, err);
    }
    free(s->in_dev);
    s->in_dev = NULL;
    return st;
}

/* A later stage that cannot run as planned fails the run, naming the stage:
 * the host interpreter is the fallback only for what the GPU cannot express. */
static si_result stage_failed(si_model *m, si_result st, int stage, si_error *err)
{
    if (!err)
        return st;
    char inner[sizeof err->message];
    snprintf(inner, sizeof inner, "%s", err->message);
    return base_fail(err, st, "%s: GPU stage %d (after the host interpreter's part): %s",
                m->io->json_path, stage, inner);
}

/* The part after the first GPU program: the interpreter runs loops and
 * data-dependent ops, then a GPU program what follows them once their shapes
 * are known, and so on. Where a stage cannot be made (or makes no progress),
 * the interpreter computes the rest on the host. */
static si_result run_dynamic_part(si_model *m, core_valmap *vm, si_error *err)
{
    const core_program *p = m->prog;
    si_result st = SI_OK;
    for (int i = 0; i < p->n_inputs && st == SI_OK; i++) {
        core_buf v = {core_graph_input(m->g, i)->dtype, m->bound[i], m->in_dev[i]};
        st = core_valmap_put(vm, core_graph_input_node(m->g, i), 0, &v, err);
    }
    for (int q = 0; q < p->n_boundary && st == SI_OK; q++)
        st = put_value(m, p->boundary[q], vm, p->boundary_node[q], p->boundary_idx[q], err);
    if (st != SI_OK)
        return st;
    if (!m->host_only && !(m->host_only = calloc((size_t)core_graph_n_nodes(m->g) + 1, 1)))
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    const char *env = getenv("SI_STAGES"); /* 0: the interpreter does all that follows */
    int stage_no = 2; /* the first GPU program is stage 1 */
    for (int round = 0; round < 64 && !(env && !strcmp(env, "0")); round++) {
        int complete = 0;
        double t0 = now_ms();
        st = core_interp_run_stage(m->g, vm, m->host_only, load_weight, m, &complete, err);
        m->st.host_ms += now_ms() - t0;
        if (st != SI_OK || complete)
            return st;
        size_t before = core_valmap_size(vm);
        int fail_node = -1;
        si_result rs = run_stage(m, vm, &fail_node, err);
        if (rs != SI_OK && fail_node >= 0 && m->host_only && !m->host_only[fail_node]) {
            /* a node the GPU program cannot hold (a shape that depends on a value
             * computed in the same stage): the interpreter runs it from now on */
            m->host_only[fail_node] = 1;
            continue;
        }
        if (rs == SI_ERR_BUDGET || rs == SI_ERR_GPU || rs == SI_ERR_NOMEM || rs == SI_ERR_IO)
            return stage_failed(m, rs, stage_no, err); /* never a silent move to the host */
        if (rs != SI_OK || core_valmap_size(vm) == before)
            break;
        stage_no++;
    }
    double t0 = now_ms();
    st = core_interp_run(m->g, vm, load_weight, m, err);
    m->st.host_ms += now_ms() - t0;
    return st;
}

static si_result collect_outputs(si_model *m, si_error *err)
{
    const core_program *p = m->prog;
    m->n_out = p->n_outputs;
    m->outs = calloc((size_t)p->n_outputs + 1, sizeof *m->outs);
    if (!m->outs)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    core_valmap *vm = NULL;
    si_result st = SI_OK;
    if (p->has_dynamic) {
        if (!(vm = core_valmap_new(m->g)))
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        st = run_dynamic_part(m, vm, err);
    }
    for (int o = 0; o < p->n_outputs && st == SI_OK; o++) {
        int t = p->outputs[o];
        if (t < 0) {
            int node, idx;
            core_graph_output_ref(m->g, o, &node, &idx);
            const core_buf *v = core_valmap_get(vm, node, idx);
            if (!v) {
                st = base_fail(err, SI_ERR_ARG, "output '%s' was not computed",
                          core_graph_output_name(m->g, o));
                break;
            }
            int64_t n = core_shape_count(&v->shape);
            int32_t *words = malloc((size_t)(n ? n : 1) * 4);
            if (!words) {
                st = base_fail(err, SI_ERR_NOMEM, "out of memory");
                break;
            }
            memcpy(words, v->data, (size_t)n * 4);
            st = set_output(&m->outs[o], v->dtype, &v->shape, words, err);
            continue;
        }
        const core_tensor *ct = &p->tensors[t];
        int64_t n = core_shape_count(&ct->shape);
        int32_t *words = malloc((size_t)(n ? n : 1) * 4);
        if (!words) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
            break;
        }
        st = tensor_value(m, t, words, err);
        if (st != SI_OK) {
            free(words);
            break;
        }
        st = set_output(&m->outs[o], ct->dtype, &ct->shape, words, err);
    }
    core_valmap_free(vm);
    return st;
}

/* Runs the current program's plan: inputs into their homes, weights read once,
 * the prologue where the resident set is not resident, then every action. */
static si_result run_plan(si_model *m, si_error *err)
{
    si_result st = SI_OK;
    if ((st = ensure_arena(m, err)) != SI_OK)
        return st;
    /* the peak: the arenas held together (a model's stages keep theirs while
     * they fit the budget together) */
    si_model *root = m->parent ? m->parent : m;
    if (m->gpu && arenas_held(root) > root->st.peak_vram_bytes)
        root->st.peak_vram_bytes = arenas_held(root);
    const pg_plan *pl = m->plan;
    for (int b = 0; b < m->pb.n_buffers; b++) {
        const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
        if (t->kind == PT_INPUT && m->home_off[b] != UINT64_MAX)
            memcpy(m->home + m->home_off[b], m->in_dev[t->input], t->bytes);
    }
    if (!m->weights_read) {
        if ((st = read_weights(m, err)) != SI_OK)
            return st;
        m->weights_read = 1;
    }
    if (!m->resident) {
        for (int a = 0; a < pl->n_prologue && st == SI_OK; a++)
            st = do_action(m, &pl->prologue[a], err);
        if (st != SI_OK)
            return st;
        m->resident = 1;
    }
    trace_reset(&m->trace);
    const core_program *p = m->prog;
    double run0 = now_ms();
    m->in_use = pl->resident_bytes;
    for (int a = 0; a < pl->n_actions && st == SI_OK; a++) {
        const pg_action *ac = &pl->actions[a];
        double ta = now_ms();
        st = do_action(m, ac, err);
        if (!m->opt.trace_path || st != SI_OK)
            continue;
        /* Wait for the GPU so each event's duration is its own. */
        if (m->gpu)
            st = glk_finish(m->gpu, err);
        double tb = now_ms();
        uint64_t sz = ac->buf >= 0 ? pg_size(pl, m->pb.buffers[ac->buf].bytes) : 0;
        int track = 0;
        const char *name = "", *detail = "";
        switch (ac->kind) {
        case PA_ALLOC: m->in_use += sz; break;
        case PA_FREE: m->in_use -= sz; break;
        case PA_RUN:
            track = 1;
            name = ck_kind_name(p->steps[ac->step].kind);
            detail = m->io->nodes[p->steps[ac->step].node].name;
            break;
        case PA_UPLOAD:
        case PA_RELOAD:
            track = 2;
            name = ac->kind == PA_UPLOAD ? "upload" : "reload";
            detail = p->tensors[m->pb.buffers[ac->buf].tensor].name;
            break;
        case PA_SPILL:
        case PA_DOWNLOAD:
            track = 3;
            name = ac->kind == PA_SPILL ? "spill" : "download";
            detail = p->tensors[m->pb.buffers[ac->buf].tensor].name;
            break;
        }
        trace_add(&m->trace, track, name, detail, (ta - run0) * 1e3, (tb - run0) * 1e3, m->in_use);
    }
    if (st == SI_OK && m->opt.trace_path && trace_write(&m->trace, m->opt.trace_path))
        st = base_fail(err, SI_ERR_IO, "%s: cannot write the trace", m->opt.trace_path);
    if (st == SI_OK && m->gpu) {
        double tf = now_ms();
        st = glk_finish(m->gpu, err);
        m->st.compute_ms += now_ms() - tf;
    }
    return st;
}

static si_result run_locked(si_model *m, const si_tensor_in *inputs, int n_inputs, si_error *err)
{
    si_error dummy;
    if (!err)
        err = &dummy;
    err->status = SI_OK;
    err->message[0] = 0;
    if (!m || (n_inputs > 0 && !inputs))
        return base_fail(err, SI_ERR_ARG, "si_run: model and inputs are required");
    double t0 = now_ms();
    int ni = core_graph_n_inputs(m->g);
    free_run(m);
    si_stats keep = {.open_ms = m->st.open_ms};
    m->st = keep;
    core_shape *shapes = calloc((size_t)ni + 1, sizeof *shapes);
    const si_tensor_in **given = calloc((size_t)ni + 1, sizeof *given);
    m->in_dev = calloc((size_t)ni + 1, sizeof *m->in_dev);
    si_result st = SI_OK;
    if (!shapes || !given || !m->in_dev) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = match_inputs(m, inputs, n_inputs, shapes, given, err)) != SI_OK)
        goto done;
    for (int i = 0; i < ni; i++)
        if (!(m->in_dev[i] = to_dev(given[i], core_shape_count(&shapes[i])))) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
            goto done;
        }
    if ((st = build_program(m, shapes, m->in_dev, err)) != SI_OK || m->plan_only)
        goto done;
    make_room(m, m);
    if ((st = run_plan(m, err)) == SI_OK)
        st = collect_outputs(m, err);
done:
    free(shapes);
    free(given);
    if (m->plan) {
        m->st.budget_bytes = m->opt.vram_budget;
        /* later stages added theirs: the peak and bound are the largest of all */
        if (m->gpu && m->plan->arena_bytes > m->st.peak_vram_bytes)
            m->st.peak_vram_bytes = m->plan->arena_bytes;
        if (m->plan->lower_bound > m->st.lower_bound_bytes)
            m->st.lower_bound_bytes = m->plan->lower_bound;
        m->st.untiled_bound_bytes = m->untiled_bound;
        m->st.tile_limit_bytes = m->tile_limit;
        m->st.driver_reserve_bytes = m->reserve;
        for (int i = 0; i < m->n_stages; i++) /* the largest share any stage left */
            if (m->stages[i]->reserve > m->st.driver_reserve_bytes)
                m->st.driver_reserve_bytes = m->stages[i]->reserve;
        m->st.steps_split = (uint64_t)m->n_split;
        m->st.max_buffer_bytes = m->max_tensor;
        m->st.storage_block_bytes = m->limits.storage_block_bytes;
        m->st.max_dispatch_elements = m->limits.dispatch_elements;
        m->st.max_index_elements = m->limits.index_elements;
        for (int b = 0; b < m->pb.n_buffers; b++)
            if (m->pb.buffers[b].bytes > m->st.largest_buffer_bytes)
                m->st.largest_buffer_bytes = m->pb.buffers[b].bytes;
        m->st.gpu_steps += (uint64_t)m->prog->n_steps;
        m->st.segments += m->plan->segments;
        m->st.evictions += m->plan->evictions;
    }
    m->st.weights_bytes = m->io->weights_bytes;
    m->st.host_pool_bytes = m->home_bytes;
    for (int i = 0; i < m->n_stages; i++)
        m->st.host_pool_bytes += m->stages[i]->home_bytes;
    m->st.run_ms = now_ms() - t0;
    if (st != SI_OK)
        free_run(m);
    return st;
}

si_result si_run(si_model *m, const si_tensor_in *inputs, int n_inputs, si_error *err)
{
    if (!m)
        return base_fail(err, SI_ERR_ARG, "si_run: no model");
    api_call call;
    si_result st = api_enter(&call, m, err);
    if (st != SI_OK)
        return st;
    st = run_locked(m, inputs, n_inputs, err);
    api_leave(&call);
    return st;
}

si_result si_plan(si_model *m, const si_tensor_in *inputs, int n_inputs, si_error *err)
{
    if (!m)
        return base_fail(err, SI_ERR_ARG, "si_plan: no model");
    api_call call;
    si_result st = api_enter(&call, m, err);
    if (st != SI_OK)
        return st;
    m->plan_only = 1;
    st = run_locked(m, inputs, n_inputs, err);
    m->plan_only = 0;
    free_run(m);
    api_leave(&call);
    return st;
}

si_result si_print_plan(const si_model *m, FILE *f, si_error *err)
{
    if (!m)
        return base_fail(err, SI_ERR_ARG, "si_print_plan: no model");
    api_call call;
    si_result st = api_enter(&call, m, err);
    if (st != SI_OK)
        return st;
    st = si_report_plan(m, f, err);
    api_leave(&call);
    return st;
}

si_result si_output(const si_model *m, int i, si_dtype *dtype, int *rank,
                    int64_t shape[SI_MAX_RANK], const void **data, si_error *err)
{
    if (!m)
        return base_fail(err, SI_ERR_ARG, "si_output: no model");
    si_model *mm = (si_model *)m; /* its lock only */
    if (m->has_lock)
        pthread_mutex_lock(&mm->lock);
    si_result st = output_locked(m, i, dtype, rank, shape, data, err);
    if (m->has_lock)
        pthread_mutex_unlock(&mm->lock);
    return st;
}

static si_result output_locked(const si_model *m, int i, si_dtype *dtype, int *rank,
                               int64_t shape[SI_MAX_RANK], const void **data, si_error *err)
{
    if (i < 0 || i >= m->n_out)
        return base_fail(err, SI_ERR_ARG, "no output %d (run the model first)", i);
    const out_tensor *o = &m->outs[i];
    if (dtype)
        *dtype = o->dtype;
    if (rank)
        *rank = o->shape.rank;
    if (shape)
        for (int d = 0; d < o->shape.rank; d++)
            shape[d] = o->shape.d[d];
    if (data)
        *data = o->data;
    return SI_OK;
}

void si_get_stats(const si_model *m, si_stats *st)
{
    si_model *mm = (si_model *)m; /* its lock only */
    if (m->has_lock)
        pthread_mutex_lock(&mm->lock);
    *st = m->st;
    if (m->has_lock)
        pthread_mutex_unlock(&mm->lock);
}

/* The stats without the lock: for si_report_plan, called under it. */
const si_stats *si_model_stats(const si_model *m) { return &m->st; }

const pg_plan *si_model_plan(const si_model *m) { return m->plan; }
const core_program *si_model_program(const si_model *m) { return m->prog; }
const char *si_model_renderer(const si_model *m) { return m->gpu ? glk_renderer(m->gpu) : "host"; }
uint64_t si_model_driver_reserve(const si_model *m) { return m->reserve; }
const pg_problem *si_model_problem(const si_model *m) { return &m->pb; }
const char *si_model_node_name(const si_model *m, int node)
{
    return node >= 0 && node < m->io->n_nodes ? m->io->nodes[node].name : "?";
}
