/* view_legend.c - the marks of the toy panes (marks.def) and the legend
 * screen that explains them: the panes take each mark's glyph, colour and
 * attributes from the same row the legend prints, so the two cannot
 * disagree.
 */
#include <stdlib.h>
#include <string.h>

#include "tui/view_int.h"
#include "base/utf8.h"

#define LEGEND_MAX_W    100
#define LEGEND_SAMPLE_W 19 /* the column of the samples */

static const struct mark MARKS[MARK_COUNT] = {
#define TOY  MARK_TOY
#define FULL MARK_FULL
#define MARK(id, cp_, ascii_, sample_, color_, attr_, where_, meaning_)                            \
    [MARK_##id] = { #id, cp_, ascii_, sample_, meaning_, color_, attr_, where_ },
#include "tui/marks.def"
#undef MARK
#undef TOY
#undef FULL
};

const struct mark *mark_of(enum mark_id m)
{
    return &MARKS[m >= 0 && m < MARK_COUNT ? m : MARK_BAR];
}

void mark_put(const struct screen_ctx *c, int x, int y, enum mark_id m)
{
    const struct mark *k = mark_of(m);
    ctx_put(c, x, y, ctx_glyph(c, k->cp, k->ascii), k->color, k->attr);
}

/* The sample of mark k at (x, y): its text, or its glyph; on a screen
 * without UTF-8 each code point outside ASCII becomes the mark's stand-in. */
static void draw_sample(struct screen *s, int x, int y, const struct mark *k)
{
    char buf[64];
    if (!k->sample) {
        screen_put(s, x, y, screen_glyph(s, k->cp, k->ascii), k->color, k->attr);
        return;
    }
    if (s->utf8) {
        screen_text(s, x, y, LEGEND_SAMPLE_W - 2, k->sample, k->color, k->attr);
        return;
    }
    size_t n = 0, len = strlen(k->sample);
    for (size_t i = 0; i < len && n + 1 < sizeof buf;) {
        uint32_t cp;
        int used = utf8_decode(k->sample + i, len - i, &cp);
        buf[n++] = cp < 0x80 ? (char)cp : k->ascii ? k->ascii : '?';
        i += used > 0 ? (size_t)used : 1;
    }
    buf[n] = '\0';
    screen_text(s, x, y, LEGEND_SAMPLE_W - 2, buf, k->color, k->attr);
}

void draw_legend(const struct app *a, struct screen *s)
{
    /* The marks of the screen the legend was opened from: the panes', or a
     * full-size step's table (view.c draws one for a fast source). */
    int where = source_is_fast(&a->source) ? MARK_FULL : MARK_TOY;
    int w = LEGEND_MAX_W < s->w - 2 ? LEGEND_MAX_W : s->w - 2;
    struct lines *wrapped = malloc(sizeof *wrapped);
    screen_clear(s);
    if (!wrapped)
        return;
    /* Wrapped first, to centre the whole on the screen. */
    int total = 0;
    for (int m = 0; m < MARK_COUNT; m++) {
        if (!(MARKS[m].where & where))
            continue;
        wrapped->n = 0;
        add_wrapped(wrapped, "", MARKS[m].meaning, w - 4 - LEGEND_SAMPLE_W, COL_DEFAULT, 0);
        total += wrapped->n;
    }
    int h = total + 2 < s->h ? total + 2 : s->h;
    int x0 = (s->w - w) / 2, y = (s->h - h) / 2;
    screen_text(s, x0 + 2, y++, w - 4, "Marks and colours (any key closes this; ? lists the keys)",
                COL_ACCENT, ATTR_BOLD);
    for (int m = 0; m < MARK_COUNT && y < s->h; m++) {
        if (!(MARKS[m].where & where))
            continue;
        wrapped->n = 0;
        add_wrapped(wrapped, "", MARKS[m].meaning, w - 4 - LEGEND_SAMPLE_W, COL_DEFAULT, 0);
        draw_sample(s, x0 + 2, y, &MARKS[m]);
        for (int k = 0; k < wrapped->n && y < s->h; k++)
            screen_text(s, x0 + 2 + LEGEND_SAMPLE_W, y++, w - 4 - LEGEND_SAMPLE_W, wrapped->text[k],
                        COL_DEFAULT, 0);
    }
    free(wrapped);
}
