/* tokenizer.c - the parts the kinds share: the tables built from a spec,
 * the special tokens' order (tokenizer_special.c finds them in the text),
 * pieces, and the encode that puts them together. The kinds themselves
 * are in tokenizer_bpe.c, tokenizer_spm.c and tokenizer_gemma4.c.
 */
#include "gguf/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "gguf/tokenizer_int.h"

/* FNV-1a: simple, and good enough for keys that are short runs of text. */
static uint32_t key_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

int tok_find(const struct tokenizer *t, const char *s, size_t len)
{
    if (len == 0 || len > t->max_key)
        return -1;
    for (uint32_t h = key_hash(s, len) & t->mask;; h = (h + 1) & t->mask) {
        int id = t->slot[h];
        if (id < 0)
            return -1;
        if (t->key_off[id + 1] - t->key_off[id] == len &&
            memcmp(t->key + t->key_off[id], s, len) == 0)
            return id;
    }
}

int tok_push(struct tok_out *o, int id, struct err *e)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 256;
        int *ids = realloc(o->ids, cap * sizeof *ids);
        if (!ids)
            return err_set(e, ERR_SYSTEM, "out of memory for %zu token ids", cap);
        o->ids = ids;
        o->cap = cap;
    }
    o->ids[o->n++] = id;
    return 0;
}

/* Whether a goes before b: the smaller key, ties to the leftmost. */
static int pair_before(const struct tok_pair *a, const struct tok_pair *b)
{
    return a->key < b->key || (a->key == b->key && a->left < b->left);
}

int tok_heap_push(struct tok_heap *h, struct tok_pair p, struct err *e)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        struct tok_pair *q = realloc(h->p, cap * sizeof *q);
        if (!q)
            return err_set(e, ERR_SYSTEM, "out of memory for %zu pairs", cap);
        h->p = q;
        h->cap = cap;
    }
    size_t i = h->n++;
    while (i > 0 && pair_before(&p, &h->p[(i - 1) / 2])) {
        h->p[i] = h->p[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->p[i] = p;
    return 0;
}

struct tok_pair tok_heap_pop(struct tok_heap *h)
{
    struct tok_pair top = h->p[0], last = h->p[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && pair_before(&h->p[c + 1], &h->p[c]))
            c++;
        if (!pair_before(&h->p[c], &last))
            break;
        h->p[i] = h->p[c];
        i = c;
    }
    if (n)
        h->p[i] = last;
    return top;
}

const char *tok_quote(const char *s, size_t len, char *buf, size_t n)
{
    char raw[48];
    size_t k = len < 40 ? len : 40;
    memcpy(raw, s, k);
    raw[k] = '\0';
    size_t at = utf8_escape(raw, buf, n - 4);
    if (k < len)
        memcpy(buf + at, "...", 4);
    return buf;
}

int tok_as_written(int type)
{
    return type == TOKT_CONTROL || type == TOKT_USER_DEFINED || type == TOKT_UNKNOWN;
}

static int alloc_tables(struct tokenizer *t, size_t text_bytes, struct err *e)
{
    size_t n = (size_t)t->n;
    uint32_t slots = 1;
    while (slots < 2 * n)
        slots <<= 1;
    t->mask = slots - 1;
    t->key = malloc(text_bytes ? text_bytes : 1);
    t->key_off = malloc((n + 1) * sizeof *t->key_off);
    t->piece = malloc(text_bytes ? text_bytes : 1);
    t->piece_off = malloc((n + 1) * sizeof *t->piece_off);
    t->slot = malloc(slots * sizeof *t->slot);
    if (t->kind == TOK_SPM)
        t->score = calloc(n, sizeof *t->score);
    if (!t->key || !t->key_off || !t->piece || !t->piece_off || !t->slot ||
        (t->kind == TOK_SPM && !t->score))
        return err_set(e, ERR_SYSTEM, "out of memory for a vocabulary of %d tokens", t->n);
    memset(t->slot, 0xff, slots * sizeof *t->slot);
    return 0;
}

/* The types of the spec's tokens (an unknown type is UNDEFINED, as in
 * llama.cpp), before tok_attr_apply changes some by their text. */
static int copy_types(struct tokenizer *t, const struct tok_spec *s, const char *path,
                      struct err *e)
{
    t->type = malloc((size_t)s->n);
    if (!t->type)
        return err_set(e, ERR_SYSTEM, "out of memory for a vocabulary of %d tokens", s->n);
    for (int i = 0; i < s->n; i++) {
        if (!s->text[i].s && s->text[i].len)
            return err_set(e, ERR_USAGE, "%s: token %d has no text", path, i);
        int type = s->types ? s->types[i] : TOKT_NORMAL;
        t->type[i] = (int8_t)(type >= TOKT_UNDEFINED && type <= TOKT_BYTE ? type : TOKT_UNDEFINED);
    }
    return 0;
}

/* BPE's key and piece of token i (see tokenizer_int.h): the piece is the
 * text as written for a special token, else its bytes; the key the bytes
 * when the whole text is in GPT-2's spelling, else nothing. */
static void bpe_key_piece(struct tokenizer *t, int i, const struct tok_str *x, uint32_t *at,
                          uint32_t *pat)
{
    int spelled = 0;
    size_t len = x->len ? bpe_unspell(x->s, x->len, t->key + *at, &spelled) : 0;
    const char *piece = tok_as_written(t->type[i]) ? x->s : t->key + *at;
    size_t piece_len = tok_as_written(t->type[i]) ? x->len : len;
    if (piece_len)
        memcpy(t->piece + *pat, piece, piece_len);
    *pat += (uint32_t)piece_len;
    if (spelled) {
        *at += (uint32_t)len;
        t->max_key = len > t->max_key ? len : t->max_key;
    }
}

/* Keys (and SPM's scores; BPE's pieces) from the spec; SPM's and Gemma 4's
 * pieces come later, once the byte tokens are known. */
static int build_keys(struct tokenizer *t, const struct tok_spec *s, const char *path,
                      struct err *e)
{
    size_t total = 0;
    for (int i = 0; i < s->n; i++) {
        total += s->text[i].len;
        if (total > UINT32_MAX)
            return err_set(e, ERR_USAGE, "%s: the tokens' text passes 4 GiB", path);
    }
    if (alloc_tables(t, total, e) < 0)
        return -1;
    uint32_t at = 0, pat = 0;
    for (int i = 0; i < s->n; i++) {
        const struct tok_str *x = &s->text[i];
        t->key_off[i] = at;
        t->piece_off[i] = pat;
        if (t->kind == TOK_BPE) {
            bpe_key_piece(t, i, x, &at, &pat);
            continue;
        }
        if (x->len)
            memcpy(t->key + at, x->s, x->len);
        at += (uint32_t)x->len;
        t->max_key = x->len > t->max_key ? x->len : t->max_key;
        if (s->scores && t->score)
            t->score[i] = s->scores[i];
    }
    t->key_off[s->n] = at;
    t->piece_off[s->n] = pat;
    return 0;
}

/* The id table. Two tokens of one key are two of one text (a BPE key is
 * its text's bytes, one to one), which would make encoding ambiguous;
 * llama.cpp's loader refuses them too (its text-to-id map must be as large
 * as the vocabulary). */
static int build_table(struct tokenizer *t, const char *path, struct err *e)
{
    for (int i = 0; i < t->n; i++) {
        const char *k = t->key + t->key_off[i];
        size_t len = t->key_off[i + 1] - t->key_off[i];
        if (len == 0)
            continue; /* matches nothing */
        int dup = tok_find(t, k, len);
        if (dup >= 0) {
            char q[200];
            return err_set(e, ERR_USAGE, "%s: tokens %d and %d are both '%s'", path, dup, i,
                           tok_quote(k, len, q, sizeof q));
        }
        uint32_t h = key_hash(k, len) & t->mask;
        while (t->slot[h] >= 0)
            h = (h + 1) & t->mask;
        t->slot[h] = i;
    }
    return 0;
}

/* SPM bytes: <0xNN> (as llama.cpp spells them, upper case), else the byte as
 * a one-byte piece; llama.cpp looks them up when it needs one, and a
 * vocabulary without one is refused here. BPE bytes: the token whose key
 * is that byte, or none (-1): llama.cpp's BPE gives no id for a byte it
 * has no token for. Gemma 4 bytes: <0xNN> alone, or none (-1), which
 * llama.cpp drops too. */
static int build_bytes(struct tokenizer *t, const char *path, struct err *e)
{
    for (int b = 0; b < 256; b++) {
        char name[8], one = (char)b;
        snprintf(name, sizeof name, "<0x%02X>", b);
        int id = t->kind != TOK_BPE ? tok_find(t, name, 6) : -1;
        if (id < 0 && t->kind != TOK_GEMMA4)
            id = tok_find(t, &one, 1);
        if (id < 0 && t->kind == TOK_SPM)
            return err_set(e, ERR_USAGE,
                           "%s: no token for the byte 0x%02X (no %s, no one-byte piece)", path, b,
                           name);
        t->byte_tok[b] = id;
    }
    return 0;
}

/* The value of a hexadecimal digit, or -1. */
static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                  : -1;
}

/* SPM and Gemma 4 pieces: the stored text with U+2581 back to spaces, a
 * byte token's byte, special tokens as written (llama.cpp's token_to_piece
 * for both). */
static void build_pieces(struct tokenizer *t)
{
    uint32_t at = 0;
    for (int i = 0; i < t->n; i++) {
        const char *k = t->key + t->key_off[i];
        uint32_t len = t->key_off[i + 1] - t->key_off[i];
        t->piece_off[i] = at;
        int byte = -1;
        /* The keys are not terminated: the two digits are read by hand
         * (sscanf would look for the end of the string past the table). */
        int hi = len == 6 && k[0] == '<' && k[1] == '0' && k[2] == 'x' ? hex_digit(k[3]) : -1;
        int lo = hi >= 0 ? hex_digit(k[4]) : -1;
        if (lo >= 0 && t->byte_tok[hi * 16 + lo] == i)
            byte = hi * 16 + lo;
        if (byte >= 0) {
            t->piece[at++] = (char)byte;
            continue;
        }
        for (uint32_t j = 0; j < len; j++) {
            if (!tok_as_written(t->type[i]) && j + 2 < len &&
                memcmp(k + j, "\xe2\x96\x81", 3) == 0) {
                t->piece[at++] = ' ';
                j += 2;
            } else {
                t->piece[at++] = k[j];
            }
        }
    }
    t->piece_off[t->n] = at;
}

static int cmp_special(const void *pa, const void *pb)
{
    const uint32_t *a = pa, *b = pb; /* (length, id) */
    if (a[0] != b[0])
        return a[0] > b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* Special tokens, longest first (ties by id: llama.cpp's sort leaves their
 * order to its library), the order llama.cpp looks for them in, which
 * tok_special_split keeps. */
static int build_specials(struct tokenizer *t, struct err *e)
{
    int n = 0;
    for (int i = 0; i < t->n; i++)
        n += tok_as_written(t->type[i]) && t->piece_off[i + 1] > t->piece_off[i];
    uint32_t *pairs = malloc(2 * (size_t)(n ? n : 1) * sizeof *pairs);
    t->special = malloc((size_t)(n ? n : 1) * sizeof *t->special);
    if (!pairs || !t->special) {
        free(pairs);
        return err_set(e, ERR_SYSTEM, "out of memory for %d special tokens", n);
    }
    int k = 0;
    for (int i = 0; i < t->n; i++)
        if (tok_as_written(t->type[i]) && t->piece_off[i + 1] > t->piece_off[i]) {
            pairs[2 * k] = t->piece_off[i + 1] - t->piece_off[i];
            pairs[2 * k + 1] = (uint32_t)i;
            k++;
        }
    qsort(pairs, (size_t)n, 2 * sizeof *pairs, cmp_special);
    for (int i = 0; i < n; i++)
        t->special[i] = (int)pairs[2 * i + 1];
    t->n_special = n;
    free(pairs);
    return 0;
}

static int check_id(int id, const char *what, int n, const char *path, struct err *e)
{
    if (id < -1 || id >= n)
        return err_set(e, ERR_USAGE, "%s: the %s id %d is outside the vocabulary of %d tokens",
                       path, what, id, n);
    return 0;
}

static int check_spec(const struct tok_spec *s, const char *path, struct err *e)
{
    if (s->kind != TOK_BPE && s->kind != TOK_SPM && s->kind != TOK_GEMMA4)
        return err_set(e, ERR_USAGE, "%s: unknown tokenizer kind %d", path, (int)s->kind);
    if (s->n <= 0 || s->n > TOK_MAX_TOKENS || !s->text)
        return err_set(e, ERR_USAGE, "%s: a vocabulary of %d tokens (1 to %d)", path, s->n,
                       TOK_MAX_TOKENS);
    if (check_id(s->bos, "BOS", s->n, path, e) < 0 || check_id(s->eos, "EOS", s->n, path, e) < 0 ||
        check_id(s->eot, "EOT", s->n, path, e) < 0 || check_id(s->unk, "UNK", s->n, path, e) < 0 ||
        check_id(s->pad, "padding", s->n, path, e) < 0)
        return -1;
    for (int i = 0; s->extra && i < TOKX_N; i++)
        if (check_id(s->extra[i], "EOM or fill-in-the-middle", s->n, path, e) < 0)
            return -1;
    return 0;
}

int tokenizer_check_pre(enum tok_kind kind, const struct tok_str *pre, const char *path,
                        struct err *e)
{
    if (kind == TOK_BPE && bpe_pre_find(pre) < 0)
        return bpe_pre_refuse(pre, path, e);
    return 0;
}

/* The spec's ids and flags, add_bos resolved (tokenizer.h). */
static void take_ids(struct tokenizer *t, const struct tok_spec *s, int pre)
{
    t->kind = s->kind;
    t->n = s->n;
    t->bos = s->bos;
    t->eos = s->eos;
    t->eot = s->eot;
    t->unk = s->unk;
    t->add_bos = s->add_bos;
    if (t->add_bos < 0)
        t->add_bos = (s->kind == TOK_SPM || bpe_pre_add_bos(pre)) && s->bos >= 0;
    if (s->kind == TOK_GEMMA4 && !t->add_bos) /* llama.cpp makes Gemma 4's false true */
        t->add_bos = s->bos >= 0;
    t->add_space_prefix = s->add_space_prefix;
}

struct tokenizer *tokenizer_new(const struct tok_spec *s, const char *path, struct err *e)
{
    if (tokenizer_check_pre(s->kind, &s->pre, path, e) < 0 || check_spec(s, path, e) < 0)
        return NULL;
    struct tokenizer *t = calloc(1, sizeof *t);
    if (!t) {
        err_set(e, ERR_SYSTEM, "out of memory");
        return NULL;
    }
    int pre = s->kind == TOK_BPE ? bpe_pre_find(&s->pre) : -1;
    take_ids(t, s, pre);
    if (copy_types(t, s, path, e) < 0 || tok_attr_apply(t, s, e) < 0 ||
        build_keys(t, s, path, e) < 0 || build_table(t, path, e) < 0 || build_bytes(t, path, e) < 0)
        goto fail;
    if (t->kind != TOK_BPE)
        build_pieces(t); /* the special tokens are found by their pieces */
    if (build_specials(t, e) < 0 || tok_special_build(t, e) < 0 ||
        (t->kind != TOK_SPM && bpe_build(t, s, pre, path, e) < 0))
        goto fail;
    return t;
fail:
    tokenizer_free(t);
    return NULL;
}

void tokenizer_free(struct tokenizer *t)
{
    if (!t)
        return;
    bpe_free(t->bpe);
    free(t->key);
    free(t->key_off);
    free(t->piece);
    free(t->piece_off);
    free(t->type);
    free(t->score);
    free(t->slot);
    free(t->special);
    tok_special_free(t->sp);
    free(t->eog);
    free(t);
}

int tok_seg_add(struct tok_segs *v, size_t off, size_t len, int id, struct err *e)
{
    if (len == 0)
        return 0;
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        struct tok_seg *s = realloc(v->s, cap * sizeof *s);
        if (!s)
            return err_set(e, ERR_SYSTEM, "out of memory for %zu parts of the text", cap);
        v->s = s;
        v->cap = cap;
    }
    v->s[v->n++] = (struct tok_seg){ off, len, id };
    return 0;
}

static int encode_all(const struct tokenizer *t, const char *text, size_t len, int add_bos,
                      int special, struct tok_out *o, struct err *e)
{
    if (add_bos && t->bos < 0)
        return err_set(e, ERR_USAGE, "the model has no BOS token to put first");
    if (add_bos && tok_push(o, t->bos, e) < 0)
        return -1;
    struct tok_segs v = { 0 };
    int rc = tok_special_split(t, text, len, special, &v, NULL, e);
    int prev_special = 1; /* SentencePiece's space goes first, and after each special token */
    for (size_t i = 0; rc == 0 && i < v.n; i++) {
        const struct tok_seg *g = &v.s[i];
        if (g->id >= 0)
            rc = tok_push(o, g->id, e);
        else if (t->kind == TOK_BPE)
            rc = bpe_encode(t, text + g->off, g->len, o, e);
        else if (t->kind == TOK_GEMMA4)
            rc = gemma4_encode(t, text + g->off, g->len, o, e);
        else
            rc = spm_encode(t, text + g->off, g->len, t->add_space_prefix && prev_special, o, e);
        prev_special = g->id >= 0;
    }
    free(v.s);
    return rc;
}

int tokenizer_encode(const struct tokenizer *t, const char *text, size_t len, int add_bos,
                     int special, int *ids, int max, int *n, struct err *e)
{
    *n = 0;
    if (len > TOK_MAX_TEXT)
        return err_set(e, ERR_USAGE, "a text of %zu bytes is longer than the %d a prompt may have",
                       len, TOK_MAX_TEXT);
    struct tok_out o = { 0 };
    if (encode_all(t, text, len, add_bos, special, &o, e) < 0) {
        free(o.ids);
        return -1;
    }
    if (o.n > (size_t)(max > 0 ? max : 0)) {
        free(o.ids);
        return err_set(e, ERR_USAGE, "the text is %zu tokens, more than the %d there is room for",
                       o.n, max);
    }
    if (o.n)
        memcpy(ids, o.ids, o.n * sizeof *ids);
    *n = (int)o.n;
    free(o.ids);
    return 0;
}

size_t tokenizer_piece(const struct tokenizer *t, int id, char *buf, size_t n)
{
    if (id < 0 || id >= t->n)
        return 0;
    size_t len = t->piece_off[id + 1] - t->piece_off[id];
    if (n)
        memcpy(buf, t->piece + t->piece_off[id], len < n ? len : n);
    return len;
}

int tokenizer_count(const struct tokenizer *t)
{
    return t->n;
}

int tokenizer_type(const struct tokenizer *t, int id)
{
    return id >= 0 && id < t->n ? t->type[id] : TOKT_UNDEFINED;
}

int tokenizer_bos(const struct tokenizer *t)
{
    return t->bos;
}

int tokenizer_add_bos(const struct tokenizer *t)
{
    return t->add_bos;
}

int tokenizer_eog(const struct tokenizer *t, int *ids, int max)
{
    for (int i = 0; i < t->n_eog && i < max; i++)
        ids[i] = t->eog[i];
    return t->n_eog;
}
