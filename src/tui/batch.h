/* batch.h - the batch view's model: BATCH_ROWS requests served together,
 * as an engine serves them (lesson 000, section 5). Every request starts
 * from the lesson's prompt with settings of its own; one step runs the LM
 * head for all of them at once (B hidden vectors, one GEMV), then one
 * sampler call applies each row's settings to its own row of logits, and
 * each request appends its token or stops on its own stop rule. No curses:
 * app.c drives it, view.c draws it.
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
#define BATCH_TOP        8  /* best tokens each request brings back */
#define BATCH_MAX_TOKENS 48 /* when the lesson sets no maximum */

struct batch_row {
    struct settings set;    /* the request's own settings */
    struct gen g;           /* prompt then generated ids; g.stop: STOP_NONE while it runs */
    struct backend_res res; /* the step waiting to be taken */
};

struct batch {
    int n;
    int prompt_len;
    int steps; /* steps taken */
    struct batch_row row[BATCH_ROWS];
    float *h;          /* n hidden vectors of the head's size */
    unsigned long gen; /* the backend's logits generation that holds ours */
    const struct backend *be;
    int head_ran;          /* the last computation ran the LM head */
    double head_kernel_ms; /* device time of the last LM-head call */
    double kernel_ms;      /* device time of the last sampler call */
    double step_ms;        /* the last computation (a step, or a row's new settings), on the host */
};

/* Starts BATCH_ROWS requests on L (a lesson with a model, opened and on a
 * backend) from its prompt, each with one of the preset settings (greedy,
 * top-p with two seeds, min-p, top-k, a penalty, the engines' chain, the
 * llama.cpp order), and samples their first step. Returns 0 or -1. */
int batch_open(struct batch *b, struct source *src, struct backend *be, struct err *e);
void batch_free(struct batch *b);

/* Samples every request again (after a setting changed); the logits are
 * recomputed only when the backend no longer holds them. */
int batch_sample(struct batch *b, struct source *src, struct backend *be, struct err *e);

/* Takes the step: every running request appends its token and checks its
 * stop rules, then the next step is computed. Returns 0, or -1 with the
 * batch as it was before. */
int batch_step(struct batch *b, struct source *src, struct backend *be, struct err *e);

/* The preset settings of request row (0 to BATCH_ROWS - 1) on L: the
 * lesson's stop rules, then the row's sampler settings. Returns 0 or -1. */
int batch_preset(const struct source *src, int row, struct settings *s, struct err *e);

/* Changes one setting of request row only. Returns 0, or -1 with the
 * settings' message. */
int batch_set(struct batch *b, int row, const char *name, const char *value, struct err *e);

/* A short line of the row's settings: "greedy", "T 0.8 top-p 0.95 seed 2". */
void batch_describe(const struct batch_row *r, char *buf, size_t n);

/* Requests still running. */
int batch_running(const struct batch *b);

#endif
