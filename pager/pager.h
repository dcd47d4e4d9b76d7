/* pager — turns (program, budget) into a plan: a flat list of actions with the
 * arena offset of every buffer. Pure data, computed before any GL call. Knows
 * sizes and steps, not shaders. */
#ifndef SI_PAGER_H
#define SI_PAGER_H

#include <stdint.h>
#include "streaminfer.h"

typedef enum { PG_WEIGHT, PG_CONST, PG_INPUT, PG_ACT } pg_kind;

typedef struct {
    uint64_t bytes;
    pg_kind kind;
    int is_output;
    int tensor;        /* the program tensor (storage root) it holds */
} pg_buffer;

/* Steps in execution order and the buffers each touches; the last one listed
 * for a step is the buffer it writes. */
typedef struct {
    int n_buffers;
    pg_buffer *buffers;
    int n_steps;
    int *step_start;   /* n_steps + 1 offsets into step_bufs */
    int *step_bufs;
} pg_problem;

typedef enum {
    PA_ALLOC,     /* place buf at offset */
    PA_UPLOAD,    /* fill buf from the host (weight, constant, input) */
    PA_RUN,       /* run step */
    PA_DOWNLOAD,  /* copy an output to the host */
    PA_FREE       /* release buf's range */
} pa_kind;

typedef struct {
    pa_kind kind;
    int buf;
    int step;
    uint64_t offset;
} pg_action;

typedef struct {
    uint64_t budget;        /* 0 = none */
    uint64_t arena_bytes;   /* the arena the plan needs: the GPU bytes we own */
    uint64_t peak_bytes;    /* most bytes allocated at once */
    uint64_t lower_bound;   /* largest working set of one step */
    uint64_t resident_bytes;/* weights and constants kept between runs */
    uint32_t align;
    /* Done once per program (weights and constants made resident). */
    int n_prologue;
    pg_action *prologue;
    /* Done every run. */
    int n_actions;
    pg_action *actions;
    uint64_t *offset;       /* per buffer: where it lives (valid while allocated) */
} pg_plan;

si_status pg_plan_build(const pg_problem *pb, uint64_t budget, uint32_t align, pg_plan **out,
                        si_error *err);
void pg_plan_free(pg_plan *p);

/* Offset allocator over one address range; first fit over an ordered free list
 * with coalescing, so fragmentation shows in the arena size. */
typedef struct pg_arena pg_arena;
pg_arena *pg_arena_new(uint64_t capacity); /* 0 = unbounded */
void pg_arena_free_all(pg_arena *a);
int pg_arena_alloc(pg_arena *a, uint64_t bytes, uint64_t *offset); /* 0 ok, -1 no room */
void pg_arena_release(pg_arena *a, uint64_t offset, uint64_t bytes);
uint64_t pg_arena_high(const pg_arena *a);   /* highest end ever used */
uint64_t pg_arena_in_use(const pg_arena *a);

#endif
