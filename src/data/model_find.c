#include "data/model_find.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/readfile.h"
#include "data/model_dirs.h"

#define MANIFEST_MAX (1 << 20) /* bytes: a manifest is a few hundred */
/* What Ollama puts before a name that does not say: llama3.2:1b is
 * registry.ollama.ai/library/llama3.2:latest's manifest ... /1b. */
#define OLLAMA_HOST      "registry.ollama.ai"
#define OLLAMA_NAMESPACE "library"
#define MODEL_LAYER      "application/vnd.ollama.image.model"

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

/* Ollama's name [[HOST/]NAMESPACE/]MODEL[:TAG] (hf.co/OWNER/REPO:Q4_K_M for
 * what it pulled from Hugging Face) as its manifest's path under the
 * manifests folder look into buf. Returns 0, or -1 when name is not one:
 * more than three parts, an empty one, "." or "..", a second colon. */
static int ollama_manifest(const char *look, const char *name, char *buf, size_t n)
{
    char part[3][256], tag[128] = "latest";
    int np = 0;
    for (const char *p = name; np < 3; np++) {
        size_t len = strcspn(p, "/");
        if (len == 0 || len >= sizeof part[0])
            return -1;
        snprintf(part[np], sizeof part[np], "%.*s", (int)len, p);
        if (!strcmp(part[np], ".") || !strcmp(part[np], ".."))
            return -1;
        if (!p[len])
            break;
        p += len + 1;
        if (np == 2)
            return -1; /* a fourth part */
    }
    char *model = part[np == 3 ? 2 : np], *colon = strchr(model, ':');
    if (colon) {
        if (!colon[1] || strchr(colon + 1, ':') || colon == model)
            return -1;
        snprintf(tag, sizeof tag, "%s", colon + 1);
        *colon = '\0';
    }
    const char *host = np == 2 ? part[0] : OLLAMA_HOST;
    const char *ns = np == 2 ? part[1] : np == 1 ? part[0] : OLLAMA_NAMESPACE;
    int w = snprintf(buf, n, "%s/%s/%s/%s/%s", look, host, ns, model, tag);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Ollama's name as the manifest of Ollama's folder f (into manifest) and
 * its blob (into path). Returns 1, 0 when there is no such manifest (or
 * name is not one of Ollama's), or -1 with e when the manifest names no
 * blob that is there. */
static int find_ollama(const struct model_folder *f, const char *name, char *manifest, size_t mn,
                       char *path, size_t n, struct err *e)
{
    char look[MODEL_PATH_MAX];
    model_folder_look(f, look, sizeof look);
    if (ollama_manifest(look, name, manifest, mn) < 0 || !f->known || !is_file(manifest))
        return 0;
    return manifest_blob(manifest, f->dir, path, n, e) < 0 ? -1 : 1;
}

/* The files named NAME or NAME.gguf found so far: two are enough to refuse. */
struct match {
    const char *name;
    int exact; /* name ends in .gguf: that name only */
    char path[2][MODEL_PATH_MAX];
    dev_t dev[2];
    ino_t ino[2];
    int n;
};

static int match_file(void *arg, const char *file, const char *path, const struct stat *st)
{
    struct match *m = arg;
    size_t len = strlen(m->name);
    if (strncmp(file, m->name, len) != 0 ||
        (file[len] && (m->exact || strcmp(file + len, ".gguf"))))
        return 0;
    for (int i = 0; i < m->n; i++)
        if (m->dev[i] == st->st_dev && m->ino[i] == st->st_ino)
            return 0; /* the same file by another way (a link) */
    snprintf(m->path[m->n], sizeof m->path[m->n], "%s", path);
    m->dev[m->n] = st->st_dev;
    m->ino[m->n] = st->st_ino;
    return ++m->n == 2;
}

/* The one .gguf file named name or name.gguf in the folders f of .gguf
 * files into path. Returns 1, 0 when there is none, or -1 with e naming two. */
static int find_file(const struct model_folder *f, int nf, const char *name, int exact, char *path,
                     size_t n, struct err *e)
{
    struct match m = { .name = name, .exact = exact };
    for (int i = 0; i < nf && m.n < 2; i++)
        model_folder_walk(&f[i], match_file, &m);
    if (m.n == 2)
        return err_set(e, ERR_USAGE,
                       "'%s' is the name of two files, %s and %s: give the path of one", name,
                       m.path[0], m.path[1]);
    if (m.n == 1)
        snprintf(path, n, "%s", m.path[0]);
    return m.n;
}

/* The one message of a name found nowhere: every folder looked in. */
static int not_found(const char *name, const struct model_folder *f, int nf,
                     const struct model_folder *ollama, const char *manifest, struct err *e)
{
    char where[ERR_MSG_MAX];
    model_folders_where(f, nf, 1, where, sizeof where);
    return err_set(e, ERR_USAGE,
                   "'%s' is no file, nor a model of Ollama's (no %s), nor %s.gguf in %s "
                   "(`logitlab models` lists what they hold)",
                   name, ollama && ollama->known ? manifest : "HOME to find ~/.ollama/models in",
                   name, where);
}

int model_find(const char *name, char *path, size_t n, struct err *e)
{
    size_t len = strlen(name);
    int gguf = len >= 5 && !strcmp(name + len - 5, ".gguf");
    if (is_file(name) || len >= 256) {
        snprintf(path, n, "%s", name);
        return 0;
    }
    struct model_folder f[MODEL_FOLDERS_MAX], *ollama = NULL;
    int nf = model_folders(f), rc = 0;
    char manifest[MODEL_PATH_MAX + 512] = "";
    for (int i = 0; i < nf; i++)
        if (f[i].m->layout == MODEL_MANIFESTS)
            ollama = &f[i];
    if (ollama && !gguf)
        rc = find_ollama(ollama, name, manifest, sizeof manifest, path, n, e);
    if (rc == 0 && strchr(name, '/')) { /* a path, unless it was Ollama's name */
        snprintf(path, n, "%s", name);
        return 0;
    }
    if (rc == 0)
        rc = find_file(f, nf, name, gguf, path, n, e);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    if (gguf) { /* a file's name: opening it says it is missing */
        snprintf(path, n, "%s", name);
        return 0;
    }
    return not_found(name, f, nf, ollama, manifest, e);
}

/* A model more for the listing, in folder; NULL when the list is full. */
static struct model_seen *add_seen(struct model_listing *L, int folder, const char *name,
                                   const char *path)
{
    if (L->n == MODEL_LIST_MAX) {
        L->capped = 1;
        return NULL;
    }
    struct model_seen *s = &L->seen[L->n++];
    s->manager = L->folders[folder].m->name;
    s->folder = folder;
    snprintf(s->name, sizeof s->name, "%s", name);
    snprintf(s->path, sizeof s->path, "%s", path ? path : "");
    L->count[folder]++;
    return s;
}

/* The tags of one model's folder dir of Ollama's manifests, each listed as
 * the name -m takes: shown (its model, after the host and namespace Ollama
 * shows), a colon, the tag. */
static void list_tags(struct model_listing *L, int folder, const char *dir, const char *shown)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *t; (t = readdir(d)) != NULL;) {
        char manifest[MODEL_PATH_MAX + 1024], name[1024], path[MODEL_PATH_MAX];
        if (t->d_name[0] == '.')
            continue;
        int w = snprintf(manifest, sizeof manifest, "%s/%s", dir, t->d_name);
        if (w < 0 || (size_t)w >= sizeof manifest || !is_file(manifest))
            continue;
        w = snprintf(name, sizeof name, "%s:%s", shown, t->d_name);
        if (w < 0 || (size_t)w >= sizeof name)
            continue; /* a name too long to give -m */
        struct err e; /* a manifest without its model is listed as such */
        int ok = manifest_blob(manifest, L->folders[folder].dir, path, sizeof path, &e) == 0;
        if (!add_seen(L, folder, name, ok ? path : NULL))
            break;
    }
    closedir(d);
}

/* The folders of dir (none whose name starts with a dot), each handed to fn
 * with its path and name, until the listing is full. */
static void each_folder(struct model_listing *L, const char *dir,
                        void (*fn)(struct model_listing *L, int folder, const char *path,
                                   const char *name, const char *shown),
                        int folder, const char *shown)
{
    DIR *d = opendir(dir);
    for (struct dirent *m; d && (m = readdir(d)) != NULL && !L->capped;) {
        char path[MODEL_PATH_MAX + 1024];
        snprintf(path, sizeof path, "%s/%s", dir, m->d_name);
        if (m->d_name[0] != '.')
            fn(L, folder, path, m->d_name, shown);
    }
    if (d)
        closedir(d);
}

/* A model's folder: its tags, shown after the host and namespace. */
static void list_model(struct model_listing *L, int folder, const char *path, const char *name,
                       const char *shown)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", shown, name);
    list_tags(L, folder, path, full);
}

/* A namespace's folder (HOST/NAMESPACE): Ollama shows registry.ollama.ai's
 * without the host, and its library without either. */
static void list_namespace(struct model_listing *L, int folder, const char *path, const char *ns,
                           const char *host)
{
    char shown[600] = "";
    if (strcmp(host, OLLAMA_HOST) != 0)
        snprintf(shown, sizeof shown, "%s/%s/", host, ns);
    else if (strcmp(ns, OLLAMA_NAMESPACE) != 0)
        snprintf(shown, sizeof shown, "%s/", ns);
    each_folder(L, path, list_model, folder, shown);
}

static void list_host(struct model_listing *L, int folder, const char *path, const char *host,
                      const char *shown)
{
    (void)shown;
    each_folder(L, path, list_namespace, folder, host);
}

/* Every model of Ollama's manifests in folder (HOST/NAMESPACE/MODEL/TAG: a
 * fixed depth). Returns 0 when they do not exist. */
static int list_ollama(struct model_listing *L, int folder)
{
    char look[MODEL_PATH_MAX];
    model_folder_look(&L->folders[folder], look, sizeof look);
    struct stat st;
    if (!L->folders[folder].known || stat(look, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    each_folder(L, look, list_host, folder, "");
    return 1;
}

struct adding {
    struct model_listing *L;
    int folder;
};

static int add_file(void *arg, const char *file, const char *path, const struct stat *st)
{
    struct adding *a = arg;
    for (int i = 0; i < a->L->n; i++)
        if (a->L->seen[i].by_file && a->L->seen[i].dev == st->st_dev &&
            a->L->seen[i].ino == st->st_ino)
            return 0; /* a link to a file listed already */
    struct model_seen *s = add_seen(a->L, a->folder, file, path);
    if (!s)
        return 1;
    s->by_file = 1;
    s->dev = st->st_dev;
    s->ino = st->st_ino;
    return 0;
}

static int by_folder_name(const void *a, const void *b)
{
    const struct model_seen *x = a, *y = b;
    return x->folder != y->folder ? x->folder - y->folder : strcmp(x->name, y->name);
}

int model_list(struct model_listing *L, struct err *e)
{
    memset(L, 0, sizeof *L);
    L->seen = calloc(MODEL_LIST_MAX, sizeof *L->seen);
    if (!L->seen)
        return err_set(e, ERR_SYSTEM, "out of memory for a list of %d models", MODEL_LIST_MAX);
    L->n_folders = model_folders(L->folders);
    for (int i = 0; i < L->n_folders; i++) {
        struct adding a = { L, i };
        int there = L->folders[i].m->layout == MODEL_MANIFESTS
                        ? list_ollama(L, i)
                        : model_folder_walk(&L->folders[i], add_file, &a);
        if (!there)
            L->count[i] = -1;
    }
    for (int i = 0; i < L->n; i++) /* two files of one name: -m takes their paths */
        for (int j = 0; j < L->n && L->seen[i].by_file; j++)
            if (j != i && L->seen[j].by_file && !strcmp(L->seen[i].name, L->seen[j].name))
                L->seen[i].same_name = 1;
    qsort(L->seen, (size_t)L->n, sizeof *L->seen, by_folder_name);
    return 0;
}

void model_list_free(struct model_listing *L)
{
    free(L->seen);
    L->seen = NULL;
}
