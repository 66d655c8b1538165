/* quant_ggml.c - logitlab's weight types (model/quant.h) against ggml's own
 * C, byte for byte and float for float: for every block type, quant_dequant
 * on random blocks (every f16 field random too: subnormals, infinities, NaNs
 * and their payloads) against ggml's dequantize_row_*, and quant_quantize on
 * four kinds of data against the quantizer llama-quantize runs without an
 * importance matrix (quantize_row_*_ref; for IQ4_NL and IQ4_XS,
 * quantize_iq4_nl and quantize_iq4_xs). Prints a line per type and kind,
 * exits 1 on any difference. Built and run by quant_ggml.sh, against the
 * ggml-quants.c of the llama.cpp that fetch-llama.sh fetched, compiled on
 * its own without FMA contraction (doc/quant.md says why). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml-quants.h"
#include "model/quant.h"

/* What ggml-quants.c calls from the rest of ggml: aborts, and sizes that
 * only its row-wise entry points need (unused here). */
void ggml_abort(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ggml: %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    abort();
}

size_t ggml_row_size(enum ggml_type type, int64_t ne)
{
    (void)type, (void)ne;
    abort();
}

size_t ggml_type_size(enum ggml_type type)
{
    (void)type;
    abort();
}

const char *ggml_type_name(enum ggml_type type)
{
    (void)type;
    return "?";
}

/* ggml's entry points for one type, on its block struct blk, as functions
 * of bytes. */
#define DEQ(s, blk)                                                                                \
    static void deq_##s(const void *x, float *y, int64_t k)                                        \
    {                                                                                              \
        dequantize_row_##s((const blk *)x, y, k);                                                  \
    }
#define REF(s, blk)                                                                                \
    static void ref_##s(const float *x, void *y, int64_t k)                                        \
    {                                                                                              \
        quantize_row_##s##_ref(x, (blk *)y, k);                                                    \
    }
#define BOTH(s, blk) DEQ(s, blk) REF(s, blk)
BOTH(q8_0, block_q8_0)
BOTH(q4_0, block_q4_0)
BOTH(q4_1, block_q4_1)
BOTH(q5_0, block_q5_0)
BOTH(q5_1, block_q5_1)
BOTH(q2_K, block_q2_K)
BOTH(q3_K, block_q3_K)
BOTH(q4_K, block_q4_K)
BOTH(q5_K, block_q5_K)
BOTH(q6_K, block_q6_K)
DEQ(iq4_nl, block_iq4_nl)
DEQ(iq4_xs, block_iq4_xs)

/* llama-quantize's IQ4 quantizers (the _ref of IQ4_NL skips their search). */
static void ref_iq4_nl(const float *x, void *y, int64_t k)
{
    quantize_iq4_nl(x, y, 1, k, NULL);
}

static void ref_iq4_xs(const float *x, void *y, int64_t k)
{
    quantize_iq4_xs(x, y, 1, k, NULL);
}

#define ROW(T, s)                                                                                  \
    {                                                                                              \
        QT_##T, deq_##s, ref_##s                                                                   \
    }
static const struct {
    int type;
    void (*deq)(const void *, float *, int64_t);
    void (*quant)(const float *, void *, int64_t);
} TYPES[] = {
    ROW(Q8_0, q8_0), ROW(Q4_0, q4_0),     ROW(Q4_1, q4_1), ROW(Q5_0, q5_0),
    ROW(Q5_1, q5_1), ROW(IQ4_NL, iq4_nl), ROW(Q2_K, q2_K), ROW(Q3_K, q3_K),
    ROW(Q4_K, q4_K), ROW(Q5_K, q5_K),     ROW(Q6_K, q6_K), ROW(IQ4_XS, iq4_xs),
};
#define NTYPES ((int)(sizeof TYPES / sizeof TYPES[0]))

/* xorshift64: the same blocks on every run. */
static uint64_t next_u64(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Uniform in [-1, 1). */
static float next_float(uint64_t *s)
{
    return (float)((double)(next_u64(s) >> 11) / 4503599627370496.0 - 1.0);
}

/* Data of kind k: uniform; blocks of different spreads and offsets; sums of
 * four uniforms (near normal, as trained weights); quarters with zeros and
 * ties. */
static float datum(int k, int64_t i, uint64_t *s)
{
    float v = next_float(s), sum = 0.0f;
    switch (k) {
    case 0:
        return v;
    case 1:
        return v * ldexpf(1, (int)(next_u64(s) % 9) - 4) + ((i / 256) % 3 == 0 ? 0.3f : 0.0f);
    case 2:
        for (int j = 0; j < 4; j++)
            sum += next_float(s);
        return sum * 0.02f;
    }
    return next_u64(s) % 4 == 0 ? 0.0f : (float)((int)(next_u64(s) % 7) - 3) * 0.25f;
}

/* Floats that differ in their bits (a NaN is equal to a NaN of the same bits only). */
static int64_t float_diffs(const float *a, const float *b, int64_t n)
{
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++)
        d += memcmp(a + i, b + i, sizeof *a) != 0;
    return d;
}

static int check_type(int t, int nblk, uint64_t *s)
{
    const struct qtype_info *q = quant_info(TYPES[t].type);
    int64_t n = (int64_t)nblk * q->block;
    size_t bytes = (size_t)nblk * (size_t)q->bytes;
    unsigned char *mine = malloc(bytes), *theirs = malloc(bytes);
    float *x = malloc((size_t)n * sizeof *x), *a = malloc((size_t)n * sizeof *a);
    float *b = malloc((size_t)n * sizeof *b);
    if (!mine || !theirs || !x || !a || !b)
        return fprintf(stderr, "quant_ggml: out of memory\n"), 1;
    for (size_t i = 0; i < bytes; i++)
        mine[i] = (unsigned char)next_u64(s);
    quant_dequant(TYPES[t].type, mine, a, n);
    TYPES[t].deq(mine, b, n);
    int64_t d = float_diffs(a, b, n);
    int bad = d != 0;
    printf("%-6s dequantize: %lld of %lld floats differ from ggml's\n", q->name, (long long)d,
           (long long)n);
    for (int k = 0; k < 4; k++) {
        for (int64_t i = 0; i < n; i++)
            x[i] = datum(k, i, s);
        quant_quantize(TYPES[t].type, x, mine, n);
        TYPES[t].quant(x, theirs, n);
        int64_t db = 0;
        for (size_t i = 0; i < bytes; i++)
            db += mine[i] != theirs[i];
        printf("%-6s quantize, data %d: %lld of %zu bytes differ from ggml's\n", q->name, k,
               (long long)db, bytes);
        bad |= db != 0;
    }
    free(mine), free(theirs), free(x), free(a), free(b);
    return bad;
}

int main(int argc, char **argv)
{
    int nblk = argc > 1 ? atoi(argv[1]) : 4000, bad = 0;
    uint64_t s = 88172645463325252ull;
    if (nblk < 1)
        return fprintf(stderr, "usage: quant_ggml [BLOCKS]\n"), 2;
    for (int t = 0; t < NTYPES; t++)
        bad |= check_type(t, nblk, &s);
    printf("quant_ggml: %s\n", bad ? "DIFFERENCES" : "every type the same as ggml's");
    return bad;
}
