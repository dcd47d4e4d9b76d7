/* Internal to core: the graph's layout. */
#ifndef SI_CORE_GRAPH_H
#define SI_CORE_GRAPH_H

#include "ops.h"

typedef struct {
    int node, idx, ctrl;
} core_edge;

struct core_graph {
    const io_model *m;
    int n_nodes;
    int *hash;
    size_t hash_cap;
    core_edge **edges;  /* per node, its n_inputs parsed inputs */
    int *n_uses;        /* consumers, control included (tfjs: children) */
    int *n_outs;        /* outputs referenced (max index + 1) */
    int *weight_of;     /* weight index of a Const node, -1 */
    int n_inputs;
    int *inputs;        /* node indices */
    core_io_info *input_info;
    int n_outputs;
    core_edge *outputs;
    /* The library's function bodies (io_model.functions order), built with the
     * root graph and shared by every body graph; owned by the root. */
    int n_fns;
    core_graph **fns;
    int owns_fns;
};

int core_graph_find(const core_graph *g, const char *name, size_t len);

#endif
