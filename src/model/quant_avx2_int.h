/* quant_avx2_int.h - what the AVX2 build of the weight kernels
 * (quant_avx2.c) and its AVX-512 additions (quant_avx512.c) share: eight
 * values loaded as floats, the K types' scales, and the accumulation of
 * quant.c's specification on eight lanes (the four accumulators, the two
 * forms, a span against several vectors). All inline, built for the
 * target of the function that takes them in. */
#ifndef LOGITLAB_QUANT_AVX2_INT_H
#define LOGITLAB_QUANT_AVX2_INT_H

#include "model/quant_int.h"

#if QUANT_HAVE_AVX2

#include <immintrin.h>
#include <string.h>

#define AVX2   __attribute__((target("avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

/* ---- loading eight values ---- */

AVX2 INLINE __m256 s8_to_ps(const void *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(p)));
}

AVX2 INLINE __m256 u8_to_ps(const void *p)
{
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(p)));
}

AVX2 INLINE __m256 f16_to_ps(const unsigned char *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const void *)p));
}

AVX2 INLINE __m256 bf16_to_ps(const unsigned char *p)
{
    __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const void *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}

AVX2 INLINE __m256 f32_to_ps(const unsigned char *p)
{
    return _mm256_loadu_ps((const float *)(const void *)p);
}

AVX2 INLINE float f32_at(const unsigned char *p)
{
    float f;
    memcpy(&f, p, sizeof f);
    return f;
}

AVX2 INLINE float f16_at(const unsigned char *p)
{
    return _cvtsh_ss(quant_le16(p));
}

/* quant_k_scales with 32-bit words: bytes 0-3 hold scales 0-3 (and the top
 * bits of scales 4-7), 4-7 the mins 0-3 (and the top bits of mins 4-7),
 * 8-11 the low nibbles of scales (low) and mins (high) 4-7. sc[0..7] are
 * the d1 (d * scale), sc[8..15] the m1 (dmin * min). */
AVX2 INLINE void k_scales(const unsigned char *p, float sc[16])
{
    uint32_t w[3];
    memcpy(w, p + QK_SC, sizeof w);
    const uint32_t six = 0x3f3f3f3fu, four = 0x0f0f0f0fu, two = 0x03030303u;
    uint32_t s[2] = { w[0] & six, (w[2] & four) | (((w[0] >> 6) & two) << 4) };
    uint32_t mn[2] = { w[1] & six, ((w[2] >> 4) & four) | (((w[1] >> 6) & two) << 4) };
    __m256 d = _mm256_set1_ps(f16_at(p + QK_D)), dmin = _mm256_set1_ps(f16_at(p + QK_DMIN));
    _mm256_storeu_ps(sc, _mm256_mul_ps(d, u8_to_ps(s)));
    _mm256_storeu_ps(sc + 8, _mm256_mul_ps(dmin, u8_to_ps(mn)));
}

/* ---- the accumulation of quant.c's specification ---- */

struct acc4 {
    __m256 a[4];
};

AVX2 INLINE void acc_zero(struct acc4 *s)
{
    for (int a = 0; a < 4; a++)
        s->a[a] = _mm256_setzero_ps();
}

/* quant.c's acc_sum, in its order. */
AVX2 INLINE float acc_sum(const struct acc4 *s)
{
    __m256 v = _mm256_add_ps(_mm256_add_ps(s->a[0], s->a[1]), _mm256_add_ps(s->a[2], s->a[3]));
    __m128 u = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    __m128 w = _mm_add_ps(u, _mm_movehl_ps(u, u));
    return _mm_cvtss_f32(_mm_add_ss(w, _mm_shuffle_ps(w, w, 1)));
}

/* The direct form's last values (an F32/F16/BF16 row's tail, fewer than 32,
 * starting at a multiple of 32): groups of eight, then fewer; the lanes past
 * the end keep their sums, as quant.c leaves them. */
AVX2 INLINE void acc_tail(struct acc4 *s, const float *w, const float *x, int len)
{
    for (int g = 0, i = 0; i < len; g++, i += 8) {
        int r = len - i < 8 ? len - i : 8;
        __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(r), lane);
        __m256 prod = _mm256_fmadd_ps(_mm256_maskload_ps(w + i, mask),
                                      _mm256_maskload_ps(x + i, mask), s->a[g]);
        s->a[g] = _mm256_blendv_ps(s->a[g], prod, _mm256_castsi256_ps(mask));
    }
}

/* Direct form over a span of len values (starting at a multiple of 32). */
AVX2 INLINE void acc_direct(struct acc4 *s, const float *w, const float *x, int len)
{
    __m256 a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];
    int i = 0;
    for (; i + 32 <= len; i += 32) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8), _mm256_loadu_ps(x + i + 8), a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 16), _mm256_loadu_ps(x + i + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 24), _mm256_loadu_ps(x + i + 24), a3);
    }
    s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;
    if (i < len)
        acc_tail(s, w + i, x + i, len - i);
}

/* One group of the scaled form: t over its 32 (Q8_0, Q4_0) or 16 (Q6_K)
 * values, eight lanes at a time, then a += scale * t. */
AVX2 INLINE __m256 group32(const float *q, const float *x, float scale, __m256 a)
{
    __m256 t = _mm256_mul_ps(_mm256_loadu_ps(q), _mm256_loadu_ps(x));
    t = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8), _mm256_loadu_ps(x + 8), t);
    t = _mm256_fmadd_ps(_mm256_loadu_ps(q + 16), _mm256_loadu_ps(x + 16), t);
    t = _mm256_fmadd_ps(_mm256_loadu_ps(q + 24), _mm256_loadu_ps(x + 24), t);
    return _mm256_fmadd_ps(_mm256_set1_ps(scale), t, a);
}

AVX2 INLINE __m256 group16(const float *q, const float *x, float scale, __m256 a)
{
    __m256 t = _mm256_mul_ps(_mm256_loadu_ps(q), _mm256_loadu_ps(x));
    t = _mm256_fmadd_ps(_mm256_loadu_ps(q + 8), _mm256_loadu_ps(x + 8), t);
    return _mm256_fmadd_ps(_mm256_set1_ps(scale), t, a);
}

/* The scaled form over a span: group g into accumulator g % 4. */
#define ACC_SCALED(G)                                                                              \
    AVX2 INLINE void acc_scaled##G(struct acc4 *s, const float *q, const float *scales,            \
                                   const float *x, int len)                                        \
    {                                                                                              \
        int ng = len / (G), g = 0;                                                                 \
        __m256 a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];                             \
        for (; g + 4 <= ng; g += 4, q += 4 * (G), x += 4 * (G)) {                                  \
            a0 = group##G(q, x, scales[g], a0);                                                    \
            a1 = group##G(q + (G), x + (G), scales[g + 1], a1);                                    \
            a2 = group##G(q + 2 * (G), x + 2 * (G), scales[g + 2], a2);                            \
            a3 = group##G(q + 3 * (G), x + 3 * (G), scales[g + 3], a3);                            \
        }                                                                                          \
        s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;                                    \
        for (int r = 0; g < ng; g++, r++, q += (G), x += (G))                                      \
            s->a[r] = group##G(q, x, scales[g], s->a[r]);                                          \
    }
ACC_SCALED(32)
ACC_SCALED(16)

/* Two vectors at once over a span whose length is a multiple of 32: each
 * row of eight weights (or integers) is loaded once for both. The
 * operations on each vector's accumulators are acc_direct's, acc_scaled's.
 * (The accumulators are copied to locals: __m256 may alias the floats.) */
AVX2 INLINE void acc_direct2(struct acc4 *s, struct acc4 *z, const float *w, const float *x,
                             const float *y, int len)
{
    __m256 a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];
    __m256 b0 = z->a[0], b1 = z->a[1], b2 = z->a[2], b3 = z->a[3];
    for (int i = 0; i < len; i += 32, w += 32, x += 32, y += 32) {
        __m256 v0 = _mm256_loadu_ps(w), v1 = _mm256_loadu_ps(w + 8);
        __m256 v2 = _mm256_loadu_ps(w + 16), v3 = _mm256_loadu_ps(w + 24);
        a0 = _mm256_fmadd_ps(v0, _mm256_loadu_ps(x), a0);
        b0 = _mm256_fmadd_ps(v0, _mm256_loadu_ps(y), b0);
        a1 = _mm256_fmadd_ps(v1, _mm256_loadu_ps(x + 8), a1);
        b1 = _mm256_fmadd_ps(v1, _mm256_loadu_ps(y + 8), b1);
        a2 = _mm256_fmadd_ps(v2, _mm256_loadu_ps(x + 16), a2);
        b2 = _mm256_fmadd_ps(v2, _mm256_loadu_ps(y + 16), b2);
        a3 = _mm256_fmadd_ps(v3, _mm256_loadu_ps(x + 24), a3);
        b3 = _mm256_fmadd_ps(v3, _mm256_loadu_ps(y + 24), b3);
    }
    s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;
    z->a[0] = b0, z->a[1] = b1, z->a[2] = b2, z->a[3] = b3;
}

/* One group of 8n values for two vectors: t and u, then the scale. */
#define GROUP2(n, q, x, y, sc, a, b)                                                               \
    do {                                                                                           \
        __m256 v_ = _mm256_loadu_ps(q);                                                            \
        __m256 t_ = _mm256_mul_ps(v_, _mm256_loadu_ps(x)),                                         \
               u_ = _mm256_mul_ps(v_, _mm256_loadu_ps(y));                                         \
        for (int k_ = 1; k_ < (n); k_++) {                                                         \
            v_ = _mm256_loadu_ps((q) + 8 * k_);                                                    \
            t_ = _mm256_fmadd_ps(v_, _mm256_loadu_ps((x) + 8 * k_), t_);                           \
            u_ = _mm256_fmadd_ps(v_, _mm256_loadu_ps((y) + 8 * k_), u_);                           \
        }                                                                                          \
        __m256 s_ = _mm256_set1_ps(sc);                                                            \
        a = _mm256_fmadd_ps(s_, t_, a);                                                            \
        b = _mm256_fmadd_ps(s_, u_, b);                                                            \
    } while (0)

#define ACC_SCALED2(G)                                                                             \
    AVX2 INLINE void acc_scaled2_##G(struct acc4 *s, struct acc4 *z, const float *q,               \
                                     const float *scales, const float *x, const float *y, int len) \
    {                                                                                              \
        __m256 a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];                             \
        __m256 b0 = z->a[0], b1 = z->a[1], b2 = z->a[2], b3 = z->a[3];                             \
        for (int g = 0; g < len / (G); g += 4, q += 4 * (G), x += 4 * (G), y += 4 * (G)) {         \
            GROUP2((G) / 8, q, x, y, scales[g], a0, b0);                                           \
            GROUP2((G) / 8, q + (G), x + (G), y + (G), scales[g + 1], a1, b1);                     \
            GROUP2((G) / 8, q + 2 * (G), x + 2 * (G), y + 2 * (G), scales[g + 2], a2, b2);         \
            GROUP2((G) / 8, q + 3 * (G), x + 3 * (G), y + 3 * (G), scales[g + 3], a3, b3);         \
        }                                                                                          \
        s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;                                    \
        z->a[0] = b0, z->a[1] = b1, z->a[2] = b2, z->a[3] = b3;                                    \
    }
ACC_SCALED2(32)
ACC_SCALED2(16)

/* One span against vectors j0 .. j0 + m of the tile. */
AVX2 INLINE void span_vectors(const struct quant_kernels *k, const float *vals, const float *scales,
                              int len, const float *x, int64_t x_stride, int m, struct acc4 *acc)
{
    int j = 0;
    /* Pairs where the span is whole groups of four (every span but a
     * row's last, which may be shorter). */
    if (len % (k->group ? 4 * k->group : 32) == 0)
        for (; j + 2 <= m; j += 2) {
            const float *xj = x + j * x_stride, *yj = xj + x_stride;
            if (k->group == 32)
                acc_scaled2_32(&acc[j], &acc[j + 1], vals, scales, xj, yj, len);
            else if (k->group == 16)
                acc_scaled2_16(&acc[j], &acc[j + 1], vals, scales, xj, yj, len);
            else
                acc_direct2(&acc[j], &acc[j + 1], vals, xj, yj, len);
        }
    for (; j < m; j++) {
        const float *xj = x + j * x_stride;
        if (k->group == 32)
            acc_scaled32(&acc[j], vals, scales, xj, len);
        else if (k->group == 16)
            acc_scaled16(&acc[j], vals, scales, xj, len);
        else
            acc_direct(&acc[j], vals, xj, len);
    }
}

/* ---- the scaled types' small integers, as quant_avx2.c and
 * quant_avx2_low.c multiply them ---- */

AVX2 INLINE __m256i load32(const unsigned char *p)
{
    return _mm256_loadu_si256((const void *)p);
}

/* One group of G small integers q against x, then a += scale * t: the
 * scaled form on integers, in group32's and group16's order. */
AVX2 INLINE __m256 int_group(const signed char *q, const float *x, int G, const float *sc, __m256 a)
{
    __m256 t = _mm256_mul_ps(s8_to_ps(q), _mm256_loadu_ps(x));
    for (int r = 8; r < G; r += 8)
        t = _mm256_fmadd_ps(s8_to_ps(q + r), _mm256_loadu_ps(x + r), t);
    return _mm256_fmadd_ps(_mm256_broadcast_ss(sc), t, a);
}

/* A block's 256 small integers u and its groups' scales, in groups of G
 * (16 or 32) values: group g (two or four rows of eight) into accumulator
 * g % 4, as the scaled form's group16 and group32 do on floats. */
#define SCALED_INTS(G)                                                                             \
    AVX2 INLINE void scaled_ints##G(const signed char *u, const float *sc, const float *x,         \
                                    struct acc4 *s)                                                \
    {                                                                                              \
        __m256 a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];                             \
        for (int g = 0; g < QK_SUPER / (G); g += 4) {                                              \
            const signed char *q = u + (G)*g;                                                      \
            const float *xg = x + (G)*g;                                                           \
            a0 = int_group(q, xg, (G), sc + g, a0);                                                \
            a1 = int_group(q + (G), xg + (G), (G), sc + g + 1, a1);                                \
            a2 = int_group(q + 2 * (G), xg + 2 * (G), (G), sc + g + 2, a2);                        \
            a3 = int_group(q + 3 * (G), xg + 3 * (G), (G), sc + g + 3, a3);                        \
        }                                                                                          \
        s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;                                    \
    }
SCALED_INTS(16)
SCALED_INTS(32)

/* The one-vector products of the 256-value types: a block's scales (up to
 * 32 floats, by SCALES) and small integers (of type Q, by T##_values),
 * then USE(u, sc, x, acc) multiplies them in the specification's order.
 * Each block's are made while the block before is multiplied, in a second
 * buffer: its multiply-adds then load what was stored a block earlier, not
 * what was just stored, which the CPU cannot always hand on before the
 * store is done (a one-vector product of a 2,048 x 8,192 matrix, one core
 * of the EPYC, AVX-512 path: Q4_K 1.02 to 0.90 ms; Llama 3.2 1B Q4_K_M
 * decode 58.6 to 55.0 ms a token; the same operations, so the same bits).
 * quant_avx512.c's Q4_K product does the same with its own accumulators. */
#define DOT1_AHEAD(T, bytes, Q, SCALES, USE)                                                       \
    AVX2 float quant_avx2_dot1_##T(const unsigned char *p, const float *x, int64_t n)              \
    {                                                                                              \
        struct acc4 s;                                                                             \
        acc_zero(&s);                                                                              \
        Q u[2][QK_SUPER] __attribute__((aligned(32)));                                             \
        float sc[2][32];                                                                           \
        int64_t nb = n / QK_SUPER;                                                                 \
        if (nb > 0)                                                                                \
            SCALES(p, sc[0]), T##_values(p, u[0]);                                                 \
        for (int64_t b = 0; b < nb; b++, p += (bytes), x += QK_SUPER) {                            \
            int c = (int)(b & 1);                                                                  \
            if (b + 1 < nb)                                                                        \
                SCALES(p + (bytes), sc[c ^ 1]), T##_values(p + (bytes), u[c ^ 1]);                 \
            USE(u[c], sc[c], x, &s);                                                               \
        }                                                                                          \
        return acc_sum(&s);                                                                        \
    }

/* Q6_K and Q3_K (groups of 16), IQ4_XS (groups of 32): the scaled form on
 * a block's integers, group by group. */
#define DOT1_SCALED(T, G, bytes) DOT1_AHEAD(T, bytes, signed char, T##_scales, scaled_ints##G)

/* Q6_K, Q3_K, IQ4_XS: a block's scales and small integers, the integers
 * widened to floats. */
#define DEC_INTS(T)                                                                                \
    AVX2 void quant_avx2_dec_##T(const unsigned char *p, int len, float *vals, float *scales)      \
    {                                                                                              \
        (void)len;                                                                                 \
        signed char u[QK_SUPER];                                                                   \
        T##_scales(p, scales);                                                                     \
        T##_values(p, u);                                                                          \
        for (int i = 0; i < QK_SUPER; i += 8)                                                      \
            _mm256_storeu_ps(vals + i, s8_to_ps(u + i));                                           \
    }

/* Q8_0, Q4_0, IQ4_NL, Q5_0: block b is group b, into accumulator b % 4. */
#define DOT1_SMALL(T, bytes)                                                                       \
    AVX2 float quant_avx2_dot1_##T(const unsigned char *p, const float *x, int64_t n)              \
    {                                                                                              \
        struct acc4 s;                                                                             \
        acc_zero(&s);                                                                              \
        __m256 a0 = s.a[0], a1 = s.a[1], a2 = s.a[2], a3 = s.a[3];                                 \
        int64_t nb = n / QK_SMALL, b = 0;                                                          \
        for (; b + 4 <= nb; b += 4, p += 4 * (bytes), x += 4 * QK_SMALL) {                         \
            a0 = T##_block(p, x, a0);                                                              \
            a1 = T##_block(p + (bytes), x + QK_SMALL, a1);                                         \
            a2 = T##_block(p + 2 * (bytes), x + 2 * QK_SMALL, a2);                                 \
            a3 = T##_block(p + 3 * (bytes), x + 3 * QK_SMALL, a3);                                 \
        }                                                                                          \
        s.a[0] = a0, s.a[1] = a1, s.a[2] = a2, s.a[3] = a3;                                        \
        for (int r = 0; b < nb; b++, r++, p += (bytes), x += QK_SMALL)                             \
            s.a[r] = T##_block(p, x, s.a[r]);                                                      \
        return acc_sum(&s);                                                                        \
    }

/* The prefill products' copy of m vectors (xs apart), len values each
 * from x on, stride floats apart in xp: with stride a cache line more than
 * a multiple of 4 KiB, the vectors a kernel reads side by side fall in
 * different sets of the first-level cache, where the activations' own
 * strides (2,048, 3,072, 8,192 floats) put them all in one. */
INLINE void copy_vectors(float *xp, int stride, const float *x, int64_t xs, int len, int m)
{
    for (int j = 0; j < m; j++)
        memcpy(xp + (int64_t)j * stride, x + j * xs, (size_t)len * sizeof *x);
}

#endif
#endif
