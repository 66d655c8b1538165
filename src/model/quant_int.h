/* quant_int.h - what the three files of the weight types share: the block
 * layouts as byte offsets (doc/quant.md), the decoders of one span of a row,
 * the kernels of each build. quant.c holds the table and the portable
 * build, quant_avx2.c the AVX2 one, quant_make.c the quantizers. */
#ifndef LOGITLAB_QUANT_INT_H
#define LOGITLAB_QUANT_INT_H

#include <stdint.h>

#include "model/quant.h"

/* Block sizes (values) and where each field of a block lies (bytes). */
#define QK_SMALL 32  /* Q8_0, Q4_0 */
#define QK_SUPER 256 /* Q4_K, Q5_K, Q6_K */

#define Q8_0_BYTES 34 /* d (f16), qs[32] (int8) */
#define Q4_0_BYTES 18 /* d (f16), qs[16] (two 4-bit values each) */
#define Q4_K_BYTES 144
#define Q5_K_BYTES 176
#define Q6_K_BYTES 210

#define QK_D    0   /* Q4_K, Q5_K: the f16 scale of the scales */
#define QK_DMIN 2   /* Q4_K, Q5_K: the f16 scale of the minimums */
#define QK_SC   4   /* Q4_K, Q5_K: 12 bytes, eight 6-bit scales and mins */
#define Q4_K_QS 16  /* 128 bytes of 4-bit values */
#define Q5_K_QH 16  /* 32 bytes: the fifth bits */
#define Q5_K_QS 48  /* 128 bytes: the low four bits */
#define Q6_K_QL 0   /* 128 bytes: low four bits */
#define Q6_K_QH 128 /* 64 bytes: high two bits */
#define Q6_K_SC 192 /* 16 int8 scales */
#define Q6_K_D  208 /* f16 */

/* A row is decoded a span at a time: 256 values (one K block, eight small
 * blocks, or 256 F32/F16/BF16 values; the last span of a row may be
 * shorter). A span decodes into vals[] and, for the scaled types, one
 * scale per group of values in scales[]. */
#define SPAN 256

/* The two forms of a type's values, which fix the order of the dot
 * product's float operations (quant.c, "The specification"):
 *   direct: vals[] are the weights themselves (F32, F16, BF16, Q4_K, Q5_K);
 *   scaled: weight i = scales[i / group] * vals[i], vals[] small integers
 *           (Q8_0 and Q4_0 with groups of 32, Q6_K with groups of 16). */
typedef void (*span_decode_fn)(const unsigned char *p, int len, float *vals, float *scales);

/* The K types' eight (scale, min) pairs of six bits, unpacked from their
 * 12 bytes, and times the block's d and dmin (exact products in float). */
void quant_k_scales(const unsigned char *s, float d, float dmin, float d1[8], float m1[8]);

static inline uint16_t quant_le16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
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
/* The AVX-512 path is the AVX2 one but for these one-vector products. */
float quant_avx512_dot1_q4_k(const unsigned char *row, const float *x, int64_t n);
void quant_avx512_dot_n(const struct quant_kernels *k, const unsigned char *row, int64_t n,
                        const float *x, int64_t x_stride, int nx, float *out);
#endif

/* The quantizers (quant_make.c): in[0..n) to blocks at out. */
void quant_make_q8_0(const float *in, unsigned char *out, int64_t n);
void quant_make_q4_0(const float *in, unsigned char *out, int64_t n);
void quant_make_q4_k(const float *in, unsigned char *out, int64_t n);
void quant_make_q5_k(const float *in, unsigned char *out, int64_t n);
void quant_make_q6_k(const float *in, unsigned char *out, int64_t n);

#endif
