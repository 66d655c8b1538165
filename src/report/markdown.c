/* markdown.c - the report as a Markdown handout: a step on its own or as a
 * section of `logitlab export`, an exercise as a worksheet with its values
 * left blank, and the answers for the end of the document.
 */
#include "report/report.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "report/report_int.h"

/* What a worksheet writes where a value is to be worked out. */
#define MD_BLANK "\\_\\_\\_\\_\\_\\_"

/* Text for a Markdown table cell or paragraph: its control characters
 * escaped first (utf8.h), so that nothing breaks the line or reaches a
 * terminal, then '|', '*', '_', '`', '<', '>', '[', ']', '#' and '\'
 * escaped so that a token reads as itself ("\x1B" is written "\\x1B"). */
static void md_text(FILE *out, const char *s)
{
    for (size_t len = strlen(s); len > 0;) {
        char piece[UTF8_ESC_MAX];
        size_t pn, used = utf8_escape_char(s, len, 0, piece, &pn);
        for (size_t i = 0; i < pn; i++) {
            if (strchr("|*_`<>[]\\#", piece[i]))
                fputc('\\', out);
            fputc(piece[i], out);
        }
        s += used;
        len -= used;
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

/* The head of a step: its heading, its text, the context and the settings. */
static void md_intro(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    int level = r->heading > 0 ? r->heading : 2;
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
        report_context_text(r, buf, sizeof buf);
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
        if (report_in_summary(r->settings, i)) {
            char v[64];
            setting_value(r->settings, i, v, sizeof v);
            fprintf(out, "%s %s %s", n++ ? "," : "", i->label, v);
        }
    char chain[160];
    chain_describe(&m->chain, chain, sizeof chain);
    fprintf(out, "; order %s\n\n", chain);
}

/* The table of the shown rows; a worksheet (hide) leaves the values that
 * are to be worked out blank and says nothing of the tail. */
static void md_table(FILE *out, const struct report *r, int hide)
{
    const struct lesson *L = r->lesson;
    const struct trace *t = r->trace;
    int d = L->steps[r->step - 1].digits;
    fprintf(out, "| rank | id | token | logit | z' | e^z' | p | cum | kept | final |\n");
    fprintf(out, "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n");
    int shown = report_rows_shown(r);
    enum report_style exp = report_exp_style(r, INT_MAX); /* cells have no fixed width */
    for (int k = 0; k < shown; k++) {
        /* A worksheet lists the tokens by id, so that rank gives nothing away. */
        const struct trace_row *row = hide ? &t->rows[t->rank_of[k]] : &t->rows[k];
        struct row_cells c;
        char rank[16];
        report_row_cells(row, row->logit, d, exp, &c);
        fprintf(out, "| %s | %d | ", hide ? "" : (snprintf(rank, sizeof rank, "%d", k + 1), rank),
                row->id);
        md_token(out, L, row->id);
        /* z' is the first thing worked out where the settings change it
         * (exercise 3's z / T), so it is left blank there too. */
        if (hide)
            fprintf(out, " | %s | %s | %s | %s | %s | | %s |\n", c.logit,
                    row->adjusted != row->logit ? MD_BLANK : c.adjusted, MD_BLANK, MD_BLANK,
                    MD_BLANK, MD_BLANK);
        else
            fprintf(out, " | %s | %s | %s | %s | %s | %s | %s |\n", c.logit, c.adjusted, c.exp,
                    c.prob, c.cum, c.kept, c.final);
    }
    if (shown < t->vocab_size && !hide) {
        int count, kept;
        double mass;
        trace_tail(t, shown, &count, &mass, &kept);
        fprintf(out, "\n... %d more tokens hold p %.6f (%d of them kept).\n", count, mass, kept);
    }
    fputc('\n', out);
}

/* A worksheet's questions, each with its decimals (or, for the kept set,
 * what to write) and a blank. */
static void md_work_out(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    fprintf(out, "**Work out:**\n\n");
    for (int i = 0; i < S->n_ask; i++) {
        char what[64];
        ask_describe(L, &S->ask[i], what, sizeof what);
        int ad = S->ask[i].digits >= 0 ? S->ask[i].digits : S->digits;
        fprintf(out, "- ");
        md_text(out, what);
        if (S->ask[i].kind == ASK_KEPT)
            fprintf(out, " (the tokens): %s\n", MD_BLANK);
        else
            fprintf(out, " (%d decimals): %s\n", ad, MD_BLANK);
    }
    fputc('\n', out);
}

/* The sums of the step, and the stages that did something. */
static void md_sums(FILE *out, const struct report *r)
{
    const struct trace *t = r->trace;
    int d = r->lesson->steps[r->step - 1].digits;
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
}

/* The token drawn and how, the stop rule if one fires, and the step's note. */
static void md_drawn(FILE *out, const struct report *r)
{
    const struct lesson *L = r->lesson;
    const struct lesson_step *S = &L->steps[r->step - 1];
    const struct trace *t = r->trace;
    fprintf(out, "**Drawn:** ");
    md_token(out, L, t->choice.id);
    if (t->choice.sampled)
        fprintf(out,
                " (id %d): u = %.8f from seed %llu lands in [%.4f, %.4f) of the kept cumulative.",
                t->choice.id, t->choice.u, (unsigned long long)r->settings->sampler.seed,
                t->choice.lo, t->choice.hi);
    else
        fprintf(out, " (id %d): greedy takes the largest.", t->choice.id);
    char stop[160];
    stop_describe(&r->stop, r->settings, &L->vocab, stop, sizeof stop);
    if (r->stop.rule != STOP_NONE) {
        const char *shown = stop_shown(&r->stop, r->settings);
        fprintf(out, " Then it stops: ");
        md_text(out, stop);
        if (shown)
            fprintf(out, ", %s", shown);
        fputc('.', out);
    }
    fprintf(out, "\n\n");
    if (S->note)
        md_paragraphs(out, "*Note:* ", S->note);
}

int report_write_markdown(FILE *out, const struct report *r)
{
    int hide = md_hidden(&r->lesson->steps[r->step - 1]);
    md_intro(out, r);
    md_table(out, r, hide);
    if (hide) {
        md_work_out(out, r);
        return 0;
    }
    md_sums(out, r);
    md_drawn(out, r);
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
        char what[64], val[256];
        ask_describe(L, &S->ask[i], what, sizeof what);
        int ad = S->ask[i].digits >= 0 ? S->ask[i].digits : S->digits;
        report_ask_text(r->trace, &L->vocab, &S->ask[i], ad, val, sizeof val);
        fprintf(out, "- ");
        md_text(out, what);
        fprintf(out, ": %s\n", val);
    }
    fputc('\n', out);
    if (S->solution)
        md_paragraphs(out, "", S->solution);
    /* The step's notes (where the lesson's printed numbers slip in the last
     * place) go with the answers: they quote the values asked for. */
    if (S->note)
        md_paragraphs(out, "*Note:* ", S->note);
}

/* A generation as a handout: the text, the tokens one by one, the stop. */
/* The generated tokens one by one. */
static void md_gen_ids(FILE *out, const struct gen_report *g)
{
    const struct gen *gn = g->gen;
    fprintf(out, "| step | id | token |\n| ---: | ---: | --- |\n");
    for (int i = gn->prompt_len; i < gn->len; i++) {
        fprintf(out, "| %d | %d | ", i - gn->prompt_len + 1, gn->ids[i]);
        md_token(out, g->lesson, gn->ids[i]);
        fprintf(out, " |\n");
    }
}

/* The same with each token's numbers and its step's most likely other
 * tokens (the handout of a text with its probabilities), then the text's
 * log-probability and perplexity. */
static void md_gen_steps(FILE *out, const struct gen_report *g)
{
    fprintf(out, "| step | id | token | p | ln p | final | rank | also likely |\n"
                 "| ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |\n");
    for (int i = 0; i < g->steps->n; i++) {
        const struct gen_step *st = &g->steps->s[i];
        fprintf(out, "| %d | %d | ", i + 1, st->id);
        md_token(out, g->lesson, st->id);
        fprintf(out, " | %.4f | %.4f | %.4f | %d | ", st->prob, log(st->prob), st->final, st->rank);
        for (int k = 0, n = 0; k < st->n_top; k++) {
            if (st->top[k].id == st->id)
                continue;
            fprintf(out, "%s", n++ ? ", " : "");
            md_token(out, g->lesson, st->top[k].id);
            fprintf(out, " %.4f", st->top[k].prob);
        }
        fprintf(out, " |\n");
    }
    double sum, mean, ppl;
    gen_steps_logprob(g->steps, &sum, &mean, &ppl);
    if (g->steps->n > 0)
        fprintf(out,
                "\nSum of ln p %.4f, mean %.4f a token: perplexity %.4f (e to minus the "
                "mean, the number of equally likely tokens the text was as hard to guess as).\n",
                sum, mean, ppl);
}

void report_gen_markdown(FILE *out, const struct gen_report *g)
{
    const struct gen *gn = g->gen;
    md_title(out, g->lesson, 0);
    size_t need;
    char *text = gen_shown_text(gn, 1, &need); /* cut where a stop string says */
    char *esc = malloc(4 * need + 1);
    if (text && esc) {
        utf8_escape(text, esc, 4 * need + 1);
        fprintf(out, "**Text:** ");
        md_text(out, esc);
        const char *shown = stop_shown(&gn->stop, g->settings);
        if (shown) { /* the string beside the text, which may not show it */
            char why[160];
            report_gen_why(g, why, sizeof why);
            fprintf(out, " *(stopped by ");
            md_text(out, why);
            fprintf(out, ", %s)*", shown);
        }
        fprintf(out, "\n\n");
    }
    free(text);
    free(esc);
    if (g->steps && g->steps->n == gen_count(gn))
        md_gen_steps(out, g);
    else
        md_gen_ids(out, g);
    char why[160];
    report_gen_why(g, why, sizeof why);
    int n = gen_count(gn);
    fprintf(out, "\n%d token%s; ", n, n == 1 ? "" : "s");
    if (gn->stop.rule != STOP_NONE)
        fprintf(out, "stopped by ");
    md_text(out, why);
    fprintf(out, ".\n");
}
