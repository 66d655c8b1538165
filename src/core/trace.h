/* trace.h - questions asked of a step's trace (sampler.h) by every reader
 * of it: the reports, the view, the exercises and the batch. */
#ifndef LOGITLAB_TRACE_H
#define LOGITLAB_TRACE_H

#include "core/sampler.h"

/* The row and rank (0-based) of token id, from the rows of t or, after a
 * fast run, looked up among all tokens. Returns 0, or -1. */
int trace_row_of(const struct trace *t, int id, struct trace_row *row, int *rank);

/* What lies beyond the first shown rows: how many tokens, their mass, and
 * how many of them are kept. */
void trace_tail(const struct trace *t, int shown, int *count, double *mass, int *kept);

/* A token of a step: its p before the filters and its final p after them. */
struct trace_alt {
    int id;
    double prob, final;
};

/* What a step gave token id, for a reader that keeps it after the trace is
 * reused (the text view, generate's reports): its p, final p and rank (1:
 * the most likely) into *pick, and the step's max most likely tokens, best
 * first, into alt. Returns how many alt holds; where t has no row for id,
 * *pick's numbers are NAN and *rank 0. */
int trace_pick(const struct trace *t, int id, struct trace_alt *pick, int *rank,
               struct trace_alt *alt, int max);

/* The temperature the step divided by: s's, or where a dynamic range is
 * on the step's own (its stage's report value); 1 when the chain has no
 * temperature stage or it scaled nothing (one kept token). */
double trace_temperature(const struct trace *t, const struct sampler_settings *s);

/* What removed a token: "" when kept, else the stage's word ("top-k",
 * "typ-p", "greedy"), or "masked". */
const char *trace_removed_name(int removed_by);

#endif
