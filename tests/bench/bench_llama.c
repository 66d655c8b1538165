/* bench_llama.c - what the forward pass costs on a GGUF file: prefill of a
 * prompt as one batch and decode one token at a time, in milliseconds per
 * token (medians of several runs, after one run that touches every weight),
 * where a decode step's time goes (the weight products, attention, the
 * rest), and the peak resident memory (the mapped weights it touched
 * included).
 *
 * The LM head (final norm and logits, model/model.h) is timed apart and
 * added to decode, as llama.cpp's own per-token figures include it; a
 * prefill computes the logits of its last token only, as llama.cpp's do.
 *
 * Usage: bench_llama FILE.gguf [-p PROMPT_TOKENS] [-n DECODE_TOKENS]
 *                    [-r RUNS] [-t THREADS]
 * The last line is "RESULT key=value ..." for scripts (tests/oracle/).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

#include "data/gguf.h"
#include "data/gguf_llama.h"
#include "model/llama.h"
#include "model/model.h"
#include "model/quant.h"

#define MAX_RUNS 64

struct opts {
    const char *path;
    int prompt, decode, runs, threads;
};

struct run {
    double prefill_ms, body_ms, head_ms; /* per token */
    struct llama_prof prof;              /* of the decode steps */
};

static void fail(const char *msg)
{
    fprintf(stderr, "bench_llama: %s\n", msg);
    exit(1);
}

static void parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .prompt = 128, .decode = 32, .runs = 5, .threads = 0 };
    for (int i = 1; i < argc; i++) {
        int *v = !strcmp(argv[i], "-p")   ? &o->prompt
                 : !strcmp(argv[i], "-n") ? &o->decode
                 : !strcmp(argv[i], "-r") ? &o->runs
                 : !strcmp(argv[i], "-t") ? &o->threads
                                          : NULL;
        if (v && i + 1 < argc)
            *v = atoi(argv[++i]);
        else if (!v && !o->path && argv[i][0] != '-')
            o->path = argv[i];
        else
            fail("usage: bench_llama FILE.gguf [-p PROMPT] [-n DECODE] [-r RUNS] [-t THREADS]");
    }
    if (!o->path || o->prompt < 1 || o->decode < 1 || o->runs < 1 || o->runs > MAX_RUNS)
        fail("usage: bench_llama FILE.gguf [-p PROMPT >= 1] [-n DECODE >= 1] [-r RUNS 1..64]");
}

/* One prefill of tok[0..prompt), then decode tokens, each with the head. */
static void one_run(struct llama_ctx *c, struct model *head, const struct opts *o, const int *tok,
                    struct run *r)
{
    int d = head->d;
    float *h = malloc(sizeof(float) * (size_t)d), *x = malloc(sizeof(float) * (size_t)d);
    float *logits = malloc(sizeof(float) * (size_t)head->V);
    if (!h || !x || !logits)
        fail("out of memory");
    struct err e;
    llama_ctx_rewind(c, 0);
    double t0 = bench_now_us();
    if (llama_eval(c, tok, o->prompt, h, &e) < 0)
        fail(e.msg);
    model_norm(head, h, x);
    model_logits(head, x, logits);
    r->prefill_ms = (bench_now_us() - t0) / 1e3 / o->prompt;
    llama_ctx_prof_reset(c);
    double body = 0, hd = 0;
    for (int i = 0; i < o->decode; i++) {
        double t1 = bench_now_us();
        if (llama_eval(c, tok + o->prompt + i, 1, h, &e) < 0)
            fail(e.msg);
        double t2 = bench_now_us();
        model_norm(head, h, x);
        model_logits(head, x, logits);
        body += t2 - t1;
        hd += bench_now_us() - t2;
    }
    llama_ctx_prof(c, &r->prof);
    r->body_ms = body / 1e3 / o->decode;
    r->head_ms = hd / 1e3 / o->decode;
    free(h);
    free(x);
    free(logits);
}

static void describe(const struct opts *o, const struct gguf *g, const struct llama_model *m,
                     int threads)
{
    const struct llama_hparams *hp = &m->hp;
    char tn[32], en[32];
    printf("%s: %d layers, width %d, %d heads (%d KV), FFN %d, %d tokens; attn_q %s, "
           "token_embd %s%s; %.2f GiB file; %d threads\n",
           o->path, hp->n_layer, hp->n_embd, hp->n_head, hp->n_head_kv, hp->n_ff, hp->n_vocab,
           quant_name(m->layers[0].wq.type, tn, sizeof tn),
           quant_name(m->tok_embd.type, en, sizeof en), m->tied ? " (tied head)" : "",
           (double)g->size / (1024.0 * 1024.0 * 1024.0), threads);
}

static double median_of(const struct run *r, int n, size_t field)
{
    double v[MAX_RUNS];
    for (int i = 0; i < n; i++)
        memcpy(&v[i], (const char *)&r[i] + field, sizeof(double));
    return bench_median(v, n);
}

int main(int argc, char **argv)
{
    struct opts o;
    parse(argc, argv, &o);
    struct err e;
    struct gguf *g = gguf_open(o.path, &e);
    struct gguf_llama *L = g ? gguf_llama_new(g, &e) : NULL;
    if (!L)
        fail(e.msg);
    const struct llama_model *m = &L->model;
    struct llama_ctx *c = llama_ctx_new(m, o.prompt + o.decode, o.threads, &e);
    struct model head;
    if (!c || model_borrow(&head, m->hp.n_vocab, m->hp.n_embd, m->output.data, m->output.type,
                           m->output_norm.data, m->hp.rms_eps, &e) < 0)
        fail(e.msg);
    int threads = o.threads > 0 ? o.threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    describe(&o, g, m, threads);
    int *tok = malloc(sizeof(int) * (size_t)(o.prompt + o.decode));
    if (!tok)
        fail("out of memory");
    uint64_t s = 0x2545f4914f6cdd1dull;
    for (int i = 0; i < o.prompt + o.decode; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        tok[i] = (int)(s % (uint64_t)m->hp.n_vocab);
    }
    struct run runs[MAX_RUNS], warm;
    double t0 = bench_now_us();
    one_run(c, &head, &o, tok, &warm); /* first touch of every page of weights */
    printf("first run (touches the weights): %.1f s\n", (bench_now_us() - t0) / 1e6);
    for (int i = 0; i < o.runs; i++)
        one_run(c, &head, &o, tok, &runs[i]);
    double pf = median_of(runs, o.runs, offsetof(struct run, prefill_ms));
    double body = median_of(runs, o.runs, offsetof(struct run, body_ms));
    double hd = median_of(runs, o.runs, offsetof(struct run, head_ms));
    const struct llama_prof *p = &runs[o.runs - 1].prof;
    double rest = p->total_ms - p->matmul_ms - p->attention_ms;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double rss = (double)ru.ru_maxrss / 1024.0;
    printf("prefill %4d tokens: %8.2f ms/token (median of %d runs)\n", o.prompt, pf, o.runs);
    printf("decode  %4d tokens: %8.2f ms/token = body %.2f + head %.2f (median of %d runs)\n",
           o.decode, body + hd, body, hd, o.runs);
    printf("decode step, body: matmuls %.1f%%, attention %.1f%%, rest %.1f%%\n",
           100 * p->matmul_ms / p->total_ms, 100 * p->attention_ms / p->total_ms,
           100 * rest / p->total_ms);
    printf("peak RSS: %.0f MiB\n", rss);
    printf("RESULT prefill_ms_per_token=%.3f decode_ms_per_token=%.3f decode_body_ms=%.3f "
           "head_ms=%.3f matmul_pct=%.1f attention_pct=%.1f rest_pct=%.1f peak_rss_mib=%.0f\n",
           pf, body + hd, body, hd, 100 * p->matmul_ms / p->total_ms,
           100 * p->attention_ms / p->total_ms, 100 * rest / p->total_ms, rss);
    free(tok);
    model_free(&head);
    llama_ctx_free(c);
    gguf_llama_free(L);
    gguf_close(g);
    return 0;
}
