/* grammar_json.c - a small JSON reader for the schema front end (RFC 8259:
 * objects, arrays, strings with every escape, numbers by the spec's
 * grammar, true, false, null). Errors name the byte, counted from 1:
 * "json-schema at byte 17: expected : after the member name". Nesting is
 * bounded by GRAMMAR_MAX_NEST, so a hostile text cannot exhaust the stack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grammar_int.h"

struct jp {
    const char *s;
    size_t n, i;
    int depth;
    struct err *e;
};

static int peek(const struct jp *p)
{
    return p->i < p->n ? (unsigned char)p->s[p->i] : -1;
}

static int fail(struct jp *p, size_t at, const char *what)
{
    return err_set(p->e, ERR_USAGE, "json-schema at byte %zu: %s", at + 1, what);
}

static int oom(struct jp *p)
{
    return err_set(p->e, ERR_SYSTEM, "json-schema: out of memory");
}

static void ws(struct jp *p)
{
    while (peek(p) == ' ' || peek(p) == '\t' || peek(p) == '\n' || peek(p) == '\r')
        p->i++;
}

/* Frees what v holds (v itself belongs to its parent's array). */
static void jclear(struct jval *v)
{
    for (int k = 0; k < v->n; k++) {
        jclear(&v->kid[k]);
        if (v->key)
            free(v->key[k]);
    }
    free(v->s);
    free(v->key);
    free(v->klen);
    free(v->kid);
}

void json_free(struct jval *v)
{
    if (v) {
        jclear(v);
        free(v);
    }
}

const struct jval *json_get(const struct jval *obj, const char *key)
{
    if (!obj || obj->type != J_OBJ)
        return NULL;
    for (int k = 0; k < obj->n; k++)
        if (obj->klen[k] == strlen(key) && memcmp(obj->key[k], key, obj->klen[k]) == 0)
            return &obj->kid[k];
    return NULL;
}

struct buf {
    char *p;
    size_t n, cap;
};

static int put(struct buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = 2 * (b->n + n) + 16;
        char *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

static int hex4(struct jp *p, uint32_t *v)
{
    *v = 0;
    for (int k = 0; k < 4; k++, p->i++) {
        int c = peek(p), d = c >= '0' && c <= '9'                     ? c - '0'
                             : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                                      : -1;
        if (d < 0)
            return fail(p, p->i, "expected 4 hex digits after \\u");
        *v = *v * 16 + (uint32_t)d;
    }
    return 0;
}

static int put_cp(struct buf *b, uint32_t c)
{
    char u[4];
    int n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (n == 1) {
        u[0] = (char)c;
    } else {
        for (int i = n - 1; i > 0; i--, c >>= 6)
            u[i] = (char)(0x80 | (c & 0x3F));
        u[0] = (char)((0xF00u >> n) | c);
    }
    return put(b, u, (size_t)n);
}

/* \uXXXX, with a surrogate pair's second half. */
static int unicode(struct jp *p, struct buf *b)
{
    size_t at = p->i - 2;
    uint32_t c, lo;
    if (hex4(p, &c) < 0)
        return -1;
    if (c >= 0xD800 && c <= 0xDBFF) {
        if (peek(p) != '\\' || p->i + 1 >= p->n || p->s[p->i + 1] != 'u')
            return fail(p, at, "a lone surrogate in \\u");
        p->i += 2;
        if (hex4(p, &lo) < 0)
            return -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail(p, at, "a lone surrogate in \\u");
        c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
    } else if (c >= 0xDC00 && c <= 0xDFFF) {
        return fail(p, at, "a lone surrogate in \\u");
    }
    return put_cp(b, c) < 0 ? oom(p) : 0;
}

/* A string after its opening quote, decoded into b. */
static int string(struct jp *p, struct buf *b)
{
    size_t open = p->i - 1;
    for (;;) {
        int c = peek(p);
        if (c < 0)
            return fail(p, open, "unterminated string");
        p->i++;
        if (c == '"')
            return put(b, "", 0) < 0 ? oom(p) : 0;
        if (c < 0x20)
            return fail(p, p->i - 1, "a control character in a string");
        if (c != '\\') {
            char ch = (char)c;
            if (put(b, &ch, 1) < 0)
                return oom(p);
            continue;
        }
        int e = peek(p);
        p->i++;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *q = e > 0 ? strchr(from, e) : NULL;
        if (e == 'u') {
            if (unicode(p, b) < 0)
                return -1;
        } else if (q) {
            if (put(b, to + (q - from), 1) < 0)
                return oom(p);
        } else {
            return fail(p, p->i - 2, "unknown escape in a string");
        }
    }
}

static int digits(struct jp *p)
{
    size_t at = p->i;
    while (peek(p) >= '0' && peek(p) <= '9')
        p->i++;
    return p->i > at;
}

/* A number by RFC 8259's grammar; its text is kept. */
static int number(struct jp *p, struct jval *v)
{
    size_t at = p->i;
    if (peek(p) == '-')
        p->i++;
    if (peek(p) == '0')
        p->i++;
    else if (!digits(p))
        return fail(p, at, "expected a value");
    if (peek(p) == '.') {
        p->i++;
        if (!digits(p))
            return fail(p, p->i, "expected a digit after the decimal point");
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        p->i++;
        if (peek(p) == '+' || peek(p) == '-')
            p->i++;
        if (!digits(p))
            return fail(p, p->i, "expected a digit in the exponent");
    }
    v->type = J_NUM;
    v->slen = p->i - at;
    v->s = malloc(v->slen + 1);
    if (!v->s)
        return oom(p);
    memcpy(v->s, p->s + at, v->slen);
    v->s[v->slen] = '\0';
    return 0;
}

static int value(struct jp *p, struct jval *v);

static int add_kid(struct jp *p, struct jval *v, int with_key)
{
    if ((v->n & (v->n - 1)) == 0) { /* at 0, 1, 2, 4...: double */
        size_t cap = v->n ? 2 * (size_t)v->n : 1;
        struct jval *k = realloc(v->kid, cap * sizeof *k);
        if (k)
            v->kid = k;
        char **key = k && with_key ? realloc(v->key, cap * sizeof *key) : NULL;
        if (key)
            v->key = key;
        size_t *kl = key ? realloc(v->klen, cap * sizeof *kl) : NULL;
        if (kl)
            v->klen = kl;
        if (!k || (with_key && !kl))
            return oom(p);
    }
    memset(&v->kid[v->n], 0, sizeof v->kid[0]);
    if (with_key)
        v->key[v->n] = NULL;
    v->n++;
    return 0;
}

static int members(struct jp *p, struct jval *v, int obj)
{
    int close = obj ? '}' : ']';
    ws(p);
    if (peek(p) == close) {
        p->i++;
        return 0;
    }
    for (;;) {
        if (add_kid(p, v, obj) < 0)
            return -1;
        if (obj) {
            struct buf k = { 0 };
            if (peek(p) != '"')
                return fail(p, p->i, "expected a member name in quotes");
            p->i++;
            int rc = string(p, &k);
            v->key[v->n - 1] = k.p;
            v->klen[v->n - 1] = k.n;
            if (rc < 0)
                return -1;
            ws(p);
            if (peek(p) != ':')
                return fail(p, p->i, "expected : after the member name");
            p->i++;
        }
        if (value(p, &v->kid[v->n - 1]) < 0)
            return -1;
        ws(p);
        if (peek(p) == close) {
            p->i++;
            return 0;
        }
        if (peek(p) != ',')
            return fail(p, p->i,
                        obj ? "expected , or } in the object" : "expected , or ] in the array");
        p->i++;
        ws(p);
    }
}

static int value(struct jp *p, struct jval *v)
{
    ws(p);
    v->at = p->i;
    int c = peek(p);
    if (c == '{' || c == '[') {
        if (++p->depth > GRAMMAR_MAX_NEST)
            return fail(p, p->i, "nested deeper than 64");
        p->i++;
        v->type = c == '{' ? J_OBJ : J_ARR;
        int rc = members(p, v, c == '{');
        p->depth--;
        return rc;
    }
    if (c == '"') {
        struct buf b = { 0 };
        p->i++;
        int rc = string(p, &b);
        v->type = J_STR;
        v->s = b.p;
        v->slen = b.n;
        return rc;
    }
    static const char *const WORD[] = { "null", "false", "true" };
    for (int k = 0; k < 3; k++) {
        size_t n = strlen(WORD[k]);
        if (p->n - p->i >= n && memcmp(p->s + p->i, WORD[k], n) == 0) {
            p->i += n;
            v->type = k == 0 ? J_NULL : J_BOOL;
            v->b = k == 2;
            return 0;
        }
    }
    return number(p, v);
}

int json_parse(const char *text, size_t len, struct jval **out, struct err *e)
{
    struct jp p = { text, len, 0, 0, e };
    struct jval *v = calloc(1, sizeof *v);
    *out = NULL;
    if (!v)
        return oom(&p);
    if (value(&p, v) < 0) {
        json_free(v);
        return -1;
    }
    ws(&p);
    if (p.i < p.n) {
        json_free(v);
        return fail(&p, p.i, "text after the schema's end");
    }
    *out = v;
    return 0;
}
