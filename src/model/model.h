/* model.h - the synthetic model behind the real-size run: an LM head of V
 * rows of d bf16 weights (generated from a seed, lmhead_gen.h), RMSNorm, and
 * the logits W . RMSNorm(h) computed in float on the CPU.
 */
#ifndef LOGITLAB_MODEL_H
#define LOGITLAB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define MODEL_DEFAULT_HIDDEN 4096
#define MODEL_MAX_HIDDEN     16384
#define MODEL_RMS_EPS        1e-5f /* Llama 3's */
#define MODEL_DEFAULT_SEED   20241129u

struct model {
    int V, d;
    uint64_t seed;
    float scale;  /* lm_weight_scale(d) */
    uint16_t *w;  /* V x d bf16 weights, row-major */
    size_t bytes; /* of w */
    int threads;  /* worker threads for building and for the product */
};

/* The scale that gives a logit spread of LM_LOGIT_SPREAD at hidden size d. */
float lm_weight_scale(int d);

/* Builds the head: allocates V x d weights and fills them. Errors: sizes out
 * of range, out of memory (the message gives the size in GB). */
int model_build(struct model *m, int V, int d, uint64_t seed, struct err *e);
void model_free(struct model *m);

/* out = h / sqrt(mean(h^2) + eps), in float. Returns the root mean square. */
float model_rmsnorm(const float *h, int d, float *out);

/* logits[v] = sum_i w[v][i] * x[i] (float accumulation in a fixed order). */
void model_logits(struct model *m, const float *x, float *logits);

/* The same for n vectors (x: n x d, logits: n x V), bit for bit what
 * model_logits gives for each, reading the weights once for all of them. */
void model_logits_batch(struct model *m, const float *x, int n, float *logits);

#endif
