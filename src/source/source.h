/* source.h - where a step's logits come from: the logit source of the data
 * flow (HACKING.md), a type with a table of operations, one kind a file:
 *
 *   kind_gguf.c      a real model from a GGUF file: its forward pass and LM head
 *   kind_table.c     a lesson's own rows of logits (or of probabilities, as ln p)
 *   kind_head.c      a lesson's toy LM head: W . RMSNorm(h) for each step's h
 *   kind_scenario.c  the synthetic full-size model driven by a scenario
 *   kind_captured.c  logits captured from a model, read from a .npy file
 *
 * A source runs a lesson it borrows (data/lesson.h: what the files say) and
 * owns what running it takes (a built head, its buffers, the backend it
 * uses). It also knows the lesson's own path and the settings of a step.
 */
#ifndef LOGITLAB_SOURCE_H
#define LOGITLAB_SOURCE_H

#include "base/err.h"
#include "core/sampler.h"
#include "core/settings.h"
#include "data/lesson.h"
#include "model/model.h"

#define SOURCE_FAST_ROWS 64 /* rows a full-size step ranks unless asked for more */
#define SOURCE_MAX_ROWS  4096

struct backend;
struct config;
struct source;
struct source_grammar;

/* One row of logits: doubles (a lesson's table) or floats (a model's). */
struct source_logits {
    const double *d;
    const float *f;
};

/* The operations of a kind. Every function returns 0, or -1 with e. */
/* What a real model's forward passes took, as llama.cpp's end-of-run
 * report counts them: the prompt (the last run that started a context or
 * ran two or more positions at once) and the single positions run since,
 * each with its LM head; and the last call's own parts. Wall time on the
 * host, in milliseconds. */
struct source_speed {
    int prompt_tokens; /* 0: no prompt run yet */
    double prompt_ms;
    int eval_runs; /* single positions since the prompt */
    double eval_ms;
    int step_tokens; /* positions the last call ran (0: the cache held them all) */
    double step_ms;  /* its body and head */
    double head_ms;  /* its head */
};

struct source_ops {
    const char *kind;     /* "table", "toy head", "scenario", "captured", "model file" */
    int follows_context;  /* its logits are computed for the context (a model) */
    int written_for_path; /* its steps' logits were written for the lesson's own path */
    /* Whether this kind runs L (the first kind of source.c's list that does, runs it). */
    int (*runs)(const struct lesson *L);
    /* Builds what running takes; hidden: a model's hidden size (0: the
     * lesson's). NULL: nothing to build (nor to close). */
    int (*open)(struct source *src, int hidden, struct err *e);
    void (*close)(struct source *src);
    /* The logits of step k (1-based) for the token after ctx[0..len),
     * valid until the next call; NULL: the step's own (peek), whatever ctx. */
    int (*logits)(struct source *src, int k, const int *ctx, int len, struct source_logits *out,
                  struct err *e);
    /* The logits the last call gave for step k, when they are still there
     * (no work is done); 0 on success, -1 when there are none. */
    int (*peek)(const struct source *src, int k, struct source_logits *out);
    /* Optional, for a kind with an LM head of its own: makes it ready on be
     * (and the products run there from now on), its hidden size, and the
     * hidden vector for the token after ctx. */
    int (*use_backend)(struct source *src, struct backend *be, struct err *e);
    int (*hidden_size)(const struct source *src);
    int (*hidden)(struct source *src, const int *ctx, int len, float *h, struct err *e);
    /* Optional: a paragraph on the last step's computation (the hidden
     * vector, the head, the time), into buf (n bytes). */
    void (*describe)(const struct source *src, char *buf, size_t n);
    /* Optional: what the model's runs took (struct source_speed). */
    void (*speed)(const struct source *src, struct source_speed *out);
};

struct source {
    const struct source_ops *ops;
    const struct lesson *L;      /* the lesson it runs (borrowed) */
    const struct config *config; /* the user's defaults under the lesson's (borrowed), or NULL */
    int fast_rows;               /* 0: the reference sampler; else the O(V) one, this many rows */
    void *state;                 /* the kind's own */
    /* The DRY sequence breakers of the lesson's vocabulary (sampler.h's
     * DRY_BREAKERS), a flag per token; NULL without a vocabulary. */
    uint8_t *breaker;
    /* The grammar's compiled form, tries and mask (source_grammar.h), made
     * by the first step with a grammar on; NULL before. */
    struct source_grammar *grammar;
    /* While source_open_progress builds: told how far (borrowed; NULL after). */
    const struct model_progress *progress;
};

/* Opens a source for L (which must outlive it): picks the kind, builds
 * what it needs (a full-size lesson's head of hidden size hidden, 0: the
 * lesson's: a second or so at full size), and decides the sampler: a
 * lesson with a model, captured logits, or more than LESSON_MAX_VOCAB
 * tokens runs on the O(V) one, ranking rows (0: SOURCE_FAST_ROWS) of the
 * best tokens in full; the others on the reference. Returns 0 or -1. */
int source_open(struct source *src, const struct lesson *L, const struct config *config, int hidden,
                int rows, struct err *e);

/* The same, telling p (NULL: nobody) how building a full-size lesson's
 * head goes: the seconds of opening such a lesson. */
int source_open_progress(struct source *src, const struct lesson *L, const struct config *config,
                         int hidden, int rows, const struct model_progress *p, struct err *e);
void source_close(struct source *src);

/* Runs the LM head on backend be from now on; for a kind without a head it
 * drops the head be held (a lesson before this one's). Returns 0 or -1. */
int source_use_backend(struct source *src, struct backend *be, struct err *e);

/* 1 when the source runs on the O(V) sampler. */
int source_is_fast(const struct source *src);

/* 1 when its logits follow the context (a model), 0 when each step's are
 * fixed; and 1 when those were written for the lesson's own path (a
 * lesson's table or head: another context is "off the lesson's path"). */
int source_follows_context(const struct source *src);
int source_written_for_path(const struct source *src);

/* A model's hidden size and the hidden vector for the token after ctx
 * (what the batch view's many rows need); 0 and -1 for the other kinds. */
int source_hidden_size(const struct source *src);
int source_hidden(struct source *src, const int *ctx, int len, float *h, struct err *e);

/* A paragraph on how the last step was computed (a real model's hidden
 * vector, head and times), or "" for a kind that has none. */
#define SOURCE_DESCRIBE_MAX 800 /* room for what source_describe says */
void source_describe(const struct source *src, char *buf, size_t n);

/* What a real model's runs took; -1 for the kinds with no forward pass
 * (or none run yet). */
int source_speed(const struct source *src, struct source_speed *out);

/* The float logits of step k as source_run_step ran it last, when they are
 * floats (a model's, a captured row); NULL for a lesson's table. */
const float *source_last_logits_f(const struct source *src, int k);

/* The logit of token id at step k as given: the step's own, a captured
 * row, or the model's for the context it ran last (NAN when it has not
 * run). What a row looked up after a fast run (sampler_fast_row) leaves out. */
double source_logit(const struct source *src, int k, int id);

/* Builds the settings of a step: defaults, the user's (src->config), then
 * the lesson's, then the step's. */
void source_step_settings(const struct source *src, int k, struct settings *s);

/* How much of a context of len ids is the lesson's prompt: the prompt's
 * length, or len when the context is shorter. */
int source_prompt_len(const struct lesson *L, int len);

/* The Philox step counter of a draw in a context of len ids: generated
 * tokens so far plus one (the prompt does not count). */
uint32_t source_draw_step(const struct lesson *L, int len);

/* Runs the sampler on step k with settings s in context ctx, into t
 * (allocated for the lesson's vocabulary), the grammar's mask made for ctx
 * when a grammar setting is on. Returns 0 or -1. */
int source_run_step(struct source *src, int k, const struct settings *s, const int *ctx, int len,
                    struct trace *t, struct err *e);

/* The grammar's mask of the last step run (V flags), or NULL when it had
 * no grammar: what a backend's request of that step carries. */
const uint8_t *source_refused(const struct source *src);

/* The grammar's mask for the token after ctx[0..len) under s, made into
 * into (V flags) for a request of a batch: *refused is into, or NULL when
 * no grammar is on. Returns 0 or -1 (source_grammar_step's errors). */
int source_row_refused(struct source *src, const struct settings *s, const int *ctx, int len,
                       uint8_t *into, const uint8_t **refused, struct err *e);

#endif
