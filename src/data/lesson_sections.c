/* lesson_sections.c - the sections of a lesson file before its steps:
 * [lesson] (id, title, text, prompt text), [vocab] (the tokens), [model]
 * (a vocabulary file and a scenario instead of [vocab]) and [head] (a toy
 * LM head that turns a step's hidden vector into logits).
 */
#include "data/lesson.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "data/lesson_load.h"
#include "data/lesson_model.h"
#include "model/model.h"

/* [lesson]: the id, the title, the text, the source and the prompt's text. */
int ld_read_lesson_section(struct loader *ld, struct lesson *L)
{
    char *id = NULL, *title = NULL;
    int line = 0;
    if (ld_collect(ld, "lesson", "id", NULL, &id, &line) < 0)
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
    if (ld_collect(ld, "lesson", "title", NULL, &title, NULL) < 0)
        return -1;
    if (!title) {
        ld_error(ld, ld->lesson_line, "the [lesson] section needs a title");
        return -1;
    }
    L->title = title;
    if (ld_collect(ld, "lesson", "text", "\n", &L->text, NULL) < 0 ||
        ld_collect(ld, "lesson", "source", NULL, &L->source, NULL) < 0 ||
        ld_collect(ld, "lesson", "prompt-text", NULL, &L->prompt_text, NULL) < 0)
        return -1;
    return 0;
}

/* The largest token id in [vocab] into *max_id, and the line of the
 * section's first entry into *first_line. */
static int vocab_size(struct loader *ld, int *max_id, int *first_line)
{
    *max_id = -1;
    *first_line = 0;
    for (int i = 0; i < ld->n; i++) {
        struct ini_entry *en = &ld->entries[i];
        if (strcmp(en->section, "vocab") != 0)
            continue;
        if (!*first_line)
            *first_line = en->line;
        if (en->cont) {
            ld_error(ld, en->line, "a token cannot continue on the next line");
            return -1;
        }
        if (!ld_all_digits(en->name))
            continue;
        errno = 0;
        long id = strtol(en->name, NULL, 10);
        if (errno == ERANGE || id >= LESSON_MAX_VOCAB) {
            ld_error(ld, en->line, "token id %s is too large (a lesson has at most %d tokens)",
                     en->name, LESSON_MAX_VOCAB);
            return -1;
        }
        if (id > *max_id)
            *max_id = (int)id;
    }
    if (*max_id < 0) {
        if (ld->vocab_line)
            ld_error(ld, ld->vocab_line, "[vocab] lists no tokens (write them as 'id = text')");
        else
            ld_error(ld, NO_LINE, "the vocabulary is missing: there is no [vocab] section");
        return -1;
    }
    return 0;
}

/* One entry of [vocab]: join, eos or a token (id = text). line_of[id] is
 * the line of token id once it is read, 0 before. */
static int vocab_entry(struct loader *ld, struct lesson *L, const struct ini_entry *en, int max_id,
                       int *line_of)
{
    struct err e;
    if (strcmp(en->name, "join") == 0) {
        if (strcmp(en->value, "space") == 0) {
            L->vocab.join_space = 1;
        } else if (strcmp(en->value, "none") == 0) {
            L->vocab.join_space = 0;
        } else {
            ld_error(ld, en->line, "join must be 'space' or 'none', not '%s'", en->value);
            return -1;
        }
        return 0;
    }
    if (strcmp(en->name, "eos") == 0) {
        int id;
        if (parse_int(en->value, 0, max_id, &id, &e) < 0) {
            ld_error(ld, en->line, "eos: %s", e.msg);
            return -1;
        }
        if (L->vocab.n_eos == VOCAB_MAX_EOS) {
            ld_error(ld, en->line, "more than %d eos tokens", VOCAB_MAX_EOS);
            return -1;
        }
        L->vocab.eos[L->vocab.n_eos++] = id;
        return 0;
    }
    int id = atoi(en->name);
    char text[128];
    if (line_of[id]) {
        ld_error(ld, en->line, "token %d is given twice (first on line %d)", id, line_of[id]);
        return -1;
    }
    if (ld_unquote(ld, en->line, en->value, text, sizeof text) < 0)
        return -1;
    if (text[0] == '\0') {
        ld_error(ld, en->line, "token %d has no text", id);
        return -1;
    }
    if (vocab_set(&L->vocab, id, text, &e) < 0) {
        ld->oom = 1;
        return -1;
    }
    line_of[id] = en->line;
    return 0;
}

/* Every id from 0 to max_id has a token, and no two tokens share a text. */
static int check_tokens(struct loader *ld, const struct lesson *L, int max_id, int first_line,
                        const int *line_of)
{
    for (int id = 0; id <= max_id; id++)
        if (!line_of[id]) {
            ld_error(ld, first_line, "the vocabulary has no token %d (ids must run from 0 to %d)",
                     id, max_id);
            return -1;
        }
    /* Two ids with one text could not be told apart on screen or in an ask. */
    for (int id = 1; id <= max_id; id++)
        for (int j = 0; j < id; j++)
            if (strcmp(L->vocab.text[id], L->vocab.text[j]) == 0) {
                ld_error(ld, line_of[id], "token %d has the same text as token %d ('%s')", id, j,
                         L->vocab.text[id]);
                return -1;
            }
    return 0;
}

/* [vocab]: the tokens, with ids from 0 up, how they join, and the eos
 * tokens. */
int ld_read_vocab(struct loader *ld, struct lesson *L)
{
    int max_id, first_line;
    if (vocab_size(ld, &max_id, &first_line) < 0)
        return -1;
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
    for (int i = 0; i < ld->n && rc == 0; i++)
        if (strcmp(ld->entries[i].section, "vocab") == 0)
            rc = vocab_entry(ld, L, &ld->entries[i], max_id, line_of);
    if (rc == 0)
        rc = check_tokens(ld, L, max_id, first_line, line_of);
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

/* The vocabulary and the scenario that [model] names, as paths relative to
 * the lesson file (vline and sline: the lines of their keys). */
static int model_files(struct loader *ld, struct lesson *L, const char *vocab, int vline,
                       const char *scen, int sline)
{
    struct lesson_model *M = &L->model;
    struct err e;
    char *path = relative_path(ld->path, vocab);
    if (!path) {
        ld->oom = 1;
        return -1;
    }
    int rc = vocab_load(&L->vocab, path, &e);
    free(path);
    if (rc < 0) {
        ld_error(ld, vline, "vocab: %s", e.msg);
        return -1;
    }
    path = relative_path(ld->path, scen);
    if (!path) {
        ld->oom = 1;
        return -1;
    }
    M->scenario = calloc(1, sizeof *M->scenario);
    if (!M->scenario) {
        ld->oom = 1;
        rc = -1;
    } else if (scenario_load(M->scenario, path, &L->vocab, &e) < 0) {
        ld_error(ld, sline, "scenario: %s", e.msg);
        free(M->scenario);
        M->scenario = NULL;
        rc = -1;
    }
    free(path);
    return rc;
}

/* [model] file = a GGUF model: its vocabulary and the lesson's prompt text
 * encoded by its tokenizer (data/lesson_model.h); vocab and scenario would
 * contradict it (other_line: the line of one, or 0). */
static int model_file(struct loader *ld, struct lesson *L, const char *file, int fline,
                      int other_line)
{
    if (other_line) {
        ld_error(ld, other_line,
                 "[model] file takes the vocabulary and the prompt from the model: drop vocab "
                 "and scenario");
        return -1;
    }
    char *path = relative_path(ld->path, file);
    if (!path) {
        ld->oom = 1;
        return -1;
    }
    struct err e;
    struct model_request mr = { path, NULL, 0, 0, NULL, NULL, "the lesson's prompt-text" };
    int rc = lesson_attach_model(L, &mr, &e);
    free(path);
    if (rc == 0)
        rc = lesson_set_prompt(L, L->prompt_text ? L->prompt_text : "", &e);
    if (rc < 0)
        ld_error(ld, fline, "file: %s", e.msg);
    return rc;
}

/* The prompt of a model lesson is its scenario's, and so is the prompt's
 * text unless [lesson] gives one. */
static int model_prompt(struct loader *ld, struct lesson *L)
{
    const struct scenario *S = L->model.scenario;
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

/* [model]: the vocabulary file, the scenario and the head's sizes. The
 * prompt comes from the scenario; the steps are the model's. */
int ld_read_model(struct loader *ld, struct lesson *L)
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
    int hline = ld_collect_int(ld, "model", "hidden-size", 8, MODEL_MAX_HIDDEN, &M->hidden);
    int wline = hline < 0 ? -1 : ld_collect_int(ld, "model", "weights-seed", 0, INT_MAX, &seed);
    if (wline < 0 || ld_collect_int(ld, "model", "steps", 1, LESSON_MAX_STEPS, &M->steps) < 0)
        return -1;
    if (seed >= 0)
        M->seed = (uint64_t)seed;
    char *vocab = NULL, *scen = NULL, *file = NULL;
    int vline = 0, sline = 0, fline = 0;
    if (ld_collect(ld, "model", "vocab", NULL, &vocab, &vline) < 0 ||
        ld_collect(ld, "model", "scenario", NULL, &scen, &sline) < 0 ||
        ld_collect(ld, "model", "file", NULL, &file, &fline) < 0) {
        free(vocab);
        free(scen);
        return -1;
    }
    int rc = 0;
    if (file) {
        /* hidden-size and weights-seed shape the synthetic head, which a
         * model file replaces: they would be ignored. */
        if (hline || wline)
            ld_error(ld, hline ? hline : wline,
                     "[model] file takes its head from the model: drop %s (it shapes the "
                     "synthetic head)",
                     hline ? "hidden-size" : "weights-seed");
        rc = hline || wline ? -1 : model_file(ld, L, file, fline, vocab ? vline : scen ? sline : 0);
        free(vocab);
        free(scen);
        free(file);
        return rc;
    }
    if (!vocab || !scen) {
        ld_error(ld, ld->model_line, "[model] needs %s (a path relative to the lesson file)",
                 !vocab ? "vocab" : "scenario");
        rc = -1;
    } else {
        rc = model_files(ld, L, vocab, vline, scen, sline);
    }
    free(vocab);
    free(scen);
    if (rc < 0)
        return -1;
    return model_prompt(ld, L);
}

/* [head]'s eps and the sizes of the real head it stands for. */
static int head_sizes(struct loader *ld, struct lesson_head *H)
{
    H->eps = 0.0;
    char *v = NULL;
    int line = 0;
    struct err e;
    if (ld_collect(ld, "head", "eps", NULL, &v, &line) < 0)
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
    if (ld_collect_int(ld, "head", "real-vocab", 1, 1 << 30, &real_vocab) < 0 ||
        ld_collect_int(ld, "head", "real-hidden", 1, 1 << 30, &real_hidden) < 0)
        return -1;
    if (real_vocab)
        H->real_vocab = real_vocab;
    if (real_hidden)
        H->real_hidden = real_hidden;
    return 0;
}

/* One row.ID of [head]: the token's weights, as many as the rows before it
 * have. row_line[id] is the line of row id once it is read, 0 before. */
static int head_row(struct loader *ld, struct lesson *L, const struct ini_entry *en, int *row_line)
{
    struct lesson_head *H = &L->head;
    int V = L->vocab.n, id = -1;
    struct err e;
    if (parse_int(en->name + 4, 0, V - 1, &id, &e) < 0) {
        ld_error(ld, en->line, "%s: no token %s in the vocabulary (0..%d)", en->name, en->name + 4,
                 V - 1);
        return -1;
    }
    char *text = NULL;
    if (ld_collect(ld, "head", en->name, NULL, &text, NULL) < 0)
        return -1;
    double row[LESSON_MAX_HIDDEN];
    int d = ld_parse_numbers(ld, en->line, en->name, text, row, LESSON_MAX_HIDDEN);
    free(text);
    if (d < 0)
        return -1;
    if (d > LESSON_MAX_HIDDEN) {
        ld_error(ld, en->line, "%s has %d weights (a toy head has at most %d)", en->name, d,
                 LESSON_MAX_HIDDEN);
        return -1;
    }
    if (d == 0) {
        ld_error(ld, en->line, "%s has no weights", en->name);
        return -1;
    }
    if (H->d && d != H->d) {
        ld_error(ld, en->line, "%s has %d weights, the rows before it have %d", en->name, d, H->d);
        return -1;
    }
    if (!H->d) {
        H->d = d;
        H->w = calloc((size_t)V * (size_t)d, sizeof *H->w);
        if (!H->w) {
            ld->oom = 1;
            return -1;
        }
    }
    memcpy(H->w + (size_t)id * (size_t)d, row, (size_t)d * sizeof *row);
    row_line[id] = en->line;
    return 0;
}

/* [head], when the file has one: a toy LM head with a row of weights for
 * every token. */
int ld_read_head(struct loader *ld, struct lesson *L)
{
    struct lesson_head *H = &L->head;
    int any = 0;
    for (int i = 0; i < ld->n; i++)
        any |= strcmp(ld->entries[i].section, "head") == 0;
    if (!any)
        return 0;
    if (head_sizes(ld, H) < 0)
        return -1;
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
        rc = head_row(ld, L, en, row_line);
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
