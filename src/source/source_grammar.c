/* source_grammar.c - a constraint's mask for each step (issue 33): the
 * source compiles the grammar setting that is on, builds its vocabulary's
 * byte trie once, runs the grammar over the text generated so far and
 * marks every token that cannot continue it. The state comes from the
 * context itself, so a step that is recomputed, taken back or branched
 * needs nothing carried from the steps before it.
 *
 * The text the grammar reads is the generated text as vocab_detok writes it
 * (the prompt is not constrained, as in every engine): a token's bytes, and
 * for a word-level vocabulary (join_space) a space before each word but the
 * first. So a word-level vocabulary has two tries: the first token's, and
 * the later ones' with their space. Special tokens have no text here and
 * are refused, but the end tokens, which come through when the grammar is
 * complete (the engines' rule). */
#include "source/source_grammar.h"

#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "core/grammar.h"

struct source_grammar {
    int front;  /* the compiled one's front end (0: none compiled) */
    char *text; /* and its text */
    struct grammar *g;
    struct grammar_trie *trie[2]; /* [0]: the first token's bytes; [1]: a later one's */
    uint8_t *refused;             /* the last mask, V flags */
    int on;                       /* the last step had one */
    char state[TRACE_GRAMMAR_STATE];
};

void source_grammar_free(struct source_grammar *sg)
{
    if (!sg)
        return;
    free(sg->text);
    grammar_free(sg->g);
    grammar_trie_free(sg->trie[0]);
    grammar_trie_free(sg->trie[1]);
    free(sg->refused);
    free(sg);
}

/* Whether a token never has text for a grammar: a special token (its text
 * is its name; llama.cpp would match that name as text, vLLM's grammars
 * refuse it), the BOS, an end token (the caller's, by accepts). */
static int no_text(const struct vocab *v, int id)
{
    return vocab_is_special(v, id) || (v->has_bos && id == v->bos) || vocab_is_eos(v, id);
}

/* The trie of the vocabulary's tokens, each after sep (a space, or ""). */
static int build_trie(const struct vocab *v, const char *sep, struct grammar_trie **out,
                      struct err *e)
{
    size_t ns = strlen(sep);
    const unsigned char **bytes = malloc((size_t)v->n * sizeof *bytes);
    int *len = malloc((size_t)v->n * sizeof *len);
    unsigned char *spaced = NULL;
    size_t total = 0;
    for (int id = 0; bytes && len && id < v->n; id++) {
        size_t n = 0;
        vocab_bytes(v, id, &n);
        total += ns + n;
    }
    if (bytes && len && ns > 0)
        spaced = malloc(total + 1);
    if (!bytes || !len || (ns > 0 && !spaced)) {
        free(bytes);
        free(len);
        free(spaced);
        return err_set(e, ERR_SYSTEM, "out of memory for the grammar's trie (%d tokens)", v->n);
    }
    size_t at = 0;
    for (int id = 0; id < v->n; id++) {
        size_t n = 0;
        const char *b = vocab_bytes(v, id, &n);
        len[id] = no_text(v, id) || !b ? 0 : (int)(ns + n);
        bytes[id] = (const unsigned char *)b;
        if (ns > 0 && len[id] > 0) { /* the word with its space before it */
            memcpy(spaced + at, sep, ns);
            memcpy(spaced + at + ns, b, n);
            bytes[id] = spaced + at;
            at += ns + n;
        }
    }
    int rc = grammar_trie_build(bytes, len, v->n, out, e);
    free(bytes);
    free(len);
    free(spaced);
    return rc;
}

/* The grammar of s, compiled when it is not the one held already. */
static int compile(struct source_grammar *sg, int front, const char *text, struct err *e)
{
    if (sg->g && sg->front == front && strcmp(sg->text, text) == 0)
        return 0;
    grammar_free(sg->g);
    free(sg->text);
    sg->g = NULL;
    sg->front = 0;
    sg->text = malloc(strlen(text) + 1);
    if (!sg->text)
        return err_set(e, ERR_SYSTEM, "out of memory for the grammar");
    strcpy(sg->text, text);
    if (grammar_from_front(front, text, strlen(text), &sg->g, e) < 0)
        return -1;
    sg->front = front;
    return 0;
}

/* Held once per source: the tries (built on the first step that needs
 * them) and the mask's room. */
static int make_ready(struct source_grammar *sg, const struct vocab *v, int later, struct err *e)
{
    int which = v->join_space && later;
    if (!sg->refused && !(sg->refused = malloc((size_t)v->n)))
        return err_set(e, ERR_SYSTEM, "out of memory for the grammar's mask (%d tokens)", v->n);
    if (!sg->trie[which])
        return build_trie(v, which ? " " : "", &sg->trie[which], e);
    return 0;
}

/* The text so far leaves the grammar: where, in one line. */
static int text_refused(struct source_grammar *sg, const char *text, size_t n, struct err *e)
{
    struct grammar_state *st;
    if (grammar_state_new(sg->g, &st, e) < 0)
        return -1;
    size_t at = 0;
    while (at < n && grammar_advance(sg->g, st, (const unsigned char *)text + at, 1, e) == 1)
        at++;
    grammar_state_free(st);
    char shown[96];
    utf8_escape(text, shown, sizeof shown);
    return err_set(e, ERR_USAGE,
                   "grammar: the text generated so far (\"%s\") leaves it at byte %zu: choose "
                   "another token, or take this one back",
                   shown, at);
}

/* The state after the generated text of ctx, into *out. */
static int run_text(struct source_grammar *sg, const struct vocab *v, const int *gen, int n,
                    struct grammar_state **out, struct err *e)
{
    size_t need = vocab_detok(v, gen, n, NULL, 0);
    char *text = malloc(need + 1);
    if (!text)
        return err_set(e, ERR_SYSTEM, "out of memory for the generated text (%zu bytes)", need);
    vocab_detok(v, gen, n, text, need + 1);
    int rc = grammar_state_new(sg->g, out, e);
    if (rc == 0) {
        rc = grammar_advance(sg->g, *out, (const unsigned char *)text, need, e);
        if (rc == 0)
            rc = text_refused(sg, text, need, e);
        if (rc < 0) {
            grammar_state_free(*out);
            *out = NULL;
        }
    }
    free(text);
    return rc < 0 ? -1 : 0;
}

/* The mask of the state into refused: the trie's walk, then the end tokens. */
static int mask(struct source_grammar *sg, const struct vocab *v, int later,
                const struct grammar_state *st, uint8_t *refused, struct err *e)
{
    struct grammar_mask_counts c;
    int kept = grammar_mask(sg->g, st, sg->trie[v->join_space && later], refused, &c, e);
    if (kept < 0)
        return -1;
    for (int k = 0; k < v->n_eos; k++) {
        int id = v->eos[k];
        kept += c.accepts && refused[id];
        refused[id] = !c.accepts;
    }
    grammar_describe(sg->g, st, sg->state, sizeof sg->state);
    if (kept > 0)
        return 0;
    if (c.accepts)
        return err_set(e, ERR_USAGE,
                       "grammar: the text is complete, and the vocabulary has no end token to "
                       "stop it (%s)",
                       sg->state);
    return err_set(e, ERR_USAGE, "grammar: no token of the vocabulary continues the text (%s)",
                   sg->state);
}

int source_grammar_step(struct source_grammar **held, const struct vocab *v,
                        const struct settings *s, const int *ctx, int len, int prompt_len,
                        uint8_t *into, struct sampler_input *in, struct err *e)
{
    const struct setting_info *on = settings_grammar_on(s);
    int front = on ? (int)on->hi : 0;
    in->refused = NULL;
    in->grammar_state = NULL;
    if (*held)
        (*held)->on = 0;
    if (!front)
        return 0;
    if (!*held && !(*held = calloc(1, sizeof **held)))
        return err_set(e, ERR_SYSTEM, "out of memory for the grammar");
    struct source_grammar *sg = *held;
    int n = len - prompt_len, later = n > 0;
    struct grammar_state *st = NULL;
    if (compile(sg, front, s->grammar_text, e) < 0 || make_ready(sg, v, later, e) < 0 ||
        run_text(sg, v, ctx + prompt_len, n, &st, e) < 0)
        return -1;
    uint8_t *refused = into ? into : sg->refused;
    int rc = mask(sg, v, later, st, refused, e);
    grammar_state_free(st);
    if (rc < 0)
        return -1;
    in->refused = refused;
    in->grammar_state = sg->state;
    sg->on = !into;
    return 0;
}

const uint8_t *source_grammar_refused(const struct source_grammar *sg)
{
    return sg && sg->on ? sg->refused : NULL;
}
