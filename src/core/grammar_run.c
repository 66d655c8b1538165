/* grammar_run.c - the stacks, as llama.cpp runs them (llama_grammar_advance_
 * stack, llama_grammar_accept): a stack's top is expanded through rule
 * references until it is a byte set or the stack is empty; a byte keeps the
 * stacks whose top holds it, moved one place on. Frames are interned (one
 * id for one stack), which makes a set of stacks a set of ints and does
 * llama.cpp's deduplication; the seen set of an expansion is a stamp on the
 * frames. */
#include <stdlib.h>
#include <string.h>

#include "core/grammar_int.h"

int ga_init(struct garena *a)
{
    memset(a, 0, sizeof *a);
    a->cap = 64;
    a->hcap = 256;
    a->f = malloc((size_t)a->cap * sizeof *a->f);
    a->stamp = calloc((size_t)a->cap, sizeof *a->stamp);
    a->hash = calloc((size_t)a->hcap, sizeof *a->hash);
    if (!a->f || !a->stamp || !a->hash) {
        ga_free(a);
        return -1;
    }
    return 0;
}

void ga_free(struct garena *a)
{
    free(a->f);
    free(a->stamp);
    free(a->hash);
    memset(a, 0, sizeof *a);
}

int ga_copy(struct garena *dst, const struct garena *src)
{
    memset(dst, 0, sizeof *dst);
    dst->f = malloc((size_t)src->cap * sizeof *dst->f);
    dst->stamp = calloc((size_t)src->cap, sizeof *dst->stamp);
    dst->hash = malloc((size_t)src->hcap * sizeof *dst->hash);
    if (!dst->f || !dst->stamp || !dst->hash) {
        ga_free(dst);
        return -1;
    }
    memcpy(dst->f, src->f, (size_t)src->n * sizeof *dst->f);
    memcpy(dst->hash, src->hash, (size_t)src->hcap * sizeof *dst->hash);
    dst->n = src->n;
    dst->cap = src->cap;
    dst->hcap = src->hcap;
    return 0;
}

static unsigned frame_hash(int pos, int up)
{
    uint64_t x = ((uint64_t)(uint32_t)pos << 32) | (uint32_t)up;
    x *= 0x9E3779B97F4A7C15u;
    return (unsigned)(x >> 32);
}

static int grow(struct garena *a)
{
    int cap = 2 * a->cap;
    struct gframe *f = realloc(a->f, (size_t)cap * sizeof *f);
    if (f)
        a->f = f;
    int *st = f ? realloc(a->stamp, (size_t)cap * sizeof *st) : NULL;
    if (st)
        a->stamp = st;
    int *h = st ? calloc((size_t)a->hcap * 2, sizeof *h) : NULL;
    if (!h)
        return -1;
    memset(a->stamp + a->cap, 0, (size_t)(cap - a->cap) * sizeof *st);
    a->cap = cap;
    free(a->hash);
    a->hash = h;
    a->hcap *= 2;
    for (int i = 0; i < a->n; i++) {
        unsigned k = frame_hash(a->f[i].pos, a->f[i].up) & (unsigned)(a->hcap - 1);
        while (a->hash[k])
            k = (k + 1) & (unsigned)(a->hcap - 1);
        a->hash[k] = i + 1;
    }
    return 0;
}

int ga_intern(struct garena *a, int pos, int up)
{
    unsigned mask = (unsigned)(a->hcap - 1), k = frame_hash(pos, up) & mask;
    for (; a->hash[k]; k = (k + 1) & mask) {
        const struct gframe *f = &a->f[a->hash[k] - 1];
        if (f->pos == pos && f->up == up)
            return a->hash[k] - 1;
    }
    /* The table stays at most half full: it grows with the frames. */
    if (a->n == a->cap || 2 * (a->n + 1) > a->hcap) {
        if (grow(a) < 0) {
            a->failed = 1;
            return -1;
        }
        return ga_intern(a, pos, up);
    }
    a->f[a->n] = (struct gframe){ pos, up };
    a->hash[k] = a->n + 1;
    return a->n++;
}

static void tops_add(struct garena *a, struct gtops *t, int id)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        int *v = realloc(t->v, (size_t)cap * sizeof *v);
        if (!v) {
            a->failed = 1;
            return;
        }
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = id;
}

static void expand(const struct grammar *g, struct garena *a, int pos, int up, struct gtops *out);

/* The stack under a finished sequence: the frame up, expanded again, or
 * the empty stack (the root complete). */
static void pop_into(const struct grammar *g, struct garena *a, int up, struct gtops *out)
{
    if (up < 0)
        out->accept = 1;
    else
        expand(g, a, a->f[up].pos, a->f[up].up, out);
}

/* The stack (pos over up) expanded into stacks whose tops are byte sets. */
static void expand(const struct grammar *g, struct garena *a, int pos, int up, struct gtops *out)
{
    int id = ga_intern(a, pos, up);
    if (id < 0 || a->stamp[id] == a->cur)
        return; /* out of memory, or expanded already in this step */
    a->stamp[id] = a->cur;
    if (g->el[pos].type == GE_SET) {
        tops_add(a, out, id);
        return;
    }
    if (++a->depth > GRAMMAR_MAX_EXPAND) {
        a->failed = 2;
        a->depth--;
        return;
    }
    /* A reference: its continuation goes on the stack (unless the rule
     * ends there), then each alternative of the rule on top of it. */
    int cont = gelem_ends(&g->el[pos + 1]) ? up : ga_intern(a, pos + 1, up);
    for (int s = g->start[g->el[pos].value]; !a->failed;) {
        if (gelem_ends(&g->el[s]))
            pop_into(g, a, cont, out);
        else
            expand(g, a, s, cont, out);
        while (!gelem_ends(&g->el[s]))
            s++;
        if (g->el[s].type == GE_END)
            break;
        s++;
    }
    a->depth--;
}

void ga_initial(const struct grammar *g, struct garena *a, struct gtops *out)
{
    out->n = 0;
    out->accept = 0;
    a->cur++;
    for (int s = g->start[g->root]; !a->failed;) {
        if (gelem_ends(&g->el[s]))
            out->accept = 1;
        else
            expand(g, a, s, -1, out);
        while (!gelem_ends(&g->el[s]))
            s++;
        if (g->el[s].type == GE_END)
            break;
        s++;
    }
}

void ga_step(const struct grammar *g, struct garena *a, const int *tops, int n, int byte,
             struct gtops *out)
{
    out->n = 0;
    out->accept = 0;
    a->cur++;
    for (int i = 0; i < n && !a->failed; i++) {
        struct gframe f = a->f[tops[i]];
        if (!gset_has(g->sets[g->el[f.pos].value], byte))
            continue;
        if (gelem_ends(&g->el[f.pos + 1]))
            pop_into(g, a, f.up, out);
        else
            expand(g, a, f.pos + 1, f.up, out);
    }
}

int ga_check(const struct garena *a, struct err *e)
{
    if (a->failed == 2)
        return err_set(e, ERR_USAGE,
                       "grammar: more than %d rules expanded in a row without a byte "
                       "(nested too deep)",
                       GRAMMAR_MAX_EXPAND);
    if (a->failed)
        return err_set(e, ERR_SYSTEM, "grammar: out of memory");
    return 0;
}

void gtops_free(struct gtops *t)
{
    free(t->v);
    memset(t, 0, sizeof *t);
}

void gtops_sort(struct gtops *t)
{
    /* Insertion sort: sets are small, and mostly sorted already. */
    for (int i = 1; i < t->n; i++) {
        int x = t->v[i], j = i - 1;
        while (j >= 0 && t->v[j] > x) {
            t->v[j + 1] = t->v[j];
            j--;
        }
        t->v[j + 1] = x;
    }
    int w = 0;
    for (int i = 0; i < t->n; i++)
        if (w == 0 || t->v[w - 1] != t->v[i])
            t->v[w++] = t->v[i];
    t->n = w;
}
