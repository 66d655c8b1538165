/* view_draws.c - the many draws of a toy step (D), in the cumulative pane's
 * room while they are on: each token's count beside what its probability
 * expects, N x final, and a bar of its share of the draws on the scale of
 * the probabilities' bars (a share of 1 fills the width), with the expected
 * share marked on it. The rows are in the probabilities' order, so each
 * token's count sits level with its probability in the pane to the left.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/view_int.h"
#include "report/report.h"
#include "base/utf8.h"

/* The columns: a count (" 10000", wider past 99,999 draws) and N x final
 * (" 10000.0"), one format down each. */
struct draws_cols {
    int count_w, expect_w, bx, bw;
};

static struct draws_cols draws_cols(const struct draws *d, int w)
{
    int digits = 1;
    for (long n = d->n; n >= 10; n /= 10)
        digits++;
    struct draws_cols k;
    k.count_w = (digits > 5 ? digits : 5) + 1;
    k.expect_w = k.count_w + 2;
    k.bx = 2 + TOKEN_W + k.count_w + k.expect_w;
    k.bw = w - 1 - k.bx;
    return k;
}

/* The row of the draws that counts token id, or -1 (ranked past the rows
 * counted one by one). */
static int draws_row(const struct draws *d, int id)
{
    for (int r = 0; r < d->rows; r++)
        if (d->id[r] == id)
            return r;
    return -1;
}

/* What the counts say about the sampler, from long to short: whether they
 * agree with the probabilities by Pearson's chi-square against its 99.9 %
 * point (report_chi2_words), or why there is no test (one outcome, too few
 * draws). Returns how many wordings w holds. */
static int draws_verdicts(const struct app *a, const struct screen_ctx *c,
                          char w[REPORT_CHI2_BREVITIES][192])
{
    const struct draws *d = &a->draws;
    const char *chi = glyph(c, "\u03c7\u00b2", "chi2");
    int k = 0;
    if (app_hidden(a)) {
        snprintf(w[k++], sizeof w[0], "counts with the solution");
    } else if (a->t.kept_count == 1 && a->t.greedy) {
        snprintf(w[k++], sizeof w[0], "greedy: every draw is the top token");
        snprintf(w[k++], sizeof w[0], "greedy: one outcome");
    } else if (a->t.kept_count == 1) {
        snprintf(w[k++], sizeof w[0], "one token kept: every draw is it");
        snprintf(w[k++], sizeof w[0], "one outcome");
    } else if (d->df_kept <= 0) {
        snprintf(w[k++], sizeof w[0], "too few draws for a %s test", chi);
        snprintf(w[k++], sizeof w[0], "no %s test", chi);
    } else {
        for (; k < REPORT_CHI2_BREVITIES; k++)
            report_chi2_words(d->chi2_kept, d->df_kept, chi, k, w[k], sizeof w[k]);
    }
    return k;
}

/* The verdict in as many words as room allows (report_fit). */
static void draws_verdict(const struct app *a, const struct screen_ctx *c, int room, char *buf,
                          size_t n)
{
    char w[REPORT_CHI2_BREVITIES][192];
    int k = draws_verdicts(a, c, w);
    const char *words[REPORT_CHI2_BREVITIES];
    for (int i = 0; i < k; i++)
        words[i] = w[i];
    utf8_copy(buf, n, report_fit(room, k, words));
}

/* Draws text from row y on, broken at spaces into lines of width w, if it
 * fits in rows rows; returns whether it did (nothing drawn if not). */
static int draws_wrapped(const struct screen_ctx *c, int y, int rows, int w, const char *text)
{
    char lines[8][192];
    int n = 0;
    lines[0][0] = '\0';
    for (const char *p = text; *p && n < 8;) {
        size_t len = strcspn(p, " ");
        char word[192];
        snprintf(word, sizeof word, "%.*s", (int)len, p);
        p += len + (p[len] == ' ');
        if (lines[n][0] && utf8_width(lines[n]) + 1 + utf8_width(word) > w && ++n < 8)
            lines[n][0] = '\0';
        if (n < 8) {
            if (lines[n][0])
                utf8_append(lines[n], sizeof lines[n], " ");
            utf8_append(lines[n], sizeof lines[n], word);
        }
    }
    if (n >= rows || n >= 8)
        return 0;
    for (int i = 0; i <= n; i++)
        ctx_text(c, 1, y + i, w, lines[i], COL_ACCENT, 0);
    return 1;
}

/* The verdict under the rows, in its longest wording that fits the rows
 * left (the title holds a short one). */
static void draws_verdict_below(const struct app *a, const struct screen_ctx *c, int y)
{
    char w[REPORT_CHI2_BREVITIES][192];
    int k = draws_verdicts(a, c, w);
    for (int i = 0; i < k && i < REPORT_CHI2_BREVITIES - 2; i++)
        if (draws_wrapped(c, y, c->r.h - y, c->r.w - 2, w[i]))
            return;
}

static void draws_title(const struct app *a, const struct screen_ctx *c)
{
    char count[32], left[64], right[160];
    draws_count_text(a->draws.n, count, sizeof count);
    snprintf(left, sizeof left, "Draws %s", count);
    int room = c->r.w - utf8_width(left) - 4;
    if (room >= 44) {
        snprintf(left, sizeof left, "Draws %s: count, N%sfinal", count, glyph(c, "\u00d7", "x"));
        room = c->r.w - utf8_width(left) - 4;
    }
    draws_verdict(a, c, room, right, sizeof right);
    pane_title(c, left, right);
}

/* One token's count, N x final, and the bar of its share with the
 * expected share marked. */
static void draws_line(const struct app *a, const struct screen_ctx *c, int y, int k, int kept,
                       const struct draws_cols *w)
{
    int bx = w->bx, bw = w->bw;
    const struct draws *d = &a->draws;
    long count = d->c_kept[k];
    double expect = d->n * d->p_kept[k];
    int col = kept ? COL_DEFAULT : COL_REMOVED, attr = kept ? 0 : ATTR_DIM;
    ctx_printf(c, 1 + TOKEN_W, y, w->count_w, col, attr, "%*ld", w->count_w, count);
    ctx_printf(c, 1 + TOKEN_W + w->count_w, y, w->expect_w, kept ? COL_ACCENT : COL_REMOVED, attr,
               "%*.1f", w->expect_w, expect);
    if (bw < 3 || !kept)
        return;
    ctx_bar(c, bx, y, (double)count / d->n * bw, COL_KEPT, 0);
    int mx = bx + (int)floor(d->p_kept[k] * bw);
    if (mx >= bx + bw)
        mx = bx + bw - 1;
    ctx_put(c, mx, y, ctx_glyph(c, 0x2502, '+'), COL_ACCENT, ATTR_BOLD);
}

void draw_draws(const struct app *a, const struct screen_ctx *c)
{
    const struct trace *t = &a->t;
    const struct draws *d = &a->draws;
    int hidden = app_hidden(a);
    draws_title(a, c);
    int ids[PANE_ROWS_MAX];
    int step = pane_step(a, c); /* the probabilities' rows, beside this pane */
    int n = pane_order(a, step > 1 ? t->vocab_size : c->r.h - 1, 0, ids);
    struct draws_cols w = draws_cols(d, c->r.w);
    long shown = 0;
    for (int i = 0; i < n; i++) {
        int y = 1 + i * step;
        const struct trace_row *row = &t->rows[t->rank_of[ids[i]]];
        draw_token(a, c, 1, y, row, !hidden);
        int k = draws_row(d, row->id);
        if (hidden || k < 0) {
            ctx_printf(c, 1 + TOKEN_W, y, w.count_w, COL_DEFAULT, 0, "%*s", w.count_w,
                       hidden ? "?" : "-");
            continue;
        }
        shown += d->c_kept[k];
        draws_line(a, c, y, k, row->removed_by == TRACE_KEPT, &w);
    }
    /* The tokens the pane has no row for, as the other panes' "... more". */
    int y = 1 + (n > 0 ? (n - 1) * step + 1 : 0); /* below the last token's row */
    if (n < t->vocab_size && n > 0 && y < c->r.h && !hidden) {
        char rest[32];
        draws_count_text(d->n - shown, rest, sizeof rest);
        ctx_printf(c, 1, y++, c->r.w - 2, COL_REMOVED, 0, "... %d more tokens: %s draws",
                   t->vocab_size - n, rest);
    }
    if (!hidden && y + 1 < c->r.h)
        draws_verdict_below(a, c, y + 1); /* a blank row between */
}
