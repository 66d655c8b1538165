/* pool.c - the forward pass's threads (pool.h).
 *
 * A job is published by bumping a generation counter; a worker that sees
 * a new generation takes tasks from a shared counter until none are left,
 * then counts itself out. Both sides spin briefly on the atomics before
 * they fall back to the mutex and condition variables: the mutex is only
 * there so that a sleeper cannot miss the bump that should wake it.
 */
#include "model/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/clock.h"

/* How long a waiting thread spins before it sleeps. A decode step's
 * products follow each other within a few microseconds; between steps
 * (the sampler, the screen) the threads go to sleep. */
#define POOL_STACK      (8u << 20) /* bytes of a worker's stack */
#define POOL_SPIN_MS    0.05
#define POOL_SPIN_CHECK 256 /* spins between two looks at the clock */

struct pool_worker {
    struct pool *p;
    int id;
    pthread_t thread;
};

struct pool {
    int threads;
    int started; /* workers started (threads - 1 when all went well) */
    struct pool_worker *w;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* a new generation, or stop */
    pthread_cond_t done; /* the last worker left the job */
    atomic_uint generation;
    atomic_int next;   /* the next task to take */
    atomic_int active; /* workers still in the job */
    atomic_int stop;
    /* The job; written before the generation is bumped (release), read
     * after it is seen (acquire). */
    pool_fn fn;
    void *arg;
    int tasks;
};

/* Takes and runs tasks until the job has none left. */
static void pool_work(struct pool *p, pool_fn fn, void *arg, int tasks, int worker)
{
    for (;;) {
        int t = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (t >= tasks)
            return;
        fn(arg, t, worker);
    }
}

/* Spins until the generation differs from seen (1), or gives up (0). */
static int pool_spin_generation(struct pool *p, unsigned seen)
{
    double t0 = clock_ms();
    for (;;) {
        for (int i = 0; i < POOL_SPIN_CHECK; i++)
            if (atomic_load_explicit(&p->generation, memory_order_acquire) != seen ||
                atomic_load_explicit(&p->stop, memory_order_relaxed))
                return 1;
        if (clock_ms() - t0 > POOL_SPIN_MS)
            return 0;
    }
}

static void *pool_main(void *arg)
{
    struct pool_worker *me = arg;
    struct pool *p = me->p;
    unsigned seen = 0;
    for (;;) {
        if (!pool_spin_generation(p, seen)) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->generation) == seen && !atomic_load(&p->stop))
                pthread_cond_wait(&p->wake, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop))
            return NULL;
        seen = atomic_load_explicit(&p->generation, memory_order_acquire);
        pool_work(p, p->fn, p->arg, p->tasks, me->id);
        if (atomic_fetch_sub_explicit(&p->active, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

struct pool *pool_new(int threads, struct err *e)
{
    if (threads < 1)
        threads = 1;
    struct pool *p = calloc(1, sizeof *p);
    if (!p || !(p->w = calloc((size_t)threads, sizeof *p->w))) {
        free(p);
        err_set(e, ERR_SYSTEM, "thread pool: out of memory");
        return NULL;
    }
    p->threads = threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->generation, 0u);
    atomic_init(&p->next, 0);
    atomic_init(&p->active, 0);
    atomic_init(&p->stop, 0);
    /* A stack of its own size, not the process's limit's: the products'
     * working memory lives there (quant_avx2.c's and quant_avx512.c's,
     * about 570 KB a call). */
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) {
        pool_free(p);
        err_set(e, ERR_SYSTEM, "thread pool: cannot set a thread's stack size");
        return NULL;
    }
    if (pthread_attr_setstacksize(&attr, POOL_STACK) != 0) {
        pthread_attr_destroy(&attr);
        pool_free(p);
        err_set(e, ERR_SYSTEM, "thread pool: cannot set a thread's stack size");
        return NULL;
    }
    for (int i = 1; i < threads; i++) {
        p->w[i].p = p;
        p->w[i].id = i;
        if (pthread_create(&p->w[i].thread, &attr, pool_main, &p->w[i]) != 0) {
            pthread_attr_destroy(&attr);
            pool_free(p);
            err_set(e, ERR_SYSTEM, "thread pool: cannot start thread %d of %d", i + 1, threads);
            return NULL;
        }
        p->started++;
    }
    pthread_attr_destroy(&attr);
    return p;
}

void pool_free(struct pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i <= p->started; i++)
        pthread_join(p->w[i].thread, NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->w);
    free(p);
}

int pool_threads(const struct pool *p)
{
    return p->threads;
}

/* Waits until every worker has left the job. */
static void pool_wait(struct pool *p)
{
    double t0 = clock_ms();
    while (atomic_load_explicit(&p->active, memory_order_acquire) > 0) {
        if (clock_ms() - t0 > POOL_SPIN_MS) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->active) > 0)
                pthread_cond_wait(&p->done, &p->mu);
            pthread_mutex_unlock(&p->mu);
            return;
        }
    }
}

void pool_run(struct pool *p, pool_fn fn, void *arg, int tasks)
{
    if (tasks <= 0)
        return;
    if (p->threads == 1 || tasks == 1) {
        for (int t = 0; t < tasks; t++)
            fn(arg, t, 0);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    p->tasks = tasks;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_store_explicit(&p->active, p->threads - 1, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->generation, 1u, memory_order_release);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    pool_work(p, fn, arg, tasks, 0);
    pool_wait(p);
}
