/* Every GLSL program the kernels compile, checked by glslangValidator (the
 * Khronos reference front end) against the GLSL ES specification. Mesa's
 * llvmpipe, the compiler at hand here, accepts things the spec refuses and
 * NVIDIA's driver refuses with it: an undefined macro in #if, an int where a
 * uint is wanted. Each kind's variants (its op slot, conv2d's kernels), with
 * float32, int32 and half bindings, and the transfer kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "kernel_util.h"

static char dir[] = "/tmp/si-glsl-XXXXXX";
static int n_sources;
static char last_path[300];

static void keep_source(void *user, const char *shader, const char *source)
{
    (void)user;
    snprintf(last_path, sizeof last_path, "%s/%04d-%s.comp", dir, n_sources++, shader);
    FILE *f = fopen(last_path, "w");
    assert_non_null(f);
    fputs(source, f);
    fclose(f);
}

/* Compiles the program of step s with every binding of dtype dt, and again
 * with every binding its kernel takes as halves stored so. Every float32
 * program compiles here; an int32 one only where the kind takes ints (where
 * Mesa refuses it, so does glslang: it is not kept). */
static void prepare(ck_step *s, si_dtype dt)
{
    si_dtype dts[CK_MAX_IN];
    for (int i = 0; i < CK_MAX_IN; i++)
        dts[i] = dt;
    si_error err = {0};
    for (int half = 0; half < 2; half++) {
        s->half = 0;
        for (int i = 0; half && dt == SI_FLOAT32 && i <= CK_MAX_IN; i++)
            if ((i == CK_MAX_IN || i < s->n_in) && core_step_half_ok(s, i))
                s->half |= 1 << i;
        if (half && !s->half)
            continue;
        dts[1] = dt;
        int before = n_sources;
        if (glk_prepare_step(kt_gpu, s, dts, dt, &err) == SI_OK)
            continue;
        if (n_sources > before)
            unlink(last_path); /* written before Mesa refused it */
        dts[1] = SI_INT32; /* crop_resize's table, a gather's indices */
        before = n_sources;
        if (glk_prepare_step(kt_gpu, s, dts, dt, &err) == SI_OK)
            continue;
        if (n_sources > before)
            unlink(last_path);
        if (dt == SI_FLOAT32)
            fail_msg("%s: %s", ck_kind_name(s->kind), err.message);
    }
}

static void test_sources_pass_glslang(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(dir));
    for (int k = 0; k < CK__COUNT; k++) {
        if (ck_runs_on_host((ck_kind)k))
            continue;
        /* a context a kind: the program cache holds only so many */
        kt_gpu_close();
        assert_int_equal(kt_gpu_open(), 0);
        glk_set_source_hook(kt_gpu, keep_source, NULL);
        int ops = k == CK_UNARY ? CK_U__COUNT : k == CK_BINARY ? CK_B__COUNT : k == CK_REDUCE ? 7 : 1;
        for (int v = 0; v < ops; v++) {
            ck_step s = {.kind = (ck_kind)k, .n_in = CK_MAX_IN, .out = CK_MAX_IN};
            for (int i = 0; i < CK_MAX_IN; i++)
                s.in[i] = i;
            if (k == CK_UNARY)
                s.u.unary.op = v;
            else if (k == CK_BINARY)
                s.u.binary.op = v;
            else if (k == CK_REDUCE)
                s.u.reduce.op = v;
            prepare(&s, SI_FLOAT32);
            prepare(&s, SI_INT32);
        }
        if (k == CK_DEQUANT)
            for (int q = 1; q <= 3; q++) {
                ck_step s = {.kind = CK_DEQUANT, .n_in = 1, .in = {0}, .out = 1};
                s.u.dequant.quant = q;
                prepare(&s, SI_FLOAT32);
            }
    }
    /* conv2d's kernels: plain, vec (x four channels a load), oc4, tiled, split */
    kt_gpu_close();
    assert_int_equal(kt_gpu_open(), 0);
    glk_set_source_hook(kt_gpu, keep_source, NULL);
    /* each with its loads ahead of its sums and without (glk_set_ahead: a GPU's
     * default is on, llvmpipe's off), and a matmul and a wide one, a wide
     * average pool, a mean in lanes and a depthwise conv, both ways */
    static const char *const convs[] = {"plain", "vec", "oc4", "tiled", "split"};
    si_error err = {0};
    for (int ahead = 0; ahead < 2; ahead++) {
        glk_set_ahead(kt_gpu, ahead);
        for (size_t c = 0; c < sizeof convs / sizeof convs[0]; c++) {
            assert_int_equal(glk_set_conv(kt_gpu, convs[c], &err), SI_OK);
            ck_step s = {.kind = CK_CONV2D, .n_in = 2, .in = {0, 1}, .out = 2};
            s.u.conv = (ck_conv_p){.n = 1, .in_h = 8, .in_w = 8, .in_c = 64, .out_h = 8, .out_w = 8,
                                   .out_c = 8, .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1,
                                   .dil_h = 1, .dil_w = 1, .pad_top = 1, .pad_left = 1};
            prepare(&s, SI_FLOAT32);
        }
        ck_step mm = {.kind = CK_MATMUL, .n_in = 2, .in = {0, 1}, .out = 2};
        mm.u.matmul = (ck_matmul_p){.batch = 1, .m = 4, .n = 4, .k = 64};
        prepare(&mm, SI_FLOAT32);
        mm.u.matmul.k = 4096; /* wide */
        prepare(&mm, SI_FLOAT32);
        ck_step pool = {.kind = CK_POOL, .n_in = 1, .in = {0}, .out = 1}; /* a global average: wide */
        pool.u.pool = (ck_pool_p){.n = 1, .in_h = 32, .in_w = 32, .c = 8, .out_h = 1, .out_w = 1,
                                  .k_h = 32, .k_w = 32, .stride_h = 32, .stride_w = 32};
        prepare(&pool, SI_FLOAT32);
        ck_step dw = {.kind = CK_DWCONV2D, .n_in = 2, .in = {0, 1}, .out = 2}; /* a 3x3 window: ahead */
        dw.u.conv = (ck_conv_p){.n = 1, .in_h = 8, .in_w = 8, .in_c = 8, .out_h = 8, .out_w = 8, .out_c = 8,
                                .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1, .dil_h = 1, .dil_w = 1,
                                .pad_top = 1, .pad_left = 1, .ch_mult = 1};
        ck_step de = dw; /* and a transposed conv */
        de.kind = CK_DECONV2D;
        for (int v = 0; v < 2; v++) { /* one channel an invocation, and four (glk_set_quad) */
            glk_set_quad(kt_gpu, v);
            prepare(&dw, SI_FLOAT32);
            prepare(&de, SI_FLOAT32);
        }
        glk_set_quad(kt_gpu, -1);
        ck_step red = {.kind = CK_REDUCE, .n_in = 1, .in = {0}, .out = 1}; /* a global mean: in lanes */
        red.u.reduce = (ck_reduce_p){.op = CK_R_MEAN, .outer = 1, .n = 4096, .inner = 8, .dtype = SI_FLOAT32,
                                     .lanes = CK_REDUCE_LANES};
        prepare(&red, SI_FLOAT32);
    }
    glk_set_ahead(kt_gpu, -1);
    assert_int_equal(glk_set_conv(kt_gpu, NULL, &err), SI_OK);
    /* the transfer kernel (programs that are no step's) */
    uint32_t a = 0, b = 0;
    assert_int_equal(glk_buffer_create(kt_gpu, 256, &a, &err), SI_OK);
    assert_int_equal(glk_buffer_create(kt_gpu, 256, &b, &err), SI_OK);
    assert_int_equal(glk_copy_words(kt_gpu, a, 0, b, 0, 64, &err), SI_OK);
    /* and its dequantizing form, the halves' counting one too (where the GPU counts) */
    assert_int_equal(glk_dequant_words(kt_gpu, a, 0, b, 0, 16, 1, 0.5f, 1.f, 1, &err), SI_OK);
    assert_int_equal(glk_finish(kt_gpu, &err), SI_OK);
    glk_buffer_destroy(kt_gpu, a);
    glk_buffer_destroy(kt_gpu, b);
    glk_set_source_hook(kt_gpu, NULL, NULL);
    assert_true(n_sources > 100);
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd %s && ls | grep '[.]comp$' | xargs -P 2 -I{} sh -c "
             "'glslangValidator -S comp {} >{}.log 2>&1 || echo {}' >refused; "
             "for f in $(head -3 refused); do echo \"== $f\"; grep -m5 ERROR \"$f.log\"; done; "
             "echo \"glslangValidator: $(wc -l <refused) of %d programs refused\"; [ ! -s refused ]",
             dir, n_sources);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    assert_int_equal(rc, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sources_pass_glslang)};
    return cmocka_run_group_tests_name("shader_sources", tests, kt_group_setup, kt_group_teardown);
}
