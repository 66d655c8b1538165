/* bench_grammar.c - the grammar mask (src/core/grammar.h) at Llama 3's
 * vocabulary size: 128,256 synthetic tokens of 1 to 12 bytes (the 256 single
 * bytes, then words with and without a leading space, numbers, punctuation,
 * quotes, braces and their mixes, as a byte-level BPE vocabulary has them),
 * masked for the JSON schema of the trained-json lesson at several states;
 * then the same on the real Llama 3 vocabulary (data/llama3-vocab.bin). Run
 * from the source tree: the schema is read from lessons/24-trained-json.ini.
 * Prints the median of many masks in microseconds, and what each kept. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#include "core/grammar.h"
#include "core/settings.h"
#include "data/lesson.h"
#include "data/vocab.h"

#define NSYN   128256
#define ROUNDS 101

static uint32_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

/* Token i's bytes into t (at most 12), its length returned. */
static int make_token(int i, uint64_t *s, unsigned char *t)
{
    static const char *const PUNCT[] = { "\"", "\",", "\":",   "{\"",  "\"}", "},", "[",
                                         "]",  "],",  ":",     ",",    ".",   "\n", "\n\n",
                                         " {", " [",  "\\n",   "'",    "(",   ")",  "-",
                                         "_",  " \"", "\":\"", "\",\"" };
    if (i < 256) {
        t[0] = (unsigned char)i;
        return 1;
    }
    uint32_t kind = next(s) % 100;
    int n = 0;
    if (kind < 8) { /* punctuation and its pairs */
        const char *p = PUNCT[next(s) % (sizeof PUNCT / sizeof PUNCT[0])];
        n = (int)strlen(p);
        memcpy(t, p, (size_t)n);
        if (n < 10 && next(s) % 2) {
            const char *q = PUNCT[next(s) % (sizeof PUNCT / sizeof PUNCT[0])];
            memcpy(t + n, q, strlen(q) < (size_t)(12 - n) ? strlen(q) : (size_t)(12 - n));
            n += (int)(strlen(q) < (size_t)(12 - n) ? strlen(q) : (size_t)(12 - n));
        }
        return n;
    }
    if (kind < 15) { /* numbers */
        int len = 1 + (int)(next(s) % 4);
        if (next(s) % 3 == 0)
            t[n++] = ' ';
        for (int k = 0; k < len; k++)
            t[n++] = (unsigned char)('0' + next(s) % 10);
        return n;
    }
    /* words: half with a leading space, some capitalized, some followed
     * by a quote or a comma */
    int len = 2 + (int)(next(s) % 9);
    if (next(s) % 2)
        t[n++] = ' ';
    for (int k = 0; k < len && n < 12; k++) {
        unsigned char c = (unsigned char)('a' + next(s) % 26);
        t[n++] = k == 0 && next(s) % 5 == 0 ? (unsigned char)(c - 32) : c;
    }
    if (n < 12 && next(s) % 10 == 0)
        t[n++] = next(s) % 2 ? '"' : ',';
    return n;
}

#define LESSON "lessons/24-trained-json.ini"

/* States of a text under that schema: an object of a "name" string of at
 * most 12 characters and an integer "age". */
static const struct {
    const char *name, *text;
} AT[] = {
    { "start", "" },
    { "after {", "{" },
    { "after a key", "{\"name\"" },
    { "after the colon", "{\"name\": " },
    { "inside a string", "{\"name\": \"Ada Lov" },
    { "a string at its limit", "{\"name\": \"I can help m" },
    { "inside a number", "{\"name\": \"Ada\", \"age\": 3" },
};

/* The lesson's schema compiled, as its first step sets it. Returns 0 or 3. */
static int lesson_grammar(struct grammar **g)
{
    struct lesson L;
    struct err e;
    struct settings *s = malloc(sizeof *s); /* 8 KB of constraint text: off the stack */
    int rc = 3;
    if (!s || lesson_load(&L, LESSON, &e) < 0) {
        fprintf(stderr, "bench_grammar: %s (run from the source tree)\n", s ? e.msg : "no memory");
        free(s);
        return 3;
    }
    settings_defaults(s);
    lesson_apply_settings(&L, 1, s);
    lesson_free(&L);
    if (!s->sampler.json_schema)
        fprintf(stderr, "bench_grammar: %s sets no json-schema\n", LESSON);
    else if (grammar_from_json_schema(s->grammar_text, strlen(s->grammar_text), g, &e) < 0)
        fprintf(stderr, "bench_grammar: %s\n", e.msg);
    else
        rc = 0;
    free(s);
    return rc;
}

/* The masks of g at every state of AT over the V tokens. Returns 0 or 3. */
static int run(const char *what, const struct grammar *g, const unsigned char *const *bytes,
               const int *len, int V)
{
    struct err e;
    struct grammar_trie *t;
    double t0 = bench_now_us();
    if (grammar_trie_build(bytes, len, V, &t, &e) < 0) {
        fprintf(stderr, "bench_grammar: %s\n", e.msg);
        return 3;
    }
    printf("%s: %d tokens (trie built in %.1f ms); median of %d masks, microseconds\n", what, V,
           (bench_now_us() - t0) / 1e3, ROUNDS);
    printf("%-20s %10s %8s %8s %8s %6s\n", "state", "us/mask", "kept", "nodes", "sets", "eos");
    unsigned char *refused = malloc((size_t)V);
    double *us = malloc(ROUNDS * sizeof *us);
    int rc = refused && us ? 0 : 3;
    for (size_t a = 0; a < sizeof AT / sizeof AT[0] && rc == 0; a++) {
        struct grammar_state *st;
        struct grammar_mask_counts c;
        if (grammar_state_new(g, &st, &e) < 0 ||
            grammar_advance(g, st, (const unsigned char *)AT[a].text, strlen(AT[a].text), &e) !=
                1) {
            fprintf(stderr, "bench_grammar: the state '%s' was refused\n", AT[a].name);
            return 3;
        }
        for (int r = 0; r < ROUNDS && rc == 0; r++) {
            double u0 = bench_now_us();
            if (grammar_mask(g, st, t, refused, &c, &e) < 0) {
                fprintf(stderr, "bench_grammar: %s\n", e.msg);
                rc = 3;
            }
            us[r] = bench_now_us() - u0;
        }
        printf("%-20s %10.1f %8d %8d %8d %6s\n", AT[a].name, bench_median(us, ROUNDS), c.kept,
               c.nodes, c.sets, c.accepts ? "yes" : "no");
        grammar_state_free(st);
    }
    free(refused);
    free(us);
    grammar_trie_free(t);
    return rc;
}

/* The real Llama 3 vocabulary (data/llama3-vocab.bin), its special tokens
 * as empty ones (the caller lets EOS through by grammar_accepts). */
static int run_llama3(const struct grammar *g)
{
    struct vocab v;
    struct err e;
    if (vocab_load(&v, "data/llama3-vocab.bin", &e) < 0) {
        printf("(the Llama 3 vocabulary: %s)\n", e.msg);
        return 0;
    }
    const unsigned char **bytes = malloc((size_t)v.n * sizeof *bytes);
    int *len = malloc((size_t)v.n * sizeof *len);
    if (!bytes || !len)
        return 3;
    for (int i = 0; i < v.n; i++) {
        size_t n;
        bytes[i] = (const unsigned char *)vocab_bytes(&v, i, &n);
        len[i] = i < v.first_special ? (int)n : 0;
    }
    int rc = run("the Llama 3 vocabulary (data/llama3-vocab.bin)", g, bytes, len, v.n);
    free(bytes);
    free(len);
    vocab_free(&v);
    return rc;
}

int main(void)
{
    unsigned char(*tok)[12] = malloc((size_t)NSYN * sizeof *tok);
    const unsigned char **bytes = malloc((size_t)NSYN * sizeof *bytes);
    int *len = malloc((size_t)NSYN * sizeof *len);
    struct grammar *g;
    if (!tok || !bytes || !len)
        return 3;
    uint64_t s = 88172645463325252u;
    for (int i = 0; i < NSYN; i++) {
        len[i] = make_token(i, &s, tok[i]);
        bytes[i] = tok[i];
    }
    if (lesson_grammar(&g) != 0)
        return 3;
    printf("grammar mask of the JSON schema of %s (%d rules)\n", LESSON, grammar_rule_count(g));
    int rc = run("synthetic tokens of 1 to 12 bytes", g, bytes, len, NSYN);
    if (rc == 0) {
        printf("\n");
        rc = run_llama3(g);
    }
    grammar_free(g);
    free(tok);
    free(bytes);
    free(len);
    return rc;
}
