#include "data/vocab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/readfile.h"
#include "base/utf8.h"

#define LLVOCAB_MAGIC      "LLVOCAB1"
#define LLVOCAB_HEADER     20
#define LLAMA3_SIZE        128256
#define LLAMA3_END_OF_TEXT 128001
#define LLAMA3_EOT         128009
#define VOCAB_FILE_MAX     (64u << 20) /* a vocabulary file larger than this is refused */

int vocab_init(struct vocab *v, int n, struct err *e)
{
    memset(v, 0, sizeof *v);
    if (n <= 0)
        return err_set(e, ERR_USAGE, "a vocabulary needs at least one token");
    v->text = calloc((size_t)n, sizeof *v->text);
    if (!v->text)
        return err_set(e, ERR_SYSTEM, "out of memory for %d tokens", n);
    v->n = n;
    v->join_space = 1;
    v->first_special = n;
    return 0;
}

void vocab_free(struct vocab *v)
{
    if (v->text)
        for (int i = 0; i < v->n; i++)
            free(v->text[i]);
    free(v->text);
    free(v->bytes);
    free(v->off);
    free(v->display);
    free(v->doff);
    free(v->special);
    memset(v, 0, sizeof *v);
}

int vocab_is_special(const struct vocab *v, int id)
{
    return id >= v->first_special || (v->special && v->special[id]);
}

int vocab_set(struct vocab *v, int id, const char *text, struct err *e)
{
    if (!v->text || id < 0 || id >= v->n)
        return err_set(e, ERR_USAGE, "token id %d is outside the vocabulary (0..%d)", id, v->n - 1);
    char *copy = strdup(text);
    if (!copy)
        return err_set(e, ERR_SYSTEM, "out of memory");
    free(v->text[id]);
    v->text[id] = copy;
    return 0;
}

const char *vocab_token(const struct vocab *v, int id)
{
    if (id < 0 || id >= v->n)
        return "?";
    if (v->text)
        return v->text[id] ? v->text[id] : "?";
    return v->display + v->doff[id];
}

const char *vocab_bytes(const struct vocab *v, int id, size_t *len)
{
    if (id < 0 || id >= v->n) {
        *len = 0;
        return "";
    }
    if (v->text) {
        const char *t = v->text[id] ? v->text[id] : "";
        *len = strlen(t);
        return t;
    }
    *len = v->off[id + 1] - v->off[id];
    return v->bytes + v->off[id];
}

int vocab_is_eos(const struct vocab *v, int id)
{
    for (int i = 0; i < v->n_eos; i++)
        if (v->eos[i] == id)
            return 1;
    return 0;
}

int vocab_find(const struct vocab *v, const char *text)
{
    size_t tl = strlen(text);
    for (int id = 0; id < v->n; id++) {
        size_t len;
        const char *b = vocab_bytes(v, id, &len);
        if ((len == tl && memcmp(b, text, tl) == 0) || strcmp(vocab_token(v, id), text) == 0)
            return id;
    }
    return -1;
}

/* A whole decimal number in [0, n); -1 otherwise. */
static int id_of(const char *s, int n)
{
    if (!*s)
        return -1;
    long x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > n)
            return -1;
        x = x * 10 + (*s - '0');
    }
    return x < n ? (int)x : -1;
}

int vocab_lookup(const struct vocab *v, const char *text)
{
    if (text[0] == '#')
        return id_of(text + 1, v->n);
    int id = vocab_find(v, text);
    if (id < 0)
        id = id_of(text, v->n);
    if (id < 0 && text[0] != ' ') {
        size_t n = strlen(text);
        char *spaced = malloc(n + 2);
        if (spaced) {
            spaced[0] = ' ';
            memcpy(spaced + 1, text, n + 1);
            id = vocab_find(v, spaced);
            free(spaced);
        }
    }
    return id;
}

size_t vocab_complete_prefix(const char *text, size_t len)
{
    /* Look back at most 3 bytes for the start of a last character. */
    for (size_t back = 1; back <= 4 && back <= len; back++) {
        unsigned char c = (unsigned char)text[len - back];
        if ((c & 0xC0) == 0x80)
            continue; /* a continuation byte: keep looking for the lead byte */
        int need = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
        return (size_t)need > back ? len - back : len;
    }
    return len;
}

size_t vocab_detok(const struct vocab *v, const int *ids, int n, char *buf, size_t size)
{
    size_t need = 0;
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (vocab_is_eos(v, ids[i]))
            continue;
        size_t len;
        const char *t = vocab_bytes(v, ids[i], &len);
        size_t sep = (v->join_space && need > 0) ? 1 : 0;
        if (need + sep + len < size) {
            if (sep)
                buf[need] = ' ';
            memcpy(buf + need + sep, t, len);
            buf[need + sep + len] = '\0';
        }
        need += sep + len;
    }
    return need;
}

/* The display form of raw token bytes: a leading space as a visible mark
 * (not for special tokens, whose text is their name), everything else as
 * utf8.c escapes it (controls as \n \t \r \xNN, bytes that are not whole
 * UTF-8 characters as \xNN). Returns the length written (buf is large
 * enough: 4 bytes per input byte, plus the mark). */
static size_t display_form(const char *b, size_t len, int special, char *buf)
{
    size_t k = 0, i = 0;
    if (!special && len > 0 && b[0] == ' ') {
        memcpy(buf, VOCAB_SPACE_MARK, strlen(VOCAB_SPACE_MARK));
        k = strlen(VOCAB_SPACE_MARK);
        i = 1;
    }
    while (i < len) {
        char piece[UTF8_ESC_MAX];
        size_t pn, used = utf8_escape_char(b + i, len - i, 0, piece, &pn);
        memcpy(buf + k, piece, pn);
        k += pn;
        i += used;
    }
    return k;
}

/* Builds the display forms of every token of a byte-level vocabulary. */
static int build_display(struct vocab *v, struct err *e)
{
    size_t total = 0;
    for (int id = 0; id < v->n; id++)
        total += 4 * (size_t)(v->off[id + 1] - v->off[id]) + strlen(VOCAB_SPACE_MARK) + 1;
    v->display = malloc(total);
    v->doff = malloc(((size_t)v->n + 1) * sizeof *v->doff);
    if (!v->display || !v->doff)
        return err_set(e, ERR_SYSTEM, "out of memory for the display forms of %d tokens", v->n);
    size_t k = 0;
    for (int id = 0; id < v->n; id++) {
        v->doff[id] = (uint32_t)k;
        size_t len = v->off[id + 1] - v->off[id];
        k += display_form(v->bytes + v->off[id], len, id >= v->first_special, v->display + k);
        v->display[k++] = '\0';
    }
    v->doff[v->n] = (uint32_t)k;
    return 0;
}

static void set_llama3_ends(struct vocab *v)
{
    if (v->n != LLAMA3_SIZE)
        return;
    size_t len;
    const char *eot = vocab_bytes(v, LLAMA3_EOT, &len);
    if (len == 10 && memcmp(eot, "<|eot_id|>", 10) == 0) {
        v->eos[v->n_eos++] = LLAMA3_EOT;
        v->eos[v->n_eos++] = LLAMA3_END_OF_TEXT;
    }
}

int vocab_from_bytes(struct vocab *v, int n, const char *const *tok, const size_t *len,
                     int first_special, struct err *e)
{
    memset(v, 0, sizeof *v);
    if (n <= 0 || n > VOCAB_MAX_TOKENS)
        return err_set(e, ERR_USAGE, "%d tokens: a vocabulary has 1 to %d", n, VOCAB_MAX_TOKENS);
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += len[i];
    v->bytes = malloc(total + 1);
    v->off = malloc(((size_t)n + 1) * sizeof *v->off);
    if (!v->bytes || !v->off) {
        vocab_free(v);
        return err_set(e, ERR_SYSTEM, "out of memory for %d tokens", n);
    }
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        v->off[i] = (uint32_t)k;
        memcpy(v->bytes + k, tok[i], len[i]);
        k += len[i];
    }
    v->off[n] = (uint32_t)k;
    v->n = n;
    v->byte_level = 1;
    v->first_special = first_special < n ? first_special : n;
    if (build_display(v, e) < 0) {
        vocab_free(v);
        return -1;
    }
    set_llama3_ends(v);
    return 0;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int load_binary(struct vocab *v, const char *path, const unsigned char *d, size_t size,
                       struct err *e)
{
    if (size < LLVOCAB_HEADER)
        return err_set(e, ERR_USAGE, "%s: truncated: %zu bytes, not even a header", path, size);
    uint32_t n = le32(d + 8), first = le32(d + 12), blob = le32(d + 16);
    if (n == 0 || n > VOCAB_MAX_TOKENS)
        return err_set(e, ERR_USAGE, "%s: %u tokens: a vocabulary has 1 to %d", path, n,
                       VOCAB_MAX_TOKENS);
    /* first == n says that no token is special; past it is no id at all
     * (0xFFFFFFFF would turn into -1 and make every token special). */
    if (first > n)
        return err_set(e, ERR_USAGE,
                       "%s: the first special id is %u, out of range (0 to %u, the count of "
                       "tokens: none special)",
                       path, first, n);
    size_t want = LLVOCAB_HEADER + 4 * ((size_t)n + 1) + blob;
    if (size != want)
        return err_set(e, ERR_USAGE, "%s: %s: %zu bytes, the header promises %zu", path,
                       size < want ? "truncated" : "trailing data", size, want);
    const unsigned char *offs = d + LLVOCAB_HEADER;
    const char **tok = malloc((size_t)n * sizeof *tok);
    size_t *len = malloc((size_t)n * sizeof *len);
    if (!tok || !len) {
        free(tok);
        free(len);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    const char *text = (const char *)(offs + 4 * ((size_t)n + 1));
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        uint32_t a = le32(offs + 4 * i), b = le32(offs + 4 * (i + 1));
        if (b < a || b > blob)
            rc = err_set(e, ERR_USAGE, "%s: token %u has a bad offset", path, i);
        else if (b - a > VOCAB_MAX_TOKEN_BYTES)
            rc = err_set(e, ERR_USAGE, "%s: token %u is %u bytes long (at most %d)", path, i, b - a,
                         VOCAB_MAX_TOKEN_BYTES);
        tok[i] = text + a;
        len[i] = b - a;
    }
    if (rc == 0 && le32(offs) != 0)
        rc = err_set(e, ERR_USAGE, "%s: the first offset is not 0", path);
    if (rc == 0)
        rc = vocab_from_bytes(v, (int)n, tok, len, (int)first, e);
    free(tok);
    free(len);
    return rc;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The escape after a backslash at d[*i] (the line's bytes end at end):
 * \n \t \\ or \x and exactly two hex digits, nothing else, so that no
 * escape can reach past its line and shift the ids after it. */
static int text_escape(const char *path, int line, const char *d, size_t end, size_t *i, char *out,
                       struct err *e)
{
    if (*i == end)
        return err_set(e, ERR_USAGE, "%s:%d: the line ends in a backslash (a backslash is \\\\)",
                       path, line);
    char x = d[(*i)++];
    int hi, lo;
    if (x == 'n' || x == 't' || x == '\\') {
        *out = x == 'n' ? '\n' : x == 't' ? '\t' : '\\';
        return 0;
    }
    if (x == 'x') {
        if (end - *i < 2 || (hi = hex_digit(d[*i])) < 0 || (lo = hex_digit(d[*i + 1])) < 0)
            return err_set(e, ERR_USAGE, "%s:%d: \\x takes exactly two hex digits (such as \\x0A)",
                           path, line);
        *out = (char)(hi << 4 | lo);
        *i += 2;
        return 0;
    }
    if (x > 0x20 && x < 0x7F)
        return err_set(e, ERR_USAGE, "%s:%d: unknown escape \\%c (use \\n \\t \\\\ \\xNN)", path,
                       line, x);
    return err_set(e, ERR_USAGE,
                   "%s:%d: unknown escape: a backslash before byte 0x%02X (use \\n \\t \\\\ \\xNN)",
                   path, line, (unsigned char)x);
}

/* Token number t (line t + 1) from d[*i] up to its newline, unescaped into
 * buf at *k; *i moves past the newline. One carriage return before the
 * newline (or the end of the file) is the line end of a CRLF file, not a
 * byte of the token: a token's own CR is written \x0D. */
static int text_token(const char *path, int t, const char *d, size_t size, size_t *i, char *buf,
                      size_t *k, struct err *e)
{
    const char *nl = memchr(d + *i, '\n', size - *i);
    size_t end = nl ? (size_t)(nl - d) : size, start = *k;
    if (end > *i && d[end - 1] == '\r')
        end--;
    while (*i < end) {
        char c = d[(*i)++];
        if (c == '\\' && text_escape(path, t + 1, d, end, i, &c, e) < 0)
            return -1;
        buf[(*k)++] = c;
        if (*k - start > VOCAB_MAX_TOKEN_BYTES)
            return err_set(e, ERR_USAGE, "%s:%d: a token longer than %d bytes", path, t + 1,
                           VOCAB_MAX_TOKEN_BYTES);
    }
    *i = nl ? (size_t)(nl - d) + 1 : size;
    return 0;
}

/* A text vocabulary: one token per line, with \n \t \\ \xNN escapes. */
static int load_text(struct vocab *v, const char *path, const char *d, size_t size, struct err *e)
{
    int n = 0;
    for (size_t i = 0; i < size; i++)
        n += d[i] == '\n';
    if (size > 0 && d[size - 1] != '\n')
        n++;
    if (n <= 0 || n > VOCAB_MAX_TOKENS)
        return err_set(e, ERR_USAGE, "%s: %d lines: a vocabulary has 1 to %d tokens", path, n,
                       VOCAB_MAX_TOKENS);
    char *buf = malloc(size + 1);
    const char **tok = malloc((size_t)n * sizeof *tok);
    size_t *len = malloc((size_t)n * sizeof *len);
    int rc = 0;
    if (!buf || !tok || !len)
        rc = err_set(e, ERR_SYSTEM, "out of memory");
    size_t k = 0, i = 0;
    for (int t = 0; rc == 0 && t < n; t++) {
        tok[t] = buf + k;
        size_t start = k;
        rc = text_token(path, t, d, size, &i, buf, &k, e);
        len[t] = k - start;
    }
    if (rc == 0)
        rc = vocab_from_bytes(v, n, tok, len, n, e);
    free(buf);
    free(tok);
    free(len);
    return rc;
}

int vocab_load(struct vocab *v, const char *path, struct err *e)
{
    memset(v, 0, sizeof *v);
    FILE *f = readfile_open(path, e); /* a FIFO or a directory is refused, not waited on */
    if (!f)
        return -1;
    struct stat st;
    if (fstat(fileno(f), &st) < 0) {
        fclose(f);
        return err_set(e, ERR_USAGE, "%s: cannot read its size", path);
    }
    if ((unsigned long long)st.st_size > VOCAB_FILE_MAX) {
        fclose(f);
        return err_set(e, ERR_USAGE, "%s: %lld bytes: a vocabulary file is at most %u MiB", path,
                       (long long)st.st_size, VOCAB_FILE_MAX >> 20);
    }
    size_t size = (size_t)st.st_size;
    unsigned char *d = malloc(size + 1);
    if (!d) {
        fclose(f);
        return err_set(e, ERR_SYSTEM, "out of memory reading %s", path);
    }
    size_t got = fread(d, 1, size, f);
    fclose(f);
    int rc = got != size ? err_set(e, ERR_USAGE, "%s: read error", path)
                         : vocab_parse(v, path, d, size, e);
    free(d);
    return rc;
}

int vocab_parse(struct vocab *v, const char *path, const unsigned char *d, size_t size,
                struct err *e)
{
    memset(v, 0, sizeof *v);
    if (size > VOCAB_FILE_MAX)
        return err_set(e, ERR_USAGE, "%s: %zu bytes: a vocabulary file is at most %u MiB", path,
                       size, VOCAB_FILE_MAX >> 20);
    if (size >= 8 && memcmp(d, LLVOCAB_MAGIC, 8) == 0)
        return load_binary(v, path, d, size, e);
    return load_text(v, path, (const char *)d, size, e);
}
