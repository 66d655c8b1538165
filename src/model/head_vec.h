/* head_vec.h - the LM head's dense loops (head_vec.c), built for the vector
 * units of the machine without changing any result. */
#ifndef LOGITLAB_HEAD_VEC_H
#define LOGITLAB_HEAD_VEC_H

#include <stddef.h>
#include <stdint.h>

/* x (d floats) rearranged for the vector product: in each block of
 * sixteen entries the eight even ones, then the eight odd ones; the tail
 * past the last block as it is. */
void head_split_x(const float *x, int d, float *xs);

/* out[c * ldo + r] = sum_i bf16(w[r * d + i]) * x[c * d + i] for the rows r
 * in [0, rows) and the vectors c in [0, n_vec), in float: sixteen running
 * sums per row and vector in a fixed pattern, then a fixed tree, and no
 * fused multiply-add (ISO C mode), so every CPU gets the same bits. xs holds
 * the vectors' splits (head_split_x, n_vec x d), which the vector units
 * need; NULL gives the same bits by the plain loop. */
void head_gemv_bf16(const uint16_t *w, int rows, int d, const float *x, const float *xs, int n_vec,
                    float *out, size_t ldo);

/* Row `row` of the synthetic head (lmhead_gen.h), all d weights, with the
 * Philox rounds run across the row's counters side by side. */
void head_row(uint64_t seed, uint32_t row, int d, float scale, uint16_t *out);

#endif
