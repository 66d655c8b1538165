/* grammar_schema.c - a JSON schema as GBNF text, in the shapes of llama.cpp's
 * common/json-schema-to-grammar.cpp (its primitives, its object rule with
 * the optional properties as nested "-rest" rules, its whitespace rule
 * "space"), then compiled by the GBNF front end: one grammar, as there.
 *
 * The subset (doc/grammar.md): "type" (a string, or an array of them) of
 * object (with "properties" in the schema's order and "required"; without
 * "properties", any object), array ("items", "minItems", "maxItems"),
 * string ("minLength", "maxLength"), number, integer, boolean, null; "enum",
 * "const", "anyOf", "oneOf"; no "type": any JSON value. Objects are closed
 * (no properties beyond "properties"). Refused by name: "$ref", "allOf",
 * "not", "pattern", "prefixItems", "format", "additionalProperties" other
 * than false. Other keywords (title, description, minimum...) are ignored,
 * as llama.cpp ignores the ones it does not know. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grammar_int.h"

struct prim {
    const char *name, *body, *deps[3];
};

static const struct prim PRIMS[] = {
    { "boolean", "(\"true\" | \"false\")", { NULL } },
    { "decimal-part", "[0-9]{1,16}", { NULL } },
    { "integral-part", "[0] | [1-9] [0-9]{0,15}", { NULL } },
    { "number",
      "(\"-\"? integral-part) (\".\" decimal-part)? ([eE] [-+]? integral-part)?",
      { "integral-part", "decimal-part", NULL } },
    { "integer", "(\"-\"? integral-part)", { "integral-part", NULL } },
    { "value",
      "object | array | string | number | boolean | null",
      { "object", "array", "string" } },
    { "object",
      "\"{\" space ( string \":\" space value (\",\" space string \":\" space value)* )? space "
      "\"}\"",
      { "string", "value", "space" } },
    { "array", "\"[\" space ( value (\",\" space value)* )? space \"]\"", { "value", "space" } },
    { "char",
      "[^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4})",
      { NULL } },
    { "string", "\"\\\"\" char* \"\\\"\"", { "char", NULL } },
    { "null", "\"null\"", { NULL } },
};
/* value's other three deps (a prim lists at most three). */
static const char *const VALUE_MORE[] = { "number", "boolean", "null" };
static const char SPACE[] = "| \" \" | \"\\n\"{1,2} [ \\t]{0,20}";

struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
};

static void put(struct sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = 2 * (b->n + n) + 64;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void puts_(struct sbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

struct conv {
    char **name, **body; /* the rules so far, in order */
    int n, cap;
    int oom;
    struct err *e;
};

static void conv_free(struct conv *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->name[i]);
        free(c->body[i]);
    }
    free(c->name);
    free(c->body);
}

static int find(const struct conv *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->name[i], name) == 0)
            return i;
    return -1;
}

/* Adds rule name ::= body (llama.cpp's _add_rule: the same name with the
 * same body is one rule; another body gets name-1, name-2...). The name
 * it got goes into out (room for 256 bytes). body is taken (freed). */
static int add_rule(struct conv *c, const char *name, char *body, char *out)
{
    char key[256];
    if (!body)
        return err_set(c->e, ERR_SYSTEM, "json-schema: out of memory");
    snprintf(key, sizeof key, "%s", name[0] ? name : "rule");
    for (char *q = key; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
            *q = '-';
    int i = find(c, key);
    for (int k = 1; i >= 0 && strcmp(c->body[i], body) != 0; k++) {
        snprintf(key, sizeof key, "%.200s-%d", name, k);
        for (char *q = key; *q; q++)
            if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
                *q = '-';
        i = find(c, key);
    }
    snprintf(out, 256, "%s", key);
    if (i >= 0) {
        free(body);
        return 0;
    }
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        char **nm = realloc(c->name, (size_t)cap * sizeof *nm);
        if (nm)
            c->name = nm;
        char **bd = nm ? realloc(c->body, (size_t)cap * sizeof *bd) : NULL;
        if (!bd) {
            free(body);
            return err_set(c->e, ERR_SYSTEM, "json-schema: out of memory");
        }
        c->body = bd;
        c->cap = cap;
    }
    c->name[c->n] = malloc(strlen(key) + 1);
    if (!c->name[c->n]) {
        free(body);
        return err_set(c->e, ERR_SYSTEM, "json-schema: out of memory");
    }
    strcpy(c->name[c->n], key);
    c->body[c->n++] = body;
    return 0;
}

static char *dup(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d)
        strcpy(d, s);
    return d;
}

/* A primitive and what it needs, once each. */
static int add_prim(struct conv *c, const char *name)
{
    char got[256];
    if (find(c, name) >= 0)
        return 0;
    if (strcmp(name, "space") == 0)
        return add_rule(c, "space", dup(SPACE), got);
    for (size_t i = 0; i < sizeof PRIMS / sizeof PRIMS[0]; i++) {
        if (strcmp(PRIMS[i].name, name) != 0)
            continue;
        if (add_rule(c, name, dup(PRIMS[i].body), got) < 0)
            return -1;
        for (int k = 0; k < 3 && PRIMS[i].deps[k]; k++)
            if (add_prim(c, PRIMS[i].deps[k]) < 0)
                return -1;
        for (int k = 0; k < 3 && strcmp(name, "value") == 0; k++)
            if (add_prim(c, VALUE_MORE[k]) < 0)
                return -1;
        return 0;
    }
    return -1;
}

/* The JSON text of v, compact (for const and enum: llama.cpp's dump()). */
static void dump(struct sbuf *b, const struct jval *v)
{
    char t[8];
    if (v->type == J_NULL) {
        puts_(b, "null");
    } else if (v->type == J_BOOL) {
        puts_(b, v->b ? "true" : "false");
    } else if (v->type == J_NUM) {
        put(b, v->s, v->slen);
    } else if (v->type == J_STR) {
        puts_(b, "\"");
        for (size_t i = 0; i < v->slen; i++) {
            unsigned char ch = (unsigned char)v->s[i];
            const char *q = strchr("\"\\\b\f\n\r\t", ch);
            if (ch && q) {
                t[0] = '\\';
                t[1] = "\"\\bfnrt"[q - "\"\\\b\f\n\r\t"];
                put(b, t, 2);
            } else if (ch < 0x20) {
                snprintf(t, sizeof t, "\\u%04x", ch);
                puts_(b, t);
            } else {
                put(b, (const char *)&ch, 1);
            }
        }
        puts_(b, "\"");
    } else {
        puts_(b, v->type == J_OBJ ? "{" : "[");
        for (int k = 0; k < v->n; k++) {
            if (k > 0)
                puts_(b, ",");
            if (v->type == J_OBJ) {
                struct jval key = { .type = J_STR, .s = v->key[k], .slen = v->klen[k] };
                dump(b, &key);
                puts_(b, ":");
            }
            dump(b, &v->kid[k]);
        }
        puts_(b, v->type == J_OBJ ? "}" : "]");
    }
}

/* A GBNF literal of bytes s[0..n): "..." with \" \\ and control bytes
 * escaped (llama.cpp's format_literal). */
static void literal(struct sbuf *b, const char *s, size_t n)
{
    puts_(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char t[8];
        if (ch == '"' || ch == '\\') {
            t[0] = '\\';
            t[1] = (char)ch;
            put(b, t, 2);
        } else if (ch < 0x20 || ch == 0x7F) {
            snprintf(t, sizeof t, "\\x%02X", ch);
            puts_(b, t);
        } else {
            put(b, (const char *)&ch, 1);
        }
    }
    puts_(b, "\"");
}

/* The literal of v's JSON text. */
static void value_literal(struct sbuf *b, const struct jval *v)
{
    struct sbuf d = { 0 };
    dump(&d, v);
    b->oom |= d.oom;
    if (d.p)
        literal(b, d.p, d.n);
    free(d.p);
}

static int fail(struct conv *c, const struct jval *at, const char *what, const char *word)
{
    return err_set(c->e, ERR_USAGE, "json-schema at byte %zu: %s%s", at->at + 1, word ? word : "",
                   what);
}

/* rule name ::= the text of b (taken), its name into out. */
static int add_text(struct conv *c, const char *name, struct sbuf *b, char *out)
{
    if (b->oom || !b->p) {
        free(b->p);
        return err_set(c->e, ERR_SYSTEM, "json-schema: out of memory");
    }
    return add_rule(c, name, b->p, out);
}

/* A count keyword (minItems...): its value into *v, or -1 when absent. */
static int count(struct conv *c, const struct jval *s, const char *key, long *v)
{
    const struct jval *k = json_get(s, key);
    *v = -1;
    if (!k)
        return 0;
    char *end = NULL;
    long x = k->type == J_NUM ? strtol(k->s, &end, 10) : -1;
    if (k->type != J_NUM || *end != '\0' || x < 0 || x > GRAMMAR_MAX_REPEAT) {
        char what[96];
        snprintf(what, sizeof what, "\"%s\" must be an integer from 0 to %d", key,
                 GRAMMAR_MAX_REPEAT);
        return fail(c, k, what, NULL);
    }
    *v = x;
    return 0;
}

/* llama.cpp's build_repetition: item {min,max} (max -1: none), with sep
 * between two items when sep is given. */
static void repetition(struct sbuf *b, const char *item, long min, long max, const char *sep)
{
    char t[64];
    if (max == 0)
        return;
    if (min == 0 && max == 1) {
        puts_(b, item);
        puts_(b, "?");
        return;
    }
    if (!sep) {
        puts_(b, item);
        if (max < 0)
            puts_(b, min == 1 ? "+" : min == 0 ? "*" : "");
        if (max < 0 && min > 1)
            snprintf(t, sizeof t, "{%ld,}", min), puts_(b, t);
        if (max >= 0)
            snprintf(t, sizeof t, "{%ld,%ld}", min, max), puts_(b, t);
        return;
    }
    struct sbuf inner = { 0 };
    puts_(&inner, "(");
    puts_(&inner, sep);
    puts_(&inner, " ");
    puts_(&inner, item);
    puts_(&inner, ")");
    puts_(b, min == 0 ? "(" : "");
    puts_(b, item);
    puts_(b, " ");
    if (inner.p)
        repetition(b, inner.p, min == 0 ? 0 : min - 1, max < 0 ? -1 : max - 1, NULL);
    b->oom |= inner.oom;
    free(inner.p);
    puts_(b, min == 0 ? ")?" : "");
}

static int visit(struct conv *c, const struct jval *s, const char *name, char *out);

/* The sub-schema's name: the parent's, a dash, the part (llama.cpp's). */
static void sub_name(char *out, const char *name, const char *part)
{
    snprintf(out, 256, "%.120s%s%.120s", name, name[0] ? "-" : "", part[0] ? part : "prop");
}

/* The optional properties from k on: llama.cpp's get_recursive_refs. */
static int rest(struct conv *c, struct sbuf *b, char (*kv)[256], const int *opt, int k, int n,
                int first_optional, const char *name, char (*names)[256])
{
    if (first_optional) {
        puts_(b, "( \",\" space ");
        puts_(b, kv[opt[k]]);
        puts_(b, " )?");
    } else {
        puts_(b, kv[opt[k]]);
    }
    if (k + 1 < n) {
        struct sbuf r = { 0 };
        char rn[256], got[256];
        if (rest(c, &r, kv, opt, k + 1, n, 1, name, names) < 0) {
            free(r.p);
            return -1;
        }
        snprintf(rn, sizeof rn, "%.200s-rest", names[opt[k]]);
        if (add_text(c, rn, &r, got) < 0)
            return -1;
        puts_(b, " ");
        puts_(b, got);
    }
    return 0;
}

/* Each property's rule and its key-value rule, into kv; required ones'
 * indices into req, the others' into opt. */
static int properties(struct conv *c, const struct jval *s, const char *name, char (*kv)[256],
                      char (*names)[256], int *req, int *nreq, int *opt, int *nopt)
{
    const struct jval *props = json_get(s, "properties"), *rq = json_get(s, "required");
    if (rq && rq->type != J_ARR)
        return fail(c, rq, "\"required\" must be an array of names", NULL);
    for (int k = 0; rq && k < rq->n; k++)
        if (rq->kid[k].type != J_STR)
            return fail(c, &rq->kid[k], "\"required\" must be an array of names", NULL);
    *nreq = *nopt = 0;
    for (int k = 0; k < props->n; k++) {
        char prop_rule[256];
        sub_name(names[k], name, props->key[k]);
        if (visit(c, &props->kid[k], names[k], prop_rule) < 0)
            return -1;
        struct sbuf b = { 0 };
        struct jval key = { .type = J_STR, .s = props->key[k], .slen = props->klen[k] };
        value_literal(&b, &key);
        puts_(&b, " space \":\" space ");
        puts_(&b, prop_rule);
        char kvn[256];
        snprintf(kvn, sizeof kvn, "%.200s-kv", names[k]);
        if (add_text(c, kvn, &b, kv[k]) < 0)
            return -1;
        int is_req = 0;
        for (int j = 0; rq && j < rq->n && !is_req; j++)
            is_req = rq->kid[j].slen == props->klen[k] &&
                     memcmp(rq->kid[j].s, props->key[k], props->klen[k]) == 0;
        if (is_req)
            req[(*nreq)++] = k;
        else
            opt[(*nopt)++] = k;
    }
    return 0;
}

/* An object with properties: llama.cpp's _build_object_rule, closed. */
static int object(struct conv *c, const struct jval *s, const char *name, const char *rule,
                  char *out)
{
    const struct jval *props = json_get(s, "properties");
    if (props->type != J_OBJ)
        return fail(c, props, "\"properties\" must be an object", NULL);
    int n = props->n > 0 ? props->n : 1, nreq, nopt, rc = -1;
    char(*kv)[256] = malloc((size_t)n * sizeof *kv);
    char(*names)[256] = malloc((size_t)n * sizeof *names);
    int *req = malloc((size_t)n * sizeof *req), *opt = malloc((size_t)n * sizeof *opt);
    struct sbuf b = { 0 };
    if (!kv || !names || !req || !opt) {
        err_set(c->e, ERR_SYSTEM, "json-schema: out of memory");
        goto done;
    }
    if (add_prim(c, "space") < 0 || properties(c, s, name, kv, names, req, &nreq, opt, &nopt) < 0)
        goto done;
    puts_(&b, "\"{\" space ");
    for (int i = 0; i < nreq; i++) {
        puts_(&b, i > 0 ? " \",\" space " : "");
        puts_(&b, kv[req[i]]);
    }
    if (nopt > 0) {
        puts_(&b, nreq > 0 ? " ( \",\" space ( " : " (");
        for (int i = 0; i < nopt; i++) {
            puts_(&b, i > 0 ? " | " : "");
            if (rest(c, &b, kv, opt, i, nopt, 0, name, names) < 0)
                goto done;
        }
        puts_(&b, nreq > 0 ? " ) )?" : " )?");
    }
    /* No properties: "{" space "}", as llama.cpp writes it. */
    puts_(&b, nreq + nopt > 0 ? " space \"}\"" : "\"}\"");
    rc = add_text(c, rule, &b, out);
    b.p = NULL;
done:
    free(b.p);
    free(kv);
    free(names);
    free(req);
    free(opt);
    return rc;
}

static int array(struct conv *c, const struct jval *s, const char *name, const char *rule,
                 char *out)
{
    const struct jval *items = json_get(s, "items");
    long min, max;
    if (count(c, s, "minItems", &min) < 0 || count(c, s, "maxItems", &max) < 0)
        return -1;
    char item[256], sub[256];
    if (items && items->type != J_OBJ && items->type != J_BOOL)
        return fail(c, items, "\"items\" must be a schema (tuples are not supported)", NULL);
    sub_name(sub, name, "item");
    if (items ? visit(c, items, sub, item) < 0 : add_prim(c, "value") < 0)
        return -1;
    if (!items)
        strcpy(item, "value");
    struct sbuf b = { 0 };
    puts_(&b, "\"[\" space ");
    repetition(&b, item, min < 0 ? 0 : min, max, "\",\" space");
    puts_(&b, " space \"]\"");
    return add_prim(c, "space") < 0 ? (free(b.p), -1) : add_text(c, rule, &b, out);
}

static int typed(struct conv *c, const struct jval *s, const struct jval *t, const char *name,
                 const char *rule, char *out)
{
    static const char *const SIMPLE[] = { "number", "integer", "boolean", "null" };
    if (t->type != J_STR)
        return fail(c, t, "\"type\" must be a string", NULL);
    if (strcmp(t->s, "object") == 0 && json_get(s, "properties"))
        return object(c, s, name, rule, out);
    if (strcmp(t->s, "array") == 0)
        return array(c, s, name, rule, out);
    const char *prim = strcmp(t->s, "object") == 0 ? "object" : NULL;
    for (int k = 0; k < 4; k++)
        prim = strcmp(t->s, SIMPLE[k]) == 0 ? SIMPLE[k] : prim;
    if (strcmp(t->s, "string") == 0) {
        long min, max;
        if (count(c, s, "minLength", &min) < 0 || count(c, s, "maxLength", &max) < 0)
            return -1;
        if (min < 0 && max < 0) {
            prim = "string";
        } else {
            struct sbuf b = { 0 };
            puts_(&b, "\"\\\"\" ");
            repetition(&b, "char", min < 0 ? 0 : min, max, NULL);
            puts_(&b, " \"\\\"\"");
            return add_prim(c, "char") < 0 ? (free(b.p), -1) : add_text(c, rule, &b, out);
        }
    }
    if (!prim) {
        char what[96];
        snprintf(what, sizeof what, "\"%.40s\" is not a type", t->s);
        for (char *q = what; *q; q++) /* one printable line, whatever the name holds */
            if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7F)
                *q = '?';
        return fail(c, t, what, NULL);
    }
    if (add_prim(c, prim) < 0)
        return -1;
    return add_rule(c, rule, dup(prim), out);
}

static int reserved(const char *name)
{
    if (strcmp(name, "root") == 0 || strcmp(name, "space") == 0)
        return 1;
    for (size_t i = 0; i < sizeof PRIMS / sizeof PRIMS[0]; i++)
        if (strcmp(PRIMS[i].name, name) == 0)
            return 1;
    return 0;
}

/* The alternatives of an array of schemas (anyOf, oneOf) or of types. */
static int union_of(struct conv *c, const struct jval *s, const struct jval *alts, int types,
                    const char *name, const char *rule, char *out)
{
    if (alts->type != J_ARR || alts->n == 0)
        return fail(c, alts,
                    types ? "\"type\" must be a string or an array of them"
                          : "\"anyOf\" and \"oneOf\" must be arrays of schemas",
                    NULL);
    struct sbuf b = { 0 };
    for (int k = 0; k < alts->n; k++) {
        char part[32], sub[256], got[256];
        snprintf(part, sizeof part, "%s%d", name[0] ? "" : "alternative-", k);
        sub_name(sub, name, part);
        int rc =
            types ? typed(c, s, &alts->kid[k], sub, sub, got) : visit(c, &alts->kid[k], sub, got);
        if (rc < 0) {
            free(b.p);
            return -1;
        }
        puts_(&b, k > 0 ? " | " : "");
        puts_(&b, got);
    }
    return add_text(c, rule, &b, out);
}

static int constants(struct conv *c, const struct jval *en, const struct jval *cst,
                     const char *rule, char *out)
{
    if (en && (en->type != J_ARR || en->n == 0))
        return fail(c, en, "\"enum\" must be an array of values", NULL);
    struct sbuf b = { 0 };
    puts_(&b, "(");
    for (int k = 0; k < (en ? en->n : 1); k++) {
        puts_(&b, k > 0 ? " | " : "");
        value_literal(&b, en ? &en->kid[k] : cst);
    }
    puts_(&b, ")");
    return add_text(c, rule, &b, out);
}

static int refused(struct conv *c, const struct jval *s)
{
    static const char *const NO[] = { "$ref", "allOf", "not", "prefixItems", "format", "pattern" };
    char what[64];
    for (size_t i = 0; i < sizeof NO / sizeof NO[0]; i++) {
        const struct jval *k = json_get(s, NO[i]);
        if (k) {
            snprintf(what, sizeof what, "\"%s\" is not supported", NO[i]);
            return fail(c, k, what, NULL);
        }
    }
    const struct jval *ap = json_get(s, "additionalProperties");
    if (ap && !(ap->type == J_BOOL && !ap->b))
        return fail(c, ap, "\"additionalProperties\" other than false is not supported", NULL);
    return 0;
}

static int visit(struct conv *c, const struct jval *s, const char *name, char *out)
{
    char rule[256];
    snprintf(rule, sizeof rule, "%.250s%s", name[0] ? name : "root", reserved(name) ? "-" : "");
    if (s->type == J_BOOL && s->b)
        return add_prim(c, "value") < 0 ? -1 : add_rule(c, rule, dup("value"), out);
    if (s->type != J_OBJ)
        return fail(c, s, "a schema must be an object", NULL);
    if (refused(c, s) < 0)
        return -1;
    const struct jval *alts = json_get(s, "anyOf"), *t = json_get(s, "type");
    if (!alts)
        alts = json_get(s, "oneOf");
    if (alts)
        return union_of(c, s, alts, 0, name, rule, out);
    if (json_get(s, "enum") || json_get(s, "const"))
        return constants(c, json_get(s, "enum"), json_get(s, "const"), rule, out);
    if (t && t->type == J_ARR)
        return union_of(c, s, t, 1, name, rule, out);
    if (t)
        return typed(c, s, t, name, rule, out);
    if (json_get(s, "properties"))
        return object(c, s, name, rule, out);
    return add_prim(c, "value") < 0 ? -1 : add_rule(c, rule, dup("value"), out);
}

int grammar_schema_to_gbnf(const char *schema, size_t len, char **out, struct err *e)
{
    struct jval *v;
    struct conv c = { .e = e };
    char root[256];
    *out = NULL;
    if (json_parse(schema, len, &v, e) < 0)
        return -1;
    int rc = visit(&c, v, "", root);
    json_free(v);
    struct sbuf b = { 0 };
    /* root first, then the others in the order they were made. */
    for (int pass = 0; pass < 2 && rc == 0; pass++)
        for (int i = 0; i < c.n; i++) {
            if ((strcmp(c.name[i], "root") == 0) != (pass == 0))
                continue;
            puts_(&b, c.name[i]);
            puts_(&b, " ::= ");
            puts_(&b, c.body[i]);
            puts_(&b, "\n");
        }
    conv_free(&c);
    if (rc == 0 && (b.oom || !b.p))
        rc = err_set(e, ERR_SYSTEM, "json-schema: out of memory");
    if (rc < 0) {
        free(b.p);
        return -1;
    }
    *out = b.p;
    return 0;
}

int grammar_from_json_schema(const char *schema, size_t len, struct grammar **out, struct err *e)
{
    char *text;
    *out = NULL;
    if (grammar_schema_to_gbnf(schema, len, &text, e) < 0)
        return -1;
    int rc = grammar_from_gbnf(text, strlen(text), out, e);
    if (rc < 0)
        err_prefix(e, "json-schema (its grammar)");
    free(text);
    return rc;
}
