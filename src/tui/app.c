/* app.c - the model of the running program and its keys.
 *
 * The steps taken form a history; the one on screen is either the live step
 * (not drawn yet) or a taken one being looked at again. Changing a setting
 * while looking at a taken step goes back to it: the steps after it are
 * dropped and it becomes the live step, drawn anew with the new settings.
 */
#include "tui/app.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "report/report.h"

const char *const APP_KEY_HELP[] = {
    "Space, Enter  take the step: draw with the seed, append, go on",
    "Left, Right   walk through the steps taken; Home starts the lesson again",
    "n, N          next, previous lesson",
    "t T k K p P   temperature, top-k, top-p down, up (temperature 0 is greedy)",
    "m M r R       min-p, repetition penalty down, up",
    "f, g          penalty formula (engine, lesson), scope (generated, all)",
    "o             next order preset: lesson, hf, vllm, llamacpp",
    "s, S          next seed, type a seed",
    "u             show where the seeded u lands before taking the step",
    "l             the lesson text on the whole screen (Up, Down scroll)",
    ".             the step's next suggested setting",
    "/             full size: find a token by its text or id and show its row",
    "D             full size: 10,000 draws counted against the probabilities",
    "B             full size: 8 requests sampled together (Up, Down pick one;",
    "              the setting keys and x change it alone; Space steps all)",
    "x             drop your changes: back to the lesson's settings",
    "a, v          answer the exercise, show its solution",
    "Up, Down      scroll the lesson text (also PgUp, PgDn)",
    ":             a command: a setting by name (:temperature 0.5, :seed 42),",
    "              :lesson ID, :step N, :reset, :quit",
    "?             this help (any key closes it)",
    "q             quit",
    NULL,
};

/* ---- settings ---------------------------------------------------------------- */

static void set_msg(struct app *a, int warn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_msg(struct app *a, int warn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->msg, sizeof a->msg, fmt, ap);
    va_end(ap);
    a->msg_warn = warn;
}

/* Settings of lesson step k: defaults, the lesson's, the command line's, then
 * the ones changed while running. All were checked when they were stored. */
static void step_settings(const struct app *a, int k, struct settings *s)
{
    struct err e;
    source_step_settings(&a->L, k, s);
    for (int i = 0; i < a->n_cli; i++)
        settings_set(s, a->cli[i].name, a->cli[i].value, &e);
    for (int i = 0; i < a->n_live; i++)
        settings_set(s, a->live[i].name, a->live[i].value, &e);
}

static int add_override(struct app_override *list, int *n, const char *name, const char *value)
{
    /* A later value of a setting replaces the earlier one; stop strings add
     * up, and an empty stop clears them. */
    int stop = strcmp(name, "stop") == 0;
    if (stop && value[0] == '\0') {
        int k = 0;
        for (int i = 0; i < *n; i++)
            if (strcmp(list[i].name, "stop") != 0)
                list[k++] = list[i];
        *n = k;
    } else if (!stop) {
        for (int i = 0; i < *n; i++)
            if (strcmp(list[i].name, name) == 0) {
                snprintf(list[i].value, sizeof list[i].value, "%s", value);
                return 0;
            }
    }
    if (*n == APP_MAX_OVERRIDES)
        return -1;
    snprintf(list[*n].name, sizeof list[*n].name, "%s", name);
    snprintf(list[*n].value, sizeof list[*n].value, "%s", value);
    (*n)++;
    return 0;
}

/* ---- the step on screen ---------------------------------------------------------- */

const struct app_entry *app_shown_entry(const struct app *a)
{
    return a->pos < a->n_hist ? &a->hist[a->pos] : NULL;
}

/* The many draws of the step on screen: on the CPU straight from the trace;
 * on another backend the draws run there, on the step's logits, and only
 * the tokens come back to be counted. */
static int many_draws(struct app *a, struct err *e)
{
    uint32_t step = source_draw_step(&a->L, a->cur_len);
    struct backend *be = a->src.backend;
    if (!be || be->ops == &backend_cpu_ops)
        return draws_run(&a->t, a->cur.sampler.seed, step, DRAWS_DEFAULT, DRAWS_ROWS, &a->draws, e);
    const float *z = source_last_logits_f(&a->L, a->cur_step);
    struct backend_req req = { .s = a->cur.sampler,
                               .context = a->cur_ctx,
                               .context_len = a->cur_len,
                               .prompt_len = source_prompt_len(&a->L, a->cur_len),
                               .step = step };
    if (!z)
        return err_set(e, ERR_SYSTEM, "the step's logits are not floats");
    int *kept = malloc(2 * DRAWS_DEFAULT * sizeof *kept), *plain = kept + DRAWS_DEFAULT;
    if (!kept)
        return err_set(e, ERR_SYSTEM, "out of memory for %d draws", DRAWS_DEFAULT);
    int rc = backend_set_logits(be, z, 1, a->L.vocab.n, e) < 0 ||
                     backend_draws(be, &req, DRAWS_DEFAULT, kept, plain, e) < 0
                 ? -1
                 : draws_tally(&a->t, kept, plain, DRAWS_DEFAULT, DRAWS_ROWS, &a->draws, e);
    free(kept);
    return rc;
}

/* Recomputes the trace of the step on screen. */
static void recompute(struct app *a)
{
    double t0 = clock_ms();
    const struct app_entry *en = app_shown_entry(a);
    if (en) {
        a->cur = en->settings;
        a->cur_ctx = en->ctx;
        a->cur_len = en->len;
        a->cur_step = en->step;
    } else {
        step_settings(a, a->live_step, &a->cur);
        a->cur_ctx = a->live_ctx;
        a->cur_len = a->live_len;
        a->cur_step = a->live_step;
    }
    struct err e;
    a->draws_ok = 0;
    if (source_run_step(&a->L, a->cur_step, &a->cur, a->cur_ctx, a->cur_len, &a->t, &e) < 0) {
        set_msg(a, 1, "%s", e.msg);
    } else if (a->draws_on && source_is_fast(&a->L)) {
        if (many_draws(a, &e) < 0)
            set_msg(a, 1, "%s", e.msg);
        else
            a->draws_ok = 1;
    }
    a->recompute_us = (clock_ms() - t0) * 1e3;
}

/* Whether the live context is the one the lesson wrote step k's logits for. */
static void check_script(struct app *a)
{
    a->off_script = 0;
    a->script_text[0] = '\0';
    if (a->L.model.on || a->L.captured)
        return; /* the model's logits follow any context; captured ones follow none */
    int *ctx = NULL, len = 0;
    struct err e;
    if (source_lesson_context(&a->L, a->live_step, &ctx, &len, &e) < 0)
        return;
    if (len != a->live_len || (len && memcmp(ctx, a->live_ctx, (size_t)len * sizeof *ctx))) {
        a->off_script = 1;
        vocab_detok(&a->L.vocab, ctx, len, a->script_text, sizeof a->script_text);
    }
    free(ctx);
}

static void reset_exercise(struct app *a)
{
    memset(a->ans, 0, sizeof a->ans);
    a->ask_index = 0;
    a->revealed = 0;
    a->try_index = -1;
    a->scroll = 0;
}

/* Makes step k live in context ctx (copied). */
static int go_live(struct app *a, int k, const int *ctx, int len)
{
    int *copy = malloc((size_t)(len > 0 ? len : 1) * sizeof *copy);
    if (!copy) {
        set_msg(a, 1, "out of memory");
        return -1;
    }
    if (len)
        memcpy(copy, ctx, (size_t)len * sizeof *copy);
    free(a->live_ctx);
    a->live_ctx = copy;
    a->live_len = len;
    a->live_step = k;
    a->end = END_NONE;
    a->resume_step = 0;
    a->pos = a->n_hist;
    a->show_u = 0;
    reset_exercise(a);
    check_script(a);
    return 0;
}

static void drop_history_from(struct app *a, int from)
{
    for (int i = from; i < a->n_hist; i++) {
        free(a->hist[i].ctx);
        free(a->hist[i].ans);
    }
    if (from < a->n_hist)
        a->n_hist = from;
}

/* Starts the loaded lesson from its step k, on the lesson's own path. */
static void start_at(struct app *a, int k)
{
    drop_history_from(a, 0);
    int *ctx = NULL, len = 0;
    struct err e;
    if (source_lesson_context(&a->L, k, &ctx, &len, &e) < 0) {
        set_msg(a, 1, "%s", e.msg);
        return;
    }
    go_live(a, k, ctx, len);
    free(ctx);
    recompute(a);
}

/* Going back to a taken step to change it: it becomes live again. */
static void reopen_shown(struct app *a)
{
    if (a->pos >= a->n_hist)
        return;
    struct app_entry en = a->hist[a->pos];
    int later = a->n_hist - a->pos - 1;
    int *ctx = en.ctx;
    a->hist[a->pos].ctx = NULL;
    drop_history_from(a, a->pos);
    go_live(a, en.step, ctx, en.len);
    free(ctx);
    if (later > 0)
        set_msg(a, 0, "back at step %d: %d step%s after it %s dropped", en.step, later,
                later == 1 ? "" : "s", later == 1 ? "was" : "were");
}

/* ---- lessons ------------------------------------------------------------------- */

static int open_lesson(struct app *a, const char *what, int index, struct err *e)
{
    struct lesson L;
    int rc;
    if (index >= 0)
        rc = lesson_load(&L, a->cat.files[index], e);
    else
        rc = catalog_load_any(&a->cat, what, a->src.vocab, &L, e);
    if (rc < 0)
        return -1;
    L.config = a->src.config;
    if (source_open(&L, a->src.hidden, SOURCE_FAST_ROWS, e) < 0) {
        lesson_free(&L);
        return -1;
    }
    struct trace t;
    if (trace_init(&t, L.vocab.n, e) < 0) {
        lesson_free(&L);
        return -1;
    }
    if (a->src.backend && source_use_backend(&L, a->src.backend, e) < 0) {
        trace_free(&t);
        lesson_free(&L);
        /* The head the backend held was the lesson still open: put it back. */
        struct err again;
        if (source_use_backend(&a->L, a->src.backend, &again) < 0 && a->batch_on) {
            /* The head the batch was computed with is gone: close the view. */
            batch_free(&a->batch);
            a->batch_on = 0;
        }
        return -1;
    }
    drop_history_from(a, 0);
    trace_free(&a->t);
    lesson_free(&a->L);
    batch_free(&a->batch);
    a->batch_on = 0;
    a->L = L;
    a->t = t;
    a->lesson_index = index;
    a->find_id = -1;
    a->draws_on = 0;
    if (index < 0)
        a->lesson_index = catalog_find(&a->cat, a->L.id);
    a->n_live = 0;
    start_at(a, 1);
    return 0;
}

static int step_lesson(struct app *a, int delta)
{
    if (a->cat.n == 0)
        return APP_REDRAW;
    int i = a->lesson_index < 0 ? 0 : a->lesson_index;
    for (int tries = 0; tries < a->cat.n; tries++) {
        i = (i + delta + a->cat.n) % a->cat.n;
        struct err e;
        if (open_lesson(a, NULL, i, &e) == 0) {
            set_msg(a, 0, "lesson %d of %d: %s%s", i + 1, a->cat.n, a->L.id,
                    delta > 0 && i == 0 ? " (back to the first)" : "");
            return APP_REDRAW;
        }
        set_msg(a, 1, "%s", e.msg);
    }
    return APP_REDRAW;
}

/* ---- taking steps -------------------------------------------------------------- */

static void ask_prompt(struct app *a);

/* What Space says when nothing is left to take. */
static void end_message(struct app *a)
{
    if (a->end == END_STOP && a->resume_step)
        return; /* Space goes on: nothing to say */
    if (a->end == END_STOP)
        set_msg(a, 0, "generation stopped: Home starts the lesson again, n opens the next one%s",
                a->n_live ? " (x drops your changes)" : "");
    else
        set_msg(a, 0, "end of the lesson: n opens the next one, Home starts this one again");
}

static int take_step(struct app *a)
{
    if (a->pos < a->n_hist - 1) { /* looking back: Space walks forward */
        a->pos++;
        a->scroll = 0;
        recompute(a);
        return APP_REDRAW;
    }
    if (a->pos == a->n_hist - 1) {
        if (a->end == END_NONE) {
            a->pos = a->n_hist;
            a->scroll = 0;
            recompute(a);
        } else if (a->end == END_STOP && a->resume_step) {
            const struct lesson_step *S = &a->L.steps[a->resume_step - 1];
            go_live(a, a->resume_step, S->context, S->context_len);
            recompute(a);
        } else {
            end_message(a);
        }
        return APP_REDRAW;
    }
    if (app_hidden(a)) {
        ask_prompt(a); /* an exercise is answered before its step is taken */
        return APP_REDRAW;
    }
    if (a->n_hist == APP_MAX_HISTORY) {
        set_msg(a, 1, "history is full (%d steps): Home starts again", APP_MAX_HISTORY);
        return APP_REDRAW;
    }
    int k = a->live_step, len = a->live_len;
    int *next = malloc((size_t)(len + 1) * sizeof *next);
    const struct lesson_step *S = &a->L.steps[k - 1];
    struct app_answer *ans = S->n_ask ? malloc((size_t)S->n_ask * sizeof *ans) : NULL;
    if (!next || (S->n_ask && !ans)) {
        free(next);
        free(ans);
        set_msg(a, 1, "out of memory");
        return APP_REDRAW;
    }
    if (ans)
        memcpy(ans, a->ans, (size_t)S->n_ask * sizeof *ans);
    if (len)
        memcpy(next, a->live_ctx, (size_t)len * sizeof *next);
    next[len] = a->t.choice.id;
    int plen = source_prompt_len(&a->L, len);
    struct app_entry en = {
        .step = k,
        .ctx = a->live_ctx,
        .len = len,
        .settings = a->cur,
        .choice = a->t.choice.id,
        .sampled = a->t.choice.sampled,
        .u = a->t.choice.u,
        .stop = stop_check(&a->cur, &a->L.vocab, next, len + 1, plen),
        .n_ans = S->n_ask,
        .ans = ans,
    };
    a->live_ctx = NULL;
    a->hist[a->n_hist++] = en;

    char tok[64], why[160];
    snprintf(tok, sizeof tok, "%s", vocab_token(&a->L.vocab, en.choice));
    if (en.sampled)
        set_msg(a, 0, "step %d drew \"%s\" (u = %.4f, seed %llu)", k, tok, en.u,
                (unsigned long long)en.settings.sampler.seed);
    else
        set_msg(a, 0, "step %d took \"%s\" (greedy)", k, tok);
    const struct lesson_step *nextS = k < a->L.n_steps ? &a->L.steps[k] : NULL;
    if (en.stop.rule != STOP_NONE) {
        /* The rule ends the text here; a next step with its own context is a
         * new text, which Space then opens. */
        stop_describe(&en.stop, &en.settings, &a->L.vocab, why, sizeof why);
        a->end = END_STOP;
        a->resume_step = nextS && nextS->has_context ? k + 1 : 0;
        a->pos = a->n_hist - 1;
        set_msg(a, 0, "step %d: \"%s\", then stop: %s.%s", k, tok, why,
                a->resume_step ? " Space goes on to the next step (a new text)." : "");
    } else if (!nextS) {
        a->end = END_LESSON;
        a->pos = a->n_hist - 1;
    } else if (nextS->has_context) {
        go_live(a, k + 1, nextS->context, nextS->context_len);
    } else {
        go_live(a, k + 1, next, len + 1);
    }
    free(next);
    recompute(a);
    return APP_REDRAW;
}

/* ---- settings from keys -------------------------------------------------------- */

/* The settings the keys change: the selected request's in the batch view,
 * else the step's on screen. */
static const struct settings *edit_settings(const struct app *a)
{
    return a->batch_on ? &a->batch.row[a->batch_sel].set : &a->cur;
}

/* In the batch view a setting belongs to one request: the others keep
 * theirs, and since each row's u depends only on its own seed and counter,
 * their tokens stay as they were. */
static int apply_batch_setting(struct app *a, const char *name, const char *value)
{
    struct err e;
    struct settings before = a->batch.row[a->batch_sel].set;
    if (batch_set(&a->batch, a->batch_sel, name, value, &e) < 0) {
        set_msg(a, 1, "%s: %s", name, e.msg);
        return APP_REDRAW;
    }
    if (batch_sample(&a->batch, &a->L, a->src.backend, &e) < 0) {
        a->batch.row[a->batch_sel].set = before; /* not applied: the request keeps its own */
        set_msg(a, 1, "%s", e.msg);
        return APP_REDRAW;
    }
    char v[STOP_LEN * 2 + 16];
    settings_value(&a->batch.row[a->batch_sel].set, name, v, sizeof v);
    set_msg(a, 0, "request %d: %s %s (the other requests keep theirs)", a->batch_sel, name, v);
    return APP_REDRAW;
}

/* Sets a live override; on a taken step, goes back to it first. */
static int apply_setting(struct app *a, const char *name, const char *value)
{
    if (a->batch_on)
        return apply_batch_setting(a, name, value);
    struct settings check = a->cur;
    struct err e;
    if (settings_set(&check, name, value, &e) < 0) {
        set_msg(a, 1, "%s: %s", name, e.msg);
        return APP_REDRAW;
    }
    if (add_override(a->live, &a->n_live, name, value) < 0) {
        set_msg(a, 1, "too many changed settings: x drops them");
        return APP_REDRAW;
    }
    if (a->pos < a->n_hist) {
        reopen_shown(a);
    } else {
        char v[STOP_LEN * 2 + 16];
        settings_value(&check, name, v, sizeof v);
        set_msg(a, 0, "%s %s", name, v);
    }
    recompute(a);
    return APP_REDRAW;
}

static int set_number(struct app *a, const char *name, double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.6g", v);
    return apply_setting(a, name, buf);
}

/* The next value on a ladder above (dir > 0) or below the current one. */
static int ladder(const double *steps, int n, double cur, int dir, double *out)
{
    if (dir > 0) {
        for (int i = 0; i < n; i++)
            if (steps[i] > cur + 1e-12) {
                *out = steps[i];
                return 1;
            }
    } else {
        for (int i = n - 1; i >= 0; i--)
            if (steps[i] < cur - 1e-12) {
                *out = steps[i];
                return 1;
            }
    }
    return 0;
}

static int key_ladder(struct app *a, const char *name, const double *steps, int n, double cur,
                      int dir)
{
    double v;
    if (!ladder(steps, n, cur, dir, &v)) {
        set_msg(a, 0, "%s is already at its %s", name,
                dir > 0 ? (strcmp(name, "top-p") == 0 ? "highest step (off)" : "highest step")
                        : "lowest step");
        return APP_REDRAW;
    }
    return set_number(a, name, v);
}

static int key_top_k(struct app *a, int dir)
{
    /* Off means every token, so it sits above the largest k. */
    int V = a->L.vocab.n, k = edit_settings(a)->sampler.top_k;
    double cur = (k <= 0 || k >= V) ? INFINITY : k;
    double steps[32];
    int n = 0;
    static const int MORE[] = { 20, 40, 50, 100, 200, 500, 1000, 10000, 100000 };
    for (int i = 1; i <= 10 && i < V; i++)
        steps[n++] = i;
    for (size_t i = 0; i < sizeof MORE / sizeof MORE[0]; i++)
        if (MORE[i] < V)
            steps[n++] = MORE[i];
    steps[n++] = INFINITY;
    double v;
    if (!ladder(steps, n, cur, dir, &v)) {
        set_msg(a, 0, "top-k is already at its %s", dir > 0 ? "highest step (off)" : "lowest step");
        return APP_REDRAW;
    }
    if (isinf(v))
        return apply_setting(a, "top-k", "off");
    return set_number(a, "top-k", v);
}

static int key_toggle(struct app *a, const char *name, const char *x, const char *y)
{
    char v[32];
    settings_value(edit_settings(a), name, v, sizeof v);
    int flags = apply_setting(a, name, strcmp(v, x) == 0 ? y : x);
    if (edit_settings(a)->sampler.repetition_penalty == 1.0 && !a->msg_warn)
        snprintf(a->msg + strlen(a->msg), sizeof a->msg - strlen(a->msg),
                 " (the repetition penalty is off: R turns it on)");
    return flags;
}

static int key_order(struct app *a)
{
    static const char *const NEXT[] = { "hf", "vllm", "llamacpp", "lesson", "lesson" };
    return apply_setting(a, "order", NEXT[edit_settings(a)->sampler.chain.preset]);
}

static int key_seed(struct app *a)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)(edit_settings(a)->sampler.seed + 1));
    return apply_setting(a, "seed", buf);
}

static int key_try(struct app *a)
{
    const struct lesson_step *S = &a->L.steps[a->cur_step - 1];
    if (S->n_try == 0) {
        set_msg(a, 0, "this step suggests nothing to try");
        return APP_REDRAW;
    }
    int i = (a->try_index + 1) % S->n_try;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", S->tries[i].text);
    a->n_live = 0; /* a suggestion starts from the lesson's own settings */
    int flags = APP_REDRAW;
    for (char *part = strtok(buf, "|"); part; part = strtok(NULL, "|")) {
        while (*part == ' ')
            part++;
        flags |= app_command(a, part);
    }
    a->try_index = i;
    set_msg(a, 0, "try %d of %d: %s (from the lesson's own settings)", i + 1, S->n_try,
            S->tries[i].text);
    return flags;
}

static int key_reset(struct app *a)
{
    int had = a->n_live;
    a->n_live = 0;
    a->try_index = -1;
    if (!had) {
        set_msg(a, 0, "these are the lesson's settings already%s",
                a->n_cli ? " (with the command line's)" : "");
        return APP_REDRAW;
    }
    if (a->pos < a->n_hist)
        reopen_shown(a);
    if (!a->msg[0] || strncmp(a->msg, "back at", 7) != 0)
        set_msg(a, 0, "back to the lesson's settings%s",
                a->n_cli ? " (the command line's settings stay)" : "");
    recompute(a);
    return APP_REDRAW;
}

/* ---- exercises ------------------------------------------------------------------- */

int app_hidden(const struct app *a)
{
    if (a->pos < a->n_hist || a->end != END_NONE)
        return 0;
    return a->L.steps[a->live_step - 1].n_ask > 0 && !a->revealed;
}

static void ask_prompt(struct app *a)
{
    const struct lesson_step *S = &a->L.steps[a->live_step - 1];
    char what[64];
    ask_describe(&a->L, &S->ask[a->ask_index], what, sizeof what);
    a->mode = MODE_ANSWER;
    a->input_len = 0;
    a->input[0] = '\0';
    const struct ask *q = &S->ask[a->ask_index];
    set_msg(a, 0, "answer %d of %d: %s = ? (%d decimals; Enter checks, Esc stops)",
            a->ask_index + 1, S->n_ask, what, q->digits >= 0 ? q->digits : S->digits);
}

static int submit_answer(struct app *a)
{
    const struct lesson_step *S = &a->L.steps[a->live_step - 1];
    double v;
    struct err e;
    if (parse_double(a->input, &v, &e) < 0) {
        set_msg(a, 1, "%s: type a number, or Esc to stop", e.msg);
        a->input_len = 0;
        a->input[0] = '\0';
        return APP_REDRAW;
    }
    const struct ask *q = &S->ask[a->ask_index];
    /* Answers are checked against the exercise as the lesson sets it, even
     * when the screen shows other settings. */
    struct settings own;
    struct trace t;
    struct err e2;
    source_step_settings(&a->L, a->live_step, &own);
    if (trace_init(&t, a->L.vocab.n, &e2) < 0 ||
        source_run_step(&a->L, a->live_step, &own, a->live_ctx, a->live_len, &t, &e2) < 0) {
        trace_free(&t);
        set_msg(a, 1, "%s", e2.msg);
        return APP_REDRAW;
    }
    double want = report_ask_value(&t, q);
    trace_free(&t);
    /* Within one unit of the last decimal the lesson uses: rounding along the
     * way (as the lessons' own solutions do) is not a mistake. */
    double tol = pow(10.0, -(q->digits >= 0 ? q->digits : S->digits)) * (1.0 + 1e-9);
    struct app_answer *ans = &a->ans[a->ask_index];
    ans->given = 1;
    ans->value = v;
    ans->ok = fabs(v - want) <= tol;
    a->ask_index++;
    if (a->ask_index < S->n_ask) {
        ask_prompt(a);
        return APP_REDRAW;
    }
    int right = 0;
    for (int i = 0; i < S->n_ask; i++)
        right += a->ans[i].ok;
    a->mode = MODE_NORMAL;
    a->revealed = 1;
    set_msg(a, right < S->n_ask, "%d of %d right: the solution is shown", right, S->n_ask);
    return APP_REDRAW;
}

/* ---- commands ---------------------------------------------------------------------- */

static int find_token(struct app *a, const char *text);
static int toggle_batch(struct app *a);
static int batch_reset_row(struct app *a);

int app_command(struct app *a, const char *line)
{
    char name[48] = "";
    int off = 0;
    while (*line == ' ' || *line == ':')
        line++;
    if (sscanf(line, "%47s %n", name, &off) < 1)
        return APP_REDRAW;
    char value[APP_INPUT_MAX];
    snprintf(value, sizeof value, "%s", off ? line + off : "");
    size_t vl = strlen(value);
    while (vl > 0 && value[vl - 1] == ' ')
        value[--vl] = '\0';
    if (strcmp(name, "q") == 0 || strcmp(name, "quit") == 0)
        return APP_QUIT;
    if (strcmp(name, "help") == 0) {
        a->mode = MODE_HELP;
        return APP_REDRAW;
    }
    if (a->batch_on && strcmp(name, "reset") == 0)
        return batch_reset_row(a);
    if (a->batch_on &&
        (strcmp(name, "step") == 0 || strcmp(name, "draws") == 0 || strcmp(name, "find") == 0)) {
        set_msg(a, 0, ":%s is for the single step: B leaves the batch view first", name);
        return APP_REDRAW;
    }
    if (strcmp(name, "reset") == 0)
        return key_reset(a);
    if (strcmp(name, "lesson") == 0) {
        struct err e;
        if (!value[0])
            set_msg(a, 1, "lesson: which one? (:lesson toy)");
        else if (open_lesson(a, value, -1, &e) < 0)
            set_msg(a, 1, "%s", e.msg);
        else
            set_msg(a, 0, "lesson %s", a->L.id);
        return APP_REDRAW;
    }
    if (strcmp(name, "find") == 0)
        return find_token(a, value);
    if (strcmp(name, "draws") == 0) {
        if (!source_is_fast(&a->L)) {
            set_msg(a, 1, "many draws are for full-size steps (real-france, ...)");
        } else {
            a->draws_on = !a->draws_on;
            recompute(a);
            if (a->draws_ok)
                set_msg(a, 0,
                        "%d draws with this step's settings and seed, counted beside the "
                        "probabilities (D hides them)",
                        DRAWS_DEFAULT);
        }
        return APP_REDRAW;
    }
    if (strcmp(name, "batch") == 0)
        return toggle_batch(a);
    if (strcmp(name, "step") == 0) {
        int k;
        struct err e;
        if (parse_int(value, 1, a->L.n_steps, &k, &e) < 0)
            set_msg(a, 1, "step: %s", e.msg);
        else
            start_at(a, k);
        return APP_REDRAW;
    }
    if (settings_known(name))
        return apply_setting(a, name, value);
    set_msg(a, 1,
            "unknown command '%s' (a setting such as temperature, or lesson, step, reset, "
            "help, quit)",
            name);
    return APP_REDRAW;
}

static int key_input(struct app *a, int key, int (*submit)(struct app *))
{
    if (key == AK_ESC) {
        a->mode = MODE_NORMAL;
        a->msg[0] = '\0';
        return APP_REDRAW;
    }
    if (key == AK_ENTER)
        return submit(a);
    if (key == AK_BACKSPACE) {
        /* Back over one UTF-8 character. */
        while (a->input_len > 0 && ((unsigned char)a->input[a->input_len - 1] & 0xC0) == 0x80)
            a->input_len--;
        if (a->input_len > 0)
            a->input_len--;
        a->input[a->input_len] = '\0';
        return APP_REDRAW;
    }
    if (key >= 0x20 && key < AK_SPECIAL && key != 0x7F) {
        char buf[4];
        int n;
        if (key < 0x80)
            buf[0] = (char)key, n = 1;
        else if (key < 0x800)
            buf[0] = (char)(0xC0 | (key >> 6)), buf[1] = (char)(0x80 | (key & 0x3F)), n = 2;
        else if (key < 0x10000)
            buf[0] = (char)(0xE0 | (key >> 12)), buf[1] = (char)(0x80 | ((key >> 6) & 0x3F)),
            buf[2] = (char)(0x80 | (key & 0x3F)), n = 3;
        else
            buf[0] = (char)(0xF0 | (key >> 18)), buf[1] = (char)(0x80 | ((key >> 12) & 0x3F)),
            buf[2] = (char)(0x80 | ((key >> 6) & 0x3F)), buf[3] = (char)(0x80 | (key & 0x3F)),
            n = 4;
        if (a->input_len + n < APP_INPUT_MAX) {
            memcpy(a->input + a->input_len, buf, (size_t)n);
            a->input_len += n;
            a->input[a->input_len] = '\0';
        }
    }
    return APP_REDRAW;
}

/* Finds a token by its display text, its raw text, or its id. */
static int find_token(struct app *a, const char *text)
{
    const struct vocab *v = &a->L.vocab;
    if (!source_is_fast(&a->L)) {
        set_msg(a, 1, "every token of this lesson is on screen already");
        return APP_REDRAW;
    }
    if (!text[0]) {
        a->find_id = -1;
        set_msg(a, 0, "find: cleared");
        return APP_REDRAW;
    }
    int id = vocab_lookup(v, text);
    if (id < 0) {
        set_msg(a, 1, "no token '%s' (type its text, a leading space as a space, or #id)", text);
        return APP_REDRAW;
    }
    a->find_id = id;
    set_msg(a, 0, "found %s (id %d): its row is under the table", vocab_token(v, id), id);
    return APP_REDRAW;
}

/* Closes the input line and hands what was typed to run. */
static int submit_input(struct app *a, int (*run)(struct app *, const char *))
{
    char line[APP_INPUT_MAX];
    snprintf(line, sizeof line, "%s", a->input);
    a->mode = MODE_NORMAL;
    a->msg[0] = '\0';
    return run(a, line);
}

static int submit_find(struct app *a)
{
    return submit_input(a, find_token);
}

static int submit_command(struct app *a)
{
    return submit_input(a, app_command);
}

static void open_prompt(struct app *a, const char *prefill)
{
    a->mode = MODE_PROMPT;
    snprintf(a->input, sizeof a->input, "%s", prefill);
    a->input_len = (int)strlen(a->input);
    a->msg[0] = '\0';
}

/* ---- keys ------------------------------------------------------------------------- */

static const double TEMPS[] = { 0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 1, 1.2, 1.5, 2, 3, 5 };
static const double TOP_PS[] = { 0.1,  0.2, 0.3,  0.4, 0.5,  0.6,  0.7,
                                 0.75, 0.8, 0.85, 0.9, 0.95, 0.99, 1 };
static const double MIN_PS[] = { 0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1 };
static const double PENALTIES[] = { 1, 1.05, 1.1, 1.15, 1.2, 1.3, 1.5, 2, 3 };
#define N_OF(x) ((int)(sizeof(x) / sizeof((x)[0])))

/* Up and Down move one line, PgUp and PgDn a page (scroll_page lines), kept
 * within the text the view last drew. */
static void scroll(struct app *a, int key)
{
    int page = a->scroll_page > 1 ? a->scroll_page - 1 : 1;
    int d = key == AK_UP ? -1 : key == AK_DOWN ? 1 : key == AK_PGUP ? -page : page;
    a->scroll += d;
    if (a->scroll > a->scroll_max)
        a->scroll = a->scroll_max;
    if (a->scroll < 0)
        a->scroll = 0;
}

/* x and :reset in the batch view: the selected request's preset again. */
static int batch_reset_row(struct app *a)
{
    struct err e;
    struct batch_row *w = &a->batch.row[a->batch_sel];
    struct settings before = w->set;
    if (batch_preset(&a->L, a->batch_sel, &w->set, &e) < 0 ||
        batch_sample(&a->batch, &a->L, a->src.backend, &e) < 0) {
        w->set = before;
        set_msg(a, 1, "%s", e.msg);
        return APP_REDRAW;
    }
    set_msg(a, 0, "request %d: its preset settings again", a->batch_sel);
    return APP_REDRAW;
}

/* Opens or closes the batch view. */
static int toggle_batch(struct app *a)
{
    if (a->batch_on) {
        a->batch_on = 0;
        batch_free(&a->batch);
        set_msg(a, 0, "back to the single step");
        return APP_REDRAW;
    }
    struct err e;
    if (!a->src.backend) {
        set_msg(a, 1, "the batch view needs a backend");
        return APP_REDRAW;
    }
    if (batch_open(&a->batch, &a->L, a->src.backend, &e) < 0) {
        set_msg(a, 1, "%s", e.msg);
        return APP_REDRAW;
    }
    a->batch_on = 1;
    a->batch_sel = 0;
    set_msg(a, 0,
            "%d requests, one LM-head call and one sampler call a step: Up, Down choose one, "
            "the setting keys change only it, Space steps them all",
            a->batch.n);
    return APP_REDRAW;
}

/* The keys the batch view handles itself; -1 for the ones it leaves to the
 * usual handling (setting keys, help, quit, the prompt). */
static int batch_key(struct app *a, int key)
{
    struct err e;
    switch (key) {
    case AK_UP:
    case AK_DOWN:
        a->batch_sel = (a->batch_sel + (key == AK_DOWN ? 1 : a->batch.n - 1)) % a->batch.n;
        a->msg[0] = '\0';
        return APP_REDRAW;
    case ' ':
    case AK_ENTER:
        if (batch_step(&a->batch, &a->L, a->src.backend, &e) < 0)
            set_msg(a, 1, "%s", e.msg);
        else if (!batch_running(&a->batch))
            set_msg(a, 0, "every request has stopped: Home starts the batch again, B leaves");
        else
            a->msg[0] = '\0';
        return APP_REDRAW;
    case AK_HOME:
        batch_free(&a->batch);
        if (batch_open(&a->batch, &a->L, a->src.backend, &e) < 0) {
            a->batch_on = 0;
            set_msg(a, 1, "%s", e.msg);
        } else {
            set_msg(a, 0, "the batch starts again from the prompt");
        }
        return APP_REDRAW;
    case AK_ESC:
        return toggle_batch(a);
    case 'x':
        return batch_reset_row(a);
    case 't':
    case 'T':
    case 'k':
    case 'K':
    case 'p':
    case 'P':
    case 'm':
    case 'M':
    case 'r':
    case 'R':
    case 'f':
    case 'g':
    case 'o':
    case 's':
    case 'S':
    case 'B':
    case 'l':
    case ':':
    case '?':
    case 'q':
        return -1;
    default:
        if (key < 0x80 && key > 0x20)
            set_msg(a, 0, "'%c' does nothing in the batch view: B leaves it, ? lists the keys",
                    key);
        return APP_REDRAW;
    }
}

int app_key(struct app *a, int key)
{
    if (key == AK_RESIZE || key == AK_NONE)
        return APP_REDRAW;
    if (a->mode == MODE_HELP) {
        a->mode = MODE_NORMAL;
        return APP_REDRAW;
    }
    if (a->mode == MODE_TEXT) {
        if (key == AK_UP || key == AK_DOWN || key == AK_PGUP || key == AK_PGDN)
            scroll(a, key);
        else
            a->mode = MODE_NORMAL, a->scroll = 0;
        return APP_REDRAW;
    }
    if (a->mode == MODE_PROMPT)
        return key_input(a, key, submit_command);
    if (a->mode == MODE_ANSWER)
        return key_input(a, key, submit_answer);
    if (a->mode == MODE_FIND)
        return key_input(a, key, submit_find);
    if (key > 0 && key < 128 && a->keymap[key])
        key = a->keymap[key]; /* the user's key bindings (config.h) */
    if (a->batch_on) {
        int flags = batch_key(a, key);
        if (flags >= 0)
            return flags;
    }
    const struct sampler_settings *m = &edit_settings(a)->sampler;
    switch (key) {
    case 'q':
        return APP_QUIT;
    case '?':
        a->mode = MODE_HELP;
        return APP_REDRAW;
    case ':':
        open_prompt(a, "");
        return APP_REDRAW;
    case ' ':
    case AK_ENTER:
        return take_step(a);
    case AK_LEFT:
        if (a->pos > 0) {
            a->pos--;
            a->scroll = 0;
            recompute(a);
            set_msg(a, 0, "step %d, taken: Right or Space walks forward", a->cur_step);
        } else {
            set_msg(a, 0, "this is the first step");
        }
        return APP_REDRAW;
    case AK_RIGHT:
        if (a->pos < a->n_hist - (a->end != END_NONE ? 1 : 0)) {
            a->pos++;
            a->scroll = 0;
            recompute(a);
            if (a->pos == a->n_hist)
                set_msg(a, 0, "step %d, live: Space takes it", a->cur_step);
            else
                set_msg(a, 0, "step %d, taken", a->cur_step);
        } else if (a->end != END_NONE) {
            end_message(a);
        } else {
            set_msg(a, 0, "this is the live step: Space takes it");
        }
        return APP_REDRAW;
    case 'l':
        a->mode = MODE_TEXT;
        a->scroll = 0;
        return APP_REDRAW;
    case AK_HOME:
        start_at(a, 1);
        set_msg(a, 0, "the lesson starts again");
        return APP_REDRAW;
    case 'n':
        return step_lesson(a, 1);
    case 'N':
        return step_lesson(a, -1);
    case 't':
    case 'T':
        return key_ladder(a, "temperature", TEMPS, N_OF(TEMPS), m->temperature,
                          key == 'T' ? 1 : -1);
    case 'k':
    case 'K':
        return key_top_k(a, key == 'K' ? 1 : -1);
    case 'p':
    case 'P':
        return key_ladder(a, "top-p", TOP_PS, N_OF(TOP_PS), m->top_p, key == 'P' ? 1 : -1);
    case 'm':
    case 'M':
        return key_ladder(a, "min-p", MIN_PS, N_OF(MIN_PS), m->min_p, key == 'M' ? 1 : -1);
    case 'r':
    case 'R':
        return key_ladder(a, "repetition-penalty", PENALTIES, N_OF(PENALTIES),
                          m->repetition_penalty, key == 'R' ? 1 : -1);
    case 'f':
        return key_toggle(a, "penalty-formula", "engine", "lesson");
    case 'g':
        return key_toggle(a, "penalty-scope", "generated", "all");
    case 'o':
        return key_order(a);
    case 's':
        return key_seed(a);
    case 'S':
        open_prompt(a, "seed ");
        return APP_REDRAW;
    case 'u':
        if (a->pos < a->n_hist) {
            set_msg(a, 0,
                    a->t.greedy ? "a greedy step draws no u" : "a taken step always shows its u");
        } else {
            a->show_u = !a->show_u;
            if (a->show_u && a->t.greedy)
                set_msg(a, 0, "greedy: no u is drawn");
        }
        return APP_REDRAW;
    case '.':
        return key_try(a);
    case '/':
        if (!source_is_fast(&a->L)) {
            set_msg(a, 0, "/ finds a token in a full-size step; here every token is shown");
            return APP_REDRAW;
        }
        a->mode = MODE_FIND;
        a->input[0] = '\0';
        a->input_len = 0;
        a->msg[0] = '\0';
        return APP_REDRAW;
    case 'D':
        return app_command(a, "draws");
    case 'B':
        return app_command(a, "batch");
    case 'x':
        return key_reset(a);
    case 'a':
        if (app_hidden(a))
            ask_prompt(a);
        else
            set_msg(a, 0, "nothing to answer here");
        return APP_REDRAW;
    case 'v':
        if (app_hidden(a)) {
            a->revealed = 1;
            a->mode = MODE_NORMAL;
            set_msg(a, 0, "the solution is shown");
        } else {
            set_msg(a, 0, "v shows an exercise's solution; this step has nothing hidden");
        }
        return APP_REDRAW;
    case AK_UP:
    case AK_PGUP:
    case AK_DOWN:
    case AK_PGDN:
        scroll(a, key);
        return APP_REDRAW;
    case AK_ESC:
        a->msg[0] = '\0';
        return APP_REDRAW;
    default:
        if (key < 0x80 && key > 0x20)
            set_msg(a, 0, "'%c' does nothing here: ? lists the keys", key);
        return APP_REDRAW;
    }
}

/* ---- set-up ------------------------------------------------------------------------ */

int app_start_step(struct app *a, int k, struct err *e)
{
    if (k < 1 || k > a->L.n_steps)
        return err_set(e, ERR_USAGE, "--step %d: lesson '%s' has %d step%s", k, a->L.id,
                       a->L.n_steps, a->L.n_steps == 1 ? "" : "s");
    start_at(a, k);
    return 0;
}

int app_init(struct app *a, const char *dir, const char *what, int n_over, const char *const *names,
             const char *const *values, const struct app_source *src, struct err *e)
{
    memset(a, 0, sizeof *a);
    if (src)
        a->src = *src;
    if (a->src.config)
        for (int i = 0; i < a->src.config->n_bindings; i++)
            a->keymap[a->src.config->bindings[i].key] = a->src.config->bindings[i].action;
    a->lesson_index = -1;
    a->try_index = -1;
    if (catalog_open(&a->cat, dir, e) < 0)
        return -1;
    for (int i = 0; i < n_over; i++)
        if (add_override(a->cli, &a->n_cli, names[i], values[i]) < 0) {
            catalog_close(&a->cat);
            return err_set(e, ERR_USAGE, "more than %d settings", APP_MAX_OVERRIDES);
        }
    int rc;
    if (what)
        rc = open_lesson(a, what, -1, e);
    else if (a->cat.n > 0)
        rc = open_lesson(a, NULL, 0, e);
    else
        rc = err_set(e, ERR_USAGE, "%s holds no lessons", a->cat.dir);
    if (rc < 0) {
        app_free(a);
        return -1;
    }
    a->msg[0] = '\0';
    return 0;
}

void app_free(struct app *a)
{
    batch_free(&a->batch);
    drop_history_from(a, 0);
    free(a->live_ctx);
    trace_free(&a->t);
    lesson_free(&a->L);
    catalog_close(&a->cat);
    memset(a, 0, sizeof *a);
}
