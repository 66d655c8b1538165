/* model_find.h - a model by the name its manager shows: `-m llama3.2:1b`
 * opens the file Ollama keeps for that name (its manifest names the blob),
 * as `ollama list` shows it; `-m NAME.gguf` (or NAME) the file of that name
 * in LM Studio's or llama.cpp's folders (model_dirs.h), as those show it.
 * Nothing is downloaded; a folder that does not exist is skipped. */
#ifndef LOGITLAB_MODEL_FIND_H
#define LOGITLAB_MODEL_FIND_H

#include <stddef.h>
#include <sys/stat.h>

#include "base/err.h"
#include "data/model_dirs.h"

/* The file of model name into path: name itself when it is a file, or has
 * a '/' (opening it says what is wrong); else Ollama's blob for NAME[:TAG]
 * (tag "latest" when none); else the one file NAME or NAME.gguf in LM
 * Studio's or llama.cpp's folders; else, for a name ending in .gguf, the
 * name itself (opening it says it is missing). Returns 0, or -1 with a
 * message naming what was looked at, or both files when two have the name
 * (two links to one file are one). */
int model_find(const char *name, char *path, size_t n, struct err *e);

#define MODEL_LIST_MAX 256 /* models listed, at most */

/* One model that `logitlab models` lists. */
struct model_seen {
    const char *manager;       /* "Ollama", "LM Studio", ... (the table's) */
    char name[512];            /* what -m takes: "qwen:tiny", a file's name */
    char path[MODEL_PATH_MAX]; /* its file; "" when Ollama's manifest names no
                                  model layer, or a blob that is missing */
    int folder;                /* the index of its folder */
    int by_file;               /* found as a .gguf file: dev and ino say which */
    int same_name;             /* another file has its name: -m takes its path */
    dev_t dev;
    ino_t ino;
};

struct model_listing {
    struct model_folder folders[MODEL_FOLDERS_MAX];
    int n_folders;
    int count[MODEL_FOLDERS_MAX]; /* models in each; -1 when it does not exist */
    struct model_seen *seen;      /* by folder, then by name */
    int n;
    int capped; /* 1: more than MODEL_LIST_MAX were found, the rest left out */
};

/* Every model of every manager's folders (Ollama's library: manifests/
 * registry.ollama.ai/library/NAME/TAG). Returns 0, or -1 with e when out
 * of memory; model_list_free frees it either way. */
int model_list(struct model_listing *L, struct err *e);

void model_list_free(struct model_listing *L);

#endif
