/* The full-size head's build (model.c): on every core into memory its
 * threads faulted in, the same bits as the scalar generator of
 * lmhead_gen.h (the GPU's) run in one thread; the progress it reports (0 to
 * all rows, only growing, from the caller's thread) through a source and
 * the app; and the line that shows it (tui/progress.c). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/vecpath.h"
#include "data/catalog.h"
#include "model/head_vec.h"
#include "model/lmhead_gen.h"
#include "model/model.h"
#include "model/norm_tree.h"
#include "model/quant.h"
#include "source/source.h"
#include "suites.h"
#include "tui/app.h"
#include "tui/app_int.h"
#include "tui/progress.h"

#define LLAMA3_V 128256
/* Digests of heads (FNV-1a 64 over the bytes of w, row after row) at the
 * default seed, printed by model.c as it was before it built on the pool
 * (two static bands of pthreads): the weights must not change with the way
 * they are built. All 128,256 rows at 384; the first 20,000 at 4,096 (the
 * whole 1.05 GB head there hashed to 0x1df140149fd27b84, before and after). */
#define DIGEST_384      0xf62b837c1fecc041ull
#define DIGEST_4096_20K 0x08151359f2f0ff73ull

/* FNV-1a 64 of n more bytes after a hash h (FNV_START before the first). */
#define FNV_START 1469598103934665603ull
static uint64_t fnv1a_more(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t fnv1a(const void *p, size_t n)
{
    return fnv1a_more(FNV_START, p, n);
}

/* The digest of m's weights row after row, each in order: the bytes a
 * row-major head would hold, whatever the layout in memory. */
static uint64_t rows_digest(const struct model *m)
{
    uint16_t row[MODEL_MAX_HIDDEN];
    uint64_t h = FNV_START;
    for (int r = 0; r < m->V; r++) {
        model_row(m, r, row);
        h = fnv1a_more(h, row, (size_t)m->d * sizeof *row);
    }
    return h;
}

/* Row r of the head m against lm_weights4, four weights at a time: the
 * scalar specification, in this one thread. */
static void assert_row(const struct model *m, int r)
{
    uint16_t row[MODEL_MAX_HIDDEN];
    model_row(m, r, row);
    for (int c = 0; c < m->d / 4; c++) {
        uint16_t w4[4];
        lm_weights4(m->seed, (uint32_t)r, (uint32_t)c, m->scale, w4);
        ck_assert_msg(memcmp(row + 4 * c, w4, sizeof w4) == 0, "row %d, weights %d..%d differ", r,
                      4 * c, 4 * c + 3);
    }
}

/* What a progress function was told. */
#define MAX_CALLS 4096
struct record {
    int n;
    int done[MAX_CALLS], total[MAX_CALLS];
    char what[64];
    int what_changed, other_thread;
    pthread_t caller;
};

static void record_progress(void *arg, const char *what, int done, int total)
{
    struct record *r = arg;
    if (r->n == 0)
        snprintf(r->what, sizeof r->what, "%s", what);
    else if (strcmp(r->what, what) != 0)
        r->what_changed = 1;
    if (!pthread_equal(pthread_self(), r->caller))
        r->other_thread = 1;
    if (r->n < MAX_CALLS) {
        r->done[r->n] = done;
        r->total[r->n] = total;
    }
    r->n++;
}

/* The calls of one build of V rows: from (0, V) to (V, V), done strictly
 * growing in between, one job's name, all from the building thread. */
static void assert_progress(const struct record *r, int V, const char *what)
{
    ck_assert_int_le(r->n, MAX_CALLS);
    ck_assert_int_ge(r->n, 3); /* the start, one task of the caller's at least, the end */
    ck_assert_str_eq(r->what, what);
    ck_assert_int_eq(r->what_changed, 0);
    ck_assert_int_eq(r->other_thread, 0);
    ck_assert_int_eq(r->done[0], 0);
    for (int i = 0; i < r->n; i++)
        ck_assert_int_eq(r->total[i], V);
    for (int i = 1; i < r->n; i++)
        ck_assert_msg(r->done[i] > r->done[i - 1], "call %d: %d rows after %d", i, r->done[i],
                      r->done[i - 1]);
    ck_assert_int_eq(r->done[r->n - 1], V); /* the fraction ends at 1 */
}

/* The threads the build runs on: every core, up to model.c's 16. */
static int cores(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 16 ? 16 : (int)cpus;
}

/* Hidden size 384 (98.5 MB), all 128,256 rows: the pool's head equals one
 * built row by row in this thread (head_row) and hashes to DIGEST_384;
 * rows at the ends and at the edges of the build's tasks (5,461 rows, 4 MB
 * / 768 B) equal the scalar generator's weight for weight. */
START_TEST(test_whole_head_384)
{
    struct model m;
    struct err e;
    ck_assert_msg(model_build(&m, LLAMA3_V, 384, MODEL_DEFAULT_SEED, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(m.threads, cores());
    uint16_t row[384];
    for (int r = 0; r < LLAMA3_V; r++) {
        head_row(MODEL_DEFAULT_SEED, (uint32_t)r, 384, m.scale, row);
        uint16_t got[384];
        model_row(&m, r, got);
        ck_assert_msg(memcmp(got, row, sizeof row) == 0, "row %d differs", r);
    }
    static const int ROWS[] = { 0, 1, 5460, 5461, 10921, 10922, 125603, 125604, 128255 };
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++)
        assert_row(&m, ROWS[i]);
    ck_assert_uint_eq(rows_digest(&m), DIGEST_384);
    model_free(&m);
}
END_TEST

/* Hidden size 4,096, the full-size lessons' (the rows do not depend on V,
 * so the first 20,000 of them, 164 MB, stand for the 1.05 GB head): they
 * hash to DIGEST_4096_20K, and rows at the ends and on both sides of task
 * edges (512 rows of 8 KB, 4 MB a task) match the generator. */
START_TEST(test_rows_4096)
{
    struct model m;
    struct err e;
    ck_assert_msg(model_build(&m, 20000, 4096, MODEL_DEFAULT_SEED, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(m.threads, cores());
    static const int ROWS[] = { 0, 1, 511, 512, 1023, 1024, 10239, 10240, 19455, 19456, 19999 };
    for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++)
        assert_row(&m, ROWS[i]);
    ck_assert_uint_eq(rows_digest(&m), DIGEST_4096_20K);
    model_free(&m);
}
END_TEST

/* The product's digests (FNV-1a 64 over the bytes of the float logits), as
 * model_logits and model_logits_batch gave them at commit 83f8b08, before
 * the product took several rows per pass: the logits must not change with
 * the way the loop is arranged. 1,027 rows (not a multiple of any row
 * grouping) of 4,104 weights (a tail of 8 after the blocks of 16), the
 * vectors' entries from a fixed LCG in [-1, 1). */
#define PRODUCT_V        1027
#define PRODUCT_D        4104
#define PRODUCT_VECS     8
#define DIGEST_PRODUCT_1 0x97e73c254d401495ull
#define DIGEST_PRODUCT_8 0xbec457a465470fb4ull

/* The tiled layout of head_vec.h, on the product test's head (1,027 rows:
 * 256 full groups of four, then three plain rows; 4,104 weights: 256
 * blocks of sixteen and a tail of 8): every row comes back as the
 * generator made it, and the weights sit where the layout says: block b of
 * row 4g + q at (4g) d + 64 b + 16 q, its tail after the group's 4 x 4,096
 * block weights, and a plain row at r d. */
START_TEST(test_rows_in_tiles)
{
    if (!vec_force(_i))
        return; /* a path this CPU cannot run */
    struct model m;
    struct err e;
    ck_assert_msg(model_build(&m, PRODUCT_V, PRODUCT_D, MODEL_DEFAULT_SEED, &e) == 0, "%s", e.msg);
    const size_t d = PRODUCT_D;
    uint16_t want[PRODUCT_D], got[PRODUCT_D];
    for (int r = 0; r < PRODUCT_V; r++) {
        head_row(MODEL_DEFAULT_SEED, (uint32_t)r, PRODUCT_D, m.scale, want);
        model_row(&m, r, got);
        ck_assert_msg(memcmp(got, want, sizeof want) == 0, "row %d differs", r);
    }
    head_row(MODEL_DEFAULT_SEED, 6, PRODUCT_D, m.scale, want); /* group 1, q = 2 */
    ck_assert_uint_eq(m.w[4 * d + 64 * 5 + 16 * 2 + 7], want[16 * 5 + 7]);
    ck_assert_uint_eq(m.w[4 * d + 4 * 4096 + 8 * 2 + 3], want[4096 + 3]);
    head_row(MODEL_DEFAULT_SEED, 1025, PRODUCT_D, m.scale, want); /* a plain row */
    ck_assert(memcmp(m.w + 1025 * d, want, sizeof want) == 0);
    model_free(&m);
}
END_TEST

START_TEST(test_product_digest)
{
    if (!vec_force(_i))
        return; /* a path this CPU cannot run */
    struct model m;
    struct err e;
    ck_assert_msg(model_build(&m, PRODUCT_V, PRODUCT_D, MODEL_DEFAULT_SEED, &e) == 0, "%s", e.msg);
    float *x = malloc((size_t)PRODUCT_VECS * PRODUCT_D * sizeof *x);
    float *one = malloc((size_t)PRODUCT_V * sizeof *one);
    float *batch = malloc((size_t)PRODUCT_VECS * PRODUCT_V * sizeof *batch);
    ck_assert(x && one && batch);
    uint32_t s = 12345u;
    for (int i = 0; i < PRODUCT_VECS * PRODUCT_D; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
    }
    model_logits(&m, x, one);
    ck_assert_uint_eq(fnv1a(one, (size_t)PRODUCT_V * sizeof *one), DIGEST_PRODUCT_1);
    model_logits_batch(&m, x, PRODUCT_VECS, batch);
    ck_assert_uint_eq(fnv1a(batch, (size_t)PRODUCT_VECS * PRODUCT_V * sizeof *batch),
                      DIGEST_PRODUCT_8);
    ck_assert(memcmp(batch, one, (size_t)PRODUCT_V * sizeof *one) == 0);
    /* The plain loop (no split x: what a failed allocation falls back to)
     * gives the same bits, for one vector and for the eight. */
    head_gemv_bf16(m.w, PRODUCT_V, PRODUCT_D, x, NULL, 1, one, PRODUCT_V);
    ck_assert_uint_eq(fnv1a(one, (size_t)PRODUCT_V * sizeof *one), DIGEST_PRODUCT_1);
    head_gemv_bf16(m.w, PRODUCT_V, PRODUCT_D, x, NULL, PRODUCT_VECS, batch, PRODUCT_V);
    ck_assert_uint_eq(fnv1a(batch, (size_t)PRODUCT_VECS * PRODUCT_V * sizeof *batch),
                      DIGEST_PRODUCT_8);
    free(x);
    free(one);
    free(batch);
    model_free(&m);
}
END_TEST

/* The build's progress at 384: 128,256 x 384 x 2 bytes = 98.5 MB, named
 * "0.10 GB"; tasks of 5,461 rows (4 MB / 768 B), so 24 of them. */
START_TEST(test_progress_of_build)
{
    struct record *r = calloc(1, sizeof *r);
    ck_assert_ptr_nonnull(r);
    r->caller = pthread_self();
    struct model m;
    struct err e;
    ck_assert_msg(model_build_progress(&m, LLAMA3_V, 384, MODEL_DEFAULT_SEED,
                                       &(struct model_progress){ record_progress, r }, &e) == 0,
                  "%s", e.msg);
    assert_progress(r, LLAMA3_V, "building the LM head (0.10 GB)");
    ck_assert_int_le(r->n, 2 + 24);
    ck_assert_uint_eq(rows_digest(&m), DIGEST_384); /* telling changes nothing */
    model_free(&m);
    free(r);
}
END_TEST

/* A source opening real-france passes the progress to its head's build,
 * and a toy lesson (no head) tells nothing. At TEST_HIDDEN the head is
 * 128,256 x 512 x 2 bytes = 131 MB, named "0.13 GB". */
START_TEST(test_progress_through_source)
{
    struct record *r = calloc(1, sizeof *r);
    ck_assert_ptr_nonnull(r);
    r->caller = pthread_self();
    struct catalog cat;
    struct lesson L;
    struct source src;
    struct err e;
    ck_assert_msg(catalog_open(&cat, TEST_LESSONS, &e) == 0, "%s", e.msg);
    ck_assert_msg(catalog_load(&cat, "toy", &L, &e) == 0, "%s", e.msg);
    const struct model_progress p = { record_progress, r };
    ck_assert_msg(source_open_progress(&src, &L, NULL, 0, 0, &p, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(r->n, 0);
    ck_assert_ptr_null(src.progress);
    source_close(&src);
    lesson_free(&L);
    ck_assert_msg(catalog_load(&cat, "real-france", &L, &e) == 0, "%s", e.msg);
    catalog_close(&cat);
    ck_assert_msg(source_open_progress(&src, &L, NULL, TEST_HIDDEN, 64, &p, &e) == 0, "%s", e.msg);
    assert_progress(r, LLAMA3_V, "building the LM head (0.13 GB)");
    ck_assert_ptr_null(src.progress); /* borrowed for the build alone */
    source_close(&src);
    lesson_free(&L);
    free(r);
}
END_TEST

/* The app opening a full-size lesson (its first, and another by name, as
 * ':lesson' and n do) tells the function of its options. */
START_TEST(test_progress_through_app)
{
    struct record *r = calloc(1, sizeof *r);
    struct app *a = malloc(sizeof *a);
    ck_assert(r && a);
    r->caller = pthread_self();
    struct err e;
    const struct model_progress p = { record_progress, r };
    ck_assert_msg(app_init_progress(a, TEST_LESSONS, "real-loop", NULL, TEST_SOURCE, &p, &e) == 0,
                  "%s", e.msg);
    assert_progress(r, LLAMA3_V, "building the LM head (0.13 GB)");
    memset(r->done, 0, sizeof r->done);
    r->n = 0;
    ck_assert_msg(app_open_lesson(a, "real-france", -1, &e) == 0, "%s", e.msg);
    assert_progress(r, LLAMA3_V, "building the LM head (0.13 GB)");
    app_free(a);
    free(a);
    free(r);
}
END_TEST

/* The line: the percent (rounded down), the time left guessed from what
 * was done after 300 ms (elapsed x left / done), the time taken at the end. */
START_TEST(test_progress_line)
{
    char buf[128];
    const char *w = "building the LM head (1.05 GB)";
    progress_line(w, 0, 128256, 0.0, buf, sizeof buf);
    ck_assert_str_eq(buf, "building the LM head (1.05 GB): 0%");
    progress_line(w, 12825, 128256, 250.0, buf, sizeof buf); /* 9.99 %, too early to guess */
    ck_assert_str_eq(buf, "building the LM head (1.05 GB): 9%");
    /* 1 s for a quarter: 3 s for the other three quarters */
    progress_line(w, 32064, 128256, 1000.0, buf, sizeof buf);
    ck_assert_str_eq(buf, "building the LM head (1.05 GB): 25%, about 3 s left");
    /* 900 of 1,000 in 2 s: 2000 x 100 / 900 = 222 ms left */
    progress_line("reading the weights", 900, 1000, 2000.0, buf, sizeof buf);
    ck_assert_str_eq(buf, "reading the weights: 90%, under a second left");
    progress_line(w, 128256, 128256, 1234.0, buf, sizeof buf);
    ck_assert_str_eq(buf, "building the LM head (1.05 GB): 100%, in 1.2 s");
    progress_line("mapping the file", 1, 1, 240.4, buf, sizeof buf);
    ck_assert_str_eq(buf, "mapping the file: 100%, in 240 ms");
}
END_TEST

/* The RMSNorm's fixed tree (norm_tree.h), which the CUDA kernel repeats:
 * by hand on {1, 2, 2}; and on {2^27, 1, 0, 1, 0, 1, 0, 1}, where the order
 * shows: in index order each 1 is lost against 2^54 (its ulp is 4), while
 * the tree adds lanes 1 and 5, 3 and 7, then those two, and 4 reaches 2^54
 * whole. The same vector of 4,096 agrees with a long double sum to within
 * the double's rounding. */
START_TEST(test_rmsnorm_tree)
{
    static const float h3[3] = { 1.0f, 2.0f, 2.0f };
    float x[4096];
    ck_assert(norm_sum_squares(h3, 3) == 9.0);
    float rms = model_rmsnorm(h3, 3, x);
    ck_assert(rms == (float)sqrt(3.0 + (double)1e-5f));
    ck_assert(x[1] == 2.0f / rms);

    static const float h8[8] = { 0x1p27f, 1, 0, 1, 0, 1, 0, 1 };
    double seq = 0.0;
    for (int i = 0; i < 8; i++)
        seq += (double)h8[i] * h8[i];
    ck_assert(seq == 0x1p54);
    ck_assert(norm_sum_squares(h8, 8) == 0x1p54 + 4.0);

    static float h[4096];
    long double ref = 0.0L;
    for (int i = 0; i < 4096; i++) {
        h[i] = (float)(philox_uniform(5, (uint32_t)i, 0, 0) * 6.0 - 3.0);
        ref += (long double)h[i] * h[i];
    }
    double ss = norm_sum_squares(h, 4096);
    ck_assert_msg(fabsl((long double)ss - ref) <= 1e-15L * ref, "%.17g against %.17Lg", ss, ref);
}
END_TEST

/* A borrowed head (a model file's, in its stored type) against a batch of
 * vectors gives each vector what it gives that vector alone: quant_dot of
 * each row, bit for bit. 300 rows of 512 (tasks of rows, blocks of 64 in
 * the matrix product, and a short one) against 37 vectors (a copy of 32 and
 * five more), in Q4_K and Q8_0, whose rows come from quant_quantize. */
START_TEST(test_borrowed_head_batch)
{
    enum { V = 300, D = 512, N = 37 };
    int type = _i ? QT_Q8_0 : QT_Q4_K;
    size_t rb = quant_row_bytes(type, D);
    float *w = malloc(sizeof(float) * V * D), *x = malloc(sizeof(float) * N * D);
    float *one = malloc(sizeof(float) * V), *batch = malloc(sizeof(float) * N * V);
    unsigned char *q = malloc(rb * V);
    ck_assert(w && x && one && batch && q);
    uint32_t s = 777u + (uint32_t)_i;
    for (int i = 0; i < V * D; i++) {
        s = s * 1664525u + 1013904223u;
        w[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
    }
    for (int i = 0; i < N * D; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
    }
    quant_quantize(type, w, q, (int64_t)V * D);
    struct model m;
    struct err e;
    ck_assert_msg(model_borrow(&m, V, D, q, type, NULL, 1e-5f, &e) == 0, "%s", e.msg);
    model_logits_batch(&m, x, N, batch);
    for (int j = 0; j < N; j++) {
        model_logits(&m, x + (size_t)j * D, one);
        ck_assert_msg(memcmp(one, batch + (size_t)j * V, sizeof(float) * V) == 0,
                      "type %d vector %d differs", type, j);
        ck_assert(one[j] == quant_dot(type, q + (size_t)j * rb, x + (size_t)j * D, D));
    }
    model_free(&m);
    free(w), free(x), free(one), free(batch), free(q);
}
END_TEST

/* Gemma 2's final soft-cap on a borrowed F32 head of 3 x 2: x = (1, 1)
 * and rows (40, 20), (-10, -5), (0.5, -0.5) give the products 60, -15 and 0;
 * with softcap 30 the logits are 30 tanh(2) = 28.920827, 30 tanh(-0.5) =
 * -13.863515 and 0 (tanh by hand: 0.96402758, 0.46211716), for one vector
 * and for a batch of two; without it, the products themselves. */
START_TEST(test_head_softcap)
{
    static const float W[6] = { 40.0f, 20.0f, -10.0f, -5.0f, 0.5f, -0.5f };
    static const float X[4] = { 1.0f, 1.0f, 1.0f, 1.0f };
    static const double WANT[3] = { 28.920827402274507, -13.863514717800292, 0.0 };
    struct model m;
    struct err e;
    ck_assert_msg(model_borrow(&m, 3, 2, W, QT_F32, NULL, 1e-5f, &e) == 0, "%s", e.msg);
    float z[6];
    model_logits(&m, X, z);
    ck_assert(z[0] == 60.0f && z[1] == -15.0f && z[2] == 0.0f);
    m.softcap = 30.0f;
    model_logits(&m, X, z);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabs(z[i] - WANT[i]) < 2e-6, "logit %d: %.9g", i, (double)z[i]);
    model_logits_batch(&m, X, 2, z);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(fabs(z[i] - WANT[i % 3]) < 2e-6, "batch logit %d: %.9g", i, (double)z[i]);
    model_free(&m);
}
END_TEST

Suite *suite_headbuild(void)
{
    Suite *s = suite_create("headbuild");
    TCase *small = tcase_create("weights-384");
    tcase_set_timeout(small, 60);
    tcase_add_test(small, test_whole_head_384);
    suite_add_tcase(s, small);
    TCase *full = tcase_create("weights-4096");
    tcase_set_timeout(full, 60);
    tcase_add_test(full, test_rows_4096);
    suite_add_tcase(s, full);
    TCase *product = tcase_create("product");
    tcase_set_timeout(product, 60);
    tcase_add_loop_test(product, test_rows_in_tiles, 0, VEC_N_PATHS);  /* on every path */
    tcase_add_loop_test(product, test_product_digest, 0, VEC_N_PATHS); /* on every path */
    tcase_add_test(product, test_rmsnorm_tree);
    tcase_add_loop_test(product, test_borrowed_head_batch, 0, 2);
    tcase_add_test(product, test_head_softcap);
    suite_add_tcase(s, product);
    TCase *tc = tcase_create("progress");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_progress_of_build);
    tcase_add_test(tc, test_progress_through_source);
    tcase_add_test(tc, test_progress_through_app);
    tcase_add_test(tc, test_progress_line);
    suite_add_tcase(s, tc);
    return s;
}
