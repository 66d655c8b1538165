#include "core/vecmath.h"

#include <math.h>

#include "base/vec_clones.h"
#include "core/fastexp.h"
#include "core/sampler_rules.h"

#define LANES 8

VEC_CLONES int vm_load_f(const float *in, double shift, double *z, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double v = (double)in[i] + shift;
        z[i] = v;
        /* NaN fails both comparisons; -inf is a mask, not an error. */
        bad += !((v >= -RULE_Z_LIMIT) & (v <= RULE_Z_LIMIT)) & (v != -INFINITY);
    }
    return bad;
}

VEC_CLONES int vm_load_d(const double *in, double shift, double *z, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        double v = in[i] + shift;
        z[i] = v;
        bad += !((v >= -RULE_Z_LIMIT) & (v <= RULE_Z_LIMIT)) & (v != -INFINITY);
    }
    return bad;
}

VEC_CLONES double vm_divide(double *z, double t, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        double a = fabs(z[i]);
        m = ((z[i] != -INFINITY) & (a > m)) ? a : m;
        z[i] /= t;
    }
    return m;
}

VEC_CLONES double vm_max(const double *x, int n)
{
    double m[LANES];
    for (int k = 0; k < LANES; k++)
        m[k] = -INFINITY;
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            m[k] = x[i + k] > m[k] ? x[i + k] : m[k];
    double best = -INFINITY;
    for (int k = 0; k < LANES; k++)
        best = m[k] > best ? m[k] : best;
    for (; i < n; i++)
        best = x[i] > best ? x[i] : best;
    return best;
}

VEC_CLONES void vm_exp_shift(const double *x, double shift, double *out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = fast_exp(x[i] - shift);
}

VEC_CLONES double vm_sum(const double *x, int n)
{
    double a[LANES] = { 0 };
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            a[k] += x[i + k];
    double s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    for (; i < n; i++)
        s += x[i];
    return s;
}

VEC_CLONES double vm_weighted_offset(const double *w, const double *x, double shift, int n)
{
    double a[LANES] = { 0 };
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            a[k] += w[i + k] > 0.0 ? w[i + k] * (x[i + k] - shift) : 0.0;
    double s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    for (; i < n; i++)
        s += w[i] > 0.0 ? w[i] * (x[i] - shift) : 0.0;
    return s;
}

VEC_CLONES void vm_keys(const double *z, uint32_t *key, int n)
{
    for (int i = 0; i < n; i++)
        key[i] = rule_key(z[i]);
}

VEC_CLONES int vm_count_before(const double *z, int n, double zc, int idc)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += (z[i] > zc) | ((z[i] == zc) & (i < idc));
    return c;
}

VEC_CLONES int vm_marks_init(const double *z, uint8_t *mark, int n, uint8_t kept, uint8_t masked)
{
    int c = 0;
    for (int i = 0; i < n; i++) {
        int m = z[i] == -INFINITY;
        mark[i] = m ? masked : kept;
        c += !m;
    }
    return c;
}

VEC_CLONES void vm_cut_marks(const double *z, uint8_t *mark, int n, double zc, int idc,
                             int keep_ties, uint8_t kept, uint8_t cut)
{
    for (int i = 0; i < n; i++) {
        int after = keep_ties ? z[i] < zc : (z[i] < zc) | ((z[i] == zc) & (i > idc));
        mark[i] = (mark[i] == kept && after) ? cut : mark[i];
    }
}

VEC_CLONES void vm_bar_marks(const double *z, uint8_t *mark, int n, double max, double lo,
                             double hi, uint8_t kept, uint8_t cut, uint8_t unsure)
{
    for (int i = 0; i < n; i++) {
        double d = z[i] - max;
        uint8_t m = d > hi ? kept : d < lo ? cut : unsure;
        mark[i] = mark[i] == kept ? m : mark[i];
    }
}

int vm_collect(const uint8_t *mark, int lo, int hi, uint8_t kept, int *out)
{
    int k = 0;
    for (int i = lo; i < hi; i++)
        if (mark[i] == kept)
            out[k++] = i;
    return k;
}

double vm_exp_stats(const double *x, double shift, double *out, int n, double *offset)
{
    /* Three vectorized passes: a fused loop with two running sums does not
     * vectorize without reordering the sums, which would tie the result to
     * the vector width. */
    vm_exp_shift(x, shift, out, n);
    *offset = vm_weighted_offset(out, x, shift, n);
    return vm_sum(out, n);
}

VEC_CLONES void vm_block_max(const double *x, int n, double *block_max)
{
    int full = n / VM_BLOCK;
    for (int b = 0; b < full; b++)
        block_max[b] = vm_block_max_of(x + b * VM_BLOCK);
    if (full * VM_BLOCK < n) {
        double m = -INFINITY;
        for (int i = full * VM_BLOCK; i < n; i++)
            m = x[i] > m ? x[i] : m;
        block_max[full] = m;
    }
}
