/* gguf.h - reading GGUF files (llama.cpp's model format), versions 2 and 3,
 * little-endian, memory-mapped read-only: the weights are never copied.
 *
 * A file is a header (magic "GGUF", version, tensor count, metadata count),
 * the metadata as typed key/value pairs, one descriptor per tensor (name,
 * shape, type, offset), then the data section, which starts at the next
 * multiple of general.alignment (32 unless given) after the descriptors.
 * doc/gguf.md describes it byte by byte, with every check made here.
 *
 * Nothing in the file is trusted: every count and length is checked against
 * the bytes that remain before anything is allocated from it, every tensor
 * must lie inside the data section, aligned, without overlapping another,
 * in a type model/quant.h reads. A refusal is one line, "PATH: what".
 *
 * Strings (keys, tensor names, string values) point into the mapping and
 * are not terminated; print them only through gguf_escape.
 */
#ifndef LOGITLAB_GGUF_H
#define LOGITLAB_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define GGUF_MAX_DIMS          4
#define GGUF_MAX_NAME          64    /* bytes in a tensor name (the spec's limit) */
#define GGUF_MAX_KEY           65535 /* bytes in a key (the spec's limit) */
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_KV            65536   /* metadata entries read (real files have ~40) */
#define GGUF_MAX_TENSORS       1048576 /* tensors read (Llama 3.1 405B has 1,138) */

/* Metadata value types, as the file stores them. */
enum gguf_type {
    GGUF_T_U8 = 0,
    GGUF_T_I8 = 1,
    GGUF_T_U16 = 2,
    GGUF_T_I16 = 3,
    GGUF_T_U32 = 4,
    GGUF_T_I32 = 5,
    GGUF_T_F32 = 6,
    GGUF_T_BOOL = 7,
    GGUF_T_STRING = 8,
    GGUF_T_ARRAY = 9,
    GGUF_T_U64 = 10,
    GGUF_T_I64 = 11,
    GGUF_T_F64 = 12,
    GGUF_T_COUNT = 13,
};

/* A string in the file: len bytes, not terminated, any bytes at all. */
struct gguf_str {
    const char *s;
    size_t len;
};

/* One metadata entry. For an array, type is GGUF_T_ARRAY, elem the type of
 * its elements and n their count; for a scalar, elem == type and n == 1.
 * val points at the value's bytes in the file (an array's first element;
 * a string's length prefix), little-endian and possibly unaligned. */
struct gguf_kv {
    struct gguf_str key;
    int type, elem;
    uint64_t n;
    const unsigned char *val;
    size_t bytes; /* of the value (an array's elements), checked to be in the file */
};

/* One tensor. ne[0] is the row length (ggml's order), dimensions past
 * n_dims are 1; data points into the mapping, bytes long. */
struct gguf_tensor {
    struct gguf_str name;
    int n_dims;
    int64_t ne[GGUF_MAX_DIMS];
    int type;        /* a type quant_info() knows */
    uint64_t offset; /* from the start of the data section */
    size_t bytes;
    const void *data;
};

/* An open file; read-only for its users. */
struct gguf {
    char *path; /* the name messages use */
    const unsigned char *base;
    size_t size;
    int mapped; /* 1 when base is our mapping (gguf_open) */
    uint32_t version;
    uint32_t alignment;
    size_t data_offset; /* where the data section starts */
    size_t n_kv;
    struct gguf_kv *kv; /* in file order */
    size_t n_tensors;
    struct gguf_tensor *tensors; /* in file order */
    /* by name, for lookups */
    const struct gguf_kv **kv_sorted;
    const struct gguf_tensor **t_sorted;
};

/* Maps path and checks all of it. Returns NULL with e on failure: ERR_USAGE
 * for a bad file ("x.gguf: not a regular file", "x.gguf: truncated: ...",
 * "x.gguf: tensor 'blk.0.attn_q.weight' has type Q2_K; logitlab reads ..."),
 * ERR_SYSTEM for out of memory or a failing open/mmap. */
struct gguf *gguf_open(const char *path, struct err *e);

/* The same on size bytes in memory (not copied: they must outlive the
 * result); name is what messages call them. */
struct gguf *gguf_open_mem(const char *name, const void *bytes, size_t size, struct err *e);

/* Unmaps and frees; g may be NULL. Every pointer into the file dies. */
void gguf_close(struct gguf *g);

/* The entry named key, or NULL. */
const struct gguf_kv *gguf_find(const struct gguf *g, const char *key);

/* The tensor named name, or NULL. */
const struct gguf_tensor *gguf_tensor(const struct gguf *g, const char *name);

/* Typed getters. Each returns 1 when key is there and fits (*v set), 0 when
 * it is absent (*v untouched), -1 with e when its type or value does not
 * fit ("x.gguf: 'llama.block_count' is a string, not an integer";
 * "... is -1, outside 0 to 4294967295"). The integer getters take any
 * integer type whose value fits; gguf_get_f32 takes f32, or an f64 within
 * float's range. */
int gguf_get_u32(const struct gguf *g, const char *key, uint32_t *v, struct err *e);
int gguf_get_i32(const struct gguf *g, const char *key, int32_t *v, struct err *e);
int gguf_get_u64(const struct gguf *g, const char *key, uint64_t *v, struct err *e);
int gguf_get_i64(const struct gguf *g, const char *key, int64_t *v, struct err *e);
int gguf_get_f32(const struct gguf *g, const char *key, float *v, struct err *e);
int gguf_get_bool(const struct gguf *g, const char *key, int *v, struct err *e);
int gguf_get_str(const struct gguf *g, const char *key, struct gguf_str *v, struct err *e);

/* An array's length: 1 and *n when key is an array whose elements are of
 * class elem (GGUF_T_STRING; GGUF_T_F32 for f32 or f64; GGUF_T_I32 for any
 * integer type), 0 when absent, -1 with e otherwise. */
int gguf_get_arr_len(const struct gguf *g, const char *key, int elem, uint64_t *n, struct err *e);

/* Fill out[0..n) from the array key, which must hold exactly n elements of
 * the right class ("x.gguf: 'tokenizer.ggml.scores' has 3 elements, expected
 * 4"). Strings point into the mapping; numbers are converted (i32s: every
 * value must fit in int32). Same returns as the getters. */
int gguf_get_strs(const struct gguf *g, const char *key, struct gguf_str *out, size_t n,
                  struct err *e);
int gguf_get_f32s(const struct gguf *g, const char *key, float *out, size_t n, struct err *e);
int gguf_get_i32s(const struct gguf *g, const char *key, int32_t *out, size_t n, struct err *e);

/* "u32", "string", "array": a value type's name; "type 13" for none. */
const char *gguf_type_name(int type, char *buf, size_t n);

/* Writes s (len bytes) into buf (size n, always terminated) for printing
 * on one line: control characters (C0, DEL, C1), backslash and invalid
 * UTF-8 become \xNN (\n, \t, \r and \\ as such); when it does not fit, it
 * ends in "...". Returns the length written. */
size_t gguf_escape(const char *s, size_t len, char *buf, size_t n);

#endif
