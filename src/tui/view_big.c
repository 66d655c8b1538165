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
#define EXP_W     9
#define TAIL_RANK 20 /* the tail line: every token after this rank */

/* How the table's columns are written: the exp column's one format, and
 * on big mode's first screen (the scores) the range of every z' of the
 * vocabulary, in which each row's bar places its z'. */
struct big_cols {
    enum report_style exp;
    int scores;
    double lo, hi;
};

/* One table row: rank, token, logit, exp (in the column's style), prob,
 * cum, kept, final -- or, while the draws are on, rank, token, logit, prob,
 * final, kept and how many draws came up with this token without and with
 * the filters (counts; NULL: not counted one by one) -- then a bar of prob
 * where there is room. */
static void big_row(const struct app *a, const struct screen_ctx *c, int y, int rank,
                    const struct trace_row *row, double logit, enum big_kind kind,
                    const long *counts, const struct big_cols *k)
{
    int d = digits_of(a), found = kind == ROW_FOUND;
    char tok[96], pad[96], lg[32], pr[32], cu[32], fi[32], ex[32], zp[32];
    utf8_escape(vocab_token(&a->L.vocab, row->id), tok, sizeof tok);
    utf8_pad(tok, 12, 0, pad, sizeof pad);
    report_number(lg, sizeof lg, logit, d);
    report_number(pr, sizeof pr, row->prob, d);
    report_number(cu, sizeof cu, row->cum, d);
    report_number(fi, sizeof fi, row->final, d);
    report_number_as(ex, sizeof ex, row->exp, d, k->exp);
    report_number(zp, sizeof zp, row->adjusted, d);
    if (kind == ROW_RARE) { /* rounded to 4 places every one would read 0.0000 */
        snprintf(pr, sizeof pr, "%.1e", row->prob);
        snprintf(fi, sizeof fi, row->final > 0 ? "%.1e" : "0", row->final);
    }
    int kept = row->removed_by == TRACE_KEPT;
    const char *kc = kept ? "yes" : trace_removed_name(row->removed_by);
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
    } else if (k->scores) {
        snprintf(line, sizeof line, "%7d %s %8s %8s %*s %-6s", rank + 1, pad, lg, zp, EXP_W, ex,
                 kc);
    } else {
        snprintf(line, sizeof line, "%7d %s %8s %*s %7s %7s %-6s %7s", rank + 1, pad, lg, EXP_W, ex,
                 pr, cu, kc, fi);
    }
    int used = ctx_text(c, 0, y, c->r.w, line, col, attr);
    int bar = c->r.w - used - 2;
    /* The bar: prob, or on the scores' screen where z' sits between the
     * lowest and the highest z' of the vocabulary (both within [0, 1], so
     * whole cells keep it within bar). */
    double len = row->prob;
    if (k->scores)
        len = k->hi > k->lo ? fmin(fmax((row->adjusted - k->lo) / (k->hi - k->lo), 0.0), 1.0) : 0.0;
    if (bar > 2)
        ctx_bar(c, used + 1, y, floor(len * bar), kept ? COL_KEPT : COL_REMOVED, 0);
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
         * shows (not cum nor exp), where trace_row_of would count the
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
        const struct big_cols cols = { .exp = REPORT_EXPONENT };
        big_row(a, c, y + 1 + i, k->rank, &row, source_logit(&a->source, a->cur_step, row.id),
                ROW_RARE, counts, &cols);
    }
}

/* The ranks (1-based, inclusive) a band of the table's rows covers, what
 * they hold, and how many of the draws landed there (plain, filtered). */
struct band {
    int first, last, count, kept;
    double mass;
    long plain, filt;
};

/* The band of 0-based ranks from..to-1 (to = V: the whole tail). */
static void band_of(const struct app *a, int from, int to, struct band *b)
{
    const struct trace *t = &a->t;
    const struct draws *dr = &a->draws;
    int c2 = 0, k2 = 0;
    double m2 = 0.0;
    trace_tail(t, from, &b->count, &b->mass, &b->kept);
    if (to < t->vocab_size)
        trace_tail(t, to, &c2, &m2, &k2);
    b->count -= c2, b->kept -= k2, b->mass = fmax(b->mass - m2, 0.0);
    b->first = from + 1, b->last = to;
    b->plain = b->filt = 0;
    if (to >= t->vocab_size) /* below the rows the draws count one by one */
        b->plain = dr->tail_plain, b->filt = dr->tail_kept, to = dr->rows;
    for (int r = from; r < to && r < dr->rows; r++)
        b->plain += dr->c_plain[r], b->filt += dr->c_kept[r];
}

/* The words of a band's line, widest first: what it holds, and while the
 * draws are on how many of them landed there, which narrower lines keep
 * longest (about 100 of the 10,000 draws is the tail line's point). */
static void band_words(const struct app *a, const struct band *b, int tail, char w[5][256])
{
    char n[32], pct[32], k[32], r1[32], r2[32], what[96], lab[112], dn[32], tp[32], tk[32];
    draws_count_text(b->count, n, sizeof n);
    draws_count_text(b->kept, k, sizeof k);
    draws_count_text(b->first - 1, r1, sizeof r1);
    draws_count_text(b->last, r2, sizeof r2);
    report_percent(pct, sizeof pct, b->mass, digits_of(a));
    if (tail)
        snprintf(what, sizeof what, "%s more tokens (after rank %s)", n, r1);
    else
        snprintf(what, sizeof what, "ranks %d to %s", b->first, r2);
    snprintf(w[0], sizeof w[0], "  ... %s hold %s of the probability, %s of them kept", what, pct,
             k);
    snprintf(w[1], sizeof w[1], "  ... %s hold %s, %s kept", what, pct, k);
    snprintf(w[2], sizeof w[2], "  ... %s: %s, %s kept", what, pct, k);
    snprintf(lab, sizeof lab, "%s%s", tail ? n : what, tail ? " more" : "");
    snprintf(w[3], sizeof w[3], "  ... %s: %s", lab, pct);
    snprintf(w[4], sizeof w[4], "  ... %s", lab);
    if (!a->draws_ok)
        return;
    draws_count_text(a->draws.n, dn, sizeof dn);
    draws_count_text(b->plain, tp, sizeof tp);
    draws_count_text(b->filt, tk, sizeof tk);
    char more[3][160];
    snprintf(more[0], sizeof more[0], "; %s of %s draws came from them (%s with the filters)", tp,
             dn, tk);
    snprintf(more[1], sizeof more[1], "; %s of %s draws (%s filtered)", tp, dn, tk);
    snprintf(more[2], sizeof more[2], ", %s of %s draws", tp, dn);
    utf8_append(w[0], 256, more[0]);
    utf8_append(w[1], 256, more[1]);
    snprintf(w[2], 256, "  ... %s: %s, %s of %s draws", what, pct, tp, dn);
    snprintf(w[3], 256, "  ... %s: %s, %s draws", lab, pct, tp);
}

/* One band's line, in as many words as the width allows. */
static void band_line(const struct app *a, const struct screen_ctx *c, int y, int from, int to)
{
    struct band b;
    char w[5][256];
    band_of(a, from, to, &b);
    band_words(a, &b, to >= a->t.vocab_size, w);
    const char *words[] = { w[0], w[1], w[2], w[3], w[4] };
    ctx_text(c, 0, y, c->r.w, report_fit(c->r.w, 5, words), COL_ACCENT, ATTR_BOLD);
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

/* The title of the table's columns, and the range of z' the scores'
 * bars need (big mode's first screen: the logits and the exponentials). */
static void big_columns(const struct app *a, const struct screen_ctx *c, struct big_cols *k)
{
    struct draws_hist h;
    k->scores = a->big == 1 && !a->draws_ok && draws_histogram(&a->t, 8, &h) == 0 && h.n > 0;
    if (k->scores)
        k->lo = h.lo, k->hi = h.hi;
    pane_title(c,
               a->draws_ok ? "   rank token           logit    prob   final kept     drawn "
                             "filtered"
               : k->scores ? "   rank token           logit       z'       exp kept    "
                             "z' among all, from the lowest to the highest"
                           : "   rank token           logit       exp    prob     cum kept     "
                             "final",
               "");
}

static void big_table(const struct app *a, const struct screen_ctx *c)
{
    const struct trace *t = &a->t;
    struct big_cols cols = { 0 };
    big_columns(a, c, &cols);
    if (app_hidden(a))
        return;
    int rows = c->r.h - 2; /* the title and the tail line */
    struct trace_row row;
    int rank, found = a->find_id >= 0 && trace_row_of(t, a->find_id, &row, &rank) == 0;
    if (found)
        rows--;
    /* While the draws are on, the rarest tokens drawn take rows at the end. */
    int rare = a->draws_ok ? rarest_rows(a, c->r.h, rows - 1) : 0;
    if (rare)
        rows -= 1 + rare;
    /* The tail starts after rank TAIL_RANK on every screen, so that a
     * laptop and the projector show the same share; a screen with fewer
     * rows says what the ranks it cannot show hold, on a line of their own. */
    int cut = TAIL_RANK < t->n_rows ? TAIL_RANK : t->n_rows;
    if (rows > cut)
        rows = cut;
    int band = rows > 1 && rows < cut;
    rows -= band;
    cols.exp = big_exp_style(a, rows, found ? &row : NULL);
    const struct draws *dr = &a->draws;
    for (int k = 0; k < rows; k++) {
        long counts[2] = { k < dr->rows ? dr->c_plain[k] : 0, k < dr->rows ? dr->c_kept[k] : 0 };
        big_row(a, c, 1 + k, k, &t->rows[k], t->rows[k].logit, ROW_TOP,
                k < dr->rows ? counts : NULL, &cols);
    }
    int y = 1 + (rows > 0 ? rows : 0);
    if (band)
        band_line(a, c, y++, rows, cut);
    if (rows > 0 && cut < t->vocab_size)
        band_line(a, c, y++, cut, t->vocab_size);
    if (found)
        big_row(a, c, y++, rank, &row, source_logit(&a->source, a->cur_step, row.id), ROW_FOUND,
                NULL, &cols);
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

/* The filters' part of the line at brevity b: each active cut with what
 * it removed (from b 3 on only those that removed something; at 4 their
 * total alone). Returns the length written. */
static int filters_words(const struct app *a, int b, int d, char *w, size_t n)
{
    const struct trace *t = &a->t;
    int len = 0, total = 0, any = 0;
    double mass = 0.0;
    for (int k = 0; k < t->n_stages; k++) {
        const struct stage_report *st = &t->stages[k];
        if (!stage_cuts(&a->cur.sampler, st->stage) || !st->active)
            continue;
        any = 1;
        if (b >= 3 && !st->removed)
            continue;
        total += st->removed;
        mass += st->removed_mass;
        if (b == 4)
            continue;
        char one[160];
        /* the stage's own name: the kept column's short word ("typ-p")
         * reads as a code in a sentence */
        report_removed_words(stage_name(st->stage), st->removed, st->removed_mass, d, b < 3 ? b : 2,
                             one, sizeof one);
        len += snprintf(w + len, n - (size_t)len, "%s%s", len ? ", " : "", one);
    }
    if (b == 4 && total > 0) {
        char one[160];
        report_removed_words("the filters", total, mass, d, 2, one, sizeof one);
        len = snprintf(w, n, "%s", one);
    }
    if (any && len == 0) /* on, but nothing to remove here */
        len = snprintf(w, n, "the filters removed nothing");
    return len;
}

/* What the filters removed and what they kept, each count with its unit
 * and its mass as a percent; shorter wordings drop words, never digits. */
static void stats_filters(const struct app *a, const struct screen_ctx *c, int y)
{
    const struct trace *t = &a->t;
    int room = c->r.w - 2, d = digits_of(a);
    char w[5][768], n[32], pct[32];
    report_percent(pct, sizeof pct, t->kept_mass, d);
    for (int b = 0; b < 5; b++) {
        w[b][0] = '\0';
        int len = filters_words(a, b, d, w[b], sizeof w[b]);
        draws_count_text(t->kept_count, n, sizeof n);
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
    const char *words[] = { w[0], w[1], w[2], w[3], w[4] };
    ctx_text(c, 1, y, room, report_fit(room, 5, words), COL_DEFAULT, 0);
}

/* The u that chose the token of row (none: ""), as the draw line's first
 * words; with u on (or on a step taken) where it fell: in the token's
 * stretch of the kept tokens' running sum. */
static void choice_u(const struct app *a, const struct trace_row *row, char *us, size_t n)
{
    const struct app_entry *en = app_shown_entry(a);
    us[0] = '\0';
    if (!(en ? en->sampled && !en->forced : a->t.choice.sampled))
        return;
    double u = en ? en->u : a->t.choice.u;
    if (en || a->show_u)
        snprintf(us, n, "u %.4f in [%.4f, %.4f), ", u, fmax(row->cum_final - row->final, 0.0),
                 row->cum_final);
    else
        snprintf(us, n, "u %.4f, ", u);
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
    char tok[96], w[6][384], us[96];
    utf8_escape(vocab_token(&a->L.vocab, t->choice.id), tok, sizeof tok);
    int r = rank + 1;
    double lp = log(row->prob);
    choice_u(a, row, us, sizeof us);
    snprintf(w[0], sizeof w[0],
             "%s %s (%srank %d, p %.4f, ln p %.4f, after the filters %.4f); entropy %.3f nats, "
             "like %.1f equally likely tokens",
             verb, tok, us, r, row->prob, lp, row->final, t->entropy, exp(t->entropy));
    snprintf(w[1], sizeof w[1],
             "%s %s (%srank %d, p %.4f, ln p %.4f, final %.4f); entropy %.3f nats", verb, tok, us,
             r, row->prob, lp, row->final, t->entropy);
    snprintf(w[2], sizeof w[2], "%s %s (%srank %d, p %.4f, ln p %.4f, final %.4f)", verb, tok, us,
             r, row->prob, lp, row->final);
    snprintf(w[3], sizeof w[3], "%s %s (%srank %d, p %.4f, final %.4f)", verb, tok, us, r,
             row->prob, row->final);
    if (us[0]) /* the final probability is what u was compared with */
        snprintf(w[4], sizeof w[4], "%s: %s, %srank %d, final %.4f", head, tok, us, r, row->final);
    else
        snprintf(w[4], sizeof w[4], "%s: %s, rank %d, p %.4f, final %.4f", head, tok, r, row->prob,
                 row->final);
    snprintf(w[5], sizeof w[5], "%s rank %d p %.4f", tok, r, row->prob);
    const char *words[] = { w[0], w[1], w[2], w[3], w[4], w[5] };
    ctx_text(c, 1, y, room, report_fit(room, 6, words), COL_DEFAULT, 0);
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
    if (y < c->r.h && trace_row_of(t, t->choice.id, &row, &rank) == 0)
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
