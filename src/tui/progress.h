/* progress.h - how far a long job has got, shown as one line such as
 * "building the LM head (1.05 GB): 42%, about 3 s left" (one concept for
 * every long job: building a full-size lesson's head, opening and running
 * a model file). Before the interactive view has the terminal the line goes
 * to standard error, when that is a terminal, rewritten in place; while the
 * view has it, over the bottom row of the frame last drawn, so that the
 * screen does not freeze. The view's own state is never read here: a job
 * runs in the middle of a change to it.
 */
#ifndef LOGITLAB_PROGRESS_H
#define LOGITLAB_PROGRESS_H

#include <stddef.h>

#include "tui/screen.h"
#include "tui/term.h"

#define PROGRESS_WHAT_MAX 64

/* Where the line goes, and the job it follows (zero it to start). */
struct progress_view {
    const struct term *term; /* set while the view has the terminal, else NULL */
    struct screen *screen;   /* the frame last drawn there (with term) */
    char what[PROGRESS_WHAT_MAX];
    int last_done, last_total;
    double t0_ms;    /* when the job started */
    double shown_ms; /* when a line was last shown; < 0: not yet */
};

/* The line for done of total units of what, elapsed_ms after the job's
 * start, into buf (n bytes): the percent, then the time left once a guess
 * can be made (elapsed * (total - done) / done), or on the last call the
 * time the job took. */
void progress_line(const char *what, int done, int total, double elapsed_ms, char *buf, size_t n);

/* A struct model_progress's function (model/model.h) with arg a struct
 * progress_view: a call with done 0, another what, or after a finished job
 * starts a new job. On standard error every call of a job shows (the first
 * and the last always, the others at most ten times a second), a newline
 * after the last; on the screen a job shows once it has taken 150 ms, at
 * most ten times a second, with a bar, and not its last call (the view is
 * redrawn next). */
void progress_show(void *arg, const char *what, int done, int total);

#endif
