/* app_commands.c - settings changed while running, the ':' commands
 * (typed on the input line of app_input.c), and the batch view's opening
 * and closing.
 */
#include "tui/app_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/lesson_model.h"

/* The settings the keys change: the selected request's in the batch view,
 * else the step's on screen. */
const struct settings *app_edit_settings(const struct app *a)
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
        app_msg(a, 1, "%s: %s", name, e.msg);
        return APP_REDRAW;
    }
    if (batch_sample(&a->batch, &a->source, a->opt.backend, &e) < 0) {
        a->batch.row[a->batch_sel].set = before; /* not applied: the request keeps its own */
        app_msg(a, 1, "%s (not applied)", e.msg);
        /* The failed run may have left some rows half done: run the old settings again. */
        batch_sample(&a->batch, &a->source, a->opt.backend, &e);
        return APP_REDRAW;
    }
    char v[STOP_LEN * 2 + 16];
    settings_value(&a->batch.row[a->batch_sel].set, name, v, sizeof v);
    app_msg(a, 0, "request %c: %s %s (the other requests keep theirs)", batch_label(a->batch_sel),
            name, v);
    return APP_REDRAW;
}

/* Sets a live override; on a taken step, goes back to it first. */
int app_apply_setting(struct app *a, const char *name, const char *value)
{
    if (a->batch_on)
        return apply_batch_setting(a, name, value);
    struct settings check = a->cur;
    struct err e;
    if (settings_set(&check, name, value, &e) < 0) {
        app_msg(a, 1, "%s: %s", name, e.msg);
        return APP_REDRAW;
    }
    struct settings_patch before = a->live;
    if (settings_patch_set(&a->live, name, value, &e) < 0) {
        app_msg(a, 1, "%s: %s", name, e.msg); /* only the stop strings' count: check had room */
        return APP_REDRAW;
    }
    if (a->pos < a->n_hist) {
        app_reopen_shown(a);
    } else {
        char v[STOP_LEN * 2 + 16];
        settings_value(&check, name, v, sizeof v);
        app_msg(a, 0, "%s %s", name, v);
    }
    if (app_recompute(a) < 0) {
        /* The step refuses the new value (a z' out of range): keep the old. */
        char why[sizeof a->msg];
        snprintf(why, sizeof why, "%s", a->msg);
        a->live = before;
        app_recompute(a);
        app_msg(a, 1, "%s (not applied)", why);
    }
    return APP_REDRAW;
}

int app_try(struct app *a)
{
    const struct lesson_step *S = &a->L.steps[a->cur_step - 1];
    if (S->n_try == 0) {
        app_msg(a, 0, "this step suggests nothing to try");
        return APP_REDRAW;
    }
    int i = (a->try_index + 1) % S->n_try;
    char buf[SETTINGS_LIST_MAX];
    snprintf(buf, sizeof buf, "%s", S->tries[i].text);
    settings_patch_clear(&a->live); /* a suggestion starts from the lesson's own settings */
    int flags = APP_REDRAW;
    for (char *cursor = buf, *part; (part = settings_list_next(&cursor)) != NULL;) {
        while (*part == ' ')
            part++;
        if (*part)
            flags |= app_command(a, part);
    }
    a->try_index = i;
    app_msg(a, 0, "try %d of %d: %s (from the lesson's own settings)", i + 1, S->n_try,
            S->tries[i].text);
    return flags;
}

int app_reset(struct app *a)
{
    int had = a->live.given != 0;
    settings_patch_clear(&a->live);
    a->try_index = -1;
    if (!had) {
        app_msg(a, 0, "these are the lesson's settings already%s",
                a->cli.given ? " (with the command line's)" : "");
        return APP_REDRAW;
    }
    if (a->pos < a->n_hist)
        app_reopen_shown(a);
    if (!a->msg[0] || strncmp(a->msg, "back at", 7) != 0)
        app_msg(a, 0, "back to the lesson's settings%s",
                a->cli.given ? " (the command line's settings stay)" : "");
    app_recompute(a);
    return APP_REDRAW;
}

/* :take TOKEN -- the token (its text or #id) appended instead of the draw. */
static int take_command(struct app *a, const char *value)
{
    if (a->batch_on) {
        app_msg(a, 0, ":take is for the single step: B leaves the batch view first");
        return APP_REDRAW;
    }
    int id = value[0] ? vocab_lookup(&a->L.vocab, value) : a->find_id;
    if (id < 0) {
        app_msg(a, 1, "take: %s (type its text, a leading space as a space, or #id)",
                value[0] ? "no such token" : "which token?");
        return APP_REDRAW;
    }
    return app_take_token(a, id);
}

int app_set_prompt(struct app *a, const char *text)
{
    struct err e;
    if (a->batch_on) {
        batch_free(&a->batch);
        a->batch_on = 0;
    }
    if (lesson_set_prompt(&a->L, text, &e) < 0) {
        app_msg(a, 1, "prompt: %s", e.msg);
        return APP_REDRAW;
    }
    gen_free(&a->gen);
    if (gen_start(&a->gen, &a->L.vocab, NULL, 0, a->L.prompt_len, &e) < 0) {
        app_msg(a, 1, "%s", e.msg);
        return APP_REDRAW;
    }
    app_start_at(a, 1);
    app_msg(a, 0, "prompt: %d tokens; the model runs it from the start", a->L.prompt_len);
    return APP_REDRAW;
}

/* Runs command name with its value (trailing spaces trimmed). */
static int run_command(struct app *a, const char *name, const char *value)
{
    if (strcmp(name, "q") == 0 || strcmp(name, "quit") == 0)
        return APP_QUIT;
    if (strcmp(name, "help") == 0) {
        a->mode = MODE_HELP;
        return APP_REDRAW;
    }
    if (a->batch_on && strcmp(name, "reset") == 0)
        return app_batch_reset_row(a);
    if (a->batch_on &&
        (strcmp(name, "step") == 0 || strcmp(name, "draws") == 0 || strcmp(name, "find") == 0)) {
        app_msg(a, 0, ":%s is for the single step: B leaves the batch view first", name);
        return APP_REDRAW;
    }
    if (strcmp(name, "reset") == 0)
        return app_reset(a);
    if (strcmp(name, "lesson") == 0) {
        struct err e;
        if (!value[0])
            app_msg(a, 1, "lesson: which one? (:lesson toy)");
        else if (app_open_lesson(a, value, -1, &e) < 0)
            app_msg(a, 1, "%s", e.msg);
        else
            app_msg(a, 0, "lesson %s", a->L.id);
        return APP_REDRAW;
    }
    if (strcmp(name, "find") == 0)
        return app_find(a, value);
    if (strcmp(name, "take") == 0)
        return take_command(a, value);
    if (strcmp(name, "prompt") == 0)
        return app_set_prompt(a, value);
    if (strcmp(name, "draws") == 0)
        return app_draws(a, value);
    if (strcmp(name, "batch") == 0)
        return app_toggle_batch(a);
    if (strcmp(name, "step") == 0) {
        int k;
        struct err e;
        if (parse_int(value, 1, a->L.n_steps, &k, &e) < 0)
            app_msg(a, 1, "step: %s", e.msg);
        else
            app_start_at(a, k);
        return APP_REDRAW;
    }
    if (settings_known(name))
        return app_apply_setting(a, name, value);
    app_msg(a, 1,
            "unknown command '%s' (a setting such as temperature, or lesson, step, find, "
            "take, prompt, reset, help, quit)",
            name);
    return APP_REDRAW;
}

int app_command(struct app *a, const char *line)
{
    static const char SPACE[] = " \t\n\v\f\r";
    while (*line == ' ' || *line == ':')
        line++;
    line += strspn(line, SPACE);
    size_t nl = strcspn(line, SPACE);
    if (nl == 0)
        return APP_REDRAW;
    /* The name as far as a command's can go, cut between characters: the
     * message that names an unknown one quotes whole characters. */
    char name[48];
    size_t cut = nl < sizeof name ? nl : sizeof name - 1;
    while (cut < nl && cut > 0 && ((unsigned char)line[cut] & 0xC0) == 0x80)
        cut--;
    memcpy(name, line, cut);
    name[cut] = '\0';
    /* The value as long as it was typed: a prompt may fill a model's context. */
    const char *from = line + nl + strspn(line + nl, SPACE);
    size_t vl = strlen(from);
    while (vl > 0 && from[vl - 1] == ' ')
        vl--;
    char *value = malloc(vl + 1);
    if (!value) {
        app_msg(a, 1, "out of memory for the value of :%s (%zu bytes): not run", name, vl);
        return APP_REDRAW;
    }
    memcpy(value, from, vl);
    value[vl] = '\0';
    int flags = run_command(a, name, value);
    free(value);
    return flags;
}

/* x and :reset in the batch view: the selected request's preset again. */
int app_batch_reset_row(struct app *a)
{
    struct err e;
    struct batch_row *w = &a->batch.row[a->batch_sel];
    struct settings before = w->set;
    if (batch_preset(&a->source, a->batch_sel, &w->set, &e) < 0 ||
        batch_sample(&a->batch, &a->source, a->opt.backend, &e) < 0) {
        w->set = before;
        app_msg(a, 1, "%s", e.msg);
        return APP_REDRAW;
    }
    app_msg(a, 0, "request %c: its %s settings again", batch_label(a->batch_sel),
            a->L.n_request ? "lesson's" : "preset");
    return APP_REDRAW;
}

/* Opens the batch view of the open lesson; says why not in the message
 * line. An exercise keeps its numbers hidden, so it has no batch. */
static int open_batch(struct app *a)
{
    struct err e;
    if (app_hidden(a)) {
        app_msg(a, 1, "the batch view would show the answer: answer first (a), or v");
        return APP_REDRAW;
    }
    if (batch_open(&a->batch, &a->source, a->opt.backend, &e) < 0) {
        app_msg(a, 1, "%s", e.msg);
        return APP_REDRAW;
    }
    a->batch_on = 1;
    a->batch_sel = 0;
    if (a->batch.toy)
        app_msg(a, 0,
                "%d requests on these logits, one sampler call: Up, Down choose one, the "
                "setting keys change only it, Space steps them all, B the single step",
                a->batch.n);
    else
        app_msg(a, 0,
                "%d requests, one LM-head call and one sampler call a step: Up, Down choose "
                "one, the setting keys change only it, Space steps them all",
                a->batch.n);
    return APP_REDRAW;
}

/* Opens or closes the batch view. */
int app_toggle_batch(struct app *a)
{
    if (a->batch_on) {
        a->batch_on = 0;
        batch_free(&a->batch);
        app_msg(a, 0, "back to the single step");
        return APP_REDRAW;
    }
    return open_batch(a);
}
