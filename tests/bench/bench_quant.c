/* bench_quant.c - the weight kernels' throughput on one core: quant_dot
 * over every row of a 2048 x 8192 matrix (an FFN matrix of Llama 3.2 1B)
 * with one vector (decode; "ms rows": quant_dot_rows over the matrix at
 * once, prefetching and several rows at a time), quant_dot_n with 8 and 32,
 * and quant_dot_rows_n with 32 as the forward pass calls it, 64 rows a
 * call ("GFLOP/s rows": prefill's products), in each type and on
 * each build this CPU runs. GB/s counts the matrix's
 * bytes once per product of the whole matrix. Not part of make bench:
 * make build/bench_quant (the rule for tests/bench/bench_*.c), or by hand,
 *   cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc tests/bench/bench_quant.c \
 *      src/model/quant*.c -lm -o build/bench_quant
 * An argument (portable, avx2, avx512) runs that build only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/quant.h"

#define ROWS      2048
#define COLS      8192
#define ROUNDS    15
#define TASK_ROWS 64 /* rows a call of quant_dot_rows_n: a task of the forward pass */

/* A fixed pseudo-random sequence (xorshift) in [-1, 1). */
static float next_value(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return (float)((double)(*s >> 11) / 4503599627370496.0 - 1.0);
}

/* This thread's CPU time in milliseconds: on a shared machine the time
 * other processes take the core away does not count. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The fastest of ROUNDS products of the whole matrix, in milliseconds of
 * CPU time (the least disturbed: caches are shared too). */
static double time_matrix(int path, int type, const unsigned char *w, size_t rb, const float *x,
                          int nx, float *out)
{
    double t[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = cpu_ms();
        if (nx == 0) /* quant_dot_rows: the whole matrix against one vector */
            quant_dot_rows_on(path, type, w, COLS, ROWS, x, out);
        for (int i = 0; nx < 0 && i < ROWS; i += TASK_ROWS) /* rows against -nx vectors */
            quant_dot_rows_n_on(path, type, w + (size_t)i * rb, COLS, TASK_ROWS, x, COLS, -nx,
                                out + i, ROWS);
        for (int i = 0; nx > 0 && i < ROWS; i++)
            quant_dot_n_on(path, type, w + (size_t)i * rb, COLS, x, COLS, nx, out + (size_t)i * 32);
        t[r] = cpu_ms() - t0;
    }
    double best = t[0];
    for (int r = 1; r < ROUNDS; r++)
        best = t[r] < best ? t[r] : best;
    return best;
}

int main(int argc, char **argv)
{
    static const int TYPES[] = { QT_Q8_0,   QT_Q4_K, QT_Q6_K, QT_Q5_K, QT_Q3_K, QT_Q2_K, QT_IQ4_XS,
                                 QT_IQ4_NL, QT_Q4_1, QT_Q5_0, QT_Q5_1, QT_Q4_0, QT_F16,  QT_BF16 };
    static const int NX[] = { 1, 8, 32 };
    float *m = malloc(sizeof(float) * ROWS * COLS);
    float *x = aligned_alloc(64, sizeof(float) * COLS * 32);
    float *out = malloc(sizeof(float) * ROWS * 32);
    if (!m || !x || !out)
        return 3;
    uint64_t s = 88172645463325252u;
    for (size_t i = 0; i < (size_t)ROWS * COLS; i++)
        m[i] = next_value(&s);
    for (size_t i = 0; i < (size_t)COLS * 32; i++)
        x[i] = next_value(&s);
    printf("%-6s %-9s %10s %9s %9s %9s %12s %12s %13s\n", "type", "path", "MB", "ms", "GB/s",
           "ms rows", "ms/vec nx=8", "ms/vec nx=32", "GFLOP/s rows");
    for (size_t t = 0; t < sizeof TYPES / sizeof TYPES[0]; t++) {
        size_t rb = quant_row_bytes(TYPES[t], COLS);
        unsigned char *w = malloc(rb * ROWS);
        if (!w)
            return 3;
        quant_quantize(TYPES[t], m, w, (int64_t)ROWS * COLS);
        char name[32];
        quant_name(TYPES[t], name, sizeof name);
        for (int path = QUANT_PORTABLE; path <= QUANT_AVX512; path++) {
            if (!quant_path_ok(path) || (argc > 1 && strcmp(argv[1], quant_path_name(path))))
                continue;
            double ms[3];
            for (int k = 0; k < 3; k++)
                ms[k] = time_matrix(path, TYPES[t], w, rb, x, NX[k], out) / NX[k];
            double mb = (double)(rb * ROWS) / 1e6,
                   rows = time_matrix(path, TYPES[t], w, rb, x, 0, out),
                   tile = time_matrix(path, TYPES[t], w, rb, x, -32, out);
            printf("%-6s %-9s %10.1f %9.2f %9.2f %9.2f %12.2f %12.2f %13.1f\n", name,
                   quant_path_name(path), mb, ms[0], mb / ms[0], rows, ms[1], ms[2],
                   2.0 * ROWS * COLS * 32 / tile / 1e6);
        }
        free(w);
    }
    free(m);
    free(x);
    free(out);
    return 0;
}
