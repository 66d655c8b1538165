#include "data/scenario.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/ini_file.h"
#include "core/settings.h"

#define SCENARIO_MAX_BYTES (256 << 10)

static int section_ok(const char *name, size_t len)
{
    if ((len == 8 && strncmp(name, "scenario", 8) == 0) ||
        (len == 4 && strncmp(name, "next", 4) == 0))
        return 1;
    return ini_numbered_section(name, len, "step.");
}

static int key_ok(const char *section, const char *name)
{
    if (strcmp(section, "scenario") == 0)
        return strcmp(name, "id") == 0 || strcmp(name, "title") == 0 ||
               strcmp(name, "prompt") == 0 || strcmp(name, "prompt-ids") == 0 ||
               strcmp(name, "seed") == 0;
    if (strcmp(section, "next") == 0)
        return strcmp(name, "after") == 0 || strcmp(name, "default") == 0;
    return strcmp(name, "blend") == 0;
}

static const struct ini_rules RULES = {
    .max_bytes = SCENARIO_MAX_BYTES,
    .section_ok = section_ok,
    .sections_hint = "scenario, step.1, step.2, ..., next",
    .key_ok = key_ok,
};

/* "12366:19.5, 279:15.6" into a blend. */
static int parse_blend(const struct ini_file *f, int line, const char *text, int V, struct blend *b,
                       struct err *e)
{
    memset(b, 0, sizeof *b);
    const char *p = text;
    while (*p) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (!*p)
            break;
        char *end;
        long id = strtol(p, &end, 10);
        if (end == p || *end != ':')
            return ini_error(f, line, e, "blend: '%.20s' is not 'id:logit'", p);
        if (id < 0 || id >= V)
            return ini_error(f, line, e, "blend: token %ld is not in the vocabulary (0..%d)", id,
                             V - 1);
        p = end + 1;
        double z = strtod(p, &end);
        if (end == p || !isfinite(z) || fabs(z) > 1000.0)
            return ini_error(f, line, e, "blend: token %ld needs a logit between -1000 and 1000",
                             id);
        for (int i = 0; i < b->n; i++)
            if (b->id[i] == id)
                return ini_error(f, line, e, "blend: token %ld is given twice", id);
        if (b->n == SCENARIO_MAX_BLEND)
            return ini_error(f, line, e, "blend: more than %d tokens", SCENARIO_MAX_BLEND);
        b->id[b->n] = (int)id;
        b->logit[b->n] = z;
        b->n++;
        p = end;
    }
    if (b->n == 0)
        return ini_error(f, line, e, "blend: no token");
    return 0;
}

/* Where the prompt's two keys were seen, for the checks once all are read. */
struct prompt_seen {
    int have_ids, ids_line, text_line;
};

/* One key of [scenario]: id, title, prompt, prompt-ids or seed. */
static int scenario_key(struct scenario *s, const struct ini_file *f, const struct ini_entry *en,
                        int V, struct prompt_seen *seen, struct err *e)
{
    if (strcmp(en->name, "id") == 0) {
        if (strlen(en->value) == 0 || strlen(en->value) >= sizeof s->id)
            return ini_error(f, en->line, e, "id must be 1 to %zu characters", sizeof s->id - 1);
        strcpy(s->id, en->value);
    } else if (strcmp(en->name, "title") == 0) {
        free(s->title);
        if (!(s->title = strdup(en->value)))
            return err_set(e, ERR_SYSTEM, "out of memory");
    } else if (strcmp(en->name, "prompt") == 0) {
        free(s->prompt_text);
        if (!(s->prompt_text = strdup(en->value)))
            return err_set(e, ERR_SYSTEM, "out of memory");
        seen->text_line = en->line;
    } else if (strcmp(en->name, "prompt-ids") == 0) {
        int n = parse_int_list(en->value, s->prompt, SCENARIO_MAX_PROMPT, V, e);
        if (n < 0)
            return ini_error(f, en->line, e, "prompt-ids: %s", e->msg);
        s->prompt_len = n;
        seen->have_ids = 1;
        seen->ids_line = en->line;
    } else if (strcmp(en->name, "seed") == 0) {
        if (parse_seed(en->value, &s->seed, e) < 0)
            return ini_error(f, en->line, e, "seed: %s", e->msg);
    }
    return 0;
}

/* [step.N] blend = ...: the logits of step N. */
static int step_blend(struct scenario *s, const struct ini_file *f, const struct ini_entry *en,
                      int V, struct err *e)
{
    long k = strtol(en->section + 5, NULL, 10);
    if (k < 1 || k > SCENARIO_MAX_STEPS)
        return ini_error(f, en->line, e, "[%s]: a scenario scripts at most %d steps", en->section,
                         SCENARIO_MAX_STEPS);
    if (parse_blend(f, en->line, en->value, V, &s->steps[k - 1], e) < 0)
        return -1;
    if (k > s->n_steps)
        s->n_steps = (int)k;
    return 0;
}

/* [next] after = KEY [KEY] : BLEND, a rule for the steps past the script. */
static int after_rule(struct scenario *s, const struct ini_file *f, const struct ini_entry *en,
                      int V, struct err *e)
{
    const char *colon = strchr(en->value, ':');
    if (!colon)
        return ini_error(f, en->line, e, "after: write 'after = ID [ID] : id:logit, ...'");
    char keys[64];
    size_t kl = (size_t)(colon - en->value);
    if (kl >= sizeof keys)
        return ini_error(f, en->line, e, "after: the key is too long");
    memcpy(keys, en->value, kl);
    keys[kl] = '\0';
    if (s->n_next == SCENARIO_MAX_NEXT)
        return ini_error(f, en->line, e, "more than %d 'after' rules", SCENARIO_MAX_NEXT);
    struct next_rule *r = &s->next[s->n_next];
    int n = parse_int_list(keys, r->key, 2, V, e);
    if (n < 1)
        return ini_error(f, en->line, e, "after: the key must be one or two token ids");
    r->key_len = n;
    if (parse_blend(f, en->line, colon + 1, V, &r->blend, e) < 0)
        return -1;
    s->n_next++;
    return 0;
}

/* Once every entry is read: the keys a scenario needs, no gap in its steps,
 * and prompt-ids that spell the prompt. */
static int check_scenario(const struct scenario *s, const struct ini_file *f, const struct vocab *v,
                          const struct prompt_seen *seen, struct err *e)
{
    if (!s->id[0])
        return ini_error(f, 0, e, "the [scenario] section needs an id");
    if (!s->prompt_text || !seen->have_ids)
        return ini_error(f, seen->text_line ? seen->text_line : seen->ids_line, e,
                         "a scenario needs both prompt and prompt-ids");
    for (int k = 0; k < s->n_steps; k++)
        if (s->steps[k].n == 0)
            return ini_error(f, 0, e, "there is no [step.%d] (steps are numbered 1, 2, 3, ...)",
                             k + 1);
    if (s->fallback.n == 0)
        return ini_error(f, ini_section_line(f, "next"), e,
                         "[next] needs a default blend for every other case");
    /* The ids must spell the prompt: check them against the vocabulary. */
    size_t need = vocab_detok(v, s->prompt, s->prompt_len, NULL, 0);
    char *text = malloc(need + 1);
    if (!text)
        return err_set(e, ERR_SYSTEM, "out of memory");
    vocab_detok(v, s->prompt, s->prompt_len, text, need + 1);
    int same = strcmp(text, s->prompt_text) == 0;
    if (!same) {
        char got[128];
        snprintf(got, sizeof got, "%s", text);
        free(text);
        return ini_error(f, seen->ids_line, e, "prompt-ids read \"%s\", not the prompt \"%s\"", got,
                         s->prompt_text);
    }
    free(text);
    return 0;
}

static int interpret(struct scenario *s, const struct ini_file *f, const struct vocab *v,
                     struct err *e)
{
    int V = v->n;
    struct prompt_seen seen = { 0, 0, 0 };
    for (int i = 0; i < f->n; i++) {
        const struct ini_entry *en = &f->entries[i];
        if (en->cont)
            return ini_error(f, en->line, e, "'%s' cannot continue on the next line", en->name);
        int rc;
        if (strcmp(en->section, "scenario") == 0)
            rc = scenario_key(s, f, en, V, &seen, e);
        else if (strncmp(en->section, "step.", 5) == 0)
            rc = step_blend(s, f, en, V, e);
        else if (strcmp(en->name, "default") == 0)
            rc = parse_blend(f, en->line, en->value, V, &s->fallback, e);
        else
            rc = after_rule(s, f, en, V, e);
        if (rc < 0)
            return -1;
    }
    return check_scenario(s, f, v, &seen, e);
}

int scenario_load(struct scenario *s, const char *path, const struct vocab *v, struct err *e)
{
    return scenario_load_text(s, path, NULL, v, e);
}

int scenario_load_text(struct scenario *s, const char *path, const char *text,
                       const struct vocab *v, struct err *e)
{
    memset(s, 0, sizeof *s);
    struct ini_file f;
    if (ini_file_load(&f, path, text, &RULES, e) < 0)
        return -1;
    s->next = calloc(SCENARIO_MAX_NEXT, sizeof *s->next);
    int rc = s->next ? interpret(s, &f, v, e) : err_set(e, ERR_SYSTEM, "out of memory");
    ini_file_free(&f);
    if (rc < 0)
        scenario_free(s);
    return rc;
}

void scenario_free(struct scenario *s)
{
    free(s->title);
    free(s->prompt_text);
    free(s->next);
    memset(s, 0, sizeof *s);
}

const struct blend *scenario_blend(const struct scenario *s, const int *ctx, int len)
{
    int generated = len - s->prompt_len;
    /* On the script: every generated token so far is the script's. */
    int on_script = generated >= 0 && generated < s->n_steps;
    for (int k = 0; on_script && k < generated; k++)
        on_script = ctx[s->prompt_len + k] == s->steps[k].id[0];
    if (on_script)
        return &s->steps[generated];
    /* Else the rule for the last two tokens, then for the last one. */
    for (int want = 2; want >= 1; want--) {
        if (len < want)
            continue;
        for (int i = 0; i < s->n_next; i++) {
            const struct next_rule *r = &s->next[i];
            if (r->key_len != want)
                continue;
            int match = 1;
            for (int j = 0; j < want; j++)
                match &= r->key[j] == ctx[len - want + j];
            if (match)
                return &r->blend;
        }
    }
    return &s->fallback;
}
