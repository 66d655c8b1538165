/* quant_avx2.c - the AVX2 + FMA build of the weight kernels, for x86-64
 * CPUs that have them (quant.c asks the CPU at run time). Every function
 * here does the float operations of quant.c's specification in its order,
 * eight lanes at a time, so its results are the portable build's bits; the
 * integer unpacking around them is free to differ, and does: the K types'
 * small integers are first unpacked to one byte each with 32-byte integer
 * operations, then widened eight at a time. What quant_avx512.c shares
 * with it is in quant_avx2_int.h. */
#include "model/quant_avx2_int.h"

#if QUANT_HAVE_AVX2

/* ---- the K types' integers, one byte per value, in value order ---- */

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

AVX2 INLINE void q4_k_values(const unsigned char *p, unsigned char *u)
{
    nibbles(p + Q4_K_QS, u);
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
 * exact, so this is quant.c's d1 * q - m1), the d1 and m1 as k_scales
 * leaves them in sc. */
AVX2 INLINE void k_weights(const unsigned char *u, const float sc[16], float *w)
{
    for (int j = 0; j < 8; j++) {
        __m256 d = _mm256_set1_ps(sc[j]), m = _mm256_set1_ps(sc[8 + j]);
        for (int t = 0; t < 4; t++)
            _mm256_storeu_ps(w + 32 * j + 8 * t,
                             _mm256_fmsub_ps(d, u8_to_ps(u + 32 * j + 8 * t), m));
    }
}

#define DEC_K(T)                                                                                   \
    AVX2 void quant_avx2_dec_##T(const unsigned char *p, int len, float *vals, float *scales)      \
    {                                                                                              \
        (void)len, (void)scales;                                                                   \
        unsigned char u[QK_SUPER];                                                                 \
        float sc[16];                                                                              \
        k_scales(p, sc);                                                                           \
        T##_values(p, u);                                                                          \
        k_weights(u, sc, vals);                                                                    \
    }
DEC_K(q4_k)
DEC_K(q5_k)

DEC_INTS(q6_k)

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

/* The vectors a tile of rows meets at a time in quant_avx2_dot_rows_n
 * (their k-block, 24 KB, stays in L1 while the tile's pairs of rows meet
 * it); a multiple of the micro-kernels' three and four. */
#define TILE_VECS 12

/* The matrix product's k-blocks (values: 2,048 ran slower, the panels and
 * vectors then in L2), the vectors' copy (floats apart: a cache line more
 * than a k-block, so that the vectors a kernel reads side by side fall in
 * different sets of the first-level cache, where 2,048 or 8,192 floats
 * apart they share one), and the rows a call's sums hold. */
#define KBLOCK     512
#define XP_STRIDE  (KBLOCK + 16)
#define BLOCK_ROWS 64

/* A vector loaded into a register once for the two rows: gcc would fold
 * the load into each multiply-add that takes it, loading it twice, which
 * is the very cost the micro-kernels are there to save. */
#define IN_REGISTER(v) __asm__("" : "+x"(v))

/* The micro-kernels below hold the sums of two rows against three or four
 * vectors in registers, so that each load of eight weights serves three
 * or four vectors and each load of a vector two rows: about 0.8 loads a
 * multiply-add where the pairs' kernel (span_vectors) takes 1.5, which
 * bounds it on the CPUs measured. The specification's four accumulators
 * are taken one at a time (a holds accumulator a of every pair, from and
 * back to memory): accumulator a receives its own values in their order
 * either way, so the sums are the pairs' kernel's bits. */

/* The direct form, two rows (w0, w1) against four vectors (x, x_stride
 * apart) over a span whose length is a multiple of 32. */
AVX2 INLINE void direct_2x4(const float *w0, const float *w1, const float *x, int64_t xs, int len,
                            struct acc4 *A0, struct acc4 *A1)
{
    for (int a = 0; a < 4; a++) {
        __m256 c00 = A0[0].a[a], c01 = A0[1].a[a], c02 = A0[2].a[a], c03 = A0[3].a[a];
        __m256 c10 = A1[0].a[a], c11 = A1[1].a[a], c12 = A1[2].a[a], c13 = A1[3].a[a];
        for (int i = 8 * a; i < len; i += 32) {
            __m256 v0 = _mm256_loadu_ps(w0 + i), v1 = _mm256_loadu_ps(w1 + i);
            __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + xs + i);
            IN_REGISTER(x0);
            IN_REGISTER(x1);
            c00 = _mm256_fmadd_ps(v0, x0, c00), c10 = _mm256_fmadd_ps(v1, x0, c10);
            c01 = _mm256_fmadd_ps(v0, x1, c01), c11 = _mm256_fmadd_ps(v1, x1, c11);
            x0 = _mm256_loadu_ps(x + 2 * xs + i), x1 = _mm256_loadu_ps(x + 3 * xs + i);
            IN_REGISTER(x0);
            IN_REGISTER(x1);
            c02 = _mm256_fmadd_ps(v0, x0, c02), c12 = _mm256_fmadd_ps(v1, x0, c12);
            c03 = _mm256_fmadd_ps(v0, x1, c03), c13 = _mm256_fmadd_ps(v1, x1, c13);
        }
        A0[0].a[a] = c00, A0[1].a[a] = c01, A0[2].a[a] = c02, A0[3].a[a] = c03;
        A1[0].a[a] = c10, A1[1].a[a] = c11, A1[2].a[a] = c12, A1[3].a[a] = c13;
    }
}

/* One step of the scaled form's group sums: values k..k+8 of the group of
 * two rows (q0, q1) against three vectors; the first step multiplies. */
#define SCALED_STEP(op, k)                                                                         \
    do {                                                                                           \
        __m256 v0 = _mm256_loadu_ps(p0 + (k)), v1 = _mm256_loadu_ps(p1 + (k));                     \
        __m256 xv = _mm256_loadu_ps(xg + (k));                                                     \
        IN_REGISTER(xv);                                                                           \
        t00 = op(v0, xv, t00), t10 = op(v1, xv, t10);                                              \
        xv = _mm256_loadu_ps(xg + xs + (k));                                                       \
        IN_REGISTER(xv);                                                                           \
        t01 = op(v0, xv, t01), t11 = op(v1, xv, t11);                                              \
        xv = _mm256_loadu_ps(xg + 2 * xs + (k));                                                   \
        IN_REGISTER(xv);                                                                           \
        t02 = op(v0, xv, t02), t12 = op(v1, xv, t12);                                              \
    } while (0)
#define SCALED_MUL(v, x, t) _mm256_mul_ps(v, x)

/* The scaled form (groups of G values), two rows against three vectors:
 * for each group t = q x over its values, then the accumulator of g % 4
 * takes scale * t. */
AVX2 INLINE void scaled_2x3(const float *q0, const float *q1, const float *s0, const float *s1,
                            const float *x, int64_t xs, int len, int G, struct acc4 *A0,
                            struct acc4 *A1)
{
    int ng = len / G;
    for (int a = 0; a < 4 && a < ng; a++) {
        __m256 c00 = A0[0].a[a], c01 = A0[1].a[a], c02 = A0[2].a[a];
        __m256 c10 = A1[0].a[a], c11 = A1[1].a[a], c12 = A1[2].a[a];
        for (int g = a; g < ng; g += 4) {
            const float *p0 = q0 + g * G, *p1 = q1 + g * G, *xg = x + g * G;
            __m256 t00 = _mm256_setzero_ps(), t01 = t00, t02 = t00, t10 = t00, t11 = t00, t12 = t00;
            SCALED_STEP(SCALED_MUL, 0);
            for (int k = 8; k < G; k += 8)
                SCALED_STEP(_mm256_fmadd_ps, k);
            __m256 sc0 = _mm256_set1_ps(s0[g]), sc1 = _mm256_set1_ps(s1[g]);
            c00 = _mm256_fmadd_ps(sc0, t00, c00), c01 = _mm256_fmadd_ps(sc0, t01, c01);
            c02 = _mm256_fmadd_ps(sc0, t02, c02), c10 = _mm256_fmadd_ps(sc1, t10, c10);
            c11 = _mm256_fmadd_ps(sc1, t11, c11), c12 = _mm256_fmadd_ps(sc1, t12, c12);
        }
        A0[0].a[a] = c00, A0[1].a[a] = c01, A0[2].a[a] = c02;
        A1[0].a[a] = c10, A1[1].a[a] = c11, A1[2].a[a] = c12;
    }
}

/* Two rows' span against vectors: the micro-kernel while three or four
 * are left (a span the kernel cannot take, a short last one of the
 * direct form, goes whole to the pairs' kernel), then the pairs' kernel. */
AVX2 INLINE void span_two_rows(const struct quant_kernels *k, float (*vals)[KBLOCK],
                               float (*scales)[KBLOCK / 16], int len, const float *x,
                               int64_t x_stride, int m, struct acc4 *A0, struct acc4 *A1)
{
    int j = 0;
    if (k->group)
        for (; j + 3 <= m; j += 3)
            scaled_2x3(vals[0], vals[1], scales[0], scales[1], x + j * x_stride, x_stride, len,
                       k->group, A0 + j, A1 + j);
    else if (len % 32 == 0)
        for (; j + 4 <= m; j += 4)
            direct_2x4(vals[0], vals[1], x + j * x_stride, x_stride, len, A0 + j, A1 + j);
    span_vectors(k, vals[0], scales[0], len, x + j * x_stride, x_stride, m - j, A0 + j);
    span_vectors(k, vals[1], scales[1], len, x + j * x_stride, x_stride, m - j, A1 + j);
}

/* One span of the tile's rows (decoded into vals, scales) against every
 * vector, TILE_VECS vectors at a time, two rows at a time. */
AVX2 INLINE void span_rows(const struct quant_kernels *k, float (*vals)[KBLOCK],
                           float (*scales)[KBLOCK / 16], int nr, int len, const float *x,
                           int64_t x_stride, int nx, struct acc4 (*acc)[QUANT_DOT_N_TILE])
{
    for (int j0 = 0; j0 < nx; j0 += TILE_VECS) {
        int m = nx - j0 < TILE_VECS ? nx - j0 : TILE_VECS;
        int i = 0;
        for (; i + 2 <= nr; i += 2)
            span_two_rows(k, vals + i, scales + i, len, x + j0 * x_stride, x_stride, m, acc[i] + j0,
                          acc[i + 1] + j0);
        for (; i < nr; i++)
            span_vectors(k, vals[i], scales[i], len, x + j0 * x_stride, x_stride, m, acc[i] + j0);
    }
}

/* A call's working memory (330 KB, on its thread's stack): the sums of
 * BLOCK_ROWS rows against QUANT_DOT_N_TILE vectors, the vectors' k-block
 * (vector j at xp[j * XP_STRIDE]), and a tile's rows decoded over it. */
struct rows_work {
    struct acc4 acc[BLOCK_ROWS][QUANT_DOT_N_TILE];
    float xp[QUANT_DOT_N_TILE * XP_STRIDE] __attribute__((aligned(32)));
    float vals[QUANT_TILE_ROWS][KBLOCK] __attribute__((aligned(32)));
    float scales[QUANT_TILE_ROWS][KBLOCK / 16];
};

/* Rows [0, nr) (nr at most BLOCK_ROWS) against m vectors, as a matrix
 * product: for each k-block the vectors copied once, then every tile of
 * rows decoded over it and met there, each micro-kernel's sums in
 * registers along the whole k-block. */
AVX2 INLINE void block_rows(struct rows_work *wk, const struct quant_kernels *k,
                            const unsigned char *rows, size_t row_bytes, int nr, int64_t n,
                            const float *x, int64_t x_stride, int m, float *out, int64_t out_stride)
{
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < m; j++)
            acc_zero(&wk->acc[i][j]);
    for (int64_t kb = 0; kb < n; kb += KBLOCK) {
        int klen = n - kb < KBLOCK ? (int)(n - kb) : KBLOCK;
        copy_vectors(wk->xp, XP_STRIDE, x + kb, x_stride, klen, m);
        for (int i0 = 0; i0 < nr; i0 += QUANT_TILE_ROWS) {
            int tr = nr - i0 < QUANT_TILE_ROWS ? nr - i0 : QUANT_TILE_ROWS;
            const unsigned char *r0 = rows + (size_t)i0 * row_bytes;
            for (int pos = 0; pos < klen; pos += SPAN) {
                int len = klen - pos < SPAN ? klen - pos : SPAN;
                for (int i = 0; i < tr; i++)
                    k->decode(r0 + (size_t)i * row_bytes + (kb + pos) / k->block * k->bytes, len,
                              wk->vals[i] + pos, wk->scales[i] + pos / (k->group ? k->group : 16));
            }
            span_rows(k, wk->vals, wk->scales, tr, klen, wk->xp, XP_STRIDE, m, wk->acc + i0);
        }
    }
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < m; j++)
            out[(int64_t)j * out_stride + i] = acc_sum(&wk->acc[i][j]);
}

AVX2 void quant_avx2_dot_rows_n(const struct quant_kernels *k, const unsigned char *rows,
                                size_t row_bytes, int nrows, int64_t n, const float *x,
                                int64_t x_stride, int nx, float *out, int64_t out_stride)
{
    struct rows_work wk;
    for (int j0 = 0; j0 < nx; j0 += QUANT_DOT_N_TILE) {
        int m = nx - j0 < QUANT_DOT_N_TILE ? nx - j0 : QUANT_DOT_N_TILE;
        for (int i0 = 0; i0 < nrows; i0 += BLOCK_ROWS)
            block_rows(&wk, k, rows + (size_t)i0 * row_bytes, row_bytes,
                       nrows - i0 < BLOCK_ROWS ? nrows - i0 : BLOCK_ROWS, n,
                       x + (int64_t)j0 * x_stride, x_stride, m, out + (int64_t)j0 * out_stride + i0,
                       out_stride);
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

DOT1_SMALL(q8_0, Q8_0_BYTES)
DOT1_SMALL(q4_0, Q4_0_BYTES)

/* Q4_K and Q5_K: sub-block j's eight values 8t.. are group 4j + t, into
 * accumulator t, in increasing j (sc as k_scales leaves it). */
AVX2 INLINE void k_direct(const unsigned char *u, const float *sc, const float *x, struct acc4 *s)
{
    __m256 a0 = s->a[0], a1 = s->a[1], a2 = s->a[2], a3 = s->a[3];
    for (int j = 0; j < 8; j++, u += 32, x += 32) {
        __m256 d = _mm256_set1_ps(sc[j]), m = _mm256_set1_ps(sc[8 + j]);
        a0 = _mm256_fmadd_ps(_mm256_fmsub_ps(d, u8_to_ps(u), m), _mm256_loadu_ps(x), a0);
        a1 = _mm256_fmadd_ps(_mm256_fmsub_ps(d, u8_to_ps(u + 8), m), _mm256_loadu_ps(x + 8), a1);
        a2 = _mm256_fmadd_ps(_mm256_fmsub_ps(d, u8_to_ps(u + 16), m), _mm256_loadu_ps(x + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_fmsub_ps(d, u8_to_ps(u + 24), m), _mm256_loadu_ps(x + 24), a3);
    }
    s->a[0] = a0, s->a[1] = a1, s->a[2] = a2, s->a[3] = a3;
}

DOT1_AHEAD(q4_k, Q4_K_BYTES, unsigned char, k_scales, k_direct)
DOT1_AHEAD(q5_k, Q5_K_BYTES, unsigned char, k_scales, k_direct)

DOT1_SCALED(q6_k, 16, Q6_K_BYTES)

#else

/* Elsewhere the file is empty, which ISO C does not allow a file to be. */
typedef int quant_avx2_absent;

#endif
