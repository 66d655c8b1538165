/* view_layout.c - where each part of the screen goes: pure rectangles from
 * the terminal's size and the step's vocabulary, no drawing (view.h).
 *
 * The panes take what the screen gives: beside the lesson text (from
 * VIEW_SIDE_W columns) they fill the height, so that a pane taller than its
 * tokens draws each token on more rows; above them (narrower screens) the
 * lesson text keeps LESSON_MIN_ROWS and the panes take one row per token
 * -- two when half of the height is still left for the text. Big mode
 * shows two panes side by side at the whole height, for a projector, with
 * the text line and one line of the lesson above them.
 */
#include "tui/view.h"

#include <string.h>

#define STATUS_ROWS     2
#define LESSON_MIN_ROWS 2 /* rows kept for the lesson text above the panes */
#define LESSON_BIG_ROWS 2 /* the text line and one line of text, in big mode */
#define SIDE_MIN_W      40
#define SIDE_MAX_W      72

/* The two panes big mode shows, by its value: the scores, then the
 * probabilities. */
static const enum pane BIG_PANES[][2] = {
    [1] = { PANE_LOGITS, PANE_EXP },
    [2] = { PANE_PROB, PANE_CUM },
};

/* The four panes as two rows of two in the rectangle (x, y, w, 2 * h, the
 * bottom row taking an odd row). */
static void four_panes(struct layout *l, int x, int y, int w, int h_top, int h_bottom)
{
    int half = w / 2;
    l->pane[PANE_LOGITS] = (struct rect){ x, y, half, h_top };
    l->pane[PANE_EXP] = (struct rect){ x + half, y, w - half, h_top };
    l->pane[PANE_PROB] = (struct rect){ x, y + h_top, half, h_bottom };
    l->pane[PANE_CUM] = (struct rect){ x + half, y + h_top, w - half, h_bottom };
}

static void big_layout(struct layout *l, int w, int top, int body, int which)
{
    l->side = 0;
    l->lesson = (struct rect){ 0, top, w, LESSON_BIG_ROWS };
    int y = top + LESSON_BIG_ROWS, h = body - LESSON_BIG_ROWS, half = w / 2;
    const enum pane *two = BIG_PANES[which];
    l->pane[two[0]] = (struct rect){ 0, y, half, h };
    l->pane[two[1]] = (struct rect){ half, y, w - half, h };
}

/* Panes above each other under the lesson text: one row per token, two
 * when the text keeps half the height, never more than leaves the text
 * LESSON_MIN_ROWS. */
static void stacked_layout(struct layout *l, int w, int top, int body, int vocab_size)
{
    int most = (body - LESSON_MIN_ROWS) / 2;
    long one = 1L + vocab_size, two = 1L + 2L * vocab_size;
    int pane_h = one < most ? (int)one : most;
    if (2 * two <= body / 2) /* the text, the teaching, keeps half */
        pane_h = (int)two;
    int lesson_h = body - 2 * pane_h;
    l->lesson = (struct rect){ 0, top, w, lesson_h };
    four_panes(l, 0, top + lesson_h, w, pane_h, pane_h);
}

void layout_compute(int w, int h, int vocab_size, int big, struct layout *l)
{
    memset(l, 0, sizeof *l);
    if (w < VIEW_MIN_W || h < VIEW_MIN_H)
        return;
    l->ok = 1;
    l->title = (struct rect){ 0, 0, w, 1 };
    l->bottom = (struct rect){ 0, h - 1, w, 1 };
    l->status = (struct rect){ 0, h - 1 - STATUS_ROWS, w, STATUS_ROWS };
    int top = 1, body = h - 2 - STATUS_ROWS;
    if (big == 1 || big == 2) {
        big_layout(l, w, top, body, big);
        return;
    }
    if (w < VIEW_SIDE_W) {
        stacked_layout(l, w, top, body, vocab_size);
        return;
    }
    l->side = 1;
    int lw = w / 3;
    lw = lw < SIDE_MIN_W ? SIDE_MIN_W : lw > SIDE_MAX_W ? SIDE_MAX_W : lw;
    l->lesson = (struct rect){ w - lw, top, lw, body };
    four_panes(l, 0, top, w - lw, body / 2, body - body / 2);
}
