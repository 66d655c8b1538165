/* check_gpu.c - the CUDA backend against the CPU reference (make test-gpu).
 *
 * Both backends get the same input and must give the same answers, within
 * the tolerances below (DESIGN.md section 2, "CPU and GPU agree"):
 *
 *   1. the LM head: the same bf16 weights (built from one seed) times the
 *      same RMSNorm'd hidden vectors, at V = 128,256 and d = 4,096, and at
 *      widths that are not a multiple of 16 in batches of 1 to 8: every
 *      logit with the same bits (the tolerance below says how far off);
 *   2. every step of the toy lessons (the .ini files in lessons/) with its own settings,
 *      context and Philox counter;
 *   3. the four real scenarios (the real-* lessons), a few steps each: the
 *      device's logits are copied back and given to the CPU, so that both
 *      sample the very same floats;
 *   4. 1,000 random rows (V = 5, 1,000 and 128,256) of many shapes with
 *      random settings, in batches of 1, 8, 64 and 256;
 *   5. the device against itself: batches of 8 full-size rows sampled twice
 *      and drawn from twice, every bit the same (the seed's promise of the
 *      same tokens on every run);
 *
 * and, for some requests of every part, 10,000 draws (backend_draws) with
 * and without the filters, token for token: both draw on the integer
 * weights of rule_draw_units, so no boundary excuses a difference there.
 *
 * Without a CUDA device (or without the CUDA backend in the build) it says
 * "check_gpu: skipped: <why>" and passes. --self puts the kernels' design
 * run on the CPU in the device's place (a CPU backend sampling by
 * backend_spec.c's candidate list), so that every comparison here, and the
 * design itself, is exercised on any machine, and --self --fault puts four
 * known faults into it (a logit of the head far off, another one ulp off,
 * the chosen token's final probability, a draw) and passes only when every
 * one of them is caught, so that the checks are seen to fail; --quick makes fewer rows and a small
 * LM head (d = 512), for compute-sanitizer. Exit status 0: pass or skipped; 1: a difference beyond
 * the tolerances, or a backend call that failed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/backend_spec.h"
#include "core/candidates.h"
#include "data/catalog.h"
#include "base/clock.h"
#include "data/lesson.h"
#include "model/lmhead_gen.h"
#include "model/model.h"
#include "core/philox.h"
#include "core/sampler.h"
#include "data/scenario.h"
#include "core/settings.h"
#include "source/kind_scenario.h"
#include "source/path.h"
#include "source/source.h"

/* Per request, the CPU (a) and the device (b) must agree on: */
#define TOL_FINAL                                                                                  \
    1e-6                  /* final (renormalized kept) probability of every token, kept mass,      \
                             and prob and final of the top rows: absolute */
#define TOL_ENTROPY 1e-6  /* entropy and entropy of the final probabilities, nats: absolute */
#define TOL_MAX_Z   1e-12 /* largest z': relative */
#define TOL_SUM_EXP 1e-9  /* sum of e^(z' - max): relative */
#define TOL_TOP_Z   1e-12 /* z' of the top rows: relative */
#define TOL_BOUNDARY                                                                               \
    1e-6 /* the step's draw adds doubles (K, the running kept mass) in the device's order: a       \
            different token is tolerated when u lies this close to the edge of the device's        \
            token's cumulative interval */
#define BOUNDARY_LIMIT 1e-5 /* boundary cases: at most 1 in 100,000 of the step's draws */

/* The LM head: see compare_head for why these two numbers. */
#define HEAD_TOL_REL 1e-5 /* of sum_i |w_i x_i| */
#define HEAD_TOL_ABS 1e-6
#define HEAD_SAMPLE  61 /* every this many tokens, the exact dot product in double as well */
#define HEAD_SHOWN   3  /* logits beyond the tolerance reported one by one, per call */

#define LLAMA3_V     128256
#define QUICK_HIDDEN 512 /* the tests' size (TEST_HIDDEN): the France scenario needs 440 */
#define N_TOP        16
#define N_DRAWS      10000
#define MAX_SHOWN    10 /* failures printed in full */
#define CTX_MAX      300
#define N_SCENARIOS  4
#define POOL_BITS    20 /* the random rows take their normals from a pool of 2^20 */
#define POOL_N       (1u << POOL_BITS)

static const int BATCH_SIZES[4] = { 1, 8, 64, 256 };

struct run {
    struct backend ref, dut; /* the CPU reference, the device (or the design on the CPU) */
    const char *dut_name;
    int self, quick, small, fault;
    long failures;
    long compared; /* the steps' sampled choices compared */
    long boundary; /* of which differed with u within TOL_BOUNDARY of a boundary */
    long draws;
    long token_fails, chosen_final_fails; /* of the failures: for --fault */
    long lesson_steps, scenario_steps, random_rows, repeat_rows;
    long lesson_skipped;          /* lesson steps with a stage the device refuses by name */
    long step_requests;           /* compared by compare_step */
    long random_batches[4];       /* of 1, 8, 64 and 256 requests */
    long head_values, head_equal; /* logits compared, and of them the bit-equal ones */
    long head_width_calls;        /* the calls of the widths part */
    long head_unequal_in_tol;     /* logits within the tolerance but not bit-equal: for --fault */
    long by_list, by_full;        /* the device's requests by path (backend.h) */
    int longest_list;
    double head_max_diff, head_max_ratio;
    double head_err_ref, head_err_dut; /* largest |logit - exact| / sum|w x| on the sample */
    struct trace host;                 /* the reference's per-token state, for boundaries */
    int host_V;
    float *pool; /* normals for the random rows */
};

static double now_s(void)
{
    return clock_ms() / 1e3;
}

/* Whether a and b differ by more than tol (NaN always differs). */
static int differs(double a, double b, double tol)
{
    if (a == b)
        return 0;
    return !(fabs(a - b) <= tol);
}

/* The same relative to the size of a. */
static int differs_rel(double a, double b, double rel)
{
    return differs(a, b, rel * fabs(a));
}

static void describe_settings(const struct backend_req *q, char *buf, size_t n)
{
    const struct sampler_settings *s = &q->s;
    char order[128];
    chain_describe(&s->chain, order, sizeof order);
    snprintf(buf, n,
             "T %g, top-k %d, top-p %g, min-p %g, repetition %g (%s, %s, last %d), presence %g, "
             "frequency %g, shift %g, order %s, seed %llu, step %u, row %u, context %d (prompt %d)",
             s->temperature, s->top_k, s->top_p, s->min_p, s->repetition_penalty,
             penalty_formula_name(s->penalty_formula), penalty_scope_name(s->penalty_scope),
             s->penalty_last_n, s->presence_penalty, s->frequency_penalty, s->shift, order,
             (unsigned long long)s->seed, q->step, q->row, q->context_len, q->prompt_len);
}

/* Counts a failure; prints the first MAX_SHOWN with the request's settings. */
static void fail(struct run *R, const char *where, const struct backend_req *q, const char *fmt,
                 ...)
{
    R->failures++;
    if (R->failures > MAX_SHOWN) {
        if (R->failures == MAX_SHOWN + 1)
            printf("check_gpu: (further failures are counted, not shown)\n");
        return;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("check_gpu: FAIL %s: %s\n", where, msg);
    if (q) {
        char set[512];
        describe_settings(q, set, sizeof set);
        printf("    settings: %s\n", set);
    }
}

/* A backend call that failed. Returns -1. */
static int call_failed(struct run *R, const char *where, const char *who, const struct err *e)
{
    fail(R, where, NULL, "%s backend: %s", who, e->msg);
    return -1;
}

/* --- The boundary rule -------------------------------------------------- */

/* The distribution the step draws from, in the rank order of DESIGN.md
 * (descending z', ties to the lower id), with the cumulative sums of the
 * final probabilities that the draw compares u with. Built from the
 * reference (sampler_run_fast on the host, which is what the CPU backend
 * runs), only when the step's token differs. */
struct dist {
    int built, greedy;
    int *rank; /* rank of each id, -1 for a masked token */
    double *k; /* per rank: final */
    double *ck;
};

struct zid_s {
    double z;
    int id;
};

static int cmp_rank(const void *a, const void *b)
{
    const struct zid_s *x = a, *y = b;
    if (x->z != y->z)
        return x->z > y->z ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static void dist_free(struct dist *D)
{
    free(D->rank);
    free(D->k);
    free(D->ck);
    memset(D, 0, sizeof *D);
}

static int dist_build(struct run *R, struct dist *D, const struct backend_req *q, const float *z,
                      int V, struct err *e)
{
    if (D->built)
        return 0;
    if (R->host_V != V) {
        trace_free(&R->host);
        R->host_V = 0;
        if (trace_init(&R->host, V, e) < 0)
            return -1;
        R->host_V = V;
    }
    struct sampler_input in = { .vocab_size = V,
                                .logits_f = z,
                                .context = q->context,
                                .context_len = q->context_len,
                                .prompt_len = q->prompt_len,
                                .step = q->step,
                                .row = q->row };
    struct trace *t = &R->host;
    if (sampler_run_fast(&in, &q->s, t, 1, e) < 0)
        return -1;
    struct zid_s *o = malloc((size_t)V * sizeof *o);
    D->rank = malloc((size_t)V * sizeof *D->rank);
    D->k = malloc((size_t)V * sizeof *D->k);
    D->ck = malloc((size_t)V * sizeof *D->ck);
    if (!o || !D->rank || !D->k || !D->ck) {
        free(o);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    int m = 0;
    for (int v = 0; v < V; v++) {
        D->rank[v] = -1;
        if (t->fz[v] != -INFINITY)
            o[m++] = (struct zid_s){ t->fz[v], v };
    }
    qsort(o, (size_t)m, sizeof *o, cmp_rank);
    double K = t->kept_mass * t->sum_exp_shifted, ck = 0.0;
    for (int r = 0; r < m; r++) {
        int id = o[r].id;
        D->rank[id] = r;
        D->k[r] = t->fmark[id] == 0 && K > 0 ? t->fe[id] / K : 0.0;
        ck += D->k[r];
        D->ck[r] = ck;
    }
    free(o);
    D->greedy = t->greedy;
    D->built = 1;
    return 0;
}

/* Whether token g, drawn with u where the reference drew another token, is
 * a boundary case: g has a final probability, and u lies within
 * TOL_BOUNDARY of its cumulative interval [lo, hi) -- so a rounding of the
 * cumulative sums by less than TOL_BOUNDARY explains the difference. A
 * greedy step has no u and no boundary. */
static int near_boundary(const struct dist *D, int V, int g, double u)
{
    if (g < 0 || g >= V || D->rank[g] < 0 || D->greedy)
        return 0;
    int r = D->rank[g];
    if (!(D->k[r] > 0.0))
        return 0;
    double lo = r > 0 ? D->ck[r - 1] : 0.0, hi = D->ck[r];
    return u >= lo - TOL_BOUNDARY && u < hi + TOL_BOUNDARY;
}

/* A token that differs: a boundary case (counted) or a failure. Returns 0
 * for a boundary case, -1 otherwise (after fail). */
static int different_token(struct run *R, const char *where, const struct backend_req *q,
                           const float *z, int V, struct dist *D, int a, int b, double u,
                           const char *what)
{
    struct err e;
    if (dist_build(R, D, q, z, V, &e) < 0) {
        fail(R, where, q, "%s: the reference distribution: %s", what, e.msg);
        return -1;
    }
    if (near_boundary(D, V, b, u)) {
        R->boundary++;
        return 0;
    }
    int rb = b >= 0 && b < V ? D->rank[b] : -1;
    R->token_fails++;
    fail(R, where, q, "%s: CPU token %d (rank %d), %s token %d (rank %d), u %.9f", what, a,
         a >= 0 && a < V ? D->rank[a] : -1, R->dut_name, b, rb, u);
    return -1;
}

/* --- One request -------------------------------------------------------- */

/* Compares one request's results. Returns 0 or -1 (one failure counted). */
static int compare_req(struct run *R, const char *where, const struct backend_req *q,
                       const float *z, int V, const struct backend_res *a,
                       const struct backend_res *b, const double *fa, const double *fb,
                       const uint8_t *ka, const uint8_t *kb)
{
    const char *N = R->dut_name;
    if (a->kept_count != b->kept_count) {
        fail(R, where, q, "kept %d tokens, %s %d", a->kept_count, N, b->kept_count);
        return -1;
    }
    for (int v = 0; v < V; v++)
        if (ka[v] != kb[v]) {
            fail(R, where, q, "token %d: CPU %s it, %s %s it", v, ka[v] ? "kept" : "removed", N,
                 kb[v] ? "kept" : "removed");
            return -1;
        }
    for (int v = 0; v < V; v++)
        if (differs(fa[v], fb[v], TOL_FINAL)) {
            fail(R, where, q, "token %d: final probability %.12g, %s %.12g (tolerance %g)", v,
                 fa[v], N, fb[v], TOL_FINAL);
            return -1;
        }
    struct {
        const char *name;
        double x, y;
        int rel;
        double tol;
    } stats[] = {
        { "max z'", a->max_z, b->max_z, 1, TOL_MAX_Z },
        { "sum of exponentials", a->sum_exp, b->sum_exp, 1, TOL_SUM_EXP },
        { "kept mass", a->kept_mass, b->kept_mass, 0, TOL_FINAL },
        { "entropy", a->entropy, b->entropy, 0, TOL_ENTROPY },
        { "entropy of the final probabilities", a->entropy_final, b->entropy_final, 0,
          TOL_ENTROPY },
    };
    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++)
        if (stats[i].rel ? differs_rel(stats[i].x, stats[i].y, stats[i].tol)
                         : differs(stats[i].x, stats[i].y, stats[i].tol)) {
            fail(R, where, q, "%s %.15g, %s %.15g (tolerance %g%s)", stats[i].name, stats[i].x, N,
                 stats[i].y, stats[i].tol, stats[i].rel ? " relative" : "");
            return -1;
        }
    if (a->n_top != b->n_top) {
        fail(R, where, q, "%d top rows, %s %d", a->n_top, N, b->n_top);
        return -1;
    }
    for (int r = 0; r < a->n_top; r++) {
        const struct backend_top *x = &a->top[r], *y = &b->top[r];
        if (x->id != y->id || x->removed_by != y->removed_by) {
            fail(R, where, q, "top row %d: token %d removed by %d, %s token %d removed by %d", r,
                 x->id, x->removed_by, N, y->id, y->removed_by);
            return -1;
        }
        int zbad = isfinite(x->z) ? differs_rel(x->z, y->z, TOL_TOP_Z) : x->z != y->z;
        if (zbad || differs(x->prob, y->prob, TOL_FINAL) ||
            differs(x->final, y->final, TOL_FINAL)) {
            fail(R, where, q,
                 "top row %d (token %d): z' %.15g prob %.12g final %.12g, %s %.15g "
                 "%.12g %.12g",
                 r, x->id, x->z, x->prob, x->final, N, y->z, y->prob, y->final);
            return -1;
        }
    }
    if (a->sampled != b->sampled) {
        fail(R, where, q, "sampled %d, %s %d", a->sampled, N, b->sampled);
        return -1;
    }
    if (a->sampled && a->u != b->u) {
        fail(R, where, q, "u %.9f, %s %.9f (the same Philox counter)", a->u, N, b->u);
        return -1;
    }
    if (a->sampled)
        R->compared++;
    if (a->id == b->id) {
        if (differs(a->final, b->final, TOL_FINAL)) {
            R->chosen_final_fails++;
            fail(R, where, q, "the chosen token's final probability %.12g, %s %.12g", a->final, N,
                 b->final);
            return -1;
        }
        return 0;
    }
    if (!a->sampled) {
        fail(R, where, q, "greedy token %d, %s %d", a->id, N, b->id);
        return -1;
    }
    struct dist D = { 0 };
    int rc = different_token(R, where, q, z, V, &D, a->id, b->id, a->u, "the step's draw");
    dist_free(&D);
    return rc;
}

/* n draws of one request on both backends, with and without the filters. */
static void compare_draws(struct run *R, const char *where, const struct backend_req *q)
{
    int n = N_DRAWS;
    int *ka = malloc((size_t)n * sizeof *ka), *pa = malloc((size_t)n * sizeof *pa);
    int *kb = malloc((size_t)n * sizeof *kb), *pb = malloc((size_t)n * sizeof *pb);
    struct err e;
    if (!ka || !pa || !kb || !pb) {
        fail(R, where, q, "out of memory for %d draws", n);
    } else if (backend_draws(&R->ref, q, n, ka, pa, &e) < 0) {
        call_failed(R, where, "CPU", &e);
    } else if (backend_draws(&R->dut, q, n, kb, pb, &e) < 0) {
        call_failed(R, where, R->dut_name, &e);
    } else {
        R->draws += 2L * n;
        for (int i = 0; i < n; i++)
            for (int kept = 1; kept >= 0; kept--) {
                int x = kept ? ka[i] : pa[i], y = kept ? kb[i] : pb[i];
                if (x == y)
                    continue;
                /* Integer weights on both (rule_draw_units): no boundary
                 * excuses a difference. */
                R->token_fails++;
                fail(R, where, q, "draw %d %s the filters: CPU token %d, %s token %d, u %.9f", i,
                     kept ? "with" : "without", x, R->dut_name, y,
                     sampler_u(q->s.seed, q->step, q->row, (uint32_t)i));
                goto done; /* one failure per request is enough to see */
            }
    }
done:
    free(ka);
    free(pa);
    free(kb);
    free(pb);
}

/* --- A batch ------------------------------------------------------------- */

/* Samples B requests on both backends and compares them; the logits z
 * (rows x V, the host's copy) go to the CPU, and to the device too when
 * set_dut (else the device holds them already, from its head). Draws are
 * compared for the first n_draw requests. The CPU's tokens go to chosen
 * (B of them) when it is not NULL. Returns the requests that agreed, or -1
 * when a call failed. */
static int run_batch(struct run *R, const char *where, const float *z, int rows, int V,
                     struct backend_req *req, int B, int set_dut, int n_draw,
                     const char *const *labels, int *chosen)
{
    struct err e;
    if (backend_set_logits(&R->ref, z, rows, V, &e) < 0)
        return call_failed(R, where, "CPU", &e);
    if (set_dut && backend_set_logits(&R->dut, z, rows, V, &e) < 0)
        return call_failed(R, where, R->dut_name, &e);
    size_t n = (size_t)B * (size_t)V;
    double *fa = malloc(n * sizeof *fa), *fb = malloc(n * sizeof *fb);
    uint8_t *ka = malloc(n), *kb = malloc(n);
    struct backend_res *ra = calloc((size_t)B, sizeof *ra), *rb = calloc((size_t)B, sizeof *rb);
    struct backend_req *qb = malloc((size_t)B * sizeof *qb);
    int agreed = -1;
    if (!fa || !fb || !ka || !kb || !ra || !rb || !qb) {
        fail(R, where, NULL, "out of memory for a batch of %d rows of %d", B, V);
        goto out;
    }
    /* NaN-filled, so that a value a backend leaves unwritten shows. */
    for (size_t i = 0; i < n; i++)
        fb[i] = NAN;
    memset(kb, 0xEE, n);
    for (int i = 0; i < B; i++) {
        req[i].final_out = fa + (size_t)i * V;
        req[i].kept_out = ka + (size_t)i * V;
        qb[i] = req[i];
        qb[i].final_out = fb + (size_t)i * V;
        qb[i].kept_out = kb + (size_t)i * V;
    }
    if (backend_sample(&R->ref, req, B, ra, &e) < 0) {
        call_failed(R, where, "CPU", &e);
        goto out;
    }
    if (backend_sample(&R->dut, qb, B, rb, &e) < 0) {
        call_failed(R, where, R->dut_name, &e);
        goto out;
    }
    agreed = 0;
    for (int i = 0; i < B; i++) {
        char w[320];
        snprintf(w, sizeof w, "%s, request %d of %d%s%s", where, i, B, labels ? " " : "",
                 labels ? labels[i] : "");
        const float *zr = z + (size_t)req[i].row * V;
        if (compare_req(R, w, &req[i], zr, V, &ra[i], &rb[i], fa + (size_t)i * V,
                        fb + (size_t)i * V, ka + (size_t)i * V, kb + (size_t)i * V) == 0)
            agreed++;
        if (i < n_draw)
            compare_draws(R, w, &req[i]);
    }
    for (int i = 0; chosen && i < B; i++)
        chosen[i] = ra[i].id;
out:
    for (int i = 0; i < B; i++) {
        req[i].final_out = NULL;
        req[i].kept_out = NULL;
    }
    free(fa);
    free(fb);
    free(ka);
    free(kb);
    free(ra);
    free(rb);
    free(qb);
    return agreed;
}

/* --- Part 2: the lessons ------------------------------------------------ */

#define LESSON_PASSES 3 /* the lesson's own seed, then two others */

static int lessons_part(struct run *R, const struct catalog *cat, char **model_paths, int *n_model)
{
    double t0 = now_s();
    long failures0 = R->failures;
    int n_lessons = 0;
    *n_model = 0;
    for (int f = 0; f < cat->n; f++) {
        struct lesson L;
        struct err e;
        if (catalog_load(cat, cat->files[f], &L, &e) < 0) {
            fail(R, cat->files[f], NULL, "%s", e.msg);
            continue;
        }
        if (L.model.on) {
            if (*n_model < N_SCENARIOS)
                model_paths[(*n_model)++] = strdup(cat->files[f]);
            lesson_free(&L);
            continue;
        }
        if (L.captured || L.vocab.n > LESSON_MAX_VOCAB || L.n_steps > BACKEND_MAX_BATCH) {
            lesson_free(&L);
            continue;
        }
        int V = L.vocab.n, B = 0;
        struct source src;
        if (source_open(&src, &L, NULL, 0, 0, &e) < 0) {
            fail(R, L.id, NULL, "%s", e.msg);
            lesson_free(&L);
            continue;
        }
        float *z = malloc((size_t)L.n_steps * (size_t)V * sizeof *z);
        int **ctx = calloc((size_t)L.n_steps, sizeof *ctx);
        struct backend_req *req = calloc((size_t)L.n_steps, sizeof *req);
        uint8_t *masks = malloc((size_t)L.n_steps * (size_t)V); /* the grammar's, a step each */
        if (!z || !ctx || !req || !masks) {
            fail(R, L.id, NULL, "out of memory");
            goto next;
        }
        for (int k = 1; k <= L.n_steps; k++) {
            const struct lesson_step *S = &L.steps[k - 1];
            if (isnan(source_logit(&src, k, 0)))
                continue;
            for (int v = 0; v < V; v++)
                z[(size_t)B * V + v] = (float)source_logit(&src, k, v);
            int len;
            if (source_lesson_context(&src, k, &ctx[B], &len, &e) < 0) {
                /* A step past a stop rule on the lesson's own path: its
                 * own context, or the prompt. */
                const int *c = S->has_context ? S->context : L.prompt;
                len = S->has_context ? S->context_len : L.prompt_len;
                ctx[B] = malloc((size_t)(len > 0 ? len : 1) * sizeof **ctx);
                if (!ctx[B]) {
                    fail(R, L.id, NULL, "out of memory");
                    goto next;
                }
                if (len > 0)
                    memcpy(ctx[B], c, (size_t)len * sizeof *c);
            }
            struct settings s;
            source_step_settings(&src, k, &s);
            const uint8_t *refused = NULL;
            if (backend_runs(&R->dut, &s.sampler, &e) < 0) { /* the grammar's mask, say */
                R->lesson_skipped++;
                free(ctx[B]);
                ctx[B] = NULL;
                continue;
            }
            if (source_row_refused(&src, &s, ctx[B], len, masks + (size_t)B * V, &refused, &e) <
                0) {
                fail(R, L.id, NULL, "step %d: %s", k, e.msg);
                free(ctx[B]);
                ctx[B] = NULL;
                continue;
            }
            req[B] = (struct backend_req){ .s = s.sampler,
                                           .context = ctx[B],
                                           .context_len = len,
                                           .prompt_len = L.prompt_len <= len ? L.prompt_len : len,
                                           .step = source_draw_step(&L, len),
                                           .row = (uint32_t)B,
                                           .n_top = N_TOP < V ? N_TOP : V,
                                           .breaker = src.breaker,
                                           .end_ids = L.vocab.eos,
                                           .n_end = L.vocab.n_eos,
                                           .refused = refused };
            B++;
        }
        for (int pass = 0; pass < LESSON_PASSES && B > 0; pass++) {
            struct backend_req *q = malloc((size_t)B * sizeof *q);
            if (!q) {
                fail(R, L.id, NULL, "out of memory");
                break;
            }
            memcpy(q, req, (size_t)B * sizeof *q);
            for (int i = 0; pass > 0 && i < B; i++)
                q[i].s.seed = 1000003u * (uint64_t)pass + 7919u * (uint64_t)i + 17u;
            char where[160];
            snprintf(where, sizeof where, "lesson %s (pass %d)", L.id, pass);
            if (run_batch(R, where, z, B, V, q, B, 1, pass == 0 ? B : 0, NULL, NULL) >= 0)
                R->lesson_steps += B;
            free(q);
        }
        n_lessons++;
    next:
        for (int i = 0; ctx && i < L.n_steps; i++)
            free(ctx[i]);
        free(ctx);
        free(req);
        free(masks);
        free(z);
        source_close(&src);
        lesson_free(&L);
    }
    printf("check_gpu: part 2, lessons: %d toy lessons, %ld steps sampled (%d passes with "
           "different seeds), draws on every step of the first pass, %ld steps left out (a "
           "stage the device refuses by name); failures %ld: %.1f s\n",
           n_lessons, R->lesson_steps, LESSON_PASSES, R->lesson_skipped, R->failures - failures0,
           now_s() - t0);
    return 0;
}

/* --- Part 4: random rows ------------------------------------------------ */

static uint64_t sm_next(uint64_t *g)
{
    uint64_t z = (*g += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rnd(uint64_t *g)
{
    return (double)(sm_next(g) >> 11) * (1.0 / 9007199254740992.0);
}

static int rnd_int(uint64_t *g, int n)
{
    int k = (int)(rnd(g) * n);
    return k < n ? k : n - 1;
}

static int make_pool(struct run *R)
{
    R->pool = malloc(POOL_N * sizeof *R->pool);
    if (!R->pool)
        return -1;
    for (uint32_t i = 0; i < POOL_N; i += 2) {
        double u1 = philox_uniform(2718, i, 1, 0) + 1.0 / 33554432.0;
        double u2 = philox_uniform(2718, i, 2, 0);
        double r = sqrt(-2.0 * log(u1));
        R->pool[i] = (float)(r * cos(6.283185307179586 * u2));
        R->pool[i + 1] = (float)(r * sin(6.283185307179586 * u2));
    }
    return 0;
}

enum shape { SH_NORMAL, SH_FLAT, SH_TIES, SH_MASKED, SH_LARGE, SH_PEAKED, SH_NARROW, SH_COUNT };
static const char *const SHAPE_NAME[SH_COUNT] = { "normal with peaks", "flat",
                                                  "exact ties",        "masked",
                                                  "large logits",      "one high peak",
                                                  "narrow normal" };

#define HOT_MAX 16

/* One random row of V logits; its hottest tokens (for contexts) in hot. */
static enum shape make_row(struct run *R, uint64_t *g, float *z, int V, int *hot, int *n_hot)
{
    enum shape sh = (enum shape)rnd_int(g, SH_COUNT);
    double spread = sh == SH_NARROW ? 0.01 : rnd(g) < 0.5 ? 2.5 : 0.5 + 3.5 * rnd(g);
    uint32_t start = (uint32_t)sm_next(g), stride = (uint32_t)sm_next(g) | 1u;
    for (int i = 0; i < V; i++)
        z[i] = (float)(spread * R->pool[(start + (uint32_t)i * stride) & (POOL_N - 1)]);
    int peaks = 1 + rnd_int(g, 8);
    *n_hot = 0;
    for (int j = 0; j < peaks; j++) {
        int id = rnd_int(g, V);
        z[id] = (float)(10.0 + 10.0 * rnd(g));
        hot[(*n_hot)++] = id;
    }
    switch (sh) {
    case SH_FLAT: {
        float c = (float)(-5.0 + 10.0 * rnd(g));
        for (int i = 0; i < V; i++)
            z[i] = c;
        break;
    }
    case SH_TIES:
        for (int i = 0; i < V; i++)
            z[i] = (float)(0.5 * floor(2.0 * z[i]));
        for (int j = 1; j < *n_hot; j++)
            z[hot[j]] = z[hot[0]]; /* tied peaks */
        break;
    case SH_MASKED: {
        double frac = rnd(g) < 0.3 ? 0.01 : rnd(g) < 0.5 ? 0.5 : 0.99;
        for (int i = 0; i < V; i++)
            if (rnd(g) < frac)
                z[i] = -INFINITY;
        z[hot[0]] = 12.0f; /* at least one finite logit */
        break;
    }
    case SH_LARGE: {
        float off = rnd(g) < 0.7 ? 80.0f : -80.0f;
        for (int i = 0; i < V; i++)
            z[i] += off;
        break;
    }
    case SH_PEAKED:
        z[hot[0]] += 40.0f;
        break;
    case SH_NORMAL:
    case SH_NARROW:
    case SH_COUNT:
        break;
    }
    while (*n_hot < HOT_MAX)
        hot[(*n_hot)++] = rnd_int(g, V);
    return sh;
}

static void random_settings(uint64_t *g, struct sampler_settings *s)
{
    sampler_defaults(s);
    double u = rnd(g);
    s->temperature = u < 0.15 ? 0.0 : u < 0.3 ? 1.0 : 0.3 + 1.7 * rnd(g);
    u = rnd(g);
    s->top_k = u < 0.4 ? 0 : u < 0.5 ? 1 : u < 0.7 ? 40 : u < 0.8 ? 5000 : 2 + rnd_int(g, 300);
    u = rnd(g);
    s->top_p = u < 0.45 ? 1.0 : u < 0.65 ? 0.95 : 0.01 + 0.99 * rnd(g);
    u = rnd(g);
    s->min_p = u < 0.55 ? 0.0 : u < 0.7 ? 0.05 : u < 0.75 ? 1.0 : 0.3 * rnd(g);
    if (rnd(g) < 0.5) {
        s->repetition_penalty = 1.0 + 0.5 * rnd(g);
        s->penalty_formula = rnd(g) < 0.5 ? PENALTY_ENGINE : PENALTY_LESSON;
        s->penalty_scope = rnd(g) < 0.5 ? SCOPE_GENERATED : SCOPE_ALL;
        s->penalty_last_n = rnd(g) < 0.5 ? 0 : 1 + rnd_int(g, 64);
        s->presence_penalty = rnd(g) < 0.3 ? -0.5 + 1.5 * rnd(g) : 0.0;
        s->frequency_penalty = rnd(g) < 0.3 ? 0.5 * rnd(g) : 0.0;
    }
    if (rnd(g) < 0.3)
        s->shift = -20.0 + 40.0 * rnd(g);
    if (rnd(g) < 0.1) {
        /* A custom order: some of the stages of sampling.def, shuffled. */
        enum stage st[STAGE_COUNT];
        for (int i = 0; i < STAGE_COUNT; i++)
            st[i] = (enum stage)i;
        for (int i = STAGE_COUNT - 1; i > 0; i--) {
            int j = rnd_int(g, i + 1);
            enum stage x = st[i];
            st[i] = st[j];
            st[j] = x;
        }
        s->chain.n = 1 + rnd_int(g, STAGE_COUNT);
        memcpy(s->chain.stage, st, sizeof st);
        s->chain.preset = PRESET_CUSTOM;
        s->chain.topk_keep_ties = 0;
    } else {
        chain_preset(&s->chain, (enum preset)rnd_int(g, PRESET_CUSTOM));
    }
    s->seed = sm_next(g);
}

/* --- Part 2b: refusals ------------------------------------------------------ */

/* The rule for values out of range (HACKING.md, "The range of z'"), on both
 * sides: each request must be refused by both backends with the same
 * message. It is also why no kept token can carry a z' of -inf into a
 * stage: every value stage refuses the row first, removed tokens included
 * (top-k then temperature, in llama.cpp's order). */
struct refusal {
    const char *what;
    float z[7];
    double temperature, repetition;
    int llama_order, top_k, ctx_len;
};

static void refusals_part(struct run *R)
{
    static const float TOY7[7] = { -3.2f, 1.0f, 0.5f, 2.1f, -1.0f, 2.1f, 0.3f };
    static const int CTX[4] = { 1, 2, 3, 5 };
    const struct refusal CASES[] = {
        { "temperature past the limit", { 0 }, 1e-31, 1.0, 0, 0, 0 },
        { "top-k, then temperature past it", { 0 }, 1e-31, 1.0, 1, 1, 0 },
        { "temperature overflowing", { 0 }, 1e-303, 1.0, 0, 0, 0 },
        { "repetition penalty past it", { 0 }, 1.0, 1e-300, 0, 0, 4 },
        { "a NaN logit", { 1, 2, NAN, 0, 0, 0, 0 }, 0.8, 1.0, 0, 0, 0 },
        { "a +inf logit", { 1, INFINITY, 0, 0, 0, 0, 0 }, 0.8, 1.0, 0, 0, 0 },
        { "no finite logit",
          { -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY },
          0.8,
          1.0,
          0,
          0,
          0 },
    };
    int n = (int)(sizeof CASES / sizeof CASES[0]), failures0 = (int)R->failures;
    for (int c = 0; c < n; c++) {
        const struct refusal *k = &CASES[c];
        float z[7];
        memcpy(z, k->z[0] == 0.0f && k->z[1] == 0.0f ? TOY7 : k->z, sizeof z);
        struct backend_req q = { .context = CTX, .context_len = k->ctx_len, .n_top = 4 };
        sampler_defaults(&q.s);
        if (k->llama_order)
            chain_preset(&q.s.chain, PRESET_LLAMACPP);
        q.s.temperature = k->temperature;
        q.s.repetition_penalty = k->repetition;
        q.s.top_k = k->top_k;
        struct backend_res ra, rb;
        struct err ea, eb;
        if (backend_set_logits(&R->ref, z, 1, 7, &ea) < 0 ||
            backend_set_logits(&R->dut, z, 1, 7, &eb) < 0) {
            fail(R, k->what, NULL, "set_logits failed");
            continue;
        }
        int a = backend_sample(&R->ref, &q, 1, &ra, &ea),
            b = backend_sample(&R->dut, &q, 1, &rb, &eb);
        if (a == 0 || b == 0)
            fail(R, k->what, &q, "not refused: CPU %d, %s %d", a, R->dut_name, b);
        else if (strcmp(ea.msg, eb.msg))
            fail(R, k->what, &q, "CPU: %s; %s: %s", ea.msg, R->dut_name, eb.msg);
    }
    printf("check_gpu: part 2b, refusals: %d requests out of range or without a finite logit, "
           "the same message from both; failures %ld\n",
           n, R->failures - failures0);
}

struct plan {
    int V, B, count;
};

static int random_part(struct run *R)
{
    static const struct plan FULL[] = {
        { 5, 1, 4 },         { 5, 8, 2 },        { 1000, 8, 1 },      { 1000, 64, 1 },
        { LLAMA3_V, 1, 12 }, { LLAMA3_V, 8, 8 }, { LLAMA3_V, 64, 1 }, { LLAMA3_V, 256, 3 },
    };
    static const struct plan QUICK[] = {
        { 5, 1, 2 },        { 1000, 8, 1 },      { LLAMA3_V, 1, 2 },
        { LLAMA3_V, 8, 1 }, { LLAMA3_V, 64, 1 }, { LLAMA3_V, 256, 1 },
    };
    static const struct plan SMALL[] = { { 5, 1, 2 }, { 5, 8, 1 }, { 1000, 8, 1 } };
    const struct plan *P = R->small ? SMALL : R->quick ? QUICK : FULL;
    long failures0 = R->failures;
    int n_plan = R->small   ? (int)(sizeof SMALL / sizeof SMALL[0])
                 : R->quick ? (int)(sizeof QUICK / sizeof QUICK[0])
                            : (int)(sizeof FULL / sizeof FULL[0]);
    double t0 = now_s();
    if (!R->pool && make_pool(R) < 0) {
        fail(R, "random rows", NULL, "out of memory");
        return -1;
    }
    uint64_t g = 0x6C6F6769746C6162ull; /* "logitlab" */
    float *z = malloc((size_t)BACKEND_MAX_BATCH * LLAMA3_V * sizeof *z);
    int *ctx = malloc((size_t)BACKEND_MAX_BATCH * CTX_MAX * sizeof *ctx);
    struct backend_req *req = malloc((size_t)BACKEND_MAX_BATCH * sizeof *req);
    const char **labels = malloc((size_t)BACKEND_MAX_BATCH * sizeof *labels);
    char(*lab)[64] = malloc((size_t)BACKEND_MAX_BATCH * sizeof *lab);
    if (!z || !ctx || !req || !labels || !lab) {
        fail(R, "random rows", NULL, "out of memory");
        goto out;
    }
    int batch_no = 0;
    for (int p = 0; p < n_plan; p++)
        for (int c = 0; c < P[p].count; c++, batch_no++) {
            int V = P[p].V, B = P[p].B;
            /* Every third batch of more than one row takes its rows in
             * reverse: a request's row is req.row, not its place. */
            int reverse = B > 1 && batch_no % 3 == 2;
            for (int r = 0; r < B; r++) {
                int hot[HOT_MAX], n_hot;
                enum shape sh = make_row(R, &g, z + (size_t)r * V, V, hot, &n_hot);
                int i = reverse ? B - 1 - r : r; /* the request that reads row r */
                struct backend_req *q = &req[i];
                int *cx = ctx + (size_t)i * CTX_MAX;
                int len = rnd_int(&g, CTX_MAX + 1);
                for (int j = 0; j < len; j++)
                    cx[j] = rnd(&g) < 0.5 ? hot[rnd_int(&g, n_hot)] : rnd_int(&g, V);
                /* One draw after another: the order of initializers is not fixed. */
                int plen = rnd_int(&g, len + 1);
                uint32_t step =
                    rnd(&g) < 0.1 ? (uint32_t)sm_next(&g) : 1u + (uint32_t)rnd_int(&g, 1000);
                *q = (struct backend_req){ .context = cx,
                                           .context_len = len,
                                           .prompt_len = plen,
                                           .step = step,
                                           .row = (uint32_t)r,
                                           .n_top = N_TOP };
                random_settings(&g, &q->s);
                snprintf(lab[i], sizeof lab[i], "(V %d, row %d: %s)", V, r, SHAPE_NAME[sh]);
                labels[i] = lab[i];
            }
            char where[96];
            snprintf(where, sizeof where, "random batch %d", batch_no);
            if (run_batch(R, where, z, B, V, req, B, 1, 1, labels, NULL) >= 0) {
                R->random_rows += B;
                for (int k = 0; k < 4; k++)
                    R->random_batches[k] += B == BATCH_SIZES[k];
            }
        }
    printf("check_gpu: part 4, random rows: %ld rows of V 5, 1000 and 128256 in %d batches "
           "(%ld/%ld/%ld/%ld of 1/8/64/256), draws on the first request of each; failures %ld: "
           "%.1f s\n",
           R->random_rows, batch_no, R->random_batches[0], R->random_batches[1],
           R->random_batches[2], R->random_batches[3], R->failures - failures0, now_s() - t0);
out:
    free(z);
    free(ctx);
    free(req);
    free(labels);
    free(lab);
    return 0;
}

/* --- Part 5: the same batch twice ----------------------------------------- */

/* DESIGN.md section 2: a seed gives the same tokens on every run. The device
 * adds bucket masses and cumulative sums in an order that changes from run
 * to run (atomics, a parallel scan); they are integers (rule_mass,
 * rule_cum_units) so that the order cannot show. Here the same batch is
 * sampled twice, and drawn from twice, on the device under test, and every
 * bit must agree: a race or an order-dependent sum shows up as a difference. */

static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static int same_res(const struct backend_res *a, const struct backend_res *b)
{
    if (a->id != b->id || a->sampled != b->sampled || a->kept_count != b->kept_count ||
        a->n_top != b->n_top || !same_bits(a->u, b->u) || !same_bits(a->final, b->final) ||
        !same_bits(a->max_z, b->max_z) || !same_bits(a->sum_exp, b->sum_exp) ||
        !same_bits(a->kept_mass, b->kept_mass) || !same_bits(a->entropy, b->entropy) ||
        !same_bits(a->entropy_final, b->entropy_final))
        return 0;
    for (int t = 0; t < a->n_top; t++) {
        const struct backend_top *x = &a->top[t], *y = &b->top[t];
        if (x->id != y->id || x->removed_by != y->removed_by || !same_bits(x->z, y->z) ||
            !same_bits(x->prob, y->prob) || !same_bits(x->final, y->final))
            return 0;
    }
    return 1;
}

static int repeat_part(struct run *R)
{
    enum { B = 8 };
    const int V = LLAMA3_V, batches = R->quick ? 1 : 3;
    long failures0 = R->failures;
    double t0 = now_s();
    if (!R->pool && make_pool(R) < 0) {
        fail(R, "repeats", NULL, "out of memory");
        return -1;
    }
    size_t n = (size_t)B * V;
    float *z = malloc(n * sizeof *z);
    double *f1 = malloc(n * sizeof *f1), *f2 = malloc(n * sizeof *f2);
    uint8_t *k1 = malloc(n), *k2 = malloc(n);
    int *d1 = malloc(2 * (size_t)N_DRAWS * sizeof *d1),
        *d2 = malloc(2 * (size_t)N_DRAWS * sizeof *d2);
    int *ctx = malloc((size_t)B * CTX_MAX * sizeof *ctx);
    struct backend_req req[B], q2[B];
    struct backend_res r1[B], r2[B];
    struct err e;
    uint64_t g = 0x7265706561747321ull; /* "repeats!" */
    int deep = 0;
    if (!z || !f1 || !f2 || !k1 || !k2 || !d1 || !d2 || !ctx) {
        fail(R, "repeats", NULL, "out of memory");
        goto out;
    }
    for (int bt = 0; bt < batches; bt++) {
        char where[96];
        snprintf(where, sizeof where, "repeat batch %d", bt);
        for (int r = 0; r < B; r++) {
            int hot[HOT_MAX], n_hot;
            make_row(R, &g, z + (size_t)r * V, V, hot, &n_hot);
            int *cx = ctx + (size_t)r * CTX_MAX;
            int len = rnd_int(&g, CTX_MAX + 1);
            for (int j = 0; j < len; j++)
                cx[j] = hot[rnd_int(&g, n_hot)];
            req[r] = (struct backend_req){ .context = cx,
                                           .context_len = len,
                                           .prompt_len = 0,
                                           .step = 1u + (uint32_t)rnd_int(&g, 1000),
                                           .row = (uint32_t)r,
                                           .n_top = N_TOP };
            random_settings(&g, &req[r].s);
            /* Half the rows cut deep in the bulk: top-p far past the best 64
             * tokens, hot, so that the weighted radix walk decides. */
            if (r % 2 == 1) {
                req[r].s.temperature = 1.5;
                req[r].s.top_k = 0;
                req[r].s.top_p = 0.999;
                req[r].s.min_p = 0.0;
            }
        }
        if (backend_set_logits(&R->dut, z, B, V, &e) < 0) {
            call_failed(R, where, R->dut_name, &e);
            break;
        }
        for (int r = 0; r < B; r++) {
            q2[r] = req[r];
            req[r].final_out = f1 + (size_t)r * V;
            req[r].kept_out = k1 + (size_t)r * V;
            q2[r].final_out = f2 + (size_t)r * V;
            q2[r].kept_out = k2 + (size_t)r * V;
        }
        if (backend_sample(&R->dut, req, B, r1, &e) < 0 ||
            backend_sample(&R->dut, q2, B, r2, &e) < 0) {
            call_failed(R, where, R->dut_name, &e);
            break;
        }
        for (int r = 0; r < B; r++) {
            size_t off = (size_t)r * V;
            if (!same_res(&r1[r], &r2[r]))
                fail(R, where, &req[r],
                     "row %d: the results differ between two runs (token %d, %d)", r, r1[r].id,
                     r2[r].id);
            else if (memcmp(f1 + off, f2 + off, (size_t)V * sizeof *f1) != 0 ||
                     memcmp(k1 + off, k2 + off, (size_t)V) != 0)
                fail(R, where, &req[r],
                     "row %d: the final probabilities or kept marks differ "
                     "between two runs",
                     r);
            else
                R->repeat_rows++;
        }
        /* The draws of the deep rows, twice. */
        int draws_failed = 0;
        for (int r = 1; r < B && !draws_failed; r += 2) {
            req[r].final_out = NULL;
            req[r].kept_out = NULL;
            deep += r1[r].kept_count > 64; /* the cut lies past top-p's first look */
            if (backend_draws(&R->dut, &req[r], N_DRAWS, d1, d1 + N_DRAWS, &e) < 0 ||
                backend_draws(&R->dut, &req[r], N_DRAWS, d2, d2 + N_DRAWS, &e) < 0) {
                call_failed(R, where, R->dut_name, &e);
                draws_failed = 1;
                break;
            }
            R->draws += 4L * N_DRAWS;
            if (memcmp(d1, d2, 2 * (size_t)N_DRAWS * sizeof *d1) != 0)
                fail(R, where, &req[r], "row %d: %d draws differ between two runs", r, N_DRAWS);
        }
        if (draws_failed)
            break;
    }
    if (deep == 0) /* the weighted radix walk, what this part is for, was never reached */
        fail(R, "repeats", NULL, "no deep row kept more than the 64 tokens top-p looks at first");
    printf("check_gpu: part 5, repeats: %d batches of %d rows of V %d sampled twice and the deep "
           "rows drawn from twice on %s, every bit compared (%d of %d deep rows kept more than "
           "the 64 tokens top-p looks at first); failures %ld: %.1f s\n",
           batches, B, V, R->dut_name, deep, batches * B / 2, R->failures - failures0,
           now_s() - t0);
out:
    free(z);
    free(f1);
    free(f2);
    free(k1);
    free(k2);
    free(d1);
    free(d2);
    free(ctx);
    return 0;
}

/* --- Part 1: the LM head ------------------------------------------------- */

/* Runs the head of both backends on B hidden vectors h and compares the
 * logits; the device's are left in zb (B x V), for the CPU to sample.
 *
 * The tolerance. Both backends multiply the same bf16 weights w (bit for
 * bit: the same generator) by the same float vector x = RMSNorm(h) and add
 * in float, in different orders (the CPU: 16 lanes of 256 terms, then a
 * tree; the device: its own split and tree). A float sum of n terms is off
 * from the exact one by at most about n * 2^-24 * sum_i |w_i x_i| (2.4e-4
 * of it at n = 4,096) in the worst case; rounding errors behave like a
 * random walk, so the real error is far smaller: the sample printed with
 * part 1, against the exact sum in double, shows the CPU at about 3e-8 of
 * sum |w x|. The RMSNorm in another order changes x by about 1e-7
 * relative, which moves a logit by about 1e-7 of sum |w x| at most. We
 * allow
 *     |cpu - device| <= 1e-5 * sum_i |w_i x_i| + 1e-6,
 * some 300 times what the CPU shows, and still tight enough to catch a
 * device that rounds x to bf16 (2^-9 relative per term: a typical error of
 * 2e-3 against a tolerance of about 1e-3 at d = 4,096; tried on the host,
 * four out of five logits fail) or drops or repeats a block of terms. sum|w x|
 * is computed in double on the host from the host model's weights, only for
 * the tokens where the cheap bound 1e-5 |logit| / 1.001 + 1e-6 (never more
 * than the real one, since |logit| <= 1.001 sum|w x|) does not already
 * settle it. */
static int compare_head(struct run *R, const struct model *m, const float *h, int B, float *za,
                        float *zb, const char *where)
{
    struct err e;
    int V = m->V, d = m->d;
    if (backend_logits(&R->ref, h, B, &e) < 0)
        return call_failed(R, where, "CPU", &e);
    if (backend_logits(&R->dut, h, B, &e) < 0)
        return call_failed(R, where, R->dut_name, &e);
    for (int r = 0; r < B; r++) {
        if (backend_get_logits(&R->ref, r, za + (size_t)r * V, &e) < 0)
            return call_failed(R, where, "CPU", &e);
        if (backend_get_logits(&R->dut, r, zb + (size_t)r * V, &e) < 0)
            return call_failed(R, where, R->dut_name, &e);
    }
    float *x = malloc((size_t)d * sizeof *x);
    uint16_t *w = malloc((size_t)d * sizeof *w); /* a row of the head (model_row) */
    if (!x || !w) {
        free(x);
        free(w);
        fail(R, where, NULL, "out of memory");
        return -1;
    }
    int bad = 0;
    long unequal = 0;
    for (int r = 0; r < B; r++) {
        model_rmsnorm(h + (size_t)r * d, d, x);
        const float *a = za + (size_t)r * V, *b = zb + (size_t)r * V;
        for (int v = 0; v < V; v++) {
            int differs_bits = memcmp(&a[v], &b[v], sizeof a[v]) != 0;
            unequal += differs_bits;
            double diff = fabs((double)a[v] - (double)b[v]);
            double tol = HEAD_TOL_REL * fabs((double)a[v]) / 1.001 + HEAD_TOL_ABS;
            R->head_unequal_in_tol += differs_bits && diff <= tol;
            int sample = v % HEAD_SAMPLE == 0;
            if (diff <= tol && !sample) {
                if (diff > R->head_max_diff)
                    R->head_max_diff = diff;
                continue;
            }
            model_row(m, (int)v, w);
            double sum = 0.0, exact = 0.0;
            for (int i = 0; i < d; i++) {
                double t = (double)lm_float(w[i]) * (double)x[i];
                exact += t;
                sum += fabs(t);
            }
            tol = HEAD_TOL_REL * sum + HEAD_TOL_ABS;
            if (sample && sum > 0) {
                double ea = fabs(a[v] - exact) / sum, eb = fabs(b[v] - exact) / sum;
                if (ea > R->head_err_ref)
                    R->head_err_ref = ea;
                if (!(eb <= R->head_err_dut))
                    R->head_err_dut = eb;
            }
            if (!(diff <= R->head_max_diff))
                R->head_max_diff = diff;
            if (!(diff / tol <= R->head_max_ratio))
                R->head_max_ratio = diff / tol;
            if (!(diff <= tol) && bad++ < HEAD_SHOWN)
                fail(R, where, NULL,
                     "row %d token %d: logit %.9g, %s %.9g: |diff| %.3g > tolerance %.3g "
                     "(sum|w x| %.6g, exact %.9g)",
                     r, v, a[v], R->dut_name, b[v], diff, tol, sum, exact);
        }
        R->head_values += V;
    }
    free(x);
    free(w);
    R->head_equal += (long)B * V - unequal;
    if (bad > HEAD_SHOWN)
        fail(R, where, NULL, "%d more logits beyond the tolerance", bad - HEAD_SHOWN);
    /* Both sum each row in the CPU's lanes and tree (head_vec.c, gemv_kernel)
     * after the same RMSNorm: every logit must have the same bits. */
    if (unequal)
        fail(R, where, NULL, "%ld of %ld logits (batch %d, d %d) differ in their bits", unequal,
             (long)B * V, B, d);
    return bad || unequal ? -1 : 0;
}

/* The head at widths that are not a multiple of 16 (d = 4,100: the 8-byte
 * loads, and a tail of 4 columns; d = 4,104: the 16-byte loads, and a tail
 * of 8), at batches 1 and 2 (their own kernels), 3 and 5 (a part-filled
 * tile of 4 and of 8) and 8, on a small vocabulary of 1,027 rows (a part-
 * filled band). The models go to ms[], which the caller frees after the
 * backends let go of them. */
static void head_widths(struct run *R, struct model ms[2])
{
    static const int D[2] = { 4100, 4104 }, BS[5] = { 1, 2, 3, 5, 8 };
    enum { V = 1027, BMAX = 8 };
    struct err e;
    float *h = malloc((size_t)BMAX * 4104 * sizeof *h);
    float *za = malloc((size_t)BMAX * V * sizeof *za), *zb = malloc((size_t)BMAX * V * sizeof *zb);
    for (int k = 0; k < 2 && h && za && zb; k++) {
        int d = D[k];
        if (model_build(&ms[k], V, d, MODEL_DEFAULT_SEED + (uint64_t)k, &e) < 0) {
            fail(R, "LM head widths", NULL, "model_build: %s", e.msg);
            break;
        }
        if (backend_head(&R->ref, &ms[k], &e) < 0 || backend_head(&R->dut, &ms[k], &e) < 0) {
            fail(R, "LM head widths", NULL, "backend_head: %s", e.msg);
            break;
        }
        for (int i = 0; i < BMAX * d; i++) { /* normals of standard deviation 3 */
            double u1 = philox_uniform(99, (uint32_t)i, (uint32_t)k, 1) + 1.0 / 33554432.0;
            double u2 = philox_uniform(99, (uint32_t)i, (uint32_t)k, 2);
            h[i] = (float)(3.0 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
        }
        for (int j = 0; j < 5; j++) {
            char where[64];
            snprintf(where, sizeof where, "LM head, d %d, batch %d", d, BS[j]);
            compare_head(R, &ms[k], h, BS[j], za, zb, where);
            R->head_width_calls++;
        }
    }
    if (!h || !za || !zb)
        fail(R, "LM head widths", NULL, "out of memory");
    free(h);
    free(za);
    free(zb);
}

/* --- Parts 1 and 3: the head and the scenarios -------------------------- */

/* backend_step on the device under test (on CUDA its head and list path as
 * one graph, one wait) must give what its backend_logits then
 * backend_sample give, bit for bit: the same kernels on the same rows. The
 * requests read rows 0..B-1 of the B vectors h. */
static void compare_step(struct run *R, const char *where, const float *h, int B,
                         const struct backend_req *req)
{
    struct err e;
    struct backend_res *a = calloc((size_t)B, sizeof *a), *b = calloc((size_t)B, sizeof *b);
    if (!a || !b)
        fail(R, where, NULL, "out of memory for %d results", B);
    else if (backend_logits(&R->dut, h, B, &e) < 0 || backend_sample(&R->dut, req, B, a, &e) < 0)
        call_failed(R, where, R->dut_name, &e);
    else if (backend_step(&R->dut, h, B, req, b, &e) < 0)
        call_failed(R, where, R->dut_name, &e);
    else
        for (int i = 0; i < B; i++)
            if (!same_res(&a[i], &b[i]))
                fail(R, where, &req[i],
                     "request %d: backend_step (token %d) differs from backend_logits then "
                     "backend_sample (token %d)",
                     i, b[i].id, a[i].id);
    R->step_requests += B;
    free(a);
    free(b);
}

/* Closes both backends, keeping the device's counts of its two paths. */
static void close_backends(struct run *R)
{
    R->by_list = R->dut.by_list;
    R->by_full = R->dut.by_full;
    R->longest_list = R->dut.longest_list;
    backend_close(&R->ref);
    backend_close(&R->dut);
}

static int scenario_part(struct run *R, char **paths, int n_paths)
{
    struct lesson L[N_SCENARIOS];
    int n = 0;
    struct err e;
    struct model m, widths[2];
    memset(&m, 0, sizeof m);
    memset(widths, 0, sizeof widths);
    float *h = NULL, *za = NULL, *zb = NULL;
    int *ctx[N_SCENARIOS] = { 0 };
    int len[N_SCENARIOS] = { 0 };
    int steps = R->quick ? 3 : 8;
    int rc = -1;
    long failures0 = R->failures;
    for (int i = 0; i < n_paths; i++) {
        if (lesson_load(&L[n], paths[i], &e) < 0) {
            fail(R, paths[i], NULL, "%s", e.msg);
            continue;
        }
        if (!L[n].model.scenario || L[n].vocab.n != LLAMA3_V) {
            fail(R, paths[i], NULL, "not a real scenario of %d tokens", LLAMA3_V);
            lesson_free(&L[n]);
            continue;
        }
        n++;
    }
    if (n == 0) {
        fail(R, "scenarios", NULL, "no real-* lesson found");
        return -1;
    }
    int d = R->quick ? QUICK_HIDDEN : MODEL_DEFAULT_HIDDEN;
    uint64_t seed = L[0].model.seed ? L[0].model.seed : MODEL_DEFAULT_SEED;
    double t0 = now_s();
    if (model_build(&m, LLAMA3_V, d, seed, &e) < 0) {
        fail(R, "LM head", NULL, "model_build: %s", e.msg);
        goto out;
    }
    double t_build = now_s() - t0;
    if (backend_head(&R->ref, &m, &e) < 0) {
        call_failed(R, "LM head", "CPU", &e);
        goto out;
    }
    if (backend_head(&R->dut, &m, &e) < 0) {
        call_failed(R, "LM head", R->dut_name, &e);
        goto out;
    }
    double t_head = R->dut.wall_ms;
    h = malloc((size_t)N_SCENARIOS * d * sizeof *h);
    za = malloc((size_t)N_SCENARIOS * LLAMA3_V * sizeof *za);
    zb = malloc((size_t)N_SCENARIOS * LLAMA3_V * sizeof *zb);
    for (int i = 0; i < n; i++) {
        ctx[i] = malloc((size_t)(L[i].prompt_len + steps + 1) * sizeof **ctx);
        if (!ctx[i])
            break;
        memcpy(ctx[i], L[i].prompt, (size_t)L[i].prompt_len * sizeof **ctx);
        len[i] = L[i].prompt_len;
    }
    if (!h || !za || !zb || !ctx[n - 1]) {
        fail(R, "scenarios", NULL, "out of memory");
        goto out;
    }
    /* Part 1: the hidden vectors of the scenarios' first steps. */
    for (int i = 0; i < n; i++)
        if (scenario_hidden(L[i].model.scenario, &m, ctx[i], len[i], h + (size_t)i * d, &e) < 0) {
            fail(R, L[i].id, NULL, "scenario_hidden: %s", e.msg);
            goto out;
        }
    t0 = now_s();
    compare_head(R, &m, h, n, za, zb, "LM head, the scenarios' first steps");
    printf("check_gpu: part 1, LM head: V %d, d %d (%.2f GB of bf16 weights, built on the host "
           "in %.1f s, made ready by %s in %.0f ms), %d rows: max |diff| %.3g, max |diff| / "
           "tolerance %.3g; against the exact sum on a sample: CPU %.2g, %s %.2g of sum|w x| "
           "(tolerance %g sum|w x| + %g); failures %ld: %.1f s\n",
           LLAMA3_V, d, (double)m.bytes / 1e9, t_build, R->dut_name, t_head, n, R->head_max_diff,
           R->head_max_ratio, R->head_err_ref, R->dut_name, R->head_err_dut, HEAD_TOL_REL,
           HEAD_TOL_ABS, R->failures - failures0, now_s() - t0);
    failures0 = R->failures;
    /* Part 3: a few steps of every scenario, in one batch; rows 0..n-1
     * with the lessons' settings, and requests n..2n-1 on the same rows
     * with the benchmark's chain and a repetition penalty. */
    t0 = now_s();
    for (int k = 1; k <= steps; k++) {
        char where[96];
        snprintf(where, sizeof where, "scenarios, step %d", k);
        for (int i = 0; i < n; i++)
            if (scenario_hidden(L[i].model.scenario, &m, ctx[i], len[i], h + (size_t)i * d, &e) <
                0) {
                fail(R, L[i].id, NULL, "scenario_hidden: %s", e.msg);
                goto out;
            }
        if (k > 1)
            compare_head(R, &m, h, n, za, zb, where);
        struct backend_req req[2 * N_SCENARIOS];
        const char *labels[2 * N_SCENARIOS];
        for (int j = 0; j < 2 * n; j++) {
            int i = j % n;
            struct settings s;
            settings_defaults(&s); /* the lesson's own, as source_step_settings gives them */
            lesson_apply_settings(&L[i], k <= L[i].n_steps ? k : L[i].n_steps, &s);
            if (j >= n) {
                s.sampler.temperature = 0.8;
                s.sampler.top_k = 40;
                s.sampler.top_p = 0.95;
                s.sampler.min_p = 0.05;
                s.sampler.repetition_penalty = 1.3;
                s.sampler.penalty_scope = SCOPE_ALL;
                s.sampler.seed = 4242u + (uint64_t)j;
            }
            req[j] = (struct backend_req){ .s = s.sampler,
                                           .context = ctx[i],
                                           .context_len = len[i],
                                           .prompt_len = L[i].prompt_len,
                                           .step = source_draw_step(&L[i], len[i]),
                                           .row = (uint32_t)i,
                                           .n_top = N_TOP };
            labels[j] = L[i].id;
        }
        int chosen[2 * N_SCENARIOS];
        int agreed =
            run_batch(R, where, zb, n, LLAMA3_V, req, 2 * n, 0, k == 1 ? 2 * n : 0, labels, chosen);
        if (agreed < 0)
            goto out;
        compare_step(R, where, h, n, req + n); /* the penalized chain, one request per row */
        R->scenario_steps += 2 * n;
        for (int i = 0; i < n; i++)
            ctx[i][len[i]++] = chosen[i]; /* the CPU's token */
    }
    printf("check_gpu: part 3, scenarios: %d scenarios x %d steps x 2 settings (%ld requests), "
           "the device's logits sampled by both, draws on every request of step 1; LM head on "
           "every step, max |diff| %.3g; backend_step against logits then sample on %ld "
           "requests; failures %ld: %.1f s\n",
           n, steps, R->scenario_steps, R->head_max_diff, R->step_requests, R->failures - failures0,
           now_s() - t0);
    failures0 = R->failures;
    t0 = now_s();
    head_widths(R, widths);
    printf("check_gpu: part 1b, LM head widths: d 4,100 and 4,104, batches 1, 2, 3, 5 and 8, "
           "V 1,027 (%ld calls); logits with equal bits %ld of %ld in all parts; failures %ld: "
           "%.1f s\n",
           R->head_width_calls, R->head_equal, R->head_values, R->failures - failures0,
           now_s() - t0);
    rc = 0;
out:
    for (int i = 0; i < n; i++) {
        free(ctx[i]);
        lesson_free(&L[i]);
    }
    free(h);
    free(za);
    free(zb);
    /* The backends borrow the host model (the CPU's head): close them
     * before freeing it. */
    close_backends(R);
    model_free(&m);
    for (int k = 0; k < 2; k++)
        if (widths[k].w)
            model_free(&widths[k]);
    return rc;
}

/* --- Faults for --self --fault --------------------------------------------- */

/* The CPU backend with the faults a broken device could have: one logit of
 * the head off by 0.5 and another by one unit in the last place (within the
 * tolerance: only the bit check sees it), the chosen token's final
 * probability off by 1e-4 of itself, and the first draw without the filters
 * given another token. */
static struct backend_ops SPEC, FAULTY;

static int faulty_get_logits(struct backend *b, int row, float *out, struct err *e)
{
    if (backend_cpu_ops.get_logits(b, row, out, e) < 0)
        return -1;
    if (b->V > 8) {
        out[7] += 0.5f;
        out[8] = nextafterf(out[8], INFINITY);
    }
    return 0;
}

static int faulty_sample(struct backend *b, const struct backend_req *req, int B,
                         struct backend_res *res, struct err *e)
{
    if (backend_spec_sample(b, req, B, res, e) < 0)
        return -1;
    res[0].final *= 1.0 + 1e-4;
    return 0;
}

static int faulty_draws(struct backend *b, const struct backend_req *req, int n, int *kept_ids,
                        int *plain_ids, struct err *e)
{
    if (backend_cpu_ops.draws(b, req, n, kept_ids, plain_ids, e) < 0)
        return -1;
    for (int i = 1; plain_ids && i < n; i++)
        if (plain_ids[i] != plain_ids[0]) {
            plain_ids[0] = plain_ids[i];
            break;
        }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: check_gpu [--self [--fault]] [--quick | --small]\n"
               "  Compares the CUDA backend with the CPU reference: the LM head, the lessons,\n"
               "  the real scenarios and random rows (tests/gpu/check_gpu.c says how).\n"
               "  --self   compare the CPU backend with the kernels' design run on the CPU\n"
               "           (backend_spec.c; no GPU needed)\n"
               "  --fault  with --self: four known faults in the second backend; passes\n"
               "           only when the checks catch every one\n"
               "  --quick  fewer random rows and a small LM head (for compute-sanitizer)\n"
               "  --small  the small launches alone: the lessons, the refusals, random rows\n"
               "           of V 5 and 1,000 (for racecheck and synccheck)\n");
}

int main(int argc, char **argv)
{
    struct run R;
    memset(&R, 0, sizeof R);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--self")) {
            R.self = 1;
        } else if (!strcmp(argv[i], "--fault")) {
            R.fault = 1;
        } else if (!strcmp(argv[i], "--quick")) {
            R.quick = 1;
        } else if (!strcmp(argv[i], "--small")) {
            R.quick = R.small = 1;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct err e;
    if (!R.self) {
        char why[BACKEND_WHY_MAX];
        if (!backend_cuda_probe(why, sizeof why)) {
            printf("check_gpu: skipped: %s\n", why);
            return 0;
        }
    }
    double t0 = now_s();
    if (backend_open(&R.ref, BACKEND_CPU, &e) < 0) {
        fprintf(stderr, "check_gpu: CPU backend: %s\n", e.msg);
        return 1;
    }
    if (backend_open(&R.dut, R.self ? BACKEND_CPU : BACKEND_CUDA, &e) < 0 ||
        backend_ready(&R.dut, &e) < 0) {
        printf("check_gpu: FAIL: the probe found a device but the CUDA backend did not open: %s\n",
               e.msg);
        backend_close(&R.ref);
        return 1;
    }
    if (R.self) { /* the kernels' design on the CPU: backend_spec.c's sample */
        SPEC = backend_cpu_ops;
        SPEC.name = "CPU spec";
        SPEC.sample = backend_spec_sample;
        R.dut.ops = &SPEC;
    }
    if (R.fault) {
        FAULTY = SPEC;
        FAULTY.get_logits = faulty_get_logits;
        FAULTY.sample = faulty_sample;
        FAULTY.draws = faulty_draws;
        R.dut.ops = &FAULTY;
    }
    R.dut_name = R.fault ? "CPU spec with faults" : R.self ? "CPU spec" : R.dut.ops->name;
    printf("check_gpu: %s against the CPU reference %s%s%s\n",
           R.self ? "the kernels' design run on the CPU (backend_spec.c)" : "CUDA", R.ref.device,
           R.self ? "" : " on ", R.self ? "" : R.dut.device);
    printf("check_gpu: tolerances: final probabilities %g, entropy %g, max z' %g relative, sum of "
           "exponentials %g relative; the step's token equal unless u lies within %g of a "
           "cumulative boundary (at most 1 in %.0f steps); many draws equal token for token%s\n",
           TOL_FINAL, TOL_ENTROPY, TOL_MAX_Z, TOL_SUM_EXP, TOL_BOUNDARY, 1.0 / BOUNDARY_LIMIT,
           R.quick ? "; --quick" : "");
    struct catalog cat;
    if (catalog_open(&cat, NULL, &e) < 0) {
        printf("check_gpu: FAIL: the lessons: %s\n", e.msg);
        return 1;
    }
    char *paths[N_SCENARIOS] = { 0 };
    int n_paths = 0;
    /* The parts without a head first: a head fixes V for set_logits. */
    lessons_part(&R, &cat, paths, &n_paths);
    refusals_part(&R);
    catalog_close(&cat);
    random_part(&R);
    if (R.small) {
        close_backends(&R);
    } else {
        repeat_part(&R);
        scenario_part(&R, paths, n_paths); /* closes the backends */
    }
    for (int i = 0; i < n_paths; i++)
        free(paths[i]);
    trace_free(&R.host);
    free(R.pool);
    /* The boundary rule: at most 1 in 100,000 of the steps' draws. */
    int too_many = (double)R.boundary > BOUNDARY_LIMIT * (double)R.compared;
    if (too_many)
        printf("check_gpu: FAIL: %ld boundary cases in %ld steps' draws: more than 1 in %.0f\n",
               R.boundary, R.compared, 1.0 / BOUNDARY_LIMIT);
    int pass = R.failures == 0 && !too_many;
    printf("check_gpu: %s: %ld requests by the candidate list (the longest %d of at most %d), %ld "
           "by the full path\n",
           R.dut_name, R.by_list, R.longest_list, CAND_MAX, R.by_full);
    printf("check_gpu: lm head max |diff| %.3g (tolerance %g sum|w x| + %g, max ratio %.3g); "
           "lessons %ld steps; scenarios %ld steps; random %ld rows in batches 1/8/64/256 "
           "(%ld/%ld/%ld/%ld of them); repeats %ld rows bit for bit; draws %ld; boundary cases "
           "%ld of %ld steps' draws; failures %ld: %s (%.0f s)\n",
           R.head_max_diff, HEAD_TOL_REL, HEAD_TOL_ABS, R.head_max_ratio, R.lesson_steps,
           R.scenario_steps, R.random_rows, R.random_batches[0], R.random_batches[1],
           R.random_batches[2], R.random_batches[3], R.repeat_rows, R.draws, R.boundary, R.compared,
           R.failures, pass ? "PASS" : "FAIL", now_s() - t0);
    if (R.fault) {
        /* Every fault must have been caught where it should be. */
        int ulp = R.head_unequal_in_tol > 0;
        int caught = R.head_max_ratio > 1.0 && ulp && R.chosen_final_fails > 0 && R.token_fails > 0;
        printf("check_gpu: --fault: the head's logit off by 0.5 %s (max ratio %.3g), another off "
               "by one ulp %s (%ld times), the chosen token's final probability off by 1e-4 %s "
               "(%ld times), a draw given another token %s (%ld times): %s\n",
               R.head_max_ratio > 1.0 ? "caught" : "MISSED", R.head_max_ratio,
               ulp ? "caught" : "MISSED", R.head_unequal_in_tol,
               R.chosen_final_fails > 0 ? "caught" : "MISSED", R.chosen_final_fails,
               R.token_fails > 0 ? "caught" : "MISSED", R.token_fails, caught ? "PASS" : "FAIL");
        return caught ? 0 : 1;
    }
    return pass ? 0 : 1;
}
