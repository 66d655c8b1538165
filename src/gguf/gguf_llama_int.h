/* gguf_llama_int.h - what gguf_llama.c (a file as a llama model) and
 * gguf_vocab.c (its tokenizer's metadata) share: one load's state, and how
 * an optional key is read and a key left out is told. */
#ifndef LOGITLAB_GGUF_LLAMA_INT_H
#define LOGITLAB_GGUF_LLAMA_INT_H

#include "base/err.h"
#include "gguf/arch.h"
#include "gguf/gguf.h"
#include "gguf/gguf_llama.h"

#define NAME_SHOWN 80 /* bytes of a name from the file quoted in a message */

/* The state of one load. */
struct ld {
    const struct gguf *g;
    struct gguf_llama *L;
    struct err *e;
    unsigned char *used;          /* per tensor of g: taken by the model */
    const struct arch_info *arch; /* general.architecture's row (gguf/arch.def) */
};

/* What an optional key must hold to be read: its class of value types. */
enum kclass { K_INT, K_FLOAT, K_BOOL, K_STR, K_ARR_STR, K_ARR_FLOAT, K_ARR_INT };

/* Keeps the first warning of a load and counts the rest (gguf_llama.h). */
void gl_warn(struct ld *d, const char *key, const char *why);

/* Whether the optional key may be read as c: 1 when it is absent or of
 * that class; 0, with a warning, when it holds another type. llama.cpp
 * loads files whose writers gave an optional key an odd type (it reads
 * what it needs and leaves the rest), so such a key is left out here too
 * rather than refusing the model. */
int gl_optional_fits(struct ld *d, const char *key, enum kclass c);

/* tokenizer.ggml.model and .pre: a kind and a pre-tokenizer logitlab has
 * (the first check of a load, so that a refusal names them). */
int gguf_vocab_check(struct ld *d);

/* The tokenizer's metadata into d->L->tok (gguf_vocab_check included). */
int gguf_vocab_load(struct ld *d);

#endif
