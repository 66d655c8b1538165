/* head_vec.c - the LM head's dense loops, built for the vector units of the
 * machine (base/vec_clones.h): the bf16 product and the generation of a
 * row of synthetic weights. */
#include "model/head_vec.h"

#include <string.h>

#include "base/vec_clones.h"
#include "core/philox.h"
#include "model/lmhead_gen.h"

#define GEMV_LANES 16
#define HALF       (GEMV_LANES / 2)

/* The end of one row's product: the tail past the last block of sixteen,
 * then the fixed tree over the sixteen sums. */
static inline float gemv_finish(float *a, const uint16_t *row, int full, int d, const float *x)
{
    for (int i = full; i < d; i++)
        a[i - full] += lm_float(row[i]) * x[i];
    for (int k = 0; k < GEMV_LANES / 2; k++)
        a[k] += a[k + GEMV_LANES / 2];
    for (int k = 0; k < GEMV_LANES / 4; k++)
        a[k] += a[k + GEMV_LANES / 4];
    return (a[0] + a[2]) + (a[1] + a[3]);
}

/* One row against one vector: the specification. Sum k gathers the
 * products of the entries i with i % 16 == k, in the order of i. */
static float gemv_row(const uint16_t *row, int d, const float *x, int full)
{
    float a[GEMV_LANES] = { 0 };
    for (int i = 0; i < full; i += GEMV_LANES)
        for (int k = 0; k < GEMV_LANES; k++)
            a[k] += lm_float(row[i + k]) * x[i + k];
    return gemv_finish(a, row, full, d, x);
}

void head_split_x(const float *x, int d, float *xs)
{
    int full = d / GEMV_LANES * GEMV_LANES;
    for (int i = 0; i < full; i += GEMV_LANES)
        for (int j = 0; j < HALF; j++) {
            xs[i + j] = x[i + 2 * j];
            xs[i + HALF + j] = x[i + 2 * j + 1];
        }
    for (int i = full; i < d; i++)
        xs[i] = x[i];
}

#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
typedef float v8f __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));

/* Bytes ahead of the row being read that the product asks the memory for
 * (a software prefetch, into the outer caches: on x86 prefetcht1). On a
 * 2-core EPYC, one row a pass with this reached the two threads' streaming
 * read of the weights (96-104 %, over runs at 31 to 47 GB/s), where four
 * rows a pass with the prefetch into L1 had 62-85 %: one stream a thread,
 * fetched ahead, keeps more of the memory's requests in flight than four
 * streams 8 KB apart, and the pair of add chains of one row (3 cycles a
 * block of sixteen) is still faster than the memory. */
#define GEMV_AHEAD_BYTES 32768

/* One row against C vectors (C <= 4), the sums of each pair as gemv_row
 * makes them. Sixteen bf16 loaded as eight 32-bit words hold the even
 * entry in each word's low half and the odd one in its high half: a shift
 * and a mask make them floats, matched with the split x (even entries,
 * then odd), so sum 2j is lane j of the even vector and sum 2j+1 lane j of
 * the odd one. */
static inline __attribute__((always_inline)) void gemv_tile(const uint16_t *row, size_t d,
                                                            const float *x, const float *xs, int C,
                                                            int full, float *out, size_t ldo)
{
    v8f even[4] = { 0 }, odd[4] = { 0 };
    for (int i = 0; i < full; i += GEMV_LANES) {
        v8u u;
        memcpy(&u, row + i, sizeof u);
        /* An integer address: past the last row it points nowhere, and a
         * prefetch never faults. */
        __builtin_prefetch((const void *)((uintptr_t)(row + i) + GEMV_AHEAD_BYTES), 0, 2);
        v8f we = (v8f)(u << 16), wo = (v8f)(u & 0xffff0000u);
        for (int c = 0; c < C; c++) {
            v8f xe, xo;
            memcpy(&xe, xs + (size_t)c * d + (size_t)i, sizeof xe);
            memcpy(&xo, xs + (size_t)c * d + (size_t)i + HALF, sizeof xo);
            even[c] += we * xe;
            odd[c] += wo * xo;
        }
    }
    for (int c = 0; c < C; c++) {
        float a[GEMV_LANES];
        for (int j = 0; j < HALF; j++) {
            a[2 * j] = even[c][j];
            a[2 * j + 1] = odd[c][j];
        }
        out[(size_t)c * ldo] = gemv_finish(a, row, full, (int)d, x + (size_t)c * d);
    }
}

/* Each row against four vectors at a time (the row, 8 KB at 4,096, stays
 * in the L1 cache for the next four). */
VEC_CLONES static void gemv_split(const uint16_t *w, int rows, int d, const float *x,
                                  const float *xs, int n_vec, float *out, size_t ldo)
{
    size_t D = (size_t)d;
    int full = d / GEMV_LANES * GEMV_LANES;
    for (int r = 0; r < rows; r++) {
        const uint16_t *row = w + (size_t)r * D;
        int c = 0;
        for (; c + 4 <= n_vec; c += 4)
            gemv_tile(row, D, x + (size_t)c * D, xs + (size_t)c * D, 4, full,
                      out + (size_t)c * ldo + (size_t)r, ldo);
        for (; c < n_vec; c++)
            gemv_tile(row, D, x + (size_t)c * D, xs + (size_t)c * D, 1, full,
                      out + (size_t)c * ldo + (size_t)r, ldo);
    }
}
#define HAVE_GEMV_SPLIT 1
#endif

void head_gemv_bf16(const uint16_t *w, int rows, int d, const float *x, const float *xs, int n_vec,
                    float *out, size_t ldo)
{
#ifdef HAVE_GEMV_SPLIT
    if (xs) {
        gemv_split(w, rows, d, x, xs, n_vec, out, ldo);
        return;
    }
#endif
    int full = d / GEMV_LANES * GEMV_LANES;
    for (int c = 0; c < n_vec; c++)
        for (int r = 0; r < rows; r++)
            out[(size_t)c * ldo + (size_t)r] =
                gemv_row(w + (size_t)r * (size_t)d, d, x + (size_t)c * (size_t)d, full);
}

#define LM_BATCH 1024 /* counters per batch: four arrays of them stay in the L1 cache */

VEC_CLONES void head_row(uint64_t seed, uint32_t row, int d, float scale, uint16_t *out)
{
    uint32_t x0[LM_BATCH], x1[LM_BATCH], x2[LM_BATCH], x3[LM_BATCH];
    int n4 = d / 4;
    for (int base = 0; base < n4; base += LM_BATCH) {
        int n = n4 - base < LM_BATCH ? n4 - base : LM_BATCH;
        for (int j = 0; j < n; j++) {
            x0[j] = row;
            x1[j] = (uint32_t)(base + j);
            x2[j] = LM_WEIGHT_TAG;
            x3[j] = 0u;
        }
        uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
        /* The rounds of philox.h, one round at a time over every counter. */
        for (int r = 0; r < PHILOX_ROUNDS; r++) {
            if (r > 0) {
                k0 += PHILOX_W0;
                k1 += PHILOX_W1;
            }
            for (int j = 0; j < n; j++) {
                uint64_t p0 = (uint64_t)PHILOX_M0 * x0[j];
                uint64_t p1 = (uint64_t)PHILOX_M1 * x2[j];
                uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1[j] ^ k0;
                uint32_t y2 = (uint32_t)(p0 >> 32) ^ x3[j] ^ k1;
                x1[j] = (uint32_t)p1;
                x3[j] = (uint32_t)p0;
                x0[j] = y0;
                x2[j] = y2;
            }
        }
        /* Each output word to weights (lm_weight), one word at a time (so the loops
         * vectorize), then interleaved into the row. */
        uint16_t wt[4][LM_BATCH];
        const uint32_t *words[4] = { x0, x1, x2, x3 };
        for (int w = 0; w < 4; w++) {
            const uint32_t *xw = words[w];
            for (int j = 0; j < n; j++)
                wt[w][j] = lm_weight(xw[j], scale);
        }
        uint16_t *o = out + 4 * base;
        for (int j = 0; j < n; j++) {
            o[4 * j] = wt[0][j];
            o[4 * j + 1] = wt[1][j];
            o[4 * j + 2] = wt[2][j];
            o[4 * j + 3] = wt[3][j];
        }
    }
}
