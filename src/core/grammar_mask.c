/* grammar_mask.c - the vocabulary's byte trie, and the mask: the walk down
 * the trie with the set of stacks. A byte that no stack takes drops the
 * whole subtree under it. The step of a set by a byte is remembered within
 * the walk (the sets are interned), so that a node costs a lookup, not an
 * expansion: a lazy DFA over the stack sets. Where a set comes back to
 * itself on every plain byte (inside a JSON string), a subtree of plain
 * bytes is kept whole without a step. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/grammar_int.h"

/* A node of the trie in depth-first order: the prefix of its depth ending
 * with byte; its subtree is the nodes up to end. In that order the tokens
 * are in the order of their bytes: those whose bytes are exactly this
 * prefix are ord[tok .. the next node's tok) (a last node closes the
 * list). Twelve bytes: the walk reads every node it visits. */
struct tnode {
    int end, tok;
    uint16_t depth;
    unsigned char byte;
    unsigned char plain; /* every byte from here down is plain (is_plain) */
};

/* The bytes a JSON string, or a regex's [^"]*, takes as themselves:
 * printable ASCII but the quote and the backslash. A set that comes back
 * to itself on each of them keeps a whole subtree of plain bytes at once. */
static int is_plain(int b)
{
    return b >= 0x20 && b < 0x7F && b != '"' && b != '\\';
}

/* The longest token the trie takes (its depth is 16 bits). */
#define TRIE_MAX_LEN 65535

struct grammar_trie {
    struct tnode *n;
    int nn, ncap;
    int *ord; /* token ids sorted by their bytes */
    int V, maxdepth, nempty;
};

struct tok {
    const unsigned char *p;
    int len, id;
};

static int cmp_tok(const void *x, const void *y)
{
    const struct tok *a = x, *b = y;
    int n = a->len < b->len ? a->len : b->len;
    int c = n > 0 ? memcmp(a->p, b->p, (size_t)n) : 0;
    if (c == 0)
        c = (a->len > b->len) - (a->len < b->len);
    return c != 0 ? c : (a->id > b->id) - (a->id < b->id);
}

void grammar_trie_free(struct grammar_trie *t)
{
    if (!t)
        return;
    free(t->n);
    free(t->ord);
    free(t);
}

static int add_node(struct grammar_trie *t, unsigned char byte, int depth, int tok)
{
    if (t->nn == t->ncap) {
        int cap = t->ncap ? 2 * t->ncap : 4096;
        struct tnode *n = realloc(t->n, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        t->n = n;
        t->ncap = cap;
    }
    t->n[t->nn] = (struct tnode){ 0, tok, (uint16_t)depth, byte, 0 };
    return t->nn++;
}

/* The nodes of the sorted tokens, each token a path from the root: a token
 * shares with the one before it their common prefix. */
static int lay_trie(struct grammar_trie *t, const struct tok *tk, int V, int *path)
{
    int pd = 0;
    const struct tok *prev = NULL;
    for (int k = 0; k < V; k++) {
        t->ord[k] = tk[k].id;
        if (tk[k].len == 0) {
            t->nempty++;
            continue;
        }
        int lcp = 0;
        while (prev && lcp < prev->len && lcp < tk[k].len && prev->p[lcp] == tk[k].p[lcp])
            lcp++;
        for (; pd > lcp; pd--)
            t->n[path[pd]].end = t->nn;
        for (int d = lcp + 1; d <= tk[k].len; d++) {
            /* Token k is the first with this prefix: the ones that are
             * exactly it (none when k is longer) begin at k. */
            if ((path[d] = add_node(t, tk[k].p[d - 1], d, k)) < 0)
                return -1;
            pd = d;
        }
        prev = &tk[k];
    }
    for (; pd > 0; pd--)
        t->n[path[pd]].end = t->nn;
    /* The last node: it closes the last real node's list of tokens. */
    if (add_node(t, 0, 0, V) < 0)
        return -1;
    t->nn--;
    return 0;
}

/* plain: no byte that is not plain in the node's subtree, by counts of
 * such nodes over the depth-first order. */
static int mark_plain(struct grammar_trie *t)
{
    int *odd = malloc(((size_t)t->nn + 1) * sizeof *odd);
    if (!odd)
        return -1;
    odd[0] = 0;
    for (int i = 0; i < t->nn; i++)
        odd[i + 1] = odd[i] + !is_plain(t->n[i].byte);
    for (int i = 0; i < t->nn; i++)
        t->n[i].plain = odd[t->n[i].end] == odd[i];
    free(odd);
    return 0;
}

int grammar_trie_build(const unsigned char *const *bytes, const int *len, int V,
                       struct grammar_trie **out, struct err *e)
{
    *out = NULL;
    if (V < 0)
        return err_set(e, ERR_USAGE, "grammar trie: %d tokens", V);
    struct grammar_trie *t = calloc(1, sizeof *t);
    struct tok *tk = malloc((size_t)(V > 0 ? V : 1) * sizeof *tk);
    int maxlen = 0;
    for (int i = 0; i < V; i++) {
        if (len[i] < 0 || len[i] > TRIE_MAX_LEN) {
            free(t);
            free(tk);
            return err_set(e, ERR_USAGE, "grammar trie: token %d has length %d (0 to %d)", i,
                           len[i], TRIE_MAX_LEN);
        }
        maxlen = len[i] > maxlen ? len[i] : maxlen;
    }
    int *path = malloc(((size_t)maxlen + 1) * sizeof *path);
    if (t)
        t->ord = malloc((size_t)(V > 0 ? V : 1) * sizeof *t->ord);
    if (!t || !tk || !path || !t->ord) {
        free(tk);
        free(path);
        grammar_trie_free(t);
        return err_set(e, ERR_SYSTEM, "grammar trie: out of memory");
    }
    for (int i = 0; i < V; i++)
        tk[i] = (struct tok){ bytes[i], len[i], i };
    qsort(tk, (size_t)V, sizeof *tk, cmp_tok);
    t->V = V;
    t->maxdepth = maxlen;
    int rc = lay_trie(t, tk, V, path);
    free(tk);
    free(path);
    if (rc == 0)
        rc = mark_plain(t);
    if (rc < 0) {
        grammar_trie_free(t);
        return err_set(e, ERR_SYSTEM, "grammar trie: out of memory");
    }
    *out = t;
    return 0;
}

/* A stack set met in the walk: its tops items[off .. off + n), whether the
 * empty stack is in it, and the bytes some top takes. */
struct wset {
    int off, n, accept;
    int loops; /* -1 not known yet; 1: each plain byte steps it to itself */
    int tab;   /* its 256 steps in tabs from tab on, or -1 (the memo hash) */
    unsigned char next[32];
};

/* The first sets stepped from get a direct table of their steps (4 MiB at
 * most); a grammar that meets more sets in one walk uses the memo hash for
 * the others. */
#define WALK_TABLES 4096

struct walk {
    const struct grammar *g;
    struct garena a;
    int *items;
    int nitems, capitems;
    struct wset *s;
    int ns, caps;
    int *shash; /* set id + 1 */
    int shcap;
    int64_t *mkey; /* (set << 8 | byte) + 1, 0 empty */
    int *mval;
    int mn, mcap;
    int *tabs; /* -1: not stepped yet */
    int ntabs, captabs;
    struct gtops tmp;
    int failed;
};

static unsigned set_hash(const int *v, int n, int accept)
{
    uint32_t h = 2166136261u ^ (uint32_t)accept;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint32_t)v[i]) * 16777619u;
    return h;
}

static int rehash_sets(struct walk *w)
{
    int cap = w->shcap ? 2 * w->shcap : 1024;
    int *h = calloc((size_t)cap, sizeof *h);
    if (!h)
        return -1;
    for (int i = 0; i < w->ns; i++) {
        unsigned k = set_hash(w->items + w->s[i].off, w->s[i].n, w->s[i].accept) & (cap - 1);
        while (h[k])
            k = (k + 1) & (unsigned)(cap - 1);
        h[k] = i + 1;
    }
    free(w->shash);
    w->shash = h;
    w->shcap = cap;
    return 0;
}

static int grow_sets(struct walk *w, int n)
{
    if (w->nitems + n > w->capitems) {
        int cap = 2 * (w->nitems + n) + 1024;
        int *v = realloc(w->items, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        w->items = v;
        w->capitems = cap;
    }
    if (w->ns == w->caps) {
        int cap = w->caps ? 2 * w->caps : 256;
        struct wset *s = realloc(w->s, (size_t)cap * sizeof *s);
        if (!s)
            return -1;
        w->s = s;
        w->caps = cap;
    }
    if (2 * (w->ns + 1) > w->shcap)
        return rehash_sets(w);
    return 0;
}

/* A direct table for set id, when there is room for one. */
static void give_table(struct walk *w, int id)
{
    if (w->ntabs == w->captabs) {
        int cap = w->captabs ? 2 * w->captabs : 64;
        if (cap > WALK_TABLES)
            return;
        int *t = realloc(w->tabs, (size_t)cap * 256 * sizeof *t);
        if (!t)
            return; /* the memo hash still works */
        w->tabs = t;
        w->captabs = cap;
    }
    w->s[id].tab = w->ntabs++ * 256;
    memset(w->tabs + w->s[id].tab, 0xff, 256 * sizeof *w->tabs);
}

/* The id of the set t (sorted), added when new. -1 when out of memory. */
static int intern_set(struct walk *w, const struct gtops *t)
{
    unsigned h = set_hash(t->v, t->n, t->accept);
    if (grow_sets(w, t->n) < 0)
        return -1;
    unsigned mask = (unsigned)(w->shcap - 1), k = h & mask;
    for (; w->shash[k]; k = (k + 1) & mask) {
        const struct wset *s = &w->s[w->shash[k] - 1];
        if (s->n == t->n && s->accept == t->accept &&
            (t->n == 0 || memcmp(w->items + s->off, t->v, (size_t)t->n * sizeof *t->v) == 0))
            return w->shash[k] - 1;
    }
    struct wset *s = &w->s[w->ns];
    s->off = w->nitems;
    s->n = t->n;
    s->accept = t->accept;
    s->tab = -1;
    s->loops = -1;
    memset(s->next, 0, 32);
    for (int i = 0; i < t->n; i++) {
        w->items[w->nitems++] = t->v[i];
        const unsigned char *b = w->g->sets[w->g->el[w->a.f[t->v[i]].pos].value];
        for (int j = 0; j < 32; j++)
            s->next[j] |= b[j];
    }
    w->shash[k] = w->ns + 1;
    give_table(w, w->ns);
    return w->ns++;
}

static int memo_grow(struct walk *w)
{
    int cap = w->mcap ? 2 * w->mcap : 4096;
    int64_t *key = calloc((size_t)cap, sizeof *key);
    int *val = malloc((size_t)cap * sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return -1;
    }
    for (int i = 0; i < w->mcap; i++) {
        if (!w->mkey[i])
            continue;
        unsigned k = (unsigned)(((uint64_t)w->mkey[i] * 0x9E3779B97F4A7C15u) >> 40) & (cap - 1);
        while (key[k])
            k = (k + 1) & (unsigned)(cap - 1);
        key[k] = w->mkey[i];
        val[k] = w->mval[i];
    }
    free(w->mkey);
    free(w->mval);
    w->mkey = key;
    w->mval = val;
    w->mcap = cap;
    return 0;
}

/* The set that set id becomes after byte, stepped. */
static int step_now(struct walk *w, int id, int byte)
{
    const struct wset *s = &w->s[id];
    ga_step(w->g, &w->a, w->items + s->off, s->n, byte, &w->tmp);
    if (w->a.failed)
        return -1;
    gtops_sort(&w->tmp);
    return intern_set(w, &w->tmp);
}

/* What a step gives besides a set's id: no stack takes the byte (or none
 * is left after it), or the walk failed. */
#define STEP_DEAD (-2)
#define STEP_FAIL (-3)

/* The set that set id becomes after byte, or STEP_DEAD, stepped. */
static int step_or_dead(struct walk *w, int id, int byte)
{
    if (!gset_has(w->s[id].next, byte))
        return STEP_DEAD;
    int to = step_now(w, id, byte);
    if (to < 0)
        return STEP_FAIL;
    return w->s[to].n == 0 && !w->s[to].accept ? STEP_DEAD : to;
}

/* The same, remembered: a table of set id's 256 steps (-1: not yet), or
 * the memo hash. */
static int step_set(struct walk *w, int id, int byte)
{
    int tab = w->s[id].tab;
    if (tab >= 0) {
        int to = w->tabs[tab + byte];
        if (to == -1 && (to = step_or_dead(w, id, byte)) != STEP_FAIL)
            w->tabs[tab + byte] = to;
        return to;
    }
    if (2 * (w->mn + 1) > w->mcap && memo_grow(w) < 0)
        return STEP_FAIL;
    int64_t key = ((int64_t)id << 8 | byte) + 1;
    unsigned mask = (unsigned)(w->mcap - 1);
    unsigned k = (unsigned)(((uint64_t)key * 0x9E3779B97F4A7C15u) >> 40) & mask;
    for (; w->mkey[k]; k = (k + 1) & mask)
        if (w->mkey[k] == key)
            return w->mval[k];
    int to = step_or_dead(w, id, byte);
    if (to == STEP_FAIL)
        return STEP_FAIL;
    w->mkey[k] = key;
    w->mval[k] = to;
    w->mn++;
    return to;
}

static void walk_free(struct walk *w)
{
    ga_free(&w->a);
    free(w->items);
    free(w->s);
    free(w->shash);
    free(w->mkey);
    free(w->mval);
    free(w->tabs);
    gtops_free(&w->tmp);
}

/* Whether set id comes back to itself on every plain byte: 1, 0, or -1
 * when the walk failed. A step depends only on which tops take the byte,
 * so one byte is stepped for each such choice of tops (inside a JSON string
 * one byte stands for all 94); a set of more than 64 tops is said not to
 * loop, which only costs the shortcut. */
static int loops_plain(struct walk *w, int id)
{
    const struct wset *s = &w->s[id];
    if (s->loops >= 0)
        return s->loops;
    if (s->n > 64)
        return w->s[id].loops = 0;
    uint64_t seen[95];
    int nseen = 0, loops = 1;
    for (int b = 0x20; b < 0x7F && loops; b++) {
        if (!is_plain(b))
            continue;
        uint64_t who = 0; /* bit i: top i takes b */
        for (int i = 0; i < w->s[id].n; i++) {
            int pos = w->a.f[w->items[w->s[id].off + i]].pos;
            who |= (uint64_t)gset_has(w->g->sets[w->g->el[pos].value], b) << i;
        }
        int known = 0;
        for (int k = 0; k < nseen && !known; k++)
            known = seen[k] == who;
        if (known)
            continue;
        seen[nseen++] = who;
        int to = step_set(w, id, b);
        if (to == STEP_FAIL)
            return -1;
        loops = to == id;
    }
    w->s[id].loops = loops;
    return loops;
}

/* The walk itself: ids[d] is the set after the first d bytes of the node
 * on the path at depth d. */
static int walk_trie(struct walk *w, const struct grammar_trie *t, int *ids, unsigned char *refused,
                     struct grammar_mask_counts *c)
{
    for (int i = 0; i < t->nn;) {
        const struct tnode *nd = &t->n[i];
        int ps = ids[nd->depth - 1];
        if (nd->plain && nd->end > i + 1) {
            int loops = loops_plain(w, ps);
            if (loops < 0)
                return -1;
            if (loops) { /* the whole subtree comes back to ps: all kept */
                for (int k = nd->tok; k < t->n[nd->end].tok; k++)
                    refused[t->ord[k]] = 0;
                c->kept += t->n[nd->end].tok - nd->tok;
                i = nd->end;
                continue;
            }
        }
        int cs = step_set(w, ps, nd->byte);
        if (cs == STEP_FAIL)
            return -1;
        if (cs == STEP_DEAD) {
            i = nd->end;
            continue;
        }
        c->nodes++;
        ids[nd->depth] = cs;
        for (int k = nd->tok; k < nd[1].tok; k++)
            refused[t->ord[k]] = 0;
        c->kept += nd[1].tok - nd->tok;
        i++;
    }
    return 0;
}

int grammar_mask(const struct grammar *g, const struct grammar_state *s,
                 const struct grammar_trie *t, unsigned char *refused,
                 struct grammar_mask_counts *c, struct err *e)
{
    struct grammar_mask_counts local;
    if (!c)
        c = &local;
    memset(c, 0, sizeof *c);
    memset(refused, 1, (size_t)t->V);
    c->accepts = s->tops.accept;
    c->empty = t->nempty;
    struct walk w;
    memset(&w, 0, sizeof w);
    w.g = g;
    int *ids = malloc(((size_t)t->maxdepth + 1) * sizeof *ids);
    int rc = -1;
    if (ids && ga_copy(&w.a, &s->a) == 0) {
        ids[0] = intern_set(&w, &s->tops);
        if (ids[0] >= 0)
            rc = walk_trie(&w, t, ids, refused, c);
    }
    if (rc < 0) {
        if (w.a.failed)
            ga_check(&w.a, e);
        else
            err_set(e, ERR_SYSTEM, "grammar mask: out of memory");
    }
    c->refused = t->V - c->kept;
    c->sets = w.ns;
    free(ids);
    walk_free(&w);
    return rc < 0 ? -1 : c->kept;
}
