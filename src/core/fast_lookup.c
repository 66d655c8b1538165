/* fast_lookup.c - what can be asked of a trace after sampler_run_fast (sampler.h): any
 * token's e^(z' - max), its final probability, its whole row. Each is computed from the
 * trace's per-token arrays on the spot, with the bits the run used. */
#include <math.h>

#include "base/vecpath.h"
#include "core/fast_int.h"
#include "core/fastexp.h"

/* Built for each vector path (base/vecpath.h), so that fast_exp's seven
 * fma are the CPU's own instruction where it has one, not a call into the
 * C library each (the same bits): the draws and the looked-up rows call
 * this once a token, 128,256 times a key at full size. The path is the
 * run's, kept in the trace: no look at the environment a token. */
VEC_BODY double trace_e_body(const struct trace *t, int id)
{
    return fast_exp(t->fz[id] - t->max_adjusted);
}
VEC_PATHS_ON(double, trace_e, (const struct trace *t, int id), (t, id))

double trace_e(const struct trace *t, int id)
{
    return trace_e_on(t->fvec, t, id);
}

double trace_final(const struct trace *t, int id)
{
    double K = t->kept_mass * t->sum_exp_shifted;
    return t->fmark[id] == MARK_KEPT && K > 0 ? trace_e(t, id) / K : 0.0;
}

int sampler_fast_row(const struct trace *t, int id, struct trace_row *out, int *rank_out)
{
    if (!t->fz || !t->fmax_valid || id < 0 || id >= t->vocab_size)
        return -1;
    const double *z = t->fz;
    double S = t->sum_exp_shifted, K = t->kept_mass * S, e = trace_e(t, id);
    double above = 0.0, above_kept = 0.0;
    int rank = 0;
    for (int i = 0; i < t->vocab_size; i++)
        if (z[i] != -INFINITY && rule_ranks_before(z[i], i, z[id], id)) {
            double ei = trace_e(t, i);
            rank++;
            above += ei;
            if (t->fmark[i] == MARK_KEPT)
                above_kept += ei;
        }
    uint8_t m = t->fmark[id];
    *out = (struct trace_row){
        .id = id,
        .removed_by = m == MARK_KEPT ? TRACE_KEPT : m - 1,
        .adjusted = z[id],
        .exp = exp(z[id]),
        .prob = e / S,
        .cum = (above + e) / S,
        .final = trace_final(t, id),
        .cum_final = K > 0 ? (above_kept + (m == MARK_KEPT ? e : 0.0)) / K : 0.0,
    };
    *rank_out = rank;
    return 0;
}
