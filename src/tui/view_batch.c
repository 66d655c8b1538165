/* view_batch.c - the batch view: the requests sampled together, a block
 * each: its name and settings with the token it draws next, the end of its
 * text, and on a toy lesson its tokens with their final probabilities;
 * below them, when there is room, what the batch shows (batch_explain).
 * Everything is fitted by dropping words, never digits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/view_int.h"
#include "base/utf8.h"

/* The end of the text a request has generated, escaped, as it is shown
 * (cut where a stop string says, gen_shown_text): more than a line of the
 * widest screen. */
static void batch_text(const struct batch_row *w, char *out, size_t n)
{
    char raw[4096], esc[8192];
    size_t len;
    char *text = gen_shown_text(&w->g, 1, &len);
    const char *from = text ? text : "";
    if (!text)
        len = 0;
    if (len >= sizeof raw) { /* the end matters: from the start of a character */
        from += len - (sizeof raw - 1);
        len = sizeof raw - 1;
        while (len > 0 && (*from & 0xC0) == 0x80)
            from++, len--;
    }
    memcpy(raw, from, len);
    /* A running request's last character may wait for its next byte. */
    raw[w->g.stop.rule == STOP_NONE ? vocab_complete_prefix(raw, len) : len] = '\0';
    free(text);
    utf8_escape(raw, esc, sizeof esc);
    const char *t = esc;
    size_t el = strlen(esc);
    if (el >= n) { /* keep the end, from the start of a character */
        t = esc + el - (n - 1);
        while ((*t & 0xC0) == 0x80)
            t++;
    }
    utf8_copy(out, n, t);
}

/* What a request does next: the token it draws, with its final probability
 * and how many tokens its chain kept, or why it stopped. */
static void batch_next(const struct app *a, const struct batch_row *row, char *next, size_t n)
{
    if (row->g.stop.rule != STOP_NONE) {
        char why[160];
        const char *shown = stop_shown(&row->g.stop, &row->set);
        stop_describe(&row->g.stop, &row->set, &a->L.vocab, why, sizeof why);
        snprintf(next, n, "stopped: %s%s%s", why, shown ? ", " : "", shown ? shown : "");
        return;
    }
    char tok[96];
    utf8_escape(vocab_token(&a->L.vocab, row->res.id), tok, sizeof tok);
    /* A draw from the tail is the lesson's point: show its tiny p as such. */
    double p = row->res.final;
    snprintf(next, n, p >= 1e-3 || p == 0.0 ? "%s p %.4f, %d kept" : "%s p %.1e, %d kept", tok, p,
             row->res.kept_count);
}

/* A toy request's tokens, by rank: a kept one with its final probability
 * (the chosen one marked), a removed one crossed out. */
static void batch_tokens(const struct app *a, const struct screen_ctx *c, int x, int y, int w,
                         const struct batch_row *row, int attr)
{
    const struct backend_res *r = &row->res;
    int col = x;
    for (int i = 0; i < r->n_top && col < x + w; i++) {
        const struct backend_top *t = &r->top[i];
        char tok[96], item[128];
        utf8_escape(vocab_token(&a->L.vocab, t->id), tok, sizeof tok);
        int kept = t->removed_by == TRACE_KEPT;
        if (kept)
            snprintf(item, sizeof item, "%s %.4f", tok, t->final);
        else
            snprintf(item, sizeof item, "%s %s", tok, glyph(c, "\u00d7", "x"));
        int iw = utf8_width(item);
        if (col + iw > x + w) /* a whole item or none: never half a number */
            break;
        int chosen = kept && t->id == r->id && row->g.stop.rule == STOP_NONE;
        ctx_text(c, col, y, iw, item,
                 chosen ? COL_CHOSEN
                 : kept ? COL_DEFAULT
                        : COL_REMOVED,
                 attr | (chosen ? ATTR_BOLD
                         : kept ? 0
                                : ATTR_DIM));
        col += iw + 2;
    }
}

/* Text cut from the front into room columns at (x, y): the newest end. */
static void text_end(const struct screen_ctx *c, int x, int y, int room, const char *text, int attr)
{
    if (room < 8)
        return;
    const char *t = text;
    int tw = utf8_width(t);
    if (tw > room)
        t = skip_cols(t, tw - room);
    ctx_text(c, x, y, room, t, COL_DEFAULT, attr | ATTR_DIM);
}

/* The columns of a block's first line: the settings (set_w wide, after
 * the name), the next token (nw wide, at the right), and on a toy lesson
 * the text so far between them. */
struct batch_cols {
    int set_w, nw, text_between;
};

/* The first line of a request: its name, its settings, its text so far
 * (on a toy lesson), and what it does next, at the right. */
static void batch_head(const struct app *a, const struct screen_ctx *c, int y, int r,
                       const char *next, const struct batch_cols *k, const char *text)
{
    int w = c->r.w;
    const struct batch_row *row = &a->batch.row[r];
    int sel = r == a->batch_sel, stopped = row->g.stop.rule != STOP_NONE;
    int attr = sel ? ATTR_REVERSE : 0;
    int col = ctx_printf(c, 0, y, w, sel ? COL_ACCENT : COL_DEFAULT, attr | ATTR_BOLD, "%s%c ",
                         sel ? ">" : " ", batch_label(r));
    char set[160];
    batch_describe_fit(row, k->set_w, set, sizeof set);
    if (k->set_w > 0)
        ctx_text(c, col, y, k->set_w, set, COL_DEFAULT, attr);
    if (k->text_between)
        text_end(c, col + k->set_w + 2, y, w - k->nw - 2 - (col + k->set_w + 2), text, attr);
    ctx_text(c, w - k->nw, y, k->nw, next, stopped ? COL_REMOVED : COL_CHOSEN,
             attr | (stopped ? ATTR_DIM : ATTR_BOLD));
}

/* One request in lines rows (1 or 2): the head, then its tokens on a toy
 * lesson, else its text so far. */
static void batch_block(const struct app *a, const struct screen_ctx *c, int y, int r,
                        const char *next, const struct batch_cols *k, int lines)
{
    int w = c->r.w;
    const struct batch_row *row = &a->batch.row[r];
    int attr = r == a->batch_sel ? ATTR_REVERSE : 0;
    ctx_fill(c, (struct rect){ 0, y, w, lines }, ' ', COL_DEFAULT, attr);
    char text[1024];
    batch_text(row, text, sizeof text);
    batch_head(a, c, y, r, next, k, text);
    if (lines < 2)
        return;
    if (a->batch.toy)
        batch_tokens(a, c, 4, y + 1, w - 4, row, attr);
    else
        text_end(c, 4, y + 1, w - 4, text, attr);
}

/* The pane's title: what one step of the batch does, and what it cost when
 * that is worth reading (a full-size step), shortened to fit. */
static void batch_title(const struct app *a, const struct screen_ctx *c)
{
    const struct batch *b = &a->batch;
    char left[96], right[96] = "";
    if (b->toy)
        snprintf(left, sizeof left, "Batch of %d: one sampler call, each row its own settings",
                 b->n);
    else
        snprintf(left, sizeof left, "Batch of %d: one LM head call, one sampler call", b->n);
    if (b->toy)
        snprintf(right, sizeof right, "step %d's logits", b->toy_step);
    else if (b->head_ran)
        snprintf(right, sizeof right, "head %.1f ms, sampler %.1f ms", b->head_kernel_ms,
                 b->kernel_ms);
    else /* a setting changed: the same logits, sampled again */
        snprintf(right, sizeof right, "sampler %.1f ms, logits kept", b->kernel_ms);
    int room = c->r.w - utf8_width(left) - 4;
    if (utf8_width(right) > room && !b->toy)
        snprintf(right, sizeof right, "%.1f ms",
                 b->head_ran ? b->head_kernel_ms + b->kernel_ms : b->kernel_ms);
    if (utf8_width(right) > room)
        right[0] = '\0';
    pane_title(c, left, right);
}

/* batch_explain's paragraph, word-wrapped into rows y..y+h-1. */
static void batch_paragraph(const struct app *a, const struct screen_ctx *c, int y, int h)
{
    char text[4096];
    batch_explain(&a->batch, &a->L.vocab, text, sizeof text);
    int w = c->r.w - 2, col = 0, row = 0;
    for (const char *p = text; *p && row < h;) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        if (e == p)
            break;
        char word[256];
        size_t wl = (size_t)(e - p) < sizeof word - 1 ? (size_t)(e - p) : sizeof word - 1;
        memcpy(word, p, wl);
        word[wl] = '\0';
        int ww = utf8_width(word);
        if (col > 0 && col + 1 + ww > w) {
            if (++row >= h)
                break;
            col = 0;
        }
        int x = col > 0 ? col + 1 : 0;
        ctx_text(c, 1 + x, y + row, w - x, word, COL_REMOVED, 0);
        col = x + ww;
        p = e;
    }
}

/* Where a block's first line puts things: the next column as wide as its
 * widest entry (at most half the pane), the settings as wide as the widest
 * request's, in what is left -- on a toy lesson less 16 columns of text. */
static void batch_columns(const struct app *a, const struct screen_ctx *c, char next[][192],
                          struct batch_cols *k)
{
    const struct batch *b = &a->batch;
    int w = c->r.w;
    k->nw = k->set_w = 0;
    for (int i = 0; i < b->n; i++) {
        char set[160];
        batch_describe(&b->row[i], set, sizeof set);
        batch_next(a, &b->row[i], next[i], 192);
        k->nw = utf8_width(next[i]) > k->nw ? utf8_width(next[i]) : k->nw;
        k->set_w = utf8_width(set) > k->set_w ? utf8_width(set) : k->set_w;
    }
    if (k->nw > w / 2)
        k->nw = w / 2;
    k->text_between = b->toy;
    int room = w - k->nw - 4 - (b->toy ? 18 : 0);
    if (k->set_w > room)
        k->set_w = room;
}

void draw_batch(const struct app *a, const struct screen_ctx *c)
{
    const struct batch *b = &a->batch;
    batch_title(a, c);
    int h = c->r.h;
    int lines = h - 1 >= 2 * b->n ? 2 : 1;
    char next[BATCH_ROWS][192];
    struct batch_cols k;
    batch_columns(a, c, next, &k);
    int y = 1;
    for (int i = 0; i < b->n && y < h; i++, y += lines)
        batch_block(a, c, y, i, next[i], &k, y + lines <= h ? lines : 1);
    if (h - y >= 3)
        batch_paragraph(a, c, y + 1, h - y - 1);
}
