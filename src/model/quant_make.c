/* quant_make.c - float values to blocks, the way ggml's reference
 * quantizers (quantize_row_*_ref) do it, so that the tests' GGUF writer
 * makes the files llama.cpp's own tools would: the same choices of scale,
 * the same roundings. The K types search for each sub-block's scale (and
 * minimum) by weighted least squares over a few candidate steps, then store
 * those scales in six or eight bits and round every value again against the
 * scales as stored, so that the stored integers suit the stored scales.
 * Rounding to an integer is to nearest, ties to even (rintf in the
 * default mode), as ggml's nearest_int for the magnitudes that reach it. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "model/quant_int.h"

/* Every float operation rounds on its own, as in ggml's C reference (gcc
 * in C11 mode never fuses a * b + c; clang would, unless told). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

void quant_make_q8_0(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SMALL; b++, in += QK_SMALL, out += Q8_0_BYTES) {
        float amax = 0.0f;
        for (int j = 0; j < QK_SMALL; j++)
            if (fabsf(in[j]) > amax)
                amax = fabsf(in[j]);
        float d = amax / 127, id = d != 0.0f ? 1.0f / d : 0.0f;
        quant_put_f16(out, d);
        /* roundf: halves away from zero, as ggml's Q8_0 (not nearest_int). */
        for (int j = 0; j < QK_SMALL; j++)
            out[2 + j] = (unsigned char)(int8_t)quant_clamp_int(roundf(in[j] * id), -128, 127);
    }
}

/* Q4_0's scale is the value of largest magnitude over -8, so that value
 * becomes exactly -8 and the other sign reaches +7 (+8 is clamped). */
void quant_make_q4_0(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SMALL; b++, in += QK_SMALL, out += Q4_0_BYTES) {
        float d = quant_widest(in, QK_SMALL) / -8, id = d != 0.0f ? 1.0f / d : 0.0f;
        quant_put_f16(out, d);
        for (int j = 0; j < QK_SMALL / 2; j++) {
            int lo =
                quant_clamp_int(in[j] * id + 8.5f, 0, 15); /* truncation after +0.5: rounding */
            int hi = quant_clamp_int(in[j + 16] * id + 8.5f, 0, 15);
            out[2 + j] = (unsigned char)(lo | (hi << 4));
        }
    }
}

/* Q5_0 and Q5_1: value j's low four bits in byte j % 16 (low nibble for j <
 * 16, high for j >= 16), its fifth bit at bit j of the little-endian word qh. */
static void put_five_bits(const int *q, unsigned char *qh, unsigned char *qs)
{
    uint32_t h = 0;
    for (int j = 0; j < 16; j++) {
        qs[j] = (uint8_t)((q[j] & 15) | ((q[j + 16] & 15) << 4));
        h |= (uint32_t)(q[j] >> 4) << j | (uint32_t)(q[j + 16] >> 4) << (j + 16);
    }
    for (int k = 0; k < 4; k++)
        qh[k] = (uint8_t)(h >> (8 * k));
}

/* Q5_0: as Q4_0 with 32 levels: d = the value of largest magnitude over
 * -16, n = trunc(x / d + 16.5), at most 31. */
void quant_make_q5_0(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SMALL; b++, in += QK_SMALL, out += Q5_0_BYTES) {
        float d = quant_widest(in, QK_SMALL) / -16, id = d != 0.0f ? 1.0f / d : 0.0f;
        int q[QK_SMALL];
        quant_put_f16(out, d);
        for (int j = 0; j < QK_SMALL; j++)
            q[j] = quant_clamp_int(in[j] * id + 16.5f, 0, 31);
        put_five_bits(q, out + 2, out + 6);
    }
}

/* Q4_1 and Q5_1 (d and m at dm): the block's range split in nmax steps, d
 * = (max - min) / nmax and m = min, each value's number trunc((x - min) / d
 * + 0.5), against d and min before they are rounded to f16, as ggml does. */
static void affine_block(const float *x, int nmax, unsigned char *dm, int *q)
{
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < QK_SMALL; j++) {
        lo = x[j] < lo ? x[j] : lo;
        hi = x[j] > hi ? x[j] : hi;
    }
    float d = (hi - lo) / (float)nmax, id = d != 0.0f ? 1.0f / d : 0.0f;
    quant_put_f16(dm, d);
    quant_put_f16(dm + 2, lo);
    for (int j = 0; j < QK_SMALL; j++)
        q[j] = quant_clamp_int((x[j] - lo) * id + 0.5f, 0, nmax);
}

void quant_make_q4_1(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SMALL; b++, in += QK_SMALL, out += Q4_1_BYTES) {
        int q[QK_SMALL];
        affine_block(in, 15, out, q);
        for (int j = 0; j < QK_SMALL / 2; j++)
            out[4 + j] = (uint8_t)(q[j] | (q[j + 16] << 4));
    }
}

void quant_make_q5_1(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SMALL; b++, in += QK_SMALL, out += Q5_1_BYTES) {
        int q[QK_SMALL];
        affine_block(in, 31, out, q);
        put_five_bits(q, out + 4, out + 8);
    }
}

/* How far a fitted value is from its input: squared, or absolute (mad). */
static float miss(float diff, int mad)
{
    return mad ? fabsf(diff) : diff * diff;
}

/* The search of one K sub-block (ggml's make_qkx2_quants): x[0..n) as
 * scale * L - m with L in [0, nmax] and m >= 0, minimizing the w-weighted
 * squared (Q4_K, Q5_K) or absolute (mad: Q2_K) error. It starts from the
 * min..max range, then tries nstep + 1 other steps (nmax + rmin + 0.1 k
 * over the range), each with its least squares scale and offset, keeping
 * the best. Returns the scale, *m_out = m. */
static float fit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L, float *m_out,
                        float rmin, int nstep, int mad)
{
    float lo = x[0], hi = x[0], sum_w = w[0], sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (lo > 0)
        lo = 0; /* the offset never goes above zero: m >= 0 */
    if (hi == lo) {
        memset(L, 0, (size_t)n);
        *m_out = -lo;
        return 0.0f;
    }
    float iscale = nmax / (hi - lo), scale = 1 / iscale, best = 0.0f;
    for (int i = 0; i < n; i++) {
        L[i] = (uint8_t)quant_nearest(iscale * (x[i] - lo), 0, nmax);
        best += w[i] * miss(scale * L[i] + lo - x[i], mad);
    }
    uint8_t aux[QK_SUPER];
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + 0.1f * is + nmax) / (hi - lo);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; i++) {
            int l = quant_nearest(iscale * (x[i] - lo), 0, nmax);
            aux[i] = (uint8_t)l;
            sum_l += w[i] * l;
            sum_l2 += w[i] * l * l;
            sum_xl += w[i] * l * x[i];
        }
        float det = sum_w * sum_l2 - sum_l * sum_l;
        if (!(det > 0))
            continue;
        float s = (sum_w * sum_xl - sum_x * sum_l) / det;
        float o = (sum_l2 * sum_x - sum_l * sum_xl) / det;
        if (o > 0) { /* a positive offset is not storable: refit the scale alone */
            o = 0;
            s = sum_xl / sum_l2;
        }
        float err = 0.0f;
        for (int i = 0; i < n; i++) {
            err += w[i] * miss(s * aux[i] + o - x[i], mad);
        }
        if (err < best) {
            memcpy(L, aux, (size_t)n);
            best = err;
            scale = s;
            lo = o;
        }
    }
    *m_out = -lo;
    return scale;
}

/* A six-bit field from a rounded int, as ggml stores it (through a byte). */
static uint8_t six_bits(int v)
{
    uint8_t b = (uint8_t)v;
    return b < 63 ? b : 63;
}

/* Q4_K and Q5_K: the eight sub-blocks' fits, their scales and minimums in
 * six bits against d = max scale / 63 and dmin = max min / 63 (d, dmin and
 * the 12 scale bytes of blk), then L[0..256) again against what is stored. */
static void k_block(const float *x, int nmax, float rmin, int nstep, unsigned char *blk, uint8_t *L)
{
    float scales[8], mins[8], w[32], max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < 8; j++) {
        const float *xj = x + 32 * j;
        float sum_x2 = 0.0f;
        for (int l = 0; l < 32; l++)
            sum_x2 += xj[l] * xj[l];
        float av_x = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; l++)
            w[l] = av_x + fabsf(xj[l]); /* larger values weigh more */
        scales[j] = fit_affine(32, nmax, xj, w, L + 32 * j, &mins[j], rmin, nstep, 0);
        max_scale = scales[j] > max_scale ? scales[j] : max_scale;
        max_min = mins[j] > max_min ? mins[j] : max_min;
    }
    float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.0f;
    float inv_min = max_min > 0 ? 63.f / max_min : 0.0f;
    unsigned char *s = blk + QK_SC;
    for (int j = 0; j < 8; j++) {
        uint8_t ls = six_bits(quant_clamp_int(rintf(inv_scale * scales[j]), -255, 255));
        uint8_t lm = six_bits(quant_clamp_int(rintf(inv_min * mins[j]), -255, 255));
        if (j < 4) {
            s[j] = ls;
            s[j + 4] = lm;
        } else { /* the low four bits in byte j + 4, the top two above those of j - 4 and j */
            s[j + 4] = (uint8_t)((ls & 15) | ((lm & 15) << 4));
            s[j - 4] |= (uint8_t)((ls >> 4) << 6);
            s[j] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    quant_put_f16(blk + QK_D, max_scale / 63.f);
    quant_put_f16(blk + QK_DMIN, max_min / 63.f);
    float d1[8], m1[8];
    quant_k_scales(s, quant_f16_at(blk + QK_D), quant_f16_at(blk + QK_DMIN), d1, m1);
    for (int j = 0; j < 8; j++) {
        if (d1[j] == 0.0f)
            continue; /* a zero scale: the fit's L stay (they multiply 0) */
        for (int i = 0; i < 32; i++)
            L[32 * j + i] = (uint8_t)quant_nearest((x[32 * j + i] + m1[j]) / d1[j], 0, nmax);
    }
}

void quant_make_q4_k(const float *in, unsigned char *out, int64_t n)
{
    uint8_t L[QK_SUPER];
    for (int64_t b = 0; b < n / QK_SUPER; b++, in += QK_SUPER, out += Q4_K_BYTES) {
        k_block(in, 15, -1.0f, 20, out, L);
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++)
                out[Q4_K_QS + 32 * c + l] = (uint8_t)(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
    }
}

void quant_make_q5_k(const float *in, unsigned char *out, int64_t n)
{
    uint8_t L[QK_SUPER];
    for (int64_t b = 0; b < n / QK_SUPER; b++, in += QK_SUPER, out += Q5_K_BYTES) {
        k_block(in, 31, -0.5f, 15, out, L);
        unsigned char *qh = out + Q5_K_QH, *qs = out + Q5_K_QS;
        memset(qh, 0, 32);
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++) {
                int a = L[64 * c + l], z = L[64 * c + 32 + l];
                qh[l] |= (uint8_t)(((a >> 4) << (2 * c)) | ((z >> 4) << (2 * c + 1)));
                qs[32 * c + l] = (uint8_t)((a & 15) | ((z & 15) << 4));
            }
    }
}

/* The weighted sums of one Q6_K candidate step: sum w x l and sum w l^2,
 * w = x^2, l the levels at inverse scale iscale. */
static void q6_sums(int n, int nmax, const float *x, float iscale, float *sumlx, float *suml2)
{
    float a = 0.0f, b = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = quant_nearest(iscale * x[i], -nmax, nmax - 1);
        float w = x[i] * x[i];
        a += w * x[i] * l;
        b += w * l * l;
    }
    *sumlx = a, *suml2 = b;
}

static void q6_levels(int n, int nmax, const float *x, float iscale, uint8_t *L)
{
    for (int i = 0; i < n; i++)
        L[i] = (uint8_t)(nmax + quant_nearest(iscale * x[i], -nmax, nmax - 1));
}

/* The search of one Q6_K group (ggml's make_qx_quants with x^2 weights): x
 * as scale * l, l in [-nmax, nmax - 1], first with the value of largest
 * magnitude at -nmax, then at -(nmax + 0.1 k) for k = -9 .. 9, keeping the
 * step whose least squares scale explains most (largest sumlx^2 / suml2).
 * L gets l + nmax. Returns the scale. */
static float fit_symmetric(int n, int nmax, const float *x, uint8_t *L)
{
    float max = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; i++)
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            max = x[i];
        }
    if (amax < QUANT_EPS_ZERO) {
        memset(L, 0, (size_t)n);
        return 0.0f;
    }
    float iscale = -nmax / max, sumlx, suml2;
    q6_sums(n, nmax, x, iscale, &sumlx, &suml2);
    q6_levels(n, nmax, x, iscale, L);
    float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f, best = scale * sumlx;
    for (int k = -9; k <= 9; k++) {
        if (k == 0)
            continue;
        iscale = -(nmax + 0.1f * k) / max;
        q6_sums(n, nmax, x, iscale, &sumlx, &suml2);
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            q6_levels(n, nmax, x, iscale, L);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

static void q6_k_block(const float *x, unsigned char *out)
{
    uint8_t L[QK_SUPER];
    float scales[16], max_scale = 0.0f, max_abs = 0.0f;
    for (int g = 0; g < 16; g++) {
        scales[g] = fit_symmetric(16, 32, x + 16 * g, L + 16 * g);
        if (fabsf(scales[g]) > max_abs) {
            max_abs = fabsf(scales[g]);
            max_scale = scales[g];
        }
    }
    memset(out, 0, Q6_K_BYTES);
    if (max_abs < QUANT_EPS_ZERO)
        return; /* all zero: d = 0 */
    float iscale = -128.f / max_scale;
    quant_put_f16(out + Q6_K_D, 1 / iscale);
    for (int g = 0; g < 16; g++)
        out[Q6_K_SC + g] = (unsigned char)(int8_t)quant_nearest(iscale * scales[g], -128, 127);
    float d = quant_f16_at(out + Q6_K_D);
    for (int g = 0; g < 16; g++) {
        float dg = d * (float)(int8_t)out[Q6_K_SC + g];
        if (dg == 0.0f)
            continue;
        for (int i = 0; i < 16; i++)
            L[16 * g + i] = (uint8_t)(32 + quant_nearest(x[16 * g + i] / dg, -32, 31));
    }
    for (int h = 0; h < 2; h++) {
        unsigned char *ql = out + Q6_K_QL + 64 * h, *qh = out + Q6_K_QH + 32 * h;
        const uint8_t *Lh = L + 128 * h;
        for (int l = 0; l < 32; l++) {
            ql[l] = (uint8_t)((Lh[l] & 15) | ((Lh[l + 64] & 15) << 4));
            ql[l + 32] = (uint8_t)((Lh[l + 32] & 15) | ((Lh[l + 96] & 15) << 4));
            qh[l] = (uint8_t)((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) |
                              ((Lh[l + 96] >> 4) << 6));
        }
    }
}

void quant_make_q6_k(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SUPER; b++)
        q6_k_block(in + QK_SUPER * b, out + Q6_K_BYTES * b);
}

/* Q2_K and Q3_K: the 2-bit numbers L[0..256), value 128h + 32k + l at bits
 * 2k and 2k + 1 of qs[32h + l]. */
static void put_two_bits(const uint8_t *L, unsigned char *qs)
{
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 32; l++) {
            const uint8_t *v = L + 128 * h + l;
            qs[32 * h + l] = (uint8_t)(v[0] | (v[32] << 2) | (v[64] << 4) | (v[96] << 6));
        }
}

/* Q2_K: each group of 16 fitted as a K sub-block (numbers 0..3, weights
 * |x|, absolute error, 16 steps from nmax - 0.5), the sixteen scales and
 * minimums stored in four bits against d = max scale / 15 and dmin = max
 * minimum / 15, then every value rounded again against what was stored. */
static void q2_k_block(const float *x, unsigned char *out)
{
    uint8_t L[QK_SUPER];
    float scales[16], mins[16], w[16], max_scale = 0.0f, max_min = 0.0f;
    for (int g = 0; g < 16; g++) {
        const float *xg = x + 16 * g;
        for (int l = 0; l < 16; l++)
            w[l] = fabsf(xg[l]);
        scales[g] = fit_affine(16, 3, xg, w, L + 16 * g, &mins[g], -0.5f, 15, 1);
        max_scale = scales[g] > max_scale ? scales[g] : max_scale;
        max_min = mins[g] > max_min ? mins[g] : max_min;
    }
    float inv_scale = max_scale > 0 ? 15.f / max_scale : 0.0f;
    float inv_min = max_min > 0 ? 15.f / max_min : 0.0f;
    for (int g = 0; g < 16; g++)
        out[Q2_K_SC + g] = (uint8_t)(quant_nearest(inv_scale * scales[g], 0, 15) |
                                     (quant_nearest(inv_min * mins[g], 0, 15) << 4));
    quant_put_f16(out + Q2_K_D, max_scale > 0 ? max_scale / 15.f : 0.0f);
    quant_put_f16(out + Q2_K_DMIN, max_min > 0 ? max_min / 15.f : 0.0f);
    float d = quant_f16_at(out + Q2_K_D), dmin = quant_f16_at(out + Q2_K_DMIN);
    for (int g = 0; g < 16; g++) {
        int sc = out[Q2_K_SC + g];
        float dg = d * (float)(sc & 15), mg = dmin * (float)(sc >> 4);
        if (dg == 0.0f)
            continue; /* a zero scale: the fit's L stay (they multiply 0) */
        for (int i = 16 * g; i < 16 * g + 16; i++)
            L[i] = (uint8_t)quant_nearest((x[i] + mg) / dg, 0, 3);
    }
    put_two_bits(L, out + Q2_K_QS);
}

void quant_make_q2_k(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SUPER; b++)
        q2_k_block(in + QK_SUPER * b, out + Q2_K_BYTES * b);
}

/* The search of one Q3_K group of 16 (ggml's make_q3_quants): x as scale *
 * l, l in [-4, 3], first with the value of largest magnitude at -4; then
 * up to five rounds in which each value in turn tries the level the least
 * squares scale of the others asks for (weights x^2), kept when the fit
 * explains more (a larger sumlx^2 / suml2). L gets l + 4 (0 for a group of
 * zeros). Returns the least squares scale. */
static float fit_q3(const float *x, uint8_t *L)
{
    float max = quant_widest(x, 16);
    if (fabsf(max) < QUANT_EPS_ZERO) {
        memset(L, 0, 16);
        return 0.0f;
    }
    float iscale = -4.0f / max, sumlx = 0.0f, suml2 = 0.0f;
    int q[16];
    for (int i = 0; i < 16; i++) {
        float w = x[i] * x[i];
        q[i] = quant_nearest(iscale * x[i], -4, 3);
        sumlx += w * x[i] * q[i];
        suml2 += w * q[i] * q[i];
    }
    for (int round = 0, changed = 1; round < 5 && changed; round++) {
        changed = 0;
        for (int i = 0; i < 16; i++) {
            float w = x[i] * x[i], slx = sumlx - w * x[i] * q[i];
            if (!(slx > 0))
                continue;
            float sl2 = suml2 - w * q[i] * q[i];
            int l = quant_nearest(x[i] * sl2 / slx, -4, 3);
            if (l == q[i])
                continue;
            slx += w * x[i] * l;
            sl2 += w * l * l;
            if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                q[i] = l, sumlx = slx, suml2 = sl2;
                changed = 1;
            }
        }
    }
    for (int i = 0; i < 16; i++)
        L[i] = (uint8_t)(q[i] + 4);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* Q3_K: the sixteen groups' scales stored in six bits against d = (scale
 * of largest magnitude) / -32 (quant_q3_k_scale's packing), every value
 * rounded again against them; its third bit goes to hmask. */
static void q3_k_block(const float *x, unsigned char *out)
{
    uint8_t L[QK_SUPER];
    float scales[16], max_scale = 0.0f, amax = 0.0f;
    for (int g = 0; g < 16; g++) {
        scales[g] = fit_q3(x + 16 * g, L + 16 * g);
        if (fabsf(scales[g]) > amax) {
            amax = fabsf(scales[g]);
            max_scale = scales[g];
        }
    }
    memset(out, 0, Q3_K_BYTES); /* d = 0 when every scale is */
    unsigned char *sc = out + Q3_K_SC;
    if (max_scale != 0.0f) {
        float iscale = -32.f / max_scale;
        for (int g = 0; g < 16; g++) {
            int l = quant_nearest(iscale * scales[g], -32, 31) + 32;
            sc[g % 8] |= (uint8_t)((l & 15) << (g < 8 ? 0 : 4));
            sc[8 + g % 4] |= (uint8_t)((l >> 4) << (2 * (g / 4)));
        }
        quant_put_f16(out + Q3_K_D, 1 / iscale);
    }
    float d = quant_f16_at(out + Q3_K_D);
    for (int g = 0; g < 16; g++) {
        float dg = d * (float)quant_q3_k_scale(sc, g);
        if (dg == 0.0f)
            continue;
        for (int i = 16 * g; i < 16 * g + 16; i++)
            L[i] = (uint8_t)(quant_nearest(x[i] / dg, -4, 3) + 4);
    }
    for (int i = 0; i < QK_SUPER; i++)
        if (L[i] > 3) { /* the third bit of value i: bit i / 32 of hmask[i % 32] */
            out[Q3_K_HM + i % 32] |= (uint8_t)(1 << (i / 32));
            L[i] -= 4;
        }
    put_two_bits(L, out + Q3_K_QS);
}

void quant_make_q3_k(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SUPER; b++)
        q3_k_block(in + QK_SUPER * b, out + Q3_K_BYTES * b);
}
