/* kind_captured.c - logits captured from a model and read from a .npy file
 * (data/lesson.h's lesson_from_npy): one row of floats a step, the same
 * whatever context the steps here draw, since the model saw its own. */
#include "source/source_int.h"

static int captured_runs(const struct lesson *L)
{
    return L->captured != NULL;
}

static int captured_peek(const struct source *src, int k, struct source_logits *out)
{
    *out = (struct source_logits){ .f = src->L->steps[k - 1].logits_f };
    return out->f ? 0 : -1;
}

const struct source_ops SOURCE_CAPTURED = {
    .kind = "captured",
    .runs = captured_runs,
    .peek = captured_peek,
};
