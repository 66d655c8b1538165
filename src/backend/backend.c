/* backend.c - choosing a backend and calling it through its table: the
 * checks every backend shares (settings, ids, sizes) and the wall clock.
 */
#include "backend/backend.h"

#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "core/draws.h" /* DRAWS_MAX */

int backend_parse(const char *s, enum backend_choice *out, struct err *e)
{
    if (!strcmp(s, "auto"))
        *out = BACKEND_AUTO;
    else if (!strcmp(s, "cpu"))
        *out = BACKEND_CPU;
    else if (!strcmp(s, "cuda"))
        *out = BACKEND_CUDA;
    else
        return err_set(e, ERR_USAGE, "'%s' is not a backend (auto, cpu or cuda)", s);
    return 0;
}

int backend_check_vocab(const struct backend_ops *ops, int V, struct err *e)
{
    if (ops->max_vocab > 0 && V > ops->max_vocab)
        return err_set(e, ERR_USAGE,
                       "the %s backend takes rows of at most %d tokens; this one has %d "
                       "(--backend cpu takes any)",
                       ops->name, ops->max_vocab, V);
    return 0;
}

int backend_open(struct backend *b, enum backend_choice c, struct err *e)
{
    memset(b, 0, sizeof *b);
    b->choice = c;
    char why[BACKEND_WHY_MAX] = "";
    if (c != BACKEND_CPU) {
        if (backend_cuda_probe(why, sizeof why)) {
            /* The device opens at its first use, so that a command that never
             * needs it (a toy lesson) never pays for a CUDA context. */
            b->ops = &backend_cuda_ops;
            b->pending = 1;
            return 0;
        }
        if (c == BACKEND_CUDA)
            return err_set(e, ERR_USAGE, "--backend cuda: %s", why);
    }
    b->ops = &backend_cpu_ops;
    if (b->ops->open(b, e) < 0) {
        b->ops->close(b);
        return -1;
    }
    snprintf(b->why, sizeof b->why, "%s", c == BACKEND_AUTO ? why : "");
    return 0;
}

int backend_ready(struct backend *b, struct err *e)
{
    if (!b->pending)
        return 0;
    if (b->ops->open(b, e) == 0) {
        b->pending = 0;
        return 0;
    }
    b->ops->close(b);
    b->impl = NULL;
    if (b->choice == BACKEND_CUDA)
        return err_prefix(e, "--backend cuda"), -1;
    snprintf(b->why, sizeof b->why, "CUDA device did not open: %.120s", e->msg);
    b->pending = 0;
    b->ops = &backend_cpu_ops;
    return b->ops->open(b, e);
}

void backend_close(struct backend *b)
{
    if (b->ops && !b->pending)
        b->ops->close(b);
    memset(b, 0, sizeof *b);
}

/* Times a call into b->wall_ms. */
#define TIMED(b, call)                                                                             \
    do {                                                                                           \
        double t0_ = clock_ms();                                                                   \
        int rc_ = (call);                                                                          \
        (b)->wall_ms = clock_ms() - t0_;                                                           \
        return rc_;                                                                                \
    } while (0)

/* A model file's head on a backend that takes only the synthetic one:
 * --backend cuda is refused, auto moves to the CPU and says why. */
static int head_elsewhere(struct backend *b, struct err *e)
{
    if (b->choice == BACKEND_CUDA)
        return err_set(e, ERR_USAGE,
                       "--backend cuda: a model file's LM head runs on the CPU in this version");
    if (!b->pending)
        b->ops->close(b);
    b->impl = NULL;
    b->pending = 0;
    b->ops = &backend_cpu_ops;
    snprintf(b->why, sizeof b->why, "%s",
             "a model file's LM head runs on the CPU (the CUDA head is the synthetic one)");
    return b->ops->open(b, e);
}

int backend_head(struct backend *b, const struct model *m, struct err *e)
{
    if (m->V <= 0 || m->d <= 0 || (!m->w && !m->qw))
        return err_set(e, ERR_USAGE, "the backend needs a built LM head");
    if (m->qw && !b->ops->file_heads && head_elsewhere(b, e) < 0)
        return -1;
    if (backend_ready(b, e) < 0)
        return -1;
    if (backend_check_vocab(b->ops, m->V, e) < 0)
        return err_prefix(e, "an LM head of %d x %d", m->V, m->d), -1;
    b->gen++; /* whatever rows were held belong to the head before */
    TIMED(b, b->ops->head(b, m, e));
}

void backend_drop_head(struct backend *b)
{
    b->d = 0;
    b->rows = 0;
    b->gen++;
}

/* What the head may assume of a call for B hidden vectors (backend_logits,
 * backend_step). */
static int check_head_call(const struct backend *b, int B, struct err *e)
{
    if (B < 1 || B > BACKEND_MAX_BATCH)
        return err_set(e, ERR_USAGE, "batch of %d rows: from 1 to %d", B, BACKEND_MAX_BATCH);
    if (b->d <= 0)
        return err_set(e, ERR_USAGE, "the backend has no LM head");
    return 0;
}

int backend_logits(struct backend *b, const float *h, int B, struct err *e)
{
    if (check_head_call(b, B, e) < 0)
        return -1;
    b->gen++;
    TIMED(b, b->ops->logits(b, h, B, e));
}

int backend_set_logits(struct backend *b, const float *logits, int B, int V, struct err *e)
{
    if (B < 1 || B > BACKEND_MAX_BATCH)
        return err_set(e, ERR_USAGE, "batch of %d rows: from 1 to %d", B, BACKEND_MAX_BATCH);
    if (V <= 0)
        return err_set(e, ERR_USAGE, "rows of %d logits", V);
    if (backend_ready(b, e) < 0 || backend_check_vocab(b->ops, V, e) < 0)
        return -1;
    if (b->d > 0 && V != b->V)
        b->d = 0; /* rows of another vocabulary: the head no longer applies */
    b->gen++;
    TIMED(b, b->ops->set_logits(b, logits, B, V, e));
}

int backend_get_logits(struct backend *b, int row, float *out, struct err *e)
{
    if (row < 0 || row >= b->rows)
        return err_set(e, ERR_USAGE, "logits row %d: the backend holds %d", row, b->rows);
    return b->ops->get_logits(b, row, out, e);
}

int backend_runs(const struct backend *b, const struct sampler_settings *s, struct err *e)
{
    for (int c = 0; b->ops->stages && c < s->chain.n; c++) {
        enum stage st = s->chain.stage[c];
        if (!(b->ops->stages & (1u << st)) && stage_active(s, st, b->V))
            return err_set(e, ERR_USAGE,
                           "the %s backend has no %s stage yet (--backend cpu runs it)",
                           b->ops->name, stage_name(st));
    }
    if (b->ops->stages && s->dynatemp_range > 0.0 && chain_has(&s->chain, STAGE_TEMPERATURE))
        return err_set(e, ERR_USAGE,
                       "the %s backend has no dynamic temperature yet (--backend cpu runs it)",
                       b->ops->name);
    return 0;
}

/* What every backend may assume of a request, on a backend that holds
 * (or is about to hold) `rows` logits rows. */
static int check_req(const struct backend *b, const struct backend_req *r, int i, int rows,
                     struct err *e)
{
    if (sampler_check(&r->s, e) < 0) {
        err_prefix(e, "request %d", i);
        return -1;
    }
    if (backend_runs(b, &r->s, e) < 0) {
        err_prefix(e, "request %d", i);
        return -1;
    }
    if ((int)r->row < 0 || (int)r->row >= rows)
        return err_set(e, ERR_USAGE, "request %d: logits row %u, the backend holds %d", i, r->row,
                       rows);
    if (r->n_top < 0 || r->n_top > BACKEND_MAX_TOP)
        return err_set(e, ERR_USAGE, "request %d: %d top rows: from 0 to %d", i, r->n_top,
                       BACKEND_MAX_TOP);
    struct sampler_input in = { .vocab_size = b->V,
                                .context = r->context,
                                .context_len = r->context_len,
                                .prompt_len = r->prompt_len,
                                .end_ids = r->end_ids,
                                .n_end = r->n_end };
    if (sampler_check_context(&in, e) < 0) {
        err_prefix(e, "request %d", i);
        return -1;
    }
    return 0;
}

int backend_sample(struct backend *b, const struct backend_req *req, int B, struct backend_res *res,
                   struct err *e)
{
    if (B < 1 || B > BACKEND_MAX_BATCH)
        return err_set(e, ERR_USAGE, "batch of %d requests: from 1 to %d", B, BACKEND_MAX_BATCH);
    if (backend_ready(b, e) < 0)
        return -1;
    for (int i = 0; i < B; i++)
        if (check_req(b, &req[i], i, b->rows, e) < 0)
            return -1;
    TIMED(b, b->ops->sample(b, req, B, res, e));
}

int backend_draws(struct backend *b, const struct backend_req *req, int n, int *kept_ids,
                  int *plain_ids, struct err *e)
{
    if (n < 1 || n > DRAWS_MAX)
        return err_set(e, ERR_USAGE, "%d draws: from 1 to %d", n, DRAWS_MAX);
    if (backend_ready(b, e) < 0 || check_req(b, req, 0, b->rows, e) < 0)
        return -1;
    TIMED(b, b->ops->draws(b, req, n, kept_ids, plain_ids, e));
}

int backend_step(struct backend *b, const float *h, int B, const struct backend_req *req,
                 struct backend_res *res, struct err *e)
{
    if (check_head_call(b, B, e) < 0)
        return -1;
    for (int i = 0; i < B; i++) /* the rows the head is about to make */
        if (check_req(b, &req[i], i, B, e) < 0)
            return -1;
    if (!b->ops->step) { /* the two calls, timed as one */
        double t0 = clock_ms();
        int rc = backend_logits(b, h, B, e);
        b->head_ms = b->kernel_ms;
        if (rc == 0)
            rc = backend_sample(b, req, B, res, e);
        b->wall_ms = clock_ms() - t0;
        return rc;
    }
    b->gen++;
    TIMED(b, b->ops->step(b, h, B, req, res, e));
}
