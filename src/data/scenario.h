/* scenario.h - what the synthetic model "wants to say" after a prompt.
 *
 * A scenario (an INI file in data/scenarios) gives a prompt, the blends of the first
 * generated steps (which tokens should get which logits), and a table of what
 * follows a token (or two) for runs that leave the script, plus a default.
 * This file only reads and checks them; source/kind_scenario.c builds from
 * a blend and the LM head the hidden vector of the step, so that each
 * wanted token gets exactly its logit and every other one the dot product
 * of its own random row with that vector: the lesson's "rows pointing the
 * same way as the vector get high logits", built backwards.
 */
#ifndef LOGITLAB_SCENARIO_H
#define LOGITLAB_SCENARIO_H

#include <stdint.h>

#include "base/err.h"
#include "data/vocab.h"

#define SCENARIO_MAX_BLEND  32
#define SCENARIO_MAX_STEPS  64
#define SCENARIO_MAX_NEXT   256
#define SCENARIO_MAX_PROMPT 256

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

#endif
