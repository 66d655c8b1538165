/* check_nonfinite.c - the range of z' (issue 12, class 1; HACKING.md 4):
 * a value stage that takes a z' past RULE_Z_LIMIT refuses the step naming
 * its setting, on the reference and the fast path alike, and nothing
 * downstream ever sees a NaN or an infinity it would turn into an int. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/draws.h"
#include "core/sampler.h"
#include "core/sampler_rules.h"
#include "data/keys.h"
#include "tui/app.h"
#include "tui/app_int.h"
#include "suites.h"

/* The toy lesson's first step (seed 001's table): [PAD] The cat sat dog on mat. */
static const double TOY[7] = { -3.2, 0.8, 1.2, 0.5, -0.4, 2.1, 0.9 };

/* Runs both samplers on z (n tokens, context ctx of len, the prompt its
 * first plen) and returns the reference's status; the fast path must give
 * the same status and, on failure, the same message (into msg). */
static int run_both(const double *z, int n, const struct sampler_settings *s, const int *ctx,
                    int len, int plen, char *msg, size_t cap)
{
    struct trace tr, tf;
    struct err er, ef;
    ck_assert_int_eq(trace_init(&tr, n, &er), 0);
    ck_assert_int_eq(trace_init(&tf, n, &ef), 0);
    struct sampler_input in = { .vocab_size = n,
                                .logits = z,
                                .context = ctx,
                                .context_len = len,
                                .prompt_len = plen,
                                .step = 1 };
    int rr = sampler_run(&in, s, &tr, &er);
    int rf = sampler_run_fast(&in, s, &tf, 8, &ef);
    ck_assert_int_eq(rr, rf);
    if (rr < 0) {
        ck_assert_str_eq(er.msg, ef.msg);
        snprintf(msg, cap, "%s", er.msg);
        /* A refused run leaves no step behind (trace_invalidate). */
        ck_assert_int_eq(tr.n_rows, 0);
        ck_assert_int_eq(tf.n_rows, 0);
        ck_assert_int_eq(tf.fmax_valid, 0);
    } else {
        for (int r = 0; r < tr.n_rows; r++) {
            ck_assert(isfinite(tr.rows[r].prob) && isfinite(tr.rows[r].final));
            ck_assert(isfinite(tr.rows[r].adjusted) || tr.rows[r].removed_by == TRACE_MASKED);
        }
        ck_assert_int_eq(tr.choice.id, tf.choice.id);
        ck_assert_int_eq(tr.kept_count, tf.kept_count);
        msg[0] = '\0';
    }
    trace_free(&tr);
    trace_free(&tf);
    return rr;
}

START_TEST(test_temperature_overflow)
{
    /* The example: shift 1e6, T 1e-303. Every z / T is past
     * DBL_MAX (999996.8 / 1e-303 = 1e309), so token 0, the first id,
     * overflows; the largest |z| is 1e6 + 2.1, so T must be at least
     * 1000002.1 / 1e30 = 1.0000021e-24, which rounds up to 1.01e-24. */
    struct sampler_settings s;
    sampler_defaults(&s);
    s.shift = 1e6;
    s.temperature = 1e-303;
    char msg[512];
    ck_assert_int_eq(run_both(TOY, 7, &s, NULL, 0, 0, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "temperature 1e-303: token 0's z' / T overflows, past the sampler's "
                          "limit |z'| <= 1e+30; the smallest temperature for this step is "
                          "1.01e-24 (0 is greedy)");
    /* The temperature the message names is enough: "on" takes everything. */
    s.temperature = 1.01e-24;
    ck_assert_int_eq(run_both(TOY, 7, &s, NULL, 0, 0, msg, sizeof msg), 0);
}
END_TEST

START_TEST(test_temperature_finite_but_past)
{
    /* No shift, T 1e-31: token 0's -3.2 / 1e-31 = -3.2e31, finite but past
     * 1e30; the largest |z| is 3.2, so T >= 3.2e-30. */
    struct sampler_settings s;
    sampler_defaults(&s);
    s.temperature = 1e-31;
    char msg[512];
    ck_assert_int_eq(run_both(TOY, 7, &s, NULL, 0, 0, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "temperature 1e-31: token 0's z' / T becomes -3.2e+31, past the "
                          "sampler's limit |z'| <= 1e+30; the smallest temperature for this step "
                          "is 3.2e-30 (0 is greedy)");
    /* In llama.cpp's order temperature comes last, after the cuts: the
     * tokens top-k removed are divided and checked too (the same refusal). */
    chain_preset(&s.chain, PRESET_LLAMACPP);
    s.top_k = 1;
    ck_assert_int_eq(run_both(TOY, 7, &s, NULL, 0, 0, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "token 0's z' / T becomes -3.2e+31"));
}
END_TEST

/* A logit past the limit that a temperature above 1 would bring back within
 * it (5e30 / 10 = 5e29) is refused at the load, as the reference refuses it,
 * even though the fast path divides while it loads. */
START_TEST(test_load_range_before_the_division)
{
    static const double Z[3] = { 5e30, 1.0, 0.5 };
    struct sampler_settings s;
    sampler_defaults(&s);
    s.temperature = 10.0;
    char msg[512];
    ck_assert_int_eq(run_both(Z, 3, &s, NULL, 0, 0, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "logit of token 0 is 5e+30, past the sampler's limit |z| <= 1e+30");
    /* Within the limit, the same division is taken at the load. */
    static const double Z2[3] = { 9e29, 1.0, 0.5 };
    ck_assert_int_eq(run_both(Z2, 3, &s, NULL, 0, 0, msg, sizeof msg), 0);
}
END_TEST

START_TEST(test_penalty_overflow)
{
    /* "on" (id 5, z 2.1) generated once; the engine formula divides a
     * positive z by A: 2.1 / 1e-300 = 2.1e300. */
    struct sampler_settings s;
    sampler_defaults(&s);
    s.repetition_penalty = 1e-300;
    const int ctx[] = { 1, 2, 3, 5 };
    char msg[512];
    ck_assert_int_eq(run_both(TOY, 7, &s, ctx, 4, 3, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "repetition-penalty 1e-300: token 5's z' becomes 2.1e+300, past the "
                          "sampler's limit |z'| <= 1e+30");
    /* Two seen tokens past the limit: both name the lower id (3, "sat"). */
    const int ctx2[] = { 1, 2, 5, 3 };
    ck_assert_int_eq(run_both(TOY, 7, &s, ctx2, 4, 2, msg, sizeof msg), -1);
    ck_assert_ptr_nonnull(strstr(msg, "token 3's z' becomes 5e+299"));
    /* A frequency penalty at the top of its range stays within the limit. */
    sampler_defaults(&s);
    s.frequency_penalty = 1e6;
    ck_assert_int_eq(run_both(TOY, 7, &s, ctx, 4, 3, msg, sizeof msg), 0);
}
END_TEST

START_TEST(test_input_range)
{
    /* A logit past the limit is refused before any stage; -inf is a mask. */
    double z[7];
    memcpy(z, TOY, sizeof z);
    z[3] = 2e30;
    struct sampler_settings s;
    sampler_defaults(&s);
    s.temperature = 1.0;
    char msg[512];
    ck_assert_int_eq(run_both(z, 7, &s, NULL, 0, 0, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "logit of token 3 is 2e+30, past the sampler's limit |z| <= 1e+30");
    z[3] = -2e30;
    ck_assert_int_eq(run_both(z, 7, &s, NULL, 0, 0, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "logit of token 3 is -2e+30, past the sampler's limit |z| <= 1e+30");
    z[3] = -INFINITY;
    s.temperature = 1e-20; /* masked tokens stay -inf and are not checked */
    ck_assert_int_eq(run_both(z, 7, &s, NULL, 0, 0, msg, sizeof msg), 0);
    z[3] = 1e30; /* the limit itself is inside */
    s.temperature = 1.0;
    ck_assert_int_eq(run_both(z, 7, &s, NULL, 0, 0, msg, sizeof msg), 0);
}
END_TEST

START_TEST(test_histogram_bins)
{
    /* A range one subnormal wide: the width (5e-324 / 100) rounds to 0, and
     * (z - lo) / 0 is inf or NaN; the bin must still be a defined int. */
    struct draws_hist h = { .bins = 100, .lo = 0.0, .hi = 5e-324, .n = 2 };
    ck_assert_int_eq(draws_bin(&h, 0.0), 0);
    ck_assert_int_eq(draws_bin(&h, 5e-324), 99);
    ck_assert_int_eq(draws_bin(&h, NAN), 0);
    /* An ordinary one: [0, 10) in 10 bins, 3.5 in bin 3, the top in the last. */
    h = (struct draws_hist){ .bins = 10, .lo = 0.0, .hi = 10.0, .n = 2 };
    ck_assert_int_eq(draws_bin(&h, 3.5), 3);
    ck_assert_int_eq(draws_bin(&h, 10.0), 9);
}
END_TEST

/* The view: a value the step refuses is not applied, and says why. */
START_TEST(test_app_refuses_and_keeps)
{
    static struct app A; /* megabytes of history: not on the stack */
    struct err e;
    memset(&A, 0, sizeof A);
    ck_assert_msg(app_init(&A, TEST_LESSONS, "real-france", NULL, TEST_SOURCE, &e) == 0, "%s",
                  e.msg);
    double before = A.cur.sampler.temperature;
    app_apply_setting(&A, "temperature", "1e-307");
    ck_assert_int_eq(A.step_ok, 1);
    ck_assert_double_eq(A.cur.sampler.temperature, before);
    ck_assert_ptr_nonnull(strstr(A.msg, "temperature 1e-307: "));
    ck_assert_ptr_nonnull(strstr(A.msg, "(not applied)"));
    ck_assert_int_gt(A.t.n_rows, 0);
    app_free(&A);
}
END_TEST

Suite *suite_nonfinite(void)
{
    Suite *s = suite_create("nonfinite");
    TCase *tc = tcase_create("range");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_temperature_overflow);
    tcase_add_test(tc, test_temperature_finite_but_past);
    tcase_add_test(tc, test_load_range_before_the_division);
    tcase_add_test(tc, test_penalty_overflow);
    tcase_add_test(tc, test_input_range);
    tcase_add_test(tc, test_histogram_bins);
    tcase_add_test(tc, test_app_refuses_and_keeps);
    suite_add_tcase(s, tc);
    return s;
}
