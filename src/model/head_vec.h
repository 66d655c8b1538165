/* head_vec.h - the LM head's dense loops (head_vec.c), built for each
 * vector path without changing any result: each is name(...) on the path
 * vec_path() gives, or name_on(path, ...) (base/vecpath.h). */
#ifndef LOGITLAB_HEAD_VEC_H
#define LOGITLAB_HEAD_VEC_H

#include <stddef.h>
#include <stdint.h>

#include "base/vecpath.h"

/* The layout of a synthetic head's weights (rows x d bf16), tiled for one
 * stream through memory: the rows in groups of HEAD_TILE_ROWS, and in a
 * full group the first block of sixteen weights of each of its rows in
 * turn, then the second block of each, and so on, then the rows' tails past
 * their last block one after another. The rows of a last, incomplete group
 * are stored as they are. A group starts at its first row times d, so the
 * rows [lo, hi) of a head, lo a multiple of HEAD_TILE_ROWS and hi too or
 * the last row, are a tiled head of their own. */
#define HEAD_TILE_ROWS 4

/* The product's software prefetch: a line every HEAD_AHEAD_EVERY bytes of
 * weights, HEAD_AHEAD_BYTES ahead (head_vec.c says why; make bench's
 * streaming read asks the same). */
#define HEAD_AHEAD_BYTES 32768
#define HEAD_AHEAD_EVERY 4096

/* Row r (d weights) of the tiled head w of `rows` rows: put in, copied out. */
void head_put_row(uint16_t *w, int rows, int d, int r, const uint16_t *row);
void head_get_row(const uint16_t *w, int rows, int d, int r, uint16_t *row);

/* x (d floats) rearranged for the vector product: in each block of
 * sixteen entries the eight even ones, then the eight odd ones; the tail
 * past the last block as it is. */
void head_split_x(const float *x, int d, float *xs);

/* out[c * ldo + r] = sum_i bf16(W[r][i]) * x[c * d + i] for the rows r
 * in [0, rows) and the vectors c in [0, n_vec), in float: sixteen running
 * sums per row and vector in a fixed pattern, then a fixed tree, and no
 * fused multiply-add (ISO C mode), so every CPU gets the same bits. W is
 * the tiled head w of `rows` rows. xs holds the
 * vectors' splits (head_split_x, n_vec x d), which the vector units need;
 * NULL gives the same bits by the plain loop. */
VEC_DECLARE(void, head_gemv_bf16,
            (const uint16_t *w, int rows, int d, const float *x, const float *xs, int n_vec,
             float *out, size_t ldo));

/* Row `row` of the synthetic head (lmhead_gen.h), all d weights, with the
 * Philox rounds run across the row's counters side by side. */
VEC_DECLARE(void, head_row, (uint64_t seed, uint32_t row, int d, float scale, uint16_t *out));

#endif
