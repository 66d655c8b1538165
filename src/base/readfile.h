/* readfile.h - reading a whole small file the careful way: opened without
 * blocking (a FIFO is refused, not waited on), checked to be a regular file,
 * its size bounded before anything is allocated. */
#ifndef LOGITLAB_READFILE_H
#define LOGITLAB_READFILE_H

#include <stddef.h>
#include <stdio.h>

#include "base/err.h"

/* Reads path into *out (malloc'd, with a terminating NUL after *len bytes).
 * Errors name the file: cannot open, not a regular file, larger than max
 * bytes, a read error. */
int readfile(const char *path, size_t max, char **out, size_t *len, struct err *e);

/* Opens path for reading as a stream, the same way: without blocking
 * while it is checked (a FIFO is refused, never waited on), a regular file
 * only. NULL with e: "PATH: cannot open: REASON", "PATH: not a regular
 * file" (a directory, a FIFO, a device). */
FILE *readfile_open(const char *path, struct err *e);

#endif
