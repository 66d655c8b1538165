/* screen.h - a virtual screen: a grid of cells (code point, colour, attribute).
 *
 * Everything the program shows is drawn here first; term.c copies a screen to
 * the terminal, the headless mode and the tests read it back as text with
 * screen_dump(). No curses here.
 */
#ifndef LOGITLAB_SCREEN_H
#define LOGITLAB_SCREEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Roles, not colours: term.c maps each to a colour pair, or to nothing on a
 * monochrome terminal, where the attributes alone carry the meaning. */
enum color {
    COL_DEFAULT,
    COL_TITLE,     /* bars of pane titles */
    COL_KEPT,      /* kept tokens, positive bars */
    COL_NEG,       /* negative logits */
    COL_REMOVED,   /* tokens a stage removed */
    COL_CHOSEN,    /* the drawn token */
    COL_THRESHOLD, /* the thresholds: the top-p and min-p cut (the u marker is COL_CHOSEN) */
    COL_ACCENT,    /* numbers to look at: sums, the changed logit */
    COL_WARN,      /* warnings and wrong answers */
    COL_GOOD,      /* right answers */
    COL_STATUS,    /* the status line */
    COL_COUNT
};

enum {
    ATTR_BOLD = 1,
    ATTR_DIM = 2,
    ATTR_REVERSE = 4,
    ATTR_UNDERLINE = 8,
};

struct cell {
    uint32_t cp;   /* code point; 0 marks the right half of a wide character */
    uint8_t color; /* enum color */
    uint8_t attr;  /* ATTR_* */
};

struct screen {
    int w, h;
    int utf8;    /* 1: block characters and box drawing; 0: ASCII only */
    int picture; /* 1: a picture for slides (--format svg): no times, no key hints */
    struct cell *cells;
    /* Writes cut by their clip or their width where the text left out holds
     * a digit -- a number cut or lost -- since the last screen_clear, and
     * where the first one was cut: the tests' check that no number is
     * clipped (a layout must make room, or shorten by words). */
    int cut_digits;
    int cut_x, cut_y;
};

struct rect {
    int x, y, w, h;
};

/* Allocates a w x h screen of blanks. Returns 0, or -1 if out of memory. */
int screen_init(struct screen *s, int w, int h, int utf8);
void screen_free(struct screen *s);

/* Blanks every cell. */
void screen_clear(struct screen *s);

/* Writes UTF-8 text at (x, y), clipped to the screen and to max columns (max
 * < 0: to the right edge). Control bytes and invalid UTF-8 show as '?'. A
 * wide character that would not fit is left out. Returns the columns used. */
int screen_text(struct screen *s, int x, int y, int max, const char *text, int color, int attr);

/* printf into screen_text. */
int screen_printf(struct screen *s, int x, int y, int max, int color, int attr, const char *fmt,
                  ...) __attribute__((format(printf, 7, 8)));

/* Sets one cell to code point cp (a width-1 character). */
void screen_put(struct screen *s, int x, int y, uint32_t cp, int color, int attr);

/* Fills a rectangle with cp. */
void screen_fill(struct screen *s, struct rect r, uint32_t cp, int color, int attr);

/* Draws a horizontal bar of length len (in cells, fractional) starting at x:
 * eighth blocks in UTF-8, '#' in ASCII. */
void screen_bar(struct screen *s, int x, int y, double len, int color, int attr);

/* The same bar growing leftward from x_end (exclusive): whole cells, and a
 * right half block when the fraction is at least a half. */
void screen_bar_left(struct screen *s, int x_end, int y, double len, int color, int attr);

/* The cell at (x, y), or NULL outside. */
const struct cell *screen_at(const struct screen *s, int x, int y);

/* Writes the screen as text, one line per row, trailing blanks removed. */
void screen_dump(const struct screen *s, FILE *out);

/* Row y as UTF-8 text into buf (trailing blanks removed). */
size_t screen_row_text(const struct screen *s, int y, char *buf, size_t n);

/* The glyph to use for a role when the screen has no UTF-8: ASCII stand-ins. */
uint32_t screen_glyph(const struct screen *s, uint32_t utf8_cp, char ascii);

/* ---- a clipped drawing context ----------------------------------------------------- */

/* One part of the screen to draw in, in the manner of tmux's
 * screen_write_ctx: the calls below take coordinates relative to the
 * part's rectangle r and write nothing outside it, so a part cannot spill
 * into its neighbours whatever its numbers. */
struct screen_ctx {
    struct screen *s;
    struct rect r;    /* the part, in screen coordinates: (0, 0) of the calls is (r.x, r.y) */
    struct rect clip; /* where the calls may write: r within the screen (and the parent) */
};

/* A context for rectangle r of s. */
struct screen_ctx screen_ctx(struct screen *s, struct rect r);

/* A context for rectangle r given relative to c, clipped to c as well. */
struct screen_ctx ctx_sub(const struct screen_ctx *c, struct rect r);

/* The calls of the screen, relative to c->r and clipped to c->clip: max < 0
 * in ctx_text and ctx_printf is up to the right edge of the rectangle. */
int ctx_text(const struct screen_ctx *c, int x, int y, int max, const char *text, int color,
             int attr);
int ctx_printf(const struct screen_ctx *c, int x, int y, int max, int color, int attr,
               const char *fmt, ...) __attribute__((format(printf, 7, 8)));
void ctx_put(const struct screen_ctx *c, int x, int y, uint32_t cp, int color, int attr);
void ctx_fill(const struct screen_ctx *c, struct rect r, uint32_t cp, int color, int attr);
void ctx_bar(const struct screen_ctx *c, int x, int y, double len, int color, int attr);
void ctx_bar_left(const struct screen_ctx *c, int x_end, int y, double len, int color, int attr);

/* screen_glyph for the context's screen. */
uint32_t ctx_glyph(const struct screen_ctx *c, uint32_t utf8_cp, char ascii);

#endif
