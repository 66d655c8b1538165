/* vocab.h - vocabularies: token id to display text, and text of a sequence.
 *
 * A lesson's toy vocabulary is word-level: its tokens are whole words and a
 * sequence reads with a space between tokens ("The cat sat"). Byte-level
 * vocabularies (Llama 3) carry their own spaces and join with nothing.
 */
#ifndef LOGITLAB_VOCAB_H
#define LOGITLAB_VOCAB_H

#include <stddef.h>

#include "err.h"

#define VOCAB_MAX_EOS 4

struct vocab {
    int n;
    char **text;    /* n strings, owned; NULL until set */
    int join_space; /* 1: sequences read with a space between tokens */
    int n_eos;
    int eos[VOCAB_MAX_EOS]; /* end-of-sequence tokens */
};

/* Allocates n empty entries. Returns 0 or -1. */
int vocab_init(struct vocab *v, int n, struct err *e);
void vocab_free(struct vocab *v);

/* Copies text as the entry of id. Returns 0 or -1 (out of memory). */
int vocab_set(struct vocab *v, int id, const char *text, struct err *e);

/* The text of id, or "?" when out of range or unset. */
const char *vocab_token(const struct vocab *v, int id);

/* 1 if id is an end-of-sequence token. */
int vocab_is_eos(const struct vocab *v, int id);

/* Writes the text of ids[0..n) into buf (size size, always terminated).
 * End-of-sequence tokens are left out: they end the text, they are not text.
 * Returns the length the whole text needs (like snprintf). */
size_t vocab_detok(const struct vocab *v, const int *ids, int n, char *buf, size_t size);

#endif
