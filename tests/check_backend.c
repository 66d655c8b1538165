/* The backend interface and the CPU backend: choosing one, batches with
 * settings per row, the LM head through the table, many draws, and the
 * batch view's model. The CPU backend must give, row for row, exactly what
 * sampler_run_fast gives for that row alone (it is the specification the
 * CUDA backend is compared with in tests/gpu/check_gpu.c). */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET: test_one_cpu_is_one_thread */
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "base/cpus.h"
#include "source/batch.h"
#include "data/catalog.h"
#include "data/npy.h"   /* NPY_MAX_COLS */
#include "data/vocab.h" /* VOCAB_MAX_TOKENS */
#include "core/grammar.h"
#include "core/philox.h"
#include "core/draws.h"
#include "core/settings.h"
#include "source/source.h"
#include "suites.h"
#include "tui/view.h"

#define SMALL_V 5000
#define ROWS    8

/* A model-like row: a bulk of standard deviation 2.5 and a few peaks. */
static void make_row(float *z, int V, uint32_t salt)
{
    for (int i = 0; i < V; i++) {
        double u1 = philox_uniform(11, (uint32_t)i, salt, 1) + 1.0 / 33554432.0;
        double u2 = philox_uniform(11, (uint32_t)i, salt, 2);
        z[i] = (float)(2.5 * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    for (int j = 0; j < 6; j++)
        z[(int)((salt * 7919u + (uint32_t)j * 104729u) % (uint32_t)V)] = 12.0f - 0.6f * (float)j;
}

static void set(struct sampler_settings *s, const char *name, const char *value)
{
    struct settings st;
    struct err e;
    settings_defaults(&st);
    st.sampler = *s;
    ck_assert_msg(settings_set(&st, name, value, &e) == 0, "%s %s: %s", name, value, e.msg);
    *s = st.sampler;
}

static struct backend B;
static float *Z;
static int CTX[ROWS][40];
static struct backend_req REQ[ROWS];

/* Eight requests as an engine would get them: one row of logits each, a
 * context each, and settings that differ in every stage and in the order. */
static void setup_batch(void)
{
    struct err e;
    ck_assert_msg(backend_open(&B, BACKEND_CPU, &e) == 0, "%s", e.msg);
    Z = malloc((size_t)ROWS * SMALL_V * sizeof *Z);
    for (int r = 0; r < ROWS; r++)
        make_row(Z + (size_t)r * SMALL_V, SMALL_V, (uint32_t)r + 1);
    /* Rows 1 and 2 hold the same logits, so that only the row counter differs. */
    memcpy(Z + 2 * SMALL_V, Z + SMALL_V, SMALL_V * sizeof *Z);
    ck_assert_msg(backend_set_logits(&B, Z, ROWS, SMALL_V, &e) == 0, "%s", e.msg);
    static const char *const SETTINGS[ROWS][8] = {
        { "temperature", "0", NULL },
        { "temperature", "0.8", "top-p", "0.9", "seed", "5", NULL },
        { "temperature", "0.8", "top-p", "0.9", "seed", "5", NULL },
        { "min-p", "0.05", "seed", "3", NULL },
        { "top-k", "40", "temperature", "1.3", "seed", "4", NULL },
        { "repetition-penalty", "1.5", "presence-penalty", "0.5", "seed", "9", NULL },
        { "order", "vllm", "top-k", "10", "min-p", "0.1", NULL },
        { "order", "llamacpp", "temperature", "1.5", "top-p", "0.8", NULL },
    };
    for (int r = 0; r < ROWS; r++) {
        struct sampler_settings s;
        sampler_defaults(&s);
        for (int k = 0; SETTINGS[r][k]; k += 2)
            set(&s, SETTINGS[r][k], SETTINGS[r][k + 1]);
        for (int j = 0; j < 40; j++) /* the peaks and some bulk tokens */
            CTX[r][j] = (int)(((uint32_t)r * 7919u + (uint32_t)(j % 8) * 104729u) % SMALL_V);
        REQ[r] = (struct backend_req){ .s = s,
                                       .context = CTX[r],
                                       .context_len = 40,
                                       .prompt_len = 10,
                                       .step = 3 + (uint32_t)r,
                                       .row = (uint32_t)r,
                                       .n_top = 16 };
    }
    REQ[2].step = REQ[1].step;
}

static void teardown_batch(void)
{
    backend_close(&B);
    free(Z);
}

START_TEST(test_choosing_a_backend)
{
    struct backend b;
    struct err e;
    enum backend_choice c;
    ck_assert_int_eq(backend_parse("auto", &c, &e), 0);
    ck_assert_int_eq(c, BACKEND_AUTO);
    ck_assert_int_eq(backend_parse("cuda", &c, &e), 0);
    ck_assert_int_eq(c, BACKEND_CUDA);
    ck_assert_int_eq(backend_parse("gpu", &c, &e), -1);
    ck_assert_str_eq(e.msg, "'gpu' is not a backend (auto, cpu or cuda)");
    /* This test binary is the sanitizer build, which never has CUDA: auto
     * falls back to the CPU and keeps the probe's reason for the status
     * line; cuda is an error with that reason. */
    char why[BACKEND_WHY_MAX];
    ck_assert_int_eq(backend_cuda_probe(why, sizeof why), 0);
    ck_assert_int_eq(backend_open(&b, BACKEND_AUTO, &e), 0);
    ck_assert_str_eq(b.ops->name, "CPU");
    ck_assert_str_eq(b.why, why);
    ck_assert_msg(strncmp(b.device, "CPU (", 5) == 0, "%s", b.device);
    backend_close(&b);
    ck_assert_int_eq(backend_open(&b, BACKEND_CPU, &e), 0);
    ck_assert_str_eq(b.why, ""); /* chosen, not fallen back to */
    backend_close(&b);
    ck_assert_int_eq(backend_open(&b, BACKEND_CUDA, &e), -1);
    ck_assert_int_eq(e.code, ERR_USAGE);
    char want[ERR_MSG_MAX];
    snprintf(want, sizeof want, "--backend cuda: %s", why);
    ck_assert_str_eq(e.msg, want);
}
END_TEST

/* A process held to one CPU (`taskset -c 1 logitlab`) counts one CPU and
 * says so: two threads on one core would each wait for the other's time
 * slice. Run in a child, whose affinity dies with it. */
START_TEST(test_one_cpu_is_one_thread)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        cpu_set_t set;
        int first = -1;
        if (sched_getaffinity(0, sizeof set, &set) != 0)
            _exit(10);
        for (int i = 0; i < CPU_SETSIZE && first < 0; i++)
            if (CPU_ISSET(i, &set))
                first = i;
        CPU_ZERO(&set);
        CPU_SET(first, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0)
            _exit(11);
        struct backend b;
        struct err e;
        if (cpu_count() != 1 || backend_open(&b, BACKEND_CPU, &e) < 0)
            _exit(12);
        int ok = strcmp(b.device, "CPU (1 thread)") == 0;
        backend_close(&b);
        _exit(ok ? 0 : 13);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}
END_TEST

/* Each row of the batch is what the fast sampler gives for that row alone,
 * bit for bit, with the Philox counter (step, row) of the request. */
START_TEST(test_batch_rows_are_single_runs)
{
    struct backend_res res[ROWS];
    struct err e;
    ck_assert_msg(backend_sample(&B, REQ, ROWS, res, &e) == 0, "%s", e.msg);
    struct trace t;
    ck_assert_int_eq(trace_init(&t, SMALL_V, &e), 0);
    for (int r = 0; r < ROWS; r++) {
        struct sampler_input in = { .vocab_size = SMALL_V,
                                    .logits_f = Z + (size_t)r * SMALL_V,
                                    .context = CTX[r],
                                    .context_len = 40,
                                    .prompt_len = 10,
                                    .step = REQ[r].step,
                                    .row = (uint32_t)r };
        ck_assert_msg(sampler_run_fast(&in, &REQ[r].s, &t, 16, &e) == 0, "%s", e.msg);
        ck_assert_int_eq(res[r].id, t.choice.id);
        ck_assert_int_eq(res[r].sampled, t.choice.sampled);
        ck_assert(res[r].u == t.choice.u);
        ck_assert(res[r].max_z == t.max_adjusted);
        ck_assert(res[r].sum_exp == t.sum_exp_shifted);
        ck_assert(res[r].kept_mass == t.kept_mass);
        ck_assert(res[r].entropy == t.entropy);
        ck_assert(res[r].entropy_final == t.entropy_final);
        ck_assert_int_eq(res[r].kept_count, t.kept_count);
        ck_assert_int_eq(res[r].n_top, 16);
        for (int k = 0; k < 16; k++) {
            ck_assert_int_eq(res[r].top[k].id, t.rows[k].id);
            ck_assert_int_eq(res[r].top[k].removed_by, t.rows[k].removed_by);
            ck_assert(res[r].top[k].prob == t.rows[k].prob);
            ck_assert(res[r].top[k].final == t.rows[k].final);
        }
        struct trace_row chosen;
        int rank;
        ck_assert_int_eq(sampler_fast_row(&t, t.choice.id, &chosen, &rank), 0);
        ck_assert_double_eq_tol(res[r].final, chosen.final, 1e-15);
        if (res[r].sampled) /* DESIGN.md: u from the counter (step, row, 0, 0) */
            ck_assert(res[r].u == sampler_u(REQ[r].s.seed, REQ[r].step, (uint32_t)r, 0));
    }
    trace_free(&t);
    /* Row 0 is greedy: the argmax, no u. */
    ck_assert_int_eq(res[0].sampled, 0);
    ck_assert_int_eq(res[0].kept_count, 1);
    ck_assert_int_eq(res[0].id, res[0].top[0].id);
    /* Rows 1 and 2: same logits, settings, seed and step; only the row
     * differs, and with it u: two requests never share their coins. */
    ck_assert(res[1].u != res[2].u);
    ck_assert_int_eq(res[1].kept_count, res[2].kept_count);
}
END_TEST

START_TEST(test_editing_one_request_leaves_the_others)
{
    struct backend_res before[ROWS], after[ROWS];
    struct err e;
    ck_assert_int_eq(backend_sample(&B, REQ, ROWS, before, &e), 0);
    set(&REQ[3].s, "min-p", "0.5");
    ck_assert_int_eq(backend_sample(&B, REQ, ROWS, after, &e), 0);
    for (int r = 0; r < ROWS; r++)
        if (r != 3)
            ck_assert_msg(memcmp(&before[r], &after[r], sizeof before[r]) == 0, "row %d changed",
                          r);
    /* min-p 0.5 keeps only tokens within ln 2 of the best: the peaks are
     * 0.6 apart, so the best and the next one. */
    ck_assert_int_eq(after[3].kept_count, 2);
    ck_assert_int_gt(before[3].kept_count, 2);
}
END_TEST

START_TEST(test_final_and_kept_of_every_token)
{
    static double final[SMALL_V];
    static uint8_t kept[SMALL_V];
    struct backend_res res;
    struct err e;
    struct backend_req r = REQ[4];
    r.final_out = final;
    r.kept_out = kept;
    ck_assert_int_eq(backend_sample(&B, &r, 1, &res, &e), 0);
    int n = 0;
    double sum = 0.0;
    for (int i = 0; i < SMALL_V; i++) {
        n += kept[i];
        sum += final[i];
        if (!kept[i])
            ck_assert(final[i] == 0.0);
    }
    ck_assert_int_eq(n, 40); /* top-k 40 */
    ck_assert_int_eq(res.kept_count, 40);
    ck_assert_double_eq_tol(sum, 1.0, 1e-12);
    ck_assert(final[res.top[0].id] == res.top[0].final);
}
END_TEST

/* Many draws through the backend are rr_draw_ids, and counting them with
 * rr_tally gives exactly what rr_draws counts on its own. */
START_TEST(test_draws_through_the_backend)
{
    enum { N = 5000 };
    static int kept[N], plain[N], kept2[N], plain2[N];
    struct err e;
    struct backend_req r = REQ[1];
    r.row = 0; /* rr_draws draws with row 0 */
    ck_assert_int_eq(backend_draws(&B, &r, N, kept, plain, &e), 0);
    struct trace t;
    ck_assert_int_eq(trace_init(&t, SMALL_V, &e), 0);
    struct sampler_input in = { .vocab_size = SMALL_V,
                                .logits_f = Z,
                                .context = CTX[1],
                                .context_len = 40,
                                .prompt_len = 10,
                                .step = r.step };
    ck_assert_int_eq(sampler_run_fast(&in, &r.s, &t, 32, &e), 0);
    ck_assert_int_eq(draws_ids(&t, r.s.seed, r.step, 0, N, kept2, plain2, &e), 0);
    ck_assert_mem_eq(kept, kept2, sizeof kept);
    ck_assert_mem_eq(plain, plain2, sizeof plain);
    ck_assert_int_eq(kept[0], t.choice.id); /* draw 0 is the step's own */
    static struct draws a, b;
    ck_assert_int_eq(draws_run(&t, r.s.seed, r.step, N, DRAWS_ROWS, &a, &e), 0);
    ck_assert_int_eq(draws_tally(&t, kept, plain, N, DRAWS_ROWS, &b, &e), 0);
    ck_assert_mem_eq(a.c_plain, b.c_plain, sizeof a.c_plain);
    ck_assert_mem_eq(a.c_kept, b.c_kept, sizeof a.c_kept);
    ck_assert_int_eq(a.tail_plain, b.tail_plain);
    ck_assert_int_eq(a.distinct_kept, b.distinct_kept);
    ck_assert(a.chi2_kept == b.chi2_kept);
    /* A kept draw of a token the chain removed is refused, not counted. */
    int removed = -1;
    for (int i = 0; i < SMALL_V && removed < 0; i++)
        if (t.fmark[i] != 0 && isfinite(t.fz[i]))
            removed = i;
    ck_assert_int_ge(removed, 0); /* top-p 0.9 removes most of the bulk */
    int keep = kept[3];
    kept[3] = removed;
    ck_assert_int_eq(draws_tally(&t, kept, plain, N, DRAWS_ROWS, &b, &e), -1);
    char want[ERR_MSG_MAX];
    snprintf(want, sizeof want, "draw 3 came back with token %d, which the chain removed", removed);
    ck_assert_str_eq(e.msg, want);
    kept[3] = keep;
    /* A token outside the step is refused, not counted. */
    plain[7] = SMALL_V;
    ck_assert_int_eq(draws_tally(&t, kept, plain, N, DRAWS_ROWS, &b, &e), -1);
    ck_assert_str_eq(e.msg, "draw 7 came back with a token outside the step");
    trace_free(&t);
}
END_TEST

START_TEST(test_bad_requests)
{
    struct backend_res res[2];
    struct err e;
    struct backend_req r[2] = { REQ[0], REQ[1] };
    r[1].s.top_p = 1.5;
    ck_assert_int_eq(backend_sample(&B, r, 2, res, &e), -1);
    ck_assert_str_eq(e.msg, "request 1: top-p 1.5 is out of range (must be in (0, 1])");
    r[1] = REQ[1];
    int bad[1] = { SMALL_V };
    r[1].context = bad;
    r[1].context_len = 1;
    r[1].prompt_len = 0;
    ck_assert_int_eq(backend_sample(&B, r, 2, res, &e), -1);
    ck_assert_str_eq(e.msg, "request 1: context token 5000 is not in the vocabulary (0..4999)");
    r[1] = REQ[1];
    r[1].row = 8;
    ck_assert_int_eq(backend_sample(&B, r, 2, res, &e), -1);
    ck_assert_str_eq(e.msg, "request 1: logits row 8, the backend holds 8");
    ck_assert_int_eq(backend_sample(&B, r, 0, res, &e), -1);
    ck_assert_str_eq(e.msg, "batch of 0 requests: from 1 to 256");
    ck_assert_int_eq(backend_logits(&B, Z, 1, &e), -1);
    ck_assert_str_eq(e.msg, "the backend has no LM head");
    float row[SMALL_V];
    ck_assert_int_eq(backend_get_logits(&B, 8, row, &e), -1);
    ck_assert_str_eq(e.msg, "logits row 8: the backend holds 8");
    ck_assert_int_eq(backend_get_logits(&B, 7, row, &e), 0);
    ck_assert_mem_eq(row, Z + 7 * SMALL_V, sizeof row);
}
END_TEST

/* A backend that runs only some stages (the CUDA kernels, until they run
 * every stage) refuses a request that turns another one on, by name, and
 * takes one that leaves it off or out of the chain. */
START_TEST(test_stages_a_backend_lacks)
{
    struct backend_ops only_temperature = backend_cpu_ops;
    only_temperature.stages = 1u << STAGE_TEMPERATURE;
    const struct backend_ops *cpu = B.ops;
    B.ops = &only_temperature;
    struct backend_res res[1];
    struct err e;
    struct backend_req r = REQ[0];
    r.s.top_k = 40;
    ck_assert_int_eq(backend_sample(&B, &r, 1, res, &e), -1);
    ck_assert_str_eq(e.msg,
                     "request 0: the CPU backend has no top-k stage yet (--backend cpu runs it)");
    ck_assert_int_eq(chain_parse("temperature", &r.s.chain, &e), 0); /* top-k left out */
    ck_assert_msg(backend_sample(&B, &r, 1, res, &e) == 0, "%s", e.msg);
    /* The CUDA kernels' five stages (gpu/backend_cuda.cu's .stages): the
     * logit bias and the bad words, on in the default order, are refused. */
    only_temperature.stages = (1u << STAGE_PENALTY) | (1u << STAGE_TEMPERATURE) |
                              (1u << STAGE_TOP_K) | (1u << STAGE_TOP_P) | (1u << STAGE_MIN_P);
    r = REQ[0];
    r.s.logit_bias = (struct logit_bias){ .n = 1, .id = { 2 }, .bias = { -INFINITY } };
    ck_assert_int_eq(backend_sample(&B, &r, 1, res, &e), -1);
    ck_assert_str_eq(
        e.msg, "request 0: the CPU backend has no logit-bias stage yet (--backend cpu runs it)");
    r = REQ[0];
    r.s.bad_words = (struct bad_words){ .n = 1, .len = { 1 }, .id = { { 2 } } };
    ck_assert_int_eq(backend_sample(&B, &r, 1, res, &e), -1);
    ck_assert_str_eq(
        e.msg, "request 0: the CPU backend has no bad-words stage yet (--backend cpu runs it)");
    r = REQ[0]; /* a grammar: the CUDA kernels have no mask yet */
    r.s.regex = GRAMMAR_FRONT_REGEX;
    ck_assert_int_eq(backend_sample(&B, &r, 1, res, &e), -1);
    ck_assert_str_eq(e.msg,
                     "request 0: the CPU backend has no grammar stage yet (--backend cpu runs it)");
    B.ops = cpu;
}
END_TEST

/* The CPU backend takes a request's grammar mask (sampler_input's): the
 * refused tokens are removed, whatever their probability; without a mask
 * the stage says the caller gave none. */
START_TEST(test_grammar_mask_on_the_cpu_backend)
{
    struct backend_res res[1];
    struct err e;
    struct backend_req r = REQ[5]; /* T 1: the grammar is the only cut */
    uint8_t refused[SMALL_V];
    for (int i = 0; i < SMALL_V; i++)
        refused[i] = i % 2 == 0; /* the even ids go */
    r.s.regex = GRAMMAR_FRONT_REGEX;
    r.refused = refused;
    r.n_top = 3;
    ck_assert_msg(backend_sample(&B, &r, 1, res, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(res[0].kept_count, SMALL_V / 2);
    ck_assert_int_eq(res[0].id % 2, 1);
    for (int k = 0; k < res[0].n_top; k++)
        ck_assert_int_eq(res[0].top[k].removed_by == STAGE_GRAMMAR, res[0].top[k].id % 2 == 0);
    r.refused = NULL;
    ck_assert_int_eq(backend_sample(&B, &r, 1, res, &e), -1);
    ck_assert_str_eq(e.msg, "request 0: grammar: the step has no mask (the caller gave none)");
}
END_TEST

/* The CUDA backend's vocabulary limit (backend.h: 2^31 - 2^24, set by its
 * draw kernels' int grid-stride loops, 65,536 blocks of 256 threads a step):
 * a row of one token more is refused in one line that names the backend and
 * the limit, a row of the limit is not, and the CPU takes any. The check is
 * the C side's, so it runs without a device; backend_cuda_ops is here the
 * table of backend_nocuda.c, which carries the real one's limit. */
START_TEST(test_vocab_past_the_cuda_limit)
{
    struct err e;
    ck_assert_int_eq(BACKEND_CUDA_MAX_VOCAB, 2147483647 - 16777216 + 1);
    ck_assert_int_eq(backend_cuda_ops.max_vocab, BACKEND_CUDA_MAX_VOCAB);
    ck_assert_int_eq(backend_check_vocab(&backend_cuda_ops, BACKEND_CUDA_MAX_VOCAB, &e), 0);
    ck_assert_int_eq(backend_check_vocab(&backend_cuda_ops, BACKEND_CUDA_MAX_VOCAB + 1, &e), -1);
    ck_assert_int_eq(e.code, ERR_USAGE);
    ck_assert_str_eq(e.msg, "the CUDA backend takes rows of at most 2130706432 tokens; this one "
                            "has 2130706433 (--backend cpu takes any)");
    ck_assert_int_eq(backend_check_vocab(&backend_cpu_ops, INT_MAX, &e), 0);
    /* Real vocabularies lie far below it (doc/model.md, tests/model/gen_model.c):
     * Llama 3's 128,256 (data/llama3-vocab.bin), Qwen's files padded to
     * 151,936 rows (Qwen 3's config.json vocab_size), Gemma 3's 262,144 (the
     * tokens of its GGUF files); and so does every row logitlab reads. */
    static const int REAL[] = { 128256, 151936, 262144, VOCAB_MAX_TOKENS, NPY_MAX_COLS };
    for (size_t i = 0; i < sizeof REAL / sizeof *REAL; i++)
        ck_assert_msg(backend_check_vocab(&backend_cuda_ops, REAL[i], &e) == 0, "%d: %s", REAL[i],
                      e.msg);
}
END_TEST

/* A backend's limit holds before anything runs: rows and an LM head past it
 * are refused with the rows held and their generation as they were. A CPU
 * table capped one token short of the batch's rows stands in for CUDA. */
START_TEST(test_rows_past_a_backends_limit)
{
    struct backend_ops capped = backend_cpu_ops;
    capped.name = "capped";
    capped.max_vocab = SMALL_V - 1;
    const struct backend_ops *cpu = B.ops;
    B.ops = &capped;
    struct err e;
    unsigned long gen = B.gen;
    ck_assert_int_eq(backend_set_logits(&B, Z, 1, SMALL_V, &e), -1);
    ck_assert_str_eq(e.msg, "the capped backend takes rows of at most 4999 tokens; this one has "
                            "5000 (--backend cpu takes any)");
    ck_assert_int_eq(B.gen, gen);
    ck_assert_int_eq(B.rows, ROWS);
    ck_assert_int_eq(B.V, SMALL_V);
    struct model m;
    ck_assert_msg(model_build(&m, SMALL_V, 64, 99, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(backend_head(&B, &m, &e), -1);
    ck_assert_str_eq(e.msg, "an LM head of 5000 x 64: the capped backend takes rows of at most "
                            "4999 tokens; this one has 5000 (--backend cpu takes any)");
    ck_assert_int_eq(B.gen, gen);
    ck_assert_int_eq(B.d, 0);
    model_free(&m);
    /* At the limit both run. */
    ck_assert_msg(backend_set_logits(&B, Z, 2, SMALL_V - 1, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(B.rows, 2);
    ck_assert_int_eq(B.V, SMALL_V - 1);
    ck_assert_msg(model_build(&m, SMALL_V - 1, 64, 99, &e) == 0, "%s", e.msg);
    ck_assert_msg(backend_head(&B, &m, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(B.d, 64);
    backend_drop_head(&B);
    model_free(&m);
    B.ops = cpu;
}
END_TEST

/* The LM head through the table is model.c's RMSNorm and product, for each
 * hidden vector of the batch. */
START_TEST(test_lm_head_through_the_backend)
{
    enum { V = 3000, D = 64, N = 3 };
    struct model m;
    struct err e;
    ck_assert_msg(model_build(&m, V, D, 99, &e) == 0, "%s", e.msg);
    struct backend b;
    ck_assert_int_eq(backend_open(&b, BACKEND_CPU, &e), 0);
    ck_assert_int_eq(backend_head(&b, &m, &e), 0);
    ck_assert_int_eq(b.V, V);
    ck_assert_int_eq(b.d, D);
    float h[N * D], x[D], want[V], got[V];
    for (int i = 0; i < N * D; i++)
        h[i] = (float)(philox_uniform(5, (uint32_t)i, 0, 0) * 4.0 - 2.0);
    unsigned long gen = b.gen;
    ck_assert_int_eq(backend_logits(&b, h, N, &e), 0);
    ck_assert_int_eq(b.gen, gen + 1);
    ck_assert_int_eq(b.rows, N);
    for (int r = 0; r < N; r++) {
        model_rmsnorm(h + r * D, D, x);
        model_logits(&m, x, want);
        ck_assert_int_eq(backend_get_logits(&b, r, got, &e), 0);
        ck_assert_mem_eq(got, want, sizeof got);
    }
    ck_assert_int_eq(backend_logits(&b, h, BACKEND_MAX_BATCH + 1, &e), -1);
    ck_assert_str_eq(e.msg, "batch of 257 rows: from 1 to 256");
    /* Rows of another vocabulary replace the head's. */
    ck_assert_int_eq(backend_set_logits(&b, Z, 1, SMALL_V, &e), 0);
    ck_assert_int_eq(b.d, 0);
    backend_close(&b);
    model_free(&m);
}
END_TEST

/* backend_step is backend_logits then backend_sample (the CPU has no step
 * of its own: backend.c makes the two calls), with every check made before
 * anything runs: a refused step leaves the rows and their generation. */
START_TEST(test_step_through_the_backend)
{
    enum { D = 64 };
    struct model m;
    struct err e;
    ck_assert_msg(model_build(&m, SMALL_V, D, 77, &e) == 0, "%s", e.msg);
    struct backend b;
    ck_assert_int_eq(backend_open(&b, BACKEND_CPU, &e), 0);
    static float h[ROWS * D];
    for (int i = 0; i < ROWS * D; i++)
        h[i] = (float)(philox_uniform(6, (uint32_t)i, 0, 0) * 4.0 - 2.0);
    struct backend_res one[ROWS], two[ROWS];
    ck_assert_int_eq(backend_step(&b, h, ROWS, REQ, one, &e), -1);
    ck_assert_str_eq(e.msg, "the backend has no LM head");
    ck_assert_int_eq(backend_head(&b, &m, &e), 0);
    ck_assert_int_eq(backend_step(&b, h, 0, REQ, one, &e), -1);
    ck_assert_str_eq(e.msg, "batch of 0 rows: from 1 to 256");
    struct backend_req bad[ROWS];
    memcpy(bad, REQ, sizeof bad);
    bad[3].row = ROWS; /* a row the step does not make */
    unsigned long gen = b.gen;
    ck_assert_int_eq(backend_step(&b, h, ROWS, bad, one, &e), -1);
    ck_assert_str_eq(e.msg, "request 3: logits row 8, the backend holds 8");
    ck_assert_int_eq(b.gen, gen);
    ck_assert_int_eq(b.rows, 0);
    ck_assert_msg(backend_step(&b, h, ROWS, REQ, one, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(b.gen, gen + 1);
    ck_assert_int_eq(b.rows, ROWS);
    ck_assert(b.head_ms >= 0.0 && b.wall_ms >= b.head_ms);
    ck_assert_int_eq(backend_logits(&b, h, ROWS, &e), 0);
    ck_assert_msg(backend_sample(&b, REQ, ROWS, two, &e) == 0, "%s", e.msg);
    for (int r = 0; r < ROWS; r++) {
        ck_assert_int_eq(one[r].id, two[r].id);
        ck_assert(one[r].u == two[r].u);
        ck_assert(one[r].sum_exp == two[r].sum_exp);
        ck_assert(one[r].entropy_final == two[r].entropy_final);
        ck_assert_int_eq(one[r].kept_count, two[r].kept_count);
        ck_assert_int_eq(one[r].n_top, two[r].n_top);
        for (int k = 0; k < one[r].n_top; k++) {
            ck_assert_int_eq(one[r].top[k].id, two[r].top[k].id);
            ck_assert(one[r].top[k].final == two[r].top[k].final);
        }
    }
    /* The rows are the head's: row 5 is model.c's product of vector 5. */
    float x[D], want[SMALL_V], got[SMALL_V];
    model_rmsnorm(h + 5 * D, D, x);
    model_logits(&m, x, want);
    ck_assert_int_eq(backend_get_logits(&b, 5, got, &e), 0);
    ck_assert_mem_eq(got, want, sizeof got);
    backend_close(&b);
    model_free(&m);
}
END_TEST

/* ---- the batch view's model, on the loop lesson ----------------------------------- */

static struct lesson L;
static struct source SRC; /* runs L */

static void open_loop(struct backend *b)
{
    struct catalog cat;
    struct err e;
    ck_assert_int_eq(catalog_open(&cat, TEST_LESSONS, &e), 0);
    int rc = catalog_load(&cat, "real-loop", &L, &e);
    catalog_close(&cat);
    ck_assert_msg(rc == 0, "%s", e.msg);
    ck_assert_msg(source_open(&SRC, &L, NULL, TEST_HIDDEN, 64, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(backend_open(b, BACKEND_CPU, &e), 0);
    ck_assert_msg(source_use_backend(&SRC, b, &e) == 0, "%s", e.msg);
}

START_TEST(test_batch_of_requests)
{
    struct backend b;
    struct batch bt;
    struct err e;
    open_loop(&b);
    ck_assert_msg(batch_open(&bt, &SRC, &b, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(bt.n, BATCH_ROWS);
    ck_assert_int_eq(batch_running(&bt), BATCH_ROWS);
    /* Request 0 is greedy, as the lesson itself: after "The cat sat on the
     * mat" the loop's " and" (323, TEST_LOOP_ROUND in suites.h). */
    ck_assert_int_eq(bt.row[0].res.id, 323);
    ck_assert_int_eq(bt.row[0].res.sampled, 0);
    char d[96];
    batch_describe(&bt.row[0], d, sizeof d);
    ck_assert_str_eq(d, "greedy");
    batch_describe(&bt.row[6], d, sizeof d);
    ck_assert_str_eq(d, "T 1.2 top-k 40 top-p 0.95 min-p 0.05 seed 6");
    batch_describe(&bt.row[7], d, sizeof d);
    ck_assert_str_eq(d, "llamacpp: T 1.2 top-k 40 top-p 0.95 seed 7");
    /* Each request's u is the single run's u at its own row. */
    for (int r = 1; r < BATCH_ROWS; r++)
        ck_assert(bt.row[r].res.u == sampler_u(bt.row[r].set.sampler.seed, 1, (uint32_t)r, 0));
    /* Changing one request changes that row only. */
    struct backend_res keep[BATCH_ROWS];
    for (int r = 0; r < BATCH_ROWS; r++)
        keep[r] = bt.row[r].res;
    ck_assert_int_eq(batch_set(&bt, 4, "temperature", "0", &e), 0);
    ck_assert_int_eq(batch_sample(&bt, &SRC, &b, &e), 0);
    for (int r = 0; r < BATCH_ROWS; r++)
        if (r != 4)
            ck_assert(memcmp(&keep[r], &bt.row[r].res, sizeof keep[r]) == 0);
    ck_assert_int_eq(bt.row[4].res.id, 323); /* now greedy too */
    ck_assert_int_eq(batch_set(&bt, 4, "top-p", "2", &e), -1);
    ck_assert_str_eq(e.msg, "2 is out of range (must be in (0, 1])");
    /* Seven steps: the greedy requests go round the loop, token for token
     * the ids of check_real's test_loop_and_its_escape. */
    static const int ROUND[] = { TEST_LOOP_ROUND };
    for (int k = 0; k < 7; k++)
        ck_assert_msg(batch_step(&bt, &SRC, &b, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(bt.steps, 7);
    ck_assert_int_eq(bt.row[0].g.len, L.prompt_len + 7);
    ck_assert_mem_eq(bt.row[0].g.ids + L.prompt_len, ROUND, sizeof ROUND);
    ck_assert_mem_eq(bt.row[4].g.ids + L.prompt_len, ROUND, sizeof ROUND);
    /* A step that cannot be computed (here: rows of another vocabulary
     * replaced the head) is not taken: the batch stays as it was. */
    int len0 = bt.row[0].g.len, steps0 = bt.steps;
    float tiny[1] = { 0.0f };
    ck_assert_int_eq(backend_set_logits(&b, tiny, 1, 1, &e), 0);
    ck_assert_int_eq(batch_step(&bt, &SRC, &b, &e), -1);
    ck_assert_str_eq(e.msg, "the backend has no LM head");
    ck_assert_int_eq(bt.row[0].g.len, len0);
    ck_assert_int_eq(bt.steps, steps0);
    ck_assert_msg(source_use_backend(&SRC, &b, &e) == 0, "%s", e.msg);
    /* The order names only what the chain applies: top-p left out of it. */
    ck_assert_int_eq(batch_set(&bt, 1, "order", "top-k,temperature", &e), 0);
    batch_describe(&bt.row[1], d, sizeof d);
    ck_assert_str_eq(d, "custom: T 0.8 seed 1");
    ck_assert_int_eq(batch_preset(&SRC, 1, &bt.row[1].set, &e), 0);
    batch_describe(&bt.row[1], d, sizeof d);
    ck_assert_str_eq(d, "T 0.8 top-p 0.95 seed 1");
    /* Another call replacing the backend's rows makes the batch recompute
     * its logits before it samples again, with the same result. */
    int id = bt.row[0].res.id;
    float one[1] = { 0.0f };
    ck_assert_int_eq(backend_set_logits(&b, one, 1, 1, &e), 0);
    ck_assert_msg(source_use_backend(&SRC, &b, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(batch_sample(&bt, &SRC, &b, &e), 0);
    ck_assert_int_eq(bt.row[0].res.id, id);
    batch_free(&bt);
    backend_close(&b);
    source_close(&SRC);
    lesson_free(&L);
}
END_TEST

START_TEST(test_batch_on_toy_logits)
{
    struct catalog cat;
    struct err e;
    struct backend b;
    struct batch bt;
    ck_assert_int_eq(catalog_open(&cat, TEST_LESSONS, &e), 0);
    ck_assert_int_eq(catalog_load(&cat, "toy", &L, &e), 0);
    catalog_close(&cat);
    ck_assert_int_eq(source_open(&SRC, &L, NULL, 0, 0, &e), 0);
    ck_assert_int_eq(backend_open(&b, BACKEND_CPU, &e), 0);
    /* A toy lesson batches its own logits on the CPU: the four toy presets
     * (greedy; T 0.7 top-k 3; T 1.2 top-p 0.9; T 1 min-p 0.1), as batch.c
     * lists them, since the lesson names no requests. */
    ck_assert_msg(batch_open(&bt, &SRC, &b, &e) == 0, "%s", e.msg);
    ck_assert(bt.toy);
    ck_assert_int_eq(bt.n, 4);
    ck_assert(bt.row[0].set.sampler.temperature == 0.0);
    ck_assert(bt.row[1].set.sampler.temperature == 0.7);
    batch_free(&bt);
    backend_close(&b);
    source_close(&SRC);
    lesson_free(&L);
}
END_TEST

/* The app in the batch view: keys go to the request selected. */
START_TEST(test_app_batch_view)
{
    static struct app a;
    struct backend b;
    struct err e;
    ck_assert_int_eq(backend_open(&b, BACKEND_CPU, &e), 0);
    struct app_options src = { TEST_HIDDEN, NULL, NULL, &b, NULL };
    ck_assert_msg(app_init(&a, TEST_LESSONS, "real-loop", NULL, &src, &e) == 0, "%s", e.msg);
    app_key(&a, 'B');
    ck_assert(a.batch_on);
    app_key(&a, AK_DOWN);
    app_key(&a, AK_DOWN);
    ck_assert_int_eq(a.batch_sel, 2);
    double t1 = a.batch.row[1].set.sampler.temperature;
    app_key(&a, 't'); /* 0.8 -> the next step down */
    ck_assert(a.batch.row[2].set.sampler.temperature < 0.8);
    ck_assert(a.batch.row[1].set.sampler.temperature == t1);
    ck_assert_msg(strncmp(a.msg, "request C: temperature", 22) == 0, "%s", a.msg);
    /* The single step's settings are untouched. */
    ck_assert(a.cur.sampler.temperature == 0.0);
    /* x gives the request its preset back; the single step's commands say
     * they are not for this view and change nothing. */
    app_key(&a, 'x');
    ck_assert(a.batch.row[2].set.sampler.temperature == 0.8);
    ck_assert_str_eq(a.msg, "request C: its preset settings again");
    app_key(&a, 't');
    app_command(&a, "reset");
    ck_assert(a.batch.row[2].set.sampler.temperature == 0.8);
    int step = a.cur_step;
    app_command(&a, "step 2");
    ck_assert_int_eq(a.cur_step, step);
    ck_assert_str_eq(a.msg, ":step is for the single step: B leaves the batch view first");
    app_key(&a, ' ');
    ck_assert_int_eq(a.batch.steps, 1);
    ck_assert_int_eq(a.batch.row[0].g.ids[a.batch.prompt_len], 323);
    /* The screen: the pane lists every request, the status line the backend. */
    struct view_scratch *vs = view_scratch_new();
    ck_assert_ptr_nonnull(vs);
    struct screen s;
    ck_assert_int_eq(screen_init(&s, 132, 43, 0), 0);
    view_render(&a, &s, vs);
    char line[1024];
    int found_pane = 0, found_status = 0;
    for (int y = 0; y < s.h; y++) {
        screen_row_text(&s, y, line, sizeof line);
        found_pane |= strstr(line, "Batch of 8") != NULL;
        found_status |= strstr(line, "CPU  kernel") != NULL;
    }
    ck_assert(found_pane);
    ck_assert(found_status);
    screen_free(&s);
    /* Every size, from the smallest to a wide one, in UTF-8 and ASCII: the
     * batch pane stays inside the screen (the sanitizers watch the cells). */
    for (int w = VIEW_MIN_W; w <= 220; w += 13)
        for (int h = VIEW_MIN_H; h <= 70; h += 7)
            for (int utf8 = 0; utf8 < 2; utf8++) {
                ck_assert_int_eq(screen_init(&s, w, h, utf8), 0);
                view_render(&a, &s, vs);
                int title = 0;
                for (int y = 0; y < h; y++) {
                    screen_row_text(&s, y, line, sizeof line);
                    title |= strstr(line, "Batch of 8") != NULL;
                }
                ck_assert_msg(title, "no batch pane at %dx%d", w, h);
                screen_free(&s);
            }
    view_scratch_free(vs);
    app_key(&a, 'B');
    ck_assert(!a.batch_on);
    /* A toy lesson batches its own logits: four requests. */
    app_command(&a, "lesson toy");
    app_key(&a, 'B');
    ck_assert(a.batch_on);
    ck_assert_int_eq(a.batch.n, 4);
    app_free(&a);
    backend_close(&b);
}
END_TEST

/* The app's many draws on a backend other than the CPU: made there, only the
 * tokens come back and are counted. A table with the CPU's functions under
 * another address takes that path here, and must count what rr_draws does. */
START_TEST(test_app_draws_on_another_backend)
{
    static struct app a;
    static struct backend_ops other;
    other = backend_cpu_ops;
    other.name = "other";
    struct backend b;
    struct err e;
    ck_assert_int_eq(backend_open(&b, BACKEND_CPU, &e), 0);
    b.ops = &other;
    struct app_options src = { TEST_HIDDEN, NULL, NULL, &b, NULL };
    ck_assert_msg(app_init(&a, TEST_LESSONS, "real-story", NULL, &src, &e) == 0, "%s", e.msg);
    app_command(&a, "top-p 0.9");
    app_key(&a, 'D');
    ck_assert_msg(a.draws_ok, "%s", a.msg);
    static struct draws want;
    ck_assert_int_eq(draws_run(&a.t, a.cur.sampler.seed, source_draw_step(&a.L, a.cur_len),
                               DRAWS_DEFAULT, DRAWS_ROWS, &want, &e),
                     0);
    ck_assert_mem_eq(a.draws.c_plain, want.c_plain, sizeof want.c_plain);
    ck_assert_mem_eq(a.draws.c_kept, want.c_kept, sizeof want.c_kept);
    ck_assert_int_eq(a.draws.tail_plain, want.tail_plain);
    ck_assert_int_eq(a.draws.first_kept, a.t.choice.id);
    app_free(&a);
    backend_close(&b);
}
END_TEST

Suite *suite_backend(void)
{
    Suite *s = suite_create("backend");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup_batch, teardown_batch);
    tcase_add_test(core, test_choosing_a_backend);
    tcase_add_test(core, test_one_cpu_is_one_thread);
    tcase_add_test(core, test_batch_rows_are_single_runs);
    tcase_add_test(core, test_editing_one_request_leaves_the_others);
    tcase_add_test(core, test_final_and_kept_of_every_token);
    tcase_add_test(core, test_draws_through_the_backend);
    tcase_add_test(core, test_lm_head_through_the_backend);
    tcase_add_test(core, test_step_through_the_backend);
    suite_add_tcase(s, core);
    TCase *errors = tcase_create("errors");
    tcase_add_checked_fixture(errors, setup_batch, teardown_batch);
    tcase_add_test(errors, test_bad_requests);
    tcase_add_test(errors, test_stages_a_backend_lacks);
    tcase_add_test(errors, test_grammar_mask_on_the_cpu_backend);
    tcase_add_test(errors, test_vocab_past_the_cuda_limit);
    tcase_add_test(errors, test_rows_past_a_backends_limit);
    tcase_add_test(errors, test_batch_on_toy_logits);
    suite_add_tcase(s, errors);
    TCase *batch = tcase_create("batch");
    tcase_set_timeout(batch, 120);
    tcase_add_test(batch, test_batch_of_requests);
    tcase_add_test(batch, test_app_batch_view);
    tcase_add_test(batch, test_app_draws_on_another_backend);
    suite_add_tcase(s, batch);
    return s;
}
