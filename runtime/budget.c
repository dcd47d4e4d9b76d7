/* The budget's one owner. Build time: the tiling schedule (plan untiled, then
 * with steps split along rt_tile_first's ladder until a plan fits), the share
 * of the budget left to the GPU driver, and re-planning until the arena and
 * that share fit together. Run time: the arenas of a model's stages held
 * together within the budget (rt_make_room). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "session_internal.h"

/* The driver's page tables for the host pool take 1/this of the pool's size. */
#define PAGE_TABLE_SHARE 256u

/* The model (i = -1) or its i-th later stage. */
si_model *rt_member(const si_model *root, int i)
{
    return i < 0 ? (si_model *)root : root->stages[i];
}

/* Bytes of the arenas the model and its stages hold now (a buffer of its own
 * by its size, which a stage's passed on can make more than the plan's arena),
 * with the spare one a stage gave up. */
uint64_t rt_arenas_held(const si_model *root)
{
    uint64_t held = root->spare_cap;
    for (int i = -1; i < root->n_stages; i++) {
        const si_model *x = rt_member(root, i);
        if (x->arena)
            held += x->arena_shared || x->arena_cap < x->plan->arena_bytes ? x->plan->arena_bytes : x->arena_cap;
    }
    return held;
}

/* Before `active` (the model or one of its stages) runs: the arenas held must
 * fit the budget together, else the others give theirs up (and re-upload what
 * they keep between runs when they run next). */
void rt_make_room(si_model *root, si_model *active)
{
    uint64_t budget = root->opt.vram_budget;
    if (!budget || !root->be->holds_vram)
        return;
    uint64_t need = rt_arenas_held(root);
    int makes = 0;
    if (!active->arena && root->spare_cap >= active->plan->arena_bytes)
        ; /* it takes the spare */
    else if (!active->arena) { /* the spare goes before active's is made */
        need += active->plan->arena_bytes - root->spare_cap;
        makes = 1;
    }
    if (makes && root->be->holds_vram && root->arena_made + active->plan->arena_bytes > budget)
        need = budget + 1; /* a new one would not fit beside what was made: take one made */
    if (root->ctx) /* the context's other models first */
        need += rt_ctx_make_room(root->ctx, root, need);
    if (need <= budget)
        return;
    for (int i = -1; i < root->n_stages; i++)
        if (rt_member(root, i) != active)
            rt_member(root, i)->be->arena_release(rt_member(root, i));
}

/* The budget a later stage of root plans within: the largest arena made so
 * far (the stage takes it in its turn) or what the budget has beyond every
 * arena made, whichever is more (see si_model.arena_made); 0: no budget. */
uint64_t rt_stage_budget(const si_model *root)
{
    uint64_t b = root->opt.vram_budget;
    /* as the driver's share: not on llvmpipe, which has no VRAM, unless
     * si_options.driver_reserve asks (tests of the rule) */
    if (!b || !root->be->holds_vram || root->ctx ||
        (strstr(root->be->renderer(root), "llvmpipe") && !root->opt.driver_reserve))
        return b;
    uint64_t left = b > root->arena_made ? b - root->arena_made : 0;
    return left > root->arena_largest ? left : root->arena_largest;
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
    if (!budget || !m->be->holds_vram)
        return 0;
    /* si_options.driver_reserve (SI_DRIVER_RESERVE) keeps the share on
     * llvmpipe too: tests of the rule */
    if (strstr(m->be->renderer(m), "llvmpipe") && !m->opt.driver_reserve)
        return 0;
    uint64_t r = budget / 64;
    if (r > (2u << 20))
        r = 2u << 20;
    const si_model *root = m->parent ? m->parent : m;
    for (int i = -1; i < root->n_stages; i++)
        if (rt_member(root, i) != m)
            pool += rt_member(root, i)->home_bytes;
    if (root->ctx)
        pool += rt_ctx_other_pools(root->ctx, root);
    return r + base_align_up(pool, PAGE_TABLE_SHARE) / PAGE_TABLE_SHARE;
}

uint64_t rt_driver_reserve_all(const si_model *m, uint64_t budget)
{
    return driver_reserve(m, budget, m->home_bytes);
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
    rt_forget_in_place(m);
    free(m->home_off);
    if (!(m->home_off = malloc(((size_t)m->pb.n_buffers + 1) * sizeof *m->home_off)))
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (m->cached_plan) { /* from the plan cache: checked against this problem, and it must fit */
        si_result st = pg_plan_read(&m->pb, m->cached_plan, m->cached_plan_len, &m->plan, err);
        if (st != SI_OK)
            return st;
        if ((*pool = pg_home_layout(&m->pb, m->plan, m->home_off)) == UINT64_MAX)
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        m->reserve = driver_reserve(m, budget, *pool);
        if (m->reserve != m->cached_reserve || m->plan->align != align ||
            (budget && (m->plan->arena_bytes > budget || m->reserve > budget - m->plan->arena_bytes))) {
            pg_plan_free(m->plan);
            m->plan = NULL;
            return base_fail(err, SI_ERR_FORMAT, "plan cache: the plan does not fit this budget");
        }
        return SI_OK;
    }
    pg_options po = {.prefetch = m->opt.plan_prefetch, .debug = m->opt.plan_debug};
    /* a plan again (its pool's share was more) starts from the last one's capacities */
    uint64_t *caps = budget ? calloc((size_t)m->pb.n_steps + 1, sizeof *caps) : NULL;
    if (budget && !caps)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    po.caps = caps;
    /* first with the share of the least pool any plan has (its weights',
     * inputs' and outputs' homes), or a larger one an attempt before missed
     * (tile_schedule); planned with no pool, a tight budget was planned
     * twice (frcnn-irv2 at 64M on the H200: 2 x 2.6 s) */
    uint64_t floor = pg_home_floor(&m->pb), reserve = driver_reserve(m, budget, floor);
    /* The share no plan has less of (the homes of the activations an arena
     * within the budget less the share cannot hold, pg_live_peak, beside the
     * kept ones; each a floor, so the next is too): where the largest step
     * does not fit beside it, no plan fits, and none is searched for
     * (frcnn-irv2 at 5,477,996 bytes with the share, SI_DRIVER_RESERVE=1 on
     * llvmpipe as on the H100: 30 placement rounds of attempts that fit their
     * arenas and then missed their pools' shares). No share (reserve 0): no
     * such floor either. */
    uint64_t least = reserve, live = reserve ? pg_live_peak(&m->pb) : 0;
    for (int i = 0; reserve && least < budget && i < 8; i++) {
        uint64_t a = budget - least, r = driver_reserve(m, budget, floor + (live > a ? live - a : 0));
        if (r <= least)
            break;
        least = r;
    }
    uint64_t need = least > reserve ? pg_lower_bound(&m->pb, align) : 0;
    if (budget && least > reserve && (least >= budget || need > budget - least)) {
        free(caps);
        m->reserve = least;
        m->share_missed = 0;
        return base_fail(err, SI_ERR_BUDGET, "no plan fits in %llu bytes: a step needs %llu bytes, and the "
                         "driver's share for the host pool of any plan here is at least %llu bytes",
                         (unsigned long long)budget, (unsigned long long)need, (unsigned long long)least);
    }
    m->hinted = m->reserve_hint > reserve;
    if (m->hinted)
        reserve = m->reserve_hint;
    m->share_missed = 0;
    si_result st = SI_OK;
    for (int k = 0;; k++) {
        m->reserve = reserve;
        if (budget && reserve >= budget) {
            st = base_fail(err, SI_ERR_BUDGET, "the driver's own share (%llu bytes) leaves nothing "
                           "of the budget", (unsigned long long)reserve);
            break;
        }
        if ((st = pg_plan_build_with(&m->pb, budget - reserve, align, &po, &m->plan, err)) != SI_OK)
            break;
        if ((*pool = pg_home_layout(&m->pb, m->plan, m->home_off)) == UINT64_MAX) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
            break;
        }
        uint64_t need = driver_reserve(m, budget, *pool);
        if (m->plan->arena_bytes + need <= budget || !budget) {
            m->reserve = need; /* what the driver takes beside this plan */
            break;
        }
        m->share_missed = need;
        pg_plan_free(m->plan);
        m->plan = NULL;
        if (k == 3) {
            st = base_fail(err, SI_ERR_BUDGET, "the plan and the driver's share for its host pool "
                           "(%llu bytes) do not fit together", (unsigned long long)need);
            break;
        }
        reserve = need;
    }
    free(caps);
    return st;
}

/* Keeps the values of inputs small enough to be bound by value (the program
 * depends on them) in m->bound_vals; vp[i] points at those kept. */
static void bind_values(si_model *m, const core_shape *shapes, void *const *vals,
                        const core_buf **vp)
{
    for (int i = 0; i < core_graph_n_inputs(m->g); i++) {
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
}

/* What the tiling schedule's refused attempts leave for the message: the
 * closest attempt within the device's limits, and the largest tensor that
 * was over them. */
typedef struct {
    uint64_t best_ws, best_limit, over_bytes;
    int best_node;
    si_error over_err; /* the largest tensor over the device's limit, named */
} refusals;

/* Per step of the program: 1 where its node's op is one of si_options.f32_ops
 * (its tensors stay float32 at f16); NULL where none is named (or no memory:
 * then every step may take halves, as without the option). */
static uint8_t *f32_steps(const si_model *m)
{
    const char *ops = m->opt.f32_ops;
    if (!ops || !ops[0] || !m->prog->n_steps)
        return NULL;
    uint8_t *keep = calloc((size_t)m->prog->n_steps, 1);
    for (int s = 0; keep && s < m->prog->n_steps; s++) {
        int node = m->prog->steps[s].node;
        keep[s] = node >= 0 && node < m->io->n_nodes && rt_name_listed(ops, m->io->nodes[node].op);
    }
    return keep;
}

/* Per tensor of the program: 1 where it stays float32 at f16 for reasons of
 * its own, not of a step's: what core_fused_away found (away, may be NULL),
 * the model's inputs where si_options.f32_ops names Placeholder, its weights
 * and folded constants where it names Const (the nodes they come from; no
 * step computes them). Takes away and returns it, marked; NULL where none
 * (or no memory: as without the names). */
static uint8_t *f32_tensors(const si_model *m, uint8_t *away)
{
    const char *ops = m->opt.f32_ops;
    int inputs = ops && (rt_name_listed(ops, "Placeholder") || rt_name_listed(ops, "PlaceholderWithDefault"));
    int consts = ops && rt_name_listed(ops, "Const");
    const core_program *p = m->prog;
    if (!inputs && !consts)
        return away;
    uint8_t *keep = away ? away : calloc((size_t)(p->n_tensors ? p->n_tensors : 1), 1);
    for (int t = 0; keep && t < p->n_tensors; t++) {
        const core_tensor *ct = &p->tensors[t];
        keep[t] |= (inputs && ct->kind == PT_INPUT && ct->input >= 0 && ct->input < p->n_inputs) ||
                   (consts && (ct->kind == PT_WEIGHT || ct->kind == PT_CONST));
    }
    return keep;
}

/* One attempt of the schedule: the program (its epilogues fused unless
 * unfused or si_options.no_fuse) split into parts of at most limit bytes (0:
 * untiled; node_limit, n_nodes long, NULL or not: a limit per node, as
 * core_program_tile takes) and its plan. *over: a buffer over the device's
 * limit, -1 if none, -2 if the attempt failed before planning (nothing to
 * retry). */
static si_result attempt_at(si_model *m, const core_shape *shapes, const core_buf **vp,
                            uint64_t limit, const uint64_t *node_limit, int unfused,
                            uint32_t align, uint64_t *pool, int *over, si_error *err)
{
    si_result st;
    *over = -2;
    m->hinted = 0;
    rt_drop_program(m);
    int n_nodes = m->io->n_nodes;
    if (node_limit) {
        if (!(m->node_limit = malloc(((size_t)n_nodes + 1) * sizeof *m->node_limit)))
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        memcpy(m->node_limit, node_limit, (size_t)n_nodes * sizeof *node_limit);
    }
    m->fail_node = -1;
    if ((st = m->node_prog
                  ? core_program_build_node(m->g, shapes, vp, m->given, m->node_prog - 1,
                                            rt_load_weight, m, &m->prog, &m->fail_node, err)
                  : core_program_build_given(m->g, shapes, vp, m->given,
                                             m->parent ? m->parent->host_only : NULL,
                                             rt_load_weight, m, &m->prog, &m->fail_node, err)) !=
        SI_OK)
        return st;
    m->unfused = unfused || m->opt.no_fuse;
    int exact = !m->gpu || glk_precise(m->gpu);
    uint8_t *away = NULL; /* at f16, what fusion would take away stays float32 */
    if (m->unfused && m->opt.precision == SI_PRECISION_F16 && !(away = core_fused_away(m->prog, exact)))
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (!m->unfused)
        core_fuse_epilogues(m->prog, exact);
    if (m->be != &rt_backend_gpu || glk_software(m->gpu))
        core_topk_to_host(m->prog);
    if (m->opt.precision == SI_PRECISION_F16 && m->be == &rt_backend_gpu) {
        uint8_t *keep = f32_steps(m);
        away = f32_tensors(m, away);
        core_program_set_half(m->prog, glk_max_loop_iterations(m->gpu), keep, away);
        free(keep);
    }
    free(away);
    m->untiled_bound = largest_step(m->prog, NULL);
    m->tile_limit = m->tile_limit_max = limit;
    for (int i = 0; m->node_limit && i < n_nodes; i++)
        if (m->node_limit[i] > m->tile_limit_max)
            m->tile_limit_max = m->node_limit[i];
    m->n_split = 0;
    if (limit || rt_largest_tensor(m->prog) > m->max_tensor) {
        double t0 = rt_now_ms();
        st = core_program_tile(m->prog, limit, m->node_limit, n_nodes, m->max_tensor, rt_load_weight,
                               m, &m->n_split, err);
        m->build_tile_ms += rt_now_ms() - t0;
        if (st != SI_OK)
            return st;
    }
    int wrong = core_program_mark_half(m->prog);
    if (wrong >= 0)
        return base_fail(err, SI_ERR_ARG, "internal: step %d (%s) has a half binding its kernel "
                         "does not read", wrong, ck_kind_name(m->prog->steps[wrong].kind));
    if ((st = rt_make_problem(m, err)) != SI_OK)
        return st;
    *over = rt_oversized(&m->pb, m->max_tensor);
    return *over >= 0 ? SI_ERR_BUDGET : plan_within(m, m->opt.vram_budget, align, pool, err);
}

/* Whether a node of m's program is split within more than limit in nl. */
static int coarser_than(const si_model *m, const uint64_t *nl, uint64_t limit)
{
    const core_program *p = m->prog;
    for (int k = 0; k < p->n_steps; k++) {
        int node = p->steps[k].node;
        if (node >= 0 && node < m->io->n_nodes && nl[node] > limit)
            return 1;
    }
    return 0;
}

/* The limits per node of the next attempt where the last (every node's steps
 * split within at most `limit`, *nl's where set) was refused within the
 * device's limits: a node with a step of more than half the arena's budget
 * goes down to next, the others keep theirs. A model's floor is often set by
 * a few steps (effdet-d7: the input's preprocessing, 28.3 MB of its 28.5 MB),
 * and splitting every other step as finely multiplies the plan's steps
 * (287,022 there at 1 MiB, against 28,325 at 8 MiB) and its time. Returns 1
 * where some node stays coarser than next, 0 where none, -1 out of memory. */
static int refine_tight(si_model *m, uint64_t limit, uint64_t next, uint64_t **nl)
{
    int n = m->io->n_nodes;
    if (!*nl) {
        if (!(*nl = malloc(((size_t)n + 1) * sizeof **nl)))
            return -1;
        for (int i = 0; i < n; i++)
            (*nl)[i] = limit;
    }
    uint64_t budget = m->opt.vram_budget, arena = budget > m->reserve ? budget - m->reserve : 0;
    const core_program *p = m->prog;
    for (int k = 0; k < p->n_steps; k++) {
        int node = p->steps[k].node;
        if (node >= 0 && node < n && core_step_working_set(p, k) > arena / 2)
            (*nl)[node] = next;
    }
    return coarser_than(m, *nl, next);
}

/* After a mixed attempt whose steps each fit the budget but whose placement
 * did not: every node coarser than limit one limit finer. Returns as
 * refine_tight. Step by step, not at once to limit: that can be thousands of
 * times the steps (frcnn-irv2 near its floor: 64 KiB where the input's steps
 * bind, 2 MiB elsewhere). */
static int refine_all(const si_model *m, uint64_t limit, uint64_t *nl)
{
    for (int i = 0; i < m->io->n_nodes; i++)
        if (nl[i] > limit)
            nl[i] = nl[i] / 2 > limit ? nl[i] / 2 : limit;
    return coarser_than(m, nl, limit);
}

/* Attempts of tile_schedule to make again: their limit, and their limits per
 * node (NULL: limit for every node). */
typedef struct {
    struct {
        uint64_t limit, *nl;
    } *v;
    int n, cap;
} hinted_list;

static int hinted_push(hinted_list *l, uint64_t limit, const uint64_t *nl, int n_nodes)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        void *v = realloc(l->v, (size_t)cap * sizeof *l->v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    uint64_t *c = NULL;
    if (nl && !(c = malloc(((size_t)n_nodes + 1) * sizeof *c)))
        return -1;
    if (nl)
        memcpy(c, nl, (size_t)n_nodes * sizeof *c);
    l->v[l->n].limit = limit;
    l->v[l->n++].nl = c;
    return 0;
}

static void hinted_free(hinted_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i].nl);
    free(l->v);
}

/* Untiled first (but tensors over the device's limit for one buffer cut into
 * bands); where no plan fits, steps are split into parts of at most the sizes
 * of rt_tile_first's ladder (core/tile.c) and planned again: below its first
 * limit, only the nodes that bind go finer (refine_tight), the others where
 * placement needs it (refine_all); once that fails, every node at each limit. */
static si_result tile_schedule(si_model *m, const core_shape *shapes, const core_buf **vp,
                               uint64_t *pool, refusals *rf, si_error *err)
{
    si_result st = SI_OK;
    uint64_t budget = m->opt.vram_budget, limit = 0;
    uint32_t align = m->be->offset_align(m);
    if (align < BASE_ALIGN)
        align = BASE_ALIGN;
    m->max_tensor = rt_plan_limits(m->gpu, m->opt.max_buffer_bytes, &m->limits);
    rt_pcache_entry ce = {0};
    m->plan_from_cache = 0;
    if (rt_pcache_on(m) && rt_pcache_find(m, shapes, vp, align, &ce)) {
        /* the cached plan, on the program tiled as it was; any doubt: plan again */
        int over;
        si_error ignored;
        m->cached_plan = ce.plan;
        m->cached_plan_len = ce.plan_len;
        m->cached_reserve = ce.reserve;
        st = attempt_at(m, shapes, vp, ce.tile_limit, ce.node_limit, ce.unfused, align, pool, &over,
                        &ignored);
        m->cached_plan = NULL;
        if (st == SI_OK && m->tile_limit == ce.tile_limit && m->unfused == ce.unfused) {
            m->plan_from_cache = 1;
            rt_pcache_entry_free(&ce);
            return SI_OK;
        }
        if (st == SI_ERR_CANCELLED || (st = rt_check_cancel(m, err)) != SI_OK) {
            rt_pcache_entry_free(&ce);
            return st;
        }
    }
    m->reserve_hint = m->share_missed = 0;
    uint64_t tiled_ws = 0; /* the largest step at the last limit tried */
    int tiled_node = -1;   /* and its node */
    /* a budget no limit above the ladder's floor could meet (rt_tile_first) */
    int below_floor = budget && rt_tile_below_floor(budget, m->untiled_bound);
    hinted_list retry = {0}; /* attempts refused as planned with a share seen before */
    uint64_t *nl = NULL;   /* the limits per node of a mixed attempt (NULL: limit for all) */
    int mixed = 0;         /* nl leaves some node coarser than limit */
    int uniform = 0;       /* a mixed attempt did not fit: every node at limit from here on */
    for (int attempt = 0;; attempt++) {
        int over;
        rt_progress(m, "plan", attempt + 1, 0); /* attempt k, how many unknown */
        if ((st = rt_check_cancel(m, err)) != SI_OK)
            break;
        m->reserve_hint = m->share_missed > m->reserve_hint ? m->share_missed : m->reserve_hint;
        st = attempt_at(m, shapes, vp, limit, mixed ? nl : NULL, 0, align, pool, &over, err);
        if (over == -2)
            break;
        if (st == SI_ERR_BUDGET && over < 0 && m->hinted &&
            hinted_push(&retry, limit, mixed ? nl : NULL, m->io->n_nodes)) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
            break;
        }
        /* Fused, the untiled program has fewer tensors, but placement is a
         * heuristic and can miss a budget the program as lowered meets (with
         * bitwise the same answer): where every step fits the budget, that one is
         * tried before steps are split (which can take far more steps). At
         * f16 its epilogues' intermediates stay float32 (core_fused_away), so
         * it rounds where the fused one does: the same bits. */
        if (limit == 0 && st == SI_ERR_BUDGET && over < 0 && !m->unfused &&
            m->untiled_bound <= budget) {
            st = attempt_at(m, shapes, vp, 0, NULL, 1, align, pool, &over, err);
            if (over == -2)
                break;
        }
        int node = -1; /* the largest step and its node */
        uint64_t ws = largest_step(m->prog, &node);
        if (m->opt.plan_debug)
            fprintf(stderr, "plan attempt %d: limit %llu%s, largest step %llu (node '%s'), %d steps: %s%s at %.1f ms\n",
                    attempt, (unsigned long long)m->tile_limit, mixed ? " (coarser where the budget allows)" : "",
                    (unsigned long long)ws, si_model_node_name(m, node),
                    m->prog->n_steps, st == SI_OK ? "fits" : over >= 0 ? "over the device's limit" : "refused",
                    m->hinted ? " (planned with the driver's share an attempt before missed)" : "", rt_now_ms());
        if (st == SI_OK || st == SI_ERR_NOMEM)
            break;
        if (over >= 0 && m->pb.buffers[over].bytes > rf->over_bytes) {
            rf->over_bytes = m->pb.buffers[over].bytes;
            rt_device_refusal(m, m->prog, m->pb.buffers[over].tensor, rf->over_bytes,
                              m->max_tensor, &m->limits, &rf->over_err);
        }
        /* the closest attempt within the device's limits, for the message */
        if (over < 0 && (!rf->best_ws || ws <= rf->best_ws)) { /* ties: the split one, named in the message */
            rf->best_ws = ws;
            rf->best_node = node;
            rf->best_limit = m->tile_limit;
        }
        if (mixed && budget && over < 0 && ws > budget && tiled_ws && ws >= tiled_ws) {
            /* the nodes split finer did not make the largest step smaller (it takes
             * parts of others: centernet's TopKV2): every node at limit */
            mixed = 0;
            uniform = 1;
            continue;
        }
        /* Parts past the budget that finer parts did not make smaller: the
         * finer limits below split more steps (millions: frcnn-irv2 at f16
         * near 2.2M, 1.3M to 7.2M steps a limit, 50 s of tiling) around the
         * step that binds, and so leave it bound. */
        /* Below the floor (a budget of 1 byte: the budget the refusal names is
         * what is wanted), a largest step as large as before but of another node
         * goes on (rvm: two nodes of 2,654,208 bytes at 4 and 2 MiB, 2,380,800 at
         * the floor) */
        int stuck = below_floor ? ws > tiled_ws || (ws == tiled_ws && node == tiled_node) : ws >= tiled_ws;
        if (budget && limit && over < 0 && ws > budget && tiled_ws && stuck) {
            if (m->opt.plan_debug)
                fprintf(stderr, "plan: finer parts left the largest step at %llu bytes (%llu before): "
                        "no finer limit tried\n", (unsigned long long)ws, (unsigned long long)tiled_ws);
            break;
        }
        if (limit && over < 0)
            tiled_ws = ws, tiled_node = node;
        if (mixed && over < 0 && budget > m->reserve && ws <= budget - m->reserve) {
            /* every step fit, their placement did not: the others finer, towards limit
             * for every node (and from there on as before) */
            uniform = !(mixed = refine_all(m, limit, nl));
            continue;
        }
        uint64_t next = limit ? rt_tile_next(limit, m->untiled_bound) : rt_tile_first(budget, m->untiled_bound, ws);
        if (!next)
            break;
        int r = limit && budget && over < 0 && !uniform ? refine_tight(m, limit, next, &nl) : 0;
        if (r < 0) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
            break;
        }
        mixed = r;
        limit = next;
    }
    free(nl);
    /* Those planned with a share seen before, again with the least pool's: the
     * share is a guess until the plan's pool is known */
    m->reserve_hint = 0;
    for (int i = 0; st == SI_ERR_BUDGET && i < retry.n; i++) {
        int over;
        if ((st = rt_check_cancel(m, err)) != SI_OK)
            break;
        st = attempt_at(m, shapes, vp, retry.v[i].limit, retry.v[i].nl, 0, align, pool, &over, err);
        if (m->opt.plan_debug)
            fprintf(stderr, "plan: again with the least pool's share, limit %llu%s: %s\n",
                    (unsigned long long)retry.v[i].limit, retry.v[i].nl ? " (mixed)" : "",
                    st == SI_OK ? "fits" : "refused");
    }
    hinted_free(&retry);
    if (st == SI_OK)
        rt_pcache_store(m, &ce);
    rt_pcache_entry_free(&ce);
    return st;
}

/* The refusal once the schedule is spent: the figures a user acts on first. */
static si_result explain_refusal(si_model *m, si_result st, const refusals *rf, si_error *err)
{
    uint64_t budget = m->opt.vram_budget;
    int share_told = 0; /* the driver's share is in the message already */
    if (st == SI_ERR_BUDGET && !rf->best_ws && rf->over_bytes) { /* only the device's limit bound it */
        st = rf->over_err.status;
        if (err)
            *err = rf->over_err;
    } else if (err && st == SI_ERR_BUDGET && rf->best_limit) {
        /* the driver's share right after the budget it adds to, the node's name
         * last: names can be long, and the message is cut at sizeof
         * err->message (plan --smallest reads the share from it: behind
         * effdet-d0's 74-character node name it was lost, and the search
         * bisected) */
        char b[BASE_SIZE_CHARS], need[BASE_SIZE_CHARS], max[BASE_SIZE_CHARS], part[BASE_SIZE_CHARS],
            untiled[BASE_SIZE_CHARS];
        /* a later stage planned within less than the budget (rt_stage_budget):
         * the figures are the budget's, with the arenas made before it */
        char made[2 * BASE_SIZE_CHARS + 96] = "";
        uint64_t shown = budget;
        if (m->made_before && m->parent) {
            shown = m->parent->opt.vram_budget;
            snprintf(made, sizeof made, " (%s of it left to this stage: the arenas made before it, "
                     "%s, the driver keeps)", base_size(budget, (char[BASE_SIZE_CHARS]){0}),
                     base_size(m->made_before, (char[BASE_SIZE_CHARS]){0}));
        }
        char add[BASE_SIZE_CHARS + 64] = "";
        if (m->reserve)
            snprintf(add, sizeof add, " (on this GPU %s more: the driver's share)",
                     base_size(m->reserve, (char[BASE_SIZE_CHARS]){0}));
        base_fail(err, st, "no plan fits in a budget of %s%s; the smallest budget that could work is "
             "%s%s (the limit that bound it: the budget, every tensor within the device's "
             "max_buffer_bytes of %s; untiled, the largest step needs %s; even in parts of %s, "
             "a step of that size is left, node '%s')",
             base_size(shown, b), made, base_size(rf->best_ws + m->made_before, need), add,
             base_size(m->max_tensor, max), base_size(m->untiled_bound, untiled),
             base_size(rf->best_limit, part), si_model_node_name(m, rf->best_node));
        share_told = 1;
    }
    if (err && st == SI_ERR_BUDGET && m->reserve && !share_told) {
        size_t k = strlen(err->message);
        snprintf(err->message + k, sizeof err->message - k,
                 " (figures for the arena: on this GPU %s of the budget are left to the "
                 "driver, for the host pool's page tables and page rounding; add them)",
                 base_size(m->reserve, (char[BASE_SIZE_CHARS]){0}));
    }
    return st;
}

static si_result rt_build_timed(si_model *m, const core_shape *shapes, void *const *vals,
                                si_error *err);

si_result rt_build_program(si_model *m, const core_shape *shapes, void *const *vals,
                           si_error *err)
{
    if (rt_same_binding(m, shapes, vals))
        return SI_OK;
    rt_drop_program(m);
    m->rebuilt = 1;
    double t0 = rt_now_ms();
    m->build_tile_ms = 0;
    rt_progress(m, "plan", 0, 1);
    si_result st = rt_build_timed(m, shapes, vals, err);
    m->build_plan_ms = rt_now_ms() - t0 - m->build_tile_ms;
    return st;
}

static si_result rt_build_timed(si_model *m, const core_shape *shapes, void *const *vals,
                                si_error *err)
{
    int ni = core_graph_n_inputs(m->g);
    const core_buf **vp = calloc((size_t)ni + 1, sizeof *vp);
    if (!vp)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    bind_values(m, shapes, vals, vp);
    uint64_t pool = 0;
    refusals rf = {.best_node = -1};
    si_result st = tile_schedule(m, shapes, vp, &pool, &rf, err);
    free(vp);
    if (st != SI_OK) {
        st = explain_refusal(m, st, &rf, err);
        goto fail;
    }
    memcpy(m->bound, shapes, (size_t)ni * sizeof *shapes);
    /* the host tiers within the host budget: fewer homes than pool, never more */
    if ((st = rt_host_tiers(m, &pool, err)) != SI_OK)
        goto fail;
    m->off = calloc((size_t)m->pb.n_buffers + 1, sizeof *m->off);
    if (!m->off || (st = rt_make_homes(m, pool, err)) != SI_OK) {
        if (st == SI_OK)
            st = base_fail(err, SI_ERR_NOMEM, "out of memory");
        goto fail;
    }
    rt_progress(m, "plan", 1, 1);
    return SI_OK;
fail:
    rt_drop_program(m);
    return st;
}
