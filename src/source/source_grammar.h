/* source_grammar.h - the grammar's mask of a step, as a source makes it
 * (source_grammar.c says how). */
#ifndef LOGITLAB_SOURCE_GRAMMAR_H
#define LOGITLAB_SOURCE_GRAMMAR_H

#include <stdint.h>

#include "base/err.h"
#include "core/sampler.h"
#include "core/settings.h"
#include "data/vocab.h"

/* What a source holds for the grammar: the compiled one, the vocabulary's
 * tries, the last mask. NULL until a step needs it. */
struct source_grammar;

/* When a grammar setting of s is on: the mask of the token after
 * ctx[0..len) (the first prompt_len the prompt) into in->refused, and the
 * grammar's state in words into in->grammar_state, both held in *held
 * (made on first use) until the next call -- the mask in into instead (V
 * flags) when it is not NULL; else both NULL. Returns 0, or
 * -1 and e: out of memory, the generated text already outside the
 * grammar, or no token of v that continues it (each in one line). */
int source_grammar_step(struct source_grammar **held, const struct vocab *v,
                        const struct settings *s, const int *ctx, int len, int prompt_len,
                        uint8_t *into, struct sampler_input *in, struct err *e);

/* The last step's mask, when it was made into the held buffer (V flags),
 * or NULL. */
const uint8_t *source_grammar_refused(const struct source_grammar *sg);

void source_grammar_free(struct source_grammar *sg);

#endif
