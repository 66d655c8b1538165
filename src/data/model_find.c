#include "data/model_find.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/readfile.h"

#define MANIFEST_MAX (1 << 20) /* bytes: a manifest is a few hundred */
#define MODEL_LAYER  "application/vnd.ollama.image.model"

void model_ollama_dir(char *buf, size_t n)
{
    const char *env = getenv("OLLAMA_MODELS"), *home = getenv("HOME");
    if (env && env[0])
        snprintf(buf, n, "%s", env);
    else if (home && home[0])
        snprintf(buf, n, "%s/.ollama/models", home);
    else
        buf[0] = '\0';
}

void model_ollama_library(char *buf, size_t n)
{
    char dir[2048];
    model_ollama_dir(dir, sizeof dir);
    snprintf(buf, n, "%s/manifests/registry.ollama.ai/library", dir[0] ? dir : "~/.ollama/models");
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The model layer's digest (64 hex digits) in a manifest's JSON: the
 * object that holds MODEL_LAYER, its "digest": "sha256:...". */
static int layer_digest(const char *json, char *hex)
{
    const char *m = strstr(json, MODEL_LAYER);
    if (!m)
        return -1;
    const char *open = m, *close = strchr(m, '}');
    while (open > json && *open != '{')
        open--;
    if (*open != '{' || !close)
        return -1;
    for (const char *d = open; d && d < close; d = strstr(d + 1, "\"digest\"")) {
        const char *v = d;
        if (strncmp(v, "\"digest\"", 8) != 0)
            continue;
        v += 8;
        while (*v == ' ' || *v == ':' || *v == '\t')
            v++;
        if (strncmp(v, "\"sha256:", 8) != 0)
            continue;
        v += 8;
        int k = 0;
        while (k < 64 && isxdigit((unsigned char)v[k]) && !isupper((unsigned char)v[k]))
            k++;
        if (k == 64 && v[64] == '"') {
            memcpy(hex, v, 64);
            hex[64] = '\0';
            return 0;
        }
    }
    return -1;
}

/* The blob that manifest names, under Ollama's folder dir, into path.
 * Returns 0, or -1 with a message naming the manifest. */
static int manifest_blob(const char *manifest, const char *dir, char *path, size_t n, struct err *e)
{
    char *json;
    size_t len;
    if (readfile(manifest, MANIFEST_MAX, &json, &len, e) < 0)
        return -1;
    char hex[65];
    int rc = layer_digest(json, hex);
    free(json);
    if (rc < 0)
        return err_set(e, ERR_USAGE, "%s: no layer of type %s with a sha256 digest", manifest,
                       MODEL_LAYER);
    snprintf(path, n, "%s/blobs/sha256-%s", dir, hex);
    if (!is_file(path))
        return err_set(e, ERR_USAGE, "%s names the blob %s, which is missing", manifest, path);
    return 0;
}

/* NAME[:TAG] as Ollama's manifest path and its blob. */
static int find_ollama(const char *name, char *path, size_t n, struct err *e)
{
    char dir[2048], lib[4096], model[256], manifest[4096 + 512];
    model_ollama_dir(dir, sizeof dir);
    model_ollama_library(lib, sizeof lib);
    snprintf(model, sizeof model, "%s", name);
    char *colon = strchr(model, ':');
    const char *tag = colon ? colon + 1 : "latest";
    if (colon)
        *colon = '\0';
    snprintf(manifest, sizeof manifest, "%s/%s/%s", lib, model, tag);
    if (!dir[0] || !is_file(manifest))
        return err_set(e, ERR_USAGE,
                       "'%s' is no file, nor a model of Ollama's (no %s; `ollama list` shows its "
                       "names)",
                       name, dir[0] ? manifest : "HOME to find ~/.ollama/models in");
    return manifest_blob(manifest, dir, path, n, e);
}

int model_find(const char *name, char *path, size_t n, struct err *e)
{
    size_t len = strlen(name);
    if (is_file(name) || strchr(name, '/') || (len >= 5 && !strcmp(name + len - 5, ".gguf")) ||
        len >= 256) {
        snprintf(path, n, "%s", name);
        return 0;
    }
    return find_ollama(name, path, n, e);
}

/* The tags of one model's folder. */
static int list_tags(const char *dir, const char *lib, const char *model, model_seen_fn fn,
                     void *arg)
{
    char folder[4096 + 256];
    snprintf(folder, sizeof folder, "%s/%s", lib, model);
    DIR *d = opendir(folder);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *t; (t = readdir(d)) != NULL;) {
        char manifest[sizeof folder + 256], name[512], path[4096];
        if (t->d_name[0] == '.')
            continue;
        snprintf(manifest, sizeof manifest, "%s/%s", folder, t->d_name);
        if (!is_file(manifest))
            continue;
        snprintf(name, sizeof name, "%s:%s", model, t->d_name);
        struct err e; /* a manifest without its model is listed as such */
        fn(arg, name, manifest_blob(manifest, dir, path, sizeof path, &e) == 0 ? path : NULL);
        n++;
    }
    closedir(d);
    return n;
}

int model_list(model_seen_fn fn, void *arg)
{
    char dir[2048], lib[4096];
    model_ollama_dir(dir, sizeof dir);
    model_ollama_library(lib, sizeof lib);
    DIR *d = dir[0] ? opendir(lib) : NULL;
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *m; (m = readdir(d)) != NULL;)
        if (m->d_name[0] != '.')
            n += list_tags(dir, lib, m->d_name, fn, arg);
    closedir(d);
    return n;
}
