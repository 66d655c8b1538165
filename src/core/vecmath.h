/* vecmath.h - the dense loops of the O(V) sampler, in a file of their own so
 * that they can be built for the vector units of the machine they run on
 * (AVX-512 or AVX2 when the CPU has them, or as LOGITLAB_VECTOR says: base/vecpath.h) without
 * changing any result: every loop is element-wise, and every sum adds in one
 * fixed order (eight running totals, then a fixed tree), whatever the CPU.
 */
#ifndef LOGITLAB_VECMATH_H
#define LOGITLAB_VECMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/vecpath.h"

/* Each loop below declared with VEC_DECLARE is name(...), on the path
 * vec_path() gives, and name_on(path, ...), on the path given. */

/* z[i] /= t for every i. Returns the largest |z[i]| before the division
 * over the z[i] that are not -inf (0 when none): what the quotients' range
 * check needs, in the same pass. */
VEC_DECLARE(double, vm_divide, (double *z, double t, int n));

/* z[i] /= t for every i, and nothing else. */
VEC_DECLARE(void, vm_quotients, (double *z, double t, int n));

/* The largest x in each block of VM_BLOCK values (the last block may be
 * short): lets a search skip whole blocks that cannot hold a candidate. */
#define VM_BLOCK 64

/* Eight doubles in one vector (GCC and Clang), for the loops the compiler
 * does not vectorize by itself; every such loop has a scalar twin below
 * the #else that gives the same bits. */
#if defined(__GNUC__)
#define VM_HAS_VEC 1
typedef double vm_v8d __attribute__((vector_size(64)));
typedef int64_t vm_v8i __attribute__((vector_size(64)));
typedef uint64_t vm_v8u __attribute__((vector_size(64)));
/* Lane-wise a where the comparison mask m is all ones, else b; a macro, so
 * that no vector is passed to a function (whose ABI would depend on the
 * vector units the caller is built for). */
#define VM_SELECT(m, a, b) ((vm_v8d)(((vm_v8i)(a) & (m)) | ((vm_v8i)(b) & ~(m))))
/* Lane-wise the larger of a, b as the scalar "a > b ? a : b" picks it (b
 * where they are equal or one is NaN). */
#define VM_MAX8(a, b) VM_SELECT((a) > (b), a, b)
/* Four lanes in one vector: AVX2's registers, where a vector of eight
 * has none and gcc 12 keeps it in memory (fast_vec_lanes.h). */
typedef double vm_v4d __attribute__((vector_size(32)));
typedef int64_t vm_v4i __attribute__((vector_size(32)));
typedef uint64_t vm_v4u __attribute__((vector_size(32)));
#define VM_SELECT4(m, a, b) ((vm_v4d)(((vm_v4i)(a) & (m)) | ((vm_v4i)(b) & ~(m))))
#define VM_MAX4(a, b)       VM_SELECT4((a) > (b), a, b)
#endif

/* The helpers below are inlined always: a function built for several
 * vector units (base/vecpath.h) would otherwise call one copy of them
 * built for the plainest. */
#define VM_INLINE static inline __attribute__((always_inline))

/* The largest of one full block of VM_BLOCK values, in 8 lanes, each lane
 * "x > m ? x : m" in order, then the lanes in order: the loop vm_block_max
 * runs per block, shared with the fast path's fused load pass (fast_vec.c)
 * so both give the same maxima. */
VM_INLINE double vm_block_max_of(const double *x)
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
/* The largest |z| of z[lo..hi) that is not -inf, from m (>= 0) up: the
 * range check of a division by the temperature needs it (vm_divide and the
 * fast path's fused pass). In lanes, four vectors a step: one running
 * maximum would be a chain of dependent compares as long as the row. A NaN
 * is never taken (the compare is false), so the order does not matter. */
VM_INLINE double vm_magnitude(const double *z, int lo, int hi, double m)
{
    int i = lo;
#ifdef VM_HAS_VEC
    const vm_v8i sign = (vm_v8i){ 0 } + INT64_MIN;
    const vm_v8d minf = (vm_v8d){ 0 } - INFINITY;
    vm_v8d acc[4] = { { 0 } };
    for (; i + 32 <= hi; i += 32)
        for (int j = 0; j < 4; j++) {
            vm_v8d v;
            memcpy(&v, z + i + 8 * j, sizeof v);
            vm_v8d a = (vm_v8d)((vm_v8i)v & ~sign & ~(v == minf)); /* |v|, 0 for -inf */
            acc[j] = VM_MAX8(a, acc[j]);
        }
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 8; k++)
            m = acc[j][k] > m ? acc[j][k] : m;
#endif
    for (; i < hi; i++) {
        double a = fabs(z[i]);
        m = ((z[i] != -INFINITY) & (a > m)) ? a : m;
    }
    return m;
}

VEC_DECLARE(void, vm_block_max, (const double *x, int n, double *block_max));

/* The first i in [from, n) with x[i] >= bar (strict: x[i] > bar), n when
 * there is none: what the loops over the blocks' maxima look for (a block
 * that may hold a candidate), eight at a time. */
VEC_DECLARE(int, vm_first_at_least, (const double *x, int from, int n, double bar, int strict));

/* The largest x[i], as "x > m ? x : m" from m = -inf takes it in order (a
 * NaN passed over; of +0 and -0 the first): the lanes find the value, and
 * a zero's sign is the first zero's. */
VEC_DECLARE(double, vm_largest, (const double *x, int n));

/* key[i] = rule_key(z[i]) (sampler_rules.h). */
VEC_DECLARE(void, vm_keys, (const double *z, uint32_t *key, int n));

/* How many finite tokens rank before (zc, idc): larger z, or equal z and a lower id. */
VEC_DECLARE(int, vm_count_before, (const double *z, int n, double zc, int idc));

/* Marks every kept token (mark == kept) that ranks after (zc, idc) -- or,
 * with keep_ties, every one with z below zc -- as cut. */
VEC_DECLARE(void, vm_cut_marks,
            (const double *z, uint8_t *mark, int n, double zc, int idc, int keep_ties, uint8_t kept,
             uint8_t cut));

/* Min-p on the kept tokens (mark == kept): z - max at or above bar keeps
 * (rule_min_p_keeps), below it cuts. */
VEC_DECLARE(void, vm_bar_marks,
            (const double *z, uint8_t *mark, int n, double max, double bar, uint8_t kept,
             uint8_t cut));

/* The ids i in [lo, hi) with mark[i] == kept, into out; returns how many. */
int vm_collect(const uint8_t *mark, int lo, int hi, uint8_t kept, int *out);

#endif
