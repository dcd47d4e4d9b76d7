/* The plan cache (issue 18): a model's plan, kept in a file named by a digest
 * of everything the plan depends on: the model's bytes (model.json and every
 * shard), the input shapes and the values bound with them, the budget, the
 * device's limits and renderer, the options that change plans, and the
 * version. An entry holds the tiling limit the schedule ended on, the
 * driver's share, the plan (pg_plan_write) and the nodes split within a limit
 * of their own (si_model.node_limit). Loading checks the magic, the
 * key, the length and a checksum of the payload, then pg_plan_read checks the
 * plan against the problem built again with that tiling limit: an entry that
 * is stale, cut short or edited is planned again and replaced, never trusted.
 * Writing goes through a temporary file renamed into place, so a reader never
 * sees half an entry. The cache is best effort: a folder that cannot be made
 * or written costs the saving, not the run. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "session_internal.h"

#ifndef SI_PLAN_SOURCES /* the Makefile gives a checksum of the sources that make plans */
#define SI_PLAN_SOURCES __DATE__ " " __TIME__
#endif

#define MAGIC "SIPLANC2"
/* magic, key, the plan's length, checksum, limit + reserve; then the plan, the
 * count of nodes with limits of their own and as many (node, limit) pairs */
enum { HEADER = 8 + 16 + 8 + 16 + 16 };

int rt_pcache_on(const si_model *m)
{
    return m->opt.plan_cache_dir && m->opt.plan_cache_dir[0] && !m->parent && !m->given;
}

static si_result file_digest(base_digest *d, const char *path, si_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        if (fd >= 0)
            close(fd);
        return base_fail(err, SI_ERR_IO, "%s: %s", path, strerror(errno));
    }
    uint64_t size = (uint64_t)st.st_size;
    base_digest_add(d, &size, sizeof size);
    if (size) {
        void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            close(fd);
            return base_fail(err, SI_ERR_IO, "%s: %s", path, strerror(errno));
        }
        madvise(p, size, MADV_SEQUENTIAL);
        base_digest_add(d, p, size);
        munmap(p, size);
    }
    close(fd);
    return SI_OK;
}

/* model.json and every shard, once per handle */
static si_result model_digest(si_model *m, si_error *err)
{
    if (m->model_digested)
        return SI_OK;
    base_digest d = {0};
    si_result st = file_digest(&d, m->io->json_path, err);
    for (int g = 0; g < m->io->n_groups && st == SI_OK; g++)
        for (int i = 0; i < m->io->groups[g].n_paths && st == SI_OK; i++)
            st = file_digest(&d, m->io->groups[g].paths[i], err);
    if (st == SI_OK) {
        m->model_digest = d;
        m->model_digested = 1;
    }
    return st;
}

static void add_u64(base_digest *d, uint64_t v) { base_digest_add(d, &v, sizeof v); }
static void add_str(base_digest *d, const char *s) { base_digest_add(d, s, strlen(s) + 1); }

/* The entry's key: what the plan of this binding depends on. */
static si_result plan_key(si_model *m, const core_shape *shapes, const core_buf **vp, uint32_t align,
                          base_digest *k, si_error *err)
{
    si_result st = model_digest(m, err);
    if (st != SI_OK)
        return st;
    *k = m->model_digest;
    add_str(k, si_version());
    add_str(k, SI_PLAN_SOURCES);
    add_str(k, m->be->name);
    add_str(k, m->be->renderer(m));
    add_str(k, m->opt.f32_ops ? m->opt.f32_ops : "");
    uint64_t o[] = {m->opt.vram_budget, m->opt.max_buffer_bytes, (uint64_t)m->opt.no_stages,
                    (uint64_t)m->opt.driver_reserve, (uint64_t)m->opt.plan_prefetch, (uint64_t)m->opt.no_fuse,
                    (uint64_t)m->opt.precision, m->max_tensor,
                    m->limits.storage_block_bytes, m->limits.dispatch_elements, m->limits.index_elements,
                    m->limits.loop_iterations, align,
                    m->ctx ? rt_ctx_other_pools(m->ctx, m) : 0}; /* the driver's share counts them */
    base_digest_add(k, o, sizeof o);
    int ni = core_graph_n_inputs(m->g);
    for (int i = 0; i < ni; i++) {
        add_u64(k, (uint64_t)(int64_t)shapes[i].rank);
        for (int r = 0; r < shapes[i].rank && r < SI_MAX_RANK; r++)
            add_u64(k, (uint64_t)shapes[i].d[r]);
        if (vp && vp[i] && vp[i]->data) {
            add_u64(k, 1);
            base_digest_add(k, vp[i]->data, (size_t)core_shape_count(&shapes[i]) * 4);
        } else {
            add_u64(k, 0);
        }
    }
    return SI_OK;
}

static char *entry_path(const si_model *m, const base_digest *k)
{
    size_t n = strlen(m->opt.plan_cache_dir) + 48;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%016llx%016llx.plan", m->opt.plan_cache_dir, (unsigned long long)k->a,
                 (unsigned long long)k->b);
    return p;
}

void rt_pcache_entry_free(rt_pcache_entry *e)
{
    free(e->bytes);
    free(e->node_limit);
    *e = (rt_pcache_entry){0};
}

/* The (node, limit) pairs after the plan (n_nodes: the graph's), into
 * e->node_limit; 0 where they are not whole and in range. */
static int read_node_limits(rt_pcache_entry *e, const unsigned char *b, size_t len, int n_nodes)
{
    uint64_t n, pair[2];
    if (len < 8)
        return 0;
    memcpy(&n, b, 8);
    if (n == 0)
        return len == 8;
    if (n > (uint64_t)n_nodes || len != 8 + n * 16 ||
        !(e->node_limit = calloc((size_t)n_nodes + 1, sizeof *e->node_limit)))
        return 0;
    for (uint64_t i = 0; i < n; i++) {
        memcpy(pair, b + 8 + i * 16, 16);
        if (pair[0] >= (uint64_t)n_nodes || !pair[1])
            return 0;
        e->node_limit[pair[0]] = pair[1];
    }
    return 1;
}

int rt_pcache_find(si_model *m, const core_shape *shapes, const core_buf **vp, uint32_t align,
                   rt_pcache_entry *e)
{
    *e = (rt_pcache_entry){0};
    si_error ignored;
    if (plan_key(m, shapes, vp, align, &e->key, &ignored) != SI_OK)
        return 0;
    e->keyed = 1;
    char *path = entry_path(m, &e->key);
    unsigned char *b = NULL;
    size_t len = 0;
    if (!path || io_read_whole(path, 1ll << 34, "too large for a plan", &b, &len, &ignored) != SI_OK) {
        free(path);
        return 0;
    }
    free(path);
    uint64_t key[2], plen, sum[2], lr[2];
    if (len < HEADER || memcmp(b, MAGIC, 8)) {
        free(b);
        return 0;
    }
    memcpy(key, b + 8, 16);
    memcpy(&plen, b + 24, 8);
    memcpy(sum, b + 32, 16);
    memcpy(lr, b + 48, 16);
    base_digest c = {0};
    if (plen > len - HEADER || key[0] != e->key.a || key[1] != e->key.b) {
        free(b);
        return 0;
    }
    base_digest_add(&c, b + 48, len - 48);
    base_digest_add(&c, b + 24, 8); /* the plan's length */
    if (sum[0] != c.a || sum[1] != c.b) {
        free(b);
        return 0;
    }
    if (!read_node_limits(e, b + HEADER + plen, len - HEADER - plen, m->io->n_nodes)) {
        free(b);
        free(e->node_limit);
        e->node_limit = NULL;
        return 0;
    }
    e->bytes = b;
    e->plan = b + HEADER;
    e->plan_len = plen;
    /* lr[0]: the tiling limit, its top bit set where the program ran unfused */
    e->tile_limit = lr[0] & ~(1ull << 63);
    e->unfused = (int)(lr[0] >> 63);
    e->reserve = lr[1];
    return 1;
}

/* mkdir -p: each folder of the path in turn (those there already are fine) */
static void make_dirs(const char *path)
{
    char *p = strdup(path);
    for (char *q = p ? p + 1 : NULL; q && *q; q++)
        if (*q == '/') {
            *q = 0;
            mkdir(p, 0755);
            *q = '/';
        }
    if (p)
        mkdir(p, 0755);
    free(p);
}

/* path (in dir, made if missing) := the len bytes of b, through a temporary
 * file renamed into place: a reader never sees half an entry. Best effort. */
static void write_entry(const char *dir, const char *path, const void *b, size_t len)
{
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp)
        return;
    make_dirs(dir);
    snprintf(tmp, n, "%s.tmpXXXXXX", path);
    int fd = mkstemp(tmp);
    int ok = fd >= 0;
    for (size_t done = 0; ok && done < len;) {
        ssize_t w = write(fd, (const char *)b + done, len - done);
        if (w <= 0 && errno != EINTR)
            ok = 0;
        else if (w > 0)
            done += (size_t)w;
    }
    if (fd >= 0 && close(fd))
        ok = 0;
    if (fd >= 0 && (!ok || rename(tmp, path)))
        unlink(tmp);
    free(tmp);
}

/* Whether node i's steps were split within a limit other than m->tile_limit
 * (the others read back as 0: tile_limit, which core_program_tile takes alike) */
static int own_limit(const si_model *m, int i)
{
    return m->node_limit[i] && m->node_limit[i] != m->tile_limit;
}

void rt_pcache_store(si_model *m, const rt_pcache_entry *e)
{
    if (!e->keyed || !m->plan)
        return;
    uint8_t *pl = NULL;
    size_t plen = 0;
    si_error ignored;
    if (pg_plan_write(m->plan, &pl, &plen, &ignored) != SI_OK)
        return;
    uint64_t n_own = 0; /* nodes with limits other than tile_limit */
    for (int i = 0; m->node_limit && i < m->io->n_nodes; i++)
        n_own += own_limit(m, i);
    size_t len = HEADER + plen + 8 + (size_t)n_own * 16;
    uint8_t *b = malloc(len);
    char *path = entry_path(m, &e->key);
    if (!b || !path) {
        free(pl);
        free(b);
        free(path);
        return;
    }
    uint64_t key[2] = {e->key.a, e->key.b}, lr[2] = {m->tile_limit | (uint64_t)(m->unfused != 0) << 63, m->reserve}, n = plen;
    memcpy(b, MAGIC, 8);
    memcpy(b + 8, key, 16);
    memcpy(b + 24, &n, 8);
    memcpy(b + 48, lr, 16);
    memcpy(b + HEADER, pl, plen);
    free(pl);
    uint8_t *q = b + HEADER + plen;
    memcpy(q, &n_own, 8);
    q += 8;
    for (int i = 0; n_own && i < m->io->n_nodes; i++)
        if (own_limit(m, i)) {
            uint64_t pair[2] = {(uint64_t)i, m->node_limit[i]};
            memcpy(q, pair, 16);
            q += 16;
        }
    base_digest c = {0};
    base_digest_add(&c, b + 48, len - 48);
    base_digest_add(&c, b + 24, 8); /* the plan's length */
    uint64_t sum[2] = {c.a, c.b};
    memcpy(b + 32, sum, 16);
    write_entry(m->opt.plan_cache_dir, path, b, len);
    free(b);
    free(path);
}

/* Compiled programs (glk_set_binaries), in the plan cache's folder as
 * KEY.prog: magic, key, the binary's format, its length, a checksum of format
 * and binary, then the driver's binary. An entry cut short, edited or of
 * another key is not loaded: the program is compiled and the entry replaced
 * (a binary the driver refuses, likewise). */
#define PMAGIC "SIPROG01"
enum { PHEADER = 8 + 16 + 8 + 8 + 16 }; /* magic, key, format, length, checksum */

static char *prog_path(const char *dir, const uint64_t key[2])
{
    size_t n = strlen(dir) + 48;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%016llx%016llx.prog", dir, (unsigned long long)key[0],
                 (unsigned long long)key[1]);
    return p;
}

static int prog_load(void *user, const uint64_t key[2], uint32_t *format, void **bytes, size_t *len)
{
    char *path = prog_path(user, key);
    unsigned char *b = NULL;
    size_t n = 0;
    si_error ignored;
    if (!path || io_read_whole(path, 1ll << 30, "too large for a program", &b, &n, &ignored) != SI_OK) {
        free(path);
        return 0;
    }
    free(path);
    uint64_t k[2], f, plen, sum[2];
    int ok = n >= PHEADER && !memcmp(b, PMAGIC, 8);
    if (ok) {
        memcpy(k, b + 8, 16);
        memcpy(&f, b + 24, 8);
        memcpy(&plen, b + 32, 8);
        memcpy(sum, b + 40, 16);
        base_digest c = {0};
        base_digest_add(&c, b + 24, 8);
        base_digest_add(&c, b + PHEADER, n - PHEADER);
        ok = k[0] == key[0] && k[1] == key[1] && plen == n - PHEADER && plen > 0 &&
             sum[0] == c.a && sum[1] == c.b && f <= UINT32_MAX;
    }
    if (!ok) {
        free(b);
        return 0;
    }
    memmove(b, b + PHEADER, n - PHEADER);
    *format = (uint32_t)f;
    *bytes = b;
    *len = n - PHEADER;
    return 1;
}

static void prog_store(void *user, const uint64_t key[2], uint32_t format, const void *bytes, size_t len)
{
    char *path = prog_path(user, key);
    uint8_t *b = malloc(PHEADER + len);
    if (path && b) {
        uint64_t f = format, n = len;
        memcpy(b, PMAGIC, 8);
        memcpy(b + 8, key, 16);
        memcpy(b + 24, &f, 8);
        memcpy(b + 32, &n, 8);
        memcpy(b + PHEADER, bytes, len);
        base_digest c = {0};
        base_digest_add(&c, b + 24, 8);
        base_digest_add(&c, b + PHEADER, len);
        uint64_t sum[2] = {c.a, c.b};
        memcpy(b + 40, sum, 16);
        write_entry(user, path, b, PHEADER + len);
    }
    free(path);
    free(b);
}

void rt_programs_bind(glk_ctx *g, const char *dir)
{
    if (g && dir && dir[0])
        glk_set_binaries(g, &(glk_binaries){prog_load, prog_store, (void *)dir});
}
