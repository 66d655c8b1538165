/* view_read.c - the text view (c; app_read.c): the text of the steps
 * taken as it reads, each generated token in the colour and underline of
 * the probability it was taken at, the selected token's step below with its
 * most likely tokens, and the text's log-probability and perplexity. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/view_int.h"
#include "base/utf8.h"

#define READ_TOKEN_MAX 96 /* bytes of one token's text on screen */

/* A token's probability as a colour and an underline, so that a screen
 * without colours (mono, ASCII) still tells the bands apart. */
static void p_style(double p, int *color, int *attr)
{
    *color = p >= 0.9 ? COL_DEFAULT : p >= 0.5 ? COL_KEPT : p >= 0.1 ? COL_CHOSEN : COL_WARN;
    *attr = p >= 0.5 ? 0 : p >= 0.1 ? ATTR_UNDERLINE : ATTR_UNDERLINE | ATTR_BOLD;
}

/* Token id's text as it reads after the text before it (a word-level
 * vocabulary's space before it), escaped; a token with no text (an end
 * token) by its name. */
static void token_text(const struct app *a, int id, char *buf, size_t n)
{
    char raw[READ_TOKEN_MAX];
    vocab_detok(&a->L.vocab, &id, 1, raw + 1, sizeof raw - 1);
    raw[0] = ' ';
    if (!raw[1])
        utf8_escape(vocab_token(&a->L.vocab, id), buf, n);
    else
        utf8_escape(raw + !a->L.vocab.join_space, buf, n);
}

/* Where the text goes: a cursor that wraps at whole tokens. */
struct flow {
    const struct screen_ctx *c;
    int x, y, top, rows; /* y counts from the text's first line; rows shown from top */
    int sel_y;           /* the line of the selected token */
};

static void flow_put(struct flow *f, const char *text, int color, int attr)
{
    int w = utf8_width(text), width = f->c->r.w;
    if (f->x > 0 && f->x + w > width)
        f->x = 0, f->y++;
    int row = f->y - f->top;
    if (row >= 0 && row < f->rows)
        ctx_text(f->c, f->x, 1 + row, width - f->x, text, color, attr);
    f->x += w;
}

/* A context that is not the text so far plus its last token: a new text
 * (a step with its own context), on a line of its own. */
static int new_text(const struct app *a, int i)
{
    const struct app_entry *p = &a->hist[i - 1], *e = &a->hist[i];
    return e->len != p->len + 1 || memcmp(e->ctx, p->ctx, (size_t)p->len * sizeof *e->ctx) != 0 ||
           e->ctx[p->len] != p->choice;
}

/* One token of the text in its style: the one at position sel reversed. */
static void flow_token(const struct app *a, struct flow *f, const struct app_entry *e, int at)
{
    char buf[READ_TOKEN_MAX * 4];
    int color, attr;
    p_style(e->prob, &color, &attr);
    if (at == a->read.sel)
        attr |= ATTR_REVERSE, f->sel_y = f->y;
    token_text(a, e->choice, buf, sizeof buf);
    flow_put(f, buf, color, attr);
}

/* Ids from..to of a context, dimmed: the part of a prompt nothing says
 * more of. */
static void flow_ids(const struct app *a, struct flow *f, const int *ids, int from, int to)
{
    char buf[READ_TOKEN_MAX * 8];
    int n = to - from;
    char *text = n > 0 ? malloc(8 * (size_t)n + 1) : NULL;
    if (!text)
        return;
    vocab_detok(&a->L.vocab, ids + from, n, text, 8 * (size_t)n + 1);
    utf8_escape(text, buf, sizeof buf);
    flow_put(f, buf, COL_REMOVED, 0);
    free(text);
}

/* The text: each text's prompt dimmed (a model's prompt tokens after the
 * first in the style of what it gave them), then its tokens in their
 * style. Returns the line of the selected token. */
static int flow_text(const struct app *a, struct flow *f)
{
    int pre = a->read.pre;
    for (int i = 0; i < a->n_hist; i++) {
        const struct app_entry *e = &a->hist[i];
        if (i > 0 && new_text(a, i)) {
            f->x = 0, f->y += 2;
            flow_ids(a, f, e->ctx, 0, e->len);
        } else if (i == 0) {
            flow_ids(a, f, e->ctx, 0, pre > 0 ? 1 : e->len);
            for (int k = 0; k < pre; k++)
                flow_token(a, f, &a->read.prompt[k], k);
            if (pre > 0)
                flow_ids(a, f, e->ctx, pre + 1, e->len);
        }
        flow_token(a, f, e, pre + i);
    }
    return f->sel_y;
}

/* The title: which text, how many tokens, ln p and the perplexity. */
static void read_title(const struct app *a, const struct screen_ctx *c)
{
    int n;
    double sum, mean, ppl;
    app_read_logprob(a, &n, &sum, &mean, &ppl);
    char right[160];
    snprintf(right, sizeof right, "text %d of %d, %d tokens: ln p %.4f, mean %.4f, perplexity %.2f",
             a->read.branch + 1, a->read.n_branch, n, sum, mean, ppl);
    if (utf8_width(right) > c->r.w - 14)
        snprintf(right, sizeof right, "text %d/%d, perplexity %.2f", a->read.branch + 1,
                 a->read.n_branch, ppl);
    pane_title(c, "Text view", right);
}

/* The scale under the title, each band in its own style. */
static void read_scale(const struct screen_ctx *c, int y)
{
    static const struct {
        double p;
        const char *words;
    } BAND[] = { { 0.95, "p 0.9 and up" },
                 { 0.7, "0.5 to 0.9" },
                 { 0.3, "0.1 to 0.5" },
                 { 0.05, "under 0.1" } };
    int x = ctx_text(c, 0, y, c->r.w, "taken at ", COL_REMOVED, 0);
    for (size_t i = 0; i < sizeof BAND / sizeof BAND[0]; i++) {
        int color, attr;
        p_style(BAND[i].p, &color, &attr);
        x += ctx_text(c, x, y, c->r.w - x, BAND[i].words, color, attr);
        x += ctx_text(c, x, y, c->r.w - x, i + 1 < sizeof BAND / sizeof BAND[0] ? ", " : "", 0, 0);
    }
}

/* The selected token's step: its numbers, then its step's most likely
 * tokens, the one Enter would take marked. Returns the lines used. */
static int read_step(const struct app *a, const struct screen_ctx *c, int y)
{
    const struct app_entry *e = app_read_entry(a, a->read.sel);
    char tok[READ_TOKEN_MAX], line[1200], how[64] = "greedy", where[48];
    utf8_escape(vocab_token(&a->L.vocab, e->choice), tok, sizeof tok);
    if (a->read.sel < a->read.pre)
        snprintf(how, sizeof how, "the prompt's: what the model gave it there");
    else if (e->forced)
        snprintf(how, sizeof how, "your choice");
    else if (e->sampled)
        snprintf(how, sizeof how, "drawn, u %.4f", e->u);
    if (a->read.sel < a->read.pre)
        snprintf(where, sizeof where, "prompt token %d", a->read.sel + 2);
    else
        snprintf(where, sizeof where, "step %d", e->step);
    snprintf(line, sizeof line, "%s: %s  p %.4f  ln p %.4f  rank %d  final %.4f  (%s)", where, tok,
             e->prob, log(e->prob), e->rank, e->final, how);
    ctx_text(c, 0, y, c->r.w, line, COL_ACCENT, ATTR_BOLD);
    for (int k = 0; k < e->n_alt; k++) {
        const struct trace_alt *t = &e->alt[k];
        utf8_escape(vocab_token(&a->L.vocab, t->id), tok, sizeof tok);
        char pad[READ_TOKEN_MAX * 2];
        utf8_pad(tok, 16, 0, pad, sizeof pad);
        snprintf(line, sizeof line, "%s %s p %.4f  final %.4f%s", k == a->read.alt ? ">" : " ", pad,
                 t->prob, t->final,
                 t->id != e->choice          ? ""
                 : a->read.sel < a->read.pre ? "  (the prompt's)"
                                             : "  (taken)");
        ctx_text(c, 2, y + 1 + k, c->r.w - 2, line, k == a->read.alt ? COL_CHOSEN : COL_DEFAULT,
                 k == a->read.alt ? ATTR_BOLD : 0);
    }
    return 1 + e->n_alt;
}

void draw_read(const struct app *a, const struct screen_ctx *c)
{
    int w = c->r.w, h = c->r.h;
    read_title(a, c);
    read_scale(c, 1);
    int below = 1 + APP_ALTS + 2; /* the step, its tokens, the keys, the message */
    int rows = h - 3 - below;
    struct screen_ctx text = ctx_sub(c, (struct rect){ 0, 1, w, rows + 1 });
    struct flow f = { .c = &text, .top = 0, .rows = rows };
    struct flow measure = { .c = &text, .top = 1 << 30, .rows = 0 };
    int sel = a->n_hist > 0 ? flow_text(a, &measure) : 0;
    f.top = sel >= rows ? sel - rows / 2 : 0; /* the selected token in view */
    if (a->n_hist > 0) {
        flow_text(a, &f);
        read_step(a, c, h - below);
    }
    const char *keys = c->s->utf8 ? "\u2190\u2192 token  \u2191\u2193 another  Enter: take it, "
                                    "draw the rest  [ ] texts  c close"
                                  : "Left Right token  Up Down another  Enter: take it, draw the "
                                    "rest  [ ] texts  c close";
    ctx_text(c, 0, h - 2, w, keys, COL_REMOVED, 0);
    if (a->msg[0])
        ctx_text(c, 0, h - 1, w, a->msg, a->msg_warn ? COL_WARN : COL_ACCENT, 0);
}
