/* check_gguf.c - the GGUF reader, writer and llama loader.
 *
 * "format": the writer's bytes against the layout of ggml's docs/gguf.md,
 * counted by hand; every value type read back. "bad": a file the writer
 * made, corrupted one field at a time, each refusal asserted whole (the
 * offsets in the comments are the hand count of BASE's layout); every
 * prefix of a file; every byte of it changed. "getters": absent, wrong type,
 * out of range. "llama": a tiny model (the shapes a llama of width 8, 2
 * heads of 4, 1 KV head, FFN 16, 6 tokens implies) and each fault of it.
 * "escape": strings from a file as they are printed.
 */
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/mapfault.h"
#include "base/readfile.h"
#include "gguf/chat.h"
#include "gguf/gguf.h"
#include "gguf/gguf_llama.h"
#include "data/lesson.h"
#include "core/settings.h"
#include "core/sampler.h"
#include "source/source.h"
#include "data/lesson_model.h"
#include "gguf/gguf_write.h"
#include "model/quant.h"
#include "suites.h"

#define P "t.gguf"
#define SUPPORTED                                                                                  \
    "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, "         \
    "IQ4_XS" /* quant.h's list */

struct buf {
    unsigned char *p;
    size_t n;
};

static struct buf finish(struct gguf_writer *w)
{
    struct buf b = { NULL, 0 };
    struct err e = { 0, "" };
    ck_assert_msg(gguf_w_to_mem(w, &b.p, &b.n, &e) == 0, "writer: %s", e.msg);
    gguf_w_free(w);
    return b;
}

static void put_le(unsigned char *p, uint64_t v, int width)
{
    for (int i = 0; i < width; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Where s first occurs in b (it must). */
static size_t find(const struct buf *b, const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i + n <= b->n; i++)
        if (memcmp(b->p + i, s, n) == 0)
            return i;
    ck_abort_msg("'%s' is not in the file", s);
    return 0;
}

static struct gguf *open_ok(const struct buf *b)
{
    struct err e = { 0, "" };
    struct gguf *g = gguf_open_mem(P, b->p, b->n, &e);
    ck_assert_msg(g != NULL, "refused: %s", e.msg);
    return g;
}

static void expect_bad(const unsigned char *p, size_t n, const char *want)
{
    struct err e = { 0, "" };
    struct gguf *g = gguf_open_mem(P, p, n, &e);
    if (g) {
        gguf_close(g);
        ck_abort_msg("accepted a file that should fail with: %s", want);
    }
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_eq(e.code, ERR_USAGE);
}

/* ---- format -------------------------------------------------------------- */

/* One u32 entry "a" = 7 and no tensor: magic, version 3, 0 tensors, 1 entry
 * (u64 each), the key (u64 length 1, 'a'), type 4 (u32), the value. */
START_TEST(test_minimal_bytes)
{
    static const unsigned char want[41] = { 'G', 'G', 'U', 'F', 3,   0, 0, 0, 0, 0, 0, 0, 0, 0,
                                            0,   0,   1,   0,   0,   0, 0, 0, 0, 0, 1, 0, 0, 0,
                                            0,   0,   0,   0,   'a', 4, 0, 0, 0, 7, 0, 0, 0 };
    struct gguf_writer *w = gguf_w_new();
    gguf_w_u32(w, "a", 7);
    ck_assert_uint_eq(gguf_w_size(w), 41);
    struct buf b = finish(w);
    ck_assert_uint_eq(b.n, sizeof want);
    ck_assert(memcmp(b.p, want, sizeof want) == 0);
    struct gguf *g = open_ok(&b);
    uint32_t v = 0;
    struct err e;
    ck_assert_int_eq(gguf_get_u32(g, "a", &v, &e), 1);
    ck_assert_uint_eq(v, 7);
    ck_assert_uint_eq(g->version, 3);
    ck_assert_uint_eq(g->n_tensors, 0);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* BASE: the file the corruptions start from. Its layout, by hand:
 *   0   header (24)
 *   24  "general.name" string "base"   8+12+4+8+4 = 36
 *   60  "general.aaaa" u32 1           8+12+4+4   = 28
 *   88  "general.aaab" u32 2           28
 *   116 "arr.i32" i32[3] 1 2 3         8+7+4+4+8+12 = 43
 *   159 "flag" bool 1                  8+4+4+1 = 17
 *   176 tensor "t.first": F32 [8, 2] at 0     8+7+4+16+4+8 = 47
 *   223 tensor "t.second": Q8_0 [64] at 64    8+8+4+8+4+8 = 40
 *   263 padding to 288, where the data section starts
 *   288 t.first's 64 bytes; 352 t.second's 2 blocks of 34; 420 padding to 448. */
static void base_data(float *first, unsigned char *second)
{
    for (int i = 0; i < 16; i++)
        first[i] = (float)i - 7.5f;
    for (int i = 0; i < 68; i++)
        second[i] = (unsigned char)(i * 7);
}

static struct buf base_file(void)
{
    float FIRST[16];
    unsigned char SECOND[68];
    base_data(FIRST, SECOND);
    struct gguf_writer *w = gguf_w_new();
    gguf_w_str(w, "general.name", "base");
    gguf_w_u32(w, "general.aaaa", 1);
    gguf_w_u32(w, "general.aaab", 2);
    gguf_w_array(w, "arr.i32", GGUF_T_I32, (const int32_t[]){ 1, 2, 3 }, 3);
    gguf_w_bool(w, "flag", 1);
    ck_assert_int_eq(gguf_w_tensor(w, "t.first", 2, (const int64_t[]){ 8, 2 }, QT_F32, FIRST), 0);
    ck_assert_int_eq(gguf_w_tensor(w, "t.second", 1, (const int64_t[]){ 64 }, QT_Q8_0, SECOND), 1);
    return finish(w);
}

START_TEST(test_base_layout)
{
    float FIRST[16];
    unsigned char SECOND[68];
    base_data(FIRST, SECOND);
    struct buf b = base_file();
    ck_assert_uint_eq(b.n, 448);
    ck_assert_uint_eq(find(&b, "general.aaab"), 88 + 8);
    ck_assert_uint_eq(find(&b, "t.second"), 223 + 8);
    struct gguf *g = open_ok(&b);
    ck_assert_uint_eq(g->data_offset, 288);
    ck_assert_uint_eq(g->alignment, 32);
    ck_assert_uint_eq(g->n_kv, 5);
    ck_assert_uint_eq(g->n_tensors, 2);
    const struct gguf_tensor *t = gguf_tensor(g, "t.first");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->n_dims, 2);
    ck_assert_int_eq(t->ne[0], 8);
    ck_assert_int_eq(t->ne[1], 2);
    ck_assert_int_eq(t->ne[2], 1);
    ck_assert_uint_eq(t->bytes, 64);
    ck_assert_ptr_eq(t->data, b.p + 288);
    ck_assert(memcmp(t->data, FIRST, 64) == 0);
    t = gguf_tensor(g, "t.second");
    ck_assert_int_eq(t->type, QT_Q8_0);
    ck_assert_uint_eq(t->offset, 64);
    ck_assert_uint_eq(t->bytes, 68); /* 2 blocks of 32, 2 + 32 bytes each */
    ck_assert(memcmp(t->data, SECOND, 68) == 0);
    ck_assert_ptr_null(gguf_tensor(g, "t.third"));
    ck_assert_ptr_null(gguf_tensor(g, "t.firs"));
    gguf_close(g);
    free(b.p);
}
END_TEST

/* A version 2 file aligned to 64 with every value type and arrays of
 * several; h (96 values) is its F16 tensor's data. */
static struct buf every_type_file(int16_t *h)
{
    for (int i = 0; i < 96; i++)
        h[i] = (int16_t)i;
    struct gguf_writer *w = gguf_w_new();
    gguf_w_version(w, 2);
    gguf_w_alignment(w, 64);
    gguf_w_scalar(w, "u8", GGUF_T_U8, &(uint8_t){ 200 });
    gguf_w_scalar(w, "i8", GGUF_T_I8, &(int8_t){ -5 });
    gguf_w_scalar(w, "u16", GGUF_T_U16, &(uint16_t){ 60000 });
    gguf_w_scalar(w, "i16", GGUF_T_I16, &(int16_t){ -30000 });
    gguf_w_u32(w, "u32", 4000000000u);
    gguf_w_i32(w, "i32", -2000000000);
    gguf_w_f32(w, "f32", 1.5f);
    gguf_w_bool(w, "bool", 1);
    gguf_w_str(w, "str", "h\xC3\xA9llo");
    gguf_w_scalar(w, "u64", GGUF_T_U64, &(uint64_t){ (1ull << 40) + 3 });
    gguf_w_scalar(w, "i64", GGUF_T_I64, &(int64_t){ -(1ll << 40) });
    gguf_w_scalar(w, "f64", GGUF_T_F64, &(double){ 0.1 });
    gguf_w_array(w, "af32", GGUF_T_F32, (const float[]){ 1, -2, 0.25f }, 3);
    gguf_w_array(w, "ai16", GGUF_T_I16, (const int16_t[]){ -7, 9 }, 2);
    gguf_w_array(w, "af64", GGUF_T_F64, (const double[]){ 0.5 }, 1);
    const struct gguf_str ss[3] = { { "a", 1 }, { "", 0 }, { "c\0c", 3 } };
    gguf_w_array_str(w, "astr", ss, 3);
    gguf_w_array(w, "empty", GGUF_T_U8, NULL, 0);
    gguf_w_tensor(w, "half", 3, (const int64_t[]){ 4, 3, 8 }, QT_F16, h);
    gguf_w_tensor(w, "one", 1, (const int64_t[]){ 1 }, QT_F32, &(float){ 2.0f });
    return finish(w);
}

/* Every scalar type read back through the getters. */
START_TEST(test_round_trip_scalars)
{
    int16_t h[96];
    struct buf b = every_type_file(h);
    struct gguf *g = open_ok(&b);
    struct err e;
    uint32_t u;
    int32_t i;
    uint64_t u64;
    float f;
    int bo;
    struct gguf_str s;
    ck_assert_uint_eq(g->version, 2);
    ck_assert_uint_eq(g->alignment, 64);
    ck_assert_uint_eq(g->data_offset % 64, 0);
    ck_assert_int_eq(gguf_get_u32(g, "u8", &u, &e), 1);
    ck_assert_uint_eq(u, 200);
    ck_assert_int_eq(gguf_get_i32(g, "i8", &i, &e), 1);
    ck_assert_int_eq(i, -5);
    ck_assert_int_eq(gguf_get_u32(g, "u16", &u, &e), 1);
    ck_assert_uint_eq(u, 60000);
    ck_assert_int_eq(gguf_get_i32(g, "i16", &i, &e), 1);
    ck_assert_int_eq(i, -30000);
    ck_assert_int_eq(gguf_get_u32(g, "u32", &u, &e), 1);
    ck_assert_uint_eq(u, 4000000000u);
    ck_assert_int_eq(gguf_get_i32(g, "i32", &i, &e), 1);
    ck_assert_int_eq(i, -2000000000);
    ck_assert_int_eq(gguf_get_f32(g, "f32", &f, &e), 1);
    ck_assert(f == 1.5f);
    ck_assert_int_eq(gguf_get_bool(g, "bool", &bo, &e), 1);
    ck_assert_int_eq(bo, 1);
    ck_assert_int_eq(gguf_get_str(g, "str", &s, &e), 1);
    ck_assert(s.len == 6 && memcmp(s.s, "h\xC3\xA9llo", 6) == 0);
    ck_assert_int_eq(gguf_get_u64(g, "u64", &u64, &e), 1);
    ck_assert(u64 == (1ull << 40) + 3);
    ck_assert_int_eq(gguf_get_f32(g, "f64", &f, &e), 1);
    ck_assert(f == 0.1f); /* the double 0.1, rounded to float */
    const struct gguf_kv *kv = gguf_find(g, "i64");
    ck_assert(kv && kv->type == GGUF_T_I64 && kv->bytes == 8);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* Arrays and tensors read back, the tensors at multiples of 64. */
START_TEST(test_round_trip_arrays)
{
    int16_t h[96];
    struct buf b = every_type_file(h);
    struct gguf *g = open_ok(&b);
    struct err e;
    uint64_t u64;
    float af[3];
    ck_assert_int_eq(gguf_get_f32s(g, "af32", af, 3, &e), 1);
    ck_assert(af[0] == 1 && af[1] == -2 && af[2] == 0.25f);
    ck_assert_int_eq(gguf_get_f32s(g, "af64", af, 1, &e), 1);
    ck_assert(af[0] == 0.5f);
    int32_t ai[2];
    ck_assert_int_eq(gguf_get_i32s(g, "ai16", ai, 2, &e), 1);
    ck_assert(ai[0] == -7 && ai[1] == 9);
    struct gguf_str as[3];
    ck_assert_int_eq(gguf_get_strs(g, "astr", as, 3, &e), 1);
    ck_assert(as[0].len == 1 && as[0].s[0] == 'a' && as[1].len == 0);
    ck_assert(as[2].len == 3 && memcmp(as[2].s, "c\0c", 3) == 0);
    ck_assert_int_eq(gguf_get_arr_len(g, "empty", GGUF_T_I32, &u64, &e), 1);
    ck_assert(u64 == 0);
    const struct gguf_tensor *t = gguf_tensor(g, "half");
    ck_assert(t && t->n_dims == 3 && t->ne[2] == 8 && t->bytes == 192 && t->offset == 0);
    ck_assert(memcmp(t->data, h, 192) == 0);
    t = gguf_tensor(g, "one");
    ck_assert(t && t->offset == 192 && t->bytes == 4); /* 192 is a multiple of 64 */
    ck_assert_uint_eq((size_t)((const unsigned char *)t->data - b.p) % 64, 0);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* A file the writer put on disk, through the mapping; never replaced
 * without force. */
START_TEST(test_file)
{
    char dir[] = "/tmp/logitlab-gguf-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.gguf", dir);
    struct err e = { 0, "" };
    struct gguf_writer *w = gguf_w_new();
    gguf_w_str(w, "general.name", "on disk");
    gguf_w_tensor(w, "x", 1, (const int64_t[]){ 2 }, QT_F32, (const float[]){ 3, 4 });
    ck_assert_int_eq(gguf_w_write(w, path, 0, &e), 0);
    ck_assert_int_eq(gguf_w_write(w, path, 0, &e), -1);
    char want[128];
    snprintf(want, sizeof want, "%s exists: add --force to replace it", path);
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_eq(gguf_w_write(w, path, 1, &e), 0);
    gguf_w_free(w);
    struct gguf *g = gguf_open(path, &e);
    ck_assert_msg(g != NULL, "%s", e.msg);
    ck_assert_int_eq(g->mapped, 1);
    float x[2];
    memcpy(x, gguf_tensor(g, "x")->data, sizeof x);
    ck_assert(x[0] == 3 && x[1] == 4);
    gguf_close(g);
    ck_assert_ptr_null(gguf_open(dir, &e));
    snprintf(want, sizeof want, "%s: not a regular file", dir);
    ck_assert_str_eq(e.msg, want);
    unlink(path);
    ck_assert_ptr_null(gguf_open(path, &e));
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_eq(e.code, ERR_USAGE);
    rmdir(dir);
}
END_TEST

/* The writer refuses what it cannot size, and reports it when writing;
 * nothing is left behind. */
START_TEST(test_writer_refuses)
{
    struct err e = { 0, "" };
    unsigned char *p = NULL;
    size_t n = 0;
    struct gguf_writer *w = gguf_w_new();
    ck_assert_int_eq(gguf_w_tensor(w, "iq2", 1, (const int64_t[]){ 256 }, 16, NULL), -1);
    ck_assert_int_eq(gguf_w_tensor(w, "ok", 1, (const int64_t[]){ 1 }, QT_F32, "abcd"), -1);
    ck_assert_int_eq(gguf_w_to_mem(w, &p, &n, &e), -1);
    ck_assert_str_eq(e.msg, "a tensor of a type or shape the writer cannot size: iq2");
    gguf_w_free(w);
    w = gguf_w_new();
    ck_assert_int_eq(gguf_w_tensor(w, "q8", 1, (const int64_t[]){ 33 }, QT_Q8_0, NULL), -1);
    ck_assert_int_eq(gguf_w_tensor(w, "t5", 5, (const int64_t[]){ 1, 1, 1, 1, 1 }, QT_F32, NULL),
                     -1);
    ck_assert_int_eq(gguf_w_write(w, "/tmp/logitlab-gguf-never.gguf", 1, &e), -1);
    ck_assert_str_eq(e.msg, "/tmp/logitlab-gguf-never.gguf: a tensor of a type or shape the "
                            "writer cannot size: q8");
    ck_assert_int_eq(access("/tmp/logitlab-gguf-never.gguf", F_OK), -1);
    gguf_w_free(w);
}
END_TEST

/* ---- bad files ----------------------------------------------------------- */

/* One field of BASE overwritten (width bytes at at, little-endian). */
static const struct patch {
    size_t at;
    int width;
    uint64_t v;
    const char *want;
} PATCHES[] = {
    { 0, 1, 'X', P ": not a GGUF file (it does not start with \"GGUF\")" },
    { 4, 4, 1, P ": GGUF version 1 is not supported (logitlab reads versions 2 and 3)" },
    { 4, 4, 4, P ": GGUF version 4 is not supported (logitlab reads versions 2 and 3)" },
    { 4, 4, 0x03000000, P ": a big-endian GGUF file (logitlab reads little-endian ones)" },
    /* 424 bytes follow the header; a tensor takes at least 33, an entry 14 */
    { 8, 8, 1ull << 33,
      P ": truncated: the header says 5 metadata entries and 8589934592 tensors, more "
        "than the 424 bytes after it can hold" },
    { 16, 8, 31,
      P ": truncated: the header says 31 metadata entries and 2 tensors, more than the 424 "
        "bytes after it can hold" },
    { 24, 8, UINT64_MAX,
      P ": truncated: the key of metadata entry 0 at byte 24 needs "
        "18446744073709551615 bytes, 424 are left" },
    { 24, 8, 0, P ": metadata entry 0 has an empty key" },
    { 48, 8, 1000,
      P ": truncated: the value of 'general.name' at byte 48 needs 1008 bytes, "
        "400 are left" },
    { 107, 1, 'a', P ": metadata key 'general.aaaa' appears twice" },
    { 80, 4, 13, P ": 'general.aaaa' has unknown value type 13" },
    { 135, 4, GGUF_T_ARRAY, P ": 'arr.i32' is an array of arrays (not supported)" },
    { 135, 4, 20, P ": 'arr.i32' is an array of unknown type 20" },
    { 139, 8, 1ull << 62,
      P ": truncated: 'arr.i32' says 4611686018427387904 elements at byte "
        "147, the 301 bytes left hold at most 75" },
    { 175, 1, 2, P ": 'flag' holds a bool of value 2 (0 or 1)" },
    { 176, 8, 65, P ": tensor 0's name is 65 bytes long (GGUF allows 64)" },
    { 176, 8, 0, P ": tensor 0 has an empty name" },
    { 191, 4, 5, P ": tensor 't.first' has 5 dimensions (1 to 4)" },
    { 191, 4, 0, P ": tensor 't.first' has 0 dimensions (1 to 4)" },
    { 195, 8, 0, P ": tensor 't.first' has a dimension of 0" },
    { 195, 8, 1ull << 63, P ": tensor 't.first' has a dimension of 9223372036854775808" },
    /* 2^62 values of 4 bytes: 2^64 bytes */
    { 195, 8, 1ull << 62, P ": tensor 't.first' is too large (its size overflows)" },
    { 211, 4, 16, P ": tensor 't.first' has type IQ2_XXS; logitlab reads " SUPPORTED },
    { 211, 4, 99, P ": tensor 't.first' has type type 99; logitlab reads " SUPPORTED },
    { 243, 8, 48,
      P ": tensor 't.second' has rows of 48 values, not a multiple of Q8_0's "
        "block of 32" },
    { 255, 8, 65,
      P ": tensor 't.second' is at offset 65 of the data section, not a multiple "
        "of the alignment 32" },
    { 255, 8, 128,
      P ": truncated: tensor 't.second' needs bytes 128 to 196 of the data "
        "section, which holds 160" },
    { 255, 8, 32, P ": tensors 't.first' and 't.second' overlap in the data section" },
    { 255, 8, 0, P ": tensors 't.first' and 't.second' overlap in the data section" },
};

START_TEST(test_patched)
{
    const struct patch *q = &PATCHES[_i];
    struct buf b = base_file();
    put_le(b.p + q->at, q->v, q->width);
    expect_bad(b.p, b.n, q->want);
    free(b.p);
}
END_TEST

/* A file cut anywhere before its last tensor ends (byte 420) is refused;
 * from there on only padding is missing. */
START_TEST(test_prefixes)
{
    struct buf b = base_file();
    expect_bad(b.p, 0, P ": empty file (not a GGUF file)");
    expect_bad(b.p, 2, P ": truncated: the header needs 24 bytes, the file has 2");
    expect_bad(b.p, 23, P ": truncated: the header needs 24 bytes, the file has 23");
    expect_bad(b.p, 400,
               P ": truncated: tensor 't.second' needs bytes 64 to 132 of the data "
                 "section, which holds 112");
    for (size_t n = 0; n < b.n; n++) {
        struct err e = { 0, "" };
        struct gguf *g = gguf_open_mem(P, b.p, n, &e);
        ck_assert_msg((g != NULL) == (n >= 420), "prefix of %zu bytes: %s", n, e.msg);
        ck_assert(g || (strncmp(e.msg, P ": ", 8) == 0 && e.code == ERR_USAGE));
        gguf_close(g);
    }
    free(b.p);
}
END_TEST

/* Every byte of BASE set to each of four values: opened or refused with
 * the file's name, never read out of bounds (ASan watches). A changed
 * magic byte is always refused; from byte 263 on (the padding after the
 * descriptors and the tensors' data, which a reader does not interpret)
 * every change is accepted. */
START_TEST(test_every_byte)
{
    struct buf b = base_file();
    unsigned char *c = malloc(b.n);
    for (size_t i = 0; i < b.n; i++) {
        const unsigned char vals[4] = { 0x00, 0xFF, (unsigned char)(b.p[i] ^ 1), 0x80 };
        for (int k = 0; k < 4; k++) {
            memcpy(c, b.p, b.n);
            c[i] = vals[k];
            struct err e = { 0, "" };
            struct gguf *g = gguf_open_mem(P, c, b.n, &e);
            if (!g)
                ck_assert_msg(strncmp(e.msg, P ": ", 8) == 0, "byte %zu: %s", i, e.msg);
            if (i < 4 && vals[k] != b.p[i])
                ck_assert_msg(g == NULL, "magic byte %zu = 0x%02X accepted", i, vals[k]);
            if (i >= 263)
                ck_assert_msg(g != NULL, "byte %zu = 0x%02X: %s", i, vals[k], e.msg);
            gguf_close(g);
        }
    }
    free(c);
    free(b.p);
}
END_TEST

/* Two tensors of one name; an alignment that is not a power of two. */
START_TEST(test_bad_names_alignment)
{
    struct gguf_writer *w = gguf_w_new();
    gguf_w_alignment(w, 64);
    gguf_w_tensor(w, "x.1", 1, (const int64_t[]){ 1 }, QT_F32, (const float[]){ 1 });
    gguf_w_tensor(w, "x.2", 1, (const int64_t[]){ 1 }, QT_F32, (const float[]){ 2 });
    struct buf b = finish(w);
    size_t a = find(&b, "general.alignment") + 17 + 4; /* the value after key and type */
    put_le(b.p + a, 24, 4);
    expect_bad(b.p, b.n, P ": general.alignment is 24, not a power of two");
    put_le(b.p + a, 0, 4);
    expect_bad(b.p, b.n, P ": general.alignment is 0, not a power of two");
    put_le(b.p + a, 64, 4);
    put_le(b.p + a - 4, GGUF_T_F32, 4);
    expect_bad(b.p, b.n, P ": 'general.alignment' has type f32, not an integer");
    put_le(b.p + a - 4, GGUF_T_U32, 4);
    b.p[find(&b, "x.2") + 2] = '1';
    expect_bad(b.p, b.n, P ": tensor name 'x.1' appears twice");
    free(b.p);
}
END_TEST

/* ---- getters ------------------------------------------------------------- */

START_TEST(test_getters)
{
    struct gguf_writer *w = gguf_w_new();
    gguf_w_i32(w, "neg", -1);
    gguf_w_scalar(w, "big", GGUF_T_U64, &(uint64_t){ 1ull << 32 });
    gguf_w_scalar(w, "huge", GGUF_T_F64, &(double){ 1e300 });
    gguf_w_str(w, "s", "x");
    gguf_w_scalar(w, "byte", GGUF_T_U8, &(uint8_t){ 1 });
    gguf_w_array(w, "ints", GGUF_T_I64, (const int64_t[]){ 1, -(1ll << 40) }, 2);
    struct buf b = finish(w);
    struct gguf *g = open_ok(&b);
    struct err e;
    uint32_t u = 77;
    int32_t i;
    float f;
    int bo;
    struct gguf_str s;
    uint64_t n;
    ck_assert_int_eq(gguf_get_u32(g, "absent", &u, &e), 0);
    ck_assert_uint_eq(u, 77);
    ck_assert_int_eq(gguf_get_u32(g, "neg", &u, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'neg' is -1, outside 0 to 4294967295");
    ck_assert_int_eq(gguf_get_u32(g, "big", &u, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'big' is 4294967296, outside 0 to 4294967295");
    ck_assert_int_eq(gguf_get_i32(g, "big", &i, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'big' is 4294967296, outside -2147483648 to 2147483647");
    ck_assert_int_eq(gguf_get_u32(g, "s", &u, &e), -1);
    ck_assert_str_eq(e.msg, P ": 's' has type string, not an integer");
    ck_assert_int_eq(gguf_get_u32(g, "ints", &u, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'ints' has type array, not an integer");
    ck_assert_int_eq(gguf_get_f32(g, "huge", &f, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'huge' is beyond the range of a float");
    ck_assert_int_eq(gguf_get_f32(g, "neg", &f, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'neg' has type i32, not a float");
    ck_assert_int_eq(gguf_get_bool(g, "byte", &bo, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'byte' has type u8, not a bool");
    ck_assert_int_eq(gguf_get_str(g, "byte", &s, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'byte' has type u8, not a string");
    ck_assert_int_eq(gguf_get_arr_len(g, "s", GGUF_T_STRING, &n, &e), -1);
    ck_assert_str_eq(e.msg, P ": 's' has type string, not an array");
    ck_assert_int_eq(gguf_get_arr_len(g, "ints", GGUF_T_STRING, &n, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'ints' is an array of i64, not of strings");
    int32_t v[3];
    ck_assert_int_eq(gguf_get_i32s(g, "ints", v, 3, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'ints' has 2 elements, expected 3");
    ck_assert_int_eq(gguf_get_i32s(g, "ints", v, 2, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'ints' element 1 is -1099511627776, outside -2147483648 to "
                              "2147483647");
    ck_assert_int_eq(gguf_get_f32s(g, "ints", &f, 2, &e), -1);
    ck_assert_str_eq(e.msg, P ": 'ints' is an array of i64, not of floats");
    ck_assert_int_eq(gguf_get_u32(g, "byte", &u, &e), 1); /* a u8 is an integer */
    ck_assert_uint_eq(u, 1);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* ---- escaping ------------------------------------------------------------ */

START_TEST(test_escape)
{
    char buf[128];
    /* newline, a C0 control, DEL, backslash, é, an invalid byte, a lone lead byte */
    gguf_escape("a\nb\x01\x7F\\\xC3\xA9\xFF\xC3", 10, buf, sizeof buf);
    ck_assert_str_eq(buf, "a\\nb\\x01\\x7F\\\\\xC3\xA9\\xFF\\xC3");
    gguf_escape("\xC2\x85|\xC0\xAF|\xED\xA0\x80|\xF4\x90\x80\x80", 14, buf, sizeof buf);
    ck_assert_str_eq(buf, "\\xC2\\x85|\\xC0\\xAF|\\xED\\xA0\\x80|\\xF4\\x90\\x80\\x80");
    gguf_escape("a\0b", 3, buf, sizeof buf); /* NUL inside: strings have lengths */
    ck_assert_str_eq(buf, "a\\x00b");
    gguf_escape("\xE2\x96\x81the \xF0\x9F\x98\x80", 11, buf, sizeof buf);
    ck_assert_str_eq(buf, "\xE2\x96\x81the \xF0\x9F\x98\x80");
    /* cut with dots, never inside a piece */
    ck_assert_uint_eq(gguf_escape("abcdefghij", 10, buf, 8), 7);
    ck_assert_str_eq(buf, "abcd...");
    ck_assert_uint_eq(gguf_escape("\x1b\x1b\x1b", 3, buf, 10), 7);
    ck_assert_str_eq(buf, "\\x1B...");
    ck_assert_uint_eq(gguf_escape("abcdefg", 7, buf, 8), 7);
    ck_assert_str_eq(buf, "abcdefg");
}
END_TEST

/* Each block type's sizes as the reader applies them (ggml-common.h's
 * static_asserts), its rows a whole number of blocks, its data inside the
 * file: a tensor "w" of 3 rows of 2 blocks (after the header (24), "w"'s
 * descriptor (8 + 1 + 4 + 16 + 4 + 8 = 41), padding to 96) opens with 6
 * blocks of bytes; rows of 1.5 blocks are refused, and so is the file cut
 * one byte short of the data. */
static const struct {
    int type, block, bytes;
    const char *name;
} BLOCK_TYPES[] = {
    { QT_Q8_0, 32, 34, "Q8_0" },   { QT_Q4_0, 32, 18, "Q4_0" },   { QT_Q4_1, 32, 20, "Q4_1" },
    { QT_Q5_0, 32, 22, "Q5_0" },   { QT_Q5_1, 32, 24, "Q5_1" },   { QT_IQ4_NL, 32, 18, "IQ4_NL" },
    { QT_Q2_K, 256, 84, "Q2_K" },  { QT_Q3_K, 256, 110, "Q3_K" }, { QT_Q4_K, 256, 144, "Q4_K" },
    { QT_Q5_K, 256, 176, "Q5_K" }, { QT_Q6_K, 256, 210, "Q6_K" }, { QT_IQ4_XS, 256, 136, "IQ4_XS" },
};

START_TEST(test_block_types)
{
    int type = BLOCK_TYPES[_i].type, block = BLOCK_TYPES[_i].block, bytes = BLOCK_TYPES[_i].bytes;
    unsigned char *data = calloc(6, (size_t)bytes);
    struct gguf_writer *w = gguf_w_new();
    ck_assert_int_eq(gguf_w_tensor(w, "w", 2, (const int64_t[]){ 2 * block, 3 }, type, data), 0);
    struct buf b = finish(w);
    struct gguf *g = open_ok(&b);
    const struct gguf_tensor *t = gguf_tensor(g, "w");
    ck_assert_uint_eq(g->data_offset, 96);
    ck_assert_int_eq(t->type, type);
    ck_assert_uint_eq(t->bytes, 6 * (size_t)bytes);
    gguf_close(g);
    char want[200];
    snprintf(want, sizeof want,
             P ": truncated: tensor 'w' needs bytes 0 to %d of the data section, "
               "which holds %d",
             6 * bytes, 6 * bytes - 1);
    expect_bad(b.p, 96 + 6 * (size_t)bytes - 1, want);
    put_le(b.p + 24 + 8 + 1 + 4, (uint64_t)(3 * block / 2), 8); /* ne[0], after the name, n_dims */
    snprintf(want, sizeof want,
             P ": tensor 'w' has rows of %d values, not a multiple of %s's block of %d",
             3 * block / 2, BLOCK_TYPES[_i].name, block);
    expect_bad(b.p, b.n, want);
    free(b.p);
    free(data);
}
END_TEST

/* A refusal naming a tensor prints it escaped: a terminal never sees ESC. */
START_TEST(test_escaped_message)
{
    struct gguf_writer *w = gguf_w_new();
    gguf_w_tensor(w, "x\x1b[2J", 1, (const int64_t[]){ 1 }, QT_F32, (const float[]){ 1 });
    struct buf b = finish(w);
    put_le(b.p + find(&b, "x\x1b[2J") + 5 + 4 + 8, 16, 4);
    expect_bad(b.p, b.n, P ": tensor 'x\\x1B[2J' has type IQ2_XXS; logitlab reads " SUPPORTED);
    free(b.p);
}
END_TEST

/* ---- llama --------------------------------------------------------------- */

/* The tiny model: width 8, 2 heads of 4, 1 KV head (K and V 4 wide), FFN
 * 16, 2 layers, 6 SentencePiece tokens; F32 zeros (the loader never reads
 * a weight but rope_freqs.weight's). A spec changes one thing. */
struct model_spec {
    const char *drop;  /* a key or a tensor left out */
    const char *wide;  /* a tensor with one more row */
    const char *extra; /* one more tensor, [8] */
    int embd_rows;     /* rows of token_embd.weight, when not 6 */
    int norm_type;     /* output_norm.weight's type, when not F32 */
    int untied;        /* output.weight written */
    int rope_freqs;    /* rope_freqs.weight's length (0: none) */
    int qwen2;         /* architecture qwen2: its keys, and biases on Q, K and V */
    int qwen3;         /* architecture qwen3: heads of 8 (key_length), Q and K norms */
    int phi3;          /* architecture phi3: 1 Q, K and V fused (attn_qkv [8, 16]), 2 apart;
                        * the gate and up fused (ffn_up [8, 32]); rope_factors_long/short [2],
                        * original context 32, attention factor 1.5 */
    int gemma3;        /* architecture gemma3: as qwen3, with the post norms [8] and a window */
    int gemma2;        /* architecture gemma2: heads of 4, the post norms, no Q and K norms */
    void (*keys)(struct gguf_writer *w);
};

static int kept(const struct model_spec *m, const char *name)
{
    return !m->drop || strcmp(m->drop, name) != 0;
}

static void model_keys(struct gguf_writer *w, const struct model_spec *m)
{
    const struct {
        const char *key;
        uint32_t v;
    } U[] = {
        { "llama.block_count", 2 },
        { "llama.context_length", 64 },
        { "llama.embedding_length", 8 },
        { "llama.feed_forward_length", 16 },
        { "llama.attention.head_count", 2 },
        { "llama.attention.head_count_kv", 1 },
        { "tokenizer.ggml.bos_token_id", 1 },
        { "tokenizer.ggml.eos_token_id", 2 },
        { "tokenizer.ggml.unknown_token_id", 0 },
    };
    const struct gguf_str tokens[6] = { { "<unk>", 5 },
                                        { "<s>", 3 },
                                        { "</s>", 4 },
                                        { "\xE2\x96\x81"
                                          "a",
                                          4 },
                                        { "a", 1 },
                                        { "b", 1 } };
    const char *arch = m->qwen2    ? "qwen2"
                       : m->qwen3  ? "qwen3"
                       : m->phi3   ? "phi3"
                       : m->gemma3 ? "gemma3"
                       : m->gemma2 ? "gemma2"
                                   : "llama";
    char key[64];
    if (m->gemma3 && kept(m, "gemma3.attention.sliding_window"))
        gguf_w_u32(w, "gemma3.attention.sliding_window", 512);
    if (m->phi3 && kept(m, "phi3.rope.scaling.original_context_length"))
        gguf_w_u32(w, "phi3.rope.scaling.original_context_length", 32);
    if (m->phi3)
        gguf_w_f32(w, "phi3.rope.scaling.attn_factor", 1.5f);
    snprintf(key, sizeof key, "%s.attention.key_length", arch);
    if ((m->qwen3 || m->gemma3) && kept(m, key))
        gguf_w_u32(w, key, 8);
    if (kept(m, "general.architecture"))
        gguf_w_str(w, "general.architecture", arch);
    for (size_t i = 0; i < sizeof U / sizeof U[0]; i++) {
        int prefixed = strncmp(U[i].key, "llama.", 6) == 0;
        snprintf(key, sizeof key, "%s%s", prefixed ? arch : "", U[i].key + (prefixed ? 5 : 0));
        if (kept(m, key))
            gguf_w_u32(w, key, U[i].v);
    }
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", arch);
    if (kept(m, key))
        gguf_w_f32(w, key, 1e-5f);
    if (kept(m, "tokenizer.ggml.model"))
        gguf_w_str(w, "tokenizer.ggml.model", "llama");
    if (kept(m, "tokenizer.ggml.tokens"))
        gguf_w_array_str(w, "tokenizer.ggml.tokens", tokens, 6);
    if (kept(m, "tokenizer.ggml.scores"))
        gguf_w_array(w, "tokenizer.ggml.scores", GGUF_T_F32, (const float[]){ 0, 0, 0, -1, -2, -3 },
                     6);
    if (kept(m, "tokenizer.ggml.token_type"))
        gguf_w_array(w, "tokenizer.ggml.token_type", GGUF_T_I32,
                     (const int32_t[]){ 2, 3, 3, 1, 1, 1 }, 6);
    gguf_w_str(w, "tokenizer.chat_template", "{{ x }}");
    if (m->keys)
        m->keys(w);
}

/* The names and shapes of a layer's tensors in m's file. */
static int layer_parts(const struct model_spec *m, int64_t hd, char names[][40], int64_t *ne)
{
    int64_t q = 2 * hd; /* 2 heads, 1 KV head */
    static const char *const PHI3[] = { "attn_norm", "attn_qkv", "attn_output",
                                        "ffn_norm",  "ffn_down", "ffn_up" };
    const struct {
        const char *part;
        int64_t ne0, ne1;
    } L[] = { { "attn_norm", 8, 0 },    { "attn_q", 8, q },       { "attn_k", 8, hd },
              { "attn_v", 8, hd },      { "attn_output", q, 8 },  { "ffn_norm", 8, 0 },
              { "ffn_gate", 8, 16 },    { "ffn_down", 16, 8 },    { "ffn_up", 8, 16 },
              { "attn_q_norm", hd, 0 }, { "attn_k_norm", hd, 0 }, { "post_attention_norm", 8, 0 },
              { "post_ffw_norm", 8, 0 } };
    if (m->phi3 == 1) { /* fused: [8, q + 2 hd], ffn_up [8, 32] */
        const int64_t P3[][2] = { { 8, 0 }, { 8, q + 2 * hd }, { q, 8 },
                                  { 8, 0 }, { 16, 8 },         { 8, 32 } };
        for (int k = 0; k < 6; k++) {
            snprintf(names[k], 40, "%s.weight", PHI3[k]);
            ne[2 * k] = P3[k][0], ne[2 * k + 1] = P3[k][1];
        }
        return 6;
    }
    int n = 0;
    int gemma = m->gemma2 || m->gemma3;
    for (int k = 0; k < 9 + 3 * m->qwen2 + 2 * (m->qwen3 || gemma) + 2 * gemma; k++) {
        int bias = k >= 9 && m->qwen2; /* attn_q, attn_k, attn_v's, [8] [4] [4] */
        int j = bias ? k - 8 : k;
        if (m->gemma2 && (j == 9 || j == 10))
            continue; /* Gemma 2 has no Q and K norms */
        if (m->phi3 && strcmp(L[j].part, "ffn_gate") == 0)
            continue; /* phi3 with Q, K and V apart: still the fused ffn_up */
        snprintf(names[n], 40, "%s.%s", L[j].part, bias ? "bias" : "weight");
        ne[2 * n] = bias ? L[j].ne1 : L[j].ne0;
        ne[2 * n + 1] = bias ? 0 : m->phi3 && strcmp(L[j].part, "ffn_up") == 0 ? 32 : L[j].ne1;
        n++;
    }
    return n;
}

static struct buf model_file(const struct model_spec *m)
{
    static const float z[512]; /* the widest tensor: ffn_up [8, 33] */
    const float rope[4] = { 1, 8, 1, 1 };
    struct gguf_writer *w = gguf_w_new();
    model_keys(w, m);
    struct {
        char name[40];
        int64_t ne0, ne1;
    } t[40] = { { "token_embd.weight", 8, m->embd_rows ? m->embd_rows : 6 },
                { "output_norm.weight", 8, 0 },
                { "output.weight", 8, m->untied ? 6 : -1 },
                { "rope_freqs.weight", m->rope_freqs, m->rope_freqs ? 0 : -1 },
                { "", 8, m->extra ? 0 : -1 },
                { "rope_factors_long.weight", 2, m->phi3 ? 0 : -1 },
                { "rope_factors_short.weight", 2, m->phi3 ? 0 : -1 } };
    snprintf(t[4].name, sizeof t[4].name, "%s", m->extra ? m->extra : "");
    char names[16][40];
    int64_t ne[32];
    int parts = layer_parts(m, m->qwen3 || m->gemma3 ? 8 : 4, names, ne), n = 7;
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < parts; k++, n++) {
            snprintf(t[n].name, sizeof t[n].name, "blk.%d.%s", l, names[k]);
            t[n].ne0 = ne[2 * k];
            t[n].ne1 = ne[2 * k + 1];
        }
    for (int i = 0; i < n; i++) {
        int64_t e[2] = { t[i].ne0, t[i].ne1 };
        if (t[i].ne1 < 0 || !kept(m, t[i].name))
            continue;
        if (m->wide && strcmp(m->wide, t[i].name) == 0)
            e[1] += e[1] ? 1 : 2;
        int type = i == 1 && m->norm_type ? m->norm_type : QT_F32;
        gguf_w_tensor(w, t[i].name, e[1] ? 2 : 1, e, type, i == 3 || i == 5 || i == 6 ? rope : z);
    }
    return finish(w);
}

/* Loads m's file: the model, or NULL with e. */
static struct gguf_llama *load(const struct model_spec *m, struct buf *b, struct gguf **g,
                               struct err *e)
{
    *b = model_file(m);
    *g = gguf_open_mem(P, b->p, b->n, e);
    ck_assert_msg(*g != NULL, "%s", e->msg);
    return gguf_llama_new(*g, e);
}

START_TEST(test_llama_ok)
{
    struct buf b;
    struct gguf *g;
    struct err e;
    struct gguf_llama *L = load(&(struct model_spec){ 0 }, &b, &g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    const struct llama_hparams *hp = &L->model.hp;
    ck_assert(hp->n_layer == 2 && hp->n_embd == 8 && hp->n_head == 2 && hp->n_head_kv == 1);
    ck_assert(hp->n_ff == 16 && hp->n_vocab == 6 && hp->head_dim == 4 && hp->n_ctx_train == 64);
    ck_assert(hp->rms_eps == 1e-5f && hp->rope_base == 10000.0f && hp->rope_factor == 0);
    ck_assert_int_eq(L->model.tied, 1);
    ck_assert_ptr_eq(L->model.output.data, gguf_tensor(g, "token_embd.weight")->data);
    ck_assert(L->model.output.rows == 6 && L->model.output.cols == 8);
    const struct llama_layer *l1 = &L->model.layers[1];
    ck_assert_ptr_eq(l1->w_down.data, gguf_tensor(g, "blk.1.ffn_down.weight")->data);
    ck_assert(l1->w_down.rows == 8 && l1->w_down.cols == 16 && l1->w_down.type == QT_F32);
    ck_assert(l1->wk.rows == 4 && l1->wk.cols == 8 && l1->ffn_norm.rows == 1);
    ck_assert_ptr_null(L->model.rope_freqs);
    ck_assert_str_eq(L->rope_scaling, "none");
    const struct tok_spec *t = &L->tok;
    ck_assert(t->kind == TOK_SPM && t->n == 6 && t->n_merges == 0 && t->pre.len == 0);
    ck_assert(t->bos == 1 && t->eos == 2 && t->unk == 0 && t->eot == -1 && t->pad == -1);
    ck_assert(t->add_bos == -1 && t->add_space_prefix == 1); /* absent: the kind's default */
    ck_assert(t->text[3].len == 4 && memcmp(t->text[3].s,
                                            "\xE2\x96\x81"
                                            "a",
                                            4) == 0);
    ck_assert(t->scores[5] == -3.0f && t->types[0] == TOKT_UNKNOWN && t->types[1] == TOKT_CONTROL);
    ck_assert(L->has_chat_template && L->chat_template.len == 7);
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* The same model as a qwen2 file (gguf/arch.def): its keys read under its
 * prefix, its biases taken, its switches set for the forward pass. */
START_TEST(test_qwen2_ok)
{
    struct buf b;
    struct gguf *g;
    struct err e;
    struct gguf_llama *L = load(&(struct model_spec){ .qwen2 = 1 }, &b, &g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    ck_assert_str_eq(L->arch->name, "qwen2");
    const struct llama_hparams *hp = &L->model.hp;
    ck_assert_uint_eq(hp->switches, LLAMA_SW_QKV_BIAS | LLAMA_SW_ROPE_NEOX);
    ck_assert(hp->n_layer == 2 && hp->n_embd == 8 && hp->n_head_kv == 1 && hp->n_ff == 16);
    const struct llama_layer *l1 = &L->model.layers[1];
    ck_assert_ptr_eq(l1->bk.data, gguf_tensor(g, "blk.1.attn_k.bias")->data);
    ck_assert(l1->bq.cols == 8 && l1->bk.cols == 4 && l1->bv.cols == 4 && l1->bv.rows == 1);
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* Chat templates by family, in llama.cpp's order of detection: the markers
 * of each (the templates here are shortened from the models' own). */
START_TEST(test_chat_formats)
{
    static const struct {
        const char *tmpl, *want;
    } T[] = {
        { "{{ '<|im_start|>' + message['role'] + '\\n' }}", "ChatML (<|im_start|>)" },
        { "{{ bos_token }}[INST] {{ m }} [/INST]", "Llama 2's [INST]" },
        { "{{'<|user|>' + '\\n' + m + '<|end|>' + '\\n' + '<|assistant|>' + '\\n'}}",
          "Phi-3's <|user|>" },
        { "<start_of_turn>user\n{{ m }}<end_of_turn>", "Gemma's <start_of_turn>" },
        { "<|start_header_id|>{{ r }}<|end_header_id|>", "Llama 3's headers" },
        /* both ChatML's and Llama 3's markers: ChatML, checked first */
        { "<|im_start|><|start_header_id|><|end_header_id|>", "ChatML (<|im_start|>)" },
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        const struct chat_format *f = chat_format_of(T[i].tmpl, strlen(T[i].tmpl));
        ck_assert_msg(f != NULL, "%s", T[i].tmpl);
        ck_assert_str_eq(f->name, T[i].want);
    }
    /* Phi-3's needs both of its markers; none of them: no format. */
    ck_assert_ptr_null(chat_format_of("<|assistant|>", 13));
    ck_assert_ptr_null(chat_format_of("{{ x }}", 7));
    ck_assert_ptr_null(chat_format_of(NULL, 0));
}
END_TEST

/* A qwen3 file: heads of 8 from attention.key_length (the width over the
 * heads is 4), Q 16 wide, the per-head norms taken, the switches set. */
START_TEST(test_qwen3_ok)
{
    struct buf b;
    struct gguf *g;
    struct err e;
    struct gguf_llama *L = load(&(struct model_spec){ .qwen3 = 1 }, &b, &g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    const struct llama_hparams *hp = &L->model.hp;
    ck_assert_uint_eq(hp->switches, LLAMA_SW_ROPE_NEOX | LLAMA_SW_QK_NORM);
    ck_assert_int_eq(hp->head_dim, 8);
    const struct llama_layer *l0 = &L->model.layers[0];
    ck_assert(l0->wq.rows == 16 && l0->wq.cols == 8 && l0->wo.rows == 8 && l0->wo.cols == 16);
    ck_assert_ptr_eq(l0->k_norm.data, gguf_tensor(g, "blk.0.attn_k_norm.weight")->data);
    ck_assert(l0->q_norm.cols == 8 && l0->k_norm.cols == 8);
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* A phi3 file: Q, K and V cut from attn_qkv's rows (8, 4, 4 of them, 8
 * floats each), the gate and the up from ffn_up's halves (16 rows each),
 * the long and short factors and the keys that choose and scale them.
 * With Q, K and V apart (as llama.cpp also takes them) it loads too. */
START_TEST(test_phi3_ok)
{
    struct buf b;
    struct gguf *g;
    struct err e;
    struct gguf_llama *L = load(&(struct model_spec){ .phi3 = 1 }, &b, &g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    const struct llama_hparams *hp = &L->model.hp;
    ck_assert_uint_eq(hp->switches, LLAMA_SW_ROPE_NEOX | LLAMA_SW_FUSED_QKV | LLAMA_SW_FUSED_UP);
    const struct llama_layer *l1 = &L->model.layers[1];
    const char *qkv = gguf_tensor(g, "blk.1.attn_qkv.weight")->data;
    const char *up = gguf_tensor(g, "blk.1.ffn_up.weight")->data;
    ck_assert(l1->wq.data == qkv && l1->wk.data == qkv + 8 * 8 * 4 &&
              l1->wv.data == qkv + 12 * 8 * 4);
    ck_assert(l1->wq.rows == 8 && l1->wk.rows == 4 && l1->wv.rows == 4 && l1->wv.cols == 8);
    ck_assert(l1->w_gate.data == up && l1->w_up.data == up + 16 * 8 * 4);
    ck_assert(l1->w_gate.rows == 16 && l1->w_up.rows == 16 && l1->w_up.cols == 8);
    ck_assert_ptr_eq(L->model.rope_long, gguf_tensor(g, "rope_factors_long.weight")->data);
    ck_assert_ptr_eq(L->model.rope_short, gguf_tensor(g, "rope_factors_short.weight")->data);
    ck_assert(hp->rope_orig_ctx == 32 && hp->rope_attn_factor == 1.5f);
    ck_assert_str_eq(L->rope_scaling, "long or short factors (rope_factors_*.weight)");
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
    L = load(&(struct model_spec){ .phi3 = 2 }, &b, &g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    ck_assert_ptr_eq(L->model.layers[0].wk.data, gguf_tensor(g, "blk.0.attn_k.weight")->data);
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* A gemma3 file: Qwen 3's per-head norms and head size, the post norms,
 * the window with its defaults (pattern 6, base 10,000) and the switches
 * that scale the embedding and use GELU. */
START_TEST(test_gemma3_ok)
{
    struct buf b;
    struct gguf *g;
    struct err e;
    struct gguf_llama *L = load(&(struct model_spec){ .gemma3 = 1 }, &b, &g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    const struct llama_hparams *hp = &L->model.hp;
    ck_assert_uint_eq(hp->switches, LLAMA_SW_ROPE_NEOX | LLAMA_SW_QK_NORM | LLAMA_SW_EMBD_SCALE |
                                        LLAMA_SW_POST_NORMS | LLAMA_SW_GELU | LLAMA_SW_SWA);
    ck_assert(hp->head_dim == 8 && hp->n_swa == 512 && hp->swa_pattern == 6);
    ck_assert(hp->rope_base_swa == 10000.0f && hp->attn_scale == 0.0f);
    const struct llama_layer *l1 = &L->model.layers[1];
    ck_assert_ptr_eq(l1->attn_post_norm.data,
                     gguf_tensor(g, "blk.1.post_attention_norm.weight")->data);
    ck_assert_ptr_eq(l1->ffn_post_norm.data, gguf_tensor(g, "blk.1.post_ffw_norm.weight")->data);
    ck_assert(l1->q_norm.cols == 8 && l1->ffn_post_norm.cols == 8);
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
}
END_TEST

static void k_rot(struct gguf_writer *w, const char *arch, const char *key, uint32_t v)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%s", arch, key);
    gguf_w_u32(w, name, v);
}
static void k_q3_rot3(struct gguf_writer *w)
{
    k_rot(w, "qwen3", "rope.dimension_count", 3);
}
static void k_q3_rot10(struct gguf_writer *w)
{
    k_rot(w, "qwen3", "rope.dimension_count", 10);
}
static void k_q3_rot4(struct gguf_writer *w)
{
    k_rot(w, "qwen3", "rope.dimension_count", 4);
}
static void k_q3_rot4_swa8(struct gguf_writer *w)
{
    k_q3_rot4(w);
    k_rot(w, "qwen3", "rope.dimension_count_swa", 8);
}
static void k_g3_key16(struct gguf_writer *w)
{
    k_rot(w, "gemma3", "attention.key_length_swa", 16);
}
static void k_phi3_rot2(struct gguf_writer *w)
{
    k_rot(w, "phi3", "rope.dimension_count", 2);
}

/* A head that turns only its first values (Phi-4-mini: 96 of 128): qwen3's
 * heads of 8 with rope.dimension_count 4 load with n_rot 4; without the key
 * the whole head turns. (The bad counts: BAD below.) */
START_TEST(test_partial_rot_ok)
{
    struct buf b;
    struct gguf *g;
    struct err e;
    for (int k = 0; k < 2; k++) {
        struct model_spec m = { .qwen3 = 1, .keys = k ? k_q3_rot4 : NULL };
        struct gguf_llama *L = load(&m, &b, &g, &e);
        ck_assert_msg(L != NULL, "%s", e.msg);
        ck_assert_int_eq(L->model.hp.head_dim, 8);
        ck_assert_int_eq(L->model.hp.n_rot, k ? 4 : 8);
        gguf_llama_free(L);
        gguf_close(g);
        free(b.p);
    }
}
END_TEST

static void k_g2_caps(struct gguf_writer *w)
{
    gguf_w_f32(w, "gemma2.attn_logit_softcapping", 40.0f);
    gguf_w_f32(w, "gemma2.final_logit_softcapping", 20.0f);
}
static void k_g2_cap0(struct gguf_writer *w)
{
    gguf_w_f32(w, "gemma2.final_logit_softcapping", 0.0f);
}

/* A gemma2 file: Gemma 3's switches but the Q and K norms, and the
 * soft-caps; llama.cpp's defaults where the file is silent (window 4,096,
 * every other layer sliding, the sliding layers turning by the global
 * base, caps 50 on the scores and 30 on the logits), the file's values
 * where it says. */
START_TEST(test_gemma2_ok)
{
    struct buf b;
    struct gguf *g;
    struct err e;
    for (int k = 0; k < 2; k++) {
        struct model_spec m = { .gemma2 = 1, .keys = k ? k_g2_caps : NULL };
        struct gguf_llama *L = load(&m, &b, &g, &e);
        ck_assert_msg(L != NULL, "%s", e.msg);
        const struct llama_hparams *hp = &L->model.hp;
        ck_assert_uint_eq(hp->switches, LLAMA_SW_ROPE_NEOX | LLAMA_SW_EMBD_SCALE |
                                            LLAMA_SW_POST_NORMS | LLAMA_SW_GELU | LLAMA_SW_SWA |
                                            LLAMA_SW_SOFTCAP);
        ck_assert(hp->head_dim == 4 && hp->n_swa == 4096 && hp->swa_pattern == 2);
        ck_assert(hp->rope_base_swa == hp->rope_base && hp->attn_scale == 0.0f);
        ck_assert(hp->attn_softcap == (k ? 40.0f : 50.0f));
        ck_assert(hp->final_softcap == (k ? 20.0f : 30.0f));
        ck_assert_ptr_null(L->model.layers[0].q_norm.data);
        gguf_llama_free(L);
        gguf_close(g);
        free(b.p);
    }
}
END_TEST

static void k_softcap(struct gguf_writer *w)
{
    gguf_w_f32(w, "gemma3.final_logit_softcapping", 30.0f);
}

static void k_longrope(struct gguf_writer *w)
{
    gguf_w_str(w, "phi3.rope.scaling.type", "longrope");
}

static void keys_linear(struct gguf_writer *w)
{
    gguf_w_str(w, "llama.rope.scaling.type", "linear");
    gguf_w_f32(w, "llama.rope.scaling.factor", 4.0f);
}

static void keys_llama3(struct gguf_writer *w)
{
    gguf_w_str(w, "llama.rope.scaling.type", "llama3");
    gguf_w_f32(w, "llama.rope.scaling.factor", 8.0f);
    gguf_w_u32(w, "llama.rope.scaling.original_context_length", 8192);
}

/* rope_freqs.weight as it is stored, times a linear factor, or the llama3
 * keys for the forward pass's formula; an untied head. */
START_TEST(test_llama_rope)
{
    struct buf b;
    struct gguf *g;
    struct err e;
    struct gguf_llama *L = load(&(struct model_spec){ .rope_freqs = 2, .untied = 1 }, &b, &g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    ck_assert_ptr_eq(L->model.rope_freqs, gguf_tensor(g, "rope_freqs.weight")->data);
    ck_assert(L->model.rope_freqs[0] == 1.0f && L->model.rope_freqs[1] == 8.0f);
    ck_assert_str_eq(L->rope_scaling, "llama3 (rope_freqs.weight)");
    ck_assert_int_eq(L->model.tied, 0);
    ck_assert_ptr_eq(L->model.output.data, gguf_tensor(g, "output.weight")->data);
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
    L = load(&(struct model_spec){ .rope_freqs = 2, .keys = keys_linear }, &b, &g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    ck_assert(L->model.rope_freqs[0] == 4.0f && L->model.rope_freqs[1] == 32.0f);
    ck_assert_str_eq(L->rope_scaling, "linear");
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
    L = load(&(struct model_spec){ .keys = keys_llama3 }, &b, &g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    const struct llama_hparams *hp = &L->model.hp;
    ck_assert(hp->rope_factor == 8.0f && hp->rope_orig_ctx == 8192);
    ck_assert(hp->rope_low_freq == 1.0f && hp->rope_high_freq == 4.0f); /* the defaults */
    ck_assert_ptr_null(L->model.rope_freqs);
    ck_assert_str_eq(L->rope_scaling, "llama3");
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
}
END_TEST

static void k_mamba(struct gguf_writer *w)
{
    gguf_w_str(w, "general.architecture", "mamba");
}
static void k_esc(struct gguf_writer *w)
{
    gguf_w_str(w, "general.architecture", "ll\x1b[0mama");
}
static void k_experts(struct gguf_writer *w)
{
    gguf_w_u32(w, "llama.expert_count", 8);
}
static void k_blocks0(struct gguf_writer *w)
{
    gguf_w_u32(w, "llama.block_count", 0);
}
static void k_kv3(struct gguf_writer *w)
{
    gguf_w_u32(w, "llama.attention.head_count_kv", 3);
}
static void k_embd9(struct gguf_writer *w)
{
    gguf_w_u32(w, "llama.embedding_length", 9);
}
static void k_dim8(struct gguf_writer *w)
{
    gguf_w_u32(w, "llama.rope.dimension_count", 8);
}
static void k_eps0(struct gguf_writer *w)
{
    gguf_w_f32(w, "llama.attention.layer_norm_rms_epsilon", 0.0f);
}
static void k_vocab7(struct gguf_writer *w)
{
    gguf_w_u32(w, "llama.vocab_size", 7);
}
static void k_bert(struct gguf_writer *w)
{
    gguf_w_str(w, "tokenizer.ggml.model", "bert");
}
/* Gemma 4's BPE needs its merges, as llama.cpp says too. */
static void k_gemma4(struct gguf_writer *w)
{
    gguf_w_str(w, "tokenizer.ggml.model", "gemma4");
}
static void k_bos6(struct gguf_writer *w)
{
    gguf_w_u32(w, "tokenizer.ggml.bos_token_id", 6);
}
static void k_add_bos(struct gguf_writer *w)
{
    gguf_w_bool(w, "tokenizer.ggml.add_bos_token", 1);
}
/* A pre-tokenizer logitlab lacks, in a file with more faults after it
 * (BPE without merges, a vocabulary size that disagrees). */
static void k_pre_qwen3(struct gguf_writer *w)
{
    gguf_w_str(w, "tokenizer.ggml.model", "gpt2");
    gguf_w_str(w, "tokenizer.ggml.pre", "qwen3");
    gguf_w_u32(w, "llama.vocab_size", 7);
}
#define PRE_HAS                                                                                    \
    "(logitlab has llama-bpe, dbrx, qwen2, qwen35, gpt-4o, starcoder, gpt-2, falcon, "             \
    "deepseek-coder, default, and their aliases: doc/gguf.md)"
static void k_scores5(struct gguf_writer *w)
{
    gguf_w_array(w, "tokenizer.ggml.scores", GGUF_T_F32, (const float[]){ 0, 0, 0, 0, 0 }, 5);
}
static void k_type9(struct gguf_writer *w)
{
    gguf_w_array(w, "tokenizer.ggml.token_type", GGUF_T_I32, (const int32_t[]){ 9, 1, 1, 1, 1, 1 },
                 6);
}
/* One token more than a vocabulary holds (VOCAB_MAX_TOKENS, 4,194,304):
 * refused by its key, where vocab.c refused it later without the file. */
static void k_tokens_many(struct gguf_writer *w)
{
    size_t n = ((size_t)1 << 22) + 1;
    struct gguf_str *t = calloc(n, sizeof *t);
    ck_assert_ptr_nonnull(t);
    for (size_t i = 0; i < n; i++)
        t[i] = (struct gguf_str){ "", 0 };
    gguf_w_array_str(w, "tokenizer.ggml.tokens", t, n);
    free(t);
}
static void k_yarn(struct gguf_writer *w)
{
    gguf_w_str(w, "llama.rope.scaling.type", "yarn");
}
static void k_llama3_bare(struct gguf_writer *w)
{
    gguf_w_str(w, "llama.rope.scaling.type", "llama3");
}

#define LP P ": tensor 'blk."
static const struct bad_model {
    struct model_spec m;
    const char *want;
} BAD[] = {
    { { .drop = "general.architecture" },
      P ": general.architecture is missing (not a model file?)" },
    { { .drop = "general.architecture", .keys = k_mamba },
      P ": architecture 'mamba' is not supported (logitlab runs llama, qwen2, qwen3, phi3, gemma2 "
        "and gemma3)" },
    { { .drop = "general.architecture", .keys = k_esc },
      P ": architecture 'll\\x1B[0mama' is not supported (logitlab runs llama, qwen2, qwen3, "
        "phi3, gemma2 and gemma3)" },
    { { .qwen2 = 1, .drop = "blk.1.attn_k.bias" }, P ": tensor 'blk.1.attn_k.bias' is missing" },
    { { .qwen2 = 1, .wide = "blk.0.attn_q.bias" },
      P ": tensor 'blk.0.attn_q.bias' has shape [8, 2], expected [8]" },
    { { .qwen2 = 1, .drop = "qwen2.block_count" }, P ": qwen2.block_count is missing" },
    { { .qwen3 = 1, .drop = "blk.0.attn_q_norm.weight" },
      P ": tensor 'blk.0.attn_q_norm.weight' is missing" },
    { { .qwen3 = 1, .wide = "blk.1.attn_k_norm.weight" },
      P ": tensor 'blk.1.attn_k_norm.weight' has shape [8, 2], expected [8]" },
    { { .qwen3 = 1, .drop = "qwen3.attention.key_length" },
      P ": tensor 'blk.0.attn_q.weight' has shape [8, 16], expected [8, 8]" },
    { { .phi3 = 1, .wide = "blk.0.attn_qkv.weight" },
      P ": tensor 'blk.0.attn_qkv.weight' has shape [8, 17], expected [8, 16]" },
    { { .phi3 = 1, .wide = "blk.1.ffn_up.weight" },
      P ": tensor 'blk.1.ffn_up.weight' has shape [8, 33], expected [8, 32]" },
    { { .phi3 = 1, .drop = "blk.1.ffn_up.weight" }, P ": tensor 'blk.1.ffn_up.weight' is missing" },
    { { .phi3 = 1, .extra = "blk.0.ffn_gate.weight" },
      P ": tensor 'blk.0.ffn_gate.weight' is not part of a phi3 model (logitlab would ignore it)" },
    { { .phi3 = 2, .drop = "blk.0.attn_v.weight" }, P ": tensor 'blk.0.attn_v.weight' is missing" },
    { { .phi3 = 1, .drop = "rope_factors_short.weight" },
      P ": tensor 'rope_factors_short.weight' is missing (it comes with "
        "'rope_factors_long.weight')" },
    { { .gemma3 = 1, .drop = "blk.1.post_ffw_norm.weight" },
      P ": tensor 'blk.1.post_ffw_norm.weight' is missing" },
    { { .gemma3 = 1, .wide = "blk.0.post_attention_norm.weight" },
      P ": tensor 'blk.0.post_attention_norm.weight' has shape [8, 2], expected [8]" },
    { { .gemma2 = 1, .keys = k_g2_cap0 },
      P ": gemma2.final_logit_softcapping is 0, outside 0 to 1e+06 (both excluded)" },
    { { .gemma2 = 1, .extra = "blk.0.attn_q_norm.weight" },
      P ": tensor 'blk.0.attn_q_norm.weight' is not part of a gemma2 model (logitlab would "
        "ignore it)" },
    { { .gemma3 = 1, .keys = k_softcap },
      P ": gemma3.final_logit_softcapping is 30: soft-capped logits are not supported" },
    { { .qwen3 = 1, .keys = k_q3_rot3 },
      P ": qwen3.rope.dimension_count 3 is odd (rotary pairs need it even)" },
    { { .qwen3 = 1, .keys = k_q3_rot10 }, P ": qwen3.rope.dimension_count is 10, outside 2 to 8" },
    { { .qwen3 = 1, .keys = k_q3_rot4_swa8 },
      P ": qwen3.rope.dimension_count_swa is 8, but the rotary count (rope.dimension_count) is 4" },
    { { .gemma3 = 1, .keys = k_g3_key16 },
      P ": gemma3.attention.key_length_swa is 16, but the head size (attention.key_length) is 8" },
    { { .phi3 = 1, .keys = k_phi3_rot2 },
      P ": tensor 'rope_factors_long.weight' has shape [2], expected [1]" },
    { { .phi3 = 1, .keys = k_longrope },
      P ": rope scaling 'longrope' is not supported (none, linear, llama3)" },
    { { .keys = k_experts },
      P ": llama.expert_count is 8: mixture-of-experts models are not supported" },
    { { .drop = "llama.block_count" }, P ": llama.block_count is missing" },
    { { .drop = "llama.block_count", .keys = k_blocks0 },
      P ": llama.block_count is 0, outside 1 to 256" },
    { { .drop = "llama.attention.head_count_kv", .keys = k_kv3 },
      P ": llama.attention.head_count_kv is 3, outside 1 to 2" },
    { { .drop = "llama.embedding_length", .keys = k_embd9 },
      P ": llama.embedding_length 9 is not a multiple of llama.attention.head_count 2" },
    { { .keys = k_dim8 },
      P ": llama.rope.dimension_count is 8, but the head size "
        "(embedding_length / head_count) is 4" },
    { { .drop = "llama.attention.layer_norm_rms_epsilon" },
      P ": llama.attention.layer_norm_rms_epsilon is missing" },
    { { .drop = "llama.attention.layer_norm_rms_epsilon", .keys = k_eps0 },
      P ": llama.attention.layer_norm_rms_epsilon is 0, outside 0 to 1 (both excluded)" },
    { { .keys = k_vocab7 },
      P ": llama.vocab_size is 7, but the vocabulary (tokenizer.ggml.tokens) is 6" },
    { { .drop = "tokenizer.ggml.model", .keys = k_bert },
      P ": tokenizer 'bert' is not supported (gpt2, llama or gemma4)" },
    { { .drop = "tokenizer.ggml.model", .keys = k_gemma4 },
      P ": tokenizer.ggml.merges is missing" },
    { { .drop = "tokenizer.ggml.tokens" }, P ": tokenizer.ggml.tokens is missing" },
    { { .drop = "tokenizer.ggml.tokens", .keys = k_tokens_many },
      P ": tokenizer.ggml.tokens has 4194305 entries (1 to 4194304)" },
    { { .drop = "tokenizer.ggml.bos_token_id", .keys = k_bos6 },
      P ": tokenizer.ggml.bos_token_id is 6, outside the vocabulary (0 to 5)" },
    { { .drop = "tokenizer.ggml.bos_token_id", .keys = k_add_bos },
      P ": tokenizer.ggml.add_bos_token is true but there is no bos_token_id" },
    { { .drop = "tokenizer.ggml.model", .keys = k_pre_qwen3 },
      P ": the pre-tokenizer 'qwen3' is not supported " PRE_HAS },
    { { .drop = "tokenizer.ggml.scores", .keys = k_scores5 },
      P ": 'tokenizer.ggml.scores' has 5 elements, expected 6" },
    { { .drop = "tokenizer.ggml.token_type", .keys = k_type9 },
      P ": tokenizer.ggml.token_type element 0 is 9, outside 0 to 6" },
    { { .drop = "blk.1.ffn_up.weight" }, LP "1.ffn_up.weight' is missing" },
    { { .drop = "token_embd.weight" }, P ": tensor 'token_embd.weight' is missing" },
    { { .wide = "blk.0.attn_k.weight" }, LP "0.attn_k.weight' has shape [8, 5], expected [8, 4]" },
    { { .wide = "blk.1.ffn_down.weight" },
      LP "1.ffn_down.weight' has shape [16, 9], expected [16, 8]" },
    { { .wide = "blk.0.attn_norm.weight" },
      LP "0.attn_norm.weight' has shape [8, 2], expected [8]" },
    { { .embd_rows = 7 },
      P ": the vocabulary has 6 tokens (tokenizer.ggml.tokens) but "
        "'token_embd.weight' has 7 rows" },
    { { .untied = 1, .wide = "output.weight" },
      P ": the vocabulary has 6 tokens (tokenizer.ggml.tokens) but 'output.weight' has 7 rows" },
    { { .norm_type = QT_F16 },
      P ": tensor 'output_norm.weight' has type F16 (a norm must be F32)" },
    { { .extra = "blk.2.attn_norm.weight" },
      LP "2.attn_norm.weight' is not part of a llama model (logitlab would ignore it)" },
    { { .extra = "blk.0.attn_q.bias" },
      LP "0.attn_q.bias' is not part of a llama model (logitlab would ignore it)" },
    { { .rope_freqs = 3 }, P ": tensor 'rope_freqs.weight' has shape [3], expected [2]" },
    { { .keys = k_yarn }, P ": rope scaling 'yarn' is not supported (none, linear, llama3)" },
    { { .keys = k_llama3_bare }, P ": llama.rope.scaling.factor is missing" },
};

START_TEST(test_llama_bad)
{
    struct buf b;
    struct gguf *g;
    struct err e = { 0, "" };
    struct gguf_llama *L = load(&BAD[_i].m, &b, &g, &e);
    ck_assert_msg(L == NULL, "accepted a model that should fail with: %s", BAD[_i].want);
    ck_assert_str_eq(e.msg, BAD[_i].want);
    ck_assert_int_eq(e.code, ERR_USAGE);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* What llama.cpp's own converters write, and other writers' slips in
 * optional keys: the stories260K GGUF that llama.cpp's converter made
 * stores tokenizer.ggml.padding_token_id = 0xFFFFFFFF and a separator id
 * the same way (no such token); other writers use int32 -1. Both mean
 * absent. An optional key of an unexpected type, or a padding id outside
 * the vocabulary, is left out with one warning; an unknown key is
 * ignored. */
static void k_pad_none_u32(struct gguf_writer *w)
{
    gguf_w_u32(w, "tokenizer.ggml.padding_token_id", 0xFFFFFFFFu);
    gguf_w_u32(w, "tokenizer.ggml.seperator_token_id", 0xFFFFFFFFu);
    gguf_w_str(w, "some.writer.own_key", "anything");
}
static void k_eot_none_i32(struct gguf_writer *w)
{
    gguf_w_i32(w, "tokenizer.ggml.eot_token_id", -1);
    gguf_w_i32(w, "tokenizer.ggml.padding_token_id", -1);
}
static void k_bos_flag_str(struct gguf_writer *w)
{
    gguf_w_str(w, "tokenizer.ggml.add_bos_token", "yes");
    gguf_w_f32(w, "llama.rope.freq_base", 500000.0f);
}
static void k_pad_far(struct gguf_writer *w)
{
    gguf_w_u32(w, "tokenizer.ggml.padding_token_id", 600);
    gguf_w_str(w, "llama.rope.freq_base", "10000");
    gguf_w_u32(w, "general.name", 7);
}

static const struct lenient_model {
    void (*keys)(struct gguf_writer *w);
    int pad, eot, n_warnings;
    const char *warning;
    float rope_base;
} LENIENT[] = {
    { k_pad_none_u32, -1, -1, 0, "", 10000.0f },
    { k_eot_none_i32, -1, -1, 0, "", 10000.0f },
    { k_bos_flag_str, -1, -1, 1, P ": tokenizer.ggml.add_bos_token has type string: ignored",
      500000.0f },
    { k_pad_far, -1, -1, 3, P ": llama.rope.freq_base has type string: ignored", 10000.0f },
};

/* A weight that is NaN or infinite is refused when the model is read,
 * naming the tensor, the row and the column (blk.0.ffn_up.weight is
 * [8, 16]: the value at row 3, column 5 is float 3 x 8 + 5). */
START_TEST(test_llama_nonfinite_weight)
{
    struct buf b = model_file(&(struct model_spec){ 0 });
    struct err e = { 0, "" };
    struct gguf *g = gguf_open_mem(P, b.p, b.n, &e);
    ck_assert_msg(g != NULL, "%s", e.msg);
    const struct gguf_tensor *t = gguf_tensor(g, "blk.0.ffn_up.weight");
    size_t at = (size_t)((const unsigned char *)t->data - b.p) + 4 * (3 * 8 + 5);
    gguf_close(g);
    const float inf = -INFINITY;
    memcpy(b.p + at, &inf, 4);
    g = gguf_open_mem(P, b.p, b.n, &e);
    ck_assert_ptr_null(gguf_llama_new(g, &e));
    ck_assert_str_eq(e.msg, LP "0.ffn_up.weight' (F32) holds a NaN or infinite weight at row 3, "
                               "column 5");
    gguf_close(g);
    free(b.p);
}
END_TEST

/* Writes n bytes to a new file named from path's template ("...XXXXXX");
 * returns it open. */
static int write_temp(char *path, const char *bytes, size_t n)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, bytes, n), (ssize_t)n);
    return fd;
}

/* Finite weights whose product overflows float: the shipped model
 * (data/stories260K.gguf, made by the build) with token 0's row of the tied
 * head set to 3e38: the prompt does not use token 0, so the layers stay as
 * they were, and token 0's logit, 3e38 times each value of the normalized
 * hidden vector summed, is not finite (+inf and -inf terms: NaN). The step is refused naming the
 * file, where the sampler said "logit of token 0 is +inf" of nothing and a -inf masked the token
 * without a word (issue 29, part 6). */
START_TEST(test_model_logits_overflow)
{
    char *bytes;
    size_t n;
    struct err e = { 0, "" };
    ck_assert_msg(readfile("data/stories260K.gguf", 1 << 24, &bytes, &n, &e) == 0, "%s", e.msg);
    struct gguf *g = gguf_open_mem(P, bytes, n, &e);
    ck_assert_msg(g != NULL, "%s", e.msg);
    size_t at = (size_t)((const char *)gguf_tensor(g, "token_embd.weight")->data - bytes);
    gguf_close(g);
    const float big = 3e38f;
    for (int i = 0; i < 64; i++)
        memcpy(bytes + at + 4 * i, &big, 4);
    char path[] = "/tmp/logitlab-overflow-XXXXXX";
    close(write_temp(path, bytes, n));
    struct lesson L;
    struct source src;
    struct trace t;
    struct settings s;
    struct model_request r = { path, "Once upon a time", 0, 0, NULL, NULL, NULL };
    ck_assert_msg(lesson_from_model(&L, &r, &e) == 0, "%s", e.msg);
    ck_assert_msg(source_open(&src, &L, NULL, 0, 0, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(trace_init(&t, L.vocab.n, &e), 0);
    source_step_settings(&src, 1, &s);
    ck_assert_int_eq(source_run_step(&src, 1, &s, L.prompt, L.prompt_len, &t, &e), -1);
    char want[256];
    snprintf(want, sizeof want, "%s: the model's logit of token 0 is ", path);
    ck_assert_msg(strncmp(e.msg, want, strlen(want)) == 0 &&
                      strstr(e.msg, " after a context of 5 tokens (its layers overflow float "
                                    "there)") != NULL,
                  "%s", e.msg);
    trace_free(&t);
    source_close(&src);
    lesson_free(&L);
    unlink(path);
    free(bytes);
}
END_TEST

/* Runs step 1 of the lesson on src in a child process whose standard
 * error is a pipe, with mapfault's handler; returns the child's wait
 * status and its standard error in msg. */
static int step_in_child(struct source *src, struct lesson *L, char *msg, size_t size)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct trace t;
        struct settings s;
        struct err e;
        dup2(fds[1], STDERR_FILENO);
        mapfault_install();
        if (trace_init(&t, L->vocab.n, &e) < 0)
            _exit(10);
        source_step_settings(src, 1, &s);
        _exit(source_run_step(src, 1, &s, L->prompt, L->prompt_len, &t, &e) == 0 ? 0 : 11);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < size && (n = read(fds[0], msg + got, size - 1 - got)) > 0)
        got += (size_t)n;
    msg[got] = '\0';
    close(fds[0]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return status;
}

/* A model file that shrinks between opening and the first step (truncate,
 * or a smaller file copied over it): the layers' weights past the new end
 * are gone from the mapping, and reading them raised SIGBUS, exit 135 and
 * no word (issue 29, part 1). Now one line names the file and the status
 * is 3. The shipped model's tensors start past its first 64 KiB (the
 * vocabulary and metadata come first), so every weight is cut off. */
START_TEST(test_model_shrinks)
{
    char *bytes;
    size_t n;
    struct err e = { 0, "" };
    ck_assert_msg(readfile("data/stories260K.gguf", 1 << 24, &bytes, &n, &e) == 0, "%s", e.msg);
    char path[] = "/tmp/logitlab-shrinks-XXXXXX";
    int fd = write_temp(path, bytes, n);
    free(bytes);
    struct lesson L;
    struct source src;
    struct model_request r = { path, "Once upon a time", 0, 0, NULL, NULL, NULL };
    ck_assert_msg(lesson_from_model(&L, &r, &e) == 0, "%s", e.msg);
    ck_assert_msg(source_open(&src, &L, NULL, 0, 0, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(ftruncate(fd, 65536), 0);
    close(fd);
    char msg[1024], want[256];
    int status = step_in_child(&src, &L, msg, sizeof msg);
    snprintf(want, sizeof want, "logitlab: %s: changed or shrank while in use", path);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == MAPFAULT_STATUS,
                  "status %#x, stderr: %s", status, msg);
    ck_assert_msg(strncmp(msg, want, strlen(want)) == 0 &&
                      strchr(msg, '\n') == msg + strlen(msg) - 1,
                  "%s", msg);
    source_close(&src);
    lesson_free(&L);
    unlink(path);
}
END_TEST

START_TEST(test_llama_lenient)
{
    const struct lenient_model *c = &LENIENT[_i];
    struct buf b;
    struct gguf *g;
    struct err e = { 0, "" };
    struct gguf_llama *L = load(&(struct model_spec){ .keys = c->keys }, &b, &g, &e);
    ck_assert_msg(L != NULL, "refused: %s", e.msg);
    ck_assert_int_eq(L->tok.pad, c->pad);
    ck_assert_int_eq(L->tok.eot, c->eot);
    ck_assert_int_eq(L->tok.bos, 1);      /* the keys that were there still count */
    ck_assert_int_eq(L->tok.add_bos, -1); /* absent, or left out */
    ck_assert_int_eq(L->n_warnings, c->n_warnings);
    ck_assert_str_eq(L->warning, c->warning);
    ck_assert_float_eq(L->model.hp.rope_base, c->rope_base);
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* The ids beyond BOS, EOS, EOT, unknown and padding (enum tok_extra):
 * llama.cpp's older prefix key wins over fim_pre, and an id outside the
 * vocabulary is left out with a warning, as llama.cpp warns and keeps
 * none. */
static void k_extra(struct gguf_writer *w)
{
    gguf_w_u32(w, "tokenizer.ggml.eom_token_id", 4);
    gguf_w_u32(w, "tokenizer.ggml.fim_pre_token_id", 3);
    gguf_w_u32(w, "tokenizer.ggml.prefix_token_id", 5);
    gguf_w_u32(w, "tokenizer.ggml.fim_sep_token_id", 600);
}

START_TEST(test_llama_extra_ids)
{
    struct buf b;
    struct gguf *g;
    struct err e;
    struct gguf_llama *L = load(&(struct model_spec){ .keys = k_extra }, &b, &g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    const int *x = L->tok.extra;
    ck_assert(x[TOKX_EOM] == 4 && x[TOKX_FIM_PRE] == 5 && x[TOKX_FIM_SEP] == -1);
    ck_assert(x[TOKX_FIM_SUF] == -1 && x[TOKX_FIM_MID] == -1 && x[TOKX_FIM_PAD] == -1);
    ck_assert_str_eq(L->warning, P ": tokenizer.ggml.fim_sep_token_id is 600, outside the "
                                   "vocabulary (0 to 5): ignored");
    gguf_llama_free(L);
    gguf_close(g);
    free(b.p);
}
END_TEST

static void k_arch_starcoder(struct gguf_writer *w)
{
    gguf_w_str(w, "general.architecture", "starcoder");
}

/* A vocabulary-only file (as llama.cpp's models/ggml-vocab-*.gguf: the
 * tokenizer's keys, another architecture's, no tensor) is a vocabulary to
 * gguf_llama_vocab_new and no model to gguf_llama_new. */
START_TEST(test_llama_vocab_only)
{
    struct gguf_writer *w = gguf_w_new();
    model_keys(w, &(struct model_spec){ .drop = "general.architecture", .keys = k_arch_starcoder });
    struct buf b = finish(w);
    struct err e;
    struct gguf *g = gguf_open_mem(P, b.p, b.n, &e);
    ck_assert_msg(g != NULL, "%s", e.msg);
    struct gguf_llama *L = gguf_llama_vocab_new(g, &e);
    ck_assert_msg(L != NULL, "%s", e.msg);
    ck_assert(L->tok.kind == TOK_SPM && L->tok.n == 6 && L->tok.bos == 1 && L->tok.eos == 2);
    ck_assert(L->tok.scores[5] == -3.0f && L->tok.types[1] == TOKT_CONTROL);
    ck_assert(L->model.hp.n_layer == 0 && L->model.layers == NULL);
    gguf_llama_free(L);
    ck_assert_ptr_null(gguf_llama_new(g, &e));
    ck_assert_str_eq(e.msg, P ": architecture 'starcoder' is not supported (logitlab runs llama, "
                              "qwen2, qwen3, phi3, gemma2 and gemma3)");
    gguf_close(g);
    free(b.p);
    /* A pre-tokenizer logitlab lacks is what a vocabulary-only load names too. */
    w = gguf_w_new();
    model_keys(w, &(struct model_spec){ .drop = "tokenizer.ggml.model", .keys = k_pre_qwen3 });
    b = finish(w);
    g = gguf_open_mem(P, b.p, b.n, &e);
    ck_assert_msg(g != NULL, "%s", e.msg);
    ck_assert_ptr_null(gguf_llama_vocab_new(g, &e));
    ck_assert_str_eq(e.msg, P ": the pre-tokenizer 'qwen3' is not supported " PRE_HAS);
    gguf_close(g);
    free(b.p);
}
END_TEST

/* A weight of a type quant.h does not read, or whose blocks do not fit
 * the row, is refused when the file is opened. */
START_TEST(test_llama_type)
{
    struct buf b = model_file(&(struct model_spec){ 0 });
    /* after the name: n_dims (4), ne[0] and ne[1] (8 each), then the type */
    size_t at = find(&b, "blk.0.attn_q.weight") + 19 + 4 + 16;
    put_le(b.p + at, 16, 4);
    expect_bad(b.p, b.n, LP "0.attn_q.weight' has type IQ2_XXS; logitlab reads " SUPPORTED);
    put_le(b.p + at, QT_Q8_0, 4);
    expect_bad(b.p, b.n,
               LP "0.attn_q.weight' has rows of 8 values, not a multiple of Q8_0's block of 32");
    free(b.p);
}
END_TEST

Suite *suite_gguf(void)
{
    Suite *s = suite_create("gguf");
    TCase *format = tcase_create("format");
    tcase_add_test(format, test_minimal_bytes);
    tcase_add_test(format, test_base_layout);
    tcase_add_test(format, test_round_trip_scalars);
    tcase_add_test(format, test_round_trip_arrays);
    tcase_add_test(format, test_file);
    tcase_add_test(format, test_writer_refuses);
    suite_add_tcase(s, format);
    TCase *bad = tcase_create("bad");
    tcase_add_loop_test(bad, test_patched, 0, (int)(sizeof PATCHES / sizeof PATCHES[0]));
    tcase_add_test(bad, test_prefixes);
    tcase_add_test(bad, test_every_byte);
    tcase_add_test(bad, test_bad_names_alignment);
    tcase_add_loop_test(bad, test_block_types, 0,
                        (int)(sizeof BLOCK_TYPES / sizeof BLOCK_TYPES[0]));
    suite_add_tcase(s, bad);
    TCase *get = tcase_create("getters");
    tcase_add_test(get, test_getters);
    tcase_add_test(get, test_escape);
    tcase_add_test(get, test_escaped_message);
    suite_add_tcase(s, get);
    TCase *llama = tcase_create("llama");
    /* k_tokens_many writes and reads 4,194,305 strings under ASan: about a
     * second alone, past Check's 4 s default on a busy 2-core CI machine. */
    tcase_set_timeout(llama, 60);
    tcase_add_test(llama, test_llama_ok);
    tcase_add_test(llama, test_partial_rot_ok);
    tcase_add_test(llama, test_gemma2_ok);
    tcase_add_test(llama, test_qwen2_ok);
    tcase_add_test(llama, test_qwen3_ok);
    tcase_add_test(llama, test_chat_formats);
    tcase_add_test(llama, test_llama_rope);
    tcase_add_loop_test(llama, test_llama_bad, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(llama, test_llama_nonfinite_weight);
    tcase_add_test(llama, test_model_logits_overflow);
    tcase_add_test(llama, test_model_shrinks);
    tcase_add_loop_test(llama, test_llama_lenient, 0, (int)(sizeof LENIENT / sizeof LENIENT[0]));
    tcase_add_test(llama, test_llama_type);
    tcase_add_test(llama, test_phi3_ok);
    tcase_add_test(llama, test_gemma3_ok);
    tcase_add_test(llama, test_llama_vocab_only);
    tcase_add_test(llama, test_llama_extra_ids);
    suite_add_tcase(s, llama);
    return s;
}
