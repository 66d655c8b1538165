/* philox_kat.h - the Philox4x32-10 known answers published with Random123
 * (its kat_vectors file), shared by the CPU test and the CUDA check.
 * Each row: counter[4], key[2], expected output[4]. */
#ifndef LOGITLAB_PHILOX_KAT_H
#define LOGITLAB_PHILOX_KAT_H

#include <stdint.h>

struct philox_kat {
    uint32_t ctr[4], key[2], out[4];
};

/* clang-format off */
#define PHILOX_KAT_ROWS                                                                      \
    { { 0x00000000, 0x00000000, 0x00000000, 0x00000000 }, { 0x00000000, 0x00000000 },        \
      { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },                                  \
    { { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff }, { 0xffffffff, 0xffffffff },        \
      { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },                                  \
    { { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 }, { 0xa4093822, 0x299f31d0 },        \
      { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } }
/* clang-format on */

#endif
