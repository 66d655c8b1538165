/* clock.h - the one clock the program times itself with: monotonic, in
 * milliseconds (header only: the recompute, the backends, the batch, the
 * LM head and the benchmarks all read it). */
#ifndef LOGITLAB_CLOCK_H
#define LOGITLAB_CLOCK_H

#include <time.h>

static inline double clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#endif
