/* check_vocabs.c - the tokenizers (src/gguf/tokenizer*.c) on vocabularies
 * unlike Llama's, as llama.cpp's vocabulary loader takes them (its
 * llama-vocab.cpp at the pinned commit, tests/oracle/README.md): a byte
 * without a token, two tokens of one byte string, the pre-tokenizer table
 * and its BOS defaults, the Unicode 15.1 classes, the tokens llama.cpp
 * takes for control tokens by their text and the ends of generation. Small
 * vocabularies built here: the 256 bytes in GPT-2's spelling (id = the
 * byte), then the tokens and merges a case adds; the real Llama 2 and 3
 * ones (tests/model/tokdata.c) where they say more. llama.cpp's own test
 * vectors on whole vocabularies are tests/vocab.sh's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf/tokenizer.h"
#include "model/tokdata.h"
#include "suites.h"

#define VB_MAX     300
#define VB_MERGES  8
#define VB_IDS     64
#define VB_TEXTLEN 32

/* A byte-level vocabulary under construction. */
struct vb {
    struct tok_spec spec;
    struct tok_str text[VB_MAX];
    char str[VB_MAX][VB_TEXTLEN];
    int32_t types[VB_MAX];
    struct tok_str merges[VB_MERGES];
    int extra[TOKX_N];
};

/* The 256 bytes, pre-tokenizer pre (NULL: none), no merges, no special
 * ids, add_bos as the file would say it (-1: absent). */
static void vb_init(struct vb *v, const char *pre, int add_bos)
{
    memset(v, 0, sizeof *v);
    for (unsigned b = 0; b < 256; b++) {
        v->text[b] = (struct tok_str){ v->str[b], tokdata_spell_byte(b, v->str[b]) };
        v->types[b] = TOKT_NORMAL;
    }
    for (int i = 0; i < TOKX_N; i++)
        v->extra[i] = -1;
    v->spec = (struct tok_spec){ .kind = TOK_BPE,
                                 .pre = { pre, pre ? strlen(pre) : 0 },
                                 .n = 256,
                                 .text = v->text,
                                 .types = v->types,
                                 .merges = v->merges,
                                 .bos = -1,
                                 .eos = -1,
                                 .eot = -1,
                                 .unk = -1,
                                 .pad = -1,
                                 .extra = v->extra,
                                 .add_bos = add_bos };
}

/* Adds a token of text s (as stored) and type; returns its id. */
static int vb_add(struct vb *v, const char *s, int type)
{
    int id = v->spec.n++;
    ck_assert_int_lt(id, VB_MAX);
    snprintf(v->str[id], VB_TEXTLEN, "%s", s);
    v->text[id] = (struct tok_str){ v->str[id], strlen(s) };
    v->types[id] = type;
    return id;
}

static void vb_merge(struct vb *v, const char *m)
{
    ck_assert_int_lt(v->spec.n_merges, VB_MERGES);
    v->merges[v->spec.n_merges++] = (struct tok_str){ m, strlen(m) };
}

static struct tokenizer *vb_new(const struct vb *v)
{
    struct err e;
    struct tokenizer *t = tokenizer_new(&v->spec, "v.gguf", &e);
    ck_assert_msg(t != NULL, "%s", e.msg);
    return t;
}

static void vb_refused(const struct vb *v, const char *want)
{
    struct err e;
    err_clear(&e);
    ck_assert_msg(tokenizer_new(&v->spec, "v.gguf", &e) == NULL, "accepted; want '%s'", want);
    ck_assert_str_eq(e.msg, want);
}

/* The ids of text (special: special tokens' text is theirs) against want. */
static void expect(const struct tokenizer *t, const char *text, int special, const int *want,
                   int n_want)
{
    int ids[VB_IDS], n;
    struct err e;
    ck_assert_msg(tokenizer_encode(t, text, strlen(text), 0, special, ids, VB_IDS, &n, &e) == 0,
                  "%s", e.msg);
    char got[512] = "", exp[512] = "";
    for (int i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), " %d", ids[i]);
    for (int i = 0; i < n_want; i++)
        snprintf(exp + strlen(exp), sizeof exp - strlen(exp), " %d", want[i]);
    ck_assert_msg(strcmp(got, exp) == 0, "'%s' (special %d): got%s, want%s", text, special, got,
                  exp);
}

#define EXPECT(t, text, special, ...)                                                              \
    do {                                                                                           \
        const int want_[] = { __VA_ARGS__ };                                                       \
        expect(t, text, special, want_, (int)(sizeof want_ / sizeof want_[0]));                    \
    } while (0)

/* A byte without a token of its own: the vocabulary loads (StarCoder's has
 * none for 0xC0, 0xC1, 0xF1, 0xF5 to 0xFF; Falcon's none for 0x03 and other
 * controls), and where the byte is left unmerged it gives no id. llama.cpp
 * (llm_tokenizer_bpe_session::tokenize) looks a leftover symbol up, then
 * each of its bytes' spelling, and appends nothing when neither is a token.
 * Ids: 'a' 97, 'b' 98, 0xA9 169; "q" merges with nothing. */
START_TEST(test_missing_byte)
{
    static struct vb v;
    vb_init(&v, "gpt-2", -1);
    snprintf(v.str['q'], VB_TEXTLEN, "qq"); /* no token is the byte 'q' any more */
    v.text['q'].len = 2;
    snprintf(v.str[0xc3], VB_TEXTLEN, "xy"); /* nor 0xC3, the lead byte of "é" */
    v.text[0xc3].len = 2;
    struct tokenizer *t = vb_new(&v);
    EXPECT(t, "aqb", 0, 97, 98);
    EXPECT(t, "\xc3\xa9", 0, 169); /* é: its second byte's token alone */
    char piece[4];
    ck_assert_uint_eq(tokenizer_piece(t, 'q', piece, sizeof piece), 2); /* "qq" is still a token */
    tokenizer_free(t);
}
END_TEST

/* Two tokens of one byte string, as GPT-NeoX's vocabulary has (user-defined
 * runs of spaces stored raw, "  ", beside "ĠĠ") and DeepSeek's (a
 * user-defined "ý" beside "Ã½", both the bytes C3 BD once spelled out, or
 * not): llama.cpp keys its text-to-id map by the stored text and looks a
 * merged piece up by its GPT-2 spelling, so the spelled token is what
 * merging reaches, while the raw one is found only as a special token, by
 * its text as written (always for a user-defined one, with --special for a
 * control one). Ids: "ĠĠ" 256, the raw "  " 257, merge "Ġ Ġ". */
START_TEST(test_same_bytes)
{
    static struct vb v;
    vb_init(&v, "gpt-2", -1);
    int spelled = vb_add(&v, "\xc4\xa0\xc4\xa0", TOKT_NORMAL);
    int raw = vb_add(&v, "  ", TOKT_CONTROL);
    vb_merge(&v, "\xc4\xa0 \xc4\xa0");
    struct tokenizer *t = vb_new(&v);
    EXPECT(t, "  ", 0, spelled); /* GPT-2's split keeps trailing blanks together */
    EXPECT(t, "  ", 1, raw);
    tokenizer_free(t);
    v.types[raw] = TOKT_USER_DEFINED; /* matched in the text always */
    t = vb_new(&v);
    EXPECT(t, "  ", 0, raw);
    tokenizer_free(t);
    /* A merge with a side not in GPT-2's spelling never applies, as
     * llama.cpp matches merges against spelled text: accepted, unused. */
    vb_init(&v, "gpt-2", -1);
    vb_add(&v, "ab", TOKT_NORMAL);
    vb_merge(&v, "\x1b[1m b");
    t = vb_new(&v);
    EXPECT(t, "ab", 0, 97, 98);
    tokenizer_free(t);
    /* The same text twice: llama.cpp's loader aborts (its map would be
     * smaller than the vocabulary); refused here, the text escaped. */
    vb_init(&v, "gpt-2", -1);
    vb_add(&v, "ab", TOKT_NORMAL);
    vb_add(&v, "ab", TOKT_NORMAL);
    vb_refused(&v, "v.gguf: tokens 256 and 257 are both 'ab'");
}
END_TEST

/* The pre-tokenizer is checked first: one logitlab lacks is named whatever
 * else is wrong (here a merge that names no token and a BOS outside the
 * vocabulary), as llama.cpp's load() reads tokenizer.ggml.pre before the
 * tokens. */
#define PRE_HAS                                                                                    \
    "(logitlab has llama-bpe, dbrx, qwen2, qwen35, gpt-4o, starcoder, gpt-2, falcon, "             \
    "deepseek-coder, default, and their aliases: doc/gguf.md)"
START_TEST(test_pre_first)
{
    static struct vb v;
    vb_init(&v, "qwen3", -1);
    vb_merge(&v, "a zz");
    v.spec.bos = 999;
    vb_refused(&v, "v.gguf: the pre-tokenizer 'qwen3' is not supported " PRE_HAS);
    struct err e;
    struct tok_str pre = { "deepseek-v3", 11 }, none = { NULL, 0 }, qwen = { "qwen2", 5 };
    ck_assert_int_eq(tokenizer_check_pre(TOK_BPE, &pre, "v.gguf", &e), -1);
    ck_assert_str_eq(e.msg, "v.gguf: the pre-tokenizer 'deepseek-v3' is not supported " PRE_HAS);
    ck_assert_int_eq(tokenizer_check_pre(TOK_BPE, &none, "v.gguf", &e), 0);
    ck_assert_int_eq(tokenizer_check_pre(TOK_BPE, &qwen, "v.gguf", &e), 0);
    ck_assert_int_eq(tokenizer_check_pre(TOK_SPM, &pre, "v.gguf", &e), 0); /* SPM ignores it */
}
END_TEST

/* BOS: tokenizer.ggml.add_bos_token when the file has it; absent, llama.cpp's
 * default (load(): SentencePiece yes; byte-level BPE no, but for the
 * pre-tokenizers it sets add_bos for, llama-bpe and its aliases). */
static int bos_of(const char *pre, int add_bos, int bos)
{
    static struct vb v;
    vb_init(&v, pre, add_bos);
    v.spec.bos = bos;
    struct tokenizer *t = vb_new(&v);
    int on = tokenizer_add_bos(t);
    tokenizer_free(t);
    return on;
}

START_TEST(test_bos_default)
{
    ck_assert_int_eq(bos_of("llama-bpe", -1, 0), 1);
    ck_assert_int_eq(bos_of("llama3", -1, 0), 1);
    ck_assert_int_eq(bos_of("pixtral", -1, 0), 1);
    ck_assert_int_eq(bos_of("gpt-2", -1, 0), 0); /* GPT-2's <|endoftext|> is its BOS id */
    ck_assert_int_eq(bos_of("starcoder", -1, 0), 0);
    ck_assert_int_eq(bos_of("qwen2", -1, 0), 0);
    ck_assert_int_eq(bos_of("dbrx", -1, 0), 0); /* Llama 3's split, not its default */
    ck_assert_int_eq(bos_of("gpt-4o", -1, 0), 0);
    ck_assert_int_eq(bos_of("llama4", -1, 0), 0);
    ck_assert_int_eq(bos_of(NULL, -1, 0), 0);
    ck_assert_int_eq(bos_of("gpt-2", 1, 0), 1); /* the file's word wins */
    ck_assert_int_eq(bos_of("llama-bpe", 0, 0), 0);
    ck_assert_int_eq(bos_of("llama-bpe", -1, -1), 0); /* a default without a BOS id: none */
    /* SentencePiece: yes unless the file says no. */
    struct tokdata d;
    struct err e;
    ck_assert_msg(tokdata_llama2(&d, "data", &e) == 0, "%s", e.msg);
    int says[3] = { -1, 0, 1 }, want[3] = { 1, 0, 1 };
    for (int i = 0; i < 3; i++) {
        d.spec.add_bos = says[i];
        struct tokenizer *t = tokenizer_new(&d.spec, "llama2", &e);
        ck_assert_msg(t != NULL, "%s", e.msg);
        ck_assert_int_eq(tokenizer_add_bos(t), want[i]);
        tokenizer_free(t);
    }
    tokdata_free(&d);
}
END_TEST

/* The classes are llama.cpp's Unicode 15.1, not Debian 12's PCRE2 Unicode
 * 14 (tokenizer_bpe.c). U+11F04 KAWI LETTER A (new in 15.0) is a letter:
 * Llama 3's split makes "𑼄" and "'ll" two words, so the ids are those of
 * each alone, its four bytes' (172 239 120 226: no merge joins them) and
 * "'ll" (3358); read as unassigned, it would join the apostrophe in one
 * punctuation word and "ll" would be another: 172 239 120 226 6 ("'") 657
 * ("ll"), as Debian 12's PCRE2 alone would have it. */
START_TEST(test_unicode15_letter)
{
    struct tokdata d;
    struct err e;
    ck_assert_msg(tokdata_llama3(&d, "data", &e) == 0, "%s", e.msg);
    struct tokenizer *t = tokenizer_new(&d.spec, "llama3", &e);
    ck_assert_msg(t != NULL, "%s", e.msg);
    EXPECT(t, "\xf0\x91\xbc\x84'll", 0, 172, 239, 120, 226, 3358);
    EXPECT(t, "'ll", 0, 3358);
    tokenizer_free(t);
    tokdata_free(&d);
}
END_TEST

/* Numbers and marks new in Unicode 15, on small vocabularies whose one
 * merge joins two bytes across the boundary the class makes. Kawi digits
 * U+11F50..U+11F53 (F0 91 BD 90..93) are numbers: Llama 3's \p{N}{1,3}
 * cuts four of them 3 + 1, so the merge of 0x92 (the third's last byte)
 * and 0xF0 (the fourth's first) never applies: 16 byte ids (as other
 * characters they would be one word, and the merge would apply); two of
 * them are one word, where it does. U+0CF3, a
 * Kannada sign (E0 B3 B3), is a mark: Qwen3.5's [\p{L}\p{M}]+ keeps it with
 * the letter before it, so "a" merges with 0xE0. */
START_TEST(test_unicode15_classes)
{
    static struct vb v;
    char m[16], a[4], b[4];
    vb_init(&v, "llama-bpe", -1);
    a[tokdata_spell_byte(0x92, a)] = '\0';
    b[tokdata_spell_byte(0xf0, b)] = '\0';
    snprintf(m, sizeof m, "%s%s", a, b);
    int joined = vb_add(&v, m, TOKT_NORMAL);
    snprintf(m, sizeof m, "%s %s", a, b);
    vb_merge(&v, m);
    struct tokenizer *t = vb_new(&v);
    EXPECT(t, "\xf0\x91\xbd\x90\xf0\x91\xbd\x91\xf0\x91\xbd\x92\xf0\x91\xbd\x93", 0, 0xf0, 0x91,
           0xbd, 0x90, 0xf0, 0x91, 0xbd, 0x91, 0xf0, 0x91, 0xbd, 0x92, 0xf0, 0x91, 0xbd, 0x93);
    EXPECT(t, "\xf0\x91\xbd\x92\xf0\x91\xbd\x93", 0, 0xf0, 0x91, 0xbd, joined, 0x91, 0xbd, 0x93);
    tokenizer_free(t);
    vb_init(&v, "qwen35", -1);
    b[tokdata_spell_byte(0xe0, b)] = '\0';
    snprintf(m, sizeof m, "a%s", b);
    joined = vb_add(&v, m, TOKT_NORMAL);
    snprintf(m, sizeof m, "a %s", b);
    vb_merge(&v, m);
    t = vb_new(&v);
    EXPECT(t, "a\xe0\xb3\xb3", 0, joined, 0xb3, 0xb3);
    tokenizer_free(t);
}
END_TEST

/* GPT-4o's split keeps a contraction with the letters before it, either case (llama.cpp's
 * expression: letters, then "(?:'[sS]|'[tT]|...)?"), where Llama 3's cuts it off. No token of
 * Llama 3's vocabulary joins a letter to an apostrophe, so llama.cpp's ids on it cannot show
 * this (check_tokenizer.c's GPT-4o case); here the merges "n '" and "N '" can. "don't" is
 * one word: d o, n' (256), t; "DON'T" one word too (no lower-case letter: the second
 * alternative, capitals then the contraction): D O, N' (257), T. Under Llama 3's split "n"
 * and "'" are in different words: five bytes. */
START_TEST(test_gpt4o_contractions)
{
    static struct vb v;
    const char *const pres[2] = { "gpt-4o", "llama-bpe" };
    for (int k = 0; k < 2; k++) {
        vb_init(&v, pres[k], -1);
        int lower = vb_add(&v, "n'", TOKT_NORMAL), upper = vb_add(&v, "N'", TOKT_NORMAL);
        vb_merge(&v, "n '");
        vb_merge(&v, "N '");
        struct tokenizer *t = vb_new(&v);
        if (k == 0) {
            EXPECT(t, "don't", 0, 'd', 'o', lower, 't');
            EXPECT(t, "DON'T", 0, 'D', 'O', upper, 'T');
        } else {
            EXPECT(t, "don't", 0, 'd', 'o', 'n', '\'', 't');
            EXPECT(t, "DON'T", 0, 'D', 'O', 'N', '\'', 'T');
        }
        tokenizer_free(t);
    }
}
END_TEST

/* Tokens llama.cpp's loader takes for control tokens by their text,
 * whatever their type (load(), "auto-detect special tokens by text"):
 * Qwen2 stores <|fim_prefix|> as user-defined, GPT-NeoX <|endoftext|> as
 * normal; as control tokens their text is theirs only with --special. */
START_TEST(test_control_by_text)
{
    static struct vb v;
    vb_init(&v, "qwen2", -1);
    int fim = vb_add(&v, "<|fim_prefix|>", TOKT_USER_DEFINED);
    int eot = vb_add(&v, "<|endoftext|>", TOKT_NORMAL);
    int word = vb_add(&v, "<|word|>", TOKT_USER_DEFINED); /* known to nobody: stays */
    struct tokenizer *t = vb_new(&v);
    ck_assert_int_eq(tokenizer_type(t, fim), TOKT_CONTROL);
    ck_assert_int_eq(tokenizer_type(t, eot), TOKT_CONTROL);
    ck_assert_int_eq(tokenizer_type(t, word), TOKT_USER_DEFINED);
    EXPECT(t, "<|fim_prefix|>", 1, fim);
    EXPECT(t, "<|endoftext|>", 1, eot);
    EXPECT(t, "<|word|>", 0, word);
    /* Without --special, Qwen2's split: "<|", "fim", "_prefix", "|>". */
    EXPECT(t, "<|fim_prefix|>", 0, '<', '|', 'f', 'i', 'm', '_', 'p', 'r', 'e', 'f', 'i', 'x', '|',
           '>');
    tokenizer_free(t);
    /* A fill-in-the-middle role the file names an id for is not looked
     * for by text: the user-defined token stays user-defined. */
    v.extra[TOKX_FIM_PRE] = word;
    t = vb_new(&v);
    ck_assert_int_eq(tokenizer_type(t, fim), TOKT_USER_DEFINED);
    EXPECT(t, "<|fim_prefix|>", 0, fim);
    tokenizer_free(t);
}
END_TEST

static void expect_eog(const struct tokenizer *t, const int *want, int n_want)
{
    int ids[16];
    int n = tokenizer_eog(t, ids, 16);
    ck_assert_int_eq(n, n_want);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(ids[i], want[i]);
}

#define EXPECT_EOG(t, ...)                                                                         \
    do {                                                                                           \
        const int want_[] = { __VA_ARGS__ };                                                       \
        expect_eog(t, want_, (int)(sizeof want_ / sizeof want_[0]));                               \
    } while (0)

/* The ends of generation, as llama.cpp lists them: the EOS, EOT and EOM
 * ids, the known end texts (<|im_end|>, </s>, ...), the fill-in-the-middle
 * pad, repo and file-separator tokens; no <|end|> where <|return|> and
 * <|call|> are ends too (gpt-oss), and gpt-oss's <|start|> user-defined. */
START_TEST(test_ends_of_generation)
{
    static struct vb v;
    vb_init(&v, "qwen2", -1);
    int eos = vb_add(&v, "<eos-of-file>", TOKT_CONTROL);
    int im_end = vb_add(&v, "<|im_end|>", TOKT_CONTROL);
    int pad = vb_add(&v, "<|fim_pad|>", TOKT_USER_DEFINED);
    int sep = vb_add(&v, "<|file_sep|>", TOKT_USER_DEFINED);
    int s_end = vb_add(&v, "</s>", TOKT_NORMAL);
    v.spec.eos = eos;
    v.extra[TOKX_EOM] = 'x';
    struct tokenizer *t = vb_new(&v);
    EXPECT_EOG(t, 'x', eos, im_end, pad, sep, s_end);
    tokenizer_free(t);
    vb_init(&v, "gpt-2", -1);
    int end = vb_add(&v, "<|end|>", TOKT_CONTROL);
    int ret = vb_add(&v, "<|return|>", TOKT_CONTROL);
    int call = vb_add(&v, "<|call|>", TOKT_CONTROL);
    int start = vb_add(&v, "<|start|>", TOKT_CONTROL);
    t = vb_new(&v);
    EXPECT_EOG(t, ret, call);
    ck_assert_int_eq(tokenizer_type(t, end), TOKT_USER_DEFINED);
    ck_assert_int_eq(tokenizer_type(t, start), TOKT_USER_DEFINED);
    EXPECT(t, "<|start|><|end|>", 0, start, end);
    tokenizer_free(t);
}
END_TEST

Suite *suite_vocabs(void)
{
    Suite *s = suite_create("vocabs");
    TCase *tc = tcase_create("vocabs");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_missing_byte);
    tcase_add_test(tc, test_same_bytes);
    tcase_add_test(tc, test_pre_first);
    tcase_add_test(tc, test_bos_default);
    tcase_add_test(tc, test_unicode15_letter);
    tcase_add_test(tc, test_unicode15_classes);
    tcase_add_test(tc, test_gpt4o_contractions);
    tcase_add_test(tc, test_control_by_text);
    tcase_add_test(tc, test_ends_of_generation);
    suite_add_tcase(s, tc);
    return s;
}
