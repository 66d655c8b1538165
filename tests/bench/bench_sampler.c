/* bench_sampler.c - the CPU sampler at real sizes: the O(V) fast path
 * against the naive reference (a full softmax and a full sort per stage),
 * both measured here, on the same rows, in the same run. Prints medians. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#include "core/philox.h"
#include "core/sampler.h"
#include "core/settings.h"

#define FAST_ROUNDS    41
#define NAIVE_ROUNDS   5
#define TOP_ROWS       20
#define PENALTY_WINDOW 64

/* A row like a model's: a bulk normal of standard deviation 2.5 and a few
 * tokens at 15 to 20. */
static void make_row(float *z, double *zd, int V)
{
    for (int i = 0; i < V; i++) {
        double u1 = philox_uniform(7, (uint32_t)i, 1, 0) + 1.0 / 33554432.0;
        double u2 = philox_uniform(7, (uint32_t)i, 2, 0);
        z[i] = (float)(2.5 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    for (int j = 0; j < 8; j++)
        z[(j * 7919) % V] = 20.0f - 0.7f * j;
    for (int i = 0; i < V; i++)
        zd[i] = z[i];
}

struct chain_case {
    const char *name;
    const char *settings[12]; /* name, value pairs, then NULL */
    int penalty_window;
};

static void apply(struct settings *s, const struct chain_case *c)
{
    struct err e;
    settings_defaults(s);
    for (int i = 0; c->settings[i]; i += 2)
        settings_set(s, c->settings[i], c->settings[i + 1], &e);
}

int main(void)
{
    static const int SIZES[] = { 32768, 128256, 524288 };
    static const struct chain_case CASES[] = {
        { "greedy", { "temperature", "0", NULL }, 0 },
        { "temperature 0.8", { "temperature", "0.8", NULL }, 0 },
        { "top-k 40", { "top-k", "40", NULL }, 0 },
        { "top-p 0.95", { "top-p", "0.95", NULL }, 0 },
        { "min-p 0.05", { "min-p", "0.05", NULL }, 0 },
        { "k40 p0.95 min-p0.05 T0.8",
          { "top-k", "40", "top-p", "0.95", "min-p", "0.05", "temperature", "0.8", NULL },
          0 },
        { "the same + rep 1.3 over 64",
          { "top-k", "40", "top-p", "0.95", "min-p", "0.05", "temperature", "0.8",
            "repetition-penalty", "1.3", NULL },
          PENALTY_WINDOW },
    };
    int n_cases = (int)(sizeof CASES / sizeof CASES[0]);
    printf("CPU sampler, one row: medians of %d fast runs and %d naive runs (microseconds)\n",
           FAST_ROUNDS, NAIVE_ROUNDS);
    printf("%-28s %8s %12s %12s %9s\n", "chain", "V", "fast", "naive", "speed-up");
    for (size_t si = 0; si < sizeof SIZES / sizeof SIZES[0]; si++) {
        int V = SIZES[si];
        float *z = malloc((size_t)V * sizeof *z);
        double *zd = malloc((size_t)V * sizeof *zd);
        int ctx[PENALTY_WINDOW];
        for (int j = 0; j < PENALTY_WINDOW; j++)
            ctx[j] = (j * 104729) % V;
        struct trace tf, tr;
        struct err e;
        if (!z || !zd || trace_init(&tf, V, &e) < 0 || trace_init(&tr, V, &e) < 0) {
            fprintf(stderr, "bench: out of memory\n");
            return 1;
        }
        make_row(z, zd, V);
        for (int c = 0; c < n_cases; c++) {
            struct settings s;
            apply(&s, &CASES[c]);
            s.sampler.penalty_scope = SCOPE_ALL;
            s.sampler.seed = 42;
            int len = CASES[c].penalty_window;
            struct sampler_input fin = {
                .vocab_size = V, .logits_f = z, .context = ctx, .context_len = len, .step = 1
            };
            struct sampler_input rin = {
                .vocab_size = V, .logits = zd, .context = ctx, .context_len = len, .step = 1
            };
            double fast[FAST_ROUNDS], naive[NAIVE_ROUNDS];
            for (int r = 0; r < FAST_ROUNDS; r++) {
                double t0 = bench_now_us();
                if (sampler_run_fast(&fin, &s.sampler, &tf, TOP_ROWS, &e) < 0) {
                    fprintf(stderr, "bench: %s\n", e.msg);
                    return 1;
                }
                fast[r] = bench_now_us() - t0;
            }
            for (int r = 0; r < NAIVE_ROUNDS; r++) {
                double t0 = bench_now_us();
                sampler_run(&rin, &s.sampler, &tr, &e);
                naive[r] = bench_now_us() - t0;
            }
            if (tf.choice.id != tr.choice.id || tf.kept_count != tr.kept_count) {
                fprintf(stderr, "bench: %s at V=%d: the fast path and the reference disagree\n",
                        CASES[c].name, V);
                return 1;
            }
            double mf = bench_median(fast, FAST_ROUNDS), mn = bench_median(naive, NAIVE_ROUNDS);
            printf("%-28s %8d %12.1f %12.1f %8.0fx\n", CASES[c].name, V, mf, mn, mn / mf);
        }
        trace_free(&tf);
        trace_free(&tr);
        free(z);
        free(zd);
    }
    return 0;
}
