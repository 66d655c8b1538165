/* grammar.h - a grammar as a mask over the vocabulary (issue 33).
 *
 * Serving engines force JSON or a grammar by refusing, before the draw,
 * every token whose bytes cannot continue the grammar. This is that engine,
 * pure: it knows bytes, not a vocabulary struct.
 *
 * One grammar, four front ends. A grammar is a set of rules over bytes, as
 * llama.cpp's GBNF (src/llama-grammar.cpp): each rule a list of alternatives,
 * each alternative a sequence of byte sets and references to rules. It runs
 * as llama.cpp runs it: a state is a set of stacks of positions (the top of
 * each stack a byte set); a byte maps the set (the stacks whose top holds the
 * byte move on, the others go); the state accepts when some stack is empty,
 * the root rule complete. doc/grammar.md lists what each front end takes.
 *
 * Bytes, not code points: a literal is its UTF-8 bytes; a class or `.` that
 * admits non-ASCII code points is compiled into the UTF-8 byte sequences of
 * those code points (valid UTF-8 only: no surrogates, no overlong forms), so
 * a token that ends inside a character is a viable prefix, as in llama.cpp's
 * partial UTF-8 matching.
 *
 * Errors are one line naming the place: "grammar line 3, column 14: ...",
 * "regex at byte 5: ...", "json-schema at byte 17: ...". Every input is
 * bounded (nesting, repetition counts, size), so none crashes.
 */
#ifndef LOGITLAB_GRAMMAR_H
#define LOGITLAB_GRAMMAR_H

#include <stddef.h>

#include "base/err.h"

/* A compiled grammar: immutable, shared by any number of states. */
struct grammar;
/* Where generation stands: the set of stacks. */
struct grammar_state;
/* The vocabulary as a byte trie, built once and kept by the caller. */
struct grammar_trie;

/* Limits that keep every input bounded (each refused with one line). */
#define GRAMMAR_MAX_NEST    64      /* groups, regex groups, JSON arrays/objects */
#define GRAMMAR_MAX_REPEAT  1000    /* m and n of {m,n} */
#define GRAMMAR_MAX_PRODUCT 2000    /* a repeated group's rules times its copies */
#define GRAMMAR_MAX_ELEMS   1000000 /* elements of all rules together */
#define GRAMMAR_MAX_EXPAND  2000    /* rules expanded in a row without a byte */

/* GBNF text, llama.cpp's format: "root ::= ..." and rules it references.
 * len bytes of text (no NUL needed). 0 and *out, or -1 and e. */
int grammar_from_gbnf(const char *text, size_t len, struct grammar **out, struct err *e);

/* A regular expression matched against the whole output (anchored at both
 * ends; a leading ^ and trailing $ are allowed and change nothing). */
int grammar_from_regex(const char *re, size_t len, struct grammar **out, struct err *e);

/* Exactly one of n byte strings (s[i], len[i] bytes; n >= 1). */
int grammar_from_choices(const char *const *s, const size_t *len, int n, struct grammar **out,
                         struct err *e);

/* A JSON schema (subset, doc/grammar.md): the grammar of the JSON texts it
 * admits, with llama.cpp's json-schema-to-grammar shapes and whitespace. */
int grammar_from_json_schema(const char *schema, size_t len, struct grammar **out, struct err *e);

/* The GBNF text a schema becomes (what grammar_from_json_schema compiles):
 * a malloc'd NUL-terminated string into *out. 0, or -1 and e. */
int grammar_schema_to_gbnf(const char *schema, size_t len, char **out, struct err *e);

/* The front ends, as the settings name them (sampling.def's grammar rows). */
enum grammar_front {
    GRAMMAR_FRONT_GBNF = 1,    /* grammar */
    GRAMMAR_FRONT_JSON_SCHEMA, /* json-schema */
    GRAMMAR_FRONT_REGEX,       /* regex */
    GRAMMAR_FRONT_CHOICE,      /* choice: the choices separated by '|' */
};

/* The grammar of text (len bytes) read by front end f (grammar_front.c):
 * the choices are split at each '|' (an empty choice is refused). 0 and
 * *out, or -1 and e. */
int grammar_from_front(int f, const char *text, size_t len, struct grammar **out, struct err *e);

void grammar_free(struct grammar *g);

/* The state before any byte. 0, or -1 and e (out of memory; a grammar
 * whose expansion passes GRAMMAR_MAX_EXPAND). */
int grammar_state_new(const struct grammar *g, struct grammar_state **out, struct err *e);
/* A copy of s (the same grammar). */
int grammar_state_copy(const struct grammar_state *s, struct grammar_state **out, struct err *e);
void grammar_state_free(struct grammar_state *s);

/* Feeds n bytes. Returns 1 when the grammar took every byte (s moved on),
 * 0 when one was refused (s unchanged: the whole string is refused), -1
 * and e on failure. */
int grammar_advance(const struct grammar *g, struct grammar_state *s, const unsigned char *b,
                    size_t n, struct err *e);

/* 1 when the root rule can be complete here: the caller lets the end of
 * generation (EOS) through only then. */
int grammar_accepts(const struct grammar_state *s);

/* The bytes that may come next: bit b of set[b / 8] (LSB first). */
void grammar_next_bytes(const struct grammar *g, const struct grammar_state *s,
                        unsigned char set[32]);

/* The state in words for a screen, at most cap - 1 bytes and a NUL:
 * `expecting [,}] or the end (in object)`: the next bytes as a class
 * (printable, escaped: no raw control or non-ASCII byte), whether the end
 * may come, and the named rules on top of the stacks ("in char < string":
 * the rule and the named rule below it). Returns the length written. */
size_t grammar_describe(const struct grammar *g, const struct grammar_state *s, char *buf,
                        size_t cap);

/* The trie of V tokens' bytes (token i: bytes[i], len[i] bytes; len 0 is
 * allowed: such a token is never kept). The arrays may be freed after. */
int grammar_trie_build(const unsigned char *const *bytes, const int *len, int V,
                       struct grammar_trie **out, struct err *e);
void grammar_trie_free(struct grammar_trie *t);

/* What one mask found. */
struct grammar_mask_counts {
    int kept;    /* tokens whose bytes may continue the grammar */
    int refused; /* the others, the empty ones included */
    int empty;   /* tokens of zero bytes (refused: EOS is the caller's, by accepts) */
    int accepts; /* grammar_accepts(s): whether EOS may come now */
    int nodes;   /* trie nodes stepped through (a refused byte prunes its subtree,
                  * a plain subtree kept whole is not walked) */
    int sets;    /* distinct stack sets met in the walk */
};

/* Marks refused[i] = 1 for every token of t whose bytes cannot continue the
 * grammar from s, 0 for the others (refused has t's V entries). A token is
 * kept when every one of its bytes is taken in turn (the grammar may be
 * complete after it, or not yet). The walk goes down the trie with the set
 * of stacks and drops a whole subtree at a refused byte; the step of a set
 * by a byte is remembered within the call (one lookup a node), and a
 * subtree of plain bytes is kept whole where they bring the set back to
 * itself (the text inside a string). Returns the number kept and fills c
 * (may be NULL), or -1 and e (out of memory, expansion limit). */
int grammar_mask(const struct grammar *g, const struct grammar_state *s,
                 const struct grammar_trie *t, unsigned char *refused,
                 struct grammar_mask_counts *c, struct err *e);

/* How many rules g has (generated ones included), for tests and reports. */
int grammar_rule_count(const struct grammar *g);

#endif
