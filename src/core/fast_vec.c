/* fast_vec.c - the fused passes of fast_vec.h, written as vecmath.c's loops
 * are (element-wise work, eight running totals added in vm_sum's tree) so
 * that the vectorizer can build them for each clone without changing a bit.
 * The Makefile builds vecmath.c at -O3 without trapping math; this file gets
 * the same through the pragma below (before the headers, so that their
 * inline functions, fast_exp, get it too and stay inlined), as it is built
 * with the core's flags. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-trapping-math")
#endif

#include "core/fast_vec.h"

#include <math.h>

#include "base/vec_clones.h"
#include "core/fastexp.h"
#include "core/sampler_rules.h"
#include "core/vecmath.h"

#define LANES 8

#define VEC_PASS VEC_CLONES

/* Tokens per chunk: a chunk's z' and e stay in the first-level cache
 * between the simple loops that make one pass (a multiple of VM_BLOCK). */
#define CHUNK 512

/* The eight running totals added as vm_sum adds them. */
static inline double tree(const double *a)
{
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

/* out[lo..hi) = fast_exp(x - shift): vm_exp_shift's loop. */
static inline void exp_chunk(const double *x, double shift, double *out, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        out[i] = fast_exp(x[i] - shift);
}

/* Adds w[lo..hi) (hi - lo a multiple of LANES) into the lanes: vm_sum's loop. */
static inline void sum_chunk(const double *w, int lo, int hi, double *a)
{
    for (int i = lo; i < hi; i += LANES)
        for (int k = 0; k < LANES; k++)
            a[k] += w[i + k];
}

/* The entropy's term into the lanes: vm_weighted_offset's loop. */
static inline void offset_chunk(const double *w, const double *x, double shift, int lo, int hi,
                                double *a)
{
    for (int i = lo; i < hi; i += LANES)
        for (int k = 0; k < LANES; k++)
            a[k] += w[i + k] > 0.0 ? w[i + k] * (x[i + k] - shift) : 0.0;
}

VEC_PASS double fv_exp_stats(const double *x, double shift, double *out, int n, double *offset)
{
    double s8[LANES] = { 0 }, o8[LANES] = { 0 };
    int body = n - n % LANES;
    for (int lo = 0; lo < body; lo += CHUNK) {
        int hi = lo + CHUNK < body ? lo + CHUNK : body;
        exp_chunk(x, shift, out, lo, hi);
        sum_chunk(out, lo, hi, s8);
        offset_chunk(out, x, shift, lo, hi, o8);
    }
    exp_chunk(x, shift, out, body, n);
    double s = tree(s8), o = tree(o8);
    for (int i = body; i < n; i++) {
        s += out[i];
        o += out[i] > 0.0 ? out[i] * (x[i] - shift) : 0.0;
    }
    *offset = o;
    return s;
}

/* The largest |z| of z[lo..hi) that is not -inf, from m up: vm_divide's. */
static inline double magnitude_chunk(const double *z, int lo, int hi, double m)
{
    for (int i = lo; i < hi; i++) {
        double a = fabs(z[i]);
        m = ((z[i] != -INFINITY) & (a > m)) ? a : m;
    }
    return m;
}

/* z[lo..hi) /= t and out = fast_exp(z - shift), in one loop, so that the
 * divisions run beside the exponentials' arithmetic. */
static inline void divide_exp_chunk(double *z, double t, double shift, double *out, int lo, int hi)
{
    for (int i = lo; i < hi; i++) {
        double q = z[i] / t;
        z[i] = q;
        out[i] = fast_exp(q - shift);
    }
}

VEC_PASS double fv_divide_exp_stats(double *z, double t, double shift, double *out, int n,
                                    double *offset, double *zmax)
{
    double s8[LANES] = { 0 }, o8[LANES] = { 0 }, m = 0.0;
    int body = n - n % LANES;
    for (int lo = 0; lo < body; lo += CHUNK) {
        int hi = lo + CHUNK < body ? lo + CHUNK : body;
        m = magnitude_chunk(z, lo, hi, m);
        divide_exp_chunk(z, t, shift, out, lo, hi);
        sum_chunk(out, lo, hi, s8);
        offset_chunk(out, z, shift, lo, hi, o8);
    }
    m = magnitude_chunk(z, body, n, m);
    divide_exp_chunk(z, t, shift, out, body, n);
    double s = tree(s8), o = tree(o8);
    for (int i = body; i < n; i++) {
        s += out[i];
        o += out[i] > 0.0 ? out[i] * (z[i] - shift) : 0.0;
    }
    *offset = o;
    *zmax = m;
    return s;
}

VEC_PASS double fv_exp_sum(const double *x, double shift, int n)
{
    double s8[LANES] = { 0 }, e[CHUNK];
    int body = n - n % LANES;
    for (int lo = 0; lo < body; lo += CHUNK) {
        int hi = lo + CHUNK < body ? lo + CHUNK : body;
        exp_chunk(x + lo, shift, e, 0, hi - lo);
        sum_chunk(e, 0, hi - lo, s8);
    }
    double s = tree(s8);
    for (int i = body; i < n; i++)
        s += fast_exp(x[i] - shift);
    return s;
}

/* z[lo..hi) loaded: their marks, the blocks' maxima (a short last block
 * scalar, as vm_block_max), and the counts of vm_load_f and vm_marks_init. */
static inline void marks_chunk(const double *z, uint8_t *mark, double *block_max, int lo, int hi,
                               uint8_t kept, uint8_t masked, int *bad, int *n_masked)
{
    int b = 0, nm = 0;
    for (int i = lo; i < hi; i++) {
        double v = z[i];
        b += !((v >= -RULE_Z_LIMIT) & (v <= RULE_Z_LIMIT)) & (v != -INFINITY);
    }
    for (int i = lo; i < hi; i++) {
        int m = z[i] == -INFINITY;
        mark[i] = m ? masked : kept;
        nm += m;
    }
    int at = lo;
    for (; at + VM_BLOCK <= hi; at += VM_BLOCK)
        block_max[at / VM_BLOCK] = vm_block_max_of(z + at);
    if (at < hi) {
        double m = -INFINITY;
        for (int i = at; i < hi; i++)
            m = z[i] > m ? z[i] : m;
        block_max[at / VM_BLOCK] = m;
    }
    *bad += b;
    *n_masked += nm;
}

VEC_PASS int fv_load_f(const float *in, double shift, double *z, uint8_t *mark, double *block_max,
                       int n, uint8_t kept, uint8_t masked, int *n_kept)
{
    int bad = 0, n_masked = 0;
    for (int lo = 0; lo < n; lo += CHUNK) {
        int hi = lo + CHUNK < n ? lo + CHUNK : n;
        for (int i = lo; i < hi; i++)
            z[i] = (double)in[i] + shift;
        marks_chunk(z, mark, block_max, lo, hi, kept, masked, &bad, &n_masked);
    }
    *n_kept = n - n_masked;
    return bad;
}

VEC_PASS int fv_load_d(const double *in, double shift, double *z, uint8_t *mark, double *block_max,
                       int n, uint8_t kept, uint8_t masked, int *n_kept)
{
    int bad = 0, n_masked = 0;
    for (int lo = 0; lo < n; lo += CHUNK) {
        int hi = lo + CHUNK < n ? lo + CHUNK : n;
        for (int i = lo; i < hi; i++)
            z[i] = in[i] + shift;
        marks_chunk(z, mark, block_max, lo, hi, kept, masked, &bad, &n_masked);
    }
    *n_kept = n - n_masked;
    return bad;
}

VEC_PASS void fv_cut_all_but(uint8_t *mark, int n, int keep, uint8_t kept, uint8_t cut)
{
    for (int i = 0; i < n; i++)
        mark[i] = mark[i] == kept ? cut : mark[i];
    mark[keep] = kept;
}
