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
#include "model/pool.h"
#include "model/quant.h"

#define LLAMA_MAX_CTX      (1 << 20)
#define LLAMA_MAX_THREADS  64
#define TOKEN_BLOCK_MAX    32           /* positions one weight row meets at a time */
#define TOKEN_BLOCK_FLOATS (256 * 1024) /* their activations: 1 MB, within an L2 */
#define TASKS_PER_THREAD   4            /* tasks per thread and matrix, for balance */
#define ROWS_MAX           64           /* weight rows per task at most */
#define TMP_FLOATS         (TOKEN_BLOCK_MAX * ROWS_MAX) /* a worker's products */
/* Layer weights below which a context runs on one thread unless told
 * otherwise: a position's pass is then a fraction of a millisecond, about
 * what handing each product to a second thread and waiting for it costs. */
#define LLAMA_SMALL_BODY (4.0 * 1024 * 1024)

struct llama_ctx {
    const struct llama_model *m;
    int n_ctx, len, threads;
    int q_dim, kv_dim;
    struct pool *pool;
    void *block;      /* every array below lives in it */
    float *kc, *vc;   /* the cache: [layer][position][kv_dim] */
    float *x;         /* the residual stream: LLAMA_BATCH x n_embd */
    float *xb;        /* its RMSNorm: LLAMA_BATCH x n_embd */
    float *q;         /* LLAMA_BATCH x q_dim */
    float *att;       /* attention's output: LLAMA_BATCH x q_dim */
    float *gate, *up; /* LLAMA_BATCH x n_ff; gate becomes silu(gate) * up */
    float *rope;      /* LLAMA_BATCH x head_dim: cos, sin of each pair's angle */
    double *freq;     /* head_dim / 2: radians per position of each pair */
    float *scores;    /* threads x n_ctx */
    float *tmp;       /* threads x TMP_FLOATS */
    struct llama_prof prof;
    llama_progress_fn progress;
    void *progress_arg;
    int done, total; /* the eval's layer passes, for progress */
};

/* One job of a layer for the pool. */
struct job {
    struct llama_ctx *c;
    const struct llama_layer *L;
    int layer;
    int pos0;   /* the position of the pass's first token */
    int j0, nx; /* the pass's tokens j0 .. j0 + nx - 1 */
    int chunk;  /* weight rows per task (even: a rotary pair stays in one task) */
    int tq, tk; /* Q K V: the tasks of Wq, then of Wk; Wv's follow */
};

/* ---- the rotary embedding's frequencies --------------------------------- */

/* freq[i] = base^(-2i/head_dim) / divisor_i: rope_freqs.weight when the file
 * has it, else the hparams' formula.
 *
 * Which values rotate together, checked against llama.cpp's source:
 * llama_model_rope_type() gives LLM_ARCH_LLAMA the "normal" rope
 * (LLAMA_ROPE_TYPE_NORM, ggml rope mode 0), and ggml's CPU rope turns, in
 * each head, the ADJACENT pair (x[2i], x[2i+1]) by pos * base^(-2i/n_dims),
 * divided by freq_factors[i] (rope_freqs.weight) when the model has them
 * (ggml_rope_cache_init). Hugging Face's Llama turns (x[i], x[i + hd/2])
 * instead; convert_hf_to_gguf.py permutes the rows of Wq and Wk (per head,
 * the two halves interleaved) so that adjacent pairs are right for a GGUF
 * file. With Llama 3 files freq_scale is 1 and there is no YaRN term, so
 * nothing else scales the angle. */
static void rope_freq_init(const struct llama_model *m, int n_ctx, double *freq)
{
    const struct llama_hparams *hp = &m->hp;
    int half = hp->head_dim / 2;
    const float *f = m->rope_freqs ? m->rope_freqs : llama_rope_factors(m, n_ctx, NULL);
    llama_rope_divisors(hp, freq);
    for (int i = 0; i < half; i++) {
        double div = f ? (double)f[i] : freq[i];
        freq[i] = pow(hp->rope_base, -2.0 * i / hp->head_dim) / div;
    }
}

/* cos and sin of every pair's angle for the positions of a pass, times the
 * attention factor (ggml's mscale: Q and K both grow by it, so each score
 * by its square). */
static void rope_table(struct llama_ctx *c, int pos0, int nb)
{
    int hd = c->m->hp.head_dim;
    double ms = c->m->hp.rope_attn_factor != 0.0f ? c->m->hp.rope_attn_factor : 1.0;
    for (int j = 0; j < nb; j++) {
        float *cs = c->rope + (size_t)j * (size_t)hd;
        for (int i = 0; i < hd / 2; i++) {
            double a = (double)(pos0 + j) * c->freq[i];
            cs[2 * i] = (float)(cos(a) * ms);
            cs[2 * i + 1] = (float)(sin(a) * ms);
        }
    }
}

/* The NEOX mode's turn (ggml's GGML_ROPE_TYPE_NEOX, which llama.cpp gives
 * Qwen, Gemma and Phi): in each head, x[i] with x[i + hd/2] by pair i's
 * angle, for the whole heads in r0 <= r < r1 (the task's rows are whole
 * heads then: layer_pass). */
static void rope_rows_neox(const struct llama_ctx *c, float *out, int64_t ldo, int64_t r0,
                           int64_t r1, int nx)
{
    int hd = c->m->hp.head_dim, half = hd / 2;
    for (int j = 0; j < nx; j++) {
        const float *cs = c->rope + (size_t)j * (size_t)hd;
        float *o = out + (size_t)j * (size_t)ldo;
        for (int64_t h = r0; h + hd <= r1; h += hd)
            for (int i = 0; i < half; i++) {
                float co = cs[2 * i], si = cs[2 * i + 1], a = o[h + i], b = o[h + i + half];
                o[h + i] = a * co - b * si;
                o[h + i + half] = a * si + b * co;
            }
    }
}

/* Rotates the pairs (r, r+1), r0 <= r < r1 (r0 even), of nx rows of out. */
static void rope_rows(const struct llama_ctx *c, float *out, int64_t ldo, int64_t r0, int64_t r1,
                      int nx)
{
    int hd = c->m->hp.head_dim;
    if (c->m->hp.switches & LLAMA_SW_ROPE_NEOX) {
        rope_rows_neox(c, out, ldo, r0, r1, nx);
        return;
    }
    for (int j = 0; j < nx; j++) {
        const float *cs = c->rope + (size_t)j * (size_t)hd;
        float *o = out + (size_t)j * (size_t)ldo;
        for (int64_t r = r0; r + 1 < r1; r += 2) {
            int i = (int)(r % hd);
            float co = cs[i], si = cs[i + 1], a = o[r], b = o[r + 1];
            o[r] = a * co - b * si;
            o[r + 1] = a * si + b * co;
        }
    }
}

/* ---- the pieces -------------------------------------------------------- */

/* out = g * x / sqrt(mean(x^2) + eps), the scale in double. */
static void rms_norm(const float *x, const float *g, int n, float eps, float *out)
{
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += (double)x[i] * (double)x[i];
    double s = 1.0 / sqrt(ss / n + (double)eps);
    for (int i = 0; i < n; i++)
        out[i] = (float)((double)x[i] * s * (double)g[i]);
}

static void norm_rows(const struct llama_ctx *c, const struct qtensor *g, int j0, int nx)
{
    int d = c->m->hp.n_embd;
    for (int j = j0; j < j0 + nx; j++)
        rms_norm(c->x + (size_t)j * (size_t)d, g->data, d, c->m->hp.rms_eps,
                 c->xb + (size_t)j * (size_t)d);
}

/* out[j * ldo + r] (= or +=) row r of w . x[j * ldx ..], for r0 <= r < r1,
 * j < nx; the positions a block at a time, each row against the block. */
static void rows_dot(const struct qtensor *w, int64_t r0, int64_t r1, const float *x, int64_t ldx,
                     int nx, float *out, int64_t ldo, int add, float *tmp)
{
    size_t rb = quant_row_bytes(w->type, w->cols);
    const char *base = w->data;
    int path = quant_best_path(); /* once, not a row */
    int tb = (int)(TOKEN_BLOCK_FLOATS / w->cols);
    tb = tb < 1 ? 1 : tb > TOKEN_BLOCK_MAX ? TOKEN_BLOCK_MAX : tb;
    for (int j0 = 0; j0 < nx; j0 += tb) {
        int nb = nx - j0 < tb ? nx - j0 : tb;
        const float *xj = x + (size_t)j0 * (size_t)ldx;
        float *oj = out + (size_t)j0 * (size_t)ldo;
        if (nb == 1) { /* decode: rows against one vector, streamed */
            for (int64_t r = r0; r < r1; r += TOKEN_BLOCK_MAX) {
                int nr = r1 - r < TOKEN_BLOCK_MAX ? (int)(r1 - r) : TOKEN_BLOCK_MAX;
                quant_dot_rows_on(path, w->type, base + (size_t)r * rb, w->cols, nr, xj, tmp);
                for (int i = 0; i < nr; i++)
                    oj[r + i] = add ? oj[r + i] + tmp[i] : tmp[i];
            }
            continue;
        }
        for (int64_t r = r0; r < r1; r += ROWS_MAX) { /* a task's rows in one call */
            int nr = r1 - r < ROWS_MAX ? (int)(r1 - r) : ROWS_MAX;
            quant_dot_rows_n_on(path, w->type, base + (size_t)r * rb, w->cols, nr, xj, ldx, nb, tmp,
                                nr);
            for (int j = 0; j < nb; j++)
                for (int i = 0; i < nr; i++) {
                    float *o = oj + (size_t)j * (size_t)ldo + r + i;
                    *o = add ? *o + tmp[j * nr + i] : tmp[j * nr + i];
                }
        }
    }
}

/* Rows per task for a matrix of rows rows: a few tasks per thread, even. */
static int task_rows(int64_t rows, int threads)
{
    int64_t n = rows / (threads * TASKS_PER_THREAD);
    n = n < 2 ? 2 : n > ROWS_MAX ? ROWS_MAX : n;
    return (int)(n & ~(int64_t)1);
}

static int tasks_of(int64_t rows, int chunk)
{
    return (int)((rows + chunk - 1) / chunk);
}

/* A float dot product of two head vectors, eight sums in a fixed order. */
static float dot_head(const float *a, const float *b, int n)
{
    float s[8] = { 0 };
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += a[i + k] * b[i + k];
    float t = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
    for (; i < n; i++)
        t += a[i] * b[i];
    return t;
}

/* Each whole head in rows r0 <= r < r1 of nx rows of out RMS-normed with
 * the gain g (head_dim values): Qwen 3's Q and K norms. */
static void head_norms(const struct llama_ctx *c, const struct qtensor *g, float *out, int64_t ldo,
                       int64_t r0, int64_t r1, int nx)
{
    int hd = c->m->hp.head_dim;
    for (int j = 0; j < nx; j++)
        for (int64_t h = r0; h + hd <= r1; h += hd) {
            float *o = out + (size_t)j * (size_t)ldo + h;
            rms_norm(o, g->data, hd, c->m->hp.rms_eps, o);
        }
}

/* ---- the jobs ---------------------------------------------------------- */

/* Q, K and V of every token of the pass; q and k rotated; k, v to the cache. */
static void job_qkv(void *arg, int t, int worker)
{
    const struct job *jb = arg;
    struct llama_ctx *c = jb->c;
    const struct qtensor *w, *b;
    float *out;
    int64_t ldo = c->kv_dim, r0;
    size_t at = ((size_t)jb->layer * (size_t)c->n_ctx + (size_t)jb->pos0) * (size_t)c->kv_dim;
    if (t < jb->tq) {
        w = &jb->L->wq, b = &jb->L->bq, out = c->q, ldo = c->q_dim, r0 = (int64_t)t * jb->chunk;
    } else if (t < jb->tq + jb->tk) {
        w = &jb->L->wk, b = &jb->L->bk, out = c->kc + at, r0 = (int64_t)(t - jb->tq) * jb->chunk;
    } else {
        w = &jb->L->wv, b = &jb->L->bv, out = c->vc + at;
        r0 = (int64_t)(t - jb->tq - jb->tk) * jb->chunk;
    }
    int64_t r1 = r0 + jb->chunk < w->rows ? r0 + jb->chunk : w->rows;
    rows_dot(w, r0, r1, c->xb, c->m->hp.n_embd, jb->nx, out, ldo, 0,
             c->tmp + (size_t)worker * TMP_FLOATS);
    if (c->m->hp.switches & LLAMA_SW_QKV_BIAS) /* before the turn, as ggml adds it */
        for (int j = 0; j < jb->nx; j++)
            for (int64_t r = r0; r < r1; r++)
                out[(size_t)j * (size_t)ldo + r] += ((const float *)b->data)[r];
    if ((c->m->hp.switches & LLAMA_SW_QK_NORM) && w != &jb->L->wv)
        head_norms(c, w == &jb->L->wq ? &jb->L->q_norm : &jb->L->k_norm, out, ldo, r0, r1, jb->nx);
    if (w != &jb->L->wv)
        rope_rows(c, out, ldo, r0, r1, jb->nx);
}

/* One head of one token: softmax(q . k_t / sqrt(head_dim)) over the
 * positions t <= its own, times the values. Head h reads KV head
 * h / (n_head / n_head_kv) (grouped-query attention). */
static void job_attention(void *arg, int t, int worker)
{
    const struct job *jb = arg;
    const struct llama_ctx *c = jb->c;
    const struct llama_hparams *hp = &c->m->hp;
    int hd = hp->head_dim, j = jb->j0 + t / hp->n_head, h = t % hp->n_head;
    int pos = jb->pos0 + j, kvh = h / (hp->n_head / hp->n_head_kv);
    size_t at = (size_t)jb->layer * (size_t)c->n_ctx * (size_t)c->kv_dim + (size_t)kvh * hd;
    const float *q = c->q + (size_t)j * (size_t)c->q_dim + (size_t)h * hd;
    const float *k = c->kc + at, *v = c->vc + at;
    float *s = c->scores + (size_t)worker * (size_t)c->n_ctx;
    float scale = 1.0f / sqrtf((float)hd), mx = -INFINITY;
    for (int p = 0; p <= pos; p++) {
        s[p] = dot_head(q, k + (size_t)p * (size_t)c->kv_dim, hd) * scale;
        mx = s[p] > mx ? s[p] : mx;
    }
    double sum = 0.0;
    for (int p = 0; p <= pos; p++) {
        s[p] = expf(s[p] - mx);
        sum += s[p];
    }
    float inv = (float)(1.0 / sum);
    float *o = c->att + (size_t)j * (size_t)c->q_dim + (size_t)h * hd;
    for (int d = 0; d < hd; d++)
        o[d] = 0.0f;
    for (int p = 0; p <= pos; p++) {
        float wp = s[p] * inv;
        const float *vp = v + (size_t)p * (size_t)c->kv_dim;
        for (int d = 0; d < hd; d++)
            o[d] += wp * vp[d];
    }
}

/* x += Wo att, for the job's tokens. */
static void job_output(void *arg, int t, int worker)
{
    const struct job *jb = arg;
    struct llama_ctx *c = jb->c;
    const struct qtensor *w = &jb->L->wo;
    int64_t r0 = (int64_t)t * jb->chunk, r1 = r0 + jb->chunk < w->rows ? r0 + jb->chunk : w->rows;
    int d = c->m->hp.n_embd;
    rows_dot(w, r0, r1, c->att + (size_t)jb->j0 * (size_t)c->q_dim, c->q_dim, jb->nx,
             c->x + (size_t)jb->j0 * (size_t)d, d, 1, c->tmp + (size_t)worker * TMP_FLOATS);
}

/* gate = silu(Wgate xb) * (Wup xb), silu(g) = g / (1 + e^-g). */
static void job_gate_up(void *arg, int t, int worker)
{
    const struct job *jb = arg;
    struct llama_ctx *c = jb->c;
    int d = c->m->hp.n_embd, ff = c->m->hp.n_ff;
    int64_t r0 = (int64_t)t * jb->chunk, r1 = r0 + jb->chunk < ff ? r0 + jb->chunk : ff;
    const float *xb = c->xb + (size_t)jb->j0 * (size_t)d;
    float *g = c->gate + (size_t)jb->j0 * (size_t)ff, *u = c->up + (size_t)jb->j0 * (size_t)ff;
    float *tmp = c->tmp + (size_t)worker * TMP_FLOATS;
    rows_dot(&jb->L->w_gate, r0, r1, xb, d, jb->nx, g, ff, 0, tmp);
    rows_dot(&jb->L->w_up, r0, r1, xb, d, jb->nx, u, ff, 0, tmp);
    for (int j = 0; j < jb->nx; j++)
        for (int64_t r = r0; r < r1; r++) {
            float a = g[(size_t)j * (size_t)ff + r];
            g[(size_t)j * (size_t)ff + r] = a / (1.0f + expf(-a)) * u[(size_t)j * (size_t)ff + r];
        }
}

/* x += Wdown gate, for the job's tokens. */
static void job_down(void *arg, int t, int worker)
{
    const struct job *jb = arg;
    struct llama_ctx *c = jb->c;
    const struct qtensor *w = &jb->L->w_down;
    int64_t r0 = (int64_t)t * jb->chunk, r1 = r0 + jb->chunk < w->rows ? r0 + jb->chunk : w->rows;
    int d = c->m->hp.n_embd, ff = c->m->hp.n_ff;
    rows_dot(w, r0, r1, c->gate + (size_t)jb->j0 * (size_t)ff, ff, jb->nx,
             c->x + (size_t)jb->j0 * (size_t)d, d, 1, c->tmp + (size_t)worker * TMP_FLOATS);
}

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
    norm_rows(c, &jb.L->attn_norm, 0, nb);
    jb.chunk = task_rows(c->q_dim, c->threads);
    if (hp->switches &
        (LLAMA_SW_ROPE_NEOX | LLAMA_SW_QK_NORM)) /* whole heads: a NEOX pair or a norm spans them */
        jb.chunk = (jb.chunk + hp->head_dim - 1) / hp->head_dim * hp->head_dim;
    jb.tq = tasks_of(c->q_dim, jb.chunk);
    jb.tk = tasks_of(c->kv_dim, jb.chunk);
    run_timed(c, job_qkv, &jb, jb.tq + 2 * jb.tk, &c->prof.matmul_ms);
    jb.j0 = j0;
    jb.nx = nb - j0;
    if (jb.nx == 0)
        return;
    run_timed(c, job_attention, &jb, jb.nx * hp->n_head, &c->prof.attention_ms);
    jb.chunk = task_rows(hp->n_embd, c->threads);
    run_timed(c, job_output, &jb, tasks_of(hp->n_embd, jb.chunk), &c->prof.matmul_ms);
    norm_rows(c, &jb.L->ffn_norm, j0, jb.nx);
    jb.chunk = task_rows(hp->n_ff, c->threads);
    run_timed(c, job_gate_up, &jb, tasks_of(hp->n_ff, jb.chunk), &c->prof.matmul_ms);
    jb.chunk = task_rows(hp->n_embd, c->threads);
    run_timed(c, job_down, &jb, tasks_of(hp->n_embd, jb.chunk), &c->prof.matmul_ms);
}

/* nb tokens at the positions after those held; last: the eval's last pass
 * (whose last token is the output). */
static void batch_pass(struct llama_ctx *c, const int *tokens, int nb, int last)
{
    const struct llama_model *m = c->m;
    int d = m->hp.n_embd;
    size_t rb = quant_row_bytes(m->tok_embd.type, m->tok_embd.cols);
    for (int j = 0; j < nb; j++)
        quant_dequant(m->tok_embd.type, (const char *)m->tok_embd.data + (size_t)tokens[j] * rb,
                      c->x + (size_t)j * (size_t)d, d);
    rope_table(c, c->len, nb);
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
    rms_norm(h, m->output_norm.data, m->hp.n_embd, m->hp.rms_eps, out);
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
    if (hp->switches & ~(unsigned)LLAMA_SW_ALL)
        return err_set(e, ERR_USAGE, "llama: switches 0x%x are not in this forward pass",
                       hp->switches & ~(unsigned)LLAMA_SW_ALL);
    if (!(hp->rope_attn_factor >= 0.0f) || !isfinite(hp->rope_attn_factor) ||
        (has_long && hp->rope_orig_ctx < 1))
        return err_set(e, ERR_USAGE,
                       "llama: rope attention factor %g, original context %d (want a factor "
                       ">= 0, and a context > 0 with long and short factors)",
                       (double)hp->rope_attn_factor, hp->rope_orig_ctx);
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
    rope_freq_init(m, n_ctx, c->freq);
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
