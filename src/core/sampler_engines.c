/* sampler_engines.c - the reference of the stages the engines added to the
 * lesson's: XTC and DRY (llama.cpp), the epsilon and eta cutoffs and the
 * no-repeat n-gram rule (Hugging Face), minimum tokens, the logit bias and
 * the bad words (Hugging Face, vLLM; llama.cpp has the logit bias too).
 * Each works, as every stage of sampler.c, on the softmax of z' over the
 * tokens still kept at its place in the chain.
 */
#include <math.h>
#include <stdlib.h>

#include "core/ref_int.h"

double ref_kept_entropy(const struct zid *order, int n)
{
    double max = order[0].z, sum = ref_shifted_sum(order, n), h = 0.0;
    for (int r = 0; r < n; r++) {
        double q = exp(order[r].z - max) / sum;
        if (q > 0.0)
            h -= q * log(q);
    }
    return h;
}

/* XTC, "exclude top choices" (llama.cpp's xtc sampler): with chance p --
 * the stage's coin u at most p -- every kept token whose probability is at
 * least the threshold goes, except the least likely of them, so that a
 * plausible but less obvious token is drawn. One such token or none: it
 * removes nothing (so a threshold above 0.5 never acts). */
int apply_XTC(struct ref_step *c)
{
    const struct sampler_settings *s = c->s;
    if (s->xtc_probability <= 0.0 || c->n < 2)
        return 0;
    double u = sampler_coin(s->seed, c->in->step, c->in->row, STAGE_XTC);
    c->rep->cut = u;
    if (u > s->xtc_probability)
        return 0;
    double max = c->order[0].z, sum = ref_shifted_sum(c->order, c->n);
    int above = 0;
    while (above < c->n && exp(c->order[above].z - max) / sum >= s->xtc_threshold)
        above++;
    for (int r = 0; r + 1 < above; r++)
        c->t->rows[c->order[r].id].removed_by = STAGE_XTC;
    return 0;
}

/* Removes the kept tokens whose probability is below bar, except those
 * tied with the most likely. */
static void cut_below(struct ref_step *c, double bar, enum stage st)
{
    double max = c->order[0].z, sum = ref_shifted_sum(c->order, c->n);
    c->rep->cut = bar;
    for (int r = 1; r < c->n; r++)
        if (rule_below_bar(exp(c->order[r].z - max) / sum, bar, c->order[r].z, max))
            c->t->rows[c->order[r].id].removed_by = (int)st;
}

/* Epsilon sampling (Hewitt et al. 2022, Hugging Face's epsilon_cutoff):
 * remove every token less likely than epsilon. */
int apply_EPSILON(struct ref_step *c)
{
    if (c->s->epsilon_cutoff <= 0.0 || c->n == 0)
        return 0;
    cut_below(c, c->s->epsilon_cutoff, STAGE_EPSILON);
    return 0;
}

/* Eta sampling (Hewitt et al. 2022, Hugging Face's eta_cutoff): the bar
 * falls with the entropy, so a flat distribution keeps more tokens. */
int apply_ETA(struct ref_step *c)
{
    if (c->s->eta_cutoff <= 0.0 || c->n == 0)
        return 0;
    cut_below(c, rule_eta_bar(c->s->eta_cutoff, ref_kept_entropy(c->order, c->n)), STAGE_ETA);
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sorts ids[0..k) and keeps each once; returns how many are left. */
static int sorted_distinct(int *ids, int k)
{
    qsort(ids, (size_t)k, sizeof *ids, cmp_int);
    int u = 0;
    for (int i = 0; i < k; i++)
        if (u == 0 || ids[u - 1] != ids[i])
            ids[u++] = ids[i];
    return u;
}

int sampler_ngram_banned(const struct sampler_input *in, int n, int *banned)
{
    int len = in->context_len, k = 0;
    if (n <= 0 || len + 1 < n)
        return 0;
    const int *ctx = in->context, *tail = ctx + len - (n - 1);
    for (int i = 0; i + n - 1 < len; i++) {
        int same = 1;
        for (int j = 0; j < n - 1 && same; j++)
            same = ctx[i + j] == tail[j];
        if (same)
            banned[k++] = ctx[i + n - 1];
    }
    return sorted_distinct(banned, k);
}

/* Removes the kept tokens among ids[0..k) (distinct) for stage st, but
 * the most likely when they are every kept token: the engines' row would
 * be all -inf there, and every cut keeps one. */
static void ref_remove_ids(struct ref_step *c, const int *ids, int k, enum stage st)
{
    int hit = 0;
    for (int b = 0; b < k; b++)
        hit += c->t->rows[ids[b]].removed_by == TRACE_KEPT;
    for (int b = 0; b < k; b++) {
        struct trace_row *row = &c->t->rows[ids[b]];
        if (row->removed_by == TRACE_KEPT && !(hit == c->n && ids[b] == c->order[0].id))
            row->removed_by = (int)st;
    }
}

/* No-repeat n-gram: the banned tokens go. */
int apply_NO_REPEAT_NGRAM(struct ref_step *c)
{
    int n = c->s->no_repeat_ngram_size;
    if (n <= 0 || c->n == 0 || c->in->context_len == 0)
        return 0;
    int *banned = malloc((size_t)c->in->context_len * sizeof *banned);
    if (!banned)
        return err_set(c->e, ERR_SYSTEM, "out of memory in the sampler (%d tokens)", c->V);
    ref_remove_ids(c, banned, sampler_ngram_banned(c->in, n, banned), STAGE_NO_REPEAT_NGRAM);
    free(banned);
    return 0;
}

/* The window DRY reads: the last n tokens of the context, n from
 * dry-penalty-last-n (-1: all). */
static int dry_window(const struct sampler_input *in, const struct sampler_settings *s)
{
    int n = s->dry_penalty_last_n;
    return n < 0 || n > in->context_len ? in->context_len : n;
}

/* How far back from the end a repeat may reach: up to the latest breaker. */
static int dry_limit(const struct sampler_input *in, int n)
{
    const int *end = in->context + in->context_len - 1; /* end[-i]: i tokens back */
    for (int i = 0; i < n; i++)
        if (in->breaker && in->breaker[end[-i]])
            return i;
    return n;
}

/* rep[k], 1 <= k < n: how many tokens before position k back (reading the
 * window backwards, b[i] = end[-i]) match the window's own last tokens,
 * capped at limit: the Z-function of the reversed window, computed in
 * linear time with the Z-box [lt, rt] as llama.cpp does (its capped
 * values feed the box, as there). */
static void dry_repeats(const int *end, int n, int limit, int *rep)
{
    int lt = 0, rt = 0;
    for (int k = 1; k < n; k++) {
        int m;
        if (k > rt) {
            m = 0;
            while (m + k < n && end[-m] == end[-(m + k)])
                m++;
            if (m > 0) {
                lt = k;
                rt = k + m - 1;
            }
        } else if (rep[k - lt] < rt - k + 1) {
            m = rep[k - lt];
        } else {
            int i = rt + 1;
            while (i < n && end[-i] == end[-(i - k)])
                i++;
            m = i - k;
            lt = k;
            rt = i - 1;
        }
        rep[k] = m < limit ? m : limit;
    }
}

static int cmp_hit(const void *a, const void *b)
{
    const struct dry_hit *x = a, *y = b;
    return x->id != y->id ? (x->id > y->id) - (x->id < y->id)
                          : (x->len < y->len) - (x->len > y->len);
}

int sampler_dry_hits(const struct sampler_input *in, const struct sampler_settings *s,
                     struct dry_hit *hits)
{
    int n = dry_window(in, s), allowed = s->dry_allowed_length;
    if (s->dry_multiplier == 0.0 || n <= allowed)
        return 0;
    int limit = dry_limit(in, n);
    if (limit < allowed)
        return 0;
    int *rep = malloc((size_t)n * sizeof *rep);
    if (!rep)
        return -1;
    const int *end = in->context + in->context_len - 1;
    dry_repeats(end, n, limit, rep);
    int k = 0;
    for (int j = 1; j < n; j++) /* the token after a repeat ending j back would extend it */
        if (rep[j] >= allowed && !(in->breaker && in->breaker[end[-(j - 1)]]))
            hits[k++] = (struct dry_hit){ end[-(j - 1)], rep[j] };
    free(rep);
    qsort(hits, (size_t)k, sizeof *hits, cmp_hit);
    int u = 0;
    for (int i = 0; i < k; i++) /* the longest first for each id */
        if (u == 0 || hits[u - 1].id != hits[i].id)
            hits[u++] = hits[i];
    return u;
}

double sampler_dry_penalty(const struct sampler_settings *s, int len)
{
    int e = len - s->dry_allowed_length;
    if (s->dry_base > 1.000001) { /* llama.cpp: base^e at most FLT_MAX */
        int most = (int)(88.7228391 / log(s->dry_base));
        e = most > 0 && e > most ? most : e;
    }
    return s->dry_multiplier * pow(s->dry_base, e);
}

/* DRY, "don't repeat yourself" (llama.cpp's dry sampler): each token that
 * would extend a repeat of at least the allowed length loses
 * multiplier x base^(length - allowed); a breaker token never does. */
int apply_DRY(struct ref_step *c)
{
    if (c->s->dry_multiplier == 0.0 || c->in->context_len == 0)
        return 0;
    struct dry_hit *hits = malloc((size_t)c->in->context_len * sizeof *hits);
    int k = hits ? sampler_dry_hits(c->in, c->s, hits) : -1;
    if (k < 0) {
        free(hits);
        return err_set(c->e, ERR_SYSTEM, "out of memory in the sampler (%d tokens)", c->V);
    }
    for (int h = 0; h < k; h++) {
        int id = hits[h].id;
        double pen = sampler_dry_penalty(c->s, hits[h].len);
        c->rep->cut = pen > c->rep->cut ? pen : c->rep->cut; /* the report's: the most lost */
        c->z[id] -= pen;
        if (!rule_z_in_range(c->z[id]) && c->t->rows[id].removed_by != TRACE_MASKED) {
            free(hits);
            return sampler_range_error(c->s, STAGE_DRY, id, c->t->rows[id].logit, c->z[id], 0.0,
                                       c->e);
        }
    }
    c->t->penalized += k; /* the view's "z' after penalty" */
    free(hits);
    return 0;
}

int sampler_min_tokens_on(const struct sampler_input *in, const struct sampler_settings *s)
{
    return s->min_tokens > 0 && in->n_end > 0 && in->context_len - in->prompt_len < s->min_tokens;
}

/* Minimum tokens (Hugging Face's min_new_tokens, vLLM's min_tokens): the
 * end tokens go while fewer than N tokens have been generated. */
int apply_MIN_TOKENS(struct ref_step *c)
{
    if (sampler_min_tokens_on(c->in, c->s) && c->n > 0)
        ref_remove_ids(c, c->in->end_ids, c->in->n_end, STAGE_MIN_TOKENS);
    return 0;
}

/* The grammar (a constraint's mask, which the caller computed from the
 * text so far): every token it refuses goes, whatever its probability. No
 * token is kept back, as the engines keep none: a step where the grammar
 * refuses every token still kept fails, and says so. */
int apply_GRAMMAR(struct ref_step *c)
{
    if (!c->rep->active)
        return 0;
    const uint8_t *refused = c->in->refused;
    if (!refused)
        return err_set(c->e, ERR_USAGE, "grammar: the step has no mask (the caller gave none)");
    int left = 0;
    for (int r = 0; r < c->n; r++) {
        int id = c->order[r].id;
        if (refused[id])
            c->t->rows[id].removed_by = STAGE_GRAMMAR;
        else
            left++;
    }
    if (left == 0 && c->n > 0)
        return sampler_grammar_error(c->n, c->e);
    return 0;
}

int sampler_grammar_error(int kept, struct err *e)
{
    return err_set(e, ERR_USAGE, "grammar: it refuses every token still kept here (%d of them)",
                   kept);
}

int sampler_check_setting_ids(const struct sampler_input *in, const struct sampler_settings *s,
                              struct err *e)
{
    int last = in->vocab_size - 1;
    for (int j = 0; j < s->logit_bias.n; j++)
        if (s->logit_bias.id[j] < 0 || s->logit_bias.id[j] > last)
            return err_set(e, ERR_USAGE, "logit-bias: token %d is not in the vocabulary (0..%d)",
                           s->logit_bias.id[j], last);
    for (int w = 0; w < s->bad_words.n; w++)
        for (int j = 0; j < s->bad_words.len[w]; j++)
            if (s->bad_words.id[w][j] < 0 || s->bad_words.id[w][j] > last)
                return err_set(e, ERR_USAGE, "bad-words: token %d is not in the vocabulary (0..%d)",
                               s->bad_words.id[w][j], last);
    return 0;
}

/* The logit bias (llama.cpp's logit_bias, vLLM's and OpenAI's logit_bias,
 * Hugging Face's sequence_bias of one-token sequences): each listed token's
 * z' gains its bias; a bias of -inf removes the token instead, its z' left
 * as it was. Adding at most 1e6 to a z' within RULE_Z_LIMIT stays within
 * it (near 1e30 a double's step is 2^47), so no z' can leave the range. */
int apply_LOGIT_BIAS(struct ref_step *c)
{
    const struct logit_bias *b = &c->s->logit_bias;
    int gone[LOGIT_BIAS_MAX], k = 0;
    for (int j = 0; j < b->n; j++) {
        if (b->bias[j] == -INFINITY)
            gone[k++] = b->id[j];
        else
            c->z[b->id[j]] += b->bias[j];
    }
    /* The order, sorted before the biases, still ranks the tokens at -inf
     * among themselves (their z' did not move): when they are every kept
     * token, its first is the most likely of them. */
    if (k > 0 && c->n > 0)
        ref_remove_ids(c, gone, k, STAGE_LOGIT_BIAS);
    return 0;
}

int sampler_bad_words_banned(const struct sampler_input *in, const struct bad_words *w, int *banned)
{
    int k = 0;
    for (int s = 0; s < w->n; s++) {
        int rest = w->len[s] - 1, same = rest <= in->context_len;
        for (int j = 0; j < rest && same; j++) /* the context's last rest ids */
            same = in->context[in->context_len - rest + j] == w->id[s][j];
        if (same)
            banned[k++] = w->id[s][rest];
    }
    return sorted_distinct(banned, k);
}

/* Bad words (Hugging Face's bad_words_ids, vLLM's bad_words): the tokens
 * that would complete one go; when that is every kept token, the most
 * likely stays (as no-repeat n-gram). */
int apply_BAD_WORDS(struct ref_step *c)
{
    int banned[BAD_WORDS_MAX];
    if (c->n > 0)
        ref_remove_ids(c, banned, sampler_bad_words_banned(c->in, &c->s->bad_words, banned),
                       STAGE_BAD_WORDS);
    return 0;
}
