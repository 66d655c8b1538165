/* lesson_model.c - a lesson on a real model: the GGUF file opened once (its
 * weights mapped, not read), its tokenizer built from the metadata, the
 * lesson's vocabulary made from the tokenizer's pieces and its prompt
 * encoded by it. The forward pass is the logit source's (kind_gguf.c). */
#include "data/lesson_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "gguf/chat.h"
#include "gguf/gguf.h"
#include "gguf/gguf_llama.h"
#include "data/lesson_load.h"
#include "gguf/tokenizer.h"
#include "model/llama.h"
#include "model/quant.h"

void lesson_gguf_free(struct lesson_gguf *g)
{
    if (!g)
        return;
    tokenizer_free(g->tok);
    gguf_llama_free(g->llama);
    gguf_close(g->file);
    free(g->path);
    free(g);
}

const char *lesson_model_warning(const struct lesson *L, char *buf, size_t n)
{
    const struct lesson_gguf *g = L->model.gguf;
    if (!g || !g->llama || g->llama->n_warnings == 0)
        return NULL;
    int more = g->llama->n_warnings - 1;
    if (more)
        snprintf(buf, n, "%s (and %d more key%s)", g->llama->warning, more, more > 1 ? "s" : "");
    else
        snprintf(buf, n, "%s", g->llama->warning);
    return buf;
}

/* Opens the file and builds its tokenizer. */
static int gguf_open_all(const struct model_request *r, struct lesson_gguf **out, struct err *e)
{
    struct lesson_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->path = strdup(r->path))) {
        free(g);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    g->special = r->special;
    g->chat = r->chat;
    g->prompt_from = r->prompt_from;
    g->progress = r->progress;
    g->progress_arg = r->progress_arg;
    if (g->progress)
        g->progress(g->progress_arg, "mapping the file", 0, 1);
    if (!(g->file = gguf_open(r->path, e)) || !(g->llama = gguf_llama_new(g->file, e)) ||
        !(g->tok = tokenizer_new(&g->llama->tok, r->path, e))) {
        lesson_gguf_free(g);
        return -1;
    }
    if (g->progress)
        g->progress(g->progress_arg, "mapping the file", 1, 1);
    const struct gguf_str *t = &g->llama->chat_template;
    g->chat_format = chat_format_of(t->s, t->len);
    if (g->llama->name.len > 0) {
        gguf_escape(g->llama->name.s, g->llama->name.len, g->name, sizeof g->name);
    } else {
        const char *base = strrchr(r->path, '/');
        utf8_escape(base ? base + 1 : r->path, g->name, sizeof g->name);
    }
    *out = g;
    return 0;
}

/* The vocabulary of the tokenizer's pieces: the bytes each id stands for;
 * the special tokens (from the first of the trailing control tokens) as
 * their text; the ends of generation as llama.cpp lists them
 * (tokenizer_eog: EOS, EOT, <|eot_id|>, <|eom_id|>, <|im_end|>, ...). */
static int model_vocab(const struct lesson_gguf *g, struct vocab *v, struct err *e)
{
    const struct tokenizer *t = g->tok;
    int n = tokenizer_count(t);
    char **tok = malloc((size_t)n * sizeof *tok);
    size_t *len = malloc((size_t)n * sizeof *len);
    int rc = tok && len ? 0 : err_set(e, ERR_SYSTEM, "out of memory");
    int made = 0;
    for (; rc == 0 && made < n; made++) {
        len[made] = tokenizer_piece(t, made, NULL, 0);
        if (!(tok[made] = malloc(len[made] + 1)))
            rc = err_set(e, ERR_SYSTEM, "out of memory");
        else
            tokenizer_piece(t, made, tok[made], len[made] + 1);
    }
    int first_special = n;
    while (first_special > 0 && tokenizer_type(t, first_special - 1) == TOKT_CONTROL)
        first_special--;
    if (rc == 0)
        rc = vocab_from_bytes(v, n, (const char *const *)tok, len, first_special, e);
    for (int i = 0; i < made; i++)
        free(tok[i]);
    free(tok);
    free(len);
    if (rc < 0)
        return -1;
    if (!(v->special = calloc((size_t)n, 1)))
        return err_set(e, ERR_SYSTEM, "out of memory for %d tokens' flags", n);
    for (int id = 0; id < n; id++) {
        int type = tokenizer_type(t, id);
        v->special[id] = type == TOKT_CONTROL || type == TOKT_UNKNOWN || type == TOKT_UNUSED;
    }
    const struct tok_spec *s = &g->llama->tok;
    v->has_bos = s->bos >= 0 && s->bos < n;
    v->bos = s->bos;
    v->strip_space = s->kind == TOK_SPM && s->add_space_prefix;
    int got = tokenizer_eog(t, v->eos, VOCAB_MAX_EOS);
    v->n_eos = got < VOCAB_MAX_EOS ? got : VOCAB_MAX_EOS;
    return 0;
}

/* Appends the ids of text (special: its special tokens' text is theirs). */
static int encode_part(const struct lesson_gguf *g, const char *text, int special, int *ids, int *n,
                       struct err *e)
{
    int got = 0;
    if (tokenizer_encode(g->tok, text, strlen(text), 0, special, ids + *n, LESSON_MAX_CONTEXT - *n,
                         &got, e) < 0)
        return -1;
    *n += got;
    return 0;
}

/* A format's markers are single special tokens: a vocabulary without them
 * would spell them out as bytes, which is no chat format at all. */
static int has_chat_tokens(const struct lesson_gguf *g, struct err *e)
{
    const struct chat_format *f = g->chat_format;
    for (int i = 0; i < CHAT_MARKS && f->marks[i]; i++) {
        int ids[64], got = 0;
        if (tokenizer_encode(g->tok, f->marks[i], strlen(f->marks[i]), 0, 1, ids, 64, &got, e) < 0)
            return -1;
        if (got != 1)
            return err_set(e, ERR_USAGE,
                           "--chat: %s's chat template uses %s, but its vocabulary has no such "
                           "token",
                           g->path, f->marks[i]);
    }
    return 0;
}

/* The prompt's ids: BOS when the model wants it, then the text, wrapped in
 * the chat format when asked (a user turn and the assistant's header). */
static int encode_prompt(const struct lesson_gguf *g, const char *text, int *ids, int *n,
                         struct err *e)
{
    *n = 0;
    const struct chat_format *f = g->chat ? g->chat_format : NULL;
    int bos = tokenizer_bos(g->tok);
    if ((tokenizer_add_bos(g->tok) || (f && f->bos)) && bos >= 0)
        ids[(*n)++] = bos;
    if (!f)
        return encode_part(g, text, g->special, ids, n, e);
    if (encode_part(g, f->before, f->specials, ids, n, e) < 0 ||
        encode_part(g, text, g->special, ids, n, e) < 0)
        return -1;
    return encode_part(g, f->after, f->specials, ids, n, e);
}

/* --chat needs a chat format logitlab knows, with its tokens. */
static int check_chat(const struct lesson_gguf *g, struct err *e)
{
    if (!g->chat)
        return 0;
    if (!g->chat_format) {
        char known[256];
        chat_format_list(known, sizeof known);
        return err_set(e, ERR_USAGE, "--chat: %s has no chat template logitlab knows (%s)", g->path,
                       known);
    }
    return has_chat_tokens(g, e);
}

/* The positions the model's KV cache holds (source/kind_gguf.c): its
 * trained context, at most LESSON_MODEL_CONTEXT. */
static int model_context(const struct lesson_gguf *g)
{
    int ctx = g->llama->model.hp.n_ctx_train;
    return ctx > 0 && ctx < LESSON_MODEL_CONTEXT ? ctx : LESSON_MODEL_CONTEXT;
}

/* Sets L's prompt to text, encoded by g. */
static int set_prompt(struct lesson *L, const struct lesson_gguf *g, const char *text,
                      struct err *e)
{
    int *ids = malloc(LESSON_MAX_CONTEXT * sizeof *ids);
    char *copy = strdup(text);
    int n = 0;
    if (!ids || !copy) {
        free(ids);
        free(copy);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    /* A prompt too long is named as the user gave it (--prompt, --prompt-file F). */
    const char *what = g->prompt_from ? g->prompt_from : "the prompt";
    int rc = check_chat(g, e);
    if (rc == 0 && encode_prompt(g, text, ids, &n, e) < 0) {
        err_prefix(e, "%s", what);
        rc = -1;
    }
    if (rc == 0 && n > model_context(g))
        rc = err_set(e, ERR_USAGE, "%s: %d tokens, more than the %d of %s's context", what, n,
                     model_context(g), g->path);
    if (rc < 0) {
        free(ids);
        free(copy);
        return -1;
    }
    if (n == 0) {
        free(ids);
        free(copy);
        return err_set(e, ERR_USAGE,
                       "%s: an empty prompt and no BOS token: the model needs one token to start",
                       g->path);
    }
    free(L->prompt);
    free(L->prompt_text);
    L->prompt = ids;
    L->prompt_len = n;
    L->prompt_text = copy;
    return 0;
}

int lesson_set_prompt(struct lesson *L, const char *text, struct err *e)
{
    if (!L->model.gguf)
        return err_set(e, ERR_USAGE,
                       "only a real model's prompt can be edited (--model FILE.gguf)");
    return set_prompt(L, L->model.gguf, text, e);
}

/* The text of the lesson made from a model: what it is, in numbers. */
static char *model_text(const struct lesson_gguf *g)
{
    const struct llama_model *m = &g->llama->model;
    const struct llama_hparams *hp = &m->hp;
    char type[32];
    char *buf = malloc(1024);
    if (!buf)
        return NULL;
    snprintf(buf, 1024,
             "A real model: %s. %d layers (%d query heads sharing %d key and value heads of "
             "%d, a feed-forward block of %d) turn the prompt into a last hidden vector of %d "
             "values; the LM head, %s (%lld x %lld %s), gives each of the %d tokens its logit. "
             "e or :prompt TEXT runs your own prompt; w or :take TOKEN appends the token you "
             "choose instead of the draw.",
             g->name, hp->n_layer, hp->n_head, hp->n_head_kv, hp->head_dim, hp->n_ff, hp->n_embd,
             m->tied ? "the tied token embeddings" : "output.weight", (long long)m->output.rows,
             (long long)m->output.cols, quant_name(m->output.type, type, sizeof type), hp->n_vocab);
    return buf;
}

/* Steps [from, to) of L as steps the model computes, nothing said. */
static void plain_steps(struct lesson *L, int from, int to)
{
    for (int k = from; k < to; k++) {
        memset(&L->steps[k], 0, sizeof L->steps[k]);
        L->steps[k].given = GIVEN_MODEL;
        L->steps[k].digits = DIGITS_DEFAULT;
    }
}

/* A lesson of LESSON_MODEL_STEPS steps, each computed by the model. */
static int model_steps(struct lesson *L, struct err *e)
{
    L->n_steps = LESSON_MODEL_STEPS;
    L->steps = calloc((size_t)L->n_steps, sizeof *L->steps);
    if (!L->steps)
        return err_set(e, ERR_SYSTEM, "out of memory");
    plain_steps(L, 0, L->n_steps);
    L->model.steps = L->n_steps;
    return 0;
}

int lesson_model_grow(struct lesson *L, int want, struct err *e)
{
    const struct lesson_gguf *g = L->model.gguf;
    if (want <= L->n_steps)
        return 0;
    /* The KV cache's room (source/kind_gguf.c), which the model's own
     * trained context may make shorter. */
    int ctx = model_context(g);
    if (want > ctx - L->prompt_len)
        return err_set(e, ERR_USAGE,
                       "--max-tokens %d: %s runs a context of %d tokens and the prompt takes %d: "
                       "at most %d",
                       want, g->path, ctx, L->prompt_len,
                       ctx - L->prompt_len > 0 ? ctx - L->prompt_len : 0);
    struct lesson_step *s = realloc(L->steps, (size_t)want * sizeof *s);
    if (!s)
        return err_set(e, ERR_SYSTEM, "out of memory");
    L->steps = s;
    plain_steps(L, L->n_steps, want);
    L->n_steps = want;
    L->model.steps = want;
    return 0;
}

int lesson_from_model(struct lesson *L, const struct model_request *r, struct err *e)
{
    memset(L, 0, sizeof *L);
    struct lesson_gguf *g;
    if (gguf_open_all(r, &g, e) < 0)
        return -1;
    L->model.gguf = g;
    L->model.on = 1;
    strcpy(L->id, "model");
    L->path = strdup(r->path);
    L->title = strdup(g->name);
    L->text = model_text(g);
    if (!L->path || !L->title || !L->text) {
        lesson_free(L);
        return err_set(e, ERR_SYSTEM, "out of memory");
    }
    if (model_steps(L, e) < 0 || model_vocab(g, &L->vocab, e) < 0 ||
        set_prompt(L, g, r->prompt ? r->prompt : "", e) < 0) {
        lesson_free(L);
        return -1;
    }
    return 0;
}

int lesson_attach_model(struct lesson *L, const struct model_request *r, struct err *e)
{
    struct lesson_gguf *g;
    if (gguf_open_all(r, &g, e) < 0)
        return -1;
    if (model_vocab(g, &L->vocab, e) < 0) {
        lesson_gguf_free(g);
        return -1;
    }
    L->model.gguf = g;
    return 0;
}

int lesson_use_model(struct lesson *L, const struct model_request *r, struct err *e)
{
    if (!L->model.on)
        return err_set(e, ERR_USAGE,
                       "--model runs a full-size lesson (real-france, ...) or none; '%s' has its "
                       "own logits",
                       L->id);
    /* The prompt in words: the lesson's own ids read in its own vocabulary. */
    char text[4096];
    if (!r->prompt && !L->prompt_text)
        vocab_detok(&L->vocab, L->prompt, L->prompt_len, text, sizeof text);
    struct lesson_gguf *g;
    struct vocab v;
    if (gguf_open_all(r, &g, e) < 0)
        return -1;
    if (model_vocab(g, &v, e) < 0) {
        lesson_gguf_free(g);
        return -1;
    }
    for (int k = 0; k < L->n_steps; k++)
        if (L->steps[k].has_context && v.n != L->vocab.n) {
            err_set(e, ERR_USAGE,
                    "%s: step %d gives its context in the ids of %d tokens; %s has %d", L->path,
                    k + 1, L->vocab.n, r->path, v.n);
            vocab_free(&v);
            lesson_gguf_free(g);
            return -1;
        }
    struct lesson trial = *L; /* set_prompt on a copy: L stays as it was on failure */
    trial.prompt = NULL;
    trial.prompt_text = NULL;
    if (set_prompt(&trial, g,
                   r->prompt        ? r->prompt
                   : L->prompt_text ? L->prompt_text
                                    : text,
                   e) < 0) {
        vocab_free(&v);
        lesson_gguf_free(g);
        return -1;
    }
    free(L->prompt);
    free(L->prompt_text);
    L->prompt = trial.prompt;
    L->prompt_len = trial.prompt_len;
    L->prompt_text = trial.prompt_text;
    vocab_free(&L->vocab);
    L->vocab = v;
    lesson_gguf_free(L->model.gguf); /* the lesson's own model file, when it named one */
    L->model.gguf = g;
    return 0;
}
