/* quant.c - the table of weight types and the portable build of their
 * kernels, which is also the specification the AVX2 build (quant_avx2.c)
 * follows operation for operation.
 *
 * The specification of the dot product. A row is decoded a span of 256
 * values at a time (quant_int.h) into either the weights themselves
 * ("direct": F32, F16, BF16, Q4_1, Q5_1, Q2_K, Q4_K, Q5_K) or small
 * integers and one scale per group ("scaled": Q8_0, Q4_0, Q5_0, IQ4_NL and
 * IQ4_XS per 32, Q3_K and Q6_K per 16; the weight is scale * integer,
 * exactly). Four accumulators of eight float lanes,
 * starting at +0, take the products:
 *   direct: value i of the row goes to lane i % 8 of accumulator (i / 8) % 4,
 *           acc = fmaf(w_i, x_i, acc), in increasing i;
 *   scaled: for group g and lane l, t = q * x of the group's value l, then
 *           t = fmaf(q, x, t) for its values l + 8, l + 16, ... in order, and
 *           acc = fmaf(scale_g, t, acc) in lane l of accumulator g % 4.
 * Then lane l of v = (acc0 + acc1) + (acc2 + acc3), u_l = v_l + v_(l+4) for
 * l < 4, and the result is (u0 + u2) + (u1 + u3). Every operation rounds
 * once (fmaf keeps its product exact), so a product w_i x_i meets at most
 * k roundings: in the direct form one as it joins its lane, n/32 more
 * there, 5 in the tree (k = n/32 + 6); in the scaled form G/8 in t (G
 * values per group), one as t joins its lane, n/(4G) more there, 5 in the
 * tree (k = n/128 + 10 for G = 32, n/64 + 8 for G = 16). Hence quant.h's
 * bound, gamma_k = k u / (1 - k u) times sum |w_i x_i| with k = n/32 + 10
 * (the scaled form's weights are exactly scale times integer).
 *
 * fmaf is what makes the two builds agree. The portable build is compiled
 * for the baseline x86-64, which has no fused multiply-add, so there it is
 * base/softfma.h's soft_fmaf (the same bits, inline), not a call to the C
 * library's for each value; ARM64 has the instruction, and takes it
 * (SOFTFMA_FMAF). x86-64 CPUs with AVX2 take the AVX2 build.
 */
#include "model/quant.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/softfma.h"
#include "base/vecpath.h"
#include "model/quant_int.h"

/* ---- half precision ---- */

float quant_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
    if (e == 0) {
        /* Zero or subnormal: m units of 2^-24, exact in float. */
        float f = (float)m * 0x1p-24f;
        return sign ? -f : f;
    }
    if (e == 0x1f) /* infinity, or a NaN with its payload, made quiet as F16C does */
        u = sign | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0u);
    else
        u = sign | ((e + 112) << 23) | (m << 13); /* the exponent rebiased from 15 to 127 */
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* h + 1 when the bits shifted out (rest, out of 2 half) round it up: above
 * half, or exactly half with h odd (to nearest even). */
static uint32_t round_even(uint32_t h, uint32_t rest, uint32_t half)
{
    return h + (rest > half || (rest == half && (h & 1u)));
}

uint16_t quant_f32_to_f16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: the top of its payload, made quiet */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* 65520 (halfway past 65504, to the even side) and up */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u) /* 2^-14 and up: a normal half; a carry may bump the exponent */
        return (uint16_t)(sign | round_even((a - 0x38000000u) >> 13, a & 0x1fffu, 0x1000u));
    if (a <= 0x33000000u) /* at most 2^-25, half the smallest subnormal: the tie goes to 0 */
        return sign;
    /* A subnormal half: the value in units of 2^-24 is the float's
     * significand shifted right by 126 - its exponent (14 to 24 places). */
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    int shift = 126 - (int)(a >> 23);
    uint32_t rest = m & ((1u << shift) - 1u);
    return (uint16_t)(sign | round_even(m >> shift, rest, 1u << (shift - 1)));
}

float quant_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t quant_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep the top bits, set the quiet bit */
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)(round_even(u >> 16, u & 0xffffu, 0x8000u));
}

/* ---- the portable decoders of one span ---- */

static void dec_f32(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)scales;
    memcpy(vals, p, (size_t)len * sizeof *vals);
}

static void dec_f16(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)scales;
    for (int i = 0; i < len; i++)
        vals[i] = quant_f16_to_f32(quant_le16(p + 2 * i));
}

static void dec_bf16(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)scales;
    for (int i = 0; i < len; i++)
        vals[i] = quant_bf16_to_f32(quant_le16(p + 2 * i));
}

static void dec_q8_0(const unsigned char *p, int len, float *vals, float *scales)
{
    for (int b = 0; b < len / QK_SMALL; b++, p += Q8_0_BYTES) {
        scales[b] = quant_f16_to_f32(quant_le16(p));
        for (int j = 0; j < QK_SMALL; j++)
            vals[QK_SMALL * b + j] = (float)(int8_t)p[2 + j];
    }
}

/* Byte j of a Q4_0 block holds value j (low nibble) and value j + 16. */
static void dec_q4_0(const unsigned char *p, int len, float *vals, float *scales)
{
    for (int b = 0; b < len / QK_SMALL; b++, p += Q4_0_BYTES) {
        float *v = vals + QK_SMALL * b;
        scales[b] = quant_f16_to_f32(quant_le16(p));
        for (int j = 0; j < QK_SMALL / 2; j++) {
            v[j] = (float)((p[2 + j] & 15) - 8);
            v[j + 16] = (float)((p[2 + j] >> 4) - 8);
        }
    }
}

void quant_k_scales(const unsigned char *s, float d, float dmin, float d1[8], float m1[8])
{
    for (int j = 0; j < 8; j++) {
        int sc, m;
        if (j < 4) {
            sc = s[j] & 63;
            m = s[j + 4] & 63;
        } else {
            /* Low four bits in byte j + 4, the top two in the spare bits of j - 4 and j. */
            sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
            m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
        }
        d1[j] = d * (float)sc;
        m1[j] = dmin * (float)m;
    }
}

/* Q4_K: 32 bytes per 64 values, low nibbles the first sub-block of 32,
 * high nibbles the second; weight = d1 * q - m1 (d1 * q is exact). */
static void dec_q4_k(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)len, (void)scales;
    float d1[8], m1[8];
    quant_k_scales(p + QK_SC, quant_f16_to_f32(quant_le16(p + QK_D)),
                   quant_f16_to_f32(quant_le16(p + QK_DMIN)), d1, m1);
    const unsigned char *q = p + Q4_K_QS;
    for (int c = 0; c < 4; c++, q += 32)
        for (int l = 0; l < 32; l++) {
            vals[64 * c + l] = d1[2 * c] * (float)(q[l] & 15) - m1[2 * c];
            vals[64 * c + 32 + l] = d1[2 * c + 1] * (float)(q[l] >> 4) - m1[2 * c + 1];
        }
}

/* Q5_K: as Q4_K, plus a fifth bit (16) from qh: bit 2c of qh[l] for value
 * l of chunk c's first sub-block, bit 2c + 1 for its second. */
static void dec_q5_k(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)len, (void)scales;
    float d1[8], m1[8];
    quant_k_scales(p + QK_SC, quant_f16_to_f32(quant_le16(p + QK_D)),
                   quant_f16_to_f32(quant_le16(p + QK_DMIN)), d1, m1);
    const unsigned char *q = p + Q5_K_QS, *qh = p + Q5_K_QH;
    for (int c = 0; c < 4; c++, q += 32)
        for (int l = 0; l < 32; l++) {
            int lo = (q[l] & 15) | (((qh[l] >> (2 * c)) & 1) << 4);
            int hi = (q[l] >> 4) | (((qh[l] >> (2 * c + 1)) & 1) << 4);
            vals[64 * c + l] = d1[2 * c] * (float)lo - m1[2 * c];
            vals[64 * c + 32 + l] = d1[2 * c + 1] * (float)hi - m1[2 * c + 1];
        }
}

/* Q6_K: each half of 128 values takes 64 bytes of ql and 32 of qh; value
 * l + 32k of the half (l < 32, k < 4) has its low nibble in ql[l] (k even)
 * or ql[l + 32] (k odd), low for k < 2 and high for k >= 2, and its top two
 * bits at bit 2k of qh[l]; it is stored plus 32. Scale i / 16 covers value i. */
static void dec_q6_k(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)len;
    float d = quant_f16_to_f32(quant_le16(p + Q6_K_D));
    for (int g = 0; g < 16; g++)
        scales[g] = d * (float)(int8_t)p[Q6_K_SC + g];
    for (int h = 0; h < 2; h++) {
        const unsigned char *ql = p + Q6_K_QL + 64 * h, *qh = p + Q6_K_QH + 32 * h;
        float *v = vals + 128 * h;
        for (int l = 0; l < 32; l++)
            for (int k = 0; k < 4; k++) {
                int low = (k < 2 ? ql[l + 32 * k] : ql[l + 32 * (k - 2)] >> 4) & 15;
                v[l + 32 * k] = (float)((low | (((qh[l] >> (2 * k)) & 3) << 4)) - 32);
            }
    }
}

/* ---- the portable dot products: the specification, in plain C ---- */

struct acc {
    float a[4][8];
};

static void acc_direct(struct acc *s, const float *w, const float *x, int len)
{
    for (int i = 0; i < len; i++) {
        float *a = &s->a[(i >> 3) & 3][i & 7];
        *a = SOFTFMA_FMAF(w[i], x[i], *a);
    }
}

static void acc_scaled(struct acc *s, const float *q, const float *scales, int group,
                       const float *x, int len)
{
    for (int g = 0; g * group < len; g++) {
        const float *qg = q + g * group, *xg = x + g * group;
        for (int l = 0; l < 8; l++) {
            float t = qg[l] * xg[l];
            for (int k = 8; k < group; k += 8)
                t = SOFTFMA_FMAF(qg[k + l], xg[k + l], t);
            s->a[g & 3][l] = SOFTFMA_FMAF(scales[g], t, s->a[g & 3][l]);
        }
    }
}

static float acc_sum(const struct acc *s)
{
    float v[8];
    for (int l = 0; l < 8; l++)
        v[l] = (s->a[0][l] + s->a[1][l]) + (s->a[2][l] + s->a[3][l]);
    float u0 = v[0] + v[4], u1 = v[1] + v[5], u2 = v[2] + v[6], u3 = v[3] + v[7];
    return (u0 + u2) + (u1 + u3);
}

void quant_portable_dot_n(const struct quant_kernels *k, const unsigned char *row, int64_t n,
                          const float *x, int64_t x_stride, int nx, float *out)
{
    float vals[SPAN], scales[SPAN / 16];
    struct acc acc[QUANT_DOT_N_TILE];
    for (int j0 = 0; j0 < nx; j0 += QUANT_DOT_N_TILE) {
        int m = nx - j0 < QUANT_DOT_N_TILE ? nx - j0 : QUANT_DOT_N_TILE;
        memset(acc, 0, (size_t)m * sizeof acc[0]);
        for (int64_t pos = 0; pos < n; pos += SPAN) {
            int len = n - pos < SPAN ? (int)(n - pos) : SPAN;
            k->decode(row + pos / k->block * k->bytes, len, vals, scales);
            for (int j = 0; j < m; j++) {
                const float *xj = x + (int64_t)(j0 + j) * x_stride + pos;
                if (k->group)
                    acc_scaled(&acc[j], vals, scales, k->group, xj, len);
                else
                    acc_direct(&acc[j], vals, xj, len);
            }
        }
        for (int j = 0; j < m; j++)
            out[j0 + j] = acc_sum(&acc[j]);
    }
}

/* ---- the table ---- */

static void make_f32(const float *in, unsigned char *out, int64_t n)
{
    memcpy(out, in, (size_t)n * sizeof *in);
}

static void make_f16(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = quant_f32_to_f16(in[i]);
        out[2 * i] = (unsigned char)h, out[2 * i + 1] = (unsigned char)(h >> 8);
    }
}

static void make_bf16(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = quant_f32_to_bf16(in[i]);
        out[2 * i] = (unsigned char)h, out[2 * i + 1] = (unsigned char)(h >> 8);
    }
}

/* A type's kernels on the AVX2 and AVX-512 paths: "own", its decoder and
 * one-vector product in quant_avx2.c; "plain", the portable decoder (the
 * same values) with the AVX2 build's loops, which multiply them in the
 * specification's order, so either gives the portable build's bits. Every
 * type has its own now; plain is how a new type runs before it does. */
#if QUANT_HAVE_AVX2
#define AVX2_KERNELS_own(s, block, bytes, group)                                                   \
    {                                                                                              \
        quant_avx2_dec_##s, quant_avx2_dot_n, quant_avx2_dot1_##s, block, bytes, group             \
    }
#define AVX2_KERNELS_plain(s, block, bytes, group)                                                 \
    {                                                                                              \
        dec_##s, quant_avx2_dot_n, NULL, block, bytes, group                                       \
    }
/* The AVX-512 path: AVX2's kernels with its own products of several
 * vectors; "own512", a decoder and one-vector product of its own too. */
#define AVX512_KERNELS_own(s, block, bytes, group)                                                 \
    {                                                                                              \
        quant_avx2_dec_##s, quant_avx512_dot_n, quant_avx2_dot1_##s, block, bytes, group           \
    }
#define AVX2_KERNELS_own512 AVX2_KERNELS_own
#define AVX512_KERNELS_own512(s, block, bytes, group)                                              \
    {                                                                                              \
        quant_avx512_dec_##s, quant_avx512_dot_n, quant_avx512_dot1_##s, block, bytes, group       \
    }
#define AVX512_KERNELS_plain(s, block, bytes, group)                                               \
    {                                                                                              \
        dec_##s, quant_avx512_dot_n, NULL, block, bytes, group                                     \
    }
#else
#define NO_KERNELS(s, block, bytes, group)                                                         \
    {                                                                                              \
        NULL, NULL, NULL, block, bytes, group                                                      \
    }
#define AVX2_KERNELS_own      NO_KERNELS
#define AVX2_KERNELS_plain    NO_KERNELS
#define AVX512_KERNELS_own    NO_KERNELS
#define AVX512_KERNELS_plain  NO_KERNELS
#define AVX2_KERNELS_own512   NO_KERNELS
#define AVX512_KERNELS_own512 NO_KERNELS
#endif

/* One row per supported type, in the order refusals list them: its id,
 * name, block (values) and bytes, the values per scale of its scaled form
 * (0: direct), the suffix of its decoders and quantizer, its AVX2 kernels
 * (own, own512 or plain, above), and where its block keeps its f16 scales (byte
 * offsets, -1 for none; for F32, F16 and BF16 the value itself, which
 * must be finite too). */
#define QUANT_TYPES(X)                                                                             \
    X(QT_F32, F32, 1, 4, 0, f32, own, 0, -1)                                                       \
    X(QT_F16, F16, 1, 2, 0, f16, own, 0, -1)                                                       \
    X(QT_BF16, BF16, 1, 2, 0, bf16, own, 0, -1)                                                    \
    X(QT_Q8_0, Q8_0, QK_SMALL, Q8_0_BYTES, 32, q8_0, own, 0, -1)                                   \
    X(QT_Q4_0, Q4_0, QK_SMALL, Q4_0_BYTES, 32, q4_0, own, 0, -1)                                   \
    X(QT_Q4_1, Q4_1, QK_SMALL, Q4_1_BYTES, 0, q4_1, own, 0, 2)                                     \
    X(QT_Q5_0, Q5_0, QK_SMALL, Q5_0_BYTES, 32, q5_0, own, 0, -1)                                   \
    X(QT_Q5_1, Q5_1, QK_SMALL, Q5_1_BYTES, 0, q5_1, own, 0, 2)                                     \
    X(QT_IQ4_NL, IQ4_NL, QK_SMALL, IQ4_NL_BYTES, 32, iq4_nl, own, 0, -1)                           \
    X(QT_Q2_K, Q2_K, QK_SUPER, Q2_K_BYTES, 0, q2_k, own, 80, 82)                                   \
    X(QT_Q3_K, Q3_K, QK_SUPER, Q3_K_BYTES, 16, q3_k, own, 108, -1)                                 \
    X(QT_Q4_K, Q4_K, QK_SUPER, Q4_K_BYTES, 0, q4_k, own512, QK_D, QK_DMIN)                         \
    X(QT_Q5_K, Q5_K, QK_SUPER, Q5_K_BYTES, 0, q5_k, own, QK_D, QK_DMIN)                            \
    X(QT_Q6_K, Q6_K, QK_SUPER, Q6_K_BYTES, 16, q6_k, own, 208, -1)                                 \
    X(QT_IQ4_XS, IQ4_XS, QK_SUPER, IQ4_XS_BYTES, 32, iq4_xs, own, 0, -1)

#define dec_q4_1   quant_dec_q4_1
#define dec_q5_0   quant_dec_q5_0
#define dec_q5_1   quant_dec_q5_1
#define dec_iq4_nl quant_dec_iq4_nl
#define dec_q2_k   quant_dec_q2_k
#define dec_q3_k   quant_dec_q3_k
#define dec_iq4_xs quant_dec_iq4_xs

#define make_q8_0   quant_make_q8_0
#define make_q4_0   quant_make_q4_0
#define make_q4_k   quant_make_q4_k
#define make_q5_k   quant_make_q5_k
#define make_q6_k   quant_make_q6_k
#define make_q4_1   quant_make_q4_1
#define make_q5_0   quant_make_q5_0
#define make_q5_1   quant_make_q5_1
#define make_iq4_nl quant_make_iq4_nl
#define make_q2_k   quant_make_q2_k
#define make_q3_k   quant_make_q3_k
#define make_iq4_xs quant_make_iq4_xs

struct qrow {
    struct qtype_info info;
    struct quant_kernels k[3]; /* by enum quant_path */
    void (*quantize)(const float *in, unsigned char *out, int64_t n);
};

#define QROW(id, name, block, bytes, group, s, avx, sc0, sc1)                                      \
    { { id, #name, block, bytes, { sc0, sc1 } },                                                   \
      { { dec_##s, quant_portable_dot_n, NULL, block, bytes, group },                              \
        AVX2_KERNELS_##avx(s, block, bytes, group),                                                \
        AVX512_KERNELS_##avx(s, block, bytes, group) },                                            \
      make_##s },
static const struct qrow TYPES[] = { QUANT_TYPES(QROW) };
#define NTYPES ((int)(sizeof TYPES / sizeof TYPES[0]))

/* ", F32, F16, ...": the list, from the same rows. */
#define QLIST(id, name, block, bytes, group, s, avx, sc0, sc1) ", " #name
static const char SUPPORTED[] = QUANT_TYPES(QLIST);

/* Every type ggml has given an id, so that a refusal can name it. */
static const char *const GGML_NAMES[] = {
    [0] = "F32",     [1] = "F16",         [2] = "Q4_0",        [3] = "Q4_1",        [4] = "Q4_2",
    [5] = "Q4_3",    [6] = "Q5_0",        [7] = "Q5_1",        [8] = "Q8_0",        [9] = "Q8_1",
    [10] = "Q2_K",   [11] = "Q3_K",       [12] = "Q4_K",       [13] = "Q5_K",       [14] = "Q6_K",
    [15] = "Q8_K",   [16] = "IQ2_XXS",    [17] = "IQ2_XS",     [18] = "IQ3_XXS",    [19] = "IQ1_S",
    [20] = "IQ4_NL", [21] = "IQ3_S",      [22] = "IQ2_S",      [23] = "IQ4_XS",     [24] = "I8",
    [25] = "I16",    [26] = "I32",        [27] = "I64",        [28] = "F64",        [29] = "IQ1_M",
    [30] = "BF16",   [31] = "Q4_0_4_4",   [32] = "Q4_0_4_8",   [33] = "Q4_0_8_8",   [34] = "TQ1_0",
    [35] = "TQ2_0",  [36] = "IQ4_NL_4_4", [37] = "IQ4_NL_4_8", [38] = "IQ4_NL_8_8", [39] = "MXFP4",
    [40] = "NVFP4",  [41] = "Q1_0",       [42] = "Q2_0",
};

static const struct qrow *row_of(int type)
{
    for (int i = 0; i < NTYPES; i++)
        if (TYPES[i].info.id == type)
            return &TYPES[i];
    return NULL;
}

const struct qtype_info *quant_info(int type)
{
    const struct qrow *r = row_of(type);
    return r ? &r->info : NULL;
}

const char *quant_name(int type, char *buf, size_t n)
{
    int known =
        type >= 0 && type < (int)(sizeof GGML_NAMES / sizeof GGML_NAMES[0]) && GGML_NAMES[type];
    if (known)
        snprintf(buf, n, "%s", GGML_NAMES[type]);
    else
        snprintf(buf, n, "type %d", type);
    return buf;
}

const char *quant_supported_list(void)
{
    return SUPPORTED + 2;
}

/* Whether the number of type's scale field at p is finite: its exponent
 * bits are not all ones. The scales are f16; so are an F16 tensor's
 * values, and an F32's or BF16's are their own kind of float. Testing the
 * bits reads each field once and decodes nothing. */
static int finite_at(int type, const unsigned char *p)
{
    if (type == QT_F32) {
        return (quant_le32(p) & 0x7F800000u) != 0x7F800000u;
    }
    uint16_t mask = type == QT_BF16 ? 0x7F80 : 0x7C00;
    return (quant_le16(p) & mask) != mask;
}

int64_t quant_first_bad_block(int type, const void *data, int64_t n)
{
    const struct qrow *r = row_of(type);
    const unsigned char *p = data;
    if (!r || n <= 0)
        return -1;
    int64_t blocks = n / r->info.block;
    const int *at = r->info.scale_at;
    for (int64_t b = 0; b < blocks; b++, p += r->info.bytes)
        if (!finite_at(type, p + at[0]) || (at[1] >= 0 && !finite_at(type, p + at[1])))
            return b;
    return -1;
}

size_t quant_row_bytes(int type, int64_t n)
{
    const struct qrow *r = row_of(type);
    if (!r || n < 0 || n % r->info.block)
        return 0;
    uint64_t blocks = (uint64_t)(n / r->info.block);
    if (blocks > SIZE_MAX / (uint64_t)r->info.bytes)
        return 0;
    return (size_t)blocks * (size_t)r->info.bytes;
}

void quant_dequant(int type, const void *row, float *out, int64_t n)
{
    const struct qrow *r = row_of(type);
    if (!r)
        return;
    const struct quant_kernels *k = &r->k[QUANT_PORTABLE];
    float scales[SPAN / 16];
    for (int64_t pos = 0; pos < n; pos += SPAN) {
        int len = n - pos < SPAN ? (int)(n - pos) : SPAN;
        float *o = out + pos;
        k->decode((const unsigned char *)row + pos / k->block * k->bytes, len, o, scales);
        if (k->group) /* scale times a small integer: exact, in either order */
            for (int i = 0; i < len; i++)
                o[i] = scales[i / k->group] * o[i];
    }
}

int quant_path_ok(int path)
{
    if (path == QUANT_PORTABLE)
        return 1;
#if QUANT_HAVE_AVX2
    if (path == QUANT_AVX2) {
        int ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#ifndef __clang__
        /* clang cannot ask; x86-64-v3 has F16C with AVX2, as every such CPU. */
        ok = ok && __builtin_cpu_supports("f16c");
#endif
        return ok;
    }
    if (path == QUANT_AVX512)
        return quant_path_ok(QUANT_AVX2) && __builtin_cpu_supports("avx512f");
#endif
    return 0;
}

int quant_best_path(void)
{
    int v = vec_path();
    return v == VEC_AVX512 && quant_path_ok(QUANT_AVX512) ? QUANT_AVX512
           : v >= VEC_AVX2 && quant_path_ok(QUANT_AVX2)   ? QUANT_AVX2
                                                          : QUANT_PORTABLE;
}

const char *quant_path_name(int path)
{
    return path == QUANT_AVX512 ? "avx512" : path == QUANT_AVX2 ? "avx2" : "portable";
}

void quant_dot_n_on(int path, int type, const void *row, int64_t n, const float *x,
                    int64_t x_stride, int nx, float *out)
{
    const struct qrow *r = row_of(type);
    if (!r || path < 0 || path > QUANT_AVX512 || !r->k[path].dot_n) {
        for (int j = 0; j < nx; j++)
            out[j] = 0.0f;
        return;
    }
    r->k[path].dot_n(&r->k[path], row, n, x, x_stride, nx, out);
}

void quant_dot_n(int type, const void *row, int64_t n, const float *x, int64_t x_stride, int nx,
                 float *out)
{
    quant_dot_n_on(quant_best_path(), type, row, n, x, x_stride, nx, out);
}

float quant_dot(int type, const void *row, const float *x, int64_t n)
{
    float out;
    quant_dot_n_on(quant_best_path(), type, row, n, x, 0, 1, &out);
    return out;
}

void quant_prefetch(const void *p, size_t bytes)
{
#if defined(__GNUC__) || defined(__clang__)
    /* One request per 64-byte line (the line of every CPU logitlab runs on),
     * to the outer caches (locality 1: on x86 prefetcht2): measured on
     * bench_llama's Q8_0 decode, one thread on a 2-core Xeon VM, the next row
     * fetched into L1 (locality 3) gave 160-185 ms per token, locality 1 or
     * 2 147-151, none 280. */
    for (size_t i = 0; i < bytes; i += 64)
        __builtin_prefetch((const char *)p + i, 0, 1);
#else
    (void)p, (void)bytes;
#endif
}

/* How far ahead a one-vector product asks for rows: the row that starts
 * this many values on, so that the request is made the same time ahead
 * (about 0.4 us of multiply-adds) whatever the row's length and type. On
 * the 2-core EPYC, decode of Llama 3.2 1B (rows of 2,048) was fastest three
 * rows ahead and of 3B (3,072) two, in Q8_0 and Q4_K_M alike; the next
 * row, as before, took 5 to 13 % longer (medians of three runs). */
#define PREFETCH_VALUES 6144

void quant_dot_rows_on(int path, int type, const void *rows, int64_t n, int nrows, const float *x,
                       float *out)
{
    const struct qrow *r = row_of(type);
    size_t rb = quant_row_bytes(type, n);
    if (!r || path < 0 || path > QUANT_AVX512 || !r->k[path].dot_n || (!rb && n)) {
        for (int i = 0; i < nrows; i++)
            out[i] = 0.0f;
        return;
    }
    const struct quant_kernels *k = &r->k[path];
    const unsigned char *p = rows;
    size_t ahead = n > 0 ? rb * (size_t)((PREFETCH_VALUES + n - 1) / n) : 0;
    for (int i = 0; i < nrows; i++, p += rb) {
        quant_prefetch(p + ahead, rb);
        if (k->dot1)
            out[i] = k->dot1(p, x, n);
        else
            k->dot_n(k, p, n, x, 0, 1, out + i);
    }
}

/* The portable build's: each row's quant_dot_n, scattered. */
static void rows_n_portable(const struct quant_kernels *k, const unsigned char *rows, size_t rb,
                            int nrows, int64_t n, const float *x, int64_t x_stride, int nx,
                            float *out, int64_t out_stride)
{
    float tmp[QUANT_DOT_N_TILE];
    for (int i = 0; i < nrows; i++)
        for (int j0 = 0; j0 < nx; j0 += QUANT_DOT_N_TILE) {
            int m = nx - j0 < QUANT_DOT_N_TILE ? nx - j0 : QUANT_DOT_N_TILE;
            k->dot_n(k, rows + (size_t)i * rb, n, x + (int64_t)j0 * x_stride, x_stride, m, tmp);
            for (int j = 0; j < m; j++)
                out[(int64_t)(j0 + j) * out_stride + i] = tmp[j];
        }
}

void quant_dot_rows_n_on(int path, int type, const void *rows, int64_t n, int nrows, const float *x,
                         int64_t x_stride, int nx, float *out, int64_t out_stride)
{
    const struct qrow *r = row_of(type);
    size_t rb = quant_row_bytes(type, n);
    if (!r || path < 0 || path > QUANT_AVX512 || !r->k[path].dot_n || (!rb && n)) {
        for (int j = 0; j < nx; j++)
            for (int i = 0; i < nrows; i++)
                out[(int64_t)j * out_stride + i] = 0.0f;
        return;
    }
#if QUANT_HAVE_AVX2
    if (path != QUANT_PORTABLE) {
        (path == QUANT_AVX512 ? quant_avx512_dot_rows_n : quant_avx2_dot_rows_n)(
            &r->k[path], rows, rb, nrows, n, x, x_stride, nx, out, out_stride);
        return;
    }
#endif
    rows_n_portable(&r->k[path], rows, rb, nrows, n, x, x_stride, nx, out, out_stride);
}

void quant_dot_rows(int type, const void *rows, int64_t n, int nrows, const float *x, float *out)
{
    quant_dot_rows_on(quant_best_path(), type, rows, n, nrows, x, out);
}

void quant_quantize(int type, const float *in, void *out, int64_t n)
{
    const struct qrow *r = row_of(type);
    if (r)
        r->quantize(in, out, n);
}
