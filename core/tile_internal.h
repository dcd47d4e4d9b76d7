/* Tiling's insides, shared by core/tile.c (rows, channels, the pass) and
 * core/tile_copy.c (copies between banded tensors, concat). Nothing outside
 * core/tile*.c includes this. */
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
/* First axis with more than one element, -1 if none. */
int tile_lead_axis(int rank, const int32_t *dim);
int tile_strides_ok(int rank, const int32_t *st);

/* core/tile_channels.c: s along output channels where its weights are over
 * the limit (or over one buffer); 0 done, -1 not. */
int tile_channels(tiler *T, const ck_step *s, si_error *err);

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
