/* report.h - one step's trace as text, CSV or JSON, for `logitlab show`.
 *
 * The report writes exactly what the trace holds; it computes nothing but
 * the formatting (and the sums that describe rows it leaves out).
 */
#ifndef LOGITLAB_REPORT_H
#define LOGITLAB_REPORT_H

#include <stdio.h>

#include "data/lesson.h"
#include "core/draws.h"
#include "core/sampler.h"
#include "core/trace.h"
#include "core/settings.h"
#include "source/gen.h"
#include "source/source.h"

enum report_format { REPORT_TEXT, REPORT_CSV, REPORT_JSON, REPORT_MARKDOWN };

struct report {
    const struct lesson *lesson;
    const struct source *source; /* runs the lesson: the logits of found rows */
    int step;                    /* 1-based */
    const struct settings *settings;
    const int *context; /* the context the step sampled in */
    int context_len;
    int prompt_len;
    const struct trace *trace;
    struct stop_result stop; /* after appending the choice */
    int top;                 /* rows to write; 0 = all (the fast path: its rows) */
    /* A full-size step (the trace of sampler_run_fast) can also show: */
    const struct draws_hist *hist; /* a histogram of every z', or NULL */
    const struct draws *draws;     /* many draws, or NULL */
    int n_find;                    /* rows of these tokens, wherever they rank */
    const int *find;
    int heading; /* Markdown: 0, a step on its own (with the lesson's title); else the
                  * level of the step's heading inside a document (export) */
};

#define REPORT_FAST_TOP 20 /* rows a full-size step writes unless --top says */

/* What a generation's JSON and Markdown say of each token, as the engines
 * give it (llama.cpp's n_probs, OpenAI's logprobs and top_logprobs): its p
 * (the softmax of z', after penalties and temperature, before the filters
 * cut), ln p, its final p (after the filters: what the draw used), its rank
 * by p, and the most likely tokens of its step. */
#define GEN_TOP_DEFAULT 5
#define GEN_TOP_MAX     20

struct gen_step {
    int id, rank; /* rank 1: the most likely */
    double prob, final;
    int n_top;
    struct trace_alt top[GEN_TOP_MAX];
};

struct gen_steps {
    int n, cap;
    int top; /* alternatives kept a step (1 to GEN_TOP_MAX) */
    struct gen_step *s;
};

/* Starts an empty record that keeps top alternatives a step (0: the
 * default; more than GEN_TOP_MAX: that many). */
void gen_steps_init(struct gen_steps *r, int top);
void gen_steps_free(struct gen_steps *r);

/* Records the chosen token of trace t (its rows ranked: sampler_run or the
 * fast path's top rows). Returns 0, or -1 when out of memory. */
int gen_steps_add(struct gen_steps *r, const struct trace *t, struct err *e);

/* The sum of ln p over the recorded tokens, their mean, and the
 * perplexity e^-mean (NAN for no token). */
void gen_steps_logprob(const struct gen_steps *r, double *sum, double *mean, double *ppl);

/* What `logitlab generate` reports: the loop run from the prompt. */
struct gen_report {
    const struct lesson *lesson;
    const struct settings *settings; /* of the last step */
    const struct gen *gen;           /* the prompt and the tokens generated */
    const struct gen_steps *steps;   /* each generated token's numbers, or NULL */
};

/* A generation's report. Text streams: begin writes what goes before the
 * stream (the prompt in words when it has no ids), the caller streams the
 * text (gen_stream), and end writes the line that closes it. The other
 * formats write everything at the end. Returns 0, or -1 on a write error. */
int report_gen_begin(FILE *out, enum report_format fmt, const struct gen_report *g, struct err *e);
int report_gen_end(FILE *out, enum report_format fmt, const struct gen_report *g, struct err *e);

/* The stop rule of a generation in words; "no stop rule fired: the
 * lesson's N steps ran out" when none did. */
void report_gen_why(const struct gen_report *g, char *buf, size_t n);

/* Writes r to out in the given format. Returns 0, or -1 on a write error. */
int report_write(FILE *out, enum report_format fmt, const struct report *r, struct err *e);

/* The head of a Markdown document of a whole lesson: title, source, text. */
void report_markdown_title(FILE *out, const struct lesson *L);

/* The answers of an exercise step in Markdown, for the end of a worksheet:
 * each asked value and the solution. Nothing for other steps. */
void report_markdown_answers(FILE *out, const struct report *r);

/* Parses "text", "csv", "json", "markdown" (or "md"). */
int report_parse_format(const char *name, enum report_format *fmt, struct err *e);
/* The format's name, as --format takes it. */
const char *report_format_name(enum report_format fmt);
/* Whether the format writes a show's many draws and found rows (text and
 * json do; csv and markdown write the step alone). */
int report_writes_extras(enum report_format fmt);

/* The value an exercise asks for, from the trace (the kept set: its size). */
double report_ask_value(const struct trace *t, const struct ask *a);

/* The kept tokens in rank order, their display forms escaped, separated by
 * spaces ("A B C"): what a kept-set answer is checked against. */
void report_kept_text(const struct trace *t, const struct vocab *v, char *buf, size_t n);

/* An asked value as the reports print it: a number to digits decimals, or
 * the kept set as report_kept_text writes it. */
void report_ask_text(const struct trace *t, const struct vocab *v, const struct ask *a, int digits,
                     char *buf, size_t n);

#define REPORT_LARGE 1e5 /* from here numbers are written as 4.852e+08 */

/* Formats v with digits decimals the way every table and pane does ("0.4407",
 * "403.4288", and from REPORT_LARGE on "4.852e+08": digits significant). */
void report_number(char *buf, size_t n, double v, int digits);

/* The shortest of v with at most digits decimals ("2.1", "-0.24", "0.1667"). */
void report_logit(char *buf, size_t n, double v, int digits);

/* A time for a reader, us in microseconds: "999 µs" below a millisecond,
 * "160.8 ms" below ten seconds, then "12.3 s" (utf8 0: "us" for "µs").
 * The view's status line and the reports write every time through it. */
void report_duration(char *buf, size_t n, double us, int utf8);

/* A probability p as a percent, with digits - 2 decimals so that it keeps
 * the digits of p at digits decimals ("4.77 %" at 4); a nonzero p that would
 * read 0 is "< 0.01 %", one short of 1 that would read 100 "> 99.99 %". */
void report_percent(char *buf, size_t n, double p, int digits);

/* One format for every number of a column. */
enum report_style {
    REPORT_FIXED,   /* "%.*f": 24343.0094 */
    REPORT_EXPONENT /* "%.*e", digits significant: 2.434e+04 */
};

/* The style of a column of the n values v shown with digits decimals in a
 * column width characters wide: fixed when every finite value is below
 * REPORT_LARGE and its fixed text fits width, else exponent for all (so a
 * 3.269e+06 never sits above a 24343.0094). inf and NaN do not choose. Call
 * it on the values the column shows (its rows, a found row), then write
 * each with report_number_as. */
enum report_style report_column_style(const double *v, int n, int digits, int width);

/* v as report_number writes it, in the given style (inf as "inf"). */
void report_number_as(char *buf, size_t n, double v, int digits, enum report_style style);

/* words.c: the summary lines, in wordings from long (brevity 0) to short. */

/* The first of the k wordings whose width is at most room, else the last. */
const char *report_fit(int room, int k, const char *const *words);

/* How the repetition penalty works (its formula, which tokens count as
 * seen, how many): brevity 0 "lesson formula, generated tokens, all of
 * them", 1 "lesson formula, generated tokens", 2 "lesson, generated"; with
 * scope all "prompt and generated tokens" .. "prompt too", with last-n N
 * "the last N" .. "last N". */
void report_penalty_how(const struct sampler_settings *m, int brevity, char *buf, size_t n);

/* What a truncating stage removed, its mass as a percent (report_percent
 * at digits): brevity 0 "top-p removed 128,255 tokens holding 4.77 %", 1
 * "top-p removed 128,255 holding 4.77 %", 2 "top-p -128,255 (4.77 %)". */
void report_removed_words(const char *stage, int removed, double mass, int digits, int brevity,
                          char *buf, size_t n);

/* What Pearson's chi-square x on df degrees of freedom (df > 0) says of
 * many draws, against draws_chi2_limit(df), the 99.9 % point: brevity 0
 * "the draws agree with the probabilities: χ² 11.1, below the 26.3 a fair
 * sampler stays under 99.9 % of the time" (or "do not agree with", "above"),
 * 1 "the draws agree: χ² 11.1, below the 26.3 fair draws pass 0.1 % of the
 * time", 2 "the draws agree: χ² 11.1, below the fair limit 26.3", down to 4,
 * "χ² 11.1 < 26.3"
 * (REPORT_CHI2_BREVITIES wordings). chi names the statistic ("χ²", "chi2"). */
#define REPORT_CHI2_BREVITIES 5
void report_chi2_words(double x, int df, const char *chi, int brevity, char *buf, size_t n);

#endif
