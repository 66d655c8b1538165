/* view.h - the layout of the screen (pure rectangles from its size) and the
 * drawing of the app into a screen buffer. No curses: term.c presents the
 * buffer, the headless mode prints it.
 */
#ifndef LOGITLAB_VIEW_H
#define LOGITLAB_VIEW_H

#include "tui/app.h"
#include "tui/screen.h"

#define VIEW_MIN_W  80
#define VIEW_MIN_H  24
#define VIEW_SIDE_W 120 /* from this width the lesson text sits beside the panes */

enum pane { PANE_LOGITS, PANE_EXP, PANE_PROB, PANE_CUM, PANE_COUNT };

struct layout {
    int ok;   /* 0: the screen is smaller than VIEW_MIN_W x VIEW_MIN_H */
    int side; /* the lesson pane is beside the panes (1) or above them (0) */
    struct rect title;
    struct rect lesson;
    struct rect pane[PANE_COUNT];
    struct rect status; /* two lines of settings */
    struct rect bottom; /* the message, the prompt, or the key hints */
};

/* Lays out a w x h screen for a vocabulary of vocab_size tokens: panes take
 * the rows they can use, the lesson text the rest; in big mode (big 1: the
 * logits and exponentials, 2: the probabilities and the cumulative sums)
 * two panes take the height, the others are empty rectangles. Pure: no
 * drawing. */
void layout_compute(int w, int h, int vocab_size, int big, struct layout *l);

/* The buffers the drawing works in (the lesson text wrapped into lines,
 * the streamed text line's pieces: some 240 KB), owned by the caller so
 * that the view keeps no state of its own. One is enough for any number of
 * screens drawn one after the other; each call below that takes one may
 * overwrite what it holds. */
struct view_scratch;

/* Returns a new scratch, or NULL when out of memory; view_scratch_free
 * (NULL is fine) gives it back. */
struct view_scratch *view_scratch_new(void);
void view_scratch_free(struct view_scratch *vs);

/* Draws the whole app into s (of any size). */
void view_render(const struct app *a, struct screen *s, struct view_scratch *vs);

/* After drawing at w x h: how many lines of lesson text were on screen and
 * the last scroll position that still shows text. The caller hands them to
 * the app (scroll_page, scroll_max) so that scrolling stops at the end. */
void view_measure(const struct app *a, int w, int h, int *page, int *max_scroll,
                  struct view_scratch *vs);

/* Draws one pane, or the lesson pane, into rectangle r of s: what
 * view_render does for each part, exposed so that tests can check that no
 * part writes outside its rectangle. */
void view_draw_pane(const struct app *a, struct screen *s, enum pane p, struct rect r);
void view_draw_lesson(const struct app *a, struct screen *s, struct rect r, int side,
                      struct view_scratch *vs);

#endif
