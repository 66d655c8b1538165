#include "realrun.h"

#include <stdint.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sampler_rules.h"

int rr_histogram(const struct trace *t, int bins, struct rr_hist *h)
{
    memset(h, 0, sizeof *h);
    if (!t->fmax_valid || bins < 1 || bins > RR_HIST_BINS_MAX)
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
    double ss = 0.0, width = (hi - lo) / bins;
    for (int i = 0; i < V; i++) {
        if (z[i] == -INFINITY)
            continue;
        int b = (int)((z[i] - lo) / width);
        h->count[b >= bins ? bins - 1 : b]++;
        ss += (z[i] - h->mean) * (z[i] - h->mean);
    }
    h->sd = sqrt(ss / (double)h->n);
    return 0;
}

/* Puts the finite z' of t in rank order (z' descending, ties to the lower
 * id): an LSD radix sort of 64-bit words (the inverted order key of z' as
 * a float, then the id), three passes of 16 bits, then an insertion pass
 * that settles the rare neighbours whose doubles differ within one float. */
/* Work space kept from call to call: a step's draws are redone on every
 * key, and fresh pages for 128,256 tokens cost more than the work itself. */
static struct {
    size_t V;
    uint64_t *a, *b;
    unsigned *count;
    struct zid *order;
    double *cum_p, *cum_k;
    unsigned char *hit;
} W;

static int work_reserve(size_t V)
{
    if (W.V >= V && W.a)
        return 0;
    free(W.a), free(W.b), free(W.count), free(W.order), free(W.cum_p), free(W.cum_k), free(W.hit);
    memset(&W, 0, sizeof W);
    W.a = malloc(V * sizeof *W.a);
    W.b = malloc(V * sizeof *W.b);
    W.count = malloc(65536 * sizeof *W.count);
    W.order = malloc(V * sizeof *W.order);
    W.cum_p = malloc(V * sizeof *W.cum_p);
    W.cum_k = malloc(V * sizeof *W.cum_k);
    W.hit = malloc(2 * V);
    if (!W.a || !W.b || !W.count || !W.order || !W.cum_p || !W.cum_k || !W.hit)
        return -1;
    W.V = V;
    return 0;
}

static void rank_order(const struct trace *t, struct zid *out, int *m_out)
{
    int V = t->vocab_size, m = 0;
    uint64_t *a = W.a, *b = W.b;
    unsigned *count = W.count;
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

/* The first index whose cumulative value exceeds u; n when none does. */
static int first_above(const double *cum, int n, double u)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cum[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
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

int rr_draws(const struct trace *t, uint64_t seed, uint32_t step, int n, int rows,
             struct rr_draws *d, struct err *e)
{
    memset(d, 0, sizeof *d);
    if (!t->fmax_valid)
        return err_set(e, ERR_USAGE, "many draws need a full-size step");
    if (n < 1 || n > 10000000)
        return err_set(e, ERR_USAGE, "%d draws: from 1 to 10000000", n);
    int V = t->vocab_size, m = 0;
    if (work_reserve((size_t)V) < 0)
        return err_set(e, ERR_SYSTEM, "out of memory for %d draws", n);
    struct zid *order = W.order;
    double *cum_p = W.cum_p, *cum_k = W.cum_k;
    unsigned char *hit = W.hit;
    memset(hit, 0, 2 * (size_t)V);
    rank_order(t, order, &m);
    double S = t->sum_exp_shifted, K = t->kept_mass * S, cp = 0.0, ck = 0.0;
    int last_kept = -1;
    for (int r = 0; r < m; r++) {
        int id = order[r].id;
        double ev = t->fe[id];
        cp += ev / S;
        if (t->fmark[id] == 0 && K > 0) {
            ck += ev / K;
            last_kept = r;
        }
        cum_p[r] = cp;
        cum_k[r] = ck;
    }
    int top = rows < RR_DRAW_ROWS ? rows : RR_DRAW_ROWS;
    if (top > m)
        top = m;
    d->n = n;
    d->rows = top;
    for (int r = 0; r < top; r++) {
        int id = order[r].id;
        d->id[r] = id;
        d->p_plain[r] = t->fe[id] / S;
        d->p_kept[r] = t->fmark[id] == 0 && K > 0 ? t->fe[id] / K : 0.0;
    }
    d->tail_p_plain = top > 0 ? 1.0 - cum_p[top - 1] : 1.0;
    d->tail_p_kept = top > 0 ? 1.0 - cum_k[top - 1] : 1.0;
    if (d->tail_p_plain < 0)
        d->tail_p_plain = 0;
    if (d->tail_p_kept < 0)
        d->tail_p_kept = 0;
    for (int i = 0; i < n; i++) {
        double u = sampler_u(seed, step, 0, (uint32_t)i);
        int rp = first_above(cum_p, m, u);
        if (rp >= m)
            rp = m - 1; /* rounding left the total under u: the last token takes it */
        int rk;
        if (t->greedy) {
            rk = 0;
            while (rk < m && t->fmark[order[rk].id] != 0)
                rk++;
        } else {
            rk = first_above(cum_k, m, u);
            if (rk >= m)
                rk = last_kept;
        }
        if (i == 0)
            d->first_kept = order[rk].id;
        if (rp < top) {
            d->c_plain[rp]++;
        } else {
            d->tail_plain++;
            if (!hit[2 * (size_t)order[rp].id] && d->n_examples < RR_EXAMPLES) {
                d->example[d->n_examples] = order[rp].id;
                d->example_rank[d->n_examples++] = rp;
            }
        }
        if (rk < top)
            d->c_kept[rk]++;
        else
            d->tail_kept++;
        unsigned char *hp = &hit[2 * (size_t)order[rp].id],
                      *hk = &hit[2 * (size_t)order[rk].id + 1];
        d->distinct_plain += !*hp;
        d->distinct_kept += !*hk;
        *hp = *hk = 1;
    }
    d->chi2_plain =
        chi2(d->c_plain, d->p_plain, top, d->tail_plain, d->tail_p_plain, n, &d->df_plain);
    d->chi2_kept = chi2(d->c_kept, d->p_kept, top, d->tail_kept, d->tail_p_kept, n, &d->df_kept);
    return 0;
}

double rr_chi2_limit(int df)
{
    if (df <= 0)
        return 0.0;
    /* Wilson-Hilferty: (X/df)^(1/3) is about normal; z = 3.0902 at 0.1 %. */
    double k = df, a = 2.0 / (9.0 * k), z = 3.0902;
    double c = 1.0 - a + z * sqrt(a);
    return k * c * c * c;
}
