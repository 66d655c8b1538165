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

#include "base/err.h"
#include "data/lesson.h"
#include "core/sampler.h"
#include "core/settings.h"

#define SOURCE_FAST_ROWS 64 /* rows a model lesson ranks unless asked for more */
#define SOURCE_MAX_ROWS  4096

/* Makes L ready to run. A lesson with [model], captured logits, or more than
 * LESSON_MAX_VOCAB tokens runs on the O(V) sampler, which ranks rows (0:
 * SOURCE_FAST_ROWS) of the best tokens in full; a lesson with [model] also
 * gets its LM head built, with hidden size hidden (0: the lesson's): a
 * second or so at full size. Other lessons run on the reference sampler. */
int source_open(struct lesson *L, int hidden, int rows, struct err *e);

struct backend;

/* Runs L's LM head on backend be from now on (after source_open): makes
 * the head ready there (on a GPU, its weights are generated on the
 * device). For a lesson without a model it drops the head be held.
 * Returns 0 or -1. */
int source_use_backend(struct lesson *L, struct backend *be, struct err *e);

/* The float logits of the step source_run_step ran last on L, when they
 * are floats (a model's, or a captured row); NULL for a lesson's table. */
const float *source_last_logits_f(const struct lesson *L, int step);

/* 1 when L runs on the O(V) sampler (source_open decided). */
int source_is_fast(const struct lesson *L);

enum stop_rule { STOP_NONE, STOP_EOS, STOP_MAX_TOKENS, STOP_STRING };

struct stop_result {
    enum stop_rule rule;
    int which; /* the stop string's index for STOP_STRING, the token for STOP_EOS */
};

/* The lesson's own path, walked one step at a time: each step's context is
 * the previous one plus the token that step chooses with the lesson's own
 * settings (no user overrides), or the step's own context when it gives
 * one. A stop rule ends the path unless the next step starts a text of its
 * own. */
struct source_path {
    const struct lesson *L;
    int step; /* the step whose context is in ctx (1-based) */
    int *ctx; /* its context (owned) */
    int len;
    struct stop_result stop; /* what ended the path after `step`, or STOP_NONE */
    char stop_why[160];      /* that rule in words */
    struct trace t;          /* scratch for the runs along the path */
};

/* Starts at step 1. Returns 0 or -1. */
int source_path_start(struct source_path *p, const struct lesson *L, struct err *e);

/* Runs the current step with the lesson's settings and moves to the next.
 * Returns 1 when it moved, 0 when the path ends here (a stop rule fired,
 * p->stop says which, or this was the last step), -1 on an error. */
int source_path_next(struct source_path *p, struct err *e);
void source_path_free(struct source_path *p);

/* The logit of token id at step as given: the step's own, a captured row,
 * or the model's for the context it ran last (NAN when it has not run).
 * What a row looked up after a fast run (sampler_fast_row) leaves out. */
double source_logit(const struct lesson *L, int step, int id);

/* Fills *ctx (malloc'd, caller frees) and *len with the context of step
 * (1-based) on the lesson's own path. Returns 0 or -1. */
int source_lesson_context(const struct lesson *L, int step, int **ctx, int *len, struct err *e);

/* Builds the settings of a step: defaults, the user's (L->config), then the
 * lesson's, then the step's. */
void source_step_settings(const struct lesson *L, int step, struct settings *s);

/* How much of a context of len ids is the lesson's prompt: the prompt's
 * length, or len when the context is shorter. */
int source_prompt_len(const struct lesson *L, int len);

/* The Philox step counter of a draw in a context of len ids: generated
 * tokens so far plus one (the prompt does not count). */
uint32_t source_draw_step(const struct lesson *L, int len);

/* Runs the sampler on step of L with settings s in context ctx, into t
 * (allocated for L's vocabulary). */
int source_run_step(const struct lesson *L, int step, const struct settings *s, const int *ctx,
                    int len, struct trace *t, struct err *e);

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
