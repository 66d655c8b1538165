/* kind_head.c - a lesson's toy LM head at work: the logits of a step that
 * gives a hidden vector h are W . RMSNorm(h), in double, so that every
 * number can be checked by hand (the lesson file gives W, h and eps; the
 * loader has already checked that they give finite logits). Steps that
 * give logits or probabilities are served as the table kind serves them. */
#include <stdlib.h>

#include "model/lmhead.h"
#include "source/source_int.h"

/* The products, one row of V per step; NULL for a step without h. */
struct head_state {
    double **row;
};

static int head_runs(const struct lesson *L)
{
    return L->head.d > 0;
}

static void head_close(struct source *src)
{
    struct head_state *h = src->state;
    if (!h)
        return;
    for (int k = 0; k < src->L->n_steps; k++)
        free(h->row[k]);
    free(h->row);
    free(h);
    src->state = NULL;
}

static int head_open(struct source *src, int hidden, struct err *e)
{
    (void)hidden;
    const struct lesson *L = src->L;
    struct head_state *h = calloc(1, sizeof *h);
    if (!h || !(h->row = calloc((size_t)L->n_steps, sizeof *h->row))) {
        free(h);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    src->state = h;
    for (int k = 0; k < L->n_steps; k++) {
        const struct lesson_step *S = &L->steps[k];
        if (S->given != GIVEN_HIDDEN)
            continue;
        if (!(h->row[k] = malloc((size_t)L->vocab.n * sizeof *h->row[k]))) {
            head_close(src);
            return err_set(e, ERR_SYSTEM, "out of memory");
        }
        lmhead_gemv(L->head.w, L->vocab.n, L->head.d, S->normed, h->row[k]);
    }
    return 0;
}

static int head_peek(const struct source *src, int k, struct source_logits *out)
{
    const struct head_state *h = src->state;
    const double *row = h->row[k - 1] ? h->row[k - 1] : src->L->steps[k - 1].logits;
    *out = (struct source_logits){ .d = row };
    return row ? 0 : -1;
}

const struct source_ops SOURCE_HEAD = {
    .kind = "toy head",
    .written_for_path = 1,
    .runs = head_runs,
    .open = head_open,
    .close = head_close,
    .peek = head_peek,
};
