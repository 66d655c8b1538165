/* app_keys.c - what each key does: the actions of data/actions.def with
 * their handlers, the lookup from a key to its action (the user's bindings
 * first), and the help screen's lines. A key in an input mode (the ':'
 * prompt, an answer, a token to find) edits the line instead.
 */
#include "tui/app_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LADDER_MAX 64 /* values on one setting's ladder */

struct action {
    const char *name;
    int key, alias;
    int (*handler)(struct app *, const struct action *);
    int (*batch)(struct app *, const struct action *); /* in the batch view */
    const char *arg;
    const char *help;
};

/* ---- stepping --------------------------------------------------------------- */

static int act_step(struct app *a, const struct action *act)
{
    (void)act;
    return app_take_step(a);
}

static int act_back(struct app *a, const struct action *act)
{
    (void)act;
    if (a->pos > 0) {
        a->pos--;
        a->scroll = 0;
        app_recompute(a);
        app_msg(a, 0, "step %d, taken: Right or Space walks forward", a->cur_step);
    } else {
        app_msg(a, 0, "this is the first step");
    }
    return APP_REDRAW;
}

static int act_forward(struct app *a, const struct action *act)
{
    (void)act;
    if (a->pos < a->n_hist - (a->end != END_NONE ? 1 : 0)) {
        a->pos++;
        a->scroll = 0;
        app_recompute(a);
        if (a->pos == a->n_hist)
            app_msg(a, 0, "step %d, live: Space takes it", a->cur_step);
        else
            app_msg(a, 0, "step %d, taken", a->cur_step);
    } else if (a->end != END_NONE) {
        app_end_message(a);
    } else {
        app_msg(a, 0, "this is the live step: Space takes it");
    }
    return APP_REDRAW;
}

static int act_restart(struct app *a, const struct action *act)
{
    (void)act;
    app_start_at(a, 1);
    app_msg(a, 0, "the lesson starts again");
    return APP_REDRAW;
}

static int act_lesson(struct app *a, const struct action *act)
{
    return app_step_lesson(a, atoi(act->arg));
}

/* ---- settings: ladders and choices -------------------------------------------- */

/* The ladder of setting i, lowest first, "off" as +inf (above every
 * number); a value of V or more is left out where that is off anyway.
 * Returns how many values it has. */
static int ladder_values(const struct setting_info *i, int V, double *out)
{
    int n = 0;
    for (const char *p = i->ladder; p && *p && n < LADDER_MAX;) {
        p += strspn(p, " ");
        if (!*p)
            break;
        double v;
        if (strncmp(p, "off", 3) == 0) {
            v = INFINITY;
            p += 3;
        } else {
            char *end;
            v = strtod(p, &end);
            p = end;
        }
        if (!((i->flags & SET_OFF_AT_V) && isfinite(v) && v >= V))
            out[n++] = v;
    }
    return n;
}

/* The next value on setting arg's ladder above (dir > 0) or below its
 * current one. */
static int ladder_key(struct app *a, const struct action *act, int dir)
{
    const struct setting_info *i = setting_find(act->arg);
    const struct sampler_settings *m = &app_edit_settings(a)->sampler;
    int V = a->L.vocab.n;
    double steps[LADDER_MAX], cur = setting_number(i, m);
    int n = ladder_values(i, V, steps);
    if (n > 0 && isinf(steps[n - 1]) && !setting_is_on(i, m, V))
        cur = INFINITY; /* off sits above every number */
    for (int k = dir > 0 ? 0 : n - 1; k >= 0 && k<n; k += dir> 0 ? 1 : -1) {
        if (dir > 0 ? !(steps[k] > cur + 1e-12) : !(steps[k] < cur - 1e-12))
            continue;
        if (isinf(steps[k]))
            return app_apply_setting(a, i->name, "off");
        char buf[32];
        snprintf(buf, sizeof buf, "%.6g", steps[k]);
        return app_apply_setting(a, i->name, buf);
    }
    app_msg(a, 0, "%s is already at its %s", i->name,
            dir < 0                  ? "lowest step"
            : setting_is_on(i, m, V) ? "highest step"
                                     : "highest step (off)");
    return APP_REDRAW;
}

static int act_down(struct app *a, const struct action *act)
{
    return ladder_key(a, act, -1);
}

static int act_up(struct app *a, const struct action *act)
{
    return ladder_key(a, act, 1);
}

static const struct action *action_up_of(const char *setting);

/* The next name of a choice (penalty formula, scope); when its stage's
 * main setting is off, it says which key turns that on. */
static int act_toggle(struct app *a, const struct action *act)
{
    const struct setting_info *i = setting_find(act->arg);
    int cur = (int)setting_number(i, &app_edit_settings(a)->sampler);
    char next[32];
    setting_enum_name(i, cur + 1, next, sizeof next);
    if (!next[0])
        setting_enum_name(i, 0, next, sizeof next);
    int flags = app_apply_setting(a, i->name, next);
    const struct setting_info *main = setting_of_stage(i->stage);
    const struct action *up = main ? action_up_of(main->name) : NULL;
    if (up && !setting_is_on(main, &app_edit_settings(a)->sampler, a->L.vocab.n) && !a->msg_warn) {
        char key[16];
        keys_name(up->key, key, sizeof key);
        snprintf(a->msg + strlen(a->msg), sizeof a->msg - strlen(a->msg),
                 " (the %s is off: %s turns it on)", main->label, key);
    }
    return flags;
}

/* The next preset order: lesson, hf, vllm, llamacpp, lesson again (a
 * custom order goes back to the lesson's). */
static int act_order(struct app *a, const struct action *act)
{
    (void)act;
    int p = app_edit_settings(a)->sampler.chain.preset;
    return app_apply_setting(a, "order", preset_name((enum preset)((p + 1) % PRESET_CUSTOM)));
}

static int act_seed(struct app *a, const struct action *act)
{
    (void)act;
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)(app_edit_settings(a)->sampler.seed + 1));
    return app_apply_setting(a, "seed", buf);
}

/* ---- what the step shows ---------------------------------------------------------- */

static int act_show_u(struct app *a, const struct action *act)
{
    (void)act;
    if (a->pos < a->n_hist) {
        app_msg(a, 0, a->t.greedy ? "a greedy step draws no u" : "a taken step always shows its u");
    } else {
        a->show_u = !a->show_u;
        if (a->show_u && a->t.greedy)
            app_msg(a, 0, "greedy: no u is drawn");
    }
    return APP_REDRAW;
}

static int act_read(struct app *a, const struct action *act)
{
    (void)act;
    return app_read_open(a);
}

static int act_text(struct app *a, const struct action *act)
{
    (void)act;
    a->mode = MODE_TEXT;
    a->scroll = 0;
    return APP_REDRAW;
}

static int act_try(struct app *a, const struct action *act)
{
    (void)act;
    return app_try(a);
}

/* /: a token to find, on every step (a toy one marks its row in the panes). */
static int act_find(struct app *a, const struct action *act)
{
    (void)act;
    a->mode = MODE_FIND;
    app_input_clear(a);
    a->msg[0] = '\0';
    return APP_REDRAW;
}

/* D: the next count of many draws, on every step (app_draws). */
static int act_draws(struct app *a, const struct action *act)
{
    (void)act;
    return app_draws(a, "");
}

/* A key that runs a ':' command (B: the batch view). */
static int act_command(struct app *a, const struct action *act)
{
    return app_command(a, act->arg);
}

static int act_reset(struct app *a, const struct action *act)
{
    (void)act;
    return app_reset(a);
}

static int act_answer(struct app *a, const struct action *act)
{
    (void)act;
    if (app_hidden(a))
        app_ask_prompt(a);
    else
        app_msg(a, 0, "nothing to answer here");
    return APP_REDRAW;
}

static int act_solution(struct app *a, const struct action *act)
{
    (void)act;
    if (app_hidden(a)) {
        a->revealed = 1;
        a->mode = MODE_NORMAL;
        app_msg(a, 0, "the solution is shown");
    } else {
        app_msg(a, 0, "v shows an exercise's solution; this step has nothing hidden");
    }
    return APP_REDRAW;
}

/* Moves the lesson text by arg lines ("page": a page), within the text
 * the view last drew. */
static int act_scroll(struct app *a, const struct action *act)
{
    int page = a->scroll_page > 1 ? a->scroll_page - 1 : 1;
    int d = strstr(act->arg, "page") ? page : 1;
    a->scroll += act->arg[0] == '-' ? -d : d;
    if (a->scroll > a->scroll_max)
        a->scroll = a->scroll_max;
    if (a->scroll < 0)
        a->scroll = 0;
    return APP_REDRAW;
}

static int act_prompt(struct app *a, const struct action *act)
{
    app_open_prompt(a, act->arg, NULL);
    return APP_REDRAW;
}

/* e: the prompt line opened on the model's prompt as it is. */
static int act_edit_prompt(struct app *a, const struct action *act)
{
    (void)act;
    if (!a->L.model.gguf) {
        app_msg(a, 0, "only a real model's prompt can be edited (logitlab --model FILE.gguf)");
        return APP_REDRAW;
    }
    app_open_prompt(a, "prompt ", a->L.prompt_text);
    return APP_REDRAW;
}

/* w: the found token taken instead of the draw, else the line to name one. */
static int act_take(struct app *a, const struct action *act)
{
    (void)act;
    if (a->find_id >= 0)
        return app_take_token(a, a->find_id);
    app_open_prompt(a, "take ", NULL);
    return APP_REDRAW;
}

static int act_dismiss(struct app *a, const struct action *act)
{
    (void)act;
    a->msg[0] = '\0';
    return APP_REDRAW;
}

static int act_help(struct app *a, const struct action *act)
{
    (void)act;
    a->mode = MODE_HELP;
    return APP_REDRAW;
}

/* The legend of the marks (view_legend.c), a page of its own. */
static int act_legend(struct app *a, const struct action *act)
{
    (void)act;
    a->mode = MODE_LEGEND;
    return APP_REDRAW;
}

/* What b says of each big mode it goes to: on the toy panes, then on a
 * full-size step's table (view_big.c: the scores' columns, then p's). */
static const char *const BIG_SAYS[2][3] = {
    { "big mode off: all four panes",
      "big mode: the logits and the exponentials (b: the probabilities)",
      "big mode: the probabilities and the cumulative sums (b: all four panes)" },
    { "big mode off: the table of probabilities",
      "big mode: the table's scores, z' and e^z', each z' among all (b: the probabilities)",
      "big mode: the table's probabilities and cumulative sums (b: off)" },
};

/* Big mode: the view lays out two panes at a time at the whole height
 * (view_layout.c): the scores, then the probabilities, then the usual
 * four again. */
static int act_big(struct app *a, const struct action *act)
{
    (void)act;
    a->big = (a->big + 1) % 3;
    app_msg(a, 0, "%s", BIG_SAYS[source_is_fast(&a->source)][a->big]);
    return APP_REDRAW;
}

static int act_quit(struct app *a, const struct action *act)
{
    (void)act;
    (void)a;
    return APP_QUIT;
}

/* ---- the batch view's own ------------------------------------------------------ */

static int act_batch_step(struct app *a, const struct action *act)
{
    (void)act;
    struct err e;
    if (batch_step(&a->batch, &a->source, a->opt.backend, &e) < 0)
        app_msg(a, 1, "%s", e.msg);
    else if (!batch_running(&a->batch))
        app_msg(a, 0, "every request has stopped: Home starts the batch again, B leaves");
    else
        a->msg[0] = '\0';
    return APP_REDRAW;
}

static int act_batch_restart(struct app *a, const struct action *act)
{
    (void)act;
    struct err e;
    batch_free(&a->batch);
    if (batch_open(&a->batch, &a->source, a->opt.backend, &e) < 0) {
        a->batch_on = 0;
        app_msg(a, 1, "%s", e.msg);
    } else {
        app_msg(a, 0, "the batch starts again from the prompt");
    }
    return APP_REDRAW;
}

static int act_batch_reset(struct app *a, const struct action *act)
{
    (void)act;
    return app_batch_reset_row(a);
}

/* Up and Down choose the request the setting keys change. */
static int act_batch_select(struct app *a, const struct action *act)
{
    int n = a->batch.n;
    a->batch_sel = (a->batch_sel + (act->arg[0] == '-' ? n - 1 : 1)) % n;
    a->msg[0] = '\0';
    return APP_REDRAW;
}

static int act_batch_leave(struct app *a, const struct action *act)
{
    (void)act;
    return app_toggle_batch(a);
}

/* Says that key does nothing where it was pressed (printable keys only). */
static int nothing_here(struct app *a, int key)
{
    if (key < 0x80 && key > 0x20)
        app_msg(a, 0,
                a->batch_on ? "'%c' does nothing in the batch view: B leaves it, ? lists the keys"
                            : "'%c' does nothing here: ? lists the keys",
                key);
    return APP_REDRAW;
}

/* An action that has no place in the batch view. */
static int act_none(struct app *a, const struct action *act)
{
    return nothing_here(a, act->key);
}

/* ---- the table and the lookup ------------------------------------------------------ */

#define NONE act_none
static const struct action ACTIONS[] = {
#define ACTION(nm, k, al, h, b, ar, hp) { nm, k, al, h, b, ar, hp },
#include "data/actions.def"
#undef ACTION
};
#undef NONE
#define N_ACTIONS ((int)(sizeof ACTIONS / sizeof ACTIONS[0]))

static const struct action *action_up_of(const char *setting)
{
    for (int i = 0; i < N_ACTIONS; i++)
        if (ACTIONS[i].handler == act_up && strcmp(ACTIONS[i].arg, setting) == 0)
            return &ACTIONS[i];
    return NULL;
}

/* The action of key: the user's binding (config.h), else its own key. */
static const struct action *action_of(const struct app *a, int key)
{
    if (key > 0 && key < 128 && a->keymap[key])
        return &ACTIONS[a->keymap[key] - 1];
    for (int i = 0; i < N_ACTIONS; i++)
        if (ACTIONS[i].key == key || (ACTIONS[i].alias && ACTIONS[i].alias == key))
            return &ACTIONS[i];
    return NULL;
}

void app_bind_keys(struct app *a, const struct config *c)
{
    memset(a->keymap, 0, sizeof a->keymap);
    for (int i = 0; c && i < c->n_bindings; i++)
        a->keymap[c->bindings[i].key] = c->bindings[i].action + 1;
}

/* Enter on the '/' line: the token typed is found (app_find). */
static int submit_find(struct app *a)
{
    return app_submit_input(a, app_find);
}

/* A key in a mode that takes keys for itself, or -1 when it is not in one. */
static int key_in_mode(struct app *a, int key)
{
    switch (a->mode) {
    case MODE_HELP: /* its second page is the legend */
        a->mode = key == '?' || key == ' ' || key == AK_PGDN ? MODE_LEGEND : MODE_NORMAL;
        return APP_REDRAW;
    case MODE_LEGEND: /* ? goes back to the keys */
        a->mode = key == '?' || key == AK_PGUP ? MODE_HELP : MODE_NORMAL;
        return APP_REDRAW;
    case MODE_READ:
        return app_read_key(a, key);
    case MODE_TEXT:
        if (key == AK_UP || key == AK_DOWN || key == AK_PGUP || key == AK_PGDN)
            return action_of(a, key)->handler(a, action_of(a, key));
        a->mode = MODE_NORMAL;
        a->scroll = 0;
        return APP_REDRAW;
    case MODE_PROMPT:
        return app_key_input(a, key, app_submit_command);
    case MODE_ANSWER:
        return app_key_input(a, key, app_submit_answer);
    case MODE_FIND:
        return app_key_input(a, key, submit_find);
    case MODE_NORMAL:
        break;
    }
    return -1;
}

int app_key(struct app *a, int key)
{
    if (key == AK_RESIZE || key == AK_NONE)
        return APP_REDRAW;
    int flags = key_in_mode(a, key);
    if (flags >= 0)
        return flags;
    const struct action *act = action_of(a, key);
    if (!act)
        return nothing_here(a, key);
    return (a->batch_on ? act->batch : act->handler)(a, act);
}

/* ---- the help screen -------------------------------------------------------------- */

/* Appends the keys of action i (its own, its alias, the ones bound to it). */
static int action_keys(const struct app *a, int i, char keys[][16], int n, int max)
{
    if (n < max)
        keys_name(ACTIONS[i].key, keys[n++], sizeof keys[0]);
    if (ACTIONS[i].alias && n < max)
        keys_name(ACTIONS[i].alias, keys[n++], sizeof keys[0]);
    for (int k = 1; k < 128 && n < max; k++)
        if (a->keymap[k] == i + 1)
            keys_name(k, keys[n++], sizeof keys[0]);
    return n;
}

int app_help_line(const struct app *a, int line, char *keys, size_t n, const char **help)
{
    int at = -1;
    for (int i = 0; i < N_ACTIONS; i++) {
        if (!ACTIONS[i].help || !ACTIONS[i].help[0] || ++at != line)
            continue;
        /* This action, and the ones after it that share its line. */
        char names[16][16];
        int count = action_keys(a, i, names, 0, 16);
        for (int j = i + 1; j < N_ACTIONS && !ACTIONS[j].help; j++)
            count = action_keys(a, j, names, count, 16);
        keys[0] = '\0';
        for (int k = 0; k < count; k++) {
            if (k)
                snprintf(keys + strlen(keys), n - strlen(keys), "%s", count == 2 ? ", " : " ");
            snprintf(keys + strlen(keys), n - strlen(keys), "%s", names[k]);
        }
        *help = ACTIONS[i].help;
        return 1;
    }
    return 0;
}
