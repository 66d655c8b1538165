/* view_int.h - what the files of the view share; view*.c only.
 *
 * view.c lays out the screen and draws it part by part, each into its own
 * clipped context (struct screen_ctx: coordinates from the part's corner,
 * nothing written outside it): the title, the lesson pane (view_lesson.c),
 * the step -- the four panes of a toy step (view_panes.c), the table of a
 * full-size one (view_big.c) or the batch (view_batch.c) -- the status
 * lines and the bottom line.
 */
#ifndef LOGITLAB_VIEW_INT_H
#define LOGITLAB_VIEW_INT_H

#include "tui/view.h"

#define TOKEN_W        8
#define TEXT_LINES_MAX 400

/* Text wrapped into lines, each with its colour and attributes. */
struct lines {
    int n;
    char text[TEXT_LINES_MAX][256];
    int color[TEXT_LINES_MAX];
    int attr[TEXT_LINES_MAX];
};

/* The pieces of the text line (view_lesson.c): the prompt and the
 * generated text, decoded, the generated ids, and the line's spans --
 * escaped text each in its own colour -- drawn whole, or without their
 * start when the line is too long (its end, the newest text, stays). */
#define SPANS_MAX 6
struct stream_bufs {
    char prompt[2048], gen[4096];
    int ids[APP_MAX_HISTORY + LESSON_MAX_CONTEXT + 1];
    int n_spans;
    char span[SPANS_MAX][8192];
    int span_color[SPANS_MAX], span_attr[SPANS_MAX];
};

struct view_scratch {
    struct lines text; /* the lesson text: the lesson pane, the text mode, view_measure */
    struct lines msg;  /* a message too long for the bottom line, wrapped */
    struct stream_bufs stream;
};

/* ---- helpers (view.c) ------------------------------------------------------------- */

/* The digits the step's numbers are shown with. */
int digits_of(const struct app *a);

/* utf8 on a UTF-8 screen, else its ASCII stand-in. */
const char *glyph(const struct screen_ctx *c, const char *utf8, const char *ascii);

/* Whether token id is the one drawn (taken, or shown with u). */
int is_chosen(const struct app *a, int id);

/* The title bar of a pane: left on the left, right (cut if need be) on the
 * right of the first row of c. */
void pane_title(const struct screen_ctx *c, const char *left, const char *right);

/* The text of s without its first cols columns. */
const char *skip_cols(const char *s, int cols);

/* ---- the parts -------------------------------------------------------------------- */

/* The four panes of a toy step (view_panes.c), each filling c. */
void draw_logits(const struct app *a, const struct screen_ctx *c);
void draw_exp(const struct app *a, const struct screen_ctx *c);
void draw_prob(const struct app *a, const struct screen_ctx *c);
void draw_cum(const struct app *a, const struct screen_ctx *c);

/* A full-size step (view_big.c) and the batch view (view_batch.c), in the
 * room of the four panes. */
void draw_big(const struct app *a, const struct screen_ctx *c);
void draw_batch(const struct app *a, const struct screen_ctx *c);

/* The lesson pane (beside the panes when side), and the lesson text on the
 * whole screen (view_lesson.c). */
void draw_lesson(const struct app *a, const struct screen_ctx *c, int side,
                 struct view_scratch *vs);
void draw_text_mode(const struct app *a, const struct screen_ctx *c, struct view_scratch *vs);

/* Lines of text (view_lesson.c): one line as it is, or a paragraph wrapped
 * to width columns, the first line after lead. */
void add_line(struct lines *L, const char *text, int color, int attr);
void add_wrapped(struct lines *L, const char *lead, const char *text, int width, int color,
                 int attr);

/* ---- shared by the toy panes (view_panes.c) and the draws (view_draws.c) ---- */

#define PANE_ROWS_MAX 512 /* rows a pane lists */

/* The ids a pane of rows rows shows, in display order: by id when every
 * token fits (as the lessons' tables are), else (or by_rank) by rank, the
 * most likely ones, with the last row left for the "... more" line. */
int pane_order(const struct app *a, int rows, int by_rank, int *ids);

/* Rows from one token to the next in a pane of c's height: more than one
 * where every token fits twice or more, so that panes side by side keep
 * each token on the same row. */
int pane_step(const struct app *a, const struct screen_ctx *c);

/* A token's name at (x, y), TOKEN_W - 1 columns: the drawn one reversed, a
 * removed one dimmed where dim_removed, and the one found with '/' marked
 * in the column before it. */
void draw_token(const struct app *a, const struct screen_ctx *c, int x, int y,
                const struct trace_row *row, int dim_removed);

/* The many draws of a toy step (view_draws.c), in the cumulative pane's room
 * while they are on: each token's count beside N x final. */
void draw_draws(const struct app *a, const struct screen_ctx *c);

/* The text view (c), on the whole screen (view_read.c). */
void draw_read(const struct app *a, const struct screen_ctx *c);

/* ---- the marks and the legend (marks.def, view_legend.c) ---- */

/* Every mark the toy panes draw, and the colours they say things with. */
enum mark_id {
#define MARK(id, cp, ascii, sample, color, attr, where, meaning) MARK_##id,
#include "tui/marks.def"
#undef MARK
    MARK_COUNT
};

struct mark {
    const char *name; /* the id, for tests and messages ("THRESHOLD") */
    uint32_t cp;      /* its glyph, or 0 for a text mark */
    char ascii;       /* its glyph on a screen without UTF-8 */
    const char *sample, *meaning;
    int color, attr;
    int where; /* MARK_TOY, MARK_FULL: the screens that draw it */
};

#define MARK_TOY  1 /* the four panes of a small vocabulary */
#define MARK_FULL 2 /* a full-size step's table */

/* Mark m's row of marks.def. */
const struct mark *mark_of(enum mark_id m);

/* Mark m's glyph at (x, y) in its colour and attributes. */
void mark_put(const struct screen_ctx *c, int x, int y, enum mark_id m);

/* The legend screen (L, and ? from the help screen): every mark of
 * marks.def in its own glyph, colour and attributes, with its meaning. */
void draw_legend(const struct app *a, struct screen *s);

#endif
