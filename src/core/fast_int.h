/* fast_int.h - the state of one run of the O(V) sampler, shared by its two
 * files: sampler_fast.c (the stages and the run) and fast_select.c (the
 * selections they use). Nothing outside src/core/ includes it. */
#ifndef LOGITLAB_FAST_INT_H
#define LOGITLAB_FAST_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/sampler.h"
#include "core/sampler_rules.h"
#include "core/vecmath.h" /* VM_BLOCK */

#define RADIX_BITS    11
#define RADIX_BUCKETS (1 << RADIX_BITS)
#define SMALL_SET     64   /* a candidate set this small is sorted outright */
#define HEAP_MAX      4096 /* top-k up to this k uses a heap; above it, the radix descent */
#define TOP_P_PROBE   64   /* top-p first looks for its cut among this many best tokens */
#define MARK_KEPT     0
#define MARK_MASKED   (TRACE_MASKED + 1)
#define HIST_COPIES   4 /* separate level-0 histograms: adds to one bucket do not queue */
#define KEPT_DENSE    8 /* more than V / KEPT_DENSE kept: their e in one dense pass */

struct fast {
    const struct sampler_input *in;
    const struct sampler_settings *s;
    struct trace *t;
    int vec; /* the vector path of every dense pass of the run (base/vecpath.h) */
    int V;
    double *z;
    double *e; /* e^(z - e_max): of every token while e_valid, of the kept while kept_e_valid */
    uint8_t *mark;
    uint32_t *key;
    int *alive; /* the kept ids, n_alive of them, once all_alive is 0 */
    int n_alive;
    int all_alive; /* nothing cut yet: every finite token is kept; the list is not built */
    int *cand;
    struct zid *sorted;
    size_t sorted_cap;
    struct zid *best_cache; /* fast_best_k's last full scan, best_cached of them, while z' holds */
    int best_cached;
    int best_resort; /* z' was divided since: the cache is to be sorted again first */
    double e_max;
    double e_sum, e_offset; /* sum of e, and sum of e (z - e_max), with e */
    int sum_valid;          /* e_max, e_sum and e_offset hold for the z' of now (e need not) */
    int kept_e_valid;       /* e holds for the listed kept tokens (all_alive 0) */
    double *block_max;      /* the largest z of each VM_BLOCK tokens, while block_valid */
    int block_valid;
    int e_valid;
    int keys_valid;
    int t_loaded; /* the load divided by the temperature already */
    int best_all; /* the best token of all while nothing is cut and z' holds; -1: not known */
    /* When no stage after a cut changes z', e is already final there, and
     * each cut adds up the mass it removes (so no pass over marks later). */
    int e_final;
    double removed_mass[STAGE_COUNT + 2];
    /* Otherwise the first cut's stage is remembered (1 + stage, 0: none
     * yet), and the tokens later cuts remove are listed in dropped (room
     * for every token the first cut kept), so that the final masses of the
     * removed tokens come from the kept list, the dropped list and a
     * subtraction, not from a pass over the vocabulary. */
    int first_cut;
    int *dropped;
    int n_dropped;
    /* A cut that was no first cut removed tokens while z' could still
     * change and nothing listed them (a stage that builds the kept list
     * itself): their masses come from a pass over the marks. */
    int unlisted;
    /* The first cut's p_max left for later (the trace's p_max_later), and
     * whether z' of then is kept in the trace's fz_pre already. */
    int later, later_kept;
    /* The load made z' / T ahead in the trace's fz_pre, all in range, with
     * their max, sum and entropy's term (fast_load's plan). */
    int ahead;
    double ahead_sums[3];
    /* The radix descent's level-0 histograms, HIST_COPIES of them (the trace's). */
    uint32_t (*hist_count)[RADIX_BUCKETS];
    struct rule_mass (*hist_mass)[RADIX_BUCKETS];
    /* A value stage that took a z' out of range (RULE_Z_LIMIT) says so
     * here and returns -1; a stage returning -1 without it ran out of memory. */
    struct err *err;
    int range_error;
};

struct pick {
    int id;           /* where the running total reaches the target; -1 if it never does */
    int count_before; /* tokens of the set ranked above it */
    double weight_before;
};

/* The stages whose cut needs no sum of the exponentials (their p_max only
 * reports what they saw), and of those the ones whose cut is a probability
 * (p_max times a number): bits 1u << stage. */
#define FAST_LATER_P   ((1u << STAGE_TOP_K) | (1u << STAGE_MIN_P) | (1u << STAGE_TOP_N_SIGMA))
#define FAST_LATER_CUT ((1u << STAGE_TOP_K) | (1u << STAGE_MIN_P))

/* ---- sampler_fast.c ---- */

/* A kept token removed by stage st: its mass added now, once z' is final,
 * else the token listed for the end (statistics). */
void fast_drop(struct fast *f, int i, int st);

/* ---- fast_engines.c: the stages the engines added (XTC, epsilon, eta, n-grams) ---- */

/* The entropy, in nats, of the softmax over the kept tokens, which it
 * lists (fast_build_alive) with their e; their mass into *mass if not NULL. */
double fast_kept_entropy(struct fast *f, double *mass);

/* Keeps, of the listed kept tokens, those still marked kept (after drops). */
void fast_compact_alive(struct fast *f);

int fast_XTC(struct fast *f, struct stage_report *rep);
int fast_EPSILON(struct fast *f, struct stage_report *rep);
int fast_ETA(struct fast *f, struct stage_report *rep);
int fast_NO_REPEAT_NGRAM(struct fast *f, struct stage_report *rep);
int fast_DRY(struct fast *f, struct stage_report *rep);
int fast_MIN_TOKENS(struct fast *f, struct stage_report *rep);
int fast_GRAMMAR(struct fast *f, struct stage_report *rep);
int fast_LOGIT_BIAS(struct fast *f, struct stage_report *rep);
int fast_BAD_WORDS(struct fast *f, struct stage_report *rep);

/* ---- fast_later.c: the first cut's p_max left for later ---- */

/* The p_max of stage c of the chain (a cut), into rep: left for later
 * where the stage is the first cut, needs no sum and a rewrite follows
 * (fast_p_max_waits), else computed now. */
void fast_stage_p_max(struct fast *f, int c, struct stage_report *rep);

/* Before a value stage other than the temperature's division rewrites z':
 * the z' a waiting p_max belongs to, copied into the trace's fz_pre. */
void fast_keep_z_before(struct fast *f);

/* After the run's statistics: a waiting p_max whose z' no stage rewrote is
 * finished with the final sum, which is its sum. */
void fast_finish_p_max(struct fast *f);

/* ---- fast_select.c ---- */

/* Whether an active stage after position c of the chain of s rewrites z'. */
int fast_rewrites_after(const struct sampler_settings *s, int c, int V);

/* Whether the stage at position c, as the first cut, leaves its p_max for
 * later (sampler_fast.c's stage_p_max): a FAST_LATER_P stage with a
 * rewrite after it. */
int fast_p_max_waits(const struct sampler_settings *s, int c, int V);

/* z' loaded from the row (f->in) into f->z with the marks and the blocks'
 * maxima, the temperature applied and the sums taken in the same pass where
 * the chain allows it. Returns how many z' are out of range (then loaded
 * without the temperature, so that the error names the right place). */
int fast_load(struct fast *f);

/* The blocks of VM_BLOCK tokens that block_max describes: how many, and
 * where block b ends. */
static inline int fast_n_blocks(const struct fast *f)
{
    return (f->V + VM_BLOCK - 1) / VM_BLOCK;
}

static inline int fast_block_end(const struct fast *f, int b)
{
    return (b + 1) * VM_BLOCK < f->V ? (b + 1) * VM_BLOCK : f->V;
}

/* Room for n sorted candidates. Returns 0, or -1 when out of memory. */
int fast_reserve_sorted(struct fast *f, size_t n);

/* Lists the kept tokens (after the first cut they are listed already). */
void fast_build_alive(struct fast *f);

/* The order keys, the blocks' maxima and the exponentials of z', each
 * computed when first needed after z' changed (fast_values_changed):
 * fast_exps fills e for every token (and e_sum, e_offset), fast_sum only
 * e_max, e_sum and e_offset (one pass that stores nothing), fast_exps_kept
 * e for the kept tokens (for every token while nothing is cut, or when
 * most are kept). */
void fast_keys(struct fast *f);
void fast_blocks(struct fast *f);
void fast_exps(struct fast *f);
void fast_sum(struct fast *f);
void fast_exps_kept(struct fast *f);
void fast_values_changed(struct fast *f);

/* e^(z'_i - e_max) of any token, from e when it holds there, else computed
 * (the same bits; e_max must be set: fast_sum). */
double fast_e(const struct fast *f, int i);

/* z' /= T (T > 0), keeping the blocks' maxima, and with the exponentials
 * in the same pass when no later stage rewrites z'. With keep, z' before
 * the division stays in the trace's fz_pre (the quotients are written to
 * the other array, which becomes z'). Returns the largest |z'| before,
 * over the tokens not masked (vm_divide's) -- or, where the load made the
 * quotients ahead (which keeps z' before the same way), 0: every quotient
 * is in range then. */
double fast_divide(struct fast *f, double T, int keep);

/* After the penalties changed the z' of the window's tokens (from start). */
void fast_penalized_blocks(struct fast *f, int start);

/* After a stage changed the z' of tokens ids[0..k) (repeats allowed):
 * fast_penalized_blocks for any list of ids. */
void fast_changed_ids(struct fast *f, const int *ids, int k);

/* What each cut removed, at the final z' (S all, K kept), when z' changed
 * after the first cut. */
void fast_removed_masses(struct fast *f, double S, double K);

/* The most likely kept token (ties to the lower id), and the kept mass
 * (fast_sum while nothing is cut, else fast_exps_kept, first). */
int fast_alive_best(struct fast *f);
double fast_alive_mass(const struct fast *f);

/* The radix descent: the first kept token, in rank order, at which the
 * running count (weight NULL) or weight reaches target (inclusive) or
 * passes it (strict); id -1 when none does, -2 when out of memory. */
struct pick fast_radix_pick(struct fast *f, const double *weight, double target, int strict);

/* The k best tokens of the kept set (all finite tokens when all is set),
 * sorted into f->sorted[0..n). Returns n, or -1 when out of memory. */
int fast_best_k(struct fast *f, int k, int all);

#endif
