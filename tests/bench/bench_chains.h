/* bench_chains.h - the rows and the chains every sampler benchmark runs
 * (bench_fast, and a comparison with another engine's sampler): the six
 * chains of issue 14's table, the two orders they run in, one row of logits
 * like a model's and the penalty window. One table, so that every program
 * measures the same work. Header only. */
#ifndef LOGITLAB_BENCH_CHAINS_H
#define LOGITLAB_BENCH_CHAINS_H

#include <math.h>
#include <stdint.h>

#include "core/philox.h"

#define BENCH_WINDOW 64 /* the penalty window of chain (f): the last 64 ids */

/* A chain: its letter and name, its settings as name, value pairs (the
 * names of sampling.def, as --set takes them), and how many context ids it
 * penalizes (0: no context). */
struct bench_chain {
    char letter;
    const char *name;
    const char *settings[14];
    int window;
};

/* The chains people use most, cheapest first. */
static const struct bench_chain BENCH_CHAINS[] = {
    { 'a', "greedy", { "temperature", "0", NULL }, 0 },
    { 'b', "temperature 0.8 + draw", { "temperature", "0.8", NULL }, 0 },
    { 'c',
      "top-k 40 + top-p 0.95 + min-p 0.05 + T 0.8",
      { "top-k", "40", "top-p", "0.95", "min-p", "0.05", "temperature", "0.8", NULL },
      0 },
    { 'd', "top-p 0.95 + T 0.8", { "top-p", "0.95", "temperature", "0.8", NULL }, 0 },
    { 'e', "min-p 0.05 + T 0.8", { "min-p", "0.05", "temperature", "0.8", NULL }, 0 },
    { 'f',
      "repetition penalty 1.1 over the last 64 + (c)",
      { "top-k", "40", "top-p", "0.95", "min-p", "0.05", "temperature", "0.8", "repetition-penalty",
        "1.1", "penalty-last-n", "64", NULL },
      BENCH_WINDOW },
};
#define BENCH_N_CHAINS ((int)(sizeof BENCH_CHAINS / sizeof BENCH_CHAINS[0]))

/* The orders each chain runs in: the lesson's, and llama.cpp's (its cuts
 * before the temperature). Values of the setting "order". */
static const char *const BENCH_ORDERS[] = { "lesson", "llamacpp" };
#define BENCH_N_ORDERS 2

/* The vocabulary sizes: a small model's, Llama 3's, Gemma 3's. */
static const int BENCH_SIZES[] = { 32768, 128256, 262144 };
#define BENCH_N_SIZES 3

/* A row like a model's: a bulk normal of standard deviation 2.5 (Box-Muller
 * on Philox uniforms, so every program gets the same bits) and 8 tokens at
 * 20 down to 15.1. */
static inline void bench_make_row(float *z, int V)
{
    for (int i = 0; i < V; i++) {
        double u1 = philox_uniform(7, (uint32_t)i, 1, 0) + 1.0 / 33554432.0;
        double u2 = philox_uniform(7, (uint32_t)i, 2, 0);
        z[i] = (float)(2.5 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    for (int j = 0; j < 8; j++)
        z[(j * 7919) % V] = 20.0f - 0.7f * j;
}

/* The context the penalty sees: BENCH_WINDOW ids spread over the
 * vocabulary, the first of them the row's best token (a model repeats
 * itself). */
static inline void bench_make_context(int *ctx, int V)
{
    for (int j = 0; j < BENCH_WINDOW; j++)
        ctx[j] = (int)(((int64_t)j * 104729) % V);
}

#endif
