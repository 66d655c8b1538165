/* batch.c - BATCH_ROWS requests sampled together on one backend. */
#include "tui/batch.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/utf8.h"

/* The requests a teacher would put side by side: one setting apart, or one
 * seed apart, so that each row shows what its difference does. */
static const char *const PRESETS[BATCH_ROWS][12] = {
    { "temperature", "0", NULL },
    { "temperature", "0.8", "top-p", "0.95", "seed", "1", NULL },
    { "temperature", "0.8", "top-p", "0.95", "seed", "2", NULL },
    { "temperature", "1", "min-p", "0.05", "seed", "3", NULL },
    { "temperature", "0.8", "top-k", "40", "seed", "4", NULL },
    { "temperature", "0.8", "repetition-penalty", "1.3", "seed", "5", NULL },
    { "temperature", "1.2", "top-k", "40", "top-p", "0.95", "min-p", "0.05", "seed", "6", NULL },
    { "order", "llamacpp", "temperature", "1.2", "top-k", "40", "top-p", "0.95", "seed", "7",
      NULL },
};

void batch_free(struct batch *b)
{
    for (int r = 0; r < BATCH_ROWS; r++)
        gen_free(&b->row[r].g);
    free(b->h);
    memset(b, 0, sizeof *b);
}

/* The LM head for every request: B hidden vectors, one call. */
static int run_head(struct batch *b, struct source *src, struct backend *be, struct err *e)
{
    int d = source_hidden_size(src);
    for (int r = 0; r < b->n; r++)
        if (source_hidden(src, b->row[r].g.ids, b->row[r].g.len, b->h + (size_t)r * d, e) < 0)
            return -1;
    if (backend_logits(be, b->h, b->n, e) < 0)
        return -1;
    b->head_kernel_ms = be->kernel_ms;
    b->gen = be->gen;
    b->be = be;
    return 0;
}

/* The LM head when asked for or when the backend no longer holds our
 * logits, then the sampler; the times are those of this computation. */
static int compute(struct batch *b, struct source *src, struct backend *be, int head, struct err *e)
{
    double t0 = clock_ms();
    b->head_ran = head || b->be != be || b->gen != be->gen || be->rows < b->n;
    if (b->head_ran && run_head(b, src, be, e) < 0)
        return -1;
    struct backend_req req[BATCH_ROWS];
    struct backend_res res[BATCH_ROWS];
    for (int r = 0; r < b->n; r++) {
        const struct batch_row *w = &b->row[r];
        req[r] = (struct backend_req){ .s = w->set.sampler,
                                       .context = w->g.ids,
                                       .context_len = w->g.len,
                                       .prompt_len = b->prompt_len,
                                       .step = source_draw_step(src->L, w->g.len),
                                       .row = (uint32_t)r,
                                       .n_top = BATCH_TOP };
    }
    if (backend_sample(be, req, b->n, res, e) < 0)
        return -1;
    for (int r = 0; r < b->n; r++)
        b->row[r].res = res[r];
    b->kernel_ms = be->kernel_ms;
    b->step_ms = clock_ms() - t0;
    return 0;
}

int batch_sample(struct batch *b, struct source *src, struct backend *be, struct err *e)
{
    return compute(b, src, be, 0, e);
}

int batch_preset(const struct source *src, int row, struct settings *s, struct err *e)
{
    if (row < 0 || row >= BATCH_ROWS)
        return err_set(e, ERR_USAGE, "no request %d in the batch", row);
    source_step_settings(src, 1, s);
    sampler_defaults(&s->sampler);
    if (s->max_tokens == 0)
        s->max_tokens = BATCH_MAX_TOKENS;
    for (int k = 0; PRESETS[row][k]; k += 2)
        if (settings_set(s, PRESETS[row][k], PRESETS[row][k + 1], e) < 0)
            return -1;
    return 0;
}

int batch_open(struct batch *b, struct source *src, struct backend *be, struct err *e)
{
    const struct lesson *L = src->L;
    memset(b, 0, sizeof *b);
    if (!source_hidden_size(src))
        return err_set(e, ERR_USAGE,
                       "the batch view needs a lesson with a model (real-...): '%s' has none",
                       L->id);
    b->n = BATCH_ROWS;
    b->prompt_len = L->prompt_len;
    b->h = malloc((size_t)b->n * (size_t)source_hidden_size(src) * sizeof *b->h);
    if (!b->h)
        return err_set(e, ERR_SYSTEM, "out of memory for the batch");
    for (int r = 0; r < b->n; r++) {
        struct batch_row *w = &b->row[r];
        if (batch_preset(src, r, &w->set, e) < 0 ||
            gen_start(&w->g, &L->vocab, L->prompt, L->prompt_len, L->prompt_len, e) < 0) {
            batch_free(b);
            return -1;
        }
    }
    if (compute(b, src, be, 1, e) < 0) {
        batch_free(b);
        return -1;
    }
    return 0;
}

int batch_running(const struct batch *b)
{
    int n = 0;
    for (int r = 0; r < b->n; r++)
        n += b->row[r].g.stop.rule == STOP_NONE;
    return n;
}

int batch_step(struct batch *b, struct source *src, struct backend *be, struct err *e)
{
    if (!batch_running(b))
        return err_set(e, ERR_USAGE, "every request has stopped: Home starts the batch again");
    int pushed[BATCH_ROWS] = { 0 };
    int rc = 0;
    for (int r = 0; r < b->n && rc == 0; r++) {
        struct batch_row *w = &b->row[r];
        if (w->g.stop.rule != STOP_NONE)
            continue;
        rc = gen_append(&w->g, w->res.id, &w->set, e);
        pushed[r] = rc == 0;
    }
    /* The contexts changed: every row needs new logits. */
    if (rc == 0 && compute(b, src, be, 1, e) == 0) {
        b->steps++;
        return 0;
    }
    /* Not taken: the batch stays where it was, ready to try again. */
    for (int r = 0; r < b->n; r++)
        if (pushed[r])
            gen_undo(&b->row[r].g);
    return -1;
}

int batch_set(struct batch *b, int row, const char *name, const char *value, struct err *e)
{
    if (row < 0 || row >= b->n)
        return err_set(e, ERR_USAGE, "no request %d in the batch", row);
    struct settings s = b->row[row].set;
    if (settings_set(&s, name, value, e) < 0)
        return -1;
    b->row[row].set = s;
    return 0;
}

/* Whether stage st is in the request's chain and does something there. */
static int in_chain(const struct sampler_settings *m, int st)
{
    /* k >= V is off too: rare enough to show */
    return st != STAGE_NONE && chain_has(&m->chain, (enum stage)st) &&
           stage_active(m, (enum stage)st, INT_MAX);
}

/* " (lesson/all)": how the stage of its main setting i works, when that
 * is not the default. */
static void put_modifiers(const struct settings *s, const struct setting_info *i, char *buf,
                          size_t n)
{
    int changed = 0;
    for (const struct setting_info *j = SETTINGS_INFO; j->name; j++)
        changed |= j->stage == i->stage && (j->flags & SET_MODIFIER) && setting_get(s, j) != j->def;
    if (!changed)
        return;
    int k = 0;
    for (const struct setting_info *j = SETTINGS_INFO; j->name; j++)
        if (j->stage == i->stage && (j->flags & SET_MODIFIER)) {
            char v[64];
            setting_value(s, j, v, sizeof v);
            utf8_append(buf, n, k++ ? "/" : " (");
            utf8_append(buf, n, v);
        }
    utf8_append(buf, n, ")");
}

void batch_describe(const struct batch_row *r, char *buf, size_t n)
{
    const struct settings *s = &r->set;
    const struct sampler_settings *m = &s->sampler;
    buf[0] = '\0';
    if (m->chain.preset != PRESET_LESSON) {
        utf8_append(buf, n, preset_name(m->chain.preset));
        utf8_append(buf, n, ": ");
    }
    /* The stage that keeps only the argmax at 0 says "greedy" and no more;
     * otherwise it is always shown (at its default when the chain leaves
     * it out), and every other setting only where the chain applies it. */
    for (int st = 0; st < STAGE_COUNT; st++)
        if ((STAGES[st].flags & SF_ZERO_CUTS) && in_chain(m, st) && stage_cuts(m, (enum stage)st)) {
            utf8_append(buf, n, "greedy");
            return;
        }
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
        if (!(i->flags & SET_ACTIVATES) || !i->status || i->stage == STAGE_NONE)
            continue;
        int always = (STAGES[i->stage].flags & SF_ZERO_CUTS) != 0;
        if (!always && !(in_chain(m, i->stage) && setting_is_on(i, m, INT_MAX)))
            continue;
        char v[64];
        if (always && !in_chain(m, i->stage))
            snprintf(v, sizeof v, "%g", i->def);
        else
            setting_value(s, i, v, sizeof v);
        utf8_append(buf, n, buf[0] && buf[strlen(buf) - 1] != ' ' ? " " : "");
        utf8_append(buf, n, i->status);
        utf8_append(buf, n, " ");
        utf8_append(buf, n, v);
        if (setting_of_stage(i->stage) == i)
            put_modifiers(s, i, buf, n);
    }
    char seed[32];
    snprintf(seed, sizeof seed, " seed %llu", (unsigned long long)m->seed);
    utf8_append(buf, n, seed);
}
