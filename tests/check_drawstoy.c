/* Many draws (D) and find (/) on every lesson: on a toy step D counts 100,
 * 1,000 and 10,000 draws against the probabilities, made with the same
 * Philox u as the step's own draw; at full size the counts are shown as
 * counts, and the strangest tokens drawn are listed; '/' marks the found
 * token's row in the toy panes.
 *
 * The numbers are the toy lesson's (lessons/02-toy.ini, seed 002 "Step-by-
 * Step Softmax Calculation"): logits -3.2 0.8 1.2 0.5 -0.4 2.1 0.9 for
 * [PAD] The cat sat dog on mat, probabilities 0.0022 0.1201 0.1792 0.0890
 * 0.0362 0.4407 0.1327 at temperature 1 (the lesson's first "try"; its own
 * temperature 0 is greedy). Draw i of step 1 with seed 1 uses
 * u_i = sampler_u(1, 1, 0, i): the prompt is 3 tokens, so the first
 * generated token is step 1 of the Philox counter (DESIGN.md, the draw).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/draws.h"
#include "data/keys.h"
#include "report/report.h"
#include "suites.h"
#include "tui/app.h"
#include "tui/view.h"

#define TOY_V 7

static struct app A;
static struct view_scratch *VS;

/* Seed 002's table, by id. */
static const double TOY_P[TOY_V] = { 0.0022, 0.1201, 0.1792, 0.0890, 0.0362, 0.4407, 0.1327 };

static void open_lesson(const char *id)
{
    struct err e;
    app_free(&A);
    ck_assert_msg(app_init(&A, TEST_LESSONS, id, NULL, TEST_SOURCE, &e) == 0, "%s", e.msg);
}

static void setup(void)
{
    memset(&A, 0, sizeof A);
    VS = view_scratch_new();
    ck_assert_ptr_nonnull(VS);
}

static void teardown(void)
{
    app_free(&A);
    view_scratch_free(VS);
}

/* Types keys in the --keys syntax. */
static void type(const char *spec)
{
    struct key_event ev[256];
    struct err e;
    int n = keys_parse(spec, ev, 256, &e);
    ck_assert_msg(n >= 0, "%s", e.msg);
    for (int i = 0; i < n; i++)
        app_key(&A, ev[i].key);
}

/* The toy at temperature 1, its step 1, as seed 002's table has it. */
static void open_toy_t1(void)
{
    open_lesson("toy");
    type(":temperature 1<Enter>");
    ck_assert_int_eq(A.t.vocab_size, TOY_V);
    for (int id = 0; id < TOY_V; id++)
        ck_assert_double_eq_tol(A.t.rows[A.t.rank_of[id]].prob, TOY_P[id], 5e-5);
}

/* The counts of n draws by hand: sampler_draw on u_i = sampler_u(1, 1, 0, i). */
static void hand_counts(int n, long *count)
{
    memset(count, 0, TOY_V * sizeof *count);
    for (int i = 0; i < n; i++) {
        struct choice c;
        sampler_draw(&A.t, sampler_u(1, 1, 0, (uint32_t)i), &c);
        count[c.id]++;
    }
}

/* The app's count of token id (the draws' rows are in rank order). */
static long app_count(int id)
{
    for (int r = 0; r < A.draws.rows; r++)
        if (A.draws.id[r] == id)
            return A.draws.c_kept[r];
    ck_abort_msg("token %d has no row in the draws", id);
    return -1;
}

/* Columns [x, x + w) of row y as text, one byte a cell (non-ASCII as '~'). */
static void cells(const struct screen *s, int x, int y, int w, char *out)
{
    for (int i = 0; i < w; i++) {
        const struct cell *c = screen_at(s, x + i, y);
        out[i] = c && c->cp >= 0x20 && c->cp < 0x7F ? (char)c->cp : c && c->cp == 0 ? ' ' : '~';
    }
    out[w] = '\0';
}

/* D steps 100 -> 1,000 -> 10,000 -> off; each time the counts add up to N
 * and are the hand-made ones, and by 10,000 they fit the table: Pearson's
 * chi-square (every token expected 22 times or more, so no bucket merges:
 * df 6) stays under its 99 % point, 16.8. */
START_TEST(test_toy_d_counts_are_the_draws)
{
    open_toy_t1();
    ck_assert(!A.draws_ok);
    const int N[3] = { 100, 1000, 10000 };
    for (int k = 0; k < 3; k++) {
        type("D");
        ck_assert_msg(A.draws_ok, "%s", A.msg);
        ck_assert_int_eq(A.draws.n, N[k]);
        ck_assert_int_eq(A.draws.rows, TOY_V); /* 7 tokens: each counted one by one */
        long hand[TOY_V], sum = 0;
        hand_counts(N[k], hand);
        for (int id = 0; id < TOY_V; id++) {
            ck_assert_int_eq(app_count(id), hand[id]);
            sum += app_count(id);
        }
        ck_assert_int_eq(sum + A.draws.tail_kept, N[k]);
        ck_assert_int_eq(A.draws.tail_kept, 0);
        /* Draw 0 is the step's own draw. */
        ck_assert_int_eq(A.draws.first_kept, A.t.choice.id);
    }
    /* At 10,000: the chi-square by hand, from the table's exact
     * probabilities (the trace's, which round to seed 002's). */
    double x = 0.0;
    for (int id = 0; id < TOY_V; id++) {
        double e = 10000 * A.t.rows[A.t.rank_of[id]].final;
        ck_assert(e >= 5.0);
        x += (app_count(id) - e) * (app_count(id) - e) / e;
    }
    ck_assert_int_eq(A.draws.df_kept, TOY_V - 1);
    ck_assert_double_eq_tol(A.draws.chi2_kept, x, 1e-9);
    ck_assert_double_eq_tol(draws_chi2_point(6, DRAWS_Z_1PCT), 16.8, 0.1);
    ck_assert_msg(x < draws_chi2_point(6, DRAWS_Z_1PCT), "chi2 %.2f", x);
    ck_assert_str_eq(A.msg,
                     "10,000 draws with the step's seed, counted against the probabilities (D: "
                     "off)");
    type("D");
    ck_assert(!A.draws_on);
    ck_assert(!A.draws_ok);
}
END_TEST

/* The same seed gives the same counts (the lesson opened again, or a step
 * walked away from and back to); another seed, other counts. */
START_TEST(test_toy_draws_are_deterministic)
{
    open_toy_t1();
    type("DD");
    long first[TOY_V];
    for (int id = 0; id < TOY_V; id++)
        first[id] = app_count(id);
    open_toy_t1();
    type("DD");
    for (int id = 0; id < TOY_V; id++)
        ck_assert_int_eq(app_count(id), first[id]);
    type("s"); /* seed 2 */
    ck_assert(A.draws_ok);
    ck_assert_int_eq(A.draws.n, 1000);
    int differ = 0;
    for (int id = 0; id < TOY_V; id++)
        differ |= app_count(id) != first[id];
    ck_assert(differ);
    /* Greedy (the lesson's own temperature 0): every draw is "on". */
    open_lesson("toy");
    type("D");
    ck_assert(A.draws_ok);
    ck_assert_int_eq(app_count(5), 100);
}
END_TEST

/* The toy's draws pane, in the cumulative pane's room at 80x24: the row of
 * "on" (id 5: rows by id, as the probabilities' pane) shows its count and
 * N x final, 10,000 x 0.4407 = 4406.7 to one decimal. */
START_TEST(test_toy_draws_pane_shows_counts)
{
    open_toy_t1();
    type("DDD");
    long hand[TOY_V];
    hand_counts(10000, hand);
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 80, 24, 1), 0);
    view_render(&A, &s, VS);
    struct layout l;
    layout_compute(80, 24, TOY_V, 0, &l);
    struct rect r = l.pane[PANE_CUM];
    char line[128], want[64];
    cells(&s, r.x, r.y, r.w, line);
    ck_assert_msg(strstr(line, "Draws 10,000"), "%s", line);
    cells(&s, r.x, r.y + 1 + 5, r.w, line);
    ck_assert_double_eq_tol(10000 * A.t.rows[A.t.rank_of[5]].final, 4406.7, 0.05);
    /* The token in 7 columns after the pane's first, a space, the count in
     * 6, N x final in 8. */
    snprintf(want, sizeof want, " on      %6ld  4406.7 ", hand[5]);
    ck_assert_msg(strstr(line, want), "'%s' lacks '%s'", line, want);
    screen_free(&s);
}
END_TEST

/* At 120x40 the probabilities take two rows a token, and the draws pane
 * beside them follows (issue 31: it listed one a row, so "on" in one pane
 * faced "sat" in the other): each token's name on the same screen row in
 * both. */
START_TEST(test_toy_draws_rows_line_up)
{
    open_toy_t1();
    type("D");
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 120, 40, 1), 0);
    view_render(&A, &s, VS);
    struct layout l;
    layout_compute(120, 40, TOY_V, 0, &l);
    struct rect p = l.pane[PANE_PROB], d = l.pane[PANE_CUM];
    ck_assert_int_eq(p.y, d.y);
    static const char *const NAMES[TOY_V] = { "[PAD]", "The", "cat", "sat", "dog", "on", "mat" };
    int rows = 0;
    for (int y = p.y + 1; y < p.y + p.h; y++) {
        char left[128], right[128];
        cells(&s, p.x, y, 8, left);
        cells(&s, d.x, y, 8, right);
        for (int id = 0; id < TOY_V; id++) {
            char name[16];
            snprintf(name, sizeof name, " %s ", NAMES[id]);
            if (strncmp(left, name, strlen(name)) == 0) {
                ck_assert_msg(strncmp(right, name, strlen(name)) == 0, "row %d: '%s' beside '%s'",
                              y, left, right);
                rows++;
            }
        }
    }
    ck_assert_int_eq(rows, TOY_V);
    screen_free(&s);
}
END_TEST

/* '/' on a toy step: the token found, and its row marked in every pane
 * with the arrow in the column before the token's name. */
START_TEST(test_toy_find_marks_the_row)
{
    open_toy_t1();
    type("/on<Enter>");
    ck_assert_int_eq(A.find_id, 5);
    ck_assert_str_eq(A.msg, "found on (id 5): its row is marked in every pane (w takes it)");
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 80, 24, 1), 0);
    view_render(&A, &s, VS);
    struct layout l;
    layout_compute(80, 24, TOY_V, 0, &l);
    for (int p = 0; p < PANE_COUNT; p++) {
        struct rect r = l.pane[p];
        /* Logits, exp and prob list by id; the staircase by rank ("on" first). */
        int row = p == PANE_CUM ? 0 : 5;
        for (int i = 0; i < TOY_V; i++) {
            const struct cell *c = screen_at(&s, r.x, r.y + 1 + i);
            ck_assert_ptr_nonnull(c);
            if (i == row) {
                ck_assert_msg(c->cp == 0x25B8, "pane %d row %d: U+%04X", p, i, c->cp);
                ck_assert_int_eq(c->color, COL_ACCENT);
            } else {
                ck_assert_msg(c->cp == ' ', "pane %d row %d marked", p, i);
            }
        }
    }
    screen_free(&s);
    /* An empty find clears it. */
    type("/<Enter>");
    ck_assert_int_eq(A.find_id, -1);
}
END_TEST

/* :draws N and off through app_draws; a count past the most is refused. */
START_TEST(test_draws_counts_by_value)
{
    open_toy_t1();
    ck_assert_int_eq(app_draws(&A, "250"), APP_REDRAW);
    ck_assert(A.draws_ok);
    ck_assert_int_eq(A.draws.n, 250);
    type("D"); /* past 100, below 1,000: 1,000 */
    ck_assert_int_eq(A.draws.n, 1000);
    app_draws(&A, "off");
    ck_assert(!A.draws_ok);
    app_draws(&A, "0");
    ck_assert(!A.draws_on);
    ck_assert(A.msg_warn);
    ck_assert_msg(strncmp(A.msg, "draws: ", 7) == 0, "%s", A.msg);
}
END_TEST

static int by_rank_down(const void *x, const void *y)
{
    const int *a = x, *b = y;
    return b[1] - a[1];
}

/* The drawn tokens of lowest probability, worked out from the n tokens of
 * ids: every distinct one with its rank (trace_row_of) and how often it
 * came up, sorted from the least likely; then checked against list, the
 * app's, of n_list (DRAWS_RAREST at most). kept: the ids are the draws
 * with the filters, whose probability is final. */
static void check_rarest(const int *ids, int n, const struct draws_token *list, int n_list,
                         long distinct, int kept)
{
    int(*seen)[3] = calloc((size_t)n, sizeof *seen); /* id, rank, count */
    ck_assert_ptr_nonnull(seen);
    int m = 0;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < m && seen[j][0] != ids[i])
            j++;
        if (j == m) {
            struct trace_row row;
            ck_assert_int_eq(trace_row_of(&A.t, ids[i], &row, &seen[m][1]), 0);
            seen[m][0] = ids[i];
            seen[m++][2] = 0;
        }
        seen[j][2]++;
    }
    ck_assert_int_eq(m, distinct);
    qsort(seen, (size_t)m, sizeof *seen, by_rank_down);
    ck_assert_int_eq(n_list, m < DRAWS_RAREST ? m : DRAWS_RAREST);
    for (int i = 0; i < n_list; i++) {
        const struct draws_token *k = &list[i];
        struct trace_row row;
        int rank;
        ck_assert_int_eq(k->id, seen[i][0]);
        ck_assert_int_eq(k->rank, seen[i][1]);
        ck_assert_int_eq(kept ? k->kept : k->plain, seen[i][2]);
        ck_assert_int_eq(trace_row_of(&A.t, k->id, &row, &rank), 0);
        ck_assert_double_eq_tol(k->prob, row.prob, 1e-15);
        ck_assert_double_eq_tol(k->final, row.final, 1e-15);
        ck_assert_int_eq(k->removed_by, row.removed_by);
    }
    free(seen);
}

/* At full size (real-story at hidden size 512, a flat distribution, with
 * top-p 0.95; 10,000 draws with seed 1): the lists of the strangest tokens
 * drawn are the drawn tokens of lowest probability, worked out here from
 * the draws themselves (draws_ids, the same u_i), without and with the
 * filters. The table shows counts, not shares, and a row for the rarest. */
START_TEST(test_full_size_rarest_are_the_least_likely_drawn)
{
    open_lesson("real-story");
    type(":top-p 0.95<Enter>D");
    ck_assert_msg(A.draws_ok, "%s", A.msg);
    int n = A.draws.n;
    ck_assert_int_eq(n, DRAWS_DEFAULT);
    int *kept = malloc(2 * (size_t)n * sizeof *kept), *plain = kept + n;
    ck_assert_ptr_nonnull(kept);
    struct err e;
    ck_assert_int_eq(draws_ids(&A.t, 1, 1, 0, n, kept, plain, &e), 0);
    check_rarest(plain, n, A.draws.rarest_plain, A.draws.n_rarest_plain, A.draws.distinct_plain, 0);
    check_rarest(kept, n, A.draws.rarest_kept, A.draws.n_rarest_kept, A.draws.distinct_kept, 1);
    /* Without the filters the rarest come from the tail top-p removes. */
    ck_assert_int_eq(A.draws.rarest_plain[0].removed_by, STAGE_TOP_P);
    ck_assert_int_eq(A.draws.rarest_plain[0].kept, 0);
    /* The screen: counts in the table, and the rarest token's row by rank. */
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 132, 43, 1), 0);
    view_render(&A, &s, VS);
    char row1[1024], wantc[64], wantr[64], all[64 * 1024] = "";
    screen_row_text(&s, 2, row1, sizeof row1);
    char cp[24], ck[24]; /* counts written with thousands separators */
    draws_count_text(A.draws.c_plain[0], cp, sizeof cp);
    draws_count_text(A.draws.c_kept[0], ck, sizeof ck);
    snprintf(wantc, sizeof wantc, " %s %8s ", cp, ck);
    ck_assert_msg(strstr(row1, wantc), "'%s' lacks '%s'", row1, wantc);
    for (int y = 0; y < s.h; y++) {
        char line[1024];
        screen_row_text(&s, y, line, sizeof line);
        strncat(all, line, sizeof all - strlen(all) - 2);
        strcat(all, "\n");
    }
    ck_assert_msg(strstr(all, "least likely of the"), "%s", all);
    snprintf(wantr, sizeof wantr, "\n%7d ", A.draws.rarest_plain[0].rank + 1);
    ck_assert_msg(strstr(all, wantr), "no row for rank %d:\n%s", A.draws.rarest_plain[0].rank + 1,
                  all);
    screen_free(&s);
    free(kept);
}
END_TEST

/* draws_run_rows refuses a trace without every row, and a count out of range. */
START_TEST(test_run_rows_refuses)
{
    open_toy_t1();
    struct err e;
    static struct draws d;
    ck_assert_int_eq(draws_run_rows(&A.t, 1, 1, 0, DRAWS_ROWS, &d, &e), -1);
    ck_assert_str_eq(e.msg, "0 draws: from 1 to 10000000");
    int rows = A.t.n_rows;
    A.t.n_rows = 3;
    ck_assert_int_eq(draws_run_rows(&A.t, 1, 1, 10, DRAWS_ROWS, &d, &e), -1);
    ck_assert_str_eq(e.msg, "many draws over the rows need a step with all 7 rows");
    A.t.n_rows = rows;
}
END_TEST

Suite *suite_drawstoy(void)
{
    Suite *s = suite_create("drawstoy");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_toy_d_counts_are_the_draws);
    tcase_add_test(tc, test_toy_draws_are_deterministic);
    tcase_add_test(tc, test_toy_draws_pane_shows_counts);
    tcase_add_test(tc, test_toy_draws_rows_line_up);
    tcase_add_test(tc, test_toy_find_marks_the_row);
    tcase_add_test(tc, test_draws_counts_by_value);
    tcase_add_test(tc, test_run_rows_refuses);
    tcase_add_test(tc, test_full_size_rarest_are_the_least_likely_drawn);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}
