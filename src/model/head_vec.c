/* head_vec.c - the LM head's dense loops, built for the vector units of the
 * machine (base/vec_clones.h): the bf16 product and the generation of a
 * row of synthetic weights. */
#include "model/head_vec.h"

#include "base/vec_clones.h"
#include "core/philox.h"
#include "model/lmhead_gen.h"

#define GEMV_LANES 16

VEC_CLONES void head_gemv_bf16(const uint16_t *w, int rows, int d, const float *x, float *out)
{
    int full = d / GEMV_LANES * GEMV_LANES;
    for (int r = 0; r < rows; r++) {
        const uint16_t *row = w + (size_t)r * (size_t)d;
        float a[GEMV_LANES] = { 0 };
        for (int i = 0; i < full; i += GEMV_LANES)
            for (int k = 0; k < GEMV_LANES; k++)
                a[k] += lm_float(row[i + k]) * x[i + k];
        for (int i = full; i < d; i++)
            a[i - full] += lm_float(row[i]) * x[i];
        for (int k = 0; k < GEMV_LANES / 2; k++)
            a[k] += a[k + GEMV_LANES / 2];
        for (int k = 0; k < GEMV_LANES / 4; k++)
            a[k] += a[k + GEMV_LANES / 4];
        out[r] = (a[0] + a[2]) + (a[1] + a[3]);
    }
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
