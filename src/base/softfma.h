/* softfma.h - a * b + c rounded once, without a fused multiply-add
 * instruction and without the C library: what the baseline x86-64 build
 * (no FMA) computes where the other builds have the instruction, so that
 * every build gives the same bits without a call to libm's fma for each
 * element (which is a software routine on such a CPU).
 *
 * soft_fmaf: the product of two floats is exact in double (24 + 24 bits),
 * so the sum is the only rounding; it is taken in double and rounded to
 * odd (when inexact, the last bit of the double is forced to 1, the exact
 * remainder telling which neighbour), then to float. Rounding to odd at 53
 * bits and then to nearest at 24 is the one rounding to nearest at 24
 * (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums:
 * proved algorithms using rounding to odd", IEEE TC 2008: two extra bits
 * suffice), float subnormals included.
 *
 * soft_fma: the exact product as a sum of two doubles (Dekker's product on
 * Veltkamp's halves), c added to its low part and the high part by exact
 * two-sums, the two low remainders added with rounding to odd, and that
 * added last with rounding to nearest: the same paper's emulated FMA. It is
 * exact when the result is zero or normal and the product does not
 * overflow (below 2^1020, say), infinities and NaNs as the instruction
 * gives them; a product too small for its low half to be exact is scaled
 * by 2^600 first (with c, when c is small too: scaling is exact, and a
 * normal result scales back exactly), an operand too large to split is
 * split scaled down. tests/check_softfma.c holds both to the instruction on
 * millions of operands. */
#ifndef LOGITLAB_SOFTFMA_H
#define LOGITLAB_SOFTFMA_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* s + r == x + y exactly, s = x + y rounded (Knuth's two-sum: no order
 * between |x| and |y| needed). */
static inline double softfma_two_sum(double x, double y, double *r)
{
    double s = x + y, yy = s - x;
    *r = (x - (s - yy)) + (y - yy);
    return s;
}

/* s, which x + y rounded to nearest gave with remainder r (s + r exact),
 * rounded to odd instead: s itself when exact or odd (or a NaN), else its
 * neighbour on r's side (one step of the bits: toward zero when r's sign is
 * not s's). */
static inline double softfma_to_odd(double s, double r)
{
    if (!(r < 0.0 || r > 0.0)) /* exact, or a NaN, whose bits stay */
        return s;
    uint64_t bits;
    memcpy(&bits, &s, sizeof bits);
    if ((r < 0.0) != (s < 0.0))
        bits -= 1; /* s was rounded away from zero: the neighbour toward it */
    bits |= 1;
    memcpy(&s, &bits, sizeof s);
    return s;
}

static inline float soft_fmaf(float a, float b, float c)
{
    double p = (double)a * (double)b, r;
    double s = softfma_two_sum(p, (double)c, &r);
    if (!isfinite(s)) /* an infinity or a NaN among the operands */
        return (float)s;
    return (float)softfma_to_odd(s, r);
}

/* a = hi + lo, hi its top 26 bits (Veltkamp's split); an a of 2^995 or
 * more is split scaled down by 2^28, so that 2^27 a cannot overflow (the
 * scalings are exact). */
static inline double softfma_split(double a, double *lo)
{
    const double split = 134217729.0; /* 2^27 + 1: halves of 26 and 27 bits */
    double s = fabs(a) >= 0x1p995 ? 0x1p-28 : 1.0, as = a * s;
    double c = split * as, hi = (c - (c - as)) / s;
    *lo = a - hi;
    return hi;
}

/* hi + lo == a * b exactly (Dekker's product; no underflow of lo, no
 * overflow of the partial products). */
static inline double softfma_product(double a, double b, double *lo)
{
    double al, bl, ah = softfma_split(a, &al), bh = softfma_split(b, &bl);
    double hi = a * b;
    *lo = ((ah * bh - hi) + ah * bl + al * bh) + al * bl;
    return hi;
}

/* The emulated FMA on operands whose product's low half is exact. */
static inline double softfma_core(double a, double b, double c)
{
    double ul, tl, vl;
    double uh = softfma_product(a, b, &ul);
    double th = softfma_two_sum(c, ul, &tl);
    double vh = softfma_two_sum(uh, th, &vl);
    double zr;
    double z = softfma_two_sum(tl, vl, &zr);
    return vh + softfma_to_odd(z, zr);
}

static inline double soft_fma(double a, double b, double c)
{
    if (isfinite(a) && isfinite(b) && !isfinite(c))
        return c; /* an infinite or NaN c, whatever the (finite) product */
    double p = a * b;
    if (!isfinite(p) || !isfinite(c) || a == 0.0 || b == 0.0)
        return p + c; /* what the fused operation gives there too */
    if (fabs(p) >= 0x1p-960)
        return softfma_core(a, b, c);
    /* A product this small (its low half would be subnormal): against a c
     * of 2^-900 or more it is far below half of c's last place, and c is the
     * result; else everything is scaled up, which is exact. */
    if (fabs(c) >= 0x1p-900)
        return c;
    return softfma_core(a * 0x1p600, b, c * 0x1p600) * 0x1p-600;
}

/* fmaf and fma where the build has the instruction (the compiler says so
 * by __FP_FAST_FMAF, __FP_FAST_FMA: ARM64, or an x86-64 build for FMA),
 * the emulation above where it would be a call to the C library. */
#ifdef __FP_FAST_FMAF
#define SOFTFMA_FMAF(a, b, c) fmaf(a, b, c)
#else
#define SOFTFMA_FMAF(a, b, c) soft_fmaf(a, b, c)
#endif
#ifdef __FP_FAST_FMA
#define SOFTFMA_FMA(a, b, c) fma(a, b, c)
#else
#define SOFTFMA_FMA(a, b, c) soft_fma(a, b, c)
#endif

#endif
