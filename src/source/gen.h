/* gen.h - the loop of generation (HACKING.md's data flow, its last box): a
 * generation holds the context (the prompt, then the tokens generated),
 * appends each chosen token, checks the stop rules on it, and turns the
 * tokens into text, streamed a whole character at a time. The interactive
 * view, the batch, the lesson's own path, `generate` and `export` all go
 * through it. */
#ifndef LOGITLAB_GEN_H
#define LOGITLAB_GEN_H

#include <stddef.h>
#include <stdio.h>

#include "core/settings.h"
#include "data/vocab.h"

enum stop_rule { STOP_NONE, STOP_EOS, STOP_MAX_TOKENS, STOP_STRING };

struct stop_result {
    enum stop_rule rule;
    int which; /* the stop string's index for STOP_STRING, the token for STOP_EOS */
    /* STOP_STRING: how many bytes of the generated text are shown. The
     * engines cut the text where the matched string begins (stop-text
     * strip, OpenAI's API, vLLM and llama.cpp's server) or right after it
     * (keep, vLLM's include_stop_str_in_output); the tokens stay. */
    size_t text_end;
};

/* A generation. */
struct gen {
    const struct vocab *v;
    int *ids; /* the prompt (prompt_len ids), then the generated ones */
    int len, cap;
    int prompt_len;
    struct stop_result stop; /* what ended it after its last token, or STOP_NONE */
    size_t streamed;         /* bytes of the context's text gen_stream has written */
    /* Bytes of the generated text that are decided: what follows may be the
     * start of a stop string, so a stream holds it back (0 until the first
     * gen_append has checked the text). */
    size_t decided;
};

/* Starts a generation from ctx[0..len) (copied), the first prompt_len of
 * them the prompt (a context shorter than that is all prompt). Returns 0,
 * or -1 when out of memory. */
int gen_start(struct gen *g, const struct vocab *v, const int *ctx, int len, int prompt_len,
              struct err *e);
void gen_free(struct gen *g);

/* Starts again from ctx (a step that gives a context of its own), keeping
 * the vocabulary and the prompt's length. Returns 0 or -1. */
int gen_restart(struct gen *g, const int *ctx, int len, struct err *e);

/* Appends token id and checks the stop rules of s on it (g->stop). Returns
 * 0, or -1 when out of memory (nothing appended). */
int gen_append(struct gen *g, int id, const struct settings *s, struct err *e);

/* Takes the last token back (a step that could not be completed). */
void gen_undo(struct gen *g);

/* How many tokens were generated. */
int gen_count(const struct gen *g);

/* Writes to out the text of the context (the prompt's, then the generated
 * tokens') not written yet, up to the last whole character (all of it when
 * final): characters, newlines and tabs as they are, any other control byte
 * and a byte that can never be part of a character as \xNN. Generated text
 * that may be the start of a stop string waits until it is decided (when
 * final, it is written unless a stop string matched); after a stop string
 * the text ends as g->stop.text_end says. Returns 0, or -1 on a write error
 * or out of memory. */
int gen_stream(struct gen *g, FILE *out, int final);

/* The text of the generated tokens as it is shown (cut as g->stop says)
 * into buf, like vocab_detok: returns the length it needs. */
size_t gen_text(const struct gen *g, char *buf, size_t n);

/* The text as it is shown, in a buffer the caller frees (NULL when out of
 * memory): with whole, the prompt's text and then the generated text, else
 * the generated text alone; *len gets its length. A join-space vocabulary's
 * space before the generated text goes when none of that text is shown. */
char *gen_shown_text(const struct gen *g, int whole, size_t *len);

/* The length of the generated text shown when the text is len bytes long
 * and r ended it: len, or less after a stop string. */
size_t stop_text_end(const struct stop_result *r, size_t len);

/* How many bytes of text (len bytes of generated text) are decided under
 * the stop strings of s: the rest is a proper prefix of one of them, which
 * the next token could complete. All of them when the strings are kept
 * (stop-text keep) or there are none. */
size_t stop_decided(const struct settings *s, const char *text, size_t len);

/* What happened to a matched stop string in the shown text: "not shown"
 * (stop-text strip) or "kept in the text"; NULL for any other rule. */
const char *stop_shown(const struct stop_result *r, const struct settings *s);

/* Checks the stop rules after a token was appended: ctx[0..len) holds the
 * prompt (prompt_len tokens) and everything generated, the new token last.
 * End token first, then a stop string in the generated text (matched across
 * token boundaries; the first of s's list that occurs, as vLLM checks them,
 * its first occurrence setting text_end), then the maximum number of
 * generated tokens. */
struct stop_result stop_check(const struct settings *s, const struct vocab *v, const int *ctx,
                              int len, int prompt_len);

/* The stop rule that fires when id is appended to ctx[0..len) (whose first
 * prompt_len are the prompt), into *out. Returns 0, or -1 when out of memory. */
int stop_after(const struct settings *s, const struct vocab *v, const int *ctx, int len,
               int prompt_len, int id, struct stop_result *out, struct err *e);

/* The rule's name in machine-read reports: "none", "eos", "max-tokens",
 * "stop-string". */
const char *stop_rule_name(enum stop_rule r);

/* "end token [EOS]", "stop string \"mat\"", "max tokens (3)", or "". */
void stop_describe(const struct stop_result *r, const struct settings *s, const struct vocab *v,
                   char *buf, size_t n);

#endif
