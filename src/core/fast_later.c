/* fast_later.c - the first cut's p_max left for later (sampler.h's
 * p_max_later): where it is left, how the z' it belongs to is kept, and how
 * it is finished, after the run or when a report of the stages asks.
 *
 * In llama.cpp's order the cuts come before the temperature. The first cut
 * would need a pass over the vocabulary at T = 1 for a sum that only its
 * p_max (and a cut given as a probability) uses, and the final statistics
 * need another at the final z'. Top-k, min-p and top-n-sigma need no sum to
 * cut (FAST_LATER_P), so their p_max waits: it is stored as e^(best - best)
 * = 1 over a sum not yet taken, and the z' of then is kept in the trace's
 * fz_pre -- by the temperature's division, which writes its quotients to
 * the other array (fast_divide), or by a copy before any other rewrite --
 * for trace_stage_values to sum when a report reads it. */
#include <math.h>
#include <string.h>

#include "core/fast_int.h"
#include "core/fast_vec.h"

void fast_stage_p_max(struct fast *f, int c, struct stage_report *rep)
{
    enum stage st = f->s->chain.stage[c];
    if (f->all_alive && !f->sum_valid && !f->later && fast_p_max_waits(f->s, c, f->V)) {
        int best = fast_alive_best(f);
        f->later = 1 + c;
        f->t->p_max_later = 1 + c;
        f->t->cut_later = (int)(FAST_LATER_CUT >> st & 1u);
        f->t->p_max_shift = f->z[best];
        rep->p_max = 1.0;
        return;
    }
    if (f->all_alive)
        fast_sum(f); /* the softmax's sum is all p_max needs */
    else
        fast_exps_kept(f);
    double best = f->z[fast_alive_best(f)];
    rep->p_max = exp(best - f->e_max) / fast_alive_mass(f);
}

void fast_keep_z_before(struct fast *f)
{
    /* With the quotients made ahead, fz_pre holds them until the temperature
     * swaps it with z, which keeps z' of then: the load planned them only
     * where the temperature alone rewrites z', so a caller before it (a
     * penalty stage that is off) changes nothing, and a copy would put the
     * undivided z' where the quotients were (the sampler oracle's
     * order-topk-pen-t-1000). */
    if (!f->later || f->later_kept || f->ahead)
        return;
    memcpy(f->t->fz_pre, f->z, (size_t)f->V * sizeof *f->z); /* cheaper than the pass it saves */
    f->later_kept = 1;
}

void fast_finish_p_max(struct fast *f)
{
    if (!f->later || f->later_kept)
        return;
    struct stage_report *rep = &f->t->stages[f->later - 1];
    rep->p_max = 1.0 / f->e_sum;
    if (f->t->cut_later)
        rep->cut *= rep->p_max;
    f->t->p_max_later = 0;
}

void trace_stage_values(const struct trace *t, int c, double *p_max, double *cut)
{
    *p_max = t->stages[c].p_max;
    *cut = t->stages[c].cut;
    if (t->p_max_later != 1 + c || !t->fmax_valid)
        return;
    double offset;
    double S = fv_exp_stats_on(t->fvec, t->fz_pre, t->p_max_shift, NULL, t->vocab_size, &offset);
    *p_max /= S;
    if (t->cut_later)
        *cut *= *p_max;
}
