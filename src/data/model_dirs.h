/* model_dirs.h - the folders where model managers keep their files, one
 * table (model_dirs.c): Ollama's, LM Studio's, llama.cpp's cache and the
 * Hugging Face cache that `llama-cli -hf` downloads into. Nothing is
 * created or downloaded; a folder that does not exist is skipped. */
#ifndef LOGITLAB_MODEL_DIRS_H
#define LOGITLAB_MODEL_DIRS_H

#include <stddef.h>
#include <sys/stat.h>

#define MODEL_PATH_MAX    4096
#define MODEL_FOLDERS_MAX 8 /* every row's folders: 1 + 2 + 1 + 1 today */

enum model_layout {
    MODEL_MANIFESTS, /* Ollama's: INSIDE/NAME/TAG, a manifest naming blobs/sha256-HEX */
    MODEL_GGUF,      /* .gguf files, the folders above them matching `levels` */
};

/* $var, or $var/under, when var is set and not empty. */
struct model_env {
    const char *var, *under;
};

struct model_manager {
    const char *name;        /* as listings show it: "LM Studio" */
    struct model_env env[5]; /* the first that is set gives the one folder */
    const char *home[2];     /* else each of these under $HOME */
    const char *inside;      /* the folder of its models under it ("" for the folder) */
    const char *levels[4];   /* MODEL_GGUF: the folders between it and the files,
                                "*" any, "models--*" a prefix, else an exact name */
    enum model_layout layout;
};

/* One folder to look in. */
struct model_folder {
    const struct model_manager *m;
    char dir[MODEL_PATH_MAX]; /* "~/.lmstudio/models" when there is no HOME */
    int known;                /* 0: no HOME, dir is only for messages */
};

/* The folders of every manager in the table's order (Ollama's first), into
 * f (room for MODEL_FOLDERS_MAX). Returns how many. */
int model_folders(struct model_folder *f);

/* The folder f's models are in: dir, or Ollama's library of manifests. */
void model_folder_look(const struct model_folder *f, char *buf, size_t n);

/* Where the n folders f are, for a message: "DIR (LM Studio's;
 * LMSTUDIO_MODELS moves it), DIR (LM Studio's; ...)", Ollama's as its
 * library, only those of .gguf files when gguf_only; unescaped (the one
 * who prints escapes). */
void model_folders_where(const struct model_folder *f, int n, int gguf_only, char *buf, size_t len);

/* Called by model_folder_walk for each .gguf file: its name, its path, and
 * what stat says of it (a link followed). Returns 0 to go on, 1 to stop. */
typedef int (*model_file_fn)(void *arg, const char *file, const char *path, const struct stat *st);

/* Every .gguf file of folder f (MODEL_GGUF) at its fixed depth: hidden
 * names skipped, a folder that is one of its own ancestors (a link's loop)
 * never entered. Returns 1 when the folder exists, else 0 (nothing
 * called). */
int model_folder_walk(const struct model_folder *f, model_file_fn fn, void *arg);

#endif
