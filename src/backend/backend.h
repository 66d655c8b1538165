/* backend.h - where the LM head and the sampler run: the CPU reference or the
 * CUDA device, behind one table of operations (DESIGN.md sections 1 and 3).
 *
 * A backend holds a batch of up to BACKEND_MAX_BATCH logits rows of V
 * floats: computed by its LM head from hidden vectors (backend_logits), or
 * given by the host (backend_set_logits, for lessons and captured logits).
 * The sampler then runs every row with that row's own settings, context
 * and Philox counter in one call, and returns per row the chosen token and
 * the statistics of the step; the logits stay where they were computed.
 * Every backend follows sampler_run_fast (the CPU fast path), which is the
 * specification: same kept set, same token for the same u.
 *
 * CUDA headers never appear here: gpu/backend_cuda.cu implements
 * backend_cuda_ops and backend_cuda_probe in C linkage; a build without nvcc
 * (or the sanitizer build) links src/backend_nocuda.c instead.
 */
#ifndef LOGITLAB_BACKEND_H
#define LOGITLAB_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "model/model.h"
#include "core/sampler.h"

#define BACKEND_MAX_BATCH 256
#define BACKEND_MAX_TOP   64 /* best rows a request can ask for */
#define BACKEND_WHY_MAX   160

/* The largest vocabulary the CUDA backend takes: the longest logits row its
 * sampler and draws run, and the most rows its LM head makes. A longer row
 * or head is refused by name before anything runs (backend_check_vocab);
 * the CPU backend takes any. It is the tightest of the kernels' own bounds,
 * each static_assert'ed against it in gpu/backend_cuda.cu:
 *
 *   2^31 - 2^24    draw_keys_kernel, draw_weights_kernel: an int index
 *                  steps past the row's end by a grid-stride (at most
 *                  65,536 blocks of 256 threads) before the loop stops,
 *                  and must not wrap to a negative index
 *   2^31 - 1,024   sample_kernel, list_kernel and the split kernels: the
 *                  same for a block's loops over the row, and pass 2's
 *                  warp chunks (1,024 threads a step)
 *   about 2^32     gemv_kernel: its grid, ceil(V / 64) bands of rows times
 *                  up to 32 tiles of the batch, under gridDim.x's 2^31 - 1
 *   2^32 and up    uint32 bucket counts, rule_mass's 96-bit bucket sums,
 *                  rule_draw_shift's total of 2^62, CUB's int item count
 *
 * Nothing else in the kernels grows with V: shared memory holds the
 * buckets and the candidate list (CAND_MAX), never the row; token ids are
 * not packed into keys (the draws sort dkey(z') with the ids beside them);
 * rows of B x V are indexed in size_t, one block (or a few) per row, grids
 * one-dimensional. The hidden size is model_build's (multiples of 4, the
 * GEMV's 8- and 16-byte loads, up to MODEL_MAX_HIDDEN) and the batch
 * BACKEND_MAX_BATCH, as on every backend. Every vocabulary logitlab reads
 * (VOCAB_MAX_TOKENS, NPY_MAX_COLS: 2^22) is far below it. */
#define BACKEND_CUDA_MAX_VOCAB 2130706432 /* 2^31 - 2^24 */

enum backend_choice { BACKEND_AUTO, BACKEND_CPU, BACKEND_CUDA };

/* One request of a batch. Its logits are the backend's row `row`; its draw
 * uses the Philox counter (step, row, 0, 0) of DESIGN.md. */
struct backend_req {
    struct sampler_settings s; /* checked by sampler_check before the call */
    const int *context;        /* context_len ids in [0, V): the penalty history */
    int context_len;
    int prompt_len;         /* <= context_len */
    uint32_t step;          /* Philox step counter, 1 for the first generated token */
    uint32_t row;           /* logits row in [0, rows given), and the Philox row */
    int n_top;              /* best tokens to return, 0 to BACKEND_MAX_TOP */
    const uint8_t *breaker; /* V flags: DRY's sequence breakers (sampler_input's), or NULL */
    const int *end_ids;     /* the end tokens min-tokens masks (sampler_input's), n_end of them */
    int n_end;
    const uint8_t *refused; /* V flags: the grammar's mask (sampler_input's), or NULL */
    /* Optional, for tests: when not NULL, V values each -- the final
     * (renormalized kept) probability of every token, and 1 for a kept
     * token, 0 for a removed one. */
    double *final_out;
    uint8_t *kept_out;
};

/* One of the best tokens of a row, in rank order (descending z', ties to
 * the lower id), as in a trace row. */
struct backend_top {
    int id;
    int removed_by; /* TRACE_KEPT, a stage, or TRACE_MASKED */
    double z;       /* z' */
    double prob;    /* softmax of z' over the vocabulary */
    double final;   /* renormalized over the kept tokens; 0 if removed */
};

/* What a row's step gives back. */
struct backend_res {
    int id;      /* the chosen token */
    int sampled; /* 0: greedy (T = 0), 1: drawn with u */
    double u;
    double final;   /* the chosen token's final probability (1 for greedy) */
    double max_z;   /* largest finite z' */
    double sum_exp; /* sum of e^(z' - max_z): what softmax divides by */
    int kept_count;
    double kept_mass; /* of prob over the kept tokens */
    double entropy, entropy_final;
    int n_top;
    struct backend_top top[BACKEND_MAX_TOP];
};

struct backend;

/* The operations table. Every function returns 0, or -1 with a message in e
 * (out of memory names the size; a device error names the call). They are
 * called only through the backend_* functions below, which check first
 * what every backend may assume: settings in range, rows held, ids in the
 * vocabulary, sizes within their limits. */
struct backend_ops {
    const char *name; /* "CPU", "CUDA" */
    /* The stages it can run, a bit (1u << stage) each; 0: every one. A
     * request whose chain turns on another is refused, naming it. */
    unsigned stages;
    /* 1: its head can be a model file's (model_borrow: any stored type, a
     * gain); 0: only the synthetic bf16 head (backend_head moves auto to
     * the CPU for the other). */
    int file_heads;
    /* The longest row its kernels take, and so the most rows of its LM
     * head (BACKEND_CUDA_MAX_VOCAB); 0: any. */
    int max_vocab;
    int (*open)(struct backend *b, struct err *e);
    void (*close)(struct backend *b);
    /* Makes the LM head of m ready: the CPU uses m's weights (borrowed: m
     * must outlive the backend's use of them); CUDA generates the same bf16
     * weights on the device from m->seed, m->V, m->d and m->scale (a model
     * file's head is not given to a backend without file_heads). */
    int (*head)(struct backend *b, const struct model *m, struct err *e);
    /* RMSNorm then W . x for B hidden vectors h (B x d floats, row-major)
     * into logits rows 0..B-1. */
    int (*logits)(struct backend *b, const float *h, int B, struct err *e);
    /* Logits rows 0..B-1 given by the host (B x V floats). */
    int (*set_logits)(struct backend *b, const float *logits, int B, int V, struct err *e);
    /* Copies logits row `row` (V floats) to out. */
    int (*get_logits)(struct backend *b, int row, float *out, struct err *e);
    /* Samples B requests; res[i] is req[i]'s. */
    int (*sample)(struct backend *b, const struct backend_req *req, int B, struct backend_res *res,
                  struct err *e);
    /* n draws on req's distribution, u_i = sampler_u(seed, step, row, i):
     * kept_ids[i] by the draw rule over the kept tokens, plain_ids[i] by
     * the softmax of z' over every token (no filter). Draw 0 is the step's
     * own. Either array may be NULL. */
    int (*draws)(struct backend *b, const struct backend_req *req, int n, int *kept_ids,
                 int *plain_ids, struct err *e);
    /* Optional: logits then sample as one submission (the requests read
     * rows 0..B-1 of the new logits), head_ms and kernel_ms set as the two
     * calls would set them. NULL: backend_step makes the two calls. */
    int (*step)(struct backend *b, const float *h, int B, const struct backend_req *req,
                struct backend_res *res, struct err *e);
};

struct backend {
    const struct backend_ops *ops;
    enum backend_choice choice;
    void *impl;                /* the backend's own state */
    int V, d;                  /* vocabulary and hidden size of the head (d 0: no head) */
    int rows;                  /* logits rows held */
    char why[BACKEND_WHY_MAX]; /* why auto chose the CPU ("no CUDA device: ..."), or "" */
    char device[64];           /* "CPU (2 threads)", "NVIDIA H200" */
    double kernel_ms;          /* device time of the last logits or sample call */
    double norm_ms;            /* of a logits call's kernel_ms, the RMSNorm's (CUDA; else 0) */
    double head_ms;            /* a step's LM head (its kernel_ms is the sampler's) */
    /* Requests the sampler served by the candidate list (the GPU design's
     * two passes) and by the full path, and the longest list, since open:
     * for the checks (the CPU backend counts none). */
    long by_list, by_full;
    int longest_list;
    double wall_ms;    /* wall time of that call, on the host */
    unsigned long gen; /* counts the times the logits rows were replaced */
    int pending;       /* a device chosen but not opened yet (it opens at first use) */
};

extern const struct backend_ops backend_cpu_ops;
extern const struct backend_ops backend_cuda_ops; /* usable only when the probe says so */

/* Whether the CUDA backend can run here. Returns 1, or 0 with the reason in
 * why ("no CUDA device: driver not found", "CUDA backend not built: ...").
 * Never initialises more than the runtime's device query. */
int backend_cuda_probe(char *why, size_t n);

/* Whether ops takes rows (or an LM head) of V tokens: 0, or -1 with one line
 * that names the backend and its limit. backend_head and backend_set_logits
 * ask it before anything runs. */
int backend_check_vocab(const struct backend_ops *ops, int V, struct err *e);

/* Parses "auto", "cpu" or "cuda". Returns 0 or -1. */
int backend_parse(const char *s, enum backend_choice *out, struct err *e);

/* Chooses and opens a backend: auto takes CUDA when the probe says it can
 * run, else the CPU with the reason in b->why; cuda fails with the reason.
 * A device opens at the first call that needs it (no CUDA context for a
 * command that never uses it); if it fails there, auto moves to the CPU
 * and says why in b->why. Returns 0 or -1. */
int backend_open(struct backend *b, enum backend_choice c, struct err *e);
void backend_close(struct backend *b);

/* Opens now a device that backend_open left for its first use (every call
 * below does this itself): with auto, a device that does not open is a
 * reason to use the CPU, and b->why says so; with cuda it is an error, and
 * the next call tries again. Returns 0 or -1. */
int backend_ready(struct backend *b, struct err *e);

/* Whether b runs every stage that s turns on (its ops' .stages; 0: all):
 * 0, or -1 naming the first one it lacks ("the CUDA backend has no
 * grammar stage yet (--backend cpu runs it)"). Every request is checked so. */
int backend_runs(const struct backend *b, const struct sampler_settings *s, struct err *e);

/* The calls, through the table (each times itself into wall_ms). */
int backend_head(struct backend *b, const struct model *m, struct err *e);
/* Forgets the head (its model is about to go): logits needs a head again. */
void backend_drop_head(struct backend *b);
int backend_logits(struct backend *b, const float *h, int B, struct err *e);
int backend_set_logits(struct backend *b, const float *logits, int B, int V, struct err *e);
int backend_get_logits(struct backend *b, int row, float *out, struct err *e);
int backend_sample(struct backend *b, const struct backend_req *req, int B, struct backend_res *res,
                   struct err *e);
int backend_draws(struct backend *b, const struct backend_req *req, int n, int *kept_ids,
                  int *plain_ids, struct err *e);
/* The LM head for B hidden vectors, then the sampler for B requests on the
 * rows it made, as backend_logits then backend_sample would do them
 * (every check before anything runs); head_ms is the head's device time,
 * kernel_ms the sampler's. On CUDA one submission and one wait. */
int backend_step(struct backend *b, const float *h, int B, const struct backend_req *req,
                 struct backend_res *res, struct err *e);

#endif
