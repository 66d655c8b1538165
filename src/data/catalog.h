/* catalog.h - finding lessons: the lessons directory, its files in teaching
 * order (file names sort in that order: 01-lm-head.ini, 02-toy.ini, ...),
 * and a lesson by id or by path.
 */
#ifndef LOGITLAB_CATALOG_H
#define LOGITLAB_CATALOG_H

#include <stddef.h>

#include "base/err.h"
#include "data/lesson.h"

#define CATALOG_MAX      256
#define CATALOG_PATH_MAX 4096

struct catalog {
    char dir[CATALOG_PATH_MAX];
    int n;
    char *files[CATALOG_MAX];                 /* full paths, sorted */
    char ids[CATALOG_MAX][LESSON_ID_MAX + 1]; /* each file's lesson id; "" when unreadable */
    struct err unreadable;                    /* why the first unreadable one is (code 0: none) */
};

/* Finds the lessons directory: dir if given, else $LOGITLAB_LESSONS, else
 * lessons/ beside the executable's parent (build/../lessons), else ./lessons,
 * else the installed share directory. Lists its .ini files in name order
 * and reads each one's id (only the id: lesson_peek_id); two files with one
 * id are refused ("DIR/b.ini: lesson id 'x' is also DIR/a.ini's"), since
 * an id would then name either. A file whose id cannot be read is kept
 * (listing it reports it; finding an id names it when nothing matches). */
int catalog_open(struct catalog *c, const char *dir, struct err *e);
void catalog_close(struct catalog *c);

/* Loads the lesson named by what: a path (it has a '/' or ends in .ini) or
 * an id looked up in the catalog. */
int catalog_load(const struct catalog *c, const char *what, struct lesson *L, struct err *e);

struct model_request;

/* catalog_load, and also a .npy file of captured logits (lesson_from_npy),
 * known by its first bytes (the magic string \x93NUMPY) whatever its name,
 * or by the suffix .npy, read with the vocabulary at vocab (NULL: the
 * Llama 3 one in data/); with
 * a model request mr (--model), the lesson runs on that model, and what
 * NULL is the model alone (data/lesson_model.h). */
int catalog_load_any(const struct catalog *c, const char *what, const char *vocab,
                     const struct model_request *mr, struct lesson *L, struct err *e);

/* Index of the file whose lesson has id, or -1: the ids catalog_open read. */
int catalog_find(const struct catalog *c, const char *id);

#endif
