/* tokdata.h - the real Llama 3 and Llama 2 tokenizers' data, from data/, as
 * the struct tok_spec that a GGUF file's metadata would give.
 *
 * The tests' generated models (gen_model) write these into their GGUF
 * metadata, and the tokenizer tests build tokenizers from them directly.
 * Spellings are those of real GGUF files:
 *   Llama 3 ("gpt2"): token strings in GPT-2's byte alphabet ("ĠParis"),
 *     merges as "Ġ t" (two token strings, one space), ids 128000..128255
 *     type CONTROL, the others NORMAL; bos 128000, eos 128001, eot 128009,
 *     pre "llama-bpe", add_bos 1; no scores.
 *   Llama 2 ("llama"): 32,000 pieces with U+2581 for a space ("▁the"),
 *     <unk> (0, UNKNOWN), <s> (1, CONTROL), </s> (2, CONTROL), <0x00>..<0xFF>
 *     (3..258, BYTE), the rest NORMAL; scores as llama.cpp's converter writes
 *     them (see data/README.md); bos 1, eos 2, unk 0, add_bos 1,
 *     add_space_prefix 1; no merges.
 * Every string in spec points into storage the struct owns (NUL-terminated
 * there as well, for convenience); tokdata_free releases it.
 */
#ifndef LOGITLAB_TOKDATA_H
#define LOGITLAB_TOKDATA_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "gguf/tokenizer.h"

struct tokdata {
    struct tok_spec spec; /* what a GGUF file's tokenizer metadata holds */
    /* owned storage behind spec's pointers */
    struct tok_str *text;
    struct tok_str *merges;
    float *scores;
    int32_t *types;
    char *strings;
    char *extra; /* the strings of tokens added after the data's (gen_model's) */
};

/* Fills d from data_dir/llama3-vocab.bin and data_dir/llama3-merges.bin
 * (data_dir is "data" from the top of the tree). On failure d is empty (safe
 * to free) and e names the file and the fault. */
int tokdata_llama3(struct tokdata *d, const char *data_dir, struct err *e);

/* Fills d from data_dir/llama2-vocab.bin, the same way. */
int tokdata_llama2(struct tokdata *d, const char *data_dir, struct err *e);

/* GPT-2's printable spelling of byte b as UTF-8 into out (room for 2):
 * printable Latin-1 bytes stand for themselves, the other 68 are moved to
 * U+0100 and up in byte order (a space, the 33rd, is U+0120 "Ġ"). Returns
 * the length, 1 or 2. */
size_t tokdata_spell_byte(unsigned b, char *out);

/* The text llama.cpp's byte-level BPE tokenizes for the bytes s[0..len)
 * (its unicode_cpts_from_utf8, then each code point back to UTF-8) into out
 * (room for 3 x len): what the pieces of Llama 3's ids read back. A lead
 * byte with the continuation bytes it announces is the code point their bits
 * make, overlong forms and surrogates included (C0 AF is "/"); every other
 * byte is a U+FFFD (EF BF BD), and so is the lead byte of a code point past
 * U+10FFFF, where llama.cpp throws instead. Returns the length. Written
 * apart from src/gguf/tokenizer_bpe.c, as the tests' reference. */
size_t tokdata_llama_text(const char *s, size_t len, char *out);

/* Frees what d owns and empties it; d may be empty. */
void tokdata_free(struct tokdata *d);

#endif
