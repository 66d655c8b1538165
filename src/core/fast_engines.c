/* fast_engines.c - the O(V) path of the stages of sampler_engines.c, with
 * the same kept sets: XTC and the epsilon and eta cutoffs are each one pass
 * over the kept tokens' exponentials, as typical-p's first pass; the
 * n-grams, DRY, minimum tokens, the logit bias and the bad words look only
 * at the few ids they name. */
#include <math.h>
#include <stdlib.h>

#include "core/fast_int.h"

double fast_kept_entropy(struct fast *f, double *mass)
{
    fast_exps_kept(f);
    fast_build_alive(f);
    double K = fast_alive_mass(f), off = 0.0;
    for (int j = 0; j < f->n_alive; j++) {
        int i = f->alive[j];
        if (f->e[i] > 0.0)
            off += f->e[i] * (f->z[i] - f->e_max);
    }
    if (mass)
        *mass = K;
    return log(K) - off / K; /* -sum q ln q with q = e / K */
}

void fast_compact_alive(struct fast *f)
{
    int k = 0;
    for (int j = 0; j < f->n_alive; j++)
        if (f->mark[f->alive[j]] == MARK_KEPT)
            f->alive[k++] = f->alive[j];
    f->n_alive = k;
}

/* sampler_engines.c's apply_XTC: the tokens at or above the threshold are
 * the best ones, so those are sorted and all but the last removed. */
int fast_XTC(struct fast *f, struct stage_report *rep)
{
    const struct sampler_settings *s = f->s;
    if (s->xtc_probability <= 0.0 || f->n_alive < 2)
        return 0;
    double u = sampler_coin(s->seed, f->in->step, f->in->row, STAGE_XTC);
    rep->cut = u;
    if (u > s->xtc_probability)
        return 0;
    fast_exps_kept(f);
    fast_build_alive(f);
    double K = fast_alive_mass(f);
    if (fast_reserve_sorted(f, (size_t)f->n_alive) < 0)
        return -1;
    int m = 0;
    for (int j = 0; j < f->n_alive; j++) {
        int i = f->alive[j];
        if (f->e[i] / K >= s->xtc_threshold)
            f->sorted[m++] = (struct zid){ f->z[i], i };
    }
    if (m < 2)
        return 0;
    qsort(f->sorted, (size_t)m, sizeof *f->sorted, rule_zid_cmp);
    for (int r = 0; r + 1 < m; r++)
        fast_drop(f, f->sorted[r].id, STAGE_XTC);
    fast_compact_alive(f);
    return 0;
}

/* Removes the kept tokens below bar but those tied with the best
 * (sampler_engines.c's cut_below); e and the list must hold. */
static void cut_below(struct fast *f, double K, double bar, enum stage st, struct stage_report *rep)
{
    double max = f->z[fast_alive_best(f)];
    rep->cut = bar;
    for (int j = 0; j < f->n_alive; j++) {
        int i = f->alive[j];
        if (rule_below_bar(f->e[i] / K, bar, f->z[i], max))
            fast_drop(f, i, st);
    }
    fast_compact_alive(f);
}

int fast_EPSILON(struct fast *f, struct stage_report *rep)
{
    if (f->s->epsilon_cutoff <= 0.0)
        return 0;
    fast_exps_kept(f);
    fast_build_alive(f);
    cut_below(f, fast_alive_mass(f), f->s->epsilon_cutoff, STAGE_EPSILON, rep);
    return 0;
}

int fast_ETA(struct fast *f, struct stage_report *rep)
{
    if (f->s->eta_cutoff <= 0.0)
        return 0;
    double K, h = fast_kept_entropy(f, &K);
    cut_below(f, K, rule_eta_bar(f->s->eta_cutoff, h), STAGE_ETA, rep);
    return 0;
}

/* Removes the kept tokens among ids[0..k) (distinct) for stage st, but
 * the most likely when they are every kept token: sampler_engines.c's
 * ref_remove_ids, looking at those ids only. */
static void drop_ids(struct fast *f, const int *ids, int k, enum stage st)
{
    int hit = 0;
    for (int b = 0; b < k; b++)
        hit += f->mark[ids[b]] == MARK_KEPT;
    if (hit == 0)
        return;
    fast_build_alive(f);
    int best = hit == f->n_alive ? fast_alive_best(f) : -1;
    for (int b = 0; b < k; b++)
        if (f->mark[ids[b]] == MARK_KEPT && ids[b] != best)
            fast_drop(f, ids[b], st);
    fast_compact_alive(f);
}

/* sampler_engines.c's apply_NO_REPEAT_NGRAM: the banned ids come from the
 * context, so only they are looked at. */
int fast_NO_REPEAT_NGRAM(struct fast *f, struct stage_report *rep)
{
    (void)rep;
    int n = f->s->no_repeat_ngram_size;
    if (n <= 0 || f->in->context_len == 0)
        return 0;
    int *banned = malloc((size_t)f->in->context_len * sizeof *banned);
    if (!banned)
        return -1;
    drop_ids(f, banned, sampler_ngram_banned(f->in, n, banned), STAGE_NO_REPEAT_NGRAM);
    free(banned);
    return 0;
}

/* sampler_engines.c's apply_DRY on the few tokens it names, the blocks'
 * maxima of the window's tokens mended as after the penalties. */
int fast_DRY(struct fast *f, struct stage_report *rep)
{
    const struct sampler_input *in = f->in;
    if (f->s->dry_multiplier == 0.0 || in->context_len == 0)
        return 0;
    struct dry_hit *hits = malloc((size_t)in->context_len * sizeof *hits);
    int k = hits ? sampler_dry_hits(in, f->s, hits) : -1, bad = -1;
    if (k <= 0) {
        free(hits);
        return k;
    }
    fast_keep_z_before(f);
    for (int h = 0; h < k; h++) {
        int id = hits[h].id;
        double pen = sampler_dry_penalty(f->s, hits[h].len);
        rep->cut = pen > rep->cut ? pen : rep->cut;
        f->z[id] -= pen;
        if (!rule_z_in_range(f->z[id]) && f->mark[id] != MARK_MASKED && bad < 0)
            bad = id; /* the lowest: hits go by id, as the reference names it */
    }
    free(hits);
    f->t->penalized += k;
    int n = f->s->dry_penalty_last_n;
    fast_penalized_blocks(f, n < 0 || n > in->context_len ? 0 : in->context_len - n);
    if (bad >= 0) {
        f->range_error = 1;
        sampler_range_error(f->s, STAGE_DRY, bad, 0.0, f->z[bad], 0.0, f->err);
        return -1;
    }
    return 0;
}

/* sampler_engines.c's apply_MIN_TOKENS: only the end tokens are looked at. */
int fast_MIN_TOKENS(struct fast *f, struct stage_report *rep)
{
    (void)rep;
    if (sampler_min_tokens_on(f->in, f->s))
        drop_ids(f, f->in->end_ids, f->in->n_end, STAGE_MIN_TOKENS);
    return 0;
}

/* sampler_engines.c's apply_GRAMMAR: one pass over the kept tokens. */
int fast_GRAMMAR(struct fast *f, struct stage_report *rep)
{
    if (!rep->active)
        return 0;
    const uint8_t *refused = f->in->refused;
    f->range_error = 1; /* the failures below fill f->err */
    if (!refused) {
        err_set(f->err, ERR_USAGE, "grammar: the step has no mask (the caller gave none)");
        return -1;
    }
    fast_build_alive(f);
    int before = f->n_alive;
    for (int j = 0; j < f->n_alive; j++)
        if (refused[f->alive[j]])
            fast_drop(f, f->alive[j], STAGE_GRAMMAR);
    fast_compact_alive(f);
    if (f->n_alive == 0 && before > 0) {
        sampler_grammar_error(before, f->err);
        return -1;
    }
    f->range_error = 0;
    return 0;
}

/* sampler_engines.c's apply_LOGIT_BIAS: only the listed tokens are looked
 * at, the blocks' maxima mended where their z' moved. */
int fast_LOGIT_BIAS(struct fast *f, struct stage_report *rep)
{
    (void)rep;
    const struct logit_bias *b = &f->s->logit_bias;
    int gone[LOGIT_BIAS_MAX], moved[LOGIT_BIAS_MAX], k = 0, m = 0;
    for (int j = 0; j < b->n; j++) {
        if (b->bias[j] == -INFINITY)
            gone[k++] = b->id[j];
        else
            moved[m++] = j;
    }
    if (m > 0) {
        fast_keep_z_before(f);
        for (int j = 0; j < m; j++) {
            f->z[b->id[moved[j]]] += b->bias[moved[j]];
            moved[j] = b->id[moved[j]];
        }
        fast_changed_ids(f, moved, m);
    }
    if (k > 0)
        drop_ids(f, gone, k, STAGE_LOGIT_BIAS);
    return 0;
}

/* sampler_engines.c's apply_BAD_WORDS: only the banned ids are looked at. */
int fast_BAD_WORDS(struct fast *f, struct stage_report *rep)
{
    (void)rep;
    int banned[BAD_WORDS_MAX];
    drop_ids(f, banned, sampler_bad_words_banned(f->in, &f->s->bad_words, banned), STAGE_BAD_WORDS);
    return 0;
}
