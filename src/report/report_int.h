/* report_int.h - what the formats of the report share, for the files of
 * src/report/ only (never installed, never included from another folder):
 * the writer of each format, which report_write dispatches to, and the
 * helpers that more than one of them uses. Each name carries report_
 * because it links with the whole program, though no other folder calls it.
 */
#ifndef LOGITLAB_REPORT_INT_H
#define LOGITLAB_REPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "report/report.h"

/* The writers of the formats (text.c, csv.c, json.c, markdown.c). Each
 * returns 0; a write error is found by report_write from the stream. */
int report_write_text(FILE *out, const struct report *r);
int report_write_csv(FILE *out, const struct report *r);
int report_write_json(FILE *out, const struct report *r);
int report_write_markdown(FILE *out, const struct report *r);

/* The writers of a generation's report in each format (report_gen_end). */
void report_gen_text(FILE *out, const struct gen_report *g);
void report_gen_csv(FILE *out, const struct gen_report *g);
void report_gen_json(FILE *out, const struct gen_report *g);
void report_gen_markdown(FILE *out, const struct gen_report *g);

/* The shortest decimal that reads back as exactly v (2.1, not
 * 2.1000000000000001), for the CSV and the JSON (number.c). */
void report_shortest(char *buf, size_t n, double v);

/* How many rows of the trace the report writes: --top, or REPORT_FAST_TOP
 * after a fast run, never more than the trace holds. */
int report_rows_shown(const struct report *r);

/* Whether setting i goes in a one-line summary of s (text and Markdown). */
int report_in_summary(const struct settings *s, const struct setting_info *i);

/* The context of the step as text, detokenized (text and Markdown). */
void report_context_text(const struct report *r, char *buf, size_t n);

/* Writes ids as "[1, 2, 3]" (the text's context line and the JSON). */
void report_print_ids(FILE *out, const int *ids, int n);

/* A row's numbers as every table prints them, logit as given. */
struct row_cells {
    char logit[32], adjusted[32], exp[32], prob[32], cum[32], final[32];
    const char *kept; /* "yes", or the stage that removed the token */
};

/* Fills c from row with d decimals, exp in the style of its column (the
 * text table and Markdown's). */
void report_row_cells(const struct trace_row *row, double logit, int d, enum report_style exp,
                      struct row_cells *c);

/* The one style of the exp column over the rows r writes (the shown rows
 * and the --find rows), for a column width characters wide
 * (report_column_style). */
enum report_style report_exp_style(const struct report *r, int width);

#endif
