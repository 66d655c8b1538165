/* The summary lines in words (issue 13 part 5): times in their unit,
 * percents, one format per column, the penalty, the filters and the
 * chi-square said in words -- by hand, then on a real full-size step. */
#include <math.h>
#include <string.h>

#include "report/report.h"
#include "suites.h"
#include "tui/app.h"
#include "tui/view.h"

static char BUF[512];

static const char *duration(double us, int utf8)
{
    report_duration(BUF, sizeof BUF, us, utf8);
    return BUF;
}

START_TEST(test_duration_unit)
{
    /* Microseconds below a millisecond, one decimal of ms below 10 s, then s. */
    ck_assert_str_eq(duration(999, 1), "999 \u00b5s");
    ck_assert_str_eq(duration(999, 0), "999 us");
    ck_assert_str_eq(duration(0, 1), "0 \u00b5s");
    ck_assert_str_eq(duration(160791, 1), "160.8 ms"); /* the "CPU 160791 µs" */
    ck_assert_str_eq(duration(11100, 1), "11.1 ms");
    ck_assert_str_eq(duration(1000, 1), "1.0 ms");
    /* 999.6 rounds to 1000: said in ms, never "1000 µs". */
    ck_assert_str_eq(duration(999.6, 1), "1.0 ms");
    ck_assert_str_eq(duration(9999949, 1), "9999.9 ms");
    ck_assert_str_eq(duration(9999960, 1), "10.0 s"); /* would read 10000.0 ms */
    ck_assert_str_eq(duration(12.34e6, 1), "12.3 s");
}
END_TEST

static const char *percent(double p, int digits)
{
    report_percent(BUF, sizeof BUF, p, digits);
    return BUF;
}

START_TEST(test_percent)
{
    ck_assert_str_eq(percent(0.0477, 4), "4.77 %");
    ck_assert_str_eq(percent(0.9523, 4), "95.23 %");
    ck_assert_str_eq(percent(0.0, 4), "0.00 %");
    ck_assert_str_eq(percent(1.0, 4), "100.00 %");
    ck_assert_str_eq(percent(0.008488, 6), "0.8488 %");
    /* Nonzero yet under half of 0.01 %, and short of all: never "0.00" or "100.00". */
    ck_assert_str_eq(percent(3e-7, 4), "< 0.01 %");
    ck_assert_str_eq(percent(0.99999, 4), "> 99.99 %");
    ck_assert_str_eq(percent(0.25, 2), "25 %");
}
END_TEST

START_TEST(test_column_style)
{
    /* The column: 3.269e+06 above 24343.0094 -- both in exponent. */
    double mixed[] = { 3.269e6, 24343.0094 };
    ck_assert_int_eq(report_column_style(mixed, 2, 4, 9), REPORT_EXPONENT);
    report_number_as(BUF, sizeof BUF, mixed[1], 4, REPORT_EXPONENT);
    ck_assert_str_eq(BUF, "2.434e+04");
    /* The toy lesson's exp column (e^6.0 = 403.4288 .. e^-3 = 0.0498): fixed,
     * as the lesson's table writes it. */
    double toy[] = { 403.4288, 1.3499, 0.0498 };
    ck_assert_int_eq(report_column_style(toy, 3, 4, 9), REPORT_FIXED);
    report_number_as(BUF, sizeof BUF, toy[0], 4, REPORT_FIXED);
    ck_assert_str_eq(BUF, "403.4288");
    /* 9999.9999 is 9 characters; 24343.0094 is 10: too wide for 9, fine in 10;
     * from REPORT_LARGE on exponent whatever the width. */
    double w9[] = { 9999.9999, 1.0 }, w10[] = { 24343.0094 }, big[] = { 1e5 };
    ck_assert_int_eq(report_column_style(w9, 2, 4, 9), REPORT_FIXED);
    ck_assert_int_eq(report_column_style(w10, 1, 4, 9), REPORT_EXPONENT);
    ck_assert_int_eq(report_column_style(w10, 1, 4, 10), REPORT_FIXED);
    ck_assert_int_eq(report_column_style(big, 1, 4, 100), REPORT_EXPONENT);
    /* An overflowed e^z' reads "inf" and does not choose. */
    double inf[] = { INFINITY, 2.0 };
    ck_assert_int_eq(report_column_style(inf, 2, 4, 9), REPORT_FIXED);
    report_number_as(BUF, sizeof BUF, INFINITY, 4, REPORT_EXPONENT);
    ck_assert_str_eq(BUF, "inf");
}
END_TEST

START_TEST(test_penalty_words)
{
    struct sampler_settings m = { 0 };
    m.repetition_penalty = 1.2;
    m.penalty_formula = PENALTY_LESSON;
    m.penalty_scope = SCOPE_GENERATED;
    report_penalty_how(&m, 0, BUF, sizeof BUF); /* the "lesson/generated/all" */
    ck_assert_str_eq(BUF, "lesson formula, generated tokens, all of them");
    report_penalty_how(&m, 1, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "lesson formula, generated tokens");
    report_penalty_how(&m, 2, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "lesson, generated");
    m.penalty_formula = PENALTY_ENGINE;
    m.penalty_scope = SCOPE_ALL;
    m.penalty_last_n = 64;
    report_penalty_how(&m, 0, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "engine formula, prompt and generated tokens, the last 64");
    report_penalty_how(&m, 1, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "engine formula, prompt and generated, last 64");
    report_penalty_how(&m, 2, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "engine, prompt too, last 64");
}
END_TEST

START_TEST(test_removed_words)
{
    report_removed_words("top-p", 128255, 0.0477, 4, 0, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "top-p removed 128,255 tokens holding 4.77 %");
    report_removed_words("top-k", 1, 0.1, 4, 0, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "top-k removed 1 token holding 10.00 %");
    report_removed_words("top-p", 128255, 0.0477, 4, 2, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "top-p cut 128,255 (4.77 %)");
}
END_TEST

START_TEST(test_chi2_words)
{
    /* The limit is the 99.9 % point (draws.c, Wilson-Hilferty at z = 3.0902):
     * df 8: a = 2/72, c = 1 - a + 3.0902 sqrt(a) = 1.487255, 8 c^3 = 26.32
     * (the exact 99.9 % point is 26.12; the 99 % point would be 20.09). */
    ck_assert_double_eq_tol(draws_chi2_limit(8), 26.32, 0.01);
    report_chi2_words(11.1, 8, "\u03c7\u00b2", 0, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "the draws agree with the probabilities: \u03c7\u00b2 11.1, below the "
                          "26.3 a fair sampler stays under 99.9 % of the time");
    report_chi2_words(40.0, 8, "chi2", 0, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "the draws do not agree with the probabilities: chi2 40.0, above the "
                          "26.3 a fair sampler stays under 99.9 % of the time");
    report_chi2_words(11.1, 8, "chi2", REPORT_CHI2_BREVITIES - 1, BUF, sizeof BUF);
    ck_assert_str_eq(BUF, "chi2 11.1 < 26.3");
    /* The wordings only get shorter, so report_fit finds the longest that fits. */
    char w[REPORT_CHI2_BREVITIES][256];
    const char *words[REPORT_CHI2_BREVITIES];
    for (int b = 0; b < REPORT_CHI2_BREVITIES; b++) {
        report_chi2_words(11.1, 8, "chi2", b, w[b], sizeof w[b]);
        words[b] = w[b];
        if (b)
            ck_assert_int_lt(strlen(w[b]), strlen(w[b - 1]));
    }
    ck_assert_str_eq(report_fit(60, REPORT_CHI2_BREVITIES, words),
                     "the draws agree: chi2 11.1, below the fair limit 26.3");
    ck_assert_str_eq(report_fit(3, REPORT_CHI2_BREVITIES, words), "chi2 11.1 < 26.3");
}
END_TEST

/* The rows of a 120x40 screen of lesson real-france (hidden size 384)
 * under the given settings. */
static void render_france(int n, const char **names, const char **values, int w, int h,
                          struct app *A, struct screen *s)
{
    struct err e;
    ck_assert_msg(app_init(A, TEST_LESSONS, "real-france", test_patch(n, names, values),
                           TEST_SOURCE, &e) == 0,
                  "%s", e.msg);
    struct view_scratch *vs = view_scratch_new();
    ck_assert_ptr_nonnull(vs);
    ck_assert_int_eq(screen_init(s, w, h, 1), 0);
    view_render(A, s, vs);
    view_scratch_free(vs);
}

static int screen_has(const struct screen *s, const char *text)
{
    char row[1024];
    for (int y = 0; y < s->h; y++) {
        screen_row_text(s, y, row, sizeof row);
        if (strstr(row, text))
            return 1;
    }
    return 0;
}

START_TEST(test_france_top_p_line)
{
    /* real-france step 1: " Paris" has p 0.9519 >= 0.95 (the lesson's text
     * quotes it), so top-p 0.95 keeps it alone and removes the other 128,255
     * tokens, which hold 1 - 0.9519. */
    static struct app A; /* megabytes of history: not on the stack */
    struct screen s;
    const char *names[] = { "top-p" }, *values[] = { "0.95" };
    render_france(1, names, values, 120, 40, &A, &s);
    ck_assert_int_eq(A.t.vocab_size, 128256);
    ck_assert_int_eq(A.t.kept_count, 1);
    const struct stage_report *st = NULL;
    for (int k = 0; k < A.t.n_stages; k++)
        if (A.t.stages[k].stage == STAGE_TOP_P)
            st = &A.t.stages[k];
    ck_assert_ptr_nonnull(st);
    ck_assert_int_eq(st->removed, 128255);
    ck_assert_double_eq_tol(st->removed_mass, 1.0 - A.t.kept_mass, 1e-9);
    ck_assert_msg(st->removed_mass >= 0.04805 && st->removed_mass < 0.04815, "mass %.6f",
                  st->removed_mass); /* so it reads 4.81 % */
    ck_assert_msg(screen_has(&s, " top-p removed 128,255 tokens holding 4.81 %; kept 1 token "
                                 "holding 95.19 %"),
                  "no filter line in words");
    ck_assert(screen_has(&s, "the seeded draw picked \u2423Paris (u 0.6720, rank 1, p 0.9519, "
                             "final 1.0000)"));
    /* The exp column: 2.943e+08 for " Paris" and every row below in the
     * same style (e^11.6 = 109097.8 would not fit fixed in 9). */
    ck_assert(screen_has(&s, " 11.6000 1.091e+05  0.0004 "));
    ck_assert(!screen_has(&s, "109097"));
    screen_free(&s);
    app_free(&A);
}
END_TEST

START_TEST(test_status_penalty_words)
{
    /* The penalty's words on the status line at 120 columns; at 80 columns
     * beside top-p there is no room on the first line, so the second line
     * says them short. */
    static struct app A; /* megabytes of history: not on the stack */
    struct screen s;
    const char *names[] = { "repetition-penalty", "penalty-formula" };
    const char *values[] = { "1.2", "lesson" };
    render_france(2, names, values, 120, 40, &A, &s);
    ck_assert(screen_has(&s, " penalty 1.2 (lesson formula, generated tokens, all of them) "));
    screen_free(&s);
    app_free(&A);
    const char *names2[] = { "repetition-penalty", "penalty-formula", "top-p" };
    const char *values2[] = { "1.2", "lesson", "0.95" };
    render_france(3, names2, values2, 80, 24, &A, &s);
    ck_assert(screen_has(&s, " top-p 0.95  min-p off  penalty 1.2 "));
    ck_assert(screen_has(&s, " stop -  penalty: lesson, generated"));
    screen_free(&s);
    app_free(&A);
}
END_TEST

START_TEST(test_toy_draws_verdict_below)
{
    /* toy step 1 at T = 1 (the table's p: on 0.4407, ...), 10,000 draws: a
     * pane with room under its 7 tokens (two rows each, as the
     * probabilities beside it: 14 of its 18) says the verdict in full
     * there, against the 99.9 % point of 6 df (Wilson-Hilferty: 22.7). */
    static struct app A; /* megabytes of history: not on the stack */
    struct err e;
    const char *names[] = { "temperature" }, *values[] = { "1" };
    ck_assert_msg(
        app_init(&A, TEST_LESSONS, "toy", test_patch(1, names, values), TEST_SOURCE, &e) == 0, "%s",
        e.msg);
    for (int i = 0; i < 3; i++)
        app_key(&A, 'D'); /* 100, 1,000, 10,000 draws */
    ck_assert_int_eq(A.draws.n, 10000);
    ck_assert_int_eq(A.draws.df_kept, 6);
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 60, 19, 1), 0);
    view_draw_pane(&A, &s, PANE_CUM, (struct rect){ 0, 0, 60, 19 });
    char want[256];
    snprintf(want, sizeof want, "the draws agree with the probabilities: \u03c7\u00b2 %.1f,",
             A.draws.chi2_kept);
    ck_assert_msg(screen_has(&s, want), "no '%s'", want);
    /* broken at a space into the pane's 58 columns: */
    ck_assert(screen_has(&s, " 22.7 a fair sampler stays under 99.9 % of the time"));
    screen_free(&s);
    app_free(&A);
}
END_TEST

Suite *suite_words(void)
{
    Suite *s = suite_create("words");
    TCase *t = tcase_create("words");
    tcase_add_test(t, test_duration_unit);
    tcase_add_test(t, test_percent);
    tcase_add_test(t, test_column_style);
    tcase_add_test(t, test_penalty_words);
    tcase_add_test(t, test_removed_words);
    tcase_add_test(t, test_chi2_words);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_france_top_p_line);
    tcase_add_test(t, test_status_penalty_words);
    tcase_add_test(t, test_toy_draws_verdict_below);
    suite_add_tcase(s, t);
    return s;
}
