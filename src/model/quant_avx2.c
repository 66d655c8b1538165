/* quant_avx2.c - the AVX2 + FMA build of the weight kernels, for x86-64
 * CPUs that have them (quant.c asks the CPU at run time). Every function
 * here does the float operations of quant.c's specification in its order,
 * eight lanes at a time, so its results are the portable build's bits; the
 * integer unpacking around them is free to differ, and does: the K types'
 * small integers are first unpacked to one byte each with 32-byte integer
 * operations, then widened eight at a time. */
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

/* ---- the K types' integers, one byte per value, in value order ---- */

AVX2 INLINE __m256i load32(const unsigned char *p)
{
    return _mm256_loadu_si256((const void *)p);
}

/* Q4_K (and Q5_K's low bits): chunk c's 32 bytes give values 64c + l (low
 * nibbles) and 64c + 32 + l (high nibbles). */
AVX2 INLINE void nibbles(const unsigned char *qs, unsigned char *u)
{
    const __m256i m4 = _mm256_set1_epi8(15);
    for (int c = 0; c < 4; c++) {
        __m256i v = load32(qs + 32 * c);
        _mm256_storeu_si256((void *)(u + 64 * c), _mm256_and_si256(v, m4));
        _mm256_storeu_si256((void *)(u + 64 * c + 32),
                            _mm256_and_si256(_mm256_srli_epi16(v, 4), m4));
    }
}

/* Q5_K's fifth bits: bit 2c of qh[l] is 16 for value 64c + l, bit 2c + 1
 * for value 64c + 32 + l. A 16-bit shift moves each byte's bit to bit 4
 * without crossing bytes for these distances (at most 4 left, 3 right). */
AVX2 INLINE __m256i bit_to_16(__m256i qh, int k)
{
    __m256i s = k <= 4 ? _mm256_slli_epi16(qh, 4 - k) : _mm256_srli_epi16(qh, k - 4);
    return _mm256_and_si256(s, _mm256_set1_epi8(16));
}

AVX2 INLINE void q5_k_values(const unsigned char *p, unsigned char *u)
{
    nibbles(p + Q5_K_QS, u);
    __m256i qh = load32(p + Q5_K_QH);
    for (int c = 0; c < 4; c++)
        for (int half = 0; half < 2; half++) {
            unsigned char *o = u + 64 * c + 32 * half;
            __m256i lo = load32(o);
            _mm256_storeu_si256((void *)o, _mm256_or_si256(lo, bit_to_16(qh, 2 * c + half)));
        }
}

/* Q6_K, minus 32, as signed bytes: value 128h + 32k + l (quant.c's dec_q6_k). */
AVX2 INLINE void q6_k_values(const unsigned char *p, signed char *u)
{
    const __m256i m4 = _mm256_set1_epi8(15), m2 = _mm256_set1_epi8(0x30);
    const __m256i off = _mm256_set1_epi8(32);
    for (int h = 0; h < 2; h++) {
        __m256i a = load32(p + Q6_K_QL + 64 * h), b = load32(p + Q6_K_QL + 64 * h + 32);
        __m256i qh = load32(p + Q6_K_QH + 32 * h);
        __m256i q[4] = {
            _mm256_or_si256(_mm256_and_si256(a, m4),
                            _mm256_and_si256(_mm256_slli_epi16(qh, 4), m2)),
            _mm256_or_si256(_mm256_and_si256(b, m4),
                            _mm256_and_si256(_mm256_slli_epi16(qh, 2), m2)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), m4),
                            _mm256_and_si256(qh, m2)),
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), m4),
                            _mm256_and_si256(_mm256_srli_epi16(qh, 2), m2)),
        };
        for (int k = 0; k < 4; k++)
            _mm256_storeu_si256((void *)(u + 128 * h + 32 * k), _mm256_sub_epi8(q[k], off));
    }
}

/* quant_k_scales with 32-bit words: bytes 0-3 hold scales 0-3 (and the top
 * bits of scales 4-7), 4-7 the mins 0-3 (and the top bits of mins 4-7),
 * 8-11 the low nibbles of scales (low) and mins (high) 4-7. */
AVX2 INLINE void k_scales(const unsigned char *p, float d1[8], float m1[8])
{
    uint32_t w[3];
    memcpy(w, p + QK_SC, sizeof w);
    const uint32_t six = 0x3f3f3f3fu, four = 0x0f0f0f0fu, two = 0x03030303u;
    uint32_t sc[2] = { w[0] & six, (w[2] & four) | (((w[0] >> 6) & two) << 4) };
    uint32_t mn[2] = { w[1] & six, ((w[2] >> 4) & four) | (((w[1] >> 6) & two) << 4) };
    __m256 d = _mm256_set1_ps(f16_at(p + QK_D)), dmin = _mm256_set1_ps(f16_at(p + QK_DMIN));
    _mm256_storeu_ps(d1, _mm256_mul_ps(d, u8_to_ps(sc)));
    _mm256_storeu_ps(m1, _mm256_mul_ps(dmin, u8_to_ps(mn)));
}

/* Q6_K's sixteen scales d * sc[g], as quant.c's dec_q6_k computes them. */
AVX2 INLINE void q6_k_scales(const unsigned char *p, float *scales)
{
    __m256 d = _mm256_set1_ps(f16_at(p + Q6_K_D));
    _mm256_storeu_ps(scales, _mm256_mul_ps(d, s8_to_ps(p + Q6_K_SC)));
    _mm256_storeu_ps(scales + 8, _mm256_mul_ps(d, s8_to_ps(p + Q6_K_SC + 8)));
}

/* ---- span decoders: the same values as quant.c's ---- */

#define DEC_FLOAT(T, size, scalar)                                                                 \
    AVX2 void quant_avx2_dec_##T(const unsigned char *p, int len, float *vals, float *scales)      \
    {                                                                                              \
        (void)scales;                                                                              \
        int i = 0;                                                                                 \
        for (; i + 8 <= len; i += 8)                                                               \
            _mm256_storeu_ps(vals + i, T##_to_ps(p + (size)*i));                                   \
        for (; i < len; i++)                                                                       \
            vals[i] = scalar;                                                                      \
    }
DEC_FLOAT(f32, 4, f32_at(p + 4 * i))
DEC_FLOAT(f16, 2, quant_f16_to_f32(quant_le16(p + 2 * i)))
DEC_FLOAT(bf16, 2, quant_bf16_to_f32(quant_le16(p + 2 * i)))

AVX2 void quant_avx2_dec_q8_0(const unsigned char *p, int len, float *vals, float *scales)
{
    for (int b = 0; b < len / QK_SMALL; b++, p += Q8_0_BYTES) {
        scales[b] = f16_at(p);
        for (int t = 0; t < 4; t++)
            _mm256_storeu_ps(vals + QK_SMALL * b + 8 * t, s8_to_ps(p + 2 + 8 * t));
    }
}

/* Q4_0's four rows of eight: low nibbles of bytes 0-7, 8-15, high of 0-7, 8-15. */
AVX2 INLINE __m256 q4_0_eight(const unsigned char *p, int t)
{
    __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const void *)(p + 2 + 8 * (t & 1))));
    v = t < 2 ? _mm256_and_si256(v, _mm256_set1_epi32(15)) : _mm256_srli_epi32(v, 4);
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(v, _mm256_set1_epi32(8)));
}

AVX2 void quant_avx2_dec_q4_0(const unsigned char *p, int len, float *vals, float *scales)
{
    for (int b = 0; b < len / QK_SMALL; b++, p += Q4_0_BYTES) {
        scales[b] = f16_at(p);
        for (int t = 0; t < 4; t++)
            _mm256_storeu_ps(vals + QK_SMALL * b + 8 * t, q4_0_eight(p, t));
    }
}

/* Q4_K and Q5_K weights: d1 * q - m1 in one rounding (fmsub; d1 * q is
 * exact, so this is quant.c's d1 * q - m1). */
AVX2 INLINE void k_weights(const unsigned char *u, const float d1[8], const float m1[8], float *w)
{
    for (int j = 0; j < 8; j++) {
        __m256 d = _mm256_set1_ps(d1[j]), m = _mm256_set1_ps(m1[j]);
        for (int t = 0; t < 4; t++)
            _mm256_storeu_ps(w + 32 * j + 8 * t,
                             _mm256_fmsub_ps(d, u8_to_ps(u + 32 * j + 8 * t), m));
    }
}

AVX2 void quant_avx2_dec_q4_k(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)len, (void)scales;
    unsigned char u[QK_SUPER];
    float d1[8], m1[8];
    k_scales(p, d1, m1);
    nibbles(p + Q4_K_QS, u);
    k_weights(u, d1, m1, vals);
}

AVX2 void quant_avx2_dec_q5_k(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)len, (void)scales;
    unsigned char u[QK_SUPER];
    float d1[8], m1[8];
    k_scales(p, d1, m1);
    q5_k_values(p, u);
    k_weights(u, d1, m1, vals);
}

AVX2 void quant_avx2_dec_q6_k(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)len;
    signed char u[QK_SUPER];
    q6_k_scales(p, scales);
    q6_k_values(p, u);
    for (int i = 0; i < QK_SUPER; i += 8)
        _mm256_storeu_ps(vals + i, s8_to_ps(u + i));
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

AVX2 void quant_avx2_dot_n(const struct quant_kernels *k, const unsigned char *row, int64_t n,
                           const float *x, int64_t x_stride, int nx, float *out)
{
    if (nx == 1 && k->dot1) {
        out[0] = k->dot1(row, x, n);
        return;
    }
    float vals[SPAN] __attribute__((aligned(32))), scales[SPAN / 16];
    struct acc4 acc[QUANT_DOT_N_TILE];
    for (int j0 = 0; j0 < nx; j0 += QUANT_DOT_N_TILE) {
        int m = nx - j0 < QUANT_DOT_N_TILE ? nx - j0 : QUANT_DOT_N_TILE;
        for (int j = 0; j < m; j++)
            acc_zero(&acc[j]);
        for (int64_t pos = 0; pos < n; pos += SPAN) {
            int len = n - pos < SPAN ? (int)(n - pos) : SPAN;
            k->decode(row + pos / k->block * k->bytes, len, vals, scales);
            span_vectors(k, vals, scales, len, x + (int64_t)j0 * x_stride + pos, x_stride, m, acc);
        }
        for (int j = 0; j < m; j++)
            out[j0 + j] = acc_sum(&acc[j]);
    }
}

/* ---- one vector: decoding and multiplying in registers ---- */

/* F32, F16, BF16: the direct form straight from the row. */
#define DOT1_FLOAT(T, size)                                                                        \
    AVX2 float quant_avx2_dot1_##T(const unsigned char *p, const float *x, int64_t n)              \
    {                                                                                              \
        struct acc4 s;                                                                             \
        acc_zero(&s);                                                                              \
        __m256 a0 = s.a[0], a1 = s.a[1], a2 = s.a[2], a3 = s.a[3];                                 \
        int64_t i = 0;                                                                             \
        for (; i + 32 <= n; i += 32) {                                                             \
            a0 = _mm256_fmadd_ps(T##_to_ps(p + (size)*i), _mm256_loadu_ps(x + i), a0);             \
            a1 = _mm256_fmadd_ps(T##_to_ps(p + (size) * (i + 8)), _mm256_loadu_ps(x + i + 8), a1); \
            a2 = _mm256_fmadd_ps(T##_to_ps(p + (size) * (i + 16)), _mm256_loadu_ps(x + i + 16),    \
                                 a2);                                                              \
            a3 = _mm256_fmadd_ps(T##_to_ps(p + (size) * (i + 24)), _mm256_loadu_ps(x + i + 24),    \
                                 a3);                                                              \
        }                                                                                          \
        s.a[0] = a0, s.a[1] = a1, s.a[2] = a2, s.a[3] = a3;                                        \
        if (i < n) {                                                                               \
            float w[32];                                                                           \
            quant_avx2_dec_##T(p + (size)*i, (int)(n - i), w, NULL);                               \
            acc_tail(&s, w, x + i, (int)(n - i));                                                  \
        }                                                                                          \
        return acc_sum(&s);                                                                        \
    }
DOT1_FLOAT(f32, 4)
DOT1_FLOAT(f16, 2)
DOT1_FLOAT(bf16, 2)

/* Q8_0 and Q4_0: block b is group b, into accumulator b % 4. */
AVX2 INLINE __m256 q8_0_block(const unsigned char *p, const float *x, __m256 a)
{
    __m256 t = _mm256_mul_ps(s8_to_ps(p + 2), _mm256_loadu_ps(x));
    t = _mm256_fmadd_ps(s8_to_ps(p + 10), _mm256_loadu_ps(x + 8), t);
    t = _mm256_fmadd_ps(s8_to_ps(p + 18), _mm256_loadu_ps(x + 16), t);
    t = _mm256_fmadd_ps(s8_to_ps(p + 26), _mm256_loadu_ps(x + 24), t);
    return _mm256_fmadd_ps(_mm256_set1_ps(f16_at(p)), t, a);
}

AVX2 INLINE __m256 q4_0_block(const unsigned char *p, const float *x, __m256 a)
{
    __m256 t = _mm256_mul_ps(q4_0_eight(p, 0), _mm256_loadu_ps(x));
    t = _mm256_fmadd_ps(q4_0_eight(p, 1), _mm256_loadu_ps(x + 8), t);
    t = _mm256_fmadd_ps(q4_0_eight(p, 2), _mm256_loadu_ps(x + 16), t);
    t = _mm256_fmadd_ps(q4_0_eight(p, 3), _mm256_loadu_ps(x + 24), t);
    return _mm256_fmadd_ps(_mm256_set1_ps(f16_at(p)), t, a);
}

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
DOT1_SMALL(q8_0, Q8_0_BYTES)
DOT1_SMALL(q4_0, Q4_0_BYTES)

/* Q4_K and Q5_K: sub-block j's eight values 8t.. are group 4j + t, into
 * accumulator t, in increasing j. */
AVX2 INLINE void k_direct(const unsigned char *u, const float d1[8], const float m1[8],
                          const float *x, struct acc4 *s)
{
    __m256 a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];
    for (int j = 0; j < 8; j++, u += 32, x += 32) {
        __m256 d = _mm256_set1_ps(d1[j]), m = _mm256_set1_ps(m1[j]);
        a0 = _mm256_fmadd_ps(_mm256_fmsub_ps(d, u8_to_ps(u), m), _mm256_loadu_ps(x), a0);
        a1 = _mm256_fmadd_ps(_mm256_fmsub_ps(d, u8_to_ps(u + 8), m), _mm256_loadu_ps(x + 8), a1);
        a2 = _mm256_fmadd_ps(_mm256_fmsub_ps(d, u8_to_ps(u + 16), m), _mm256_loadu_ps(x + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_fmsub_ps(d, u8_to_ps(u + 24), m), _mm256_loadu_ps(x + 24), a3);
    }
    s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;
}

AVX2 float quant_avx2_dot1_q4_k(const unsigned char *p, const float *x, int64_t n)
{
    struct acc4 s;
    acc_zero(&s);
    unsigned char u[QK_SUPER] __attribute__((aligned(32)));
    for (int64_t b = 0; b < n / QK_SUPER; b++, p += Q4_K_BYTES, x += QK_SUPER) {
        float d1[8], m1[8];
        k_scales(p, d1, m1);
        nibbles(p + Q4_K_QS, u);
        k_direct(u, d1, m1, x, &s);
    }
    return acc_sum(&s);
}

AVX2 float quant_avx2_dot1_q5_k(const unsigned char *p, const float *x, int64_t n)
{
    struct acc4 s;
    acc_zero(&s);
    unsigned char u[QK_SUPER] __attribute__((aligned(32)));
    for (int64_t b = 0; b < n / QK_SUPER; b++, p += Q5_K_BYTES, x += QK_SUPER) {
        float d1[8], m1[8];
        k_scales(p, d1, m1);
        q5_k_values(p, u);
        k_direct(u, d1, m1, x, &s);
    }
    return acc_sum(&s);
}

/* Q6_K: group g of 16 (two rows of eight) into accumulator g % 4. */
AVX2 float quant_avx2_dot1_q6_k(const unsigned char *p, const float *x, int64_t n)
{
    struct acc4 s;
    acc_zero(&s);
    signed char u[QK_SUPER] __attribute__((aligned(32)));
    float sc[16];
    for (int64_t b = 0; b < n / QK_SUPER; b++, p += Q6_K_BYTES, x += QK_SUPER) {
        q6_k_scales(p, sc);
        q6_k_values(p, u);
        __m256 a0 = s.a[0], a1 = s.a[1], a2 = s.a[2], a3 = s.a[3];
        for (int g = 0; g < 16; g += 4) {
            const signed char *q = u + 16 * g;
            const float *xg = x + 16 * g;
#define Q6_GROUP(a, k)                                                                             \
    a = _mm256_fmadd_ps(                                                                           \
        _mm256_broadcast_ss(sc + g + (k)),                                                         \
        _mm256_fmadd_ps(s8_to_ps(q + 16 * (k) + 8), _mm256_loadu_ps(xg + 16 * (k) + 8),            \
                        _mm256_mul_ps(s8_to_ps(q + 16 * (k)), _mm256_loadu_ps(xg + 16 * (k)))),    \
        a)
            Q6_GROUP(a0, 0);
            Q6_GROUP(a1, 1);
            Q6_GROUP(a2, 2);
            Q6_GROUP(a3, 3);
#undef Q6_GROUP
        }
        s.a[0] = a0, s.a[1] = a1, s.a[2] = a2, s.a[3] = a3;
    }
    return acc_sum(&s);
}

/* ---- AVX-512: Q4_K's one-vector product, sixteen lanes ---- */

#define AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))

/* A sub-block's sixteen possible weights d1 * q - m1 (q = 0..15), each the
 * fmsub that AVX2's k_direct applies to a stored q: a weight is then one
 * permute of this table by the stored nibble (vpermps reads an index's low
 * four bits only, so a byte's high nibble needs no mask), in place of
 * widening, converting and fmsub. */
AVX512 INLINE __m512 k_table(float d1, float m1)
{
    const __m512 q = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm512_fmsub_ps(_mm512_set1_ps(d1), q, _mm512_set1_ps(m1));
}

/* The accumulators of quant.c's specification as two 16-lane registers:
 * lo = (acc0, acc1), hi = (acc2, acc3); the sum is acc_sum's, in its order. */
AVX512 INLINE __m256 upper8(__m512 v)
{
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
}

AVX512 INLINE float acc_sum16(__m512 lo, __m512 hi)
{
    struct acc4 s = { { _mm512_castps512_ps256(lo), upper8(lo), _mm512_castps512_ps256(hi),
                        upper8(hi) } };
    return acc_sum(&s);
}

/* One Q4_K block of a row into its accumulators. Chunk c: sub-block 2c
 * from the low nibbles of its 32 bytes, 2c + 1 from the high ones; values
 * 0-15 of a sub-block to lo, 16-31 to hi. */
AVX512 INLINE void q4_k_block16(const unsigned char *p, const float *x, __m512 *lo, __m512 *hi)
{
    float d1[8], m1[8];
    k_scales(p, d1, m1);
    const unsigned char *q = p + Q4_K_QS;
    __m512 a = *lo, b = *hi;
    for (int c = 0; c < 4; c++, q += 32, x += 64) {
        __m512i b0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const void *)q));
        __m512i b1 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const void *)(q + 16)));
        __m512 t0 = k_table(d1[2 * c], m1[2 * c]), t1 = k_table(d1[2 * c + 1], m1[2 * c + 1]);
        a = _mm512_fmadd_ps(_mm512_permutexvar_ps(b0, t0), _mm512_loadu_ps(x), a);
        b = _mm512_fmadd_ps(_mm512_permutexvar_ps(b1, t0), _mm512_loadu_ps(x + 16), b);
        a = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(b0, 4), t1),
                            _mm512_loadu_ps(x + 32), a);
        b = _mm512_fmadd_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(b1, 4), t1),
                            _mm512_loadu_ps(x + 48), b);
    }
    *lo = a, *hi = b;
}

AVX512 float quant_avx512_dot1_q4_k(const unsigned char *p, const float *x, int64_t n)
{
    __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
    for (int64_t b = 0; b < n / QK_SUPER; b++, p += Q4_K_BYTES, x += QK_SUPER)
        q4_k_block16(p, x, &lo, &hi);
    return acc_sum16(lo, hi);
}

/* Sixteen lanes as two accumulators of the specification, and back. */
AVX512 INLINE __m512 join8(__m256 a, __m256 b)
{
    return _mm512_castpd_ps(
        _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(a)), _mm256_castps_pd(b), 1));
}

/* The direct form of a span (len a multiple of 32) for two vectors, as
 * acc_direct2: value i to lane i % 16 of lo (i % 32 < 16) or hi, which are
 * accumulators (0, 1) and (2, 3), so each lane's operations are unchanged. */
AVX512 INLINE void acc_direct2_16(struct acc4 *s, struct acc4 *z, const float *w, const float *x,
                                  const float *y, int len)
{
    __m512 a = join8(s->a[0], s->a[1]), b = join8(s->a[2], s->a[3]);
    __m512 c = join8(z->a[0], z->a[1]), d = join8(z->a[2], z->a[3]);
    for (int i = 0; i < len; i += 32) {
        __m512 v0 = _mm512_loadu_ps(w + i), v1 = _mm512_loadu_ps(w + i + 16);
        a = _mm512_fmadd_ps(v0, _mm512_loadu_ps(x + i), a);
        c = _mm512_fmadd_ps(v0, _mm512_loadu_ps(y + i), c);
        b = _mm512_fmadd_ps(v1, _mm512_loadu_ps(x + i + 16), b);
        d = _mm512_fmadd_ps(v1, _mm512_loadu_ps(y + i + 16), d);
    }
    s->a[0] = _mm512_castps512_ps256(a), s->a[1] = upper8(a);
    s->a[2] = _mm512_castps512_ps256(b), s->a[3] = upper8(b);
    z->a[0] = _mm512_castps512_ps256(c), z->a[1] = upper8(c);
    z->a[2] = _mm512_castps512_ps256(d), z->a[3] = upper8(d);
}

/* quant_avx2_dot_n, with the direct form's pairs of vectors on 16 lanes. */
AVX512 void quant_avx512_dot_n(const struct quant_kernels *k, const unsigned char *row, int64_t n,
                               const float *x, int64_t x_stride, int nx, float *out)
{
    if (k->group || nx == 1) {
        quant_avx2_dot_n(k, row, n, x, x_stride, nx, out);
        return;
    }
    float vals[SPAN] __attribute__((aligned(64))), scales[SPAN / 16];
    struct acc4 acc[QUANT_DOT_N_TILE];
    for (int j0 = 0; j0 < nx; j0 += QUANT_DOT_N_TILE) {
        int m = nx - j0 < QUANT_DOT_N_TILE ? nx - j0 : QUANT_DOT_N_TILE;
        for (int j = 0; j < m; j++)
            acc_zero(&acc[j]);
        for (int64_t pos = 0; pos < n; pos += SPAN) {
            int len = n - pos < SPAN ? (int)(n - pos) : SPAN, j = 0;
            const float *xs = x + (int64_t)j0 * x_stride + pos;
            k->decode(row + pos / k->block * k->bytes, len, vals, scales);
            if (len % 32 == 0)
                for (; j + 2 <= m; j += 2)
                    acc_direct2_16(&acc[j], &acc[j + 1], vals, xs + j * x_stride,
                                   xs + (j + 1) * x_stride, len);
            span_vectors(k, vals, scales, len, xs + j * x_stride, x_stride, m - j, acc + j);
        }
        for (int j = 0; j < m; j++)
            out[j0 + j] = acc_sum(&acc[j]);
    }
}

#else

/* Elsewhere the file is empty, which ISO C does not allow a file to be. */
typedef int quant_avx2_absent;

#endif
