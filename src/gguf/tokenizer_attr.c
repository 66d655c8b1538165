/* tokenizer_attr.c - what llama.cpp's vocabulary loader decides about a
 * token by its text alone, whatever type the file gives it (llama-vocab.cpp
 * at the pinned commit, load()): which tokens are control tokens, and which
 * end a generation. It matters for the ids: a control token's text is
 * matched in the prompt only with --special, while a user-defined token's
 * is matched always (Qwen2 stores <|fim_prefix|> as user-defined, and
 * llama.cpp then treats it as control); and for the loop's stop rule.
 *
 * The rules, in llama.cpp's order:
 *   1. each fill-in-the-middle role (prefix, suffix, middle, pad, repo,
 *      file separator) whose id the metadata does not give takes the token
 *      of one of its known texts, which becomes a control token (llama.cpp
 *      takes the first its hash map yields; here the lowest id, the same
 *      whenever a vocabulary has one such text, as all known ones do);
 *   2. the pad, repo and separator roles end a generation;
 *   3. every token whose text is a known end (<|eot_id|>, </s>, ...) ends a
 *      generation and becomes a control token;
 *   4. gpt-oss's <|channel|>, <|message|>, <|start|>, <|constrain|> become
 *      user-defined (always matched);
 *   5. the EOS, EOT and EOM ids end a generation;
 *   6. where <|return|> and <|call|>, or <|call|>/<|calls|> and <|flush|>,
 *      end generation, <|end|> does not (o200k_harmony, Solar Open): it
 *      becomes user-defined; where <|tool_response> does, </s> does not
 *      (Gemma 4, PaddleOCR): it becomes a normal token.
 * The texts are the tokens' texts as stored ("▁<PRE>" in SentencePiece). */
#include <stdlib.h>
#include <string.h>

#include "gguf/tokenizer_int.h"

/* What a known text makes of its token. ROLE_END: ends a generation;
 * ROLE_USER: user-defined; the rest: a fill-in-the-middle role, its
 * TOKX_* index plus ROLE_FIM. */
enum { ROLE_END = -1, ROLE_USER = -2, ROLE_FIM = 0 };

static const struct known {
    const char *text;
    int role;
} KNOWN[] = {
    { "<|eot_id|>", ROLE_END },
    { "<|im_end|>", ROLE_END },
    { "<|end|>", ROLE_END },
    { "<|return|>", ROLE_END },
    { "<|call|>", ROLE_END },
    { "<|flush|>", ROLE_END },
    { "<|calls|>", ROLE_END },
    { "<end_of_turn>", ROLE_END },
    { "<|endoftext|>", ROLE_END },
    { "</s>", ROLE_END },
    { "<|eom_id|>", ROLE_END },
    { "<EOT>", ROLE_END },
    { "_<EOT>", ROLE_END },
    { "[EOT]", ROLE_END },
    { "[EOS]", ROLE_END },
    { "<|end_of_text|>", ROLE_END },
    { "<end_of_utterance>", ROLE_END },
    { "<eos>", ROLE_END },
    { "<turn|>", ROLE_END },
    { "<|tool_response>", ROLE_END },
    { "<\xef\xbd\x9c"
      "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
      ROLE_END }, /* DeepSeek's, with fullwidth bars and U+2581 */
    { "[e~[", ROLE_END },
    { "<|fim_prefix|>", TOKX_FIM_PRE },
    { "<fim-prefix>", TOKX_FIM_PRE },
    { "<fim_prefix>", TOKX_FIM_PRE },
    { "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "begin\xef\xbd\x9c>",
      TOKX_FIM_PRE },
    { "<PRE>", TOKX_FIM_PRE },
    { "\xe2\x96\x81<PRE>", TOKX_FIM_PRE },
    { "<|code_prefix|>", TOKX_FIM_PRE },
    { "<|prefix|>", TOKX_FIM_PRE },
    { "<|fim_suffix|>", TOKX_FIM_SUF },
    { "<fim-suffix>", TOKX_FIM_SUF },
    { "<fim_suffix>", TOKX_FIM_SUF },
    { "<\xef\xbd\x9c"
      "fim\xe2\x96\x81hole\xef\xbd\x9c>",
      TOKX_FIM_SUF },
    { "<SUF>", TOKX_FIM_SUF },
    { "\xe2\x96\x81<SUF>", TOKX_FIM_SUF },
    { "<|code_suffix|>", TOKX_FIM_SUF },
    { "<|suffix|>", TOKX_FIM_SUF },
    { "<|fim_middle|>", TOKX_FIM_MID },
    { "<fim-middle>", TOKX_FIM_MID },
    { "<fim_middle>", TOKX_FIM_MID },
    { "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "end\xef\xbd\x9c>",
      TOKX_FIM_MID },
    { "<MID>", TOKX_FIM_MID },
    { "\xe2\x96\x81<MID>", TOKX_FIM_MID },
    { "<|code_middle|>", TOKX_FIM_MID },
    { "<|middle|>", TOKX_FIM_MID },
    { "<|fim_pad|>", TOKX_FIM_PAD },
    { "<fim-pad>", TOKX_FIM_PAD },
    { "<fim_pad>", TOKX_FIM_PAD },
    { "<PAD>", TOKX_FIM_PAD },
    { "[PAD]", TOKX_FIM_PAD },
    { "<|fim_repo|>", TOKX_FIM_REP },
    { "<|repo_name|>", TOKX_FIM_REP },
    { "<fim-repo>", TOKX_FIM_REP },
    { "<REPO>", TOKX_FIM_REP },
    { "<reponame>", TOKX_FIM_REP },
    { "<|file_sep|>", TOKX_FIM_SEP },
    { "<|channel|>", ROLE_USER },
    { "<|message|>", ROLE_USER },
    { "<|start|>", ROLE_USER },
    { "<|constrain|>", ROLE_USER },
};
#define N_KNOWN ((int)(sizeof KNOWN / sizeof KNOWN[0]))

/* One load's work: the lowest id of each known text (-1: none), and which
 * tokens end a generation. */
struct attr {
    int id[N_KNOWN];
    unsigned char *end;
};

/* The lowest id of each known text, in one pass over the tokens. */
static void find_known(const struct tok_spec *s, struct attr *a)
{
    size_t len[N_KNOWN];
    for (int k = 0; k < N_KNOWN; k++) {
        len[k] = strlen(KNOWN[k].text);
        a->id[k] = -1;
    }
    for (int i = s->n - 1; i >= 0; i--) {
        const struct tok_str *x = &s->text[i];
        if (x->len < 3 || x->len > 40)
            continue; /* no known text is shorter or longer */
        for (int k = 0; k < N_KNOWN; k++)
            if (x->len == len[k] && memcmp(x->s, KNOWN[k].text, len[k]) == 0)
                a->id[k] = i;
    }
}

/* The id of the token of known text, or -1. */
static int known_id(const struct attr *a, const char *text)
{
    for (int k = 0; k < N_KNOWN; k++)
        if (strcmp(KNOWN[k].text, text) == 0)
            return a->id[k];
    return -1;
}

static int is_end(const struct attr *a, const char *text)
{
    int id = known_id(a, text);
    return id >= 0 && a->end[id];
}

/* The lowest id among the known texts of a role, or -1. */
static int role_id(const struct attr *a, int role)
{
    int best = -1;
    for (int k = 0; k < N_KNOWN; k++)
        if (KNOWN[k].role == role && a->id[k] >= 0 && (best < 0 || a->id[k] < best))
            best = a->id[k];
    return best;
}

/* Rules 1 to 4 of the file's comment. */
static void by_text(struct tokenizer *t, const struct tok_spec *s, struct attr *a)
{
    for (int role = TOKX_FIM_PRE; role <= TOKX_FIM_SEP; role++) {
        int id = s->extra ? s->extra[role] : -1;
        if (id < 0 && (id = role_id(a, role)) >= 0)
            t->type[id] = TOKT_CONTROL;
        if (id >= 0 && role >= TOKX_FIM_PAD)
            a->end[id] = 1;
    }
    for (int k = 0; k < N_KNOWN; k++)
        if (KNOWN[k].role == ROLE_END && a->id[k] >= 0) {
            a->end[a->id[k]] = 1;
            t->type[a->id[k]] = TOKT_CONTROL;
        }
    for (int k = 0; k < N_KNOWN; k++)
        if (KNOWN[k].role == ROLE_USER && a->id[k] >= 0)
            t->type[a->id[k]] = TOKT_USER_DEFINED;
}

/* Rules 5 and 6. */
static void by_id(struct tokenizer *t, const struct tok_spec *s, struct attr *a)
{
    int ids[3] = { s->eos, s->eot, s->extra ? s->extra[TOKX_EOM] : -1 };
    for (int i = 0; i < 3; i++)
        if (ids[i] >= 0 && ids[i] < t->n)
            a->end[ids[i]] = 1;
    int call = is_end(a, "<|call|>") || is_end(a, "<|calls|>");
    int end = known_id(a, "<|end|>");
    if (end >= 0 && a->end[end] && call && (is_end(a, "<|return|>") || is_end(a, "<|flush|>"))) {
        a->end[end] = 0;
        t->type[end] = TOKT_USER_DEFINED;
    }
    int s_end = known_id(a, "</s>");
    if (s_end >= 0 && a->end[s_end] && is_end(a, "<|tool_response>")) {
        a->end[s_end] = 0;
        t->type[s_end] = TOKT_NORMAL;
    }
}

int tok_attr_apply(struct tokenizer *t, const struct tok_spec *s, struct err *e)
{
    struct attr a;
    a.end = calloc((size_t)t->n, 1);
    if (!a.end)
        return err_set(e, ERR_SYSTEM, "out of memory for a vocabulary of %d tokens", t->n);
    find_known(s, &a);
    by_text(t, s, &a);
    by_id(t, s, &a);
    int n = 0;
    for (int i = 0; i < t->n; i++)
        n += a.end[i];
    t->eog = malloc((size_t)(n ? n : 1) * sizeof *t->eog);
    if (!t->eog) {
        free(a.end);
        return err_set(e, ERR_SYSTEM, "out of memory for %d end tokens", n);
    }
    for (int i = 0; i < t->n; i++)
        if (a.end[i])
            t->eog[t->n_eog++] = i;
    free(a.end);
    return 0;
}
