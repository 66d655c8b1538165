#include "core/settings.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct setting_info SETTINGS_INFO[] = {
    { "temperature", "T", "divide every logit by T (>= 0); 0 = greedy, 1 = off" },
    { "top-k", "K", "keep the K most likely tokens; 0 = off" },
    { "top-p", "P", "keep the shortest prefix reaching P, in (0, 1]; 1 = off" },
    { "min-p", "P", "keep tokens with p >= P * p_max, in [0, 1]; 0 = off" },
    { "repetition-penalty", "A", "penalize seen tokens by A (> 0); 1 = off" },
    { "penalty-formula", "engine|lesson", "engine: z/A if z > 0 else z*A; lesson: z/A always" },
    { "penalty-scope", "generated|all", "which tokens count as seen: generated, or prompt too" },
    { "penalty-last-n", "N", "only the last N tokens of the scope count; 0 = all" },
    { "presence-penalty", "X", "subtract X once from each seen token" },
    { "frequency-penalty", "X", "subtract X per occurrence of each seen token" },
    { "shift", "C", "add C to every logit first (probabilities do not change)" },
    { "seed", "N", "seed of the Philox draw, 0 to 2^64-1" },
    { "order", "PRESET|LIST", "lesson, hf, vllm, llamacpp, or stages like top-k,temperature" },
    { "max-tokens", "N", "stop after N generated tokens; 0 = no limit" },
    { "stop", "TEXT", "stop when the generated text contains TEXT; empty clears" },
    { NULL, NULL, NULL },
};

void settings_defaults(struct settings *s)
{
    memset(s, 0, sizeof *s);
    sampler_defaults(&s->sampler);
}

int settings_known(const char *name)
{
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (strcmp(i->name, name) == 0)
            return 1;
    return 0;
}

int parse_double(const char *text, double *out, struct err *e)
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0')
        return err_set(e, ERR_USAGE, "a number is missing");
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (end == p || *end != '\0')
        return err_set(e, ERR_USAGE, "'%s' is not a number", text);
    if (isnan(v))
        return err_set(e, ERR_USAGE, "'%s' is not a number (NaN)", text);
    if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0))
        return err_set(e, ERR_USAGE, "'%s' is not a finite number", text);
    if (errno == ERANGE)
        v = 0.0; /* an underflow is a value too small to matter */
    *out = v;
    return 0;
}

int parse_int(const char *text, int lo, int hi, int *out, struct err *e)
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0')
        return err_set(e, ERR_USAGE, "a whole number is missing");
    char *end;
    errno = 0;
    long v = strtol(p, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (end == p || *end != '\0')
        return err_set(e, ERR_USAGE, "'%s' is not a whole number", text);
    if (errno == ERANGE || v < lo || v > hi) {
        if (hi == INT_MAX && errno != ERANGE && v < lo)
            return err_set(e, ERR_USAGE, "%s is out of range (must be %d or more)", text, lo);
        return err_set(e, ERR_USAGE, "%s is out of range (must be %d to %d)", text, lo, hi);
    }
    *out = (int)v;
    return 0;
}

int parse_seed(const char *text, uint64_t *out, struct err *e)
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p))
        return err_set(e, ERR_USAGE, "'%s' is not a seed (a whole number 0 to 2^64-1)", text);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return err_set(e, ERR_USAGE, "'%s' is not a seed (a whole number 0 to 2^64-1)", text);
    if (errno == ERANGE)
        return err_set(e, ERR_USAGE, "%s is out of range (a seed is at most 2^64-1)", text);
    *out = (uint64_t)v;
    return 0;
}

int parse_int_list(const char *text, int *out, int max, int limit, struct err *e)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (*p == '\0')
            break;
        if (!isdigit((unsigned char)*p))
            return err_set(e, ERR_USAGE, "'%s' is not a list of token ids", text);
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno == ERANGE || v >= limit)
            return err_set(e, ERR_USAGE, "token id %.*s is not in the vocabulary (0..%d)",
                           (int)(end - p), p, limit - 1);
        if (*end && !isspace((unsigned char)*end) && *end != ',')
            return err_set(e, ERR_USAGE, "'%s' is not a list of token ids", text);
        if (n == max)
            return err_set(e, ERR_USAGE, "more than %d token ids", max);
        out[n++] = (int)v;
        p = end;
    }
    return n;
}

int unescape(const char *text, char *out, size_t n, struct err *e)
{
    size_t k = 0;
    for (const char *p = text; *p; p++) {
        char c = *p;
        if (c == '\\') {
            p++;
            switch (*p) {
            case 'n':
                c = '\n';
                break;
            case 't':
                c = '\t';
                break;
            case '\\':
                c = '\\';
                break;
            case '"':
                c = '"';
                break;
            case '\0':
                return err_set(e, ERR_USAGE, "'%.60s' ends in a lone backslash", text);
            default:
                return err_set(e, ERR_USAGE, "unknown escape \\%c in '%s' (use \\n \\t \\\\ \\\")",
                               *p, text);
            }
        }
        if (k + 1 >= n)
            return err_set(e, ERR_USAGE, "'%.24s...' is too long (at most %zu bytes)", text, n - 1);
        out[k++] = c;
    }
    out[k] = '\0';
    return (int)k;
}

static int is_off(const char *value)
{
    return strcmp(value, "off") == 0;
}

static int set_range(double *dst, const char *value, double off, double lo, double hi, int lo_open,
                     const char *range, struct err *e)
{
    double v = off;
    if (!is_off(value) && parse_double(value, &v, e) < 0)
        return -1;
    if (v < lo || v > hi || (lo_open && v == lo))
        return err_set(e, ERR_USAGE, "%s is out of range (must be %s)", value, range);
    *dst = v;
    return 0;
}

int settings_parse_order(const char *value, struct chain *c, struct err *e)
{
    for (int p = 0; p < PRESET_CUSTOM; p++)
        if (strcmp(value, preset_name((enum preset)p)) == 0) {
            chain_preset(c, (enum preset)p);
            return 0;
        }
    struct chain out = { .n = 0, .preset = PRESET_CUSTOM, .topk_keep_ties = 0 };
    const char *p = value;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        size_t len = strcspn(p, ",");
        size_t trim = len;
        while (trim > 0 && isspace((unsigned char)p[trim - 1]))
            trim--;
        if (trim == 0)
            return err_set(e, ERR_USAGE, "'%s' has an empty stage", value);
        int found = -1;
        for (int s = 0; s < STAGE_COUNT; s++)
            if (strlen(stage_name((enum stage)s)) == trim &&
                strncmp(p, stage_name((enum stage)s), trim) == 0)
                found = s;
        if (trim == 9 && strncmp(p, "penalties", 9) == 0)
            found = STAGE_PENALTY;
        if (found < 0)
            return err_set(e, ERR_USAGE,
                           "'%.*s' is not a preset (lesson, hf, vllm, llamacpp) or a stage "
                           "(penalty, temperature, top-k, top-p, min-p)",
                           (int)trim, p);
        for (int i = 0; i < out.n; i++)
            if ((int)out.stage[i] == found)
                return err_set(e, ERR_USAGE, "'%s' names %s twice", value,
                               stage_name((enum stage)found));
        out.stage[out.n++] = (enum stage)found;
        p += len;
        if (*p == ',') {
            p++;
            if (p[strspn(p, " \t")] == '\0')
                return err_set(e, ERR_USAGE, "'%s' has an empty stage", value);
        }
    }
    if (out.n == 0)
        return err_set(e, ERR_USAGE, "an order is empty");
    *c = out;
    return 0;
}

void chain_describe(const struct chain *c, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "%s (", preset_name(c->preset));
    for (int i = 0; i < c->n && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", stage_name(c->stage[i]));
    if (k < n)
        snprintf(buf + k, n - k, ")");
}

int settings_set(struct settings *s, const char *name, const char *value, struct err *e)
{
    struct settings t = *s;
    struct sampler_settings *m = &t.sampler;
    int rc = 0;
    if (strcmp(name, "temperature") == 0) {
        rc = set_range(&m->temperature, value, 1.0, 0.0, DBL_MAX, 0, "0 or more", e);
    } else if (strcmp(name, "top-k") == 0) {
        rc = is_off(value) ? (m->top_k = 0, 0) : parse_int(value, 0, INT_MAX, &m->top_k, e);
    } else if (strcmp(name, "top-p") == 0) {
        rc = set_range(&m->top_p, value, 1.0, 0.0, 1.0, 1, "in (0, 1]", e);
    } else if (strcmp(name, "min-p") == 0) {
        rc = set_range(&m->min_p, value, 0.0, 0.0, 1.0, 0, "in [0, 1]", e);
    } else if (strcmp(name, "repetition-penalty") == 0) {
        rc = set_range(&m->repetition_penalty, value, 1.0, 0.0, DBL_MAX, 1, "more than 0", e);
    } else if (strcmp(name, "penalty-formula") == 0) {
        if (strcmp(value, "engine") == 0)
            m->penalty_formula = PENALTY_ENGINE;
        else if (strcmp(value, "lesson") == 0)
            m->penalty_formula = PENALTY_LESSON;
        else
            rc = err_set(e, ERR_USAGE, "'%s' is not a formula (engine or lesson)", value);
    } else if (strcmp(name, "penalty-scope") == 0) {
        if (strcmp(value, "generated") == 0)
            m->penalty_scope = SCOPE_GENERATED;
        else if (strcmp(value, "all") == 0)
            m->penalty_scope = SCOPE_ALL;
        else
            rc = err_set(e, ERR_USAGE, "'%s' is not a scope (generated or all)", value);
    } else if (strcmp(name, "penalty-last-n") == 0) {
        rc = parse_int(value, 0, INT_MAX, &m->penalty_last_n, e);
    } else if (strcmp(name, "presence-penalty") == 0) {
        rc = set_range(&m->presence_penalty, value, 0.0, -1e6, 1e6, 0, "between -1e6 and 1e6", e);
    } else if (strcmp(name, "frequency-penalty") == 0) {
        rc = set_range(&m->frequency_penalty, value, 0.0, -1e6, 1e6, 0, "between -1e6 and 1e6", e);
    } else if (strcmp(name, "shift") == 0) {
        rc = set_range(&m->shift, value, 0.0, -1e6, 1e6, 0, "between -1e6 and 1e6", e);
    } else if (strcmp(name, "seed") == 0) {
        rc = parse_seed(value, &m->seed, e);
    } else if (strcmp(name, "order") == 0) {
        rc = settings_parse_order(value, &m->chain, e);
    } else if (strcmp(name, "max-tokens") == 0) {
        rc = is_off(value) ? (t.max_tokens = 0, 0) : parse_int(value, 0, INT_MAX, &t.max_tokens, e);
    } else if (strcmp(name, "stop") == 0) {
        /* "on mat" in double quotes, as typed at the ':' prompt or in a try line. */
        char inner[4 * STOP_LEN];
        size_t vl = strlen(value);
        if (vl >= 2 && value[0] == '"' && value[vl - 1] == '"' && vl - 2 < sizeof inner) {
            memcpy(inner, value + 1, vl - 2);
            inner[vl - 2] = '\0';
            value = inner;
        }
        if (value[0] == '\0') {
            t.n_stop = 0;
        } else if (t.n_stop == STOP_MAX) {
            rc = err_set(e, ERR_USAGE, "more than %d stop strings", STOP_MAX);
        } else {
            int len = unescape(value, t.stop[t.n_stop], sizeof t.stop[0], e);
            if (len == 0)
                rc = err_set(e, ERR_USAGE, "a stop string cannot be empty");
            else if (len > 0)
                t.n_stop++;
            else
                rc = -1;
        }
    } else {
        rc = err_set(e, ERR_USAGE, "'%s' is not a setting", name);
    }
    if (rc == 0)
        *s = t;
    return rc;
}

static void fmt_num(char *buf, size_t n, double v)
{
    snprintf(buf, n, "%.6g", v);
}

void settings_value(const struct settings *s, const char *name, char *buf, size_t n)
{
    const struct sampler_settings *m = &s->sampler;
    buf[0] = '\0';
    if (strcmp(name, "temperature") == 0)
        fmt_num(buf, n, m->temperature);
    else if (strcmp(name, "top-k") == 0)
        m->top_k ? (void)snprintf(buf, n, "%d", m->top_k) : (void)snprintf(buf, n, "off");
    else if (strcmp(name, "top-p") == 0)
        m->top_p < 1.0 ? fmt_num(buf, n, m->top_p) : (void)snprintf(buf, n, "off");
    else if (strcmp(name, "min-p") == 0)
        m->min_p > 0.0 ? fmt_num(buf, n, m->min_p) : (void)snprintf(buf, n, "off");
    else if (strcmp(name, "repetition-penalty") == 0)
        m->repetition_penalty != 1.0 ? fmt_num(buf, n, m->repetition_penalty)
                                     : (void)snprintf(buf, n, "off");
    else if (strcmp(name, "penalty-formula") == 0)
        snprintf(buf, n, "%s", penalty_formula_name(m->penalty_formula));
    else if (strcmp(name, "penalty-scope") == 0)
        snprintf(buf, n, "%s", penalty_scope_name(m->penalty_scope));
    else if (strcmp(name, "penalty-last-n") == 0)
        snprintf(buf, n, "%d", m->penalty_last_n);
    else if (strcmp(name, "presence-penalty") == 0)
        fmt_num(buf, n, m->presence_penalty);
    else if (strcmp(name, "frequency-penalty") == 0)
        fmt_num(buf, n, m->frequency_penalty);
    else if (strcmp(name, "shift") == 0)
        fmt_num(buf, n, m->shift);
    else if (strcmp(name, "seed") == 0)
        snprintf(buf, n, "%llu", (unsigned long long)m->seed);
    else if (strcmp(name, "order") == 0)
        snprintf(buf, n, "%s", preset_name(m->chain.preset));
    else if (strcmp(name, "max-tokens") == 0)
        s->max_tokens ? (void)snprintf(buf, n, "%d", s->max_tokens) : (void)snprintf(buf, n, "off");
    else if (strcmp(name, "stop") == 0)
        snprintf(buf, n, "%d string%s", s->n_stop, s->n_stop == 1 ? "" : "s");
}
