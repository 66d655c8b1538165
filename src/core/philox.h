/* philox.h - Philox4x32-10, the counter-based generator of Salmon et al.,
 * "Parallel Random Numbers: As Easy as 1, 2, 3" (SC'11).
 *
 * A counter-based generator is a pure function: four 32-bit counter words and
 * two 32-bit key words go in, four 32-bit words come out. No state is carried
 * from one call to the next, so the CPU and a GPU thread that compute the
 * same (counter, key) get the same bits, in any order and in parallel. That
 * is what makes "same seed, same token, on every backend" possible.
 *
 * logitlab keys it with the seed (low word, high word) and counts with
 * (step, row, draw index, 0); see philox_uniform(). Header only, so that gcc
 * and nvcc compile the very same lines (HOSTDEV marks them for both).
 */
#ifndef LOGITLAB_PHILOX_H
#define LOGITLAB_PHILOX_H

#include <stdint.h>

#ifdef __CUDACC__
#define HOSTDEV __host__ __device__
#else
#define HOSTDEV
#endif

/* The round multipliers and the Weyl key increments of Philox4x32. */
#define PHILOX_M0     0xD2511F53u
#define PHILOX_M1     0xCD9E8D57u
#define PHILOX_W0     0x9E3779B9u /* golden ratio */
#define PHILOX_W1     0xBB67AE85u /* sqrt(3) - 1 */
#define PHILOX_ROUNDS 10

struct philox4x32 {
    uint32_t v[4];
};

/* One Feistel-like round: two 32x32->64 multiplies, the high halves mixed
 * with the other counter words and the key. */
static inline HOSTDEV struct philox4x32 philox_round(struct philox4x32 c, uint32_t k0, uint32_t k1)
{
    uint64_t p0 = (uint64_t)PHILOX_M0 * c.v[0];
    uint64_t p1 = (uint64_t)PHILOX_M1 * c.v[2];
    struct philox4x32 r;
    r.v[0] = (uint32_t)(p1 >> 32) ^ c.v[1] ^ k0;
    r.v[1] = (uint32_t)p1;
    r.v[2] = (uint32_t)(p0 >> 32) ^ c.v[3] ^ k1;
    r.v[3] = (uint32_t)p0;
    return r;
}

/* Philox4x32-10 of counter ctr under key (k0, k1). */
static inline HOSTDEV struct philox4x32 philox4x32_10(struct philox4x32 ctr, uint32_t k0,
                                                      uint32_t k1)
{
    for (int i = 0; i < PHILOX_ROUNDS; i++) {
        if (i > 0) {
            k0 += PHILOX_W0;
            k1 += PHILOX_W1;
        }
        ctr = philox_round(ctr, k0, k1);
    }
    return ctr;
}

/* 2^-24: the spacing of the 24-bit grid that u lives on. Every such u is
 * exactly representable in float and double, so host and device agree. */
#define PHILOX_U_SCALE (1.0 / 16777216.0)

/* The u in [0, 1) of DESIGN.md section 2: the top 24 bits of the first output
 * word of Philox4x32-10 keyed by the seed, with counter (step, row, draw, 0);
 * the last counter word, 0 for every draw, numbers a stage's own coin. */
static inline HOSTDEV double philox_uniform_word3(uint64_t seed, uint32_t step, uint32_t row,
                                                  uint32_t draw, uint32_t word3)
{
    struct philox4x32 c = { { step, row, draw, word3 } };
    struct philox4x32 r = philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
    return (double)(r.v[0] >> 8) * PHILOX_U_SCALE;
}

static inline HOSTDEV double philox_uniform(uint64_t seed, uint32_t step, uint32_t row,
                                            uint32_t draw)
{
    return philox_uniform_word3(seed, step, row, draw, 0u);
}

#endif
