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
static_assert(kCand <= kThreads, "rank_all and compact give each thread one candidate");

struct ListShared {
    union {
        struct {
            uint32_t cut[CAND_BUCKETS], fin[CAND_BUCKETS];
        } h; // pass 1's counts, dead once the buckets are found
        struct {
            int id[kCand], cnt[kCand];
            int order[kCand]; // every candidate in rank order at version ver
            int kord[kCand];  // the kept ones in rank order (kept_lists)
            int kid[kCand];   // the kept ones in id order
            float lg[kCand];
            double zv[kCand], ev[kCand]; // z' at ver, e^(z' - max) at ev_ver
            uint8_t mark[kCand];
        } l; // the list, from pass 2 on
    } u;
    double red_d[kWarps], red_s[kWarps], red_o[kWarps];
    int red_i[kWarps];
    int warp_n[kWarps], warp_base[kWarps];
    int n, m, flag, sel;
    int ver, ev_ver; // the version zv and order hold, and ev; -1: none
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
__device__ void pass1_token(const RowParams &p, const float *lg, const int *count, int i, int hi,
                            Pass1 &a, int &dc, int &df)
{
    const cand_plan &P = p.plan;
    dc = df = -1;
    if (i >= hi)
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

// Where pass 2 writes the list: shared memory, or a part's slot in global
// memory (the split kernels).
struct ListDest {
    int *id, *cnt;
    float *lg;
};

// Pass 2 over tokens [lo_seg, hi_seg): the list in id order into o. Warp w
// takes a contiguous chunk, counts its tokens, and after the warps' offsets
// are known writes them in order. Returns the list's length, or -1 past
// kCand (nothing written then).
__device__ int pass2(const RowParams &p, ListShared &s, const ListStart &k, const double *max,
                     const float *lg, const int *count, int lo_seg, int hi_seg, ListDest o)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int chunk = ((hi_seg - lo_seg + kWarps - 1) / kWarps + 31) / 32 * 32;
    int lo = lo_seg + warp * chunk, hi = min(hi_seg, lo + chunk), n = 0;
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
            o.id[j] = i;
            o.lg[j] = lg[i];
            o.cnt[j] = p.penalty_active ? count[i] : 0;
        }
        at += __popc(b);
    }
    __syncthreads();
    return total;
}

// Every candidate of the list in shared memory starts kept; nothing is
// ranked yet.
__device__ void list_keep_all(ListShared &s, int n)
{
    for (int j = threadIdx.x; j < n; j += kThreads)
        s.u.l.mark[j] = kMarkKept;
    if (threadIdx.x == 0)
        s.ver = s.ev_ver = -1;
    __syncthreads();
}

// val of every thread whose in is set into dst, in thread order (a block
// scan over the warps' ballots); returns how many, in every thread.
__device__ int compact(ListShared &s, bool in, int val, int *dst)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned b = __ballot_sync(kFull, in);
    if (lane == 0)
        s.warp_n[warp] = __popc(b);
    __syncthreads();
    if (warp == 0) {
        int c = lane < kWarps ? s.warp_n[lane] : 0, incl = c;
        for (int o = 1; o < 32; o <<= 1) {
            int t = __shfl_up_sync(kFull, incl, o);
            if (lane >= o)
                incl += t;
        }
        if (lane < kWarps)
            s.warp_base[lane] = incl - c;
        if (lane == 31)
            s.m = incl;
    }
    __syncthreads();
    if (in)
        dst[s.warp_base[warp] + __popc(b & ((1u << lane) - 1u))] = val;
    int total = s.m;
    __syncthreads();
    return total;
}

// zv = z' at version v for every candidate and their rank order into
// order, unless both already hold v: the stages of a chain mostly read
// one version, and a subset's order is the order filtered (kept_lists).
__device__ void rank_all(const RowParams &p, ListShared &s, int n, int v)
{
    if (s.ver == v)
        return;
    int j = threadIdx.x;
    if (j < n)
        s.u.l.zv[j] = cand_z(&p.plan, s.u.l.lg[j], s.u.l.cnt[j], v);
    __syncthreads();
    if (j < n) {
        double z = s.u.l.zv[j];
        int id = s.u.l.id[j], rank = 0;
        for (int q = 0; q < n; q++)
            rank += rule_ranks_before(s.u.l.zv[q], s.u.l.id[q], z, id);
        s.u.l.order[rank] = j;
    }
    __syncthreads(); // every thread has read s.ver
    if (threadIdx.x == 0) {
        s.ver = v;
        s.ev_ver = -1;
    }
    __syncthreads();
}

// ev = e^(z' - max) at version v (zv must hold v), unless it already does.
__device__ void exps_at(ListShared &s, const Pass1 &a, int n, int v)
{
    if (s.ev_ver == v)
        return;
    if (threadIdx.x < n)
        s.u.l.ev[threadIdx.x] = dev_fast_exp(s.u.l.zv[threadIdx.x] - a.max[v]);
    __syncthreads();
    if (threadIdx.x == 0)
        s.ev_ver = v;
    __syncthreads();
}

// The kept candidates in rank order into kord and in id order into kid;
// returns how many.
__device__ int kept_lists(ListShared &s, int n)
{
    int q = threadIdx.x;
    int j = q < n ? s.u.l.order[q] : 0;
    int m = compact(s, q < n && s.u.l.mark[j] == kMarkKept, j, s.u.l.kord);
    compact(s, q < n && s.u.l.mark[q] == kMarkKept, q, s.u.l.kid);
    return m;
}

// The kept mass in id order, as the CPU's alive list adds it (skipping a
// removed token adds nothing: its term is 0). Thread 0.
__device__ double kept_sum_by_id(const ListShared &s, int m)
{
    double sum = 0.0;
    for (int q = 0; q < m; q++)
        sum = __dadd_rn(sum, s.u.l.ev[s.u.l.kid[q]]);
    return sum;
}

// Top-p's cut on the m kept in rank order: the first rank from which the
// stage removes, m when it removes none (backend_spec.c's walk). Thread 0.
__device__ int top_p_cut(const RowParams &p, ListShared &s, const Pass1 &a, int n, int m,
                         bool first)
{
    double target = __dmul_rn(p.top_p, first ? a.cut.s : kept_sum_by_id(s, m)), run = 0.0;
    int q = 0;
    for (; q < m; q++) {
        double e = s.u.l.ev[s.u.l.kord[q]];
        if (__dadd_rn(run, e) >= target)
            break;
        run = __dadd_rn(run, e);
    }
    if (q == m && first && n < a.n_finite)
        s.flag = 1; // the cut lies off the list: cannot be, by the buckets
    return q < m ? q + 1 : m;
}

// One cutting stage on the kept candidates (backend_spec.c's cut_stage).
// first: the first cut, every finite token still kept. Sets s.flag when
// top-p's cut is off the list (cannot be: the buckets promise it). The
// marks are set by one thread per kept rank.
__device__ void list_stage(const RowParams &p, ListShared &s, const Pass1 &a, int n, int st,
                           int v, bool first)
{
    rank_all(p, s, n, v);
    int m = kept_lists(s, n);
    if (m == 0)
        return;
    const int *kord = s.u.l.kord;
    int from = m; // the first kept rank the stage removes
    bool ties = false;
    if (st == STAGE_TEMPERATURE) { // greedy
        from = 1;
    } else if (st == STAGE_TOP_K) {
        if (p.top_k > 0 && p.top_k < (first ? a.n_finite : m)) {
            from = p.top_k;
            ties = p.keep_ties != 0;
        }
    } else if (st == STAGE_TOP_P && p.top_p < 1.0) {
        exps_at(s, a, n, v);
        if (threadIdx.x == 0)
            s.sel = top_p_cut(p, s, a, n, m, first);
        __syncthreads();
        from = s.sel;
    } else if (st == STAGE_MIN_P && p.min_p > 0.0) {
        int q = threadIdx.x;
        if (q >= 1 && q < m &&
            !rule_min_p_keeps(s.u.l.zv[kord[q]], s.u.l.zv[kord[0]], p.min_p_bar))
            s.u.l.mark[kord[q]] = (uint8_t)(1 + STAGE_MIN_P);
    }
    // Every kept token ranked from `from` on (keep_ties: only below the last kept z').
    int q = threadIdx.x;
    if (from < m && q >= from && q < m) {
        int j = kord[q];
        if (!ties || s.u.l.zv[j] < s.u.l.zv[kord[from - 1]])
            s.u.l.mark[j] = (uint8_t)(1 + st);
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
// mass, the token, the rows on screen, into out and top.
__device__ void list_result(const RowParams &p, ListShared &s, const Pass1 &a, int n, bool cut,
                            RowOut *out, TopRow *top)
{
    const cand_plan &P = p.plan;
    int vf = P.final;
    rank_all(p, s, n, vf);
    int m = kept_lists(s, n);
    exps_at(s, a, n, vf);
    if (threadIdx.x == 0) {
        double K = 0.0, ko = 0.0;
        for (int q = 0; q < m; q++) { // in id order, as the CPU's alive list
            int j = s.u.l.kid[q];
            double e = s.u.l.ev[j];
            K = __dadd_rn(K, e);
            ko = __dadd_rn(ko, e > 0.0 ? __dmul_rn(e, s.u.l.zv[j] - a.max[vf]) : 0.0);
        }
        int kept = m; // the kept on the list: every one of them when nothing cut
        if (!cut) {   // every finite token is kept, most of them off the list
            K = a.fin.s;
            ko = a.fin.o;
            m = a.n_finite;
        }
        int j = s.u.l.kord[0];
        double u = 0.0;
        if (!P.greedy) {
            u = philox_uniform(p.seed, p.step, p.row, 0);
            double target = __dmul_rn(u, K), run = 0.0;
            int q = 0;
            for (; q < kept; q++) {
                double e = s.u.l.ev[s.u.l.kord[q]];
                if (__dadd_rn(run, e) > target)
                    break;
                run = __dadd_rn(run, e);
            }
            if (q == kept && !cut && n < a.n_finite)
                s.flag = 1; // the draw fell past the list: cannot be, by the buckets
            j = s.u.l.kord[q < kept ? q : kept - 1];
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
    // The rows on screen: every candidate in rank order (order holds vf).
    int rows = min(p.n_top < p.V ? p.n_top : p.V, n);
    if (threadIdx.x < rows) {
        int j = s.u.l.order[threadIdx.x];
        top[threadIdx.x] = { s.u.l.zv[j], s.u.l.ev[j], s.u.l.id[j], s.u.l.mark[j] };
    }
    __syncthreads(); // s.flag is final
    if (threadIdx.x == 0) {
        out->n_top = rows;
        out->error = kErrNone;
        out->error_token = -1;
        out->fallback = s.flag;
        out->n_cand = n;
    }
}

// Nothing found yet: what pass 1 starts each thread with.
__device__ void pass1_init(Pass1 &a)
{
    a.bad_start = INT_MAX;
    a.n_finite = 0;
    for (int v = 0; v < CAND_VERSIONS; v++) {
        a.bad[v] = INT_MAX;
        a.zmax[v] = 0.0;
        a.max[v] = -INFINITY;
    }
    a.fin = a.cut = { -INFINITY, 0.0, 0.0 };
}

// Pass 1 over tokens [lo, hi) by the block, the counts into s.u.h (zeroed
// here), the rest reduced into a, the same in every thread.
__device__ void pass1_block(const RowParams &p, ListShared &s, const float *lg, const int *count,
                            int lo, int hi, Pass1 &a)
{
    for (int b = threadIdx.x; b < 2 * CAND_BUCKETS; b += kThreads)
        (b < CAND_BUCKETS ? s.u.h.cut : s.u.h.fin)[b % CAND_BUCKETS] = 0;
    pass1_init(a);
    __syncthreads();
    for (int base = lo; base < hi; base += kThreads) { // every lane runs each round
        int dc, df;
        pass1_token(p, lg, count, base + threadIdx.x, hi, a, dc, df);
        hist_add(s.u.h.cut, dc);
        hist_add(s.u.h.fin, df);
    }
    a.bad_start = block_min_in(a.bad_start, s.red_i);
    a.n_finite = block_sum_in(a.n_finite, s.red_i);
    for (int v = 0; v < p.plan.n_versions; v++) {
        a.max[v] = block_max_in(a.max[v], s.red_d);
        a.zmax[v] = block_max_in(a.zmax[v], s.red_d);
        a.bad[v] = block_min_in(a.bad[v], s.red_i);
    }
    a.fin = block_run(a.fin, s);
    a.cut = block_run(a.cut, s);
}

// Whether the row, after pass 1, must go to the full kernel: a check that
// failed, or no finite token (the full kernel reports them in its own
// words: the errors are rare, and their wording lives there), or a corner
// the design leaves to it.
__device__ bool list_stop(const RowParams &p, const Pass1 &a)
{
    const cand_plan &P = p.plan;
    bool stop = !p.list_ok || a.bad_start != INT_MAX || a.n_finite == 0;
    for (int v = 1; v < P.n_versions; v++)
        stop |= a.bad[v] != INT_MAX &&
                (P.value[v - 1] == STAGE_PENALTY || a.zmax[v] / p.temperature > RULE_Z_LIMIT);
    int c = P.first_cut;
    stop |= c >= 0 && P.st[c] == STAGE_TOP_K && p.top_k >= a.n_finite;
    stop |= (p.n_top < p.V ? p.n_top : p.V) > a.n_finite; // masked rows: listed by id there
    return stop;
}

// Pass 1 for the whole row by one block; false when the row stops there
// (fallback set).
__device__ bool list_pass1(const RowParams &p, ListShared &s, const float *lg, const int *count,
                           Pass1 &a, RowOut *out)
{
    pass1_block(p, s, lg, count, 0, p.V, a);
    bool stop = list_stop(p, a);
    if (stop && threadIdx.x == 0)
        out->fallback = 1;
    return !stop;
}

// The whole step of one request by the list; fallback set when the full
// kernel must run it instead.
__global__ void __launch_bounds__(kThreads, 1)
    list_kernel(const RowParams *params, const int *windows, const float *logits, int V,
                int *counts, RowOut *outs, TopRow *tops)
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
    ListDest here = { s.u.l.id, s.u.l.cnt, s.u.l.lg };
    int n = go ? pass2(p, s, k, a.max, lg, count, 0, V, here) : 0;
    if (go && n < 0 && threadIdx.x == 0)
        out->fallback = 1;
    if (go && n >= 0) {
        list_keep_all(s, n);
        bool cut = list_chain(p, s, a, n);
        list_result(p, s, a, n, cut, out, tops + p.top_at);
    }
    __syncthreads(); // every count is read: zero them for the next run
    if (p.penalty_active)
        for (int j = threadIdx.x; j < p.win_len; j += kThreads)
            count[win[j]] = 0;
}

// --- Many blocks per row -----------------------------------------------------
//
// At a batch of at most kSplitBatch rows one block per row leaves most SMs
// idle (at batch 1, one SM of 132 reads the row). The split path spreads
// pass 1 and pass 2 of each row over `parts` blocks, one contiguous part of
// the row each: list_window_kernel counts the penalty window and zeroes the
// row's bucket counts; list_part1_kernel runs pass 1 on a part and adds its
// counts into the row's (integers: the same in any order); list_merge_kernel
// folds the parts' findings in their order (so the sums have the same bits
// on every run) and finds the buckets; list_part2_kernel lists a part's
// candidates into its own slot; list_chain_kernel gathers the slots in part
// order (the list in id order, as one block would have made it) and runs the
// chain. The results are list_kernel's but for the sums' grouping.

constexpr int kSplitBatch = 16;

struct ListRow {
    Pass1 a;
    ListStart k;
    int go;
};

// b's findings after a's (b's part follows a's in the row).
__device__ void pass1_merge(Pass1 &a, const Pass1 &b)
{
    a.bad_start = min(a.bad_start, b.bad_start);
    a.n_finite += b.n_finite;
    for (int v = 0; v < CAND_VERSIONS; v++) {
        a.bad[v] = min(a.bad[v], b.bad[v]);
        a.zmax[v] = lmax(a.zmax[v], b.zmax[v]);
        a.max[v] = lmax(a.max[v], b.max[v]);
    }
    run_fold(a.fin, b.fin);
    run_fold(a.cut, b.cut);
}

// Part q of parts of a row of V: tokens [lo, hi).
__device__ inline void part_range(int V, int parts, int q, int &lo, int &hi)
{
    int seg = (V + parts - 1) / parts;
    lo = min(V, q * seg);
    hi = min(V, lo + seg);
}

__global__ void list_window_kernel(const RowParams *params, const int *windows, int V, int *counts,
                                   uint32_t *hist)
{
    const RowParams &p = params[blockIdx.x];
    uint32_t *h = hist + (size_t)blockIdx.x * 2 * CAND_BUCKETS;
    for (int b = threadIdx.x; b < 2 * CAND_BUCKETS; b += blockDim.x)
        h[b] = 0;
    if (!p.penalty_active)
        return;
    int *count = counts + (size_t)blockIdx.x * V;
    const int *win = windows + p.win_off;
    for (int j = threadIdx.x; j < p.win_len; j += blockDim.x)
        atomicAdd(&count[win[j]], 1);
}

__global__ void __launch_bounds__(kThreads, 1)
    list_part1_kernel(const RowParams *params, const float *logits, int V, const int *counts,
                      int parts, Pass1 *found, uint32_t *hist)
{
    __shared__ ListShared s;
    __shared__ RowParams p;
    int r = blockIdx.x / parts, q = blockIdx.x % parts;
    if (threadIdx.x == 0)
        p = params[r];
    __syncthreads();
    int lo, hi;
    part_range(V, parts, q, lo, hi);
    Pass1 a;
    pass1_block(p, s, logits + (size_t)p.row * V, counts + (size_t)r * V, lo, hi, a);
    if (threadIdx.x == 0)
        found[blockIdx.x] = a;
    uint32_t *h = hist + (size_t)r * 2 * CAND_BUCKETS;
    for (int b = threadIdx.x; b < CAND_BUCKETS; b += kThreads) { // most buckets are empty
        if (s.u.h.cut[b])
            atomicAdd(&h[b], s.u.h.cut[b]);
        if (s.u.h.fin[b])
            atomicAdd(&h[CAND_BUCKETS + b], s.u.h.fin[b]);
    }
}

__global__ void __launch_bounds__(kThreads, 1)
    list_merge_kernel(const RowParams *params, int parts, const Pass1 *found,
                      const uint32_t *hist, ListRow *rows, RowOut *outs)
{
    __shared__ ListShared s;
    __shared__ RowParams p;
    __shared__ Pass1 merged;
    int r = blockIdx.x;
    if (threadIdx.x == 0) {
        p = params[r];
        Pass1 a = found[(size_t)r * parts];
        for (int q = 1; q < parts; q++)
            pass1_merge(a, found[(size_t)r * parts + q]);
        merged = a;
    }
    const uint32_t *h = hist + (size_t)r * 2 * CAND_BUCKETS;
    for (int b = threadIdx.x; b < 2 * CAND_BUCKETS; b += kThreads)
        (b < CAND_BUCKETS ? s.u.h.cut : s.u.h.fin)[b % CAND_BUCKETS] = h[b];
    __syncthreads();
    Pass1 a = merged;
    bool go = !list_stop(p, a);
    ListStart k = { CAND_NONE, CAND_BUCKETS, 0 };
    if (go)
        k = list_start(p, s, a, p.n_top < p.V ? p.n_top : p.V);
    if (threadIdx.x == 0) {
        rows[r] = { a, k, go ? 1 : 0 };
        outs[r].error = kErrNone;
        outs[r].fallback = !go;
    }
}

__global__ void __launch_bounds__(kThreads, 1)
    list_part2_kernel(const RowParams *params, const float *logits, int V, const int *counts,
                      int parts, const ListRow *rows, int *slot_id, int *slot_cnt, float *slot_lg,
                      int *slot_n)
{
    __shared__ ListShared s;
    __shared__ RowParams p;
    __shared__ ListRow row;
    int r = blockIdx.x / parts, q = blockIdx.x % parts;
    if (threadIdx.x == 0) {
        p = params[r];
        row = rows[r];
    }
    __syncthreads();
    if (!row.go)
        return; // the whole block: row is shared
    int lo, hi;
    part_range(V, parts, q, lo, hi);
    size_t at = (size_t)blockIdx.x * kCand;
    ListDest o = { slot_id + at, slot_cnt + at, slot_lg + at };
    int n = pass2(p, s, row.k, row.a.max, logits + (size_t)p.row * V, counts + (size_t)r * V, lo,
                  hi, o);
    if (threadIdx.x == 0)
        slot_n[blockIdx.x] = n;
}

// The row's slots into one list in shared memory, in part order; its
// length, or -1 when a slot overflowed or all of them pass kCand.
__device__ int gather_slots(ListShared &s, int r, int parts, const int *slot_id,
                            const int *slot_cnt, const float *slot_lg, const int *slot_n)
{
    if (threadIdx.x == 0) {
        int t = 0;
        for (int q = 0; q < parts && t >= 0; q++) {
            int n = slot_n[(size_t)r * parts + q];
            t = n < 0 || t + n > kCand ? -1 : t + n;
        }
        s.n = t;
    }
    __syncthreads();
    int total = s.n;
    for (int q = 0, off = 0; q < parts && total >= 0; q++) {
        size_t slot = (size_t)r * parts + q, at = slot * kCand;
        int n = slot_n[slot];
        for (int j = threadIdx.x; j < n; j += kThreads) {
            s.u.l.id[off + j] = slot_id[at + j];
            s.u.l.cnt[off + j] = slot_cnt[at + j];
            s.u.l.lg[off + j] = slot_lg[at + j];
        }
        off += n;
    }
    __syncthreads();
    return total;
}

__global__ void __launch_bounds__(kThreads, 1)
    list_chain_kernel(const RowParams *params, const int *windows, int V, int *counts, int parts,
                      const ListRow *rows, const int *slot_id, const int *slot_cnt,
                      const float *slot_lg, const int *slot_n, RowOut *outs, TopRow *tops)
{
    __shared__ ListShared s;
    __shared__ RowParams p;
    __shared__ ListRow row;
    int r = blockIdx.x;
    RowOut *out = outs + r;
    if (threadIdx.x == 0) {
        p = params[r];
        row = rows[r];
        s.flag = 0;
    }
    __syncthreads();
    if (row.go) {
        int n = gather_slots(s, r, parts, slot_id, slot_cnt, slot_lg, slot_n);
        if (n < 0 && threadIdx.x == 0)
            out->fallback = 1;
        if (n >= 0) {
            list_keep_all(s, n);
            bool cut = list_chain(p, s, row.a, n);
            list_result(p, s, row.a, n, cut, out, tops + p.top_at);
        }
    }
    __syncthreads(); // every count is read: zero them for the next run
    if (p.penalty_active) {
        int *count = counts + (size_t)r * V;
        const int *win = windows + p.win_off;
        for (int j = threadIdx.x; j < p.win_len; j += kThreads)
            count[win[j]] = 0;
    }
}
