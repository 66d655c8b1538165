/* csv.c - the report as CSV: one line per row of the table, numbers in
 * their shortest exact form, tokens quoted only where CSV needs it.
 */
#include "report/report.h"

#include <math.h>
#include <string.h>

#include "base/utf8.h"
#include "report/report_int.h"

static void csv_number(FILE *out, double v)
{
    char buf[40];
    if (isinf(v)) {
        fputs(v > 0 ? "inf" : "-inf", out);
        return;
    }
    report_shortest(buf, sizeof buf, v);
    fputs(buf, out);
}

/* A field: its control characters escaped (utf8.h), so that it stays on
 * its line and off the terminal; quoted when it holds a comma or a quote,
 * starts with a space or is empty, with its quotes doubled. */
static void csv_string(FILE *out, const char *s)
{
    int quote = strpbrk(s, ",\"") != NULL || s[0] == ' ' || s[0] == '\0';
    if (quote)
        fputc('"', out);
    for (size_t len = strlen(s); len > 0;) {
        char piece[UTF8_ESC_MAX];
        size_t pn, used = utf8_escape_char(s, len, 0, piece, &pn);
        if (pn == 1 && piece[0] == '"')
            fputc('"', out);
        fwrite(piece, 1, pn, out);
        s += used;
        len -= used;
    }
    if (quote)
        fputc('"', out);
}

int report_write_csv(FILE *out, const struct report *r)
{
    const struct trace *t = r->trace;
    fprintf(out,
            "rank,id,token,logit,adjusted,exp,prob,cum,kept,removed_by,final,cum_final,seen\n");
    int shown = report_rows_shown(r);
    for (int k = 0; k < shown; k++) {
        const struct trace_row *row = &t->rows[k];
        fprintf(out, "%d,%d,", k + 1, row->id);
        csv_string(out, vocab_token(&r->lesson->vocab, row->id));
        double cols[] = { row->logit, row->adjusted, row->exp, row->prob, row->cum };
        for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
            fputc(',', out), csv_number(out, cols[i]);
        fprintf(out, ",%s,%s,", row->removed_by == TRACE_KEPT ? "yes" : "no",
                trace_removed_name(row->removed_by));
        csv_number(out, row->final);
        fputc(',', out);
        csv_number(out, row->cum_final);
        fprintf(out, ",%d\n", row->seen);
    }
    return 0;
}

/* A generation as rows: one per generated token (its step, id and display
 * text), the last one with the rule that stopped the loop. */
void report_gen_csv(FILE *out, const struct gen_report *g)
{
    const struct gen *gn = g->gen;
    fprintf(out, "step,id,token,stop\n");
    int n = gen_count(gn);
    for (int i = 0; i < n; i++) {
        int id = gn->ids[gn->prompt_len + i];
        fprintf(out, "%d,%d,", i + 1, id);
        csv_string(out, vocab_token(&g->lesson->vocab, id));
        fprintf(out, ",%s\n", i + 1 == n ? stop_rule_name(gn->stop.rule) : "");
    }
}
