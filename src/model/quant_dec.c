/* quant_dec.c - the portable decoders of one span (quant_int.h) for Q4_1,
 * Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K and IQ4_XS. Every build uses them: the
 * AVX2 one multiplies what they give with its own loops (quant.c's table),
 * so their values are the same bits on every path by construction.
 *
 * Each weight comes out as the float ggml's dequantize_row_* gives. The
 * scaled types (Q5_0, IQ4_NL, IQ4_XS, Q3_K) hand over a small integer per
 * value and one scale per group: the scale is an f16 (11 significant
 * bits) times a 6-bit number (at most 32 in magnitude: 5 bits) and the
 * weight that scale times a level of at most 127 (7 bits), which the 24
 * bits of a float hold, so no order of the products can round. The direct types (Q4_1, Q5_1, Q2_K)
 * add an offset: their product is exact as well, and the one rounding is that addition or
 * subtraction, done here as ggml does it, once. */
#include "model/quant_int.h"

static const signed char IQ4_LEVELS[16] = QUANT_IQ4_LEVELS_INIT;

/* The four small types put value j (j < 16) in the low nibble of their
 * byte j and value j + 16 in its high nibble; the five-bit ones add bit j
 * of the 32-bit word qh as 16 to value j. */
static void nibbles32(const unsigned char *qs, uint32_t qh, int *q)
{
    for (int j = 0; j < 16; j++) {
        q[j] = (qs[j] & 15) | (int)((qh >> j) & 1) << 4;
        q[j + 16] = (qs[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
    }
}

/* Q4_1: weight = d * n + m, n = 0..15 (d * n exact, the sum rounds once). */
void quant_dec_q4_1(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)scales;
    for (int b = 0; b < len / QK_SMALL; b++, p += Q4_1_BYTES) {
        float d = quant_f16_at(p), m = quant_f16_at(p + 2), *v = vals + QK_SMALL * b;
        int q[32];
        nibbles32(p + 4, 0, q);
        for (int j = 0; j < QK_SMALL; j++)
            v[j] = d * (float)q[j] + m;
    }
}

/* Q5_0: weight = d * (n - 16), n = 0..31. */
void quant_dec_q5_0(const unsigned char *p, int len, float *vals, float *scales)
{
    for (int b = 0; b < len / QK_SMALL; b++, p += Q5_0_BYTES) {
        int q[32];
        scales[b] = quant_f16_at(p);
        nibbles32(p + 6, quant_le32(p + 2), q);
        for (int j = 0; j < QK_SMALL; j++)
            vals[QK_SMALL * b + j] = (float)(q[j] - 16);
    }
}

/* Q5_1: weight = d * n + m, n = 0..31. */
void quant_dec_q5_1(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)scales;
    for (int b = 0; b < len / QK_SMALL; b++, p += Q5_1_BYTES) {
        float d = quant_f16_at(p), m = quant_f16_at(p + 2), *v = vals + QK_SMALL * b;
        int q[32];
        nibbles32(p + 8, quant_le32(p + 4), q);
        for (int j = 0; j < QK_SMALL; j++)
            v[j] = d * (float)q[j] + m;
    }
}

/* IQ4_NL: weight = d * level[n], the nibbles laid out as Q4_0's. */
void quant_dec_iq4_nl(const unsigned char *p, int len, float *vals, float *scales)
{
    for (int b = 0; b < len / QK_SMALL; b++, p += IQ4_NL_BYTES) {
        int q[32];
        scales[b] = quant_f16_at(p);
        nibbles32(p + 2, 0, q);
        for (int j = 0; j < QK_SMALL; j++)
            vals[QK_SMALL * b + j] = (float)IQ4_LEVELS[q[j]];
    }
}

/* Q2_K and Q3_K keep their 2-bit numbers alike: value 128h + 32k + l (h < 2,
 * k < 4, l < 32) is bits 2k and 2k + 1 of qs[32h + l]. */
static int two_bits(const unsigned char *qs, int i)
{
    int h = i / 128, k = (i % 128) / 32, l = i % 32;
    return (qs[32 * h + l] >> (2 * k)) & 3;
}

/* Q2_K: for the 16 values of group g, with sc[g]'s low nibble s and high
 * nibble m, weight = (d * s) * n - dmin * m, n = 0..3. */
void quant_dec_q2_k(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)len, (void)scales;
    float d = quant_f16_at(p + Q2_K_D), dmin = quant_f16_at(p + Q2_K_DMIN);
    for (int g = 0; g < 16; g++) {
        int sc = p[Q2_K_SC + g];
        float dl = d * (float)(sc & 15), ml = dmin * (float)(sc >> 4);
        for (int i = 16 * g; i < 16 * g + 16; i++)
            vals[i] = dl * (float)two_bits(p + Q2_K_QS, i) - ml;
    }
}

/* Q3_K's sixteen scales, 6 bits each in 12 bytes: the low four bits of
 * scale g are the low (g < 8) or high (g >= 8) nibble of byte g % 8, the
 * top two are bits 2(g / 4) and 2(g / 4) + 1 of byte 8 + g % 4. Stored
 * plus 32: the scale is d * (that - 32). */
int quant_q3_k_scale(const unsigned char *s, int g)
{
    int low = (s[g % 8] >> (g < 8 ? 0 : 4)) & 15;
    int top = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
    return (low | top << 4) - 32;
}

/* Q3_K: the 2-bit number of value 128h + 32k + l, less 4 unless bit
 * 4h + k of hmask[l] is set: -4..3. */
void quant_dec_q3_k(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)len;
    float d = quant_f16_at(p + Q3_K_D);
    for (int g = 0; g < 16; g++)
        scales[g] = d * (float)quant_q3_k_scale(p + Q3_K_SC, g);
    for (int i = 0; i < QK_SUPER; i++) {
        int h = i / 128, k = (i % 128) / 32, l = i % 32;
        int high = (p[Q3_K_HM + l] >> (4 * h + k)) & 1;
        vals[i] = (float)(two_bits(p + Q3_K_QS, i) - (high ? 0 : 4));
    }
}

/* IQ4_XS: eight sub-blocks of 32, each an IQ4_NL block without its own d:
 * sub-block b's 6-bit scale has its low four bits in nibble b % 2 of
 * sc_l[b / 2] and its top two at bit 2b of sc_h, stored plus 32; its
 * 16 bytes of indices follow Q4_0's nibble order. */
void quant_dec_iq4_xs(const unsigned char *p, int len, float *vals, float *scales)
{
    (void)len;
    float d = quant_f16_at(p);
    for (int b = 0; b < 8; b++) {
        int q[32];
        scales[b] = d * (float)quant_iq4_xs_scale(p, b);
        nibbles32(p + IQ4_XS_QS + 16 * b, 0, q);
        for (int j = 0; j < QK_SMALL; j++)
            vals[QK_SMALL * b + j] = (float)IQ4_LEVELS[q[j]];
    }
}
