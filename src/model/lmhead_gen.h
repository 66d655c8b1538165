/* lmhead_gen.h - the synthetic LM head's weights, one Philox draw per four
 * weights, shared by the CPU and the CUDA code (HOSTDEV) so that both build
 * bit-identical bf16 weights from the same seed.
 *
 * Weight (row, col) comes from word col % 4 of Philox4x32-10 keyed by the
 * seed, counter (row, col / 4, LM_WEIGHT_TAG, 0). The word's three 10-bit
 * fields add to s in [0, 3069]; v = 2s - 3069 is symmetric about 0 with a
 * standard deviation of about 1024 and a nearly normal shape (the sum of
 * three uniforms). The weight is the bf16 nearest to v * scale, with scale
 * chosen on the host (lm_weight_scale) so that a row's dot product with a
 * vector of root mean square 1 has a standard deviation of LM_LOGIT_SPREAD.
 */
#ifndef LOGITLAB_LMHEAD_GEN_H
#define LOGITLAB_LMHEAD_GEN_H

#include <stdint.h>
#include <string.h>

#include "core/philox.h"

#define LM_WEIGHT_TAG   0x4C4D4857u /* "LMHW" */
#define LM_V_SPREAD     1024.0      /* standard deviation of v */
#define LM_LOGIT_SPREAD 2.5         /* of a logit of a token the hidden vector does not point at */

/* bf16: the top 16 bits of a float, rounded to nearest even. */
static inline HOSTDEV uint16_t lm_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline HOSTDEV float lm_float(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The weight a Philox output word x gives: the bf16 nearest to
 * (2s - 3069) * scale, s the sum of x's three 10-bit fields. */
static inline HOSTDEV uint16_t lm_weight(uint32_t x, float scale)
{
    int s = (int)(x & 1023u) + (int)((x >> 10) & 1023u) + (int)((x >> 20) & 1023u);
    return lm_bf16((float)(2 * s - 3069) * scale);
}

/* The four weights of row, columns 4 * col4 .. 4 * col4 + 3. */
static inline HOSTDEV void lm_weights4(uint64_t seed, uint32_t row, uint32_t col4, float scale,
                                       uint16_t out[4])
{
    struct philox4x32 c = { { row, col4, LM_WEIGHT_TAG, 0u } };
    struct philox4x32 r = philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
    for (int w = 0; w < 4; w++)
        out[w] = lm_weight(r.v[w], scale);
}

#endif
