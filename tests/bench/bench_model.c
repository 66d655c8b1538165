/* bench_model.c - what a full-size step costs on the CPU: building the
 * synthetic LM head (once), the hidden vector of a scenario, RMSNorm and the
 * product with 128,256 x 4,096 bf16 weights, the O(V) sampler after it, and
 * ten thousand draws; then the product against the memory's speed: the
 * same weights read by the same threads with no arithmetic (a streaming
 * read), the one-vector product and the batch view's eight-vector one as a
 * share of it. Prints medians. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#include "base/vecpath.h"
#include "model/head_vec.h"
#include "model/model.h"
#include "model/pool.h"
#include "core/draws.h"
#include "core/sampler.h"
#include "data/scenario.h"
#include "source/kind_scenario.h"
#include "data/vocab.h"

#define ROUNDS     21
#define READ_CHUNK (1 << 20) /* bytes of the weights per task of the streaming read */
#define BATCH_VECS 8         /* the batch view's rows */

static void fail(const char *msg)
{
    fprintf(stderr, "bench: %s\n", msg);
    exit(1);
}

/* The streaming read: every 8-byte word of the weights added up, one
 * chunk a task, so that nothing but the reading costs. It asks the memory
 * ahead as the product does (HEAD_AHEAD_EVERY, HEAD_AHEAD_BYTES): without
 * that it read 10-15 % slower here, and the product's share of it would
 * flatter the product. */
struct read_job {
    const uint64_t *w;
    size_t words;
    uint64_t sums[64];
};

VEC_DECLARE(uint64_t, sum_words, (const uint64_t *w, size_t n));

VEC_BODY uint64_t sum_words_body(const uint64_t *w, size_t n)
{
    uint64_t s[8] = { 0 };
    for (size_t i = 0; i + 8 <= n; i += 8) {
        if (i % (HEAD_AHEAD_EVERY / sizeof *w) == 0)
            __builtin_prefetch((const void *)((uintptr_t)(w + i) + HEAD_AHEAD_BYTES), 0, 2);
        for (int k = 0; k < 8; k++)
            s[k] += w[i + k];
    }
    return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}
VEC_PATHS(uint64_t, sum_words, (const uint64_t *w, size_t n), (w, n))

static void read_task(void *arg, int task, int worker)
{
    struct read_job *j = arg;
    size_t per = READ_CHUNK / sizeof *j->w, lo = (size_t)task * per;
    size_t n = lo + per < j->words ? per : j->words - lo;
    j->sums[worker % 64] += sum_words(j->w + lo, n);
}

/* Milliseconds of one streaming read of m's weights on m's threads. */
static double read_ms(struct model *m, struct read_job *j)
{
    int tasks = (int)((m->bytes + READ_CHUNK - 1) / READ_CHUNK);
    double t0 = clock_ms();
    pool_run(m->pool, read_task, j, tasks);
    return clock_ms() - t0;
}

/* The product against the streaming read of the same weights, round by
 * round (a read, the one-vector product, the eight-vector one), so that a
 * change in the machine's memory speed falls on all three alike: the shares
 * are the medians of each round's read time over its product's. */
static void against_bandwidth(struct model *m)
{
    size_t d = (size_t)m->d, V = (size_t)m->V;
    float *x = malloc(BATCH_VECS * d * sizeof *x), *out = malloc(BATCH_VECS * V * sizeof *out);
    if (!x || !out)
        fail("out of memory");
    for (size_t i = 0; i < BATCH_VECS * d; i++)
        x[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
    struct read_job j = { .w = (const uint64_t *)m->w, .words = m->bytes / 8 };
    double rd[ROUNDS], t1[ROUNDS], t8[ROUNDS], s1[ROUNDS], s8[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        rd[i] = read_ms(m, &j);
        double t0 = clock_ms();
        model_logits(m, x, out);
        t1[i] = clock_ms() - t0;
        t0 = clock_ms();
        model_logits_batch(m, x, BATCH_VECS, out);
        t8[i] = clock_ms() - t0;
        s1[i] = rd[i] / t1[i];
        s8[i] = rd[i] / t8[i];
    }
    volatile uint64_t keep = j.sums[0];
    (void)keep;
    double ideal = bench_median(rd, ROUNDS); /* ms to read the weights once */
    printf("  %d threads read the %.2f GB of weights at %.1f GB/s (%.1f ms):\n", m->threads,
           (double)m->bytes / 1e9, (double)m->bytes / 1e6 / ideal, ideal);
    printf("  W.h, 1 vector: %6.1f ms, %3.0f%% of the read bandwidth\n", bench_median(t1, ROUNDS),
           100.0 * bench_median(s1, ROUNDS));
    printf("  W.h, %d vectors: %5.1f ms, %3.0f%% of it (the weights read once for all)\n",
           BATCH_VECS, bench_median(t8, ROUNDS), 100.0 * bench_median(s8, ROUNDS));
    free(x);
    free(out);
}

int main(void)
{
    struct vocab v;
    struct scenario sc;
    struct err e;
    if (vocab_load(&v, "data/llama3-vocab.bin", &e) < 0 ||
        scenario_load(&sc, "data/scenarios/france.ini", &v, &e) < 0)
        fail(e.msg);
    static const int HIDDEN[] = { 4096, 1024 };
    printf("LM head on the CPU, V = %d: medians of %d steps (milliseconds)\n", v.n, ROUNDS);
    printf("%7s %10s %9s %12s %9s %9s %10s\n", "hidden", "weights", "build", "hidden+norm", "W.h",
           "sampler", "10k draws");
    for (size_t k = 0; k < sizeof HIDDEN / sizeof HIDDEN[0]; k++) {
        struct scenario_run r;
        double t0 = clock_ms();
        if (scenario_run_open(&r, &sc, v.n, HIDDEN[k], MODEL_DEFAULT_SEED, &e) < 0)
            fail(e.msg);
        double build = clock_ms() - t0;
        struct trace t;
        if (trace_init(&t, v.n, &e) < 0)
            fail(e.msg);
        struct sampler_settings s;
        sampler_defaults(&s);
        s.top_p = 0.95;
        double hid[ROUNDS], gemv[ROUNDS], samp[ROUNDS], draws[ROUNDS];
        static struct draws d;
        for (int i = 0; i < ROUNDS; i++) {
            r.valid = 0; /* compute it again */
            const float *z = scenario_run_logits(&r, sc.prompt, sc.prompt_len, &e);
            if (!z)
                fail(e.msg);
            hid[i] = r.hidden_ms;
            gemv[i] = r.logits_ms;
            struct sampler_input in = { .vocab_size = v.n, .logits_f = z, .step = 1 };
            double t1 = clock_ms();
            if (sampler_run_fast(&in, &s, &t, 64, &e) < 0)
                fail(e.msg);
            double t2 = clock_ms();
            if (draws_run(&t, 1, 1, DRAWS_DEFAULT, DRAWS_ROWS, &d, &e) < 0)
                fail(e.msg);
            samp[i] = t2 - t1;
            draws[i] = clock_ms() - t2;
        }
        printf("%7d %7.2f GB %7.0f ms %9.2f ms %6.2f ms %6.2f ms %7.2f ms\n", HIDDEN[k],
               (double)r.m.bytes / 1e9, build, bench_median(hid, ROUNDS),
               bench_median(gemv, ROUNDS), bench_median(samp, ROUNDS), bench_median(draws, ROUNDS));
        against_bandwidth(&r.m);
        trace_free(&t);
        scenario_run_free(&r);
    }
    printf("(a step is hidden+norm + W.h + sampler; the head is built once, on opening)\n");
    scenario_free(&sc);
    vocab_free(&v);
    return 0;
}
