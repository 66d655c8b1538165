/* view_layout.c - where each part of the screen goes: pure rectangles from
 * the terminal's size and the step's vocabulary, no drawing (view.h).
 */
#include "tui/view.h"

#include <string.h>

#define STATUS_ROWS     2
#define LESSON_MIN_ROWS 2 /* rows kept for the lesson text above the panes */
#define SIDE_MIN_W      40
#define SIDE_MAX_W      60

/* ---- layout ----------------------------------------------------------------------- */

void layout_compute(int w, int h, int vocab_size, struct layout *l)
{
    memset(l, 0, sizeof *l);
    if (w < VIEW_MIN_W || h < VIEW_MIN_H)
        return;
    l->ok = 1;
    l->title = (struct rect){ 0, 0, w, 1 };
    l->bottom = (struct rect){ 0, h - 1, w, 1 };
    l->status = (struct rect){ 0, h - 1 - STATUS_ROWS, w, STATUS_ROWS };
    int top = 1, body = h - 2 - STATUS_ROWS;
    int want = 1 + vocab_size; /* a title row and one row per token */
    int px = 0, pw = w, ptop = top, pane_h;
    if (w >= VIEW_SIDE_W) {
        l->side = 1;
        int lw = w / 3;
        lw = lw < SIDE_MIN_W ? SIDE_MIN_W : lw > SIDE_MAX_W ? SIDE_MAX_W : lw;
        pw = w - lw;
        l->lesson = (struct rect){ pw, top, lw, body };
        /* Panes as tall as their tokens need, the rest of the column left empty below. */
        pane_h = want < body / 2 ? want : body / 2;
    } else {
        /* The lesson text keeps LESSON_MIN_ROWS and gets what the panes leave. */
        int most = (body - LESSON_MIN_ROWS) / 2;
        pane_h = want < most ? want : most;
        int lesson_h = body - 2 * pane_h;
        l->lesson = (struct rect){ 0, top, w, lesson_h };
        ptop = top + lesson_h;
    }
    int half_w = pw / 2;
    l->pane[PANE_LOGITS] = (struct rect){ px, ptop, half_w, pane_h };
    l->pane[PANE_EXP] = (struct rect){ px + half_w, ptop, pw - half_w, pane_h };
    l->pane[PANE_PROB] = (struct rect){ px, ptop + pane_h, half_w, pane_h };
    l->pane[PANE_CUM] = (struct rect){ px + half_w, ptop + pane_h, pw - half_w, pane_h };
}
