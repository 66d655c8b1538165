#include "vecmath.h"

#include <math.h>

#include "fastexp.h"
#include "lmhead_gen.h"
#include "sampler_rules.h"

/* Each function is built three times on x86-64 (AVX-512, AVX2, baseline)
 * and the loader picks the one the CPU can run. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VEC_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define VEC_CLONES
#endif

#define LANES 8

VEC_CLONES int vm_load_f(const float *in, double shift, double *z, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double v = (double)in[i] + shift;
        z[i] = v;
        bad += (v != v) | (v == INFINITY); /* NaN is the value unequal to itself */
    }
    return bad;
}

VEC_CLONES int vm_load_d(const double *in, double shift, double *z, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double v = in[i] + shift;
        z[i] = v;
        bad += (v != v) | (v == INFINITY);
    }
    return bad;
}

VEC_CLONES void vm_divide(double *z, double t, int n)
{
    for (int i = 0; i < n; i++)
        z[i] /= t;
}

VEC_CLONES double vm_max(const double *x, int n)
{
    double m[LANES];
    for (int k = 0; k < LANES; k++)
        m[k] = -INFINITY;
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            m[k] = x[i + k] > m[k] ? x[i + k] : m[k];
    double best = -INFINITY;
    for (int k = 0; k < LANES; k++)
        best = m[k] > best ? m[k] : best;
    for (; i < n; i++)
        best = x[i] > best ? x[i] : best;
    return best;
}

VEC_CLONES void vm_exp_shift(const double *x, double shift, double *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = fast_exp(x[i] - shift);
}

VEC_CLONES double vm_sum(const double *x, int n)
{
    double a[LANES] = { 0 };
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            a[k] += x[i + k];
    double s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    for (; i < n; i++)
        s += x[i];
    return s;
}

VEC_CLONES double vm_weighted_offset(const double *w, const double *x, double shift, int n)
{
    double a[LANES] = { 0 };
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            a[k] += w[i + k] > 0.0 ? w[i + k] * (x[i + k] - shift) : 0.0;
    double s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    for (; i < n; i++)
        s += w[i] > 0.0 ? w[i] * (x[i] - shift) : 0.0;
    return s;
}

VEC_CLONES void vm_keys(const double *z, uint32_t *key, int n)
{
    for (int i = 0; i < n; i++)
        key[i] = rule_key(z[i]);
}

VEC_CLONES int vm_count_before(const double *z, int n, double zc, int idc)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += (z[i] > zc) | ((z[i] == zc) & (i < idc));
    return c;
}

VEC_CLONES int vm_marks_init(const double *z, uint8_t *mark, int n, uint8_t kept, uint8_t masked)
{
    int c = 0;
    for (int i = 0; i < n; i++) {
        int m = z[i] == -INFINITY;
        mark[i] = m ? masked : kept;
        c += !m;
    }
    return c;
}

VEC_CLONES void vm_cut_marks(const double *z, uint8_t *mark, int n, double zc, int idc,
                             int keep_ties, uint8_t kept, uint8_t cut)
{
    for (int i = 0; i < n; i++) {
        int after = keep_ties ? z[i] < zc : (z[i] < zc) | ((z[i] == zc) & (i > idc));
        mark[i] = (mark[i] == kept && after) ? cut : mark[i];
    }
}

VEC_CLONES void vm_bar_marks(const double *z, uint8_t *mark, int n, double max, double lo,
                             double hi, uint8_t kept, uint8_t cut, uint8_t unsure)
{
    for (int i = 0; i < n; i++) {
        double d = z[i] - max;
        uint8_t m = d > hi ? kept : d < lo ? cut : unsure;
        mark[i] = mark[i] == kept ? m : mark[i];
    }
}

int vm_collect(const uint8_t *mark, int lo, int hi, uint8_t kept, int *out)
{
    int k = 0;
    for (int i = lo; i < hi; i++)
        if (mark[i] == kept)
            out[k++] = i;
    return k;
}

double vm_exp_stats(const double *x, double shift, double *out, int n, double *offset)
{
    /* Three vectorized passes: a fused loop with two running sums does not
     * vectorize without reordering the sums, which would tie the result to
     * the vector width. */
    vm_exp_shift(x, shift, out, n);
    *offset = vm_weighted_offset(out, x, shift, n);
    return vm_sum(out, n);
}

/* The largest of one full block. */
static inline double block_max_of(const double *x)
{
    double m[LANES];
    for (int k = 0; k < LANES; k++)
        m[k] = x[k];
    for (int i = LANES; i < VM_BLOCK; i += LANES)
        for (int k = 0; k < LANES; k++)
            m[k] = x[i + k] > m[k] ? x[i + k] : m[k];
    double best = m[0];
    for (int k = 1; k < LANES; k++)
        best = m[k] > best ? m[k] : best;
    return best;
}

VEC_CLONES void vm_block_max(const double *x, int n, double *block_max)
{
    int full = n / VM_BLOCK;
    for (int b = 0; b < full; b++)
        block_max[b] = block_max_of(x + b * VM_BLOCK);
    if (full * VM_BLOCK < n) {
        double m = -INFINITY;
        for (int i = full * VM_BLOCK; i < n; i++)
            m = x[i] > m ? x[i] : m;
        block_max[full] = m;
    }
}

#define GEMV_LANES 16

VEC_CLONES void vm_gemv_bf16(const uint16_t *w, int rows, int d, const float *x, float *out)
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

VEC_CLONES void vm_lm_row(uint64_t seed, uint32_t row, int d, float scale, uint16_t *out)
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
