/* Which ops streaminfer runs, and the check that refuses a model using any
 * other one when it is opened. A model whose unknown op sits after a loop or
 * an NMS would otherwise compute its first stage (minutes on llvmpipe) before
 * failing at that op; the check makes the refusal cost nothing. It also
 * refuses a model whose output would be complex64 (core.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph.h"
#include "interp.h"

/* The family tables core_find_op searches (core/program.c), by file. A table
 * added there and not here shows as family "?" in tests/OPS.md, and
 * test_opcheck fails on it. */
static const struct {
    const char *family;
    const core_op_def *ops;
} families[] = {
    {"elementwise", core_ops_elementwise}, {"conv", core_ops_conv},
    {"pool_reduce", core_ops_pool_reduce}, {"shape", core_ops_shape},
    {"select", core_ops_select},         {"math", core_ops_math},
    {"creation", core_ops_creation},     {"image", core_ops_image},
    {"random", core_ops_random},
    {"conv3d", core_ops_conv3d},
    {"scatter", core_ops_scatter},
    {"transform", core_ops_transform},
    {"misc", core_ops_misc},
};
#define N_FAMILIES (sizeof families / sizeof families[0])

/* Handled by the program builder itself (program.c lower_node), not a table. */
static const char *const graph_ops[] = {"Const", "Placeholder", "PlaceholderWithDefault", NULL};

static int in_list(const char *op, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(op, list[i]))
            return 1;
    return 0;
}

const char *core_op_family(const char *op)
{
    if (!op)
        return NULL;
    if (in_list(op, graph_ops))
        return "graph";
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const core_op_def *d = families[f].ops; d->op; d++)
            if (!strcmp(d->op, op))
                return families[f].family;
    if (core_interp_runs_op(op))
        return "interpreter";
    return core_find_op(op) ? "?" : NULL;
}

const char *core_op_at(int i)
{
    if (i < 0)
        return NULL;
    for (int k = 0; graph_ops[k]; k++, i--)
        if (i == 0)
            return graph_ops[k];
    for (size_t f = 0; f < N_FAMILIES; f++)
        for (const core_op_def *d = families[f].ops; d->op; d++, i--)
            if (i == 0)
                return d->op;
    return core_interp_op(i);
}

const char *core_op_excluded(const char *op)
{
    /* Decision forests run a serialized Yggdrasil model from a resource
     * path: not a tensor program at all. */
    if (op && !strncmp(op, "SimpleML", 8))
        return "TF Decision Forests ops are excluded: streaminfer does not run them";
    return NULL;
}

/* Nodes the outputs need, over data and control edges (tfjs's executor waits
 * for control inputs too, and the interpreter follows it). */
static si_result mark_needed(const core_graph *g, uint8_t *need, si_error *err)
{
    int *stack = malloc(((size_t)g->n_nodes + 1) * sizeof *stack);
    if (!stack)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    int sp = 0;
    for (int i = 0; i < g->n_outputs; i++) {
        int k = g->outputs[i].node;
        if (!need[k]) {
            need[k] = 1;
            stack[sp++] = k;
        }
    }
    while (sp > 0) {
        int k = stack[--sp];
        for (int i = 0; i < g->m->nodes[k].n_inputs; i++) {
            int j = g->edges[k][i].node;
            if (!need[j]) {
                need[j] = 1;
                stack[sp++] = j;
            }
        }
    }
    free(stack);
    return SI_OK;
}

typedef struct {
    const char *op;
    int first, count;
} bad_op;

/* Appends "'Op' (node 'first', N nodes)" clauses for the ops of want_excluded
 * kind; stops early (counting the rest) when the message would overflow. */
static void describe(char *msg, size_t cap, const core_graph *g, const bad_op *bad, int n_bad,
                     int want_excluded)
{
    size_t len = strlen(msg);
    int shown = 0, total = 0;
    for (int i = 0; i < n_bad; i++) {
        if ((core_op_excluded(bad[i].op) != NULL) != want_excluded)
            continue;
        total++;
        char one[300];
        const char *node = g->m->nodes[bad[i].first].name;
        if (bad[i].count > 1)
            snprintf(one, sizeof one, "%s'%s' (node '%s', %d nodes)", shown ? ", " : "",
                     bad[i].op, node, bad[i].count);
        else
            snprintf(one, sizeof one, "%s'%s' (node '%s')", shown ? ", " : "", bad[i].op, node);
        if (len + strlen(one) + 40 >= cap)
            continue; /* room stays for the "and N more" tail */
        memcpy(msg + len, one, strlen(one) + 1);
        len += strlen(one);
        shown++;
    }
    if (shown < total)
        snprintf(msg + len, cap - len, " and %d more", total - shown);
}

/* complex64 (core.h) exists only inside the host interpreter: an output that
 * would be one is refused at open. Makers give one whatever their input;
 * readers turn one into a float; the pass-through ops give what input 0 is;
 * any other node is complex when its dtype attr says so. */
static const char *const complex_makers[] = {"Complex", "FFT", "IFFT", "RFFT", NULL};
static const char *const complex_readers[] = {"Real", "Imag", "ComplexAbs", "IRFFT", NULL};
static const char *const pass_ops[] = {"Identity", "Snapshot", "StopGradient", "Enter",
                                       "Exit", "Switch", "NextIteration", "Reshape", "Squeeze",
                                       "ExpandDims", NULL};
static const char *const any_ops[] = {"Merge", "Add",    "AddV2", "Sub", "Mul",
                                      "Concat", "ConcatV2", "Pack", NULL};

static int complex_attr(const io_node *n, const char *name)
{
    const io_attr *a = io_node_attr(n, name);
    return a && a->kind == IO_ATTR_TYPE && a->type == IO_DT_OTHER && a->type_name &&
           !strncmp(a->type_name, "DT_COMPLEX", 10);
}

static int makes_complex(const core_graph *g, int k, int depth)
{
    const io_node *n = &g->m->nodes[k];
    if (in_list(n->op, complex_makers))
        return 1;
    if (in_list(n->op, complex_readers) || depth > 64) /* deeper: a loop's back edge */
        return 0;
    if (complex_attr(n, "T") || complex_attr(n, "dtype") || complex_attr(n, "DstT"))
        return 1;
    /* Merge, and tfjs's binary ops, are complex when any input is */
    int pass = in_list(n->op, pass_ops), any = in_list(n->op, any_ops);
    for (int i = 0; (pass || any) && i < n->n_inputs; i++) {
        if (g->edges[k][i].ctrl)
            continue;
        if (makes_complex(g, g->edges[k][i].node, depth + 1))
            return 1;
        if (pass)
            break;
    }
    return 0;
}

static si_result check_complex_outputs(const core_graph *g, si_error *err)
{
    for (int i = 0; i < g->n_outputs; i++) {
        int k = g->outputs[i].node;
        if (makes_complex(g, k, 0))
            return base_fail(err, SI_ERR_UNSUPPORTED,
                             "%s: output '%s' (node '%s', %s) would be complex64: streaminfer "
                             "keeps complex values inside its host interpreter; give the model "
                             "Real, Imag or ComplexAbs of it as its output",
                             g->m->json_path, core_graph_output_name(g, i), g->m->nodes[k].name,
                             g->m->nodes[k].op);
    }
    return SI_OK;
}

static si_result check_ops(const core_graph *g, si_error *err)
{
    uint8_t *need = calloc((size_t)g->n_nodes + 1, 1);
    bad_op *bad = calloc((size_t)g->n_nodes + 1, sizeof *bad);
    si_result st = need && bad ? mark_needed(g, need, err)
                               : base_fail(err, SI_ERR_NOMEM, "out of memory");
    int n_bad = 0, n_excl = 0;
    for (int k = 0; st == SI_OK && k < g->n_nodes; k++) {
        const char *op = g->m->nodes[k].op;
        if (!need[k] || (core_op_family(op) && !core_op_excluded(op)))
            continue;
        int i = 0;
        while (i < n_bad && strcmp(bad[i].op, op))
            i++;
        if (i == n_bad) {
            bad[n_bad++] = (bad_op){op, k, 0};
            n_excl += core_op_excluded(op) != NULL;
        }
        bad[i].count++;
    }
    if (st == SI_OK && n_bad > 0) {
        char msg[sizeof err->message];
        int n_unknown = n_bad - n_excl;
        snprintf(msg, sizeof msg, "%s: ", g->m->json_path);
        if (n_unknown) {
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%d unknown op%s: ", n_unknown,
                     n_unknown > 1 ? "s" : "");
            describe(msg, sizeof msg, g, bad, n_bad, 0);
        }
        if (n_excl) {
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s", n_unknown ? "; " : "");
            describe(msg, sizeof msg, g, bad, n_bad, 1);
            const char *why = NULL;
            for (int i = 0; i < n_bad && !why; i++)
                why = core_op_excluded(bad[i].op);
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), ": %s", why);
        }
        st = base_fail(err, SI_ERR_UNSUPPORTED, "%s", msg);
    }
    /* strings stay in the host interpreter: no output of one, and the string
     * ops' attrs are checked now, not when the run reaches them */
    for (int i = 0; st == SI_OK && i < g->n_outputs; i++)
        if (core_edge_is_string(g, g->outputs[i].node, g->outputs[i].idx))
            st = base_fail(err, SI_ERR_UNSUPPORTED,
                           "%s: output %d (node '%s') is a string tensor; model outputs must be numeric here",
                           g->m->json_path, i, g->m->nodes[g->outputs[i].node].name);
    for (int k = 0; st == SI_OK && k < g->n_nodes; k++)
        if (need[k])
            st = core_string_check_node(g, k, err);
    free(need);
    free(bad);
    /* ops inside library functions (the message names the function) */
    for (int f = 0; st == SI_OK && g->owns_fns && f < g->n_fns; f++)
        st = check_ops(g->fns[f], err);
    return st;
}

si_result core_graph_check_ops(const core_graph *g, si_error *err)
{
    si_result st = check_ops(g, err);
    return st != SI_OK ? st : check_complex_outputs(g, err);
}
