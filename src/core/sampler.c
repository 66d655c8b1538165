/* sampler.c - the CPU reference of the sampling chain (DESIGN.md section 2).
 *
 * The chain works on one array z of logits, one value per token, and a
 * removed_by mark per token. Value stages (penalty, temperature) rewrite z for
 * every token; truncating stages (top-k, top-p, min-p, and T = 0) only mark
 * tokens as removed, looking at the softmax of z over the tokens still kept at
 * that point in the chain. Because value stages act token by token, the z of a
 * removed token is still worth showing: it is what that token would have had.
 */
#include "core/sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/philox.h"
#include "core/sampler_rules.h"

static const char *const STAGE_NAMES[STAGE_COUNT] = { "penalty", "temperature", "top-k", "top-p",
                                                      "min-p" };
static const char *const PRESET_NAMES[PRESET_COUNT] = { "lesson", "hf", "vllm", "llamacpp",
                                                        "custom" };

const char *stage_name(enum stage s)
{
    return (s >= 0 && s < STAGE_COUNT) ? STAGE_NAMES[s] : "masked";
}

const char *preset_name(enum preset p)
{
    return (p >= 0 && p < PRESET_COUNT) ? PRESET_NAMES[p] : "?";
}

const char *penalty_formula_name(enum penalty_formula f)
{
    return f == PENALTY_LESSON ? "lesson" : "engine";
}

const char *penalty_scope_name(enum penalty_scope s)
{
    return s == SCOPE_ALL ? "all" : "generated";
}

void chain_preset(struct chain *c, enum preset p)
{
    static const enum stage ORDERS[PRESET_CUSTOM][STAGE_COUNT] = {
        [PRESET_LESSON] = { STAGE_PENALTY, STAGE_TEMPERATURE, STAGE_TOP_K, STAGE_TOP_P,
                            STAGE_MIN_P },
        [PRESET_HF] = { STAGE_PENALTY, STAGE_TEMPERATURE, STAGE_TOP_K, STAGE_TOP_P, STAGE_MIN_P },
        [PRESET_VLLM] = { STAGE_PENALTY, STAGE_TEMPERATURE, STAGE_MIN_P, STAGE_TOP_K, STAGE_TOP_P },
        [PRESET_LLAMACPP] = { STAGE_PENALTY, STAGE_TOP_K, STAGE_TOP_P, STAGE_MIN_P,
                              STAGE_TEMPERATURE },
    };
    if (p < 0 || p >= PRESET_CUSTOM)
        p = PRESET_LESSON;
    c->n = STAGE_COUNT;
    memcpy(c->stage, ORDERS[p], sizeof c->stage);
    c->preset = p;
    c->topk_keep_ties = (p == PRESET_HF);
}

int chain_has(const struct chain *c, enum stage st)
{
    for (int i = 0; i < c->n; i++)
        if (c->stage[i] == st)
            return 1;
    return 0;
}

void sampler_defaults(struct sampler_settings *s)
{
    memset(s, 0, sizeof *s);
    s->temperature = 1.0;
    s->top_k = 0;
    s->top_p = 1.0;
    s->min_p = 0.0;
    s->repetition_penalty = 1.0;
    s->penalty_formula = PENALTY_ENGINE;
    s->penalty_scope = SCOPE_GENERATED;
    s->penalty_last_n = 0;
    s->seed = 1; /* its first u, 0.672, is an ordinary draw (seed 0's is 0.972, deep in the tail) */
    chain_preset(&s->chain, PRESET_LESSON);
}

int sampler_check(const struct sampler_settings *s, struct err *e)
{
    if (!(s->temperature >= 0.0) || !isfinite(s->temperature))
        return err_set(e, ERR_USAGE, "temperature %g is out of range (must be 0 or more)",
                       s->temperature);
    if (s->top_k < 0)
        return err_set(e, ERR_USAGE, "top-k %d is out of range (must be 0 or more)", s->top_k);
    if (!(s->top_p > 0.0 && s->top_p <= 1.0))
        return err_set(e, ERR_USAGE, "top-p %g is out of range (must be in (0, 1])", s->top_p);
    if (!(s->min_p >= 0.0 && s->min_p <= 1.0))
        return err_set(e, ERR_USAGE, "min-p %g is out of range (must be in [0, 1])", s->min_p);
    if (!(s->repetition_penalty > 0.0) || !isfinite(s->repetition_penalty))
        return err_set(e, ERR_USAGE, "repetition-penalty %g is out of range (must be more than 0)",
                       s->repetition_penalty);
    if (s->penalty_last_n < 0)
        return err_set(e, ERR_USAGE, "penalty-last-n %d is out of range (must be 0 or more)",
                       s->penalty_last_n);
    if (!isfinite(s->presence_penalty))
        return err_set(e, ERR_USAGE, "presence-penalty must be a finite number");
    if (!isfinite(s->frequency_penalty))
        return err_set(e, ERR_USAGE, "frequency-penalty must be a finite number");
    if (!isfinite(s->shift))
        return err_set(e, ERR_USAGE, "shift must be a finite number");
    if (s->chain.n < 0 || s->chain.n > STAGE_COUNT)
        return err_set(e, ERR_USAGE, "order has %d stages (at most %d)", s->chain.n, STAGE_COUNT);
    int used[STAGE_COUNT] = { 0 };
    for (int i = 0; i < s->chain.n; i++) {
        enum stage st = s->chain.stage[i];
        if (st < 0 || st >= STAGE_COUNT)
            return err_set(e, ERR_USAGE, "order has an unknown stage");
        if (used[st]++)
            return err_set(e, ERR_USAGE, "order names %s twice", stage_name(st));
    }
    return 0;
}

int stage_active(const struct sampler_settings *s, enum stage st, int vocab_size)
{
    switch (st) {
    case STAGE_PENALTY:
        return s->repetition_penalty != 1.0 || s->presence_penalty != 0.0 ||
               s->frequency_penalty != 0.0;
    case STAGE_TEMPERATURE:
        return s->temperature != 1.0;
    case STAGE_TOP_K:
        return s->top_k > 0 && s->top_k < vocab_size;
    case STAGE_TOP_P:
        return s->top_p < 1.0;
    case STAGE_MIN_P:
        return s->min_p > 0.0;
    case STAGE_COUNT:
        break;
    }
    return 0;
}

int trace_init(struct trace *t, int vocab_size, struct err *e)
{
    memset(t, 0, sizeof *t);
    if (vocab_size <= 0)
        return err_set(e, ERR_USAGE, "vocabulary size %d: must be at least 1", vocab_size);
    size_t n = (size_t)vocab_size;
    t->rows = calloc(n, sizeof *t->rows);
    t->rank_of = calloc(n, sizeof *t->rank_of);
    t->work_z = calloc(n, sizeof *t->work_z);
    t->work_count = calloc(n, sizeof *t->work_count);
    t->work_order = calloc(n, sizeof *t->work_order);
    t->work_rows = calloc(n, sizeof *t->work_rows);
    if (!t->rows || !t->rank_of || !t->work_z || !t->work_count || !t->work_order ||
        !t->work_rows) {
        trace_free(t);
        return err_set(e, ERR_SYSTEM, "out of memory for a trace of %d tokens", vocab_size);
    }
    t->vocab_size = vocab_size;
    return 0;
}

void trace_free(struct trace *t)
{
    free(t->rows);
    free(t->rank_of);
    free(t->work_z);
    free(t->work_count);
    free(t->work_order);
    free(t->work_rows);
    free(t->fz);
    free(t->fe);
    free(t->fmark);
    free(t->fkey);
    free(t->fcand);
    free(t->fcount);
    free(t->fblock);
    memset(t, 0, sizeof *t);
}

int sampler_check_context(const struct sampler_input *in, struct err *e)
{
    if (in->context_len > 0 && !in->context)
        return err_set(e, ERR_USAGE, "a context of %d tokens, but no ids", in->context_len);
    if (in->context_len < 0 || in->prompt_len < 0 || in->prompt_len > in->context_len)
        return err_set(e, ERR_USAGE, "prompt of %d tokens in a context of %d", in->prompt_len,
                       in->context_len);
    for (int i = 0; i < in->context_len; i++)
        if (in->context[i] < 0 || in->context[i] >= in->vocab_size)
            return err_set(e, ERR_USAGE, "context token %d is not in the vocabulary (0..%d)",
                           in->context[i], in->vocab_size - 1);
    return 0;
}

double sampler_u(uint64_t seed, uint32_t step, uint32_t row, uint32_t draw)
{
    return philox_uniform(seed, step, row, draw);
}

/* Counts how often each token occurs in the penalty window: the generated
 * tokens (or the whole context), and of those only the last n when n > 0. */
static void count_window(const struct sampler_input *in, const struct sampler_settings *s,
                         int *count)
{
    memset(count, 0, (size_t)in->vocab_size * sizeof *count);
    int start = rule_window_start(s->penalty_scope == SCOPE_ALL, in->prompt_len, in->context_len,
                                  s->penalty_last_n);
    for (int i = start; i < in->context_len; i++)
        count[in->context[i]]++;
}

/* Penalties (sampler_rules.h) on every seen token. Returns how many changed. */
static int apply_penalties(double *z, const int *count, int vocab_size,
                           const struct sampler_settings *s)
{
    int changed = 0;
    for (int i = 0; i < vocab_size; i++) {
        if (count[i] == 0)
            continue;
        double before = z[i];
        z[i] = rule_penalize(z[i], count[i], s->repetition_penalty,
                             s->penalty_formula == PENALTY_LESSON, s->frequency_penalty,
                             s->presence_penalty);
        if (z[i] != before)
            changed++;
    }
    return changed;
}

/* Fills order[0..n) with the tokens not yet removed, best first. */
static int sorted_alive(const double *z, const struct trace_row *mark, int vocab_size,
                        struct zid *order)
{
    int n = 0;
    for (int i = 0; i < vocab_size; i++)
        if (mark[i].removed_by == TRACE_KEPT)
            order[n++] = (struct zid){ z[i], i };
    qsort(order, (size_t)n, sizeof *order, rule_zid_cmp);
    return n;
}

/* The sum of e^(z - max) over the first n of order: softmax's denominator. */
static double shifted_sum(const struct zid *order, int n)
{
    double sum = 0.0;
    for (int r = 0; r < n; r++)
        sum += exp(order[r].z - order[0].z);
    return sum;
}

static void remove_token(struct trace_row *mark, int id, enum stage st)
{
    mark[id].removed_by = (int)st;
}

/* T = 0: keep only the argmax (ties to the lower id). */
static void stage_greedy(const struct zid *order, int n, struct trace_row *mark)
{
    for (int r = 1; r < n; r++)
        remove_token(mark, order[r].id, STAGE_TEMPERATURE);
}

/* Top-k: keep exactly k in rank order; with keep_ties also every token whose
 * z equals that of the k-th (as HF's warper compares values, not ranks). */
static void stage_top_k(const struct zid *order, int n, int k, int keep_ties,
                        struct trace_row *mark, struct stage_report *rep)
{
    if (k <= 0 || k >= n)
        return;
    double kth = order[k - 1].z;
    rep->cut = exp(kth - order[0].z) / shifted_sum(order, n);
    for (int r = k; r < n; r++)
        if (!(keep_ties && order[r].z == kth))
            remove_token(mark, order[r].id, STAGE_TOP_K);
}

/* Top-p: the shortest prefix whose cumulative probability, summed in double,
 * reaches p; never fewer than one token. Probabilities are the softmax over
 * the tokens still kept. */
static void stage_top_p(const struct zid *order, int n, double p, struct trace_row *mark,
                        struct stage_report *rep)
{
    if (p >= 1.0 || n == 0)
        return;
    double max = order[0].z, sum = shifted_sum(order, n);
    double cum = 0.0;
    int keep = n;
    for (int r = 0; r < n; r++) {
        cum += exp(order[r].z - max) / sum;
        if (cum >= p) {
            keep = r + 1;
            break;
        }
    }
    rep->cut = cum;
    for (int r = keep; r < n; r++)
        remove_token(mark, order[r].id, STAGE_TOP_P);
}

/* Min-p: keep p_i >= min_p * p_max. The normalizer cancels, so the test is
 * e^(z_i - z_max) >= min_p, which needs no sum. */
static void stage_min_p(const struct zid *order, int n, double min_p, struct trace_row *mark,
                        struct stage_report *rep)
{
    if (min_p <= 0.0 || n == 0)
        return;
    double max = order[0].z;
    rep->cut = min_p * rep->p_max;
    for (int r = 1; r < n; r++)
        if (!rule_min_p_keeps(order[r].z, max, min_p))
            remove_token(mark, order[r].id, STAGE_MIN_P);
}

static int check_input(const struct sampler_input *in, const struct trace *t, struct err *e)
{
    if (in->vocab_size <= 0 || in->vocab_size != t->vocab_size)
        return err_set(e, ERR_USAGE, "trace has room for %d tokens, the step has %d", t->vocab_size,
                       in->vocab_size);
    int finite = 0;
    for (int i = 0; i < in->vocab_size; i++) {
        double z = in->logits[i];
        if (isnan(z))
            return err_set(e, ERR_USAGE, "logit of token %d is NaN", i);
        if (z == INFINITY)
            return err_set(e, ERR_USAGE, "logit of token %d is +inf", i);
        finite += isfinite(z) != 0;
    }
    if (!finite)
        return err_set(e, ERR_USAGE, "no token has a finite logit");
    return sampler_check_context(in, e);
}

/* Runs one stage over z and the marks; fills its report's removed count. */
static void run_stage(enum stage st, const struct sampler_settings *s, int vocab_size, double *z,
                      const int *count, struct trace *t, struct stage_report *rep)
{
    struct trace_row *mark = t->rows; /* indexed by id until the final sort */
    struct zid *order = t->work_order;
    int n = sorted_alive(z, mark, vocab_size, order);
    rep->in = n;
    rep->p_max = n > 0 ? 1.0 / shifted_sum(order, n) : 0.0;
    switch (st) {
    case STAGE_PENALTY:
        t->penalized = apply_penalties(z, count, vocab_size, s);
        break;
    case STAGE_TEMPERATURE:
        if (s->temperature == 0.0) {
            t->greedy = 1;
            stage_greedy(order, n, mark);
        } else if (s->temperature != 1.0) {
            for (int i = 0; i < vocab_size; i++)
                z[i] /= s->temperature;
        }
        break;
    case STAGE_TOP_K:
        stage_top_k(order, n, s->top_k, s->chain.topk_keep_ties, mark, rep);
        break;
    case STAGE_TOP_P:
        stage_top_p(order, n, s->top_p, mark, rep);
        break;
    case STAGE_MIN_P:
        stage_min_p(order, n, s->min_p, mark, rep);
        break;
    case STAGE_COUNT:
        break;
    }
}

int sampler_run(const struct sampler_input *in, const struct sampler_settings *s, struct trace *t,
                struct err *e)
{
    if (check_input(in, t, e) < 0 || sampler_check(s, e) < 0)
        return -1;
    int V = in->vocab_size;
    double *z = t->work_z;
    struct trace_row *rows = t->rows;

    /* While the chain runs, rows[] is indexed by token id. */
    for (int i = 0; i < V; i++) {
        z[i] = in->logits[i] + s->shift;
        rows[i] = (struct trace_row){ .id = i, .removed_by = TRACE_KEPT, .logit = in->logits[i] };
        if (!isfinite(z[i]))
            rows[i].removed_by = TRACE_MASKED;
    }
    count_window(in, s, t->work_count);
    for (int i = 0; i < V; i++)
        rows[i].seen = t->work_count[i];

    t->greedy = 0;
    t->penalized = 0;
    t->n_stages = s->chain.n;
    for (int c = 0; c < s->chain.n; c++) {
        enum stage st = s->chain.stage[c];
        t->stages[c] = (struct stage_report){ .stage = st, .active = stage_active(s, st, V) };
        run_stage(st, s, V, z, t->work_count, t, &t->stages[c]);
    }

    /* Rank every token by its final z and fill the columns. */
    struct zid *order = t->work_order;
    for (int i = 0; i < V; i++)
        order[i] = (struct zid){ z[i], i };
    qsort(order, (size_t)V, sizeof *order, rule_zid_cmp);
    double max = order[0].z; /* finite: at least one logit is */
    double sum_shifted = 0.0, sum_exp = 0.0, kept_shifted = 0.0;
    for (int i = 0; i < V; i++) {
        double w = exp(z[i] - max);
        sum_shifted += w;
        sum_exp += exp(z[i]);
        if (rows[i].removed_by == TRACE_KEPT)
            kept_shifted += w;
    }
    /* Reorder rows by rank; rows[] becomes indexed by rank from here on. */
    struct trace_row *by_id = t->work_rows;
    memcpy(by_id, rows, (size_t)V * sizeof *by_id);
    double cum = 0.0, cum_final = 0.0, h = 0.0, h_final = 0.0, kept_mass = 0.0;
    int kept = 0;
    for (int r = 0; r < V; r++) {
        int id = order[r].id;
        struct trace_row row = by_id[id];
        double w = exp(z[id] - max);
        row.adjusted = z[id];
        row.exp = exp(z[id]);
        row.prob = w / sum_shifted;
        cum += row.prob;
        row.cum = cum;
        if (row.prob > 0.0)
            h -= row.prob * log(row.prob);
        if (row.removed_by == TRACE_KEPT) {
            row.final = w / kept_shifted;
            kept++;
            kept_mass += row.prob;
            if (row.final > 0.0)
                h_final -= row.final * log(row.final);
        } else {
            row.final = 0.0;
            int st = row.removed_by;
            for (int c = 0; c < t->n_stages; c++)
                if ((int)t->stages[c].stage == st) {
                    t->stages[c].removed++;
                    t->stages[c].removed_mass += row.prob;
                }
        }
        cum_final += row.final;
        row.cum_final = cum_final;
        rows[r] = row;
        t->rank_of[id] = r;
    }
    t->max_adjusted = max;
    t->sum_exp = sum_exp;
    t->sum_exp_shifted = sum_shifted;
    t->entropy = h;
    t->entropy_final = h_final;
    t->kept_count = kept;
    t->kept_mass = kept_mass;
    t->n_rows = V;

    if (t->greedy) {
        /* The only kept token is the argmax; no random number is used. */
        t->choice = (struct choice){
            .id = rows[0].id, .rank = 0, .sampled = 0, .u = 0.0, .lo = 0.0, .hi = 1.0
        };
        for (int r = 0; r < V; r++)
            if (rows[r].removed_by == TRACE_KEPT) {
                t->choice.id = rows[r].id;
                t->choice.rank = r;
                break;
            }
    } else {
        sampler_draw(t, sampler_u(s->seed, in->step, in->row, 0), &t->choice);
    }
    return 0;
}

int sampler_draw(const struct trace *t, double u, struct choice *c)
{
    int last = -1;
    double lo = 0.0;
    for (int r = 0; r < t->vocab_size; r++) {
        const struct trace_row *row = &t->rows[r];
        if (row->removed_by != TRACE_KEPT || row->final <= 0.0)
            continue;
        last = r;
        if (row->cum_final > u) {
            *c = (struct choice){
                .id = row->id, .rank = r, .sampled = 1, .u = u, .lo = lo, .hi = row->cum_final
            };
            return r;
        }
        lo = row->cum_final;
    }
    /* Rounding left the total a hair under u: the last kept token takes it. */
    if (last < 0)
        last = 0;
    *c = (struct choice){ .id = t->rows[last].id,
                          .rank = last,
                          .sampled = 1,
                          .u = u,
                          .lo = last > 0 ? t->rows[last - 1].cum_final : 0.0,
                          .hi = 1.0 };
    return last;
}
