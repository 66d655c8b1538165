/* Every worked number of the two seed lessons, computed by logitlab from the
 * lesson files. Each test names the seed and the place its numbers come from:
 *   seed 000 = ../shared/seeds/000_1660ea6ed7172999.txt (LM head, France, engines)
 *   seed 002 = ../shared/seeds/002_d90252059afa45e8.txt (toy vocabulary, exercises)
 * "Rounds to" means: the exact value, rounded to the seed's number of decimals,
 * is the seed's number. Where the seed's number is off beyond rounding, the test
 * asserts that too, and the lesson file carries a note. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "data/catalog.h"
#include "data/lesson.h"
#include "data/vocab.h"
#include "model/lmhead.h"
#include "core/sampler.h"
#include "core/settings.h"
#include "core/trace.h"
#include "source/path.h"
#include "source/source.h"
#include "suites.h"

static struct lesson L;
static struct source SRC; /* runs L */
static struct trace T;
static struct settings S;
static int *ctx;
static int ctx_len;

static void teardown(void)
{
    trace_free(&T);
    source_close(&SRC);
    lesson_free(&L);
    free(ctx);
    ctx = NULL;
}

static void load(const char *id)
{
    struct catalog cat;
    struct err e;
    ck_assert_msg(catalog_open(&cat, TEST_LESSONS, &e) == 0, "%s", e.msg);
    int rc = catalog_load(&cat, id, &L, &e);
    catalog_close(&cat);
    ck_assert_msg(rc == 0, "%s", e.msg);
    ck_assert_msg(source_open(&SRC, &L, NULL, 0, 0, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(trace_init(&T, L.vocab.n, &e), 0);
}

/* Runs step of the loaded lesson on the lesson's path, with the lesson's
 * settings and then "name", "value" pairs ended by NULL. */
static void step(int k, ...)
{
    struct err e;
    source_step_settings(&SRC, k, &S);
    va_list ap;
    va_start(ap, k);
    const char *name;
    while ((name = va_arg(ap, const char *)) != NULL) {
        const char *value = va_arg(ap, const char *);
        ck_assert_msg(settings_set(&S, name, value, &e) == 0, "%s: %s", name, e.msg);
    }
    va_end(ap);
    free(ctx);
    ck_assert_msg(source_lesson_context(&SRC, k, &ctx, &ctx_len, &e) == 0, "%s", e.msg);
    ck_assert_msg(source_run_step(&SRC, k, &S, ctx, ctx_len, &T, &e) == 0, "%s", e.msg);
}

static const struct trace_row *row(int id)
{
    return &T.rows[T.rank_of[id]];
}

/* x rounded to digits decimals is printed (half-way cases would be ambiguous
 * and do not occur in the seeds). */
#define ck_assert_rounds_to(x, printed, digits)                                                    \
    do {                                                                                           \
        double _x = (x), _p = (printed), _h = 0.5 * pow(10.0, -(digits));                          \
        ck_assert_msg(fabs(_x - _p) < _h, "%s = %.10f does not round to %.*f", #x, _x, (digits),   \
                      _p);                                                                         \
    } while (0)

/* The seed's number is further from the exact value than rounding explains. */
#define ck_assert_differs_beyond_rounding(x, printed, digits)                                      \
    ck_assert_msg(fabs((x) - (printed)) > 0.5 * pow(10.0, -(digits)),                              \
                  "%s = %.10f rounds to %.*f after all", #x, (double)(x), (digits),                \
                  (double)(printed))

enum { PAD, THE, CAT, SAT, DOG, ON, MAT, EOS };

/* seed 002, "Step-by-Step Softmax Calculation" and "Generation Step 1". */
START_TEST(test_toy_step1_softmax_table)
{
    load("toy");
    step(1, NULL);
    const double exps[] = { 0.0408, 2.2255, 3.3201, 1.6487, 0.6703, 8.1662, 2.4596 };
    const double probs[] = { 0.0022, 0.1201, 0.1792, 0.0890, 0.0362, 0.4407, 0.1327 };
    double rounded_sum = 0.0;
    for (int id = 0; id < 7; id++) {
        ck_assert_rounds_to(row(id)->exp, exps[id], 4);
        ck_assert_rounds_to(row(id)->prob, probs[id], 4);
        rounded_sum += round(row(id)->prob * 1e4) / 1e4;
    }
    ck_assert_rounds_to(T.sum_exp, 18.5312, 4);
    ck_assert_rounds_to(rounded_sum, 1.0001, 4); /* "1.0001 (rounding)" */
    ck_assert_int_eq(T.choice.id, ON);           /* greedy: on, ~44 % */
    ck_assert_int_eq(T.choice.sampled, 0);
    ck_assert_int_eq(ctx_len, 3);
    ck_assert(ctx[0] == THE && ctx[1] == CAT && ctx[2] == SAT);
}
END_TEST

/* seed 002, "Generation Step 2": its table, the sum, greedy to mat, and the
 * context growing [1,2,3] -> [1,2,3,5] -> [1,2,3,5,6]. */
START_TEST(test_toy_step2_and_greedy_path)
{
    load("toy");
    step(2, NULL);
    ck_assert_int_eq(ctx_len, 4);
    const int want[] = { 1, 2, 3, 5 };
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(ctx[i], want[i]);
    const double exps[] = { 0.0183, 1.3499, 1.1052, 0.8187, 0.2231, 1.2214, 12.1825 };
    const double probs[] = { 0.0011, 0.0798, 0.0653, 0.0484, 0.0132, 0.0722, 0.7200 };
    for (int id = 0; id < 7; id++) {
        ck_assert_rounds_to(row(id)->exp, exps[id], 4);
        ck_assert_rounds_to(row(id)->prob, probs[id], 4);
    }
    ck_assert_rounds_to(T.sum_exp, 16.9191, 4);
    ck_assert_int_eq(T.choice.id, MAT);
    /* After step 2 the context is [1, 2, 3, 5, 6]: "The cat sat on mat". */
    char text[64];
    int after[5] = { 1, 2, 3, 5, T.choice.id };
    vocab_detok(&L.vocab, after, 5, text, sizeof text);
    ck_assert_str_eq(text, "The cat sat on mat");
}
END_TEST

/* seed 002, "Temperature Effect Example (Step 1 Logits)", three decimals. */
START_TEST(test_temperature_table)
{
    static const struct {
        const char *t;
        double p[7]; /* by id: [PAD] The cat sat dog on mat */
    } COLS[] = {
        { "1", { 0.002, 0.120, 0.179, 0.089, 0.036, 0.441, 0.133 } },
        { "0.5", { 0.000, 0.054, 0.120, 0.030, 0.005, 0.726, 0.066 } },
        { "2", { 0.020, 0.149, 0.181, 0.128, 0.082, 0.284, 0.156 } },
    };
    load("temperature");
    for (int c = 0; c < 3; c++) {
        step(1, "temperature", COLS[c].t, NULL);
        for (int id = 0; id < 7; id++)
            ck_assert_rounds_to(row(id)->prob, COLS[c].p[id], 3);
    }
    /* The lesson's own steps 2 and 3 are T = 0.5 and T = 2; "on jumps to 73 %", "drops to 28 %". */
    step(2, NULL);
    ck_assert_rounds_to(row(ON)->prob, 0.7258, 4);
    ck_assert_rounds_to(100 * row(ON)->prob, 73, 0);
    step(3, NULL);
    ck_assert_rounds_to(100 * row(ON)->prob, 28, 0);
}
END_TEST

/* seed 002, "Top-k Sampling": k = 3 on step 1. */
START_TEST(test_top_k_three)
{
    load("top-k");
    step(1, NULL);
    ck_assert_int_eq(T.kept_count, 3);
    ck_assert(row(ON)->removed_by == TRACE_KEPT && row(CAT)->removed_by == TRACE_KEPT &&
              row(MAT)->removed_by == TRACE_KEPT);
    ck_assert_rounds_to(T.kept_mass, 0.753, 3);
    ck_assert_rounds_to(row(ON)->final, 0.586, 3);
    ck_assert_rounds_to(row(CAT)->final, 0.238, 3);
    /* The seed divides rounded numbers, 0.133 / 0.753, and prints 0.177. */
    ck_assert_rounds_to(row(MAT)->final, 0.176, 3);
    ck_assert_differs_beyond_rounding(row(MAT)->final, 0.177, 3);
    ck_assert_ptr_nonnull(L.steps[0].note);
    /* The four decimals the terminal shows (issue 3's check). */
    ck_assert_rounds_to(row(ON)->final, 0.5856, 4);
    ck_assert_rounds_to(row(CAT)->final, 0.2381, 4);
    ck_assert_rounds_to(row(MAT)->final, 0.1764, 4);
}
END_TEST

/* seed 002, "Top-p (Nucleus) Sampling": the cumulative table and p = 0.70, 0.90, 0.95. */
START_TEST(test_top_p_table_and_kept_sets)
{
    load("top-p");
    step(1, NULL);
    const int rank_ids[] = { ON, CAT, MAT, THE, SAT, DOG, PAD };
    const double prob[] = { 0.441, 0.179, 0.133, 0.120, 0.089, 0.036, 0.002 };
    const double cum[] = { 0.441, 0.620, 0.753, 0.873, 0.962, 0.998, 1.000 };
    for (int r = 0; r < 7; r++) {
        ck_assert_int_eq(T.rows[r].id, rank_ids[r]);
        ck_assert_rounds_to(T.rows[r].prob, prob[r], 3);
        ck_assert_rounds_to(T.rows[r].cum, cum[r], 3);
    }
    ck_assert_int_eq(T.kept_count, 3); /* p = 0.70: on, cat, mat */
    step(2, NULL);
    ck_assert_int_eq(T.kept_count, 5); /* p = 0.90: top 5 */
    ck_assert(row(SAT)->removed_by == TRACE_KEPT && row(DOG)->removed_by == STAGE_TOP_P);
    step(3, NULL);
    ck_assert_int_eq(T.kept_count, 5); /* p = 0.95: top 5 (0.962) */
    ck_assert_rounds_to(T.kept_mass, 0.962, 3);
    double total = 0.0;
    for (int r = 0; r < 7; r++)
        total += T.rows[r].final;
    ck_assert_double_eq_tol(total, 1.0, 1e-12); /* "then renormalize" */
}
END_TEST

/* seed 000 section 4 (min-p keeps tokens with at least a fraction of the top
 * probability) on the toy steps; the bars are worked by hand in the lesson. */
START_TEST(test_min_p_and_order)
{
    load("min-p");
    step(1, NULL); /* bar 0.1 * 0.4407 = 0.0441 */
    ck_assert_int_eq(T.kept_count, 5);
    ck_assert(row(SAT)->removed_by == TRACE_KEPT && row(DOG)->removed_by == STAGE_MIN_P);
    step(2, NULL); /* bar 0.0720 */
    ck_assert_int_eq(T.kept_count, 3);
    ck_assert(row(ON)->removed_by == TRACE_KEPT && row(CAT)->removed_by == STAGE_MIN_P);
    step(3, NULL); /* vllm: temperature before min-p */
    ck_assert_int_eq(T.kept_count, 6);
    step(3, "order", "llamacpp", NULL); /* temperature last */
    ck_assert_int_eq(T.kept_count, 5);
    ck_assert_int_eq(row(DOG)->removed_by, STAGE_MIN_P);
}
END_TEST

/* seed 002, "Example (Step 2 with Repetition Penalty alpha=1.2)". */
START_TEST(test_repetition_penalty_example)
{
    load("penalty");
    step(2, NULL);
    ck_assert_int_eq(row(ON)->seen, 1); /* on appeared in step 1's generation */
    ck_assert_rounds_to(row(ON)->adjusted, 0.1667, 4);
    ck_assert_double_eq_tol(row(ON)->adjusted, 0.2 / 1.2, 1e-15);
    ck_assert_double_eq(row(MAT)->adjusted, 2.5); /* unchanged */
    ck_assert_double_gt(row(MAT)->prob, 0.7200);  /* "mat becomes even more dominant" */
    ck_assert_int_eq(T.choice.id, MAT);
    /* Prompt counted too: the lesson's formula raises sat, the engines' lowers it. */
    step(3, NULL);
    ck_assert_double_eq_tol(row(SAT)->adjusted, -0.2 / 1.2, 1e-15);
    ck_assert_double_gt(row(SAT)->adjusted, row(SAT)->logit);
    step(4, NULL);
    ck_assert_double_eq_tol(row(SAT)->adjusted, -0.24, 1e-15);
    ck_assert_double_lt(row(SAT)->adjusted, row(SAT)->logit);
}
END_TEST

/* seed 002, exercise 1. */
START_TEST(test_exercise_1)
{
    load("exercise-1");
    step(1, NULL);
    const double exps[] = { 7.3891, 2.7183, 1.0000 };
    const double probs[] = { 0.6652, 0.2447, 0.0900 };
    double rounded = 0.0;
    for (int i = 0; i < 3; i++) {
        ck_assert_rounds_to(row(i)->exp, exps[i], 4);
        ck_assert_rounds_to(row(i)->prob, probs[i], 4);
        rounded += round(row(i)->prob * 1e4) / 1e4;
    }
    /* The seed adds its rounded exponentials (7.3891 + 2.7183 + 1.0000) and
     * prints 11.1074; the exact sum is 11.10734, which rounds to 11.1073. */
    ck_assert_rounds_to(T.sum_exp, 11.1073, 4);
    ck_assert_differs_beyond_rounding(T.sum_exp, 11.1074, 4);
    ck_assert_ptr_nonnull(L.steps[0].note);
    ck_assert_rounds_to(rounded, 0.9999, 4); /* "0.9999 (rounding)" */
    ck_assert_int_eq(L.steps[0].n_ask, 7);
}
END_TEST

/* seed 002, exercise 2: top-k = 3 and top-p = 0.80 on given probabilities. */
START_TEST(test_exercise_2)
{
    load("exercise-2");
    for (int k = 1; k <= 2; k++) {
        step(k, NULL);
        ck_assert_int_eq(T.kept_count, 3);
        ck_assert_rounds_to(T.kept_mass, 0.85, 2);
        ck_assert_rounds_to(row(0)->final, 0.588, 3);
        ck_assert_rounds_to(row(1)->final, 0.235, 3);
        ck_assert_rounds_to(row(2)->final, 0.176, 3);
        ck_assert_rounds_to(row(0)->exp, 0.50, 2); /* given as probabilities: e^(ln p) = p */
    }
    /* Cumulative 0.50, 0.70, 0.85 >= 0.80. */
    ck_assert_rounds_to(T.rows[0].cum, 0.50, 2);
    ck_assert_rounds_to(T.rows[1].cum, 0.70, 2);
    ck_assert_rounds_to(T.rows[2].cum, 0.85, 2);
}
END_TEST

/* seed 002, exercise 3: [3, 1, 0] at T = 0.5, 1, 2. */
START_TEST(test_exercise_3)
{
    load("exercise-3");
    step(1, NULL); /* T = 0.5 */
    ck_assert_rounds_to(row(0)->exp, 403.43, 2);
    ck_assert_rounds_to(row(1)->exp, 7.39, 2);
    ck_assert_rounds_to(T.sum_exp, 411.82, 2);
    ck_assert_rounds_to(row(0)->prob, 0.9796, 4);
    ck_assert_rounds_to(row(1)->prob, 0.0179, 4);
    ck_assert_rounds_to(row(2)->prob, 0.0024, 4);
    step(2, NULL); /* T = 1 */
    ck_assert_rounds_to(row(0)->exp, 20.09, 2);
    ck_assert_rounds_to(row(1)->exp, 2.72, 2);
    ck_assert_rounds_to(T.sum_exp, 23.80, 2);
    ck_assert_differs_beyond_rounding(T.sum_exp, 23.81, 2); /* the seed sums rounded exps */
    ck_assert_rounds_to(row(0)->prob, 0.8438, 4);
    ck_assert_differs_beyond_rounding(row(0)->prob, 0.8437, 4);
    ck_assert_rounds_to(row(1)->prob, 0.1142, 4);
    ck_assert_rounds_to(row(2)->prob, 0.0420, 4);
    ck_assert_ptr_nonnull(L.steps[1].note);
    step(3, NULL); /* T = 2 */
    ck_assert_rounds_to(row(0)->exp, 4.48, 2);
    ck_assert_rounds_to(row(1)->exp, 1.65, 2);
    ck_assert_rounds_to(T.sum_exp, 7.13, 2);
    ck_assert_rounds_to(row(0)->prob, 0.6285, 4);
    ck_assert_rounds_to(row(1)->prob, 0.2312, 4);
    ck_assert_rounds_to(row(2)->prob, 0.1402, 4);
    ck_assert_differs_beyond_rounding(row(2)->prob, 0.1403, 4);
    ck_assert_ptr_nonnull(L.steps[2].note);
    /* "98 % -> 84 % -> 63 %" */
    double pct[3];
    for (int k = 1; k <= 3; k++) {
        step(k, NULL);
        pct[k - 1] = 100 * row(0)->prob;
    }
    ck_assert_rounds_to(pct[0], 98, 0);
    ck_assert_rounds_to(pct[1], 84, 0);
    ck_assert_rounds_to(pct[2], 63, 0);
}
END_TEST

/* seed 000 section 2-3: exp sum 200.9, Paris 96 % at T = 0.5, 57 % at T = 1.5;
 * adding the same number to every logit changes nothing. */
START_TEST(test_france_figures)
{
    load("france");
    step(1, NULL);
    ck_assert_rounds_to(T.sum_exp, 200.9, 1);
    ck_assert_int_eq(T.rows[0].id, 0); /* Paris is the greedy choice */
    double p1 = row(0)->prob;
    step(2, NULL);
    ck_assert_rounds_to(100 * row(0)->prob, 96, 0);
    step(3, NULL);
    ck_assert_rounds_to(100 * row(0)->prob, 57, 0);
    step(4, NULL); /* every logit + 10 */
    ck_assert_double_eq_tol(row(0)->prob, p1, 1e-12);
    step(1, "shift", "-7.5", NULL);
    ck_assert_double_eq_tol(row(0)->prob, p1, 1e-12);
    step(1, "temperature", "0", NULL);
    ck_assert_int_eq(T.choice.id, 0);
}
END_TEST

/* seed 000 section 1 and seed 002 "Where do logits come from?": the head. */
START_TEST(test_lm_head)
{
    load("lm-head");
    step(1, NULL);
    const double toy[] = { -3.2, 0.8, 1.2, 0.5, -0.4, 2.1, 0.9 };
    /* RMSNorm's eps = 1e-5 scales by 1 / sqrt(1 + 4e-7): invisible at 4 decimals. */
    for (int id = 0; id < 7; id++)
        ck_assert_double_eq_tol(source_logit(&SRC, 1, id), toy[id], 1e-6);
    ck_assert_rounds_to(T.sum_exp, 18.5312, 4);
    ck_assert_int_eq(T.choice.id, ON);
    ck_assert_double_eq_tol(L.steps[0].normed[0], 1.4, 1e-6);
    /* 128,256 x 4,096 ~ 525M weights ~ 1 GB in bf16. */
    ck_assert_int_eq(L.head.real_vocab, 128256);
    ck_assert_int_eq(L.head.real_hidden, 4096);
    long long w = lmhead_weight_count(L.head.real_vocab, L.head.real_hidden);
    ck_assert(w == 525336576LL);
    ck_assert_rounds_to(w / 1e6, 525, 0);
    ck_assert(lmhead_bf16_bytes(L.head.real_vocab, L.head.real_hidden) == 1050673152LL);
    ck_assert_rounds_to(lmhead_bf16_bytes(128256, 4096) / 1e9, 1, 0);
}
END_TEST

/* seed 002 "Stopping Rules" and seed 000 section 5 on the vocabulary with [EOS]. */
START_TEST(test_stop_rules)
{
    load("stopping");
    int next[16];
    struct stop_result r;
    step(1, NULL);
    memcpy(next, ctx, (size_t)ctx_len * sizeof *ctx);
    next[ctx_len] = T.choice.id;
    r = stop_check(&S, &L.vocab, next, ctx_len + 1, L.prompt_len);
    ck_assert_int_eq(r.rule, STOP_NONE);
    step(3, NULL); /* the greedy path: on, mat, then [EOS] */
    ck_assert_int_eq(ctx_len, 5);
    ck_assert_int_eq(T.choice.id, EOS);
    memcpy(next, ctx, (size_t)ctx_len * sizeof *ctx);
    next[ctx_len] = T.choice.id;
    r = stop_check(&S, &L.vocab, next, ctx_len + 1, L.prompt_len);
    ck_assert_int_eq(r.rule, STOP_EOS);
    /* min-tokens 4 with two tokens generated: [EOS] (its p 0.8199 by the
     * softmax of step 3's logits) is removed, greedy takes on (0.0551). */
    step(3, "min-tokens", "4", NULL);
    ck_assert_int_eq(row(EOS)->removed_by, STAGE_MIN_TOKENS);
    ck_assert_rounds_to(row(EOS)->prob, 0.8199, 4);
    ck_assert_int_eq(T.choice.id, 5);
    ck_assert_rounds_to(row(5)->prob, 0.0551, 4);
    step(4, NULL); /* max-tokens 2 after on, mat */
    memcpy(next, ctx, (size_t)ctx_len * sizeof *ctx);
    next[ctx_len] = T.choice.id;
    r = stop_check(&S, &L.vocab, next, ctx_len + 1, L.prompt_len);
    ck_assert_int_eq(r.rule, STOP_MAX_TOKENS);
    step(5, NULL); /* "on mat" spans two tokens */
    r = stop_check(&S, &L.vocab, next, ctx_len + 1, L.prompt_len);
    ck_assert_int_eq(r.rule, STOP_STRING);
    step(5, "stop", "", "stop", "n m", NULL); /* the end of one token and the start of the next */
    r = stop_check(&S, &L.vocab, next, ctx_len + 1, L.prompt_len);
    ck_assert_int_eq(r.rule, STOP_STRING);
    step(5, "stop", "", "stop", "The cat", NULL); /* in the prompt only: does not stop */
    r = stop_check(&S, &L.vocab, next, ctx_len + 1, L.prompt_len);
    ck_assert_int_eq(r.rule, STOP_NONE);
}
END_TEST

/* seed 000 section 5: per-request settings, and a fixed seed repeats its draw. */
START_TEST(test_engine_requests_and_seeds)
{
    load("engine");
    step(1, NULL);
    ck_assert_int_eq(T.choice.sampled, 0);
    step(2, NULL);
    int b = T.choice.id;
    double u = T.choice.u;
    ck_assert_int_eq(T.choice.sampled, 1);
    ck_assert_int_eq(T.kept_count, 5); /* T 0.8, top-p 0.95 */
    step(4, NULL);                     /* request B again: same seed, same step */
    ck_assert_int_eq(T.choice.id, b);
    ck_assert_double_eq(T.choice.u, u);
    step(4, "seed", "43", NULL);
    ck_assert_double_ne(T.choice.u, u);
}
END_TEST

/* The trained model that ships (lessons 18 to 21 on data/stories260K.gguf).
 * Source of the numbers: llama2.c's run.c on the same checkpoint
 * (stories260K.bin, tok512.bin), which prints the same probabilities to
 * four places, and an independent float64 forward pass of the GGUF
 * (../shared/models/stories260K/README.md, "Known outputs"). */
static int tok(const char *text)
{
    int id = vocab_lookup(&L.vocab, text);
    ck_assert_msg(id >= 0, "no token '%s'", text);
    return id;
}

START_TEST(test_trained_next)
{
    load("trained-next");
    step(1, NULL);
    const int prompt[] = { 1, 403, 407, 261, 378, 432, 383, 286, 261, 376 };
    ck_assert_int_eq(ctx_len, 10);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(ctx[i], prompt[i]);
    ck_assert_int_eq(L.vocab.n, 512);
    ck_assert_rounds_to(row(tok(" g"))->prob, 0.6403, 4);
    ck_assert_rounds_to(row(tok(" b"))->prob, 0.2754, 4);
    ck_assert_rounds_to(row(tok(" do"))->prob, 0.0215, 4);
    ck_assert_rounds_to(row(tok(" c"))->prob, 0.0120, 4);
    ck_assert_rounds_to(row(tok(" f"))->prob, 0.0098, 4);
    ck_assert_int_eq(T.choice.id, tok(" g")); /* seed 2: u = 0.0738 */
    /* The times the model pane gives, counted as llama.cpp's report counts
     * them: the 10 positions of the prompt in one run, then one position a
     * step, each run with its head. */
    struct source_speed sp;
    ck_assert_int_eq(source_speed(&SRC, &sp), 0);
    ck_assert_int_eq(sp.prompt_tokens, 10);
    ck_assert_int_eq(sp.step_tokens, 10);
    ck_assert_int_eq(sp.eval_runs, 0);
    ck_assert(sp.prompt_ms > 0.0 && sp.prompt_ms == sp.step_ms && sp.head_ms <= sp.step_ms);
    step(2, NULL);
    ck_assert_rounds_to(row(tok("ir"))->prob, 0.995, 3);
    ck_assert_int_eq(source_speed(&SRC, &sp), 0);
    ck_assert_int_eq(sp.prompt_tokens, 10);
    ck_assert_int_eq(sp.step_tokens, 1);
    ck_assert_int_eq(sp.eval_runs, 1);
    ck_assert(sp.eval_ms == sp.step_ms && sp.step_ms > 0.0);
    step(3, NULL);
    ck_assert_int_eq(ctx[ctx_len - 1], tok("ir"));
    ck_assert_rounds_to(row(tok("l"))->prob, 0.9993, 4);
    /* The path to step 3 walks steps 1 and 2 again: the cache holds their
     * contexts but the last position of each (it went past them), so each
     * reruns that one position, then step 3 its own: 1 + 3 runs. */
    ck_assert_int_eq(source_speed(&SRC, &sp), 0);
    ck_assert_int_eq(sp.eval_runs, 4);
    ck_assert_int_eq(sp.prompt_tokens, 10);
    ck_assert(sp.eval_ms > sp.step_ms);
}
END_TEST

START_TEST(test_trained_branch)
{
    load("trained-branch");
    step(1, NULL);
    ck_assert_int_eq(T.choice.id, tok(" b")); /* seed 1: u = 0.672 */
    ck_assert_rounds_to(T.choice.u, 0.672, 3);
    step(2, NULL);
    ck_assert_rounds_to(row(tok("o"))->prob, 0.795, 3);
    ck_assert_rounds_to(row(tok("ir"))->prob, 0.113, 3);
    ck_assert_rounds_to(row(tok("un"))->prob, 0.044, 3);
    step(3, NULL);
    ck_assert_rounds_to(row(tok("y"))->prob, 0.993, 3);
}
END_TEST

/* llama2.c's doc/stories260K.md: greedy decoding from "Once upon a time". */
START_TEST(test_trained_loop)
{
    load("trained-loop");
    step(60, NULL);
    char text[2048];
    vocab_detok(&L.vocab, ctx + 1, ctx_len - 1, text, sizeof text);
    const char *story = " Once upon a time, there was a little girl named Lily. She loved to play "
                        "outside in the park. One day, she saw a big, red ball. She wanted to "
                        "play with it, but it was too high.";
    ck_assert_msg(strncmp(text, story, strlen(story)) == 0, "%s", text);
}
END_TEST

/* "The cat was very": " e" 0.089, " happy" 0.080, " s" 0.077; the counts
 * the lesson quotes for temperature, top-p and min-p. */
START_TEST(test_trained_flat)
{
    load("trained-flat");
    step(1, NULL);
    ck_assert_rounds_to(row(tok(" e"))->prob, 0.089, 3);
    ck_assert_rounds_to(row(tok(" happy"))->prob, 0.080, 3);
    ck_assert_rounds_to(row(tok(" s"))->prob, 0.077, 3);
    step(1, "temperature", "0.5", NULL);
    ck_assert_rounds_to(row(tok(" e"))->final, 0.164, 3);
    step(1, "temperature", "1.5", NULL);
    ck_assert_rounds_to(row(tok(" e"))->final, 0.062, 3);
    step(1, "top-p", "0.95", NULL);
    ck_assert_int_eq(T.kept_count, 29);
    step(1, "min-p", "0.05", NULL);
    ck_assert_int_eq(T.kept_count, 32);
    step(1, "temperature", "0.5", "min-p", "0.05", NULL);
    ck_assert_int_eq(T.kept_count, 18);
}
END_TEST

/* The report value of stage st in the step's chain. */
static double stage_cut(enum stage st)
{
    for (int c = 0; c < T.n_stages; c++)
        if (T.stages[c].stage == st)
            return T.stages[c].cut;
    ck_abort_msg("stage %s is not in the chain", stage_name(st));
    return 0.0;
}

/* The same row with the engines' stages: XTC's kept set at two
 * thresholds and its coin (0.8047 for seed 1, step 1, row 0), the dynamic
 * temperature's 1.0283 (entropy 3.2959 of ln 512), epsilon's and eta's
 * counts, as the lesson quotes them (worked in its text). */
START_TEST(test_trained_xtc)
{
    load("trained-xtc");
    step(1, NULL);
    ck_assert_rounds_to(row(tok(" e"))->prob, 0.0886, 4);
    ck_assert_rounds_to(row(tok(" happy"))->prob, 0.0802, 4);
    ck_assert_rounds_to(row(tok(" s"))->prob, 0.0773, 4);
    ck_assert_rounds_to(row(tok(" c"))->prob, 0.0630, 4);
    ck_assert_rounds_to(T.entropy, 3.2959, 4);
    step(1, "xtc-probability", "1", "xtc-threshold", "0.06", NULL);
    ck_assert_int_eq(T.kept_count, 509);
    ck_assert(row(tok(" c"))->removed_by == TRACE_KEPT);
    ck_assert_int_eq(row(tok(" e"))->removed_by, STAGE_XTC);
    ck_assert_rounds_to(1.0 - T.kept_mass, 0.2461, 4);
    step(1, "xtc-probability", "1", "xtc-threshold", "0.05", NULL);
    ck_assert_int_eq(T.kept_count, 507);
    step(1, "xtc-probability", "1", "xtc-threshold", "0.1", NULL);
    ck_assert_int_eq(T.kept_count, 512);
    ck_assert_rounds_to(sampler_coin(1, 1, 0, STAGE_XTC), 0.8047, 4);
    step(1, "xtc-probability", "0.5", "xtc-threshold", "0.06", NULL);
    ck_assert_int_eq(T.kept_count, 512);
    step(1, "xtc-probability", "0.9", "xtc-threshold", "0.06", NULL);
    ck_assert_int_eq(T.kept_count, 509);
    step(1, "dynatemp-range", "0.5", NULL);
    ck_assert_rounds_to(stage_cut(STAGE_TEMPERATURE), 1.0283, 4);
    step(1, "epsilon-cutoff", "0.01", NULL);
    ck_assert_int_eq(T.kept_count, 23);
    step(1, "eta-cutoff", "0.01", NULL);
    ck_assert_int_eq(T.kept_count, 33);
    ck_assert_rounds_to(stage_cut(STAGE_ETA), 0.0037, 4);
}
END_TEST

/* Token id's row, wherever it ranks (the fast sampler fills the top rows
 * only). */
static struct trace_row any_row(int id)
{
    struct trace_row r;
    int rank;
    ck_assert_int_eq(trace_row_of(&T, id, &r, &rank), 0);
    return r;
}

/* The grammar stage's report on this step. */
static const struct stage_report *grammar_rep(void)
{
    for (int c = 0; c < T.n_stages; c++)
        if (T.stages[c].stage == STAGE_GRAMMAR)
            return &T.stages[c];
    ck_abort_msg("no grammar stage in the chain");
    return NULL;
}

/* The constrained lesson's numbers (its own logit rows, softmax worked in
 * its text): what the regex "on the (mat|dog)" removes at each step. */
START_TEST(test_constrained)
{
    load("constrained");
    step(1, NULL);
    ck_assert_int_eq(grammar_rep()->removed, 8);
    ck_assert_rounds_to(grammar_rep()->removed_mass, 0.5920, 4);
    ck_assert_rounds_to(row(5)->prob, 0.4080, 4);
    ck_assert_int_eq(T.choice.id, 5);
    ck_assert_str_eq(T.grammar_state, "expecting [o] (in root)");
    step(2, NULL);
    ck_assert_rounds_to(row(6)->prob, 0.6090, 4); /* mat, the model's choice */
    ck_assert_rounds_to(row(7)->prob, 0.1359, 4);
    ck_assert_rounds_to(grammar_rep()->removed_mass, 0.8641, 4);
    ck_assert_int_eq(T.choice.id, 7); /* " the" */
    step(2, "regex", "on (the )?(mat|dog)", NULL);
    ck_assert_int_eq(T.kept_count, 1);
    ck_assert_int_eq(T.choice.id, 6);
    step(3, NULL);
    ck_assert_int_eq(grammar_rep()->removed, 7);
    ck_assert_rounds_to(grammar_rep()->removed_mass, 0.3016, 4);
    ck_assert_rounds_to(row(2)->prob, 0.2231, 4);
    step(3, "temperature", "1", "seed", "9", NULL);
    ck_assert_rounds_to(row(6)->final, 0.7858, 4);
    ck_assert_rounds_to(row(4)->final, 0.2142, 4);
    ck_assert_rounds_to(T.choice.u, 0.9405, 4);
    ck_assert_int_eq(T.choice.id, 4);
    step(4, NULL);
    ck_assert_int_eq(T.choice.id, 8);
    ck_assert_rounds_to(row(8)->prob, 0.7682, 4);
    ck_assert_str_eq(T.grammar_state, "complete: only the end may come");
    /* A text the pattern cannot take is refused in one line. */
    struct err e;
    source_step_settings(&SRC, 3, &S);
    ck_assert_int_eq(settings_set(&S, "regex", "on a (mat|dog)", &e), 0);
    ck_assert_int_eq(source_run_step(&SRC, 3, &S, ctx, 5, &T, &e), -1);
    ck_assert_str_eq(e.msg, "grammar: the text generated so far (\"on the\") leaves it at byte 3: "
                            "choose another token, or take this one back");
}
END_TEST

/* The trained model under the lesson's JSON schema, greedy: the numbers
 * its text quotes, from the model's own logits. */
START_TEST(test_trained_json)
{
    load("trained-json");
    step(1, NULL);
    ck_assert_int_eq(grammar_rep()->removed, 511);
    ck_assert_str_eq(vocab_token(&L.vocab, T.choice.id), "{");
    ck_assert_rounds_to(any_row(T.choice.id).prob * 1e13, 7.8, 1);
    ck_assert_str_eq(vocab_token(&L.vocab, T.rows[0].id), ","); /* the model's choice */
    ck_assert_rounds_to(T.rows[0].prob, 0.9688, 4);
    step(12, NULL);
    ck_assert_int_eq(grammar_rep()->removed, 113);
    ck_assert_rounds_to(100.0 * grammar_rep()->removed_mass, 0.0147, 4);
    ck_assert_str_eq(vocab_token(&L.vocab, T.choice.id), "I");
    ck_assert_rounds_to(any_row(T.choice.id).prob, 0.1896, 4);
    step(18, NULL);
    ck_assert_int_eq(grammar_rep()->removed, 190);
    ck_assert_rounds_to(grammar_rep()->removed_mass, 0.4827, 4);
    ck_assert_rounds_to(any_row(T.choice.id).prob, 0.1732, 4);
    step(19, NULL);
    ck_assert_str_eq(vocab_token(&L.vocab, T.choice.id), "\"");
    ck_assert_rounds_to(any_row(T.choice.id).prob * 1e7, 177, 0);
    step(48, NULL);
    ck_assert_str_eq(vocab_token(&L.vocab, T.choice.id), "}");
    ck_assert_rounds_to(any_row(T.choice.id).prob * 1e9, 2.8, 1);
    step(49, NULL);
    ck_assert(vocab_is_eos(&L.vocab, T.choice.id));
    ck_assert_str_eq(T.grammar_state, "complete: only the end may come");
}
END_TEST

Suite *suite_lessons(void)
{
    Suite *s = suite_create("lessons");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, NULL, teardown);
    tcase_add_test(core, test_toy_step1_softmax_table);
    tcase_add_test(core, test_constrained);
    tcase_add_test(core, test_toy_step2_and_greedy_path);
    tcase_add_test(core, test_temperature_table);
    tcase_add_test(core, test_top_k_three);
    tcase_add_test(core, test_top_p_table_and_kept_sets);
    tcase_add_test(core, test_min_p_and_order);
    tcase_add_test(core, test_repetition_penalty_example);
    tcase_add_test(core, test_exercise_1);
    tcase_add_test(core, test_exercise_2);
    tcase_add_test(core, test_exercise_3);
    tcase_add_test(core, test_france_figures);
    tcase_add_test(core, test_lm_head);
    tcase_add_test(core, test_stop_rules);
    tcase_add_test(core, test_engine_requests_and_seeds);
    suite_add_tcase(s, core);
    TCase *trained = tcase_create("trained");
    tcase_add_checked_fixture(trained, NULL, teardown);
    tcase_set_timeout(trained, 120);
    tcase_add_test(trained, test_trained_xtc);
    tcase_add_test(trained, test_trained_json);
    tcase_add_test(trained, test_trained_next);
    tcase_add_test(trained, test_trained_branch);
    tcase_add_test(trained, test_trained_loop);
    tcase_add_test(trained, test_trained_flat);
    suite_add_tcase(s, trained);
    return s;
}
