/* quant_make.c - float values to blocks, the way ggml's reference
 * quantizers (quantize_row_*_ref) do it, so that the tests' GGUF writer
 * makes the files llama.cpp's own tools would: the same choices of scale,
 * the same roundings. The K types search for each sub-block's scale (and
 * minimum) by weighted least squares over a few candidate steps, then store
 * those scales in six or eight bits and round every value again against the
 * scales as stored, so that the stored integers suit the stored scales.
 * Rounding to an integer is to nearest, ties to even (rintf in the
 * default mode), as ggml's nearest_int for the magnitudes that reach it. */
#include <math.h>
#include <string.h>

#include "model/quant_int.h"

/* Every float operation rounds on its own, as in ggml's C reference (gcc
 * in C11 mode never fuses a * b + c; clang would, unless told). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define EPS_ZERO 1e-15f /* a group whose largest magnitude is below this is all zero */

static void put_f16(unsigned char *p, float f)
{
    uint16_t h = quant_f32_to_f16(f);
    p[0] = (unsigned char)h;
    p[1] = (unsigned char)(h >> 8);
}

static float stored_f16(const unsigned char *p)
{
    return quant_f16_to_f32(quant_le16(p));
}

/* v (already an integer value, or close) clamped to [lo, hi] and truncated;
 * a NaN gives lo, so that no float reaches an int out of its range. */
static int clamp_int(float v, int lo, int hi)
{
    if (v >= (float)hi)
        return hi;
    return v > (float)lo ? (int)v : lo;
}

static int nearest(float v, int lo, int hi)
{
    return clamp_int(rintf(v), lo, hi);
}

void quant_make_q8_0(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SMALL; b++, in += QK_SMALL, out += Q8_0_BYTES) {
        float amax = 0.0f;
        for (int j = 0; j < QK_SMALL; j++)
            if (fabsf(in[j]) > amax)
                amax = fabsf(in[j]);
        float d = amax / 127, id = d != 0.0f ? 1.0f / d : 0.0f;
        put_f16(out, d);
        /* roundf: halves away from zero, as ggml's Q8_0 (not nearest_int). */
        for (int j = 0; j < QK_SMALL; j++)
            out[2 + j] = (unsigned char)(int8_t)clamp_int(roundf(in[j] * id), -128, 127);
    }
}

/* Q4_0's scale is the value of largest magnitude over -8, so that value
 * becomes exactly -8 and the other sign reaches +7 (+8 is clamped). */
void quant_make_q4_0(const float *in, unsigned char *out, int64_t n)
{
    for (int64_t b = 0; b < n / QK_SMALL; b++, in += QK_SMALL, out += Q4_0_BYTES) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < QK_SMALL; j++)
            if (fabsf(in[j]) > amax) {
                amax = fabsf(in[j]);
                max = in[j];
            }
        float d = max / -8, id = d != 0.0f ? 1.0f / d : 0.0f;
        put_f16(out, d);
        for (int j = 0; j < QK_SMALL / 2; j++) {
            int lo = clamp_int(in[j] * id + 8.5f, 0, 15); /* truncation after +0.5: rounding */
            int hi = clamp_int(in[j + 16] * id + 8.5f, 0, 15);
            out[2 + j] = (unsigned char)(lo | (hi << 4));
        }
    }
}

/* The search of one K sub-block (ggml's make_qkx2_quants): x[0..n) as
 * scale * L - m with L in [0, nmax] and m >= 0, minimizing the w-weighted
 * squared error. It starts from the min..max range, then tries nstep + 1
 * other steps (nmax + rmin + 0.1 k over the range), each with its least
 * squares scale and offset, keeping the best. Returns the scale, *m_out = m. */
static float fit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L, float *m_out,
                        float rmin, int nstep)
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
        L[i] = (uint8_t)nearest(iscale * (x[i] - lo), 0, nmax);
        float diff = scale * L[i] + lo - x[i];
        best += w[i] * (diff * diff);
    }
    uint8_t aux[QK_SUPER];
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + 0.1f * is + nmax) / (hi - lo);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; i++) {
            int l = nearest(iscale * (x[i] - lo), 0, nmax);
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
            float diff = s * aux[i] + o - x[i];
            err += w[i] * (diff * diff);
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
        scales[j] = fit_affine(32, nmax, xj, w, L + 32 * j, &mins[j], rmin, nstep);
        max_scale = scales[j] > max_scale ? scales[j] : max_scale;
        max_min = mins[j] > max_min ? mins[j] : max_min;
    }
    float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.0f;
    float inv_min = max_min > 0 ? 63.f / max_min : 0.0f;
    unsigned char *s = blk + QK_SC;
    for (int j = 0; j < 8; j++) {
        uint8_t ls = six_bits(clamp_int(rintf(inv_scale * scales[j]), -255, 255));
        uint8_t lm = six_bits(clamp_int(rintf(inv_min * mins[j]), -255, 255));
        if (j < 4) {
            s[j] = ls;
            s[j + 4] = lm;
        } else { /* the low four bits in byte j + 4, the top two above those of j - 4 and j */
            s[j + 4] = (uint8_t)((ls & 15) | ((lm & 15) << 4));
            s[j - 4] |= (uint8_t)((ls >> 4) << 6);
            s[j] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    put_f16(blk + QK_D, max_scale / 63.f);
    put_f16(blk + QK_DMIN, max_min / 63.f);
    float d1[8], m1[8];
    quant_k_scales(s, stored_f16(blk + QK_D), stored_f16(blk + QK_DMIN), d1, m1);
    for (int j = 0; j < 8; j++) {
        if (d1[j] == 0.0f)
            continue; /* a zero scale: the fit's L stay (they multiply 0) */
        for (int i = 0; i < 32; i++)
            L[32 * j + i] = (uint8_t)nearest((x[32 * j + i] + m1[j]) / d1[j], 0, nmax);
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
        int l = nearest(iscale * x[i], -nmax, nmax - 1);
        float w = x[i] * x[i];
        a += w * x[i] * l;
        b += w * l * l;
    }
    *sumlx = a, *suml2 = b;
}

static void q6_levels(int n, int nmax, const float *x, float iscale, uint8_t *L)
{
    for (int i = 0; i < n; i++)
        L[i] = (uint8_t)(nmax + nearest(iscale * x[i], -nmax, nmax - 1));
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
    if (amax < EPS_ZERO) {
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
    if (max_abs < EPS_ZERO)
        return; /* all zero: d = 0 */
    float iscale = -128.f / max_scale;
    put_f16(out + Q6_K_D, 1 / iscale);
    for (int g = 0; g < 16; g++)
        out[Q6_K_SC + g] = (unsigned char)(int8_t)nearest(iscale * scales[g], -128, 127);
    float d = stored_f16(out + Q6_K_D);
    for (int g = 0; g < 16; g++) {
        float dg = d * (float)(int8_t)out[Q6_K_SC + g];
        if (dg == 0.0f)
            continue;
        for (int i = 0; i < 16; i++)
            L[16 * g + i] = (uint8_t)(32 + nearest(x[16 * g + i] / dg, -32, 31));
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
