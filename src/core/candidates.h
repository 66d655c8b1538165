/* candidates.h - the rules of the GPU sampler's candidate list (issue 15's
 * two-pass design), shared by its CPU specification (backend/backend_spec.c)
 * and the kernels (HOSTDEV).
 *
 * Pass 1 over a row counts the finite tokens by the top CAND_DIGIT_BITS of
 * rule_key(z'), at the place of the chain's first cutting stage and at the
 * end of the chain. From the counts alone, and the largest z', a bucket is
 * found at or above which every token the first cut keeps must lie: top-k's
 * and greedy's from the counts down from the top; top-p's from a lower
 * bound of each bucket's mass (its count times e^(floor - max), a little
 * less), so that once the bound reaches p times the sum, the exact running
 * mass has too. Min-p needs no bucket: its test is exact per token. Pass 2
 * lists the tokens the first cut may keep, with the rows the screen shows,
 * and the chain runs on that list as the CPU runs it on the row. A list
 * longer than CAND_MAX (flat rows) takes the full path instead.
 */
#ifndef LOGITLAB_CANDIDATES_H
#define LOGITLAB_CANDIDATES_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/sampler.h" /* STAGE_COUNT */
#include "core/sampler_rules.h"

#define CAND_MAX        1024 /* tokens the list holds (the kernel's 48 KB of shared memory) */
#define CAND_DIGIT_BITS 11
#define CAND_BUCKETS    (1 << CAND_DIGIT_BITS)
#define CAND_NONE       (-1) /* no bucket reaches the target: every token is a candidate */

/* A mass bound is this much under the true one, far more than the rounding
 * of fast_exp and of a sum of CAND_BUCKETS terms. */
#define CAND_MARGIN (1.0 - 0x1p-40)

/* The chain as the candidate path runs it (the host makes it:
 * cand_plan_make in backend/backend_spec.h): the stages it runs, in order,
 * off ones left out; the z' version each reads (how many value stages came
 * before it: z' as loaded is version 0); the value stages; the first stage
 * that may cut, taking top-k to cut when k < V; and the settings z' needs. */
#define CAND_VERSIONS 3 /* z' as loaded, after one value stage, after both */

struct cand_plan {
    int n;
    int st[STAGE_COUNT];
    int version[STAGE_COUNT];
    int value[CAND_VERSIONS - 1]; /* STAGE_PENALTY or STAGE_TEMPERATURE */
    int n_versions, final;
    int first_cut, cut_version; /* chain index (-1: nothing cuts), and its version */
    int greedy;                 /* temperature 0 is in the chain */
    double shift, temperature, alpha, frequency, presence;
    int lesson_formula;
};

/* z' of a token of logit lg, seen count times in the penalty window, at
 * version v: the CPU's operations in the CPU's order (the device builds
 * with --fmad=false, so the penalty's product and sum round apart there
 * too). */
static inline HOSTDEV double cand_z(const struct cand_plan *P, float lg, int count, int v)
{
    double z = (double)lg + P->shift;
    for (int j = 0; j < v; j++)
        if (P->value[j] == STAGE_PENALTY) {
            if (count > 0)
                z = rule_penalize(z, count, P->alpha, P->lesson_formula, P->frequency, P->presence);
        } else {
            z = z / P->temperature;
        }
    return z;
}

static inline HOSTDEV int cand_digit(double z)
{
    return (int)(rule_key(z) >> (32 - CAND_DIGIT_BITS));
}

/* A double below every z of bucket b: the bucket's smallest float is f, a z
 * that rounds to f or above lies above the float under f. -inf for a bucket
 * that holds no finite float (NaN and infinite bit patterns). */
static inline HOSTDEV double cand_floor(int b)
{
    uint32_t key = (uint32_t)b << (32 - CAND_DIGIT_BITS);
    uint32_t bits = (key & 0x80000000u) ? key ^ 0x80000000u : ~key;
    float f;
    memcpy(&f, &bits, sizeof f);
    if (!(f - f == 0.0f)) /* NaN or infinite */
        return -INFINITY;
    return (double)nextafterf(f, -INFINITY);
}

/* The highest bucket at which the count from the top reaches k (top-k, and
 * greedy with k = 1): every token ranked k-th or better lies at or above
 * it. CAND_NONE when fewer than k tokens are counted. */
static inline HOSTDEV int cand_count_bucket(const uint32_t *cnt, long k)
{
    long c = 0;
    for (int b = CAND_BUCKETS - 1; b >= 0; b--) {
        c += cnt[b];
        if (c >= k)
            return b;
    }
    return CAND_NONE;
}

/* The highest bucket at which the lower bound of the mass from the top
 * reaches target (top-p's p times the sum, or a draw's u times it); w_lo[b]
 * is a lower bound of e^(z' - max) for a token of bucket b. CAND_NONE when
 * the bound never does (rounding near p = 1, or u near 1). */
static inline HOSTDEV int cand_mass_bucket(const uint32_t *cnt, const double *w_lo, double target)
{
    double L = 0.0;
    for (int b = CAND_BUCKETS - 1; b >= 0; b--) {
        L += (double)cnt[b] * w_lo[b];
        if (L >= target)
            return b;
    }
    return CAND_NONE;
}

#endif
