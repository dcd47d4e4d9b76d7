/* pager — turns (program, budget) into a plan: a flat list of actions with the
 * arena offset of every buffer. Pure data, computed before any GL call. Knows
 * sizes and steps, not shaders. */
#ifndef SI_PAGER_H
#define SI_PAGER_H

#include <stdint.h>
#include "streaminfer.h"

typedef enum {
    PG_WEIGHT, /* can be dropped and uploaded again from the model's bytes */
    PG_CONST,  /* folded on the host: dropped and uploaded again from there */
    PG_INPUT,  /* the caller's data: dropped and uploaded again */
    PG_ACT     /* made by a step: must be spilled to the host to be evicted */
} pg_kind;

typedef struct {
    uint64_t bytes;
    pg_kind kind;
    int is_output;
    int tensor;        /* the program tensor (storage root) it holds */
    /* a band of an output cut into bands (band_total 0: none): its homes lie
     * side by side in the pool, the band at band_at of band_total bytes from
     * where band_first's group starts, so the whole is handed back in place */
    uint64_t band_total, band_at;
    int band_first;
    /* a weight whose bytes as read from the model's shards are more than
     * bytes (stored as halves, read as float32): its staging slot holds those */
    uint64_t src_bytes;
    /* a weight stored quantized: the bytes its home in the pool (and its
     * staging slot) holds, fewer than bytes (its load dequantizes them); 0: bytes */
    uint64_t home_bytes;
} pg_buffer;

/* The bytes buffer b's home in the host pool takes. */
static inline uint64_t pg_home_bytes(const pg_buffer *b) { return b->home_bytes ? b->home_bytes : b->bytes; }

/* Steps in execution order and the buffers each touches; the last one listed
 * for a step is the buffer it writes. */
typedef struct {
    int n_buffers;
    pg_buffer *buffers;
    int n_steps;
    int *step_start;   /* n_steps + 1 offsets into step_bufs */
    int *step_bufs;
    /* Optional (NULL: unknown): each step's estimated GPU time, in us, and a
     * load's, load_us + bytes / load_bytes_us (its stored bytes). With
     * prefetch of more than one step, a step takes the loads of the steps
     * ahead while their estimated time fits in its own (the copies run
     * beside its dispatch). */
    const double *step_us;
    double load_us, load_bytes_us;
} pg_problem;

typedef enum {
    PA_ALLOC,     /* buf now owns [offset, offset+size) */
    PA_UPLOAD,    /* fill buf from the host (weight, constant, input) */
    PA_RELOAD,    /* fill buf from its spilled copy */
    PA_RUN,       /* run step */
    PA_SPILL,     /* copy buf to the host before its range is reused */
    PA_DOWNLOAD,  /* copy an output to the host at the end of the run */
    PA_FREE       /* buf gives up its range */
} pa_kind;

typedef struct {
    pa_kind kind;
    int buf;
    int step;        /* the step it precedes / runs (n_steps for the end of a run) */
    uint64_t offset;
} pg_action;

typedef struct {
    uint64_t budget;          /* 0 = none */
    uint64_t arena_bytes;     /* the GPU bytes the plan owns: its arena */
    uint64_t lower_bound;     /* largest working set of one step */
    int lower_bound_step;
    uint64_t resident_bytes;  /* kept on the GPU between runs */
    uint64_t capacity;        /* the byte limit the residency simulation used */
    uint32_t align;
    /* per run, as planned */
    uint64_t bytes_uploaded, bytes_spilled, bytes_reloaded, bytes_downloaded;
    uint64_t evictions, segments;
    /* done once: makes the resident set resident */
    int n_prologue;
    pg_action *prologue;
    /* done every run */
    int n_actions;
    pg_action *actions;
    /* how the search went (not stored by pg_plan_write): rounds of residency
     * and placement it made, rounds counted without being run (they would
     * have repeated the one before), placements taken from the round before */
    int rounds, rounds_skipped, placements_reused;
} pg_plan;

/* Tools for measuring and debugging the planner; 0 is the default of each.
 * The pager reads no environment: the runtime passes these in. */
typedef struct {
    int prefetch; /* n > 0: load the buffers of the next n steps early where they fit */
    int debug;    /* 1: print each placement order's arena and the final stays on stderr */
    int no_shortcuts; /* 1: every round of the search simulated and placed (tests: the same plan) */
    int no_repeats;   /* 1: a stall that moves is lowered where it is only (tests: the rounds saved) */
    /* n_steps long, or NULL: the capacity per step the search starts from
     * where not 0 (else the budget; never above it), and where a plan is made
     * by placing offline, the capacities it ended with. A plan again at a
     * budget a little less (the driver's share of the last plan's pool)
     * starts where that search ended, not at the budget. */
    uint64_t *caps;
} pg_options;

/* align: a power of two; every buffer is placed on it. opt may be NULL (the
 * defaults); pg_plan_build is pg_plan_build_with(..., NULL, ...). */
si_result pg_plan_build(const pg_problem *pb, uint64_t budget, uint32_t align, pg_plan **out,
                        si_error *err);
si_result pg_plan_build_with(const pg_problem *pb, uint64_t budget, uint32_t align,
                             const pg_options *opt, pg_plan **out, si_error *err);
void pg_plan_free(pg_plan *p);
uint64_t pg_size(const pg_plan *p, uint64_t bytes); /* bytes a buffer takes in the arena */
/* The largest working set of one step of pb, each buffer rounded up to align:
 * the least arena any plan has (pg_plan.lower_bound; 0 when out of memory). */
uint64_t pg_lower_bound(const pg_problem *pb, uint32_t align);

/* Checks a plan against its problem: every buffer a step touches is allocated
 * and filled when the step runs, no two live ranges overlap, nothing exceeds
 * arena_bytes, and no upload fills a buffer that is already filled. Returns 0,
 * or -1 with the first violation in msg. */
int pg_plan_check(const pg_problem *pb, const pg_plan *p, char *msg, size_t n);

/* The plan as bytes (*out: malloc'd, *len bytes), and back: pg_plan_read
 * takes the bytes as untrusted and refuses (SI_ERR_FORMAT, saying why) any
 * that are not a valid plan of pb: cut short, a count, index or offset out
 * of range, or failing pg_plan_check (pager/plan_io.c). */
si_result pg_plan_write(const pg_plan *p, uint8_t **out, size_t *len, si_error *err);
si_result pg_plan_read(const pg_problem *pb, const uint8_t *b, size_t len, pg_plan **out, si_error *err);

/* Homes in the host pool for every buffer the plan moves between host and GPU
 * (pager/homes.c): home_off[b] per buffer (UINT64_MAX: none); returns the
 * pool's size, or UINT64_MAX when out of memory. Depends only on the plan. */
uint64_t pg_home_layout(const pg_problem *pb, const pg_plan *pl, uint64_t *home_off);
/* What pg_home_layout returns at least for any plan of pb: the kept homes of
 * the weights, constants, inputs and outputs its steps use. */
uint64_t pg_home_floor(const pg_problem *pb);
/* The most bytes of activations alive at one step (outputs aside): a plan
 * whose arena is at most A has a pool (pg_home_layout) of at least
 * pg_home_floor plus what of this is over A (those that cannot all be on the
 * GPU then are in their homes). */
uint64_t pg_live_peak(const pg_problem *pb);
/* The same for the buffers where only[b] is set (NULL: all); the rest get none. */
uint64_t pg_home_layout_of(const pg_problem *pb, const pg_plan *pl, const uint8_t *only,
                           uint64_t *home_off);

/* The host side of a plan under a host-memory budget (pager/hosttier.c): the
 * three tiers GPU arena <- host pool <- file. Each buffer the plan moves
 * between host and GPU has its host side in one tier: */
enum {
    PG_TIER_NONE = 0, /* never moved */
    PG_TIER_POOL,     /* a home in the host pool (home_off) */
    PG_TIER_SOURCE,   /* none kept: a weight read again from the model's shards, a
                       * constant or an input uploaded from where the host holds it,
                       * each time the plan loads it */
    PG_TIER_FILE      /* an activation spilled or downloaded (an output): written to
                       * the spill file (file_off) and read back from it */
};
/* Spill-file transfers go through the spill slot in parts of at most this. */
#define PG_SPILL_CHUNK (1u << 20)

typedef struct {
    uint64_t budget;      /* 0: none */
    uint64_t homes_bytes; /* the pool's homes (pg_home_layout_of the pool tier) */
    /* transfers of buffers with no home go through staging slots in host
     * memory: two for weights read from the shards (one read ahead while the
     * other is uploaded), one for the spill file */
    uint64_t weight_slot_bytes, spill_slot_bytes;
    uint64_t pool_bytes;  /* homes_bytes + 2 weight slots + the spill slot: <= budget */
    uint64_t file_bytes;  /* the spill file's size */
    uint64_t min_budget;  /* the smallest host budget this planner accepts for the plan */
    /* per run, as planned */
    uint64_t shard_bytes_read, file_bytes_written, file_bytes_read;
} pg_host_plan;

/* Tiers within budget (0: every moved buffer in the pool, as pg_home_layout).
 * Constants and inputs leave first (the host holds them anyway), then
 * weights and spilled activations, least costly per byte first (a weight costs
 * a shard read per load, an activation a write per spill and a read per
 * reload), farthest first use first among equals, and outputs last (the
 * caller is handed them from their homes). home_off, file_off: per buffer (UINT64_MAX: none);
 * tier: per buffer. SI_ERR_BUDGET naming hp->min_budget when it does not fit,
 * SI_ERR_NOMEM. */
si_result pg_host_tiers(const pg_problem *pb, const pg_plan *pl, uint64_t budget, uint64_t *home_off,
                        uint64_t *file_off, uint8_t *tier, pg_host_plan *hp, si_error *err);

#endif
