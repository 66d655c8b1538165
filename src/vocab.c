#include "vocab.h"

#include <stdlib.h>
#include <string.h>

int vocab_init(struct vocab *v, int n, struct err *e)
{
    memset(v, 0, sizeof *v);
    if (n <= 0)
        return err_set(e, ERR_USAGE, "a vocabulary needs at least one token");
    v->text = calloc((size_t)n, sizeof *v->text);
    if (!v->text)
        return err_set(e, ERR_SYSTEM, "out of memory for %d tokens", n);
    v->n = n;
    v->join_space = 1;
    return 0;
}

void vocab_free(struct vocab *v)
{
    if (v->text)
        for (int i = 0; i < v->n; i++)
            free(v->text[i]);
    free(v->text);
    memset(v, 0, sizeof *v);
}

int vocab_set(struct vocab *v, int id, const char *text, struct err *e)
{
    if (id < 0 || id >= v->n)
        return err_set(e, ERR_USAGE, "token id %d is outside the vocabulary (0..%d)", id, v->n - 1);
    char *copy = malloc(strlen(text) + 1);
    if (!copy)
        return err_set(e, ERR_SYSTEM, "out of memory");
    strcpy(copy, text);
    free(v->text[id]);
    v->text[id] = copy;
    return 0;
}

const char *vocab_token(const struct vocab *v, int id)
{
    if (id < 0 || id >= v->n || !v->text[id])
        return "?";
    return v->text[id];
}

int vocab_is_eos(const struct vocab *v, int id)
{
    for (int i = 0; i < v->n_eos; i++)
        if (v->eos[i] == id)
            return 1;
    return 0;
}

size_t vocab_detok(const struct vocab *v, const int *ids, int n, char *buf, size_t size)
{
    size_t need = 0;
    if (size)
        buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (vocab_is_eos(v, ids[i]))
            continue;
        const char *t = vocab_token(v, ids[i]);
        size_t len = strlen(t);
        size_t sep = (v->join_space && need > 0) ? 1 : 0;
        if (need + sep + len < size) {
            if (sep)
                buf[need] = ' ';
            memcpy(buf + need + sep, t, len + 1);
        }
        need += sep + len;
    }
    return need;
}
