/* settings_list.c - the two settings that are lists of token ids: the
 * logit bias ("2:-inf, 5:1.5") and the bad words ("6; 2 5"). Parsed here
 * from text once, printed back the way they are typed, and checked; the
 * vocabulary they must fit is known only at a step
 * (sampler_check_setting_ids). settings.c calls these for the kinds BIAS
 * and WORDS. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/settings.h"

/* Whether text is "off" or nothing, give or take spaces: the list is cleared. */
static int clears(const char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    size_t n = strlen(text);
    while (n > 0 && isspace((unsigned char)text[n - 1]))
        n--;
    return n == 0 || (n == 3 && strncmp(text, "off", 3) == 0);
}

/* The len bytes at p as a string in out (size bytes); -1 when too long. */
static int take(const char *p, size_t len, char *out, size_t size)
{
    if (len >= size)
        return -1;
    memcpy(out, p, len);
    out[len] = '\0';
    return 0;
}

/* A token id: digits only (no sign), at most INT_MAX. */
static int parse_id(const char *text, int *out, struct err *e)
{
    char *end;
    errno = 0;
    long v = isdigit((unsigned char)text[0]) ? strtol(text, &end, 10) : -1;
    if (v < 0 || *end != '\0' || errno == ERANGE || v > INT_MAX)
        return err_set(e, ERR_USAGE, "'%s' is not a token id", text);
    *out = (int)v;
    return 0;
}

/* A bias: -inf, or a finite number in the setting's range. +inf is no
 * bias: it would leave every other token impossible, and two such tokens
 * no distribution at all. */
static int parse_bias(const struct setting_info *i, int id, const char *text, double *out,
                      struct err *e)
{
    if (strcmp(text, "-inf") == 0) {
        *out = -INFINITY;
        return 0;
    }
    const char *p = text + (*text == '+');
    if (strcmp(p, "inf") == 0 || strcmp(p, "infinity") == 0)
        return err_set(e, ERR_USAGE, "token %d: a bias of +inf is refused (must be %s)", id,
                       i->range);
    double v;
    if (parse_double(text, &v, e) < 0)
        return -1;
    if (v < i->lo || v > i->hi)
        return err_set(e, ERR_USAGE, "token %d: bias %s is out of range (must be %s)", id, text,
                       i->range);
    *out = v;
    return 0;
}

int parse_logit_bias(const struct setting_info *i, const char *text, struct logit_bias *out,
                     struct err *e)
{
    struct logit_bias b = { .n = 0 };
    const char *p = text;
    while (!clears(p)) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        size_t len = strcspn(p, " \t\n,");
        char item[64];
        if (take(p, len, item, sizeof item) < 0)
            return err_set(e, ERR_USAGE, "'%.24s...' is not ID:BIAS", p);
        p += len;
        char *colon = strchr(item, ':');
        if (!colon)
            return err_set(e, ERR_USAGE, "'%s' is not ID:BIAS (a token id, ':', a number)", item);
        *colon = '\0';
        int id = 0;
        double bias = 0.0;
        if (parse_id(item, &id, e) < 0 || parse_bias(i, id, colon + 1, &bias, e) < 0)
            return -1;
        for (int k = 0; k < b.n; k++)
            if (b.id[k] == id)
                return err_set(e, ERR_USAGE, "token %d is given twice", id);
        if (b.n == LOGIT_BIAS_MAX)
            return err_set(e, ERR_USAGE, "more than %d tokens", LOGIT_BIAS_MAX);
        b.id[b.n] = id;
        b.bias[b.n++] = bias;
    }
    *out = b;
    return 0;
}

int parse_bad_words(const char *text, struct bad_words *out, struct err *e)
{
    struct bad_words w = { .n = 0 };
    const char *p = text;
    if (!clears(p)) {
        for (;;) {
            size_t len = strcspn(p, ";");
            char seq[256];
            if (take(p, len, seq, sizeof seq) < 0)
                return err_set(e, ERR_USAGE, "'%.24s...' is too long for a bad word", p);
            if (w.n == BAD_WORDS_MAX)
                return err_set(e, ERR_USAGE, "more than %d bad words", BAD_WORDS_MAX);
            int n = parse_int_list(seq, w.id[w.n], BAD_WORD_LEN, INT_MAX, e);
            if (n < 0) {
                err_prefix(e, "bad word %d", w.n + 1);
                return -1;
            }
            if (n == 0)
                return err_set(e, ERR_USAGE, "'%s' has an empty bad word", text);
            w.len[w.n++] = n;
            if (p[len] == '\0')
                break;
            p += len + 1;
        }
    }
    *out = w;
    return 0;
}

/* Copies text into buf, ending it in "..." where it does not fit. */
static void put_cut(const char *text, char *buf, size_t n)
{
    if (n == 0)
        return;
    size_t len = strlen(text);
    if (len < n) {
        memcpy(buf, text, len + 1);
        return;
    }
    snprintf(buf, n, "%s", text);
    for (size_t k = n > 4 ? n - 4 : 0; k + 1 < n; k++)
        buf[k] = '.';
}

void logit_bias_text(const struct logit_bias *b, char *buf, size_t n)
{
    char all[LOGIT_BIAS_MAX * 32 + 4] = "off";
    size_t k = 0;
    for (int j = 0; j < b->n && j < LOGIT_BIAS_MAX; j++) {
        const char *sep = j ? "," : "";
        if (b->bias[j] == -INFINITY)
            k += (size_t)snprintf(all + k, sizeof all - k, "%s%d:-inf", sep, b->id[j]);
        else
            k += (size_t)snprintf(all + k, sizeof all - k, "%s%d:%.6g", sep, b->id[j], b->bias[j]);
    }
    put_cut(all, buf, n);
}

void bad_words_text(const struct bad_words *w, char *buf, size_t n)
{
    char all[BAD_WORDS_MAX * BAD_WORD_LEN * 12 + 4] = "off";
    size_t k = 0;
    for (int s = 0; s < w->n && s < BAD_WORDS_MAX; s++)
        for (int j = 0; j < w->len[s] && j < BAD_WORD_LEN; j++)
            k += (size_t)snprintf(all + k, sizeof all - k, "%s%d",
                                  j   ? " "
                                  : s ? "; "
                                      : "",
                                  w->id[s][j]);
    put_cut(all, buf, n);
}

static int check_bias(const struct setting_info *i, const struct logit_bias *b, struct err *e)
{
    if (b->n < 0 || b->n > LOGIT_BIAS_MAX)
        return err_set(e, ERR_USAGE, "%s has %d tokens (at most %d)", i->name, b->n,
                       LOGIT_BIAS_MAX);
    for (int j = 0; j < b->n; j++) {
        double v = b->bias[j];
        if (b->id[j] < 0)
            return err_set(e, ERR_USAGE, "%s: token %d is not a token id", i->name, b->id[j]);
        if (v != -INFINITY && !(v >= i->lo && v <= i->hi))
            return err_set(e, ERR_USAGE, "%s: token %d's bias %g is out of range (must be %s)",
                           i->name, b->id[j], v, i->range);
        for (int k = 0; k < j; k++)
            if (b->id[k] == b->id[j])
                return err_set(e, ERR_USAGE, "%s: token %d is given twice", i->name, b->id[j]);
    }
    return 0;
}

static int check_words(const struct setting_info *i, const struct bad_words *w, struct err *e)
{
    if (w->n < 0 || w->n > BAD_WORDS_MAX)
        return err_set(e, ERR_USAGE, "%s has %d sequences (at most %d)", i->name, w->n,
                       BAD_WORDS_MAX);
    for (int s = 0; s < w->n; s++) {
        if (w->len[s] < 1 || w->len[s] > BAD_WORD_LEN)
            return err_set(e, ERR_USAGE, "%s: sequence %d has %d ids (1 to %d)", i->name, s + 1,
                           w->len[s], BAD_WORD_LEN);
        for (int j = 0; j < w->len[s]; j++)
            if (w->id[s][j] < 0)
                return err_set(e, ERR_USAGE, "%s: token %d is not a token id", i->name,
                               w->id[s][j]);
    }
    return 0;
}

int check_list_setting(const struct setting_info *i, const void *member, struct err *e)
{
    if (i->kind == SK_BIAS)
        return check_bias(i, member, e);
    if (i->kind == SK_WORDS)
        return check_words(i, member, e);
    return 0;
}
