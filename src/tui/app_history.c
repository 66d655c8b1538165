/* app_history.c - the steps taken. The one on screen is either the live
 * step (not drawn yet) or a taken one being looked at again. Changing a
 * setting while looking at a taken step goes back to it: the steps after it
 * are dropped and it becomes the live step, drawn anew with the new settings.
 */
#include "tui/app_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/trace.h"

/* Whether the live context is the one the lesson wrote step k's logits for. */
static void check_script(struct app *a)
{
    a->off_script = 0;
    a->script_text[0] = '\0';
    if (!source_written_for_path(&a->source))
        return; /* a model's logits follow any context; captured ones follow none */
    int *ctx = NULL, len = 0;
    struct err e;
    if (source_lesson_context(&a->source, a->live_step, &ctx, &len, &e) < 0)
        return;
    if (len != a->gen.len || (len && memcmp(ctx, a->gen.ids, (size_t)len * sizeof *ctx))) {
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

/* Makes step k live in context ctx (copied; it may be the live one's own). */
int app_go_live(struct app *a, int k, const int *ctx, int len)
{
    struct err e;
    if (gen_restart(&a->gen, ctx, len, &e) < 0) {
        app_msg(a, 1, "%s", e.msg);
        return -1;
    }
    a->live_step = k;
    a->end = END_NONE;
    a->resume_step = 0;
    a->pos = a->n_hist;
    a->show_u = 0;
    reset_exercise(a);
    check_script(a);
    return 0;
}

void app_drop_history(struct app *a, int from)
{
    for (int i = from; i < a->n_hist; i++) {
        free(a->hist[i].ctx);
        free(a->hist[i].ans);
        free(a->hist[i].how);
    }
    if (from < a->n_hist)
        a->n_hist = from;
}

/* Starts the loaded lesson from its step k, on the lesson's own path. */
void app_start_at(struct app *a, int k)
{
    int *ctx = NULL, len = 0;
    struct err e;
    /* The history goes only once the step's context is made: on a refusal
     * the view stays where it was, and the context it shows may be one of
     * the history's (dropping it first left that freed: fuzz_command). */
    if (source_lesson_context(&a->source, k, &ctx, &len, &e) < 0) {
        app_msg(a, 1, "%s", e.msg);
        return;
    }
    app_drop_history(a, 0);
    app_read_free(a); /* the texts kept were of the steps just dropped */
    app_go_live(a, k, ctx, len);
    free(ctx);
    app_recompute(a);
}

/* Going back to a taken step to change it: it becomes live again. */
void app_reopen_shown(struct app *a)
{
    if (a->pos >= a->n_hist)
        return;
    struct app_entry en = a->hist[a->pos];
    int later = a->n_hist - a->pos - 1;
    int *ctx = en.ctx;
    a->hist[a->pos].ctx = NULL;
    app_drop_history(a, a->pos);
    app_go_live(a, en.step, ctx, en.len);
    free(ctx);
    if (later > 0)
        app_msg(a, 0, "back at step %d: %d step%s after it %s dropped", en.step, later,
                later == 1 ? "" : "s", later == 1 ? "was" : "were");
}

/* What Space says when nothing is left to take. */
void app_end_message(struct app *a)
{
    if (a->end == END_STOP && a->resume_step)
        return; /* Space goes on: nothing to say */
    if (a->end == END_STOP)
        app_msg(a, 0, "generation stopped: Home starts the lesson again, n opens the next one%s",
                a->live.given ? " (x drops your changes)" : "");
    else
        app_msg(a, 0, "end of the lesson: n opens the next one, Home starts this one again");
}

/* Space on a taken step: walk forward; on the last one, go live again (or
 * open the next text after a stop, or say that the lesson has ended). */
static int walk_forward(struct app *a)
{
    if (a->pos < a->n_hist - 1) {
        a->pos++;
        a->scroll = 0;
        app_recompute(a);
    } else if (a->end == END_NONE) {
        a->pos = a->n_hist;
        a->scroll = 0;
        app_recompute(a);
    } else if (a->end == END_STOP && a->resume_step) {
        const struct lesson_step *S = &a->L.steps[a->resume_step - 1];
        app_go_live(a, a->resume_step, S->context, S->context_len);
        app_recompute(a);
    } else {
        app_end_message(a);
    }
    return APP_REDRAW;
}

/* The taken token's p, final p and rank in trace t, and the step's most
 * likely tokens, for the text view. */
void app_keep_numbers(struct app_entry *en, const struct trace *t, int id)
{
    struct trace_alt pick;
    en->n_alt = trace_pick(t, id, &pick, &en->rank, en->alt, APP_ALTS);
    en->prob = pick.prob, en->final = pick.final;
}

/* Enters the live step into the history with what it drew, and appends
 * that to the live generation, which checks the stop rules on it. Returns
 * 0, or -1 when out of memory. */
static int record_step(struct app *a, int id, int forced)
{
    int k = a->live_step, len = a->gen.len;
    const struct lesson_step *S = &a->L.steps[k - 1];
    int *ctx = malloc((size_t)(len > 0 ? len : 1) * sizeof *ctx);
    struct app_answer *ans = S->n_ask ? malloc((size_t)S->n_ask * sizeof *ans) : NULL;
    struct err e;
    if (!ctx || (S->n_ask && !ans) || gen_append(&a->gen, id, &a->cur, &e) < 0) {
        free(ctx);
        free(ans);
        return -1;
    }
    if (ans)
        memcpy(ans, a->ans, (size_t)S->n_ask * sizeof *ans);
    if (len)
        memcpy(ctx, a->gen.ids, (size_t)len * sizeof *ctx);
    /* A model's source describes only its latest run: the step keeps what
     * it said, so that the lesson pane explains the step when it is shown
     * again (NULL when out of memory: the pane then says less). */
    char how[SOURCE_DESCRIBE_MAX];
    source_describe(&a->source, how, sizeof how);
    a->hist[a->n_hist++] = (struct app_entry){
        .step = k,
        .ctx = ctx,
        .len = len,
        .settings = a->cur,
        .choice = id,
        .sampled = forced ? 0 : a->t.choice.sampled,
        .forced = forced,
        .u = a->t.choice.u,
        .stop = a->gen.stop,
        .n_ans = S->n_ask,
        .ans = ans,
        .how = how[0] ? strdup(how) : NULL,
    };
    app_keep_numbers(&a->hist[a->n_hist - 1], &a->t, id);
    return 0;
}

/* After a step was taken: a stop rule ends the text (a next step with its
 * own context is a new text, which Space then opens), the last step ends
 * the lesson, else the next step goes live, in its own context or in the
 * one the token was appended to. */
static void after_step(struct app *a, const struct app_entry *en)
{
    char tok[64], why[160];
    int k = en->step;
    snprintf(tok, sizeof tok, "%s", vocab_token(&a->L.vocab, en->choice));
    if (en->forced)
        app_msg(a, 0, "step %d took \"%s\", your choice instead of the draw", k, tok);
    else if (en->sampled)
        app_msg(a, 0, "step %d drew \"%s\" (u = %.4f, seed %llu)", k, tok, en->u,
                (unsigned long long)en->settings.sampler.seed);
    else
        app_msg(a, 0, "step %d took \"%s\" (greedy)", k, tok);
    const struct lesson_step *nextS = k < a->L.n_steps ? &a->L.steps[k] : NULL;
    if (en->stop.rule != STOP_NONE) {
        stop_describe(&en->stop, &en->settings, &a->L.vocab, why, sizeof why);
        const char *shown = stop_shown(&en->stop, &en->settings);
        a->end = END_STOP;
        a->resume_step = nextS && nextS->has_context ? k + 1 : 0;
        a->pos = a->n_hist - 1;
        app_msg(a, 0, "step %d: \"%s\", then stop: %s%s%s.%s", k, tok, why, shown ? ", " : "",
                shown ? shown : "",
                a->resume_step ? " Space goes on to the next step (a new text)." : "");
    } else if (!nextS) {
        a->end = END_LESSON;
        a->pos = a->n_hist - 1;
    } else if (nextS->has_context) {
        app_go_live(a, k + 1, nextS->context, nextS->context_len);
    } else {
        app_go_live(a, k + 1, a->gen.ids, a->gen.len);
    }
}

/* Appends id (the draw's, or the user's when forced) as the live step's
 * token and goes on. */
static int take(struct app *a, int id, int forced)
{
    if (!a->step_ok) { /* the trace holds no step: nothing to take */
        app_msg(a, 1, "this step was refused (a z' out of range): change the setting, or x");
        return APP_REDRAW;
    }
    if (a->n_hist == APP_MAX_HISTORY) {
        app_msg(a, 1, "history is full (%d steps): Home starts again", APP_MAX_HISTORY);
        return APP_REDRAW;
    }
    if (record_step(a, id, forced) < 0) {
        app_msg(a, 1, "out of memory");
        return APP_REDRAW;
    }
    after_step(a, &a->hist[a->n_hist - 1]);
    app_recompute(a);
    return APP_REDRAW;
}

int app_take_step(struct app *a)
{
    if (a->pos < a->n_hist) /* looking back: Space walks forward */
        return walk_forward(a);
    if (app_hidden(a)) {
        app_ask_prompt(a); /* an exercise is answered before its step is taken */
        return APP_REDRAW;
    }
    return take(a, a->t.choice.id, 0);
}

int app_replay_token(struct app *a, int id, int forced)
{
    if (!forced && a->pos >= a->n_hist && a->step_ok && a->t.choice.id == id)
        return take(a, id, 0); /* the same draw again */
    return app_take_token(a, id);
}

int app_take_token(struct app *a, int id)
{
    if (a->pos < a->n_hist) /* a taken step (or the one a stop ended on): branch from it */
        app_reopen_shown(a);
    app_recompute(a);
    return take(a, id, 1);
}
