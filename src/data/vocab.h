/* vocab.h - vocabularies: token id to bytes, to display text, and the text of
 * a sequence.
 *
 * Two kinds. A lesson's toy vocabulary is word-level: its tokens are words and
 * a sequence reads with a space between them ("The cat sat"). The Llama 3
 * vocabulary (data/llama3-vocab.bin) is byte-level: each token is a run of
 * bytes that carries its own spaces, and a token may hold only part of a
 * UTF-8 character. Its display form shows a leading space as a visible mark
 * and escapes control bytes and bytes that are not whole UTF-8 characters.
 */
#ifndef LOGITLAB_VOCAB_H
#define LOGITLAB_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "gguf/tokenizer.h"

#define VOCAB_MAX_EOS         16
#define VOCAB_MAX_TOKENS      TOK_MAX_TOKENS /* a tokenizer's limit is a vocabulary's */
#define VOCAB_MAX_TOKEN_BYTES 1024           /* a longer token is refused as absurd */
#define VOCAB_SPACE_MARK      "\u2423"       /* ␣: the visible leading space */

struct vocab {
    int n;
    int byte_level;    /* 1: tokens are raw bytes, read without separators */
    int join_space;    /* 1: sequences read with a space between tokens (word-level) */
    int first_special; /* ids from here on are special tokens (<|eot_id|>); n if none */
    /* n flags: a special token anywhere (a model's control, unknown and
     * unused tokens: Llama 2's <unk> <s> </s> come first); NULL: only those
     * from first_special on are. */
    uint8_t *special;
    int has_bos, bos; /* the token a model's prompt starts with, which is no text */
    int strip_space;  /* a text's first space is the tokenizer's (SentencePiece's prefix) */
    int n_eos;
    int eos[VOCAB_MAX_EOS]; /* end-of-sequence tokens */
    /* Word-level: one string per token. Byte-level: bytes and display forms
     * back to back, token i at [off[i], off[i+1]). */
    char **text;
    char *bytes;
    uint32_t *off;
    char *display;
    uint32_t *doff;
};

/* Allocates a word-level vocabulary of n empty entries. Returns 0 or -1. */
int vocab_init(struct vocab *v, int n, struct err *e);
void vocab_free(struct vocab *v);

/* Copies text as the entry of id (word-level). Returns 0 or -1. */
int vocab_set(struct vocab *v, int id, const char *text, struct err *e);

/* Loads a byte-level vocabulary: the LLVOCAB1 binary format (data/README.md),
 * or a text file with one token per line (escapes \n \t \\ and \x with
 * exactly two hex digits; any other backslash is refused with file:line; a
 * line may end in \r\n, whose \r is not part of the token: a token's own
 * CR is \x0D). Sets the Llama 3 end tokens when it is that vocabulary.
 * Errors name the file (and the line, or the header field). */
int vocab_load(struct vocab *v, const char *path, struct err *e);

/* The same from size bytes in memory; path is only used in messages. */
int vocab_parse(struct vocab *v, const char *path, const unsigned char *d, size_t size,
                struct err *e);

/* Builds a byte-level vocabulary from n tokens of raw bytes in memory. */
int vocab_from_bytes(struct vocab *v, int n, const char *const *tok, const size_t *len,
                     int first_special, struct err *e);

/* The display text of id ("?" when out of range): always valid UTF-8 with no
 * control characters, so it can go on a screen or in a table. */
const char *vocab_token(const struct vocab *v, int id);

/* The raw bytes of id and their count. */
const char *vocab_bytes(const struct vocab *v, int id, size_t *len);

/* Whether id is a special token: its text is a name, not text. */
int vocab_is_special(const struct vocab *v, int id);

/* 1 if id is an end-of-sequence token. */
int vocab_is_eos(const struct vocab *v, int id);

/* Finds a token by its display text or raw text; -1 if none. */
int vocab_find(const struct vocab *v, const char *text);

/* What a person typing a token means: "#127" is id 127; else the token with
 * that text; else a number is an id; else the word after a space ("Paris"
 * finds " Paris" when no token is "Paris" itself). -1 if nothing fits. */
int vocab_lookup(const struct vocab *v, const char *text);

/* Writes the text of ids[0..n) into buf (size size, always terminated):
 * raw bytes for a byte-level vocabulary, words and spaces for a word-level
 * one. End-of-sequence tokens are left out: they end the text, they are not
 * text. Returns the length the whole text needs (like snprintf). */
size_t vocab_detok(const struct vocab *v, const int *ids, int n, char *buf, size_t size);

/* The length of the longest prefix of text (len bytes) that ends on a
 * character boundary: what a stream can print now without splitting a
 * character that the next token completes. */
size_t vocab_complete_prefix(const char *text, size_t len);

#endif
