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

/* Blend b solved on head m: the Cholesky factor L of the Gram matrix of the
 * wanted tokens' rows, and the coefficients c with sum_j c_j (row_j . row_k)
 * = logit_k, so that each wanted token gets exactly its logit from the rows
 * part of the vector, sum_j c_j row_j. */
struct blend_fit {
    double L[SCENARIO_MAX_BLEND * SCENARIO_MAX_BLEND];
    double c[SCENARIO_MAX_BLEND];
    double hn; /* |sum c_j row_j|^2 = c . logit */
};

/* Fits blend b to head m. Fails when the rows are not independent, or when
 * the rows part does not stay below d (RMSNorm makes the whole vector's
 * squared length d); remedy ends that message, in parentheses. */
static int blend_fit(const struct scenario *s, const struct model *m, const struct blend *b,
                     const char *remedy, struct blend_fit *f, struct err *e)
{
    int n = b->n, d = m->d;
    for (int a = 0; a < n; a++)
        for (int k = 0; k <= a; k++) {
            const uint16_t *ra = m->w + (size_t)b->id[a] * d, *rk = m->w + (size_t)b->id[k] * d;
            double dot = 0.0;
            for (int i = 0; i < d; i++)
                dot += (double)lm_float(ra[i]) * lm_float(rk[i]);
            f->L[a * n + k] = dot; /* the lower triangle, all that spd_factor reads */
        }
    if (spd_factor(f->L, n) < 0)
        return err_set(e, ERR_USAGE, "scenario %s: the rows of a blend are not independent", s->id);
    spd_solve(f->L, n, b->logit, f->c);
    f->hn = 0.0;
    for (int j = 0; j < n; j++)
        f->hn += f->c[j] * b->logit[j];
    if (f->hn >= d)
        return err_set(e, ERR_USAGE, "scenario %s: its logits need a hidden size above %.0f (%s)",
                       s->id, ceil(f->hn),
                       remedy); /* %.0f: a tiny head can need more than an int */
    return 0;
}

int scenario_hidden(const struct scenario *s, const struct model *m, const int *ctx, int len,
                    float *h, struct err *e)
{
    const struct blend *b = scenario_blend(s, ctx, len);
    int d = m->d, n = b->n;
    struct blend_fit f;
    if (blend_fit(s, m, b, "use a larger one", &f, e) < 0)
        return -1;
    double *rows = malloc((size_t)n * (size_t)d * sizeof *rows);
    double *g = malloc((size_t)d * sizeof *g);
    if (!rows || !g) {
        free(rows);
        free(g);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < d; i++)
            rows[(size_t)j * d + i] = lm_float(m->w[(size_t)b->id[j] * d + i]);
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

/* Whether the head's hidden size can meet blend b (see blend_fit). */
static int blend_fits(const struct scenario *s, const struct model *m, const struct blend *b,
                      struct err *e)
{
    char remedy[32];
    snprintf(remedy, sizeof remedy, "this head has %d", m->d);
    struct blend_fit f;
    return blend_fit(s, m, b, remedy, &f, e);
}

int scenario_run_open(struct scenario_run *r, const struct scenario *s, int V, int d, uint64_t seed,
                      struct err *e)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    if (model_build(&r->m, V, d, seed, e) < 0)
        return -1;
    /* Every blend is checked now, so that no run stops half way. */
    int rc = blend_fits(s, &r->m, &s->fallback, e);
    for (int k = 0; rc == 0 && k < s->n_steps; k++)
        rc = blend_fits(s, &r->m, &s->steps[k], e);
    for (int k = 0; rc == 0 && k < s->n_next; k++)
        rc = blend_fits(s, &r->m, &s->next[k].blend, e);
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
    if (scenario_run_open(r, L->model.scenario, L->vocab.n, hidden ? hidden : L->model.hidden,
                          L->model.seed, e) < 0) {
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
