/* fastexp.h - e^x in double, the same bits on every CPU and on the GPU:
 *
 *   x = k ln2/16 + r, |r| <= ln2/32 (Cody-Waite: ln2/16 split in two so
 *   that k times its first part is exact);
 *   e^x = 2^(k >> 4) * T[k & 15] * e^r, T[j] = 2^(j/16) rounded;
 *   e^r - 1 = r + r^2 q(r), q of degree 4 fitted (Chebyshev, in 50 digits)
 *   to (e^r - 1 - r)/r^2: its own error is below 3e-17;
 *   the result as t + t (e^r - 1), t = T[k & 15] 2^(k >> 4), so that the
 *   one large rounding is the last addition.
 *
 * Within 1 ulp of the C library's exp over the range the sampler feeds it
 * (x <= 0; checked in check_fast.c against exp on a million points). Below
 * -708 (where exp is subnormal) it gives 0, which no sum in the sampler can
 * notice; above 709 it is clamped. Every a * b + c of it is one fused
 * multiply-add, written out (fma: one rounding, as IEEE 754 defines it, on
 * every CPU and GPU), and every other operation is rounded apart: the CPU
 * builds it under ISO C (no contraction of its own), the GPU twin
 * (gpu/backend_cuda.cu) writes the same __fma_rn and rounds each other
 * product explicitly. The fused form takes nine operations fewer in
 * twenty-four, which is a third of the sampler's time on a full row; a CPU
 * without FMA gets the same bits from the C library's fma, slowly.
 *
 * fast_exp is the specification; fast_exp8 (GCC and Clang on the CPU) does
 * the same arithmetic on eight lanes at once, with the table lookup as one
 * permutation of two vector registers, which a compiler cannot find by
 * itself in the scalar code (it would load each lane apart); fast_exp4
 * (GCC) the same on four, for AVX2's registers.
 */
#ifndef LOGITLAB_FASTEXP_H
#define LOGITLAB_FASTEXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define FASTEXP_K_PER_LN2 0x1.71547652b82fep+4 /* 16 / ln 2 */
#define FASTEXP_STEP_HI   0x1.62e42fee00000p-5 /* ln2/16 in 32 bits: k * STEP_HI is exact */
#define FASTEXP_STEP_LO   0x1.a39ef35793c76p-37
#define FASTEXP_ROUND     6755399441055744.0 /* 1.5 * 2^52: adding it rounds to an integer */
#define FASTEXP_LOW       (-708.0)
#define FASTEXP_HIGH      709.0
#define FASTEXP_Q0        0x1.0000000000000p-1
#define FASTEXP_Q1        0x1.55555554dd44dp-3
#define FASTEXP_Q2        0x1.55555555194d2p-5
#define FASTEXP_Q3        0x1.11120af701debp-7
#define FASTEXP_Q4        0x1.6c17bb51f236dp-10

/* T[j] = 2^(j/16), rounded to nearest. */
#define FASTEXP_TABLE                                                                              \
    {                                                                                              \
        0x1.0000000000000p+0, 0x1.0b5586cf9890fp+0, 0x1.172b83c7d517bp+0, 0x1.2387a6e756238p+0,    \
            0x1.306fe0a31b715p+0, 0x1.3dea64c123422p+0, 0x1.4bfdad5362a27p+0,                      \
            0x1.5ab07dd485429p+0, 0x1.6a09e667f3bcdp+0, 0x1.7a11473eb0187p+0,                      \
            0x1.8ace5422aa0dbp+0, 0x1.9c49182a3f090p+0, 0x1.ae89f995ad3adp+0,                      \
            0x1.c199bdd85529cp+0, 0x1.d5818dcfba487p+0, 0x1.ea4afa2a490dap+0                       \
    }

#ifndef __CUDACC__
#include "base/softfma.h"
#include "core/vecmath.h" /* the vector types */

static const double FASTEXP_T[16] = FASTEXP_TABLE;

static inline double fast_exp(double x)
{
    double xc = x < FASTEXP_LOW ? FASTEXP_LOW : x > FASTEXP_HIGH ? FASTEXP_HIGH : x;
    double kd = fma(xc, FASTEXP_K_PER_LN2, FASTEXP_ROUND);
    uint64_t kbits;
    memcpy(&kbits, &kd, sizeof kbits);
    kd -= FASTEXP_ROUND;
    double r = fma(kd, -FASTEXP_STEP_LO, fma(kd, -FASTEXP_STEP_HI, xc));
    double q = fma(FASTEXP_Q4, r, FASTEXP_Q3);
    q = fma(q, r, FASTEXP_Q2);
    q = fma(q, r, FASTEXP_Q1);
    q = fma(q, r, FASTEXP_Q0);
    double p = fma(r * r, q, r); /* e^r - 1 */
    /* The low 32 bits of kbits hold k modulo 2^32 (the rounding constant's
     * own mantissa bits are above them): its low 4 bits pick T[], and the
     * rest, shifted into T's exponent bits, add floor(k / 16) there (modulo
     * 2^64, where the 2^32 of a negative k vanishes). Unsigned throughout,
     * so that no shift is of a negative number. */
    uint64_t u = kbits & 0xFFFFFFFFu;
    double t = FASTEXP_T[u & 15];
    uint64_t tbits;
    memcpy(&tbits, &t, sizeof tbits);
    tbits += (u >> 4) << 52;
    memcpy(&t, &tbits, sizeof t);
    double y = fma(t, p, t);
    return x < FASTEXP_LOW ? 0.0 : y;
}

#ifdef VM_HAS_VEC
#define FASTEXP_HAS_VEC 1

/* base/softfma.h's emulated FMA, softfma_core operation for operation, on
 * eight lanes and without a branch (the rounding to odd by masks), for the
 * baseline build's exponentials, where every product is either at least
 * 2^-960 or far below half of c's last place (fast_exp8 says why), and
 * every operand below 2^995: no scaling is needed. */
static inline __attribute__((always_inline)) void fe_soft_fma8(vm_v8d *out, const vm_v8d *pa,
                                                               const vm_v8d *pb, const vm_v8d *pc)
{
    const vm_v8d split = (vm_v8d){ 0 } + 134217729.0, a = *pa, b = *pb, c = *pc;
    vm_v8d ca = split * a, cb = split * b;
    vm_v8d ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh;
    vm_v8d uh = a * b, ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl;
    vm_v8d th = c + ul, t2 = th - c, tl = (c - (th - t2)) + (ul - t2);
    vm_v8d vh = uh + th, v2 = vh - uh, vl = (uh - (vh - v2)) + (th - v2);
    vm_v8d z = tl + vl, z2 = z - tl, zr = (tl - (z - z2)) + (vl - z2);
    /* To odd: where zr is not 0 (nor a NaN, whose bits stay as they are),
     * one step toward zero when zr's sign is not z's, then the last bit
     * set. */
    vm_v8i inexact = (zr < 0.0) | (zr > 0.0), away = (zr < 0.0) ^ (z < 0.0);
    vm_v8i zb = (vm_v8i)z + (inexact & away); /* a true mask is -1 */
    zb |= inexact & 1;
    *out = vh + (vm_v8d)zb;
}

/* out = a * b + c rounded once, lane by lane (a statement: no vector
 * passes through a function's arguments): by the instruction, or with
 * soft (a constant where it is inlined) by the emulation above, the
 * baseline x86-64 build's, whose __builtin_fma is a call to libm. */
#define FE_FMA8(out, a, b, c)                                                                      \
    do {                                                                                           \
        if (soft) {                                                                                \
            fe_soft_fma8(&(out), &(a), &(b), &(c));                                                \
        } else {                                                                                   \
            for (int k_ = 0; k_ < 8; k_++)                                                         \
                (out)[k_] = __builtin_fma((a)[k_], (b)[k_], (c)[k_]);                              \
        }                                                                                          \
    } while (0)

/* The bits of FASTEXP_T[j] less j << 48 (check_fast.c checks them), for
 * fast_exp8: fast_exp's T[u & 15] + ((u >> 4) << 52) keeps only bits 0-15
 * of u, and modulo 2^64 that is T'[u & 15] + (u << 48), u & 15 placed at
 * bit 48 and taken away again by the table. So the vector code needs
 * neither of fast_exp's masks nor its right shift -- the permutation reads
 * the index's low four bits by itself -- three operations fewer in
 * twenty-two, and the same bits. */
static const uint64_t FASTEXP_T8_BITS[16] = {
    0x3ff0000000000000u, 0x3fefb5586cf9890fu, 0x3fef72b83c7d517bu, 0x3fef387a6e756238u,
    0x3fef06fe0a31b715u, 0x3feedea64c123422u, 0x3feebfdad5362a27u, 0x3feeab07dd485429u,
    0x3feea09e667f3bcdu, 0x3feea11473eb0187u, 0x3feeace5422aa0dbu, 0x3feec49182a3f090u,
    0x3feee89f995ad3adu, 0x3fef199bdd85529cu, 0x3fef5818dcfba487u, 0x3fefa4afa2a490dau,
};

/* out[0..8) = fast_exp(x[k] - shift), operation for operation, in vector
 * registers (pointers in and out, for the reason above), the table's
 * lookup as FASTEXP_T8_BITS says. in_range (a constant where it is
 * inlined) says that every x[k] - shift is known to lie in [FASTEXP_LOW,
 * FASTEXP_HIGH]: the clamps, which change nothing there, are left out (the
 * same bits, a fifth fewer operations). soft (a constant too): each fused
 * multiply-add emulated (FE_FMA8), the same bits; every result is zero or
 * normal, where the emulation is exact. */
static inline __attribute__((always_inline)) void fast_exp8(const double *x, double shift,
                                                            double *out, int in_range, int soft)
{
    const vm_v8d lo = { FASTEXP_LOW, FASTEXP_LOW, FASTEXP_LOW, FASTEXP_LOW,
                        FASTEXP_LOW, FASTEXP_LOW, FASTEXP_LOW, FASTEXP_LOW },
                 hi = { FASTEXP_HIGH, FASTEXP_HIGH, FASTEXP_HIGH, FASTEXP_HIGH,
                        FASTEXP_HIGH, FASTEXP_HIGH, FASTEXP_HIGH, FASTEXP_HIGH };
    vm_v8d v, t0, t1;
    memcpy(&v, x, sizeof v);
    memcpy(&t0, FASTEXP_T8_BITS, sizeof t0);
    memcpy(&t1, FASTEXP_T8_BITS + 8, sizeof t1);
    v -= shift;
    vm_v8i below = { 0 };
    vm_v8d xc = v;
    if (!in_range) {
        below = v < lo;
        xc = VM_SELECT(below, lo, VM_SELECT(v > hi, hi, v));
    }
    const vm_v8d K = (vm_v8d){ 0 } + FASTEXP_K_PER_LN2, RND = (vm_v8d){ 0 } + FASTEXP_ROUND,
                 HI = (vm_v8d){ 0 } - FASTEXP_STEP_HI, LO = (vm_v8d){ 0 } - FASTEXP_STEP_LO,
                 C4 = (vm_v8d){ 0 } + FASTEXP_Q4, C3 = (vm_v8d){ 0 } + FASTEXP_Q3,
                 C2 = (vm_v8d){ 0 } + FASTEXP_Q2, C1 = (vm_v8d){ 0 } + FASTEXP_Q1,
                 C0 = (vm_v8d){ 0 } + FASTEXP_Q0;
    vm_v8d kd, r0, r, q, p, y, rr;
    FE_FMA8(kd, xc, K, RND);
    vm_v8u u = (vm_v8u)kd;
    kd -= FASTEXP_ROUND;
    FE_FMA8(r0, kd, HI, xc);
    FE_FMA8(r, kd, LO, r0);
    FE_FMA8(q, C4, r, C3);
    FE_FMA8(q, q, r, C2);
    FE_FMA8(q, q, r, C1);
    FE_FMA8(q, q, r, C0);
    rr = r * r;
    FE_FMA8(p, rr, q, r);
    /* __builtin_shuffle takes each index modulo 16, as the permutation does;
     * clang (the fuzzing build) has no shuffle by indices known only at run
     * time, so it picks the same entries lane by lane. */
#ifdef __clang__
    vm_v8u tsel, b0 = (vm_v8u)t0, b1 = (vm_v8u)t1; /* the entries' bits */
    for (int i = 0; i < 8; i++)
        tsel[i] = (u[i] & 15) < 8 ? b0[u[i] & 7] : b1[u[i] & 7];
#else
    vm_v8u tsel = (vm_v8u)__builtin_shuffle(t0, t1, u);
#endif
    vm_v8u tbits = tsel + (u << 48);
    vm_v8d t = (vm_v8d)tbits;
    if (soft) {
        /* t (1 + p) as T[j] (1 + p) times 2^floor(k / 16), added to the
         * exponent's bits: the same bits, as every result is normal, and
         * T[j]'s product is large enough for the emulation (t's may not). */
        vm_v8u tj = tsel + ((u & 15u) << 48);
        vm_v8d yj;
        vm_v8d tjd = (vm_v8d)tj;
        fe_soft_fma8(&yj, &tjd, &p, &tjd);
        y = (vm_v8d)((vm_v8u)yj + (tbits - tj));
    } else {
        FE_FMA8(y, t, p, t);
    }
    if (!in_range)
        y = (vm_v8d)((vm_v8i)y & ~below);
    memcpy(out, &y, sizeof y);
}

#ifndef __clang__
#define FASTEXP_HAS_VEC4 1

/* FE_FMA8 on four lanes: gcc makes one vfmadd of a vector of four where
 * AVX2 runs it (of eight, it fuses the halves and then takes the result
 * apart lane by lane through memory). */
#define FE_FMA4(out, a, b, c)                                                                      \
    do {                                                                                           \
        for (int k_ = 0; k_ < 4; k_++)                                                             \
            (out)[k_] = __builtin_fma((a)[k_], (b)[k_], (c)[k_]);                                  \
    } while (0)

/* fast_exp8 on four lanes, operation for operation (the AVX2 build's,
 * whose registers hold four doubles), but the table's lookup: AVX2 has no
 * permutation of 64-bit lanes by a variable index, so each lane reads its
 * entry (FASTEXP_T8_BITS[u & 15]) apart. The same entry, so the same bits. */
static inline __attribute__((always_inline)) void fast_exp4(const double *x, double shift,
                                                            double *out, int in_range)
{
    const vm_v4d lo = (vm_v4d){ 0 } + FASTEXP_LOW, hi = (vm_v4d){ 0 } + FASTEXP_HIGH;
    vm_v4d v;
    memcpy(&v, x, sizeof v);
    v -= shift;
    vm_v4i below = { 0 };
    vm_v4d xc = v;
    if (!in_range) {
        below = v < lo;
        xc = VM_SELECT4(below, lo, VM_SELECT4(v > hi, hi, v));
    }
    const vm_v4d K = (vm_v4d){ 0 } + FASTEXP_K_PER_LN2, RND = (vm_v4d){ 0 } + FASTEXP_ROUND,
                 HI = (vm_v4d){ 0 } - FASTEXP_STEP_HI, LO = (vm_v4d){ 0 } - FASTEXP_STEP_LO,
                 C4 = (vm_v4d){ 0 } + FASTEXP_Q4, C3 = (vm_v4d){ 0 } + FASTEXP_Q3,
                 C2 = (vm_v4d){ 0 } + FASTEXP_Q2, C1 = (vm_v4d){ 0 } + FASTEXP_Q1,
                 C0 = (vm_v4d){ 0 } + FASTEXP_Q0;
    vm_v4d kd, r0, r, q, p, y, rr;
    FE_FMA4(kd, xc, K, RND);
    vm_v4u u = (vm_v4u)kd;
    kd -= FASTEXP_ROUND;
    FE_FMA4(r0, kd, HI, xc);
    FE_FMA4(r, kd, LO, r0);
    FE_FMA4(q, C4, r, C3);
    FE_FMA4(q, q, r, C2);
    FE_FMA4(q, q, r, C1);
    FE_FMA4(q, q, r, C0);
    rr = r * r;
    FE_FMA4(p, rr, q, r);
    /* Each lane's entry loaded from the table by its own index: four scalar
     * loads, which run beside the vector work, where four permutations of
     * the table's halves and three blends (16 vector operations in all)
     * competed with it for the vector units (doc/benchmarks.md has the
     * timings; a gather was slower still). */
    vm_v4u tsel = { FASTEXP_T8_BITS[u[0] & 15], FASTEXP_T8_BITS[u[1] & 15],
                    FASTEXP_T8_BITS[u[2] & 15], FASTEXP_T8_BITS[u[3] & 15] };
    vm_v4u tbits = tsel + (u << 48);
    vm_v4d tv = (vm_v4d)tbits;
    FE_FMA4(y, tv, p, tv);
    if (!in_range)
        y = (vm_v4d)((vm_v4i)y & ~below);
    memcpy(out, &y, sizeof y);
}
#endif
#endif
#endif

#endif
