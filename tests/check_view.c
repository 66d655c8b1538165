/* The layout over many terminal sizes, and the drawing: no pane overlaps
 * another or leaves the screen, and no part writes outside its rectangle. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "data/keys.h"
#include "tui/app.h"
#include "suites.h"
#include "tui/view.h"

static int inside(struct rect r, int w, int h)
{
    return r.x >= 0 && r.y >= 0 && r.w >= 0 && r.h >= 0 && r.x + r.w <= w && r.y + r.h <= h;
}

static int overlap(struct rect a, struct rect b)
{
    if (a.w == 0 || a.h == 0 || b.w == 0 || b.h == 0)
        return 0;
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static const int VOCABS[] = { 3, 7, 8, 50, 1000, 128256 };

/* One layout: every part inside the screen, none over another, the panes
 * big enough to draw (in big mode: the two it shows), and in the stacked
 * layout every row belongs to some part. */
static void check_layout_at(int w, int h, int v, int big)
{
    struct layout l;
    layout_compute(w, h, v, big, &l);
    ck_assert_msg(l.ok, "%dx%d refused", w, h);
    struct rect parts[] = { l.title,          l.lesson,          l.pane[PANE_LOGITS],
                            l.pane[PANE_EXP], l.pane[PANE_PROB], l.pane[PANE_CUM],
                            l.status,         l.bottom };
    int n = (int)(sizeof parts / sizeof parts[0]);
    for (int i = 0; i < n; i++) {
        ck_assert_msg(inside(parts[i], w, h), "%dx%d V=%d big %d: part %d leaves the screen", w, h,
                      v, big, i);
        for (int j = i + 1; j < n; j++)
            ck_assert_msg(!overlap(parts[i], parts[j]),
                          "%dx%d V=%d big %d: parts %d and %d overlap", w, h, v, big, i, j);
    }
    int shown = 0, rows = 0;
    for (int p = 0; p < PANE_COUNT; p++) {
        if (big && l.pane[p].w == 0)
            continue;
        shown++;
        ck_assert_int_ge(l.pane[p].w, 38);
        ck_assert_int_ge(l.pane[p].h, 2); /* a title and at least one row */
    }
    ck_assert_int_eq(shown, big ? 2 : 4);
    ck_assert_int_eq(l.side, !big && w >= VIEW_SIDE_W);
    if (!l.side)
        ck_assert_int_ge(l.lesson.h, 2); /* the text line and one of text */
    else
        ck_assert_int_ge(l.lesson.w, 40);
    if (!l.side) {
        for (int i = 0; i < n; i++)
            if (parts[i].x == 0 && parts[i].w > 0)
                rows += parts[i].h;
        ck_assert_int_eq(rows, h);
    }
}

START_TEST(test_layout_fits_every_size)
{
    int sizes = 0;
    for (size_t v = 0; v < sizeof VOCABS / sizeof VOCABS[0]; v++)
        for (int w = VIEW_MIN_W; w <= 320; w += 7)
            for (int h = VIEW_MIN_H; h <= 120; h += 5)
                for (int big = 0; big <= 2; big++) {
                    check_layout_at(w, h, VOCABS[v], big);
                    sizes++;
                }
    ck_assert_int_gt(sizes, 3000);
}
END_TEST

START_TEST(test_layout_uses_room_for_rows)
{
    struct layout small, big;
    layout_compute(80, 24, 7, 0, &small);
    layout_compute(80, 60, 128256, 0, &big);
    /* 7 tokens at 80x24: each pane has its title and all 7 rows. */
    ck_assert_int_eq(small.pane[PANE_PROB].h, 8);
    ck_assert_int_gt(big.pane[PANE_PROB].h, small.pane[PANE_PROB].h);
    layout_compute(132, 43, 7, 0, &big);
    ck_assert(big.side);
    ck_assert_int_gt(big.pane[PANE_EXP].w, small.pane[PANE_EXP].w); /* wider bars */
    /* Beside the text the panes take the height: at 120x40, 40 rows less the
     * title, two status lines and the bottom line are 36, 18 a pane. */
    layout_compute(120, 40, 7, 0, &big);
    ck_assert_int_eq(big.pane[PANE_LOGITS].h, 18);
    ck_assert_int_eq(big.pane[PANE_CUM].h, 18);
    /* Stacked at 80x70 (66 rows under the title): two rows per token, 1 + 14
     * a pane, leave 36 rows to the text, at least half of 66; at 80x60 (56
     * rows) they would leave 26, less than half: one row a token. */
    layout_compute(80, 70, 7, 0, &big);
    ck_assert_int_eq(big.pane[PANE_PROB].h, 15);
    ck_assert_int_eq(big.lesson.h, 36);
    layout_compute(80, 60, 7, 0, &big);
    ck_assert_int_eq(big.pane[PANE_PROB].h, 8);
    /* Big mode at 100x30: two panes side by side under the text line and one
     * line of text, 26 - 2 = 24 rows each. */
    layout_compute(100, 30, 7, 2, &big);
    ck_assert_int_eq(big.pane[PANE_PROB].h, 24);
    ck_assert_int_eq(big.pane[PANE_CUM].w, 50);
    ck_assert_int_eq(big.pane[PANE_LOGITS].w, 0);
}
END_TEST

START_TEST(test_layout_too_small)
{
    struct layout l;
    int sizes[][2] = { { 79, 24 }, { 80, 23 }, { 40, 10 }, { 1, 1 } };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        layout_compute(sizes[i][0], sizes[i][1], 7, 0, &l);
        ck_assert(!l.ok);
    }
}
END_TEST

static struct app A;
static struct view_scratch *VS;

static void app_setup(void)
{
    struct err e;
    ck_assert_msg(app_init(&A, TEST_LESSONS, "toy", NULL, TEST_SOURCE, &e) == 0, "%s", e.msg);
    VS = view_scratch_new();
    ck_assert_ptr_nonnull(VS);
}

static void app_teardown(void)
{
    view_scratch_free(VS);
    app_free(&A);
}

/* Every cell outside r is still blank after drawing into r. */
static void assert_within(const struct screen *s, struct rect r, const char *what, int w, int h)
{
    for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++) {
            if (x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h)
                continue;
            const struct cell *c = screen_at(s, x, y);
            if (c->cp != ' ' || c->attr != 0)
                ck_abort_msg("%s at %dx%d wrote outside at (%d,%d)", what, w, h, x, y);
        }
}

/* The clipped context itself: coordinates start at its corner, and text,
 * cells, fills and bars that reach past any edge are cut there. */
START_TEST(test_context_clips_at_every_edge)
{
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 20, 8, 1), 0);
    struct rect r = { 5, 2, 8, 3 };
    struct screen_ctx c = screen_ctx(&s, r);
    ctx_text(&c, -3, 0, -1, "abcdefghijklmnop", COL_DEFAULT, 0);    /* starts left of it */
    ctx_put(&c, 8, 1, 'X', COL_DEFAULT, ATTR_BOLD);                 /* one past the right */
    ctx_put(&c, 0, -1, 'Y', COL_DEFAULT, ATTR_BOLD);                /* above it */
    ctx_fill(&c, (struct rect){ 6, 2, 5, 5 }, '#', COL_DEFAULT, 0); /* past right and bottom */
    ctx_bar(&c, 2, 1, 20.0, COL_KEPT, 0);                           /* a bar longer than the room */
    assert_within(&s, r, "the context", 20, 8);
    /* What lies inside is where it belongs: "defghijk" from the rectangle's left edge. */
    char row[128];
    screen_row_text(&s, 2, row, sizeof row);
    ck_assert_str_eq(row, "     defghijk");
    /* The fill's corner (6, 2) is the rectangle's last row: two cells of it. */
    ck_assert_int_eq(screen_at(&s, 11, 4)->cp, '#');
    ck_assert_int_eq(screen_at(&s, 12, 4)->cp, '#');
    ck_assert_int_eq(screen_at(&s, 13, 4)->cp, ' ');
    /* The bar starts at (2, 1), screen (7, 3), and fills to the right edge, column 12. */
    ck_assert_int_eq(screen_at(&s, 6, 3)->cp, ' ');
    ck_assert_int_eq(screen_at(&s, 7, 3)->cp, 0x2588);
    ck_assert_int_eq(screen_at(&s, 12, 3)->cp, 0x2588);
    /* A context inside a context is clipped to both. */
    struct screen_ctx in = ctx_sub(&c, (struct rect){ 6, 0, 10, 10 });
    screen_clear(&s);
    ctx_text(&in, 0, 0, -1, "0123456789", COL_DEFAULT, 0);
    assert_within(&s, (struct rect){ 11, 2, 2, 3 }, "a sub-context", 20, 8);
    screen_free(&s);
}
END_TEST

static void check_parts_stay_inside(const char *lesson, const char *keys)
{
    struct err e;
    app_free(&A);
    ck_assert_msg(app_init(&A, TEST_LESSONS, lesson, NULL, TEST_SOURCE, &e) == 0, "%s", e.msg);
    for (const char *k = keys; *k; k++)
        app_key(&A, *k == '_' ? ' ' : *k);
    static const int SIZES[][2] = { { 80, 24 },  { 81, 25 },  { 100, 30 }, { 119, 40 },
                                    { 120, 24 }, { 132, 43 }, { 200, 60 } };
    for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
        int w = SIZES[i][0], h = SIZES[i][1];
        struct layout l;
        layout_compute(w, h, A.t.vocab_size, 0, &l);
        for (int utf8 = 0; utf8 <= 1; utf8++) {
            struct screen s;
            ck_assert_int_eq(screen_init(&s, w, h, utf8), 0);
            for (int p = 0; p < PANE_COUNT; p++) {
                screen_clear(&s);
                view_draw_pane(&A, &s, (enum pane)p, l.pane[p]);
                assert_within(&s, l.pane[p], "a pane", w, h);
            }
            screen_clear(&s);
            view_draw_lesson(&A, &s, l.lesson, l.side, VS);
            assert_within(&s, l.lesson, "the lesson pane", w, h);
            screen_free(&s);
        }
    }
}

START_TEST(test_parts_stay_inside)
{
    check_parts_stay_inside("toy", "");
    check_parts_stay_inside("toy", "TTT_");          /* sampled, taken, adjusted logits */
    check_parts_stay_inside("top-k", "u");           /* removed rows, the u marker */
    check_parts_stay_inside("penalty", "_");         /* penalty warning */
    check_parts_stay_inside("stopping", "___");      /* a stop */
    check_parts_stay_inside("exercise-2", "");       /* hidden numbers */
    check_parts_stay_inside("france", "pppppppppp"); /* top-p line */
}
END_TEST

START_TEST(test_render_small_screen_says_what_it_needs)
{
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 60, 20, 1), 0);
    view_render(&A, &s, VS);
    char row[256];
    screen_row_text(&s, 0, row, sizeof row);
    ck_assert_str_eq(row, "logitlab needs a terminal of at least 80x24.");
    screen_row_text(&s, 1, row, sizeof row);
    ck_assert_str_eq(row, "This one is 60x20: enlarge it, or press q.");
    screen_free(&s);
}
END_TEST

START_TEST(test_render_shows_the_lesson_numbers)
{
    /* Toy step 1 at T = 0.5 (seed 002's temperature table): on at 0.7258. */
    app_command(&A, "temperature 0.5");
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 80, 24, 1), 0);
    view_render(&A, &s, VS);
    int found = 0;
    char row[512];
    for (int y = 0; y < s.h; y++) {
        screen_row_text(&s, y, row, sizeof row);
        found |= strstr(row, " on      0.7258 ") != NULL;
    }
    ck_assert_msg(found, "no row shows on at 0.7258");
    screen_free(&s);
}
END_TEST

START_TEST(test_ascii_screen_has_no_unicode)
{
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 132, 43, 0), 0);
    app_command(&A, "top-p 0.9");
    app_key(&A, 'u');
    view_render(&A, &s, VS);
    for (int i = 0; i < s.w * s.h; i++)
        ck_assert_uint_lt(s.cells[i].cp, 0x80);
    screen_free(&s);
}
END_TEST

/* Types text key by key, a code point each. */
static void type_text(const char *text)
{
    size_t n = strlen(text);
    while (n > 0) {
        uint32_t cp;
        int len = utf8_decode(text, n, &cp);
        ck_assert_int_gt(len, 0);
        app_key(&A, (int)cp);
        text += len;
        n -= (size_t)len;
    }
}

/* The bottom row of A drawn at w x 24, and its cursor's column. */
static int bottom_row(int w, int utf8, char *row, size_t n)
{
    struct screen s;
    ck_assert_int_eq(screen_init(&s, w, 24, utf8), 0);
    view_render(&A, &s, VS);
    screen_row_text(&s, 23, row, n);
    int cursor = -1;
    for (int x = 0; x < w; x++)
        if (screen_at(&s, x, 23)->attr & ATTR_REVERSE)
            cursor = x;
    screen_free(&s);
    return cursor;
}

/* An input line wider than the screen shows its end and the cursor, after
 * a mark that more is hidden to the left (issue 29, part 3: the line
 * showed its first columns and nothing of what was just typed). At 80
 * columns ':' and the mark leave 77 for the text, the cursor's cell the
 * 80th. The end typed: "xyz" (3 columns), U+009B (a C1 control, drawn
 * escaped as \xC2\x9B: 8), 中文 (wide: 4 in UTF-8, one '?' each in ASCII). */
START_TEST(test_a_long_input_line_shows_its_end)
{
    char row[1024], want[1024], a80[81];
    memset(a80, 'a', 80);
    a80[80] = '\0';
    app_key(&A, ':');
    for (int i = 0; i < 200; i++)
        app_key(&A, 'a');
    type_text("xyz\xc2\x9b\u4e2d\u6587");
    ck_assert_int_eq(bottom_row(80, 1, row, sizeof row), 79);
    snprintf(want, sizeof want, ":\u2026%.*sxyz\\xC2\\x9B\u4e2d\u6587", 77 - 15, a80);
    ck_assert_str_eq(row, want);
    ck_assert_int_eq(bottom_row(80, 0, row, sizeof row), 79);
    snprintf(want, sizeof want, ":<%.*sxyz\\xC2\\x9B??", 77 - 13, a80);
    ck_assert_str_eq(row, want);
    /* At 120 columns 117 for the text: 102 a's. */
    ck_assert_int_eq(bottom_row(120, 1, row, sizeof row), 119);
    snprintf(want, sizeof want, ":\u2026%.*s%.*sxyz\\xC2\\x9B\u4e2d\u6587", 80, a80, 102 - 80, a80);
    ck_assert_str_eq(row, want);
    /* 300 combining acutes after 文 (600 bytes, no columns): the line's
     * last 316 bytes are narrower than the row, the line is not; the
     * acutes are not drawn (a cell holds one code point). */
    for (int i = 0; i < 300; i++)
        app_key(&A, 0x0301);
    ck_assert_int_eq(bottom_row(80, 1, row, sizeof row), 79);
    snprintf(want, sizeof want, ":\u2026%.*sxyz\\xC2\\x9B\u4e2d\u6587", 77 - 15, a80);
    ck_assert_str_eq(row, want);
    for (int i = 0; i < 300; i++)
        app_key(&A, AK_BACKSPACE);
    /* A line that fits: no mark, the cursor after it, the hint at the right. */
    app_key(&A, AK_ESC);
    type_text(":top-k 3");
    ck_assert_int_eq(bottom_row(80, 1, row, sizeof row), 8);
    ck_assert_str_eq(row,
                     ":top-k 3                                     name value, Enter runs, Esc "
                     "cancels");
}
END_TEST

/* A key past the line's limit is refused with a message, which takes the
 * second status line when the line itself is full (the limit lowered to
 * 100 bytes, as the fuzz harness does, to draw it at 80 columns). */
START_TEST(test_a_refused_key_is_said_on_screen)
{
    A.input_limit = 100;
    app_key(&A, ':');
    for (int i = 0; i < 101; i++)
        app_key(&A, 'b');
    ck_assert_int_eq(A.input_len, 100);
    struct screen s;
    char row[1024];
    ck_assert_int_eq(screen_init(&s, 80, 24, 1), 0);
    view_render(&A, &s, VS);
    screen_row_text(&s, 22, row, sizeof row);
    ck_assert_str_eq(row, "the input line holds 100 bytes: the key was not added (Enter, Esc)");
    ck_assert_uint_eq(screen_at(&s, 0, 22)->color, COL_WARN);
    screen_free(&s);
}
END_TEST

/* The cells of the logit bar on the row of token name in the logits pane
 * (the first 40 columns at 120x40): whole and partial blocks, a clip mark. */
static int logit_bar_cells(const struct screen *s, const char *name)
{
    char row[1024], head[32];
    snprintf(head, sizeof head, " %s ", name);
    for (int y = 0; y < s->h; y++) {
        screen_row_text(s, y, row, sizeof row);
        if (strncmp(row, head, strlen(head)) != 0)
            continue;
        int n = 0;
        for (int x = 0; x < 40; x++) {
            uint32_t cp = screen_at(s, x, y)->cp;
            n += (cp >= 0x2588 && cp <= 0x258F) || cp == 0x25B8;
        }
        return n;
    }
    ck_abort_msg("no row for %s", name);
    return -1;
}

/* france, :shift 10 (issue 31): the bars keep the gaps between the logits
 * (the same bars as under shift 5, each drawn from its shift's z'), where
 * they all ran off the scale alike, and the panes say why every e^z' grew. */
START_TEST(test_shift_keeps_the_logit_bars_apart)
{
    static struct app F; /* megabytes of history: not on the stack */
    struct err e;
    ck_assert_msg(app_init(&F, TEST_LESSONS, "france", NULL, TEST_SOURCE, &e) == 0, "%s", e.msg);
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 120, 40, 1), 0);
    const char *names[] = { "Paris", "Lyon", "located" };
    int plain[3], shifted[3];
    app_command(&F, "shift 5"); /* bars beside a z' column, as under any shift */
    view_render(&F, &s, VS);
    for (int i = 0; i < 3; i++)
        plain[i] = logit_bar_cells(&s, names[i]);
    app_command(&F, "shift 10");
    ck_assert_double_eq(F.cur.sampler.shift, 10.0);
    view_render(&F, &s, VS);
    for (int i = 0; i < 3; i++) {
        shifted[i] = logit_bar_cells(&s, names[i]);
        ck_assert_int_eq(shifted[i], plain[i]);
    }
    ck_assert_int_gt(shifted[0], shifted[1]);
    ck_assert_int_gt(shifted[1], shifted[2]);
    int said = 0;
    char row[1024];
    for (int y = 0; y < s.h; y++) {
        screen_row_text(&s, y, row, sizeof row);
        said |= strstr(row, "e^z' and sum x e^10.0: p unchanged") != NULL &&
                strstr(row, "bars start at z' = 10.0 (broken axis)") != NULL;
    }
    ck_assert_msg(said, "no line says where the bars start and what e^10 did");
    screen_free(&s);
    app_free(&F);
}
END_TEST

Suite *suite_view(void)
{
    Suite *s = suite_create("view");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_layout_fits_every_size);
    tcase_add_test(core, test_layout_uses_room_for_rows);
    suite_add_tcase(s, core);
    TCase *edge = tcase_create("edge");
    tcase_add_checked_fixture(edge, app_setup, app_teardown);
    tcase_add_test(edge, test_layout_too_small);
    tcase_add_test(edge, test_parts_stay_inside);
    tcase_add_test(edge, test_render_small_screen_says_what_it_needs);
    tcase_add_test(edge, test_render_shows_the_lesson_numbers);
    tcase_add_test(edge, test_ascii_screen_has_no_unicode);
    tcase_add_test(edge, test_context_clips_at_every_edge);
    tcase_add_test(edge, test_a_long_input_line_shows_its_end);
    tcase_add_test(edge, test_a_refused_key_is_said_on_screen);
    tcase_add_test(edge, test_shift_keeps_the_logit_bars_apart);
    tcase_set_timeout(edge, 30);
    suite_add_tcase(s, edge);
    return s;
}
