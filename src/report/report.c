#include "report/report.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/lmhead.h"
#include "base/utf8.h"

#define TEXT_WIDTH  78
#define TOKEN_COLS  12
#define LARGE_LOGIT 30.0 /* above this, say that softmax subtracts the max */

int report_parse_format(const char *name, enum report_format *fmt, struct err *e)
{
    if (strcmp(name, "text") == 0)
        *fmt = REPORT_TEXT;
    else if (strcmp(name, "csv") == 0)
        *fmt = REPORT_CSV;
    else if (strcmp(name, "json") == 0)
        *fmt = REPORT_JSON;
    else if (strcmp(name, "markdown") == 0 || strcmp(name, "md") == 0)
        *fmt = REPORT_MARKDOWN;
    else
        return err_set(e, ERR_USAGE, "'%s' is not a format (text, csv, json or markdown)", name);
    return 0;
}

const char *report_removed_name(int removed_by)
{
    if (removed_by == TRACE_KEPT)
        return "";
    if (removed_by < 0 || removed_by >= STAGE_COUNT)
        return "masked";
    return STAGES[removed_by].removed ? STAGES[removed_by].removed : STAGES[removed_by].name;
}

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

/* Whether setting i goes in a summary of s: always (SET_SUMMARY), or, for
 * the setting of a stage that is not always shown, when it is on. */
static int in_summary(const struct settings *s, const struct setting_info *i)
{
    if (i->flags & SET_SUMMARY)
        return 1;
    return i->status && !(i->flags & (SET_LINE2 | SET_MODIFIER | SET_STATUS_ALWAYS)) &&
           i->stage != STAGE_NONE && setting_is_on(i, &s->sampler, INT_MAX);
}

void report_number(char *buf, size_t n, double v, int digits)
{
    if (isinf(v))
        snprintf(buf, n, "%s", v > 0 ? "inf" : "-inf");
    else if (fabs(v) >= REPORT_LARGE)
        snprintf(buf, n, "%.*e", digits > 1 ? digits - 1 : 0, v);
    else
        snprintf(buf, n, "%.*f", digits, v);
}

void report_logit(char *buf, size_t n, double v, int digits)
{
    report_number(buf, n, v, digits);
    if (strchr(buf, 'e') || strchr(buf, 'n'))
        return;
    char *dot = strchr(buf, '.');
    if (!dot)
        return;
    char *end = buf + strlen(buf) - 1;
    while (end > dot + 1 && *end == '0')
        *end-- = '\0';
    if (strcmp(buf, "-0.0") == 0)
        snprintf(buf, n, "0.0");
}

double report_ask_value(const struct trace *t, const struct ask *a)
{
    const struct trace_row *row = a->id >= 0 ? &t->rows[t->rank_of[a->id]] : NULL;
    switch (a->kind) {
    case ASK_EXP:
        return row->exp;
    case ASK_PROB:
        return row->prob;
    case ASK_FINAL:
        return row->final;
    case ASK_CUM:
        return row->cum;
    case ASK_ADJUSTED:
        return row->adjusted;
    case ASK_SUM:
        return t->sum_exp;
    case ASK_KEPT_MASS:
        return t->kept_mass;
    }
    return NAN;
}

static int rows_shown(const struct report *r)
{
    const struct trace *t = r->trace;
    int V = t->vocab_size;
    int n = (r->top > 0 && r->top < V) ? r->top : V;
    if (t->fmax_valid && r->top <= 0 && n > REPORT_FAST_TOP)
        n = REPORT_FAST_TOP;
    return n < t->n_rows ? n : t->n_rows;
}

void report_tail(const struct trace *t, int shown, int *count, double *mass, int *kept)
{
    *count = t->vocab_size - shown;
    double m = shown > 0 ? 1.0 - t->rows[shown - 1].cum : 1.0;
    *mass = m < 0 ? 0.0 : m;
    int k = t->kept_count;
    for (int i = 0; i < shown; i++)
        k -= t->rows[i].removed_by == TRACE_KEPT;
    *kept = k;
}

/* The row and rank of any token: from the rows, or looked up in the fast
 * run's state. Returns 0, or -1 when neither knows it. */
int report_row_of(const struct trace *t, int id, struct trace_row *row, int *rank)
{
    if (id < 0 || id >= t->vocab_size)
        return -1;
    int r = t->rank_of[id];
    if (r >= 0 && r < t->n_rows && t->rows[r].id == id) {
        *row = t->rows[r];
        *rank = r;
        return 0;
    }
    return sampler_fast_row(t, id, row, rank);
}

/* ---- text ------------------------------------------------------------------- */

static void wrap(FILE *out, const char *first, const char *indent, const char *text)
{
    /* Paragraphs are separated by '\n'; each is filled to TEXT_WIDTH. */
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
            char word[TEXT_WIDTH * 4];
            size_t wl = (size_t)(we - w) < sizeof word - 1 ? (size_t)(we - w) : sizeof word - 1;
            memcpy(word, w, wl);
            word[wl] = '\0';
            int ww = utf8_width(word);
            if (col > indent_w && col + 1 + ww > TEXT_WIDTH) {
                fprintf(out, "\n%s", indent);
                col = indent_w;
            } else if (col > indent_w) {
                fputc(' ', out);
                col++;
            }
            fwrite(w, 1, (size_t)(we - w), out);
            col += ww;
            w = we;
        }
        fputc('\n', out);
        p = *end ? end + 1 : end;
        if (*p && first == indent)
            fputc('\n', out); /* a blank line between paragraphs of the text */
    }
}

static void context_text(const struct report *r, char *buf, size_t n)
{
    vocab_detok(&r->lesson->vocab, r->context, r->context_len, buf, n);
}

static void print_ids(FILE *out, const int *ids, int n)
{
    fputc('[', out);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%d", i ? ", " : "", ids[i]);
    fputc(']', out);
}

/* The settings of the step: the summary line, then what the active stages
 * with more settings use (the penalty's formula, scope, ...), the shift,
 * the order and the stop rules. */
static void text_settings(FILE *out, const struct settings *s)
{
    fprintf(out, "settings:");
    char v[64];
    int k = 0;
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (in_summary(s, i)) {
            summary_value(s, i, v, sizeof v);
            fprintf(out, "%s %s %s", k++ ? "," : "", i->name, v);
        }
    fputc('\n', out);
    const struct sampler_settings *m = &s->sampler;
    for (int st = 0; st < STAGE_COUNT; st++) {
        if (!stage_active(m, (enum stage)st, INT_MAX))
            continue;
        int n = 0;
        for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
            if (i->stage != st || in_summary(s, i))
                continue;
            setting_value(s, i, v, sizeof v);
            if (n++ == 0)
                fprintf(out, "%s: ", STAGES[st].name);
            else
                fputs(", ", out);
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
                fprintf(out,
                        "warning: the lesson's formula raises a negative logit: %s %s -> %s makes "
                        "it MORE likely; the engines multiply instead (%s -> %s)\n",
                        vocab_token(&r->lesson->vocab, row->id), a, b, a, c);
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
};

static void describe_cut(FILE *out, const struct stage_line *l)
{
    fprintf(out, "%d in, removed %d (mass %s)", l->st->in, l->st->removed, l->mass);
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
    fprintf(out,
            "repetition %g (%s formula, %s tokens, last-n %d), presence %g, frequency %g: %d "
            "token%s changed\n",
            m->repetition_penalty, penalty_formula_name(m->penalty_formula),
            penalty_scope_name(m->penalty_scope), m->penalty_last_n, m->presence_penalty,
            m->frequency_penalty, n, n == 1 ? "" : "s");
}

static void describe_temperature(FILE *out, const struct stage_line *l)
{
    double T = l->r->settings->sampler.temperature;
    if (T == 0.0)
        fprintf(out, "greedy: %d in, kept the argmax, removed %d (mass %s)\n", l->st->in,
                l->st->removed, l->mass);
    else
        fprintf(out, "every logit divided by %g\n", T);
}

static void describe_min_p(FILE *out, const struct stage_line *l)
{
    fprintf(out, "%d in, removed %d (mass %s); bar %g x p_max %s = %s here\n", l->st->in,
            l->st->removed, l->mass, l->r->settings->sampler.min_p, l->p_max, l->cut);
}

/* The stages whose line is their own; every other one is describe_cut's. */
static void (*const DESCRIBE[STAGE_COUNT])(FILE *, const struct stage_line *) = {
    [STAGE_PENALTY] = describe_penalty,
    [STAGE_TEMPERATURE] = describe_temperature,
    [STAGE_MIN_P] = describe_min_p,
};

/* The one setting that turns stage st on, or NULL when several do (the
 * penalties): what the stage's name is shown with. */
static const struct setting_info *stage_setting(enum stage st)
{
    const struct setting_info *found = NULL;
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (i->stage == (int)st && (i->flags & SET_ACTIVATES)) {
            if (found)
                return NULL;
            found = i;
        }
    return found;
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
        report_number(l.p_max, sizeof l.p_max, l.st->p_max, d);
        report_number(l.cut, sizeof l.cut, l.st->cut, d);
        report_number(l.mass, sizeof l.mass, l.st->removed_mass, d);
        (DESCRIBE[l.st->stage] ? DESCRIBE[l.st->stage] : describe_cut)(out, &l);
    }
}

static void text_hist(FILE *out, const struct draws_hist *h)
{
    long most = 1;
    for (int b = 0; b < h->bins; b++)
        most = h->count[b] > most ? h->count[b] : most;
    double width = (h->hi - h->lo) / h->bins;
    fprintf(out, "histogram of z' over %ld tokens (mean %.3f, sd %.3f%s):\n", h->n, h->mean, h->sd,
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

static void text_draws(FILE *out, const struct report *r)
{
    const struct draws *d = r->draws;
    const struct lesson *L = r->lesson;
    fprintf(out, "\n%d draws with seed %llu (u_i from Philox counter (step, 0, i, 0)):\n", d->n,
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
    fprintf(out, "      %-12s %25ld %9.1f %20ld %9.1f\n", "(the tail)", d->tail_plain,
            d->tail_p_plain * d->n, d->tail_kept, d->tail_p_kept * d->n);
    fprintf(out,
            "different tokens drawn: %ld without filters, %ld with them\n"
            "chi-square against the probabilities: %.2f on %d df without filters, %.2f on %d df "
            "with them (0.1%% limits %.1f, %.1f)\n",
            d->distinct_plain, d->distinct_kept, d->chi2_plain, d->df_plain, d->chi2_kept,
            d->df_kept, draws_chi2_limit(d->df_plain), draws_chi2_limit(d->df_kept));
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

/* A row's numbers as every table prints them, logit as given. */
struct row_cells {
    char logit[32], adjusted[32], exp[32], prob[32], cum[32], final[32];
    const char *kept; /* "yes", or the stage that removed the token */
};

static void row_cells(const struct trace_row *row, double logit, int d, struct row_cells *c)
{
    report_logit(c->logit, sizeof c->logit, logit, d);
    report_logit(c->adjusted, sizeof c->adjusted, row->adjusted, d);
    report_number(c->exp, sizeof c->exp, row->exp, d);
    report_number(c->prob, sizeof c->prob, row->prob, d);
    report_number(c->cum, sizeof c->cum, row->cum, d);
    report_number(c->final, sizeof c->final, row->final, d);
    c->kept = row->removed_by == TRACE_KEPT ? "yes" : report_removed_name(row->removed_by);
}

/* One row of the text table; rank_w columns for the rank (0-based rank). */
static void text_row(FILE *out, const struct lesson *L, int rank_w, int rank,
                     const struct trace_row *row, double logit, int d, const char *suffix)
{
    char esc[128], col[64], kept[24];
    struct row_cells c;
    row_cells(row, logit, d, &c);
    utf8_escape(vocab_token(&L->vocab, row->id), esc, sizeof esc);
    utf8_pad(esc, TOKEN_COLS, 0, col, sizeof col);
    snprintf(kept, sizeof kept, "%s%s", row->removed_by == TRACE_KEPT ? "" : "no:", c.kept);
    fprintf(out, "%*d %6d  %s %7s %8s %9s %7s %7s %-9s %7s%s\n", rank_w, rank + 1, row->id, col,
            c.logit, c.adjusted, c.exp, c.prob, c.cum, kept, c.final, suffix);
}

static int write_text(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    const struct trace *t = r->trace;
    int d = S->digits;
    char buf[4096];

    fprintf(out, "%s: %s\n", L->id, L->title);
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
        context_text(r, buf, sizeof buf);
        fprintf(out, "context: ");
        print_ids(out, r->context, r->context_len);
        char esc[sizeof buf];
        utf8_escape(buf, esc, sizeof esc);
        fprintf(out, " \"%s\"\n", esc);
    }
    text_settings(out, r->settings);
    fputc('\n', out);

    int shown = rows_shown(r);
    int prob_given = S->given == GIVEN_PROBS;
    if (prob_given)
        fprintf(out, "this step gives probabilities: its logits are ln p, so e^logit = p\n\n");
    char tok[64];
    fprintf(out, "rank     id  %s %7s %8s %9s %7s %7s %-9s %7s\n",
            (utf8_pad("token", TOKEN_COLS, 0, tok, sizeof tok), tok), "logit", "adjusted",
            prob_given ? "exp (=p)" : "exp", "prob", "cum", "kept", "final");
    for (int k = 0; k < shown; k++)
        text_row(out, L, 4, k, &t->rows[k], t->rows[k].logit, d, "");
    if (shown < t->vocab_size) {
        int count, kept;
        double mass;
        report_tail(t, shown, &count, &mass, &kept);
        fprintf(out, "     ... %d more tokens hold %.6f of the probability (%d of them kept)\n",
                count, mass, kept);
    }
    for (int i = 0; i < r->n_find; i++) {
        struct trace_row row;
        int rank;
        if (report_row_of(t, r->find[i], &row, &rank) < 0)
            continue;
        if (i == 0)
            fputc('\n', out);
        text_row(out, L, 6, rank, &row, source_logit(r->source, r->step, row.id), d, "   (found)");
    }
    fputc('\n', out);
    char se[32], ss[32], mx[32], km[32];
    report_number(se, sizeof se, t->sum_exp, d);
    report_number(ss, sizeof ss, t->sum_exp_shifted, d);
    report_logit(mx, sizeof mx, t->max_adjusted, d);
    report_number(km, sizeof km, t->kept_mass, d);
    fprintf(out,
            "sum of exp: %s   (softmax uses e^(z' - max) with max z' = %s: their sum is %s, "
            "the probabilities the same)\n",
            se, mx, ss);
    fprintf(out, "entropy: %.4f nats (effective vocabulary e^H = %.2f)\n", t->entropy,
            exp(t->entropy));
    if (r->hist)
        text_hist(out, r->hist);
    text_stages(out, r);
    fprintf(out, "kept: %d of %d tokens, mass %s\n", t->kept_count, t->vocab_size, km);

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
        if (report_row_of(t, t->choice.id, &row, &rank) == 0)
            fprintf(out, "chosen token: rank %d of %d, prob %.6f, final %.6f\n", rank + 1,
                    t->vocab_size, row.prob, row.final);
    }
    if (r->draws)
        text_draws(out, r);
    char stop[160];
    stop_describe(&r->stop, r->settings, &L->vocab, stop, sizeof stop);
    fprintf(out, "stop: %s\n",
            r->stop.rule == STOP_NONE ? "no rule fires; the loop goes on" : stop);

    if (S->n_ask > 0) {
        fprintf(out, "\nasked (%d decimals):\n", d);
        for (int i = 0; i < S->n_ask; i++) {
            char what[64], v[32];
            ask_describe(L, &S->ask[i], what, sizeof what);
            int ad = S->ask[i].digits >= 0 ? S->ask[i].digits : d;
            report_number(v, sizeof v, report_ask_value(t, &S->ask[i]), ad);
            fprintf(out, "  %-16s %s\n", what, v);
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
    return 0;
}

/* ---- CSV ---------------------------------------------------------------------- */

static void shortest(char *buf, size_t n, double v);

static void csv_number(FILE *out, double v)
{
    char buf[40];
    if (isinf(v)) {
        fputs(v > 0 ? "inf" : "-inf", out);
        return;
    }
    shortest(buf, sizeof buf, v);
    fputs(buf, out);
}

static void csv_string(FILE *out, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL && s[0] != ' ' && s[0] != '\0') {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static int write_csv(FILE *out, const struct report *r)
{
    const struct trace *t = r->trace;
    fprintf(out,
            "rank,id,token,logit,adjusted,exp,prob,cum,kept,removed_by,final,cum_final,seen\n");
    int shown = rows_shown(r);
    for (int k = 0; k < shown; k++) {
        const struct trace_row *row = &t->rows[k];
        fprintf(out, "%d,%d,", k + 1, row->id);
        csv_string(out, vocab_token(&r->lesson->vocab, row->id));
        double cols[] = { row->logit, row->adjusted, row->exp, row->prob, row->cum };
        for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
            fputc(',', out), csv_number(out, cols[i]);
        fprintf(out, ",%s,%s,", row->removed_by == TRACE_KEPT ? "yes" : "no",
                report_removed_name(row->removed_by));
        csv_number(out, row->final);
        fputc(',', out);
        csv_number(out, row->cum_final);
        fprintf(out, ",%d\n", row->seen);
    }
    return 0;
}

/* ---- JSON ------------------------------------------------------------------- */

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", out);
        else if (*p == '\t')
            fputs("\\t", out);
        else if (*p == '\r')
            fputs("\\r", out);
        else if (*p < 0x20 || *p == 0x7F)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* The shortest decimal that reads back as exactly v (2.1, not 2.1000000000000001). */
static void shortest(char *buf, size_t n, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* JSON has no infinity: an overflowed value is written as null. */
static void json_number(FILE *out, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        fputs("null", out);
        return;
    }
    shortest(buf, sizeof buf, v);
    fputs(buf, out);
}

/* A setting's JSON key: its name with '_' for '-' ("top_k"). */
static void json_key(FILE *out, const char *name)
{
    fputc('"', out);
    for (const char *p = name; *p; p++)
        fputc(*p == '-' ? '_' : *p, out);
    fputs("\": ", out);
}

/* A setting's value in JSON: a number, a name, an order with its stages,
 * or the list of stop strings. */
static void json_setting(FILE *out, const struct settings *s, const struct setting_info *i)
{
    const struct sampler_settings *m = &s->sampler;
    char v[64];
    switch (i->kind) {
    case SK_DOUBLE:
        json_number(out, setting_get(s, i));
        break;
    case SK_INT:
        fprintf(out, "%d", (int)setting_get(s, i));
        break;
    case SK_ENUM:
        setting_value(s, i, v, sizeof v);
        json_string(out, v);
        break;
    case SK_SEED:
        fprintf(out, "%llu", (unsigned long long)m->seed);
        break;
    case SK_ORDER:
        fprintf(out, "\"%s\", \"chain\": [", preset_name(m->chain.preset));
        for (int k = 0; k < m->chain.n; k++)
            fprintf(out, "%s\"%s\"", k ? ", " : "", stage_name(m->chain.stage[k]));
        fprintf(out, "], \"top_k_keeps_ties\": %s", m->chain.topk_keep_ties ? "true" : "false");
        break;
    case SK_STOP:
        fputc('[', out);
        for (int k = 0; k < s->n_stop; k++) {
            if (k)
                fputs(", ", out);
            json_string(out, s->stop[k]);
        }
        fputc(']', out);
        break;
    }
}

static void json_settings(FILE *out, const struct settings *s)
{
    fprintf(out, "  \"settings\": {");
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
        if (i != SETTINGS_INFO)
            fputs(", ", out);
        json_key(out, i->name);
        json_setting(out, s, i);
    }
    fprintf(out, "},\n");
}

/* Writes ", \"name\": value" for each of n fields. */
static void json_fields(FILE *out, const char *const *names, const double *vals, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(out, ", \"%s\": ", names[i]);
        json_number(out, vals[i]);
    }
}

static int write_json(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    const struct trace *t = r->trace;
    fprintf(out, "{\n  \"lesson\": ");
    json_string(out, L->id);
    fprintf(out, ",\n  \"title\": ");
    json_string(out, L->title);
    fprintf(out, ",\n  \"step\": %d,\n  \"steps\": %d,\n  \"vocab_size\": %d,\n", r->step,
            L->n_steps, t->vocab_size);
    json_settings(out, r->settings);
    fprintf(out, "  \"context\": ");
    print_ids(out, r->context, r->context_len);
    fprintf(out, ",\n  \"prompt_len\": %d,\n  \"max_adjusted\": ", r->prompt_len);
    json_number(out, t->max_adjusted);
    fprintf(out, ",\n  \"sum_exp\": ");
    json_number(out, t->sum_exp);
    fprintf(out, ",\n  \"sum_exp_shifted\": ");
    json_number(out, t->sum_exp_shifted);
    fprintf(out, ",\n  \"entropy\": ");
    json_number(out, t->entropy);
    fprintf(out, ",\n  \"rows\": [\n");
    int shown = rows_shown(r);
    for (int k = 0; k < shown; k++) {
        const struct trace_row *row = &t->rows[k];
        fprintf(out, "    {\"rank\": %d, \"id\": %d, \"token\": ", k + 1, row->id);
        json_string(out, vocab_token(&L->vocab, row->id));
        const char *const names[] = { "logit", "adjusted", "exp", "prob", "cum" };
        const double vals[] = { row->logit, row->adjusted, row->exp, row->prob, row->cum };
        json_fields(out, names, vals, 5);
        fprintf(out, ", \"kept\": %s, \"removed_by\": ",
                row->removed_by == TRACE_KEPT ? "true" : "false");
        if (row->removed_by == TRACE_KEPT)
            fputs("null", out);
        else
            json_string(out, report_removed_name(row->removed_by));
        fprintf(out, ", \"final\": ");
        json_number(out, row->final);
        fprintf(out, ", \"cum_final\": ");
        json_number(out, row->cum_final);
        fprintf(out, ", \"seen\": %d}%s\n", row->seen, k + 1 < shown ? "," : "");
    }
    fprintf(out, "  ],\n");
    int tail_count, tail_kept;
    double tail_mass;
    report_tail(t, shown, &tail_count, &tail_mass, &tail_kept);
    fprintf(out, "  \"tail\": {\"count\": %d, \"mass\": ", tail_count);
    json_number(out, tail_mass);
    fprintf(out, ", \"kept\": %d},\n", tail_kept);
    if (r->n_find > 0) {
        fprintf(out, "  \"found\": [");
        for (int i = 0, written = 0; i < r->n_find; i++) {
            struct trace_row row;
            int rank;
            if (report_row_of(t, r->find[i], &row, &rank) < 0)
                continue;
            fprintf(out, "%s{\"rank\": %d, \"id\": %d, \"token\": ", written++ ? ", " : "",
                    rank + 1, row.id);
            json_string(out, vocab_token(&L->vocab, row.id));
            const char *const names[] = { "logit", "adjusted", "prob", "cum", "final" };
            const double vals[] = { source_logit(r->source, r->step, row.id), row.adjusted,
                                    row.prob, row.cum, row.final };
            json_fields(out, names, vals, 5);
            fprintf(out, ", \"kept\": %s}", row.removed_by == TRACE_KEPT ? "true" : "false");
        }
        fprintf(out, "],\n");
    }
    if (r->hist) {
        const struct draws_hist *h = r->hist;
        const char *const names[] = { "lo", "hi", "mean", "sd" };
        const double vals[] = { h->lo, h->hi, h->mean, h->sd };
        fprintf(out, "  \"histogram\": {\"bins\": %d", h->bins);
        json_fields(out, names, vals, 4);
        fprintf(out, ", \"counts\": [");
        for (int b = 0; b < h->bins; b++)
            fprintf(out, "%s%ld", b ? ", " : "", h->count[b]);
        fprintf(out, "]},\n");
    }
    if (r->draws) {
        const struct draws *d = r->draws;
        fprintf(out, "  \"draws\": {\"n\": %d, \"rows\": [", d->n);
        for (int k = 0; k < d->rows; k++) {
            fprintf(out, "%s{\"id\": %d, \"prob\": ", k ? ", " : "", d->id[k]);
            json_number(out, d->p_plain[k]);
            fprintf(out, ", \"count\": %ld, \"final\": ", d->c_plain[k]);
            json_number(out, d->p_kept[k]);
            fprintf(out, ", \"count_filtered\": %ld}", d->c_kept[k]);
        }
        fprintf(out, "], \"tail\": {\"prob\": ");
        json_number(out, d->tail_p_plain);
        fprintf(out, ", \"count\": %ld, \"final\": ", d->tail_plain);
        json_number(out, d->tail_p_kept);
        fprintf(out, ", \"count_filtered\": %ld}, \"chi2\": ", d->tail_kept);
        json_number(out, d->chi2_plain);
        fprintf(out, ", \"df\": %d, \"chi2_filtered\": ", d->df_plain);
        json_number(out, d->chi2_kept);
        fprintf(out, ", \"df_filtered\": %d},\n", d->df_kept);
    }
    fprintf(out, "  \"kept_count\": %d,\n  \"kept_mass\": ", t->kept_count);
    json_number(out, t->kept_mass);
    fprintf(out, ",\n  \"stages\": [");
    for (int c = 0; c < t->n_stages; c++) {
        fprintf(out, "%s{\"stage\": \"%s\", \"active\": %s, \"removed\": %d, \"removed_mass\": ",
                c ? ", " : "", stage_name(t->stages[c].stage),
                t->stages[c].active ? "true" : "false", t->stages[c].removed);
        json_number(out, t->stages[c].removed_mass);
        fputc('}', out);
    }
    fprintf(out, "],\n  \"choice\": {\"id\": %d, \"token\": ", t->choice.id);
    json_string(out, vocab_token(&L->vocab, t->choice.id));
    {
        struct trace_row row;
        int rank;
        if (report_row_of(t, t->choice.id, &row, &rank) == 0) {
            fprintf(out, ", \"prob\": ");
            json_number(out, row.prob);
            fprintf(out, ", \"final\": ");
            json_number(out, row.final);
        }
    }
    fprintf(out, ", \"rank\": %d, \"rule\": \"%s\", \"u\": ", t->choice.rank + 1,
            t->choice.sampled ? "sample" : "greedy");
    if (t->choice.sampled)
        json_number(out, t->choice.u);
    else
        fputs("null", out);
    fprintf(out, "},\n  \"stop\": {\"rule\": ");
    static const char *const RULES[] = { "none", "eos", "max-tokens", "stop-string" };
    json_string(out, RULES[r->stop.rule]);
    char desc[160];
    stop_describe(&r->stop, r->settings, &L->vocab, desc, sizeof desc);
    fprintf(out, ", \"detail\": ");
    json_string(out, desc);
    fprintf(out, "}");
    if (S->n_ask > 0) {
        fprintf(out, ",\n  \"asked\": [");
        for (int i = 0; i < S->n_ask; i++) {
            char what[64];
            ask_describe(L, &S->ask[i], what, sizeof what);
            fprintf(out, "%s{\"what\": ", i ? ", " : "");
            json_string(out, what);
            fprintf(out, ", \"value\": ");
            json_number(out, report_ask_value(t, &S->ask[i]));
            fputc('}', out);
        }
        fprintf(out, "], \"digits\": %d", S->digits);
    }
    fprintf(out, "\n}\n");
    return 0;
}

/* ---- Markdown: handouts ------------------------------------------------------ */

/* Text for a Markdown table cell or paragraph: '|', '*', '_', '`', '<', '>',
 * '[' and '\' escaped so that a token reads as itself. */
static void md_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (strchr("|*_`<>[]\\#", *s))
            fputc('\\', out);
        fputc(*s, out);
    }
}

static void md_token(FILE *out, const struct lesson *L, int id)
{
    char esc[160];
    utf8_escape(vocab_token(&L->vocab, id), esc, sizeof esc);
    md_text(out, esc);
}

/* Paragraphs of lesson text ('\n' separates them). */
static void md_paragraphs(FILE *out, const char *prefix, const char *text)
{
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, "\n");
        if (n) {
            char *para = malloc(n + 1);
            if (para) {
                memcpy(para, p, n);
                para[n] = '\0';
                fputs(prefix, out);
                md_text(out, para);
                fputs("\n\n", out);
                free(para);
            }
        }
        p += n;
        if (*p)
            p++;
    }
}

/* The head of a handout: the lesson's title, its source, and (with_text) its text. */
static void md_title(FILE *out, const struct lesson *L, int with_text)
{
    fprintf(out, "# ");
    md_text(out, L->title);
    fprintf(out, "\n\n");
    if (L->source) {
        fprintf(out, "*Source: ");
        md_text(out, L->source);
        fprintf(out, ".*\n\n");
    }
    if (with_text && L->text)
        md_paragraphs(out, "", L->text);
}

void report_markdown_title(FILE *out, const struct lesson *L)
{
    md_title(out, L, 1);
}

/* Whether the worksheet leaves a value blank: an exercise step hides what
 * it asks for, as the interactive view does until it is answered. */
static int md_hidden(const struct lesson_step *S)
{
    return S->n_ask > 0;
}

static int write_markdown(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    const struct trace *t = r->trace;
    int d = S->digits, level = r->heading > 0 ? r->heading : 2, hide = md_hidden(S);
    const char *blank = "\\_\\_\\_\\_\\_\\_";
    char buf[4096];
    if (r->heading == 0) /* a step on its own: the lesson's title first */
        md_title(out, L, 0);
    fprintf(out, "%.*s Step %d of %d%s\n\n", level, "######", r->step, L->n_steps,
            S->n_ask ? ": exercise" : "");
    if (r->heading == 0 && r->step == 1 && L->text)
        md_paragraphs(out, "", L->text);
    if (S->text)
        md_paragraphs(out, "", S->text);
    if (r->context_len > 0 || L->prompt_len > 0) {
        context_text(r, buf, sizeof buf);
        char esc[sizeof buf];
        utf8_escape(buf, esc, sizeof esc);
        fprintf(out, "**Context:** \"");
        md_text(out, esc);
        fprintf(out, "\", ids [");
        for (int i = 0; i < r->context_len; i++)
            fprintf(out, "%s%d", i ? ", " : "", r->context[i]);
        fprintf(out, "]  \n");
    }
    const struct sampler_settings *m = &r->settings->sampler;
    fprintf(out, "**Settings:**");
    int n = 0;
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (in_summary(r->settings, i)) {
            char v[64];
            setting_value(r->settings, i, v, sizeof v);
            fprintf(out, "%s %s %s", n++ ? "," : "", i->label, v);
        }
    char chain[160];
    chain_describe(&m->chain, chain, sizeof chain);
    fprintf(out, "; order %s\n\n", chain);
    fprintf(out, "| rank | id | token | logit | z' | e^z' | p | cum | kept | final |\n");
    fprintf(out, "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n");
    int shown = rows_shown(r);
    for (int k = 0; k < shown; k++) {
        /* A worksheet lists the tokens by id, so that rank gives nothing away. */
        const struct trace_row *row = hide ? &t->rows[t->rank_of[k]] : &t->rows[k];
        struct row_cells c;
        row_cells(row, row->logit, d, &c);
        fprintf(out, "| %s | %d | ", hide ? "" : (snprintf(buf, sizeof buf, "%d", k + 1), buf),
                row->id);
        md_token(out, L, row->id);
        if (hide)
            fprintf(out, " | %s | %s | %s | %s | %s | | %s |\n", c.logit, c.adjusted, blank, blank,
                    blank, blank);
        else
            fprintf(out, " | %s | %s | %s | %s | %s | %s | %s |\n", c.logit, c.adjusted, c.exp,
                    c.prob, c.cum, c.kept, c.final);
    }
    if (shown < t->vocab_size && !hide) {
        int count, kept;
        double mass;
        report_tail(t, shown, &count, &mass, &kept);
        fprintf(out, "\n... %d more tokens hold p %.6f (%d of them kept).\n", count, mass, kept);
    }
    fputc('\n', out);
    if (hide) {
        fprintf(out, "**Work out:**\n\n");
        for (int i = 0; i < S->n_ask; i++) {
            char what[64];
            ask_describe(L, &S->ask[i], what, sizeof what);
            int ad = S->ask[i].digits >= 0 ? S->ask[i].digits : d;
            fprintf(out, "- ");
            md_text(out, what);
            fprintf(out, " (%d decimals): %s\n", ad, blank);
        }
        fputc('\n', out);
        return 0;
    }
    char se[32], km[32];
    report_number(se, sizeof se, t->sum_exp, d);
    report_number(km, sizeof km, t->kept_mass, d);
    fprintf(out,
            "Sum of e^z': %s. Entropy %.4f nats (e^H = %.2f). Kept %d of %d tokens, mass %s.\n\n",
            se, t->entropy, exp(t->entropy), t->kept_count, t->vocab_size, km);
    int any = 0;
    for (int c = 0; c < t->n_stages; c++) {
        const struct stage_report *st = &t->stages[c];
        if (!st->active)
            continue;
        char rm[32];
        report_number(rm, sizeof rm, st->removed_mass, d);
        fprintf(out, "%s- %s: %d in, removed %d (mass %s)\n",
                any ? "" : "Stages that did something:\n\n",
                st->stage == STAGE_TEMPERATURE && t->greedy ? "greedy (T = 0)"
                                                            : stage_name(st->stage),
                st->in, st->removed, rm);
        any = 1;
    }
    if (any)
        fputc('\n', out);
    fprintf(out, "**Drawn:** ");
    md_token(out, L, t->choice.id);
    if (t->choice.sampled)
        fprintf(out,
                " (id %d): u = %.8f from seed %llu lands in [%.4f, %.4f) of the kept cumulative.",
                t->choice.id, t->choice.u, (unsigned long long)m->seed, t->choice.lo, t->choice.hi);
    else
        fprintf(out, " (id %d): greedy takes the largest.", t->choice.id);
    char stop[160];
    stop_describe(&r->stop, r->settings, &L->vocab, stop, sizeof stop);
    if (r->stop.rule != STOP_NONE) {
        fprintf(out, " Then it stops: ");
        md_text(out, stop);
        fputc('.', out);
    }
    fprintf(out, "\n\n");
    if (S->note)
        md_paragraphs(out, "*Note:* ", S->note);
    return 0;
}

void report_markdown_answers(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    if (!S->n_ask)
        return;
    fprintf(out, "### Step %d\n\n", r->step);
    for (int i = 0; i < S->n_ask; i++) {
        char what[64], val[32];
        ask_describe(L, &S->ask[i], what, sizeof what);
        int ad = S->ask[i].digits >= 0 ? S->ask[i].digits : S->digits;
        report_number(val, sizeof val, report_ask_value(r->trace, &S->ask[i]), ad);
        fprintf(out, "- ");
        md_text(out, what);
        fprintf(out, ": %s\n", val);
    }
    fputc('\n', out);
    if (S->solution)
        md_paragraphs(out, "", S->solution);
}

int report_write(FILE *out, enum report_format fmt, const struct report *r, struct err *e)
{
    int rc;
    switch (fmt) {
    case REPORT_CSV:
        rc = write_csv(out, r);
        break;
    case REPORT_JSON:
        rc = write_json(out, r);
        break;
    case REPORT_MARKDOWN:
        rc = write_markdown(out, r);
        break;
    default:
        rc = write_text(out, r);
        break;
    }
    if (rc < 0 || fflush(out) != 0 || ferror(out))
        return err_set(e, ERR_SYSTEM, "writing the report failed: %s", strerror(errno));
    return 0;
}
