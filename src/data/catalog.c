#include "data/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/readfile.h"
#include "data/lesson_model.h"

#ifndef LOGITLAB_SHARE
#define LOGITLAB_SHARE "/usr/local/share/logitlab"
#endif

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Copies a path, refusing one that does not fit rather than cutting it. */
static int copy_path(char *out, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len >= n)
        return -1;
    memcpy(out, src, len + 1);
    return 0;
}

/* The directory up levels above the running executable: 1 is its own directory. */
static int exe_ancestor(char *buf, size_t n, int up)
{
    char exe[CATALOG_PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = '\0';
    for (int i = 0; i < up; i++) {
        char *slash = strrchr(exe, '/');
        if (!slash)
            return -1;
        *slash = '\0';
    }
    return copy_path(buf, n, exe[0] ? exe : "/");
}

static int pick_dir(char *out, size_t n, const char *dir, struct err *e)
{
    if (dir) {
        if (!is_dir(dir) || copy_path(out, n, dir) < 0)
            return err_set(e, ERR_USAGE, "--lessons-dir %s: not a directory", dir);
        return 0;
    }
    const char *env = getenv("LOGITLAB_LESSONS");
    if (env && *env) {
        if (!is_dir(env) || copy_path(out, n, env) < 0)
            return err_set(e, ERR_USAGE, "LOGITLAB_LESSONS=%s: not a directory", env);
        return 0;
    }
    char base[CATALOG_PATH_MAX];
    char cand[CATALOG_PATH_MAX + 32];
    /* build/logitlab and build/san/logitlab both find the tree's lessons/. */
    for (int up = 1; up <= 3; up++) {
        if (exe_ancestor(base, sizeof base, up) < 0)
            break;
        snprintf(cand, sizeof cand, "%s/lessons", base);
        if (is_dir(cand) && copy_path(out, n, cand) == 0)
            return 0;
    }
    /* Installed: PREFIX/bin/logitlab finds PREFIX/share/logitlab/lessons,
     * wherever PREFIX is (and under a DESTDIR as well). */
    if (exe_ancestor(base, sizeof base, 2) == 0) {
        snprintf(cand, sizeof cand, "%s/share/logitlab/lessons", base);
        if (is_dir(cand) && copy_path(out, n, cand) == 0)
            return 0;
    }
    if (is_dir("lessons")) {
        snprintf(out, n, "lessons");
        return 0;
    }
    snprintf(cand, sizeof cand, "%s/lessons", LOGITLAB_SHARE);
    if (is_dir(cand) && copy_path(out, n, cand) == 0)
        return 0;
    return err_set(e, ERR_USAGE,
                   "no lessons directory found (looked beside the program, in ./lessons and in "
                   "%s/lessons); use --lessons-dir DIR",
                   LOGITLAB_SHARE);
}

/* Every file's id, once, in name order: a second file with an id already
 * seen is refused by name (both files named, the later one first). */
static int read_ids(struct catalog *c, struct err *e)
{
    for (int i = 0; i < c->n; i++) {
        struct err pe;
        if (lesson_peek_id(c->files[i], c->ids[i], &pe) < 0) {
            c->ids[i][0] = '\0';
            if (!c->unreadable.code)
                c->unreadable = pe;
            continue;
        }
        for (int j = 0; j < i && c->ids[i][0]; j++)
            if (strcmp(c->ids[j], c->ids[i]) == 0)
                return err_set(e, ERR_USAGE, "%s: lesson id '%s' is also %s's", c->files[i],
                               c->ids[i], c->files[j]);
    }
    return 0;
}

int catalog_open(struct catalog *c, const char *dir, struct err *e)
{
    memset(c, 0, sizeof *c);
    if (pick_dir(c->dir, sizeof c->dir, dir, e) < 0)
        return -1;
    DIR *d = opendir(c->dir);
    if (!d)
        return err_set(e, ERR_USAGE, "%s: cannot list: %s", c->dir, strerror(errno));
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".ini"))
            continue;
        if (c->n == CATALOG_MAX) {
            rc = err_set(e, ERR_USAGE, "%s: more than %d lesson files", c->dir, CATALOG_MAX);
            break;
        }
        size_t len = strlen(c->dir) + 1 + strlen(de->d_name) + 1;
        char *path = malloc(len);
        if (!path) {
            rc = err_set(e, ERR_SYSTEM, "out of memory");
            break;
        }
        snprintf(path, len, "%s/%s", c->dir, de->d_name);
        c->files[c->n++] = path;
    }
    closedir(d);
    if (rc < 0) {
        catalog_close(c);
        return -1;
    }
    qsort(c->files, (size_t)c->n, sizeof c->files[0], by_name);
    if (read_ids(c, e) < 0) {
        catalog_close(c);
        return -1;
    }
    return 0;
}

void catalog_close(struct catalog *c)
{
    for (int i = 0; i < c->n; i++)
        free(c->files[i]);
    c->n = 0;
}

int catalog_find(const struct catalog *c, const char *id)
{
    for (int i = 0; i < c->n; i++)
        if (c->ids[i][0] && strcmp(c->ids[i], id) == 0)
            return i;
    return -1;
}

int catalog_load(const struct catalog *c, const char *what, struct lesson *L, struct err *e)
{
    if (strchr(what, '/') || has_suffix(what, ".ini"))
        return lesson_load(L, what, e);
    /* "real:france" names the lesson real-france. */
    char id[LESSON_ID_MAX + 1];
    if (strchr(what, ':') && strlen(what) <= LESSON_ID_MAX) {
        strcpy(id, what);
        for (char *p = id; *p; p++)
            if (*p == ':')
                *p = '-';
        what = id;
    }
    /* An id: the file of that lesson. A broken file in the directory is
     * reported when it is the one asked for, not skipped in silence. */
    int i = catalog_find(c, what);
    if (i >= 0)
        return lesson_load(L, c->files[i], e);
    if (c->unreadable.code)
        return err_set(e, ERR_USAGE, "no lesson '%s' in %s (and %s)", what, c->dir,
                       c->unreadable.msg);
    return err_set(e, ERR_USAGE, "no lesson '%s' in %s (logitlab lessons lists them)", what,
                   c->dir);
}

/* The path of a file in the data directory beside the lessons directory
 * (lessons/../data/name), into buf. */
static void catalog_data_path(const struct catalog *c, const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/../data/%s", c->dir, name);
}

/* Whether the file at path starts as a .npy file does (its magic string,
 * \x93NUMPY): captured logits are known by their content, not their name.
 * A file that cannot be opened (or is not a regular file) is not one here;
 * the loader it goes to says why. */
static int npy_by_content(const char *path)
{
    struct err ignored;
    FILE *f = readfile_open(path, &ignored);
    if (!f)
        return 0;
    unsigned char magic[6];
    int yes = fread(magic, 1, sizeof magic, f) == sizeof magic &&
              memcmp(magic, "\x93NUMPY", sizeof magic) == 0;
    fclose(f);
    return yes;
}

int catalog_load_any(const struct catalog *c, const char *what, const char *vocab,
                     const struct model_request *mr, struct lesson *L, struct err *e)
{
    if (mr && !what)
        return lesson_from_model(L, mr, e);
    if (mr) {
        if (catalog_load(c, what, L, e) < 0)
            return -1;
        if (lesson_use_model(L, mr, e) < 0) {
            lesson_free(L);
            return -1;
        }
        return 0;
    }
    if (!has_suffix(what, ".npy") && !npy_by_content(what))
        return catalog_load(c, what, L, e);
    char path[CATALOG_PATH_MAX + 64];
    if (!vocab) {
        catalog_data_path(c, "llama3-vocab.bin", path, sizeof path);
        vocab = path;
    }
    return lesson_from_npy(L, what, vocab, e);
}
