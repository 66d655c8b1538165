/* path.h - a lesson's own path: each step's context is the previous one
 * plus the token that step chooses with the lesson's own settings (no user
 * overrides), or the step's own context when it gives one. `show` and
 * `export` walk it; the interactive view follows the tokens actually drawn
 * instead, and says when that leaves the path. */
#ifndef LOGITLAB_PATH_H
#define LOGITLAB_PATH_H

#include "source/gen.h"
#include "source/source.h"

/* The path, walked one step at a time. A stop rule ends it unless the next
 * step starts a text of its own. */
struct source_path {
    struct source *src;
    const struct lesson *L;
    int step;           /* the step whose context is in g (1-based) */
    struct gen g;       /* its context; g.stop: what ended the path after `step` */
    char stop_why[160]; /* that rule in words */
    struct trace t;     /* scratch for the runs along the path */
};

/* Starts at step 1 of src's lesson. Returns 0 or -1. */
int source_path_start(struct source_path *p, struct source *src, struct err *e);

/* Runs the current step with the lesson's settings and moves to the next.
 * Returns 1 when it moved, 0 when the path ends here (a stop rule fired,
 * p->stop says which, or this was the last step), -1 on an error. */
int source_path_next(struct source_path *p, struct err *e);
void source_path_free(struct source_path *p);

/* Fills *ctx (malloc'd, caller frees) and *len with the context of step
 * (1-based) on the lesson's own path. Returns 0 or -1. */
int source_lesson_context(struct source *src, int step, int **ctx, int *len, struct err *e);

#endif
