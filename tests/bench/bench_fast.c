/* bench_fast.c - the fast sampler on the chains of bench_chains.h, in both
 * orders, at the three vocabulary sizes: microseconds per call (one thread,
 * the whole trace with the top rows), and greedy against a bare argmax over
 * the same float row. Every cell is timed once per round, the rounds
 * interleaving all cells, so that a change in the machine's load falls on
 * all of them alike; medians are printed. The clock is the thread's CPU
 * time, so that the time the thread waits for a core on a loaded machine
 * does not count (what it loses to another program's use of the caches
 * still does). Each cell is checked against the
 * reference sampler once (the same token and kept count).
 *
 * With --peer V ROUNDS: one size, the medians as lines for
 * tests/bench/peers.sh, which runs llama.cpp's sampler (peer_llama.cpp) on
 * the same row in processes interleaved with these:
 *   cell V LETTER ORDER MICROSECONDS     (ORDER: lesson, llamacpp)
 *   cell V - argmax MICROSECONDS
 *   chain LETTER NAME                    (bench_chains.h's, for the table)
 * With --sizes: the vocabulary sizes of bench_chains.h, one a line.
 * LOGITLAB_VECTOR forces a vector path (base/vecpath.h), as for logitlab:
 * the header names the one timed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h" /* bench_median */
#include "bench_chains.h"

#include "base/vecpath.h"
#include "core/sampler.h"
#include "core/settings.h"

#define ROUNDS   31 /* the most rounds (--peer may ask for fewer) */
#define TOP_ROWS 20 /* the rows a pane shows */
#define N_CELLS  (BENCH_N_CHAINS * BENCH_N_ORDERS)

/* The thread's CPU time in microseconds. */
static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The settings of chain c in order o; -1 with the message in e. */
static int chain_settings(struct settings *s, const struct bench_chain *c, const char *order,
                          struct err *e)
{
    settings_defaults(s);
    for (int i = 0; c->settings[i]; i += 2)
        if (settings_set(s, c->settings[i], c->settings[i + 1], e) < 0)
            return -1;
    if (settings_set(s, "order", order, e) < 0)
        return -1;
    s->sampler.penalty_scope = SCOPE_ALL;
    s->sampler.seed = 42;
    return 0;
}

/* What the simplest greedy does: one plain pass, the first largest float,
 * the largest so far kept in a register (the caller keeps the result, so
 * that the compiler cannot drop it). */
static int bare_argmax(const float *z, int V)
{
    int best = 0;
    float max = z[0];
    for (int i = 1; i < V; i++)
        if (z[i] > max) {
            max = z[i];
            best = i;
        }
    return best;
}

struct bench_size {
    int V, rounds;
    float *row;
    int ctx[BENCH_WINDOW];
    struct settings s[N_CELLS];
    struct trace t;
    double us[N_CELLS][ROUNDS];
    double argmax_us[ROUNDS];
};

/* The fast path against the reference on cell k: the same token and kept
 * count. Returns 0, or -1 having said what differs. */
static int check_cell(struct bench_size *b, int k)
{
    const struct bench_chain *c = &BENCH_CHAINS[k / BENCH_N_ORDERS];
    double *zd = malloc((size_t)b->V * sizeof *zd);
    struct trace tr;
    struct err e;
    if (!zd || trace_init(&tr, b->V, &e) < 0) {
        free(zd);
        fprintf(stderr, "bench_fast: out of memory\n");
        return -1;
    }
    for (int i = 0; i < b->V; i++)
        zd[i] = b->row[i];
    struct sampler_input in = {
        .vocab_size = b->V, .logits = zd, .context = b->ctx, .context_len = c->window, .step = 1
    };
    int rc = sampler_run(&in, &b->s[k].sampler, &tr, &e);
    if (rc == 0 && (tr.choice.id != b->t.choice.id || tr.kept_count != b->t.kept_count)) {
        fprintf(stderr, "bench_fast: (%c) %s at V=%d: token %d kept %d, the reference %d kept %d\n",
                c->letter, BENCH_ORDERS[k % BENCH_N_ORDERS], b->V, b->t.choice.id, b->t.kept_count,
                tr.choice.id, tr.kept_count);
        rc = -1;
    } else if (rc < 0) {
        fprintf(stderr, "bench_fast: the reference: %s\n", e.msg);
    }
    trace_free(&tr);
    free(zd);
    return rc;
}

/* One call of cell k, timed into us[k][r]. Returns 0 or -1. */
static int time_cell(struct bench_size *b, int k, int r)
{
    const struct bench_chain *c = &BENCH_CHAINS[k / BENCH_N_ORDERS];
    struct sampler_input in = { .vocab_size = b->V,
                                .logits_f = b->row,
                                .context = b->ctx,
                                .context_len = c->window,
                                .step = 1 };
    struct err e;
    double t0 = cpu_us();
    if (sampler_run_fast(&in, &b->s[k].sampler, &b->t, TOP_ROWS, &e) < 0) {
        fprintf(stderr, "bench_fast: (%c): %s\n", c->letter, e.msg);
        return -1;
    }
    b->us[k][r] = cpu_us() - t0;
    return 0;
}

/* Every round times each cell and the bare argmax once. */
static int run_size(struct bench_size *b)
{
    volatile int sink = 0;
    for (int r = 0; r < b->rounds; r++) {
        for (int k = 0; k < N_CELLS; k++) {
            if (time_cell(b, k, r) < 0 || (r == 0 && check_cell(b, k) < 0))
                return -1;
        }
        double t0 = cpu_us();
        sink += bare_argmax(b->row, b->V);
        b->argmax_us[r] = cpu_us() - t0;
    }
    (void)sink;
    return 0;
}

static void print_size(struct bench_size *b)
{
    double med[N_CELLS];
    for (int k = 0; k < N_CELLS; k++)
        med[k] = bench_median(b->us[k], b->rounds);
    double am = bench_median(b->argmax_us, b->rounds);
    printf("V = %d\n", b->V);
    printf("  %-50s %9s %9s\n", "chain", BENCH_ORDERS[0], BENCH_ORDERS[1]);
    for (int c = 0; c < BENCH_N_CHAINS; c++)
        printf("  (%c) %-46s %9.1f %9.1f\n", BENCH_CHAINS[c].letter, BENCH_CHAINS[c].name,
               med[c * BENCH_N_ORDERS], med[c * BENCH_N_ORDERS + 1]);
    printf("  bare float argmax %.1f us; greedy / argmax: %.2f (lesson), %.2f (llamacpp)\n", am,
           med[0] / am, med[1] / am);
}

/* The medians as peers.sh reads them. */
static void print_peer_lines(struct bench_size *b)
{
    for (int k = 0; k < N_CELLS; k++)
        printf("cell %d %c %s %.1f\n", b->V, BENCH_CHAINS[k / BENCH_N_ORDERS].letter,
               BENCH_ORDERS[k % BENCH_N_ORDERS], bench_median(b->us[k], b->rounds));
    printf("cell %d - argmax %.1f\n", b->V, bench_median(b->argmax_us, b->rounds));
    for (int c = 0; c < BENCH_N_CHAINS; c++)
        printf("chain %c %s\n", BENCH_CHAINS[c].letter, BENCH_CHAINS[c].name);
}

static void print_load(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char buf[64] = "unknown";
    if (f) {
        if (!fgets(buf, sizeof buf, f))
            strcpy(buf, "unknown");
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = 0;
    printf("load average: %s\n", buf);
}

/* Sets up size V (the row, the context, every cell's settings) and runs
 * it; print_size or print_peer_lines then. Returns 0, or 1 having said why. */
static int bench_one_size(int V, int rounds, void (*print)(struct bench_size *))
{
    struct bench_size *b = calloc(1, sizeof *b);
    struct err e;
    if (!b)
        return 1;
    b->V = V;
    b->rounds = rounds;
    b->row = malloc((size_t)b->V * sizeof *b->row);
    int rc = 1;
    if (!b->row || trace_init(&b->t, b->V, &e) < 0) {
        fprintf(stderr, "bench_fast: out of memory\n");
        free(b->row);
        free(b);
        return 1;
    }
    bench_make_row(b->row, b->V);
    bench_make_context(b->ctx, b->V);
    int k = 0;
    for (; k < N_CELLS; k++)
        if (chain_settings(&b->s[k], &BENCH_CHAINS[k / BENCH_N_ORDERS],
                           BENCH_ORDERS[k % BENCH_N_ORDERS], &e) < 0) {
            fprintf(stderr, "bench_fast: %s\n", e.msg);
            break;
        }
    if (k == N_CELLS && run_size(b) == 0) {
        print(b);
        rc = 0;
    }
    trace_free(&b->t);
    free(b->row);
    free(b);
    return rc;
}

int main(int argc, char **argv)
{
    struct err e;
    int path = vec_path_check(&e);
    if (path < 0) {
        fprintf(stderr, "bench_fast: %s\n", e.msg);
        return 2;
    }
    if (argc == 4 && strcmp(argv[1], "--peer") == 0) {
        int V = atoi(argv[2]), rounds = atoi(argv[3]);
        if (V < 1024 || rounds < 1 || rounds > ROUNDS) {
            fprintf(stderr, "bench_fast: --peer V ROUNDS: V at least 1024, ROUNDS 1 to %d\n",
                    ROUNDS);
            return 2;
        }
        return bench_one_size(V, rounds, print_peer_lines);
    }
    if (argc == 2 && strcmp(argv[1], "--sizes") == 0) {
        for (int si = 0; si < BENCH_N_SIZES; si++)
            printf("%d\n", BENCH_SIZES[si]);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: bench_fast [--peer V ROUNDS | --sizes]\n");
        return 2;
    }
    printf("The fast sampler, one thread, one row, %d top rows: medians of %d interleaved rounds "
           "(us per call)\n",
           TOP_ROWS, ROUNDS);
    printf("vector path: %s (%s)\n", vec_path_name(path), vec_path_level(path));
    print_load();
    for (int si = 0; si < BENCH_N_SIZES; si++)
        if (bench_one_size(BENCH_SIZES[si], ROUNDS, print_size) != 0)
            return 1;
    print_load();
    return 0;
}
