/* grammar_state.c - a state of grammar.h: its stacks, fed bytes, and put
 * in words for a screen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grammar_int.h"

static int oom(struct err *e)
{
    return err_set(e, ERR_SYSTEM, "grammar: out of memory");
}

int grammar_state_new(const struct grammar *g, struct grammar_state **out, struct err *e)
{
    struct grammar_state *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s || ga_init(&s->a) < 0) {
        free(s);
        return oom(e);
    }
    ga_initial(g, &s->a, &s->tops);
    gtops_sort(&s->tops);
    if (ga_check(&s->a, e) < 0) {
        grammar_state_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

int grammar_state_copy(const struct grammar_state *s, struct grammar_state **out, struct err *e)
{
    struct grammar_state *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c || ga_copy(&c->a, &s->a) < 0) {
        free(c);
        return oom(e);
    }
    c->tops.accept = s->tops.accept;
    if (s->tops.n > 0) {
        c->tops.v = malloc((size_t)s->tops.n * sizeof *c->tops.v);
        if (!c->tops.v) {
            grammar_state_free(c);
            return oom(e);
        }
        memcpy(c->tops.v, s->tops.v, (size_t)s->tops.n * sizeof *c->tops.v);
        c->tops.n = c->tops.cap = s->tops.n;
    }
    *out = c;
    return 0;
}

void grammar_state_free(struct grammar_state *s)
{
    if (!s)
        return;
    ga_free(&s->a);
    gtops_free(&s->tops);
    free(s);
}

/* Frame id of src as a frame of dst (map: the src frames brought already,
 * -1 for none), without recursion: the chain below id is brought first. */
static int bring(struct garena *dst, const struct garena *src, int id, int *map,
                 struct gtops *chain)
{
    chain->n = 0;
    for (int f = id; f >= 0 && map[f] < 0; f = src->f[f].up) {
        if (chain->n == chain->cap) {
            int cap = chain->cap ? 2 * chain->cap : 64;
            int *v = realloc(chain->v, (size_t)cap * sizeof *v);
            if (!v)
                return -1;
            chain->v = v;
            chain->cap = cap;
        }
        chain->v[chain->n++] = f;
    }
    if (chain->n == 0)
        return map[id];
    int up = src->f[chain->v[chain->n - 1]].up;
    int below = up < 0 ? -1 : map[up];
    for (int k = chain->n - 1; k >= 0; k--) {
        int f = chain->v[k];
        below = map[f] = ga_intern(dst, src->f[f].pos, below);
        if (below < 0)
            return -1;
    }
    return below;
}

/* Keeps only the frames that the tops reach (a long generation would
 * otherwise keep every frame it ever made). */
static int compact(struct grammar_state *s, struct err *e)
{
    struct garena na;
    struct gtops chain = { 0 };
    int *map = malloc((size_t)(s->a.n > 0 ? s->a.n : 1) * sizeof *map);
    if (!map || ga_init(&na) < 0) {
        free(map);
        return oom(e);
    }
    memset(map, 0xff, (size_t)s->a.n * sizeof *map);
    for (int i = 0; i < s->tops.n; i++)
        if ((s->tops.v[i] = bring(&na, &s->a, s->tops.v[i], map, &chain)) < 0) {
            free(map);
            gtops_free(&chain);
            ga_free(&na);
            return oom(e);
        }
    free(map);
    gtops_free(&chain);
    ga_free(&s->a);
    s->a = na;
    gtops_sort(&s->tops);
    return 0;
}

int grammar_advance(const struct grammar *g, struct grammar_state *s, const unsigned char *b,
                    size_t n, struct err *e)
{
    struct garena a;
    struct gtops x = { 0 }, y = { 0 };
    if (ga_copy(&a, &s->a) < 0)
        return oom(e);
    const struct gtops *from = &s->tops;
    struct gtops *to = &x;
    int live = 1;
    for (size_t i = 0; i < n && live; i++) {
        ga_step(g, &a, from->v, from->n, b[i], to);
        live = to->n > 0 || to->accept;
        from = to;
        to = to == &x ? &y : &x;
    }
    int rc = ga_check(&a, e);
    if (rc == 0 && live && n > 0) {
        struct gtops *fin = from == &x ? &x : &y;
        ga_free(&s->a);
        gtops_free(&s->tops);
        s->a = a;
        s->tops = *fin;
        memset(fin, 0, sizeof *fin);
        rc = compact(s, e);
    } else {
        ga_free(&a);
    }
    gtops_free(&x);
    gtops_free(&y);
    return rc < 0 ? -1 : live;
}

int grammar_accepts(const struct grammar_state *s)
{
    return s->tops.accept;
}

void grammar_next_bytes(const struct grammar *g, const struct grammar_state *s,
                        unsigned char set[32])
{
    memset(set, 0, 32);
    for (int i = 0; i < s->tops.n; i++) {
        const unsigned char *t = g->sets[g->el[s->a.f[s->tops.v[i]].pos].value];
        for (int k = 0; k < 32; k++)
            set[k] |= t[k];
    }
}

struct sbuf {
    char *p;
    size_t cap, n;
};

static void put(struct sbuf *o, const char *s)
{
    for (; *s; s++, o->n++)
        if (o->n + 1 < o->cap)
            o->p[o->n] = *s;
    if (o->cap > 0)
        o->p[o->n + 1 < o->cap ? o->n : o->cap - 1] = '\0';
}

/* One byte of a class, escaped: never a raw control or non-ASCII byte. */
static void put_byte(struct sbuf *o, int c)
{
    char t[8];
    if (c == '\n' || c == '\t' || c == '\r')
        snprintf(t, sizeof t, "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
    else if (c == '\\' || c == ']' || c == '-' || c == '^')
        snprintf(t, sizeof t, "\\%c", c);
    else if (c < 0x20 || c >= 0x7F)
        snprintf(t, sizeof t, "\\x%02X", (unsigned)c);
    else
        snprintf(t, sizeof t, "%c", c);
    put(o, t);
}

static void put_class(struct sbuf *o, const unsigned char *set)
{
    put(o, "[");
    for (int c = 0; c < 256; c++) {
        if (!gset_has(set, c))
            continue;
        int z = c;
        while (z + 1 < 256 && gset_has(set, z + 1))
            z++;
        put_byte(o, c);
        if (z > c + 1)
            put(o, "-");
        if (z > c)
            put_byte(o, z);
        c = z;
    }
    put(o, "]");
}

/* The first named rule at or below frame id other than the rule of name
 * (generated rules carry their parent's name, so a name change is a step
 * out to another rule the user wrote). */
static const char *below(const struct grammar *g, const struct garena *a, int id, const char *name)
{
    for (; id >= 0; id = a->f[id].up) {
        const char *n = g->name[g->rule_of[a->f[id].pos]];
        if (strcmp(n, name) != 0)
            return n;
    }
    return NULL;
}

size_t grammar_describe(const struct grammar *g, const struct grammar_state *s, char *buf,
                        size_t cap)
{
    struct sbuf o = { buf, cap, 0 };
    unsigned char set[32];
    grammar_next_bytes(g, s, set);
    put(&o, "");
    if (s->tops.n == 0) {
        put(&o, s->tops.accept ? "complete: only the end may come" : "dead: nothing may come");
        return o.n < cap ? o.n : cap ? cap - 1 : 0;
    }
    put(&o, "expecting ");
    put_class(&o, set);
    if (s->tops.accept)
        put(&o, " or the end");
    /* The named rules on top, each with the one below it, once each. */
    int shown = 0;
    for (int i = 0; i < s->tops.n && shown < 4; i++) {
        int id = s->tops.v[i];
        const char *top = g->name[g->rule_of[s->a.f[id].pos]];
        const char *under = below(g, &s->a, id, top);
        int dup = 0;
        for (int j = 0; j < i && !dup; j++) {
            int jd = s->tops.v[j];
            const char *t2 = g->name[g->rule_of[s->a.f[jd].pos]];
            const char *u2 = below(g, &s->a, jd, t2);
            dup = strcmp(t2, top) == 0 && (u2 == under || (u2 && under && !strcmp(u2, under)));
        }
        if (dup)
            continue;
        put(&o, shown++ ? ", " : " (in ");
        put(&o, top);
        if (under) {
            put(&o, " < ");
            put(&o, under);
        }
    }
    put(&o, ")");
    return o.n < cap ? o.n : cap ? cap - 1 : 0;
}
