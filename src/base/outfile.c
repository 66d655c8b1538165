#include "base/outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_open(struct outfile *o, const char *path, int force, struct err *e)
{
    memset(o, 0, sizeof *o);
    o->force = force;
    if (!path || strcmp(path, "-") == 0) {
        o->f = stdout;
        return 0;
    }
    struct stat st;
    if (!force && lstat(path, &st) == 0)
        return err_set(e, ERR_USAGE, "%s exists: add --force to replace it", path);
    if (force && lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return err_set(e, ERR_USAGE, "%s is not a regular file: not replaced", path);
    size_t n = strlen(path);
    o->path = malloc(n + 1);
    o->tmp = malloc(n + 16);
    if (!o->path || !o->tmp) {
        free(o->path), free(o->tmp);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    memcpy(o->path, path, n + 1);
    snprintf(o->tmp, n + 16, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        err_set(e, ERR_USAGE, "%s: cannot write there: %s", path, strerror(errno));
        free(o->path), free(o->tmp);
        o->path = o->tmp = NULL;
        return -1;
    }
    fchmod(fd, 0644);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        unlink(o->tmp);
        free(o->path), free(o->tmp);
        o->path = o->tmp = NULL;
        return err_set(e, ERR_SYSTEM, "%s: %s", path, strerror(errno));
    }
    return 0;
}

int outfile_close(struct outfile *o, int ok, struct err *e)
{
    if (!o->path) {
        if (ok && (fflush(stdout) != 0 || ferror(stdout)))
            return err_set(e, ERR_SYSTEM, "writing the output failed: %s", strerror(errno));
        return ok ? 0 : -1;
    }
    int rc = ok ? 0 : -1;
    if (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0) {
        if (ok)
            rc = err_set(e, ERR_SYSTEM, "%s: writing failed: %s", o->path, strerror(errno));
    }
    if (fclose(o->f) != 0 && rc == 0)
        rc = err_set(e, ERR_SYSTEM, "%s: writing failed: %s", o->path, strerror(errno));
    if (rc == 0) {
        /* link() refuses an existing name: nothing is replaced without force,
         * even a file that appeared while we worked. */
        if (o->force ? rename(o->tmp, o->path) != 0 : link(o->tmp, o->path) != 0) {
            if (errno == EEXIST)
                rc = err_set(e, ERR_USAGE, "%s exists: add --force to replace it", o->path);
            else
                rc = err_set(e, ERR_USAGE, "%s: cannot write: %s", o->path, strerror(errno));
        }
    }
    if (!o->force || rc < 0)
        unlink(o->tmp);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return rc;
}
