/* llama_ref.h - tiny Llama-family models built in memory from a seeded
 * generator, and the exact reference of their forward pass in double
 * (llama_ref.c), for the tests of model/llama.c (check_llama.c). The
 * specification it computes is written out at the top of check_llama.c. */
#ifndef LOGITLAB_LLAMA_REF_H
#define LOGITLAB_LLAMA_REF_H

#include <stdint.h>

#include "model/llama.h"

#define MAX_LAYERS 4

struct shape {
    int n_layer, n_embd, n_head, n_head_kv, n_ff, n_vocab;
    int wtype;         /* the matrices' type (the norms and biases are F32) */
    unsigned switches; /* LLAMA_SW_*: an architecture's differences */
    int head_dim;      /* 0: n_embd / n_head */
    int rot;           /* the rotary values of a head (hparams' n_rot); 0: all of it */
};

/* Each tensor: the qtensor the pass reads, and the float values the
 * reference reads (the stored values, dequantized when quantized). */
struct tiny {
    struct llama_model m;
    struct llama_layer layer[MAX_LAYERS];
    const float *val[MAX_LAYERS][9];       /* attn_norm wq wk wv wo ffn_norm gate down up */
    const float *bias[MAX_LAYERS][3];      /* bq bk bv, with LLAMA_SW_QKV_BIAS */
    const float *qk_norm[MAX_LAYERS][2];   /* q_norm k_norm, with LLAMA_SW_QK_NORM */
    const float *post_norm[MAX_LAYERS][2]; /* attention's, the FFN's, with LLAMA_SW_POST_NORMS */
    const float *emb, *onorm;
    /* The context the reference assumes when it picks Phi-3's long or short
     * rotary factors (64, as the tests' contexts). */
    int ctx;
    void *mem[MAX_LAYERS * 12 * 2 + 8];
    int nmem;
};

uint64_t rng_next(uint64_t *s);
void tiny_build(struct tiny *t, const struct shape *s, uint64_t seed);
void tiny_free(struct tiny *t);

/* What the reference computes: the specification, or a mistake that the
 * tolerance must catch. */
enum ref_variant {
    REF_SPEC,
    REF_OTHER_PAIRS,    /* the rotary pairs of the other mode: (i, i + hd/2) for a Llama */
    REF_KV_MODULO,      /* head h reads KV head h % n_head_kv */
    REF_NO_BIAS,        /* Q, K and V without their biases */
    REF_NO_QK_NORM,     /* Q and K without their per-head norms */
    REF_OTHER_FACTORS,  /* Phi-3's long factors where the short apply, and the other way */
    REF_NO_ATTN_FACTOR, /* the rotated values not scaled by the attention factor */
    REF_NO_WINDOW,      /* every layer attending to every position */
    REF_ONE_BASE,       /* the sliding layers turning by the global layers' base */
    REF_SILU,           /* the gate through SiLU where GELU is switched on */
    REF_NO_POST_NORMS,  /* the blocks' outputs added without their norms */
    REF_NO_EMBD_SCALE,  /* the embedding rows as stored */
    REF_WHOLE_HEAD,     /* every value of a head turning where n_rot says fewer */
    REF_NO_SOFTCAP,     /* the attention scores not soft-capped */
};

/* out = x / sqrt(mean(x^2) + eps) * g. */
void ref_norm(const double *x, const float *g, int d, double eps, double *out);

/* h = the residual after the last layer at position n - 1. */
void ref_eval(const struct tiny *t, const int *tok, int n, enum ref_variant var, double *h);

#endif
