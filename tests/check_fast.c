/* The O(V) sampler against the reference, which sorts everything: on random
 * rows of many sizes and settings, the same kept set, the same statistics,
 * the same top rows and the same token for the same u. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vecpath.h"
#include "core/candidates.h"
#include "core/draws.h"
#include "core/fast_vec.h"
#include "core/fastexp.h"
#include "core/grammar.h"
#include "core/philox.h"
#include "core/sampler.h"
#include "core/sampler_rules.h"
#include "core/settings.h"
#include "core/vecmath.h"
#include "suites.h"

static struct trace ref, fast;

static void teardown(void)
{
    trace_free(&ref);
    trace_free(&fast);
}

/* A deterministic normal from Philox (Box-Muller). */
static double normal(uint64_t seed, uint32_t i)
{
    double u1 = philox_uniform(seed, i, 1, 0) + 1.0 / 33554432.0;
    double u2 = philox_uniform(seed, i, 2, 0);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

/* Every setting the keys step through that random_settings does not set by
 * hand (the stages added since: typical-p, top-n-sigma, ...): on with a
 * chance of 0.4, at a step of its ladder (sampling.def). */
static void random_others(uint64_t seed, struct sampler_settings *s)
{
    static const char *const BY_HAND[] = { "temperature", "top-k", "top-p", "min-p",
                                           "repetition-penalty" };
    struct settings all;
    settings_defaults(&all);
    all.sampler = *s;
    uint32_t k = 0;
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++, k++) {
        int by_hand = 0;
        for (size_t h = 0; h < sizeof BY_HAND / sizeof BY_HAND[0]; h++)
            by_hand |= strcmp(i->name, BY_HAND[h]) == 0;
        if (!i->ladder || by_hand || philox_uniform(seed, 78, k, 0) >= 0.4)
            continue;
        char steps[256], *value = NULL;
        snprintf(steps, sizeof steps, "%s", i->ladder);
        int n = 0;
        for (char *w = strtok(steps, " "); w; w = strtok(NULL, " "))
            n++;
        int pick = (int)(philox_uniform(seed, 79, k, 0) * n);
        snprintf(steps, sizeof steps, "%s", i->ladder);
        value = strtok(steps, " ");
        for (int j = 0; j < pick; j++)
            value = strtok(NULL, " ");
        struct err e;
        ck_assert_msg(settings_set(&all, i->name, value, &e) == 0, "%s %s: %s", i->name, value,
                      e.msg);
    }
    *s = all.sampler;
}

/* A custom order: some of the stages, shuffled (a cut, a value stage, a
 * cut: the order where a cut's masses wait for the final z'). */
static void random_order(uint64_t seed, struct chain *c)
{
    enum stage st[STAGE_COUNT];
    for (int i = 0; i < STAGE_COUNT; i++)
        st[i] = (enum stage)i;
    for (int i = STAGE_COUNT - 1; i > 0; i--) {
        int j = (int)(philox_uniform(seed, 81, (uint32_t)i, 0) * (i + 1));
        enum stage x = st[i];
        st[i] = st[j];
        st[j] = x;
    }
    c->n = 1 + (int)(philox_uniform(seed, 82, 0, 0) * STAGE_COUNT);
    memcpy(c->stage, st, sizeof st);
    c->preset = PRESET_CUSTOM;
    c->topk_keep_ties = 0;
}

/* A random logit bias, with a chance of 0.35: up to 4 tokens, some at
 * -inf; on a small row at times every token at -inf (the most likely
 * stays then). The list settings have no ladder for random_others. */
static void random_logit_bias(uint64_t seed, int V, struct sampler_settings *s)
{
    struct logit_bias *b = &s->logit_bias;
    b->n = 0;
    if (philox_uniform(seed, 83, 0, 0) >= 0.35)
        return;
    int all = V <= 7 && philox_uniform(seed, 83, 1, 0) < 0.2;
    int want = all ? V : 1 + (int)(philox_uniform(seed, 83, 2, 0) * 4);
    for (int j = 0; j < want; j++) {
        int id = all ? j : (int)(philox_uniform(seed, 84, (uint32_t)j, 0) * V), twice = 0;
        for (int k = 0; k < b->n; k++)
            twice |= b->id[k] == id;
        if (twice)
            continue;
        double u = philox_uniform(seed, 85, (uint32_t)j, 0);
        b->id[b->n] = id;
        b->bias[b->n++] = all || u < 0.3 ? -INFINITY : (u - 0.65) * 8.0;
    }
}

/* Random bad words, with a chance of 0.35: up to 3 sequences, half of
 * them the context's last tokens and one more (so that they match). */
static void random_bad_words(uint64_t seed, int V, const int *ctx, int len,
                             struct sampler_settings *s)
{
    struct bad_words *w = &s->bad_words;
    w->n = 0;
    if (philox_uniform(seed, 86, 0, 0) >= 0.35)
        return;
    int n = 1 + (int)(philox_uniform(seed, 86, 1, 0) * 3);
    for (int q = 0; q < n; q++) {
        int rest = (int)(philox_uniform(seed, 87, (uint32_t)q, 0) * 3);
        int tail = philox_uniform(seed, 87, (uint32_t)q, 1) < 0.5 && rest <= len;
        for (int j = 0; j < rest; j++)
            w->id[q][j] = tail ? ctx[len - rest + j]
                               : (int)(philox_uniform(seed, 88, (uint32_t)q, (uint32_t)j) * V);
        w->id[q][rest] = (int)(philox_uniform(seed, 89, (uint32_t)q, 0) * V);
        w->len[q] = rest + 1;
        w->n++;
    }
}

/* Random settings: each stage on with some chance, any preset or a custom order. */
static void random_settings(uint64_t seed, int V, struct sampler_settings *s)
{
    sampler_defaults(s);
    double u[8];
    for (int i = 0; i < 8; i++)
        u[i] = philox_uniform(seed, 77, (uint32_t)i, 0);
    if (u[0] < 0.15)
        s->temperature = 0.0;
    else if (u[0] < 0.7)
        s->temperature = 0.3 + 2.0 * u[1];
    if (u[2] < 0.5)
        s->top_k = 1 + (int)(u[3] * (V < 100 ? V : 100));
    if (u[4] < 0.5)
        s->top_p = 0.05 + 0.94 * u[5];
    if (u[6] < 0.4)
        s->min_p = 0.3 * u[7];
    if (u[1] < 0.4) {
        s->repetition_penalty = 1.0 + u[2];
        s->penalty_formula = u[3] < 0.5 ? PENALTY_ENGINE : PENALTY_LESSON;
        s->penalty_scope = u[4] < 0.5 ? SCOPE_GENERATED : SCOPE_ALL;
        s->presence_penalty = u[5] < 0.3 ? 0.5 : 0.0;
        s->frequency_penalty = u[6] < 0.3 ? 0.25 : 0.0;
        s->penalty_last_n = u[7] < 0.3 ? 4 : 0;
    }
    chain_preset(&s->chain, (enum preset)((int)(u[5] * 4) % 4));
    if (philox_uniform(seed, 80, 0, 0) < 0.2)
        random_order(seed, &s->chain);
    s->seed = seed;
    random_others(seed, s);
    random_logit_bias(seed, V, s);
    if (philox_uniform(seed, 83, 0, 0) < 0.25) /* a grammar: compare() makes its mask */
        s->regex = GRAMMAR_FRONT_REGEX;
}

/* The mask of a grammar that is on (random_settings): about half of the
 * tokens refused, drawn from the settings' seed. NULL when it is off. */
static uint8_t *random_mask(const struct sampler_settings *s, int V)
{
    if (!s->regex)
        return NULL;
    uint8_t *m = malloc((size_t)V);
    ck_assert_ptr_nonnull(m);
    double share = philox_uniform(s->seed, 84, 0, 0);
    for (int i = 0; i < V; i++)
        m[i] = philox_uniform(s->seed, 85, (uint32_t)i, 0) < share;
    return m;
}

static const int ENDS[] = { 0, 1 };

static void compare(const double *z, int V, const int *ctx, int len, int plen,
                    const struct sampler_settings *s, int n_rows, const char *what)
{
    struct err e;
    trace_free(&ref);
    trace_free(&fast);
    ck_assert_int_eq(trace_init(&ref, V, &e), 0);
    ck_assert_int_eq(trace_init(&fast, V, &e), 0);
    struct sampler_input in = { .vocab_size = V,
                                .logits = z,
                                .context = ctx,
                                .context_len = len,
                                .prompt_len = plen,
                                .step = 3,
                                .row = 1,
                                .end_ids = ENDS,
                                .n_end = V > 1 ? 2 : 1, /* min-tokens masks them */
                                .refused = random_mask(s, V) };
    if (sampler_run(&in, s, &ref, &e) < 0) { /* the grammar may leave no token: both say so */
        struct err ef;
        ck_assert_msg(strncmp(e.msg, "grammar: ", 9) == 0, "%s: %s", what, e.msg);
        ck_assert_int_eq(sampler_run_fast(&in, s, &fast, n_rows, &ef), -1);
        ck_assert_str_eq(ef.msg, e.msg);
        free((void *)in.refused);
        return;
    }

    ck_assert_msg(sampler_run_fast(&in, s, &fast, n_rows, &e) == 0, "%s: %s", what, e.msg);
    free((void *)in.refused); /* read by the runs only */
    in.refused = NULL;
    ck_assert_int_eq(fast.n_rows, n_rows < V ? n_rows : V);
    ck_assert_msg(fast.kept_count == ref.kept_count, "%s: kept %d, reference %d", what,
                  fast.kept_count, ref.kept_count);
    /* The same kept set, token by token: every token of small rows, and a
     * spread of ranks (every one near the kept boundary) of large ones. */
    int step = V <= 500 ? 1 : V / 200;
    for (int r = 0; r < V; r++) {
        int near_cut = r >= ref.kept_count - 3 && r <= ref.kept_count + 3;
        if (r % step != 0 && !near_cut && r >= 50)
            continue;
        const struct trace_row *rr = &ref.rows[r];
        struct trace_row fr;
        int rank;
        ck_assert_int_eq(sampler_fast_row(&fast, rr->id, &fr, &rank), 0);
        ck_assert_msg(fr.removed_by == rr->removed_by, "%s: token %d removed by %d, reference %d",
                      what, rr->id, fr.removed_by, rr->removed_by);
        ck_assert_msg(rank == r, "%s: token %d rank %d, reference %d", what, rr->id, rank, r);
        ck_assert_double_eq_tol(fr.prob, rr->prob, 1e-12);
        ck_assert_double_eq_tol(fr.final, rr->final, 1e-12);
        ck_assert_double_eq_tol(fr.cum, rr->cum, 1e-12);
    }
    /* The top rows, in order. */
    for (int r = 0; r < fast.n_rows; r++) {
        ck_assert_int_eq(fast.rows[r].id, ref.rows[r].id);
        ck_assert_double_eq_tol(fast.rows[r].cum_final, ref.rows[r].cum_final, 1e-12);
        ck_assert_int_eq(fast.rows[r].seen, ref.rows[r].seen);
        if (isfinite(ref.rows[r].adjusted))
            ck_assert_double_eq_tol(fast.rows[r].adjusted, ref.rows[r].adjusted, 1e-12);
        else
            ck_assert_double_eq(fast.rows[r].adjusted, ref.rows[r].adjusted);
    }
    ck_assert_double_eq_tol(fast.kept_mass, ref.kept_mass, 1e-12);
    ck_assert_double_eq_tol(fast.entropy, ref.entropy, 1e-9);
    ck_assert_double_eq_tol(fast.entropy_final, ref.entropy_final, 1e-9);
    ck_assert_double_eq_tol(fast.sum_exp_shifted, ref.sum_exp_shifted, 1e-12 * ref.sum_exp_shifted);
    for (int c = 0; c < ref.n_stages; c++) {
        ck_assert_int_eq(fast.stages[c].removed, ref.stages[c].removed);
        ck_assert_int_eq(fast.stages[c].in, ref.stages[c].in);
        ck_assert_double_eq_tol(fast.stages[c].removed_mass, ref.stages[c].removed_mass, 1e-12);
        enum stage st = ref.stages[c].stage;
        if (ref.stages[c].active && (STAGES[st].flags & SF_CUT)) {
            /* What a cutting stage saw: its top probability and its cut. */
            double fp, fc, rp, rc;
            trace_stage_values(&fast, c, &fp, &fc);
            trace_stage_values(&ref, c, &rp, &rc);
            ck_assert_double_eq_tol(fp, rp, 1e-12);
            ck_assert_double_eq_tol(fc, rc, 1e-12);
        }
    }
    /* The same token for the same u (rows that sit within 1e-12 of u aside). */
    ck_assert_msg(fast.choice.id == ref.choice.id || fabs(ref.choice.u - ref.choice.lo) < 1e-12 ||
                      fabs(ref.choice.u - ref.choice.hi) < 1e-12,
                  "%s: drew %d, reference %d", what, fast.choice.id, ref.choice.id);
    ck_assert_int_eq(fast.choice.rank, ref.choice.rank);
    ck_assert_int_eq(fast.choice.sampled, ref.choice.sampled);
    ck_assert_int_eq(fast.greedy, ref.greedy);
    ck_assert_int_eq(fast.penalized, ref.penalized);
}

/* fastexp.h's e^x against the C library's exp: within 1 ulp at a million
 * points over the range the sampler feeds it (-708 <= x <= 0, spread by
 * Philox so that every table entry and every exponent is hit), and the
 * eight-lane fast_exp8 (its fused multiply-adds by the instruction, and
 * emulated as the baseline build has them) and the four-lane fast_exp4 (the
 * AVX2 build's, its table read lane by lane) the same bits as fast_exp
 * lane by lane, with the clamps and without them (the passes use them, the
 * scalar paths and the GPU's twin fast_exp). */
START_TEST(test_fast_exp_is_within_one_ulp)
{
    double worst = 0.0;
    int differ = 0;
    for (uint32_t i = 0; i < 1000000; i += 8) {
        double x[8], y[8], yr[8], y4[8], y4r[8], ys[8], ysr[8];
        for (int k = 0; k < 8; k++)
            x[k] = -708.0 * philox_uniform(11, i + (uint32_t)k, 0, 0);
#ifdef FASTEXP_HAS_VEC4
        for (int h = 0; h < 8; h += 4) {
            fast_exp4(x + h, 0.0, y4 + h, 0);
            fast_exp4(x + h, 0.0, y4r + h, 1);
        }
#else
        for (int k = 0; k < 8; k++)
            y4[k] = y4r[k] = fast_exp(x[k]);
#endif
#ifdef FASTEXP_HAS_VEC
        fast_exp8(x, 0.0, y, 0, 0);
        fast_exp8(x, 0.0, yr, 1, 0); /* every x in range: the clamps left out */
        fast_exp8(x, 0.0, ys, 0, 1); /* the baseline build's emulated FMA */
        fast_exp8(x, 0.0, ysr, 1, 1);
#else
        for (int k = 0; k < 8; k++)
            y[k] = yr[k] = ys[k] = ysr[k] = fast_exp(x[k]);
#endif
        for (int k = 0; k < 8; k++) {
            double want = exp(x[k]), ulp = nextafter(want, INFINITY) - want;
            double d = fabs(fast_exp(x[k]) - want) / ulp;
            worst = d > worst ? d : worst;
            differ += (y[k] != fast_exp(x[k])) + (yr[k] != fast_exp(x[k]));
            differ += (y4[k] != fast_exp(x[k])) + (y4r[k] != fast_exp(x[k]));
            differ += (ys[k] != fast_exp(x[k])) + (ysr[k] != fast_exp(x[k]));
        }
    }
    ck_assert_msg(worst <= 1.0, "fast_exp is %.2f ulp from exp", worst);
    ck_assert_int_eq(differ, 0);
#ifdef FASTEXP_HAS_VEC
    /* fast_exp8's table: each entry's bits less j << 48 (fastexp.h says why). */
    for (uint64_t j = 0; j < 16; j++) {
        uint64_t b;
        memcpy(&b, &FASTEXP_T[j], sizeof b);
        ck_assert_uint_eq(FASTEXP_T8_BITS[j], b - (j << 48));
    }
    /* Past the clamps both vector forms are fast_exp bit for bit: -inf and
     * below -708 give 0, above 709 the value at 709. */
    double wild[8] = { -INFINITY, -1000.0, -708.5, 709.5, 1e6, -0.0, 3.0, -707.9 };
    double w8[8], w4[8], ws[8];
    fast_exp8(wild, 0.0, w8, 0, 0);
    fast_exp8(wild, 0.0, ws, 0, 1);
#ifdef FASTEXP_HAS_VEC4
    fast_exp4(wild, 0.0, w4, 0);
    fast_exp4(wild + 4, 0.0, w4 + 4, 0);
#else
    memcpy(w4, w8, sizeof w4);
#endif
    for (int k = 0; k < 8; k++) {
        double want = fast_exp(wild[k]);
        ck_assert_msg(memcmp(&w8[k], &want, sizeof want) == 0 &&
                          memcmp(&w4[k], &want, sizeof want) == 0 &&
                          memcmp(&ws[k], &want, sizeof want) == 0,
                      "e^%g: %a, %a and %a, fast_exp %a", wild[k], w8[k], w4[k], ws[k], want);
    }
#endif
    /* The ends: e^0 = 1 exactly, below -708 it is 0, and -inf (a masked token) gives 0. */
    ck_assert_double_eq(fast_exp(0.0), 1.0);
    ck_assert_double_eq(fast_exp(-709.0), 0.0);
    ck_assert_double_eq(fast_exp(-INFINITY), 0.0);
}
END_TEST

START_TEST(test_random_rows_match_the_reference)
{
    static const int SIZES[] = { 1, 2, 7, 50, 300, 2000, 5000 };
    int ctx[64];
    char what[96];
    for (size_t si = 0; si < sizeof SIZES / sizeof SIZES[0]; si++) {
        int V = SIZES[si];
        double *z = malloc((size_t)V * sizeof *z);
        for (uint64_t trial = 0; trial < 60; trial++) {
            uint64_t seed = trial * 1000003u + (uint64_t)V;
            double spread = 0.5 + 4.0 * philox_uniform(seed, 5, 5, 5);
            for (int i = 0; i < V; i++)
                z[i] = spread * normal(seed, (uint32_t)i);
            if (trial % 7 == 3 && V > 3)
                z[V / 2] = z[V / 3] = z[1]; /* ties */
            if (trial % 11 == 5 && V > 3)
                z[2] = -INFINITY; /* a masked token */
            int len = (int)(philox_uniform(seed, 9, 9, 9) * 40);
            for (int j = 0; j < len; j++)
                ctx[j] = (int)(philox_uniform(seed, 10, (uint32_t)j, 0) * V);
            struct sampler_settings s;
            random_settings(seed, V, &s);
            random_bad_words(seed, V, ctx, len, &s);
            snprintf(what, sizeof what, "V=%d trial %d", V, (int)trial);
            compare(z, V, ctx, len, len / 2, &s, 40, what);
        }
        free(z);
    }
}
END_TEST

/* Top-k above HEAP_MAX (4,096) takes the radix count descent on the CPU --
 * the way the CUDA kernel finds every k -- rather than the heap: the same
 * kept set as the reference, with exact ties at the k-th place, and with
 * hundreds of tokens whose doubles differ but round to one float key (the
 * last level's bucket then holds more than SMALL_SET and is sorted by the
 * exact z'), and with thousands of zeros of both signs at the k-th place
 * (-0 and +0 are one number: the key must not part them). */
START_TEST(test_large_k_takes_the_radix_descent)
{
    const int V = 20000;
    static const int KS[] = { 4097, 5000, 9999, 19999 };
    double *z = malloc((size_t)V * sizeof *z);
    char what[96];
    for (int shape = 0; shape < 4; shape++) {
        for (int i = 0; i < V; i++)
            z[i] = 2.5 * normal(41 + (uint64_t)shape, (uint32_t)i);
        if (shape == 1) /* exact ties from about rank 6,100 to 12,800: k 9,999 among them */
            for (int i = 0; i < V; i += 3)
                z[i] = 0.25;
        if (shape == 2) /* one float key, 600 different doubles, across rank 5,000 */
            for (int i = 0; i < 600; i++)
                z[i * 31] = 1.686 + (double)i * 1e-13;
        if (shape == 3) /* zeros of both signs from about rank 5,000 to 11,700, equal as */
            for (int i = 0; i < V; i += 3) /* numbers: the lower id first, whatever the sign */
                z[i] = i % 2 ? -0.0 : 0.0;
        for (size_t ki = 0; ki < sizeof KS / sizeof KS[0]; ki++)
            for (int p = 0; p < 4; p++) {
                struct sampler_settings s;
                sampler_defaults(&s);
                chain_preset(&s.chain, (enum preset)p);
                s.top_k = KS[ki];
                s.temperature = p == 3 ? 1.3 : 0.9;
                s.seed = (uint64_t)(ki * 4 + (size_t)p);
                if (shape == 3)
                    s.shift = -0.0; /* z + -0 keeps the sign of every zero (+0 would not) */
                snprintf(what, sizeof what, "shape %d top-k %d %s", shape, KS[ki],
                         preset_name((enum preset)p));
                compare(z, V, NULL, 0, 0, &s, 40, what);
                /* The k-th token is one of the block the shape put there. */
                if (shape == 1 && KS[ki] == 9999)
                    ck_assert_msg(ref.rows[KS[ki] - 1].logit == 0.25, "%s: k-th %g", what,
                                  ref.rows[KS[ki] - 1].logit);
                if (shape == 2 && KS[ki] == 5000)
                    ck_assert_msg(fabs(ref.rows[KS[ki] - 1].logit - 1.686) < 1e-9, "%s: k-th %.15g",
                                  what, ref.rows[KS[ki] - 1].logit);
            }
    }
    free(z);
}
END_TEST

START_TEST(test_real_size_row)
{
    /* One row the size of Llama 3's vocabulary, the full chain of the benchmark. */
    const int V = 128256;
    double *z = malloc((size_t)V * sizeof *z);
    for (int i = 0; i < V; i++)
        z[i] = 2.5 * normal(99, (uint32_t)i);
    z[12366] = 19.0;
    z[791] = 16.5;
    struct sampler_settings s;
    sampler_defaults(&s);
    s.temperature = 0.8;
    s.top_k = 40;
    s.top_p = 0.95;
    s.min_p = 0.05;
    s.seed = 5;
    compare(z, V, NULL, 0, 0, &s, 20, "V=128256 full chain");
    sampler_defaults(&s);
    s.top_p = 0.95; /* the top-p cut falls deep in the bulk */
    compare(z, V, NULL, 0, 0, &s, 20, "V=128256 top-p alone");
    free(z);
}
END_TEST

/* The first cut's p_max left for later (trace_stage_values): in orders
 * where the temperature or a penalty rewrites z' after a top-k, min-p or
 * top-n-sigma that cuts first, each way the z' of then is kept -- the
 * load's quotients made ahead, the divide writing to the other array, the
 * copy before a penalty or before a temperature that another rewrite
 * follows -- the stage's p_max and cut match the reference's; so do they
 * where the first of them cuts nothing (masked tokens leave top-k's k at
 * or above what is kept) and a top-p after it needs the sum at once. */
START_TEST(test_p_max_left_for_later)
{
    static const char *const ORDERS[] = {
        "top-k,top-p,min-p,temperature",         /* llama.cpp's, the quotients ahead */
        "min-p,temperature",                     /* min-p first */
        "top-n-sigma,top-k,temperature",         /* a cut that is not a probability */
        "penalty,top-k,top-p,min-p,temperature", /* a penalty first: the divide keeps */
        "top-k,penalty,temperature,min-p",       /* the copy before the penalty */
        "min-p,temperature,penalty,top-p",       /* a rewrite after T: copy, then divide */
        "top-k,top-p,temperature",               /* top-k cuts nothing, top-p sums at once */
    };
    const int V = 3000;
    double *z = malloc((size_t)V * sizeof *z);
    int ctx[16];
    char what[128];
    struct err e;
    for (int i = 0; i < V; i++)
        z[i] = 2.0 * normal(17, (uint32_t)i);
    for (int j = 0; j < 16; j++)
        ctx[j] = (j * 181) % V;
    for (size_t o = 0; o < sizeof ORDERS / sizeof ORDERS[0]; o++) {
        struct sampler_settings s;
        sampler_defaults(&s);
        ck_assert_int_eq(chain_parse(ORDERS[o], &s.chain, &e), 0);
        s.temperature = 0.7;
        s.top_k = 40;
        s.top_p = 0.9;
        s.min_p = 0.02;
        s.top_n_sigma = 2.0;
        s.repetition_penalty = 1.3;
        s.seed = 9;
        if (o == 6) {
            s.top_k = V - 5; /* five tokens masked: top-k keeps them all */
            for (int i = 0; i < 5; i++)
                z[i * 7] = -INFINITY;
        }
        snprintf(what, sizeof what, "order %s", ORDERS[o]);
        compare(z, V, ctx, 16, 0, &s, 20, what);
        /* The way under test was taken: stage 0 (1 + 0) or 1 waits. */
        ck_assert_msg(fast.p_max_later == (o == 3 ? 2 : 1), "%s: p_max_later %d", what,
                      fast.p_max_later);
    }
    free(z);
}
END_TEST

/* A float row (a model's, the benchmarks') loads as the doubles of the
 * same values do, though fv_load reads the two apart: the same trace, bit
 * for bit, over random rows and settings, with a masked token in some
 * chunks and a row length that ends in a partial block and chunk; and a
 * float row with a NaN, +inf or a value past the limit is refused with the
 * same words as its doubles. */
START_TEST(test_float_rows_load_as_doubles)
{
    enum { V = 5000 + 37 };
    static float zf[V];
    static double zd[V];
    struct trace tf, td;
    struct err e, ed;
    ck_assert_int_eq(trace_init(&tf, V, &e), 0);
    ck_assert_int_eq(trace_init(&td, V, &e), 0);
    for (uint64_t trial = 0; trial < 40; trial++) {
        uint64_t seed = trial * 7919u + 5u;
        for (int i = 0; i < V; i++)
            zf[i] = (float)(3.0 * normal(seed, (uint32_t)i));
        if (trial % 3 == 1)
            zf[600 + (int)trial] = -INFINITY; /* a mask in the second chunk */
        if (trial % 4 == 2)
            zf[V - 1] = zf[3]; /* a tie in the tail */
        for (int i = 0; i < V; i++)
            zd[i] = zf[i];
        struct sampler_settings s;
        random_settings(seed, V, &s);
        struct sampler_input in = {
            .vocab_size = V, .logits_f = zf, .step = 2, .refused = random_mask(&s, V)
        };
        int rf = sampler_run_fast(&in, &s, &tf, 20, &e);
        in.logits_f = NULL;
        in.logits = zd;
        int rd = sampler_run_fast(&in, &s, &td, 20, &ed);
        free((void *)in.refused);
        ck_assert_int_eq(rf, rd);
        if (rf < 0) {
            ck_assert_str_eq(e.msg, ed.msg);
            continue;
        }
        ck_assert_int_eq(tf.choice.id, td.choice.id);
        ck_assert_int_eq(tf.kept_count, td.kept_count);
        double a[4] = { tf.sum_exp_shifted, tf.entropy, tf.entropy_final, tf.kept_mass };
        double b[4] = { td.sum_exp_shifted, td.entropy, td.entropy_final, td.kept_mass };
        ck_assert_msg(memcmp(a, b, sizeof a) == 0, "trial %d: the sums differ", (int)trial);
        for (int r = 0; r < tf.n_rows; r++) {
            ck_assert_int_eq(tf.rows[r].id, td.rows[r].id);
            ck_assert(memcmp(&tf.rows[r].prob, &td.rows[r].prob, sizeof(double)) == 0);
            ck_assert(memcmp(&tf.rows[r].final, &td.rows[r].final, sizeof(double)) == 0);
        }
    }
    /* Inside a block (1500) and at a block's first token (1536, where a
     * NaN is the one a running maximum keeps), each bad value. */
    static const float BAD[] = { NAN, INFINITY, 3e30f, -3e30f };
    static const int AT[] = { 1500, 1536 };
    for (size_t k = 0; k < 2 * sizeof BAD / sizeof BAD[0]; k++) {
        for (int i = 0; i < V; i++)
            zd[i] = zf[i] = (float)normal(99, (uint32_t)i);
        zf[AT[k % 2]] = BAD[k / 2];
        zd[AT[k % 2]] = BAD[k / 2];
        struct sampler_settings s;
        sampler_defaults(&s);
        struct sampler_input in = { .vocab_size = V, .logits_f = zf, .step = 2 };
        ck_assert_int_eq(sampler_run_fast(&in, &s, &tf, 20, &e), -1);
        in.logits_f = NULL;
        in.logits = zd;
        ck_assert_int_eq(sampler_run_fast(&in, &s, &td, 20, &ed), -1);
        ck_assert_str_eq(e.msg, ed.msg);
    }
    trace_free(&tf);
    trace_free(&td);
}
END_TEST

START_TEST(test_float_input)
{
    float zf[5] = { 1.5f, -2.0f, 3.25f, 3.25f, -INFINITY };
    double zd[5];
    for (int i = 0; i < 5; i++)
        zd[i] = zf[i];
    struct err e;
    ck_assert_int_eq(trace_init(&fast, 5, &e), 0);
    ck_assert_int_eq(trace_init(&ref, 5, &e), 0);
    struct sampler_settings s;
    sampler_defaults(&s);
    struct sampler_input in = { .vocab_size = 5, .logits_f = zf, .step = 1 };
    ck_assert_int_eq(sampler_run_fast(&in, &s, &fast, 5, &e), 0);
    in.logits_f = NULL;
    in.logits = zd;
    ck_assert_int_eq(sampler_run(&in, &s, &ref, &e), 0);
    ck_assert_int_eq(fast.rows[0].id, 2); /* the tie goes to the lower id */
    ck_assert_int_eq(fast.rows[4].id, 4); /* masked last */
    ck_assert_int_eq(fast.rows[4].removed_by, TRACE_MASKED);
    ck_assert_int_eq(fast.choice.id, ref.choice.id);
    ck_assert_double_eq(fast.rows[0].logit, 3.25);
}
END_TEST

/* The fixed-point masses of the radix walks (sampler_rules.h), which the
 * kernels add with atomics in any order: units of 2^-58, a carry into the
 * high word, and the same total whatever the order of the additions. */
START_TEST(test_fixed_point_mass)
{
    ck_assert_uint_eq(rule_mass_units(1.0), (uint64_t)1 << 58);
    ck_assert_uint_eq(rule_mass_units(0.5), (uint64_t)1 << 57);
    ck_assert_uint_eq(rule_mass_units(0x1p-59), 1); /* half a unit rounds up */
    ck_assert_uint_eq(rule_mass_units(0x1p-60), 0); /* a quarter rounds down */
    ck_assert_uint_eq(rule_mass_units(0.0), 0);
    ck_assert_uint_eq(rule_mass_units(NAN), 0); /* the guards: defined, never a wrap */
    ck_assert_uint_eq(rule_mass_units(INFINITY), (uint64_t)1 << 59);

    /* 2^64 units are 2^6: the carry. */
    struct rule_mass m = { UINT64_MAX, 0 };
    rule_mass_add(&m, 1);
    ck_assert_uint_eq(m.lo, 0);
    ck_assert_uint_eq(m.hi, 1);
    ck_assert_double_eq(rule_mass_value(m), 64.0);

    /* Llama 3's vocabulary of weights 1: 128,256 = 2,004 * 64 exactly. */
    const int V = 128256;
    struct rule_mass ones = { 0, 0 };
    for (int i = 0; i < V; i++)
        rule_mass_add(&ones, rule_mass_units(1.0));
    ck_assert_uint_eq(ones.hi, 2004);
    ck_assert_uint_eq(ones.lo, 0);
    ck_assert_double_eq(rule_mass_value(ones), 128256.0);

    /* Random weights: forward, backward and in four interleaved copies (the
     * dense histogram's way) give the same bits; the value agrees with a
     * long double sum to within the double's rounding of about 64,000. */
    struct rule_mass fwd = { 0, 0 }, bwd = { 0, 0 }, four[4] = { { 0, 0 } };
    long double ref_sum = 0.0L;
    for (int i = 0; i < V; i++) {
        double w = philox_uniform(17, (uint32_t)i, 0, 0);
        rule_mass_add(&fwd, rule_mass_units(w));
        rule_mass_add(&four[i % 4], rule_mass_units(w));
        ref_sum += w;
    }
    for (int i = V - 1; i >= 0; i--)
        rule_mass_add(&bwd, rule_mass_units(philox_uniform(17, (uint32_t)i, 0, 0)));
    struct rule_mass merged =
        rule_mass_add2(rule_mass_add2(four[0], four[1]), rule_mass_add2(four[2], four[3]));
    ck_assert_uint_eq(fwd.lo, bwd.lo);
    ck_assert_uint_eq(fwd.hi, bwd.hi);
    ck_assert_uint_eq(fwd.lo, merged.lo);
    ck_assert_uint_eq(fwd.hi, merged.hi);
    ck_assert_uint_gt(fwd.hi, 0);
    ck_assert_double_eq_tol(rule_mass_value(fwd), (double)ref_sum, 1e-11);
}
END_TEST

/* The candidate list's buckets (candidates.h): 1.0's by hand (its key
 * 0xBF800000, top 11 bits 1,532, whose floor is the float under 1.0); every
 * z of 100,000 in [-60, 60] lies above its bucket's floor and below the
 * next bucket's; the count and mass walks by hand. */
START_TEST(test_candidate_buckets)
{
    ck_assert_int_eq(cand_digit(1.0), 1532);
    ck_assert(cand_floor(1532) == (double)nextafterf(1.0f, 0.0f));
    ck_assert(cand_floor(0) == -INFINITY); /* NaN patterns: no finite value */
    for (uint32_t i = 0; i < 100000; i++) {
        double z = (philox_uniform(37, i, 0, 0) - 0.5) * 120.0;
        int b = cand_digit(z);
        ck_assert_msg(cand_floor(b) < z, "z %.17g, bucket %d, floor %.17g", z, b, cand_floor(b));
        ck_assert_msg(b == CAND_BUCKETS - 1 || z < cand_floor(b + 1) || cand_digit(z) == b,
                      "z %.17g", z);
        ck_assert(cand_digit(nextafter(cand_floor(b), -INFINITY)) <= b);
    }
    static uint32_t cnt[CAND_BUCKETS];
    static double w[CAND_BUCKETS];
    cnt[1500] = 3;
    cnt[1400] = 10;
    w[1500] = 0.5;
    w[1400] = 0.01;
    ck_assert_int_eq(cand_count_bucket(cnt, 1), 1500);
    ck_assert_int_eq(cand_count_bucket(cnt, 3), 1500);
    ck_assert_int_eq(cand_count_bucket(cnt, 4), 1400);
    ck_assert_int_eq(cand_count_bucket(cnt, 14), CAND_NONE);
    ck_assert_int_eq(cand_mass_bucket(cnt, w, 1.5), 1500);  /* 3 x 0.5 */
    ck_assert_int_eq(cand_mass_bucket(cnt, w, 1.55), 1400); /* + 10 x 0.01 = 1.6 */
    ck_assert_int_eq(cand_mass_bucket(cnt, w, 1.7), CAND_NONE);
}
END_TEST

/* The many-draw view's integer weights (sampler_rules.h): the shift that
 * keeps V weights under 2^62, the units, and the exact target, by hand and
 * against a 128-bit product. */
START_TEST(test_integer_draw_rule)
{
    ck_assert_int_eq(rule_draw_shift(1), 62);
    ck_assert_int_eq(rule_draw_shift(2), 61);
    ck_assert_int_eq(rule_draw_shift(131072), 45); /* 2^17 */
    ck_assert_int_eq(rule_draw_shift(128256), 45);
    ck_assert_int_eq(rule_draw_shift(131073), 44);
    ck_assert_uint_eq(rule_draw_units(1.0, 45), (uint64_t)1 << 45);
    ck_assert_uint_eq(rule_draw_units(0.5, 45), (uint64_t)1 << 44);
    ck_assert_uint_eq(rule_draw_units(0x1p-46, 45), 1); /* half a unit rounds up */
    ck_assert_uint_eq(rule_draw_units(0x1p-47, 45), 0);
    ck_assert_uint_eq(rule_draw_units(NAN, 45), 0);
    ck_assert_uint_eq(rule_draw_units(1.5, 45), (uint64_t)1 << 45);

    /* Weights 4, 2, 1, 1 (e of 1, 1/2, 1/4, 1/4 at shift 2): u on a
     * boundary goes on to the next token (strictly above). */
    static const uint64_t cum[4] = { 4, 6, 7, 8 };
    ck_assert_int_eq(rule_first_above_units(cum, 4, 0.0), 0);
    ck_assert_int_eq(rule_first_above_units(cum, 4, 0.5 - 0x1p-24), 0);
    ck_assert_int_eq(rule_first_above_units(cum, 4, 0.5), 1);
    ck_assert_int_eq(rule_first_above_units(cum, 4, 0.75), 2);
    ck_assert_int_eq(rule_first_above_units(cum, 4, 0.875), 3);
    ck_assert_int_eq(rule_first_above_units(cum, 4, 1.0 - 0x1p-24), 3);

    /* floor(u * total) for u = k 2^-24 and totals up to 2^62, against the
     * 128-bit product. */
    __extension__ typedef unsigned __int128 u128;
    for (uint32_t i = 0; i < 100000; i++) {
        double u = philox_uniform(31, i, 0, 0);
        uint64_t total = (uint64_t)(philox_uniform(31, i, 1, 0) * 0x1p24) << 38 |
                         (uint64_t)(philox_uniform(31, i, 2, 0) * 0x1p24) << 14 | i % 16384;
        if (i == 0)
            total = (uint64_t)1 << 62;
        u128 exact = ((u128)(uint64_t)(u * 0x1p24) * total) >> 24;
        ck_assert_uint_eq(rule_draw_target(u, total), (uint64_t)exact);
    }
    ck_assert_uint_eq(rule_draw_target(1.0 - 0x1p-24, (uint64_t)1 << 62),
                      ((uint64_t)1 << 62) - ((uint64_t)1 << 38));
}
END_TEST

/* 18 equal logits: nine tokens hold exactly half the mass, so u = 0.5 (seed
 * 40356032 gives it to draw 0 of step 1, row 0) goes strictly past them, to
 * token 9. The step's own draw adds e and finds 9. Many draws on doubles
 * found 8 (nine times 1/18 adds up to 0.5000000000000001), unlike the
 * device, whose integer units found 9; on the integer weights of
 * rule_draw_units the CPU finds 9 as well, as the step and the device do. */
START_TEST(test_many_draws_on_an_exact_boundary)
{
    enum { N = 18 };
    float z[N];
    for (int i = 0; i < N; i++)
        z[i] = 1.0f;
    struct err e;
    ck_assert_int_eq(trace_init(&fast, N, &e), 0);
    struct sampler_settings s;
    sampler_defaults(&s);
    s.seed = 40356032;
    struct sampler_input in = { .vocab_size = N, .logits_f = z, .step = 1 };
    ck_assert_int_eq(sampler_run_fast(&in, &s, &fast, N, &e), 0);
    ck_assert(sampler_u(s.seed, 1, 0, 0) == 0.5);
    ck_assert(fast.choice.u == 0.5);
    ck_assert_int_eq(fast.choice.id, 9);
    int kept[2], plain[2];
    ck_assert_int_eq(draws_ids(&fast, s.seed, 1, 0, 2, kept, plain, &e), 0);
    ck_assert_int_eq(plain[0], 9);
    ck_assert_int_eq(kept[0], 9);
    ck_assert_int_eq(kept[1], plain[1]); /* nothing is cut: the same draws */
}
END_TEST

/* fv_exp_stats's sums run without the exponential's clamps and, where a
 * clamp would have acted, again with them: a row whose chunks hold masked
 * tokens (-inf), tokens more than 708 below the shift (exp gives 0 there),
 * both, or neither must give the sums that fast_exp gives token by token,
 * in the pass's own order (lane k adds tokens k, k + 8, ... and the lanes
 * meet in a fixed tree; the tail after). 2,053 tokens: four chunks of 512
 * and a tail of 5. */
START_TEST(test_exp_stats_with_and_without_clamps)
{
    if (!vec_force(_i))
        return; /* a path this CPU cannot run */
    enum { N = 2053 };
    static double x[N], e[N];
    for (int i = 0; i < N; i++) {
        x[i] = -30.0 * philox_uniform(13, (uint32_t)i, 0, 0);
        if (i >= 512 && i < 1024 && i % 97 == 0)
            x[i] = -INFINITY; /* chunk 1: masked tokens */
        if (i >= 1024 && i < 1536 && i % 89 == 0)
            x[i] = -750.0 - i; /* chunk 2: below the range */
        if (i >= 1536 && i % 83 == 0)
            x[i] = i % 2 ? -INFINITY : -2000.0; /* chunk 3 and the tail: both */
    }
    double offset, sum = fv_exp_stats(x, 0.5, e, N, &offset);
    double ls[8] = { 0 }, lo[8] = { 0 };
    int body = N - N % 8;
    for (int i = 0; i < body; i++) {
        double w = fast_exp(x[i] - 0.5);
        ck_assert_msg(e[i] == w, "token %d: %.17g, fast_exp %.17g", i, e[i], w);
        ls[i % 8] += w;
        lo[i % 8] += w > 0.0 ? w * (x[i] - 0.5) : 0.0;
    }
    double want = ((ls[0] + ls[1]) + (ls[2] + ls[3])) + ((ls[4] + ls[5]) + (ls[6] + ls[7]));
    double want_o = ((lo[0] + lo[1]) + (lo[2] + lo[3])) + ((lo[4] + lo[5]) + (lo[6] + lo[7]));
    for (int i = body; i < N; i++) {
        double w = fast_exp(x[i] - 0.5);
        want += w;
        want_o += w > 0.0 ? w * (x[i] - 0.5) : 0.0;
    }
    ck_assert_msg(sum == want, "sum %.17g, token by token %.17g", sum, want);
    ck_assert_msg(offset == want_o, "offset %.17g, token by token %.17g", offset, want_o);
}
END_TEST

/* fv_divide_exp_stats against the passes it fuses: the quotients and the
 * largest |z| (vm_divide's), and the sums of fv_exp_stats over the
 * quotients, all bit for bit, with masked tokens, tokens far below the
 * rest (the clamps) and a tail shorter than the lanes. */
START_TEST(test_divide_exp_stats_fuses_the_passes)
{
    if (!vec_force(_i))
        return; /* a path this CPU cannot run */
    enum { N = 2053 };
    static double src[N], z[N], want[N];
    for (int i = 0; i < N; i++) {
        src[i] = 6.0 * normal(17, (uint32_t)i);
        if (i % 211 == 5)
            src[i] = -INFINITY;
        if (i >= 1024 && i < 1536 && i % 89 == 0)
            src[i] = -900.0 - i;
    }
    src[700] = -12.5; /* the largest |z| is a negative one */
    src[701] = -12.5 - 1e-9;
    static const double T[] = { 0.8, 1.7, 0.01 };
    for (int k = 0; k < 3; k++) {
        memcpy(want, src, sizeof want);
        double want_zmax = vm_divide(want, T[k], N);
        double max = vm_largest(want, N), want_off, zmax, off;
        double want_sum = fv_exp_stats(want, max, NULL, N, &want_off);
        double sum = fv_divide_exp_stats(src, z, T[k], max, N, &off, &zmax);
        ck_assert_msg(memcmp(z, want, sizeof z) == 0, "T %g: the quotients differ", T[k]);
        ck_assert_msg(zmax == want_zmax, "T %g: largest |z| %.17g, %.17g", T[k], zmax, want_zmax);
        ck_assert_msg(sum == want_sum && off == want_off, "T %g: sums %.17g %.17g, %.17g %.17g",
                      T[k], sum, off, want_sum, want_off);
    }
}
END_TEST

/* fv_load against the plain loops it fuses: z' = (logit + shift) / t and
 * each block's maximum (vm_block_max) the same bits, from the float row and
 * the double one, over rows whose blocks hold ties of +0 and -0 (which of
 * the two a maximum keeps shows in its bits), with the largest at every
 * position of a block in turn; the marks; and the sums those of
 * fv_exp_stats to rounding (each chunk is summed at its own largest). */
START_TEST(test_load_matches_the_plain_loops)
{
    if (!vec_force(_i))
        return; /* a path this CPU cannot run */
    enum { N = 64 * 37 + 21 };
    static float zf[N];
    static double zd[N], z[N], bm[N / VM_BLOCK + 1], want[N / VM_BLOCK + 1], q[N];
    static uint8_t mark[N];
    static const double T[] = { 1.0, 0.8, 3.0 };
    for (int trial = 0; trial < 12; trial++) {
        for (int i = 0; i < N; i++) {
            double u = philox_uniform(31, (uint32_t)i, (uint32_t)trial, 0);
            zf[i] = u < 0.3 ? 0.0f : u < 0.6 ? -0.0f : (float)(-4.0 * u);
        }
        for (int b = 0; b < N / VM_BLOCK; b++) /* a block's largest, at (b + trial) % 64 */
            zf[b * VM_BLOCK + (b + trial) % VM_BLOCK] = (float)(trial % 3) * 0.25f;
        zf[N - 2] = -INFINITY; /* a mask in the tail */
        for (int i = 0; i < N; i++)
            zd[i] = zf[i];
        double t = T[trial % 3], shift = trial % 2 ? -0.0 : 0.0;
        for (int i = 0; i < N; i++)
            q[i] = (zd[i] + shift) / t;
        vm_block_max(q, N, want);
        for (int from_float = 0; from_float < 2; from_float++) {
            struct fv_load ld = { .n = N,
                                  .shift = shift,
                                  .t = t,
                                  .mark = mark,
                                  .block_max = bm,
                                  .kept = 0,
                                  .masked = 7,
                                  .sums = 1 };
            ck_assert_int_eq(fv_load(from_float ? zf : NULL, from_float ? NULL : zd, z, &ld), 0);
            ck_assert_msg(memcmp(z, q, sizeof z) == 0, "trial %d: z' differs", trial);
            ck_assert_msg(memcmp(bm, want, sizeof bm) == 0, "trial %d: a block's maximum differs",
                          trial);
            for (int i = 0; i < N; i++)
                ck_assert_int_eq(mark[i], i == N - 2 ? 7 : 0);
            ck_assert_int_eq(ld.n_kept, N - 1);
            double offset, sum = fv_exp_stats(q, ld.max, NULL, N, &offset);
            ck_assert_double_eq_tol(ld.sum, sum, 1e-14 * sum);
            ck_assert_double_eq_tol(ld.offset, offset, 1e-13 * fabs(offset));
        }
    }
}
END_TEST

/* The two searches over the blocks' maxima (vecmath.h) against the loops
 * they replace: the first at or above a bar (and strictly above) from each
 * start, with the hit in every lane and in the tail; and the largest as
 * the running "x > m ? x : m" keeps it, bit for bit -- a NaN passed over,
 * and of +0 and -0 the first, wherever the two fall. */
START_TEST(test_block_searches)
{
    if (!vec_force(_i))
        return; /* a path this CPU cannot run */
    enum { N = 8 * 9 + 5 };
    static double x[N];
    for (int at = 0; at < N; at++) {
        for (int i = 0; i < N; i++)
            x[i] = -1.0 - (i % 7);
        x[at] = 0.5;
        for (int from = 0; from <= N; from += 3) {
            ck_assert_int_eq(vm_first_at_least(x, from, N, 0.5, 0), from <= at ? at : N);
            ck_assert_int_eq(vm_first_at_least(x, from, N, 0.5, 1), N);
            ck_assert_int_eq(vm_first_at_least(x, from, N, -1.0, 1), from <= at ? at : N);
        }
        ck_assert_double_eq(vm_largest(x, N), 0.5);
    }
    for (int a = 0; a < N; a += 5)
        for (int b = 0; b < N; b += 7) {
            if (a == b)
                continue;
            for (int i = 0; i < N; i++)
                x[i] = i % 11 == 3 ? NAN : -2.0;
            x[a] = -0.0;
            x[b] = 0.0;
            double m = -INFINITY;
            for (int i = 0; i < N; i++)
                m = x[i] > m ? x[i] : m;
            double got = vm_largest(x, N);
            ck_assert_msg(memcmp(&got, &m, sizeof m) == 0, "-0 at %d, +0 at %d: %g", a, b, got);
        }
    for (int i = 0; i < N; i++)
        x[i] = NAN;
    ck_assert(vm_largest(x, N) == -INFINITY);
    ck_assert(vm_largest(x, 0) == -INFINITY);
}
END_TEST

/* Min-p's bar (sampler_rules.h): the smallest double d with e^d >= min_p,
 * so that "z - max >= bar" is the test e^(z - max) >= min_p itself. Checked
 * at both neighbours of the bar, and token by token over 4,001 doubles
 * around it (every d there: the old test and the new agree), for min_p
 * from 1 down to a subnormal. */
START_TEST(test_min_p_bar)
{
    static const double MIN_P[] = { 1.0, 0.5, 0.1, 0.05, 0.01, 1.0 / 3.0, 1e-5, 1e-300, 5e-320 };
    for (size_t k = 0; k < sizeof MIN_P / sizeof MIN_P[0]; k++) {
        double mp = MIN_P[k], bar = rule_min_p_bar(mp);
        ck_assert_msg(exp(bar) >= mp, "min_p %g: e^bar %.17g", mp, exp(bar));
        ck_assert_msg(exp(nextafter(bar, -INFINITY)) < mp, "min_p %g: bar %.17g not the least", mp,
                      bar);
        double d = bar;
        for (int j = 0; j < 2000; j++)
            d = nextafter(d, -INFINITY);
        for (int j = 0; j <= 4000; j++, d = nextafter(d, INFINITY))
            ck_assert_msg((exp(d) >= mp) == rule_min_p_keeps(d, 0.0, bar),
                          "min_p %g, d %.17g: e^d %.17g, bar %.17g", mp, d, exp(d), bar);
    }
}
END_TEST

Suite *suite_fast(void)
{
    Suite *s = suite_create("fast");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, NULL, teardown);
    tcase_add_test(core, test_fast_exp_is_within_one_ulp);
    tcase_add_loop_test(core, test_exp_stats_with_and_without_clamps, 0,
                        VEC_N_PATHS); /* on every path */
    tcase_add_loop_test(core, test_load_matches_the_plain_loops, 0,
                        VEC_N_PATHS); /* on every path */
    tcase_add_loop_test(core, test_divide_exp_stats_fuses_the_passes, 0,
                        VEC_N_PATHS);                               /* on every path */
    tcase_add_loop_test(core, test_block_searches, 0, VEC_N_PATHS); /* on every path */
    tcase_add_test(core, test_min_p_bar);
    tcase_add_test(core, test_random_rows_match_the_reference);
    tcase_add_test(core, test_large_k_takes_the_radix_descent);
    tcase_add_test(core, test_fixed_point_mass);
    tcase_add_test(core, test_integer_draw_rule);
    tcase_add_test(core, test_candidate_buckets);
    tcase_add_test(core, test_many_draws_on_an_exact_boundary);
    tcase_add_test(core, test_real_size_row);
    tcase_add_test(core, test_p_max_left_for_later);
    tcase_add_test(core, test_float_input);
    tcase_add_test(core, test_float_rows_load_as_doubles);
    tcase_set_timeout(core, 120);
    suite_add_tcase(s, core);
    return s;
}
