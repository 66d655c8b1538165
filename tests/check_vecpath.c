/* The vector paths (base/vecpath.h): the default is the best path the CPU
 * has (by the kernel's own list of its features); LOGITLAB_VECTOR forces
 * each path it can run and is refused, in one line, for anything else; and
 * every dense loop built for the paths gives the same bits on each one the
 * CPU runs -- the sampler's passes, each alone on rows with masked, far,
 * signed-zero and out-of-range values and in whole runs of the sampler,
 * the LM head's product and rows, and the quantized products. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/vecpath.h"
#include "core/draws.h"
#include "core/fast_vec.h"
#include "core/philox.h"
#include "core/sampler.h"
#include "core/settings.h"
#include "core/vecmath.h"
#include "model/head_vec.h"
#include "model/quant.h"
#include "suites.h"

int vec_force(int path)
{
    if (!(vec_paths_here() & (1u << path)))
        return 0;
    setenv(VEC_ENV, vec_path_name(path), 1);
    ck_assert_int_eq(vec_path(), path);
    return 1;
}

/* Whether the flags line of /proc/cpuinfo (the kernel's reading of the
 * CPU) lists every flag of want (space-separated). */
static int cpu_flags(const char *line, const char *want)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", want);
    for (char *w = strtok(buf, " "); w; w = strtok(NULL, " ")) {
        char pad[64];
        snprintf(pad, sizeof pad, " %s ", w);
        if (!strstr(line, pad))
            return 0;
    }
    return 1;
}

/* The best path by /proc/cpuinfo: x86-64-v3 and v4 as gcc and the psABI
 * define them (v2's flags, then AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT
 * (abm), MOVBE; AVX-512 F, BW, CD, DQ, VL); -1 where it cannot tell. */
static int best_by_cpuinfo(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return -1;
    static char line[8192];
    int best = -1;
    while (best < 0 && fgets(line, sizeof line - 1, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        strcat(line, " ");
        /* x86-64-v3's flags but LZCNT's "abm": a Zen 5 VM's kernel (6.18, family
         * 26) leaves it out of the list while CPUID has it and lzcnt runs. */
        int v3 = cpu_flags(line, "cx16 lahf_lm popcnt pni sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 "
                                 "f16c fma movbe");
        int v4 = v3 && cpu_flags(line, "avx512f avx512bw avx512cd avx512dq avx512vl");
        best = v4 ? VEC_AVX512 : v3 ? VEC_AVX2 : VEC_BASELINE;
    }
    fclose(f);
    return best;
}

START_TEST(test_default_is_the_best)
{
    unsetenv(VEC_ENV);
    unsigned here = vec_paths_here();
    int best = vec_path_best(here);
    ck_assert(here & (1u << VEC_BASELINE));
    ck_assert(here & (1u << best));
    ck_assert_uint_lt(here, 2u << best); /* nothing above it */
    ck_assert_int_eq(vec_path(), best);
    struct err e;
    ck_assert_int_eq(vec_path_check(&e), best);
    setenv(VEC_ENV, "", 1); /* empty is unset */
    ck_assert_int_eq(vec_path(), best);
#if defined(__x86_64__) && defined(__linux__)
    int want = best_by_cpuinfo();
    if (want >= 0)
        ck_assert_msg(best == want, "best path %s, /proc/cpuinfo's %s", vec_path_name(best),
                      vec_path_name(want));
#elif !defined(__x86_64__)
    ck_assert_int_eq(best, VEC_BASELINE);
#endif
    ck_assert_int_eq(quant_best_path(), best == VEC_AVX512 && quant_path_ok(QUANT_AVX512)
                                            ? QUANT_AVX512
                                        : best >= VEC_AVX2 ? QUANT_AVX2
                                                           : QUANT_PORTABLE);
    unsetenv(VEC_ENV);
}
END_TEST

/* Each path the CPU runs, forced: the dense loops and the quantized
 * products take it. */
START_TEST(test_env_forces_each_path)
{
    static const int QUANT_OF[VEC_N_PATHS] = { QUANT_PORTABLE, QUANT_AVX2, QUANT_AVX512 };
    struct err e;
    for (int p = 0; p < VEC_N_PATHS; p++) {
        if (!vec_force(p))
            continue;
        ck_assert_int_eq(vec_path_check(&e), p);
        ck_assert_int_eq(quant_best_path(), QUANT_OF[p]);
    }
    unsetenv(VEC_ENV);
}
END_TEST

/* The refusals, by the pure parse on masks of what a CPU runs (this one
 * may run all three): the line names the variable, the value or the path,
 * and what the machine can run instead. */
START_TEST(test_refusals)
{
    const unsigned all = 7, v3 = 3, plain = 1;
    struct err e = { 0, "" };
    ck_assert_int_eq(vec_path_parse(NULL, all, &e), VEC_AVX512);
    ck_assert_int_eq(vec_path_parse("", v3, &e), VEC_AVX2);
    ck_assert_int_eq(vec_path_parse("baseline", all, &e), VEC_BASELINE);
    ck_assert_int_eq(vec_path_parse("avx2", v3, &e), VEC_AVX2);
    ck_assert_int_eq(vec_path_parse("bogus", all, &e), -1);
    ck_assert_int_eq(e.code, ERR_USAGE);
    ck_assert_str_eq(e.msg,
                     "LOGITLAB_VECTOR: 'bogus' is not a vector path (avx512, avx2 or baseline)");
    ck_assert_int_eq(vec_path_parse("AVX2", all, &e), -1); /* the names as written */
    ck_assert_int_eq(vec_path_parse("avx512", v3, &e), -1);
    ck_assert_str_eq(e.msg, "LOGITLAB_VECTOR: this machine cannot run avx512 (x86-64-v4); it can "
                            "run avx2 or baseline");
    ck_assert_int_eq(vec_path_parse("avx2", plain, &e), -1);
#ifdef __x86_64__
    ck_assert_str_eq(e.msg, "LOGITLAB_VECTOR: this machine cannot run avx2 (x86-64-v3); it can "
                            "run baseline");
    ck_assert_str_eq(vec_path_level(VEC_BASELINE), "x86-64");
#endif
    ck_assert_int_eq(vec_path_parse("avx2", 5, &e), -1); /* no such CPU; the list still reads */
    ck_assert_str_eq(e.msg, "LOGITLAB_VECTOR: this machine cannot run avx2 (x86-64-v3); it can "
                            "run avx512 or baseline");
    /* A refused value leaves the loops on the best path (main refuses it first). */
    setenv(VEC_ENV, "bogus", 1);
    ck_assert_int_eq(vec_path_check(&e), -1);
    ck_assert_int_eq(vec_path(), vec_path_best(vec_paths_here()));
    unsetenv(VEC_ENV);
}
END_TEST

/* A row of n doubles for the passes: normals of sd 6, and by position
 * masked tokens (-inf), tokens far below the rest (the exponential's
 * clamps), ties of +0 and -0, and with wild set a NaN, +inf and finite
 * values past RULE_Z_LIMIT (the load's counts of them). */
static void pass_row(double *z, int n, uint64_t seed, int wild)
{
    for (int i = 0; i < n; i++) {
        double u1 = philox_uniform(seed, (uint32_t)i, 1, 0) + 0x1p-25;
        double u2 = philox_uniform(seed, (uint32_t)i, 2, 0);
        z[i] = 6.0 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        if (i % 211 == 5)
            z[i] = -INFINITY;
        if (i >= 1024 && i < 1536 && i % 89 == 0)
            z[i] = -900.0 - i;
        if (i % 97 == 3)
            z[i] = i % 2 ? 0.0 : -0.0;
    }
    if (wild && n > 3000) {
        z[2999] = NAN;
        z[1777] = INFINITY;
        z[2500] = -3e30;
    }
}

#define PASS_N 4099 /* eight chunks of 512 and a tail of 3: every loop's end */

/* Asserts that a's n bytes equal b's, naming the path and what they are. */
#define SAME(a, b, n, what, p)                                                                     \
    ck_assert_msg(memcmp((a), (b), (n)) == 0, "%s: %s differs from baseline", vec_path_name(p),    \
                  what)

/* The passes of fast_vec.h on path p into the work areas at w (three rows
 * of PASS_N doubles, the marks, the blocks' maxima): everything they write
 * and return, in order, so that two paths compare with one memcmp. */
struct pass_out {
    double sums[16];
    int counts[8];
    double z[4][PASS_N]; /* fv_load's two rows and quotients, fv_exp_stats's exponentials */
    double blocks[2][PASS_N / 64 + 1];
    uint8_t mark[2][PASS_N];
};

static void run_passes(int p, const double *src, const float *srcf, struct pass_out *o)
{
    memset(o, 0, sizeof *o);
    o->sums[0] = fv_exp_stats_on(p, src, 0.5, o->z[3], PASS_N, &o->sums[1]);
    o->sums[2] =
        fv_divide_exp_stats_on(p, src, o->z[1], 0.7, 1.0, PASS_N, &o->sums[3], &o->sums[4]);
    for (int f = 0; f < 2; f++) { /* the float row and the double one, quotients ahead or not */
        struct fv_load ld = { .n = PASS_N,
                              .shift = 0.25,
                              .t = f ? 1.0 : 1.3,
                              .mark = o->mark[f],
                              .block_max = o->blocks[f],
                              .kept = 0,
                              .masked = 7,
                              .sums = 1,
                              .ahead = f ? o->z[2] : NULL,
                              .t_ahead = 0.6 };
        o->counts[f] = fv_load_on(p, f ? srcf : NULL, f ? NULL : src, o->z[f], &ld);
        o->sums[5 + 3 * f] = ld.max;
        o->sums[6 + 3 * f] = ld.sum;
        o->sums[7 + 3 * f] = ld.offset;
        o->counts[2 + f] = ld.n_kept;
        o->counts[4 + f] = ld.ahead_bad;
    }
    fv_cut_all_but_on(p, o->mark[1], PASS_N, 17, 0, 3);
    /* A row with a NaN or +inf has meaningless sums (fast_vec.h), and a
     * NaN's sign and payload follow the order of an addition's operands,
     * which the compiler may swap: a NaN compares as NaN. */
    for (int k = 0; k < 16; k++)
        o->sums[k] = isnan(o->sums[k]) ? NAN : o->sums[k];
}

/* fast_vec.h's passes on every path the CPU runs, the same bits as the
 * baseline's: a tame row (every chunk clean but the clamps' one) and a
 * wild one (NaN, +inf, past the limit: the chunks that are not). */
START_TEST(test_passes_same_bits)
{
    static double src[PASS_N];
    static float srcf[PASS_N];
    static struct pass_out want, got;
    for (int wild = 0; wild < 2; wild++) {
        pass_row(src, PASS_N, 41 + (uint64_t)wild, wild);
        for (int i = 0; i < PASS_N; i++)
            srcf[i] = (float)src[i];
        run_passes(VEC_BASELINE, src, srcf, &want);
        if (wild)
            ck_assert_int_eq(want.counts[0], 3); /* NaN, +inf, -3e30: the load counts them */
        for (int p = VEC_BASELINE + 1; p < VEC_N_PATHS; p++) {
            if (!(vec_paths_here() & (1u << p)))
                continue;
            run_passes(p, src, srcf, &got);
            SAME(&got, &want, sizeof want, wild ? "the passes on the wild row" : "the passes", p);
        }
    }
}
END_TEST

/* vecmath.h's loops on path p, into o (n doubles and marks of room). */
struct loop_out {
    double sums[4];
    int counts[16];
    double z[2][PASS_N];
    uint32_t key[PASS_N];
    uint8_t mark[3][PASS_N];
    double blocks[PASS_N / 64 + 1];
};

static void run_loops(int p, const double *src, struct loop_out *o)
{
    memset(o, 0, sizeof *o);
    memcpy(o->z[0], src, sizeof o->z[0]);
    o->sums[0] = vm_divide_on(p, o->z[0], 0.8, PASS_N);
    memcpy(o->z[1], src, sizeof o->z[1]);
    vm_quotients_on(p, o->z[1], 3.0, PASS_N);
    vm_keys_on(p, src, o->key, PASS_N);
    vm_block_max_on(p, src, PASS_N, o->blocks);
    o->sums[1] = vm_largest_on(p, src, PASS_N);
    o->sums[2] = vm_largest_on(p, o->blocks, PASS_N / 64 + 1);
    for (int k = 0; k < 8; k++) /* from every lane, at and above a bar */
        o->counts[k] = vm_first_at_least_on(p, o->blocks, k, PASS_N / 64 + 1, 14.0, k % 2);
    o->counts[8] = vm_count_before_on(p, src, PASS_N, src[1000], 1000);
    o->counts[9] = vm_count_before_on(p, src, PASS_N, 0.0, 2000); /* the zeros' ties */
    for (int i = 0; i < PASS_N; i++)
        o->mark[0][i] = o->mark[1][i] = o->mark[2][i] = (uint8_t)(i % 13 == 0 ? 5 : 0);
    vm_cut_marks_on(p, src, o->mark[0], PASS_N, 0.0, 2000, 0, 0, 2);
    vm_cut_marks_on(p, src, o->mark[1], PASS_N, 0.0, 2000, 1, 0, 2);
    vm_bar_marks_on(p, src, o->mark[2], PASS_N, o->sums[1], -3.0, 0, 4);
}

START_TEST(test_loops_same_bits)
{
    static double src[PASS_N];
    static struct loop_out want, got;
    pass_row(src, PASS_N, 43, 0);
    run_loops(VEC_BASELINE, src, &want);
    for (int p = VEC_BASELINE + 1; p < VEC_N_PATHS; p++)
        if (vec_paths_here() & (1u << p)) {
            run_loops(p, src, &got);
            SAME(&got, &want, sizeof want, "vecmath's loops", p);
        }
}
END_TEST

/* One run of the fast sampler with every value the run and its lookups
 * give, on the path the environment forces. */
struct run_out {
    struct trace t;
    double stage_values[STAGE_COUNT][2];
    int kept_ids[64], plain_ids[64];
};

static void run_on(int path, const struct sampler_input *in, const struct sampler_settings *s,
                   struct run_out *o)
{
    struct err e;
    ck_assert(vec_force(path));
    ck_assert_int_eq(trace_init(&o->t, in->vocab_size, &e), 0);
    memset(o->stage_values, 0, sizeof o->stage_values);
    ck_assert_msg(sampler_run_fast(in, s, &o->t, 20, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(o->t.fvec, path);
    for (int c = 0; c < o->t.n_stages; c++)
        trace_stage_values(&o->t, c, &o->stage_values[c][0], &o->stage_values[c][1]);
    ck_assert_int_eq(draws_ids(&o->t, s->seed, in->step, 0, 64, o->kept_ids, o->plain_ids, &e), 0);
}

/* Whether two doubles have the same bits. */
static int same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Two runs the same bits: every statistic, report, row and the choice,
 * field by field (their structs' padding is no value), every token's z',
 * mark and e^(z' - max) (trace_e, on the run's path), the stages' values
 * and the draws. */
static void assert_runs_same(const struct run_out *a, const struct run_out *b, const char *what)
{
    const struct trace *x = &a->t, *y = &b->t;
    int V = x->vocab_size, same = x->n_rows == y->n_rows && x->n_stages == y->n_stages;
    const char *p = vec_path_name(y->fvec);
    for (int r = 0; same && r < x->n_rows; r++) {
        const struct trace_row *u = &x->rows[r], *v = &y->rows[r];
        same = u->id == v->id && u->seen == v->seen && u->removed_by == v->removed_by &&
               same_double(u->adjusted, v->adjusted) && same_double(u->prob, v->prob) &&
               same_double(u->cum, v->cum) && same_double(u->final, v->final) &&
               same_double(u->cum_final, v->cum_final) && same_double(u->exp, v->exp);
    }
    ck_assert_msg(same, "%s, %s: the rows differ", what, p);
    same = x->greedy == y->greedy && same_double(x->max_adjusted, y->max_adjusted) &&
           same_double(x->sum_exp, y->sum_exp) &&
           same_double(x->sum_exp_shifted, y->sum_exp_shifted) &&
           same_double(x->entropy, y->entropy) && same_double(x->entropy_final, y->entropy_final) &&
           x->kept_count == y->kept_count && same_double(x->kept_mass, y->kept_mass) &&
           x->penalized == y->penalized;
    ck_assert_msg(same, "%s, %s: the statistics differ", what, p);
    for (int c = 0; c < x->n_stages; c++) {
        const struct stage_report *u = &x->stages[c], *v = &y->stages[c];
        same = u->stage == v->stage && u->active == v->active && u->in == v->in &&
               u->removed == v->removed && same_double(u->removed_mass, v->removed_mass) &&
               same_double(u->p_max, v->p_max) && same_double(u->cut, v->cut) &&
               same_double(a->stage_values[c][0], b->stage_values[c][0]) &&
               same_double(a->stage_values[c][1], b->stage_values[c][1]);
        ck_assert_msg(same, "%s, %s: stage %d's report differs", what, p, c);
    }
    const struct choice *u = &x->choice, *v = &y->choice;
    ck_assert_msg(u->id == v->id && u->rank == v->rank && u->sampled == v->sampled &&
                      same_double(u->u, v->u) && same_double(u->lo, v->lo) &&
                      same_double(u->hi, v->hi),
                  "%s, %s: the choice differs", what, p);
    ck_assert_msg(memcmp(x->fz, y->fz, (size_t)V * sizeof *x->fz) == 0, "%s, %s: z'", what, p);
    ck_assert_msg(memcmp(x->fmark, y->fmark, (size_t)V) == 0, "%s, %s: marks", what, p);
    for (int i = 0; i < V; i++)
        ck_assert_msg(same_double(trace_e(x, i), trace_e(y, i)), "%s, %s: token %d's e", what, p,
                      i);
    ck_assert_msg(memcmp(a->kept_ids, b->kept_ids, sizeof a->kept_ids) == 0 &&
                      memcmp(a->plain_ids, b->plain_ids, sizeof a->plain_ids) == 0,
                  "%s, %s: the draws differ", what, p);
}

/* The chains of check_fast.c's test_p_max_left_for_later (each way the
 * fast path keeps z' for later), and bench_fast's full chain, on a row the
 * size of Llama 3's vocabulary as floats and as doubles, with a context
 * for the penalty: each path the CPU runs gives the baseline's bits. */
START_TEST(test_sampler_runs_same_bits)
{
    static const char *const ORDERS[] = {
        "top-k,top-p,min-p,temperature",   "min-p,temperature",
        "top-n-sigma,top-k,temperature",   "penalty,top-k,top-p,min-p,temperature",
        "top-k,penalty,temperature,min-p", "min-p,temperature,penalty,top-p",
        "temperature,top-k,top-p,min-p",   "penalty,temperature,typical-p,top-p",
    };
    const int V = 128256;
    double *z = malloc((size_t)V * sizeof *z);
    float *zf = malloc((size_t)V * sizeof *zf);
    struct run_out *want = calloc(1, sizeof *want), *got = calloc(1, sizeof *got);
    ck_assert(z && zf && want && got);
    pass_row(z, V, 47, 0);
    for (int i = 0; i < V; i++)
        zf[i] = (float)(z[i] / 3.0);
    int ctx[16];
    for (int j = 0; j < 16; j++)
        ctx[j] = (j * 7919) % V;
    struct err e;
    for (size_t o = 0; o < sizeof ORDERS / sizeof ORDERS[0]; o++) {
        struct sampler_settings s;
        sampler_defaults(&s);
        ck_assert_int_eq(chain_parse(ORDERS[o], &s.chain, &e), 0);
        s.temperature = o % 2 ? 0.7 : 1.6;
        s.top_k = 40;
        s.top_p = 0.9;
        s.min_p = 0.02;
        s.top_n_sigma = 2.0;
        s.typical_p = 0.8;
        s.repetition_penalty = 1.3;
        s.seed = 11 + o;
        struct sampler_input in = { .vocab_size = V, .context = ctx, .context_len = 16, .step = 2 };
        if (o % 2)
            in.logits_f = zf;
        else
            in.logits = z;
        run_on(VEC_BASELINE, &in, &s, want);
        for (int p = VEC_BASELINE + 1; p < VEC_N_PATHS; p++) {
            if (!(vec_paths_here() & (1u << p)))
                continue;
            run_on(p, &in, &s, got);
            assert_runs_same(want, got, ORDERS[o]);
            trace_free(&got->t);
        }
        trace_free(&want->t);
    }
    unsetenv(VEC_ENV);
    free(z), free(zf), free(want), free(got);
}
END_TEST

/* The LM head's loops alone on each path: rows of the synthetic weights
 * (lengths around the batch of counters and the vector's lanes), and the
 * bf16 product by the plain loop and the split one, on a head of 67 rows
 * (16 groups of four and three plain rows) of 1,048 weights (a tail of 8). */
START_TEST(test_head_same_bits)
{
    enum { R = 67, D = 1048 };
    static uint16_t want[D], got[D], w[R * D];
    static float x[3 * D], xs[3 * D], out_want[3 * R], out_got[3 * R];
    static const int LEN[] = { 4, 36, 4096 + 12, D };
    for (size_t k = 0; k < sizeof LEN / sizeof LEN[0]; k++) {
        uint16_t *wa = malloc((size_t)LEN[k] * sizeof *wa),
                 *wb = malloc((size_t)LEN[k] * sizeof *wb);
        ck_assert(wa && wb);
        head_row_on(VEC_BASELINE, 99, 12345, LEN[k], 0.02f, wa);
        for (int p = 1; p < VEC_N_PATHS; p++)
            if (vec_paths_here() & (1u << p)) {
                head_row_on(p, 99, 12345, LEN[k], 0.02f, wb);
                SAME(wb, wa, (size_t)LEN[k] * sizeof *wa, "a head row", p);
            }
        free(wa), free(wb);
    }
    for (int r = 0; r < R; r++) {
        head_row_on(VEC_BASELINE, 7, (uint32_t)r, D, 0.05f, want);
        head_put_row(w, R, D, r, want);
    }
    for (int i = 0; i < 3 * D; i++)
        x[i] = (float)philox_uniform(5, (uint32_t)i, 0, 0) * 2.0f - 1.0f;
    for (int c = 0; c < 3; c++)
        head_split_x(x + c * D, D, xs + c * D);
    for (int split = 0; split < 2; split++) {
        head_gemv_bf16_on(VEC_BASELINE, w, R, D, x, split ? xs : NULL, 3, out_want, R);
        for (int p = 1; p < VEC_N_PATHS; p++)
            if (vec_paths_here() & (1u << p)) {
                head_gemv_bf16_on(p, w, R, D, x, split ? xs : NULL, 3, out_got, R);
                SAME(out_got, out_want, sizeof out_want,
                     split ? "the split product" : "the product", p);
            }
    }
    (void)got;
}
END_TEST

/* The quantized products follow the forced path: quant_dot under each is
 * that path's build, which gives the portable bits (check_quant.c holds
 * every type to it; Q8_0 and Q4_K, the head's and a body's, here). */
START_TEST(test_quant_follows_the_path)
{
    enum { N = 512 };
    static const int TYPES[] = { QT_Q8_0, QT_Q4_K };
    static float x[N], w[N];
    static unsigned char row[N * 2];
    for (int i = 0; i < N; i++) {
        x[i] = (float)philox_uniform(9, (uint32_t)i, 0, 0) - 0.5f;
        w[i] = (float)philox_uniform(9, (uint32_t)i, 1, 0) * 4.0f - 2.0f;
    }
    for (size_t k = 0; k < sizeof TYPES / sizeof TYPES[0]; k++) {
        quant_quantize(TYPES[k], w, row, N);
        float want;
        quant_dot_n_on(QUANT_PORTABLE, TYPES[k], row, N, x, 0, 1, &want);
        for (int p = 0; p < VEC_N_PATHS; p++) {
            if (!vec_force(p))
                continue;
            float got = quant_dot(TYPES[k], row, x, N);
            SAME(&got, &want, sizeof got, "quant_dot", p);
        }
    }
    unsetenv(VEC_ENV);
}
END_TEST

Suite *suite_vecpath(void)
{
    Suite *s = suite_create("vecpath");
    TCase *tc = tcase_create("choice");
    tcase_add_test(tc, test_default_is_the_best);
    tcase_add_test(tc, test_env_forces_each_path);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    TCase *bits = tcase_create("same-bits");
    tcase_set_timeout(bits, 120);
    tcase_add_test(bits, test_passes_same_bits);
    tcase_add_test(bits, test_loops_same_bits);
    tcase_add_test(bits, test_sampler_runs_same_bits);
    tcase_add_test(bits, test_head_same_bits);
    tcase_add_test(bits, test_quant_follows_the_path);
    suite_add_tcase(s, bits);
    return s;
}
