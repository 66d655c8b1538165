/* kind_scenario.c - the full-size lessons' logit source: the synthetic
 * model (model/model.h) on a real vocabulary, driven by a scenario (what it
 * "wants to say", data/scenario.h). From a step's blend and the LM head it
 * builds the hidden vector -- a combination of the rows of the wanted
 * tokens, solved so that each gets exactly its logit, plus noise orthogonal
 * to those rows, scaled to a root mean square of 1 -- then the head's
 * product gives every token its logit, on the backend when there is one.
 */
#include "source/kind_scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/clock.h"
#include "core/philox.h"
#include "model/head_vec.h"
#include "model/lmhead_gen.h"
#include "source/source_int.h"

#define NOISE_TAG 0x4E4F4953u /* "NOIS" */
#define PI        3.14159265358979323846

/* Factors the small symmetric positive definite matrix G in place (Cholesky):
 * its lower triangle becomes L with G = L L^T; only that triangle is read.
 * Returns -1 when G is not positive definite. */
static int spd_factor(double *G, int n)
{
    for (int j = 0; j < n; j++) {
        double d = G[j * n + j];
        for (int k = 0; k < j; k++)
            d -= G[j * n + k] * G[j * n + k];
        if (!(d > 0.0))
            return -1;
        G[j * n + j] = sqrt(d);
        for (int i = j + 1; i < n; i++) {
            double v = G[i * n + j];
            for (int k = 0; k < j; k++)
                v -= G[i * n + k] * G[j * n + k];
            G[i * n + j] = v / G[j * n + j];
        }
    }
    return 0;
}

/* Solves L L^T x = b with the factor L from spd_factor. */
static void spd_solve(const double *L, int n, const double *b, double *x)
{
    double y[SCENARIO_MAX_BLEND];
    for (int i = 0; i < n; i++) {
        double v = b[i];
        for (int k = 0; k < i; k++)
            v -= L[i * n + k] * y[k];
        y[i] = v / L[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double v = y[i];
        for (int k = i + 1; k < n; k++)
            v -= L[k * n + i] * x[k];
        x[i] = v / L[i * n + i];
    }
}

/* Blend b solved on a head: the Cholesky factor L of the Gram matrix of
 * the wanted tokens' rows, and the coefficients c with sum_j c_j (row_j .
 * row_k) = logit_k, so that each wanted token gets exactly its logit from
 * the rows part of the vector, sum_j c_j row_j. */
struct blend_fit {
    double L[SCENARIO_MAX_BLEND * SCENARIO_MAX_BLEND];
    double c[SCENARIO_MAX_BLEND];
    double hn; /* |sum c_j row_j|^2 = c . logit */
};

enum fit {
    FIT_OK,
    FIT_DEPENDENT, /* the rows are not independent */
    FIT_SHORT,     /* the rows part does not stay below d (RMSNorm makes the whole
                    * vector's squared length d): the head is too small */
};

/* Solves blend b on rows[j] (the d bf16 weights of token b->id[j]). */
static enum fit blend_solve(const uint16_t *const *rows, int d, const struct blend *b,
                            struct blend_fit *f)
{
    int n = b->n;
    for (int a = 0; a < n; a++)
        for (int k = 0; k <= a; k++) {
            double dot = 0.0;
            for (int i = 0; i < d; i++)
                dot += (double)lm_float(rows[a][i]) * lm_float(rows[k][i]);
            f->L[a * n + k] = dot; /* the lower triangle, all that spd_factor reads */
        }
    if (spd_factor(f->L, n) < 0)
        return FIT_DEPENDENT;
    spd_solve(f->L, n, b->logit, f->c);
    f->hn = 0.0;
    for (int j = 0; j < n; j++)
        f->hn += f->c[j] * b->logit[j];
    return f->hn < d ? FIT_OK : FIT_SHORT;
}

/* Blend b solved on head m's own rows, copied into w (b->n x d). */
static enum fit blend_on_head(const struct model *m, const struct blend *b, uint16_t *w,
                              struct blend_fit *f)
{
    const uint16_t *rows[SCENARIO_MAX_BLEND];
    for (int j = 0; j < b->n; j++) {
        rows[j] = w + (size_t)j * m->d;
        model_row(m, b->id[j], w + (size_t)j * m->d);
    }
    return blend_solve(rows, m->d, b, f);
}

/* ---- the hidden size a scenario needs -------------------------------------- */

/* A synthetic head's weights depend on its hidden size (each row is drawn
 * anew, and scaled by it), so what a blend needs changes with the size, and
 * not monotonically: the smallest size that fits is found by trying the
 * sizes, on the blends' rows alone (head_row gives the bits model_build
 * would). A budget of multiply-adds keeps a hostile scenario (logits up to
 * 1000 that fit nowhere) from making the search long. */
#define FIT_STEP   8   /* the sizes tried: multiples of 8, as --hidden-size takes */
#define FIT_BUDGET 3e8 /* multiply-adds the search may spend: well under a second */

struct fit_search {
    const struct scenario *s;
    uint64_t seed;
    const struct blend *first; /* tried first at each size: the last one that did not fit */
    uint16_t *rows;            /* SCENARIO_MAX_BLEND x MODEL_MAX_HIDDEN weights */
    double spent;              /* multiply-adds so far */
    enum fit why;              /* why the last size tried did not fit */
};

static int n_blends(const struct scenario *s)
{
    return 1 + s->n_steps + s->n_next;
}

/* Blend i of s: the fallback, then every step's, then every next rule's. */
static const struct blend *blend_no(const struct scenario *s, int i)
{
    if (i == 0)
        return &s->fallback;
    if (i <= s->n_steps)
        return &s->steps[i - 1];
    return &s->next[i - 1 - s->n_steps].blend;
}

/* Blend b on a head of hidden size d built from the search's seed. */
static enum fit blend_at_size(struct fit_search *fs, int d, const struct blend *b)
{
    const uint16_t *rows[SCENARIO_MAX_BLEND];
    float scale = lm_weight_scale(d);
    for (int j = 0; j < b->n; j++) {
        head_row(fs->seed, (uint32_t)b->id[j], d, scale, fs->rows + (size_t)j * d);
        rows[j] = fs->rows + (size_t)j * d;
    }
    fs->spent += (double)d * (b->n * (b->n + 1) / 2 + b->n);
    struct blend_fit f;
    return blend_solve(rows, d, b, &f);
}

/* Whether every blend of the scenario fits hidden size d. */
static int fits_at(struct fit_search *fs, int d)
{
    if ((fs->why = blend_at_size(fs, d, fs->first)) != FIT_OK)
        return 0;
    for (int i = 0; i < n_blends(fs->s); i++) {
        const struct blend *b = blend_no(fs->s, i);
        if (b != fs->first && (fs->why = blend_at_size(fs, d, b)) != FIT_OK) {
            fs->first = b;
            return 0;
        }
    }
    return 1;
}

/* The smallest multiple of FIT_STEP in [from, MODEL_MAX_HIDDEN] that every
 * blend fits, or 0 when none does (or the budget ran out: *tried is then
 * the largest size tried). */
static int smallest_fit(struct fit_search *fs, int from, int *tried)
{
    *tried = 0;
    for (int d = from; d <= MODEL_MAX_HIDDEN && fs->spent < FIT_BUDGET; d += FIT_STEP) {
        *tried = d;
        if (fits_at(fs, d))
            return d;
    }
    return 0;
}

/* The message when scenario s does not fit the head of hidden size d (built
 * from seed), blend b being one that does not fit: the smallest size that
 * does, found by trying them. Returns -1. */
static int fit_error(const struct scenario *s, uint64_t seed, int d, const struct blend *b,
                     enum fit why, struct err *e)
{
    struct fit_search fs = { s, seed, b, NULL, 0.0, why };
    fs.rows = malloc((size_t)SCENARIO_MAX_BLEND * MODEL_MAX_HIDDEN * sizeof *fs.rows);
    if (!fs.rows)
        return err_set(e, ERR_SYSTEM, "out of memory");
    int tried, n = 0, above = 0;
    /* The largest size first: a blend that does not fit it fits none. */
    if (blend_at_size(&fs, MODEL_MAX_HIDDEN, b) == FIT_OK) {
        n = smallest_fit(&fs, FIT_STEP, &tried);
        if (n > 0 && n < d) /* smaller sizes fit, and this one does not */
            above = smallest_fit(&fs, (d / FIT_STEP + 1) * FIT_STEP, &tried);
    } else {
        tried = MODEL_MAX_HIDDEN;
    }
    free(fs.rows);
    if (n > d)
        return err_set(e, ERR_USAGE,
                       "scenario %s: its logits need a hidden size of at least %d (this head has "
                       "%d)",
                       s->id, n, d);
    if (n > 0 && above > 0)
        return err_set(e, ERR_USAGE,
                       "scenario %s: its logits do not fit a hidden size of %d (%d and %d do)",
                       s->id, d, n, above);
    if (n > 0)
        return err_set(e, ERR_USAGE,
                       "scenario %s: its logits do not fit a hidden size of %d (%d does)", s->id, d,
                       n);
    if (why == FIT_DEPENDENT && tried == MODEL_MAX_HIDDEN)
        return err_set(e, ERR_USAGE, "scenario %s: the rows of a blend are not independent", s->id);
    return err_set(e, ERR_USAGE, "scenario %s: its logits fit no hidden size from %d to %d", s->id,
                   FIT_STEP, tried);
}

int scenario_hidden(const struct scenario *s, const struct model *m, const int *ctx, int len,
                    float *h, struct err *e)
{
    const struct blend *b = scenario_blend(s, ctx, len);
    int d = m->d, n = b->n;
    struct blend_fit f;
    uint16_t *w = malloc((size_t)n * (size_t)d * sizeof *w);
    double *rows = malloc((size_t)n * (size_t)d * sizeof *rows);
    double *g = malloc((size_t)d * sizeof *g);
    if (!w || !rows || !g) {
        free(w);
        free(rows);
        free(g);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    enum fit why = blend_on_head(m, b, w, &f);
    if (why != FIT_OK) {
        free(w);
        free(rows);
        free(g);
        return fit_error(s, m->seed, d, b, why, e);
    }
    for (size_t k = 0; k < (size_t)n * (size_t)d; k++)
        rows[k] = lm_float(w[k]);
    free(w);
    /* Noise: a normal vector, drawn from the context (its length and last
     * token), with its part along the rows removed so the logits stay. */
    uint32_t last = len > 0 ? (uint32_t)ctx[len - 1] : 0u;
    for (int i = 0; i < d; i += 2) {
        struct philox4x32 cc = { { (uint32_t)len, last, (uint32_t)(i / 2), NOISE_TAG } };
        struct philox4x32 r = philox4x32_10(cc, (uint32_t)s->seed, (uint32_t)(s->seed >> 32));
        double u1 = ((r.v[0] >> 8) + 0.5) / 16777216.0, u2 = (r.v[1] >> 8) / 16777216.0;
        double rad = sqrt(-2.0 * log(u1));
        g[i] = rad * cos(2.0 * PI * u2);
        if (i + 1 < d)
            g[i + 1] = rad * sin(2.0 * PI * u2);
    }
    /* rg = row_j . g, and proj its coefficients along the rows ({ 0 }: gcc
     * cannot see that the loop fills the n entries spd_solve reads). */
    double rg[SCENARIO_MAX_BLEND] = { 0 }, proj[SCENARIO_MAX_BLEND];
    for (int j = 0; j < n; j++) {
        double dot = 0.0;
        for (int i = 0; i < d; i++)
            dot += rows[(size_t)j * d + i] * g[i];
        rg[j] = dot;
    }
    spd_solve(f.L, n, rg, proj);
    double gsq = 0.0;
    for (int i = 0; i < d; i++) {
        double v = g[i];
        for (int j = 0; j < n; j++)
            v -= proj[j] * rows[(size_t)j * d + i];
        g[i] = v;
        gsq += v * v;
    }
    /* Root mean square 1: the noise fills what the rows leave of d. */
    double beta = gsq > 0 ? sqrt((d - f.hn) / gsq) : 0.0;
    for (int i = 0; i < d; i++) {
        double v = beta * g[i];
        for (int j = 0; j < n; j++)
            v += f.c[j] * rows[(size_t)j * d + i];
        h[i] = (float)(SCENARIO_HIDDEN_SCALE * v);
    }
    free(rows);
    free(g);
    return 0;
}

int scenario_run_open(struct scenario_run *r, const struct scenario *s, int V, int d, uint64_t seed,
                      struct err *e)
{
    return scenario_run_open_progress(r, s, V, d, seed, NULL, e);
}

int scenario_run_open_progress(struct scenario_run *r, const struct scenario *s, int V, int d,
                               uint64_t seed, const struct model_progress *p, struct err *e)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    if (model_build_progress(&r->m, V, d, seed, p, e) < 0)
        return -1;
    /* Every blend is checked now, so that no run stops half way. */
    uint16_t *w = malloc((size_t)SCENARIO_MAX_BLEND * (size_t)d * sizeof *w);
    int rc = w ? 0 : err_set(e, ERR_SYSTEM, "out of memory");
    for (int i = 0; rc == 0 && i < n_blends(s); i++) {
        struct blend_fit f;
        const struct blend *b = blend_no(s, i);
        enum fit why = blend_on_head(&r->m, b, w, &f);
        if (why != FIT_OK)
            rc = fit_error(s, seed, d, b, why, e);
    }
    free(w);
    if (rc < 0) {
        model_free(&r->m);
        return -1;
    }
    r->h = malloc((size_t)d * sizeof *r->h);
    r->x = malloc((size_t)d * sizeof *r->x);
    r->logits = malloc((size_t)V * sizeof *r->logits);
    if (!r->h || !r->x || !r->logits) {
        scenario_run_free(r);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    return 0;
}

void scenario_run_free(struct scenario_run *r)
{
    model_free(&r->m);
    free(r->h);
    free(r->x);
    free(r->logits);
    free(r->ctx);
    memset(r, 0, sizeof *r);
}

const float *scenario_run_logits(struct scenario_run *r, const int *ctx, int len, struct err *e)
{
    if (r->valid && r->ctx_len == len &&
        (len == 0 || memcmp(r->ctx, ctx, (size_t)len * sizeof *ctx) == 0))
        return r->logits;
    r->valid = 0;
    if (len > r->ctx_cap) {
        int cap = len < 64 ? 64 : 2 * len;
        int *c = realloc(r->ctx, (size_t)cap * sizeof *c);
        if (!c) {
            err_set(e, ERR_SYSTEM, "out of memory");
            return NULL;
        }
        r->ctx = c;
        r->ctx_cap = cap;
    }
    double t0 = clock_ms();
    if (scenario_hidden(r->s, &r->m, ctx, len, r->h, e) < 0)
        return NULL;
    if (!r->be)
        model_rmsnorm(r->h, r->m.d, r->x); /* a backend normalizes h itself */
    double t1 = clock_ms();
    if (r->be) {
        /* The backend normalizes h itself and keeps its logits; the
         * step's panes need every token's value, so row 0 comes back. */
        if (backend_logits(r->be, r->h, 1, e) < 0 || backend_get_logits(r->be, 0, r->logits, e) < 0)
            return NULL;
    } else {
        model_logits(&r->m, r->x, r->logits);
    }
    r->hidden_ms = t1 - t0;
    r->logits_ms = clock_ms() - t1;
    if (len)
        memcpy(r->ctx, ctx, (size_t)len * sizeof *ctx);
    r->ctx_len = len;
    r->valid = 1;
    return r->logits;
}

/* ---- the kind ------------------------------------------------------------ */

static int scenario_runs(const struct lesson *L)
{
    return L->model.on && L->model.scenario;
}

static int scenario_open(struct source *src, int hidden, struct err *e)
{
    const struct lesson *L = src->L;
    struct scenario_run *r = calloc(1, sizeof *r);
    if (!r)
        return err_set(e, ERR_SYSTEM, "out of memory");
    if (scenario_run_open_progress(r, L->model.scenario, L->vocab.n,
                                   hidden ? hidden : L->model.hidden, L->model.seed, src->progress,
                                   e) < 0) {
        free(r);
        return -1;
    }
    src->state = r;
    return 0;
}

static void scenario_close(struct source *src)
{
    if (src->state) {
        scenario_run_free(src->state);
        free(src->state);
        src->state = NULL;
    }
}

static int scenario_logits(struct source *src, int k, const int *ctx, int len,
                           struct source_logits *out, struct err *e)
{
    (void)k;
    *out = (struct source_logits){ .f = scenario_run_logits(src->state, ctx, len, e) };
    return out->f ? 0 : -1;
}

/* The logits of the context run last (every step's come from the same head). */
static int scenario_peek(const struct source *src, int k, struct source_logits *out)
{
    (void)k;
    const struct scenario_run *r = src->state;
    *out = (struct source_logits){ .f = r->valid ? r->logits : NULL };
    return out->f ? 0 : -1;
}

static int scenario_use_backend(struct source *src, struct backend *be, struct err *e)
{
    struct scenario_run *r = src->state;
    r->be = NULL;
    r->valid = 0;
    if (backend_head(be, &r->m, e) < 0)
        return -1;
    r->be = be;
    return 0;
}

static int scenario_hidden_size(const struct source *src)
{
    return ((const struct scenario_run *)src->state)->m.d;
}

static int scenario_hidden_of(struct source *src, const int *ctx, int len, float *h, struct err *e)
{
    struct scenario_run *r = src->state;
    return scenario_hidden(r->s, &r->m, ctx, len, h, e);
}

const struct source_ops SOURCE_SCENARIO = {
    .kind = "scenario",
    .follows_context = 1,
    .runs = scenario_runs,
    .open = scenario_open,
    .close = scenario_close,
    .logits = scenario_logits,
    .peek = scenario_peek,
    .use_backend = scenario_use_backend,
    .hidden_size = scenario_hidden_size,
    .hidden = scenario_hidden_of,
};
