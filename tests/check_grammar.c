/* check_grammar.c - the grammar engine (src/core/grammar.h): the automaton
 * on byte strings for each front end, the mask on small vocabularies with
 * hand-computed kept sets and against token-by-token runs, the errors'
 * exact lines, and random JSON drawn from a schema checked by a validator
 * written here from RFC 8259. Each expectation names its source. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grammar.h"
#include "suites.h"

enum front { GBNF, REGEX, SCHEMA };

static struct grammar *make(enum front f, const char *text)
{
    struct err e;
    struct grammar *g = NULL;
    int rc = f == GBNF    ? grammar_from_gbnf(text, strlen(text), &g, &e)
             : f == REGEX ? grammar_from_regex(text, strlen(text), &g, &e)
                          : grammar_from_json_schema(text, strlen(text), &g, &e);
    ck_assert_msg(rc == 0, "%s: %s", text, e.msg);
    return g;
}

/* 2: s is taken and the grammar is complete after it; 1: s is a viable
 * prefix, not complete; 0: some byte of s is refused. */
static int run(const struct grammar *g, const char *s, size_t n)
{
    struct err e;
    struct grammar_state *st;
    ck_assert_int_eq(grammar_state_new(g, &st, &e), 0);
    int rc = grammar_advance(g, st, (const unsigned char *)s, n, &e);
    ck_assert_int_ge(rc, 0);
    int r = rc == 0 ? 0 : grammar_accepts(st) ? 2 : 1;
    grammar_state_free(st);
    return r;
}

#define FULL   2
#define PREFIX 1
#define NO     0
#define ck_run(g, s, want)                                                                         \
    ck_assert_msg(run(g, s, strlen(s)) == (want), "'%s': got %d, want %d", s,                      \
                  run(g, s, strlen(s)), want)

/* The one line an input is refused with. */
static void ck_error(enum front f, const char *text, const char *want)
{
    struct err e;
    struct grammar *g = NULL;
    int rc = f == GBNF    ? grammar_from_gbnf(text, strlen(text), &g, &e)
             : f == REGEX ? grammar_from_regex(text, strlen(text), &g, &e)
                          : grammar_from_json_schema(text, strlen(text), &g, &e);
    ck_assert_msg(rc == -1 && g == NULL, "'%s' was taken", text);
    ck_assert_str_eq(e.msg, want);
}

START_TEST(test_gbnf_sequences_and_repetitions)
{
    /* llama.cpp's grammars/README.md: * is zero or more, {m,n} m to n. */
    struct grammar *g = make(GBNF, "root ::= \"a\" \"b\"*\n");
    ck_run(g, "", PREFIX);
    ck_run(g, "a", FULL);
    ck_run(g, "abbb", FULL);
    ck_run(g, "ba", NO);
    ck_run(g, "abx", NO);
    grammar_free(g);
    g = make(GBNF, "root ::= \"a\"{2,3} [0-9]? # a comment\n");
    ck_run(g, "a", PREFIX);
    ck_run(g, "aa", FULL);
    ck_run(g, "aaa7", FULL);
    ck_run(g, "aaaa", NO);
    ck_run(g, "aa77", NO);
    grammar_free(g);
    /* Names with dashes, rules used before they are defined, groups. */
    g = make(GBNF, "root ::= my-word (\",\" my-word)*\nmy-word ::= [a-z]+ | \"(\" root \")\"\n");
    ck_run(g, "ab,c", FULL);
    ck_run(g, "ab,(c,d),e", FULL);
    ck_run(g, "ab,(c,d", PREFIX);
    ck_run(g, "ab,,", NO);
    ck_run(g, "ab)", NO);
    grammar_free(g);
}
END_TEST

START_TEST(test_gbnf_recursion)
{
    /* Balanced parentheses: right recursion, as the README's arithmetic. */
    struct grammar *g = make(GBNF, "root ::= p\np ::= \"(\" p? \")\"\n");
    ck_run(g, "", PREFIX);
    ck_run(g, "(())", FULL);
    ck_run(g, "((()", PREFIX);
    ck_run(g, "())", NO);
    grammar_free(g);
    /* A repetition of something that may match nothing: llama.cpp refuses
     * it as left recursion; here its expansion's seen set ends it. */
    g = make(GBNF, "root ::= (\"a\"?)* \"b\"\n");
    ck_run(g, "b", FULL);
    ck_run(g, "aaab", FULL);
    ck_run(g, "aaa", PREFIX);
    ck_run(g, "aba", NO);
    grammar_free(g);
}
END_TEST

START_TEST(test_gbnf_escapes_and_utf8)
{
    /* \x41 is 'A', \u00e9 is U+00E9 (C3 A9 in UTF-8, RFC 3629). */
    struct grammar *g = make(GBNF, "root ::= \"\\x41\\u00e9\\n\" [\\]\\-]\n");
    ck_run(g, "A\xC3\xA9\n]", FULL);
    ck_run(g, "A\xC3\xA9\n-", FULL);
    ck_run(g, "A\xC3", PREFIX);
    ck_run(g, "A\xE9", NO);
    grammar_free(g);
    /* [à-ÿ] is U+00E0..U+00FF: C3 A0..C3 BF. U+00C0 (C3 80) is outside;
     * a lone C3 is the prefix of a character that may be inside. */
    g = make(GBNF, "root ::= [à-ÿ]+\n");
    ck_run(g, "\xC3\xA9\xC3\xBF", FULL);
    ck_run(g, "\xC3", PREFIX);
    ck_run(g, "\xC3\x80", NO);
    ck_run(g, "a", NO);
    grammar_free(g);
    /* `.` is one code point of valid UTF-8: 1 to 4 bytes, no surrogate
     * (ED A0 80 would be U+D800), no overlong form (C0 80). */
    g = make(GBNF, "root ::= . \"x\"\n");
    ck_run(g, "ax", FULL);
    ck_run(g, "\xC3\xA9x", FULL);
    ck_run(g, "\xF0\x9F\x98\x80x", FULL);
    ck_run(g, "\xC3x", NO);
    ck_run(g, "\xED\xA0\x80x", NO);
    ck_run(g, "\xC0\x80x", NO);
    grammar_free(g);
    /* [^"\\] takes any character but those two, non-ASCII ones too. */
    g = make(GBNF, "root ::= \"\\\"\" [^\"\\\\]* \"\\\"\"\n");
    ck_run(g, "\"a\xC3\xA9 b\"", FULL);
    ck_run(g, "\"a\\", NO);
    grammar_free(g);
}
END_TEST

/* llama.cpp's grammars/json.gbnf, as it ships (rules over several lines
 * inside groups, a comment inside a group). */
static const char LLAMA_JSON_GBNF[] =
    "root   ::= object\n"
    "value  ::= object | array | string | number | (\"true\" | \"false\" | \"null\") ws\n\n"
    "object ::=\n  \"{\" ws (\n            string \":\" ws value\n"
    "    (\",\" ws string \":\" ws value)*\n  )? \"}\" ws\n\n"
    "array  ::=\n  \"[\" ws (\n            value\n    (\",\" ws value)*\n  )? \"]\" ws\n\n"
    "string ::=\n  \"\\\"\" (\n    [^\"\\\\\\x7F\\x00-\\x1F] |\n"
    "    \"\\\\\" ([\"\\\\bfnrt] | \"u\" [0-9a-fA-F]{4}) # escapes\n  )* \"\\\"\" ws\n\n"
    "number ::= (\"-\"? ([0-9] | [1-9] [0-9]{0,15})) (\".\" [0-9]+)? ([eE] [-+]? [0-9] "
    "[1-9]{0,15})? ws\n\n"
    "# Optional space: by convention, applied in this grammar after literal chars when allowed\n"
    "ws ::= | \" \" | \"\\n\" [ \\t]{0,20}\n";

START_TEST(test_gbnf_llama_json)
{
    /* Its root is an object; ws (one space, or a newline and up to 20
     * spaces or tabs) follows every value, strings included, so a key's
     * colon may come after a space; no comma before a closing brace. */
    struct grammar *g = make(GBNF, LLAMA_JSON_GBNF);
    ck_run(g, "{\"a\": [1, -2.5e+3, true, null, \"x\\u00e9\"], \"b\": {}}", FULL);
    ck_run(g, "{\"a\":\n\t\t1}", FULL);
    ck_run(g, "{\"a\" :", PREFIX);
    ck_run(g, "{\"a\":1,}", NO);
    ck_run(g, "{\"a\":1  ", NO);
    ck_run(g, "[1]", NO);
    ck_run(g, "{\"a\": 1", PREFIX);
    grammar_free(g);
}
END_TEST

START_TEST(test_regex)
{
    struct grammar *g = make(REGEX, "\\d{3}-\\d{4}");
    ck_run(g, "555-1234", FULL);
    ck_run(g, "55", PREFIX);
    ck_run(g, "55-", NO);
    ck_run(g, "555-12345", NO);
    grammar_free(g);
    /* Anchored at both ends: a match is the whole text. */
    g = make(REGEX, "^[a-z]+@[a-z]+\\.(com|org)$");
    ck_run(g, "ada@example.org", FULL);
    ck_run(g, "ada@example.co", PREFIX);
    ck_run(g, "ada@example.net", NO);
    ck_run(g, "Ada@example.org", NO);
    grammar_free(g);
    /* \w is [A-Za-z0-9_], \s [\t\n\v\f\r ], `.` anything but \n. */
    g = make(REGEX, "\\w+\\s.(?:x|y){1,2}");
    ck_run(g, "a_1\t!x", FULL);
    ck_run(g, "a_1 \xC3\xA9yx", FULL);
    ck_run(g, "a_1 \nx", NO);
    ck_run(g, "a-1 !x", NO);
    grammar_free(g);
    g = make(REGEX, "[^\\d\\s]*|cat|dog");
    ck_run(g, "", FULL);
    ck_run(g, "ca", FULL);
    ck_run(g, "a1", NO);
    grammar_free(g);
}
END_TEST

START_TEST(test_choices)
{
    const char *s[] = { "yes", "no", "maybe", "" };
    size_t len[] = { 3, 2, 5, 0 };
    struct err e;
    struct grammar *g;
    ck_assert_int_eq(grammar_from_choices(s, len, 3, &g, &e), 0);
    ck_run(g, "", PREFIX);
    ck_run(g, "ye", PREFIX);
    ck_run(g, "yes", FULL);
    ck_run(g, "yess", NO);
    ck_run(g, "maybe", FULL);
    ck_run(g, "n", PREFIX);
    ck_run(g, "x", NO);
    grammar_free(g);
    /* With the empty choice, nothing at all is a whole answer. */
    ck_assert_int_eq(grammar_from_choices(s, len, 4, &g, &e), 0);
    ck_run(g, "", FULL);
    grammar_free(g);
    ck_assert_int_eq(grammar_from_choices(s, len, 0, &g, &e), -1);
    ck_assert_str_eq(e.msg, "choices: the list is empty");
}
END_TEST

static const char ISSUE_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"age\":{\"type\":"
    "\"integer\"},\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},\"required\":"
    "[\"name\",\"age\"]}";

START_TEST(test_schema_object)
{
    /* llama.cpp's json-schema-to-grammar.cpp: properties in the schema's
     * order, required ones first; "space" after {, after a comma, around
     * the colon and before }, but not between a value and its comma. */
    struct grammar *g = make(SCHEMA, ISSUE_SCHEMA);
    ck_run(g, "{\"name\":\"Bo\",\"age\":12}", FULL);
    ck_run(g, "{ \"name\" : \"Bo\", \"age\": -7 }", FULL);
    ck_run(g, "{\n  \"name\": \"Bo\",\n  \"age\": 0,\n  \"tags\": [\"a\", \"b\"]\n}", FULL);
    ck_run(g, "{\"name\":\"Bo\",\"age\":12,\"tags\":[]}", FULL);
    ck_run(g, "{\"name\":\"Bo\",\"age\":12", PREFIX);
    ck_run(g, "{\"name\":\"Bo\" ,", NO);
    ck_run(g, "{\"age\":12", NO);                     /* name is required, and first */
    ck_run(g, "{\"name\":\"Bo\",\"age\":\"12\"", NO); /* an integer */
    ck_run(g, "{\"name\":\"Bo\",\"age\":012", NO);    /* RFC 8259: no leading zero */
    ck_run(g, "{\"name\":\"Bo\",\"age\":1.5", NO);
    ck_run(g, "{\"name\":\"Bo\",\"age\":1,\"x\"", NO); /* closed */
    /* RFC 8259 section 7: escapes, and no raw control character. */
    ck_run(g, "{\"name\":\"a\\\"b\\u00e9\\n\"", PREFIX);
    ck_run(g, "{\"name\":\"a\\x", NO);
    ck_run(g, "{\"name\":\"a\x01", NO);
    grammar_free(g);
}
END_TEST

START_TEST(test_schema_values)
{
    struct grammar *g = make(SCHEMA, "{\"enum\":[\"red\",\"green\",1,null]}");
    ck_run(g, "\"red\"", FULL);
    ck_run(g, "1", FULL);
    ck_run(g, "null", FULL);
    ck_run(g, "\"blue\"", NO);
    grammar_free(g);
    g = make(SCHEMA, "{\"type\":[\"number\",\"null\",\"boolean\"]}");
    ck_run(g, "-1.25e+3", FULL);
    ck_run(g, "true", FULL);
    ck_run(g, "nul", PREFIX);
    ck_run(g, "1.", PREFIX);
    ck_run(g, "\"1\"", NO);
    grammar_free(g);
    g = make(SCHEMA, "{\"type\":\"array\",\"items\":{\"const\":{\"a\":[1,true]}},\"minItems\":1,"
                     "\"maxItems\":2}");
    ck_run(g, "[{\"a\":[1,true]}]", FULL);
    ck_run(g, "[{\"a\":[1,true]}, {\"a\":[1,true]}]", FULL);
    ck_run(g, "[]", NO);
    ck_run(g, "[{\"a\":[1,true]},{\"a\":[1,true]},", NO);
    grammar_free(g);
    /* Empty properties: the empty object only. */
    g = make(SCHEMA, "{\"type\":\"object\",\"properties\":{}}");
    ck_run(g, "{ }", FULL);
    ck_run(g, "{\"", NO);
    grammar_free(g);
    /* No type: any JSON value; an object without properties: any object. */
    g = make(SCHEMA, "{\"type\":\"object\",\"properties\":{\"o\":{\"type\":\"object\"},\"v\":{}}}");
    ck_run(g, "{}", FULL);
    ck_run(g, "{\"o\":{\"k\":[1,{\"z\":null}]},\"v\":\"s\"}", FULL);
    ck_run(g, "{\"v\":[]}", FULL);
    ck_run(g, "{\"v\":[],\"o\":{}}", NO); /* the schema's order */
    grammar_free(g);
}
END_TEST

START_TEST(test_errors)
{
    ck_error(GBNF, "root ::= \"a\"\nfoo \"b\"\n",
             "grammar line 2, column 5: expected ::= after the rule name");
    ck_error(GBNF, "root ::= x\n", "grammar line 1, column 10: undefined rule 'x'");
    ck_error(GBNF, "", "grammar line 1, column 1: no rule named root");
    ck_error(GBNF, "root ::= expr\nexpr ::= expr \"+\" \"1\" | \"1\"\n",
             "grammar line 2, column 1: rule 'expr' is left-recursive: it can reach itself "
             "before any byte");
    ck_error(GBNF, "root ::= [a-", "grammar line 1, column 13: unterminated class: expected ]");
    ck_error(GBNF, "root ::= \"ab", "grammar line 1, column 10: unterminated literal: expected \"");
    ck_error(GBNF, "root ::= \"a\" \"\\q\"", "grammar line 1, column 15: unknown escape");
    ck_error(GBNF, "root ::= * \"a\"", "grammar line 1, column 10: expected an item before *");
    ck_error(GBNF, "root ::= \"a\"{1001}",
             "grammar line 1, column 17: a repetition count over 1000");
    /* llama.cpp's MAX_REPETITION_THRESHOLD: 1001 rules (the group and the
     * 1000 of its inner repetition) copied 1000 times. */
    ck_error(GBNF, "root ::= (\"a\"{0,1000}){0,1000}",
             "grammar line 1, column 23: a repetition of 1001 rules 1000 times: over 2000 in all");
    ck_error(GBNF, "root ::= \"a\"\nroot ::= \"b\"",
             "grammar line 2, column 1: rule 'root' defined twice");
    ck_error(GBNF, "root ::= (\"a\" ",
             "grammar line 1, column 15: expected ) to close the group "
             "opened at byte 10");
    ck_error(REGEX, "a)b", "regex at byte 2: unbalanced )");
    ck_error(REGEX, "x(ab", "regex at byte 2: unbalanced (");
    ck_error(REGEX, "*a", "regex at byte 1: nothing before * to repeat");
    ck_error(REGEX, "a{3,2}",
             "regex at byte 2: a repetition {3,2} whose maximum is below its "
             "minimum");
    ck_error(REGEX, "a+?", "regex at byte 3: lazy and possessive repetitions are not supported");
    ck_error(REGEX, "(?=a)", "regex at byte 2: only (?: ) groups: no lookaround or named groups");
    ck_error(REGEX, "\\q", "regex at byte 1: unknown escape \\q");
    /* Found by fuzz_grammar: a message never holds a raw control byte. */
    ck_error(REGEX, "a\\\n", "regex at byte 2: unknown escape \\ and byte 0x0A");
    ck_error(SCHEMA, "{\"type\": 3}", "json-schema at byte 10: \"type\" must be a string");
    ck_error(SCHEMA, "{\"type\":\"str\"}", "json-schema at byte 9: \"str\" is not a type");
    ck_error(SCHEMA, "{\"properties\":{\"a\":{\"$ref\":\"#/x\"}}}",
             "json-schema at byte 28: \"$ref\" is not supported");
    ck_error(SCHEMA, "{\"a\" 1}", "json-schema at byte 6: expected : after the member name");
    ck_error(SCHEMA, "{\"type\":\"array\",\"items\":[]}",
             "json-schema at byte 25: \"items\" must be a schema (tuples are not supported)");
    ck_error(SCHEMA, "{} x", "json-schema at byte 4: text after the schema's end");
    ck_error(SCHEMA, "\"abc", "json-schema at byte 1: unterminated string");
}
END_TEST

START_TEST(test_limits)
{
    /* Deep nesting is refused with a line, not a crash. */
    char *s = malloc(100000);
    size_t n = 0;
    n += (size_t)sprintf(s, "root ::= ");
    for (int i = 0; i < 200; i++)
        s[n++] = '(';
    s[n] = '\0';
    ck_error(GBNF, s, "grammar line 1, column 74: groups nested deeper than 64");
    for (int i = 0; i < 200; i++)
        s[i] = '[';
    s[200] = '\0';
    ck_error(SCHEMA, s, "json-schema at byte 65: nested deeper than 64");
    memset(s, '(', 200);
    ck_error(REGEX, s, "regex at byte 65: groups nested deeper than 64");
    /* 1001 copies of a{1000}: past 10^6 elements. */
    for (int i = 0; i < 1001; i++)
        memcpy(s + 7 * i, "a{1000}", 7);
    s[7 * 1001] = '\0';
    ck_error(REGEX, s, "regex: more than 1000000 elements (too large)");
    /* A chain of 3000 rules, each only the next: the first state needs
     * 3000 expansions in a row, past GRAMMAR_MAX_EXPAND (2000). */
    n = (size_t)sprintf(s, "root ::= r0\n");
    for (int i = 0; i < 3000; i++)
        n += (size_t)sprintf(s + n, "r%d ::= %s%d\n", i, i < 2999 ? "r" : "\"x\" #", i + 1);
    struct grammar *g = make(GBNF, s);
    struct grammar_state *st;
    struct err e;
    ck_assert_int_eq(grammar_state_new(g, &st, &e), -1);
    ck_assert_str_eq(e.msg, "grammar: more than 2000 rules expanded in a row without a byte "
                            "(nested too deep)");
    grammar_free(g);
    free(s);
}
END_TEST

START_TEST(test_describe)
{
    /* The bytes a string may go on with: printable ASCII (a quote ends it,
     * a backslash escapes), and the lead bytes of UTF-8 characters C2..F4
     * (RFC 3629), written escaped; the rules from the schema's names. */
    struct grammar *g = make(SCHEMA, ISSUE_SCHEMA);
    struct grammar_state *st;
    struct err e;
    char buf[256];
    ck_assert_int_eq(grammar_state_new(g, &st, &e), 0);
    ck_assert_int_eq(grammar_advance(g, st, (const unsigned char *)"{\"name\": \"Bo", 12, &e), 1);
    grammar_describe(g, st, buf, sizeof buf);
    ck_assert_str_eq(buf, "expecting [ -~\\xC2-\\xF4] (in string < root, char < string)");
    grammar_state_free(st);
    ck_assert_int_eq(grammar_state_new(g, &st, &e), 0);
    ck_assert_int_eq(
        grammar_advance(g, st, (const unsigned char *)"{\"name\":\"\",\"age\":7", 18, &e), 1);
    grammar_describe(g, st, buf, sizeof buf);
    ck_assert_str_eq(buf, "expecting [\\n ,0-9}] (in integral-part < root, root, space < root)");
    grammar_state_free(st);
    grammar_free(g);
    g = make(GBNF, "root ::= [\\x01\\x7F] \"\\\\\"\n");
    ck_assert_int_eq(grammar_state_new(g, &st, &e), 0);
    grammar_describe(g, st, buf, sizeof buf);
    ck_assert_str_eq(buf, "expecting [\\x01\\x7F] (in root)");
    ck_assert_int_eq(grammar_advance(g, st, (const unsigned char *)"\x7F\\", 2, &e), 1);
    grammar_describe(g, st, buf, sizeof buf);
    ck_assert_str_eq(buf, "complete: only the end may come");
    grammar_describe(g, st, buf, 5);
    ck_assert_str_eq(buf, "comp");
    grammar_state_free(st);
    grammar_free(g);
}
END_TEST

/* The mask of g at the state after prefix, over tokens tok[0..V). */
static int mask(const struct grammar *g, const char *prefix, const char *const *tok, int V,
                unsigned char *refused, struct grammar_mask_counts *c)
{
    const unsigned char **b = malloc((size_t)V * sizeof *b);
    int *len = malloc((size_t)V * sizeof *len);
    for (int i = 0; i < V; i++) {
        b[i] = (const unsigned char *)tok[i];
        len[i] = (int)strlen(tok[i]);
    }
    struct err e;
    struct grammar_trie *t;
    struct grammar_state *st;
    ck_assert_int_eq(grammar_trie_build(b, len, V, &t, &e), 0);
    free(b);
    free(len);
    ck_assert_int_eq(grammar_state_new(g, &st, &e), 0);
    ck_assert_int_eq(grammar_advance(g, st, (const unsigned char *)prefix, strlen(prefix), &e), 1);
    int kept = grammar_mask(g, st, t, refused, c, &e);
    ck_assert_int_ge(kept, 0);
    grammar_state_free(st);
    grammar_trie_free(t);
    return kept;
}

static void ck_kept(const unsigned char *refused, int V, const char *want)
{
    char got[64] = "";
    for (int i = 0; i < V; i++)
        if (!refused[i])
            sprintf(got + strlen(got), "%s%d", got[0] ? "," : "", i);
    ck_assert_str_eq(got, want);
}

START_TEST(test_mask_choices)
{
    static const char *const TOK[] = { "y", "ye",   "yes", "no", "n",  "may", "maybe", "x",
                                       "",  "yes!", "m",   "e",  "es", "be",  "o" };
    const char *s[] = { "yes", "no", "maybe" };
    size_t len[] = { 3, 2, 5 };
    struct err e;
    struct grammar *g;
    struct grammar_mask_counts c;
    unsigned char refused[15];
    ck_assert_int_eq(grammar_from_choices(s, len, 3, &g, &e), 0);
    /* By hand: at the start every prefix of yes, no, maybe: y ye yes no n
     * may maybe m (8); x, the empty token, yes! and the tails are not. */
    ck_assert_int_eq(mask(g, "", TOK, 15, refused, &c), 8);
    ck_kept(refused, 15, "0,1,2,3,4,5,6,10");
    ck_assert_int_eq(c.refused, 7);
    ck_assert_int_eq(c.empty, 1);
    ck_assert_int_eq(c.accepts, 0);
    /* After "y": e and es. After "may": be. After "yes": nothing, and the
     * end may come (the caller lets EOS through). */
    ck_assert_int_eq(mask(g, "y", TOK, 15, refused, &c), 2);
    ck_kept(refused, 15, "11,12");
    ck_assert_int_eq(mask(g, "may", TOK, 15, refused, &c), 1);
    ck_kept(refused, 15, "13");
    ck_assert_int_eq(mask(g, "yes", TOK, 15, refused, &c), 0);
    ck_assert_int_eq(c.accepts, 1);
    ck_assert_int_eq(c.nodes, 0);
    grammar_free(g);
}
END_TEST

START_TEST(test_mask_schema)
{
    static const char *const TOK[] = { "\"",      " \"",  "\"Bo\"", "1",      "{",    " ",
                                       "\"Bo\",", "\"\"", "\"a\"}", "\n\n\n", "\n\t", "" };
    struct grammar *g = make(SCHEMA, ISSUE_SCHEMA);
    struct grammar_mask_counts c;
    unsigned char refused[12];
    /* By hand, after {"name": comes space (llama.cpp's: nothing, " ", or
     * one or two newlines then up to 20 spaces or tabs) and a string, then
     * a comma (age is required): 1 and { are no string, "a"} ends the
     * object too early, three newlines are one too many. */
    ck_assert_int_eq(mask(g, "{\"name\":", TOK, 12, refused, &c), 7);
    ck_kept(refused, 12, "0,1,2,5,6,7,10");
    ck_assert_int_eq(c.empty, 1);
    /* Inside a string every plain byte (printable ASCII but " and \)
     * brings the stack set back to itself, so the subtree under "xa", all
     * plain, is kept whole without a step (xa, xab); x, xb, x" and x\ are
     * stepped (4 nodes); x"} ends the object too early, \q is no escape. */
    static const char *const IN[] = { "x", "xa", "xab", "xb", "x\"", "x\"}", "x\\q" };
    ck_assert_int_eq(mask(g, "{\"name\":\"", IN, 7, refused, &c), 5);
    ck_kept(refused, 7, "0,1,2,3,4");
    ck_assert_int_eq(c.nodes, 4);
    grammar_free(g);
}
END_TEST

/* A vocabulary of V random tokens over JSON's bytes and UTF-8 pieces. */
static char **random_vocab(int V, uint64_t seed)
{
    static const char *const PART[] = { "\"",
                                        "{",
                                        "}",
                                        "[",
                                        "]",
                                        ":",
                                        ",",
                                        " ",
                                        "\n",
                                        "a",
                                        "B",
                                        "7",
                                        "0",
                                        "-",
                                        ".",
                                        "e",
                                        "\\",
                                        "u",
                                        "n",
                                        "t",
                                        "\xC3",
                                        "\xA9",
                                        "\xE2\x82\xAC",
                                        "\t",
                                        "\x01",
                                        "ull",
                                        "rue",
                                        "name",
                                        "age",
                                        "tags" };
    char **tok = malloc((size_t)V * sizeof *tok);
    for (int i = 0; i < V; i++) {
        tok[i] = calloc(64, 1);
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        int parts = (int)(seed >> 60) % 5 + 1;
        for (int k = 0; k < parts; k++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            strcat(tok[i], PART[(seed >> 33) % (sizeof PART / sizeof PART[0])]);
        }
    }
    return tok;
}

START_TEST(test_mask_is_every_token_run_alone)
{
    /* The mask's definition: token i is kept exactly when its bytes, fed
     * one by one from the state, are all taken. The trie walk must agree
     * with 2000 separate runs, at every state of several texts. */
    static const struct {
        enum front f;
        const char *grammar, *text;
    } CASE[] = {
        { SCHEMA, ISSUE_SCHEMA, "{\"name\": \"B\\u00e9\",\n \"age\": -12, \"tags\": [\"x\"]}" },
        { REGEX, "(\\d+\\.)?[a-z\\xE9]{2,5}|\\[[^\\]]*\\]", "[\xC3\xA9\"]" },
        { GBNF,
          "root ::= \"{\" (ws kv (ws \",\" ws kv)*)? ws \"}\"\nkv ::= \"\\\"\" [a-z]+ "
          "\"\\\":\" ws (\"null\" | \"true\" | root)\nws ::= [ \\n]*\n",
          "{ \"a\":null, \"b\": {\"c\":true}}" },
    };
    int V = 2000;
    char **tok = random_vocab(V, 7);
    unsigned char *refused = malloc((size_t)V);
    for (size_t k = 0; k < sizeof CASE / sizeof CASE[0]; k++) {
        struct grammar *g = make(CASE[k].f, CASE[k].grammar);
        size_t n = strlen(CASE[k].text);
        char prefix[128];
        for (size_t cut = 0; cut <= n; cut++) {
            memcpy(prefix, CASE[k].text, cut);
            prefix[cut] = '\0';
            struct grammar_mask_counts c;
            int kept = mask(g, prefix, (const char *const *)tok, V, refused, &c), alone = 0;
            for (int i = 0; i < V; i++) {
                char both[192];
                snprintf(both, sizeof both, "%s%s", prefix, tok[i]);
                int r = tok[i][0] ? run(g, both, strlen(both)) : NO;
                ck_assert_msg((r != NO) == !refused[i], "case %zu at %zu, token %d '%s'", k, cut, i,
                              tok[i]);
                alone += r != NO;
            }
            ck_assert_int_eq(kept, alone);
            ck_assert_int_eq(c.accepts, run(g, prefix, cut) == FULL);
        }
        grammar_free(g);
    }
    for (int i = 0; i < V; i++)
        free(tok[i]);
    free(tok);
    free(refused);
}
END_TEST

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

START_TEST(test_mask_many_sets)
{
    /* 8000 choices of six letters: every trie node of their prefixes is a
     * set of its own, more than the walk's 4096 direct tables, so the memo
     * hash works too. A token is kept exactly when it is a prefix of some
     * choice (found here by binary search in the sorted choices). */
    enum { N = 8000, V = 15000 };
    char **word = malloc(N * sizeof *word), **tok = malloc(V * sizeof *tok);
    size_t len[N];
    uint64_t seed = 99;
    for (int i = 0; i < N + V; i++) {
        char *w = malloc(8);
        int n = i < N ? 6 : 4 + (int)(i % 3);
        for (int k = 0; k < n; k++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            w[k] = (char)('a' + (seed >> 33) % 7);
        }
        w[n] = '\0';
        if (i < N)
            word[i] = w, len[i] = 6;
        else
            tok[i - N] = w;
    }
    struct err e;
    struct grammar *g;
    struct grammar_mask_counts c;
    unsigned char *refused = malloc(V);
    ck_assert_int_eq(grammar_from_choices((const char *const *)word, len, N, &g, &e), 0);
    int kept = mask(g, "", (const char *const *)tok, V, refused, &c);
    ck_assert_int_gt(c.sets, 4096);
    qsort(word, N, sizeof *word, cmp_str);
    int want = 0;
    for (int i = 0; i < V; i++) {
        int lo = 0, hi = N; /* the first choice not below tok[i] */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (strcmp(word[mid], tok[i]) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        int prefix = lo < N && strncmp(word[lo], tok[i], strlen(tok[i])) == 0;
        ck_assert_msg(prefix == !refused[i], "token %d '%s'", i, tok[i]);
        want += prefix;
    }
    ck_assert_int_eq(kept, want);
    ck_assert_int_gt(want, 3000);
    ck_assert_int_lt(want, V);
    grammar_free(g);
    for (int i = 0; i < N; i++)
        free(word[i]);
    for (int i = 0; i < V; i++)
        free(tok[i]);
    free(word);
    free(tok);
    free(refused);
}
END_TEST

START_TEST(test_state_copy_and_schema_text)
{
    /* A copy goes its own way: the original keeps its stacks. */
    struct grammar *g = make(GBNF, "root ::= \"ab\" | \"ac\"\n");
    struct grammar_state *a, *b;
    struct err e;
    ck_assert_int_eq(grammar_state_new(g, &a, &e), 0);
    ck_assert_int_eq(grammar_advance(g, a, (const unsigned char *)"a", 1, &e), 1);
    ck_assert_int_eq(grammar_state_copy(a, &b, &e), 0);
    ck_assert_int_eq(grammar_advance(g, b, (const unsigned char *)"b", 1, &e), 1);
    ck_assert_int_eq(grammar_accepts(b), 1);
    ck_assert_int_eq(grammar_accepts(a), 0);
    ck_assert_int_eq(grammar_advance(g, a, (const unsigned char *)"d", 1, &e), 0);
    ck_assert_int_eq(grammar_advance(g, a, (const unsigned char *)"c", 1, &e), 1);
    grammar_state_free(a);
    grammar_state_free(b);
    grammar_free(g);
    /* The issue's schema as GBNF: llama.cpp's json-schema-to-grammar.cpp
     * shapes (its primitives' text, "-kv" rules, the optional tail). */
    char *text;
    ck_assert_int_eq(grammar_schema_to_gbnf(ISSUE_SCHEMA, strlen(ISSUE_SCHEMA), &text, &e), 0);
    ck_assert_str_eq(text,
                     "root ::= \"{\" space name-kv \",\" space age-kv ( \",\" space ( tags-kv ) )? "
                     "space \"}\"\n"
                     "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n"
                     "string ::= \"\\\"\" char* \"\\\"\"\n"
                     "char ::= [^\"\\\\\\x7F\\x00-\\x1F] | [\\\\] ([\"\\\\bfnrt] | \"u\" "
                     "[0-9a-fA-F]{4})\n"
                     "name ::= string\n"
                     "name-kv ::= \"\\\"name\\\"\" space \":\" space name\n"
                     "integer ::= (\"-\"? integral-part)\n"
                     "integral-part ::= [0] | [1-9] [0-9]{0,15}\n"
                     "age ::= integer\n"
                     "age-kv ::= \"\\\"age\\\"\" space \":\" space age\n"
                     "tags-item ::= string\n"
                     "tags ::= \"[\" space (tags-item (\",\" space tags-item)*)? space \"]\"\n"
                     "tags-kv ::= \"\\\"tags\\\"\" space \":\" space tags\n");
    free(text);
}
END_TEST

/* A JSON validator written from RFC 8259 (and RFC 3629 for the UTF-8 of
 * strings), apart from the engine's own reader: returns the byte after the
 * value at s[i], or 0 when none is there. */
struct jv {
    const unsigned char *s;
    size_t n;
};

static size_t jv_ws(const struct jv *j, size_t i)
{
    while (i < j->n && (j->s[i] == ' ' || j->s[i] == '\t' || j->s[i] == '\n' || j->s[i] == '\r'))
        i++;
    return i;
}

static size_t jv_utf8(const struct jv *j, size_t i)
{
    unsigned c = j->s[i], lo = 0x80, hi = 0xBF;
    int more = c >= 0xC2 && c <= 0xDF   ? 1
               : c >= 0xE0 && c <= 0xEF ? 2
               : c >= 0xF0 && c <= 0xF4 ? 3
                                        : -1;
    if (more < 0)
        return 0;
    lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    for (int k = 1; k <= more; k++, lo = 0x80, hi = 0xBF)
        if (i + k >= j->n || j->s[i + k] < lo || j->s[i + k] > hi)
            return 0;
    return i + 1 + (size_t)more;
}

static size_t jv_string(const struct jv *j, size_t i)
{
    for (i++; i < j->n && j->s[i] != '"';) {
        if (j->s[i] < 0x20)
            return 0;
        if (j->s[i] == '\\') {
            if (i + 1 >= j->n)
                return 0;
            if (j->s[i + 1] == 'u') {
                for (int k = 2; k < 6; k++)
                    if (i + k >= j->n || !strchr("0123456789abcdefABCDEF", j->s[i + k]) ||
                        !j->s[i + k])
                        return 0;
                i += 6;
            } else if (j->s[i + 1] && strchr("\"\\/bfnrt", j->s[i + 1])) {
                i += 2;
            } else {
                return 0;
            }
        } else if (j->s[i] >= 0x80) {
            if ((i = jv_utf8(j, i)) == 0)
                return 0;
        } else {
            i++;
        }
    }
    return i < j->n ? i + 1 : 0;
}

static size_t jv_number(const struct jv *j, size_t i)
{
    size_t at;
    if (i < j->n && j->s[i] == '-')
        i++;
    if (i < j->n && j->s[i] == '0')
        i++;
    else if (i < j->n && j->s[i] >= '1' && j->s[i] <= '9')
        while (i < j->n && j->s[i] >= '0' && j->s[i] <= '9')
            i++;
    else
        return 0;
    if (i < j->n && j->s[i] == '.') {
        for (at = ++i; i < j->n && j->s[i] >= '0' && j->s[i] <= '9';)
            i++;
        if (i == at)
            return 0;
    }
    if (i < j->n && (j->s[i] == 'e' || j->s[i] == 'E')) {
        i++;
        if (i < j->n && (j->s[i] == '+' || j->s[i] == '-'))
            i++;
        for (at = i; i < j->n && j->s[i] >= '0' && j->s[i] <= '9';)
            i++;
        if (i == at)
            return 0;
    }
    return i;
}

static size_t jv_value(const struct jv *j, size_t i)
{
    i = jv_ws(j, i);
    if (i >= j->n)
        return 0;
    if (j->s[i] == '{' || j->s[i] == '[') {
        int obj = j->s[i] == '{';
        i = jv_ws(j, i + 1);
        if (i < j->n && j->s[i] == (obj ? '}' : ']'))
            return i + 1;
        for (;;) {
            if (obj) {
                if (i >= j->n || j->s[i] != '"' || (i = jv_string(j, i)) == 0)
                    return 0;
                i = jv_ws(j, i);
                if (i >= j->n || j->s[i++] != ':')
                    return 0;
            }
            if ((i = jv_value(j, i)) == 0 || (i = jv_ws(j, i)) >= j->n)
                return 0;
            if (j->s[i] == (obj ? '}' : ']'))
                return i + 1;
            if (j->s[i] != ',')
                return 0;
            i = jv_ws(j, i + 1);
        }
    }
    if (j->s[i] == '"')
        return jv_string(j, i);
    static const char *const WORD[] = { "true", "false", "null" };
    for (int k = 0; k < 3; k++)
        if (j->n - i >= strlen(WORD[k]) && memcmp(j->s + i, WORD[k], strlen(WORD[k])) == 0)
            return i + strlen(WORD[k]);
    return jv_number(j, i);
}

static int json_valid(const unsigned char *s, size_t n)
{
    struct jv j = { s, n };
    size_t end = jv_value(&j, 0);
    return end > 0 && jv_ws(&j, end) == n;
}

START_TEST(test_validator_itself)
{
    /* The validator on RFC 8259's own examples and on broken ones. */
    static const char *const GOOD[] = { "{\"a\": [1, -0.5e+3, true, null, \"\\u00e9\xC3\xA9\"]}",
                                        " 12 ",
                                        "\"\"",
                                        "[]",
                                        "{}",
                                        "[ 1 , {\"b\" : 2 } ]" };
    static const char *const BAD[] = { "{\"a\" 1}",        "[1,]", "01",   "\"\x01\"", "\"\xC3\"",
                                       "\"\xED\xA0\x80\"", "tru",  "{} x", "1." };
    for (size_t i = 0; i < sizeof GOOD / sizeof GOOD[0]; i++)
        ck_assert_msg(json_valid((const unsigned char *)GOOD[i], strlen(GOOD[i])), "%s", GOOD[i]);
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++)
        ck_assert_msg(!json_valid((const unsigned char *)BAD[i], strlen(BAD[i])), "%s", BAD[i]);
}
END_TEST

/* Draws a text from g: at each step a byte the grammar allows, chosen by
 * the seed; past 48 bytes a closing quote, bracket or brace when one is
 * allowed, so that the walk ends. Stops when the grammar is complete and
 * nothing may follow, or (half the time) when it may end. */
static size_t draw(const struct grammar *g, uint64_t seed, unsigned char *out, size_t cap)
{
    struct err e;
    struct grammar_state *st;
    size_t n = 0;
    ck_assert_int_eq(grammar_state_new(g, &st, &e), 0);
    while (n + 1 < cap) {
        unsigned char set[32], can[256];
        int k = 0, closers = 0;
        grammar_next_bytes(g, st, set);
        for (int b = 0; b < 256; b++)
            if ((set[b >> 3] >> (b & 7)) & 1)
                closers += n > 48 && (b == '"' || b == ']' || b == '}');
        for (int b = 0; b < 256; b++)
            if ((set[b >> 3] >> (b & 7)) & 1 && (!closers || b == '"' || b == ']' || b == '}'))
                can[k++] = (unsigned char)b;
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        if (k == 0 || (grammar_accepts(st) && (seed >> 63)))
            break;
        out[n] = can[(seed >> 33) % (uint64_t)k];
        ck_assert_int_eq(grammar_advance(g, st, out + n, 1, &e), 1);
        n++;
    }
    ck_assert_msg(grammar_accepts(st), "seed %llu: the walk did not end", (unsigned long long)seed);
    grammar_state_free(st);
    return n;
}

START_TEST(test_drawn_json_is_valid)
{
    static const char *const SCHEMAS[] = {
        ISSUE_SCHEMA,
        "{\"type\":\"array\",\"items\":{\"type\":[\"number\",\"boolean\",\"null\",\"object\"]}}",
        "{}",
    };
    unsigned char buf[8192];
    for (size_t k = 0; k < sizeof SCHEMAS / sizeof SCHEMAS[0]; k++) {
        struct grammar *g = make(SCHEMA, SCHEMAS[k]);
        for (uint64_t seed = 1; seed <= 20; seed++) {
            size_t n = draw(g, seed * 7919 + k, buf, sizeof buf);
            ck_assert_msg(json_valid(buf, n), "schema %zu seed %llu: %.*s", k,
                          (unsigned long long)seed, (int)n, buf);
            /* The issue's schema: "name" is the first member. */
            size_t i = 1;
            while (k == 0 && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\t'))
                i++;
            ck_assert(k != 0 || (buf[0] == '{' && memcmp(buf + i, "\"name\"", 6) == 0));
        }
        grammar_free(g);
    }
}
END_TEST

Suite *suite_grammar(void)
{
    Suite *s = suite_create("grammar");
    TCase *tc = tcase_create("grammar");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gbnf_sequences_and_repetitions);
    tcase_add_test(tc, test_gbnf_recursion);
    tcase_add_test(tc, test_gbnf_escapes_and_utf8);
    tcase_add_test(tc, test_gbnf_llama_json);
    tcase_add_test(tc, test_regex);
    tcase_add_test(tc, test_choices);
    tcase_add_test(tc, test_schema_object);
    tcase_add_test(tc, test_schema_values);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_describe);
    tcase_add_test(tc, test_mask_choices);
    tcase_add_test(tc, test_mask_schema);
    tcase_add_test(tc, test_mask_is_every_token_run_alone);
    tcase_add_test(tc, test_mask_many_sets);
    tcase_add_test(tc, test_state_copy_and_schema_text);
    tcase_add_test(tc, test_validator_itself);
    tcase_add_test(tc, test_drawn_json_is_valid);
    suite_add_tcase(s, tc);
    return s;
}
