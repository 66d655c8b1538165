// peer_llama.cpp - llama.cpp's sampler on the rows and chains of bench_chains.h, for
// `make bench-peers` (tests/bench/peers.sh builds it against the llama.cpp that
// tests/oracle/fetch-llama.sh fetched; nothing of llama.cpp is in this tree).
//
// Each call does what llama.cpp's common sampler does per token: refill the array of
// (id, logit, p) from the logits, then apply the chain and read the selected token. The
// chains are built as common_sampler_init builds them from the same settings, in
// llama.cpp's own order (penalties, top-k, top-p, min-p, temperature, then the draw;
// greedy alone for temperature 0). Each round times every chain once, interleaved, on
// the thread's CPU clock, as bench_fast does; the medians come out as lines
//   cell V LETTER peer MICROSECONDS
//
// Usage: peer_llama V ROUNDS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include "llama.h"

extern "C" {
#include "bench_chains.h"
}

static double cpu_us()
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

// The value of setting name in chain c, or fallback when the chain does not set it.
static double setting(const bench_chain &c, const char *name, double fallback)
{
    for (int i = 0; c.settings[i]; i += 2)
        if (strcmp(c.settings[i], name) == 0)
            return atof(c.settings[i + 1]);
    return fallback;
}

// Chain c as common_sampler_init makes it: the filters that are on, in llama.cpp's order.
static llama_sampler *make_chain(const bench_chain &c, int V, const int *ctx)
{
    llama_sampler *ch = llama_sampler_chain_init(llama_sampler_chain_default_params());
    double temp = setting(c, "temperature", 1.0);
    if (temp <= 0.0) {
        llama_sampler_chain_add(ch, llama_sampler_init_greedy());
        return ch;
    }
    if (c.window > 0) {
        llama_sampler *pen = llama_sampler_init_penalties(
            V, (int)setting(c, "penalty-last-n", 64), (float)setting(c, "repetition-penalty", 1.0),
            0.0f, 0.0f);
        for (int j = 0; j < c.window; j++)
            llama_sampler_accept(pen, ctx[j]);
        llama_sampler_chain_add(ch, pen);
    }
    if (setting(c, "top-k", 0) > 0)
        llama_sampler_chain_add(ch, llama_sampler_init_top_k((int)setting(c, "top-k", 0)));
    if (setting(c, "top-p", 1.0) < 1.0)
        llama_sampler_chain_add(ch, llama_sampler_init_top_p((float)setting(c, "top-p", 1.0), 1));
    if (setting(c, "min-p", 0.0) > 0.0)
        llama_sampler_chain_add(ch, llama_sampler_init_min_p((float)setting(c, "min-p", 0.0), 1));
    llama_sampler_chain_add(ch, llama_sampler_init_temp((float)temp));
    llama_sampler_chain_add(ch, llama_sampler_init_dist(42));
    return ch;
}

// One call: the refill and the chain. Returns the token.
static int sample(llama_sampler *ch, std::vector<llama_token_data> &cur, const float *row, int V)
{
    for (int i = 0; i < V; i++)
        cur[i] = llama_token_data{ i, row[i], 0.0f };
    llama_token_data_array arr = { cur.data(), cur.size(), -1, false };
    llama_sampler_apply(ch, &arr);
    return arr.data[arr.selected].id;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: peer_llama V ROUNDS\n");
        return 2;
    }
    int V = atoi(argv[1]), rounds = atoi(argv[2]);
    if (V < 1024 || rounds < 1) {
        fprintf(stderr, "peer_llama: V must be at least 1024 and ROUNDS at least 1\n");
        return 2;
    }
    std::vector<float> row(V);
    int ctx[BENCH_WINDOW];
    bench_make_row(row.data(), V);
    bench_make_context(ctx, V);
    std::vector<llama_token_data> cur(V);
    std::vector<llama_sampler *> chains;
    for (int c = 0; c < BENCH_N_CHAINS; c++)
        chains.push_back(make_chain(BENCH_CHAINS[c], V, ctx));
    std::vector<std::vector<double>> us(BENCH_N_CHAINS, std::vector<double>(rounds));
    volatile int sink = 0;
    for (int r = 0; r < rounds; r++)
        for (int c = 0; c < BENCH_N_CHAINS; c++) {
            double t0 = cpu_us();
            sink = sink + sample(chains[c], cur, row.data(), V);
            us[c][r] = cpu_us() - t0;
        }
    for (int c = 0; c < BENCH_N_CHAINS; c++) {
        std::sort(us[c].begin(), us[c].end());
        printf("cell %d %c peer %.1f\n", V, BENCH_CHAINS[c].letter, us[c][rounds / 2]);
        llama_sampler_free(chains[c]);
    }
    return 0;
}
