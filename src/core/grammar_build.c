/* grammar_build.c - the builder every front end fills, and its checks: the
 * rules, the byte sets, llama.cpp's rewrite of repetitions, classes of code
 * points as UTF-8 byte sequences, then the compiled grammar. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grammar_int.h"

int gb_init(struct gbuild *b, int kind, const char *text, size_t len, struct err *e)
{
    memset(b, 0, sizeof *b);
    b->kind = kind;
    b->text = text;
    b->len = len;
    b->e = e;
    b->scap = 512;
    b->sets = calloc((size_t)b->scap, sizeof *b->sets);
    if (!b->sets)
        return err_set(e, ERR_SYSTEM, "grammar: out of memory");
    /* Sets 0..255: the single bytes, so that a literal needs no new set. */
    for (int c = 0; c < 256; c++)
        b->sets[c][c >> 3] = (unsigned char)(1u << (c & 7));
    b->nsets = 256;
    return 0;
}

void gb_free(struct gbuild *b)
{
    for (int i = 0; i < b->nr; i++) {
        free(b->r[i].name);
        free(b->r[i].el);
    }
    free(b->r);
    free(b->sets);
    memset(b, 0, sizeof *b);
}

/* The place at byte offset at, in the front end's words. */
static void where(const struct gbuild *b, size_t at, char *buf, size_t cap)
{
    if (b->kind == GB_GBNF || b->kind == GB_SCHEMA) {
        long line = 1, col = 1;
        for (size_t i = 0; i < at && i < b->len; i++) {
            if (b->text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        snprintf(buf, cap, "%s line %ld, column %ld",
                 b->kind == GB_GBNF ? "grammar" : "json-schema (its grammar)", line, col);
    } else if (b->kind == GB_REGEX) {
        snprintf(buf, cap, "regex at byte %zu", at + 1);
    } else {
        snprintf(buf, cap, "choice %zu", at + 1);
    }
}

int gb_fail(struct gbuild *b, size_t at, const char *fmt, ...)
{
    char place[96], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    where(b, at, place, sizeof place);
    return err_set(b->e, ERR_USAGE, "%s: %s", place, msg);
}

const char *gb_kind_name(const struct gbuild *b)
{
    static const char *const NAME[] = { "grammar", "regex", "choices", "json-schema" };
    return NAME[b->kind];
}

static int oom(struct gbuild *b)
{
    return err_set(b->e, ERR_SYSTEM, "%s: out of memory", gb_kind_name(b));
}

static int new_rule(struct gbuild *b, const char *name, size_t n, int generated, size_t at)
{
    if (b->nr == b->rcap) {
        int cap = b->rcap ? 2 * b->rcap : 16;
        struct gb_rule *r = realloc(b->r, (size_t)cap * sizeof *r);
        if (!r)
            return oom(b);
        b->r = r;
        b->rcap = cap;
    }
    struct gb_rule *r = &b->r[b->nr];
    memset(r, 0, sizeof *r);
    r->name = malloc(n + 1);
    if (!r->name)
        return oom(b);
    memcpy(r->name, name, n);
    r->name[n] = '\0';
    r->generated = generated;
    r->def_at = at;
    r->ref_at = at;
    return b->nr++;
}

int gb_rule(struct gbuild *b, const char *name, size_t n, size_t at)
{
    for (int i = 0; i < b->nr; i++)
        if (!b->r[i].generated && strlen(b->r[i].name) == n && memcmp(b->r[i].name, name, n) == 0)
            return i;
    return new_rule(b, name, n, 0, at);
}

int gb_gen(struct gbuild *b, int parent, size_t at)
{
    /* The parent's name: the screen names the rule the user wrote. */
    const char *name = b->r[parent].name;
    int r = new_rule(b, name, strlen(name), 1, at);
    if (r >= 0)
        b->r[r].defined = 1;
    return r;
}

int gb_push(struct gbuild *b, int rule, int type, int value)
{
    struct gb_rule *r = &b->r[rule];
    if (b->nelems >= GRAMMAR_MAX_ELEMS)
        return err_set(b->e, ERR_USAGE, "%s: more than %d elements (too large)", gb_kind_name(b),
                       GRAMMAR_MAX_ELEMS);
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 8;
        struct gelem *el = realloc(r->el, (size_t)cap * sizeof *el);
        if (!el)
            return oom(b);
        r->el = el;
        r->cap = cap;
    }
    r->el[r->n++] = (struct gelem){ type, value };
    b->nelems++;
    return 0;
}

int gb_set_new(struct gbuild *b)
{
    if (b->nsets == b->scap) {
        int cap = 2 * b->scap;
        unsigned char(*s)[32] = realloc(b->sets, (size_t)cap * sizeof *s);
        if (!s)
            return oom(b);
        b->sets = s;
        b->scap = cap;
    }
    memset(b->sets[b->nsets], 0, 32);
    return b->nsets++;
}

/* llama.cpp's rewrite (parse_sequence's handle_repetitions):
 *   S{m,n} -> S ... S (m times) S'(n-m), S'(x) ::= S S'(x-1) | , S'(1) ::= S |
 *   S{m,}  -> S ... S (m times) S',      S' ::= S S' | */
int gb_repeat(struct gbuild *b, int rule, int start, long min, long max, size_t at)
{
    struct gb_rule *r = &b->r[rule];
    int len = r->n - start;
    if (len <= 0)
        return gb_fail(b, at, "nothing before the repetition");
    if (min > GRAMMAR_MAX_REPEAT || max > GRAMMAR_MAX_REPEAT)
        return gb_fail(b, at, "a repetition count over %d", GRAMMAR_MAX_REPEAT);
    if (max >= 0 && max < min)
        return gb_fail(b, at, "a repetition {%ld,%ld} whose maximum is below its minimum", min,
                       max);
    /* llama.cpp's MAX_REPETITION_THRESHOLD: the rules inside a repeated
     * group times its copies. Past it, nested repetitions make stack sets
     * of their product's size, each byte a long step. */
    const struct gelem *tail = &r->el[r->n - 1];
    long inner =
        len == 1 && tail->type == GE_REF && b->r[tail->value].generated ? b->nr - tail->value : 1;
    long copies = max > 0 ? max : min > 0 ? min : 1;
    if (inner * copies > GRAMMAR_MAX_PRODUCT)
        return gb_fail(b, at, "a repetition of %ld rules %ld times: over %d in all", inner, copies,
                       GRAMMAR_MAX_PRODUCT);
    struct gelem *item = malloc((size_t)len * sizeof *item);
    if (!item)
        return oom(b);
    memcpy(item, r->el + start, (size_t)len * sizeof *item);
    int rc = 0;
    if (min == 0) {
        b->nelems -= len;
        b->r[rule].n = start;
    }
    for (long i = 1; i < min && rc == 0; i++)
        for (int k = 0; k < len && rc == 0; k++)
            rc = gb_push(b, rule, item[k].type, item[k].value);
    long n_opt = max < 0 ? 1 : max - min;
    int last = -1;
    for (long i = 0; i < n_opt && rc == 0; i++) {
        int g = gb_gen(b, rule, at);
        if (g < 0) {
            rc = -1;
            break;
        }
        for (int k = 0; k < len && rc == 0; k++)
            rc = gb_push(b, g, item[k].type, item[k].value);
        if (rc == 0 && (i > 0 || max < 0))
            rc = gb_push(b, g, GE_REF, max < 0 ? g : last);
        if (rc == 0)
            rc = gb_push(b, g, GE_ALT, 0);
        last = g;
    }
    if (rc == 0 && n_opt > 0)
        rc = gb_push(b, rule, GE_REF, last);
    free(item);
    return rc;
}

int gb_codepoint(struct gbuild *b, int rule, uint32_t c)
{
    unsigned char u[4];
    int n;
    if (c < 0x80) {
        u[0] = (unsigned char)c;
        n = 1;
    } else if (c < 0x800) {
        u[0] = (unsigned char)(0xC0 | (c >> 6));
        u[1] = (unsigned char)(0x80 | (c & 0x3F));
        n = 2;
    } else if (c < 0x10000) {
        u[0] = (unsigned char)(0xE0 | (c >> 12));
        u[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        u[2] = (unsigned char)(0x80 | (c & 0x3F));
        n = 3;
    } else {
        u[0] = (unsigned char)(0xF0 | (c >> 18));
        u[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
        u[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        u[3] = (unsigned char)(0x80 | (c & 0x3F));
        n = 4;
    }
    for (int i = 0; i < n; i++)
        if (gb_push(b, rule, GE_SET, u[i]) < 0)
            return -1;
    return 0;
}

static int cp_len(uint32_t c)
{
    return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
}

static void cp_bytes(uint32_t c, unsigned char *u)
{
    int n = cp_len(c);
    if (n == 1) {
        u[0] = (unsigned char)c;
        return;
    }
    for (int i = n - 1; i > 0; i--, c >>= 6)
        u[i] = (unsigned char)(0x80 | (c & 0x3F));
    u[0] = (unsigned char)((0xF00u >> n) | c);
}

/* One alternative of rule g: the byte ranges of code points lo..hi, split
 * until every byte position is one range (as Russ Cox's utf8 ranges, used
 * by RE2 and Rust's regex). lo >= 0x80, no surrogate inside. */
static int utf8_seq(struct gbuild *b, int g, uint32_t lo, uint32_t hi)
{
    static const uint32_t EDGE[] = { 0x7FF, 0xFFFF };
    for (int k = 0; k < 2; k++)
        if (lo <= EDGE[k] && hi > EDGE[k])
            return utf8_seq(b, g, lo, EDGE[k]) < 0 ? -1 : utf8_seq(b, g, EDGE[k] + 1, hi);
    int n = cp_len(lo);
    for (int i = 1; i < n; i++) {
        uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if ((lo & m) != 0)
                return utf8_seq(b, g, lo, lo | m) < 0 ? -1 : utf8_seq(b, g, (lo | m) + 1, hi);
            if ((hi & m) != m)
                return utf8_seq(b, g, lo, (hi & ~m) - 1) < 0 ? -1 : utf8_seq(b, g, hi & ~m, hi);
        }
    }
    unsigned char a[4], z[4];
    cp_bytes(lo, a);
    cp_bytes(hi, z);
    if (b->r[g].n > 0 && gb_push(b, g, GE_ALT, 0) < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        int s = a[i];
        if (a[i] != z[i]) {
            if ((s = gb_set_new(b)) < 0)
                return -1;
            for (int c = a[i]; c <= z[i]; c++)
                b->sets[s][c >> 3] |= (unsigned char)(1u << (c & 7));
        }
        if (gb_push(b, g, GE_SET, s) < 0)
            return -1;
    }
    return 0;
}

static int cmp_range(const void *x, const void *y)
{
    const uint32_t *a = x, *c = y;
    return (a[0] > c[0]) - (a[0] < c[0]);
}

/* The ranges sorted, merged, complemented when negate, without surrogates:
 * into out (pairs), returns how many. out and tmp have room for n + 3
 * pairs each. */
static int class_ranges(const uint32_t *lo, const uint32_t *hi, int n, int negate, uint32_t *out,
                        uint32_t *tmp)
{
    uint32_t *p = out; /* merged first in out, then complemented into tmp */
    int m = 0;
    for (int i = 0; i < n; i++) {
        p[2 * m] = lo[i];
        p[2 * m + 1] = hi[i] > 0x10FFFF ? 0x10FFFF : hi[i];
        if (p[2 * m] <= p[2 * m + 1])
            m++;
    }
    qsort(p, (size_t)m, 2 * sizeof *p, cmp_range);
    int k = 0;
    for (int i = 0; i < m; i++) {
        if (k > 0 && p[2 * i] <= p[2 * (k - 1) + 1] + 1) {
            if (p[2 * i + 1] > p[2 * (k - 1) + 1])
                p[2 * (k - 1) + 1] = p[2 * i + 1];
        } else {
            p[2 * k] = p[2 * i];
            p[2 * k + 1] = p[2 * i + 1];
            k++;
        }
    }
    int r = 0;
    uint32_t next = 0;
    for (int i = 0; i <= k; i++) {
        uint32_t a = i < k ? p[2 * i] : 0x110000, z = i < k ? p[2 * i + 1] : 0;
        if (negate && a > next) {
            tmp[2 * r] = next;
            tmp[2 * r + 1] = a - 1;
            r++;
        }
        if (!negate && i < k) {
            tmp[2 * r] = a;
            tmp[2 * r + 1] = z;
            r++;
        }
        next = z + 1;
    }
    /* Cut out the surrogates, which UTF-8 does not encode. */
    int w = 0;
    for (int i = 0; i < r; i++) {
        uint32_t a = tmp[2 * i], z = tmp[2 * i + 1];
        if (a < 0xD800 && z > 0xDFFF) {
            out[2 * w] = a, out[2 * w + 1] = 0xD7FF, w++;
            out[2 * w] = 0xE000, out[2 * w + 1] = z, w++;
            continue;
        }
        if (a >= 0xD800 && a <= 0xDFFF)
            a = 0xE000;
        if (z >= 0xD800 && z <= 0xDFFF)
            z = 0xD7FF;
        if (a <= z)
            out[2 * w] = a, out[2 * w + 1] = z, w++;
    }
    return w;
}

int gb_class(struct gbuild *b, int rule, const uint32_t *lo, const uint32_t *hi, int n, int negate,
             size_t at)
{
    uint32_t *rg = malloc((size_t)(n + 3) * 4 * sizeof *rg);
    if (!rg)
        return oom(b);
    int nr = class_ranges(lo, hi, n, negate, rg, rg + 2 * (n + 3));
    int ascii = gb_set_new(b), wide = 0, rc = 0;
    if (ascii < 0) {
        free(rg);
        return -1;
    }
    for (int i = 0; i < nr; i++) {
        for (uint32_t c = rg[2 * i]; c <= rg[2 * i + 1] && c < 0x80; c++)
            b->sets[ascii][c >> 3] |= (unsigned char)(1u << (c & 7));
        wide |= rg[2 * i + 1] >= 0x80;
    }
    if (!wide) {
        free(rg);
        return gb_push(b, rule, GE_SET, ascii);
    }
    /* Non-ASCII code points: a rule of their byte sequences, beside the
     * ASCII set as its first alternative. */
    int g = gb_gen(b, rule, at);
    if (g < 0) {
        free(rg);
        return -1;
    }
    static const unsigned char NONE[32];
    if (memcmp(b->sets[ascii], NONE, 32) != 0)
        rc = gb_push(b, g, GE_SET, ascii);
    for (int i = 0; i < nr && rc == 0; i++)
        if (rg[2 * i + 1] >= 0x80)
            rc = utf8_seq(b, g, rg[2 * i] < 0x80 ? 0x80 : rg[2 * i], rg[2 * i + 1]);
    free(rg);
    return rc < 0 ? -1 : gb_push(b, rule, GE_REF, g);
}
