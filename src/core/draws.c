#include "core/draws.h"

#include <stdint.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sampler_rules.h"

int draws_histogram(const struct trace *t, int bins, struct draws_hist *h)
{
    memset(h, 0, sizeof *h);
    if (!t->fmax_valid || bins < 1 || bins > DRAWS_HIST_BINS_MAX)
        return -1;
    const double *z = t->fz;
    int V = t->vocab_size;
    double lo = INFINITY, hi = -INFINITY, sum = 0.0;
    for (int i = 0; i < V; i++) {
        if (z[i] == -INFINITY) {
            h->masked++;
            continue;
        }
        lo = z[i] < lo ? z[i] : lo;
        hi = z[i] > hi ? z[i] : hi;
        sum += z[i];
        h->n++;
    }
    h->bins = bins;
    if (!h->n)
        return 0;
    if (hi == lo)
        hi = lo + 1.0;
    h->lo = lo;
    h->hi = hi;
    h->mean = sum / (double)h->n;
    double ss = 0.0;
    for (int i = 0; i < V; i++) {
        if (z[i] == -INFINITY)
            continue;
        h->count[draws_bin(h, z[i])]++;
        ss += (z[i] - h->mean) * (z[i] - h->mean);
    }
    h->sd = sqrt(ss / (double)h->n);
    return 0;
}

int draws_bin(const struct draws_hist *h, double z)
{
    double x = (z - h->lo) / ((h->hi - h->lo) / h->bins);
    if (!(x >= 0.0))
        return 0;
    return x >= h->bins ? h->bins - 1 : (int)x;
}

/* Puts the finite z' of t in rank order (z' descending, ties to the lower
 * id): an LSD radix sort of 64-bit words (the inverted order key of z' as
 * a float, then the id), three passes of 16 bits, then an insertion pass
 * that settles the rare neighbours whose doubles differ within one float. */
void draws_work_free(struct draws_work *W)
{
    if (!W)
        return;
    free(W->a);
    free(W->b);
    free(W->count);
    free(W->order);
    free(W->cum_p);
    free(W->cum_k);
    free(W->hit);
    free(W->rank);
    memset(W, 0, sizeof *W);
}

/* The work space of a trace, kept from call to call: a step's draws are
 * redone on every key, and fresh pages for 128,256 tokens cost more than
 * the work itself. */
static int work_reserve(struct draws_work *W, size_t V)
{
    if (W->V >= V && W->a)
        return 0;
    draws_work_free(W);
    W->a = malloc(V * sizeof *W->a);
    W->b = malloc(V * sizeof *W->b);
    W->count = malloc(65536 * sizeof *W->count);
    W->order = malloc(V * sizeof *W->order);
    W->cum_p = malloc(V * sizeof *W->cum_p);
    W->cum_k = malloc(V * sizeof *W->cum_k);
    W->hit = malloc(2 * V * sizeof *W->hit);
    W->rank = malloc(V * sizeof *W->rank);
    if (!W->rank || !W->a || !W->b || !W->count || !W->order || !W->cum_p || !W->cum_k || !W->hit)
        return -1;
    W->V = V;
    return 0;
}

static void rank_order(const struct trace *t, struct zid *out, int *m_out)
{
    struct draws_work *W = t->dwork;
    int V = t->vocab_size, m = 0;
    uint64_t *a = W->a, *b = W->b;
    unsigned *count = W->count;
    for (int i = 0; i < V; i++)
        if (t->fz[i] != -INFINITY)
            a[m++] = (uint64_t)(~rule_key(t->fz[i])) << 32 | (uint32_t)i;
    for (int shift = 0; shift < 64; shift += 16) {
        if (shift == 16 && V < 65536)
            continue; /* ids fit in the low 16 bits: nothing to sort there */
        memset(count, 0, 65536 * sizeof *count);
        for (int i = 0; i < m; i++)
            count[(a[i] >> shift) & 0xFFFF]++;
        unsigned sum = 0;
        for (int k = 0; k < 65536; k++) {
            unsigned c = count[k];
            count[k] = sum;
            sum += c;
        }
        for (int i = 0; i < m; i++)
            b[count[(a[i] >> shift) & 0xFFFF]++] = a[i];
        uint64_t *tmp = a;
        a = b;
        b = tmp;
    }
    for (int i = 0; i < m; i++) {
        int id = (int)(uint32_t)a[i];
        struct zid x = { t->fz[id], id };
        int j = i;
        while (j > 0 && rule_ranks_before(x.z, x.id, out[j - 1].z, out[j - 1].id)) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = x;
    }
    *m_out = m;
}

static double chi2(const long *c, const double *p, int rows, long c_rest, double p_rest, int n,
                   int *df)
{
    double x = 0.0, rest_e = p_rest * n;
    long rest_c = c_rest;
    int buckets = 0;
    for (int r = 0; r < rows; r++) {
        double e = p[r] * n;
        if (e >= 5.0) {
            x += (c[r] - e) * (c[r] - e) / e;
            buckets++;
        } else {
            rest_e += e;
            rest_c += c[r];
        }
    }
    if (rest_e >= 5.0) {
        x += (rest_c - rest_e) * (rest_c - rest_e) / rest_e;
        buckets++;
    }
    *df = buckets > 1 ? buckets - 1 : 0;
    return x;
}

/* The rank order of t's finite tokens and the cumulative integer weights
 * down it (rule_draw_units), without and with the filters, in the work
 * area: the device's draw_weights_kernel and its scans, one for one. */
static int prepare(const struct trace *t, int *m_out, int *last_kept)
{
    struct draws_work *W = t->dwork;
    int V = t->vocab_size, m = 0, shift = rule_draw_shift(V);
    if (work_reserve(W, (size_t)V) < 0)
        return -1;
    rank_order(t, W->order, &m);
    uint64_t cp = 0, ck = 0;
    *last_kept = -1;
    for (int r = 0; r < m; r++) {
        int id = W->order[r].id;
        uint64_t w = rule_draw_units(trace_e(t, id), shift);
        cp += w;
        if (t->fmark[id] == 0) {
            ck += w;
            *last_kept = r;
        }
        W->cum_p[r] = cp;
        W->cum_k[r] = ck;
    }
    *m_out = m;
    return 0;
}

/* The ranks draw i lands on without (*rp) and with (*rk) the filters. */
static void draw_ranks(const struct trace *t, double u, int m, int last_kept, int *rp, int *rk)
{
    struct draws_work *W = t->dwork;
    *rp = rule_first_above_units(W->cum_p, m, u);
    if (*rp >= m)
        *rp = m - 1; /* no weight at all (cannot be: the top token weighs 2^shift) */
    if (t->greedy) {
        int r = 0;
        while (r < m && t->fmark[W->order[r].id] != 0)
            r++;
        *rk = r;
    } else {
        *rk = rule_first_above_units(W->cum_k, m, u);
        if (*rk >= m)
            *rk = last_kept; /* no kept weight: every kept e rounded to 0 */
    }
}

/* What every way of drawing n times starts with: the checks, then the rank
 * order and the cumulative probabilities (prepare). */
static int draws_prepare(const struct trace *t, int n, int *m, int *last_kept, struct err *e)
{
    if (!t->fmax_valid)
        return err_set(e, ERR_USAGE, "many draws need a full-size step");
    if (n < 1 || n > DRAWS_MAX)
        return err_set(e, ERR_USAGE, "%d draws: from 1 to %d", n, DRAWS_MAX);
    if (prepare(t, m, last_kept) < 0)
        return err_set(e, ERR_SYSTEM, "out of memory for %d draws", n);
    return 0;
}

int draws_ids(const struct trace *t, uint64_t seed, uint32_t step, uint32_t row, int n,
              int *kept_ids, int *plain_ids, struct err *e)
{
    struct draws_work *W = t->dwork;
    int m, last_kept;
    if (draws_prepare(t, n, &m, &last_kept, e) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        int rp, rk;
        draw_ranks(t, sampler_u(seed, step, row, (uint32_t)i), m, last_kept, &rp, &rk);
        if (plain_ids)
            plain_ids[i] = W->order[rp].id;
        if (kept_ids)
            kept_ids[i] = W->order[rk].id;
    }
    return 0;
}

/* Counts one draw that landed on ranks rp (no filter) and rk (filters),
 * tokens idp and idk. */
static void tally(const struct draws_work *W, struct draws *d, int top, int rp, int rk, int idp,
                  int idk, int first)
{
    uint32_t *hp = &W->hit[2 * (size_t)idp], *hk = &W->hit[2 * (size_t)idk + 1];
    if (first)
        d->first_kept = idk;
    if (rp < top) {
        d->c_plain[rp]++;
    } else {
        d->tail_plain++;
        if (!*hp && d->n_examples < DRAWS_EXAMPLES) {
            d->example[d->n_examples] = idp;
            d->example_rank[d->n_examples++] = rp;
        }
    }
    if (rk < top)
        d->c_kept[rk]++;
    else
        d->tail_kept++;
    d->distinct_plain += !*hp;
    d->distinct_kept += !*hk;
    ++*hp;
    ++*hk;
}

/* The token of rank r as the lists of rarest tokens give it: from the
 * trace's rows (by_row), else from the fast run's per-token state; its
 * counts from the work area's hits. */
static struct draws_token token_at(const struct trace *t, int r, int by_row)
{
    struct draws_token k = { .rank = r };
    if (by_row) {
        const struct trace_row *row = &t->rows[r];
        k.id = row->id;
        k.removed_by = row->removed_by;
        k.prob = row->prob;
        k.final = row->final;
    } else {
        k.id = t->dwork->order[r].id;
        uint8_t mark = t->fmark[k.id];
        k.removed_by = mark ? mark - 1 : TRACE_KEPT;
        k.prob = trace_e(t, k.id) / t->sum_exp_shifted;
        k.final = trace_final(t, k.id);
    }
    k.plain = t->dwork->hit[2 * (size_t)k.id];
    k.kept = t->dwork->hit[2 * (size_t)k.id + 1];
    return k;
}

/* The drawn tokens of lowest probability: up the m ranks from the least
 * likely, the first DRAWS_RAREST that came up, without and with the
 * filters (the hit counts of the work area say which did). */
static void rarest(const struct trace *t, int m, int by_row, struct draws *d)
{
    const uint32_t *hit = t->dwork->hit;
    for (int r = m - 1; r >= 0; r--) {
        if (d->n_rarest_plain == DRAWS_RAREST && d->n_rarest_kept == DRAWS_RAREST)
            break;
        int id = by_row ? t->rows[r].id : t->dwork->order[r].id;
        int plain = hit[2 * (size_t)id] && d->n_rarest_plain < DRAWS_RAREST;
        int kept = hit[2 * (size_t)id + 1] && d->n_rarest_kept < DRAWS_RAREST;
        if (plain)
            d->rarest_plain[d->n_rarest_plain++] = token_at(t, r, by_row);
        if (kept)
            d->rarest_kept[d->n_rarest_kept++] = token_at(t, r, by_row);
    }
}

/* The share of the weight past the first top ranks of m: what a draw lands
 * on beyond the rows, by the very weights it draws with. */
static double tail_share(const uint64_t *cum, int top, int m)
{
    uint64_t total = cum[m - 1];
    return total > 0 ? (double)(total - cum[top - 1]) / (double)total : 0.0;
}

/* Everything but the counts: the rows, their probabilities and the tails. */
static void draws_head(const struct trace *t, int n, int rows, int m, struct draws *d)
{
    struct draws_work *W = t->dwork;
    double S = t->sum_exp_shifted;
    int top = rows < DRAWS_ROWS ? rows : DRAWS_ROWS;
    if (top > m)
        top = m;
    d->n = n;
    d->rows = top;
    for (int r = 0; r < top; r++) {
        int id = W->order[r].id;
        d->id[r] = id;
        d->p_plain[r] = trace_e(t, id) / S;
        d->p_kept[r] = trace_final(t, id);
    }
    d->tail_p_plain = top > 0 ? tail_share(W->cum_p, top, m) : 1.0;
    d->tail_p_kept = top > 0 ? tail_share(W->cum_k, top, m) : 1.0;
    memset(W->hit, 0, 2 * (size_t)t->vocab_size * sizeof *W->hit);
}

/* What both ways of counting draws start with: the checks, the rank order
 * (draws_prepare) and the rows. */
static int draws_begin(const struct trace *t, int n, int rows, struct draws *d, int *m,
                       int *last_kept, struct err *e)
{
    memset(d, 0, sizeof *d);
    if (draws_prepare(t, n, m, last_kept, e) < 0)
        return -1;
    draws_head(t, n, rows, *m, d);
    return 0;
}

/* What every way of counting ends with: the chi-squares and the rarest
 * tokens among the m ranks (from the rows, or the fast run's order). */
static void draws_tail(const struct trace *t, int m, int by_row, struct draws *d)
{
    int n = d->n, top = d->rows;
    rarest(t, m, by_row, d);
    d->chi2_plain =
        chi2(d->c_plain, d->p_plain, top, d->tail_plain, d->tail_p_plain, n, &d->df_plain);
    d->chi2_kept = chi2(d->c_kept, d->p_kept, top, d->tail_kept, d->tail_p_kept, n, &d->df_kept);
}

int draws_run(const struct trace *t, uint64_t seed, uint32_t step, int n, int rows, struct draws *d,
              struct err *e)
{
    int m, last_kept;
    if (draws_begin(t, n, rows, d, &m, &last_kept, e) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        int rp, rk;
        draw_ranks(t, sampler_u(seed, step, 0, (uint32_t)i), m, last_kept, &rp, &rk);
        tally(t->dwork, d, d->rows, rp, rk, t->dwork->order[rp].id, t->dwork->order[rk].id, i == 0);
    }
    draws_tail(t, m, 0, d);
    return 0;
}

/* The row a draw without the filters lands on: the first whose running
 * sum of prob exceeds u, or, when rounding leaves the total a hair under
 * u, the last row that can be drawn. */
static int plain_row(const struct trace *t, double u)
{
    int last = 0;
    for (int r = 0; r < t->vocab_size; r++) {
        if (t->rows[r].prob <= 0.0)
            continue;
        if (t->rows[r].cum > u)
            return r;
        last = r;
    }
    return last;
}

/* The rows counted one by one and what the rest hold, from a trace that
 * has every row. */
static void rows_head(const struct trace *t, int n, int rows, struct draws *d)
{
    int V = t->vocab_size, top = rows < DRAWS_ROWS ? rows : DRAWS_ROWS;
    if (top > V)
        top = V;
    d->n = n;
    d->rows = top;
    for (int r = 0; r < V; r++) {
        const struct trace_row *row = &t->rows[r];
        if (r < top) {
            d->id[r] = row->id;
            d->p_plain[r] = row->prob;
            d->p_kept[r] = row->final;
        } else {
            d->tail_p_plain += row->prob;
            d->tail_p_kept += row->final;
        }
    }
    memset(t->dwork->hit, 0, 2 * (size_t)V * sizeof *t->dwork->hit);
}

int draws_run_rows(const struct trace *t, uint64_t seed, uint32_t step, int n, int rows,
                   struct draws *d, struct err *e)
{
    memset(d, 0, sizeof *d);
    int V = t->vocab_size;
    if (V < 1 || t->n_rows != V)
        return err_set(e, ERR_USAGE, "many draws over the rows need a step with all %d rows", V);
    if (n < 1 || n > DRAWS_MAX)
        return err_set(e, ERR_USAGE, "%d draws: from 1 to %d", n, DRAWS_MAX);
    if (work_reserve(t->dwork, (size_t)V) < 0)
        return err_set(e, ERR_SYSTEM, "out of memory for %d draws", n);
    rows_head(t, n, rows, d);
    for (int i = 0; i < n; i++) {
        double u = sampler_u(seed, step, 0, (uint32_t)i);
        struct choice c;
        int rk = sampler_draw(t, u, &c), rp = plain_row(t, u);
        tally(t->dwork, d, d->rows, rp, rk, t->rows[rp].id, t->rows[rk].id, i == 0);
    }
    draws_tail(t, V, 1, d);
    return 0;
}

int draws_tally(const struct trace *t, const int *kept_ids, const int *plain_ids, int n, int rows,
                struct draws *d, struct err *e)
{
    struct draws_work *W = t->dwork;
    int m, last_kept;
    if (draws_begin(t, n, rows, d, &m, &last_kept, e) < 0)
        return -1;
    int *rank = W->rank;
    for (int r = 0; r < m; r++)
        rank[W->order[r].id] = r;
    for (int i = 0; i < n; i++) {
        int p = plain_ids[i], k = kept_ids[i];
        if (p < 0 || p >= t->vocab_size || k < 0 || k >= t->vocab_size || t->fz[p] == -INFINITY ||
            t->fz[k] == -INFINITY)
            return err_set(e, ERR_SYSTEM, "draw %d came back with a token outside the step", i);
        if (t->fmark[k] != 0)
            return err_set(e, ERR_SYSTEM,
                           "draw %d came back with token %d, which the chain removed", i, k);
        tally(W, d, d->rows, rank[p], rank[k], p, k, i == 0);
    }
    draws_tail(t, m, 0, d);
    return 0;
}

void draws_count_text(long n, char *buf, size_t size)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%ld", n < 0 ? -n : n), k = 0;
    char out[48];
    if (n < 0)
        out[k++] = '-';
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[k++] = ',';
        out[k++] = digits[i];
    }
    out[k] = '\0';
    snprintf(buf, size, "%s", out);
}

double draws_chi2_point(int df, double z)
{
    if (df <= 0)
        return 0.0;
    /* Wilson-Hilferty: (X/df)^(1/3) is about normal with mean 1 - 2/(9 df)
     * and variance 2/(9 df). */
    double k = df, a = 2.0 / (9.0 * k);
    double c = 1.0 - a + z * sqrt(a);
    return k * c * c * c;
}

double draws_chi2_limit(int df)
{
    return draws_chi2_point(df, DRAWS_Z_0_1PCT);
}
