/* grammar_regex.c - two front ends that need no grammar text: a regular
 * expression, and a list of choices.
 *
 * The regex subset (doc/grammar.md): literals (UTF-8 text is its bytes), `.`
 * (any character but \n), classes [...] and [^...] with ranges, the
 * shorthands \d \w \s \D \W \S (ASCII, as JavaScript's), escapes \n \t \r \f
 * \v \0 \xNN \uNNNN and \ before any punctuation, groups ( ) and (?: ),
 * alternation |, repetition * + ? {m} {m,} {m,n}. Anchored at both ends: the
 * whole output matches; ^ first and $ last are allowed. Left out: lazy and
 * possessive quantifiers, backreferences, lookaround, \b, named groups;
 * each is refused with its place. */
#include <stdlib.h>
#include <string.h>

#include "core/grammar_int.h"

struct rx {
    struct gbuild b;
    const char *s;
    size_t n, i;
    int depth;
    uint32_t *lo, *hi; /* the ranges of the class being read */
    int nr, cap;
};

static int peek(const struct rx *p, size_t k)
{
    return p->i + k < p->n ? (unsigned char)p->s[p->i + k] : -1;
}

static int add_range(struct rx *p, uint32_t a, uint32_t z)
{
    if (p->nr == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        uint32_t *lo = realloc(p->lo, (size_t)cap * sizeof *lo);
        if (lo)
            p->lo = lo;
        uint32_t *hi = lo ? realloc(p->hi, (size_t)cap * sizeof *hi) : NULL;
        if (!hi)
            return err_set(p->b.e, ERR_SYSTEM, "regex: out of memory");
        p->hi = hi;
        p->cap = cap;
    }
    p->lo[p->nr] = a;
    p->hi[p->nr++] = z;
    return 0;
}

/* The ranges of a shorthand (d, w, s; upper case: all but them). */
static int shorthand(struct rx *p, int c)
{
    static const uint32_t D[] = { '0', '9' };
    static const uint32_t W[] = { '0', '9', 'A', 'Z', '_', '_', 'a', 'z' };
    static const uint32_t S[] = { '\t', '\r', ' ', ' ' };
    int low = c | 0x20;
    const uint32_t *r = low == 'd' ? D : low == 'w' ? W : S;
    int n = low == 'd' ? 1 : low == 'w' ? 4 : 2;
    uint32_t next = 0;
    for (int k = 0; k < n; k++) {
        if (c == low && add_range(p, r[2 * k], r[2 * k + 1]) < 0)
            return -1;
        if (c != low && r[2 * k] > next && add_range(p, next, r[2 * k] - 1) < 0)
            return -1;
        next = r[2 * k + 1] + 1;
    }
    return c != low ? add_range(p, next, 0x10FFFF) : 0;
}

static int hexdigits(struct rx *p, int n, uint32_t *out)
{
    uint32_t v = 0;
    for (int k = 0; k < n; k++, p->i++) {
        int c = peek(p, 0);
        int d = c >= '0' && c <= '9'                     ? c - '0'
                : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
                                                         : -1;
        if (d < 0)
            return gb_fail(&p->b, p->i, "expected %d hex digits", n);
        v = v * 16 + (uint32_t)d;
    }
    *out = v;
    return 0;
}

/* An escape after its backslash: a code point into *c (returns 0), or a
 * shorthand's ranges added to the class (returns 1). */
static int escape(struct rx *p, uint32_t *c)
{
    size_t at = p->i - 1;
    int e = peek(p, 0);
    p->i++;
    static const char SIMPLE[][2] = { { 'n', '\n' }, { 't', '\t' }, { 'r', '\r' },
                                      { 'f', '\f' }, { 'v', '\v' }, { '0', '\0' } };
    for (size_t k = 0; k < sizeof SIMPLE / sizeof SIMPLE[0]; k++)
        if (e == SIMPLE[k][0]) {
            *c = (uint32_t)(unsigned char)SIMPLE[k][1];
            return 0;
        }
    if (e == 'x')
        return hexdigits(p, 2, c);
    if (e == 'u')
        return hexdigits(p, 4, c);
    if (e > 0 && strchr("dwsDWS", e))
        return shorthand(p, e) < 0 ? -1 : 1;
    if (e >= 0x21 && e < 0x7F && !((e | 0x20) >= 'a' && (e | 0x20) <= 'z') &&
        !(e >= '0' && e <= '9')) {
        *c = (uint32_t)e;
        return 0;
    }
    if (e < 0)
        return gb_fail(&p->b, at, "a \\ at the end");
    /* The message is one printable line: a control or non-ASCII byte is
     * named by its value. */
    if (e < 0x20 || e >= 0x7F)
        return gb_fail(&p->b, at, "unknown escape \\ and byte 0x%02X", (unsigned)e);
    return gb_fail(&p->b, at, "unknown escape \\%c", e);
}

/* One UTF-8 character (invalid bytes: one byte each, as themselves). */
static uint32_t utf8_char(struct rx *p, int *raw)
{
    int b = peek(p, 0), n = (b & 0xE0) == 0xC0   ? 2
                            : (b & 0xF0) == 0xE0 ? 3
                            : (b & 0xF8) == 0xF0 ? 4
                                                 : 1;
    uint32_t v = n == 1 ? (uint32_t)b : (uint32_t)b & (0x7Fu >> n);
    for (int k = 1; k < n; k++) {
        int x = peek(p, (size_t)k);
        if (x < 0 || (x & 0xC0) != 0x80) {
            n = 1;
            v = (uint32_t)b;
            break;
        }
        v = (v << 6) | (uint32_t)(x & 0x3F);
    }
    *raw = b >= 0x80 && n == 1;
    p->i += (size_t)n;
    return v;
}

static int class_atom(struct rx *p, uint32_t *c)
{
    if (peek(p, 0) < 0)
        return gb_fail(&p->b, p->i, "unterminated class: expected ]");
    if (peek(p, 0) == '\\') {
        p->i++;
        return escape(p, c);
    }
    int raw;
    *c = utf8_char(p, &raw);
    if (raw)
        return gb_fail(&p->b, p->i - 1, "invalid UTF-8 in a class");
    return 0;
}

static int char_class(struct rx *p, int rule)
{
    size_t open = p->i++;
    int negate = peek(p, 0) == '^';
    p->i += (size_t)negate;
    p->nr = 0;
    for (int first = 1; peek(p, 0) != ']' || first; first = 0) {
        uint32_t a, z;
        int k = class_atom(p, &a);
        if (k < 0)
            return -1;
        if (k == 1)
            continue;
        z = a;
        if (peek(p, 0) == '-' && peek(p, 1) != ']' && peek(p, 1) >= 0) {
            p->i++;
            if ((k = class_atom(p, &z)) != 0)
                return k < 0 ? -1 : gb_fail(&p->b, p->i - 2, "a shorthand as a range's end");
            if (z < a)
                return gb_fail(&p->b, p->i - 1, "a range whose end is below its start");
        }
        if (add_range(p, a, z) < 0)
            return -1;
    }
    p->i++;
    return gb_class(&p->b, rule, p->lo, p->hi, p->nr, negate, open);
}

static int alternates(struct rx *p, int rule);

static int group(struct rx *p, int rule)
{
    size_t open = p->i++;
    if (++p->depth > GRAMMAR_MAX_NEST)
        return gb_fail(&p->b, open, "groups nested deeper than %d", GRAMMAR_MAX_NEST);
    if (peek(p, 0) == '?') {
        if (peek(p, 1) != ':')
            return gb_fail(&p->b, p->i, "only (?: ) groups: no lookaround or named groups");
        p->i += 2;
    }
    int g = gb_gen(&p->b, rule, open);
    if (g < 0 || alternates(p, g) < 0)
        return -1;
    if (peek(p, 0) != ')')
        return gb_fail(&p->b, open, "unbalanced (");
    p->i++;
    p->depth--;
    return gb_push(&p->b, rule, GE_REF, g);
}

static long count(struct rx *p)
{
    long v = 0;
    if (peek(p, 0) < '0' || peek(p, 0) > '9')
        return gb_fail(&p->b, p->i, "expected a number in { }");
    for (; peek(p, 0) >= '0' && peek(p, 0) <= '9'; p->i++)
        if ((v = v * 10 + (peek(p, 0) - '0')) > GRAMMAR_MAX_REPEAT)
            return gb_fail(&p->b, p->i, "a repetition count over %d", GRAMMAR_MAX_REPEAT);
    return v;
}

static int quantifier(struct rx *p, int rule, int start)
{
    size_t at = p->i;
    int c = peek(p, 0);
    long min = c == '+', max = c == '?' ? 1 : -1;
    p->i++;
    if (c == '{') {
        if ((min = count(p)) < 0)
            return -1;
        max = min;
        if (peek(p, 0) == ',') {
            p->i++;
            max = -1;
            if (peek(p, 0) != '}' && (max = count(p)) < 0)
                return -1;
        }
        if (peek(p, 0) != '}')
            return gb_fail(&p->b, p->i, "expected } to close the repetition");
        p->i++;
    }
    if (start < 0)
        return gb_fail(&p->b, at, "nothing before %c to repeat", c);
    if (peek(p, 0) == '?' || peek(p, 0) == '+')
        return gb_fail(&p->b, p->i, "lazy and possessive repetitions are not supported");
    return gb_repeat(&p->b, rule, start, min, max, at);
}

/* One atom or quantifier; 1 at the end of a sequence. */
static int atom(struct rx *p, int rule, int *start)
{
    int c = peek(p, 0), here = p->b.r[rule].n, rc = 0;
    if (c < 0 || c == '|' || c == ')')
        return 1;
    if (c == '*' || c == '+' || c == '?' || c == '{')
        return quantifier(p, rule, *start);
    if (c == '(') {
        rc = group(p, rule);
    } else if (c == '[') {
        rc = char_class(p, rule);
    } else if (c == '.') {
        uint32_t lo[] = { 0, '\n' + 1 }, hi[] = { '\n' - 1, 0x10FFFF };
        rc = gb_class(&p->b, rule, lo, hi, 2, 0, p->i++);
    } else if (c == '\\') {
        uint32_t cp;
        size_t at = p->i++;
        p->nr = 0;
        int k = escape(p, &cp);
        rc = k < 0    ? -1
             : k == 1 ? gb_class(&p->b, rule, p->lo, p->hi, p->nr, 0, at)
                      : gb_codepoint(&p->b, rule, cp);
    } else if ((c == '^' && p->i == 0) || (c == '$' && p->i + 1 == p->n)) {
        p->i++;
        return 0; /* the anchors the whole match has anyway */
    } else if (c == '^' || c == '$') {
        return gb_fail(&p->b, p->i, "%c only at the start (^) or the end ($)", c);
    } else {
        int raw;
        size_t at = p->i;
        uint32_t cp = utf8_char(p, &raw);
        for (size_t k = at; k < p->i && rc == 0; k++)
            rc = gb_push(&p->b, rule, GE_SET, (unsigned char)p->s[k]);
        (void)cp;
    }
    if (rc < 0)
        return -1;
    *start = here;
    return 0;
}

static int alternates(struct rx *p, int rule)
{
    for (;;) {
        int start = -1, rc;
        while ((rc = atom(p, rule, &start)) == 0)
            ;
        if (rc < 0)
            return -1;
        if (peek(p, 0) != '|')
            return 0;
        p->i++;
        if (gb_push(&p->b, rule, GE_ALT, 0) < 0)
            return -1;
    }
}

int grammar_from_regex(const char *re, size_t len, struct grammar **out, struct err *e)
{
    struct rx p = { .s = re, .n = len };
    *out = NULL;
    if (gb_init(&p.b, GB_REGEX, re, len, e) < 0)
        return -1;
    int root = gb_rule(&p.b, "root", 4, 0), rc = root < 0 ? -1 : 0;
    if (rc == 0) {
        p.b.r[root].defined = 1;
        rc = alternates(&p, root);
    }
    if (rc == 0 && p.i < p.n)
        rc = gb_fail(&p.b, p.i, "unbalanced )");
    if (rc == 0)
        rc = gb_finish(&p.b, root, out);
    gb_free(&p.b);
    free(p.lo);
    free(p.hi);
    return rc;
}

int grammar_from_choices(const char *const *s, const size_t *len, int n, struct grammar **out,
                         struct err *e)
{
    struct gbuild b;
    *out = NULL;
    if (n < 1)
        return err_set(e, ERR_USAGE, "choices: the list is empty");
    if (gb_init(&b, GB_CHOICES, NULL, 0, e) < 0)
        return -1;
    int root = gb_rule(&b, "root", 4, 0), rc = root < 0 ? -1 : 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (i > 0)
            rc = gb_push(&b, root, GE_ALT, 0);
        for (size_t k = 0; k < len[i] && rc == 0; k++)
            rc = gb_push(&b, root, GE_SET, (unsigned char)s[i][k]);
    }
    if (rc == 0) {
        b.r[root].defined = 1;
        rc = gb_finish(&b, root, out);
    }
    gb_free(&b);
    return rc;
}
