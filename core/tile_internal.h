/* Tiling's insides, shared by core/tile.c (bands, rows, the pass),
 * core/tile_rules.c (each kind's rule), core/tile_channels.c (output
 * channels) and core/tile_copy.c (copies between banded tensors, concat).
 * Nothing outside core/tile*.c includes this. */
#ifndef SI_TILE_INTERNAL_H
#define SI_TILE_INTERNAL_H

#include "core.h"

#define TILE_ALIGN 256 /* the planner's placement granule */

typedef struct {
    int64_t e0, e1; /* elements of the storage root */
    int t;          /* tensor holding them */
    int written;    /* bands made ahead of their writers (tile_dest_bands): some step wrote it */
} band;

typedef struct {
    int n, cap;
    band *v;
    int whole;      /* the root itself holds the value too */
    int decided;    /* tile_dest_bands looked at this root already */
} bandset;

typedef struct {
    core_program *p;
    /* limit: most bytes a part's working set should take (UINT64_MAX: no
     * budget); band_max: bytes a band aims at; max_tensor: the device's limit
     * for one buffer a step binds, which no part may pass. */
    uint64_t limit, band_max, max_tensor;
    core_weight_loader load;
    void *load_user;
    ck_step *steps;
    int n_steps, cap_steps;
    bandset *bs;    /* per tensor id; only storage roots used */
    int cap_bs;
    int *writers;   /* per storage root: steps of the original program writing it */
    const ck_step *orig; /* the original program's steps */
    int n_orig;
    int node;       /* node of the step being rewritten */
    int oom;
} tiler;

uint64_t tile_rnd(uint64_t bytes);
int64_t tile_count(const core_program *p, int t);
/* A new activation like tensor `like`, count elements, named after it. */
int tile_new_tensor(tiler *T, int like, int64_t count, const char *fmt, int64_t a, int64_t b);
void tile_emit(tiler *T, const ck_step *s);
int tile_banded(const tiler *T, int root);
int tile_add_band(tiler *T, int root, int64_t e0, int64_t e1, int t);
/* The root holds its value: copies from its bands. */
void tile_materialize(tiler *T, int root);
/* A tensor holding elements [a, b) of t's storage: a band, t itself, or a new
 * window filled by copies. */
int tile_get_range(tiler *T, int t, int64_t a, int64_t b);
uint64_t tile_step_ws(const core_program *p, const ck_step *s);
/* core/tile_rules.c. First axis with more than one element, -1 if none. */
int tile_lead_axis(int rank, const int32_t *dim);
int tile_strides_ok(int rank, const int32_t *st);

/* How a step splits along its output rows: rows of rows_elems elements each. */
typedef struct {
    int64_t rows, row_elems; /* output rows, elements in one */
    int main_in;             /* input whose bands the parts may follow (-1 none) */
    int64_t in_row;          /* elements of main_in per output row, when part r reads its row r */
    int can_whole;           /* input 0 may be bound whole instead of a window */
    int need_whole;          /* ... and must be */
} rowplan;

/* A kind's tiling rule (core/tile_rules.c; the tiling column of CK_KINDS
 * names it). Every member may be NULL: that way of splitting does not apply. */
typedef struct {
    /* The row plan of s (rp zeroed, main_in -1, on entry); -1: s does not
     * split along rows. */
    int (*rows)(const ck_step *s, rowplan *rp);
    /* The part computing output rows [r0, r1): ts (a copy of s on entry) gets
     * its parameters, a[i], b[i] (-1 on entry: input i bound whole) input i's
     * window of elements. whole0: bind input 0 whole. */
    void (*part)(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts, int64_t *a,
                 int64_t *b);
    /* Weights (input 1) as [rows_w, cols], output as [out_rows, cols]; -1: s
     * does not split along output channels. set_channels: a part's cols. */
    int (*channels)(const ck_step *s, int64_t *rows_w, int64_t *cols, int64_t *out_rows);
    void (*set_channels)(ck_step *ts, int32_t n);
    /* A split of its own, tried before rows: 0 done, -1 not. */
    int (*split)(tiler *T, const ck_step *s);
    /* Called first, for every step of the kind. */
    void (*prepare)(tiler *T, const ck_step *s);
} tile_rule;

const tile_rule *tile_rule_of(ck_kind k);

/* core/tile_channels.c: s along output channels (rule r) where its weights are
 * over the limit (or over one buffer); 0 done, -1 not. */
int tile_channels(tiler *T, const ck_step *s, const tile_rule *r, si_error *err);
/* The same for each part of a step split along rows (core/tile.c) whose
 * weights are past what the rows leave: host slices of the weights (and
 * per-channel bias, alpha, scale) of at most room bytes, made once for every
 * part (NULL: none, the weights not on the host, or out of memory), and the
 * channel parts of one row part ts, copied into its output. */
typedef struct tile_chslices tile_chslices;
tile_chslices *tile_channel_slices(tiler *T, const ck_step *s, const tile_rule *r, uint64_t room,
                                   int64_t max_slices, si_error *err);
/* Where the weights get slices thinner than half the limit (beside rows, or
 * beside an input and output over half the limit), at most this many slices
 * and TILE_MAX_PARTS parts of a step: a limit so small that it takes more is
 * left to the parts over it (the schedule's lowest limits would otherwise
 * make millions of steps). */
#define TILE_MAX_SLICES 64
#define TILE_MAX_PARTS 2048
void tile_emit_channels(tiler *T, const ck_step *ts, const tile_rule *r, const tile_chslices *cs);
void tile_chslices_free(tile_chslices *cs);

/* core/tile_copy.c. Both return 0 when done, -1 where the step is not theirs
 * to split. tile_copy: a copy whose source is banded or whose destination is
 * (or, being too big for one buffer, becomes) banded. */
int tile_copy(tiler *T, const ck_step *s);
/* Decides, at the first writer of a root too big for one band, whether the
 * root lives as bands written ahead of time by all its writers (concat, pack:
 * every writer a copy that lands each of its rows inside one band); makes the
 * bands where it does. Returns 1 if the root is banded so. */
int tile_dest_bands(tiler *T, int root);

#endif
