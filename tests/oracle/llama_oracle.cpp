/* llama_oracle.cpp - what llama.cpp itself says about a prompt: its token ids, the logits of
 * the last prompt position (top entries, a checksum of the whole row, the argmax) and its greedy
 * continuation. The output is the line format of tests/oracle/README.md, the same that ref.py
 * (the exact reference) prints, so that compare.py can set one against the other.
 *
 * Test tooling only: it is built against the llama.cpp that fetch-llama.sh builds in
 * build/oracle/, never part of logitlab.
 *
 * usage: llama_oracle -m FILE.gguf --prompts FILE [--name NAME] [--greedy N] [--top K]
 *                     [--threads N] [--kv f32|f16] [--save-logits OUT.npy] [--commit TEXT]
 *                     [--gen TEXT]   (--commit and --gen are only echoed, on lines of their own)
 */
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

#include "llama.h"

namespace
{

struct options {
    const char *model = nullptr;
    const char *prompts = nullptr;
    const char *name = nullptr;
    const char *save = nullptr;
    const char *commit = "unknown";
    const char *gen = nullptr;
    int greedy = 8;
    int top = 20;
    int threads = 2;
    bool kv_f16 = false;
};

struct prompt {
    std::string raw;  /* the quoted form, as in the prompts file: echoed verbatim */
    std::string text; /* the bytes after unescaping */
    bool special = false;
};

[[noreturn]] void die(int status, const std::string &msg)
{
    std::fprintf(stderr, "llama_oracle: %s\n", msg.c_str());
    std::exit(status);
}

/* Only llama.cpp's errors reach stderr; its chatter would bury ours. */
void quiet_log(enum ggml_log_level level, const char *text, void *)
{
    if (level == GGML_LOG_LEVEL_ERROR)
        std::fputs(text, stderr);
}

int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Unescapes the body of a quoted prompt: \\ \" \n \t \r and \xHH (any byte, so that lone
 * UTF-8 bytes can be written). Returns false on a bad escape. */
bool unescape(const std::string &body, std::string &out)
{
    out.clear();
    for (size_t i = 0; i < body.size(); i++) {
        char c = body[i];
        if (c != '\\') {
            out += c;
            continue;
        }
        if (++i >= body.size())
            return false;
        switch (body[i]) {
        case '\\':
            out += '\\';
            break;
        case '"':
            out += '"';
            break;
        case 'n':
            out += '\n';
            break;
        case 't':
            out += '\t';
            break;
        case 'r':
            out += '\r';
            break;
        case 'x': {
            int hi = i + 2 < body.size() ? hex_digit(body[i + 1]) : -1;
            int lo = i + 2 < body.size() ? hex_digit(body[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return false;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
            break;
        }
        default:
            return false;
        }
    }
    return true;
}

/* A prompts file: one prompt a line, `[special] "TEXT"`; '#' lines and blank ones are skipped. */
std::vector<prompt> read_prompts(const char *path)
{
    FILE *f = std::fopen(path, "r");
    if (!f)
        die(3, std::string(path) + ": " + std::strerror(errno));
    std::vector<prompt> out;
    char buf[8192];
    int line = 0;
    while (std::fgets(buf, sizeof buf, f)) {
        line++;
        std::string s(buf);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
            s.pop_back();
        if (s.empty() || s[0] == '#')
            continue;
        prompt p;
        if (s.rfind("special ", 0) == 0) {
            p.special = true;
            s = s.substr(8);
        }
        std::string where = std::string(path) + ":" + std::to_string(line);
        if (s.size() < 2 || s.front() != '"' || s.back() != '"')
            die(2, where + ": a prompt is a quoted string");
        p.raw = s;
        if (!unescape(s.substr(1, s.size() - 2), p.text))
            die(2, where + ": bad escape in the prompt");
        out.push_back(p);
    }
    std::fclose(f);
    if (out.empty())
        die(2, std::string(path) + ": no prompts");
    return out;
}

options parse(int argc, char **argv)
{
    options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() -> const char * {
            if (i + 1 >= argc)
                die(2, a + ": needs a value");
            return argv[++i];
        };
        if (a == "-m" || a == "--model")
            o.model = value();
        else if (a == "--prompts")
            o.prompts = value();
        else if (a == "--name")
            o.name = value();
        else if (a == "--save-logits")
            o.save = value();
        else if (a == "--commit")
            o.commit = value();
        else if (a == "--gen")
            o.gen = value();
        else if (a == "--greedy")
            o.greedy = std::atoi(value());
        else if (a == "--top")
            o.top = std::atoi(value());
        else if (a == "--threads")
            o.threads = std::atoi(value());
        else if (a == "--kv") {
            std::string v = value();
            if (v != "f32" && v != "f16")
                die(2, "--kv: f32 or f16");
            o.kv_f16 = v == "f16";
        } else
            die(2, a + ": unknown option");
    }
    if (!o.model || !o.prompts)
        die(2, "usage: llama_oracle -m FILE.gguf --prompts FILE [--name NAME] [--greedy N] "
               "[--top K] [--threads N] [--kv f32|f16] [--save-logits OUT.npy] [--commit TEXT] "
               "[--gen TEXT]");
    if (o.greedy < 0 || o.top < 1 || o.threads < 1)
        die(2, "--greedy, --top, --threads: out of range");
    return o;
}

/* The last position's row, summarized; ties go to the lower id, as everywhere in logitlab. */
void print_row(const float *z, int n_vocab, int top)
{
    std::vector<int> ids(n_vocab);
    for (int i = 0; i < n_vocab; i++)
        ids[i] = i;
    int k = std::min(top, n_vocab);
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                      [z](int a, int b) { return z[a] > z[b] || (z[a] == z[b] && a < b); });
    for (int i = 0; i < k; i++)
        std::printf("top %d %.9g\n", ids[i], z[ids[i]]);
    double sum = 0, sumsq = 0;
    for (int i = 0; i < n_vocab; i++) {
        sum += z[i];
        sumsq += static_cast<double>(z[i]) * z[i];
    }
    std::printf("sum %.17g\nsumsq %.17g\nargmax %d\n", sum, sumsq, ids[0]);
}

int argmax(const float *z, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (z[i] > z[best])
            best = i;
    return best;
}

void decode_or_die(llama_context *ctx, std::vector<llama_token> &toks, const char *model)
{
    if (llama_decode(ctx, llama_batch_get_one(toks.data(), static_cast<int32_t>(toks.size()))))
        die(3, std::string(model) + ": llama_decode failed");
}

/* A float32 .npy of shape (rows, cols), the format logitlab's --logits reads. */
void save_npy(const char *path, const std::vector<float> &rows, size_t n_rows, size_t cols)
{
    FILE *f = std::fopen(path, "wb");
    if (!f)
        die(3, std::string(path) + ": " + std::strerror(errno));
    std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(n_rows) +
                    ", " + std::to_string(cols) + "), }";
    while ((10 + h.size() + 1) % 64)
        h += ' ';
    h += '\n';
    unsigned char pre[10] = { 0x93,
                              'N',
                              'U',
                              'M',
                              'P',
                              'Y',
                              1,
                              0,
                              static_cast<unsigned char>(h.size() & 0xff),
                              static_cast<unsigned char>(h.size() >> 8) };
    bool ok = std::fwrite(pre, 1, 10, f) == 10 &&
              std::fwrite(h.data(), 1, h.size(), f) == h.size() &&
              std::fwrite(rows.data(), sizeof(float), rows.size(), f) == rows.size();
    if (std::fclose(f) != 0 || !ok)
        die(3, std::string(path) + ": write failed");
}

const char *base_name(const char *path)
{
    const char *s = std::strrchr(path, '/');
    return s ? s + 1 : path;
}

/* One record of the output: the prompt's tokens, its last row (appended to saved, for
 * --save-logits) and the greedy continuation, from an empty cache. */
void run_prompt(llama_context *ctx, const options &o, const prompt &p, size_t pi,
                std::vector<float> &saved)
{
    const llama_vocab *vocab = llama_model_get_vocab(llama_get_model(ctx));
    const int n_vocab = llama_vocab_n_tokens(vocab);
    int cap = static_cast<int>(p.text.size()) + 8;
    std::vector<llama_token> toks(cap);
    int n = llama_tokenize(vocab, p.text.data(), static_cast<int32_t>(p.text.size()), toks.data(),
                           cap, true, p.special);
    if (n < 0)
        die(3, std::string(o.prompts) + ": tokenizing prompt " + std::to_string(pi) + " failed");
    toks.resize(n);
    std::printf("prompt %zu %s\nspecial %d\ntokens %d", pi, p.raw.c_str(), p.special ? 1 : 0, n);
    for (llama_token t : toks)
        std::printf(" %d", t);
    std::printf("\n");
    if (n == 0)
        die(2, std::string(o.prompts) + ": prompt " + std::to_string(pi) + " has no tokens");

    llama_memory_clear(llama_get_memory(ctx), true);
    decode_or_die(ctx, toks, o.model);
    const float *z = llama_get_logits_ith(ctx, -1);
    saved.insert(saved.end(), z, z + n_vocab);
    print_row(z, n_vocab, o.top);

    std::vector<llama_token> cont;
    for (int g = 0; g < o.greedy; g++) {
        std::vector<llama_token> one = { argmax(z, n_vocab) };
        cont.push_back(one[0]);
        if (g + 1 == o.greedy)
            break;
        decode_or_die(ctx, one, o.model);
        z = llama_get_logits_ith(ctx, -1);
    }
    std::printf("greedy %d", o.greedy);
    for (llama_token t : cont)
        std::printf(" %d", t);
    std::printf("\nend\n");
}

} // namespace

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    std::vector<prompt> prompts = read_prompts(o.prompts);

    llama_log_set(quiet_log, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    /* No repacked or AMX weight layouts: the plain CPU kernels, whose rounding doc/model.md states
     * (and ggml's AMX path crashes on this machine's small test shapes). */
    mp.use_extra_bufts = false;
    llama_model *model = llama_model_load_from_file(o.model, mp);
    if (!model)
        die(2, std::string(o.model) + ": llama.cpp cannot load it");
    const llama_vocab *vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 1024;
    cp.n_batch = 1024;
    cp.n_ubatch = 1024;
    cp.n_threads = o.threads;
    cp.n_threads_batch = o.threads;
    /* An F32 cache and no flash attention: the attention itself then rounds nothing, so what
     * differs from the exact reference is the weights' products alone (see doc/model.md). */
    cp.type_k = o.kv_f16 ? GGML_TYPE_F16 : GGML_TYPE_F32;
    cp.type_v = cp.type_k;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;
    llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx)
        die(3, std::string(o.model) + ": llama.cpp cannot make a context");

    std::printf("# logitlab-oracle v1\n");
    std::printf("source llama.cpp %s kv %s threads %d\n", o.commit, o.kv_f16 ? "f16" : "f32",
                o.threads);
    std::printf("model %s\n", o.name ? o.name : base_name(o.model));
    if (o.gen)
        std::printf("gen %s\n", o.gen);
    std::printf("n_vocab %d\n", n_vocab);

    std::vector<float> saved;
    for (size_t pi = 0; pi < prompts.size(); pi++)
        run_prompt(ctx, o, prompts[pi], pi, saved);
    if (o.save)
        save_npy(o.save, saved, prompts.size(), static_cast<size_t>(n_vocab));
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
