/* gguf_write.c - the GGUF writer: the metadata serialized as it is added,
 * the tensors remembered, everything written at the end (gguf_write.h). */
#include "gguf/gguf_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/outfile.h"
#include "model/quant.h"

struct wtensor {
    char *name;
    size_t name_len;
    int n_dims;
    int64_t ne[GGUF_MAX_DIMS];
    int type;
    size_t bytes;
    uint64_t offset; /* in the data section */
    const void *data;
    gguf_fill_fn fn;
    void *ctx;
};

struct gguf_writer {
    uint32_t version, alignment;
    unsigned char *kv; /* the metadata entries as the file stores them */
    size_t kv_len, kv_cap;
    uint64_t n_kv;
    struct wtensor *t;
    size_t n_t, t_cap;
    struct err err; /* the first failure */
    int failed;
};

static void fail(struct gguf_writer *w, int code, const char *what, const char *name)
{
    if (!w->failed)
        err_set(&w->err, code, "%s%s%s", what, name ? ": " : "", name ? name : "");
    w->failed = 1;
}

struct gguf_writer *gguf_w_new(void)
{
    struct gguf_writer *w = calloc(1, sizeof *w);
    if (w) {
        w->version = 3;
        w->alignment = GGUF_DEFAULT_ALIGNMENT;
    }
    return w;
}

void gguf_w_free(struct gguf_writer *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n_t; i++)
        free(w->t[i].name);
    free(w->t);
    free(w->kv);
    free(w);
}

void gguf_w_version(struct gguf_writer *w, uint32_t version)
{
    w->version = version;
}

/* Appends n bytes to the metadata. */
static void put(struct gguf_writer *w, const void *p, size_t n)
{
    if (w->failed)
        return;
    if (w->kv_len + n > w->kv_cap) {
        size_t cap = w->kv_cap ? w->kv_cap : 4096;
        while (cap < w->kv_len + n)
            cap *= 2;
        unsigned char *q = realloc(w->kv, cap);
        if (!q) {
            fail(w, ERR_SYSTEM, "out of memory", NULL);
            return;
        }
        w->kv = q;
        w->kv_cap = cap;
    }
    memcpy(w->kv + w->kv_len, p, n);
    w->kv_len += n;
}

/* Little-endian integers, one byte at a time: any host order works. */
static void put_le(struct gguf_writer *w, uint64_t v, int bytes)
{
    unsigned char b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    put(w, b, (size_t)bytes);
}

static void put_str(struct gguf_writer *w, const char *s, size_t len)
{
    put_le(w, len, 8);
    put(w, s, len);
}

/* Bytes of a scalar type's value; 0 for strings, arrays, unknown types. */
static int scalar_size(int type)
{
    static const signed char SIZE[GGUF_T_COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
    return type >= 0 && type < GGUF_T_COUNT ? SIZE[type] : 0;
}

/* One host value of a scalar type, little-endian. */
static void put_value(struct gguf_writer *w, int type, const void *v)
{
    int n = scalar_size(type);
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u = 0;
    /* The host value as an unsigned integer of its width (a float's bits). */
    if (n == 1)
        memcpy(&u8, v, 1), u = u8;
    else if (n == 2)
        memcpy(&u16, v, 2), u = u16;
    else if (n == 4)
        memcpy(&u32, v, 4), u = u32;
    else
        memcpy(&u, v, 8);
    put_le(w, u, n);
}

static void put_key(struct gguf_writer *w, const char *key, int type)
{
    put_str(w, key, strlen(key));
    put_le(w, (uint64_t)type, 4);
    w->n_kv++;
}

void gguf_w_scalar(struct gguf_writer *w, const char *key, int type, const void *v)
{
    if (scalar_size(type) == 0) {
        fail(w, ERR_USAGE, "not a scalar type", key);
        return;
    }
    put_key(w, key, type);
    put_value(w, type, v);
}

void gguf_w_alignment(struct gguf_writer *w, uint32_t alignment)
{
    w->alignment = alignment;
    gguf_w_u32(w, "general.alignment", alignment);
}

void gguf_w_u32(struct gguf_writer *w, const char *key, uint32_t v)
{
    gguf_w_scalar(w, key, GGUF_T_U32, &v);
}

void gguf_w_i32(struct gguf_writer *w, const char *key, int32_t v)
{
    gguf_w_scalar(w, key, GGUF_T_I32, &v);
}

void gguf_w_f32(struct gguf_writer *w, const char *key, float v)
{
    gguf_w_scalar(w, key, GGUF_T_F32, &v);
}

void gguf_w_bool(struct gguf_writer *w, const char *key, int v)
{
    uint8_t b = v != 0;
    gguf_w_scalar(w, key, GGUF_T_BOOL, &b);
}

void gguf_w_strn(struct gguf_writer *w, const char *key, const char *s, size_t len)
{
    put_key(w, key, GGUF_T_STRING);
    put_str(w, s, len);
}

void gguf_w_str(struct gguf_writer *w, const char *key, const char *s)
{
    gguf_w_strn(w, key, s, strlen(s));
}

void gguf_w_array(struct gguf_writer *w, const char *key, int elem, const void *v, size_t n)
{
    int size = scalar_size(elem);
    if (size == 0) {
        fail(w, ERR_USAGE, "not a scalar element type", key);
        return;
    }
    put_key(w, key, GGUF_T_ARRAY);
    put_le(w, (uint64_t)elem, 4);
    put_le(w, n, 8);
    for (size_t i = 0; i < n; i++)
        put_value(w, elem, (const unsigned char *)v + i * (size_t)size);
}

void gguf_w_array_str(struct gguf_writer *w, const char *key, const struct gguf_str *s, size_t n)
{
    put_key(w, key, GGUF_T_ARRAY);
    put_le(w, GGUF_T_STRING, 4);
    put_le(w, n, 8);
    for (size_t i = 0; i < n; i++)
        put_str(w, s[i].s, s[i].len);
}

static uint64_t align_up(uint64_t v, uint32_t a)
{
    return (v + a - 1) / a * a;
}

/* Records a tensor; its offset follows the previous one's, aligned. */
static int add_tensor(struct gguf_writer *w, const char *name, int n_dims, const int64_t *ne,
                      int type, struct wtensor *proto)
{
    if (w->failed)
        return -1;
    if (n_dims < 1 || n_dims > GGUF_MAX_DIMS) {
        fail(w, ERR_USAGE, "a tensor needs 1 to 4 dimensions", name);
        return -1;
    }
    int64_t rows = 1;
    for (int d = 1; d < n_dims; d++)
        rows *= ne[d];
    size_t row = quant_row_bytes(type, ne[0]);
    if (row == 0 || rows <= 0) {
        fail(w, ERR_USAGE, "a tensor of a type or shape the writer cannot size", name);
        return -1;
    }
    if (w->n_t == w->t_cap) {
        size_t cap = w->t_cap ? 2 * w->t_cap : 64;
        struct wtensor *t = realloc(w->t, cap * sizeof *t);
        if (!t) {
            fail(w, ERR_SYSTEM, "out of memory", NULL);
            return -1;
        }
        w->t = t;
        w->t_cap = cap;
    }
    struct wtensor *t = &w->t[w->n_t];
    *t = *proto;
    t->name_len = strlen(name);
    t->name = malloc(t->name_len + 1);
    if (!t->name) {
        fail(w, ERR_SYSTEM, "out of memory", NULL);
        return -1;
    }
    memcpy(t->name, name, t->name_len + 1);
    t->n_dims = n_dims;
    for (int d = 0; d < GGUF_MAX_DIMS; d++)
        t->ne[d] = d < n_dims ? ne[d] : 1;
    t->type = type;
    t->bytes = row * (size_t)rows;
    t->offset = 0;
    if (w->n_t > 0)
        t->offset = align_up(w->t[w->n_t - 1].offset + w->t[w->n_t - 1].bytes, w->alignment);
    return (int)w->n_t++;
}

int gguf_w_tensor(struct gguf_writer *w, const char *name, int n_dims, const int64_t *ne, int type,
                  const void *data)
{
    struct wtensor proto = { .data = data };
    return add_tensor(w, name, n_dims, ne, type, &proto);
}

int gguf_w_tensor_fill(struct gguf_writer *w, const char *name, int n_dims, const int64_t *ne,
                       int type, gguf_fill_fn fn, void *ctx)
{
    struct wtensor proto = { .fn = fn, .ctx = ctx };
    return add_tensor(w, name, n_dims, ne, type, &proto);
}

/* Bytes of the header, the metadata and the descriptors. */
static uint64_t head_size(const struct gguf_writer *w)
{
    uint64_t n = 24 + w->kv_len;
    for (size_t i = 0; i < w->n_t; i++)
        n += 8 + w->t[i].name_len + 4 + 8 * (uint64_t)w->t[i].n_dims + 4 + 8;
    return n;
}

uint64_t gguf_w_size(const struct gguf_writer *w)
{
    uint64_t n = head_size(w);
    if (w->n_t == 0)
        return n;
    const struct wtensor *last = &w->t[w->n_t - 1];
    return align_up(n, w->alignment) + align_up(last->offset + last->bytes, w->alignment);
}

static void out_le(FILE *f, uint64_t v, int bytes)
{
    unsigned char b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    fwrite(b, 1, (size_t)bytes, f);
}

static void out_pad(FILE *f, uint64_t pos, uint32_t a)
{
    for (uint64_t i = pos; i < align_up(pos, a); i++)
        fputc(0, f);
}

/* Everything but the tensors' data. */
static void write_head(const struct gguf_writer *w, FILE *f)
{
    fwrite("GGUF", 1, 4, f);
    out_le(f, w->version, 4);
    out_le(f, w->n_t, 8);
    out_le(f, w->n_kv, 8);
    if (w->kv_len)
        fwrite(w->kv, 1, w->kv_len, f);
    for (size_t i = 0; i < w->n_t; i++) {
        const struct wtensor *t = &w->t[i];
        out_le(f, t->name_len, 8);
        fwrite(t->name, 1, t->name_len, f);
        out_le(f, (uint64_t)t->n_dims, 4);
        for (int d = 0; d < t->n_dims; d++)
            out_le(f, (uint64_t)t->ne[d], 8);
        out_le(f, (uint64_t)t->type, 4);
        out_le(f, t->offset, 8);
    }
    if (w->n_t > 0)
        out_pad(f, head_size(w), w->alignment);
}

/* The whole file into f. */
static int write_all(const struct gguf_writer *w, FILE *f, struct err *e)
{
    if (w->failed) {
        *e = w->err;
        return -1;
    }
    write_head(w, f);
    for (size_t i = 0; i < w->n_t; i++) {
        const struct wtensor *t = &w->t[i];
        if (t->fn) {
            void *buf = malloc(t->bytes ? t->bytes : 1);
            if (!buf)
                return err_set(e, ERR_SYSTEM, "out of memory (%zu bytes for tensor %s)", t->bytes,
                               t->name);
            int rc = t->fn(t->ctx, (int)i, buf, t->bytes, e);
            if (rc == 0)
                fwrite(buf, 1, t->bytes, f);
            free(buf);
            if (rc != 0)
                return -1;
        } else {
            fwrite(t->data, 1, t->bytes, f);
        }
        out_pad(f, t->offset + t->bytes, w->alignment);
    }
    if (ferror(f))
        return err_set(e, ERR_SYSTEM, "writing failed: %s", strerror(errno));
    return 0;
}

int gguf_w_write(struct gguf_writer *w, const char *path, int force, struct err *e)
{
    struct outfile o;
    if (outfile_open(&o, path, force, e) < 0)
        return -1;
    int ok = write_all(w, o.f, e) == 0;
    if (!ok)
        err_prefix(e, "%s", path);
    return outfile_close(&o, ok, e) < 0 || !ok ? -1 : 0;
}

int gguf_w_to_mem(struct gguf_writer *w, unsigned char **buf, size_t *len, struct err *e)
{
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    if (!f)
        return err_set(e, ERR_SYSTEM, "out of memory");
    int rc = write_all(w, f, e);
    if (fclose(f) != 0 && rc == 0)
        rc = err_set(e, ERR_SYSTEM, "out of memory");
    if (rc < 0) {
        free(p);
        return -1;
    }
    *buf = (unsigned char *)p;
    *len = n;
    return 0;
}
