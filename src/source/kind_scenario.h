/* kind_scenario.h - the synthetic model behind the full-size lessons, as
 * building blocks (the kind itself is SOURCE_SCENARIO): the hidden vector a
 * scenario's blend asks for, and a scenario running on a built head. The
 * benchmark and the GPU checks use them directly. */
#ifndef LOGITLAB_KIND_SCENARIO_H
#define LOGITLAB_KIND_SCENARIO_H

#include "base/err.h"
#include "data/scenario.h"
#include "model/model.h"

struct backend;

#define SCENARIO_HIDDEN_SCALE 3.0 /* the last layer's vector is not normalized: RMSNorm does it */

/* The hidden vector h (m->d values) for the token after ctx: a blend of the
 * wanted tokens' rows, each met exactly, plus orthogonal noise drawn from
 * the context, at a root mean square of SCENARIO_HIDDEN_SCALE. Returns 0,
 * or -1 when the blend's logits cannot all be met at this hidden size. */
int scenario_hidden(const struct scenario *s, const struct model *m, const int *ctx, int len,
                    float *h, struct err *e);

/* A scenario running on a built head: the hidden vector, its RMSNorm, and the
 * logits of the last context asked for (computing them is a GEMV over the
 * whole head, so asking twice for one context costs nothing). */
struct scenario_run {
    const struct scenario *s;
    struct model m;
    float *h, *x, *logits;
    int *ctx; /* the context the logits are for */
    int ctx_len, ctx_cap, valid;
    double hidden_ms, logits_ms; /* what building the vector and the product cost */
    struct backend *be;          /* where the product runs (NULL: model.c on this CPU) */
};

/* Builds the head (V rows of hidden size d, weights from seed) for s, and
 * checks that every blend of s can be met at that size. */
int scenario_run_open(struct scenario_run *r, const struct scenario *s, int V, int d, uint64_t seed,
                      struct err *e);
/* The same, telling p (NULL: nobody) how building the head goes. */
int scenario_run_open_progress(struct scenario_run *r, const struct scenario *s, int V, int d,
                               uint64_t seed, const struct model_progress *p, struct err *e);
void scenario_run_free(struct scenario_run *r);

/* The logits for the token after ctx[0..len): V floats, valid until the next
 * call. NULL on error (a blend the hidden size cannot meet, out of memory). */
const float *scenario_run_logits(struct scenario_run *r, const int *ctx, int len, struct err *e);

#endif
