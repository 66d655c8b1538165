// backend_cuda.cu - the CUDA backend (DESIGN.md section 3): the LM head as a
// bf16 GEMV over weights generated on the device, and the sampling chain of
// sampler_fast.c with one thread block per request row.
//
// The CPU fast path (src/sampler_fast.c) is the specification: the same
// stages in the chain's order, the same radix descent on the float bits of z'
// (11-bit digits at shifts 21 and 10, then the last 10 bits, counts and masses
// e^(z' - max) per bucket, walked from the top), the same candidate set of at
// most SMALL_SET tokens sorted outright, the same inclusive / strict targets,
// the same min-p bar. Per-token values are computed with the very operations
// of the CPU (fast_exp's polynomial, rule_key, the penalty rule), with every
// product written as __dmul_rn / __fmul_rn: nvcc would otherwise fuse a
// multiply and an add into one FMA, which gcc in ISO C mode never does, and
// the two would round differently. Where the CPU fuses on purpose (fast_exp
// calls fma), the device writes __fma_rn. Sums over many tokens are block
// reductions, so they add in another order than the CPU: they agree to a few
// units in the last place, which is what the checks' tolerances allow.
//
// Every entry point returns 0, or -1 with "CUDA: <call>: <reason>" in the
// struct err; nothing here exits, and nothing waits on a device flag.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

#include <cub/cub.cuh>

extern "C" {
#include "backend/backend.h"
#include "backend/backend_spec.h"
#include "base/err.h"
#include "model/model.h"
#include "core/sampler.h"
}
#include "core/fastexp.h"     // the constants and table of fast_exp (the function itself is host-only)
#include "model/lmhead_gen.h"  // HOSTDEV
#include "model/norm_tree.h"   // HOSTDEV
#include "core/philox.h"      // HOSTDEV
#include "core/sampler_rules.h" // HOSTDEV
#include "core/candidates.h"    // HOSTDEV

namespace {

// --- Constants shared with sampler_fast.c ----------------------------------

constexpr int kSmallSet = 64;          // SMALL_SET: a candidate set this small is sorted
constexpr int kTopPProbe = 64;         // TOP_P_PROBE
constexpr int kRadixBuckets = 2048;    // RADIX_BUCKETS
constexpr uint8_t kMarkKept = 0;       // MARK_KEPT; a removed token holds 1 + its stage
constexpr uint8_t kMarkMasked = TRACE_MASKED + 1;

constexpr int kThreads = 1024; // one block per request row
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFull = 0xffffffffu;
constexpr unsigned kGridCap = 65536; // blocks of a grid-stride launch (grid_for, weights_kernel)
constexpr int kDrawThreads = 256;    // a block of the draws' kernels

// The rows the kernels take (BACKEND_CUDA_MAX_VOCAB, backend.h): token ids
// and loop counters are int, and a loop's index passes the row's end by one
// step before the test stops it, so the last id plus the longest step must
// fit. backend.h says what else bounds V, each bound wider.
constexpr long long kMaxV = BACKEND_CUDA_MAX_VOCAB;
static_assert(kMaxV - 1 + (long long)kGridCap * kDrawThreads <= INT_MAX,
              "draw_keys_kernel and draw_weights_kernel step by a whole grid");
static_assert(kMaxV - 1 + kThreads <= INT_MAX,
              "a block's loops over its row (sample_kernel, list_kernel, pass2's chunks)");
static_assert((kMaxV + 63) / 64 * ((BACKEND_MAX_BATCH + 7) / 8) <= INT_MAX,
              "gemv_kernel's grid: bands of 64 (or 128) rows times at most 32 tiles of the batch");

// Row errors the kernel reports (the host words them as sampler_run_fast does).
// kErrRange: a z' left RULE_Z_LIMIT's range at error_stage (SAMPLER_AT_START,
// STAGE_PENALTY or STAGE_TEMPERATURE), as sampler_range_error words it.
enum { kErrNone = 0, kErrNaN = 1, kErrInf = 2, kErrNoFinite = 3, kErrRange = 4 };

// One request, flattened for the device.
struct RowParams {
    double temperature, top_p, min_p, alpha, frequency, presence, shift;
    double min_p_bar;      // rule_min_p_bar(min_p), found on the host with its libm
    uint64_t seed;
    int top_k, keep_ties, lesson_formula, penalty_active;
    int n_stages;
    int stage[STAGE_COUNT];
    uint32_t step, row; // the Philox counter; row is also the logits row
    int win_off, win_len; // the penalty window, in the concatenated contexts
    int n_top;
    int top_at; // where the row's best rows go in the batch's TopRow array
    int V;
    cand_plan plan; // list_kernel's (cand_plan_make)
    int list_ok;    // the plan was made: list_kernel may take the row
};

// One of the best rows of a request (backend_res.top), in a batch-wide
// array that holds each request's min(n_top, V) at its top_at: only the
// rows asked for come back, not BACKEND_MAX_TOP per request.
struct TopRow {
    double z, e;
    int id, mark;
};

// What a row gives back; the host turns it into a struct backend_res.
struct RowOut {
    int error, error_token, error_stage;
    double error_z, error_zmax; // the offending z', and the largest |z'| before T
    double error_logit;         // the offending token's logit, as given
    int id, sampled, kept_count, n_top;
    double u, max_z, sum_exp, kept_sum;
    double chosen_e; // e of the chosen token: its final probability is chosen_e / kept_sum
    double offset, kept_offset; // sum e (z - max) over all / kept tokens with e > 0
    int fallback; // list_kernel: the full kernel must run this row
    int n_cand;   // list_kernel: the list's length
};

// What the kernels rely on, checked where the constants are:
static_assert(kThreads == 32 * kWarps && kWarps <= 32,
              "block_sum_in and the warp-0 walks take one partial per warp, in one warp");
static_assert(kRadixBuckets == 1 << 11 && kRadixBuckets % 32 == 0,
              "level_of's digits are at most 11 bits; walk_buckets gives each lane nb / 32");
static_assert(kThreads >= kSmallSet, "sort_candidates ranks one candidate per thread");
static_assert(kTopPProbe <= kSmallSet && BACKEND_MAX_TOP <= kSmallSet,
              "best_k collects at most kSmallSet tokens: top-p's probe and the rows on screen");
static_assert(RULE_MASS_BITS + 5 < 64,
              "peer_sum adds 32 masses of at most 2^RULE_MASS_BITS units in 64 bits");
static_assert(TRACE_MASKED + 1 <= 255 && STAGE_COUNT < TRACE_MASKED + 1,
              "a mark byte holds 1 + a stage, and the masked mark above them all");

// --- Per-token arithmetic, operation for operation as on the CPU -----------

// fast_exp of fastexp.h: its fused multiply-adds as __fma_rn, and every
// other product an explicit round-to-nearest multiply so that no other FMA
// forms (the CPU builds it without contraction of its own).
__constant__ double DEV_FASTEXP_T[16] = FASTEXP_TABLE;

__device__ double dev_fast_exp(double x)
{
    double xc = x < FASTEXP_LOW ? FASTEXP_LOW : x > FASTEXP_HIGH ? FASTEXP_HIGH : x;
    double kd = __fma_rn(xc, FASTEXP_K_PER_LN2, FASTEXP_ROUND);
    uint64_t kbits = (uint64_t)__double_as_longlong(kd);
    kd = __dsub_rn(kd, FASTEXP_ROUND);
    double r = __fma_rn(kd, -FASTEXP_STEP_LO, __fma_rn(kd, -FASTEXP_STEP_HI, xc));
    double q = __fma_rn(FASTEXP_Q4, r, FASTEXP_Q3);
    q = __fma_rn(q, r, FASTEXP_Q2);
    q = __fma_rn(q, r, FASTEXP_Q1);
    q = __fma_rn(q, r, FASTEXP_Q0);
    double p = __fma_rn(__dmul_rn(r, r), q, r);
    uint64_t u = kbits & 0xFFFFFFFFu;
    uint64_t tbits = (uint64_t)__double_as_longlong(DEV_FASTEXP_T[u & 15]) + ((u >> 4) << 52);
    double t = __longlong_as_double((long long)tbits);
    double y = __fma_rn(t, p, t);
    return x < FASTEXP_LOW ? 0.0 : y;
}

// A 64-bit key that orders like the double z (-0 folded onto +0, which the
// rank order treats as equal): the descent's tie-breaking levels, and the
// sort of backend_draws.
__host__ __device__ inline uint64_t dkey(double z)
{
    if (z == 0.0)
        z = 0.0;
    uint64_t u;
    memcpy(&u, &z, sizeof u);
    return (u >> 63) ? ~u : (u | (1ull << 63));
}

// --- Block-wide helpers ----------------------------------------------------

struct Shared {
    uint32_t cnt[kRadixBuckets];
    // Bucket masses in fixed point (rule_mass), as two arrays: the atomics
    // add integers, so the sums are the same whatever the order.
    unsigned long long mlo[kRadixBuckets];
    uint32_t mhi[kRadixBuckets];
    double cz[kSmallSet], cw[kSmallSet]; // candidates as collected
    int cid[kSmallSet];
    double sz[kSmallSet], sw[kSmallSet]; // the same, in rank order
    int sid[kSmallSet];
    int top_id[BACKEND_MAX_TOP]; // the rows of the trace (fill_rows)
    double red_d[kWarps];
    int red_i[kWarps];
    int n_cand;
    int sel;
    rule_walk walk;
    int pick_id;
    int found, found_aux;
};
static_assert(sizeof(Shared) + sizeof(RowParams) <= 48 * 1024,
              "sample_kernel's static shared memory fits the 48 KB every device gives");

template <typename T> __device__ inline T warp_sum(T v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(kFull, v, o);
    return v;
}

// Every thread gets the sum; the order of additions is fixed, so a row gives
// the same sum on every run. red is the block's kWarps partial sums.
template <typename T> __device__ T block_sum_in(T v, T *red)
{
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    T t = 0;
    for (int w = 0; w < kWarps; w++)
        t += red[w];
    __syncthreads();
    return t;
}

__device__ double block_sum(double v, Shared &s)
{
    return block_sum_in(v, s.red_d);
}

__device__ int block_sum_int(int v, Shared &s)
{
    return block_sum_in(v, s.red_i);
}

// The block's smallest int and largest double, every thread getting it;
// red is the block's kWarps partials.
__device__ int block_min_in(int v, int *red)
{
    for (int o = 16; o > 0; o >>= 1)
        v = min(v, __shfl_xor_sync(kFull, v, o));
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    int t = INT_MAX;
    for (int w = 0; w < kWarps; w++)
        t = min(t, red[w]);
    __syncthreads();
    return t;
}

__device__ double block_max_in(double v, double *red)
{
    for (int o = 16; o > 0; o >>= 1) {
        double u = __shfl_xor_sync(kFull, v, o);
        v = u > v ? u : v;
    }
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    double t = -INFINITY;
    for (int w = 0; w < kWarps; w++)
        t = red[w] > t ? red[w] : t;
    __syncthreads();
    return t;
}

__device__ int block_min_int(int v, Shared &s)
{
    return block_min_in(v, s.red_i);
}

__device__ double block_max(double v, Shared &s)
{
    return block_max_in(v, s.red_d);
}

// Keeps in (z, id) the better of it and (z2, id2) in the rank order (the
// worse with worst); id -1 is "none".
__device__ inline void rank_merge(double &z, int &id, double z2, int id2, bool worst)
{
    if (id2 < 0)
        return;
    if (id < 0 || (worst ? rule_ranks_before(z, id, z2, id2) : rule_ranks_before(z2, id2, z, id))) {
        z = z2;
        id = id2;
    }
}

// The most likely kept token, ties to the lower id (alive_best), or with
// worst the last kept token in rank order (the draw's fallback).
__device__ int block_best_kept(const double *z, const uint8_t *mark, int V, bool worst, Shared &s)
{
    double bz = 0.0;
    int bid = -1;
    for (int i = threadIdx.x; i < V; i += kThreads)
        if (mark[i] == kMarkKept)
            rank_merge(bz, bid, z[i], i, worst);
    for (int o = 16; o > 0; o >>= 1) {
        double z2 = __shfl_xor_sync(kFull, bz, o);
        int id2 = __shfl_xor_sync(kFull, bid, o);
        rank_merge(bz, bid, z2, id2, worst);
    }
    if ((threadIdx.x & 31) == 0) {
        s.red_d[threadIdx.x >> 5] = bz;
        s.red_i[threadIdx.x >> 5] = bid;
    }
    __syncthreads();
    double tz = 0.0;
    int tid = -1;
    for (int w = 0; w < kWarps; w++)
        rank_merge(tz, tid, s.red_d[w], s.red_i[w], worst);
    __syncthreads();
    return tid;
}

// The sum of x (rule_mass units, at most 2^58 each, so 32 of them fit) over
// the lanes of a warp that share a histogram bucket (peers, from
// __match_any_sync), in the lane of the lowest of them: a binary tree over
// the peers' ranks, so that a bucket many tokens fall in takes one
// shared-memory atomic per warp instead of one per token. Every lane of the
// warp must call it.
__device__ unsigned long long peer_sum(unsigned peers, unsigned long long x)
{
    int lane = threadIdx.x & 31;
    int rank = __popc(peers & ((1u << lane) - 1u));
    unsigned above_me = peers & ~((2u << lane) - 1u); // lane 31: 2u << 31 is 0, so none
    for (int step = 1; step < 32; step <<= 1) {
        int src = lane;
        if ((rank & (2 * step - 1)) == 0) {
            unsigned a = above_me;
            for (int j = 1; j < step && a; j++)
                a &= a - 1;
            if (a)
                src = __ffs(a) - 1;
        }
        unsigned long long t = __shfl_sync(kFull, x, src);
        if (src != lane)
            x += t;
    }
    return x;
}

// --- The radix descent (radix_pick) ------------------------------------------

// Levels 0-2 are radix_pick's: the 32-bit rule_key of z' (digits at shifts
// 21, 10, 0). A bucket still larger than SMALL_SET after them holds tokens
// whose z' round to one float; the CPU sorts such a bucket outright, which a
// block cannot do in shared memory, so the descent goes on over the exact
// double (levels 3-8) and then the id (levels 9-11, lower id first): the same
// rank order, so the same token and the same counts.
struct Level {
    int key; // 0: rule_key, 1: dkey, 2: ~id
    int shift, bits;
};

__device__ inline Level level_of(int level)
{
    switch (level) {
    case 0: return { 0, 21, 11 };
    case 1: return { 0, 10, 11 };
    case 2: return { 0, 0, 10 };
    case 3: return { 1, 53, 11 };
    case 4: return { 1, 42, 11 };
    case 5: return { 1, 31, 11 };
    case 6: return { 1, 20, 11 };
    case 7: return { 1, 9, 11 };
    case 8: return { 1, 0, 9 };
    case 9: return { 2, 21, 11 };
    case 10: return { 2, 10, 11 };
    default: return { 2, 0, 10 };
    }
}
constexpr int kLevels = 12;

// The digits chosen so far: a token is a candidate when its keys agree with
// them under the masks.
struct Prefix {
    uint32_t fm, fs;
    uint64_t dm, ds;
    uint32_t im, is;
};

enum Pred { kKept, kFinite }; // the set a selection walks: kept tokens, or every z' > -inf

struct Row {
    int V;
    double *z, *e;
    uint8_t *mark;
    Shared *s;
};

__device__ inline bool in_set(const Row &r, int i, int pred)
{
    return pred == kKept ? r.mark[i] == kMarkKept : r.z[i] != -INFINITY;
}

__device__ inline bool prefix_match(const Prefix &p, double z, int i, uint32_t &fk, uint64_t &dk,
                                    uint32_t &ik)
{
    fk = rule_key(z);
    dk = dkey(z); // needed from level 3 on, where no double digit is fixed yet
    ik = ~(uint32_t)i;
    return (fk & p.fm) == p.fs && (dk & p.dm) == p.ds && (ik & p.im) == p.is;
}

__device__ inline rule_mass bucket_mass(const Shared &s, int b)
{
    return { s.mlo[b], s.mhi[b] };
}

__device__ inline rule_mass shfl_up_mass(rule_mass m, int o)
{
    return { __shfl_up_sync(kFull, (unsigned long long)m.lo, o),
             __shfl_up_sync(kFull, (unsigned long long)m.hi, o) };
}

// Warp 0 walks the buckets [0, nb) from the top, from the running totals
// before, to the first non-empty bucket at which the total reaches the
// target; the result goes to s.sel (-1: never) and s.walk. Each
// lane first adds up 1/32 of the buckets; the first lane whose share reaches
// the target then walks its buckets one by one, as radix_pick does. The
// masses are exact (rule_mass), so the totals at each bucket are the CPU's
// whatever the grouping.
__device__ void walk_buckets(Shared &s, int nb, bool weighted, bool strict, double target,
                             rule_walk before)
{
    if (threadIdx.x >= 32)
        return;
    int lane = threadIdx.x;
    int per = nb / 32;
    int hi = nb - 1 - lane * per;
    uint32_t c = 0;
    rule_mass m = { 0, 0 };
    for (int j = 0; j < per; j++) {
        c += s.cnt[hi - j];
        m = rule_mass_add2(m, bucket_mass(s, hi - j)); // zero when not weighted
    }
    uint32_t ci = c;
    rule_mass mi = m;
    for (int o = 1; o < 32; o <<= 1) {
        uint32_t c2 = __shfl_up_sync(kFull, ci, o);
        rule_mass m2 = shfl_up_mass(mi, o);
        if (lane >= o) {
            ci += c2;
            mi = rule_mass_add2(mi, m2);
        }
    }
    uint32_t ce = __shfl_up_sync(kFull, ci, 1);
    rule_mass me = shfl_up_mass(mi, 1);
    if (lane == 0) {
        ce = 0;
        me = { 0, 0 };
    }
    rule_walk w = { before.count + (int)ce, rule_mass_add2(before.mass, me) };
    rule_walk end = { w.count + (int)c, rule_mass_add2(w.mass, m) };
    bool hit = c > 0 && rule_reached(weighted, strict, end.count, rule_mass_value(end.mass), target);
    unsigned ballot = __ballot_sync(kFull, hit);
    if (ballot == 0) {
        if (lane == 31) {
            s.sel = -1;
            s.walk = end;
        }
        return;
    }
    if (lane != __ffs(ballot) - 1)
        return;
    int sel = -1;
    for (int b = hi; b >= 0; b--) {
        uint32_t n = s.cnt[b];
        if (n > 0 && rule_walk_step(&w, (int)n, bucket_mass(s, b), weighted, strict, target)) {
            sel = b;
            break;
        }
    }
    s.sel = sel;
    s.walk = w;
}

// Sorts the n collected candidates (s.cz/cw/cid) into rank order
// (s.sz/sw/sid): each is placed at the count of those ranked before it.
__device__ void sort_candidates(Shared &s, int n)
{
    int t = threadIdx.x;
    if (t < n) {
        double zt = s.cz[t];
        int it = s.cid[t], rank = 0;
        for (int j = 0; j < n; j++)
            rank += rule_ranks_before(s.cz[j], s.cid[j], zt, it);
        s.sz[rank] = zt;
        s.sw[rank] = s.cw[t];
        s.sid[rank] = it;
    }
    __syncthreads();
}

// Appends token i to the candidates. Never more than kSmallSet arrive: a
// bucket is collected only once it holds at most kSmallSet tokens, and best_k
// asks for at most kSmallSet (the static_asserts above); the slot test keeps
// shared memory safe all the same.
__device__ inline void collect(Shared &s, double z, double w, int i)
{
    int slot = atomicAdd(&s.n_cand, 1);
    if (slot < kSmallSet) {
        s.cz[slot] = z;
        s.cw[slot] = w;
        s.cid[slot] = i;
    }
}

// One level's histogram into s.cnt (and, weighted, the masses into
// s.mlo/s.mhi): the digits at L of the candidates that match pre. The loop
// runs the same number of times in every lane, for __match_any_sync.
__device__ void level_histogram(const Row &r, int pred, bool weighted, const Prefix &pre,
                                const Level &L)
{
    Shared &s = *r.s;
    int lane = threadIdx.x & 31, nb = 1 << L.bits;
    for (int b = threadIdx.x; b < nb; b += kThreads) {
        s.cnt[b] = 0;
        s.mlo[b] = 0;
        s.mhi[b] = 0;
    }
    __syncthreads();
    for (int base = 0; base < r.V; base += kThreads) {
        int i = base + threadIdx.x;
        uint32_t dig = 0xFFFFFFFFu; // no bucket
        unsigned long long w = 0;
        if (i < r.V && in_set(r, i, pred)) {
            double zi = r.z[i];
            uint32_t fk, ik;
            uint64_t dk;
            if (prefix_match(pre, zi, i, fk, dk, ik)) {
                uint64_t k = L.key == 0 ? fk : L.key == 1 ? dk : ik;
                dig = (uint32_t)(k >> L.shift) & ((1u << L.bits) - 1u);
                w = weighted ? rule_mass_units(r.e[i]) : 0;
            }
        }
        unsigned peers = __match_any_sync(kFull, dig);
        bool shared_bucket = dig != 0xFFFFFFFFu && __popc(peers) > 1;
        if (weighted && __any_sync(kFull, shared_bucket))
            w = peer_sum(peers, w);
        if (dig != 0xFFFFFFFFu && lane == __ffs(peers) - 1) {
            atomicAdd(&s.cnt[dig], (uint32_t)__popc(peers));
            if (weighted) {
                unsigned long long old = atomicAdd(&s.mlo[dig], w);
                if (old + w < old)
                    atomicAdd(&s.mhi[dig], 1u);
            }
        }
    }
    __syncthreads();
}

// The prefix narrowed to bucket sel of level L.
__device__ inline void narrow(Prefix &pre, const Level &L, int sel)
{
    uint64_t field = (uint64_t)((1u << L.bits) - 1u) << L.shift;
    uint64_t digit = (uint64_t)sel << L.shift;
    if (L.key == 0) {
        pre.fm |= (uint32_t)field;
        pre.fs |= (uint32_t)digit;
    } else if (L.key == 1) {
        pre.dm |= field;
        pre.ds |= digit;
    } else {
        pre.im |= (uint32_t)field;
        pre.is |= (uint32_t)digit;
    }
}

// The walk's end inside a bucket of at most kSmallSet tokens (those that
// match pre): sorted outright and walked token by token from w. The id, or
// -1 when the walk does not end there.
__device__ int pick_in_bucket(const Row &r, int pred, bool weighted, const Prefix &pre,
                              double target, bool strict, rule_walk w)
{
    Shared &s = *r.s;
    for (int i = threadIdx.x; i < r.V; i += kThreads) {
        if (!in_set(r, i, pred))
            continue;
        double zi = r.z[i];
        uint32_t fk, ik;
        uint64_t dk;
        if (prefix_match(pre, zi, i, fk, dk, ik))
            collect(s, zi, weighted ? r.e[i] : 0.0, i);
    }
    __syncthreads();
    int n = min(s.n_cand, kSmallSet);
    sort_candidates(s, n);
    if (threadIdx.x == 0) {
        int id = -1;
        for (int j = 0; j < n; j++) {
            rule_mass m = { rule_mass_units(s.sw[j]), 0 }; // zero when not weighted
            if (rule_walk_step(&w, 1, m, weighted, strict, target)) {
                id = s.sid[j];
                break;
            }
        }
        s.pick_id = id;
    }
    __syncthreads();
    int id = s.pick_id;
    __syncthreads();
    return id;
}

// Walks the tokens of the set in rank order and returns the
// first at which the running count (weighted false) or weight e reaches the
// target (inclusive) or passes it (strict); -1 if none does.
// A level narrows the set to the bucket where the walk ends, until the
// bucket is small enough to sort (pick_in_bucket).
__device__ int radix_pick(const Row &r, int pred, bool weighted, double target, bool strict)
{
    Shared &s = *r.s;
    Prefix pre = { 0, 0, 0, 0, 0, 0 };
    rule_walk w = { 0, { 0, 0 } };
    for (int level = 0; level < kLevels; level++) {
        Level L = level_of(level);
        level_histogram(r, pred, weighted, pre, L);
        walk_buckets(s, 1 << L.bits, weighted, strict, target, w);
        __syncthreads();
        int sel = s.sel;
        w = s.walk;
        if (sel < 0) {
            __syncthreads();
            return -1;
        }
        uint32_t n_sel = s.cnt[sel];
        narrow(pre, L, sel);
        if (threadIdx.x == 0)
            s.n_cand = 0;
        __syncthreads(); // everyone has read the bucket before it is reused
        if (n_sel <= (uint32_t)kSmallSet)
            return pick_in_bucket(r, pred, weighted, pre, target, strict, w);
    }
    return -1; // not reached: the last level leaves one token a bucket
}

// best_k: the R <= kSmallSet best tokens of the set (n_set of them), in rank
// order, into s.sz/sw/sid. The R-th comes from a count descent, and the
// tokens up to it are collected. Returns how many (min(R, n_set)).
__device__ int best_k(const Row &r, int pred, int R, int n_set)
{
    Shared &s = *r.s;
    bool all = n_set <= R;
    double zc = 0.0;
    int idc = -1;
    if (!all) {
        idc = radix_pick(r, pred, false, (double)R, false);
        if (idc < 0)
            all = true; // cannot happen: the set holds more than R tokens
        else
            zc = r.z[idc];
    }
    if (threadIdx.x == 0)
        s.n_cand = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < r.V; i += kThreads) {
        if (!in_set(r, i, pred))
            continue;
        double zi = r.z[i];
        if (all || i == idc || rule_ranks_before(zi, i, zc, idc))
            collect(s, zi, r.e[i], i);
    }
    __syncthreads();
    int n = min(s.n_cand, kSmallSet);
    sort_candidates(s, n);
    return n;
}

// --- The stages (run_chain) --------------------------------------------------

struct State {
    int n_alive;
    int n_finite;
    bool e_valid;
    double e_max;
    bool greedy;
};

// compute_exps: e = e^(z' - max) over every token, max over every token.
__device__ void compute_exps(const Row &r, State &st)
{
    if (st.e_valid)
        return;
    double m = -INFINITY;
    for (int i = threadIdx.x; i < r.V; i += kThreads)
        m = r.z[i] > m ? r.z[i] : m;
    m = block_max(m, *r.s);
    for (int i = threadIdx.x; i < r.V; i += kThreads)
        r.e[i] = dev_fast_exp(r.z[i] - m);
    __syncthreads();
    st.e_max = m;
    st.e_valid = true;
}

// cut_after: removes every kept token ranked after (zc, idc), or with
// keep_ties every one with z' below zc. Returns the tokens still kept.
__device__ int cut_after(const Row &r, double zc, int idc, bool keep_ties, int stage)
{
    int kept = 0;
    for (int i = threadIdx.x; i < r.V; i += kThreads) {
        if (r.mark[i] != kMarkKept)
            continue;
        double zi = r.z[i];
        bool after = keep_ties ? zi < zc : (zi < zc || (zi == zc && i > idc));
        if (after)
            r.mark[i] = (uint8_t)(1 + stage);
        else
            kept++;
    }
    return block_sum_int(kept, *r.s);
}

// alive_mass: the sum of e over the kept tokens (e valid).
__device__ double alive_mass(const Row &r)
{
    double m = 0.0;
    for (int i = threadIdx.x; i < r.V; i += kThreads)
        if (r.mark[i] == kMarkKept)
            m += r.e[i];
    return block_sum(m, *r.s);
}

// stage_penalty: the counts of the window, then the rule once per distinct
// token. The count scratch is zero between runs: the exchange that reads a
// token's count also clears it, and only the first reader gets it.
__device__ void stage_penalty(const Row &r, const RowParams &p, const int *win, int *count)
{
    for (int j = threadIdx.x; j < p.win_len; j += kThreads)
        atomicAdd(&count[win[j]], 1);
    __syncthreads();
    for (int j = threadIdx.x; j < p.win_len; j += kThreads) {
        int id = win[j];
        int c = atomicExch(&count[id], 0);
        if (c > 0)
            r.z[id] = rule_penalize(r.z[id], c, p.alpha, p.lesson_formula, p.frequency,
                                    p.presence); // --fmad=false: the CPU's two roundings
    }
    __syncthreads();
}

// stage_greedy: T = 0 keeps only the argmax of the kept tokens.
__device__ void stage_greedy(const Row &r, State &st)
{
    int best = block_best_kept(r.z, r.mark, r.V, false, *r.s);
    if (best >= 0)
        st.n_alive = cut_after(r, r.z[best], best, false, STAGE_TEMPERATURE);
}

// stage_top_k, with the count descent for every k (the CPU's heap for small
// k is a shortcut to the same token).
__device__ void stage_top_k(const Row &r, const RowParams &p, State &st)
{
    int k = p.top_k;
    if (k <= 0 || k >= st.n_alive)
        return;
    int cut = radix_pick(r, kKept, false, (double)k, false);
    if (cut < 0)
        return;
    st.n_alive = cut_after(r, r.z[cut], cut, p.keep_ties != 0, STAGE_TOP_K);
}

// stage_top_p: the running mass reaches p * (kept mass) -- first among the
// best TOP_P_PROBE tokens, one by one, else by the weighted descent.
__device__ void stage_top_p(const Row &r, const RowParams &p, State &st)
{
    if (p.top_p >= 1.0)
        return;
    Shared &s = *r.s;
    compute_exps(r, st);
    double sum = alive_mass(r);
    double target = __dmul_rn(p.top_p, sum);
    int n = best_k(r, kKept, kTopPProbe, st.n_alive);
    if (threadIdx.x == 0) {
        double run = 0.0;
        int found = -1;
        for (int j = 0; j < n; j++) {
            if (run + s.sw[j] >= target) {
                found = s.sid[j];
                break;
            }
            run += s.sw[j];
        }
        s.found = found;
    }
    __syncthreads();
    int cut = s.found;
    __syncthreads();
    if (cut < 0) // -1 again: rounding kept the total below p, everything stays
        cut = radix_pick(r, kKept, true, target, false);
    if (cut >= 0)
        st.n_alive = cut_after(r, r.z[cut], cut, false, STAGE_TOP_P);
}

// stage_min_p: z' - max against the bar the host found (rule_min_p_keeps), as
// on the CPU: no exp on the device.
__device__ void stage_min_p(const Row &r, const RowParams &p, State &st)
{
    if (p.min_p <= 0.0)
        return;
    int best = block_best_kept(r.z, r.mark, r.V, false, *r.s);
    if (best < 0)
        return;
    double max = r.z[best];
    int kept = 0;
    for (int i = threadIdx.x; i < r.V; i += kThreads) {
        if (r.mark[i] != kMarkKept)
            continue;
        double zi = r.z[i];
        if (rule_min_p_keeps(zi, max, p.min_p_bar))
            kept++;
        else
            r.mark[i] = (uint8_t)(1 + STAGE_MIN_P);
    }
    st.n_alive = block_sum_int(kept, *r.s);
}

// fill_rows: the R best tokens of all (z' > -inf), then masked ones by id.
// Returns how many rows, in s.top_id.
__device__ int fill_rows(const Row &r, int R)
{
    Shared &s = *r.s;
    if (R <= 0)
        return 0;
    int finite = 0;
    for (int i = threadIdx.x; i < r.V; i += kThreads)
        finite += r.z[i] != -INFINITY;
    finite = block_sum_int(finite, s);
    int n = best_k(r, kFinite, R, finite);
    if (threadIdx.x < n)
        s.top_id[threadIdx.x] = s.sid[threadIdx.x];
    __syncthreads();
    // Masked tokens rank last, by id: an ordered compaction, chunk by chunk.
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int base = 0; base < r.V && n < R; base += kThreads) {
        int i = base + threadIdx.x;
        bool masked = i < r.V && r.z[i] == -INFINITY;
        unsigned ballot = __ballot_sync(kFull, masked);
        if (lane == 0)
            s.red_i[warp] = __popc(ballot);
        __syncthreads();
        int before = 0, total = 0;
        for (int w = 0; w < kWarps; w++) {
            before += w < warp ? s.red_i[w] : 0;
            total += s.red_i[w];
        }
        int at = n + before + __popc(ballot & ((1u << lane) - 1u));
        if (masked && at < R)
            s.top_id[at] = i;
        __syncthreads();
        n = min(R, n + total);
    }
    return n;
}

// After a value stage: the lowest id whose z' left RULE_Z_LIMIT's range
// without being masked, reported as the CPU fast path reports it (true: the
// row stops here). The whole block takes the same branch.
__device__ bool range_refused(const Row &r, int stage, double zmax, RowOut *out)
{
    int bad = INT_MAX;
    for (int i = threadIdx.x; i < r.V && bad == INT_MAX; i += kThreads)
        if (!rule_z_in_range(r.z[i]) && r.mark[i] != kMarkMasked)
            bad = i;
    bad = block_min_int(bad, *r.s);
    if (bad == INT_MAX)
        return false;
    if (threadIdx.x == 0) {
        out->error = kErrRange;
        out->error_token = bad;
        out->error_stage = stage;
        out->error_z = r.z[bad];
        out->error_zmax = zmax;
    }
    return true;
}

// The whole step of one request (sampler_run_fast), one block per request.
// vm_load_f and vm_marks_init: z' = logit + shift, every token kept but
// the masked. NaN and +inf are refused, lowest id first, into out. Returns
// the count of finite tokens, or -1 when the row is refused.
__device__ int load_row(const Row &r, const RowParams &p, const float *lg, RowOut *out)
{
    int bad = INT_MAX, finite = 0;
    for (int i = threadIdx.x; i < r.V; i += kThreads) {
        double v = (double)lg[i] + p.shift;
        r.z[i] = v;
        if (!rule_z_in_range(v) && v != -INFINITY && i < bad)
            bad = i;
        bool masked = v == -INFINITY;
        r.mark[i] = masked ? kMarkMasked : kMarkKept;
        finite += !masked;
    }
    bad = block_min_int(bad, *r.s);
    finite = block_sum_int(finite, *r.s);
    if (bad == INT_MAX && finite > 0)
        return finite;
    if (threadIdx.x == 0) {
        double v = bad == INT_MAX ? 0.0 : r.z[bad];
        out->error = bad == INT_MAX ? kErrNoFinite
                     : v != v       ? kErrNaN
                     : v == INFINITY ? kErrInf
                                     : kErrRange;
        out->error_token = bad;
        out->error_stage = SAMPLER_AT_START;
        out->error_z = v;
        out->error_logit = bad == INT_MAX ? 0.0 : (double)lg[bad];
    }
    return -1;
}

// Temperature: greedy at 0, z' / T otherwise (vm_divide, with its check of
// the largest |z'| before the division). Returns whether the row is refused.
__device__ bool stage_temperature(const Row &r, const RowParams &p, State &st, RowOut *out)
{
    if (p.temperature == 0.0) {
        st.greedy = true;
        stage_greedy(r, st);
        return false;
    }
    if (p.temperature == 1.0)
        return false;
    double zmax = 0.0; // the largest |z| not -inf, before
    for (int i = threadIdx.x; i < r.V; i += kThreads) {
        double a = fabs(r.z[i]);
        zmax = r.z[i] != -INFINITY && a > zmax ? a : zmax;
        r.z[i] = r.z[i] / p.temperature;
    }
    zmax = block_max(zmax, *r.s);
    st.e_valid = false;
    return zmax / p.temperature > RULE_Z_LIMIT && range_refused(r, STAGE_TEMPERATURE, zmax, out);
}

// The chain's stages in their order. Returns whether the row is refused.
__device__ bool run_chain(const Row &r, const RowParams &p, const int *win, int *count, State &st,
                          RowOut *out)
{
    for (int c = 0; c < p.n_stages; c++) {
        switch (p.stage[c]) {
        case STAGE_PENALTY:
            if (p.penalty_active) { // inactive, the rule gives every z' back unchanged
                stage_penalty(r, p, win, count);
                st.e_valid = false;
                if (range_refused(r, STAGE_PENALTY, 0.0, out))
                    return true;
            }
            break;
        case STAGE_TEMPERATURE:
            if (stage_temperature(r, p, st, out))
                return true;
            break;
        case STAGE_TOP_K:
            stage_top_k(r, p, st);
            break;
        case STAGE_TOP_P:
            stage_top_p(r, p, st);
            break;
        case STAGE_MIN_P:
            stage_min_p(r, p, st);
            break;
        default:
            break;
        }
    }
    return false;
}

// The final distribution's sums: S and sum e (z' - max) over every token,
// K and the same over the kept, and the kept count.
struct Sums {
    double S, off_all, K, off_kept;
    int kept;
};

__device__ Sums final_sums(const Row &r, State &st)
{
    compute_exps(r, st);
    Sums m = { 0.0, 0.0, 0.0, 0.0, 0 };
    for (int i = threadIdx.x; i < r.V; i += kThreads) {
        double ei = r.e[i];
        double t = ei > 0.0 ? __dmul_rn(ei, r.z[i] - st.e_max) : 0.0;
        m.S += ei;
        m.off_all += t;
        if (r.mark[i] == kMarkKept) {
            m.kept++;
            m.K += ei;
            m.off_kept += t;
        }
    }
    Shared &s = *r.s;
    m.S = block_sum(m.S, s);
    m.off_all = block_sum(m.off_all, s);
    m.K = block_sum(m.K, s);
    m.off_kept = block_sum(m.off_kept, s);
    m.kept = block_sum_int(m.kept, s);
    return m;
}

// The draw: the first kept token, in rank order, at which the running kept
// mass passes target = u * K -- first among the n_rows rows fill_rows
// found, then by the weighted descent, then the last kept token when
// rounding falls short.
__device__ int draw_token(const Row &r, const State &st, double target, int n_rows)
{
    Shared &s = *r.s;
    if (threadIdx.x == 0) {
        double run = 0.0;
        int found = -1, kept_rows = 0;
        for (int j = 0; j < n_rows; j++) {
            int i = s.top_id[j];
            if (r.mark[i] != kMarkKept)
                continue;
            kept_rows++;
            if (run + r.e[i] > target) {
                found = i;
                break;
            }
            run += r.e[i];
        }
        s.found = found;
        s.found_aux = kept_rows;
    }
    __syncthreads();
    int id = s.found, kept_rows = s.found_aux;
    __syncthreads();
    if (id < 0 && kept_rows < st.n_alive)
        id = radix_pick(r, kKept, true, target, true);
    if (id < 0)
        id = block_best_kept(r.z, r.mark, r.V, true, s);
    return id;
}

// The whole step of one request on its row in global memory: the full
// path, for rows the list cannot take and for per-token results.
__global__ void __launch_bounds__(kThreads, 1)
    sample_kernel(const RowParams *params, const int *windows, const float *logits, int V,
                  double *zs, double *es, uint8_t *marks, int *counts, RowOut *outs,
                  TopRow *tops)
{
    __shared__ Shared s;
    __shared__ RowParams p;
    if (threadIdx.x == 0)
        p = params[blockIdx.x];
    __syncthreads();
    size_t off = (size_t)blockIdx.x * (size_t)V;
    Row r = { V, zs + off, es + off, marks + off, &s };
    RowOut *out = outs + blockIdx.x;
    int finite = load_row(r, p, logits + (size_t)p.row * (size_t)V, out);
    if (finite < 0)
        return;
    State st = { finite, finite, false, 0.0, false };
    if (run_chain(r, p, windows + p.win_off, counts + off, st, out))
        return;
    Sums m = final_sums(r, st);
    st.n_alive = m.kept;
    int n_rows = fill_rows(r, p.n_top < V ? p.n_top : V);
    double u = st.greedy ? 0.0 : philox_uniform(p.seed, p.step, p.row, 0);
    int id = st.greedy ? block_best_kept(r.z, r.mark, V, false, s)
                       : draw_token(r, st, __dmul_rn(u, m.K), n_rows);
    if (threadIdx.x < n_rows) {
        int i = s.top_id[threadIdx.x];
        tops[p.top_at + threadIdx.x] = { r.z[i], r.e[i], i, r.mark[i] };
    }
    if (threadIdx.x == 0) {
        out->error = kErrNone;
        out->error_token = -1;
        out->id = id;
        out->sampled = !st.greedy;
        out->kept_count = m.kept;
        out->n_top = n_rows;
        out->u = u;
        out->max_z = st.e_max;
        out->sum_exp = m.S;
        out->kept_sum = m.K;
        out->chosen_e = r.e[id];
        out->offset = m.off_all;
        out->kept_offset = m.off_kept;
    }
}

#include "list_kernel.cuh"

// --- The LM head --------------------------------------------------------------

// One thread per four weights: lm_weights4 is the CPU's generator, so the
// weights are bit for bit those of head_row.
__global__ void weights_kernel(uint16_t *w, uint64_t seed, int V, int d, float scale)
{
    size_t per_row = (size_t)(d / 4);
    size_t n4 = (size_t)V * per_row;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < n4;
         t += (size_t)gridDim.x * blockDim.x) {
        uint16_t q[4];
        lm_weights4(seed, (uint32_t)(t / per_row), (uint32_t)(t % per_row), scale, q);
        uint2 v;
        v.x = (uint32_t)q[0] | (uint32_t)q[1] << 16;
        v.y = (uint32_t)q[2] | (uint32_t)q[3] << 16;
        reinterpret_cast<uint2 *>(w)[t] = v;
    }
}

// model_rmsnorm (norm_tree.h): NORM_LANES threads, one lane each, then the
// tree in shared memory, step for step the CPU's; x = h / rms.
__global__ void __launch_bounds__(NORM_LANES) rmsnorm_kernel(const float *h, float *x, int d)
{
    __shared__ double lane[NORM_LANES];
    const float *hv = h + (size_t)blockIdx.x * d;
    float *xv = x + (size_t)blockIdx.x * d;
    int t = threadIdx.x;
    lane[t] = norm_lane(hv, d, t);
    __syncthreads();
    for (int half = NORM_LANES / 2; half > 0; half >>= 1) {
        if (t < half)
            norm_tree_step(lane, t, half);
        __syncthreads();
    }
    float rms = norm_rms(lane[0], d, MODEL_RMS_EPS);
    for (int i = t; i < d; i += NORM_LANES)
        xv[i] = hv[i] / rms;
}

constexpr int kGemvThreads = 256;
static_assert(kGemvThreads % 32 == 0, "the threads of a row are neighbours in one warp");

// Where the CPU's sixteen lanes go: TPR threads share a row, thread h
// holding lanes kLanes * h .. kLanes * h + kLanes - 1 and reading the
// kLanes-column chunk h of every block of sixteen columns.
template <int TPR> struct GemvShape {
    static_assert(TPR == 2 || TPR == 4, "16-byte or 8-byte chunks of a row");
    static constexpr int kLanes = 16 / TPR;
    static constexpr int kRows = kGemvThreads / TPR; // rows per block
};

// kLanes bf16 weights from global memory into kLanes / 2 words: one 16-byte
// load, two 8-byte halves when rows are not 16-byte aligned, or one 8-byte
// load (every row is 8-byte aligned: d is a multiple of 4).
template <int kLanes, bool kVec16>
__device__ __forceinline__ void load_chunk(const uint16_t *p, uint32_t (&q)[kLanes / 2])
{
    if constexpr (kLanes == 4) {
        uint2 a = __ldg(reinterpret_cast<const uint2 *>(p));
        q[0] = a.x;
        q[1] = a.y;
    } else if constexpr (kVec16) {
        uint4 v = __ldg(reinterpret_cast<const uint4 *>(p));
        q[0] = v.x;
        q[1] = v.y;
        q[2] = v.z;
        q[3] = v.w;
    } else {
        uint2 a = __ldg(reinterpret_cast<const uint2 *>(p));
        uint2 b = __ldg(reinterpret_cast<const uint2 *>(p + 4));
        q[0] = a.x;
        q[1] = a.y;
        q[2] = b.x;
        q[3] = b.y;
    }
}

// acc[t][j] += w[j] * x_t[col + j]: a multiply and an add, each rounded, as
// the CPU's unfused loop.
template <int TB, int kLanes>
__device__ __forceinline__ void mac_chunk(float (&acc)[TB][kLanes], const uint32_t (&q)[kLanes / 2],
                                          const float *const (&xs)[TB], int col)
{
    float w[kLanes];
#pragma unroll
    for (int k = 0; k < kLanes / 2; k++) {
        w[2 * k] = __uint_as_float(q[k] << 16);
        w[2 * k + 1] = __uint_as_float(q[k] & 0xFFFF0000u);
    }
#pragma unroll
    for (int t = 0; t < TB; t++) {
#pragma unroll
        for (int j4 = 0; j4 < kLanes; j4 += 4) {
            float4 a = __ldg(reinterpret_cast<const float4 *>(xs[t] + col + j4));
            float xv[4] = { a.x, a.y, a.z, a.w };
#pragma unroll
            for (int j = 0; j < 4; j++)
                acc[t][j4 + j] = __fadd_rn(acc[t][j4 + j], __fmul_rn(w[j4 + j], xv[j]));
        }
    }
}

// The CPU's tree over the sixteen lanes of a row (head_vec.c's gemv_finish):
// a[k] += a[k + 8], a[k] += a[k + 4], then (a0 + a2) + (a1 + a3). The first
// steps pair lanes held by other threads of the row (xor 2: lanes 8 apart
// when each holds 4; xor 1: the other half), the rest are in the thread.
template <int TPR>
__device__ __forceinline__ float lane_tree(float (&a)[16 / TPR])
{
    constexpr int kLanes = 16 / TPR;
#pragma unroll
    for (int o = TPR / 2; o >= 1; o >>= 1)
#pragma unroll
        for (int j = 0; j < kLanes; j++)
            a[j] = __fadd_rn(a[j], __shfl_xor_sync(kFull, a[j], o));
#pragma unroll
    for (int w = kLanes; w > 4; w >>= 1)
#pragma unroll
        for (int k = 0; k < w / 2; k++)
            a[k] = __fadd_rn(a[k], a[k + w / 2]);
    return __fadd_rn(__fadd_rn(a[0], a[2]), __fadd_rn(a[1], a[3]));
}

// head_gemv_bf16 for TB hidden vectors at a time. TPR threads share a row
// (GemvShape), so each lane adds the same terms in the same order as on the
// CPU and the tree is the CPU's: the logits are bit for bit the CPU's. Each
// thread keeps DEPTH loads in flight. Each weight loaded serves the TB
// vectors of the block's tile; the tiles of one band of rows are
// neighbouring blocks, so that they run together and the band comes from
// DRAM once.
template <int TB, int TPR, int DEPTH, bool kVec16>
__global__ void __launch_bounds__(kGemvThreads)
    gemv_kernel(const uint16_t *w, const float *x, float *out, int V, int d, int B, int ntiles)
{
    using S = GemvShape<TPR>;
    constexpr int L = S::kLanes;
    int tile = blockIdx.x % ntiles, band = blockIdx.x / ntiles;
    int h = threadIdx.x % TPR;
    int row = band * S::kRows + threadIdx.x / TPR;
    bool live = row < V;
    // A thread past the last row reads a real one: every lane must reach the shuffles.
    const uint16_t *wr = w + (size_t)(live ? row : V - 1) * (size_t)d;
    const float *xs[TB];
#pragma unroll
    for (int t = 0; t < TB; t++) {
        int v = tile * TB + t;
        xs[t] = x + (size_t)(v < B ? v : B - 1) * (size_t)d;
    }
    float acc[TB][L];
#pragma unroll
    for (int t = 0; t < TB; t++)
#pragma unroll
        for (int j = 0; j < L; j++)
            acc[t][j] = 0.0f;
    int nchunks = d / 16 * TPR, m = h;
    for (; m + (DEPTH - 1) * TPR < nchunks; m += DEPTH * TPR) { // loaded at once, added in order
        uint32_t q[DEPTH][L / 2];
#pragma unroll
        for (int k = 0; k < DEPTH; k++)
            load_chunk<L, kVec16>(wr + L * (m + k * TPR), q[k]);
#pragma unroll
        for (int k = 0; k < DEPTH; k++)
            mac_chunk<TB, L>(acc, q[k], xs, L * (m + k * TPR));
    }
    for (; m < nchunks; m += TPR) {
        uint32_t q[L / 2];
        load_chunk<L, kVec16>(wr + L * m, q);
        mac_chunk<TB, L>(acc, q, xs, L * m);
    }
    // The columns past the last multiple of 16 go to lanes 0, 1, ... as on the CPU.
    int full = nchunks * L;
#pragma unroll
    for (int jj = 0; jj < L; jj++) {
        int j = L * h + jj;
        if (full + j < d) {
            float wv = lm_float(wr[full + j]);
#pragma unroll
            for (int t = 0; t < TB; t++)
                acc[t][jj] = __fadd_rn(acc[t][jj], __fmul_rn(wv, xs[t][full + j]));
        }
    }
#pragma unroll
    for (int t = 0; t < TB; t++) {
        float v = lane_tree<TPR>(acc[t]);
        int b = tile * TB + t;
        if (h == 0 && live && b < B)
            out[(size_t)b * (size_t)V + row] = v;
    }
}

// --- backend_draws -------------------------------------------------------------

__global__ void draw_keys_kernel(const double *z, uint64_t *keys, int *ids, int V)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < V; i += gridDim.x * blockDim.x) {
        keys[i] = dkey(z[i]);
        ids[i] = i;
    }
}

// The weights in rank order (draws.c's prepare): rule_draw_units of e for
// every finite token, and for the kept ones; and the rank of the last finite
// token and of the last kept one, for the fallbacks (one atomicMax per warp:
// a thread's ranks only grow, so its last is its largest).
__global__ void draw_weights_kernel(const int *order, const double *z, const double *e,
                                    const uint8_t *mark, int shift, int V, uint64_t *wp,
                                    uint64_t *wk, int *last)
{
    int last_finite = -1, last_kept = -1;
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < V; r += gridDim.x * blockDim.x) {
        int id = order[r];
        bool finite = z[id] != -INFINITY;
        bool kept = finite && mark[id] == kMarkKept;
        uint64_t w = finite ? rule_draw_units(e[id], shift) : 0;
        wp[r] = w;
        wk[r] = kept ? w : 0;
        last_finite = finite ? r : last_finite;
        last_kept = kept ? r : last_kept;
    }
    for (int o = 16; o > 0; o >>= 1) {
        last_finite = max(last_finite, __shfl_xor_sync(kFull, last_finite, o));
        last_kept = max(last_kept, __shfl_xor_sync(kFull, last_kept, o));
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMax(&last[0], last_finite);
        atomicMax(&last[1], last_kept);
    }
}

__global__ void draw_kernel(const uint64_t *cp, const uint64_t *ck, const int *order, const int *last,
                            int V, int n, uint64_t seed, uint32_t step, uint32_t row, int greedy_id,
                            int *plain, int *kept)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double u = philox_uniform(seed, step, row, (uint32_t)i);
        int m = last[0] + 1; // the finite tokens come first in rank order
        if (plain) {
            int rp = rule_first_above_units(cp, m, u);
            plain[i] = order[rp < m ? rp : m - 1];
        }
        if (kept) {
            if (greedy_id >= 0) {
                kept[i] = greedy_id;
            } else {
                int rk = rule_first_above_units(ck, m, u);
                kept[i] = order[rk < m ? rk : (last[1] >= 0 ? last[1] : m - 1)];
            }
        }
    }
}

// --- Host side -------------------------------------------------------------------

// A CUDA graph made by capturing a sequence of launches and copies, kept
// while what they depend on (K: sizes and buffers) stays the same.
template <class K> struct Graph {
    cudaGraphExec_t exec;
    K key;
};

// What the split path's five launches depend on (run_split).
struct SplitKey {
    int B, V, parts;
    const void *ptr[14];
};

// What a whole step's copies and launches depend on (cuda_step).
struct StepKey {
    int B, V, d, parts, n_tops;
    size_t win_n;
    const void *ptr[24];
};

struct Impl {
    cudaStream_t stream;
    cudaEvent_t ev0, ev_norm, ev_head, ev1;
    double peak_gbps;
    int sm_mhz, mem_mhz, sms; // clocks and SM count, for the benchmark (0: unknown)
    uint16_t *w; // the head: V x d bf16
    int head_V, head_d;
    float *h, *x; // hidden vectors in, normalized
    size_t h_cap, x_cap;
    float *h_h; // the hidden vectors, pinned on the host
    size_t h_h_cap;
    float *logits; // rows x V
    size_t logits_cap;
    double *z, *e; // per request: z', e^(z' - max)
    uint8_t *mark;
    int *count; // penalty counts, zero between runs
    size_t scratch_cap;
    int count_dirty;
    RowParams *params;
    RowOut *out;
    int rows_cap;
    TopRow *tops; // the batch's best rows (TopRow)
    size_t tops_cap;
    int n_tops; // how many the staged requests ask for
    int *win;
    size_t win_cap;
    RowParams *h_params;
    RowOut *h_out;
    TopRow *h_tops;
    int *h_win;
    size_t h_params_cap, h_out_cap, h_tops_cap, h_win_cap;
    // backend_draws
    uint64_t *keys_in, *keys_out;
    int *ids_in, *ids_out;
    uint64_t *wp, *wk, *cp, *ck; // rule_draw_units, and their integer scans
    size_t draw_V_cap;
    int *last;
    int *draw_ids;
    size_t draw_n_cap;
    char *cub_tmp;
    size_t cub_cap;
    // The split list path (list_kernel.cuh): per part, per row, per slot
    Pass1 *l_found;
    ListRow *l_rows;
    uint32_t *l_hist;
    int *l_slot_id, *l_slot_cnt, *l_slot_n;
    float *l_slot_lg;
    size_t l_found_cap, l_rows_cap, l_hist_cap, l_slot_cap, l_slot_n_cap, l_lg_cap, l_cnt_cap;
    Graph<SplitKey> split; // the split path's launches (run_split)
    Graph<StepKey> step;   // a whole step (cuda_step)
    int capturing;         // a graph is being made: events are its nodes
    int graphs_off;        // a graph could not be made: launch directly from then on
};

int cuda_fail(struct err *e, const char *call, cudaError_t rc)
{
    cudaGetLastError(); // clears a non-sticky error for the next call
    return err_set(e, ERR_SYSTEM, "CUDA: %s: %s", call, cudaGetErrorString(rc));
}

#define CK(call, name)                                                                             \
    do {                                                                                           \
        cudaError_t rc_ = (call);                                                                  \
        if (rc_ != cudaSuccess)                                                                    \
            return cuda_fail(e, name, rc_);                                                        \
    } while (0)

int dev_alloc(void **p, size_t bytes, const char *what, struct err *e)
{
    *p = nullptr;
    cudaError_t rc = cudaMalloc(p, bytes ? bytes : 1);
    if (rc == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        *p = nullptr;
        return err_set(e, ERR_SYSTEM, "CUDA: cudaMalloc: out of device memory for %s (%.2f GB)",
                       what, (double)bytes / 1e9);
    }
    if (rc != cudaSuccess) {
        *p = nullptr;
        return cuda_fail(e, "cudaMalloc", rc);
    }
    return 0;
}

template <class T> void dev_free(T *&p)
{
    if (p)
        cudaFree(p);
    p = nullptr;
}

// The sort and cumulative space of the many draws (draws_op).
void free_draw_space(Impl *im)
{
    dev_free(im->keys_in);
    dev_free(im->keys_out);
    dev_free(im->ids_in);
    dev_free(im->ids_out);
    dev_free(im->wp);
    dev_free(im->wk);
    dev_free(im->cp);
    dev_free(im->ck);
    dev_free(im->last);
}

// Device room for n values of T (contents not kept when it grows).
template <class T> int reserve(T *&p, size_t &cap, size_t n, const char *what, struct err *e)
{
    if (n <= cap && p)
        return 0;
    dev_free(p);
    cap = 0;
    if (dev_alloc(reinterpret_cast<void **>(&p), n * sizeof(T), what, e) < 0)
        return -1;
    cap = n;
    return 0;
}

// Pinned host room for n values of T (contents not kept when it grows): the
// settings, windows and results cross the bus by DMA, and the copies of a
// call run asynchronously with it rather than staged through pageable memory.
template <class T> int host_reserve(T *&p, size_t &cap, size_t n, const char *what, struct err *e)
{
    if (n <= cap && p)
        return 0;
    if (p)
        cudaFreeHost(p);
    p = nullptr;
    cap = 0;
    void *q = nullptr;
    cudaError_t rc = cudaHostAlloc(&q, (n ? n : 1) * sizeof(T), cudaHostAllocDefault);
    if (rc != cudaSuccess) {
        cudaGetLastError();
        return err_set(e, ERR_SYSTEM, "CUDA: cudaHostAlloc: no pinned memory for %s (%s)", what,
                       cudaGetErrorString(rc));
    }
    p = static_cast<T *>(q);
    cap = n;
    return 0;
}

Impl *impl_of(struct backend *b)
{
    return static_cast<Impl *>(b->impl);
}

void cuda_close(struct backend *b)
{
    Impl *im = impl_of(b);
    if (!im)
        return;
    if (im->stream)
        cudaStreamSynchronize(im->stream);
    dev_free(im->w);
    dev_free(im->h);
    dev_free(im->x);
    dev_free(im->logits);
    dev_free(im->z);
    dev_free(im->e);
    dev_free(im->mark);
    dev_free(im->count);
    dev_free(im->params);
    dev_free(im->out);
    dev_free(im->tops);
    dev_free(im->win);
    free_draw_space(im);
    dev_free(im->draw_ids);
    dev_free(im->cub_tmp);
    dev_free(im->l_found);
    dev_free(im->l_rows);
    dev_free(im->l_hist);
    dev_free(im->l_slot_id);
    dev_free(im->l_slot_cnt);
    dev_free(im->l_slot_n);
    dev_free(im->l_slot_lg);
    if (im->split.exec)
        cudaGraphExecDestroy(im->split.exec);
    if (im->step.exec)
        cudaGraphExecDestroy(im->step.exec);
    if (im->ev0)
        cudaEventDestroy(im->ev0);
    if (im->ev_norm)
        cudaEventDestroy(im->ev_norm);
    if (im->ev_head)
        cudaEventDestroy(im->ev_head);
    if (im->ev1)
        cudaEventDestroy(im->ev1);
    if (im->stream)
        cudaStreamDestroy(im->stream);
    if (im->h_params)
        cudaFreeHost(im->h_params);
    if (im->h_h)
        cudaFreeHost(im->h_h);
    if (im->h_out)
        cudaFreeHost(im->h_out);
    if (im->h_tops)
        cudaFreeHost(im->h_tops);
    if (im->h_win)
        cudaFreeHost(im->h_win);
    free(im);
    b->impl = nullptr;
}

// The clocks, the SM count and the peak memory bandwidth, which only the
// benchmark reads: a query that fails leaves its figure 0 (unknown) rather
// than failing the backend.
void device_figures(Impl *im)
{
    int clock_khz = 0, bus_bits = 0, sm_khz = 0, sms = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0) != cudaSuccess ||
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0) != cudaSuccess)
        clock_khz = bus_bits = 0;
    if (cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, 0) != cudaSuccess)
        sm_khz = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess)
        sms = 0;
    cudaGetLastError(); // a failed query leaves no error behind for the next call
    // Double data rate: two transfers per clock over the whole bus.
    im->peak_gbps = 2.0 * (double)clock_khz * 1e3 * ((double)bus_bits / 8.0) / 1e9;
    im->mem_mhz = clock_khz / 1000;
    im->sm_mhz = sm_khz / 1000;
    im->sms = sms;
}

int cuda_open_impl(struct backend *b, struct err *e)
{
    Impl *im = static_cast<Impl *>(calloc(1, sizeof(Impl)));
    if (!im)
        return err_set(e, ERR_SYSTEM, "out of memory for the CUDA backend");
    b->impl = im;
    CK(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    snprintf(b->device, sizeof b->device, "%.63s", prop.name);
    device_figures(im);
    CK(cudaStreamCreateWithFlags(&im->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    CK(cudaEventCreate(&im->ev0), "cudaEventCreate");
    CK(cudaEventCreate(&im->ev_norm), "cudaEventCreate");
    CK(cudaEventCreate(&im->ev_head), "cudaEventCreate");
    CK(cudaEventCreate(&im->ev1), "cudaEventCreate");
    b->V = 0;
    b->d = 0;
    b->rows = 0;
    return 0;
}

int cuda_open(struct backend *b, struct err *e)
{
    if (cuda_open_impl(b, e) < 0) {
        cuda_close(b);
        return -1;
    }
    return 0;
}

// The device time between the two events, after the second.
// The device time from event a to event z, in ms, once z has happened.
int event_ms(cudaEvent_t a, cudaEvent_t z, double *ms, struct err *e)
{
    CK(cudaEventSynchronize(z), "cudaEventSynchronize");
    float t = 0.0f;
    CK(cudaEventElapsedTime(&t, a, z), "cudaEventElapsedTime");
    *ms = t;
    return 0;
}

int elapsed(Impl *im, struct backend *b, struct err *e)
{
    return event_ms(im->ev0, im->ev1, &b->kernel_ms, e);
}

// An event on the stream; while a graph is being made, a node of it.
cudaError_t record(Impl *im, cudaEvent_t ev)
{
    return cudaEventRecordWithFlags(ev, im->stream,
                                    im->capturing ? cudaEventRecordExternal : cudaEventRecordDefault);
}

// First failure of a sequence of enqueued calls, returned as it is.
#define EQ(call)                                                                                   \
    do {                                                                                           \
        cudaError_t rc_ = (call);                                                                  \
        if (rc_ != cudaSuccess)                                                                    \
            return rc_;                                                                            \
    } while (0)

// Replays g, made again by capturing enqueue when key differs from the one
// it was made for; enqueue runs directly when no graph can be made (the
// results are the same either way). A graph made for another key is never
// launched, even once graphs are off. Returns the first failure.
template <class K, class F> cudaError_t replay(Impl *im, Graph<K> &g, const K &key, F enqueue)
{
    if (g.exec && memcmp(&key, &g.key, sizeof key)) {
        cudaGraphExecDestroy(g.exec);
        g.exec = nullptr;
    }
    if (!g.exec && !im->graphs_off) {
        cudaGraph_t graph = nullptr;
        bool ok = cudaStreamBeginCapture(im->stream, cudaStreamCaptureModeThreadLocal) ==
                  cudaSuccess;
        if (ok) {
            im->capturing = 1;
            cudaError_t rc = enqueue();
            im->capturing = 0;
            ok = cudaStreamEndCapture(im->stream, &graph) == cudaSuccess && rc == cudaSuccess;
        }
        ok = ok && cudaGraphInstantiateWithFlags(&g.exec, graph, 0) == cudaSuccess;
        if (graph)
            cudaGraphDestroy(graph);
        if (ok) {
            g.key = key;
        } else {
            cudaGetLastError();
            g.exec = nullptr;
            im->graphs_off = 1;
        }
    }
    if (g.exec && cudaGraphLaunch(g.exec, im->stream) == cudaSuccess)
        return cudaSuccess;
    cudaGetLastError();
    return enqueue();
}

int cuda_head(struct backend *b, const struct model *m, struct err *e)
{
    Impl *im = impl_of(b); // m was built by model_build: d is a multiple of 4 in range
    size_t bytes = (size_t)m->V * (size_t)m->d * sizeof(uint16_t);
    dev_free(im->w);
    im->head_V = im->head_d = 0;
    b->d = 0;
    b->rows = 0;
    cudaError_t rc = cudaMalloc(reinterpret_cast<void **>(&im->w), bytes);
    if (rc != cudaSuccess) {
        im->w = nullptr;
        if (rc == cudaErrorMemoryAllocation) {
            cudaGetLastError();
            return err_set(e, ERR_SYSTEM,
                           "out of device memory for the LM head: %d x %d bf16 = %.2f GB", m->V,
                           m->d, (double)bytes / 1e9);
        }
        return cuda_fail(e, "cudaMalloc", rc);
    }
    size_t n4 = bytes / 8;
    size_t blocks = (n4 + 255) / 256;
    if (blocks > kGridCap)
        blocks = kGridCap;
    weights_kernel<<<(unsigned)blocks, 256, 0, im->stream>>>(im->w, m->seed, m->V, m->d, m->scale);
    CK(cudaGetLastError(), "weights_kernel launch");
    CK(cudaStreamSynchronize(im->stream), "weights_kernel");
    im->head_V = m->V;
    im->head_d = m->d;
    b->V = m->V;
    b->d = m->d;
    return 0;
}

// The GEMV for B vectors in tiles of TB, TPR threads per row, DEPTH loads
// in flight per thread (gemv_kernel).
template <int TB, int TPR, int DEPTH>
void launch_gemv(Impl *im, int V, int d, int B)
{
    int ntiles = (B + TB - 1) / TB;
    int bands = (V + GemvShape<TPR>::kRows - 1) / GemvShape<TPR>::kRows;
    unsigned blocks = (unsigned)bands * (unsigned)ntiles;
    if (TPR == 2 && d % 8 == 0) // 8-byte chunks need no 16-byte variant
        gemv_kernel<TB, TPR, DEPTH, TPR == 2>
            <<<blocks, kGemvThreads, 0, im->stream>>>(im->w, im->x, im->logits, V, d, B, ntiles);
    else
        gemv_kernel<TB, TPR, DEPTH, false>
            <<<blocks, kGemvThreads, 0, im->stream>>>(im->w, im->x, im->logits, V, d, B, ntiles);
}

// Device room for B hidden vectors and their logits, and the vectors
// copied into pinned host memory (one copy to the device from there).
int stage_head(struct backend *b, const float *h, int B, struct err *e)
{
    Impl *im = impl_of(b); // backend_logits checked B and that a head is held
    size_t nh = (size_t)B * (size_t)im->head_d;
    if (reserve(im->h, im->h_cap, nh, "hidden vectors", e) < 0 ||
        reserve(im->x, im->x_cap, nh, "hidden vectors", e) < 0 ||
        host_reserve(im->h_h, im->h_h_cap, nh, "hidden vectors", e) < 0)
        return -1;
    b->rows = 0;
    if (reserve(im->logits, im->logits_cap, (size_t)B * (size_t)im->head_V, "logits", e) < 0)
        return -1;
    memcpy(im->h_h, h, nh * sizeof(float));
    return 0;
}

// The head on the stream: the vectors in, ev0, the RMSNorm, ev_norm, the GEMV.
cudaError_t enqueue_head(Impl *im, int B)
{
    int V = im->head_V, d = im->head_d;
    EQ(cudaMemcpyAsync(im->h, im->h_h, (size_t)B * (size_t)d * sizeof(float),
                       cudaMemcpyHostToDevice, im->stream));
    EQ(record(im, im->ev0));
    rmsnorm_kernel<<<B, NORM_LANES, 0, im->stream>>>(im->h, im->x, d);
    EQ(cudaGetLastError());
    EQ(record(im, im->ev_norm));
    // Tiles, threads per row and loads in flight (ptxas for sm_90, 256
    // threads a block): batch 1, 43 registers, 5 blocks an SM, 160 KB in
    // flight; 2, 63, 4 blocks, 128 KB; up to 4, 73, 3 blocks, 48 KB; more,
    // 92, 2 blocks, 32 KB (two threads a row and four loads: 142, 1 block).
    if (B == 1)
        launch_gemv<1, 2, 8>(im, V, d, B);
    else if (B == 2)
        launch_gemv<2, 2, 8>(im, V, d, B);
    else if (B <= 4)
        launch_gemv<4, 4, 8>(im, V, d, B);
    else
        launch_gemv<8, 4, 8>(im, V, d, B);
    return cudaGetLastError();
}

// The head's times once it has run: norm_ms and, into *head_ms, the whole.
int head_times(Impl *im, struct backend *b, cudaEvent_t end, double *head_ms, struct err *e)
{
    if (event_ms(im->ev0, end, head_ms, e) < 0)
        return -1;
    return event_ms(im->ev0, im->ev_norm, &b->norm_ms, e);
}

int cuda_logits(struct backend *b, const float *h, int B, struct err *e)
{
    Impl *im = impl_of(b);
    if (stage_head(b, h, B, e) < 0)
        return -1;
    CK(enqueue_head(im, B), "the LM head");
    CK(record(im, im->ev1), "cudaEventRecord");
    if (head_times(im, b, im->ev1, &b->kernel_ms, e) < 0)
        return -1;
    b->V = im->head_V;
    b->rows = B;
    return 0;
}

int cuda_set_logits(struct backend *b, const float *logits, int B, int V, struct err *e)
{
    Impl *im = impl_of(b); // backend_set_logits checked B and V, and dropped a head of another V
    b->rows = 0;
    if (reserve(im->logits, im->logits_cap, (size_t)B * (size_t)V, "logits", e) < 0)
        return -1;
    CK(cudaMemcpyAsync(im->logits, logits, (size_t)B * (size_t)V * sizeof(float),
                       cudaMemcpyHostToDevice, im->stream),
       "cudaMemcpyAsync");
    CK(cudaStreamSynchronize(im->stream), "cudaStreamSynchronize");
    b->V = V;
    b->rows = B;
    return 0;
}

int cuda_get_logits(struct backend *b, int row, float *out, struct err *e)
{
    Impl *im = impl_of(b); // backend_get_logits checked the row
    CK(cudaMemcpyAsync(out, im->logits + (size_t)row * (size_t)b->V, (size_t)b->V * sizeof(float),
                       cudaMemcpyDeviceToHost, im->stream),
       "cudaMemcpyAsync");
    CK(cudaStreamSynchronize(im->stream), "cudaStreamSynchronize");
    return 0;
}

// The penalty window of sampler_fast.c (window_start).
int window_start(const struct backend_req *q)
{
    return rule_window_start(q->s.penalty_scope == SCOPE_ALL, q->prompt_len, q->context_len,
                             q->s.penalty_last_n);
}

RowParams row_params(const struct backend_req *q, int V, int win_off, int win_len, int n_top)
{
    const struct sampler_settings *s = &q->s;
    RowParams p;
    memset(&p, 0, sizeof p);
    p.temperature = s->temperature;
    p.top_p = s->top_p;
    p.min_p = s->min_p;
    p.alpha = s->repetition_penalty;
    p.frequency = s->frequency_penalty;
    p.presence = s->presence_penalty;
    p.shift = s->shift;
    if (s->min_p > 0.0)
        p.min_p_bar = rule_min_p_bar(s->min_p);
    p.seed = s->seed;
    p.top_k = s->top_k;
    p.keep_ties = s->chain.topk_keep_ties != 0;
    p.lesson_formula = s->penalty_formula == PENALTY_LESSON;
    p.penalty_active = stage_active(s, STAGE_PENALTY, V);
    p.n_stages = s->chain.n;
    for (int c = 0; c < s->chain.n && c < STAGE_COUNT; c++)
        p.stage[c] = (int)s->chain.stage[c];
    p.step = q->step;
    p.row = q->row;
    p.win_off = win_off;
    p.win_len = win_len;
    p.n_top = n_top;
    p.V = V;
    p.list_ok = cand_plan_make(&p.plan, s, V) == 0;
    return p;
}

// Blocks per row for the list path: at most kSplitBatch rows share the
// SMs, ceil(SMs / B) blocks each (no more than the row has thousands of
// tokens); 1 beyond, where the rows alone fill the device.
int list_parts(const Impl *im, int B, int V)
{
    if (B > kSplitBatch || im->sms <= 0)
        return 1;
    int parts = (im->sms + B - 1) / B, most = (V + kThreads - 1) / kThreads;
    return parts < most ? parts : most < 1 ? 1 : most;
}

int reserve_split(Impl *im, int B, int parts, struct err *e)
{
    size_t np = (size_t)B * (size_t)parts, slots = np * (size_t)kCand;
    if (reserve(im->l_found, im->l_found_cap, np, "the list's parts", e) < 0 ||
        reserve(im->l_rows, im->l_rows_cap, (size_t)B, "the list's rows", e) < 0 ||
        reserve(im->l_hist, im->l_hist_cap, (size_t)B * 2 * CAND_BUCKETS, "bucket counts", e) < 0 ||
        reserve(im->l_slot_id, im->l_slot_cap, slots, "the list's slots", e) < 0 ||
        reserve(im->l_slot_cnt, im->l_cnt_cap, slots, "the list's slots", e) < 0 ||
        reserve(im->l_slot_lg, im->l_lg_cap, slots, "the list's slots", e) < 0 ||
        reserve(im->l_slot_n, im->l_slot_n_cap, np, "the list's slots", e) < 0)
        return -1;
    return 0;
}

// The split list path's five launches (list_kernel.cuh says what each does).
void launch_split(Impl *im, int B, int V, int parts)
{
    unsigned nb = (unsigned)(B * parts);
    list_window_kernel<<<B, 256, 0, im->stream>>>(im->params, im->win, V, im->count, im->l_hist);
    list_part1_kernel<<<nb, kThreads, 0, im->stream>>>(im->params, im->logits, V, im->count, parts,
                                                       im->l_found, im->l_hist);
    list_merge_kernel<<<B, kThreads, 0, im->stream>>>(im->params, parts, im->l_found, im->l_hist,
                                                      im->l_rows, im->out);
    list_part2_kernel<<<nb, kThreads, 0, im->stream>>>(im->params, im->logits, V, im->count, parts,
                                                       im->l_rows, im->l_slot_id, im->l_slot_cnt,
                                                       im->l_slot_lg, im->l_slot_n);
    list_chain_kernel<<<B, kThreads, 0, im->stream>>>(im->params, im->win, V, im->count, parts,
                                                      im->l_rows, im->l_slot_id, im->l_slot_cnt,
                                                      im->l_slot_lg, im->l_slot_n, im->out,
                                                      im->tops);
}

// What the split path's launches depend on: a graph made for one batch,
// row size and set of buffers replays only for the same.
SplitKey split_key(const Impl *im, int B, int V, int parts)
{
    SplitKey k;
    memset(&k, 0, sizeof k);
    k.B = B;
    k.V = V;
    k.parts = parts;
    const void *p[14] = { im->params,    im->win,        im->logits,    im->count,
                          im->out,       im->tops,       im->l_found,   im->l_rows,
                          im->l_hist,    im->l_slot_id,  im->l_slot_cnt, im->l_slot_lg,
                          im->l_slot_n,  nullptr };
    memcpy(k.ptr, p, sizeof p);
    return k;
}

// The split path's five launches as one CUDA graph, made again when the
// batch, the row size or a buffer changes: at a small batch the launches'
// latency, not the bytes, bounds the step. Direct launches when a graph
// cannot be made (the results are the same either way).
cudaError_t run_split(Impl *im, int B, int V, int parts)
{
    return replay(im, im->split, split_key(im, B, V, parts), [&] {
        launch_split(im, B, V, parts);
        return cudaGetLastError();
    });
}

// Room for windows of n ids in all: a power of two, so that a step's
// graph, which copies the whole room, is made again only when it grows.
size_t win_room(size_t n)
{
    size_t r = 64;
    while (r < n)
        r *= 2;
    return r;
}

// The requests' settings and penalty windows into pinned host memory, for
// one copy each. Returns the windows' total length, or -1.
long stage_requests(struct backend *b, const struct backend_req *req, int B, int n_top_override,
                    struct err *e)
{
    Impl *im = impl_of(b);
    size_t total = 0, tops = 0;
    for (int i = 0; i < B; i++) { // the requests were checked by backend_sample
        total += (size_t)(req[i].context_len - window_start(&req[i]));
        tops += (size_t)min(n_top_override >= 0 ? n_top_override : req[i].n_top, b->V);
    }
    if (total > (size_t)INT_MAX)
        return err_set(e, ERR_USAGE, "penalty windows of %zu tokens in all", total);
    if (host_reserve(im->h_params, im->h_params_cap, (size_t)B, "the batch's settings", e) < 0 ||
        host_reserve(im->h_out, im->h_out_cap, (size_t)B, "the batch's results", e) < 0 ||
        host_reserve(im->h_tops, im->h_tops_cap, tops ? tops : 1, "the best rows", e) < 0 ||
        host_reserve(im->h_win, im->h_win_cap, win_room(total), "the penalty windows", e) < 0)
        return -1;
    int at = 0, top_at = 0;
    for (int i = 0; i < B; i++) {
        const struct backend_req *q = &req[i];
        int start = window_start(q), len = q->context_len - start;
        if (len > 0)
            memcpy(im->h_win + at, q->context + start, (size_t)len * sizeof(int));
        int n_top = n_top_override >= 0 ? n_top_override : q->n_top;
        im->h_params[i] = row_params(q, b->V, at, len, n_top);
        im->h_params[i].top_at = top_at;
        at += len;
        top_at += min(n_top, b->V);
    }
    im->n_tops = top_at;
    return (long)total;
}

// Device room for B rows of V and a window of total ids: grows only, so
// the penalty counts stay zero unless new (then cleared).
int reserve_rows(Impl *im, int B, int V, size_t total, struct err *e)
{
    size_t need = (size_t)B * (size_t)V;
    if (need > im->scratch_cap || !im->z) {
        dev_free(im->z);
        dev_free(im->e);
        dev_free(im->mark);
        dev_free(im->count);
        im->scratch_cap = 0;
        if (dev_alloc(reinterpret_cast<void **>(&im->z), need * sizeof(double), "z'", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->e), need * sizeof(double), "e^z'", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->mark), need, "token marks", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->count), need * sizeof(int), "penalty counts",
                      e) < 0)
            return -1;
        im->scratch_cap = need;
        im->count_dirty = 1;
    }
    if (B > im->rows_cap || !im->params) {
        dev_free(im->params);
        dev_free(im->out);
        im->rows_cap = 0;
        if (dev_alloc(reinterpret_cast<void **>(&im->params), (size_t)B * sizeof(RowParams),
                      "the batch's settings", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->out), (size_t)B * sizeof(RowOut),
                      "the batch's results", e) < 0)
            return -1;
        im->rows_cap = B;
    }
    if (reserve(im->win, im->win_cap, win_room(total), "the penalty windows", e) < 0 ||
        reserve(im->tops, im->tops_cap, im->n_tops ? (size_t)im->n_tops : 1, "the best rows",
                e) < 0)
        return -1;
    if (im->count_dirty) {
        CK(cudaMemsetAsync(im->count, 0, im->scratch_cap * sizeof(int), im->stream),
           "cudaMemsetAsync");
        im->count_dirty = 0;
    }
    return 0;
}

// The first row the kernel refused, worded as the CPU words it; 0 when
// none was (a row the list left to the full kernel is not refused yet).
int row_error(const Impl *im, const struct backend_req *req, int B, bool by_list, struct err *e)
{
    for (int i = 0; i < B; i++) {
        const RowOut *o = &im->h_out[i];
        if (o->error == kErrNone || (by_list && o->fallback))
            continue;
        if (o->error == kErrNoFinite)
            err_set(e, ERR_USAGE, "no token has a finite logit");
        else if (o->error == kErrRange)
            sampler_range_error(&req[i].s, o->error_stage, o->error_token, o->error_logit,
                                o->error_z, o->error_zmax, e);
        else
            err_set(e, ERR_USAGE, "logit of token %d is %s", o->error_token,
                    o->error == kErrNaN ? "NaN" : "+inf");
        err_prefix(e, "request %d", i);
        return -1;
    }
    return 0;
}

// The sampler's launches: list_kernel, the split path (as its own graph
// when inner_graph), or sample_kernel.
cudaError_t launch_sampler(Impl *im, int B, int V, int parts, bool by_list, bool inner_graph)
{
    if (by_list && parts > 1) {
        if (inner_graph)
            return run_split(im, B, V, parts);
        launch_split(im, B, V, parts);
    } else if (by_list) {
        list_kernel<<<B, kThreads, 0, im->stream>>>(im->params, im->win, im->logits, V, im->count,
                                                    im->out, im->tops);
    } else {
        sample_kernel<<<B, kThreads, 0, im->stream>>>(im->params, im->win, im->logits, V, im->z,
                                                      im->e, im->mark, im->count, im->out,
                                                      im->tops);
    }
    return cudaGetLastError();
}

// The staged settings of B requests and win_n window ids to the device.
cudaError_t enqueue_requests(Impl *im, int B, size_t win_n)
{
    EQ(cudaMemcpyAsync(im->params, im->h_params, (size_t)B * sizeof(RowParams),
                       cudaMemcpyHostToDevice, im->stream));
    if (win_n)
        EQ(cudaMemcpyAsync(im->win, im->h_win, win_n * sizeof(int), cudaMemcpyHostToDevice,
                           im->stream));
    return cudaSuccess;
}

// The sampler on the stream: the launches between events from and to, then
// the results and the best rows back into pinned memory.
cudaError_t enqueue_sampler(Impl *im, int B, int V, int parts, bool by_list, cudaEvent_t from,
                            cudaEvent_t to, bool inner_graph)
{
    EQ(record(im, from));
    EQ(launch_sampler(im, B, V, parts, by_list, inner_graph));
    EQ(record(im, to));
    EQ(cudaMemcpyAsync(im->h_out, im->out, (size_t)B * sizeof(RowOut), cudaMemcpyDeviceToHost,
                       im->stream));
    if (im->n_tops) // only the best rows asked for
        EQ(cudaMemcpyAsync(im->h_tops, im->tops, (size_t)im->n_tops * sizeof(TopRow),
                           cudaMemcpyDeviceToHost, im->stream));
    return cudaSuccess;
}

// Runs a sampler kernel over B requests (n_top overridden when >= 0) and
// brings the rows' results back into im->h_out: list_kernel (or the split
// path) when by_list, else sample_kernel, which leaves z', e and the marks
// of request i in row i of the scratch.
int run_kernel(struct backend *b, const struct backend_req *req, int B, int n_top_override,
               bool by_list, struct err *e)
{
    Impl *im = impl_of(b);
    int V = b->V;
    long total = stage_requests(b, req, B, n_top_override, e);
    if (total < 0 || reserve_rows(im, B, V, (size_t)total, e) < 0)
        return -1;
    // A failure from here on may leave counts behind: clear them next time.
    im->count_dirty = 1;
    int parts = by_list ? list_parts(im, B, V) : 1;
    if (parts > 1 && reserve_split(im, B, parts, e) < 0)
        return -1;
    CK(enqueue_requests(im, B, (size_t)total), "the sampler's settings");
    CK(enqueue_sampler(im, B, V, parts, by_list, im->ev0, im->ev1, true), "the sampler");
    CK(cudaStreamSynchronize(im->stream), "the sampler");
    if (elapsed(im, b, e) < 0)
        return -1;
    // A row refused at the start stops before its penalties, and one refused
    // after them has read (and cleared) every count: the counts are zero
    // again either way.
    im->count_dirty = 0;
    return row_error(im, req, B, by_list, e);
}

// After the list path has run B requests (list_ms of device time): the
// counts, or, when any row needs it, the full kernel for the whole batch.
int after_list(struct backend *b, const struct backend_req *req, int B, int n_top_override,
               double list_ms, struct err *e)
{
    Impl *im = impl_of(b);
    int longest = 0, fallback = 0;
    for (int i = 0; i < B; i++) {
        fallback |= im->h_out[i].fallback;
        longest = max(longest, im->h_out[i].n_cand);
    }
    if (!fallback) {
        b->by_list += B;
        b->longest_list = max(b->longest_list, longest);
        b->kernel_ms = list_ms;
        return 0;
    }
    b->by_full += B;
    if (run_kernel(b, req, B, n_top_override, false, e) < 0)
        return -1;
    b->kernel_ms += list_ms;
    return 0;
}

// The list kernel for B requests, and the full one for the whole batch
// when any row needs it (a list past CAND_MAX, a check that failed, a
// corner the design leaves to it); counted in b->by_list and b->by_full.
int run_sampler(struct backend *b, const struct backend_req *req, int B, int n_top_override,
                bool want_list, struct err *e)
{
    if (!want_list)
        return run_kernel(b, req, B, n_top_override, false, e);
    if (run_kernel(b, req, B, n_top_override, true, e) < 0)
        return -1;
    return after_list(b, req, B, n_top_override, b->kernel_ms, e);
}

// A row's result as the host gives it (struct backend_res), from its
// RowOut and its best rows t.
void result_of(const RowOut *o, const TopRow *t, struct backend_res *r)
{
    double S = o->sum_exp, K = o->kept_sum;
    memset(r, 0, sizeof *r);
    r->id = o->id;
    r->sampled = o->sampled;
    r->u = o->u;
    r->final = K > 0 ? o->chosen_e / K : 0.0;
    r->max_z = o->max_z;
    r->sum_exp = S;
    r->kept_count = o->kept_count;
    r->kept_mass = K / S;
    // H = -sum p ln p = ln S - sum e (z - max) / S, with the host's log.
    r->entropy = log(S) - o->offset / S;
    r->entropy_final = K > 0 ? log(K) - o->kept_offset / K : 0.0;
    r->n_top = o->n_top;
    for (int k = 0; k < o->n_top; k++) {
        int m = t[k].mark;
        r->top[k].id = t[k].id;
        r->top[k].removed_by = m == kMarkKept ? TRACE_KEPT : m - 1;
        r->top[k].z = t[k].z;
        r->top[k].prob = t[k].e / S;
        r->top[k].final = m == kMarkKept && K > 0 ? t[k].e / K : 0.0;
    }
}

// Request q's per-token arrays (kept_out, final_out) from row i of the full
// kernel's scratch, through host rows *fe and *fm of V (made on first use;
// the caller frees them).
int per_token_out(Impl *im, const struct backend_req *q, int i, int V, double K, double **fe,
                  uint8_t **fm, struct err *e)
{
    if (!*fe) {
        *fe = static_cast<double *>(malloc((size_t)V * sizeof **fe));
        *fm = static_cast<uint8_t *>(malloc((size_t)V));
        if (!*fe || !*fm)
            return err_set(e, ERR_SYSTEM, "out of memory for a row of %d tokens", V);
    }
    size_t off = (size_t)i * (size_t)V;
    CK(cudaMemcpyAsync(*fe, im->e + off, (size_t)V * sizeof(double), cudaMemcpyDeviceToHost,
                       im->stream),
       "cudaMemcpyAsync");
    CK(cudaMemcpyAsync(*fm, im->mark + off, (size_t)V, cudaMemcpyDeviceToHost, im->stream),
       "cudaMemcpyAsync");
    CK(cudaStreamSynchronize(im->stream), "cudaMemcpyAsync");
    for (int v = 0; v < V; v++) {
        int kept = (*fm)[v] == kMarkKept;
        if (q->kept_out)
            q->kept_out[v] = (uint8_t)kept;
        if (q->final_out)
            q->final_out[v] = kept && K > 0 ? (*fe)[v] / K : 0.0;
    }
    return 0;
}

int cuda_sample(struct backend *b, const struct backend_req *req, int B, struct backend_res *res,
                struct err *e)
{
    Impl *im = impl_of(b); // backend_sample checked B and every request
    bool per_token = false; // final_out or kept_out: the full kernel's per-token arrays
    for (int i = 0; i < B; i++)
        per_token |= req[i].final_out || req[i].kept_out;
    if (run_sampler(b, req, B, -1, !per_token, e) < 0)
        return -1;
    float kernel_ms = (float)b->kernel_ms;
    double *fe = nullptr;
    uint8_t *fm = nullptr;
    int rc = 0;
    for (int i = 0; i < B && rc == 0; i++) {
        result_of(&im->h_out[i], im->h_tops + im->h_params[i].top_at, &res[i]);
        if (req[i].final_out || req[i].kept_out)
            rc = per_token_out(im, &req[i], i, b->V, im->h_out[i].kept_sum, &fe, &fm, e);
    }
    free(fe);
    free(fm);
    b->kernel_ms = kernel_ms;
    return rc;
}

// What a step's graph depends on: its sizes and every buffer it touches.
StepKey step_key(const Impl *im, int B, int V, int parts, size_t win_n)
{
    StepKey k;
    memset(&k, 0, sizeof k);
    k.B = B;
    k.V = V;
    k.d = im->head_d;
    k.parts = parts;
    k.n_tops = im->n_tops;
    k.win_n = win_n;
    const void *p[] = { im->h,       im->h_h,       im->x,          im->w,         im->logits,
                        im->params,  im->h_params,  im->win,        im->h_win,     im->count,
                        im->out,     im->h_out,     im->tops,       im->h_tops,    im->l_found,
                        im->l_rows,  im->l_hist,    im->l_slot_id,  im->l_slot_cnt,
                        im->l_slot_lg, im->l_slot_n };
    static_assert(sizeof p <= sizeof k.ptr, "StepKey holds every buffer");
    memcpy(k.ptr, p, sizeof p);
    return k;
}

// A whole step on the stream: the settings and windows in, the head (the
// vectors in, ev0, the RMSNorm, the GEMV), ev_head, the list path's
// launches, ev1, the results out.
cudaError_t enqueue_step(Impl *im, int B, int V, int parts, size_t win_n)
{
    EQ(enqueue_requests(im, B, win_n));
    EQ(enqueue_head(im, B));
    return enqueue_sampler(im, B, V, parts, true, im->ev_head, im->ev1, false);
}

// backend_step: the head and the list path as one CUDA graph and one wait
// (the full kernel after it only for rows the list leaves); the two calls
// when a request wants every token's results, which only the full kernel
// gives.
int cuda_step(struct backend *b, const float *h, int B, const struct backend_req *req,
              struct backend_res *res, struct err *e)
{
    Impl *im = impl_of(b); // backend_step checked B, the head and every request
    bool per_token = false;
    for (int i = 0; i < B; i++)
        per_token |= req[i].final_out || req[i].kept_out;
    if (per_token) {
        if (cuda_logits(b, h, B, e) < 0)
            return -1;
        b->head_ms = b->kernel_ms;
        return cuda_sample(b, req, B, res, e);
    }
    int V = im->head_V;
    if (stage_head(b, h, B, e) < 0)
        return -1;
    long total = stage_requests(b, req, B, -1, e);
    size_t win_n = total > 0 ? win_room((size_t)total) : 0;
    if (total < 0 || reserve_rows(im, B, V, win_n, e) < 0)
        return -1;
    im->count_dirty = 1; // as in run_kernel
    int parts = list_parts(im, B, V);
    if (parts > 1 && reserve_split(im, B, parts, e) < 0)
        return -1;
    CK(replay(im, im->step, step_key(im, B, V, parts, win_n),
              [&] { return enqueue_step(im, B, V, parts, win_n); }),
       "the step");
    CK(cudaStreamSynchronize(im->stream), "the step");
    if (head_times(im, b, im->ev_head, &b->head_ms, e) < 0 ||
        event_ms(im->ev_head, im->ev1, &b->kernel_ms, e) < 0)
        return -1;
    im->count_dirty = 0;
    b->V = V;
    b->rows = B;
    if (row_error(im, req, B, true, e) < 0 || after_list(b, req, B, -1, b->kernel_ms, e) < 0)
        return -1;
    for (int i = 0; i < B; i++)
        result_of(&im->h_out[i], im->h_tops + im->h_params[i].top_at, &res[i]);
    return 0;
}

unsigned grid_for(size_t n, unsigned threads)
{
    size_t g = (n + threads - 1) / threads;
    return (unsigned)(g < 1 ? 1 : g > kGridCap ? kGridCap : g);
}

// Device room for n draws from a row of V: the sort's keys and ids, the
// weights and their scans, the results and CUB's temporary space; grows
// only.
int reserve_draws(Impl *im, int V, int n, struct err *e)
{
    size_t Vs = (size_t)V;
    if (Vs > im->draw_V_cap || !im->keys_in) {
        free_draw_space(im);
        im->draw_V_cap = 0;
        if (dev_alloc(reinterpret_cast<void **>(&im->keys_in), Vs * 8, "sort keys", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->keys_out), Vs * 8, "sort keys", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->ids_in), Vs * 4, "sort ids", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->ids_out), Vs * 4, "sort ids", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->wp), Vs * 8, "draw weights", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->wk), Vs * 8, "draw weights", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->cp), Vs * 8, "cumulative sums", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->ck), Vs * 8, "cumulative sums", e) < 0 ||
            dev_alloc(reinterpret_cast<void **>(&im->last), 2 * sizeof(int), "draw ranks", e) < 0)
            return -1;
        im->draw_V_cap = Vs;
    }
    if (reserve(im->draw_ids, im->draw_n_cap, 2 * (size_t)n, "draw results", e) < 0)
        return -1;
    size_t sort_bytes = 0, scan_bytes = 0;
    CK(cub::DeviceRadixSort::SortPairsDescending(nullptr, sort_bytes, im->keys_in, im->keys_out,
                                                 im->ids_in, im->ids_out, V, 0, 64, im->stream),
       "cub::DeviceRadixSort");
    CK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, im->wp, im->cp, V, im->stream),
       "cub::DeviceScan");
    size_t tmp = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    return reserve(im->cub_tmp, im->cub_cap, tmp, "sort space", e);
}

int cuda_draws(struct backend *b, const struct backend_req *req, int n, int *kept_ids,
               int *plain_ids, struct err *e)
{
    Impl *im = impl_of(b); // backend_draws checked n and the request
    // The request's chain, into row 0 of the scratch.
    if (run_sampler(b, req, 1, 0, false, e) < 0)
        return -1;
    float chain_ms = (float)b->kernel_ms;
    const RowOut o = im->h_out[0];
    if (!kept_ids && !plain_ids)
        return 0;
    int V = b->V;
    size_t Vs = (size_t)V;
    if (reserve_draws(im, V, n, e) < 0)
        return -1;
    CK(cudaEventRecord(im->ev0, im->stream), "cudaEventRecord");
    draw_keys_kernel<<<grid_for(Vs, kDrawThreads), kDrawThreads, 0, im->stream>>>(
        im->z, im->keys_in, im->ids_in, V);
    CK(cudaGetLastError(), "draw_keys_kernel launch");
    // Stable: equal z' keep the ascending ids they came in with.
    size_t bytes = im->cub_cap;
    CK(cub::DeviceRadixSort::SortPairsDescending(im->cub_tmp, bytes, im->keys_in, im->keys_out,
                                                 im->ids_in, im->ids_out, V, 0, 64, im->stream),
       "cub::DeviceRadixSort");
    const int init_last[2] = { -1, -1 };
    CK(cudaMemcpyAsync(im->last, init_last, sizeof init_last, cudaMemcpyHostToDevice, im->stream),
       "cudaMemcpyAsync");
    draw_weights_kernel<<<grid_for(Vs, kDrawThreads), kDrawThreads, 0, im->stream>>>(
        im->ids_out, im->z, im->e, im->mark, rule_draw_shift(V), V, im->wp, im->wk, im->last);
    CK(cudaGetLastError(), "draw_weights_kernel launch");
    bytes = im->cub_cap;
    CK(cub::DeviceScan::InclusiveSum(im->cub_tmp, bytes, im->wp, im->cp, V, im->stream),
       "cub::DeviceScan");
    bytes = im->cub_cap;
    CK(cub::DeviceScan::InclusiveSum(im->cub_tmp, bytes, im->wk, im->ck, V, im->stream),
       "cub::DeviceScan");
    int *d_plain = plain_ids ? im->draw_ids : nullptr;
    int *d_kept = kept_ids ? im->draw_ids + n : nullptr;
    draw_kernel<<<grid_for((size_t)n, kDrawThreads), kDrawThreads, 0, im->stream>>>(
        im->cp, im->ck, im->ids_out, im->last, V, n, req->s.seed, req->step, req->row,
        o.sampled ? -1 : o.id, d_plain, d_kept);
    CK(cudaGetLastError(), "draw_kernel launch");
    CK(cudaEventRecord(im->ev1, im->stream), "cudaEventRecord");
    if (plain_ids)
        CK(cudaMemcpyAsync(plain_ids, d_plain, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost,
                           im->stream),
           "cudaMemcpyAsync");
    if (kept_ids)
        CK(cudaMemcpyAsync(kept_ids, d_kept, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost,
                           im->stream),
           "cudaMemcpyAsync");
    CK(cudaStreamSynchronize(im->stream), "draw_kernel");
    if (elapsed(im, b, e) < 0)
        return -1;
    b->kernel_ms += chain_ms;
    return 0;
}

} // namespace

extern "C" {

// The kernels run the five stages the lessons began with; a request that
// turns on another one is refused with its name (backend.c) until they do.
const struct backend_ops backend_cuda_ops = {
    .name = "CUDA",
    .stages = (1u << STAGE_PENALTY) | (1u << STAGE_TEMPERATURE) | (1u << STAGE_TOP_K) |
              (1u << STAGE_TOP_P) | (1u << STAGE_MIN_P),
    .file_heads = 0, // a model file's head stays on the CPU for now (backend.c moves auto there)
    .max_vocab = BACKEND_CUDA_MAX_VOCAB, // the kernels' int indices (backend.h, the asserts above)
    .open = cuda_open,
    .close = cuda_close,
    .head = cuda_head,
    .logits = cuda_logits,
    .set_logits = cuda_set_logits,
    .get_logits = cuda_get_logits,
    .sample = cuda_sample,
    .draws = cuda_draws,
    .step = cuda_step,
};

int backend_cuda_probe(char *why, size_t n)
{
    char buf[BACKEND_WHY_MAX];
    int ok = 0;
    // The runtime's own error for a missing driver is vague; say it plainly.
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver) {
        snprintf(buf, sizeof buf, "no CUDA device: driver not found (libcuda.so.1)");
    } else {
        dlclose(driver);
        int count = 0;
        cudaError_t rc = cudaGetDeviceCount(&count);
        if (rc != cudaSuccess) {
            cudaGetLastError();
            snprintf(buf, sizeof buf, "no CUDA device: %s", cudaGetErrorString(rc));
        } else if (count <= 0) {
            snprintf(buf, sizeof buf, "no CUDA device: none found");
        } else {
            buf[0] = '\0';
            ok = 1;
        }
    }
    if (why && n > 0)
        snprintf(why, n, "%s", buf);
    return ok;
}

// The device's peak memory bandwidth in GB/s (from its memory clock and bus
// width), for the benchmarks; 0 when b is not an open CUDA backend or the
// attributes were not to be had.
double backend_cuda_peak_gbps(const struct backend *b)
{
    if (!b || b->ops != &backend_cuda_ops || !b->impl)
        return 0.0;
    return static_cast<const Impl *>(b->impl)->peak_gbps;
}

// The SM clock and the memory clock in MHz and the SM count (0: unknown),
// for the benchmark's header; all 0 when b is not an open CUDA backend.
void backend_cuda_figures(const struct backend *b, int *sm_mhz, int *mem_mhz, int *sms)
{
    const Impl *im = b && b->ops == &backend_cuda_ops ? static_cast<const Impl *>(b->impl) : nullptr;
    *sm_mhz = im ? im->sm_mhz : 0;
    *mem_mhz = im ? im->mem_mhz : 0;
    *sms = im ? im->sms : 0;
}

} // extern "C"
