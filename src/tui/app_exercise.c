/* app_exercise.c - exercises: a step whose values are asked before they are
 * shown; each answer is checked against the step as the lesson sets it.
 */
#include "tui/app_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

int app_hidden(const struct app *a)
{
    if (a->pos < a->n_hist || a->end != END_NONE)
        return 0;
    return a->L.steps[a->live_step - 1].n_ask > 0 && !a->revealed;
}

void app_ask_prompt(struct app *a)
{
    const struct lesson_step *S = &a->L.steps[a->live_step - 1];
    char what[64];
    ask_describe(&a->L, &S->ask[a->ask_index], what, sizeof what);
    a->mode = MODE_ANSWER;
    a->input_len = 0;
    a->input[0] = '\0';
    const struct ask *q = &S->ask[a->ask_index];
    app_msg(a, 0, "answer %d of %d: %s = ? (%d decimals; Enter checks, Esc stops)",
            a->ask_index + 1, S->n_ask, what, q->digits >= 0 ? q->digits : S->digits);
}

int app_submit_answer(struct app *a)
{
    const struct lesson_step *S = &a->L.steps[a->live_step - 1];
    double v;
    struct err e;
    if (parse_double(a->input, &v, &e) < 0) {
        app_msg(a, 1, "%s: type a number, or Esc to stop", e.msg);
        a->input_len = 0;
        a->input[0] = '\0';
        return APP_REDRAW;
    }
    const struct ask *q = &S->ask[a->ask_index];
    /* Answers are checked against the exercise as the lesson sets it, even
     * when the screen shows other settings. */
    struct settings own;
    struct trace t;
    struct err e2;
    source_step_settings(&a->source, a->live_step, &own);
    if (trace_init(&t, a->L.vocab.n, &e2) < 0 ||
        source_run_step(&a->source, a->live_step, &own, a->gen.ids, a->gen.len, &t, &e2) < 0) {
        trace_free(&t);
        app_msg(a, 1, "%s", e2.msg);
        return APP_REDRAW;
    }
    double want = report_ask_value(&t, q);
    trace_free(&t);
    /* Within one unit of the last decimal the lesson uses: rounding along the
     * way (as the lessons' own solutions do) is not a mistake. */
    double tol = pow(10.0, -(q->digits >= 0 ? q->digits : S->digits)) * (1.0 + 1e-9);
    struct app_answer *ans = &a->ans[a->ask_index];
    ans->given = 1;
    ans->value = v;
    ans->ok = fabs(v - want) <= tol;
    a->ask_index++;
    if (a->ask_index < S->n_ask) {
        app_ask_prompt(a);
        return APP_REDRAW;
    }
    int right = 0;
    for (int i = 0; i < S->n_ask; i++)
        right += a->ans[i].ok;
    a->mode = MODE_NORMAL;
    a->revealed = 1;
    app_msg(a, right < S->n_ask, "%d of %d right: the solution is shown", right, S->n_ask);
    return APP_REDRAW;
}
