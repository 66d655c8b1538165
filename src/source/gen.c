/* gen.c - the loop of generation: a token appended to the context, the
 * stop rules checked on it, the text it makes. */
#include "source/gen.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

/* Whether needle occurs in the generated text. Matching the joined text, not
 * token by token, is what lets a stop string span two tokens. */
static int text_contains(const struct vocab *v, const int *ids, int n, const char *needle)
{
    size_t need = vocab_detok(v, ids, n, NULL, 0);
    char *buf = malloc(need + 1);
    if (!buf)
        return 0;
    vocab_detok(v, ids, n, buf, need + 1);
    int found = strstr(buf, needle) != NULL;
    free(buf);
    return found;
}

struct stop_result stop_check(const struct settings *s, const struct vocab *v, const int *ctx,
                              int len, int prompt_len)
{
    struct stop_result r = { STOP_NONE, -1 };
    if (len <= prompt_len)
        return r;
    int last = ctx[len - 1];
    if (vocab_is_eos(v, last))
        return (struct stop_result){ STOP_EOS, last };
    for (int i = 0; i < s->n_stop; i++)
        if (text_contains(v, ctx + prompt_len, len - prompt_len, s->stop[i]))
            return (struct stop_result){ STOP_STRING, i };
    if (s->max_tokens > 0 && len - prompt_len >= s->max_tokens)
        return (struct stop_result){ STOP_MAX_TOKENS, s->max_tokens };
    return r;
}

int stop_after(const struct settings *s, const struct vocab *v, const int *ctx, int len,
               int prompt_len, int id, struct stop_result *out, struct err *e)
{
    struct gen g;
    if (gen_start(&g, v, ctx, len, prompt_len, e) < 0 || gen_append(&g, id, s, e) < 0) {
        gen_free(&g);
        return -1;
    }
    *out = g.stop;
    gen_free(&g);
    return 0;
}

const char *stop_rule_name(enum stop_rule r)
{
    static const char *const NAMES[] = { [STOP_NONE] = "none",
                                         [STOP_EOS] = "eos",
                                         [STOP_MAX_TOKENS] = "max-tokens",
                                         [STOP_STRING] = "stop-string" };
    return r >= STOP_NONE && r <= STOP_STRING ? NAMES[r] : "?";
}

void stop_describe(const struct stop_result *r, const struct settings *s, const struct vocab *v,
                   char *buf, size_t n)
{
    char esc[4 * STOP_LEN + 1];
    switch (r->rule) {
    case STOP_EOS:
        snprintf(buf, n, "end token %s", vocab_token(v, r->which));
        break;
    case STOP_STRING:
        utf8_escape(s->stop[r->which], esc, sizeof esc);
        snprintf(buf, n, "stop string \"%s\"", esc);
        break;
    case STOP_MAX_TOKENS:
        snprintf(buf, n, "max tokens (%d)", r->which);
        break;
    case STOP_NONE:
        snprintf(buf, n, "%s", "");
        break;
    }
}

int gen_start(struct gen *g, const struct vocab *v, const int *ctx, int len, int prompt_len,
              struct err *e)
{
    memset(g, 0, sizeof *g);
    g->v = v;
    g->prompt_len = prompt_len;
    return gen_restart(g, ctx, len, e);
}

void gen_free(struct gen *g)
{
    free(g->ids);
    memset(g, 0, sizeof *g);
}

/* Room for n ids. */
static int reserve(struct gen *g, int n, struct err *e)
{
    if (n <= g->cap)
        return 0;
    int cap = g->cap ? g->cap : 64;
    while (cap < n)
        cap *= 2;
    int *p = realloc(g->ids, (size_t)cap * sizeof *p);
    if (!p)
        return err_set(e, ERR_SYSTEM, "out of memory for a context of %d tokens", n);
    g->ids = p;
    g->cap = cap;
    return 0;
}

int gen_restart(struct gen *g, const int *ctx, int len, struct err *e)
{
    if (reserve(g, len + 1, e) < 0)
        return -1;
    if (len)
        memmove(g->ids, ctx, (size_t)len * sizeof *ctx);
    g->len = len;
    g->stop = (struct stop_result){ STOP_NONE, -1 };
    g->streamed = 0;
    return 0;
}

int gen_append(struct gen *g, int id, const struct settings *s, struct err *e)
{
    if (reserve(g, g->len + 2, e) < 0)
        return -1;
    g->ids[g->len++] = id;
    g->stop = stop_check(s, g->v, g->ids, g->len, g->prompt_len);
    return 0;
}

void gen_undo(struct gen *g)
{
    if (g->len > g->prompt_len)
        g->len--;
    g->stop = (struct stop_result){ STOP_NONE, -1 };
}

int gen_count(const struct gen *g)
{
    return g->len > g->prompt_len ? g->len - g->prompt_len : 0;
}

size_t gen_text(const struct gen *g, char *buf, size_t n)
{
    return vocab_detok(g->v, g->ids + g->len - gen_count(g), gen_count(g), buf, n);
}

/* Writes bytes [from, to) of text as utf8.c escapes it, newlines and tabs
 * kept: a stream of text. */
static void write_escaped(FILE *out, const char *text, size_t from, size_t to)
{
    utf8_write_escaped(out, text + from, to - from, UTF8_ESC_KEEP_LINES);
}

int gen_stream(struct gen *g, FILE *out, int final)
{
    size_t need = vocab_detok(g->v, g->ids, g->len, NULL, 0) + 1;
    char *text = malloc(need);
    if (!text)
        return -1;
    size_t len = vocab_detok(g->v, g->ids, g->len, text, need);
    /* A character split across tokens waits for its last byte. */
    size_t ready = final ? len : vocab_complete_prefix(text, len);
    if (ready > g->streamed) {
        write_escaped(out, text, g->streamed, ready);
        g->streamed = ready;
        fflush(out);
    }
    free(text);
    return ferror(out) ? -1 : 0;
}
