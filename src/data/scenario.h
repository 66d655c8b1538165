/* scenario.h - what the synthetic model "wants to say" after a prompt.
 *
 * A scenario (an INI file in data/scenarios) gives a prompt, the blends of the first
 * generated steps (which tokens should get which logits), and a table of what
 * follows a token (or two) for runs that leave the script, plus a default.
 * From a blend and the LM head it builds the hidden vector of the step: a
 * combination of the rows of the wanted tokens, solved so that each of them
 * gets exactly its logit, plus noise orthogonal to those rows, scaled so that
 * the vector's root mean square is 1. Every other token then gets the dot
 * product of its own random row with that vector: a logit from a normal of
 * standard deviation LM_LOGIT_SPREAD. This is the lesson's "rows pointing the
 * same way as the vector get high logits", built backwards.
 */
#ifndef LOGITLAB_SCENARIO_H
#define LOGITLAB_SCENARIO_H

#include <stdint.h>

#include "base/err.h"
#include "model/model.h"
#include "data/vocab.h"

struct backend;

#define SCENARIO_MAX_BLEND    32
#define SCENARIO_MAX_STEPS    64
#define SCENARIO_MAX_NEXT     256
#define SCENARIO_MAX_PROMPT   256
#define SCENARIO_HIDDEN_SCALE 3.0 /* the last layer's vector is not normalized: RMSNorm does it */

struct blend {
    int n;
    int id[SCENARIO_MAX_BLEND];
    double logit[SCENARIO_MAX_BLEND];
};

struct next_rule {
    int key_len; /* 1 or 2 tokens */
    int key[2];
    struct blend blend;
};

struct scenario {
    char id[33];
    char *title;
    char *prompt_text;
    int prompt[SCENARIO_MAX_PROMPT];
    int prompt_len;
    uint64_t seed; /* of the noise */
    int n_steps;
    struct blend steps[SCENARIO_MAX_STEPS];
    int n_next;
    struct next_rule *next;
    struct blend fallback;
};

/* Loads and checks the scenario at path against vocabulary v: the prompt ids
 * must read as the prompt text, every id must exist, no blend may name a
 * token twice. Errors are "path:line: message". */
int scenario_load(struct scenario *s, const char *path, const struct vocab *v, struct err *e);
/* The same from text in memory (NULL: read path); path names it in messages. */
int scenario_load_text(struct scenario *s, const char *path, const char *text,
                       const struct vocab *v, struct err *e);
void scenario_free(struct scenario *s);

/* The blend for the token after ctx[0..len) (the prompt first). */
const struct blend *scenario_blend(const struct scenario *s, const int *ctx, int len);

/* The hidden vector h (m->d values) for the token after ctx. Returns 0, or -1
 * when the blend's logits cannot all be met at this hidden size. */
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

/* Builds the head (V rows of hidden size d, weights from seed) for s. */
int scenario_run_open(struct scenario_run *r, const struct scenario *s, int V, int d, uint64_t seed,
                      struct err *e);
void scenario_run_free(struct scenario_run *r);

/* The logits for the token after ctx[0..len): V floats, valid until the next
 * call. NULL on error (a blend the hidden size cannot meet, out of memory). */
const float *scenario_run_logits(struct scenario_run *r, const int *ctx, int len, struct err *e);

#endif
