/* model.h - the LM head behind the full-size runs: V rows of d weights,
 * RMSNorm, and the logits W . RMSNorm(h) computed in float on the CPU.
 *
 * Two kinds of head. The synthetic one (model_build) has bf16 weights
 * generated from a seed (lmhead_gen.h) and a unit-gain RMSNorm. A model
 * file's (model_borrow) has weights of any stored type (quant.h), borrowed
 * from the file's mapping, and its final norm's gain and epsilon.
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
    uint16_t *w;  /* V x d bf16 weights, tiled (head_vec.h; model_row), or NULL */
    size_t bytes; /* of w, or of qw */
    int threads;  /* threads for building and for the product, the caller's included */
    /* A model file's head: the rows in their stored type, the final
     * norm's gain (d floats) and epsilon; qw NULL for the synthetic one. */
    const void *qw;
    int qtype;
    const float *gain;
    float eps;
    /* A model file's final soft-cap (Gemma 2's 30): each logit z becomes
     * softcap * tanh(z / softcap) after the product; 0: none. Set after
     * model_borrow. */
    float softcap;
    struct pool *pool; /* the threads of the build and the products (model/pool.h), made once */
};

/* Told how a long job goes: fn(arg, what, done, total) with done counting up
 * from 0 to total (the last call has done == total), always from the thread
 * that started the job, so that it may draw. what names the job. */
struct model_progress {
    void (*fn)(void *arg, const char *what, int done, int total);
    void *arg;
};

/* Gemma 2's soft-cap of n values (the head's logits, the attention's
 * scores): each z becomes cap * tanh(z / cap), in float as ggml computes
 * it (a scale by the cap's reciprocal, tanh, a scale by the cap); every
 * value lands inside (-cap, cap), the order kept. */
void model_soft_cap(float *z, size_t n, float cap);

/* The scale that gives a logit spread of LM_LOGIT_SPREAD at hidden size d. */
float lm_weight_scale(int d);

/* Builds the head: allocates V x d weights and fills them. Errors: sizes out
 * of range, out of memory (the message gives the size in GB), no thread. */
int model_build(struct model *m, int V, int d, uint64_t seed, struct err *e);

/* The same, telling p (NULL: nobody) how many of the V rows are filled. The
 * rows are filled on every core, each into memory its thread faulted in
 * first; the weights are the same bits whatever the threads (lmhead_gen.h). */
int model_build_progress(struct model *m, int V, int d, uint64_t seed,
                         const struct model_progress *p, struct err *e);
void model_free(struct model *m);

/* Row r of the synthetic head m, its d weights in order, into out. */
void model_row(const struct model *m, int r, uint16_t *out);

/* Makes m a view of a model file's head: V rows of d values of type qtype
 * at w (quant.h; borrowed, as gain is), normalized with gain and eps, its
 * products run by a pool of threads that model_free stops. Errors: an
 * unsupported type, sizes out of range, no thread to be had. */
int model_borrow(struct model *m, int V, int d, const void *w, int qtype, const float *gain,
                 float eps, struct err *e);

/* The head's own RMSNorm of h into out: unit gain and MODEL_RMS_EPS for the
 * synthetic head, the file's gain and epsilon for a borrowed one. Returns
 * the root mean square it divided by. */
float model_norm(const struct model *m, const float *h, float *out);

/* out = h / sqrt(mean(h^2) + eps), in float. Returns the root mean square. */
float model_rmsnorm(const float *h, int d, float *out);

/* logits[v] = sum_i w[v][i] * x[i] (float accumulation in a fixed order). */
void model_logits(struct model *m, const float *x, float *logits);

/* The same for n vectors (x: n x d, logits: n x V), bit for bit what
 * model_logits gives for each, reading the weights once for all of them. */
void model_logits_batch(struct model *m, const float *x, int n, float *logits);

#endif
