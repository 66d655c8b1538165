/* kind_table.c - a lesson's own logits: each step's row as the lesson file
 * gives it (probabilities were read as ln p), the same whatever the
 * context, since the lesson wrote them for its own path. */
#include "source/source_int.h"

static int table_runs(const struct lesson *L)
{
    (void)L;
    return 1; /* the last kind tried: every lesson has rows of its own */
}

static int table_open(struct source *src, int hidden, struct err *e)
{
    (void)src;
    (void)hidden;
    (void)e;
    return 0;
}

static void table_close(struct source *src)
{
    (void)src;
}

static int table_peek(const struct source *src, int k, struct source_logits *out)
{
    const struct lesson_step *S = &src->L->steps[k - 1];
    *out = (struct source_logits){ .d = S->logits };
    return S->logits ? 0 : -1;
}

static int table_logits(struct source *src, int k, const int *ctx, int len,
                        struct source_logits *out, struct err *e)
{
    (void)ctx;
    (void)len;
    if (table_peek(src, k, out) < 0)
        return err_set(e, ERR_SYSTEM, "lesson '%s': step %d has no logits", src->L->id, k);
    return 0;
}

const struct source_ops SOURCE_TABLE = {
    .kind = "table",
    .written_for_path = 1,
    .runs = table_runs,
    .open = table_open,
    .close = table_close,
    .logits = table_logits,
    .peek = table_peek,
};
