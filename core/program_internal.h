/* The program builder's internals, shared by program.c (building, host
 * folding, one node on the host) and lower_ctx.c (the lower_ctx API a
 * lowering sees). Internal to core/. */
#ifndef SI_CORE_PROGRAM_INTERNAL_H
#define SI_CORE_PROGRAM_INTERNAL_H

#include "graph.h"
#include "interp.h"

typedef struct {
    const core_graph *g;
    const core_valmap *given; /* values known already (a later stage); may be NULL */
    core_program *p;
    core_weight_loader load;
    void *load_user;
    /* per tensor (by id), grown with the program */
    uint8_t *is_const;   /* value independent of the inputs (by storage root) */
    uint8_t *written;    /* a step writes it (by storage root) */
    core_buf *vals;      /* host views handed out by lc_value */
    int cap;
    /* per node */
    int **node_out;      /* tensor id of each output, -1 unset */
    int to_host;         /* set by a lowering that leaves its node to the host
                          * interpreter (a Switch whose predicate is known only
                          * when the model runs): the node and all that reads
                          * it become dynamic */
    /* per step */
    uint8_t *step_const;
    int step_cap;
    /* Tables replaced by growth while a node is lowered: freed when it is done
     * (pg_release_retired), so what lc_tensor and lc_value handed out stays valid
     * for the whole lowering however many tensors it adds. */
    void **retired;
    int n_retired, cap_retired;
} builder;

struct lower_ctx {
    builder *b;
    int node;
    const io_node *n;
    int n_in;
    int *in;
};

/* A new tensor of the program (-1: out of memory). */
int pg_add_tensor(builder *b, const char *name, si_dtype dt, const core_shape *shape,
                  pt_kind kind);
/* Appends a step (-1: out of memory). */
int pg_add_step(builder *b, const ck_step *s);
/* Frees the tables that growth replaced while a node was lowered (builder.retired). */
void pg_release_retired(builder *b);
/* Host value of constant tensor t, folding the steps that make it if needed;
 * the data belongs to the program. */
si_result pg_host_input(builder *b, int t, core_buf *out, si_error *err);

#endif
