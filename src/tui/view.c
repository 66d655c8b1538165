/* view.c - layout and drawing.
 *
 * Four panes show the step on screen: logits, exponentials, probabilities and
 * the cumulative staircase. A lesson pane holds the text and the context, two
 * status lines every setting, and the bottom line a message, the ':' prompt,
 * or the keys. Numbers use the step's digits (4 unless the lesson says), so a
 * screen can be checked against a lesson's table.
 *
 * This file lays the screen out and draws it part by part, each part into
 * a context clipped to its rectangle (struct screen_ctx): the title, the
 * status and the bottom lines here, the others in view_lesson.c,
 * view_panes.c, view_big.c and view_batch.c (view_int.h).
 */
#include "tui/view.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/view_int.h"
#include "base/utf8.h"
#include "report/report.h"

#define HELP_MAX_W 100

/* ---- helpers --------------------------------------------------------------------- */

int digits_of(const struct app *a)
{
    return a->L.steps[a->cur_step - 1].digits;
}

const char *glyph(const struct screen_ctx *c, const char *utf8, const char *ascii)
{
    return c->s->utf8 ? utf8 : ascii;
}

int is_chosen(const struct app *a, int id)
{
    const struct app_entry *en = app_shown_entry(a);
    return (en && en->choice == id) || (!en && a->show_u && a->t.choice.id == id);
}

void pane_title(const struct screen_ctx *c, const char *left, const char *right)
{
    int w = c->r.w;
    ctx_fill(c, (struct rect){ 0, 0, w, 1 }, ' ', COL_TITLE, ATTR_REVERSE);
    ctx_text(c, 1, 0, w - 2, left, COL_TITLE, ATTR_REVERSE | ATTR_BOLD);
    int rw = utf8_width(right);
    int lw = utf8_width(left);
    if (rw > w - lw - 4)
        rw = w - lw - 4;
    if (rw > 0)
        ctx_text(c, w - rw - 1, 0, rw, right, COL_TITLE, ATTR_REVERSE);
}

/* The text of s without its first cols columns (the caller marks the cut). */
const char *skip_cols(const char *s, int cols)
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

/* Zeroed, as the function-static buffers it replaces were: the streamed
 * text line reads past the end of a decoded text that did not fit its
 * buffer (vocab_detok returns the length it needed). */
struct view_scratch *view_scratch_new(void)
{
    return calloc(1, sizeof(struct view_scratch));
}

void view_scratch_free(struct view_scratch *vs)
{
    free(vs);
}

/* ---- title, status, bottom ----------------------------------------------------- */

static void draw_title(const struct app *a, const struct screen_ctx *c)
{
    ctx_fill(c, (struct rect){ 0, 0, c->r.w, c->r.h }, ' ', COL_STATUS, ATTR_REVERSE);
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
    int rw = utf8_width(right), room = c->r.w - rw;
    if (utf8_width(left) > room) {
        /* Shorten the title by whole words, and say so. */
        char cut[512];
        utf8_pad(left, room - 1, 0, cut, sizeof cut);
        char *sp = strrchr(cut, ' ');
        if (sp && sp - cut > (long)strlen(a->L.id) + 12) /* keep "logitlab  id:" and a word */
            *sp = '\0';
        utf8_append(cut, sizeof cut, glyph(c, "\u2026", "~"));
        utf8_copy(left, sizeof left, cut);
    }
    ctx_text(c, 0, 0, room, left, COL_STATUS, ATTR_REVERSE | ATTR_BOLD);
    ctx_text(c, c->r.w - rw, 0, rw, right, COL_STATUS, ATTR_REVERSE);
}

/* Where the step on screen was computed: a lesson's table and captured
 * logits are sampled on the CPU; a model lesson's LM head (and the batch)
 * runs on the backend. */
static const char *backend_name(const struct app *a)
{
    const struct backend *b = a->opt.backend;
    return b && b->ops && ((a->batch_on && !a->batch.toy) || source_follows_context(&a->source))
               ? b->ops->name
               : "CPU";
}

/* The right end of the status line: the backend and what the last
 * computation cost -- in the batch view, the device's own time (CUDA
 * events; on the CPU the same as its compute time) and the wall time of the
 * whole step, and why the CPU is used when auto chose it. */
static void status_right(const struct app *a, const struct screen_ctx *c, int room, char *buf,
                         size_t n)
{
    if (c->s->picture) { /* a picture is the same on every machine and every run */
        snprintf(buf, n, " %s ", backend_name(a));
        return;
    }
    if (!a->batch_on || a->batch.toy) { /* a toy batch: the CPU's time, as a single step */
        char t[32];
        report_duration(t, sizeof t, a->batch_on ? a->batch.step_ms * 1e3 : a->recompute_us,
                        c->s->utf8);
        snprintf(buf, n, " %s %s ", backend_name(a), t);
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

/* Whether setting i is a stage's first setting, on, with settings that
 * say how its stage works (the repetition penalty: its formula, scope,
 * last-n): what gets report_penalty_how's words. */
static int status_has_how(const struct settings *st, const struct setting_info *i)
{
    if (i->stage != STAGE_PENALTY || setting_of_stage(i->stage) != i ||
        !setting_is_on(i, &st->sampler, INT_MAX))
        return 0;
    for (const struct setting_info *j = SETTINGS_INFO; j->name; j++)
        if (j->stage == i->stage && (j->flags & SET_MODIFIER))
            return 1;
    return 0;
}

/* How many wordings of a stage's way of working the status line tries
 * (report_penalty_how's three, then none). */
#define STATUS_HOW 4

/* Appends piece to buf when it fits in w columns; returns whether it did. */
static int append_fits(char *buf, size_t n, const char *piece, int w)
{
    if (utf8_width(buf) + utf8_width(piece) > w)
        return 0;
    utf8_append(buf, n, piece);
    return 1;
}

/* The grammar on the second status line, in the room it has (w columns):
 * what its mask removed this step, where it stands, then its text, as
 * much of it as fits ("..." where it is cut, so that no write is clipped):
 * "regex 6 removed (55.93 %), expecting [o] (in root); on the (mat|dog)". */
static void status_grammar(const struct app *a, const struct settings *st, int w, char *buf,
                           size_t n)
{
    const struct setting_info *i = settings_grammar_on(st);
    const struct trace *t = &a->t;
    int c = 0;
    while (c < t->n_stages && !(t->stages[c].stage == STAGE_GRAMMAR && t->stages[c].active))
        c++;
    char piece[4 * TRACE_GRAMMAR_STATE + 8], text[1024], pct[32];
    if (!i || c == t->n_stages)
        return;
    report_percent(pct, sizeof pct, t->stages[c].removed_mass, 4); /* as the chain's report */
    snprintf(piece, sizeof piece, "  %s %d removed (%s)", i->status, t->stages[c].removed, pct);
    if (!append_fits(buf, n, piece, w))
        return;
    snprintf(piece, sizeof piece, ", ");
    utf8_escape(t->grammar_state, piece + 2, sizeof piece - 2);
    if (!append_fits(buf, n, piece, w))
        return;
    status_value(st, i, text, sizeof text);
    int room = w - utf8_width(buf) - 2; /* after "; " */
    if (room < 8)
        return;
    utf8_append(buf, n, "; ");
    if (utf8_width(text) <= room) {
        utf8_append(buf, n, text);
        return;
    }
    utf8_pad(text, room - 3, 0, piece, sizeof piece); /* cut here, and said to be */
    utf8_append(buf, n, piece);
    utf8_append(buf, n, "...");
}

/* One setting of the status line: "label value", then what a reader must
 * know -- that the chain leaves its stage out, that it makes the step
 * greedy -- and, when on, how its stage works in words at brevity how
 * ("penalty 1.2 (lesson formula, generated tokens)"; STATUS_HOW - 1: not
 * at all). */
static void status_item(const struct app *a, const struct settings *st,
                        const struct setting_info *i, int how, char *buf, size_t n)
{
    const struct sampler_settings *m = &st->sampler;
    char v[160];
    status_value(st, i, v, sizeof v);
    snprintf(buf, n, "%s%s%s", i->status, i->status[0] ? " " : "", v);
    if (i->stage == STAGE_NONE || !(i->flags & SET_ACTIVATES))
        return;
    enum stage sg = (enum stage)i->stage;
    if (stage_active(m, sg, a->t.vocab_size) && !chain_has(&m->chain, sg))
        utf8_append(buf, n, " (unused)");
    if ((STAGES[sg].flags & SF_ZERO_CUTS) && stage_cuts(m, sg))
        utf8_append(buf, n, " (greedy)");
    if (i != setting_of_stage(i->stage) && setting_get(st, i) != i->def &&
        sg == STAGE_TEMPERATURE) { /* the dynamic range: the T this step took */
        char here[48];
        snprintf(here, sizeof here, " (T %.3g here)", trace_temperature(&a->t, m));
        utf8_append(buf, n, here);
    }
    if (!status_has_how(st, i) || how >= STATUS_HOW - 1)
        return;
    char words[128];
    report_penalty_how(m, how, words, sizeof words);
    utf8_append(buf, n, " (");
    utf8_append(buf, n, words);
    utf8_append(buf, n, ")");
}

/* A line of the status bar: the settings always shown there, then those
 * shown when on, each "label value", two spaces apart, how the penalty
 * works at brevity how. */
static void status_items(const struct app *a, const struct settings *st, int second, int how,
                         char *buf, size_t n)
{
    snprintf(buf, n, " ");
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
            int always = (i->flags & SET_STATUS_ALWAYS) != 0;
            if (!i->status || (i->flags & SET_MODIFIER) || !(i->flags & SET_LINE2) != !second ||
                always != (pass == 0) || (!always && !(setting_get(st, i) != i->def)) ||
                i->kind == SK_GRAMMAR) /* status_grammar's, in the room left */
                continue;
            char item[224];
            status_item(a, st, i, how, item, sizeof item);
            if (k++)
                utf8_append(buf, n, "  ");
            utf8_append(buf, n, item);
        }
}

/* The longest wording of the first line that leaves STATUS_RIGHT_W of
 * w for the backend and time at its right end (how many words say how the
 * penalty works; at 80 columns with top-p and the penalty on, none). */
#define STATUS_RIGHT_W 16
static int status_how_fits(const struct app *a, const struct settings *st, int w, char *buf,
                           size_t n)
{
    int how = 0;
    for (; how < STATUS_HOW - 1; how++) {
        status_items(a, st, 0, how, buf, n);
        if (utf8_width(buf) <= w - STATUS_RIGHT_W)
            return how;
    }
    status_items(a, st, 0, how, buf, n);
    return how;
}

/* A line of the status bar at width w. When the first line has no room
 * for how the penalty works, the second says it in the room it has left
 * ("  penalty: lesson formula, generated tokens"), else the words go. */
static void status_line(const struct app *a, const struct settings *st, int second, int w,
                        char *buf, size_t n)
{
    const struct setting_info *main = setting_of_stage(STAGE_PENALTY);
    int how = status_how_fits(a, st, w, buf, n);
    if (!second)
        return;
    status_items(a, st, 1, STATUS_HOW - 1, buf, n);
    status_grammar(a, st, w - 1, buf, n);
    if (how < STATUS_HOW - 1 || !main || !status_has_how(st, main))
        return;
    for (int b = 0; b < STATUS_HOW - 1; b++) {
        char words[128], more[160];
        report_penalty_how(&st->sampler, b, words, sizeof words);
        snprintf(more, sizeof more, "  %s: %s", main->status, words);
        if (utf8_width(buf) + utf8_width(more) <= w - 1) {
            utf8_append(buf, n, more);
            return;
        }
    }
}

static void draw_status(const struct app *a, const struct screen_ctx *c)
{
    const struct settings *st = a->batch_on ? &a->batch.row[a->batch_sel].set : &a->cur;
    int w = c->r.w;
    ctx_fill(c, (struct rect){ 0, 0, w, c->r.h }, ' ', COL_STATUS, 0);
    char left[320];
    status_line(a, st, 0, w, left, sizeof left);
    char right[96];
    status_right(a, c, w - utf8_width(left), right, sizeof right);
    int rw = utf8_width(right);
    ctx_text(c, 0, 0, w - rw, left, COL_STATUS, ATTR_BOLD);
    ctx_text(c, w - rw, 0, rw, right, COL_STATUS, ATTR_REVERSE);
    char line2[512];
    status_line(a, st, 1, w, line2, sizeof line2);
    int used = ctx_text(c, 0, 1, w, line2, COL_STATUS, 0);
    /* In the batch view, where the backend does the work: why auto chose
     * the CPU (only a fallback has a reason), in the room the settings leave. */
    const struct backend *be = a->opt.backend;
    int room = w - used - 2;
    if (a->batch_on && !a->batch.toy && be && be->why[0] && room >= 16) {
        char why[BACKEND_WHY_MAX + 4];
        snprintf(why, sizeof why, " %s ", be->why);
        int ww = utf8_width(why) < room ? utf8_width(why) : room;
        ctx_text(c, w - ww, 1, ww, why, COL_WARN, 0);
    }
}

/* Key hints for the state the screen is in. */
static const char *hints(const struct app *a, const struct screen_ctx *c)
{
    if (a->batch_on)
        return c->s->utf8 ? "Space step all  \u2191\u2193 request  t/T k/K p/P m/M r/R o s x  "
                            "Home  B leave  ? q"
                          : "Space step all  Up/Down request  t/T k/K p/P m/M r/R o s x  Home  B "
                            "leave  ? q";
    if (app_hidden(a))
        return "a answer  v solution  Space answer  l text  ? help  q quit";
    if (a->pos < a->n_hist && a->end != END_NONE && a->pos == a->n_hist - 1)
        return a->end == END_STOP && a->resume_step
                   ? "Space next step  Left back  Home restart  n next lesson  ? help  q quit"
                   : "Home restart  n next lesson  Left back  l text  ? help  q quit";
    return c->s->utf8 ? "Space step  \u2190\u2192 steps  t/T k/K p/P m/M r/R  o  s  u  l  : cmd  "
                        "? help  q quit"
                      : "Space step  <- -> steps  t/T k/K p/P m/M r/R  o  s  u  l  : cmd  ? help  "
                        "q quit";
}

/* One character of the input line as it is drawn: its escaped form for a
 * control or a byte of invalid UTF-8, else itself, into piece (terminated);
 * *used gets the bytes of s it stands for. Returns its columns: as
 * ctx_text draws it, a character of an ASCII screen is one '?'. */
static int input_piece(const char *s, size_t len, int utf8, char piece[UTF8_ESC_MAX + 1],
                       size_t *used)
{
    size_t pn;
    *used = utf8_escape_char(s, len, 0, piece, &pn);
    piece[pn] = '\0';
    int escaped = pn != *used || memcmp(piece, s, pn) != 0;
    return utf8 || escaped ? utf8_width(piece) : 1;
}

/* The columns of bytes [from, len) of the input line s. */
static long input_cols(const char *s, size_t from, size_t len, int utf8)
{
    char piece[UTF8_ESC_MAX + 1];
    long cols = 0;
    for (size_t used; from < len; from += used)
        cols += input_piece(s + from, len - from, utf8, piece, &used);
    return cols;
}

/* The input line on row y: the mode's sign, the text typed and the cursor.
 * Text wider than the row is drawn from where its last columns start,
 * after a mark that more is hidden to the left, so that the end of the
 * text and the cursor stay on screen. Returns the cursor's column. */
static int draw_input(const struct app *a, const struct screen_ctx *c, int y)
{
    const char *sign = a->mode == MODE_PROMPT ? ":" : a->mode == MODE_FIND ? "/" : "> ";
    int x = ctx_text(c, 0, y, c->r.w, sign, COL_DEFAULT, ATTR_BOLD);
    int room = c->r.w - x - 1, utf8 = c->s->utf8; /* the cursor's cell is the row's last */
    const char *s = a->input;
    size_t len = (size_t)a->input_len, at = 0, used, tail = 4 * ((size_t)room + 2);
    /* A long line is measured from near its end: the row's last columns
     * lie in its last 4 bytes a column (a column takes at most 4, but for
     * marks of no width, which send the measure back to the start), from
     * a byte that continues no character, where decoding from the line's
     * start has a boundary too. A key typed into a long line then draws
     * in the time of the row, not of the line. */
    if (len > tail)
        for (at = len - tail; at < len && ((unsigned char)s[at] & 0xC0) == 0x80; at++)
            ;
    long total = input_cols(s, at, len, utf8);
    if (at > 0 && total <= room) /* the tail fits: the whole line decides */
        total = input_cols(s, at = 0, len, utf8);
    char piece[UTF8_ESC_MAX + 1];
    if (total > room) {
        ctx_put(c, x++, y, ctx_glyph(c, 0x2026, '<'), COL_ACCENT, ATTR_BOLD); /* '…', ASCII '<' */
        for (room--; at < len && total > room; at += used)
            total -= input_piece(s + at, len - at, utf8, piece, &used);
    }
    for (; at < len; at += used) {
        input_piece(s + at, len - at, utf8, piece, &used);
        x += ctx_text(c, x, y, -1, piece, COL_DEFAULT, ATTR_BOLD);
    }
    ctx_put(c, x, y, ' ', COL_DEFAULT, ATTR_REVERSE); /* the cursor */
    return x;
}

/* The bottom line, the last row of c; a long message borrows the rows above
 * it (the status lines), and so does a message on the input line (the
 * answer's question, a key refused) when the line is full. */
static void draw_bottom(const struct app *a, const struct screen_ctx *c, struct view_scratch *vs)
{
    int w = c->r.w, y = c->r.h - 1;
    if (a->mode == MODE_PROMPT || a->mode == MODE_ANSWER || a->mode == MODE_FIND) {
        int used = draw_input(a, c, y) + 1;
        const char *hint = a->msg[0] || a->mode == MODE_ANSWER ? a->msg
                           : a->mode == MODE_PROMPT
                               ? "name value, Enter runs, Esc cancels"
                               : "token text (a space for a leading space) or id, Enter finds";
        int hw = utf8_width(hint), color = a->msg_warn && a->msg[0] ? COL_WARN : COL_ACCENT;
        if (used + 2 + hw <= w)
            ctx_text(c, w - hw, y, hw, hint, color, 0);
        else if (a->msg[0]) { /* over the second status line */
            ctx_fill(c, (struct rect){ 0, y - 1, w, 1 }, ' ', COL_DEFAULT, 0);
            ctx_text(c, 0, y - 1, w, hint, color, ATTR_BOLD);
        }
        return;
    }
    if (a->msg[0]) {
        /* A message longer than the line borrows the status lines above it. */
        int color = a->msg_warn ? COL_WARN : COL_ACCENT, attr = a->msg_warn ? ATTR_BOLD : 0;
        int width = utf8_width(a->msg);
        if (width <= w) {
            ctx_text(c, 0, y, w, a->msg, color, attr);
            return;
        }
        struct lines *wrapped = &vs->msg;
        wrapped->n = 0;
        add_wrapped(wrapped, "", a->msg, w, color, attr);
        int n = wrapped->n > c->r.h ? c->r.h : wrapped->n;
        for (int i = 0; i < n; i++) {
            int row = y - (n - 1) + i;
            ctx_fill(c, (struct rect){ 0, row, w, 1 }, ' ', COL_DEFAULT, 0);
            ctx_text(c, 0, row, w, wrapped->text[i], color, attr);
        }
        return;
    }
    if (!c->s->picture) /* a slide has no keys to press */
        ctx_text(c, 0, y, w, hints(a, c), COL_REMOVED, 0);
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
    screen_text(s, r.x + 2, r.y, w - 4,
                "Keys (? or Space: the legend of the marks; other keys close this)", COL_ACCENT,
                ATTR_BOLD);
    for (int i = 0; i < n && i + 1 < h; i++)
        screen_text(s, r.x + 2, r.y + 1 + i, w - 4, lines[i], COL_DEFAULT, 0);
}

/* ---- the pane table --------------------------------------------------------------- */

typedef void pane_fn(const struct app *a, const struct screen_ctx *c);

/* What draws each pane of a toy step. */
static pane_fn *const PANE_DRAW[PANE_COUNT] = {
    [PANE_LOGITS] = draw_logits,
    [PANE_EXP] = draw_exp,
    [PANE_PROB] = draw_prob,
    [PANE_CUM] = draw_cum,
};

void view_draw_pane(const struct app *a, struct screen *s, enum pane p, struct rect r)
{
    if (p < 0 || p >= PANE_COUNT)
        return;
    struct screen_ctx c = screen_ctx(s, r);
    PANE_DRAW[p](a, &c);
}

/* The parts of the screen, drawn in this order: the bottom line comes last,
 * since a long message there borrows the status lines. */
enum part { PART_TITLE, PART_LESSON, PART_STEP, PART_STATUS, PART_BOTTOM, PART_COUNT };

/* The rectangle each part may draw in: the step's is the four panes
 * together, the bottom line's takes in the status lines above it. */
static void part_areas(const struct layout *l, struct rect area[PART_COUNT])
{
    int x0 = INT_MAX, y0 = INT_MAX, x1 = 0, y1 = 0;
    for (int p = 0; p < PANE_COUNT; p++) {
        struct rect r = l->pane[p];
        if (r.w == 0 || r.h == 0) /* a pane big mode leaves out */
            continue;
        x0 = r.x < x0 ? r.x : x0, y0 = r.y < y0 ? r.y : y0;
        x1 = r.x + r.w > x1 ? r.x + r.w : x1, y1 = r.y + r.h > y1 ? r.y + r.h : y1;
    }
    area[PART_TITLE] = l->title;
    area[PART_LESSON] = l->lesson;
    area[PART_STEP] = (struct rect){ x0, y0, x1 - x0, y1 - y0 };
    area[PART_STATUS] = l->status;
    area[PART_BOTTOM] =
        (struct rect){ l->bottom.x, l->status.y, l->bottom.w, l->status.h + l->bottom.h };
}

typedef void part_fn(const struct app *a, const struct layout *l, struct view_scratch *vs,
                     const struct screen_ctx *c);

static void part_title(const struct app *a, const struct layout *l, struct view_scratch *vs,
                       const struct screen_ctx *c)
{
    (void)l, (void)vs;
    draw_title(a, c);
}

static void part_lesson(const struct app *a, const struct layout *l, struct view_scratch *vs,
                        const struct screen_ctx *c)
{
    draw_lesson(a, c, l->side, vs);
}

/* The step: a full-size one as one table (or the batch), a toy one as its
 * four panes, each in its own context. */
static void part_step(const struct app *a, const struct layout *l, struct view_scratch *vs,
                      const struct screen_ctx *c)
{
    (void)vs;
    if (!a->step_ok && !a->batch_on) {
        /* A refused step left no trace to draw; the message line says why. */
        ctx_printf(c, 1, 1, c->r.w - 2, COL_REMOVED, ATTR_BOLD,
                   "This step could not be computed with these settings (the message below "
                   "says why). Change the setting, or press x for the lesson's own.");
        return;
    }
    if (a->batch_on) { /* a toy lesson's batch too */
        draw_batch(a, c);
        return;
    }
    if (source_is_fast(&a->source)) {
        draw_big(a, c);
        return;
    }
    for (int p = 0; p < PANE_COUNT; p++) {
        struct rect r = l->pane[p];
        if (r.w == 0 || r.h == 0)
            continue;
        struct screen_ctx pc = ctx_sub(c, (struct rect){ r.x - c->r.x, r.y - c->r.y, r.w, r.h });
        PANE_DRAW[p](a, &pc);
    }
}

static void part_status(const struct app *a, const struct layout *l, struct view_scratch *vs,
                        const struct screen_ctx *c)
{
    (void)l, (void)vs;
    draw_status(a, c);
}

static void part_bottom(const struct app *a, const struct layout *l, struct view_scratch *vs,
                        const struct screen_ctx *c)
{
    (void)l;
    draw_bottom(a, c, vs);
}

static part_fn *const PART_DRAW[PART_COUNT] = {
    [PART_TITLE] = part_title,   [PART_LESSON] = part_lesson, [PART_STEP] = part_step,
    [PART_STATUS] = part_status, [PART_BOTTOM] = part_bottom,
};

void view_render(const struct app *a, struct screen *s, struct view_scratch *vs)
{
    screen_clear(s);
    struct screen_ctx all = screen_ctx(s, (struct rect){ 0, 0, s->w, s->h });
    struct layout l;
    layout_compute(s->w, s->h, a->t.vocab_size, a->big, &l);
    if (!l.ok) {
        ctx_printf(&all, 0, 0, s->w, COL_WARN, ATTR_BOLD,
                   "logitlab needs a terminal of at least %dx%d.", VIEW_MIN_W, VIEW_MIN_H);
        ctx_printf(&all, 0, 1, s->w, COL_DEFAULT, 0, "This one is %dx%d: enlarge it, or press q.",
                   s->w, s->h);
        return;
    }
    if (a->mode == MODE_TEXT) {
        draw_text_mode(a, &all, vs);
        return;
    }
    if (a->mode == MODE_READ) {
        draw_read(a, &all);
        return;
    }
    struct rect area[PART_COUNT];
    part_areas(&l, area);
    for (int p = 0; p < PART_COUNT; p++) {
        struct screen_ctx c = screen_ctx(s, area[p]);
        PART_DRAW[p](a, &l, vs, &c);
    }
    if (a->mode == MODE_HELP)
        draw_help(a, s);
    else if (a->mode == MODE_LEGEND)
        draw_legend(a, s);
}
