/* lesson.h - lessons from INI files (read with inih), strictly checked.
 *
 * A lesson is a vocabulary, an optional prompt, lesson-wide settings, an
 * optional toy LM head, and numbered steps. Each step gives one row of logits
 * (directly, as probabilities, or as a hidden vector for the head), the text a
 * learner reads, its own settings, and for exercises the values asked for.
 * The format is described in doc/lessons.md.
 *
 * Every error names the file and line: "lessons/x.ini:12: unknown key
 * 'temprature' in [step.1]". A loaded lesson has been checked completely:
 * its settings parse, its counts match, and its numbers are finite.
 */
#ifndef LOGITLAB_LESSON_H
#define LOGITLAB_LESSON_H

#include "base/err.h"
#include "data/scenario.h"
#include "core/settings.h"
#include "data/vocab.h"

#define LESSON_MAX_BYTES   (1 << 20) /* a lesson file larger than this is refused */
#define LESSON_MAX_VOCAB   4096      /* tokens in a lesson's vocabulary */
#define LESSON_MAX_STEPS   256
#define LESSON_MODEL_STEPS 64   /* steps of a model lesson unless it says */
#define LESSON_MAX_CONTEXT 1024 /* token ids in a prompt or context */
/* Positions a model's KV cache holds (at most its trained context): the
 * longest prompt and the most steps a lesson file may have. */
#define LESSON_MODEL_CONTEXT (LESSON_MAX_CONTEXT + LESSON_MAX_STEPS)
#define LESSON_MAX_HIDDEN    64  /* size of a toy head's hidden vector */
#define LESSON_MAX_ASK       32  /* values asked for in one exercise step */
#define LESSON_MAX_TRY       16  /* suggested settings in one step */
#define LESSON_MAX_REQUESTS  8   /* requests of the batch a lesson declares */
#define LESSON_MAX_LINE      197 /* inih's 200-byte buffer less \r, \n and \0 */
#define LESSON_ID_MAX        32

/* One setting as the file gave it; applied in file order. */
struct lesson_setting {
    char name[64];
    char *value;
    int line;
};

enum ask_kind {
    ASK_EXP,
    ASK_PROB,
    ASK_FINAL,
    ASK_CUM,
    ASK_ADJUSTED,
    ASK_SUM,
    ASK_KEPT_MASS,
    ASK_KEPT, /* the kept set: answered as tokens, not a number */
};

/* One value an exercise asks for: a column of a token's row, a total, or
 * the set of tokens kept. */
struct ask {
    enum ask_kind kind;
    int id;     /* token id for per-token kinds, -1 for totals */
    int digits; /* decimals this answer is shown and checked to; -1: the step's */
};

/* A suggestion the UI can step through: one or more settings as typed at the
 * ':' prompt, separated by '|' ("penalty-scope all | penalty-formula engine"). */
struct lesson_try {
    char *text; /* "temperature 0.5" */
    int line;
};

enum step_given { GIVEN_LOGITS, GIVEN_PROBS, GIVEN_HIDDEN, GIVEN_MODEL };

struct lesson_step {
    int line; /* of its [step.N] header */
    enum step_given given;
    /* vocab.n values (as given, or from probs as ln p); NULL for GIVEN_HIDDEN,
     * whose logits the toy head gives, and GIVEN_MODEL, whose depend on the
     * context (source/source.h) */
    double *logits;
    const float *logits_f; /* or these: a row of captured logits (lesson_from_npy) */
    double *probs;         /* as given, when given == GIVEN_PROBS */
    double *hidden;        /* as given, when given == GIVEN_HIDDEN (head.d values) */
    double *normed;        /* RMSNorm(hidden), when given == GIVEN_HIDDEN */
    int has_context;       /* 1: the step starts from its own context */
    int *context;
    int context_len;
    char *text;     /* what the learner reads; paragraphs end in '\n' */
    char *note;     /* remarks such as a printed number that differs from the exact one */
    char *solution; /* an exercise's worked solution, shown once answered */
    int n_settings; /* as written, for the lines that quote them */
    struct lesson_setting *settings;
    struct settings_patch patch; /* the same, parsed */
    int n_ask;
    struct ask ask[LESSON_MAX_ASK];
    int digits; /* decimals shown and checked; 4 unless set */
    int n_try;
    struct lesson_try tries[LESSON_MAX_TRY];
};

/* A toy LM head: logits = W . RMSNorm(h), with unit gain. */
struct lesson_head {
    int d;           /* hidden size; 0 when the lesson has no head */
    double *w;       /* vocab.n rows of d weights */
    double eps;      /* RMSNorm's epsilon */
    long real_vocab; /* the real model's sizes the lesson compares with, or 0 */
    long real_hidden;
};

/* A lesson run by the synthetic model (source/kind_scenario.h) on a real
 * vocabulary: the logits of a step come from the LM head, for the context. */
struct lesson_model {
    int on;
    int hidden;    /* hidden size; MODEL_DEFAULT_HIDDEN unless set */
    uint64_t seed; /* of the weights */
    int steps;     /* LESSON_MODEL_STEPS unless set */
    struct scenario *scenario;
    /* A real model (data/lesson_model.h) that runs instead of the
     * scenario, or NULL: owned by the lesson. */
    struct lesson_gguf *gguf;
};

struct lesson {
    char *path;
    char id[LESSON_ID_MAX + 1];
    char *title;
    char *text;
    char *source;      /* which seed and section the lesson follows */
    char *prompt_text; /* the prompt in words, when the vocabulary lacks its tokens */
    struct vocab vocab;
    int *prompt;
    int prompt_len;
    int n_settings; /* as written, for the lines that quote them */
    struct lesson_setting *settings;
    struct settings_patch patch; /* the same, parsed */
    struct lesson_head head;
    struct lesson_model model;
    float *captured; /* the logits of a lesson made from a .npy file (owned) */
    /* The batch the lesson opens in: one request a line of [lesson]
     * ("request = temperature 0.8 | top-p 0.95 | seed 1"), settings over
     * the lesson-wide ones; none: the lesson opens on its first step. */
    int n_request;
    struct lesson_try requests[LESSON_MAX_REQUESTS];
    int n_steps;
    struct lesson_step *steps; /* steps[0] is [step.1] */
};

/* Loads and checks the lesson at path. On error fills e with
 * "path:line: message" and leaves L empty (nothing to free). */
int lesson_load(struct lesson *L, const char *path, struct err *e);

/* Same, from text in memory; path is only used in messages. */
int lesson_load_text(struct lesson *L, const char *path, const char *text, struct err *e);

void lesson_free(struct lesson *L);

/* Reads only the id of the lesson at path into id (LESSON_ID_MAX + 1 bytes),
 * without building its vocabulary or its model: what finding a lesson by
 * id needs. Returns 0, or -1 when the file does not read as INI or has no id. */
int lesson_peek_id(const char *path, char *id, struct err *e);

/* Makes a lesson of captured logits: one step per row of the .npy file at
 * npy_path, in the vocabulary at vocab_path (data/llama3-vocab.bin for
 * 128,256 tokens). The id is "captured", the title the file's name. */
int lesson_from_npy(struct lesson *L, const char *npy_path, const char *vocab_path, struct err *e);

/* Applies the lesson-wide settings, then those of step (1-based), to s.
 * They were checked at load, so this cannot fail. */
void lesson_apply_settings(const struct lesson *L, int step, struct settings *s);

/* The line of the lesson that gives setting name its value on step (the
 * step's own last, else the lesson-wide last), or NULL when the lesson
 * leaves it alone. */
const struct lesson_setting *lesson_setting_for(const struct lesson *L, int step, const char *name);

/* Text for an ask item: "exp 0", "prob on", "sum". */
void ask_describe(const struct lesson *L, const struct ask *a, char *buf, size_t n);

#endif
