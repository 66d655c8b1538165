/* libFuzzer harness: the model tokenizers on any bytes. The real Llama 3
 * and Llama 2 tokenizers are built once from data/ (FUZZ_DATA names another
 * directory; run from the top of the source tree). The first byte picks
 * Llama 3 as plain text (0), Llama 3 with special tokens (1), Llama 2 (2),
 * or Llama 3's tokens and merges under another pre-tokenizer family (3 on:
 * OTHER_PRE, each family's expressions on the same byte-level vocabulary);
 * the rest is the text. Every id must be in the vocabulary, and the pieces
 * must read back the text as llama.cpp reads it: for Llama 3's vocabulary
 * the text with a U+FFFD for each invalid byte (tokdata_llama_text, the
 * text itself when it is valid UTF-8), whatever cut the words, for Llama 2
 * every byte, compared in SentencePiece's escaped form (U+2581 for each
 * space, one in front). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf/tokenizer.h"
/* tokdata.c is test code outside FUZZ_SRC: this harness is its one unit. */
#include "../model/tokdata.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The escaped form of s (U+2581 for each space, one in front when prefix)
 * into out (room for 3 x len + 3), for Llama 2; for Llama 3, s as
 * llama.cpp reads it. */
static size_t expected(const char *s, size_t len, int spm, int prefix, char *out)
{
    if (!spm)
        return tokdata_llama_text(s, len, out);
    size_t n = 0;
    if (prefix)
        memcpy(out, "\xe2\x96\x81", 3), n = 3;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ')
            memcpy(out + n, "\xe2\x96\x81", 3), n += 3;
        else
            out[n++] = s[i];
    }
    return n;
}

/* The pre-tokenizer families run on Llama 3's vocabulary beside its own
 * (tokenizer_bpe.c's PRE_KINDS, one name each). */
static const char *const OTHER_PRE[] = { "gpt-4o", "qwen2",          "qwen35", "starcoder", "gpt-2",
                                         "dbrx",   "deepseek-coder", "falcon", "default" };
#define N_OTHER ((int)(sizeof OTHER_PRE / sizeof OTHER_PRE[0]))

/* t[0]: Llama 3, t[1]: Llama 2, t[2 + k]: Llama 3's under OTHER_PRE[k]. */
static void build_all(struct tokdata *d3, struct tokdata *d2, struct tokenizer **t)
{
    const char *dir = getenv("FUZZ_DATA");
    struct err e;
    if (tokdata_llama3(d3, dir ? dir : "data", &e) < 0 ||
        !(t[0] = tokenizer_new(&d3->spec, "llama3", &e)) ||
        tokdata_llama2(d2, dir ? dir : "data", &e) < 0 ||
        !(t[1] = tokenizer_new(&d2->spec, "llama2", &e))) {
        fprintf(stderr, "fuzz_tokenizer: %s\n", e.msg);
        abort();
    }
    for (int k = 0; k < N_OTHER; k++) {
        struct tok_spec s = d3->spec;
        s.pre = (struct tok_str){ OTHER_PRE[k], strlen(OTHER_PRE[k]) };
        if (!(t[2 + k] = tokenizer_new(&s, OTHER_PRE[k], &e))) {
            fprintf(stderr, "fuzz_tokenizer: %s\n", e.msg);
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tokdata d3, d2;
    static struct tokenizer *t[2 + N_OTHER];
    if (!t[0])
        build_all(&d3, &d2, t);
    if (size == 0 || size - 1 > TOK_MAX_TEXT)
        return 0;
    int mode = data[0] % (3 + N_OTHER), spm = mode == 2;
    struct tokenizer *tk = mode < 3 ? t[spm] : t[mode - 1];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    /* At most one token per byte llama.cpp reads (3 for an invalid byte's
     * U+FFFD), plus SentencePiece's space. */
    size_t room = 3 * len + 3;
    int max = (int)room, n;
    int *ids = malloc(room * sizeof *ids);
    char *got = malloc(room), *a = malloc(3 * room), *b = malloc(3 * room);
    struct err e;
    if (!ids || !got || !a || !b ||
        tokenizer_encode(tk, text, len, 0, mode == 1, ids, max, &n, &e) < 0)
        abort();
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= tokenizer_count(tk))
            abort();
        at += tokenizer_piece(tk, ids[i], got + at, room - at);
        if (at > room)
            abort();
    }
    size_t na = spm ? expected(got, at, 1, 0, a) : at, nb = expected(text, len, spm, len > 0, b);
    if (na != nb || memcmp(spm ? a : got, b, nb) != 0)
        abort();
    free(ids);
    free(got);
    free(a);
    free(b);
    return 0;
}
