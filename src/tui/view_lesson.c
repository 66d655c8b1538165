/* view_lesson.c - the lesson pane: the text line (the context so far, or
 * for a byte-level vocabulary the streamed text), then the lesson's text,
 * its exercise and its tries, wrapped into lines and scrolled; the same
 * text on the whole screen (the text mode); and view_measure, which tells
 * the app how far that text scrolls.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/view_int.h"
#include "report/report.h"
#include "base/utf8.h"

/* A space the wrapping does not break at: the program's own lines use it,
 * a lesson's text cannot hold it (control characters are refused there). */
#define GLUE "\x1f"

void add_line(struct lines *L, const char *text, int color, int attr)
{
    if (L->n == TEXT_LINES_MAX)
        return;
    utf8_copy(L->text[L->n], sizeof L->text[0], text);
    L->color[L->n] = color;
    L->attr[L->n] = attr;
    L->n++;
}

/* Fills width columns per line with the words of one paragraph; words
 * joined by GLUE stay on one line ("= -3.2" with the row it ends). */
void add_wrapped(struct lines *L, const char *lead, const char *text, int width, int color,
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
        for (char *g = word; (g = strchr(g, GLUE[0])) != NULL;)
            *g = ' '; /* glued words: one word to the wrapping, a space on screen */
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
    snprintf(buf + k, sizeof buf - (size_t)k, "], rms" GLUE "%s", num);
    add_wrapped(L, "", buf, width, COL_ACCENT, ATTR_BOLD);
    k = snprintf(buf, sizeof buf, "h / rms = [");
    for (int i = 0; i < d && k < (int)sizeof buf - 16; i++) {
        report_logit(num, sizeof num, S->normed[i], 4);
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%s", i ? ", " : "", num);
    }
    snprintf(buf + k, sizeof buf - (size_t)k, "]");
    add_wrapped(L, "", buf, width, COL_ACCENT, ATTR_BOLD);
    for (int v = 0; v < a->L.vocab.n; v++) {
        char esc[64];
        utf8_escape(vocab_token(&a->L.vocab, v), esc, sizeof esc);
        char lead[80];
        snprintf(lead, sizeof lead, "%-6s ", esc);
        k = snprintf(buf, sizeof buf, "row [");
        for (int i = 0; i < d && k < (int)sizeof buf - 24; i++) {
            report_logit(num, sizeof num, H->w[(size_t)v * (size_t)d + (size_t)i], 4);
            k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%s", i ? " " : "", num);
        }
        report_logit(num, sizeof num, source_logit(&a->source, a->cur_step, v), 4);
        snprintf(buf + k, sizeof buf - (size_t)k, "] ." GLUE "h/rms" GLUE "=" GLUE "%s", num);
        add_wrapped(L, lead, buf, width, COL_DEFAULT, 0);
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

/* A real model's prompt as its tokenizer cut it: each token and its id,
 * as the lessons list theirs (the ids are what the model reads). */
/* A time as the model pane gives it: short enough for its narrowest width. */
static void ms_text(double ms, char *buf, size_t n)
{
    if (ms < 1.0)
        snprintf(buf, n, "%.3f ms", ms);
    else if (ms < 10.0)
        snprintf(buf, n, "%.2f ms", ms);
    else if (ms < 1000.0)
        snprintf(buf, n, "%.1f ms", ms);
    else
        snprintf(buf, n, "%.2f s", ms / 1e3);
}

/* "3.21 ms / 10 tokens" and its rate, as llama.cpp's end-of-run report
 * writes a prompt's and the generated tokens' times. */
static void rate_lines(struct lines *L, const char *what, double ms, int n, const char *unit)
{
    char t[32], per[32], line[96];
    ms_text(ms, t, sizeof t);
    ms_text(ms / n, per, sizeof per);
    snprintf(line, sizeof line, "%s: %s / %d %s%s", what, t, n, unit, n == 1 ? "" : "s");
    add_line(L, line, COL_ACCENT, 0);
    double rate = ms > 0.0 ? n * 1e3 / ms : 0.0;
    snprintf(line, sizeof line, "  (%s per token, %.*f tokens/s)", per, rate < 100.0 ? 1 : 0, rate);
    add_line(L, line, COL_ACCENT, 0);
}

/* What the prompt's run saved by applying the head to its last position
 * alone (seed 000: only that position's logits pick the next token), in
 * multiply-adds, which read the same on every machine. */
static void prefill_saving(const struct app *a, struct lines *L, int n, int width)
{
    long d = source_hidden_size(&a->source), V = a->t.vocab_size;
    char skipped[48], vs[32], ds[32], line[320];
    draws_count_text(V, vs, sizeof vs);
    draws_count_text(d, ds, sizeof ds);
    draws_count_text((long)(n - 1) * V * d, skipped, sizeof skipped);
    snprintf(line, sizeof line,
             "Prefill: the head ran for the last of the %d positions only, skipping %d x %s x %s "
             "= %s multiply-adds (%d times this step's head).",
             n, n - 1, vs, ds, skipped, n - 1);
    add_wrapped(L, "", line, width, COL_ACCENT, 0);
}

/* A real model's times: the prompt's run, the single positions since, and
 * the step on screen with its head. Wall time, so never in the paragraph
 * above, which must read the same on every machine. */
static void speed_lines(const struct app *a, struct lines *L, int width)
{
    struct source_speed sp;
    if (source_speed(&a->source, &sp) < 0)
        return;
    add_line(L, "", COL_DEFAULT, 0);
    if (sp.prompt_tokens > 0)
        rate_lines(L, "Prompt eval", sp.prompt_ms, sp.prompt_tokens, "token");
    if (sp.prompt_tokens > 1)
        prefill_saving(a, L, sp.prompt_tokens, width);
    if (sp.eval_runs > 0)
        rate_lines(L, "Eval", sp.eval_ms, sp.eval_runs, "run");
    char t[32], h[32], line[96];
    ms_text(sp.step_ms, t, sizeof t);
    ms_text(sp.head_ms, h, sizeof h);
    if (sp.step_tokens > 0)
        snprintf(line, sizeof line, "This step: %s, head %s", t, h);
    else
        snprintf(line, sizeof line, "This step: cached, head %s", h);
    add_line(L, line, COL_ACCENT, 0);
}

static void prompt_tokens(const struct app *a, struct lines *L, int width)
{
    char buf[1536], tok[96];
    int n = snprintf(buf, sizeof buf, "The prompt, %d tokens:", a->L.prompt_len);
    for (int i = 0; i < a->L.prompt_len && n > 0 && (size_t)n < sizeof buf - 120; i++) {
        utf8_escape(vocab_token(&a->L.vocab, a->L.prompt[i]), tok, sizeof tok);
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %s %d%s", tok, a->L.prompt[i],
                      i + 1 < a->L.prompt_len ? "," : "");
    }
    add_wrapped(L, "", buf, width, COL_DEFAULT, 0);
    add_line(L, "", COL_DEFAULT, 0);
}

/* What an answer's row says after "you 7.4000": right, or wrong with the
 * verdict, and "try again" while the solution is still hidden. */
static void answer_verdict(const struct app *a, const struct app_answer *an, char *buf, size_t n)
{
    if (an->ok)
        snprintf(buf, n, "you %s right%s", an->typed, an->misses ? ", 2nd try" : "");
    else
        snprintf(buf, n, "you %s wrong: %s%s", an->typed, an->verdict,
                 app_hidden(a) ? "; try again" : "");
}

/* The exercise: one row per value asked, "?" until the solution is shown,
 * and the verdict on each answer given. A row that does not fit the pane
 * puts its verdict on wrapped lines below, so that no verdict is cut. */
static void exercise_lines(const struct app *a, struct lines *L, int width)
{
    const struct lesson_step *S = &a->L.steps[a->cur_step - 1];
    const struct app_entry *en = app_shown_entry(a);
    const struct app_answer *ans = en ? en->ans : a->ans;
    int n_ans = en ? en->n_ans : S->n_ask;
    if (S->n_ask == 0 || n_ans == 0)
        return;
    add_line(L, "", COL_DEFAULT, 0);
    add_wrapped(L, "",
                app_hidden(a) ? "Exercise: a answers, v shows the solution." : "Exercise:", width,
                COL_ACCENT, ATTR_BOLD);
    for (int i = 0; i < S->n_ask && i < n_ans; i++) {
        char what[64], want[128], got[256] = "", buf[512];
        const struct ask *q = &S->ask[i];
        ask_describe(&a->L, q, what, sizeof what);
        if (app_hidden(a))
            snprintf(want, sizeof want, "?");
        else if (q->kind == ASK_KEPT)
            app_kept_text(a, &a->t, want, sizeof want);
        else
            report_number(want, sizeof want, report_ask_value(&a->t, q),
                          q->digits >= 0 ? q->digits : S->digits);
        if (ans[i].given)
            answer_verdict(a, &ans[i], got, sizeof got);
        int asking = a->mode == MODE_ANSWER && i == a->ask_index && !en;
        int color = ans[i].given ? (ans[i].ok ? COL_GOOD : COL_WARN) : COL_DEFAULT;
        int attr = asking ? ATTR_BOLD : 0;
        snprintf(buf, sizeof buf, "%s%-9s %9s", asking ? "> " : "  ", what, want);
        int head_w = utf8_width(buf);
        if (got[0] && head_w + 2 + utf8_width(got) <= width) {
            utf8_append(buf, sizeof buf, "  ");
            utf8_append(buf, sizeof buf, got);
            add_line(L, buf, color, attr);
            continue;
        }
        if (head_w <= width)
            add_line(L, buf, color, attr);
        else
            add_wrapped(L, asking ? "> " : "  ", buf + 2, width, color, attr);
        if (got[0])
            add_wrapped(L, "    ", got, width, color, attr);
    }
}

static void lesson_lines(const struct app *a, struct lines *L, int width)
{
    const struct lesson_step *S = &a->L.steps[a->cur_step - 1];
    const struct app_entry *en = app_shown_entry(a);
    char buf[512];
    if (en && en->stop.rule != STOP_NONE) {
        char why[160];
        const char *shown = stop_shown(&en->stop, &en->settings);
        stop_describe(&en->stop, &en->settings, &a->L.vocab, why, sizeof why);
        snprintf(buf, sizeof buf, "Stopped: %s%s%s.%s", why, shown ? ", " : "", shown ? shown : "",
                 a->pos < a->n_hist - 1 ? ""
                 : a->end == END_STOP && a->resume_step
                     ? " Space goes on to the next step."
                     : " Home starts again, n opens the next lesson.");
        add_wrapped(L, "", buf, width, COL_WARN, ATTR_BOLD);
    } else if (a->end == END_LESSON && a->pos == a->n_hist - 1) {
        add_wrapped(L, "", "End of the lesson: n opens the next one, Home starts again.", width,
                    COL_ACCENT, ATTR_BOLD);
    }
    if (a->batch_on && !a->batch.toy) {
        /* At full size the lesson's text is about the single step: first
         * what the batch on screen shows (a toy batch's lesson says it). */
        char text[4096] = "Batch view: ";
        size_t k = strlen(text);
        batch_explain(&a->batch, &a->L.vocab, text + k, sizeof text - k);
        add_wrapped(L, "", text, width, COL_ACCENT, 0);
        add_line(L, "", COL_DEFAULT, 0);
    }
    if (!en && a->off_script) {
        snprintf(buf, sizeof buf, "Off the lesson's path: these logits were written for \"%s\".",
                 a->script_text);
        add_wrapped(L, "", buf, width, COL_WARN, 0);
    }
    if (a->cur_step == 1 && a->L.text) {
        add_paragraphs(L, "", a->L.text, width, COL_DEFAULT, ATTR_BOLD);
        add_line(L, "", COL_DEFAULT, 0);
    }
    if (a->cur_step == 1 && a->L.model.gguf)
        prompt_tokens(a, L, width);
    head_lines(a, L, width);
    /* A real model's hidden vector and head: the live step's from the
     * source, a step taken before from what its entry kept. */
    char how[SOURCE_DESCRIBE_MAX] = "";
    if (!en)
        source_describe(&a->source, how, sizeof how);
    const char *said = en ? en->how : how;
    if (said && said[0])
        add_wrapped(L, "", said, width, COL_ACCENT, 0);
    if (S->text)
        add_paragraphs(L, "", S->text, width, COL_DEFAULT, 0);
    if (S->given == GIVEN_PROBS)
        add_wrapped(L, "",
                    "This step gives probabilities: logitlab uses ln p as the logits, so "
                    "e^z' is p again.",
                    width, COL_REMOVED, 0);
    if (S->solution && !app_hidden(a))
        add_paragraphs(L, "Solution: ", S->solution, width, COL_GOOD, 0);
    exercise_lines(a, L, width);
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
    if (!en) /* last: the lesson's own text comes first */
        speed_lines(a, L, width);
}

/* After a stop string, what the text line says beside the text: the string
 * and what became of it (` [stopped by "on mat", not shown]`); else "". */
static void stop_note(const struct app_entry *en, char *buf, size_t n)
{
    const char *shown = en ? stop_shown(&en->stop, &en->settings) : NULL;
    buf[0] = '\0';
    if (!shown)
        return;
    char esc[4 * STOP_LEN + 1];
    utf8_escape(en->settings.stop[en->stop.which], esc, sizeof esc);
    snprintf(buf, n, " [stopped by \"%s\", %s]", esc, shown);
}

/* Adds a span of raw text (escaped here) to the text line. */
static void span_raw(struct stream_bufs *b, const char *raw, int color, int attr)
{
    if (b->n_spans == SPANS_MAX || !raw[0])
        return;
    utf8_escape(raw, b->span[b->n_spans], sizeof b->span[0]);
    b->span_color[b->n_spans] = color;
    b->span_attr[b->n_spans] = attr;
    b->n_spans++;
}

/* Adds bytes [from, to) of b->gen as a span. */
static void span_gen(struct stream_bufs *b, size_t from, size_t to, int color, int attr)
{
    char keep = b->gen[to];
    b->gen[to] = '\0';
    span_raw(b, b->gen + from, color, attr);
    b->gen[to] = keep;
}

static int spans_width(const struct stream_bufs *b)
{
    int w = 0;
    for (int i = 0; i < b->n_spans; i++)
        w += utf8_width(b->span[i]);
    return w;
}

/* Draws the spans at (x, y) in w columns: whole when they fit, else an
 * ellipsis and their last columns -- the oldest text gives way, so the
 * newest token is always on screen. Returns the next column. */
static int spans_draw(const struct screen_ctx *c, int x, int y, int w, const struct stream_bufs *b)
{
    int col = x, over = spans_width(b) - w;
    if (over > 0) {
        over += 1; /* the ellipsis' column */
        col += ctx_text(c, col, y, 1, glyph(c, "\u2026", "~"), COL_REMOVED, 0);
    }
    for (int i = 0; i < b->n_spans; i++) {
        const char *t = b->span[i];
        if (over > 0) {
            int tw = utf8_width(t);
            t = skip_cols(t, over);
            over -= tw;
        }
        col += ctx_text(c, col, y, x + w - col, t, b->span_color[i], b->span_attr[i]);
    }
    return col;
}

/* The generated text and the drawn token after a stop string, ending where
 * the engines end it (en->stop.text_end): what is left of the text before
 * the token bold, of the token marked. */
static void cut_spans(const struct app *a, int plen, const struct app_entry *en,
                      struct stream_bufs *b)
{
    const struct vocab *v = &a->L.vocab;
    int n = 0, cap = (int)(sizeof b->ids / sizeof b->ids[0]) - 1;
    for (int i = plen; i < a->cur_len && n < cap; i++)
        b->ids[n++] = a->cur_ctx[i];
    size_t before = vocab_detok(v, b->ids, n, NULL, 0);
    b->ids[n++] = en->choice;
    size_t all = vocab_detok(v, b->ids, n, b->gen, sizeof b->gen);
    size_t tok = vocab_detok(v, &en->choice, 1, NULL, 0);
    size_t mark = all - tok; /* the token's own text; before it, a join-space vocabulary's space */
    if (all >= sizeof b->gen)
        all = mark = before = sizeof b->gen - 1;
    size_t end = stop_text_end(&en->stop, all);
    size_t cut[4] = { 0, before < end ? before : end, mark < end ? mark : end, end };
    int attr[3] = { ATTR_BOLD, 0, ATTR_BOLD | ATTR_REVERSE };
    if (end > 0 && plen > 0 && v->join_space)
        span_raw(b, " ", COL_DEFAULT, 0);
    for (int k = 0; k < 3; k++)
        span_gen(b, cut[k], cut[k + 1], k == 2 ? COL_CHOSEN : COL_DEFAULT, attr[k]);
}

/* The text line of a byte-level vocabulary, streamed: a character whose
 * bytes are split across tokens shows once its last byte has come (until
 * then "+N bytes" says what waits), and the newest token's text is marked. */
static void stream_spans(const struct app *a, struct stream_bufs *b)
{
    const struct app_entry *en = app_shown_entry(a);
    const struct vocab *v = &a->L.vocab;
    int plen = source_prompt_len(&a->L, a->cur_len);
    char *gen = b->gen;
    int *ids = b->ids;
    vocab_detok(v, a->cur_ctx, plen, b->prompt, sizeof b->prompt);
    int n = 0;
    for (int i = plen; i < a->cur_len && n < (int)(sizeof b->ids / sizeof b->ids[0]) - 1; i++)
        ids[n++] = a->cur_ctx[i];
    size_t la = vocab_detok(v, ids, n, gen, sizeof b->gen);
    if (la >= sizeof b->gen)
        la = sizeof b->gen - 1;
    size_t ra = vocab_complete_prefix(gen, la);
    if (en)
        ids[n++] = en->choice;
    size_t lb = vocab_detok(v, ids, n, gen, sizeof b->gen);
    if (lb >= sizeof b->gen)
        lb = sizeof b->gen - 1;
    size_t rb = vocab_complete_prefix(gen, lb);
    if (en && en->stop.rule == STOP_STRING) /* the text is over: it ends where the engines end it */
        lb = rb = stop_text_end(&en->stop, lb);
    if (ra > rb)
        ra = rb;
    char pend[32] = "";
    if (lb > rb)
        snprintf(pend, sizeof pend, " +%zu byte%s", lb - rb, lb - rb == 1 ? "" : "s");
    span_raw(b, b->prompt, COL_DEFAULT, ATTR_DIM);
    span_gen(b, 0, ra, COL_DEFAULT, ATTR_BOLD);
    span_gen(b, ra, rb, COL_CHOSEN, ATTR_BOLD | ATTR_REVERSE);
    span_raw(b, pend, COL_REMOVED, ATTR_DIM);
}

/* The text so far as spans: the prompt dimmed, the generated text bold,
 * the token drawn marked, and after a stop string what became of it. */
static void text_spans(const struct app *a, struct stream_bufs *b)
{
    const struct app_entry *en = app_shown_entry(a);
    b->n_spans = 0;
    if (a->L.vocab.byte_level) {
        stream_spans(a, b);
    } else {
        int plen = source_prompt_len(&a->L, a->cur_len);
        char *buf = b->gen;
        vocab_detok(&a->L.vocab, a->cur_ctx, plen, buf, sizeof b->gen);
        if (plen == 0 && a->L.prompt_text)
            utf8_copy(buf, sizeof b->gen, a->L.prompt_text);
        if (a->cur_len == 0 && !a->L.prompt_text)
            utf8_copy(buf, sizeof b->gen, "(none: this step has no context)");
        span_raw(b, buf, COL_DEFAULT, ATTR_DIM);
        if (en && en->stop.rule == STOP_STRING) {
            cut_spans(a, plen, en, b);
        } else {
            const char *sep = plen && a->L.vocab.join_space ? " " : "";
            if (a->cur_len > plen) {
                span_raw(b, sep, COL_DEFAULT, 0);
                vocab_detok(&a->L.vocab, a->cur_ctx + plen, a->cur_len - plen, buf, sizeof b->gen);
                span_raw(b, buf, COL_DEFAULT, ATTR_BOLD);
            }
            if (en) {
                int one[1] = { en->choice };
                vocab_detok(&a->L.vocab, one, 1, buf, sizeof b->gen);
                int join = a->L.vocab.join_space && buf[0] && (a->cur_len > 0 || a->L.prompt_text);
                span_raw(b, join ? " " : "", COL_DEFAULT, 0);
                span_raw(b, buf, COL_CHOSEN, ATTR_BOLD | ATTR_REVERSE);
            }
        }
    }
    char note[4 * STOP_LEN + 64];
    stop_note(en, note, sizeof note);
    span_raw(b, note, COL_REMOVED, ATTR_DIM);
}

#define TEXT_LABEL "Text: "

/* The first line of the lesson pane, in w columns from x: the label and
 * the text so far, its start giving way when it is too long. */
static int draw_text_line(const struct app *a, const struct screen_ctx *c, int x, int y, int w,
                          struct view_scratch *vs)
{
    int col = x + ctx_text(c, x, y, w, TEXT_LABEL, COL_ACCENT, ATTR_BOLD);
    text_spans(a, &vs->stream);
    return spans_draw(c, col, y, x + w - col, &vs->stream);
}

static void lesson_text(const struct app *a, struct lines *L, int width)
{
    L->n = 0;
    lesson_lines(a, L, width);
}

/* The ids of the context, and the drawn token's, for the first line. */
static void ids_text(const struct app *a, char *ids, size_t n)
{
    const struct app_entry *en = app_shown_entry(a);
    int k = snprintf(ids, n, "ids [");
    for (int i = 0; i < a->cur_len && k < (int)n - 24; i++)
        k += snprintf(ids + k, n - (size_t)k, "%s%d", i ? ", " : "", a->cur_ctx[i]);
    if (en)
        snprintf(ids + k, n - (size_t)k, "] + %d", en->choice);
    else
        snprintf(ids + k, n - (size_t)k, "]");
}

/* The first line: the text so far, then at the right whether more lesson
 * text lies below (always) and the ids (when the whole text fits beside
 * them): the text's end is never pushed off. */
static void first_line(const struct app *a, const struct screen_ctx *c, int x, int w, int more,
                       struct view_scratch *vs)
{
    char ids[512], down[32] = "";
    ids_text(a, ids, sizeof ids);
    if (more)
        snprintf(down, sizeof down, "  %s more (l)", glyph(c, "\u2193", "v"));
    int mw = utf8_width(down), iw = utf8_width(ids), lw = utf8_width(TEXT_LABEL);
    text_spans(a, &vs->stream);
    int tw = spans_width(&vs->stream), room = w - mw;
    int with_ids = lw + tw + 2 + iw <= room;
    ctx_text(c, x, 0, w, TEXT_LABEL, COL_ACCENT, ATTR_BOLD);
    spans_draw(c, x + lw, 0, room - lw, &vs->stream);
    if (with_ids)
        ctx_text(c, x + room - iw, 0, iw, ids, COL_REMOVED, 0);
    if (mw)
        ctx_text(c, x + w - mw, 0, mw, down, COL_ACCENT, ATTR_BOLD);
}

void draw_lesson(const struct app *a, const struct screen_ctx *c, int side, struct view_scratch *vs)
{
    if (c->r.h <= 0)
        return;
    int x = side ? 2 : 1, w = c->r.w - (side ? 3 : 2);
    if (side)
        for (int i = 0; i < c->r.h; i++)
            ctx_put(c, 0, i, ctx_glyph(c, 0x2502, '|'), COL_REMOVED, 0);
    const struct lines *lines = &vs->text;
    lesson_text(a, &vs->text, w);
    int room = c->r.h - 1;
    int first = a->scroll;
    if (first > lines->n - room)
        first = lines->n - room;
    if (first < 0)
        first = 0;
    first_line(a, c, x, w, first + room < lines->n, vs);
    for (int i = 0; i < room && first + i < lines->n; i++) {
        int li = first + i;
        ctx_text(c, x, 1 + i, w, lines->text[li], lines->color[li], lines->attr[li]);
    }
}

void view_draw_lesson(const struct app *a, struct screen *s, struct rect r, int side,
                      struct view_scratch *vs)
{
    struct screen_ctx c = screen_ctx(s, r);
    draw_lesson(a, &c, side, vs);
}

void view_measure(const struct app *a, int w, int h, int *page, int *max_scroll,
                  struct view_scratch *vs)
{
    struct lines *lines = &vs->text;
    int width, room;
    if (a->mode == MODE_TEXT) {
        width = w - 4;
        room = h - 3;
    } else {
        struct layout l;
        layout_compute(w, h, a->t.vocab_size, a->big, &l);
        width = l.lesson.w - (l.side ? 3 : 2);
        room = l.lesson.h - 1;
    }
    if (width < 10 || room < 1) {
        *page = 1;
        *max_scroll = 0;
        return;
    }
    lesson_text(a, lines, width);
    *page = room;
    *max_scroll = lines->n > room ? lines->n - room : 0;
}

/* The lesson text on the whole screen, for reading it at a small size. */
void draw_text_mode(const struct app *a, const struct screen_ctx *c, struct view_scratch *vs)
{
    const struct lines *lines = &vs->text;
    ctx_fill(c, (struct rect){ 0, 0, c->r.w, c->r.h }, ' ', COL_DEFAULT, 0);
    int w = c->r.w - 4;
    lesson_text(a, &vs->text, w);
    draw_text_line(a, c, 2, 0, w, vs);
    int room = c->r.h - 3;
    int first = a->scroll > lines->n - room ? lines->n - room : a->scroll;
    if (first < 0)
        first = 0;
    for (int i = 0; i < room && first + i < lines->n; i++)
        ctx_text(c, 2, 2 + i, w, lines->text[first + i], lines->color[first + i],
                 lines->attr[first + i]);
    ctx_printf(c, 0, c->r.h - 1, c->r.w, COL_REMOVED, 0,
               "Up, Down, PgUp, PgDn scroll  any other key goes back   lines %d-%d of %d",
               lines->n ? first + 1 : 0, first + room < lines->n ? first + room : lines->n,
               lines->n);
}
