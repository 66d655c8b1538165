/* words.c - the summary lines that the view and the text report share, in
 * words a learner reads without a key: how the repetition penalty works,
 * what a filter removed, and what a chi-square of many draws says. Each
 * comes in wordings from long to short; a caller with little room takes a
 * shorter one (report_fit), so that words go before any number is cut.
 */
#include "report/report.h"

#include <string.h>

#include "base/utf8.h"
#include "core/draws.h"

const char *report_fit(int room, int k, const char *const *words)
{
    int i = 0;
    while (i < k - 1 && utf8_width(words[i]) > room)
        i++;
    return words[i];
}

/* Which tokens count as seen, at a brevity (0 longest). */
static const char *scope_words(enum penalty_scope s, int brevity)
{
    if (s == SCOPE_ALL)
        return brevity == 0   ? "prompt and generated tokens"
               : brevity == 1 ? "prompt and generated"
                              : "prompt too";
    return brevity <= 1 ? "generated tokens" : "generated";
}

void report_penalty_how(const struct sampler_settings *m, int brevity, char *buf, size_t n)
{
    const char *formula = penalty_formula_name(m->penalty_formula);
    char last[48] = "";
    if (m->penalty_last_n > 0)
        snprintf(last, sizeof last, ", %s %d", brevity == 0 ? "the last" : "last",
                 m->penalty_last_n);
    else if (brevity == 0)
        snprintf(last, sizeof last, ", all of them");
    if (brevity >= 2)
        snprintf(buf, n, "%s, %s%s", formula, scope_words(m->penalty_scope, 2), last);
    else
        snprintf(buf, n, "%s formula, %s%s", formula, scope_words(m->penalty_scope, brevity), last);
}

void report_removed_words(const char *stage, int removed, double mass, int digits, int brevity,
                          char *buf, size_t n)
{
    char count[32], pct[32];
    draws_count_text(removed, count, sizeof count);
    report_percent(pct, sizeof pct, mass, digits);
    const char *noun = removed == 1 ? "token" : "tokens";
    if (brevity == 0)
        snprintf(buf, n, "%s removed %s %s holding %s", stage, count, noun, pct);
    else if (brevity == 1)
        snprintf(buf, n, "%s removed %s holding %s", stage, count, pct);
    else
        snprintf(buf, n, "%s cut %s (%s)", stage, count, pct);
}

void report_chi2_words(double x, int df, const char *chi, int brevity, char *buf, size_t n)
{
    double lim = draws_chi2_limit(df);
    int fits = x <= lim;
    const char *agree = fits ? "agree" : "do not agree";
    const char *side = fits ? "below" : "above";
    /* draws_chi2_limit is the 99.9 % point: a fair sampler's chi-square
     * stays under it 999 times in 1,000. */
    if (brevity == 0)
        snprintf(buf, n,
                 "the draws %s with the probabilities: %s %.1f, %s the %.1f a fair sampler "
                 "stays under 99.9 %% of the time",
                 agree, chi, x, side, lim);
    else if (brevity == 1)
        snprintf(buf, n, "the draws %s: %s %.1f, %s the %.1f fair draws pass 0.1 %% of the time",
                 agree, chi, x, side, lim);
    else if (brevity == 2)
        snprintf(buf, n, "the draws %s: %s %.1f, %s the fair limit %.1f", agree, chi, x, side, lim);
    else if (brevity == 3)
        snprintf(buf, n, "%s: %s %.1f %s %.1f", fits ? "agree" : "disagree", chi, x,
                 fits ? "<" : ">", lim);
    else
        snprintf(buf, n, "%s %.1f %s %.1f", chi, x, fits ? "<" : ">", lim);
}
