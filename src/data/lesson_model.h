/* lesson_model.h - a real model in a lesson: a GGUF file (gguf/gguf_llama.h)
 * with its own tokenizer (gguf/tokenizer.h) replaces a lesson's vocabulary
 * and prompt, so that the logit source (source/kind_gguf.c) can run its
 * forward pass on the lesson's context.
 *
 * `logitlab --model F -p TEXT` is a lesson made here from nothing (id
 * "model"); `logitlab real-france --model F` is that full-size lesson with
 * the model's vocabulary and its own prompt text encoded by the model's
 * tokenizer, its steps' texts kept.
 */
#ifndef LOGITLAB_LESSON_MODEL_H
#define LOGITLAB_LESSON_MODEL_H

#include "base/err.h"
#include "data/lesson.h"
#include "gguf/chat.h"

/* What the command line asks of a model. */
struct model_request {
    const char *path;   /* the GGUF file */
    const char *prompt; /* the prompt text, or NULL: the lesson's */
    int special;        /* special tokens' text in the prompt is theirs */
    int chat;           /* wrap the prompt in the model's chat format */
    /* Optional: told what opening and running the model is doing (what,
     * done of total), so that a screen can show it instead of freezing. */
    void (*progress)(void *arg, const char *what, int done, int total);
    void *progress_arg;
    const char *prompt_from; /* what names the prompt in messages ("--prompt"), or NULL */
};

/* The model of a lesson (L->model.gguf), owned by the lesson. */
struct lesson_gguf {
    struct gguf *file;        /* the mapped file (gguf/gguf.h) */
    struct gguf_llama *llama; /* as a model: its tensors and tokenizer metadata */
    struct tokenizer *tok;
    char *path;                            /* as given */
    char name[96];                         /* general.name (escaped), else the file's name */
    const struct chat_format *chat_format; /* its chat template's (gguf/chat.h); NULL: none known */
    int special, chat;                     /* how prompts are encoded (the request's) */
    const char *prompt_from;               /* the request's */
    void (*progress)(void *arg, const char *what, int done, int total); /* the request's */
    void *progress_arg;
};

/* Makes L a lesson of the model r->path alone: the model's vocabulary,
 * r->prompt encoded (empty: just BOS), LESSON_MODEL_STEPS steps. */
int lesson_from_model(struct lesson *L, const struct model_request *r, struct err *e);

/* Runs the loaded full-size lesson L on the model r->path: its vocabulary
 * becomes the model's and its prompt (r->prompt, else its own text) is
 * encoded by the model's tokenizer. A lesson with its own logits (a toy
 * lesson) is refused: its numbers are the lesson's. */
int lesson_use_model(struct lesson *L, const struct model_request *r, struct err *e);

/* Opens the model r->path for L, which a lesson file's [model] names: L's
 * vocabulary becomes the model's (L must have none yet); the prompt is
 * the caller's to encode (lesson_set_prompt). */
int lesson_attach_model(struct lesson *L, const struct model_request *r, struct err *e);

/* Encodes text as L's prompt with L's model (its special and chat choices)
 * and replaces L's prompt with it. Returns 0, or -1 with L unchanged. */
int lesson_set_prompt(struct lesson *L, const char *text, struct err *e);

/* The line to warn with when L's model left optional metadata out
 * ("x.gguf: tokenizer.ggml.pre has type u32: ignored (and 2 more keys)"),
 * into buf; NULL when there is none. */
#define LESSON_MODEL_WARNING 640 /* room for the line */
const char *lesson_model_warning(const struct lesson *L, char *buf, size_t n);

/* Gives the model lesson L at least want steps (generate --max-tokens on a
 * model runs as long as asked), the new ones computed by the model: 0, or
 * -1 when the context cannot hold the prompt and want more tokens
 * ("--max-tokens 600: x.gguf runs a context of 512 tokens and the prompt
 * takes 10: at most 502"). L must have a model (L->model.gguf). */
int lesson_model_grow(struct lesson *L, int want, struct err *e);

/* Frees what lesson_from_model or lesson_use_model made (lesson_free calls it). */
void lesson_gguf_free(struct lesson_gguf *g);

#endif
