/* The screen at the sizes a classroom gives (issue 13): every lesson, at
 * 80x24, 100x30, 120x40 and 200x60, in the states a class goes through,
 * drawn whole -- and no write anywhere on it cut a number (the screen
 * counts a clipped write whose hidden rest holds a digit: a layout must
 * make room or shorten by words); and a toy step's panes use their rows.
 */
#include <stdio.h>
#include <string.h>

#include "tui/app.h"
#include "suites.h"
#include "tui/view.h"

static struct app A;
static struct view_scratch *VS;

static const int SIZES[][2] = { { 80, 24 }, { 100, 30 }, { 120, 40 }, { 200, 60 } };
#define N_SIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

/* The states each lesson is drawn in: its first step as it opens, then
 * after these keys ('_' is Space). */
static const char *const STATES[] = {
    "",      /* as it opens */
    "u",     /* the seeded u shown */
    "TTT",   /* a higher temperature */
    "PPPPu", /* top-p on, with u */
    "MMM",   /* min-p on */
    "D",     /* many draws */
    "_",     /* a step taken */
    "b",     /* big mode */
    "a9\n",  /* an answer (on an exercise: a wrong one, its verdict) */
    "?",     /* the help screen */
};
#define N_STATES ((int)(sizeof STATES / sizeof STATES[0]))

static void setup(void)
{
    VS = view_scratch_new();
    ck_assert_ptr_nonnull(VS);
}

static void teardown(void)
{
    app_free(&A);
    view_scratch_free(VS);
}

static void open_lesson(const char *id, const char *keys)
{
    struct err e;
    app_free(&A);
    ck_assert_msg(app_init(&A, TEST_LESSONS, id, NULL, TEST_SOURCE, &e) == 0, "%s: %s", id, e.msg);
    for (const char *k = keys; *k; k++)
        app_key(&A, *k == '_' ? ' ' : *k == '\n' ? AK_ENTER : *k);
}

/* Appends to why the row where screen s cut a number, if it did. */
static void note_cuts(const struct screen *s, const char *what, char *why, size_t n, int *bad)
{
    if (s->cut_digits == 0)
        return;
    char row[1024];
    screen_row_text(s, s->cut_y, row, sizeof row);
    size_t at = strlen(why);
    if (at + 1 < n)
        snprintf(why + at, n - at, "%s: %d cut (first at column %d of row %d: \"%s\")\n", what,
                 s->cut_digits, s->cut_x, s->cut_y, row);
    (*bad)++;
}

static void draw_at_sizes(const char *id, const char *keys, char *why, size_t n, int *bad)
{
    for (int i = 0; i < N_SIZES; i++) {
        struct screen s;
        ck_assert_int_eq(screen_init(&s, SIZES[i][0], SIZES[i][1], 1), 0);
        view_render(&A, &s, VS);
        char what[128];
        snprintf(what, sizeof what, "%s after \"%s\" at %dx%d", id, keys, SIZES[i][0], SIZES[i][1]);
        note_cuts(&s, what, why, n, bad);
        screen_free(&s);
    }
}

/* Every lesson of the catalog, every state, every size. */
START_TEST(test_no_number_is_cut)
{
    static char why[65536];
    why[0] = '\0';
    int bad = 0;
    open_lesson(NULL, "");
    int n_lessons = A.cat.n;
    for (int li = 0; li < n_lessons; li++) {
        char id[LESSON_ID_MAX + 1];
        snprintf(id, sizeof id, "%s", A.cat.ids[li]);
        for (int st = 0; st < N_STATES; st++) {
            open_lesson(id, STATES[st]);
            draw_at_sizes(id, STATES[st], why, sizeof why, &bad);
        }
    }
    if (bad)
        fprintf(stderr, "%s", why);
    ck_assert_msg(bad == 0, "%d screens cut a number (each listed above)", bad);
}
END_TEST

/* Rows of r in screen s, from the bottom up, that hold nothing. */
static int blank_rows_below(const struct screen *s, struct rect r)
{
    int n = 0;
    for (int y = r.y + r.h - 1; y > r.y; y--, n++)
        for (int x = r.x; x < r.x + r.w; x++)
            if (screen_at(s, x, y)->cp != ' ')
                return n;
    return n;
}

/* A toy step's panes use their rows: the layout gives the panes every row
 * the lesson text does not keep (beside the text: the whole height), and
 * each pane draws its tokens on them -- the rows left blank below the last
 * token are fewer than the tokens, so one more row per token would not
 * have fitted. Big mode is drawn too (the two panes it shows). */
START_TEST(test_pane_rows_are_used)
{
    static const char *const TOY[] = { "toy", "temperature", "top-p", "min-p" };
    for (size_t t = 0; t < sizeof TOY / sizeof TOY[0]; t++) {
        open_lesson(TOY[t], "");
        int v = A.t.vocab_size;
        for (int i = 0; i < N_SIZES; i++)
            for (int big = 0; big <= 2; big++) {
                int w = SIZES[i][0], h = SIZES[i][1];
                struct layout l;
                A.big = big;
                layout_compute(w, h, v, big, &l);
                if (l.side) /* the title, the panes, two status lines, the bottom line */
                    ck_assert_int_eq(l.pane[PANE_LOGITS].h + l.pane[PANE_PROB].h, h - 4);
                struct screen s;
                ck_assert_int_eq(screen_init(&s, w, h, 1), 0);
                view_render(&A, &s, VS);
                for (int p = 0; p < PANE_COUNT; p++) {
                    if (l.pane[p].w == 0) /* a pane big mode leaves out */
                        continue;
                    int blank = blank_rows_below(&s, l.pane[p]);
                    /* From three rows a token each bar is two tall with a
                     * blank row under it (view_panes.c): the last token's
                     * counts too. */
                    int spacer = (l.pane[p].h - 1) / v >= 3;
                    ck_assert_msg(blank - spacer < v,
                                  "%s at %dx%d big %d: pane %d leaves %d of its %d rows blank",
                                  TOY[t], w, h, big, p, blank, l.pane[p].h);
                }
                screen_free(&s);
            }
    }
}
END_TEST

Suite *suite_layout(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("layout");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_no_number_is_cut);
    tcase_add_test(tc, test_pane_rows_are_used);
    suite_add_tcase(s, tc);
    return s;
}
