/* cpus.h - how many CPUs this process may run on: the one count the
 * forward pass's threads, the LM head's and the device line read. */
#ifndef LOGITLAB_CPUS_H
#define LOGITLAB_CPUS_H

/* The CPUs in this process's affinity mask (what `taskset` or a
 * container's cpuset leaves it), at least 1. The number online would put
 * two spinning threads on one core under `taskset -c 1`, each waiting for
 * the other's time slice. */
int cpu_count(void);

#endif
