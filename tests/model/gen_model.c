/* gen_model.c - the tests' GGUF models: random weights from a seed, the
 * real Llama 3 or Llama 2 tokenizer data (tokdata.h), the metadata
 * conventions of Llama 3.2, Llama 2 or Qwen 2.5 (qwen2: its keys, biases
 * on Q, K and V, rope base 10^6, Llama 3's vocabulary under Qwen 2's
 * pre-tokenizer, no BOS), or Phi-3.5-mini (phi3: Q, K and V in one
 * attn_qkv tensor, the gate and the up in one ffn_up of twice the rows, NEOX
 * pairs, long and short rotary factors with the original context --orig-ctx
 * (4,096 unless given) and the attention factor its converter computes,
 * Phi-3's own vocabulary of 32,064, Llama 2's pieces with its scores and
 * its 64 added tokens, as ggml-vocab-phi-3.gguf holds it), or Gemma 3
 * 1B (gemma3: the embedding scaled, per-head norms of Q and K, norms after
 * attention and the FFN, GELU, a sliding window of --window positions, 512
 * unless given, on every layer but each --swa-pattern-th, 6 unless given;
 * rope base 10^6, 10^4 on the sliding layers; Llama 2's pieces, Gemma's two
 * chat markers and unused control tokens up to --vocab-size, 262,144 unless
 * given), or Gemma 2 (gemma2: Gemma 3's without the Q and K norms, rope
 * base 10^4 everywhere, a window of 4,096 unless given on every other
 * layer, the scores soft-capped at --attn-cap, 50 unless given, the logits
 * at 30; 256,000 tokens unless given). --rot N turns only the first N
 * values of each head (Phi-4-mini: 96 of 128); --vocab-gguf FILE takes the
 * tokenizer of another GGUF file instead of data/'s (llama.cpp's
 * ggml-vocab-qwen2.gguf: Qwen's own). Written by logitlab's own GGUF writer
 * (gguf/gguf_write.h).
 *
 *   gen_model --arch llama3|llama2|qwen2|qwen3|phi3|gemma2|gemma3 --type TYPE [--layers N --embd N
 *             --heads N --kv-heads N --ff N --ctx N --orig-ctx N --seed N --tied 0|1
 *             --rope-scaling none|llama3 --vocab-data DIR --vocab tiny --template llama3|chatml
 *             --shape 1b|3b --threads N] -o OUT.gguf
 *
 * TYPE: F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 IQ4_NL Q2_K Q3_K Q4_K Q5_K
 * Q6_K IQ4_XS (every matrix of that type: llama-quantize --pure), or one of
 * llama.cpp's mixes, as llama-quantize makes them for a llama without
 * experts (llama-quant.cpp's llama_tensor_get_type_impl): Q6_K for the head
 * (output.weight, or the token embeddings when they are tied), and
 *   Q4_K_M, Q5_K_M: Q4_K, Q5_K, with Q6_K for attn_v and ffn_down on the
 *     layers llama.cpp's use_more_bits picks (the first and last eighth,
 *     and every third in between);
 *   Q2_K_MIX (llama-quantize's Q2_K): Q2_K, with Q3_K for attn_output and
 *     ffn_down, and for attn_v Q4_K when 4 or more heads share a KV head,
 *     else Q3_K;
 *   Q3_K_M: Q3_K, with Q4_K for attn_output, attn_v (Q5_K on layers 0 and
 *     1) and ffn_down (Q5_K on the first sixteenth of the layers);
 *   Q4_K_S: Q4_K, with Q5_K for attn_v on layers 0-3 and ffn_down on the
 *     first eighth;
 *   Q5_K_S: Q5_K.
 * A tensor whose rows do not fill the blocks of its type is refused (where
 * llama-quantize would fall back to a type of smaller blocks). Norms and
 * rope_freqs.weight are F32 in every file.
 *
 * Weights: each value is the sum of four 16-bit uniforms from Philox4x32-10
 * (key: the seed; counter: tensor, row, pair of values, 0), centred and
 * scaled to a standard deviation of 1/sqrt(row length) (0.022 at width
 * 2,048, as trained Llama weights), in integer and single float arithmetic
 * only, so every machine writes the same bits. Norm gains are 1 + 0.1 z.
 *
 * --shape 1b gives Llama 3.2 1B's shapes (16 layers, width 2,048, 32 heads,
 * 8 KV heads, FFN 8,192, tied head), --shape 3b Llama 3.2 3B's (28 layers,
 * width 3,072, 24 heads, 8 KV heads, FFN 8,192, tied head); either with
 * --layers N keeps the widths and changes the depth; --vocab tiny replaces the vocabulary
 * with 312 SentencePiece tokens (byte fallback and a few letters), for
 * small files (the fuzz harness's seeds). The file's size is printed.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "core/philox.h"
#include "gguf/gguf.h"
#include "gguf/gguf_llama.h"
#include "gguf/gguf_write.h"
#include "model/llama.h"
#include "model/quant.h"
#include "tokdata.h"

struct opts {
    const char *arch, *type, *out, *vocab_dir, *vocab, *rope, *shape;
    const char *vocab_gguf; /* --vocab-gguf FILE: that file's tokenizer (llama.cpp's ggml-vocab-*) */
    const char *tmpl; /* --template llama3|chatml: that chat template whatever the vocabulary */
    int layers, embd, heads, kv, ff, ctx, tied, threads;
    int orig_ctx; /* phi3: the context its short rotary factors are for */
    int window, swa_pattern, vocab_size; /* the gemmas' sliding window, its pattern, vocabulary */
    int head_dim; /* -1: the width over the heads (qwen3: twice that, as Qwen 3's) */
    int rot;      /* --rot: the values of a head that turn (Phi-4-mini: 96 of 128); -1: all */
    int attn_cap; /* gemma2's score soft-cap, 50 unless --attn-cap says */
    unsigned long long seed;
};

/* How a --type picks the types of the tensors: all the base type, or one
 * of llama-quantize's mixes (the comment at the top). */
enum mix { PURE, MIX_K_M, MIX_Q2_K, MIX_Q3_K_M, MIX_Q4_K_S, MIX_Q5_K_S };

/* One --type: the base type of the matrices, its mix, and llama.cpp's
 * general.file_type for it (llama_ftype, llama.h; a pure file says the
 * ftype of the mix of its base type, as llama-quantize --pure writes). */
struct type_row {
    const char *name;
    int base, mix, ftype;
};

static const struct type_row TYPES[] = {
    { "F32", QT_F32, PURE, 0 },
    { "F16", QT_F16, PURE, 1 },
    { "BF16", QT_BF16, PURE, 32 },
    { "Q8_0", QT_Q8_0, PURE, 7 },
    { "Q4_0", QT_Q4_0, PURE, 2 },
    { "Q4_1", QT_Q4_1, PURE, 3 },
    { "Q5_0", QT_Q5_0, PURE, 8 },
    { "Q5_1", QT_Q5_1, PURE, 9 },
    { "IQ4_NL", QT_IQ4_NL, PURE, 25 },
    { "Q2_K", QT_Q2_K, PURE, 10 },
    { "Q3_K", QT_Q3_K, PURE, 11 }, /* Q3_K_S */
    { "Q4_K", QT_Q4_K, PURE, 14 }, /* Q4_K_S */
    { "Q5_K", QT_Q5_K, PURE, 16 }, /* Q5_K_S */
    { "Q6_K", QT_Q6_K, PURE, 18 },
    { "IQ4_XS", QT_IQ4_XS, PURE, 30 },
    { "Q2_K_MIX", QT_Q2_K, MIX_Q2_K, 10 },
    { "Q3_K_M", QT_Q3_K, MIX_Q3_K_M, 12 },
    { "Q4_K_S", QT_Q4_K, MIX_Q4_K_S, 14 },
    { "Q4_K_M", QT_Q4_K, MIX_K_M, 15 },
    { "Q5_K_S", QT_Q5_K, MIX_Q5_K_S, 16 },
    { "Q5_K_M", QT_Q5_K, MIX_K_M, 17 },
};

enum kind { K_MAT, K_NORM, K_VALUES, K_BIAS };

/* One tensor to write: how its values are made and stored. */
struct tspec {
    char name[GGUF_MAX_NAME + 1];
    int kind, type;
    int64_t rows, cols;
    float std;           /* K_MAT */
    const float *values; /* K_VALUES: rows x cols floats */
};

struct gen {
    struct tspec *t;
    int n;
    unsigned long long seed;
    int threads;
};

/* ---- the weights --------------------------------------------------------- */

/* Two values of about N(0, 1) for pair p of row r of tensor id: each the
 * sum of four 16-bit uniforms, centred, over their standard deviation
 * (65536 sqrt(4/12)). Integer arithmetic and one float division: the same
 * bits everywhere. */
static void normal_pair(unsigned long long seed, uint32_t id, uint32_t r, uint32_t p, float *z)
{
    struct philox4x32 c = { { id, r, p, 0u } };
    struct philox4x32 o = philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
    for (int k = 0; k < 2; k++) {
        int32_t s = 0;
        for (int j = 0; j < 2; j++)
            s += (int32_t)(o.v[2 * k + j] >> 16) + (int32_t)(o.v[2 * k + j] & 0xFFFF);
        z[k] = (float)(s - 2 * 65535) / 37836.65f;
    }
}

/* Row r of tensor i as floats. */
static void make_row(const struct gen *g, int i, int64_t r, float *row)
{
    const struct tspec *t = &g->t[i];
    if (t->kind == K_VALUES) {
        memcpy(row, t->values + r * t->cols, (size_t)t->cols * sizeof *row);
        return;
    }
    for (int64_t c = 0; c < t->cols; c += 2) {
        float z[2];
        normal_pair(g->seed, (uint32_t)i, (uint32_t)r, (uint32_t)(c / 2), z);
        for (int k = 0; k < 2 && c + k < t->cols; k++)
            row[c + k] = t->kind == K_NORM   ? 1.0f + 0.1f * z[k]
                         : t->kind == K_BIAS ? 0.5f * z[k] /* Qwen's are as large */
                                             : t->std * z[k];
    }
}

struct fill_job {
    const struct gen *g;
    int i;
    int64_t r0, r1;
    unsigned char *out;
    int failed;
};

static void *fill_rows(void *arg)
{
    struct fill_job *j = arg;
    const struct tspec *t = &j->g->t[j->i];
    size_t rb = quant_row_bytes(t->type, t->cols);
    float *row = malloc((size_t)t->cols * sizeof *row);
    if (!row) {
        j->failed = 1;
        return NULL;
    }
    for (int64_t r = j->r0; r < j->r1; r++) {
        make_row(j->g, j->i, r, row);
        if (t->type == QT_F32)
            memcpy(j->out + (size_t)r * rb, row, rb);
        else
            quant_quantize(t->type, row, j->out + (size_t)r * rb, t->cols);
    }
    free(row);
    return NULL;
}

/* The writer's callback: tensor i's rows, made and stored on the threads
 * (each row depends on its counter only, so any split writes the same). */
static int fill(void *ctx, int i, void *out, size_t bytes, struct err *e)
{
    const struct gen *g = ctx;
    const struct tspec *t = &g->t[i];
    struct fill_job jobs[64];
    pthread_t th[64];
    int n = g->threads < 1 ? 1 : g->threads > 64 ? 64 : g->threads;
    if (t->rows < n)
        n = 1;
    (void)bytes;
    for (int k = 0; k < n; k++) {
        jobs[k] = (struct fill_job){ g, i, t->rows * k / n, t->rows * (k + 1) / n, out, 0 };
        if (k > 0 && pthread_create(&th[k], NULL, fill_rows, &jobs[k]) != 0)
            return err_set(e, ERR_SYSTEM, "cannot start a thread");
    }
    fill_rows(&jobs[0]);
    int failed = jobs[0].failed;
    for (int k = 1; k < n; k++) {
        pthread_join(th[k], NULL);
        failed |= jobs[k].failed;
    }
    return failed ? err_set(e, ERR_SYSTEM, "out of memory (%s)", t->name) : 0;
}

/* ---- the tensors --------------------------------------------------------- */

/* llama.cpp's use_more_bits: which layers of a _M mix get Q6_K. */
static int more_bits(int i, int n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

static int add(struct gen *g, const char *name, int kind, int type, int64_t rows, int64_t cols)
{
    struct tspec *t = &g->t[g->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->kind = kind;
    t->type = kind == K_MAT ? type : QT_F32;
    t->rows = rows;
    t->cols = cols;
    t->std = 1.0f / sqrtf((float)cols);
    if (quant_row_bytes(t->type, cols) == 0) {
        char qn[32];
        const struct qtype_info *q = quant_info(t->type);
        fprintf(stderr, "gen_model: %s: rows of %lld values do not fill %s's blocks of %d\n", name,
                (long long)cols, quant_name(t->type, qn, sizeof qn), q ? q->block : 0);
        return -1;
    }
    return 0;
}

/* Layer i's (of n) attn_v ('v'), attn_output ('o') or ffn_down ('d') in
 * the mix (the comment at the top); gqa: query heads per KV head. */
static int mix_type(const struct type_row *ty, char part, int i, int n, int gqa)
{
    switch (ty->mix) {
    case MIX_K_M:
        return part != 'o' && more_bits(i, n) ? QT_Q6_K : ty->base;
    case MIX_Q2_K:
        return part == 'v' && gqa >= 4 ? QT_Q4_K : QT_Q3_K;
    case MIX_Q3_K_M:
        return part == 'v' && i < 2 ? QT_Q5_K : part == 'd' && i < n / 16 ? QT_Q5_K : QT_Q4_K;
    case MIX_Q4_K_S:
        return (part == 'v' && i < 4) || (part == 'd' && i < n / 8) ? QT_Q5_K : ty->base;
    }
    return ty->base;
}

/* Qwen 2.5's or Qwen 3's conventions (the vocabulary, the template, the keys' defaults). */
static int qwen(const struct opts *o)
{
    return strcmp(o->arch, "qwen2") == 0 || strcmp(o->arch, "qwen3") == 0;
}

static int phi3(const struct opts *o)
{
    return strcmp(o->arch, "phi3") == 0;
}

static int gemma3(const struct opts *o)
{
    return strcmp(o->arch, "gemma3") == 0;
}

/* Gemma 2 or 3: what the two share (the post norms, the window, the
 * vocabulary, the chat template); gemma3 alone adds the Q and K norms. */
static int gemma(const struct opts *o)
{
    return gemma3(o) || strcmp(o->arch, "gemma2") == 0;
}

/* Phi-3's rotary factors, long then short (rope_factors_long.weight,
 * rope_factors_short.weight: one divisor a pair), shaped as Phi-3.5-mini's:
 * the short near 1, the long rising from 1 to about 32 for the slow pairs. */
static float *phi3_factors(int half)
{
    float *f = malloc(2 * (size_t)half * sizeof *f);
    for (int i = 0; f && i < half; i++) {
        float x = (float)i / (float)half;
        f[i] = 1.0f + 31.0f * x * x;
        f[half + i] = 1.0f + 0.1f * x;
    }
    return f;
}

/* Phi-3's layer: Q, K and V in one attn_qkv, the gate and the up in one ffn_up. */
static int plan_phi3_layer(struct gen *g, const struct opts *o, int i, int base)
{
    int64_t e = o->embd, q = (int64_t)o->heads * o->head_dim, kv = (int64_t)o->kv * o->head_dim;
    const struct {
        const char *part;
        int kind;
        int64_t rows, cols;
    } p[] = {
        { "attn_norm", K_NORM, 1, e },         { "attn_qkv", K_MAT, q + 2 * kv, e },
        { "attn_output", K_MAT, e, q },        { "ffn_norm", K_NORM, 1, e },
        { "ffn_down", K_MAT, e, o->ff },       { "ffn_up", K_MAT, 2 * (int64_t)o->ff, e },
    };
    for (size_t k = 0; k < sizeof p / sizeof p[0]; k++) {
        char name[GGUF_MAX_NAME + 1];
        snprintf(name, sizeof name, "blk.%d.%s.weight", i, p[k].part);
        if (add(g, name, p[k].kind, base, p[k].rows, p[k].cols) < 0)
            return -1;
    }
    return 0;
}

/* Every tensor of the model, in llama.cpp's order, with the mix's types. */
static int plan(struct gen *g, const struct opts *o, const struct type_row *ty, int n_vocab,
                const float *rope)
{
    int hd = o->head_dim, half = o->rot / 2, base = ty->base, gqa = o->heads / o->kv;
    int head = ty->mix != PURE ? QT_Q6_K : base;
    int64_t e = o->embd, kv = (int64_t)o->kv * hd, q = (int64_t)o->heads * hd;
    if (add(g, "token_embd.weight", K_MAT, o->tied ? head : base, n_vocab, e) < 0)
        return -1;
    if (rope && phi3(o)) { /* as its converter writes them: first */
        if (add(g, "rope_factors_long.weight", K_VALUES, QT_F32, 1, half) < 0 ||
            add(g, "rope_factors_short.weight", K_VALUES, QT_F32, 1, half) < 0)
            return -1;
        g->t[g->n - 2].values = rope;
        g->t[g->n - 1].values = rope + half;
    } else if (rope) {
        if (add(g, "rope_freqs.weight", K_VALUES, QT_F32, 1, half) < 0)
            return -1;
        g->t[g->n - 1].values = rope;
    }
    for (int i = 0; i < o->layers; i++) {
        if (phi3(o)) {
            if (plan_phi3_layer(g, o, i, base) < 0)
                return -1;
            continue;
        }
        int v = mix_type(ty, 'v', i, o->layers, gqa), out = mix_type(ty, 'o', i, o->layers, gqa);
        int down = mix_type(ty, 'd', i, o->layers, gqa);
        struct {
            const char *part;
            int kind, type;
            int64_t rows, cols;
        } p[] = {
            { "attn_norm", K_NORM, 0, 1, e },      { "attn_q", K_MAT, base, q, e },
            { "attn_k", K_MAT, base, kv, e },      { "attn_v", K_MAT, v, kv, e },
            { "attn_output", K_MAT, out, e, q },   { "ffn_norm", K_NORM, 0, 1, e },
            { "ffn_gate", K_MAT, base, o->ff, e }, { "ffn_down", K_MAT, down, e, o->ff },
            { "ffn_up", K_MAT, base, o->ff, e },
        };
        for (size_t k = 0; k < sizeof p / sizeof p[0]; k++) {
            char name[GGUF_MAX_NAME + 1];
            snprintf(name, sizeof name, "blk.%d.%s.weight", i, p[k].part);
            if (add(g, name, p[k].kind, p[k].type, p[k].rows, p[k].cols) < 0)
                return -1;
            /* Qwen 2's biases on Q, K and V: F32 vectors, as its converter keeps them */
            if (strcmp(o->arch, "qwen2") == 0 && k >= 1 && k <= 3) {
                snprintf(name, sizeof name, "blk.%d.%s.bias", i, p[k].part);
                if (add(g, name, K_BIAS, QT_F32, 1, p[k].rows) < 0)
                    return -1;
            }
            /* Qwen 3's and Gemma 3's per-head norms of Q and K: F32 gains of a head's width */
            if ((strcmp(o->arch, "qwen3") == 0 || gemma3(o)) && (k == 1 || k == 2)) {
                snprintf(name, sizeof name, "blk.%d.%s_norm.weight", i, p[k].part);
                if (add(g, name, K_NORM, 0, 1, hd) < 0)
                    return -1;
            }
            /* Gemma's norms of attention's output and the FFN's */
            if (gemma(o) && (k == 4 || k == 8)) {
                snprintf(name, sizeof name, "blk.%d.%s.weight", i,
                         k == 4 ? "post_attention_norm" : "post_ffw_norm");
                if (add(g, name, K_NORM, 0, 1, e) < 0)
                    return -1;
            }
        }
    }
    if (add(g, "output_norm.weight", K_NORM, 0, 1, e) < 0)
        return -1;
    if (!o->tied && add(g, "output.weight", K_MAT, head, n_vocab, e) < 0)
        return -1;
    return 0;
}

/* ---- the vocabulary and the metadata ------------------------------------- */

/* --vocab tiny: <unk> <s> </s>, the 256 byte tokens, then "▁" and "▁a" to
 * "▁z" and "a" to "z", scored so that longer pieces win. */
#define TINY_N 312
static int tiny_vocab(struct tokdata *d)
{
    memset(d, 0, sizeof *d);
    d->text = calloc(TINY_N, sizeof *d->text);
    d->scores = calloc(TINY_N, sizeof *d->scores);
    d->types = calloc(TINY_N, sizeof *d->types);
    d->strings = malloc(TINY_N * 8);
    if (!d->text || !d->scores || !d->types || !d->strings)
        return -1;
    char *s = d->strings;
    for (int i = 0; i < TINY_N; i++, s += 8) {
        if (i < 3)
            snprintf(s, 8, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
        else if (i < 259)
            snprintf(s, 8, "<0x%02X>", (unsigned)(i - 3));
        else if (i == 259)
            snprintf(s, 8, "\xE2\x96\x81");
        else if (i < 286)
            snprintf(s, 8, "\xE2\x96\x81%c", 'a' + (i - 260));
        else
            snprintf(s, 8, "%c", 'a' + (i - 286));
        d->text[i] = (struct tok_str){ s, strlen(s) };
        d->types[i] = i == 0    ? TOKT_UNKNOWN
                      : i < 3   ? TOKT_CONTROL
                      : i < 259 ? TOKT_BYTE
                                : TOKT_NORMAL;
        d->scores[i] = i < 259 ? 0.0f : -(float)(i - 259);
    }
    struct tok_spec *t = &d->spec;
    t->kind = TOK_SPM;
    t->n = TINY_N;
    t->text = d->text;
    t->scores = d->scores;
    t->types = d->types;
    t->bos = 1, t->eos = 2, t->unk = 0, t->eot = -1, t->pad = -1;
    t->add_bos = 1;
    t->add_space_prefix = 1;
    return 0;
}

/* A tok_str array as the writer's gguf_str array. */
static void put_strs(struct gguf_writer *w, const char *key, const struct tok_str *s, int n)
{
    struct gguf_str *a = malloc((size_t)(n ? n : 1) * sizeof *a);
    if (!a) {
        fprintf(stderr, "gen_model: out of memory\n");
        exit(3);
    }
    for (int i = 0; i < n; i++)
        a[i] = (struct gguf_str){ s[i].s, s[i].len };
    gguf_w_array_str(w, key, a, (size_t)n);
    free(a);
}

/* Llama 3's header format, in the Jinja that GGUF files carry. */
/* Qwen 2.5's template, shortened to its form (ChatML). */
#define CHATML_TEMPLATE                                                                            \
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "                  \
    "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"                                    \
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

/* Gemma 3's template, shortened to its form. */
#define GEMMA_TEMPLATE                                                                             \
    "{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + message['role'] + "       \
    "'\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"                       \
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"

/* Phi-3.5's template, shortened to its form. */
#define PHI3_TEMPLATE                                                                              \
    "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>\\n' + "          \
    "message['content'] + '<|end|>\\n' }}{% endfor %}"                                            \
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"

#define LLAMA3_TEMPLATE                                                                            \
    "{{ bos_token }}{% for message in messages %}<|start_header_id|>{{ message['role'] }}"         \
    "<|end_header_id|>\n\n{{ message['content'] | trim }}<|eot_id|>{% endfor %}"                   \
    "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}"

static void put_tokenizer(struct gguf_writer *w, const struct tok_spec *t, const char *tmpl)
{
    gguf_w_str(w, "tokenizer.ggml.model", t->kind == TOK_BPE ? "gpt2" : "llama");
    if (t->kind == TOK_BPE) {
        char pre[32];
        snprintf(pre, sizeof pre, "%.*s", (int)t->pre.len, t->pre.s);
        gguf_w_str(w, "tokenizer.ggml.pre", pre);
    }
    put_strs(w, "tokenizer.ggml.tokens", t->text, t->n);
    if (t->scores)
        gguf_w_array(w, "tokenizer.ggml.scores", GGUF_T_F32, t->scores, (size_t)t->n);
    if (t->types)
        gguf_w_array(w, "tokenizer.ggml.token_type", GGUF_T_I32, t->types, (size_t)t->n);
    if (t->n_merges)
        put_strs(w, "tokenizer.ggml.merges", t->merges, t->n_merges);
    const struct {
        const char *key;
        int id;
    } ids[] = {
        { "tokenizer.ggml.bos_token_id", t->bos },
        { "tokenizer.ggml.eos_token_id", t->eos },
        { "tokenizer.ggml.eot_token_id", t->eot },
        { "tokenizer.ggml.unknown_token_id", t->unk },
        { "tokenizer.ggml.padding_token_id", t->pad },
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i].id >= 0)
            gguf_w_u32(w, ids[i].key, (uint32_t)ids[i].id);
    if (t->add_bos >= 0) /* -1: the file said nothing (a vocabulary from --vocab-gguf) */
        gguf_w_bool(w, "tokenizer.ggml.add_bos_token", t->add_bos);
    if (t->kind == TOK_SPM && t->add_space_prefix == 0) /* Gemma's files say so */
        gguf_w_bool(w, "tokenizer.ggml.add_space_prefix", 0);
    if (tmpl)
        gguf_w_str(w, "tokenizer.chat_template", tmpl);
}

/* Phi-3's rope keys as its converter writes them: the original context,
 * and the attention factor of LongRoPE, sqrt(1 + ln(s) / ln(orig)) for a
 * context s times the original (1.190238 for Phi-3.5-mini's 32); and its
 * sliding window (Phi-3.5-mini's 262,144), which llama.cpp ignores. */
static void put_phi3(struct gguf_writer *w, const struct opts *o)
{
    double s = (double)o->ctx / o->orig_ctx;
    gguf_w_u32(w, "phi3.rope.scaling.original_context_length", (uint32_t)o->orig_ctx);
    gguf_w_f32(w, "phi3.rope.scaling.attn_factor",
               s > 1.0 ? (float)sqrt(1.0 + log(s) / log((double)o->orig_ctx)) : 1.0f);
    gguf_w_u32(w, "phi3.attention.sliding_window", 262144);
}

static void put_hparams(struct gguf_writer *w, const struct opts *o, const struct type_row *ty,
                        int llama3, int n_vocab)
{
    char name[128];
    snprintf(name, sizeof name, "logitlab test %s %s (random weights, seed %llu)", o->arch,
             ty->name, o->seed);
    const char *arch = qwen(o) || phi3(o) || gemma(o) ? o->arch : "llama";
    /* the head size said twice more */
    int said = llama3 || strcmp(o->arch, "qwen3") == 0 || gemma(o);
    gguf_w_str(w, "general.architecture", arch);
    gguf_w_str(w, "general.name", name);
    gguf_w_u32(w, "general.file_type", (uint32_t)ty->ftype);
    if (ty->base != QT_F32 && ty->base != QT_F16 && ty->base != QT_BF16)
        gguf_w_u32(w, "general.quantization_version", 2);
    const struct {
        const char *key;
        int v;
    } U[] = {
        { "block_count", o->layers },
        { "context_length", o->ctx },
        { "embedding_length", o->embd },
        { "feed_forward_length", o->ff },
        { "attention.head_count", o->heads },
        { "attention.head_count_kv", o->kv },
        /* Llama 3.2's files say the head size twice more */
        { "attention.key_length", said ? o->head_dim : -1 },
        { "attention.value_length", said ? o->head_dim : -1 },
        { "vocab_size", qwen(o) || phi3(o) || gemma(o) ? -1 : n_vocab },
        /* Qwen's and Gemma's converters leave it out when it is the head */
        { "rope.dimension_count", (qwen(o) || gemma(o)) && o->rot == o->head_dim ? -1 : o->rot },
    };
    char key[64];
    for (size_t i = 0; i < sizeof U / sizeof U[0]; i++)
        if (U[i].v >= 0)
            gguf_w_u32(w, (snprintf(key, sizeof key, "%s.%s", arch, U[i].key), key), (uint32_t)U[i].v);
    snprintf(key, sizeof key, "%s.rope.freq_base", arch); /* Qwen 2.5's: 1,000,000 */
    gguf_w_f32(w, key, qwen(o) || gemma3(o) ? 1000000.0f : llama3 ? 500000.0f : 10000.0f);
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", arch);
    gguf_w_f32(w, key, qwen(o) || gemma(o) ? 1e-6f : 1e-5f);
    if (phi3(o))
        put_phi3(w, o);
    if (gemma(o)) { /* the window (Gemma 3 1B's 512, Gemma 2's 4,096); the pattern when given */
        snprintf(key, sizeof key, "%s.attention.sliding_window", arch);
        gguf_w_u32(w, key, (uint32_t)o->window);
        snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", arch);
        if (o->swa_pattern >= 0)
            gguf_w_u32(w, key, (uint32_t)o->swa_pattern);
    }
    if (!gemma3(o) && gemma(o)) { /* Gemma 2's soft-caps, as its converter writes them */
        gguf_w_f32(w, "gemma2.attn_logit_softcapping", (float)o->attn_cap);
        gguf_w_f32(w, "gemma2.final_logit_softcapping", 30.0f);
    }
}

/* ---- the command line ---------------------------------------------------- */

static int usage(void)
{
    fprintf(stderr, "usage: gen_model --arch llama3|llama2|qwen2|qwen3|phi3|gemma2|gemma3 --type F32|F16|BF16|Q8_0|Q4_0|Q4_1|"
                    "Q5_0|Q5_1|IQ4_NL|Q2_K|Q3_K|Q4_K|\n"
                    "       Q5_K|Q6_K|IQ4_XS|Q2_K_MIX|Q3_K_M|Q4_K_S|Q4_K_M|Q5_K_S|Q5_K_M\n"
                    "       [--layers N --embd N --heads N --head-dim N --kv-heads N --ff N --ctx N --orig-ctx N --seed N\n"
                    "        --tied 0|1 --rope-scaling none|llama3 --vocab-data DIR --vocab tiny\n"
                    "        --shape 1b|3b --threads N --window N --swa-pattern N --vocab-size N --rot N\n"
                    "        --attn-cap N --vocab-gguf FILE]\n"
                    "       -o OUT.gguf\n");
    return -1;
}

/* An integer option's value, into *v; -1 with a message when it is not. */
static int num(const char *opt, const char *s, long long lo, long long hi, long long *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi) {
        fprintf(stderr, "gen_model: %s %s: want an integer from %lld to %lld\n", opt, s, lo, hi);
        return -1;
    }
    *v = x;
    return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
    const struct {
        const char *name;
        int *iv;
        long long lo, hi;
        const char **sv;
    } T[] = {
        { "--layers", &o->layers, 1, LLAMA_MAX_LAYERS, NULL },
        { "--embd", &o->embd, 2, LLAMA_MAX_EMBD, NULL },
        { "--heads", &o->heads, 1, LLAMA_MAX_HEADS, NULL },
        { "--head-dim", &o->head_dim, 2, LLAMA_MAX_EMBD, NULL },
        { "--rot", &o->rot, 2, LLAMA_MAX_EMBD, NULL },
        { "--attn-cap", &o->attn_cap, 1, 1000, NULL },
        { "--kv-heads", &o->kv, 1, LLAMA_MAX_HEADS, NULL },
        { "--ff", &o->ff, 1, 1 << 20, NULL },
        { "--ctx", &o->ctx, 1, 1 << 24, NULL },
        { "--orig-ctx", &o->orig_ctx, 1, 1 << 24, NULL },
        { "--window", &o->window, 0, 1 << 24, NULL },
        { "--swa-pattern", &o->swa_pattern, 0, LLAMA_MAX_LAYERS, NULL },
        { "--vocab-size", &o->vocab_size, 1, 1 << 22, NULL },
        { "--tied", &o->tied, 0, 1, NULL },
        { "--threads", &o->threads, 1, 64, NULL },
        { "--arch", NULL, 0, 0, &o->arch },
        { "--type", NULL, 0, 0, &o->type },
        { "--rope-scaling", NULL, 0, 0, &o->rope },
        { "--vocab-data", NULL, 0, 0, &o->vocab_dir },
        { "--vocab-gguf", NULL, 0, 0, &o->vocab_gguf },
        { "--vocab", NULL, 0, 0, &o->vocab },
        { "--shape", NULL, 0, 0, &o->shape },
        { "--template", NULL, 0, 0, &o->tmpl },
        { "-o", NULL, 0, 0, &o->out },
    };
    for (int i = 1; i < argc; i += 2) {
        size_t k = 0;
        while (k < sizeof T / sizeof T[0] && strcmp(argv[i], T[k].name) != 0)
            k++;
        int seed = strcmp(argv[i], "--seed") == 0;
        if ((k == sizeof T / sizeof T[0] && !seed) || i + 1 >= argc)
            return usage();
        long long v;
        if (seed) {
            char *end;
            errno = 0;
            o->seed = strtoull(argv[i + 1], &end, 10);
            if (errno || *end || end == argv[i + 1])
                return usage();
        } else if (T[k].sv) {
            *T[k].sv = argv[i + 1];
        } else if (num(argv[i], argv[i + 1], T[k].lo, T[k].hi, &v) < 0) {
            return -1;
        } else {
            *T[k].iv = (int)v;
        }
    }
    return o->arch && o->type && o->out ? 0 : usage();
}

/* The shape and conventions of the architecture, for what was not given. */
static int defaults(struct opts *o)
{
    int l3 = strcmp(o->arch, "llama3") == 0 || qwen(o) || phi3(o) || gemma(o);
    int b1 = o->shape && strcmp(o->shape, "1b") == 0, b3 = o->shape && strcmp(o->shape, "3b") == 0;
    if (!l3 && strcmp(o->arch, "llama2") != 0)
        return fprintf(stderr,
                       "gen_model: --arch %s: llama3, llama2, qwen2, qwen3, phi3, gemma2 or gemma3\n",
                       o->arch),
               -1;
    if ((qwen(o) || phi3(o) || gemma(o)) && (o->shape || (o->rope && strcmp(o->rope, "none") != 0)))
        return fprintf(stderr, "gen_model: --arch %s takes no --shape and no rope scaling\n",
                       o->arch),
               -1;
    if (o->shape && !b1 && !b3)
        return fprintf(stderr, "gen_model: --shape %s: 1b or 3b\n", o->shape), -1;
    if (phi3(o)) { /* Phi-3.5-mini's: untied, 128K tokens over an original 4K */
        o->tied = o->tied < 0 ? 0 : o->tied;
        o->ctx = o->ctx < 0 ? 131072 : o->ctx;
        o->orig_ctx = o->orig_ctx < 0 ? 4096 : o->orig_ctx;
        o->rope = "long and short factors";
    }
    const int d3[] = { 2, 256, 4, 2, 768, 131072, 1 }, d2[] = { 2, 256, 4, 4, 768, 4096, 0 };
    /* Llama 3.2 1B's and 3B's config.json: layers, width, heads, KV heads, FFN. */
    const int d1b[] = { 16, 2048, 32, 8, 8192, 131072, 1 };
    const int d3b[] = { 28, 3072, 24, 8, 8192, 131072, 1 };
    const int *d = b1 ? d1b : b3 ? d3b : l3 ? d3 : d2;
    int *f[] = { &o->layers, &o->embd, &o->heads, &o->kv, &o->ff, &o->ctx, &o->tied };
    for (int i = 0; i < 7; i++)
        if (*f[i] < 0)
            *f[i] = d[i];
    if (!o->rope)
        o->rope = l3 && !qwen(o) && !gemma(o) ? "llama3" : "none";
    if (!phi3(o) && o->orig_ctx >= 0)
        return fprintf(stderr, "gen_model: --orig-ctx is phi3's\n"), -1;
    if (!gemma(o) && (o->window >= 0 || o->swa_pattern >= 0))
        return fprintf(stderr, "gen_model: --window and --swa-pattern are the gemmas'\n"), -1;
    if (!gemma(o) && !qwen(o) && o->vocab_size >= 0)
        return fprintf(stderr, "gen_model: --vocab-size is the gemmas' and the qwens'\n"), -1;
    if (o->attn_cap >= 0 && (!gemma(o) || gemma3(o)))
        return fprintf(stderr, "gen_model: --attn-cap is gemma2's\n"), -1;
    o->attn_cap = o->attn_cap < 0 ? 50 : o->attn_cap;
    if (gemma(o)) { /* Gemma 3 1B's window (Gemma 2's), and the vocabulary's size */
        o->window = o->window < 0 ? (gemma3(o) ? 512 : 4096) : o->window;
        o->vocab_size = o->vocab_size < 0 ? (gemma3(o) ? 262144 : 256000) : o->vocab_size;
    }
    if (!phi3(o) && strcmp(o->rope, "none") != 0 && strcmp(o->rope, "llama3") != 0)
        return fprintf(stderr, "gen_model: --rope-scaling %s: none or llama3\n", o->rope), -1;
    if (o->tmpl && strcmp(o->tmpl, "llama3") != 0 && strcmp(o->tmpl, "chatml") != 0)
        return fprintf(stderr, "gen_model: --template %s: llama3 or chatml\n", o->tmpl), -1;
    if (o->vocab_gguf && (o->vocab || o->vocab_size >= 0 || o->vocab_dir))
        return fprintf(stderr, "gen_model: --vocab-gguf takes no other vocabulary option\n"), -1;
    if (o->vocab && strcmp(o->vocab, "tiny") != 0)
        return fprintf(stderr, "gen_model: --vocab %s: only tiny\n", o->vocab), -1;
    if (o->head_dim < 0 && o->embd % o->heads == 0)
        o->head_dim = o->embd / o->heads * (strcmp(o->arch, "qwen3") == 0 ? 2 : 1);
    if (o->head_dim < 0 || o->head_dim % 2 != 0 || o->heads % o->kv != 0)
        return fprintf(stderr,
                       "gen_model: --embd %d, --heads %d, --kv-heads %d: the width must be an "
                       "even multiple of the heads, the heads a multiple of the KV heads\n",
                       o->embd, o->heads, o->kv),
               -1;
    if (o->rot < 0)
        o->rot = o->head_dim;
    if (o->rot % 2 != 0 || o->rot > o->head_dim)
        return fprintf(stderr, "gen_model: --rot %d: an even number, at most the head (%d)\n",
                       o->rot, o->head_dim),
               -1;
    return 0;
}

/* The Llama 3.2 frequency divisors (factor 32, low 1, high 4, 8,192), as
 * llama.cpp's converter stores them in rope_freqs.weight. */
static float *llama3_rope(const struct opts *o)
{
    struct llama_hparams hp = { 0 };
    hp.head_dim = o->head_dim;
    hp.n_rot = o->rot;
    hp.rope_base = 500000.0f;
    hp.rope_factor = 32.0f;
    hp.rope_low_freq = 1.0f;
    hp.rope_high_freq = 4.0f;
    hp.rope_orig_ctx = 8192;
    int half = hp.head_dim / 2;
    double *div = malloc((size_t)half * sizeof *div);
    float *f = malloc((size_t)half * sizeof *f);
    if (div && f) {
        llama_rope_divisors(&hp, div);
        for (int i = 0; i < half; i++)
            f[i] = (float)div[i];
    }
    free(div);
    return f;
}

/* Tokens added after the data's: the named ones (control tokens scored
 * named_score), then padding spelled pad_fmt with its number, of pad_type
 * and pad_score, up to total. */
struct added {
    const char *const *named;
    int n_named, total;
    float named_score;
    const char *pad_fmt; /* "[PAD%d]" */
    int pad_type;
    float pad_score;
};

static int add_tokens(struct tokdata *td, const struct added *a, struct err *e)
{
    int n0 = td->spec.n, n = a->total;
    struct tok_str *text = realloc(td->text, (size_t)n * sizeof *text);
    if (text)
        td->text = text;
    /* a byte-level BPE vocabulary has no scores: it gets none */
    float *scores = text && td->scores ? realloc(td->scores, (size_t)n * sizeof *scores) : NULL;
    if (scores)
        td->scores = scores;
    int32_t *types = text && (scores || !td->scores)
                         ? realloc(td->types, (size_t)n * sizeof *types)
                         : NULL;
    if (types)
        td->types = types;
    char *pads = types ? malloc((size_t)(n - n0) * 24) : NULL;
    if (!pads)
        return err_set(e, ERR_SYSTEM, "out of memory");
    td->extra = pads;
    for (int i = n0; i < n; i++) {
        int k = i - n0, named = k < a->n_named;
        if (!named)
            snprintf(pads + (size_t)k * 24, 24, a->pad_fmt, i);
        const char *s = named ? a->named[k] : pads + (size_t)k * 24;
        text[i] = (struct tok_str){ s, strlen(s) };
        if (scores)
            scores[i] = named ? a->named_score : a->pad_score;
        types[i] = named ? TOKT_CONTROL : a->pad_type;
    }
    td->spec.n = n;
    td->spec.text = text, td->spec.scores = td->scores, td->spec.types = types;
    return 0;
}

/* Where Phi-3's 32,000 first tokens differ from Llama 2's data (they are
 * the same pieces, as ggml-vocab-phi-3.gguf holds them): <unk>, <s> and
 * </s> scored -1000, </s> user-defined; a normal piece k scored -(k - 259);
 * the 17 pieces made of U+2581 alone (one to 16 of them) scored -10^9, so
 * that spaces never merge. */
static void phi3_scores(struct tokdata *td)
{
    for (int k = 0; k < 32000 && k < td->spec.n; k++) {
        const struct tok_str *x = &td->text[k];
        int spaces = x->len > 0 && x->len % 3 == 0;
        for (size_t i = 0; spaces && i < x->len; i += 3)
            spaces = memcmp(x->s + i, "\xE2\x96\x81", 3) == 0;
        if (k < 3)
            td->scores[k] = -1000.0f;
        else if (k >= 259)
            td->scores[k] = spaces ? -1e9f : -(float)(k - 259);
    }
    td->types[0] = TOKT_CONTROL;
    td->types[2] = TOKT_USER_DEFINED;
}

/* Phi-3's vocabulary: Llama 2's 32,000 pieces, then its 64 added tokens
 * (ids 32000..32063, as its GGUF files have them: eleven control tokens for
 * the end of text and the chat, scored -1000, then [PADn] of type unknown,
 * scored -10000); the end of text is its EOS and its padding. */
static int phi3_vocab(struct tokdata *td, struct err *e)
{
    static const char *const NAMED[] = { "<|endoftext|>",    "<|assistant|>",    "<|placeholder1|>",
                                         "<|placeholder2|>", "<|placeholder3|>", "<|placeholder4|>",
                                         "<|system|>",       "<|end|>",          "<|placeholder5|>",
                                         "<|placeholder6|>", "<|user|>" };
    const struct added a = { NAMED, 11, td->spec.n + 64, -1000.0f, "[PAD%d]", TOKT_UNKNOWN, -10000.0f };
    int n0 = td->spec.n;
    if (add_tokens(td, &a, e) < 0)
        return -1;
    td->spec.eos = td->spec.pad = n0;
    phi3_scores(td);
    return 0;
}

/* The stand-in for Gemma 3's vocabulary (which is not in the tree): Llama 2's
 * 32,000 pieces, then <start_of_turn> and <end_of_turn> (its chat's
 * markers, the second its end of turn), then unused control tokens up to
 * Gemma 3's 262,144 (or --vocab-size); no space prefix, as Gemma's files say. */
static int gemma3_vocab(struct tokdata *td, int total, struct err *e)
{
    static const char *const NAMED[] = { "<start_of_turn>", "<end_of_turn>" };
    const struct added a = { NAMED, 2, total, 0.0f, "<unused%d>", TOKT_CONTROL, 0.0f };
    int n0 = td->spec.n;
    if (total < n0 + 2)
        return err_set(e, ERR_USAGE, "--vocab-size %d: at least %d for gemma3", total, n0 + 2);
    if (add_tokens(td, &a, e) < 0)
        return -1;
    td->spec.eot = n0 + 1;
    td->spec.add_space_prefix = 0;
    return 0;
}

/* The tokenizer of another GGUF file, borrowed: llama.cpp's
 * ggml-vocab-qwen2.gguf gives Qwen's own tokens, merges and types. td's
 * spec points into the open file, which the caller closes after the model
 * is written (gguf_llama_free, then gguf_close). */
static int borrow_vocab(const char *path, struct tokdata *td, struct gguf **g,
                        struct gguf_llama **L, struct err *e)
{
    if (!(*g = gguf_open(path, e)) || !(*L = gguf_llama_vocab_new(*g, e)))
        return -1;
    td->spec = (*L)->tok;
    return 0;
}

static int load_vocab(const struct opts *o, struct tokdata *td, struct gguf **g,
                      struct gguf_llama **L, struct err *e)
{
    memset(td, 0, sizeof *td);
    if (o->vocab_gguf)
        return borrow_vocab(o->vocab_gguf, td, g, L, e);
    if (o->vocab)
        return tiny_vocab(td) < 0 ? err_set(e, ERR_SYSTEM, "out of memory") : 0;
    const char *dir = o->vocab_dir ? o->vocab_dir : "data";
    if (strcmp(o->arch, "llama2") == 0)
        return tokdata_llama2(td, dir, e);
    if (phi3(o))
        return tokdata_llama2(td, dir, e) < 0 ? -1 : phi3_vocab(td, e);
    if (gemma(o))
        return tokdata_llama2(td, dir, e) < 0 ? -1 : gemma3_vocab(td, o->vocab_size, e);
    if (tokdata_llama3(td, dir, e) < 0)
        return -1;
    if (qwen(o)) { /* Llama 3's byte-level BPE under Qwen 2's pre-tokenizer and no BOS, */
        td->spec.pre = (struct tok_str){ "qwen2", 5 };
        td->spec.add_bos = 0;
        /* two reserved tokens standing in for ChatML's, as Qwen's vocabulary has them */
        td->text[128002] = (struct tok_str){ "<|im_start|>", 12 };
        td->text[128003] = (struct tok_str){ "<|im_end|>", 10 };
        /* --vocab-size: padded as Qwen's own files are, to 151,936 rows */
        const struct added a = { NULL, 0, o->vocab_size, 0.0f, "[PAD%d]", TOKT_CONTROL, 0.0f };
        if (o->vocab_size > 0 && o->vocab_size < td->spec.n)
            return err_set(e, ERR_USAGE, "--vocab-size %d: at least %d for %s", o->vocab_size,
                           td->spec.n, o->arch);
        if (o->vocab_size > td->spec.n && add_tokens(td, &a, e) < 0)
            return -1;
    }
    return 0;
}

/* A mix's tensors that are not of its base type: "; attn_v Q5_K: layers 0 1". */
static void report_mix(const struct opts *o, const struct type_row *ty)
{
    static const struct {
        char part;
        const char *name;
    } PARTS[] = { { 'v', "attn_v" }, { 'o', "attn_output" }, { 'd', "ffn_down" } };
    static const int MORE[] = { QT_Q3_K, QT_Q4_K, QT_Q5_K, QT_Q6_K };
    char qn[32];
    printf("; %s Q6_K", o->tied ? "token_embd" : "output");
    for (size_t p = 0; p < sizeof PARTS / sizeof PARTS[0]; p++)
        for (size_t t = 0; t < sizeof MORE / sizeof MORE[0]; t++) {
            int first = 1;
            for (int i = 0; i < o->layers; i++) {
                if (MORE[t] == ty->base ||
                    mix_type(ty, PARTS[p].part, i, o->layers, o->heads / o->kv) != MORE[t])
                    continue;
                if (first)
                    printf("; %s %s: layers", PARTS[p].name, quant_name(MORE[t], qn, sizeof qn));
                printf(" %d", i);
                first = 0;
            }
        }
}

/* What the file holds, on one line after its size. */
static void report(const struct opts *o, const struct type_row *ty, int n_vocab, uint64_t size)
{
    printf("%s: %llu bytes: %s %s, %d layers, width %d, %d heads (%d KV), FFN %d, %d tokens, %s "
           "head, rope scaling %s",
           o->out, (unsigned long long)size, o->arch, ty->name, o->layers, o->embd, o->heads, o->kv,
           o->ff, n_vocab, o->tied ? "tied" : "untied", o->rope);
    if (ty->mix != PURE)
        report_mix(o, ty);
    printf("\n");
}

static int build(const struct opts *o, const struct type_row *ty, const struct tok_spec *tok,
                 struct gen *g, const float *rope, struct err *e)
{
    struct gguf_writer *w = gguf_w_new();
    if (!w)
        return err_set(e, ERR_SYSTEM, "out of memory");
    int l3 = strcmp(o->arch, "llama3") == 0;
    put_hparams(w, o, ty, l3, tok->n);
    /* the template names the vocabulary's tokens (--template writes one anyway,
     * to test a vocabulary without them) */
    const char *tmpl = l3 && !o->vocab ? LLAMA3_TEMPLATE
                       : qwen(o)       ? CHATML_TEMPLATE
                       : phi3(o)       ? PHI3_TEMPLATE
                       : gemma(o)     ? GEMMA_TEMPLATE
                                       : NULL;
    if (o->tmpl)
        tmpl = strcmp(o->tmpl, "chatml") == 0 ? CHATML_TEMPLATE : LLAMA3_TEMPLATE;
    put_tokenizer(w, tok, tmpl);
    int rc = plan(g, o, ty, tok->n, rope);
    for (int i = 0; rc == 0 && i < g->n; i++) {
        const struct tspec *t = &g->t[i];
        int64_t ne[2] = { t->cols, t->rows };
        if (gguf_w_tensor_fill(w, t->name, t->rows > 1 ? 2 : 1, ne, t->type, fill, g) < 0)
            rc = -1;
    }
    if (rc == 0)
        rc = gguf_w_write(w, o->out, 1, e);
    else
        err_set(e, ERR_USAGE, "cannot plan the tensors");
    if (rc == 0)
        report(o, ty, tok->n, gguf_w_size(w));
    gguf_w_free(w);
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o = { .layers = -1,
                      .head_dim = -1,
                      .rot = -1,
                      .attn_cap = -1,
                      .embd = -1,
                      .heads = -1,
                      .kv = -1,
                      .ff = -1,
                      .ctx = -1,
                      .orig_ctx = -1,
                      .window = -1,
                      .swa_pattern = -1,
                      .vocab_size = -1,
                      .tied = -1,
                      .threads = (int)sysconf(_SC_NPROCESSORS_ONLN),
                      .seed = 1 };
    if (parse(argc, argv, &o) < 0 || defaults(&o) < 0)
        return 2;
    const struct type_row *ty = NULL;
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (strcmp(o.type, TYPES[i].name) == 0)
            ty = &TYPES[i];
    if (!ty)
        return fprintf(stderr, "gen_model: --type %s is not one of those listed\n", o.type), 2;
    struct err e = { 0, "" };
    struct tokdata td;
    struct gguf *vg = NULL;
    struct gguf_llama *vl = NULL;
    if (load_vocab(&o, &td, &vg, &vl, &e) < 0) {
        fprintf(stderr, "gen_model: %s\n", e.msg);
        tokdata_free(&td);
        gguf_llama_free(vl);
        gguf_close(vg);
        return e.code ? e.code : 3;
    }
    struct gen g = { calloc((size_t)o.layers * 16 + 4, sizeof(struct tspec)), 0, o.seed, o.threads };
    float *rope = phi3(&o)                      ? phi3_factors(o.rot / 2)
                  : strcmp(o.rope, "llama3") == 0 ? llama3_rope(&o)
                                                  : NULL;
    int rc = 3;
    if (g.t && (rope || strcmp(o.rope, "llama3") != 0))
        rc = build(&o, ty, &td.spec, &g, rope, &e) == 0 ? 0 : e.code ? e.code : 3;
    if (rc)
        fprintf(stderr, "gen_model: %s\n", e.msg[0] ? e.msg : "out of memory");
    free(rope);
    free(g.t);
    tokdata_free(&td);
    gguf_llama_free(vl);
    gguf_close(vg);
    return rc;
}
