/* gguf_write.h - writing GGUF files (version 3, or 2 on request),
 * little-endian, as gguf.h reads them: the tests' model generator
 * (tests/model/gen_model.c) and the tests use it.
 *
 * Entries and tensors are collected in memory, in the order they are added,
 * and the file is written at the end in one go: under a temporary name that
 * becomes the file only when everything was written (base/outfile.h), so a
 * failure never leaves half a file. A tensor's bytes are either borrowed
 * from the caller or produced by a callback while writing, one tensor at a
 * time, so a large model never sits in memory whole.
 *
 * The adders record the first failure (out of memory, a tensor the writer
 * cannot size) and do nothing after it; gguf_w_write reports it.
 */
#ifndef LOGITLAB_GGUF_WRITE_H
#define LOGITLAB_GGUF_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "gguf/gguf.h"

struct gguf_writer;

/* Fills out (bytes long: the tensor's size) with tensor index's data. */
typedef int (*gguf_fill_fn)(void *ctx, int index, void *out, size_t bytes, struct err *e);

struct gguf_writer *gguf_w_new(void);
void gguf_w_free(struct gguf_writer *w);

/* The version written (2 or 3; 3 unless set). */
void gguf_w_version(struct gguf_writer *w, uint32_t version);

/* Sets the alignment (a power of two) and adds general.alignment (u32). */
void gguf_w_alignment(struct gguf_writer *w, uint32_t alignment);

/* A scalar of type (any but string and array) from the host value at v:
 * uint8_t, int8_t, ..., float, double, and uint8_t 0 or 1 for a bool. */
void gguf_w_scalar(struct gguf_writer *w, const char *key, int type, const void *v);
void gguf_w_u32(struct gguf_writer *w, const char *key, uint32_t v);
void gguf_w_i32(struct gguf_writer *w, const char *key, int32_t v);
void gguf_w_f32(struct gguf_writer *w, const char *key, float v);
void gguf_w_bool(struct gguf_writer *w, const char *key, int v);
void gguf_w_str(struct gguf_writer *w, const char *key, const char *s);
void gguf_w_strn(struct gguf_writer *w, const char *key, const char *s, size_t len);

/* An array of n elements of type elem (not string or array) from the host
 * array v, laid out as for gguf_w_scalar. */
void gguf_w_array(struct gguf_writer *w, const char *key, int elem, const void *v, size_t n);

/* An array of n strings. */
void gguf_w_array_str(struct gguf_writer *w, const char *key, const struct gguf_str *s, size_t n);

/* A tensor of n_dims (1 to 4) dimensions ne (ne[0] the row length), of a
 * type quant.h sizes; its data is borrowed: it must stay until the file is
 * written. Returns the tensor's index (for the fill callback), or -1. */
int gguf_w_tensor(struct gguf_writer *w, const char *name, int n_dims, const int64_t *ne, int type,
                  const void *data);

/* The same, its data made by fn(ctx, index, ...) while the file is written. */
int gguf_w_tensor_fill(struct gguf_writer *w, const char *name, int n_dims, const int64_t *ne,
                       int type, gguf_fill_fn fn, void *ctx);

/* Bytes the file will have, as it stands. */
uint64_t gguf_w_size(const struct gguf_writer *w);

/* Writes the file at path (replacing one that is there when force is set).
 * Returns 0, or -1 with e (the first failure of an adder, a fill callback's
 * error, an I/O error). */
int gguf_w_write(struct gguf_writer *w, const char *path, int force, struct err *e);

/* The same into memory: *buf (malloc'ed, the caller frees it), *len. */
int gguf_w_to_mem(struct gguf_writer *w, unsigned char **buf, size_t *len, struct err *e);

#endif
