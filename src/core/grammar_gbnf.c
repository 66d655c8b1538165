/* grammar_gbnf.c - GBNF text, llama.cpp's format (grammars/README.md there),
 * read as its llama_grammar_parser reads it: rules "name ::= alternatives"
 * (names of letters, digits and dashes), literals "..." and classes [...]
 * with the escapes \x \u \U \t \r \n \\ \" \[ \] \-, `.`, groups ( ),
 * alternation |, repetition * + ? {m} {m,} {m,n}, comments from # to the
 * end of the line; a rule ends at a newline outside a group. Left out:
 * the token references <...> and !<...> (they name a vocabulary's tokens).
 * Stricter: a rule defined twice is refused (llama.cpp keeps the last). */
#include <stdlib.h>
#include <string.h>

#include "core/grammar_int.h"

struct gp {
    struct gbuild b;
    const char *s;
    size_t n, i;
    int depth;
};

static int peek(const struct gp *p, size_t k)
{
    return p->i + k < p->n ? (unsigned char)p->s[p->i + k] : -1;
}

static int is_word(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

static void space(struct gp *p, int newline_ok)
{
    for (;;) {
        int c = peek(p, 0);
        if (c == '#') {
            while (peek(p, 0) >= 0 && peek(p, 0) != '\n' && peek(p, 0) != '\r')
                p->i++;
        } else if (c == ' ' || c == '\t' || (newline_ok && (c == '\r' || c == '\n'))) {
            p->i++;
        } else {
            return;
        }
    }
}

static int hex(struct gp *p, int digits, uint32_t *out)
{
    uint32_t v = 0;
    for (int k = 0; k < digits; k++) {
        int c = peek(p, 0);
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return gb_fail(&p->b, p->i, "expected %d hex digits", digits);
        v = v * 16 + (uint32_t)d;
        p->i++;
    }
    if (v > 0x10FFFF)
        return gb_fail(&p->b, p->i, "code point U+%X is past U+10FFFF", v);
    *out = v;
    return 0;
}

/* An escape after its backslash: the code point. */
static int escape(struct gp *p, uint32_t *c)
{
    size_t at = p->i - 1;
    int e = peek(p, 0);
    p->i++;
    switch (e) {
    case 'x':
        return hex(p, 2, c);
    case 'u':
        return hex(p, 4, c);
    case 'U':
        return hex(p, 8, c);
    case 't':
        *c = '\t';
        return 0;
    case 'r':
        *c = '\r';
        return 0;
    case 'n':
        *c = '\n';
        return 0;
    case '\\':
    case '"':
    case '[':
    case ']':
    case '-':
        *c = (uint32_t)e;
        return 0;
    default:
        return gb_fail(&p->b, at, "unknown escape");
    }
}

/* One character of a class: an escape or one UTF-8 character. */
static int class_char(struct gp *p, uint32_t *c)
{
    int b = peek(p, 0);
    if (b < 0)
        return gb_fail(&p->b, p->i, "unterminated class: expected ]");
    p->i++;
    if (b == '\\')
        return escape(p, c);
    int n = b < 0x80             ? 1
            : (b & 0xE0) == 0xC0 ? 2
            : (b & 0xF0) == 0xE0 ? 3
            : (b & 0xF8) == 0xF0 ? 4
                                 : 0;
    if (n == 0)
        return gb_fail(&p->b, p->i - 1, "invalid UTF-8 in a class");
    uint32_t v = n == 1 ? (uint32_t)b : (uint32_t)b & (0x7Fu >> n);
    for (int k = 1; k < n; k++) {
        int x = peek(p, 0);
        if (x < 0 || (x & 0xC0) != 0x80)
            return gb_fail(&p->b, p->i, "invalid UTF-8 in a class");
        v = (v << 6) | (uint32_t)(x & 0x3F);
        p->i++;
    }
    *c = v;
    return 0;
}

static int literal(struct gp *p, int rule)
{
    size_t open = p->i++;
    for (;;) {
        int c = peek(p, 0);
        if (c < 0)
            return gb_fail(&p->b, open, "unterminated literal: expected \"");
        p->i++;
        if (c == '"')
            return 0;
        if (c == '\\') {
            uint32_t cp;
            if (escape(p, &cp) < 0 || gb_codepoint(&p->b, rule, cp) < 0)
                return -1;
        } else if (gb_push(&p->b, rule, GE_SET, c) < 0) {
            return -1; /* a raw byte is itself: UTF-8 text is its bytes */
        }
    }
}

static int char_class(struct gp *p, int rule)
{
    size_t open = p->i++;
    int negate = peek(p, 0) == '^';
    p->i += (size_t)negate;
    int n = 0, cap = 16, rc = 0;
    uint32_t *lo = malloc((size_t)cap * sizeof *lo), *hi = malloc((size_t)cap * sizeof *hi);
    while (rc == 0 && lo && hi && peek(p, 0) != ']') {
        uint32_t a, z;
        if ((rc = class_char(p, &a)) < 0)
            break;
        z = a;
        if (peek(p, 0) == '-' && peek(p, 1) != ']' && peek(p, 1) >= 0) {
            p->i++;
            if ((rc = class_char(p, &z)) < 0)
                break;
        }
        if (n == cap) {
            cap *= 2;
            uint32_t *l2 = realloc(lo, (size_t)cap * sizeof *lo);
            lo = l2 ? l2 : lo;
            uint32_t *h2 = l2 ? realloc(hi, (size_t)cap * sizeof *hi) : NULL;
            hi = h2 ? h2 : hi;
            if (!l2 || !h2)
                break;
        }
        lo[n] = a;
        hi[n++] = z;
    }
    if (rc == 0 && (!lo || !hi || peek(p, 0) != ']'))
        rc = err_set(p->b.e, ERR_SYSTEM, "grammar: out of memory");
    if (rc == 0) {
        p->i++;
        rc = gb_class(&p->b, rule, lo, hi, n, negate, open);
    }
    free(lo);
    free(hi);
    return rc;
}

static int alternates(struct gp *p, int rule, int nested);

static long integer(struct gp *p)
{
    long v = 0;
    if (peek(p, 0) < '0' || peek(p, 0) > '9')
        return gb_fail(&p->b, p->i, "expected an integer");
    while (peek(p, 0) >= '0' && peek(p, 0) <= '9') {
        v = v * 10 + (peek(p, 0) - '0');
        if (v > GRAMMAR_MAX_REPEAT)
            return gb_fail(&p->b, p->i, "a repetition count over %d", GRAMMAR_MAX_REPEAT);
        p->i++;
    }
    return v;
}

/* {m}, {m,}, {m,n} after the '{'. */
static int braces(struct gp *p, int rule, int start, int nested)
{
    size_t at = p->i++;
    space(p, nested);
    long min = integer(p), max;
    if (min < 0)
        return -1;
    space(p, nested);
    if (peek(p, 0) == '}') {
        max = min;
    } else if (peek(p, 0) == ',') {
        p->i++;
        space(p, nested);
        max = -1;
        if (peek(p, 0) >= '0' && peek(p, 0) <= '9' && (max = integer(p)) < 0)
            return -1;
        space(p, nested);
        if (peek(p, 0) != '}')
            return gb_fail(&p->b, p->i, "expected } to close the repetition");
    } else {
        return gb_fail(&p->b, p->i, "expected , or } in the repetition");
    }
    p->i++;
    space(p, nested);
    return gb_repeat(&p->b, rule, start, min, max, at);
}

static int group(struct gp *p, int rule)
{
    size_t open = p->i++;
    if (++p->depth > GRAMMAR_MAX_NEST)
        return gb_fail(&p->b, open, "groups nested deeper than %d", GRAMMAR_MAX_NEST);
    space(p, 1);
    int g = gb_gen(&p->b, rule, open);
    if (g < 0 || alternates(p, g, 1) < 0)
        return -1;
    if (peek(p, 0) != ')')
        return gb_fail(&p->b, p->i, "expected ) to close the group opened at byte %zu", open + 1);
    p->i++;
    p->depth--;
    return gb_push(&p->b, rule, GE_REF, g);
}

/* One item, or a repetition of the item before it (start: where that
 * item begins, -1 for none). Returns 1 when nothing here is an item. */
static int item(struct gp *p, int rule, int nested, int *start)
{
    int c = peek(p, 0), here = p->b.r[rule].n, rc;
    if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (*start < 0)
            return gb_fail(&p->b, p->i, "expected an item before %c", c);
        if (c == '{')
            return braces(p, rule, *start, nested);
        size_t at = p->i++;
        space(p, nested);
        return gb_repeat(&p->b, rule, *start, c == '+', c == '?' ? 1 : -1, at);
    }
    if (c == '"') {
        rc = literal(p, rule);
    } else if (c == '[') {
        rc = char_class(p, rule);
    } else if (c == '(') {
        rc = group(p, rule);
    } else if (c == '.') {
        uint32_t lo = 0, hi = 0x10FFFF;
        rc = gb_class(&p->b, rule, &lo, &hi, 1, 0, p->i++);
    } else if (is_word(c)) {
        size_t at = p->i;
        while (is_word(peek(p, 0)))
            p->i++;
        int r = gb_rule(&p->b, p->s + at, p->i - at, at);
        rc = r < 0 ? -1 : gb_push(&p->b, rule, GE_REF, r);
    } else {
        return 1;
    }
    if (rc < 0)
        return -1;
    *start = here;
    space(p, nested);
    return 0;
}

static int alternates(struct gp *p, int rule, int nested)
{
    for (;;) {
        int start = -1, rc;
        while ((rc = item(p, rule, nested, &start)) == 0)
            ;
        if (rc < 0)
            return -1;
        if (peek(p, 0) != '|')
            return 0;
        p->i++;
        space(p, 1);
        if (gb_push(&p->b, rule, GE_ALT, 0) < 0)
            return -1;
    }
}

static int one_rule(struct gp *p)
{
    size_t at = p->i;
    while (is_word(peek(p, 0)))
        p->i++;
    if (p->i == at)
        return gb_fail(&p->b, at, "expected a rule name");
    int r = gb_rule(&p->b, p->s + at, p->i - at, at);
    if (r < 0)
        return -1;
    if (p->b.r[r].defined)
        return gb_fail(&p->b, at, "rule '%s' defined twice", p->b.r[r].name);
    space(p, 0);
    if (peek(p, 0) != ':' || peek(p, 1) != ':' || peek(p, 2) != '=')
        return gb_fail(&p->b, p->i, "expected ::= after the rule name");
    p->i += 3;
    space(p, 1);
    p->b.r[r].def_at = at;
    if (alternates(p, r, 0) < 0)
        return -1;
    p->b.r[r].defined = 1;
    int c = peek(p, 0);
    if (c == '\r' || c == '\n') {
        p->i += (size_t)(c == '\r' && peek(p, 1) == '\n') + 1;
    } else if (c >= 0) {
        return gb_fail(&p->b, p->i, "expected a newline or the end after the rule");
    }
    space(p, 1);
    return 0;
}

int grammar_from_gbnf(const char *text, size_t len, struct grammar **out, struct err *e)
{
    struct gp p = { .s = text, .n = len };
    *out = NULL;
    if (gb_init(&p.b, GB_GBNF, text, len, e) < 0)
        return -1;
    space(&p, 1);
    int rc = 0;
    while (rc == 0 && p.i < p.n)
        rc = one_rule(&p);
    int root = -1;
    for (int r = 0; rc == 0 && r < p.b.nr && root < 0; r++)
        if (!p.b.r[r].generated && strcmp(p.b.r[r].name, "root") == 0)
            root = r;
    if (rc == 0 && root < 0)
        rc = gb_fail(&p.b, 0, "no rule named root");
    if (rc == 0)
        rc = gb_finish(&p.b, root, out);
    gb_free(&p.b);
    return rc;
}
