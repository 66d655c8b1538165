/* readfile.c - a whole small file into memory (readfile.h). */
#include "base/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads exactly n bytes, through short reads and interruptions. */
static int read_all(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* The descriptor of path, opened without blocking and checked to be a
 * regular file (its status in st), or -1 with e. */
static int open_regular(const char *path, struct stat *st, struct err *e)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return err_set(e, ERR_USAGE, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return err_set(e, ERR_USAGE, "%s: not a regular file", path);
    }
    return fd;
}

FILE *readfile_open(const char *path, struct err *e)
{
    struct stat st;
    int fd = open_regular(path, &st, e);
    if (fd < 0)
        return NULL;
    /* A regular file never blocks; reads go back to the usual mode. */
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        err_set(e, ERR_SYSTEM, "%s: cannot open: %s", path, strerror(errno));
    }
    return f;
}

int readfile(const char *path, size_t max, char **out, size_t *len, struct err *e)
{
    struct stat st;
    int fd = open_regular(path, &st, e);
    if (fd < 0)
        return -1;
    if ((unsigned long long)st.st_size > max) {
        close(fd);
        return err_set(e, ERR_USAGE, "%s: larger than %zu bytes", path, max);
    }
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return err_set(e, ERR_SYSTEM, "out of memory for %s", path);
    }
    int rc = read_all(fd, buf, n);
    close(fd);
    if (rc < 0) {
        free(buf);
        return err_set(e, ERR_SYSTEM, "%s: read error", path);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}
