/* llama_int.h - what the forward pass's two files share (model/llama.c: a
 * pass, a context; model/llama_jobs.c: the pass's pieces and the pool's
 * jobs): the context's layout and a job's arguments. Not for other files. */
#ifndef LOGITLAB_LLAMA_INT_H
#define LOGITLAB_LLAMA_INT_H

#include <stdint.h>

#include "model/llama.h"
#include "model/pool.h"

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
    float *rope_swa;  /* the same for the sliding layers (NULL: none slides) */
    double *freq_swa;
    float *scores; /* threads x n_ctx */
    float *tmp;    /* threads x TMP_FLOATS */
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

/* freq[i] of the pairs of a context of n_ctx positions (llama_jobs.c). */
void llama_rope_freq_init(const struct llama_model *m, int n_ctx, double *freq, double *freq_swa);
/* cos and sin of every pair's angle for the nb positions from pos0. */
void llama_rope_table(struct llama_ctx *c, int pos0, int nb);
/* out = g * x / sqrt(mean(x^2) + eps). */
void llama_rms_norm(const float *x, const float *g, int n, float eps, float *out);
/* xb = RMSNorm(x) * g for the positions j0 .. j0 + nx. */
void llama_norm_rows(const struct llama_ctx *c, const struct qtensor *g, int j0, int nx);
/* Rows per task of a matrix of rows rows, and the tasks that makes. */
int llama_task_rows(int64_t rows, int threads);
int llama_tasks_of(int64_t rows, int chunk);

/* With LLAMA_SW_POST_NORMS: x += RMSNorm(xb) * g for the positions j0 ..
 * j0 + nx, after the output's or the down's job wrote its product to xb. */
void llama_post_norm_add(struct llama_ctx *c, const struct qtensor *g, int j0, int nx);

/* The pool's jobs of a layer (arg: a struct job; t: the task). */
void llama_job_qkv(void *arg, int t, int worker);
void llama_job_attention(void *arg, int t, int worker);
void llama_job_output(void *arg, int t, int worker);
void llama_job_gate_up(void *arg, int t, int worker);
void llama_job_down(void *arg, int t, int worker);

#endif
