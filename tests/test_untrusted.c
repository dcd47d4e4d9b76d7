/* Models written by strangers (issue 12): missing weights, shard paths that
 * leave the model's folder, shards that shrink after si_open, hostile numbers.
 * Each case is an error naming what is wrong, never a run on made-up values,
 * a read outside the folder, a signal, or undefined behaviour (make test-asan
 * runs this under ASan and UBSan with halt_on_error, so a leak on any of these
 * error paths fails it too; not valgrind, whose ld.so reports on Mesa's dlopen
 * would drown the GPU case). */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "streaminfer.h"
#include "core.h"
#include "scratch_dir.h"
#include "test_util.h"

#define HEAD "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":["
#define X_4  "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"}," \
             "\"shape\":{\"shape\":{\"dim\":[{\"size\":\"1\"},{\"size\":\"4\"}]}}}},"
/* the converter writes a Const's dtype and shape in the node, its bytes in the shard */
#define CONST(name) "{\"name\":\"" name "\",\"op\":\"Const\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"}," \
             "\"value\":{\"tensor\":{\"dtype\":\"DT_FLOAT\",\"tensorShape\":{\"dim\":[{\"size\":\"4\"}]}}}}},"
#define ADD(name, a, b) "{\"name\":\"" name "\",\"op\":\"AddV2\",\"input\":[\"" a "\",\"" b "\"]," \
             "\"attr\":{\"T\":{\"type\":\"DT_FLOAT\"}}}"
#define WEIGHT(name) "{\"name\":\"" name "\",\"shape\":[4],\"dtype\":\"float32\"}"

/* y = (x + w1) + w2, the manifest as given ("" leaves weightsManifest out). */
static const char *two_weights(const char *manifest)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, HEAD X_4 CONST("w1") CONST("w2") ADD("s", "x", "w1") "," ADD("y", "s", "w2")
             "]}%s%s}", manifest[0] ? ",\"weightsManifest\":" : "", manifest);
    return buf;
}

/* y = x + w with w's manifest entry (its shard path, quantization) as given. */
static const char *one_weight(const char *path, const char *quant)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, HEAD X_4 CONST("w") ADD("y", "x", "w")
             "]},\"weightsManifest\":[{\"paths\":[\"%s\"],\"weights\":[{\"name\":\"w\",\"shape\":[4],"
             "\"dtype\":\"float32\"%s}]}]}", path, quant);
    return buf;
}

static const float wdata[8] = {1.5f, -2.f, 3.25f, 0.5f, 4.f, 8.f, -16.f, 32.f};

static si_result open_with(si_backend backend, si_io_mode io, si_model **m, si_error *err)
{
    si_options opt = {.backend = backend, .io_mode = io};
    return si_open(dir, &opt, m, err);
}

static void expect_open_error(const char *what, si_result want, const char *needle)
{
    si_model *m = NULL;
    si_error err = {0};
    si_result st = open_with(SI_BACKEND_HOST, SI_IO_MMAP, &m, &err);
    expect_refused(what, st, m, &err, want, needle);
}

static void expect_runs(const char *what)
{
    si_model *m = NULL;
    si_error err = {0};
    if (open_with(SI_BACKEND_HOST, SI_IO_MMAP, &m, &err) != SI_OK)
        fail_msg("%s: %s", what, err.message);
    float x[4] = {1, 2, 3, 4};
    si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 2, .shape = {1, 4}, .data = x};
    if (si_run(m, &in, 1, &err) != SI_OK)
        fail_msg("%s: %s", what, err.message);
    si_close(m);
}

/* Defect 2: with no manifest, or without the last entry, every weight it lacks
 * ran as zeros and the run returned SI_OK. */
static void test_missing_weights(void **state)
{
    (void)state;
    write_file("w.bin", wdata, sizeof wdata);
    write_text("model.json", two_weights("[{\"paths\":[\"w.bin\"],\"weights\":[" WEIGHT("w1") "," WEIGHT("w2") "]}]"));
    expect_runs("both weights");
    write_text("model.json", two_weights(""));
    expect_open_error("no weightsManifest", SI_ERR_FORMAT, "'w1'");
    write_text("model.json", two_weights("[{\"paths\":[\"w.bin\"],\"weights\":[" WEIGHT("w1") "]}]"));
    expect_open_error("last manifest entry dropped", SI_ERR_FORMAT, "'w2'");
    write_text("model.json", two_weights("[]"));
    expect_open_error("empty weightsManifest", SI_ERR_FORMAT, "Const node 'w1'");
}

/* Defect 3: a shard path is refused when absolute or resolving outside the
 * model's folder; inside it (a subfolder, a ".." that stays in) it is read. */
static void test_shard_paths(void **state)
{
    (void)state;
    char path[512], sub[512];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0700);
    write_file("sub/w.bin", wdata, sizeof wdata);
    write_text("model.json", one_weight("sub/w.bin", ""));
    expect_runs("shard in a subfolder");
    write_text("model.json", one_weight("sub/../sub/w.bin", ""));
    expect_runs("shard through a '..' that stays inside");

    write_text("model.json", one_weight("../../../../../../../../etc/passwd", ""));
    expect_open_error("relative path out of the folder", SI_ERR_FORMAT, "../../../../../../../../etc/passwd");
    expect_open_error("says why", SI_ERR_FORMAT, "outside the model's folder");
    write_text("model.json", one_weight("/etc/passwd", ""));
    expect_open_error("absolute path", SI_ERR_FORMAT, "'/etc/passwd' is absolute");
    /* a link inside the folder to a file outside it: the file is outside */
    snprintf(path, sizeof path, "%s/link.bin", dir);
    unlink(path);
    assert_int_equal(symlink("/etc/passwd", path), 0);
    write_text("model.json", one_weight("link.bin", ""));
    expect_open_error("symbolic link out of the folder", SI_ERR_FORMAT, "outside the model's folder");
    unlink(path);
}

/* Defect 4: a shard truncated after si_open, then read by si_run: the mmap
 * reader died of SIGBUS; both readers, both backends, must return an error
 * naming the shard. */
static void shrink_then_run(si_backend backend, si_io_mode io)
{
    write_file("w.bin", wdata, sizeof wdata);
    write_text("model.json", one_weight("w.bin", ""));
    si_model *m = NULL;
    si_error err = {0};
    si_result st = open_with(backend, io, &m, &err);
    if (st == SI_ERR_GPU || (st == SI_ERR_IO && io == SI_IO_URING)) {
        printf("skipped (backend %d, io %d): %s\n", backend, io, err.message);
        return;
    }
    assert_int_equal(st, SI_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/w.bin", dir);
    assert_int_equal(truncate(path, 0), 0);
    float x[4] = {1, 2, 3, 4};
    si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 2, .shape = {1, 4}, .data = x};
    st = si_run(m, &in, 1, &err);
    if (st == SI_OK || !strstr(err.message, "w.bin"))
        fail_msg("backend %d io %d: status %d, '%s' (want an error naming w.bin)", backend, io, st, err.message);
    si_close(m);
}

static void test_shard_shrinks(void **state)
{
    (void)state;
    shrink_then_run(SI_BACKEND_HOST, SI_IO_MMAP);
    shrink_then_run(SI_BACKEND_HOST, SI_IO_URING);
    shrink_then_run(SI_BACKEND_GPU, SI_IO_MMAP);
}

/* Defect 5: numbers no model would write. */
static void test_hostile_dtype(void **state)
{
    (void)state;
    write_file("w.bin", wdata, sizeof wdata);
    /* a DataType as a number far outside int: was a float→int overflow */
    write_text("model.json", HEAD "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":1e300},"
               "\"shape\":{\"shape\":{\"dim\":[{\"size\":\"4\"}]}}}}," CONST("w") ADD("y", "x", "w")
               "]},\"weightsManifest\":[{\"paths\":[\"w.bin\"],\"weights\":[" WEIGHT("w") "]}]}");
    expect_open_error("type 1e300", SI_ERR_UNSUPPORTED, "'x'");
}

/* A string weight's length prefixes are checked when the model is opened
 * (test_io) and again when the interpreter reads it: a shard rewritten in
 * between, its size kept, with a prefix past the weight's bytes, is an error
 * naming the weight, never a read past them. */
static void test_string_shard_rewritten(void **state)
{
    (void)state;
    const uint8_t good[12] = {2, 0, 0, 0, 'a', 'b', 2, 0, 0, 0, 'c', 'd'};
    const uint8_t bad[12] = {2, 0, 0, 0, 'a', 'b', 200, 0, 0, 0, 'c', 'd'};
    write_file("s.bin", good, sizeof good);
    write_text("model.json", HEAD
               "{\"name\":\"s\",\"op\":\"Const\",\"attr\":{\"dtype\":{\"type\":\"DT_STRING\"}}},"
               "{\"name\":\"h\",\"op\":\"StringToHashBucketFast\",\"input\":[\"s\"],"
               "\"attr\":{\"num_buckets\":{\"i\":\"1000\"}}}"
               "]},\"weightsManifest\":[{\"paths\":[\"s.bin\"],\"weights\":["
               "{\"name\":\"s\",\"shape\":[2],\"dtype\":\"string\"}]}]}");
    for (int backend = 0; backend < 2; backend++) {
        si_model *m = NULL;
        si_error err = {0};
        write_file("s.bin", good, sizeof good);
        if (open_with(backend ? SI_BACKEND_GPU : SI_BACKEND_HOST, SI_IO_MMAP, &m, &err) != SI_OK)
            fail_msg("open: %s", err.message);
        if (si_run(m, NULL, 0, &err) != SI_OK)
            fail_msg("run: %s", err.message);
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        const void *data;
        assert_int_equal(si_output(m, 0, &dt, &rank, shape, &data, &err), SI_OK);
        assert_int_equal(dt, SI_INT32);
        assert_int_equal(rank, 1);
        assert_int_equal(shape[0], 2);
        write_file("s.bin", bad, sizeof bad);
        si_result st = si_run(m, NULL, 0, &err);
        print_message("  rewritten shard -> %d: %s\n", st, err.message);
        assert_int_equal(st, SI_ERR_FORMAT);
        assert_non_null(strstr(err.message, "string weight 's'"));
        si_close(m);
    }
}

static void test_hostile_shapes(void **state)
{
    (void)state;
    /* four dimensions of 1e6: 1e24 elements, was a signed overflow */
    write_text("model.json", HEAD "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
               "\"shape\":{\"shape\":{\"dim\":[{\"size\":\"1000000\"},{\"size\":\"1000000\"},{\"size\":\"1000000\"},"
               "{\"size\":\"1000000\"}]}}}},{\"name\":\"y\",\"op\":\"Relu\",\"input\":[\"x\"],"
               "\"attr\":{\"T\":{\"type\":\"DT_FLOAT\"}}}]}}");
    expect_open_error("placeholder of 1e24 elements", SI_ERR_SHAPE, "input 'x'");
    /* an inline Const of shape [-5]: was calloc of a negative size, "out of memory" */
    write_text("model.json", HEAD X_4 "{\"name\":\"c\",\"op\":\"Const\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
               "\"value\":{\"tensor\":{\"dtype\":\"DT_FLOAT\",\"tensorShape\":{\"dim\":[{\"size\":\"-5\"}]},"
               "\"floatVal\":[1]}}}}," ADD("y", "x", "c") "]}}");
    expect_open_error("inline Const of negative size", SI_ERR_FORMAT, "'c'");
}

static void test_hostile_quantization(void **state)
{
    (void)state;
    char buf[4096];
    /* non-finite (or beyond float32) quantization parameters ran as NaN on the host, 0 on the GPU */
    static const char *bad[][2] = {{"\"NaN\"", "1"}, {"0", "\"Infinity\""}, {"\"-Infinity\"", "1"},
                                   {"0", "\"NaN\""}, {"1e300", "1"}, {"0", "-1e39"}};
    uint8_t q[4] = {0, 1, 2, 255};
    write_file("q.bin", q, sizeof q);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char quant[256];
        snprintf(quant, sizeof quant, ",\"quantization\":{\"dtype\":\"uint8\",\"min\":%s,\"scale\":%s}",
                 bad[i][0], bad[i][1]);
        snprintf(buf, sizeof buf, "min %s scale %s", bad[i][0], bad[i][1]);
        write_text("model.json", one_weight("q.bin", quant));
        expect_open_error(buf, SI_ERR_FORMAT, "'w'");
    }
    write_text("model.json", one_weight("q.bin", ",\"quantization\":{\"dtype\":\"uint8\",\"min\":-1,\"scale\":0.5}"));
    expect_runs("finite quantization");
}

/* Every image reproducer the fuzzer found (tests/fuzz/crashes/image-*) is
 * handled: JPEGs overflowing stb's Huffman table and PNGs whose chunk claims
 * more bytes than the file (stb allocated the claim, up to 2 GiB) are refused
 * before stb sees them, an empty Radiance image is refused, a JPEG whose AC
 * codes run past its bits is refused by stb, and the TGA whose
 * fitting made stb_image_resize abort is fitted. The folder is found from
 * this file's path: make test runs from the repository root. */
static void test_fuzz_image_reproducers(void **state)
{
    (void)state;
    char dirpath[512];
    snprintf(dirpath, sizeof dirpath, "%s", __FILE__);
    char *slash = strrchr(dirpath, '/');
    snprintf(slash ? slash + 1 : dirpath, sizeof dirpath - (size_t)(slash ? slash + 1 - dirpath : 0),
             "fuzz/crashes");
    DIR *d = opendir(dirpath);
    if (!d)
        fail_msg("no %s (run from the repository root)", dirpath);
    int seen = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *nm = e->d_name, *want = NULL;
        if (!strncmp(nm, "image-jpeg-huff-assert", 22))
            want = NULL; /* decodes (stb's state zeroed): what matters is no abort */
        else if (!strncmp(nm, "image-jpeg-fast-ac", 18))
            want = "cannot decode"; /* stb refuses it; under UBSan, with no shift report */
        else if (!strncmp(nm, "image-jpeg-", 11))
            want = "Huffman";
        else if (!strncmp(nm, "image-png-", 10))
            want = "corrupt PNG";
        else if (!strncmp(nm, "image-hdr-", 10))
            want = "no pixels";
        else if (!strncmp(nm, "image-pnm-", 10))
            want = "corrupt PNM";
        else if (strncmp(nm, "image-", 6))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dirpath, nm);
        int h = 17, w = 31;
        void *data = NULL;
        si_error err = {0};
        si_result st = si_image_read(path, &h, &w, SI_FLOAT32, &data, &err);
        if (want && (st != SI_ERR_FORMAT || !strstr(err.message, want)))
            fail_msg("%s: not refused with '%s': %s", nm, want, err.message);
        if (!want && st != SI_OK)
            fail_msg("%s: %s", nm, err.message);
        free(data);
        seen++;
    }
    closedir(d);
    assert_true(seen >= 9);
}

/* Found by tests/fuzz (fuzz_image): a Radiance header that stb decodes to an
 * image of no pixels (7x0) was returned as SI_OK with a zero size. */
static const unsigned char hdr_no_pixels[] = {
  0x23, 0x3f, 0x52, 0x41, 0x44, 0x49, 0x41, 0x4e, 0x43, 0x45, 0x0a, 0x23,
  0x20, 0x57, 0x23, 0x00, 0x72, 0x69, 0x74, 0x74, 0x65, 0xe0, 0x00, 0x10,
  0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01,
  0x00, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2,
  0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0x01, 0x00, 0x03, 0x01,
  0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
  0x0b, 0x11, 0x00, 0x02, 0x01, 0x02, 0x04, 0x04, 0x03, 0x04, 0x07, 0x05,
  0x04, 0x04, 0x00, 0x01, 0x02, 0x77, 0x00, 0x01, 0x02, 0x03, 0x11, 0x04,
  0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22,
  0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33,
  0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xc1, 0x25,
  0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36,
  0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x6e, 0x20, 0x62, 0x79,
  0x20, 0x73, 0x74, 0x62, 0x5f, 0x69, 0x6d, 0x61, 0x67, 0x7a, 0x65, 0x5f,
  0x77, 0x72, 0x69, 0x74, 0x65, 0x2e, 0x68, 0x0a, 0x46, 0x4f, 0x52, 0x4d,
  0x41, 0x54, 0x3d, 0x33, 0x32, 0x2d, 0x62, 0x69, 0x74, 0x5f, 0x72, 0x6c,
  0x65, 0x5f, 0x72, 0x67, 0x62, 0x65, 0x0a, 0x45, 0x58, 0x50, 0x4f, 0x53,
  0x55, 0x52, 0x45, 0x3d, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
  0x20, 0x20, 0x31, 0x2e, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30,
  0x30, 0x30, 0x30, 0x30, 0x30, 0x0a, 0x0a, 0x2d, 0x59, 0x20, 0x30, 0x20,
  0x2b, 0x58, 0x20, 0x37, 0x0a, 0x00, 0x49, 0x92, 0x7f, 0x6d, 0x92, 0xb6,
  0x80, 0x6d, 0x80, 0x92, 0x81, 0xa4, 0xb6, 0xc9, 0x81, 0x6d, 0x76, 0x80,
  0x82, 0x89, 0x92, 0x9b, 0x82, 0xa4, 0xad, 0xb6, 0x82, 0xc0, 0xc9, 0xd2,
  0x82, 0xdb, 0xe4, 0xed, 0x82, 0x7b, 0x80, 0x84, 0x83, 0x89, 0x8d, 0x92,
  0x83, 0x96, 0x9b, 0xa0, 0x83, 0xa4, 0xa9, 0xad, 0x83, 0xb2, 0xb6, 0xbb,
  0x83, 0xc0, 0xc4, 0xc9, 0x83, 0xcd, 0xd2, 0xd6, 0x83, 0xdb, 0xe0, 0xe4,
  0x83, 0xe9, 0xed, 0xf2, 0x83, 0x7b, 0x7d, 0x80, 0x84, 0x82, 0x84, 0x86,
  0x84, 0x89, 0x8b, 0x8d, 0x84, 0x90, 0x92, 0x94, 0x84, 0x96, 0x99, 0x9b,
  0x84, 0x9d, 0xa0, 0xa2, 0x84, 0xa4, 0xa6, 0xa9, 0x84, 0xab, 0xad, 0xb0,
  0x84, 0xb2, 0xb4, 0xb6, 0x84, 0xb9, 0xbb, 0xbd, 0x84, 0xc0, 0xc2, 0xc4,
  0x84, 0xc6, 0xc9, 0xcb, 0x84, 0xcd, 0xd0, 0xd2, 0x84, 0xd4, 0xd6, 0xd9,
  0x84, 0xdb, 0xdd, 0xe0, 0x84, 0x5f, 0x77, 0x72, 0x69, 0x74, 0xeb, 0xed,
  0x84
};

static void test_image_no_pixels(void **state)
{
    (void)state;
    write_file("empty.hdr", hdr_no_pixels, sizeof hdr_no_pixels);
    char path[512];
    snprintf(path, sizeof path, "%s/empty.hdr", dir);
    int h = 0, w = 0;
    void *data = NULL;
    si_error err = {0};
    assert_int_equal(si_image_read(path, &h, &w, SI_FLOAT32, &data, &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "no pixels"));
    assert_null(data);
    h = 17, w = 31; /* resized to a model's size, the same */
    assert_int_equal(si_image_read(path, &h, &w, SI_INT32, &data, &err), SI_ERR_FORMAT);
    assert_null(data);
}

/* Found by tests/fuzz (fuzz_image): a JPEG Huffman table of more than 256
 * codes overflowed stb_image's table (a heap write); it is refused first. */
static void test_jpeg_huffman_overflow(void **state)
{
    (void)state;
    unsigned char jpg[2 + 4 + 17 + 304 + 2] = {0xff, 0xd8, 0xff, 0xc4, 0x01, 0x43, 0x00};
    size_t len = 2 + 17 + 304; /* 0x143 */
    for (int k = 1; k <= 16; k++)
        jpg[6 + k] = 19; /* 16 x 19 = 304 codes */
    jpg[sizeof jpg - 2] = 0xff;
    jpg[sizeof jpg - 1] = 0xd9;
    assert_int_equal(len, 0x143);
    write_file("bad.jpg", jpg, sizeof jpg);
    char path[512];
    snprintf(path, sizeof path, "%s/bad.jpg", dir);
    int h = 0, w = 0;
    void *data = NULL;
    si_error err = {0};
    assert_int_equal(si_image_read(path, &h, &w, SI_FLOAT32, &data, &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "Huffman"));
    assert_non_null(strstr(err.message, "bad.jpg"));
    assert_null(data);
    /* the same table in a segment that claims more bytes than the file holds
     * (fuzz_image's second finding: stb reads the counts before it notices) */
    jpg[4] = 0x7f;
    write_file("bad.jpg", jpg, sizeof jpg - 2);
    assert_int_equal(si_image_read(path, &h, &w, SI_FLOAT32, &data, &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "Huffman"));
    assert_null(data);
    /* a sound table followed by one cut short after ten of its counts (the third) */
    unsigned char cut[2 + 4 + 17 + 1 + 1 + 10] = {0xff, 0xd8, 0xff, 0xc4, 0x01, 0x00, 0x00, 1};
    cut[2 + 4 + 17] = 0xaa;     /* the sound table's one value */
    cut[2 + 4 + 17 + 1] = 0x01; /* DC table 1 */
    memset(cut + 2 + 4 + 17 + 2, 0xff, 10);
    write_file("bad.jpg", cut, sizeof cut);
    assert_int_equal(si_image_read(path, &h, &w, SI_FLOAT32, &data, &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "Huffman"));
    assert_null(data);
}

/* core_shape_count saturates where it used to overflow; the checked form refuses. */
static void test_shape_count(void **state)
{
    (void)state;
    core_shape huge = {.rank = 4, .d = {1000000, 1000000, 1000000, 1000000}};
    int64_t n = 7;
    assert_int_equal(core_shape_count(&huge), INT64_MAX);
    assert_int_equal(core_shape_count_checked(&huge, &n), -1);
    assert_int_equal(n, 7);
    core_shape neg = {.rank = 3, .d = {-1, 4000000000, 4000000000}};
    assert_true(core_shape_count(&neg) == INT64_MIN);
    assert_int_equal(core_shape_count_checked(&neg, &n), -1);
    /* a count that fits but whose bytes do not */
    core_shape bytes = {.rank = 2, .d = {INT64_C(1) << 31, INT64_C(1) << 31}};
    assert_int_equal(core_shape_count(&bytes), INT64_C(1) << 62);
    assert_int_equal(core_shape_count_checked(&bytes, &n), -1);
    core_shape zero = {.rank = 3, .d = {INT64_MAX, 0, INT64_MAX}};
    assert_int_equal(core_shape_count_checked(&zero, &n), 0);
    assert_int_equal(n, 0);
    core_shape ok = {.rank = 3, .d = {2, 3, 4}};
    assert_int_equal(core_shape_count_checked(&ok, &n), 0);
    assert_int_equal(n, 24);
    assert_int_equal(core_shape_count(&ok), 24);
}

int main(void)
{
    scratch_make("si-untrusted");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_weights), cmocka_unit_test(test_shard_paths),
        cmocka_unit_test(test_shard_shrinks),   cmocka_unit_test(test_hostile_dtype),
        cmocka_unit_test(test_hostile_shapes),  cmocka_unit_test(test_hostile_quantization),
        cmocka_unit_test(test_shape_count),     cmocka_unit_test(test_jpeg_huffman_overflow),
        cmocka_unit_test(test_image_no_pixels),
        cmocka_unit_test(test_fuzz_image_reproducers),
        cmocka_unit_test(test_string_shard_rewritten),
    };
    int rc = cmocka_run_group_tests_name("untrusted_models", tests, NULL, NULL);
    scratch_remove();
    return rc;
}
