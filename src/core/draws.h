/* draws.[ch] - what a step shows beyond its rows: a histogram of every z'
 * (full size), and many draws counted against the probabilities (every
 * step).
 *
 * At full size both read the per-token state a fast sampler run leaves in
 * the trace (sampler_run_fast); on a toy step the draws read the trace's
 * rows (sampler_run). Either way they see exactly the distribution of the
 * step, and draw i uses the same u on both.
 */
#ifndef LOGITLAB_DRAWS_H
#define LOGITLAB_DRAWS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "core/sampler.h"
#include "core/sampler_rules.h"

#define DRAWS_HIST_BINS_MAX 64
#define DRAWS_ROWS          32 /* top tokens counted one by one */
#define DRAWS_EXAMPLES      8  /* tail tokens drawn, listed as examples */
#define DRAWS_RAREST        8  /* the drawn tokens of lowest probability, listed */
#define DRAWS_DEFAULT       10000
#define DRAWS_MAX           10000000

/* The work space of the many draws, kept in the trace from call to call
 * (trace_init makes it, trace_free frees it). */
struct draws_work {
    size_t V;
    uint64_t *a, *b;
    unsigned *count;
    struct zid *order;
    uint64_t *cum_p, *cum_k; /* rule_draw_units, summed down the rank order */
    uint32_t *hit;           /* 2 V: how often each id came up, without and with the filters */
    int *rank;
};

/* Frees what w holds (not w itself). */
void draws_work_free(struct draws_work *w);

/* Counts of z' (the logits the softmax sees) in equal bins from lo to hi. */
struct draws_hist {
    int bins;
    double lo, hi;
    long count[DRAWS_HIST_BINS_MAX];
    long n;      /* finite values counted */
    long masked; /* -inf: tokens masked before the chain */
    double mean, sd;
};

/* Fills h with bins equal bins (1 to DRAWS_HIST_BINS_MAX) over t's finite z'.
 * Returns 0, or -1 when t holds no fast run. */
int draws_histogram(const struct trace *t, int bins, struct draws_hist *h);

/* The bin of z in h (h->n > 0): clamped to [0, bins), and 0 where rounding
 * (or a NaN) gives no number, so that the conversion to int is always
 * defined, however narrow the range. */
int draws_bin(const struct draws_hist *h, double z);

/* A token that came up in the draws: its rank in the step (0 = the most
 * likely), its probability without (prob) and with (final) the filters,
 * the stage that removes it (TRACE_KEPT when the filters keep it), and how
 * many draws came up with it without (plain) and with (kept) the filters. */
struct draws_token {
    int id, rank, removed_by;
    double prob, final;
    long plain, kept;
};

/* One set of many draws: u_i = sampler_u(seed, step, 0, i) for i < n, each
 * turned into a token twice: with the filters (the kept tokens, by the draw
 * rule) and without them (every token, by its softmax probability). Draw 0
 * is the step's own draw. */
struct draws {
    int n;
    int rows; /* top tokens counted one by one (rank order) */
    int id[DRAWS_ROWS];
    double p_plain[DRAWS_ROWS], p_kept[DRAWS_ROWS]; /* prob and final of each */
    long c_plain[DRAWS_ROWS], c_kept[DRAWS_ROWS];   /* how often each came up */
    double tail_p_plain, tail_p_kept;               /* the mass of every token below those rows */
    long tail_plain, tail_kept;                     /* draws that landed there */
    long distinct_plain, distinct_kept;             /* different tokens drawn */
    int n_examples;
    int example[DRAWS_EXAMPLES]; /* tail tokens drawn without the filters, first come */
    int example_rank[DRAWS_EXAMPLES];
    /* Pearson's chi-square of the counts against n * p, over the rows
     * expected at least 5 times and one bucket for the rest. */
    double chi2_plain, chi2_kept;
    int df_plain, df_kept;
    int first_kept; /* the token of draw 0 with the filters */
    /* The strangest tokens that came up: the drawn tokens of lowest
     * probability (highest rank), the least likely first, each once; without
     * the filters, and with them. */
    int n_rarest_plain, n_rarest_kept;
    struct draws_token rarest_plain[DRAWS_RAREST], rarest_kept[DRAWS_RAREST];
};

/* Makes n draws (1 to 10,000,000) on the distribution of t. Returns 0, or -1
 * (t holds no fast run, out of memory). About 15 ms at V = 128,256 plus
 * 0.1 microsecond a draw. */
int draws_run(const struct trace *t, uint64_t seed, uint32_t step, int n, int rows, struct draws *d,
              struct err *e);

/* The same n draws on a step whose trace holds every row (sampler_run: a
 * toy lesson's table, the toy head): draw i with the filters is
 * sampler_draw(t, u_i), without them the first row whose cum exceeds u_i.
 * Fills d as draws_run does (rows by rank, tails, chi-square, rarest).
 * Returns 0, or -1 (t holds only some rows, n out of range, out of memory). */
int draws_run_rows(const struct trace *t, uint64_t seed, uint32_t step, int n, int rows,
                   struct draws *d, struct err *e);

/* The tokens of n draws on t's distribution, u_i = sampler_u(seed, step,
 * row, i): kept_ids[i] by the draw rule over the kept tokens, plain_ids[i]
 * by the softmax over every token (either may be NULL). What a backend's
 * draws compute (backend.h). Returns 0 or -1. */
int draws_ids(const struct trace *t, uint64_t seed, uint32_t step, uint32_t row, int n,
              int *kept_ids, int *plain_ids, struct err *e);

/* Fills d from n draws made elsewhere (a backend's draws, row 0 of the same
 * step): the same counts rr_draws makes from its own u. Returns 0, or -1
 * for a token that is not a finite token of t, or a kept draw of a token
 * the chain removed. */
int draws_tally(const struct trace *t, const int *kept_ids, const int *plain_ids, int n, int rows,
                struct draws *d, struct err *e);

/* n as the views write a count in words: digits in groups of three,
 * "10,000". */
void draws_count_text(long n, char *buf, size_t size);

/* The upper 0.1 % point of chi-square with df degrees of freedom (Wilson-
 * Hilferty), for tests and for saying whether counts fit. */
double draws_chi2_limit(int df);

/* The normal points of an upper tail of 1 % and of 0.1 %. */
#define DRAWS_Z_1PCT   2.3263
#define DRAWS_Z_0_1PCT 3.0902

/* The point chi-square with df degrees of freedom exceeds with the upper
 * tail whose normal point is z (DRAWS_Z_1PCT: the 99 % point), by Wilson-
 * Hilferty; 0 for df <= 0. draws_chi2_limit is this at DRAWS_Z_0_1PCT. */
double draws_chi2_point(int df, double z);

#endif
