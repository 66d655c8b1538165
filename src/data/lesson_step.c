/* lesson_step.c - the [step.N] sections of a lesson file: where a step's
 * logits come from (logits, probs, a hidden vector for the head, or the
 * model), its context and text, the values it asks for and the settings it
 * suggests trying.
 */
#include "data/lesson.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sampler_rules.h"
#include "data/lesson_load.h"
#include "model/lmhead.h"

#define PROB_SUM_TOLERANCE 1e-6

/* What an ask line can ask for. digits: what an answer of the kind is
 * checked to unless "@N" says; -1 the step's decimals, 0 for a set of
 * tokens (its count, in the reports). */
static const struct {
    const char *word;
    enum ask_kind kind;
    int per_token;
    int digits;
} ASK_KINDS[] = {
    { "exp", ASK_EXP, 1, -1 },
    { "prob", ASK_PROB, 1, -1 },
    { "final", ASK_FINAL, 1, -1 },
    { "cum", ASK_CUM, 1, -1 },
    { "adjusted", ASK_ADJUSTED, 1, -1 },
    { "sum", ASK_SUM, 0, -1 },
    { "kept-mass", ASK_KEPT_MASS, 0, -1 },
    { "kept", ASK_KEPT, 0, 0 },
};
enum { N_ASK_KINDS = sizeof ASK_KINDS / sizeof ASK_KINDS[0] };

static int parse_ask(struct loader *ld, const struct lesson *L, int line, const char *text,
                     struct lesson_step *S)
{
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, ",");
        char item[64];
        if (len >= sizeof item) {
            ld_error(ld, line, "ask: item '%.20s...' is too long", p);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        size_t lead = strspn(item, " \t");
        memmove(item, item + lead, len - lead + 1);
        p += len + (p[len] == ',');
        /* "sum@2": this answer to 2 decimals (the solution's own precision). */
        int digits = -1;
        char *at = strchr(item, '@');
        if (at) {
            struct err de;
            if (parse_int(at + 1, 0, DIGITS_MAX, &digits, &de) < 0) {
                ld_error(ld, line, "ask: '%s': %s", item, de.msg);
                return -1;
            }
            *at = '\0';
        }
        char word[32] = "", arg[48] = "", extra[8] = "";
        int got = sscanf(item, " %31s %47s %7s", word, arg, extra);
        if (got < 1)
            continue;
        int k = -1;
        for (int i = 0; i < N_ASK_KINDS; i++)
            if (strcmp(word, ASK_KINDS[i].word) == 0)
                k = i;
        if (k < 0) {
            char words[128] = "";
            for (int i = 0; i < N_ASK_KINDS; i++)
                snprintf(words + strlen(words), sizeof words - strlen(words), "%s%s", i ? ", " : "",
                         ASK_KINDS[i].word);
            ld_error(ld, line, "ask: '%s' is not a value to ask for (%s)", word, words);
            return -1;
        }
        struct ask a = { ASK_KINDS[k].kind, -1, digits >= 0 ? digits : ASK_KINDS[k].digits };
        if (ASK_KINDS[k].per_token) {
            if (!arg[0]) {
                ld_error(ld, line, "ask: '%s' needs a token (an id or its text)", word);
                return -1;
            }
            for (int id = 0; id < L->vocab.n && a.id < 0; id++)
                if (strcmp(vocab_token(&L->vocab, id), arg) == 0)
                    a.id = id;
            struct err e;
            if (a.id < 0 && ld_all_digits(arg) && parse_int(arg, 0, L->vocab.n - 1, &a.id, &e) < 0)
                a.id = -1;
            if (a.id < 0) {
                ld_error(ld, line, "ask: '%s' is not a token of the vocabulary", arg);
                return -1;
            }
        }
        if (got > (ASK_KINDS[k].per_token ? 2 : 1)) {
            ld_error(ld, line, "ask: '%s' has a word too many", item);
            return -1;
        }
        if (S->n_ask == LESSON_MAX_ASK) {
            ld_error(ld, line, "ask: more than %d values", LESSON_MAX_ASK);
            return -1;
        }
        S->ask[S->n_ask++] = a;
    }
    return 0;
}

int ld_check_setting_list(struct loader *ld, int line, const char *what,
                          const struct settings *base, const char *text)
{
    /* Check every part: "name value | name value". An empty part
     * ("try = |") is refused, which strtok would have skipped. */
    struct settings check = *base;
    char buf[SETTINGS_LIST_MAX];
    const struct setting_info *seen[64];
    int n_seen = 0;
    if (strlen(text) >= sizeof buf) {
        ld_error(ld, line, "%s: longer than %zu bytes", what, sizeof buf - 1);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", text);
    for (char *cursor = buf, *part; (part = settings_list_next(&cursor)) != NULL;) {
        char name[48] = "";
        int off = 0;
        if (sscanf(part, " %47s %n", name, &off) < 1) {
            ld_error(ld, line, "%s: an empty setting", what);
            return -1;
        }
        char *value = part + off;
        size_t vl = strlen(value);
        while (vl > 0 && isspace((unsigned char)value[vl - 1]))
            value[--vl] = '\0';
        struct err e;
        const struct setting_info *info = setting_find(name);
        if (!info) {
            ld_error(ld, line, "%s: '%s' is not a setting", what, name);
            return -1;
        }
        /* The second would silently win; stop strings add up, so they may repeat. */
        for (int k = 0; k < n_seen && info->kind != SK_STOP; k++)
            if (seen[k] == info) {
                ld_error(ld, line, "%s: '%s' is given twice", what, name);
                return -1;
            }
        if (n_seen < (int)(sizeof seen / sizeof seen[0]))
            seen[n_seen++] = info;
        if (settings_set(&check, name, value, &e) < 0) {
            ld_error(ld, line, "%s: %s: %s", what, name, e.msg);
            return -1;
        }
    }
    return 0;
}

/* The entries named key of section, one line each (no continuation), each
 * checked as a list of settings, into list (max of them, *count so far). */
static int read_setting_lists(struct loader *ld, const struct settings *base, const char *section,
                              const char *key, const char *many, struct lesson_try *list, int max,
                              int *count)
{
    for (int i = 0; i < ld->n; i++) {
        struct ini_entry *en = &ld->entries[i];
        if (strcmp(en->section, section) || strcmp(en->name, key))
            continue;
        if (en->cont) {
            ld_error(ld, en->line, "a %s cannot continue on the next line", key);
            return -1;
        }
        if (*count == max) {
            ld_error(ld, en->line, "more than %d %s", max, many);
            return -1;
        }
        if (ld_check_setting_list(ld, en->line, key, base, en->value) < 0)
            return -1;
        struct lesson_try *t = &list[(*count)++];
        t->line = en->line;
        t->text = strdup(en->value);
        if (!t->text) {
            ld->oom = 1;
            return -1;
        }
    }
    return 0;
}

static int parse_tries(struct loader *ld, const struct settings *base, struct lesson_step *S,
                       const char *section)
{
    return read_setting_lists(ld, base, section, "try", "tries in one step", S->tries,
                              LESSON_MAX_TRY, &S->n_try);
}

int ld_read_requests(struct loader *ld, struct lesson *L, const struct settings *lesson_set)
{
    return read_setting_lists(ld, lesson_set, "lesson", "request", "requests in one lesson",
                              L->requests, LESSON_MAX_REQUESTS, &L->n_request);
}

static int starts_with(const int *a, int na, const int *prefix, int np)
{
    if (na < np)
        return 0;
    for (int i = 0; i < np; i++)
        if (a[i] != prefix[i])
            return 0;
    return 1;
}

/* Where a step's logits come from: the text of its logits, probs and hidden
 * keys (NULL where absent) and the line of each. */
struct step_input {
    char *logits, *probs, *hidden;
    int lline, pline, hline;
};

static void input_free(struct step_input *in)
{
    free(in->logits);
    free(in->probs);
    free(in->hidden);
}

/* Collects the three keys; on an error none is kept. */
static int collect_input(struct loader *ld, const char *section, struct step_input *in)
{
    if (ld_collect(ld, section, "logits", NULL, &in->logits, &in->lline) < 0 ||
        ld_collect(ld, section, "probs", NULL, &in->probs, &in->pline) < 0 ||
        ld_collect(ld, section, "hidden", NULL, &in->hidden, &in->hline) < 0) {
        input_free(in);
        return -1;
    }
    return 0;
}

/* A step of a lesson with [model]: the model computes its logits, so the
 * step may not give them. */
static int read_model_step(struct loader *ld, const char *section, const struct step_input *in,
                           struct lesson_step *S)
{
    if (in->logits || in->probs || in->hidden) {
        ld_error(ld,
                 in->lline   ? in->lline
                 : in->pline ? in->pline
                             : in->hline,
                 "[%s]: the model computes the logits of a lesson with [model]", section);
        return -1;
    }
    S->given = GIVEN_MODEL;
    return 0;
}

/* logits: one value per token, as they are. */
static int read_logits(struct loader *ld, int V, const struct step_input *in, struct lesson_step *S)
{
    S->given = GIVEN_LOGITS;
    int n = ld_parse_numbers(ld, in->lline, "logits", in->logits, S->logits, V);
    if (n < 0)
        return -1;
    if (n != V) {
        ld_error(ld, in->lline, "logits has %d value%s, the vocabulary has %d tokens", n,
                 n == 1 ? "" : "s", V);
        return -1;
    }
    return 0;
}

/* probs: one probability per token, in [0, 1] and adding up to 1. */
static int read_probs(struct loader *ld, int V, const struct step_input *in, struct lesson_step *S)
{
    S->given = GIVEN_PROBS;
    S->probs = calloc((size_t)V + 1, sizeof *S->probs);
    if (!S->probs) {
        ld->oom = 1;
        return -1;
    }
    int n = ld_parse_numbers(ld, in->pline, "probs", in->probs, S->probs, V);
    if (n < 0)
        return -1;
    if (n != V) {
        ld_error(ld, in->pline, "probs has %d value%s, the vocabulary has %d tokens", n,
                 n == 1 ? "" : "s", V);
        return -1;
    }
    double sum = 0.0;
    for (int i = 0; i < V; i++) {
        if (S->probs[i] < 0.0 || S->probs[i] > 1.0) {
            ld_error(ld, in->pline, "probs: value %d (%g) is not in [0, 1]", i + 1, S->probs[i]);
            return -1;
        }
        sum += S->probs[i];
        /* ln p: softmax gives p back, and every stage works as for logits. */
        S->logits[i] = S->probs[i] > 0.0 ? log(S->probs[i]) : -INFINITY;
    }
    if (fabs(sum - 1.0) > PROB_SUM_TOLERANCE) {
        ld_error(ld, in->pline, "probs add up to %.6g, not 1", sum);
        return -1;
    }
    return 0;
}

/* The logits the head gives a hidden vector already read: RMSNorm, then
 * one dot product per token, each of which must be finite. */
static int head_logits(struct loader *ld, const struct lesson *L, int line, struct lesson_step *S)
{
    int V = L->vocab.n, d = L->head.d;
    double rms = lmhead_rmsnorm(S->hidden, d, L->head.eps, S->normed);
    if (!(rms > 0.0) || !isfinite(rms)) {
        ld_error(ld, line,
                 "hidden: RMSNorm divides by %g (an all-zero vector needs "
                 "eps > 0 in [head])",
                 rms);
        return -1;
    }
    /* The head's product is the source's to compute (source/kind_head.c);
     * here it only proves that the file's numbers give finite logits, in
     * the buffer given for them, which the step then does not keep. */
    lmhead_gemv(L->head.w, V, d, S->normed, S->logits);
    int bad = -1;
    for (int i = 0; i < V && bad < 0; i++)
        if (!rule_z_in_range(S->logits[i]))
            bad = i;
    int finite = bad >= 0 && isfinite(S->logits[bad]);
    free(S->logits);
    S->logits = NULL;
    if (bad >= 0) {
        ld_error(ld, line, "hidden: the head gives token %d a logit %s", bad,
                 finite ? "past the sampler's limit of 1e30" : "that is not finite");
        return -1;
    }
    return 0;
}

/* hidden: a vector for the lesson's [head], which turns it into logits. */
static int read_hidden(struct loader *ld, const struct lesson *L, const struct step_input *in,
                       struct lesson_step *S)
{
    S->given = GIVEN_HIDDEN;
    if (!L->head.d) {
        ld_error(ld, in->hline, "hidden needs a [head] section with the LM head's rows");
        return -1;
    }
    int d = L->head.d;
    S->hidden = calloc((size_t)d + 1, sizeof *S->hidden);
    S->normed = calloc((size_t)d, sizeof *S->normed);
    if (!S->hidden || !S->normed) {
        ld->oom = 1;
        return -1;
    }
    int n = ld_parse_numbers(ld, in->hline, "hidden", in->hidden, S->hidden, d);
    if (n < 0)
        return -1;
    if (n != d) {
        ld_error(ld, in->hline, "hidden has %d value%s, the head's rows have %d", n,
                 n == 1 ? "" : "s", d);
        return -1;
    }
    return head_logits(ld, L, in->hline, S);
}

/* The logits of a step of a lesson without [model], from the one key of
 * the three that gives them. */
static int read_given(struct loader *ld, const struct lesson *L, const char *section,
                      const struct step_input *in, struct lesson_step *S)
{
    int V = L->vocab.n, rc = 0;
    int given = !!in->logits + !!in->probs + !!in->hidden;
    if (given != 1) {
        int line = in->lline ? in->lline : in->pline ? in->pline : in->hline ? in->hline : S->line;
        ld_error(ld, line,
                 given ? "[%s] gives more than one of logits, probs and hidden"
                       : "[%s] needs logits, probs or hidden",
                 section);
        rc = -1;
    }
    /* Allocated whatever the count: out of memory outranks that message. */
    S->logits = calloc((size_t)V, sizeof *S->logits);
    if (!S->logits) {
        ld->oom = 1;
        rc = -1;
    }
    if (rc < 0)
        return -1;
    if (in->logits)
        return read_logits(ld, V, in, S);
    if (in->probs)
        return read_probs(ld, V, in, S);
    return read_hidden(ld, L, in, S);
}

/* The keys of a step besides its logits: context, text, digits, ask,
 * settings and tries. */
static int read_step_keys(struct loader *ld, const struct lesson *L, const char *section,
                          struct lesson_step *S, const struct settings *lesson_set)
{
    char *v = NULL;
    int line = 0, rc;
    if (ld_collect(ld, section, "context", NULL, &v, &line) < 0)
        return -1;
    if (v) {
        S->has_context = 1;
        rc = ld_read_id_list(ld, L, line, "context", v, &S->context, &S->context_len);
        free(v);
        if (rc < 0)
            return -1;
        if (!starts_with(S->context, S->context_len, L->prompt, L->prompt_len)) {
            ld_error(ld, line, "context must begin with the lesson's prompt");
            return -1;
        }
    }
    if (ld_collect(ld, section, "text", "\n", &S->text, NULL) < 0 ||
        ld_collect(ld, section, "note", "\n", &S->note, NULL) < 0 ||
        ld_collect(ld, section, "solution", "\n", &S->solution, NULL) < 0)
        return -1;
    if (ld_collect_int(ld, section, "digits", 0, DIGITS_MAX, &S->digits) < 0)
        return -1;
    if (ld_collect(ld, section, "ask", ",", &v, &line) < 0)
        return -1;
    if (v) {
        rc = parse_ask(ld, L, line, v, S);
        free(v);
        if (rc < 0)
            return -1;
    }
    struct settings check = *lesson_set;
    if (ld_read_settings(ld, section, &check, &S->settings, &S->n_settings, &S->patch) < 0)
        return -1;
    return parse_tries(ld, &check, S, section);
}

/* [step.N]: where its logits come from, then its other keys. */
static int read_step(struct loader *ld, struct lesson *L, int index,
                     const struct settings *lesson_set)
{
    struct lesson_step *S = &L->steps[index - 1];
    char section[32];
    snprintf(section, sizeof section, "step.%d", index);
    S->digits = DIGITS_DEFAULT;
    S->line = ld->step_line[index];
    struct step_input in = { .logits = NULL };
    if (collect_input(ld, section, &in) < 0)
        return -1;
    int rc =
        L->model.on ? read_model_step(ld, section, &in, S) : read_given(ld, L, section, &in, S);
    input_free(&in);
    if (rc < 0)
        return -1;
    return read_step_keys(ld, L, section, S, lesson_set);
}

int ld_read_steps(struct loader *ld, struct lesson *L, const struct settings *lesson_set)
{
    /* Steps are the [step.N] headers the reader saw, keys or not. */
    int max = 0;
    for (int k = 1; k <= LESSON_MAX_STEPS; k++)
        if (ld->step_line[k])
            max = k;
    if (L->model.on) {
        /* The model gives every step; [step.N] only adds text or settings. */
        if (max > L->model.steps) {
            ld_error(ld, ld->step_line[max], "[step.%d] is past the last step (steps = %d)", max,
                     L->model.steps);
            return -1;
        }
        max = L->model.steps;
    }
    if (max <= 0) {
        ld_error(ld, NO_LINE, "the lesson has no [step.1]");
        return -1;
    }
    for (int k = 1; k <= max && !L->model.on; k++)
        if (!ld->step_line[k]) {
            int next = k + 1;
            while (!ld->step_line[next])
                next++; /* stops at max at the latest */
            ld_error(ld, ld->step_line[next],
                     "there is no [step.%d] (steps are numbered 1, 2, 3, ...)", k);
            return -1;
        }
    L->steps = calloc((size_t)max, sizeof *L->steps); /* 1 <= max <= LESSON_MAX_STEPS */
    if (!L->steps) {
        ld->oom = 1;
        return -1;
    }
    L->n_steps = max;
    for (int k = 1; k <= max; k++)
        if (read_step(ld, L, k, lesson_set) < 0)
            return -1;
    return 0;
}
