/* tokenizer_int.h - what tokenizer.c (the tables, special tokens, pieces),
 * tokenizer_attr.c (what llama.cpp decides by a token's text),
 * tokenizer_special.c (the special tokens found in a text),
 * tokenizer_bpe.c (byte-level BPE, and the merges Gemma 4 shares),
 * tokenizer_spm.c (SentencePiece) and tokenizer_gemma4.c (Gemma 4) share.
 *
 * Every token has a key, the bytes a piece of text is looked up by, and a
 * piece, the bytes it stands for. BPE keys are raw bytes (GPT-2's spelling
 * undone), so the pre-tokenizer and the merges work on the text as it is;
 * a token whose stored text is not all in GPT-2's spelling has no key, as
 * llama.cpp, which looks texts up spelled, never reaches it. SPM and
 * Gemma 4 keys are the pieces as stored ("▁the"), since the text is
 * escaped the same way before it is matched. A special token is found in
 * the text by its piece, its text as written.
 */
#ifndef LOGITLAB_TOKENIZER_INT_H
#define LOGITLAB_TOKENIZER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "gguf/tokenizer.h"

struct tok_bpe;     /* tokenizer_bpe.c: the merges and the pre-tokenizer */
struct tok_special; /* tokenizer_special.c: the automaton that finds special tokens */

struct tokenizer {
    enum tok_kind kind;
    int n;
    char *key;         /* every key, back to back: token i is key[key_off[i] .. key_off[i+1]) */
    uint32_t *key_off; /* n + 1 */
    char *piece;       /* the same for pieces */
    uint32_t *piece_off;
    int8_t *type;      /* enum tok_type of each token */
    float *score;      /* SPM: higher merges first */
    int32_t *slot;     /* open-addressing table of ids by key; -1 empty */
    uint32_t mask;     /* slots - 1 (a power of two) */
    size_t max_key;    /* the longest key: a longer run of text is no token */
    int byte_tok[256]; /* the token of each single byte; BPE, Gemma 4: -1 for none */
    int *special;      /* ids matched in the text before tokenizing, longest first */
    int n_special;
    struct tok_special *sp; /* their pieces, found in one scan (tokenizer_special.c) */
    int bos, eos, eot, unk, add_bos, add_space_prefix;
    int *eog; /* the ends of generation, ascending (tokenizer_attr.c) */
    int n_eog;
    struct tok_bpe *bpe; /* BPE and Gemma 4 */
};

/* A growing list of ids. */
struct tok_out {
    int *ids;
    size_t n, cap;
};

/* Parts of the text: plain text (id -1) or a special token found in it. */
struct tok_seg {
    size_t off, len;
    int id;
};

struct tok_segs {
    struct tok_seg *s;
    size_t n, cap;
};

/* Appends a part (none when len is 0); fails only for memory. */
int tok_seg_add(struct tok_segs *v, size_t off, size_t len, int id, struct err *e);

/* The work of one partition, for the tests: the edges the scan looked up
 * (at most 2 a byte) and the candidates looked at (at most D a byte, D
 * the longest chain of special tokens each a prefix of the next:
 * tokenizer_special.c). */
struct tok_scan_count {
    size_t steps, candidates;
};

/* The automaton over t->special's pieces (t's pieces and t->special built
 * already) into t->sp; tok_special_free frees it. */
int tok_special_build(struct tokenizer *t, struct err *e);
void tok_special_free(struct tok_special *sp);

/* Appends to v the parts of text (len <= TOK_MAX_TEXT bytes) as
 * llama.cpp's tokenizer_st_partition cuts it: each special token in
 * t->special's order takes every occurrence, left to right, that lies
 * wholly in text no token before it took; control and unknown tokens only
 * when special is set, user-defined ones always. Adds what the partition
 * cost to *count when count is not NULL. */
int tok_special_split(const struct tokenizer *t, const char *text, size_t len, int special,
                      struct tok_segs *v, struct tok_scan_count *count, struct err *e);

/* A candidate merge of the adjacent symbols left and right, for both kinds'
 * merge loops: the smallest key goes first, ties to the leftmost pair. BPE's
 * key is the merge's rank (aux: the merge), SentencePiece's the negated
 * score of the joined token (size: its length when pushed). */
struct tok_pair {
    double key;
    int left, right;
    int aux;
    uint32_t size;
};

/* The pairs waiting, as a binary heap in p[0..n). */
struct tok_heap {
    struct tok_pair *p;
    size_t n, cap;
};

int tok_heap_push(struct tok_heap *h, struct tok_pair p, struct err *e);
struct tok_pair tok_heap_pop(struct tok_heap *h); /* h must not be empty */

/* The id whose key is s[0..len), or -1. */
int tok_find(const struct tokenizer *t, const char *s, size_t len);

/* Appends id; fails only for memory. */
int tok_push(struct tok_out *o, int id, struct err *e);

/* Copies up to 40 bytes of s into buf (size >= 200) as one printable line,
 * for messages that quote the model's strings. Returns buf. */
const char *tok_quote(const char *s, size_t len, char *buf, size_t n);

/* Whether a token of type (enum tok_type) stands for its text as written:
 * special tokens do; the others are spelled in the kind's alphabet. */
int tok_as_written(int type);

/* Marks the tokens llama.cpp's loader takes for control tokens by their
 * text and lists the ends of generation (t->eog), from t->type and s's
 * texts and ids (tokenizer_attr.c). */
int tok_attr_apply(struct tokenizer *t, const struct tok_spec *s, struct err *e);

/* The raw bytes of a GPT-2-spelled token s into out (room for len bytes:
 * spelling never makes a token shorter). Characters outside the spelling are
 * kept as their UTF-8 bytes, and *spelled (when not NULL) says whether
 * there were none. Returns the length. */
size_t bpe_unspell(const char *s, size_t len, char *out, int *spelled);

/* The row of the pre-tokenizer table (tokenizer_bpe.c) named pre (len 0:
 * none, llama.cpp's "default"), or -1; and that row's add_bos default. */
int bpe_pre_find(const struct tok_str *pre);
int bpe_pre_add_bos(int row);

/* The refusal of an unknown pre-tokenizer, naming the ones there are. */
int bpe_pre_refuse(const struct tok_str *pre, const char *path, struct err *e);

/* Builds the merges and the pre-tokenizer of row pre (bpe_pre_find; -1:
 * none, for Gemma 4) into t->bpe (t's keys, table and byte tokens are
 * built already). A merge's sides are looked up in GPT-2's spelling for
 * BPE, as stored for Gemma 4. */
int bpe_build(struct tokenizer *t, const struct tok_spec *s, int pre, const char *path,
              struct err *e);
void bpe_free(struct tok_bpe *b);

/* A symbol of a word being merged: its token (-1: none, or merged into
 * the symbol on its left), and the symbols beside it (-1: none). */
struct tok_sym {
    int id, prev, next;
};

/* Merges the n symbols of sym (linked in order, n >= 0) by t's merges, the
 * pair whose merge comes first in the list first, the leftmost of equal
 * pairs first; a symbol without a token merges with nothing. The word's
 * tokens are then those of the symbols reached from sym[0] by next.
 * heap is the caller's work area. */
int bpe_merge(const struct tokenizer *t, struct tok_sym *sym, size_t n, struct tok_heap *heap,
              struct err *e);

/* One character as llama.cpp reads text (tokenizer_bpe.c): its length at
 * s (len >= 1 bytes there) and its code point in *cp, U+FFFD for a byte
 * that starts none. */
size_t bpe_llama_char(const unsigned char *s, size_t len, uint32_t *cp);

/* Code point cp as UTF-8 into out (4 bytes of room), surrogates too;
 * returns the length. */
size_t bpe_put_char(uint32_t cp, char *out);

/* Appends the ids of text (no special tokens in it any more) to o. */
int bpe_encode(const struct tokenizer *t, const char *text, size_t len, struct tok_out *o,
               struct err *e);

/* The same for SentencePiece; prefix puts the model's space in front. */
int spm_encode(const struct tokenizer *t, const char *text, size_t len, int prefix,
               struct tok_out *o, struct err *e);

/* The same for Gemma 4 (tokenizer_gemma4.c). */
int gemma4_encode(const struct tokenizer *t, const char *text, size_t len, struct tok_out *o,
                  struct err *e);

#endif
