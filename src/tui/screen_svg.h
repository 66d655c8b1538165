/* screen_svg.h - a screen as an SVG 1.1 picture, for slides and handouts.
 *
 * The picture is the screen cell for cell: each cell SVG_CELL_W x
 * SVG_CELL_H pixels, the text in a monospace font with every character
 * placed at its own cell (so no font can shift a column), the block
 * elements (U+2580-U+259F: the bars) drawn as rectangles, so that bars have
 * the same length whatever font the viewer has. No curses here: the
 * colours come in a palette (term_palette gives the themes').
 */
#ifndef LOGITLAB_SCREEN_SVG_H
#define LOGITLAB_SCREEN_SVG_H

#include <stdint.h>
#include <stdio.h>

#include "tui/screen.h"

#define SVG_CELL_W    9    /* pixels per column */
#define SVG_CELL_H    18   /* pixels per row */
#define SVG_BASELINE  14   /* the text's baseline, from the top of its row */
#define SVG_FONT_SIZE 15   /* a monospace font's advance is about 0.6 em: 9 px */
#define SVG_DIM       0.55 /* the opacity of dim cells */

/* The colours of a theme as a picture shows them. */
struct svg_palette {
    uint32_t fg[COL_COUNT]; /* each role's colour, 0xRRGGBB */
    uint32_t bg;            /* the page's */
    int all_bold;           /* every cell bold (the projector theme) */
    int no_dim;             /* dim cells drawn as the others (the projector theme) */
};

/* Writes s to out as an SVG 1.1 document in the colours of p: a rectangle
 * of the page's colour, then row by row a rectangle behind each run of
 * reverse-video cells (in the cells' colour, the text in the page's), the
 * block elements as rectangles (class "blk"; the shades as a share of the
 * colour), and one <text> per run of cells of one colour and attribute,
 * its x a list of every character's column (bold: font-weight, dim:
 * fill-opacity SVG_DIM, underline: text-decoration). Characters are
 * escaped for XML (&amp; &lt; &gt; &quot;); one that XML cannot hold shows
 * as U+FFFD. Returns 0, or -1 when out has an error. */
int screen_write_svg(const struct screen *s, struct svg_palette p, FILE *out);

#endif
