/* fast_vec.c - the fused passes of fast_vec.h: element-wise work, eight
 * running totals added in one fixed tree, so that each vector path
 * (base/vecpath.h) builds them without changing a bit; the exponentials
 * through fast_exp8 or fast_exp4 (fastexp.h). The
 * passes themselves are in fast_vec_lanes.h, written once for a vector of
 * any width and included here for eight lanes (the AVX-512 and baseline
 * builds) and for four (the AVX2 build). The Makefile builds this file, as
 * vecmath.c, at -O3 without trapping math. */
#include "core/fast_vec.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/fastexp.h"
#include "core/sampler_rules.h"
#include "core/vecmath.h"

#define LANES 8

/* The helpers of the passes: always inlined, so that each is built for
 * the vector units of the build (base/vecpath.h) that calls it. */
#define PASS_HELPER static inline __attribute__((always_inline))

/* Tokens per chunk: a chunk's z' and e stay in the first-level cache
 * between the simple loops that make one pass (a multiple of VM_BLOCK). */
#define CHUNK 512

/* The eight running totals added in one fixed tree. */
PASS_HELPER double tree(const double *a)
{
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

/* The two sums of a pass, lane by lane: e, and the entropy's term
 * e (x - shift) over the e > 0. */
struct lanes {
    double s[LANES], o[LANES];
};

/* The lanes' totals, then the last n % LANES tokens from lo on, one by one
 * (stored into out when there is one): the pass's two sums. */
PASS_HELPER double stats_end(const struct lanes *l, const double *x, double shift, double *out,
                             int lo, int n, double *offset)
{
    double s = tree(l->s), o = tree(l->o);
    for (int i = lo; i < n; i++) {
        double w = fast_exp(x[i] - shift);
        if (out)
            out[i] = w;
        s += w;
        o += w > 0.0 ? w * (x[i] - shift) : 0.0;
    }
    *offset = o;
    return s;
}

#ifdef VM_HAS_VEC
/* The range test of a vector's lanes without a compare (which the
 * compiler would make lane by lane): the sign bit of OUT_OF_RANGE(v,
 * limit_bits(), its integer type) is set where |v| is above RULE_Z_LIMIT,
 * as the bits of positive doubles order -- +inf and NaN, whose bits are
 * larger still, included. */
PASS_HELPER int64_t limit_bits(void)
{
    const double lim = RULE_Z_LIMIT;
    int64_t bits;
    memcpy(&bits, &lim, sizeof bits);
    return bits;
}
#define OUT_OF_RANGE(v, lim, I) ((lim) - ((I)(v)&INT64_MAX))
#endif

/* The largest z of each block of z[lo..hi) (lo a multiple of VM_BLOCK; a
 * short last block scalar) into block_max; returns the chunk's largest. */
PASS_HELPER double block_maxima(const double *z, struct fv_load *ld, int lo, int hi)
{
    double cmax = -INFINITY;
    for (int at = lo; at < hi; at += VM_BLOCK) {
        double m = -INFINITY;
        if (at + VM_BLOCK <= hi)
            m = vm_block_max_of(z + at);
        else
            for (int i = at; i < hi; i++)
                m = z[i] > m ? z[i] : m;
        ld->block_max[at / VM_BLOCK] = m;
        cmax = m > cmax ? m : cmax;
    }
    return cmax;
}

/* What a load knows of a chunk of z: its smallest and largest (a NaN
 * passed over), and whether every z is within RULE_Z_LIMIT's range (finite
 * and not masked); its blocks' maxima are in block_max by then. */
struct chunk_scan {
    double min, max;
    int clean;
};

/* z[lo..hi) loaded and scanned (cs): their marks, and the counts: out of
 * range without being -inf (NaN and +inf included), and masked. */
PASS_HELPER void marks_chunk(const double *z, struct fv_load *ld, int lo, int hi,
                             const struct chunk_scan *cs, int *bad, int *n_masked)
{
    if (cs->clean) {
        memset(ld->mark + lo, ld->kept, (size_t)(hi - lo));
    } else {
        int b = 0, nm = 0;
        for (int i = lo; i < hi; i++) {
            double v = z[i];
            int m = v == -INFINITY;
            b += !((v >= -RULE_Z_LIMIT) & (v <= RULE_Z_LIMIT)) & !m;
            ld->mark[i] = m ? ld->masked : ld->kept;
            nm += m;
        }
        *bad += b;
        *n_masked += nm;
    }
}

/* The running sums of a load: the largest z' so far, and the exponentials'
 * two sums at it. */
struct run_sums {
    double max, sum, offset;
};

/* Folds a chunk's sums (sc, oc, at its own largest z' mc) into the run:
 * e^(z - M) = w e^(z - mc) with w = e^(mc - M), and z - M = (z - mc) +
 * (mc - M); a larger mc moves the run to it the same way. */
PASS_HELPER void fold(struct run_sums *r, double mc, double sc, double oc)
{
    if (mc == -INFINITY) /* every token of the chunk masked */
        return;
    if (r->max == -INFINITY) {
        *r = (struct run_sums){ mc, sc, oc };
    } else if (mc <= r->max) {
        double w = fast_exp(mc - r->max);
        r->sum += w * sc;
        r->offset += w * (oc + (mc - r->max) * sc);
    } else {
        double w = fast_exp(r->max - mc);
        r->offset = w * (r->offset + (r->max - mc) * r->sum) + oc;
        r->sum = w * r->sum + sc;
        r->max = mc;
    }
}

/* The quotients ahead[lo..hi) out of range that are not -inf, counted. */
PASS_HELPER void ahead_count_bad(struct fv_load *ld, int lo, int hi)
{
    int b = 0;
    for (int i = lo; i < hi; i++) {
        double q = ld->ahead[i];
        b += !((q >= -RULE_Z_LIMIT) & (q <= RULE_Z_LIMIT)) & (q != -INFINITY);
    }
    ld->ahead_bad += b;
}

/* The passes on eight lanes a vector: the AVX-512 build's (w8), and the
 * baseline's (w8b, every build's off x86-64 gcc), which emulates the fused
 * multiply-adds of the exponentials where the build has no instruction for
 * them (base/softfma.h; the same bits) rather than call libm for each. */
#define FV_W                8
#define FV_D                vm_v8d
#define FV_I                vm_v8i
#define FV_MIN(a, b)        VM_SELECT((a) < (b), a, b)
#define FV_MAX(a, b)        VM_MAX8(a, b)
#define FV_EXP(x, s, o, in) fast_exp8(x, s, o, in, FV_SOFT)
/* Lane by lane: one conversion instruction (GCC 12 splits
 * __builtin_convertvector's in two, and joins them). */
#define FV_FLOATS(v, p)                                                                            \
    do {                                                                                           \
        for (int k_ = 0; k_ < 8; k_++)                                                             \
            (v)[k_] = (p)[k_];                                                                     \
    } while (0)
#if VEC_BUILDS
#define FV_SOFT  0
#define FV(name) name##_w8
#include "core/fast_vec_lanes.h"
#undef FV_SOFT
#undef FV
#endif
#ifdef __FP_FAST_FMA
#define FV_SOFT 0
#else
#define FV_SOFT 1
#endif
#define FV(name) name##_w8b
#include "core/fast_vec_lanes.h"
#undef FV_SOFT
#undef FV_W
#undef FV_D
#undef FV_I
#undef FV_MIN
#undef FV_MAX
#undef FV_EXP
#undef FV_FLOATS
#undef FV

#if VEC_BUILDS
/* The passes on four lanes a vector, two vectors for the eight lanes: the
 * AVX2 build's. */
#define FV_W 4
#define FV_D vm_v4d
#define FV_I vm_v4i
/* vminpd and vmaxpd are "a < b ? a : b" and "a > b ? a : b" lane by lane,
 * NaNs and zeros included: one instruction where the compare and blend
 * that gcc makes of the select are two or three. */
#define FV_MIN(a, b)        ((vm_v4d)_mm256_min_pd(a, b))
#define FV_MAX(a, b)        ((vm_v4d)_mm256_max_pd(a, b))
#define FV_EXP(x, s, o, in) fast_exp4(x, s, o, in)
/* One vcvtps2pd from memory, by its intrinsic: gcc 12 makes two of two
 * lanes of __builtin_convertvector, the upper half through the stack (and
 * a lane-by-lane loop through memory as well). */
#define FV_FLOATS(v, p) ((v) = (vm_v4d)_mm256_cvtps_pd(_mm_loadu_ps(p)))
#define FV(name)        name##_w4
/* The helpers built for the AVX2 path's registers themselves (each is
 * inlined into its avx2 build alone), so that they may use its
 * intrinsics. */
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
#include <immintrin.h>
#include "core/fast_vec_lanes.h"
#pragma GCC pop_options
#endif

VEC_PATHS_BY(double, fv_exp_stats,
             (const double *x, double shift, double *out, int n, double *offset),
             (x, shift, out, n, offset), fv_exp_stats_w8, fv_exp_stats_w4, fv_exp_stats_w8b)
VEC_PATHS_BY(double, fv_divide_exp_stats,
             (const double *src, double *z, double t, double shift, int n, double *offset,
              double *zmax),
             (src, z, t, shift, n, offset, zmax), fv_divide_exp_stats_w8, fv_divide_exp_stats_w4,
             fv_divide_exp_stats_w8b)
VEC_PATHS_BY(int, fv_load, (const float *in_f, const double *in_d, double *z, struct fv_load *ld),
             (in_f, in_d, z, ld), fv_load_w8, fv_load_w4, fv_load_w8b)

VEC_BODY void fv_cut_all_but_body(uint8_t *mark, int n, int keep, uint8_t kept, uint8_t cut)
{
    for (int i = 0; i < n; i++)
        mark[i] = mark[i] == kept ? cut : mark[i];
    mark[keep] = kept;
}
VEC_PATHS_VOID(fv_cut_all_but, (uint8_t * mark, int n, int keep, uint8_t kept, uint8_t cut),
               (mark, n, keep, kept, cut))
