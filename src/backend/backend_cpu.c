/* backend_cpu.c - the CPU backend: the LM head of model.c and the O(V) fast
 * sampler (sampler_fast.c), one request after another. It is the reference
 * the CUDA backend is compared with, and it runs everywhere. */
#include "backend/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/cpus.h"
#include "core/draws.h"

struct cpu {
    const struct model *m;
    float *logits; /* cap rows of V */
    int cap;
    float *x; /* x_cap normalized hidden vectors */
    int x_cap;
    struct trace t;
};

static int cpu_open(struct backend *b, struct err *e)
{
    struct cpu *c = calloc(1, sizeof *c);
    if (!c)
        return err_set(e, ERR_SYSTEM, "out of memory for the CPU backend");
    b->impl = c;
    int n = cpu_count();
    snprintf(b->device, sizeof b->device, "CPU (%d thread%s)", n, n > 1 ? "s" : "");
    return 0;
}

static void cpu_close(struct backend *b)
{
    struct cpu *c = b->impl;
    if (!c)
        return;
    free(c->logits);
    free(c->x);
    trace_free(&c->t);
    free(c);
    b->impl = NULL;
}

/* Room for B rows of V logits and a trace of V tokens. */
static int reserve(struct backend *b, int B, int V, struct err *e)
{
    struct cpu *c = b->impl;
    if (V != b->V) {
        free(c->logits);
        c->logits = NULL;
        c->cap = 0;
        b->rows = 0;
        trace_free(&c->t);
    }
    if (B > c->cap) {
        float *p = realloc(c->logits, (size_t)B * (size_t)V * sizeof *p);
        if (!p)
            return err_set(e, ERR_SYSTEM, "out of memory for %d rows of %d logits (%.1f MB)", B, V,
                           (double)B * V * sizeof *p / 1e6);
        c->logits = p;
        c->cap = B;
    }
    if (c->t.vocab_size != V && trace_init(&c->t, V, e) < 0)
        return -1;
    b->V = V;
    return 0;
}

static int cpu_head(struct backend *b, const struct model *m, struct err *e)
{
    struct cpu *c = b->impl;
    free(c->x);
    c->x = NULL;
    c->x_cap = 0;
    if (reserve(b, 1, m->V, e) < 0)
        return -1;
    c->m = m;
    b->d = m->d;
    b->rows = 0;
    return 0;
}

static int cpu_logits(struct backend *b, const float *h, int B, struct err *e)
{
    struct cpu *c = b->impl;
    double t0 = clock_ms();
    if (reserve(b, B, c->m->V, e) < 0)
        return -1;
    if (B > c->x_cap) {
        float *x = realloc(c->x, (size_t)B * (size_t)b->d * sizeof *x);
        if (!x)
            return err_set(e, ERR_SYSTEM, "out of memory for %d hidden vectors of %d", B, b->d);
        c->x = x;
        c->x_cap = B;
    }
    for (int r = 0; r < B; r++)
        model_norm(c->m, h + (size_t)r * (size_t)b->d, c->x + (size_t)r * (size_t)b->d);
    model_logits_batch((struct model *)c->m, c->x, B, c->logits);
    b->rows = B;
    b->kernel_ms = clock_ms() - t0;
    return 0;
}

static int cpu_set_logits(struct backend *b, const float *logits, int B, int V, struct err *e)
{
    struct cpu *c = b->impl;
    if (reserve(b, B, V, e) < 0)
        return -1;
    memcpy(c->logits, logits, (size_t)B * (size_t)V * sizeof *logits);
    b->rows = B;
    return 0;
}

static int cpu_get_logits(struct backend *b, int row, float *out, struct err *e)
{
    (void)e;
    struct cpu *c = b->impl;
    memcpy(out, c->logits + (size_t)row * (size_t)b->V, (size_t)b->V * sizeof *out);
    return 0;
}

/* Runs one request's chain into the backend's trace. */
static int run_one(struct backend *b, const struct backend_req *r, int n_rows, struct err *e)
{
    struct cpu *c = b->impl;
    struct sampler_input in = {
        .vocab_size = b->V,
        .logits_f = c->logits + (size_t)r->row * (size_t)b->V,
        .context = r->context,
        .context_len = r->context_len,
        .prompt_len = r->prompt_len,
        .step = r->step,
        .row = r->row,
        .breaker = r->breaker,
        .end_ids = r->end_ids,
        .refused = r->refused,
        .n_end = r->n_end,
    };
    return sampler_run_fast(&in, &r->s, &c->t, n_rows, e);
}

static int cpu_sample(struct backend *b, const struct backend_req *req, int B,
                      struct backend_res *res, struct err *e)
{
    struct cpu *c = b->impl;
    const struct trace *t = &c->t;
    double t0 = clock_ms();
    for (int i = 0; i < B; i++) {
        const struct backend_req *r = &req[i];
        if (run_one(b, r, r->n_top, e) < 0) {
            err_prefix(e, "request %d", i);
            return -1;
        }
        struct backend_res *o = &res[i];
        *o = (struct backend_res){ .id = t->choice.id,
                                   .sampled = t->choice.sampled,
                                   .u = t->choice.u,
                                   .final = trace_final(t, t->choice.id),
                                   .max_z = t->max_adjusted,
                                   .sum_exp = t->sum_exp_shifted,
                                   .kept_count = t->kept_count,
                                   .kept_mass = t->kept_mass,
                                   .entropy = t->entropy,
                                   .entropy_final = t->entropy_final,
                                   .n_top = t->n_rows < r->n_top ? t->n_rows : r->n_top };
        for (int k = 0; k < o->n_top; k++) {
            const struct trace_row *w = &t->rows[k];
            o->top[k] =
                (struct backend_top){ w->id, w->removed_by, w->adjusted, w->prob, w->final };
        }
        if (r->final_out || r->kept_out) {
            for (int v = 0; v < b->V; v++) {
                if (r->kept_out)
                    r->kept_out[v] = (uint8_t)(t->fmark[v] == 0);
                if (r->final_out)
                    r->final_out[v] = trace_final(t, v);
            }
        }
    }
    b->kernel_ms = clock_ms() - t0;
    return 0;
}

static int cpu_draws(struct backend *b, const struct backend_req *r, int n, int *kept_ids,
                     int *plain_ids, struct err *e)
{
    struct cpu *c = b->impl;
    double t0 = clock_ms();
    if (run_one(b, r, 0, e) < 0)
        return -1;
    int rc = draws_ids(&c->t, r->s.seed, r->step, r->row, n, kept_ids, plain_ids, e);
    b->kernel_ms = clock_ms() - t0;
    return rc;
}

const struct backend_ops backend_cpu_ops = {
    .name = "CPU",
    .file_heads = 1,
    .open = cpu_open,
    .close = cpu_close,
    .head = cpu_head,
    .logits = cpu_logits,
    .set_logits = cpu_set_logits,
    .get_logits = cpu_get_logits,
    .sample = cpu_sample,
    .draws = cpu_draws,
};
