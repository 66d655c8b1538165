/* gen.c - the loop of generation: a token appended to the context, the
 * stop rules checked on it, the text it makes. */
#include "source/gen.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

/* The text of ids[0..n) in a buffer the caller frees (NULL when out of
 * memory), its length in *len. */
static char *detok_alloc(const struct vocab *v, const int *ids, int n, size_t *len)
{
    size_t need = vocab_detok(v, ids, n, NULL, 0);
    char *buf = malloc(need + 1);
    if (buf)
        vocab_detok(v, ids, n, buf, need + 1);
    *len = need;
    return buf;
}

size_t stop_decided(const struct settings *s, const char *text, size_t len)
{
    if (s->stop_text == STOP_TEXT_KEEP)
        return len; /* a kept string may show while it grows */
    size_t decided = len;
    for (int k = 0; k < s->n_stop; k++) {
        size_t sl = strlen(s->stop[k]);
        /* The longest tail of the text that the string begins with, shorter
         * than the string: a whole one would have matched. */
        for (size_t i = len >= sl ? len - sl + 1 : 0; i < len && i < decided; i++)
            if (memcmp(text + i, s->stop[k], len - i) == 0) {
                decided = i;
                break;
            }
    }
    return decided;
}

/* Where needle (nl bytes) first occurs in text (len bytes), or len: a
 * byte-level token may hold a NUL, which strstr would stop at. */
static size_t find(const char *text, size_t len, const char *needle, size_t nl)
{
    for (size_t i = 0; nl <= len && i <= len - nl; i++)
        if (memcmp(text + i, needle, nl) == 0)
            return i;
    return len;
}

/* The stop strings on the generated text (len bytes): the first of s's
 * list found ends it, cut at its first occurrence. Matching the joined
 * text, not token by token, is what lets a stop string span two tokens. */
static struct stop_result stop_in_text(const struct settings *s, const char *text, size_t len)
{
    for (int i = 0; i < s->n_stop; i++) {
        size_t sl = strlen(s->stop[i]), at = find(text, len, s->stop[i], sl);
        if (at < len)
            return (struct stop_result){ STOP_STRING, i,
                                         s->stop_text == STOP_TEXT_KEEP ? at + sl : at };
    }
    return (struct stop_result){ STOP_NONE, -1, 0 };
}

/* stop_check, and how much of the generated text is decided (*decided,
 * when not NULL). */
static struct stop_result check(const struct settings *s, const struct vocab *v, const int *ctx,
                                int len, int prompt_len, size_t *decided)
{
    struct stop_result r = { STOP_NONE, -1, 0 };
    if (decided)
        *decided = 0;
    if (len <= prompt_len)
        return r;
    int last = ctx[len - 1];
    if (vocab_is_eos(v, last))
        return (struct stop_result){ STOP_EOS, last, 0 };
    if (s->n_stop > 0) {
        size_t tl;
        char *text = detok_alloc(v, ctx + prompt_len, len - prompt_len, &tl);
        if (text) {
            r = stop_in_text(s, text, tl);
            if (decided)
                *decided = r.rule == STOP_NONE ? stop_decided(s, text, tl) : tl;
        }
        free(text);
        if (r.rule != STOP_NONE)
            return r;
    } else if (decided) {
        *decided = vocab_detok(v, ctx + prompt_len, len - prompt_len, NULL, 0);
    }
    if (s->max_tokens > 0 && len - prompt_len >= s->max_tokens)
        return (struct stop_result){ STOP_MAX_TOKENS, s->max_tokens, 0 };
    return r;
}

struct stop_result stop_check(const struct settings *s, const struct vocab *v, const int *ctx,
                              int len, int prompt_len)
{
    return check(s, v, ctx, len, prompt_len, NULL);
}

size_t stop_text_end(const struct stop_result *r, size_t len)
{
    return r->rule == STOP_STRING && r->text_end < len ? r->text_end : len;
}

const char *stop_shown(const struct stop_result *r, const struct settings *s)
{
    if (r->rule != STOP_STRING)
        return NULL;
    return s->stop_text == STOP_TEXT_KEEP ? "kept in the text" : "not shown";
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
    g->stop = (struct stop_result){ STOP_NONE, -1, 0 };
    g->streamed = 0;
    g->decided = 0; /* checked at the next append */
    return 0;
}

int gen_append(struct gen *g, int id, const struct settings *s, struct err *e)
{
    if (reserve(g, g->len + 2, e) < 0)
        return -1;
    g->ids[g->len++] = id;
    g->stop = check(s, g->v, g->ids, g->len, g->prompt_len, &g->decided);
    return 0;
}

void gen_undo(struct gen *g)
{
    if (g->len > g->prompt_len)
        g->len--;
    g->stop = (struct stop_result){ STOP_NONE, -1, 0 };
    g->decided = 0; /* the shorter text waits for the next append's check */
}

int gen_count(const struct gen *g)
{
    return g->len > g->prompt_len ? g->len - g->prompt_len : 0;
}

/* The shown text (see gen_shown_text) and its parts: the prompt's text is
 * [0, *prompt), the generated text shown [*from, *len). */
static char *shown(const struct gen *g, int final, size_t *len, size_t *prompt, size_t *from)
{
    /* A model's BOS marks where the sequence starts; it is not text (as
     * llama.cpp's detokenizer leaves control tokens out). */
    int b = g->len > 0 && g->v->has_bos && g->ids[0] == g->v->bos;
    int plen = g->prompt_len < g->len ? g->prompt_len : g->len;
    size_t total, gl;
    char *text = detok_alloc(g->v, g->ids + b, g->len - b, &total);
    *prompt = plen > b ? vocab_detok(g->v, g->ids + b, plen - b, NULL, 0) : 0;
    gl = vocab_detok(g->v, g->ids + plen, g->len - plen, NULL, 0);
    /* The generated text is the tail of the whole (a join-space vocabulary
     * puts a space before it, which belongs to it). */
    *from = total - gl;
    size_t keep = final || g->stop.rule != STOP_NONE ? stop_text_end(&g->stop, gl)
                  : g->decided < gl                  ? g->decided
                                                     : gl;
    *len = keep ? *from + keep : *prompt;
    /* SentencePiece put a space before the first word; its decoder takes it
     * off again, as llama2.c does after BOS. */
    if (text && g->v->strip_space && *len > 0 && text[0] == ' ') {
        memmove(text, text + 1, *len);
        *len -= 1;
        *prompt -= *prompt > 0;
        *from -= *from > 0;
    }
    if (text)
        text[*len] = '\0';
    return text;
}

char *gen_shown_text(const struct gen *g, int whole, size_t *len)
{
    size_t all, prompt, from;
    char *text = shown(g, 1, &all, &prompt, &from);
    if (!text || whole) {
        *len = all;
        return text;
    }
    size_t gl = all > from ? all - from : 0;
    memmove(text, text + all - gl, gl + 1);
    *len = gl;
    return text;
}

size_t gen_text(const struct gen *g, char *buf, size_t n)
{
    size_t len;
    char *text = gen_shown_text(g, 0, &len);
    if (n) {
        size_t k = text ? (len < n - 1 ? len : n - 1) : 0;
        if (k)
            memcpy(buf, text, k);
        buf[k] = '\0';
    }
    free(text);
    return len;
}

/* Writes bytes [from, to) of text as utf8.c escapes it, newlines and tabs
 * kept: a stream of text. */
static void write_escaped(FILE *out, const char *text, size_t from, size_t to)
{
    utf8_write_escaped(out, text + from, to - from, UTF8_ESC_KEEP_LINES);
}

int gen_stream(struct gen *g, FILE *out, int final)
{
    size_t len, prompt, from;
    char *text = shown(g, final, &len, &prompt, &from);
    if (!text)
        return -1;
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
