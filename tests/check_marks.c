/* The marks of the toy panes (issue 13, parts 2 and 3): fixed scales, the
 * ghost of the value before the filters, one meaning per mark, thresholds
 * beside the bars, and the legend that lists every mark drawn.
 *
 * The numbers are the toy lesson's (lessons/02-toy.ini, seed 002): at
 * temperature 1 the probabilities of [PAD] The cat sat dog on mat are
 * 0.0022 0.1201 0.1792 0.0890 0.0362 0.4407 0.1327. Top-k 3 keeps on, cat
 * and mat, mass 0.4407 + 0.1792 + 0.1327 = 0.7526, so on's final p is
 * 0.4407 / 0.7526 = 0.5856 (by hand). Min-p 0.1 draws its bar at
 * 0.1 x 0.4407 = 0.0441 and removes [PAD] (0.0022) and dog (0.0362).
 *
 * A pane drawn alone into a 40 x 8 rectangle (view_draw_pane) has its bar
 * column at 2 + TOKEN_W (8) + 16 = 26 in the probabilities (the p and the
 * "-> final" columns, always reserved), 40 - 2 - 26 = 12 cells wide.
 */
#include <math.h>
#include <string.h>

#include "data/keys.h"
#include "suites.h"
#include "tui/app.h"
#include "tui/screen_svg.h"
#include "tui/term.h"
#include "tui/view_int.h"

#define TOY_V   7
#define ID_THE  1
#define ID_CAT  2
#define ID_SAT  3
#define ID_ON   5
#define PANE_W  40
#define PANE_H  8
#define PROB_BX 26
#define PROB_BW 12

static struct app A;
static struct view_scratch *VS;

static void setup(void)
{
    struct err e;
    memset(&A, 0, sizeof A);
    VS = view_scratch_new();
    ck_assert_ptr_nonnull(VS);
    ck_assert_msg(app_init(&A, TEST_LESSONS, "toy", NULL, TEST_SOURCE, &e) == 0, "%s", e.msg);
}

static void teardown(void)
{
    app_free(&A);
    view_scratch_free(VS);
}

static void type(const char *spec)
{
    struct key_event ev[256];
    struct err e;
    int n = keys_parse(spec, ev, 256, &e);
    ck_assert_msg(n >= 0, "%s", e.msg);
    for (int i = 0; i < n; i++)
        app_key(&A, ev[i].key);
}

static int is_block(uint32_t cp)
{
    return cp >= 0x2588 && cp <= 0x2590; /* full, the eighths, the right half */
}

/* The length in cells of the bar that starts at x0 on row y: whole blocks,
 * then an eighth block's share (U+2589 seven eighths .. U+258F one). */
static double bar_len(const struct screen *s, int x0, int y)
{
    double len = 0;
    for (int x = x0; x < s->w; x++) {
        uint32_t cp = screen_at(s, x, y)->cp;
        if (cp == 0x2588)
            len += 1;
        else if (cp > 0x2588 && cp < 0x2590)
            return len + (0x2590 - cp) / 8.0;
        else
            break;
    }
    return len;
}

/* The probabilities pane alone, in a 40 x 8 rectangle of a fresh screen. */
static void draw_prob_pane(struct screen *s)
{
    ck_assert_int_eq(screen_init(s, PANE_W, PANE_H, 1), 0);
    view_draw_pane(&A, s, PANE_PROB, (struct rect){ 0, 0, PANE_W, PANE_H });
}

static double p_of(int id)
{
    return A.t.rows[A.t.rank_of[id]].prob;
}

static double final_of(int id)
{
    return A.t.rows[A.t.rank_of[id]].final;
}

START_TEST(test_bar_grows_with_p)
{
    struct screen s;
    type(":temperature 1<Enter>");
    ck_assert_double_eq_tol(p_of(ID_ON), 0.4407, 5e-5);
    draw_prob_pane(&s);
    /* Rows follow ids: on (id 5) is on row 1 + 5. 0.4407 x 12 = 5.29 cells,
     * drawn to the nearest eighth: 5.25. */
    double before = bar_len(&s, PROB_BX, 1 + ID_ON);
    ck_assert_double_eq_tol(before, 0.4407 * PROB_BW, 0.0625 + 1e-9);
    screen_free(&s);

    type(":top-k 3<Enter>");
    ck_assert_double_eq_tol(p_of(ID_ON), 0.4407, 5e-5);
    ck_assert_double_eq_tol(final_of(ID_ON), 0.5856, 5e-5);
    draw_prob_pane(&s);
    double after = bar_len(&s, PROB_BX, 1 + ID_ON);
    /* 0.5856 x 12 = 7.03 cells: longer, on the same scale. */
    ck_assert_double_eq_tol(after, 0.5856 * PROB_BW, 0.0625 + 1e-9);
    ck_assert(after > before + 1.5);
    /* The ghost: the cells up to p before the filters (lround(5.29) = 5)
     * in the bar's colour, those the renormalizing added in the gain's. */
    for (int x = 0; x < 5; x++)
        ck_assert_int_eq(screen_at(&s, PROB_BX + x, 1 + ID_ON)->color, mark_of(MARK_BAR)->color);
    for (int x = 5; x < 7; x++)
        ck_assert_int_eq(screen_at(&s, PROB_BX + x, 1 + ID_ON)->color, mark_of(MARK_GAIN)->color);
    ck_assert_int_ne(mark_of(MARK_BAR)->color, mark_of(MARK_GAIN)->color);
    /* A removed token keeps its p as a ghost: The, 0.1201 x 12 = 1.44 -> 1
     * cell; sat, 0.0890 x 12 = 1.07 -> 1 cell; nothing after it. */
    for (int k = 0; k < 2; k++) {
        int y = 1 + (k ? ID_SAT : ID_THE);
        const struct cell *g = screen_at(&s, PROB_BX, y);
        ck_assert_int_eq(g->cp, mark_of(MARK_GHOST)->cp);
        ck_assert_int_eq(g->color, mark_of(MARK_GHOST)->color);
        ck_assert_int_eq(screen_at(&s, PROB_BX + 1, y)->cp, ' ');
    }
    /* cat: 0.1792 -> 0.2381, 2.15 -> 2.86 cells. */
    ck_assert_double_eq_tol(final_of(ID_CAT), 0.2381, 5e-5);
    ck_assert_double_eq_tol(bar_len(&s, PROB_BX, 1 + ID_CAT), 0.2381 * PROB_BW, 0.0625 + 1e-9);
    screen_free(&s);
}
END_TEST

/* xterm's colour as WCAG's relative luminance. */
static double luminance(uint32_t rgb)
{
    double l = 0, w[3] = { 0.2126, 0.7152, 0.0722 };
    for (int k = 0; k < 3; k++) {
        double c = ((rgb >> (16 - 8 * k)) & 0xff) / 255.0;
        l += w[k] * (c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4));
    }
    return l;
}

static double contrast(uint32_t a, uint32_t b)
{
    double la = luminance(a), lb = luminance(b);
    return (fmax(la, lb) + 0.05) / (fmin(la, lb) + 0.05);
}

START_TEST(test_u_and_threshold_differ)
{
    const struct mark *u = mark_of(MARK_U), *th = mark_of(MARK_THRESHOLD);
    ck_assert_int_ne(u->cp, th->cp);
    ck_assert_int_ne(u->ascii, th->ascii);
    ck_assert_int_ne(u->color, th->color);
    /* Theme 0 has no colours: there the shape and reverse video tell them
     * apart. Themes 1 and 2: different colours, each readable on the page
     * (WCAG's 3:1 for marks), and the titles' text (reverse: the page's
     * colour on the title's) at 4.5:1. */
    ck_assert_int_ne(u->attr & ATTR_REVERSE, th->attr & ATTR_REVERSE);
    for (int theme = 0; theme <= 2; theme++) {
        struct svg_palette p = term_palette(theme);
        if (theme > 0) {
            ck_assert_uint_ne(p.fg[u->color], p.fg[th->color]);
            ck_assert_msg(contrast(p.fg[th->color], p.bg) >= 3.0, "theme %d threshold", theme);
            ck_assert_msg(contrast(p.fg[u->color], p.bg) >= 1.5, "theme %d u", theme);
        }
        ck_assert_msg(contrast(p.fg[COL_TITLE], p.bg) >= 4.5, "theme %d: title %.2f", theme,
                      contrast(p.fg[COL_TITLE], p.bg));
    }
    /* On the projector, what renormalizing added (the gain's colour, beyond
     * the kept bar's) must not be a second cyan beside the kept blue
     * (issue 31: 87 beside 45 read as one bar): 1.3:1 between them. */
    struct svg_palette pj = term_palette(2);
    ck_assert_msg(contrast(pj.fg[COL_ACCENT], pj.fg[COL_KEPT]) >= 1.3, "projector gain %.2f",
                  contrast(pj.fg[COL_ACCENT], pj.fg[COL_KEPT]));
}
END_TEST

/* No threshold between two bar cells, and no gap inside a bar: each row of
 * the bar column is blocks from its start, then at most a threshold. */
static int check_thresholds(const struct screen *s, int bx, int y0, int y1)
{
    int seen = 0;
    for (int y = y0; y < y1; y++)
        for (int x = bx; x < s->w - 1; x++) {
            if (screen_at(s, x, y)->cp != mark_of(MARK_THRESHOLD)->cp)
                continue;
            seen++;
            uint32_t l = screen_at(s, x - 1, y)->cp, r = screen_at(s, x + 1, y)->cp;
            int lb = is_block(l) || l == mark_of(MARK_GHOST)->cp,
                rb = is_block(r) || r == mark_of(MARK_GHOST)->cp;
            ck_assert_msg(!(lb && rb), "a threshold between two bar cells at %d,%d", x, y);
            ck_assert_int_eq(screen_at(s, x, y)->color, mark_of(MARK_THRESHOLD)->color);
        }
    return seen;
}

START_TEST(test_thresholds_beside_bars)
{
    struct screen s;
    type(":temperature 1<Enter>:min-p 0.1<Enter>");
    draw_prob_pane(&s);
    /* The kept bars are whole: nothing but blocks from the bar column to
     * their end (the old screen had █┊█████); under min-p the column runs
     * to the top token's final p, on's 0.4583 (issue 31). */
    for (int id = 0; id < TOY_V; id++) {
        if (A.t.rows[A.t.rank_of[id]].removed_by != TRACE_KEPT)
            continue;
        double len = bar_len(&s, PROB_BX, 1 + id);
        ck_assert_double_eq_tol(len, final_of(id) / final_of(5) * PROB_BW, 0.0625 + 1e-9);
    }
    /* min-p's bar 0.0441 / 0.4583 x 12 = 1.15 -> column 27, on the rows of
     * the two tokens it removed ([PAD], dog), whose bars do not reach it. */
    ck_assert_int_eq(check_thresholds(&s, PROB_BX, 1, PANE_H), 2);
    char row[256];
    screen_row_text(&s, 0, row, sizeof row);
    ck_assert_msg(strstr(row, "0.0441") && strstr(row, "kept 5/7"), "title: %s", row);
    screen_free(&s);

    /* Top-p 0.9 on the cumulative (bar column 2 + 8 + 7 = 17, 21 cells). */
    type("x:temperature 1<Enter>:top-p 0.9<Enter>");
    ck_assert_int_eq(screen_init(&s, PANE_W, PANE_H + 2, 1), 0);
    view_draw_pane(&A, &s, PANE_CUM, (struct rect){ 0, 0, PANE_W, PANE_H });
    ck_assert_int_ge(check_thresholds(&s, 17, 1, PANE_H), 5);
    screen_free(&s);
}
END_TEST

/* The entry of marks.def a drawn cell is, or NULL: blocks of any length are
 * the full block's marks, told apart by colour. */
static const struct mark *mark_for(const struct cell *c)
{
    uint32_t cp = is_block(c->cp) ? 0x2588 : c->cp;
    for (int m = 0; m < MARK_COUNT; m++)
        if (mark_of(m)->cp == cp && mark_of(m)->color == c->color)
            return mark_of(m);
    return NULL;
}

/* Every glyph outside ASCII below the panes' titles, on screens with each
 * mark on them, is a row of marks.def, which the legend prints. */
START_TEST(test_marks_in_legend)
{
    static const char *const STATES[] = {
        "",
        ":temperature 1<Enter>:top-k 3<Enter>u",
        ":temperature 1<Enter>:min-p 0.1<Enter>u",
        ":temperature 1<Enter>:top-p 0.9<Enter>u/cat<Enter>",
        ":temperature 0.4<Enter>:shift 9<Enter>",
    };
    int checked = 0, kinds[MARK_COUNT] = { 0 };
    for (size_t k = 0; k < sizeof STATES / sizeof STATES[0]; k++) {
        type("x");
        type(STATES[k]);
        struct screen s;
        ck_assert_int_eq(screen_init(&s, 120, 40, 1), 0);
        view_render(&A, &s, VS);
        struct layout l;
        layout_compute(120, 40, A.t.vocab_size, 0, &l);
        for (int p = 0; p < PANE_COUNT; p++) {
            struct rect r = l.pane[p];
            for (int y = r.y + 1; y < r.y + r.h; y++)
                for (int x = r.x; x < r.x + r.w; x++) {
                    const struct cell *c = screen_at(&s, x, y);
                    if (c->cp < 0x80)
                        continue;
                    const struct mark *m = mark_for(c);
                    ck_assert_msg(m, "state %zu: U+%04X colour %d at %d,%d is in no mark", k,
                                  (unsigned)c->cp, c->color, x, y);
                    kinds[m - mark_of(0)]++;
                    checked++;
                }
        }
        screen_free(&s);
    }
    ck_assert_int_gt(checked, 100);
    static const enum mark_id SEEN[] = { MARK_BAR,   MARK_GAIN,      MARK_GHOST, MARK_NEG,
                                         MARK_AXIS,  MARK_THRESHOLD, MARK_U,     MARK_FOUND,
                                         MARK_FINAL, MARK_REMOVED };
    for (size_t i = 0; i < sizeof SEEN / sizeof SEEN[0]; i++)
        ck_assert_msg(kinds[SEEN[i]] > 0, "mark %s never drawn", mark_of(SEEN[i])->name);
}
END_TEST

/* The legend screen shows every glyph mark in its own colour. */
START_TEST(test_legend_screen)
{
    type("L");
    ck_assert_int_eq(A.mode, MODE_LEGEND);
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 80, 24, 1), 0);
    view_render(&A, &s, VS);
    for (int m = 0; m < MARK_COUNT; m++) {
        const struct mark *k = mark_of(m);
        if (!(k->where & MARK_TOY))
            continue;
        int found = 0;
        for (int y = 0; y < s.h && !found; y++)
            for (int x = 0; x < s.w && !found; x++) {
                const struct cell *c = screen_at(&s, x, y);
                found = k->cp ? (is_block(k->cp) ? is_block(c->cp) : c->cp == k->cp) &&
                                    c->color == k->color && c->attr == k->attr
                              : c->color == k->color && c->attr == k->attr && c->cp != ' ';
            }
        ck_assert_msg(found, "the legend lacks %s", k->name);
    }
    screen_free(&s);
    /* Any key closes it; ? goes back to the keys, whose ?, Space, PgDn
     * show it again. */
    type("?");
    ck_assert_int_eq(A.mode, MODE_HELP);
    type("<Space>");
    ck_assert_int_eq(A.mode, MODE_LEGEND);
    type("q");
    ck_assert_int_eq(A.mode, MODE_NORMAL);
    type("??");
    ck_assert_int_eq(A.mode, MODE_LEGEND);
    type("x");
    ck_assert_int_eq(A.mode, MODE_NORMAL);
    type("?x");
    ck_assert_int_eq(A.mode, MODE_NORMAL);
}
END_TEST

/* The rows of s joined, for a search across lines. */
static void screen_all_text(const struct screen *s, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int y = 0; y < s->h && used + 2 < n; y++) {
        used += screen_row_text(s, y, buf + used, n - used - 1);
        buf[used++] = ' ', buf[used] = '\0';
    }
}

/* Min-p's bar stands where it can be seen (issue 31): on the toy at T 1,
 * min-p 0.1 cuts at 0.1 x 0.4407 = 0.0441, half a cell of a 0-to-1 scale
 * 12 cells wide; the bars now run to the top token's final p (0.4583), so
 * dog (0.0362) shows its ghost cell left of the bar, and the bar stands
 * lround(12 x 0.0441 / 0.4583) = 1 cell from the column's start. */
START_TEST(test_min_p_bar_is_visible)
{
    type("x");
    type(":temperature 1<Enter>:min-p 0.1<Enter>");
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 120, 40, 1), 0);
    view_render(&A, &s, VS);
    int seen = 0;
    char row[1024];
    for (int y = 0; y < s.h; y++) {
        screen_row_text(&s, y, row, sizeof row);
        if (strncmp(row, " dog     0.0362", 15) == 0)
            seen |= strstr(row, "\u2592\u2503") != NULL;
    }
    ck_assert_msg(seen, "dog's row has no ghost cell before min-p's bar");
    screen_free(&s);
}
END_TEST

/* On a full-size step the legend lists the table's marks, not the panes'
 * (issue 31: it listed the ghosts and the logits' axis, which that screen
 * never draws); on the toy panes it lists the panes' and says how each
 * filter's line keeps tokens (top-p: up to the first bar that reaches it). */
START_TEST(test_legend_of_each_screen)
{
    static struct app F; /* megabytes of history: not on the stack */
    struct err e;
    ck_assert_msg(app_init(&F, TEST_LESSONS, "real-cat", NULL, TEST_SOURCE, &e) == 0, "%s", e.msg);
    app_key(&F, 'L');
    struct screen s;
    static char all[120 * 40 * 4 + 1];
    ck_assert_int_eq(screen_init(&s, 120, 40, 1), 0);
    view_render(&F, &s, VS);
    screen_all_text(&s, all, sizeof all);
    ck_assert_ptr_nonnull(strstr(all, "the tail line: every token after rank 20"));
    ck_assert_ptr_null(strstr(all, "a ghost"));
    ck_assert_ptr_null(strstr(all, "the logits' zero"));
    app_free(&F);
    type("L");
    view_render(&A, &s, VS);
    screen_all_text(&s, all, sizeof all);
    ck_assert_ptr_nonnull(strstr(all, "a ghost"));
    ck_assert_ptr_null(strstr(all, "the tail line"));
    ck_assert_ptr_nonnull(strstr(all, "keeps the tokens up to the first bar that"));
    screen_free(&s);
}
END_TEST

/* b goes through big mode's two pairs of panes, then back to the four. */
START_TEST(test_big_toggles)
{
    ck_assert_int_eq(A.big, 0);
    type("b");
    ck_assert_int_eq(A.big, 1);
    ck_assert_str_eq(A.msg, "big mode: the logits and the exponentials (b: the probabilities)");
    type("b");
    ck_assert_int_eq(A.big, 2);
    type("b");
    ck_assert_int_eq(A.big, 0);
    ck_assert_str_eq(A.msg, "big mode off: all four panes");
}
END_TEST

/* One format per column: at T = 0.18 on's e^(2.1 / 0.18) = e^11.67 =
 * 116,619 needs an exponent (from 1e5, report.h), cat's e^6.67 = 785.77 would
 * not; the whole column takes the exponent. */
START_TEST(test_exp_column_one_format)
{
    type(":temperature 0.18<Enter>");
    struct screen s;
    ck_assert_int_eq(screen_init(&s, PANE_W, PANE_H, 1), 0);
    view_draw_pane(&A, &s, PANE_EXP, (struct rect){ 0, 0, PANE_W, PANE_H });
    for (int id = 0; id < TOY_V; id++) {
        char row[256];
        screen_row_text(&s, 1 + id, row, sizeof row);
        ck_assert_msg(strchr(row + TOKEN_W, 'e'), "row %d: %s", id, row);
    }
    char row[256];
    screen_row_text(&s, 1 + ID_ON, row, sizeof row);
    ck_assert_msg(strstr(row, "1.166e+05"), "%s", row);
    screen_free(&s);
}
END_TEST

/* Two rows a token when the pane has them: each bar two rows tall. */
START_TEST(test_tall_panes)
{
    type(":temperature 1<Enter>");
    struct screen s;
    int h = 1 + 2 * TOY_V;
    ck_assert_int_eq(screen_init(&s, PANE_W, h, 1), 0);
    view_draw_pane(&A, &s, PANE_PROB, (struct rect){ 0, 0, PANE_W, h });
    for (int id = 0; id < TOY_V; id++) {
        double want = p_of(id) * PROB_BW;
        ck_assert_double_eq_tol(bar_len(&s, PROB_BX, 1 + 2 * id), want, 0.0625 + 1e-9);
        ck_assert_double_eq_tol(bar_len(&s, PROB_BX, 2 + 2 * id), want, 0.0625 + 1e-9);
    }
    screen_free(&s);
}
END_TEST

Suite *suite_marks(void)
{
    Suite *s = suite_create("marks");
    TCase *tc = tcase_create("marks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_bar_grows_with_p);
    tcase_add_test(tc, test_u_and_threshold_differ);
    tcase_add_test(tc, test_thresholds_beside_bars);
    tcase_add_test(tc, test_marks_in_legend);
    tcase_add_test(tc, test_legend_screen);
    tcase_add_test(tc, test_legend_of_each_screen);
    tcase_add_test(tc, test_min_p_bar_is_visible);
    tcase_add_test(tc, test_big_toggles);
    tcase_add_test(tc, test_exp_column_one_format);
    tcase_add_test(tc, test_tall_panes);
    suite_add_tcase(s, tc);
    return s;
}
