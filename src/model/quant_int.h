/* quant_int.h - what the files of the weight types share: the block
 * layouts as byte offsets (doc/quant.md), the decoders of one span of a row,
 * the kernels of each build. quant.c holds the table and the portable
 * build, quant_dec.c the portable decoders of the types that have no AVX2
 * decoder of their own, quant_avx2.c the AVX2 build (quant_avx512.c
 * its AVX-512 additions, quant_avx2_int.h what they share), quant_make.c and
 * quant_make_iq.c the quantizers. */
#ifndef LOGITLAB_QUANT_INT_H
#define LOGITLAB_QUANT_INT_H

#include <math.h>
#include <stdint.h>

#include "model/quant.h"

/* Block sizes (values) and where each field of a block lies (bytes). */
#define QK_SMALL 32  /* Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL */
#define QK_SUPER 256 /* Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS */

#define Q8_0_BYTES   34  /* d (f16), qs[32] (int8) */
#define Q4_0_BYTES   18  /* d (f16), qs[16] (two 4-bit values each) */
#define Q4_1_BYTES   20  /* d, m (f16), qs[16] */
#define Q5_0_BYTES   22  /* d (f16), qh[4] (the fifth bits), qs[16] */
#define Q5_1_BYTES   24  /* d, m (f16), qh[4], qs[16] */
#define IQ4_NL_BYTES 18  /* d (f16), qs[16]: indices of levels (QUANT_IQ4_LEVELS_INIT) */
#define Q2_K_BYTES   84  /* sc[16], qs[64], d, dmin (f16) */
#define Q3_K_BYTES   110 /* hmask[32], qs[64], sc[12], d (f16) */
#define Q4_K_BYTES   144
#define Q5_K_BYTES   176
#define Q6_K_BYTES   210
#define IQ4_XS_BYTES 136 /* d (f16), sc_h (u16), sc_l[4], qs[128] */

#define QK_D      0   /* Q4_K, Q5_K: the f16 scale of the scales */
#define QK_DMIN   2   /* Q4_K, Q5_K: the f16 scale of the minimums */
#define QK_SC     4   /* Q4_K, Q5_K: 12 bytes, eight 6-bit scales and mins */
#define Q4_K_QS   16  /* 128 bytes of 4-bit values */
#define Q5_K_QH   16  /* 32 bytes: the fifth bits */
#define Q5_K_QS   48  /* 128 bytes: the low four bits */
#define Q6_K_QL   0   /* 128 bytes: low four bits */
#define Q6_K_QH   128 /* 64 bytes: high two bits */
#define Q6_K_SC   192 /* 16 int8 scales */
#define Q6_K_D    208 /* f16 */
#define Q2_K_SC   0   /* 16 bytes: a 4-bit scale (low) and minimum (high) per 16 values */
#define Q2_K_QS   16  /* 64 bytes of 2-bit values */
#define Q2_K_D    80  /* f16 */
#define Q2_K_DMIN 82  /* f16 */
#define Q3_K_HM   0   /* 32 bytes: the third bits */
#define Q3_K_QS   32  /* 64 bytes: the low two bits */
#define Q3_K_SC   96  /* 12 bytes: sixteen 6-bit scales */
#define Q3_K_D    108 /* f16 */
#define IQ4_XS_SH 2   /* u16: the top two bits of the eight scales */
#define IQ4_XS_SL 4   /* 4 bytes: their low four bits */
#define IQ4_XS_QS 8   /* 128 bytes of 4-bit indices */

/* The sixteen levels of IQ4_NL and IQ4_XS (ggml's kvalues_iq4nl, a table
 * of its ggml-common.h), as an initializer: a 4-bit index n stands for
 * level n times the scale, the levels denser near zero, where most weights
 * are. */
#define QUANT_IQ4_LEVELS_INIT                                                                      \
    {                                                                                              \
        -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113                   \
    }

/* A row is decoded a span at a time: 256 values (one K block, eight small
 * blocks, or 256 F32/F16/BF16 values; the last span of a row may be
 * shorter). A span decodes into vals[] and, for the scaled types, one
 * scale per group of values in scales[]. */
#define SPAN 256

/* The two forms of a type's values, which fix the order of the dot
 * product's float operations (quant.c, "The specification"):
 *   direct: vals[] are the weights themselves (F32, F16, BF16, Q4_1, Q5_1,
 *           Q2_K, Q4_K, Q5_K: those with an offset or minimum, or none);
 *   scaled: weight i = scales[i / group] * vals[i], vals[] small integers
 *           (Q8_0, Q4_0, Q5_0, IQ4_NL and IQ4_XS with groups of 32, Q3_K and
 *           Q6_K with groups of 16). */
typedef void (*span_decode_fn)(const unsigned char *p, int len, float *vals, float *scales);

/* The portable decoders of the types whose AVX2 build multiplies their
 * values with its own loops but decodes them with these (quant_dec.c). */
void quant_dec_q4_1(const unsigned char *p, int len, float *vals, float *scales);
void quant_dec_q5_0(const unsigned char *p, int len, float *vals, float *scales);
void quant_dec_q5_1(const unsigned char *p, int len, float *vals, float *scales);
void quant_dec_iq4_nl(const unsigned char *p, int len, float *vals, float *scales);
void quant_dec_q2_k(const unsigned char *p, int len, float *vals, float *scales);
void quant_dec_q3_k(const unsigned char *p, int len, float *vals, float *scales);
void quant_dec_iq4_xs(const unsigned char *p, int len, float *vals, float *scales);

/* The K types' eight (scale, min) pairs of six bits, unpacked from their
 * 12 bytes, and times the block's d and dmin (exact products in float). */
void quant_k_scales(const unsigned char *s, float d, float dmin, float d1[8], float m1[8]);

static inline uint16_t quant_le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t quant_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline float quant_f16_at(const unsigned char *p)
{
    return quant_f16_to_f32(quant_le16(p));
}

/* The AVX2 build is compiled where the compiler can target it. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define QUANT_HAVE_AVX2 1
#else
#define QUANT_HAVE_AVX2 0
#endif

/* One type's kernels in one build: the span decoder, and the dot products. */
struct quant_kernels {
    span_decode_fn decode;
    /* out[j] for nx vectors; nx == 1 takes a fused loop where there is one. */
    void (*dot_n)(const struct quant_kernels *k, const unsigned char *row, int64_t n,
                  const float *x, int64_t x_stride, int nx, float *out);
    /* One vector: a loop that decodes and multiplies in registers (the
     * same operations as dot_n), or NULL. */
    float (*dot1)(const unsigned char *row, const float *x, int64_t n);
    int block, bytes; /* the type's, copied for the loops */
    int group;        /* 0: direct; else values per scale */
};

/* The portable build (quant.c) and the AVX2 one (quant_avx2.c), per type. */
void quant_portable_dot_n(const struct quant_kernels *k, const unsigned char *row, int64_t n,
                          const float *x, int64_t x_stride, int nx, float *out);
#if QUANT_HAVE_AVX2
void quant_avx2_dot_n(const struct quant_kernels *k, const unsigned char *row, int64_t n,
                      const float *x, int64_t x_stride, int nx, float *out);
/* quant_dot_rows_n_on's tiled loop, on the AVX2 accumulation (both x86-64
 * vector paths take it: the same bits as their dot_n). */
void quant_avx2_dot_rows_n(const struct quant_kernels *k, const unsigned char *rows,
                           size_t row_bytes, int nrows, int64_t n, const float *x, int64_t x_stride,
                           int nx, float *out, int64_t out_stride);
#define QUANT_AVX2_TYPE(s)                                                                         \
    void quant_avx2_dec_##s(const unsigned char *p, int len, float *vals, float *scales);          \
    float quant_avx2_dot1_##s(const unsigned char *row, const float *x, int64_t n);
QUANT_AVX2_TYPE(f32)
QUANT_AVX2_TYPE(f16)
QUANT_AVX2_TYPE(bf16)
QUANT_AVX2_TYPE(q8_0)
QUANT_AVX2_TYPE(q4_0)
QUANT_AVX2_TYPE(q4_k)
QUANT_AVX2_TYPE(q5_k)
QUANT_AVX2_TYPE(q6_k)
QUANT_AVX2_TYPE(q3_k)
QUANT_AVX2_TYPE(iq4_xs)
QUANT_AVX2_TYPE(iq4_nl)
QUANT_AVX2_TYPE(q2_k)
QUANT_AVX2_TYPE(q4_1)
QUANT_AVX2_TYPE(q5_0)
QUANT_AVX2_TYPE(q5_1)
/* The AVX-512 path is the AVX2 one but for these one-vector products. */
float quant_avx512_dot1_q4_k(const unsigned char *row, const float *x, int64_t n);
void quant_avx512_dec_q4_k(const unsigned char *p, int len, float *vals, float *scales);
void quant_avx512_dot_n(const struct quant_kernels *k, const unsigned char *row, int64_t n,
                        const float *x, int64_t x_stride, int nx, float *out);
/* quant_avx2_dot_rows_n on sixteen lanes, two rows a register: the same
 * bits (whole tiles of rows whose length is a multiple of 32; the rest
 * goes to the AVX2 loop). */
void quant_avx512_dot_rows_n(const struct quant_kernels *k, const unsigned char *rows,
                             size_t row_bytes, int nrows, int64_t n, const float *x,
                             int64_t x_stride, int nx, float *out, int64_t out_stride);
#endif

/* What the quantizers share. A group whose largest magnitude is below
 * this is all zero. */
#define QUANT_EPS_ZERO 1e-15f

/* An f16 field written at p. */
static inline void quant_put_f16(unsigned char *p, float f)
{
    uint16_t h = quant_f32_to_f16(f);
    p[0] = (unsigned char)h;
    p[1] = (unsigned char)(h >> 8);
}

/* v (already an integer value, or close) clamped to [lo, hi] and truncated;
 * a NaN gives lo, so that no float reaches an int out of its range. */
static inline int quant_clamp_int(float v, int lo, int hi)
{
    if (v >= (float)hi)
        return hi;
    return v > (float)lo ? (int)v : lo;
}

/* To nearest, ties to even (rintf in the default mode), as ggml's
 * nearest_int for the magnitudes that reach it; then clamped. */
static inline int quant_nearest(float v, int lo, int hi)
{
    return quant_clamp_int(rintf(v), lo, hi);
}

/* The value of largest magnitude of x[0..n), the first one on a tie (0
 * when all are 0): the symmetric quantizers map it to their widest level. */
static inline float quant_widest(const float *x, int n)
{
    float amax = 0.0f, max = 0.0f;
    for (int i = 0; i < n; i++)
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    return max;
}

/* Q3_K's scale g (-32..31) from its 12 scale bytes (quant_dec.c). */
int quant_q3_k_scale(const unsigned char *s, int g);

/* IQ4_XS's scale of sub-block b (-32..31) from its block at p: the low
 * four bits in nibble b % 2 of sc_l[b / 2], the top two at bit 2b of sc_h
 * (inline: the AVX2 products take it for every sub-block). */
static inline int quant_iq4_xs_scale(const unsigned char *p, int b)
{
    int low = (p[IQ4_XS_SL + b / 2] >> (4 * (b % 2))) & 15;
    return (low | (int)((quant_le16(p + IQ4_XS_SH) >> (2 * b)) & 3) << 4) - 32;
}

/* The quantizers (quant_make.c, quant_make_iq.c): in[0..n) to blocks at out. */
void quant_make_q8_0(const float *in, unsigned char *out, int64_t n);
void quant_make_q4_0(const float *in, unsigned char *out, int64_t n);
void quant_make_q4_k(const float *in, unsigned char *out, int64_t n);
void quant_make_q5_k(const float *in, unsigned char *out, int64_t n);
void quant_make_q6_k(const float *in, unsigned char *out, int64_t n);
void quant_make_q4_1(const float *in, unsigned char *out, int64_t n);
void quant_make_q5_0(const float *in, unsigned char *out, int64_t n);
void quant_make_q5_1(const float *in, unsigned char *out, int64_t n);
void quant_make_q2_k(const float *in, unsigned char *out, int64_t n);
void quant_make_q3_k(const float *in, unsigned char *out, int64_t n);
void quant_make_iq4_nl(const float *in, unsigned char *out, int64_t n);
void quant_make_iq4_xs(const float *in, unsigned char *out, int64_t n);

#endif
