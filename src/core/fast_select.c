/* fast_select.c - the selections of the O(V) sampler (sampler_fast.c): the
 * kept list and the blocks' maxima, the exponentials computed once, the heap
 * of the best k tokens, and the radix descent that finds the token where a
 * running count or mass reaches its target (the file comment of
 * sampler_fast.c says how). Every work area is the trace's (caller-owned). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fast_int.h"
#include "core/fast_vec.h"
#include "core/fastexp.h"
#include "core/vecmath.h"

int fast_rewrites_after(const struct sampler_settings *s, int c, int V)
{
    for (int j = c + 1; j < s->chain.n; j++) {
        enum stage st = s->chain.stage[j];
        if (stage_rewrites(s, st) && stage_active(s, st, V))
            return 1;
    }
    return 0;
}

int fast_p_max_waits(const struct sampler_settings *s, int c, int V)
{
    return (FAST_LATER_P >> s->chain.stage[c] & 1u) && fast_rewrites_after(s, c, V);
}

/* Whether the temperature divides z' (T neither 0 nor 1) and is the only
 * active stage of s that rewrites it. */
static int only_rewrite_is_t(const struct sampler_settings *s, int V)
{
    int t = 0;
    for (int j = 0; j < s->chain.n; j++) {
        enum stage st = s->chain.stage[j];
        if (!stage_rewrites(s, st) || !stage_active(s, st, V))
            continue;
        if (st != STAGE_TEMPERATURE || s->dynatemp_range > 0.0) /* a dynamic T is not known ahead */
            return 0;
        t = 1;
    }
    return t;
}

/* What the load can do besides z' = logit + shift, so that the row is
 * read once. The plan: divide by the temperature when that is the first
 * stage of the chain to act; add up the exponentials when z' then stays as
 * loaded until a stage cuts (or to the end), where they are needed next --
 * not for a first cut whose p_max waits (fast_p_max_waits); and when that
 * first cut comes before the temperature and nothing else rewrites z'
 * (llama.cpp's order), make the temperature's quotients and their sums
 * ahead, for the temperature stage to take (fast_divide), so that no
 * second pass is needed there. */
struct load_plan {
    int divide, sums, ahead;
};

static struct load_plan load_plan(const struct sampler_settings *s, int V)
{
    struct load_plan p = { 0, 0, 0 };
    int c = 0, n = s->chain.n;
    while (c < n && !stage_active(s, s->chain.stage[c], V))
        c++;
    p.divide = c < n && s->chain.stage[c] == STAGE_TEMPERATURE &&
               stage_rewrites(s, STAGE_TEMPERATURE) && s->dynatemp_range <= 0.0;
    for (c += p.divide; c < n && !stage_active(s, s->chain.stage[c], V);)
        c++;
    int waits = c < n && stage_cuts(s, s->chain.stage[c]) && fast_p_max_waits(s, c, V);
    p.sums = c == n || (stage_cuts(s, s->chain.stage[c]) && !waits);
    if (waits && !p.divide && only_rewrite_is_t(s, V))
        p.sums = p.ahead = 1;
    return p;
}

/* The load of fv_load_* as plan p says. Returns the count of z' out of
 * range. */
static int load_with(struct fast *f, struct load_plan p)
{
    const struct sampler_input *in = f->in;
    struct fv_load ld = { .n = f->V,
                          .shift = f->s->shift,
                          .t = p.divide ? f->s->temperature : 1.0,
                          .mark = f->mark,
                          .block_max = f->block_max,
                          .kept = MARK_KEPT,
                          .masked = MARK_MASKED,
                          .sums = p.sums,
                          .ahead = p.ahead ? f->t->fz_pre : NULL,
                          .t_ahead = f->s->temperature };
    int bad = fv_load_on(f->vec, in->logits ? NULL : in->logits_f, in->logits, f->z, &ld);
    f->n_alive = ld.n_kept;
    f->block_valid = 1;
    f->t_loaded = p.divide;
    f->ahead = p.ahead && !bad && !ld.ahead_bad;
    if (p.sums && !bad && !p.ahead) {
        f->e_max = ld.max;
        f->e_sum = ld.sum;
        f->e_offset = ld.offset;
        f->sum_valid = 1;
    } else if (f->ahead) {
        f->ahead_sums[0] = ld.max;
        f->ahead_sums[1] = ld.sum;
        f->ahead_sums[2] = ld.offset;
    }
    return bad;
}

int fast_load(struct fast *f)
{
    struct load_plan p = load_plan(f->s, f->V);
    /* A bad value found after a division may be the temperature's fault,
     * and a division by T > 1 may bring a logit past the limit back within
     * it (5e30 / 10): either way load again without it, so that the right
     * check speaks -- the load's, or the temperature stage's after it. */
    int bad = load_with(f, p);
    double T = f->s->temperature;
    if (!bad && p.divide && T > 1.0 && vm_magnitude(f->z, 0, f->V, 0.0) * T > RULE_Z_LIMIT / 2)
        bad = 1;
    return bad && p.divide ? load_with(f, (struct load_plan){ 0, 0, 0 }) : bad;
}

int fast_reserve_sorted(struct fast *f, size_t n)
{
    if (n <= f->sorted_cap)
        return 0;
    struct zid *p = realloc(f->sorted, n * sizeof *p);
    if (!p)
        return -1;
    f->sorted = p;
    f->sorted_cap = n;
    return 0;
}

void fast_build_alive(struct fast *f)
{
    if (!f->all_alive)
        return;
    int k = 0;
    for (int i = 0; i < f->V; i++)
        if (f->mark[i] == MARK_KEPT)
            f->alive[k++] = i;
    f->n_alive = k;
    f->all_alive = 0;
}

void fast_keys(struct fast *f)
{
    if (!f->keys_valid) {
        vm_keys_on(f->vec, f->z, f->key, f->V);
        f->keys_valid = 1;
    }
}

void fast_blocks(struct fast *f)
{
    if (!f->block_valid) {
        vm_block_max_on(f->vec, f->z, f->V, f->block_max);
        f->block_valid = 1;
    }
}

/* The shift of the exponentials: the largest z' of all. */
static void set_e_max(struct fast *f)
{
    fast_blocks(f);
    f->e_max = vm_largest_on(f->vec, f->block_max, fast_n_blocks(f));
}

void fast_exps(struct fast *f)
{
    if (!f->e_valid) {
        set_e_max(f);
        f->e_sum = fv_exp_stats_on(f->vec, f->z, f->e_max, f->e, f->V, &f->e_offset);
        f->e_valid = f->sum_valid = f->kept_e_valid = 1;
    }
}

void fast_sum(struct fast *f)
{
    if (!f->sum_valid) {
        set_e_max(f);
        f->e_sum = fv_exp_stats_on(f->vec, f->z, f->e_max, NULL, f->V, &f->e_offset);
        f->sum_valid = 1;
    }
}

void fast_exps_kept(struct fast *f)
{
    if (f->all_alive) {
        fast_exps(f);
    } else if (!f->kept_e_valid && f->n_alive > f->V / KEPT_DENSE) {
        fast_exps(f); /* one vector pass beats so many lookups */
    } else if (!f->kept_e_valid) {
        if (!f->sum_valid) /* else e_max holds: no look at every block */
            set_e_max(f);
        for (int j = 0; j < f->n_alive; j++)
            f->e[f->alive[j]] = fast_exp(f->z[f->alive[j]] - f->e_max);
        f->kept_e_valid = 1;
    }
}

double fast_e(const struct fast *f, int i)
{
    int stored = f->e_valid || (f->kept_e_valid && !f->all_alive && f->mark[i] == MARK_KEPT);
    return stored ? f->e[i] : fast_exp(f->z[i] - f->e_max);
}

void fast_values_changed(struct fast *f)
{
    f->best_all = -1;
    f->best_cached = 0;
    f->e_valid = 0;
    f->sum_valid = 0;
    f->kept_e_valid = 0;
    f->keys_valid = 0;
    f->block_valid = 0;
}

/* Whether an active stage after st in the chain rewrites z'. */
static int rewritten_after(const struct fast *f, enum stage st)
{
    int c = 0;
    while (c < f->s->chain.n && f->s->chain.stage[c] != st)
        c++;
    return c < f->s->chain.n && fast_rewrites_after(f->s, c, f->V);
}

/* z' /= T (T > 0); returns the largest |z'| before, over the tokens not
 * masked. Division by T keeps the order, so each block's largest quotient
 * is its largest z' divided by T. When z' is final after it, the
 * exponentials' sums come in the same pass: every step needs them. */
double fast_divide(struct fast *f, double T, int keep)
{
    int blocks = f->block_valid;
    double zmax, *src = f->z;
    int cached = f->best_cached;
    fast_values_changed(f);
    f->best_cached = cached; /* the division keeps the order: see best_from_cache */
    f->best_resort = cached > 0;
    if (blocks) /* division keeps the order: the quotients' maxima */
        vm_quotients_on(f->vec, f->block_max, T, fast_n_blocks(f));
    f->block_valid = blocks;
    if (f->ahead || keep) { /* z' of before stays in fz_pre; the other array becomes z' */
        f->z = f->t->fz_pre;
        f->t->fz_pre = src;
        f->t->fz = f->z;
    }
    if (f->ahead) {
        /* The load made the quotients there, every one in range, and their sums. */
        f->e_max = f->ahead_sums[0];
        f->e_sum = f->ahead_sums[1];
        f->e_offset = f->ahead_sums[2];
        f->sum_valid = 1;
        f->ahead = 0;
        return 0.0;
    }
    if (!blocks || rewritten_after(f, STAGE_TEMPERATURE)) {
        if (keep)
            memcpy(f->z, src, (size_t)f->V * sizeof *f->z);
        return vm_divide_on(f->vec, f->z, T, f->V);
    }
    double max = vm_largest_on(f->vec, f->block_max, fast_n_blocks(f));
    f->e_max = max;
    f->e_sum = fv_divide_exp_stats_on(f->vec, src, f->z, T, max, f->V, &f->e_offset, &zmax);
    f->sum_valid = 1;
    return zmax;
}

/* After the penalties changed z' of the window's tokens: what depends on
 * z' is stale, but for the blocks' maxima, which are taken again only for
 * the blocks that hold a seen token (all of them, for a window that is
 * long against the vocabulary). */
void fast_penalized_blocks(struct fast *f, int start)
{
    fast_changed_ids(f, f->in->context + start, f->in->context_len - start);
}

void fast_changed_ids(struct fast *f, const int *ids, int k)
{
    int blocks = f->block_valid;
    fast_values_changed(f);
    if (!blocks || (long)k * VM_BLOCK > f->V)
        return;
    for (int j = 0; j < k; j++) {
        int b = ids[j] / VM_BLOCK, hi = fast_block_end(f, b);
        double m = -INFINITY;
        for (int i = b * VM_BLOCK; i < hi; i++)
            m = f->z[i] > m ? f->z[i] : m;
        f->block_max[b] = m;
    }
    f->block_valid = 1;
}

/* Some stage changed z' after a cut: what each cut removed, at the final
 * z'. The later cuts' tokens are listed; the first cut removed the rest
 * (masked tokens weigh 0), so its mass is what the others leave of S. */
void fast_removed_masses(struct fast *f, double S, double K)
{
    if (!f->dropped) { /* no room for the list: a pass over the marks */
        for (int i = 0; i < f->V; i++)
            if (f->mark[i] != MARK_KEPT)
                f->removed_mass[f->mark[i]] += fast_e(f, i);
        return;
    }
    double later = 0.0;
    for (int j = 0; j < f->n_dropped; j++) {
        int i = f->dropped[j];
        double e = fast_e(f, i);
        f->removed_mass[f->mark[i]] += e;
        later += e;
    }
    f->removed_mass[f->first_cut] += S - K - later;
}

/* The most likely kept token (ties to the lower id). */
int fast_alive_best(struct fast *f)
{
    int best = -1;
    if (f->all_alive) {
        /* The first block holding the largest z, then the first such token
         * in it; kept until z' changes (several stages ask). */
        if (f->best_all >= 0)
            return f->best_all;
        fast_blocks(f);
        int blocks = fast_n_blocks(f);
        int bb = vm_first_at_least_on(f->vec, f->block_max, 0, blocks,
                                      vm_largest_on(f->vec, f->block_max, blocks), 0);
        for (int i = bb * VM_BLOCK; i < f->V; i++)
            if (f->z[i] == f->block_max[bb])
                return f->best_all = i;
        return -1;
    }
    for (int j = 0; j < f->n_alive; j++) {
        int i = f->alive[j];
        if (best < 0 || rule_ranks_before(f->z[i], i, f->z[best], best))
            best = i;
    }
    return best;
}

/* Sum of e over the kept tokens (e must be valid). */
double fast_alive_mass(const struct fast *f)
{
    if (f->all_alive)
        return f->e_sum; /* masked tokens add 0 */
    double s = 0.0;
    for (int j = 0; j < f->n_alive; j++)
        s += f->e[f->alive[j]];
    return s;
}

static struct pick walk_pick(int id, const struct rule_walk *w)
{
    return (struct pick){ id, w->count, rule_mass_value(w->mass) };
}

/* Walks the kept tokens in rank order and finds the first at which the
 * running count (weight NULL) or weight reaches target (inclusive) or passes
 * it (strict): the radix descent of the file comment. Bucket masses and the
 * running mass are in fixed point (rule_mass), as in the kernels. */
struct pick fast_radix_pick(struct fast *f, const double *weight, double target, int strict)
{
    static const int SHIFTS[] = { 21, 10, 0 };
    static const uint32_t MASKS[] = { RADIX_BUCKETS - 1, RADIX_BUCKETS - 1, (1u << 10) - 1 };
    struct rule_walk w = { 0, { 0, 0 } };
    int *cand = f->cand;
    int n_cand = 0;
    uint32_t cnt[RADIX_BUCKETS];
    struct rule_mass mass[RADIX_BUCKETS];
    fast_keys(f);
    int dense = f->all_alive;
    for (int level = 0; level < 3; level++) {
        int shift = SHIFTS[level];
        uint32_t mask = MASKS[level];
        memset(cnt, 0, sizeof cnt);
        memset(mass, 0, sizeof mass);
        int m = level > 0 ? n_cand : dense ? f->V : f->n_alive;
        const int *ids = level > 0 ? cand : f->alive;
        if (level == 0 && dense) {
            /* Neighbouring tokens often share a bucket; four separate
             * histograms let their additions run side by side. */
            uint32_t(*cnt4)[RADIX_BUCKETS] = f->hist_count;
            struct rule_mass(*mass4)[RADIX_BUCKETS] = f->hist_mass;
            memset(cnt4, 0, HIST_COPIES * sizeof *cnt4);
            memset(mass4, 0, HIST_COPIES * sizeof *mass4);
            for (int i = 0; i < m; i++) {
                if (f->mark[i] != MARK_KEPT)
                    continue;
                uint32_t b = (f->key[i] >> shift) & mask;
                cnt4[i % HIST_COPIES][b]++;
                if (weight)
                    rule_mass_add(&mass4[i % HIST_COPIES][b], rule_mass_units(weight[i]));
            }
            for (int b = 0; b < RADIX_BUCKETS; b++) {
                cnt[b] = cnt4[0][b] + cnt4[1][b] + cnt4[2][b] + cnt4[3][b];
                mass[b] = rule_mass_add2(rule_mass_add2(mass4[0][b], mass4[1][b]),
                                         rule_mass_add2(mass4[2][b], mass4[3][b]));
            }
        } else {
            for (int j = 0; j < m; j++) {
                int i = level == 0 && dense ? j : ids[j];
                if (f->mark[i] != MARK_KEPT)
                    continue;
                uint32_t b = (f->key[i] >> shift) & mask;
                cnt[b]++;
                if (weight)
                    rule_mass_add(&mass[b], rule_mass_units(weight[i]));
            }
        }
        int sel = -1;
        for (int b = (int)mask; b >= 0; b--)
            if (cnt[b] > 0 &&
                rule_walk_step(&w, (int)cnt[b], mass[b], weight != NULL, strict, target)) {
                sel = b;
                break;
            }
        if (sel < 0)
            return walk_pick(-1, &w);
        int k = 0; /* keep the chosen bucket, in place: writes never overtake reads */
        for (int j = 0; j < m; j++) {
            int i = level == 0 && dense ? j : ids[j];
            if (f->mark[i] == MARK_KEPT && (int)((f->key[i] >> shift) & mask) == sel)
                cand[k++] = i;
        }
        n_cand = k;
        if (n_cand <= SMALL_SET)
            break;
    }
    if (fast_reserve_sorted(f, (size_t)n_cand) < 0)
        return (struct pick){ -2, 0, 0.0 };
    for (int j = 0; j < n_cand; j++)
        f->sorted[j] = (struct zid){ f->z[cand[j]], cand[j] };
    qsort(f->sorted, (size_t)n_cand, sizeof *f->sorted, rule_zid_cmp);
    for (int j = 0; j < n_cand; j++) {
        int i = f->sorted[j].id;
        struct rule_mass m = { weight ? rule_mass_units(weight[i]) : 0, 0 };
        if (rule_walk_step(&w, 1, m, weight != NULL, strict, target))
            return walk_pick(i, &w);
    }
    return walk_pick(-1, &w);
}

/* The heap of the k best tokens seen: the worst of them at the root. */
static void heap_down(struct zid *h, int n, int at)
{
    for (;;) {
        int l = 2 * at + 1, r = l + 1, worst = at;
        if (l < n && rule_ranks_before(h[worst].z, h[worst].id, h[l].z, h[l].id))
            worst = l;
        if (r < n && rule_ranks_before(h[worst].z, h[worst].id, h[r].z, h[r].id))
            worst = r;
        if (worst == at)
            return;
        struct zid t = h[at];
        h[at] = h[worst];
        h[worst] = t;
        at = worst;
    }
}

static void heap_offer(struct zid *h, int *n, int k, double z, int id)
{
    if (*n < k) {
        int at = (*n)++;
        h[at] = (struct zid){ z, id };
        while (at > 0) { /* up while it is worse than its parent */
            int up = (at - 1) / 2;
            if (!rule_ranks_before(h[up].z, h[up].id, h[at].z, h[at].id))
                break;
            struct zid t = h[at];
            h[at] = h[up];
            h[up] = t;
            at = up;
        }
    } else if (rule_ranks_before(z, id, h[0].z, h[0].id)) {
        h[0] = (struct zid){ z, id };
        heap_down(h, k, 0);
    }
}

/* The k-th largest of the blocks' maxima, or -inf when there are fewer
 * than k blocks: k blocks reach it, each with a token (its maximum) at or
 * above it, so the k best tokens are all at or above it. The heap of
 * f->sorted holds the blocks while it is found. */
static double blocks_bar(struct fast *f, int k)
{
    int blocks = fast_n_blocks(f), n = 0;
    if (blocks < k)
        return -INFINITY;
    struct zid *h = f->sorted;
    for (int b = 0; b < k; b++)
        heap_offer(h, &n, k, f->block_max[b], b);
    for (int b = k; (b = vm_first_at_least_on(f->vec, f->block_max, b, blocks, h[0].z, 1)) < blocks;
         b++)
        heap_offer(h, &n, k, f->block_max[b], b);
    return h[0].z;
}

/* The k best tokens of the kept set (all finite tokens when all is set),
 * sorted into f->sorted[0..n). Returns n, or -1 when out of memory. */
/* The best tokens of all that the last full scan found, while z' holds:
 * a later ask for as many or fewer (the rows after top-k) takes them
 * without a scan. Returns n, or -1 when the cache cannot answer. */
static int best_from_cache(struct fast *f, int k)
{
    if (f->best_cached && f->best_resort) {
        /* z' was divided since (a rewrite that keeps the order, but may
         * make ties): sorted again at z' of now, the entries above the
         * smallest are still the best of all -- a token outside was at or
         * below it, and still is. */
        int n = f->best_cached, g = 0;
        for (int j = 0; j < n; j++)
            f->best_cache[j].z = f->z[f->best_cache[j].id];
        qsort(f->best_cache, (size_t)n, sizeof *f->best_cache, rule_zid_cmp);
        while (g < n && f->best_cache[g].z > f->best_cache[n - 1].z)
            g++;
        f->best_cached = g;
        f->best_resort = 0;
    }
    if (!f->best_cache || f->best_cached < k)
        return -1;
    memcpy(f->sorted, f->best_cache, (size_t)k * sizeof *f->sorted);
    return k;
}

static void best_to_cache(struct fast *f, int n, int k)
{
    if (n < k) /* fewer finite tokens than asked: not a prefix of a larger ask */
        return;
    struct zid *c = realloc(f->best_cache, (size_t)n * sizeof *c);
    if (!c)
        return; /* no cache: the next ask scans */
    memcpy(c, f->sorted, (size_t)n * sizeof *c);
    f->best_cache = c;
    f->best_cached = n;
}

int fast_best_k(struct fast *f, int k, int all)
{
    if (fast_reserve_sorted(f, (size_t)k) < 0)
        return -1;
    struct zid *h = f->sorted;
    int n = 0;
    if ((all || f->all_alive) && best_from_cache(f, k) == k)
        return k;
    if (all || f->all_alive) {
        /* Once the heap is full, a block whose largest z is below the
         * heap's worst holds no candidate: skip it whole. And from the
         * start nothing below bar can be among the k best. */
        fast_blocks(f);
        double bar = blocks_bar(f, k);
        int blocks = fast_n_blocks(f);
        /* The blocks at or above bar, and once the heap is full at or above its worst. */
        for (int b = 0;
             (b = vm_first_at_least_on(f->vec, f->block_max, b, blocks,
                                       n == k && h[0].z > bar ? h[0].z : bar, 0)) < blocks;
             b++) {
            int hi = fast_block_end(f, b);
            for (int i = b * VM_BLOCK; i < hi; i++) {
                if (f->z[i] < bar || (n == k && f->z[i] < h[0].z))
                    continue;
                if (f->z[i] != -INFINITY && (all || f->mark[i] == MARK_KEPT))
                    heap_offer(h, &n, k, f->z[i], i);
            }
        }
    } else {
        for (int j = 0; j < f->n_alive; j++) {
            int i = f->alive[j];
            if (n == k && f->z[i] < h[0].z)
                continue;
            heap_offer(h, &n, k, f->z[i], i);
        }
    }
    qsort(h, (size_t)n, sizeof *h, rule_zid_cmp);
    if (all || f->all_alive)
        best_to_cache(f, n, k);
    return n;
}
