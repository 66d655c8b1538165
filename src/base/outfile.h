/* outfile.h - where a command's output goes: standard output, or a file
 * named by --output, written whole or not at all.
 *
 * A file is written under a temporary name beside it and moved into place
 * when the command succeeds, so a failure never leaves half a file. An
 * existing file is never replaced unless force is set: the check is made
 * before any work and again, atomically (link), at the end.
 */
#ifndef LOGITLAB_OUTFILE_H
#define LOGITLAB_OUTFILE_H

#include <stdio.h>

#include "base/err.h"

struct outfile {
    FILE *f;    /* where to write */
    char *path; /* NULL for standard output */
    char *tmp;
    int force;
};

/* Opens path (NULL: standard output). Errors: the file exists and force is
 * 0 ("x.md exists: add --force to replace it"), its directory cannot be
 * written. */
int outfile_open(struct outfile *o, const char *path, int force, struct err *e);

/* Finishes: with ok set, flushes and moves the file into place; otherwise
 * (or on a write error) removes the temporary file. Returns 0 or -1. */
int outfile_close(struct outfile *o, int ok, struct err *e);

#endif
