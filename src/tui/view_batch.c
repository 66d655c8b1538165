/* view_batch.c - the batch view: BATCH_ROWS requests sampled together,
 * one a line (or two when there is room): its settings, the token it draws
 * next, and the end of its text.
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
    char *text = gen_shown_text(&w->g, 0, &len);
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
    char tok[96], pad[96];
    utf8_escape(vocab_token(&a->L.vocab, row->res.id), tok, sizeof tok);
    utf8_pad(tok, 12, 0, pad, sizeof pad);
    /* A draw from the tail is the lesson's point: show its tiny p as such. */
    double p = row->res.final;
    snprintf(next, n, p >= 1e-3 || p == 0.0 ? "%s p %.4f  %d kept" : "%s p %.1e  %d kept", pad, p,
             row->res.kept_count);
}

/* One request: its number and settings, what it does next (batch_next, in
 * a column nw wide), and its text so far -- on one line, or on two when the
 * pane has the room. */
static void batch_line(const struct app *a, const struct screen_ctx *c, int y, int r,
                       const char *next, int nw, int two_lines)
{
    int w = c->r.w;
    const struct batch_row *row = &a->batch.row[r];
    int sel = r == a->batch_sel, stopped = row->g.stop.rule != STOP_NONE;
    int attr = sel ? ATTR_REVERSE : 0;
    char set[96], text[1024];
    batch_describe(row, set, sizeof set);
    batch_text(row, text, sizeof text);
    ctx_fill(c, (struct rect){ 0, y, w, two_lines ? 2 : 1 }, ' ', COL_DEFAULT, attr);
    int col = ctx_printf(c, 0, y, w, sel ? COL_ACCENT : COL_DEFAULT, attr | ATTR_BOLD, "%c%d ",
                         sel ? '>' : ' ', r);
    int set_w = two_lines ? w - nw - 1 - col : 34;
    if (set_w > 0)
        ctx_text(c, col, y, set_w, set, COL_DEFAULT, attr);
    col += set_w > 0 ? set_w + 1 : 0;
    int nx = two_lines ? w - nw : col;
    ctx_text(c, nx, y, w - nx, next, stopped ? COL_REMOVED : COL_CHOSEN,
             attr | (stopped ? ATTR_DIM : ATTR_BOLD));
    int ty = two_lines ? y + 1 : y, tx = two_lines ? 4 : nx + nw + 1;
    int room = w - tx;
    if (room < 8)
        return;
    /* The newest text matters: cut from the front. */
    const char *t = text;
    int tw = utf8_width(t);
    if (tw > room)
        t = skip_cols(t, tw - room);
    ctx_text(c, tx, ty, room, t, COL_DEFAULT, attr);
}

void draw_batch(const struct app *a, const struct screen_ctx *c)
{
    const struct batch *b = &a->batch;
    char left[96], right[160];
    snprintf(left, sizeof left, "Batch of %d: one LM head call, one sampler call", b->n);
    if (b->head_ran)
        snprintf(right, sizeof right, "head %.1f ms  sampler %.3f ms", b->head_kernel_ms,
                 b->kernel_ms);
    else /* a setting changed: the same logits, sampled again */
        snprintf(right, sizeof right, "sampler %.3f ms, logits kept", b->kernel_ms);
    pane_title(c, left, right);
    int h = c->r.h;
    int two = h - 1 >= 2 * b->n, nw = 24;
    char next[BATCH_ROWS][192];
    for (int i = 0; i < b->n; i++) {
        batch_next(a, &b->row[i], next[i], sizeof next[i]);
        nw = utf8_width(next[i]) > nw ? utf8_width(next[i]) : nw;
    }
    if (nw > c->r.w / 2)
        nw = c->r.w / 2;
    for (int i = 0; i < b->n; i++) {
        int y = 1 + i * (two ? 2 : 1);
        if (y >= h)
            break;
        batch_line(a, c, y, i, next[i], nw, two && y + 1 < h);
    }
}
