/* app_read.c - the text view (c): the whole text of the steps taken, each
 * token with the probability it was taken at (view_read.c draws it). A
 * token's step shows its most likely tokens; taking another of them there
 * draws the rest of the text again with the settings of now (a branch), and
 * the texts so made are kept, to go back and forth between. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app_int.h"
#include "base/clock.h"

void app_read_free(struct app *a)
{
    struct app_read *r = &a->read;
    for (int i = 0; i < r->n_branch; i++)
        free(r->b[i].ids), free(r->b[i].forced);
    free(r->prompt);
    memset(r, 0, sizeof *r);
}

const struct app_entry *app_read_entry(const struct app *a, int sel)
{
    return sel < a->read.pre ? &a->read.prompt[sel] : &a->hist[sel - a->read.pre];
}

/* For a model: what it gave each prompt token after the ids before it,
 * one run of the body and the head per position (the prefill ran the head
 * for the last position only), then the step on screen again (the source
 * describes its last run). Nothing on failure: the view shows the prompt
 * plain. */
static void prompt_predictions(struct app *a)
{
    const struct app_entry *first = &a->hist[0];
    int n = source_prompt_len(&a->L, first->len);
    struct app_read *r = &a->read;
    if (r->prompt || !source_follows_context(&a->source) || n < 2)
        return;
    struct trace t = { 0 };
    struct err e;
    struct app_entry *p = calloc((size_t)n - 1, sizeof *p);
    if (!p || trace_init(&t, a->L.vocab.n, &e) < 0) {
        free(p);
        return;
    }
    double t0 = clock_ms();
    int i = 1;
    for (; i < n; i++) {
        if (source_run_step(&a->source, first->step, &first->settings, first->ctx, i, &t, &e) < 0)
            break;
        app_keep_numbers(&p[i - 1], &t, first->ctx[i]);
        p[i - 1].choice = first->ctx[i];
    }
    trace_free(&t);
    r->prompt_ms = clock_ms() - t0;
    if (i < n) {
        free(p);
        app_msg(a, 1, "the prompt's predictions: %s", e.msg);
    } else {
        r->prompt = p, r->pre = n - 1;
        app_msg(a, 0,
                "the prompt's %d tokens after the first: the body and head ran %d more "
                "times, %.3g ms (%.0f tokens/s)",
                n - 1, n - 1, r->prompt_ms,
                (n - 1) / (r->prompt_ms > 0 ? r->prompt_ms : 1e-9) * 1e3);
    }
    app_recompute(a);
}

void app_read_logprob(const struct app *a, int *n, double *sum, double *mean, double *ppl)
{
    double s = 0.0;
    int k = 0;
    for (int i = 0; i < a->n_hist; i++)
        if (a->hist[i].prob > 0.0)
            s += log(a->hist[i].prob), k++;
    *n = k;
    *sum = k ? s : NAN;
    *mean = k ? s / k : NAN;
    *ppl = k ? exp(-s / k) : NAN;
}

/* The steps taken into branch slot i (its old tokens freed). Returns 0 or
 * -1 when out of memory (the slot then empty). */
static int save_branch(struct app *a, int i)
{
    struct app_branch *b = &a->read.b[i];
    free(b->ids), free(b->forced);
    b->n = a->n_hist;
    b->ids = malloc((size_t)(b->n ? b->n : 1) * sizeof *b->ids);
    b->forced = malloc((size_t)(b->n ? b->n : 1));
    if (!b->ids || !b->forced) {
        free(b->ids), free(b->forced);
        memset(b, 0, sizeof *b);
        return -1;
    }
    for (int k = 0; k < b->n; k++)
        b->ids[k] = a->hist[k].choice, b->forced[k] = (unsigned char)a->hist[k].forced;
    return 0;
}

/* The alternative of entry en that is its own token (0 when it is not
 * among them). */
static int own_alt(const struct app_entry *en)
{
    for (int k = 0; k < en->n_alt; k++)
        if (en->alt[k].id == en->choice)
            return k;
    return 0;
}

int app_read_open(struct app *a)
{
    if (a->n_hist == 0) {
        app_msg(a, 0, "no step taken yet: Space takes one, then c shows the text");
        return APP_REDRAW;
    }
    struct app_read *r = &a->read;
    if (r->n_branch == 0 && save_branch(a, 0) == 0)
        r->n_branch = 1, r->branch = 0;
    prompt_predictions(a);
    r->sel = r->pre + (a->pos < a->n_hist ? a->pos : a->n_hist - 1);
    r->alt = own_alt(app_read_entry(a, r->sel));
    a->mode = MODE_READ;
    return APP_REDRAW;
}

/* Takes the steps after the one just taken while the text goes on and is
 * shorter than want tokens: the rest drawn again with the settings of now. */
static void draw_on(struct app *a, int want)
{
    /* An exercise's step waits for its answers: the text stops before it. */
    while (a->end == END_NONE && a->pos >= a->n_hist && a->n_hist < want && a->step_ok &&
           !app_hidden(a)) {
        int before = a->n_hist;
        app_take_step(a);
        if (a->n_hist == before)
            break; /* refused: the message says why */
    }
}

/* Enter: the selected alternative taken at the selected step, the text
 * after it drawn again, and kept as a new branch. */
static int branch_here(struct app *a)
{
    struct app_read *r = &a->read;
    if (r->sel < r->pre) {
        app_msg(a, 0, "a token of the prompt: e edits the prompt");
        return APP_REDRAW;
    }
    const struct app_entry *en = app_read_entry(a, r->sel);
    if (r->alt >= en->n_alt || en->alt[r->alt].id == en->choice) {
        app_msg(a, 0, "that is the token taken there: Up and Down choose another");
        return APP_REDRAW;
    }
    int id = en->alt[r->alt].id, step = en->step, want = a->n_hist, sel = r->sel - r->pre;
    save_branch(a, r->branch); /* as it is now, before it changes */
    a->pos = sel;
    app_take_token(a, id);
    draw_on(a, want);
    int slot = r->n_branch < APP_BRANCHES ? r->n_branch : APP_BRANCHES - 1;
    if (save_branch(a, slot) == 0)
        r->branch = slot, r->n_branch = slot + 1;
    r->sel = r->pre + (sel < a->n_hist ? sel : a->n_hist - 1);
    r->alt = own_alt(app_read_entry(a, r->sel));
    app_msg(a, 0, "text %d of %d: step %d took \"%s\", and the text after it was drawn again",
            r->branch + 1, r->n_branch, step, vocab_token(&a->L.vocab, id));
    return APP_REDRAW;
}

/* [ and ]: the text kept before or after the one on screen, made again: the
 * steps it shares with this one stay, the rest are taken as they were (a
 * drawn token drawn again, the user's taken again). */
static int go_branch(struct app *a, int dir)
{
    struct app_read *r = &a->read;
    int j = r->branch + dir;
    if (j < 0 || j >= r->n_branch) {
        app_msg(a, 0, "text %d of %d: no text %s it", r->branch + 1, r->n_branch,
                dir < 0 ? "before" : "after");
        return APP_REDRAW;
    }
    save_branch(a, r->branch);
    const struct app_branch *b = &r->b[j];
    int d = 0;
    while (d < a->n_hist && d < b->n && a->hist[d].choice == b->ids[d] &&
           a->hist[d].forced == b->forced[d])
        d++;
    if (d < a->n_hist) {
        a->pos = d;
        app_reopen_shown(a);
        app_recompute(a);
    }
    for (int i = d; i < b->n && a->end == END_NONE && a->pos >= a->n_hist; i++)
        app_replay_token(a, b->ids[i], b->forced[i]);
    r->branch = j;
    r->sel = r->pre + (d < a->n_hist ? d : a->n_hist - 1);
    r->alt = own_alt(app_read_entry(a, r->sel));
    app_msg(a, 0, "text %d of %d", j + 1, r->n_branch);
    return APP_REDRAW;
}

/* Left and Right along the tokens; Up and Down along the step's tokens. */
static int move(struct app *a, int dsel, int dalt)
{
    struct app_read *r = &a->read;
    int sel = r->sel + dsel;
    if (sel >= 0 && sel < r->pre + a->n_hist && dsel) {
        r->sel = sel;
        r->alt = own_alt(app_read_entry(a, sel));
    }
    int alt = r->alt + dalt;
    if (dalt && alt >= 0 && alt < app_read_entry(a, r->sel)->n_alt)
        r->alt = alt;
    return APP_REDRAW;
}

int app_read_key(struct app *a, int key)
{
    a->msg[0] = '\0';
    if (a->n_hist == 0) { /* Home or another lesson since: nothing to read */
        a->mode = MODE_NORMAL;
        return APP_REDRAW;
    }
    if (a->read.sel >= a->read.pre + a->n_hist)
        a->read.sel = a->read.pre + a->n_hist - 1;
    switch (key) {
    case AK_LEFT:
        return move(a, -1, 0);
    case AK_RIGHT:
        return move(a, 1, 0);
    case AK_UP:
        return move(a, 0, -1);
    case AK_DOWN:
        return move(a, 0, 1);
    case AK_ENTER:
    case ' ':
        return branch_here(a);
    case '[':
        return go_branch(a, -1);
    case ']':
        return go_branch(a, 1);
    case AK_ESC:
    case 'c':
    case 'q':
        a->mode = MODE_NORMAL;
        return APP_REDRAW;
    default:
        app_msg(a, 0,
                "the text view: Left, Right a token; Up, Down another; Enter takes it; [ ] "
                "texts; c or Esc closes");
        return APP_REDRAW;
    }
}
