/* screen_svg.c - a screen as an SVG 1.1 picture (screen_svg.h).
 *
 * Each row is written on a line of its own: the rectangles behind its
 * reverse-video runs, its block elements, then its text runs. A run keeps
 * the spaces inside it (xml:space="preserve") but gives every character its
 * own x, so the columns hold even in a font whose advance is not 9 px, and
 * the characters stay in cell order as a terminal shows them, right-to-left
 * scripts included (bidi-override).
 */
#include "tui/screen_svg.h"

#include <string.h>

#include "base/utf8.h"

#define EIGHTHS 8

/* What the cell at x shows: its colour role, its attributes after the
 * theme's rules, the colour of its glyph (ink) and behind it (paper; only
 * in reverse video, else the page shows). */
struct look {
    int color, attr;
    uint32_t ink, paper;
};

static struct look look_of(const struct cell *c, const struct svg_palette *p)
{
    struct look l = { c->color < COL_COUNT ? c->color : COL_DEFAULT, c->attr, 0, 0 };
    if (p->all_bold)
        l.attr |= ATTR_BOLD;
    if (p->no_dim)
        l.attr &= ~ATTR_DIM;
    l.ink = p->fg[l.color];
    if (l.attr & ATTR_REVERSE) {
        l.paper = l.ink;
        l.ink = p->bg;
    }
    return l;
}

static int same_look(struct look a, struct look b)
{
    return a.attr == b.attr && a.ink == b.ink && a.paper == b.paper;
}

/* The block elements, U+2580..U+259F: drawn as rectangles, not glyphs. */
static int is_block(uint32_t cp)
{
    return cp >= 0x2580 && cp <= 0x259F;
}

/* Block element cp as rectangles in eighths of the cell, each {x, y, w,
 * h}; returns how many, and in *quarters the share of the colour they
 * show (4: solid; the shades 1 to 3). */
static int block_rects(uint32_t cp, int r[4][4], int *quarters)
{
    /* U+2596..U+259F by quadrant: bit 0 upper left, 1 upper right, 2 lower
     * left, 3 lower right. */
    static const unsigned char QUADRANTS[10] = { 4, 8, 1, 13, 9, 7, 11, 2, 6, 14 };
    static const int QUAD_AT[4][2] = { { 0, 0 }, { 4, 0 }, { 0, 4 }, { 4, 4 } };
    int one[4] = { 0, 0, EIGHTHS, EIGHTHS };
    *quarters = 4;
    if (cp >= 0x2581 && cp <= 0x2588) { /* lower one eighth .. full block */
        one[1] = (int)(0x2588 - cp);
        one[3] = (int)(cp - 0x2580);
    } else if (cp >= 0x2589 && cp <= 0x258F) { /* left seven eighths .. one eighth */
        one[2] = (int)(0x2590 - cp);
    } else if (cp == 0x2580) { /* upper half */
        one[3] = 4;
    } else if (cp == 0x2590) { /* right half */
        one[0] = 4, one[2] = 4;
    } else if (cp >= 0x2591 && cp <= 0x2593) { /* light, medium, dark shade */
        *quarters = (int)(cp - 0x2590);
    } else if (cp == 0x2594) { /* upper one eighth */
        one[3] = 1;
    } else if (cp == 0x2595) { /* right one eighth */
        one[0] = 7, one[2] = 1;
    } else {
        int n = 0;
        for (int q = 0; q < 4; q++)
            if (QUADRANTS[cp - 0x2596] & (1u << q)) {
                int quad[4] = { QUAD_AT[q][0], QUAD_AT[q][1], 4, 4 };
                for (int i = 0; i < 4; i++)
                    r[n][i] = quad[i];
                n++;
            }
        return n;
    }
    for (int i = 0; i < 4; i++)
        r[0][i] = one[i];
    return 1;
}

/* A length in pixels: a multiple of 1/8 px, written with no more digits
 * than it needs ("1078.875", "9"). */
static void put_px(FILE *out, double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.3f", v);
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '0')
        buf[--n] = '\0';
    if (n > 0 && buf[n - 1] == '.')
        buf[--n] = '\0';
    fputs(buf, out);
}

/* The colour and attributes of a glyph (text or block) as SVG attributes. */
static void put_ink(FILE *out, struct look l, double opacity)
{
    fprintf(out, " fill=\"#%06x\"", (unsigned)l.ink);
    if (l.attr & ATTR_DIM)
        opacity *= SVG_DIM;
    if (opacity < 1.0)
        fprintf(out, " fill-opacity=\"%.4g\"", opacity);
}

/* One character of text content: XML's specials as entities, anything
 * XML 1.0 cannot hold (or a control character) as U+FFFD, the rest as
 * UTF-8. */
static void put_char(FILE *out, uint32_t cp)
{
    static const char *const SPECIAL[] = {
        ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;"
    };
    if (cp < sizeof SPECIAL / sizeof SPECIAL[0] && SPECIAL[cp]) {
        fputs(SPECIAL[cp], out);
        return;
    }
    if (cp < 0x20 || utf8_cp_is_control(cp) || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0xFFFE ||
        cp == 0xFFFF || cp > 0x10FFFF)
        cp = 0xFFFD;
    if (cp < 0x80) {
        fputc((int)cp, out);
    } else if (cp < 0x800) {
        fputc((int)(0xC0 | (cp >> 6)), out);
        fputc((int)(0x80 | (cp & 0x3F)), out);
    } else if (cp < 0x10000) {
        fputc((int)(0xE0 | (cp >> 12)), out);
        fputc((int)(0x80 | ((cp >> 6) & 0x3F)), out);
        fputc((int)(0x80 | (cp & 0x3F)), out);
    } else {
        fputc((int)(0xF0 | (cp >> 18)), out);
        fputc((int)(0x80 | ((cp >> 12) & 0x3F)), out);
        fputc((int)(0x80 | ((cp >> 6) & 0x3F)), out);
        fputc((int)(0x80 | (cp & 0x3F)), out);
    }
}

/* The rectangles behind row y's reverse-video cells, one per run of one
 * colour. */
static void write_paper(const struct screen *s, const struct svg_palette *p, int y, FILE *out)
{
    for (int x = 0; x < s->w;) {
        struct look l = look_of(screen_at(s, x, y), p);
        if (!(l.attr & ATTR_REVERSE)) {
            x++;
            continue;
        }
        int end = x + 1;
        while (end < s->w) {
            struct look m = look_of(screen_at(s, end, y), p);
            if (!(m.attr & ATTR_REVERSE) || m.paper != l.paper)
                break;
            end++;
        }
        fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%06x\"/>",
                x * SVG_CELL_W, y * SVG_CELL_H, (end - x) * SVG_CELL_W, SVG_CELL_H,
                (unsigned)l.paper);
        x = end;
    }
}

/* Row y's block elements, each as its rectangles. */
static void write_blocks(const struct screen *s, const struct svg_palette *p, int y, FILE *out)
{
    const double ex = (double)SVG_CELL_W / EIGHTHS, ey = (double)SVG_CELL_H / EIGHTHS;
    for (int x = 0; x < s->w; x++) {
        const struct cell *c = screen_at(s, x, y);
        if (!is_block(c->cp))
            continue;
        int r[4][4], quarters;
        int n = block_rects(c->cp, r, &quarters);
        for (int i = 0; i < n; i++) {
            fputs("<rect class=\"blk\" x=\"", out);
            put_px(out, x * SVG_CELL_W + r[i][0] * ex);
            fputs("\" y=\"", out);
            put_px(out, y * SVG_CELL_H + r[i][1] * ey);
            fputs("\" width=\"", out);
            put_px(out, r[i][2] * ex);
            fputs("\" height=\"", out);
            put_px(out, r[i][3] * ey);
            fputc('"', out);
            put_ink(out, look_of(c, p), quarters / 4.0);
            fputs("/>", out);
        }
    }
}

/* A cell that a text run draws: not the right half of a wide character,
 * not a block element. */
static int is_text(uint32_t cp)
{
    return cp != 0 && !is_block(cp);
}

/* A character that gets a run of its own: a wide one, which a font
 * without it replaces by a fallback that may take the x of the
 * characters after it (librsvg does), and one past the Basic Multilingual
 * Plane, whose x some viewers count in UTF-16 units. */
static int is_alone(uint32_t cp)
{
    return cp > 0xFFFF || utf8_cp_width(cp) == 2;
}

/* The end (exclusive) of the run that starts at x: the cells of one look
 * up to a block, a wide character's own run or another look, less the
 * spaces at its end (they draw nothing unless underlined). */
static int run_end(const struct screen *s, const struct svg_palette *p, int x, int y)
{
    const struct cell *c = screen_at(s, x, y);
    struct look l = look_of(c, p);
    int end = x + 1, last = x + 1;
    if (is_alone(c->cp))
        return end;
    for (; end < s->w; end++) {
        const struct cell *d = screen_at(s, end, y);
        if (!is_text(d->cp) || is_alone(d->cp) || !same_look(look_of(d, p), l))
            break;
        if (d->cp != ' ' || (l.attr & ATTR_UNDERLINE))
            last = end + 1;
    }
    return last;
}

static void write_run(const struct screen *s, const struct svg_palette *p, int x, int end, int y,
                      FILE *out)
{
    struct look l = look_of(screen_at(s, x, y), p);
    fputs("<text x=\"", out);
    for (int i = x; i < end; i++)
        if (screen_at(s, i, y)->cp != 0)
            fprintf(out, i > x ? " %d" : "%d", i * SVG_CELL_W);
    fprintf(out, "\" y=\"%d\"", y * SVG_CELL_H + SVG_BASELINE);
    put_ink(out, l, 1.0);
    if (l.attr & ATTR_BOLD)
        fputs(" font-weight=\"bold\"", out);
    if (l.attr & ATTR_UNDERLINE)
        fputs(" text-decoration=\"underline\"", out);
    fputc('>', out);
    for (int i = x; i < end; i++)
        if (screen_at(s, i, y)->cp != 0)
            put_char(out, screen_at(s, i, y)->cp);
    fputs("</text>", out);
}

/* Row y's text, one <text> per run. */
static void write_text(const struct screen *s, const struct svg_palette *p, int y, FILE *out)
{
    for (int x = 0; x < s->w;) {
        const struct cell *c = screen_at(s, x, y);
        if (!is_text(c->cp) || (c->cp == ' ' && !(look_of(c, p).attr & ATTR_UNDERLINE))) {
            x++;
            continue;
        }
        int end = run_end(s, p, x, y);
        write_run(s, p, x, end, y, out);
        x = end;
    }
}

int screen_write_svg(const struct screen *s, struct svg_palette p, FILE *out)
{
    int w = s->w * SVG_CELL_W, h = s->h * SVG_CELL_H;
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\">\n"
            "<rect width=\"%d\" height=\"%d\" fill=\"#%06x\"/>\n"
            "<g font-family=\"DejaVu Sans Mono, Menlo, Consolas, Liberation Mono, monospace\" "
            "font-size=\"%d\" xml:space=\"preserve\" direction=\"ltr\" "
            "unicode-bidi=\"bidi-override\">\n",
            w, h, w, h, w, h, (unsigned)p.bg, SVG_FONT_SIZE);
    for (int y = 0; y < s->h; y++) { /* row y on line y + 5 of the file */
        write_paper(s, &p, y, out);
        write_blocks(s, &p, y, out);
        write_text(s, &p, y, out);
        fputc('\n', out);
    }
    fputs("</g>\n</svg>\n", out);
    return ferror(out) ? -1 : 0;
}
