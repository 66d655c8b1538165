/* fast_vec.c - the fused passes of fast_vec.h: element-wise work, eight
 * running totals added in one fixed tree, so that the vectorizer can build
 * them for each clone without changing a bit; the exponentials through
 * fast_exp8 (the table lookup as a permutation). The Makefile builds this
 * file, as vecmath.c, at -O3 without trapping math. */
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

/* The sums of fast_exp(x - shift) over n tokens (a multiple of LANES),
 * added into the lanes; each e also stored into out[0..n) when there is
 * one. Lane k adds the tokens k, k + LANES, ... in order, whether the
 * compiler has vector types or not. in_range (a constant where it is
 * inlined): every x - shift is known to lie within the clamps' range
 * (fast_exp8's in_range), so the clamps are left out, and every e is
 * positive, so the entropy's term needs no mask either: the same bits as
 * with both. */
PASS_HELPER void stats_lanes(const double *x, double shift, double *out, int n, struct lanes *l,
                             int in_range)
{
#ifdef FASTEXP_HAS_VEC
    vm_v8d sv, ov;
    memcpy(&sv, l->s, sizeof sv);
    memcpy(&ov, l->o, sizeof ov);
    for (int i = 0; i < n; i += LANES) {
        double e8[LANES];
        fast_exp8(x + i, shift, e8, in_range);
        vm_v8d w, v;
        memcpy(&w, e8, sizeof w);
        memcpy(&v, x + i, sizeof v);
        if (out)
            memcpy(out + i, e8, sizeof e8);
        v -= shift;
        sv += w;
        /* w (x - shift) where w > 0, else +0 (a masked token's 0 * -inf
         * is NaN, and the mask drops it). */
        vm_v8d d = w * v;
        if (in_range)
            ov += d;
        else
            ov += (vm_v8d)((vm_v8i)d & (w > 0.0));
    }
    memcpy(l->s, &sv, sizeof sv);
    memcpy(l->o, &ov, sizeof ov);
#else
    (void)in_range;
    for (int i = 0; i < n; i += LANES)
        for (int k = 0; k < LANES; k++) {
            double w = fast_exp(x[i + k] - shift);
            if (out)
                out[i + k] = w;
            l->s[k] += w;
            l->o[k] += w > 0.0 ? w * (x[i + k] - shift) : 0.0;
        }
#endif
}

/* stats_lanes over a chunk whose values lie in [xmin, xmax]: without the
 * clamps where that range keeps every x - shift within theirs (x - shift
 * rounds monotonically, so the ends bound every token), which most chunks
 * do, else with them. A NaN end fails the test and takes the clamps. */
PASS_HELPER void stats_chunk(const double *x, double shift, double *out, int n, struct lanes *l,
                             double xmin, double xmax)
{
    if (xmin - shift >= FASTEXP_LOW && xmax - shift <= FASTEXP_HIGH)
        stats_lanes(x, shift, out, n, l, 1);
    else
        stats_lanes(x, shift, out, n, l, 0);
}

/* The smallest and largest of x[0..n) (n a multiple of LANES), in lanes,
 * two vectors a step so that no compare waits on the last, then across:
 * what stats_chunk needs to know of a chunk. A NaN may be passed over:
 * the ends are for the clamps' test, and a row with a NaN never reaches a
 * sum (fv_load counts it), so the order of the compares does not matter. */
PASS_HELPER void chunk_ends(const double *x, int n, double *xmin, double *xmax)
{
    double lo = n ? x[0] : 0.0, hi = lo;
    int i = 0;
#ifdef VM_HAS_VEC
    if (n >= 2 * LANES) {
        vm_v8d mn[2], mx[2];
        memcpy(&mn[0], x, sizeof mn[0]);
        memcpy(&mn[1], x + LANES, sizeof mn[1]);
        mx[0] = mn[0];
        mx[1] = mn[1];
        for (i = 2 * LANES; i + 2 * LANES <= n; i += 2 * LANES)
            for (int c = 0; c < 2; c++) {
                vm_v8d v;
                memcpy(&v, x + i + c * LANES, sizeof v);
                mn[c] = VM_SELECT(v < mn[c], v, mn[c]);
                mx[c] = VM_MAX8(v, mx[c]);
            }
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < LANES; k++) {
                lo = mn[c][k] < lo ? mn[c][k] : lo;
                hi = mx[c][k] > hi ? mx[c][k] : hi;
            }
    }
#endif
    for (; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    *xmin = lo;
    *xmax = hi;
}

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

/* The sums of the exponentials of z[lo..hi) (hi - lo a multiple of
 * LANES), each stored into out when there is one. */
PASS_HELPER void stats_range(const double *z, double shift, double *out, int lo, int hi,
                             struct lanes *l)
{
    double xmin, xmax;
    chunk_ends(z + lo, hi - lo, &xmin, &xmax);
    stats_chunk(z + lo, shift, out ? out + lo : NULL, hi - lo, l, xmin, xmax);
}

VEC_BODY double fv_exp_stats_body(const double *x, double shift, double *out, int n, double *offset)
{
    struct lanes l = { { 0 }, { 0 } };
    int body = n - n % LANES;
    for (int lo = 0; lo < body; lo += CHUNK)
        stats_range(x, shift, out, lo, lo + CHUNK < body ? lo + CHUNK : body, &l);
    return stats_end(&l, x, shift, out, body, n, offset);
}
VEC_PATHS(double, fv_exp_stats, (const double *x, double shift, double *out, int n, double *offset),
          (x, shift, out, n, offset))

/* z[lo..hi) = src[lo..hi) / t in one pass with what the pass needs of
 * them: the largest |src| that is not -inf, from m up (vm_magnitude's
 * step, the same value), returned; and the quotients' ends into cmin, cmax
 * (a NaN passed over, as chunk_ends does). Not vm_magnitude itself: a
 * pass of its own over the chunk made chain (f) 12 % slower. */
PASS_HELPER double divide_chunk(const double *src, double *z, double t, int lo, int hi, double m,
                                double *cmin, double *cmax)
{
    double qmin = INFINITY, qmax = -INFINITY;
    int i = lo;
#ifdef VM_HAS_VEC
    const vm_v8i sign = (vm_v8i){ 0 } + INT64_MIN;
    const vm_v8d minf = (vm_v8d){ 0 } - INFINITY;
    vm_v8d mag = (vm_v8d){ 0 } + m, mn = (vm_v8d){ 0 } + INFINITY, mx = (vm_v8d){ 0 } - INFINITY;
    for (; i + LANES <= hi; i += LANES) {
        vm_v8d v;
        memcpy(&v, src + i, sizeof v);
        vm_v8d a = (vm_v8d)((vm_v8i)v & ~sign & ~(v == minf)); /* |v|, 0 for -inf */
        mag = VM_MAX8(a, mag);
        v = v / t;
        memcpy(z + i, &v, sizeof v);
        mn = VM_SELECT(v < mn, v, mn);
        mx = VM_MAX8(v, mx);
    }
    for (int k = 0; k < LANES; k++) {
        m = mag[k] > m ? mag[k] : m;
        qmin = mn[k] < qmin ? mn[k] : qmin;
        qmax = mx[k] > qmax ? mx[k] : qmax;
    }
#endif
    for (; i < hi; i++) {
        double a = fabs(src[i]);
        m = ((src[i] != -INFINITY) & (a > m)) ? a : m;
        z[i] = src[i] / t;
        qmin = z[i] < qmin ? z[i] : qmin;
        qmax = z[i] > qmax ? z[i] : qmax;
    }
    *cmin = qmin;
    *cmax = qmax;
    return m;
}

/* Each chunk divided (divide_chunk) and its exponentials summed while it
 * is in the first-level cache; the ends are the whole chunk's, which only
 * decides whether the clamps are needed (the same bits either way). */
VEC_BODY double fv_divide_exp_stats_body(const double *src, double *z, double t, double shift,
                                         int n, double *offset, double *zmax)
{
    struct lanes l = { { 0 }, { 0 } };
    double m = 0.0;
    int body = n - n % LANES;
    for (int lo = 0; lo < n; lo += CHUNK) {
        int hi = lo + CHUNK < n ? lo + CHUNK : n;
        double cmin, cmax;
        m = divide_chunk(src, z, t, lo, hi, m, &cmin, &cmax);
        if (lo < body)
            stats_chunk(z + lo, shift, NULL, (hi < body ? hi : body) - lo, &l, cmin, cmax);
    }
    *zmax = m;
    return stats_end(&l, z, shift, NULL, body, n, offset);
}
VEC_PATHS(double, fv_divide_exp_stats,
          (const double *src, double *z, double t, double shift, int n, double *offset,
           double *zmax),
          (src, z, t, shift, n, offset, zmax))

#ifdef VM_HAS_VEC
/* The range test of eight lanes without a compare (which the compiler
 * would make lane by lane): the sign bit of OUT_OF_RANGE(v, limit_bits())
 * is set where |v| is above RULE_Z_LIMIT, as the bits of positive doubles
 * order -- +inf and NaN, whose bits are larger still, included. */
PASS_HELPER int64_t limit_bits(void)
{
    const double lim = RULE_Z_LIMIT;
    int64_t bits;
    memcpy(&bits, &lim, sizeof bits);
    return bits;
}
#define OUT_OF_RANGE(v, lim) ((lim) - ((vm_v8i)(v)&INT64_MAX))
#endif

/* Whether every z[lo..hi) is within RULE_Z_LIMIT's range (finite, and
 * not masked): the common chunk, whose marks need no look at each token. */
PASS_HELPER int all_in_range(const double *z, int lo, int hi, double *zmin)
{
    int64_t out = 0;
    double m = INFINITY;
    int i = lo;
#ifdef VM_HAS_VEC
    const int64_t lim = limit_bits();
    /* Four minima apart, so that no compare waits on the last one. */
    vm_v8d mv[4];
    for (int j = 0; j < 4; j++)
        mv[j] = (vm_v8d){ 0 } + INFINITY;
    vm_v8i ov = { 0 };
    for (; i + 4 * LANES <= hi; i += 4 * LANES)
        for (int j = 0; j < 4; j++) {
            vm_v8d v;
            memcpy(&v, z + i + j * LANES, sizeof v);
            ov |= OUT_OF_RANGE(v, lim);
            mv[j] = VM_SELECT(v < mv[j], v, mv[j]);
        }
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < LANES; k++)
            m = mv[j][k] < m ? mv[j][k] : m;
    for (int k = 0; k < LANES; k++)
        out |= ov[k] < 0;
#endif
    for (; i < hi; i++) {
        out |= !((z[i] >= -RULE_Z_LIMIT) & (z[i] <= RULE_Z_LIMIT));
        m = z[i] < m ? z[i] : m;
    }
    *zmin = m;
    return !out;
}

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

/* The scan of z[lo..hi) as it stands (after a division). */
PASS_HELPER struct chunk_scan scan_chunk(const double *z, struct fv_load *ld, int lo, int hi)
{
    struct chunk_scan cs;
    cs.clean = all_in_range(z, lo, hi, &cs.min);
    cs.max = block_maxima(z, ld, lo, hi);
    return cs;
}

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

/* After z[lo..hi) of a load (and the quotients ahead, when asked for) is
 * written and scanned (cs): its marks, and, when asked for, the
 * exponentials (of the quotients, with them) at the chunk's own largest
 * value folded into the run. The quotients' ends are the ends divided
 * (division keeps the order), so a clean chunk whose quotients' ends are
 * in range -- the common one -- needs no look at each quotient. */
PASS_HELPER void load_chunk_end(const double *z, struct fv_load *ld, int lo, int hi,
                                const struct chunk_scan *cs, struct run_sums *r, int *bad,
                                int *n_masked)
{
    marks_chunk(z, ld, lo, hi, cs, bad, n_masked);
    double cmin = cs->min, cmax = cs->max;
    const double *x = z;
    if (ld->ahead) {
        x = ld->ahead;
        cmax /= ld->t_ahead;
        cmin /= ld->t_ahead;
        if (!cs->clean || !(cmin >= -RULE_Z_LIMIT) || !(cmax <= RULE_Z_LIMIT))
            ahead_count_bad(ld, lo, hi);
    }
    if (!ld->sums || cmax == -INFINITY)
        return;
    struct lanes l = { { 0 }, { 0 } };
    int body = lo + (hi - lo) / LANES * LANES;
    stats_chunk(x + lo, cmax, NULL, body - lo, &l, cmin, cmax);
    double oc, sc = stats_end(&l, x, cmax, NULL, body, hi, &oc);
    fold(r, cmax, sc, oc);
}

#ifdef VM_HAS_VEC

/* One block of VM_BLOCK tokens from at of the load (what convert_chunk
 * says), its maximum returned; the minima (two chains, so that no compare
 * waits on the last) into mn, and the z added into sum: a NaN or an
 * infinity among them leaves sum not finite (z within RULE_Z_LIMIT cannot
 * add up past a double's range), so that with the ends it is the whole
 * range test, one addition where the bits' test took three operations.
 * f_in, divide, ahead: constants where it is inlined, so that each of
 * convert_chunk's loops has no test in it. The maximum as a tree of
 * VM_MAX8 whose left side is the earlier: the first of the largest wins in
 * each lane, as in vm_block_max_of's running maximum (a NaN survives only
 * from the first row in both), so the same bits, without a chain of eight
 * compares. */
PASS_HELPER double convert_block(const float *in_f, const double *in_d, double shift, double t,
                                 double *z, double *q, double tq, int at, vm_v8d *mn, vm_v8d *sum,
                                 int f_in, int divide, int ahead)
{
    vm_v8d row[VM_BLOCK / LANES];
#pragma GCC unroll 8
    for (int j = 0; j < VM_BLOCK / LANES; j++) {
        vm_v8d v;
        if (f_in) {
            /* Lane by lane: one conversion instruction (GCC 12 splits
             * __builtin_convertvector's in two, and joins them). */
            for (int k = 0; k < LANES; k++)
                v[k] = in_f[at + j * LANES + k];
        } else {
            memcpy(&v, in_d + at + j * LANES, sizeof v);
        }
        v += shift;
        if (divide)
            v = v / t;
        memcpy(z + at + j * LANES, &v, sizeof v);
        if (ahead) {
            vm_v8d w = v / tq;
            memcpy(q + at + j * LANES, &w, sizeof w);
        }
        mn[j & 1] = VM_SELECT(v < mn[j & 1], v, mn[j & 1]);
        *sum += v;
        row[j] = v;
    }
    _Static_assert(VM_BLOCK == 8 * LANES, "the tree below takes eight rows");
    vm_v8d m01 = VM_MAX8(row[1], row[0]), m23 = VM_MAX8(row[3], row[2]);
    vm_v8d m45 = VM_MAX8(row[5], row[4]), m67 = VM_MAX8(row[7], row[6]);
    vm_v8d m03 = VM_MAX8(m23, m01), m47 = VM_MAX8(m67, m45), m = VM_MAX8(m47, m03);
    double best = m[0]; /* the lanes in order, as vm_block_max_of takes them */
    for (int k = 1; k < LANES; k++)
        best = m[k] > best ? m[k] : best;
    return best;
}

/* convert_block over the full blocks of [lo, hi): their maxima into
 * block_max and cs; returns where the full blocks end. Clean: every z
 * finite (the sum) and the ends within RULE_Z_LIMIT, -inf included (a NaN
 * the ends pass over is in the sum). */
PASS_HELPER int convert_blocks(const float *in_f, const double *in_d, double shift, double t,
                               double *z, struct fv_load *ld, int lo, int hi, struct chunk_scan *cs,
                               int f_in, int divide, int ahead)
{
    vm_v8d mn[2] = { (vm_v8d){ 0 } + INFINITY, (vm_v8d){ 0 } + INFINITY };
    vm_v8d sum = { 0 };
    int at = lo;
    for (; at + VM_BLOCK <= hi; at += VM_BLOCK) {
        double best = convert_block(in_f, in_d, shift, t, z, ld->ahead, ld->t_ahead, at, mn, &sum,
                                    f_in, divide, ahead);
        ld->block_max[at / VM_BLOCK] = best;
        cs->max = best > cs->max ? best : cs->max;
    }
    for (int k = 0; k < LANES; k++) {
        cs->clean &= sum[k] - sum[k] == 0.0;
        for (int c = 0; c < 2; c++)
            cs->min = mn[c][k] < cs->min ? mn[c][k] : cs->min;
    }
    cs->clean &= (cs->min >= -RULE_Z_LIMIT) & (cs->max <= RULE_Z_LIMIT);
    return at;
}
#endif

/* z[lo..hi) = (in + shift) / t from the float row or the double one (only
 * one of them is given; lo a multiple of VM_BLOCK; no division when t is 1,
 * the same bits), and in the same pass the chunk's scan (scan_chunk's, the
 * same bits: each block's maximum as vm_block_max_of takes it), so that z
 * is read once more only for the exponentials; with ld->ahead, the
 * quotients z / t_ahead written there too. One loop for each case, so
 * that none tests in each block what the whole load knows. */
PASS_HELPER struct chunk_scan convert_chunk(const float *in_f, const double *in_d, double shift,
                                            double t, double *z, struct fv_load *ld, int lo, int hi)
{
    double *q = ld->ahead, tq = ld->t_ahead;
    struct chunk_scan cs = { INFINITY, -INFINITY, 1 };
    int at = lo;
#ifdef VM_HAS_VEC
#define CONVERT_CASE(f_in, divide, ahead)                                                          \
    convert_blocks(in_f, in_d, shift, t, z, ld, lo, hi, &cs, f_in, divide, ahead)
#define CONVERT_CASES(f_in)                                                                        \
    (t != 1.0 ? (q ? CONVERT_CASE(f_in, 1, 1) : CONVERT_CASE(f_in, 1, 0))                          \
              : (q ? CONVERT_CASE(f_in, 0, 1) : CONVERT_CASE(f_in, 0, 0)))
    at = in_f ? CONVERT_CASES(1) : CONVERT_CASES(0);
#undef CONVERT_CASES
#undef CONVERT_CASE
#endif
    if (at == hi)
        return cs;
    for (int i = at; i < hi; i++) {
        z[i] = in_d ? in_d[i] + shift : (double)in_f[i] + shift;
        if (t != 1.0)
            z[i] = z[i] / t;
        if (q)
            q[i] = z[i] / tq;
    }
    struct chunk_scan tail = scan_chunk(z, ld, at, hi);
    cs.clean &= tail.clean;
    cs.min = tail.min < cs.min ? tail.min : cs.min;
    cs.max = tail.max > cs.max ? tail.max : cs.max;
    return cs;
}

VEC_BODY int fv_load_body(const float *in_f, const double *in_d, double *z, struct fv_load *ld)
{
    struct run_sums r = { -INFINITY, 0.0, 0.0 };
    int bad = 0, n_masked = 0, n = ld->n;
    for (int lo = 0; lo < n; lo += CHUNK) {
        int hi = lo + CHUNK < n ? lo + CHUNK : n;
        struct chunk_scan cs = convert_chunk(in_f, in_d, ld->shift, ld->t, z, ld, lo, hi);
        load_chunk_end(z, ld, lo, hi, &cs, &r, &bad, &n_masked);
    }
    ld->max = r.max;
    ld->sum = r.sum;
    ld->offset = r.offset;
    ld->n_kept = n - n_masked;
    return bad;
}
VEC_PATHS(int, fv_load, (const float *in_f, const double *in_d, double *z, struct fv_load *ld),
          (in_f, in_d, z, ld))

VEC_BODY void fv_cut_all_but_body(uint8_t *mark, int n, int keep, uint8_t kept, uint8_t cut)
{
    for (int i = 0; i < n; i++)
        mark[i] = mark[i] == kept ? cut : mark[i];
    mark[keep] = kept;
}
VEC_PATHS_VOID(fv_cut_all_but, (uint8_t * mark, int n, int keep, uint8_t kept, uint8_t cut),
               (mark, n, keep, kept, cut))
