/* check_stop.c - stop strings as the engines treat them (issue 13, part 9):
 * the shown text ends where the matched string begins (OpenAI's API, vLLM,
 * llama.cpp's server) or, with stop-text keep, right after it (vLLM's
 * include_stop_str_in_output); the token ids stay; a stream holds back text
 * that may be the start of a stop string until it is decided.
 * The vocabulary is lessons/09-stopping.ini's: 0 [PAD], 1 The, 2 cat,
 * 3 sat, 4 dog, 5 on, 6 mat, 7 [EOS] (its end token), read with a space
 * between tokens; the prompt is 1 2 3, "The cat sat". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sampler.h"
#include "core/settings.h"
#include "data/catalog.h"
#include "data/lesson.h"
#include "source/gen.h"
#include "source/source.h"
#include "suites.h"

enum { ON = 5, MAT = 6, EOS = 7 };

static struct lesson L;
static struct settings S;
static struct gen G;

static void setup(void)
{
    struct catalog cat;
    struct err e;
    ck_assert_msg(catalog_open(&cat, TEST_LESSONS, &e) == 0, "%s", e.msg);
    int rc = catalog_load(&cat, "stopping", &L, &e);
    catalog_close(&cat);
    ck_assert_msg(rc == 0, "%s", e.msg);
    settings_defaults(&S);
    ck_assert_msg(gen_start(&G, &L.vocab, L.prompt, L.prompt_len, L.prompt_len, &e) == 0, "%s",
                  e.msg);
}

static void teardown(void)
{
    gen_free(&G);
    lesson_free(&L);
}

static void set(const char *name, const char *value)
{
    struct err e;
    ck_assert_msg(settings_set(&S, name, value, &e) == 0, "%s %s: %s", name, value, e.msg);
}

static void append(int id)
{
    struct err e;
    ck_assert_msg(gen_append(&G, id, &S, &e) == 0, "%s", e.msg);
}

/* The generated text as reports show it (gen_text), and the whole text. */
static void ck_text(const char *generated, const char *whole)
{
    char buf[256];
    ck_assert_uint_eq(gen_text(&G, buf, sizeof buf), strlen(generated));
    ck_assert_str_eq(buf, generated);
    size_t len;
    char *all = gen_shown_text(&G, 1, &len);
    ck_assert_ptr_nonnull(all);
    ck_assert_uint_eq(len, strlen(whole));
    ck_assert_str_eq(all, whole);
    free(all);
}

/* "on mat" is the text of two tokens, " " between: found once "mat" comes,
 * at byte 0 of the generated text; stripped, the text is the prompt's alone
 * (no space after "sat": it belongs to the text that went), and the ids
 * [1, 2, 3, 5, 6] stay in the context. Before part 9 the text was "on mat". */
START_TEST(test_strip_across_two_tokens)
{
    set("stop", "on mat");
    append(ON);
    ck_assert_int_eq(G.stop.rule, STOP_NONE);
    append(MAT);
    ck_assert_int_eq(G.stop.rule, STOP_STRING);
    ck_assert_int_eq(G.stop.which, 0);
    ck_assert_uint_eq(G.stop.text_end, 0);
    ck_text("", "The cat sat");
    ck_assert_int_eq(G.len, 5);
    ck_assert_int_eq(G.ids[3], ON);
    ck_assert_int_eq(G.ids[4], MAT);
    ck_assert_str_eq(stop_shown(&G.stop, &S), "not shown");
}
END_TEST

/* "n m" begins at byte 1 of "on mat": the text keeps "o" (the engines cut
 * characters, not tokens). */
START_TEST(test_strip_inside_a_token)
{
    set("stop", "n m");
    append(ON);
    append(MAT);
    ck_assert_int_eq(G.stop.rule, STOP_STRING);
    ck_assert_uint_eq(G.stop.text_end, 1);
    ck_text("o", "The cat sat o");
}
END_TEST

/* stop-text keep: the text runs through the string and ends there, as vLLM's
 * include_stop_str_in_output does (what follows it in the same token goes):
 * "on mat" whole (6 bytes), and "n m" as "on m" (1 + 3 bytes). */
START_TEST(test_keep)
{
    set("stop-text", "keep");
    set("stop", "on mat");
    append(ON);
    append(MAT);
    ck_assert_int_eq(G.stop.rule, STOP_STRING);
    ck_assert_uint_eq(G.stop.text_end, 6);
    ck_text("on mat", "The cat sat on mat");
    ck_assert_str_eq(stop_shown(&G.stop, &S), "kept in the text");
    struct err e;
    ck_assert_int_eq(gen_restart(&G, L.prompt, L.prompt_len, &e), 0);
    set("stop", "");
    set("stop", "n m");
    append(ON);
    append(MAT);
    ck_assert_uint_eq(G.stop.text_end, 4);
    ck_text("on m", "The cat sat on m");
}
END_TEST

/* Two strings complete on the same token: the first of the list ends the
 * text, as vLLM checks them in order. */
START_TEST(test_first_of_the_list)
{
    set("stop", "n m");
    set("stop", "on mat");
    append(ON);
    append(MAT);
    ck_assert_int_eq(G.stop.which, 0);
    ck_text("o", "The cat sat o");
    settings_defaults(&S);
    set("stop", "on mat");
    set("stop", "n m");
    struct err e;
    ck_assert_int_eq(gen_restart(&G, L.prompt, L.prompt_len, &e), 0);
    append(ON);
    append(MAT);
    ck_assert_int_eq(G.stop.which, 0);
    ck_text("", "The cat sat");
}
END_TEST

/* What a stream has written so far. */
struct sink {
    char *buf;
    size_t len;
    FILE *f;
};

static void sink_open(struct sink *k)
{
    k->buf = NULL;
    k->len = 0;
    k->f = open_memstream(&k->buf, &k->len);
    ck_assert_ptr_nonnull(k->f);
}

static void ck_streamed(struct sink *k, int final, const char *want)
{
    ck_assert_int_eq(gen_stream(&G, k->f, final), 0);
    fflush(k->f);
    ck_assert_str_eq(k->buf, want);
}

static void sink_close(struct sink *k)
{
    fclose(k->f);
    free(k->buf);
}

/* The held-back stream under stop "on mat": after "on" the text may be the
 * start of the string, so only "The cat sat" goes out (before part 9 "The
 * cat sat on" did, and the stripped text could never be taken back); "mat"
 * completes it, and nothing of it is ever written. */
START_TEST(test_stream_never_shows_a_stop_string)
{
    struct sink k;
    sink_open(&k);
    set("stop", "on mat");
    ck_streamed(&k, 0, "The cat sat");
    append(ON);
    ck_assert_uint_eq(G.decided, 0);
    ck_streamed(&k, 0, "The cat sat");
    append(MAT);
    ck_streamed(&k, 0, "The cat sat");
    ck_streamed(&k, 1, "The cat sat");
    sink_close(&k);
}
END_TEST

/* Held text that turns out not to be a stop string goes out as soon as it
 * is decided: under "on rug", "on" waits, and goes with " mat"; under
 * "mat!", "on " goes and "mat" waits for the next token, the end token,
 * after which (final) it is written: no stop string matched. */
START_TEST(test_stream_releases_what_did_not_match)
{
    struct sink k;
    sink_open(&k);
    set("stop", "on rug");
    append(ON);
    ck_streamed(&k, 0, "The cat sat");
    append(MAT);
    ck_assert_int_eq(G.stop.rule, STOP_NONE);
    ck_streamed(&k, 0, "The cat sat on mat");
    sink_close(&k);

    struct err e;
    ck_assert_int_eq(gen_restart(&G, L.prompt, L.prompt_len, &e), 0);
    sink_open(&k);
    set("stop", "");
    set("stop", "mat!");
    append(ON);
    ck_streamed(&k, 0, "The cat sat on");
    append(MAT);
    ck_assert_uint_eq(G.decided, 3); /* "on " of "on mat" */
    ck_streamed(&k, 0, "The cat sat on ");
    append(EOS);
    ck_assert_int_eq(G.stop.rule, STOP_EOS);
    ck_streamed(&k, 1, "The cat sat on mat");
    sink_close(&k);
}
END_TEST

/* Kept strings are not held: the text shows them anyway. */
START_TEST(test_stream_keep_holds_nothing)
{
    struct sink k;
    sink_open(&k);
    set("stop-text", "keep");
    set("stop", "on mat");
    append(ON);
    ck_streamed(&k, 0, "The cat sat on");
    append(MAT);
    ck_streamed(&k, 1, "The cat sat on mat");
    sink_close(&k);
}
END_TEST

/* A blank line as the stop string of a byte-level vocabulary ("Hel" "lo\n"
 * "\nWorld"): the first "\n" waits, the second completes "\n\n" at byte 2
 * of "lo\n\nWorld", and the stream shows "Hello" and never a newline. */
START_TEST(test_stream_blank_line)
{
    static const char *const TOK[] = { "Hel", "lo\n", "\nWorld" };
    static const size_t LEN[] = { 3, 3, 6 };
    struct vocab v;
    struct err e;
    ck_assert_msg(vocab_from_bytes(&v, 3, TOK, LEN, 3, &e) == 0, "%s", e.msg);
    struct gen g;
    int prompt[] = { 0 };
    ck_assert_int_eq(gen_start(&g, &v, prompt, 1, 1, &e), 0);
    set("stop", "\\n\\n");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(gen_append(&g, 1, &S, &e), 0);
    ck_assert_int_eq(gen_stream(&g, f, 0), 0);
    fflush(f);
    ck_assert_str_eq(buf, "Hello");
    ck_assert_int_eq(gen_append(&g, 2, &S, &e), 0);
    ck_assert_int_eq(g.stop.rule, STOP_STRING);
    ck_assert_uint_eq(g.stop.text_end, 2);
    ck_assert_int_eq(gen_stream(&g, f, 1), 0);
    fflush(f);
    ck_assert_str_eq(buf, "Hello");
    fclose(f);
    free(buf);
    gen_free(&g);
    vocab_free(&v);
}
END_TEST

/* A byte-level token may hold a NUL byte: the match looks past it ("a\0"
 * then "b!" under stop "b!": found at byte 2; before, the search of a C
 * string ended at the NUL and the loop never stopped). */
START_TEST(test_past_a_nul_byte)
{
    static const char *const TOK[] = { "Q", "a\0", "b!" };
    static const size_t LEN[] = { 1, 2, 2 };
    struct vocab v;
    struct err e;
    ck_assert_msg(vocab_from_bytes(&v, 3, TOK, LEN, 3, &e) == 0, "%s", e.msg);
    struct gen g;
    int prompt[] = { 0 };
    ck_assert_int_eq(gen_start(&g, &v, prompt, 1, 1, &e), 0);
    set("stop", "b!");
    ck_assert_int_eq(gen_append(&g, 1, &S, &e), 0);
    ck_assert_int_eq(g.stop.rule, STOP_NONE);
    ck_assert_int_eq(gen_append(&g, 2, &S, &e), 0);
    ck_assert_int_eq(g.stop.rule, STOP_STRING);
    ck_assert_uint_eq(g.stop.text_end, 2);
    gen_free(&g);
    vocab_free(&v);
}
END_TEST

/* The decided part of a text under several strings: "xab" under "abc" and
 * "bcd" keeps "x" ("ab" may grow into "abc"); "xay" is all decided; kept
 * strings hold nothing. */
START_TEST(test_decided)
{
    set("stop", "abc");
    set("stop", "bcd");
    ck_assert_uint_eq(stop_decided(&S, "xab", 3), 1);
    ck_assert_uint_eq(stop_decided(&S, "xay", 3), 3);
    ck_assert_uint_eq(stop_decided(&S, "xb", 2), 1);
    ck_assert_uint_eq(stop_decided(&S, "", 0), 0);
    set("stop-text", "keep");
    ck_assert_uint_eq(stop_decided(&S, "xab", 3), 3);
}
END_TEST

/* The stopping lesson's step 1 is the toy lesson's step 1 with an [EOS]
 * logit of -2.0 added: e^-2 = 0.1353 joins the sum, 18.5312 + 0.1353 =
 * 18.6666, every other probability shrinks by 18.5312 / 18.6666 = 0.9927,
 * so "on" gets 8.1662 / 18.6666 = 0.4375 instead of the toy's 0.4407, and
 * [EOS] 0.1353 / 18.6666 = 0.0073: the numbers step 1's text now says. */
START_TEST(test_step1_numbers)
{
    struct source src;
    struct trace t;
    struct err e;
    ck_assert_msg(source_open(&src, &L, NULL, 0, 0, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(trace_init(&t, L.vocab.n, &e), 0);
    source_step_settings(&src, 1, &S);
    ck_assert_msg(source_run_step(&src, 1, &S, L.prompt, L.prompt_len, &t, &e) == 0, "%s", e.msg);
    ck_assert_double_eq_tol(t.sum_exp, 18.6666, 5e-5);
    ck_assert_double_eq_tol(t.rows[t.rank_of[ON]].prob, 0.4375, 5e-5);
    ck_assert_double_eq_tol(t.rows[t.rank_of[EOS]].prob, 0.0073, 5e-5);
    ck_assert_double_eq_tol(t.rows[t.rank_of[EOS]].exp, 0.1353, 5e-5);
    ck_assert_double_eq_tol(t.rows[t.rank_of[ON]].exp, 8.1662, 5e-5);
    double toy_sum = t.sum_exp - t.rows[t.rank_of[EOS]].exp; /* the toy lesson's seven */
    ck_assert_double_eq_tol(toy_sum, 18.5312, 5e-5);
    ck_assert_double_eq_tol(toy_sum / t.sum_exp, 0.9927, 5e-5);
    ck_assert_double_eq_tol(8.1662 / 18.5312, 0.4407, 5e-5); /* the toy lesson's "on" */
    ck_assert_int_eq(t.choice.id, ON);
    trace_free(&t);
    source_close(&src);
}
END_TEST

Suite *suite_stop(void)
{
    Suite *s = suite_create("stop");
    TCase *tc = tcase_create("stop");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_strip_across_two_tokens);
    tcase_add_test(tc, test_strip_inside_a_token);
    tcase_add_test(tc, test_keep);
    tcase_add_test(tc, test_first_of_the_list);
    tcase_add_test(tc, test_stream_never_shows_a_stop_string);
    tcase_add_test(tc, test_stream_releases_what_did_not_match);
    tcase_add_test(tc, test_stream_keep_holds_nothing);
    tcase_add_test(tc, test_stream_blank_line);
    tcase_add_test(tc, test_past_a_nul_byte);
    tcase_add_test(tc, test_decided);
    tcase_add_test(tc, test_step1_numbers);
    suite_add_tcase(s, tc);
    return s;
}
