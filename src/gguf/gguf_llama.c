/* gguf_llama.c - a GGUF file's metadata and tensors as a llama model and its
 * tokenizer's spec (the tokenizer's keys: gguf_vocab.c), every value
 * checked (gguf_llama.h). The key and tensor names are llama.cpp's: the
 * architecture's prefix (gguf/arch.def) and a suffix ("llama.block_count"),
 * "blk.N.attn_q.weight", ... */
#include "gguf/gguf_llama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf/arch.h"
#include "gguf/gguf_llama_int.h"
#include "model/quant.h"

#define MAX_FF  (1 << 20) /* feed-forward width (Llama 3.1 405B: 53,248) */
#define MAX_CTX (1 << 24) /* trained context (Llama 3.1: 131,072) */

/* The architecture's key of suffix ("llama.block_count") in buf. */
static const char *akey(const struct ld *d, const char *suffix, char *buf, size_t n)
{
    snprintf(buf, n, "%s.%s", d->arch->name, suffix);
    return buf;
}

/* The architecture's u32 key of suffix as an int in lo..hi: 1, 0 when
 * absent (*v = dflt; an error when required), -1. */
static int get_int(struct ld *d, const char *suffix, int required, int lo, int hi, int dflt, int *v)
{
    char key[GGUF_MAX_NAME + 1];
    akey(d, suffix, key, sizeof key);
    uint32_t u;
    int got = required || gl_optional_fits(d, key, K_INT) ? gguf_get_u32(d->g, key, &u, d->e) : 0;
    if (got < 0)
        return -1;
    if (!got) {
        if (required)
            return err_set(d->e, ERR_USAGE, "%s: %s is missing", d->g->path, key);
        *v = dflt;
        return 0;
    }
    if (u < (uint32_t)lo || u > (uint32_t)hi)
        return err_set(d->e, ERR_USAGE, "%s: %s is %u, outside %d to %d", d->g->path, key,
                       (unsigned)u, lo, hi);
    *v = (int)u;
    return 1;
}

/* The architecture's float key of suffix, finite and above 0 (and below
 * hi): 1, 0 (*v = dflt), -1. */
static int get_pos(struct ld *d, const char *suffix, int required, float hi, float dflt, float *v)
{
    char key[GGUF_MAX_NAME + 1];
    akey(d, suffix, key, sizeof key);
    int got = required || gl_optional_fits(d, key, K_FLOAT) ? gguf_get_f32(d->g, key, v, d->e) : 0;
    if (got < 0)
        return -1;
    if (!got) {
        if (required)
            return err_set(d->e, ERR_USAGE, "%s: %s is missing", d->g->path, key);
        *v = dflt;
        return 0;
    }
    if (!(*v > 0.0f) || !(*v < hi))
        return err_set(d->e, ERR_USAGE, "%s: %s is %g, outside 0 to %g (both excluded)", d->g->path,
                       key, (double)*v, (double)hi);
    return 1;
}

static int check_arch(struct ld *d)
{
    struct gguf_str a;
    char buf[NAME_SHOWN];
    int got = gguf_get_str(d->g, "general.architecture", &a, d->e);
    if (got < 0)
        return -1;
    if (!got)
        return err_set(d->e, ERR_USAGE, "%s: general.architecture is missing (not a model file?)",
                       d->g->path);
    if (!(d->arch = arch_find(a.s, a.len))) {
        char runs[128];
        arch_list(runs, sizeof runs);
        return err_set(d->e, ERR_USAGE, "%s: architecture '%s' is not supported (logitlab runs %s)",
                       d->g->path, (gguf_escape(a.s, a.len, buf, sizeof buf), buf), runs);
    }
    d->L->arch = d->arch;
    d->L->model.hp.switches = d->arch->switches;
    char key[GGUF_MAX_NAME + 1];
    akey(d, "expert_count", key, sizeof key);
    uint32_t experts;
    got = gl_optional_fits(d, key, K_INT) ? gguf_get_u32(d->g, key, &experts, d->e) : 0;
    if (got < 0)
        return -1;
    if (got && experts > 0)
        return err_set(d->e, ERR_USAGE, "%s: %s is %u: mixture-of-experts models are not supported",
                       d->g->path, key, (unsigned)experts);
    return 0;
}

/* The architecture's key of suffix that, when present, must equal want
 * (the head size). */
static int check_equal(struct ld *d, const char *suffix, int want, const char *what)
{
    int v = want;
    int got = get_int(d, suffix, 0, 0, INT32_MAX, want, &v);
    if (got < 0)
        return -1;
    char key[GGUF_MAX_NAME + 1];
    if (v != want)
        return err_set(d->e, ERR_USAGE, "%s: %s is %d, but %s is %d", d->g->path,
                       akey(d, suffix, key, sizeof key), v, what, want);
    return 0;
}

/* rope.dimension_count: how many leading values of each head turn. A
 * Llama turns them all (llama.cpp refuses any other count for it); the
 * others may turn fewer, as Phi-4-mini turns 96 of 128. The sliding
 * layers' own count (rope.dimension_count_swa) must be the same: the
 * forward pass has one. */
static int load_rot(struct ld *d, const char *hd)
{
    struct llama_hparams *hp = &d->L->model.hp;
    hp->n_rot = hp->head_dim;
    if (d->arch == &ARCHS[ARCH_LLAMA])
        return check_equal(d, "rope.dimension_count", hp->head_dim, hd);
    if (get_int(d, "rope.dimension_count", 0, 2, hp->head_dim, hp->head_dim, &hp->n_rot) < 0)
        return -1;
    if (hp->n_rot % 2 != 0)
        return err_set(d->e, ERR_USAGE,
                       "%s: %s.rope.dimension_count %d is odd (rotary pairs need it even)",
                       d->g->path, d->arch->name, hp->n_rot);
    return check_equal(d, "rope.dimension_count_swa", hp->n_rot,
                       "the rotary count (rope.dimension_count)");
}

static int load_hparams(struct ld *d)
{
    struct llama_hparams *hp = &d->L->model.hp;
    const char *path = d->g->path;
    if (get_int(d, "block_count", 1, 1, LLAMA_MAX_LAYERS, 0, &hp->n_layer) < 0 ||
        get_int(d, "embedding_length", 1, 1, LLAMA_MAX_EMBD, 0, &hp->n_embd) < 0 ||
        get_int(d, "attention.head_count", 1, 1, LLAMA_MAX_HEADS, 0, &hp->n_head) < 0 ||
        get_int(d, "attention.head_count_kv", 0, 1, hp->n_head, hp->n_head, &hp->n_head_kv) < 0 ||
        get_int(d, "feed_forward_length", 1, 1, MAX_FF, 0, &hp->n_ff) < 0 ||
        get_int(d, "context_length", 1, 1, MAX_CTX, 0, &hp->n_ctx_train) < 0 ||
        get_pos(d, "attention.layer_norm_rms_epsilon", 1, 1.0f, 0, &hp->rms_eps) < 0 ||
        get_pos(d, "rope.freq_base", 0, 1e12f, 10000.0f, &hp->rope_base) < 0)
        return -1;
    /* Qwen 3 and Gemma say their head size, wider than the width over the heads. */
    int said = get_int(d, "attention.key_length", 0, 2, LLAMA_MAX_EMBD, 0, &hp->head_dim);
    if (said < 0)
        return -1;
    if (!said && hp->n_embd % hp->n_head != 0)
        return err_set(d->e, ERR_USAGE,
                       "%s: %s.embedding_length %d is not a multiple of "
                       "%s.attention.head_count %d",
                       path, d->arch->name, hp->n_embd, d->arch->name, hp->n_head);
    if (hp->n_head % hp->n_head_kv != 0)
        return err_set(d->e, ERR_USAGE,
                       "%s: %s.attention.head_count %d is not a multiple of "
                       "%s.attention.head_count_kv %d",
                       path, d->arch->name, hp->n_head, d->arch->name, hp->n_head_kv);
    if (!said)
        hp->head_dim = hp->n_embd / hp->n_head;
    if (hp->head_dim % 2 != 0)
        return err_set(d->e, ERR_USAGE, "%s: the head size %d is odd (rotary pairs need it even)",
                       path, hp->head_dim);
    const char *hd = said ? "the head size (attention.key_length)"
                          : "the head size (embedding_length / head_count)";
    if (check_equal(d, "attention.value_length", hp->head_dim, hd) < 0 ||
        check_equal(d, "attention.key_length_swa", hp->head_dim, hd) < 0 ||
        check_equal(d, "attention.value_length_swa", hp->head_dim, hd) < 0)
        return -1;
    return load_rot(d, hd);
}

/* "ggml [a, b]" as a message shows a shape: ne[0] first, as gguf-dump. */
static const char *shape_str(const int64_t *ne, int n, char *buf, size_t size)
{
    size_t k = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? ", " : "", (long long)ne[i]);
    if (k < size)
        snprintf(buf + k, size - k, "]");
    return buf;
}

/* The tensor name, if the file has it (marked as used). */
static const struct gguf_tensor *take(struct ld *d, const char *name)
{
    const struct gguf_tensor *t = gguf_tensor(d->g, name);
    if (t)
        d->used[t - d->g->tensors] = 1;
    return t;
}

/* A scale or a weight that is NaN or infinite would make every logit NaN
 * at the first step, with no word of where it came from: it is refused
 * here, naming the tensor and the row. */
static int check_finite(struct ld *d, const char *name, const struct qtensor *q)
{
    int64_t bad = quant_first_bad_block(q->type, q->data, q->rows * q->cols);
    if (bad < 0)
        return 0;
    const struct qtype_info *i = quant_info(q->type);
    char qn[32];
    int64_t per_row = q->cols / i->block;
    if (i->block == 1)
        return err_set(
            d->e, ERR_USAGE,
            "%s: tensor '%s' (%s) holds a NaN or infinite weight at row %lld, column %lld",
            d->g->path, name, i->name, (long long)(bad / per_row), (long long)(bad % per_row));
    return err_set(d->e, ERR_USAGE,
                   "%s: tensor '%s' (%s) has a NaN or infinite scale in block %lld of row %lld",
                   d->g->path, name, quant_name(q->type, qn, sizeof qn), (long long)(bad % per_row),
                   (long long)(bad / per_row));
}

/* Checks t against the shape [ne0] (ne1 0) or [ne0, ne1] and fills q. */
static int check_tensor(struct ld *d, const struct gguf_tensor *t, const char *name, int64_t ne0,
                        int64_t ne1, struct qtensor *q)
{
    const char *path = d->g->path;
    int64_t want[2] = { ne0, ne1 };
    int nd = ne1 ? 2 : 1;
    if (t->ne[0] != ne0 || t->ne[1] != (ne1 ? ne1 : 1) || t->ne[2] != 1 || t->ne[3] != 1) {
        char a[96], b[64];
        return err_set(d->e, ERR_USAGE, "%s: tensor '%s' has shape %s, expected %s", path, name,
                       shape_str(t->ne, t->n_dims, a, sizeof a), shape_str(want, nd, b, sizeof b));
    }
    if (ne1 == 0 && t->type != QT_F32) {
        char qn[32];
        return err_set(d->e, ERR_USAGE, "%s: tensor '%s' has type %s (%s must be F32)", path, name,
                       quant_name(t->type, qn, sizeof qn), strstr(name, "norm") ? "a norm" : "it");
    }
    /* The forward pass reads floats and halves straight from the mapping. */
    if ((uintptr_t)t->data % 4 != 0)
        return err_set(d->e, ERR_USAGE,
                       "%s: tensor '%s' is not 4-byte aligned in memory (general.alignment %u)",
                       path, name, (unsigned)d->g->alignment);
    q->data = t->data;
    q->type = t->type;
    q->rows = ne1 ? ne1 : 1;
    q->cols = ne0;
    return check_finite(d, name, q);
}

/* A tensor the model needs, of shape [ne0] (ne1 0) or [ne0, ne1]. */
static int need(struct ld *d, const char *name, int64_t ne0, int64_t ne1, struct qtensor *q)
{
    const struct gguf_tensor *t = take(d, name);
    if (!t)
        return err_set(d->e, ERR_USAGE, "%s: tensor '%s' is missing", d->g->path, name);
    return check_tensor(d, t, name, ne0, ne1, q);
}

/* token_embd.weight or output.weight: n_embd wide, one row per token. */
static int need_vocab_rows(struct ld *d, const char *name, struct qtensor *q)
{
    const struct llama_hparams *hp = &d->L->model.hp;
    const struct gguf_tensor *t = take(d, name);
    if (!t)
        return err_set(d->e, ERR_USAGE, "%s: tensor '%s' is missing", d->g->path, name);
    if (t->n_dims == 2 && t->ne[0] == hp->n_embd && t->ne[1] != hp->n_vocab)
        return err_set(d->e, ERR_USAGE,
                       "%s: the vocabulary has %d tokens (tokenizer.ggml.tokens) but '%s' has "
                       "%lld rows",
                       d->g->path, hp->n_vocab, name, (long long)t->ne[1]);
    return check_tensor(d, t, name, hp->n_embd, hp->n_vocab, q);
}

/* Q, K and V's biases, for an architecture that adds them (Qwen 2). */
static int load_biases(struct ld *d, int i, struct llama_layer *l)
{
    const struct llama_hparams *hp = &d->L->model.hp;
    if (!(hp->switches & LLAMA_SW_QKV_BIAS))
        return 0;
    int64_t kv = (int64_t)hp->n_head_kv * hp->head_dim;
    const struct {
        const char *part;
        int64_t n;
        struct qtensor *q;
    } parts[] = { { "attn_q", (int64_t)hp->n_head * hp->head_dim, &l->bq },
                  { "attn_k", kv, &l->bk },
                  { "attn_v", kv, &l->bv } };
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        char name[GGUF_MAX_NAME + 1];
        snprintf(name, sizeof name, "blk.%d.%s.bias", i, parts[k].part);
        if (need(d, name, parts[k].n, 0, parts[k].q) < 0)
            return -1;
    }
    return 0;
}

/* The optional norms of a layer, each a row of gains [n]: per table row,
 * the switch that asks for the pair, its two parts and where they go. */
static int load_norms(struct ld *d, int i, struct llama_layer *l)
{
    const struct llama_hparams *hp = &d->L->model.hp;
    const struct {
        unsigned sw;
        const char *part[2];
        int n;
        struct qtensor *q[2];
    } N[] = {
        /* each head of Q and K (Qwen 3, Gemma 3) */
        { LLAMA_SW_QK_NORM,
          { "attn_q_norm", "attn_k_norm" },
          hp->head_dim,
          { &l->q_norm, &l->k_norm } },
        /* attention's and the FFN's outputs (Gemma 3) */
        { LLAMA_SW_POST_NORMS,
          { "post_attention_norm", "post_ffw_norm" },
          hp->n_embd,
          { &l->attn_post_norm, &l->ffn_post_norm } },
    };
    for (size_t k = 0; k < sizeof N / sizeof N[0]; k++)
        for (int j = 0; j < 2 && (hp->switches & N[k].sw); j++) {
            char name[GGUF_MAX_NAME + 1];
            snprintf(name, sizeof name, "blk.%d.%s.weight", i, N[k].part[j]);
            if (need(d, name, N[k].n, 0, N[k].q[j]) < 0)
                return -1;
        }
    return 0;
}

/* Rows r0 .. r0 + n of t: a matrix of a fused tensor, where it lies. */
static struct qtensor rows_of(const struct qtensor *t, int64_t r0, int64_t n)
{
    struct qtensor v = *t;
    v.data = (const char *)t->data + (size_t)r0 * quant_row_bytes(t->type, t->cols);
    v.rows = n;
    return v;
}

/* Q, K and V as one attn_qkv tensor (Phi-3: Q's rows, K's, V's): 1 when
 * the file has it, 0 when the three are apart (llama.cpp takes either), -1. */
static int load_fused_qkv(struct ld *d, int i, struct llama_layer *l)
{
    const struct llama_hparams *hp = &d->L->model.hp;
    int64_t q = (int64_t)hp->n_head * hp->head_dim, kv = (int64_t)hp->n_head_kv * hp->head_dim;
    char name[GGUF_MAX_NAME + 1];
    snprintf(name, sizeof name, "blk.%d.attn_qkv.weight", i);
    if (!(hp->switches & LLAMA_SW_FUSED_QKV) || !gguf_tensor(d->g, name))
        return 0;
    struct qtensor all;
    if (need(d, name, hp->n_embd, q + 2 * kv, &all) < 0)
        return -1;
    l->wq = rows_of(&all, 0, q);
    l->wk = rows_of(&all, q, kv);
    l->wv = rows_of(&all, q + kv, kv);
    return 1;
}

/* The gate and the up as one ffn_up tensor of twice the rows (Phi-3: the
 * gate's first, as ggml's swiglu halves it). */
static int load_fused_up(struct ld *d, int i, struct llama_layer *l)
{
    const struct llama_hparams *hp = &d->L->model.hp;
    char name[GGUF_MAX_NAME + 1];
    snprintf(name, sizeof name, "blk.%d.ffn_up.weight", i);
    struct qtensor all;
    if (need(d, name, hp->n_embd, 2 * (int64_t)hp->n_ff, &all) < 0)
        return -1;
    l->w_gate = rows_of(&all, 0, hp->n_ff);
    l->w_up = rows_of(&all, hp->n_ff, hp->n_ff);
    return 0;
}

static int load_layer(struct ld *d, int i, struct llama_layer *l)
{
    const struct llama_hparams *hp = &d->L->model.hp;
    int64_t e = hp->n_embd, kv = (int64_t)hp->n_head_kv * hp->head_dim, ff = hp->n_ff;
    int64_t q = (int64_t)hp->n_head * hp->head_dim;
    int fused_qkv = load_fused_qkv(d, i, l), fused_up = (hp->switches & LLAMA_SW_FUSED_UP) != 0;
    if (fused_qkv < 0 || (fused_up && load_fused_up(d, i, l) < 0))
        return -1;
    struct {
        const char *part;
        int64_t ne0, ne1;
        struct qtensor *q;
        int skip; /* in a fused tensor */
    } parts[] = {
        { "attn_norm", e, 0, &l->attn_norm, 0 },     { "attn_q", e, q, &l->wq, fused_qkv },
        { "attn_k", e, kv, &l->wk, fused_qkv },      { "attn_v", e, kv, &l->wv, fused_qkv },
        { "attn_output", q, e, &l->wo, 0 },          { "ffn_norm", e, 0, &l->ffn_norm, 0 },
        { "ffn_gate", e, ff, &l->w_gate, fused_up }, { "ffn_down", ff, e, &l->w_down, 0 },
        { "ffn_up", e, ff, &l->w_up, fused_up },
    };
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        char name[GGUF_MAX_NAME + 1];
        snprintf(name, sizeof name, "blk.%d.%s.weight", i, parts[k].part);
        if (!parts[k].skip && need(d, name, parts[k].ne0, parts[k].ne1, parts[k].q) < 0)
            return -1;
    }
    return load_biases(d, i, l) < 0 ? -1 : load_norms(d, i, l);
}

/* rope.scaling.type "llama3" in the metadata alone (llama.cpp's
 * converter writes the rope_freqs.weight tensor instead, which wins): the
 * forward pass computes the divisors from these (llama_rope_divisors). */
static int load_rope_llama3(struct ld *d)
{
    struct llama_hparams *hp = &d->L->model.hp;
    if (get_pos(d, "rope.scaling.factor", 1, 1e6f, 0, &hp->rope_factor) < 0 ||
        get_int(d, "rope.scaling.original_context_length", 1, 1, MAX_CTX, 0, &hp->rope_orig_ctx) <
            0 ||
        get_pos(d, "rope.scaling.low_freq_factor", 0, 1e6f, 1.0f, &hp->rope_low_freq) < 0 ||
        get_pos(d, "rope.scaling.high_freq_factor", 0, 1e6f, 4.0f, &hp->rope_high_freq) < 0)
        return -1;
    if (!(hp->rope_high_freq > hp->rope_low_freq))
        return err_set(d->e, ERR_USAGE,
                       "%s: %s.rope.scaling.high_freq_factor %g is not above low_freq_factor %g",
                       d->g->path, d->arch->name, (double)hp->rope_high_freq,
                       (double)hp->rope_low_freq);
    d->L->rope_scaling = "llama3";
    return 0;
}

/* Linear scaling divides every angle by factor: divisors of factor (times
 * rope_freqs.weight's when the file has both, as ggml multiplies them). */
static int linear_rope(struct ld *d, float factor)
{
    struct llama_model *m = &d->L->model;
    int half = llama_rot_dims(&m->hp) / 2;
    if (!(factor > 0.0f) || !isfinite(factor))
        return err_set(d->e, ERR_USAGE, "%s: the linear rope scaling factor %g is not above 0",
                       d->g->path, (double)factor);
    if (m->rope_long) /* no known file has both; the divisors below would hide the factors */
        return err_set(d->e, ERR_USAGE,
                       "%s: linear rope scaling with long and short factors is not supported",
                       d->g->path);
    float *div = malloc((size_t)half * sizeof *div);
    if (!div)
        return err_set(d->e, ERR_SYSTEM, "%s: out of memory", d->g->path);
    for (int i = 0; i < half; i++)
        div[i] = (m->rope_freqs ? m->rope_freqs[i] : 1.0f) * factor;
    d->L->rope_divisors = div;
    m->rope_freqs = div;
    d->L->rope_scaling = "linear";
    return 0;
}

/* A tensor of n_rot / 2 rotary divisors (rope_freqs.weight, Phi-3's
 * rope_factors_*.weight), each finite and above 0, into *out. */
static int load_divisors(struct ld *d, const struct gguf_tensor *t, const char *name,
                         const float **out)
{
    struct qtensor q;
    int half = llama_rot_dims(&d->L->model.hp) / 2;
    if (check_tensor(d, t, name, half, 0, &q) < 0)
        return -1;
    for (int i = 0; i < half; i++) {
        float v;
        memcpy(&v, (const float *)q.data + i, sizeof v);
        if (!(v > 0.0f) || !isfinite(v))
            return err_set(d->e, ERR_USAGE, "%s: tensor '%s' holds %g at %d (want finite > 0)",
                           d->g->path, name, (double)v, i);
    }
    *out = q.data;
    return 0;
}

/* Phi-3's long and short factors (both or neither), the original context
 * that chooses between them (llama.cpp: rope.scaling.original_context_length,
 * else the trained one), and the attention factor any file may give. */
static int load_rope_factors(struct ld *d)
{
    struct llama_model *m = &d->L->model;
    struct llama_hparams *hp = &m->hp;
    static const char *const NAMES[2] = { "rope_factors_long.weight", "rope_factors_short.weight" };
    const struct gguf_tensor *t[2] = { take(d, NAMES[0]), take(d, NAMES[1]) };
    if (get_pos(d, "rope.scaling.attn_factor", 0, 1e6f, 0.0f, &hp->rope_attn_factor) < 0)
        return -1;
    if (!t[0] && !t[1])
        return 0;
    if (!t[0] || !t[1])
        return err_set(d->e, ERR_USAGE, "%s: tensor '%s' is missing (it comes with '%s')",
                       d->g->path, NAMES[t[0] != NULL], NAMES[t[0] == NULL]);
    if (load_divisors(d, t[0], NAMES[0], &m->rope_long) < 0 ||
        load_divisors(d, t[1], NAMES[1], &m->rope_short) < 0 ||
        get_int(d, "rope.scaling.original_context_length", 0, 1, MAX_CTX, hp->n_ctx_train,
                &hp->rope_orig_ctx) < 0)
        return -1;
    d->L->rope_scaling = "long or short factors (rope_factors_*.weight)";
    return 0;
}

/* rope_freqs.weight (Llama 3.1's scaling as ggml applies it), Phi-3's
 * factors, then the metadata's llama.rope.scaling.* keys. */
static int load_rope(struct ld *d)
{
    struct llama_model *m = &d->L->model;
    const struct gguf_tensor *t = take(d, "rope_freqs.weight");
    d->L->rope_scaling = "none";
    if (t) {
        if (load_divisors(d, t, "rope_freqs.weight", &m->rope_freqs) < 0)
            return -1;
        d->L->rope_scaling = "llama3 (rope_freqs.weight)";
    }
    if (load_rope_factors(d) < 0)
        return -1;
    struct gguf_str type;
    char tkey[GGUF_MAX_NAME + 1], fkey[GGUF_MAX_NAME + 1];
    akey(d, "rope.scaling.type", tkey, sizeof tkey);
    akey(d, "rope.scale_linear", fkey, sizeof fkey);
    int got = gl_optional_fits(d, tkey, K_STR) ? gguf_get_str(d->g, tkey, &type, d->e) : 0;
    if (got < 0)
        return -1;
    float factor = 1.0f;
    if (gl_optional_fits(d, fkey, K_FLOAT) && gguf_get_f32(d->g, fkey, &factor, d->e) < 0)
        return -1;
    if (got && !(type.len == 4 && memcmp(type.s, "none", 4) == 0)) {
        if (type.len == 6 && memcmp(type.s, "linear", 6) == 0) {
            if (get_pos(d, "rope.scaling.factor", 1, 1e6f, 1, &factor) < 0)
                return -1;
        } else if (type.len == 6 && memcmp(type.s, "llama3", 6) == 0) {
            return t ? 0 : load_rope_llama3(d);
        } else {
            char buf[NAME_SHOWN];
            gguf_escape(type.s, type.len, buf, sizeof buf);
            return err_set(d->e, ERR_USAGE,
                           "%s: rope scaling '%s' is not supported (none, linear, llama3)",
                           d->g->path, buf);
        }
    }
    return factor == 1.0f ? 0 : linear_rope(d, factor);
}

/* The embedding, the final norm, the head (or the tie), every layer. */
static int load_tensors(struct ld *d)
{
    struct llama_model *m = &d->L->model;
    const struct llama_hparams *hp = &m->hp;
    if (need_vocab_rows(d, "token_embd.weight", &m->tok_embd) < 0 ||
        need(d, "output_norm.weight", hp->n_embd, 0, &m->output_norm) < 0)
        return -1;
    if (gguf_tensor(d->g, "output.weight")) {
        if (need_vocab_rows(d, "output.weight", &m->output) < 0)
            return -1;
    } else {
        m->output = m->tok_embd;
        m->tied = 1;
    }
    d->L->layers = calloc((size_t)hp->n_layer, sizeof *d->L->layers);
    if (!d->L->layers)
        return err_set(d->e, ERR_SYSTEM, "%s: out of memory (layers)", d->g->path);
    m->layers = d->L->layers;
    for (int i = 0; i < hp->n_layer; i++)
        if (load_layer(d, i, &d->L->layers[i]) < 0)
            return -1;
    return 0;
}

/* The sliding window's rules, per architecture with LLAMA_SW_SWA, as
 * llama.cpp has them: the window when the file does not say (0: none), the
 * pattern when it does not say (layer l slides when l % pattern <
 * pattern - 1), the sliding layers' rope base when it does not say (0: the
 * global layers'), and the layer count of the model whose scores scale by
 * 1 / sqrt(n_embd / n_head), an integer quotient, rather than by the head
 * size's (the 27B of each). */
static const struct window_rule {
    enum arch arch;
    int n_swa, pattern;
    float base_swa;
    int big_layers;
} WINDOW_RULES[] = {
    { ARCH_GEMMA2, 4096, 2, 0.0f, 46 },
    { ARCH_GEMMA3, 0, 6, 10000.0f, 62 },
};

/* Gemma 2's soft-caps (attn_logit_softcapping, final_logit_softcapping: 50
 * and 30 unless said). Gemma 3 does not soft-cap, so a Gemma 3 file asking
 * for a final soft-cap is refused rather than shown other numbers. */
static int load_softcaps(struct ld *d)
{
    struct llama_hparams *hp = &d->L->model.hp;
    if (hp->switches & LLAMA_SW_SOFTCAP)
        return get_pos(d, "attn_logit_softcapping", 0, 1e6f, 50.0f, &hp->attn_softcap) < 0 ||
                       get_pos(d, "final_logit_softcapping", 0, 1e6f, 30.0f, &hp->final_softcap) < 0
                   ? -1
                   : 0;
    char key[GGUF_MAX_NAME + 1];
    float cap = 0.0f;
    akey(d, "final_logit_softcapping", key, sizeof key);
    if (gl_optional_fits(d, key, K_FLOAT) && gguf_get_f32(d->g, key, &cap, d->e) < 0)
        return -1;
    if (cap != 0.0f)
        return err_set(d->e, ERR_USAGE, "%s: %s is %g: soft-capped logits are not supported",
                       d->g->path, key, (double)cap);
    return 0;
}

/* Gemma's sliding window: attention.sliding_window, attention.
 * sliding_window_pattern and rope.freq_base_swa, with the defaults of
 * WINDOW_RULES; and the score scale of the rule's big model. */
static int load_window(struct ld *d)
{
    struct llama_hparams *hp = &d->L->model.hp;
    if (!(hp->switches & LLAMA_SW_SWA))
        return 0; /* llama.cpp reads neither the window nor the caps there */
    const struct window_rule *r = WINDOW_RULES;
    while (r < WINDOW_RULES + sizeof WINDOW_RULES / sizeof WINDOW_RULES[0] &&
           d->arch != &ARCHS[r->arch])
        r++;
    if (r == WINDOW_RULES + sizeof WINDOW_RULES / sizeof WINDOW_RULES[0])
        return err_set(d->e, ERR_USAGE, "%s: no sliding-window rule for %s", d->g->path,
                       d->arch->name);
    if (get_int(d, "attention.sliding_window", 0, 0, MAX_CTX, r->n_swa, &hp->n_swa) < 0 ||
        get_int(d, "attention.sliding_window_pattern", 0, 0, LLAMA_MAX_LAYERS, r->pattern,
                &hp->swa_pattern) < 0 ||
        get_pos(d, "rope.freq_base_swa", 0, 1e12f, r->base_swa > 0.0f ? r->base_swa : hp->rope_base,
                &hp->rope_base_swa) < 0)
        return -1;
    if (hp->n_layer == r->big_layers)
        hp->attn_scale = 1.0f / sqrtf((float)(hp->n_embd / hp->n_head));
    return load_softcaps(d);
}

static int load_all(struct ld *d)
{
    if (gguf_vocab_check(d) < 0 || check_arch(d) < 0 || load_hparams(d) < 0 || load_window(d) < 0 ||
        gguf_vocab_load(d) < 0)
        return -1;
    d->L->model.hp.n_vocab = d->L->tok.n;
    const char *vocab = "the vocabulary (tokenizer.ggml.tokens)";
    if (check_equal(d, "vocab_size", d->L->tok.n, vocab) < 0)
        return -1;
    if (load_tensors(d) < 0 || load_rope(d) < 0)
        return -1;
    /* A tensor the forward pass would not read means a model it would get
     * wrong (biases, experts, another architecture's parts). */
    for (size_t i = 0; i < d->g->n_tensors; i++)
        if (!d->used[i]) {
            char buf[NAME_SHOWN];
            const struct gguf_str *n = &d->g->tensors[i].name;
            gguf_escape(n->s, n->len, buf, sizeof buf);
            return err_set(d->e, ERR_USAGE,
                           "%s: tensor '%s' is not part of a %s model (logitlab would ignore it)",
                           d->g->path, buf, d->arch->name);
        }
    return 0;
}

/* A load of g by load (the whole model, or its vocabulary). */
static struct gguf_llama *load_by(const struct gguf *g, int (*load)(struct ld *), struct err *e)
{
    struct gguf_llama *L = calloc(1, sizeof *L);
    unsigned char *used = calloc(g->n_tensors ? g->n_tensors : 1, 1);
    if (!L || !used) {
        free(L), free(used);
        err_set(e, ERR_SYSTEM, "%s: out of memory", g->path);
        return NULL;
    }
    struct ld d = { g, L, e, used, NULL };
    int rc = load(&d);
    free(used);
    if (rc < 0) {
        gguf_llama_free(L);
        return NULL;
    }
    return L;
}

struct gguf_llama *gguf_llama_new(const struct gguf *g, struct err *e)
{
    return load_by(g, load_all, e);
}

struct gguf_llama *gguf_llama_vocab_new(const struct gguf *g, struct err *e)
{
    return load_by(g, gguf_vocab_load, e);
}

void gguf_llama_free(struct gguf_llama *L)
{
    if (!L)
        return;
    free(L->layers);
    free(L->rope_divisors);
    free(L->text);
    free(L->merges);
    free(L->scores);
    free(L->types);
    free(L);
}
