/* libFuzzer harness: the vocabulary reader (binary LLVOCAB1 or text) on any
 * bytes; what it accepts must display and join safely. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "data/vocab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vocab v;
    struct err e;
    if (vocab_parse(&v, "fuzz.vocab", data, size, &e) == 0) {
        int ids[8];
        for (int i = 0; i < 8; i++)
            ids[i] = (int)((i * 2654435761u) % (unsigned)v.n);
        char buf[256];
        size_t need = vocab_detok(&v, ids, 8, buf, sizeof buf);
        vocab_complete_prefix(buf, need < sizeof buf ? need : sizeof buf - 1);
        for (int i = 0; i < v.n && i < 64; i++) {
            const char *t = vocab_token(&v, i);
            if (utf8_width(t) < 0)
                abort();
            vocab_find(&v, t);
        }
        vocab_free(&v);
    } else if (strncmp(e.msg, "fuzz.vocab", 10) != 0 && strncmp(e.msg, "out of memory", 13) != 0) {
        abort();
    }
    return 0;
}
