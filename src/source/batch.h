/* batch.h - the batch view's model: up to BATCH_ROWS requests served
 * together, as an engine serves them (lesson 000, section 5). Every request
 * starts from the lesson's prompt with settings of its own; one step runs
 * the LM head for all of them at once (B hidden vectors, one GEMV), then
 * one sampler call applies each row's settings to its own row of logits,
 * and each request appends its token or stops on its own stop rule.
 *
 * A lesson without a model (a toy one) has no hidden vectors: its step 1
 * gives the same row of logits to every request, and the call samples each
 * row with the single step's own sampler (source_run_step, Philox row 0),
 * so a request's numbers and draw are those of the single step with its
 * settings -- in the batch or alone, as a request's own seeded generator
 * in an engine. A toy step's row belongs to the step, not to a text, so
 * such a batch stays at that one step: once the requests' texts differed,
 * no row would be theirs. No curses: app.c drives it, view_batch.c draws it.
 */
#ifndef LOGITLAB_BATCH_H
#define LOGITLAB_BATCH_H

#include "backend/backend.h"
#include "base/err.h"
#include "data/lesson.h"
#include "core/settings.h"
#include "source/gen.h"
#include "source/source.h"

#define BATCH_ROWS       8
#define BATCH_TOY_ROWS   4  /* requests of a toy lesson that declares none */
#define BATCH_TOP        8  /* best tokens each request brings back */
#define BATCH_MAX_TOKENS 48 /* when the lesson sets no maximum */

struct batch_row {
    struct settings set;    /* the request's own settings */
    struct gen g;           /* prompt then generated ids; g.stop: STOP_NONE while it runs */
    struct backend_res res; /* the step waiting to be taken */
};

struct batch {
    int n;
    int toy;      /* no hidden vectors: step k's row for all, the single step's sampler */
    int toy_top;  /* tokens a toy request brings back: the whole vocabulary, at most BACKEND_MAX_TOP
                   */
    int toy_step; /* the lesson step whose logits the running requests sample */
    struct trace t; /* a toy row's work space */
    int prompt_len;
    int steps; /* steps taken */
    struct batch_row row[BATCH_ROWS];
    float *h;          /* n hidden vectors of the head's size */
    uint8_t *refused;  /* BATCH_ROWS grammar masks of V flags, made when a request has a grammar */
    unsigned long gen; /* the backend's logits generation that holds ours */
    const struct backend *be;
    int head_ran;          /* the last computation ran the LM head */
    double head_kernel_ms; /* device time of the last LM-head call */
    double kernel_ms;      /* device time of the last sampler call */
    double step_ms;        /* the last computation (a step, or a row's new settings), on the host */
};

/* Starts the requests of src's lesson from its prompt and samples their
 * first step: those the lesson declares (its request keys), else presets --
 * on a lesson with a model (opened, on backend be) BATCH_ROWS of them
 * (greedy, top-p with two seeds, min-p, top-k, a penalty, the engines'
 * chain, the llama.cpp order), on a toy lesson BATCH_TOY_ROWS (greedy,
 * top-k, top-p, min-p; be may be NULL there). Returns 0 or -1. */
int batch_open(struct batch *b, struct source *src, struct backend *be, struct err *e);
void batch_free(struct batch *b);

/* Samples every request again (after a setting changed); the logits are
 * recomputed only when the backend no longer holds them. */
int batch_sample(struct batch *b, struct source *src, struct backend *be, struct err *e);

/* Takes the step: every running request appends its token and checks its
 * stop rules, then the next step is computed. Returns 0, or -1 with the
 * batch as it was before. */
int batch_step(struct batch *b, struct source *src, struct backend *be, struct err *e);

/* The preset settings of request row on src's lesson: the lesson's stop
 * rules (a toy request stops where the lesson's steps end), then the
 * row's sampler settings from the defaults. Returns 0 or -1. */
int batch_preset(const struct source *src, int row, struct settings *s, struct err *e);

/* Changes one setting of request row only. Returns 0, or -1 with the
 * settings' message. */
int batch_set(struct batch *b, int row, const char *name, const char *value, struct err *e);

/* A short line of the row's settings: "greedy", "T 0.8 top-p 0.95 seed 2". */
void batch_describe(const struct batch_row *r, char *buf, size_t n);

/* The same, fitted into width columns by dropping words, never digits
 * ("T 1.2 k 40 p 0.95 min-p 0.05 seed 6"), then cut. */
void batch_describe_fit(const struct batch_row *r, int width, char *buf, size_t n);

/* Requests still running. */
int batch_running(const struct batch *b);

/* A request's name on screen and in messages: A, B, C, ... */
char batch_label(int row);

/* The lesson step whose logits a toy request of len ids samples: its
 * generated tokens plus one, the last step after that. */
int batch_toy_step(const struct lesson *L, int len);

/* A paragraph on what the batch shows now, with its numbers: one call,
 * each request's settings and what it drew. */
void batch_explain(const struct batch *b, const struct vocab *v, char *buf, size_t n);

#endif
