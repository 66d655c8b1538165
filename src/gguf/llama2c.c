/* llama2c.c - a llama2.c checkpoint and tokenizer as a GGUF file
 * (llama2c.h). Every size in the inputs is checked before it is used. */
#include "gguf/llama2c.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/readfile.h"
#include "gguf/gguf_write.h"
#include "gguf/tokenizer.h"
#include "model/quant.h"

#define HEADER_INTS 7
#define MAX_DIM     (1 << 16)      /* any one size in the header */
#define SPACE_MARK  "\xE2\x96\x81" /* U+2581, SentencePiece's space */

/* The header, in the checkpoint's order. */
struct ak_config {
    int dim, hidden, layers, heads, kv_heads, vocab, seq;
    int shared; /* the classifier is the embedding (vocab was positive) */
};

/* Where each weight sits in the checkpoint: floats from the start of the
 * data, per layer sizes in floats. */
struct ak_layout {
    size_t embd, att_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3, out_norm, cls, total;
};

/* The state of one conversion. */
struct conv {
    const char *ckpt_name, *tok_name;
    const unsigned char *ckpt, *tok;
    size_t ckpt_len, tok_len;
    struct ak_config c;
    struct ak_layout at;
    struct gguf_str *text; /* the tokens, converted (owned: strings[]) */
    char **strings;
    float *scores;
    int32_t *types;
    struct err *e;
};

static int32_t le_i32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

static int read_config(struct conv *v)
{
    int h[HEADER_INTS];
    static const char *const NAME[HEADER_INTS] = { "dim",     "hidden_dim", "n_layers",
                                                   "n_heads", "n_kv_heads", "vocab_size",
                                                   "seq_len" };
    if (v->ckpt_len < HEADER_INTS * 4)
        return err_set(v->e, ERR_USAGE, "%s: %zu bytes, shorter than a llama2.c header (28)",
                       v->ckpt_name, v->ckpt_len);
    for (int i = 0; i < HEADER_INTS; i++) {
        h[i] = le_i32(v->ckpt + 4 * i);
        int mag = i == 5 && h[i] < 0 && h[i] != INT32_MIN ? -h[i] : h[i];
        if (mag < 1 || mag > MAX_DIM)
            return err_set(v->e, ERR_USAGE, "%s: %s is %d, outside 1 to %d", v->ckpt_name, NAME[i],
                           h[i], MAX_DIM);
    }
    v->c =
        (struct ak_config){ h[0], h[1], h[2], h[3], h[4], h[5] < 0 ? -h[5] : h[5], h[6], h[5] > 0 };
    const struct ak_config *c = &v->c;
    if (c->dim % c->heads != 0 || c->heads % c->kv_heads != 0 || (c->dim / c->heads) % 2 != 0)
        return err_set(v->e, ERR_USAGE,
                       "%s: dim %d, n_heads %d and n_kv_heads %d do not make whole heads of an "
                       "even size",
                       v->ckpt_name, c->dim, c->heads, c->kv_heads);
    return 0;
}

/* Each weight's place, in the order run.c's memory_map_weights reads them;
 * then the length the file must have. */
static int lay_out(struct conv *v)
{
    const struct ak_config *c = &v->c;
    size_t d = (size_t)c->dim, L = (size_t)c->layers, kv = d / (size_t)c->heads * c->kv_heads;
    size_t head = d / (size_t)c->heads, k = 0;
    struct ak_layout *a = &v->at;
    a->embd = k, k += (size_t)c->vocab * d;
    a->att_norm = k, k += L * d;
    a->wq = k, k += L * d * d;
    a->wk = k, k += L * d * kv;
    a->wv = k, k += L * d * kv;
    a->wo = k, k += L * d * d;
    a->ffn_norm = k, k += L * d;
    a->w1 = k, k += L * d * (size_t)c->hidden;
    a->w2 = k, k += L * d * (size_t)c->hidden;
    a->w3 = k, k += L * d * (size_t)c->hidden;
    a->out_norm = k, k += d;
    k += (size_t)c->seq * head; /* the RoPE tables (cos, sin), which GGUF recomputes */
    a->cls = c->shared ? a->embd : k;
    k += c->shared ? 0 : (size_t)c->vocab * d;
    a->total = k;
    /* Each size is below 2^16, so k stays far below SIZE_MAX / 4. */
    if (HEADER_INTS * 4 + 4 * k != v->ckpt_len)
        return err_set(
            v->e, ERR_USAGE,
            "%s: %zu bytes, but a llama2.c checkpoint of dim %d, hidden_dim %d, "
            "n_layers %d, n_heads %d, n_kv_heads %d, vocab_size %d, seq_len %d needs %zu",
            v->ckpt_name, v->ckpt_len, c->dim, c->hidden, c->layers, c->heads, c->kv_heads,
            c->shared ? c->vocab : -c->vocab, c->seq, HEADER_INTS * 4 + 4 * k);
    return 0;
}

/* The type llama.cpp's converter gives token id with text s (n bytes): the
 * first three are its unknown, BOS and EOS; an empty text is a control
 * token; <0xNN> a byte. */
static int32_t token_type(int id, const unsigned char *s, size_t n)
{
    static const char HEX[] = "0123456789ABCDEFabcdef";
    if (id == 0)
        return TOKT_UNKNOWN;
    if (id <= 2 || n == 0)
        return TOKT_CONTROL;
    if (n == 6 && memcmp(s, "<0x", 3) == 0 && s[5] == '>' && s[3] && s[4] && strchr(HEX, s[3]) &&
        strchr(HEX, s[4]))
        return TOKT_BYTE;
    return TOKT_NORMAL;
}

/* Token id's text as GGUF keeps it: spaces as U+2581, the first three
 * named as llama.cpp names them. */
static char *token_text(int id, const unsigned char *s, size_t n, size_t *len)
{
    static const char *const FIXED[3] = { "<unk>", "<s>", "</s>" };
    if (id < 3) {
        *len = strlen(FIXED[id]);
        return strdup(FIXED[id]);
    }
    size_t spaces = 0;
    for (size_t i = 0; i < n; i++)
        spaces += s[i] == ' ';
    char *t = malloc(n + 2 * spaces + 1);
    if (!t)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ') {
            memcpy(t + k, SPACE_MARK, 3);
            k += 3;
        } else {
            t[k++] = (char)s[i];
        }
    }
    t[k] = '\0';
    *len = k;
    return t;
}

/* tokenizer.bin: max_token_length, then per token a float score, an int32
 * length and the bytes; exactly vocab_size of them. */
static int read_tokens(struct conv *v)
{
    int n = v->c.vocab;
    size_t at = 4;
    v->text = calloc((size_t)n, sizeof *v->text);
    v->strings = calloc((size_t)n, sizeof *v->strings);
    v->scores = malloc((size_t)n * sizeof *v->scores);
    v->types = malloc((size_t)n * sizeof *v->types);
    if (!v->text || !v->strings || !v->scores || !v->types)
        return err_set(v->e, ERR_SYSTEM, "out of memory");
    if (v->tok_len < 4)
        return err_set(v->e, ERR_USAGE, "%s: %zu bytes, shorter than its header (4)", v->tok_name,
                       v->tok_len);
    for (int i = 0; i < n; i++) {
        if (v->tok_len - at < 8)
            return err_set(v->e, ERR_USAGE, "%s: ends inside token %d (of %d)", v->tok_name, i, n);
        memcpy(&v->scores[i], v->tok + at, 4);
        int32_t len = le_i32(v->tok + at + 4);
        at += 8;
        if (len < 0 || (size_t)len > v->tok_len - at)
            return err_set(v->e, ERR_USAGE, "%s: token %d has length %d, past the file's end",
                           v->tok_name, i, (int)len);
        if (isnan(v->scores[i]))
            return err_set(v->e, ERR_USAGE, "%s: token %d's score is NaN", v->tok_name, i);
        v->types[i] = token_type(i, v->tok + at, (size_t)len);
        if (!(v->strings[i] = token_text(i, v->tok + at, (size_t)len, &v->text[i].len)))
            return err_set(v->e, ERR_SYSTEM, "out of memory");
        v->text[i].s = v->strings[i];
        at += (size_t)len;
    }
    if (at != v->tok_len)
        return err_set(v->e, ERR_USAGE, "%s: %zu bytes after the last of its %d tokens",
                       v->tok_name, v->tok_len - at, n);
    return 0;
}

/* A tensor of the checkpoint, at float offset off, borrowed. */
static void put(struct gguf_writer *w, const struct conv *v, const char *name, size_t off,
                int64_t ne0, int64_t ne1)
{
    int64_t ne[2] = { ne0, ne1 };
    gguf_w_tensor(w, name, ne1 ? 2 : 1, ne, QT_F32, v->ckpt + HEADER_INTS * 4 + 4 * off);
}

static void put_layer(struct gguf_writer *w, const struct conv *v, int l)
{
    const struct ak_config *c = &v->c;
    const struct ak_layout *a = &v->at;
    size_t d = (size_t)c->dim, kv = d / (size_t)c->heads * c->kv_heads, f = (size_t)c->hidden;
    const struct {
        const char *part;
        size_t base, floats;
        int64_t ne0, ne1;
    } P[] = {
        { "attn_q", a->wq, d * d, c->dim, c->dim },
        { "attn_k", a->wk, d * kv, c->dim, (int64_t)kv },
        { "attn_v", a->wv, d * kv, c->dim, (int64_t)kv },
        { "attn_output", a->wo, d * d, c->dim, c->dim },
        { "attn_norm", a->att_norm, d, c->dim, 0 },
        { "ffn_gate", a->w1, d * f, c->dim, c->hidden },
        { "ffn_down", a->w2, d * f, c->hidden, c->dim },
        { "ffn_up", a->w3, d * f, c->dim, c->hidden },
        { "ffn_norm", a->ffn_norm, d, c->dim, 0 },
    };
    for (size_t k = 0; k < sizeof P / sizeof P[0]; k++) {
        char name[GGUF_MAX_NAME + 1];
        snprintf(name, sizeof name, "blk.%d.%s.weight", l, P[k].part);
        put(w, v, name, P[k].base + (size_t)l * P[k].floats, P[k].ne0, P[k].ne1);
    }
}

/* The metadata as llama.cpp's converter writes it (with the checkpoint's
 * own context), then the tensors in its order. */
static void describe(struct gguf_writer *w, const struct conv *v, const char *name)
{
    const struct ak_config *c = &v->c;
    size_t n = (size_t)c->vocab;
    gguf_w_array_str(w, "tokenizer.ggml.tokens", v->text, n);
    gguf_w_array(w, "tokenizer.ggml.scores", GGUF_T_F32, v->scores, n);
    gguf_w_array(w, "tokenizer.ggml.token_type", GGUF_T_I32, v->types, n);
    gguf_w_str(w, "tokenizer.ggml.model", "llama");
    gguf_w_str(w, "general.architecture", "llama");
    gguf_w_str(w, "general.name", name);
    gguf_w_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    gguf_w_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gguf_w_u32(w, "tokenizer.ggml.eos_token_id", 2);
    gguf_w_u32(w, "llama.context_length", (uint32_t)c->seq);
    gguf_w_u32(w, "llama.embedding_length", (uint32_t)c->dim);
    gguf_w_u32(w, "llama.feed_forward_length", (uint32_t)c->hidden);
    gguf_w_u32(w, "llama.attention.head_count", (uint32_t)c->heads);
    gguf_w_u32(w, "llama.attention.head_count_kv", (uint32_t)c->kv_heads);
    gguf_w_u32(w, "llama.block_count", (uint32_t)c->layers);
    gguf_w_u32(w, "llama.rope.dimension_count", (uint32_t)(c->dim / c->heads));
    /* run.c's RMSNorm adds 1e-5 to the mean square. */
    gguf_w_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    put(w, v, "token_embd.weight", v->at.embd, c->dim, c->vocab);
    put(w, v, "output_norm.weight", v->at.out_norm, c->dim, 0);
    if (!c->shared)
        put(w, v, "output.weight", v->at.cls, c->dim, c->vocab);
    for (int l = 0; l < c->layers; l++)
        put_layer(w, v, l);
}

static void conv_free(struct conv *v)
{
    for (int i = 0; v->strings && i < v->c.vocab; i++)
        free(v->strings[i]);
    free(v->strings);
    free(v->text);
    free(v->scores);
    free(v->types);
}

/* Checks the inputs and describes the file in w. */
static int build(struct conv *v, struct gguf_writer *w, const char *name)
{
    if (read_config(v) < 0 || lay_out(v) < 0 || read_tokens(v) < 0)
        return -1;
    describe(w, v, name);
    return 0;
}

/* Converts into out (a file) or, when out is NULL, into *gguf and *len. */
static int run(struct conv *v, const char *name, const char *out, int force, unsigned char **gguf,
               size_t *len)
{
    struct gguf_writer *w = gguf_w_new();
    int rc = w ? build(v, w, name) : err_set(v->e, ERR_SYSTEM, "out of memory");
    if (rc == 0)
        rc = out ? gguf_w_write(w, out, force, v->e) : gguf_w_to_mem(w, gguf, len, v->e);
    gguf_w_free(w);
    conv_free(v);
    return rc;
}

int llama2c_to_mem(const char *ckpt_name, const unsigned char *ckpt, size_t ckpt_len,
                   const char *tok_name, const unsigned char *tok, size_t tok_len, const char *name,
                   unsigned char **gguf, size_t *len, struct err *e)
{
    struct conv v = { .ckpt_name = ckpt_name,
                      .tok_name = tok_name,
                      .ckpt = ckpt,
                      .tok = tok,
                      .ckpt_len = ckpt_len,
                      .tok_len = tok_len,
                      .e = e };
    return run(&v, name, NULL, 0, gguf, len);
}

int llama2c_convert(const char *ckpt, const char *tok, const char *name, const char *out, int force,
                    struct err *e)
{
    char *cb = NULL, *tb = NULL;
    size_t cl, tl;
    if (readfile(ckpt, LLAMA2C_MAX_BYTES, &cb, &cl, e) < 0 ||
        readfile(tok, LLAMA2C_MAX_BYTES, &tb, &tl, e) < 0) {
        free(cb);
        return -1;
    }
    struct conv v = { .ckpt_name = ckpt,
                      .tok_name = tok,
                      .ckpt = (unsigned char *)cb,
                      .tok = (unsigned char *)tb,
                      .ckpt_len = cl,
                      .tok_len = tl,
                      .e = e };
    int rc = run(&v, name, out, force, NULL, NULL);
    free(cb);
    free(tb);
    return rc;
}
