/* model.c - building the synthetic head and multiplying by it, split over
 * the CPU's cores (rows are independent, so each thread takes a band). */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#endif
#include "model/model.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/head_vec.h"
#include "model/lmhead_gen.h"
#include "model/pool.h"
#include "model/quant.h"

#define MAX_THREADS 16
/* Vectors a borrowed head's row meets at once (a stack buffer of results). */
#define HEAD_TASK_VECS 16
/* Rows of weights multiplied by every vector of a batch before the next
 * rows: 32 rows at hidden size 4,096 are 256 KB, which stay in a core's L2
 * while the batch's vectors go over them, so the head is read from memory
 * once a step instead of once a vector. */
#define BATCH_CHUNK_ROWS 32

float lm_weight_scale(int d)
{
    /* A logit is a sum of d products of weights (spread scale * LM_V_SPREAD)
     * with a vector of root mean square 1: its spread is that times sqrt(d). */
    return (float)(LM_LOGIT_SPREAD / sqrt((double)d) / LM_V_SPREAD);
}

struct band {
    struct model *m;
    int lo, hi;
    const float *x;
    float *out;
    int n_vec; /* vectors in x (each m->d), outputs in out (each m->V) */
};

static void *build_band(void *arg)
{
    struct band *b = arg;
    struct model *m = b->m;
    for (int r = b->lo; r < b->hi; r++)
        head_row(m->seed, (uint32_t)r, m->d, m->scale, m->w + (size_t)r * (size_t)m->d);
    return NULL;
}

/* A borrowed head's product, in tasks of HEAD_TASK_ROWS rows run by its
 * pool: each row against every vector, the row's blocks dequantized once
 * for all of them (quant_dot_n gives each vector what quant_dot would), so
 * the result does not depend on which thread ran which rows. */
#define HEAD_TASK_ROWS 256

struct head_job {
    const struct model *m;
    const float *x;
    float *out;
    int n_vec;
};

static void head_task(void *arg, int task, int worker)
{
    (void)worker;
    const struct head_job *j = arg;
    const struct model *m = j->m;
    size_t row_bytes = quant_row_bytes(m->qtype, m->d);
    float tmp[HEAD_TASK_VECS];
    int lo = task * HEAD_TASK_ROWS, hi = lo + HEAD_TASK_ROWS < m->V ? lo + HEAD_TASK_ROWS : m->V;
    if (j->n_vec == 1) { /* quant_dot of each row, the next row fetched during the current */
        quant_dot_rows(m->qtype, (const unsigned char *)m->qw + (size_t)lo * row_bytes, m->d,
                       hi - lo, j->x, j->out + lo);
        return;
    }
    for (int r = lo; r < hi; r++) {
        const void *row = (const unsigned char *)m->qw + (size_t)r * row_bytes;
        for (int v0 = 0; v0 < j->n_vec; v0 += HEAD_TASK_VECS) {
            int nv = j->n_vec - v0 < HEAD_TASK_VECS ? j->n_vec - v0 : HEAD_TASK_VECS;
            quant_dot_n(m->qtype, row, m->d, j->x + (size_t)v0 * (size_t)m->d, m->d, nv, tmp);
            for (int v = 0; v < nv; v++)
                j->out[(size_t)(v0 + v) * (size_t)m->V + (size_t)r] = tmp[v];
        }
    }
}

static void head_product(struct model *m, const float *x, float *out, int n_vec)
{
    struct head_job j = { m, x, out, n_vec };
    pool_run(m->pool, head_task, &j, (m->V + HEAD_TASK_ROWS - 1) / HEAD_TASK_ROWS);
}

static void *gemv_band(void *arg)
{
    struct band *b = arg;
    size_t d = (size_t)b->m->d, V = (size_t)b->m->V;
    if (b->n_vec == 1) {
        head_gemv_bf16(b->m->w + (size_t)b->lo * d, b->hi - b->lo, b->m->d, b->x, b->out + b->lo);
        return NULL;
    }
    /* The same product per row and vector as above, in cache-sized chunks. */
    for (int lo = b->lo; lo < b->hi; lo += BATCH_CHUNK_ROWS) {
        int n = b->hi - lo < BATCH_CHUNK_ROWS ? b->hi - lo : BATCH_CHUNK_ROWS;
        for (int v = 0; v < b->n_vec; v++)
            head_gemv_bf16(b->m->w + (size_t)lo * d, n, b->m->d, b->x + (size_t)v * d,
                           b->out + (size_t)v * V + (size_t)lo);
    }
    return NULL;
}

/* Runs fn over the rows in bands, one per thread (the caller's thread too). */
static void run_bands(struct model *m, void *(*fn)(void *), const float *x, float *out, int n_vec)
{
    int n = m->threads;
    struct band bands[MAX_THREADS];
    pthread_t tid[MAX_THREADS];
    int started[MAX_THREADS] = { 0 };
    for (int t = 0; t < n; t++) {
        bands[t] = (struct band){
            m, (int)((long long)m->V * t / n), (int)((long long)m->V * (t + 1) / n), x, out, n_vec
        };
        if (t > 0)
            started[t] = pthread_create(&tid[t], NULL, fn, &bands[t]) == 0;
        if (t > 0 && !started[t])
            fn(&bands[t]); /* no thread to be had: do it here */
    }
    fn(&bands[0]);
    for (int t = 1; t < n; t++)
        if (started[t])
            pthread_join(tid[t], NULL);
}

/* Threads for a product of V x d: every core, unless it is too small. */
static int head_threads(int V, int d)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
    return (size_t)V * (size_t)d < (1u << 20) ? 1 : n;
}

int model_build(struct model *m, int V, int d, uint64_t seed, struct err *e)
{
    memset(m, 0, sizeof *m);
    if (V <= 0)
        return err_set(e, ERR_USAGE, "a model needs a vocabulary");
    if (d < 4 || d > MODEL_MAX_HIDDEN || d % 4 != 0)
        return err_set(e, ERR_USAGE, "hidden size %d: must be a multiple of 4 from 4 to %d", d,
                       MODEL_MAX_HIDDEN);
    size_t bytes = (size_t)V * (size_t)d * sizeof *m->w;
    /* A gigabyte touched page by page costs more in page faults than the
     * weights cost to compute: ask for huge pages. */
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return err_set(e, ERR_SYSTEM, "out of memory for the LM head: %d x %d bf16 = %.2f GB", V, d,
                       (double)bytes / 1e9);
    madvise(p, bytes, MADV_HUGEPAGE);
    m->w = p;
    m->bytes = bytes;
    m->V = V;
    m->d = d;
    m->seed = seed;
    m->scale = lm_weight_scale(d);
    m->threads = head_threads(V, d);
    run_bands(m, build_band, NULL, NULL, 0);
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
    double ss = 0.0;
    for (int i = 0; i < m->d; i++)
        ss += (double)h[i] * h[i];
    float rms = (float)sqrt(ss / m->d + (double)m->eps);
    for (int i = 0; i < m->d; i++)
        out[i] = h[i] / rms * (m->gain ? m->gain[i] : 1.0f);
    return rms;
}

float model_rmsnorm(const float *h, int d, float *out)
{
    double ss = 0.0;
    for (int i = 0; i < d; i++)
        ss += (double)h[i] * h[i];
    float rms = (float)sqrt(ss / d + MODEL_RMS_EPS);
    for (int i = 0; i < d; i++)
        out[i] = h[i] / rms;
    return rms;
}

void model_logits(struct model *m, const float *x, float *logits)
{
    if (m->qw)
        head_product(m, x, logits, 1);
    else
        run_bands(m, gemv_band, x, logits, 1);
}

void model_logits_batch(struct model *m, const float *x, int n, float *logits)
{
    if (m->qw)
        head_product(m, x, logits, n);
    else
        run_bands(m, gemv_band, x, logits, n);
}
