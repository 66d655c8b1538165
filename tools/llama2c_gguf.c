/* llama2c_gguf - the build's converter of a llama2.c checkpoint and its
 * tokenizer.bin into a GGUF file (gguf/llama2c.h), through logitlab's own
 * GGUF writer: the Makefile makes data/stories260K.gguf with it.
 *
 *   llama2c_gguf CHECKPOINT.bin TOKENIZER.bin NAME OUT.gguf
 *
 * OUT is replaced only when the whole file was written. Exit status 0, 2
 * for bad input (one line naming the file), 3 for a system failure. */
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "base/utf8.h"
#include "gguf/llama2c.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: llama2c_gguf CHECKPOINT.bin TOKENIZER.bin NAME OUT.gguf\n");
        return 2;
    }
    struct err e = { 0, "" };
    if (llama2c_convert(argv[1], argv[2], argv[3], argv[4], 1, &e) < 0) {
        fputs("llama2c_gguf: ", stderr);
        utf8_write_escaped(stderr, e.msg, strlen(e.msg), 0);
        fputc('\n', stderr);
        return e.code ? e.code : 3;
    }
    return 0;
}
