/* gen_steps.c - what a generation's reports say of each token (report.h):
 * its probabilities and rank, and its step's most likely tokens, taken
 * from the step's trace while the loop runs (the trace is reused). */
#include <math.h>
#include <stdlib.h>

#include "report/report.h"

void gen_steps_init(struct gen_steps *r, int top)
{
    r->n = r->cap = 0;
    r->s = NULL;
    r->top = top <= 0 ? GEN_TOP_DEFAULT : top > GEN_TOP_MAX ? GEN_TOP_MAX : top;
}

void gen_steps_free(struct gen_steps *r)
{
    free(r->s);
    r->s = NULL;
    r->n = r->cap = 0;
}

int gen_steps_add(struct gen_steps *r, const struct trace *t, struct err *e)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        struct gen_step *s = realloc(r->s, (size_t)cap * sizeof *s);
        if (!s)
            return err_set(e, ERR_SYSTEM, "out of memory for the generated tokens' numbers");
        r->s = s, r->cap = cap;
    }
    struct gen_step *g = &r->s[r->n];
    struct trace_alt pick;
    g->n_top = trace_pick(t, t->choice.id, &pick, &g->rank, g->top, r->top);
    if (g->rank == 0)
        return err_set(e, ERR_USAGE, "token %d has no row in its step's trace", t->choice.id);
    g->id = pick.id, g->prob = pick.prob, g->final = pick.final;
    r->n++;
    return 0;
}

void gen_steps_logprob(const struct gen_steps *r, double *sum, double *mean, double *ppl)
{
    double s = 0.0;
    for (int i = 0; i < r->n; i++)
        s += log(r->s[i].prob);
    *sum = r->n ? s : NAN;
    *mean = r->n ? s / r->n : NAN;
    *ppl = r->n ? exp(-s / r->n) : NAN;
}
