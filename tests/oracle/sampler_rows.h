/* sampler_rows.h - the seeded rows and contexts of the sampler oracle
 * (tests/oracle/samplers.txt), made the same by llama.cpp's side
 * (llama_samplers.cpp, C++) and logitlab's (samplers_check.c, C): the rows
 * are too big to commit (V up to 32,000), so both make them from the spec.
 *
 * Only integer arithmetic and exact double operations (products by powers of
 * two, sums of a few numbers of 53 bits, one rounding to float at the end):
 * no libm call, whose last bit may change with the C library, so a row is the
 * same bits on every machine and the goldens stay valid.
 *
 *   ROW      KIND:V:SEED, KIND one of
 *              zero   every logit 0 (all tied)
 *              flat   uniform in [-0.5, 0.5): a high-entropy row, no ties
 *              model  a noisy tail (sd 1.44 about -2) under six peaks at
 *                     10, 8.5, 7, ... on random ids: a language model's shape
 *              ties   model rounded to halves: many exact ties
 *              ninf   model with about a quarter of the ids at -inf
 *            or v:X,Y,...: these logits (read by strtod, -inf allowed,
 *            then rounded to float), for a row built by hand
 *   CONTEXT  -              none
 *            3,5,5,7        these ids
 *            top:N:R        the row's N most likely ids (ties to the lower
 *                           id), R rounds: round r lists every id whose rank
 *                           is a multiple of r + 1, so the best comes R times
 */
#ifndef LOGITLAB_SAMPLER_ROWS_H
#define LOGITLAB_SAMPLER_ROWS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS_MAX_V   1000000
#define ROWS_MAX_CTX 4096
#define ROWS_PEAKS   6

/* splitmix64: a fixed, portable stream. */
static inline uint64_t rows_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1), 53 bits, exactly. */
static inline double rows_uniform(uint64_t *s)
{
    return (double)(rows_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Parses KIND:V:SEED. Returns 0, or -1 with a message in msg. */
static inline int rows_parse(const char *spec, char *kind, size_t kind_size, int *V, uint64_t *seed,
                             char *msg, size_t msg_size)
{
    if (strncmp(spec, "v:", 2) == 0) { /* a list: V is its length */
        *V = 1;
        for (const char *p = spec + 2; *p; p++)
            *V += *p == ',';
        *seed = 0;
        snprintf(kind, kind_size, "v");
        return 0;
    }
    const char *c1 = strchr(spec, ':');
    const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    char *end = NULL;
    if (!c1 || !c2 || (size_t)(c1 - spec) >= kind_size) {
        snprintf(msg, msg_size, "row '%s': not KIND:V:SEED", spec);
        return -1;
    }
    memcpy(kind, spec, (size_t)(c1 - spec));
    kind[c1 - spec] = '\0';
    long v = strtol(c1 + 1, &end, 10);
    if (end != c2 || v < 2 || v > ROWS_MAX_V) {
        snprintf(msg, msg_size, "row '%s': V must be 2 to %d", spec, ROWS_MAX_V);
        return -1;
    }
    *V = (int)v;
    *seed = strtoull(c2 + 1, &end, 10);
    if (*end != '\0' || c2[1] == '\0') {
        snprintf(msg, msg_size, "row '%s': the seed is not a number", spec);
        return -1;
    }
    return 0;
}

/* The model row: a tail of 2.5 x (a sum of four uniforms - 2), sd 1.44 about -2 and never
 * above 3, then the peaks above it: at V = 32,000 the top token keeps about 60 %. */
static inline void rows_model(float *out, int V, uint64_t *s)
{
    for (int i = 0; i < V; i++) {
        double g = rows_uniform(s) + rows_uniform(s) + rows_uniform(s) + rows_uniform(s) - 2.0;
        out[i] = (float)(2.5 * g - 2.0);
    }
    for (int j = 0; j < ROWS_PEAKS; j++)
        out[rows_next(s) % (uint64_t)V] = (float)(10.0 - 1.5 * j);
}

/* Fills out[0..V) for kind (rows_parse's results on spec). Returns 0, or -1
 * for an unknown kind or a list that is not numbers. */
static inline int rows_make(const char *spec, const char *kind, int V, uint64_t seed, float *out)
{
    uint64_t s = seed;
    if (strcmp(kind, "v") == 0) {
        const char *p = spec + 2;
        for (int i = 0; i < V; i++) {
            char *end = NULL;
            out[i] = (float)strtod(p, &end);
            if (end == p || (*end != ',' && *end != '\0'))
                return -1;
            p = end + (*end == ',');
        }
    } else if (strcmp(kind, "zero") == 0) {
        for (int i = 0; i < V; i++)
            out[i] = 0.0f;
    } else if (strcmp(kind, "flat") == 0) {
        for (int i = 0; i < V; i++)
            out[i] = (float)(rows_uniform(&s) - 0.5);
    } else if (strcmp(kind, "model") == 0) {
        rows_model(out, V, &s);
    } else if (strcmp(kind, "ties") == 0) {
        rows_model(out, V, &s);
        for (int i = 0; i < V; i++) /* halves: floor(2z + 0.5) / 2, exact in float */
            out[i] = (float)(floor(2.0 * out[i] + 0.5) / 2.0);
    } else if (strcmp(kind, "ninf") == 0) {
        rows_model(out, V, &s);
        for (int i = 0; i < V; i++)
            if (rows_next(&s) % 4 == 0)
                out[i] = -INFINITY;
    } else {
        return -1;
    }
    return 0;
}

/* The rank-th most likely id of row, ties to the lower id, -inf never. */
static inline int rows_best_after(const float *row, int V, const int *taken, int n_taken)
{
    int best = -1;
    for (int i = 0; i < V; i++) {
        if (row[i] == -INFINITY || (best >= 0 && row[i] <= row[best]))
            continue;
        int used = 0;
        for (int k = 0; k < n_taken && !used; k++)
            used = taken[k] == i;
        if (!used)
            best = i;
    }
    return best;
}

/* Fills ctx (ROWS_MAX_CTX) from spec over row. Returns the count, or -1 with
 * a message in msg. */
static inline int rows_context(const char *spec, const float *row, int V, int *ctx, char *msg,
                               size_t msg_size)
{
    int n = 0;
    if (strcmp(spec, "-") == 0)
        return 0;
    if (strncmp(spec, "top:", 4) == 0) {
        int N = 0, R = 0, top[64];
        if (sscanf(spec + 4, "%d:%d", &N, &R) != 2 || N < 1 || N > 64 || R < 1 ||
            N * R > ROWS_MAX_CTX) {
            snprintf(msg, msg_size, "context '%s': not top:N:R (N 1 to 64)", spec);
            return -1;
        }
        for (int k = 0; k < N; k++)
            top[k] = rows_best_after(row, V, top, k);
        for (int r = 0; r < R; r++)
            for (int k = 0; k < N; k++)
                if (k % (r + 1) == 0 && top[k] >= 0)
                    ctx[n++] = top[k];
        return n;
    }
    for (const char *p = spec; *p;) {
        char *end = NULL;
        long id = strtol(p, &end, 10);
        if (end == p || id < 0 || id >= V || n == ROWS_MAX_CTX || (*end != ',' && *end != '\0')) {
            snprintf(msg, msg_size, "context '%s': not ids 0 to %d separated by commas", spec,
                     V - 1);
            return -1;
        }
        ctx[n++] = (int)id;
        p = *end ? end + 1 : end;
    }
    return n;
}

#endif
