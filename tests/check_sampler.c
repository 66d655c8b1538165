/* The sampling core against DESIGN.md section 2, on small hand-made rows
 * whose answers can be worked out on paper. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/grammar.h"
#include "core/philox.h"
#include "core/sampler.h"
#include "core/settings.h"
#include "suites.h"

#define V_MAX 16

static struct trace T;
static struct sampler_settings S;

static void setup(void)
{
    sampler_defaults(&S);
    memset(&T, 0, sizeof T);
}

static void teardown(void)
{
    trace_free(&T);
}

/* Runs the chain on n logits with no context; asserts success. */
static void run(const double *z, int n)
{
    struct err e;
    trace_free(&T);
    ck_assert_int_eq(trace_init(&T, n, &e), 0);
    struct sampler_input in = { .vocab_size = n, .logits = z, .step = 1 };
    ck_assert_msg(sampler_run(&in, &S, &T, &e) == 0, "sampler_run: %s", e.msg);
}

/* Same, with a context of which the first prompt_len are the prompt. */
static void run_ctx(const double *z, int n, const int *ctx, int len, int prompt_len)
{
    struct err e;
    trace_free(&T);
    ck_assert_int_eq(trace_init(&T, n, &e), 0);
    struct sampler_input in = { .vocab_size = n,
                                .logits = z,
                                .context = ctx,
                                .context_len = len,
                                .prompt_len = prompt_len,
                                .step = 1 };
    ck_assert_msg(sampler_run(&in, &S, &T, &e) == 0, "sampler_run: %s", e.msg);
}

static const struct trace_row *row_of(int id)
{
    return &T.rows[T.rank_of[id]];
}

static int kept(int id)
{
    return row_of(id)->removed_by == TRACE_KEPT;
}

/* The report of stage st in the run's chain (it must be there). */
static const struct stage_report *rep_of(enum stage st)
{
    for (int c = 0; c < T.n_stages; c++)
        if (T.stages[c].stage == st)
            return &T.stages[c];
    ck_abort_msg("stage %s is not in the chain", stage_name(st));
    return NULL;
}

/* Sets a setting of S by its text, as an option would. */
static int settings_set_sampler(struct sampler_settings *s, const char *name, const char *value,
                                struct err *e)
{
    struct settings all;
    settings_defaults(&all);
    all.sampler = *s;
    if (settings_set(&all, name, value, e) < 0)
        return -1;
    *s = all.sampler;
    return 0;
}

/* ---- core ---------------------------------------------------------------- */

START_TEST(test_softmax_by_hand)
{
    /* [2, 1, 0]: p_i = e^z_i / (e^2 + e + 1), worked by hand in seed 002 exercise 1. */
    const double z[] = { 2.0, 1.0, 0.0 };
    run(z, 3);
    double sum = exp(2.0) + exp(1.0) + 1.0;
    ck_assert_double_eq_tol(T.sum_exp, sum, 1e-12);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(T.rows[i].id, i);
        ck_assert_double_eq_tol(T.rows[i].prob, exp(z[i]) / sum, 1e-15);
        ck_assert_double_eq_tol(T.rows[i].exp, exp(z[i]), 1e-12);
        ck_assert_double_eq_tol(T.rows[i].final, T.rows[i].prob, 1e-15);
    }
    ck_assert_double_eq_tol(T.rows[2].cum, 1.0, 1e-15);
    ck_assert_int_eq(T.kept_count, 3);
    ck_assert_double_eq_tol(T.kept_mass, 1.0, 1e-15);
}
END_TEST

START_TEST(test_temperature_divides_logits)
{
    const double z[] = { 3.0, 1.0, 0.0 };
    S.temperature = 2.0;
    run(z, 3);
    double sum = exp(1.5) + exp(0.5) + 1.0;
    ck_assert_double_eq_tol(row_of(0)->adjusted, 1.5, 1e-15);
    ck_assert_double_eq_tol(row_of(0)->prob, exp(1.5) / sum, 1e-15);
    ck_assert_double_eq_tol(T.sum_exp, sum, 1e-12);
}
END_TEST

START_TEST(test_temperature_zero_is_greedy)
{
    const double z[] = { 0.5, 2.0, 1.9, -1.0 };
    S.temperature = 0.0;
    S.seed = 99;
    run(z, 4);
    ck_assert(T.greedy);
    ck_assert_int_eq(T.choice.id, 1);
    ck_assert_int_eq(T.choice.sampled, 0);
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert_double_eq(row_of(1)->final, 1.0);
    ck_assert_int_eq(row_of(2)->removed_by, STAGE_TEMPERATURE);
    /* No division happens: the probabilities shown are those of T = 1. */
    ck_assert_double_eq(row_of(1)->adjusted, 2.0);
}
END_TEST

START_TEST(test_ties_go_to_the_lower_id)
{
    const double z[] = { 1.0, 3.0, 3.0, 1.0, 3.0 };
    run(z, 5);
    int order[] = { 1, 2, 4, 0, 3 };
    for (int r = 0; r < 5; r++)
        ck_assert_int_eq(T.rows[r].id, order[r]);
    S.temperature = 0.0;
    run(z, 5);
    ck_assert_int_eq(T.choice.id, 1);
    S.temperature = 1.0;
    S.top_k = 2;
    run(z, 5);
    ck_assert(kept(1) && kept(2) && !kept(4));
}
END_TEST

START_TEST(test_hf_top_k_keeps_ties_with_kth)
{
    const double z[] = { 1.0, 3.0, 2.0, 2.0, 2.0, 0.0 };
    S.top_k = 2;
    run(z, 6);
    ck_assert_int_eq(T.kept_count, 2); /* lesson order: exactly k */
    chain_preset(&S.chain, PRESET_HF);
    run(z, 6);
    ck_assert_int_eq(T.kept_count, 4); /* hf: 3 and every 2.0 tied with the 2nd */
    ck_assert(kept(1) && kept(2) && kept(3) && kept(4) && !kept(0) && !kept(5));
}
END_TEST

START_TEST(test_top_k_off_when_k_zero_or_at_least_v)
{
    const double z[] = { 0.1, 0.2, 0.3 };
    int ks[] = { 0, 3, 4, 1000 };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        S.top_k = ks[i];
        run(z, 3);
        ck_assert_int_eq(T.kept_count, 3);
        ck_assert(!rep_of(STAGE_TOP_K)->active);
    }
}
END_TEST

START_TEST(test_top_p_one_is_off_and_keeps_at_least_one)
{
    const double z[] = { 0.0, -1.0, -2.0, -30.0 };
    S.top_p = 1.0;
    run(z, 4);
    ck_assert_int_eq(T.kept_count, 4);
    S.top_p = 1e-9;
    run(z, 4);
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert(kept(0));
}
END_TEST

START_TEST(test_top_p_shortest_prefix_reaching_p)
{
    /* p = 0.5, 0.3, 0.2 given as logits ln p. */
    const double z[] = { log(0.5), log(0.3), log(0.2) };
    S.top_p = 0.79;
    run(z, 3);
    ck_assert_int_eq(T.kept_count, 2);
    ck_assert_double_eq_tol(row_of(0)->final, 0.5 / 0.8, 1e-12);
    S.top_p = 0.81;
    run(z, 3);
    ck_assert_int_eq(T.kept_count, 3);
    S.top_p = 0.49;
    run(z, 3);
    ck_assert_int_eq(T.kept_count, 1);
}
END_TEST

START_TEST(test_min_p_threshold_and_one)
{
    const double z[] = { log(0.5), log(0.3), log(0.15), log(0.05) };
    S.min_p = 0.3; /* bar 0.15: 0.15 stays (>=), 0.05 goes */
    run(z, 4);
    ck_assert(kept(2) && !kept(3));
    ck_assert_int_eq(row_of(3)->removed_by, STAGE_MIN_P);
    S.min_p = 1.0; /* only the top token (and its ties) */
    run(z, 4);
    ck_assert_int_eq(T.kept_count, 1);
    const double tie[] = { 2.0, 2.0, 1.0 };
    run(tie, 3);
    ck_assert_int_eq(T.kept_count, 2);
}
END_TEST

START_TEST(test_single_finite_logit)
{
    const double z[] = { -INFINITY, 0.25, -INFINITY, -INFINITY };
    S.top_p = 0.5;
    S.temperature = 0.7;
    run(z, 4);
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert_int_eq(T.rows[0].id, 1);
    ck_assert_double_eq(T.rows[0].prob, 1.0);
    ck_assert_double_eq(T.rows[0].final, 1.0);
    ck_assert_int_eq(row_of(0)->removed_by, TRACE_MASKED);
    ck_assert_double_eq(row_of(0)->prob, 0.0);
    for (int i = 0; i < 50; i++) {
        struct choice c;
        sampler_draw(&T, sampler_u((uint64_t)i, 1, 0, 0), &c);
        ck_assert_int_eq(c.id, 1);
    }
}
END_TEST

START_TEST(test_adding_a_constant_changes_no_probability)
{
    const double z[] = { -3.2, 0.8, 1.2, 0.5, -0.4, 2.1, 0.9 };
    double zs[7];
    S.top_p = 0.9;
    S.temperature = 0.8;
    S.seed = 5;
    run(z, 7);
    double p[7];
    int choice = T.choice.id, kc = T.kept_count;
    for (int i = 0; i < 7; i++)
        p[i] = row_of(i)->final;
    double shifts[] = { 10.0, -100.0, 500.0 };
    for (size_t k = 0; k < sizeof shifts / sizeof shifts[0]; k++) {
        for (int i = 0; i < 7; i++)
            zs[i] = z[i] + shifts[k];
        run(zs, 7);
        ck_assert_int_eq(T.choice.id, choice);
        ck_assert_int_eq(T.kept_count, kc);
        for (int i = 0; i < 7; i++)
            ck_assert_double_eq_tol(row_of(i)->final, p[i], 1e-12);
        /* The same through the shift setting. */
        S.shift = shifts[k];
        run(z, 7);
        for (int i = 0; i < 7; i++)
            ck_assert_double_eq_tol(row_of(i)->final, p[i], 1e-12);
        S.shift = 0.0;
    }
}
END_TEST

START_TEST(test_penalty_engine_and_lesson_formulas)
{
    const double z[] = { 2.0, -1.0, 0.5, 3.0 };
    const int ctx[] = { 3, 0, 1 }; /* prompt: 3; generated: 0, 1 */
    S.repetition_penalty = 2.0;
    S.penalty_formula = PENALTY_ENGINE;
    S.penalty_scope = SCOPE_GENERATED;
    run_ctx(z, 4, ctx, 3, 1);
    ck_assert_double_eq(row_of(0)->adjusted, 1.0);  /* 2 / 2 */
    ck_assert_double_eq(row_of(1)->adjusted, -2.0); /* -1 * 2 */
    ck_assert_double_eq(row_of(2)->adjusted, 0.5);  /* not seen */
    ck_assert_double_eq(row_of(3)->adjusted, 3.0);  /* prompt only: not counted */
    ck_assert_int_eq(T.penalized, 2);
    S.penalty_formula = PENALTY_LESSON;
    run_ctx(z, 4, ctx, 3, 1);
    ck_assert_double_eq(row_of(1)->adjusted, -0.5); /* -1 / 2: raised */
    S.penalty_scope = SCOPE_ALL;
    run_ctx(z, 4, ctx, 3, 1);
    ck_assert_double_eq(row_of(3)->adjusted, 1.5);
}
END_TEST

START_TEST(test_penalty_last_n_and_presence_frequency)
{
    const double z[] = { 1.0, 1.0, 1.0, 1.0 };
    const int ctx[] = { 0, 0, 1, 2, 2, 2 };
    S.penalty_scope = SCOPE_ALL;
    S.frequency_penalty = 0.5;
    S.presence_penalty = 0.25;
    run_ctx(z, 4, ctx, 6, 0);
    ck_assert_double_eq(row_of(0)->adjusted, 1.0 - 2 * 0.5 - 0.25);
    ck_assert_double_eq(row_of(1)->adjusted, 1.0 - 0.5 - 0.25);
    ck_assert_double_eq(row_of(2)->adjusted, 1.0 - 3 * 0.5 - 0.25);
    ck_assert_double_eq(row_of(3)->adjusted, 1.0);
    ck_assert_int_eq(row_of(2)->seen, 3);
    S.penalty_last_n = 3; /* only 2, 2, 2 */
    run_ctx(z, 4, ctx, 6, 0);
    ck_assert_double_eq(row_of(0)->adjusted, 1.0);
    ck_assert_double_eq(row_of(2)->adjusted, 1.0 - 1.5 - 0.25);
    /* Repetition first, then frequency and presence (as the engines do). */
    S.penalty_last_n = 0;
    S.repetition_penalty = 2.0;
    run_ctx(z, 4, ctx, 6, 0);
    ck_assert_double_eq(row_of(1)->adjusted, 1.0 / 2.0 - 0.5 - 0.25);
}
END_TEST

START_TEST(test_preset_orders)
{
    struct chain c;
    /* The grammar's mask first everywhere: vLLM's bitmask goes on the
     * logits before its sampler runs (the GPU model runner), llama.cpp's
     * grammar_first before its chain. Then vLLM's v1 Sampler: bad words,
     * the logits processors that can change the argmax (min tokens, logit
     * bias), the penalties, then sample(): temperature, min-p, top-k and
     * top-p. */
    const enum stage vllm[] = { STAGE_GRAMMAR,    STAGE_BAD_WORDS, STAGE_MIN_TOKENS,
                                STAGE_LOGIT_BIAS, STAGE_PENALTY,   STAGE_TEMPERATURE,
                                STAGE_MIN_P,      STAGE_TOP_K,     STAGE_TOP_P };
    /* llama.cpp's common_sampler: the logit bias first, then its default
     * chain (common/common.h): penalties, DRY, top-n-sigma, top-k, typical,
     * top-p, min-p, XTC, temperature. */
    const enum stage llama[] = { STAGE_GRAMMAR,     STAGE_LOGIT_BIAS, STAGE_PENALTY,    STAGE_DRY,
                                 STAGE_TOP_N_SIGMA, STAGE_TOP_K,      STAGE_TYPICAL_P,  STAGE_TOP_P,
                                 STAGE_MIN_P,       STAGE_XTC,        STAGE_TEMPERATURE };
    chain_preset(&c, PRESET_VLLM);
    ck_assert_int_eq(c.n, 9); /* vLLM has neither typical-p nor top-n-sigma */
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(c.stage[i], vllm[i]);
    chain_preset(&c, PRESET_LLAMACPP);
    ck_assert_int_eq(c.n, 11);
    for (int i = 0; i < 11; i++)
        ck_assert_int_eq(c.stage[i], llama[i]);
    ck_assert(!c.topk_keep_ties);
    chain_preset(&c, PRESET_HF);
    ck_assert(c.topk_keep_ties);
    /* HF's _get_logits_processor: sequence bias, repetition, no-repeat
     * n-gram, bad words, min new tokens, ..., then the warpers ... min-p,
     * typical, epsilon, eta; no top-n-sigma, no XTC. */
    ck_assert_int_eq(c.stage[0], STAGE_GRAMMAR);
    ck_assert_int_eq(c.stage[1], STAGE_LOGIT_BIAS);
    ck_assert_int_eq(c.stage[3], STAGE_NO_REPEAT_NGRAM); /* processors, before the warpers */
    ck_assert_int_eq(c.stage[4], STAGE_BAD_WORDS);
    ck_assert_int_eq(c.stage[5], STAGE_MIN_TOKENS);
    ck_assert_int_eq(c.stage[c.n - 3], STAGE_TYPICAL_P);
    ck_assert_int_eq(c.stage[c.n - 2], STAGE_EPSILON);
    ck_assert_int_eq(c.stage[c.n - 1], STAGE_ETA);
    ck_assert(!chain_has(&c, STAGE_TOP_N_SIGMA) && !chain_has(&c, STAGE_XTC));
}
END_TEST

/* The toy row of seed 002 (on 2.1, cat 1.2, mat 0.9, The 0.8, sat 0.5,
 * dog -0.4, [PAD] -3.2; ids 0 [PAD], 1 The, 2 cat, 3 sat, 4 dog, 5 on, 6 mat). */
static const double TOY[] = { -3.2, 0.8, 1.2, 0.5, -0.4, 2.1, 0.9 };

/* Runs the toy row through the reference and the O(V) sampler, which must
 * keep the same tokens; the reference's trace stays in T. */
/* Runs n logits z with a context (its ids; none when len is 0) and DRY's
 * breaker flags through the reference and the O(V) sampler, which must
 * agree token by token; the reference's trace stays in T. */
static void run_both_full(const double *z, int n, const int *ctx, int len, const uint8_t *breaker)
{
    struct trace f;
    struct err e;
    trace_free(&T);
    ck_assert_int_eq(trace_init(&T, n, &e), 0);
    ck_assert_int_eq(trace_init(&f, n, &e), 0);
    struct sampler_input in = { .vocab_size = n,
                                .logits = z,
                                .context = ctx,
                                .context_len = len,
                                .step = 1,
                                .breaker = breaker };
    ck_assert_msg(sampler_run(&in, &S, &T, &e) == 0, "sampler_run: %s", e.msg);
    ck_assert_msg(sampler_run_fast(&in, &S, &f, n, &e) == 0, "%s", e.msg);
    for (int r = 0; r < n; r++) {
        struct trace_row fr;
        int rank;
        ck_assert_int_eq(sampler_fast_row(&f, T.rows[r].id, &fr, &rank), 0);
        ck_assert_msg(fr.removed_by == T.rows[r].removed_by, "token %d: fast %d, reference %d",
                      T.rows[r].id, fr.removed_by, T.rows[r].removed_by);
        ck_assert_double_eq_tol(fr.adjusted, T.rows[r].adjusted, 1e-12);
    }
    ck_assert_int_eq(f.kept_count, T.kept_count);
    ck_assert_int_eq(f.greedy, T.greedy);
    ck_assert_double_eq_tol(f.kept_mass, T.kept_mass, 1e-12);
    trace_free(&f);
}

static void run_both_on(const double *z, int n)
{
    run_both_full(z, n, NULL, 0, NULL);
}

static void run_both(void)
{
    run_both_on(TOY, 7);
}

START_TEST(test_typical_p_by_hand)
{
    /* By hand: sum e^z = 18.5312, so p = on .4407, cat .1792, mat .1327,
     * The .1201, sat .0890, dog .0362, [PAD] .0022, and the entropy
     * H = -sum p ln p = 1.5405 nats. Surprisals -ln p: on 0.8195, cat
     * 1.7195, mat 2.0195, The 2.1195, sat 2.4195, dog 3.3195, [PAD] 6.1195;
     * their distances from H: cat 0.1789, mat 0.4789, The 0.5789, on
     * 0.7211, sat 0.8789, dog 1.7789, [PAD] 4.5789. Nearest first, the
     * running sum is cat .1792, mat .3119, The .4320, on .8727, sat .9616. */
    S.typical_p = 0.5; /* passes 0.5 at on: cat, mat, The, on kept */
    run_both();
    ck_assert_int_eq(T.kept_count, 4);
    ck_assert(kept(2) && kept(6) && kept(1) && kept(5));
    ck_assert(!kept(3) && !kept(4) && !kept(0));
    ck_assert_int_eq(row_of(3)->removed_by, STAGE_TYPICAL_P);
    ck_assert_double_eq_tol(T.kept_mass, 0.8727, 5e-5);
    S.typical_p = 0.3; /* passes 0.3 at mat: the most likely token, on, is removed */
    run_both();
    ck_assert_int_eq(T.kept_count, 2);
    ck_assert(kept(2) && kept(6) && !kept(5));
    /* What the stage's report saw: the running sum where it stopped. */
    ck_assert_double_eq_tol(rep_of(STAGE_TYPICAL_P)->cut, 0.3119, 5e-5);
    S.typical_p = 0.9; /* passes 0.9 at sat: only dog and [PAD] go */
    run_both();
    ck_assert_int_eq(T.kept_count, 5);
    ck_assert(!kept(4) && !kept(0));
    S.typical_p = 1.0; /* off */
    run_both();
    ck_assert_int_eq(T.kept_count, 7);
}
END_TEST

START_TEST(test_top_n_sigma_by_hand)
{
    /* By hand: the seven logits add up to 1.9, mean 0.2714; the squares of
     * their distances from it add up to 17.4343, / 7 = 2.4906, sd 1.5782
     * (dividing by the count, as llama.cpp does). The largest is on, 2.1. */
    S.top_n_sigma = 1.0; /* bar 2.1 - 1.5782 = 0.5218: sat (0.5) falls just below */
    run_both();
    ck_assert_int_eq(T.kept_count, 4);
    ck_assert(kept(5) && kept(2) && kept(6) && kept(1));
    ck_assert(!kept(3) && !kept(4) && !kept(0));
    ck_assert_int_eq(row_of(3)->removed_by, STAGE_TOP_N_SIGMA);
    /* The bar in the stage's report. */
    ck_assert_double_eq_tol(rep_of(STAGE_TOP_N_SIGMA)->cut, 0.5218, 5e-5);
    S.top_n_sigma = 0.5; /* bar 1.3109: on alone */
    run_both();
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert(kept(5));
    S.top_n_sigma = 1.5; /* bar -0.2673: only dog (-0.4) and [PAD] go */
    run_both();
    ck_assert_int_eq(T.kept_count, 5);
    ck_assert(!kept(4) && !kept(0));
    /* Temperature scales max and sd alike: at T = 0.5 the same four stay. */
    S.top_n_sigma = 1.0;
    S.temperature = 0.5;
    run_both();
    ck_assert_int_eq(T.kept_count, 4);
    ck_assert(!kept(3));
    S.top_n_sigma = 0.0; /* off */
    S.temperature = 1.0;
    run_both();
    ck_assert_int_eq(T.kept_count, 7);
}
END_TEST

/* The toy row's probabilities by hand (test_typical_p_by_hand): on .4407,
 * cat .1792, mat .1327, The .1201, sat .0890, dog .0362, [PAD] .0022;
 * entropy H = 1.5405 nats, of at most ln 7 = 1.9459 (normalized .79168). */

START_TEST(test_xtc_by_hand)
{
    /* llama.cpp's XTC: the tokens with p >= threshold go but the last of
     * them. In the lesson order XTC is the 8th stage. */
    S.xtc_probability = 1.0; /* the coin u < 1 always passes */
    S.xtc_threshold = 0.1;   /* on, cat, mat, The pass it: the first three go */
    run_both();
    ck_assert_int_eq(T.kept_count, 4);
    ck_assert(!kept(5) && !kept(2) && !kept(6) && kept(1) && kept(3) && kept(4) && kept(0));
    ck_assert_int_eq(row_of(5)->removed_by, STAGE_XTC);
    ck_assert_int_eq(rep_of(STAGE_XTC)->removed, 3);
    ck_assert_double_eq_tol(rep_of(STAGE_XTC)->removed_mass, 0.4407 + 0.1792 + 0.1327, 2e-4);
    S.xtc_threshold = 0.15; /* on and cat: on goes */
    run_both();
    ck_assert_int_eq(T.kept_count, 6);
    ck_assert(!kept(5) && kept(2));
    S.xtc_threshold = 0.4; /* on alone: one token above is never removed */
    run_both();
    ck_assert_int_eq(T.kept_count, 7);
    /* The coin: Philox with counter (step 1, row 0, 0, 1 + STAGE_XTC), seed
     * 1; XTC acts when u <= p, as llama.cpp's chance > p skips it. */
    double u = philox_uniform_word3(1, 1, 0, 0, 1u + STAGE_XTC);
    ck_assert_double_eq(sampler_coin(1, 1, 0, STAGE_XTC), u);
    ck_assert(u != sampler_u(1, 1, 0, 0)); /* not the draw's u */
    S.xtc_threshold = 0.1;
    S.xtc_probability = u; /* exactly u: acts */
    run_both();
    ck_assert_int_eq(T.kept_count, 4);
    ck_assert_double_eq(rep_of(STAGE_XTC)->cut, u);
    S.xtc_probability = nextafter(u, 0.0); /* just below u: the coin says no */
    run_both();
    ck_assert_int_eq(T.kept_count, 7);
}
END_TEST

START_TEST(test_epsilon_and_eta_by_hand)
{
    /* Hugging Face's epsilon warper: p < epsilon goes, the best stays. */
    S.epsilon_cutoff = 0.1; /* sat .0890, dog, [PAD] go */
    run_both();
    ck_assert_int_eq(T.kept_count, 4);
    ck_assert(kept(5) && kept(2) && kept(6) && kept(1) && !kept(3));
    ck_assert_int_eq(row_of(3)->removed_by, STAGE_EPSILON);
    ck_assert_double_eq(rep_of(STAGE_EPSILON)->cut, 0.1);
    S.epsilon_cutoff = 0.13; /* The .1201 too */
    run_both();
    ck_assert_int_eq(T.kept_count, 3);
    S.epsilon_cutoff = 0.9; /* everything is below: the most likely stays */
    run_both();
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert(kept(5));
    S.epsilon_cutoff = 0.0;
    /* Eta: bar min(eta, sqrt(eta) e^-H), e^-1.5405 = .21425. At 0.1:
     * min(0.1, .31623 x .21425 = .06775): dog and [PAD] go. */
    S.eta_cutoff = 0.1;
    run_both();
    ck_assert_int_eq(T.kept_count, 5);
    ck_assert(kept(3) && !kept(4) && !kept(0));
    ck_assert_int_eq(row_of(4)->removed_by, STAGE_ETA);
    ck_assert_double_eq_tol(rep_of(STAGE_ETA)->cut, 0.06775, 5e-5);
    S.eta_cutoff = 0.2; /* min(0.2, .44721 x .21425 = .09582): sat .0890 too */
    run_both();
    ck_assert_int_eq(T.kept_count, 4);
    ck_assert_double_eq_tol(rep_of(STAGE_ETA)->cut, 0.09582, 5e-5);
    S.eta_cutoff = 0.01; /* the bar is eta itself: only [PAD] .0022 goes */
    run_both();
    ck_assert_int_eq(T.kept_count, 6);
    ck_assert_double_eq(rep_of(STAGE_ETA)->cut, 0.01);
}
END_TEST

START_TEST(test_dynamic_temperature_by_hand)
{
    /* llama.cpp's temp_ext: T from max(0, T - R) to T + R by the normalized
     * entropy .79168 to the exponent. T 1, R 0.5, exponent 1: 0.5 + 1 x
     * .79168 = 1.29168, so on's z' is 2.1 / 1.29168 = 1.62579. */
    S.dynatemp_range = 0.5;
    run_both();
    ck_assert(rep_of(STAGE_TEMPERATURE)->active);
    ck_assert_double_eq_tol(rep_of(STAGE_TEMPERATURE)->cut, 1.29168, 5e-5);
    ck_assert_double_eq_tol(row_of(5)->adjusted, 1.62579, 5e-5);
    S.dynatemp_exp = 2.0; /* 0.5 + .62677 = 1.12677 */
    run_both();
    ck_assert_double_eq_tol(rep_of(STAGE_TEMPERATURE)->cut, 1.12677, 5e-5);
    /* Temperature 0 with a range is a range from 0, not greedy: 0.5 x .79168. */
    S.temperature = 0.0;
    S.dynatemp_exp = 1.0;
    run_both();
    ck_assert(!T.greedy);
    ck_assert_int_eq(T.kept_count, 7);
    ck_assert_double_eq_tol(rep_of(STAGE_TEMPERATURE)->cut, 0.39584, 5e-5);
    /* One token left: nothing to scale, as llama.cpp returns early. */
    struct err e;
    ck_assert_int_eq(chain_parse("top-k,temperature", &S.chain, &e), 0);
    S.temperature = 1.0;
    S.top_k = 1;
    run_both();
    ck_assert_double_eq(row_of(5)->adjusted, 2.1);
    /* Entropy 0 (e^-800 is 0 in double) with T - R <= 0: T 0, greedy. */
    const double peaked[] = { 0.0, -800.0, -900.0 };
    chain_preset(&S.chain, PRESET_LESSON);
    S.top_k = 0;
    S.temperature = 0.5;
    run_both_on(peaked, 3);
    ck_assert(T.greedy);
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert_double_eq(rep_of(STAGE_TEMPERATURE)->cut, 0.0);
}
END_TEST

/* Both samplers on the toy row with a context (ids of the toy vocabulary). */
static void run_both_ctx(const int *ctx, int len)
{
    run_both_full(TOY, 7, ctx, len, NULL);
}

START_TEST(test_no_repeat_ngram_by_hand)
{
    /* "The cat sat on mat The cat": ids 1 2 3 5 6 1 2 (Hugging Face's
     * no_repeat_ngram_size counts the prompt too). */
    const int ctx[] = { 1, 2, 3, 5, 6, 1, 2 };
    S.no_repeat_ngram_size = 2; /* the last token, cat, was followed by sat: sat goes */
    run_both_ctx(ctx, 7);
    ck_assert_int_eq(T.kept_count, 6);
    ck_assert_int_eq(row_of(3)->removed_by, STAGE_NO_REPEAT_NGRAM);
    ck_assert_double_eq_tol(rep_of(STAGE_NO_REPEAT_NGRAM)->removed_mass, 0.0890, 5e-5);
    S.no_repeat_ngram_size = 3; /* "The cat" was followed by sat too */
    run_both_ctx(ctx, 7);
    ck_assert_int_eq(T.kept_count, 6);
    ck_assert(!kept(3));
    S.no_repeat_ngram_size = 4; /* "mat The cat" never came before: nothing goes */
    run_both_ctx(ctx, 7);
    ck_assert_int_eq(T.kept_count, 7);
    S.no_repeat_ngram_size = 1; /* every token of the text goes: [PAD] and dog stay */
    run_both_ctx(ctx, 7);
    ck_assert_int_eq(T.kept_count, 2);
    ck_assert(kept(0) && kept(4));
    ck_assert_int_eq(T.choice.id, 4); /* dog, e^-0.4 against [PAD]'s e^-3.2 */
    /* Every token banned: Hugging Face's row would be all -inf; the most
     * likely, on, stays here. */
    const int all[] = { 0, 1, 2, 3, 4, 5, 6 };
    run_both_ctx(all, 7);
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert(kept(5));
    ck_assert_int_eq(rep_of(STAGE_NO_REPEAT_NGRAM)->removed, 6);
    run_both_ctx(ctx, 0); /* no text: nothing to repeat */
    ck_assert_int_eq(T.kept_count, 7);
}
END_TEST

START_TEST(test_dry_by_hand)
{
    /* llama.cpp's DRY. "The cat sat on mat The cat" (1 2 3 5 6 1 2) read
     * backwards is cat The mat on sat cat The: the last two tokens, "The
     * cat", also end 5 back, where sat followed. So sat, and only sat,
     * would extend a repeat of 2 = the allowed length: it loses
     * multiplier x base^(2 - 2) = 1, from 0.5 to -0.5. */
    const int ctx[] = { 1, 2, 3, 5, 6, 1, 2 };
    S.dry_multiplier = 1.0;
    S.dry_base = 2.0;
    run_both_ctx(ctx, 7);
    ck_assert_double_eq_tol(row_of(3)->adjusted, -0.5, 1e-15);
    ck_assert_double_eq(row_of(5)->adjusted, 2.1);
    ck_assert_double_eq(row_of(2)->adjusted, 1.2);
    S.dry_allowed_length = 1; /* 2^(2 - 1) = 2: 0.5 - 2 */
    run_both_ctx(ctx, 7);
    ck_assert_double_eq_tol(row_of(3)->adjusted, -1.5, 1e-15);
    S.dry_allowed_length = 3; /* a repeat of 2 is allowed */
    run_both_ctx(ctx, 7);
    ck_assert_double_eq(row_of(3)->adjusted, 0.5);
    /* "The cat sat The cat sat The cat": the last five tokens also end 3
     * back (before the last "sat The cat"), so sat would extend a repeat of
     * 5, and of 2 from 6 back; the longer counts. llama.cpp's defaults:
     * 0.8 x 1.75^(5 - 2) = 4.2875, so sat goes from 0.5 to -3.7875. */
    const int loop[] = { 1, 2, 3, 1, 2, 3, 1, 2 };
    S.dry_multiplier = 0.8;
    S.dry_base = 1.75;
    S.dry_allowed_length = 2;
    run_both_ctx(loop, 8);
    ck_assert_double_eq_tol(row_of(3)->adjusted, 0.5 - 4.2875, 1e-12);
    S.dry_penalty_last_n = 5; /* "The cat sat The cat": a repeat of 2, 0.8 x 1 */
    run_both_ctx(loop, 8);
    ck_assert_double_eq_tol(row_of(3)->adjusted, 0.5 - 0.8, 1e-12);
    S.dry_penalty_last_n = 4; /* "cat sat The cat": a repeat of 1 only, allowed */
    run_both_ctx(loop, 8);
    ck_assert_double_eq(row_of(3)->adjusted, 0.5);
    S.dry_penalty_last_n = 2; /* a window no longer than the allowed length: nothing */
    run_both_ctx(loop, 8);
    ck_assert_double_eq(row_of(3)->adjusted, 0.5);
    /* Sequence breakers: a repeat never reaches back past one. The (as if
     * it held a newline) is 1 back, which caps every repeat at 1 token: with
     * allowed length 1, sat loses 0.8 x 1.75^0 = 0.8 instead of 0.8 x
     * 1.75^(5 - 1) = 7.503125; with allowed length 2 nothing is punished. A
     * breaker as the last token leaves nothing to repeat, and a breaker is
     * never penalized itself. */
    S.dry_penalty_last_n = -1;
    S.dry_allowed_length = 1;
    run_both_ctx(loop, 8);
    ck_assert_double_eq_tol(row_of(3)->adjusted, 0.5 - 7.503125, 1e-12);
    uint8_t brk[7] = { 0 };
    brk[1] = 1; /* The */
    run_both_full(TOY, 7, loop, 8, brk);
    ck_assert_double_eq_tol(row_of(3)->adjusted, 0.5 - 0.8, 1e-12);
    S.dry_allowed_length = 2;
    run_both_full(TOY, 7, loop, 8, brk);
    ck_assert_double_eq(row_of(3)->adjusted, 0.5);
    brk[1] = 0;
    brk[2] = 1; /* cat, the last token */
    run_both_full(TOY, 7, loop, 8, brk);
    ck_assert_double_eq(row_of(3)->adjusted, 0.5);
    brk[2] = 0;
    brk[3] = 1; /* sat itself */
    run_both_full(TOY, 7, loop, 8, brk);
    ck_assert_double_eq(row_of(3)->adjusted, 0.5);
}
END_TEST

/* The logit bias on the toy row (e^z: [PAD] .0408, The 2.2255, cat 3.3201,
 * sat 1.6487, dog .6703, on 8.1662, mat 2.4596). 2:-inf removes cat, its
 * z' left at 1.2; on 2.1 - 1.5 = 0.6 (e^ 1.8221); dog -0.4 + 2 = 1.6
 * (e^ 4.9530). The sum over all is 16.4699, of it cat's 3.3201 = .2016,
 * the mass removed; the kept sum 13.1498 gives dog 4.9530 / 13.1498 = .3767,
 * now the most likely. */
START_TEST(test_logit_bias_by_hand)
{
    struct err e;
    ck_assert_int_eq(settings_set_sampler(&S, "logit-bias", "2:-inf, 5:-1.5 4:2", &e), 0);
    run_both();
    ck_assert_int_eq(T.kept_count, 6);
    ck_assert_int_eq(row_of(2)->removed_by, STAGE_LOGIT_BIAS);
    ck_assert_double_eq(row_of(2)->adjusted, 1.2);
    ck_assert_double_eq_tol(row_of(5)->adjusted, 0.6, 1e-15);
    ck_assert_double_eq_tol(row_of(4)->adjusted, 1.6, 1e-15);
    ck_assert_int_eq(T.rows[0].id, 4);
    ck_assert_double_eq_tol(row_of(4)->final, 0.3767, 5e-5);
    ck_assert_int_eq(rep_of(STAGE_LOGIT_BIAS)->removed, 1);
    ck_assert_double_eq_tol(rep_of(STAGE_LOGIT_BIAS)->removed_mass, 0.2016, 5e-5);
    /* Every token at -inf: an engine's row would have no token left; the
     * most likely, on, stays (as no-repeat n-gram's rule). */
    ck_assert_int_eq(settings_set_sampler(&S, "logit-bias",
                                          "0:-inf,1:-inf,2:-inf,3:-inf,4:-inf,5:-inf,6:-inf", &e),
                     0);
    run_both();
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert(kept(5));
    ck_assert_int_eq(rep_of(STAGE_LOGIT_BIAS)->removed, 6);
    /* An id past the vocabulary is refused by name, by both samplers. */
    ck_assert_int_eq(settings_set_sampler(&S, "logit-bias", "9:1", &e), 0);
    struct sampler_input in = { .vocab_size = 7, .logits = TOY, .step = 1 };
    ck_assert_int_eq(sampler_run(&in, &S, &T, &e), -1);
    ck_assert_str_eq(e.msg, "logit-bias: token 9 is not in the vocabulary (0..6)");
    ck_assert_int_eq(sampler_run_fast(&in, &S, &T, 7, &e), -1);
    ck_assert_str_eq(e.msg, "logit-bias: token 9 is not in the vocabulary (0..6)");
}
END_TEST

/* Bad words on "The cat sat" (1 2 3; e^z as above, sum 18.5312): "6"
 * removes mat always; "3 4" removes dog (the text ends with sat); "2 5"
 * leaves on (it does not end with cat); "1 2 3 1" removes The (the whole
 * text, prompt included, as Hugging Face). Removed: 2.4596 + .6703 +
 * 2.2255 = 5.3555, .2890 of the sum; on keeps 8.1662 / 13.1758 = .6198. */
START_TEST(test_bad_words_by_hand)
{
    struct err e;
    const int ctx[] = { 1, 2, 3 };
    ck_assert_int_eq(settings_set_sampler(&S, "bad-words", "6; 3 4; 2 5; 1 2 3 1", &e), 0);
    run_both_ctx(ctx, 3);
    ck_assert_int_eq(T.kept_count, 4);
    ck_assert(!kept(6) && !kept(4) && !kept(1));
    ck_assert_int_eq(row_of(4)->removed_by, STAGE_BAD_WORDS);
    ck_assert_double_eq_tol(rep_of(STAGE_BAD_WORDS)->removed_mass, 0.2890, 5e-5);
    ck_assert_double_eq_tol(row_of(5)->final, 0.6198, 5e-5);
    /* A sequence longer than the text and one more: never. */
    ck_assert_int_eq(settings_set_sampler(&S, "bad-words", "1 2 3 5", &e), 0);
    run_both_ctx(ctx + 1, 2);
    ck_assert_int_eq(T.kept_count, 7);
    run_both_ctx(ctx, 3); /* now the text is long enough: on goes */
    ck_assert(!kept(5));
    /* Every token a one-token bad word: the most likely, on, stays. */
    ck_assert_int_eq(settings_set_sampler(&S, "bad-words", "0;1;2;3;4;5;6", &e), 0);
    run_both_ctx(ctx, 3);
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert(kept(5));
}
END_TEST

START_TEST(test_min_tokens_by_hand)
{
    /* Hugging Face's min_new_tokens, vLLM's min_tokens: the end tokens go
     * while fewer than N tokens follow the prompt. Here on (5) and [PAD] (0)
     * play the end tokens; the prompt is the first 2 of 3 context tokens. */
    const int ctx[] = { 1, 2, 3 };
    const int ends[] = { 5, 0 };
    struct trace f;
    struct err e;
    ck_assert_int_eq(trace_init(&f, 7, &e), 0);
    struct sampler_input in = { .vocab_size = 7,
                                .logits = TOY,
                                .context = ctx,
                                .context_len = 3,
                                .prompt_len = 2,
                                .step = 1,
                                .end_ids = ends,
                                .n_end = 2 };
    S.min_tokens = 2; /* 1 generated < 2: on (.4407) and [PAD] (.0022) go */
    for (int pass = 0; pass < 2; pass++) {
        trace_free(&T);
        ck_assert_int_eq(trace_init(&T, 7, &e), 0);
        ck_assert_int_eq(sampler_run(&in, &S, &T, &e), 0);
        ck_assert_int_eq(sampler_run_fast(&in, &S, &f, 7, &e), 0);
        ck_assert_int_eq(f.kept_count, T.kept_count);
        if (pass == 0) {
            ck_assert_int_eq(T.kept_count, 5);
            ck_assert_int_eq(row_of(5)->removed_by, STAGE_MIN_TOKENS);
            ck_assert_double_eq_tol(rep_of(STAGE_MIN_TOKENS)->removed_mass, 0.4429, 5e-5);
        } else {
            ck_assert_int_eq(T.kept_count, 7);
        }
        S.min_tokens = 1; /* 1 generated: enough */
    }
    /* Every token an end token: the most likely stays. */
    const int all[] = { 0, 1, 2, 3, 4, 5, 6 };
    in.end_ids = all;
    in.n_end = 7;
    S.min_tokens = 5;
    trace_free(&T);
    ck_assert_int_eq(trace_init(&T, 7, &e), 0);
    ck_assert_int_eq(sampler_run(&in, &S, &T, &e), 0);
    ck_assert_int_eq(sampler_run_fast(&in, &S, &f, 7, &e), 0);
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert_int_eq(f.kept_count, 1);
    ck_assert(kept(5));
    /* An end token outside the vocabulary is refused by name. */
    const int bad[] = { 7 };
    in.end_ids = bad;
    in.n_end = 1;
    ck_assert_int_eq(sampler_run(&in, &S, &T, &e), -1);
    ck_assert_str_eq(e.msg, "end token 7 is not in the vocabulary (0..6)");
    trace_free(&f);
}
END_TEST

START_TEST(test_grammar_by_hand)
{
    /* The grammar's mask: the caller refuses on (5), cat (2) and [PAD] (0),
     * whose e^z are 8.1662, 3.3201 and 0.0408 of the sum 18.5312 (the toy
     * table): 11.5271 / 18.5312 = .6220 goes. The four left hold 7.0041,
     * so mat's final p is 2.4596 / 7.0041 = .3512, and greedy takes mat. */
    const uint8_t refused[7] = { 1, 0, 1, 0, 0, 1, 0 };
    struct trace f;
    struct err e;
    ck_assert_int_eq(trace_init(&f, 7, &e), 0);
    ck_assert_int_eq(trace_init(&T, 7, &e), 0);
    struct sampler_input in = { .vocab_size = 7,
                                .logits = TOY,
                                .step = 1,
                                .refused = refused,
                                .grammar_state = "expecting [a-z] (in root)" };
    S.regex = GRAMMAR_FRONT_REGEX; /* the setting that turns the stage on */
    S.temperature = 0.0;
    ck_assert_int_eq(sampler_run(&in, &S, &T, &e), 0);
    ck_assert_int_eq(sampler_run_fast(&in, &S, &f, 7, &e), 0);
    ck_assert_int_eq(T.kept_count, 1); /* greedy after the grammar */
    ck_assert_int_eq(f.kept_count, 1);
    ck_assert_int_eq(row_of(5)->removed_by, STAGE_GRAMMAR);
    ck_assert_int_eq(rep_of(STAGE_GRAMMAR)->removed, 3);
    ck_assert_double_eq_tol(rep_of(STAGE_GRAMMAR)->removed_mass, 0.6220, 5e-5);
    ck_assert_int_eq(T.choice.id, 6);
    ck_assert_int_eq(f.choice.id, 6);
    ck_assert_str_eq(T.grammar_state, "expecting [a-z] (in root)");
    ck_assert_str_eq(f.grammar_state, T.grammar_state);
    S.temperature = 1.0;
    ck_assert_int_eq(sampler_run(&in, &S, &T, &e), 0);
    ck_assert_int_eq(sampler_run_fast(&in, &S, &f, 7, &e), 0);
    ck_assert_int_eq(T.kept_count, 4);
    ck_assert_int_eq(f.kept_count, 4);
    ck_assert_double_eq_tol(row_of(6)->final, 0.3512, 5e-5);
    ck_assert_double_eq_tol(trace_final(&f, 6), 0.3512, 5e-5);
    /* A mask that leaves nothing is an error, not a silent pick. */
    const uint8_t all[7] = { 1, 1, 1, 1, 1, 1, 1 };
    in.refused = all;
    ck_assert_int_eq(sampler_run(&in, &S, &T, &e), -1);
    ck_assert_str_eq(e.msg, "grammar: it refuses every token still kept here (7 of them)");
    ck_assert_int_eq(sampler_run_fast(&in, &S, &f, 7, &e), -1);
    ck_assert_str_eq(e.msg, "grammar: it refuses every token still kept here (7 of them)");
    /* The stage on without a mask: the caller's mistake, said so. */
    in.refused = NULL;
    ck_assert_int_eq(sampler_run(&in, &S, &T, &e), -1);
    ck_assert_str_eq(e.msg, "grammar: the step has no mask (the caller gave none)");
    /* Off, a mask changes nothing. */
    S.regex = 0;
    in.refused = all;
    ck_assert_int_eq(sampler_run(&in, &S, &T, &e), 0);
    ck_assert_int_eq(T.kept_count, 7);
    trace_free(&f);
}
END_TEST

START_TEST(test_truncation_sees_the_logits_at_its_place_in_the_chain)
{
    /* min-p 0.2 with T = 3: after temperature the second token clears the bar,
     * before temperature it does not. */
    const double z[] = { 2.0, 0.0 }; /* ratio e^-2 = 0.135 at T = 1, e^(-2/3) = 0.513 at T = 3 */
    S.temperature = 3.0;
    S.min_p = 0.2;
    chain_preset(&S.chain, PRESET_VLLM);
    run(z, 2);
    ck_assert_int_eq(T.kept_count, 2);
    chain_preset(&S.chain, PRESET_LLAMACPP);
    run(z, 2);
    ck_assert_int_eq(T.kept_count, 1);
    /* Top-p after top-k sees the renormalized softmax of the survivors. */
    const double y[] = { log(0.4), log(0.3), log(0.2), log(0.1) };
    chain_preset(&S.chain, PRESET_LESSON);
    S.temperature = 1.0;
    S.min_p = 0.0;
    S.top_k = 2;
    S.top_p = 0.55; /* of 0.4 + 0.3: 0.571 reaches 0.55 with one token */
    run(y, 4);
    ck_assert_int_eq(T.kept_count, 1);
}
END_TEST

START_TEST(test_custom_order_without_a_stage_skips_it)
{
    const double z[] = { 1.0, 0.5, 0.0 };
    struct chain c = { .n = 1, .stage = { STAGE_TEMPERATURE }, .preset = PRESET_CUSTOM };
    S.chain = c;
    S.top_k = 1;
    run(z, 3);
    ck_assert_int_eq(T.kept_count, 3);
    ck_assert_int_eq(T.n_stages, 1);
}
END_TEST

START_TEST(test_stage_reports_add_up)
{
    const double z[] = { 3.0, 2.5, 2.0, 1.0, 0.0, -1.0, -2.0, -5.0 };
    S.top_k = 6;
    S.top_p = 0.9;
    S.min_p = 0.3;
    run(z, 8);
    double removed = 0.0;
    int count = 0;
    for (int c = 0; c < T.n_stages; c++) {
        removed += T.stages[c].removed_mass;
        count += T.stages[c].removed;
    }
    ck_assert_int_eq(count + T.kept_count, 8);
    ck_assert_double_eq_tol(removed + T.kept_mass, 1.0, 1e-12);
    double fin = 0.0;
    for (int r = 0; r < 8; r++)
        fin += T.rows[r].final;
    ck_assert_double_eq_tol(fin, 1.0, 1e-12);
}
END_TEST

START_TEST(test_entropy_of_uniform)
{
    const double z[] = { 0.7, 0.7, 0.7, 0.7 };
    run(z, 4);
    ck_assert_double_eq_tol(T.entropy, log(4.0), 1e-12);
}
END_TEST

/* ---- the draw ----------------------------------------------------------------- */

START_TEST(test_draw_rule_boundaries)
{
    const double z[] = { log(0.5), log(0.25), log(0.25) };
    run(z, 3);
    struct choice c;
    sampler_draw(&T, 0.0, &c);
    ck_assert_int_eq(c.id, 0);
    sampler_draw(&T, 0.4999, &c);
    ck_assert_int_eq(c.id, 0);
    ck_assert_double_eq(c.lo, 0.0);
    sampler_draw(&T, T.rows[0].cum_final, &c); /* "exceeds": equal goes on */
    ck_assert_int_eq(c.id, 1);
    sampler_draw(&T, 0.80, &c);
    ck_assert_int_eq(c.id, 2);
    sampler_draw(&T, 1.0 - 1.0 / 16777216.0, &c);
    ck_assert_int_eq(c.id, 2);
}
END_TEST

START_TEST(test_draw_skips_removed_tokens)
{
    const double z[] = { log(0.4), log(0.3), log(0.2), log(0.1) };
    S.top_k = 2;
    run(z, 4);
    struct choice c;
    sampler_draw(&T, 0.5, &c); /* kept 0.4/0.7 = 0.571 > 0.5 */
    ck_assert_int_eq(c.id, 0);
    sampler_draw(&T, 0.6, &c);
    ck_assert_int_eq(c.id, 1);
    sampler_draw(&T, 0.99, &c);
    ck_assert_int_eq(c.id, 1);
}
END_TEST

START_TEST(test_same_seed_same_draw)
{
    const double z[] = { -3.2, 0.8, 1.2, 0.5, -0.4, 2.1, 0.9 };
    int first[20];
    for (int s = 0; s < 20; s++) {
        S.seed = (uint64_t)s * 7919u;
        run(z, 7);
        first[s] = T.choice.id;
        ck_assert_double_eq(T.choice.u, sampler_u(S.seed, 1, 0, 0));
    }
    int differ = 0;
    for (int s = 0; s < 20; s++) {
        S.seed = (uint64_t)s * 7919u;
        run(z, 7);
        ck_assert_int_eq(T.choice.id, first[s]);
        differ += first[s] != first[0];
    }
    ck_assert_int_gt(differ, 0); /* the seed does matter */
}
END_TEST

/* Pearson's chi-square of n draws against the final probabilities. */
static double chi_square(int n, uint64_t seed, int *cats)
{
    int count[V_MAX] = { 0 };
    for (int i = 0; i < n; i++) {
        struct choice c;
        sampler_draw(&T, sampler_u(seed, 1, 0, (uint32_t)i), &c);
        count[c.id]++;
    }
    double chi = 0.0;
    *cats = 0;
    for (int r = 0; r < T.vocab_size; r++) {
        const struct trace_row *row = &T.rows[r];
        if (row->final <= 0.0) {
            ck_assert_int_eq(count[row->id], 0); /* removed tokens are never drawn */
            continue;
        }
        double expect = n * row->final;
        chi += (count[row->id] - expect) * (count[row->id] - expect) / expect;
        (*cats)++;
    }
    return chi;
}

START_TEST(test_chi_square_of_100000_draws)
{
    /* Critical values of chi-square at significance 0.001: df 6 -> 22.458,
     * df 2 -> 13.816. A sound sampler fails one seed in a thousand; these
     * seeds are fixed, so the result is the same on every run. */
    const double z[] = { -3.2, 0.8, 1.2, 0.5, -0.4, 2.1, 0.9 };
    int cats;
    run(z, 7);
    double chi = chi_square(100000, 20240601, &cats);
    ck_assert_int_eq(cats, 7);
    ck_assert_msg(chi < 22.458, "chi-square %f with 6 degrees of freedom", chi);
    S.top_k = 3;
    S.temperature = 0.8;
    run(z, 7);
    chi = chi_square(100000, 77, &cats);
    ck_assert_int_eq(cats, 3);
    ck_assert_msg(chi < 13.816, "chi-square %f with 2 degrees of freedom", chi);
}
END_TEST

/* ---- errors --------------------------------------------------------------- */

static void expect_error(const double *z, int n, const int *ctx, int len, int plen, const char *msg)
{
    struct err e = { 0, "" };
    trace_free(&T);
    ck_assert_int_eq(trace_init(&T, n, &e), 0);
    struct sampler_input in = { .vocab_size = n,
                                .logits = z,
                                .context = ctx,
                                .context_len = len,
                                .prompt_len = plen,
                                .step = 1 };
    ck_assert_int_eq(sampler_run(&in, &S, &T, &e), -1);
    ck_assert_str_eq(e.msg, msg);
}

START_TEST(test_bad_rows_are_refused)
{
    const double nan_row[] = { 1.0, NAN };
    expect_error(nan_row, 2, NULL, 0, 0, "logit of token 1 is NaN");
    const double inf_row[] = { INFINITY, 1.0 };
    expect_error(inf_row, 2, NULL, 0, 0, "logit of token 0 is +inf");
    const double dead[] = { -INFINITY, -INFINITY };
    expect_error(dead, 2, NULL, 0, 0, "no token has a finite logit");
    const double ok[] = { 1.0, 2.0 };
    const int ctx[] = { 0, 5 };
    expect_error(ok, 2, ctx, 2, 0, "context token 5 is not in the vocabulary (0..1)");
    expect_error(ok, 2, ctx, 1, 2, "prompt of 2 tokens in a context of 1");
}
END_TEST

START_TEST(test_settings_ranges_are_checked)
{
    const double ok[] = { 1.0, 2.0 };
    S.temperature = -0.5;
    expect_error(ok, 2, NULL, 0, 0, "temperature -0.5 is out of range (must be 0 or more)");
    sampler_defaults(&S);
    S.top_p = 0.0;
    expect_error(ok, 2, NULL, 0, 0, "top-p 0 is out of range (must be in (0, 1])");
    sampler_defaults(&S);
    S.min_p = 1.5;
    expect_error(ok, 2, NULL, 0, 0, "min-p 1.5 is out of range (must be in [0, 1])");
    sampler_defaults(&S);
    S.top_k = -1;
    expect_error(ok, 2, NULL, 0, 0, "top-k -1 is out of range (must be 0 or more)");
    sampler_defaults(&S);
    S.repetition_penalty = 0.0;
    expect_error(ok, 2, NULL, 0, 0, "repetition-penalty 0 is out of range (must be more than 0)");
}
END_TEST

Suite *suite_sampler(void)
{
    Suite *s = suite_create("sampler");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, teardown);
    tcase_add_test(core, test_softmax_by_hand);
    tcase_add_test(core, test_temperature_divides_logits);
    tcase_add_test(core, test_temperature_zero_is_greedy);
    tcase_add_test(core, test_penalty_engine_and_lesson_formulas);
    tcase_add_test(core, test_penalty_last_n_and_presence_frequency);
    tcase_add_test(core, test_preset_orders);
    tcase_add_test(core, test_typical_p_by_hand);
    tcase_add_test(core, test_top_n_sigma_by_hand);
    tcase_add_test(core, test_xtc_by_hand);
    tcase_add_test(core, test_epsilon_and_eta_by_hand);
    tcase_add_test(core, test_dynamic_temperature_by_hand);
    tcase_add_test(core, test_no_repeat_ngram_by_hand);
    tcase_add_test(core, test_dry_by_hand);
    tcase_add_test(core, test_min_tokens_by_hand);
    tcase_add_test(core, test_grammar_by_hand);
    tcase_add_test(core, test_logit_bias_by_hand);
    tcase_add_test(core, test_bad_words_by_hand);
    tcase_add_test(core, test_truncation_sees_the_logits_at_its_place_in_the_chain);
    tcase_add_test(core, test_stage_reports_add_up);
    tcase_add_test(core, test_entropy_of_uniform);
    tcase_add_test(core, test_draw_rule_boundaries);
    tcase_add_test(core, test_draw_skips_removed_tokens);
    tcase_add_test(core, test_same_seed_same_draw);
    tcase_add_test(core, test_chi_square_of_100000_draws);
    suite_add_tcase(s, core);
    TCase *edge = tcase_create("edge");
    tcase_add_checked_fixture(edge, setup, teardown);
    tcase_add_test(edge, test_ties_go_to_the_lower_id);
    tcase_add_test(edge, test_hf_top_k_keeps_ties_with_kth);
    tcase_add_test(edge, test_top_k_off_when_k_zero_or_at_least_v);
    tcase_add_test(edge, test_top_p_one_is_off_and_keeps_at_least_one);
    tcase_add_test(edge, test_top_p_shortest_prefix_reaching_p);
    tcase_add_test(edge, test_min_p_threshold_and_one);
    tcase_add_test(edge, test_single_finite_logit);
    tcase_add_test(edge, test_adding_a_constant_changes_no_probability);
    tcase_add_test(edge, test_custom_order_without_a_stage_skips_it);
    suite_add_tcase(s, edge);
    TCase *errors = tcase_create("errors");
    tcase_add_checked_fixture(errors, setup, teardown);
    tcase_add_test(errors, test_bad_rows_are_refused);
    tcase_add_test(errors, test_settings_ranges_are_checked);
    suite_add_tcase(s, errors);
    return s;
}
