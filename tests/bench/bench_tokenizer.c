/* bench_tokenizer.c - what encoding a long prompt costs with the real
 * Llama 3 tokenizer (tests/model/tokdata.c, as the tests build it), alone
 * and with 20,000 user-defined tokens added (issue 29: llama.cpp's order,
 * one pass over the text per special token, took 4 minutes on 1 MiB).
 * The added tokens are " " and three syllables of 30 (" katori"), the
 * space raw, as GPT-NeoX stores its user-defined runs of spaces (no key,
 * so none is refused as another token's text); the prompt is words of one
 * to four of the same syllables, 37 % of them beginning with an added
 * token (a word of three or four syllables whose first three are one). Prints
 * medians of building the tokenizer and of encoding the prompt, in the
 * thread's CPU time (one thread does both; the machine's other tenants
 * move the clock on the wall by half).
 * Usage: bench_tokenizer [MAX_KIB [ROUNDS]] (the longest prompt, 1024;
 * the rounds, 5), so that an older tokenizer can be timed on a shorter
 * prompt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

#include "gguf/tokenizer.h"
#include "model/tokdata.h"

#define ADDED      20000
#define SYLLABLES  30
#define MAX_ROUNDS 51

static const char *const SYL[SYLLABLES] = {
    "ka", "to",  "ri", "men", "sa", "lo",  "ve",  "dun", "pi", "qua",
    "ne", "ber", "ho", "ti",  "mo", "gra", "el",  "fi",  "zo", "ur",
    "da", "ple", "ci", "nor", "bu", "the", "ing", "wa",  "ex", "ly",
};

static void fail(const char *msg)
{
    fprintf(stderr, "bench: %s\n", msg);
    exit(1);
}

/* The thread's CPU time in milliseconds. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* xorshift32: the same prompt on every run. */
static uint32_t next_random(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Appends " " and the n syllables syl[] to out at *at. */
static void put_word(char *out, size_t *at, const int *syl, int n)
{
    out[(*at)++] = ' ';
    for (int i = 0; i < n; i++) {
        size_t k = strlen(SYL[syl[i]]);
        memcpy(out + *at, SYL[syl[i]], k);
        *at += k;
    }
}

/* Llama 3's spec with the added tokens after its own; their texts go in
 * strings (room for ADDED x 10). */
static struct tok_spec with_added(const struct tokdata *d, struct tok_str *text, int32_t *types,
                                  char *strings)
{
    struct tok_spec s = d->spec;
    int n = s.n;
    memcpy(text, s.text, (size_t)n * sizeof *text);
    for (int i = 0; i < n; i++)
        types[i] = s.types ? s.types[i] : TOKT_NORMAL;
    size_t at = 0;
    for (int i = 0; i < ADDED; i++) {
        int j = (int)((long)i * 7919 % (SYLLABLES * SYLLABLES * SYLLABLES)); /* spread over all */
        int syl[3] = { j / (SYLLABLES * SYLLABLES), j / SYLLABLES % SYLLABLES, j % SYLLABLES };
        size_t from = at;
        put_word(strings, &at, syl, 3);
        text[n + i] = (struct tok_str){ strings + from, at - from };
        types[n + i] = TOKT_USER_DEFINED;
    }
    s.n = n + ADDED;
    s.text = text;
    s.types = types;
    return s;
}

/* len bytes of words of one to four syllables, a full stop after one word
 * in 12 and a new line after one in 80. */
static void make_prompt(char *out, size_t len)
{
    uint32_t s = 2463534242u;
    size_t at = 0;
    char word[64];
    for (int w = 1; at < len; w++) {
        int syl[4], k = 1 + (int)(next_random(&s) % 4);
        for (int i = 0; i < k; i++)
            syl[i] = (int)(next_random(&s) % SYLLABLES);
        size_t n = 0;
        put_word(word, &n, syl, k);
        if (w % 12 == 0)
            word[n++] = '.';
        if (w % 80 == 0)
            word[n++] = '\n';
        memcpy(out + at, word, n < len - at ? n : len - at);
        at += n;
    }
}

/* The room encode may need for a prompt of TOK_MAX_TEXT bytes (tokenizer.h). */
#define MAX_IDS (3 * TOK_MAX_TEXT + 1)

static void bench(const char *name, const struct tok_spec *spec, const char *prompt, size_t kib,
                  int rounds, int *ids)
{
    double build_ms[MAX_ROUNDS], encode_ms[MAX_ROUNDS];
    int n = 0;
    for (int r = 0; r < rounds; r++) {
        struct err e;
        double t0 = cpu_ms();
        struct tokenizer *t = tokenizer_new(spec, "bench", &e);
        double t1 = cpu_ms();
        if (!t || tokenizer_encode(t, prompt, kib << 10, 0, 0, ids, MAX_IDS, &n, &e))
            fail(e.msg);
        double t2 = cpu_ms();
        build_ms[r] = t1 - t0;
        encode_ms[r] = t2 - t1;
        tokenizer_free(t);
    }
    double b = bench_median(build_ms, rounds), c = bench_median(encode_ms, rounds);
    printf("%-34s %5zu KiB  build %7.1f ms  encode %9.1f ms  (%7.0f tokens, %6.2f MB/s)\n", name,
           kib, b, c, (double)n, (double)(kib << 10) / (c * 1e3));
}

int main(int argc, char **argv)
{
    size_t max_kib = argc > 1 ? (size_t)atoi(argv[1]) : 1024;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    if (max_kib < 1 || max_kib > TOK_MAX_TEXT >> 10 || rounds < 1 || rounds > MAX_ROUNDS)
        fail("usage: bench_tokenizer [MAX_KIB (1 to 1024) [ROUNDS (1 to 51)]]");
    struct tokdata d;
    struct err e;
    if (tokdata_llama3(&d, "data", &e) < 0)
        fail(e.msg);
    struct tok_str *text = malloc((size_t)(d.spec.n + ADDED) * sizeof *text);
    int32_t *types = malloc((size_t)(d.spec.n + ADDED) * sizeof *types);
    char *strings = malloc(ADDED * 10), *prompt = malloc(TOK_MAX_TEXT);
    int *ids = malloc(MAX_IDS * sizeof *ids);
    if (!text || !types || !strings || !prompt || !ids)
        fail("out of memory");
    struct tok_spec added = with_added(&d, text, types, strings);
    make_prompt(prompt, TOK_MAX_TEXT);
    printf("tokenizer: build, and encode a prompt (no BOS, special off), medians of %d rounds, "
           "thread CPU time\n",
           rounds);
    static const size_t KIB[] = { 64, 1024 };
    for (size_t i = 0; i < sizeof KIB / sizeof KIB[0] && KIB[i] <= max_kib; i++) {
        bench("Llama 3 (128,256 tokens)", &d.spec, prompt, KIB[i], rounds, ids);
        bench("Llama 3 + 20,000 user-defined", &added, prompt, KIB[i], rounds, ids);
    }
    free(text);
    free(types);
    free(strings);
    free(prompt);
    free(ids);
    tokdata_free(&d);
    return 0;
}
