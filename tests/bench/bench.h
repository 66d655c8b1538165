/* bench.h - what every benchmark needs: a monotonic clock and medians. */
#ifndef LOGITLAB_BENCH_H
#define LOGITLAB_BENCH_H

#include <stdlib.h>

#include "base/clock.h"

static inline double bench_now_us(void)
{
    return clock_ms() * 1e3;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return v[n / 2];
}

#endif
