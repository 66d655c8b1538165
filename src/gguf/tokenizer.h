/* tokenizer.h - a model's own tokenizer, from its GGUF metadata: text to
 * token ids and ids back to bytes. The ids are llama.cpp's (commit
 * de3ff815, tests/oracle), on any bytes; the one text llama.cpp has no ids
 * for is said below.
 *
 * Three kinds, as tokenizer.ggml.model names them:
 *   "gpt2"   byte-level BPE with merges (Llama 3, GPT-2, StarCoder, Qwen2):
 *            the text is first split by the pre-tokenizer's expressions
 *            (tokenizer.ggml.pre, one table in tokenizer_bpe.c of llama.cpp's
 *            names: "llama-bpe", "qwen2", "starcoder", "gpt-2", ...; none at
 *            all is llama.cpp's "default"; any other is refused), then each
 *            piece's bytes are merged pair by pair in the order of the merges
 *            list; a piece that is a whole token stays whole where llama.cpp
 *            says so (llama-bpe's ignore_merges). (tokenizer_bpe.c)
 *   "llama"  SentencePiece-style BPE with scores and byte fallback (Llama 2,
 *            Mistral, TinyLlama, Phi-3): spaces become U+2581, a space goes
 *            in front (add_space_prefix) of the text and after each special
 *            token, the best-scoring pair that is a token merges first, and
 *            what no token covers becomes its <0xNN> byte tokens.
 *            (tokenizer_spm.c)
 *   "gemma4" Gemma 4's BPE with merges over characters, not bytes: every
 *            space becomes U+2581, the text is cut only into runs of line
 *            breaks and runs of anything else (llama.cpp's pre-tokenizer
 *            "gemma4", which it takes for this kind whatever
 *            tokenizer.ggml.pre says), a run of line breaks that is a
 *            token is that token, each piece's characters merge in the
 *            order of the merges list (their texts as stored, no GPT-2
 *            spelling), and what no token covers becomes its <0xNN> byte
 *            tokens, a byte without one giving no id. (tokenizer_gemma4.c)
 * Special tokens (types CONTROL and UNKNOWN, such as <|eot_id|> or <s>) are
 * matched in the text only when asked (--special); otherwise their text is
 * ordinary text. USER_DEFINED tokens are always matched, as in llama.cpp
 * and Hugging Face (they are words the model's makers added to the
 * vocabulary). The text is cut as llama.cpp cuts it: each special token in
 * turn, the longest first (ties to the lower id), takes every occurrence,
 * left to right, that lies wholly in text no token before it took (so
 * with "bcd" and "ab", "abcd" is "a" and bcd; tokenizer_special.c finds
 * the same cut in one scan). A token llama.cpp's loader takes
 * for a control token by its text (<|endoftext|>, </s>, <|fim_prefix|>, ...)
 * is one here too, whatever the file's type says, and the ends of
 * generation are llama.cpp's (tokenizer_attr.c).
 *
 * A byte-level vocabulary may lack a byte (StarCoder has no token for 0xC0,
 * 0xC1 or 0xF5 to 0xFF, which UTF-8 never uses; Falcon none for some
 * control characters): that byte, where it is left unmerged, gives no id,
 * as in llama.cpp. Token texts are looked up as llama.cpp looks them up, in
 * GPT-2's byte spelling ("Ġ" for a space): a token whose text is not so
 * spelled (a user-defined run of spaces in GPT-NeoX, a raw "🇸" beside
 * "ðŁĩ¸" in Command-R) is never a merge's result or a byte's token, only a
 * special token's match.
 *
 * Text need not be valid UTF-8; it is read as llama.cpp reads it. BPE
 * decodes it first: a lead byte with the continuation bytes it announces is
 * the code point they spell, unchecked (an overlong form is its character,
 * a surrogate stays), and every other byte is a U+FFFD; a four-byte form
 * past U+10FFFF, on which llama.cpp aborts, is U+FFFDs here too, one a
 * byte. SPM cuts its first symbols by what each first byte announces (0xFF:
 * four bytes, whatever they are) and gives a symbol that is no token its
 * byte tokens. So on valid UTF-8 the pieces of the ids read back the text
 * exactly (for SPM, with the spaces it puts in front, and a U+2581 in the
 * text read as a space; for BPE, when every byte has a token); on other
 * text BPE's read back its U+FFFDs, and SPM's every byte (a U+2581 cut into
 * byte tokens as its three bytes). Gemma 4 reads the text as BPE does, a
 * space a U+2581, and cuts its symbols as SPM does; its pieces are SPM's.
 *
 * Encoding is O(n log n) in the text (a heap of candidate pairs), and the
 * special tokens are found in one scan of it, O(n + c log n) for c places
 * where one begins (at most n times the longest chain of special tokens
 * each a prefix of the next); up to TOK_MAX_TEXT bytes at once.
 *
 * Strings in a spec are (pointer, length), not terminated: they point into a
 * mapped file. The tokenizer copies what it keeps.
 */
#ifndef LOGITLAB_TOKENIZER_H
#define LOGITLAB_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define TOK_MAX_TEXT   (1 << 20) /* bytes of text encoded at once */
#define TOK_MAX_TOKENS (1 << 22) /* a vocabulary's tokens: refused above, about 4 million */

enum tok_kind { TOK_BPE, TOK_SPM, TOK_GEMMA4 };

/* tokenizer.ggml.token_type values (llama.cpp's). */
enum tok_type {
    TOKT_UNDEFINED = 0,
    TOKT_NORMAL = 1,
    TOKT_UNKNOWN = 2,
    TOKT_CONTROL = 3,
    TOKT_USER_DEFINED = 4,
    TOKT_UNUSED = 5,
    TOKT_BYTE = 6,
};

struct tok_str {
    const char *s;
    size_t len;
};

/* Ids the metadata may name beyond BOS, EOS, EOT, unknown and padding:
 * they decide which tokens end a generation and which llama.cpp looks for
 * by their text (tokenizer_attr.c). tokenizer.ggml.eom_token_id,
 * fim_pre_token_id (or the older prefix_token_id), fim_suf (suffix),
 * fim_mid (middle), fim_pad, fim_rep, fim_sep. */
enum tok_extra {
    TOKX_EOM,
    TOKX_FIM_PRE,
    TOKX_FIM_SUF,
    TOKX_FIM_MID,
    TOKX_FIM_PAD,
    TOKX_FIM_REP,
    TOKX_FIM_SEP,
    TOKX_N,
};

/* What the metadata gives; every array has n entries (merges n_merges). */
struct tok_spec {
    enum tok_kind kind;
    struct tok_str pre;         /* tokenizer.ggml.pre ("llama-bpe"), or len 0 */
    int n;                      /* tokens */
    const struct tok_str *text; /* tokenizer.ggml.tokens, as stored (Ġ for a space in BPE) */
    const float *scores;        /* tokenizer.ggml.scores, or NULL */
    const int32_t *types;       /* tokenizer.ggml.token_type, or NULL (all normal) */
    int n_merges;
    const struct tok_str *merges; /* tokenizer.ggml.merges: "Ġ t" (two tokens, one space) */
    int bos, eos, eot, unk, pad;  /* ids, -1 when the metadata has none */
    const int *extra;             /* TOKX_N ids, -1 each when absent; NULL: all absent */
    /* tokenizer.ggml.add_bos_token, or -1 when the file does not say:
     * then llama.cpp's default, 1 for SPM and by the pre-tokenizer for BPE
     * (1 for llama-bpe and its aliases, 0 for the others); a default of 1
     * without a BOS id is 0. Gemma 4 is always 1 (with a BOS id), as
     * llama.cpp turns a false in the file into true for it. */
    int add_bos;
    int add_space_prefix; /* SPM: tokenizer.ggml.add_space_prefix (default 1) */
};

struct tokenizer;

/* Builds the tokenizer of spec s; path names the file in messages ("x.gguf:
 * merge 17 'a b' names a token that is not in the vocabulary"). Returns NULL
 * with e on failure: an unknown kind or pre-tokenizer (refused before
 * anything else is looked at), a merge naming no token, SPM's token for a
 * byte missing, two tokens of one text (llama.cpp refuses those too). */
struct tokenizer *tokenizer_new(const struct tok_spec *s, const char *path, struct err *e);

/* Whether logitlab has the tokenizer of kind with pre-tokenizer pre (len 0:
 * none); 0, or -1 with e ("x.gguf: the pre-tokenizer 'qwen3' is not
 * supported (...)"). SPM and Gemma 4 take any pre, as llama.cpp ignores
 * it for them. */
int tokenizer_check_pre(enum tok_kind kind, const struct tok_str *pre, const char *path,
                        struct err *e);
void tokenizer_free(struct tokenizer *t);

/* Encodes text (len bytes; need not be valid UTF-8: see above) into ids
 * (room for max: never more than 3 per byte of text, as an invalid byte's
 * U+FFFD or a space's U+2581 is 3 bytes, plus one for each of SPM's spaces
 * in front and BOS), BOS first when add_bos, special tokens' text matched
 * as those tokens only when special. *n gets the count (0 on failure).
 * Fails when the ids do not fit in max, naming the count, when len passes
 * TOK_MAX_TEXT, and when add_bos is set for a model without a BOS token. */
int tokenizer_encode(const struct tokenizer *t, const char *text, size_t len, int add_bos,
                     int special, int *ids, int max, int *n, struct err *e);

/* The raw bytes token id stands for (a space for Ġ or U+2581, the byte of
 * <0xNN>, a control token's text as written), into buf (size n, not
 * terminated). Returns the length it needs (like snprintf, without the
 * terminator); 0 for an id out of range. */
size_t tokenizer_piece(const struct tokenizer *t, int id, char *buf, size_t n);

/* Token count, the type of id (enum tok_type), and the spec's special ids. */
int tokenizer_count(const struct tokenizer *t);
int tokenizer_type(const struct tokenizer *t, int id);
int tokenizer_bos(const struct tokenizer *t);
int tokenizer_add_bos(const struct tokenizer *t);

/* The tokens that end a generation, as llama.cpp's loader lists them
 * (tokenizer_attr.c): up to max of them into ids, ascending; returns how
 * many there are (which may be more than max). */
int tokenizer_eog(const struct tokenizer *t, int *ids, int max);

#endif
