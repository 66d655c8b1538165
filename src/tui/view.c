/* view.c - layout and drawing.
 *
 * Four panes show the step on screen: logits, exponentials, probabilities and
 * the cumulative staircase. A lesson pane holds the text and the context, two
 * status lines every setting, and the bottom line a message, the ':' prompt,
 * or the keys. Numbers use the step's digits (4 unless the lesson says), so a
 * screen can be checked against a lesson's table.
 *
 * The panes show the final distribution: the softmax of z' after every
 * value stage. Where a cutting stage looked at the same numbers (no stage
 * after it changes z') its threshold is drawn on them: the top-p line and
 * the min-p bar. Otherwise the title says what that stage saw instead.
 */
#include "tui/view.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "base/utf8.h"

#define LESSON_MIN_ROWS 2 /* rows kept for the lesson text above the panes */
#define SIDE_MIN_W      40
#define SIDE_MAX_W      60
#define STATUS_ROWS     2
#define TOKEN_W         8
#define TEXT_LINES_MAX  400
#define HELP_MAX_W      100
#define ROWS_MAX        512

/* ---- layout ---------------------------------------------------------------------- */

void layout_compute(int w, int h, int vocab_size, struct layout *l)
{
    memset(l, 0, sizeof *l);
    if (w < VIEW_MIN_W || h < VIEW_MIN_H)
        return;
    l->ok = 1;
    l->title = (struct rect){ 0, 0, w, 1 };
    l->bottom = (struct rect){ 0, h - 1, w, 1 };
    l->status = (struct rect){ 0, h - 1 - STATUS_ROWS, w, STATUS_ROWS };
    int top = 1, body = h - 2 - STATUS_ROWS;
    int want = 1 + vocab_size; /* a title row and one row per token */
    int px = 0, pw = w, ptop = top, pane_h;
    if (w >= VIEW_SIDE_W) {
        l->side = 1;
        int lw = w / 3;
        lw = lw < SIDE_MIN_W ? SIDE_MIN_W : lw > SIDE_MAX_W ? SIDE_MAX_W : lw;
        pw = w - lw;
        l->lesson = (struct rect){ pw, top, lw, body };
        /* Panes as tall as their tokens need, the rest of the column left empty below. */
        pane_h = want < body / 2 ? want : body / 2;
    } else {
        /* The lesson text keeps LESSON_MIN_ROWS and gets what the panes leave. */
        int most = (body - LESSON_MIN_ROWS) / 2;
        pane_h = want < most ? want : most;
        int lesson_h = body - 2 * pane_h;
        l->lesson = (struct rect){ 0, top, w, lesson_h };
        ptop = top + lesson_h;
    }
    int half_w = pw / 2;
    l->pane[PANE_LOGITS] = (struct rect){ px, ptop, half_w, pane_h };
    l->pane[PANE_EXP] = (struct rect){ px + half_w, ptop, pw - half_w, pane_h };
    l->pane[PANE_PROB] = (struct rect){ px, ptop + pane_h, half_w, pane_h };
    l->pane[PANE_CUM] = (struct rect){ px + half_w, ptop + pane_h, pw - half_w, pane_h };
}

/* ---- helpers --------------------------------------------------------------------- */

static int digits_of(const struct app *a)
{
    return a->L.steps[a->cur_step - 1].digits;
}

static const char *glyph(const struct screen *s, const char *utf8, const char *ascii)
{
    return s->utf8 ? utf8 : ascii;
}

/* The rows a pane shows, in display order: by id when every token fits (as
 * the lessons' tables are), else the most likely ones by rank, with the last
 * row left for the "... more" line. */
static int pane_order(const struct app *a, int rows, int by_rank, int *ids)
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
static void more_line(const struct app *a, struct screen *s, struct rect r, int shown)
{
    const struct trace *t = &a->t;
    int y = r.y + 1 + shown;
    if (shown >= t->vocab_size || shown <= 0 || y >= r.y + r.h || app_hidden(a))
        return;
    int count, kept;
    double mass;
    report_tail(t, shown, &count, &mass, &kept);
    screen_printf(s, r.x + 1, y, r.w - 2, COL_REMOVED, 0, "... %d more tokens, p %.4f", count,
                  mass);
}

static int is_chosen(const struct app *a, int id)
{
    const struct app_entry *en = app_shown_entry(a);
    return (en && en->choice == id) || (!en && a->show_u && a->t.choice.id == id);
}

/* The token's name; in the panes of what stages removed, a removed token is dimmed. */
static void draw_token(const struct app *a, struct screen *s, int x, int y,
                       const struct trace_row *row, int dim_removed)
{
    char esc[96], pad[96];
    int attr = 0, col = COL_DEFAULT;
    if (is_chosen(a, row->id)) {
        col = COL_CHOSEN;
        attr = ATTR_BOLD | ATTR_REVERSE;
    } else if (dim_removed && row->removed_by != TRACE_KEPT) {
        col = COL_REMOVED;
        attr = ATTR_DIM;
    }
    utf8_escape(vocab_token(&a->L.vocab, row->id), esc, sizeof esc);
    utf8_pad(esc, TOKEN_W - 1, 0, pad, sizeof pad);
    screen_text(s, x, y, TOKEN_W - 1, pad, col, attr);
}

static void pane_title(struct screen *s, struct rect r, const char *left, const char *right)
{
    screen_fill(s, (struct rect){ r.x, r.y, r.w, 1 }, ' ', COL_TITLE, ATTR_REVERSE);
    screen_text(s, r.x + 1, r.y, r.w - 2, left, COL_TITLE, ATTR_REVERSE | ATTR_BOLD);
    int rw = utf8_width(right);
    int lw = utf8_width(left);
    if (rw > r.w - lw - 4)
        rw = r.w - lw - 4;
    if (rw > 0)
        screen_text(s, r.x + r.w - rw - 1, r.y, rw, right, COL_TITLE, ATTR_REVERSE);
}

/* Whether the chain changes z' after position c (so a threshold drawn on
 * the final numbers would be in the wrong units). */
static int value_change_after(const struct app *a, int c)
{
    for (int j = c + 1; j < a->t.n_stages; j++)
        if (a->t.stages[j].active && stage_rewrites(&a->cur.sampler, a->t.stages[j].stage))
            return 1;
    return 0;
}

static int stage_index(const struct app *a, enum stage st)
{
    for (int c = 0; c < a->t.n_stages; c++)
        if (a->t.stages[c].stage == st)
            return c;
    return -1;
}

/* The probability mass (final distribution) still kept when stage c ran:
 * what it kept plus what it and the stages after it removed. */
static double mass_entering(const struct app *a, int c)
{
    double m = a->t.kept_mass;
    for (int j = c; j < a->t.n_stages; j++)
        m += a->t.stages[j].removed_mass;
    return m;
}

/* ---- the four panes ------------------------------------------------------------- */

static void draw_logits(const struct app *a, struct screen *s, struct rect r)
{
    const struct trace *t = &a->t;
    int d = digits_of(a);
    int ids[ROWS_MAX];
    int n = pane_order(a, r.h - 1, 0, ids);
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
    pane_title(s, r, changed ? "Logits z -> z'" : "Logits z", why);
    int numw = changed ? 7 + 9 : 7;
    int bx = r.x + 2 + TOKEN_W + numw, bw = r.x + r.w - 1 - bx;
    int half = bw / 2;
    int axis = bx + half;
    for (int i = 0; i < n; i++) {
        int y = r.y + 1 + i;
        const struct trace_row *row = row_of(a, ids[i]);
        draw_token(a, s, r.x + 1, y, row, 0);
        char z[32], adj[32];
        report_logit(z, sizeof z, row->logit, d);
        screen_printf(s, r.x + 1 + TOKEN_W, y, 7, COL_DEFAULT, 0, "%6s", z);
        if (changed) {
            report_logit(adj, sizeof adj, row->adjusted, d);
            int differs = row->adjusted != row->logit;
            screen_printf(s, r.x + 1 + TOKEN_W + 7, y, 9, differs ? COL_ACCENT : COL_DEFAULT,
                          differs ? ATTR_BOLD : 0, "%s%8s", glyph(s, "\u2192", ">"), adj);
        }
        if (bw < 4 || !isfinite(row->adjusted))
            continue;
        screen_put(s, axis, y, screen_glyph(s, 0x2502, '|'), COL_REMOVED, 0);
        double len = fabs(row->adjusted) / span * half;
        int clipped = len > half;
        if (clipped)
            len = half;
        if (row->adjusted >= 0)
            screen_bar(s, axis, y, len, COL_KEPT, 0);
        else
            screen_bar_left(s, axis, y, len, COL_NEG, 0);
        if (clipped) /* z' beyond the scale: the bar's end says so */
            screen_put(s, row->adjusted >= 0 ? axis + half - 1 : axis - half, y,
                       screen_glyph(s, row->adjusted >= 0 ? 0x25B8 : 0x25C2,
                                    row->adjusted >= 0 ? '>' : '<'),
                       row->adjusted >= 0 ? COL_KEPT : COL_NEG, ATTR_BOLD | ATTR_REVERSE);
    }
    more_line(a, s, r, n);
}

static void draw_exp(const struct app *a, struct screen *s, struct rect r)
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
    pane_title(s, r, given ? "Exponentials e^z' = p" : "Exponentials e^z'", title);
    int ids[ROWS_MAX];
    int n = pane_order(a, r.h - 1, 0, ids);
    double max = 0.0;
    for (int i = 0; i < n; i++)
        max = fmax(max, row_of(a, ids[i])->exp);
    int bx = r.x + 2 + TOKEN_W + 10, bw = r.x + r.w - 1 - bx;
    for (int i = 0; i < n; i++) {
        int y = r.y + 1 + i;
        const struct trace_row *row = row_of(a, ids[i]);
        draw_token(a, s, r.x + 1, y, row, 0);
        if (hidden && !given) {
            screen_text(s, r.x + 1 + TOKEN_W, y, 10, "         ?", COL_DEFAULT, 0);
            continue;
        }
        char v[32];
        report_number(v, sizeof v, row->exp, d);
        screen_printf(s, r.x + 1 + TOKEN_W, y, 10, COL_DEFAULT, 0, "%10s", v);
        if (bw > 2 && max > 0 && isfinite(max))
            screen_bar(s, bx, y, row->exp / max * bw, COL_KEPT, 0);
    }
    more_line(a, s, r, n);
}

static void draw_prob(const struct app *a, struct screen *s, struct rect r)
{
    const struct trace *t = &a->t;
    int d = digits_of(a), hidden = app_hidden(a);
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
    if (hidden)
        snprintf(title, sizeof title, "kept ?");
    else if (bar_other) /* the bar was drawn on numbers a later stage changed */
        snprintf(title, sizeof title, "min-p cut before T");
    else if (bar >= 0)
        snprintf(title, sizeof title, "min-p bar %.*f %s kept %d/%d", d, bar,
                 glyph(s, "\u250a", "|"), t->kept_count, t->vocab_size);
    else
        snprintf(title, sizeof title, "kept %d/%d, mass %.*f", t->kept_count, t->vocab_size, d,
                 t->kept_mass);
    pane_title(s, r, "Probabilities p", title);
    int ids[ROWS_MAX];
    int n = pane_order(a, r.h - 1, 0, ids);
    int trunc = t->kept_count < t->vocab_size;
    int numw = 7 + (trunc ? 9 : 0);
    int bx = r.x + 2 + TOKEN_W + numw, bw = r.x + r.w - 1 - bx;
    for (int i = 0; i < n; i++) {
        int y = r.y + 1 + i;
        const struct trace_row *row = row_of(a, ids[i]);
        draw_token(a, s, r.x + 1, y, row, !hidden);
        if (hidden && !given) {
            screen_text(s, r.x + 1 + TOKEN_W, y, 7, "     ?", COL_DEFAULT, 0);
            continue;
        }
        char p[32], f[32];
        int kept = row->removed_by == TRACE_KEPT;
        report_number(p, sizeof p, row->prob, d);
        screen_printf(s, r.x + 1 + TOKEN_W, y, 7, kept || hidden ? COL_DEFAULT : COL_REMOVED,
                      kept || hidden ? 0 : ATTR_DIM, "%6s", p);
        if (trunc && !hidden) {
            if (kept) {
                report_number(f, sizeof f, row->final, d);
                screen_printf(s, r.x + 1 + TOKEN_W + 7, y, 9, COL_ACCENT, ATTR_BOLD, "%s%7s",
                              glyph(s, "\u2192", ">"), f);
            } else {
                screen_printf(s, r.x + 1 + TOKEN_W + 7, y, 9, COL_REMOVED, ATTR_DIM, "%s%-7s",
                              glyph(s, "\u00d7", "-"), report_removed_name(row->removed_by));
            }
        }
        if (bw < 3 || hidden)
            continue;
        if (kept)
            screen_bar(s, bx, y, (trunc ? row->final : row->prob) * bw, COL_KEPT, 0);
        else
            for (int x = 0; x < (int)lround(row->prob * bw); x++)
                screen_put(s, bx + x, y, screen_glyph(s, 0x2591, '.'), COL_REMOVED, ATTR_DIM);
        if (bar >= 0) {
            int x = bx + (int)lround(bar * bw);
            if (x < bx + bw)
                screen_put(s, x, y, screen_glyph(s, 0x250a, '|'), COL_U, ATTR_BOLD);
        }
    }
    more_line(a, s, r, n);
}

static void draw_cum(const struct app *a, struct screen *s, struct rect r)
{
    const struct trace *t = &a->t;
    int d = digits_of(a), hidden = app_hidden(a);
    const struct app_entry *en = app_shown_entry(a);
    int show_u = ((en && en->sampled) || (!en && a->show_u && t->choice.sampled)) && !hidden;
    /* The top-p line: top-p's running sum reached p over the tokens it saw.
     * On these numbers that is p times the mass still kept when it ran --
     * unless z' changed after it, when its numbers were others. */
    int pc = stage_index(a, STAGE_TOP_P);
    double p = a->cur.sampler.top_p, line = -1.0;
    int p_other = 0;
    if (pc >= 0 && t->stages[pc].active) {
        if (value_change_after(a, pc))
            p_other = 1;
        else
            line = p * mass_entering(a, pc);
    }
    /* The draw compares u with the renormalized cumulative; on this scale
     * (when the kept tokens lead the ranking, as every cut leaves them) that
     * point is u times the kept mass. */
    double u_at = t->choice.u * t->kept_mass;
    char title[128] = "";
    if (show_u && t->kept_mass < 1.0)
        snprintf(title, sizeof title, "u %.4f%s%.4f=%.4f%s", t->choice.u, glyph(s, "\u00d7", "x"),
                 t->kept_mass, u_at, glyph(s, "\u25c6", "*"));
    else if (show_u)
        snprintf(title, sizeof title, "u %.4f %s", t->choice.u, glyph(s, "\u25c6", "*"));
    else if (line >= 0)
        snprintf(title, sizeof title, "top-p %s %.*f", glyph(s, "\u250a", "|"), d, line);
    else if (p_other)
        snprintf(title, sizeof title, "top-p cut before T");
    pane_title(s, r, "Cumulative", title);
    int ids[ROWS_MAX];
    int n = pane_order(a, r.h - 1, 1, ids);
    int bx = r.x + 2 + TOKEN_W + 7, bw = r.x + r.w - 1 - bx;
    for (int i = 0; i < n; i++) {
        int y = r.y + 1 + i;
        const struct trace_row *row = &t->rows[i];
        draw_token(a, s, r.x + 1, y, row, !hidden);
        if (hidden) {
            screen_text(s, r.x + 1 + TOKEN_W, y, 7, "     ?", COL_DEFAULT, 0);
            continue;
        }
        char c[32];
        report_number(c, sizeof c, row->cum, d);
        int kept = row->removed_by == TRACE_KEPT;
        screen_printf(s, r.x + 1 + TOKEN_W, y, 7, kept ? COL_DEFAULT : COL_REMOVED,
                      kept ? 0 : ATTR_DIM, "%6s", c);
        if (bw < 4)
            continue;
        double from = row->cum - row->prob;
        int x0 = bx + (int)floor(from * bw);
        double len = row->prob * bw - (x0 - bx - from * bw);
        if (kept)
            screen_bar(s, x0, y, len < 0.2 ? 0.2 : len, COL_KEPT, 0);
        else
            for (int x = x0; x < bx + (int)lround(row->cum * bw) && x < bx + bw; x++)
                screen_put(s, x, y, screen_glyph(s, 0x2591, '.'), COL_REMOVED, ATTR_DIM);
        if (line >= 0) {
            int px = bx + (int)lround(line * bw);
            if (px < bx + bw)
                screen_put(s, px, y, screen_glyph(s, 0x250a, '|'), COL_U, ATTR_BOLD);
        }
        if (show_u && row->id == t->choice.id) {
            int ux = bx + (int)floor(u_at * bw);
            if (ux >= bx + bw)
                ux = bx + bw - 1;
            screen_put(s, ux, y, screen_glyph(s, 0x25c6, '*'), COL_U, ATTR_BOLD | ATTR_REVERSE);
        }
    }
    more_line(a, s, r, n);
}

/* ---- the lesson pane ---------------------------------------------------------- */

struct lines {
    int n;
    char text[TEXT_LINES_MAX][256];
    int color[TEXT_LINES_MAX];
    int attr[TEXT_LINES_MAX];
};

static void add_line(struct lines *L, const char *text, int color, int attr)
{
    if (L->n == TEXT_LINES_MAX)
        return;
    utf8_copy(L->text[L->n], sizeof L->text[0], text);
    L->color[L->n] = color;
    L->attr[L->n] = attr;
    L->n++;
}

/* Fills width columns per line with the words of one paragraph. */
static void add_wrapped(struct lines *L, const char *lead, const char *text, int width, int color,
                        int attr)
{
    char line[256];
    int lead_w = utf8_width(lead);
    utf8_copy(line, sizeof line, lead);
    int col = lead_w;
    const char *p = text;
    while (*p) {
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
        if (col > lead_w && col + 1 + ww > width) {
            add_line(L, line, color, attr);
            snprintf(line, sizeof line, "%*s", lead_w, "");
            col = lead_w;
        }
        if (col > lead_w)
            utf8_append(line, sizeof line, " ");
        utf8_append(line, sizeof line, word);
        col += (col > lead_w ? 1 : 0) + ww;
        p = e;
    }
    if (col > lead_w)
        add_line(L, line, color, attr);
}

static void add_paragraphs(struct lines *L, const char *lead, const char *text, int width,
                           int color, int attr)
{
    char para[2048];
    const char *p = text;
    int first = 1;
    while (*p) {
        size_t n = strcspn(p, "\n");
        snprintf(para, sizeof para, "%.*s", (int)n, p);
        add_wrapped(L, first ? lead : "", para, width, color, attr);
        first = 0;
        p += n + (p[n] == '\n');
    }
}

/* The toy LM head at work: h, its RMSNorm, and each row's dot product. */
static void head_lines(const struct app *a, struct lines *L, int width)
{
    const struct lesson_step *S = &a->L.steps[a->cur_step - 1];
    const struct lesson_head *H = &a->L.head;
    if (S->given != GIVEN_HIDDEN || !H->d)
        return;
    char buf[256], num[32];
    int d = H->d, k;
    double ss = 0.0;
    for (int i = 0; i < d; i++)
        ss += S->hidden[i] * S->hidden[i];
    k = snprintf(buf, sizeof buf, "h = [");
    for (int i = 0; i < d && k < (int)sizeof buf - 16; i++) {
        report_logit(num, sizeof num, S->hidden[i], 4);
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%s", i ? ", " : "", num);
    }
    report_logit(num, sizeof num, sqrt(ss / d + H->eps), 4);
    snprintf(buf + k, sizeof buf - (size_t)k, "], rms %s", num);
    add_line(L, buf, COL_ACCENT, ATTR_BOLD);
    k = snprintf(buf, sizeof buf, "h / rms = [");
    for (int i = 0; i < d && k < (int)sizeof buf - 16; i++) {
        report_logit(num, sizeof num, S->normed[i], 4);
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%s", i ? ", " : "", num);
    }
    snprintf(buf + k, sizeof buf - (size_t)k, "]");
    add_line(L, buf, COL_ACCENT, ATTR_BOLD);
    for (int v = 0; v < a->L.vocab.n; v++) {
        char esc[64];
        utf8_escape(vocab_token(&a->L.vocab, v), esc, sizeof esc);
        k = snprintf(buf, sizeof buf, "%-6s row [", esc);
        for (int i = 0; i < d && k < (int)sizeof buf - 24; i++) {
            report_logit(num, sizeof num, H->w[(size_t)v * (size_t)d + (size_t)i], 4);
            k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%s", i ? " " : "", num);
        }
        report_logit(num, sizeof num, source_logit(&a->source, a->cur_step, v), 4);
        snprintf(buf + k, sizeof buf - (size_t)k, "] . h/rms = %s", num);
        add_line(L, buf, COL_DEFAULT, 0);
    }
    if (H->real_vocab && H->real_hidden) {
        snprintf(buf, sizeof buf,
                 "Llama 3 8B: %ld x %ld = %lld weights, %.2f GB in bf16, read every step",
                 H->real_vocab, H->real_hidden, (long long)H->real_vocab * H->real_hidden,
                 2.0 * (double)H->real_vocab * (double)H->real_hidden / 1e9);
        add_wrapped(L, "", buf, width, COL_ACCENT, 0);
    }
    add_line(L, "", COL_DEFAULT, 0);
}

static void lesson_lines(const struct app *a, struct lines *L, int width)
{
    const struct lesson_step *S = &a->L.steps[a->cur_step - 1];
    const struct app_entry *en = app_shown_entry(a);
    char buf[512];
    if (en && en->stop.rule != STOP_NONE) {
        char why[160];
        stop_describe(&en->stop, &en->settings, &a->L.vocab, why, sizeof why);
        snprintf(buf, sizeof buf, "Stopped: %s.%s", why,
                 a->pos < a->n_hist - 1 ? ""
                 : a->end == END_STOP && a->resume_step
                     ? " Space goes on to the next step."
                     : " Home starts again, n opens the next lesson.");
        add_wrapped(L, "", buf, width, COL_WARN, ATTR_BOLD);
    } else if (a->end == END_LESSON && a->pos == a->n_hist - 1) {
        add_wrapped(L, "", "End of the lesson: n opens the next one, Home starts again.", width,
                    COL_ACCENT, ATTR_BOLD);
    }
    if (!en && a->off_script) {
        snprintf(buf, sizeof buf, "Off the lesson's path: these logits were written for \"%s\".",
                 a->script_text);
        add_wrapped(L, "", buf, width, COL_WARN, 0);
    }
    if (a->cur_step == 1 && a->L.text && !en) {
        add_paragraphs(L, "", a->L.text, width, COL_DEFAULT, ATTR_BOLD);
        add_line(L, "", COL_DEFAULT, 0);
    }
    head_lines(a, L, width);
    if (S->text)
        add_paragraphs(L, "", S->text, width, COL_DEFAULT, 0);
    if (S->given == GIVEN_PROBS)
        add_wrapped(L, "",
                    "This step gives probabilities: logitlab uses ln p as the logits, so "
                    "e^z' is p again.",
                    width, COL_REMOVED, 0);
    if (S->solution && !app_hidden(a))
        add_paragraphs(L, "Solution: ", S->solution, width, COL_GOOD, 0);
    const struct app_answer *ans = en ? en->ans : a->ans;
    int n_ans = en ? en->n_ans : S->n_ask;
    if (S->n_ask > 0 && n_ans > 0) {
        add_line(L, "", COL_DEFAULT, 0);
        add_line(L, app_hidden(a) ? "Exercise: a answers, v shows the solution." : "Exercise:",
                 COL_ACCENT, ATTR_BOLD);
        for (int i = 0; i < S->n_ask; i++) {
            char what[64], want[32], got[48] = "";
            const struct ask *q = &S->ask[i];
            int qd = q->digits >= 0 ? q->digits : S->digits;
            ask_describe(&a->L, q, what, sizeof what);
            report_number(want, sizeof want, report_ask_value(&a->t, q), qd);
            if (ans[i].given)
                snprintf(got, sizeof got, "you %.*f %s", qd, ans[i].value,
                         ans[i].ok ? "right" : "wrong");
            int asking = a->mode == MODE_ANSWER && i == a->ask_index && !en;
            snprintf(buf, sizeof buf, "%s%-9s %9s  %s", asking ? "> " : "  ", what,
                     app_hidden(a) ? "?" : want, got);
            add_line(L, buf, ans[i].given ? (ans[i].ok ? COL_GOOD : COL_WARN) : COL_DEFAULT,
                     asking ? ATTR_BOLD : 0);
        }
    }
    if (S->note && !app_hidden(a))
        add_paragraphs(L, "Note: ", S->note, width, COL_REMOVED, 0);
    if (S->n_try > 0 && !en) {
        add_line(L, "Try (. steps through these):", COL_ACCENT, ATTR_BOLD);
        for (int i = 0; i < S->n_try; i++) {
            snprintf(buf, sizeof buf, "%s%d ", i == a->try_index ? "> " : "  ", i + 1);
            add_wrapped(L, buf, S->tries[i].text, width, COL_ACCENT, 0);
        }
    }
    if (a->cur.sampler.penalty_formula == PENALTY_LESSON &&
        a->cur.sampler.repetition_penalty != 1.0)
        add_wrapped(L, "",
                    "Warning: the lesson's penalty formula divides every seen logit, which "
                    "raises a negative one; the engines multiply those instead (f switches).",
                    width, COL_WARN, 0);
}

/* The first line of the lesson pane: the text so far and the context ids. */
/* The text of s without its first cols columns, behind an ellipsis. */
static const char *skip_cols(const char *s, int cols)
{
    int done = 0;
    while (*s && done < cols) {
        uint32_t cp;
        int n = utf8_decode(s, strlen(s), &cp);
        done += n ? utf8_cp_width(cp) : 1;
        s += n ? n : 1;
    }
    return s;
}

/* The text line of a byte-level vocabulary, streamed: a character whose
 * bytes are split across tokens shows once its last byte has come (until
 * then "+N bytes" says what waits), the newest token's text is marked, and
 * when the line is too long its start gives way to the end. */
static int draw_stream_line(const struct app *a, struct screen *s, int x, int y, int w)
{
    const struct app_entry *en = app_shown_entry(a);
    const struct vocab *v = &a->L.vocab;
    int plen = source_prompt_len(&a->L, a->cur_len);
    int col = x + screen_text(s, x, y, w, "Text: ", COL_ACCENT, ATTR_BOLD);
    static char prompt[2048], gen[4096], e1[4096], e2[4096], e3[8192];
    static int ids[APP_MAX_HISTORY + LESSON_MAX_CONTEXT + 1];
    vocab_detok(v, a->cur_ctx, plen, prompt, sizeof prompt);
    int n = 0;
    for (int i = plen; i < a->cur_len && n < (int)(sizeof ids / sizeof ids[0]) - 1; i++)
        ids[n++] = a->cur_ctx[i];
    size_t la = vocab_detok(v, ids, n, gen, sizeof gen);
    if (la >= sizeof gen)
        la = sizeof gen - 1;
    size_t ra = vocab_complete_prefix(gen, la);
    if (en)
        ids[n++] = en->choice;
    size_t lb = vocab_detok(v, ids, n, gen, sizeof gen);
    if (lb >= sizeof gen)
        lb = sizeof gen - 1;
    size_t rb = vocab_complete_prefix(gen, lb);
    if (ra > rb)
        ra = rb;
    char pend[32] = "";
    if (lb > rb)
        snprintf(pend, sizeof pend, " +%zu byte%s", lb - rb, lb - rb == 1 ? "" : "s");
    char keep = gen[rb];
    gen[rb] = '\0';
    utf8_escape(gen + ra, e2, sizeof e2);
    gen[ra] = '\0';
    utf8_escape(gen, e1, sizeof e1);
    gen[rb] = keep;
    utf8_escape(prompt, e3, sizeof e3);
    const char *p = e3, *g = e1;
    int room = x + w - col, ell = utf8_width("\u2026");
    int total = utf8_width(p) + utf8_width(g) + utf8_width(e2) + utf8_width(pend);
    if (total > room) {
        /* Cut the oldest text first: the prompt, then the generated part. */
        int over = total - room + ell;
        int wp = utf8_width(p);
        p = skip_cols(p, over);
        if (over > wp)
            g = skip_cols(g, over - wp);
        col += screen_text(s, col, y, ell, glyph(s, "\u2026", "~"), COL_REMOVED, 0);
    }
    col += screen_text(s, col, y, x + w - col, p, COL_DEFAULT, ATTR_DIM);
    col += screen_text(s, col, y, x + w - col, g, COL_DEFAULT, ATTR_BOLD);
    col += screen_text(s, col, y, x + w - col, e2, COL_CHOSEN, ATTR_BOLD | ATTR_REVERSE);
    col += screen_text(s, col, y, x + w - col, pend, COL_REMOVED, ATTR_DIM);
    return col;
}

static int draw_text_line(const struct app *a, struct screen *s, int x, int y, int w)
{
    if (a->L.vocab.byte_level)
        return draw_stream_line(a, s, x, y, w);
    const struct app_entry *en = app_shown_entry(a);
    int plen = source_prompt_len(&a->L, a->cur_len);
    int col = x;
    col += screen_text(s, col, y, w, "Text: ", COL_ACCENT, ATTR_BOLD);
    char buf[1024];
    vocab_detok(&a->L.vocab, a->cur_ctx, plen, buf, sizeof buf);
    if (plen == 0 && a->L.prompt_text)
        utf8_copy(buf, sizeof buf, a->L.prompt_text);
    if (a->cur_len == 0 && !a->L.prompt_text)
        utf8_copy(buf, sizeof buf, "(none: this step has no context)");
    char esc[1024];
    utf8_escape(buf, esc, sizeof esc);
    col += screen_text(s, col, y, x + w - col, esc, COL_DEFAULT, ATTR_DIM);
    if (a->cur_len > plen) {
        vocab_detok(&a->L.vocab, a->cur_ctx + plen, a->cur_len - plen, buf, sizeof buf);
        utf8_escape(buf, esc, sizeof esc);
        col += screen_text(s, col, y, x + w - col, plen && a->L.vocab.join_space ? " " : "",
                           COL_DEFAULT, 0);
        col += screen_text(s, col, y, x + w - col, esc, COL_DEFAULT, ATTR_BOLD);
    }
    if (en) {
        int one[1] = { en->choice };
        vocab_detok(&a->L.vocab, one, 1, buf, sizeof buf);
        utf8_escape(buf, esc, sizeof esc);
        if (esc[0]) {
            int sep = a->L.vocab.join_space && (a->cur_len > 0 || a->L.prompt_text);
            col += screen_text(s, col, y, x + w - col, sep ? " " : "", COL_DEFAULT, 0);
            col += screen_text(s, col, y, x + w - col, esc, COL_CHOSEN, ATTR_BOLD | ATTR_REVERSE);
        }
    }
    return col;
}

static void lesson_text(const struct app *a, struct lines *L, int width)
{
    L->n = 0;
    lesson_lines(a, L, width);
}

void view_draw_lesson(const struct app *a, struct screen *s, struct rect r, int side)
{
    if (r.h <= 0)
        return;
    int x = r.x + (side ? 2 : 1), w = r.w - (side ? 3 : 2);
    int y = r.y;
    if (side)
        for (int i = 0; i < r.h; i++)
            screen_put(s, r.x, r.y + i, screen_glyph(s, 0x2502, '|'), COL_REMOVED, 0);
    int col = draw_text_line(a, s, x, y, w);
    const struct app_entry *en = app_shown_entry(a);
    static struct lines lines; /* 100 KB: kept off the stack; the view runs in one thread */
    lesson_text(a, &lines, w);
    int room = r.y + r.h - y - 1;
    int first = a->scroll;
    if (first > lines.n - room)
        first = lines.n - room;
    if (first < 0)
        first = 0;
    /* The ids, and whether more text lies below, go at the right of the first line. */
    char ids[512], more[32] = "";
    int k = snprintf(ids, sizeof ids, "ids [");
    for (int i = 0; i < a->cur_len && k < (int)sizeof ids - 24; i++)
        k += snprintf(ids + k, sizeof ids - (size_t)k, "%s%d", i ? ", " : "", a->cur_ctx[i]);
    if (en)
        snprintf(ids + k, sizeof ids - (size_t)k, "] + %d", en->choice);
    else
        snprintf(ids + k, sizeof ids - (size_t)k, "]");
    if (first + room < lines.n)
        snprintf(more, sizeof more, "  %s more (l)", glyph(s, "\u2193", "v"));
    int mw = utf8_width(more), iw = utf8_width(ids);
    if (col + 2 + iw + mw <= x + w)
        screen_text(s, x + w - iw - mw, y, iw, ids, COL_REMOVED, 0);
    if (mw)
        screen_text(s, x + w - mw, y, mw, more, COL_ACCENT, ATTR_BOLD);
    y++;
    for (int i = 0; i < room && first + i < lines.n; i++) {
        int li = first + i;
        screen_text(s, x, y + i, w, lines.text[li], lines.color[li], lines.attr[li]);
    }
}

void view_measure(const struct app *a, int w, int h, int *page, int *max_scroll)
{
    static struct lines lines;
    int width, room;
    if (a->mode == MODE_TEXT) {
        width = w - 4;
        room = h - 3;
    } else {
        struct layout l;
        layout_compute(w, h, a->t.vocab_size, &l);
        width = l.lesson.w - (l.side ? 3 : 2);
        room = l.lesson.h - 1;
    }
    if (width < 10 || room < 1) {
        *page = 1;
        *max_scroll = 0;
        return;
    }
    lesson_text(a, &lines, width);
    *page = room;
    *max_scroll = lines.n > room ? lines.n - room : 0;
}

/* ---- title, status, bottom ----------------------------------------------------- */

static void draw_title(const struct app *a, struct screen *s, struct rect r)
{
    screen_fill(s, r, ' ', COL_STATUS, ATTR_REVERSE);
    char right[96], left[512];
    const struct app_entry *en = app_shown_entry(a);
    if (a->batch_on)
        snprintf(right, sizeof right, "  batch of %d: step %d, %d running ", a->batch.n,
                 a->batch.steps, batch_running(&a->batch));
    else if (a->lesson_index >= 0)
        snprintf(right, sizeof right, "  step %d/%d%s  lesson %d/%d ", a->cur_step, a->L.n_steps,
                 en ? " (taken)" : "", a->lesson_index + 1, a->cat.n);
    else
        snprintf(right, sizeof right, "  step %d/%d%s ", a->cur_step, a->L.n_steps,
                 en ? " (taken)" : "");
    snprintf(left, sizeof left, " logitlab  %s: %s", a->L.id, a->L.title);
    int rw = utf8_width(right), room = r.w - rw;
    if (utf8_width(left) > room) {
        /* Cut the title where it must, and say so. */
        char cut[512];
        utf8_pad(left, room - 1, 0, cut, sizeof cut);
        utf8_append(cut, sizeof cut, glyph(s, "\u2026", "~"));
        utf8_copy(left, sizeof left, cut);
    }
    screen_text(s, r.x, r.y, room, left, COL_STATUS, ATTR_REVERSE | ATTR_BOLD);
    screen_text(s, r.x + r.w - rw, r.y, rw, right, COL_STATUS, ATTR_REVERSE);
}

/* Where the step on screen was computed: a lesson's table and captured
 * logits are sampled on the CPU; a model lesson's LM head (and the batch)
 * runs on the backend. */
static const char *backend_name(const struct app *a)
{
    const struct backend *b = a->opt.backend;
    return b && b->ops && (a->batch_on || source_follows_context(&a->source)) ? b->ops->name
                                                                              : "CPU";
}

/* The right end of the status line: the backend and what the last
 * computation cost -- in the batch view, the device's own time (CUDA
 * events; on the CPU the same as its compute time) and the wall time of the
 * whole step, and why the CPU is used when auto chose it. */
static void status_right(const struct app *a, const struct screen *s, int room, char *buf, size_t n)
{
    if (!a->batch_on) {
        snprintf(buf, n, " %s %.0f %s ", backend_name(a), a->recompute_us,
                 glyph(s, "\u00b5s", "us"));
        return;
    }
    const struct batch *b = &a->batch;
    double kernel = (b->head_ran ? b->head_kernel_ms : 0.0) + b->kernel_ms;
    snprintf(buf, n, " %s  kernel %.3f ms  step %.2f ms ", backend_name(a), kernel, b->step_ms);
    /* Narrow: the settings on the left come first, then the step's time. */
    if (utf8_width(buf) > room)
        snprintf(buf, n, " %s kernel %.1f step %.1f ms ", backend_name(a), kernel, b->step_ms);
    if (utf8_width(buf) > room)
        snprintf(buf, n, " %s %.1f ms ", backend_name(a), b->step_ms);
}

/* A setting's value on the status line: an order with its stages when it
 * is custom, the stop strings themselves, else the value as typed back (or
 * the setting's word for its default). */
static void status_value(const struct settings *st, const struct setting_info *i, char *buf,
                         size_t n)
{
    const struct sampler_settings *m = &st->sampler;
    if (i->kind == SK_ORDER) {
        char chain[128] = "";
        if (m->chain.preset == PRESET_CUSTOM)
            chain_short(&m->chain, chain, sizeof chain);
        snprintf(buf, n, "%s%s%s%s", preset_name(m->chain.preset), chain[0] ? " " : "", chain,
                 m->chain.topk_keep_ties ? " (k ties)" : "");
    } else if (i->kind == SK_STOP) {
        snprintf(buf, n, "%s", st->n_stop ? "" : "-");
        for (int k = 0; k < st->n_stop; k++) {
            char esc[2 * STOP_LEN + 1];
            utf8_escape(st->stop[k], esc, sizeof esc);
            utf8_append(buf, n, k ? ",\"" : "\"");
            utf8_append(buf, n, esc);
            utf8_append(buf, n, "\"");
        }
    } else if (i->status_off && setting_get(st, i) == i->def) {
        snprintf(buf, n, "%s", i->status_off);
    } else {
        setting_value(st, i, buf, n);
    }
}

/* One setting of the status line: "label value", then what a reader must
 * know -- that the chain leaves its stage out, that it makes the step
 * greedy -- and, when on, the settings that say how its stage works
 * ("rep 1.2 engine/generated/all"). */
static void status_item(const struct app *a, const struct settings *st,
                        const struct setting_info *i, char *buf, size_t n)
{
    const struct sampler_settings *m = &st->sampler;
    char v[96];
    status_value(st, i, v, sizeof v);
    snprintf(buf, n, "%s%s%s", i->status, i->status[0] ? " " : "", v);
    if (i->stage == STAGE_NONE || !(i->flags & SET_ACTIVATES))
        return;
    enum stage sg = (enum stage)i->stage;
    if (stage_active(m, sg, a->t.vocab_size) && !chain_has(&m->chain, sg))
        utf8_append(buf, n, " (unused)");
    if ((STAGES[sg].flags & SF_ZERO_CUTS) && stage_cuts(m, sg))
        utf8_append(buf, n, " (greedy)");
    if (setting_of_stage(i->stage) != i || !setting_is_on(i, m, INT_MAX))
        return;
    int k = 0;
    for (const struct setting_info *j = SETTINGS_INFO; j->name; j++)
        if (j->stage == i->stage && (j->flags & SET_MODIFIER) && j->status) {
            char mv[64];
            status_value(st, j, mv, sizeof mv);
            utf8_append(buf, n, k++ ? "/" : " ");
            if (j->status[0] && !(j->status_off && setting_get(st, j) == j->def)) {
                utf8_append(buf, n, j->status);
                utf8_append(buf, n, " ");
            }
            utf8_append(buf, n, mv);
        }
}

/* A line of the status bar: the settings always shown there, then those
 * shown when on, each "label value", two spaces apart. */
static void status_line(const struct app *a, const struct settings *st, int second, char *buf,
                        size_t n)
{
    snprintf(buf, n, " ");
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
            int always = (i->flags & SET_STATUS_ALWAYS) != 0;
            if (!i->status || (i->flags & SET_MODIFIER) || !(i->flags & SET_LINE2) != !second ||
                always != (pass == 0) || (!always && !(setting_get(st, i) != i->def)))
                continue;
            char item[160];
            status_item(a, st, i, item, sizeof item);
            if (k++)
                utf8_append(buf, n, "  ");
            utf8_append(buf, n, item);
        }
}

static void draw_status(const struct app *a, struct screen *s, struct rect r)
{
    const struct settings *st = a->batch_on ? &a->batch.row[a->batch_sel].set : &a->cur;
    screen_fill(s, r, ' ', COL_STATUS, 0);
    char left[320];
    status_line(a, st, 0, left, sizeof left);
    char right[96];
    status_right(a, s, r.w - utf8_width(left), right, sizeof right);
    int rw = utf8_width(right);
    screen_text(s, r.x, r.y, r.w - rw, left, COL_STATUS, ATTR_BOLD);
    screen_text(s, r.x + r.w - rw, r.y, rw, right, COL_STATUS, ATTR_REVERSE);
    char line2[512];
    status_line(a, st, 1, line2, sizeof line2);
    int used = screen_text(s, r.x, r.y + 1, r.w, line2, COL_STATUS, 0);
    /* In the batch view, where the backend does the work: why auto chose
     * the CPU (only a fallback has a reason), in the room the settings leave. */
    const struct backend *be = a->opt.backend;
    int room = r.w - used - 2;
    if (a->batch_on && be && be->why[0] && room >= 16) {
        char why[BACKEND_WHY_MAX + 4];
        snprintf(why, sizeof why, " %s ", be->why);
        int ww = utf8_width(why) < room ? utf8_width(why) : room;
        screen_text(s, r.x + r.w - ww, r.y + 1, ww, why, COL_WARN, 0);
    }
}

/* Key hints for the state the screen is in. */
static const char *hints(const struct app *a, const struct screen *s)
{
    if (a->batch_on)
        return s->utf8 ? "Space step all  \u2191\u2193 request  t/T k/K p/P m/M r/R o s x  "
                         "Home  B leave  ? q"
                       : "Space step all  Up/Down request  t/T k/K p/P m/M r/R o s x  Home  B "
                         "leave  ? q";
    if (app_hidden(a))
        return "a answer  v solution  Space answer  l text  ? help  q quit";
    if (a->pos < a->n_hist && a->end != END_NONE && a->pos == a->n_hist - 1)
        return a->end == END_STOP && a->resume_step
                   ? "Space next step  Left back  Home restart  n next lesson  ? help  q quit"
                   : "Home restart  n next lesson  Left back  l text  ? help  q quit";
    return s->utf8 ? "Space step  \u2190\u2192 steps  t/T k/K p/P m/M r/R  o  s  u  l  : cmd  "
                     "? help  q quit"
                   : "Space step  <- -> steps  t/T k/K p/P m/M r/R  o  s  u  l  : cmd  ? help  "
                     "q quit";
}

static void draw_bottom(const struct app *a, struct screen *s, struct rect r, struct rect status)
{
    if (a->mode == MODE_PROMPT || a->mode == MODE_ANSWER || a->mode == MODE_FIND) {
        char line[APP_INPUT_MAX + 64];
        snprintf(line, sizeof line, "%s%s",
                 a->mode == MODE_PROMPT ? ":"
                 : a->mode == MODE_FIND ? "/"
                                        : "> ",
                 a->input);
        int used = screen_text(s, r.x, r.y, r.w, line, COL_DEFAULT, ATTR_BOLD);
        screen_put(s, r.x + used, r.y, ' ', COL_DEFAULT, ATTR_REVERSE); /* the cursor */
        const char *hint = a->mode == MODE_PROMPT ? "name value, Enter runs, Esc cancels"
                           : a->mode == MODE_FIND
                               ? "token text (a space for a leading space) or id, Enter finds"
                               : a->msg;
        int hw = utf8_width(hint);
        if (used + 3 + hw <= r.w)
            screen_text(s, r.x + r.w - hw, r.y, hw, hint, COL_ACCENT, 0);
        else if (a->mode == MODE_ANSWER)
            screen_text(s, r.x, status.y + 1, r.w, hint, COL_ACCENT, ATTR_BOLD);
        return;
    }
    if (a->msg[0]) {
        /* A message longer than the line borrows the status lines above it. */
        int color = a->msg_warn ? COL_WARN : COL_ACCENT, attr = a->msg_warn ? ATTR_BOLD : 0;
        int width = utf8_width(a->msg);
        if (width <= r.w) {
            screen_text(s, r.x, r.y, r.w, a->msg, color, attr);
            return;
        }
        static struct lines wrapped;
        wrapped.n = 0;
        add_wrapped(&wrapped, "", a->msg, r.w, color, attr);
        int n = wrapped.n > 1 + status.h ? 1 + status.h : wrapped.n;
        for (int i = 0; i < n; i++) {
            int y = r.y - (n - 1) + i;
            screen_fill(s, (struct rect){ r.x, y, r.w, 1 }, ' ', COL_DEFAULT, 0);
            screen_text(s, r.x, y, r.w, wrapped.text[i], color, attr);
        }
        return;
    }
    screen_text(s, r.x, r.y, r.w, hints(a, s), COL_REMOVED, 0);
}

#define HELP_KEYS_W 14 /* the keys' column of the help screen */

/* The help screen: each action's keys and what it does (app_help_line),
 * its text wrapped beside the keys' column, centred on the screen. */
static void draw_help(const struct app *a, struct screen *s)
{
    char lines[64][160];
    int n = 0, w = HELP_MAX_W < s->w - 2 ? HELP_MAX_W : s->w - 2;
    char keys[96];
    const char *help;
    struct lines *wrapped = malloc(sizeof *wrapped);
    for (int i = 0; wrapped && n < 64 && app_help_line(a, i, keys, sizeof keys, &help); i++) {
        char lead[128];
        utf8_pad(keys, HELP_KEYS_W - 1, 0, lead, sizeof lead);
        utf8_append(lead, sizeof lead, " ");
        wrapped->n = 0;
        add_wrapped(wrapped, lead, help, w - 4, COL_DEFAULT, 0);
        for (int k = 0; k < wrapped->n && n < 64; k++)
            utf8_copy(lines[n++], sizeof lines[0], wrapped->text[k]);
    }
    free(wrapped);
    int h = n + 2 < s->h ? n + 2 : s->h;
    struct rect r = { (s->w - w) / 2, (s->h - h) / 2, w, h };
    screen_clear(s);
    screen_text(s, r.x + 2, r.y, w - 4, "Keys (any key closes this)", COL_ACCENT, ATTR_BOLD);
    for (int i = 0; i < n && i + 1 < h; i++)
        screen_text(s, r.x + 2, r.y + 1 + i, w - 4, lines[i], COL_DEFAULT, 0);
}

/* The lesson text on the whole screen, for reading it at a small size. */
static void draw_text_mode(const struct app *a, struct screen *s)
{
    static struct lines lines;
    screen_clear(s);
    int w = s->w - 4;
    lesson_text(a, &lines, w);
    draw_text_line(a, s, 2, 0, w);
    int room = s->h - 3;
    int first = a->scroll > lines.n - room ? lines.n - room : a->scroll;
    if (first < 0)
        first = 0;
    for (int i = 0; i < room && first + i < lines.n; i++)
        screen_text(s, 2, 2 + i, w, lines.text[first + i], lines.color[first + i],
                    lines.attr[first + i]);
    screen_printf(s, 0, s->h - 1, s->w, COL_REMOVED, 0,
                  "Up, Down, PgUp, PgDn scroll  any other key goes back   lines %d-%d of %d",
                  lines.n ? first + 1 : 0, first + room < lines.n ? first + room : lines.n,
                  lines.n);
}

/* ---- a full-size step ------------------------------------------------------------ */

/* One table row: rank, token, logit, exp, prob, cum, kept, final -- or,
 * while the draws are on, rank, token, logit, prob, final, kept and the
 * share of draws that came up with this token without and with the filters
 * -- then a bar of prob where there is room. */
static void big_row(const struct app *a, struct screen *s, int x, int y, int w, int rank,
                    const struct trace_row *row, double logit, int found)
{
    int d = digits_of(a);
    char tok[96], pad[96], lg[32], pr[32], cu[32], fi[32];
    utf8_escape(vocab_token(&a->L.vocab, row->id), tok, sizeof tok);
    utf8_pad(tok, 12, 0, pad, sizeof pad);
    report_number(lg, sizeof lg, logit, d);
    report_number(pr, sizeof pr, row->prob, d);
    report_number(cu, sizeof cu, row->cum, d);
    report_number(fi, sizeof fi, row->final, d);
    int kept = row->removed_by == TRACE_KEPT;
    const char *kc = kept ? "yes" : report_removed_name(row->removed_by);
    int col = kept ? COL_DEFAULT : COL_REMOVED, attr = kept ? 0 : ATTR_DIM;
    if (a->t.choice.id == row->id)
        col = COL_CHOSEN, attr = ATTR_BOLD | (is_chosen(a, row->id) ? ATTR_REVERSE : 0);
    if (found)
        col = COL_ACCENT, attr = ATTR_BOLD;
    char line[512];
    if (a->draws_ok) {
        const struct draws *dr = &a->draws;
        char c1[16] = "", c2[16] = "";
        if (!found && rank < dr->rows) {
            snprintf(c1, sizeof c1, "%.4f", (double)dr->c_plain[rank] / dr->n);
            snprintf(c2, sizeof c2, "%.4f", (double)dr->c_kept[rank] / dr->n);
        }
        snprintf(line, sizeof line, "%7d %s %8s %7s %7s %-6s %7s %7s", rank + 1, pad, lg, pr, fi,
                 kc, c1, c2);
    } else {
        snprintf(line, sizeof line, "%7d %s %8s %9.3e %7s %7s %-6s %7s", rank + 1, pad, lg,
                 row->exp, pr, cu, kc, fi);
    }
    int used = screen_text(s, x, y, w, line, col, attr);
    int bar = w - used - 2;
    if (bar > 2) /* whole cells only: prob <= 1 keeps it within bar */
        screen_bar(s, x + used + 1, y, floor(row->prob * bar), kept ? COL_KEPT : COL_REMOVED, 0);
}

static void big_table(const struct app *a, struct screen *s, struct rect r)
{
    const struct trace *t = &a->t;
    pane_title(s, r,
               a->draws_ok ? "   rank token           logit    prob   final kept     drawn  "
                             "drawn/kept"
                           : "   rank token           logit       exp    prob     cum kept     "
                             "final",
               "");
    if (app_hidden(a))
        return;
    int rows = r.h - 2; /* the title and the tail line */
    int found = a->find_id >= 0;
    if (found)
        rows--;
    if (rows > t->n_rows)
        rows = t->n_rows;
    for (int k = 0; k < rows; k++)
        big_row(a, s, r.x, r.y + 1 + k, r.w, k, &t->rows[k], t->rows[k].logit, 0);
    int y = r.y + 1 + (rows > 0 ? rows : 0);
    if (rows > 0 && rows < t->vocab_size) {
        int count, kept;
        double mass;
        report_tail(t, rows, &count, &mass, &kept);
        char line[256];
        int n =
            snprintf(line, sizeof line, "  ... %d more tokens: p %.4f, %d kept", count, mass, kept);
        if (a->draws_ok) {
            const struct draws *dr = &a->draws;
            long tp = dr->tail_plain, tk = dr->tail_kept;
            for (int k = rows; k < dr->rows; k++)
                tp += dr->c_plain[k], tk += dr->c_kept[k];
            snprintf(line + n, sizeof line - (size_t)n, "; drawn %.4f, %.4f", (double)tp / dr->n,
                     (double)tk / dr->n);
        }
        screen_text(s, r.x, y, r.w, line, COL_ACCENT, ATTR_BOLD);
        y++;
    }
    struct trace_row row;
    int rank;
    if (found && report_row_of(t, a->find_id, &row, &rank) == 0)
        big_row(a, s, r.x, y, r.w, rank, &row, source_logit(&a->source, a->cur_step, row.id), 1);
}

/* The histogram of every z' in rows rows of eighth blocks, on a log scale
 * so that a bin of one token still shows. */
static void big_hist(const struct app *a, struct screen *s, int x, int y, int w, int rows)
{
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
    int choice_bin = isfinite(choice_z) ? (int)((choice_z - h.lo) / (h.hi - h.lo) * bins) : -1;
    if (choice_bin >= bins)
        choice_bin = bins - 1;
    for (int b = 0; b < bins; b++) {
        double level = top > 0 ? log1p((double)h.count[b]) / top * rows * 8 : 0;
        if (h.count[b] > 0 && level < 1)
            level = 1;
        int col = b == choice_bin ? COL_CHOSEN : COL_KEPT;
        for (int r = 0; r < rows; r++) {
            int fill = (int)level - (rows - 1 - r) * 8;
            fill = fill < 0 ? 0 : fill > 8 ? 8 : fill;
            screen_put(s, x + 1 + b, y + r, screen_glyph(s, EIGHTHS[fill], ASCII[fill]), col, 0);
        }
    }
    char lo[32], hi[32];
    snprintf(lo, sizeof lo, "%.1f", h.lo);
    snprintf(hi, sizeof hi, "%.1f", h.hi);
    screen_text(s, x + 1, y + rows, w, lo, COL_REMOVED, 0);
    int hw = utf8_width(hi);
    screen_text(s, x + 1 + bins - hw, y + rows, hw, hi, COL_REMOVED, 0);
    char mid[96];
    snprintf(mid, sizeof mid, "z' of all %ld tokens (log): sd %.2f", h.n, h.sd);
    int mw = utf8_width(mid);
    if (mw < bins - 12)
        screen_text(s, x + 1 + (bins - mw) / 2, y + rows, mw, mid, COL_REMOVED, 0);
}

static void big_stats(const struct app *a, struct screen *s, struct rect r)
{
    const struct trace *t = &a->t;
    char line[512];
    int n = 0;
    for (int c = 0; c < t->n_stages; c++) {
        const struct stage_report *st = &t->stages[c];
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
    int y = r.y;
    screen_text(s, r.x + 1, y++, r.w - 2, line, COL_DEFAULT, 0);
    struct trace_row row;
    int rank;
    if (y < r.y + r.h && report_row_of(t, t->choice.id, &row, &rank) == 0) {
        const struct app_entry *en = app_shown_entry(a);
        char tok[96];
        utf8_escape(vocab_token(&a->L.vocab, t->choice.id), tok, sizeof tok);
        snprintf(line, sizeof line, "%s %s: rank %d, p %.4f, final %.4f  H %.3f nats, e^H %.1f",
                 en          ? "drawn"
                 : t->greedy ? "greedy takes"
                             : "seed draws",
                 tok, rank + 1, row.prob, row.final, t->entropy, exp(t->entropy));
        screen_text(s, r.x + 1, y++, r.w - 2, line, COL_DEFAULT, 0);
    }
    if (a->draws_ok && y < r.y + r.h) {
        const struct draws *dr = &a->draws;
        snprintf(line, sizeof line,
                 "%d draws: %ld tokens seen (%ld with filters), chi2 %.1f on %d df "
                 "(limit %.1f)",
                 dr->n, dr->distinct_plain, dr->distinct_kept, dr->chi2_plain, dr->df_plain,
                 draws_chi2_limit(dr->df_plain));
        screen_text(s, r.x + 1, y++, r.w - 2, line, COL_ACCENT, 0);
    }
    int rows = r.y + r.h - y - 1;
    if (rows > 3)
        rows = 3;
    big_hist(a, s, r.x, y, r.w, rows);
}

/* A full-size step: a table of the top tokens and the tail, then what the
 * rest of the vocabulary holds. */
static void draw_big(const struct app *a, struct screen *s, struct rect r)
{
    int stats_h = r.h >= 16 ? 6 : r.h >= 12 ? 4 : 0;
    if (a->draws_ok && stats_h)
        stats_h++;
    big_table(a, s, (struct rect){ r.x, r.y, r.w, r.h - stats_h });
    if (stats_h)
        big_stats(a, s, (struct rect){ r.x, r.y + r.h - stats_h, r.w, stats_h });
}

/* The end of the text a request has generated, escaped: its last tokens
 * (fewer when they are long), more than a line of the widest screen. */
static void batch_text(const struct app *a, const struct batch_row *w, char *out, size_t n)
{
    char raw[4096], esc[8192];
    int plen = a->batch.prompt_len;
    size_t len = 0;
    for (int back = 256; back >= 1; back /= 2) {
        int from = w->len - back > plen ? w->len - back : plen;
        len = vocab_detok(&a->L.vocab, w->ctx + from, w->len - from, raw, sizeof raw);
        if (len < sizeof raw)
            break;
    }
    if (len >= sizeof raw)
        len = sizeof raw - 1;
    raw[vocab_complete_prefix(raw, len)] = '\0';
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
    if (row->stop.rule != STOP_NONE) {
        char why[160];
        stop_describe(&row->stop, &row->set, &a->L.vocab, why, sizeof why);
        snprintf(next, n, "stopped: %s", why);
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
static void batch_line(const struct app *a, struct screen *s, int x, int y, int w, int r,
                       const char *next, int nw, int two_lines)
{
    const struct batch_row *row = &a->batch.row[r];
    int sel = r == a->batch_sel, stopped = row->stop.rule != STOP_NONE;
    int attr = sel ? ATTR_REVERSE : 0;
    char set[96], text[1024];
    batch_describe(row, set, sizeof set);
    batch_text(a, row, text, sizeof text);
    screen_fill(s, (struct rect){ x, y, w, two_lines ? 2 : 1 }, ' ', COL_DEFAULT, attr);
    int col = x + screen_printf(s, x, y, w, sel ? COL_ACCENT : COL_DEFAULT, attr | ATTR_BOLD,
                                "%c%d ", sel ? '>' : ' ', r);
    int set_w = two_lines ? x + w - nw - 1 - col : 34;
    if (set_w > 0)
        screen_text(s, col, y, set_w, set, COL_DEFAULT, attr);
    col += set_w > 0 ? set_w + 1 : 0;
    int nx = two_lines ? x + w - nw : col;
    screen_text(s, nx, y, x + w - nx, next, stopped ? COL_REMOVED : COL_CHOSEN,
                attr | (stopped ? ATTR_DIM : ATTR_BOLD));
    int ty = two_lines ? y + 1 : y, tx = two_lines ? x + 4 : nx + nw + 1;
    int room = x + w - tx;
    if (room < 8)
        return;
    /* The newest text matters: cut from the front. */
    const char *t = text;
    int tw = utf8_width(t);
    if (tw > room)
        t = skip_cols(t, tw - room);
    screen_text(s, tx, ty, room, t, COL_DEFAULT, attr);
}

static void draw_batch(const struct app *a, struct screen *s, struct rect r)
{
    const struct batch *b = &a->batch;
    char left[96], right[160];
    snprintf(left, sizeof left, "Batch of %d: one LM head call, one sampler call", b->n);
    if (b->head_ran)
        snprintf(right, sizeof right, "head %.1f ms  sampler %.3f ms", b->head_kernel_ms,
                 b->kernel_ms);
    else /* a setting changed: the same logits, sampled again */
        snprintf(right, sizeof right, "sampler %.3f ms, logits kept", b->kernel_ms);
    pane_title(s, r, left, right);
    int two = r.h - 1 >= 2 * b->n, nw = 24;
    char next[BATCH_ROWS][192];
    for (int i = 0; i < b->n; i++) {
        batch_next(a, &b->row[i], next[i], sizeof next[i]);
        nw = utf8_width(next[i]) > nw ? utf8_width(next[i]) : nw;
    }
    if (nw > r.w / 2)
        nw = r.w / 2;
    for (int i = 0; i < b->n; i++) {
        int y = r.y + 1 + i * (two ? 2 : 1);
        if (y >= r.y + r.h)
            break;
        batch_line(a, s, r.x, y, r.w, i, next[i], nw, two && y + 1 < r.y + r.h);
    }
}

void view_draw_pane(const struct app *a, struct screen *s, enum pane p, struct rect r)
{
    switch (p) {
    case PANE_LOGITS:
        draw_logits(a, s, r);
        break;
    case PANE_EXP:
        draw_exp(a, s, r);
        break;
    case PANE_PROB:
        draw_prob(a, s, r);
        break;
    case PANE_CUM:
        draw_cum(a, s, r);
        break;
    case PANE_COUNT:
        break;
    }
}

void view_render(const struct app *a, struct screen *s)
{
    screen_clear(s);
    struct layout l;
    layout_compute(s->w, s->h, a->t.vocab_size, &l);
    if (!l.ok) {
        screen_printf(s, 0, 0, s->w, COL_WARN, ATTR_BOLD,
                      "logitlab needs a terminal of at least %dx%d.", VIEW_MIN_W, VIEW_MIN_H);
        screen_printf(s, 0, 1, s->w, COL_DEFAULT, 0, "This one is %dx%d: enlarge it, or press q.",
                      s->w, s->h);
        return;
    }
    if (a->mode == MODE_TEXT) {
        draw_text_mode(a, s);
        return;
    }
    draw_title(a, s, l.title);
    view_draw_lesson(a, s, l.lesson, l.side);
    if (source_is_fast(&a->source)) {
        struct rect a0 = l.pane[PANE_LOGITS], a3 = l.pane[PANE_CUM];
        struct rect big = { a0.x, a0.y, a3.x + a3.w - a0.x, a3.y + a3.h - a0.y };
        if (a->batch_on)
            draw_batch(a, s, big);
        else
            draw_big(a, s, big);
    } else {
        for (int p = 0; p < PANE_COUNT; p++)
            view_draw_pane(a, s, (enum pane)p, l.pane[p]);
    }
    draw_status(a, s, l.status);
    draw_bottom(a, s, l.bottom, l.status);
    if (a->mode == MODE_HELP)
        draw_help(a, s);
}
