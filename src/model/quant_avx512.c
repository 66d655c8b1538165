/* quant_avx512.c - the AVX-512 additions to the AVX2 build of the weight
 * kernels (quant_avx2.c): Q4_K's one-vector product on sixteen lanes, and
 * the direct form's pairs of vectors on sixteen lanes in the product
 * against several vectors; the same operations in each lane as the AVX2
 * build, so the same bits. */
#include "model/quant_avx2_int.h"

#if QUANT_HAVE_AVX2

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
typedef int quant_avx512_absent;
#endif
