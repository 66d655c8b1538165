/* backend_spec.c - the GPU sampler's two-pass design on the CPU (see
 * backend_spec.h and core/candidates.h): pass 1 over the row for the checks,
 * the largest z', the sums and the bucket counts; the buckets the candidate
 * list starts at; pass 2 for the list; then the chain on the list, stage by
 * stage as sampler_fast.c runs it on the row. Each z' is recomputed from
 * the float logit with the CPU's operations, so every per-token value has
 * the CPU's bits; only the sums over many tokens add in another order. */
#include "backend/backend_spec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/candidates.h"
#include "core/fastexp.h"

/* A stage that may remove tokens in a row of V: greedy, top-k below V,
 * top-p, min-p. */
static int may_cut(const struct sampler_settings *s, enum stage st, int V)
{
    switch (st) {
    case STAGE_TEMPERATURE:
        return s->temperature == 0.0;
    case STAGE_TOP_K:
        return s->top_k > 0 && s->top_k < V;
    case STAGE_TOP_P:
        return s->top_p < 1.0;
    case STAGE_MIN_P:
        return s->min_p > 0.0;
    default:
        return 0;
    }
}

int cand_plan_make(struct cand_plan *P, const struct sampler_settings *s, int V)
{
    *P = (struct cand_plan){ .n_versions = 1,
                             .first_cut = -1,
                             .shift = s->shift,
                             .temperature = s->temperature,
                             .alpha = s->repetition_penalty,
                             .frequency = s->frequency_penalty,
                             .presence = s->presence_penalty,
                             .lesson_formula = s->penalty_formula == PENALTY_LESSON };
    for (int c = 0; c < s->chain.n; c++) {
        enum stage st = s->chain.stage[c];
        if (st != STAGE_PENALTY && st != STAGE_TEMPERATURE && st != STAGE_TOP_K &&
            st != STAGE_TOP_P && st != STAGE_MIN_P) {
            if (stage_active(s, st, V))
                return -1;
            continue; /* off: as if it were not in the chain */
        }
        if (P->first_cut < 0 && may_cut(s, st, V)) {
            P->first_cut = P->n;
            P->cut_version = P->n_versions - 1;
        }
        P->greedy |= st == STAGE_TEMPERATURE && s->temperature == 0.0;
        P->st[P->n] = (int)st;
        P->version[P->n++] = P->n_versions - 1;
        if ((st == STAGE_PENALTY && stage_active(s, st, V)) ||
            (st == STAGE_TEMPERATURE && s->temperature != 0.0 && s->temperature != 1.0))
            P->value[P->n_versions++ - 1] = (int)st;
    }
    P->final = P->n_versions - 1;
    if (P->first_cut < 0)
        P->cut_version = P->final;
    return 0;
}

/* The request's row and what the passes found. */
struct row {
    const struct backend_req *q;
    const float *lg;
    int V;
    int *count; /* the penalty window's counts, zero elsewhere */
    struct cand_plan P;
    int n_finite;
    double max[CAND_VERSIONS];
    double S_cut, S, offset; /* sums at the first cut's version and at the end */
    uint32_t hist_cut[CAND_BUCKETS], hist_final[CAND_BUCKETS];
    double w_lo[CAND_BUCKETS]; /* bucket_bounds' */
};

/* z' of token i at version v. */
static double z_at(const struct row *r, int i, int v)
{
    return cand_z(&r->P, r->lg[i], r->count[i], v);
}

/* The checks of the load and of each value stage, in the chain's order, as
 * sampler_run_fast words them (the lowest id first). */
static int check_row(struct row *r, struct err *e)
{
    const struct sampler_settings *s = &r->q->s;
    r->n_finite = 0;
    for (int i = 0; i < r->V; i++) {
        double z = z_at(r, i, 0);
        if (isnan(z) || z == INFINITY)
            return err_set(e, ERR_USAGE, "logit of token %d is %s", i, isnan(z) ? "NaN" : "+inf");
        if (z != -INFINITY && !rule_z_in_range(z))
            return sampler_range_error(s, SAMPLER_AT_START, i, (double)r->lg[i], z, 0.0, e);
        r->n_finite += z != -INFINITY;
    }
    if (!r->n_finite)
        return err_set(e, ERR_USAGE, "no token has a finite logit");
    for (int v = 1; v < r->P.n_versions; v++) {
        enum stage st = (enum stage)r->P.value[v - 1];
        double zmax = 0.0; /* vm_divide's: the largest |z'| not -inf, before */
        for (int i = 0; st == STAGE_TEMPERATURE && i < r->V; i++) {
            double z = z_at(r, i, v - 1);
            zmax = z != -INFINITY && fabs(z) > zmax ? fabs(z) : zmax;
        }
        if (st == STAGE_TEMPERATURE && !(zmax / s->temperature > RULE_Z_LIMIT))
            continue;
        for (int i = 0; i < r->V; i++) {
            double z = z_at(r, i, v);
            if (r->lg[i] != -INFINITY && !rule_z_in_range(z))
                return sampler_range_error(s, st, i, 0.0, z, st == STAGE_TEMPERATURE ? zmax : 0.0,
                                           e);
        }
    }
    return 0;
}

/* Pass 1: the largest z' of each version, the sums at the first cut's and
 * the final version, and the two histograms. (The kernel keeps the sums
 * online, folding each block's at its own largest z'.) */
static void pass1(struct row *r)
{
    for (int v = 0; v < r->P.n_versions; v++) {
        r->max[v] = -INFINITY;
        for (int i = 0; i < r->V; i++) {
            double z = z_at(r, i, v);
            r->max[v] = z > r->max[v] ? z : r->max[v];
        }
    }
    int vc = r->P.cut_version, vf = r->P.final;
    r->S_cut = r->S = r->offset = 0.0;
    memset(r->hist_cut, 0, sizeof r->hist_cut);
    memset(r->hist_final, 0, sizeof r->hist_final);
    for (int i = 0; i < r->V; i++) {
        double zc = z_at(r, i, vc), zf = z_at(r, i, vf);
        if (zf == -INFINITY)
            continue;
        double ef = fast_exp(zf - r->max[vf]);
        r->S += ef;
        r->offset += ef > 0.0 ? ef * (zf - r->max[vf]) : 0.0;
        r->S_cut += fast_exp(zc - r->max[vc]);
        r->hist_cut[cand_digit(zc)]++;
        r->hist_final[cand_digit(zf)]++;
    }
}

/* The lower bounds of e^(z' - max) per bucket, for cand_mass_bucket. */
static void bucket_bounds(double max, double *w_lo)
{
    for (int b = 0; b < CAND_BUCKETS; b++)
        w_lo[b] = fast_exp(cand_floor(b) - max) * CAND_MARGIN;
}

/* The candidate list's predicate: the buckets the first cut and the rows
 * start at (cut_bucket CAND_NONE with a cut: every token; the min-p test
 * instead with min-p first). */
struct pick {
    int cut_bucket, min_p, row_bucket;
    double bar;
};

/* Where the list starts: the first cut's bucket (with no cut, the draw's:
 * every finite token is kept, and u lands where the mass from the top
 * reaches u S), and the rows' bucket. */
static struct pick list_start(struct row *r, int n_rows)
{
    const struct sampler_settings *s = &r->q->s;
    struct pick k = { CAND_NONE, 0, CAND_BUCKETS, 0.0 };
    double *w_lo = r->w_lo;
    if (n_rows > 0)
        k.row_bucket = cand_count_bucket(r->hist_final, n_rows);
    int c = r->P.first_cut;
    enum stage st = c >= 0 ? (enum stage)r->P.st[c] : STAGE_COUNT;
    if (st == STAGE_TEMPERATURE) {
        k.cut_bucket = cand_count_bucket(r->hist_cut, 1);
    } else if (st == STAGE_TOP_K) {
        k.cut_bucket = cand_count_bucket(r->hist_cut, s->top_k);
    } else if (st == STAGE_TOP_P) {
        bucket_bounds(r->max[r->P.cut_version], w_lo);
        k.cut_bucket = cand_mass_bucket(r->hist_cut, w_lo, s->top_p * r->S_cut);
    } else if (st == STAGE_MIN_P) {
        k.min_p = 1;
        k.bar = rule_min_p_bar(s->min_p);
    } else {
        bucket_bounds(r->max[r->P.final], w_lo);
        double u = sampler_u(s->seed, r->q->step, r->q->row, 0);
        k.cut_bucket = cand_mass_bucket(r->hist_final, w_lo, u * r->S);
    }
    return k;
}

/* The list: each candidate's id, its z' at every version, its mark (0
 * kept, else 1 + the stage that removed it). */
struct list {
    int n;
    int id[CAND_MAX];
    double z[CAND_VERSIONS][CAND_MAX];
    uint8_t mark[CAND_MAX];
    int order[CAND_MAX]; /* a rank order of the list, by the version sort_list used */
    int tmp[CAND_MAX];   /* sort_list's */
    double ef[CAND_MAX]; /* e^(z' - max) at the final version */
};

/* Pass 2: the tokens the pick lets through. Returns -1 when they are more
 * than CAND_MAX. */
static int pass2(const struct row *r, const struct pick *k, struct list *L)
{
    int vc = r->P.cut_version, vf = r->P.final;
    L->n = 0;
    for (int i = 0; i < r->V; i++) {
        double zc = z_at(r, i, vc), zf = z_at(r, i, vf);
        if (zf == -INFINITY)
            continue;
        int in = k->min_p ? rule_min_p_keeps(zc, r->max[vc], k->bar)
                          : k->cut_bucket == CAND_NONE || cand_digit(zc) >= k->cut_bucket;
        if (!in && cand_digit(zf) < k->row_bucket)
            continue;
        if (L->n == CAND_MAX)
            return -1;
        L->id[L->n] = i;
        for (int v = 0; v < r->P.n_versions; v++)
            L->z[v][L->n] = z_at(r, i, v);
        L->mark[L->n++] = 0;
    }
    return 0;
}

/* Whether candidate x ranks before y at version v. */
static int before(const struct list *L, int v, int x, int y)
{
    return rule_ranks_before(L->z[v][x], L->id[x], L->z[v][y], L->id[y]);
}

/* The candidates in rank order at version v (only the kept ones, with
 * kept_only), into L->order, by a merge sort; returns how many. */
static int sort_list(struct list *L, int v, int kept_only)
{
    int n = 0;
    for (int j = 0; j < L->n; j++)
        if (!kept_only || L->mark[j] == 0)
            L->order[n++] = j;
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int a = lo, b = mid, k = lo;
            while (a < mid || b < hi)
                L->tmp[k++] = b >= hi || (a < mid && !before(L, v, L->order[b], L->order[a]))
                                  ? L->order[a++]
                                  : L->order[b++];
        }
        memcpy(L->order, L->tmp, (size_t)n * sizeof *L->order);
    }
    return n;
}

/* Every kept candidate ranked after order[last] at version v goes (with
 * keep_ties, only those with a smaller z'). */
static void cut_after(struct list *L, int n, int last, int v, int keep_ties, enum stage st)
{
    double zc = L->z[v][L->order[last]];
    for (int r = last + 1; r < n; r++) {
        int j = L->order[r];
        if (!keep_ties || L->z[v][j] < zc)
            L->mark[j] = (uint8_t)(1 + st);
    }
}

/* One cutting stage on the kept candidates, as sampler_fast.c's. first:
 * the stage is the first cut, so every finite token is still kept and the
 * kept mass is pass 1's S_cut. Returns -1 when top-p's cut is not on the
 * list, which the buckets promise cannot happen. */
static int cut_stage(const struct row *r, struct list *L, enum stage st, int v, int first,
                     struct err *e)
{
    const struct sampler_settings *s = &r->q->s;
    int n = sort_list(L, v, 1);
    if (n == 0)
        return 0;
    if (st == STAGE_TEMPERATURE) { /* greedy: the best kept token alone */
        cut_after(L, n, 0, v, 0, st);
    } else if (st == STAGE_TOP_K) {
        if (s->top_k > 0 && s->top_k < (first ? r->n_finite : n))
            cut_after(L, n, s->top_k - 1, v, s->chain.topk_keep_ties, st);
    } else if (st == STAGE_TOP_P) {
        if (s->top_p >= 1.0)
            return 0;
        double sum = 0.0;
        for (int j = 0; j < L->n && !first; j++)
            sum += L->mark[j] == 0 ? fast_exp(L->z[v][j] - r->max[v]) : 0.0;
        double target = s->top_p * (first ? r->S_cut : sum), run = 0.0;
        for (int q = 0; q < n; q++) {
            double ev = fast_exp(L->z[v][L->order[q]] - r->max[v]);
            if (run + ev >= target) {
                cut_after(L, n, q, v, 0, st);
                return 0;
            }
            run += ev;
        }
        if (first && L->n < r->n_finite)
            return err_set(e, ERR_SYSTEM, "candidate list: top-p's cut is not on it");
    } else if (st == STAGE_MIN_P) {
        if (s->min_p <= 0.0)
            return 0;
        double max = L->z[v][L->order[0]], bar = rule_min_p_bar(s->min_p);
        for (int q = 1; q < n; q++)
            if (!rule_min_p_keeps(L->z[v][L->order[q]], max, bar))
                L->mark[L->order[q]] = (uint8_t)(1 + st);
    }
    return 0;
}

/* The chain on the list. Returns whether any stage cut (else every finite
 * token is kept), or -1 on error. */
static int run_list(const struct row *r, struct list *L, struct err *e)
{
    int cut = 0;
    for (int c = 0; c < r->P.n; c++) {
        enum stage st = (enum stage)r->P.st[c];
        if (st == STAGE_PENALTY || (st == STAGE_TEMPERATURE && r->q->s.temperature != 0.0))
            continue; /* a value stage: its z' are the next version's */
        if (!cut && c != r->P.first_cut)
            continue; /* before the first cut nothing cuts (top-k at or past the count) */
        if (cut_stage(r, L, st, r->P.version[c], !cut, e) < 0)
            return -1;
        cut = 1;
    }
    return cut;
}

/* The draw on the kept candidates in final rank order (n of them, sorted):
 * the first whose running mass passes u K; -1 when rounding leaves the
 * total under it. */
static int draw(const struct list *L, int n, const double *ef, double u, double K)
{
    double run = 0.0;
    for (int q = 0; q < n; q++) {
        int j = L->order[q];
        if (run + ef[j] > u * K)
            return j;
        run += ef[j];
    }
    return -1;
}

/* The statistics of the final distribution: from pass 1 over every token,
 * and the kept mass from the list (pass 1's when nothing cut). */
static void statistics(const struct row *r, const struct list *L, int cut, const double *ef,
                       struct backend_res *o, double *K)
{
    int vf = r->P.final, kept = 0;
    double kept_offset = 0.0;
    *K = 0.0;
    for (int j = 0; j < L->n; j++) {
        if (L->mark[j] != 0)
            continue;
        kept++;
        *K += ef[j];
        kept_offset += ef[j] > 0.0 ? ef[j] * (L->z[vf][j] - r->max[vf]) : 0.0;
    }
    if (!cut) { /* every finite token is kept, most of them off the list */
        *K = r->S;
        kept_offset = r->offset;
        kept = r->n_finite;
    }
    *o = (struct backend_res){ .max_z = r->max[vf],
                               .sum_exp = r->S,
                               .kept_count = kept,
                               .kept_mass = *K / r->S,
                               .entropy = log(r->S) - r->offset / r->S,
                               .entropy_final = *K > 0 ? log(*K) - kept_offset / *K : 0.0 };
}

/* The result from the list after the chain: the statistics, the token, and
 * the rows (the best finite tokens of all, every one of them on the list).
 * Returns -1 when a draw with nothing cut fell past the list, which the
 * buckets promise cannot happen. */
static int result(const struct row *r, struct list *L, int cut, int n_rows, struct backend_res *o,
                  double *K_out, struct err *e)
{
    const struct sampler_settings *s = &r->q->s;
    int vf = r->P.final;
    double *ef = L->ef;
    for (int j = 0; j < L->n; j++)
        ef[j] = fast_exp(L->z[vf][j] - r->max[vf]);
    double K;
    statistics(r, L, cut, ef, o, &K);
    *K_out = K;
    int n_kept = sort_list(L, vf, 1);
    if (n_kept == 0) /* every cut keeps one: the buckets left the kept ones off */
        return err_set(e, ERR_SYSTEM, "candidate list: no kept token on it");
    int j = L->order[0];
    if (!r->P.greedy) {
        o->sampled = 1;
        o->u = sampler_u(s->seed, r->q->step, r->q->row, 0);
        j = draw(L, n_kept, ef, o->u, K);
        if (j < 0 && !cut && L->n < r->n_finite)
            return err_set(e, ERR_SYSTEM, "candidate list: the draw fell past it");
        if (j < 0) /* rounding: the last kept token takes it */
            j = L->order[n_kept - 1];
    }
    o->id = L->id[j];
    o->final = K > 0 ? ef[j] / K : 0.0;
    int n = sort_list(L, vf, 0);
    o->n_top = n_rows < n ? n_rows : n;
    for (int q = 0; q < o->n_top; q++) {
        int c = L->order[q], k = L->mark[c] == 0;
        o->top[q] = (struct backend_top){ .id = L->id[c],
                                          .removed_by = k ? TRACE_KEPT : L->mark[c] - 1,
                                          .z = L->z[vf][c],
                                          .prob = ef[c] / r->S,
                                          .final = k && K > 0 ? ef[c] / K : 0.0 };
    }
    return 0;
}

/* The explain pass, for a request that asks for every token's final
 * probability or kept flag (a test's): on the list from the marks; off it,
 * removed by the first cut, or kept when nothing cut. */
static void explain(const struct row *r, struct list *L, int cut, double K)
{
    const struct backend_req *q = r->q;
    int vf = r->P.final, j = 0;
    for (int i = 0; i < r->V; i++) {
        int on = j < L->n && L->id[j] == i; /* the list is in id order */
        double z = z_at(r, i, vf);
        int kept = on ? L->mark[j] == 0 : !cut && z != -INFINITY;
        j += on;
        if (q->kept_out)
            q->kept_out[i] = (uint8_t)kept;
        if (q->final_out)
            q->final_out[i] = kept && K > 0 ? fast_exp(z - r->max[vf]) / K : 0.0;
    }
}

/* The candidate path for one request: 1 done, 0 when it must take the full
 * path (nothing changed), -1 on error. */
static int by_candidates(struct row *r, struct list *L, struct backend_res *o, int *longest,
                         struct err *e)
{
    const struct backend_req *q = r->q;
    if (cand_plan_make(&r->P, &q->s, r->V) < 0)
        return 0;
    if (check_row(r, e) < 0)
        return -1;
    int c = r->P.first_cut;
    if (c >= 0 && r->P.st[c] == STAGE_TOP_K && q->s.top_k >= r->n_finite)
        return 0; /* masked tokens leave top-k nothing to cut: another stage cuts first */
    int n_rows = q->n_top < r->V ? q->n_top : r->V;
    if (n_rows > r->n_finite)
        return 0; /* masked tokens on the rows: the full path lists them by id */
    pass1(r);
    struct pick k = list_start(r, n_rows);
    if (pass2(r, &k, L) < 0)
        return 0;
    int cut = run_list(r, L, e);
    double K;
    if (cut < 0 || result(r, L, cut, n_rows, o, &K, e) < 0)
        return -1;
    if (q->final_out || q->kept_out)
        explain(r, L, cut, K);
    if (L->n > *longest)
        *longest = L->n;
    return 1;
}

/* The CPU backend's own sample for request i alone, its error named by i. */
static int full_path(struct backend *b, const struct backend_req *q, int i, struct backend_res *o,
                     struct err *e)
{
    if (backend_cpu_ops.sample(b, q, 1, o, e) == 0)
        return 0;
    static const char own[] = "request 0: ";
    if (!strncmp(e->msg, own, sizeof own - 1))
        memmove(e->msg, e->msg + sizeof own - 1, strlen(e->msg) - (sizeof own - 1) + 1);
    err_prefix(e, "request %d", i);
    return -1;
}

/* The penalty window of request q into count (zero before), or out of it. */
static void window_counts(const struct backend_req *q, int *count, int sign)
{
    int start = rule_window_start(q->s.penalty_scope == SCOPE_ALL, q->prompt_len, q->context_len,
                                  q->s.penalty_last_n);
    for (int j = start; j < q->context_len; j++)
        count[q->context[j]] += sign;
}

int backend_spec_sample(struct backend *b, const struct backend_req *req, int B,
                        struct backend_res *res, struct err *e)
{
    int V = b->V;
    float *lg = malloc((size_t)V * sizeof *lg);
    int *count = calloc((size_t)V, sizeof *count);
    struct row *r = malloc(sizeof *r);
    struct list *L = malloc(sizeof *L);
    int rc = 0;
    if (!lg || !count || !r || !L)
        rc = err_set(e, ERR_SYSTEM, "out of memory for the candidate path (%d tokens)", V);
    for (int i = 0; i < B && rc == 0; i++) {
        const struct backend_req *q = &req[i];
        if ((rc = backend_cpu_ops.get_logits(b, (int)q->row, lg, e)) < 0)
            break;
        *r = (struct row){ .q = q, .lg = lg, .V = V, .count = count };
        window_counts(q, count, 1);
        int done = by_candidates(r, L, &res[i], &b->longest_list, e);
        window_counts(q, count, -1);
        if (done < 0) {
            err_prefix(e, "request %d", i);
            rc = -1;
        } else if (done) {
            b->by_list++;
        } else {
            b->by_full++;
            rc = full_path(b, q, i, &res[i], e);
        }
    }
    free(lg);
    free(count);
    free(r);
    free(L);
    return rc;
}
