/* quant_make_iq.c - float values to IQ4_NL and IQ4_XS blocks, whose 4-bit
 * numbers index sixteen fixed levels (QUANT_IQ4_LEVELS_INIT) rather than
 * step evenly. Both follow the search llama-quantize runs without an
 * importance matrix (ggml's quantize_iq4_nl and quantize_iq4_xs): for each
 * group of 32 a least squares scale, weights x^2, tried from 16 starting
 * steps; IQ4_XS then stores the eight groups' scales in six bits against
 * one f16 and picks every level again against them. (For IQ4_NL this is
 * the search llama-quantize runs, not ggml's quantize_row_iq4_nl_ref, which
 * skips it.) */
#include <math.h>
#include <string.h>

#include "model/quant_int.h"

/* Every float operation rounds on its own, as in ggml's C reference (gcc
 * in C11 mode never fuses a * b + c; clang would, unless told). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

static const signed char LEVELS[16] = QUANT_IQ4_LEVELS_INIT;

/* The index of the level nearest x, the upper one on a tie; the end
 * levels for x beyond them. */
static int nearest_level(float x)
{
    if (x <= LEVELS[0])
        return 0;
    if (x >= LEVELS[15])
        return 15;
    int k = 1;
    while (x >= LEVELS[k])
        k++; /* now LEVELS[k - 1] <= x < LEVELS[k] */
    return x - LEVELS[k - 1] < LEVELS[k] - x ? k - 1 : k;
}

/* The least squares sums of a group of 32 whose values are mapped to
 * levels at inverse scale id: sum w q x and sum w q^2, w = x^2. */
static void level_sums(const float *x, float id, float *sqx, float *sq2)
{
    float a = 0.0f, b = 0.0f;
    for (int j = 0; j < 32; j++) {
        float q = LEVELS[nearest_level(id * x[j])], w = x[j] * x[j];
        a += w * q * x[j];
        b += w * q * q;
    }
    *sqx = a, *sq2 = b;
}

/* The scale of one group of 32 (0 for a group of zeros): first the step
 * that puts the value of largest magnitude at +127 steps, refitted; then
 * the steps that put it at -127 + k steps, k = -7 .. 7, each refitted,
 * keeping the one whose least squares scale explains most (largest
 * sqx^2 / sq2). */
static float fit_levels(const float *x)
{
    float max = quant_widest(x, 32);
    if (fabsf(max) < QUANT_EPS_ZERO)
        return 0.0f;
    float sqx, sq2;
    level_sums(x, 1 / (max / 127), &sqx, &sq2);
    float d = sq2 > 0 ? sqx / sq2 : 0.0f, best = d * sqx;
    for (int k = -7; k <= 7; k++) {
        level_sums(x, (float)(k + LEVELS[0]) / max, &sqx, &sq2);
        if (sq2 > 0 && sqx * sqx > best * sq2) {
            d = sqx / sq2;
            best = d * sqx;
        }
    }
    return d;
}

/* Sixteen bytes of indices for 32 values at inverse scale id: value j in
 * the low nibble of byte j, value j + 16 in its high nibble. */
static void put_levels(const float *x, float id, unsigned char *qs)
{
    for (int j = 0; j < 16; j++)
        qs[j] = (uint8_t)(nearest_level(id * x[j]) | (nearest_level(id * x[j + 16]) << 4));
}

/* IQ4_NL: the group's scale as d; the levels against it before its
 * rounding to f16, as ggml picks them. */
void quant_make_iq4_nl(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SMALL; b++, in += QK_SMALL, out += IQ4_NL_BYTES) {
        float d = fit_levels(in);
        quant_put_f16(out, d);
        put_levels(in, d != 0.0f ? 1 / d : 0.0f, out + 2);
    }
}

/* IQ4_XS: d = (scale of largest magnitude) / -32, each group's scale l
 * (-32..31) the nearest multiple of it, stored plus 32 (low four bits in
 * sc_l, top two in sc_h), and its levels against d * l. */
static void iq4_xs_block(const float *x, unsigned char *out)
{
    float scales[8], max_scale = 0.0f, amax = 0.0f;
    for (int b = 0; b < 8; b++) {
        scales[b] = fit_levels(x + 32 * b);
        if (fabsf(scales[b]) > amax) {
            amax = fabsf(scales[b]);
            max_scale = scales[b];
        }
    }
    memset(out, 0, IQ4_XS_BYTES);
    float d = -max_scale / 32, id = d != 0.0f ? 1 / d : 0.0f;
    quant_put_f16(out, d);
    unsigned sh = 0;
    for (int b = 0; b < 8; b++) {
        int l = quant_nearest(id * scales[b], -32, 31);
        float dl = d * (float)l;
        put_levels(x + 32 * b, dl != 0.0f ? 1 / dl : 0.0f, out + IQ4_XS_QS + 16 * b);
        l += 32;
        out[IQ4_XS_SL + b / 2] |= (uint8_t)((l & 15) << (4 * (b % 2)));
        sh |= (unsigned)(l >> 4) << (2 * b);
    }
    out[IQ4_XS_SH] = (uint8_t)sh;
    out[IQ4_XS_SH + 1] = (uint8_t)(sh >> 8);
}

void quant_make_iq4_xs(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SUPER; b++)
        iq4_xs_block(in + QK_SUPER * b, out + IQ4_XS_BYTES * b);
}
