/* path.c - a lesson's own path: the contexts its steps were written for,
 * walked with the lesson's own settings. */
#include "source/path.h"

#include <stdlib.h>
#include <string.h>

int source_path_start(struct source_path *p, struct source *src, struct err *e)
{
    const struct lesson *L = src->L;
    memset(p, 0, sizeof *p);
    p->src = src;
    p->L = L;
    p->step = 1;
    const struct lesson_step *S = &L->steps[0];
    if (trace_init(&p->t, L->vocab.n, e) < 0 ||
        gen_start(&p->g, &L->vocab, S->has_context ? S->context : L->prompt,
                  S->has_context ? S->context_len : L->prompt_len, L->prompt_len, e) < 0) {
        source_path_free(p);
        return -1;
    }
    return 0;
}

int source_path_next(struct source_path *p, struct err *e)
{
    const struct lesson *L = p->L;
    int k = p->step;
    if (p->g.stop.rule != STOP_NONE || k >= L->n_steps)
        return 0;
    struct settings s;
    source_step_settings(p->src, k, &s);
    if (source_run_step(p->src, k, &s, p->g.ids, p->g.len, &p->t, e) < 0 ||
        gen_append(&p->g, p->t.choice.id, &s, e) < 0)
        return -1;
    const struct lesson_step *next = &L->steps[k];
    if (next->has_context) {
        /* A step with a context of its own starts a text of its own, which
         * no stop rule of the text before can end. */
        if (gen_restart(&p->g, next->context, next->context_len, e) < 0)
            return -1;
    } else if (p->g.stop.rule != STOP_NONE) {
        stop_describe(&p->g.stop, &s, &L->vocab, p->stop_why, sizeof p->stop_why);
        return 0;
    }
    p->step = k + 1;
    return 1;
}

void source_path_free(struct source_path *p)
{
    trace_free(&p->t);
    gen_free(&p->g);
    memset(p, 0, sizeof *p);
}

int source_lesson_context(struct source *src, int step, int **ctx, int *len, struct err *e)
{
    const struct lesson *L = src->L;
    *ctx = NULL;
    *len = 0;
    if (step < 1 || step > L->n_steps)
        return err_set(e, ERR_USAGE, "lesson '%s' has no step %d (it has %d)", L->id, step,
                       L->n_steps);
    struct source_path p;
    if (source_path_start(&p, src, e) < 0)
        return -1;
    int rc = 1;
    while (rc == 1 && p.step < step)
        rc = source_path_next(&p, e);
    if (rc == 0)
        err_set(e, ERR_USAGE,
                "lesson '%s' stops after step %d on its own path (%s): step %d is not on it "
                "(logitlab generate runs past it with other settings)",
                L->id, p.step, p.stop_why, step);
    if (rc <= 0) {
        source_path_free(&p);
        return -1;
    }
    *ctx = p.g.ids;
    *len = p.g.len;
    p.g.ids = NULL;
    source_path_free(&p);
    return 0;
}
