/* sampler_fast.c - the sampling chain in O(V), and the specification of the
 * CUDA kernels (DESIGN.md section 3).
 *
 * The semantics are those of sampler.c, token for token; only the way to
 * them differs. Nothing sorts the vocabulary:
 *
 *  - Value stages (penalties, temperature) are element-wise: dense loops over
 *    z', except the penalties, which touch only the tokens of the window.
 *  - The k-th token (top-k) and the top rows for the screen come from a heap
 *    of the best k seen so far: one pass, and a swap only when a token beats
 *    the worst of the heap.
 *  - The token where the cumulative probability reaches p (top-p), and the
 *    token u lands on, come from a radix descent: a histogram of the kept
 *    tokens by the top 11 bits of an order-keeping key of z' (counts and
 *    masses e^(z' - max)), a walk down the buckets to the one that holds the
 *    answer, the same within it on the next 11 bits, and so on; a bucket of
 *    at most SMALL_SET tokens is sorted outright. Keys come from z' rounded
 *    to float, which never reverses an order, so a higher bucket holds larger
 *    z'; ties in a key are settled by the exact z' and the id in that sort.
 *  - Min-p compares each kept token with a bar: no order is needed at all.
 *
 * The kept tokens are a list of ids, built at the first cut, so that once a
 * stage has cut the vocabulary to a few tokens the later ones touch only
 * those. The row is read once (fast_vec.c: z', marks, blocks and, where the
 * chain allows, the temperature and the exponentials' sums), and per-token
 * exponentials are stored only where a stage needs them all (trace_e gives
 * any token's after the run).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fast_int.h"
#include "core/fast_vec.h"
#include "core/fastexp.h"
#include "core/philox.h"
#include "core/vecmath.h"

/* A kept token removed by stage st: its mass added now, once z' is final,
 * else the token listed for the end (statistics). */
void fast_drop(struct fast *f, int i, int st)
{
    if (f->e_final)
        f->removed_mass[1 + st] += fast_e(f, i); /* while i is still marked kept */
    else if (f->dropped)
        f->dropped[f->n_dropped++] = i;
    else
        f->unlisted = 1;
    f->mark[i] = (uint8_t)(1 + st);
}

/* After a first cut made in a dense pass: k survivors listed, and the mass
 * the cut removed is what the kept total lost (before: that total). When z'
 * changes later, the stage is remembered instead, with room to list what
 * later cuts remove (without it, statistics falls back to a pass). */
static void first_cut_done(struct fast *f, int k, double before, int st)
{
    f->n_alive = k;
    f->all_alive = 0;
    if (f->e_final) {
        fast_exps_kept(f);
        f->removed_mass[1 + st] += before - fast_alive_mass(f);
    } else {
        f->first_cut = 1 + st;
        f->dropped = malloc(((size_t)k + 1) * sizeof *f->dropped);
    }
}

/* Removes every kept token ranked after (zc, idc), or with keep_ties every
 * one with z below zc. */
static void cut_after(struct fast *f, double zc, int idc, int keep_ties, enum stage st)
{
    if (f->all_alive) {
        /* The first cut. With nothing masked every mark but the survivors'
         * becomes the stage's at once; else one dense pass keeps the masks. */
        int none_masked = f->n_alive == f->V;
        if (none_masked)
            memset(f->mark, 1 + st, (size_t)f->V);
        else
            vm_cut_marks_on(f->vec, f->z, f->mark, f->V, zc, idc, keep_ties, MARK_KEPT,
                            (uint8_t)(1 + st));
        double before = f->e_final ? f->e_sum : 0.0;
        /* List the survivors: a block whose largest z is below the cut holds none. */
        fast_blocks(f);
        int k = 0, blocks = fast_n_blocks(f);
        for (int b = 0; (b = vm_first_at_least_on(f->vec, f->block_max, b, blocks, zc, 0)) < blocks;
             b++) {
            int hi = fast_block_end(f, b);
            if (!none_masked) {
                k += vm_collect(f->mark, b * VM_BLOCK, hi, MARK_KEPT, f->alive + k);
                continue;
            }
            for (int i = b * VM_BLOCK; i < hi; i++)
                if (keep_ties ? f->z[i] >= zc : !rule_ranks_before(zc, idc, f->z[i], i)) {
                    f->mark[i] = MARK_KEPT;
                    f->alive[k++] = i;
                }
        }
        first_cut_done(f, k, before, st);
        return;
    }
    int k = 0;
    for (int j = 0; j < f->n_alive; j++) {
        int i = f->alive[j];
        if (keep_ties ? f->z[i] >= zc : !rule_ranks_before(zc, idc, f->z[i], i))
            f->alive[k++] = i;
        else
            fast_drop(f, i, st);
    }
    f->n_alive = k;
}

/* z / T; T = 0 keeps only the argmax: greedy. */
static int fast_TEMPERATURE(struct fast *f, struct stage_report *rep)
{
    double T = f->s->temperature;
    if (f->s->dynatemp_range > 0.0) { /* sampler.c's step_temperature */
        if (f->n_alive <= 1)
            return 0;
        double h = fast_kept_entropy(f, NULL);
        T = rep->cut = rule_dynamic_t(T, f->s->dynatemp_range, f->s->dynatemp_exp, h, f->n_alive);
    }
    if (T == 0.0) {
        f->t->greedy = 1;
        int best = fast_alive_best(f);
        if (f->all_alive) {
            /* Everything but the argmax goes: a pass over the marks alone. */
            double before = f->e_final ? f->e_sum : 0.0;
            if (f->n_alive == f->V) { /* nothing masked: every mark at once */
                memset(f->mark, 1 + STAGE_TEMPERATURE, (size_t)f->V);
                f->mark[best] = MARK_KEPT;
            } else {
                fv_cut_all_but_on(f->vec, f->mark, f->V, best, MARK_KEPT, 1 + STAGE_TEMPERATURE);
            }
            f->alive[0] = best;
            first_cut_done(f, 1, before, STAGE_TEMPERATURE);
        } else {
            cut_after(f, f->z[best], best, 0, STAGE_TEMPERATURE);
        }
    } else if (T != 1.0 && !f->t_loaded) {
        int keep = f->later && !f->later_kept;
        double zmax = fast_divide(f, T, keep);
        f->later_kept |= keep;
        /* The largest quotient is zmax / T rounded, as the reference's is. */
        if (zmax / T > RULE_Z_LIMIT)
            for (int i = 0; i < f->V; i++)
                if (!rule_z_in_range(f->z[i]) && f->mark[i] != MARK_MASKED) {
                    f->range_error = 1;
                    sampler_t_range_error(f->s, T, i, f->z[i], zmax, f->err);
                    return -1;
                }
    }
    return 0;
}

static int fast_TOP_K(struct fast *f, struct stage_report *rep)
{
    int k = f->s->top_k, keep_ties = f->s->chain.topk_keep_ties;
    int n = f->n_alive;
    if (k <= 0 || k >= n)
        return 0;
    int cut;
    if (k <= HEAP_MAX) {
        if (fast_best_k(f, k, 0) < k)
            return -1; /* out of memory: more than k tokens are kept */
        cut = f->sorted[k - 1].id;
    } else {
        struct pick p = fast_radix_pick(f, NULL, k, 0);
        if (p.id == -2)
            return -1;
        if (p.id < 0)
            return 0;
        cut = p.id;
    }
    rep->cut = exp(f->z[cut] - f->z[fast_alive_best(f)]) * rep->p_max;
    cut_after(f, f->z[cut], cut, keep_ties, STAGE_TOP_K);
    return 0;
}

static int fast_TOP_P(struct fast *f, struct stage_report *rep)
{
    double p = f->s->top_p;
    if (p >= 1.0)
        return 0;
    if (f->all_alive)
        fast_sum(f); /* the probe computes its own exponentials */
    else
        fast_exps_kept(f);
    double sum = fast_alive_mass(f), target = p * sum;
    /* The cumulative probability reaches p where the running mass reaches
     * p * sum. A confident row gets there within its best few tokens: look
     * there first, and descend the radix only when it does not. */
    int n = fast_best_k(f, TOP_P_PROBE, 0);
    if (n < 0)
        return -1;
    double run = 0.0;
    for (int r = 0; r < n; r++) {
        int i = f->sorted[r].id;
        double e = fast_e(f, i);
        if (run + e >= target) {
            rep->cut = (run + e) / sum;
            cut_after(f, f->z[i], i, 0, STAGE_TOP_P);
            return 0;
        }
        run += e;
    }
    fast_exps_kept(f); /* the descent weighs every kept token */
    struct pick pk = fast_radix_pick(f, f->e, target, 0);
    if (pk.id == -2)
        return -1;
    if (pk.id < 0) {
        rep->cut = 1.0; /* rounding kept the total below p: everything stays */
        return 0;
    }
    rep->cut = (pk.weight_before + f->e[pk.id]) / sum;
    cut_after(f, f->z[pk.id], pk.id, 0, STAGE_TOP_P);
    return 0;
}

/* Min-p's first cut: only blocks that reach the bar can hold survivors.
 * With nothing masked every mark becomes min-p's at once and the blocks
 * that reach the bar are looked at token by token; else one dense pass
 * marks every kept token (keeping the masks). */
static void min_p_first_cut(struct fast *f, double max, double bar)
{
    int none_masked = f->n_alive == f->V;
    if (none_masked)
        memset(f->mark, 1 + STAGE_MIN_P, (size_t)f->V);
    else
        vm_bar_marks_on(f->vec, f->z, f->mark, f->V, max, bar, MARK_KEPT, 1 + STAGE_MIN_P);
    double before = f->e_final ? f->e_sum : 0.0;
    fast_blocks(f);
    int k = 0;
    for (int b = 0; b < fast_n_blocks(f); b++) {
        if (!rule_min_p_keeps(f->block_max[b], max, bar))
            continue;
        int hi = fast_block_end(f, b);
        for (int i = b * VM_BLOCK; i < hi; i++) {
            if (none_masked)
                f->mark[i] = rule_min_p_keeps(f->z[i], max, bar) ? MARK_KEPT : 1 + STAGE_MIN_P;
            if (f->mark[i] == MARK_KEPT)
                f->alive[k++] = i;
        }
    }
    first_cut_done(f, k, before, STAGE_MIN_P);
}

static int fast_MIN_P(struct fast *f, struct stage_report *rep)
{
    double min_p = f->s->min_p;
    if (min_p <= 0.0)
        return 0;
    double max = f->z[fast_alive_best(f)];
    rep->cut = min_p * rep->p_max;
    double bar = rule_min_p_bar(min_p);
    if (f->all_alive) {
        min_p_first_cut(f, max, bar);
        return 0;
    }
    int k = 0;
    for (int j = 0; j < f->n_alive; j++) {
        int i = f->alive[j];
        if (rule_min_p_keeps(f->z[i], max, bar))
            f->alive[k++] = i;
        else
            fast_drop(f, i, STAGE_MIN_P);
    }
    f->n_alive = k;
    return 0;
}

static int alloc_work(struct trace *t, struct err *e)
{
    size_t V = (size_t)t->vocab_size;
    if (!t->fz) {
        t->fz = malloc(V * sizeof *t->fz);
        t->fz_pre = malloc(V * sizeof *t->fz_pre);
        t->fe = malloc(V * sizeof *t->fe);
        t->fmark = malloc(V * sizeof *t->fmark);
        t->fkey = malloc(V * sizeof *t->fkey);
        t->fcand = malloc(2 * V * sizeof *t->fcand); /* the kept list, then candidates */
        t->fcount = calloc(V, sizeof *t->fcount);
        t->fblock = malloc((V / VM_BLOCK + 1) * sizeof *t->fblock);
        t->fhist =
            malloc(HIST_COPIES * RADIX_BUCKETS * (sizeof(uint32_t) + sizeof(struct rule_mass)));
    }
    if (!t->fz || !t->fz_pre || !t->fe || !t->fmark || !t->fkey || !t->fcand || !t->fcount ||
        !t->fblock || !t->fhist)
        return err_set(e, ERR_SYSTEM, "out of memory for the fast sampler (%zu tokens)", V);
    return 0;
}

static int check_fast_input(const struct sampler_input *in, const struct sampler_settings *s,
                            const struct trace *t, struct err *e)
{
    if (in->vocab_size <= 0 || in->vocab_size != t->vocab_size)
        return err_set(e, ERR_USAGE, "trace has room for %d tokens, the step has %d", t->vocab_size,
                       in->vocab_size);
    if (!in->logits && !in->logits_f)
        return err_set(e, ERR_USAGE, "no logits given");
    if (sampler_check_setting_ids(in, s, e) < 0)
        return -1;
    return sampler_check_context(in, e);
}

/* The penalty window of sampler.c: generated tokens (or all), the last n. */
static int window_start(const struct sampler_input *in, const struct sampler_settings *s)
{
    return rule_window_start(s->penalty_scope == SCOPE_ALL, in->prompt_len, in->context_len,
                             s->penalty_last_n);
}

/* Penalties on the tokens of the window only: each seen token once, its
 * count made negative once done (and zeroed after the run). */
static int fast_PENALTY(struct fast *f, struct stage_report *rep)
{
    (void)rep;
    const struct sampler_input *in = f->in;
    const struct sampler_settings *s = f->s;
    struct trace *t = f->t;
    int *count = t->fcount;
    int start = window_start(in, s), bad = -1;
    fast_keep_z_before(f);
    for (int j = start; j < in->context_len; j++)
        count[in->context[j]]++;
    for (int j = start; j < in->context_len; j++) {
        int id = in->context[j];
        if (count[id] <= 0)
            continue; /* done already: its count was made negative */
        double before = f->z[id];
        f->z[id] = rule_penalize(f->z[id], count[id], s->repetition_penalty,
                                 s->penalty_formula == PENALTY_LESSON, s->frequency_penalty,
                                 s->presence_penalty);
        t->penalized += f->z[id] != before;
        count[id] = -count[id];
        /* The reference names the lowest id out of range: so do we. */
        if (!rule_z_in_range(f->z[id]) && f->mark[id] != MARK_MASKED && (bad < 0 || id < bad))
            bad = id;
    }
    if (t->penalized)
        fast_penalized_blocks(f, start);
    if (bad >= 0) {
        f->range_error = 1;
        sampler_range_error(s, STAGE_PENALTY, bad, 0.0, f->z[bad], 0.0, f->err);
        return -1;
    }
    return 0;
}

/* Fills rows[0..R) with the R best tokens of all, in rank order. */
static int fill_rows(struct fast *f, struct trace *t, const struct sampler_input *in, int R,
                     double S, double K, const int *count)
{
    int n = R > 0 ? fast_best_k(f, R, 1) : 0;
    if (n < 0)
        return -1;
    for (int i = 0; i < f->V && n < R; i++) /* masked tokens rank last, by id */
        if (f->z[i] == -INFINITY) {
            if (fast_reserve_sorted(f, (size_t)n + 1) < 0)
                return -1;
            f->sorted[n++] = (struct zid){ -INFINITY, i };
        }
    double cum = 0.0, cum_final = 0.0;
    for (int r = 0; r < n; r++) {
        int id = f->sorted[r].id;
        struct trace_row row = { .id = id };
        row.logit = in->logits ? in->logits[id] : (double)in->logits_f[id];
        row.adjusted = f->z[id];
        row.exp = exp(f->z[id]);
        double e = fast_e(f, id);
        row.prob = e / S;
        cum += row.prob;
        row.cum = cum;
        uint8_t m = f->mark[id];
        row.removed_by = m == MARK_KEPT ? TRACE_KEPT : m - 1;
        row.final = m == MARK_KEPT && K > 0 ? e / K : 0.0;
        cum_final += row.final;
        row.cum_final = cum_final;
        row.seen = count[id] < 0 ? -count[id] : count[id];
        t->rows[r] = row;
        t->rank_of[id] = r;
    }
    t->n_rows = n;
    return 0;
}

/* Typical-p as sampler.c's apply_TYPICAL_P: the kept tokens sorted by how
 * near their surprisal, ln K - (z' - e_max), is to the kept distribution's
 * entropy, ln K - sum e (z' - e_max) / K (ties to the lower id), taken
 * until their mass passes p. The one stage that sorts its kept set. */
static int fast_TYPICAL_P(struct fast *f, struct stage_report *rep)
{
    double p = f->s->typical_p;
    if (p >= 1.0)
        return 0;
    double K, h = fast_kept_entropy(f, &K);
    int n = f->n_alive;
    if (fast_reserve_sorted(f, (size_t)n) < 0)
        return -1;
    for (int j = 0; j < n; j++) {
        int i = f->alive[j];
        double surprisal = log(K) - (f->z[i] - f->e_max);
        f->sorted[j] = (struct zid){ -fabs(surprisal - h), i };
    }
    qsort(f->sorted, (size_t)n, sizeof *f->sorted, rule_zid_cmp);
    double cum = 0.0;
    int keep = n;
    for (int r = 0; r < n; r++) {
        cum += f->e[f->sorted[r].id] / K;
        if (cum > p) {
            keep = r + 1;
            break;
        }
    }
    rep->cut = cum;
    for (int r = keep; r < n; r++)
        fast_drop(f, f->sorted[r].id, STAGE_TYPICAL_P);
    fast_compact_alive(f);
    return 0;
}

/* Top-n-sigma as sampler.c's apply_TOP_N_SIGMA: the mean and standard
 * deviation of the kept tokens' z' in two passes, then every token below
 * max - n sd removed in one cut (cut_after with ties kept: z' >= the bar
 * stays). */
static int fast_TOP_N_SIGMA(struct fast *f, struct stage_report *rep)
{
    double n_sd = f->s->top_n_sigma;
    if (n_sd <= 0.0 || f->n_alive <= 1)
        return 0;
    fast_build_alive(f);
    double sum = 0.0, ss = 0.0;
    for (int j = 0; j < f->n_alive; j++)
        sum += f->z[f->alive[j]];
    double mean = sum / f->n_alive;
    for (int j = 0; j < f->n_alive; j++) {
        double d = f->z[f->alive[j]] - mean;
        ss += d * d;
    }
    double bar = f->z[fast_alive_best(f)] - n_sd * sqrt(ss / f->n_alive);
    rep->cut = bar;
    cut_after(f, bar, 0, 1, STAGE_TOP_N_SIGMA);
    return 0;
}

/* The fast path of each stage of sampling.def, by its id: a stage without
 * a function fast_<ID> here does not compile. */
static int (*const FAST[STAGE_COUNT])(struct fast *, struct stage_report *) = {
#define STAGE(id, ...) [STAGE_##id] = fast_##id,
#include "core/sampling.def"
#undef STAGE
};

/* When z' becomes final after a first cut that was remembered while z'
 * still changed (a custom order: a cut, a value stage, a cut), what that
 * cut and the listed later ones removed is added up now, at the final z';
 * the cuts after it add theirs as they go (drop). */
static void settle_first_cut(struct fast *f)
{
    if (!f->first_cut && !f->unlisted)
        return;
    fast_exps_kept(f);
    fast_removed_masses(f, f->e_sum, fast_alive_mass(f));
    f->first_cut = 0;
    f->unlisted = 0;
    free(f->dropped);
    f->dropped = NULL;
    f->n_dropped = 0;
}

/* Runs the stages in the chain's order. Returns 0, or -1 when one ran out
 * of memory. */
static int run_chain(struct fast *f)
{
    const struct sampler_settings *s = f->s;
    struct trace *t = f->t;
    int V = f->V;
    t->greedy = 0;
    t->penalized = 0;
    t->n_stages = s->chain.n;
    for (int c = 0; c < s->chain.n; c++) {
        enum stage st = s->chain.stage[c];
        struct stage_report *rep = &t->stages[c];
        *rep = (struct stage_report){ .stage = st,
                                      .active = stage_active(s, st, V),
                                      .in = f->n_alive };
        int cutting = stage_cuts(s, st);
        if (cutting && rep->active && !f->e_final && !fast_rewrites_after(s, c, V)) {
            /* From here on z' is final: its sums serve every later stage. */
            fast_sum(f);
            f->e_final = 1;
            settle_first_cut(f);
        }
        if (rep->active && cutting && (STAGES[st].flags & SF_CUT))
            fast_stage_p_max(f, c, rep);
        if (FAST[st](f, rep) < 0)
            return -1;
    }
    return 0;
}

/* The run's state on the trace's work areas, z' loaded (load_plan), every
 * finite token kept. Returns 0, or -1 for a NaN or +inf logit or no finite
 * one, or a z' out of range. */
static int start(struct fast *f, const struct sampler_input *in, const struct sampler_settings *s,
                 struct trace *t, struct err *e)
{
    int V = in->vocab_size;
    /* The histograms' memory holds the masses first (their alignment), then the counts. */
    struct rule_mass(*mass)[RADIX_BUCKETS] = t->fhist;
    t->fvec = vec_path();
    *f = (struct fast){ .in = in,
                        .s = s,
                        .t = t,
                        .vec = t->fvec,
                        .V = V,
                        .z = t->fz,
                        .e = t->fe,
                        .mark = t->fmark,
                        .key = t->fkey,
                        .alive = t->fcand,
                        .cand = t->fcand + V,
                        .all_alive = 1,
                        .best_all = -1,
                        .block_max = t->fblock,
                        .hist_mass = mass,
                        .hist_count = (uint32_t(*)[RADIX_BUCKETS])(mass + HIST_COPIES),
                        .err = e };
    t->p_max_later = 0;
    int bad = fast_load(f);
    for (int i = 0; bad && i < V; i++) {
        double z = f->z[i], logit = in->logits ? in->logits[i] : (double)in->logits_f[i];
        if (isnan(z) || z == INFINITY)
            return err_set(e, ERR_USAGE, "logit of token %d is %s", i, isnan(z) ? "NaN" : "+inf");
        if (z != -INFINITY && !rule_z_in_range(z))
            return sampler_range_error(s, SAMPLER_AT_START, i, logit, z, 0.0, e);
    }
    if (!f->n_alive)
        return err_set(e, ERR_USAGE, "no token has a finite logit");
    return 0;
}

/* The final distribution's statistics: the softmax of z' over every token,
 * its entropy, the kept tokens' mass and entropy, what each stage removed. */
static void statistics(struct fast *f, struct trace *t, double *S, double *K)
{
    fast_sum(f);
    if (!f->all_alive)
        fast_exps_kept(f);
    *S = f->e_sum;
    *K = fast_alive_mass(f);
    if (!f->e_final && !f->all_alive)
        fast_removed_masses(f, *S, *K);
    t->max_adjusted = f->e_max;
    t->sum_exp_shifted = *S;
    t->sum_exp = *S * exp(f->e_max);
    /* H = -sum p ln p, with ln p = z - max - ln S: no logarithm per token. */
    t->entropy = log(*S) - f->e_offset / *S;
    double zk = 0.0;
    if (f->all_alive) {
        zk = f->e_offset;
    } else {
        for (int j = 0; j < f->n_alive; j++) {
            int i = f->alive[j];
            if (f->e[i] > 0.0)
                zk += f->e[i] * (f->z[i] - f->e_max);
        }
    }
    t->entropy_final = *K > 0 ? log(*K) - zk / *K : 0.0;
    t->kept_count = f->n_alive;
    t->kept_mass = *K / *S;
    for (int c = 0; c < t->n_stages; c++) {
        int m = 1 + (int)t->stages[c].stage;
        t->stages[c].removed =
            t->stages[c].in - (c + 1 < t->n_stages ? t->stages[c + 1].in : f->n_alive);
        t->stages[c].removed_mass = f->removed_mass[m] / *S;
    }
}

/* The draw: the first kept token, in rank order, whose cumulative kept
 * probability passes u -- where the running kept mass passes u * K. u most
 * often lands among the top rows just filled: walk them first, and descend
 * the radix only for a draw from deeper down. Returns 0, or -1 when out of
 * memory. */
static int draw(struct fast *f, struct trace *t, double K, struct choice *ch)
{
    double u = sampler_u(f->s->seed, f->in->step, f->in->row, 0);
    struct pick p = { -1, 0, 0.0 };
    double run = 0.0;
    int kept_rows = 0;
    for (int r = 0; r < t->n_rows && p.id < 0; r++) {
        int i = t->rows[r].id;
        if (f->mark[i] != MARK_KEPT)
            continue;
        kept_rows++;
        double e = fast_e(f, i);
        if (run + e > u * K)
            p = (struct pick){ i, 0, run };
        run += e;
    }
    if (p.id < 0 && kept_rows < f->n_alive) {
        fast_exps_kept(f); /* the descent weighs every kept token */
        p = fast_radix_pick(f, f->e, u * K, 1);
    }
    if (p.id == -2)
        return -1;
    if (p.id < 0) {
        /* Rounding left the total a hair under u: the last kept token takes it. */
        fast_build_alive(f);
        int last = f->alive[0];
        for (int j = 1; j < f->n_alive; j++)
            if (rule_ranks_before(f->z[last], last, f->z[f->alive[j]], f->alive[j]))
                last = f->alive[j];
        p.id = last;
        p.weight_before = K - fast_e(f, last);
    }
    *ch = (struct choice){ .id = p.id,
                           .sampled = 1,
                           .u = u,
                           .lo = p.weight_before / K,
                           .hi = (p.weight_before + fast_e(f, p.id)) / K };
    return 0;
}

/* The rank of token id among all: its row when it is on one (the rows are
 * the best of all tokens, in rank order), else counted. */
static int choice_rank(const struct fast *f, const struct trace *t, int id)
{
    for (int r = 0; r < t->n_rows; r++)
        if (t->rows[r].id == id)
            return r;
    return vm_count_before_on(f->vec, f->z, f->V, f->z[id], id);
}

int sampler_run_fast(const struct sampler_input *in, const struct sampler_settings *s,
                     struct trace *t, int n_rows, struct err *e)
{
    struct fast f;
    if (check_fast_input(in, s, t, e) < 0 || sampler_check(s, e) < 0 || alloc_work(t, e) < 0)
        return -1;
    trace_take_input(t, in);
    if (start(&f, in, s, t, e) < 0) {
        trace_invalidate(t); /* z' is loaded part way */
        return -1;
    }
    if (run_chain(&f) < 0) {
        free(f.sorted);
        free(f.best_cache);
        free(f.dropped);
        trace_invalidate(t);
        return f.range_error ? -1 : err_set(e, ERR_SYSTEM, "out of memory in the fast sampler");
    }
    if (!chain_has(&s->chain, STAGE_PENALTY)) /* the rows say what the window saw all the same */
        for (int j = window_start(in, s); j < in->context_len; j++)
            t->fcount[in->context[j]]++;
    double S, K;
    statistics(&f, t, &S, &K);
    fast_finish_p_max(&f);
    int V = f.V;
    int rc = fill_rows(&f, t, in, n_rows < V ? n_rows : V, S, K, t->fcount);
    struct choice ch = { 0 };
    if (rc == 0 && t->greedy)
        ch = (struct choice){ .id = fast_alive_best(&f), .sampled = 0, .lo = 0.0, .hi = 1.0 };
    else if (rc == 0)
        rc = draw(&f, t, K, &ch);
    if (rc == 0) {
        ch.rank = choice_rank(&f, t, ch.id);
        t->choice = ch;
    }
    t->fmax_valid = 1;
    /* Counts must be zero for the next run. */
    for (int j = window_start(in, s); j < in->context_len; j++)
        t->fcount[in->context[j]] = 0;
    free(f.sorted);
    free(f.best_cache);
    free(f.dropped);
    if (rc < 0)
        return err_set(e, ERR_SYSTEM, "out of memory in the fast sampler");
    return 0;
}
