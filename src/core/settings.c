#include "core/settings.h"

#include "base/utf8.h"
#include "core/grammar.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each setting's member: in struct sampler_settings or struct settings. */
#define SETTING_OFFSET_SAMPLER(field) offsetof(struct sampler_settings, field)
#define SETTING_OFFSET_LOOP(field)    offsetof(struct settings, field)
#define SETTING_SIZE_SAMPLER(field)   sizeof(((struct sampler_settings *)0)->field)
#define SETTING_SIZE_LOOP(field)      sizeof(((struct settings *)0)->field)

const struct setting_info SETTINGS_INFO[] = {
#define SETTING(field, wh, nm, kd, st, fl, l, h, d, ar, rg, lb, stt, sto, ld, hp)                  \
    { .name = nm,                                                                                  \
      .kind = SK_##kd,                                                                             \
      .where = SW_##wh,                                                                            \
      .stage = STAGE_##st,                                                                         \
      .flags = fl,                                                                                 \
      .lo = l,                                                                                     \
      .hi = h,                                                                                     \
      .def = d,                                                                                    \
      .arg = ar,                                                                                   \
      .range = rg,                                                                                 \
      .label = lb,                                                                                 \
      .status = stt,                                                                               \
      .status_off = sto,                                                                           \
      .ladder = ld,                                                                                \
      .help = hp,                                                                                  \
      .offset = SETTING_OFFSET_##wh(field),                                                        \
      .size = SETTING_SIZE_##wh(field) },
#include "core/sampling.def"
#undef SETTING
    { .name = NULL },
};

const struct setting_info *setting_find(const char *name)
{
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (strcmp(i->name, name) == 0)
            return i;
    return NULL;
}

const struct setting_info *setting_of_stage(int stage)
{
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (i->stage == stage && (i->flags & SET_ACTIVATES))
            return i;
    return NULL;
}

int settings_known(const char *name)
{
    return setting_find(name) != NULL;
}

/* The member of setting i in s. */
static void *member(const struct setting_info *i, struct settings *s)
{
    return (char *)(i->where == SW_SAMPLER ? (void *)&s->sampler : (void *)s) + i->offset;
}

static const void *member_of_sampler(const struct setting_info *i, const struct sampler_settings *s)
{
    return (const char *)s + i->offset;
}

double setting_number(const struct setting_info *i, const struct sampler_settings *s)
{
    if (i->where != SW_SAMPLER)
        return 0.0;
    const void *p = member_of_sampler(i, s);
    switch (i->kind) {
    case SK_DOUBLE:
        return *(const double *)p;
    case SK_INT:
    case SK_ENUM:
    case SK_GRAMMAR:
    case SK_BIAS: /* a list: how many it holds, 0 (off) by default */
    case SK_WORDS:
        return *(const int *)p;
    default:
        return 0.0;
    }
}

double setting_get(const struct settings *s, const struct setting_info *i)
{
    const void *p = member(i, (struct settings *)s);
    if (i->kind == SK_DOUBLE)
        return *(const double *)p;
    return i->kind == SK_INT || i->kind == SK_ENUM || i->kind == SK_BIAS || i->kind == SK_WORDS ||
                   i->kind == SK_GRAMMAR
               ? *(const int *)p
               : 0.0;
}

int setting_is_on(const struct setting_info *i, const struct sampler_settings *s, int vocab_size)
{
    if (i->where != SW_SAMPLER || i->kind == SK_SEED || i->kind == SK_ORDER)
        return 0;
    double v = setting_number(i, s);
    if ((i->flags & SET_OFF_AT_V) && v >= vocab_size)
        return 0;
    return v != i->def;
}

void setting_enum_name(const struct setting_info *i, int n, char *buf, size_t size)
{
    const char *p = i->arg;
    for (int k = 0; k < n && p; k++) {
        p = strchr(p, '|');
        p = p ? p + 1 : NULL;
    }
    size_t len = p ? strcspn(p, "|") : 0;
    snprintf(buf, size, "%.*s", (int)len, p ? p : "");
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
    /* A subnormal is kept as strtod gives it; one that rounds to 0 is
     * refused rather than read as 0 (1e-400 as a temperature is not greedy). */
    if (errno == ERANGE && v == 0.0)
        return err_set(e, ERR_USAGE, "'%s' is too small for a double (it would be 0)", text);
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

char *settings_list_next(char **cursor)
{
    char *part = *cursor, *w = part;
    if (!part)
        return NULL;
    for (char *r = part;; r++) {
        if (r[0] == '\\' && r[1] == '|') {
            *w++ = '|';
            r++;
        } else if (*r == '|' || *r == '\0') {
            *cursor = *r ? r + 1 : NULL;
            *w = '\0';
            return part;
        } else {
            *w++ = *r;
        }
    }
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

/* The escape's character whole, as the screen shows it: a byte of it
 * alone would leave the message invalid UTF-8 ("\\é" is two bytes). */
static int unknown_escape(const char *p, const char *text, struct err *e)
{
    char ch[UTF8_ESC_MAX + 1];
    size_t n = 0;
    utf8_escape_char(p, strlen(p), 0, ch, &n);
    ch[n] = '\0';
    return err_set(e, ERR_USAGE, "unknown escape \\%s in '%s' (use \\n \\t \\\\ \\\")", ch, text);
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
                return unknown_escape(p, text, e);
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

/* The range message every number shares: "1.5 is out of range (must be in (0, 1])". */
static int out_of_range(const struct setting_info *i, const char *value, struct err *e)
{
    return err_set(e, ERR_USAGE, "%s is out of range (must be %s)", value, i->range);
}

static int in_range(const struct setting_info *i, double v)
{
    return v >= i->lo && v <= i->hi && !((i->flags & SET_LO_OPEN) && v == i->lo);
}

static int set_double(const struct setting_info *i, const char *value, double *dst, struct err *e)
{
    double v = i->def;
    if (!((i->flags & SET_OFF_WORD) && is_off(value)) && parse_double(value, &v, e) < 0)
        return -1;
    if (!in_range(i, v))
        return out_of_range(i, value, e);
    *dst = v;
    return 0;
}

static int set_int(const struct setting_info *i, const char *value, int *dst, struct err *e)
{
    if ((i->flags & SET_OFF_WORD) && is_off(value)) {
        *dst = (int)i->def;
        return 0;
    }
    return parse_int(value, (int)i->lo, (int)i->hi, dst, e);
}

/* "engine or lesson", "a, b or c": the names of an ENUM for messages. */
static void enum_choices(const struct setting_info *i, char *buf, size_t n)
{
    int count = 1;
    for (const char *p = i->arg; *p; p++)
        count += *p == '|';
    buf[0] = '\0';
    for (int k = 0; k < count; k++) {
        char name[32];
        setting_enum_name(i, k, name, sizeof name);
        utf8_append(buf, n, k == 0 ? "" : k == count - 1 ? " or " : ", ");
        utf8_append(buf, n, name);
    }
}

static int set_enum(const struct setting_info *i, const char *value, int *dst, struct err *e)
{
    for (int k = 0;; k++) {
        char name[32];
        setting_enum_name(i, k, name, sizeof name);
        if (!name[0])
            break;
        if (strcmp(name, value) == 0) {
            *dst = k;
            return 0;
        }
    }
    char choices[128];
    enum_choices(i, choices, sizeof choices);
    return err_set(e, ERR_USAGE, "'%s' is not a %s (%s)", value, i->range, choices);
}

/* Adds a stop string ("on mat" in double quotes, as typed at the ':'
 * prompt or in a try line, is taken without them); an empty one clears. */
static int set_stop(struct settings *t, const char *value, struct err *e)
{
    char inner[4 * STOP_LEN];
    size_t vl = strlen(value);
    if (vl >= 2 && value[0] == '"' && value[vl - 1] == '"' && vl - 2 < sizeof inner) {
        memcpy(inner, value + 1, vl - 2);
        inner[vl - 2] = '\0';
        value = inner;
    }
    if (value[0] == '\0') {
        t->n_stop = 0;
        return 0;
    }
    if (t->n_stop == STOP_MAX)
        return err_set(e, ERR_USAGE, "more than %d stop strings", STOP_MAX);
    int len = unescape(value, t->stop[t->n_stop], sizeof t->stop[0], e);
    if (len == 0)
        return err_set(e, ERR_USAGE, "a stop string cannot be empty");
    if (len < 0)
        return -1;
    t->n_stop++;
    return 0;
}

const struct setting_info *settings_grammar_on(const struct settings *s)
{
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (i->kind == SK_GRAMMAR && setting_get(s, i) != 0.0)
            return i;
    return NULL;
}

/* Every grammar setting off: one constraint at a time. */
static void grammar_off(struct settings *t)
{
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (i->kind == SK_GRAMMAR)
            *(int *)member(i, t) = 0;
    t->grammar_text[0] = '\0';
}

/* A constraint is compiled once here, so that a bad one is refused where
 * it was typed, with the place in it; the source compiles it again to run. */
static int set_grammar(const struct setting_info *i, struct settings *t, const char *value,
                       struct err *e)
{
    size_t len = strlen(value);
    grammar_off(t);
    if (len == 0 || is_off(value))
        return 0;
    if (len > GRAMMAR_TEXT_MAX)
        return err_set(e, ERR_USAGE, "%s of %zu bytes is too long (at most %d)", i->range, len,
                       GRAMMAR_TEXT_MAX);
    struct grammar *g;
    if (grammar_from_front((int)i->hi, value, len, &g, e) < 0)
        return -1;
    grammar_free(g);
    memcpy(t->grammar_text, value, len + 1);
    *(int *)member(i, t) = (int)i->hi;
    return 0;
}

int settings_set(struct settings *s, const char *name, const char *value, struct err *e)
{
    const struct setting_info *i = setting_find(name);
    if (!i)
        return err_set(e, ERR_USAGE, "'%s' is not a setting", name);
    struct settings t = *s;
    void *p = member(i, &t);
    int rc = 0;
    switch (i->kind) {
    case SK_DOUBLE:
        rc = set_double(i, value, p, e);
        break;
    case SK_INT:
        rc = set_int(i, value, p, e);
        break;
    case SK_ENUM:
        rc = set_enum(i, value, p, e);
        break;
    case SK_SEED:
        rc = parse_seed(value, p, e);
        break;
    case SK_ORDER:
        rc = chain_parse(value, p, e);
        break;
    case SK_STOP:
        rc = set_stop(&t, value, e);
        break;
    case SK_GRAMMAR:
        rc = set_grammar(i, &t, value, e);
        break;
    case SK_BIAS:
        rc = parse_logit_bias(i, value, p, e);
        break;
    case SK_WORDS:
        rc = parse_bad_words(value, p, e);
        break;
    }
    if (rc == 0)
        *s = t;
    return rc;
}

/* A patch has a bit for each setting. */
enum { N_SETTINGS = sizeof SETTINGS_INFO / sizeof SETTINGS_INFO[0] - 1 };
_Static_assert(N_SETTINGS <= 64, "struct settings_patch's given has 64 bits");

void settings_patch_clear(struct settings_patch *p)
{
    memset(p, 0, sizeof *p);
    settings_defaults(&p->val);
}

int settings_patch_set(struct settings_patch *p, const char *name, const char *value, struct err *e)
{
    if (settings_set(&p->val, name, value, e) < 0)
        return -1;
    const struct setting_info *i = setting_find(name);
    p->given |= (uint64_t)1 << (i - SETTINGS_INFO);
    if (i->kind == SK_STOP && p->val.n_stop == 0)
        p->stop_clears = 1; /* an empty stop, after any the patch had */
    return 0;
}

/* The stop strings of p after those of s (or instead, after an empty stop). */
static int patch_stops(struct settings *s, const struct settings_patch *p, struct err *e)
{
    int base = p->stop_clears ? 0 : s->n_stop;
    int n = p->val.n_stop < STOP_MAX - base ? p->val.n_stop : STOP_MAX - base;
    memcpy(s->stop[base], p->val.stop, (size_t)n * sizeof s->stop[0]);
    s->n_stop = base + n;
    if (n < p->val.n_stop)
        return err_set(e, ERR_USAGE, "more than %d stop strings", STOP_MAX);
    return 0;
}

/* The patch's constraint, or none when its last grammar setting was off:
 * p->val holds at most one on, whichever row was typed last. */
static void patch_grammar(struct settings *s, const struct settings_patch *p)
{
    grammar_off(s);
    for (const struct setting_info *j = SETTINGS_INFO; j->name; j++)
        if (j->kind == SK_GRAMMAR)
            *(int *)member(j, s) = *(const int *)member(j, (struct settings *)&p->val);
    memcpy(s->grammar_text, p->val.grammar_text, sizeof s->grammar_text);
}

int settings_patch_apply(struct settings *s, const struct settings_patch *p, struct err *e)
{
    int rc = 0;
    for (int k = 0; k < N_SETTINGS; k++) {
        const struct setting_info *i = &SETTINGS_INFO[k];
        if (!(p->given & ((uint64_t)1 << k)))
            continue;
        if (i->kind == SK_STOP) {
            rc = patch_stops(s, p, e);
        } else if (i->kind == SK_GRAMMAR) {
            patch_grammar(s, p);
        } else {
            memcpy(member(i, s), member(i, (struct settings *)&p->val), i->size);
        }
    }
    return rc;
}

void setting_value(const struct settings *s, const struct setting_info *i, char *buf, size_t n)
{
    const void *p = member(i, (struct settings *)s);
    double v = setting_get(s, i); /* a list's: its count */
    int k = (int)v;
    if ((i->flags & SET_SHOWS_OFF) && v == i->def) {
        snprintf(buf, n, "off");
        return;
    }
    switch (i->kind) {
    case SK_DOUBLE:
        snprintf(buf, n, "%.6g", v);
        break;
    case SK_INT:
        snprintf(buf, n, "%d", k);
        break;
    case SK_ENUM:
        setting_enum_name(i, k, buf, n);
        break;
    case SK_SEED:
        snprintf(buf, n, "%llu", (unsigned long long)*(const uint64_t *)p);
        break;
    case SK_ORDER:
        snprintf(buf, n, "%s", preset_name(((const struct chain *)p)->preset));
        break;
    case SK_STOP:
        snprintf(buf, n, "%d string%s", s->n_stop, s->n_stop == 1 ? "" : "s");
        break;
    case SK_GRAMMAR:
        if (k)
            utf8_escape(s->grammar_text, buf, n);
        else
            snprintf(buf, n, "off");
        break;
    case SK_BIAS:
        logit_bias_text(p, buf, n);
        break;
    case SK_WORDS:
        bad_words_text(p, buf, n);
        break;
    }
}

void settings_value(const struct settings *s, const char *name, char *buf, size_t n)
{
    const struct setting_info *i = setting_find(name);
    if (i)
        setting_value(s, i, buf, n);
    else if (n)
        buf[0] = '\0';
}

void sampler_defaults(struct sampler_settings *s)
{
    memset(s, 0, sizeof *s);
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
        if (i->where != SW_SAMPLER)
            continue;
        void *p = (char *)s + i->offset;
        if (i->kind == SK_DOUBLE)
            *(double *)p = i->def;
        else if (i->kind == SK_INT || i->kind == SK_ENUM || i->kind == SK_GRAMMAR)
            *(int *)p = (int)i->def;
        else if (i->kind == SK_SEED)
            *(uint64_t *)p = (uint64_t)i->def;
        else if (i->kind == SK_ORDER)
            chain_preset(p, (enum preset)i->def);
    }
}

void settings_defaults(struct settings *s)
{
    memset(s, 0, sizeof *s);
    sampler_defaults(&s->sampler);
}

/* An order as a direct caller may have filled it: no more stages than
 * there are, each known and named once. */
static int check_chain(const struct chain *c, struct err *e)
{
    if (c->n < 0 || c->n > STAGE_COUNT)
        return err_set(e, ERR_USAGE, "order has %d stages (at most %d)", c->n, STAGE_COUNT);
    int used[STAGE_COUNT] = { 0 };
    for (int k = 0; k < c->n; k++) {
        enum stage st = c->stage[k];
        if (st < 0 || st >= STAGE_COUNT)
            return err_set(e, ERR_USAGE, "order has an unknown stage");
        if (used[st]++)
            return err_set(e, ERR_USAGE, "order names %s twice", stage_name(st));
    }
    return 0;
}

int sampler_check(const struct sampler_settings *s, struct err *e)
{
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
        if (i->where != SW_SAMPLER)
            continue;
        const void *p = member_of_sampler(i, s);
        if (i->kind == SK_DOUBLE &&
            !(isfinite(*(const double *)p) && in_range(i, *(const double *)p)))
            return err_set(e, ERR_USAGE, "%s %g is out of range (must be %s)", i->name,
                           *(const double *)p, i->range);
        if ((i->kind == SK_INT || i->kind == SK_ENUM) && !in_range(i, *(const int *)p))
            return err_set(e, ERR_USAGE, "%s %d is out of range (must be %s)", i->name,
                           *(const int *)p, i->kind == SK_ENUM ? "a known one" : i->range);
        if (i->kind == SK_ORDER && check_chain(p, e) < 0)
            return -1;
        if (i->kind == SK_GRAMMAR && *(const int *)p != 0 && *(const int *)p != (int)i->hi)
            return err_set(e, ERR_USAGE, "%s is %d (must be 0 or %d)", i->name, *(const int *)p,
                           (int)i->hi);
        if (check_list_setting(i, p, e) < 0)
            return -1;
    }
    return 0;
}
