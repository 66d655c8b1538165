/* llama_ref.c - tiny models and the exact reference (llama_ref.h). */
#include "llama_ref.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/quant.h"

uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static double rng_uniform(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * (double)(rng_next(s) >> 11) * 0x1p-53;
}

static void *tiny_alloc(struct tiny *t, size_t bytes)
{
    void *p = calloc(1, bytes);
    ck_assert_ptr_nonnull(p);
    t->mem[t->nmem++] = p;
    return p;
}

/* A rows x cols tensor of type, values uniform in [lo, hi). */
static const float *tensor_make(struct tiny *t, struct qtensor *q, int64_t rows, int64_t cols,
                                int type, double lo, double hi, uint64_t *rng)
{
    size_t n = (size_t)(rows * cols);
    float *v = tiny_alloc(t, n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)rng_uniform(rng, lo, hi);
    q->rows = rows;
    q->cols = cols;
    q->type = type;
    q->data = v;
    if (type != QT_F32) {
        void *blocks = tiny_alloc(t, quant_row_bytes(type, cols) * (size_t)rows);
        quant_quantize(type, v, blocks, (int64_t)n);
        quant_dequant(type, blocks, v, (int64_t)n);
        q->data = blocks;
    }
    return v;
}

void tiny_build(struct tiny *t, const struct shape *s, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    ck_assert_int_le(s->n_layer, MAX_LAYERS);
    struct llama_hparams *hp = &t->m.hp;
    *hp = (struct llama_hparams){ .switches = s->switches,
                                  .n_layer = s->n_layer,
                                  .n_embd = s->n_embd,
                                  .n_head = s->n_head,
                                  .n_head_kv = s->n_head_kv,
                                  .n_ff = s->n_ff,
                                  .n_vocab = s->n_vocab,
                                  .head_dim = s->head_dim ? s->head_dim : s->n_embd / s->n_head,
                                  .n_rot = s->rot,
                                  .n_ctx_train = 512,
                                  .rms_eps = 1e-5f,
                                  .rope_base = 10000.0f };
    uint64_t rng = seed;
    int d = s->n_embd, hd = hp->head_dim, q = s->n_head * hd, kv = s->n_head_kv * hd;
    /* Matrices of variance about 1/cols keep every activation near 1. */
    double wd = sqrt(3.0 / d), wq = sqrt(3.0 / q), wf = sqrt(3.0 / s->n_ff);
    t->emb = tensor_make(t, &t->m.tok_embd, s->n_vocab, d, s->wtype, -1, 1, &rng);
    t->onorm = tensor_make(t, &t->m.output_norm, 1, d, QT_F32, 0.5, 1.5, &rng);
    for (int l = 0; l < s->n_layer; l++) {
        struct llama_layer *L = &t->layer[l];
        const float **v = t->val[l];
        v[0] = tensor_make(t, &L->attn_norm, 1, d, QT_F32, 0.5, 1.5, &rng);
        v[1] = tensor_make(t, &L->wq, q, d, s->wtype, -wd, wd, &rng);
        v[2] = tensor_make(t, &L->wk, kv, d, s->wtype, -wd, wd, &rng);
        v[3] = tensor_make(t, &L->wv, kv, d, s->wtype, -wd, wd, &rng);
        v[4] = tensor_make(t, &L->wo, d, q, s->wtype, -wq, wq, &rng);
        v[5] = tensor_make(t, &L->ffn_norm, 1, d, QT_F32, 0.5, 1.5, &rng);
        v[6] = tensor_make(t, &L->w_gate, s->n_ff, d, s->wtype, -wd, wd, &rng);
        v[7] = tensor_make(t, &L->w_down, d, s->n_ff, s->wtype, -wf, wf, &rng);
        v[8] = tensor_make(t, &L->w_up, s->n_ff, d, s->wtype, -wd, wd, &rng);
        if (s->switches & LLAMA_SW_QKV_BIAS) { /* biases as large as the products */
            t->bias[l][0] = tensor_make(t, &L->bq, 1, q, QT_F32, -1, 1, &rng);
            t->bias[l][1] = tensor_make(t, &L->bk, 1, kv, QT_F32, -1, 1, &rng);
            t->bias[l][2] = tensor_make(t, &L->bv, 1, kv, QT_F32, -1, 1, &rng);
        }
        if (s->switches & LLAMA_SW_QK_NORM) {
            t->qk_norm[l][0] = tensor_make(t, &L->q_norm, 1, hd, QT_F32, 0.5, 1.5, &rng);
            t->qk_norm[l][1] = tensor_make(t, &L->k_norm, 1, hd, QT_F32, 0.5, 1.5, &rng);
        }
        if (s->switches & LLAMA_SW_POST_NORMS) {
            t->post_norm[l][0] = tensor_make(t, &L->attn_post_norm, 1, d, QT_F32, 0.5, 1.5, &rng);
            t->post_norm[l][1] = tensor_make(t, &L->ffn_post_norm, 1, d, QT_F32, 0.5, 1.5, &rng);
        }
    }
    t->m.layers = t->layer;
    t->ctx = 64;
    t->m.output = t->m.tok_embd;
    t->m.tied = 1;
}

void tiny_free(struct tiny *t)
{
    for (int i = 0; i < t->nmem; i++)
        free(t->mem[i]);
}

/* ---- the exact reference ----------------------------------------------- */

/* The rotary divisors, from the file's tensor, Phi-3's long or short
 * factors (the long when the context exceeds the original one), or from
 * the Llama 3.1 formula
 * (meta-llama's apply_scaling, in its words: wavelengths shorter than
 * orig / high keep their frequency, longer than orig / low divide it by the
 * factor, between them the frequency is interpolated with
 * smooth = (orig / wavelength - low) / (high - low)). */
static void ref_divisors(const struct tiny *t, enum ref_variant var, double *div)
{
    const struct llama_model *m = &t->m;
    const struct llama_hparams *hp = &m->hp;
    /* Phi-3: the long factors for a context beyond the original one. */
    int longer = (t->ctx > hp->rope_orig_ctx) != (var == REF_OTHER_FACTORS);
    const float *phi = longer ? m->rope_long : m->rope_short;
    /* the files' divisors have one per pair that turns */
    int pairs = (hp->n_rot ? hp->n_rot : hp->head_dim) / 2;
    for (int i = 0; i < hp->head_dim / 2; i++) {
        div[i] = 1.0;
        if (i >= pairs) {
            continue;
        } else if (m->rope_freqs) {
            div[i] = m->rope_freqs[i];
        } else if (phi) {
            div[i] = phi[i];
        } else if (hp->rope_factor != 0.0f) {
            double freq = 1.0 / pow(hp->rope_base, (2.0 * i) / (2.0 * pairs));
            double wavelen = 2.0 * 3.14159265358979323846 / freq;
            double lo = hp->rope_orig_ctx / hp->rope_low_freq;
            double hi = hp->rope_orig_ctx / hp->rope_high_freq;
            double nf = freq;
            if (wavelen > lo) {
                nf = freq / hp->rope_factor;
            } else if (wavelen >= hi) {
                double sm = (hp->rope_orig_ctx / wavelen - hp->rope_low_freq) /
                            (hp->rope_high_freq - hp->rope_low_freq);
                nf = (1 - sm) * freq / hp->rope_factor + sm * freq;
            }
            div[i] = freq / nf;
        }
    }
}

static void ref_matvec(const float *w, int rows, int cols, const double *x, double *out)
{
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int c = 0; c < cols; c++)
            s += (double)w[(size_t)r * cols + c] * x[c];
        out[r] = s;
    }
}

void ref_norm(const double *x, const float *g, int d, double eps, double *out)
{
    double ss = 0;
    for (int i = 0; i < d; i++)
        ss += x[i] * x[i];
    for (int i = 0; i < d; i++)
        out[i] = x[i] / sqrt(ss / d + eps) * g[i];
}

/* Pair i < rot/2 of a head turns by pos * base^(-2i/rot) / div_i: the
 * values 2i and 2i + 1 (a Llama), or i and i + rot/2 (LLAMA_SW_ROPE_NEOX);
 * the values from rot on stay. */
static void ref_rope(double *v, int heads, int hd, int rot, int pos, double base, const double *div,
                     int halves, double scale)
{
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < rot / 2; i++) {
            double a = pos * pow(base, -2.0 * i / rot) / div[i];
            double *p0 = v + h * hd + 2 * i, *p1 = p0 + 1;
            if (halves)
                p0 = v + h * hd + i, p1 = p0 + rot / 2;
            double x0 = *p0, x1 = *p1;
            *p0 = (x0 * cos(a) - x1 * sin(a)) * scale;
            *p1 = (x0 * sin(a) + x1 * cos(a)) * scale;
        }
}

/* Attention of position p, every head (k and v: [position][kv]). */
static void ref_attend(const struct llama_hparams *hp, const double *q, const double *k,
                       const double *v, int p, int window, enum ref_variant var, double *out)
{
    int hd = hp->head_dim, kv = hp->n_head_kv * hd;
    double *w = malloc(sizeof(double) * (size_t)(p + 1));
    /* a sliding layer: keys t with p - t < window (Gemma 3's mask) */
    int t0 = window > 0 && p - window + 1 > 0 ? p - window + 1 : 0;
    double scale = hp->attn_scale != 0.0f ? hp->attn_scale : 1.0 / sqrt((double)hd);
    for (int h = 0; h < hp->n_head; h++) {
        int g = var == REF_KV_MODULO ? h % hp->n_head_kv : h / (hp->n_head / hp->n_head_kv);
        double mx = -INFINITY, sum = 0;
        for (int t = t0; t <= p; t++) {
            double s = 0;
            for (int i = 0; i < hd; i++)
                s += q[h * hd + i] * k[(size_t)t * kv + g * hd + i];
            w[t] = s * scale;
            if ((hp->switches & LLAMA_SW_SOFTCAP) && var != REF_NO_SOFTCAP)
                w[t] = hp->attn_softcap * tanh(w[t] / hp->attn_softcap); /* Gemma 2 */
            mx = fmax(mx, w[t]);
        }
        for (int t = t0; t <= p; t++)
            sum += (w[t] = exp(w[t] - mx));
        for (int i = 0; i < hd; i++) {
            double a = 0;
            for (int t = t0; t <= p; t++)
                a += w[t] / sum * v[(size_t)t * kv + g * hd + i];
            out[h * hd + i] = a;
        }
    }
    free(w);
}

/* x += o, o first RMS-normed with g when the blocks' outputs are (Gemma). */
static void ref_add(const struct tiny *t, const float *g, enum ref_variant var, double *o,
                    double *x)
{
    const struct llama_hparams *hp = &t->m.hp;
    if ((hp->switches & LLAMA_SW_POST_NORMS) && var != REF_NO_POST_NORMS)
        ref_norm(o, g, hp->n_embd, hp->rms_eps, o);
    for (int i = 0; i < hp->n_embd; i++)
        x[i] += o[i];
}

/* The feed-forward of one position: x += Wdown (act(Wgate n) * Wup n),
 * act SiLU, z / (1 + e^-z), or GELU's tanh form, z/2 (1 + tanh(sqrt(2/pi)
 * (z + 0.044715 z^3))). */
static void ref_ffn(const struct tiny *t, int l, enum ref_variant var, double *x)
{
    const struct llama_hparams *hp = &t->m.hp;
    int d = hp->n_embd, ff = hp->n_ff;
    int gelu = (hp->switches & LLAMA_SW_GELU) && var != REF_SILU;
    double n[LLAMA_MAX_EMBD], g[256], u[256], o[LLAMA_MAX_EMBD];
    ck_assert_int_le(ff, 256);
    ref_norm(x, t->val[l][5], d, hp->rms_eps, n);
    ref_matvec(t->val[l][6], ff, d, n, g);
    ref_matvec(t->val[l][8], ff, d, n, u);
    for (int i = 0; i < ff; i++) {
        double z = g[i];
        double act =
            gelu ? 0.5 * z *
                       (1 + tanh(sqrt(2 / 3.14159265358979323846) * (z + 0.044715 * z * z * z)))
                 : z / (1 + exp(-z));
        g[i] = act * u[i];
    }
    ref_matvec(t->val[l][7], d, ff, g, o);
    ref_add(t, t->post_norm[l][1], var, o, x);
}

/* Each head of q and k RMS-normed with the layer's q_norm and k_norm. */
static void ref_head_norms(const struct tiny *t, int l, double *q, double *k)
{
    const struct llama_hparams *hp = &t->m.hp;
    int hd = hp->head_dim;
    for (int h = 0; h < hp->n_head; h++)
        ref_norm(q + h * hd, t->qk_norm[l][0], hd, hp->rms_eps, q + h * hd);
    for (int h = 0; h < hp->n_head_kv; h++)
        ref_norm(k + h * hd, t->qk_norm[l][1], hd, hp->rms_eps, k + h * hd);
}

/* q, k, v += their biases (b: bq, bk, bv). */
static void ref_bias(const float *const *b, int qd, int kv, double *q, double *k, double *v)
{
    for (int i = 0; i < qd; i++)
        q[i] += b[0][i];
    for (int i = 0; i < kv; i++) {
        k[i] += b[1][i];
        v[i] += b[2][i];
    }
}

/* h = the residual after the last layer at position n - 1. */
void ref_eval(const struct tiny *t, const int *tok, int n, enum ref_variant var, double *h)
{
    const struct llama_hparams *hp = &t->m.hp;
    int d = hp->n_embd, hd = hp->head_dim, qd = hp->n_head * hd, kv = hp->n_head_kv * hd;
    double *x = calloc((size_t)n * (size_t)(d + qd + 2 * kv), sizeof *x);
    double *q = x + (size_t)n * d, *k = q + (size_t)n * qd, *v = k + (size_t)n * kv;
    double div[LLAMA_MAX_EMBD / 2], nb[LLAMA_MAX_EMBD], a[LLAMA_MAX_EMBD], o[LLAMA_MAX_EMBD];
    ref_divisors(t, var, div);
    /* ggml's attention factor scales every rotated value of Q and K */
    double scale =
        hp->rope_attn_factor != 0.0f && var != REF_NO_ATTN_FACTOR ? hp->rope_attn_factor : 1.0;
    int halves = ((hp->switches & LLAMA_SW_ROPE_NEOX) != 0) != (var == REF_OTHER_PAIRS);
    double es = (hp->switches & LLAMA_SW_EMBD_SCALE) && var != REF_NO_EMBD_SCALE ? sqrt(d) : 1.0;
    int rot = hp->n_rot && var != REF_WHOLE_HEAD ? hp->n_rot : hd;
    double one[LLAMA_MAX_EMBD / 2];
    for (int i = 0; i < hd / 2; i++)
        one[i] = 1.0;
    for (int p = 0; p < n; p++)
        for (int i = 0; i < d; i++)
            x[(size_t)p * d + i] = t->emb[(size_t)tok[p] * d + i] * es;
    for (int l = 0; l < hp->n_layer; l++) {
        /* Gemma 3: every layer but each sixth slides, with its own base */
        int slides =
            hp->n_swa > 0 && (hp->swa_pattern == 0 || l % hp->swa_pattern < hp->swa_pattern - 1);
        int window = slides && var != REF_NO_WINDOW ? hp->n_swa : 0;
        double base = slides && var != REF_ONE_BASE ? hp->rope_base_swa : hp->rope_base;
        const double *dv = slides ? one : div;
        for (int p = 0; p < n; p++) {
            ref_norm(x + (size_t)p * d, t->val[l][0], d, hp->rms_eps, nb);
            ref_matvec(t->val[l][1], qd, d, nb, q + (size_t)p * qd);
            ref_matvec(t->val[l][2], kv, d, nb, k + (size_t)p * kv);
            ref_matvec(t->val[l][3], kv, d, nb, v + (size_t)p * kv);
            if ((hp->switches & LLAMA_SW_QKV_BIAS) && var != REF_NO_BIAS)
                ref_bias(t->bias[l], qd, kv, q + (size_t)p * qd, k + (size_t)p * kv,
                         v + (size_t)p * kv);
            if ((hp->switches & LLAMA_SW_QK_NORM) && var != REF_NO_QK_NORM)
                ref_head_norms(t, l, q + (size_t)p * qd, k + (size_t)p * kv);
            ref_rope(q + (size_t)p * qd, hp->n_head, hd, rot, p, base, dv, halves, scale);
            ref_rope(k + (size_t)p * kv, hp->n_head_kv, hd, rot, p, base, dv, halves, scale);
        }
        for (int p = 0; p < n; p++) {
            ref_attend(hp, q + (size_t)p * qd, k, v, p, window, var, a);
            ref_matvec(t->val[l][4], d, qd, a, o);
            ref_add(t, t->post_norm[l][0], var, o, x + (size_t)p * d);
            ref_ffn(t, l, var, x + (size_t)p * d);
        }
    }
    memcpy(h, x + (size_t)(n - 1) * d, sizeof *h * (size_t)d);
    free(x);
}
