/* report.c - what every format of the report shares: the dispatch to the
 * writers (text.c, csv.c, json.c, markdown.c), the format names, the rows
 * a report writes and what lies beyond them, the values an exercise asks
 * for, and the helpers of report_int.h. Numbers are formatted in number.c.
 */
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "base/utf8.h"
#include "report/report_int.h"

/* The formats: their names, and whether they write what a show adds to
 * the step (many draws, found rows); csv is the table alone, markdown the
 * handout's page. */
static const struct {
    const char *name;
    int extras;
} FORMATS[] = {
    [REPORT_TEXT] = { "text", 1 },
    [REPORT_CSV] = { "csv", 0 },
    [REPORT_JSON] = { "json", 1 },
    [REPORT_MARKDOWN] = { "markdown", 0 },
};

int report_parse_format(const char *name, enum report_format *fmt, struct err *e)
{
    for (size_t i = 0; i < sizeof FORMATS / sizeof FORMATS[0]; i++)
        if (strcmp(name, FORMATS[i].name) == 0) {
            *fmt = (enum report_format)i;
            return 0;
        }
    if (strcmp(name, "md") == 0) {
        *fmt = REPORT_MARKDOWN;
        return 0;
    }
    return err_set(e, ERR_USAGE, "'%s' is not a format (text, csv, json or markdown)", name);
}

const char *report_format_name(enum report_format fmt)
{
    return FORMATS[fmt].name;
}

int report_writes_extras(enum report_format fmt)
{
    return FORMATS[fmt].extras;
}

/* Whether setting i goes in a summary of s: always (SET_SUMMARY), or, for
 * the setting of a stage that is not always shown, when it is on. */
int report_in_summary(const struct settings *s, const struct setting_info *i)
{
    if (i->flags & SET_SUMMARY)
        return 1;
    return i->status && !(i->flags & (SET_LINE2 | SET_MODIFIER | SET_STATUS_ALWAYS)) &&
           i->stage != STAGE_NONE && setting_is_on(i, &s->sampler, INT_MAX);
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
    case ASK_KEPT: /* a set: as one number, how many tokens it holds */
        return t->kept_count;
    }
    return NAN;
}

void report_kept_text(const struct trace *t, const struct vocab *v, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int r = 0; r < t->n_rows; r++) {
        if (t->rows[r].removed_by != TRACE_KEPT)
            continue;
        char esc[64];
        utf8_escape(vocab_token(v, t->rows[r].id), esc, sizeof esc);
        if (buf[0])
            utf8_append(buf, n, " ");
        utf8_append(buf, n, esc);
    }
}

void report_ask_text(const struct trace *t, const struct vocab *v, const struct ask *a, int digits,
                     char *buf, size_t n)
{
    if (a->kind == ASK_KEPT)
        report_kept_text(t, v, buf, n);
    else
        report_number(buf, n, report_ask_value(t, a), digits);
}

int report_rows_shown(const struct report *r)
{
    const struct trace *t = r->trace;
    int V = t->vocab_size;
    int n = (r->top > 0 && r->top < V) ? r->top : V;
    if (t->fmax_valid && r->top <= 0 && n > REPORT_FAST_TOP)
        n = REPORT_FAST_TOP;
    return n < t->n_rows ? n : t->n_rows;
}

/* The row and rank of any token: from the rows, or looked up in the fast
 * run's state. Returns 0, or -1 when neither knows it. */
void report_context_text(const struct report *r, char *buf, size_t n)
{
    vocab_detok(&r->lesson->vocab, r->context, r->context_len, buf, n);
}

void report_print_ids(FILE *out, const int *ids, int n)
{
    fputc('[', out);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%d", i ? ", " : "", ids[i]);
    fputc(']', out);
}

void report_row_cells(const struct trace_row *row, double logit, int d, enum report_style exp,
                      struct row_cells *c)
{
    report_logit(c->logit, sizeof c->logit, logit, d);
    report_logit(c->adjusted, sizeof c->adjusted, row->adjusted, d);
    report_number_as(c->exp, sizeof c->exp, row->exp, d, exp);
    report_number(c->prob, sizeof c->prob, row->prob, d);
    report_number(c->cum, sizeof c->cum, row->cum, d);
    report_number(c->final, sizeof c->final, row->final, d);
    c->kept = row->removed_by == TRACE_KEPT ? "yes" : trace_removed_name(row->removed_by);
}

enum report_style report_exp_style(const struct report *r, int width)
{
    const struct trace *t = r->trace;
    int shown = report_rows_shown(r), n = 0;
    double *v = malloc(((size_t)shown + (size_t)r->n_find + 1) * sizeof *v);
    if (!v) /* no room to look: the style that fits every value */
        return REPORT_EXPONENT;
    for (int k = 0; k < shown; k++)
        v[n++] = t->rows[k].exp;
    for (int i = 0; i < r->n_find; i++) {
        struct trace_row row;
        int rank;
        if (trace_row_of(t, r->find[i], &row, &rank) == 0)
            v[n++] = row.exp;
    }
    enum report_style s = report_column_style(v, n, r->lesson->steps[r->step - 1].digits, width);
    free(v);
    return s;
}

void report_gen_why(const struct gen_report *g, char *buf, size_t n)
{
    if (g->gen->stop.rule == STOP_NONE)
        snprintf(buf, n, "no stop rule fired: the lesson's %d steps ran out", g->lesson->n_steps);
    else
        stop_describe(&g->gen->stop, g->settings, &g->lesson->vocab, buf, n);
}

/* The end of every report: nothing lost on the way out. A write error
 * names standard output as such (main says the same of every command). */
static int flushed(FILE *out, struct err *e)
{
    if (fflush(out) == 0 && !ferror(out))
        return 0;
    const char *why = errno ? strerror(errno) : "write error";
    if (out == stdout)
        return err_set(e, ERR_SYSTEM, "standard output: %s", why);
    return err_set(e, ERR_SYSTEM, "writing the report failed: %s", why);
}

int report_gen_begin(FILE *out, enum report_format fmt, const struct gen_report *g, struct err *e)
{
    /* Escaped as the generated text that follows it is (gen_stream). */
    if (fmt == REPORT_TEXT && g->lesson->prompt_len == 0 && g->lesson->prompt_text)
        utf8_write_escaped(out, g->lesson->prompt_text, strlen(g->lesson->prompt_text),
                           UTF8_ESC_KEEP_LINES);
    return flushed(out, e);
}

int report_gen_end(FILE *out, enum report_format fmt, const struct gen_report *g, struct err *e)
{
    static void (*const WRITE[])(FILE *, const struct gen_report *) = {
        [REPORT_TEXT] = report_gen_text,
        [REPORT_CSV] = report_gen_csv,
        [REPORT_JSON] = report_gen_json,
        [REPORT_MARKDOWN] = report_gen_markdown,
    };
    WRITE[fmt](out, g);
    return flushed(out, e);
}

int report_write(FILE *out, enum report_format fmt, const struct report *r, struct err *e)
{
    int rc;
    switch (fmt) {
    case REPORT_CSV:
        rc = report_write_csv(out, r);
        break;
    case REPORT_JSON:
        rc = report_write_json(out, r);
        break;
    case REPORT_MARKDOWN:
        rc = report_write_markdown(out, r);
        break;
    default:
        rc = report_write_text(out, r);
        break;
    }
    if (rc < 0)
        return err_set(e, ERR_SYSTEM, "writing the report failed");
    return flushed(out, e);
}
