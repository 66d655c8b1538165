/* llama2c.h - a llama2.c checkpoint (the run.c format of Karpathy's
 * llama2.c: a header of seven int32, then every weight as float32) with its
 * tokenizer.bin, written as a GGUF file that logitlab and llama.cpp read.
 *
 * The tensors are the checkpoint's floats, byte for byte, under llama.cpp's
 * names; the vocabulary is written as llama.cpp's convert-llama2c-to-ggml
 * writes it (spaces as U+2581, ids 0, 1 and 2 as <unk>, <s> and </s>, byte
 * tokens <0xNN> typed BYTE), so that the result can be compared with that
 * tool's file tensor by tensor (tests/check_llama2c.c). Where the two
 * differ it is on purpose: the context length is the checkpoint's own
 * (llama.cpp's tool writes its default of 2048), and a classifier shared
 * with the embeddings is written once (the head is tied; llama.cpp's tool
 * writes a copy as output.weight).
 */
#ifndef LOGITLAB_LLAMA2C_H
#define LOGITLAB_LLAMA2C_H

#include <stddef.h>

#include "base/err.h"

#define LLAMA2C_MAX_BYTES ((size_t)1 << 31) /* a checkpoint above 2 GiB is refused */

/* Reads the checkpoint ckpt and the tokenizer tok and writes out, a GGUF
 * named name (general.name). Every fault is one line naming its file
 * ("x.bin: 1056540 bytes, but a checkpoint of dim 64, ... needs 1056544").
 * Nothing is left at out on failure. */
int llama2c_convert(const char *ckpt, const char *tok, const char *name, const char *out, int force,
                    struct err *e);

/* The same on bytes in memory, into *gguf (malloc'ed) and *len: the tests
 * use it. ckpt_name and tok_name are what messages call the inputs. */
int llama2c_to_mem(const char *ckpt_name, const unsigned char *ckpt, size_t ckpt_len,
                   const char *tok_name, const unsigned char *tok, size_t tok_len, const char *name,
                   unsigned char **gguf, size_t *len, struct err *e);

#endif
