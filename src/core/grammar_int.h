/* grammar_int.h - what the grammar's files share (grammar.h is the API):
 * the compiled grammar, the builder the front ends fill, the stacks. */
#ifndef LOGITLAB_GRAMMAR_INT_H
#define LOGITLAB_GRAMMAR_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/grammar.h"

/* An element of a rule, as llama.cpp's llama_grammar_element, over bytes:
 * a set of bytes (one of the grammar's 256-bit sets), a reference to a rule,
 * the separator of two alternatives, the end of the rule. */
enum gelem_type { GE_END, GE_ALT, GE_REF, GE_SET };

struct gelem {
    int type;
    int value; /* GE_SET: the set's index; GE_REF: the rule's */
};

/* The compiled grammar: every rule's elements in one array, each rule's
 * alternatives separated by GE_ALT and ended by GE_END. */
struct grammar {
    struct gelem *el;
    int nel;
    int *start;   /* rule r's elements begin at el[start[r]] */
    int *rule_of; /* the rule of each element */
    char **name;  /* each rule's name; a generated rule has its parent's */
    unsigned char *generated;
    int nrules;
    unsigned char (*sets)[32];
    int nsets;
    int root;
};

static inline int gset_has(const unsigned char *set, int byte)
{
    return (set[byte >> 3] >> (byte & 7)) & 1;
}

static inline int gelem_ends(const struct gelem *el)
{
    return el->type == GE_END || el->type == GE_ALT;
}

/* Which front end builds: it sets how a place is written in an error. */
enum gb_kind { GB_GBNF, GB_REGEX, GB_CHOICES, GB_SCHEMA };

struct gb_rule {
    char *name;
    int generated, defined;
    size_t def_at, ref_at; /* byte offsets of its definition, its first use */
    struct gelem *el;      /* its alternatives, GE_ALT between them, no GE_END */
    int n, cap;
};

struct gbuild {
    int kind;
    const char *text; /* the source, for lines and columns */
    size_t len;
    struct gb_rule *r;
    int nr, rcap;
    unsigned char (*sets)[32]; /* sets 0..255 are the single bytes */
    int nsets, scap;
    long nelems;
    struct err *e;
};

/* grammar_build.c: the builder. Each returns 0 (or an index), or -1 with
 * b->e filled. */
int gb_init(struct gbuild *b, int kind, const char *text, size_t len, struct err *e);
void gb_free(struct gbuild *b);
/* "grammar", "regex", "choices" or "json-schema": the first word of a
 * message that has no place. */
const char *gb_kind_name(const struct gbuild *b);
int gb_fail(struct gbuild *b, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The rule named name[0..n): found, or made (not yet defined). */
int gb_rule(struct gbuild *b, const char *name, size_t n, size_t at);
/* A new rule for a group or a repetition, named after rule parent. */
int gb_gen(struct gbuild *b, int parent, size_t at);
int gb_push(struct gbuild *b, int rule, int type, int value);
/* A new empty byte set (its index), or -1. */
int gb_set_new(struct gbuild *b);
/* Replaces the item el[start..n) of rule by its repetition {min,max}
 * (max < 0: no bound), as llama.cpp rewrites it. */
int gb_repeat(struct gbuild *b, int rule, int start, long min, long max, size_t at);
/* Pushes a class: code point ranges lo[i]..hi[i] (negate: all but them). */
int gb_class(struct gbuild *b, int rule, const uint32_t *lo, const uint32_t *hi, int n, int negate,
             size_t at);
/* Pushes the UTF-8 bytes of code point c. */
int gb_codepoint(struct gbuild *b, int rule, uint32_t c);
/* Checks (every rule defined, a root, no left recursion) and compiles. */
int gb_finish(struct gbuild *b, int root, struct grammar **out);

/* grammar_run.c: stacks. A stack is a chain of frames, each a position
 * (an element that is not an end) over the frame below (-1: none). Frames
 * are interned, so that two equal stacks are one frame id: the set of stacks
 * is a set of ids. */
struct gframe {
    int pos, up;
};

struct garena {
    struct gframe *f;
    int *stamp; /* the step that last reached each frame (a seen set) */
    int n, cap;
    int *hash; /* frame id + 1, 0 empty; hcap a power of two */
    int hcap;
    int cur;    /* the step under way */
    int depth;  /* rules expanded in a row */
    int failed; /* 1 out of memory, 2 past GRAMMAR_MAX_EXPAND */
};

/* A set of stack tops (frame ids) and whether an empty stack is in it. */
struct gtops {
    int *v;
    int n, cap;
    int accept;
};

int ga_init(struct garena *a);
void ga_free(struct garena *a);
int ga_copy(struct garena *dst, const struct garena *src);
int ga_intern(struct garena *a, int pos, int up);
/* The stacks of the root rule, before any byte, into out (cleared). */
void ga_initial(const struct grammar *g, struct garena *a, struct gtops *out);
/* The stacks tops[0..n) become after byte, into out (cleared). */
void ga_step(const struct grammar *g, struct garena *a, const int *tops, int n, int byte,
             struct gtops *out);
/* 0, or -1 and e when a->failed. */
int ga_check(const struct garena *a, struct err *e);
void gtops_free(struct gtops *t);
/* Sorts and uniques out->v (the canonical form of a set). */
void gtops_sort(struct gtops *t);

/* The state of grammar.h. */
struct grammar_state {
    struct garena a;
    struct gtops tops;
};

/* grammar_json.c: a small JSON reader for schemas. */
enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
    int type;
    size_t at;   /* its first byte in the text */
    char *s;     /* J_STR: the decoded bytes; J_NUM: the number's text */
    size_t slen; /* J_STR and J_NUM: their length */
    int b;       /* J_BOOL */
    struct jval *kid;
    char **key; /* J_OBJ: each member's name (NUL-terminated, decoded) */
    size_t *klen;
    int n;
};

int json_parse(const char *text, size_t len, struct jval **out, struct err *e);
void json_free(struct jval *v);
/* The member named key of an object, or NULL. */
const struct jval *json_get(const struct jval *obj, const char *key);

#endif
