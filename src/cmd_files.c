/* cmd_files.c - the commands that run no lesson (cmd_files.h),
 * and the one way a message reaches standard error. */
#include "cmd_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "base/utf8.h"
#include "base/vecpath.h"
#include "data/catalog.h"
#include "gguf/gguf.h"
#include "gguf/gguf_llama.h"
#include "data/lesson.h"
#include "data/model_find.h"
#include "gguf/arch.h"
#include "model/quant.h"
#include "gguf/tokenizer.h"

/* Every message main prints goes through here: "logitlab: ", what, the
 * message with its control characters escaped (utf8.h; a message quotes
 * names from files and from the command line), then tail. */
void cmd_say(const char *what, const char *msg, const char *tail)
{
    fprintf(stderr, "logitlab: %s", what);
    utf8_write_escaped(stderr, msg, strlen(msg), 0);
    fprintf(stderr, "%s\n", tail);
}

int cmd_lessons(const struct options *o, struct err *e)
{
    struct catalog cat;
    if (catalog_open(&cat, o->lessons_dir, e) < 0)
        return -1;
    int bad = 0;
    for (int i = 0; i < cat.n; i++) {
        struct lesson L;
        struct err le;
        if (lesson_load(&L, cat.files[i], &le) < 0) {
            cmd_say("", le.msg, "");
            bad++;
            continue;
        }
        char id[4 * sizeof L.id];
        utf8_escape(L.id, id, sizeof id);
        printf("%-14s ", id);
        utf8_write_escaped(stdout, L.title, strlen(L.title), 0);
        putchar('\n');
        lesson_free(&L);
    }
    catalog_close(&cat);
    if (bad)
        return err_set(e, ERR_USAGE, "%d lesson file%s could not be read", bad,
                       bad == 1 ? "" : "s");
    return 0;
}

/* The ids of text by t, printed on one line. */
static int print_ids(const struct tokenizer *t, const struct options *o, const char *text,
                     size_t len, struct err *e)
{
    /* At most 3 ids a byte of text (a U+FFFD or a U+2581 in byte tokens),
     * 3 more for SentencePiece's space in front, and BOS. */
    size_t max = 3 * len + 4;
    int *ids = malloc(max * sizeof *ids), n = 0;
    if (!ids)
        return err_set(e, ERR_SYSTEM, "out of memory for %zu token ids", max);
    int bos = !o->no_bos && tokenizer_add_bos(t);
    if (tokenizer_encode(t, text, len, bos, o->special, ids, (int)max, &n, e) < 0) {
        free(ids);
        return -1;
    }
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? " " : "", ids[i]);
    putchar('\n');
    free(ids);
    return 0;
}

int cmd_tokenize(const struct options *o, const char *text, size_t len, struct err *e)
{
    struct gguf *g = gguf_open(o->model, e);
    struct gguf_llama *L = g ? gguf_llama_vocab_new(g, e) : NULL;
    struct tokenizer *t = L ? tokenizer_new(&L->tok, o->model, e) : NULL;
    int rc = t ? 0 : -1;
    if (rc == 0 && L->n_warnings > 0) {
        char more[48] = "";
        if (L->n_warnings > 1)
            snprintf(more, sizeof more, " (and %d more key%s)", L->n_warnings - 1,
                     L->n_warnings > 2 ? "s" : "");
        cmd_say("warning: ", L->warning, more);
    }
    if (rc == 0)
        rc = print_ids(t, o, text, len, e);
    tokenizer_free(t);
    gguf_llama_free(L);
    gguf_close(g);
    return rc;
}

/* Written at once: the help is longer than stdio's buffer, and a write
 * that failed half way through printing would have lost its errno (and the
 * message its reason, "No space left on device") by the time main's
 * close_stdout looks. */
int cmd_help(struct err *e)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return err_set(e, ERR_SYSTEM, "out of memory for the help");
    cli_usage(m);
    int ok = fclose(m) == 0;
    errno = 0;
    ok = ok && fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0;
    int why = errno;
    free(text);
    if (ok || why == EPIPE)
        return 0;
    return err_set(e, ERR_SYSTEM, "standard output: %s", why ? strerror(why) : "write error");
}

#ifndef LOGITLAB_VERSION /* the Makefile's VERSION */
#define LOGITLAB_VERSION "0.1.0"
#endif

int cmd_version(int path)
{
    const char *env = getenv(VEC_ENV);
    printf("logitlab %s\n", LOGITLAB_VERSION);
    printf("vector path: %s (%s)%s\n", vec_path_name(path), vec_path_level(path),
           env && *env ? ", set by " VEC_ENV : "");
    return 0;
}

/* One line of `logitlab models`: NAME ARCH TYPE SIZE VERDICT MANAGER,
 * every name from the disk escaped; NAME is what -m takes (the path when
 * another file has the same name). */
static void model_line(const struct model_seen *s)
{
    char arch[64] = "-", type[32] = "-", verdict[96] = "no model layer or blob";
    double mb = 0;
    struct err e;
    struct gguf *g = s->path[0] ? gguf_open(s->path, &e) : NULL;
    if (s->path[0] && !g)
        snprintf(verdict, sizeof verdict, "not a GGUF file logitlab reads");
    if (g) {
        struct gguf_str a = { "", 0 };
        if (gguf_get_str(g, "general.architecture", &a, &e) == 1)
            gguf_escape(a.s, a.len, arch, sizeof arch);
        const struct gguf_tensor *q = gguf_tensor(g, "blk.0.attn_q.weight");
        if (q)
            quant_name(q->type, type, sizeof type);
        struct stat st;
        mb = stat(s->path, &st) == 0 ? (double)st.st_size / 1e6 : 0;
        snprintf(verdict, sizeof verdict, "%s", arch_find(a.s, a.len) ? "runs" : "not run here");
        gguf_close(g);
    }
    const char *name = s->same_name ? s->path : s->name;
    utf8_write_escaped(stdout, name, strlen(name), 0);
    printf("\t%s\t%s\t%.1f MB\t%s\t%s\n", arch, type, mb, verdict, s->manager);
}

int cmd_models(struct err *e)
{
    struct model_listing L;
    if (model_list(&L, e) < 0) {
        model_list_free(&L);
        return -1;
    }
    for (int i = 0; i < L.n; i++)
        model_line(&L.seen[i]);
    int folders = 0;
    for (int i = 0; i < L.n_folders; i++) {
        if (L.count[i] < 0)
            continue;
        printf("%d model%s in ", L.count[i], L.count[i] == 1 ? "" : "s");
        utf8_write_escaped(stdout, L.folders[i].dir, strlen(L.folders[i].dir), 0);
        printf(" (%s's)\n", L.folders[i].m->name);
        folders++;
    }
    if (L.capped)
        printf("only the first %d models found are listed\n", MODEL_LIST_MAX);
    if (!folders) {
        char where[4 * MODEL_PATH_MAX];
        model_folders_where(L.folders, L.n_folders, 0, where, sizeof where);
        printf("no models: none of these folders exists: ");
        utf8_write_escaped(stdout, where, strlen(where), 0);
        putchar('\n');
    }
    model_list_free(&L);
    return 0;
}
