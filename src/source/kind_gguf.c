/* kind_gguf.c - a real model's logits: the lesson's GGUF file (opened by
 * data/lesson_model.c) runs its transformer body on the CPU (model/llama.h)
 * for the context, and its LM head (output.weight, or the token embeddings
 * when tied) turns the last hidden vector into 128,256 logits -- on the
 * backend, whose CPU kind reads the head in its stored type.
 *
 * The context changes a token at a time (a step forward, a step back, an
 * edited prompt, a forced token), so each KV cache is kept with the ids it
 * holds: the next call runs only what differs from the longest common
 * prefix. Several caches are kept, so that the batch view's requests (which
 * share the prompt and then part) each keep their own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/clock.h"
#include "gguf/gguf.h"
#include "gguf/gguf_llama.h"
#include "data/lesson_model.h"
#include "model/llama.h"
#include "model/model.h"
#include "model/quant.h"
#include "source/source_int.h"

/* The caches kept: one for each of the batch view's 8 requests (source/batch.h)
 * and one for the single step, so that no request evicts another's. Each
 * is allocated at the full context but resident only as far as it is used. */
#define KV_SLOTS 9

/* One KV cache and the ids it holds, and the hidden vector of its last. */
struct kv_slot {
    struct llama_ctx *c;
    int *ids;
    int len;
    float *h; /* the hidden vector after ids[len - 1], when h_ok */
    int h_ok;
    unsigned long used; /* when it last served (least recently used goes first) */
};

struct gguf_state {
    const struct lesson_gguf *g; /* the lesson's model file */
    const struct llama_model *m;
    struct model head;  /* a view of the file's head (model_borrow) */
    struct backend *be; /* where the head runs, or NULL: here */
    struct kv_slot slot[KV_SLOTS];
    unsigned long clock;
    int n_ctx;
    float *x, *logits; /* the normalized vector and V logits of the last call */
    int *ctx;          /* the context those logits are for */
    int ctx_len, ctx_cap, valid;
    int body_tokens; /* positions the body ran in the last call */
    int body_from;   /* the first of them */
    struct source_speed speed;
    float h_last[8]; /* the first entries of the last hidden vector */
    double h_norm;   /* and its length */
};

/* Reads a byte of every page of the mapped file, saying how far it got: the
 * first touch of the weights, which from a disk is most of opening. */
static void touch_weights(const struct lesson_gguf *g)
{
    const unsigned char *p = g->file->base;
    size_t n = g->file->size, chunk = (size_t)64 << 20;
    int total = (int)((n + chunk - 1) / chunk);
    volatile unsigned char sink = 0;
    for (int c = 0; c < total; c++) {
        if (g->progress)
            g->progress(g->progress_arg, "reading the weights", c, total);
        size_t end = (size_t)(c + 1) * chunk < n ? (size_t)(c + 1) * chunk : n;
        for (size_t i = (size_t)c * chunk; i < end; i += 4096)
            sink ^= p[i];
    }
    if (g->progress)
        g->progress(g->progress_arg, "reading the weights", total, total);
    (void)sink;
}

/* The forward pass's progress, layer by layer, as the request's. */
static void layer_progress(void *arg, int done, int total)
{
    const struct lesson_gguf *g = arg;
    g->progress(g->progress_arg, "running the layers", done, total);
}

static int file_runs(const struct lesson *L)
{
    return L->model.gguf != NULL;
}

static void file_close(struct source *src)
{
    struct gguf_state *s = src->state;
    if (!s)
        return;
    for (int i = 0; i < KV_SLOTS; i++) {
        llama_ctx_free(s->slot[i].c);
        free(s->slot[i].ids);
        free(s->slot[i].h);
    }
    model_free(&s->head);
    free(s->x);
    free(s->logits);
    free(s->ctx);
    free(s);
    src->state = NULL;
}

static int file_open(struct source *src, int hidden, struct err *e)
{
    (void)hidden; /* the model's own */
    const struct lesson *L = src->L;
    struct gguf_state *s = calloc(1, sizeof *s);
    if (!s)
        return err_set(e, ERR_SYSTEM, "out of memory");
    src->state = s;
    s->g = L->model.gguf;
    s->m = &L->model.gguf->llama->model;
    const struct llama_model *m = s->m;
    if (m->hp.n_vocab != L->vocab.n) {
        file_close(src);
        return err_set(e, ERR_USAGE, "%s: the head has %d rows but the vocabulary %d tokens",
                       L->model.gguf->path, m->hp.n_vocab, L->vocab.n);
    }
    /* Room for the longest context a lesson can reach: its prompt and steps. */
    s->n_ctx = LESSON_MODEL_CONTEXT;
    if (m->hp.n_ctx_train > 0 && s->n_ctx > m->hp.n_ctx_train)
        s->n_ctx = m->hp.n_ctx_train;
    s->x = malloc((size_t)m->hp.n_embd * sizeof *s->x);
    s->logits = malloc((size_t)m->hp.n_vocab * sizeof *s->logits);
    if (!s->x || !s->logits) {
        file_close(src);
        return err_set(e, ERR_SYSTEM, "out of memory for %d logits", m->hp.n_vocab);
    }
    touch_weights(L->model.gguf);
    if (model_borrow(&s->head, m->hp.n_vocab, m->hp.n_embd, m->output.data, m->output.type,
                     m->output_norm.data, m->hp.rms_eps, e) < 0) {
        file_close(src);
        return err_prefix(e, "%s", L->model.gguf->path), -1;
    }
    s->head.softcap = m->hp.switches & LLAMA_SW_SOFTCAP ? m->hp.final_softcap : 0.0f;
    return 0;
}

/* The length of the common prefix of a[0..na) and b[0..nb). */
static int common_prefix(const int *a, int na, const int *b, int nb)
{
    int n = 0;
    while (n < na && n < nb && a[n] == b[n])
        n++;
    return n;
}

/* The slot that shares the most with ctx (the least recently used among
 * those that share nothing), made if it is not there yet. */
static struct kv_slot *pick_slot(struct gguf_state *s, const int *ctx, int len, struct err *e)
{
    int best = -1, best_n = -1;
    for (int i = 0; i < KV_SLOTS; i++) {
        struct kv_slot *k = &s->slot[i];
        int n = k->c ? common_prefix(k->ids, k->len, ctx, len) : -1;
        if (best < 0 || n > best_n || (n == best_n && k->used < s->slot[best].used))
            best = i, best_n = n;
    }
    struct kv_slot *k = &s->slot[best];
    if (!k->c) {
        k->ids = malloc((size_t)s->n_ctx * sizeof *k->ids);
        k->h = malloc((size_t)s->m->hp.n_embd * sizeof *k->h);
        if (!k->ids || !k->h)
            err_set(e, ERR_SYSTEM, "out of memory for a KV cache");
        else
            k->c = llama_ctx_new(s->m, s->n_ctx, 0, e); /* NULL: e says why */
        if (!k->c) {
            free(k->ids);
            free(k->h);
            k->ids = NULL;
            k->h = NULL;
            return NULL;
        }
        k->len = 0;
        if (s->g->progress)
            llama_ctx_set_progress(k->c, layer_progress, (void *)s->g);
    }
    k->used = ++s->clock;
    return k;
}

/* The hidden vector after ctx[0..len) into slot k's h: the cache rewound to
 * what it shares with ctx, then the rest run as one batch (at least the
 * last token, whose vector is not kept unless it was the last one run). */
static int run_body(struct gguf_state *s, struct kv_slot *k, const int *ctx, int len, struct err *e)
{
    if (len < 1)
        return err_set(e, ERR_USAGE, "a model needs at least one token of context");
    if (len > s->n_ctx)
        return err_set(e, ERR_USAGE,
                       "%s: a context of %d tokens, more than the %d this model runs (its "
                       "context; --max-tokens stops the run sooner)",
                       s->g->path, len, s->n_ctx);
    int keep = common_prefix(k->ids, k->len, ctx, len);
    s->body_tokens = 0;
    s->body_from = len;
    if (keep == len && k->len == len && k->h_ok)
        return 0;
    if (keep == len)
        keep = len - 1;
    llama_ctx_rewind(k->c, keep);
    k->len = keep;
    k->h_ok = 0;
    if (llama_eval(k->c, ctx + keep, len - keep, k->h, e) < 0) {
        k->len = llama_ctx_len(k->c);
        return -1;
    }
    memcpy(k->ids + keep, ctx + keep, (size_t)(len - keep) * sizeof *ctx);
    k->len = len;
    k->h_ok = 1;
    s->body_tokens = len - keep;
    s->body_from = keep;
    return 0;
}

/* The head's product on h: the backend's, or here. */
static int run_head(struct gguf_state *s, const float *h, struct err *e)
{
    if (s->be)
        return backend_logits(s->be, h, 1, e) < 0 || backend_get_logits(s->be, 0, s->logits, e) < 0
                   ? -1
                   : 0;
    model_norm(&s->head, h, s->x);
    model_logits(&s->head, s->x, s->logits);
    return 0;
}

/* The load refused non-finite weights, so a logit that is not finite means
 * the layers overflowed float on this context: said with the model's name,
 * where the sampler would say "logit of token 17 is NaN" of nothing (and a
 * -inf would have masked the token without a word). */
static int check_logits(const struct gguf_state *s, int len, struct err *e)
{
    int n = s->m->hp.n_vocab;
    for (int i = 0; i < n; i++)
        if (!isfinite(s->logits[i]))
            return err_set(e, ERR_USAGE,
                           "%s: the model's logit of token %d is %s after a context of %d tokens "
                           "(its layers overflow float there)",
                           s->g->path, i,
                           isnan(s->logits[i])   ? "NaN"
                           : s->logits[i] > 0.0f ? "+inf"
                                                 : "-inf",
                           len);
    return 0;
}

/* Keeps what the lesson pane shows of the last hidden vector. */
static void note_hidden(struct gguf_state *s, const float *h)
{
    double ss = 0.0;
    int d = s->m->hp.n_embd;
    for (int i = 0; i < d; i++)
        ss += (double)h[i] * h[i];
    s->h_norm = sqrt(ss);
    for (int i = 0; i < 8; i++)
        s->h_last[i] = i < d ? h[i] : 0.0f;
}

static int remember_ctx(struct gguf_state *s, const int *ctx, int len, struct err *e)
{
    if (len > s->ctx_cap) {
        int *c = realloc(s->ctx, (size_t)len * sizeof *c);
        if (!c)
            return err_set(e, ERR_SYSTEM, "out of memory");
        s->ctx = c;
        s->ctx_cap = len;
    }
    if (len)
        memcpy(s->ctx, ctx, (size_t)len * sizeof *ctx);
    s->ctx_len = len;
    return 0;
}

/* Counts a call's times as llama.cpp's report does: a run that starts the
 * context or takes several positions at once is the prompt (and starts
 * the count of single positions again); a single position is one eval. */
static void note_speed(struct gguf_state *s, double body_ms, double head_ms)
{
    struct source_speed *p = &s->speed;
    double ms = body_ms + head_ms;
    p->step_tokens = s->body_tokens;
    p->step_ms = ms;
    p->head_ms = head_ms;
    if (s->body_tokens >= 2 || (s->body_tokens == 1 && s->body_from == 0)) {
        p->prompt_tokens = s->body_tokens;
        p->prompt_ms = ms;
        p->eval_runs = 0;
        p->eval_ms = 0.0;
    } else if (s->body_tokens == 1) {
        p->eval_runs++;
        p->eval_ms += ms;
    }
}

static int file_logits(struct source *src, int k, const int *ctx, int len,
                       struct source_logits *out, struct err *e)
{
    (void)k;
    struct gguf_state *s = src->state;
    if (s->valid && s->ctx_len == len && common_prefix(s->ctx, len, ctx, len) == len) {
        *out = (struct source_logits){ .f = s->logits };
        return 0;
    }
    s->valid = 0;
    double t0 = clock_ms();
    struct kv_slot *slot = pick_slot(s, ctx, len, e);
    if (!slot || run_body(s, slot, ctx, len, e) < 0)
        return -1;
    double t1 = clock_ms();
    if (run_head(s, slot->h, e) < 0)
        return -1;
    note_speed(s, t1 - t0, clock_ms() - t1);
    if (check_logits(s, len, e) < 0 || remember_ctx(s, ctx, len, e) < 0)
        return -1;
    note_hidden(s, slot->h);
    s->valid = 1;
    *out = (struct source_logits){ .f = s->logits };
    return 0;
}

static int file_peek(const struct source *src, int k, struct source_logits *out)
{
    (void)k;
    const struct gguf_state *s = src->state;
    *out = (struct source_logits){ .f = s->valid ? s->logits : NULL };
    return out->f ? 0 : -1;
}

static int file_use_backend(struct source *src, struct backend *be, struct err *e)
{
    struct gguf_state *s = src->state;
    s->be = NULL;
    s->valid = 0;
    if (backend_head(be, &s->head, e) < 0)
        return -1;
    s->be = be;
    return 0;
}

static int file_hidden_size(const struct source *src)
{
    return ((const struct gguf_state *)src->state)->m->hp.n_embd;
}

static int file_hidden(struct source *src, const int *ctx, int len, float *h, struct err *e)
{
    struct gguf_state *s = src->state;
    struct kv_slot *slot = pick_slot(s, ctx, len, e);
    if (!slot || run_body(s, slot, ctx, len, e) < 0)
        return -1;
    memcpy(h, slot->h, (size_t)s->m->hp.n_embd * sizeof *h);
    return 0;
}

/* What is unusual in the rotary embedding: how much of a head turns when
 * not all of it does (Phi-4-mini), and which of Phi-3's rotary factors this
 * context turns by, and why: the long ones only when the context exceeds
 * the original one (llama.cpp's rule, so that both run the same model).
 * Nothing for a model that turns whole heads by one set of angles. */
static void describe_rope(const struct gguf_state *s, char *buf, size_t n)
{
    const struct llama_hparams *hp = &s->m->hp;
    int len = 0;
    if (llama_rot_dims(hp) < hp->head_dim)
        len = snprintf(buf, n,
                       " Rotary angles turn the first %d of each head's %d values; the other %d "
                       "pass unturned (rope.dimension_count).",
                       llama_rot_dims(hp), hp->head_dim, hp->head_dim - llama_rot_dims(hp));
    const char *which;
    const float *f = llama_rope_factors(s->m, s->n_ctx, &which);
    if (!f || s->m->rope_freqs || len < 0 || (size_t)len >= n)
        return;
    int longer = f == s->m->rope_long;
    snprintf(buf + len, n - (size_t)len,
             " Rotary angles: the %s factors (rope_factors_%s.weight), as this context of %d "
             "positions is %s the %d the model was first trained at (llama.cpp's rule: the long "
             "factors only above it).",
             which, which, s->n_ctx, longer ? "above" : "within", hp->rope_orig_ctx);
}

/* What the lesson pane says of the last step: the hidden vector, the head,
 * and what each cost. */
static void file_describe(const struct source *src, char *buf, size_t n)
{
    const struct gguf_state *s = src->state;
    const struct llama_model *m = s->m;
    char type[32];
    quant_name(m->output.type, type, sizeof type);
    int len = snprintf(buf, n,
                       "Last hidden vector h: %d values, length %.4g, starting %.4f %.4f %.4f "
                       "%.4f. LM head %s: %d x %d %s, %.1f MB. ",
                       m->hp.n_embd, s->h_norm, s->h_last[0], s->h_last[1], s->h_last[2],
                       s->h_last[3], m->tied ? "token_embd.weight (tied)" : "output.weight",
                       m->hp.n_vocab, m->hp.n_embd, type, (double)s->head.bytes / 1e6);
    if (len < 0 || (size_t)len >= n)
        return;
    /* The times are the status line's (the whole step's), so that this
     * paragraph is the same on every run and every machine. */
    int more = snprintf(buf + len, n - (size_t)len,
                        "This step: the %d layers ran %d new position%s (the KV cache kept the "
                        "rest), the head ran on the %s.",
                        m->hp.n_layer, s->body_tokens, s->body_tokens == 1 ? "" : "s",
                        s->be ? s->be->ops->name : "CPU");
    if (more > 0 && (size_t)(len + more) < n)
        describe_rope(s, buf + len + more, n - (size_t)(len + more));
    size_t used = strlen(buf);
    if (s->head.softcap > 0.0f && used < n)
        snprintf(buf + used, n - used,
                 " Soft-capped logits (final_logit_softcapping %g): each logit is %g tanh(z / %g) "
                 "of the head's product z, so all lie between -%g and %g.",
                 (double)s->head.softcap, (double)s->head.softcap, (double)s->head.softcap,
                 (double)s->head.softcap, (double)s->head.softcap);
}

static void file_speed(const struct source *src, struct source_speed *out)
{
    const struct gguf_state *s = src->state;
    if (s)
        *out = s->speed;
}

const struct source_ops SOURCE_GGUF = {
    .kind = "model file",
    .follows_context = 1,
    .runs = file_runs,
    .open = file_open,
    .close = file_close,
    .logits = file_logits,
    .peek = file_peek,
    .use_backend = file_use_backend,
    .hidden_size = file_hidden_size,
    .hidden = file_hidden,
    .describe = file_describe,
    .speed = file_speed,
};
