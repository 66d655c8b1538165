/* llama_tokenize.cpp - llama.cpp's own token ids for texts it ships no test vectors for, and
 * the vocabulary files to ask it about.
 *
 *   llama_tokenize FILE.gguf INP       the ids of each text of INP, one line a text, as in
 *                                      llama.cpp's models/ggml-vocab-NAME.gguf.out
 *   llama_tokenize --pre NAME IN OUT   the GGUF file IN copied to OUT, tokenizer.ggml.pre NAME
 *
 * INP is as llama.cpp's models/ggml-vocab-NAME.gguf.inp: each text followed by a line
 * "__ggml_vocab_test__". The ids are those of llama.cpp's tokenizer tests (add_special and
 * parse_special off), which `logitlab tokenize --no-bos` gives. --pre makes a vocabulary for a
 * pre-tokenizer llama.cpp ships no file of out of one it does (ggml-vocab-llama-bpe.gguf as
 * "gpt-4o": Llama 3's tokens and merges under GPT-4o's split), written by llama.cpp's own GGUF
 * code, so that nothing of logitlab's stands between the two sides.
 *
 * Test tooling only, built by build-oracle.sh beside llama_oracle; never part of logitlab.
 */
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gguf.h"
#include "llama.h"

namespace
{

[[noreturn]] void die(int status, const std::string &msg)
{
    std::fprintf(stderr, "llama_tokenize: %s\n", msg.c_str());
    std::exit(status);
}

void quiet_log(enum ggml_log_level level, const char *text, void *)
{
    if (level == GGML_LOG_LEVEL_ERROR)
        std::fputs(text, stderr);
}

std::string slurp(const char *path)
{
    FILE *f = std::fopen(path, "rb");
    if (!f)
        die(2, std::string(path) + ": cannot open it");
    std::string s;
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        s.append(buf, n);
    bool bad = std::ferror(f) != 0;
    std::fclose(f);
    if (bad)
        die(3, std::string(path) + ": read failed");
    return s;
}

/* The texts of INP, byte for byte (invalid UTF-8 included). What follows the last marker is
 * a text too when it is not empty, as the shell's awk split reads it (tests/vocab.sh). */
std::vector<std::string> texts_of(const std::string &inp)
{
    static const std::string mark = "\n__ggml_vocab_test__\n";
    std::vector<std::string> texts;
    size_t at = 0;
    for (;;) {
        size_t end = inp.find(mark, at);
        if (end == std::string::npos)
            break;
        texts.push_back(inp.substr(at, end - at));
        at = end + mark.size();
    }
    if (at < inp.size())
        texts.push_back(inp.substr(at));
    return texts;
}

int rewrite_pre(const char *name, const char *in, const char *out)
{
    gguf_init_params gp = { true, nullptr };
    gguf_context *g = gguf_init_from_file(in, gp);
    if (!g)
        die(2, std::string(in) + ": not a GGUF file llama.cpp reads");
    /* Without tensors the metadata is the whole file; a model's tensors would need their data
     * loaded, which a vocabulary file does not have. */
    if (gguf_get_n_tensors(g) != 0)
        die(2, std::string(in) + ": has tensors; only a vocabulary-only file is copied");
    gguf_set_val_str(g, "tokenizer.ggml.pre", name);
    bool ok = gguf_write_to_file(g, out, false);
    gguf_free(g);
    if (!ok)
        die(3, std::string(out) + ": write failed");
    return 0;
}

int tokenize_all(const char *model_path, const char *inp_path)
{
    std::vector<std::string> texts = texts_of(slurp(inp_path));
    llama_log_set(quiet_log, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model)
        die(2, std::string(model_path) + ": llama.cpp cannot load it");
    const llama_vocab *vocab = llama_model_get_vocab(model);
    for (size_t i = 0; i < texts.size(); i++) {
        const std::string &t = texts[i];
        if (t.size() > INT_MAX / 2)
            die(2, std::string(inp_path) + ": text " + std::to_string(i + 1) + " is too long");
        /* A byte-level BPE id covers at least one byte; too small a buffer for another
         * tokenizer is answered with the size it needs, minus. */
        std::vector<llama_token> ids(t.size() + 1);
        int n = llama_tokenize(vocab, t.data(), static_cast<int32_t>(t.size()), ids.data(),
                               static_cast<int32_t>(ids.size()), false, false);
        if (n < 0 && n != INT_MIN) {
            ids.resize(static_cast<size_t>(-n));
            n = llama_tokenize(vocab, t.data(), static_cast<int32_t>(t.size()), ids.data(),
                               static_cast<int32_t>(ids.size()), false, false);
        }
        if (n < 0)
            die(3, std::string(inp_path) + ": llama.cpp failed on text " + std::to_string(i + 1));
        for (int k = 0; k < n; k++)
            std::printf(" %d", ids[k]);
        std::printf("\n");
    }
    llama_model_free(model);
    llama_backend_free();
    return std::fflush(stdout) == 0 ? 0 : 3;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc == 5 && std::string(argv[1]) == "--pre")
        return rewrite_pre(argv[2], argv[3], argv[4]);
    if (argc == 3)
        return tokenize_all(argv[1], argv[2]);
    std::fprintf(stderr, "usage: llama_tokenize FILE.gguf INP\n"
                         "       llama_tokenize --pre NAME IN.gguf OUT.gguf\n");
    return 2;
}
