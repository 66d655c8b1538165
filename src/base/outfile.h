/* outfile.h - where a command's output goes: standard output, or a file
 * named by --output, written whole or not at all.
 *
 * Whatever ends the program before outfile_close succeeds (a signal, a
 * write error, a full disk) leaves neither the target nor a temporary file
 * behind. How (Linux):
 *
 *  - The bytes go to a file without a name, opened with O_TMPFILE in the
 *    target's directory; outfile_close gives it its name once everything is
 *    written and synced (linkat through /proc/self/fd). Until then nothing
 *    can be left: the kernel frees a file without a name when the process
 *    ends, even by kill -9.
 *  - Without force the name comes from linkat itself, which refuses a name
 *    that exists: nothing is clobbered, even a file made while the command
 *    worked ("x.md exists: add --force to replace it", checked once before
 *    any work and again, atomically, at the end). With force the file is
 *    linked to a short temporary name in the same directory, then renamed
 *    over the target (rename replaces in one step).
 *  - Where the directory's file system refuses O_TMPFILE (EOPNOTSUPP,
 *    EISDIR, EINVAL...: FAT, some network file systems) or /proc is not
 *    there, the bytes go to a named temporary in the target's directory
 *    instead. While such a name exists SIGINT, SIGTERM, SIGHUP, SIGQUIT and
 *    SIGXFSZ (a write past the file size limit; those of them not ignored)
 *    are caught by a handler that only notes them; close (or
 *    an abort) removes the name, puts the old actions back and raises the
 *    noted signal again, so the program still ends by that signal, as its
 *    exit status says, with nothing left behind. A handler rather than a
 *    blocked mask: sigprocmask blocks for one thread, and the LM head's
 *    worker threads would take the signal and end the process with the
 *    name still there. Only kill -9 can leave such a temporary.
 *
 * Temporary names are short (".logitlab-PID-N"), so that every target
 * name the file system takes (up to NAME_MAX bytes) can be written.
 */
#ifndef LOGITLAB_OUTFILE_H
#define LOGITLAB_OUTFILE_H

#include <signal.h>
#include <stdio.h>

#include "base/err.h"

#define OUTFILE_SIGNALS 5 /* SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ */

struct outfile {
    FILE *f;    /* where to write */
    char *path; /* NULL for standard output */
    char *tmp;  /* the named temporary (the fallback), or NULL */
    char *dir;  /* the target's directory */
    int force;
    int guarded; /* the handler of the fallback is on */
    struct sigaction old[OUTFILE_SIGNALS];
};

/* Whether paths a and b name one file, after resolving links: the same
 * device and inode when both exist, else the same resolved directory and
 * name (a dangling link followed once). "-" (standard output) is no file. */
int outfile_same(const char *a, const char *b);

/* Opens path (NULL or "-": standard output). Errors: the file exists and
 * force is 0 ("x.md exists: add --force to replace it"), it is not a
 * regular file, its directory cannot be written. */
int outfile_open(struct outfile *o, const char *path, int force, struct err *e);

/* How outfile_open makes its file: OUTFILE_AUTO as described above, or
 * OUTFILE_NAMED, the fallback's named temporary (for the tests). */
enum outfile_how { OUTFILE_AUTO, OUTFILE_NAMED };
int outfile_open_how(struct outfile *o, const char *path, int force, enum outfile_how how,
                     struct err *e);

/* Finishes: with ok set, flushes, syncs and gives the file its name;
 * otherwise (or on a write error, or when a signal came while a named
 * temporary existed) removes what was written. Returns 0 or -1. After a
 * noted signal it raises that signal again and, when the signal's action
 * ends the process, does not return. */
int outfile_close(struct outfile *o, int ok, struct err *e);

#endif
