// llama_samplers.cpp - llama.cpp's samplers on one row of logits: the oracle of logitlab's
// stages (tests/oracle/samplers.sh writes its output as tests/golden/samplers/NAME.txt, and
// samplers_check.c holds logitlab's kept set to it).
//
//   llama_samplers ROW CONTEXT CHAIN
//
// ROW is KIND:V:SEED (sampler_rows.h) or a file of logits, one a line (-inf allowed).
// CONTEXT is -, ids separated by commas, or top:N:R (sampler_rows.h): the ids every sampler
// of the chain accepts first, as llama.cpp's common sampler accepts the prompt and the tokens
// generated (penalties and DRY count them).
// CHAIN is llama.cpp's samplers with their arguments, separated by ';', applied in that
// order, as llama_sampler_chain applies them, to the llama_token_data_array of the row (id
// order, not sorted), with no final draw: "penalties 64 1.1 0 0; top_k 40; temp 0.8". The
// names and arguments are the SAMPLERS table below (`llama_samplers --list`).
//
// Prints a header, then one line per token left in the array with a finite logit, by id:
//   ID LOGIT     (the logit after the chain, %.9g: a float read back exactly)
// A token left in the array at -inf (temp 0, top_n_sigma mask rather than remove) has
// probability 0 in llama.cpp: it is counted in the header, not listed. mirostat,
// mirostat_v2 and adaptive_p draw a token: the header gives it (`selected ID`).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "llama.h"
#include "llama-sampler.h" // llama_sampler_init_dry_testing: DRY on token ids, no vocabulary

#include "sampler_rows.h"

namespace
{

struct args {
    std::vector<std::string> w; // the words after the name
    int V;                      // the row's size (penalties, logit_bias and mirostat take it)
};

float f(const args &a, size_t i)
{
    return strtof(a.w[i].c_str(), nullptr);
}
int i32(const args &a, size_t i)
{
    return atoi(a.w[i].c_str());
}
uint32_t u32(const args &a, size_t i)
{
    return (uint32_t)strtoul(a.w[i].c_str(), nullptr, 10);
}

// DRY's sequence breakers as token ids: "-" none, else sequences separated by '/', the ids
// of one by ','.
std::vector<std::vector<llama_token>> breakers(const std::string &text)
{
    std::vector<std::vector<llama_token>> out;
    if (text == "-")
        return out;
    std::stringstream seqs(text);
    std::string seq, id;
    while (std::getline(seqs, seq, '/')) {
        std::stringstream ids(seq);
        out.emplace_back();
        while (std::getline(ids, id, ','))
            out.back().push_back(atoi(id.c_str()));
    }
    return out;
}

// logit_bias's arguments: ID:BIAS ...
llama_sampler *logit_bias(const args &a)
{
    std::vector<llama_logit_bias> lb;
    for (const std::string &w : a.w)
        lb.push_back({ atoi(w.c_str()), strtof(w.c_str() + w.find(':') + 1, nullptr) });
    return llama_sampler_init_logit_bias(a.V, (int32_t)lb.size(), lb.data());
}

// One row per sampler: its name, how many words it takes (-1: any number, at least one), what
// they are, and how it is made. A new sampler is one row here.
struct sampler_row {
    const char *name;
    int n_args;
    const char *usage;
    llama_sampler *(*make)(const args &);
};

const sampler_row SAMPLERS[] = {
    { "penalties", 4, "LAST_N REPEAT FREQ PRESENT",
      [](const args &a) {
          return llama_sampler_init_penalties(a.V, i32(a, 0), f(a, 1), f(a, 2), f(a, 3));
      } },
    { "top_k", 1, "K", [](const args &a) { return llama_sampler_init_top_k(i32(a, 0)); } },
    { "top_p", 2, "P MIN_KEEP",
      [](const args &a) { return llama_sampler_init_top_p(f(a, 0), (size_t)i32(a, 1)); } },
    { "min_p", 2, "P MIN_KEEP",
      [](const args &a) { return llama_sampler_init_min_p(f(a, 0), (size_t)i32(a, 1)); } },
    { "typical", 2, "P MIN_KEEP",
      [](const args &a) { return llama_sampler_init_typical(f(a, 0), (size_t)i32(a, 1)); } },
    { "top_n_sigma", 1, "N",
      [](const args &a) { return llama_sampler_init_top_n_sigma(f(a, 0)); } },
    { "temp", 1, "T", [](const args &a) { return llama_sampler_init_temp(f(a, 0)); } },
    { "temp_ext", 3, "T DELTA EXPONENT",
      [](const args &a) { return llama_sampler_init_temp_ext(f(a, 0), f(a, 1), f(a, 2)); } },
    { "xtc", 4, "PROBABILITY THRESHOLD MIN_KEEP SEED",
      [](const args &a) {
          return llama_sampler_init_xtc(f(a, 0), f(a, 1), (size_t)i32(a, 2), u32(a, 3));
      } },
    { "dry", 5, "MULTIPLIER BASE ALLOWED_LENGTH LAST_N BREAKERS (ids: 5,6/7 or -)",
      [](const args &a) {
          return llama_sampler_init_dry_testing(f(a, 0), f(a, 1), i32(a, 2), i32(a, 3),
                                                breakers(a.w[4]));
      } },
    { "logit_bias", -1, "ID:BIAS ...", logit_bias },
    { "mirostat", 4, "TAU ETA M SEED",
      [](const args &a) {
          return llama_sampler_init_mirostat(a.V, u32(a, 3), f(a, 0), f(a, 1), i32(a, 2));
      } },
    { "mirostat_v2", 3, "TAU ETA SEED",
      [](const args &a) { return llama_sampler_init_mirostat_v2(u32(a, 2), f(a, 0), f(a, 1)); } },
    { "adaptive_p", 3, "TARGET DECAY SEED",
      [](const args &a) { return llama_sampler_init_adaptive_p(f(a, 0), f(a, 1), u32(a, 2)); } },
};

// Adds the samplers of text ("name args; name args") to chain. Returns 0, or -1 with a line
// on stderr.
int build_chain(llama_sampler *chain, const std::string &text, int V)
{
    std::stringstream parts(text);
    std::string part;
    while (std::getline(parts, part, ';')) {
        std::stringstream words(part);
        std::string name, w;
        args a{ {}, V };
        if (!(words >> name))
            continue;
        while (words >> w)
            a.w.push_back(w);
        const sampler_row *row = nullptr;
        for (const sampler_row &r : SAMPLERS)
            if (name == r.name)
                row = &r;
        if (!row) {
            fprintf(stderr, "llama_samplers: unknown sampler '%s' (--list names them)\n",
                    name.c_str());
            return -1;
        }
        if (row->n_args >= 0 ? a.w.size() != (size_t)row->n_args : a.w.empty()) {
            fprintf(stderr, "llama_samplers: %s takes %s\n", row->name, row->usage);
            return -1;
        }
        llama_sampler_chain_add(chain, row->make(a));
    }
    return 0;
}

// The row of spec: KIND:V:SEED or a file of logits, one a line.
int read_row(const char *spec, std::vector<float> &row)
{
    char kind[16], msg[256];
    int V = 0;
    uint64_t seed = 0;
    FILE *fp = fopen(spec, "r");
    if (fp) {
        char line[128];
        while (fgets(line, sizeof line, fp))
            row.push_back(strncmp(line, "-inf", 4) == 0 ? -INFINITY : strtof(line, nullptr));
        fclose(fp);
        return row.size() >= 2 ? 0 : -1;
    }
    if (rows_parse(spec, kind, sizeof kind, &V, &seed, msg, sizeof msg) != 0) {
        fprintf(stderr, "llama_samplers: %s\n", msg);
        return -1;
    }
    row.resize((size_t)V);
    if (rows_make(spec, kind, V, seed, row.data()) != 0) {
        fprintf(stderr,
                "llama_samplers: row '%s': unknown kind '%s', or a list that is not numbers\n",
                spec, kind);
        return -1;
    }
    return 0;
}

void print_result(const llama_token_data_array &arr, const std::vector<float> &row,
                  const char **argv)
{
    std::vector<std::pair<int, float>> kept;
    size_t masked = 0;
    for (size_t i = 0; i < arr.size; i++) {
        if (arr.data[i].logit == -INFINITY)
            masked++;
        else
            kept.push_back({ arr.data[i].id, arr.data[i].logit });
    }
    std::sort(kept.begin(), kept.end());
    printf("# row %s | context %s | chain %s\n", argv[1], argv[2], argv[3]);
    printf("# kept %zu of %zu (in the array at -inf: %zu)", kept.size(), row.size(), masked);
    if (arr.selected >= 0)
        printf(", selected %d", arr.data[arr.selected].id);
    printf("\n");
    for (const auto &k : kept)
        printf("%d %.9g\n", k.first, (double)k.second);
}

} // namespace

int main(int argc, const char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (const sampler_row &r : SAMPLERS)
            printf("%s %s\n", r.name, r.usage);
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: llama_samplers ROW CONTEXT CHAIN   (or --list)\n");
        return 2;
    }
    std::vector<float> row;
    if (read_row(argv[1], row) != 0)
        return 2;
    int V = (int)row.size();
    std::vector<int> ctx(ROWS_MAX_CTX);
    char msg[256];
    int n_ctx = rows_context(argv[2], row.data(), V, ctx.data(), msg, sizeof msg);
    if (n_ctx < 0) {
        fprintf(stderr, "llama_samplers: %s\n", msg);
        return 2;
    }
    llama_sampler *chain = llama_sampler_chain_init(llama_sampler_chain_default_params());
    if (build_chain(chain, argv[3], V) != 0)
        return 2;
    for (int i = 0; i < n_ctx; i++)
        llama_sampler_accept(chain, ctx[(size_t)i]);
    std::vector<llama_token_data> cur((size_t)V);
    for (int i = 0; i < V; i++)
        cur[(size_t)i] = llama_token_data{ i, row[(size_t)i], 0.0f };
    llama_token_data_array arr = { cur.data(), cur.size(), -1, false };
    llama_sampler_apply(chain, &arr);
    print_result(arr, row, argv);
    llama_sampler_free(chain);
    return 0;
}
