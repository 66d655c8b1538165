/* libFuzzer harness: the model tokenizers on any bytes. The real Llama 3
 * and Llama 2 tokenizers are built once from data/ (FUZZ_DATA names another
 * directory; run from the top of the source tree). The first byte picks
 * Llama 3 as plain text, Llama 3 with special tokens, or Llama 2; the rest
 * is the text. Its pieces must read back exactly the text: SentencePiece's
 * with the space it puts in front and each U+2581 read as a space. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/tokenizer.h"
/* tokdata.c is test code outside FUZZ_SRC: this harness is its one unit. */
#include "../model/tokdata.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes the pieces should read back as. */
static size_t expected(const char *text, size_t len, int spm, char *out)
{
    size_t n = 0;
    if (spm)
        out[n++] = ' ';
    for (size_t i = 0; i < len; i++) {
        if (spm && i + 2 < len && memcmp(text + i, "\xe2\x96\x81", 3) == 0) {
            out[n++] = ' ';
            i += 2;
        } else {
            out[n++] = text[i];
        }
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tokdata d3, d2;
    static struct tokenizer *t[2];
    if (!t[0]) {
        const char *dir = getenv("FUZZ_DATA");
        struct err e;
        if (tokdata_llama3(&d3, dir ? dir : "data", &e) < 0 ||
            !(t[0] = tokenizer_new(&d3.spec, "llama3", &e)) ||
            tokdata_llama2(&d2, dir ? dir : "data", &e) < 0 ||
            !(t[1] = tokenizer_new(&d2.spec, "llama2", &e))) {
            fprintf(stderr, "fuzz_tokenizer: %s\n", e.msg);
            abort();
        }
    }
    if (size == 0 || size - 1 > TOK_MAX_TEXT)
        return 0;
    int mode = data[0] % 3, spm = mode == 2;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    int max = (int)len + 2, n;
    int *ids = malloc((size_t)max * sizeof *ids);
    char *got = malloc(len + 2), *want = malloc(len + 2);
    struct err e;
    if (!ids || !got || !want ||
        tokenizer_encode(t[spm], text, len, 0, mode == 1, ids, max, &n, &e) < 0)
        abort(); /* one token per byte at most, plus SentencePiece's space */
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= tokenizer_count(t[spm]))
            abort();
        at += tokenizer_piece(t[spm], ids[i], got + at, len + 2 - at);
        if (at > len + 1)
            abort();
    }
    size_t w = expected(text, len, spm, want);
    if (len > 0 && (at != w || memcmp(got, want, w) != 0))
        abort();
    free(ids);
    free(got);
    free(want);
    return 0;
}
