/* quant_avx512.c - the AVX-512 additions to the AVX2 build of the weight
 * kernels (quant_avx2.c): Q4_K's decoder and one-vector product on sixteen lanes, the
 * direct form's pairs of vectors on sixteen lanes in the product against
 * several vectors, and prefill's rows against vectors as a matrix product;
 * the same operations in each lane as the AVX2 build, so the same bits. */
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
AVX512 INLINE void q4_k_block16(const unsigned char *p, const float *d1, const float *m1,
                                const float *x, __m512 *lo, __m512 *hi)
{
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

/* Q4_K's decoder: the same lookups, stored (the values prefill's matrix
 * product meets, a quarter of the AVX2 decoder's operations). */
AVX512 void quant_avx512_dec_q4_k(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)scales;
    for (int b = 0; b < len / QK_SUPER; b++, p += Q4_K_BYTES, vals += QK_SUPER) {
        float sc[16];
        k_scales(p, sc);
        const float *d1 = sc, *m1 = sc + 8;
        const unsigned char *q = p + Q4_K_QS;
        for (int c = 0; c < 4; c++, q += 32) {
            __m512i b0 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const void *)q));
            __m512i b1 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const void *)(q + 16)));
            __m512 t0 = k_table(d1[2 * c], m1[2 * c]), t1 = k_table(d1[2 * c + 1], m1[2 * c + 1]);
            float *v = vals + 64 * c;
            _mm512_storeu_ps(v, _mm512_permutexvar_ps(b0, t0));
            _mm512_storeu_ps(v + 16, _mm512_permutexvar_ps(b1, t0));
            _mm512_storeu_ps(v + 32, _mm512_permutexvar_ps(_mm512_srli_epi32(b0, 4), t1));
            _mm512_storeu_ps(v + 48, _mm512_permutexvar_ps(_mm512_srli_epi32(b1, 4), t1));
        }
    }
}

AVX512 float quant_avx512_dot1_q4_k(const unsigned char *p, const float *x, int64_t n)
{
    __m512 lo = _mm512_setzero_ps(), hi = _mm512_setzero_ps();
    float sc[2][16]; /* a block's d1 and m1, made a block ahead (DOT1_AHEAD says why) */
    int64_t nb = n / QK_SUPER;
    if (nb > 0)
        k_scales(p, sc[0]);
    for (int64_t b = 0; b < nb; b++, p += Q4_K_BYTES, x += QK_SUPER) {
        int c = (int)(b & 1);
        if (b + 1 < nb)
            k_scales(p + Q4_K_BYTES, sc[c ^ 1]);
        q4_k_block16(p, sc[c], sc[c] + 8, x, &lo, &hi);
    }
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

/* ---- AVX-512: rows against vectors (prefill) ---- */

/* Two rows in one register: lanes 0-7 are the specification's eight lanes
 * of the first row, lanes 8-15 the second's, so that every lane does what
 * it does on eight lanes. Each chunk of eight values (an accumulator's
 * share of 32) is then one register of weights for the two rows and one
 * vector's eight values copied to both halves: a load of the weights
 * serves every vector, a load of a vector two rows, and the accumulators
 * of two pairs of rows against twelve vectors (six in the scaled form,
 * which holds its group sums too) stay in registers along a k-block.
 *
 * The loops are a matrix product's: for each k-block of KBLOCK values the
 * vectors' values are copied once, XP_STRIDE floats apart (a cache line
 * more than the k-block: the vectors themselves lie a power of two floats
 * apart, which sends every one to the same sets of the first-level cache),
 * and every tile of rows of the call decodes its k-block into a panel and
 * meets the copied vectors there. */
#define PAIRS     (QUANT_TILE_ROWS / 2)
#define DIRECT_V  12               /* vectors a call of the direct form's kernel */
#define SCALED_V  6                /* of the scaled form's */
#define TILE_N    QUANT_DOT_N_TILE /* vectors copied at a time */
#define KBLOCK    2048             /* values a k-block: the copied vectors take 264 KB */
#define XP_STRIDE (KBLOCK + 16)    /* floats from one copied vector to the next */
#define ROW_TILES 16               /* tiles of rows whose sums a pass over the k-blocks keeps */

/* A call's working memory (570 KB, on its thread's stack): a tile's
 * k-block decoded, two rows a register (chunk c of pair p at w[p][16 c], the scale of group g at
 * s[p][16 g], eight copies a row), the copied vectors (value i of vector
 * j at xp[j XP_STRIDE + i]), and the sums of ROW_TILES tiles against TILE_N
 * vectors (acc[t][(p * 4 + a) * TILE_N + j]: pair p, accumulator a). */
struct rows_work {
    __m512 acc[ROW_TILES][PAIRS * 4 * TILE_N];
    float w[PAIRS][2 * KBLOCK] __attribute__((aligned(64)));
    float s[PAIRS][KBLOCK] __attribute__((aligned(64)));
    float xp[XP_STRIDE * TILE_N] __attribute__((aligned(64)));
    float vals[QUANT_TILE_ROWS][SPAN] __attribute__((aligned(64)));
    float scales[QUANT_TILE_ROWS][SPAN / 16];
};

/* The eight floats at p in both halves of a register. */
AVX512 INLINE __m512 both_halves(const float *p)
{
    return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_castps_pd(_mm256_loadu_ps(p))));
}

/* A span of the tile's rows (wk->vals, wk->scales as the decoder gave
 * them) into the panel from value pos of the k-block on. */
AVX512 INLINE void panel_fill(struct rows_work *wk, int pos, int len, int group)
{
    for (int p = 0; p < PAIRS; p++) {
        float *w = wk->w[p] + 2 * pos, *s = wk->s[p] + (group ? 16 * (pos / group) : 0);
        for (int c = 0; c < len / 8; c++)
            _mm512_store_ps(w + 16 * c, join8(_mm256_load_ps(wk->vals[2 * p] + 8 * c),
                                              _mm256_load_ps(wk->vals[2 * p + 1] + 8 * c)));
        for (int g = 0; group && g < len / group; g++)
            _mm512_store_ps(s + 16 * g, join8(_mm256_set1_ps(wk->scales[2 * p][g]),
                                              _mm256_set1_ps(wk->scales[2 * p + 1][g])));
    }
}

/* The direct form over the panel's k-block (len values): chunk c into
 * accumulator c % 4, one accumulator at a time (each receives its own
 * chunks in order, as on eight lanes). Vector j's chunk c at x + j xs + c sc. */
AVX512 INLINE void direct_k(const struct rows_work *wk, const float *x, int xs, int sc, int len,
                            int V, __m512 *acc)
{
    for (int a = 0; a < 4; a++) {
        __m512 c0[DIRECT_V], c1[DIRECT_V];
#pragma GCC unroll 12
        for (int j = 0; j < V; j++)
            c0[j] = acc[a * TILE_N + j], c1[j] = acc[(4 + a) * TILE_N + j];
        for (int c = a; c < len / 8; c += 4) {
            __m512 w0 = _mm512_load_ps(wk->w[0] + 16 * c), w1 = _mm512_load_ps(wk->w[1] + 16 * c);
#pragma GCC unroll 12
            for (int j = 0; j < V; j++) {
                __m512 xv = both_halves(x + j * xs + c * sc);
                c0[j] = _mm512_fmadd_ps(w0, xv, c0[j]);
                c1[j] = _mm512_fmadd_ps(w1, xv, c1[j]);
            }
        }
#pragma GCC unroll 12
        for (int j = 0; j < V; j++)
            acc[a * TILE_N + j] = c0[j], acc[(4 + a) * TILE_N + j] = c1[j];
    }
}

/* The scaled form over the panel's k-block (groups of G values): for
 * group g, t = q x over its chunks (the first a product), then accumulator
 * g % 4 takes scale * t. */
AVX512 INLINE void scaled_k(const struct rows_work *wk, const float *x, int xs, int sc, int len,
                            int G, int V, __m512 *acc)
{
    int ng = len / G, steps = G / 8;
    for (int a = 0; a < 4 && a < ng; a++) {
        __m512 c0[SCALED_V], c1[SCALED_V];
#pragma GCC unroll 6
        for (int j = 0; j < V; j++)
            c0[j] = acc[a * TILE_N + j], c1[j] = acc[(4 + a) * TILE_N + j];
        for (int g = a; g < ng; g += 4) {
            __m512 t0[SCALED_V], t1[SCALED_V];
            for (int k = 0; k < steps; k++) {
                int c = g * steps + k;
                __m512 w0 = _mm512_load_ps(wk->w[0] + 16 * c);
                __m512 w1 = _mm512_load_ps(wk->w[1] + 16 * c);
#pragma GCC unroll 6
                for (int j = 0; j < V; j++) {
                    __m512 xv = both_halves(x + j * xs + c * sc);
                    t0[j] = k ? _mm512_fmadd_ps(w0, xv, t0[j]) : _mm512_mul_ps(w0, xv);
                    t1[j] = k ? _mm512_fmadd_ps(w1, xv, t1[j]) : _mm512_mul_ps(w1, xv);
                }
            }
            __m512 s0 = _mm512_load_ps(wk->s[0] + 16 * g), s1 = _mm512_load_ps(wk->s[1] + 16 * g);
#pragma GCC unroll 6
            for (int j = 0; j < V; j++) {
                c0[j] = _mm512_fmadd_ps(s0, t0[j], c0[j]);
                c1[j] = _mm512_fmadd_ps(s1, t1[j], c1[j]);
            }
        }
#pragma GCC unroll 6
        for (int j = 0; j < V; j++)
            acc[a * TILE_N + j] = c0[j], acc[(4 + a) * TILE_N + j] = c1[j];
    }
}

/* The kernels with a constant count of vectors, so that their
 * accumulators are registers: the full count, and the last few. */
typedef void (*tile_kernel)(const struct rows_work *, const float *, int, int, int, __m512 *);
#define DIRECT_KERNEL(V)                                                                           \
    AVX512 static void direct_##V(const struct rows_work *wk, const float *x, int xs, int sc,      \
                                  int len, __m512 *acc)                                            \
    {                                                                                              \
        direct_k(wk, x, xs, sc, len, V, acc);                                                      \
    }
DIRECT_KERNEL(12)
DIRECT_KERNEL(8)
DIRECT_KERNEL(4)
DIRECT_KERNEL(1)
#define SCALED_KERNEL(G, V)                                                                        \
    AVX512 static void scaled_##G##_##V(const struct rows_work *wk, const float *x, int xs,        \
                                        int sc, int len, __m512 *acc)                              \
    {                                                                                              \
        scaled_k(wk, x, xs, sc, len, G, V, acc);                                                   \
    }
SCALED_KERNEL(32, 6)
SCALED_KERNEL(32, 2)
SCALED_KERNEL(32, 1)
SCALED_KERNEL(16, 6)
SCALED_KERNEL(16, 2)
SCALED_KERNEL(16, 1)

/* The panel against the m copied vectors, the largest kernels first. */
AVX512 INLINE void panel_vectors(const struct rows_work *wk, int group, int len, int m, __m512 *acc)
{
    static const tile_kernel DIRECT[] = { direct_12, direct_8, direct_4, direct_1 },
                             S32[] = { scaled_32_6, scaled_32_2, scaled_32_1 },
                             S16[] = { scaled_16_6, scaled_16_2, scaled_16_1 };
    static const int DIRECT_N[] = { 12, 8, 4, 1 }, SCALED_N[] = { 6, 2, 1 };
    const tile_kernel *kern = group == 32 ? S32 : group ? S16 : DIRECT;
    const int *count = group ? SCALED_N : DIRECT_N;
    int j = 0;
    for (int i = 0; j < m; i++) /* the last count is 1: every vector is taken */
        for (; m - j >= count[i]; j += count[i])
            kern[i](wk, wk->xp + j * XP_STRIDE, XP_STRIDE, 8, len, acc + j);
}

/* Row 2p + h's sum against vector j, in acc_sum's order. */
AVX512 INLINE float pair_sum(const __m512 *acc, int p, int h, int j)
{
    struct acc4 s;
    for (int a = 0; a < 4; a++) {
        __m512 v = acc[(p * 4 + a) * TILE_N + j];
        s.a[a] = h ? upper8(v) : _mm512_castps512_ps256(v);
    }
    return acc_sum(&s);
}

/* Tiles of QUANT_TILE_ROWS rows from rows on (at most ROW_TILES) against m
 * vectors, out[j * out_stride + i] for row i. */
AVX512 INLINE void tiles_n(struct rows_work *wk, const struct quant_kernels *k,
                           const unsigned char *rows, size_t row_bytes, int tiles, int64_t n,
                           const float *x, int64_t x_stride, int m, float *out, int64_t out_stride)
{
    for (int t = 0; t < tiles; t++)
        memset(wk->acc[t], 0, sizeof wk->acc[t]);
    for (int64_t kb = 0; kb < n; kb += KBLOCK) {
        int klen = n - kb < KBLOCK ? (int)(n - kb) : KBLOCK;
        copy_vectors(wk->xp, XP_STRIDE, x + kb, x_stride, klen, m);
        for (int t = 0; t < tiles; t++) {
            const unsigned char *r0 = rows + (size_t)t * QUANT_TILE_ROWS * row_bytes;
            for (int pos = 0; pos < klen; pos += SPAN) {
                int len = klen - pos < SPAN ? klen - pos : SPAN;
                for (int i = 0; i < QUANT_TILE_ROWS; i++)
                    k->decode(r0 + (size_t)i * row_bytes + (kb + pos) / k->block * k->bytes, len,
                              wk->vals[i], wk->scales[i]);
                panel_fill(wk, pos, len, k->group);
            }
            panel_vectors(wk, k->group, klen, m, wk->acc[t]);
        }
    }
    for (int t = 0; t < tiles; t++)
        for (int i = 0; i < QUANT_TILE_ROWS; i++)
            for (int j = 0; j < m; j++)
                out[(int64_t)j * out_stride + t * QUANT_TILE_ROWS + i] =
                    pair_sum(wk->acc[t], i / 2, i % 2, j);
}

AVX512 void quant_avx512_dot_rows_n(const struct quant_kernels *k, const unsigned char *rows,
                                    size_t row_bytes, int nrows, int64_t n, const float *x,
                                    int64_t x_stride, int nx, float *out, int64_t out_stride)
{
    int full = n % 32 == 0 ? nrows / QUANT_TILE_ROWS * QUANT_TILE_ROWS : 0;
    struct rows_work wk;
    for (int j0 = 0; j0 < nx; j0 += TILE_N) {
        int m = nx - j0 < TILE_N ? nx - j0 : TILE_N;
        for (int i0 = 0; i0 < full; i0 += ROW_TILES * QUANT_TILE_ROWS) {
            int tiles = (full - i0) / QUANT_TILE_ROWS;
            tiles = tiles < ROW_TILES ? tiles : ROW_TILES;
            tiles_n(&wk, k, rows + (size_t)i0 * row_bytes, row_bytes, tiles, n,
                    x + (int64_t)j0 * x_stride, x_stride, m, out + (int64_t)j0 * out_stride + i0,
                    out_stride);
        }
    }
    if (full < nrows)
        quant_avx2_dot_rows_n(k, rows + (size_t)full * row_bytes, row_bytes, nrows - full, n, x,
                              x_stride, nx, out + full, out_stride);
}
#else
/* Elsewhere the file is empty, which ISO C does not allow a file to be. */
typedef int quant_avx512_absent;
#endif
