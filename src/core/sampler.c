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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vecpath.h"
#include "core/draws.h"
#include "core/philox.h"
#include "core/ref_int.h"
#include "core/sampler_rules.h"
#include "core/settings.h"

const char *penalty_formula_name(enum penalty_formula f)
{
    return f == PENALTY_LESSON ? "lesson" : "engine";
}

const char *penalty_scope_name(enum penalty_scope s)
{
    return s == SCOPE_ALL ? "all" : "generated";
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
    t->dwork = calloc(1, sizeof *t->dwork);
    if (!t->rows || !t->rank_of || !t->work_z || !t->work_count || !t->work_order ||
        !t->work_rows || !t->dwork) {
        trace_free(t);
        return err_set(e, ERR_SYSTEM, "out of memory for a trace of %d tokens", vocab_size);
    }
    t->vocab_size = vocab_size;
    t->fvec = vec_path(); /* until a fast run sets its own */
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
    free(t->fz_pre);
    free(t->fe);
    free(t->fmark);
    free(t->fkey);
    free(t->fcand);
    free(t->fcount);
    free(t->fblock);
    free(t->fhist);
    draws_work_free(t->dwork);
    free(t->dwork);
    memset(t, 0, sizeof *t);
}

/* "becomes 1.95e+31", or "overflows" where the double could not hold it. */
static const char *range_value(double z, char *buf, size_t n)
{
    if (isfinite(z))
        snprintf(buf, n, "becomes %.3g", z);
    else
        snprintf(buf, n, "overflows");
    return buf;
}

/* The active penalty settings with their values, as the options spell them. */
static void penalty_names(const struct sampler_settings *s, char *buf, size_t n)
{
    int len = 0;
    buf[0] = '\0';
    if (s->repetition_penalty != 1.0)
        len += snprintf(buf, n, "repetition-penalty %g", s->repetition_penalty);
    if (s->frequency_penalty != 0.0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, "%sfrequency-penalty %g", len ? ", " : "",
                        s->frequency_penalty);
    if (s->presence_penalty != 0.0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, "%spresence-penalty %g", len ? ", " : "",
                 s->presence_penalty);
}

/* x rounded up to 3 significant digits, so that the figure a message
 * prints is itself enough (x > 0 and finite). */
static double up_to_3_digits(double x)
{
    double unit = pow(10.0, floor(log10(x)) - 2.0);
    double r = ceil(x / unit) * unit;
    return r < x ? nextafter(r, INFINITY) : r;
}

int sampler_t_range_error(const struct sampler_settings *s, double T, int id, double z, double zmax,
                          struct err *e)
{
    char v[48];
    range_value(z, v, sizeof v);
    if (s->dynatemp_range > 0.0) /* T is the step's own: the settings can only move its range */
        return err_set(e, ERR_USAGE,
                       "dynamic temperature %g (temperature %g, dynatemp-range %g): token %d's "
                       "z' / T %s, past the sampler's limit |z'| <= %.0e",
                       T, s->temperature, s->dynatemp_range, id, v, RULE_Z_LIMIT);
    /* |z / T| <= the limit for every token needs T >= zmax / limit. */
    return err_set(e, ERR_USAGE,
                   "temperature %g: token %d's z' / T %s, past the sampler's limit "
                   "|z'| <= %.0e; the smallest temperature for this step is %.3g (0 is greedy)",
                   T, id, v, RULE_Z_LIMIT, up_to_3_digits(zmax / RULE_Z_LIMIT));
}

int sampler_range_error(const struct sampler_settings *s, int where, int id, double logit, double z,
                        double zmax, struct err *e)
{
    char v[48], names[128];
    range_value(z, v, sizeof v);
    if (where == STAGE_TEMPERATURE)
        return sampler_t_range_error(s, s->temperature, id, z, zmax, e);
    if (where == STAGE_PENALTY) {
        penalty_names(s, names, sizeof names);
        return err_set(e, ERR_USAGE, "%s: token %d's z' %s, past the sampler's limit |z'| <= %.0e",
                       names, id, v, RULE_Z_LIMIT);
    }
    if (where >= 0) { /* another value stage: its first setting */
        const struct setting_info *i = setting_of_stage(where);
        return err_set(e, ERR_USAGE,
                       "%s %g: token %d's z' %s, past the sampler's limit |z'| <= %.0e", i->name,
                       setting_number(i, s), id, v, RULE_Z_LIMIT);
    }
    if (!rule_z_in_range(logit))
        return err_set(e, ERR_USAGE,
                       "logit of token %d is %g, past the sampler's limit |z| <= %.0e", id, logit,
                       RULE_Z_LIMIT);
    return err_set(e, ERR_USAGE,
                   "shift %g: token %d's z' %s, past the sampler's limit |z'| <= %.0e", s->shift,
                   id, v, RULE_Z_LIMIT);
}

void trace_invalidate(struct trace *t)
{
    t->n_rows = 0;
    t->kept_count = 0;
    t->kept_mass = 0.0;
    t->greedy = 0;
    t->n_stages = 0;
    t->fmax_valid = 0;
    t->p_max_later = 0;
    t->choice = (struct choice){ .id = 0, .rank = 0 };
    t->grammar_state[0] = '\0';
}

void trace_take_input(struct trace *t, const struct sampler_input *in)
{
    snprintf(t->grammar_state, sizeof t->grammar_state, "%s",
             in->grammar_state ? in->grammar_state : "");
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
    for (int i = 0; i < in->n_end; i++)
        if (!in->end_ids || in->end_ids[i] < 0 || in->end_ids[i] >= in->vocab_size)
            return err_set(e, ERR_USAGE, "end token %d is not in the vocabulary (0..%d)",
                           in->end_ids ? in->end_ids[i] : -1, in->vocab_size - 1);
    return 0;
}

double sampler_u(uint64_t seed, uint32_t step, uint32_t row, uint32_t draw)
{
    return philox_uniform(seed, step, row, draw);
}

double sampler_coin(uint64_t seed, uint32_t step, uint32_t row, enum stage st)
{
    return philox_uniform_word3(seed, step, row, 0, 1u + (uint32_t)st);
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

double ref_shifted_sum(const struct zid *order, int n)
{
    double sum = 0.0;
    for (int r = 0; r < n; r++)
        sum += exp(order[r].z - order[0].z);
    return sum;
}

void ref_remove_from(struct ref_step *c, int keep, enum stage st)
{
    for (int r = keep; r < c->n; r++)
        c->t->rows[c->order[r].id].removed_by = (int)st;
}

/* Penalties (sampler_rules.h) on every seen token; counts how many changed. */
static int apply_PENALTY(struct ref_step *c)
{
    const struct sampler_settings *s = c->s;
    int changed = 0;
    for (int i = 0; i < c->V; i++) {
        if (c->count[i] == 0)
            continue;
        double before = c->z[i];
        c->z[i] = rule_penalize(c->z[i], c->count[i], s->repetition_penalty,
                                s->penalty_formula == PENALTY_LESSON, s->frequency_penalty,
                                s->presence_penalty);
        changed += c->z[i] != before;
        if (!rule_z_in_range(c->z[i]) && c->t->rows[i].removed_by != TRACE_MASKED)
            return sampler_range_error(s, STAGE_PENALTY, i, c->t->rows[i].logit, c->z[i], 0.0,
                                       c->e);
    }
    c->t->penalized += changed;
    return 0;
}

/* The largest |z'| of a token not masked (masked ones are -inf). */
static double largest_magnitude(const struct ref_step *c)
{
    double m = 0.0;
    for (int i = 0; i < c->V; i++)
        if (c->t->rows[i].removed_by != TRACE_MASKED && fabs(c->z[i]) > m)
            m = fabs(c->z[i]);
    return m;
}

/* The temperature of the step: T, or with a dynamic range T's dynamic
 * value for the kept tokens (rule_dynamic_t), which is also the stage's
 * report value; -1 when there is nothing to scale (one kept token, as
 * llama.cpp leaves it). */
static double step_temperature(struct ref_step *c)
{
    const struct sampler_settings *s = c->s;
    if (s->dynatemp_range <= 0.0)
        return s->temperature;
    if (c->n <= 1)
        return -1.0;
    c->rep->cut = rule_dynamic_t(s->temperature, s->dynatemp_range, s->dynatemp_exp,
                                 ref_kept_entropy(c->order, c->n), c->n);
    return c->rep->cut;
}

/* z / T; T = 0 keeps only the argmax (ties to the lower id): greedy. A
 * quotient outside RULE_Z_LIMIT refuses the step, naming the smallest T. */
static int apply_TEMPERATURE(struct ref_step *c)
{
    double T = step_temperature(c);
    if (T == 0.0) {
        c->t->greedy = 1;
        ref_remove_from(c, 1, STAGE_TEMPERATURE);
    } else if (T > 0.0 && T != 1.0) {
        double zmax = largest_magnitude(c);
        for (int i = 0; i < c->V; i++)
            c->z[i] /= T;
        for (int i = 0; i < c->V; i++)
            if (!rule_z_in_range(c->z[i]) && c->t->rows[i].removed_by != TRACE_MASKED)
                return sampler_t_range_error(c->s, T, i, c->z[i], zmax, c->e);
    }
    return 0;
}

/* Top-k: keep exactly k in rank order; with keep_ties also every token whose
 * z equals that of the k-th (as HF's warper compares values, not ranks). */
static int apply_TOP_K(struct ref_step *c)
{
    int k = c->s->top_k;
    if (k <= 0 || k >= c->n)
        return 0;
    double kth = c->order[k - 1].z;
    c->rep->cut = exp(kth - c->order[0].z) / ref_shifted_sum(c->order, c->n);
    for (int r = k; r < c->n; r++)
        if (!(c->s->chain.topk_keep_ties && c->order[r].z == kth))
            c->t->rows[c->order[r].id].removed_by = STAGE_TOP_K;
    return 0;
}

/* Top-p: the shortest prefix whose cumulative probability, summed in double,
 * reaches p; never fewer than one token. Probabilities are the softmax over
 * the tokens still kept. */
static int apply_TOP_P(struct ref_step *c)
{
    double p = c->s->top_p;
    if (p >= 1.0 || c->n == 0)
        return 0;
    double max = c->order[0].z, sum = ref_shifted_sum(c->order, c->n);
    double cum = 0.0;
    int keep = c->n;
    for (int r = 0; r < c->n; r++) {
        cum += exp(c->order[r].z - max) / sum;
        if (cum >= p) {
            keep = r + 1;
            break;
        }
    }
    c->rep->cut = cum;
    ref_remove_from(c, keep, STAGE_TOP_P);
    return 0;
}

/* Min-p: keep p_i >= min_p * p_max. The normalizer cancels, so the test is
 * e^(z_i - z_max) >= min_p, which needs no sum (sampler_rules.h: z_i - z_max
 * against a bar found once). */
static int apply_MIN_P(struct ref_step *c)
{
    double min_p = c->s->min_p;
    if (min_p <= 0.0 || c->n == 0)
        return 0;
    double max = c->order[0].z, bar = rule_min_p_bar(min_p);
    c->rep->cut = min_p * c->rep->p_max;
    for (int r = 1; r < c->n; r++)
        if (!rule_min_p_keeps(c->order[r].z, max, bar))
            c->t->rows[c->order[r].id].removed_by = STAGE_MIN_P;
    return 0;
}

/* Typical-p (locally typical sampling, Meister et al. 2022, as llama.cpp's
 * typical sampler): the tokens whose surprisal -ln p is nearest the entropy
 * H of the kept distribution are taken nearest first (ties to the lower
 * id) until their probabilities add up to more than p -- strictly, as
 * llama.cpp's cum_sum > p -- and the rest are removed. Unlike top-p it can
 * remove the most likely token: its surprisal can be far below H. */
static int apply_TYPICAL_P(struct ref_step *c)
{
    double p = c->s->typical_p;
    if (p >= 1.0 || c->n == 0)
        return 0;
    double max = c->order[0].z, sum = ref_shifted_sum(c->order, c->n);
    double h = ref_kept_entropy(c->order, c->n);
    struct zid *near = malloc((size_t)c->n * sizeof *near);
    if (!near)
        return err_set(c->e, ERR_SYSTEM, "out of memory in the sampler (%d tokens)", c->V);
    /* Nearest first: rule_zid_cmp puts the largest -|distance| first. */
    for (int r = 0; r < c->n; r++) {
        double surprisal = log(sum) - (c->order[r].z - max);
        near[r] = (struct zid){ -fabs(surprisal - h), c->order[r].id };
    }
    qsort(near, (size_t)c->n, sizeof *near, rule_zid_cmp);
    double cum = 0.0;
    int keep = c->n;
    for (int r = 0; r < c->n; r++) {
        cum += exp(c->z[near[r].id] - max) / sum;
        if (cum > p) {
            keep = r + 1;
            break;
        }
    }
    c->rep->cut = cum;
    for (int r = keep; r < c->n; r++)
        c->t->rows[near[r].id].removed_by = STAGE_TYPICAL_P;
    free(near);
    return 0;
}

/* Top-n-sigma (Tang et al. 2024, as llama.cpp's top-n-sigma sampler):
 * keep the tokens whose z' is at least max - n sd, the standard deviation
 * taken over the z' of the kept tokens (dividing by their count). Scaling
 * every z' (temperature) scales max and sd alike: the kept set does not
 * depend on T. n = 0 is off, and one token is always kept. */
static int apply_TOP_N_SIGMA(struct ref_step *c)
{
    double n_sd = c->s->top_n_sigma;
    if (n_sd <= 0.0 || c->n <= 1)
        return 0;
    double sum = 0.0, ss = 0.0;
    for (int r = 0; r < c->n; r++)
        sum += c->order[r].z;
    double mean = sum / c->n;
    for (int r = 0; r < c->n; r++)
        ss += (c->order[r].z - mean) * (c->order[r].z - mean);
    double bar = c->order[0].z - n_sd * sqrt(ss / c->n);
    c->rep->cut = bar;
    for (int r = 1; r < c->n; r++)
        if (c->order[r].z < bar)
            c->t->rows[c->order[r].id].removed_by = STAGE_TOP_N_SIGMA;
    return 0;
}

/* The reference of each stage of sampling.def, by its id: a stage without
 * a function apply_<ID> here does not compile. */
static int (*const APPLY[STAGE_COUNT])(struct ref_step *) = {
#define STAGE(id, ...) [STAGE_##id] = apply_##id,
#include "core/sampling.def"
#undef STAGE
};

static int check_input(const struct sampler_input *in, const struct sampler_settings *s,
                       const struct trace *t, struct err *e)
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
        if (z != -INFINITY && !rule_z_in_range(z + s->shift))
            return sampler_range_error(s, SAMPLER_AT_START, i, z, z + s->shift, 0.0, e);
        finite += isfinite(z) != 0;
    }
    if (!finite)
        return err_set(e, ERR_USAGE, "no token has a finite logit");
    if (sampler_check_setting_ids(in, s, e) < 0)
        return -1;
    return sampler_check_context(in, e);
}

/* Every token starts kept (or masked: -inf) with z = logit + shift, and the
 * window's counts; rows[] is indexed by id while the chain runs. */
static void start_rows(const struct sampler_input *in, const struct sampler_settings *s,
                       struct trace *t)
{
    double *z = t->work_z;
    for (int i = 0; i < in->vocab_size; i++) {
        z[i] = in->logits[i] + s->shift;
        t->rows[i] = (struct trace_row){ .id = i,
                                         .removed_by = isfinite(z[i]) ? TRACE_KEPT : TRACE_MASKED,
                                         .logit = in->logits[i] };
    }
    count_window(in, s, t->work_count);
    for (int i = 0; i < in->vocab_size; i++)
        t->rows[i].seen = t->work_count[i];
}

/* Runs the stages in the chain's order, each on the softmax of z' over the
 * tokens still kept at its place. Returns 0, or -1 when a stage failed (out
 * of memory, a z' out of range): e says which. */
static int run_chain(const struct sampler_input *in, const struct sampler_settings *s,
                     struct trace *t, struct err *e)
{
    t->greedy = 0;
    t->penalized = 0;
    t->n_stages = s->chain.n;
    for (int c = 0; c < s->chain.n; c++) {
        enum stage st = s->chain.stage[c];
        struct stage_report *rep = &t->stages[c];
        *rep = (struct stage_report){ .stage = st, .active = stage_active(s, st, in->vocab_size) };
        struct ref_step step = { .in = in,
                                 .s = s,
                                 .V = in->vocab_size,
                                 .z = t->work_z,
                                 .count = t->work_count,
                                 .t = t,
                                 .order = t->work_order,
                                 .rep = rep,
                                 .e = e };
        step.n = sorted_alive(step.z, t->rows, step.V, t->work_order);
        rep->in = step.n;
        rep->p_max = step.n > 0 ? 1.0 / ref_shifted_sum(step.order, step.n) : 0.0;
        if (APPLY[st](&step) < 0)
            return -1;
    }
    return 0;
}

/* A removed token's probability counts against the stage that removed it. */
static void charge_stage(struct trace *t, int stage, double prob)
{
    for (int c = 0; c < t->n_stages; c++)
        if ((int)t->stages[c].stage == stage) {
            t->stages[c].removed++;
            t->stages[c].removed_mass += prob;
        }
}

/* Ranks every token by its final z' and fills the columns and statistics;
 * rows[] is indexed by rank from here on. */
static void rank_rows(struct trace *t)
{
    int V = t->vocab_size;
    const double *z = t->work_z;
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
        if (t->rows[i].removed_by == TRACE_KEPT)
            kept_shifted += w;
    }
    struct trace_row *by_id = t->work_rows;
    memcpy(by_id, t->rows, (size_t)V * sizeof *by_id);
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
            charge_stage(t, row.removed_by, row.prob);
        }
        cum_final += row.final;
        row.cum_final = cum_final;
        t->rows[r] = row;
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
}

int sampler_run(const struct sampler_input *in, const struct sampler_settings *s, struct trace *t,
                struct err *e)
{
    if (sampler_check(s, e) < 0 || check_input(in, s, t, e) < 0)
        return -1;
    t->p_max_later = 0; /* every stage's values are final here */
    trace_take_input(t, in);
    start_rows(in, s, t);
    if (run_chain(in, s, t, e) < 0) {
        trace_invalidate(t);
        return -1;
    }
    rank_rows(t);
    if (!t->greedy) {
        sampler_draw(t, sampler_u(s->seed, in->step, in->row, 0), &t->choice);
        return 0;
    }
    /* The only kept token is the argmax; no random number is used. */
    t->choice = (struct choice){ .id = t->rows[0].id, .rank = 0, .lo = 0.0, .hi = 1.0 };
    for (int r = 0; r < t->vocab_size; r++)
        if (t->rows[r].removed_by == TRACE_KEPT) {
            t->choice.id = t->rows[r].id;
            t->choice.rank = r;
            break;
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
