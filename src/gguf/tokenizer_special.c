/* tokenizer_special.c - the special tokens found in a text, in one scan.
 *
 * llama.cpp (tokenizer_st_partition) takes the special tokens one at a
 * time in t->special's order (longest first, ties by id); each takes every
 * occurrence, left to right and not overlapping its own, that lies wholly
 * in text no token before it took. That is a pass over the text per token:
 * 4 minutes for a prompt of 1 MiB and a vocabulary with 20,000 user-defined
 * tokens (issue 29). The same partition comes here from one scan:
 *
 * 1. An Aho-Corasick automaton over the pieces written backwards, run from
 *    the text's end to its start, gives at each position every special
 *    token that begins there, the longest first: the state's token, then
 *    its chain of output links. Those are the position's candidates, in
 *    llama.cpp's order (at one position no two candidates have one length).
 * 2. The candidates of all positions are merged in llama.cpp's order,
 *    (rank in t->special, position), by a heap that holds one candidate of
 *    each position. A candidate is taken when no byte of its span is taken
 *    yet: exactly when llama.cpp's pass for its token takes it, as every
 *    token before it has taken what it takes and its own earlier
 *    occurrences lie to its left. A taken position leaves the heap; one
 *    that is not gives its next candidate short enough to end before the
 *    taken span that stopped this one (the longer ones would cross it too).
 * 3. The taken spans and the plain text between them, in text order.
 *
 * Cost, for n bytes of text: the scan reads each byte once and follows at
 * most n failure links in all; a candidate costs a heap step (O(log n))
 * and a look for a taken byte in its span of L bytes (a bit a byte, and a
 * bit a word of them: O(1 + L / 4096)); there are at most n x D
 * candidates, D the longest chain of special tokens each a prefix of the
 * next (3 for "a", "aa", "aaa"; 1 when no special token is a prefix of
 * another). Memory: the automaton, a few words per byte of the special
 * tokens' pieces, made once when the tokenizer is built; and for a text,
 * the heap's 8 bytes per position where a special token begins, two bits
 * a byte, and 4 bytes a byte written only where a token is taken. A text
 * with no candidate needs none of it.
 */
#include <stdlib.h>
#include <string.h>

#include "gguf/tokenizer_int.h"

#define ROOT 0

/* An edge of the automaton's trie: from, by one byte, to (-1: empty). */
struct sp_edge {
    int32_t from, to;
    unsigned char byte;
};

/* The states are the nodes of the trie of the pieces written backwards,
 * a node spelling a suffix of one or more pieces. Mode 0 looks for every
 * special token (special set), mode 1 for the user-defined ones only. */
struct tok_special {
    int32_t n;
    int32_t *fail;        /* the longest proper suffix of the node's bytes that is a node */
    int32_t *depth;       /* the node's length in bytes */
    int32_t *rank[2];     /* the first rank in t->special whose piece the node spells, or -1 */
    int32_t *out[2];      /* the nearest node along the failure links with a rank, or -1 */
    int32_t *node_of;     /* the node of each rank's piece */
    int any[2];           /* whether the mode has a token */
    struct sp_edge *edge; /* the edges out of the nodes but the root, by hash of (from, byte) */
    size_t mask;          /* edge slots - 1 (a power of two) */
    int32_t root[256];    /* the root's edges, the ones taken most */
};

static size_t edge_hash(int32_t from, unsigned char b)
{
    return ((uint32_t)from * 2654435761u) ^ ((uint32_t)b * 40503u);
}

static int32_t child(const struct tok_special *sp, int32_t from, unsigned char b)
{
    if (from == ROOT)
        return sp->root[b];
    for (size_t h = edge_hash(from, b) & sp->mask;; h = (h + 1) & sp->mask) {
        const struct sp_edge *x = &sp->edge[h];
        if (x->to < 0 || (x->from == from && x->byte == b))
            return x->to;
    }
}

static void put_child(struct tok_special *sp, int32_t from, unsigned char b, int32_t to)
{
    if (from == ROOT) {
        sp->root[b] = to;
        return;
    }
    size_t h = edge_hash(from, b) & sp->mask;
    while (sp->edge[h].to >= 0)
        h = (h + 1) & sp->mask;
    sp->edge[h] = (struct sp_edge){ from, to, b };
}

void tok_special_free(struct tok_special *sp)
{
    if (!sp)
        return;
    free(sp->fail);
    free(sp->depth);
    for (int m = 0; m < 2; m++) {
        free(sp->rank[m]);
        free(sp->out[m]);
    }
    free(sp->node_of);
    free(sp->edge);
    free(sp);
}

/* Room for nodes states and the ranks of n_special tokens. */
static struct tok_special *sp_alloc(size_t nodes, int n_special, struct err *e)
{
    struct tok_special *sp = calloc(1, sizeof *sp);
    size_t slots = 16, words = nodes * sizeof(int32_t);
    while (slots < 2 * nodes)
        slots *= 2;
    if (sp) {
        sp->fail = malloc(words);
        sp->depth = malloc(words);
        for (int m = 0; m < 2; m++) {
            sp->rank[m] = malloc(words);
            sp->out[m] = malloc(words);
        }
        sp->node_of = malloc((size_t)(n_special ? n_special : 1) * sizeof(int32_t));
        sp->edge = malloc(slots * sizeof *sp->edge);
    }
    if (!sp || !sp->fail || !sp->depth || !sp->rank[0] || !sp->rank[1] || !sp->out[0] ||
        !sp->out[1] || !sp->node_of || !sp->edge) {
        tok_special_free(sp);
        err_set(e, ERR_SYSTEM, "out of memory for the automaton of %d special tokens", n_special);
        return NULL;
    }
    sp->mask = slots - 1;
    for (size_t i = 0; i < slots; i++)
        sp->edge[i].to = -1;
    memset(sp->root, 0xff, sizeof sp->root); /* -1: no edge */
    sp->n = 1;
    sp->depth[ROOT] = 0;
    sp->rank[0][ROOT] = sp->rank[1][ROOT] = -1;
    return sp;
}

/* The node of s[0..len) written backwards, made where missing; parent and
 * byte record each new node's edge for the failure links. */
static int32_t insert(struct tok_special *sp, const char *s, size_t len, int32_t *parent,
                      unsigned char *byte)
{
    int32_t at = ROOT;
    for (size_t i = len; i-- > 0;) {
        unsigned char b = (unsigned char)s[i];
        int32_t c = child(sp, at, b);
        if (c < 0) {
            c = sp->n++;
            parent[c] = at;
            byte[c] = b;
            sp->depth[c] = sp->depth[at] + 1;
            sp->rank[0][c] = sp->rank[1][c] = -1;
            put_child(sp, at, b, c);
        }
        at = c;
    }
    return at;
}

/* The failure and output links, the nodes taken by depth (a node's
 * failure link is shorter than it), the root's children first. */
static int link_nodes(struct tok_special *sp, const int32_t *parent, const unsigned char *byte,
                      struct err *e)
{
    int32_t deepest = 0;
    for (int32_t i = 0; i < sp->n; i++)
        deepest = sp->depth[i] > deepest ? sp->depth[i] : deepest;
    size_t *start = calloc((size_t)deepest + 2, sizeof *start);
    int32_t *order = malloc((size_t)sp->n * sizeof *order);
    if (!start || !order) {
        free(start);
        free(order);
        return err_set(e, ERR_SYSTEM, "out of memory for an automaton of %d states", (int)sp->n);
    }
    for (int32_t i = 0; i < sp->n; i++)
        start[sp->depth[i] + 1]++;
    for (int32_t d = 0; d <= deepest; d++)
        start[d + 1] += start[d];
    for (int32_t i = 0; i < sp->n; i++)
        order[start[sp->depth[i]]++] = i;
    sp->fail[ROOT] = ROOT;
    sp->out[0][ROOT] = sp->out[1][ROOT] = -1;
    for (int32_t k = 1; k < sp->n; k++) {
        int32_t c = order[k], f = ROOT, g = -1;
        if (parent[c] != ROOT) {
            f = sp->fail[parent[c]];
            while ((g = child(sp, f, byte[c])) < 0 && f != ROOT)
                f = sp->fail[f];
            f = g < 0 ? ROOT : g;
        }
        sp->fail[c] = f;
        for (int m = 0; m < 2; m++)
            sp->out[m][c] = sp->rank[m][f] >= 0 ? f : sp->out[m][f];
    }
    free(start);
    free(order);
    return 0;
}

/* Every special token's piece into the trie; a node keeps, for each mode,
 * the first rank that spells it (two tokens of one piece: llama.cpp's pass
 * for the first takes every occurrence the second could). */
static void insert_all(struct tok_special *sp, const struct tokenizer *t, int32_t *parent,
                       unsigned char *byte)
{
    for (int r = 0; r < t->n_special; r++) {
        int id = t->special[r];
        int32_t node = insert(sp, t->piece + t->piece_off[id],
                              t->piece_off[id + 1] - t->piece_off[id], parent, byte);
        sp->node_of[r] = node;
        for (int m = 0; m < 2; m++)
            if (sp->rank[m][node] < 0 && (m == 0 || t->type[id] == TOKT_USER_DEFINED)) {
                sp->rank[m][node] = r;
                sp->any[m] = 1;
            }
    }
}

/* The edges again, in a table sized for the states there are: the pieces
 * share their ends, so the first table, sized for every byte of them
 * (20,000 tokens of 8 bytes: 6 MB, a tenth of it used), would spread the
 * scan's lookups over far more memory than they need. */
static int shrink_edges(struct tok_special *sp, const int32_t *parent, const unsigned char *byte,
                        struct err *e)
{
    size_t slots = 16;
    while (slots < 2 * (size_t)sp->n)
        slots *= 2;
    if (slots > sp->mask)
        return 0;
    struct sp_edge *edge = malloc(slots * sizeof *edge);
    if (!edge)
        return err_set(e, ERR_SYSTEM, "out of memory for an automaton of %d states", (int)sp->n);
    free(sp->edge);
    sp->edge = edge;
    sp->mask = slots - 1;
    for (size_t i = 0; i < slots; i++)
        sp->edge[i].to = -1;
    for (int32_t c = 1; c < sp->n; c++)
        if (parent[c] != ROOT)
            put_child(sp, parent[c], byte[c], c);
    return 0;
}

int tok_special_build(struct tokenizer *t, struct err *e)
{
    size_t total = 0;
    for (int r = 0; r < t->n_special; r++)
        total += t->piece_off[t->special[r] + 1] - t->piece_off[t->special[r]];
    if (total >= INT32_MAX) /* the states are int32_t */
        return err_set(e, ERR_USAGE, "the special tokens' text passes 2 GiB (%zu bytes)", total);
    struct tok_special *sp = sp_alloc(total + 1, t->n_special, e);
    if (!sp)
        return -1;
    int32_t *parent = malloc((total + 1) * sizeof *parent);
    unsigned char *byte = malloc(total + 1);
    if (!parent || !byte) {
        free(parent);
        free(byte);
        tok_special_free(sp);
        return err_set(e, ERR_SYSTEM, "out of memory for the automaton of %d special tokens",
                       t->n_special);
    }
    insert_all(sp, t, parent, byte);
    int rc = shrink_edges(sp, parent, byte, e) < 0 ? -1 : link_nodes(sp, parent, byte, e);
    free(parent);
    free(byte);
    if (rc < 0) {
        tok_special_free(sp);
        return -1;
    }
    t->sp = sp;
    return 0;
}

/* One partition's work: a candidate is the key rank << 32 | position. */
struct run {
    uint64_t *heap;
    size_t n, cap;
    uint64_t *taken; /* a bit a byte: a taken token covers it */
    uint64_t *busy;  /* a bit a word of taken: the word has a bit set */
    uint64_t *first; /* a bit a byte: a taken token begins there */
    int32_t *id_at;  /* the taken token's id, written at its first byte only */
    size_t len, words;
};

#define KEY(rank, pos) ((uint64_t)(uint32_t)(rank) << 32 | (uint64_t)(pos))

static int heap_append(struct run *r, uint64_t key, struct err *e)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        uint64_t *h = realloc(r->heap, cap * sizeof *h);
        if (!h)
            return err_set(e, ERR_SYSTEM, "out of memory for %zu special tokens' places", cap);
        r->heap = h;
        r->cap = cap;
    }
    r->heap[r->n++] = key;
    return 0;
}

static void sift_down(struct run *r, size_t i)
{
    uint64_t x = r->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= r->n)
            break;
        if (c + 1 < r->n && r->heap[c + 1] < r->heap[c])
            c++;
        if (r->heap[c] >= x)
            break;
        r->heap[i] = r->heap[c];
        i = c;
    }
    r->heap[i] = x;
}

static void heap_pop(struct run *r)
{
    r->heap[0] = r->heap[--r->n];
    if (r->n)
        sift_down(r, 0);
}

/* The first candidate of each position into r's heap, from the text's end
 * to its start; count->steps gets the edges looked up. */
static int scan(const struct tok_special *sp, int m, const char *text, size_t len, struct run *r,
                struct tok_scan_count *count, struct err *e)
{
    int32_t s = ROOT, c;
    size_t steps = 0;
    for (size_t i = len; i-- > 0;) {
        unsigned char b = (unsigned char)text[i];
        while (steps++, (c = child(sp, s, b)) < 0 && s != ROOT)
            s = sp->fail[s];
        s = c < 0 ? ROOT : c;
        int32_t hit = sp->rank[m][s] >= 0 ? s : sp->out[m][s];
        if (hit >= 0 && heap_append(r, KEY(sp->rank[m][hit], i), e) < 0)
            return -1;
    }
    if (count)
        count->steps += steps;
    return 0;
}

static size_t low_bit(uint64_t x)
{
    return (size_t)__builtin_ctzll(x);
}

/* The first taken byte in [from, limit), or limit: the word of from, then
 * the words busy says have a bit, 64 at a time; O(1 + (limit - from) /
 * 4096). */
static size_t next_taken(const struct run *r, size_t from, size_t limit)
{
    size_t w = from >> 6;
    uint64_t bits = r->taken[w] & (~(uint64_t)0 << (from & 63));
    while (bits == 0) {
        if (++w << 6 >= limit)
            return limit;
        uint64_t busy = r->busy[w >> 6] >> (w & 63);
        if (busy == 0) {
            w |= 63; /* on to the next word of busy */
            continue;
        }
        w += low_bit(busy);
        if (w << 6 >= limit)
            return limit;
        bits = r->taken[w];
    }
    size_t at = (w << 6) + low_bit(bits);
    return at < limit ? at : limit;
}

/* Token id takes the len bytes at pos. */
static void mark(struct run *r, size_t pos, size_t len, int id)
{
    for (size_t i = pos, end = pos + len; i < end;) {
        size_t w = i >> 6, k = i & 63, n = end - i < 64 - k ? end - i : 64 - k;
        r->taken[w] |= (n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1) << k;
        r->busy[w >> 6] |= (uint64_t)1 << (w & 63);
        i += n;
    }
    r->first[pos >> 6] |= (uint64_t)1 << (pos & 63);
    r->id_at[pos] = id;
}

/* Takes the candidates in llama.cpp's order (the head comment's step 2);
 * count->candidates gets those looked at. */
static void take(const struct tokenizer *t, int m, struct run *r, struct tok_scan_count *count)
{
    const struct tok_special *sp = t->sp;
    size_t looked = 0;
    while (r->n) {
        looked++;
        uint64_t key = r->heap[0];
        int32_t node = sp->node_of[key >> 32];
        size_t pos = (uint32_t)key, len = (size_t)sp->depth[node];
        size_t next = next_taken(r, pos, pos + len);
        if (next == pos) { /* inside a longer or earlier token: so are all the rest */
            heap_pop(r);
            continue;
        }
        if (next == pos + len) {
            mark(r, pos, len, t->special[key >> 32]);
            heap_pop(r);
            continue;
        }
        int32_t shorter = sp->out[m][node];
        while (shorter >= 0 && (size_t)sp->depth[shorter] > next - pos)
            looked++, shorter = sp->out[m][shorter];
        if (shorter < 0) {
            heap_pop(r);
        } else {
            r->heap[0] = KEY(sp->rank[m][shorter], pos);
            sift_down(r, 0);
        }
    }
    if (count)
        count->candidates += looked;
}

/* The taken tokens and the plain text between them, in order. */
static int emit(const struct tokenizer *t, const struct run *r, struct tok_segs *v, struct err *e)
{
    size_t plain = 0;
    for (size_t w = 0; w < r->words; w++)
        for (uint64_t bits = r->first[w]; bits; bits &= bits - 1) {
            size_t at = (w << 6) + low_bit(bits);
            int id = r->id_at[at];
            size_t len = t->piece_off[id + 1] - t->piece_off[id];
            if (tok_seg_add(v, plain, at - plain, -1, e) < 0 || tok_seg_add(v, at, len, id, e) < 0)
                return -1;
            plain = at + len;
        }
    return tok_seg_add(v, plain, r->len - plain, -1, e);
}

int tok_special_split(const struct tokenizer *t, const char *text, size_t len, int special,
                      struct tok_segs *v, struct tok_scan_count *count, struct err *e)
{
    int m = special ? 0 : 1;
    struct run r = { .len = len, .words = (len + 63) / 64 };
    if (!t->sp->any[m] || len == 0)
        return tok_seg_add(v, 0, len, -1, e);
    if (scan(t->sp, m, text, len, &r, count, e) < 0) {
        free(r.heap);
        return -1;
    }
    if (r.n == 0)
        return tok_seg_add(v, 0, len, -1, e);
    for (size_t i = r.n / 2; i-- > 0;)
        sift_down(&r, i);
    r.taken = calloc(r.words, sizeof *r.taken);
    r.busy = calloc((r.words + 63) / 64, sizeof *r.busy);
    r.first = calloc(r.words, sizeof *r.first);
    r.id_at = malloc(len * sizeof *r.id_at); /* read only where first says */
    int rc = 0;
    if (!r.taken || !r.busy || !r.first || !r.id_at)
        rc = err_set(e, ERR_SYSTEM, "out of memory for the special tokens of %zu bytes", len);
    if (rc == 0) {
        take(t, m, &r, count);
        rc = emit(t, &r, v, e);
    }
    free(r.heap);
    free(r.taken);
    free(r.busy);
    free(r.first);
    free(r.id_at);
    return rc;
}
