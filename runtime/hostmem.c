/* The host side of the plan under a host-memory budget: the tiers the pager
 * chose (pg_host_tiers), the staging slots, the spill file, and every move of
 * a buffer between its host side and the arena. Without a budget every moved
 * buffer has a pool home and this is the plain copy from there. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "session_internal.h"

uint64_t rt_proc_bytes(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kib = 0;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n)) {
            kib = strtoull(line + n, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return kib * 1024;
}

/* The host pools of the model's other stages and, in a context, of the
 * context's other models: they share the budget. */
static uint64_t others_pools(const si_model *m)
{
    const si_model *root = m->parent ? m->parent : m;
    uint64_t n = 0;
    for (int i = -1; i < root->n_stages; i++)
        if (rt_member(root, i) != m)
            n += rt_member(root, i)->home_bytes;
    if (root->ctx)
        n += rt_ctx_other_pools(root->ctx, root);
    return n;
}

/* The bytes of the inputs a run of the model is given, 4 an element: the
 * run uploads them from the caller's memory (in_dev), so a host budget holds
 * them beside the pool. */
static uint64_t given_bytes(const si_model *root)
{
    uint64_t n = 0;
    for (int i = 0; i < core_graph_n_inputs(root->g); i++)
        if (root->bound[i].rank != CORE_UNFED_RANK)
            n += (uint64_t)core_shape_count(&root->bound[i]) * 4;
    return n;
}

si_result rt_host_tiers(si_model *m, uint64_t *homes, si_error *err)
{
    int nb = m->pb.n_buffers;
    rt_forget_in_place(m);
    free(m->home_off);
    free(m->file_off);
    free(m->tier);
    m->home_off = malloc(((size_t)nb + 1) * sizeof *m->home_off);
    m->file_off = malloc(((size_t)nb + 1) * sizeof *m->file_off);
    m->tier = calloc((size_t)nb + 1, 1);
    if (!m->home_off || !m->file_off || !m->tier)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    const si_model *root = m->parent ? m->parent : m;
    uint64_t given = m->opt.host_mem_budget ? given_bytes(root) : 0;
    uint64_t others = m->opt.host_mem_budget ? others_pools(m) : 0;
    uint64_t here = !m->opt.host_mem_budget                       ? 0
                    : others + given < m->opt.host_mem_budget ? m->opt.host_mem_budget - others - given
                                                              : 1;
    uint64_t want = here;
    /* A model that runs in stages shares the budget among their pools, and
     * the later stages are planned only once the earlier ones ran: each takes
     * the least pool that works for it, so what one leaves the next can use,
     * and a refusal names the least for all the stages planned so far. The
     * models of a context share its budget the same way: each is planned
     * when it is opened, not knowing what will be opened after it. */
    int staged = m->parent || m->prog->has_dynamic || root->ctx;
    si_error probe;
    if (here && staged && pg_host_tiers(&m->pb, m->plan, 1, m->home_off, m->file_off, m->tier, &m->hplan,
                                        &probe) == SI_ERR_BUDGET && m->hplan.min_budget < want)
        want = m->hplan.min_budget;
    si_result st = pg_host_tiers(&m->pb, m->plan, want, m->home_off, m->file_off, m->tier, &m->hplan, err);
    *homes = m->hplan.homes_bytes;
    if (st == SI_ERR_BUDGET && others) {
        char b1[BASE_SIZE_CHARS], b2[BASE_SIZE_CHARS], b3[BASE_SIZE_CHARS], b4[BASE_SIZE_CHARS];
        uint64_t total = m->hplan.min_budget + others + given;
        base_fail(err, st, "a host-memory budget of %s leaves %s to this %s's host pool after the "
                  "inputs it is given (%s) and the pools of the %s before it, and it needs %s: "
                  "the smallest host budget for the %s planned so far is %s",
                  base_size(m->opt.host_mem_budget, b1), base_size(here, b2),
                  root->ctx ? "model" : "stage", base_size(given, b4),
                  root->ctx ? "models and stages" : "stages", base_size(m->hplan.min_budget, b3),
                  root->ctx ? "models and stages" : "stages", base_size(total, (char[BASE_SIZE_CHARS]){0}));
    } else if (st == SI_ERR_BUDGET && given) {
        char b1[BASE_SIZE_CHARS], b2[BASE_SIZE_CHARS], b3[BASE_SIZE_CHARS];
        base_fail(err, st, "a host-memory budget of %s is too small for this plan: the inputs it is "
                  "given (%s), the staging of what is read again from the shards (the largest "
                  "weight, twice: one is read ahead) and of the spill file's parts, with what must "
                  "keep a home, need more; the smallest host budget that works is %s",
                  base_size(m->opt.host_mem_budget, b1), base_size(given, b2),
                  base_size(m->hplan.min_budget + given, b3));
    }
    return st;
}

/* The spill file is made in spill_dir and unlinked at once, so that it goes
 * with the descriptor whatever happens to the process. */
si_result rt_host_open(si_model *m, uint64_t homes, si_error *err)
{
    const pg_host_plan *hp = &m->hplan;
    m->pend_buf = -1;
    m->has_spill_fd = 0;
    m->wfence[0] = m->wfence[1] = m->sfence = NULL;
    /* in the pool, so that with a mapped pool every move is a GPU-side copy
     * (a download through a mapping of the arena made the H200's driver hold
     * host memory of its own) */
    m->wslot[0] = m->home + homes;
    m->wslot[1] = m->wslot[0] + hp->weight_slot_bytes;
    m->sslot = m->wslot[1] + hp->weight_slot_bytes;
    if (!hp->file_bytes)
        return SI_OK;
    const char *dir = m->opt.spill_dir ? m->opt.spill_dir : "/tmp";
    size_t n = strlen(dir) + 32;
    char *path = malloc(n);
    if (!path)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    snprintf(path, n, "%s/streaminfer-spill-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        si_result st = base_fail(err, SI_ERR_IO, "cannot make the spill file in %s: %s", dir, strerror(errno));
        free(path);
        return st;
    }
    unlink(path);
    free(path);
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    m->spill_fd = fd;
    m->has_spill_fd = 1;
    return SI_OK;
}

void rt_host_close(si_model *m)
{
    si_error ignored;
    if (m->wslot[0] && m->pend_buf >= 0) /* a read ahead still lands in its slot */
        io_reader_wait(m->rd, &ignored);
    for (int i = 0; i < 2; i++)
        m->be->fence_wait(m, &m->wfence[i], &ignored);
    m->be->fence_wait(m, &m->sfence, &ignored);
    if (m->has_spill_fd)
        close(m->spill_fd);
    m->has_spill_fd = 0;
    m->wslot[0] = m->wslot[1] = m->sslot = NULL;
    m->pend_buf = -1;
    free(m->tier);
    m->tier = NULL;
    free(m->file_off);
    m->file_off = NULL;
    memset(&m->hplan, 0, sizeof m->hplan);
}

/* bytes at p to or from the spill file at off. */
static si_result file_io(si_model *m, uint8_t *p, uint64_t bytes, uint64_t off, int write, si_error *err)
{
    double t0 = rt_now_ms();
    si_result st = SI_OK;
    if (!write)
        m->st.file_bytes_read += bytes;
    while (bytes > 0) {
        ssize_t k = write ? pwrite(m->spill_fd, p, bytes, (off_t)off) : pread(m->spill_fd, p, bytes, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            st = base_fail(err, SI_ERR_IO, "the spill file in %s: %s", m->opt.spill_dir,
                           k < 0 ? strerror(errno) : "short read");
            break;
        }
        p += k;
        off += (uint64_t)k;
        bytes -= (uint64_t)k;
    }
    m->st.file_ms += rt_now_ms() - t0;
    return st;
}

/* Buffer b between the arena and the spill file, through the spill slot in
 * parts (PG_SPILL_CHUNK at most). */
static si_result spill_io(si_model *m, int b, int write, si_error *err)
{
    uint64_t bytes = m->pb.buffers[b].bytes, off = m->file_off[b], chunk = m->hplan.spill_slot_bytes;
    if (write && m->opt.fail_spill_write > 0 && ++m->spill_writes >= m->opt.fail_spill_write)
        return base_fail(err, SI_ERR_IO, "the spill file: write %d failed (injected: fail_spill_write)",
                         m->spill_writes);
    uint64_t slot = (uint64_t)(m->sslot - m->home);
    for (uint64_t at = 0; at < bytes;) {
        uint64_t n = bytes - at < chunk ? bytes - at : chunk;
        /* the slot is free once the copy out of it (a reload's last part) has run */
        si_result st = m->be->fence_wait(m, &m->sfence, err);
        if (st == SI_OK && write)
            st = m->be->transfer_pool(m, b, at, n, slot, 0, &m->sfence, err);
        if (st == SI_OK)
            st = file_io(m, m->sslot, n, off + at, write, err);
        if (st == SI_OK && !write)
            st = m->be->transfer_pool(m, b, at, n, slot, 1, &m->sfence, err);
        if (st != SI_OK)
            return st;
        at += n;
    }
    if (write)
        m->st.bytes_spilled_to_file += bytes;
    return SI_OK;
}

si_result rt_host_read_back(si_model *m, int b, void *dst, uint64_t bytes, si_error *err)
{
    if (m->tier && m->tier[b] == PG_TIER_FILE)
        return file_io(m, dst, bytes, m->file_off[b], 0, err);
    if (m->home_off[b] == UINT64_MAX)
        return base_fail(err, SI_ERR_ARG, "internal: buffer %d was never brought back", b);
    memcpy(dst, m->home + m->home_off[b], bytes);
    return SI_OK;
}

/* Queues the read of weight buffer b's stored bytes into slot s. */
static si_result weight_submit(si_model *m, int b, int s, si_error *err)
{
    const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
    si_result st = m->be->fence_wait(m, &m->wfence[s], err); /* its last copy to the arena */
    if (st != SI_OK)
        return st;
    /* the padding to 4 bytes (a half one's: rt_store_halves; a quantized one's stored bytes) */
    memset(m->wslot[s], 0, pg_home_bytes(&m->pb.buffers[b]));
    m->st.file_bytes_read += m->io->weights[t->weight].nbytes;
    return io_reader_submit(m->rd, t->weight, m->wslot[s], err);
}

/* The next run action after a that loads a weight from the shards, or -1. */
static int next_shard_load(const si_model *m, int a)
{
    const pg_plan *pl = m->plan;
    for (int i = a + 1; i < pl->n_actions; i++) {
        const pg_action *ac = &pl->actions[i];
        if (ac->kind == PA_UPLOAD && m->tier[ac->buf] == PG_TIER_SOURCE &&
            m->pb.buffers[ac->buf].kind == PG_WEIGHT)
            return ac->buf;
    }
    return -1;
}

/* A weight read from the shards and uploaded; the next such weight of the run
 * is read ahead into the other slot, so the read overlaps the work between. */
static si_result weight_load(si_model *m, int b, int a, si_error *err)
{
    double t0 = rt_now_ms();
    si_result st = SI_OK;
    int s;
    if (m->pend_buf == b) {
        s = m->pend_slot;
        m->pend_buf = -1;
        st = io_reader_wait(m->rd, err);
    } else {
        /* the read ahead (if any) is for a later load: let it land, use the other slot */
        if (m->pend_buf >= 0 && (st = io_reader_wait(m->rd, err)) != SI_OK)
            return st;
        s = m->pend_buf >= 0 ? !m->pend_slot : 0;
        if ((st = weight_submit(m, b, s, err)) == SI_OK)
            st = io_reader_wait(m->rd, err);
    }
    m->st.file_ms += rt_now_ms() - t0;
    const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
    if (st == SI_OK && t->half && !t->quant) /* read as float32 (a quantized one: dequantized as it loads) */
        rt_store_halves(m->wslot[s], m->wslot[s], core_shape_count(&t->shape));
    if (st == SI_OK)
        st = m->be->transfer_pool(m, b, 0, m->pb.buffers[b].bytes, (uint64_t)(m->wslot[s] - m->home), 1,
                                  &m->wfence[s], err);
    if (st != SI_OK || a < 0 || m->pend_buf >= 0)
        return st;
    int nb = next_shard_load(m, a);
    if (nb >= 0) {
        m->pend_buf = nb;
        m->pend_slot = !s;
        t0 = rt_now_ms();
        st = weight_submit(m, nb, !s, err); /* synchronous with the pread reader */
        m->st.file_ms += rt_now_ms() - t0;
    }
    return st;
}

si_result rt_host_move(si_model *m, const pg_action *ac, int a, si_error *err)
{
    int b = ac->buf, to_arena = ac->kind == PA_UPLOAD || ac->kind == PA_RELOAD;
    int tier = m->tier ? m->tier[b] : PG_TIER_POOL;
    switch (tier) {
    case PG_TIER_SOURCE: {
        const core_tensor *t = &m->prog->tensors[m->pb.buffers[b].tensor];
        uint64_t bytes = m->pb.buffers[b].bytes;
        if (!to_arena)
            break;
        const void *src = t->kind == PT_CONST ? t->host : t->kind == PT_INPUT ? rt_input_data(m, t) : NULL;
        if (src && t->half) { /* its float32 values, as halves, a piece at a time:
                               * no copy of its size outside the host budget */
            enum { PIECE = 4096 }; /* elements: 8 KiB of halves */
            uint32_t h[PIECE / 2];
            int64_t n = core_shape_count(&t->shape);
            si_result st = SI_OK;
            for (int64_t i = 0; i < n && st == SI_OK; i += PIECE) {
                int64_t k = n - i < PIECE ? n - i : PIECE;
                rt_store_halves(h, (const float *)src + i, k); /* an odd last count: padded to 4 bytes */
                st = m->be->transfer_ptr(m, b, (uint64_t)i * 2, (uint64_t)(k + 1) / 2 * 4, h, 1, err);
            }
            return st;
        }
        if (t->kind == PT_CONST)
            return m->be->transfer_ptr(m, b, 0, bytes, t->host, 1, err);
        if (t->kind == PT_INPUT)
            /* to the arena: the caller's data is only read */
            return m->be->transfer_ptr(m, b, 0, bytes, (void *)(uintptr_t)rt_input_data(m, t), 1, err);
        return weight_load(m, b, a, err);
    }
    case PG_TIER_FILE:
        return spill_io(m, b, !to_arena, err);
    default:
        return m->be->transfer(m, b, to_arena, err);
    }
    return base_fail(err, SI_ERR_ARG, "internal: buffer %d has no host copy to write to", b);
}
