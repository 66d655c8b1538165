/* view_panes.c - the four panes of a toy step: logits, exponentials,
 * probabilities and the cumulative staircase, each drawn into its own
 * context (coordinates from the pane's corner).
 *
 * The panes show the final distribution: the softmax of z' after every
 * value stage. Where a cutting stage looked at the same numbers (no stage
 * after it changes z') its threshold is drawn on them: the top-p line and
 * the min-p bar. Otherwise the title says what that stage saw instead.
 *
 * Each pane keeps one scale whatever the filters do: its bar column starts
 * after the widest text the pane can show beside it (not the text shown
 * now) and runs to the pane's right edge; probabilities and the cumulative
 * take 0..1 across it, the logits and exponentials the step's own values,
 * which no filter changes. A bar the filters renormalized draws over its
 * ghost, the value before them (marks.def says how each mark looks).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/view_int.h"
#include "report/report.h"
#include "base/utf8.h"

#define ROWS_MAX PANE_ROWS_MAX
#define NUM_W    7 /* a number column: " 0.4407" */
#define FINAL_W  9 /* the value after the settings: "→ 0.5856" or "×top-k" */
#define EXP_W    10

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

/* Where a pane's rows and bars go. A pane with room for two rows a token
 * or more uses them all: each bar as tall as its rows (from three, less a
 * blank row between tokens), so big mode's bars are tall, the name and numbers on the first; the
 * bar column is fixed by numw, the widest text the pane can show beside its bars, and leaves the
 * last column for a mark past a bar's end. */
struct pane_geom {
    int n;      /* tokens shown */
    int step;   /* rows from one token to the next */
    int bar_h;  /* rows each bar takes */
    int bx, bw; /* the bar column */
};

int pane_step(const struct app *a, const struct screen_ctx *c)
{
    int rows = c->r.h - 1, V = a->t.vocab_size;
    int per = V > 0 && V <= ROWS_MAX ? rows / V : 1;
    return per >= 1 ? per : 1;
}

static void pane_geom(const struct app *a, const struct screen_ctx *c, int numw, int by_rank,
                      int *ids, struct pane_geom *g)
{
    int rows = c->r.h - 1, V = a->t.vocab_size;
    g->step = pane_step(a, c);
    g->bar_h = g->step >= 3 ? g->step - 1 : g->step; /* from three rows, one blank between */
    g->n = pane_order(a, g->step > 1 ? V : rows, by_rank, ids);
    g->bx = 2 + TOKEN_W + numw;
    g->bw = c->r.w - 2 - g->bx;
}

/* When a pane cannot show every token it shows the most likely ones; this
 * says how many are left out and how much probability they hold. */
static void more_line(const struct app *a, const struct screen_ctx *c, const struct pane_geom *g)
{
    const struct trace *t = &a->t;
    int y = 1 + g->n * g->step;
    if (g->n >= t->vocab_size || g->n <= 0 || y >= c->r.h || app_hidden(a))
        return;
    int count, kept;
    double mass;
    trace_tail(t, g->n, &count, &mass, &kept);
    ctx_printf(c, 1, y, c->r.w - 2, COL_REMOVED, 0, "... %d more tokens, p %.4f", count, mass);
}

/* The first line below a pane's rows (and its more line) that is free, or
 * -1 when the rows fill the pane. */
static int free_line(const struct app *a, const struct screen_ctx *c, const struct pane_geom *g)
{
    int y = 1 + g->n * g->step;
    if (g->n < a->t.vocab_size && g->n > 0 && !app_hidden(a))
        y++; /* more_line's */
    return y < c->r.h ? y : -1;
}

/* Of texts[], the first whose width fits the pane, on line y (y >= 0). */
static void note_line(const struct screen_ctx *c, int y, const char *const *texts, int n)
{
    for (int i = 0; i < n && y >= 0; i++)
        if (utf8_width(texts[i]) <= c->r.w - 2) {
            ctx_text(c, 1, y, c->r.w - 2, texts[i], COL_REMOVED, 0);
            return;
        }
}

/* The title with the first right-hand text of right[] that fits whole (the
 * most words first) beside left, else beside short_left: a title drops
 * words, never cuts a number. */
static void fit_title(const struct screen_ctx *c, const char *left, const char *short_left,
                      const char *const *right, int n)
{
    for (int pass = 0; pass < 2; pass++) {
        const char *l = pass ? short_left : left;
        for (int i = 0; i < n; i++)
            if (utf8_width(right[i]) <= c->r.w - utf8_width(l) - 4) {
                pane_title(c, l, right[i]);
                return;
            }
    }
    pane_title(c, short_left, "");
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
        mark_put(c, x - 1, y, MARK_FOUND);
    if (is_chosen(a, row->id)) {
        col = mark_of(MARK_CHOSEN)->color;
        attr = mark_of(MARK_CHOSEN)->attr;
    } else if (found) {
        col = mark_of(MARK_FOUND)->color;
        attr = ATTR_BOLD | ATTR_UNDERLINE;
    } else if (dim_removed && row->removed_by != TRACE_KEPT) {
        col = mark_of(MARK_REMOVED)->color;
        attr = mark_of(MARK_REMOVED)->attr;
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

/* ---- bars and their marks --------------------------------------------------------- */

/* The cells a bar of len cells covers (screen_bar: whole cells, then one
 * for the eighths that round to at least one). */
static int bar_cells(double len)
{
    if (!(len > 0.0))
        return 0;
    int full = (int)len;
    return full + ((int)((len - full) * 8 + 0.5) > 0 ? 1 : 0);
}

/* A bar of after cells from x over its ghost of before cells, the value
 * before the filters: the part they share in the bar's colour, the part the
 * bar gained in the gain's, and what it lost (all of it for a token a filter
 * removed) as the ghost's shade. */
static void ghost_bar(const struct screen_ctx *c, int x, int y, double before, double after)
{
    const struct mark *bar = mark_of(MARK_BAR), *gain = mark_of(MARK_GAIN);
    int shared = (int)lround(fmin(before, after));
    if (after >= before + 0.5 && shared > 0) {
        for (int i = 0; i < shared; i++)
            mark_put(c, x + i, y, MARK_BAR);
        ctx_bar(c, x + shared, y, after - shared, gain->color, gain->attr);
    } else {
        ctx_bar(c, x, y, after, bar->color, bar->attr);
    }
    for (int i = bar_cells(after); i < (int)lround(before); i++)
        mark_put(c, x + i, y, MARK_GHOST);
}

/* Mark m at (x, y) only where that cell is empty: a threshold stands beside
 * the bars, never through one (a bar that reaches it covers it). */
static void mark_beside(const struct screen_ctx *c, int x, int y, enum mark_id m)
{
    const struct cell *cell = screen_at(c->s, c->r.x + x, c->r.y + y);
    if (x >= 0 && x < c->r.w && cell && cell->cp == ' ')
        mark_put(c, x, y, m);
}

/* Numbers of one column in one format: if any of them needs an exponent
 * (3.269e+06 beside 24343.0094), all of them are written with one. */
static int column_needs_exp(const double *v, int n, int digits)
{
    for (int i = 0; i < n; i++) {
        char buf[48];
        report_number(buf, sizeof buf, v[i], digits);
        if (strchr(buf, 'e') && isfinite(v[i]))
            return 1;
    }
    return 0;
}

static void column_number(char *buf, size_t n, double v, int digits, int with_exp)
{
    if (with_exp && isfinite(v))
        snprintf(buf, n, "%.*e", digits > 1 ? digits - 1 : 0, v);
    else
        report_number(buf, n, v, digits);
}

/* ---- logits ----------------------------------------------------------------------- */

/* Where the logit bars go: the axis, the cells to its left and right, and
 * cells per unit of z'. */
struct logit_axis {
    int x, left, right;
    double scale;
};

/* The bar of z' from the axis, cut at the pane's edge with a mark. */
static void logit_bar(const struct screen_ctx *c, const struct logit_axis *ax, int y, double z)
{
    mark_put(c, ax->x, y, MARK_AXIS);
    int room = z >= 0 ? ax->right : ax->left;
    double len = fabs(z) * ax->scale;
    int clipped = len > room;
    if (clipped)
        len = room;
    const struct mark *k = mark_of(z >= 0 ? MARK_BAR : MARK_NEG);
    if (z >= 0)
        ctx_bar(c, ax->x, y, len, k->color, k->attr);
    else
        ctx_bar_left(c, ax->x, y, len, k->color, k->attr);
    if (clipped && room > 0) /* z' beyond the scale: the bar's end says so */
        mark_put(c, z >= 0 ? ax->x + room - 1 : ax->x - room, y,
                 z >= 0 ? MARK_CLIP_POS : MARK_CLIP_NEG);
}

/* The scale of the bars from the logits z of the rows shown: twice the
 * range of z fills the bar column, so at T = 1 the bars use half the room,
 * T = 0.5 fills it and T = 2 halves them again; the axis stands where the
 * negative side gets its share (at the left edge when every z >= 0), so
 * no room goes to a side that has no bar. */
static void logit_axis(const struct app *a, const int *ids, const struct pane_geom *g,
                       struct logit_axis *ax)
{
    double neg = 0.0, pos = 0.0;
    for (int i = 0; i < g->n; i++) {
        double z = row_of(a, ids[i])->logit;
        if (isfinite(z))
            neg = fmax(neg, -z), pos = fmax(pos, z);
    }
    double span = 2.0 * (neg + pos);
    if (!(span > 0))
        span = 2.0, neg = pos = 0.5;
    int w = g->bw > 1 ? g->bw - 1 : 0; /* the last column: a mark past a bar's end */
    ax->left = (int)lround(w * neg / (neg + pos));
    ax->x = g->bx + ax->left;
    ax->right = g->bw - ax->left;
    ax->scale = w / span;
}

/* The z' the logit bars start from: C / T under a shift C (C where T is 0
 * or not in the chain), else 0. A shift adds C to every logit, so bars
 * drawn from 0 would all run off the scale alike and say the logits became
 * equal; drawn from C / T they keep the gaps the lesson is about (a broken
 * axis, which the pane's note and title name). */
static double logit_base(const struct app *a)
{
    const struct sampler_settings *m = &a->cur.sampler;
    double T = trace_temperature(&a->t, m);
    return T > 0.0 && chain_has(&m->chain, STAGE_TEMPERATURE) ? m->shift / T : m->shift;
}

/* The logits' title: what changed z (the words dropped first when narrow),
 * and where a shift put the bars' axis. */
static void logit_title(const struct app *a, const struct screen_ctx *c, int changed, double base)
{
    const struct sampler_settings *m = &a->cur.sampler;
    char why[64] = "", words[48] = "", axis[48] = "", num[32];
    if (changed) {
        int bias = chain_has(&m->chain, STAGE_LOGIT_BIAS) &&
                   stage_active(m, STAGE_LOGIT_BIAS, a->t.vocab_size);
        snprintf(words, sizeof words, "%s%s%s%s", m->shift != 0.0 ? " shift" : "",
                 bias ? " bias" : "", a->t.penalized ? " penalty" : "",
                 trace_temperature(&a->t, m) != 1.0 && trace_temperature(&a->t, m) != 0.0 ? " T"
                                                                                          : "");
        snprintf(why, sizeof why, "z' after%s", words);
    }
    if (base != 0.0) {
        report_logit(num, sizeof num, base, digits_of(a));
        snprintf(axis, sizeof axis, "axis at z' = %s", num);
    }
    const char *right[] = { axis, why, words[0] ? words + 1 : "", "" };
    fit_title(c, changed ? "Logits z -> z'" : "Logits z", "Logits", right + (base == 0.0), 3);
}

/* One row of the logits: z, then (when the settings changed some) z'. */
static void logit_numbers(const struct app *a, const struct screen_ctx *c, int y,
                          const struct trace_row *row, int changed)
{
    int d = digits_of(a);
    char z[32], adj[32];
    report_logit(z, sizeof z, row->logit, d);
    ctx_printf(c, 1 + TOKEN_W, y, NUM_W, COL_DEFAULT, 0, "%6s", z);
    if (!changed)
        return;
    report_logit(adj, sizeof adj, row->adjusted, d);
    int differs = row->adjusted != row->logit;
    const struct mark *to = mark_of(MARK_FINAL);
    ctx_put(c, 1 + TOKEN_W + NUM_W, y, ctx_glyph(c, to->cp, to->ascii), to->color, to->attr);
    ctx_printf(c, 2 + TOKEN_W + NUM_W, y, FINAL_W - 1, differs ? to->color : COL_DEFAULT,
               differs ? to->attr : 0, "%8s", adj);
}

void draw_logits(const struct app *a, const struct screen_ctx *c)
{
    int ids[ROWS_MAX];
    struct pane_geom g;
    pane_geom(a, c, NUM_W + FINAL_W, 0, ids, &g);
    int changed = 0;
    for (int i = 0; i < g.n; i++) {
        const struct trace_row *row = row_of(a, ids[i]);
        changed |= row->adjusted != row->logit && isfinite(row->logit);
    }
    if (!changed) /* no z' column: its room goes to the bars */
        g.bx -= FINAL_W, g.bw += FINAL_W;
    struct logit_axis ax;
    logit_axis(a, ids, &g, &ax);
    double base = logit_base(a);
    logit_title(a, c, changed, base);
    for (int i = 0; i < g.n; i++) {
        int y = 1 + i * g.step;
        const struct trace_row *row = row_of(a, ids[i]);
        draw_token(a, c, 1, y, row, 0);
        logit_numbers(a, c, y, row, changed);
        for (int r = 0; r < g.bar_h && g.bw >= 4 && isfinite(row->adjusted); r++)
            logit_bar(c, &ax, y + r, row->adjusted - base);
    }
    more_line(a, c, &g);
    if (base != 0.0) {
        char num[32], note[112], brief[80];
        report_logit(num, sizeof num, base, digits_of(a));
        snprintf(note, sizeof note, "The bars are drawn from z' = %s, where the shift moved 0.",
                 num);
        snprintf(brief, sizeof brief, "bars start at z' = %s (broken axis)", num);
        const char *texts[] = { note, brief, "bars drawn from the shifted 0" };
        note_line(c, free_line(a, c, &g), texts, 3);
    }
}

/* ---- exponentials ----------------------------------------------------------------- */

/* Under a shift that moved z' by base: the sum as e^base times the sum
 * without it (the 200.9 the lesson quotes), in full and in short. */
static void exp_title_shifted(const struct app *a, double base, const char *sum, char *full,
                              size_t n)
{
    char b[32], rest[48];
    report_logit(b, sizeof b, base, digits_of(a));
    report_number(rest, sizeof rest, a->t.sum_exp * exp(-base), digits_of(a));
    snprintf(full, n, "sum %s = e^%s x %s", sum, b, rest);
}

static void exp_title(const struct app *a, const struct screen_ctx *c, int given, double base)
{
    const struct trace *t = &a->t;
    char sum[48], title[64], full[160] = "";
    if (app_hidden(a) && !given)
        snprintf(sum, sizeof sum, "?");
    else if (isinf(t->sum_exp))
        snprintf(sum, sizeof sum, "overflows: see e^(z'-max)");
    else
        report_number(sum, sizeof sum, t->sum_exp, digits_of(a));
    snprintf(title, sizeof title, "sum %s", sum);
    if (base != 0.0 && isfinite(t->sum_exp) && t->sum_exp > 0.0 && !(app_hidden(a) && !given))
        exp_title_shifted(a, base, sum, full, sizeof full);
    const char *right[] = { full, title, sum };
    int skip = full[0] ? 0 : 1;
    fit_title(c, given ? "Exponentials e^z' = p" : "Exponentials e^z'", "e^z'", right + skip,
              3 - skip);
}

/* Under a shift: every e^z' was multiplied by one number, so no p moved. */
static void exp_note(const struct app *a, const struct screen_ctx *c, const struct pane_geom *g,
                     double base)
{
    char b[32], f[48], note[160], mid[112], brief[80];
    report_logit(b, sizeof b, base, digits_of(a));
    report_number(f, sizeof f, exp(base), digits_of(a));
    snprintf(note, sizeof note, "Every e^z' and the sum were multiplied by e^%s = %s: no p moved.",
             b, f);
    snprintf(mid, sizeof mid, "every e^z' and the sum: x e^%s = %s", b, f);
    snprintf(brief, sizeof brief, "e^z' and sum x e^%s: p unchanged", b);
    const char *texts[] = { note, mid, brief, "each e^z' x e^C: p the same" };
    note_line(c, free_line(a, c, g), texts, 4);
}

void draw_exp(const struct app *a, const struct screen_ctx *c)
{
    int d = digits_of(a), hidden = app_hidden(a);
    const struct lesson_step *S = &a->L.steps[a->cur_step - 1];
    int given = S->given == GIVEN_PROBS; /* e^(ln p) = p: the data of the exercise */
    double base = logit_base(a);
    exp_title(a, c, given, base);
    int ids[ROWS_MAX];
    double v[ROWS_MAX], max = 0.0;
    struct pane_geom g;
    pane_geom(a, c, EXP_W, 0, ids, &g);
    for (int i = 0; i < g.n; i++) {
        v[i] = row_of(a, ids[i])->exp;
        max = fmax(max, v[i]);
    }
    int with_exp = column_needs_exp(v, g.n, d);
    const struct mark *bar = mark_of(MARK_BAR);
    for (int i = 0; i < g.n; i++) {
        int y = 1 + i * g.step;
        draw_token(a, c, 1, y, row_of(a, ids[i]), 0);
        if (hidden && !given) {
            ctx_text(c, 1 + TOKEN_W, y, EXP_W, "         ?", COL_DEFAULT, 0);
            continue;
        }
        char num[48];
        column_number(num, sizeof num, v[i], d, with_exp);
        ctx_printf(c, 1 + TOKEN_W, y, EXP_W, COL_DEFAULT, 0, "%10s", num);
        for (int r = 0; r < g.bar_h && g.bw > 2 && max > 0 && isfinite(max); r++)
            ctx_bar(c, g.bx, y + r, v[i] / max * g.bw, bar->color, bar->attr);
    }
    more_line(a, c, &g);
    if (base != 0.0 && !(hidden && !given))
        exp_note(a, c, &g, base);
}

/* ---- probabilities ---------------------------------------------------------------- */

/* The title of the probabilities: the min-p bar at bar (when >= 0), why
 * there is none, or what was kept. */
static void prob_title(const struct app *a, const struct screen_ctx *c, double bar, int bar_other)
{
    const struct trace *t = &a->t;
    int d = digits_of(a), k = t->kept_count, V = t->vocab_size, n = 0;
    char r[3][80];
    if (app_hidden(a)) {
        snprintf(r[n++], sizeof r[0], "kept ?");
    } else if (bar_other) { /* the bar was drawn on numbers a later stage changed */
        snprintf(r[n++], sizeof r[0], "min-p cut before T");
        snprintf(r[n++], sizeof r[0], "min-p before T");
    } else if (bar >= 0) {
        snprintf(r[n++], sizeof r[0], "min-p bar %.*f, kept %d/%d", d, bar, k, V);
        snprintf(r[n++], sizeof r[0], "min-p %.*f kept %d/%d", d, bar, k, V);
        snprintf(r[n++], sizeof r[0], "min-p %.*f", d, bar);
    } else {
        snprintf(r[n++], sizeof r[0], "kept %d/%d, mass %.*f", k, V, d, t->kept_mass);
        snprintf(r[n++], sizeof r[0], "kept %d/%d", k, V);
    }
    const char *right[3] = { r[0], r[1], r[2] };
    fit_title(c, "Probabilities p", "p", right, n);
}

/* The numbers of one row of the probabilities: p, then (when a stage cut)
 * the final probability or the stage that removed the token. */
static void prob_numbers(const struct app *a, const struct screen_ctx *c, int y,
                         const struct trace_row *row)
{
    int d = digits_of(a), hidden = app_hidden(a);
    int kept = row->removed_by == TRACE_KEPT;
    const struct mark *gone = mark_of(MARK_REMOVED), *to = mark_of(MARK_FINAL);
    char p[32], f[32];
    report_number(p, sizeof p, row->prob, d);
    ctx_printf(c, 1 + TOKEN_W, y, NUM_W, kept || hidden ? COL_DEFAULT : gone->color,
               kept || hidden ? 0 : gone->attr, "%6s", p);
    if (a->t.kept_count == a->t.vocab_size || hidden)
        return;
    const struct mark *k = kept ? to : gone;
    ctx_put(c, 1 + TOKEN_W + NUM_W, y, ctx_glyph(c, k->cp, k->ascii), k->color, k->attr);
    if (kept) {
        report_number(f, sizeof f, row->final, d);
        ctx_printf(c, 2 + TOKEN_W + NUM_W, y, FINAL_W - 1, k->color, k->attr, "%7s", f);
    } else {
        ctx_printf(c, 2 + TOKEN_W + NUM_W, y, FINAL_W - 1, k->color, k->attr, "%-7s",
                   trace_removed_name(row->removed_by));
    }
}

/* One row of the probabilities: its numbers, then across the bar column
 * (full: p = full) the final p over its ghost, the p before the filters,
 * and the min-p bar (bar >= 0) beside them. */
static void prob_row(const struct app *a, const struct screen_ctx *c, int y,
                     const struct trace_row *row, const struct pane_geom *g, double bar,
                     double full)
{
    prob_numbers(a, c, y, row);
    if (g->bw < 3 || app_hidden(a))
        return;
    int trunc = a->t.kept_count < a->t.vocab_size;
    double after = row->removed_by != TRACE_KEPT ? 0.0 : trunc ? row->final : row->prob;
    double w = g->bw / full;
    for (int r = 0; r < g->bar_h; r++) {
        ghost_bar(c, g->bx, y + r, row->prob * w, after * w);
        if (bar >= 0)
            mark_beside(c, g->bx + (int)lround(bar * w), y + r, MARK_THRESHOLD);
    }
}

/* The p the bar column's width stands for: 1, or under a min-p bar the top
 * token's final p, so that the bar, a fraction min-p of the top token,
 * stands that fraction of the way across instead of a cell from 0. */
static double prob_full(const struct trace *t, double bar)
{
    double top = 0.0;
    for (int i = 0; bar >= 0 && i < t->n_rows; i++)
        top = fmax(top, fmax(t->rows[i].final, t->rows[i].prob));
    return top > 0.0 ? top : 1.0;
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
    int bar_other = mc >= 0 && t->stages[mc].active && value_change_after(a, mc);
    prob_title(a, c, bar, bar_other);
    int ids[ROWS_MAX];
    struct pane_geom g;
    pane_geom(a, c, NUM_W + FINAL_W, 0, ids, &g);
    double full = prob_full(t, bar);
    for (int i = 0; i < g.n; i++) {
        int y = 1 + i * g.step;
        const struct trace_row *row = row_of(a, ids[i]);
        draw_token(a, c, 1, y, row, !hidden);
        if (hidden && !given)
            ctx_text(c, 1 + TOKEN_W, y, NUM_W, "     ?", COL_DEFAULT, 0);
        else
            prob_row(a, c, y, row, &g, bar, full);
    }
    more_line(a, c, &g);
}

/* ---- the cumulative staircase ----------------------------------------------------- */

/* The marks of the cumulative pane, on the scale of the final distribution. */
struct cum_marks {
    int show_u;  /* the u marker of a sampled draw */
    double u_at; /* where u falls */
    double line; /* the top-p line, or < 0 */
};

/* The title of the cumulative pane, and the marks it announces. */
static void cum_title(const struct app *a, const struct screen_ctx *c, struct cum_marks *mk)
{
    const struct trace *t = &a->t;
    int d = digits_of(a), n = 0;
    const struct app_entry *en = app_shown_entry(a);
    mk->show_u = ((en && en->sampled) || (!en && a->show_u && t->choice.sampled)) && !app_hidden(a);
    /* The top-p line: top-p's running sum reached p over the tokens it saw.
     * On these numbers that is p times the mass still kept when it ran --
     * unless z' changed after it, when its numbers were others. */
    int pc = stage_index(a, STAGE_TOP_P);
    int p_other = 0;
    mk->line = -1.0;
    if (pc >= 0 && t->stages[pc].active) {
        if (value_change_after(a, pc))
            p_other = 1;
        else
            mk->line = a->cur.sampler.top_p * mass_entering(a, pc);
    }
    /* The draw compares u with the renormalized cumulative; on this scale
     * (when the kept tokens lead the ranking, as every cut leaves them) that
     * point is u times the kept mass. */
    mk->u_at = t->choice.u * t->kept_mass;
    char r[3][96];
    if (mk->show_u && t->kept_mass < 1.0)
        snprintf(r[n++], sizeof r[0], "u %.4f%s%.4f=%.4f", t->choice.u, glyph(c, "\u00d7", "x"),
                 t->kept_mass, mk->u_at);
    if (mk->show_u)
        snprintf(r[n++], sizeof r[0], "u %.4f", t->choice.u);
    else if (mk->line >= 0) {
        snprintf(r[n++], sizeof r[0], "top-p line %.*f", d, mk->line);
        snprintf(r[n++], sizeof r[0], "top-p %.*f", d, mk->line);
    } else if (p_other) {
        snprintf(r[n++], sizeof r[0], "top-p cut before T");
        snprintf(r[n++], sizeof r[0], "top-p before T");
    }
    snprintf(r[n++], sizeof r[0], "%s", "");
    const char *right[3] = { r[0], r[1], n > 2 ? r[2] : "" };
    fit_title(c, "Cumulative", "Cum.", right, n);
}

/* One step of the staircase: the running sum, the token's share of it (a
 * ghost where a filter removed it), the top-p line beside it and, on the
 * drawn token, the u marker on its first row. */
static void cum_row(const struct app *a, const struct screen_ctx *c, int y,
                    const struct trace_row *row, const struct pane_geom *g,
                    const struct cum_marks *mk)
{
    char cu[32];
    report_number(cu, sizeof cu, row->cum, digits_of(a));
    int kept = row->removed_by == TRACE_KEPT, bx = g->bx, bw = g->bw;
    const struct mark *gone = mark_of(MARK_REMOVED), *bar = mark_of(MARK_BAR);
    ctx_printf(c, 1 + TOKEN_W, y, NUM_W, kept ? COL_DEFAULT : gone->color, kept ? 0 : gone->attr,
               "%6s", cu);
    if (bw < 4)
        return;
    double from = row->cum - row->prob;
    int x0 = bx + (int)floor(from * bw);
    double len = row->prob * bw - (x0 - bx - from * bw);
    for (int r = 0; r < g->bar_h; r++) {
        if (kept)
            ctx_bar(c, x0, y + r, len < 0.2 ? 0.2 : len, bar->color, bar->attr);
        else
            for (int x = x0; x < bx + (int)lround(row->cum * bw) && x < bx + bw; x++)
                mark_put(c, x, y + r, MARK_GHOST);
        if (mk->line >= 0)
            mark_beside(c, bx + (int)lround(mk->line * bw), y + r, MARK_THRESHOLD);
    }
    if (mk->show_u && row->id == a->t.choice.id) {
        int ux = bx + (int)floor(mk->u_at * bw);
        mark_put(c, ux >= bx + bw ? bx + bw - 1 : ux, y, MARK_U);
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
    cum_title(a, c, &mk);
    int ids[ROWS_MAX];
    struct pane_geom g;
    pane_geom(a, c, NUM_W, 1, ids, &g);
    for (int i = 0; i < g.n; i++) {
        int y = 1 + i * g.step;
        const struct trace_row *row = &t->rows[i];
        draw_token(a, c, 1, y, row, !hidden);
        if (hidden)
            ctx_text(c, 1 + TOKEN_W, y, NUM_W, "     ?", COL_DEFAULT, 0);
        else
            cum_row(a, c, y, row, &g, &mk);
    }
    more_line(a, c, &g);
}
