/* libFuzzer harness: the grammar engine (src/core/grammar.h) on any text.
 * The first byte picks the front end (bits 0-1: GBNF, regex, JSON schema,
 * choices split at newlines); the text runs to the first NUL byte, and the
 * bytes after it are fed to the state one at a time (a refused one is left
 * out). Every refusal must be one line with its front end's prefix; the
 * mask over a fixed vocabulary must keep exactly the tokens that, fed alone
 * from the same state, are taken. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/grammar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const TOK[] = { "a",  "b",    "ab",   "{",  "}",    "\"",   "\":",       " ",
                                   "\n", "0",    "12",   "-",  ".",    "e",    "[",         "]",
                                   ",",  "null", "true", "\\", "\xC3", "\xA9", "x\xC3\xA9", "",
                                   "(",  ")",    "yes",  "no", "\t",   "\x01" };
#define NTOK (sizeof TOK / sizeof TOK[0])

static int compile(int mode, const char *text, size_t n, struct grammar **g, struct err *e)
{
    if (mode == 0)
        return grammar_from_gbnf(text, n, g, e);
    if (mode == 1)
        return grammar_from_regex(text, n, g, e);
    if (mode == 2)
        return grammar_from_json_schema(text, n, g, e);
    const char *s[64];
    size_t len[64];
    int k = 0;
    for (size_t i = 0, at = 0; i <= n && k < 64; i++)
        if (i == n || text[i] == '\n') {
            s[k] = text + at;
            len[k++] = i - at;
            at = i + 1;
        }
    return grammar_from_choices(s, len, k, g, e);
}

static void check_mask(const struct grammar *g, const struct grammar_state *st,
                       const struct grammar_trie *t)
{
    unsigned char refused[NTOK];
    struct grammar_mask_counts c;
    struct err e;
    if (grammar_mask(g, st, t, refused, &c, &e) < 0)
        return; /* out of memory or the expansion limit: a line, no crash */
    for (size_t i = 0; i < NTOK; i++) {
        struct grammar_state *one;
        if (grammar_state_copy(st, &one, &e) < 0)
            return;
        int r = TOK[i][0]
                    ? grammar_advance(g, one, (const unsigned char *)TOK[i], strlen(TOK[i]), &e)
                    : 0;
        grammar_state_free(one);
        if (r >= 0 && r != !refused[i])
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const PREFIX[] = { "grammar", "regex", "json-schema", "choices" };
    int mode = data[0] & 3;
    const char *text = (const char *)data + 1;
    const uint8_t *nul = memchr(data + 1, 0, size - 1);
    size_t n = nul ? (size_t)(nul - (data + 1)) : size - 1;
    struct grammar *g;
    struct err e;
    if (compile(mode, text, n, &g, &e) < 0) {
        if (strncmp(e.msg, PREFIX[mode], strlen(PREFIX[mode])) != 0)
            abort();
        for (const char *q = e.msg; *q; q++)
            if ((unsigned char)*q < 0x20 || (unsigned char)*q == 0x7F)
                abort(); /* one line, no control byte from the input */
        return 0;
    }
    const unsigned char *b[NTOK];
    int len[NTOK];
    for (size_t i = 0; i < NTOK; i++) {
        b[i] = (const unsigned char *)TOK[i];
        len[i] = (int)strlen(TOK[i]);
    }
    struct grammar_trie *t = NULL;
    struct grammar_state *st = NULL;
    if (grammar_trie_build(b, len, (int)NTOK, &t, &e) == 0 && grammar_state_new(g, &st, &e) == 0) {
        char words[256];
        check_mask(g, st, t);
        for (const uint8_t *p = nul ? nul + 1 : data + size; p < data + size; p++) {
            if (grammar_advance(g, st, p, 1, &e) < 0)
                break;
            grammar_describe(g, st, words, sizeof words);
            for (const char *q = words; *q; q++)
                if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7F)
                    abort(); /* no raw control or non-ASCII byte on a screen */
        }
        check_mask(g, st, t);
    }
    grammar_state_free(st);
    grammar_trie_free(t);
    grammar_free(g);
    return 0;
}
