/* app_exercise.c - exercises: a step whose values are asked before they are
 * shown; each answer is checked against the step as the lesson sets it.
 *
 * A wrong answer is marked with how far off it is and asked again: a slip
 * should cost a second look, not the whole solution. A second miss on the
 * same value shows the solution, as v (or "v" typed as the answer) does at
 * any time. The kept set is answered as tokens and checked as a set, and
 * its verdict names the tokens missing and the ones too many.
 */
#include "tui/app_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/utf8.h"
#include "report/report.h"

/* Misses on one value that show the solution. */
#define EXERCISE_MISSES 2

int app_hidden(const struct app *a)
{
    if (a->pos < a->n_hist || a->end != END_NONE)
        return 0;
    return a->L.steps[a->live_step - 1].n_ask > 0 && !a->revealed;
}

static int ask_digits(const struct lesson_step *S, const struct ask *q)
{
    return q->digits >= 0 ? q->digits : S->digits;
}

void app_ask_prompt(struct app *a)
{
    const struct lesson_step *S = &a->L.steps[a->live_step - 1];
    const struct ask *q = &S->ask[a->ask_index];
    char what[64];
    ask_describe(&a->L, q, what, sizeof what);
    a->mode = MODE_ANSWER;
    app_input_clear(a);
    if (q->kind == ASK_KEPT)
        app_msg(a, 0, "answer %d of %d: %s = ? (the tokens, texts or ids; Enter checks, Esc stops)",
                a->ask_index + 1, S->n_ask, what);
    else
        app_msg(a, 0, "answer %d of %d: %s = ? (%d decimals; Enter checks, Esc stops)",
                a->ask_index + 1, S->n_ask, what, ask_digits(S, q));
}

/* Appends token id's text (escaped) to the list in buf, a space between. */
static void append_token(const struct vocab *v, int id, char *buf, size_t n)
{
    char esc[64];
    utf8_escape(vocab_token(v, id), esc, sizeof esc);
    if (buf[0])
        utf8_append(buf, n, " ");
    utf8_append(buf, n, esc);
}

void app_kept_text(const struct app *a, const struct trace *t, char *buf, size_t n)
{
    report_kept_text(t, &a->L.vocab, buf, n);
}

/* What a learner typing a token means: its exact text, else what the find
 * prompt takes (an id, "#id", the word after a space), else the one token
 * whose text matches but for case ("a" for "A"). -1 if none. */
static int token_typed(const struct vocab *v, const char *item)
{
    int id = vocab_find(v, item);
    if (id < 0)
        id = vocab_lookup(v, item);
    for (int i = 0; id < 0 && i < v->n; i++)
        if (strcasecmp(vocab_token(v, i), item) == 0)
            id = i;
    return id;
}

/* Reads a kept-set answer, tokens separated by spaces or commas, into
 * mark (one byte per token). Returns how many tokens it names, or -1 with
 * a message naming the item that is not a token. The items are cut out of
 * a copy of the answer, however long it was typed. */
static int read_token_set(const struct vocab *v, const char *text, unsigned char *mark,
                          struct err *e)
{
    char *copy = strdup(text);
    if (!copy)
        return err_set(e, ERR_SYSTEM, "out of memory for the answer (%zu bytes)", strlen(text));
    int count = 0;
    for (char *p = copy + strspn(copy, " ,\t"); *p; p += strspn(p, " ,\t")) {
        char *item = p;
        p += strcspn(p, " ,\t");
        if (*p)
            *p++ = '\0';
        int id = token_typed(v, item);
        if (id < 0) {
            char esc[64];
            utf8_escape(item, esc, sizeof esc); /* the message's room: a long item ends cut */
            free(copy);
            return err_set(e, ERR_USAGE, "'%s' is not a token of this lesson", esc);
        }
        count += !mark[id];
        mark[id] = 1;
    }
    free(copy);
    if (count == 0)
        return err_set(e, ERR_USAGE, "no tokens typed");
    return count;
}

/* The kept set: right when the tokens typed are exactly those t keeps;
 * else the verdict lists the kept ones missing and the others typed. */
static int check_kept(struct app *a, const struct trace *t, struct app_answer *ans)
{
    const struct vocab *v = &a->L.vocab;
    unsigned char *mark = calloc((size_t)v->n, 1);
    struct err e;
    int count =
        mark ? read_token_set(v, a->input, mark, &e) : err_set(&e, ERR_SYSTEM, "out of memory");
    if (count >= 0 && t->n_rows < t->vocab_size)
        count = err_set(&e, ERR_USAGE, "a kept set is asked on steps that show every token");
    if (count < 0) {
        free(mark);
        app_msg(a, 1, "%s: type the kept tokens, or Esc to stop", e.msg);
        return -1;
    }
    char missing[40] = "", extra[40] = "";
    ans->typed[0] = '\0';
    for (int r = 0; r < t->n_rows; r++) {
        int id = t->rows[r].id, kept = t->rows[r].removed_by == TRACE_KEPT;
        if (mark[id])
            append_token(v, id, ans->typed, sizeof ans->typed);
        if (kept != mark[id])
            append_token(v, id, kept ? missing : extra, kept ? sizeof missing : sizeof extra);
    }
    free(mark);
    ans->value = count;
    ans->ok = !missing[0] && !extra[0];
    snprintf(ans->verdict, sizeof ans->verdict, "%s%s%s%s%s", missing[0] ? "missing " : "", missing,
             missing[0] && extra[0] ? "; " : "", extra[0] ? "extra " : "", extra);
    return 0;
}

/* "about 0.01 too high": the miss to one significant digit, which points
 * the way without giving the answer away. */
static void describe_miss(double off, char *buf, size_t n)
{
    double m = fabs(off);
    int e10 = (int)floor(log10(m));
    double lead = round(m / pow(10.0, e10));
    if (lead >= 10.0)
        lead = 1.0, e10++;
    const char *way = off > 0 ? "high" : "low";
    if (e10 >= 6)
        snprintf(buf, n, "about %.0e too %s", lead * pow(10.0, e10), way);
    else
        snprintf(buf, n, "about %.*f too %s", e10 < 0 ? -e10 : 0, lead * pow(10.0, e10), way);
}

/* A number: right within one unit of the last decimal the lesson uses
 * (rounding along the way, as the lessons' own solutions do, is not a
 * mistake); else the verdict says which way and about how far. */
static int check_number(struct app *a, const struct trace *t, const struct ask *q,
                        struct app_answer *ans)
{
    const struct lesson_step *S = &a->L.steps[a->live_step - 1];
    double v;
    struct err e;
    if (parse_double(a->input, &v, &e) < 0) {
        app_msg(a, 1, "%s: type a number, or Esc to stop", e.msg);
        return -1;
    }
    int d = ask_digits(S, q);
    double want = report_ask_value(t, q);
    double tol = pow(10.0, -d) * (1.0 + 1e-9);
    ans->value = v;
    ans->ok = fabs(v - want) <= tol;
    if (snprintf(ans->typed, sizeof ans->typed, "%.*f", d, v) > 20)
        utf8_escape(a->input, ans->typed, sizeof ans->typed); /* 1e300 as typed */
    ans->verdict[0] = '\0';
    if (!ans->ok)
        describe_miss(v - want, ans->verdict, sizeof ans->verdict);
    return 0;
}

/* The live step as the lesson sets it: answers are checked against the
 * exercise as written, even when the screen shows other settings. */
static int exercise_trace(struct app *a, struct trace *t)
{
    struct settings own;
    struct err e;
    source_step_settings(&a->source, a->live_step, &own);
    if (trace_init(t, a->L.vocab.n, &e) < 0 ||
        source_run_step(&a->source, a->live_step, &own, a->gen.ids, a->gen.len, t, &e) < 0) {
        trace_free(t);
        app_msg(a, 1, "%s", e.msg);
        return -1;
    }
    return 0;
}

static int show_solution(struct app *a)
{
    a->revealed = 1;
    a->mode = MODE_NORMAL;
    app_msg(a, 0, "the solution is shown");
    return APP_REDRAW;
}

/* After a checked answer: the next value, the same one again, or the
 * solution. */
static int after_answer(struct app *a, struct app_answer *ans)
{
    const struct lesson_step *S = &a->L.steps[a->live_step - 1];
    char what[64];
    ask_describe(&a->L, &S->ask[a->ask_index], what, sizeof what);
    ans->given = 1;
    if (!ans->ok && ++ans->misses < EXERCISE_MISSES) {
        app_input_clear(a);
        app_msg(a, 1, "%s = %s: %s; try again (v Enter: solution)", what, ans->typed, ans->verdict);
        return APP_REDRAW;
    }
    if (!ans->ok) {
        a->mode = MODE_NORMAL;
        a->revealed = 1;
        app_msg(a, 1, "%s = %s: %s, a second miss; the solution is shown", what, ans->typed,
                ans->verdict);
        return APP_REDRAW;
    }
    if (++a->ask_index < S->n_ask) {
        app_ask_prompt(a);
        return APP_REDRAW;
    }
    int second = 0;
    for (int i = 0; i < S->n_ask; i++)
        second += a->ans[i].misses > 0;
    a->mode = MODE_NORMAL;
    a->revealed = 1;
    if (second)
        app_msg(a, 0, "%d of %d right (%d on a second try): the solution is shown", S->n_ask,
                S->n_ask, second);
    else
        app_msg(a, 0, "%d of %d right: the solution is shown", S->n_ask, S->n_ask);
    return APP_REDRAW;
}

int app_submit_answer(struct app *a)
{
    const struct lesson_step *S = &a->L.steps[a->live_step - 1];
    const struct ask *q = &S->ask[a->ask_index];
    /* "v" asks for the solution, unless it is one of the tokens of a set. */
    size_t lead = strspn(a->input, " ");
    if (a->input[lead] == 'v' && a->input[lead + 1 + strspn(a->input + lead + 1, " ")] == '\0' &&
        (q->kind != ASK_KEPT || token_typed(&a->L.vocab, "v") < 0))
        return show_solution(a);
    struct trace t;
    if (exercise_trace(a, &t) < 0)
        return APP_REDRAW;
    struct app_answer *ans = &a->ans[a->ask_index];
    int rc = q->kind == ASK_KEPT ? check_kept(a, &t, ans) : check_number(a, &t, q, ans);
    trace_free(&t);
    if (rc < 0) {
        app_input_clear(a);
        return APP_REDRAW;
    }
    return after_answer(a, ans);
}
