/* vecmath.h - the dense loops of the O(V) sampler, in a file of their own so
 * that they can be built for the vector units of the machine they run on
 * (AVX-512 or AVX2 when the CPU has them, chosen at load time) without
 * changing any result: every loop is element-wise, and every sum adds in one
 * fixed order (eight running totals, then a fixed tree), whatever the CPU.
 */
#ifndef LOGITLAB_VECMATH_H
#define LOGITLAB_VECMATH_H

#include <stdint.h>
#include <string.h>

/* z[i] /= t for every i. Returns the largest |z[i]| before the division
 * over the z[i] that are not -inf (0 when none): what the quotients' range
 * check needs, in the same pass. */
double vm_divide(double *z, double t, int n);

/* The largest x in each block of VM_BLOCK values (the last block may be
 * short): lets a search skip whole blocks that cannot hold a candidate. */
#define VM_BLOCK 64

#if defined(__GNUC__)
#define VM_HAS_VEC 1
typedef double vm_v8d __attribute__((vector_size(64)));
typedef int64_t vm_v8i __attribute__((vector_size(64)));
/* Lane-wise the larger of a, b as the scalar "a > b ? a : b" picks it (b
 * where they are equal or one is NaN): the compiler does not vectorize that
 * ternary on doubles by itself. */
#define VM_MAX8(a, b) ((vm_v8d)(((vm_v8i)(a) & ((a) > (b))) | ((vm_v8i)(b) & ~((a) > (b)))))
#endif

/* The largest of one full block of VM_BLOCK values, in 8 lanes, each lane
 * "x > m ? x : m" in order, then the lanes in order: the loop vm_block_max
 * runs per block, shared with the fast path's fused load pass (fast_vec.c)
 * so both give the same maxima. */
static inline double vm_block_max_of(const double *x)
{
    double m[8];
#ifdef VM_HAS_VEC
    vm_v8d mv;
    memcpy(&mv, x, sizeof mv);
    for (int i = 8; i < VM_BLOCK; i += 8) {
        vm_v8d v;
        memcpy(&v, x + i, sizeof v);
        mv = VM_MAX8(v, mv);
    }
    memcpy(m, &mv, sizeof m);
#else
    for (int k = 0; k < 8; k++)
        m[k] = x[k];
    for (int i = 8; i < VM_BLOCK; i += 8)
        for (int k = 0; k < 8; k++)
            m[k] = x[i + k] > m[k] ? x[i + k] : m[k];
#endif
    double best = m[0];
    for (int k = 1; k < 8; k++)
        best = m[k] > best ? m[k] : best;
    return best;
}
void vm_block_max(const double *x, int n, double *block_max);

/* key[i] = rule_key(z[i]) (sampler_rules.h). */
void vm_keys(const double *z, uint32_t *key, int n);

/* How many finite tokens rank before (zc, idc): larger z, or equal z and a lower id. */
int vm_count_before(const double *z, int n, double zc, int idc);

/* Marks every kept token (mark == kept) that ranks after (zc, idc) -- or,
 * with keep_ties, every one with z below zc -- as cut. */
void vm_cut_marks(const double *z, uint8_t *mark, int n, double zc, int idc, int keep_ties,
                  uint8_t kept, uint8_t cut);

/* Min-p on the kept tokens (mark == kept): z - max at or above bar keeps
 * (rule_min_p_keeps), below it cuts. */
void vm_bar_marks(const double *z, uint8_t *mark, int n, double max, double bar, uint8_t kept,
                  uint8_t cut);

/* The ids i in [lo, hi) with mark[i] == kept, into out; returns how many. */
int vm_collect(const uint8_t *mark, int lo, int hi, uint8_t kept, int *out);

#endif
