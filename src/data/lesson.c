/* lesson.c - reading and checking lesson files.
 *
 * Reading happens in two passes. inih calls our handler once per name = value
 * line (and again for each indented continuation line); the handler only
 * checks that the key belongs in its section and records it with its line.
 * Then the entries are interpreted section by section, where counts, ranges
 * and cross-references are checked and every message gets its file:line.
 *
 * inih's handler is not told the line number, so we hand inih our own line
 * reader (ini_parse_stream): it counts lines, refuses lines longer than
 * inih's buffer instead of letting inih split them, and checks section
 * headers, which inih would otherwise accept silently when they hold no keys.
 *
 * This file holds the passes, the readers of values that every section uses
 * and the entry points; the sections before the steps are read in
 * lesson_sections.c, the steps in lesson_step.c (lesson_load.h between them).
 */
#include "data/lesson.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sampler_rules.h"
#include "data/ini_file.h"
#include "data/lesson_load.h"
#include "data/lesson_model.h"
#include "data/npy.h"

#define NAME_MAX_LEN 64

void ld_error(struct loader *ld, int line, const char *fmt, ...)
{
    if (ld->err_line && ld->err_line <= line)
        return;
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ld->err_line = line;
    err_set(&ld->err, ERR_USAGE, "%s", msg);
}

/* ---- pass 1: lines, sections, keys ---------------------------------------- */

static int valid_section(const char *name, size_t len)
{
    static const char *const FIXED[] = { "lesson", "vocab", "settings", "head", "model" };
    for (size_t i = 0; i < sizeof FIXED / sizeof FIXED[0]; i++)
        if (strlen(FIXED[i]) == len && strncmp(name, FIXED[i], len) == 0)
            return 1;
    return ini_numbered_section(name, len, "step.");
}

static const char *const SECTION_KEYS_LESSON[] = { "id",     "title",       "text",    "source",
                                                   "prompt", "prompt-text", "request", NULL };
static const char *const SECTION_KEYS_STEP[] = { "logits", "probs", "hidden",   "context",
                                                 "text",   "note",  "solution", "ask",
                                                 "digits", "try",   NULL };
static const char *const SECTION_KEYS_HEAD[] = { "eps", "real-vocab", "real-hidden", NULL };
static const char *const SECTION_KEYS_MODEL[] = {
    "vocab", "scenario", "hidden-size", "weights-seed", "steps", "file", NULL
};

static int in_list(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return 1;
    return 0;
}

int ld_all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

/* Whether name may appear in section (already known to be a valid section). */
static int key_allowed(const char *section, const char *name)
{
    if (strcmp(section, "lesson") == 0)
        return in_list(SECTION_KEYS_LESSON, name);
    if (strcmp(section, "vocab") == 0)
        return ld_all_digits(name) || strcmp(name, "join") == 0 || strcmp(name, "eos") == 0;
    if (strcmp(section, "settings") == 0)
        return settings_known(name);
    if (strcmp(section, "head") == 0)
        return in_list(SECTION_KEYS_HEAD, name) ||
               (strncmp(name, "row.", 4) == 0 && ld_all_digits(name + 4));
    if (strcmp(section, "model") == 0)
        return in_list(SECTION_KEYS_MODEL, name);
    if (strncmp(section, "step.", 5) == 0)
        return in_list(SECTION_KEYS_STEP, name) || settings_known(name);
    return 0;
}

/* ---- pass 2: interpretation ---------------------------------------------- */

/* The value of a key as one string: continuation lines joined with a space.
 * sep joins repeated (non-continuation) entries; NULL means a repeat is an error. */
int ld_collect(struct loader *ld, const char *section, const char *name, const char *sep,
               char **out, int *line)
{
    size_t total = 0;
    int found = 0, first_line = 0;
    for (int i = 0; i < ld->n; i++) {
        struct ini_entry *en = &ld->entries[i];
        if (strcmp(en->section, section) || strcmp(en->name, name))
            continue;
        if (found && !en->cont && !sep) {
            ld_error(ld, en->line, "'%s' is given twice in [%s] (first on line %d)", name, section,
                     first_line);
            return -1;
        }
        if (!found)
            first_line = en->line;
        found = 1;
        total += strlen(en->value) + 3;
    }
    *out = NULL;
    if (line)
        *line = first_line;
    if (!found)
        return 0;
    char *s = malloc(total + 1);
    if (!s) {
        ld->oom = 1;
        return -1;
    }
    s[0] = '\0';
    int started = 0;
    for (int i = 0; i < ld->n; i++) {
        struct ini_entry *en = &ld->entries[i];
        if (strcmp(en->section, section) || strcmp(en->name, name))
            continue;
        if (started)
            strcat(s, en->cont ? " " : sep);
        strcat(s, en->value);
        started = 1;
    }
    *out = s;
    return 1;
}

/* An integer key within lo..hi into *out; *out stays as it is when the key
 * is absent. */
int ld_collect_int(struct loader *ld, const char *section, const char *name, int lo, int hi,
                   int *out)
{
    char *v = NULL;
    int line = 0;
    if (ld_collect(ld, section, name, NULL, &v, &line) < 0)
        return -1;
    if (!v)
        return 0;
    struct err e;
    int x, rc = parse_int(v, lo, hi, &x, &e);
    free(v);
    if (rc < 0) {
        ld_error(ld, line, "%s: %s", name, e.msg);
        return -1;
    }
    *out = x;
    return line;
}

/* Splits a list of numbers ("-3.2 0.8, 1.2"), checks each, stores the first
 * max of them in out and returns how many there were. */
int ld_parse_numbers(struct loader *ld, int line, const char *what, const char *text, double *out,
                     int max)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (!*p)
            break;
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        if (end == p || (*end && !isspace((unsigned char)*end) && *end != ',')) {
            size_t w = strcspn(p, " \t,");
            ld_error(ld, line, "%s: '%.*s' is not a number", what, (int)(w > 30 ? 30 : w), p);
            return -1;
        }
        if (isnan(v) || isinf(v) || (errno == ERANGE && fabs(v) > 1.0)) {
            ld_error(ld, line, "%s: value %d ('%.*s') is %s", what, n + 1, (int)(end - p), p,
                     isnan(v) ? "NaN" : "not finite");
            return -1;
        }
        if (strcmp(what, "logits") == 0 && !rule_z_in_range(v)) { /* the sampler would refuse it */
            ld_error(ld, line, "%s: value %d ('%.*s') is past the sampler's limit of 1e30", what,
                     n + 1, (int)(end - p), p);
            return -1;
        }
        if (n < max)
            out[n] = v;
        n++;
        p = end;
    }
    return n; /* all the values, though only the first max were stored */
}

/* Strips one pair of surrounding double quotes and processes escapes. */
int ld_unquote(struct loader *ld, int line, const char *value, char *out, size_t n)
{
    size_t len = strlen(value);
    struct err e;
    if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
        char inner[256];
        if (len - 2 >= sizeof inner) {
            ld_error(ld, line, "value is too long");
            return -1;
        }
        memcpy(inner, value + 1, len - 2);
        inner[len - 2] = '\0';
        if (unescape(inner, out, n, &e) < 0) {
            ld_error(ld, line, "%s", e.msg);
            return -1;
        }
        return 0;
    }
    if (len >= n) {
        ld_error(ld, line, "value is too long (at most %zu bytes)", n - 1);
        return -1;
    }
    memcpy(out, value, len + 1);
    return 0;
}
int ld_read_id_list(struct loader *ld, const struct lesson *L, int line, const char *what,
                    const char *text, int **out, int *len)
{
    int buf[LESSON_MAX_CONTEXT];
    struct err e;
    int n = parse_int_list(text, buf, LESSON_MAX_CONTEXT, L->vocab.n, &e);
    if (n < 0) {
        ld_error(ld, line, "%s: %s", what, e.msg);
        return -1;
    }
    *out = malloc((size_t)(n > 0 ? n : 1) * sizeof **out);
    if (!*out) {
        ld->oom = 1;
        return -1;
    }
    memcpy(*out, buf, (size_t)n * sizeof **out);
    *len = n;
    return 0;
}

/* Collects the settings of a section into a list, checking each against the
 * settings that precede it (lesson-wide ones first). */
int ld_read_settings(struct loader *ld, const char *section, struct settings *check,
                     struct lesson_setting **out, int *count, struct settings_patch *patch)
{
    settings_patch_clear(patch);
    int n = 0;
    for (int i = 0; i < ld->n; i++)
        if (strcmp(ld->entries[i].section, section) == 0 && settings_known(ld->entries[i].name))
            n++;
    *out = NULL;
    *count = 0;
    if (n == 0)
        return 0;
    struct lesson_setting *list = calloc((size_t)n, sizeof *list);
    if (!list) {
        ld->oom = 1;
        return -1;
    }
    *out = list;
    for (int i = 0; i < ld->n; i++) {
        struct ini_entry *en = &ld->entries[i];
        if (strcmp(en->section, section) != 0 || !settings_known(en->name))
            continue;
        if (en->cont) {
            ld_error(ld, en->line, "a setting cannot continue on the next line");
            return -1;
        }
        /* A setting is given once per section; stop strings add up. */
        for (int j = 0; j < *count; j++)
            if (strcmp(list[j].name, en->name) == 0 && strcmp(en->name, "stop") != 0) {
                ld_error(ld, en->line, "'%s' is given twice in [%s] (first on line %d)", en->name,
                         section, list[j].line);
                return -1;
            }
        char value[256];
        if (ld_unquote(ld, en->line, en->value, value, sizeof value) < 0)
            return -1;
        struct err e;
        if (settings_set(check, en->name, value, &e) < 0) {
            ld_error(ld, en->line, "%s: %s", en->name, e.msg);
            return -1;
        }
        settings_patch_set(patch, en->name, value, &e); /* as check took it */
        struct lesson_setting *s = &list[(*count)++];
        snprintf(s->name, sizeof s->name, "%s", en->name);
        s->line = en->line;
        s->value = strdup(value);
        if (!s->value) {
            ld->oom = 1;
            return -1;
        }
    }
    return 0;
}

static int interpret(struct loader *ld, struct lesson *L)
{
    if (ld_read_lesson_section(ld, L) < 0)
        return -1;
    if (ld->model_line ? ld_read_model(ld, L) < 0 : ld_read_vocab(ld, L) < 0)
        return -1;
    char *v = NULL;
    int line = 0;
    if (ld_collect(ld, "lesson", "prompt", NULL, &v, &line) < 0)
        return -1;
    if (v && L->model.on) {
        free(v);
        ld_error(ld, line, "a lesson with [model] takes its prompt from the scenario");
        return -1;
    }
    if (v) {
        int rc = ld_read_id_list(ld, L, line, "prompt", v, &L->prompt, &L->prompt_len);
        free(v);
        if (rc < 0)
            return -1;
    }
    struct settings check;
    settings_defaults(&check);
    if (ld_read_settings(ld, "settings", &check, &L->settings, &L->n_settings, &L->patch) < 0 ||
        ld_read_requests(ld, L, &check) < 0 || ld_read_head(ld, L) < 0)
        return -1;
    return ld_read_steps(ld, L, &check);
}

/* ---- entry points ---------------------------------------------------------- */

static const struct ini_rules LESSON_RULES = {
    .max_bytes = LESSON_MAX_BYTES,
    .section_ok = valid_section,
    .sections_hint = "lesson, vocab, settings, head, model, step.1, step.2, ...",
    .key_ok = key_allowed,
};

/* Interprets the entries of a file that read as sound INI. */
static int interpret_file(struct lesson *L, const struct ini_file *f, struct err *e)
{
    const char *path = f->path;
    struct loader ld = { .path = path, .entries = f->entries, .n = f->n };
    ld.lesson_line = ini_section_line(f, "lesson");
    ld.vocab_line = ini_section_line(f, "vocab");
    ld.settings_line = ini_section_line(f, "settings");
    ld.head_line = ini_section_line(f, "head");
    ld.model_line = ini_section_line(f, "model");
    for (int i = 0; i < f->n_sections && !ld.err_line; i++) {
        const char *name = f->sections[i].name;
        if (strncmp(name, "step.", 5) != 0)
            continue;
        long k = strtol(name + 5, NULL, 10);
        if (k < 1 || k > LESSON_MAX_STEPS || strlen(name) > 5 + 4)
            ld_error(&ld, f->sections[i].line, "[%s]: a lesson has at most %d steps", name,
                     LESSON_MAX_STEPS);
        else if (!ld.step_line[k])
            ld.step_line[k] = f->sections[i].line;
    }
    L->path = strdup(path);
    if (!L->path)
        ld.oom = 1;
    if (!ld.oom && !ld.err_line)
        interpret(&ld, L);
    if (ld.oom) {
        lesson_free(L);
        return err_set(e, ERR_SYSTEM, "%s: out of memory", path);
    }
    if (ld.err_line) {
        lesson_free(L);
        if (ld.err_line == NO_LINE)
            return err_set(e, ERR_USAGE, "%s: %s", path, ld.err.msg);
        return err_set(e, ERR_USAGE, "%s:%d: %s", path, ld.err_line, ld.err.msg);
    }
    return 0;
}

static int load(struct lesson *L, const char *path, const char *text, struct err *e)
{
    memset(L, 0, sizeof *L);
    struct ini_file f;
    if (ini_file_load(&f, path, text, &LESSON_RULES, e) < 0)
        return -1;
    int rc = interpret_file(L, &f, e);
    ini_file_free(&f);
    return rc;
}

int lesson_load_text(struct lesson *L, const char *path, const char *text, struct err *e)
{
    return load(L, path, text, e);
}

int lesson_load(struct lesson *L, const char *path, struct err *e)
{
    return load(L, path, NULL, e);
}

int lesson_peek_id(const char *path, char *id, struct err *e)
{
    struct ini_file f;
    if (ini_file_load(&f, path, NULL, &LESSON_RULES, e) < 0)
        return -1;
    int rc = err_set(e, ERR_USAGE, "%s: the [lesson] section needs an id", path);
    for (int i = 0; i < f.n; i++)
        if (strcmp(f.entries[i].section, "lesson") == 0 && strcmp(f.entries[i].name, "id") == 0 &&
            strlen(f.entries[i].value) <= LESSON_ID_MAX) {
            strcpy(id, f.entries[i].value);
            rc = 0;
            break;
        }
    ini_file_free(&f);
    return rc;
}

static void free_settings(struct lesson_setting *s, int n)
{
    for (int i = 0; i < n; i++)
        free(s[i].value);
    free(s);
}

void lesson_free(struct lesson *L)
{
    free(L->path);
    free(L->title);
    free(L->text);
    free(L->source);
    free(L->prompt_text);
    vocab_free(&L->vocab);
    free(L->prompt);
    free_settings(L->settings, L->n_settings);
    free(L->head.w);
    free(L->captured);
    if (L->model.scenario) {
        scenario_free(L->model.scenario);
        free(L->model.scenario);
    }
    lesson_gguf_free(L->model.gguf);
    for (int i = 0; i < L->n_request; i++)
        free(L->requests[i].text);
    for (int k = 0; k < L->n_steps; k++) {
        struct lesson_step *S = &L->steps[k];
        free(S->logits);
        free(S->probs);
        free(S->hidden);
        free(S->normed);
        free(S->context);
        free(S->text);
        free(S->note);
        free(S->solution);
        free_settings(S->settings, S->n_settings);
        for (int i = 0; i < S->n_try; i++)
            free(S->tries[i].text);
    }
    free(L->steps);
    memset(L, 0, sizeof *L);
}

void lesson_apply_settings(const struct lesson *L, int step, struct settings *s)
{
    struct err e; /* both were checked together when the lesson was read */
    settings_patch_apply(s, &L->patch, &e);
    if (step >= 1 && step <= L->n_steps)
        settings_patch_apply(s, &L->steps[step - 1].patch, &e);
}

static const struct lesson_setting *last_named(const struct lesson_setting *v, int n,
                                               const char *name)
{
    for (int i = n - 1; i >= 0; i--)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

const struct lesson_setting *lesson_setting_for(const struct lesson *L, int step, const char *name)
{
    const struct lesson_setting *own = NULL;
    if (step >= 1 && step <= L->n_steps)
        own = last_named(L->steps[step - 1].settings, L->steps[step - 1].n_settings, name);
    return own ? own : last_named(L->settings, L->n_settings, name);
}

void ask_describe(const struct lesson *L, const struct ask *a, char *buf, size_t n)
{
    static const char *const WORDS[] = { [ASK_EXP] = "exp",
                                         [ASK_PROB] = "prob",
                                         [ASK_FINAL] = "final",
                                         [ASK_CUM] = "cum",
                                         [ASK_ADJUSTED] = "adjusted",
                                         [ASK_SUM] = "sum",
                                         [ASK_KEPT_MASS] = "kept-mass",
                                         [ASK_KEPT] = "kept" };
    if (a->id >= 0)
        snprintf(buf, n, "%s %s", WORDS[a->kind], vocab_token(&L->vocab, a->id));
    else
        snprintf(buf, n, "%s", WORDS[a->kind]);
}

int lesson_from_npy(struct lesson *L, const char *npy_path, const char *vocab_path, struct err *e)
{
    memset(L, 0, sizeof *L);
    /* Everything the header says is checked, against the vocabulary too,
     * before the data is read: a file of the wrong V costs its header. */
    struct npy a;
    if (npy_open(&a, npy_path, e) < 0)
        return -1;
    if (a.rows > LESSON_MAX_STEPS) {
        npy_free(&a);
        return err_set(e, ERR_USAGE, "%s: %d steps; at most %d are played", npy_path, a.rows,
                       LESSON_MAX_STEPS);
    }
    if (vocab_load(&L->vocab, vocab_path, e) < 0) {
        npy_free(&a);
        return -1;
    }
    if (L->vocab.n != a.cols) {
        err_set(e, ERR_USAGE,
                "%s: %d logits a step, but the vocabulary %s has %d tokens (give the model's "
                "with --vocab FILE)",
                npy_path, a.cols, vocab_path, L->vocab.n);
        vocab_free(&L->vocab);
        npy_free(&a);
        return -1;
    }
    if (npy_read(&a, e) < 0) {
        vocab_free(&L->vocab);
        return -1;
    }
    const char *base = strrchr(npy_path, '/');
    base = base ? base + 1 : npy_path;
    static const char TEXT[] =
        "Logits captured from a model and saved as a .npy file, one row per step. The "
        "sampler runs on them exactly as on the lessons' own; the context grows with the "
        "tokens drawn here, which need not be the ones the model saw when the logits were "
        "captured.";
    L->path = strdup(npy_path);
    L->title = malloc(strlen(base) + 32);
    L->text = malloc(sizeof TEXT);
    L->steps = calloc((size_t)a.rows, sizeof *L->steps);
    L->prompt = malloc(sizeof *L->prompt);
    if (!L->path || !L->title || !L->text || !L->steps || !L->prompt) {
        npy_free(&a);
        lesson_free(L);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    snprintf(L->title, strlen(base) + 32, "captured logits (%s)", base);
    memcpy(L->text, TEXT, sizeof TEXT);
    strcpy(L->id, "captured");
    L->captured = a.data;
    L->n_steps = a.rows;
    for (int k = 0; k < a.rows; k++) {
        L->steps[k].given = GIVEN_LOGITS;
        L->steps[k].logits_f = a.data + (size_t)k * (size_t)a.cols;
        L->steps[k].digits = DIGITS_DEFAULT;
    }
    return 0;
}
