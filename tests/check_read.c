/* The text view (c; issue 31): the steps taken as a text, each token with
 * the probability it was taken at; another token taken mid-text, the rest
 * drawn again; and the first text back. */
#include <math.h>
#include <string.h>

#include "data/keys.h"
#include "tui/app.h"
#include "tui/view.h"
#include "suites.h"

static struct app A;

static void open_lesson(const char *id)
{
    struct err e;
    app_free(&A);
    ck_assert_msg(app_init(&A, TEST_LESSONS, id, NULL, TEST_SOURCE, &e) == 0, "%s", e.msg);
}

static void setup(void)
{
    memset(&A, 0, sizeof A);
    open_lesson("toy");
}

static void teardown(void)
{
    app_free(&A);
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

/* The toy's greedy path (seed 002): "on" at 0.4407, then "mat" at 0.7200
 * (step 2's table); the text's ln p is ln 0.4407 + ln 0.7200 = -1.1479,
 * its perplexity e^(1.1479 / 2) = 1.78. Each step keeps its most likely
 * tokens: step 1's second is "cat" at 0.1792. */
START_TEST(test_the_text_and_its_numbers)
{
    type("c");
    ck_assert_int_eq(A.mode, MODE_NORMAL);
    ck_assert_str_eq(A.msg, "no step taken yet: Space takes one, then c shows the text");
    type("<Space><Space>c");
    ck_assert_int_eq(A.mode, MODE_READ);
    ck_assert_int_eq(A.read.sel, 1);
    ck_assert_double_eq_tol(A.hist[0].prob, 0.4407, 5e-5);
    ck_assert_double_eq_tol(A.hist[1].prob, 0.7200, 5e-5);
    ck_assert_int_eq(A.hist[0].rank, 1);
    ck_assert_int_eq(A.hist[0].alt[1].id, 2);
    ck_assert_double_eq_tol(A.hist[0].alt[1].prob, 0.1792, 5e-5);
    int n;
    double sum, mean, ppl;
    app_read_logprob(&A, &n, &sum, &mean, &ppl);
    ck_assert_int_eq(n, 2);
    ck_assert_double_eq_tol(sum, -1.1479, 5e-5);
    ck_assert_double_eq_tol(ppl, 1.7753, 5e-5);
    struct view_scratch *vs = view_scratch_new();
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 80, 24, 1), 0);
    view_render(&A, &s, vs);
    char row[512];
    screen_row_text(&s, 2, row, sizeof row);
    ck_assert_str_eq(row, "The cat sat on mat");
    screen_row_text(&s, 0, row, sizeof row);
    ck_assert_ptr_nonnull(strstr(row, "ln p -1.1479"));
    screen_free(&s);
    view_scratch_free(vs);
}
END_TEST

/* Left to "on", Down to "cat", Enter: step 1 takes "cat" (the user's), the
 * rest is taken again; [ brings back the first text, drawn as it was (not
 * the user's), ] the second. */
START_TEST(test_branch_and_back)
{
    type("<Space><Space>c<Left><Down><Enter>");
    ck_assert_int_eq(A.mode, MODE_READ);
    ck_assert_int_eq(A.read.n_branch, 2);
    ck_assert_int_eq(A.read.branch, 1);
    ck_assert_int_eq(A.n_hist, 2);
    ck_assert_int_eq(A.hist[0].choice, 2);
    ck_assert(A.hist[0].forced);
    ck_assert_int_eq(A.hist[1].choice, 6); /* step 2's logits are the toy's own: mat */
    type("[");
    ck_assert_int_eq(A.read.branch, 0);
    ck_assert_int_eq(A.hist[0].choice, 5);
    ck_assert(!A.hist[0].forced);
    ck_assert_int_eq(A.hist[1].choice, 6);
    type("[");
    ck_assert_str_eq(A.msg, "text 1 of 2: no text before it");
    type("]");
    ck_assert_int_eq(A.read.branch, 1);
    ck_assert_int_eq(A.hist[0].choice, 2);
    /* Enter on the token taken says so and changes nothing. */
    type("<Enter>");
    ck_assert_int_eq(A.read.n_branch, 2);
    ck_assert_str_eq(A.msg, "that is the token taken there: Up and Down choose another");
    type("c");
    ck_assert_int_eq(A.mode, MODE_NORMAL);
    /* Home starts again: the texts kept go with the steps. */
    type("<Home>");
    ck_assert_int_eq(A.read.n_branch, 0);
}
END_TEST

/* On a full-size lesson whose tokens are drawn (real-story, seed 1): the
 * text branched at step 5 and brought back draws the same tokens again. */
START_TEST(test_drawn_text_comes_back_the_same)
{
    open_lesson("real-story");
    type(":max-tokens 8<Enter><Space><Space><Space><Space><Space><Space><Space><Space>");
    int n = A.n_hist, first[16];
    ck_assert_int_eq(n, 8);
    for (int i = 0; i < n; i++)
        first[i] = A.hist[i].choice;
    type("c<Left><Left><Left><Down><Enter>");
    ck_assert_int_eq(A.read.branch, 1);
    ck_assert_int_ne(A.hist[4].choice, first[4]);
    type("[");
    ck_assert_int_eq(A.n_hist, n);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(A.hist[i].choice, first[i]);
        ck_assert(!A.hist[i].forced);
    }
}
END_TEST

/* A model's prompt (trained-next: stories260K, "Once upon a time, there
 * was a little", 10 tokens with BOS): the view gives each prompt token
 * after the first what the model gave it at its position, and the step
 * taken after them keeps llama2.c's numbers (" g" 0.6403, check_lessons):
 * running the prefixes left the live step as it was. */
START_TEST(test_a_models_prompt_is_predicted)
{
    open_lesson("trained-next");
    type("<Space><Space><Space>");
    int live = A.t.choice.id;
    type("c");
    ck_assert_int_eq(A.read.pre, 9);
    for (int k = 0; k < A.read.pre; k++) {
        const struct app_entry *p = app_read_entry(&A, k);
        ck_assert_int_eq(p->choice, A.hist[0].ctx[k + 1]);
        ck_assert(p->prob > 0.0 && p->prob <= 1.0);
        ck_assert_int_ge(p->rank, 1);
        ck_assert_int_eq(p->n_alt, 6);
    }
    ck_assert_int_eq(A.read.sel, 9 + 2); /* the last step taken */
    ck_assert_double_eq_tol(app_read_entry(&A, 9)->prob, 0.6403, 5e-5);
    ck_assert_int_eq(A.t.choice.id, live);
    type("<Left><Left><Left><Enter>");
    ck_assert_str_eq(A.msg, "a token of the prompt: e edits the prompt");
}
END_TEST

/* Exercises (exercise-3: two steps solved with v and taken): a branch at
 * step 1 takes the other token there and stops before step 2, which waits
 * for its answers again, staying in the text view (it used to open the
 * answer line). */
START_TEST(test_a_branch_stops_before_an_exercise)
{
    open_lesson("exercise-3");
    type("v<Space>v<Space>c<Left><Down><Enter>");
    ck_assert_int_eq(A.mode, MODE_READ);
    ck_assert_int_eq(A.read.n_branch, 2);
    ck_assert_int_eq(A.n_hist, 1);
    ck_assert(A.hist[0].forced);
}
END_TEST

Suite *suite_read(void)
{
    Suite *s = suite_create("read");
    TCase *tc = tcase_create("read");
    tcase_set_timeout(tc, 30);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_the_text_and_its_numbers);
    tcase_add_test(tc, test_branch_and_back);
    tcase_add_test(tc, test_drawn_text_comes_back_the_same);
    tcase_add_test(tc, test_a_models_prompt_is_predicted);
    tcase_add_test(tc, test_a_branch_stops_before_an_exercise);
    suite_add_tcase(s, tc);
    return s;
}
