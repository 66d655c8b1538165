/* chain.c - the stages of sampling.def as a table, the presets built from
 * their places in it, and what a stage does under given settings. No stage
 * is named here: a new row of sampling.def is all a new stage needs.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "core/sampler.h"
#include "core/settings.h"

const struct stage_info STAGES[STAGE_COUNT] = {
#define STAGE(id, nm, sh, fl, lesson, hf, vllm, llamacpp, rm, ct)                                  \
    [STAGE_##id] = { .name = nm,                                                                   \
                     .short_label = sh,                                                            \
                     .flags = fl,                                                                  \
                     .place = { lesson, hf, vllm, llamacpp },                                      \
                     .removed = rm,                                                                \
                     .cut = ct },
#include "core/sampling.def"
#undef STAGE
};

static const char *const PRESET_NAMES[PRESET_COUNT] = { "lesson", "hf", "vllm", "llamacpp",
                                                        "custom" };

/* Another name a stage answers to in an order ("penalties", as llama.cpp
 * spells its sampler). */
static const struct {
    const char *alias;
    enum stage stage;
} ALIASES[] = { { "penalties", STAGE_PENALTY } };

const char *stage_name(enum stage s)
{
    return (s >= 0 && s < STAGE_COUNT) ? STAGES[s].name : "masked";
}

const char *preset_name(enum preset p)
{
    return (p >= 0 && p < PRESET_COUNT) ? PRESET_NAMES[p] : "?";
}

void chain_preset(struct chain *c, enum preset p)
{
    if (p < 0 || p >= PRESET_CUSTOM)
        p = PRESET_LESSON;
    /* The stages in the order of their places; a stage the engine lacks
     * (place 0) is left out. Places are distinct per preset. */
    c->n = 0;
    for (int place = 1; place <= STAGE_COUNT; place++)
        for (int st = 0; st < STAGE_COUNT; st++)
            if (STAGES[st].place[p] == place)
                c->stage[c->n++] = (enum stage)st;
    c->preset = p;
    c->topk_keep_ties = (p == PRESET_HF);
}

int chain_has(const struct chain *c, enum stage st)
{
    for (int i = 0; i < c->n; i++)
        if (c->stage[i] == st)
            return 1;
    return 0;
}

int stage_active(const struct sampler_settings *s, enum stage st, int vocab_size)
{
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (i->stage == (int)st && (i->flags & SET_ACTIVATES) && setting_is_on(i, s, vocab_size))
            return 1;
    return 0;
}

/* The value of the first activating setting of stage st: what a stage that
 * cuts at zero looks at. */
static double main_value(const struct sampler_settings *s, enum stage st)
{
    const struct setting_info *i = setting_of_stage((int)st);
    return i ? setting_number(i, s) : 1.0;
}

/* Whether an activating setting of stage st other than its first is on
 * (the temperature's dynamic range). */
static int other_on(const struct sampler_settings *s, enum stage st)
{
    const struct setting_info *first = setting_of_stage((int)st);
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++)
        if (i != first && i->stage == (int)st && (i->flags & SET_ACTIVATES) &&
            setting_is_on(i, s, INT_MAX))
            return 1;
    return 0;
}

int stage_cuts(const struct sampler_settings *s, enum stage st)
{
    int f = STAGES[st].flags;
    /* Temperature 0 with a dynamic range is a range from 0 up: it scales. */
    return (f & SF_CUT) || ((f & SF_ZERO_CUTS) && main_value(s, st) == 0.0 && !other_on(s, st));
}

int stage_rewrites(const struct sampler_settings *s, enum stage st)
{
    return !stage_cuts(s, st);
}

/* The stage named by the trim bytes at p, or -1. */
static int stage_of(const char *p, size_t trim)
{
    for (int s = 0; s < STAGE_COUNT; s++)
        if (strlen(STAGES[s].name) == trim && strncmp(p, STAGES[s].name, trim) == 0)
            return s;
    for (size_t a = 0; a < sizeof ALIASES / sizeof ALIASES[0]; a++)
        if (strlen(ALIASES[a].alias) == trim && strncmp(p, ALIASES[a].alias, trim) == 0)
            return (int)ALIASES[a].stage;
    return -1;
}

/* "lesson, hf, vllm, llamacpp" or the stages, comma-separated, for messages. */
static void list_names(int presets, char *buf, size_t n)
{
    buf[0] = '\0';
    int count = presets ? PRESET_CUSTOM : STAGE_COUNT;
    for (int i = 0; i < count; i++) {
        if (i)
            utf8_append(buf, n, ", ");
        utf8_append(buf, n, presets ? PRESET_NAMES[i] : STAGES[i].name);
    }
}

static int unknown_stage(const char *p, size_t trim, struct err *e)
{
    char presets[128], stages[STAGE_COUNT * 24]; /* the longest name is 15 bytes */
    list_names(1, presets, sizeof presets);
    list_names(0, stages, sizeof stages);
    return err_set(e, ERR_USAGE, "'%.*s' is not a preset (%s) or a stage (%s)", (int)trim, p,
                   presets, stages);
}

int chain_parse(const char *value, struct chain *c, struct err *e)
{
    for (int p = 0; p < PRESET_CUSTOM; p++)
        if (strcmp(value, PRESET_NAMES[p]) == 0) {
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
        int found = stage_of(p, trim);
        if (found < 0)
            return unknown_stage(p, trim, e);
        if (chain_has(&out, (enum stage)found))
            return err_set(e, ERR_USAGE, "'%s' names %s twice", value, STAGES[found].name);
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

void chain_short(const struct chain *c, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < c->n; i++) {
        if (i)
            utf8_append(buf, n, ">");
        utf8_append(buf, n, STAGES[c->stage[i]].short_label);
    }
}
