/* source.c - a logit source of any kind: which kind runs a lesson, and
 * what every kind shares (the settings of a step, the sampler run on its
 * logits). The kinds themselves are the kind_*.c files (source.h). */
#include "source/source.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "data/config.h"
#include "source/source_grammar.h"
#include "source/source_int.h"

/* The kinds, tried in this order: the first that runs a lesson runs it. */
static const struct source_ops *const KINDS[] = { &SOURCE_GGUF, &SOURCE_SCENARIO, &SOURCE_CAPTURED,
                                                  &SOURCE_HEAD, &SOURCE_TABLE };

int source_open(struct source *src, const struct lesson *L, const struct config *config, int hidden,
                int rows, struct err *e)
{
    return source_open_progress(src, L, config, hidden, rows, NULL, e);
}

/* Whether the len bytes at b hold the string k. */
static int bytes_hold(const char *b, size_t len, const char *k)
{
    size_t n = strlen(k);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(b + i, k, n) == 0)
            return 1;
    return 0;
}

/* Flags the tokens whose bytes hold a DRY sequence breaker, once per
 * lesson: the sampler sees ids only. Returns 0, or -1 out of memory. */
static int find_breakers(struct source *src, struct err *e)
{
    static const char *const BREAKERS[] = DRY_BREAKERS;
    const struct vocab *v = &src->L->vocab;
    if (v->n <= 0)
        return 0;
    src->breaker = calloc((size_t)v->n, 1);
    if (!src->breaker)
        return err_set(e, ERR_SYSTEM, "out of memory for %d tokens' flags", v->n);
    for (int id = 0; id < v->n; id++) {
        size_t len;
        const char *b = vocab_bytes(v, id, &len);
        for (size_t k = 0; b && k < sizeof BREAKERS / sizeof BREAKERS[0]; k++)
            if (bytes_hold(b, len, BREAKERS[k]))
                src->breaker[id] = 1;
    }
    return 0;
}

int source_open_progress(struct source *src, const struct lesson *L, const struct config *config,
                         int hidden, int rows, const struct model_progress *p, struct err *e)
{
    memset(src, 0, sizeof *src);
    if (rows < 0 || rows > SOURCE_MAX_ROWS)
        return err_set(e, ERR_USAGE, "%d rows: from 1 to %d", rows, SOURCE_MAX_ROWS);
    src->L = L;
    src->config = config;
    for (size_t i = 0; !src->ops; i++)
        if (KINDS[i]->runs(L))
            src->ops = KINDS[i];
    /* A model's logits, captured ones, or a vocabulary too large to sort
     * on every key: the O(V) sampler, ranking the rows on screen. */
    if (L->model.on || L->captured || L->vocab.n > LESSON_MAX_VOCAB) {
        src->fast_rows = rows ? rows : SOURCE_FAST_ROWS;
        if (src->fast_rows > L->vocab.n)
            src->fast_rows = L->vocab.n;
    }
    src->progress = p;
    if (src->ops->open && src->ops->open(src, hidden, e) < 0) {
        memset(src, 0, sizeof *src);
        return -1;
    }
    src->progress = NULL; /* borrowed for the build alone */
    if (find_breakers(src, e) < 0) {
        source_close(src);
        return -1;
    }
    return 0;
}

void source_close(struct source *src)
{
    if (src->ops && src->ops->close)
        src->ops->close(src);
    free(src->breaker);
    source_grammar_free(src->grammar);
    memset(src, 0, sizeof *src);
}

int source_use_backend(struct source *src, struct backend *be, struct err *e)
{
    if (!src->ops->use_backend) {
        backend_drop_head(be); /* the head of a lesson before is not this one's */
        return 0;
    }
    return src->ops->use_backend(src, be, e);
}

int source_is_fast(const struct source *src)
{
    return src->fast_rows > 0;
}

int source_follows_context(const struct source *src)
{
    return src->ops->follows_context;
}

int source_written_for_path(const struct source *src)
{
    return src->ops->written_for_path;
}

void source_describe(const struct source *src, char *buf, size_t n)
{
    if (n)
        buf[0] = '\0';
    if (src->ops->describe)
        src->ops->describe(src, buf, n);
}

int source_speed(const struct source *src, struct source_speed *out)
{
    *out = (struct source_speed){ 0 };
    if (src->ops->speed)
        src->ops->speed(src, out);
    return out->prompt_tokens > 0 || out->eval_runs > 0 ? 0 : -1;
}

int source_hidden_size(const struct source *src)
{
    return src->ops->hidden_size ? src->ops->hidden_size(src) : 0;
}

int source_hidden(struct source *src, const int *ctx, int len, float *h, struct err *e)
{
    if (!src->ops->hidden)
        return err_set(e, ERR_USAGE, "lesson '%s' has no model to give hidden vectors", src->L->id);
    return src->ops->hidden(src, ctx, len, h, e);
}

const float *source_last_logits_f(const struct source *src, int k)
{
    struct source_logits z;
    if (k < 1 || k > src->L->n_steps || src->ops->peek(src, k, &z) < 0)
        return NULL;
    return z.f;
}

double source_logit(const struct source *src, int k, int id)
{
    struct source_logits z;
    if (k < 1 || k > src->L->n_steps || id < 0 || id >= src->L->vocab.n ||
        src->ops->peek(src, k, &z) < 0)
        return NAN;
    return z.d ? z.d[id] : z.f[id];
}

void source_step_settings(const struct source *src, int k, struct settings *s)
{
    settings_defaults(s);
    if (src->config)
        config_apply_defaults(src->config, s);
    lesson_apply_settings(src->L, k, s);
}

int source_prompt_len(const struct lesson *L, int len)
{
    return L->prompt_len <= len ? L->prompt_len : len;
}

uint32_t source_draw_step(const struct lesson *L, int len)
{
    return (uint32_t)(len - source_prompt_len(L, len) + 1);
}

/* A step refused for a z' out of the sampler's range names the setting
 * first ("temperature 1e-30: ...", sampler_range_error); when the value in
 * force is the one a line of the lesson file gave (no option or command
 * changed it since), the message names that file and line too. */
static void blame_lesson(const struct source *src, int k, const struct settings *s, struct err *e)
{
    const struct lesson *L = src->L;
    char name[64], own_value[96], value[96];
    size_t n = strcspn(e->msg, " :");
    if (!L->path || e->code != ERR_USAGE || n == 0 || n >= sizeof name)
        return;
    memcpy(name, e->msg, n);
    name[n] = '\0';
    const struct lesson_setting *line = lesson_setting_for(L, k, name);
    if (!line || !settings_known(name))
        return;
    struct settings own;
    source_step_settings(src, k, &own);
    settings_value(&own, name, own_value, sizeof own_value);
    settings_value(s, name, value, sizeof value);
    if (strcmp(own_value, value) == 0)
        err_prefix(e, "%s:%d", L->path, line->line);
}

int source_run_step(struct source *src, int k, const struct settings *s, const int *ctx, int len,
                    struct trace *t, struct err *e)
{
    const struct lesson *L = src->L;
    if (k < 1 || k > L->n_steps)
        return err_set(e, ERR_USAGE, "lesson '%s' has no step %d (it has %d)", L->id, k,
                       L->n_steps);
    struct source_logits z;
    if (src->ops->logits
            ? src->ops->logits(src, k, ctx, len, &z, e) < 0
            : src->ops->peek(src, k, &z) < 0 &&
                  err_set(e, ERR_SYSTEM, "lesson '%s': step %d has no logits", L->id, k) < 0)
        return -1;
    struct sampler_input in = {
        .vocab_size = L->vocab.n,
        .logits = z.d,
        .logits_f = z.f,
        .context = ctx,
        .context_len = len,
        .prompt_len = source_prompt_len(L, len),
        /* The Philox counter counts generated tokens, not lesson pages: two
         * pages at the same position with the same seed draw the same u. */
        .step = source_draw_step(L, len),
        .row = 0,
        .breaker = src->breaker,
        .end_ids = L->vocab.eos,
        .n_end = L->vocab.n_eos,
    };
    if (!in.logits && src->fast_rows <= 0)
        return err_set(e, ERR_SYSTEM, "lesson '%s': the reference sampler needs doubles", L->id);
    if (source_grammar_step(&src->grammar, &L->vocab, s, ctx, len, in.prompt_len, NULL, &in, e) < 0)
        return -1;
    int rc = src->fast_rows > 0 ? sampler_run_fast(&in, &s->sampler, t, src->fast_rows, e)
                                : sampler_run(&in, &s->sampler, t, e);
    if (rc < 0)
        blame_lesson(src, k, s, e);
    return rc;
}

const uint8_t *source_refused(const struct source *src)
{
    return source_grammar_refused(src->grammar);
}

int source_row_refused(struct source *src, const struct settings *s, const int *ctx, int len,
                       uint8_t *into, const uint8_t **refused, struct err *e)
{
    struct sampler_input in = { 0 };
    int rc = source_grammar_step(&src->grammar, &src->L->vocab, s, ctx, len,
                                 source_prompt_len(src->L, len), into, &in, e);
    *refused = in.refused;
    return rc;
}
