/* Shared by io/model_json.c (model.json) and io/model_library.c (its
 * function library). Internal to io/. */
#ifndef SI_IO_MODEL_JSON_INTERNAL_H
#define SI_IO_MODEL_JSON_INTERNAL_H

#include <cjson/cJSON.h>
#include "io.h"

typedef struct {
    const char *file;
    const char *node;
    si_error *err;
} io_ctx;

char *io_strdup(const char *s);
si_result io_nomem(const io_ctx *c);
/* The converter writes camelCase; protobuf's own printers may write snake_case. */
const cJSON *io_get(const cJSON *o, const char *camel, const char *snake);
/* One node_def (node #idx) into n. */
si_result io_json_node(io_ctx *c, int idx, const cJSON *v, io_node *n);
/* modelTopology.library.function (may be NULL) into m->functions; after the
 * weights manifest (the bodies borrow m's weight table). */
si_result io_json_library(io_ctx *c, io_model *m, const cJSON *fns);

/* A string weight w at offset off of group g: its stored size into
 * w->nbytes, walking its length prefixes as TensorFlow.js's decodeWeights
 * does; a prefix past the shards is refused (io/string_weights.c). */
si_result io_string_weight_bytes(const io_ctx *c, const io_group *g, io_weight *w, uint64_t off);

#endif
