/* vec_clones.h - the attribute that builds a dense loop for the vector units
 * of the machine it runs on: on x86-64 (gcc) each function so marked is
 * compiled three times (AVX-512, AVX2, baseline) and the loader picks the
 * one the CPU can run. Every such loop is written so that the three give
 * the same bits (element-wise work, sums in one fixed order). */
#ifndef LOGITLAB_VEC_CLONES_H
#define LOGITLAB_VEC_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VEC_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define VEC_CLONES
#endif

#endif
