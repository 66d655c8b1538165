/* head_vec.c - the LM head's dense loops, built for each vector path
 * (base/vecpath.h): the bf16 product and the generation of a row of
 * synthetic weights. */
#include "model/head_vec.h"

#include <string.h>

#include "base/vecpath.h"
#include "core/philox.h"
#include "model/lmhead_gen.h"

#define GEMV_LANES 16
#define HALF       (GEMV_LANES / 2)

/* The end of one row's product: the tail past the last block of sixteen
 * (tail[0] is the row's weight `full`), then the fixed tree over the
 * sixteen sums. */
static inline float gemv_finish(float *a, const uint16_t *tail, int full, int d, const float *x)
{
    for (int i = full; i < d; i++)
        a[i - full] += lm_float(tail[i - full]) * x[i];
    for (int k = 0; k < GEMV_LANES / 2; k++)
        a[k] += a[k + GEMV_LANES / 2];
    for (int k = 0; k < GEMV_LANES / 4; k++)
        a[k] += a[k + GEMV_LANES / 4];
    return (a[0] + a[2]) + (a[1] + a[3]);
}

/* Where row r of a tiled head of `rows` rows lies (head_vec.h): its first
 * block of sixteen, the step from one block to the next, and its tail past
 * the last block. */
struct row_place {
    size_t at, step, tail;
};

static struct row_place row_place(int rows, int d, int r)
{
    int g = r / HEAD_TILE_ROWS * HEAD_TILE_ROWS, full = d / GEMV_LANES * GEMV_LANES;
    if (g + HEAD_TILE_ROWS > rows) /* the last, incomplete group: plain rows */
        return (struct row_place){ (size_t)r * (size_t)d, GEMV_LANES,
                                   (size_t)r * (size_t)d + (size_t)full };
    size_t base = (size_t)g * (size_t)d;
    return (struct row_place){ base + (size_t)(r - g) * GEMV_LANES,
                               (size_t)HEAD_TILE_ROWS * GEMV_LANES,
                               base + (size_t)HEAD_TILE_ROWS * (size_t)full +
                                   (size_t)(r - g) * (size_t)(d - full) };
}

/* One row against one vector: the specification. Sum k gathers the
 * products of the entries i with i % 16 == k, in the order of i. The row's
 * blocks are read where pl says, in the tiled head w. */
static float gemv_row(const uint16_t *w, struct row_place pl, int d, const float *x, int full)
{
    float a[GEMV_LANES] = { 0 };
    const uint16_t *blk = w + pl.at;
    for (int i = 0; i < full; i += GEMV_LANES, blk += pl.step)
        for (int k = 0; k < GEMV_LANES; k++)
            a[k] += lm_float(blk[k]) * x[i + k];
    return gemv_finish(a, w + pl.tail, full, d, x);
}

void head_put_row(uint16_t *w, int rows, int d, int r, const uint16_t *row)
{
    struct row_place pl = row_place(rows, d, r);
    int full = d / GEMV_LANES * GEMV_LANES;
    for (int i = 0; i < full; i += GEMV_LANES, pl.at += pl.step)
        memcpy(w + pl.at, row + i, GEMV_LANES * sizeof *row);
    memcpy(w + pl.tail, row + full, (size_t)(d - full) * sizeof *row);
}

void head_get_row(const uint16_t *w, int rows, int d, int r, uint16_t *row)
{
    struct row_place pl = row_place(rows, d, r);
    int full = d / GEMV_LANES * GEMV_LANES;
    for (int i = 0; i < full; i += GEMV_LANES, pl.at += pl.step)
        memcpy(row + i, w + pl.at, GEMV_LANES * sizeof *row);
    memcpy(row + full, w + pl.tail, (size_t)(d - full) * sizeof *row);
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

/* The software prefetch of a group's weights: one line every
 * HEAD_AHEAD_EVERY bytes, HEAD_AHEAD_BYTES ahead, into the outer caches
 * (prefetcht1); the memory's own prefetcher fetches the rest of the page.
 * On a 2-core EPYC (Zen 5) one plain row a pass, with a prefetch every 32
 * bytes, had 81-87 % of the two threads' streaming read: one row's two add
 * chains were barely faster than the memory. Four tiled rows a pass (their
 * chains in one stream) reached 100-105 %; the same four
 * rows untiled, as four streams 8 KB apart, had 56 %, and a prefetch per
 * line cost more instructions than it saved.
 *
 * Sixteen bf16 loaded as eight 32-bit words hold the even entry in each
 * word's low half and the odd one in its high half: a shift and a mask
 * make them floats, matched with the split x (even entries, then odd), so
 * sum 2j is lane j of a row's even vector and sum 2j+1 lane j of its odd
 * one, each adding gemv_row's products in gemv_row's order: the same bits.
 * Eight lanes a vector and one vector x a pass keep the eight sums and
 * what feeds them in sixteen registers, so every path runs this one form
 * (a 16-lane form with two vectors x a pass kept its sums in memory on
 * AVX2: 182 ms for W.h at 128,256 x 4,096 against 31 ms; on AVX-512 it was
 * 3 % faster for one vector and 4 % slower for eight, within the runs'
 * spread). */
static inline __attribute__((always_inline)) void
gemv_group(const uint16_t *g, size_t d, const float *x, const float *xs, int full, float *out)
{
    v8f even[HEAD_TILE_ROWS] = { 0 }, odd[HEAD_TILE_ROWS] = { 0 };
    const int run = HEAD_AHEAD_EVERY / (HEAD_TILE_ROWS * GEMV_LANES * 2); /* blocks a prefetch */
    const uint16_t *p = g;
    for (int i0 = 0; i0 < full; i0 += run * GEMV_LANES) {
        /* An integer address: past the last row it points nowhere, and a
         * prefetch never faults. */
        __builtin_prefetch((const void *)((uintptr_t)p + HEAD_AHEAD_BYTES), 0, 2);
        int end = i0 + run * GEMV_LANES < full ? i0 + run * GEMV_LANES : full;
        for (int i = i0; i < end; i += GEMV_LANES, p += HEAD_TILE_ROWS * GEMV_LANES) {
            v8f he, ho;
            memcpy(&he, xs + (size_t)i, sizeof he);
            memcpy(&ho, xs + (size_t)i + HALF, sizeof ho);
            for (int q = 0; q < HEAD_TILE_ROWS; q++) {
                v8u u;
                memcpy(&u, p + q * GEMV_LANES, sizeof u);
                even[q] += (v8f)(u << 16) * he;
                odd[q] += (v8f)(u & 0xffff0000u) * ho;
            }
        }
    }
    const uint16_t *tails = g + (size_t)HEAD_TILE_ROWS * (size_t)full;
    for (int q = 0; q < HEAD_TILE_ROWS; q++) {
        float a[GEMV_LANES];
        for (int j = 0; j < HALF; j++) {
            a[2 * j] = even[q][j];
            a[2 * j + 1] = odd[q][j];
        }
        out[q] = gemv_finish(a, tails + (size_t)q * (d - (size_t)full), full, (int)d, x);
    }
}

/* The tiled rows against the vectors: each group against one vector a pass
 * (a group, 32 KB at 4,096, stays in the L1 cache for the next), then the
 * plain rows of the incomplete group by the plain loop. */
VEC_BODY void gemv_split(const uint16_t *w, int rows, int d, const float *x, const float *xs,
                         int n_vec, float *out, size_t ldo)
{
    size_t D = (size_t)d;
    int full = d / GEMV_LANES * GEMV_LANES, r = 0;
    for (; r + HEAD_TILE_ROWS <= rows; r += HEAD_TILE_ROWS)
        for (int c = 0; c < n_vec; c++)
            gemv_group(w + (size_t)r * D, D, x + (size_t)c * D, xs + (size_t)c * D, full,
                       out + (size_t)c * ldo + (size_t)r);
    for (; r < rows; r++) /* at most three rows a head: the specification */
        for (int c = 0; c < n_vec; c++)
            out[(size_t)c * ldo + (size_t)r] =
                gemv_row(w, row_place(rows, d, r), d, x + (size_t)c * D, full);
}
#define HAVE_GEMV_SPLIT 1
#endif

VEC_BODY void head_gemv_bf16_body(const uint16_t *w, int rows, int d, const float *x,
                                  const float *xs, int n_vec, float *out, size_t ldo)
{
#ifdef HAVE_GEMV_SPLIT
    if (xs) {
        gemv_split(w, rows, d, x, xs, n_vec, out, ldo);
        return;
    }
#endif
    int full = d / GEMV_LANES * GEMV_LANES;
    for (int r = 0; r < rows; r++) {
        struct row_place pl = row_place(rows, d, r);
        for (int c = 0; c < n_vec; c++)
            out[(size_t)c * ldo + (size_t)r] = gemv_row(w, pl, d, x + (size_t)c * (size_t)d, full);
    }
}
VEC_PATHS_VOID(head_gemv_bf16,
               (const uint16_t *w, int rows, int d, const float *x, const float *xs, int n_vec,
                float *out, size_t ldo),
               (w, rows, d, x, xs, n_vec, out, ldo))

#define LM_BATCH 1024 /* counters per batch: four arrays of them stay in the L1 cache */

VEC_BODY void head_row_body(uint64_t seed, uint32_t row, int d, float scale, uint16_t *out)
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
VEC_PATHS_VOID(head_row, (uint64_t seed, uint32_t row, int d, float scale, uint16_t *out),
               (seed, row, d, scale, out))
