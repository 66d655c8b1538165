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

/* The exp column's one format for the rows shown (report_column_style). */
#define EXP_W 9

/* One table row: rank, token, logit, exp (in the column's style), prob,
 * cum, kept, final -- or, while the draws are on, rank, token, logit, prob,
 * final, kept and how many draws came up with this token without and with
 * the filters (counts; NULL: not counted one by one) -- then a bar of prob
 * where there is room. */
static void big_row(const struct app *a, const struct screen_ctx *c, int y, int rank,
                    const struct trace_row *row, double logit, enum big_kind kind,
                    const long *counts, enum report_style exp_style)
{
    int d = digits_of(a), found = kind == ROW_FOUND;
    char tok[96], pad[96], lg[32], pr[32], cu[32], fi[32], ex[32];
    utf8_escape(vocab_token(&a->L.vocab, row->id), tok, sizeof tok);
    utf8_pad(tok, 12, 0, pad, sizeof pad);
    report_number(lg, sizeof lg, logit, d);
    report_number(pr, sizeof pr, row->prob, d);
    report_number(cu, sizeof cu, row->cum, d);
    report_number(fi, sizeof fi, row->final, d);
    report_number_as(ex, sizeof ex, row->exp, d, exp_style);
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
            draws_count_text(counts[0], c1, sizeof c1);
            draws_count_text(counts[1], c2, sizeof c2);
        }
        snprintf(line, sizeof line, "%7d %s %8s %7s %7s %-6s %7s %8s", rank + 1, pad, lg, pr, fi,
                 kc, c1, c2);
    } else {
        snprintf(line, sizeof line, "%7d %s %8s %*s %7s %7s %-6s %7s", rank + 1, pad, lg, EXP_W, ex,
                 pr, cu, kc, fi);
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
        /* The row from what the draws found for the token, its rank in
         * their rank order among them: every column a table with the draws
         * shows (not cum nor exp), where report_row_of would count the
         * token's rank over the whole vocabulary again, 8 ms a frame for
         * eight rows at 128,256. */
        const struct draws_token *k = &dr->rarest_plain[i];
        struct trace_row row = { .id = k->id,
                                 .removed_by = k->removed_by,
                                 .prob = k->prob,
                                 .final = k->final,
                                 .adjusted = NAN,
                                 .exp = NAN,
                                 .cum = NAN,
                                 .cum_final = NAN };
        long counts[2] = { k->plain, k->kept };
        big_row(a, c, y + 1 + i, k->rank, &row, source_logit(&a->source, a->cur_step, row.id),
                ROW_RARE, counts, REPORT_EXPONENT);
    }
}

/* The line under the top rows: what the rest of the vocabulary holds, and
 * while the draws are on how many of them came from there, in as many words
 * as the width allows. */
static void big_tail(const struct app *a, const struct screen_ctx *c, int y, int rows)
{
    const struct trace *t = &a->t;
    const struct draws *dr = &a->draws;
    int count, kept;
    double mass;
    report_tail(t, rows, &count, &mass, &kept);
    char n[32], pct[32], k[32], w[4][256];
    draws_count_text(count, n, sizeof n);
    draws_count_text(kept, k, sizeof k);
    report_percent(pct, sizeof pct, mass, digits_of(a));
    snprintf(w[0], sizeof w[0], "  ... %s more tokens hold %s of the probability, %s of them kept",
             n, pct, k);
    snprintf(w[1], sizeof w[1], "  ... %s more tokens hold %s, %s kept", n, pct, k);
    if (a->draws_ok) {
        long tp = dr->tail_plain, tk = dr->tail_kept;
        for (int r = rows; r < dr->rows; r++)
            tp += dr->c_plain[r], tk += dr->c_kept[r];
        char dn[32], ptp[32], ptk[32], more[192];
        draws_count_text(dr->n, dn, sizeof dn);
        draws_count_text(tp, ptp, sizeof ptp);
        draws_count_text(tk, ptk, sizeof ptk);
        snprintf(more, sizeof more, "; %s of %s draws came from them (%s with the filters)", ptp,
                 dn, ptk);
        utf8_append(w[0], sizeof w[0], more);
        snprintf(more, sizeof more, "; %s of %s draws (%s filtered)", ptp, dn, ptk);
        utf8_append(w[1], sizeof w[1], more);
    }
    snprintf(w[2], sizeof w[2], "  ... %s more: %s, %s kept", n, pct, k);
    snprintf(w[3], sizeof w[3], "  ... %s more", n);
    const char *words[] = { w[0], w[1], w[2], w[3] };
    ctx_text(c, 0, y, c->r.w, report_fit(c->r.w, 4, words), COL_ACCENT, ATTR_BOLD);
}

/* The exp column's style from the values it shows: the top rows and the
 * found token's row (the rarest drawn show no exp). */
static enum report_style big_exp_style(const struct app *a, int rows, const struct trace_row *found)
{
    double v[PANE_ROWS_MAX + 1];
    int n = 0;
    for (int k = 0; k < rows && n < PANE_ROWS_MAX; k++)
        v[n++] = a->t.rows[k].exp;
    if (found)
        v[n++] = found->exp;
    return report_column_style(v, n, digits_of(a), EXP_W);
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
    struct trace_row row;
    int rank, found = a->find_id >= 0 && report_row_of(t, a->find_id, &row, &rank) == 0;
    if (found)
        rows--;
    /* While the draws are on, the rarest tokens drawn take rows at the end. */
    int rare = a->draws_ok ? rarest_rows(a, c->r.h, rows - 1) : 0;
    if (rare)
        rows -= 1 + rare;
    if (rows > t->n_rows)
        rows = t->n_rows;
    enum report_style style = big_exp_style(a, rows, found ? &row : NULL);
    const struct draws *dr = &a->draws;
    for (int k = 0; k < rows; k++) {
        long counts[2] = { k < dr->rows ? dr->c_plain[k] : 0, k < dr->rows ? dr->c_kept[k] : 0 };
        big_row(a, c, 1 + k, k, &t->rows[k], t->rows[k].logit, ROW_TOP,
                k < dr->rows ? counts : NULL, style);
    }
    int y = 1 + (rows > 0 ? rows : 0);
    if (rows > 0 && rows < t->vocab_size)
        big_tail(a, c, y++, rows);
    if (found)
        big_row(a, c, y++, rank, &row, source_logit(&a->source, a->cur_step, row.id), ROW_FOUND,
                NULL, style);
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
    char mid[96], all[32];
    draws_count_text(h.n, all, sizeof all);
    snprintf(mid, sizeof mid, "z' of all %s tokens (log scale): sd %.2f", all, h.sd);
    int mw = utf8_width(mid);
    if (mw < bins - 12)
        ctx_text(c, 1 + (bins - mw) / 2, y + rows, mw, mid, COL_REMOVED, 0);
}

/* What the filters removed and what they kept, each count with its unit
 * and its mass as a percent; shorter wordings drop words, never digits. */
static void stats_filters(const struct app *a, const struct screen_ctx *c, int y)
{
    const struct trace *t = &a->t;
    int room = c->r.w - 2, d = digits_of(a);
    char w[3][768], n[32], pct[32];
    draws_count_text(t->kept_count, n, sizeof n);
    report_percent(pct, sizeof pct, t->kept_mass, d);
    for (int b = 0; b < 3; b++) {
        int len = 0;
        w[b][0] = '\0';
        for (int k = 0; k < t->n_stages; k++) {
            const struct stage_report *st = &t->stages[k];
            if (!stage_cuts(&a->cur.sampler, st->stage) || !st->active)
                continue;
            char one[160];
            report_removed_words(report_removed_name((int)st->stage), st->removed, st->removed_mass,
                                 d, b, one, sizeof one);
            len += snprintf(w[b] + len, sizeof w[b] - (size_t)len, "%s%s", len ? ", " : "", one);
        }
        if (!len) {
            draws_count_text(t->vocab_size, n, sizeof n);
            snprintf(w[b], sizeof w[b],
                     b ? "no filter: all %s tokens can be drawn"
                       : "no filter is on: each of the %s tokens can be drawn",
                     n);
        } else if (b == 0) {
            snprintf(w[b] + len, sizeof w[b] - (size_t)len, "; kept %s %s holding %s", n,
                     t->kept_count == 1 ? "token" : "tokens", pct);
        } else {
            snprintf(w[b] + len, sizeof w[b] - (size_t)len,
                     b == 1 ? "; kept %s holding %s" : "; kept %s (%s)", n, pct);
        }
    }
    const char *words[] = { w[0], w[1], w[2] };
    ctx_text(c, 1, y, room, report_fit(room, 3, words), COL_DEFAULT, 0);
}

/* The token drawn: how it was chosen (the seeded draw, greedy, or taken
 * from the text already generated), its rank and probabilities, and the
 * entropy of the step as a number of equally likely tokens. */
static void stats_choice(const struct app *a, const struct screen_ctx *c, int y,
                         const struct trace_row *row, int rank)
{
    const struct trace *t = &a->t;
    const struct app_entry *en = app_shown_entry(a);
    int room = c->r.w - 2;
    const char *verb = en          ? "the text took"
                       : t->greedy ? "greedy picked"
                                   : "the seeded draw picked";
    const char *head = en ? "taken" : t->greedy ? "greedy" : "seeded draw";
    char tok[96], w[5][256];
    utf8_escape(vocab_token(&a->L.vocab, t->choice.id), tok, sizeof tok);
    int r = rank + 1;
    snprintf(w[0], sizeof w[0],
             "%s %s (rank %d, p %.4f, after the filters %.4f); entropy %.3f nats, like %.1f "
             "equally likely tokens",
             verb, tok, r, row->prob, row->final, t->entropy, exp(t->entropy));
    snprintf(w[1], sizeof w[1], "%s %s (rank %d, p %.4f, final %.4f); entropy %.3f nats", verb, tok,
             r, row->prob, row->final, t->entropy);
    snprintf(w[2], sizeof w[2], "%s %s (rank %d, p %.4f, final %.4f)", verb, tok, r, row->prob,
             row->final);
    snprintf(w[3], sizeof w[3], "%s: %s, rank %d, p %.4f, final %.4f", head, tok, r, row->prob,
             row->final);
    snprintf(w[4], sizeof w[4], "%s rank %d p %.4f", tok, r, row->prob);
    const char *words[] = { w[0], w[1], w[2], w[3], w[4] };
    ctx_text(c, 1, y, room, report_fit(room, 5, words), COL_DEFAULT, 0);
}

/* The many draws: how many different tokens came up, then what the
 * chi-square says of them against the probabilities, in words. */
static int stats_draws(const struct app *a, const struct screen_ctx *c, int y)
{
    const struct draws *dr = &a->draws;
    int room = c->r.w - 2;
    char n[32], dp[32], dk[32], w[2][160];
    draws_count_text(dr->n, n, sizeof n);
    draws_count_text(dr->distinct_plain, dp, sizeof dp);
    draws_count_text(dr->distinct_kept, dk, sizeof dk);
    snprintf(w[0], sizeof w[0], "%s draws came up with %s different tokens (%s with the filters)",
             n, dp, dk);
    snprintf(w[1], sizeof w[1], "%s draws: %s tokens (%s filtered)", n, dp, dk);
    const char *words[] = { w[0], w[1] };
    ctx_text(c, 1, y++, room, report_fit(room, 2, words), COL_ACCENT, 0);
    if (y >= c->r.h || dr->df_plain <= 0)
        return y;
    char v[REPORT_CHI2_BREVITIES][192];
    const char *verdicts[REPORT_CHI2_BREVITIES];
    for (int b = 0; b < REPORT_CHI2_BREVITIES; b++) {
        report_chi2_words(dr->chi2_plain, dr->df_plain, glyph(c, "\u03c7\u00b2", "chi2"), b, v[b],
                          sizeof v[b]);
        verdicts[b] = v[b];
    }
    ctx_text(c, 1, y++, room, report_fit(room, REPORT_CHI2_BREVITIES, verdicts), COL_ACCENT, 0);
    return y;
}

static void big_stats(const struct app *a, const struct screen_ctx *c)
{
    const struct trace *t = &a->t;
    int y = 0;
    stats_filters(a, c, y++);
    struct trace_row row;
    int rank;
    if (y < c->r.h && report_row_of(t, t->choice.id, &row, &rank) == 0)
        stats_choice(a, c, y++, &row, rank);
    if (a->draws_ok && y < c->r.h)
        y = stats_draws(a, c, y);
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
        stats_h += 2; /* the draws' line and their verdict */
    struct screen_ctx table = ctx_sub(c, (struct rect){ 0, 0, w, h - stats_h });
    big_table(a, &table);
    if (stats_h) {
        struct screen_ctx stats = ctx_sub(c, (struct rect){ 0, h - stats_h, w, stats_h });
        big_stats(a, &stats);
    }
}
