/* trace.c - questions asked of a step's trace (trace.h). */
#include "core/trace.h"

#include <math.h>

int trace_row_of(const struct trace *t, int id, struct trace_row *row, int *rank)
{
    if (id < 0 || id >= t->vocab_size)
        return -1;
    int r = t->rank_of[id];
    if (r >= 0 && r < t->n_rows && t->rows[r].id == id) {
        *row = t->rows[r];
        *rank = r;
        return 0;
    }
    return sampler_fast_row(t, id, row, rank);
}

void trace_tail(const struct trace *t, int shown, int *count, double *mass, int *kept)
{
    *count = t->vocab_size - shown;
    double m = shown > 0 ? 1.0 - t->rows[shown - 1].cum : 1.0;
    *mass = m < 0 ? 0.0 : m;
    int k = t->kept_count;
    for (int i = 0; i < shown; i++)
        k -= t->rows[i].removed_by == TRACE_KEPT;
    *kept = k;
}

int trace_pick(const struct trace *t, int id, struct trace_alt *pick, int *rank,
               struct trace_alt *alt, int max)
{
    struct trace_row row;
    int r;
    int n = t->n_rows < max ? t->n_rows : max;
    for (int k = 0; k < n; k++)
        alt[k] = (struct trace_alt){ t->rows[k].id, t->rows[k].prob, t->rows[k].final };
    if (trace_row_of(t, id, &row, &r) < 0) {
        *pick = (struct trace_alt){ id, NAN, NAN };
        *rank = 0;
        return n;
    }
    *pick = (struct trace_alt){ id, row.prob, row.final };
    *rank = r + 1;
    return n;
}

const char *trace_removed_name(int removed_by)
{
    if (removed_by == TRACE_KEPT)
        return "";
    if (removed_by < 0 || removed_by >= STAGE_COUNT)
        return "masked";
    return STAGES[removed_by].removed ? STAGES[removed_by].removed : STAGES[removed_by].name;
}

double trace_temperature(const struct trace *t, const struct sampler_settings *s)
{
    for (int c = 0; c < t->n_stages; c++) {
        const struct stage_report *r = &t->stages[c];
        if (r->stage != STAGE_TEMPERATURE || !r->active)
            continue;
        if (s->dynatemp_range <= 0.0)
            return s->temperature;
        return r->in <= 1 ? 1.0 : r->cut;
    }
    return 1.0;
}
