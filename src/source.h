/* source.h - where a step's logits and context come from, and the stop rules.
 *
 * For a lesson, the logits of step k are the lesson's own, and the context is
 * the path the lesson itself takes: the step's explicit context when it gives
 * one, else the previous step's context plus the token the previous step
 * chooses under the lesson's own settings (no user overrides). `show` uses
 * this path; the terminal UI follows the tokens actually drawn instead.
 */
#ifndef LOGITLAB_SOURCE_H
#define LOGITLAB_SOURCE_H

#include "err.h"
#include "lesson.h"
#include "sampler.h"
#include "settings.h"

#define SOURCE_FAST_ROWS 64 /* rows a model lesson ranks unless asked for more */
#define SOURCE_MAX_ROWS  4096

/* Makes L ready to run. A lesson with [model], captured logits, or more than
 * LESSON_MAX_VOCAB tokens runs on the O(V) sampler, which ranks rows (0:
 * SOURCE_FAST_ROWS) of the best tokens in full; a lesson with [model] also
 * gets its LM head built, with hidden size hidden (0: the lesson's): a
 * second or so at full size. Other lessons run on the reference sampler. */
int source_open(struct lesson *L, int hidden, int rows, struct err *e);

/* 1 when L runs on the O(V) sampler (source_open decided). */
int source_is_fast(const struct lesson *L);

/* The model's float logits for the token after ctx, or NULL (e says why). */
const float *source_model_logits(const struct lesson *L, const int *ctx, int len, struct err *e);

/* Fills *ctx (malloc'd, caller frees) and *len with the context of step
 * (1-based) on the lesson's own path. Returns 0 or -1. */
int source_lesson_context(const struct lesson *L, int step, int **ctx, int *len, struct err *e);

/* Builds the settings of a step: defaults, the user's (L->config), then the
 * lesson's, then the step's. */
void source_step_settings(const struct lesson *L, int step, struct settings *s);

/* Runs the sampler on step of L with settings s in context ctx, into t
 * (allocated for L's vocabulary). */
int source_run_step(const struct lesson *L, int step, const struct settings *s, const int *ctx,
                    int len, struct trace *t, struct err *e);

enum stop_rule { STOP_NONE, STOP_EOS, STOP_MAX_TOKENS, STOP_STRING };

struct stop_result {
    enum stop_rule rule;
    int which; /* the stop string's index for STOP_STRING, the token for STOP_EOS */
};

/* Checks the stop rules after a token was appended: ctx[0..len) holds the
 * prompt (prompt_len tokens) and everything generated, the new token last.
 * End token first, then a stop string in the generated text (matched across
 * token boundaries), then the maximum number of generated tokens. */
struct stop_result stop_check(const struct settings *s, const struct vocab *v, const int *ctx,
                              int len, int prompt_len);

/* "end token [EOS]", "stop string \"mat\"", "max tokens (3)", or "". */
void stop_describe(const struct stop_result *r, const struct settings *s, const struct vocab *v,
                   char *buf, size_t n);

#endif
