/* grammar_compile.c - the builder's rules checked and laid out as the
 * grammar the stacks run: every rule defined, a root, no left recursion
 * (llama.cpp's llama_grammar_detect_left_recursion refuses it too: a rule
 * that can reach itself before any byte would grow its stack forever). */
#include <stdlib.h>
#include <string.h>

#include "core/grammar_int.h"

void grammar_free(struct grammar *g)
{
    if (!g)
        return;
    for (int r = 0; r < g->nrules; r++)
        free(g->name[r]);
    free(g->name);
    free(g->generated);
    free(g->el);
    free(g->start);
    free(g->rule_of);
    free(g->sets);
    free(g);
}

int grammar_rule_count(const struct grammar *g)
{
    return g->nrules;
}

/* nullable[r]: rule r can match the empty string (some alternative whose
 * every element is a reference to such a rule), by fixpoint. */
static void find_nullable(const struct grammar *g, unsigned char *nullable)
{
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int r = 0; r < g->nrules; r++) {
            if (nullable[r])
                continue;
            int all = 1;
            for (int i = g->start[r];; i++) {
                const struct gelem *el = &g->el[i];
                if (gelem_ends(el)) {
                    if (all) {
                        nullable[r] = 1;
                        changed = 1;
                        break;
                    }
                    if (el->type == GE_END)
                        break;
                    all = 1;
                } else if (el->type == GE_SET || !nullable[el->value]) {
                    all = 0;
                }
            }
        }
    }
}

static int skip_alt(const struct grammar *g, int i)
{
    while (!gelem_ends(&g->el[i]))
        i++;
    return i;
}

/* The next reference reached before any byte from the cursor (a place in
 * one rule, at first its start): one that begins an alternative or follows
 * only nullable ones. Its element's index, or -1 at the rule's end. */
static int next_left(const struct grammar *g, const unsigned char *nullable, int *cursor)
{
    int i = *cursor;
    for (;;) {
        const struct gelem *el = &g->el[i];
        if (el->type == GE_END) {
            *cursor = i;
            return -1;
        }
        if (el->type == GE_ALT) {
            i++;
        } else if (el->type == GE_REF) {
            *cursor = nullable[el->value] ? i + 1 : skip_alt(g, i);
            return i;
        } else {
            i = skip_alt(g, i);
        }
    }
}

struct scc {
    int *index, *low, *comp, *stack, *path, *cur;
    unsigned char *on, *nullable;
    int next, sp;
};

/* Tarjan's strongly connected components of the rules over the left
 * references, without recursion (a grammar may have many rules). */
static void components(const struct grammar *g, struct scc *t, int from)
{
    int top = 0;
    t->path[0] = from;
    t->cur[0] = g->start[from];
    t->index[from] = t->low[from] = t->next++;
    t->stack[t->sp++] = from;
    t->on[from] = 1;
    while (top >= 0) {
        int v = t->path[top], i = next_left(g, t->nullable, &t->cur[top]);
        if (i >= 0) {
            int w = g->el[i].value;
            if (t->index[w] < 0) {
                t->index[w] = t->low[w] = t->next++;
                t->stack[t->sp++] = w;
                t->on[w] = 1;
                t->path[++top] = w;
                t->cur[top] = g->start[w];
            } else if (t->on[w] && t->index[w] < t->low[v]) {
                t->low[v] = t->index[w];
            }
            continue;
        }
        if (t->low[v] == t->index[v]) {
            int w;
            do {
                w = t->stack[--t->sp];
                t->on[w] = 0;
                t->comp[w] = v;
            } while (w != v);
        }
        if (--top >= 0 && t->low[v] < t->low[t->path[top]])
            t->low[t->path[top]] = t->low[v];
    }
}

/* A cycle of left references is refused when it goes through a reference
 * with something after it: each turn would push a frame, forever. A cycle
 * of references in last place ((a*)*: a repetition of something that can
 * match nothing) pushes nothing, and the expansion's seen set ends it; so
 * this refuses less than llama.cpp, which refuses both. */
static int left_growing(const struct grammar *g, struct scc *t)
{
    for (int r = 0; r < g->nrules; r++)
        if (t->index[r] < 0)
            components(g, t, r);
    for (int r = 0; r < g->nrules; r++) {
        int cur = g->start[r], i;
        while ((i = next_left(g, t->nullable, &cur)) >= 0)
            if (t->comp[g->el[i].value] == t->comp[r] && !gelem_ends(&g->el[i + 1]))
                return r;
    }
    return -1;
}

static int check_left(struct gbuild *b, const struct grammar *g)
{
    size_t n = (size_t)g->nrules;
    struct scc t = { 0 };
    t.index = malloc(n * sizeof *t.index);
    t.low = malloc(n * sizeof *t.low);
    t.comp = malloc(n * sizeof *t.comp);
    t.stack = malloc(n * sizeof *t.stack);
    t.path = malloc(n * sizeof *t.path);
    t.cur = malloc(n * sizeof *t.cur);
    t.on = calloc(n, 1);
    t.nullable = calloc(n, 1);
    int rc = 0;
    if (!t.index || !t.low || !t.comp || !t.stack || !t.path || !t.cur || !t.on || !t.nullable) {
        rc = err_set(b->e, ERR_SYSTEM, "%s: out of memory", gb_kind_name(b));
    } else {
        memset(t.index, 0xff, n * sizeof *t.index);
        find_nullable(g, t.nullable);
        int r = left_growing(g, &t);
        if (r >= 0)
            rc = gb_fail(b, b->r[r].def_at,
                         "rule '%s' is left-recursive: it can reach itself before any byte",
                         g->name[r]);
    }
    free(t.index);
    free(t.low);
    free(t.comp);
    free(t.stack);
    free(t.path);
    free(t.cur);
    free(t.on);
    free(t.nullable);
    return rc;
}

static int lay_out(struct gbuild *b, struct grammar *g)
{
    g->nrules = b->nr;
    g->nel = (int)b->nelems + b->nr;
    g->el = malloc((size_t)g->nel * sizeof *g->el);
    g->rule_of = malloc((size_t)g->nel * sizeof *g->rule_of);
    g->start = malloc((size_t)b->nr * sizeof *g->start);
    g->name = calloc((size_t)b->nr, sizeof *g->name);
    g->generated = malloc((size_t)b->nr);
    g->sets = malloc((size_t)b->nsets * sizeof *g->sets);
    if (!g->el || !g->rule_of || !g->start || !g->name || !g->generated || !g->sets)
        return err_set(b->e, ERR_SYSTEM, "%s: out of memory", gb_kind_name(b));
    g->nsets = b->nsets;
    memcpy(g->sets, b->sets, (size_t)b->nsets * sizeof *g->sets);
    int k = 0;
    for (int r = 0; r < b->nr; r++) {
        g->start[r] = k;
        for (int i = 0; i < b->r[r].n; i++, k++) {
            g->el[k] = b->r[r].el[i];
            g->rule_of[k] = r;
        }
        g->el[k] = (struct gelem){ GE_END, 0 };
        g->rule_of[k++] = r;
        g->name[r] = b->r[r].name;
        b->r[r].name = NULL;
        g->generated[r] = (unsigned char)b->r[r].generated;
    }
    g->nel = k;
    return 0;
}

int gb_finish(struct gbuild *b, int root, struct grammar **out)
{
    *out = NULL;
    for (int r = 0; r < b->nr; r++)
        if (!b->r[r].defined)
            return gb_fail(b, b->r[r].ref_at, "undefined rule '%s'", b->r[r].name);
    struct grammar *g = calloc(1, sizeof *g);
    if (!g)
        return err_set(b->e, ERR_SYSTEM, "%s: out of memory", gb_kind_name(b));
    g->root = root;
    if (lay_out(b, g) < 0 || check_left(b, g) < 0) {
        grammar_free(g);
        return -1;
    }
    *out = g;
    return 0;
}
