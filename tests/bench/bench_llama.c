/* bench_llama.c - what the forward pass costs on a GGUF file: prefill of a
 * prompt as one batch, for each prompt length asked, and decode one token
 * at a time, in milliseconds per token (medians of several runs, after one
 * run that touches every weight); where each one's time goes (the weight
 * products, attention, the rest of the layers, the LM head); and the peak
 * resident memory (the mapped weights it touched included).
 *
 * As llama-bench measures them: a prefill starts from an empty context and
 * computes the logits of its last token only; decode starts from an empty
 * context too (llama-bench's tg at depth 0) and computes every token's
 * logits. The LM head (final norm and logits, model/model.h) is timed
 * apart and included in both.
 *
 * Usage: bench_llama FILE.gguf [-p PROMPT[,PROMPT...]] [-n DECODE_TOKENS]
 *                    [-r RUNS] [-t THREADS]
 * Lines starting "RESULT " are for scripts (tests/oracle/bench.sh): one
 * per prefill length, one for decode, one for the memory.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"

#include "gguf/gguf.h"
#include "gguf/gguf_llama.h"
#include "model/llama.h"
#include "model/model.h"
#include "model/quant.h"

#define MAX_RUNS    64
#define MAX_PROMPTS 8

struct opts {
    const char *path;
    int prompt[MAX_PROMPTS], n_prompt, decode, runs, threads;
};

/* One measurement (a prefill, or the decode steps), per token, in ms. */
struct part {
    double total, matmul, attention, rest, head;
};

struct run {
    struct part prefill[MAX_PROMPTS], decode;
};

static void fail(const char *msg)
{
    fprintf(stderr, "bench_llama: %s\n", msg);
    exit(1);
}

#define USAGE                                                                                      \
    "usage: bench_llama FILE.gguf [-p PROMPT[,PROMPT...]] [-n DECODE] [-r RUNS 1..64] [-t "        \
    "THREADS]"

/* "16,128" into o->prompt. */
static void parse_prompts(const char *s, struct opts *o)
{
    o->n_prompt = 0;
    for (const char *p = s; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 65536 || o->n_prompt == MAX_PROMPTS || (*end && *end != ','))
            fail(USAGE);
        o->prompt[o->n_prompt++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (!o->n_prompt)
        fail(USAGE);
}

static void parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){ .prompt = { 128 }, .n_prompt = 1, .decode = 32, .runs = 5 };
    for (int i = 1; i < argc; i++) {
        int *v = !strcmp(argv[i], "-n")   ? &o->decode
                 : !strcmp(argv[i], "-r") ? &o->runs
                 : !strcmp(argv[i], "-t") ? &o->threads
                                          : NULL;
        if (!strcmp(argv[i], "-p") && i + 1 < argc)
            parse_prompts(argv[++i], o);
        else if (v && i + 1 < argc)
            *v = atoi(argv[++i]);
        else if (!v && !o->path && argv[i][0] != '-')
            o->path = argv[i];
        else
            fail(USAGE);
    }
    if (!o->path || o->decode < 1 || o->runs < 1 || o->runs > MAX_RUNS)
        fail(USAGE);
}

/* The body's share of a measurement from the context's counters, and the
 * head's time, per token. */
static void fill_part(struct part *pt, const struct llama_prof *p, double head_us, int tokens)
{
    pt->matmul = p->matmul_ms / tokens;
    pt->attention = p->attention_ms / tokens;
    pt->rest = (p->total_ms - p->matmul_ms - p->attention_ms) / tokens;
    pt->head = head_us / 1e3 / tokens;
    pt->total = pt->matmul + pt->attention + pt->rest + pt->head;
}

struct bufs {
    float *h, *x, *logits;
};

/* The head on h: what llama.cpp's graph ends in. */
static double head_us(struct model *head, struct bufs *b)
{
    double t = bench_now_us();
    model_norm(head, b->h, b->x);
    model_logits(head, b->x, b->logits);
    return bench_now_us() - t;
}

/* Each prefill from an empty context, then decode from an empty context. */
static void one_run(struct llama_ctx *c, struct model *head, const struct opts *o, const int *tok,
                    struct bufs *b, struct run *r)
{
    struct err e;
    struct llama_prof p;
    for (int k = 0; k < o->n_prompt; k++) {
        llama_ctx_rewind(c, 0);
        llama_ctx_prof_reset(c);
        if (llama_eval(c, tok, o->prompt[k], b->h, &e) < 0)
            fail(e.msg);
        double hd = head_us(head, b);
        llama_ctx_prof(c, &p);
        fill_part(&r->prefill[k], &p, hd, o->prompt[k]);
    }
    llama_ctx_rewind(c, 0);
    llama_ctx_prof_reset(c);
    double hd = 0;
    for (int i = 0; i < o->decode; i++) {
        if (llama_eval(c, tok + i, 1, b->h, &e) < 0)
            fail(e.msg);
        hd += head_us(head, b);
    }
    llama_ctx_prof(c, &p);
    fill_part(&r->decode, &p, hd, o->decode);
}

static void describe(const struct opts *o, const struct gguf *g, const struct llama_model *m,
                     int threads)
{
    const struct llama_hparams *hp = &m->hp;
    char tn[32], en[32];
    printf("%s: %d layers, width %d, %d heads (%d KV), FFN %d, %d tokens; attn_q %s, "
           "token_embd %s%s; %.2f GiB file; %d thread%s\n",
           o->path, hp->n_layer, hp->n_embd, hp->n_head, hp->n_head_kv, hp->n_ff, hp->n_vocab,
           quant_name(m->layers[0].wq.type, tn, sizeof tn),
           quant_name(m->tok_embd.type, en, sizeof en), m->tied ? " (tied head)" : "",
           (double)g->size / (1024.0 * 1024.0 * 1024.0), threads, threads == 1 ? "" : "s");
}

/* The median over the runs of each field of one part (at offset at). */
static struct part median_part(const struct run *r, int n, size_t at)
{
    struct part m;
    double v[MAX_RUNS];
    for (size_t f = 0; f < sizeof m / sizeof(double); f++) {
        for (int i = 0; i < n; i++)
            memcpy(&v[i], (const char *)&r[i] + at + f * sizeof(double), sizeof(double));
        double x = bench_median(v, n);
        memcpy((char *)&m + f * sizeof(double), &x, sizeof x);
    }
    return m;
}

static void report(const char *what, int tokens, const struct part *p, int runs)
{
    printf("%-7s %4d tokens: %8.2f ms/token = matmuls %.2f + attention %.2f + rest %.2f + "
           "head %.2f (medians of %d runs)\n",
           what, tokens, p->total, p->matmul, p->attention, p->rest, p->head, runs);
    printf("RESULT %s tokens=%d ms_per_token=%.3f matmul_ms=%.3f attention_ms=%.3f rest_ms=%.3f "
           "head_ms=%.3f\n",
           what, tokens, p->total, p->matmul, p->attention, p->rest, p->head);
}

static void bench(const struct opts *o, const struct llama_model *m, struct llama_ctx *c,
                  struct model *head)
{
    int max_p = o->decode;
    for (int k = 0; k < o->n_prompt; k++)
        max_p = o->prompt[k] > max_p ? o->prompt[k] : max_p;
    int *tok = malloc(sizeof(int) * (size_t)max_p);
    struct bufs b = { malloc(sizeof(float) * (size_t)head->d),
                      malloc(sizeof(float) * (size_t)head->d),
                      malloc(sizeof(float) * (size_t)head->V) };
    static struct run runs[MAX_RUNS], warm;
    if (!tok || !b.h || !b.x || !b.logits)
        fail("out of memory");
    uint64_t s = 0x2545f4914f6cdd1dull;
    for (int i = 0; i < max_p; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        tok[i] = (int)(s % (uint64_t)m->hp.n_vocab);
    }
    double t0 = bench_now_us();
    one_run(c, head, o, tok, &b, &warm); /* first touch of every page of weights */
    printf("first run (touches the weights): %.1f s\n", (bench_now_us() - t0) / 1e6);
    for (int i = 0; i < o->runs; i++)
        one_run(c, head, o, tok, &b, &runs[i]);
    for (int k = 0; k < o->n_prompt; k++) {
        struct part p = median_part(
            runs, o->runs, offsetof(struct run, prefill) + (size_t)k * sizeof(struct part));
        report("prefill", o->prompt[k], &p, o->runs);
    }
    struct part d = median_part(runs, o->runs, offsetof(struct run, decode));
    report("decode", o->decode, &d, o->runs);
    free(tok);
    free(b.h);
    free(b.x);
    free(b.logits);
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
    int n_ctx = o.decode;
    for (int k = 0; k < o.n_prompt; k++)
        n_ctx = o.prompt[k] > n_ctx ? o.prompt[k] : n_ctx;
    struct llama_ctx *c = llama_ctx_new(m, n_ctx, o.threads, &e);
    struct model head;
    if (!c || model_borrow(&head, m->hp.n_vocab, m->hp.n_embd, m->output.data, m->output.type,
                           m->output_norm.data, m->hp.rms_eps, &e) < 0)
        fail(e.msg);
    describe(&o, g, m, llama_ctx_threads(c));
    bench(&o, m, c, &head);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS: %.0f MiB\nRESULT memory peak_rss_mib=%.0f\n", (double)ru.ru_maxrss / 1024.0,
           (double)ru.ru_maxrss / 1024.0);
    model_free(&head);
    llama_ctx_free(c);
    gguf_llama_free(L);
    gguf_close(g);
    return 0;
}
