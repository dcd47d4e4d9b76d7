/* si_context: several models in one GL context, one lock and one VRAM budget
 * (issue 21). Each model keeps its own program, plan and host pool; what the
 * context adds is the choice of whose arena goes when the next run needs the
 * room: the model whose next run is farthest (Belady's rule over models),
 * with the order declared by the application or learned from the runs.
 * Under a budget the arenas are ranges of one GL buffer the context owns:
 * a buffer a model would make and delete at every turn costs the driver more
 * than its size (each rounded up to 2 MiB pages, and a deleted one freed only
 * once the GPU is done with it: on the H200 five models' turns in 7.66 MiB
 * took 20 MiB of the card's memory), while one buffer is allocated once. */
#include <stdlib.h>
#include <string.h>
#include "session_internal.h"

#define HISTORY_MAX 256 /* runs remembered for learning the order */

struct si_context {
    si_options opt;          /* with the environment's overrides */
    const rt_backend *be;
    glk_ctx *gpu;            /* NULL on the host backend */
    pthread_mutex_t lock;
    si_model **models;       /* open now */
    int n_models, cap_models;
    int next_id;
    int *order, n_order;     /* declared: model ids, repeated */
    int hist[HISTORY_MAX];   /* learned: the ids of the last runs, oldest first */
    int n_hist;
    uint32_t arena_buf;      /* the one arena buffer (0: none yet, or no budget) */
    uint64_t arena_size;
    si_context_stats st;
};

si_result si_context_open(const si_options *opt, si_context **out, si_error *err)
{
    si_error dummy;
    if (!err)
        err = &dummy;
    *err = (si_error){0};
    if (!out)
        return base_fail(err, SI_ERR_ARG, "si_context_open: out is required");
    *out = NULL;
    si_context *c = calloc(1, sizeof *c);
    if (!c)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    if (pthread_mutex_init(&c->lock, NULL)) {
        free(c);
        return base_fail(err, SI_ERR_NOMEM, "cannot create the context's lock");
    }
    rt_effective_options(opt, &c->opt);
    c->opt.progress = NULL;
    c->opt.progress_user = NULL;
    c->opt.trace_path = NULL;
    c->be = &rt_backend_host;
    si_result cs = glk_set_conv(NULL, c->opt.conv_kernel, err); /* a bad one is the caller's error */
    if (cs != SI_OK) {
        pthread_mutex_destroy(&c->lock);
        free(c);
        return cs;
    }
    if (c->opt.backend != SI_BACKEND_HOST) {
        glk_binding before; /* the caller's current context, put back */
        glk_current_save(&before);
        si_result st = glk_open(&c->gpu, err);
        glk_current_restore(&before);
        if (st == SI_OK) {
            glk_set_conv(c->gpu, c->opt.conv_kernel, NULL);
            glk_set_faults(c->gpu, &(glk_faults){c->opt.fail_gpu_alloc, c->opt.fail_gpu_command,
                                                 c->opt.fail_gpu_lost, c->opt.fail_gpu_no_storage});
            rt_programs_bind(c->gpu, c->opt.plan_cache_dir);
            c->be = &rt_backend_gpu;
            c->opt.backend = SI_BACKEND_GPU;
        } else if (c->opt.backend == SI_BACKEND_AUTO) {
            c->opt.backend = SI_BACKEND_HOST;
            *err = (si_error){0};
        } else {
            pthread_mutex_destroy(&c->lock);
            free(c);
            return st;
        }
    }
    c->st.budget_bytes = c->opt.vram_budget;
    *out = c;
    return SI_OK;
}

void rt_ctx_attach(si_context *c, si_model *m)
{
    m->ctx = c;
    m->gpu = c->gpu;
    m->be = c->be;
    m->lockp = &c->lock;
    m->opt.vram_budget = c->opt.vram_budget;
    m->opt.host_mem_budget = c->opt.host_mem_budget;
    m->opt.backend = c->opt.backend;
    m->opt.no_stages = c->opt.no_stages;
    m->opt.driver_reserve = c->opt.driver_reserve;
    m->opt.check_steps = c->opt.check_steps;
    m->opt.plan_prefetch = c->opt.plan_prefetch;
    m->opt.plan_debug = c->opt.plan_debug;
    m->ctx_id = -1; /* until registered */
}

si_result si_context_open_model(si_context *c, const char *path, const si_options *opt,
                                si_model **out, si_error *err)
{
    si_error dummy;
    if (!err)
        err = &dummy;
    if (!c || !path || !out)
        return base_fail(err, SI_ERR_ARG, "si_context_open_model: context, path and out are required");
    *out = NULL;
    si_model *m = NULL;
    si_result st = rt_open_model(c, path, opt, &m, err);
    if (st != SI_OK)
        return st;
    pthread_mutex_lock(&c->lock);
    if (c->n_models == c->cap_models) {
        int cap = c->cap_models ? 2 * c->cap_models : 8;
        si_model **nm = realloc(c->models, (size_t)cap * sizeof *nm);
        if (!nm) {
            pthread_mutex_unlock(&c->lock);
            si_close(m);
            return base_fail(err, SI_ERR_NOMEM, "out of memory");
        }
        c->models = nm;
        c->cap_models = cap;
    }
    m->ctx_id = c->next_id++;
    c->models[c->n_models++] = m;
    pthread_mutex_unlock(&c->lock);
    *out = m;
    return SI_OK;
}

void rt_ctx_forget(si_model *m)
{
    si_context *c = m->ctx;
    for (int i = 0; i < c->n_models; i++)
        if (c->models[i] == m) {
            memmove(&c->models[i], &c->models[i + 1], (size_t)(c->n_models - i - 1) * sizeof *c->models);
            c->n_models--;
            break;
        }
    for (int i = 0; i < c->n_order; i++) /* the declared order goes on without it */
        if (c->order[i] == m->ctx_id) {
            memmove(&c->order[i], &c->order[i + 1], (size_t)(c->n_order - i - 1) * sizeof *c->order);
            c->n_order--;
            break;
        }
}

si_result si_context_set_order(si_context *c, si_model *const *order, int n, si_error *err)
{
    si_error dummy;
    if (!err)
        err = &dummy;
    if (!c || n < 0 || (n > 0 && !order))
        return base_fail(err, SI_ERR_ARG, "si_context_set_order: a context and n models are required");
    pthread_mutex_lock(&c->lock);
    si_result st = SI_OK;
    int *ids = calloc((size_t)n + 1, sizeof *ids);
    if (!ids)
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n && st == SI_OK; i++) {
        if (!order[i] || order[i]->ctx != c)
            st = base_fail(err, SI_ERR_ARG, "si_context_set_order: model %d is not one of this context's", i);
        for (int k = 0; k < i && st == SI_OK; k++)
            if (order[k] == order[i])
                st = base_fail(err, SI_ERR_ARG, "si_context_set_order: model %d is given twice", i);
        if (st == SI_OK)
            ids[i] = order[i]->ctx_id;
    }
    if (st == SI_OK) {
        free(c->order);
        c->order = ids;
        c->n_order = n;
    } else {
        free(ids);
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

static uint64_t model_held(const si_model *m) { return rt_arenas_held(m); }

/* The arenas the models hold now, together. */
static uint64_t models_held(const si_context *c)
{
    uint64_t held = 0;
    for (int i = 0; i < c->n_models; i++)
        held += model_held(c->models[i]);
    return held;
}

uint64_t rt_ctx_held(const si_context *c)
{
    if (c->arena_buf) /* every arena is in it: the bytes owned are its own */
        return c->arena_size;
    return models_held(c);
}

void rt_ctx_note_peak(si_context *c)
{
    uint64_t held = rt_ctx_held(c);
    if (held > c->st.peak_vram_bytes)
        c->st.peak_vram_bytes = held;
}

uint64_t rt_ctx_other_pools(const si_context *c, const si_model *m)
{
    uint64_t pool = 0;
    for (int i = 0; i < c->n_models; i++)
        if (c->models[i] != m)
            for (int k = -1; k < c->models[i]->n_stages; k++)
                pool += rt_member(c->models[i], k)->home_bytes;
    return pool;
}

/* How many runs from now model id x runs again, as the context expects,
 * when model id a is about to run; larger is later. */
static uint64_t next_use(const si_context *c, int a, int x)
{
    const uint64_t far = UINT64_MAX / 2;
    if (c->n_order > 0) {
        int pa = -1, px = -1;
        for (int i = 0; i < c->n_order; i++) {
            if (c->order[i] == a)
                pa = i;
            if (c->order[i] == x)
                px = i;
        }
        if (px < 0) /* not in the order: never, as far as it says */
            return far + 1;
        if (pa < 0)
            pa = 0;
        return (uint64_t)((px - pa + c->n_order) % c->n_order);
    }
    /* learned: what followed a's previous run comes next again */
    int pa = -1, px = -1;
    for (int i = 0; i < c->n_hist; i++) {
        if (c->hist[i] == a)
            pa = i;
        if (c->hist[i] == x)
            px = i;
    }
    if (pa >= 0)
        for (int i = pa + 1; i < c->n_hist; i++)
            if (c->hist[i] == x)
                return (uint64_t)(i - pa);
    /* no pattern says: the least recently run goes first */
    return far - (uint64_t)(px + 1);
}

static void give_up(si_context *c, si_model *x)
{
    for (int k = -1; k < x->n_stages; k++)
        x->be->arena_release(rt_member(x, k));
    c->st.arenas_released++;
}

/* Of the models other than root that hold an arena, the one whose next run
 * is farthest (NULL: none holds one). */
static si_model *farthest(const si_context *c, const si_model *root)
{
    si_model *victim = NULL;
    uint64_t vd = 0;
    for (int i = 0; i < c->n_models; i++) {
        si_model *x = c->models[i];
        if (x == root || !model_held(x))
            continue;
        uint64_t d = next_use(c, root->ctx_id, x->ctx_id);
        if (!victim || d > vd) {
            victim = x;
            vd = d;
        }
    }
    return victim;
}

uint64_t rt_ctx_make_room(si_context *c, si_model *root, uint64_t need)
{
    uint64_t budget = c->opt.vram_budget;
    uint64_t kept = models_held(c) - model_held(root);
    while (kept && kept + need > budget) {
        si_model *victim = farthest(c, root);
        if (!victim)
            break;
        kept -= model_held(victim);
        give_up(c, victim);
    }
    return kept;
}

int rt_ctx_one_arena(const si_context *c) { return c->gpu && c->opt.vram_budget > 0; }

/* The lowest offset (a multiple of align) where need bytes fit between the
 * ranges the context's members other than m hold; UINT64_MAX where none. */
static uint64_t first_fit(const si_context *c, const si_model *m, uint64_t need, uint64_t align)
{
    uint64_t at = 0;
    for (;;) { /* past every range that overlaps [at, at + need) */
        int moved = 0;
        for (int i = 0; i < c->n_models; i++)
            for (int k = -1; k < c->models[i]->n_stages; k++) {
                const si_model *x = rt_member(c->models[i], k);
                if (x == m || !x->arena || !x->arena_shared)
                    continue;
                uint64_t end = x->arena_base + base_align_up(x->plan->arena_bytes, align);
                if (x->arena_base < at + need && at < end) {
                    at = end;
                    moved = 1;
                }
            }
        if (!moved)
            return at + need <= c->arena_size ? at : UINT64_MAX;
    }
}

si_result rt_ctx_arena_take(si_context *c, si_model *m, si_error *err)
{
    si_model *root = m->parent ? m->parent : m;
    uint64_t align = glk_offset_align(c->gpu) > 4 ? glk_offset_align(c->gpu) : 4;
    uint64_t need = base_align_up(m->plan->arena_bytes ? m->plan->arena_bytes : 4, align);
    /* The buffer: the budget less the driver's share, or what the members'
     * arenas take together where that is less; never less than this arena (a
     * plan made before later models' host pools counted in the share) */
    uint64_t budget = c->opt.vram_budget, reserve = rt_driver_reserve_all(m, budget);
    uint64_t room = budget > reserve ? budget - reserve : 0, want = 0;
    for (int i = 0; i < c->n_models; i++)
        for (int k = -1; k < c->models[i]->n_stages; k++) {
            const si_model *x = rt_member(c->models[i], k);
            if (x != m && x->plan)
                want += base_align_up(x->plan->arena_bytes, align);
        }
    want += need;
    if (want > room)
        want = room > need ? room : need;
    if (c->arena_size < want) { /* made anew, larger: every arena in it goes */
        for (int i = 0; i < c->n_models; i++)
            for (int k = -1; k < c->models[i]->n_stages; k++)
                c->models[i]->be->arena_release(rt_member(c->models[i], k));
        if (c->arena_buf)
            glk_buffer_destroy(c->gpu, c->arena_buf);
        c->arena_buf = 0;
        c->arena_size = 0;
        si_result st = glk_buffer_create(c->gpu, want, &c->arena_buf, err);
        if (st != SI_OK)
            return st;
        c->arena_size = want;
    }
    for (;;) {
        uint64_t at = first_fit(c, m, need, align);
        if (at != UINT64_MAX) {
            m->arena = c->arena_buf;
            m->arena_base = at;
            m->arena_shared = 1;
            return SI_OK;
        }
        /* no hole fits: the model whose next run is farthest gives its up */
        si_model *victim = farthest(c, root);
        if (victim) {
            give_up(c, victim);
            continue;
        }
        int any = 0; /* then m's model's other stages */
        for (int k = -1; k < root->n_stages; k++)
            if (rt_member(root, k) != m && rt_member(root, k)->arena) {
                root->be->arena_release(rt_member(root, k));
                any = 1;
            }
        if (!any)
            return base_fail(err, SI_ERR_BUDGET, "internal: an arena of %llu bytes does not fit the "
                             "context's arena buffer of %llu", (unsigned long long)need,
                             (unsigned long long)c->arena_size);
    }
}

void rt_ctx_after_run(si_model *m)
{
    si_context *c = m->ctx;
    c->st.runs++;
    c->st.bytes_uploaded += m->st.bytes_uploaded;
    c->st.bytes_downloaded += m->st.bytes_downloaded;
    c->st.bytes_spilled += m->st.bytes_spilled;
    c->st.bytes_reloaded += m->st.bytes_reloaded;
    if (c->n_hist == HISTORY_MAX) {
        memmove(c->hist, c->hist + 1, (HISTORY_MAX - 1) * sizeof *c->hist);
        c->n_hist--;
    }
    c->hist[c->n_hist++] = m->ctx_id;
}

void si_context_get_stats(const si_context *c, si_context_stats *st)
{
    si_context *cc = (si_context *)c; /* its lock only */
    pthread_mutex_lock(&cc->lock);
    *st = c->st;
    st->held_vram_bytes = rt_ctx_held(c);
    st->models = c->n_models;
    st->host_pool_bytes = rt_ctx_other_pools(c, NULL);
    pthread_mutex_unlock(&cc->lock);
}

void si_context_close(si_context *c)
{
    if (!c)
        return;
    while (c->n_models > 0)
        si_close(c->models[c->n_models - 1]);
    glk_binding saved;
    si_error ignored;
    if (c->arena_buf && glk_bind(c->gpu, &saved, &ignored) == SI_OK) {
        glk_buffer_destroy(c->gpu, c->arena_buf);
        glk_unbind(c->gpu, &saved);
    }
    glk_close(c->gpu);
    free(c->models);
    free(c->order);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
