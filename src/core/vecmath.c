#include "core/vecmath.h"

#include <math.h>

#include "core/sampler_rules.h"

/* Each loop's body, then its builds (VEC_PATHS, base/vecpath.h). */

VEC_BODY void vm_quotients_body(double *z, double t, int n)
{
    for (int i = 0; i < n; i++)
        z[i] /= t;
}
VEC_PATHS_VOID(vm_quotients, (double *z, double t, int n), (z, t, n))

VEC_BODY double vm_divide_body(double *z, double t, int n)
{
    double m = vm_magnitude(z, 0, n, 0.0);
    vm_quotients_body(z, t, n);
    return m;
}
VEC_PATHS(double, vm_divide, (double *z, double t, int n), (z, t, n))

VEC_BODY void vm_keys_body(const double *z, uint32_t *key, int n)
{
    for (int i = 0; i < n; i++)
        key[i] = rule_key(z[i]);
}
VEC_PATHS_VOID(vm_keys, (const double *z, uint32_t *key, int n), (z, key, n))

VEC_BODY int vm_count_before_body(const double *z, int n, double zc, int idc)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += (z[i] > zc) | ((z[i] == zc) & (i < idc));
    return c;
}
VEC_PATHS(int, vm_count_before, (const double *z, int n, double zc, int idc), (z, n, zc, idc))

VEC_BODY void vm_cut_marks_body(const double *z, uint8_t *mark, int n, double zc, int idc,
                                int keep_ties, uint8_t kept, uint8_t cut)
{
    for (int i = 0; i < n; i++) {
        int after = keep_ties ? z[i] < zc : (z[i] < zc) | ((z[i] == zc) & (i > idc));
        mark[i] = (mark[i] == kept && after) ? cut : mark[i];
    }
}
VEC_PATHS_VOID(vm_cut_marks,
               (const double *z, uint8_t *mark, int n, double zc, int idc, int keep_ties,
                uint8_t kept, uint8_t cut),
               (z, mark, n, zc, idc, keep_ties, kept, cut))

VEC_BODY void vm_bar_marks_body(const double *z, uint8_t *mark, int n, double max, double bar,
                                uint8_t kept, uint8_t cut)
{
    for (int i = 0; i < n; i++) {
        uint8_t m = rule_min_p_keeps(z[i], max, bar) ? kept : cut;
        mark[i] = mark[i] == kept ? m : mark[i];
    }
}
VEC_PATHS_VOID(vm_bar_marks,
               (const double *z, uint8_t *mark, int n, double max, double bar, uint8_t kept,
                uint8_t cut),
               (z, mark, n, max, bar, kept, cut))

int vm_collect(const uint8_t *mark, int lo, int hi, uint8_t kept, int *out)
{
    int k = 0;
    for (int i = lo; i < hi; i++)
        if (mark[i] == kept)
            out[k++] = i;
    return k;
}

VEC_BODY void vm_block_max_body(const double *x, int n, double *block_max)
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
VEC_PATHS_VOID(vm_block_max, (const double *x, int n, double *block_max), (x, n, block_max))

VEC_BODY int vm_first_at_least_body(const double *x, int from, int n, double bar, int strict)
{
    int i = from;
#ifdef VM_HAS_VEC
    for (; i + 8 <= n; i += 8) {
        vm_v8d v;
        memcpy(&v, x + i, sizeof v);
        vm_v8i hit = strict ? v > bar : v >= bar;
        int64_t any = 0;
        for (int k = 0; k < 8; k++)
            any |= hit[k];
        if (any)
            break;
    }
#endif
    for (; i < n; i++)
        if (strict ? x[i] > bar : x[i] >= bar)
            return i;
    return n;
}
VEC_PATHS(int, vm_first_at_least, (const double *x, int from, int n, double bar, int strict),
          (x, from, n, bar, strict))

VEC_BODY double vm_largest_body(const double *x, int n)
{
    double m = -INFINITY;
    int i = 0;
#ifdef VM_HAS_VEC
    vm_v8d acc = (vm_v8d){ 0 } - INFINITY;
    for (; i + 8 <= n; i += 8) {
        vm_v8d v;
        memcpy(&v, x + i, sizeof v);
        acc = VM_MAX8(v, acc);
    }
    for (int k = 0; k < 8; k++)
        m = acc[k] > m ? acc[k] : m;
#endif
    for (; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m == 0.0 ? x[vm_first_at_least_body(x, 0, n, 0.0, 0)] : m;
}
VEC_PATHS(double, vm_largest, (const double *x, int n), (x, n))
