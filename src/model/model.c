/* model.c - building the synthetic head and multiplying by it, on every
 * core: rows are independent, so each task of the thread pool (pool.h)
 * takes a run of them, and which thread ran which rows changes no bit. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#endif
#include "model/model.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/cpus.h"
#include "model/head_vec.h"
#include "model/norm_tree.h"
#include "model/lmhead_gen.h"
#include "model/pool.h"
#include "model/quant.h"

#define MAX_THREADS 16
/* Rows of a product's task. */
#define HEAD_TASK_ROWS 256
/* Bytes of weights a task of the build fills: two huge pages, so that
 * about 250 tasks at hidden size 4,096 let the cores share the work evenly
 * even when another program takes one of them for a while. */
#define BUILD_TASK_BYTES ((size_t)4 << 20)

float lm_weight_scale(int d)
{
    /* A logit is a sum of d products of weights (spread scale * LM_V_SPREAD)
     * with a vector of root mean square 1: its spread is that times sqrt(d). */
    return (float)(LM_LOGIT_SPREAD / sqrt((double)d) / LM_V_SPREAD);
}

/* ---- the build -------------------------------------------------------------- */

struct build_job {
    struct model *m;
    int rows;        /* of a task */
    atomic_int done; /* rows filled so far, by every thread */
    const struct model_progress *p;
    char what[64];
};

/* A task's rows are faulted in by the thread that fills them, as it writes
 * them: the faults of the gigabyte are spread over the cores, two huge pages
 * a task. Faulting them in beforehand measured slower: MAP_POPULATE does it
 * in one thread inside mmap, before any row, and on small pages (the huge
 * page advice comes after the mapping); MADV_POPULATE_WRITE in each task
 * zeroes the same pages, which have left the cache when the rows come. */
static void build_task(void *arg, int task, int worker)
{
    struct build_job *j = arg;
    struct model *m = j->m;
    int lo = task * j->rows, hi = lo + j->rows < m->V ? lo + j->rows : m->V;
    uint16_t row[MODEL_MAX_HIDDEN];
    for (int r = lo; r < hi; r++) {
        head_row(m->seed, (uint32_t)r, m->d, m->scale, row);
        head_put_row(m->w, m->V, m->d, r, row);
    }
    /* The caller's own additions come back in increasing order, so what it
     * reports only grows; the last report (all rows) is model_build's. */
    int done = atomic_fetch_add_explicit(&j->done, hi - lo, memory_order_relaxed) + (hi - lo);
    if (worker == 0 && j->p && done < m->V)
        j->p->fn(j->p->arg, j->what, done, m->V);
}

void model_row(const struct model *m, int r, uint16_t *out)
{
    head_get_row(m->w, m->V, m->d, r, out);
}

/* ---- the products ------------------------------------------------------------- */

/* A product of the head with n_vec vectors (x: n_vec x d, out: n_vec x V),
 * in tasks of HEAD_TASK_ROWS rows: each row against every vector. xs: the
 * vectors split for the bf16 kernel (head_split_x), or NULL. */
struct head_job {
    const struct model *m;
    const float *x, *xs;
    float *out;
    int n_vec;
};

/* A synthetic head's rows [lo, hi): every vector against each row while it
 * is in the cache, the same bits per row and vector whatever the batch. */
static void bf16_rows(const struct head_job *j, int lo, int hi)
{
    const struct model *m = j->m;
    size_t d = (size_t)m->d;
    head_gemv_bf16(m->w + (size_t)lo * d, hi - lo, m->d, j->x, j->xs, j->n_vec, j->out + lo,
                   (size_t)m->V);
}

/* A borrowed head's rows [lo, hi): against one vector, the rows streamed;
 * against several, the matrix product of prefill (each row's blocks
 * decoded once for all the vectors), which gives each vector what
 * quant_dot would. */
static void quant_rows(const struct head_job *j, int lo, int hi)
{
    const struct model *m = j->m;
    const unsigned char *rows =
        (const unsigned char *)m->qw + (size_t)lo * quant_row_bytes(m->qtype, m->d);
    int path = quant_best_path(); /* once, not a row */
    if (j->n_vec == 1) /* quant_dot of each row, the next row fetched during the current */
        quant_dot_rows_on(path, m->qtype, rows, m->d, hi - lo, j->x, j->out + lo);
    else
        quant_dot_rows_n_on(path, m->qtype, rows, m->d, hi - lo, j->x, m->d, j->n_vec, j->out + lo,
                            m->V);
}

static void head_task(void *arg, int task, int worker)
{
    (void)worker;
    const struct head_job *j = arg;
    int lo = task * HEAD_TASK_ROWS,
        hi = lo + HEAD_TASK_ROWS < j->m->V ? lo + HEAD_TASK_ROWS : j->m->V;
    if (j->m->qw)
        quant_rows(j, lo, hi);
    else
        bf16_rows(j, lo, hi);
}

void model_soft_cap(float *z, size_t n, float cap)
{
    float inv = 1.0f / cap;
    for (size_t i = 0; i < n; i++)
        z[i] = cap * tanhf(z[i] * inv);
}

static void head_product(struct model *m, const float *x, float *out, int n_vec)
{
    struct head_job j = { m, x, NULL, out, n_vec };
    /* The split copy of the vectors the vector kernel reads; without the
     * memory the plain loop gives the same bits. */
    float *xs = m->qw ? NULL : malloc((size_t)n_vec * (size_t)m->d * sizeof *xs);
    for (int v = 0; xs && v < n_vec; v++)
        head_split_x(x + (size_t)v * (size_t)m->d, m->d, xs + (size_t)v * (size_t)m->d);
    j.xs = xs;
    pool_run(m->pool, head_task, &j, (m->V + HEAD_TASK_ROWS - 1) / HEAD_TASK_ROWS);
    free(xs);
    if (m->softcap > 0.0f)
        model_soft_cap(out, (size_t)n_vec * (size_t)m->V, m->softcap);
}

/* Threads for a product of V x d: every core, unless it is too small. */
static int head_threads(int V, int d)
{
    int cpus = cpu_count();
    int n = cpus > MAX_THREADS ? MAX_THREADS : cpus;
    return (size_t)V * (size_t)d < (1u << 20) ? 1 : n;
}

int model_build(struct model *m, int V, int d, uint64_t seed, struct err *e)
{
    return model_build_progress(m, V, d, seed, NULL, e);
}

/* Fills the allocated head m on its pool, telling p how far it got. */
static void build_rows(struct model *m, const struct model_progress *p)
{
    size_t row_bytes = (size_t)m->d * sizeof *m->w;
    struct build_job j = { .m = m, .p = p };
    j.rows = BUILD_TASK_BYTES / row_bytes > 0 ? (int)(BUILD_TASK_BYTES / row_bytes) : 1;
    atomic_init(&j.done, 0);
    snprintf(j.what, sizeof j.what, "building the LM head (%.2f GB)", (double)m->bytes / 1e9);
    if (p)
        p->fn(p->arg, j.what, 0, m->V);
    pool_run(m->pool, build_task, &j, (m->V + j.rows - 1) / j.rows);
    if (p)
        p->fn(p->arg, j.what, m->V, m->V);
}

int model_build_progress(struct model *m, int V, int d, uint64_t seed,
                         const struct model_progress *p, struct err *e)
{
    memset(m, 0, sizeof *m);
    if (V <= 0)
        return err_set(e, ERR_USAGE, "a model needs a vocabulary");
    if (d < 4 || d > MODEL_MAX_HIDDEN || d % 4 != 0)
        return err_set(e, ERR_USAGE, "hidden size %d: must be a multiple of 4 from 4 to %d", d,
                       MODEL_MAX_HIDDEN);
    size_t bytes = (size_t)V * (size_t)d * sizeof *m->w;
    /* A gigabyte touched page by page costs more in page faults than the
     * weights cost to compute, and every step reads it all: huge pages (with
     * 4 KB ones a step's product took 1.5 times as long). */
    void *w = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (w == MAP_FAILED)
        return err_set(e, ERR_SYSTEM, "out of memory for the LM head: %d x %d bf16 = %.2f GB", V, d,
                       (double)bytes / 1e9);
    madvise(w, bytes, MADV_HUGEPAGE);
    m->threads = head_threads(V, d);
    if (!(m->pool = pool_new(m->threads, e))) {
        munmap(w, bytes);
        memset(m, 0, sizeof *m);
        return -1;
    }
    m->w = w;
    m->bytes = bytes;
    m->V = V;
    m->d = d;
    m->seed = seed;
    m->scale = lm_weight_scale(d);
    build_rows(m, p);
    return 0;
}

void model_free(struct model *m)
{
    if (m->w)
        munmap(m->w, m->bytes);
    pool_free(m->pool);
    memset(m, 0, sizeof *m);
}

int model_borrow(struct model *m, int V, int d, const void *w, int qtype, const float *gain,
                 float eps, struct err *e)
{
    memset(m, 0, sizeof *m);
    char name[32];
    if (V <= 0 || d <= 0 || d > MODEL_MAX_HIDDEN)
        return err_set(e, ERR_USAGE, "an LM head of %d x %d: sizes out of range", V, d);
    if (!quant_info(qtype) || quant_row_bytes(qtype, d) == 0)
        return err_set(e, ERR_USAGE, "an LM head of type %s and width %d cannot be read",
                       quant_name(qtype, name, sizeof name), d);
    m->V = V;
    m->d = d;
    m->qw = w;
    m->qtype = qtype;
    m->gain = gain;
    m->eps = eps;
    m->bytes = quant_row_bytes(qtype, d) * (size_t)V;
    m->threads = head_threads(V, d);
    if (!(m->pool = pool_new(m->threads, e))) {
        memset(m, 0, sizeof *m);
        return -1;
    }
    return 0;
}

float model_norm(const struct model *m, const float *h, float *out)
{
    if (!m->qw)
        return model_rmsnorm(h, m->d, out);
    float rms = norm_rms(norm_sum_squares(h, m->d), m->d, m->eps);
    for (int i = 0; i < m->d; i++)
        out[i] = h[i] / rms * (m->gain ? m->gain[i] : 1.0f);
    return rms;
}

float model_rmsnorm(const float *h, int d, float *out)
{
    float rms = norm_rms(norm_sum_squares(h, d), d, MODEL_RMS_EPS);
    for (int i = 0; i < d; i++)
        out[i] = h[i] / rms;
    return rms;
}

void model_logits(struct model *m, const float *x, float *logits)
{
    head_product(m, x, logits, 1);
}

void model_logits_batch(struct model *m, const float *x, int n, float *logits)
{
    head_product(m, x, logits, n);
}
