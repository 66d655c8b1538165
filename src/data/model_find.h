/* model_find.h - a model by the name its manager shows: `-m llama3.2:1b`
 * opens the file Ollama keeps for that name (its manifest names the blob),
 * as `ollama list` shows it. Nothing is downloaded; a folder that does not
 * exist is skipped. */
#ifndef LOGITLAB_MODEL_FIND_H
#define LOGITLAB_MODEL_FIND_H

#include <stddef.h>

#include "base/err.h"

/* Where Ollama keeps its models: $OLLAMA_MODELS, else ~/.ollama/models;
 * "" when neither can be said (no HOME). */
void model_ollama_dir(char *buf, size_t n);

/* Its library of manifests, one folder per model and a file per tag:
 * DIR/manifests/registry.ollama.ai/library ("~/.ollama/models/..." when
 * there is no HOME, for messages). */
void model_ollama_library(char *buf, size_t n);

/* The file of model name into path: name itself when it is a file, or has
 * a '/', or ends in .gguf (opening it says what is wrong); else Ollama's
 * blob for NAME[:TAG] (tag "latest" when none). Returns 0, or -1 with a
 * message naming what was looked at. */
int model_find(const char *name, char *path, size_t n, struct err *e);

/* Called by model_list for each model found: its name ("llama3.2:1b") and
 * its file (NULL when the manifest names no model layer, or a blob that is
 * missing). */
typedef void (*model_seen_fn)(void *arg, const char *name, const char *path);

/* Every model of Ollama's library (manifests/registry.ollama.ai/library/
 * NAME/TAG), in the order of the directories. Returns how many, or -1 when
 * the folder does not exist (nothing to list). */
int model_list(model_seen_fn fn, void *arg);

#endif
