/* tokdata.c - the Llama 3 and Llama 2 tokenizers' data from data/, spelled
 * as GGUF files spell it (tokdata.h). The formats of the three files are in
 * data/README.md; every size is checked against the file's length before it
 * is used, so a damaged file is refused with its name, never read past.
 */
#include "tokdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/vocab.h"

#define LLAMA3_TOKENS     128256
#define LLAMA3_FIRST_SPEC 128000
#define LLAMA3_MERGES     280147
#define LLAMA2_TOKENS     32000
#define TOKDATA_FILE_MAX  (16u << 20)

/* Reads the whole of dir/name into *buf (*size bytes); path gets its name. */
static int read_all(const char *dir, const char *name, unsigned char **buf, size_t *size,
                    char *path, size_t path_n, struct err *e)
{
    snprintf(path, path_n, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(e, ERR_SYSTEM, "%s: cannot open", path);
    long len = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (len < 0 || (unsigned long)len > TOKDATA_FILE_MAX || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return err_set(e, ERR_USAGE, "%s: cannot read, or larger than 16 MiB", path);
    }
    unsigned char *b = malloc((size_t)len + 1);
    size_t n = b ? fread(b, 1, (size_t)len, f) : 0;
    fclose(f);
    if (!b)
        return err_set(e, ERR_SYSTEM, "%s: out of memory", path);
    if (n != (size_t)len) {
        free(b);
        return err_set(e, ERR_SYSTEM, "%s: short read", path);
    }
    *buf = b;
    *size = n;
    return 0;
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t tokdata_spell_byte(unsigned b, char *out)
{
    int keep = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
    unsigned cp = b;
    if (!keep) {
        unsigned k = 0;
        for (unsigned c = 0; c < b; c++)
            k += !((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || c >= 0xae);
        cp = 0x100 + k;
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    out[0] = (char)(0xc0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
}

static int alloc_tables(struct tokdata *d, int n, int n_merges, size_t strings, struct err *e)
{
    d->text = calloc((size_t)n, sizeof *d->text);
    d->types = calloc((size_t)n, sizeof *d->types);
    d->merges = n_merges ? calloc((size_t)n_merges, sizeof *d->merges) : NULL;
    d->strings = malloc(strings);
    if (!d->text || !d->types || (n_merges && !d->merges) || !d->strings)
        return err_set(e, ERR_SYSTEM, "out of memory for the tokenizer data");
    return 0;
}

/* Spells each Llama 3 token as a GGUF file does into d (types too). Returns
 * the bytes of d->strings used. */
static size_t spell_llama3(struct tokdata *d, const struct vocab *v)
{
    char map[512];
    size_t map_len[256], at = 0;
    for (unsigned b = 0; b < 256; b++)
        map_len[b] = tokdata_spell_byte(b, map + 2 * b);
    for (int id = 0; id < v->n; id++) {
        size_t len;
        const char *raw = vocab_bytes(v, id, &len);
        char *s = d->strings + at;
        size_t k = 0;
        for (size_t i = 0; i < len; i++) {
            unsigned b = (unsigned char)raw[i];
            if (id >= LLAMA3_FIRST_SPEC) {
                s[k++] = (char)b; /* special tokens are stored as their text */
                continue;
            }
            memcpy(s + k, map + 2 * b, map_len[b]);
            k += map_len[b];
        }
        s[k] = '\0';
        d->text[id] = (struct tok_str){ s, k };
        d->types[id] = id >= LLAMA3_FIRST_SPEC ? TOKT_CONTROL : TOKT_NORMAL;
        at += k + 1;
    }
    return at;
}

/* Checks the LLMERGE1 layout of data/README.md against size and the ids
 * against the vocabulary. */
static int check_merges(const unsigned char *m, size_t size, const char *path, struct err *e)
{
    if (size < 16 || memcmp(m, "LLMERGE1", 8) != 0)
        return err_set(e, ERR_USAGE, "%s: not an LLMERGE1 file", path);
    uint32_t count = get_u32(m + 8), ntok = get_u32(m + 12);
    if (count != LLAMA3_MERGES || ntok != LLAMA3_TOKENS || size != 16 + 8 * (size_t)count)
        return err_set(e, ERR_USAGE, "%s: expected %d merges of %d tokens in %zu bytes", path,
                       LLAMA3_MERGES, LLAMA3_TOKENS, 16 + 8 * (size_t)LLAMA3_MERGES);
    for (uint32_t r = 0; r < 2 * count; r++)
        if (get_u32(m + 16 + 4 * (size_t)r) >= ntok)
            return err_set(e, ERR_USAGE, "%s: merge %u names token %u of %u", path, r / 2,
                           get_u32(m + 16 + 4 * (size_t)r), ntok);
    return 0;
}

/* Bytes of strings the spelled tokens and the merges need. */
static size_t llama3_strings(const struct vocab *v, const unsigned char *m)
{
    char tmp[2];
    size_t *len = calloc((size_t)v->n, sizeof *len), total = 0;
    if (!len)
        return 0;
    for (int id = 0; id < v->n; id++) {
        size_t n;
        const char *raw = vocab_bytes(v, id, &n);
        len[id] = n;
        if (id < LLAMA3_FIRST_SPEC)
            for (size_t i = 0; i < n; i++)
                len[id] += tokdata_spell_byte((unsigned char)raw[i], tmp) - 1;
        total += len[id] + 1;
    }
    for (size_t r = 0; r < LLAMA3_MERGES; r++)
        total += len[get_u32(m + 16 + 8 * r)] + len[get_u32(m + 20 + 8 * r)] + 2;
    free(len);
    return total;
}

/* Writes the merges as "left right" strings after the tokens' spellings. */
static void spell_merges(struct tokdata *d, const unsigned char *m, size_t at)
{
    for (size_t r = 0; r < LLAMA3_MERGES; r++) {
        const struct tok_str *l = &d->text[get_u32(m + 16 + 8 * r)];
        const struct tok_str *rt = &d->text[get_u32(m + 20 + 8 * r)];
        char *s = d->strings + at;
        memcpy(s, l->s, l->len);
        s[l->len] = ' ';
        memcpy(s + l->len + 1, rt->s, rt->len);
        s[l->len + 1 + rt->len] = '\0';
        d->merges[r] = (struct tok_str){ s, l->len + 1 + rt->len };
        at += l->len + rt->len + 2;
    }
}

static void llama3_ids(struct tok_spec *s)
{
    s->kind = TOK_BPE;
    s->pre = (struct tok_str){ "llama-bpe", 9 };
    s->bos = 128000;
    s->eos = 128001;
    s->eot = 128009;
    s->unk = -1;
    s->pad = -1;
    s->add_bos = 1;
    s->add_space_prefix = 0;
}

int tokdata_llama3(struct tokdata *d, const char *data_dir, struct err *e)
{
    memset(d, 0, sizeof *d);
    char path[1024];
    struct vocab v;
    snprintf(path, sizeof path, "%s/llama3-vocab.bin", data_dir);
    if (vocab_load(&v, path, e) < 0)
        return -1;
    unsigned char *m = NULL;
    size_t msize = 0;
    int rc = -1;
    if (v.n != LLAMA3_TOKENS || v.first_special != LLAMA3_FIRST_SPEC) {
        err_set(e, ERR_USAGE, "%s: expected %d tokens, specials from %d", path, LLAMA3_TOKENS,
                LLAMA3_FIRST_SPEC);
        goto out;
    }
    if (read_all(data_dir, "llama3-merges.bin", &m, &msize, path, sizeof path, e) < 0 ||
        check_merges(m, msize, path, e) < 0)
        goto out;
    size_t strings = llama3_strings(&v, m);
    if (strings == 0 || alloc_tables(d, v.n, LLAMA3_MERGES, strings, e) < 0) {
        err_set(e, ERR_SYSTEM, "out of memory for the tokenizer data");
        goto out;
    }
    spell_merges(d, m, spell_llama3(d, &v));
    d->spec.n = v.n;
    d->spec.text = d->text;
    d->spec.types = d->types;
    d->spec.n_merges = LLAMA3_MERGES;
    d->spec.merges = d->merges;
    llama3_ids(&d->spec);
    rc = 0;
out:
    free(m);
    vocab_free(&v);
    if (rc < 0)
        tokdata_free(d);
    return rc;
}

/* Checks the LLSPVOC1 layout of data/README.md against size; fills the
 * offsets of its parts. */
static int llama2_layout(const unsigned char *b, size_t size, const char *path, size_t *blob_at,
                         struct err *e)
{
    if (size < 16 || memcmp(b, "LLSPVOC1", 8) != 0)
        return err_set(e, ERR_USAGE, "%s: not an LLSPVOC1 file", path);
    uint32_t n = get_u32(b + 8), blob = get_u32(b + 12);
    size_t head = 16 + 4 * ((size_t)n + 1) + 4 * (size_t)n + n;
    if (n != LLAMA2_TOKENS || size != head + blob)
        return err_set(e, ERR_USAGE, "%s: expected %d pieces and %zu bytes, the file has %zu", path,
                       LLAMA2_TOKENS, head + blob, size);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t a = get_u32(b + 16 + 4 * i), z = get_u32(b + 20 + 4 * i);
        if (a > z || z > blob || (i == 0 && a != 0) || (i == n - 1 && z != blob))
            return err_set(e, ERR_USAGE, "%s: the offsets of piece %u are out of order", path, i);
    }
    *blob_at = head;
    return 0;
}

static void llama2_ids(struct tok_spec *s)
{
    s->kind = TOK_SPM;
    s->pre = (struct tok_str){ NULL, 0 };
    s->bos = 1;
    s->eos = 2;
    s->eot = -1;
    s->unk = 0;
    s->pad = -1;
    s->add_bos = 1;
    s->add_space_prefix = 1;
}

int tokdata_llama2(struct tokdata *d, const char *data_dir, struct err *e)
{
    memset(d, 0, sizeof *d);
    char path[1024];
    unsigned char *b = NULL;
    size_t size = 0, blob_at = 0;
    int rc = -1;
    if (read_all(data_dir, "llama2-vocab.bin", &b, &size, path, sizeof path, e) < 0 ||
        llama2_layout(b, size, path, &blob_at, e) < 0)
        goto out;
    int n = LLAMA2_TOKENS;
    if (alloc_tables(d, n, 0, size - blob_at + (size_t)n, e) < 0)
        goto out;
    d->scores = calloc((size_t)n, sizeof *d->scores);
    if (!d->scores) {
        err_set(e, ERR_SYSTEM, "out of memory for the tokenizer data");
        goto out;
    }
    size_t at = 0, sc = 16 + 4 * ((size_t)n + 1);
    for (int i = 0; i < n; i++) {
        uint32_t a = get_u32(b + 16 + 4 * (size_t)i), z = get_u32(b + 20 + 4 * (size_t)i);
        char *s = d->strings + at;
        memcpy(s, b + blob_at + a, z - a);
        s[z - a] = '\0';
        d->text[i] = (struct tok_str){ s, z - a };
        at += z - a + 1;
        uint32_t bits = get_u32(b + sc + 4 * (size_t)i);
        memcpy(&d->scores[i], &bits, sizeof bits);
        d->types[i] = b[sc + 4 * (size_t)n + (size_t)i];
    }
    d->spec.n = n;
    d->spec.text = d->text;
    d->spec.scores = d->scores;
    d->spec.types = d->types;
    llama2_ids(&d->spec);
    rc = 0;
out:
    free(b);
    if (rc < 0)
        tokdata_free(d);
    return rc;
}

/* Bytes in the sequence lead byte b starts, by its leading one bits (1 for
 * ASCII, 0 for a continuation byte or 11111xxx, which start nothing). */
static size_t seq_len(unsigned char b)
{
    size_t ones = 0;
    while (ones < 8 && (b & (0x80u >> ones)))
        ones++;
    return ones == 0 ? 1 : ones >= 2 && ones <= 4 ? ones : 0;
}

size_t tokdata_llama_text(const char *s, size_t len, char *out)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = 0, i = 0;
    while (i < len) {
        size_t k = seq_len(u[i]), j = 1;
        unsigned long cp = k == 1 ? u[i] : u[i] & (0xffu >> (k + 1));
        while (k > 1 && j < k && i + j < len && (u[i + j] & 0xc0) == 0x80)
            cp = cp << 6 | (u[i + j++] & 0x3fu);
        if (k == 0 || j < k || cp > 0x10ffff) {
            k = 1;
            cp = 0xfffd;
        }
        i += k;
        if (cp < 0x80) {
            out[n++] = (char)cp;
        } else if (cp < 0x800) {
            out[n++] = (char)(0xc0 | cp >> 6);
            out[n++] = (char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            out[n++] = (char)(0xe0 | cp >> 12);
            out[n++] = (char)(0x80 | (cp >> 6 & 0x3f));
            out[n++] = (char)(0x80 | (cp & 0x3f));
        } else {
            out[n++] = (char)(0xf0 | cp >> 18);
            out[n++] = (char)(0x80 | (cp >> 12 & 0x3f));
            out[n++] = (char)(0x80 | (cp >> 6 & 0x3f));
            out[n++] = (char)(0x80 | (cp & 0x3f));
        }
    }
    return n;
}

void tokdata_free(struct tokdata *d)
{
    free(d->text);
    free(d->merges);
    free(d->scores);
    free(d->types);
    free(d->strings);
    free(d->extra);
    memset(d, 0, sizeof *d);
}
