/* gguf_llama.h - a GGUF file as a Llama-family model: its hyperparameters
 * and tensors as the struct llama_model of model/llama.h, its tokenizer
 * metadata as the struct tok_spec of gguf/tokenizer.h.
 *
 * Everything the forward pass and the tokenizer will trust is checked here,
 * each fault refused in one line naming the file: the architecture (one of
 * gguf/arch.def's), every hyperparameter's presence and range, every tensor's presence,
 * shape (from the hyperparameters) and type (norms F32), a tensor the model
 * would not use, the vocabulary's size against the embedding and the head,
 * the special token ids against the vocabulary.
 *
 * Weights are not copied: the model points into the file's mapping, which
 * must outlive it. What the tables need beyond the file (the layers, the
 * token strings as (pointer, length) pairs, scores and types converted from
 * the file's arrays) is owned by struct gguf_llama.
 */
#ifndef LOGITLAB_GGUF_LLAMA_H
#define LOGITLAB_GGUF_LLAMA_H

#include <stdint.h>

#include "base/err.h"
#include "gguf/arch.h"
#include "gguf/gguf.h"
#include "gguf/tokenizer.h"
#include "model/llama.h"

#define GGUF_LLAMA_WARNING 512

struct gguf_llama {
    struct llama_model model;
    const struct arch_info *arch; /* its architecture (gguf/arch.def); NULL: a vocabulary only */
    struct tok_spec tok;
    struct gguf_str name;          /* general.name, or len 0 */
    struct gguf_str chat_template; /* tokenizer.chat_template, or len 0 */
    int has_chat_template;
    /* How the rotary angles are scaled, for display: "none", "llama3
     * (rope_freqs.weight)", "llama3", "linear". */
    const char *rope_scaling;
    /* Optional metadata that was left out: the first such key's line
     * ("x.gguf: tokenizer.ggml.add_bos_token has type string: ignored"),
     * and how many there were (0: none, warning empty). */
    char warning[GGUF_LLAMA_WARNING];
    int n_warnings;
    /* owned storage behind model and tok */
    struct llama_layer *layers;
    float *rope_divisors; /* when the metadata asks for linear scaling */
    struct tok_str *text, *merges;
    float *scores;
    int32_t *types;
    int extra[TOKX_N]; /* tok.extra */
};

/* Reads g (which must outlive the result) as a llama model. Returns NULL
 * with e on failure ("x.gguf: architecture 'qwen2' is not supported
 * (logitlab runs llama)", "x.gguf: tensor 'blk.3.ffn_up.weight' is
 * missing", ...). */
struct gguf_llama *gguf_llama_new(const struct gguf *g, struct err *e);

/* Reads only g's tokenizer metadata (tokenizer.ggml.*, general.name), as
 * llama.cpp's vocabulary loader does: any general.architecture, no
 * hyperparameters, no tensors. For a vocabulary-only file (llama.cpp's
 * models/ggml-vocab-*.gguf) or a model of an architecture logitlab does not
 * run; the model part of the result is left empty. */
struct gguf_llama *gguf_llama_vocab_new(const struct gguf *g, struct err *e);

void gguf_llama_free(struct gguf_llama *L);

#endif
