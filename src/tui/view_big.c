/* view_big.c - a full-size step (a model lesson's vocabulary): the table
 * of the top tokens and the tail, with the draws when they are on, then
 * what the filters cut, the drawn token, and a histogram of every z'.
 */
#include <math.h>
#include <stdio.h>

#include "tui/view_int.h"
#include "report/report.h"
#include "base/utf8.h"

/* What a table row is: one of the top rows, the token found with '/', or
 * one of the rarest tokens drawn (its probabilities in powers of ten). */
enum big_kind { ROW_TOP, ROW_FOUND, ROW_RARE };

/* One table row: rank, token, logit, exp, prob, cum, kept, final -- or,
 * while the draws are on, rank, token, logit, prob, final, kept and how many
 * draws came up with this token without and with the filters (counts; NULL:
 * not counted one by one) -- then a bar of prob where there is room. */
static void big_row(const struct app *a, const struct screen_ctx *c, int y, int rank,
                    const struct trace_row *row, double logit, enum big_kind kind,
                    const long *counts)
{
    int d = digits_of(a), found = kind == ROW_FOUND;
    char tok[96], pad[96], lg[32], pr[32], cu[32], fi[32];
    utf8_escape(vocab_token(&a->L.vocab, row->id), tok, sizeof tok);
    utf8_pad(tok, 12, 0, pad, sizeof pad);
    report_number(lg, sizeof lg, logit, d);
    report_number(pr, sizeof pr, row->prob, d);
    report_number(cu, sizeof cu, row->cum, d);
    report_number(fi, sizeof fi, row->final, d);
    if (kind == ROW_RARE) { /* rounded to 4 places every one would read 0.0000 */
        snprintf(pr, sizeof pr, "%.1e", row->prob);
        snprintf(fi, sizeof fi, row->final > 0 ? "%.1e" : "0", row->final);
    }
    int kept = row->removed_by == TRACE_KEPT;
    const char *kc = kept ? "yes" : report_removed_name(row->removed_by);
    int col = kept ? COL_DEFAULT : COL_REMOVED, attr = kept ? 0 : ATTR_DIM;
    if (a->t.choice.id == row->id)
        col = COL_CHOSEN, attr = ATTR_BOLD | (is_chosen(a, row->id) ? ATTR_REVERSE : 0);
    if (found)
        col = COL_ACCENT, attr = ATTR_BOLD;
    char line[512];
    if (a->draws_ok) {
        char c1[24] = "", c2[24] = "";
        if (counts) {
            snprintf(c1, sizeof c1, "%ld", counts[0]);
            snprintf(c2, sizeof c2, "%ld", counts[1]);
        }
        snprintf(line, sizeof line, "%7d %s %8s %7s %7s %-6s %7s %8s", rank + 1, pad, lg, pr, fi,
                 kc, c1, c2);
    } else {
        snprintf(line, sizeof line, "%7d %s %8s %9.3e %7s %7s %-6s %7s", rank + 1, pad, lg,
                 row->exp, pr, cu, kc, fi);
    }
    int used = ctx_text(c, 0, y, c->r.w, line, col, attr);
    int bar = c->r.w - used - 2;
    if (bar > 2) /* whole cells only: prob <= 1 keeps it within bar */
        ctx_bar(c, used + 1, y, floor(row->prob * bar), kept ? COL_KEPT : COL_REMOVED, 0);
}

/* How many of the rarest tokens drawn get rows under a table of h rows
 * whose top rows show ranks below top: those ranked at top or past it, a
 * fifth of the table at most, and one at least. */
static int rarest_rows(const struct app *a, int h, int top)
{
    const struct draws *dr = &a->draws;
    int n = 0, most = (h - 2) / 5 > 1 ? (h - 2) / 5 : 1;
    while (n < dr->n_rarest_plain && dr->rarest_plain[n].rank >= top && n < most)
        n++;
    return n;
}

/* The strangest tokens the draws came up with (draws.h's rarest, without
 * the filters): the least likely first, each as a row of the table, under a
 * line that says what they are. */
static void big_rarest(const struct app *a, const struct screen_ctx *c, int y, int n)
{
    const struct draws *dr = &a->draws;
    char line[128];
    if (n == 1)
        snprintf(line, sizeof line,
                 "  the least likely of the %ld tokens drawn:", dr->distinct_plain);
    else
        snprintf(line, sizeof line, "  the %d least likely of the %ld tokens drawn:", n,
                 dr->distinct_plain);
    ctx_text(c, 0, y, c->r.w, line, COL_ACCENT, ATTR_BOLD);
    for (int i = 0; i < n; i++) {
        const struct draws_token *k = &dr->rarest_plain[i];
        struct trace_row row;
        int rank;
        if (report_row_of(&a->t, k->id, &row, &rank) < 0)
            continue;
        long counts[2] = { k->plain, k->kept };
        big_row(a, c, y + 1 + i, rank, &row, source_logit(&a->source, a->cur_step, row.id),
                ROW_RARE, counts);
    }
}

static void big_table(const struct app *a, const struct screen_ctx *c)
{
    const struct trace *t = &a->t;
    pane_title(c,
               a->draws_ok ? "   rank token           logit    prob   final kept     drawn "
                             "filtered"
                           : "   rank token           logit       exp    prob     cum kept     "
                             "final",
               "");
    if (app_hidden(a))
        return;
    int rows = c->r.h - 2; /* the title and the tail line */
    int found = a->find_id >= 0;
    if (found)
        rows--;
    /* While the draws are on, the rarest tokens drawn take rows at the end. */
    int rare = a->draws_ok ? rarest_rows(a, c->r.h, rows - 1) : 0;
    if (rare)
        rows -= 1 + rare;
    if (rows > t->n_rows)
        rows = t->n_rows;
    const struct draws *dr = &a->draws;
    for (int k = 0; k < rows; k++) {
        long counts[2] = { k < dr->rows ? dr->c_plain[k] : 0, k < dr->rows ? dr->c_kept[k] : 0 };
        big_row(a, c, 1 + k, k, &t->rows[k], t->rows[k].logit, ROW_TOP,
                k < dr->rows ? counts : NULL);
    }
    int y = 1 + (rows > 0 ? rows : 0);
    if (rows > 0 && rows < t->vocab_size) {
        int count, kept;
        double mass;
        report_tail(t, rows, &count, &mass, &kept);
        char line[256];
        int n =
            snprintf(line, sizeof line, "  ... %d more tokens: p %.4f, %d kept", count, mass, kept);
        if (a->draws_ok) {
            long tp = dr->tail_plain, tk = dr->tail_kept;
            for (int k = rows; k < dr->rows; k++)
                tp += dr->c_plain[k], tk += dr->c_kept[k];
            snprintf(line + n, sizeof line - (size_t)n, "; drawn %ld, filtered %ld", tp, tk);
        }
        ctx_text(c, 0, y, c->r.w, line, COL_ACCENT, ATTR_BOLD);
        y++;
    }
    struct trace_row row;
    int rank;
    if (found && report_row_of(t, a->find_id, &row, &rank) == 0) {
        big_row(a, c, y, rank, &row, source_logit(&a->source, a->cur_step, row.id), ROW_FOUND,
                NULL);
        y++;
    }
    if (rare)
        big_rarest(a, c, y, rarest_rows(a, c->r.h, rows));
}

/* The histogram of every z' in rows rows of eighth blocks, on a log scale
 * so that a bin of one token still shows. */
static void big_hist(const struct app *a, const struct screen_ctx *c, int y, int rows)
{
    int w = c->r.w;
    struct draws_hist h;
    int bins = w - 2 < DRAWS_HIST_BINS_MAX ? w - 2 : DRAWS_HIST_BINS_MAX;
    if (bins < 8 || rows < 1 || draws_histogram(&a->t, bins, &h) < 0 || h.n == 0)
        return;
    double top = log1p((double)h.count[0]);
    for (int b = 1; b < bins; b++)
        top = log1p((double)h.count[b]) > top ? log1p((double)h.count[b]) : top;
    static const uint32_t EIGHTHS[] = { ' ',    0x2581, 0x2582, 0x2583, 0x2584,
                                        0x2585, 0x2586, 0x2587, 0x2588 };
    static const char ASCII[] = " ..::||##";
    double choice_z = a->t.fz ? a->t.fz[a->t.choice.id] : NAN;
    int choice_bin = isfinite(choice_z) ? draws_bin(&h, choice_z) : -1;
    for (int b = 0; b < bins; b++) {
        double level = top > 0 ? log1p((double)h.count[b]) / top * rows * 8 : 0;
        if (h.count[b] > 0 && level < 1)
            level = 1;
        int col = b == choice_bin ? COL_CHOSEN : COL_KEPT;
        for (int r = 0; r < rows; r++) {
            int fill = (int)level - (rows - 1 - r) * 8;
            fill = fill < 0 ? 0 : fill > 8 ? 8 : fill;
            ctx_put(c, 1 + b, y + r, ctx_glyph(c, EIGHTHS[fill], ASCII[fill]), col, 0);
        }
    }
    char lo[32], hi[32];
    snprintf(lo, sizeof lo, "%.1f", h.lo);
    snprintf(hi, sizeof hi, "%.1f", h.hi);
    ctx_text(c, 1, y + rows, w, lo, COL_REMOVED, 0);
    int hw = utf8_width(hi);
    ctx_text(c, 1 + bins - hw, y + rows, hw, hi, COL_REMOVED, 0);
    char mid[96];
    snprintf(mid, sizeof mid, "z' of all %ld tokens (log): sd %.2f", h.n, h.sd);
    int mw = utf8_width(mid);
    if (mw < bins - 12)
        ctx_text(c, 1 + (bins - mw) / 2, y + rows, mw, mid, COL_REMOVED, 0);
}

static void big_stats(const struct app *a, const struct screen_ctx *c)
{
    const struct trace *t = &a->t;
    char line[512];
    int n = 0;
    for (int k = 0; k < t->n_stages; k++) {
        const struct stage_report *st = &t->stages[k];
        if (!stage_cuts(&a->cur.sampler, st->stage) || !st->active)
            continue;
        n += snprintf(line + n, sizeof line - (size_t)n, "%s%s -%d (p %.4f)", n ? "  " : "",
                      report_removed_name((int)st->stage), st->removed, st->removed_mass);
    }
    if (!n)
        snprintf(line, sizeof line, "no filter is on: each of the %d tokens can be drawn",
                 t->vocab_size);
    else
        snprintf(line + n, sizeof line - (size_t)n, "  kept %d, p %.4f", t->kept_count,
                 t->kept_mass);
    int y = 0;
    ctx_text(c, 1, y++, c->r.w - 2, line, COL_DEFAULT, 0);
    struct trace_row row;
    int rank;
    if (y < c->r.h && report_row_of(t, t->choice.id, &row, &rank) == 0) {
        const struct app_entry *en = app_shown_entry(a);
        char tok[96];
        utf8_escape(vocab_token(&a->L.vocab, t->choice.id), tok, sizeof tok);
        snprintf(line, sizeof line, "%s %s: rank %d, p %.4f, final %.4f  H %.3f nats, e^H %.1f",
                 en          ? "drawn"
                 : t->greedy ? "greedy takes"
                             : "seed draws",
                 tok, rank + 1, row.prob, row.final, t->entropy, exp(t->entropy));
        ctx_text(c, 1, y++, c->r.w - 2, line, COL_DEFAULT, 0);
    }
    if (a->draws_ok && y < c->r.h) {
        const struct draws *dr = &a->draws;
        snprintf(line, sizeof line,
                 "%d draws: %ld tokens seen (%ld with filters), chi2 %.1f on %d df "
                 "(limit %.1f)",
                 dr->n, dr->distinct_plain, dr->distinct_kept, dr->chi2_plain, dr->df_plain,
                 draws_chi2_limit(dr->df_plain));
        ctx_text(c, 1, y++, c->r.w - 2, line, COL_ACCENT, 0);
    }
    int rows = c->r.h - y - 1;
    if (rows > 3)
        rows = 3;
    big_hist(a, c, y, rows);
}

/* A full-size step: a table of the top tokens and the tail, then what the
 * rest of the vocabulary holds. */
void draw_big(const struct app *a, const struct screen_ctx *c)
{
    int w = c->r.w, h = c->r.h;
    int stats_h = h >= 16 ? 6 : h >= 12 ? 4 : 0;
    if (a->draws_ok && stats_h)
        stats_h++;
    struct screen_ctx table = ctx_sub(c, (struct rect){ 0, 0, w, h - stats_h });
    big_table(a, &table);
    if (stats_h) {
        struct screen_ctx stats = ctx_sub(c, (struct rect){ 0, h - stats_h, w, stats_h });
        big_stats(a, &stats);
    }
}
