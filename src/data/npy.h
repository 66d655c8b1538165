/* npy.h - reading logits captured elsewhere: NumPy's .npy format, version 1,
 * 2 or 3, little-endian float32 or float16 in C order, shape [V] or
 * [steps, V], and exactly the data the shape needs. Every value must be
 * finite. Errors name the file and what is
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
    /* What the header said, and the file while it is open (npy_open) */
    int nd;          /* 1 for shape [V], 2 for [steps, V] */
    int half;        /* float16 */
    int esize;       /* bytes a value: 4 or 2 */
    size_t data_off; /* where the data start */
    FILE *file;
    const char *path; /* borrowed from npy_open's caller */
};

/* Opens path and reads its header only: every field is checked (the
 * header is parsed as the Python dict literal the format defines), the
 * shape against the limits, and the file's size against the data the
 * shape needs, before any of that data is read or allocated, so that a
 * caller can refuse rows and cols (a vocabulary of another size) for the
 * cost of the header. Returns 0 with a->rows and a->cols set and the file
 * open (npy_read or npy_free next), or -1 with a message. */
int npy_open(struct npy *a, const char *path, struct err *e);

/* Reads the data of a file npy_open opened into a->data, at its final
 * size and with no other copy: rows x cols floats, the file's own size for
 * float32 (twice it for float16). Closes the file. Returns 0, or -1 (then
 * a is freed). */
int npy_read(struct npy *a, struct err *e);

/* npy_open, then npy_read. Returns 0, or -1 with a message. */
int npy_load(struct npy *a, const char *path, struct err *e);

/* The same from bytes in memory; path is only used in messages. */
int npy_parse(struct npy *a, const char *path, const unsigned char *buf, size_t len, struct err *e);

/* Frees the data and closes the file, if open. */
void npy_free(struct npy *a);

/* Writes rows x cols floats as a version 1.0 .npy file ('<f4', C order,
 * shape [cols] for one row) to out: what npy_load reads back. Returns 0,
 * or -1 when the write fails. */
int npy_write(FILE *out, const float *data, int rows, int cols, struct err *e);

/* IEEE half to float (every value, subnormals and infinities included). */
float npy_half(unsigned short h);

#endif
