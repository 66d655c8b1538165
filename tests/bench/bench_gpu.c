/* bench_gpu.c - the CUDA backend at real sizes (make bench-gpu): the sampler
 * at V = 128,256 for batches of 1 to 256 rows with four chains (one on flat
 * rows, where top-p's cut falls deep in the bulk), the LM head's RMSNorm and
 * GEMV apart, and the many draws. Beside each measurement (medians of the
 * device time by CUDA events) it prints the bytes the kernel moves and the
 * floor they imply at the peak bandwidth (gpu_model.h), and at the end
 * whether the targets are met (a miss is reported, not an error).
 * Without a CUDA device it prints the model at the H200's figures, says
 * "not measured: no device", and times the CPU backend for comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gpu_model.h"

#include "backend/backend.h"
#include "model/model.h"
#include "core/philox.h"
#include "core/sampler.h"
#include "core/settings.h"

/* What the CUDA backend exports for benchmarks; weak, so that a build
 * without it links (NULL). */
extern double backend_cuda_peak_gbps(const struct backend *b) __attribute__((weak));
extern void backend_cuda_figures(const struct backend *b, int *sm_mhz, int *mem_mhz, int *sms)
    __attribute__((weak));

#define V_BENCH        128256
#define N_TOP          16 /* top rows a request brings back, as the screen asks */
#define N_DRAWS        10000
#define WARMUP         5
#define ROUNDS         50
#define CPU_WARMUP     1
#define CPU_ROUNDS     11
#define HEAD_ROUNDS    30
#define POOL_N         (1u << 20)
#define TARGET_HEAD    0.90  /* of the peak bandwidth, batch 1 */
#define TARGET_B8      1.3   /* the head at batch 8, at most this many times batch 1 */
#define TARGET_B1_US   15.0  /* chain (b), batch 1, device time per step */
#define TARGET_B256_US 100.0 /* chain (b), batch 256 */
#define CHAIN_B        1     /* CASES' index of chain (b), which the targets name */

struct chain_case {
    const char *name;
    int flat;                 /* flat rows (a narrow bulk, no peak) instead of a model's */
    const char *settings[10]; /* name, value pairs, then NULL */
};

static const struct chain_case CASES[] = {
    { "(a) temperature 0.8", 0, { "temperature", "0.8", NULL } },
    { "(b) k 40, p 0.95, min-p 0.05, T 0.8",
      0,
      { "top-k", "40", "top-p", "0.95", "min-p", "0.05", "temperature", "0.8", NULL } },
    { "(c) top-p 0.95, T 0.8", 0, { "top-p", "0.95", "temperature", "0.8", NULL } },
    { "(d) flat rows, top-p 0.95, T 0.8", 1, { "top-p", "0.95", "temperature", "0.8", NULL } },
};
#define N_CASES ((int)(sizeof CASES / sizeof CASES[0]))

static const int BATCHES[] = { 1, 8, 64, 256 };
#define N_BATCHES ((int)(sizeof BATCHES / sizeof BATCHES[0]))
static const int HEAD_BATCHES[] = { 1, 2, 8, 64 };
#define N_HEAD ((int)(sizeof HEAD_BATCHES / sizeof HEAD_BATCHES[0]))

/* The device's figures, or for the model the H200's when there is none. */
struct device {
    struct backend *b; /* NULL: no device, model only */
    double gbps;       /* peak bandwidth the floors are taken at */
    int sms, sm_mhz;   /* the arithmetic's floor (gpu_model.h's model_ops_us) */
};

/* Rows like a model's, as in bench_sampler.c: a bulk normal of standard
 * deviation 2.5 and eight tokens at 15 to 20; or flat rows, a bulk of
 * standard deviation 0.05 and no peak. Each row its own (the bulk read from
 * a pool of normals at a row's own offset and stride). */
static int make_rows(float *z, int rows, int V, int flat)
{
    float *pool = malloc(POOL_N * sizeof *pool);
    if (!pool)
        return -1;
    double sd = flat ? 0.05 : 2.5;
    for (uint32_t i = 0; i < POOL_N; i++) {
        double u1 = philox_uniform(7, i, 1, 0) + 1.0 / 33554432.0;
        double u2 = philox_uniform(7, i, 2, 0);
        pool[i] = (float)(sd * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    for (int r = 0; r < rows; r++) {
        float *row = z + (size_t)r * V;
        uint32_t start = (uint32_t)r * 40503u, stride = 2u * (uint32_t)r + 1u;
        for (int i = 0; i < V; i++)
            row[i] = pool[(start + (uint32_t)i * stride) & (POOL_N - 1)];
        for (int j = 0; j < 8 && !flat; j++)
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

/* The model's bytes per row of sample_kernel for these settings on row 0,
 * from the CPU's trace of that row. */
static int sampler_model(const struct sampler_settings *s, const float *row0, double *per_row,
                         struct err *e)
{
    struct trace t;
    if (trace_init(&t, V_BENCH, e) < 0)
        return -1;
    struct sampler_input in = { .vocab_size = V_BENCH, .logits_f = row0, .step = 1 };
    int rc = sampler_run_fast(&in, s, &t, N_TOP, e);
    if (rc == 0)
        *per_row = model_sampler_per_token(s, &t) * V_BENCH;
    trace_free(&t);
    return rc;
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

/* A measured time beside the floor of the path that ran it ("list" or
 * "full"): "  12.3   4.5x list" (the CPU's time alone: the floors are the
 * device's), or with us < 0 the reason there is none. */
static void measured(double us, double floor_us, int cpu, const char *what)
{
    if (us < 0)
        printf("  %s\n", what);
    else if (cpu)
        printf(" %11.1f %9s\n", us, "-");
    else
        printf(" %11.1f %8.1fx %s\n", us, floor_us > 0 ? us / floor_us : 0.0, what);
}

/* One chain over the batches: the model, and the time where there is a
 * backend to run it. (b)'s device times at batch 1 and 256 into t_b. */
static int chain_rows(const struct device *D, struct backend *run, int c, const float *z,
                      int n_batches, int warmup, int rounds, struct backend_res *res, double t_b[2],
                      struct err *e)
{
    struct sampler_settings s;
    double per_row = 0.0;
    if (apply(&s, &CASES[c], e) < 0 || sampler_model(&s, z, &per_row, e) < 0)
        return -1;
    for (int k = 0; k < N_BATCHES; k++) {
        int B = BATCHES[k];
        if (run && k >= n_batches)
            break;
        double bytes = per_row * B, fl = model_floor_us(bytes, D->gbps);
        int blocks = B * model_list_parts(B, V_BENCH, D->sms);
        double share = (blocks < D->sms ? (double)blocks : (double)D->sms) / D->sms;
        double list = model_list_per_token(0) * V_BENCH * B, lf = model_floor_us(list, D->gbps);
        double two_pass = model_floor_us(model_sampler_floor_per_token() * V_BENCH * B, D->gbps);
        printf("%-36s %5d %8.1f %8.1f %9.1f %8.1f %9.1f %9.1f", CASES[c].name, B, list / 1e6, lf,
               bytes / 1e6, fl, lf / share, two_pass);
        if (!run) {
            measured(-1, 0, 0, "not measured: no device");
            continue;
        }
        double dev, wall;
        long by_full = run->by_full;
        if (time_sampler(run, &s, B, warmup, rounds, res, &dev, &wall, e) < 0)
            return -1;
        int full = run->by_full > by_full || run->ops == &backend_cpu_ops;
        measured(dev, full ? fl : lf, run->ops == &backend_cpu_ops, full ? "full" : "list");
        if (c == CHAIN_B && B == 1)
            t_b[0] = dev;
        if (c == CHAIN_B && B == 256)
            t_b[1] = dev;
    }
    return 0;
}

/* The sampler table: every chain over the batches, on rows of its kind; run
 * NULL prints the model alone. */
static int sampler_table(const struct device *D, struct backend *run, int n_batches, int warmup,
                         int rounds, double t_b[2])
{
    struct err e;
    int max_b = BATCHES[N_BATCHES - 1];
    float *z = malloc((size_t)max_b * V_BENCH * sizeof *z);
    struct backend_res *res = malloc((size_t)max_b * sizeof *res);
    int rc = -1, kind = -1;
    if (!z || !res) {
        fprintf(stderr, "bench-gpu: out of memory for %d rows of %d logits\n", max_b, V_BENCH);
        goto out;
    }
    printf("%s sampler, V = %d, one row per request (each its own), %d top rows back: ",
           run ? run->ops->name : "CUDA", V_BENCH, N_TOP);
    if (run)
        printf("medians of %d runs; ", rounds);
    printf("floors at %.0f GB/s.\n"
           "  list: list_kernel's bytes (gpu_model.h) and their floor at the peak; full: "
           "sample_kernel's,\n  the path a row too flat for the list takes; by blocks: the list "
           "at 1/%d of the peak per block\n  it runs on (a row over many blocks up to batch 16, "
           "one each beyond; launch latency not\n  counted); 2-pass: the logits read twice, the "
           "design's floor; the path measured is named\n  after its ratio\n",
           D->gbps, D->sms);
    printf("%-36s %5s %8s %8s %9s %8s %9s %9s %11s %9s\n", "chain", "batch", "list MB", "floor us",
           "full MB", "floor us", "by blocks", "2-pass us",
           run && run->ops == &backend_cpu_ops ? "compute us" : "device us", "of floor");
    for (int c = 0; c < N_CASES; c++) {
        if (CASES[c].flat != kind) { /* the rows of this chain's kind, on both sides */
            kind = CASES[c].flat;
            if (make_rows(z, max_b, V_BENCH, kind) < 0)
                goto out;
            if (run && backend_set_logits(run, z, max_b, V_BENCH, &e) < 0)
                goto fail;
        }
        if (chain_rows(D, run, c, z, n_batches, warmup, rounds, res, t_b, &e) < 0)
            goto fail;
    }
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "bench-gpu: %s\n", e.msg);
out:
    free(z);
    free(res);
    return rc;
}

/* Hidden vectors of standard deviation 3, n of them. */
static float *make_hidden(int n, int d)
{
    float *h = malloc((size_t)n * d * sizeof *h);
    for (int i = 0; h && i < n * d; i++) {
        double u1 = philox_uniform(11, (uint32_t)i, 1, 0) + 1.0 / 33554432.0;
        double u2 = philox_uniform(11, (uint32_t)i, 2, 0);
        h[i] = (float)(3.0 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    return h;
}

/* Medians of the RMSNorm's and the GEMV's device time for B vectors, ms. */
static int time_head(struct backend *b, const float *h, int B, double *norm_ms, double *gemv_ms,
                     struct err *e)
{
    double nm[HEAD_ROUNDS], gm[HEAD_ROUNDS];
    for (int r = 0; r < WARMUP + HEAD_ROUNDS; r++) {
        if (backend_logits(b, h, B, e) < 0)
            return -1;
        if (r >= WARMUP) {
            nm[r - WARMUP] = b->norm_ms;
            gm[r - WARMUP] = b->kernel_ms - b->norm_ms;
        }
    }
    *norm_ms = bench_median(nm, HEAD_ROUNDS);
    *gemv_ms = bench_median(gm, HEAD_ROUNDS);
    return 0;
}

/* Medians of the wall time of a step of B requests of chain (b), ms: as
 * one backend_step (on CUDA one graph, one wait) and as backend_logits
 * then backend_sample. */
static int time_step(struct backend *b, const float *h, int B, double *step_ms, double *two_ms,
                     struct err *e)
{
    struct sampler_settings s;
    if (apply(&s, &CASES[CHAIN_B], e) < 0)
        return -1;
    struct backend_req req[8];
    struct backend_res res[8];
    for (int i = 0; i < B; i++)
        req[i] = (struct backend_req){ .s = s, .step = 1, .row = (uint32_t)i, .n_top = N_TOP };
    double one[HEAD_ROUNDS], two[HEAD_ROUNDS];
    for (int r = 0; r < WARMUP + HEAD_ROUNDS; r++) {
        if (backend_step(b, h, B, req, res, e) < 0)
            return -1;
        double t = b->wall_ms;
        if (backend_logits(b, h, B, e) < 0)
            return -1;
        double t_head = b->wall_ms;
        if (backend_sample(b, req, B, res, e) < 0)
            return -1;
        if (r >= WARMUP) {
            one[r - WARMUP] = t;
            two[r - WARMUP] = t_head + b->wall_ms;
        }
    }
    *step_ms = bench_median(one, HEAD_ROUNDS);
    *two_ms = bench_median(two, HEAD_ROUNDS);
    return 0;
}

/* The whole step at batches 1 and 8, one submission against two calls. */
static int step_rows(const struct device *D, const float *h, struct err *e)
{
    static const int BS[2] = { 1, 8 };
    printf("whole step, chain (b), wall time (medians of %d runs): ", HEAD_ROUNDS);
    if (!D->b) {
        printf("not measured: no device\n");
        return 0;
    }
    for (int k = 0; k < 2; k++) {
        double one, two;
        if (time_step(D->b, h, BS[k], &one, &two, e) < 0)
            return -1;
        printf("%sbatch %d: backend_step %.1f us, logits then sample %.1f us (%.2fx)",
               k ? "; " : "", BS[k], one * 1e3, two * 1e3, one / two);
    }
    printf("\n");
    return 0;
}

/* One batch of the head: the model's bytes and floors, then the times. */
static int head_row(const struct device *D, const float *h, int d, int B, double *gemv_us,
                    struct err *e)
{
    double nb = model_norm_bytes(d, B), gb = model_gemv_bytes(V_BENCH, d, B);
    double nf = model_floor_us(nb, D->gbps), gf = model_floor_us(gb, D->gbps);
    double of = model_ops_us(model_gemv_ops(V_BENCH, d, B), D->sms, D->sm_mhz);
    printf("%5d %9.3f %9.1f %9.1f %9.1f", B, nb / 1e6, gb / 1e6, gf, of);
    gf = of > gf ? of : gf; /* "of floor": against the higher of the two */
    if (!D->b) {
        printf("  not measured: no device (RMSNorm floor %.2f us)\n", nf);
        *gemv_us = NAN;
        return 0;
    }
    double norm_ms, gemv_ms;
    if (time_head(D->b, h, B, &norm_ms, &gemv_ms, e) < 0)
        return -1;
    *gemv_us = gemv_ms * 1e3;
    double weights_gbps = 2.0 * V_BENCH * (double)d / (gemv_ms * 1e-3) / 1e9;
    printf(" %9.1f %9.1f %8.0f %7.1f%% %8.1fx\n", norm_ms * 1e3, gemv_ms * 1e3, weights_gbps,
           100.0 * weights_gbps / D->gbps, gemv_ms * 1e3 / gf);
    return 0;
}

/* The LM head at hidden 4,096: the RMSNorm and the GEMV apart for each
 * batch; the GEMV's times into gemv_us (NAN when not measured). */
static int head_table(const struct device *D, double gemv_us[N_HEAD])
{
    struct err e;
    int d = MODEL_DEFAULT_HIDDEN, rc = -1, built = 0;
    struct model m;
    float *h = make_hidden(HEAD_BATCHES[N_HEAD - 1], d);
    if (!h) {
        fprintf(stderr, "bench-gpu: out of memory\n");
        return -1;
    }
    if (D->b) {
        if (model_build(&m, V_BENCH, d, MODEL_DEFAULT_SEED, &e) < 0)
            goto fail;
        built = 1;
        if (backend_head(D->b, &m, &e) < 0)
            goto fail;
    }
    printf("LM head, V %d x d %d bf16 weights (%.2f GB): medians of %d runs; floors at %.0f "
           "GB/s,\n  and (ops us) for the multiplies, adds and conversions at %d SMs x %d FP32 "
           "lanes x %d MHz\n",
           V_BENCH, d, 2.0 * V_BENCH * d / 1e9, HEAD_ROUNDS, D->gbps, D->sms, MODEL_FP32_LANES,
           D->sm_mhz);
    printf("%5s %9s %9s %9s %9s %9s %9s %8s %8s %9s\n", "batch", "norm MB", "gemv MB", "floor us",
           "ops us", "norm us", "gemv us", "GB/s", "of peak", "of floor");
    for (int k = 0; k < N_HEAD; k++)
        if (head_row(D, h, d, HEAD_BATCHES[k], &gemv_us[k], &e) < 0)
            goto fail;
    if (step_rows(D, h, &e) < 0)
        goto fail;
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "bench-gpu: %s\n", e.msg);
out:
    free(h);
    if (built)
        model_free(&m);
    return rc;
}

/* The many draws of chain (b) on row 0: the chain, the sort, the weights,
 * the scans and the draws, as one device time. */
static int draws_row(const struct device *D)
{
    double bytes = model_draws_bytes(V_BENCH, N_DRAWS), fl = model_floor_us(bytes, D->gbps);
    printf("draws: %d from one row of %d (sort, weights, scans, searches): model %.1f MB, floor "
           "%.1f us;",
           N_DRAWS, V_BENCH, bytes / 1e6, fl);
    if (!D->b) {
        printf(" not measured: no device\n");
        return 0;
    }
    struct err e;
    struct sampler_settings s;
    float *z = malloc((size_t)V_BENCH * sizeof *z);
    int *kept = malloc(2 * (size_t)N_DRAWS * sizeof *kept), rc = -1;
    double t[ROUNDS];
    if (!z || !kept || make_rows(z, 1, V_BENCH, 0) < 0 || apply(&s, &CASES[CHAIN_B], &e) < 0 ||
        backend_set_logits(D->b, z, 1, V_BENCH, &e) < 0)
        goto out;
    struct backend_req req = { .s = s, .step = 1, .row = 0, .n_top = N_TOP };
    for (int r = 0; r < WARMUP + ROUNDS; r++) {
        if (backend_draws(D->b, &req, N_DRAWS, kept, kept + N_DRAWS, &e) < 0)
            goto out;
        if (r >= WARMUP)
            t[r - WARMUP] = D->b->kernel_ms * 1e3;
    }
    double us = bench_median(t, ROUNDS);
    printf(" device %.1f us, %.1fx the floor\n", us, us / fl);
    rc = 0;
out:
    if (rc < 0)
        printf(" failed\n");
    free(z);
    free(kept);
    return rc;
}

static const char *verdict(int ok)
{
    return ok ? "PASS" : "MISS";
}

/* The targets against what was measured (or the model's floors). */
static void targets(const struct device *D, const double t_b[2], const double gemv_us[N_HEAD])
{
    double gb1 = model_gemv_bytes(V_BENCH, MODEL_DEFAULT_HIDDEN, 1);
    printf("\nbench-gpu: targets (H200)%s:\n",
           D->b ? "" : ": not measured: no device; the model's floors only");
    if (!D->b) {
        printf("  LM head, batch 1, at least %.0f%% of peak: the floor is %.1f us\n",
               100 * TARGET_HEAD, model_floor_us(gb1, D->gbps));
        double b8 =
            model_ops_us(model_gemv_ops(V_BENCH, MODEL_DEFAULT_HIDDEN, 8), D->sms, D->sm_mhz);
        double r8 = b8 / model_floor_us(gb1, D->gbps);
        printf("  LM head, batch 8 at most %.1fx batch 1: the arithmetic's floor is %.1f us, "
               "%.2fx batch 1's floor (%s by the model)\n",
               TARGET_B8, b8, r8, verdict(r8 <= TARGET_B8));
        double l1 = model_floor_us(model_list_per_token(0) * V_BENCH, D->gbps);
        int p1 = model_list_parts(1, V_BENCH, D->sms);
        double b1 = l1 * D->sms / (p1 < D->sms ? p1 : D->sms);
        printf("  sampler (b), batch 1 under %.0f us, batch 256 under %.0f us: two-pass floors "
               "%.1f and %.1f us;\n    the list path by its bytes: batch 1 at least %.1f us "
               "(%d blocks: %s, five launches' latency aside), batch 256 at least %.1f us (%s)\n",
               TARGET_B1_US, TARGET_B256_US,
               model_floor_us(model_sampler_floor_per_token() * V_BENCH, D->gbps),
               model_floor_us(model_sampler_floor_per_token() * V_BENCH * 256, D->gbps), b1, p1,
               verdict(b1 < TARGET_B1_US), l1 * 256, verdict(l1 * 256 < TARGET_B256_US));
        return;
    }
    double frac = model_floor_us(gb1, D->gbps) / gemv_us[0];
    printf("  LM head, batch 1, at least %.0f%% of peak: %.1f%%: %s\n", 100 * TARGET_HEAD,
           100 * frac, verdict(frac >= TARGET_HEAD));
    printf("  LM head, batch 8 at most %.1fx batch 1: %.2fx: %s\n", TARGET_B8,
           gemv_us[2] / gemv_us[0], verdict(gemv_us[2] <= TARGET_B8 * gemv_us[0]));
    printf("  sampler (b), batch 1, under %.0f us: %.1f us: %s\n", TARGET_B1_US, t_b[0],
           verdict(t_b[0] < TARGET_B1_US));
    printf("  sampler (b), batch 256, under %.0f us: %.1f us: %s\n", TARGET_B256_US, t_b[1],
           verdict(t_b[1] < TARGET_B256_US));
}

/* No device: the model at the H200's figures, then the CPU backend's
 * sampler for comparison. */
static int without_device(const char *why)
{
    struct device D = { NULL, MODEL_H200_GBPS, MODEL_H200_SMS, MODEL_H200_SM_MHZ };
    double t_b[2] = { NAN, NAN }, gemv_us[N_HEAD];
    printf("bench-gpu: %s: the model at the H200's %.0f GB/s and %d SMs, not measured\n", why,
           D.gbps, D.sms);
    if (sampler_table(&D, NULL, 0, 0, 0, t_b) < 0)
        return 1;
    printf("\n");
    if (head_table(&D, gemv_us) < 0)
        return 1;
    printf("\n");
    draws_row(&D);
    targets(&D, t_b, gemv_us);
    struct backend b;
    struct err e;
    printf("\nbench-gpu: the CPU backend, for comparison (batches 1 and 8), floors as above:\n");
    if (backend_open(&b, BACKEND_CPU, &e) < 0) {
        fprintf(stderr, "bench-gpu: %s\n", e.msg);
        return 1;
    }
    printf("device: %s\n", b.device);
    int rc = sampler_table(&D, &b, 2, CPU_WARMUP, CPU_ROUNDS, t_b);
    backend_close(&b);
    return rc < 0 ? 1 : 0;
}

int main(void)
{
    char why[BACKEND_WHY_MAX];
    struct backend b;
    struct err e;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!backend_cuda_probe(why, sizeof why))
        return without_device(why);
    if (backend_open(&b, BACKEND_CUDA, &e) < 0 || backend_ready(&b, &e) < 0) {
        fprintf(stderr, "bench-gpu: the probe found a device, but: %s\n", e.msg);
        return 1;
    }
    struct device D = { &b, backend_cuda_peak_gbps ? backend_cuda_peak_gbps(&b) : 0.0, 0, 0 };
    int mem_mhz = 0;
    if (backend_cuda_figures)
        backend_cuda_figures(&b, &D.sm_mhz, &mem_mhz, &D.sms);
    printf("bench-gpu: %s, %d SMs, SM clock %d MHz, memory clock %d MHz, peak %.0f GB/s "
           "(device time by CUDA events)\n",
           b.device, D.sms, D.sm_mhz, mem_mhz, D.gbps);
    if (!(D.gbps > 0)) {
        D.gbps = MODEL_H200_GBPS;
        printf("bench-gpu: the device gave no peak bandwidth: floors at the H200's %.0f GB/s\n",
               D.gbps);
    }
    double t_b[2] = { NAN, NAN }, gemv_us[N_HEAD];
    int rc = sampler_table(&D, &b, N_BATCHES, WARMUP, ROUNDS, t_b);
    if (rc == 0) {
        printf("\n");
        rc = head_table(&D, gemv_us);
    }
    if (rc == 0) {
        printf("\n");
        rc = draws_row(&D);
    }
    if (rc == 0)
        targets(&D, t_b, gemv_us);
    backend_close(&b);
    return rc < 0 ? 1 : 0;
}
