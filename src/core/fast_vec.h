/* fast_vec.h - the fused dense passes of the O(V) sampler (sampler_fast.c):
 * each does in one pass over the vocabulary what vecmath.c's loops do in
 * two or three, with the same results bit for bit -- the same fast_exp, the
 * same eight running totals added in the same tree. Written with the
 * compiler's vector types, so that every build gets vector code of eight
 * lanes whatever its optimization level; each lane does what the scalar
 * code does, so the vector width changes no result.
 */
#ifndef LOGITLAB_FAST_VEC_H
#define LOGITLAB_FAST_VEC_H

#include <stdint.h>

/* z[i] = in[i] + shift; mark[i] = masked when z[i] is -inf, else kept;
 * block_max[b] the largest z of each VM_BLOCK tokens (vm_block_max). Returns
 * how many z[i] are out of RULE_Z_LIMIT's range without being -inf (as
 * vm_load_f), and *n_kept the tokens not masked. */
int fv_load_f(const float *in, double shift, double *z, uint8_t *mark, double *block_max, int n,
              uint8_t kept, uint8_t masked, int *n_kept);
int fv_load_d(const double *in, double shift, double *z, uint8_t *mark, double *block_max, int n,
              uint8_t kept, uint8_t masked, int *n_kept);

/* out[i] = fast_exp(x[i] - shift); returns the sum of out and *offset the
 * sum of out[i] (x[i] - shift) over out[i] > 0: vm_exp_stats in one pass,
 * the same bits. */
double fv_exp_stats(const double *x, double shift, double *out, int n, double *offset);

/* z[i] /= t, then fv_exp_stats of the quotients with the given shift (the
 * largest quotient: t > 0 keeps the order), in one pass; *zmax gets the
 * largest |z[i]| before the division over the z[i] that are not -inf (as
 * vm_divide returns it). */
double fv_divide_exp_stats(double *z, double t, double shift, double *out, int n, double *offset,
                           double *zmax);

/* The sum of fast_exp(x[i] - shift), nothing stored: vm_exp_stats's return
 * value, the same bits. */
double fv_exp_sum(const double *x, double shift, int n);

/* Every kept mark (mark == kept) but token keep's becomes cut: greedy's
 * cut, on the marks alone. */
void fv_cut_all_but(uint8_t *mark, int n, int keep, uint8_t kept, uint8_t cut);

#endif
