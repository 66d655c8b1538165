/* app.c - the model of the running program: the lesson open, the settings
 * over it, and the step on screen, recomputed after every change. The
 * history of steps (app_history.c), the keys (app_keys.c), the ':' commands
 * (app_commands.c) and the exercises (app_exercise.c) work on the same
 * struct app.
 */
#include "tui/app_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/utf8.h"
#include "data/lesson_model.h"

void app_msg(struct app *a, int warn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(a->msg, sizeof a->msg, fmt, ap);
    va_end(ap);
    /* A message cut to the line's bytes (one that quotes a long line
     * typed) ends on a whole character, not on half of one. */
    if (n >= (int)sizeof a->msg)
        a->msg[utf8_trim_cut(a->msg, sizeof a->msg - 1)] = '\0';
    a->msg_warn = warn;
}

/* Settings of lesson step k: defaults, the lesson's, the command line's, then
 * the ones changed while running, each parsed when it was typed. A step
 * whose own stop strings leave no room for the typed ones keeps its first
 * STOP_MAX (the ':' command that added them checked the step it was on). */
void app_step_settings(const struct app *a, int k, struct settings *s)
{
    struct err e;
    source_step_settings(&a->source, k, s);
    settings_patch_apply(s, &a->cli, &e);
    settings_patch_apply(s, &a->live, &e);
}

const struct app_entry *app_shown_entry(const struct app *a)
{
    return a->pos < a->n_hist ? &a->hist[a->pos] : NULL;
}

/* The many draws of the step on screen: a toy step's from its rows; a
 * full-size one's on the CPU straight from the trace, on another backend
 * made there, on the step's logits, with only the tokens coming back to be
 * counted. The same u_i everywhere, so the same seed gives the same counts. */
static int many_draws(struct app *a, struct err *e)
{
    uint32_t step = source_draw_step(&a->L, a->cur_len);
    int n = a->draws_n > 0 ? a->draws_n : DRAWS_DEFAULT;
    struct backend *be = a->opt.backend;
    if (!source_is_fast(&a->source))
        return draws_run_rows(&a->t, a->cur.sampler.seed, step, n, DRAWS_ROWS, &a->draws, e);
    if (!be || be->ops == &backend_cpu_ops)
        return draws_run(&a->t, a->cur.sampler.seed, step, n, DRAWS_ROWS, &a->draws, e);
    const float *z = source_last_logits_f(&a->source, a->cur_step);
    struct backend_req req = { .s = a->cur.sampler,
                               .context = a->cur_ctx,
                               .context_len = a->cur_len,
                               .prompt_len = source_prompt_len(&a->L, a->cur_len),
                               .step = step,
                               .breaker = a->source.breaker,
                               .end_ids = a->L.vocab.eos,
                               .n_end = a->L.vocab.n_eos,
                               .refused = source_refused(&a->source) };
    if (!z)
        return err_set(e, ERR_SYSTEM, "the step's logits are not floats");
    int *kept = malloc(2 * (size_t)n * sizeof *kept), *plain = kept + n;
    if (!kept)
        return err_set(e, ERR_SYSTEM, "out of memory for %d draws", n);
    int rc = backend_set_logits(be, z, 1, a->L.vocab.n, e) < 0 ||
                     backend_draws(be, &req, n, kept, plain, e) < 0
                 ? -1
                 : draws_tally(&a->t, kept, plain, n, DRAWS_ROWS, &a->draws, e);
    free(kept);
    return rc;
}

/* The next count of D: on a toy step 100, 1,000 and 10,000, so that the
 * counts are seen to close in on N x final, then off; at full size, where
 * 100 draws of 128,256 tokens show little, 10,000, then off. */
static int next_draws(const struct app *a)
{
    int n = a->draws_on ? (a->draws_n > 0 ? a->draws_n : DRAWS_DEFAULT) : 0;
    if (source_is_fast(&a->source))
        return n ? 0 : DRAWS_DEFAULT;
    return n == 0 ? 100 : n < 1000 ? 1000 : n < 10000 ? 10000 : 0;
}

/* What D says: how many draws, and what D does next. */
static void draws_message(struct app *a)
{
    char n[32], next[32] = "off";
    draws_count_text(a->draws.n, n, sizeof n);
    int more = next_draws(a);
    if (more)
        draws_count_text(more, next, sizeof next);
    app_msg(a, 0, "%s draws with the step's seed, counted against the probabilities (D: %s)", n,
            next);
}

int app_draws(struct app *a, const char *value)
{
    int n;
    struct err e;
    if (!value[0]) {
        n = next_draws(a);
    } else if (strcmp(value, "off") == 0) {
        n = 0;
    } else if (parse_int(value, 1, APP_DRAWS_MAX, &n, &e) < 0) {
        app_msg(a, 1, "draws: %s (or off)", e.msg);
        return APP_REDRAW;
    }
    a->draws_on = n > 0;
    a->draws_n = n;
    if (app_recompute(a) < 0)
        return APP_REDRAW; /* the step was refused: the message says why */
    if (!a->draws_on)
        app_msg(a, 0, "the draws are hidden (D draws again)");
    else if (a->draws_ok)
        draws_message(a);
    return APP_REDRAW;
}

int app_find(struct app *a, const char *text)
{
    const struct vocab *v = &a->L.vocab;
    if (!text[0]) {
        a->find_id = -1;
        app_msg(a, 0, "find: cleared");
        return APP_REDRAW;
    }
    int id = vocab_lookup(v, text);
    if (id < 0) {
        app_msg(a, 1, "no token '%s' (type its text, a leading space as a space, or #id)", text);
        return APP_REDRAW;
    }
    a->find_id = id;
    if (source_is_fast(&a->source))
        app_msg(a, 0, "found %s (id %d): its row is under the table", vocab_token(v, id), id);
    else
        app_msg(a, 0, "found %s (id %d): its row is marked in every pane (w takes it)",
                vocab_token(v, id), id);
    return APP_REDRAW;
}

/* Recomputes the trace of the step on screen. */
int app_recompute(struct app *a)
{
    double t0 = clock_ms();
    const struct app_entry *en = app_shown_entry(a);
    if (en) {
        a->cur = en->settings;
        a->cur_ctx = en->ctx;
        a->cur_len = en->len;
        a->cur_step = en->step;
    } else {
        app_step_settings(a, a->live_step, &a->cur);
        a->cur_ctx = a->gen.ids;
        a->cur_len = a->gen.len;
        a->cur_step = a->live_step;
    }
    struct err e;
    a->draws_ok = 0;
    a->step_ok = 0;
    if (source_run_step(&a->source, a->cur_step, &a->cur, a->cur_ctx, a->cur_len, &a->t, &e) < 0) {
        app_msg(a, 1, "%s", e.msg);
        a->recompute_us = (clock_ms() - t0) * 1e3;
        return -1;
    }
    a->step_ok = 1;
    if (a->draws_on) {
        if (many_draws(a, &e) < 0)
            app_msg(a, 1, "%s", e.msg);
        else
            a->draws_ok = 1;
    }
    a->recompute_us = (clock_ms() - t0) * 1e3;
    return 0;
}

/* Loads a lesson and opens its source on the app's backend, all or nothing:
 * on failure nothing is left to free and e says why. The source borrows
 * L, which the caller moves into the app (and then points the source at). */
static int load_lesson(struct app *a, const char *what, int index, struct lesson *L,
                       struct source *src, struct trace *t, struct err *e)
{
    int rc = index >= 0 ? lesson_load(L, a->cat.files[index], e)
                        : catalog_load_any(&a->cat, what, a->opt.vocab, a->opt.model, L, e);
    if (rc < 0)
        return -1;
    /* Stepping through the lessons, the full-size ones run on --model too. */
    if (index >= 0 && a->opt.model && L->model.on && lesson_use_model(L, a->opt.model, e) < 0) {
        lesson_free(L);
        return -1;
    }
    /* A full-size lesson's head takes seconds to build: the caller shows how far. */
    const struct model_progress *p = a->progress.fn ? &a->progress : NULL;
    if (source_open_progress(src, L, a->opt.config, a->opt.hidden, SOURCE_FAST_ROWS, p, e) < 0) {
        lesson_free(L);
        return -1;
    }
    if (trace_init(t, L->vocab.n, e) == 0 &&
        (!a->opt.backend || source_use_backend(src, a->opt.backend, e) == 0))
        return 0;
    trace_free(t);
    source_close(src);
    lesson_free(L);
    return -1;
}

int app_open_lesson(struct app *a, const char *what, int index, struct err *e)
{
    struct lesson L;
    struct source src;
    struct trace t;
    if (load_lesson(a, what, index, &L, &src, &t, e) < 0) {
        /* The head the backend held may have been the open lesson's: put
         * it back, or close the batch view computed with it. */
        struct err again;
        if (a->opt.backend && a->source.ops &&
            source_use_backend(&a->source, a->opt.backend, &again) < 0 && a->batch_on) {
            batch_free(&a->batch);
            a->batch_on = 0;
        }
        return -1;
    }
    app_drop_history(a, 0);
    trace_free(&a->t);
    batch_free(&a->batch);
    source_close(&a->source);
    lesson_free(&a->L);
    a->batch_on = 0;
    a->L = L;
    a->source = src;
    a->source.L = &a->L;
    a->t = t;
    gen_free(&a->gen);
    if (gen_start(&a->gen, &a->L.vocab, NULL, 0, a->L.prompt_len, e) < 0)
        return -1;
    a->lesson_index = index >= 0 ? index : catalog_find(&a->cat, a->L.id);
    a->find_id = -1;
    a->draws_on = 0;
    a->draws_n = 0;
    settings_patch_clear(&a->live);
    app_start_at(a, 1);
    /* A lesson that declares its requests opens on them (its message says why not). */
    if (a->L.n_request)
        app_toggle_batch(a);
    char warning[LESSON_MODEL_WARNING];
    if (lesson_model_warning(&a->L, warning, sizeof warning))
        app_msg(a, 1, "%s", warning);
    return 0;
}

int app_step_lesson(struct app *a, int delta)
{
    if (a->cat.n == 0)
        return APP_REDRAW;
    int i = a->lesson_index < 0 ? 0 : a->lesson_index;
    for (int tries = 0; tries < a->cat.n; tries++) {
        i = (i + delta + a->cat.n) % a->cat.n;
        struct err e;
        if (app_open_lesson(a, NULL, i, &e) == 0) {
            app_msg(a, 0, "lesson %d of %d: %s%s", i + 1, a->cat.n, a->L.id,
                    delta > 0 && i == 0 ? " (back to the first)" : "");
            return APP_REDRAW;
        }
        app_msg(a, 1, "%s", e.msg);
    }
    return APP_REDRAW;
}

int app_start_step(struct app *a, int k, struct err *e)
{
    if (k < 1 || k > a->L.n_steps)
        return err_set(e, ERR_USAGE, "--step %d: lesson '%s' has %d step%s", k, a->L.id,
                       a->L.n_steps, a->L.n_steps == 1 ? "" : "s");
    app_start_at(a, k);
    return 0;
}

int app_init(struct app *a, const char *dir, const char *what, const struct settings_patch *cli,
             const struct app_options *src, struct err *e)
{
    return app_init_progress(a, dir, what, cli, src, NULL, e);
}

int app_init_progress(struct app *a, const char *dir, const char *what,
                      const struct settings_patch *cli, const struct app_options *src,
                      const struct model_progress *p, struct err *e)
{
    memset(a, 0, sizeof *a);
    if (src)
        a->opt = *src;
    if (p)
        a->progress = *p;
    app_bind_keys(a, a->opt.config);
    a->lesson_index = -1;
    a->try_index = -1;
    if (app_input_init(a, e) < 0)
        return -1;
    if (catalog_open(&a->cat, dir, e) < 0) {
        app_input_free(a);
        return -1;
    }
    if (cli)
        a->cli = *cli;
    else
        settings_patch_clear(&a->cli);
    settings_patch_clear(&a->live);
    int rc;
    if (what || a->opt.model)
        rc = app_open_lesson(a, what, -1, e); /* NULL with a model: the model alone */
    else if (a->cat.n > 0)
        rc = app_open_lesson(a, NULL, 0, e);
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
    app_read_free(a);
    app_drop_history(a, 0);
    gen_free(&a->gen);
    trace_free(&a->t);
    source_close(&a->source);
    lesson_free(&a->L);
    catalog_close(&a->cat);
    app_input_free(a);
    memset(a, 0, sizeof *a);
}
