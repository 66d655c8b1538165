/* norm_tree.h - the LM head's RMSNorm, shared by the CPU (model.c) and the
 * CUDA kernel (rmsnorm_kernel, HOSTDEV), so that both normalize a hidden
 * vector to the same bits.
 *
 * The sum of squares runs in a fixed tree: lane j of NORM_LANES adds the
 * squares of h[j], h[j + NORM_LANES], ... in that order, then the lanes add
 * pairwise, lane j taking lane j + half for half = NORM_LANES / 2 down to 1.
 * The kernel's NORM_LANES threads do exactly that, so the device sums in
 * parallel (a chain of d / NORM_LANES + 8 dependent additions, not d) and
 * still gets the CPU's bits. Every square is exact: a float's 24-bit
 * significand squared fits a double's 53, so a multiply-add the compiler
 * may fuse rounds it the same way.
 */
#ifndef LOGITLAB_NORM_TREE_H
#define LOGITLAB_NORM_TREE_H

#include <math.h>

#include "core/philox.h" /* HOSTDEV */

#define NORM_LANES 256 /* a power of two; the kernel's threads per vector */

/* Lane j's share: the squares of every NORM_LANES-th entry from j, in order. */
static inline HOSTDEV double norm_lane(const float *h, int d, int j)
{
    double s = 0.0;
    for (int i = j; i < d; i += NORM_LANES)
        s += (double)h[i] * (double)h[i];
    return s;
}

/* The pairwise step of the tree: lane j takes lane j + half. */
static inline HOSTDEV void norm_tree_step(double *lane, int j, int half)
{
    lane[j] += lane[j + half];
}

/* The root mean square a vector of d entries with sum of squares ss is
 * divided by: in double, then rounded to float (eps is Llama's epsilon). */
static inline HOSTDEV float norm_rms(double ss, int d, float eps)
{
    return (float)sqrt(ss / d + (double)eps);
}

/* The whole sum on one thread, in the tree's order (the CPU's). */
static inline double norm_sum_squares(const float *h, int d)
{
    double lane[NORM_LANES];
    for (int j = 0; j < NORM_LANES; j++)
        lane[j] = norm_lane(h, d, j);
    for (int half = NORM_LANES / 2; half > 0; half /= 2)
        for (int j = 0; j < half; j++)
            norm_tree_step(lane, j, half);
    return lane[0];
}

#endif
