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
 */
#include "data/lesson.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/ini_file.h"
#include "model/lmhead.h"
#include "data/npy.h"

#define NAME_MAX_LEN       64
#define PROB_SUM_TOLERANCE 1e-6
#define DIGITS_DEFAULT     4
#define DIGITS_MAX         10

/* The entries of the file and what interpreting them found. */
struct loader {
    const char *path;
    int err_line; /* first error found, 0 if none; NO_LINE for a whole-file error */
    struct err err;
    /* The line of each section header, 0 when the file has none. */
    int lesson_line, vocab_line, settings_line, head_line, model_line;
    int step_line[LESSON_MAX_STEPS + 1];
    int oom;
    struct ini_entry *entries;
    int n;
};

#define NO_LINE INT_MAX /* an error about the file as a whole, such as a missing section */

static void ld_error(struct loader *ld, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void ld_error(struct loader *ld, int line, const char *fmt, ...)
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

static const char *const SECTION_KEYS_LESSON[] = { "id",     "title",       "text", "source",
                                                   "prompt", "prompt-text", NULL };
static const char *const SECTION_KEYS_STEP[] = { "logits", "probs", "hidden",   "context",
                                                 "text",   "note",  "solution", "ask",
                                                 "digits", "try",   NULL };
static const char *const SECTION_KEYS_HEAD[] = { "eps", "real-vocab", "real-hidden", NULL };
static const char *const SECTION_KEYS_MODEL[] = { "vocab",        "scenario", "hidden-size",
                                                  "weights-seed", "steps",    NULL };

static int in_list(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return 1;
    return 0;
}

static int all_digits(const char *s)
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
        return all_digits(name) || strcmp(name, "join") == 0 || strcmp(name, "eos") == 0;
    if (strcmp(section, "settings") == 0)
        return settings_known(name);
    if (strcmp(section, "head") == 0)
        return in_list(SECTION_KEYS_HEAD, name) ||
               (strncmp(name, "row.", 4) == 0 && all_digits(name + 4));
    if (strcmp(section, "model") == 0)
        return in_list(SECTION_KEYS_MODEL, name);
    if (strncmp(section, "step.", 5) == 0)
        return in_list(SECTION_KEYS_STEP, name) || settings_known(name);
    return 0;
}

/* ---- pass 2: interpretation ---------------------------------------------- */

/* The value of a key as one string: continuation lines joined with a space.
 * sep joins repeated (non-continuation) entries; NULL means a repeat is an error. */
static int collect(struct loader *ld, const char *section, const char *name, const char *sep,
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
static int collect_int(struct loader *ld, const char *section, const char *name, int lo, int hi,
                       int *out)
{
    char *v = NULL;
    int line = 0;
    if (collect(ld, section, name, NULL, &v, &line) < 0)
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
    return 0;
}

/* Splits a list of numbers ("-3.2 0.8, 1.2"), checks each, stores the first
 * max of them in out and returns how many there were. */
static int parse_numbers(struct loader *ld, int line, const char *what, const char *text,
                         double *out, int max)
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
        if (n < max)
            out[n] = v;
        n++;
        p = end;
    }
    return n; /* all the values, though only the first max were stored */
}

/* Strips one pair of surrounding double quotes and processes escapes. */
static int unquote(struct loader *ld, int line, const char *value, char *out, size_t n)
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

static int read_lesson_section(struct loader *ld, struct lesson *L)
{
    char *id = NULL, *title = NULL;
    int line = 0;
    if (collect(ld, "lesson", "id", NULL, &id, &line) < 0)
        return -1;
    if (!ld->lesson_line) {
        ld_error(ld, NO_LINE, "there is no [lesson] section (it gives the id and the title)");
        return -1;
    }
    if (!id) {
        ld_error(ld, ld->lesson_line, "the [lesson] section needs an id");
        return -1;
    }
    size_t idlen = strlen(id);
    int ok = idlen > 0 && idlen <= LESSON_ID_MAX;
    for (size_t i = 0; ok && i < idlen; i++)
        ok = islower((unsigned char)id[i]) || isdigit((unsigned char)id[i]) || id[i] == '-';
    if (!ok) {
        ld_error(ld, line, "id '%s' must be 1 to %d of a-z, 0-9 and '-'", id, LESSON_ID_MAX);
        free(id);
        return -1;
    }
    memcpy(L->id, id, idlen + 1);
    free(id);
    if (collect(ld, "lesson", "title", NULL, &title, NULL) < 0)
        return -1;
    if (!title) {
        ld_error(ld, ld->lesson_line, "the [lesson] section needs a title");
        return -1;
    }
    L->title = title;
    if (collect(ld, "lesson", "text", "\n", &L->text, NULL) < 0 ||
        collect(ld, "lesson", "source", NULL, &L->source, NULL) < 0 ||
        collect(ld, "lesson", "prompt-text", NULL, &L->prompt_text, NULL) < 0)
        return -1;
    return 0;
}

static int read_vocab(struct loader *ld, struct lesson *L)
{
    int max_id = -1, vocab_line = 0;
    for (int i = 0; i < ld->n; i++) {
        struct ini_entry *en = &ld->entries[i];
        if (strcmp(en->section, "vocab") != 0)
            continue;
        if (!vocab_line)
            vocab_line = en->line;
        if (en->cont) {
            ld_error(ld, en->line, "a token cannot continue on the next line");
            return -1;
        }
        if (!all_digits(en->name))
            continue;
        errno = 0;
        long id = strtol(en->name, NULL, 10);
        if (errno == ERANGE || id >= LESSON_MAX_VOCAB) {
            ld_error(ld, en->line, "token id %s is too large (a lesson has at most %d tokens)",
                     en->name, LESSON_MAX_VOCAB);
            return -1;
        }
        if (id > max_id)
            max_id = (int)id;
    }
    if (max_id < 0) {
        if (ld->vocab_line)
            ld_error(ld, ld->vocab_line, "[vocab] lists no tokens (write them as 'id = text')");
        else
            ld_error(ld, NO_LINE, "the vocabulary is missing: there is no [vocab] section");
        return -1;
    }
    struct err e;
    if (vocab_init(&L->vocab, max_id + 1, &e) < 0) {
        ld->oom = 1;
        return -1;
    }
    int *line_of = calloc((size_t)max_id + 1, sizeof *line_of);
    if (!line_of) {
        ld->oom = 1;
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < ld->n && rc == 0; i++) {
        struct ini_entry *en = &ld->entries[i];
        if (strcmp(en->section, "vocab") != 0)
            continue;
        char text[128];
        if (strcmp(en->name, "join") == 0) {
            if (strcmp(en->value, "space") == 0)
                L->vocab.join_space = 1;
            else if (strcmp(en->value, "none") == 0)
                L->vocab.join_space = 0;
            else
                ld_error(ld, en->line, "join must be 'space' or 'none', not '%s'", en->value),
                    rc = -1;
        } else if (strcmp(en->name, "eos") == 0) {
            int id;
            if (parse_int(en->value, 0, max_id, &id, &e) < 0)
                ld_error(ld, en->line, "eos: %s", e.msg), rc = -1;
            else if (L->vocab.n_eos == VOCAB_MAX_EOS)
                ld_error(ld, en->line, "more than %d eos tokens", VOCAB_MAX_EOS), rc = -1;
            else
                L->vocab.eos[L->vocab.n_eos++] = id;
        } else {
            int id = atoi(en->name);
            if (line_of[id]) {
                ld_error(ld, en->line, "token %d is given twice (first on line %d)", id,
                         line_of[id]);
                rc = -1;
            } else if (unquote(ld, en->line, en->value, text, sizeof text) < 0) {
                rc = -1;
            } else if (text[0] == '\0') {
                ld_error(ld, en->line, "token %d has no text", id);
                rc = -1;
            } else if (vocab_set(&L->vocab, id, text, &e) < 0) {
                ld->oom = 1;
                rc = -1;
            } else {
                line_of[id] = en->line;
            }
        }
    }
    for (int id = 0; id <= max_id && rc == 0; id++)
        if (!line_of[id]) {
            ld_error(ld, vocab_line, "the vocabulary has no token %d (ids must run from 0 to %d)",
                     id, max_id);
            rc = -1;
        }
    /* Two ids with one text could not be told apart on screen or in an ask. */
    for (int id = 1; id <= max_id && rc == 0; id++)
        for (int j = 0; j < id && rc == 0; j++)
            if (strcmp(L->vocab.text[id], L->vocab.text[j]) == 0) {
                ld_error(ld, line_of[id], "token %d has the same text as token %d ('%s')", id, j,
                         L->vocab.text[id]);
                rc = -1;
            }
    free(line_of);
    return rc;
}

/* A path in a lesson file is relative to the lesson's directory. */
static char *relative_path(const char *lesson_path, const char *rel)
{
    const char *slash = strrchr(lesson_path, '/');
    size_t dir = rel[0] == '/' || !slash ? 0 : (size_t)(slash - lesson_path) + 1;
    char *out = malloc(dir + strlen(rel) + 1);
    if (out) {
        memcpy(out, lesson_path, dir);
        strcpy(out + dir, rel);
    }
    return out;
}

/* [model]: the vocabulary file, the scenario and the head's sizes. The
 * prompt comes from the scenario; the steps are the model's. */
static int read_model(struct loader *ld, struct lesson *L)
{
    struct lesson_model *M = &L->model;
    M->on = 1;
    M->hidden = MODEL_DEFAULT_HIDDEN;
    M->seed = MODEL_DEFAULT_SEED;
    M->steps = LESSON_MODEL_STEPS;
    if (ld->vocab_line || ld->head_line) {
        ld_error(ld, ld->vocab_line ? ld->vocab_line : ld->head_line,
                 "a lesson with [model] takes its vocabulary and head from the model: "
                 "drop [%s]",
                 ld->vocab_line ? "vocab" : "head");
        return -1;
    }
    int seed = -1;
    if (collect_int(ld, "model", "hidden-size", 8, MODEL_MAX_HIDDEN, &M->hidden) < 0 ||
        collect_int(ld, "model", "weights-seed", 0, INT_MAX, &seed) < 0 ||
        collect_int(ld, "model", "steps", 1, LESSON_MAX_STEPS, &M->steps) < 0)
        return -1;
    if (seed >= 0)
        M->seed = (uint64_t)seed;
    char *vocab = NULL, *scen = NULL;
    int vline = 0, sline = 0;
    if (collect(ld, "model", "vocab", NULL, &vocab, &vline) < 0 ||
        collect(ld, "model", "scenario", NULL, &scen, &sline) < 0) {
        free(vocab);
        return -1;
    }
    int rc = 0;
    if (!vocab || !scen) {
        ld_error(ld, ld->model_line, "[model] needs %s (a path relative to the lesson file)",
                 !vocab ? "vocab" : "scenario");
        rc = -1;
    }
    char *path = rc == 0 ? relative_path(ld->path, vocab) : NULL;
    struct err e;
    if (rc == 0 && !path)
        ld->oom = 1, rc = -1;
    if (rc == 0 && vocab_load(&L->vocab, path, &e) < 0)
        ld_error(ld, vline, "vocab: %s", e.msg), rc = -1;
    free(path);
    path = rc == 0 ? relative_path(ld->path, scen) : NULL;
    if (rc == 0 && !path)
        ld->oom = 1, rc = -1;
    if (rc == 0) {
        M->scenario = calloc(1, sizeof *M->scenario);
        if (!M->scenario)
            ld->oom = 1, rc = -1;
        else if (scenario_load(M->scenario, path, &L->vocab, &e) < 0) {
            ld_error(ld, sline, "scenario: %s", e.msg);
            free(M->scenario);
            M->scenario = NULL;
            rc = -1;
        }
    }
    free(path);
    free(vocab);
    free(scen);
    if (rc < 0)
        return -1;
    const struct scenario *S = M->scenario;
    L->prompt = malloc((size_t)S->prompt_len * sizeof *L->prompt);
    if (!L->prompt) {
        ld->oom = 1;
        return -1;
    }
    memcpy(L->prompt, S->prompt, (size_t)S->prompt_len * sizeof *L->prompt);
    L->prompt_len = S->prompt_len;
    if (!L->prompt_text && S->prompt_text) {
        L->prompt_text = strdup(S->prompt_text);
        if (!L->prompt_text) {
            ld->oom = 1;
            return -1;
        }
    }
    return 0;
}

static int read_id_list(struct loader *ld, const struct lesson *L, int line, const char *what,
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
static int read_settings(struct loader *ld, const char *section, struct settings *check,
                         struct lesson_setting **out, int *count)
{
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
        if (unquote(ld, en->line, en->value, value, sizeof value) < 0)
            return -1;
        struct err e;
        if (settings_set(check, en->name, value, &e) < 0) {
            ld_error(ld, en->line, "%s: %s", en->name, e.msg);
            return -1;
        }
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

static int read_head(struct loader *ld, struct lesson *L)
{
    struct lesson_head *H = &L->head;
    int any = 0;
    for (int i = 0; i < ld->n; i++)
        any |= strcmp(ld->entries[i].section, "head") == 0;
    if (!any)
        return 0;
    H->eps = 0.0;
    char *v = NULL;
    int line = 0;
    struct err e;
    if (collect(ld, "head", "eps", NULL, &v, &line) < 0)
        return -1;
    if (v) {
        int rc = parse_double(v, &H->eps, &e);
        free(v);
        if (rc < 0 || H->eps < 0) {
            ld_error(ld, line, "eps: %s", rc < 0 ? e.msg : "must be 0 or more");
            return -1;
        }
    }
    int real_vocab = 0, real_hidden = 0;
    if (collect_int(ld, "head", "real-vocab", 1, 1 << 30, &real_vocab) < 0 ||
        collect_int(ld, "head", "real-hidden", 1, 1 << 30, &real_hidden) < 0)
        return -1;
    if (real_vocab)
        H->real_vocab = real_vocab;
    if (real_hidden)
        H->real_hidden = real_hidden;
    int V = L->vocab.n, head_line = 0;
    int *row_line = calloc((size_t)V, sizeof *row_line);
    if (!row_line) {
        ld->oom = 1;
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < ld->n && rc == 0; i++) {
        struct ini_entry *en = &ld->entries[i];
        if (strcmp(en->section, "head") != 0 || strncmp(en->name, "row.", 4) != 0 || en->cont)
            continue;
        if (!head_line)
            head_line = en->line;
        int id = -1;
        if (parse_int(en->name + 4, 0, V - 1, &id, &e) < 0) {
            ld_error(ld, en->line, "%s: no token %s in the vocabulary (0..%d)", en->name,
                     en->name + 4, V - 1);
            rc = -1;
            break;
        }
        char *text = NULL;
        if (collect(ld, "head", en->name, NULL, &text, NULL) < 0) {
            rc = -1;
            break;
        }
        double row[LESSON_MAX_HIDDEN];
        int d = parse_numbers(ld, en->line, en->name, text, row, LESSON_MAX_HIDDEN);
        free(text);
        if (d < 0) {
            rc = -1;
        } else if (d > LESSON_MAX_HIDDEN) {
            ld_error(ld, en->line, "%s has %d weights (a toy head has at most %d)", en->name, d,
                     LESSON_MAX_HIDDEN);
            rc = -1;
        } else if (d == 0) {
            ld_error(ld, en->line, "%s has no weights", en->name);
            rc = -1;
        } else if (H->d && d != H->d) {
            ld_error(ld, en->line, "%s has %d weights, the rows before it have %d", en->name, d,
                     H->d);
            rc = -1;
        } else {
            if (!H->d) {
                H->d = d;
                H->w = calloc((size_t)V * (size_t)d, sizeof *H->w);
                if (!H->w) {
                    ld->oom = 1;
                    rc = -1;
                    break;
                }
            }
            memcpy(H->w + (size_t)id * (size_t)d, row, (size_t)d * sizeof *row);
            row_line[id] = en->line;
        }
    }
    for (int id = 0; id < V && rc == 0; id++)
        if (!row_line[id]) {
            ld_error(ld, head_line ? head_line : 1,
                     "[head] has no row.%d (every token needs a row)", id);
            rc = -1;
        }
    free(row_line);
    return rc;
}

static int parse_ask(struct loader *ld, const struct lesson *L, int line, const char *text,
                     struct lesson_step *S)
{
    static const struct {
        const char *word;
        enum ask_kind kind;
        int per_token;
    } KINDS[] = {
        { "exp", ASK_EXP, 1 },
        { "prob", ASK_PROB, 1 },
        { "final", ASK_FINAL, 1 },
        { "cum", ASK_CUM, 1 },
        { "adjusted", ASK_ADJUSTED, 1 },
        { "sum", ASK_SUM, 0 },
        { "kept-mass", ASK_KEPT_MASS, 0 },
    };
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
        for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
            if (strcmp(word, KINDS[i].word) == 0)
                k = (int)i;
        if (k < 0) {
            ld_error(ld, line,
                     "ask: '%s' is not a value to ask for (exp, prob, final, cum, "
                     "adjusted, sum, kept-mass)",
                     word);
            return -1;
        }
        struct ask a = { KINDS[k].kind, -1, digits };
        if (KINDS[k].per_token) {
            if (!arg[0]) {
                ld_error(ld, line, "ask: '%s' needs a token (an id or its text)", word);
                return -1;
            }
            for (int id = 0; id < L->vocab.n && a.id < 0; id++)
                if (strcmp(vocab_token(&L->vocab, id), arg) == 0)
                    a.id = id;
            struct err e;
            if (a.id < 0 && all_digits(arg) && parse_int(arg, 0, L->vocab.n - 1, &a.id, &e) < 0)
                a.id = -1;
            if (a.id < 0) {
                ld_error(ld, line, "ask: '%s' is not a token of the vocabulary", arg);
                return -1;
            }
        }
        if (got > (KINDS[k].per_token ? 2 : 1)) {
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

static int parse_tries(struct loader *ld, const struct settings *base, struct lesson_step *S,
                       const char *section)
{
    for (int i = 0; i < ld->n; i++) {
        struct ini_entry *en = &ld->entries[i];
        if (strcmp(en->section, section) || strcmp(en->name, "try"))
            continue;
        if (en->cont) {
            ld_error(ld, en->line, "a try cannot continue on the next line");
            return -1;
        }
        if (S->n_try == LESSON_MAX_TRY) {
            ld_error(ld, en->line, "more than %d tries in one step", LESSON_MAX_TRY);
            return -1;
        }
        /* Check every part: "name value | name value". */
        struct settings check = *base;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", en->value);
        for (char *part = strtok(buf, "|"); part; part = strtok(NULL, "|")) {
            char name[48] = "";
            int off = 0;
            if (sscanf(part, " %47s %n", name, &off) < 1) {
                ld_error(ld, en->line, "try: an empty setting");
                return -1;
            }
            char *value = part + off;
            size_t vl = strlen(value);
            while (vl > 0 && isspace((unsigned char)value[vl - 1]))
                value[--vl] = '\0';
            struct err e;
            if (!settings_known(name)) {
                ld_error(ld, en->line, "try: '%s' is not a setting", name);
                return -1;
            }
            if (settings_set(&check, name, value, &e) < 0) {
                ld_error(ld, en->line, "try: %s: %s", name, e.msg);
                return -1;
            }
        }
        struct lesson_try *t = &S->tries[S->n_try++];
        t->line = en->line;
        t->text = strdup(en->value);
        if (!t->text) {
            ld->oom = 1;
            return -1;
        }
    }
    return 0;
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

static int read_step(struct loader *ld, struct lesson *L, int index,
                     const struct settings *lesson_set)
{
    struct lesson_step *S = &L->steps[index - 1];
    char section[32];
    snprintf(section, sizeof section, "step.%d", index);
    int V = L->vocab.n;
    S->digits = DIGITS_DEFAULT;
    S->line = ld->step_line[index];

    char *logits = NULL, *probs = NULL, *hidden = NULL;
    int lline = 0, pline = 0, hline = 0;
    if (collect(ld, section, "logits", NULL, &logits, &lline) < 0 ||
        collect(ld, section, "probs", NULL, &probs, &pline) < 0 ||
        collect(ld, section, "hidden", NULL, &hidden, &hline) < 0) {
        free(logits), free(probs), free(hidden);
        return -1;
    }
    int given = !!logits + !!probs + !!hidden;
    int rc = 0;
    if (L->model.on) {
        free(logits), free(probs), free(hidden);
        if (given) {
            ld_error(ld,
                     lline   ? lline
                     : pline ? pline
                             : hline,
                     "[%s]: the model computes the logits of a lesson with [model]", section);
            return -1;
        }
        S->given = GIVEN_MODEL;
        goto rest;
    }
    if (given != 1) {
        int line = lline ? lline : pline ? pline : hline ? hline : S->line;
        ld_error(ld, line,
                 given ? "[%s] gives more than one of logits, probs and hidden"
                       : "[%s] needs logits, probs or hidden",
                 section);
        rc = -1;
    }
    S->logits = calloc((size_t)V, sizeof *S->logits);
    if (!S->logits)
        ld->oom = 1, rc = -1;
    if (rc == 0 && logits) {
        S->given = GIVEN_LOGITS;
        int n = parse_numbers(ld, lline, "logits", logits, S->logits, V);
        if (n >= 0 && n != V)
            ld_error(ld, lline, "logits has %d value%s, the vocabulary has %d tokens", n,
                     n == 1 ? "" : "s", V),
                n = -1;
        rc = n < 0 ? -1 : 0;
    } else if (rc == 0 && probs) {
        S->given = GIVEN_PROBS;
        S->probs = calloc((size_t)V + 1, sizeof *S->probs);
        int n = S->probs ? parse_numbers(ld, pline, "probs", probs, S->probs, V) : -1;
        if (!S->probs)
            ld->oom = 1;
        if (n >= 0 && n != V)
            ld_error(ld, pline, "probs has %d value%s, the vocabulary has %d tokens", n,
                     n == 1 ? "" : "s", V),
                n = -1;
        double sum = 0.0;
        for (int i = 0; n > 0 && i < V; i++) {
            if (S->probs[i] < 0.0 || S->probs[i] > 1.0) {
                ld_error(ld, pline, "probs: value %d (%g) is not in [0, 1]", i + 1, S->probs[i]);
                n = -1;
                break;
            }
            sum += S->probs[i];
            /* ln p: softmax gives p back, and every stage works as for logits. */
            S->logits[i] = S->probs[i] > 0.0 ? log(S->probs[i]) : -INFINITY;
        }
        if (n > 0 && fabs(sum - 1.0) > PROB_SUM_TOLERANCE)
            ld_error(ld, pline, "probs add up to %.6g, not 1", sum), n = -1;
        rc = n < 0 ? -1 : 0;
    } else if (rc == 0 && hidden) {
        S->given = GIVEN_HIDDEN;
        if (!L->head.d) {
            ld_error(ld, hline, "hidden needs a [head] section with the LM head's rows");
            rc = -1;
        } else {
            int d = L->head.d;
            S->hidden = calloc((size_t)d + 1, sizeof *S->hidden);
            S->normed = calloc((size_t)d, sizeof *S->normed);
            int n = (S->hidden && S->normed)
                        ? parse_numbers(ld, hline, "hidden", hidden, S->hidden, d)
                        : (ld->oom = 1, -1);
            if (n >= 0 && n != d)
                ld_error(ld, hline, "hidden has %d value%s, the head's rows have %d", n,
                         n == 1 ? "" : "s", d),
                    n = -1;
            if (n >= 0) {
                double rms = lmhead_rmsnorm(S->hidden, d, L->head.eps, S->normed);
                if (!(rms > 0.0) || !isfinite(rms)) {
                    ld_error(ld, hline,
                             "hidden: RMSNorm divides by %g (an all-zero vector needs "
                             "eps > 0 in [head])",
                             rms);
                    n = -1;
                }
            }
            if (n >= 0) {
                lmhead_gemv(L->head.w, V, d, S->normed, S->logits);
                for (int i = 0; i < V && n >= 0; i++)
                    if (!isfinite(S->logits[i])) {
                        ld_error(ld, hline,
                                 "hidden: the head gives token %d a logit that is not "
                                 "finite",
                                 i);
                        n = -1;
                    }
            }
            rc = n < 0 ? -1 : 0;
        }
    }
    free(logits), free(probs), free(hidden);
    if (rc < 0)
        return -1;

rest:;
    char *v = NULL;
    int line = 0;
    if (collect(ld, section, "context", NULL, &v, &line) < 0)
        return -1;
    if (v) {
        S->has_context = 1;
        rc = read_id_list(ld, L, line, "context", v, &S->context, &S->context_len);
        free(v);
        if (rc < 0)
            return -1;
        if (!starts_with(S->context, S->context_len, L->prompt, L->prompt_len)) {
            ld_error(ld, line, "context must begin with the lesson's prompt");
            return -1;
        }
    }
    if (collect(ld, section, "text", "\n", &S->text, NULL) < 0 ||
        collect(ld, section, "note", "\n", &S->note, NULL) < 0 ||
        collect(ld, section, "solution", "\n", &S->solution, NULL) < 0)
        return -1;
    if (collect_int(ld, section, "digits", 0, DIGITS_MAX, &S->digits) < 0)
        return -1;
    if (collect(ld, section, "ask", ",", &v, &line) < 0)
        return -1;
    if (v) {
        rc = parse_ask(ld, L, line, v, S);
        free(v);
        if (rc < 0)
            return -1;
    }
    struct settings check = *lesson_set;
    if (read_settings(ld, section, &check, &S->settings, &S->n_settings) < 0)
        return -1;
    return parse_tries(ld, &check, S, section);
}

static int read_steps(struct loader *ld, struct lesson *L, const struct settings *lesson_set)
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

static int interpret(struct loader *ld, struct lesson *L)
{
    if (read_lesson_section(ld, L) < 0)
        return -1;
    if (ld->model_line ? read_model(ld, L) < 0 : read_vocab(ld, L) < 0)
        return -1;
    char *v = NULL;
    int line = 0;
    if (collect(ld, "lesson", "prompt", NULL, &v, &line) < 0)
        return -1;
    if (v && L->model.on) {
        free(v);
        ld_error(ld, line, "a lesson with [model] takes its prompt from the scenario");
        return -1;
    }
    if (v) {
        int rc = read_id_list(ld, L, line, "prompt", v, &L->prompt, &L->prompt_len);
        free(v);
        if (rc < 0)
            return -1;
    }
    struct settings check;
    settings_defaults(&check);
    if (read_settings(ld, "settings", &check, &L->settings, &L->n_settings) < 0 ||
        read_head(ld, L) < 0)
        return -1;
    return read_steps(ld, L, &check);
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
    if (L->model.run) {
        scenario_run_free(L->model.run);
        free(L->model.run);
    }
    if (L->model.scenario) {
        scenario_free(L->model.scenario);
        free(L->model.scenario);
    }
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
    struct err e;
    for (int i = 0; i < L->n_settings; i++)
        settings_set(s, L->settings[i].name, L->settings[i].value, &e);
    if (step >= 1 && step <= L->n_steps) {
        const struct lesson_step *S = &L->steps[step - 1];
        for (int i = 0; i < S->n_settings; i++)
            settings_set(s, S->settings[i].name, S->settings[i].value, &e);
    }
}

void ask_describe(const struct lesson *L, const struct ask *a, char *buf, size_t n)
{
    static const char *const WORDS[] = { [ASK_EXP] = "exp",
                                         [ASK_PROB] = "prob",
                                         [ASK_FINAL] = "final",
                                         [ASK_CUM] = "cum",
                                         [ASK_ADJUSTED] = "adjusted",
                                         [ASK_SUM] = "sum",
                                         [ASK_KEPT_MASS] = "kept-mass" };
    if (a->id >= 0)
        snprintf(buf, n, "%s %s", WORDS[a->kind], vocab_token(&L->vocab, a->id));
    else
        snprintf(buf, n, "%s", WORDS[a->kind]);
}

int lesson_from_npy(struct lesson *L, const char *npy_path, const char *vocab_path, struct err *e)
{
    memset(L, 0, sizeof *L);
    struct npy a;
    if (npy_load(&a, npy_path, e) < 0)
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
