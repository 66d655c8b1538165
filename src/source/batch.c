/* batch.c - BATCH_ROWS requests sampled together on one backend. */
#include "source/batch.h"

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

/* On a toy lesson's seven tokens: one of each kind of cut, each far enough
 * from the others that their rows differ. */
static const char *const TOY_PRESETS[BATCH_TOY_ROWS][8] = {
    { "temperature", "0", NULL },
    { "temperature", "0.7", "top-k", "3", "seed", "1", NULL },
    { "temperature", "1.2", "top-p", "0.9", "seed", "2", NULL },
    { "temperature", "1", "min-p", "0.1", "seed", "3", NULL },
};

_Static_assert(LESSON_MAX_REQUESTS <= BATCH_ROWS, "a lesson's requests fit the batch");
_Static_assert(BATCH_TOY_ROWS <= BATCH_ROWS, "the toy presets fit the batch");

char batch_label(int row)
{
    return (char)('A' + row);
}

int batch_toy_step(const struct lesson *L, int len)
{
    int k = (int)source_draw_step(L, len);
    return k < L->n_steps ? k : L->n_steps;
}

void batch_free(struct batch *b)
{
    for (int r = 0; r < BATCH_ROWS; r++)
        gen_free(&b->row[r].g);
    free(b->h);
    free(b->refused);
    trace_free(&b->t);
    memset(b, 0, sizeof *b);
}

/* Every request's hidden vector, for the LM head. */
static int hidden_vectors(struct batch *b, struct source *src, struct err *e)
{
    int d = source_hidden_size(src);
    for (int r = 0; r < b->n; r++)
        if (source_hidden(src, b->row[r].g.ids, b->row[r].g.len, b->h + (size_t)r * d, e) < 0)
            return -1;
    return 0;
}

/* What the backend gives back for a row, from a trace of the single step's
 * sampler: the choice, the statistics, the first n_top rows. */
static void res_from_trace(const struct trace *t, int n_top, struct backend_res *r)
{
    memset(r, 0, sizeof *r);
    r->id = t->choice.id;
    r->sampled = t->choice.sampled;
    r->u = t->choice.u;
    r->final = t->rows[t->choice.rank].final;
    r->max_z = t->max_adjusted;
    r->sum_exp = t->sum_exp_shifted;
    r->kept_count = t->kept_count;
    r->kept_mass = t->kept_mass;
    r->entropy = t->entropy;
    r->entropy_final = t->entropy_final;
    r->n_top = n_top < t->n_rows ? n_top : t->n_rows;
    for (int i = 0; i < r->n_top; i++) {
        const struct trace_row *w = &t->rows[i];
        r->top[i] = (struct backend_top){ .id = w->id,
                                          .removed_by = w->removed_by,
                                          .z = w->adjusted,
                                          .prob = w->prob,
                                          .final = w->final };
    }
}

/* A toy batch: each request's row is its lesson step's logits, sampled by
 * the single step's sampler; all rows or none change. */
static int compute_toy(struct batch *b, struct source *src, struct err *e)
{
    struct backend_res res[BATCH_ROWS];
    for (int r = 0; r < b->n; r++) {
        const struct batch_row *w = &b->row[r];
        int k = batch_toy_step(src->L, w->g.len);
        if (w->g.stop.rule == STOP_NONE)
            b->toy_step = k;
        if (source_run_step(src, k, &w->set, w->g.ids, w->g.len, &b->t, e) < 0) {
            char msg[ERR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", e->msg);
            return err_set(e, e->code, "request %c: %s", batch_label(r), msg);
        }
        res_from_trace(&b->t, b->toy_top, &res[r]);
    }
    for (int r = 0; r < b->n; r++)
        b->row[r].res = res[r];
    return 0;
}

/* Request r's grammar mask (NULL: none), made in b's room for it. */
static int row_refused(struct batch *b, struct source *src, int r, const uint8_t **refused,
                       struct err *e)
{
    const struct batch_row *w = &b->row[r];
    size_t V = (size_t)src->L->vocab.n;
    *refused = NULL;
    if (!stage_active(&w->set.sampler, STAGE_GRAMMAR, (int)V))
        return 0;
    if (!b->refused && !(b->refused = malloc(BATCH_ROWS * V)))
        return err_set(e, ERR_SYSTEM, "out of memory for %d grammar masks", BATCH_ROWS);
    if (source_row_refused(src, &w->set, w->g.ids, w->g.len, b->refused + (size_t)r * V, refused,
                           e) < 0) {
        err_prefix(e, "request %c", batch_label(r));
        return -1;
    }
    return 0;
}

/* The LM head when asked for or when the backend no longer holds our
 * logits, then the sampler; the times are those of this computation. */
static int compute(struct batch *b, struct source *src, struct backend *be, int head, struct err *e)
{
    double t0 = clock_ms();
    if (b->toy) {
        b->head_ran = 0;
        if (compute_toy(b, src, e) < 0)
            return -1;
        b->kernel_ms = b->step_ms = clock_ms() - t0;
        return 0;
    }
    b->head_ran = head || b->be != be || b->gen != be->gen || be->rows < b->n;
    struct backend_req req[BATCH_ROWS];
    struct backend_res res[BATCH_ROWS];
    for (int r = 0; r < b->n; r++) {
        const struct batch_row *w = &b->row[r];
        const uint8_t *refused;
        if (row_refused(b, src, r, &refused, e) < 0)
            return -1;
        req[r] = (struct backend_req){ .s = w->set.sampler,
                                       .context = w->g.ids,
                                       .context_len = w->g.len,
                                       .prompt_len = b->prompt_len,
                                       .step = source_draw_step(src->L, w->g.len),
                                       .row = (uint32_t)r,
                                       .n_top = BATCH_TOP,
                                       .breaker = src->breaker,
                                       .end_ids = src->L->vocab.eos,
                                       .n_end = src->L->vocab.n_eos,
                                       .refused = refused };
    }
    if (b->head_ran) { /* the head and the sampler as one step (one wait on a GPU) */
        if (hidden_vectors(b, src, e) < 0 || backend_step(be, b->h, b->n, req, res, e) < 0)
            return -1;
        b->head_kernel_ms = be->head_ms;
        b->gen = be->gen;
        b->be = be;
    } else if (backend_sample(be, req, b->n, res, e) < 0) {
        return -1;
    }
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

/* Applies "name value | name value" (checked when the lesson was read). */
static int apply_list(struct settings *s, const char *text, struct err *e)
{
    char buf[SETTINGS_LIST_MAX];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *cursor = buf, *part; (part = settings_list_next(&cursor)) != NULL;) {
        char name[48] = "";
        int off = 0;
        if (sscanf(part, " %47s %n", name, &off) < 1)
            continue;
        char *value = part + off;
        size_t vl = strlen(value);
        while (vl > 0 && value[vl - 1] == ' ')
            value[--vl] = '\0';
        if (settings_set(s, name, value, e) < 0)
            return -1;
    }
    return 0;
}

/* How many requests src's lesson batches. */
static int batch_size(const struct source *src)
{
    if (src->L->n_request)
        return src->L->n_request;
    return source_hidden_size(src) ? BATCH_ROWS : BATCH_TOY_ROWS;
}

int batch_preset(const struct source *src, int row, struct settings *s, struct err *e)
{
    const struct lesson *L = src->L;
    int toy = !source_hidden_size(src);
    if (row < 0 || row >= batch_size(src))
        return err_set(e, ERR_USAGE, "no request %c in the batch", batch_label(row < 0 ? 0 : row));
    source_step_settings(src, 1, s);
    sampler_defaults(&s->sampler);
    /* A toy request has logits for as many tokens as the lesson has steps. */
    if (toy && (s->max_tokens == 0 || s->max_tokens > L->n_steps))
        s->max_tokens = L->n_steps;
    if (s->max_tokens == 0)
        s->max_tokens = BATCH_MAX_TOKENS;
    if (L->n_request)
        return apply_list(s, L->requests[row].text, e);
    const char *const *p = toy ? TOY_PRESETS[row] : PRESETS[row];
    for (int k = 0; p[k]; k += 2)
        if (settings_set(s, p[k], p[k + 1], e) < 0)
            return -1;
    return 0;
}

/* What a batch on src takes: the hidden vectors of a model's rows, or a
 * toy row's trace. */
static int batch_alloc(struct batch *b, const struct source *src, struct err *e)
{
    if (b->toy) {
        int v = src->L->vocab.n;
        b->toy_top = v < BACKEND_MAX_TOP ? v : BACKEND_MAX_TOP;
        return trace_init(&b->t, v, e);
    }
    b->h = malloc((size_t)b->n * (size_t)source_hidden_size(src) * sizeof *b->h);
    if (!b->h)
        return err_set(e, ERR_SYSTEM, "out of memory for the batch");
    return 0;
}

int batch_open(struct batch *b, struct source *src, struct backend *be, struct err *e)
{
    const struct lesson *L = src->L;
    memset(b, 0, sizeof *b);
    b->toy = !source_hidden_size(src);
    if (!b->toy && !be)
        return err_set(e, ERR_USAGE, "the batch view of '%s' needs a backend", L->id);
    b->n = batch_size(src);
    b->prompt_len = L->prompt_len;
    if (batch_alloc(b, src, e) < 0) {
        batch_free(b);
        return -1;
    }
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
    /* A toy lesson's step has one row of logits whatever the text before
     * it, so after one token the requests' texts differ and the lesson has
     * no row for each: appending would give them all the same next row. */
    if (b->toy)
        return err_set(e, ERR_USAGE,
                       "a toy lesson has one row of logits per step, not one per text: its batch "
                       "stops at one step (B shows the steps one at a time)");
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
        return err_set(e, ERR_USAGE, "no request %c in the batch", batch_label(row < 0 ? 0 : row));
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

/* A setting's label, or in compact form without its "top-" ("k 40"): the
 * word dropped, the digits kept. */
static const char *label_of(const struct setting_info *i, int compact)
{
    return compact && strncmp(i->status, "top-", 4) == 0 ? i->status + 4 : i->status;
}

static void describe(const struct batch_row *r, int compact, char *buf, size_t n)
{
    const struct settings *s = &r->set;
    const struct sampler_settings *m = &s->sampler;
    buf[0] = '\0';
    if (m->chain.preset != PRESET_LESSON) {
        utf8_append(buf, n, preset_name(m->chain.preset));
        utf8_append(buf, n, compact ? " " : ": ");
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
        int always = (STAGES[i->stage].flags & SF_ZERO_CUTS) && setting_of_stage(i->stage) == i;
        if (!always && !(in_chain(m, i->stage) && setting_is_on(i, m, INT_MAX)))
            continue;
        char v[64];
        if (always && !in_chain(m, i->stage))
            snprintf(v, sizeof v, "%g", i->def);
        else
            setting_value(s, i, v, sizeof v);
        utf8_append(buf, n, buf[0] && buf[strlen(buf) - 1] != ' ' ? " " : "");
        utf8_append(buf, n, label_of(i, compact));
        utf8_append(buf, n, " ");
        utf8_append(buf, n, v);
        if (setting_of_stage(i->stage) == i)
            put_modifiers(s, i, buf, n);
    }
    char seed[32];
    snprintf(seed, sizeof seed, " seed %llu", (unsigned long long)m->seed);
    utf8_append(buf, n, seed);
}

void batch_describe(const struct batch_row *r, char *buf, size_t n)
{
    describe(r, 0, buf, n);
}

void batch_describe_fit(const struct batch_row *r, int width, char *buf, size_t n)
{
    describe(r, 0, buf, n);
    if (utf8_width(buf) > width)
        describe(r, 1, buf, n);
    if (utf8_width(buf) > width && width >= 0) {
        char cut[256];
        utf8_pad(buf, width, 0, cut, sizeof cut);
        utf8_copy(buf, n, cut);
    }
}

/* One request's part of batch_explain: "A (greedy) took on (p 1.0000)". */
static void explain_row(const struct batch *b, int r, const struct vocab *v, char *buf, size_t n)
{
    const struct batch_row *w = &b->row[r];
    char set[128], tok[96];
    batch_describe(w, set, sizeof set);
    utf8_escape(vocab_token(v, w->res.id), tok, sizeof tok);
    if (w->g.stop.rule != STOP_NONE)
        snprintf(buf, n, "%c has stopped", batch_label(r));
    else if (!w->res.sampled)
        snprintf(buf, n, "%c takes the argmax \"%s\"", batch_label(r), tok);
    else
        snprintf(buf, n, "%c keeps %d, u %.4f draws \"%s\"", batch_label(r), w->res.kept_count,
                 w->res.u, tok);
}

void batch_explain(const struct batch *b, const struct vocab *v, char *buf, size_t n)
{
    if (b->toy)
        snprintf(buf, n,
                 "%d requests in one sampler call, each its own settings on the same row of "
                 "logits (step %d's): ",
                 b->n, b->toy_step);
    else
        snprintf(buf, n,
                 "%d requests: one LM-head call makes their %d rows of logits, one sampler call "
                 "applies each one's settings to its own row: ",
                 b->n, b->n);
    for (int r = 0; r < b->n; r++) {
        char one[320];
        explain_row(b, r, v, one, sizeof one);
        utf8_append(buf, n, one);
        utf8_append(buf, n, r + 1 < b->n ? "; " : ". ");
    }
    utf8_append(buf, n,
                !batch_running(b) ? "Home starts the batch again."
                : b->toy ? "A setting key changes the chosen request's row alone. The lesson "
                           "has one row of logits per step, not one per text, so the batch "
                           "stops at this step."
                         : "A setting key changes the chosen request's row alone; "
                           "Space appends every token and samples again.");
}
