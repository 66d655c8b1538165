/* tokenizer_gemma4.c - Gemma 4's tokenizer (tokenizer.ggml.model "gemma4"),
 * as llama.cpp runs it (llama-vocab.cpp at the pinned commit: a BPE
 * vocabulary whose pre-tokenizer is "gemma4" whatever the file says): BPE
 * with merges, but over characters written as they are, the way
 * SentencePiece writes them, not over bytes in GPT-2's spelling.
 *
 * A part of the text between special tokens is read as BPE reads it
 * (bpe_llama_char: an invalid byte is a U+FFFD), every space written as
 * U+2581. llama.cpp replaces the spaces before it reads the characters;
 * the two orders agree, as neither a space nor U+2581's first byte can
 * continue a character. The text is then cut into runs of line breaks and
 * runs of everything else, nothing finer, so merges join words across
 * U+2581 ("▁▁" is a token) but never a line break with anything else. A
 * run of line breaks that is a token is that one token (Gemma 4 has runs
 * of 1 to 31 of them), unmerged, as llama.cpp takes it since its fix for
 * Gemma 4 (its pull request 21343); every other run starts as one symbol a
 * character, and its pairs merge in the order of the merges list
 * (bpe_merge). A symbol left that is no token
 * (a character the vocabulary lacks) gives the <0xNN> tokens of its bytes,
 * upper-case hex as llama.cpp writes them; a byte without one gives no id.
 */
#include <stdlib.h>
#include <string.h>

#include "gguf/tokenizer_int.h"

#define SPACE_MARK 0x2581u /* U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's space */

/* What one encode works in: the first symbols of a word, where each
 * begins, and the heap of pairs that could merge. */
struct gwork {
    struct tok_sym *sym;
    size_t *at; /* sym i is the word's bytes at[i] .. at[i + 1] until it merges */
    size_t cap;
    struct tok_heap heap;
};

/* The text as the merges see it into out (at most 3 bytes for each byte of
 * text: an invalid byte's U+FFFD, a space's U+2581); returns its length. */
static size_t gemma4_text(const char *text, size_t len, char *out)
{
    size_t n = 0;
    for (size_t at = 0; at < len;) {
        uint32_t cp;
        at += bpe_llama_char((const unsigned char *)text + at, len - at, &cp);
        n += bpe_put_char(cp == ' ' ? SPACE_MARK : cp, out + n);
    }
    return n;
}

/* Room for the symbols of a word of len bytes (at most one a byte). */
static int gwork_room(struct gwork *w, size_t len, struct err *e)
{
    if (len <= w->cap)
        return 0;
    struct tok_sym *sym = realloc(w->sym, len * sizeof *sym);
    if (sym)
        w->sym = sym;
    size_t *at = sym ? realloc(w->at, (len + 1) * sizeof *at) : NULL;
    if (!at)
        return err_set(e, ERR_SYSTEM, "out of memory for a word of %zu bytes", len);
    w->at = at;
    w->cap = len;
    return 0;
}

/* Cuts the word s[0..len) into its characters (the text is UTF-8 as
 * bpe_put_char writes it, so a lead byte says how long each is), each
 * symbol the token of its character or -1. Returns their count. */
static size_t first_symbols(const struct tokenizer *t, struct gwork *w, const char *s, size_t len)
{
    size_t n = 0;
    for (size_t at = 0; at < len; n++) {
        unsigned char b = (unsigned char)s[at];
        size_t k = b < 0xc0 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
        k = k < len - at ? k : len - at;
        w->at[n] = at;
        w->sym[n] =
            (struct tok_sym){ tok_find(t, s + at, k), (int)n - 1, at + k < len ? (int)n + 1 : -1 };
        at += k;
    }
    w->at[n] = len;
    return n;
}

/* Merges the characters of one word and appends its ids. */
static int gemma4_word(const struct tokenizer *t, struct gwork *w, const char *s, size_t len,
                       struct tok_out *o, struct err *e)
{
    int whole = s[0] == '\n' ? tok_find(t, s, len) : -1; /* a run of line breaks */
    if (whole >= 0)
        return tok_push(o, whole, e);
    if (gwork_room(w, len, e) < 0)
        return -1;
    size_t n = first_symbols(t, w, s, len);
    if (bpe_merge(t, w->sym, n, &w->heap, e) < 0)
        return -1;
    for (int i = 0; i >= 0; i = w->sym[i].next) {
        if (w->sym[i].id >= 0) {
            if (tok_push(o, w->sym[i].id, e) < 0)
                return -1;
            continue;
        }
        /* no token, so it never merged: still the one character at[i] */
        for (size_t j = w->at[i]; j < w->at[i + 1]; j++) {
            int id = t->byte_tok[(unsigned char)s[j]];
            if (id >= 0 && tok_push(o, id, e) < 0)
                return -1;
        }
    }
    return 0;
}

int gemma4_encode(const struct tokenizer *t, const char *text, size_t len, struct tok_out *o,
                  struct err *e)
{
    struct gwork w = { 0 };
    char *s = malloc(3 * len + 1);
    int rc = s ? 0 : err_set(e, ERR_SYSTEM, "out of memory for a text of %zu bytes", len);
    size_t n = s ? gemma4_text(text, len, s) : 0;
    for (size_t a = 0; rc == 0 && a < n;) {
        size_t z = a + 1;
        while (z < n && (s[z] == '\n') == (s[a] == '\n'))
            z++;
        rc = gemma4_word(t, &w, s + a, z - a, o, e);
        a = z;
    }
    free(s);
    free(w.sym);
    free(w.at);
    free(w.heap.p);
    return rc;
}
