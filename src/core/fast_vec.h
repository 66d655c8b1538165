/* fast_vec.h - the fused dense passes of the O(V) sampler (sampler_fast.c):
 * each does in one pass over the vocabulary what would take two or three
 * simple loops, the exponentials through fastexp.h, their sums in eight
 * running totals added in one fixed tree. Each is name(...) on the path
 * vec_path() gives, or name_on(path, ...) (base/vecpath.h). Every build
 * gets vector code whatever its optimization level: the eight lanes in one
 * vector, or in two of four on the AVX2 path (fast_vec_lanes.h); each lane
 * does what the scalar code does, so the vector width changes no result.
 */
#ifndef LOGITLAB_FAST_VEC_H
#define LOGITLAB_FAST_VEC_H

#include <stdint.h>

#include "base/vecpath.h"

/* A load of the row: z[i] = (in[i] + shift) / t (t = 1: no division, the
 * same bits), mark[i] = masked when z[i] is -inf, else kept, block_max[b]
 * the largest z of each VM_BLOCK tokens (vecmath.h). With sums set, the
 * same pass adds up the exponentials: max = the largest z, sum = the sum of
 * e^(z - max), offset = the sum of e^(z - max) (z - max) over the tokens
 * not masked (the entropy's term); each chunk of tokens summed at its own
 * largest z, and folded in with one exponential, so that the row is read
 * once (the sums agree with fv_exp_stats's to rounding, not bit for bit). */
struct fv_load {
    int n;
    double shift, t;
    uint8_t *mark;
    double *block_max;
    uint8_t kept, masked;
    int sums;
    /* With ahead, the temperature's quotients made in the same pass:
     * ahead[i] = z[i] / t_ahead, and the sums taken over those instead of
     * z (at each chunk's largest quotient, its largest z over t_ahead). */
    double *ahead;
    double t_ahead;
    /* out */
    double max, sum, offset;
    int n_kept;    /* the tokens not masked */
    int ahead_bad; /* quotients out of RULE_Z_LIMIT's range that are not -inf */
};

/* The load from the float row in_f or the double one in_d (the other
 * NULL). Returns how many z[i] are out of RULE_Z_LIMIT's range without
 * being -inf (NaN and +inf among them); the sums are then meaningless. */
VEC_DECLARE(int, fv_load, (const float *in_f, const double *in_d, double *z, struct fv_load *ld));

/* out[i] = fast_exp(x[i] - shift) when out is not NULL; returns the sum of
 * those exponentials and *offset the sum of each times (x[i] - shift) over
 * the positive ones (the entropy's term). */
VEC_DECLARE(double, fv_exp_stats,
            (const double *x, double shift, double *out, int n, double *offset));

/* z[i] = src[i] / t (src may be z), then fv_exp_stats of the quotients
 * with the given shift (the largest quotient: t > 0 keeps the order), in
 * one pass, storing no exponential; *zmax gets the largest |src[i]| over
 * the src[i] that are not -inf (the temperature's range check). */
VEC_DECLARE(double, fv_divide_exp_stats,
            (const double *src, double *z, double t, double shift, int n, double *offset,
             double *zmax));

/* Every kept mark (mark == kept) but token keep's becomes cut: greedy's
 * cut, on the marks alone. */
VEC_DECLARE(void, fv_cut_all_but, (uint8_t * mark, int n, int keep, uint8_t kept, uint8_t cut));

#endif
