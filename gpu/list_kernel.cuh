// list_kernel.cuh - the sampler's two-pass design (core/candidates.h) on
// the device, one block per request row: pass 1 over the float logits for
// the checks, the largest z' of each version, the sums (kept online, each
// thread's folded at its own largest z') and the bucket counts; warp 0
// finds the buckets the list starts at; pass 2 lists the candidates in id
// order (each warp a contiguous chunk, counted first, then written at its
// offset); the chain runs on the list. backend/backend_spec.c is its
// specification, step for step, and what check_gpu --self checks on every
// machine. A row whose list would pass CAND_MAX, or that the design cannot
// take, comes back with `fallback` set: the host runs the full kernel.
//
// Included by backend_cuda.cu inside its namespace, after sample_kernel:
// it uses RowParams, RowOut, dev_fast_exp and the block helpers.

constexpr int kCand = CAND_MAX;
static_assert(kCand <= kThreads, "rank_list gives each thread one candidate");

struct ListShared {
    union {
        struct {
            uint32_t cut[CAND_BUCKETS], fin[CAND_BUCKETS];
        } h; // pass 1's counts, dead once the buckets are found
        struct {
            int id[kCand], cnt[kCand], order[kCand];
            float lg[kCand];
            double zv[kCand], ev[kCand];
            uint8_t mark[kCand];
        } l; // the list, from pass 2 on
    } u;
    double red_d[kWarps], red_s[kWarps], red_o[kWarps];
    int red_i[kWarps];
    int warp_n[kWarps], warp_base[kWarps];
    int n, flag, sel;
    double K, offset_kept;
};
static_assert(sizeof(ListShared) + sizeof(RowParams) <= 48 * 1024,
              "list_kernel's static shared memory fits the 48 KB every device gives");

// A thread's running softmax sums: s = sum e^(z - m), o = sum e^(z - m)(z - m).
struct Run {
    double m, s, o;
};

__device__ inline void run_add(Run &r, double z)
{
    if (z == -INFINITY)
        return;
    if (r.m == -INFINITY) {
        r = { z, 1.0, 0.0 };
    } else if (z <= r.m) {
        double e = dev_fast_exp(z - r.m);
        r.s = __dadd_rn(r.s, e);
        r.o = __dadd_rn(r.o, e > 0.0 ? __dmul_rn(e, z - r.m) : 0.0);
    } else { // z becomes the largest: the sums so far scale by e^(m - z)
        double w = dev_fast_exp(r.m - z);
        r.o = __dmul_rn(w, __dadd_rn(r.o, __dmul_rn(r.m - z, r.s)));
        r.s = __dadd_rn(__dmul_rn(w, r.s), 1.0);
        r.m = z;
    }
}

// fast_vec.c's fold: b into a, each at its own largest z'.
__device__ inline void run_fold(Run &a, Run b)
{
    if (b.m == -INFINITY)
        return;
    if (a.m == -INFINITY) {
        a = b;
    } else if (b.m <= a.m) {
        double w = dev_fast_exp(b.m - a.m);
        a.s = __dadd_rn(a.s, __dmul_rn(w, b.s));
        a.o = __dadd_rn(a.o, __dmul_rn(w, __dadd_rn(b.o, __dmul_rn(b.m - a.m, b.s))));
    } else {
        double w = dev_fast_exp(a.m - b.m);
        a.o = __dadd_rn(__dmul_rn(w, __dadd_rn(a.o, __dmul_rn(a.m - b.m, a.s))), b.o);
        a.s = __dadd_rn(__dmul_rn(w, a.s), b.s);
        a.m = b.m;
    }
}

// The block's sums, folded in a fixed order (lanes by a tree, then the
// warps in order): the same bits on every run.
__device__ Run block_run(Run r, ListShared &s)
{
    for (int o = 16; o > 0; o >>= 1) {
        Run t = { __shfl_xor_sync(kFull, r.m, o), __shfl_xor_sync(kFull, r.s, o),
                  __shfl_xor_sync(kFull, r.o, o) };
        // Both lanes of a pair fold the higher into the lower: the same
        // value in both, whatever the pair, so a fixed tree.
        bool high = threadIdx.x & o;
        Run lo = high ? t : r, hi = high ? r : t;
        run_fold(lo, hi);
        r = lo;
    }
    if ((threadIdx.x & 31) == 0) {
        s.red_d[threadIdx.x >> 5] = r.m;
        s.red_s[threadIdx.x >> 5] = r.s;
        s.red_o[threadIdx.x >> 5] = r.o;
    }
    __syncthreads();
    Run t = { -INFINITY, 0.0, 0.0 };
    for (int w = 0; w < kWarps; w++)
        run_fold(t, { s.red_d[w], s.red_s[w], s.red_o[w] });
    __syncthreads();
    return t;
}

__device__ inline double lmax(double a, double b)
{
    return b > a ? b : a;
}

// Adds one to bucket b of a histogram, once per distinct bucket per warp
// (the bulk of a row falls in a few buckets). Every lane calls it; b < 0
// adds nothing.
__device__ inline void hist_add(uint32_t *h, int b)
{
    unsigned peers = __match_any_sync(kFull, b);
    if (b >= 0 && (threadIdx.x & 31) == __ffs(peers) - 1)
        atomicAdd(&h[b], (uint32_t)__popc(peers));
}

// What pass 1 finds in one thread.
struct Pass1 {
    int bad_start, n_finite;
    int bad[CAND_VERSIONS];      // the lowest id out of range after value stage v - 1
    double zmax[CAND_VERSIONS];  // the largest |z'| not -inf before value stage v - 1
    double max[CAND_VERSIONS];
    Run fin, cut;
};

// One token in pass 1: its versions, the checks, the maxima, the sums
// and the counts. hist < 0: none for a masked token (every lane calls).
__device__ void pass1_token(const RowParams &p, const float *lg, const int *count, int i, Pass1 &a,
                            int &dc, int &df)
{
    const cand_plan &P = p.plan;
    dc = df = -1;
    if (i >= p.V)
        return;
    double z[CAND_VERSIONS];
    int c = p.penalty_active ? count[i] : 0;
    for (int v = 0; v < P.n_versions; v++)
        z[v] = cand_z(&P, lg[i], c, v);
    if (!(z[0] == -INFINITY) && !rule_z_in_range(z[0]) && i < a.bad_start)
        a.bad_start = i;
    if (z[0] == -INFINITY)
        return;
    a.n_finite++;
    for (int v = 0; v < P.n_versions; v++) {
        a.max[v] = lmax(a.max[v], z[v]);
        if (v > 0) {
            a.zmax[v] = lmax(a.zmax[v], fabs(z[v - 1]));
            if (!rule_z_in_range(z[v]) && i < a.bad[v])
                a.bad[v] = i;
        }
    }
    run_add(a.fin, z[P.final]);
    run_add(a.cut, z[P.cut_version]);
    dc = cand_digit(z[P.cut_version]);
    df = cand_digit(z[P.final]);
}

// What bucket b adds to a walk: its count, or (weighted) a lower bound of
// its mass at max, as cand_mass_bucket's w_lo.
__device__ inline double bucket_weight(const uint32_t *cnt, int b, bool weighted, double max)
{
    double c = (double)cnt[b];
    return weighted ? c * (dev_fast_exp(cand_floor(b) - max) * CAND_MARGIN) : c;
}

// The highest bucket from which the counts (weighted: lower mass bounds at
// max) from the top reach target, CAND_NONE if none: warp 0, each lane a
// share of 64 buckets, the shares added from the top across the lanes, then
// the lane whose share reaches it walks its buckets. The result in s.sel.
__device__ void warp_bucket(ListShared &s, const uint32_t *cnt, bool weighted, double max,
                            double target)
{
    if (threadIdx.x >= 32)
        return;
    constexpr int per = CAND_BUCKETS / 32;
    int lane = threadIdx.x, hi = CAND_BUCKETS - 1 - lane * per;
    double mine = 0.0;
    for (int j = 0; j < per; j++)
        mine += bucket_weight(cnt, hi - j, weighted, max);
    double incl = mine;
    for (int o = 1; o < 32; o <<= 1) {
        double t = __shfl_up_sync(kFull, incl, o);
        if (lane >= o)
            incl += t;
    }
    unsigned hit = __ballot_sync(kFull, incl >= target);
    if (hit == 0) {
        if (lane == 0)
            s.sel = CAND_NONE;
        return;
    }
    if (lane != __ffs(hit) - 1)
        return;
    double run = incl - mine;
    int sel = hi - per + 1;
    for (int j = 0; j < per; j++) {
        run += bucket_weight(cnt, hi - j, weighted, max);
        if (run >= target) {
            sel = hi - j;
            break;
        }
    }
    s.sel = sel;
}

// warp_bucket for the whole block: the bucket, the same in every thread.
__device__ int find_bucket(ListShared &s, const uint32_t *cnt, bool weighted, double max,
                           double target)
{
    warp_bucket(s, cnt, weighted, max, target);
    __syncthreads();
    int b = s.sel;
    __syncthreads();
    return b;
}

// Where the list starts (backend_spec.c's list_start).
struct ListStart {
    int cut_bucket, row_bucket, min_p;
};

__device__ ListStart list_start(const RowParams &p, ListShared &s, const Pass1 &a, int n_rows)
{
    const cand_plan &P = p.plan;
    ListStart k = { CAND_NONE, CAND_BUCKETS, 0 };
    if (n_rows > 0)
        k.row_bucket = find_bucket(s, s.u.h.fin, false, 0.0, (double)n_rows);
    int st = P.first_cut >= 0 ? P.st[P.first_cut] : STAGE_COUNT;
    if (st == STAGE_TEMPERATURE)
        k.cut_bucket = find_bucket(s, s.u.h.cut, false, 0.0, 1.0);
    else if (st == STAGE_TOP_K)
        k.cut_bucket = find_bucket(s, s.u.h.cut, false, 0.0, (double)p.top_k);
    else if (st == STAGE_TOP_P)
        k.cut_bucket = find_bucket(s, s.u.h.cut, true, a.max[P.cut_version],
                                   __dmul_rn(p.top_p, a.cut.s));
    else if (st == STAGE_MIN_P)
        k.min_p = 1;
    else
        k.cut_bucket =
            find_bucket(s, s.u.h.fin, true, a.max[P.final],
                        __dmul_rn(philox_uniform(p.seed, p.step, p.row, 0), a.fin.s));
    return k;
}

// Whether token i goes on the list.
__device__ inline bool on_list(const RowParams &p, const ListStart &k, const double *max,
                               const float *lg, const int *count, int i)
{
    const cand_plan &P = p.plan;
    int c = p.penalty_active ? count[i] : 0;
    double zc = cand_z(&P, lg[i], c, P.cut_version), zf = cand_z(&P, lg[i], c, P.final);
    if (zf == -INFINITY)
        return false;
    bool in = k.min_p ? rule_min_p_keeps(zc, max[P.cut_version], p.min_p_bar)
                      : k.cut_bucket == CAND_NONE || cand_digit(zc) >= k.cut_bucket;
    return in || cand_digit(zf) >= k.row_bucket;
}

// Pass 2: the list in id order. Warp w takes a contiguous chunk, counts its
// tokens, and after the warps' offsets are known writes them in order.
// Returns the list's length, or -1 past kCand.
__device__ int pass2(const RowParams &p, ListShared &s, const ListStart &k, const double *max,
                     const float *lg, const int *count)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int chunk = ((p.V + kWarps - 1) / kWarps + 31) / 32 * 32;
    int lo = warp * chunk, hi = min(p.V, lo + chunk), n = 0;
    for (int base = lo; base < hi; base += 32) {
        int i = base + lane;
        n += __popc(__ballot_sync(kFull, i < hi && on_list(p, k, max, lg, count, i)));
    }
    if (lane == 0)
        s.warp_n[warp] = n;
    __syncthreads();
    if (threadIdx.x == 0) {
        int t = 0;
        for (int w = 0; w < kWarps; w++) {
            s.warp_base[w] = t;
            t += s.warp_n[w];
        }
        s.n = t;
    }
    __syncthreads();
    int total = s.n;
    if (total > kCand)
        return -1;
    int at = s.warp_base[warp];
    for (int base = lo; base < hi; base += 32) {
        int i = base + lane;
        bool in = i < hi && on_list(p, k, max, lg, count, i);
        unsigned b = __ballot_sync(kFull, in);
        if (in) {
            int j = at + __popc(b & ((1u << lane) - 1u));
            s.u.l.id[j] = i;
            s.u.l.lg[j] = lg[i];
            s.u.l.cnt[j] = p.penalty_active ? count[i] : 0;
            s.u.l.mark[j] = kMarkKept;
        }
        at += __popc(b);
    }
    __syncthreads();
    return total;
}

// zv = z' at version v for every candidate, then the rank order of the
// kept ones (all of them without kept_only) into order; returns how many.
__device__ int rank_list(const RowParams &p, ListShared &s, int n, int v, bool kept_only)
{
    int j = threadIdx.x;
    bool in = j < n && (!kept_only || s.u.l.mark[j] == kMarkKept);
    if (j < n)
        s.u.l.zv[j] = cand_z(&p.plan, s.u.l.lg[j], s.u.l.cnt[j], v);
    __syncthreads();
    int m = block_sum_in(in ? 1 : 0, s.red_i);
    if (in) {
        double z = s.u.l.zv[j];
        int id = s.u.l.id[j], rank = 0;
        for (int q = 0; q < n; q++)
            rank += (!kept_only || s.u.l.mark[q] == kMarkKept) &&
                    rule_ranks_before(s.u.l.zv[q], s.u.l.id[q], z, id);
        s.u.l.order[rank] = j;
    }
    __syncthreads();
    return m;
}

// Marks every kept candidate ranked after order[last] (keep_ties: only the
// smaller z'). Thread 0.
__device__ void list_cut_after(ListShared &s, int m, int last, bool keep_ties, int stage)
{
    double zc = s.u.l.zv[s.u.l.order[last]];
    for (int q = last + 1; q < m; q++) {
        int j = s.u.l.order[q];
        if (!keep_ties || s.u.l.zv[j] < zc)
            s.u.l.mark[j] = (uint8_t)(1 + stage);
    }
}

// One cutting stage on the kept candidates (backend_spec.c's cut_stage).
// first: the first cut, every finite token still kept. Sets s.flag when
// top-p's cut is off the list (cannot be: the buckets promise it).
__device__ void list_stage(const RowParams &p, ListShared &s, const Pass1 &a, int n, int st,
                           int v, bool first)
{
    int m = rank_list(p, s, n, v, true);
    if (m == 0)
        return;
    if (st == STAGE_TOP_P && p.top_p < 1.0 && threadIdx.x < n) // e at v, for the walk
        s.u.l.ev[threadIdx.x] = dev_fast_exp(s.u.l.zv[threadIdx.x] - a.max[v]);
    __syncthreads();
    if (threadIdx.x == 0) {
        if (st == STAGE_TEMPERATURE) {
            list_cut_after(s, m, 0, false, st);
        } else if (st == STAGE_TOP_K) {
            if (p.top_k > 0 && p.top_k < (first ? a.n_finite : m))
                list_cut_after(s, m, p.top_k - 1, p.keep_ties != 0, st);
        } else if (st == STAGE_TOP_P && p.top_p < 1.0) {
            double sum = 0.0; // the kept mass in id order, as the CPU's alive list
            for (int j = 0; j < n && !first; j++)
                sum = __dadd_rn(sum, s.u.l.mark[j] == kMarkKept ? s.u.l.ev[j] : 0.0);
            double target = __dmul_rn(p.top_p, first ? a.cut.s : sum), run = 0.0;
            int q = 0;
            for (; q < m; q++) {
                double e = s.u.l.ev[s.u.l.order[q]];
                if (__dadd_rn(run, e) >= target)
                    break;
                run = __dadd_rn(run, e);
            }
            if (q < m)
                list_cut_after(s, m, q, false, st);
            else if (first && n < a.n_finite)
                s.flag = 1;
        } else if (st == STAGE_MIN_P && p.min_p > 0.0) {
            double max = s.u.l.zv[s.u.l.order[0]];
            for (int q = 1; q < m; q++)
                if (!rule_min_p_keeps(s.u.l.zv[s.u.l.order[q]], max, p.min_p_bar))
                    s.u.l.mark[s.u.l.order[q]] = (uint8_t)(1 + STAGE_MIN_P);
        }
    }
    __syncthreads();
}

// The chain on the list (run_list); returns whether any stage cut.
__device__ bool list_chain(const RowParams &p, ListShared &s, const Pass1 &a, int n)
{
    const cand_plan &P = p.plan;
    bool cut = false;
    for (int c = 0; c < P.n; c++) {
        int st = P.st[c];
        if (st == STAGE_PENALTY || (st == STAGE_TEMPERATURE && p.temperature != 0.0))
            continue; // a value stage: its z' are the next version's
        if (!cut && c != P.first_cut)
            continue;
        list_stage(p, s, a, n, st, P.version[c], !cut);
        cut = true;
    }
    return cut;
}

// The end of the chain (backend_spec.c's statistics and result): the kept
// mass, the token, the rows on screen, into out.
__device__ void list_result(const RowParams &p, ListShared &s, const Pass1 &a, int n, bool cut,
                            RowOut *out)
{
    const cand_plan &P = p.plan;
    int vf = P.final;
    int m = rank_list(p, s, n, vf, true);
    if (threadIdx.x < n)
        s.u.l.ev[threadIdx.x] = dev_fast_exp(s.u.l.zv[threadIdx.x] - a.max[vf]);
    __syncthreads();
    if (threadIdx.x == 0) {
        double K = 0.0, ko = 0.0;
        for (int j = 0; j < n; j++) { // in id order, as the CPU's alive list
            double e = s.u.l.ev[j];
            if (s.u.l.mark[j] != kMarkKept)
                continue;
            K = __dadd_rn(K, e);
            ko = __dadd_rn(ko, e > 0.0 ? __dmul_rn(e, s.u.l.zv[j] - a.max[vf]) : 0.0);
        }
        if (!cut) { // every finite token is kept, most of them off the list
            K = a.fin.s;
            ko = a.fin.o;
            m = a.n_finite;
        }
        int j = s.u.l.order[0];
        double u = 0.0;
        if (!P.greedy) {
            u = philox_uniform(p.seed, p.step, p.row, 0);
            double target = __dmul_rn(u, K), run = 0.0;
            int q = 0, kept = cut ? m : n;
            for (; q < kept; q++) {
                double e = s.u.l.ev[s.u.l.order[q]];
                if (__dadd_rn(run, e) > target)
                    break;
                run = __dadd_rn(run, e);
            }
            if (q == kept && !cut && n < a.n_finite)
                s.flag = 1; // the draw fell past the list: cannot be, by the buckets
            j = s.u.l.order[q < kept ? q : kept - 1];
        }
        out->id = s.u.l.id[j];
        out->sampled = !P.greedy;
        out->u = u;
        out->kept_count = m;
        out->kept_sum = K;
        out->kept_offset = ko;
        out->chosen_e = s.u.l.ev[j];
        out->max_z = a.max[vf];
        out->sum_exp = a.fin.s;
        out->offset = a.fin.o;
    }
    __syncthreads();
    int all = rank_list(p, s, n, vf, false);
    int rows = min(p.n_top < p.V ? p.n_top : p.V, all);
    if (threadIdx.x < rows) {
        int j = s.u.l.order[threadIdx.x];
        out->top_id[threadIdx.x] = s.u.l.id[j];
        out->top_mark[threadIdx.x] = s.u.l.mark[j];
        out->top_z[threadIdx.x] = s.u.l.zv[j];
        out->top_e[threadIdx.x] = s.u.l.ev[j];
    }
    if (threadIdx.x == 0) {
        out->n_top = rows;
        out->error = kErrNone;
        out->error_token = -1;
        out->fallback = s.flag;
        out->n_cand = n;
    }
}

// Pass 1 for the whole block, the checks reported as sample_kernel does;
// false when the row stops (an error, or fallback set).
__device__ bool list_pass1(const RowParams &p, ListShared &s, const float *lg, const int *count,
                           Pass1 &a, RowOut *out)
{
    const cand_plan &P = p.plan;
    for (int b = threadIdx.x; b < 2 * CAND_BUCKETS; b += kThreads)
        (b < CAND_BUCKETS ? s.u.h.cut : s.u.h.fin)[b % CAND_BUCKETS] = 0;
    a.bad_start = INT_MAX;
    a.n_finite = 0;
    for (int v = 0; v < CAND_VERSIONS; v++) {
        a.bad[v] = INT_MAX;
        a.zmax[v] = 0.0;
        a.max[v] = -INFINITY;
    }
    a.fin = a.cut = { -INFINITY, 0.0, 0.0 };
    __syncthreads();
    for (int base = 0; base < p.V; base += kThreads) { // every lane runs each round
        int dc, df;
        pass1_token(p, lg, count, base + threadIdx.x, a, dc, df);
        hist_add(s.u.h.cut, dc);
        hist_add(s.u.h.fin, df);
    }
    a.bad_start = block_min_in(a.bad_start, s.red_i);
    a.n_finite = block_sum_in(a.n_finite, s.red_i);
    for (int v = 0; v < P.n_versions; v++) {
        a.max[v] = block_max_in(a.max[v], s.red_d);
        a.zmax[v] = block_max_in(a.zmax[v], s.red_d);
        a.bad[v] = block_min_in(a.bad[v], s.red_i);
    }
    a.fin = block_run(a.fin, s);
    a.cut = block_run(a.cut, s);
    // Any check that fails, or no finite token: the full kernel reports it
    // in its own words (the errors are rare; their wording lives there).
    bool stop = !p.list_ok || a.bad_start != INT_MAX || a.n_finite == 0;
    for (int v = 1; v < P.n_versions; v++)
        stop |= a.bad[v] != INT_MAX &&
                (P.value[v - 1] == STAGE_PENALTY || a.zmax[v] / p.temperature > RULE_Z_LIMIT);
    int c = P.first_cut;
    stop |= c >= 0 && P.st[c] == STAGE_TOP_K && p.top_k >= a.n_finite;
    stop |= (p.n_top < p.V ? p.n_top : p.V) > a.n_finite; // masked rows: listed by id there
    if (stop && threadIdx.x == 0)
        out->fallback = 1;
    return !stop;
}

// The whole step of one request by the list; fallback set when the full
// kernel must run it instead.
__global__ void __launch_bounds__(kThreads, 1)
    list_kernel(const RowParams *params, const int *windows, const float *logits, int V,
                int *counts, RowOut *outs)
{
    __shared__ ListShared s;
    __shared__ RowParams p;
    if (threadIdx.x == 0) {
        p = params[blockIdx.x];
        s.flag = 0;
    }
    __syncthreads();
    size_t off = (size_t)blockIdx.x * (size_t)V;
    int *count = counts + off;
    const int *win = windows + p.win_off;
    const float *lg = logits + (size_t)p.row * (size_t)V;
    RowOut *out = outs + blockIdx.x;
    if (threadIdx.x == 0) {
        out->fallback = 0;
        out->error = kErrNone;
    }
    if (p.penalty_active) {
        for (int j = threadIdx.x; j < p.win_len; j += kThreads)
            atomicAdd(&count[win[j]], 1);
        __syncthreads();
    }
    Pass1 a;
    bool go = list_pass1(p, s, lg, count, a, out);
    ListStart k = { CAND_NONE, CAND_BUCKETS, 0 };
    if (go)
        k = list_start(p, s, a, p.n_top < V ? p.n_top : V);
    __syncthreads(); // the counts are read; the list takes their memory
    int n = go ? pass2(p, s, k, a.max, lg, count) : 0;
    if (go && n < 0 && threadIdx.x == 0)
        out->fallback = 1;
    if (go && n >= 0) {
        bool cut = list_chain(p, s, a, n);
        list_result(p, s, a, n, cut, out);
    }
    __syncthreads(); // every count is read: zero them for the next run
    if (p.penalty_active)
        for (int j = threadIdx.x; j < p.win_len; j += kThreads)
            count[win[j]] = 0;
}
