/* sampler_rules.h - the per-token rules of the chain, shared by the CPU
 * reference, the CPU fast path and the CUDA kernels (header only, HOSTDEV),
 * so that every backend applies literally the same arithmetic.
 */
#ifndef LOGITLAB_SAMPLER_RULES_H
#define LOGITLAB_SAMPLER_RULES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/philox.h" /* HOSTDEV */

/* A token and its z', in the one order every stage, table and draw uses:
 * descending z, ties to the lower id. */
struct zid {
    double z;
    int id;
};

/* Token a comes before token b in that order. */
static inline HOSTDEV int rule_ranks_before(double za, int a, double zb, int b)
{
    return za > zb || (za == zb && a < b);
}

/* The same order as a qsort comparator. -inf sorts last; NaN never gets here. */
static inline int rule_zid_cmp(const void *a, const void *b)
{
    const struct zid *x = (const struct zid *)a, *y = (const struct zid *)b;
    return rule_ranks_before(x->z, x->id, y->z, y->id)   ? -1
           : rule_ranks_before(y->z, y->id, x->z, x->id) ? 1
                                                         : 0;
}

/* Dynamic temperature (llama.cpp's temp_ext): with n >= 2 kept tokens
 * whose softmax has entropy h, the temperature runs from max(0, T - R) to
 * T + R by the normalized entropy h / ln n raised to the exponent x: a
 * flat distribution is heated, a peaked one cooled. */
static inline HOSTDEV double rule_dynamic_t(double T, double R, double x, double h, int n)
{
    double lo = T - R > 0.0 ? T - R : 0.0, hi = T + R;
    return lo + (hi - lo) * pow(h / log((double)n), x);
}

/* Epsilon and eta cutoffs (Hugging Face): a token goes when its
 * probability is below the bar and it is not tied with the most likely
 * (min_tokens_to_keep 1). Eta's bar is min(eta, sqrt(eta) e^-h), h the
 * entropy of the kept tokens. */
static inline HOSTDEV int rule_below_bar(double p, double bar, double z, double max)
{
    return p < bar && z < max;
}

static inline HOSTDEV double rule_eta_bar(double eta, double h)
{
    double b = sqrt(eta) * exp(-h);
    return b < eta ? b : eta;
}

/* The range of z' (HACKING.md 4, "The range of z'"): every token that is
 * not masked keeps |z'| <= RULE_Z_LIMIT after each value stage (the shift,
 * the penalties, the temperature), or the step is refused naming the
 * setting. Within it every later number stays finite: a difference of two
 * z' (2e30), its square summed over any vocabulary (top-n-sigma's spread,
 * below 1e67), e^(z' - max); and it fits a float with room to spare.
 * No engine's model comes near it (logits are tens); only settings at the
 * edge of their ranges do (temperature 1e-307). NaN is out of range. */
#define RULE_Z_LIMIT 1e30

static inline HOSTDEV int rule_z_in_range(double z)
{
    return z >= -RULE_Z_LIMIT && z <= RULE_Z_LIMIT;
}

/* Repetition, then frequency and presence penalties, on a token seen count
 * times (count > 0). The engine formula divides a positive logit and
 * multiplies a negative one, so the token always loses; the lesson's divides
 * every sign, which pulls a negative logit up toward 0. */
static inline HOSTDEV double rule_penalize(double z, int count, double alpha, int lesson_formula,
                                           double frequency, double presence)
{
    if (alpha != 1.0) {
        if (lesson_formula || z > 0.0)
            z /= alpha;
        else
            z *= alpha;
    }
    return z - (frequency * count + presence);
}

/* The test of a radix walk (radix_pick): the running total after a bucket
 * or a token -- a count c, or a weight w when weighted (rule_mass_value of
 * the running mass) -- reaches target (inclusive: top-k's count, top-p's
 * mass) or passes it (strict: the draw). */
static inline HOSTDEV int rule_reached(int weighted, int strict, int c, double w, double target)
{
    return weighted ? (strict ? w > target : w >= target) : (double)c >= target;
}

/* The running mass of a radix walk (radix_pick), kept exactly in fixed
 * point: each weight w (0 <= w < 2; the walks add e^(z' - max) <= 1) in
 * units of 2^-RULE_MASS_BITS, rounded to nearest, added into 128 bits. An
 * integer sum is the same in any order, so the kernels' atomic additions
 * give the same bucket masses on every run, and the CPU fast path, which
 * adds in index order, the same ones again. Only the comparison with the
 * target turns the total into a double (rule_mass_value). */
#define RULE_MASS_BITS 58

struct rule_mass {
    uint64_t lo, hi;
};

/* w in units: w * 2^58 is exact; + 0.5 and the truncation round it to a
 * nearby unit (the nearest, but for ties past 2^52 units, which go to even:
 * the same on every backend, since all do the same IEEE operations). A NaN
 * or a negative weight counts 0 and one of 2 or more counts 2 (neither
 * occurs for e^(z' - max); the guards keep the conversion defined). */
static inline HOSTDEV uint64_t rule_mass_units(double w)
{
    if (!(w > 0.0))
        return 0;
    if (w >= 2.0)
        return (uint64_t)1 << 59;
    return (uint64_t)(w * 0x1p58 + 0.5);
}

/* m += q units (or += another mass, rule_mass_add2), with the carry. */
static inline HOSTDEV void rule_mass_add(struct rule_mass *m, uint64_t q)
{
    m->lo += q;
    m->hi += m->lo < q;
}

static inline HOSTDEV struct rule_mass rule_mass_add2(struct rule_mass a, struct rule_mass b)
{
    rule_mass_add(&a, b.lo);
    a.hi += b.hi;
    return a;
}

/* The mass as a double: hi counts 2^64 units, 2^6 in all. */
static inline HOSTDEV double rule_mass_value(struct rule_mass m)
{
    return (double)m.hi * 0x1p6 + (double)m.lo * 0x1p-58;
}

/* The running totals of a radix walk: a count, and the mass in fixed point,
 * so that the same buckets give the same totals in any order. */
struct rule_walk {
    int count;
    struct rule_mass mass;
};

/* One step of the walk: a bucket or a token (n tokens, mass m) either
 * brings the running totals to the target -- 1, w holding the totals left
 * before it -- or is added to them. */
static inline HOSTDEV int rule_walk_step(struct rule_walk *w, int n, struct rule_mass m,
                                         int weighted, int strict, double target)
{
    struct rule_mass next = rule_mass_add2(w->mass, m);
    if (rule_reached(weighted, strict, w->count + n, rule_mass_value(next), target))
        return 1;
    w->count += n;
    w->mass = next;
    return 0;
}

/* Where the penalty window starts in a context of context_len ids whose
 * first prompt_len are the prompt: at the first generated token (or at 0
 * when the prompt counts too), and no earlier than the last last_n ids
 * when last_n > 0. */
static inline HOSTDEV int rule_window_start(int prompt_counts, int prompt_len, int context_len,
                                            int last_n)
{
    int start = prompt_counts ? 0 : prompt_len;
    if (last_n > 0 && context_len - start > last_n)
        start = context_len - last_n;
    return start;
}

/* Min-p keeps p_i >= min_p * p_max; the normalizer cancels, so the test is
 * e^(z_i - z_max) >= min_p. e^d grows with d, so it is d >= bar for the
 * smallest double bar with e^bar >= min_p: rule_min_p_bar finds that bar
 * once, on the host, with the C library's exp, and every path (the
 * reference, the fast path, the kernel) compares with it, no exp per token
 * and none on the device (whose exp may differ from the host's by an ulp). */
static inline HOSTDEV int rule_min_p_keeps(double z, double max, double bar)
{
    return z - max >= bar;
}

/* The bar of min_p in (0, 1]: halving between two doubles around log(min_p)
 * (e^lo < min_p <= e^hi) until they are neighbours. */
static inline double rule_min_p_bar(double min_p)
{
    double lo = log(min_p) - 1e-3, hi = log(min_p) + 1e-3;
    while (exp(lo) >= min_p) /* not for an exp within an ulp, but cheap to be sure */
        lo -= 1.0;
    while (exp(hi) < min_p)
        hi += 1.0;
    for (;;) {
        double mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi)
            return hi;
        if (exp(mid) >= min_p)
            hi = mid;
        else
            lo = mid;
    }
}

/* The draw rule on cumulative sums in rank order: the first index whose
 * cumulative value exceeds u (strictly); n when rounding left them all at
 * or below u. */
static inline HOSTDEV int rule_first_above(const double *cum, int n, double u)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cum[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The many-draw view (draws.c, and the kernels' draw_kernel) draws on
 * integer weights: each token's e^(z' - max) (at most 1) in units of
 * 2^-shift, rounded as rule_mass_units rounds, with shift =
 * rule_draw_shift(V) so that V weights add to at most 2^62. The cumulative
 * sums down the rank order are integers, the same whatever order a parallel
 * scan adds them in, and they depend on no sum of doubles (S, K): a CPU and
 * a device that agree on z' (they do, bit for bit) draw the same tokens for
 * the same u, with no boundary left to tolerate. An e below half a unit
 * (at V = 128,256, shift 45: below 2^-46 of the top token's) weighs 0 and
 * is never drawn. */
static inline HOSTDEV int rule_draw_shift(int V)
{
    int bits = 0;
    while (bits < 31 && ((int64_t)1 << bits) < (int64_t)V)
        bits++;
    return 62 - bits;
}

static inline HOSTDEV uint64_t rule_draw_units(double e, int shift)
{
    if (!(e > 0.0))
        return 0;
    if (e >= 1.0)
        return (uint64_t)1 << shift;
    return (uint64_t)(ldexp(e, shift) + 0.5);
}

/* The draw on those sums: the first index whose cumulative weight exceeds
 * u * total, total = cum[n - 1]. u is philox_uniform's k * 2^-24 (PHILOX_U_
 * SCALE), so with total = hi * 2^24 + lo the target floor(u * total) is
 * k * hi + floor(k * lo / 2^24), both products under 2^62: exact, with no
 * double rounding on either side. (Another u is first floored to 2^-24.)
 * n when n is 0 or every weight is 0. */
static inline HOSTDEV uint64_t rule_draw_target(double u, uint64_t total)
{
    uint64_t k = u > 0.0 ? (uint64_t)(u * 0x1p24) : 0; /* u is in [0, 1): k < 2^24 */
    return k * (total >> 24) + ((k * (total & 0xFFFFFFu)) >> 24);
}

static inline HOSTDEV int rule_first_above_units(const uint64_t *cum, int n, double u)
{
    if (n <= 0)
        return 0;
    uint64_t t = rule_draw_target(u, cum[n - 1]);
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cum[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* A 32-bit key that orders like z: the float bits of z, with the sign bit
 * flipped for positives and every bit flipped for negatives. Rounding z to
 * float never reverses an order, so tokens in a higher bucket of the key
 * always have a larger z; ties in the key are settled by the exact z. -0
 * (and a negative z that rounds to it) takes +0's key: the two are one
 * number, which every comparison of the rules ranks by id alone, so they
 * must share a bucket. */
static inline HOSTDEV uint32_t rule_key(double z)
{
    float f = (float)z;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (u == 0x80000000u) /* -0 */
        u = 0;
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

#endif
