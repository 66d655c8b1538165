/* llama_jobs.c - the pieces of the forward pass (model/llama.c): the rotary
 * tables, the norms, the weight products in blocks of positions, and the
 * jobs the pool runs for a layer, each task computing its output elements
 * in one fixed order (llama.c says why that matters). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/llama_int.h"
#include "model/model.h"
#include "model/quant.h"

/* ---- the rotary embedding's frequencies --------------------------------- */

/* freq[i] = base^(-2i/n_rot) / divisor_i (n_rot: llama_rot_dims): rope_freqs.weight when the file
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
void llama_rope_freq_init(const struct llama_model *m, int n_ctx, double *freq, double *freq_swa)
{
    const struct llama_hparams *hp = &m->hp;
    int rot = llama_rot_dims(hp), half = rot / 2;
    const float *f = m->rope_freqs ? m->rope_freqs : llama_rope_factors(m, n_ctx, NULL);
    llama_rope_divisors(hp, freq);
    for (int i = 0; i < half; i++) {
        double div = f ? (double)f[i] : freq[i];
        freq[i] = pow(hp->rope_base, -2.0 * i / rot) / div;
        /* a sliding layer's (ggml: freq_base_swa, freq_scale_swa 1, no factors) */
        if (freq_swa)
            freq_swa[i] = pow(hp->rope_base_swa, -2.0 * i / rot);
    }
}

/* cos and sin of every pair's angle for the positions of a pass, times the
 * attention factor (ggml's mscale: Q and K both grow by it, so each score
 * by its square). */
void llama_rope_table(struct llama_ctx *c, int pos0, int nb)
{
    int hd = c->m->hp.head_dim, half = llama_rot_dims(&c->m->hp) / 2;
    double ms = c->m->hp.rope_attn_factor != 0.0f ? c->m->hp.rope_attn_factor : 1.0;
    for (int k = 0; k < 2; k++) {
        float *tab = k ? c->rope_swa : c->rope;
        const double *freq = k ? c->freq_swa : c->freq;
        for (int j = 0; tab && j < nb; j++) {
            float *cs = tab + (size_t)j * (size_t)hd;
            for (int i = 0; i < half; i++) {
                double a = (double)(pos0 + j) * freq[i];
                cs[2 * i] = (float)(cos(a) * ms);
                cs[2 * i + 1] = (float)(sin(a) * ms);
            }
        }
    }
}

/* The NEOX mode's turn (ggml's GGML_ROPE_TYPE_NEOX, which llama.cpp gives
 * Qwen, Gemma and Phi): in each head, x[i] with x[i + rot/2] by pair i's
 * angle, i < rot/2, for the whole heads in r0 <= r < r1 (the task's rows
 * are whole heads then: layer_pass). A head's values from rot on stay as
 * they are (Phi-4-mini turns 96 of its 128). */
static void rope_rows_neox(const struct llama_ctx *c, const float *tab, float *out, int64_t ldo,
                           int64_t r0, int64_t r1, int nx)
{
    int hd = c->m->hp.head_dim, half = llama_rot_dims(&c->m->hp) / 2;
    for (int j = 0; j < nx; j++) {
        const float *cs = tab + (size_t)j * (size_t)hd;
        float *o = out + (size_t)j * (size_t)ldo;
        for (int64_t h = r0; h + hd <= r1; h += hd)
            for (int i = 0; i < half; i++) {
                float co = cs[2 * i], si = cs[2 * i + 1], a = o[h + i], b = o[h + i + half];
                o[h + i] = a * co - b * si;
                o[h + i + half] = a * si + b * co;
            }
    }
}

/* Rotates the pairs (r, r+1), r0 <= r < r1 (r0 even), of nx rows of out,
 * by layer's table (a sliding layer's its own); in each head only the
 * first rot values (llama_rot_dims) turn. */
static void rope_rows(const struct llama_ctx *c, int layer, float *out, int64_t ldo, int64_t r0,
                      int64_t r1, int nx)
{
    int hd = c->m->hp.head_dim, rot = llama_rot_dims(&c->m->hp);
    const float *tab = llama_layer_slides(&c->m->hp, layer) ? c->rope_swa : c->rope;
    if (c->m->hp.switches & LLAMA_SW_ROPE_NEOX) {
        rope_rows_neox(c, tab, out, ldo, r0, r1, nx);
        return;
    }
    for (int j = 0; j < nx; j++) {
        const float *cs = tab + (size_t)j * (size_t)hd;
        float *o = out + (size_t)j * (size_t)ldo;
        for (int64_t r = r0; r + 1 < r1; r += 2) {
            int i = (int)(r % hd);
            if (i >= rot)
                continue;
            float co = cs[i], si = cs[i + 1], a = o[r], b = o[r + 1];
            o[r] = a * co - b * si;
            o[r + 1] = a * si + b * co;
        }
    }
}

/* ---- the pieces -------------------------------------------------------- */

/* out = g * x / sqrt(mean(x^2) + eps), the scale in double. */
void llama_rms_norm(const float *x, const float *g, int n, float eps, float *out)
{
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += (double)x[i] * (double)x[i];
    double s = 1.0 / sqrt(ss / n + (double)eps);
    for (int i = 0; i < n; i++)
        out[i] = (float)((double)x[i] * s * (double)g[i]);
}

void llama_norm_rows(const struct llama_ctx *c, const struct qtensor *g, int j0, int nx)
{
    int d = c->m->hp.n_embd;
    for (int j = j0; j < j0 + nx; j++)
        llama_rms_norm(c->x + (size_t)j * (size_t)d, g->data, d, c->m->hp.rms_eps,
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
int llama_task_rows(int64_t rows, int threads)
{
    int64_t n = rows / (threads * TASKS_PER_THREAD);
    n = n < 2 ? 2 : n > ROWS_MAX ? ROWS_MAX : n;
    return (int)(n & ~(int64_t)1);
}

int llama_tasks_of(int64_t rows, int chunk)
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
            llama_rms_norm(o, g->data, hd, c->m->hp.rms_eps, o);
        }
}

/* ---- the jobs ---------------------------------------------------------- */

/* Q, K and V of every token of the pass; q and k rotated; k, v to the cache. */
void llama_job_qkv(void *arg, int t, int worker)
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
        rope_rows(c, jb->layer, out, ldo, r0, r1, jb->nx);
}

/* One head of one token: softmax(q . k_t / sqrt(head_dim)) over the
 * positions t <= its own (each score soft-capped first with
 * LLAMA_SW_SOFTCAP), times the values. Head h reads KV head
 * h / (n_head / n_head_kv) (grouped-query attention). */
void llama_job_attention(void *arg, int t, int worker)
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
    float scale = hp->attn_scale != 0.0f ? hp->attn_scale : 1.0f / sqrtf((float)hd);
    float mx = -INFINITY;
    /* a sliding layer sees the n_swa positions up to its own (llama.cpp masks
     * p when pos - p >= n_swa) */
    int p0 = llama_layer_slides(hp, jb->layer) && pos >= hp->n_swa ? pos - hp->n_swa + 1 : 0;
    float cap = hp->switches & LLAMA_SW_SOFTCAP ? hp->attn_softcap : 0.0f;
    for (int p = p0; p <= pos; p++)
        s[p] = dot_head(q, k + (size_t)p * (size_t)c->kv_dim, hd) * scale;
    if (cap > 0.0f)
        model_soft_cap(s + p0, (size_t)(pos - p0 + 1), cap);
    for (int p = p0; p <= pos; p++)
        mx = s[p] > mx ? s[p] : mx;
    double sum = 0.0;
    for (int p = p0; p <= pos; p++) {
        s[p] = expf(s[p] - mx);
        sum += s[p];
    }
    float inv = (float)(1.0 / sum);
    float *o = c->att + (size_t)j * (size_t)c->q_dim + (size_t)h * hd;
    for (int d = 0; d < hd; d++)
        o[d] = 0.0f;
    for (int p = p0; p <= pos; p++) {
        float wp = s[p] * inv;
        const float *vp = v + (size_t)p * (size_t)c->kv_dim;
        for (int d = 0; d < hd; d++)
            o[d] += wp * vp[d];
    }
}

/* Where a block's output goes: added to the stream x, or (with
 * LLAMA_SW_POST_NORMS) into xb, free by then, for its norm before the add
 * (llama_post_norm_add). */
static float *block_out(struct llama_ctx *c, int j0, int *add)
{
    int d = c->m->hp.n_embd;
    *add = !(c->m->hp.switches & LLAMA_SW_POST_NORMS);
    return (*add ? c->x : c->xb) + (size_t)j0 * (size_t)d;
}

/* x += Wo att, for the job's tokens. */
void llama_job_output(void *arg, int t, int worker)
{
    const struct job *jb = arg;
    struct llama_ctx *c = jb->c;
    const struct qtensor *w = &jb->L->wo;
    int64_t r0 = (int64_t)t * jb->chunk, r1 = r0 + jb->chunk < w->rows ? r0 + jb->chunk : w->rows;
    int add;
    float *out = block_out(c, jb->j0, &add);
    rows_dot(w, r0, r1, c->att + (size_t)jb->j0 * (size_t)c->q_dim, c->q_dim, jb->nx, out,
             c->m->hp.n_embd, add, c->tmp + (size_t)worker * TMP_FLOATS);
}

void llama_post_norm_add(struct llama_ctx *c, const struct qtensor *g, int j0, int nx)
{
    int d = c->m->hp.n_embd;
    for (int j = j0; j < j0 + nx; j++) {
        float *o = c->xb + (size_t)j * (size_t)d, *x = c->x + (size_t)j * (size_t)d;
        llama_rms_norm(o, g->data, d, c->m->hp.rms_eps, o);
        for (int i = 0; i < d; i++)
            x[i] += o[i];
    }
}

/* GELU's tanh form, as ggml and Gemma's gelu_pytorch_tanh compute it:
 * a/2 (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3))). */
static float gelu(float a)
{
    const float k = 0.7978845608028654f; /* sqrt(2 / pi) */
    return 0.5f * a * (1.0f + tanhf(k * (a + 0.044715f * a * a * a)));
}

/* gate = silu(Wgate xb) * (Wup xb), silu(g) = g / (1 + e^-g); or GELU's. */
void llama_job_gate_up(void *arg, int t, int worker)
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
    int use_gelu = (c->m->hp.switches & LLAMA_SW_GELU) != 0;
    for (int j = 0; j < jb->nx; j++)
        for (int64_t r = r0; r < r1; r++) {
            float a = g[(size_t)j * (size_t)ff + r];
            float act = use_gelu ? gelu(a) : a / (1.0f + expf(-a));
            g[(size_t)j * (size_t)ff + r] = act * u[(size_t)j * (size_t)ff + r];
        }
}

/* x += Wdown gate, for the job's tokens. */
void llama_job_down(void *arg, int t, int worker)
{
    const struct job *jb = arg;
    struct llama_ctx *c = jb->c;
    const struct qtensor *w = &jb->L->w_down;
    int64_t r0 = (int64_t)t * jb->chunk, r1 = r0 + jb->chunk < w->rows ? r0 + jb->chunk : w->rows;
    int ff = c->m->hp.n_ff, add;
    float *out = block_out(c, jb->j0, &add);
    rows_dot(w, r0, r1, c->gate + (size_t)jb->j0 * (size_t)ff, ff, jb->nx, out, c->m->hp.n_embd,
             add, c->tmp + (size_t)worker * TMP_FLOATS);
}
