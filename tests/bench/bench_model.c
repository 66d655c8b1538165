/* bench_model.c - what a full-size step costs on the CPU: building the
 * synthetic LM head (once), the hidden vector of a scenario, RMSNorm and the
 * product with 128,256 x 4,096 bf16 weights, the O(V) sampler after it, and
 * ten thousand draws. Prints medians. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#include "model/model.h"
#include "core/draws.h"
#include "core/sampler.h"
#include "data/scenario.h"
#include "source/kind_scenario.h"
#include "data/vocab.h"

#define ROUNDS 21

static void fail(const char *msg)
{
    fprintf(stderr, "bench: %s\n", msg);
    exit(1);
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
        trace_free(&t);
        scenario_run_free(&r);
    }
    printf("(a step is hidden+norm + W.h + sampler; the head is built once, on opening)\n");
    scenario_free(&sc);
    vocab_free(&v);
    return 0;
}
