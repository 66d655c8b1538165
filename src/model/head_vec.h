/* head_vec.h - the LM head's dense loops (head_vec.c), built for the vector
 * units of the machine without changing any result. */
#ifndef LOGITLAB_HEAD_VEC_H
#define LOGITLAB_HEAD_VEC_H

#include <stdint.h>

/* out[r] = sum_i bf16(w[r * d + i]) * x[i] for r in [0, rows), in float:
 * sixteen running sums per row in a fixed pattern, then a fixed tree, and no
 * fused multiply-add (ISO C mode), so every CPU gets the same bits. */
void head_gemv_bf16(const uint16_t *w, int rows, int d, const float *x, float *out);

/* Row `row` of the synthetic head (lmhead_gen.h), all d weights, with the
 * Philox rounds run across the row's counters side by side. */
void head_row(uint64_t seed, uint32_t row, int d, float scale, uint16_t *out);

#endif
