/* view.c - layout and drawing.
 *
 * Four panes show the step on screen: logits, exponentials, probabilities and
 * the cumulative staircase. A lesson pane holds the text and the context, two
 * status lines every setting, and the bottom line a message, the ':' prompt,
 * or the keys. Numbers use the step's digits (4 unless the lesson says), so a
 * screen can be checked against a lesson's table.
 */
#include "view.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "utf8.h"

#define LESSON_MIN_ROWS 3 /* rows kept for the lesson text above the panes */
#define SIDE_MIN_W      40
#define SIDE_MAX_W      60
#define STATUS_ROWS     2
#define TOKEN_W         8
#define TEXT_LINES_MAX  200

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
    int px = 0, pw = w, ptop = top, ph = body;
    if (w >= VIEW_SIDE_W) {
        l->side = 1;
        int lw = w / 3;
        lw = lw < SIDE_MIN_W ? SIDE_MIN_W : lw > SIDE_MAX_W ? SIDE_MAX_W : lw;
        pw = w - lw;
        l->lesson = (struct rect){ pw, top, lw, body };
    } else {
        /* Each pane wants a title row and one row per token; the lesson text
         * keeps at least LESSON_MIN_ROWS and gets whatever the panes leave. */
        int want = 1 + vocab_size;
        int most = (body - LESSON_MIN_ROWS) / 2;
        int pane_h = want < most ? want : most;
        int lesson_h = body - 2 * pane_h;
        l->lesson = (struct rect){ 0, top, w, lesson_h };
        ptop = top + lesson_h;
        ph = 2 * pane_h;
    }
    int half_w = pw / 2, half_h = ph / 2;
    l->pane[PANE_LOGITS] = (struct rect){ px, ptop, half_w, half_h };
    l->pane[PANE_EXP] = (struct rect){ px + half_w, ptop, pw - half_w, half_h };
    l->pane[PANE_PROB] = (struct rect){ px, ptop + half_h, half_w, ph - half_h };
    l->pane[PANE_CUM] = (struct rect){ px + half_w, ptop + half_h, pw - half_w, ph - half_h };
}

/* ---- helpers --------------------------------------------------------------------- */

static int digits_of(const struct app *a)
{
    return a->L.steps[a->cur_step - 1].digits;
}

/* The rows a pane shows, in display order: by id when every token fits (as
 * the lessons' tables are), else the most likely ones by rank. */
static int pane_order(const struct app *a, int rows, int by_rank, int *ids)
{
    const struct trace *t = &a->t;
    int V = t->vocab_size;
    int n = V < rows ? V : rows;
    for (int i = 0; i < n; i++)
        ids[i] = (by_rank || V > rows) ? t->rows[i].id : i;
    return n;
}

static void fmt_num(char *buf, size_t n, double v, int d)
{
    if (fabs(v) >= 1e5 && isfinite(v))
        snprintf(buf, n, "%.3e", v);
    else
        report_number(buf, n, v, d);
}

static int token_color(const struct app *a, const struct trace_row *row, int *attr)
{
    const struct app_entry *en = app_shown_entry(a);
    int chosen = (en && en->choice == row->id) || (!en && a->show_u && a->t.choice.id == row->id);
    *attr = chosen ? ATTR_BOLD | ATTR_REVERSE : 0;
    if (chosen)
        return COL_CHOSEN;
    if (row->removed_by != TRACE_KEPT) {
        *attr = ATTR_DIM;
        return COL_REMOVED;
    }
    return COL_DEFAULT;
}

static void draw_token(const struct app *a, struct screen *s, int x, int y,
                       const struct trace_row *row)
{
    char esc[64], pad[64];
    int attr;
    int col = token_color(a, row, &attr);
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
    if (rw > 0 && lw + rw + 3 <= r.w)
        screen_text(s, r.x + r.w - rw - 1, r.y, rw, right, COL_TITLE, ATTR_REVERSE);
}

/* When a pane cannot show every token it shows the most likely ones; this
 * says how many are left out and how much probability they hold. */
static void more_line(const struct app *a, struct screen *s, struct rect r, int shown)
{
    const struct trace *t = &a->t;
    int y = r.y + 1 + shown;
    if (shown >= t->vocab_size || shown <= 0 || y >= r.y + r.h || app_hidden(a))
        return;
    double mass = 1.0 - t->rows[shown - 1].cum;
    screen_printf(s, r.x + 1, y, r.w - 2, COL_REMOVED, ATTR_DIM, "... %d more, p %.4f",
                  t->vocab_size - shown, mass < 0 ? 0.0 : mass);
}

/* ---- the four panes ------------------------------------------------------------- */

static void draw_logits(const struct app *a, struct screen *s, struct rect r)
{
    const struct trace *t = &a->t;
    int d = digits_of(a);
    int ids[512], rows = r.h - 1 > 512 ? 512 : r.h - 1;
    int n = pane_order(a, rows, 0, ids);
    int changed = 0;
    double lo = 0.0, hi = 0.0;
    for (int i = 0; i < n; i++) {
        const struct trace_row *row = &t->rows[t->rank_of[ids[i]]];
        if (isfinite(row->logit)) {
            lo = fmin(lo, row->logit);
            hi = fmax(hi, row->logit);
        }
        changed |= row->adjusted != row->logit && isfinite(row->logit);
    }
    pane_title(s, r, "Logits z", changed ? "z' after penalty, T" : "");
    int numw = changed ? 7 + 9 : 7;
    int bx = r.x + 2 + TOKEN_W + numw, bw = r.x + r.w - 1 - bx;
    double span = hi - lo > 0 ? hi - lo : 1.0;
    int axis = bx + (int)lround(bw * (-lo) / span);
    for (int i = 0; i < n; i++) {
        int y = r.y + 1 + i;
        const struct trace_row *row = &t->rows[t->rank_of[ids[i]]];
        draw_token(a, s, r.x + 1, y, row);
        char z[32], adj[32];
        report_logit(z, sizeof z, row->logit, d);
        screen_printf(s, r.x + 1 + TOKEN_W, y, 7, COL_DEFAULT, 0, "%6s", z);
        if (changed && row->adjusted != row->logit) {
            report_logit(adj, sizeof adj, row->adjusted, d);
            screen_printf(s, r.x + 1 + TOKEN_W + 7, y, 9, COL_ACCENT, ATTR_BOLD, "%s%8s",
                          s->utf8 ? "\u2192" : ">", adj);
        }
        if (bw < 4 || !isfinite(row->logit))
            continue;
        screen_put(s, axis, y, screen_glyph(s, 0x2502, '|'), COL_REMOVED, ATTR_DIM);
        double len = fabs(row->logit) / span * bw;
        if (row->logit >= 0)
            screen_bar(s, axis, y, len, COL_KEPT, 0);
        else
            screen_bar_left(s, axis, y, len, COL_NEG, 0);
    }
    more_line(a, s, r, n);
}

static void draw_exp(const struct app *a, struct screen *s, struct rect r)
{
    const struct trace *t = &a->t;
    int d = digits_of(a), hidden = app_hidden(a);
    char sum[48], title[64];
    if (hidden)
        snprintf(sum, sizeof sum, "?");
    else if (isinf(t->sum_exp))
        snprintf(sum, sizeof sum, "overflows: see e^(z'-max)");
    else
        fmt_num(sum, sizeof sum, t->sum_exp, d);
    snprintf(title, sizeof title, "sum %s", sum);
    pane_title(s, r, "Exponentials e^z'", title);
    int ids[512], rows = r.h - 1 > 512 ? 512 : r.h - 1;
    int n = pane_order(a, rows, 0, ids);
    double max = 0.0;
    for (int i = 0; i < n; i++)
        max = fmax(max, t->rows[t->rank_of[ids[i]]].exp);
    int bx = r.x + 1 + TOKEN_W + 11, bw = r.x + r.w - 1 - bx;
    for (int i = 0; i < n; i++) {
        int y = r.y + 1 + i;
        const struct trace_row *row = &t->rows[t->rank_of[ids[i]]];
        draw_token(a, s, r.x + 1, y, row);
        char v[32];
        if (hidden) {
            screen_text(s, r.x + 1 + TOKEN_W, y, 10, "         ?", COL_DEFAULT, 0);
            continue;
        }
        fmt_num(v, sizeof v, row->exp, d);
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
    char title[64];
    if (hidden)
        snprintf(title, sizeof title, "kept ?");
    else
        snprintf(title, sizeof title, "kept %d/%d, mass %.*f", t->kept_count, t->vocab_size, d,
                 t->kept_mass);
    pane_title(s, r, "Probabilities p", title);
    int ids[512], rows = r.h - 1 > 512 ? 512 : r.h - 1;
    int n = pane_order(a, rows, 0, ids);
    int trunc = t->kept_count < t->vocab_size;
    int numw = 7 + (trunc ? 9 : 0);
    int bx = r.x + 1 + TOKEN_W + numw, bw = r.x + r.w - 1 - bx;
    for (int i = 0; i < n; i++) {
        int y = r.y + 1 + i;
        const struct trace_row *row = &t->rows[t->rank_of[ids[i]]];
        draw_token(a, s, r.x + 1, y, row);
        if (hidden) {
            screen_text(s, r.x + 1 + TOKEN_W, y, 7, "     ?", COL_DEFAULT, 0);
            continue;
        }
        char p[32], f[32];
        int kept = row->removed_by == TRACE_KEPT;
        report_number(p, sizeof p, row->prob, d);
        screen_printf(s, r.x + 1 + TOKEN_W, y, 7, kept ? COL_DEFAULT : COL_REMOVED,
                      kept ? 0 : ATTR_DIM, "%6s", p);
        if (trunc) {
            if (kept) {
                report_number(f, sizeof f, row->final, d);
                screen_printf(s, r.x + 1 + TOKEN_W + 7, y, 9, COL_ACCENT, ATTR_BOLD, "%s%7s",
                              s->utf8 ? "\u2192" : ">", f);
            } else {
                screen_printf(s, r.x + 1 + TOKEN_W + 7, y, 9, COL_REMOVED, ATTR_DIM, "%s%-7s",
                              s->utf8 ? "\u00d7" : "x", report_removed_name(row->removed_by));
            }
        }
        if (bw < 3)
            continue;
        if (kept)
            screen_bar(s, bx, y, (trunc ? row->final : row->prob) * bw, COL_KEPT, 0);
        else
            for (int x = 0; x < (int)lround(row->prob * bw); x++)
                screen_put(s, bx + x, y, screen_glyph(s, 0x2591, '.'), COL_REMOVED, ATTR_DIM);
    }
    more_line(a, s, r, n);
}

static void draw_cum(const struct app *a, struct screen *s, struct rect r)
{
    const struct trace *t = &a->t;
    int d = digits_of(a), hidden = app_hidden(a);
    const struct app_entry *en = app_shown_entry(a);
    int show_u = (en && en->sampled) || (!en && a->show_u && t->choice.sampled);
    double p = a->cur.sampler.top_p;
    char title[96] = "";
    int k = 0;
    if (p < 1.0)
        k += snprintf(title + k, sizeof title - (size_t)k, "top-p %.2f %s", p,
                      s->utf8 ? "\u250a" : "|");
    if (show_u && !hidden)
        snprintf(title + k, sizeof title - (size_t)k, "%su %.4f%s", k ? "  " : "", t->choice.u,
                 s->utf8 ? " \u25c6" : " *");
    pane_title(s, r, "Cumulative", title);
    int ids[512], rows = r.h - 1 > 512 ? 512 : r.h - 1;
    int n = pane_order(a, rows, 1, ids);
    int bx = r.x + 1 + TOKEN_W + 7, bw = r.x + r.w - 1 - bx;
    /* The staircase is drawn on the scale of prob. The draw compares u with
     * the kept probabilities renormalized; when the kept tokens lead the
     * ranking (every truncating stage keeps such a prefix) that is the same
     * point as u * kept_mass on this scale. */
    double u_at = t->choice.u * t->kept_mass;
    for (int i = 0; i < n; i++) {
        int y = r.y + 1 + i;
        const struct trace_row *row = &t->rows[i];
        draw_token(a, s, r.x + 1, y, row);
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
        if (p < 1.0) {
            int px = bx + (int)lround(p * bw);
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
    snprintf(line, sizeof line, "%s", lead);
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

static void lesson_lines(const struct app *a, struct lines *L, int width)
{
    const struct lesson_step *S = &a->L.steps[a->cur_step - 1];
    const struct app_entry *en = app_shown_entry(a);
    char buf[512];
    if (en && en->stop.rule != STOP_NONE) {
        char why[160];
        stop_describe(&en->stop, &en->settings, &a->L.vocab, why, sizeof why);
        snprintf(buf, sizeof buf, "Stopped: %s.%s", why,
                 a->end == END_STOP ? " Home starts again, n goes to the next lesson." : "");
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
    if (S->text)
        add_paragraphs(L, "", S->text, width, COL_DEFAULT, 0);
    if (S->solution && !app_hidden(a))
        add_paragraphs(L, "Solution: ", S->solution, width, COL_GOOD, 0);
    if (S->n_ask > 0 && !en) {
        add_line(L, "", COL_DEFAULT, 0);
        add_line(L, app_hidden(a) ? "Exercise: a answers, v shows the solution." : "Exercise:",
                 COL_ACCENT, ATTR_BOLD);
        for (int i = 0; i < S->n_ask; i++) {
            char what[64], want[32], got[48] = "";
            ask_describe(&a->L, &S->ask[i], what, sizeof what);
            report_number(want, sizeof want, report_ask_value(&a->t, &S->ask[i]), S->digits);
            const struct app_answer *ans = &a->ans[i];
            if (ans->given)
                snprintf(got, sizeof got, "you %.*f %s", S->digits, ans->value,
                         ans->ok ? "right" : "wrong");
            int asking = a->mode == MODE_ANSWER && i == a->ask_index;
            snprintf(buf, sizeof buf, "%s%-9s %9s  %s", asking ? "> " : "  ", what,
                     app_hidden(a) ? "?" : want, got);
            add_line(L, buf, ans->given ? (ans->ok ? COL_GOOD : COL_WARN) : COL_DEFAULT,
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

void view_draw_lesson(const struct app *a, struct screen *s, struct rect r, int side)
{
    if (r.h <= 0)
        return;
    int x = r.x + (side ? 2 : 1), w = r.w - (side ? 3 : 2);
    int y = r.y;
    if (side)
        for (int i = 0; i < r.h; i++)
            screen_put(s, r.x, r.y + i, screen_glyph(s, 0x2502, '|'), COL_REMOVED, ATTR_DIM);
    /* The text so far: prompt dim, generated bold, the drawn token reversed. */
    const struct app_entry *en = app_shown_entry(a);
    int plen = a->L.prompt_len <= a->cur_len ? a->L.prompt_len : a->cur_len;
    int col = x;
    col += screen_text(s, col, y, w, "Text: ", COL_ACCENT, ATTR_BOLD);
    char buf[1024];
    vocab_detok(&a->L.vocab, a->cur_ctx, plen, buf, sizeof buf);
    if (a->cur_len == 0 && !en)
        utf8_copy(buf, sizeof buf, "(empty: this step has no context)");
    col += screen_text(s, col, y, x + w - col, buf, COL_DEFAULT, ATTR_DIM);
    if (a->cur_len > plen) {
        vocab_detok(&a->L.vocab, a->cur_ctx + plen, a->cur_len - plen, buf, sizeof buf);
        col += screen_text(s, col, y, x + w - col, plen && a->L.vocab.join_space ? " " : "",
                           COL_DEFAULT, 0);
        col += screen_text(s, col, y, x + w - col, buf, COL_DEFAULT, ATTR_BOLD);
    }
    if (en) {
        int one[1] = { en->choice };
        vocab_detok(&a->L.vocab, one, 1, buf, sizeof buf);
        if (buf[0]) {
            col += screen_text(s, col, y, x + w - col, a->L.vocab.join_space ? " " : "",
                               COL_DEFAULT, 0);
            screen_text(s, col, y, x + w - col, buf, COL_CHOSEN, ATTR_BOLD | ATTR_REVERSE);
        }
    }
    int k = snprintf(buf, sizeof buf, "ids [");
    for (int i = 0; i < a->cur_len && k < (int)sizeof buf - 16; i++)
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%d", i ? ", " : "", a->cur_ctx[i]);
    snprintf(buf + k, sizeof buf - (size_t)k, "]%s", en ? " + drawn" : "");
    /* The ids go beside the text when both fit, else on a line of their own. */
    int idw = utf8_width(buf);
    if (col + 3 + idw <= x + w) {
        screen_text(s, x + w - idw, y, idw, buf, COL_REMOVED, 0);
    } else if (++y < r.y + r.h) {
        screen_text(s, x, y, w, buf, COL_REMOVED, 0);
    }
    y++;
    static struct lines lines; /* 50 KB: kept off the stack; the view runs in one thread */
    lines.n = 0;
    lesson_lines(a, &lines, w);
    int room = r.y + r.h - y;
    if (room <= 0)
        return;
    int first = a->scroll;
    if (first > lines.n - room)
        first = lines.n - room;
    if (first < 0)
        first = 0;
    /* A line that has more text below (or above) it gives up its last
     * columns to say so: Up and Down scroll. */
    const char *down = s->utf8 ? " \u2193 more" : " v more";
    const char *up = s->utf8 ? " \u2191 more" : " ^ more";
    int mark_w = utf8_width(down);
    for (int i = 0; i < room && first + i < lines.n; i++) {
        int li = first + i;
        int below = i == room - 1 && first + room < lines.n;
        int above = i == 0 && first > 0;
        int tw = (below || above) ? w - mark_w : w;
        screen_text(s, x, y + i, tw, lines.text[li], lines.color[li], lines.attr[li]);
        if (below || above)
            screen_text(s, x + tw, y + i, mark_w, below ? down : up, COL_ACCENT, ATTR_BOLD);
    }
}

/* ---- title, status, bottom ----------------------------------------------------- */

static void draw_title(const struct app *a, struct screen *s, struct rect r)
{
    screen_fill(s, r, ' ', COL_STATUS, ATTR_REVERSE);
    char right[96], left[512];
    const struct app_entry *en = app_shown_entry(a);
    snprintf(right, sizeof right, "step %d/%d%s  lesson %d/%d ", a->cur_step, a->L.n_steps,
             en ? " (taken)" : "", a->lesson_index + 1, a->cat.n);
    snprintf(left, sizeof left, " logitlab  %s: %s", a->L.id, a->L.title);
    int rw = utf8_width(right);
    screen_text(s, r.x, r.y, r.w - rw - 1, left, COL_STATUS, ATTR_REVERSE | ATTR_BOLD);
    screen_text(s, r.x + r.w - rw, r.y, rw, right, COL_STATUS, ATTR_REVERSE);
}

/* The chain in short, for the status line: "pen>T>k>p>min-p". */
static void chain_short(const struct chain *c, char *buf, size_t n)
{
    static const char *const SHORT[STAGE_COUNT] = { "pen", "T", "k", "p", "min-p" };
    buf[0] = '\0';
    for (int i = 0; i < c->n; i++) {
        if (i)
            utf8_append(buf, n, ">");
        utf8_append(buf, n, SHORT[c->stage[i]]);
    }
}

static void draw_status(const struct app *a, struct screen *s, struct rect r)
{
    const struct settings *st = &a->cur;
    const struct sampler_settings *m = &st->sampler;
    char v[8][32];
    static const char *const NAMES[] = { "temperature",        "top-k", "top-p",     "min-p",
                                         "repetition-penalty", "seed",  "max-tokens" };
    for (int i = 0; i < 7; i++)
        settings_value(st, NAMES[i], v[i], sizeof v[i]);
    screen_fill(s, r, ' ', COL_STATUS, 0);
    char rep[96];
    if (m->repetition_penalty != 1.0)
        snprintf(rep, sizeof rep, "%s %s/%s/last %d", v[4],
                 penalty_formula_name(m->penalty_formula), penalty_scope_name(m->penalty_scope),
                 m->penalty_last_n);
    else
        snprintf(rep, sizeof rep, "off");
    char right[96];
    snprintf(right, sizeof right, " %s %.0f %s ", a->backend, a->recompute_us,
             s->utf8 ? "\u00b5s" : "us");
    int rw = utf8_width(right);
    screen_printf(s, r.x, r.y, r.w - rw, COL_STATUS, ATTR_BOLD,
                  " T %s%s  top-k %s  top-p %s  min-p %s  seed %s", v[0],
                  m->temperature == 0.0 ? " (greedy)" : "", v[1], v[2], v[3], v[5]);
    screen_text(s, r.x + r.w - rw, r.y, rw, right, COL_STATUS, ATTR_REVERSE);
    char chain[128], stops[96] = "-";
    chain_short(&m->chain, chain, sizeof chain);
    for (int i = 0; i < st->n_stop; i++) {
        char esc[2 * STOP_LEN + 1];
        utf8_escape(st->stop[i], esc, sizeof esc);
        if (i == 0)
            stops[0] = '\0';
        else
            utf8_append(stops, sizeof stops, ",");
        utf8_append(stops, sizeof stops, "\"");
        utf8_append(stops, sizeof stops, esc);
        utf8_append(stops, sizeof stops, "\"");
    }
    char shift[48] = "";
    if (m->shift != 0.0)
        snprintf(shift, sizeof shift, "  shift %g", m->shift);
    screen_printf(s, r.x, r.y + 1, r.w, COL_STATUS, 0,
                  " rep %s  pres %g  freq %g  order %s: %s%s  max-tokens %s  stop %s%s", rep,
                  m->presence_penalty, m->frequency_penalty, preset_name(m->chain.preset), chain,
                  m->chain.topk_keep_ties ? " (k ties)" : "", v[6], stops, shift);
}

static void draw_bottom(const struct app *a, struct screen *s, struct rect r)
{
    if (a->mode == MODE_PROMPT || a->mode == MODE_ANSWER) {
        char line[APP_INPUT_MAX + 64];
        snprintf(line, sizeof line, "%s%s", a->mode == MODE_PROMPT ? ":" : "> ", a->input);
        int used = screen_text(s, r.x, r.y, r.w, line, COL_DEFAULT, ATTR_BOLD);
        screen_put(s, r.x + used, r.y, ' ', COL_DEFAULT, ATTR_REVERSE); /* the cursor */
        if (a->mode == MODE_ANSWER && a->msg[0])
            screen_text(s, r.x + used + 2, r.y, r.w - used - 2, a->msg, COL_ACCENT, 0);
        return;
    }
    if (a->msg[0]) {
        screen_text(s, r.x, r.y, r.w, a->msg, a->msg_warn ? COL_WARN : COL_ACCENT,
                    a->msg_warn ? ATTR_BOLD : 0);
        return;
    }
    screen_text(s, r.x, r.y, r.w,
                s->utf8 ? "Space step  \u2190\u2192 steps  t/T k/K p/P m/M r/R  o order  s seed  "
                          "u show u  : command  ? help  q quit"
                        : "Space step  <> steps  t/T k/K p/P m/M r/R  o order  s seed  u show u  "
                          ": command  ? help  q quit",
                COL_REMOVED, 0);
}

static void draw_help(struct screen *s)
{
    int n = 0;
    while (APP_KEY_HELP[n])
        n++;
    int w = 72 < s->w - 2 ? 72 : s->w - 2, h = n + 2 < s->h ? n + 2 : s->h;
    struct rect r = { (s->w - w) / 2, (s->h - h) / 2, w, h };
    screen_clear(s);
    screen_text(s, r.x + 2, r.y, w - 4, "Keys (any key closes this)", COL_ACCENT, ATTR_BOLD);
    for (int i = 0; i < n && i + 1 < h; i++)
        screen_text(s, r.x + 2, r.y + 1 + i, w - 4, APP_KEY_HELP[i], COL_DEFAULT, 0);
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
    draw_title(a, s, l.title);
    view_draw_lesson(a, s, l.lesson, l.side);
    for (int p = 0; p < PANE_COUNT; p++)
        view_draw_pane(a, s, (enum pane)p, l.pane[p]);
    draw_status(a, s, l.status);
    draw_bottom(a, s, l.bottom);
    if (a->mode == MODE_HELP)
        draw_help(s);
}
