/* ref_int.h - what a stage of the reference sampler sees, shared by its
 * files: sampler.c (the chain and the lesson's stages) and sampler_engines.c
 * (the stages the engines added: XTC, epsilon, eta). Nothing outside
 * src/core/ includes it. */
#ifndef LOGITLAB_REF_INT_H
#define LOGITLAB_REF_INT_H

#include "core/sampler.h"
#include "core/sampler_rules.h"

/* A stage's view: the step's input (its step and row key a stage's own
 * coin), the settings, every token's z' (by id), the window's counts, the
 * trace whose rows hold the marks (indexed by id while the chain runs),
 * and the tokens still kept, best first. */
struct ref_step {
    const struct sampler_input *in;
    const struct sampler_settings *s;
    int V;
    double *z;
    const int *count;
    struct trace *t;
    const struct zid *order; /* the kept tokens in rank order */
    int n;                   /* how many */
    struct stage_report *rep;
    struct err *e; /* a stage that fails fills it */
};

/* The sum of e^(z - max) over the first n of order: softmax's denominator. */
double ref_shifted_sum(const struct zid *order, int n);

/* Marks the kept tokens of rank keep and below as removed by stage st. */
void ref_remove_from(struct ref_step *c, int keep, enum stage st);

/* The entropy, in nats, of the softmax over the n kept tokens of order. */
double ref_kept_entropy(const struct zid *order, int n);

/* The stages of sampler_engines.c. */
int apply_XTC(struct ref_step *c);
int apply_EPSILON(struct ref_step *c);
int apply_ETA(struct ref_step *c);
int apply_NO_REPEAT_NGRAM(struct ref_step *c);
int apply_DRY(struct ref_step *c);
int apply_MIN_TOKENS(struct ref_step *c);
int apply_GRAMMAR(struct ref_step *c);
int apply_LOGIT_BIAS(struct ref_step *c);
int apply_BAD_WORDS(struct ref_step *c);

#endif
