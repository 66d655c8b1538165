/* fast_vec_lanes.h - the passes of fast_vec.c on vectors of FV_W doubles,
 * included by fast_vec.c once for each width it builds: eight lanes in one
 * vector (AVX-512's registers, and the baseline build's), and eight as two
 * vectors of four (the AVX2 build: gcc 12 keeps a vector of eight doubles,
 * which AVX2 has no register for, in memory, and takes it apart lane by
 * lane for a fused multiply-add or a permutation). The lanes are the
 * specification's eight running totals whatever the width: lane k of the
 * eight is lane k % FV_W of part k / FV_W, every lane does what the scalar
 * code does, and the reductions across lanes take them in the order 0..7,
 * so both widths give the same bits. What the includer defines:
 *   FV_W            lanes in a vector (8 or 4); FV_P = LANES / FV_W parts
 *   FV_D, FV_I      the vector types: doubles, 64-bit integers
 *   FV_MIN(a, b)    lane-wise "a < b ? a : b"
 *   FV_MAX(a, b)    lane-wise "a > b ? a : b"
 *   FV_EXP(x, shift, out, in_range)   fast_exp8 or fast_exp4 (fastexp.h)
 *   FV_FLOATS(v, p) v = the FV_W floats at p, as doubles
 *   FV(name)        name with the width's suffix
 * No include guard: fast_vec.c includes it once a width, and nothing else
 * may. */

#define FV_P (LANES / FV_W)

/* The sums of fast_exp(x - shift) over n tokens (a multiple of LANES),
 * added into the lanes; each e also stored into out[0..n) when there is
 * one. Lane k adds the tokens k, k + LANES, ... in order, whether the
 * compiler has vector types or not. in_range (a constant where it is
 * inlined): every x - shift is known to lie within the clamps' range
 * (fast_exp8's in_range), so the clamps are left out, and every e is
 * positive, so the entropy's term needs no mask either: the same bits as
 * with both. */
PASS_HELPER void FV(stats_lanes)(const double *x, double shift, double *out, int n, struct lanes *l,
                                 int in_range)
{
#ifdef FASTEXP_HAS_VEC
    FV_D sv[FV_P], ov[FV_P];
    memcpy(sv, l->s, sizeof sv);
    memcpy(ov, l->o, sizeof ov);
    for (int i = 0; i < n; i += LANES)
#pragma GCC unroll 2
        for (int h = 0; h < FV_P; h++) {
            double e[FV_W];
            FV_EXP(x + i + h * FV_W, shift, e, in_range);
            FV_D w, v;
            memcpy(&w, e, sizeof w);
            memcpy(&v, x + i + h * FV_W, sizeof v);
            if (out)
                memcpy(out + i + h * FV_W, e, sizeof e);
            v -= shift;
            sv[h] += w;
            /* w (x - shift) where w > 0, else +0 (a masked token's 0 * -inf
             * is NaN, and the mask drops it). */
            FV_D d = w * v;
            if (in_range)
                ov[h] += d;
            else
                ov[h] += (FV_D)((FV_I)d & (w > 0.0));
        }
    memcpy(l->s, sv, sizeof sv);
    memcpy(l->o, ov, sizeof ov);
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
PASS_HELPER void FV(stats_chunk)(const double *x, double shift, double *out, int n, struct lanes *l,
                                 double xmin, double xmax)
{
    if (xmin - shift >= FASTEXP_LOW && xmax - shift <= FASTEXP_HIGH)
        FV(stats_lanes)(x, shift, out, n, l, 1);
    else
        FV(stats_lanes)(x, shift, out, n, l, 0);
}

/* The smallest and largest of x[0..n) (n a multiple of LANES), in lanes,
 * two rows of LANES a step so that no compare waits on the last, then
 * across: what stats_chunk needs to know of a chunk. A NaN may be passed
 * over: the ends are for the clamps' test, and a row with a NaN never
 * reaches a sum (fv_load counts it), so the order of the compares does
 * not matter. */
PASS_HELPER void FV(chunk_ends)(const double *x, int n, double *xmin, double *xmax)
{
    double lo = n ? x[0] : 0.0, hi = lo;
    int i = 0;
#ifdef VM_HAS_VEC
    if (n >= 2 * LANES) {
        FV_D mn[2 * FV_P], mx[2 * FV_P];
        memcpy(mn, x, sizeof mn);
        memcpy(mx, x, sizeof mx);
        for (i = 2 * LANES; i + 2 * LANES <= n; i += 2 * LANES)
#pragma GCC unroll 4
            for (int c = 0; c < 2 * FV_P; c++) {
                FV_D v;
                memcpy(&v, x + i + c * FV_W, sizeof v);
                mn[c] = FV_MIN(v, mn[c]);
                mx[c] = FV_MAX(v, mx[c]);
            }
        for (int c = 0; c < 2 * FV_P; c++)
            for (int k = 0; k < FV_W; k++) {
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

/* The sums of the exponentials of z[lo..hi) (hi - lo a multiple of
 * LANES), each stored into out when there is one. */
PASS_HELPER void FV(stats_range)(const double *z, double shift, double *out, int lo, int hi,
                                 struct lanes *l)
{
    double xmin, xmax;
    FV(chunk_ends)(z + lo, hi - lo, &xmin, &xmax);
    FV(stats_chunk)(z + lo, shift, out ? out + lo : NULL, hi - lo, l, xmin, xmax);
}

PASS_HELPER double FV(fv_exp_stats)(const double *x, double shift, double *out, int n,
                                    double *offset)
{
    struct lanes l = { { 0 }, { 0 } };
    int body = n - n % LANES;
    for (int lo = 0; lo < body; lo += CHUNK)
        FV(stats_range)(x, shift, out, lo, lo + CHUNK < body ? lo + CHUNK : body, &l);
    return stats_end(&l, x, shift, out, body, n, offset);
}

/* z[lo..hi) = src[lo..hi) / t in one pass with what the pass needs of
 * them: the largest |src| that is not -inf, from m up (vm_magnitude's
 * step, the same value), returned; and the quotients' ends into cmin, cmax
 * (a NaN passed over, as chunk_ends does). Not vm_magnitude itself: a
 * pass of its own over the chunk made chain (f) 12 % slower. The largest
 * and the ends do not depend on the order of the compares (a NaN is never
 * taken, and |v| is never -0), so each part keeps its own. */
PASS_HELPER double FV(divide_chunk)(const double *src, double *z, double t, int lo, int hi,
                                    double m, double *cmin, double *cmax)
{
    double qmin = INFINITY, qmax = -INFINITY;
    int i = lo;
#ifdef VM_HAS_VEC
    const FV_I sign = (FV_I){ 0 } + INT64_MIN;
    const FV_D minf = (FV_D){ 0 } - INFINITY;
    FV_D mag[FV_P], mn[FV_P], mx[FV_P];
    for (int h = 0; h < FV_P; h++) {
        mag[h] = (FV_D){ 0 } + m;
        mn[h] = (FV_D){ 0 } + INFINITY;
        mx[h] = (FV_D){ 0 } - INFINITY;
    }
    for (; i + LANES <= hi; i += LANES)
#pragma GCC unroll 2
        for (int h = 0; h < FV_P; h++) {
            FV_D v;
            memcpy(&v, src + i + h * FV_W, sizeof v);
            FV_D a = (FV_D)((FV_I)v & ~sign & ~(v == minf)); /* |v|, 0 for -inf */
            mag[h] = FV_MAX(a, mag[h]);
            v = v / t;
            memcpy(z + i + h * FV_W, &v, sizeof v);
            mn[h] = FV_MIN(v, mn[h]);
            mx[h] = FV_MAX(v, mx[h]);
        }
    for (int h = 0; h < FV_P; h++)
        for (int k = 0; k < FV_W; k++) {
            m = mag[h][k] > m ? mag[h][k] : m;
            qmin = mn[h][k] < qmin ? mn[h][k] : qmin;
            qmax = mx[h][k] > qmax ? mx[h][k] : qmax;
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
PASS_HELPER double FV(fv_divide_exp_stats)(const double *src, double *z, double t, double shift,
                                           int n, double *offset, double *zmax)
{
    struct lanes l = { { 0 }, { 0 } };
    double m = 0.0;
    int body = n - n % LANES;
    for (int lo = 0; lo < n; lo += CHUNK) {
        int hi = lo + CHUNK < n ? lo + CHUNK : n;
        double cmin, cmax;
        m = FV(divide_chunk)(src, z, t, lo, hi, m, &cmin, &cmax);
        if (lo < body)
            FV(stats_chunk)(z + lo, shift, NULL, (hi < body ? hi : body) - lo, &l, cmin, cmax);
    }
    *zmax = m;
    return stats_end(&l, z, shift, NULL, body, n, offset);
}

/* Whether every z[lo..hi) is within RULE_Z_LIMIT's range (finite, and
 * not masked): the common chunk, whose marks need no look at each token. */
PASS_HELPER int FV(all_in_range)(const double *z, int lo, int hi, double *zmin)
{
    int64_t out = 0;
    double m = INFINITY;
    int i = lo;
#ifdef VM_HAS_VEC
    const int64_t lim = limit_bits();
    /* Four rows of minima apart, so that no compare waits on the last one. */
    FV_D mv[4 * FV_P];
    for (int j = 0; j < 4 * FV_P; j++)
        mv[j] = (FV_D){ 0 } + INFINITY;
    FV_I ov = { 0 };
    for (; i + 4 * LANES <= hi; i += 4 * LANES)
#pragma GCC unroll 8
        for (int j = 0; j < 4 * FV_P; j++) {
            FV_D v;
            memcpy(&v, z + i + j * FV_W, sizeof v);
            ov |= OUT_OF_RANGE(v, lim, FV_I);
            mv[j] = FV_MIN(v, mv[j]);
        }
    for (int j = 0; j < 4 * FV_P; j++)
        for (int k = 0; k < FV_W; k++)
            m = mv[j][k] < m ? mv[j][k] : m;
    for (int k = 0; k < FV_W; k++)
        out |= ov[k] < 0;
#endif
    for (; i < hi; i++) {
        out |= !((z[i] >= -RULE_Z_LIMIT) & (z[i] <= RULE_Z_LIMIT));
        m = z[i] < m ? z[i] : m;
    }
    *zmin = m;
    return !out;
}

/* The scan of z[lo..hi) as it stands (after a division). */
PASS_HELPER struct chunk_scan FV(scan_chunk)(const double *z, struct fv_load *ld, int lo, int hi)
{
    struct chunk_scan cs;
    cs.clean = FV(all_in_range)(z, lo, hi, &cs.min);
    cs.max = block_maxima(z, ld, lo, hi);
    return cs;
}

/* After z[lo..hi) of a load (and the quotients ahead, when asked for) is
 * written and scanned (cs): its marks, and, when asked for, the
 * exponentials (of the quotients, with them) at the chunk's own largest
 * value folded into the run. The quotients' ends are the ends divided
 * (division keeps the order), so a clean chunk whose quotients' ends are
 * in range -- the common one -- needs no look at each quotient. */
PASS_HELPER void FV(load_chunk_end)(const double *z, struct fv_load *ld, int lo, int hi,
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
    FV(stats_chunk)(x + lo, cmax, NULL, body - lo, &l, cmin, cmax);
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
 * maxima whose left side is the earlier: the first of the largest wins in
 * each lane, as in vm_block_max_of's running maximum (a NaN survives only
 * from the first row in both), so the same bits, without a chain of eight
 * compares. mn and sum hold FV_P parts a chain. */
PASS_HELPER double FV(convert_block)(const float *in_f, const double *in_d, double shift, double t,
                                     double *z, double *q, double tq, int at, FV_D *mn, FV_D *sum,
                                     int f_in, int divide, int ahead)
{
    _Static_assert(VM_BLOCK == 8 * LANES, "the tree below takes eight rows");
    double best = 0.0;
    /* A part's eight rows at a time: their vectors fit in AVX2's sixteen
     * registers, where both parts' did not. */
#pragma GCC unroll 2
    for (int h = 0; h < FV_P; h++) {
        FV_D row[VM_BLOCK / LANES];
#pragma GCC unroll 8
        for (int j = 0; j < VM_BLOCK / LANES; j++) {
            int from = at + j * LANES + h * FV_W;
            FV_D v;
            if (f_in)
                FV_FLOATS(v, in_f + from);
            else
                memcpy(&v, in_d + from, sizeof v);
            v += shift;
            if (divide)
                v = v / t;
            memcpy(z + from, &v, sizeof v);
            if (ahead) {
                FV_D w = v / tq;
                memcpy(q + from, &w, sizeof w);
            }
            FV_D *m = &mn[(j & 1) * FV_P + h];
            *m = FV_MIN(v, *m);
            sum[h] += v;
            row[j] = v;
        }
        FV_D m01 = FV_MAX(row[1], row[0]), m23 = FV_MAX(row[3], row[2]);
        FV_D m45 = FV_MAX(row[5], row[4]), m67 = FV_MAX(row[7], row[6]);
        FV_D m03 = FV_MAX(m23, m01), m47 = FV_MAX(m67, m45), m = FV_MAX(m47, m03);
        /* The lanes in order, as vm_block_max_of takes them. */
        for (int k = 0; k < FV_W; k++)
            best = h + k == 0 ? m[0] : m[k] > best ? m[k] : best;
    }
    return best;
}

/* convert_block over the full blocks of [lo, hi): their maxima into
 * block_max and cs; returns where the full blocks end. Clean: every z
 * finite (the sum) and the ends within RULE_Z_LIMIT, -inf included (a NaN
 * the ends pass over is in the sum). */
PASS_HELPER int FV(convert_blocks)(const float *in_f, const double *in_d, double shift, double t,
                                   double *z, struct fv_load *ld, int lo, int hi,
                                   struct chunk_scan *cs, int f_in, int divide, int ahead)
{
    FV_D mn[2 * FV_P], sum[FV_P];
    for (int h = 0; h < FV_P; h++) {
        mn[h] = mn[FV_P + h] = (FV_D){ 0 } + INFINITY;
        sum[h] = (FV_D){ 0 };
    }
    int at = lo;
    for (; at + VM_BLOCK <= hi; at += VM_BLOCK) {
        double best = FV(convert_block)(in_f, in_d, shift, t, z, ld->ahead, ld->t_ahead, at, mn,
                                        sum, f_in, divide, ahead);
        ld->block_max[at / VM_BLOCK] = best;
        cs->max = best > cs->max ? best : cs->max;
    }
    for (int h = 0; h < FV_P; h++)
        for (int k = 0; k < FV_W; k++) {
            cs->clean &= sum[h][k] - sum[h][k] == 0.0;
            for (int c = 0; c < 2; c++)
                cs->min = mn[c * FV_P + h][k] < cs->min ? mn[c * FV_P + h][k] : cs->min;
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
PASS_HELPER struct chunk_scan FV(convert_chunk)(const float *in_f, const double *in_d, double shift,
                                                double t, double *z, struct fv_load *ld, int lo,
                                                int hi)
{
    double *q = ld->ahead, tq = ld->t_ahead;
    struct chunk_scan cs = { INFINITY, -INFINITY, 1 };
    int at = lo;
#ifdef VM_HAS_VEC
#define CONVERT_CASE(f_in, divide, ahead)                                                          \
    FV(convert_blocks)(in_f, in_d, shift, t, z, ld, lo, hi, &cs, f_in, divide, ahead)
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
    struct chunk_scan tail = FV(scan_chunk)(z, ld, at, hi);
    cs.clean &= tail.clean;
    cs.min = tail.min < cs.min ? tail.min : cs.min;
    cs.max = tail.max > cs.max ? tail.max : cs.max;
    return cs;
}

PASS_HELPER int FV(fv_load)(const float *in_f, const double *in_d, double *z, struct fv_load *ld)
{
    struct run_sums r = { -INFINITY, 0.0, 0.0 };
    int bad = 0, n_masked = 0, n = ld->n;
    for (int lo = 0; lo < n; lo += CHUNK) {
        int hi = lo + CHUNK < n ? lo + CHUNK : n;
        struct chunk_scan cs = FV(convert_chunk)(in_f, in_d, ld->shift, ld->t, z, ld, lo, hi);
        FV(load_chunk_end)(z, ld, lo, hi, &cs, &r, &bad, &n_masked);
    }
    ld->max = r.max;
    ld->sum = r.sum;
    ld->offset = r.offset;
    ld->n_kept = n - n_masked;
    return bad;
}

#undef FV_P
