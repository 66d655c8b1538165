/* quant.h - the weight types of GGUF files, one table (quant.c): how many
 * values a block holds and how many bytes it takes, how a block turns back
 * into floats, the dot product of a stored row with float vectors (the
 * weights are dequantized inside it, never into a copy of the row), and the
 * reverse (float to blocks), which the tests' own GGUF writer needs.
 *
 * The numbers are ggml's type ids, as a GGUF file stores them. The block
 * layouts are ggml's (doc/quant.md gives them in words); dequantizing is
 * exact: every stored value becomes the float ggml's dequantize_row_* gives
 * (for every type here each weight is a product of small integers and f16
 * scales that float holds exactly, but where an offset is added, Q4_1's and
 * Q5_1's minimum, or subtracted, the Q2_K, Q4_K and Q5_K minimum: with one
 * rounding, as ggml does), so a product of dequantized rows computed in
 * double is the exact reference the model tests compare with.
 *
 * The dot products come in three builds of one specification (quant.c says
 * it in full): a portable one in plain C (fmaf, emulated where the build
 * has no FMA instruction: base/softfma.h), one for x86-64 CPUs with AVX2,
 * FMA and F16C (quant_avx2.c, quant_avx2_low.c: a decoder and a one-vector
 * product of its own for every type), and that one with AVX-512 code for
 * Q4_K's decoder and one-vector product, the direct form's several
 * vectors, and the rows against vectors of prefill (quant_avx512.c),
 * chosen at run time.
 * All perform the same float operations in the same order, so they give
 * the same bits; so do quant_dot, quant_dot_n, quant_dot_rows and
 * quant_dot_rows_n, for every vector.
 */
#ifndef LOGITLAB_QUANT_H
#define LOGITLAB_QUANT_H

#include <stddef.h>
#include <stdint.h>

enum qtype {
    QT_F32 = 0,
    QT_F16 = 1,
    QT_Q4_0 = 2,
    QT_Q4_1 = 3,
    QT_Q5_0 = 6,
    QT_Q5_1 = 7,
    QT_Q8_0 = 8,
    QT_Q2_K = 10,
    QT_Q3_K = 11,
    QT_Q4_K = 12,
    QT_Q5_K = 13,
    QT_Q6_K = 14,
    QT_IQ4_NL = 20,
    QT_IQ4_XS = 23,
    QT_BF16 = 30,
};

#define QUANT_MAX_TYPE 64 /* type ids at or above this are not ggml's */

/* One supported type. */
struct qtype_info {
    int id;           /* enum qtype */
    const char *name; /* "Q4_K", as llama.cpp names it */
    int block;        /* values per block (1 for F32, F16, BF16) */
    int bytes;        /* bytes per block */
    int scale_at[2];  /* byte offsets of its f16 scales in a block, -1 for none */
};

/* The supported type with id type, or NULL. */
const struct qtype_info *quant_info(int type);

/* A type's name for messages, supported or not: "Q4_K", "Q2_K" (a ggml
 * type logitlab does not read), "type 99" (none of ggml's) -- into buf. */
const char *quant_name(int type, char *buf, size_t n);

/* "F32, F16, BF16, Q8_0, Q4_0, Q4_1, ..., Q6_K, IQ4_XS": what a refusal
 * lists (blocks of 32 first, then of 256). */
const char *quant_supported_list(void);

/* Bytes that n values of type take; n must be a multiple of its block.
 * 0 for an unsupported type or an n that is not (or is negative). */
size_t quant_row_bytes(int type, int64_t n);

/* The first block of the n values at data (n a multiple of the block)
 * whose f16 scale is NaN or infinite -- for F32, F16 and BF16 the first
 * value that is --, or -1 when there is none: ggml would turn every weight
 * of such a block into NaN or infinity. */
int64_t quant_first_bad_block(int type, const void *data, int64_t n);

/* out[0..n) = the n values stored at row (n a multiple of the block). */
void quant_dequant(int type, const void *row, float *out, int64_t n);

/* sum_i row[i] * x[i] over n values (n a multiple of the block), the
 * weights dequantized on the way, in float with a fixed order (the same
 * bits on every call and on either build). With w the values quant_dequant
 * gives, u = 2^-24 and k = n/32 + 10, the result is within
 * gamma_k sum_i |w_i x_i| of the exact sum, gamma_k = k u / (1 - k u) (no
 * product meets more than k roundings; quant.c counts them: n/32 + 6 for
 * the types that add an offset or none, at most n/64 + 8 for those with
 * a scale per group). An unsupported type gives 0. */
float quant_dot(int type, const void *row, const float *x, int64_t n);

/* The same product for nx vectors at once (prefill, a batch of heads):
 * out[j] = quant_dot(type, row, x + j * x_stride, n) for j < nx, bit for
 * bit, but each block of the row is dequantized once for every
 * QUANT_DOT_N_TILE vectors instead of once per vector, and the AVX2 build
 * multiplies two vectors per load of the weights. Past a few vectors the
 * time goes to reading x (nx * n floats per row, from L2 once they pass
 * L1): vectors 64-byte aligned help. */
void quant_dot_n(int type, const void *row, int64_t n, const float *x, int64_t x_stride, int nx,
                 float *out);

#define QUANT_DOT_N_TILE 32

/* Rows against vectors (prefill): out[j * out_stride + i] =
 * quant_dot(type, rows + i * quant_row_bytes(type, n), x + j * x_stride, n)
 * for i < nrows, j < nx, bit for bit, on a named path. Each span of the
 * rows (256 values) is dequantized once for every QUANT_DOT_N_TILE
 * vectors. The AVX2 build takes the rows QUANT_TILE_ROWS at a time against
 * each span of the vectors, so that the vectors, which quant_dot_n reads
 * again for every row (from L2, past a few of them: the bound of the
 * prefill's products), are read once for every QUANT_TILE_ROWS rows. The
 * AVX-512 build is a matrix product: the vectors copied once a k-block for
 * all the rows of the call (give it many: a task's), each tile of rows
 * decoded into a panel there, and register-blocked kernels of two rows a
 * register against twelve or six vectors. The operations of each (row,
 * vector) pair are quant_dot's in its order. */
#define QUANT_TILE_ROWS 4
void quant_dot_rows_n_on(int path, int type, const void *rows, int64_t n, int nrows, const float *x,
                         int64_t x_stride, int nx, float *out, int64_t out_stride);

/* Consecutive rows against one vector (decode, the head): out[i] =
 * quant_dot(type, rows + i * quant_row_bytes(type, n), x, n) for i < nrows,
 * bit for bit. Past the arithmetic it asks the CPU for the next row's bytes
 * while it multiplies the current one (a software prefetch): a matrix far
 * larger than the caches streams from memory in 4 KiB pages, and the
 * hardware's own prefetcher stops at each page's end, so without it a
 * core waits on a page walk and a cache miss every 4 KiB. It may touch up
 * to a row past the last one (a prefetch never faults). */
void quant_dot_rows(int type, const void *rows, int64_t n, int nrows, const float *x, float *out);

/* The same on a named path (which must be quant_path_ok). */
void quant_dot_rows_on(int path, int type, const void *rows, int64_t n, int nrows, const float *x,
                       float *out);

/* Asks the CPU to bring bytes [p, p + bytes) towards its caches (a hint:
 * no effect on any result, none where the compiler has no prefetch). */
void quant_prefetch(const void *p, size_t bytes);

/* The builds of the dot products. quant_dot, quant_dot_n and quant_dot_rows
 * use quant_best_path's; the tests and the benchmark name one. */
enum quant_path {
    QUANT_PORTABLE = 0, /* plain C: every CPU */
    QUANT_AVX2 = 1,     /* x86-64 with AVX2, FMA and F16C (2013 on) */
    QUANT_AVX512 = 2,   /* AVX2's, plus AVX-512F: Q4_K's decoder and one-vector product,
                           the direct form's (F32, F16, BF16, Q4_1, Q5_1, Q2_K, Q4_K, Q5_K)
                           products of several vectors, prefill's matrix product */
};

/* The path quant_dot takes: the best this CPU runs, up to the vector path's
 * (base/vecpath.h: LOGITLAB_VECTOR=avx2 takes QUANT_AVX2, baseline
 * QUANT_PORTABLE). It asks the environment: a loop over rows asks once,
 * and names the path to quant_dot_n_on or quant_dot_rows_on. */
int quant_best_path(void);

/* 1 when this build and this CPU can run path. */
int quant_path_ok(int path);

/* "portable", "avx2", "avx512". */
const char *quant_path_name(int path);

/* quant_dot_n on a named path (which must be quant_path_ok). */
void quant_dot_n_on(int path, int type, const void *row, int64_t n, const float *x,
                    int64_t x_stride, int nx, float *out);

/* out = the blocks that store in[0..n) (n a multiple of the block, in[]
 * finite), by ggml's reference rounding: quantize_row_*_ref, the same
 * searches for the K types (make_qkx2_quants for the scale and minimum of
 * each Q2_K / Q4_K / Q5_K sub-block, make_q3_quants for Q3_K,
 * make_qx_quants for Q6_K), and for IQ4_NL and IQ4_XS the search that
 * llama-quantize runs without an importance matrix (quantize_iq4_nl,
 * quantize_iq4_xs), in the same float operations, so the bytes are those
 * ggml's C writes when it is built without FMA contraction (checked on
 * 4,000 blocks of each type against llama.cpp de3ff815's ggml-quants.c;
 * doc/quant.md). F16 and BF16 round to nearest even. */
void quant_quantize(int type, const float *in, void *out, int64_t n);

/* Half-precision conversions, IEEE binary16 and bfloat16. To float: exact.
 * From float: to nearest, ties to even (overflow to infinity; at most half
 * the smallest subnormal to zero; bfloat16 keeps float's subnormals). A NaN
 * stays a NaN, made quiet. */
float quant_f16_to_f32(uint16_t h);
uint16_t quant_f32_to_f16(float f);
float quant_bf16_to_f32(uint16_t h);
uint16_t quant_f32_to_bf16(float f);

#endif
