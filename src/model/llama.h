/* llama.h - the transformer body of a Llama-family model on the CPU, from
 * the token ids to the last hidden vector: embedding lookup, per layer
 * RMSNorm, Q/K/V, rotary embeddings (with Llama 3.1's frequency scaling),
 * grouped-query attention over a KV cache, SwiGLU feed-forward. What comes
 * out is the residual stream of the last position before the final RMSNorm:
 * the h of logits = W . RMSNorm(h) that the lessons teach; the final norm
 * and the LM head are the backend's (backend/backend.h, model/model.h).
 *
 * Weights stay where they are (a memory-mapped GGUF file) in their stored
 * type and are dequantized inside the dot products (model/quant.h).
 * gguf/gguf_llama.c fills struct llama_model from a file's metadata.
 */
#ifndef LOGITLAB_LLAMA_H
#define LOGITLAB_LLAMA_H

#include <stdint.h>

#include "base/err.h"

#define LLAMA_MAX_LAYERS 256
#define LLAMA_MAX_EMBD   16384
#define LLAMA_MAX_HEADS  256

/* A stored matrix: rows of cols values of type (quant.h), row-major, as
 * ggml's ne[1] x ne[0]; a vector is one row. */
struct qtensor {
    const void *data;
    int type;
    int64_t rows, cols;
};

/* What an architecture's forward pass does beside a Llama's: its switches
 * (gguf/arch.def sets them per architecture). */
enum {
    LLAMA_SW_QKV_BIAS = 1,  /* Q, K and V add a bias after the product (Qwen 2) */
    LLAMA_SW_ROPE_NEOX = 2, /* the rotary pairs are (x[i], x[i + head_dim / 2]) */
    LLAMA_SW_QK_NORM = 4,   /* each head of Q and K RMS-normed before the turn (Qwen 3) */
    /* The file's, not the pass's: one tensor holds several matrices, which
     * the loader hands the pass as row ranges of it (Phi-3). */
    LLAMA_SW_FUSED_QKV = 8,   /* attn_qkv: Q's rows, then K's, then V's (or the three apart) */
    LLAMA_SW_FUSED_UP = 16,   /* ffn_up: the gate's rows, then the up's; no ffn_gate */
    LLAMA_SW_EMBD_SCALE = 32, /* the embedding rows times sqrt(n_embd) (Gemma) */
    LLAMA_SW_POST_NORMS = 64, /* attention's and the FFN's outputs RMS-normed before they join
                               * the stream (Gemma 2, 3: post_attention_norm, post_ffw_norm) */
    LLAMA_SW_GELU = 128,      /* the gate through GELU's tanh form, not SiLU (Gemma) */
    /* The file's again: its attention.sliding_window applies (Gemma 3), where
     * llama.cpp ignores the key for the other architectures. */
    LLAMA_SW_SWA = 256,
    /* Soft-capping (Gemma 2): each attention score s becomes
     * attn_softcap * tanh(s / attn_softcap) before the softmax, and each
     * logit of the head final_softcap * tanh(z / final_softcap) (the head
     * is not the pass's: the source hands final_softcap to it, model.h). */
    LLAMA_SW_SOFTCAP = 512,
};
#define LLAMA_SW_ALL                                                                               \
    (LLAMA_SW_QKV_BIAS | LLAMA_SW_ROPE_NEOX | LLAMA_SW_QK_NORM | LLAMA_SW_FUSED_QKV |              \
     LLAMA_SW_FUSED_UP | LLAMA_SW_EMBD_SCALE | LLAMA_SW_POST_NORMS | LLAMA_SW_GELU |               \
     LLAMA_SW_SWA | LLAMA_SW_SOFTCAP)

struct llama_hparams {
    unsigned switches; /* LLAMA_SW_* */
    int n_layer, n_embd, n_head, n_head_kv, n_ff, n_vocab;
    int head_dim; /* n_embd / n_head, unless the file says (Qwen 3: wider) */
    /* The leading values of each head that the rotary embedding turns
     * (rope.dimension_count): head_dim, or fewer (Phi-4-mini: 96 of 128);
     * the others pass unturned, as ggml's rope leaves them. 0: head_dim. */
    int n_rot;
    int n_ctx_train; /* the context it was trained for */
    float rms_eps;   /* llama.attention.layer_norm_rms_epsilon */
    float rope_base; /* llama.rope.freq_base (10000 unless given) */
    /* Llama 3.1's rope scaling (rope_type "llama3"): factor 0 means none. */
    float rope_factor, rope_low_freq, rope_high_freq;
    /* The context it was first trained at (rope.scaling.original_context_length):
     * Llama 3.1's formula's, and the bound of Phi-3's long factors. */
    int rope_orig_ctx;
    /* What multiplies each rotated value (ggml's attn_factor, Phi-3's
     * rope.scaling.attn_factor: sqrt(1 + ln(ctx / orig) / ln(orig))); 0: 1. */
    float rope_attn_factor;
    /* Sliding-window attention (Gemma 3): layer l slides when l % swa_pattern
     * < swa_pattern - 1 (every sixth is global), and a sliding layer's
     * position p sees only the n_swa positions up to p, and turns its pairs
     * by rope_base_swa with no scaling. n_swa 0: no layer slides. */
    int n_swa, swa_pattern;
    float rope_base_swa;
    /* What scales the scores q . k; 0: 1 / sqrt(head_dim). */
    float attn_scale;
    /* With LLAMA_SW_SOFTCAP, both above 0 (Gemma 2's: 50 and 30). */
    float attn_softcap, final_softcap;
};

struct llama_layer {
    struct qtensor attn_norm; /* n_embd, F32 */
    struct qtensor wq, wk, wv, wo;
    struct qtensor bq, bk, bv;     /* with LLAMA_SW_QKV_BIAS: F32, one per row of wq, wk, wv */
    struct qtensor q_norm, k_norm; /* with LLAMA_SW_QK_NORM: F32 gains, head_dim each */
    struct qtensor ffn_norm;       /* n_embd, F32 */
    struct qtensor attn_post_norm, ffn_post_norm; /* with LLAMA_SW_POST_NORMS: n_embd, F32 */
    struct qtensor w_gate, w_down, w_up;
};

struct llama_model {
    struct llama_hparams hp;
    struct qtensor tok_embd;    /* n_vocab x n_embd */
    struct qtensor output_norm; /* n_embd, F32 */
    struct qtensor output;      /* n_vocab x n_embd: output.weight, or tok_embd when tied */
    int tied;                   /* 1 when the head is the token embeddings */
    struct llama_layer *layers; /* n_layer (owned by whoever filled the model) */
    /* rope_freqs.weight when the file has it (Llama 3.1 / 3.2): head_dim / 2
     * divisors of the rotary angles, one per pair; NULL otherwise (then the
     * rope_* hparams, when rope_factor is set, give the same divisors). */
    const float *rope_freqs;
    /* Phi-3's rope_factors_long.weight and rope_factors_short.weight
     * (head_dim / 2 divisors each, or NULL): a context of more than
     * rope_orig_ctx positions turns by the long ones, any other by the
     * short ones, as llama.cpp decides (llama_rope_factors). */
    const float *rope_long, *rope_short;
};

/* A context: a KV cache of up to n_ctx positions and the buffers of a pass. */
struct llama_ctx;

/* Positions one pass holds: a longer prompt runs in passes of this many
 * (each reads every weight matrix once), which bounds the work areas. */
#define LLAMA_BATCH 128

/* Where a context's time went, summed over its evals (clock.h's clock). */
struct llama_prof {
    double matmul_ms;    /* the weight products (Q K V, output, gate, up, down) */
    double attention_ms; /* scores, softmax, values over the cache */
    double total_ms;     /* all of llama_eval (the rest: norms, embedding, rope tables) */
    long evals, tokens;
};

/* Makes a context for m (which must outlive it) of n_ctx positions, running
 * on threads threads (0: every CPU the process may use, or one for a model
 * whose layers hold under 4 Mi weights; a pool of them waits between evals).
 * Checks m first: hparams in range and consistent, every layer tensor
 * present with its shape (rows are output features) in a type quant.h
 * reads, the norms F32. The KV cache is float: n_layer x n_ctx x 2 x
 * n_head_kv x head_dim x 4 bytes (64 KiB a position for Llama 3.2 1B),
 * allocated at once, resident as positions are used. Returns NULL with e on
 * failure (a tensor named as in GGUF, "blk.3.attn_q"; out of memory names
 * the size). */
struct llama_ctx *llama_ctx_new(const struct llama_model *m, int n_ctx, int threads, struct err *e);
void llama_ctx_free(struct llama_ctx *c);

/* Positions held in the cache. */
int llama_ctx_len(const struct llama_ctx *c);
/* The threads c runs on (what threads = 0 chose). */
int llama_ctx_threads(const struct llama_ctx *c);

/* Forgets every position from n on (stepping back rewinds the cache); an
 * n outside 0..len changes nothing. */
void llama_ctx_rewind(struct llama_ctx *c, int n);

/* Runs tokens[0..n) at the positions after those held (a prompt as one
 * batch: each weight matrix is read once per LLAMA_BATCH positions), and
 * writes the last one's hidden vector (n_embd floats, before the final
 * norm) to h. The same bits whether the tokens come in one call, in pieces
 * or one at a time, and whatever the number of threads. Fails, changing
 * nothing, when the cache would overflow or an id is outside the
 * vocabulary. */
int llama_eval(struct llama_ctx *c, const int *tokens, int n, float *h, struct err *e);

/* The final RMSNorm with the model's gain: out = g * h / sqrt(mean(h^2) + eps).
 * output_norm must be F32 (llama_ctx_new checks it). */
void llama_final_norm(const struct llama_model *m, const float *h, float *out);

/* Called by llama_eval on its own thread after each layer of each pass,
 * done of total (layers times passes), so that a long prefill can show
 * progress; NULL (the default) for none. */
typedef void (*llama_progress_fn)(void *arg, int done, int total);
void llama_ctx_set_progress(struct llama_ctx *c, llama_progress_fn fn, void *arg);

/* The time spent so far (since the context was made or last reset). */
void llama_ctx_prof(const struct llama_ctx *c, struct llama_prof *p);
void llama_ctx_prof_reset(struct llama_ctx *c);

/* How many leading values of each head turn: hp->n_rot, or the whole head
 * when it is 0. */
int llama_rot_dims(const struct llama_hparams *hp);

/* Llama 3.1's rope scaling from the hparams alone (rope_type "llama3"):
 * div[i], i < n_rot / 2 (llama_rot_dims), divides pair i's angle. With
 * wavelength w = 2 pi / base^(-2i/n_rot): w < orig / high -> 1; w > orig / low ->
 * factor; between, 1 / ((1 - s) / factor + s) with s = (orig / w - low) /
 * (high - low). All 1 when rope_factor is 0. What llama.cpp's converter
 * writes as rope_freqs.weight. */
void llama_rope_divisors(const struct llama_hparams *hp, double *div);

/* Whether layer l attends through a sliding window (hp's n_swa). */
int llama_layer_slides(const struct llama_hparams *hp, int l);

/* Which of m's long and short rotary factors a context of n_ctx positions
 * turns by: the long ones when n_ctx exceeds the original context, else the
 * short ones (llama.cpp's get_rope_factors). NULL when m has neither; *which
 * (when not NULL) is set to "long", "short" or NULL. */
const float *llama_rope_factors(const struct llama_model *m, int n_ctx, const char **which);

#endif
