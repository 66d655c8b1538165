/* check_tokenizer_gemma4.c - Gemma 4's tokenizer (src/gguf/tokenizer_gemma4.c)
 * on a tiny vocabulary worked by hand: spaces as U+2581 merged in the
 * merges' order, runs of line breaks, characters without a token falling
 * back to their <0xNN> bytes, a special token, pieces and the BOS default;
 * the semantics are llama.cpp's (llama-vocab.cpp at the pinned commit,
 * gemma4). llama.cpp's own test vectors on the real vocabulary are
 * tests/vocab.sh's (tests/oracle/vocab.sh). A case of the tokenizer suite. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf/tokenizer.h"
#include "suites.h"

#define G4_N      273
#define G4_MERGES 6
#define G4_BYTE0  4              /* <0xNN> is token 4 + NN, but for 0xA9 */
#define SP        "\xe2\x96\x81" /* U+2581 */

/* The vocabulary:
 *   0 <pad>, 1 <eos>, 2 <bos> (control), 3 <unk> (unknown);
 *   4 + b: <0xBB> for every byte b (byte tokens), but 173 = 4 + 0xA9,
 *          which is "<0xa9>", a normal token: llama.cpp asks for the
 *          upper-case name, so byte 0xA9 has no token;
 *   260 ▁, 261 a, 262 b, 263 \n, 264 \n\n, 265 \n\n\n\n, 266 ▁a, 267 ab,
 *   268 ▁ab, 269 <|turn> (control), 270 ▁▁, 271 c, 272 the byte A9
 *   alone (no real vocabulary has it: a byte falls back to <0xNN> only).
 * The merges, in rank order: 0 "a b", 1 "▁ a", 2 "▁ ab", 3 "\n \n",
 * 4 "▁ ▁". (Nothing makes \n\n\n\n or a three-line-break token.) */
struct g4 {
    struct tok_spec spec;
    struct tok_str text[G4_N];
    char str[G4_N][12];
    int32_t types[G4_N];
    struct tok_str merges[G4_MERGES];
};

static void g4_set(struct g4 *v, int id, const char *s, int type)
{
    snprintf(v->str[id], sizeof v->str[id], "%s", s);
    v->text[id] = (struct tok_str){ v->str[id], strlen(s) };
    v->types[id] = type;
}

/* The tokens after the bytes, from 260 (the table above). */
static const struct {
    const char *text;
    int type;
} G4_WORDS[] = {
    { SP, TOKT_NORMAL },         { "a", TOKT_NORMAL },    { "b", TOKT_NORMAL },
    { "\n", TOKT_NORMAL },       { "\n\n", TOKT_NORMAL }, { "\n\n\n\n", TOKT_NORMAL },
    { SP "a", TOKT_NORMAL },     { "ab", TOKT_NORMAL },   { SP "ab", TOKT_NORMAL },
    { "<|turn>", TOKT_CONTROL }, { SP SP, TOKT_NORMAL },  { "c", TOKT_NORMAL },
    { "\xa9", TOKT_NORMAL },
};

static const char *const G4_MERGE_TEXT[] = { "a b", SP " a", SP " ab", "\n \n", SP " " SP };

static void g4_init(struct g4 *v)
{
    memset(v, 0, sizeof *v);
    g4_set(v, 0, "<pad>", TOKT_CONTROL), g4_set(v, 1, "<eos>", TOKT_CONTROL);
    g4_set(v, 2, "<bos>", TOKT_CONTROL), g4_set(v, 3, "<unk>", TOKT_UNKNOWN);
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, b == 0xa9 ? "<0x%02x>" : "<0x%02X>", b);
        g4_set(v, G4_BYTE0 + b, name, b == 0xa9 ? TOKT_NORMAL : TOKT_BYTE);
    }
    for (int i = 0; i < (int)(sizeof G4_WORDS / sizeof G4_WORDS[0]); i++)
        g4_set(v, 260 + i, G4_WORDS[i].text, G4_WORDS[i].type);
    for (int i = 0; i < 5; i++)
        v->merges[i] = (struct tok_str){ G4_MERGE_TEXT[i], strlen(G4_MERGE_TEXT[i]) };
    v->spec = (struct tok_spec){ .kind = TOK_GEMMA4,
                                 .n = G4_N,
                                 .text = v->text,
                                 .types = v->types,
                                 .n_merges = 5,
                                 .merges = v->merges,
                                 .bos = 2,
                                 .eos = 1,
                                 .eot = -1,
                                 .unk = 3,
                                 .pad = 0,
                                 .add_bos = 0,
                                 .add_space_prefix = 1 }; /* SentencePiece's key: ignored */
}

static struct tokenizer *g4_new(const struct g4 *v)
{
    struct err e;
    struct tokenizer *t = tokenizer_new(&v->spec, "g4.gguf", &e);
    ck_assert_msg(t != NULL, "%s", e.msg);
    return t;
}

/* The ids of text (no BOS) must be want[0..n). */
static void g4_expect(const struct tokenizer *t, const char *text, int special, const int *want,
                      int n)
{
    int ids[64], got;
    struct err e;
    ck_assert_msg(tokenizer_encode(t, text, strlen(text), 0, special, ids, 64, &got, &e) == 0, "%s",
                  e.msg);
    char a[512] = "", b[512] = "";
    for (int i = 0; i < got; i++)
        snprintf(a + strlen(a), sizeof a - strlen(a), " %d", ids[i]);
    for (int i = 0; i < n; i++)
        snprintf(b + strlen(b), sizeof b - strlen(b), " %d", want[i]);
    ck_assert_msg(strcmp(a, b) == 0, "'%s': got [%s], want [%s]", text, a, b);
}

#define G4_EXPECT(t, text, special, ...)                                                           \
    do {                                                                                           \
        static const int w_[] = { __VA_ARGS__ };                                                   \
        g4_expect(t, text, special, w_, (int)(sizeof w_ / sizeof w_[0]));                          \
    } while (0)

START_TEST(test_gemma4_merges)
{
    static struct g4 v;
    g4_init(&v);
    struct tokenizer *t = g4_new(&v);
    /* "b▁ab": the pairs b▁ (no merge), ▁a (rank 1), ab (rank 0); ab goes
     * first, which takes the a from ▁a, then ▁ + ab (rank 2): b, ▁ab. Had
     * ▁a gone first it would be b, ▁a, b (262 266 262). */
    G4_EXPECT(t, "b ab", 0, 262, 268);
    /* "▁▁a": ▁▁ is rank 4, ▁a rank 1, so ▁a first and the first ▁ is left
     * alone: ▁, ▁a (not ▁▁, a: 270 261). */
    G4_EXPECT(t, "  a", 0, 260, 266);
    /* No space in front (SentencePiece would make it ▁a, 266), whatever
     * add_space_prefix says. */
    G4_EXPECT(t, "a", 0, 261);
    /* "c▁▁": no merge joins c and ▁; ▁▁ (rank 4) does: c, ▁▁. */
    G4_EXPECT(t, "c  ", 0, 271, 270);
    tokenizer_free(t);
}
END_TEST

START_TEST(test_gemma4_newlines)
{
    static struct g4 v;
    g4_init(&v);
    struct tokenizer *t = g4_new(&v);
    /* Four line breaks are token 265, taken whole; the merges alone would
     * give \n\n \n\n (264 264), as no merge makes 265. */
    G4_EXPECT(t, "\n\n\n\n", 0, 265);
    /* Three are no token: merged as any word, "\n \n" (rank 3) from the
     * left first: \n\n, then \n (264 263). */
    G4_EXPECT(t, "\n\n\n", 0, 264, 263);
    /* A run of line breaks is a word of its own, cut from the text around
     * it: a, \n\n (whole), ▁ab (as in "b ab" above: ab, then ▁ab). */
    G4_EXPECT(t, "a\n\n ab", 0, 261, 264, 268);
    tokenizer_free(t);
}
END_TEST

START_TEST(test_gemma4_bytes)
{
    static struct g4 v;
    g4_init(&v);
    struct tokenizer *t = g4_new(&v);
    /* ü (C3 BC) is no token: its bytes' tokens 4 + 0xC3 = 199 and
     * 4 + 0xBC = 192, after a (261). */
    G4_EXPECT(t, "a\xc3\xbc", 0, 261, 199, 192);
    /* é is C3 A9: 199 for C3; A9 has only the lower-case "<0xa9>" (173),
     * which llama.cpp never looks for, and the one-byte token 272, which it
     * does not either, so it gives no id. */
    G4_EXPECT(t, "\xc3\xa9", 0, 199);
    /* An invalid byte is read as U+FFFD (EF BF BD), as llama.cpp reads it:
     * 4 + 0xEF = 243, 4 + 0xBF = 195, 4 + 0xBD = 193; then b (262). */
    G4_EXPECT(t,
              "\xff"
              "b",
              0, 243, 195, 193, 262);
    tokenizer_free(t);
}
END_TEST

START_TEST(test_gemma4_special)
{
    static struct g4 v;
    g4_init(&v);
    struct tokenizer *t = g4_new(&v);
    /* With --special <|turn> is its token (269), and no space is put after
     * it: a, <|turn>, then "▁b", which no merge joins: ▁ (260), b (262). */
    G4_EXPECT(t, "a<|turn> b", 1, 261, 269, 260, 262);
    /* Without, its characters are text, none a token: their bytes' tokens
     * 4 + '<' (0x3C) = 64, '|' 0x7C: 128, 't' 0x74: 120, 'u' 0x75: 121,
     * 'r' 0x72: 118, 'n' 0x6E: 114, '>' 0x3E: 66. */
    G4_EXPECT(t, "a<|turn> b", 0, 261, 64, 128, 120, 121, 118, 114, 66, 260, 262);
    tokenizer_free(t);
}
END_TEST

/* Pieces as llama.cpp's token_to_piece gives them for Gemma 4: U+2581 back
 * to a space, a byte token's byte, a control token's text; and the BOS
 * that llama.cpp puts first even where the file says not to. */
START_TEST(test_gemma4_pieces_bos)
{
    static struct g4 v;
    g4_init(&v);
    struct tokenizer *t = g4_new(&v);
    static const struct {
        int id;
        const char *piece;
    } P[] = { { 268, " ab" },     { 270, "  " },       { 199, "\xc3" }, { 173, "<0xa9>" },
              { 269, "<|turn>" }, { 265, "\n\n\n\n" }, { 4 + 'A', "A" } };
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        char buf[16];
        size_t n = tokenizer_piece(t, P[i].id, buf, sizeof buf);
        ck_assert_msg(n == strlen(P[i].piece) && memcmp(buf, P[i].piece, n) == 0,
                      "piece of %d: %zu bytes '%.*s'", P[i].id, n, (int)n, buf);
    }
    ck_assert_int_eq(tokenizer_add_bos(t), 1); /* the spec's add_bos 0 overridden */
    int ids[4], n;
    struct err e;
    ck_assert(tokenizer_encode(t, "a", 1, 1, 0, ids, 4, &n, &e) == 0);
    ck_assert(n == 2 && ids[0] == 2 && ids[1] == 261);
    tokenizer_free(t);
    v.spec.add_bos = -1; /* absent: on */
    t = g4_new(&v);
    ck_assert_int_eq(tokenizer_add_bos(t), 1);
    tokenizer_free(t);
    v.spec.bos = -1; /* but never without a BOS token */
    t = g4_new(&v);
    ck_assert_int_eq(tokenizer_add_bos(t), 0);
    tokenizer_free(t);
}
END_TEST

/* On valid UTF-8 whose bytes all have tokens (not é: A9 has none) the
 * pieces read back the text, spaces and line breaks too: 2,000 texts of
 * up to 24 parts drawn by a fixed LCG. */
START_TEST(test_gemma4_round_trip)
{
    static struct g4 v;
    g4_init(&v);
    struct tokenizer *t = g4_new(&v);
    static const char *const PART[] = { " ", "a", "b", "c", "\n", "\xc3\xbc", "\xe6\x97\xa5", "<" };
    uint32_t x = 12345;
    for (int k = 0; k < 2000; k++) {
        char text[128] = "", back[512];
        x = x * 1664525u + 1013904223u;
        for (int n = (int)(x >> 27) % 24 + 1; n > 0; n--) {
            x = x * 1664525u + 1013904223u;
            strcat(text, PART[(x >> 24) % 8]);
        }
        int ids[400], n;
        struct err e;
        ck_assert_msg(tokenizer_encode(t, text, strlen(text), 0, 0, ids, 400, &n, &e) == 0, "%s",
                      e.msg);
        size_t at = 0;
        for (int i = 0; i < n; i++)
            at += tokenizer_piece(t, ids[i], back + at, sizeof back - at);
        ck_assert_msg(at == strlen(text) && memcmp(back, text, at) == 0, "'%s' read back as '%.*s'",
                      text, (int)at, back);
    }
    tokenizer_free(t);
}
END_TEST

/* Any pre-tokenizer name is taken (llama.cpp makes it gemma4); merges are
 * matched to the tokens' texts as stored, so one naming no token is
 * refused as for BPE. */
START_TEST(test_gemma4_refusals)
{
    static struct g4 v;
    g4_init(&v);
    struct err e;
    struct tok_str qwen3 = { "qwen3", 5 };
    ck_assert_int_eq(tokenizer_check_pre(TOK_GEMMA4, &qwen3, "g4.gguf", &e), 0);
    ck_assert_int_eq(tokenizer_check_pre(TOK_BPE, &qwen3, "g4.gguf", &e), -1);
    v.spec.pre = qwen3;
    tokenizer_free(g4_new(&v));
    v.merges[5] = (struct tok_str){ "a d", 3 };
    v.spec.n_merges = 6;
    ck_assert_ptr_null(tokenizer_new(&v.spec, "g4.gguf", &e));
    ck_assert_str_eq(e.msg, "g4.gguf: merge 5 'a d' names a token that is not in the vocabulary");
}
END_TEST

TCase *tcase_tokenizer_gemma4(void)
{
    TCase *tc = tcase_create("gemma4");
    tcase_add_test(tc, test_gemma4_merges);
    tcase_add_test(tc, test_gemma4_newlines);
    tcase_add_test(tc, test_gemma4_bytes);
    tcase_add_test(tc, test_gemma4_special);
    tcase_add_test(tc, test_gemma4_pieces_bos);
    tcase_add_test(tc, test_gemma4_round_trip);
    tcase_add_test(tc, test_gemma4_refusals);
    return tc;
}
