/* bench_gpu.c - the CUDA backend at real sizes (make bench-gpu): the sampler
 * at V = 128,256 for batches of 1 to 256 rows with three chains, and the LM
 * head's GEMV against the device's peak memory bandwidth. Prints medians of
 * the device time (CUDA events, backend.kernel_ms) and of the host's wall
 * time, and whether the targets of the issue are met (a miss is reported,
 * not an error). Without a CUDA device it says why and times the CPU
 * backend instead, for comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#include "backend/backend.h"
#include "model/model.h"
#include "core/philox.h"
#include "core/sampler.h"
#include "core/settings.h"

/* The device's peak memory bandwidth in GB/s, from its properties: the CUDA
 * backend exports it; weak, so that a build without it links (NULL). */
extern double backend_cuda_peak_gbps(const struct backend *b) __attribute__((weak));

#define V_BENCH        128256
#define N_TOP          16 /* top rows a request brings back, as the screen asks */
#define WARMUP         5
#define ROUNDS         50
#define CPU_WARMUP     1
#define CPU_ROUNDS     11
#define HEAD_ROUNDS    30
#define POOL_N         (1u << 20)
#define TARGET_HEAD    0.85  /* of the peak bandwidth, batch 1 */
#define TARGET_B1_US   20.0  /* chain (b), batch 1, device time per step */
#define TARGET_B256_US 150.0 /* chain (b), batch 256 */

struct chain_case {
    const char *name;
    const char *settings[10]; /* name, value pairs, then NULL */
};

static const struct chain_case CASES[] = {
    { "(a) temperature 0.8", { "temperature", "0.8", NULL } },
    { "(b) k 40, p 0.95, min-p 0.05, T 0.8",
      { "top-k", "40", "top-p", "0.95", "min-p", "0.05", "temperature", "0.8", NULL } },
    { "(c) top-p 0.95, T 0.8", { "top-p", "0.95", "temperature", "0.8", NULL } },
};
#define N_CASES ((int)(sizeof CASES / sizeof CASES[0]))

static const int BATCHES[] = { 1, 8, 64, 256 };

/* Rows like a model's, as in bench_sampler.c: a bulk normal of standard
 * deviation 2.5 and eight tokens at 15 to 20; each row its own (the bulk
 * read from a pool of normals at a row's own offset and stride). */
static int make_rows(float *z, int rows, int V)
{
    float *pool = malloc(POOL_N * sizeof *pool);
    if (!pool)
        return -1;
    for (uint32_t i = 0; i < POOL_N; i++) {
        double u1 = philox_uniform(7, i, 1, 0) + 1.0 / 33554432.0;
        double u2 = philox_uniform(7, i, 2, 0);
        pool[i] = (float)(2.5 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    for (int r = 0; r < rows; r++) {
        float *row = z + (size_t)r * V;
        uint32_t start = (uint32_t)r * 40503u, stride = 2u * (uint32_t)r + 1u;
        for (int i = 0; i < V; i++)
            row[i] = pool[(start + (uint32_t)i * stride) & (POOL_N - 1)];
        for (int j = 0; j < 8; j++)
            row[(int)(((long long)j * 7919 + (long long)r * 104729) % V)] = 20.0f - 0.7f * j;
    }
    free(pool);
    return 0;
}

static int apply(struct sampler_settings *out, const struct chain_case *c, struct err *e)
{
    struct settings s;
    settings_defaults(&s);
    for (int i = 0; c->settings[i]; i += 2)
        if (settings_set(&s, c->settings[i], c->settings[i + 1], e) < 0)
            return -1;
    s.sampler.seed = 42;
    *out = s.sampler;
    return 0;
}

/* Medians of the device and wall time of sampling B rows, in microseconds. */
static int time_sampler(struct backend *b, const struct sampler_settings *s, int B, int warmup,
                        int rounds, struct backend_res *res, double *dev_us, double *wall_us,
                        struct err *e)
{
    struct backend_req req[BACKEND_MAX_BATCH];
    for (int i = 0; i < B; i++)
        req[i] = (struct backend_req){ .s = *s, .step = 1, .row = (uint32_t)i, .n_top = N_TOP };
    double dev[ROUNDS], wall[ROUNDS];
    for (int r = 0; r < warmup + rounds; r++) {
        if (backend_sample(b, req, B, res, e) < 0)
            return -1;
        if (r >= warmup) {
            dev[r - warmup] = b->kernel_ms * 1e3;
            wall[r - warmup] = b->wall_ms * 1e3;
        }
    }
    *dev_us = bench_median(dev, rounds);
    *wall_us = bench_median(wall, rounds);
    return 0;
}

/* The sampler table for the batches given; (b)'s times at batch 1 and 256
 * into t_b1 and t_b256 (NAN when not measured). */
static int sampler_table(struct backend *b, const int *batches, int n_batches, int warmup,
                         int rounds, double *t_b1, double *t_b256)
{
    struct err e;
    int max_b = batches[n_batches - 1];
    float *z = malloc((size_t)max_b * V_BENCH * sizeof *z);
    struct backend_res *res = malloc((size_t)max_b * sizeof *res);
    *t_b1 = *t_b256 = NAN;
    if (!z || !res || make_rows(z, max_b, V_BENCH) < 0) {
        fprintf(stderr, "bench-gpu: out of memory for %d rows of %d logits\n", max_b, V_BENCH);
        free(z);
        free(res);
        return -1;
    }
    int rc = -1;
    if (backend_set_logits(b, z, max_b, V_BENCH, &e) < 0)
        goto out;
    printf("%s sampler, V = %d, one row per request (each its own), %d top rows back: medians of "
           "%d runs\n",
           b->ops->name, V_BENCH, N_TOP, rounds);
    /* The CPU backend's kernel_ms is its compute time. */
    int cpu = b->ops == &backend_cpu_ops;
    printf("%-36s %5s %13s %13s %13s\n", "chain", "batch", cpu ? "compute us" : "device us",
           "us per row", "wall us");
    for (int c = 0; c < N_CASES; c++) {
        struct sampler_settings s;
        if (apply(&s, &CASES[c], &e) < 0)
            goto out;
        for (int k = 0; k < n_batches; k++) {
            double dev, wall;
            if (time_sampler(b, &s, batches[k], warmup, rounds, res, &dev, &wall, &e) < 0)
                goto out;
            printf("%-36s %5d %13.1f %13.2f %13.1f\n", CASES[c].name, batches[k], dev,
                   dev / batches[k], wall);
            if (c == 1 && batches[k] == 1)
                *t_b1 = dev;
            if (c == 1 && batches[k] == 256)
                *t_b256 = dev;
        }
    }
    rc = 0;
out:
    if (rc < 0)
        fprintf(stderr, "bench-gpu: %s backend: %s\n", b->ops->name, e.msg);
    free(z);
    free(res);
    return rc;
}

static const char *verdict(int ok)
{
    return ok ? "PASS" : "MISS";
}

/* The LM head: device time of the GEMV for batches of 1, 8 and 64 hidden
 * vectors; GB/s = the weights' bytes / the time. Batch 1's fraction of the
 * peak into *frac (NAN when the peak is not known). */
static int head_table(struct backend *b, double *frac)
{
    static const int HB[] = { 1, 8, 64 };
    struct err e;
    struct model m;
    *frac = NAN;
    double t0 = bench_now_us();
    if (model_build(&m, V_BENCH, MODEL_DEFAULT_HIDDEN, MODEL_DEFAULT_SEED, &e) < 0) {
        fprintf(stderr, "bench-gpu: %s\n", e.msg);
        return -1;
    }
    double build_s = (bench_now_us() - t0) / 1e6;
    int d = m.d, rc = -1;
    float *h = malloc((size_t)64 * d * sizeof *h);
    if (!h) {
        fprintf(stderr, "bench-gpu: out of memory\n");
        goto out;
    }
    for (int i = 0; i < 64 * d; i++) {
        double u1 = philox_uniform(11, (uint32_t)i, 1, 0) + 1.0 / 33554432.0;
        double u2 = philox_uniform(11, (uint32_t)i, 2, 0);
        h[i] = (float)(3.0 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    if (backend_head(b, &m, &e) < 0)
        goto fail;
    double peak = backend_cuda_peak_gbps ? backend_cuda_peak_gbps(b) : 0.0;
    printf("LM head, V %d x d %d bf16 weights (%.2f GB; built on the host in %.1f s, made ready "
           "on the device in %.0f ms): medians of %d runs; peak bandwidth ",
           V_BENCH, d, (double)m.bytes / 1e9, build_s, b->wall_ms, HEAD_ROUNDS);
    if (peak > 0)
        printf("%.0f GB/s (device properties)\n", peak);
    else
        printf("unknown (backend_cuda_peak_gbps %s)\n",
               backend_cuda_peak_gbps ? "returned 0" : "is not in this build");
    printf("%5s %12s %12s %10s %9s\n", "batch", "device ms", "wall ms", "GB/s", "of peak");
    for (size_t k = 0; k < sizeof HB / sizeof HB[0]; k++) {
        double dev[HEAD_ROUNDS], wall[HEAD_ROUNDS];
        for (int r = 0; r < WARMUP + HEAD_ROUNDS; r++) {
            if (backend_logits(b, h, HB[k], &e) < 0)
                goto fail;
            if (r >= WARMUP) {
                dev[r - WARMUP] = b->kernel_ms;
                wall[r - WARMUP] = b->wall_ms;
            }
        }
        double md = bench_median(dev, HEAD_ROUNDS), mw = bench_median(wall, HEAD_ROUNDS);
        double gbps = (double)m.bytes / (md * 1e-3) / 1e9;
        printf("%5d %12.3f %12.3f %10.0f", HB[k], md, mw, gbps);
        if (peak > 0)
            printf(" %8.1f%%", 100.0 * gbps / peak);
        printf("\n");
        if (k == 0 && peak > 0)
            *frac = gbps / peak;
    }
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "bench-gpu: %s backend: %s\n", b->ops->name, e.msg);
out:
    free(h);
    backend_close(b); /* it borrows nothing from m, but close before freeing all the same */
    model_free(&m);
    return rc;
}

int main(void)
{
    char why[BACKEND_WHY_MAX];
    struct backend b;
    struct err e;
    double b1, b256;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!backend_cuda_probe(why, sizeof why)) {
        printf("bench-gpu: skipped: %s\n", why);
        printf("bench-gpu: CPU backend, for comparison (batches 1 and 8 only):\n");
        if (backend_open(&b, BACKEND_CPU, &e) < 0) {
            fprintf(stderr, "bench-gpu: %s\n", e.msg);
            return 1;
        }
        printf("device: %s\n", b.device);
        int rc = sampler_table(&b, BATCHES, 2, CPU_WARMUP, CPU_ROUNDS, &b1, &b256);
        backend_close(&b);
        return rc < 0 ? 1 : 0;
    }
    if (backend_open(&b, BACKEND_CUDA, &e) < 0 || backend_ready(&b, &e) < 0) {
        fprintf(stderr, "bench-gpu: the probe found a device, but: %s\n", e.msg);
        return 1;
    }
    printf("bench-gpu: %s (device time by CUDA events; wall time on the host)\n", b.device);
    if (sampler_table(&b, BATCHES, 4, WARMUP, ROUNDS, &b1, &b256) < 0) {
        backend_close(&b);
        return 1;
    }
    printf("\n");
    double frac;
    if (head_table(&b, &frac) < 0)
        return 1;
    printf("\nbench-gpu: targets (H200):\n");
    printf("  LM head, batch 1, at least %.0f%% of peak bandwidth: ", 100 * TARGET_HEAD);
    if (isnan(frac))
        printf("UNKNOWN (no peak)\n");
    else
        printf("%.1f%%: %s\n", 100 * frac, verdict(frac >= TARGET_HEAD));
    printf("  sampler (b), batch 1, under %.0f us: %.1f us: %s\n", TARGET_B1_US, b1,
           verdict(b1 < TARGET_B1_US));
    printf("  sampler (b), batch 256, under %.0f us: %.1f us: %s\n", TARGET_B256_US, b256,
           verdict(b256 < TARGET_B256_US));
    return 0;
}
