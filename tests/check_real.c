/* The full-size run: the Llama 3 vocabulary, the synthetic LM head, the
 * scenarios, many draws, captured logits (.npy), and the stop rules at
 * 128,256 tokens. Sources of the numbers are given at each assertion. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/catalog.h"
#include "model/lmhead_gen.h"
#include "model/model.h"
#include "data/npy.h"
#include "core/philox.h"
#include "core/draws.h"
#include "data/scenario.h"
#include "source/source.h"
#include "suites.h"
#include "data/vocab.h"

#define VOCAB_FILE "data/llama3-vocab.bin"
#define LLAMA3_V   128256

static struct vocab V3;

static void load_vocab(void)
{
    struct err e;
    ck_assert_msg(vocab_load(&V3, VOCAB_FILE, &e) == 0, "%s", e.msg);
}

static void free_vocab(void)
{
    vocab_free(&V3);
}

static void assert_bytes(int id, const char *want)
{
    size_t len;
    const char *b = vocab_bytes(&V3, id, &len);
    ck_assert_msg(len == strlen(want) && memcmp(b, want, len) == 0, "token %d: '%.*s', want '%s'",
                  id, (int)len, b, want);
}

/* The ids below are those of the issue, checked against llama3-tokenizer-js. */
START_TEST(test_llama3_entries)
{
    ck_assert_int_eq(V3.n, LLAMA3_V);
    ck_assert(V3.byte_level);
    ck_assert_int_eq(V3.first_special, 128000);
    assert_bytes(12366, " Paris");
    ck_assert_str_eq(vocab_token(&V3, 12366), VOCAB_SPACE_MARK "Paris");
    assert_bytes(128000, "<|begin_of_text|>");
    assert_bytes(128001, "<|end_of_text|>");
    assert_bytes(128009, "<|eot_id|>");
    ck_assert(vocab_is_eos(&V3, 128009));
    ck_assert(vocab_is_eos(&V3, 128001));
    ck_assert(!vocab_is_eos(&V3, 128000));
    ck_assert(!vocab_is_eos(&V3, 12366));
    ck_assert_int_eq(vocab_find(&V3, " Paris"), 12366);
    ck_assert_int_eq(vocab_find(&V3, VOCAB_SPACE_MARK "Paris"), 12366);
    ck_assert_int_eq(vocab_find(&V3, "<|eot_id|>"), 128009);
    /* What a person types to find a token: #N is an id, a number is text
     * first (token 6804 is "127"), a word without its space finds the word
     * itself when it exists (60704 "Paris") and the spaced one otherwise. */
    ck_assert_int_eq(vocab_lookup(&V3, "#127"), 127);
    ck_assert_int_eq(vocab_lookup(&V3, "127"), 6804);
    ck_assert_int_eq(vocab_lookup(&V3, "Paris"), 60704);
    ck_assert_int_eq(vocab_lookup(&V3, " Paris"), 12366);
    ck_assert_int_eq(vocab_lookup(&V3, "#128256"), -1);
    ck_assert_int_eq(vocab_lookup(&V3, "#"), -1);
    ck_assert_int_eq(vocab_find(&V3, "Lyon"), -1); /* only " Lyon" (56301) exists */
    ck_assert_int_eq(vocab_lookup(&V3, "Lyon"), 56301);
}
END_TEST

START_TEST(test_llama3_prompts)
{
    static const int FRANCE[] = { 791, 6864, 315, 9822, 374 }, CAT[] = { 791, 8415, 7731 };
    char buf[128];
    vocab_detok(&V3, FRANCE, 5, buf, sizeof buf);
    ck_assert_str_eq(buf, "The capital of France is");
    vocab_detok(&V3, CAT, 3, buf, sizeof buf);
    ck_assert_str_eq(buf, "The cat sat");
    /* End tokens end the text: they are not part of it. */
    static const int ENDED[] = { 791, 8415, 7731, 128009 };
    vocab_detok(&V3, ENDED, 4, buf, sizeof buf);
    ck_assert_str_eq(buf, "The cat sat");
}
END_TEST

/* The id of the one-byte token holding byte b. */
static int byte_token(unsigned char b)
{
    for (int id = 0; id < V3.first_special; id++) {
        size_t len;
        const char *t = vocab_bytes(&V3, id, &len);
        if (len == 1 && (unsigned char)t[0] == b)
            return id;
    }
    return -1;
}

START_TEST(test_character_split_across_tokens)
{
    /* "é" is C3 A9 in UTF-8: two byte tokens that mean nothing alone. */
    int c3 = byte_token(0xC3), a9 = byte_token(0xA9);
    ck_assert_int_ge(c3, 0);
    ck_assert_int_ge(a9, 0);
    ck_assert_str_eq(vocab_token(&V3, c3), "\\xC3"); /* shown as an escape, not as a broken char */
    ck_assert_str_eq(vocab_token(&V3, a9), "\\xA9");
    int one[1] = { c3 }, two[2] = { c3, a9 };
    char buf[16];
    size_t n = vocab_detok(&V3, one, 1, buf, sizeof buf);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(vocab_complete_prefix(buf, n), 0); /* a stream holds the byte back */
    n = vocab_detok(&V3, two, 2, buf, sizeof buf);
    ck_assert_str_eq(buf, "\xC3\xA9");
    ck_assert_uint_eq(vocab_complete_prefix(buf, n), 2); /* and prints it whole */
    /* "日" is E6 97 A5: after two of its bytes nothing of it is ready. */
    ck_assert_uint_eq(vocab_complete_prefix("ab\xE6\x97", 4), 2);
    ck_assert_uint_eq(vocab_complete_prefix("ab\xE6\x97\xA5", 5), 5);
}
END_TEST

START_TEST(test_scenarios_check_their_prompts)
{
    static const char *const FILES[] = { "data/scenarios/france.ini", "data/scenarios/cat.ini",
                                         "data/scenarios/loop.ini", "data/scenarios/story.ini" };
    static const int FRANCE[] = { 791, 6864, 315, 9822, 374 };
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
        struct scenario sc;
        struct err e;
        ck_assert_msg(scenario_load(&sc, FILES[i], &V3, &e) == 0, "%s", e.msg);
        if (i == 0) {
            ck_assert_int_eq(sc.prompt_len, 5);
            ck_assert_mem_eq(sc.prompt, FRANCE, sizeof FRANCE);
            ck_assert_int_eq(sc.steps[0].id[0], 12366); /* the script says " Paris" */
        }
        scenario_free(&sc);
    }
    /* Ids that do not spell the prompt are refused, with the file and line. */
    const char *path = "build/test-bad-scenario.ini";
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("[scenario]\nid = bad\ntitle = Bad\nprompt = The cat sat\nprompt-ids = 791 8415 "
          "374\nseed = 1\n[next]\ndefault = 13:15\n",
          f);
    fclose(f);
    struct scenario sc;
    struct err e;
    ck_assert_int_eq(scenario_load(&sc, path, &V3, &e), -1);
    ck_assert_str_eq(e.msg, "build/test-bad-scenario.ini:5: prompt-ids read \"The cat is\", not "
                            "the prompt \"The cat sat\"");
    remove(path);
}
END_TEST

/* The head at hidden size 64 against a plain double-precision product of
 * the same bf16 weights, which come from the scalar generator the GPU uses. */
START_TEST(test_lm_head_against_double_reference)
{
    const int V = 5000, d = 64;
    struct model m;
    struct err e;
    ck_assert_msg(model_build(&m, V, d, 77, &e) == 0, "%s", e.msg);
    float h[64], x[64];
    for (int i = 0; i < d; i++)
        h[i] = (float)(3.0 * (philox_uniform(5, (uint32_t)i, 0, 0) - 0.5));
    float rms = model_rmsnorm(h, d, x);
    double ss = 0.0;
    for (int i = 0; i < d; i++)
        ss += (double)h[i] * h[i];
    ck_assert_double_eq_tol(rms, sqrt(ss / d + MODEL_RMS_EPS), 1e-6);
    float *logits = malloc((size_t)V * sizeof *logits);
    model_logits(&m, x, logits);
    double spread = 0.0;
    for (int v = 0; v < V; v++) {
        uint16_t w4[4], row[64];
        double ref = 0.0, mag = 0.0;
        model_row(&m, v, row);
        for (int c = 0; c < d / 4; c++) {
            lm_weights4(77, (uint32_t)v, (uint32_t)c, m.scale, w4);
            for (int k = 0; k < 4; k++) {
                /* The built weights are the generator's, bit for bit. */
                ck_assert_uint_eq(row[4 * c + k], w4[k]);
                ref += (double)lm_float(w4[k]) * x[4 * c + k];
                mag += fabs((double)lm_float(w4[k]) * x[4 * c + k]);
            }
        }
        ck_assert_msg(fabs(logits[v] - ref) <= 1e-5 * mag + 1e-6, "row %d: %.9g vs %.9g", v,
                      logits[v], ref);
        spread += ref * ref;
    }
    /* Rows are scaled so that a logit's spread is LM_LOGIT_SPREAD (2.5). */
    ck_assert_double_eq_tol(sqrt(spread / V), LM_LOGIT_SPREAD, 0.15);
    free(logits);
    model_free(&m);
}
END_TEST

static struct lesson L;
static struct source SRC; /* runs L */

static void open_real(const char *id)
{
    struct catalog cat;
    struct err e;
    ck_assert_msg(catalog_open(&cat, TEST_LESSONS, &e) == 0, "%s", e.msg);
    int rc = catalog_load(&cat, id, &L, &e);
    catalog_close(&cat);
    ck_assert_msg(rc == 0, "%s", e.msg);
    ck_assert_msg(source_open(&SRC, &L, NULL, TEST_HIDDEN, 64, &e) == 0, "%s", e.msg);
    ck_assert(source_is_fast(&SRC));
}

/* Runs the lesson from its prompt with settings s until a stop rule fires:
 * the generated ids into out, their count returned. */
static int generate(const struct settings *s, int *out, int max, struct stop_result *stop)
{
    struct trace t;
    struct err e;
    ck_assert_int_eq(trace_init(&t, L.vocab.n, &e), 0);
    int ctx[256], len = L.prompt_len, n = 0;
    memcpy(ctx, L.prompt, (size_t)len * sizeof *ctx);
    for (int k = 1; k <= L.n_steps && n < max; k++) {
        ck_assert_msg(source_run_step(&SRC, k, s, ctx, len, &t, &e) == 0, "%s", e.msg);
        ctx[len++] = out[n++] = t.choice.id;
        *stop = stop_check(s, &L.vocab, ctx, len, L.prompt_len);
        if (stop->rule != STOP_NONE)
            break;
    }
    trace_free(&t);
    return n;
}

START_TEST(test_real_france_step_one)
{
    open_real("real:france");
    ck_assert_int_eq(L.vocab.n, LLAMA3_V);
    struct settings s;
    source_step_settings(&SRC, 1, &s);
    struct trace t;
    struct err e;
    ck_assert_int_eq(trace_init(&t, L.vocab.n, &e), 0);
    ck_assert_int_eq(source_run_step(&SRC, 1, &s, L.prompt, L.prompt_len, &t, &e), 0);
    /* The scenario (data/scenarios/france.ini) gives " Paris" 19.5, " the"
     * 15.6: the head reproduces them up to float rounding. */
    ck_assert_int_eq(t.rows[0].id, 12366);
    ck_assert_double_eq_tol(t.rows[0].logit, 19.5, 2e-3);
    ck_assert_int_eq(t.rows[1].id, 279);
    ck_assert_double_eq_tol(t.rows[1].logit, 15.6, 2e-3);
    /* A real model's tail: beyond the top 20 rows lies more than 0.5 % of
     * the probability, spread over 128,236 tokens. */
    double tail = 1.0 - t.rows[19].cum;
    ck_assert_msg(tail > 0.005 && tail < 0.02, "tail mass %g", tail);
    struct draws_hist h;
    ck_assert_int_eq(draws_histogram(&t, 32, &h), 0);
    long sum = 0;
    for (int b = 0; b < h.bins; b++)
        sum += h.count[b];
    ck_assert_int_eq(sum, LLAMA3_V);
    ck_assert_msg(h.sd > 2.0 && h.sd < 3.0, "bulk sd %g (a real model's: 2 to 3)", h.sd);
    ck_assert_double_eq_tol(h.hi, t.rows[0].adjusted, 1e-12);
    trace_free(&t);
    source_close(&SRC);
    lesson_free(&L);
}
END_TEST

/* The script's step 1 (data/scenarios/france.ini, read through the lesson,
 * so the file is the source): twenty tokens, " Paris" and its plausible
 * runners-up, and at the tests' hidden size they are the top 20 rows, in
 * the file's order by logit, each with its logit up to float rounding (the
 * head is bf16, the hidden vector float). The file's logits differ by at
 * least 0.1, so rounding cannot swap two rows; the bulk begins below them. */
START_TEST(test_real_france_runners_up)
{
    open_real("real-france");
    const struct blend *b = &L.model.scenario->steps[0];
    ck_assert_int_eq(b->n, 20);
    int order[SCENARIO_MAX_BLEND];
    for (int i = 0; i < b->n; i++) { /* by logit, descending (insertion sort) */
        int j = i;
        for (; j > 0 && b->logit[order[j - 1]] < b->logit[i]; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    struct settings s;
    source_step_settings(&SRC, 1, &s);
    struct trace t;
    struct err e;
    ck_assert_int_eq(trace_init(&t, L.vocab.n, &e), 0);
    ck_assert_int_eq(source_run_step(&SRC, 1, &s, L.prompt, L.prompt_len, &t, &e), 0);
    ck_assert_int_eq(b->id[order[0]], 12366); /* " Paris" */
    for (int r = 0; r < b->n; r++) {
        const int k = order[r];
        if (r + 1 < b->n)
            ck_assert_double_gt(b->logit[k] - b->logit[order[r + 1]], 4e-3);
        ck_assert_msg(t.rows[r].id == b->id[k], "rank %d: token %d, the script's is %d", r + 1,
                      t.rows[r].id, b->id[k]);
        ck_assert_double_eq_tol(t.rows[r].logit, b->logit[k], 2e-3);
    }
    ck_assert_double_lt(t.rows[b->n].logit, b->logit[order[b->n - 1]]);
    trace_free(&t);
    source_close(&SRC);
    lesson_free(&L);
}
END_TEST

START_TEST(test_hidden_size_too_small)
{
    /* The France script's step 1 asks for 19.5, 15.6, ... from twenty rows
     * whose logits spread 2.5: the sum of (logit / 2.5)^2 is 540 at any
     * size, but the rows' overlaps, which depend on the size, make the part
     * along them smaller at some (443.5 at 512), and the smallest head that
     * fits every blend of the file is 440 wide (kind_scenario.c tries the
     * sizes). 256 is refused when the lesson opens, not half way in. */
    struct catalog cat;
    struct err e;
    ck_assert_int_eq(catalog_open(&cat, TEST_LESSONS, &e), 0);
    ck_assert_int_eq(catalog_load(&cat, "real-france", &L, &e), 0);
    catalog_close(&cat);
    ck_assert_int_eq(source_open(&SRC, &L, NULL, 256, 64, &e), -1);
    ck_assert_str_eq(
        e.msg,
        "scenario france: its logits need a hidden size of at least 440 (this head has 256)");
    source_close(&SRC);
    lesson_free(&L);
}
END_TEST

START_TEST(test_real_runs_repeat_with_a_seed)
{
    open_real("real-story");
    struct settings s;
    source_step_settings(&SRC, 1, &s);
    s.sampler.seed = 7;
    int a[64], b[64];
    struct stop_result st;
    int na = generate(&s, a, 12, &st), nb = generate(&s, b, 12, &st);
    ck_assert_int_eq(na, nb);
    ck_assert_mem_eq(a, b, (size_t)na * sizeof *a);
    s.sampler.seed = 8;
    int c[64];
    int nc = generate(&s, c, 12, &st);
    ck_assert(nc != na || memcmp(a, c, (size_t)na * sizeof *a) != 0);
    source_close(&SRC);
    lesson_free(&L);
}
END_TEST

START_TEST(test_loop_and_its_escape)
{
    open_real("real-loop");
    struct settings s;
    source_step_settings(&SRC, 1, &s); /* the lesson's own: greedy, 40 tokens at most */
    int out[64];
    struct stop_result st;
    int n = generate(&s, out, 64, &st);
    static const int ROUND[] = { TEST_LOOP_ROUND }; /* " and the cat sat on the mat" */
    ck_assert_int_eq(n, 40);
    ck_assert_int_eq(st.rule, STOP_MAX_TOKENS);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(out[i], ROUND[i % 7]);
    /* Repetition penalty 1.3 on generated tokens: the second " the" after
     * " on" falls to 18.6 / 1.3 = 14.3, below " a" (16.0), then " rug" and
     * "." (13) and <|eot_id|>. */
    ck_assert_int_eq(settings_set(&s, "repetition-penalty", "1.3", &(struct err){ 0, "" }), 0);
    n = generate(&s, out, 64, &st);
    static const int ESCAPE[] = { 323, 279, 8415, 7731, 389, 264, 29742, 13, 128009 };
    ck_assert_int_eq(n, 9);
    ck_assert_mem_eq(out, ESCAPE, sizeof ESCAPE);
    ck_assert_int_eq(st.rule, STOP_EOS);
    /* No-repeat n-gram 4 instead (Hugging Face's rule, prompt included): the
     * prompt holds " cat sat on the", so after the second " cat sat on" the
     * token " the" is banned, and the same escape follows: " a rug." */
    ck_assert_int_eq(settings_set(&s, "repetition-penalty", "1", &(struct err){ 0, "" }), 0);
    ck_assert_int_eq(settings_set(&s, "no-repeat-ngram-size", "4", &(struct err){ 0, "" }), 0);
    n = generate(&s, out, 64, &st);
    ck_assert_int_eq(n, 9);
    ck_assert_mem_eq(out, ESCAPE, sizeof ESCAPE);
    /* DRY 0.8 instead (llama.cpp's base 1.75, allowed 2): after the second
     * " cat sat on the", " mat" would extend a repeat of 4 and loses 0.8 x
     * 1.75^2 = 2.45, 18.5 -> 16.05, below " floor" (16.5). */
    ck_assert_int_eq(settings_set(&s, "no-repeat-ngram-size", "0", &(struct err){ 0, "" }), 0);
    ck_assert_int_eq(settings_set(&s, "dry-multiplier", "0.8", &(struct err){ 0, "" }), 0);
    n = generate(&s, out, 64, &st);
    ck_assert_int_ge(n, 7);
    ck_assert_mem_eq(out, ESCAPE, 5 * sizeof *out); /* " and the cat sat on" */
    ck_assert_int_eq(out[5], 279);                  /* " the" */
    ck_assert_int_eq(out[6], 6558);                 /* " floor" */
    source_close(&SRC);
    lesson_free(&L);
}
END_TEST

/* A synthetic full-size row: a bulk of standard deviation 2.5 and a few
 * tokens far above it. */
static void full_row(double *z, int V)
{
    for (int i = 0; i < V; i++) {
        double u1 = philox_uniform(31, (uint32_t)i, 1, 0),
               u2 = philox_uniform(31, (uint32_t)i, 2, 0);
        z[i] = 2.5 * sqrt(-2.0 * log(u1 > 0 ? u1 : 1e-300)) * cos(6.283185307179586 * u2);
    }
    z[100] = 14.0;
    z[200] = 13.0;
    z[300] = 12.5;
    z[400] = 11.0;
}

START_TEST(test_many_draws_against_the_probabilities)
{
    const int V = LLAMA3_V, N = 20000;
    double *z = malloc((size_t)V * sizeof *z);
    full_row(z, V);
    struct trace t;
    struct err e;
    ck_assert_int_eq(trace_init(&t, V, &e), 0);
    struct sampler_settings s;
    sampler_defaults(&s);
    s.seed = 3;
    struct sampler_input in = { .vocab_size = V, .logits = z, .step = 1 };
    ck_assert_int_eq(sampler_run_fast(&in, &s, &t, 40, &e), 0);
    static struct draws d;
    ck_assert_int_eq(draws_run(&t, s.seed, 1, N, 20, &d, &e), 0);
    /* Draw 0 uses the u of the step itself: the same token. */
    ck_assert_int_eq(d.first_kept, t.choice.id);
    /* The rows counted are the trace's top rows, in the same order. */
    for (int r = 0; r < d.rows; r++) {
        ck_assert_int_eq(d.id[r], t.rows[r].id);
        ck_assert_double_eq_tol(d.p_plain[r], t.rows[r].prob, 1e-15);
    }
    long total = d.tail_plain;
    for (int r = 0; r < d.rows; r++)
        total += d.c_plain[r];
    ck_assert_int_eq(total, N);
    /* Pearson's chi-square stays under its 0.1 % point. The limit is the
     * Wilson-Hilferty approximation: within 1 % of the table's 29.59 for 10
     * degrees of freedom and 59.70 for 30 (it errs on the high side). */
    ck_assert_double_eq_tol(draws_chi2_limit(10), 29.59, 0.3);
    ck_assert_double_eq_tol(draws_chi2_limit(30), 59.70, 0.3);
    ck_assert_int_ge(d.df_plain, 3);
    ck_assert_msg(d.chi2_plain < draws_chi2_limit(d.df_plain), "chi2 %g on %d df", d.chi2_plain,
                  d.df_plain);
    ck_assert_msg(d.tail_plain > 0, "the tail holds %g of the mass: some draws land there",
                  d.tail_p_plain);
    /* The four tokens above the bulk hold e^14, e^13, e^12.5, e^11 against
     * the bulk's 128,256 e^(2.5^2 / 2), about 2.92e6: p 0.246 and 0.090 for
     * the first two, so top-p 0.3 keeps those two and no draw lands lower. */
    s.top_p = 0.3;
    ck_assert_int_eq(sampler_run_fast(&in, &s, &t, 40, &e), 0);
    ck_assert_int_eq(draws_run(&t, s.seed, 1, N, 20, &d, &e), 0);
    ck_assert_int_eq(t.kept_count, 2);
    ck_assert_int_eq(d.tail_kept, 0);
    ck_assert_int_eq(d.c_kept[0] + d.c_kept[1], N);
    ck_assert_int_eq(d.first_kept, t.choice.id);
    ck_assert_msg(d.chi2_kept < draws_chi2_limit(d.df_kept), "chi2 %g on %d df", d.chi2_kept,
                  d.df_kept);
    for (int r = 0; r < d.rows; r++)
        if (t.rows[r].removed_by != TRACE_KEPT)
            ck_assert_int_eq(d.c_kept[r], 0);
    trace_free(&t);
    free(z);
}
END_TEST

/* ---- .npy ------------------------------------------------------------------------ */

/* A version 1 file: the header dict padded with spaces to a newline at byte
 * 79, then the data. */
static size_t npy_bytes(unsigned char *buf, const char *dict, const void *data, size_t n)
{
    memcpy(buf, "\x93NUMPY\x01\x00\x46\x00", 10);
    memset(buf + 10, ' ', 70);
    memcpy(buf + 10, dict, strlen(dict));
    buf[79] = '\n';
    memcpy(buf + 80, data, n);
    return 80 + n;
}

START_TEST(test_npy_good_files)
{
    unsigned char buf[256];
    struct npy a;
    struct err e;
    const float f[3] = { 1.5f, -2.0f, 0.25f };
    size_t n =
        npy_bytes(buf, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f, sizeof f);
    ck_assert_msg(npy_parse(&a, "a.npy", buf, n, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(a.rows, 1);
    ck_assert_int_eq(a.cols, 3);
    ck_assert_mem_eq(a.data, f, sizeof f);
    npy_free(&a);
    /* float16, two steps: 1.0 is 0x3C00, -2.0 0xC000, 65504 (the largest
     * half) 0x7BFF, 2^-24 (the smallest subnormal) 0x0001. */
    const unsigned short h[4] = { 0x3C00, 0xC000, 0x7BFF, 0x0001 };
    n = npy_bytes(buf, "{\"descr\": \"<f2\", \"fortran_order\": False, \"shape\": (2, 2)}", h,
                  sizeof h);
    ck_assert_msg(npy_parse(&a, "b.npy", buf, n, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(a.rows, 2);
    ck_assert_int_eq(a.cols, 2);
    ck_assert(a.data[0] == 1.0f && a.data[1] == -2.0f && a.data[2] == 65504.0f);
    ck_assert(a.data[3] == ldexpf(1.0f, -24));
    npy_free(&a);
}
END_TEST

static void npy_refused(const char *dict, const void *data, size_t n, const char *want)
{
    unsigned char buf[256];
    size_t len = npy_bytes(buf, dict, data, n);
    struct npy a;
    struct err e;
    ck_assert_int_eq(npy_parse(&a, "x.npy", buf, len, &e), -1);
    ck_assert_str_eq(e.msg, want);
    ck_assert_ptr_null(a.data);
}

START_TEST(test_npy_bad_files)
{
    const float f[3] = { 1.0f, 2.0f, 3.0f };
    struct npy a;
    struct err e;
    ck_assert_int_eq(npy_parse(&a, "x.npy", (const unsigned char *)"PK\x03\x04 a zip file", 18, &e),
                     -1);
    ck_assert_str_eq(e.msg, "x.npy: not a .npy file (it does not start with \\x93NUMPY)");
    npy_refused("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f, sizeof f,
                "x.npy: dtype '<f8' is not supported (little-endian float32 '<f4' or float16 "
                "'<f2'; save with logits.float().numpy())");
    npy_refused("{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", f, sizeof f,
                "x.npy: dtype '>f4' is not supported (little-endian float32 '<f4' or float16 "
                "'<f2'; save with logits.float().numpy())");
    npy_refused("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", f, sizeof f,
                "x.npy: the array is in Fortran order; save it in C order "
                "(numpy.ascontiguousarray)");
    npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 3), }", f, sizeof f,
                "x.npy: shape has 3 dimensions; logits are [V] or [steps, V]");
    npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", f, sizeof f,
                "x.npy: shape (0, 3) is not one of logits (1 to 256 steps of 2 to 4194304 "
                "tokens)");
    /* A header that claims a terabyte is refused before anything is read. */
    npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2000000, 128256)}", f, sizeof f,
                "x.npy: shape (2000000, 128256) is not one of logits (1 to 256 steps of 2 to "
                "4194304 tokens)");
    npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", f, sizeof f,
                "x.npy: truncated: the shape needs 16 bytes of data, the file has 12");
    const float nan3[3] = { 1.0f, NAN, 3.0f }, inf3[6] = { 1, 2, 3, 4, -INFINITY, 6 };
    npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", nan3, sizeof nan3,
                "x.npy: token 1: the logit is NaN");
    npy_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", inf3, sizeof inf3,
                "x.npy: step 2, token 1: the logit is -inf");
    /* A header cut short: its length points past the end of the file. */
    unsigned char cut[20] = "\x93NUMPY\x01\x00\x46\x00{'descr'";
    ck_assert_int_eq(npy_parse(&a, "x.npy", cut, sizeof cut, &e), -1);
    ck_assert_str_eq(e.msg, "x.npy: truncated header (it says 70 bytes)");
}
END_TEST

START_TEST(test_stop_rules_at_full_size)
{
    struct settings s;
    settings_defaults(&s);
    struct err e;
    /* "The capital of France is" + " Paris" "." <|eot_id|>: the end token. */
    int ctx[8] = { 791, 6864, 315, 9822, 374, 12366, 13, 128009 };
    struct stop_result r = stop_check(&s, &V3, ctx, 8, 5);
    ck_assert_int_eq(r.rule, STOP_EOS);
    ck_assert_int_eq(r.which, 128009);
    /* A stop string across two tokens: "is." spans " Paris" and ".". */
    ck_assert_int_eq(settings_set(&s, "stop", "is.", &e), 0);
    r = stop_check(&s, &V3, ctx, 7, 5);
    ck_assert_int_eq(r.rule, STOP_STRING);
    /* Only generated text counts: the prompt's "is" alone does not stop. */
    r = stop_check(&s, &V3, ctx, 6, 5);
    ck_assert_int_eq(r.rule, STOP_NONE);
    ck_assert_int_eq(settings_set(&s, "stop", "", &e), 0);
    ck_assert_int_eq(settings_set(&s, "max-tokens", "2", &e), 0);
    r = stop_check(&s, &V3, ctx, 7, 5);
    ck_assert_int_eq(r.rule, STOP_MAX_TOKENS);
}
END_TEST

/* Huge or hostile inputs are refused with a message, not followed. */
START_TEST(test_limits)
{
    struct vocab v;
    struct err e;
    /* A token of 2,000 bytes. */
    size_t n = 2001;
    unsigned char *long_token = malloc(n);
    memset(long_token, 'a', n - 1);
    long_token[n - 1] = '\n';
    ck_assert_int_eq(vocab_parse(&v, "v.txt", long_token, n, &e), -1);
    ck_assert_str_eq(e.msg, "v.txt:1: a token longer than 1024 bytes");
    free(long_token);
    /* Five million one-byte tokens: more than any vocabulary. */
    n = 10000000;
    unsigned char *many = malloc(n);
    for (size_t i = 0; i < n; i += 2)
        many[i] = 'x', many[i + 1] = '\n';
    ck_assert_int_eq(vocab_parse(&v, "v.txt", many, n, &e), -1);
    ck_assert_str_eq(e.msg, "v.txt: 5000000 lines: a vocabulary has 1 to 4194304 tokens");
    free(many);
    /* A binary vocabulary whose header promises four billion tokens. */
    unsigned char hdr[24] = "LLVOCAB1\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00";
    ck_assert_int_eq(vocab_parse(&v, "v.bin", hdr, sizeof hdr, &e), -1);
    ck_assert_str_eq(e.msg, "v.bin: 4294967295 tokens: a vocabulary has 1 to 4194304");
    /* A stop string longer than any sensible one. */
    struct settings s;
    settings_defaults(&s);
    char stop[200];
    memset(stop, 's', sizeof stop - 1);
    stop[sizeof stop - 1] = '\0';
    ck_assert_int_eq(settings_set(&s, "stop", stop, &e), -1);
    ck_assert_str_eq(e.msg, "'ssssssssssssssssssssssss...' is too long (at most 64 bytes)");
}
END_TEST

Suite *suite_real(void)
{
    Suite *s = suite_create("real");
    TCase *vocab = tcase_create("vocab");
    tcase_add_checked_fixture(vocab, load_vocab, free_vocab);
    tcase_add_test(vocab, test_llama3_entries);
    tcase_add_test(vocab, test_llama3_prompts);
    tcase_add_test(vocab, test_character_split_across_tokens);
    tcase_add_test(vocab, test_scenarios_check_their_prompts);
    tcase_add_test(vocab, test_stop_rules_at_full_size);
    suite_add_tcase(s, vocab);
    TCase *run = tcase_create("run");
    tcase_set_timeout(run, 120);
    tcase_add_test(run, test_lm_head_against_double_reference);
    tcase_add_test(run, test_real_france_step_one);
    tcase_add_test(run, test_real_france_runners_up);
    tcase_add_test(run, test_hidden_size_too_small);
    tcase_add_test(run, test_real_runs_repeat_with_a_seed);
    tcase_add_test(run, test_loop_and_its_escape);
    tcase_add_test(run, test_many_draws_against_the_probabilities);
    suite_add_tcase(s, run);
    TCase *npy = tcase_create("npy");
    tcase_add_test(npy, test_npy_good_files);
    tcase_add_test(npy, test_npy_bad_files);
    tcase_add_test(npy, test_limits);
    suite_add_tcase(s, npy);
    return s;
}
