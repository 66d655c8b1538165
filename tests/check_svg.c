/* check_svg.c - the view as an SVG picture (src/tui/screen_svg.c, issue 13 part 11).
 *
 * "xml": a small XML checker of this file's own (tags balanced, attributes
 * quoted and not repeated, entity and character references known, nothing
 * XML 1.0 cannot hold), shown to refuse each kind of fault before it is
 * trusted. "picture": the SVG of a screen is read back with it into a grid
 * (each <text> character at the cell its x and y name, each block rectangle
 * into the eighths of its cell) and compared with the screen cell for cell:
 * the code point, the colour, bold, dim, reverse video, and each block
 * element's shape against the table below, written from the Unicode names.
 * "themes": term_palette's colours are xterm's for the indices term.c gives
 * the terminal.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "data/config.h"
#include "tui/app.h"
#include "tui/screen.h"
#include "tui/screen_svg.h"
#include "tui/term.h"
#include "tui/view.h"
#include "suites.h"

/* ---- a small XML checker -------------------------------------------------------- */

struct buf {
    char *s;
    size_t n, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        ck_assert_ptr_nonnull(b->s);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

#define MAX_ATTRS 12

/* What the checker hands on for each element, at its end tag: its name,
 * its attributes and the text directly inside it, references decoded. */
typedef void (*on_element_fn)(void *arg, const char *name, int n, char *const *names,
                              char *const *values, const char *text);

struct xml {
    const char *start, *p;
    char why[200]; /* the first fault, with its offset */
    on_element_fn on_element;
    void *arg;
};

static int fault(struct xml *x, const char *what)
{
    if (!x->why[0])
        snprintf(x->why, sizeof x->why, "offset %ld: %s", (long)(x->p - x->start), what);
    return -1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_space(struct xml *x)
{
    while (is_space(*x->p))
        x->p++;
}

static int name_char(char c, int first)
{
    int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    return letter || (!first && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
}

static int parse_name(struct xml *x, char *out, size_t n)
{
    size_t k = 0;
    if (!name_char(*x->p, 1))
        return fault(x, "a name expected");
    while (name_char(*x->p, 0)) {
        if (k + 1 >= n)
            return fault(x, "a name too long");
        out[k++] = *x->p++;
    }
    out[k] = '\0';
    return 0;
}

/* A code point XML 1.0 allows (its production Char). */
static int xml_char(uint32_t cp)
{
    return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
           (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

static void add_cp(struct buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    }
    buf_add(b, u, n);
}

/* A reference, at '&': one of the five entities XML predefines, or a
 * character reference of a character XML allows. */
static int parse_reference(struct xml *x, struct buf *out)
{
    static const struct {
        const char *name;
        char c;
    } ENTITIES[] = {
        { "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' }
    };
    const char *semi = strchr(x->p, ';');
    if (!semi || semi - x->p > 12)
        return fault(x, "'&' that starts no reference");
    size_t len = (size_t)(semi - x->p - 1);
    const char *name = x->p + 1;
    if (name[0] == '#') {
        char *end;
        int hex = name[1] == 'x';
        unsigned long cp = strtoul(name + 1 + hex, &end, hex ? 16 : 10);
        if (end != semi || end == name + 1 + hex || !xml_char((uint32_t)cp))
            return fault(x, "a bad character reference");
        add_cp(out, (uint32_t)cp);
        x->p = semi + 1;
        return 0;
    }
    for (size_t i = 0; i < sizeof ENTITIES / sizeof ENTITIES[0]; i++)
        if (strlen(ENTITIES[i].name) == len && strncmp(name, ENTITIES[i].name, len) == 0) {
            buf_add(out, &ENTITIES[i].c, 1);
            x->p = semi + 1;
            return 0;
        }
    return fault(x, "an unknown entity");
}

/* Character data up to end ('<' for text, the quote for a value): valid
 * UTF-8 of characters XML allows, '&' only in a reference, no '<' in a
 * value. */
static int parse_chars(struct xml *x, char end, struct buf *out)
{
    while (*x->p && *x->p != end) {
        if (*x->p == '<')
            return fault(x, "'<' inside an attribute value");
        if (*x->p == '&') {
            if (parse_reference(x, out) < 0)
                return -1;
            continue;
        }
        uint32_t cp;
        int len = utf8_decode(x->p, strlen(x->p), &cp);
        if (len == 0 || !xml_char(cp))
            return fault(x, "a byte or character XML does not allow");
        buf_add(out, x->p, (size_t)len);
        x->p += len;
    }
    return 0;
}

struct attrs {
    int n;
    char *names[MAX_ATTRS], *values[MAX_ATTRS];
};

static void attrs_free(struct attrs *a)
{
    for (int i = 0; i < a->n; i++) {
        free(a->names[i]);
        free(a->values[i]);
    }
    a->n = 0;
}

/* One attribute, at its name: name, '=', a quoted value; no name twice. */
static int parse_attr(struct xml *x, struct attrs *a)
{
    char name[64];
    if (parse_name(x, name, sizeof name) < 0)
        return -1;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->names[i], name) == 0)
            return fault(x, "an attribute given twice");
    if (a->n == MAX_ATTRS)
        return fault(x, "too many attributes");
    skip_space(x);
    if (*x->p != '=')
        return fault(x, "'=' expected after an attribute's name");
    x->p++;
    skip_space(x);
    char quote = *x->p;
    if (quote != '"' && quote != '\'')
        return fault(x, "an attribute value without quotes");
    x->p++;
    struct buf v = { 0 };
    buf_add(&v, "", 0);
    if (parse_chars(x, quote, &v) < 0 || *x->p != quote) {
        free(v.s);
        return fault(x, "an attribute value not closed");
    }
    x->p++;
    a->names[a->n] = strdup(name);
    a->values[a->n++] = v.s;
    return 0;
}

static int parse_element(struct xml *x, int depth);

/* The content of element name up to and with its end tag. */
static int parse_content(struct xml *x, const char *name, struct buf *text, int depth)
{
    for (;;) {
        if (!*x->p)
            return fault(x, "an element not closed");
        if (x->p[0] == '<' && x->p[1] == '/') {
            char end[64];
            x->p += 2;
            if (parse_name(x, end, sizeof end) < 0)
                return -1;
            if (strcmp(end, name) != 0)
                return fault(x, "an end tag that closes another element");
            skip_space(x);
            if (*x->p != '>')
                return fault(x, "'>' expected");
            x->p++;
            return 0;
        }
        if (x->p[0] == '<' && (x->p[1] == '!' || x->p[1] == '?'))
            return fault(x, "a comment, CDATA or instruction (none are written)");
        if (x->p[0] == '<') {
            if (parse_element(x, depth + 1) < 0)
                return -1;
        } else if (parse_chars(x, '<', text) < 0) {
            return -1;
        }
    }
}

static int parse_element(struct xml *x, int depth)
{
    char name[64];
    struct attrs a = { 0 };
    struct buf text = { 0 };
    if (depth > 32)
        return fault(x, "elements nested too deep");
    if (*x->p != '<')
        return fault(x, "'<' expected");
    x->p++;
    if (parse_name(x, name, sizeof name) < 0)
        return -1;
    buf_add(&text, "", 0);
    int rc = 0;
    for (;;) {
        int spaced = is_space(*x->p);
        skip_space(x);
        if (x->p[0] == '/' && x->p[1] == '>') {
            x->p += 2;
            break;
        }
        if (*x->p == '>') {
            x->p++;
            rc = parse_content(x, name, &text, depth);
            break;
        }
        if (!spaced || parse_attr(x, &a) < 0) {
            rc = fault(x, "a malformed start tag");
            break;
        }
    }
    if (rc == 0 && x->on_element)
        x->on_element(x->arg, name, a.n, a.names, a.values, text.s);
    attrs_free(&a);
    free(text.s);
    return rc;
}

/* Checks doc: an optional XML declaration, one root element, nothing but
 * spaces after it. Returns 0, or -1 with x->why. */
static int xml_check(struct xml *x, const char *doc, on_element_fn on_element, void *arg)
{
    memset(x, 0, sizeof *x);
    x->start = x->p = doc;
    x->on_element = on_element;
    x->arg = arg;
    if (strncmp(doc, "<?xml ", 6) == 0) {
        const char *end = strstr(doc, "?>");
        if (!end)
            return fault(x, "the XML declaration not closed");
        x->p = end + 2;
    }
    skip_space(x);
    if (parse_element(x, 0) < 0)
        return -1;
    skip_space(x);
    if (*x->p)
        return fault(x, "something after the root element");
    return 0;
}

static void expect_refused(const char *doc, const char *why)
{
    struct xml x;
    ck_assert_msg(xml_check(&x, doc, NULL, NULL) < 0, "accepted: %s", doc);
    ck_assert_msg(strstr(x.why, why) != NULL, "%s: '%s', not '%s'", doc, x.why, why);
}

START_TEST(test_checker_refuses_each_fault)
{
    expect_refused("<a><b></a></b>", "closes another element");
    expect_refused("<a>", "not closed");
    expect_refused("<a x=1/>", "without quotes");
    expect_refused("<a x=\"1/>", "not closed");
    expect_refused("<a x=\"1\" x=\"2\"/>", "given twice");
    expect_refused("<a x=\"1\"y=\"2\"/>", "malformed start tag");
    expect_refused("<a x=\"<\"/>", "'<' inside an attribute value");
    expect_refused("<a>&foo;</a>", "unknown entity");
    expect_refused("<a>a & b</a>", "starts no reference");
    expect_refused("<a>&#1;</a>", "bad character reference");
    expect_refused("<a>\x01</a>", "does not allow");
    expect_refused("<a>\xff</a>", "does not allow");
    expect_refused("<a/><b/>", "after the root");
    expect_refused("<a><!-- c --></a>", "comment");
    struct xml x;
    ck_assert_msg(xml_check(&x,
                            "<?xml version=\"1.0\"?>\n<a x='1' y=\"&lt;\">&amp;&#x41;&#65;<b/>"
                            "\xe2\x96\x88</a>\n",
                            NULL, NULL) == 0,
                  "%s", x.why);
}
END_TEST

/* ---- the picture read back into cells ------------------------------------------- */

#define NO_PAPER 0xFFFFFFFFu

struct seen {
    uint32_t cp;    /* the character a <text> put here, or 0 */
    int chars;      /* how many characters landed here */
    uint32_t ink;   /* the colour of that character, or of the block */
    int bold;       /* font-weight="bold" */
    double opacity; /* the text's fill-opacity */
    uint64_t mask;  /* the eighths the block rectangles cover: bit 8 y + x */
    double alpha;   /* the blocks' fill-opacity */
    uint32_t paper; /* the reverse-video rectangle behind it, or NO_PAPER */
};

struct picture {
    int w, h;        /* in cells, from the root's width and height */
    struct seen *at; /* w x h */
    uint32_t page;   /* the page rectangle's colour */
    int pages;       /* page rectangles seen */
    char why[200];   /* the first thing that does not fit, or "" */
};

static const char *attr(int n, char *const *names, char *const *values, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return values[i];
    return NULL;
}

static int misfit(struct picture *pic, const char *what, const char *detail)
{
    if (!pic->why[0])
        snprintf(pic->why, sizeof pic->why, "%s: %s", what, detail ? detail : "(none)");
    return -1;
}

static uint32_t colour(const char *v)
{
    return v && v[0] == '#' && strlen(v) == 7 ? (uint32_t)strtoul(v + 1, NULL, 16) : NO_PAPER;
}

static double number(const char *v)
{
    return v ? strtod(v, NULL) : NAN;
}

static struct seen *cell_at(struct picture *pic, int x, int y)
{
    if (x < 0 || y < 0 || x >= pic->w || y >= pic->h)
        return NULL;
    return &pic->at[y * pic->w + x];
}

/* A <text>: each character at the column of its x, on the row of y. */
static int seen_text(struct picture *pic, int n, char *const *names, char *const *values,
                     const char *text)
{
    const char *xs = attr(n, names, values, "x");
    double y = number(attr(n, names, values, "y"));
    int row = (int)y / SVG_CELL_H;
    if (!xs || y != row * SVG_CELL_H + SVG_BASELINE)
        return misfit(pic, "a text off the rows", attr(n, names, values, "y"));
    const char *op = attr(n, names, values, "fill-opacity");
    const char *weight = attr(n, names, values, "font-weight");
    size_t len = strlen(text);
    char *end;
    for (const char *t = text; *t;) {
        uint32_t cp;
        int k = utf8_decode(t, len - (size_t)(t - text), &cp);
        long px = strtol(xs, &end, 10);
        if (k == 0 || end == xs || px % SVG_CELL_W != 0)
            return misfit(pic, "a character without its own column", xs);
        xs = end;
        struct seen *c = cell_at(pic, (int)(px / SVG_CELL_W), row);
        if (!c)
            return misfit(pic, "a character off the screen", text);
        c->cp = cp;
        c->chars++;
        c->ink = colour(attr(n, names, values, "fill"));
        c->bold = weight && strcmp(weight, "bold") == 0;
        c->opacity = op ? number(op) : 1.0;
        t += k;
    }
    while (*xs == ' ')
        xs++;
    return *xs ? misfit(pic, "more columns than characters", xs) : 0;
}

/* A whole number of eighths of a cell of size px, from v (pixels). */
static int eighths(double v, double px)
{
    double e = v * 8 / px;
    return fabs(e - round(e)) < 1e-9 ? (int)round(e) : -100;
}

/* A block rectangle: the eighths of its cell that it covers. */
static int seen_block(struct picture *pic, int n, char *const *names, char *const *values)
{
    double x = number(attr(n, names, values, "x")), y = number(attr(n, names, values, "y"));
    double w = number(attr(n, names, values, "width")),
           h = number(attr(n, names, values, "height"));
    int col = (int)floor(x / SVG_CELL_W), row = (int)floor(y / SVG_CELL_H);
    int ex = eighths(x - col * SVG_CELL_W, SVG_CELL_W),
        ey = eighths(y - row * SVG_CELL_H, SVG_CELL_H);
    int ew = eighths(w, SVG_CELL_W), eh = eighths(h, SVG_CELL_H);
    struct seen *c = cell_at(pic, col, row);
    if (!c || ex < 0 || ey < 0 || ew < 1 || eh < 1 || ex + ew > 8 || ey + eh > 8)
        return misfit(pic, "a block rectangle that fits no cell", attr(n, names, values, "x"));
    for (int j = ey; j < ey + eh; j++)
        for (int i = ex; i < ex + ew; i++)
            c->mask |= 1ull << (8 * j + i);
    const char *op = attr(n, names, values, "fill-opacity");
    c->alpha = op ? number(op) : 1.0;
    c->ink = colour(attr(n, names, values, "fill"));
    return 0;
}

/* A rectangle without class: the page (no x), or the paper behind a run. */
static int seen_paper(struct picture *pic, int n, char *const *names, char *const *values)
{
    uint32_t fill = colour(attr(n, names, values, "fill"));
    if (!attr(n, names, values, "x")) {
        pic->page = fill;
        pic->pages++;
        return 0;
    }
    int x = (int)number(attr(n, names, values, "x")), y = (int)number(attr(n, names, values, "y"));
    int w = (int)number(attr(n, names, values, "width"));
    int h = (int)number(attr(n, names, values, "height"));
    if (x % SVG_CELL_W || y % SVG_CELL_H || w % SVG_CELL_W || h != SVG_CELL_H)
        return misfit(pic, "a paper rectangle off the cells", attr(n, names, values, "x"));
    for (int i = x / SVG_CELL_W; i < (x + w) / SVG_CELL_W; i++) {
        struct seen *c = cell_at(pic, i, y / SVG_CELL_H);
        if (!c)
            return misfit(pic, "a paper rectangle off the screen", attr(n, names, values, "x"));
        c->paper = fill;
    }
    return 0;
}

static void on_element(void *arg, const char *name, int n, char *const *names, char *const *values,
                       const char *text)
{
    struct picture *pic = arg;
    const char *cls = attr(n, names, values, "class");
    if (strcmp(name, "text") == 0)
        seen_text(pic, n, names, values, text);
    else if (strcmp(name, "rect") == 0 && cls && strcmp(cls, "blk") == 0)
        seen_block(pic, n, names, values);
    else if (strcmp(name, "rect") == 0)
        seen_paper(pic, n, names, values);
    else if (strcmp(name, "svg") == 0 && (!attr(n, names, values, "version") ||
                                          strcmp(attr(n, names, values, "version"), "1.1") != 0))
        misfit(pic, "not SVG 1.1", attr(n, names, values, "version"));
}

/* ---- the block elements, from their Unicode names ------------------------------- */

/* Each block element as rectangles in eighths of the cell {x, y, w, h},
 * and its share of the colour in quarters (the shades). */
static const struct block {
    uint32_t cp;
    int quarters, n;
    int r[2][4];
} BLOCKS[] = {
    { 0x2580, 4, 1, { { 0, 0, 8, 4 } } },                 /* upper half */
    { 0x2581, 4, 1, { { 0, 7, 8, 1 } } },                 /* lower one eighth */
    { 0x2582, 4, 1, { { 0, 6, 8, 2 } } },                 /* lower one quarter */
    { 0x2583, 4, 1, { { 0, 5, 8, 3 } } },                 /* lower three eighths */
    { 0x2584, 4, 1, { { 0, 4, 8, 4 } } },                 /* lower half */
    { 0x2585, 4, 1, { { 0, 3, 8, 5 } } },                 /* lower five eighths */
    { 0x2586, 4, 1, { { 0, 2, 8, 6 } } },                 /* lower three quarters */
    { 0x2587, 4, 1, { { 0, 1, 8, 7 } } },                 /* lower seven eighths */
    { 0x2588, 4, 1, { { 0, 0, 8, 8 } } },                 /* full block */
    { 0x2589, 4, 1, { { 0, 0, 7, 8 } } },                 /* left seven eighths */
    { 0x258A, 4, 1, { { 0, 0, 6, 8 } } },                 /* left three quarters */
    { 0x258B, 4, 1, { { 0, 0, 5, 8 } } },                 /* left five eighths */
    { 0x258C, 4, 1, { { 0, 0, 4, 8 } } },                 /* left half */
    { 0x258D, 4, 1, { { 0, 0, 3, 8 } } },                 /* left three eighths */
    { 0x258E, 4, 1, { { 0, 0, 2, 8 } } },                 /* left one quarter */
    { 0x258F, 4, 1, { { 0, 0, 1, 8 } } },                 /* left one eighth */
    { 0x2590, 4, 1, { { 4, 0, 4, 8 } } },                 /* right half */
    { 0x2591, 1, 1, { { 0, 0, 8, 8 } } },                 /* light shade */
    { 0x2592, 2, 1, { { 0, 0, 8, 8 } } },                 /* medium shade */
    { 0x2593, 3, 1, { { 0, 0, 8, 8 } } },                 /* dark shade */
    { 0x2594, 4, 1, { { 0, 0, 8, 1 } } },                 /* upper one eighth */
    { 0x2595, 4, 1, { { 7, 0, 1, 8 } } },                 /* right one eighth */
    { 0x2596, 4, 1, { { 0, 4, 4, 4 } } },                 /* quadrant lower left */
    { 0x2597, 4, 1, { { 4, 4, 4, 4 } } },                 /* quadrant lower right */
    { 0x2598, 4, 1, { { 0, 0, 4, 4 } } },                 /* quadrant upper left */
    { 0x2599, 4, 2, { { 0, 0, 4, 8 }, { 4, 4, 4, 4 } } }, /* upper left, lower left, lower right */
    { 0x259A, 4, 2, { { 0, 0, 4, 4 }, { 4, 4, 4, 4 } } }, /* upper left and lower right */
    { 0x259B, 4, 2, { { 0, 0, 8, 4 }, { 0, 4, 4, 4 } } }, /* upper left, upper right, lower left */
    { 0x259C, 4, 2, { { 0, 0, 8, 4 }, { 4, 4, 4, 4 } } }, /* upper left, upper right, lower right */
    { 0x259D, 4, 1, { { 4, 0, 4, 4 } } },                 /* quadrant upper right */
    { 0x259E, 4, 2, { { 4, 0, 4, 4 }, { 0, 4, 4, 4 } } }, /* upper right and lower left */
    { 0x259F, 4, 2, { { 4, 0, 4, 8 }, { 0, 4, 4, 4 } } }, /* upper right, lower left, lower right */
};
#define N_BLOCKS ((int)(sizeof BLOCKS / sizeof BLOCKS[0]))

static uint64_t block_mask(const struct block *b)
{
    uint64_t m = 0;
    for (int k = 0; k < b->n; k++)
        for (int j = b->r[k][1]; j < b->r[k][1] + b->r[k][3]; j++)
            for (int i = b->r[k][0]; i < b->r[k][0] + b->r[k][2]; i++)
                m |= 1ull << (8 * j + i);
    return m;
}

static const struct block *block_of(uint32_t cp)
{
    for (int i = 0; i < N_BLOCKS; i++)
        if (BLOCKS[i].cp == cp)
            return &BLOCKS[i];
    return NULL;
}

/* The block element whose shape and shade (dim or not) the cell shows,
 * or 0. */
static uint32_t block_seen(const struct seen *c)
{
    for (int i = 0; i < N_BLOCKS; i++) {
        double a = BLOCKS[i].quarters / 4.0;
        if (block_mask(&BLOCKS[i]) == c->mask &&
            (fabs(c->alpha - a) < 1e-6 || fabs(c->alpha - a * SVG_DIM) < 1e-6))
            return BLOCKS[i].cp;
    }
    return 0;
}

/* ---- comparing a picture with its screen ---------------------------------------- */

static char *svg_of(const struct screen *s, struct svg_palette p)
{
    char *doc = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&doc, &n);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(screen_write_svg(s, p, f), 0);
    ck_assert_int_eq(fclose(f), 0);
    return doc;
}

/* Reads doc back (failing the test when it is not well-formed). */
static void read_picture(const char *doc, struct picture *pic)
{
    const char *svg = strstr(doc, "<svg ");
    ck_assert_ptr_nonnull(svg);
    int pw = 0, ph = 0;
    ck_assert_int_eq(sscanf(svg,
                            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
                            "width=\"%d\" height=\"%d\"",
                            &pw, &ph),
                     2);
    memset(pic, 0, sizeof *pic);
    pic->w = pw / SVG_CELL_W;
    pic->h = ph / SVG_CELL_H;
    pic->at = calloc((size_t)pic->w * (size_t)pic->h, sizeof *pic->at);
    ck_assert_ptr_nonnull(pic->at);
    for (int i = 0; i < pic->w * pic->h; i++)
        pic->at[i].paper = NO_PAPER;
    struct xml x;
    ck_assert_msg(xml_check(&x, doc, on_element, pic) == 0, "not well-formed: %s", x.why);
    ck_assert_msg(!pic->why[0], "%s", pic->why);
}

/* Row y of the picture as text: its characters, its blocks by shape,
 * blanks where nothing is drawn (screen_row_text's form). */
static void picture_row(const struct picture *pic, int y, char *buf, size_t n)
{
    struct buf b = { 0 };
    buf_add(&b, "", 0);
    size_t last = 0;
    for (int x = 0; x < pic->w; x++) {
        const struct seen *c = &pic->at[y * pic->w + x];
        uint32_t cp = c->mask ? block_seen(c) : c->cp;
        if (!c->mask && !c->cp) /* nothing drawn: a blank, or a wide character's right half */
            cp = x > 0 && utf8_cp_width(pic->at[y * pic->w + x - 1].cp) == 2 ? 0 : ' ';
        if (cp)
            add_cp(&b, cp);
        if (cp && cp != ' ')
            last = b.n;
    }
    b.s[last] = '\0';
    snprintf(buf, n, "%s", b.s);
    free(b.s);
}

/* What the cell of s at (x, y) must look like in p, checked against what
 * the picture shows there. */
static void expect_cell(const struct screen *s, struct svg_palette p, const struct seen *c, int x,
                        int y)
{
    const struct cell *sc = screen_at(s, x, y);
    int attr = (sc->attr | (p.all_bold ? ATTR_BOLD : 0)) & ~(p.no_dim ? ATTR_DIM : 0);
    uint32_t fg = p.fg[sc->color];
    uint32_t ink = attr & ATTR_REVERSE ? p.bg : fg;
    ck_assert_msg(c->paper == (attr & ATTR_REVERSE ? fg : NO_PAPER),
                  "(%d, %d): paper %06x, reverse %d", x, y, c->paper, attr & ATTR_REVERSE);
    ck_assert_msg(c->chars <= 1, "(%d, %d): %d characters", x, y, c->chars);
    const struct block *b = block_of(sc->cp);
    if (b) {
        double alpha = b->quarters / 4.0 * (attr & ATTR_DIM ? SVG_DIM : 1.0);
        ck_assert_msg(c->mask == block_mask(b) && fabs(c->alpha - alpha) < 1e-6 && !c->chars,
                      "(%d, %d): U+%04X drawn as mask %016llx alpha %g", x, y, sc->cp,
                      (unsigned long long)c->mask, c->alpha);
        ck_assert_msg(c->ink == ink, "(%d, %d): block ink %06x, not %06x", x, y, c->ink, ink);
        return;
    }
    ck_assert_msg(!c->mask, "(%d, %d): a block rectangle on U+%04X", x, y, sc->cp);
    if (sc->cp == 0 || sc->cp == ' ') {
        ck_assert_msg(!c->chars || c->cp == ' ', "(%d, %d): U+%04X drawn on a blank", x, y, c->cp);
        return;
    }
    uint32_t want = sc->cp;
    ck_assert_msg(c->cp == want, "(%d, %d): U+%04X, not U+%04X", x, y, c->cp, want);
    ck_assert_msg(c->ink == ink, "(%d, %d): ink %06x, not %06x", x, y, c->ink, ink);
    ck_assert_int_eq(c->bold, !!(attr & ATTR_BOLD));
    ck_assert_msg(fabs(c->opacity - (attr & ATTR_DIM ? SVG_DIM : 1.0)) < 1e-6,
                  "(%d, %d): opacity %g", x, y, c->opacity);
}

/* The SVG of s in p is well-formed and shows s cell for cell; returns the
 * document (the caller frees it). */
static char *expect_picture(const struct screen *s, struct svg_palette p)
{
    char *doc = svg_of(s, p);
    struct picture pic;
    read_picture(doc, &pic);
    ck_assert_int_eq(pic.w, s->w);
    ck_assert_int_eq(pic.h, s->h);
    ck_assert_int_eq(pic.pages, 1);
    ck_assert_uint_eq(pic.page, p.bg);
    size_t n = (size_t)s->w * 4 + 1;
    char *want = malloc(n), *got = malloc(n);
    ck_assert(want && got);
    for (int y = 0; y < s->h; y++) {
        for (int x = 0; x < s->w; x++)
            expect_cell(s, p, &pic.at[y * pic.w + x], x, y);
        screen_row_text(s, y, want, n);
        picture_row(&pic, y, got, n);
        ck_assert_msg(strcmp(want, got) == 0, "row %d:\n'%s' on the screen\n'%s' in the picture", y,
                      want, got);
    }
    free(want);
    free(got);
    free(pic.at);
    return doc;
}

/* A palette whose colours all differ, so that a colour names its role. */
static struct svg_palette test_palette(void)
{
    struct svg_palette p = { .bg = 0xfafafa };
    for (int c = 0; c < COL_COUNT; c++)
        p.fg[c] = 0x102030u + 0x010101u * (uint32_t)c;
    return p;
}

/* A screen with each thing the writer treats apart: a reverse title run
 * with XML's specials, dim and bold text, a wide character and one past
 * the BMP, inner spaces, bars, and every block element. */
static void known_screen(struct screen *s)
{
    ck_assert_int_eq(screen_init(s, 40, 5, 1), 0);
    screen_fill(s, (struct rect){ 0, 0, 40, 1 }, ' ', COL_TITLE, ATTR_REVERSE);
    screen_text(s, 1, 0, -1, "a<b & \"c\" > 'd'", COL_TITLE, ATTR_REVERSE | ATTR_BOLD);
    screen_text(s, 30, 0, -1, "step 1/3", COL_TITLE, ATTR_REVERSE);
    screen_text(s, 0, 1, -1, "on      0.4407", COL_DEFAULT, 0);
    screen_bar(s, 15, 1, 3.625, COL_KEPT, 0);
    screen_put(s, 20, 1, 0x2591, COL_REMOVED, ATTR_DIM);
    screen_text(s, 22, 1, -1, "gone", COL_REMOVED, ATTR_DIM);
    screen_put(s, 27, 1, 0x25c6, COL_THRESHOLD, ATTR_BOLD | ATTR_REVERSE);
    screen_text(s, 0, 2, -1, "\xe5\x8f\xaf\xe4\xbb\xa5 x \xf0\x9f\x98\x80 y", COL_ACCENT, 0);
    screen_bar_left(s, 30, 2, 2.5, COL_NEG, 0);
    for (int i = 0; i < N_BLOCKS; i++)
        screen_put(s, i, 3, BLOCKS[i].cp, i % 2 ? COL_KEPT : COL_CHOSEN, i % 3 ? 0 : ATTR_DIM);
    screen_put(s, 0, 4, 0x2588, COL_KEPT, ATTR_REVERSE);
    screen_text(s, 2, 4, -1, "<>&\"", COL_WARN, ATTR_UNDERLINE);
}

START_TEST(test_known_screen_cell_for_cell)
{
    struct screen s;
    known_screen(&s);
    char *doc = expect_picture(&s, test_palette());
    /* 40 x 5 cells of 9 x 18 px; row y on line y + 5 of the file. */
    ck_assert_ptr_nonnull(strstr(doc, "width=\"360\" height=\"90\" viewBox=\"0 0 360 90\""));
    ck_assert_ptr_nonnull(strstr(doc, "xml:space=\"preserve\""));
    ck_assert_ptr_nonnull(strstr(doc, "font-family=\"DejaVu Sans Mono,"));
    int lines = 0;
    for (const char *c = doc; *c; c++)
        lines += *c == '\n';
    ck_assert_int_eq(lines, 4 + 5 + 2);
    /* Each wide character a run of its own, at its first column. */
    ck_assert_ptr_nonnull(strstr(doc, "<text x=\"0\" y=\"50\" fill=\"#172737\">\xe5\x8f\xaf</text>"
                                      "<text x=\"18\" y=\"50\" fill=\"#172737\">\xe4\xbb\xa5</text>"
                                      "<text x=\"45\" y=\"50\" fill=\"#172737\">x</text>"));
    /* "on      0.4407": one run, its inner spaces kept at their columns. */
    ck_assert_ptr_nonnull(strstr(doc, "<text x=\"0 9 18 27 36 45 54 63 72 81 90 99 108 117\" "
                                      "y=\"32\" fill=\"#102030\">on      0.4407</text>"));
    /* The bar of 3.625 cells from column 15: three full blocks and the
     * left five eighths (U+258B) of 9 px: 5.625 px wide at x 162. */
    ck_assert_ptr_nonnull(
        strstr(doc, "<rect class=\"blk\" x=\"162\" y=\"18\" width=\"5.625\" height=\"18\""));
    /* The light shade, dim: a quarter of the colour, times 0.55. */
    ck_assert_ptr_nonnull(strstr(doc, "x=\"180\" y=\"18\" width=\"9\" height=\"18\" "
                                      "fill=\"#142434\" fill-opacity=\"0.1375\"/>"));
    screen_free(&s);
    free(doc);
}
END_TEST

START_TEST(test_specials_escaped)
{
    struct screen s;
    known_screen(&s);
    /* Code points the screen never holds, put there by hand: each shows
     * as U+FFFD rather than making the document invalid. */
    screen_put(&s, 10, 4, 0x01, COL_DEFAULT, 0);
    screen_put(&s, 11, 4, 0xFFFE, COL_DEFAULT, 0);
    screen_put(&s, 12, 4, 0xD800, COL_DEFAULT, 0);
    screen_put(&s, 13, 4, 0x9B, COL_DEFAULT, 0);
    screen_put(&s, 14, 4, 0xFFFF, COL_DEFAULT, 0);
    char *doc = svg_of(&s, test_palette());
    struct picture pic;
    read_picture(doc, &pic);
    for (int x = 10; x <= 14; x++)
        ck_assert_uint_eq(pic.at[4 * pic.w + x].cp, 0xFFFD);
    ck_assert_ptr_nonnull(strstr(doc, ">a&lt;b &amp; &quot;c&quot; &gt; 'd'</text>"));
    ck_assert_ptr_nonnull(strstr(doc, " text-decoration=\"underline\">&lt;&gt;&amp;&quot;</text>"));
    ck_assert_ptr_null(strstr(doc, "a<b"));
    ck_assert_ptr_null(strstr(doc, "& \""));
    ck_assert_ptr_null(strstr(doc, "\xc2\x9b"));
    free(pic.at);
    free(doc);
    screen_free(&s);
}
END_TEST

/* ---- the themes' colours -------------------------------------------------------- */

START_TEST(test_theme_colours)
{
    /* xterm's cube from index 16: 16 + 36 r + 6 g + b, levels 0, 95, 135,
     * 175, 215, 255; greys from 232: 8 + 10 k. term.c's RICH table: title
     * 25 = 16 + 6 + 3 -> (0, 95, 175); kept 32 = 16 + 12 + 4 -> (0, 135,
     * 215); removed 244 = 232 + 12 -> 128; u 162 = 16 + 144 + 2 -> (215, 0,
     * 135). The terminal's own text and page: black on white. */
    struct svg_palette d = term_palette(THEME_DEFAULT);
    ck_assert_uint_eq(d.fg[COL_TITLE], 0x005faf);
    ck_assert_uint_eq(d.fg[COL_KEPT], 0x0087d7);
    ck_assert_uint_eq(d.fg[COL_REMOVED], 0x808080);
    ck_assert_uint_eq(d.fg[COL_THRESHOLD], 0xd70087);
    ck_assert_uint_eq(d.fg[COL_DEFAULT], 0x000000);
    ck_assert_uint_eq(d.fg[COL_STATUS], 0x000000);
    ck_assert_uint_eq(d.bg, 0xffffff);
    ck_assert(!d.all_bold && !d.no_dim);
    /* BRIGHT: default 15 (white), u 201 = 16 + 180 + 5 -> (255, 0, 255),
     * chosen 226 = 16 + 180 + 30 -> (255, 255, 0); on black, all bold,
     * nothing dim, as term_present draws it. */
    struct svg_palette j = term_palette(THEME_PROJECTOR);
    ck_assert_uint_eq(j.fg[COL_DEFAULT], 0xffffff);
    ck_assert_uint_eq(j.fg[COL_THRESHOLD], 0xff00ff);
    ck_assert_uint_eq(j.fg[COL_CHOSEN], 0xffff00);
    ck_assert_uint_eq(j.bg, 0x000000);
    ck_assert(j.all_bold && j.no_dim);
    /* Mono: the attributes alone, every role black on white. */
    struct svg_palette m = term_palette(THEME_MONO);
    for (int c = 0; c < COL_COUNT; c++)
        ck_assert_uint_eq(m.fg[c], 0x000000);
    ck_assert_uint_eq(m.bg, 0xffffff);
}
END_TEST

START_TEST(test_projector_all_bold_nothing_dim)
{
    struct screen s;
    known_screen(&s);
    char *doc = expect_picture(&s, term_palette(THEME_PROJECTOR));
    ck_assert_ptr_nonnull(strstr(doc, "fill=\"#ffffff\" font-weight=\"bold\">on      0.4407<"));
    ck_assert_ptr_null(strstr(doc, "fill-opacity=\"0.55\""));
    free(doc);
    screen_free(&s);
}
END_TEST

/* ---- real screens of the view --------------------------------------------------- */

static void expect_view(const char *lesson, const char *keys, int w, int h, int utf8, int theme)
{
    static struct app a; /* megabytes of history: not on the stack */
    struct err e;
    ck_assert_msg(app_init(&a, TEST_LESSONS, lesson, NULL, TEST_SOURCE, &e) == 0, "%s", e.msg);
    for (const char *k = keys; *k; k++)
        app_key(&a, *k);
    struct view_scratch *vs = view_scratch_new();
    ck_assert_ptr_nonnull(vs);
    struct screen s;
    ck_assert_int_eq(screen_init(&s, w, h, utf8), 0);
    view_render(&a, &s, vs);
    free(expect_picture(&s, term_palette(theme)));
    screen_free(&s);
    view_scratch_free(vs);
    app_free(&a);
}

START_TEST(test_views_cell_for_cell)
{
    expect_view("toy", "", 120, 40, 1, THEME_DEFAULT);
    expect_view("top-p", "u", 120, 40, 1, THEME_DEFAULT); /* u: the seeded u's marker */
    expect_view("min-p", "u", 80, 24, 1, THEME_PROJECTOR);
    expect_view("toy", "?", 100, 30, 0, THEME_MONO); /* the help screen, ASCII */
}
END_TEST

START_TEST(test_full_size_view_cell_for_cell)
{
    expect_view("real-story", "D", 120, 40, 1, THEME_DEFAULT); /* the draws' histogram blocks */
}
END_TEST

Suite *suite_svg(void)
{
    Suite *s = suite_create("svg");
    TCase *tx = tcase_create("xml");
    tcase_add_test(tx, test_checker_refuses_each_fault);
    suite_add_tcase(s, tx);
    TCase *tp = tcase_create("picture");
    tcase_add_test(tp, test_known_screen_cell_for_cell);
    tcase_add_test(tp, test_specials_escaped);
    tcase_add_test(tp, test_projector_all_bold_nothing_dim);
    tcase_add_test(tp, test_views_cell_for_cell);
    tcase_add_test(tp, test_full_size_view_cell_for_cell);
    tcase_set_timeout(tp, 120);
    suite_add_tcase(s, tp);
    TCase *tt = tcase_create("themes");
    tcase_add_test(tt, test_theme_colours);
    suite_add_tcase(s, tt);
    return s;
}
