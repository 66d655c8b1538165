/* pool.h - a persistent pool of worker threads for the forward pass.
 *
 * A decode step hands the pool a few hundred small jobs (each matrix of
 * each layer, the attention heads), so the threads are made once and wait
 * between jobs: they spin for a few tens of microseconds, which covers the
 * gap between two products of one step, then sleep on a condition
 * variable, so an idle model costs nothing.
 *
 * A job is tasks numbered 0..n-1 that the caller and the workers take in
 * turn from one counter; which thread runs a task changes from run to run,
 * so a task must write only what belongs to it (then the results do not
 * depend on the number of threads).
 */
#ifndef LOGITLAB_POOL_H
#define LOGITLAB_POOL_H

#include "base/err.h"

struct pool;

/* One task of a job: worker is the number of the thread running it, 0 for
 * the caller, up to pool_threads() - 1 (for per-thread work areas). */
typedef void (*pool_fn)(void *arg, int task, int worker);

/* A pool of threads threads in all, the caller included (threads - 1 are
 * started; 1 runs everything on the caller). NULL with e when a thread or
 * memory cannot be had. */
struct pool *pool_new(int threads, struct err *e);

/* Stops and joins the workers. NULL is accepted. */
void pool_free(struct pool *p);

int pool_threads(const struct pool *p);

/* Runs fn(arg, t, worker) for every t in [0, tasks) and returns when all
 * are done. Not reentrant: one job at a time, from one caller thread. */
void pool_run(struct pool *p, pool_fn fn, void *arg, int tasks);

#endif
