/* Einsum's lowering (core/op_math.c): the equations tfjs-core refuses are
 * refused, and so are those its compute path gets wrong, each with a message
 * naming the equation; an attention block lowers to transposes and one
 * batched matmul (no operand broadcast to every label). Values against
 * TensorFlow.js are the per-op cases' (tests/ops/cases_einsum.js). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>
#include "core.h"
#include "tiny_model.h"

static void b64(const char *s, char *out)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)(unsigned char)s[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)(unsigned char)s[i + 1] << 8;
        if (i + 2 < n)
            v |= (uint32_t)(unsigned char)s[i + 2];
        out[o++] = t[v >> 18 & 63];
        out[o++] = t[v >> 12 & 63];
        out[o++] = i + 1 < n ? t[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? t[v & 63] : '=';
    }
    out[o] = 0;
}

/* x0 [, x1, x2] float32 placeholders of the given shapes into Einsum(eq):
 * the program, or NULL with err filled. */
static core_program *lower(const char *eq, int n, const core_shape *shapes, si_error *err)
{
    jb j = {0};
    char ins[64] = "", attr[256], e64[128];
    for (int i = 0; i < n; i++) {
        int d[SI_MAX_RANK];
        char name[8];
        for (int k = 0; k < shapes[i].rank; k++)
            d[k] = (int)shapes[i].d[k];
        snprintf(name, sizeof name, "x%d", i);
        placeholder_f32(&j, name, d, shapes[i].rank);
        snprintf(ins + strlen(ins), sizeof ins - strlen(ins), "%s\"x%d\"", i ? "," : "", i);
    }
    b64(eq, e64);
    snprintf(attr, sizeof attr, "\"equation\":{\"s\":\"%s\"},\"N\":{\"i\":\"%d\"}", e64, n);
    node(&j, "e", "Einsum", ins, attr);
    const char *path = write_model(&j, "einsum.json");
    io_model *m = NULL;
    core_graph *g = NULL;
    core_program *p = NULL;
    memset(err, 0, sizeof *err);
    if (io_model_load(path, &m, err) == SI_OK && core_graph_build(m, &g, err) == SI_OK)
        core_program_build(g, shapes, NULL, NULL, NULL, &p, err);
    core_graph_free(g);
    io_model_free(m);
    return p;
}

static void refused(const char *eq, int n, const core_shape *shapes, const char *why)
{
    si_error err;
    core_program *p = lower(eq, n, shapes, &err);
    if (p || !strstr(err.message, why) || !strstr(err.message, "node 'e' (Einsum)"))
        fail_msg("'%s': %s (want '%s')", eq, p ? "lowered" : err.message, why);
    core_program_free(p);
}

static void test_refused(void **state)
{
    (void)state;
    const core_shape m23 = {2, {2, 3}}, m34 = {2, {3, 4}}, m44 = {2, {4, 4}}, v2 = {1, {2}},
                     v4 = {1, {4}};
    const core_shape two[] = {m23, m34}, three[] = {m23, m34, m44};
    refused("ij,jk", 2, two, "needs exactly one '->'");
    refused("ij,jk->ik->ik", 2, two, "needs exactly one '->'");
    refused("...ij,jk->...ik", 2, two, "no ellipsis");
    refused("ij,jk,kl->il", 3, three, "at most 2 operands");
    refused("ii->i", 1, &m44, "a label twice in one operand");
    refused("ij->ii", 1, &m44, "an output label twice");
    refused("ij,jk->iz", 2, two, "output label 'z' is in no operand");
    refused("ijk,jk->i", 2, two, "operand 0 has rank 2");
    const core_shape bad[] = {m23, m44};
    refused("ij,jk->ik", 2, bad, "label 'j' is 3 and 4");
    /* tfjs ignores the second operand of the first and misshapes the second */
    const core_shape mv[] = {m23, v2}, mo[] = {m23, v4};
    refused("ij,i->i", 2, mv, "computes it wrongly (an operand without 'j'");
    refused("ij,k->ik", 2, mo, "computes it wrongly (an operand without 'j'");
}

static void test_attention_is_one_matmul(void **state)
{
    (void)state;
    const core_shape qk[] = {{4, {2, 5, 3, 4}}, {4, {2, 6, 3, 4}}};
    si_error err;
    core_program *p = lower("bqhd,bkhd->bhqk", 2, qk, &err);
    if (!p)
        fail_msg("%s", err.message);
    int matmuls = 0, others = 0;
    for (int s = 0; s < p->n_steps; s++) {
        const ck_step *st = &p->steps[s];
        if (st->kind == CK_MATMUL) {
            matmuls++;
            /* [b*h, q, d] x [b*h, k, d] read transposed */
            assert_int_equal(st->u.matmul.batch, 6);
            assert_int_equal(st->u.matmul.m, 5);
            assert_int_equal(st->u.matmul.n, 6);
            assert_int_equal(st->u.matmul.k, 4);
        } else {
            others += st->kind != CK_COPY;
        }
    }
    assert_int_equal(matmuls, 1);
    assert_int_equal(others, 0);
    const core_tensor *out = &p->tensors[p->outputs[0]];
    assert_int_equal(out->shape.rank, 4);
    assert_int_equal(out->shape.d[1], 3);
    assert_int_equal(out->shape.d[3], 6);
    core_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_attention_is_one_matmul),
    };
    return cmocka_run_group_tests_name("einsum", tests, tiny_setup, tiny_teardown);
}
