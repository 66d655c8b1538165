/* llama.c - the transformer body on the CPU (llama.h).
 *
 * One pass takes up to LLAMA_BATCH positions through every layer:
 *
 *   x = embedding rows of the tokens
 *   per layer:  xb = RMSNorm(x) * attn_norm
 *               q, k, v = Wq xb, Wk xb, Wv xb; rotate q and k; k, v -> cache
 *               x += Wo attention(q, cache)
 *               xb = RMSNorm(x) * ffn_norm
 *               x += Wdown (silu(Wgate xb) * Wup xb)
 *
 * Every product reads each weight row once for all the positions of the
 * pass (quant_dot_n), a few positions at a time so that their activations
 * stay in the cache. The rows of each matrix, and the (position, head)
 * pairs of attention, are split into tasks for the thread pool; each output
 * element is computed by one task in one fixed order, so the result is the
 * same bits whatever the number of threads, and a prompt run as one batch
 * gives the same bits as the same tokens run one at a time. The last layer
 * goes past its K and V only for the eval's last position (the one output).
 *
 * Precision: the products stay in float (quant_dot), the sums that are
 * cheap (the RMSNorm's sum of squares, the softmax's denominator) are in
 * double, the rotary angles are computed in double from the position.
 */
#include "model/llama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/cpus.h"
#include "model/llama_int.h"
#include "model/quant.h"

/* ---- a pass ------------------------------------------------------------ */

static void run_timed(struct llama_ctx *c, pool_fn fn, struct job *jb, int tasks, double *ms)
{
    double t0 = clock_ms();
    pool_run(c->pool, fn, jb, tasks);
    *ms += clock_ms() - t0;
}

/* One layer for the nb tokens of a pass. Past attention's products only the
 * tokens from j0 on are needed (the last layer keeps only the output's). */
static void layer_pass(struct llama_ctx *c, int layer, int nb, int j0)
{
    const struct llama_hparams *hp = &c->m->hp;
    struct job jb = { .c = c, .L = &c->m->layers[layer], .layer = layer, .pos0 = c->len, .nx = nb };
    llama_norm_rows(c, &jb.L->attn_norm, 0, nb);
    jb.chunk = llama_task_rows(c->q_dim, c->threads);
    if (hp->switches &
        (LLAMA_SW_ROPE_NEOX | LLAMA_SW_QK_NORM)) /* whole heads: a NEOX pair or a norm spans them */
        jb.chunk = (jb.chunk + hp->head_dim - 1) / hp->head_dim * hp->head_dim;
    jb.tq = llama_tasks_of(c->q_dim, jb.chunk);
    jb.tk = llama_tasks_of(c->kv_dim, jb.chunk);
    run_timed(c, llama_job_qkv, &jb, jb.tq + 2 * jb.tk, &c->prof.matmul_ms);
    jb.j0 = j0;
    jb.nx = nb - j0;
    if (jb.nx == 0)
        return;
    run_timed(c, llama_job_attention, &jb, jb.nx * hp->n_head, &c->prof.attention_ms);
    jb.chunk = llama_task_rows(hp->n_embd, c->threads);
    run_timed(c, llama_job_output, &jb, llama_tasks_of(hp->n_embd, jb.chunk), &c->prof.matmul_ms);
    if (hp->switches & LLAMA_SW_POST_NORMS)
        llama_post_norm_add(c, &jb.L->attn_post_norm, j0, jb.nx);
    llama_norm_rows(c, &jb.L->ffn_norm, j0, jb.nx);
    jb.chunk = llama_task_rows(hp->n_ff, c->threads);
    run_timed(c, llama_job_gate_up, &jb, llama_tasks_of(hp->n_ff, jb.chunk), &c->prof.matmul_ms);
    jb.chunk = llama_task_rows(hp->n_embd, c->threads);
    run_timed(c, llama_job_down, &jb, llama_tasks_of(hp->n_embd, jb.chunk), &c->prof.matmul_ms);
    if (hp->switches & LLAMA_SW_POST_NORMS)
        llama_post_norm_add(c, &jb.L->ffn_post_norm, j0, jb.nx);
}

/* nb tokens at the positions after those held; last: the eval's last pass
 * (whose last token is the output). */
static void batch_pass(struct llama_ctx *c, const int *tokens, int nb, int last)
{
    const struct llama_model *m = c->m;
    int d = m->hp.n_embd;
    size_t rb = quant_row_bytes(m->tok_embd.type, m->tok_embd.cols);
    /* Gemma scales the rows by sqrt(n_embd) in float, as ggml_scale does */
    float scale = m->hp.switches & LLAMA_SW_EMBD_SCALE ? sqrtf((float)d) : 1.0f;
    for (int j = 0; j < nb; j++) {
        float *x = c->x + (size_t)j * (size_t)d;
        quant_dequant(m->tok_embd.type, (const char *)m->tok_embd.data + (size_t)tokens[j] * rb, x,
                      d);
        for (int i = 0; scale != 1.0f && i < d; i++)
            x[i] *= scale;
    }
    llama_rope_table(c, c->len, nb);
    for (int l = 0; l < m->hp.n_layer; l++) {
        layer_pass(c, l, nb, l < m->hp.n_layer - 1 ? 0 : last ? nb - 1 : nb);
        if (c->progress)
            c->progress(c->progress_arg, ++c->done, c->total);
    }
    c->len += nb;
}

int llama_eval(struct llama_ctx *c, const int *tokens, int n, float *h, struct err *e)
{
    const struct llama_hparams *hp = &c->m->hp;
    if (n <= 0)
        return err_set(e, ERR_USAGE, "llama: nothing to evaluate (%d tokens)", n);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= hp->n_vocab)
            return err_set(e, ERR_USAGE,
                           "llama: token id %d (at %d) is outside the vocabulary (0 to %d)",
                           tokens[i], i, hp->n_vocab - 1);
    if (n > c->n_ctx - c->len)
        return err_set(e, ERR_USAGE,
                       "llama: %d more tokens do not fit: the context holds %d positions and "
                       "%d are used",
                       n, c->n_ctx, c->len);
    double t0 = clock_ms();
    int nb = 0;
    c->done = 0;
    c->total = (n + LLAMA_BATCH - 1) / LLAMA_BATCH * hp->n_layer;
    for (int done = 0; done < n; done += nb) {
        nb = n - done < LLAMA_BATCH ? n - done : LLAMA_BATCH;
        batch_pass(c, tokens + done, nb, done + nb == n);
    }
    memcpy(h, c->x + (size_t)(nb - 1) * (size_t)hp->n_embd, (size_t)hp->n_embd * sizeof *h);
    c->prof.total_ms += clock_ms() - t0;
    c->prof.evals++;
    c->prof.tokens += n;
    return 0;
}

void llama_final_norm(const struct llama_model *m, const float *h, float *out)
{
    llama_rms_norm(h, m->output_norm.data, m->hp.n_embd, m->hp.rms_eps, out);
}

int llama_ctx_threads(const struct llama_ctx *c)
{
    return pool_threads(c->pool);
}

int llama_ctx_len(const struct llama_ctx *c)
{
    return c->len;
}

void llama_ctx_rewind(struct llama_ctx *c, int n)
{
    if (n >= 0 && n < c->len)
        c->len = n;
}

void llama_ctx_set_progress(struct llama_ctx *c, llama_progress_fn fn, void *arg)
{
    c->progress = fn;
    c->progress_arg = arg;
}

void llama_ctx_prof(const struct llama_ctx *c, struct llama_prof *p)
{
    *p = c->prof;
}

void llama_ctx_prof_reset(struct llama_ctx *c)
{
    memset(&c->prof, 0, sizeof c->prof);
}

/* ---- making a context -------------------------------------------------- */

/* A tensor of the model: present, rows x cols, of a type quant.h reads (F32
 * for the norms' gains). */
static int check_tensor(const struct qtensor *t, const char *name, int layer, int64_t rows,
                        int64_t cols, int want_f32, struct err *e)
{
    char full[48], tn[32];
    if (layer >= 0)
        snprintf(full, sizeof full, "blk.%d.%s", layer, name);
    else
        snprintf(full, sizeof full, "%s", name);
    const struct qtype_info *qi = quant_info(t->type);
    if (!t->data)
        return err_set(e, ERR_USAGE, "llama: tensor %s is missing", full);
    if (!qi || (want_f32 && t->type != QT_F32))
        return err_set(e, ERR_USAGE, "llama: tensor %s is of type %s (%s)", full,
                       quant_name(t->type, tn, sizeof tn), want_f32 ? "want F32" : "unsupported");
    if (t->rows != rows || t->cols != cols || cols % qi->block != 0)
        return err_set(
            e, ERR_USAGE, "llama: tensor %s has %lld rows of %lld values, want %lld rows of %lld",
            full, (long long)t->rows, (long long)t->cols, (long long)rows, (long long)cols);
    return 0;
}

static int check_layers(const struct llama_model *m, int q_dim, int kv_dim, struct err *e)
{
    const struct llama_hparams *hp = &m->hp;
    int d = hp->n_embd, ff = hp->n_ff;
    for (int l = 0; l < hp->n_layer; l++) {
        const struct llama_layer *L = &m->layers[l];
        if (check_tensor(&L->attn_norm, "attn_norm", l, 1, d, 1, e) < 0 ||
            check_tensor(&L->wq, "attn_q", l, q_dim, d, 0, e) < 0 ||
            check_tensor(&L->wk, "attn_k", l, kv_dim, d, 0, e) < 0 ||
            check_tensor(&L->wv, "attn_v", l, kv_dim, d, 0, e) < 0 ||
            check_tensor(&L->wo, "attn_output", l, d, q_dim, 0, e) < 0 ||
            check_tensor(&L->ffn_norm, "ffn_norm", l, 1, d, 1, e) < 0 ||
            check_tensor(&L->w_gate, "ffn_gate", l, ff, d, 0, e) < 0 ||
            check_tensor(&L->w_up, "ffn_up", l, ff, d, 0, e) < 0 ||
            check_tensor(&L->w_down, "ffn_down", l, d, ff, 0, e) < 0)
            return -1;
        if ((hp->switches & LLAMA_SW_QKV_BIAS) &&
            (check_tensor(&L->bq, "attn_q.bias", l, 1, q_dim, 1, e) < 0 ||
             check_tensor(&L->bk, "attn_k.bias", l, 1, kv_dim, 1, e) < 0 ||
             check_tensor(&L->bv, "attn_v.bias", l, 1, kv_dim, 1, e) < 0))
            return -1;
        if ((hp->switches & LLAMA_SW_QK_NORM) &&
            (check_tensor(&L->q_norm, "attn_q_norm", l, 1, hp->head_dim, 1, e) < 0 ||
             check_tensor(&L->k_norm, "attn_k_norm", l, 1, hp->head_dim, 1, e) < 0))
            return -1;
        if ((hp->switches & LLAMA_SW_POST_NORMS) &&
            (check_tensor(&L->attn_post_norm, "post_attention_norm", l, 1, d, 1, e) < 0 ||
             check_tensor(&L->ffn_post_norm, "post_ffw_norm", l, 1, d, 1, e) < 0))
            return -1;
    }
    return 0;
}

static int check_hparams(const struct llama_hparams *hp, int has_freqs, int has_long, struct err *e)
{
    if (hp->n_layer < 1 || hp->n_layer > LLAMA_MAX_LAYERS || hp->n_embd < 1 ||
        hp->n_embd > LLAMA_MAX_EMBD || hp->n_head < 1 || hp->n_head > LLAMA_MAX_HEADS ||
        hp->n_ff < 1 || hp->n_ff > 16 * LLAMA_MAX_EMBD || hp->n_vocab < 1)
        return err_set(e, ERR_USAGE,
                       "llama: a model of %d layers, width %d, %d heads, FFN %d, %d tokens is "
                       "out of range",
                       hp->n_layer, hp->n_embd, hp->n_head, hp->n_ff, hp->n_vocab);
    if (hp->n_head_kv < 1 || hp->n_head % hp->n_head_kv != 0)
        return err_set(e, ERR_USAGE, "llama: %d heads cannot share %d KV heads", hp->n_head,
                       hp->n_head_kv);
    if (hp->head_dim < 2 || hp->head_dim % 2 != 0 || hp->head_dim > LLAMA_MAX_EMBD)
        return err_set(e, ERR_USAGE, "llama: a head of %d values (want an even number)",
                       hp->head_dim);
    if (hp->n_rot != 0 && (hp->n_rot < 2 || hp->n_rot % 2 != 0 || hp->n_rot > hp->head_dim))
        return err_set(e, ERR_USAGE,
                       "llama: %d rotary values in a head of %d (want an even number, at most "
                       "the head)",
                       hp->n_rot, hp->head_dim);
    if (hp->switches & ~(unsigned)LLAMA_SW_ALL)
        return err_set(e, ERR_USAGE, "llama: switches 0x%x are not in this forward pass",
                       hp->switches & ~(unsigned)LLAMA_SW_ALL);
    if (!(hp->rope_attn_factor >= 0.0f) || !isfinite(hp->rope_attn_factor) ||
        (has_long && hp->rope_orig_ctx < 1))
        return err_set(e, ERR_USAGE,
                       "llama: rope attention factor %g, original context %d (want a factor "
                       ">= 0, and a context > 0 with long and short factors)",
                       (double)hp->rope_attn_factor, hp->rope_orig_ctx);
    if (hp->n_swa < 0 || hp->swa_pattern < 0 || (hp->n_swa > 0 && !(hp->rope_base_swa > 0.0f)) ||
        !(hp->attn_scale >= 0.0f) || !isfinite(hp->attn_scale))
        return err_set(e, ERR_USAGE,
                       "llama: sliding window %d, pattern %d, its rope base %g, score scale %g "
                       "(want the window and pattern >= 0, a base > 0 for a window, a scale >= 0)",
                       hp->n_swa, hp->swa_pattern, (double)hp->rope_base_swa,
                       (double)hp->attn_scale);
    if ((hp->switches & LLAMA_SW_SOFTCAP) &&
        (!(hp->attn_softcap > 0.0f) || !isfinite(hp->attn_softcap) || !(hp->final_softcap > 0.0f) ||
         !isfinite(hp->final_softcap)))
        return err_set(e, ERR_USAGE, "llama: soft-caps %g (scores) and %g (logits): want both > 0",
                       (double)hp->attn_softcap, (double)hp->final_softcap);
    if (!(hp->rms_eps > 0.0f) || !(hp->rope_base > 0.0f))
        return err_set(e, ERR_USAGE, "llama: RMS epsilon %g and rope base %g (want both > 0)",
                       (double)hp->rms_eps, (double)hp->rope_base);
    if (hp->rope_factor != 0.0f && !has_freqs &&
        !(hp->rope_factor > 0.0f && hp->rope_low_freq > 0.0f &&
          hp->rope_high_freq > hp->rope_low_freq && hp->rope_orig_ctx > 0))
        return err_set(e, ERR_USAGE,
                       "llama: rope scaling factor %g, low %g, high %g, original context %d "
                       "(want factor > 0, 0 < low < high, context > 0)",
                       (double)hp->rope_factor, (double)hp->rope_low_freq,
                       (double)hp->rope_high_freq, hp->rope_orig_ctx);
    return 0;
}

static int check_model(const struct llama_model *m, struct err *e)
{
    const struct llama_hparams *hp = &m->hp;
    if (check_hparams(hp, m->rope_freqs != NULL, m->rope_long != NULL, e) < 0)
        return -1;
    if (!m->layers)
        return err_set(e, ERR_USAGE, "llama: the model has no layers");
    int q_dim = hp->n_head * hp->head_dim, kv_dim = hp->n_head_kv * hp->head_dim;
    if (check_tensor(&m->tok_embd, "token_embd", -1, hp->n_vocab, hp->n_embd, 0, e) < 0 ||
        check_tensor(&m->output_norm, "output_norm", -1, 1, hp->n_embd, 1, e) < 0)
        return -1;
    return check_layers(m, q_dim, kv_dim, e);
}

/* Carves the context's arrays out of one block (64-byte aligned each);
 * with base NULL only counts. Returns the bytes. */
static size_t ctx_layout(struct llama_ctx *c, char *base)
{
    const struct llama_hparams *hp = &c->m->hp;
    size_t kv = (size_t)hp->n_layer * (size_t)c->n_ctx * (size_t)c->kv_dim, B = LLAMA_BATCH;
    int swa = hp->n_swa > 0;
    struct {
        void **p;
        size_t bytes;
    } a[] = {
        { (void **)&c->kc, kv * sizeof(float) },
        { (void **)&c->vc, kv * sizeof(float) },
        { (void **)&c->x, B * (size_t)hp->n_embd * sizeof(float) },
        { (void **)&c->xb, B * (size_t)hp->n_embd * sizeof(float) },
        { (void **)&c->q, B * (size_t)c->q_dim * sizeof(float) },
        { (void **)&c->att, B * (size_t)c->q_dim * sizeof(float) },
        { (void **)&c->gate, B * (size_t)hp->n_ff * sizeof(float) },
        { (void **)&c->up, B * (size_t)hp->n_ff * sizeof(float) },
        { (void **)&c->rope, B * (size_t)hp->head_dim * sizeof(float) },
        { (void **)&c->freq, (size_t)hp->head_dim / 2 * sizeof(double) },
        { (void **)&c->rope_swa, swa ? B * (size_t)hp->head_dim * sizeof(float) : 0 },
        { (void **)&c->freq_swa, swa ? (size_t)hp->head_dim / 2 * sizeof(double) : 0 },
        { (void **)&c->scores, (size_t)c->threads * (size_t)c->n_ctx * sizeof(float) },
        { (void **)&c->tmp, (size_t)c->threads * TMP_FLOATS * sizeof(float) },
    };
    size_t at = 0;
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        if (base)
            *a[i].p = base + at;
        at += (a[i].bytes + 63) & ~(size_t)63;
    }
    return at;
}

/* Every CPU the process may use, unless the layers are so small that
 * waking a second thread for each product costs more than it saves
 * (stories260K's 5 layers of width 64: a step took 0.06 ms on one thread
 * and 0.11 ms on two of this 2-core machine, up to 2.6 ms when the other
 * core was busy). */
static int auto_threads(const struct llama_hparams *hp)
{
    double kv = (double)hp->n_head_kv * hp->head_dim;
    double per_layer = (double)hp->n_embd * (2.0 * hp->n_embd + 2.0 * kv + 3.0 * hp->n_ff);
    return per_layer * hp->n_layer < LLAMA_SMALL_BODY ? 1 : cpu_count();
}

struct llama_ctx *llama_ctx_new(const struct llama_model *m, int n_ctx, int threads, struct err *e)
{
    if (check_model(m, e) < 0)
        return NULL;
    if (n_ctx < 1 || n_ctx > LLAMA_MAX_CTX) {
        err_set(e, ERR_USAGE, "llama: a context of %d positions (want 1 to %d)", n_ctx,
                LLAMA_MAX_CTX);
        return NULL;
    }
    if (threads <= 0)
        threads = auto_threads(&m->hp);
    threads = threads > LLAMA_MAX_THREADS ? LLAMA_MAX_THREADS : threads;
    struct llama_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        err_set(e, ERR_SYSTEM, "llama: out of memory for a context");
        return NULL;
    }
    c->m = m;
    c->n_ctx = n_ctx;
    c->threads = threads;
    c->q_dim = m->hp.n_head * m->hp.head_dim;
    c->kv_dim = m->hp.n_head_kv * m->hp.head_dim;
    size_t bytes = ctx_layout(c, NULL);
    c->block = aligned_alloc(64, bytes);
    if (!c->block) {
        err_set(e, ERR_SYSTEM, "llama: out of memory for a context of %d positions (%.1f MiB)",
                n_ctx, (double)bytes / (1024.0 * 1024.0));
        free(c);
        return NULL;
    }
    ctx_layout(c, c->block);
    if (m->hp.n_swa <= 0) /* the layout gave them no room */
        c->rope_swa = NULL, c->freq_swa = NULL;
    llama_rope_freq_init(m, n_ctx, c->freq, c->freq_swa);
    if (!(c->pool = pool_new(threads, e))) {
        llama_ctx_free(c);
        return NULL;
    }
    return c;
}

void llama_ctx_free(struct llama_ctx *c)
{
    if (!c)
        return;
    pool_free(c->pool);
    free(c->block);
    free(c);
}
