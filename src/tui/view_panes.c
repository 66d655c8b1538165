/* view_panes.c - the four panes of a toy step: logits, exponentials,
 * probabilities and the cumulative staircase, each drawn into its own
 * context (coordinates from the pane's corner).
 *
 * The panes show the final distribution: the softmax of z' after every
 * value stage. Where a cutting stage looked at the same numbers (no stage
 * after it changes z') its threshold is drawn on them: the top-p line and
 * the min-p bar. Otherwise the title says what that stage saw instead.
 */
#include <math.h>
#include <stdio.h>

#include "tui/view_int.h"
#include "report/report.h"
#include "base/utf8.h"

#define ROWS_MAX PANE_ROWS_MAX

int pane_order(const struct app *a, int rows, int by_rank, int *ids)
{
    const struct trace *t = &a->t;
    int V = t->vocab_size;
    if (rows > ROWS_MAX)
        rows = ROWS_MAX;
    if (V <= rows) {
        for (int i = 0; i < V; i++)
            ids[i] = by_rank ? t->rows[i].id : i;
        return V;
    }
    int n = rows - 1 < t->n_rows ? rows - 1 : t->n_rows;
    for (int i = 0; i < n; i++)
        ids[i] = t->rows[i].id;
    return n < 0 ? 0 : n;
}

static const struct trace_row *row_of(const struct app *a, int id)
{
    return &a->t.rows[a->t.rank_of[id]];
}

/* When a pane cannot show every token it shows the most likely ones; this
 * says how many are left out and how much probability they hold. */
static void more_line(const struct app *a, const struct screen_ctx *c, int shown)
{
    const struct trace *t = &a->t;
    int y = 1 + shown;
    if (shown >= t->vocab_size || shown <= 0 || y >= c->r.h || app_hidden(a))
        return;
    int count, kept;
    double mass;
    report_tail(t, shown, &count, &mass, &kept);
    ctx_printf(c, 1, y, c->r.w - 2, COL_REMOVED, 0, "... %d more tokens, p %.4f", count, mass);
}

/* The token's name; in the panes of what stages removed, a removed token
 * is dimmed. The found token (/) is marked in every pane, so that its row
 * can be followed from the logits to the draws. */
void draw_token(const struct app *a, const struct screen_ctx *c, int x, int y,
                const struct trace_row *row, int dim_removed)
{
    char esc[96], pad[96];
    int attr = 0, col = COL_DEFAULT, found = row->id == a->find_id;
    if (found && x > 0)
        ctx_put(c, x - 1, y, ctx_glyph(c, 0x25B8, '>'), COL_ACCENT, ATTR_BOLD);
    if (is_chosen(a, row->id)) {
        col = COL_CHOSEN;
        attr = ATTR_BOLD | ATTR_REVERSE;
    } else if (found) {
        col = COL_ACCENT;
        attr = ATTR_BOLD | ATTR_UNDERLINE;
    } else if (dim_removed && row->removed_by != TRACE_KEPT) {
        col = COL_REMOVED;
        attr = ATTR_DIM;
    }
    utf8_escape(vocab_token(&a->L.vocab, row->id), esc, sizeof esc);
    utf8_pad(esc, TOKEN_W - 1, 0, pad, sizeof pad);
    ctx_text(c, x, y, TOKEN_W - 1, pad, col, attr);
}

/* Whether the chain changes z' after position k (so a threshold drawn on
 * the final numbers would be in the wrong units). */
static int value_change_after(const struct app *a, int k)
{
    for (int j = k + 1; j < a->t.n_stages; j++)
        if (a->t.stages[j].active && stage_rewrites(&a->cur.sampler, a->t.stages[j].stage))
            return 1;
    return 0;
}

static int stage_index(const struct app *a, enum stage st)
{
    for (int k = 0; k < a->t.n_stages; k++)
        if (a->t.stages[k].stage == st)
            return k;
    return -1;
}

/* The probability mass (final distribution) still kept when stage k ran:
 * what it kept plus what it and the stages after it removed. */
static double mass_entering(const struct app *a, int k)
{
    double m = a->t.kept_mass;
    for (int j = k; j < a->t.n_stages; j++)
        m += a->t.stages[j].removed_mass;
    return m;
}

/* ---- logits ----------------------------------------------------------------------- */

/* The bar of z' on a scale of span, from the axis at x = axis, half cells
 * to either side. */
static void logit_bar(const struct screen_ctx *c, int axis, int y, int half, double z, double span)
{
    ctx_put(c, axis, y, ctx_glyph(c, 0x2502, '|'), COL_REMOVED, 0);
    double len = fabs(z) / span * half;
    int clipped = len > half;
    if (clipped)
        len = half;
    if (z >= 0)
        ctx_bar(c, axis, y, len, COL_KEPT, 0);
    else
        ctx_bar_left(c, axis, y, len, COL_NEG, 0);
    if (clipped) /* z' beyond the scale: the bar's end says so */
        ctx_put(c, z >= 0 ? axis + half - 1 : axis - half, y,
                ctx_glyph(c, z >= 0 ? 0x25B8 : 0x25C2, z >= 0 ? '>' : '<'),
                z >= 0 ? COL_KEPT : COL_NEG, ATTR_BOLD | ATTR_REVERSE);
}

void draw_logits(const struct app *a, const struct screen_ctx *c)
{
    const struct trace *t = &a->t;
    int d = digits_of(a);
    int ids[ROWS_MAX];
    int n = pane_order(a, c->r.h - 1, 0, ids);
    int changed = 0;
    double span = 0.0;
    for (int i = 0; i < n; i++) {
        const struct trace_row *row = row_of(a, ids[i]);
        if (isfinite(row->logit))
            span = fmax(span, fabs(row->logit));
        changed |= row->adjusted != row->logit && isfinite(row->logit);
    }
    /* Bars show z' on a scale of twice the largest |z|: at T = 1 they use
     * half the room, T = 0.5 fills it, T = 2 halves them again. */
    span = span > 0 ? 2.0 * span : 1.0;
    const struct sampler_settings *m = &a->cur.sampler;
    char why[64] = "";
    if (changed) {
        snprintf(why, sizeof why, "z' after%s%s%s", m->shift != 0.0 ? " shift" : "",
                 t->penalized ? " penalty" : "",
                 m->temperature != 1.0 && m->temperature != 0.0 ? " T" : "");
    }
    pane_title(c, changed ? "Logits z -> z'" : "Logits z", why);
    int numw = changed ? 7 + 9 : 7;
    int bx = 2 + TOKEN_W + numw, bw = c->r.w - 1 - bx;
    int half = bw / 2;
    int axis = bx + half;
    for (int i = 0; i < n; i++) {
        int y = 1 + i;
        const struct trace_row *row = row_of(a, ids[i]);
        draw_token(a, c, 1, y, row, 0);
        char z[32], adj[32];
        report_logit(z, sizeof z, row->logit, d);
        ctx_printf(c, 1 + TOKEN_W, y, 7, COL_DEFAULT, 0, "%6s", z);
        if (changed) {
            report_logit(adj, sizeof adj, row->adjusted, d);
            int differs = row->adjusted != row->logit;
            ctx_printf(c, 1 + TOKEN_W + 7, y, 9, differs ? COL_ACCENT : COL_DEFAULT,
                       differs ? ATTR_BOLD : 0, "%s%8s", glyph(c, "\u2192", ">"), adj);
        }
        if (bw >= 4 && isfinite(row->adjusted))
            logit_bar(c, axis, y, half, row->adjusted, span);
    }
    more_line(a, c, n);
}

/* ---- exponentials ----------------------------------------------------------------- */

void draw_exp(const struct app *a, const struct screen_ctx *c)
{
    const struct trace *t = &a->t;
    int d = digits_of(a), hidden = app_hidden(a);
    const struct lesson_step *S = &a->L.steps[a->cur_step - 1];
    int given = S->given == GIVEN_PROBS; /* e^(ln p) = p: the data of the exercise */
    char sum[48], title[64];
    if (hidden && !given)
        snprintf(sum, sizeof sum, "?");
    else if (isinf(t->sum_exp))
        snprintf(sum, sizeof sum, "overflows: see e^(z'-max)");
    else
        report_number(sum, sizeof sum, t->sum_exp, d);
    snprintf(title, sizeof title, "sum %s", sum);
    pane_title(c, given ? "Exponentials e^z' = p" : "Exponentials e^z'", title);
    int ids[ROWS_MAX];
    int n = pane_order(a, c->r.h - 1, 0, ids);
    double max = 0.0;
    for (int i = 0; i < n; i++)
        max = fmax(max, row_of(a, ids[i])->exp);
    int bx = 2 + TOKEN_W + 10, bw = c->r.w - 1 - bx;
    for (int i = 0; i < n; i++) {
        int y = 1 + i;
        const struct trace_row *row = row_of(a, ids[i]);
        draw_token(a, c, 1, y, row, 0);
        if (hidden && !given) {
            ctx_text(c, 1 + TOKEN_W, y, 10, "         ?", COL_DEFAULT, 0);
            continue;
        }
        char v[32];
        report_number(v, sizeof v, row->exp, d);
        ctx_printf(c, 1 + TOKEN_W, y, 10, COL_DEFAULT, 0, "%10s", v);
        if (bw > 2 && max > 0 && isfinite(max))
            ctx_bar(c, bx, y, row->exp / max * bw, COL_KEPT, 0);
    }
    more_line(a, c, n);
}

/* ---- probabilities ---------------------------------------------------------------- */

/* The title of the probabilities: the min-p bar at bar (when >= 0), why
 * there is none, or what was kept. */
static void prob_title(const struct app *a, const struct screen_ctx *c, double bar, int bar_other,
                       char *title, size_t n)
{
    const struct trace *t = &a->t;
    int d = digits_of(a);
    if (app_hidden(a))
        snprintf(title, n, "kept ?");
    else if (bar_other) /* the bar was drawn on numbers a later stage changed */
        snprintf(title, n, "min-p cut before T");
    else if (bar >= 0)
        snprintf(title, n, "min-p bar %.*f %s kept %d/%d", d, bar, glyph(c, "\u250a", "|"),
                 t->kept_count, t->vocab_size);
    else
        snprintf(title, n, "kept %d/%d, mass %.*f", t->kept_count, t->vocab_size, d, t->kept_mass);
}

/* One row of the probabilities: p, then (when a stage cut) the final
 * probability or the stage that removed the token, then its bar. */
static void prob_row(const struct app *a, const struct screen_ctx *c, int y,
                     const struct trace_row *row, int bx, int bw, double bar)
{
    int d = digits_of(a), hidden = app_hidden(a);
    int trunc = a->t.kept_count < a->t.vocab_size;
    char p[32], f[32];
    int kept = row->removed_by == TRACE_KEPT;
    report_number(p, sizeof p, row->prob, d);
    ctx_printf(c, 1 + TOKEN_W, y, 7, kept || hidden ? COL_DEFAULT : COL_REMOVED,
               kept || hidden ? 0 : ATTR_DIM, "%6s", p);
    if (trunc && !hidden) {
        if (kept) {
            report_number(f, sizeof f, row->final, d);
            ctx_printf(c, 1 + TOKEN_W + 7, y, 9, COL_ACCENT, ATTR_BOLD, "%s%7s",
                       glyph(c, "\u2192", ">"), f);
        } else {
            ctx_printf(c, 1 + TOKEN_W + 7, y, 9, COL_REMOVED, ATTR_DIM, "%s%-7s",
                       glyph(c, "\u00d7", "-"), report_removed_name(row->removed_by));
        }
    }
    if (bw < 3 || hidden)
        return;
    if (kept)
        ctx_bar(c, bx, y, (trunc ? row->final : row->prob) * bw, COL_KEPT, 0);
    else
        for (int x = 0; x < (int)lround(row->prob * bw); x++)
            ctx_put(c, bx + x, y, ctx_glyph(c, 0x2591, '.'), COL_REMOVED, ATTR_DIM);
    if (bar >= 0) {
        int x = bx + (int)lround(bar * bw);
        if (x < bx + bw)
            ctx_put(c, x, y, ctx_glyph(c, 0x250a, '|'), COL_U, ATTR_BOLD);
    }
}

void draw_prob(const struct app *a, const struct screen_ctx *c)
{
    const struct trace *t = &a->t;
    int hidden = app_hidden(a);
    const struct lesson_step *S = &a->L.steps[a->cur_step - 1];
    int given = S->given == GIVEN_PROBS;
    /* Min-p keeps p_i >= min_p * p_max. The ratio survives renormalizing, so
     * its bar can be drawn on these numbers unless z' changed after it. */
    int mc = stage_index(a, STAGE_MIN_P);
    double bar = -1.0;
    if (mc >= 0 && t->stages[mc].active && !value_change_after(a, mc) && t->n_rows > 0)
        bar = a->cur.sampler.min_p * t->rows[0].prob;
    char title[80];
    int bar_other = mc >= 0 && t->stages[mc].active && value_change_after(a, mc);
    prob_title(a, c, bar, bar_other, title, sizeof title);
    pane_title(c, "Probabilities p", title);
    int ids[ROWS_MAX];
    int n = pane_order(a, c->r.h - 1, 0, ids);
    int trunc = t->kept_count < t->vocab_size;
    int numw = 7 + (trunc ? 9 : 0);
    int bx = 2 + TOKEN_W + numw, bw = c->r.w - 1 - bx;
    for (int i = 0; i < n; i++) {
        int y = 1 + i;
        const struct trace_row *row = row_of(a, ids[i]);
        draw_token(a, c, 1, y, row, !hidden);
        if (hidden && !given)
            ctx_text(c, 1 + TOKEN_W, y, 7, "     ?", COL_DEFAULT, 0);
        else
            prob_row(a, c, y, row, bx, bw, bar);
    }
    more_line(a, c, n);
}

/* ---- the cumulative staircase ----------------------------------------------------- */

/* The marks of the cumulative pane, on the scale of the final distribution. */
struct cum_marks {
    int show_u;  /* the u marker of a sampled draw */
    double u_at; /* where u falls */
    double line; /* the top-p line, or < 0 */
};

/* The title of the cumulative pane, and the marks it announces. */
static void cum_title(const struct app *a, const struct screen_ctx *c, struct cum_marks *mk,
                      char *title, size_t n)
{
    const struct trace *t = &a->t;
    int d = digits_of(a);
    const struct app_entry *en = app_shown_entry(a);
    mk->show_u = ((en && en->sampled) || (!en && a->show_u && t->choice.sampled)) && !app_hidden(a);
    /* The top-p line: top-p's running sum reached p over the tokens it saw.
     * On these numbers that is p times the mass still kept when it ran --
     * unless z' changed after it, when its numbers were others. */
    int pc = stage_index(a, STAGE_TOP_P);
    double p = a->cur.sampler.top_p;
    int p_other = 0;
    mk->line = -1.0;
    if (pc >= 0 && t->stages[pc].active) {
        if (value_change_after(a, pc))
            p_other = 1;
        else
            mk->line = p * mass_entering(a, pc);
    }
    /* The draw compares u with the renormalized cumulative; on this scale
     * (when the kept tokens lead the ranking, as every cut leaves them) that
     * point is u times the kept mass. */
    mk->u_at = t->choice.u * t->kept_mass;
    title[0] = '\0';
    if (mk->show_u && t->kept_mass < 1.0)
        snprintf(title, n, "u %.4f%s%.4f=%.4f%s", t->choice.u, glyph(c, "\u00d7", "x"),
                 t->kept_mass, mk->u_at, glyph(c, "\u25c6", "*"));
    else if (mk->show_u)
        snprintf(title, n, "u %.4f %s", t->choice.u, glyph(c, "\u25c6", "*"));
    else if (mk->line >= 0)
        snprintf(title, n, "top-p %s %.*f", glyph(c, "\u250a", "|"), d, mk->line);
    else if (p_other)
        snprintf(title, n, "top-p cut before T");
}

/* One step of the staircase: the running sum, the token's share of it, the
 * top-p line and, on the drawn token, the u marker. */
static void cum_row(const struct app *a, const struct screen_ctx *c, int y,
                    const struct trace_row *row, int bx, int bw, const struct cum_marks *mk)
{
    char cu[32];
    report_number(cu, sizeof cu, row->cum, digits_of(a));
    int kept = row->removed_by == TRACE_KEPT;
    ctx_printf(c, 1 + TOKEN_W, y, 7, kept ? COL_DEFAULT : COL_REMOVED, kept ? 0 : ATTR_DIM, "%6s",
               cu);
    if (bw < 4)
        return;
    double from = row->cum - row->prob;
    int x0 = bx + (int)floor(from * bw);
    double len = row->prob * bw - (x0 - bx - from * bw);
    if (kept)
        ctx_bar(c, x0, y, len < 0.2 ? 0.2 : len, COL_KEPT, 0);
    else
        for (int x = x0; x < bx + (int)lround(row->cum * bw) && x < bx + bw; x++)
            ctx_put(c, x, y, ctx_glyph(c, 0x2591, '.'), COL_REMOVED, ATTR_DIM);
    if (mk->line >= 0) {
        int px = bx + (int)lround(mk->line * bw);
        if (px < bx + bw)
            ctx_put(c, px, y, ctx_glyph(c, 0x250a, '|'), COL_U, ATTR_BOLD);
    }
    if (mk->show_u && row->id == a->t.choice.id) {
        int ux = bx + (int)floor(mk->u_at * bw);
        if (ux >= bx + bw)
            ux = bx + bw - 1;
        ctx_put(c, ux, y, ctx_glyph(c, 0x25c6, '*'), COL_U, ATTR_BOLD | ATTR_REVERSE);
    }
}

void draw_cum(const struct app *a, const struct screen_ctx *c)
{
    if (a->draws_ok) { /* D: the draws take the staircase's room */
        draw_draws(a, c);
        return;
    }
    const struct trace *t = &a->t;
    int hidden = app_hidden(a);
    struct cum_marks mk;
    char title[128];
    cum_title(a, c, &mk, title, sizeof title);
    pane_title(c, "Cumulative", title);
    int ids[ROWS_MAX];
    int n = pane_order(a, c->r.h - 1, 1, ids);
    int bx = 2 + TOKEN_W + 7, bw = c->r.w - 1 - bx;
    for (int i = 0; i < n; i++) {
        int y = 1 + i;
        const struct trace_row *row = &t->rows[i];
        draw_token(a, c, 1, y, row, !hidden);
        if (hidden)
            ctx_text(c, 1 + TOKEN_W, y, 7, "     ?", COL_DEFAULT, 0);
        else
            cum_row(a, c, y, row, bx, bw, &mk);
    }
    more_line(a, c, n);
}
