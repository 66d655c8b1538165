/* cpus.c - the CPUs this process may use (cpus.h). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "base/cpus.h"

#include <sched.h>
#include <unistd.h>

int cpu_count(void)
{
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (n > 4096 ? 4096 : (int)n) : 1;
}
