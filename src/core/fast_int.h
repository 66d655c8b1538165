/* fast_int.h - the state of one run of the O(V) sampler, shared by its two
 * files: sampler_fast.c (the stages and the run) and fast_select.c (the
 * selections they use). Nothing outside src/core/ includes it. */
#ifndef LOGITLAB_FAST_INT_H
#define LOGITLAB_FAST_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/sampler.h"
#include "core/sampler_rules.h"

#define RADIX_BITS    11
#define RADIX_BUCKETS (1 << RADIX_BITS)
#define SMALL_SET     64   /* a candidate set this small is sorted outright */
#define HEAP_MAX      4096 /* top-k up to this k uses a heap; above it, the radix descent */
#define MIN_P_MARGIN  1e-9 /* this near the bar, min-p takes the exact test of sampler.c */
#define TOP_P_PROBE   64   /* top-p first looks for its cut among this many best tokens */
#define MARK_KEPT     0
#define MARK_MASKED   (TRACE_MASKED + 1)
#define MARK_UNSURE   0xFF /* min-p: too near the bar to tell without the exact test */
#define HIST_COPIES   4    /* separate level-0 histograms: adds to one bucket do not queue */

struct fast {
    const struct sampler_input *in;
    const struct sampler_settings *s;
    struct trace *t;
    int V;
    double *z;
    double *e; /* e^(z - e_max) of every token, valid while e_valid */
    uint8_t *mark;
    uint32_t *key;
    int *alive; /* the kept ids, n_alive of them, once all_alive is 0 */
    int n_alive;
    int all_alive; /* nothing cut yet: every finite token is kept; the list is not built */
    int *cand;
    struct zid *sorted;
    size_t sorted_cap;
    double e_max;
    double e_sum, e_offset; /* sum of e, and sum of e (z - e_max), with e */
    double *block_max;      /* the largest z of each VM_BLOCK tokens, while block_valid */
    int block_valid;
    int e_valid;
    int keys_valid;
    /* When no stage after a cut changes z', e is already final there, and
     * each cut adds up the mass it removes (so no pass over marks later). */
    int e_final;
    double removed_mass[STAGE_COUNT + 2];
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

/* ---- fast_select.c ---- */

/* The blocks of VM_BLOCK tokens that block_max describes: how many, and
 * where block b ends. */
int fast_n_blocks(const struct fast *f);
int fast_block_end(const struct fast *f, int b);

/* Room for n sorted candidates. Returns 0, or -1 when out of memory. */
int fast_reserve_sorted(struct fast *f, size_t n);

/* Lists the kept tokens (after the first cut they are listed already). */
void fast_build_alive(struct fast *f);

/* The order keys, the blocks' maxima and the exponentials of z', each
 * computed when first needed after z' changed (fast_values_changed). */
void fast_keys(struct fast *f);
void fast_blocks(struct fast *f);
void fast_exps(struct fast *f);
void fast_values_changed(struct fast *f);

/* The most likely kept token (ties to the lower id), and the kept mass. */
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
