/* gguf_vocab.c - a GGUF file's tokenizer metadata (tokenizer.ggml.*) as the
 * struct tok_spec of gguf/tokenizer.h, every value checked, read as
 * llama.cpp's vocabulary loader reads it (gguf_llama.h); and the rules of
 * optional keys that gguf_llama.c shares (gguf_llama_int.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf/gguf_llama_int.h"

/* tokens: what a vocabulary may hold (Llama 3: 128,256; Gemma: 262,144) */
#define MAX_VOCAB TOK_MAX_TOKENS

static int is_int_type(int t)
{
    return t == GGUF_T_U8 || t == GGUF_T_I8 || t == GGUF_T_U16 || t == GGUF_T_I16 ||
           t == GGUF_T_U32 || t == GGUF_T_I32 || t == GGUF_T_U64 || t == GGUF_T_I64;
}

static int in_class(const struct gguf_kv *kv, enum kclass c)
{
    int arr = kv->type == GGUF_T_ARRAY;
    switch (c) {
    case K_INT:
        return !arr && is_int_type(kv->type);
    case K_FLOAT:
        return kv->type == GGUF_T_F32 || kv->type == GGUF_T_F64;
    case K_BOOL:
        return kv->type == GGUF_T_BOOL;
    case K_STR:
        return kv->type == GGUF_T_STRING;
    case K_ARR_STR:
        return arr && kv->elem == GGUF_T_STRING;
    case K_ARR_FLOAT:
        return arr && (kv->elem == GGUF_T_F32 || kv->elem == GGUF_T_F64);
    case K_ARR_INT:
        return arr && is_int_type(kv->elem);
    }
    return 0;
}

void gl_warn(struct ld *d, const char *key, const char *why)
{
    struct gguf_llama *L = d->L;
    if (L->n_warnings++ == 0)
        snprintf(L->warning, sizeof L->warning, "%s: %s %s: ignored", d->g->path, key, why);
}

int gl_optional_fits(struct ld *d, const char *key, enum kclass c)
{
    const struct gguf_kv *kv = gguf_find(d->g, key);
    if (!kv || in_class(kv, c))
        return 1;
    char tb[16];
    char why[64];
    snprintf(why, sizeof why, "has type %s%s%s", gguf_type_name(kv->type, tb, sizeof tb),
             kv->type == GGUF_T_ARRAY ? " of " : "",
             kv->type == GGUF_T_ARRAY ? gguf_type_name(kv->elem, tb, sizeof tb) : "");
    gl_warn(d, key, why);
    return 0;
}

/* A string array as (pointer, length) pairs: 1, 0 when absent (an error
 * when required), -1. */
static int load_strs(struct ld *d, const char *key, int required, int max, struct tok_str **out,
                     int *count)
{
    uint64_t n;
    *count = 0;
    if (!required && !gl_optional_fits(d, key, K_ARR_STR))
        return 0;
    int got = gguf_get_arr_len(d->g, key, GGUF_T_STRING, &n, d->e);
    if (got < 0)
        return -1;
    if (!got)
        return required ? err_set(d->e, ERR_USAGE, "%s: %s is missing", d->g->path, key) : 0;
    if (n > (uint64_t)max || (required && n == 0))
        return err_set(d->e, ERR_USAGE, "%s: %s has %llu entries (1 to %d)", d->g->path, key,
                       (unsigned long long)n, max);
    struct gguf_str *tmp = malloc((n ? n : 1) * sizeof *tmp);
    *out = malloc((n ? n : 1) * sizeof **out);
    if (!tmp || !*out) {
        free(tmp);
        return err_set(d->e, ERR_SYSTEM, "%s: out of memory (%s)", d->g->path, key);
    }
    if (gguf_get_strs(d->g, key, tmp, (size_t)n, d->e) < 0) {
        free(tmp);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        (*out)[i] = (struct tok_str){ tmp[i].s, tmp[i].len };
    free(tmp);
    *count = (int)n;
    return 1;
}

/* tokenizer.ggml.scores and token_type, each optional, one per token. */
static int load_scores_types(struct ld *d)
{
    struct gguf_llama *L = d->L;
    size_t n = (size_t)L->tok.n;
    uint64_t have;
    int got = gl_optional_fits(d, "tokenizer.ggml.scores", K_ARR_FLOAT)
                  ? gguf_get_arr_len(d->g, "tokenizer.ggml.scores", GGUF_T_F32, &have, d->e)
                  : 0;
    if (got < 0)
        return -1;
    if (got) {
        L->scores = malloc(n * sizeof *L->scores);
        if (!L->scores)
            return err_set(d->e, ERR_SYSTEM, "%s: out of memory (scores)", d->g->path);
        if (gguf_get_f32s(d->g, "tokenizer.ggml.scores", L->scores, n, d->e) < 0)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (isnan(L->scores[i]))
                return err_set(d->e, ERR_USAGE, "%s: tokenizer.ggml.scores element %zu is NaN",
                               d->g->path, i);
        L->tok.scores = L->scores;
    }
    got = gl_optional_fits(d, "tokenizer.ggml.token_type", K_ARR_INT)
              ? gguf_get_arr_len(d->g, "tokenizer.ggml.token_type", GGUF_T_I32, &have, d->e)
              : 0;
    if (got < 0)
        return -1;
    if (got) {
        L->types = malloc(n * sizeof *L->types);
        if (!L->types)
            return err_set(d->e, ERR_SYSTEM, "%s: out of memory (token types)", d->g->path);
        if (gguf_get_i32s(d->g, "tokenizer.ggml.token_type", L->types, n, d->e) < 0)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (L->types[i] < TOKT_UNDEFINED || L->types[i] > TOKT_BYTE)
                return err_set(d->e, ERR_USAGE,
                               "%s: tokenizer.ggml.token_type element %zu is %d, outside 0 to 6",
                               d->g->path, i, (int)L->types[i]);
        L->tok.types = L->types;
    }
    return 0;
}

/* GGUF writers mark an optional id that a model lacks with -1 (int32) or
 * its unsigned twin 0xFFFFFFFF (llama.cpp's converters write the padding
 * and separator ids so): such a value means absent. */
static int is_no_token(const struct gguf_kv *kv, int64_t v)
{
    return v == -1 || (kv->type == GGUF_T_U32 && v == UINT32_MAX);
}

/* One special id: 1 with *id inside the vocabulary, 0 when absent or
 * marked absent, -1. One the run steers by (steer: BOS, EOS, EOT, unknown)
 * outside the vocabulary is refused; padding, which logitlab never uses,
 * is then left out with a warning, as llama.cpp leaves it. */
static int special_id(struct ld *d, const char *key, int steer, int *id)
{
    const struct gguf_kv *kv = gguf_find(d->g, key);
    int64_t v;
    *id = -1;
    if (!kv || !gl_optional_fits(d, key, K_INT))
        return 0;
    if (gguf_get_i64(d->g, key, &v, d->e) < 0)
        return -1;
    if (is_no_token(kv, v))
        return 0;
    if (v >= 0 && v < d->L->tok.n) {
        *id = (int)v;
        return 1;
    }
    if (steer)
        return err_set(d->e, ERR_USAGE, "%s: %s is %lld, outside the vocabulary (0 to %d)",
                       d->g->path, key, (long long)v, d->L->tok.n - 1);
    char why[96];
    snprintf(why, sizeof why, "is %lld, outside the vocabulary (0 to %d)", (long long)v,
             d->L->tok.n - 1);
    gl_warn(d, key, why);
    return 0;
}

/* A bool key that may be absent (the default stays) or of an odd type. */
static int optional_bool(struct ld *d, const char *key, int *v)
{
    return gl_optional_fits(d, key, K_BOOL) ? gguf_get_bool(d->g, key, v, d->e) : 0;
}

/* The ids of enum tok_extra, as llama.cpp reads them: each absent, or
 * inside the vocabulary (else left out with a warning, as llama.cpp warns
 * and keeps none); the older prefix, suffix and middle keys win over the
 * fim_ ones when both are there, as they come later in llama.cpp's list. */
static int load_extra(struct ld *d)
{
    static const char *const KEY[][2] = {
        [TOKX_EOM] = { "eom", NULL },
        [TOKX_FIM_PRE] = { "fim_pre", "prefix" },
        [TOKX_FIM_SUF] = { "fim_suf", "suffix" },
        [TOKX_FIM_MID] = { "fim_mid", "middle" },
        [TOKX_FIM_PAD] = { "fim_pad", NULL },
        [TOKX_FIM_REP] = { "fim_rep", NULL },
        [TOKX_FIM_SEP] = { "fim_sep", NULL },
    };
    for (int i = 0; i < TOKX_N; i++) {
        char key[64];
        int old = -1;
        snprintf(key, sizeof key, "tokenizer.ggml.%s_token_id", KEY[i][0]);
        if (special_id(d, key, 0, &d->L->extra[i]) < 0)
            return -1;
        snprintf(key, sizeof key, "tokenizer.ggml.%s_token_id", KEY[i][1] ? KEY[i][1] : "");
        if (KEY[i][1] && special_id(d, key, 0, &old) < 0)
            return -1;
        if (old >= 0)
            d->L->extra[i] = old;
    }
    d->L->tok.extra = d->L->extra;
    return 0;
}

/* The special ids, each -1 when absent, else inside the vocabulary; the
 * flags, add_bos -1 when absent (the tokenizer's default: tokenizer.h).
 * Ids logitlab has no use for (separator, mask) are not read. */
static int load_special(struct ld *d)
{
    struct tok_spec *t = &d->L->tok;
    static const char *const KEY[] = { "bos", "eos", "eot", "unknown", "padding" };
    int *id[] = { &t->bos, &t->eos, &t->eot, &t->unk, &t->pad };
    for (int i = 0; i < 5; i++) {
        char key[64];
        snprintf(key, sizeof key, "tokenizer.ggml.%s_token_id", KEY[i]);
        if (special_id(d, key, id[i] != &t->pad, id[i]) < 0)
            return -1;
    }
    t->add_bos = -1;
    t->add_space_prefix = 1;
    if (load_extra(d) < 0 || optional_bool(d, "tokenizer.ggml.add_bos_token", &t->add_bos) < 0 ||
        optional_bool(d, "tokenizer.ggml.add_space_prefix", &t->add_space_prefix) < 0)
        return -1;
    if (t->add_bos == 1 && t->bos < 0)
        return err_set(d->e, ERR_USAGE,
                       "%s: tokenizer.ggml.add_bos_token is true but there is no bos_token_id",
                       d->g->path);
    return 0;
}

int gguf_vocab_check(struct ld *d)
{
    struct tok_spec *t = &d->L->tok;
    struct gguf_str m;
    int got = gguf_get_str(d->g, "tokenizer.ggml.model", &m, d->e);
    if (got < 0)
        return -1;
    if (!got)
        return err_set(d->e, ERR_USAGE, "%s: tokenizer.ggml.model is missing", d->g->path);
    if (m.len == 4 && memcmp(m.s, "gpt2", 4) == 0) {
        t->kind = TOK_BPE;
    } else if (m.len == 5 && memcmp(m.s, "llama", 5) == 0) {
        t->kind = TOK_SPM;
    } else if (m.len == 6 && memcmp(m.s, "gemma4", 6) == 0) {
        t->kind = TOK_GEMMA4;
    } else {
        char buf[NAME_SHOWN];
        gguf_escape(m.s, m.len, buf, sizeof buf);
        return err_set(d->e, ERR_USAGE,
                       "%s: tokenizer '%s' is not supported (gpt2, llama or gemma4)", d->g->path,
                       buf);
    }
    struct gguf_str s = { NULL, 0 };
    if (gl_optional_fits(d, "tokenizer.ggml.pre", K_STR) &&
        gguf_get_str(d->g, "tokenizer.ggml.pre", &s, d->e) < 0)
        return -1;
    t->pre = (struct tok_str){ s.s, s.len };
    return tokenizer_check_pre(t->kind, &t->pre, d->g->path, d->e);
}

int gguf_vocab_load(struct ld *d)
{
    struct gguf_llama *L = d->L;
    struct tok_spec *t = &L->tok;
    if (gguf_vocab_check(d) < 0)
        return -1;
    if (load_strs(d, "tokenizer.ggml.tokens", 1, MAX_VOCAB, &L->text, &t->n) < 0 ||
        load_strs(d, "tokenizer.ggml.merges", t->kind != TOK_SPM, INT32_MAX, &L->merges,
                  &t->n_merges) < 0)
        return -1;
    t->text = L->text;
    t->merges = L->merges;
    if (load_scores_types(d) < 0 || load_special(d) < 0)
        return -1;
    int got = gl_optional_fits(d, "tokenizer.chat_template", K_STR)
                  ? gguf_get_str(d->g, "tokenizer.chat_template", &L->chat_template, d->e)
                  : 0;
    if (got < 0 || (gl_optional_fits(d, "general.name", K_STR) &&
                    gguf_get_str(d->g, "general.name", &L->name, d->e) < 0))
        return -1;
    L->has_chat_template = got;
    return 0;
}
