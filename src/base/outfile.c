#define _GNU_SOURCE /* O_TMPFILE: glibc declares it for GNU programs only */
#include "base/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_PREFIX ".logitlab-"
#define TMP_TRIES  1000

/* path with its directory resolved (and a link in the last place followed
 * once), into buf; 0, or -1 when the directory does not resolve. */
static int resolve(const char *path, char *buf, size_t n)
{
    char link[PATH_MAX], dir[PATH_MAX];
    ssize_t k = readlink(path, link, sizeof link - 1);
    if (k > 0) {
        link[k] = '\0';
        if (link[0] == '/' || !strchr(path, '/'))
            path = link;
        else if ((size_t)snprintf(dir, sizeof dir, "%.*s/%s", (int)(strrchr(path, '/') - path),
                                  path, link) < sizeof dir)
            path = dir;
    }
    const char *slash = strrchr(path, '/');
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash == path)
        snprintf(parent, sizeof parent, "/");
    char real[PATH_MAX];
    if (!realpath(parent, real))
        return -1;
    return (size_t)snprintf(buf, n, "%s/%s", real, slash ? slash + 1 : path) < n ? 0 : -1;
}

int outfile_same(const char *a, const char *b)
{
    if (!a || !b || strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
        return 0;
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char ra[PATH_MAX + NAME_MAX + 2], rb[PATH_MAX + NAME_MAX + 2];
    if (resolve(a, ra, sizeof ra) < 0 || resolve(b, rb, sizeof rb) < 0)
        return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0;
}

static const int GUARDED[OUTFILE_SIGNALS] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ };

/* The first guarded signal that came while a named temporary existed. */
static volatile sig_atomic_t noted_signal;

static void note_signal(int sig)
{
    if (!noted_signal)
        noted_signal = sig;
}

/* Catches the guarded signals that are not ignored, keeping their old
 * actions in o. Inside another outfile's guard (its handler is already
 * there) a signal it noted stays noted. */
static void guard_on(struct outfile *o)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = note_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    int nested = 0;
    for (int i = 0; i < OUTFILE_SIGNALS; i++) {
        sigaction(GUARDED[i], NULL, &o->old[i]);
        nested |= o->old[i].sa_handler == note_signal;
    }
    if (!nested)
        noted_signal = 0;
    for (int i = 0; i < OUTFILE_SIGNALS; i++)
        if (o->old[i].sa_handler != SIG_IGN)
            sigaction(GUARDED[i], &sa, NULL);
    o->guarded = 1;
}

/* Puts the old actions back; the outermost guard then raises a signal
 * that came, which (with the default action) ends the process here. Call
 * it only once no named temporary is left. */
static void guard_off(struct outfile *o)
{
    if (!o->guarded)
        return;
    o->guarded = 0;
    int nested = 0;
    for (int i = 0; i < OUTFILE_SIGNALS; i++) {
        nested |= o->old[i].sa_handler == note_signal;
        sigaction(GUARDED[i], &o->old[i], NULL);
    }
    int sig = noted_signal;
    if (sig && !nested) {
        noted_signal = 0;
        raise(sig);
    }
}

/* o->path and o->dir (the target's directory) from path, after checking
 * that the name and the path are ones the system can take. */
static int split_path(struct outfile *o, const char *path, struct err *e)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (!*name)
        return err_set(e, ERR_USAGE, "%s: names a directory, not a file", path);
    if (strlen(path) >= PATH_MAX)
        return err_set(e, ERR_USAGE, "%s: a path longer than %d bytes", path, PATH_MAX - 1);
    size_t dlen = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    o->path = strdup(path);
    o->dir = malloc(dlen + 1);
    if (!o->path || !o->dir)
        return err_set(e, ERR_SYSTEM, "out of memory");
    memcpy(o->dir, slash ? path : ".", dlen);
    o->dir[dlen] = '\0';
    long max = pathconf(o->dir, _PC_NAME_MAX);
    if (max > 0 && strlen(name) > (size_t)max)
        return err_set(e, ERR_USAGE, "%s: a file name longer than %ld bytes", path, max);
    return 0;
}

/* A file without a name in dir, or -1; errno EOPNOTSUPP when the fallback
 * must be used (the file system or the kernel has no O_TMPFILE, or /proc,
 * through which the file gets its name, is not there). */
static int open_unnamed(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd < 0) {
        if (errno == EISDIR || errno == EINVAL || errno == ENOSYS)
            errno = EOPNOTSUPP;
        return -1;
    }
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    struct stat st;
    if (stat(proc, &st) != 0) {
        close(fd);
        errno = EOPNOTSUPP;
        return -1;
    }
    return fd;
}

/* A new name in dir (into buf, of size n) made by make(name, arg): 0, or
 * -1 with errno. Names are tried until one does not exist. */
static int new_name(const char *dir, char *buf, size_t n, int (*make)(const char *, void *),
                    void *arg)
{
    for (int i = 0; i < TMP_TRIES; i++) {
        snprintf(buf, n, "%s/" TMP_PREFIX "%ld-%d", dir, (long)getpid(), i);
        int rc = make(buf, arg);
        if (rc >= 0 || errno != EEXIST)
            return rc;
    }
    errno = EEXIST;
    return -1;
}

static int make_file(const char *name, void *fd)
{
    *(int *)fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    return *(int *)fd < 0 ? -1 : 0;
}

static int make_link(const char *name, void *proc)
{
    return linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
}

/* Room for dir, '/', the prefix, a process id and a number. */
static size_t tmp_size(const char *dir)
{
    return strlen(dir) + sizeof TMP_PREFIX + 48;
}

/* The fallback: a named temporary in o->dir, under the guard. */
static int open_named(struct outfile *o, struct err *e)
{
    size_t n = tmp_size(o->dir);
    o->tmp = malloc(n);
    if (!o->tmp)
        return err_set(e, ERR_SYSTEM, "out of memory");
    guard_on(o);
    int fd = -1;
    if (new_name(o->dir, o->tmp, n, make_file, &fd) < 0) {
        err_set(e, ERR_USAGE, "%s: cannot write there: %s", o->path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        guard_off(o);
        return -1;
    }
    return fd;
}

static void outfile_free(struct outfile *o)
{
    free(o->path);
    free(o->dir);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

int outfile_open_how(struct outfile *o, const char *path, int force, enum outfile_how how,
                     struct err *e)
{
    memset(o, 0, sizeof *o);
    o->force = force;
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    if (!*path)
        return err_set(e, ERR_USAGE, "an empty file name");
    struct stat st;
    /* A directory or a device is never replaced: say so before --force. */
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return err_set(e, ERR_USAGE, "%s is not a regular file: not replaced", path);
    if (!force && lstat(path, &st) == 0)
        return err_set(e, ERR_USAGE, "%s exists: add --force to replace it", path);
    if (split_path(o, path, e) < 0) {
        outfile_free(o);
        return -1;
    }
    int fd = -1;
    errno = EOPNOTSUPP;
    if (how == OUTFILE_AUTO)
        fd = open_unnamed(o->dir);
    if (fd < 0 && errno != EOPNOTSUPP)
        err_set(e, ERR_USAGE, "%s: cannot write there: %s", path, strerror(errno));
    else if (fd < 0)
        fd = open_named(o, e);
    if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
        err_set(e, ERR_SYSTEM, "%s: %s", path, strerror(errno));
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
        if (o->tmp)
            unlink(o->tmp);
        guard_off(o);
        outfile_free(o);
        return -1;
    }
    return 0;
}

int outfile_open(struct outfile *o, const char *path, int force, struct err *e)
{
    return outfile_open_how(o, path, force, OUTFILE_AUTO, e);
}

/* Flushes, syncs and closes o->f; fd_keep gets another descriptor of the
 * file when it has no name (linkat needs one). Returns 0 or -1. */
static int finish_writing(struct outfile *o, int ok, int *fd_keep, struct err *e)
{
    int rc = ok ? 0 : -1;
    errno = 0;
    if (rc == 0 && (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0))
        rc = err_set(e, ERR_SYSTEM, "%s: writing failed: %s", o->path,
                     errno ? strerror(errno) : "an earlier write was refused");
    if (rc == 0 && !o->tmp && (*fd_keep = dup(fileno(o->f))) < 0)
        rc = err_set(e, ERR_SYSTEM, "%s: %s", o->path, strerror(errno));
    if (fclose(o->f) != 0 && rc == 0)
        rc = err_set(e, ERR_SYSTEM, "%s: writing failed: %s", o->path, strerror(errno));
    o->f = NULL;
    return rc;
}

/* Why a name could not be given: the target appeared, or anything else. */
static int name_error(const struct outfile *o, struct err *e)
{
    if (errno == EEXIST)
        return err_set(e, ERR_USAGE, "%s exists: add --force to replace it", o->path);
    return err_set(e, ERR_USAGE, "%s: cannot write: %s", o->path, strerror(errno));
}

static int interrupted(const struct outfile *o, struct err *e)
{
    return err_set(e, ERR_SYSTEM, "%s: not written: a signal came", o->path);
}

/* Names the file without a name: linkat refuses an existing target; with
 * force, a temporary name (under the guard) renamed over it. */
static int name_unnamed(struct outfile *o, int fd, struct err *e)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (!o->force)
        return linkat(AT_FDCWD, proc, AT_FDCWD, o->path, AT_SYMLINK_FOLLOW) == 0 ? 0
                                                                                 : name_error(o, e);
    size_t n = tmp_size(o->dir);
    char *tmp = malloc(n);
    if (!tmp)
        return err_set(e, ERR_SYSTEM, "out of memory");
    guard_on(o);
    int rc = 0;
    if (new_name(o->dir, tmp, n, make_link, proc) < 0) {
        rc = name_error(o, e);
    } else {
        if (noted_signal)
            rc = interrupted(o, e);
        else if (rename(tmp, o->path) != 0)
            rc = name_error(o, e);
        if (rc < 0)
            unlink(tmp);
    }
    free(tmp);
    guard_off(o);
    return rc;
}

/* Names the fallback's temporary: link (refusing an existing target), or
 * with force rename it over the target. Either way its name is gone after. */
static int name_named(struct outfile *o, struct err *e)
{
    if (o->force && rename(o->tmp, o->path) == 0)
        return 0;
    int rc = !o->force && link(o->tmp, o->path) == 0 ? 0 : name_error(o, e);
    unlink(o->tmp);
    return rc;
}

int outfile_close(struct outfile *o, int ok, struct err *e)
{
    if (!o->path) {
        if (ok && (fflush(stdout) != 0 || ferror(stdout)))
            return err_set(e, ERR_SYSTEM, "writing the output failed: %s", strerror(errno));
        return ok ? 0 : -1;
    }
    int fd = -1;
    int rc = finish_writing(o, ok, &fd, e);
    if (rc == 0 && o->tmp && noted_signal)
        rc = interrupted(o, e);
    if (rc == 0 && o->tmp)
        rc = name_named(o, e); /* the temporary's name is gone after it */
    else if (rc == 0)
        rc = name_unnamed(o, fd, e);
    else if (o->tmp)
        unlink(o->tmp);
    if (fd >= 0)
        close(fd);
    guard_off(o);
    outfile_free(o);
    return rc;
}
