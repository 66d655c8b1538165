/* text.c - the report as text, for a terminal or a file: the step and its
 * text, the settings, the table, the sums, the chain stage by stage, what a
 * full-size step adds (histogram, draws), the choice, the stop rule, what
 * an exercise asks, and the notes that warn of a surprise.
 */
#include "report/report.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "model/lmhead.h"
#include "base/utf8.h"
#include "report/report_int.h"

#define TEXT_WIDTH  78
#define TOKEN_COLS  12
#define TEXT_EXP_W  9    /* the exp column: one style for all its rows */
#define LARGE_LOGIT 30.0 /* above this, say that softmax subtracts the max */

/* A setting's value for a summary: as typed back, and " (greedy)" after a
 * value that makes its stage keep only the argmax. */
static void summary_value(const struct settings *s, const struct setting_info *i, char *buf,
                          size_t n)
{
    setting_value(s, i, buf, n);
    if (i->stage != STAGE_NONE && (STAGES[i->stage].flags & SF_ZERO_CUTS) &&
        (i->flags & SET_ACTIVATES) && stage_cuts(&s->sampler, (enum stage)i->stage))
        utf8_append(buf, n, " (greedy)");
}

/* text with its control characters escaped (utf8.h): a string from a file
 * or an argument never reaches the terminal as it is. */
static void put(FILE *out, const char *text)
{
    utf8_write_escaped(out, text, strlen(text), 0);
}

static void wrap(FILE *out, const char *first, const char *indent, const char *text)
{
    /* Paragraphs are separated by '\n' (the reader's, between values); each
     * is filled to TEXT_WIDTH, its words escaped and measured as shown. */
    const char *p = text;
    while (*p) {
        size_t plen = strcspn(p, "\n");
        int indent_w = utf8_width(indent);
        const char *lead = p == text ? first : indent;
        fputs(lead, out);
        int col = utf8_width(lead);
        const char *w = p, *end = p + plen;
        while (w < end) {
            while (w < end && *w == ' ')
                w++;
            const char *we = w;
            while (we < end && *we != ' ')
                we++;
            if (we == w)
                break;
            char word[TEXT_WIDTH * 4], shown[4 * sizeof word];
            size_t wl = (size_t)(we - w) < sizeof word - 1 ? (size_t)(we - w) : sizeof word - 1;
            memcpy(word, w, wl);
            word[wl] = '\0';
            utf8_escape(word, shown, sizeof shown);
            int ww = utf8_width(shown);
            if (col > indent_w && col + 1 + ww > TEXT_WIDTH) {
                fprintf(out, "\n%s", indent);
                col = indent_w;
            } else if (col > indent_w) {
                fputc(' ', out);
                col++;
            }
            utf8_write_escaped(out, w, (size_t)(we - w), 0);
            col += ww;
            w = we;
        }
        fputc('\n', out);
        p = *end ? end + 1 : end;
        if (*p && first == indent)
            fputc('\n', out); /* a blank line between paragraphs of the text */
    }
}

/* Whether an activating setting of stage st that the summary line does not
 * carry is on: what a modifier of the stage modifies (the XTC probability,
 * the dynamic temperature's range). */
static int unsummarized_on(const struct settings *s, int st)
{
    for (const struct setting_info *j = SETTINGS_INFO; j->name; j++)
        if (j->stage == st && (j->flags & SET_ACTIVATES) && !(j->flags & SET_SUMMARY) &&
            setting_is_on(j, &s->sampler, INT_MAX))
            return 1;
    return 0;
}

/* Whether setting i of active stage st goes on the stage's line after the
 * summary: the penalty's all (its words say how it works); another stage's
 * activating settings that are on, and its modifiers when what they modify
 * is on. */
static int on_stage_line(const struct settings *s, const struct setting_info *i, int st)
{
    if (i->stage != st || report_in_summary(s, i))
        return 0;
    if (st == STAGE_PENALTY)
        return !(i->flags & SET_MODIFIER);
    if (i->flags & SET_ACTIVATES)
        return setting_is_on(i, &s->sampler, INT_MAX);
    return !(i->flags & SET_MODIFIER) || unsummarized_on(s, st);
}

/* The settings of the step: the summary line, then what the active stages
 * with more settings use (the penalty's formula, scope, ...), the shift,
 * the order and the stop rules. */
static void text_settings(FILE *out, const struct settings *s)
{
    fprintf(out, "settings:");
    char v[128];
    int k = 0;
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (report_in_summary(s, i)) {
            summary_value(s, i, v, sizeof v);
            fprintf(out, "%s %s %s", k++ ? "," : "", i->name, v);
        }
    fputc('\n', out);
    const struct sampler_settings *m = &s->sampler;
    for (int st = 0; st < STAGE_COUNT; st++) {
        if (!stage_active(m, (enum stage)st, INT_MAX))
            continue;
        int n = 0;
        if (st == STAGE_PENALTY) { /* its modifiers in words, as the view says them */
            report_penalty_how(m, 0, v, sizeof v);
            fprintf(out, "%s: %s", STAGES[st].name, v);
            n++;
        }
        for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
            if (!on_stage_line(s, i, st))
                continue;
            setting_value(s, i, v, sizeof v);
            if (n++ == 0)
                fprintf(out, "%s: ", STAGES[st].name);
            else
                fputs(n == 2 && st == STAGE_PENALTY ? "; " : ", ", out);
            fprintf(out, "%s %s", i->label, v);
        }
        if (n)
            fputc('\n', out);
    }
    if (m->shift != 0.0)
        fprintf(out, "shift: %g added to every logit\n", m->shift);
    char chain[160];
    chain_describe(&m->chain, chain, sizeof chain);
    fprintf(out, "order: %s%s\n", chain,
            m->chain.topk_keep_ties ? "; top-k keeps ties with the k-th" : "");
    if (s->max_tokens || s->n_stop) {
        fprintf(out, "stop rules: max-tokens %d", s->max_tokens);
        for (int i = 0; i < s->n_stop; i++) {
            char esc[2 * STOP_LEN + 1];
            utf8_escape(s->stop[i], esc, sizeof esc);
            fprintf(out, ", stop \"%s\"", esc);
        }
        if (s->n_stop && s->stop_text == STOP_TEXT_KEEP)
            fputs(" (kept in the text)", out);
        fputc('\n', out);
    }
}

static void text_head(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    int d = L->head.d;
    char a[32];
    if (S->given == GIVEN_HIDDEN) {
        double rms = sqrt(0.0 + L->head.eps);
        double ss = 0.0;
        for (int i = 0; i < d; i++)
            ss += S->hidden[i] * S->hidden[i];
        rms = sqrt(ss / d + L->head.eps);
        fprintf(out, "hidden h:        [");
        for (int i = 0; i < d; i++)
            report_logit(a, sizeof a, S->hidden[i], S->digits),
                fprintf(out, "%s%s", i ? ", " : "", a);
        report_logit(a, sizeof a, rms, S->digits);
        fprintf(out, "]\nRMSNorm:         sqrt(mean(h^2) + %g) = %s\n", L->head.eps, a);
        fprintf(out, "h / rms:         [");
        for (int i = 0; i < d; i++)
            report_logit(a, sizeof a, S->normed[i], S->digits),
                fprintf(out, "%s%s", i ? ", " : "", a);
        fprintf(out, "]\nLM head:         %d rows x %d = %lld weights; logit = row . (h / rms)\n",
                L->vocab.n, d, lmhead_weight_count(L->vocab.n, d));
    }
    if (L->head.real_vocab && L->head.real_hidden) {
        long long w = lmhead_weight_count(L->head.real_vocab, L->head.real_hidden);
        long long b = lmhead_bf16_bytes(L->head.real_vocab, L->head.real_hidden);
        fprintf(out,
                "real head:       %ld x %ld = %lld weights = %lld bytes in bf16 (%.2f GB), "
                "read on every decode step\n",
                L->head.real_vocab, L->head.real_hidden, w, b, (double)b / 1e9);
    }
}

static void text_notes(FILE *out, const struct report *r)
{
    const struct trace *t = r->trace;
    const struct sampler_settings *m = &r->settings->sampler;
    int V = t->vocab_size;
    if (m->penalty_formula == PENALTY_LESSON && m->repetition_penalty != 1.0) {
        int shown = 0;
        for (int k = 0; k < t->n_rows; k++) { /* the rows held: all of them, or the top ones */
            const struct trace_row *row = &t->rows[k];
            double z = row->logit + m->shift;
            if (row->seen && z < 0.0 && isfinite(z)) {
                char a[32], b[32], c[32];
                report_logit(a, sizeof a, z, 4);
                report_logit(b, sizeof b, z / m->repetition_penalty, 4);
                report_logit(c, sizeof c, z * m->repetition_penalty, 4);
                fputs("warning: the lesson's formula raises a negative logit: ", out);
                put(out, vocab_token(&r->lesson->vocab, row->id));
                fprintf(out,
                        " %s -> %s makes it MORE likely; the engines multiply instead (%s -> %s)\n",
                        a, b, a, c);
                shown = 1;
            }
        }
        if (!shown)
            fprintf(out,
                    "warning: the lesson's formula z / %g would raise a negative logit "
                    "(none is seen here); the engines multiply negative logits instead\n",
                    m->repetition_penalty);
    }
    for (int s = 0; s < STAGE_COUNT; s++) {
        if (chain_has(&m->chain, (enum stage)s) || !stage_active(m, (enum stage)s, V))
            continue;
        if (m->chain.preset != PRESET_CUSTOM)
            fprintf(out,
                    "note: %s is set, but the %s order has no such stage, so it does nothing\n",
                    stage_name((enum stage)s), preset_name(m->chain.preset));
        else
            fprintf(out, "note: %s is set but not in the order, so it does nothing\n",
                    stage_name((enum stage)s));
    }
    if (t->max_adjusted > LARGE_LOGIT || isinf(t->sum_exp))
        fprintf(out,
                "note: e^z' is huge here%s; softmax subtracts the max z' (%.4f) first, which "
                "changes no probability\n",
                isinf(t->sum_exp) ? " (the sum overflows a double)" : "", t->max_adjusted);
}

/* What a stage did, for the chain block: in, removed, mass, then what it
 * saw (its cut value, in words from sampling.def). The value stages and
 * min-p, whose lines say more, have their own below. */
struct stage_line {
    const struct report *r;
    const struct stage_report *st;
    char p_max[32], cut[32], mass[32];
    char in[32], removed[48]; /* "128,256", "128,255 tokens" */
};

static void describe_cut(FILE *out, const struct stage_line *l)
{
    fprintf(out, "%s in, removed %s holding %s", l->in, l->removed, l->mass);
    const char *cut = STAGES[l->st->stage].cut;
    if (cut) {
        fputs("; ", out);
        fprintf(out, cut, l->cut);
    }
    fputc('\n', out);
}

static void describe_penalty(FILE *out, const struct stage_line *l)
{
    const struct sampler_settings *m = &l->r->settings->sampler;
    int n = l->r->trace->penalized;
    char how[128], count[32];
    report_penalty_how(m, 0, how, sizeof how);
    draws_count_text(n, count, sizeof count);
    fprintf(out, "repetition %g (%s), presence %g, frequency %g: %s token%s changed\n",
            m->repetition_penalty, how, m->presence_penalty, m->frequency_penalty, count,
            n == 1 ? "" : "s");
}

/* A dynamic temperature's range and where this step's entropy put it. */
static void describe_dynamic(FILE *out, const struct stage_line *l)
{
    const struct sampler_settings *m = &l->r->settings->sampler;
    double lo = m->temperature - m->dynatemp_range;
    fprintf(out, "dynamic, from %g to %g by the entropy of the %s kept (exponent %g): ",
            lo > 0.0 ? lo : 0.0, m->temperature + m->dynatemp_range, l->in, m->dynatemp_exp);
    if (l->st->in <= 1)
        fprintf(out, "one token, nothing to scale\n");
    else if (l->st->cut == 0.0)
        fprintf(out, "T 0 here, greedy: removed %s holding %s\n", l->removed, l->mass);
    else
        fprintf(out, "every logit divided by %s here\n", l->cut);
}

static void describe_temperature(FILE *out, const struct stage_line *l)
{
    double T = l->r->settings->sampler.temperature;
    if (l->r->settings->sampler.dynatemp_range > 0.0)
        describe_dynamic(out, l);
    else if (T == 0.0)
        fprintf(out, "greedy: %s in, kept the argmax, removed %s holding %s\n", l->in, l->removed,
                l->mass);
    else
        fprintf(out, "every logit divided by %g\n", T);
}

static void describe_min_p(FILE *out, const struct stage_line *l)
{
    fprintf(out, "%s in, removed %s holding %s; bar %g x p_max %s = %s here\n", l->in, l->removed,
            l->mass, l->r->settings->sampler.min_p, l->p_max, l->cut);
}

static void describe_dry(FILE *out, const struct stage_line *l)
{
    const struct sampler_settings *m = &l->r->settings->sampler;
    if (l->st->cut > 0.0)
        fprintf(out,
                "a token that would extend a repeat of %d or more tokens loses %g x %g^(n - %d): "
                "up to %s here\n",
                m->dry_allowed_length, m->dry_multiplier, m->dry_base, m->dry_allowed_length,
                l->cut);
    else
        fprintf(out, "no token would extend a repeat of %d or more tokens\n",
                m->dry_allowed_length);
}

/* The mask, and where the grammar stood (its front end and text are on
 * the settings' lines above). */
static void describe_grammar(FILE *out, const struct stage_line *l)
{
    char state[4 * TRACE_GRAMMAR_STATE];
    utf8_escape(l->r->trace->grammar_state, state, sizeof state);
    fprintf(out, "%s in, removed %s holding %s; %s\n", l->in, l->removed, l->mass, state);
}

/* The logit bias: how many logits it moved, and what its -inf removed. */
static void describe_logit_bias(FILE *out, const struct stage_line *l)
{
    const struct logit_bias *b = &l->r->settings->sampler.logit_bias;
    int moved = 0;
    for (int j = 0; j < b->n; j++)
        moved += b->bias[j] != -INFINITY;
    fprintf(out, "%d logit%s moved", moved, moved == 1 ? "" : "s");
    if (moved < b->n)
        fprintf(out, "; %s in, removed %s holding %s (-inf)", l->in, l->removed, l->mass);
    fputc('\n', out);
}

/* The stages whose line is their own; every other one is describe_cut's. */
static void (*const DESCRIBE[STAGE_COUNT])(FILE *, const struct stage_line *) = {
    [STAGE_PENALTY] = describe_penalty,       [STAGE_TEMPERATURE] = describe_temperature,
    [STAGE_MIN_P] = describe_min_p,           [STAGE_DRY] = describe_dry,
    [STAGE_LOGIT_BIAS] = describe_logit_bias, [STAGE_GRAMMAR] = describe_grammar,
};

/* The setting shown with stage st's name: its first activating one, or
 * NULL where the stage's own line or the settings' lines name them (the
 * penalties, the grammar). */
static const struct setting_info *stage_setting(enum stage st)
{
    if (DESCRIBE[st] == describe_penalty || DESCRIBE[st] == describe_grammar)
        return NULL;
    return setting_of_stage((int)st);
}

/* One line per stage of the chain, in order: what it did and what it saw. */
static void text_stages(FILE *out, const struct report *r)
{
    const struct trace *t = r->trace;
    int d = r->lesson->steps[r->step - 1].digits;
    fprintf(out, "chain:\n");
    for (int c = 0; c < t->n_stages; c++) {
        struct stage_line l = { .r = r, .st = &t->stages[c] };
        const struct setting_info *main = stage_setting(l.st->stage);
        char v[32] = "", name[48];
        if (main && l.st->active)
            setting_value(r->settings, main, v, sizeof v);
        snprintf(name, sizeof name, "%s %s", stage_name(l.st->stage), v);
        fprintf(out, "  %-18s ", name);
        if (!l.st->active) {
            fprintf(out, "off\n");
            continue;
        }
        double p_max, cut;
        trace_stage_values(t, c, &p_max, &cut);
        report_number(l.p_max, sizeof l.p_max, p_max, d);
        report_number(l.cut, sizeof l.cut, cut, d);
        report_percent(l.mass, sizeof l.mass, l.st->removed_mass, d);
        draws_count_text(l.st->in, l.in, sizeof l.in);
        draws_count_text(l.st->removed, l.removed, sizeof l.removed);
        utf8_append(l.removed, sizeof l.removed, l.st->removed == 1 ? " token" : " tokens");
        (DESCRIBE[l.st->stage] ? DESCRIBE[l.st->stage] : describe_cut)(out, &l);
    }
}

static void text_hist(FILE *out, const struct draws_hist *h)
{
    long most = 1;
    for (int b = 0; b < h->bins; b++)
        most = h->count[b] > most ? h->count[b] : most;
    double width = (h->hi - h->lo) / h->bins;
    char all[32];
    draws_count_text(h->n, all, sizeof all);
    fprintf(out, "histogram of z' over %s tokens (mean %.3f, sd %.3f%s):\n", all, h->mean, h->sd,
            h->masked ? ", masked ones left out" : "");
    for (int b = 0; b < h->bins; b++) {
        int len = (int)((double)h->count[b] * 50.0 / (double)most + 0.5);
        if (h->count[b] > 0 && len == 0)
            len = 1;
        fprintf(out, "  %8.3f .. %8.3f %7ld ", h->lo + b * width, h->lo + (b + 1) * width,
                h->count[b]);
        for (int i = 0; i < len; i++)
            fputc('#', out);
        fputc('\n', out);
    }
}

/* What the chi-square of one set of counts says, in the view's words,
 * with its degrees of freedom. */
static void text_chi2(FILE *out, const char *which, double x, int df)
{
    if (df <= 0) {
        fprintf(out, "%s: too few outcomes for a chi-square test\n", which);
        return;
    }
    char words[256];
    report_chi2_words(x, df, "chi-square", 0, words, sizeof words);
    fprintf(out, "%s %s (%d degrees of freedom)\n", which, words, df);
}

static void text_draws(FILE *out, const struct report *r)
{
    const struct draws *d = r->draws;
    const struct lesson *L = r->lesson;
    char dn[32];
    draws_count_text(d->n, dn, sizeof dn);
    fprintf(out, "\n%s draws with seed %llu (u_i from Philox counter (step, 0, i, 0)):\n", dn,
            (unsigned long long)r->settings->sampler.seed);
    fprintf(
        out,
        "rank  token           without filters: count  expected   with filters: count  expected\n");
    for (int k = 0; k < d->rows; k++) {
        char esc[128], col[64];
        utf8_escape(vocab_token(&L->vocab, d->id[k]), esc, sizeof esc);
        utf8_pad(esc, TOKEN_COLS, 0, col, sizeof col);
        fprintf(out, "%4d  %s %25ld %9.1f %20ld %9.1f\n", k + 1, col, d->c_plain[k],
                d->p_plain[k] * d->n, d->c_kept[k], d->p_kept[k] * d->n);
    }
    /* On a toy step the rows are every token: there is no tail to speak of. */
    int tail = d->rows < r->trace->vocab_size;
    if (tail)
        fprintf(out, "      %-12s %25ld %9.1f %20ld %9.1f\n", "(the tail)", d->tail_plain,
                d->tail_p_plain * d->n, d->tail_kept, d->tail_p_kept * d->n);
    char n[32], tp[32], tk[32], dp[32], dk[32];
    draws_count_text(d->n, n, sizeof n);
    draws_count_text(d->tail_plain, tp, sizeof tp);
    draws_count_text(d->tail_kept, tk, sizeof tk);
    draws_count_text(d->distinct_plain, dp, sizeof dp);
    draws_count_text(d->distinct_kept, dk, sizeof dk);
    if (tail)
        fprintf(out,
                "%s of %s draws came from the tail (the tokens past rank %d), %s with the "
                "filters\n",
                tp, n, d->rows, tk);
    fprintf(out, "different tokens drawn: %s without the filters, %s with them\n", dp, dk);
    text_chi2(out, "without the filters", d->chi2_plain, d->df_plain);
    text_chi2(out, "with the filters", d->chi2_kept, d->df_kept);
    if (d->n_examples) {
        fprintf(out, "tail tokens drawn without filters, first ones:");
        for (int i = 0; i < d->n_examples; i++) {
            char esc[128];
            utf8_escape(vocab_token(&L->vocab, d->example[i]), esc, sizeof esc);
            fprintf(out, "%s \"%s\" (rank %d)", i ? "," : "", esc, d->example_rank[i] + 1);
        }
        fputc('\n', out);
    }
}

/* One row of the text table; rank_w columns for the rank (0-based rank). */
static void text_row(FILE *out, const struct lesson *L, int rank_w, int rank,
                     const struct trace_row *row, double logit, int d, enum report_style exp,
                     const char *suffix)
{
    char esc[128], col[64], kept[24];
    struct row_cells c;
    report_row_cells(row, logit, d, exp, &c);
    utf8_escape(vocab_token(&L->vocab, row->id), esc, sizeof esc);
    utf8_pad(esc, TOKEN_COLS, 0, col, sizeof col);
    snprintf(kept, sizeof kept, "%s%s", row->removed_by == TRACE_KEPT ? "" : "no:", c.kept);
    fprintf(out, "%*d %6d  %s %7s %8s %9s %7s %7s %-9s %7s%s\n", rank_w, rank + 1, row->id, col,
            c.logit, c.adjusted, c.exp, c.prob, c.cum, kept, c.final, suffix);
}

/* The head of the step: the lesson, the step's text, the LM head when the
 * step gives a hidden vector or the lesson a real model's size, the context
 * and the settings. */
static void text_intro(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    char buf[4096];
    put(out, L->id);
    fputs(": ", out);
    put(out, L->title);
    fputc('\n', out);
    fprintf(out, "step %d of %d\n", r->step, L->n_steps);
    if (r->step == 1 && L->text) {
        fputc('\n', out);
        wrap(out, "  ", "  ", L->text);
    }
    if (S->text) {
        fputc('\n', out);
        wrap(out, "  ", "  ", S->text);
        fputc('\n', out);
    }
    if (S->given == GIVEN_HIDDEN || (L->head.real_vocab && L->head.real_hidden)) {
        text_head(out, r);
        fputc('\n', out);
    }
    if (r->context_len > 0 || L->prompt_len > 0) {
        report_context_text(r, buf, sizeof buf);
        fprintf(out, "context: ");
        report_print_ids(out, r->context, r->context_len);
        char esc[sizeof buf];
        utf8_escape(buf, esc, sizeof esc);
        fprintf(out, " \"%s\"\n", esc);
    }
    text_settings(out, r->settings);
    fputc('\n', out);
}

/* The table: the shown rows, what lies beyond them, then the rows of the
 * --find tokens wherever they rank. */
static void text_table(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    const struct trace *t = r->trace;
    int d = S->digits;
    int shown = report_rows_shown(r);
    enum report_style exp = report_exp_style(r, TEXT_EXP_W);
    int prob_given = S->given == GIVEN_PROBS;
    if (prob_given)
        fprintf(out, "this step gives probabilities: its logits are ln p, so e^logit = p\n\n");
    char tok[64];
    fprintf(out, "rank     id  %s %7s %8s %9s %7s %7s %-9s %7s\n",
            (utf8_pad("token", TOKEN_COLS, 0, tok, sizeof tok), tok), "logit", "adjusted",
            prob_given ? "exp (=p)" : "exp", "prob", "cum", "kept", "final");
    for (int k = 0; k < shown; k++)
        text_row(out, L, 4, k, &t->rows[k], t->rows[k].logit, d, exp, "");
    if (shown < t->vocab_size) {
        int count, kept;
        double mass;
        trace_tail(t, shown, &count, &mass, &kept);
        char cn[32], kn[32], pct[32];
        draws_count_text(count, cn, sizeof cn);
        draws_count_text(kept, kn, sizeof kn);
        report_percent(pct, sizeof pct, mass, d + 2);
        fprintf(out, "     ... %s more tokens hold %s of the probability (%s of them kept)\n", cn,
                pct, kn);
    }
    for (int i = 0; i < r->n_find; i++) {
        struct trace_row row;
        int rank;
        if (trace_row_of(t, r->find[i], &row, &rank) < 0)
            continue;
        if (i == 0)
            fputc('\n', out);
        text_row(out, L, 6, rank, &row, source_logit(r->source, r->step, row.id), d, exp,
                 "   (found)");
    }
    fputc('\n', out);
}

/* The sums over the vocabulary, the histogram of a full-size step, the
 * chain stage by stage and what it kept. */
static void text_sums(FILE *out, const struct report *r)
{
    const struct trace *t = r->trace;
    int d = r->lesson->steps[r->step - 1].digits;
    char se[32], ss[32], mx[32], km[32];
    report_number(se, sizeof se, t->sum_exp, d);
    report_number(ss, sizeof ss, t->sum_exp_shifted, d);
    report_logit(mx, sizeof mx, t->max_adjusted, d);
    report_percent(km, sizeof km, t->kept_mass, d);
    fprintf(out,
            "sum of exp: %s   (softmax uses e^(z' - max) with max z' = %s: their sum is %s, "
            "the probabilities the same)\n",
            se, mx, ss);
    fprintf(out, "entropy: %.4f nats (effective vocabulary e^H = %.2f)\n", t->entropy,
            exp(t->entropy));
    if (r->hist)
        text_hist(out, r->hist);
    text_stages(out, r);
    char kc[32], vc[32];
    draws_count_text(t->kept_count, kc, sizeof kc);
    draws_count_text(t->vocab_size, vc, sizeof vc);
    fprintf(out, "kept: %s of %s tokens, holding %s\n", kc, vc, km);
}

/* The token drawn and how, its row after a fast run, the many draws of a
 * full-size step, and the stop rule. */
static void text_choice(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct trace *t = r->trace;
    int d = L->steps[r->step - 1].digits;
    char buf[4096];
    const char *tk = vocab_token(&L->vocab, t->choice.id);
    utf8_escape(tk, buf, sizeof buf);
    if (t->choice.sampled) {
        char lo[32], hi[32];
        report_number(lo, sizeof lo, t->choice.lo, d);
        report_number(hi, sizeof hi, t->choice.hi, d);
        fprintf(out,
                "choice: \"%s\" (id %d, rank %d): u = %.8f from seed %llu lands in [%s, %s) "
                "of the kept cumulative\n",
                buf, t->choice.id, t->choice.rank + 1, t->choice.u,
                (unsigned long long)r->settings->sampler.seed, lo, hi);
    } else {
        fprintf(out, "choice: \"%s\" (id %d): greedy, the argmax; no random number is drawn\n", buf,
                t->choice.id);
    }
    if (t->fmax_valid) {
        struct trace_row row;
        int rank;
        if (trace_row_of(t, t->choice.id, &row, &rank) == 0) {
            char vc[32];
            draws_count_text(t->vocab_size, vc, sizeof vc);
            fprintf(out, "chosen token: rank %d of %s, prob %.6f, final %.6f\n", rank + 1, vc,
                    row.prob, row.final);
        }
    }
    if (r->draws)
        text_draws(out, r);
    char stop[160];
    stop_describe(&r->stop, r->settings, &L->vocab, stop, sizeof stop);
    fputs("stop: ", out);
    put(out, r->stop.rule == STOP_NONE ? "no rule fires; the loop goes on" : stop);
    const char *shown = stop_shown(&r->stop, r->settings);
    if (shown)
        fprintf(out, ", %s", shown);
    fputc('\n', out);
}

/* What an exercise asks and its solution, the notes, and the step's note. */
static void text_end(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    int d = S->digits;
    if (S->n_ask > 0) {
        fprintf(out, "\nasked (%d decimals):\n", d);
        for (int i = 0; i < S->n_ask; i++) {
            char what[64], v[256];
            ask_describe(L, &S->ask[i], what, sizeof what);
            int ad = S->ask[i].digits >= 0 ? S->ask[i].digits : d;
            report_ask_text(r->trace, &L->vocab, &S->ask[i], ad, v, sizeof v);
            char shown[4 * sizeof what];
            utf8_escape(what, shown, sizeof shown);
            fprintf(out, "  %-16s %s\n", shown, v);
        }
    }
    if (S->solution) {
        fputc('\n', out);
        wrap(out, "solution: ", "          ", S->solution);
    }
    fputc('\n', out);
    text_notes(out, r);
    if (S->note)
        wrap(out, "note: ", "      ", S->note);
}

int report_write_text(FILE *out, const struct report *r)
{
    text_intro(out, r);
    text_table(out, r);
    text_sums(out, r);
    text_choice(out, r);
    text_end(out, r);
    return 0;
}

/* The line that closes a streamed generation: how many tokens, why it
 * stopped, and whether the stop string that ended it is in the text. */
void report_gen_text(FILE *out, const struct gen_report *g)
{
    char why[160];
    report_gen_why(g, why, sizeof why);
    int n = gen_count(g->gen);
    fprintf(out, "\n[%d token%s; %s", n, n == 1 ? "" : "s",
            g->gen->stop.rule == STOP_NONE ? "" : "stopped by ");
    put(out, why);
    const char *shown = stop_shown(&g->gen->stop, g->settings);
    if (shown)
        fprintf(out, ", %s", shown);
    fputs("]\n", out);
}
