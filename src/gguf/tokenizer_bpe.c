/* tokenizer_bpe.c - byte-level BPE (tokenizer.ggml.model "gpt2"): the text
 * is cut into words by the pre-tokenizer's regular expressions, and each
 * word's bytes are merged pair by pair, the pair whose merge comes first in
 * the merges list first (the leftmost of equal pairs first).
 *
 * Pre-tokenizers: PRE_KINDS below, by llama.cpp's names (its
 * llama-vocab.cpp), each family with the expressions llama.cpp applies in
 * turn. Where there are several, each cuts the pieces of the one before,
 * and what a match leaves between matches is a piece too, as in llama.cpp.
 * "Blank" (\s) is the Unicode White_Space set, as llama.cpp's tables have
 * it (PCRE2's own \s adds U+180E). Only the llama-bpe family takes a word
 * that is a whole token whole, unmerged (ignore_merges, as llama.cpp and
 * Hugging Face do for Llama 3).
 *
 * The letter, number, mark and punctuation classes are llama.cpp's, which
 * come from Unicode 15.1 (its unicode-data.cpp); Debian 12's PCRE2 (10.42)
 * knows Unicode 14, where the 5,116 code points assigned since are
 * unassigned. Every difference between the two, found by setting PCRE2's
 * \p{L} \p{N} \p{M} \p{P} \p{S} against llama.cpp's table for each of
 * the 1,114,112 code points (tests/oracle/unicode_classes.sh), is one of
 * those; the ones of the classes the expressions use are added to PCRE2's
 * below (U15_*), so that, say, U+11F04 KAWI LETTER A is a letter
 * ("\U00011F04'll" splits before the apostrophe, as in llama.cpp). The symbols (S) and the control
 * and format characters (C) that are new are left out: no expression here tells them from
 * unassigned code points.
 *
 * Text that is not valid UTF-8 is read as llama.cpp reads it (its
 * unicode_cpts_from_utf8), because the ids must be llama.cpp's: a lead byte
 * followed by the continuation bytes it announces is the code point their
 * bits spell, unchecked, so an overlong form is the character it encodes
 * (C0 AF is '/') and a surrogate stays a surrogate; any other byte (a stray
 * continuation byte, F8 to FF, a lead byte cut short) is one U+FFFD. The
 * words are cut from that text and merged as its UTF-8 bytes, so the pieces
 * read back the text only when it was valid. One case is ours: a four-byte
 * form above U+10FFFF makes llama.cpp throw out of llama_tokenize (its
 * UTF-8 writer refuses the code point), so it has no ids for it; here its
 * first byte is a U+FFFD, and so is each continuation byte after it.
 *
 * A byte with no token of its own (tokenizer.h) stays a symbol that merges
 * with nothing and gives no id, as llama.cpp drops it.
 *
 * Gemma 4 (tokenizer_gemma4.c) shares the merges and their loop (bpe_merge)
 * and the reading of the text (bpe_llama_char), but not the expressions.
 */
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/utf8.h"
#include "gguf/tokenizer_int.h"

#define BPE_MAX_RE     5
#define BPE_MAX_MERGES (1 << 26) /* more than this is not a tokenizer */

/* The blanks: Unicode White_Space, which is what llama.cpp calls whitespace. */
#define WS                                                                                         \
    "\\t\\n\\x0B\\f\\r "                                                                           \
    "\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"

/* The code points that llama.cpp's Unicode 15.1 puts in a class and
 * Debian 12's PCRE2 (Unicode 14) leaves unassigned (the file's comment),
 * to write inside a bracket beside PCRE2's own class: letters, numbers,
 * marks, punctuation. */
#define U15_L                                                                                      \
    "\\x{1123F}-\\x{11240}\\x{11F02}\\x{11F04}-\\x{11F10}\\x{11F12}-\\x{11F33}\\x{1342F}"          \
    "\\x{13441}-\\x{13446}\\x{1B132}\\x{1B155}\\x{1DF25}-\\x{1DF2A}\\x{1E030}-\\x{1E06D}"          \
    "\\x{1E4D0}-\\x{1E4EB}\\x{2B739}\\x{2EBF0}-\\x{2EE5D}\\x{31350}-\\x{323AF}"
#define U15_N "\\x{11F50}-\\x{11F59}\\x{1D2C0}-\\x{1D2D3}\\x{1E4F0}-\\x{1E4F9}"
#define U15_M                                                                                      \
    "\\x{CF3}\\x{ECE}\\x{10EFD}-\\x{10EFF}\\x{11241}\\x{11F00}-\\x{11F01}\\x{11F03}"               \
    "\\x{11F34}-\\x{11F3A}\\x{11F3E}-\\x{11F42}\\x{13440}\\x{13447}-\\x{13455}\\x{1E08F}"          \
    "\\x{1E4EC}-\\x{1E4EF}"
#define U15_P "\\x{11B00}-\\x{11B09}\\x{11F43}-\\x{11F4F}"
/* llama.cpp's classes, to write inside a bracket. */
#define UL "\\p{L}" U15_L
#define UN "\\p{N}" U15_N
#define UM "\\p{M}" U15_M
#define UP "\\p{P}" U15_P

/* The contractions, either case (Llama 3's "(?i:'s|...)" as llama.cpp
 * writes it out). */
#define CONTRACTIONS "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
/* What Llama 3, Qwen2 and Qwen3.5 end with: punctuation runs with their
 * line breaks, then the blank runs GPT-4o ends with too: line breaks with
 * the blanks before them, blanks not followed by a non-blank, other
 * blanks. */
#define BLANK_RUNS  "[" WS "]*[\\r\\n]+|[" WS "]+(?![^" WS "])|[" WS "]+"
#define BLANKS_TAIL "[\\r\\n]*|" BLANK_RUNS

/* Llama 3: a letter run with at most one other character in front, up to
 * three digits, ... */
static const char *const LLAMA3_RE[] = {
    CONTRACTIONS "|[^\\r\\n" UL UN "]?[" UL "]+|[" UN "]{1,3}| ?[^" WS UL UN "]+" BLANKS_TAIL,
};
/* Qwen2: Llama 3's with every digit alone. */
static const char *const QWEN2_RE[] = {
    CONTRACTIONS "|[^\\r\\n" UL UN "]?[" UL "]+|[" UN "]| ?[^" WS UL UN "]+" BLANKS_TAIL,
};
/* Qwen3.5: Qwen2's with marks joining the letters. */
static const char *const QWEN35_RE[] = {
    CONTRACTIONS "|[^\\r\\n" UL UN "]?[" UL UM "]+|[" UN "]| ?[^" WS UL UM UN "]+" BLANKS_TAIL,
};

/* GPT-4o (Llama 4, Phi-4-mini, MiniMax-M2): at most one other character,
 * then letters cased as in camelCase ("camel", "Case", "HTML"), then a
 * contraction; up to three digits; punctuation runs with the line breaks
 * and slashes after them. The cases are llama.cpp's, not the
 * tokenizer.json's \p{Lu} and \p{Ll} (each with \p{Lm}, \p{Lo} and
 * \p{M}): its std::regex sees a text where every character above ASCII is
 * one byte for its class, so it writes "upper" as a letter but a-z and
 * "lower" as a letter but A-Z. A letter above ASCII is then of both cases,
 * and a mark is no letter ("e" + U+0301 is two words). On the characters
 * themselves these classes cut where llama.cpp's bytes do. A lookahead says
 * "a letter but" because PCRE2 10.42 cannot take one class from another,
 * and UL must keep the Unicode 15 letters it adds to \p{L}. */
#define GPT4O_UPPER "(?:(?=[" UL "])[^a-z])"
#define GPT4O_LOWER "(?:(?=[" UL "])[^A-Z])"
static const char *const GPT4O_RE[] = {
    "[^\\r\\n" UL UN "]?" GPT4O_UPPER "*" GPT4O_LOWER "+" CONTRACTIONS "?"
    "|[^\\r\\n" UL UN "]?" GPT4O_UPPER "+" GPT4O_LOWER "*" CONTRACTIONS "?"
    "|[" UN "]{1,3}| ?[^" WS UL UN "]+[\\r\\n/]*|" BLANK_RUNS,
};

/* GPT-2's split, which llama.cpp also uses after cutting out every digit
 * for StarCoder-style tokenizers (SmolLM's among them). */
#define GPT2_SPLIT                                                                                 \
    "'s|'t|'re|'ve|'m|'ll|'d| ?[" UL "]+| ?[" UN "]+| ?[^" WS UL UN "]+|[" WS "]+(?![^" WS "])"

static const char *const GPT2_RE[] = { GPT2_SPLIT };
static const char *const STARCODER_RE[] = { "[" UN "]", GPT2_SPLIT };
static const char *const FALCON_RE[] = {
    "[" UP "\\$\\+<=>\\^~\\|`]+",
    GPT2_SPLIT,
    "[0-9][0-9][0-9]",
};
/* DeepSeek Coder: line breaks alone, letter runs and punctuation runs each
 * with one blank in front, runs of CJK and Hangul (U+0800 to U+9FA5,
 * U+AC00 to U+D7FF, as its tokenizer.json writes them), every digit alone. */
static const char *const DEEPSEEK_CODER_RE[] = {
    "[\\r\\n]",           "[" WS "]?[" UL "]+",
    "[" WS "]?[" UP "]+", "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+",
    "[" UN "]",
};
static const char *const DEFAULT_RE[] = {
    "[" UP "\\$\\+<=>\\^~\\|]+",
    GPT2_SPLIT,
    "[" UN "]+",
    "[0-9][0-9][0-9]",
};

/* The pre-tokenizers by the names tokenizer.ggml.pre gives them, grouped as
 * llama.cpp's load() groups them, each with the expressions it applies in
 * turn, whether it skips the merges of a word that is a token, and whether
 * it puts a BOS first when the file does not say (add_bos_token absent).
 * The first name of a row is its family's in messages. */
static const struct pre_kind {
    const char *names; /* space-separated */
    int n_re;
    const char *const *re;
    int ignore_merges;
    int add_bos;
} PRE_KINDS[] = {
    { "llama-bpe llama3 llama-v3 falcon3 falcon-h1 pixtral midm-2.0 lfm2 jina-v5-nano", 1,
      LLAMA3_RE, 1, 1 },
    { "dbrx smaug-bpe", 1, LLAMA3_RE, 0, 0 },
    { "qwen2 deepseek-r1-qwen kormo f2llmv2 megrez stablelm2 hunyuan solar-open", 1, QWEN2_RE, 0,
      0 },
    { "qwen35", 1, QWEN35_RE, 0, 0 },
    { "gpt-4o llama4 kanana2 talkie minimax-m2", 1, GPT4O_RE, 0, 0 },
    { "starcoder smollm refact command-r codeshell exaone minerva-7b mellum2", 2, STARCODER_RE, 0,
      0 },
    { "gpt-2 phi-2 jina-es jina-de gigachat jina-v2-es jina-v2-de a.x-4.0 mellum modern-bert "
      "exaone4 mpt olmo jais trillion granite-docling",
      1, GPT2_RE, 0, 0 },
    { "falcon", 3, FALCON_RE, 0, 0 },
    { "deepseek-coder", 5, DEEPSEEK_CODER_RE, 0, 0 },
    { "default", 4, DEFAULT_RE, 0, 0 },
};
#define N_PRE_KINDS ((int)(sizeof PRE_KINDS / sizeof PRE_KINDS[0]))

struct tok_bpe {
    int n_merges;
    int32_t *left, *right, *result; /* merge r joins left[r] and right[r] into result[r] */
    int32_t *slot;                  /* merges by their pair; -1 empty */
    uint32_t mask;
    int ignore_merges;
    int n_re;
    pcre2_code *re[BPE_MAX_RE];
};

/* The byte GPT-2's spelling gives code point cp, or -1. Printable Latin-1
 * bytes stand for themselves; the other 68 bytes were moved to U+0100 and
 * up in byte order: 0x00-0x20, then 0x7F-0xA0, then 0xAD. */
static int gpt2_byte(uint32_t cp)
{
    if ((cp >= 0x21 && cp <= 0x7e) || (cp >= 0xa1 && cp <= 0xac) || (cp >= 0xae && cp <= 0xff))
        return (int)cp;
    if (cp < 0x100 || cp >= 0x100 + 68)
        return -1;
    uint32_t k = cp - 0x100;
    return k < 33 ? (int)k : k < 67 ? (int)(0x7f + k - 33) : 0xad;
}

size_t bpe_unspell(const char *s, size_t len, char *out, int *spelled)
{
    size_t n = 0;
    int all = 1;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int k = utf8_decode(s + i, len - i, &cp);
        int b = k > 0 ? gpt2_byte(cp) : -1;
        if (b >= 0) {
            out[n++] = (char)b;
        } else {
            k = k > 0 ? k : 1;
            memcpy(out + n, s + i, (size_t)k);
            n += (size_t)k;
            all = 0;
        }
        i += (size_t)k;
    }
    if (spelled)
        *spelled = all;
    return n;
}

static uint32_t pair_hash(int32_t l, int32_t r)
{
    uint64_t k = ((uint64_t)(uint32_t)l << 32 | (uint32_t)r) * 0x9e3779b97f4a7c15u;
    return (uint32_t)(k >> 32);
}

static int merge_find(const struct tok_bpe *b, int32_t l, int32_t r)
{
    for (uint32_t h = pair_hash(l, r) & b->mask;; h = (h + 1) & b->mask) {
        int32_t m = b->slot[h];
        if (m < 0 || (b->left[m] == l && b->right[m] == r))
            return m;
    }
}

/* One merge string "left right" into ids: the first space after the first
 * character separates the two (a first token of one space stays whole).
 * 0 with ids[0] -1 for a merge that can never apply, as a side is not in
 * GPT-2's spelling: llama.cpp matches merges to the spelled text. Gemma 4's
 * sides are its tokens' texts as they are. */
static int parse_merge(const struct tokenizer *t, const struct tok_str *m, int r, char *scratch,
                       int32_t ids[3], const char *path, struct err *e)
{
    char q[200];
    ids[0] = ids[1] = ids[2] = -1; /* gcc cannot see that err_set returns -1 */
    const char *sp = m->len > 1 && m->s ? memchr(m->s + 1, ' ', m->len - 1) : NULL;
    if (!sp)
        return err_set(e, ERR_USAGE, "%s: merge %d '%s' is not two tokens and a space", path, r,
                       m->s ? tok_quote(m->s, m->len, q, sizeof q) : "");
    size_t ll = (size_t)(sp - m->s), rl = m->len - ll - 1;
    int sa = 1, sb = 1, raw = t->kind == TOK_GEMMA4;
    size_t a = raw ? ll : bpe_unspell(m->s, ll, scratch, &sa);
    size_t b = raw ? rl : bpe_unspell(sp + 1, rl, scratch + a, &sb);
    if (raw) {
        memcpy(scratch, m->s, a);
        memcpy(scratch + a, sp + 1, b);
    }
    if (!sa || !sb)
        return 0;
    ids[0] = tok_find(t, scratch, a);
    ids[1] = tok_find(t, scratch + a, b);
    if (ids[0] < 0 || ids[1] < 0)
        return err_set(e, ERR_USAGE,
                       "%s: merge %d '%s' names a token that is not in the vocabulary", path, r,
                       tok_quote(m->s, m->len, q, sizeof q));
    ids[2] = tok_find(t, scratch, a + b);
    if (ids[2] < 0)
        return err_set(e, ERR_USAGE,
                       "%s: merge %d '%s' makes a token that is not in the vocabulary", path, r,
                       tok_quote(m->s, m->len, q, sizeof q));
    return 0;
}

static int build_merges(struct tokenizer *t, struct tok_bpe *b, const struct tok_spec *s,
                        const char *path, struct err *e)
{
    size_t n = s->n_merges > 0 ? (size_t)s->n_merges : 0, longest = 0;
    if (s->n_merges < 0 || s->n_merges > BPE_MAX_MERGES || (n && !s->merges))
        return err_set(e, ERR_USAGE, "%s: %d merges (0 to %d)", path, s->n_merges, BPE_MAX_MERGES);
    for (size_t i = 0; i < n; i++)
        longest = s->merges[i].len > longest ? s->merges[i].len : longest;
    uint32_t slots = 1;
    while (slots < 2 * n + 2)
        slots <<= 1;
    b->mask = slots - 1;
    b->left = malloc((n + 1) * sizeof *b->left);
    b->right = malloc((n + 1) * sizeof *b->right);
    b->result = malloc((n + 1) * sizeof *b->result);
    b->slot = malloc(slots * sizeof *b->slot);
    char *scratch = malloc(longest + 1);
    if (!b->left || !b->right || !b->result || !b->slot || !scratch) {
        free(scratch);
        return err_set(e, ERR_SYSTEM, "out of memory for %zu merges", n);
    }
    memset(b->slot, 0xff, slots * sizeof *b->slot);
    for (size_t r = 0; r < n; r++) {
        int32_t ids[3];
        if (parse_merge(t, &s->merges[r], (int)r, scratch, ids, path, e) < 0) {
            free(scratch);
            return -1;
        }
        b->left[r] = ids[0];
        b->right[r] = ids[1];
        b->result[r] = ids[2];
        if (ids[0] < 0)
            continue; /* never applies */
        uint32_t h = pair_hash(ids[0], ids[1]) & b->mask;
        while (b->slot[h] >= 0 &&
               !(b->left[b->slot[h]] == ids[0] && b->right[b->slot[h]] == ids[1]))
            h = (h + 1) & b->mask;
        if (b->slot[h] < 0) /* a pair listed twice keeps its first rank */
            b->slot[h] = (int32_t)r;
    }
    b->n_merges = (int)n;
    free(scratch);
    return 0;
}

/* Is pre one of the space-separated names? */
static int is_pre(const struct tok_str *pre, const char *names)
{
    for (const char *n = names; *n;) {
        size_t len = strcspn(n, " ");
        if (len == pre->len && memcmp(n, pre->s, len) == 0)
            return 1;
        n += len + (n[len] == ' ');
    }
    return 0;
}

int bpe_pre_find(const struct tok_str *pre)
{
    if (!pre->len || !pre->s)
        return N_PRE_KINDS - 1; /* none given: the default */
    for (int k = 0; k < N_PRE_KINDS; k++)
        if (is_pre(pre, PRE_KINDS[k].names))
            return k;
    return -1;
}

int bpe_pre_add_bos(int row)
{
    return row >= 0 && row < N_PRE_KINDS && PRE_KINDS[row].add_bos;
}

int bpe_pre_refuse(const struct tok_str *pre, const char *path, struct err *e)
{
    char q[200], list[200] = "";
    for (int k = 0; k < N_PRE_KINDS; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%.*s", k ? ", " : "",
                 (int)strcspn(PRE_KINDS[k].names, " "), PRE_KINDS[k].names);
    return err_set(e, ERR_USAGE,
                   "%s: the pre-tokenizer '%s' is not supported (logitlab has %s, and their "
                   "aliases: doc/gguf.md)",
                   path, tok_quote(pre->s, pre->len, q, sizeof q), list);
}

static int build_pre(struct tok_bpe *b, int row, struct err *e)
{
    const struct pre_kind *k = &PRE_KINDS[row];
    b->n_re = k->n_re;
    b->ignore_merges = k->ignore_merges;
    for (int i = 0; i < b->n_re; i++) {
        int code;
        PCRE2_SIZE at;
        b->re[i] = pcre2_compile((PCRE2_SPTR)k->re[i], PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code, &at, NULL);
        if (!b->re[i]) {
            PCRE2_UCHAR msg[120];
            pcre2_get_error_message(code, msg, sizeof msg);
            return err_set(e, ERR_SYSTEM, "the pre-tokenizer's expression %d: %s at %zu", i,
                           (const char *)msg, (size_t)at);
        }
        pcre2_jit_compile(b->re[i], PCRE2_JIT_COMPLETE); /* faster when it works; optional */
    }
    return 0;
}

int bpe_build(struct tokenizer *t, const struct tok_spec *s, int pre, const char *path,
              struct err *e)
{
    t->bpe = calloc(1, sizeof *t->bpe);
    if (!t->bpe)
        return err_set(e, ERR_SYSTEM, "out of memory");
    if (build_merges(t, t->bpe, s, path, e) < 0 || (pre >= 0 && build_pre(t->bpe, pre, e) < 0))
        return -1;
    return 0;
}

void bpe_free(struct tok_bpe *b)
{
    if (!b)
        return;
    free(b->left);
    free(b->right);
    free(b->result);
    free(b->slot);
    for (int i = 0; i < b->n_re; i++)
        pcre2_code_free(b->re[i]);
    free(b);
}

/* What one encode works in: the symbols of a word, the heap of pairs that
 * could merge, and the pieces the expressions cut. */
struct span {
    size_t off, len;
};

struct spans {
    struct span *s;
    size_t n, cap;
};

struct bwork {
    struct tok_sym *sym;
    size_t sym_cap;
    struct tok_heap heap; /* merges of adjacent symbols: aux the merge, key its rank */
    struct spans sp[2];
    pcre2_match_data *md;
};

static int try_pair(const struct tok_bpe *b, struct tok_heap *heap, const struct tok_sym *sym,
                    int l, int r, struct err *e)
{
    if (l < 0 || r < 0 || sym[l].id < 0 || sym[r].id < 0)
        return 0;
    int m = merge_find(b, sym[l].id, sym[r].id);
    return m < 0 ? 0
                 : tok_heap_push(heap,
                                 (struct tok_pair){ .key = m, .left = l, .right = r, .aux = m }, e);
}

int bpe_merge(const struct tokenizer *t, struct tok_sym *sym, size_t n, struct tok_heap *heap,
              struct err *e)
{
    const struct tok_bpe *b = t->bpe;
    heap->n = 0;
    for (size_t i = 1; i < n; i++)
        if (try_pair(b, heap, sym, (int)i - 1, (int)i, e) < 0)
            return -1;
    while (heap->n) {
        struct tok_pair p = tok_heap_pop(heap);
        struct tok_sym *l = &sym[p.left], *r = &sym[p.right];
        if (l->id != b->left[p.aux] || r->id != b->right[p.aux] || l->next != p.right)
            continue; /* one of them merged since: the pair is gone */
        l->id = b->result[p.aux];
        l->next = r->next;
        if (r->next >= 0)
            sym[r->next].prev = p.left;
        r->id = -1;
        if (try_pair(b, heap, sym, l->prev, p.left, e) < 0 ||
            try_pair(b, heap, sym, p.left, l->next, e) < 0)
            return -1;
    }
    return 0;
}

/* Merges the bytes of one word and appends its ids. */
static int bpe_word(const struct tokenizer *t, struct bwork *w, const char *s, size_t len,
                    struct tok_out *o, struct err *e)
{
    const struct tok_bpe *b = t->bpe;
    int whole = b->ignore_merges || len == 1 ? tok_find(t, s, len) : -1;
    if (whole >= 0)
        return tok_push(o, whole, e);
    if (len > w->sym_cap) {
        struct tok_sym *sym = realloc(w->sym, len * sizeof *sym);
        if (!sym)
            return err_set(e, ERR_SYSTEM, "out of memory for a word of %zu bytes", len);
        w->sym = sym;
        w->sym_cap = len;
    }
    for (size_t i = 0; i < len; i++)
        w->sym[i] = (struct tok_sym){ t->byte_tok[(unsigned char)s[i]], (int)i - 1,
                                      i + 1 < len ? (int)i + 1 : -1 };
    if (bpe_merge(t, w->sym, len, &w->heap, e) < 0)
        return -1;
    for (int i = 0; i >= 0; i = w->sym[i].next)
        if (w->sym[i].id >= 0 && tok_push(o, w->sym[i].id, e) < 0)
            return -1;
    return 0;
}

static int span_add(struct spans *v, size_t off, size_t len, struct err *e)
{
    if (len == 0)
        return 0;
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 64;
        struct span *s = realloc(v->s, cap * sizeof *s);
        if (!s)
            return err_set(e, ERR_SYSTEM, "out of memory for %zu words", cap);
        v->s = s;
        v->cap = cap;
    }
    v->s[v->n++] = (struct span){ off, len };
    return 0;
}

/* The match of re in s[0..len) from at: its start and end, or 0 for none. */
static int next_match(pcre2_code *re, pcre2_match_data *md, const char *s, size_t len, size_t at,
                      size_t *a, size_t *z, struct err *e)
{
    int rc = pcre2_match(re, (PCRE2_SPTR)s, len, at, 0, md, NULL);
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) /* the JIT's stack, say: the interpreter has none */
        rc = pcre2_match(re, (PCRE2_SPTR)s, len, at, PCRE2_NO_JIT, md, NULL);
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc < 0) {
        PCRE2_UCHAR msg[120];
        pcre2_get_error_message(rc, msg, sizeof msg);
        return err_set(e, ERR_SYSTEM, "the pre-tokenizer failed: %s", (const char *)msg);
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    *a = ov[0];
    *z = ov[1];
    return 1;
}

/* Cuts s[0..len) by re into pieces appended to out (offsets from base). */
static int cut(pcre2_code *re, pcre2_match_data *md, const char *s, size_t len, size_t base,
               struct spans *out, struct err *e)
{
    size_t at = 0;
    while (at < len) {
        size_t a = at, z = at; /* set by a match; gcc cannot see that err_set returns -1 */
        int got = next_match(re, md, s, len, at, &a, &z, e);
        if (got < 0)
            return -1;
        if (!got)
            break;
        if (z == a) { /* an empty match: no expression here has one, but never loop */
            uint32_t cp;
            int k = utf8_decode(s + a, len - a, &cp);
            z = a + (size_t)(k > 0 ? k : 1);
        }
        if (span_add(out, base + at, a - at, e) < 0 || span_add(out, base + a, z - a, e) < 0)
            return -1;
        at = z;
    }
    return span_add(out, base + at, len - at, e);
}

/* Cuts the text into words by the expressions, run on re (the same text
 * with U+FFFD for each surrogate: PCRE2 refuses surrogates, and every
 * expression here classes both alike, as neither letter, number nor blank),
 * and merges each word's bytes from s. */
static int encode_words(const struct tokenizer *t, struct bwork *w, const char *re, const char *s,
                        size_t len, struct tok_out *o, struct err *e)
{
    const struct tok_bpe *b = t->bpe;
    int cur = 0;
    w->sp[0].n = 0;
    if (span_add(&w->sp[0], 0, len, e) < 0)
        return -1;
    for (int r = 0; r < b->n_re; r++) {
        struct spans *in = &w->sp[cur], *out = &w->sp[1 - cur];
        out->n = 0;
        for (size_t i = 0; i < in->n; i++)
            if (cut(b->re[r], w->md, re + in->s[i].off, in->s[i].len, in->s[i].off, out, e) < 0)
                return -1;
        cur = 1 - cur;
    }
    for (size_t i = 0; i < w->sp[cur].n; i++)
        if (bpe_word(t, w, s + w->sp[cur].s[i].off, w->sp[cur].s[i].len, o, e) < 0)
            return -1;
    return 0;
}

/* One character as llama.cpp reads it (the file's comment). */
size_t bpe_llama_char(const unsigned char *s, size_t len, uint32_t *cp)
{
    unsigned char b = s[0];
    size_t n = b < 0x80 ? 1 : b < 0xc0 ? 0 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : b < 0xf8 ? 4 : 0;
    uint32_t c = n == 1 ? b : b & (0x7fu >> n);
    for (size_t i = 1; n > 1 && i < n; i++) {
        if (i >= len || (s[i] & 0xc0) != 0x80) {
            n = 0;
            break;
        }
        c = c << 6 | (s[i] & 0x3fu);
    }
    if (n == 0 || c > 0x10ffff) {
        *cp = 0xfffd;
        return 1;
    }
    *cp = c;
    return n;
}

size_t bpe_put_char(uint32_t cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    size_t n = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    for (size_t i = n - 1; i > 0; i--, cp >>= 6)
        out[i] = (char)(0x80 | (cp & 0x3f));
    out[0] = (char)((0xff00u >> n & 0xff) | cp); /* the lead byte: n ones, then a zero */
    return n;
}

/* The text as llama.cpp's BPE sees it into s, and the same with U+FFFD for
 * each surrogate into re; both at most 3 bytes for each byte of text (an
 * invalid byte's U+FFFD). Returns their length. */
static size_t llama_text(const char *text, size_t len, char *s, char *re)
{
    size_t n = 0;
    for (size_t at = 0; at < len;) {
        uint32_t cp;
        at += bpe_llama_char((const unsigned char *)text + at, len - at, &cp);
        size_t k = bpe_put_char(cp, s + n);
        memcpy(re + n, cp >= 0xd800 && cp <= 0xdfff ? "\xef\xbf\xbd" : s + n, k);
        n += k;
    }
    return n;
}

int bpe_encode(const struct tokenizer *t, const char *text, size_t len, struct tok_out *o,
               struct err *e)
{
    struct bwork w = { 0 };
    char *s = malloc(6 * len + 2), *re = s ? s + 3 * len + 1 : NULL;
    w.md = s ? pcre2_match_data_create(4, NULL) : NULL; /* the expressions capture nothing */
    int rc = w.md ? 0 : err_set(e, ERR_SYSTEM, "out of memory for a text of %zu bytes", len);
    if (rc == 0)
        rc = encode_words(t, &w, re, s, llama_text(text, len, s, re), o, e);
    pcre2_match_data_free(w.md);
    free(s);
    free(w.sym);
    free(w.heap.p);
    free(w.sp[0].s);
    free(w.sp[1].s);
    return rc;
}
