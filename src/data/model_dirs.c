#include "data/model_dirs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The managers and their folders, the one place that says where each looks.
 * Ollama: $OLLAMA_MODELS, else ~/.ollama/models (Ollama's own variable).
 * LM Studio: PUBLISHER/REPO/FILE.gguf under its models folder, as its
 * documentation shows it (lmstudio.ai/docs, "Import Models": "~/.lmstudio/
 * models/ publisher/ model/ model-file.gguf"; a file put directly in the
 * folder is not seen by LM Studio). Older versions kept their models in
 * ~/.cache/lm-studio/models (no longer in its documentation; other tools
 * that find LM Studio's models still look there, and LM Studio keeps its
 * other data under ~/.cache/lm-studio), so both are looked in.
 * $LMSTUDIO_MODELS is logitlab's own: LM Studio moves its folder in its
 * settings, which we do not read.
 * llama.cpp (common/common.cpp, fs_get_cache_directory): $LLAMA_CACHE, else
 * $XDG_CACHE_HOME/llama.cpp, else ~/.cache/llama.cpp on Linux; -mu URLs and
 * Docker models are saved there, FILE.gguf directly in the folder. Newer
 * versions save -hf downloads in the Hugging Face cache instead
 * (common/hf-cache.cpp: $LLAMA_CACHE, $HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE,
 * $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/
 * hub), as models--OWNER--REPO/snapshots/COMMIT/FILE, a link into blobs/.
 * llama.cpp reads the commit refs/ names; we look in every snapshot and
 * count two links to one blob as one file. A snapshot's subfolders (split
 * models) are not looked in: every layout has a fixed depth. */
static const struct model_manager managers[] = {
    { "Ollama",
      { { "OLLAMA_MODELS", "" } },
      { ".ollama/models" },
      "manifests", /* HOST/NAMESPACE/MODEL/TAG under it (data/model_find.c) */
      { NULL },
      MODEL_MANIFESTS },
    { "LM Studio",
      { { "LMSTUDIO_MODELS", "" } },
      { ".lmstudio/models", ".cache/lm-studio/models" },
      "",
      { "*", "*", NULL },
      MODEL_GGUF },
    { "llama.cpp",
      { { "LLAMA_CACHE", "" }, { "XDG_CACHE_HOME", "llama.cpp" } },
      { ".cache/llama.cpp" },
      "",
      { NULL },
      MODEL_GGUF },
    { "llama.cpp -hf",
      { { "LLAMA_CACHE", "" },
        { "HF_HUB_CACHE", "" },
        { "HUGGINGFACE_HUB_CACHE", "" },
        { "HF_HOME", "hub" },
        { "XDG_CACHE_HOME", "huggingface/hub" } },
      { ".cache/huggingface/hub" },
      "",
      { "models--*", "snapshots", "*", NULL },
      MODEL_GGUF },
};

#define N_MANAGERS   (sizeof managers / sizeof managers[0])
#define N_ENV        (sizeof managers[0].env / sizeof managers[0].env[0])
#define N_HOME       (sizeof managers[0].home / sizeof managers[0].home[0])
#define WALK_DEPTH   (sizeof managers[0].levels / sizeof managers[0].levels[0])
#define FIRST_DEPTHS 1 /* the folder itself, before its levels */

/* base/under into buf, base's trailing slashes dropped ("/" stays). */
static void join(char *buf, size_t n, const char *base, const char *under)
{
    size_t len = strlen(base);
    while (len > 1 && base[len - 1] == '/')
        len--;
    if (under[0])
        snprintf(buf, n, "%.*s/%s", (int)len, base, under);
    else
        snprintf(buf, n, "%.*s", (int)len, base);
}

/* The variable of m's that is set, or NULL: its value in *value. */
static const struct model_env *env_set(const struct model_manager *m, const char **value)
{
    for (size_t k = 0; k < N_ENV && m->env[k].var; k++)
        if ((*value = getenv(m->env[k].var)) != NULL && (*value)[0])
            return &m->env[k];
    return NULL;
}

int model_folders(struct model_folder *f)
{
    const char *home = getenv("HOME"), *value;
    int n = 0;
    for (size_t i = 0; i < N_MANAGERS && n < MODEL_FOLDERS_MAX; i++) {
        const struct model_manager *m = &managers[i];
        const struct model_env *v = env_set(m, &value);
        if (v) {
            f[n] = (struct model_folder){ .m = m, .known = 1 };
            join(f[n].dir, sizeof f[n].dir, value, v->under);
            n++;
            continue;
        }
        for (size_t k = 0; k < N_HOME && m->home[k] && n < MODEL_FOLDERS_MAX; k++, n++) {
            f[n] = (struct model_folder){ .m = m, .known = home && home[0] };
            join(f[n].dir, sizeof f[n].dir, f[n].known ? home : "~", m->home[k]);
        }
    }
    return n;
}

void model_folder_look(const struct model_folder *f, char *buf, size_t n)
{
    join(buf, n, f->dir, f->m->inside);
}

void model_folders_where(const struct model_folder *f, int n, int gguf_only, char *buf, size_t len)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && k < len; i++) {
        char look[MODEL_PATH_MAX];
        if (gguf_only && f[i].m->layout != MODEL_GGUF)
            continue;
        model_folder_look(&f[i], look, sizeof look);
        int w = snprintf(buf + k, len - k, "%s%s (%s's; %s%s)", k ? ", " : "", look, f[i].m->name,
                         f[i].known ? f[i].m->env[0].var : "HOME is not set",
                         f[i].known ? " moves it" : "");
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

/* One walk: the folders entered so far (device and inode), so that a link
 * back to one of them is not followed round. */
struct walk {
    const char *const *levels;
    model_file_fn fn;
    void *arg;
    dev_t dev[WALK_DEPTH + FIRST_DEPTHS];
    ino_t ino[WALK_DEPTH + FIRST_DEPTHS];
    int depth, stop;
};

/* "*" any name, "models--*" one with that prefix, else exactly the name. */
static int name_matches(const char *pattern, const char *name)
{
    size_t len = strlen(pattern);
    if (len > 0 && pattern[len - 1] == '*')
        return strncmp(pattern, name, len - 1) == 0;
    return strcmp(pattern, name) == 0;
}

static int is_gguf(const char *name)
{
    size_t len = strlen(name);
    return len > 5 && strcmp(name + len - 5, ".gguf") == 0;
}

/* Enters folder st (one of its own ancestors: no). Returns 1 when entered. */
static int enter(struct walk *w, const struct stat *st)
{
    for (int i = 0; i < w->depth; i++)
        if (w->dev[i] == st->st_dev && w->ino[i] == st->st_ino)
            return 0;
    w->dev[w->depth] = st->st_dev;
    w->ino[w->depth] = st->st_ino;
    w->depth++;
    return 1;
}

/* The entries of dir at level (of w->levels): folders matching it, or at
 * the last level the .gguf files. */
static void walk_dir(struct walk *w, const char *dir, int level)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    const char *want = level < (int)WALK_DEPTH ? w->levels[level] : NULL;
    for (struct dirent *t; !w->stop && (t = readdir(d)) != NULL;) {
        char path[MODEL_PATH_MAX];
        struct stat st;
        if (t->d_name[0] == '.' || (want ? !name_matches(want, t->d_name) : !is_gguf(t->d_name)))
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, t->d_name) >= (int)sizeof path ||
            stat(path, &st) != 0)
            continue;
        if (!want && S_ISREG(st.st_mode))
            w->stop = w->fn(w->arg, t->d_name, path, &st) != 0;
        else if (want && S_ISDIR(st.st_mode) && enter(w, &st)) {
            walk_dir(w, path, level + 1);
            w->depth--;
        }
    }
    closedir(d);
}

int model_folder_walk(const struct model_folder *f, model_file_fn fn, void *arg)
{
    struct stat st;
    if (f->m->layout != MODEL_GGUF || !f->known || stat(f->dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    struct walk w = { .levels = f->m->levels, .fn = fn, .arg = arg };
    enter(&w, &st);
    walk_dir(&w, f->dir, 0);
    return 1;
}
