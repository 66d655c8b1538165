/* check_quant.c - the weight types (model/quant.h): hand-built blocks whose
 * values are worked out in the comments from ggml's layouts and formulas
 * (ggml-common.h, dequantize_row_* of ggml-quants.c; doc/quant.md), a
 * second decoder written here from that description, value by value, the
 * half-precision
 * conversions on their edge values and against a nearest-value search, the
 * quantizers' rounding against the scales they store, the dot products
 * against a double sum with quant.h's bound and against the specification
 * of quant.c's header written out again here, and the builds and the
 * multi-vector form bit for bit. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/vecpath.h"
#include "model/quant.h"
#include "suites.h"

/* Every type; from ALL[3] on, the block types. */
static const int ALL[] = { QT_F32,  QT_F16,    QT_BF16, QT_Q8_0, QT_Q4_0,
                           QT_Q4_K, QT_Q5_K,   QT_Q6_K, QT_Q4_1, QT_Q5_0,
                           QT_Q5_1, QT_IQ4_NL, QT_Q2_K, QT_Q3_K, QT_IQ4_XS };
#define NALL ((int)(sizeof ALL / sizeof ALL[0]))

/* IQ4_NL's and IQ4_XS's sixteen levels (ggml-common.h's kvalues_iq4nl). */
static const int IQ4[16] = { -127, -104, -83, -65, -49, -35, -22, -10,
                             1,    13,   25,  38,  53,  69,  89,  113 };

/* xorshift64: a fixed sequence, so every failure reproduces. */
static uint64_t next_u64(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Uniform in [-1, 1). */
static float next_float(uint64_t *s)
{
    return (float)((double)(next_u64(s) >> 11) / 4503599627370496.0 - 1.0);
}

static float f16_at(const unsigned char *p)
{
    return quant_f16_to_f32((uint16_t)(p[0] | (p[1] << 8)));
}

static void put16(unsigned char *p, uint16_t h)
{
    p[0] = (unsigned char)h, p[1] = (unsigned char)(h >> 8);
}

static uint32_t le32_at(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Value j (0-31) of a small block's 16 bytes of nibbles: the low nibble of
 * byte j for j < 16, the high nibble of byte j - 16 for the others. */
static int nibble_at(const unsigned char *qs, int j)
{
    return (qs[j % 16] >> (j < 16 ? 0 : 4)) & 15;
}

static int bits_equal(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* ---- a second decoder, value by value, from doc/quant.md ---- */

/* A K type's scale and min number j (six bits each) from its 12 bytes. */
static void k_pair(const unsigned char *s, int j, int *sc, int *m)
{
    if (j < 4) {
        *sc = s[j] & 63, *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* ref_value for Q4_1, Q5_0, Q5_1, IQ4_NL (blocks of 32) and Q2_K, Q3_K,
 * IQ4_XS (blocks of 256). */
static float ref_value_more(int type, const unsigned char *b, int i, float *q, float *scale)
{
    int h = i / 128, k = (i % 128) / 32, l = i % 32, g = i / 16, s = i / 32;
    switch (type) {
    case QT_Q4_1: /* d * n + m */
        return f16_at(b) * (float)nibble_at(b + 4, i) + f16_at(b + 2);
    case QT_Q5_1: /* d * n + m, n's fifth bit from bit i of qh */
        return f16_at(b) * (float)(nibble_at(b + 8, i) + 16 * (int)((le32_at(b + 4) >> i) & 1)) +
               f16_at(b + 2);
    case QT_Q5_0: /* d * (n - 16) */
        *q = (float)(nibble_at(b + 6, i) + 16 * (int)((le32_at(b + 2) >> i) & 1) - 16);
        *scale = f16_at(b);
        return *scale * *q;
    case QT_IQ4_NL: /* d * level[n] */
        *q = (float)IQ4[nibble_at(b + 2, i)], *scale = f16_at(b);
        return *scale * *q;
    case QT_IQ4_XS: { /* d * (ls - 32) * level[n], ls from sc_l and sc_h */
        int ls =
            ((b[4 + s / 2] >> (4 * (s & 1))) & 15) | ((((b[2] | b[3] << 8) >> (2 * s)) & 3) << 4);
        *q = (float)IQ4[nibble_at(b + 8 + 16 * s, i % 32)];
        *scale = f16_at(b) * (float)(ls - 32);
        return *scale * *q;
    }
    case QT_Q2_K: { /* (d * sc) * n - dmin * m, sc and m the nibbles of byte g */
        int n = (b[16 + 32 * h + l] >> (2 * k)) & 3;
        float d1 = f16_at(b + 80) * (float)(b[g] & 15), m1 = f16_at(b + 82) * (float)(b[g] >> 4);
        return d1 * (float)n - m1;
    }
    case QT_Q3_K: { /* d * (sc - 32) * n, n = two bits, less 4 when the hmask bit is clear */
        int n = ((b[32 + 32 * h + l] >> (2 * k)) & 3) - ((b[l] >> (4 * h + k)) & 1 ? 0 : 4);
        int sc = ((b[96 + g % 8] >> (g < 8 ? 0 : 4)) & 15) |
                 (((b[104 + g % 4] >> (2 * (g / 4))) & 3) << 4);
        *q = (float)n, *scale = f16_at(b + 108) * (float)(sc - 32);
        return *scale * *q;
    }
    }
    return NAN;
}

/* Value i of a block: for the scaled types the integer (*q) and its scale
 * (*scale), their product the weight; for the others the weight itself. */
static float ref_value(int type, const unsigned char *b, int i, float *q, float *scale)
{
    *q = NAN, *scale = NAN;
    switch (type) {
    case QT_F32: {
        float f;
        memcpy(&f, b + 4 * i, sizeof f);
        return f;
    }
    case QT_F16:
        return f16_at(b + 2 * i);
    case QT_BF16:
        return quant_bf16_to_f32((uint16_t)(b[2 * i] | (b[2 * i + 1] << 8)));
    case QT_Q8_0:
        *q = (float)(int8_t)b[2 + i], *scale = f16_at(b);
        return *scale * *q;
    case QT_Q4_0:
        *q = (float)(((b[2 + i % 16] >> (i < 16 ? 0 : 4)) & 15) - 8), *scale = f16_at(b);
        return *q * *scale;
    case QT_Q4_K:
    case QT_Q5_K: {
        int j = i / 32, c = i / 64, l = i % 32, sc, m;
        const unsigned char *qs = b + (type == QT_Q4_K ? 16 : 48);
        int v = (qs[32 * c + l] >> (4 * (j & 1))) & 15;
        if (type == QT_Q5_K)
            v += 16 * ((b[16 + l] >> j) & 1);
        k_pair(b + 4, j, &sc, &m);
        float d1 = f16_at(b) * (float)sc, m1 = f16_at(b + 2) * (float)m;
        return d1 * (float)v - m1;
    }
    case QT_Q6_K: {
        int h = i / 128, k = (i % 128) / 32, l = i % 32;
        int low = (b[64 * h + l + 32 * (k & 1)] >> (4 * (k >> 1))) & 15;
        int high = (b[128 + 32 * h + l] >> (2 * k)) & 3;
        *q = (float)((low | (high << 4)) - 32);
        *scale = f16_at(b + 208) * (float)(int8_t)b[192 + i / 16];
        return *scale * *q;
    }
    }
    return ref_value_more(type, b, i, q, scale);
}

static float ref_at(int type, const void *row, int64_t i, float *q, float *scale)
{
    const struct qtype_info *t = quant_info(type);
    const unsigned char *b = (const unsigned char *)row + i / t->block * t->bytes;
    return ref_value(type, b, (int)(i % t->block), q, scale);
}

/* A random f16 scale of either sign, 2^-12 to 2^4 in magnitude. */
static uint16_t random_scale(uint64_t *s)
{
    float f = ldexpf(1.0f + 0.5f * next_float(s), (int)(next_u64(s) % 17) - 12);
    return quant_f32_to_f16(next_u64(s) & 1 ? -f : f);
}

/* n values of type as random bytes, but the f16 fields (scales, or the
 * values of F16 / BF16 / F32 rows) sane: no infinities, no NaNs. */
static unsigned char *random_row(int type, int64_t n, uint64_t *s)
{
    size_t rb = quant_row_bytes(type, n);
    unsigned char *r = malloc(rb);
    ck_assert_ptr_nonnull(r);
    for (size_t i = 0; i < rb; i++)
        r[i] = (unsigned char)next_u64(s);
    const struct qtype_info *t = quant_info(type);
    for (int64_t b = 0; b < n / t->block; b++) {
        unsigned char *p = r + b * t->bytes;
        if (type == QT_F32) {
            float f = 4 * next_float(s);
            memcpy(p, &f, sizeof f);
        } else if (type == QT_F16) {
            put16(p, quant_f32_to_f16(4 * next_float(s)));
        } else if (type == QT_BF16) {
            put16(p, quant_f32_to_bf16(4 * next_float(s)));
        } else if (type == QT_Q6_K) {
            put16(p + 208, random_scale(s));
        } else if (type == QT_Q3_K) {
            put16(p + 108, random_scale(s));
        } else if (type == QT_Q2_K) { /* d and dmin, positive in ggml's files */
            put16(p + 80, random_scale(s) & 0x7fff);
            put16(p + 82, random_scale(s) & 0x7fff);
        } else {
            put16(p, random_scale(s));
            if (type == QT_Q4_K || type == QT_Q5_K) /* dmin is positive in ggml's files */
                put16(p + 2, random_scale(s) & 0x7fff);
            if (type == QT_Q4_1 || type == QT_Q5_1) /* m, the minimum: either sign */
                put16(p + 2, random_scale(s));
        }
    }
    return r;
}

/* ---- half precision ---- */

START_TEST(test_f16_to_f32_edges)
{
    ck_assert(quant_f16_to_f32(0x3c00) == 1.0f);
    ck_assert(quant_f16_to_f32(0xc000) == -2.0f);
    ck_assert(quant_f16_to_f32(0x7bff) == 65504.0f);              /* the largest finite half */
    ck_assert(quant_f16_to_f32(0x0400) == ldexpf(1, -14));        /* the smallest normal */
    ck_assert(quant_f16_to_f32(0x0001) == ldexpf(1, -24));        /* the smallest subnormal */
    ck_assert(quant_f16_to_f32(0x03ff) == 1023 * ldexpf(1, -24)); /* the largest subnormal */
    ck_assert(quant_f16_to_f32(0x3555) == 0x1.554p-2f);           /* 1/3 in half: 0.333251953125 */
    float z = quant_f16_to_f32(0x8000);
    ck_assert(z == 0.0f && signbit(z));
    ck_assert(isinf(quant_f16_to_f32(0x7c00)) && quant_f16_to_f32(0x7c00) > 0);
    ck_assert(isinf(quant_f16_to_f32(0xfc00)) && quant_f16_to_f32(0xfc00) < 0);
    ck_assert(isnan(quant_f16_to_f32(0x7e00)));
    ck_assert(isnan(quant_f16_to_f32(0x7c01))); /* a signaling NaN stays a NaN */
}
END_TEST

START_TEST(test_f32_to_f16_rounding)
{
    ck_assert_uint_eq(quant_f32_to_f16(1.0f), 0x3c00);
    ck_assert_uint_eq(quant_f32_to_f16(65504.0f), 0x7bff);
    ck_assert_uint_eq(quant_f32_to_f16(65519.99f), 0x7bff); /* below 65520, halfway to 65536 */
    ck_assert_uint_eq(quant_f32_to_f16(65520.0f), 0x7c00);  /* the tie goes to the even: inf */
    ck_assert_uint_eq(quant_f32_to_f16(1e6f), 0x7c00);
    ck_assert_uint_eq(quant_f32_to_f16(-1e6f), 0xfc00);
    ck_assert_uint_eq(quant_f32_to_f16(INFINITY), 0x7c00);
    ck_assert_uint_eq(quant_f32_to_f16(-0.0f), 0x8000);
    /* 1 + 2^-11 is halfway between 0x3c00 and 0x3c01: to the even 0x3c00;
     * 1 + 3 * 2^-11 halfway between 0x3c01 and 0x3c02: to 0x3c02; a hair
     * above the first half rounds up. */
    ck_assert_uint_eq(quant_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00);
    ck_assert_uint_eq(quant_f32_to_f16(1.0f + 3 * ldexpf(1, -11)), 0x3c02);
    ck_assert_uint_eq(quant_f32_to_f16(1.0f + ldexpf(1, -11) + ldexpf(1, -23)), 0x3c01);
    /* Subnormals, in units of 2^-24: 2^-25 is half a unit (tie to 0), just
     * above it 1 unit, 1.5 units a tie to 2, 2.5 units a tie to 2. */
    ck_assert_uint_eq(quant_f32_to_f16(ldexpf(1, -24)), 0x0001);
    ck_assert_uint_eq(quant_f32_to_f16(ldexpf(1, -25)), 0x0000);
    ck_assert_uint_eq(quant_f32_to_f16(nextafterf(ldexpf(1, -25), 1)), 0x0001);
    ck_assert_uint_eq(quant_f32_to_f16(3 * ldexpf(1, -25)), 0x0002);
    ck_assert_uint_eq(quant_f32_to_f16(5 * ldexpf(1, -25)), 0x0002);
    ck_assert_uint_eq(quant_f32_to_f16(-ldexpf(1, -24)), 0x8001);
    ck_assert_uint_eq(quant_f32_to_f16(ldexpf(1, -14)), 0x0400);
    /* The largest subnormal plus half a unit: a tie, to the even 0x0400. */
    ck_assert_uint_eq(quant_f32_to_f16(1023.5f * ldexpf(1, -24)), 0x0400);
    ck_assert_uint_eq(quant_f32_to_f16(FLT_MIN), 0x0000);
    uint16_t nan = quant_f32_to_f16(NAN);
    ck_assert((nan & 0x7c00) == 0x7c00 && (nan & 0x3ff) != 0);
    uint32_t snan_bits = 0x7f800001u; /* a NaN whose payload is all below half's */
    float snan;
    memcpy(&snan, &snan_bits, sizeof snan);
    ck_assert_uint_eq(quant_f32_to_f16(snan), 0x7e00);
}
END_TEST

/* Every half survives the round trip through float. */
START_TEST(test_f16_round_trip_all)
{
    for (uint32_t h = 0; h < 65536; h++) {
        float f = quant_f16_to_f32((uint16_t)h);
        if (isnan(f))
            ck_assert(isnan(quant_f16_to_f32(quant_f32_to_f16(f))));
        else
            ck_assert_msg(quant_f32_to_f16(f) == h, "half %04x", h);
    }
}
END_TEST

/* The half chosen for a float is the nearest of its neighbors (the even one
 * on a tie): checked by trying the halves around it, in double. */
START_TEST(test_f32_to_f16_nearest)
{
    uint64_t s = 11;
    for (int k = 0; k < 200000; k++) {
        uint32_t bits = (uint32_t)next_u64(&s);
        bits = (bits & 0x807fffffu) | ((0x66u + bits % 0x2au) << 23); /* 2^-25 to 2^16 */
        float f;
        memcpy(&f, &bits, sizeof f);
        uint16_t h = quant_f32_to_f16(f);
        if ((h & 0x7fff) == 0x7c00) {
            ck_assert(fabsf(f) >= 65520.0f);
            continue;
        }
        double err = fabs((double)quant_f16_to_f32(h) - f);
        for (int dlt = -1; dlt <= 1; dlt += 2) {
            uint16_t o = (uint16_t)(h + dlt);
            if ((h & 0x7fff) == 0 && dlt < 0)
                o = (uint16_t)((h ^ 0x8000) + 1); /* across zero */
            if ((o & 0x7c00) == 0x7c00)
                continue;
            double other = fabs((double)quant_f16_to_f32(o) - f);
            ck_assert_msg(err < other || (err == other && !(h & 1)), "%a -> %04x", (double)f, h);
        }
    }
}
END_TEST

START_TEST(test_bf16_edges)
{
    ck_assert(quant_bf16_to_f32(0x3f80) == 1.0f);
    ck_assert(quant_bf16_to_f32(0xc2f7) == -123.5f);
    ck_assert_uint_eq(quant_f32_to_bf16(1.0f), 0x3f80);
    /* 1 + 2^-8 halfway between 0x3f80 and 0x3f81: to the even; 1 + 3 * 2^-8 to 0x3f82. */
    ck_assert_uint_eq(quant_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);
    ck_assert_uint_eq(quant_f32_to_bf16(1.0f + 3 * ldexpf(1, -8)), 0x3f82);
    ck_assert_uint_eq(quant_f32_to_bf16(1.0f + ldexpf(1, -8) + ldexpf(1, -23)), 0x3f81);
    ck_assert_uint_eq(quant_f32_to_bf16(FLT_MAX), 0x7f80); /* past the last halfway: inf */
    ck_assert_uint_eq(quant_f32_to_bf16(-0.0f), 0x8000);
    ck_assert_uint_eq(quant_f32_to_bf16(ldexpf(1, -133)), 0x0001); /* a subnormal, kept */
    uint32_t snan_bits = 0x7f800001u;
    float snan;
    memcpy(&snan, &snan_bits, sizeof snan);
    ck_assert_uint_eq(quant_f32_to_bf16(snan), 0x7fc0); /* quiet, not infinity */
    for (uint32_t h = 0; h < 65536; h++) {
        float f = quant_bf16_to_f32((uint16_t)h);
        ck_assert(isnan(f) ? isnan(quant_bf16_to_f32(quant_f32_to_bf16(f)))
                           : quant_f32_to_bf16(f) == h);
    }
}
END_TEST

/* ---- the table ---- */

START_TEST(test_row_bytes)
{
    ck_assert_uint_eq(quant_row_bytes(QT_Q8_0, 64), 68);
    ck_assert_uint_eq(quant_row_bytes(QT_Q4_0, 32), 18);
    ck_assert_uint_eq(quant_row_bytes(QT_Q4_K, 2048), 8 * 144);
    ck_assert_uint_eq(quant_row_bytes(QT_Q5_K, 256), 176);
    ck_assert_uint_eq(quant_row_bytes(QT_Q6_K, 512), 420);
    ck_assert_uint_eq(quant_row_bytes(QT_F32, 7), 28);
    ck_assert_uint_eq(quant_row_bytes(QT_F16, 3), 6);
    ck_assert_uint_eq(quant_row_bytes(QT_BF16, 5), 10);
    ck_assert_uint_eq(quant_row_bytes(QT_Q4_1, 96), 3 * 20);
    ck_assert_uint_eq(quant_row_bytes(QT_Q5_0, 32), 22);
    ck_assert_uint_eq(quant_row_bytes(QT_Q5_1, 64), 48);
    ck_assert_uint_eq(quant_row_bytes(QT_IQ4_NL, 64), 36);
    ck_assert_uint_eq(quant_row_bytes(QT_Q2_K, 512), 168);
    ck_assert_uint_eq(quant_row_bytes(QT_Q3_K, 256), 110);
    ck_assert_uint_eq(quant_row_bytes(QT_IQ4_XS, 768), 3 * 136);
    /* Not a multiple of the block, negative, unsupported, unknown: 0. */
    ck_assert_uint_eq(quant_row_bytes(QT_Q8_0, 33), 0);
    ck_assert_uint_eq(quant_row_bytes(QT_Q4_K, 300), 0);
    ck_assert_uint_eq(quant_row_bytes(QT_Q6_K, 128), 0);
    ck_assert_uint_eq(quant_row_bytes(QT_Q5_1, 48), 0);
    ck_assert_uint_eq(quant_row_bytes(QT_Q3_K, 32), 0);
    ck_assert_uint_eq(quant_row_bytes(QT_IQ4_XS, 224), 0);
    ck_assert_uint_eq(quant_row_bytes(QT_F32, -4), 0);
    ck_assert_uint_eq(quant_row_bytes(16, 256), 0); /* IQ2_XXS */
    ck_assert_uint_eq(quant_row_bytes(99, 256), 0);
    ck_assert_uint_eq(quant_row_bytes(QT_F32, INT64_MAX), 0); /* more bytes than size_t holds */
}
END_TEST

START_TEST(test_names)
{
    char b[32];
    ck_assert_str_eq(quant_name(QT_Q4_K, b, sizeof b), "Q4_K");
    ck_assert_str_eq(quant_name(QT_BF16, b, sizeof b), "BF16");
    /* ggml's own ids (ggml.h's enum ggml_type), of types logitlab reads and does not. */
    ck_assert_str_eq(quant_name(10, b, sizeof b), "Q2_K");
    ck_assert_str_eq(quant_name(3, b, sizeof b), "Q4_1");
    ck_assert_str_eq(quant_name(9, b, sizeof b), "Q8_1");
    ck_assert_str_eq(quant_name(15, b, sizeof b), "Q8_K");
    ck_assert_str_eq(quant_name(16, b, sizeof b), "IQ2_XXS");
    ck_assert_str_eq(quant_name(23, b, sizeof b), "IQ4_XS");
    ck_assert_str_eq(quant_name(24, b, sizeof b), "I8");
    ck_assert_str_eq(quant_name(28, b, sizeof b), "F64");
    ck_assert_str_eq(quant_name(35, b, sizeof b), "TQ2_0");
    ck_assert_str_eq(quant_name(39, b, sizeof b), "MXFP4");
    ck_assert_str_eq(quant_name(99, b, sizeof b), "type 99");
    ck_assert_str_eq(quant_name(-1, b, sizeof b), "type -1");
    ck_assert_str_eq(quant_name(QT_Q4_K, b, 3), "Q4"); /* cut to the buffer */
    ck_assert_str_eq(quant_supported_list(),
                     "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, "
                     "Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS");
    ck_assert_ptr_null(quant_info(16));
    ck_assert_ptr_null(quant_info(QUANT_MAX_TYPE));
    /* ggml's block sizes (ggml-common.h's static_asserts), in ALL's order:
     * 32 values in 34, 18, 20 (2 halves + 16), 22 (half + 4 + 16), 24, 18;
     * 256 in 144, 176, 210, 84 (2 halves + 16 + 64), 110 (half + 64 + 32 +
     * 12), 136 (half + 2 + 4 + 128). */
    static const int BLOCK[] = { 1, 1, 1, 32, 32, 256, 256, 256, 32, 32, 32, 32, 256, 256, 256 };
    static const int BYTES[] = { 4, 2, 2, 34, 18, 144, 176, 210, 20, 22, 24, 18, 84, 110, 136 };
    for (int i = 0; i < NALL; i++) {
        const struct qtype_info *t = quant_info(ALL[i]);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(t->id, ALL[i]);
        ck_assert_int_eq(t->block, BLOCK[i]);
        ck_assert_int_eq(t->bytes, BYTES[i]);
        ck_assert_str_eq(quant_name(ALL[i], b, sizeof b), t->name);
    }
}
END_TEST

/* ---- hand-built blocks ---- */

START_TEST(test_q8_0_block)
{
    /* d = 0.5 (f16 0x3800); q0 = -3, q1 = 127, q2 = -128, q31 = 1: values
     * -1.5, 63.5, -64, 0.5, the rest 0. Against ones: -1.5. */
    unsigned char b[34] = { 0x00, 0x38, 0xfd, 0x7f, 0x80 };
    b[2 + 31] = 1;
    float v[32], ones[32];
    quant_dequant(QT_Q8_0, b, v, 32);
    ck_assert(v[0] == -1.5f && v[1] == 63.5f && v[2] == -64.0f && v[31] == 0.5f);
    for (int i = 3; i < 31; i++)
        ck_assert(v[i] == 0.0f);
    for (int i = 0; i < 32; i++)
        ones[i] = 1.0f;
    ck_assert(quant_dot(QT_Q8_0, b, ones, 32) == -1.5f);
}
END_TEST

START_TEST(test_q4_0_block)
{
    /* d = 0.25 (0x3400). Byte 0 = 0x9f: value 0 = (15 - 8) * 0.25 = 1.75,
     * value 16 = (9 - 8) * 0.25 = 0.25. Byte 1 = 0x08: value 1 = 0, value
     * 17 = (0 - 8) * 0.25 = -2. Zero bytes give (0 - 8) * 0.25 = -2. */
    unsigned char b[18] = { 0x00, 0x34, 0x9f, 0x08 };
    float v[32];
    quant_dequant(QT_Q4_0, b, v, 32);
    ck_assert(v[0] == 1.75f && v[16] == 0.25f && v[1] == 0.0f && v[17] == -2.0f);
    ck_assert(v[2] == -2.0f && v[31] == -2.0f);
    /* d = -2 (0xc000): the nibble 0 is (0 - 8) * -2 = 16. */
    b[0] = 0x00, b[1] = 0xc0;
    quant_dequant(QT_Q4_0, b, v, 32);
    ck_assert(v[2] == 16.0f && v[0] == -14.0f);
}
END_TEST

/* The scale bytes of the K blocks below: scales sc = 1, 2, 3, 4, 63, 17, 32,
 * 5 and mins m = 0, 1, 2, 3, 40, 63, 16, 7. Sub-blocks 0-3 keep theirs in
 * the low six bits of bytes 0-3 (scales) and 4-7 (mins); 4-7 put their low
 * four bits in bytes 8-11 (scale low, min high) and their top two bits in
 * the top of bytes 0-3 (scales) and 4-7 (mins):
 *   63 = 11 1111, 17 = 01 0001, 32 = 10 0000, 5 = 00 0101;
 *   40 = 10 1000, 63 = 11 1111, 16 = 01 0000, 7 = 00 0111;
 *   bytes 0-3: 1 | 3 << 6 = 0xc1, 2 | 1 << 6 = 0x42, 3 | 2 << 6 = 0x83, 4;
 *   bytes 4-7: 0 | 2 << 6 = 0x80, 1 | 3 << 6 = 0xc1, 2 | 1 << 6 = 0x42, 3;
 *   bytes 8-11: 15 | 8 << 4 = 0x8f, 1 | 15 << 4 = 0xf1, 0x00, 5 | 7 << 4 = 0x75. */
static const unsigned char K_SCALES[12] = { 0xc1, 0x42, 0x83, 0x04, 0x80, 0xc1,
                                            0x42, 0x03, 0x8f, 0xf1, 0x00, 0x75 };

START_TEST(test_q4_k_block)
{
    /* d = 1 (0x3c00), dmin = 0.5 (0x3800): value = sc * q - 0.5 * m.
     *   qs[0] = 0x3a: value 0 (sub-block 0) = 1 * 10 - 0 = 10,
     *                 value 32 (sub-block 1) = 2 * 3 - 0.5 = 5.5;
     *   qs[69] = 0xf0 (chunk 2, l = 5): value 133 (sub-block 4) = 63 * 0 - 20 = -20,
     *                 value 165 (sub-block 5) = 17 * 15 - 31.5 = 223.5;
     *   qs[127] = 0x7c (chunk 3, l = 31): value 223 (sub-block 6) = 32 * 12 - 8 = 376,
     *                 value 255 (sub-block 7) = 5 * 7 - 3.5 = 31.5;
     *   a zero byte: value 1 = 0, value 33 = -0.5, value 100 (sub-block 3) = -1.5. */
    unsigned char b[144] = { 0x00, 0x3c, 0x00, 0x38 };
    memcpy(b + 4, K_SCALES, 12);
    b[16 + 0] = 0x3a, b[16 + 69] = 0xf0, b[16 + 127] = 0x7c;
    float v[256];
    quant_dequant(QT_Q4_K, b, v, 256);
    ck_assert(v[0] == 10.0f && v[32] == 5.5f && v[133] == -20.0f && v[165] == 223.5f);
    ck_assert(v[223] == 376.0f && v[255] == 31.5f);
    ck_assert(v[1] == 0.0f && v[33] == -0.5f && v[100] == -1.5f);
    /* d = 1 + 2^-10 (0x3c01), dmin = 2^-20 (0x0010, a subnormal half): value
     * 32 = (1 + 2^-10) * 2 * 3 - 2^-20 = 6.005859375 - 2^-20, exact in float. */
    b[0] = 0x01, b[2] = 0x10, b[3] = 0x00;
    quant_dequant(QT_Q4_K, b, v, 256);
    ck_assert(v[32] == (float)(6.005859375 - 0x1p-20) && v[0] == 10.009765625f);
}
END_TEST

START_TEST(test_q5_k_block)
{
    /* The scales above, d = 1, dmin = 0.5; the fifth bit of value l of chunk
     * c is bit 2c (first sub-block) or 2c + 1 (second) of qh[l]:
     *   qh[0] = 0x01, qs[0] = 0x3a: value 0 = (10 + 16) * 1 - 0 = 26, value 32 = 2 * 3 - 0.5 = 5.5;
     *   qh[5] = 0x08 (bit 3: chunk 1, second), qs[37] = 0x20: value 69 (sub-block 2)
     *           = 3 * 0 - 1 = -1, value 101 (sub-block 3) = 4 * (2 + 16) - 1.5 = 70.5;
     *   qh[31] = 0x80 (bit 7), qs[127] = 0x7c: value 223 = 32 * 12 - 8 = 376,
     *           value 255 = 5 * (7 + 16) - 3.5 = 111.5. */
    unsigned char b[176] = { 0x00, 0x3c, 0x00, 0x38 };
    memcpy(b + 4, K_SCALES, 12);
    b[16 + 0] = 0x01, b[16 + 5] = 0x08, b[16 + 31] = 0x80;
    b[48 + 0] = 0x3a, b[48 + 37] = 0x20, b[48 + 127] = 0x7c;
    float v[256];
    quant_dequant(QT_Q5_K, b, v, 256);
    ck_assert(v[0] == 26.0f && v[32] == 5.5f && v[69] == -1.0f && v[101] == 70.5f);
    ck_assert(v[223] == 376.0f && v[255] == 111.5f && v[1] == 0.0f);
}
END_TEST

START_TEST(test_q6_k_block)
{
    /* d = 0.5 (0x3800 at byte 208), scales (int8, one per 16 values) sc0 = 1,
     * sc2 = 3, sc4 = -7, sc6 = 10, sc9 = -128. Value l + 32k of the first
     * half: low nibble of ql[l] (k = 0, 2: low, high) or ql[l + 32] (k = 1, 3),
     * bits 2k of qh[l] on top, minus 32.
     *   ql[0] = 0x5f, ql[32] = 0x00, qh[0] = 0xe7 (bits 11 10 01 11):
     *   value 0  = (15 | 3 << 4) - 32 = 31,  * 0.5 * 1  = 15.5;
     *   value 32 = (0 | 1 << 4) - 32 = -16,  * 0.5 * 3  = -24;
     *   value 64 = (5 | 2 << 4) - 32 = 5,    * 0.5 * -7 = -17.5;
     *   value 96 = (0 | 3 << 4) - 32 = 16,   * 0.5 * 10 = 80;
     *   second half, ql[64 + 17] = 0x02, qh[32 + 17] = 0: value 145 (group 9)
     *   = (2 - 32) * 0.5 * -128 = 1920; zero bytes: value 1 = -32 * 0.5 = -16. */
    unsigned char b[210] = { 0 };
    b[0] = 0x5f, b[32] = 0x00, b[128] = 0xe7, b[64 + 17] = 0x02;
    b[192 + 0] = 1, b[192 + 2] = 3, b[192 + 4] = (unsigned char)-7, b[192 + 6] = 10;
    b[192 + 9] = 0x80;
    b[208] = 0x00, b[209] = 0x38;
    float v[256];
    quant_dequant(QT_Q6_K, b, v, 256);
    ck_assert(v[0] == 15.5f && v[32] == -24.0f && v[64] == -17.5f && v[96] == 80.0f);
    ck_assert(v[145] == 1920.0f && v[1] == -16.0f);
}
END_TEST

/* The product of a hand-built block with x on every build the CPU runs,
 * all the same bits as want (a sum exact in float, in any order). */
static void dot_every_path(int type, const unsigned char *b, const float *x, int64_t n, float want)
{
    for (int path = QUANT_PORTABLE; path <= QUANT_AVX512; path++) {
        if (!quant_path_ok(path))
            continue;
        float got;
        quant_dot_rows_on(path, type, b, n, 1, x, &got);
        ck_assert_msg(bits_equal(got, want), "type %d %s: %a, want %a", type, quant_path_name(path),
                      (double)got, (double)want);
    }
}

START_TEST(test_q4_1_block)
{
    /* ggml's dequantize_row_q4_1: value = n * d + m, n the low nibble of byte
     * j (value j) or its high nibble (value j + 16). d = 0.5 (0x3800), m =
     * -1.25 (0xbd00):
     *   byte 0 = 0x3a: value 0 = 10 * 0.5 - 1.25 = 3.75, value 16 = 3 * 0.5 - 1.25 = 0.25;
     *   byte 15 = 0xf0: value 15 = -1.25, value 31 = 15 * 0.5 - 1.25 = 6.25;
     *   zero bytes: -1.25. Against ones: 3.75 + 0.25 + 6.25 - 29 * 1.25 = -26. */
    unsigned char b[20] = { 0x00, 0x38, 0x00, 0xbd, 0x3a };
    b[4 + 15] = 0xf0;
    float v[32], ones[32];
    quant_dequant(QT_Q4_1, b, v, 32);
    ck_assert(v[0] == 3.75f && v[16] == 0.25f && v[15] == -1.25f && v[31] == 6.25f);
    ck_assert(v[1] == -1.25f && v[17] == -1.25f);
    for (int i = 0; i < 32; i++)
        ones[i] = 1.0f;
    dot_every_path(QT_Q4_1, b, ones, 32, -26.0f);
    /* The one rounding: d = 1 + 2^-10 (0x3c01), m = 2^-24 (0x0001, the
     * smallest subnormal half): value 31 = 15 * d + m = 15.0146484375 +
     * 2^-24, and float's step at 15 is 2^-20, so it is 15.0146484375. */
    b[1] = 0x3c, b[0] = 0x01, b[2] = 0x01, b[3] = 0x00;
    quant_dequant(QT_Q4_1, b, v, 32);
    ck_assert(v[31] == 15.0146484375f && v[1] == 0x1p-24f);
}
END_TEST

START_TEST(test_q5_0_block)
{
    /* ggml's dequantize_row_q5_0: value = (n - 16) * d, n's low four bits as
     * Q4_0's and its fifth bit bit j of the little-endian word qh (bytes 2-5)
     * for value j. d = 0.25 (0x3400), qh = 0x80020001 (bits 0, 17, 31):
     *   byte 0 = 0x3a: value 0 = (10 + 16 - 16) * 0.25 = 2.5, value 16 = (3 - 16) * 0.25 = -3.25;
     *   byte 1 = 0x0f: value 1 = (15 - 16) * 0.25 = -0.25, value 17 = (0 + 16 - 16) * 0.25 = 0;
     *   byte 15 = 0xff: value 15 = -0.25, value 31 = (15 + 16 - 16) * 0.25 = 3.75;
     *   zero bytes: (0 - 16) * 0.25 = -4. */
    unsigned char b[22] = { 0x00, 0x34, 0x01, 0x00, 0x02, 0x80, 0x3a, 0x0f };
    b[6 + 15] = 0xff;
    float v[32];
    quant_dequant(QT_Q5_0, b, v, 32);
    ck_assert(v[0] == 2.5f && v[16] == -3.25f && v[1] == -0.25f && v[17] == 0.0f);
    ck_assert(v[15] == -0.25f && v[31] == 3.75f && v[2] == -4.0f && v[18] == -4.0f);
}
END_TEST

START_TEST(test_q5_1_block)
{
    /* ggml's dequantize_row_q5_1: value = n * d + m, n as Q5_0's (qh at bytes
     * 4-7, nibbles from byte 8). d = 0.5 (0x3800), m = 1 (0x3c00), qh =
     * 0x00010002 (bits 1 and 16):
     *   byte 0 = 0x21: value 0 = 1 * 0.5 + 1 = 1.5, value 16 = (2 + 16) * 0.5 + 1 = 10;
     *   byte 1 = 0xf7: value 1 = (7 + 16) * 0.5 + 1 = 12.5, value 17 = 15 * 0.5 + 1 = 8.5;
     *   zero bytes: 1. */
    unsigned char b[24] = { 0x00, 0x38, 0x00, 0x3c, 0x02, 0x00, 0x01, 0x00, 0x21, 0xf7 };
    float v[32];
    quant_dequant(QT_Q5_1, b, v, 32);
    ck_assert(v[0] == 1.5f && v[16] == 10.0f && v[1] == 12.5f && v[17] == 8.5f);
    ck_assert(v[2] == 1.0f && v[31] == 1.0f);
}
END_TEST

START_TEST(test_iq4_nl_block)
{
    /* ggml's dequantize_row_iq4_nl: value = d * level[n], the nibbles as
     * Q4_0's, level = kvalues_iq4nl. d = 0.5 (0x3800):
     *   byte 0 = 0xf0: value 0 = -127 * 0.5 = -63.5, value 16 = 113 * 0.5 = 56.5;
     *   byte 3 = 0x78: value 3 = 1 * 0.5 = 0.5, value 19 = -10 * 0.5 = -5;
     *   zero bytes: -63.5. Against ones: 56.5 + 0.5 - 5 - 29 * 63.5 = -1789.5.
     * With d = -2 (0xc000) the first level is -127 * -2 = 254. */
    unsigned char b[18] = { 0x00, 0x38, 0xf0 };
    b[2 + 3] = 0x78;
    float v[32], ones[32];
    quant_dequant(QT_IQ4_NL, b, v, 32);
    ck_assert(v[0] == -63.5f && v[16] == 56.5f && v[3] == 0.5f && v[19] == -5.0f);
    ck_assert(v[1] == -63.5f && v[31] == -63.5f);
    for (int i = 0; i < 32; i++)
        ones[i] = 1.0f;
    dot_every_path(QT_IQ4_NL, b, ones, 32, -1789.5f);
    b[1] = 0xc0;
    quant_dequant(QT_IQ4_NL, b, v, 32);
    ck_assert(v[1] == 254.0f && v[16] == -226.0f);
}
END_TEST

START_TEST(test_q2_k_block)
{
    /* ggml's dequantize_row_q2_K: value 128h + 32k + l (h < 2, k < 4, l < 32)
     * is n = bits 2k, 2k + 1 of qs[32h + l] (qs at byte 16); its group of 16,
     * g = value / 16, has scale byte sc[g] (bytes 0-15): weight = (d * (sc[g]
     * & 15)) * n - dmin * (sc[g] >> 4), d at byte 80, dmin at 82.
     * d = 0.5 (0x3800), dmin = 0.25 (0x3400); sc[0] = 0x23 (3, min 2), sc[1]
     * = 0x0f (15, 0), sc[2] = 0xf1 (1, 15), sc[15] = 0x5a (10, 5):
     *   qs[0] = 0x1b (n = 3, 2, 1, 0 for k = 0..3):
     *     value 0 (group 0) = 1.5 * 3 - 0.5 = 4, value 32 (group 2) = 0.5 * 2 - 3.75 = -2.75,
     *     value 64 (group 4, sc 0) = 0;
     *   qs[16] = 0x03: value 16 (group 1) = 7.5 * 3 - 0 = 22.5;
     *   qs[63] = 0xc0: value 255 (h 1, k 3, l 31; group 15) = 5 * 3 - 1.25 = 13.75;
     *   value 1 (n = 0, group 0) = -0.5. */
    unsigned char b[84] = { 0x23, 0x0f, 0xf1 };
    b[15] = 0x5a;
    b[16 + 0] = 0x1b, b[16 + 16] = 0x03, b[16 + 63] = 0xc0;
    b[80] = 0x00, b[81] = 0x38, b[82] = 0x00, b[83] = 0x34;
    float v[256];
    quant_dequant(QT_Q2_K, b, v, 256);
    ck_assert(v[0] == 4.0f && v[32] == -2.75f && v[64] == 0.0f && v[16] == 22.5f);
    ck_assert(v[255] == 13.75f && v[1] == -0.5f && v[17] == 0.0f);
    /* The one rounding: d = 1 + 2^-10 (0x3c01), dmin = 2^-24 (0x0001): value
     * 0 = (1 + 2^-10) * 3 * 3 - 2 * 2^-24 = 9.0087890625 - 2^-23, and float's
     * step at 9 is 2^-20: 9.0087890625. Value 16 = (1 + 2^-10) * 15 * 3 =
     * 45.0439453125, exact. */
    b[80] = 0x01, b[81] = 0x3c, b[82] = 0x01, b[83] = 0x00;
    quant_dequant(QT_Q2_K, b, v, 256);
    ck_assert(v[0] == 9.0087890625f && v[16] == 45.0439453125f);
}
END_TEST

START_TEST(test_q3_k_block)
{
    /* ggml's dequantize_row_q3_K: value 128h + 32k + l has two bits n at 2k
     * of qs[32h + l] (qs at byte 32), less 4 unless bit 4h + k of hmask[l]
     * (bytes 0-31) is set; weight = d * (s[g] - 32) * n for its group g =
     * value / 16, d at byte 108. The six-bit s[g] (bytes 96-107): low four
     * bits in byte 96 + g % 8 (low nibble for g < 8, high for g >= 8), top
     * two at bit 2 (g / 4) of byte 104 + g % 4. Here s[0] = 33 = 10 0001,
     * s[1] = 34 = 10 0010, s[8] = 63 = 11 1111, s[15] = 16 = 01 0000, the
     * rest 0:
     *   byte 96 = 1 | 15 << 4 = 0xf1, byte 97 = 0x02,
     *   byte 104 = 2 | 3 << 4 = 0x32 (s0's top, s8's top), byte 105 = 0x02,
     *   byte 107 = 1 << 6 = 0x40 (s15's top).
     * d = 0.5 (0x3800), scales 0.5, 1, -16 (group 2, s = 0), 15.5 (group 8),
     * -8 (group 15):
     *   qs[0] = 0x1b, hmask[0] = 0x11 (bits 0, 4):
     *     value 0 = n 3, bit set: 3 * 0.5 = 1.5; value 32 (k 1) = n 2, bit clear: -2 * -16 = 32;
     *   qs[16] = 0x02, hmask[16] = 0: value 16 = (2 - 4) * 1 = -2;
     *   qs[32] = 0x01: value 128 (h 1, group 8) = n 1, bit 4 set: 15.5;
     *   qs[63] = 0x80, hmask[31] = 0x80: value 255 = n 2, bit 7 set: 2 * -8 = -16;
     *   value 1 = (0 - 4) * 0.5 = -2. */
    unsigned char b[110] = { 0x11 };
    b[31] = 0x80;
    b[32 + 0] = 0x1b, b[32 + 16] = 0x02, b[32 + 32] = 0x01, b[32 + 63] = 0x80;
    b[96] = 0xf1, b[97] = 0x02, b[104] = 0x32, b[105] = 0x02, b[107] = 0x40;
    b[108] = 0x00, b[109] = 0x38;
    float v[256];
    quant_dequant(QT_Q3_K, b, v, 256);
    ck_assert(v[0] == 1.5f && v[32] == 32.0f && v[16] == -2.0f && v[128] == 15.5f);
    ck_assert(v[255] == -16.0f && v[1] == -2.0f);
}
END_TEST

START_TEST(test_iq4_xs_block)
{
    /* ggml's dequantize_row_iq4_xs: sub-block s (32 values) has the six-bit
     * ls, low four bits nibble s % 2 of sc_l[s / 2] (bytes 4-7), top two at
     * bit 2s of the little-endian sc_h (bytes 2-3); weight = d * (ls - 32) *
     * level[n], its 16 bytes of nibbles at 8 + 16s as IQ4_NL's. d = 0.25
     * (0x3400); ls = 33 (s 0), 0 (s 1), 63 (s 5), 20 = 01 0100 (s 7):
     *   sc_l = 0x01, 0, 0xf0, 0x40; sc_h = 2 | 3 << 10 | 1 << 14 = 0x4c02;
     *   byte 8 = 0xf0: value 0 = 0.25 * 1 * -127 = -31.75, value 16 = 0.25 * 113 = 28.25;
     *   byte 24 = 0x98: value 32 = 0.25 * -32 * 1 = -8, value 48 = -8 * 13 = -104;
     *   byte 8 + 80 + 3 = 0x0e: value 163 = 0.25 * 31 * 89 = 689.75, value 179 = 7.75 * -127
     *   = -984.25;
     *   byte 8 + 112 + 15 = 0x70: value 239 = 0.25 * -12 * -127 = 381, value 255 = -3 * -10 = 30;
     *   value 1 = -31.75. */
    unsigned char b[136] = { 0x00, 0x34, 0x02, 0x4c, 0x01, 0x00, 0xf0, 0x40, 0xf0 };
    b[8 + 16] = 0x98, b[8 + 80 + 3] = 0x0e, b[8 + 112 + 15] = 0x70;
    float v[256];
    quant_dequant(QT_IQ4_XS, b, v, 256);
    ck_assert(v[0] == -31.75f && v[16] == 28.25f && v[32] == -8.0f && v[48] == -104.0f);
    ck_assert(v[163] == 689.75f && v[179] == -984.25f && v[239] == 381.0f && v[255] == 30.0f);
    ck_assert(v[1] == -31.75f);
}
END_TEST

/* quant_dequant gives what the decoder here gives, value for value, on
 * random bytes (every bit pattern of the integers and the scale bytes). */
START_TEST(test_dequant_matches_reference)
{
    uint64_t s = 5;
    int type = ALL[_i];
    int64_t n = 3 * 256;
    unsigned char *row = random_row(type, n, &s);
    float *v = malloc(sizeof(float) * (size_t)n);
    quant_dequant(type, row, v, n);
    for (int64_t i = 0; i < n; i++) {
        float q, sc, w = ref_at(type, row, i, &q, &sc);
        ck_assert_msg(bits_equal(v[i], w), "type %d value %lld: %a, want %a", type, (long long)i,
                      (double)v[i], (double)w);
    }
    free(row);
    free(v);
}
END_TEST

/* ---- the quantizers ---- */

START_TEST(test_quantize_q8_0_known)
{
    /* x_j = j - 16: amax = 16, d = 16/127 = 0.1259843 -> half 0x3008
     * (0.125 * (1 + 8/1024)), q_j = round((j - 16) * 127/16): q0 = -127,
     * q16 = 0, q17 = round(7.9375) = 8, q18 = round(15.875) = 16, q31 =
     * round(119.0625) = 119. */
    float x[32];
    for (int j = 0; j < 32; j++)
        x[j] = (float)(j - 16);
    unsigned char b[34];
    quant_quantize(QT_Q8_0, x, b, 32);
    ck_assert_uint_eq(b[0] | (b[1] << 8), 0x3008);
    ck_assert_int_eq((int8_t)b[2 + 0], -127);
    ck_assert_int_eq((int8_t)b[2 + 16], 0);
    ck_assert_int_eq((int8_t)b[2 + 17], 8);
    ck_assert_int_eq((int8_t)b[2 + 18], 16);
    ck_assert_int_eq((int8_t)b[2 + 31], 119);
}
END_TEST

START_TEST(test_quantize_q4_0_known)
{
    /* x_j = j - 16: the value of largest magnitude is x0 = -16, d = -16 / -8
     * = 2 (0x4000), nibble = trunc(x / 2 + 8.5), at most 15: nibble(0) = 0,
     * nibble(1) = trunc(1.0) = 1, nibble(16) = 8, nibble(17) = 9, nibble(15)
     * = trunc(8.0) = 8, nibble(31) = trunc(16.0) -> 15. Byte j holds
     * nibbles j and j + 16: 0x80, 0x91, ..., byte 15 = 0xf8. */
    float x[32];
    for (int j = 0; j < 32; j++)
        x[j] = (float)(j - 16);
    unsigned char b[18];
    quant_quantize(QT_Q4_0, x, b, 32);
    ck_assert_uint_eq(b[0] | (b[1] << 8), 0x4000);
    ck_assert_uint_eq(b[2], 0x80);
    ck_assert_uint_eq(b[3], 0x91);
    ck_assert_uint_eq(b[2 + 15], 0xf8);
}
END_TEST

START_TEST(test_quantize_q4_1_known)
{
    /* ggml's quantize_row_q4_1_ref on x_j = j - 16: min = -16, max = 15, d =
     * 31/15 = 2.0667 -> half 0x4022 (2 + 34/512 = 2.06640625), m = -16
     * (0xcc00); n = trunc((x + 16) * 15/31 + 0.5): n0 = 0, n1 = trunc(0.98)
     * = 0, n2 = trunc(1.47) = 1, n15 = trunc(7.76) = 7, n16 = trunc(8.24) =
     * 8, n17 = trunc(8.73) = 8, n18 = trunc(9.21) = 9, n31 = trunc(15.5) =
     * 15. Byte j holds n_j and n_(j+16): 0x80, 0x80, 0x91, ..., 0xf7. */
    float x[32];
    for (int j = 0; j < 32; j++)
        x[j] = (float)(j - 16);
    unsigned char b[20];
    quant_quantize(QT_Q4_1, x, b, 32);
    ck_assert_uint_eq(b[0] | (b[1] << 8), 0x4022);
    ck_assert_uint_eq(b[2] | (b[3] << 8), 0xcc00);
    ck_assert(b[4] == 0x80 && b[5] == 0x80 && b[6] == 0x91 && b[4 + 15] == 0xf7);
}
END_TEST

START_TEST(test_quantize_q5_known)
{
    /* Q5_0 (quantize_row_q5_0_ref) on x_j = j - 16: the value of largest
     * magnitude is x0 = -16, d = -16 / -16 = 1 (0x3c00), n = trunc(x + 16.5)
     * = j: bytes j | j << 4, the fifth bits 16..31 set (qh = 0xffff0000),
     * and every value comes back exactly. Q5_1 (quantize_row_q5_1_ref) on
     * x_j = j / 4: min 0, max 7.75, d = 7.75 / 31 = 0.25 (0x3400), m = 0, n
     * = trunc(x * 4 + 0.5) = j: the same nibbles and fifth bits, exact. */
    float x[32], v[32];
    unsigned char b[24];
    for (int j = 0; j < 32; j++)
        x[j] = (float)(j - 16);
    quant_quantize(QT_Q5_0, x, b, 32);
    ck_assert(b[0] == 0x00 && b[1] == 0x3c);
    ck_assert(b[2] == 0x00 && b[3] == 0x00 && b[4] == 0xff && b[5] == 0xff);
    ck_assert(b[6] == 0x00 && b[7] == 0x11 && b[6 + 15] == 0xff);
    quant_dequant(QT_Q5_0, b, v, 32);
    ck_assert(memcmp(v, x, sizeof v) == 0);
    for (int j = 0; j < 32; j++)
        x[j] = (float)j / 4;
    quant_quantize(QT_Q5_1, x, b, 32);
    ck_assert(b[0] == 0x00 && b[1] == 0x34 && b[2] == 0x00 && b[3] == 0x00);
    ck_assert(b[4] == 0x00 && b[5] == 0x00 && b[6] == 0xff && b[7] == 0xff);
    ck_assert(b[8] == 0x00 && b[9] == 0x11 && b[8 + 15] == 0xff);
    quant_dequant(QT_Q5_1, b, v, 32);
    ck_assert(memcmp(v, x, sizeof v) == 0);
}
END_TEST

/* Every stored integer is the nearest one against the scales as stored
 * (ggml's second pass), so each value is within half a step of its
 * weight, or as near as the range of its group allows. For the K types the
 * range of sub-block j is [-m1, nmax * d1 - m1]; for Q6_K [-32, 31] steps;
 * Q8_0 and Q4_0 within their scale's half step, plus the f16 rounding of
 * the scale times the integer (127 * 2^-11 d and 8 * 2^-11 d) and, for
 * Q4_0, a full step at +8 (clamped to 7). */
/* A symmetric type's bound: half a step of its scale, or the distance
 * past its levels lo .. hi (in steps). */
static double sym_bound(float scale, double lo, double hi, float x)
{
    double a = fmin(lo * scale, hi * scale), z = fmax(lo * scale, hi * scale);
    return fabsf(scale) * 0.5 * (1 + 1e-5) + fmax(0.0, fmax(a - x, x - z)) + 1e-7;
}

/* IQ4_NL, IQ4_XS: the levels are picked against the scale before its f16
 * rounding (2^-11 of it, times a level of at most 127), to the nearest:
 * within half the wider gap beside the chosen level, or past an end level. */
static double level_bound(float q, float scale, float x)
{
    int k = 0;
    while (IQ4[k] != (int)q)
        k++;
    if (scale == 0.0f)
        return fabsf(x) + 1e-7; /* a group stored as zeros */
    double gap = fmax(k > 0 ? IQ4[k] - IQ4[k - 1] : 0, k < 15 ? IQ4[k + 1] - IQ4[k] : 0);
    double t = (double)x / scale, past = k == 0    ? fmax(0.0, -127 - t)
                                         : k == 15 ? fmax(0.0, t - 113)
                                                   : 0;
    return fabsf(scale) * (gap / 2 * (1 + 0x1p-10) + 127 * 0x1p-11 + past) + 1e-6 * fabsf(x) + 1e-7;
}

/* Q2_K, Q4_K, Q5_K: half a step of the scale d1, or the distance past the
 * range [-m1, nmax d1 - m1]. */
static double affine_bound(double d1, double m1, double nmax, float x)
{
    double lo = -m1, hi = nmax * d1 - m1;
    return d1 * 0.5 * (1 + 1e-5) + fmax(0.0, fmax(lo - x, x - hi)) + 1e-6 * fabs(m1) + 1e-7;
}

static double step_bound(int type, const unsigned char *b, int i, float x, float w)
{
    float q, scale;
    (void)w;
    ref_value(type, b, i, &q, &scale);
    switch (type) {
    case QT_Q8_0:
        return fabsf(scale) * (0.5 + 128 * 0x1p-11) + 1e-7 * fabsf(x);
    case QT_Q4_0:
        return fabsf(scale) * (1.0 + 8 * 0x1p-11);
    case QT_Q5_0:
        return fabsf(scale) * (1.0 + 16 * 0x1p-11);
    case QT_Q6_K:
        return sym_bound(scale, -32, 31, x);
    case QT_Q3_K:
        return sym_bound(scale, -4, 3, x);
    case QT_IQ4_NL:
    case QT_IQ4_XS:
        return level_bound(q, scale, x);
    case QT_Q4_1:
    case QT_Q5_1: { /* against d and m before their f16 rounding (2^-11 of each) */
        double d = fabsf(f16_at(b)), m = fabsf(f16_at(b + 2)), nmax = type == QT_Q4_1 ? 15 : 31;
        return d * (0.5 + nmax * 0x1p-11) * (1 + 0x1p-10) + m * 0x1p-11 + 1e-6 * fabsf(x) + 1e-7;
    }
    case QT_Q2_K: {
        int sc = b[i / 16];
        return affine_bound((double)f16_at(b + 80) * (sc & 15), (double)f16_at(b + 82) * (sc >> 4),
                            3, x);
    }
    }
    int sc, m;
    k_pair(b + 4, i / 32, &sc, &m);
    return affine_bound((double)f16_at(b) * sc, (double)f16_at(b + 2) * m,
                        type == QT_Q4_K ? 15 : 31, x);
}

START_TEST(test_quantize_rounds_to_stored_scales)
{
    int type = ALL[3 + _i]; /* the block types, in ALL's order */
    const struct qtype_info *t = quant_info(type);
    uint64_t s = 77;
    int64_t n = 64 * 256;
    float *x = malloc(sizeof(float) * (size_t)n), *w = malloc(sizeof(float) * (size_t)n);
    unsigned char *b = malloc(quant_row_bytes(type, n));
    for (int64_t i = 0; i < n; i++) /* blocks of different spreads and offsets */
        x[i] = next_float(&s) * ldexpf(1, (int)((i / 256) % 7) - 3) + (i / 512 % 3 == 0 ? 0.3f : 0);
    quant_quantize(type, x, b, n);
    quant_dequant(type, b, w, n);
    double se = 0, sx = 0;
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *blk = b + i / t->block * t->bytes;
        double bound = step_bound(type, blk, (int)(i % t->block), x[i], w[i]);
        ck_assert_msg(fabs((double)x[i] - w[i]) <= bound, "type %d value %lld: %a stored as %a",
                      type, (long long)i, (double)x[i], (double)w[i]);
        se += ((double)x[i] - w[i]) * ((double)x[i] - w[i]);
        sx += (double)x[i] * x[i];
    }
    /* How good the searches are, as relative RMS error on these values:
     * ggml's quantize_row_*_ref (whose bytes these are, checked against its
     * source) gives 0.00387 (Q8_0), 0.0638 (Q4_0), 0.0541 (Q4_K), 0.0275
     * (Q5_K), 0.0133 (Q6_K); the bounds allow 4% more. The K types' searches
     * earn their keep: with the first step only, Q4_K gives 0.0595, Q5_K
     * 0.0296, Q6_K 0.0141, past these bounds. The types after them, from
     * quantizers whose bytes are ggml's too (quantize_row_*_ref, and for
     * IQ4_NL and IQ4_XS the quantize_iq4_* that llama-quantize runs; checked
     * against llama.cpp de3ff815, doc/quant.md): Q4_1 0.0593, Q5_0 0.0308,
     * Q5_1 0.0297, IQ4_NL 0.0639, Q2_K 0.232, Q3_K 0.1246, IQ4_XS 0.0644,
     * again with 4% to spare. */
    static const double RMS[] = { 0.0040, 0.066,  0.0563, 0.0286, 0.0138, 0.0617,
                                  0.0321, 0.0309, 0.0665, 0.2413, 0.1296, 0.0670 };
    ck_assert_msg(sqrt(se / sx) < RMS[_i], "type %d: relative rms %g", type, sqrt(se / sx));
    free(x), free(w), free(b);
}
END_TEST

START_TEST(test_quantize_zero_and_float_types)
{
    float zero[256] = { 0 }, v[256];
    for (int i = 0; i < NALL; i++) {
        unsigned char b[1024];
        quant_quantize(ALL[i], zero, b, 256);
        quant_dequant(ALL[i], b, v, 256);
        for (int j = 0; j < 256; j++)
            ck_assert(v[j] == 0.0f);
    }
    /* F16 and BF16 rows store each value rounded to nearest even. */
    float x[3] = { 1.0f + ldexpf(1, -11), 65504.0f, -3.0f };
    unsigned char h[6];
    quant_quantize(QT_F16, x, h, 3);
    ck_assert(h[0] == 0x00 && h[1] == 0x3c && h[2] == 0xff && h[3] == 0x7b && h[5] == 0xc2);
    quant_quantize(QT_BF16, x, h, 3);
    ck_assert(h[0] == 0x80 && h[1] == 0x3f && h[4] == 0x40 && h[5] == 0xc0);
}
END_TEST

/* ---- the dot products ---- */

/* Row lengths: odd counts of blocks (1, 3, 5, 7, 9 and 33), and for the
 * one-value types lengths that end inside a group of eight. */
static int64_t test_length(int type, int k)
{
    static const int BLOCKS[] = { 1, 3, 5, 7, 9, 33 };
    static const int FLOATS[] = { 1, 7, 33, 255, 257, 1023, 2051 };
    const struct qtype_info *t = quant_info(type);
    if (t->block == 1)
        return k < 7 ? FLOATS[k] : -1;
    return k < 6 ? (int64_t)BLOCKS[k] * t->block : -1;
}

/* The specification of quant.c's header, written again from its words. */
static float spec_dot(int type, const void *row, const float *x, int64_t n)
{
    float acc[4][8] = { { 0 } };
    int group = type == QT_Q8_0 || type == QT_Q4_0 || type == QT_Q5_0 || type == QT_IQ4_NL ||
                        type == QT_IQ4_XS
                    ? 32
                : type == QT_Q6_K || type == QT_Q3_K ? 16
                                                     : 0;
    if (!group) {
        for (int64_t i = 0; i < n; i++) {
            float q, sc, w = ref_at(type, row, i, &q, &sc);
            acc[(i / 8) % 4][i % 8] = fmaf(w, x[i], acc[(i / 8) % 4][i % 8]);
        }
    }
    for (int64_t g = 0; group && g < n / group; g++)
        for (int l = 0; l < 8; l++) {
            float q, sc, t = 0;
            for (int k = l; k < group; k += 8) {
                ref_at(type, row, g * group + k, &q, &sc);
                t = k == l ? q * x[g * group + k] : fmaf(q, x[g * group + k], t);
            }
            acc[g % 4][l] = fmaf(sc, t, acc[g % 4][l]);
        }
    float v[8];
    for (int l = 0; l < 8; l++)
        v[l] = (acc[0][l] + acc[1][l]) + (acc[2][l] + acc[3][l]);
    return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
}

/* For each type and length: random bytes and random x; quant_dot is the
 * specification's bits, and within quant.h's bound, (n/32 + 10) u sum |w x|
 * (as gamma_k = k u / (1 - k u)), of the sum in double of quant_dequant's
 * values times x. */
START_TEST(test_dot_spec_and_bound)
{
    int type = ALL[_i];
    uint64_t s = 1000 + (uint64_t)_i;
    for (int k = 0; test_length(type, k) > 0; k++) {
        int64_t n = test_length(type, k);
        for (int rep = 0; rep < 4; rep++) {
            unsigned char *row = random_row(type, n, &s);
            float *x = malloc(sizeof(float) * (size_t)n), *w = malloc(sizeof(float) * (size_t)n);
            for (int64_t i = 0; i < n; i++)
                x[i] = next_float(&s);
            quant_dequant(type, row, w, n);
            double exact = 0, mag = 0;
            for (int64_t i = 0; i < n; i++) {
                exact += (double)w[i] * x[i];
                mag += fabs((double)w[i] * x[i]);
            }
            float got = quant_dot(type, row, x, n);
            double ku = ((double)n / 32 + 10) * 0x1p-24, bound = ku / (1 - ku) * mag;
            ck_assert_msg(fabs(got - exact) <= bound, "type %d n %lld: %.9g, exact %.9g, bound %g",
                          type, (long long)n, (double)got, exact, bound);
            ck_assert_msg(bits_equal(got, spec_dot(type, row, x, n)), "type %d n %lld", type,
                          (long long)n);
            free(row), free(x), free(w);
        }
    }
}
END_TEST

/* quant_dot_n is quant_dot for every vector, bit for bit, on both builds:
 * nx from 1 to 40 (past the tile of 32), vectors a stride apart. */
START_TEST(test_dot_n_is_dot)
{
    int type = ALL[_i];
    uint64_t s = 2000 + (uint64_t)_i;
    int64_t n = quant_info(type)->block == 1 ? 263 : 3 * 256, stride = n + 5;
    unsigned char *row = random_row(type, n, &s);
    float *x = malloc(sizeof(float) * (size_t)(stride * 40)), out[40];
    for (int64_t i = 0; i < stride * 40; i++)
        x[i] = next_float(&s);
    for (int path = QUANT_PORTABLE; path <= QUANT_AVX512; path++) {
        if (!quant_path_ok(path))
            continue; /* a CPU without AVX2 has only the portable build */
        for (int nx = 1; nx <= 40; nx += nx < 4 ? 1 : 9) {
            quant_dot_n_on(path, type, row, n, x, stride, nx, out);
            for (int j = 0; j < nx; j++) {
                float one;
                quant_dot_n_on(path, type, row, n, x + j * stride, stride, 1, &one);
                ck_assert_msg(bits_equal(out[j], one), "type %d %s nx %d j %d", type,
                              quant_path_name(path), nx, j);
                ck_assert(bits_equal(one, quant_dot(type, row, x + j * stride, n)));
            }
        }
    }
    free(row), free(x);
}
END_TEST

/* quant_dot_rows is quant_dot of each row, bit for bit, on every build:
 * seven consecutive random rows of each type (the kernel prefetches a row
 * past the last, which must change nothing), and no rows at all. */
START_TEST(test_dot_rows_is_dot)
{
    int type = ALL[_i];
    uint64_t s = 2500 + (uint64_t)_i;
    int64_t n = quant_info(type)->block == 1 ? 263 : 3 * 256;
    size_t rb = quant_row_bytes(type, n);
    unsigned char *rows = malloc(7 * rb);
    float *x = malloc(sizeof(float) * (size_t)n), out[8];
    for (int r = 0; r < 7; r++) {
        unsigned char *one = random_row(type, n, &s);
        memcpy(rows + r * rb, one, rb);
        free(one);
    }
    for (int64_t i = 0; i < n; i++)
        x[i] = 4 * next_float(&s);
    for (int path = QUANT_PORTABLE; path <= QUANT_AVX512; path++) {
        if (!quant_path_ok(path))
            continue;
        out[7] = 42.0f;
        quant_dot_rows_on(path, type, rows, n, 7, x, out);
        for (int r = 0; r < 7; r++) {
            float one;
            quant_dot_n_on(path, type, rows + r * rb, n, x, n, 1, &one);
            ck_assert_msg(bits_equal(out[r], one), "type %d %s row %d: %a %a", type,
                          quant_path_name(path), r, (double)out[r], (double)one);
            ck_assert(bits_equal(out[r], quant_dot(type, rows + r * rb, x, n)));
        }
        ck_assert(out[7] == 42.0f); /* nothing written past nrows */
        quant_dot_rows_on(path, type, rows, n, 0, x, out);
        ck_assert(out[7] == 42.0f);
    }
    quant_dot_rows(type, rows + rb, n, 1, x, out);
    ck_assert(bits_equal(out[0], quant_dot(type, rows + rb, x, n)));
    free(rows), free(x);
}
END_TEST

/* quant_dot_rows_n is quant_dot of each (row, vector) pair, bit for bit,
 * on every build: 7 rows (a tile of QUANT_TILE_ROWS and a short one)
 * against 1, 9 and 37 vectors a stride apart (past the vectors' tile of 8
 * and QUANT_DOT_N_TILE), written out[j * 11 + i]; nothing else written. */
START_TEST(test_dot_rows_n_is_dot)
{
    int type = ALL[_i];
    uint64_t s = 2700 + (uint64_t)_i;
    int64_t n = quant_info(type)->block == 1 ? 263 : 3 * 256, stride = n + 3;
    size_t rb = quant_row_bytes(type, n);
    unsigned char *rows = malloc(7 * rb);
    float *x = malloc(sizeof(float) * (size_t)(stride * 37)), out[37 * 11];
    for (int r = 0; r < 7; r++) {
        unsigned char *one = random_row(type, n, &s);
        memcpy(rows + r * rb, one, rb);
        free(one);
    }
    for (int64_t i = 0; i < stride * 37; i++)
        x[i] = next_float(&s);
    for (int path = QUANT_PORTABLE; path <= QUANT_AVX512; path++) {
        if (!quant_path_ok(path))
            continue;
        for (int nx = 1; nx <= 37; nx += nx == 1 ? 8 : 28) {
            for (int k = 0; k < 37 * 11; k++)
                out[k] = 42.0f;
            quant_dot_rows_n_on(path, type, rows, n, 7, x, stride, nx, out, 11);
            for (int j = 0; j < 37; j++)
                for (int i = 0; i < 11; i++) {
                    float want =
                        i < 7 && j < nx ? quant_dot(type, rows + i * rb, x + j * stride, n) : 42.0f;
                    ck_assert_msg(bits_equal(out[j * 11 + i], want),
                                  "type %d %s nx %d row %d vector %d: %a, want %a", type,
                                  quant_path_name(path), nx, i, j, (double)out[j * 11 + i],
                                  (double)want);
                }
        }
    }
    free(rows), free(x);
}
END_TEST

/* A forward pass's call of quant_dot_rows_n: 70 rows (a block of 64 rows
 * and another, whose last two rows are no whole tile) 2,304 values long
 * (k-blocks of 2,048 on AVX-512, of 512 on AVX2, and a short one) against
 * 33 vectors (a copy of 32 and one more), 2,048 + 16 floats apart: every
 * (row, vector) pair is
 * quant_dot's, bit for bit, on every build, for the direct form (Q4_K) and
 * the scaled forms of groups of 32 (Q8_0) and 16 (Q6_K). */
START_TEST(test_dot_rows_n_blocks)
{
    static const int TYPES[] = { QT_Q4_K, QT_Q8_0, QT_Q6_K };
    int type = TYPES[_i], nr = 70, nx = 33;
    uint64_t s = 2800 + (uint64_t)_i;
    int64_t n = 2304, stride = 2048 + 16;
    size_t rb = quant_row_bytes(type, n);
    unsigned char *rows = malloc((size_t)nr * rb);
    float *x = malloc(sizeof(float) * (size_t)(stride * (nx - 1) + n));
    float *out = malloc(sizeof(float) * (size_t)(nr * nx)), *want = malloc(sizeof(float) * nr);
    for (int r = 0; r < nr; r++) {
        unsigned char *one = random_row(type, n, &s);
        memcpy(rows + (size_t)r * rb, one, rb);
        free(one);
    }
    for (int64_t i = 0; i < stride * (nx - 1) + n; i++)
        x[i] = next_float(&s);
    for (int path = QUANT_PORTABLE; path <= QUANT_AVX512; path++) {
        if (!quant_path_ok(path))
            continue;
        quant_dot_rows_n_on(path, type, rows, n, nr, x, stride, nx, out, nr);
        for (int j = 0; j < nx; j += 1 + (j % 5 == 4) * 3) {
            for (int i = 0; i < nr; i++)
                want[i] = quant_dot(type, rows + (size_t)i * rb, x + j * stride, n);
            for (int i = 0; i < nr; i++)
                ck_assert_msg(bits_equal(out[j * nr + i], want[i]),
                              "type %d %s row %d vector %d: %a, want %a", type,
                              quant_path_name(path), i, j, (double)out[j * nr + i],
                              (double)want[i]);
        }
    }
    free(rows), free(x), free(out), free(want);
}
END_TEST

/* The AVX2 build gives the portable build's bits (quant.h), on random rows
 * of every type and length, one vector and five. */
START_TEST(test_avx2_is_portable)
{
    if (!quant_path_ok(QUANT_AVX2))
        return; /* nothing to compare on this CPU */
    /* The best up to the vector path's (check_vecpath.c forces each). */
    ck_assert_int_eq(quant_best_path(), vec_path() == VEC_AVX512 && quant_path_ok(QUANT_AVX512)
                                            ? QUANT_AVX512
                                            : QUANT_AVX2);
    ck_assert_str_eq(quant_path_name(QUANT_AVX2), "avx2");
    ck_assert_str_eq(quant_path_name(QUANT_AVX512), "avx512");
    int type = ALL[_i];
    uint64_t s = 3000 + (uint64_t)_i;
    for (int k = 0; test_length(type, k) > 0; k++) {
        int64_t n = test_length(type, k);
        for (int rep = 0; rep < 8; rep++) {
            unsigned char *row = random_row(type, n, &s);
            float *x = malloc(sizeof(float) * (size_t)(5 * n)), a[5], b[5];
            for (int64_t i = 0; i < 5 * n; i++)
                x[i] = 8 * next_float(&s);
            for (int nx = 1; nx <= 5; nx += 4) {
                quant_dot_n_on(QUANT_PORTABLE, type, row, n, x, n, nx, a);
                quant_dot_n_on(QUANT_AVX2, type, row, n, x, n, nx, b);
                for (int j = 0; j < nx; j++)
                    ck_assert_msg(bits_equal(a[j], b[j]), "type %d n %lld: %a %a", type,
                                  (long long)n, (double)a[j], (double)b[j]);
                if (!quant_path_ok(QUANT_AVX512))
                    continue;
                quant_dot_n_on(QUANT_AVX512, type, row, n, x, n, nx, b);
                for (int j = 0; j < nx; j++)
                    ck_assert_msg(bits_equal(a[j], b[j]), "type %d n %lld avx512: %a %a", type,
                                  (long long)n, (double)a[j], (double)b[j]);
            }
            free(row), free(x);
        }
    }
}
END_TEST

START_TEST(test_unsupported_type)
{
    float x[256] = { 1 }, out[2] = { 7, 7 };
    unsigned char row[256] = { 0 };
    ck_assert(quant_dot(16, row, x, 256) == 0.0f); /* IQ2_XXS */
    quant_dot_n(99, row, 256, x, 256, 2, out);
    ck_assert(out[0] == 0.0f && out[1] == 0.0f);
    out[0] = out[1] = 7;
    quant_dot_rows(16, row, 256, 2, x, out);
    ck_assert(out[0] == 0.0f && out[1] == 0.0f);
}
END_TEST

/* The f16 scales of each block, where ggml-common.h's block structs put
 * them (block_q2_K: scales[16], qs[64], then d and dmin; block_q3_K:
 * hmask[32], qs[64], scales[12], d; block_q6_K: ql[128], qh[64],
 * scales[16], d; the rest start with d, and m or dmin after it). A NaN or
 * an infinity there is found in the block it is in, and the block then
 * really decodes to non-finite weights; anywhere else in zeroed blocks it
 * is not a scale. */
START_TEST(test_bad_scales)
{
    static const struct {
        int type, at[2];
    } S[] = { { QT_Q8_0, { 0, -1 } },  { QT_Q4_0, { 0, -1 } },   { QT_Q4_1, { 0, 2 } },
              { QT_Q5_0, { 0, -1 } },  { QT_Q5_1, { 0, 2 } },    { QT_IQ4_NL, { 0, -1 } },
              { QT_Q2_K, { 80, 82 } }, { QT_Q3_K, { 108, -1 } }, { QT_Q4_K, { 0, 2 } },
              { QT_Q5_K, { 0, 2 } },   { QT_Q6_K, { 208, -1 } }, { QT_IQ4_XS, { 0, -1 } } };
    static const uint16_t BAD[2] = { 0x7E00, 0xFC00 }; /* NaN, -inf */
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
        const struct qtype_info *q = quant_info(S[i].type);
        unsigned char blocks[3 * 256];
        float out[256];
        for (int k = 0; k < 2 && S[i].at[k] >= 0; k++) {
            memset(blocks, 0, sizeof blocks);
            ck_assert_int_eq(quant_first_bad_block(q->id, blocks, 3 * q->block), -1);
            unsigned char *p = blocks + q->bytes + S[i].at[k];
            p[0] = (unsigned char)BAD[k];
            p[1] = (unsigned char)(BAD[k] >> 8);
            ck_assert_msg(quant_first_bad_block(q->id, blocks, 3 * q->block) == 1, "%s at %d",
                          q->name, S[i].at[k]);
            quant_dequant(q->id, blocks + q->bytes, out, q->block);
            int nonfinite = 0;
            for (int j = 0; j < q->block; j++)
                nonfinite += !isfinite(out[j]);
            ck_assert_msg(nonfinite > 0, "%s: byte %d is no scale", q->name, S[i].at[k]);
        }
        /* a byte of quants set to all ones is no scale */
        memset(blocks, 0, sizeof blocks);
        memset(blocks + q->bytes + q->bytes - 2, 0xFF, 2);
        int last_is_scale = S[i].at[0] == q->bytes - 2 || S[i].at[1] == q->bytes - 2;
        ck_assert_int_eq(quant_first_bad_block(q->id, blocks, 3 * q->block),
                         last_is_scale ? 1 : -1);
    }
    const float f[8] = { 0, 1, 2, 3, 4, NAN, 6, INFINITY };
    ck_assert_int_eq(quant_first_bad_block(QT_F32, f, 8), 5);
    const uint16_t h[4] = { 0x3C00, 0x0001, 0x7C00, 0 }; /* 1, a subnormal, +inf */
    ck_assert_int_eq(quant_first_bad_block(QT_F16, h, 4), 2);
    const uint16_t b[4] = { 0x3F80, 0xFF81, 0, 0 }; /* 1, a NaN */
    ck_assert_int_eq(quant_first_bad_block(QT_BF16, b, 4), 1);
}
END_TEST

Suite *suite_quant(void)
{
    Suite *s = suite_create("quant");
    TCase *half = tcase_create("half");
    tcase_add_test(half, test_f16_to_f32_edges);
    tcase_add_test(half, test_f32_to_f16_rounding);
    tcase_add_test(half, test_f16_round_trip_all);
    tcase_add_test(half, test_f32_to_f16_nearest);
    tcase_add_test(half, test_bf16_edges);
    suite_add_tcase(s, half);
    TCase *table = tcase_create("table");
    tcase_add_test(table, test_row_bytes);
    tcase_add_test(table, test_names);
    tcase_add_test(table, test_unsupported_type);
    tcase_add_test(table, test_bad_scales);
    suite_add_tcase(s, table);
    TCase *blocks = tcase_create("blocks");
    tcase_add_test(blocks, test_q8_0_block);
    tcase_add_test(blocks, test_q4_0_block);
    tcase_add_test(blocks, test_q4_k_block);
    tcase_add_test(blocks, test_q5_k_block);
    tcase_add_test(blocks, test_q6_k_block);
    tcase_add_test(blocks, test_q4_1_block);
    tcase_add_test(blocks, test_q5_0_block);
    tcase_add_test(blocks, test_q5_1_block);
    tcase_add_test(blocks, test_iq4_nl_block);
    tcase_add_test(blocks, test_q2_k_block);
    tcase_add_test(blocks, test_q3_k_block);
    tcase_add_test(blocks, test_iq4_xs_block);
    tcase_add_loop_test(blocks, test_dequant_matches_reference, 0, NALL);
    suite_add_tcase(s, blocks);
    TCase *make = tcase_create("quantize");
    tcase_add_test(make, test_quantize_q8_0_known);
    tcase_add_test(make, test_quantize_q4_0_known);
    tcase_add_test(make, test_quantize_q4_1_known);
    tcase_add_test(make, test_quantize_q5_known);
    tcase_add_loop_test(make, test_quantize_rounds_to_stored_scales, 0, NALL - 3);
    tcase_add_test(make, test_quantize_zero_and_float_types);
    suite_add_tcase(s, make);
    TCase *dot = tcase_create("dot");
    tcase_set_timeout(dot, 60);
    tcase_add_loop_test(dot, test_dot_spec_and_bound, 0, NALL);
    tcase_add_loop_test(dot, test_dot_n_is_dot, 0, NALL);
    tcase_add_loop_test(dot, test_dot_rows_is_dot, 0, NALL);
    tcase_add_loop_test(dot, test_dot_rows_n_is_dot, 0, NALL);
    tcase_add_loop_test(dot, test_dot_rows_n_blocks, 0, 3);
    tcase_add_loop_test(dot, test_avx2_is_portable, 0, NALL);
    suite_add_tcase(s, dot);
    return s;
}
