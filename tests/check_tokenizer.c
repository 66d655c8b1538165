/* check_tokenizer.c - the model tokenizers (src/gguf/tokenizer.c) on the
 * real Llama 3 and Llama 2 vocabularies (tests/model/tokdata.c): the corpus
 * of hard strings against the ids of tests/golden/tokenizer-*.txt (written
 * by tests/tokenizer/oracle.sh: the npm packages' ids on valid UTF-8, which
 * llama.cpp's are too, and llama.cpp's on invalid bytes), hand cases whose
 * source is named at each, round trips (exact on valid UTF-8; with
 * llama.cpp's U+FFFD on invalid bytes), tiny vocabularies worked by hand,
 * long inputs, and the refusals with their messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "gguf/tokenizer.h"
#include "gguf/tokenizer_int.h"
#include "model/tokdata.h"
#include "suites.h"

#define CORPUS     "tests/tokenizer/corpus.txt"
#define GOLDEN3    "tests/golden/tokenizer-llama3.txt"
#define GOLDEN2    "tests/golden/tokenizer-llama2.txt"
#define MAX_IDS    4096
#define MAX_LINES  256
#define LINE_BYTES 1024

static struct tokdata D3, D2;
static struct tokenizer *T3, *T2;

static void load_both(void)
{
    struct err e;
    ck_assert_msg(tokdata_llama3(&D3, "data", &e) == 0, "%s", e.msg);
    ck_assert_msg((T3 = tokenizer_new(&D3.spec, "llama3", &e)) != NULL, "%s", e.msg);
    ck_assert_msg(tokdata_llama2(&D2, "data", &e) == 0, "%s", e.msg);
    ck_assert_msg((T2 = tokenizer_new(&D2.spec, "llama2", &e)) != NULL, "%s", e.msg);
}

static void free_both(void)
{
    tokenizer_free(T3);
    tokenizer_free(T2);
    tokdata_free(&D3);
    tokdata_free(&D2);
    T3 = T2 = NULL;
}

/* One corpus line: its number in the file and its bytes, escapes undone. */
struct line {
    int no;
    size_t len;
    char text[LINE_BYTES];
};

static void put_cp(struct line *l, unsigned long cp)
{
    static const unsigned char LEAD[5] = { 0, 0, 0xc0, 0xe0, 0xf0 };
    int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    for (int i = n - 1; i > 0; i--, cp >>= 6)
        l->text[l->len + (size_t)i] = (char)(0x80 | (cp & 0x3f));
    l->text[l->len] = (char)(LEAD[n] | cp);
    l->len += (size_t)n;
}

/* The corpus's escapes (its header): \n \t \r \\ \xNN \u{HEX}. */
static void corpus_unescape(const char *s, int no, struct line *l)
{
    l->no = no;
    l->len = 0;
    for (size_t i = 0; s[i] && l->len + 4 < LINE_BYTES; i++) {
        if (s[i] != '\\') {
            l->text[l->len++] = s[i];
            continue;
        }
        char c = s[++i];
        unsigned v;
        char *end;
        if (c == 'n' || c == 't' || c == 'r' || c == '\\')
            l->text[l->len++] = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : '\\';
        else if (c == 'x' && sscanf(s + i + 1, "%2x", &v) == 1)
            l->text[l->len++] = (char)v, i += 2;
        else if (c == 'u' && s[i + 1] == '{' &&
                 (put_cp(l, strtoul(s + i + 2, &end, 16)), *end == '}'))
            i = (size_t)(end - s);
        else
            ck_abort_msg(CORPUS ":%d: bad escape \\%c", no, c);
    }
}

/* Reads the corpus's lines (comments and empty lines left out). */
static int read_corpus(struct line *lines)
{
    FILE *f = fopen(CORPUS, "r");
    ck_assert_msg(f != NULL, "cannot open " CORPUS);
    char buf[LINE_BYTES];
    int n = 0, no = 0;
    while (fgets(buf, sizeof buf, f)) {
        no++;
        buf[strcspn(buf, "\n")] = '\0';
        if (buf[0] == '\0' || buf[0] == '#')
            continue;
        ck_assert_int_lt(n, MAX_LINES);
        corpus_unescape(buf, no, &lines[n++]);
    }
    fclose(f);
    return n;
}

static int valid_utf8(const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int k = utf8_decode(s + i, len - i, &cp);
        if (k == 0)
            return 0;
        i += (size_t)k;
    }
    return 1;
}

static void format_ids(const int *ids, int n, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && at + 12 < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%d", i ? " " : "", ids[i]);
}

/* Compares every entry of a golden file with the tokenizer; returns the
 * count of entries, so that the caller can check none is missing. */
static int check_golden(const struct tokenizer *t, const char *golden, const struct line *lines,
                        int n_lines)
{
    FILE *f = fopen(golden, "r");
    ck_assert_msg(f != NULL, "cannot open %s", golden);
    static char buf[65536], got[65536];
    static int ids[MAX_IDS];
    int entries = 0;
    while (fgets(buf, sizeof buf, f)) {
        int no, at;
        char mode[16];
        if (buf[0] == '#')
            continue;
        buf[strcspn(buf, "\n")] = '\0';
        ck_assert_msg(sscanf(buf, "L%d %15[a-z]: %n", &no, mode, &at) == 2, "%s: '%s'", golden,
                      buf);
        const struct line *l = lines;
        while (l < lines + n_lines && l->no != no)
            l++;
        ck_assert_msg(l < lines + n_lines, "%s: line %d is not a corpus line", golden, no);
        int n, special = strcmp(mode, "special") == 0;
        struct err e;
        ck_assert_msg(tokenizer_encode(t, l->text, l->len, 0, special, ids, MAX_IDS, &n, &e) == 0,
                      "%s", e.msg);
        format_ids(ids, n, got, sizeof got);
        ck_assert_msg(strcmp(got, buf + at) == 0, CORPUS ":%d (%s): got\n  %s\nwant (%s)\n  %s", no,
                      mode, got, golden, buf + at);
        entries++;
    }
    fclose(f);
    return entries;
}

/* Every corpus line, with and without special tokens, is in both goldens,
 * but for one in the Llama 3 golden: "\xF4\x90\x80\x80 too large", which
 * llama.cpp aborts on (test_invalid_utf8 has it). At least 8 lines hold
 * invalid UTF-8 (so llama.cpp's rule for them is what they test). */
START_TEST(test_corpus)
{
    static struct line lines[MAX_LINES];
    int n = read_corpus(lines), invalid = 0;
    for (int i = 0; i < n; i++)
        invalid += !valid_utf8(lines[i].text, lines[i].len);
    ck_assert_int_ge(n, 60);
    ck_assert_int_ge(invalid, 8);
    ck_assert_int_eq(check_golden(T3, GOLDEN3, lines, n), 2 * n - 2);
    ck_assert_int_eq(check_golden(T2, GOLDEN2, lines, n), 2 * n);
}
END_TEST

/* Encodes text (len bytes) and checks the ids against want (n_want). */
static void expect_len(const struct tokenizer *t, const char *text, size_t len, int add_bos,
                       int special, const int *want, int n_want)
{
    int ids[MAX_IDS], n;
    struct err e;
    ck_assert_msg(tokenizer_encode(t, text, len, add_bos, special, ids, MAX_IDS, &n, &e) == 0, "%s",
                  e.msg);
    char a[512], b[512];
    format_ids(ids, n, a, sizeof a);
    format_ids(want, n_want, b, sizeof b);
    ck_assert_msg(n == n_want && memcmp(ids, want, (size_t)n * sizeof *ids) == 0,
                  "'%s': got %s, want %s", text, a, b);
}

static void expect(const struct tokenizer *t, const char *text, int add_bos, int special,
                   const int *want, int n_want)
{
    expect_len(t, text, strlen(text), add_bos, special, want, n_want);
}

#define EXPECT(t, text, bos, special, ...)                                                         \
    do {                                                                                           \
        static const int want_[] = { __VA_ARGS__ };                                                \
        expect(t, text, bos, special, want_, (int)(sizeof want_ / sizeof want_[0]));               \
    } while (0)

START_TEST(test_llama3_hand)
{
    struct err e;
    /* The and the lessons' ids: " Paris" is one token. */
    EXPECT(T3, " Paris", 0, 0, 12366);
    EXPECT(T3, " Paris", 1, 0, 128000, 12366);
    EXPECT(T3, "The capital of France is", 0, 0, 791, 6864, 315, 9822, 374);
    /* <|eot_id|> is 128009 only with special; as text, llama3-tokenizer-js
     * 1.2.0 (given a special-token expression that never matches) splits it
     * into "<|", "eot", "_id", "|>" and merges those to 27 91 68 354 851 91 29. */
    EXPECT(T3, "<|eot_id|>", 0, 1, 128009);
    EXPECT(T3, "<|eot_id|>", 0, 0, 27, 91, 68, 354, 851, 91, 29);
    EXPECT(T3, "<|eot_id|>", 1, 1, 128000, 128009);
    /* llama3-tokenizer-js's own test table (its defaultTests). */
    EXPECT(T3, "grabbed", 0, 0, 59312, 2788);
    EXPECT(T3, "           grabbed", 0, 0, 1881, 30418);
    EXPECT(T3, "\n", 0, 0, 198);
    EXPECT(T3, " \n", 0, 0, 720);
    EXPECT(T3, "\ttabs\t\t\t\tout here", 0, 0, 3324, 3518, 573, 14294, 1618);
    EXPECT(T3, "ax\n####\nboo", 0, 0, 710, 198, 71050, 34093);
    EXPECT(T3, "\xe9\x95\x87", 0, 0, 104643);            /* 镇 */
    EXPECT(T3, "\xf0\x9f\xa6\x99", 0, 0, 9468, 99, 247); /* 🦙 */
    EXPECT(T3, "This is a test sentence.", 0, 0, 2028, 374, 264, 1296, 11914, 13);
    /* Digits go in threes (\p{N}{1,3}): "111" is token 5037, "1" is 16; the
     * corpus's "1234567" is 4513 10961 22. */
    EXPECT(T3, "1111111", 0, 0, 5037, 5037, 16);
    EXPECT(T3, "1234567", 0, 0, 4513, 10961, 22);
    /* SmolLM's pre-tokenizer cuts every digit alone ("1" to "7" are 16 to
     * 22, as "7" in the line above). */
    struct tok_spec smol = D3.spec;
    smol.pre = (struct tok_str){ "smollm", 6 };
    struct tokenizer *ts = tokenizer_new(&smol, "smollm", &e);
    ck_assert_msg(ts != NULL, "%s", e.msg);
    EXPECT(ts, "1234567", 0, 0, 16, 17, 18, 19, 20, 21, 22);
    tokenizer_free(ts);
    /* Nothing, and BOS alone. */
    EXPECT(T3, "", 1, 0, 128000);
    int n = -1;
    ck_assert_int_eq(tokenizer_encode(T3, "", 0, 0, 0, NULL, 0, &n, &e), 0);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(tokenizer_count(T3), 128256);
    ck_assert_int_eq(tokenizer_bos(T3), 128000);
    ck_assert_int_eq(tokenizer_add_bos(T3), 1);
    ck_assert_int_eq(tokenizer_type(T3, 128009), TOKT_CONTROL);
    ck_assert_int_eq(tokenizer_type(T3, 12366), TOKT_NORMAL);
}
END_TEST

/* GPT-4o's pre-tokenizer (Llama 4, Phi-4-mini) on Llama 3's vocabulary. Every id here is
 * llama.cpp's own at the pinned commit: tests/oracle/llama_tokenize.cpp copies
 * models/ggml-vocab-llama-bpe.gguf (the vocabulary of D3) with tokenizer.ggml.pre "gpt-4o",
 * through llama.cpp's GGUF code, and tokenizes each text there with llama_tokenize, add_special
 * and parse_special off. The ids under Llama 3's split (T3) are llama.cpp's on the file as it
 * ships, and those of marks taken for letters its "granite-embed-multi-97m", GPT-4o's
 * expression with \p{M} beside \p{L}: so each of the last cases fails on a wrong split. */
START_TEST(test_gpt4o_hand)
{
    struct err e;
    struct tok_spec spec = D3.spec;
    spec.pre = (struct tok_str){ "gpt-4o", 6 };
    spec.add_bos = -1; /* absent: llama.cpp puts no BOS first for this family */
    struct tokenizer *t = tokenizer_new(&spec, "gpt-4o", &e);
    ck_assert_msg(t != NULL, "%s", e.msg);
    ck_assert_int_eq(tokenizer_add_bos(t), 0);
    EXPECT(t, "Hello World", 0, 0, 9906, 4435);
    EXPECT(t, "HELLOworld", 0, 0, 51812, 1623, 14957);
    EXPECT(t, "don't DON'T", 0, 0, 15357, 956, 45373, 17773);
    EXPECT(t,
           "\xc3\x9c"
           "berStra\xc3\x9f"
           "e",
           0, 0, 53591, 655, 77414, 24352); /* ÜberStraße */
    EXPECT(t, "camelCaseWord", 0, 0, 94421, 4301, 11116);
    EXPECT(t, "1234567", 0, 0, 4513, 10961, 22);
    EXPECT(t, "  spaces\n\n\tnewlines", 0, 0, 220, 12908, 271, 8808, 8128);
    EXPECT(t, "a/b\r\n/", 0, 0, 64, 3554, 319, 14);
    /* "Hello Привет 你好 مرحبا שלום" */
    EXPECT(t,
           "Hello \xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82 \xe4\xbd\xa0\xe5\xa5\xbd "
           "\xd9\x85\xd8\xb1\xd8\xad\xd8\xa8\xd8\xa7 \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d",
           0, 0, 9906, 80584, 28089, 8341, 118195, 53901, 111895, 103645, 88898, 50391, 37769, 251);
    EXPECT(t, "e\xcc\x81", 0, 0, 68, 54939);                /* e + U+0301 */
    EXPECT(t, "cafe\xcc\x81s", 0, 0, 936, 1897, 54939, 82); /* cafe + U+0301 + s */
    /* "🦙 llama 🦙🦙!" */
    EXPECT(t, "\xf0\x9f\xa6\x99 llama \xf0\x9f\xa6\x99\xf0\x9f\xa6\x99!", 0, 0, 9468, 99, 247,
           94776, 11410, 99, 247, 9468, 99, 247, 0);
    /* "你好世界，你好。" */
    EXPECT(t,
           "\xe4\xbd\xa0\xe5\xa5\xbd\xe4\xb8\x96\xe7\x95\x8c\xef\xbc\x8c\xe4\xbd\xa0\xe5\xa5\xbd"
           "\xe3\x80\x82",
           0, 0, 57668, 53901, 102616, 104660, 53901, 1811);
    /* Words cut where the case turns ("get", "Element", "By", "Id"), and punctuation that
     * takes the line break and slash after it (")/\n/", then "y"); Llama 3 keeps the
     * letters whole and takes "/y". */
    EXPECT(t, "getElementById", 0, 0, 456, 1726, 1383, 769);
    EXPECT(T3, "getElementById", 0, 0, 76757, 2787);
    EXPECT(t, "XMLHttpRequest", 0, 0, 10833, 2977, 1939);
    EXPECT(T3, "XMLHttpRequest", 0, 0, 10833, 27459);
    EXPECT(t, "x)/\n/y", 0, 0, 87, 5738, 198, 14, 88);
    EXPECT(T3, "x)/\n/y", 0, 0, 87, 5738, 198, 27589);
    /* A mark is no letter: it starts a punctuation word (" " + U+0301, then "t"; U+0301
     * U+0301, then "t"), where marks as letters make " \u0301t" (220 122095) and "e\u0301\u0301t"
     * (68 54939 122095). */
    EXPECT(t, " \xcc\x81t", 0, 0, 220, 54939, 83);
    EXPECT(t, "e\xcc\x81\xcc\x81t", 0, 0, 68, 54939, 54939, 83);
    /* A letter outside ASCII is of both cases. "џЭ" (U+045F U+042D, lower then upper) is one
     * word, the token 126257, as Э may be of the lower-case part; "ЎыџNЎыџN" is the word
     * "ЎыџNЎыџ" (ы and џ, lower case in Unicode, among the capitals) and "N", and its first
     * token 126523 is "ЎыџN". Read as the tokenizer.json's \p{Lu} and \p{Ll}, "џ" and "Э"
     * would be two words, and "Ўыџ" would end before the N. */
    EXPECT(t, "\xd1\x9f\xd0\xad", 0, 0, 126257);
    EXPECT(t, "\xd0\x8e\xd1\x8b\xd1\x9fN\xd0\x8e\xd1\x8b\xd1\x9fN", 0, 0, 126523, 116072, 4655,
           100259, 45);
    /* A word of 16,384 letters, 2,048 times "aaaaaaaa" (70540) in llama.cpp: longer than
     * PCRE2's JIT stack takes for the lookaheads' repeated group, so the interpreter cuts it
     * (tokenizer_bpe.c's next_match). */
    static char word[16384];
    static int want[2048];
    memset(word, 'a', sizeof word);
    for (int i = 0; i < 2048; i++)
        want[i] = 70540;
    expect_len(t, word, sizeof word, 0, 0, want, 2048);
    tokenizer_free(t);
    /* llama.cpp's other names for the family, and MiniMax-M2's, which shares its split. */
    static const char *const alias[] = { "llama4", "kanana2", "talkie", "minimax-m2" };
    for (int i = 0; i < 4; i++) {
        spec.pre = (struct tok_str){ alias[i], strlen(alias[i]) };
        ck_assert_msg((t = tokenizer_new(&spec, alias[i], &e)) != NULL, "%s", e.msg);
        EXPECT(t, "x)/\n/y", 0, 0, 87, 5738, 198, 14, 88);
        ck_assert_int_eq(tokenizer_add_bos(t), 0);
        tokenizer_free(t);
    }
}
END_TEST

START_TEST(test_llama2_hand)
{
    /* llama-tokenizer-js's own test table (with BOS, as it has them). */
    EXPECT(T2, "grabbed", 1, 0, 1, 2646, 1327, 287);
    EXPECT(T2, " grabbed", 1, 0, 1, 29871, 2646, 1327, 287);
    EXPECT(T2, "           grabbed", 1, 0, 1, 9651, 2646, 1327, 287);
    EXPECT(T2, "\n", 1, 0, 1, 29871, 13);
    EXPECT(T2, " \n", 1, 0, 1, 259, 13);
    EXPECT(T2, "ax\n####\nboo", 1, 0, 1, 4853, 13, 4136, 13, 833, 29877);
    EXPECT(T2, "\xf0\x9f\xa6\x99", 1, 0, 1, 29871, 243, 162, 169, 156); /* 🦙 as bytes */
    /* Special tokens with special set, and the space SentencePiece puts in
     * front of the text after each of them (llama.cpp's rule): "▁Hello" is
     * 15043 (the package's encode("Hello")). As text (the corpus has the
     * line), they are their characters. */
    EXPECT(T2, "<s>Hello</s>", 0, 1, 1, 15043, 2);
    EXPECT(T2, "<s>hi", 1, 1, 1, 1, 7251);
    EXPECT(T2, "abc", 0, 0, 25638); /* "▁abc": the package's encode("abc") */
    ck_assert_int_eq(tokenizer_count(T2), 32000);
    ck_assert_int_eq(tokenizer_bos(T2), 1);
    ck_assert_int_eq(tokenizer_type(T2, 3), TOKT_BYTE);
    ck_assert_int_eq(tokenizer_type(T2, 0), TOKT_UNKNOWN);
}
END_TEST

#define EXPECT_LEN(t, text, ...)                                                                   \
    do {                                                                                           \
        static const int want_[] = { __VA_ARGS__ };                                                \
        expect_len(t, text, sizeof text - 1, 0, 0, want_, (int)(sizeof want_ / sizeof want_[0]));  \
    } while (0)

/* Invalid UTF-8 as llama.cpp reads it (tokenizer.h). Every id here is
 * llama.cpp's own: tests/oracle's llama_oracle on a model generated with
 * each vocabulary, these texts as its prompts (BOS left out). */
START_TEST(test_invalid_utf8)
{
    /* Llama 3: a byte that starts no whole sequence is one U+FFFD ("�" is
     * 5809, "���" 58432, "����" 24378), whatever follows: the 0xFF alone,
     * the 0xC3 at the end, F0 9F A6 (an emoji cut short: three of them),
     * F8 (which starts nothing) and its four continuation bytes. */
    EXPECT(T3,
           "a\xff"
           "b",
           0, 0, 64, 5809, 65);
    EXPECT(T3, "!\xff!", 0, 0, 0, 5809, 0);
    EXPECT(T3, "caf\xc3", 0, 0, 69896, 5809);
    EXPECT(T3, "\xf0\x9f\xa6", 0, 0, 58432);
    EXPECT(T3, "\xf8\x88\x80\x80\x80", 0, 0, 24378, 5809);
    /* An overlong form is the character it spells: C0 AF is "/" (14), and
     * E0 80 80 is NUL, as "\0x" is 188 87; a surrogate keeps its bytes
     * (ED A0 80 is 169 64319, as in the corpus's line). */
    EXPECT(T3, "\xc0\xaf", 0, 0, 14);
    EXPECT_LEN(T3, "\xe0\x80\x80x", 188, 87);
    EXPECT_LEN(T3, "\0x", 188, 87);
    EXPECT(T3, "x\xed\xa0\x80y", 0, 0, 87, 169, 64319, 88);
    EXPECT(T3, "\xed\xa0\x80\xed\xb0\x80", 0, 0, 169, 64319, 169, 108, 222);
    /* Past U+10FFFF llama.cpp aborts (its UTF-8 writer throws out of
     * llama_tokenize), so this one is ours: F4 90 80 80 is four U+FFFD, the
     * ids llama.cpp gives "\xef\xbf\xbd" four times and " too large". */
    EXPECT(T3, "\xf4\x90\x80\x80 too large", 0, 0, 24378, 2288, 3544);
    EXPECT(T3,
           "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
           " too large",
           0, 0, 24378, 2288, 3544);
    /* Llama 2: a symbol takes as many bytes as its first byte announces,
     * cut at the end; no piece is such a symbol, so it is its byte tokens
     * (3 + the byte). 0xFF takes "abc" along; 0xC3 takes the first byte of
     * the space's U+2581, whose other two bytes are then alone, and "b"
     * (29890) comes without its space. */
    EXPECT(T2, "\xff", 0, 0, 29871, 258);
    EXPECT(T2,
           "\xff"
           "abc",
           0, 0, 29871, 258, 100, 101, 102);
    EXPECT(T2, "a\xc3 b", 0, 0, 263, 198, 229, 153, 132, 29890);
    EXPECT(T2, "\xc0\xaf", 0, 0, 29871, 195, 178);
    EXPECT(T2, "\xf0\x9f\xa6", 0, 0, 29871, 243, 162, 169);
    EXPECT(T2, "\xf8\x88\x80\x80\x80", 0, 0, 29871, 251, 139, 131, 131, 131);
    EXPECT(T2, "\xed\xa0\x80", 0, 0, 29871, 240, 163, 131);
}
END_TEST

/* Pieces: the raw bytes of a token, snprintf-style. */
START_TEST(test_pieces)
{
    char buf[64];
    size_t n = tokenizer_piece(T3, 12366, buf, sizeof buf);
    ck_assert(n == 6 && memcmp(buf, " Paris", 6) == 0);
    n = tokenizer_piece(T3, 128009, buf, sizeof buf);
    ck_assert(n == 10 && memcmp(buf, "<|eot_id|>", 10) == 0);
    n = tokenizer_piece(T3, 198, buf, sizeof buf); /* "Ċ": a line break */
    ck_assert(n == 1 && buf[0] == '\n');
    ck_assert_uint_eq(tokenizer_piece(T3, 12366, buf, 3), 6); /* cut, the full length told */
    ck_assert(memcmp(buf, " Pa", 3) == 0);
    ck_assert_uint_eq(tokenizer_piece(T3, 128256, buf, sizeof buf), 0);
    ck_assert_uint_eq(tokenizer_piece(T3, -1, buf, sizeof buf), 0);
    n = tokenizer_piece(T2, 29871, buf, sizeof buf); /* "▁" */
    ck_assert(n == 1 && buf[0] == ' ');
    n = tokenizer_piece(T2, 3 + 0x41, buf, sizeof buf); /* <0x41> */
    ck_assert(n == 1 && buf[0] == 'A');
    n = tokenizer_piece(T2, 15043, buf, sizeof buf);
    ck_assert(n == 6 && memcmp(buf, " Hello", 6) == 0);
    n = tokenizer_piece(T2, 1, buf, sizeof buf);
    ck_assert(n == 3 && memcmp(buf, "<s>", 3) == 0);
}
END_TEST

/* The bytes the pieces of text's ids read back, into out. */
static size_t decode(const struct tokenizer *t, const char *text, size_t len, int special,
                     char *out, size_t room)
{
    static int ids[MAX_IDS * 16];
    int n;
    struct err e;
    ck_assert_msg(tokenizer_encode(t, text, len, 0, special, ids, MAX_IDS * 16, &n, &e) == 0, "%s",
                  e.msg);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t k = tokenizer_piece(t, ids[i], out + at, room - at);
        ck_assert_uint_le(at + k, room);
        at += k;
    }
    return at;
}

/* SentencePiece's escaped form of s: U+2581 for each space, and one in
 * front when prefix; into out (room for 3 x len + 3). */
static size_t spm_escaped(const char *s, size_t len, int prefix, char *out)
{
    size_t n = 0;
    if (prefix)
        memcpy(out, "\xe2\x96\x81", 3), n = 3;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ')
            memcpy(out + n, "\xe2\x96\x81", 3), n += 3;
        else
            out[n++] = s[i];
    }
    return n;
}

#define RT_ROOM (3 * LINE_BYTES * 16 + 8)

/* What the pieces of text's ids read back. Llama 3: the text as llama.cpp
 * reads it (tokdata_llama_text), which is the text itself when it is valid
 * UTF-8, and has a U+FFFD for each invalid byte otherwise. Llama 2 keeps
 * every byte: the pieces are the escaped text (U+2581 read as a space in
 * a piece), and when the text is valid UTF-8 they read back exactly the
 * text with the space in front, a U+2581 in the text read as a space. */
static void round_trip(const char *text, size_t len, const char *what)
{
    static char out[RT_ROOM], want[RT_ROOM], a[3 * RT_ROOM], b[3 * RT_ROOM];
    int valid = valid_utf8(text, len);
    size_t w = tokdata_llama_text(text, len, want);
    ck_assert_msg(!valid || (w == len && memcmp(want, text, len) == 0), "%s: the reference", what);
    for (int special = 0; special < 2; special++) {
        size_t n = decode(T3, text, len, special, out, sizeof out);
        ck_assert_msg(n == w && memcmp(out, want, w) == 0, "%s: Llama 3 (special %d)", what,
                      special);
    }
    size_t n = decode(T2, text, len, 0, out, sizeof out);
    size_t na = spm_escaped(out, n, 0, a), nb = spm_escaped(text, len, len > 0, b);
    ck_assert_msg(na == nb && memcmp(a, b, na) == 0, "%s: Llama 2, escaped", what);
    if (!valid || len == 0)
        return;
    w = 0;
    want[w++] = ' ';
    for (size_t i = 0; i < len; i++) {
        if (i + 2 < len && memcmp(text + i, "\xe2\x96\x81", 3) == 0)
            want[w++] = ' ', i += 2;
        else
            want[w++] = text[i];
    }
    ck_assert_msg(n == w && memcmp(out, want, w) == 0, "%s: Llama 2", what);
}

/* Every corpus line, and the U+FFFD by hand: "a\xFF" reads back as "a�". */
START_TEST(test_round_trip_corpus)
{
    static struct line lines[MAX_LINES];
    int n = read_corpus(lines);
    for (int i = 0; i < n; i++) {
        char what[32];
        snprintf(what, sizeof what, CORPUS ":%d", lines[i].no);
        round_trip(lines[i].text, lines[i].len, what);
    }
    char out[16];
    size_t k = decode(T3, "a\xff", 2, 0, out, sizeof out);
    ck_assert(k == 4 && memcmp(out, "a\xef\xbf\xbd", 4) == 0);
    k = tokdata_llama_text("\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80", 9, out);
    ck_assert(k == 16 &&
              memcmp(out, "/\xed\xa0\x80\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 16) ==
                  0);
}
END_TEST

/* Random bytes: a mix of any byte, ASCII, pieces of UTF-8 and special-token
 * text, from a fixed xorshift seed. */
START_TEST(test_round_trip_random)
{
    static const char *const BITS[] = { " ",
                                        "  ",
                                        "\n",
                                        "a",
                                        "Z",
                                        "9",
                                        "'s",
                                        "\xc3\xa9",
                                        "\xe4\xb8",
                                        "\xad",
                                        "\xf0\x9f\xa6\x99",
                                        "<|eot_id|>",
                                        "<s>",
                                        "\xe2\x96\x81",
                                        "<|",
                                        "\t",
                                        "\r\n",
                                        ".",
                                        "\xff" };
    uint64_t x = 0x9e3779b97f4a7c15u;
    char text[512];
    for (int round = 0; round < 400; round++) {
        size_t len = 0;
        while (len < 200) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            if (x % 64 == 0)
                break;
            const char *b = BITS[(x >> 8) % (sizeof BITS / sizeof BITS[0])];
            if ((x >> 20) % 3 == 0)
                text[len++] = (char)(x >> 32);
            else
                memcpy(text + len, b, strlen(b)), len += strlen(b);
        }
        char what[32];
        snprintf(what, sizeof what, "random round %d", round);
        round_trip(text, len, what);
    }
}
END_TEST

/* Tiny vocabularies, worked by hand. BPE: the 256 bytes in GPT-2's spelling
 * (ids 0-255, the byte's value), then "ab" 256, "bc" 257, "abc" 258, "aa"
 * 259. SPM: <unk> <s> </s>, <0x00>..<0xFF> (3-258), "▁" 259, "a" 260, "b"
 * 261, "ab" 262, "▁a" 263. */
#define TINY_BPE 260
#define TINY_SPM 264

struct tiny {
    struct tok_spec spec;
    struct tok_str text[TINY_SPM];
    struct tok_str merges[4];
    float scores[TINY_SPM];
    int32_t types[TINY_SPM];
    char str[TINY_SPM][8];
};

static void tiny_set(struct tiny *t, int id, const char *s)
{
    snprintf(t->str[id], sizeof t->str[id], "%s", s);
    t->text[id] = (struct tok_str){ t->str[id], strlen(s) };
}

/* merges: up to 4 strings "l r", NULL-terminated. */
static void tiny_bpe(struct tiny *t, const char *pre, const char *const *merges)
{
    memset(t, 0, sizeof *t);
    for (unsigned b = 0; b < 256; b++)
        t->text[b] = (struct tok_str){ t->str[b], tokdata_spell_byte(b, t->str[b]) };
    tiny_set(t, 256, "ab"), tiny_set(t, 257, "bc"), tiny_set(t, 258, "abc"), tiny_set(t, 259, "aa");
    int n = 0;
    while (merges[n])
        t->merges[n] = (struct tok_str){ merges[n], strlen(merges[n]) }, n++;
    t->spec = (struct tok_spec){ .kind = TOK_BPE,
                                 .pre = { pre, pre ? strlen(pre) : 0 },
                                 .n = TINY_BPE,
                                 .text = t->text,
                                 .n_merges = n,
                                 .merges = t->merges,
                                 .bos = -1,
                                 .eos = -1,
                                 .eot = -1,
                                 .unk = -1,
                                 .pad = -1 };
}

static void tiny_spm(struct tiny *t, float score_ab, float score_sa)
{
    memset(t, 0, sizeof *t);
    tiny_set(t, 0, "<unk>"), tiny_set(t, 1, "<s>"), tiny_set(t, 2, "</s>");
    t->types[0] = TOKT_UNKNOWN, t->types[1] = t->types[2] = TOKT_CONTROL;
    for (int b = 0; b < 256; b++) {
        snprintf(t->str[3 + b], 8, "<0x%02X>", b);
        t->text[3 + b] = (struct tok_str){ t->str[3 + b], 6 };
        t->types[3 + b] = TOKT_BYTE;
    }
    tiny_set(t, 259, "\xe2\x96\x81"), tiny_set(t, 260, "a"), tiny_set(t, 261, "b");
    tiny_set(t, 262, "ab"), tiny_set(t, 263,
                                     "\xe2\x96\x81"
                                     "a");
    for (int i = 259; i < TINY_SPM; i++)
        t->types[i] = TOKT_NORMAL, t->scores[i] = -10;
    t->scores[262] = score_ab, t->scores[263] = score_sa;
    t->spec = (struct tok_spec){ .kind = TOK_SPM,
                                 .n = TINY_SPM,
                                 .text = t->text,
                                 .scores = t->scores,
                                 .types = t->types,
                                 .bos = 1,
                                 .eos = 2,
                                 .eot = -1,
                                 .unk = 0,
                                 .pad = -1,
                                 .add_bos = 1,
                                 .add_space_prefix = 1 };
}

static struct tokenizer *tiny_new(const struct tiny *t)
{
    struct err e;
    struct tokenizer *tk = tokenizer_new(&t->spec, "tiny.gguf", &e);
    ck_assert_msg(tk != NULL, "%s", e.msg);
    return tk;
}

static void tiny_bpe_case(const char *pre, const char *const *merges, const char *text,
                          const int *want, int n_want)
{
    static struct tiny t;
    tiny_bpe(&t, pre, merges);
    struct tokenizer *tk = tiny_new(&t);
    expect(tk, text, 0, 0, want, n_want);
    tokenizer_free(tk);
}

#define TINY_BPE_CASE(pre, text, merges, ...)                                                      \
    do {                                                                                           \
        static const char *const m_[] = { merges, NULL };                                          \
        static const int w_[] = { __VA_ARGS__ };                                                   \
        tiny_bpe_case(pre, m_, text, w_, (int)(sizeof w_ / sizeof w_[0]));                         \
    } while (0)
#define M2(a, b)    a, b
#define M3(a, b, c) a, b, c

/* The pair that comes first in the merges merges first, wherever it is;
 * equal pairs from the left; a word that is a token is taken whole only by
 * llama-bpe (ignore_merges). 'a' is 97, 'c' 99. */
START_TEST(test_tiny_bpe)
{
    TINY_BPE_CASE(NULL, "abc", M3("b c", "a b", "a bc"), 258); /* bc first, then a+bc */
    TINY_BPE_CASE(NULL, "abc", M3("a b", "b c", "ab c"), 258); /* ab first, then ab+c */
    TINY_BPE_CASE(NULL, "abc", M2("a b", "b c"), 256, 99);     /* ab first; ab+c is no merge */
    TINY_BPE_CASE(NULL, "abc", M2("b c", "a b"), 97, 257);     /* bc first; a+bc is no merge */
    TINY_BPE_CASE(NULL, "aaa", "a a", 259, 97);                /* the left pair first */
    TINY_BPE_CASE(NULL, "aaaa", "a a", 259, 259);
    TINY_BPE_CASE(NULL, "abc", "a b", 256, 99);                  /* default: merges run */
    TINY_BPE_CASE("llama-bpe", "abc", "a b", 258);               /* llama-bpe: abc is a token */
    TINY_BPE_CASE("default", "ab abc", "a b", 256, 32, 256, 99); /* ' ' is its own token here */
}
END_TEST

/* SentencePiece: the best-scoring pair first, the left one on a tie. "ab"
 * with the space in front is "▁" "a" "b": the pairs are "▁a" and "ab". */
START_TEST(test_tiny_spm)
{
    static struct tiny t;
    tiny_spm(&t, -1, -2); /* ab scores higher: ▁ + ab, and "▁ab" is no token */
    struct tokenizer *tk = tiny_new(&t);
    EXPECT(tk, "ab", 0, 0, 259, 262);
    EXPECT(tk, "ab", 1, 0, 1, 259, 262);
    EXPECT(tk, "c", 0, 0, 259, 3 + 'c'); /* no piece "c": its byte */
    EXPECT(tk, "<s>ab", 0, 1, 1, 259, 262);
    EXPECT(tk, "<s>ab", 0, 0, 259, 3 + '<', 3 + 's', 3 + '>', 262);
    tokenizer_free(tk);
    tiny_spm(&t, -2, -1); /* ▁a scores higher */
    tk = tiny_new(&t);
    EXPECT(tk, "ab", 0, 0, 263, 261);
    tokenizer_free(tk);
    tiny_spm(&t, -1, -1); /* a tie: the left pair, ▁a */
    tk = tiny_new(&t);
    EXPECT(tk, "ab", 0, 0, 263, 261);
    tokenizer_free(tk);
    t.spec.add_space_prefix = 0;
    tk = tiny_new(&t);
    EXPECT(tk, "ab", 0, 0, 262);
    EXPECT(tk, "a b", 0, 0, 260, 259, 261); /* "a▁" and "▁b" are no tokens */
    tokenizer_free(tk);
}
END_TEST

/* Builds spec and checks that it is refused with exactly want. */
static void refused(const struct tok_spec *spec, const char *want)
{
    struct err e;
    err_clear(&e);
    struct tokenizer *tk = tokenizer_new(spec, "x.gguf", &e);
    ck_assert_msg(tk == NULL, "accepted; want '%s'", want);
    ck_assert_int_eq(e.code, ERR_USAGE);
    ck_assert_str_eq(e.msg, want);
}

static void refused_bpe(const char *pre, const char *const *merges, const char *want)
{
    static struct tiny t;
    tiny_bpe(&t, pre, merges);
    refused(&t.spec, want);
}

START_TEST(test_refusals)
{
    static const char *const unknown[] = { "a b", "a zz", NULL }, *const none[] = { "c d", NULL },
                             *const nospace[] = { "ab", NULL }, *const ok[] = { "a b", NULL };
    refused_bpe(NULL, unknown,
                "x.gguf: merge 1 'a zz' names a token that is not in the vocabulary");
    refused_bpe(NULL, none, "x.gguf: merge 0 'c d' makes a token that is not in the vocabulary");
    refused_bpe(NULL, nospace, "x.gguf: merge 0 'ab' is not two tokens and a space");
    refused_bpe("qwen3", ok,
                "x.gguf: the pre-tokenizer 'qwen3' is not supported (logitlab has llama-bpe, dbrx, "
                "qwen2, qwen35, gpt-4o, starcoder, gpt-2, falcon, deepseek-coder, default, and "
                "their aliases: doc/gguf.md)");
    static struct tiny t;
    tiny_bpe(&t, NULL, ok);
    t.spec.bos = TINY_BPE;
    refused(&t.spec, "x.gguf: the BOS id 260 is outside the vocabulary of 260 tokens");
    tiny_spm(&t, -1, -2);
    tiny_set(&t, 258, "<0xFG>"); /* <0xFF> missing, and no piece is that byte */
    refused(&t.spec, "x.gguf: no token for the byte 0xFF (no <0xFF>, no one-byte piece)");
    tiny_spm(&t, -1, -2);
    tiny_set(&t, 263, "ab");
    refused(&t.spec, "x.gguf: tokens 262 and 263 are both 'ab'");
    /* The model's strings are escaped where they are quoted. */
    tiny_spm(&t, -1, -2);
    tiny_set(&t, 262, "\x1b[1m");
    tiny_set(&t, 263, "\x1b[1m");
    refused(&t.spec, "x.gguf: tokens 262 and 263 are both '\\x1B[1m'");
    tiny_spm(&t, -1, -2);
    t.spec.kind = (enum tok_kind)7;
    refused(&t.spec, "x.gguf: unknown tokenizer kind 7");
}
END_TEST

/* What encode refuses: no room, too long, a BOS the model does not have. */
START_TEST(test_encode_refusals)
{
    int ids[4], n = -1;
    struct err e;
    ck_assert_int_eq(tokenizer_encode(T3, " Paris Paris", 12, 0, 0, ids, 1, &n, &e), -1);
    ck_assert_str_eq(e.msg, "the text is 2 tokens, more than the 1 there is room for");
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(tokenizer_encode(T3, " Paris Paris", 12, 0, 0, ids, 2, &n, &e), 0);
    ck_assert_int_eq(n, 2);
    char *big = calloc(TOK_MAX_TEXT + 1, 1);
    ck_assert_ptr_nonnull(big);
    ck_assert_int_eq(tokenizer_encode(T3, big, TOK_MAX_TEXT + 1, 0, 0, ids, 4, &n, &e), -1);
    ck_assert_str_eq(e.msg, "a text of 1048577 bytes is longer than the 1048576 a prompt may have");
    free(big);
    static struct tiny t;
    static const char *const ok[] = { "a b", NULL };
    tiny_bpe(&t, NULL, ok);
    struct tokenizer *tk = tiny_new(&t);
    ck_assert_int_eq(tokenizer_encode(tk, "ab", 2, 1, 0, ids, 4, &n, &e), -1);
    ck_assert_str_eq(e.msg, "the model has no BOS token to put first");
    tokenizer_free(tk);
}
END_TEST

/* 1 MiB of text (TOK_MAX_TEXT, the most encode takes) of one repeated unit
 * encodes in well under the case's timeout and reads back (Llama 3: as
 * llama.cpp reads it, 3 MiB of U+FFFD for 0xFF). A quadratic merge would
 * take hours here. */
static void long_case(const char *unit, size_t unit_len, int special)
{
    size_t len = TOK_MAX_TEXT - TOK_MAX_TEXT % unit_len;
    char *text = malloc(len), *out = malloc(3 * len + 1), *want = malloc(3 * len + 1);
    int *ids = malloc((3 * len + 1) * sizeof *ids), n;
    ck_assert(text && out && want && ids);
    for (size_t i = 0; i < len; i += unit_len)
        memcpy(text + i, unit, unit_len);
    const struct tokenizer *ts[2] = { T3, T2 };
    for (int k = 0; k < 2; k++) {
        struct err e;
        ck_assert_msg(tokenizer_encode(ts[k], text, len, 0, special && k == 0, ids,
                                       (int)(3 * len + 1), &n, &e) == 0,
                      "%s", e.msg);
        /* Digits go in threes: 1,048,576 of them are 349,525 times "111"
         * (5037) and one "1" (16). */
        ck_assert(unit[0] != '1' || k != 0 || n == 349526);
        for (int i = 0; unit[0] == '1' && k == 0 && i < n; i++)
            ck_assert_int_eq(ids[i], i < n - 1 ? 5037 : 16);
        size_t at = 0, w = 0;
        for (int i = 0; i < n; i++)
            at += tokenizer_piece(ts[k], ids[i], out + at, 3 * len + 1 - at);
        if (k == 1) /* SentencePiece's space in front, then every byte */
            want[w++] = ' ', memcpy(want + w, text, len), w += len;
        else
            w = tokdata_llama_text(text, len, want);
        ck_assert_msg(at == w && memcmp(out, want, w) == 0,
                      "'%.*s' x %zu: the pieces do not read back", (int)unit_len, unit,
                      len / unit_len);
    }
    free(text);
    free(out);
    free(want);
    free(ids);
}

START_TEST(test_long)
{
    long_case("a", 1, 0);
    long_case(" ", 1, 0);
    long_case("\n", 1, 0);
    long_case("\xff", 1, 0);
    long_case("\xc3\xa9", 2, 0); /* é */
    long_case("1", 1, 0);
    long_case("<|eot_id|>", 10, 1);
}
END_TEST

/* Special tokens in the text (tokenizer_special.c): its one scan against
 * llama.cpp's order written out as llama.cpp runs it. A mixed vocabulary
 * is the byte tokens (SentencePiece: <unk>, <s>, </s>, <0x00>..<0xFF>;
 * byte-level BPE: the 256 spelled bytes), then k special tokens of given
 * texts and types, ids MIX_BASE(kind) + i. */
#define MIX_BASE(kind) ((kind) == TOK_SPM ? 259 : 256)

struct mix {
    struct tok_spec spec;
    struct tok_str *text;
    int32_t *type;
    char bytes[256][8];
    struct tokenizer *t;
};

static void mix_init(struct mix *m, enum tok_kind kind, const char *const *pieces,
                     const int32_t *types, int k)
{
    int base = MIX_BASE(kind), n = base + k;
    memset(m, 0, sizeof *m);
    m->text = calloc((size_t)n, sizeof *m->text);
    m->type = calloc((size_t)n, sizeof *m->type);
    ck_assert(m->text && m->type);
    for (int b = 0; b < 256; b++) {
        int id = kind == TOK_SPM ? 3 + b : b;
        size_t len = kind == TOK_SPM ? (size_t)snprintf(m->bytes[b], 8, "<0x%02X>", b)
                                     : tokdata_spell_byte((unsigned)b, m->bytes[b]);
        m->text[id] = (struct tok_str){ m->bytes[b], len };
        m->type[id] = kind == TOK_SPM ? TOKT_BYTE : TOKT_NORMAL;
    }
    if (kind == TOK_SPM) {
        m->text[0] = (struct tok_str){ "<unk>", 5 }, m->type[0] = TOKT_UNKNOWN;
        m->text[1] = (struct tok_str){ "<s>", 3 }, m->type[1] = TOKT_CONTROL;
        m->text[2] = (struct tok_str){ "</s>", 4 }, m->type[2] = TOKT_CONTROL;
    }
    for (int i = 0; i < k; i++) {
        m->text[base + i] = (struct tok_str){ pieces[i], strlen(pieces[i]) };
        m->type[base + i] = types[i];
    }
    m->spec = (struct tok_spec){ .kind = kind,
                                 .n = n,
                                 .text = m->text,
                                 .types = m->type,
                                 .bos = kind == TOK_SPM ? 1 : -1,
                                 .eos = kind == TOK_SPM ? 2 : -1,
                                 .eot = -1,
                                 .unk = kind == TOK_SPM ? 0 : -1,
                                 .pad = -1,
                                 .add_bos = 0 };
    struct err e;
    m->t = tokenizer_new(&m->spec, "mix.gguf", &e);
    ck_assert_msg(m->t != NULL, "%s", e.msg);
}

static void mix_free(struct mix *m)
{
    tokenizer_free(m->t);
    free(m->text);
    free(m->type);
}

struct by_length {
    size_t len;
    int id;
};

static int cmp_by_length(const void *pa, const void *pb)
{
    const struct by_length *a = pa, *b = pb;
    if (a->len != b->len)
        return a->len > b->len ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* One special token's pass of llama.cpp's tokenizer_st_partition
 * (llama-vocab.cpp): every plain part of in, left to right, gives up each
 * occurrence of x that lies wholly in it and after the last one taken. */
static size_t ref_pass(const struct tok_seg *in, size_t n_in, const char *text,
                       const struct tok_str *x, int id, struct tok_seg *out)
{
    size_t n = 0;
    for (size_t i = 0; i < n_in; i++) {
        size_t plain = in[i].off, end = in[i].off + in[i].len;
        for (size_t at = plain; in[i].id < 0 && at + x->len <= end;) {
            if (memcmp(text + at, x->s, x->len) != 0) {
                at++;
                continue;
            }
            if (at > plain)
                out[n++] = (struct tok_seg){ plain, at - plain, -1 };
            out[n++] = (struct tok_seg){ at, x->len, id };
            at += x->len;
            plain = at;
        }
        if (in[i].id >= 0)
            out[n++] = in[i];
        else if (end > plain)
            out[n++] = (struct tok_seg){ plain, end - plain, -1 };
    }
    return n;
}

/* llama.cpp's partition as llama.cpp runs it: the special tokens (control
 * and unknown ones only when special is set) one pass each, longest first,
 * ties to the lower id. out: room for 2 x len + 1. */
static size_t ref_split(const struct mix *m, const char *text, size_t len, int special,
                        struct tok_seg *out)
{
    struct by_length *order = malloc((size_t)m->spec.n * sizeof *order);
    struct tok_seg *tmp = malloc((2 * len + 1) * sizeof *tmp);
    if (!order || !tmp)
        ck_abort_msg("out of memory");
    int k = 0;
    for (int id = 0; id < m->spec.n; id++) {
        int ty = m->type[id];
        if (m->text[id].len &&
            (ty == TOKT_USER_DEFINED || (special && (ty == TOKT_CONTROL || ty == TOKT_UNKNOWN))))
            order[k++] = (struct by_length){ m->text[id].len, id };
    }
    qsort(order, (size_t)k, sizeof *order, cmp_by_length);
    size_t n = 0;
    struct tok_seg *from = out, *to = tmp, *swap;
    if (len)
        out[n++] = (struct tok_seg){ 0, len, -1 };
    for (int i = 0; i < k; i++) {
        n = ref_pass(from, n, text, &m->text[order[i].id], order[i].id, to);
        swap = from, from = to, to = swap;
    }
    if (from != out)
        memcpy(out, from, n * sizeof *out);
    free(order);
    free(tmp);
    return n;
}

/* The ids encode gives against the reference's parts: a special part's
 * id, a plain part's ids encoded alone (with special off: no special token
 * of either kind is left wholly in it). */
static void same_ids(const struct mix *m, const char *text, size_t len, int special,
                     const struct tok_seg *want, size_t n_want, const char *shown)
{
    int max = (int)(3 * len + 1), *got = malloc((size_t)max * sizeof *got),
        *ref = malloc((size_t)max * sizeof *ref), n_got, n_ref = 0, n;
    struct err e;
    if (!got || !ref)
        ck_abort_msg("out of memory");
    if (tokenizer_encode(m->t, text, len, 0, special, got, max, &n_got, &e) < 0)
        ck_abort_msg("%s", e.msg);
    for (size_t i = 0; i < n_want; i++) {
        if (want[i].id >= 0) {
            ref[n_ref++] = want[i].id;
            continue;
        }
        if (tokenizer_encode(m->t, text + want[i].off, want[i].len, 0, 0, ref + n_ref, max - n_ref,
                             &n, &e) < 0)
            ck_abort_msg("%s", e.msg);
        n_ref += n;
    }
    /* ck_assert only on a fault: each call costs Check a message to its
     * parent, and these loops run millions of times. */
    if (n_got != n_ref)
        ck_abort_msg("'%s' (special %d): %d ids, want %d", shown, special, n_got, n_ref);
    for (int i = 0; i < n_got; i++)
        if (got[i] != ref[i])
            ck_abort_msg("'%s' (special %d): id %d is %d, want %d", shown, special, i, got[i],
                         ref[i]);
    free(got);
    free(ref);
}

/* text cut by tok_special_split as the reference cuts it, and encoded to
 * the same ids. */
static void same_split(const struct mix *m, const char *text, size_t len, int special)
{
    char shown[256], raw[64];
    size_t k = len < sizeof raw - 1 ? len : sizeof raw - 1;
    memcpy(raw, text, k);
    raw[k] = '\0';
    utf8_escape(raw, shown, sizeof shown);
    struct tok_segs got = { 0 };
    struct tok_seg *want = malloc((2 * len + 1) * sizeof *want);
    struct err e;
    if (!want || tok_special_split(m->t, text, len, special, &got, NULL, &e) < 0)
        ck_abort_msg("%s", want ? e.msg : "out of memory");
    size_t n = ref_split(m, text, len, special, want);
    if (got.n != n)
        ck_abort_msg("'%s' (special %d): %zu parts, want %zu", shown, special, got.n, n);
    for (size_t i = 0; i < n; i++)
        if (got.s[i].off != want[i].off || got.s[i].len != want[i].len || got.s[i].id != want[i].id)
            ck_abort_msg("'%s' (special %d): part %zu is (%zu, %zu, id %d), want (%zu, %zu, id %d)",
                         shown, special, i, got.s[i].off, got.s[i].len, got.s[i].id, want[i].off,
                         want[i].len, want[i].id);
    same_ids(m, text, len, special, want, n, shown);
    free(got.s);
    free(want);
}

#define U TOKT_USER_DEFINED
#define C TOKT_CONTROL

/* Hand cases, SentencePiece's ids (a byte b alone is 3 + b: 'a' 100, 'b'
 * 101, 'd' 103, 'e' 104; the specials from 259), each from llama.cpp's
 * rule: the longest token first, ties to the lower id, each token's
 * occurrences left to right. */
START_TEST(test_special_hand)
{
    struct mix m;
    static const char *const p1[] = { "bcd", "ab" };
    static const int32_t t1[] = { U, U };
    mix_init(&m, TOK_SPM, p1, t1, 2);
    EXPECT(m.t, "abcd", 0, 0, 100, 259); /* bcd first: leftmost-longest would give ab + "cd" */
    same_split(&m, "abcd", 4, 0);
    mix_free(&m);
    static const char *const p2[] = { "a", "aa", "aaa" };
    static const int32_t t2[] = { U, U, U };
    mix_init(&m, TOK_SPM, p2, t2, 3);
    EXPECT(m.t, "aaaaaaa", 0, 0, 261, 261, 259); /* aaa twice, then aa finds no room, then a */
    EXPECT(m.t, "aaaaa", 0, 0, 261, 260);
    mix_free(&m);
    static const char *const p3[] = { "ab", "ba", "abc", "cde" };
    static const int32_t t3[] = { U, U, U, U };
    mix_init(&m, TOK_SPM, p3, t3, 4);
    EXPECT(m.t, "aba", 0, 0, 259, 100); /* a tie of lengths: the lower id, ab, goes first */
    EXPECT(m.t, "bab", 0, 0, 101, 259);
    EXPECT(m.t, "abcde", 0, 0, 261, 103, 104); /* abc before cde, by id */
    mix_free(&m);
    static const char *const p4[] = { "ab", "b", "aa" };
    static const int32_t t4[] = { C, U, U };
    mix_init(&m, TOK_SPM, p4, t4, 3);
    EXPECT(m.t, "ab", 0, 1, 259);       /* the control token only with special set */
    EXPECT(m.t, "ab", 0, 0, 100, 260);  /* else the user-defined b takes its b */
    EXPECT(m.t, "aaa", 0, 0, 261, 100); /* one token's occurrences from the left */
    mix_free(&m);
}
END_TEST

/* Two special tokens of one text: byte-level BPE lets them be, when the
 * text is not in GPT-2's spelling (two tabs: no key, nothing to refuse).
 * The first by id takes every occurrence; the user-defined one only when
 * the control one is not looked for. */
START_TEST(test_special_same_text)
{
    struct mix m;
    static const char *const p[] = { "\t\t", "\t\t", "\t" };
    static const int32_t t[] = { C, U, C };
    mix_init(&m, TOK_BPE, p, t, 3);
    EXPECT(m.t, "\t\t\t", 0, 1, 256, 258); /* the control \t\t (256), then the control \t */
    EXPECT(m.t, "\t\t\t", 0, 0, 257, 9);   /* the user-defined one, then the byte token of a tab */
    for (int special = 0; special < 2; special++) {
        same_split(&m, "\t\t\t", 3, special);
        same_split(&m, "\t\t \t\t\t", 6, special);
    }
    mix_free(&m);
}
END_TEST

/* Tokens of thousands of bytes, whose spans the search for a taken byte
 * crosses 64 bytes and 4,096 bytes at a time: on "a" x 5000 + "b" x 9000,
 * X1 = "b" x 9000 (259) and X2 = "a" x 5000 + "b" x 4000 (260) tie in
 * length and X1 goes first, at 5000; X2 at 0 overlaps it, and so does
 * W = "a" x 5000 + "b" x 1000 (261), which a search that stopped short of
 * 5000 would take; A = "a" x 4999 (262) ends before it. Then one "a"
 * (3 + 'a' = 100) is left. */
START_TEST(test_special_long)
{
    char *x1 = malloc(9001), *x2 = malloc(9001), *w = malloc(6001), *a = malloc(5000),
         *text = malloc(14000);
    ck_assert(x1 && x2 && w && a && text);
    memset(x1, 'b', 9000), x1[9000] = '\0';
    memset(x2, 'a', 5000), memset(x2 + 5000, 'b', 4000), x2[9000] = '\0';
    memset(w, 'a', 5000), memset(w + 5000, 'b', 1000), w[6000] = '\0';
    memset(a, 'a', 4999), a[4999] = '\0';
    memset(text, 'a', 5000), memset(text + 5000, 'b', 9000);
    const char *p[] = { x1, x2, w, a };
    static const int32_t t[] = { TOKT_USER_DEFINED, TOKT_USER_DEFINED, TOKT_USER_DEFINED,
                                 TOKT_USER_DEFINED };
    struct mix m;
    mix_init(&m, TOK_SPM, p, t, 4);
    static const int want[] = { 262, 100, 259 };
    expect_len(m.t, text, 14000, 0, 0, want, 3);
    same_split(&m, text, 14000, 0);
    mix_free(&m);
    free(x1);
    free(x2);
    free(w);
    free(a);
    free(text);
}
END_TEST

/* xorshift32: the same texts on every run. */
static uint32_t next_random(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* A random vocabulary of 2 to 9 special tokens of 1 to 4 letters of
 * alphabet (distinct for SentencePiece, which refuses two tokens of one
 * text), half user-defined, the rest control or unknown; then 40 random
 * texts of up to 48 letters, special on and off, against the reference. */
static void random_vocabulary(enum tok_kind kind, const char *alphabet, uint32_t *s)
{
    char pieces[9][5];
    const char *ptr[9];
    int32_t types[9];
    size_t a = strlen(alphabet);
    int k = 2 + (int)(next_random(s) % 8);
    for (int i = 0; i < k; i++) {
        int again;
        do {
            size_t len = 1 + next_random(s) % 4;
            for (size_t j = 0; j < len; j++)
                pieces[i][j] = alphabet[next_random(s) % a];
            pieces[i][len] = '\0';
            again = 0;
            for (int j = 0; kind == TOK_SPM && j < i; j++)
                again |= strcmp(pieces[i], pieces[j]) == 0;
        } while (again);
        ptr[i] = pieces[i];
        uint32_t r = next_random(s) % 8;
        types[i] = r < 4 ? TOKT_USER_DEFINED : r < 7 ? TOKT_CONTROL : TOKT_UNKNOWN;
    }
    struct mix m;
    mix_init(&m, kind, ptr, types, k);
    for (int n = 0; n < 40; n++) {
        char text[48];
        size_t len = next_random(s) % (sizeof text + 1);
        for (size_t j = 0; j < len; j++)
            text[j] = alphabet[next_random(s) % a];
        same_split(&m, text, len, 0);
        same_split(&m, text, len, 1);
    }
    mix_free(&m);
}

/* Overlapping, nested, same-length and duplicated special tokens in
 * 300 random vocabularies of each kind. */
START_TEST(test_special_random)
{
    uint32_t s = 2463534242u;
    for (int v = 0; v < 300; v++) {
        random_vocabulary(TOK_SPM, "abc", &s);
        random_vocabulary(TOK_BPE, "\t\n ", &s); /* outside GPT-2's spelling: duplicates allowed */
    }
}
END_TEST

#undef U
#undef C

#define NUMBERS 20000

/* 20,000 user-defined tokens, the numbers "0" to "19999", and 1 MiB of
 * random digits, where every byte starts 1 to D = 5 tokens (a 1 begins
 * "1", "1x", ..., "1xxxx"; another digit up to 4; a 0 only "0"): the scan
 * looks up at most 2 edges a byte (one forward, and the failure links
 * never go back further than forward), and the candidates looked at are
 * at most D a byte. llama.cpp's order, run as written, makes 20,000
 * passes over the text here (in issue 29's case, 4 minutes at 1 MiB). The
 * partition covers every byte (each digit is a token), and agrees with
 * the reference on a text of 1 KiB. */
START_TEST(test_special_linear)
{
    char *strings = malloc(NUMBERS * 6);
    const char **pieces = malloc(NUMBERS * sizeof *pieces);
    int32_t *types = malloc(NUMBERS * sizeof *types);
    size_t len = TOK_MAX_TEXT;
    char *text = malloc(len);
    ck_assert(strings && pieces && types && text);
    for (unsigned i = 0; i < NUMBERS; i++) {
        snprintf(strings + 6 * i, 6, "%u", i);
        pieces[i] = strings + 6 * i;
        types[i] = TOKT_USER_DEFINED;
    }
    struct mix m;
    mix_init(&m, TOK_SPM, pieces, types, NUMBERS);
    uint32_t s = 88675123u;
    for (size_t i = 0; i < len; i++)
        text[i] = (char)('0' + next_random(&s) % 10);
    struct tok_segs v = { 0 };
    struct tok_scan_count count = { 0, 0 };
    struct err e;
    ck_assert_msg(tok_special_split(m.t, text, len, 0, &v, &count, &e) == 0, "%s", e.msg);
    ck_assert_msg(count.steps <= 2 * len, "%zu steps for %zu bytes", count.steps, len);
    ck_assert_msg(count.candidates <= 5 * len, "%zu candidates for %zu bytes", count.candidates,
                  len);
    size_t at = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.s[i].off != at || v.s[i].id < MIX_BASE(TOK_SPM))
            ck_abort_msg("part %zu: (%zu, %zu, id %d) at byte %zu", i, v.s[i].off, v.s[i].len,
                         v.s[i].id, at);
        at += v.s[i].len;
    }
    ck_assert_int_eq(at, len);
    same_split(&m, text, 1024, 0);
    free(v.s);
    mix_free(&m);
    free(strings);
    free(pieces);
    free(types);
    free(text);
}
END_TEST

Suite *suite_tokenizer(void)
{
    Suite *s = suite_create("tokenizer");
    TCase *real = tcase_create("real vocabularies");
    tcase_add_unchecked_fixture(real, load_both, free_both);
    tcase_set_timeout(real, 120);
    tcase_add_test(real, test_corpus);
    tcase_add_test(real, test_llama3_hand);
    tcase_add_test(real, test_gpt4o_hand);
    tcase_add_test(real, test_llama2_hand);
    tcase_add_test(real, test_invalid_utf8);
    tcase_add_test(real, test_pieces);
    tcase_add_test(real, test_round_trip_corpus);
    tcase_add_test(real, test_round_trip_random);
    tcase_add_test(real, test_encode_refusals);
    tcase_add_test(real, test_long);
    suite_add_tcase(s, real);
    TCase *tiny = tcase_create("tiny vocabularies");
    tcase_add_test(tiny, test_tiny_bpe);
    tcase_add_test(tiny, test_tiny_spm);
    tcase_add_test(tiny, test_refusals);
    suite_add_tcase(s, tiny);
    TCase *special = tcase_create("special tokens");
    tcase_set_timeout(special, 120);
    tcase_add_test(special, test_special_hand);
    tcase_add_test(special, test_special_same_text);
    tcase_add_test(special, test_special_long);
    tcase_add_test(special, test_special_random);
    tcase_add_test(special, test_special_linear);
    suite_add_tcase(s, special);
    suite_add_tcase(s, tcase_tokenizer_gemma4());
    return s;
}
