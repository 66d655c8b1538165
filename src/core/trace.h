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

/* What removed a token: "" when kept, else the stage's word ("top-k",
 * "typ-p", "greedy"), or "masked". */
const char *trace_removed_name(int removed_by);

#endif
