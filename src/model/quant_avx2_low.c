/* quant_avx2_low.c - the AVX2 kernels of the lower-bit and older types:
 * Q2_K, Q3_K, IQ4_XS, IQ4_NL, Q4_1, Q5_0 and Q5_1 (quant_avx2.c has the
 * others). As there, each does the float operations of quant.c's
 * specification in its order, so the portable build's bits; the integer
 * unpacking is its own: 32-byte integer operations, byte shuffles for
 * IQ4's levels and Q5_x's fifth bits. The AVX-512 path takes these too. */
#include "model/quant_avx2_int.h"

#if QUANT_HAVE_AVX2

/* Q2_K's and Q3_K's 2-bit numbers: value 128h + 32k + l is bits 2k and
 * 2k + 1 of qs[32h + l] (quant_dec.c's two_bits); these are the 32 of k
 * from h's 32 bytes. A 16-bit shift leaves each byte's own bits at the
 * bottom; the mask drops what came from its neighbour. */
AVX2 INLINE __m256i two_bits32(__m256i qs, int k)
{
    return _mm256_and_si256(_mm256_srli_epi16(qs, 2 * k), _mm256_set1_epi8(3));
}

/* Q3_K: the 2-bit number less 4 unless bit 4h + k of hmask[l] is set, as
 * signed bytes (quant_dec.c's quant_dec_q3_k). */
AVX2 INLINE void q3_k_values(const unsigned char *p, signed char *u)
{
    const __m256i four = _mm256_set1_epi8(4), zero = _mm256_setzero_si256();
    __m256i hm = load32(p + Q3_K_HM);
    for (int h = 0; h < 2; h++) {
        __m256i qs = load32(p + Q3_K_QS + 32 * h);
        for (int k = 0; k < 4; k++) {
            __m256i low = two_bits32(qs, k);
            __m256i bit = _mm256_and_si256(hm, _mm256_set1_epi8((char)(1 << (4 * h + k))));
            __m256i minus = _mm256_and_si256(_mm256_cmpeq_epi8(bit, zero), four);
            _mm256_storeu_si256((void *)(u + 128 * h + 32 * k), _mm256_sub_epi8(low, minus));
        }
    }
}

/* Q3_K's sixteen scales d * (s - 32), s's low four bits from the nibbles
 * of bytes 0-7 (groups 0-7 the low ones, 8-15 the high), its top two from
 * bits 2(g / 4) of byte 8 + g % 4 (quant_q3_k_scale). */
AVX2 INLINE void q3_k_scales(const unsigned char *p, float *scales)
{
    const __m128i m4 = _mm_set1_epi8(15), m2 = _mm_set1_epi8(3);
    /* The twelve bytes in lanes 0-11, zeros above: sixteen from four before
     * them, shifted down, so the load stays inside the block (sixteen from
     * Q3_K_SC would pass its end) and needs no copy. */
    __m128i v = _mm_srli_si128(_mm_loadu_si128((const void *)(p + Q3_K_SC - 4)), 4);
    __m128i low = _mm_unpacklo_epi64(_mm_and_si128(v, m4), _mm_and_si128(_mm_srli_epi16(v, 4), m4));
    __m128i t =
        _mm_shuffle_epi8(v, _mm_setr_epi8(8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11, 8, 9, 10, 11));
    __m128i top = _mm_and_si128(t, m2);
    top = _mm_blend_epi32(top, _mm_and_si128(_mm_srli_epi16(t, 2), m2), 2);
    top = _mm_blend_epi32(top, _mm_and_si128(_mm_srli_epi16(t, 4), m2), 4);
    top = _mm_blend_epi32(top, _mm_and_si128(_mm_srli_epi16(t, 6), m2), 8);
    __m128i s = _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(top, 4)), _mm_set1_epi8(32));
    __m256 d = _mm256_set1_ps(f16_at(p + Q3_K_D));
    _mm256_storeu_ps(scales, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(s))));
    _mm256_storeu_ps(scales + 8, _mm256_mul_ps(d, _mm256_cvtepi32_ps(
                                                      _mm256_cvtepi8_epi32(_mm_srli_si128(s, 8)))));
}

/* Q2_K: the 2-bit numbers themselves, unsigned. */
AVX2 INLINE void q2_k_values(const unsigned char *p, unsigned char *u)
{
    for (int h = 0; h < 2; h++) {
        __m256i qs = load32(p + Q2_K_QS + 32 * h);
        for (int k = 0; k < 4; k++)
            _mm256_storeu_si256((void *)(u + 128 * h + 32 * k), two_bits32(qs, k));
    }
}

/* Q2_K's group g: d * s in sc[g] and dmin * m in sc[16 + g] for its scale
 * byte (s low, m high), as quant_dec_q2_k computes them. */
AVX2 INLINE void q2_k_scales(const unsigned char *p, float *sc)
{
    float d = f16_at(p + Q2_K_D), dmin = f16_at(p + Q2_K_DMIN);
    for (int g = 0; g < 16; g++) {
        sc[g] = d * (float)(p[Q2_K_SC + g] & 15);
        sc[16 + g] = dmin * (float)(p[Q2_K_SC + g] >> 4);
    }
}

/* Eight Q2_K weights dl * n - ml: the product, then the difference, each
 * rounded, as the portable decoder's expression. */
AVX2 INLINE __m256 q2_k_eight(const unsigned char *u, float dl, float ml)
{
    return _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(dl), u8_to_ps(u)), _mm256_set1_ps(ml));
}

/* IQ4_XS: sub-block b's 16 bytes give its values 0-15 (low nibbles) and
 * 16-31 (high), each an index into the IQ4 levels, as signed bytes. */
static const signed char IQ4_LEVELS_S8[16] = QUANT_IQ4_LEVELS_INIT;

AVX2 INLINE void iq4_xs_values(const unsigned char *p, signed char *u)
{
    const __m256i m4 = _mm256_set1_epi8(15);
    const __m256i lv = _mm256_broadcastsi128_si256(_mm_loadu_si128((const void *)IQ4_LEVELS_S8));
    for (int c = 0; c < 4; c++) {
        __m256i v = load32(p + IQ4_XS_QS + 32 * c);
        __m256i lo = _mm256_and_si256(v, m4), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        __m256i b0 = _mm256_permute2x128_si256(lo, hi, 0x20),
                b1 = _mm256_permute2x128_si256(lo, hi, 0x31);
        _mm256_storeu_si256((void *)(u + 64 * c), _mm256_shuffle_epi8(lv, b0));
        _mm256_storeu_si256((void *)(u + 64 * c + 32), _mm256_shuffle_epi8(lv, b1));
    }
}

/* Q4_1's and Q5_x's numbers n of a block of 32 as bytes: value j < 16 the
 * low nibble of qs[j], j >= 16 the high nibble of qs[j - 16], plus 16
 * when bit j of qh is set (quant_dec.c's nibbles32). Byte j of the fifth
 * bits is qh's byte j / 8 masked by bit j % 8. */
AVX2 INLINE __m256i nibbles_qh(const unsigned char *qs, uint32_t qh)
{
    const __m128i m4 = _mm_set1_epi8(15);
    __m128i v = _mm_loadu_si128((const void *)qs);
    __m256i n = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), m4), _mm_and_si128(v, m4));
    __m256i h =
        _mm256_shuffle_epi8(_mm256_set1_epi32((int)qh),
                            _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2,
                                             2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    h = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(h, bit), bit), _mm256_set1_epi8(16));
    return _mm256_or_si256(n, h);
}

/* Q4_1 and Q5_1: eight weights d * n + m, the product (exact) then the sum. */
AVX2 INLINE __m256 dm_eight(const unsigned char *u, float d, float m)
{
    return _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(d), u8_to_ps(u)), _mm256_set1_ps(m));
}

/* IQ4_NL: a block's 32 values, levels of its nibbles (Q4_0's order). */
AVX2 INLINE void iq4_nl_values(const unsigned char *p, signed char *u)
{
    const __m128i m4 = _mm_set1_epi8(15), lv = _mm_loadu_si128((const void *)IQ4_LEVELS_S8);
    __m128i v = _mm_loadu_si128((const void *)(p + 2));
    _mm_storeu_si128((void *)u, _mm_shuffle_epi8(lv, _mm_and_si128(v, m4)));
    _mm_storeu_si128((void *)(u + 16),
                     _mm_shuffle_epi8(lv, _mm_and_si128(_mm_srli_epi16(v, 4), m4)));
}

/* IQ4_XS's eight scales d * s (quant_dec.c's quant_iq4_xs_scale). */
AVX2 INLINE void iq4_xs_scales(const unsigned char *p, float *scales)
{
    float d = f16_at(p);
    for (int b = 0; b < 8; b++)
        scales[b] = d * (float)quant_iq4_xs_scale(p, b);
}

AVX2 void quant_avx2_dec_q2_k(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)len, (void)scales;
    unsigned char u[QK_SUPER];
    float sc[32];
    q2_k_scales(p, sc);
    q2_k_values(p, u);
    for (int i = 0; i < QK_SUPER; i += 8)
        _mm256_storeu_ps(vals + i, q2_k_eight(u + i, sc[i / 16], sc[16 + i / 16]));
}

/* Q4_1 (qh: none) and Q5_1: the block's numbers at qs, d and m first. */
AVX2 INLINE void dec_dm(const unsigned char *p, int len, int bytes, int qs, int has_qh, float *vals)
{
    unsigned char u[QK_SMALL];
    for (int b = 0; b < len / QK_SMALL; b++, p += bytes) {
        float d = f16_at(p), m = f16_at(p + 2);
        _mm256_storeu_si256((void *)u, nibbles_qh(p + qs, has_qh ? quant_le32(p + 4) : 0));
        for (int t = 0; t < 4; t++)
            _mm256_storeu_ps(vals + QK_SMALL * b + 8 * t, dm_eight(u + 8 * t, d, m));
    }
}

AVX2 void quant_avx2_dec_q4_1(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)scales;
    dec_dm(p, len, Q4_1_BYTES, 4, 0, vals);
}

AVX2 void quant_avx2_dec_q5_1(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)scales;
    dec_dm(p, len, Q5_1_BYTES, 8, 1, vals);
}

/* Q5_0: n - 16 with the block's d as its scale. */
AVX2 INLINE void q5_0_values(const unsigned char *p, signed char *u)
{
    _mm256_storeu_si256(
        (void *)u, _mm256_sub_epi8(nibbles_qh(p + 6, quant_le32(p + 2)), _mm256_set1_epi8(16)));
}

/* Q5_0 and IQ4_NL: a block is its f16 d, the scale, and 32 small integers
 * (T##_values); the span's decoder, and a block against x for DOT1_SMALL. */
#define SMALL_INTS(T, bytes)                                                                       \
    AVX2 void quant_avx2_dec_##T(const unsigned char *p, int len, float *vals, float *scales)      \
    {                                                                                              \
        signed char u[QK_SMALL];                                                                   \
        for (int b = 0; b < len / QK_SMALL; b++, p += (bytes)) {                                   \
            scales[b] = f16_at(p);                                                                 \
            T##_values(p, u);                                                                      \
            for (int t = 0; t < 4; t++)                                                            \
                _mm256_storeu_ps(vals + QK_SMALL * b + 8 * t, s8_to_ps(u + 8 * t));                \
        }                                                                                          \
    }                                                                                              \
    AVX2 INLINE __m256 T##_block(const unsigned char *p, const float *x, __m256 a)                 \
    {                                                                                              \
        signed char u[QK_SMALL];                                                                   \
        T##_values(p, u);                                                                          \
        return int_group(u, x, QK_SMALL, &(float){ f16_at(p) }, a);                                \
    }
SMALL_INTS(q5_0, Q5_0_BYTES)
SMALL_INTS(iq4_nl, IQ4_NL_BYTES)

DEC_INTS(q3_k)
DEC_INTS(iq4_xs)

/* Q4_1 and Q5_1 in the direct form: a block's four rows of eight are
 * accumulators 0 to 3, in order. */
#define DOT1_DM(T, bytes, qs, has_qh)                                                              \
    AVX2 float quant_avx2_dot1_##T(const unsigned char *p, const float *x, int64_t n)              \
    {                                                                                              \
        struct acc4 s;                                                                             \
        acc_zero(&s);                                                                              \
        unsigned char u[QK_SMALL];                                                                 \
        for (int64_t b = 0; b < n / QK_SMALL; b++, p += (bytes), x += QK_SMALL) {                  \
            float d = f16_at(p), m = f16_at(p + 2);                                                \
            _mm256_storeu_si256((void *)u,                                                         \
                                nibbles_qh(p + (qs), (has_qh) ? quant_le32(p + 4) : 0));           \
            for (int t = 0; t < 4; t++)                                                            \
                s.a[t] = _mm256_fmadd_ps(dm_eight(u + 8 * t, d, m), _mm256_loadu_ps(x + 8 * t),    \
                                         s.a[t]);                                                  \
        }                                                                                          \
        return acc_sum(&s);                                                                        \
    }
DOT1_DM(q4_1, Q4_1_BYTES, 4, 0)
DOT1_DM(q5_1, Q5_1_BYTES, 8, 1)

DOT1_SMALL(iq4_nl, IQ4_NL_BYTES)
DOT1_SMALL(q5_0, Q5_0_BYTES)

/* Q2_K in the direct form: value i to lane i % 8 of accumulator
 * (i / 8) % 4, so group g's two rows of eight go to accumulators 2g % 4
 * and 2g % 4 + 1 (sc as q2_k_scales leaves it). */
AVX2 INLINE void q2_k_direct(const unsigned char *u, const float *sc, const float *x,
                             struct acc4 *s)
{
    const float *dl = sc, *ml = sc + 16;
    __m256 a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];
    for (int g = 0; g < 16; g += 2) {
        const unsigned char *q = u + 16 * g;
        const float *xg = x + 16 * g;
        a0 = _mm256_fmadd_ps(q2_k_eight(q, dl[g], ml[g]), _mm256_loadu_ps(xg), a0);
        a1 = _mm256_fmadd_ps(q2_k_eight(q + 8, dl[g], ml[g]), _mm256_loadu_ps(xg + 8), a1);
        a2 =
            _mm256_fmadd_ps(q2_k_eight(q + 16, dl[g + 1], ml[g + 1]), _mm256_loadu_ps(xg + 16), a2);
        a3 =
            _mm256_fmadd_ps(q2_k_eight(q + 24, dl[g + 1], ml[g + 1]), _mm256_loadu_ps(xg + 24), a3);
    }
    s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;
}

DOT1_AHEAD(q2_k, Q2_K_BYTES, unsigned char, q2_k_scales, q2_k_direct)
DOT1_SCALED(q3_k, 16, Q3_K_BYTES)
DOT1_SCALED(iq4_xs, 32, IQ4_XS_BYTES)

#else
/* Elsewhere the file is empty, which ISO C does not allow a file to be. */
typedef int quant_avx2_low_absent;
#endif
