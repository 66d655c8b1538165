/* gguf_llama.c - a GGUF file's metadata and tensors as a llama model and its
 * tokenizer's spec, every value checked (gguf_llama.h). The key and tensor
 * names are llama.cpp's (LLM_ARCH_LLAMA): "llama.block_count",
 * "blk.N.attn_q.weight", "tokenizer.ggml.tokens", ... */
#include "data/gguf_llama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/quant.h"

#define MAX_FF     (1 << 20) /* feed-forward width (Llama 3.1 405B: 53,248) */
#define MAX_CTX    (1 << 24) /* trained context (Llama 3.1: 131,072) */
#define MAX_VOCAB  (1 << 24) /* tokens (Llama 3: 128,256; Gemma: 256,000) */
#define NAME_SHOWN 80

/* The state of one load. */
struct ld {
    const struct gguf *g;
    struct gguf_llama *L;
    struct err *e;
    unsigned char *used; /* per tensor of g: taken by the model */
};

/* What an optional key must hold to be read: its class of value types. */
enum kclass { K_INT, K_FLOAT, K_BOOL, K_STR, K_ARR_STR, K_ARR_FLOAT, K_ARR_INT };

static int is_int_type(int t)
{
    return t == GGUF_T_U8 || t == GGUF_T_I8 || t == GGUF_T_U16 || t == GGUF_T_I16 ||
           t == GGUF_T_U32 || t == GGUF_T_I32 || t == GGUF_T_U64 || t == GGUF_T_I64;
}

static int in_class(const struct gguf_kv *kv, enum kclass c)
{
    int arr = kv->type == GGUF_T_ARRAY;
    switch (c) {
    case K_INT:
        return !arr && is_int_type(kv->type);
    case K_FLOAT:
        return kv->type == GGUF_T_F32 || kv->type == GGUF_T_F64;
    case K_BOOL:
        return kv->type == GGUF_T_BOOL;
    case K_STR:
        return kv->type == GGUF_T_STRING;
    case K_ARR_STR:
        return arr && kv->elem == GGUF_T_STRING;
    case K_ARR_FLOAT:
        return arr && (kv->elem == GGUF_T_F32 || kv->elem == GGUF_T_F64);
    case K_ARR_INT:
        return arr && is_int_type(kv->elem);
    }
    return 0;
}

/* Keeps the first warning of a load and counts the rest (gguf_llama.h). */
static void warn(struct ld *d, const char *key, const char *why)
{
    struct gguf_llama *L = d->L;
    if (L->n_warnings++ == 0)
        snprintf(L->warning, sizeof L->warning, "%s: %s %s: ignored", d->g->path, key, why);
}

/* Whether the optional key may be read as c: 1 when it is absent or of
 * that class; 0, with a warning, when it holds another type. llama.cpp
 * loads files whose writers gave an optional key an odd type (it reads
 * what it needs and leaves the rest), so such a key is left out here too
 * rather than refusing the model. */
static int optional_fits(struct ld *d, const char *key, enum kclass c)
{
    const struct gguf_kv *kv = gguf_find(d->g, key);
    if (!kv || in_class(kv, c))
        return 1;
    char tb[16];
    char why[64];
    snprintf(why, sizeof why, "has type %s%s%s", gguf_type_name(kv->type, tb, sizeof tb),
             kv->type == GGUF_T_ARRAY ? " of " : "",
             kv->type == GGUF_T_ARRAY ? gguf_type_name(kv->elem, tb, sizeof tb) : "");
    warn(d, key, why);
    return 0;
}

/* The u32 key as an int in lo..hi: 1, 0 when absent (*v = dflt; an error
 * when required), -1. */
static int get_int(struct ld *d, const char *key, int required, int lo, int hi, int dflt, int *v)
{
    uint32_t u;
    int got = required || optional_fits(d, key, K_INT) ? gguf_get_u32(d->g, key, &u, d->e) : 0;
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

/* A float key, finite and above 0 (and below hi): 1, 0 (*v = dflt), -1. */
static int get_pos(struct ld *d, const char *key, int required, float hi, float dflt, float *v)
{
    int got = required || optional_fits(d, key, K_FLOAT) ? gguf_get_f32(d->g, key, v, d->e) : 0;
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
    if (a.len != 5 || memcmp(a.s, "llama", 5) != 0)
        return err_set(d->e, ERR_USAGE,
                       "%s: architecture '%s' is not supported (logitlab runs llama)", d->g->path,
                       (gguf_escape(a.s, a.len, buf, sizeof buf), buf));
    uint32_t experts;
    got = optional_fits(d, "llama.expert_count", K_INT)
              ? gguf_get_u32(d->g, "llama.expert_count", &experts, d->e)
              : 0;
    if (got < 0)
        return -1;
    if (got && experts > 0)
        return err_set(d->e, ERR_USAGE,
                       "%s: llama.expert_count is %u: mixture-of-experts models are not supported",
                       d->g->path, (unsigned)experts);
    return 0;
}

/* A key that, when present, must equal want (the head size). */
static int check_equal(struct ld *d, const char *key, int want, const char *what)
{
    int v = want;
    int got = get_int(d, key, 0, 0, INT32_MAX, want, &v);
    if (got < 0)
        return -1;
    if (v != want)
        return err_set(d->e, ERR_USAGE, "%s: %s is %d, but %s is %d", d->g->path, key, v, what,
                       want);
    return 0;
}

static int load_hparams(struct ld *d)
{
    struct llama_hparams *hp = &d->L->model.hp;
    const char *path = d->g->path;
    if (get_int(d, "llama.block_count", 1, 1, LLAMA_MAX_LAYERS, 0, &hp->n_layer) < 0 ||
        get_int(d, "llama.embedding_length", 1, 1, LLAMA_MAX_EMBD, 0, &hp->n_embd) < 0 ||
        get_int(d, "llama.attention.head_count", 1, 1, LLAMA_MAX_HEADS, 0, &hp->n_head) < 0 ||
        get_int(d, "llama.attention.head_count_kv", 0, 1, hp->n_head, hp->n_head, &hp->n_head_kv) <
            0 ||
        get_int(d, "llama.feed_forward_length", 1, 1, MAX_FF, 0, &hp->n_ff) < 0 ||
        get_int(d, "llama.context_length", 1, 1, MAX_CTX, 0, &hp->n_ctx_train) < 0 ||
        get_pos(d, "llama.attention.layer_norm_rms_epsilon", 1, 1.0f, 0, &hp->rms_eps) < 0 ||
        get_pos(d, "llama.rope.freq_base", 0, 1e12f, 10000.0f, &hp->rope_base) < 0)
        return -1;
    if (hp->n_embd % hp->n_head != 0)
        return err_set(d->e, ERR_USAGE,
                       "%s: llama.embedding_length %d is not a multiple of "
                       "llama.attention.head_count %d",
                       path, hp->n_embd, hp->n_head);
    if (hp->n_head % hp->n_head_kv != 0)
        return err_set(d->e, ERR_USAGE,
                       "%s: llama.attention.head_count %d is not a multiple of "
                       "llama.attention.head_count_kv %d",
                       path, hp->n_head, hp->n_head_kv);
    hp->head_dim = hp->n_embd / hp->n_head;
    if (hp->head_dim % 2 != 0)
        return err_set(d->e, ERR_USAGE, "%s: the head size %d is odd (rotary pairs need it even)",
                       path, hp->head_dim);
    const char *hd = "the head size (embedding_length / head_count)";
    if (check_equal(d, "llama.rope.dimension_count", hp->head_dim, hd) < 0 ||
        check_equal(d, "llama.attention.key_length", hp->head_dim, hd) < 0 ||
        check_equal(d, "llama.attention.value_length", hp->head_dim, hd) < 0)
        return -1;
    return 0;
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
    return 0;
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

static int load_layer(struct ld *d, int i, struct llama_layer *l)
{
    const struct llama_hparams *hp = &d->L->model.hp;
    int64_t e = hp->n_embd, kv = (int64_t)hp->n_head_kv * hp->head_dim, ff = hp->n_ff;
    struct {
        const char *part;
        int64_t ne0, ne1;
        struct qtensor *q;
    } parts[] = {
        { "attn_norm", e, 0, &l->attn_norm }, { "attn_q", e, e, &l->wq },
        { "attn_k", e, kv, &l->wk },          { "attn_v", e, kv, &l->wv },
        { "attn_output", e, e, &l->wo },      { "ffn_norm", e, 0, &l->ffn_norm },
        { "ffn_gate", e, ff, &l->w_gate },    { "ffn_down", ff, e, &l->w_down },
        { "ffn_up", e, ff, &l->w_up },
    };
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        char name[GGUF_MAX_NAME + 1];
        snprintf(name, sizeof name, "blk.%d.%s.weight", i, parts[k].part);
        if (need(d, name, parts[k].ne0, parts[k].ne1, parts[k].q) < 0)
            return -1;
    }
    return 0;
}

/* llama.rope.scaling.type "llama3" in the metadata alone (llama.cpp's
 * converter writes the rope_freqs.weight tensor instead, which wins): the
 * forward pass computes the divisors from these (llama_rope_divisors). */
static int load_rope_llama3(struct ld *d)
{
    struct llama_hparams *hp = &d->L->model.hp;
    if (get_pos(d, "llama.rope.scaling.factor", 1, 1e6f, 0, &hp->rope_factor) < 0 ||
        get_int(d, "llama.rope.scaling.original_context_length", 1, 1, MAX_CTX, 0,
                &hp->rope_orig_ctx) < 0 ||
        get_pos(d, "llama.rope.scaling.low_freq_factor", 0, 1e6f, 1.0f, &hp->rope_low_freq) < 0 ||
        get_pos(d, "llama.rope.scaling.high_freq_factor", 0, 1e6f, 4.0f, &hp->rope_high_freq) < 0)
        return -1;
    if (!(hp->rope_high_freq > hp->rope_low_freq))
        return err_set(d->e, ERR_USAGE,
                       "%s: llama.rope.scaling.high_freq_factor %g is not above low_freq_factor %g",
                       d->g->path, (double)hp->rope_high_freq, (double)hp->rope_low_freq);
    d->L->rope_scaling = "llama3";
    return 0;
}

/* Linear scaling divides every angle by factor: divisors of factor (times
 * rope_freqs.weight's when the file has both, as ggml multiplies them). */
static int linear_rope(struct ld *d, float factor)
{
    struct llama_model *m = &d->L->model;
    int half = m->hp.head_dim / 2;
    if (!(factor > 0.0f) || !isfinite(factor))
        return err_set(d->e, ERR_USAGE, "%s: the linear rope scaling factor %g is not above 0",
                       d->g->path, (double)factor);
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

/* rope_freqs.weight (Llama 3.1's scaling as ggml applies it), then the
 * metadata's llama.rope.scaling.* keys. */
static int load_rope(struct ld *d)
{
    struct llama_model *m = &d->L->model;
    struct llama_hparams *hp = &m->hp;
    const char *path = d->g->path;
    int half = hp->head_dim / 2;
    const struct gguf_tensor *t = take(d, "rope_freqs.weight");
    struct qtensor q;
    d->L->rope_scaling = "none";
    if (t) {
        if (check_tensor(d, t, "rope_freqs.weight", half, 0, &q) < 0)
            return -1;
        for (int i = 0; i < half; i++) {
            float v;
            memcpy(&v, (const float *)q.data + i, sizeof v);
            if (!(v > 0.0f) || !isfinite(v))
                return err_set(d->e, ERR_USAGE,
                               "%s: tensor 'rope_freqs.weight' holds %g at %d (want finite > 0)",
                               path, (double)v, i);
        }
        m->rope_freqs = q.data;
        d->L->rope_scaling = "llama3 (rope_freqs.weight)";
    }
    struct gguf_str type;
    const char *tkey = "llama.rope.scaling.type", *fkey = "llama.rope.scale_linear";
    int got = optional_fits(d, tkey, K_STR) ? gguf_get_str(d->g, tkey, &type, d->e) : 0;
    if (got < 0)
        return -1;
    float factor = 1.0f;
    if (optional_fits(d, fkey, K_FLOAT) && gguf_get_f32(d->g, fkey, &factor, d->e) < 0)
        return -1;
    if (got && !(type.len == 4 && memcmp(type.s, "none", 4) == 0)) {
        if (type.len == 6 && memcmp(type.s, "linear", 6) == 0) {
            if (get_pos(d, "llama.rope.scaling.factor", 1, 1e6f, 1, &factor) < 0)
                return -1;
        } else if (type.len == 6 && memcmp(type.s, "llama3", 6) == 0) {
            return t ? 0 : load_rope_llama3(d);
        } else {
            char buf[NAME_SHOWN];
            gguf_escape(type.s, type.len, buf, sizeof buf);
            return err_set(d->e, ERR_USAGE,
                           "%s: rope scaling '%s' is not supported (none, linear, llama3)", path,
                           buf);
        }
    }
    return factor == 1.0f ? 0 : linear_rope(d, factor);
}

/* A string array as (pointer, length) pairs: 1, 0 when absent (an error
 * when required), -1. */
static int load_strs(struct ld *d, const char *key, int required, int max, struct tok_str **out,
                     int *count)
{
    uint64_t n;
    *count = 0;
    if (!required && !optional_fits(d, key, K_ARR_STR))
        return 0;
    int got = gguf_get_arr_len(d->g, key, GGUF_T_STRING, &n, d->e);
    if (got < 0)
        return -1;
    if (!got)
        return required ? err_set(d->e, ERR_USAGE, "%s: %s is missing", d->g->path, key) : 0;
    if (n > (uint64_t)max || (required && n == 0))
        return err_set(d->e, ERR_USAGE, "%s: %s has %llu entries (1 to %d)", d->g->path, key,
                       (unsigned long long)n, max);
    struct gguf_str *tmp = malloc((n ? n : 1) * sizeof *tmp);
    *out = malloc((n ? n : 1) * sizeof **out);
    if (!tmp || !*out) {
        free(tmp);
        return err_set(d->e, ERR_SYSTEM, "%s: out of memory (%s)", d->g->path, key);
    }
    if (gguf_get_strs(d->g, key, tmp, (size_t)n, d->e) < 0) {
        free(tmp);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        (*out)[i] = (struct tok_str){ tmp[i].s, tmp[i].len };
    free(tmp);
    *count = (int)n;
    return 1;
}

/* tokenizer.ggml.scores and token_type, each optional, one per token. */
static int load_scores_types(struct ld *d)
{
    struct gguf_llama *L = d->L;
    size_t n = (size_t)L->tok.n;
    uint64_t have;
    int got = optional_fits(d, "tokenizer.ggml.scores", K_ARR_FLOAT)
                  ? gguf_get_arr_len(d->g, "tokenizer.ggml.scores", GGUF_T_F32, &have, d->e)
                  : 0;
    if (got < 0)
        return -1;
    if (got) {
        L->scores = malloc(n * sizeof *L->scores);
        if (!L->scores)
            return err_set(d->e, ERR_SYSTEM, "%s: out of memory (scores)", d->g->path);
        if (gguf_get_f32s(d->g, "tokenizer.ggml.scores", L->scores, n, d->e) < 0)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (isnan(L->scores[i]))
                return err_set(d->e, ERR_USAGE, "%s: tokenizer.ggml.scores element %zu is NaN",
                               d->g->path, i);
        L->tok.scores = L->scores;
    }
    got = optional_fits(d, "tokenizer.ggml.token_type", K_ARR_INT)
              ? gguf_get_arr_len(d->g, "tokenizer.ggml.token_type", GGUF_T_I32, &have, d->e)
              : 0;
    if (got < 0)
        return -1;
    if (got) {
        L->types = malloc(n * sizeof *L->types);
        if (!L->types)
            return err_set(d->e, ERR_SYSTEM, "%s: out of memory (token types)", d->g->path);
        if (gguf_get_i32s(d->g, "tokenizer.ggml.token_type", L->types, n, d->e) < 0)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (L->types[i] < TOKT_UNDEFINED || L->types[i] > TOKT_BYTE)
                return err_set(d->e, ERR_USAGE,
                               "%s: tokenizer.ggml.token_type element %zu is %d, outside 0 to 6",
                               d->g->path, i, (int)L->types[i]);
        L->tok.types = L->types;
    }
    return 0;
}

/* GGUF writers mark an optional id that a model lacks with -1 (int32) or
 * its unsigned twin 0xFFFFFFFF (llama.cpp's converters write the padding
 * and separator ids so): such a value means absent. */
static int is_no_token(const struct gguf_kv *kv, int64_t v)
{
    return v == -1 || (kv->type == GGUF_T_U32 && v == UINT32_MAX);
}

/* One special id: 1 with *id inside the vocabulary, 0 when absent or
 * marked absent, -1. One the run steers by (steer: BOS, EOS, EOT, unknown)
 * outside the vocabulary is refused; padding, which logitlab never uses,
 * is then left out with a warning, as llama.cpp leaves it. */
static int special_id(struct ld *d, const char *key, int steer, int *id)
{
    const struct gguf_kv *kv = gguf_find(d->g, key);
    int64_t v;
    *id = -1;
    if (!kv || !optional_fits(d, key, K_INT))
        return 0;
    if (gguf_get_i64(d->g, key, &v, d->e) < 0)
        return -1;
    if (is_no_token(kv, v))
        return 0;
    if (v >= 0 && v < d->L->tok.n) {
        *id = (int)v;
        return 1;
    }
    if (steer)
        return err_set(d->e, ERR_USAGE, "%s: %s is %lld, outside the vocabulary (0 to %d)",
                       d->g->path, key, (long long)v, d->L->tok.n - 1);
    char why[96];
    snprintf(why, sizeof why, "is %lld, outside the vocabulary (0 to %d)", (long long)v,
             d->L->tok.n - 1);
    warn(d, key, why);
    return 0;
}

/* A bool key that may be absent (the default stays) or of an odd type. */
static int optional_bool(struct ld *d, const char *key, int *v)
{
    return optional_fits(d, key, K_BOOL) ? gguf_get_bool(d->g, key, v, d->e) : 0;
}

/* The special ids, each -1 when absent, else inside the vocabulary; the
 * flags with their defaults. Ids logitlab has no use for (separator, mask,
 * fill-in-the-middle) are not read. */
static int load_special(struct ld *d)
{
    struct tok_spec *t = &d->L->tok;
    static const char *const KEY[] = { "bos", "eos", "eot", "unknown", "padding" };
    int *id[] = { &t->bos, &t->eos, &t->eot, &t->unk, &t->pad };
    for (int i = 0; i < 5; i++) {
        char key[64];
        snprintf(key, sizeof key, "tokenizer.ggml.%s_token_id", KEY[i]);
        if (special_id(d, key, id[i] != &t->pad, id[i]) < 0)
            return -1;
    }
    t->add_bos = t->kind == TOK_SPM || t->bos >= 0;
    t->add_space_prefix = 1;
    if (optional_bool(d, "tokenizer.ggml.add_bos_token", &t->add_bos) < 0 ||
        optional_bool(d, "tokenizer.ggml.add_space_prefix", &t->add_space_prefix) < 0)
        return -1;
    if (t->add_bos && t->bos < 0)
        return err_set(d->e, ERR_USAGE,
                       "%s: tokenizer.ggml.add_bos_token is true but there is no bos_token_id",
                       d->g->path);
    return 0;
}

static int load_tokenizer(struct ld *d)
{
    struct gguf_llama *L = d->L;
    struct tok_spec *t = &L->tok;
    struct gguf_str m;
    int got = gguf_get_str(d->g, "tokenizer.ggml.model", &m, d->e);
    if (got < 0)
        return -1;
    if (!got)
        return err_set(d->e, ERR_USAGE, "%s: tokenizer.ggml.model is missing", d->g->path);
    if (m.len == 4 && memcmp(m.s, "gpt2", 4) == 0) {
        t->kind = TOK_BPE;
    } else if (m.len == 5 && memcmp(m.s, "llama", 5) == 0) {
        t->kind = TOK_SPM;
    } else {
        char buf[NAME_SHOWN];
        gguf_escape(m.s, m.len, buf, sizeof buf);
        return err_set(d->e, ERR_USAGE, "%s: tokenizer '%s' is not supported (gpt2 or llama)",
                       d->g->path, buf);
    }
    struct gguf_str s = { NULL, 0 };
    if (optional_fits(d, "tokenizer.ggml.pre", K_STR) &&
        gguf_get_str(d->g, "tokenizer.ggml.pre", &s, d->e) < 0)
        return -1;
    t->pre = (struct tok_str){ s.s, s.len };
    if (load_strs(d, "tokenizer.ggml.tokens", 1, MAX_VOCAB, &L->text, &t->n) < 0 ||
        load_strs(d, "tokenizer.ggml.merges", t->kind == TOK_BPE, INT32_MAX, &L->merges,
                  &t->n_merges) < 0)
        return -1;
    t->text = L->text;
    t->merges = L->merges;
    if (load_scores_types(d) < 0 || load_special(d) < 0)
        return -1;
    got = optional_fits(d, "tokenizer.chat_template", K_STR)
              ? gguf_get_str(d->g, "tokenizer.chat_template", &L->chat_template, d->e)
              : 0;
    if (got < 0 || (optional_fits(d, "general.name", K_STR) &&
                    gguf_get_str(d->g, "general.name", &L->name, d->e) < 0))
        return -1;
    L->has_chat_template = got;
    return 0;
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

static int load_all(struct ld *d)
{
    if (check_arch(d) < 0 || load_hparams(d) < 0 || load_tokenizer(d) < 0)
        return -1;
    d->L->model.hp.n_vocab = d->L->tok.n;
    const char *vocab = "the vocabulary (tokenizer.ggml.tokens)";
    if (check_equal(d, "llama.vocab_size", d->L->tok.n, vocab) < 0)
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
                           "%s: tensor '%s' is not part of a llama model (logitlab would ignore "
                           "it)",
                           d->g->path, buf);
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
    struct ld d = { g, L, e, used };
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
    return load_by(g, load_tokenizer, e);
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
