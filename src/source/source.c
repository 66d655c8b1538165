#include "source/source.h"

#include "backend/backend.h"

#include "data/config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void source_step_settings(const struct lesson *L, int step, struct settings *s)
{
    settings_defaults(s);
    if (L->config)
        config_apply_defaults(L->config, s);
    lesson_apply_settings(L, step, s);
}

int source_open(struct lesson *L, int hidden, int rows, struct err *e)
{
    if (rows < 0 || rows > SOURCE_MAX_ROWS)
        return err_set(e, ERR_USAGE, "%d rows: from 1 to %d", rows, SOURCE_MAX_ROWS);
    if (!L->model.on && !L->captured && L->vocab.n <= LESSON_MAX_VOCAB)
        return 0; /* a lesson's table: the reference sampler, every row */
    L->fast_rows = rows ? rows : SOURCE_FAST_ROWS;
    if (L->fast_rows > L->vocab.n)
        L->fast_rows = L->vocab.n;
    if (!L->model.on || L->model.run)
        return 0;
    struct scenario_run *r = calloc(1, sizeof *r);
    if (!r)
        return err_set(e, ERR_SYSTEM, "out of memory");
    if (scenario_run_open(r, L->model.scenario, L->vocab.n, hidden ? hidden : L->model.hidden,
                          L->model.seed, e) < 0) {
        free(r);
        return -1;
    }
    L->model.run = r;
    return 0;
}

int source_use_backend(struct lesson *L, struct backend *be, struct err *e)
{
    if (!L->model.run) {
        backend_drop_head(be); /* the head of a lesson before is not this one's */
        return 0;
    }
    L->model.run->be = NULL;
    L->model.run->valid = 0;
    if (backend_head(be, &L->model.run->m, e) < 0)
        return -1;
    L->model.run->be = be;
    return 0;
}

const float *source_last_logits_f(const struct lesson *L, int step)
{
    if (L->model.on)
        return L->model.run && L->model.run->valid ? L->model.run->logits : NULL;
    return step >= 1 && step <= L->n_steps ? L->steps[step - 1].logits_f : NULL;
}

int source_is_fast(const struct lesson *L)
{
    return L->fast_rows > 0;
}

/* The model's float logits for the token after ctx, or NULL (e says why). */
static const float *source_model_logits(const struct lesson *L, const int *ctx, int len,
                                        struct err *e)
{
    if (!L->model.run) {
        err_set(e, ERR_SYSTEM, "lesson '%s': its model was not built (source_open)", L->id);
        return NULL;
    }
    return scenario_run_logits(L->model.run, ctx, len, e);
}

double source_logit(const struct lesson *L, int step, int id)
{
    const struct lesson_step *S = &L->steps[step - 1];
    if (S->logits)
        return S->logits[id];
    if (S->logits_f)
        return S->logits_f[id];
    if (L->model.run && L->model.run->valid)
        return L->model.run->logits[id];
    return NAN;
}

int source_prompt_len(const struct lesson *L, int len)
{
    return L->prompt_len <= len ? L->prompt_len : len;
}

uint32_t source_draw_step(const struct lesson *L, int len)
{
    return (uint32_t)(len - source_prompt_len(L, len) + 1);
}

int source_run_step(const struct lesson *L, int step, const struct settings *s, const int *ctx,
                    int len, struct trace *t, struct err *e)
{
    if (step < 1 || step > L->n_steps)
        return err_set(e, ERR_USAGE, "lesson '%s' has no step %d (it has %d)", L->id, step,
                       L->n_steps);
    struct sampler_input in = {
        .vocab_size = L->vocab.n,
        .logits = L->steps[step - 1].logits,
        .context = ctx,
        .context_len = len,
        .prompt_len = source_prompt_len(L, len),
        /* The Philox counter counts generated tokens, not lesson pages: two
         * pages at the same position with the same seed draw the same u. */
        .step = source_draw_step(L, len),
        .row = 0,
    };
    const struct lesson_step *S = &L->steps[step - 1];
    if (L->model.on) {
        in.logits = NULL;
        in.logits_f = source_model_logits(L, ctx, len, e);
        if (!in.logits_f)
            return -1;
    } else if (S->logits_f) {
        in.logits = NULL;
        in.logits_f = S->logits_f;
    }
    if (L->fast_rows > 0)
        return sampler_run_fast(&in, &s->sampler, t, L->fast_rows, e);
    if (!in.logits)
        return err_set(e, ERR_SYSTEM, "lesson '%s' was not opened (source_open)", L->id);
    return sampler_run(&in, &s->sampler, t, e);
}

static int *copy_ids(const int *ids, int n, int extra)
{
    int *out = malloc((size_t)(n + extra > 0 ? n + extra : 1) * sizeof *out);
    if (out && n > 0)
        memcpy(out, ids, (size_t)n * sizeof *out);
    return out;
}

/* Puts ids (n of them) into the path's context, with room for the steps to come. */
static int path_set(struct source_path *p, const int *ids, int n, struct err *e)
{
    int *c = copy_ids(ids, n, p->L->n_steps + 1);
    if (!c)
        return err_set(e, ERR_SYSTEM, "out of memory");
    free(p->ctx);
    p->ctx = c;
    p->len = n;
    return 0;
}

int source_path_start(struct source_path *p, const struct lesson *L, struct err *e)
{
    memset(p, 0, sizeof *p);
    p->L = L;
    p->step = 1;
    if (trace_init(&p->t, L->vocab.n, e) < 0)
        return -1;
    const struct lesson_step *S = &L->steps[0];
    if (path_set(p, S->has_context ? S->context : L->prompt,
                 S->has_context ? S->context_len : L->prompt_len, e) < 0) {
        source_path_free(p);
        return -1;
    }
    return 0;
}

int source_path_next(struct source_path *p, struct err *e)
{
    const struct lesson *L = p->L;
    int k = p->step;
    if (p->stop.rule != STOP_NONE || k >= L->n_steps)
        return 0;
    struct settings s;
    source_step_settings(L, k, &s);
    if (source_run_step(L, k, &s, p->ctx, p->len, &p->t, e) < 0)
        return -1;
    p->ctx[p->len++] = p->t.choice.id;
    const struct lesson_step *next = &L->steps[k];
    if (next->has_context) {
        if (path_set(p, next->context, next->context_len, e) < 0)
            return -1;
    } else {
        /* A stop rule ends the lesson's own text: a later step is on this
         * path only when it starts a text of its own. */
        p->stop = stop_check(&s, &L->vocab, p->ctx, p->len, L->prompt_len);
        if (p->stop.rule != STOP_NONE) {
            stop_describe(&p->stop, &s, &L->vocab, p->stop_why, sizeof p->stop_why);
            return 0;
        }
    }
    p->step = k + 1;
    return 1;
}

void source_path_free(struct source_path *p)
{
    trace_free(&p->t);
    free(p->ctx);
    memset(p, 0, sizeof *p);
}

int source_lesson_context(const struct lesson *L, int step, int **ctx, int *len, struct err *e)
{
    *ctx = NULL;
    *len = 0;
    if (step < 1 || step > L->n_steps)
        return err_set(e, ERR_USAGE, "lesson '%s' has no step %d (it has %d)", L->id, step,
                       L->n_steps);
    struct source_path p;
    if (source_path_start(&p, L, e) < 0)
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
    *ctx = p.ctx;
    *len = p.len;
    p.ctx = NULL;
    source_path_free(&p);
    return 0;
}

/* Whether needle occurs in the generated text. Matching the joined text, not
 * token by token, is what lets a stop string span two tokens. */
static int text_contains(const struct vocab *v, const int *ids, int n, const char *needle)
{
    size_t need = vocab_detok(v, ids, n, NULL, 0);
    char *buf = malloc(need + 1);
    if (!buf)
        return 0;
    vocab_detok(v, ids, n, buf, need + 1);
    int found = strstr(buf, needle) != NULL;
    free(buf);
    return found;
}

struct stop_result stop_check(const struct settings *s, const struct vocab *v, const int *ctx,
                              int len, int prompt_len)
{
    struct stop_result r = { STOP_NONE, -1 };
    if (len <= prompt_len)
        return r;
    int last = ctx[len - 1];
    if (vocab_is_eos(v, last))
        return (struct stop_result){ STOP_EOS, last };
    for (int i = 0; i < s->n_stop; i++)
        if (text_contains(v, ctx + prompt_len, len - prompt_len, s->stop[i]))
            return (struct stop_result){ STOP_STRING, i };
    if (s->max_tokens > 0 && len - prompt_len >= s->max_tokens)
        return (struct stop_result){ STOP_MAX_TOKENS, s->max_tokens };
    return r;
}

/* Writes s with control characters escaped, for messages. */
static void escape_text(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    for (; *s && k + 3 < n; s++) {
        if (*s == '\n')
            buf[k++] = '\\', buf[k++] = 'n';
        else if (*s == '\t')
            buf[k++] = '\\', buf[k++] = 't';
        else
            buf[k++] = *s;
    }
    buf[k] = '\0';
}

void stop_describe(const struct stop_result *r, const struct settings *s, const struct vocab *v,
                   char *buf, size_t n)
{
    char esc[2 * STOP_LEN + 1];
    switch (r->rule) {
    case STOP_EOS:
        snprintf(buf, n, "end token %s", vocab_token(v, r->which));
        break;
    case STOP_STRING:
        escape_text(s->stop[r->which], esc, sizeof esc);
        snprintf(buf, n, "stop string \"%s\"", esc);
        break;
    case STOP_MAX_TOKENS:
        snprintf(buf, n, "max tokens (%d)", r->which);
        break;
    case STOP_NONE:
        snprintf(buf, n, "%s", "");
        break;
    }
}
