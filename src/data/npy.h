/* npy.h - reading logits captured elsewhere: NumPy's .npy format, version 1,
 * 2 or 3, little-endian float32 or float16 in C order, shape [V] or
 * [steps, V]. Every value must be finite. Errors name the file and what is
 * wrong with it ("x.npy: dtype '<f8' is not supported (float32 or float16)").
 */
#ifndef LOGITLAB_NPY_H
#define LOGITLAB_NPY_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "base/err.h"

#define NPY_MAX_BYTES ((size_t)1 << 30) /* a larger file is refused: 1 GiB */
#define NPY_MAX_ROWS  256               /* steps in one file, as in a lesson */
#define NPY_MAX_COLS  (1 << 22)         /* tokens in a step, as in a vocabulary */

struct npy {
    int rows;    /* 1 for shape [V] */
    int cols;    /* V */
    float *data; /* rows x cols, converted to float32 */
};

/* Reads path. Returns 0, or -1 with a message. */
int npy_load(struct npy *a, const char *path, struct err *e);

/* The same from bytes in memory; path is only used in messages. */
int npy_parse(struct npy *a, const char *path, const unsigned char *buf, size_t len, struct err *e);

void npy_free(struct npy *a);

/* Writes rows x cols floats as a version 1.0 .npy file ('<f4', C order,
 * shape [cols] for one row) to out: what npy_load reads back. Returns 0,
 * or -1 when the write fails. */
int npy_write(FILE *out, const float *data, int rows, int cols, struct err *e);

/* IEEE half to float (every value, subnormals and infinities included). */
float npy_half(unsigned short h);

#endif
