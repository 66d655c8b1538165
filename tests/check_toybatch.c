/* The batch view on the toy logits (issue 13 part 6, seed 000 section 5):
 * the engine lesson (lessons/10-engine.ini) opens on four requests
 *   A greedy, B T 0.8 top-p 0.95 seed 1, C T 1 min-p 0.1 seed 7,
 *   D T 0.8 top-p 0.95 seed 2
 * on the toy step 1 logits -3.2 0.8 1.2 0.5 -0.4 2.1 0.9 ([PAD] The cat sat
 * dog on mat). The reference for every row is the single step: the lesson's
 * reference sampler (sampler_run) on the same logits with the row's
 * settings, at Philox step 1 (the prompt is 3 tokens, nothing generated
 * yet) and row 0. The printed numbers come from `logitlab show engine
 * --step 2` (B's settings: on 0.5319, cat drawn with u 0.67199826) and
 * --step 3 (C's: on 0.4583, u 0.40696037 gives on).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/catalog.h"
#include "data/keys.h"
#include "suites.h"
#include "tui/app.h"
#include "source/batch.h"
#include "tui/view.h"

static struct lesson L;
static struct source SRC;
static struct batch BT;

static void open_engine(void)
{
    struct catalog cat;
    struct err e;
    ck_assert_int_eq(catalog_open(&cat, TEST_LESSONS, &e), 0);
    int rc = catalog_load(&cat, "engine", &L, &e);
    catalog_close(&cat);
    ck_assert_msg(rc == 0, "%s", e.msg);
    ck_assert_msg(source_open(&SRC, &L, NULL, 0, 0, &e) == 0, "%s", e.msg);
    /* No backend: a toy batch needs none. */
    ck_assert_msg(batch_open(&BT, &SRC, NULL, &e) == 0, "%s", e.msg);
}

static void close_engine(void)
{
    batch_free(&BT);
    source_close(&SRC);
    lesson_free(&L);
}

/* The single step with s on step 1's logits from the prompt, by the
 * reference sampler itself. */
static void reference(const struct settings *s, struct trace *t)
{
    struct err e;
    ck_assert_int_eq(trace_init(t, L.vocab.n, &e), 0);
    struct sampler_input in = { .vocab_size = L.vocab.n,
                                .logits = L.steps[0].logits,
                                .context = L.prompt,
                                .context_len = L.prompt_len,
                                .prompt_len = L.prompt_len,
                                .step = 1,
                                .row = 0 };
    ck_assert_msg(sampler_run(&in, &s->sampler, t, &e) == 0, "%s", e.msg);
}

/* Row r's numbers are the reference's, bit for bit: every token's id,
 * z', probability and final probability in rank order, the kept count,
 * the choice and its u. */
static void assert_row_is_reference(int r)
{
    struct trace t;
    const struct backend_res *res = &BT.row[r].res;
    reference(&BT.row[r].set, &t);
    ck_assert_int_eq(res->n_top, 7);
    for (int i = 0; i < 7; i++) {
        ck_assert_int_eq(res->top[i].id, t.rows[i].id);
        ck_assert(res->top[i].z == t.rows[i].adjusted);
        ck_assert(res->top[i].prob == t.rows[i].prob);
        ck_assert(res->top[i].final == t.rows[i].final);
        ck_assert_int_eq(res->top[i].removed_by, t.rows[i].removed_by);
    }
    ck_assert_int_eq(res->kept_count, t.kept_count);
    ck_assert_int_eq(res->id, t.choice.id);
    ck_assert_int_eq(res->sampled, t.choice.sampled);
    if (res->sampled)
        ck_assert(res->u == sampler_u(BT.row[r].set.sampler.seed, 1, 0, 0));
    trace_free(&t);
}

START_TEST(test_rows_are_the_single_step)
{
    open_engine();
    ck_assert_int_eq(BT.n, 4);
    ck_assert(BT.toy);
    ck_assert_int_eq(BT.toy_step, 1);
    char d[96];
    static const char *const SET[] = { "greedy", "T 0.8 top-p 0.95 seed 1", "T 1 min-p 0.1 seed 7",
                                       "T 0.8 top-p 0.95 seed 2" };
    for (int r = 0; r < BT.n; r++) {
        batch_describe(&BT.row[r], d, sizeof d);
        ck_assert_str_eq(d, SET[r]);
        assert_row_is_reference(r);
    }
    /* The printed numbers (show engine --step 2 and 3): A takes on (id 5);
     * B keeps 5, on final 0.5319, u 0.67199826 draws cat (id 2); C keeps 5
     * (min-p bar 0.1 x 0.4407 = 0.0441 drops dog 0.0362 and [PAD]), on
     * final 0.4583, u 0.40696037 draws on. */
    ck_assert_int_eq(BT.row[0].res.id, 5);
    ck_assert_int_eq(BT.row[0].res.sampled, 0);
    ck_assert_int_eq(BT.row[1].res.kept_count, 5);
    ck_assert_int_eq(BT.row[1].res.top[0].id, 5);
    ck_assert_double_eq_tol(BT.row[1].res.top[0].final, 0.5319, 5e-5);
    ck_assert_double_eq_tol(BT.row[1].res.u, 0.67199826, 5e-9);
    ck_assert_int_eq(BT.row[1].res.id, 2);
    ck_assert_int_eq(BT.row[2].res.kept_count, 5);
    ck_assert_double_eq_tol(BT.row[2].res.top[0].final, 0.4583, 5e-5);
    ck_assert_double_eq_tol(BT.row[2].res.u, 0.40696037, 5e-9);
    ck_assert_int_eq(BT.row[2].res.id, 5);
    /* D differs from B by its seed alone: the same probabilities, another u. */
    for (int i = 0; i < 7; i++)
        ck_assert(BT.row[3].res.top[i].final == BT.row[1].res.top[i].final);
    ck_assert(BT.row[3].res.u != BT.row[1].res.u);
    close_engine();
}
END_TEST

/* A request's draw is the single step's with its settings: the lesson's
 * own steps 2 and 3 have B's and C's, and draw what B and C draw. */
START_TEST(test_draw_is_the_single_steps)
{
    open_engine();
    struct err e;
    struct trace t;
    ck_assert_int_eq(trace_init(&t, L.vocab.n, &e), 0);
    for (int k = 2; k <= 3; k++) {
        struct settings s;
        source_step_settings(&SRC, k, &s);
        ck_assert_msg(source_run_step(&SRC, k, &s, L.prompt, L.prompt_len, &t, &e) == 0, "%s",
                      e.msg);
        const struct backend_res *res = &BT.row[k - 1].res;
        ck_assert_int_eq(res->id, t.choice.id);
        ck_assert(res->u == t.choice.u);
        ck_assert(res->final == t.rows[t.choice.rank].final);
    }
    trace_free(&t);
    close_engine();
}
END_TEST

START_TEST(test_one_row_changes_alone)
{
    open_engine();
    struct err e;
    struct backend_res keep[4];
    for (int r = 0; r < 4; r++)
        keep[r] = BT.row[r].res;
    ck_assert_int_eq(batch_set(&BT, 1, "temperature", "0.7", &e), 0);
    ck_assert_msg(batch_sample(&BT, &SRC, NULL, &e) == 0, "%s", e.msg);
    for (int r = 0; r < 4; r++)
        if (r != 1)
            ck_assert(memcmp(&keep[r], &BT.row[r].res, sizeof keep[r]) == 0);
    ck_assert(memcmp(&keep[1], &BT.row[1].res, sizeof keep[1]) != 0);
    /* B at T 0.7 is the reference at T 0.7: on's final 0.5833 on screen
     * (z' 3.0 against 1.7143, 1.2857, 1.1429, 0.7143 for the kept ones:
     * e^0 / (1 + e^-1.2857 + e^-1.7143 + e^-1.8571 + e^-2.2857) = 0.5833). */
    assert_row_is_reference(1);
    ck_assert_double_eq_tol(BT.row[1].res.top[0].final, 0.5833, 5e-5);
    /* A refused value leaves the request as it was. */
    ck_assert_int_eq(batch_set(&BT, 2, "min-p", "2", &e), -1);
    ck_assert(memcmp(&keep[2], &BT.row[2].res, sizeof keep[2]) == 0);
    close_engine();
}
END_TEST

/* Space on a toy batch (issue 31): the lesson's step 1 row is the one
 * every request samples, and it belongs to the step, not to a text: once
 * A's "on" and B's "cat" were appended there would be no row for either
 * text (the old batch gave all four step 2's row, and A and C ended "The
 * cat sat on on on on"). So the batch refuses to step, says why, and keeps
 * every request as it was. */
START_TEST(test_a_toy_batch_stops_at_one_step)
{
    open_engine();
    struct err e;
    int len[4], id[4];
    for (int r = 0; r < 4; r++)
        len[r] = BT.row[r].g.len, id[r] = BT.row[r].res.id;
    ck_assert_int_eq(batch_step(&BT, &SRC, NULL, &e), -1);
    ck_assert_str_eq(e.msg, "a toy lesson has one row of logits per step, not one per text: its "
                            "batch stops at one step (B shows the steps one at a time)");
    for (int r = 0; r < 4; r++) {
        ck_assert_int_eq(BT.row[r].g.len, len[r]);
        ck_assert_int_eq(BT.row[r].res.id, id[r]);
    }
    ck_assert_int_eq(BT.steps, 0);
    ck_assert_int_eq(BT.toy_step, 1);
    char text[1024];
    batch_explain(&BT, &L.vocab, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, "so the batch stops at this step."));
    close_engine();
}
END_TEST

/* Fitting a request's settings drops words, never digits. */
START_TEST(test_describe_fits_by_words)
{
    open_engine();
    struct err e;
    static const char *const SET[][2] = { { "temperature", "1.2" },
                                          { "top-k", "40" },
                                          { "top-p", "0.95" },
                                          { "min-p", "0.05" },
                                          { "seed", "6" } };
    for (size_t i = 0; i < sizeof SET / sizeof SET[0]; i++)
        ck_assert_int_eq(batch_set(&BT, 0, SET[i][0], SET[i][1], &e), 0);
    char d[96];
    batch_describe_fit(&BT.row[0], 60, d, sizeof d);
    ck_assert_str_eq(d, "T 1.2 top-k 40 top-p 0.95 min-p 0.05 seed 6");
    batch_describe_fit(&BT.row[0], 40, d, sizeof d);
    ck_assert_str_eq(d, "T 1.2 k 40 p 0.95 min-p 0.05 seed 6");
    close_engine();
}
END_TEST

static int screen_has(const struct screen *s, const char *text)
{
    char line[1024];
    for (int y = 0; y < s->h; y++) {
        screen_row_text(s, y, line, sizeof line);
        if (strstr(line, text))
            return 1;
    }
    return 0;
}

/* The app: the engine lesson opens on its batch; a key changes only the
 * selected request; B leaves; an exercise has no batch; B on the toy
 * lesson gives the four toy presets. The screens at the classroom sizes
 * show every request's whole settings and numbers. */
START_TEST(test_app_opens_on_the_batch)
{
    static struct app a;
    struct err e;
    ck_assert_msg(app_init(&a, TEST_LESSONS, "engine", NULL, TEST_SOURCE, &e) == 0, "%s", e.msg);
    ck_assert(a.batch_on);
    ck_assert_int_eq(a.batch.n, 4);
    struct view_scratch *vs = view_scratch_new();
    ck_assert_ptr_nonnull(vs);
    static const int SIZES[][2] = { { 80, 24 }, { 120, 40 }, { 200, 60 } };
    for (int i = 0; i < 3; i++) {
        struct screen s;
        ck_assert_int_eq(screen_init(&s, SIZES[i][0], SIZES[i][1], 1), 0);
        view_render(&a, &s, vs);
        ck_assert(screen_has(&s, "Batch of 4: one sampler call"));
        ck_assert(screen_has(&s, " B T 0.8 top-p 0.95 seed 1 "));
        ck_assert(screen_has(&s, "cat p 0.1727, 5 kept"));
        ck_assert(screen_has(&s, "on 0.4583  cat 0.1863  mat 0.1380"));
        screen_free(&s);
    }
    view_scratch_free(vs);
    app_key(&a, AK_DOWN);
    double c = a.batch.row[2].set.sampler.temperature;
    app_key(&a, 't');
    ck_assert(a.batch.row[1].set.sampler.temperature < 0.8);
    ck_assert(a.batch.row[2].set.sampler.temperature == c);
    ck_assert_msg(strncmp(a.msg, "request B: temperature", 22) == 0, "%s", a.msg);
    app_key(&a, 'x');
    ck_assert(a.batch.row[1].set.sampler.temperature == 0.8);
    ck_assert_str_eq(a.msg, "request B: its lesson's settings again");
    app_key(&a, 'B');
    ck_assert(!a.batch_on);
    app_command(&a, "lesson exercise-1");
    app_key(&a, 'B');
    ck_assert(!a.batch_on);
    ck_assert_msg(strstr(a.msg, "would show the answer") != NULL, "%s", a.msg);
    app_command(&a, "lesson toy");
    ck_assert(!a.batch_on);
    app_key(&a, 'B');
    ck_assert_msg(a.batch_on, "%s", a.msg);
    ck_assert_int_eq(a.batch.n, BATCH_TOY_ROWS);
    char d[96];
    batch_describe(&a.batch.row[1], d, sizeof d);
    ck_assert_str_eq(d, "T 0.7 top-k 3 seed 1");
    ck_assert_int_eq(a.batch.row[1].res.kept_count, 3);
    app_free(&a);
}
END_TEST

/* The request key: strict, with the file and line. */
START_TEST(test_request_key_errors)
{
    static const struct {
        const char *extra, *want;
    } BAD[] = {
        { "request = temprature 0\n", "x.ini:4: request: 'temprature' is not a setting" },
        { "request = top-p 2\n", "x.ini:4: request: top-p: 2 is out of range (must be in (0, 1])" },
        { "request = seed 1 |\n", "x.ini:4: request: an empty setting" },
        { "request = seed 1 | top-k 3 | seed 2\n", "x.ini:4: request: 'seed' is given twice" },
        { "request = seed 1\n  | seed 2\n", "x.ini:5: a request cannot continue on the next line" },
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "[lesson]\nid = t\ntitle = T\n%s[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\n",
                 BAD[i].extra);
        struct lesson l;
        struct err e;
        ck_assert_int_eq(lesson_load_text(&l, "x.ini", text, &e), -1);
        ck_assert_str_eq(e.msg, BAD[i].want);
    }
    /* Nine requests: one too many for the batch. */
    char text[1024] = "[lesson]\nid = t\ntitle = T\n";
    for (int i = 0; i < LESSON_MAX_REQUESTS + 1; i++)
        strcat(text, "request = temperature 0\n");
    strcat(text, "[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\n");
    struct lesson l;
    struct err e;
    ck_assert_int_eq(lesson_load_text(&l, "x.ini", text, &e), -1);
    ck_assert_str_eq(e.msg, "x.ini:12: more than 8 requests in one lesson");
}
END_TEST

Suite *suite_toybatch(void)
{
    Suite *s = suite_create("toybatch");
    TCase *tc = tcase_create("toybatch");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_rows_are_the_single_step);
    tcase_add_test(tc, test_draw_is_the_single_steps);
    tcase_add_test(tc, test_one_row_changes_alone);
    tcase_add_test(tc, test_a_toy_batch_stops_at_one_step);
    tcase_add_test(tc, test_describe_fits_by_words);
    tcase_add_test(tc, test_app_opens_on_the_batch);
    tcase_add_test(tc, test_request_key_errors);
    suite_add_tcase(s, tc);
    return s;
}
