/* kind_captured.c - logits captured from a model and read from a .npy file
 * (data/lesson.h's lesson_from_npy): one row of floats a step, the same
 * whatever context the steps here draw, since the model saw its own. */
#include "source/source_int.h"

static int captured_runs(const struct lesson *L)
{
    return L->captured != NULL;
}

static int captured_open(struct source *src, int hidden, struct err *e)
{
    (void)src;
    (void)hidden;
    (void)e;
    return 0;
}

static void captured_close(struct source *src)
{
    (void)src;
}

static int captured_peek(const struct source *src, int k, struct source_logits *out)
{
    *out = (struct source_logits){ .f = src->L->steps[k - 1].logits_f };
    return out->f ? 0 : -1;
}

static int captured_logits(struct source *src, int k, const int *ctx, int len,
                           struct source_logits *out, struct err *e)
{
    (void)ctx;
    (void)len;
    if (captured_peek(src, k, out) < 0)
        return err_set(e, ERR_SYSTEM, "step %d has no captured row", k);
    return 0;
}

const struct source_ops SOURCE_CAPTURED = {
    .kind = "captured",
    .runs = captured_runs,
    .open = captured_open,
    .close = captured_close,
    .logits = captured_logits,
    .peek = captured_peek,
};
