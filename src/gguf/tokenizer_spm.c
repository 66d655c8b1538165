/* tokenizer_spm.c - SentencePiece-style BPE (tokenizer.ggml.model "llama"),
 * the way SentencePiece and llama.cpp run it: spaces become U+2581 (and one
 * goes in front when the model asks), the text starts as one symbol per
 * character, and the adjacent pair whose joined text is the best-scoring
 * token merges first, the leftmost of equal scores first, until no pair is a
 * token. What is left that is no token becomes its bytes' <0xNN> tokens.
 *
 * The first symbols are cut as llama.cpp cuts them, since the ids must be
 * its ids: each takes as many bytes as its first byte's top bits announce
 * (one for 00 to BF, two for C0 to DF, three for E0 to EF, four for F0 to
 * FF), whatever those bytes are, and the text's end cuts the last one
 * short. On valid UTF-8 those are its characters. After an invalid byte a
 * symbol can swallow what follows (0xFF announces four: "\xff▁and" leaves
 * "and" without its space), and no token is such a symbol, so it becomes
 * its bytes' tokens. Nothing is lost: the pieces read back the escaped text
 * (U+2581 for each space); a U+2581 that ended in byte tokens reads back as
 * those three bytes, not as a space. A heap of candidate pairs keeps it
 * O(n log n); a pair longer than the longest token is never looked up.
 */
#include <stdlib.h>
#include <string.h>

#include "gguf/tokenizer_int.h"

struct ssym {
    size_t off, n; /* bytes of the escaped text; n = 0 once merged into the left */
    int prev, next;
};

struct swork {
    char *text;
    struct ssym *sym;
    struct tok_heap heap; /* key: the joined token's negated score; size: the joined length
                           * when pushed (a symbol that grew since fails it) */
};

static int try_pair(const struct tokenizer *t, struct swork *w, int l, int r, struct err *e)
{
    if (l < 0 || r < 0)
        return 0;
    size_t size = w->sym[l].n + w->sym[r].n;
    int id = tok_find(t, w->text + w->sym[l].off, size);
    if (id < 0)
        return 0;
    return tok_heap_push(
        &w->heap,
        (struct tok_pair){
            .key = -(double)t->score[id], .left = l, .right = r, .size = (uint32_t)size },
        e);
}

/* The escaped text: U+2581 for every space, and one in front if asked. */
static size_t escape(const char *s, size_t len, int prefix, char *out)
{
    size_t n = 0;
    if (prefix) {
        memcpy(out, "\xe2\x96\x81", 3);
        n = 3;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ') {
            memcpy(out + n, "\xe2\x96\x81", 3);
            n += 3;
        } else {
            out[n++] = s[i];
        }
    }
    return n;
}

/* Cuts the escaped text into first symbols (the file's comment); returns
 * their count. */
static int first_symbols(struct swork *w, size_t len)
{
    int n = 0;
    for (size_t at = 0; at < len;) {
        unsigned char b = (unsigned char)w->text[at];
        size_t k = b < 0xc0 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
        k = k < len - at ? k : len - at;
        w->sym[n] = (struct ssym){ at, k, n - 1, at + k < len ? n + 1 : -1 };
        at += k;
        n++;
    }
    return n;
}

static int merge_all(const struct tokenizer *t, struct swork *w, int n, struct err *e)
{
    for (int i = 1; i < n; i++)
        if (try_pair(t, w, i - 1, i, e) < 0)
            return -1;
    while (w->heap.n) {
        struct tok_pair p = tok_heap_pop(&w->heap);
        struct ssym *l = &w->sym[p.left], *r = &w->sym[p.right];
        if (l->n == 0 || r->n == 0 || l->n + r->n != p.size)
            continue; /* one of them merged since */
        l->n += r->n;
        r->n = 0;
        l->next = r->next;
        if (r->next >= 0)
            w->sym[r->next].prev = p.left;
        if (try_pair(t, w, l->prev, p.left, e) < 0 || try_pair(t, w, p.left, l->next, e) < 0)
            return -1;
    }
    return 0;
}

int spm_encode(const struct tokenizer *t, const char *text, size_t len, int prefix,
               struct tok_out *o, struct err *e)
{
    struct swork w = { 0 };
    w.text = malloc(3 * len + 3);
    size_t n = w.text ? escape(text, len, prefix, w.text) : 0;
    w.sym = w.text ? malloc((n ? n : 1) * sizeof *w.sym) : NULL; /* at most one a byte */
    int rc = w.sym ? 0 : err_set(e, ERR_SYSTEM, "out of memory for %zu bytes", len);
    if (rc == 0) {
        int count = first_symbols(&w, n);
        rc = merge_all(t, &w, count, e);
        for (int i = 0; rc == 0 && count > 0 && i >= 0; i = w.sym[i].next) {
            const struct ssym *s = &w.sym[i];
            int id = tok_find(t, w.text + s->off, s->n);
            if (id >= 0) {
                rc = tok_push(o, id, e);
                continue;
            }
            for (size_t j = 0; rc == 0 && j < s->n; j++)
                rc = tok_push(o, t->byte_tok[(unsigned char)w.text[s->off + j]], e);
        }
    }
    free(w.text);
    free(w.sym);
    free(w.heap.p);
    return rc;
}
