/* sampler_engines.c - the reference of the stages the engines added to the
 * lesson's: XTC (llama.cpp), the epsilon and eta cutoffs (Hugging Face).
 * Each works, as every stage of sampler.c, on the softmax of z' over the
 * tokens still kept at its place in the chain.
 */
#include <math.h>

#include "core/ref_int.h"

double ref_kept_entropy(const struct zid *order, int n)
{
    double max = order[0].z, sum = ref_shifted_sum(order, n), h = 0.0;
    for (int r = 0; r < n; r++) {
        double q = exp(order[r].z - max) / sum;
        if (q > 0.0)
            h -= q * log(q);
    }
    return h;
}

/* XTC, "exclude top choices" (llama.cpp's xtc sampler): with chance p --
 * the stage's coin u at most p -- every kept token whose probability is at
 * least the threshold goes, except the least likely of them, so that a
 * plausible but less obvious token is drawn. One such token or none: it
 * removes nothing (so a threshold above 0.5 never acts). */
int apply_XTC(struct ref_step *c)
{
    const struct sampler_settings *s = c->s;
    if (s->xtc_probability <= 0.0 || c->n < 2)
        return 0;
    double u = sampler_coin(s->seed, c->in->step, c->in->row, STAGE_XTC);
    c->rep->cut = u;
    if (u > s->xtc_probability)
        return 0;
    double max = c->order[0].z, sum = ref_shifted_sum(c->order, c->n);
    int above = 0;
    while (above < c->n && exp(c->order[above].z - max) / sum >= s->xtc_threshold)
        above++;
    for (int r = 0; r + 1 < above; r++)
        c->t->rows[c->order[r].id].removed_by = STAGE_XTC;
    return 0;
}

/* Removes the kept tokens whose probability is below bar, except those
 * tied with the most likely. */
static void cut_below(struct ref_step *c, double bar, enum stage st)
{
    double max = c->order[0].z, sum = ref_shifted_sum(c->order, c->n);
    c->rep->cut = bar;
    for (int r = 1; r < c->n; r++)
        if (rule_below_bar(exp(c->order[r].z - max) / sum, bar, c->order[r].z, max))
            c->t->rows[c->order[r].id].removed_by = (int)st;
}

/* Epsilon sampling (Hewitt et al. 2022, Hugging Face's epsilon_cutoff):
 * remove every token less likely than epsilon. */
int apply_EPSILON(struct ref_step *c)
{
    if (c->s->epsilon_cutoff <= 0.0 || c->n == 0)
        return 0;
    cut_below(c, c->s->epsilon_cutoff, STAGE_EPSILON);
    return 0;
}

/* Eta sampling (Hewitt et al. 2022, Hugging Face's eta_cutoff): the bar
 * falls with the entropy, so a flat distribution keeps more tokens. */
int apply_ETA(struct ref_step *c)
{
    if (c->s->eta_cutoff <= 0.0 || c->n == 0)
        return 0;
    cut_below(c, rule_eta_bar(c->s->eta_cutoff, ref_kept_entropy(c->order, c->n)), STAGE_ETA);
    return 0;
}
