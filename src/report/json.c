/* json.c - the report as one JSON object: the step, its settings, the rows,
 * what a full-size step adds (found rows, histogram, draws), the stages,
 * the choice, the stop rule and what an exercise asks. Numbers are the
 * shortest that read back exactly; JSON has no infinity, so null.
 */
#include "report/report.h"

#include <math.h>
#include <stdlib.h>

#include "base/utf8.h"
#include "report/report_int.h"

/* A JSON string: every control character (utf8.h: C0, DEL and C1) as
 * \n, \t, \r or \u00XX, which reads back as itself; a byte that is not
 * valid UTF-8, which JSON cannot hold, as the text \xNN (written "\\xNN"),
 * the visible form every other output gives it. */
static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (size_t len = strlen(s); len > 0;) {
        uint32_t cp;
        int l = utf8_decode(s, len, &cp);
        if (l == 0)
            fprintf(out, "\\\\x%02X", (unsigned char)*s), l = 1;
        else if (cp == '"' || cp == '\\')
            fprintf(out, "\\%c", (char)cp);
        else if (cp == '\n')
            fputs("\\n", out);
        else if (cp == '\t')
            fputs("\\t", out);
        else if (cp == '\r')
            fputs("\\r", out);
        else if (utf8_cp_is_control(cp))
            fprintf(out, "\\u%04x", (unsigned)cp);
        else
            fwrite(s, 1, (size_t)l, out);
        s += l;
        len -= (size_t)l;
    }
    fputc('"', out);
}

/* JSON has no infinity: an overflowed value is written as null. */
static void json_number(FILE *out, double v)
{
    char buf[40];
    if (!isfinite(v)) {
        fputs("null", out);
        return;
    }
    report_shortest(buf, sizeof buf, v);
    fputs(buf, out);
}

/* One probability and its natural log (null where p is 0: no log). */
static void json_prob(FILE *out, const char *key, double p, const char *log_key)
{
    fprintf(out, "\"%s\": ", key);
    json_number(out, p);
    fprintf(out, ", \"%s\": ", log_key);
    json_number(out, p > 0.0 ? log(p) : NAN);
}

/* A setting's JSON key: its name with '_' for '-' ("top_k"). */
static void json_key(FILE *out, const char *name)
{
    fputc('"', out);
    for (const char *p = name; *p; p++)
        fputc(*p == '-' ? '_' : *p, out);
    fputs("\": ", out);
}

/* The logit bias as [{"id": 2, "bias": "-inf"}, {"id": 5, "bias": 1.5}]
 * (JSON has no -inf: the string), the bad words as [[6], [2, 5]]. */
static void json_id_lists(FILE *out, const struct sampler_settings *m, enum setting_kind kind)
{
    fputc('[', out);
    if (kind == SK_BIAS) {
        for (int k = 0; k < m->logit_bias.n; k++) {
            fprintf(out, "%s{\"id\": %d, \"bias\": ", k ? ", " : "", m->logit_bias.id[k]);
            if (m->logit_bias.bias[k] == -INFINITY)
                fputs("\"-inf\"", out);
            else
                json_number(out, m->logit_bias.bias[k]);
            fputc('}', out);
        }
    }
    for (int w = 0; kind == SK_WORDS && w < m->bad_words.n; w++) {
        fputs(w ? ", [" : "[", out);
        for (int j = 0; j < m->bad_words.len[w]; j++)
            fprintf(out, "%s%d", j ? ", " : "", m->bad_words.id[w][j]);
        fputc(']', out);
    }
    fputc(']', out);
}

/* A setting's value in JSON: a number, a name, an order with its stages,
 * the list of stop strings, or a list of token ids. */
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
    case SK_GRAMMAR:
        if (setting_get(s, i) != 0.0)
            json_string(out, s->grammar_text);
        else
            fputs("null", out);
        break;
    case SK_BIAS:
    case SK_WORDS:
        json_id_lists(out, m, i->kind);
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

/* The step and its settings, the context and the sums over the vocabulary. */
static void json_head(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct trace *t = r->trace;
    fprintf(out, "{\n  \"lesson\": ");
    json_string(out, L->id);
    fprintf(out, ",\n  \"title\": ");
    json_string(out, L->title);
    fprintf(out, ",\n  \"step\": %d,\n  \"steps\": %d,\n  \"vocab_size\": %d,\n", r->step,
            L->n_steps, t->vocab_size);
    json_settings(out, r->settings);
    fprintf(out, "  \"context\": ");
    report_print_ids(out, r->context, r->context_len);
    fprintf(out, ",\n  \"prompt_len\": %d,\n  \"max_adjusted\": ", r->prompt_len);
    json_number(out, t->max_adjusted);
    fprintf(out, ",\n  \"sum_exp\": ");
    json_number(out, t->sum_exp);
    fprintf(out, ",\n  \"sum_exp_shifted\": ");
    json_number(out, t->sum_exp_shifted);
    fprintf(out, ",\n  \"entropy\": ");
    json_number(out, t->entropy);
}

/* The first shown rows, one a line, then what lies beyond them. */
static void json_rows(FILE *out, const struct report *r, int shown)
{
    const struct trace *t = r->trace;
    fprintf(out, ",\n  \"rows\": [\n");
    for (int k = 0; k < shown; k++) {
        const struct trace_row *row = &t->rows[k];
        fprintf(out, "    {\"rank\": %d, \"id\": %d, \"token\": ", k + 1, row->id);
        json_string(out, vocab_token(&r->lesson->vocab, row->id));
        const char *const names[] = { "logit", "adjusted", "exp", "prob", "cum" };
        const double vals[] = { row->logit, row->adjusted, row->exp, row->prob, row->cum };
        json_fields(out, names, vals, 5);
        fprintf(out, ", \"kept\": %s, \"removed_by\": ",
                row->removed_by == TRACE_KEPT ? "true" : "false");
        if (row->removed_by == TRACE_KEPT)
            fputs("null", out);
        else
            json_string(out, trace_removed_name(row->removed_by));
        fprintf(out, ", \"final\": ");
        json_number(out, row->final);
        fprintf(out, ", \"cum_final\": ");
        json_number(out, row->cum_final);
        fprintf(out, ", \"seen\": %d}%s\n", row->seen, k + 1 < shown ? "," : "");
    }
    fprintf(out, "  ],\n");
    int tail_count, tail_kept;
    double tail_mass;
    trace_tail(t, shown, &tail_count, &tail_mass, &tail_kept);
    fprintf(out, "  \"tail\": {\"count\": %d, \"mass\": ", tail_count);
    json_number(out, tail_mass);
    fprintf(out, ", \"kept\": %d},\n", tail_kept);
}

/* The rows of the --find tokens, wherever they rank; unknown ones are left out. */
static void json_found(FILE *out, const struct report *r)
{
    const struct trace *t = r->trace;
    fprintf(out, "  \"found\": [");
    for (int i = 0, written = 0; i < r->n_find; i++) {
        struct trace_row row;
        int rank;
        if (trace_row_of(t, r->find[i], &row, &rank) < 0)
            continue;
        fprintf(out, "%s{\"rank\": %d, \"id\": %d, \"token\": ", written++ ? ", " : "", rank + 1,
                row.id);
        json_string(out, vocab_token(&r->lesson->vocab, row.id));
        const char *const names[] = { "logit", "adjusted", "prob", "cum", "final" };
        const double vals[] = { source_logit(r->source, r->step, row.id), row.adjusted, row.prob,
                                row.cum, row.final };
        json_fields(out, names, vals, 5);
        fprintf(out, ", \"kept\": %s}", row.removed_by == TRACE_KEPT ? "true" : "false");
    }
    fprintf(out, "],\n");
}

static void json_hist(FILE *out, const struct draws_hist *h)
{
    const char *const names[] = { "lo", "hi", "mean", "sd" };
    const double vals[] = { h->lo, h->hi, h->mean, h->sd };
    fprintf(out, "  \"histogram\": {\"bins\": %d", h->bins);
    json_fields(out, names, vals, 4);
    fprintf(out, ", \"counts\": [");
    for (int b = 0; b < h->bins; b++)
        fprintf(out, "%s%ld", b ? ", " : "", h->count[b]);
    fprintf(out, "]},\n");
}

static void json_draws(FILE *out, const struct draws *d)
{
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

/* What an active stage saw: a cut's value (its report's, as the text
 * report words it), the temperature's divisor (dynamic or not), the
 * grammar's state in words. */
static void json_stage_value(FILE *out, const struct trace *t, const struct sampler_settings *s,
                             int c)
{
    const struct stage_report *r = &t->stages[c];
    if (!r->active)
        return;
    double p_max, cut;
    trace_stage_values(t, c, &p_max, &cut);
    if (r->stage == STAGE_GRAMMAR) { /* what it removed is in "removed"; where it stands: */
        fprintf(out, ", \"state\": ");
        json_string(out, t->grammar_state);
    } else if (STAGES[r->stage].flags & SF_CUT) {
        fprintf(out, ", \"cut\": ");
        json_number(out, cut);
    } else if (r->stage == STAGE_TEMPERATURE && trace_temperature(t, s) > 0.0) {
        fprintf(out, ", \"divided_by\": "); /* 0: greedy, which "removed" says */
        json_number(out, trace_temperature(t, s));
    }
}

/* What was kept, and what each stage of the chain removed. */
static void json_stages(FILE *out, const struct trace *t, const struct sampler_settings *s)
{
    fprintf(out, "  \"kept_count\": %d,\n  \"kept_mass\": ", t->kept_count);
    json_number(out, t->kept_mass);
    fprintf(out, ",\n  \"stages\": [");
    for (int c = 0; c < t->n_stages; c++) {
        fprintf(out, "%s{\"stage\": \"%s\", \"active\": %s, \"removed\": %d, \"removed_mass\": ",
                c ? ", " : "", stage_name(t->stages[c].stage),
                t->stages[c].active ? "true" : "false", t->stages[c].removed);
        json_number(out, t->stages[c].removed_mass);
        json_stage_value(out, t, s, c);
        fputc('}', out);
    }
    fprintf(out, "],\n");
}

/* After a stop string, the string itself and whether the text shows it
 * (stop-text): ", \"string\": \"on mat\", \"shown\": false". */
static void json_stop_string(FILE *out, const struct stop_result *r, const struct settings *s)
{
    if (r->rule != STOP_STRING)
        return;
    fprintf(out, ", \"string\": ");
    json_string(out, s->stop[r->which]);
    fprintf(out, ", \"shown\": %s", s->stop_text == STOP_TEXT_KEEP ? "true" : "false");
}

/* The token drawn, how (u, or greedy), then the stop rule that fired. */
static void json_choice(FILE *out, const struct report *r)
{
    const struct trace *t = r->trace;
    const struct lesson *L = r->lesson;
    fprintf(out, "  \"choice\": {\"id\": %d, \"token\": ", t->choice.id);
    json_string(out, vocab_token(&L->vocab, t->choice.id));
    struct trace_row row;
    int rank;
    if (trace_row_of(t, t->choice.id, &row, &rank) == 0) {
        fputs(", ", out);
        json_prob(out, "prob", row.prob, "logprob");
        fprintf(out, ", \"final\": ");
        json_number(out, row.final);
    }
    fprintf(out, ", \"rank\": %d, \"rule\": \"%s\", \"u\": ", t->choice.rank + 1,
            t->choice.sampled ? "sample" : "greedy");
    if (t->choice.sampled)
        json_number(out, t->choice.u);
    else
        fputs("null", out);
    fprintf(out, "},\n  \"stop\": {\"rule\": ");
    json_string(out, stop_rule_name(r->stop.rule));
    char desc[160];
    stop_describe(&r->stop, r->settings, &L->vocab, desc, sizeof desc);
    fprintf(out, ", \"detail\": ");
    json_string(out, desc);
    json_stop_string(out, &r->stop, r->settings);
    fprintf(out, "}");
}

/* An exercise's asked values, as the trace holds them (no rounding). */
static void json_asks(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    fprintf(out, ",\n  \"asked\": [");
    for (int i = 0; i < S->n_ask; i++) {
        char what[64];
        ask_describe(L, &S->ask[i], what, sizeof what);
        fprintf(out, "%s{\"what\": ", i ? ", " : "");
        json_string(out, what);
        fprintf(out, ", \"value\": ");
        json_number(out, report_ask_value(r->trace, &S->ask[i]));
        if (S->ask[i].kind == ASK_KEPT) { /* the value is the set's size; the set itself: */
            char set[256];
            report_kept_text(r->trace, &L->vocab, set, sizeof set);
            fprintf(out, ", \"tokens\": ");
            json_string(out, set);
        }
        fputc('}', out);
    }
    fprintf(out, "], \"digits\": %d", S->digits);
}

int report_write_json(FILE *out, const struct report *r)
{
    json_head(out, r);
    json_rows(out, r, report_rows_shown(r));
    if (r->n_find > 0)
        json_found(out, r);
    if (r->hist)
        json_hist(out, r->hist);
    if (r->draws)
        json_draws(out, r->draws);
    json_stages(out, r->trace, &r->settings->sampler);
    json_choice(out, r);
    if (r->lesson->steps[r->step - 1].n_ask > 0)
        json_asks(out, r);
    fprintf(out, "\n}\n");
    return 0;
}

/* The ids from..to of a generation as a JSON list, and the same tokens'
 * display texts. */
static void json_ids(FILE *out, const struct gen_report *g, int from, int to, int texts)
{
    fputc('[', out);
    for (int i = from; i < to; i++) {
        if (i > from)
            fputs(", ", out);
        if (texts)
            json_string(out, vocab_token(&g->lesson->vocab, g->gen->ids[i]));
        else
            fprintf(out, "%d", g->gen->ids[i]);
    }
    fputc(']', out);
}

/* A generated token with its numbers and its step's most likely tokens,
 * as the engines' logprobs and top_logprobs give them. */
static void json_gen_step(FILE *out, const struct gen_report *g, int i)
{
    const struct gen_step *st = &g->steps->s[i];
    const struct vocab *v = &g->lesson->vocab;
    fprintf(out, "{\"step\": %d, \"id\": %d, \"token\": ", i + 1, st->id);
    json_string(out, vocab_token(v, st->id));
    fputs(", ", out);
    json_prob(out, "prob", st->prob, "logprob");
    fputs(", \"final\": ", out);
    json_number(out, st->final);
    fprintf(out, ", \"rank\": %d, \"top\": [", st->rank);
    for (int k = 0; k < st->n_top; k++) {
        fprintf(out, "%s{\"id\": %d, \"token\": ", k ? ", " : "", st->top[k].id);
        json_string(out, vocab_token(v, st->top[k].id));
        fputs(", ", out);
        json_prob(out, "prob", st->top[k].prob, "logprob");
        fputs(", \"final\": ", out);
        json_number(out, st->top[k].final);
        fputc('}', out);
    }
    fputs("]}", out);
}

/* Every generated token's numbers, then the text's: the sum and mean of
 * ln p and the perplexity e^-mean. */
static void json_gen_steps(FILE *out, const struct gen_report *g)
{
    fputs(", \"steps\": [", out);
    for (int i = 0; i < g->steps->n; i++) {
        fputs(i ? ",\n  " : "\n  ", out);
        json_gen_step(out, g, i);
    }
    double sum, mean, ppl;
    gen_steps_logprob(g->steps, &sum, &mean, &ppl);
    fputs("], \"logprob_sum\": ", out);
    json_number(out, sum);
    fputs(", \"logprob_mean\": ", out);
    json_number(out, mean);
    fputs(", \"perplexity\": ", out);
    json_number(out, ppl);
}

void report_gen_json(FILE *out, const struct gen_report *g)
{
    const struct gen *gn = g->gen;
    fprintf(out, "{\"lesson\": ");
    json_string(out, g->lesson->id);
    fprintf(out, ", \"generated\": ");
    json_ids(out, g, gn->prompt_len, gn->len, 0);
    fprintf(out, ", \"prompt\": ");
    json_ids(out, g, 0, gn->prompt_len, 0);
    fprintf(out, ", \"tokens\": ");
    json_ids(out, g, gn->prompt_len, gn->len, 1);
    if (g->steps)
        json_gen_steps(out, g);
    size_t len;
    char *text = gen_shown_text(gn, 0, &len); /* cut where a stop string says */
    if (text) {
        fprintf(out, ", \"text\": ");
        json_string(out, text);
        free(text);
    }
    char why[160];
    report_gen_why(g, why, sizeof why);
    fprintf(out, ", \"stop\": {\"rule\": ");
    json_string(out, stop_rule_name(gn->stop.rule));
    fprintf(out, ", \"detail\": ");
    json_string(out, why);
    json_stop_string(out, &gn->stop, g->settings);
    fprintf(out, "}}\n");
}
