/* gpu_model.h - the bytes each CUDA kernel of gpu/ moves
 * through the device's global memory, and the floor in time those bytes
 * imply at a bandwidth: bench-gpu prints them beside the measurement, so
 * that the first run on a device shows where each kernel stands against
 * its floor, and a run without one still shows the model. It describes the
 * kernels as they are written: change it with them.
 *
 * The full sampler's figure follows sample_kernel pass by pass, with the kept
 * share of each pass taken from the CPU's trace of the same row (the
 * kernel keeps the CPU's kept sets); the radix walks are taken at
 * MODEL_RADIX_LEVELS histogram levels and one collection, which is what
 * rows like a model's need (a bucket of at most 64 after 22 bits of the
 * key); rows that need more levels move more. */
#ifndef LOGITLAB_GPU_MODEL_H
#define LOGITLAB_GPU_MODEL_H

#include "core/sampler.h"

#define MODEL_H200_GBPS    4800.0 /* H200 SXM, HBM3e: NVIDIA's figure, when no device says its own */
#define MODEL_H200_SMS     132
#define MODEL_H200_SM_MHZ  1980 /* the SM's boost clock, when no device says its own */
#define MODEL_FP32_LANES   128  /* FP32 lanes per SM on sm_90 (H100, H200) */
#define MODEL_RADIX_LEVELS 2

/* Per token of a row (gpu/backend_cuda.cu's Row): the float logit, z' and
 * e as doubles, the mark byte. */
enum { B_LOGIT = 4, B_Z = 8, B_E = 8, B_MARK = 1 };

/* A pass that reads each mark and, for the share f of tokens it applies
 * to, n more bytes (the kernel branches on the mark before it reads z). */
static inline double model_marked(double f, double n)
{
    return B_MARK + f * n;
}

/* radix_pick over the share f of the row (kKept: mark then z; weighted:
 * e too), levels histograms and the collection of the last bucket. */
static inline double model_radix(double f, int weighted)
{
    double per = model_marked(f, B_Z + (weighted ? B_E : 0));
    return (MODEL_RADIX_LEVELS + 1) * per;
}

/* compute_exps: the max over z', then e = exp(z' - max) written. */
static inline double model_exps(void)
{
    return B_Z + B_Z + B_E;
}

/* Bytes per token of sample_kernel for one request whose CPU trace is t
 * (the same settings on the same row): the load, each active stage of the
 * chain in its order, the final statistics, the rows on screen and the
 * draw. */
static inline double model_sampler_per_token(const struct sampler_settings *s,
                                             const struct trace *t)
{
    double V = t->vocab_size, bytes = B_LOGIT + B_Z + B_MARK; /* the load */
    int e_valid = 0;
    for (int c = 0; c < t->n_stages; c++) {
        const struct stage_report *r = &t->stages[c];
        if (!r->active)
            continue;
        double f = r->in / V, after = (r->in - r->removed) / V;
        switch (r->stage) {
        case STAGE_PENALTY: /* a few window tokens; then the range check reads z' and marks */
            bytes += B_Z + B_MARK;
            e_valid = 0;
            break;
        case STAGE_TEMPERATURE:
            if (s->temperature == 0.0) { /* stage_greedy: the best, then the cut */
                bytes += 2 * model_marked(f, B_Z) + (f - after);
            } else { /* read and write z', with the largest |z'| */
                bytes += 2 * B_Z;
                e_valid = 0;
            }
            break;
        case STAGE_TOP_K: /* the count descent, then cut_after */
            bytes += model_radix(f, 0) + model_marked(f, B_Z) + (f - after);
            break;
        case STAGE_TOP_P: /* the exps, the kept mass, the 64 best, the cut */
            bytes += (e_valid ? 0 : model_exps()) + model_marked(f, B_E);
            bytes += (f * V > 64 ? model_radix(f, 0) : model_marked(f, B_Z + B_E));
            bytes += model_marked(f, B_Z) + (f - after);
            if ((r->in - r->removed) > 64) /* the cut lies past the 64: the weighted descent */
                bytes += model_radix(f, 1);
            e_valid = 1;
            break;
        case STAGE_MIN_P: /* the best kept, then the bar over the kept */
            bytes += 2 * model_marked(f, B_Z) + (f - after);
            break;
        default:
            break;
        }
    }
    bytes += (e_valid ? 0 : model_exps()) + B_E + B_Z + B_MARK; /* the final statistics */
    /* fill_rows: the finite count, then the count descent and the collection
     * over every finite z' (no mark read). */
    bytes += B_Z + (MODEL_RADIX_LEVELS + 1) * B_Z;
    return bytes;
}

/* list_kernel (gpu/list_kernel.cuh): pass 1 reads each logit (and its
 * penalty count, when penalties are on), pass 2 reads them twice more (it
 * counts each warp's candidates, then writes them in order); the list lives
 * in shared memory. A row it leaves to the full path costs this and then
 * sample_kernel's. */
static inline double model_list_per_token(int penalties)
{
    return 3.0 * (B_LOGIT + (penalties ? 4 : 0));
}

/* Blocks per row of the list path: list_parts in gpu/backend_cuda.cu (at
 * most 16 rows spread over the SMs, ceil(SMs / B) blocks each, no more
 * than the row has thousands of tokens; one block per row beyond). */
static inline int model_list_parts(int B, int V, int sms)
{
    if (B > 16 || sms <= 0)
        return 1;
    int parts = (sms + B - 1) / B, most = (V + 1023) / 1024;
    return parts < most ? parts : most < 1 ? 1 : most;
}

/* The two-pass design's floor (issue 15's sampler): the float logits read
 * twice, nothing per token written. */
static inline double model_sampler_floor_per_token(void)
{
    return 2.0 * B_LOGIT;
}

/* rmsnorm_kernel: h read, x written. */
static inline double model_norm_bytes(int d, int B)
{
    return 8.0 * (double)B * d;
}

/* gemv_kernel: every bf16 weight once (the tiles of a band run together),
 * the vectors once per band from L2, the logits written. */
static inline double model_gemv_bytes(int V, int d, int B)
{
    return 2.0 * V * (double)d + 4.0 * (double)B * V + 4.0 * (double)B * d;
}

/* gemv_kernel's arithmetic in lane operations: for each weight, its
 * conversion from bf16 and, for each vector, a multiply and an add (apart:
 * the build has --fmad=false, so that the sums are the CPU's). */
static inline double model_gemv_ops(int V, int d, int B)
{
    return (2.0 * B + 1.0) * V * (double)d;
}

/* The time ops lane operations take at the FP32 lanes' peak (sms SMs at
 * mhz), in microseconds: the floor that batches of several vectors meet
 * before the bytes' (batch 8 at V 128,256 x d 4,096 on an H200: 267 us
 * against the weights' 219 us). */
static inline double model_ops_us(double ops, int sms, int mhz)
{
    double lanes_per_us = (double)sms * MODEL_FP32_LANES * mhz;
    return lanes_per_us > 0 ? ops / lanes_per_us : 0.0;
}

/* backend_draws at V for n draws: the keys and ids written (draw_keys_kernel),
 * the radix sort of 64-bit keys with 32-bit ids (eight passes of eight bits,
 * each reading and writing both), the weights (order, z', e and the mark
 * read, two weights written), the two scans (read and write), and n binary
 * searches of about log2(V) reads in each of the two sums. */
static inline double model_draws_bytes(int V, int n)
{
    double lg = 0;
    for (int v = V; v > 1; v >>= 1)
        lg++;
    double per_token = (B_Z + 12) + 8 * 2 * 12 + (4 + B_Z + B_E + B_MARK + 16) + 2 * 16;
    return per_token * V + (double)n * 2 * (lg + 1) * 8;
}

/* The time bytes take at gbps, in microseconds. */
static inline double model_floor_us(double bytes, double gbps)
{
    return gbps > 0 ? bytes / (gbps * 1e3) : 0.0;
}

#endif
