/* sampler.h - the pure core: stages, chain, trace and the draw rule.
 *
 * Everything here is a function of its arguments: no I/O, no globals, no
 * randomness but the Philox u that the caller can also pass in by hand.
 * The rules are those of DESIGN.md section 2, restated where they are coded.
 * This is the CPU reference: it sorts the whole vocabulary, so it is plain
 * rather than fast; the fast paths are tested against it.
 */
#ifndef LOGITLAB_SAMPLER_H
#define LOGITLAB_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/vecpath.h"

/* The stages, in the order of sampling.def (STAGE_PENALTY, STAGE_TEMPERATURE,
 * STAGE_TOP_K, ...); STAGE_COUNT of them. */
enum stage {
#define STAGE(id, ...) STAGE_##id,
#include "core/sampling.def"
#undef STAGE
    STAGE_COUNT
};

/* Flags of a stage (sampling.def). */
enum {
    SF_CUT = 1,       /* a truncating stage: it marks tokens removed */
    SF_ZERO_CUTS = 2, /* a value stage that keeps only the argmax when its setting is 0 */
};

enum preset {
    PRESET_LESSON,   /* penalty, temperature, top-k, top-p, min-p */
    PRESET_HF,       /* the same order; top-k keeps every token tied with the k-th */
    PRESET_VLLM,     /* penalty, temperature, min-p, top-k, top-p */
    PRESET_LLAMACPP, /* penalty, top-k, top-p, min-p, temperature */
    PRESET_CUSTOM,   /* an order the user spelled out */
    PRESET_COUNT
};

enum penalty_formula {
    PENALTY_ENGINE, /* z > 0: z / alpha, else z * alpha (HF, vLLM, llama.cpp) */
    PENALTY_LESSON  /* z / alpha for every seen token, as the lesson writes it */
};

enum penalty_scope {
    SCOPE_GENERATED, /* only tokens generated after the prompt count as seen */
    SCOPE_ALL        /* prompt and generated tokens count (what engines do) */
};

struct chain {
    int n; /* stages in order; a stage not listed is not applied */
    enum stage stage[STAGE_COUNT];
    enum preset preset;
    int topk_keep_ties; /* keep every token tied with the k-th (the hf preset) */
};

/* Logit bias (logit-bias): up to LOGIT_BIAS_MAX tokens, each with a number
 * added to its z', or -inf: the token is removed (the stage marks it, and
 * its z' stays as it was, so that its row still shows what it would have
 * had). Ids distinct, checked against the vocabulary at each step. */
#define LOGIT_BIAS_MAX 16
struct logit_bias {
    int n;
    int id[LOGIT_BIAS_MAX];
    double bias[LOGIT_BIAS_MAX];
};

/* Bad words (bad-words): up to BAD_WORDS_MAX sequences of 1 to
 * BAD_WORD_LEN token ids; a sequence's last token goes when the context
 * ends with the rest of it (a one-token sequence: always). */
#define BAD_WORDS_MAX 8
#define BAD_WORD_LEN  8
struct bad_words {
    int n;
    int len[BAD_WORDS_MAX];
    int id[BAD_WORDS_MAX][BAD_WORD_LEN];
};

/* The C type of each kind of setting (sampling.def). */
#define SETTING_CTYPE_BIAS    struct logit_bias
#define SETTING_CTYPE_WORDS   struct bad_words
#define SETTING_CTYPE_DOUBLE  double
#define SETTING_CTYPE_INT     int
#define SETTING_CTYPE_ENUM    int /* an enum penalty_formula, penalty_scope, ... */
#define SETTING_CTYPE_SEED    uint64_t
#define SETTING_CTYPE_ORDER   struct chain
#define SETTING_CTYPE_GRAMMAR int /* 0 off, else its front end; the text is in struct settings */

/* All the settings of one sampling step: a member for each setting of
 * sampling.def whose place is SAMPLER (temperature, top_k, top_p, min_p,
 * repetition_penalty, penalty_formula, penalty_scope, penalty_last_n,
 * presence_penalty, frequency_penalty, shift, seed, chain), with its range
 * and its meaning there. Defaults (sampler_defaults) turn every stage off:
 * T 1, k 0, p 1, min-p 0, penalties neutral. */
#define SETTING_MEMBER_SAMPLER(kind, field) SETTING_CTYPE_##kind field;
#define SETTING_MEMBER_LOOP(kind, field)
struct sampler_settings {
#define SETTING(field, where, name, kind, ...) SETTING_MEMBER_##where(kind, field)
#include "core/sampling.def"
#undef SETTING
};

/* The context a step samples in: the token ids so far, the first prompt_len
 * of which are the prompt. step and row feed the Philox counter. */
struct sampler_input {
    int vocab_size;
    const double *logits;  /* vocab_size values; -inf masks a token; NaN and +inf are errors */
    const float *logits_f; /* or these, for sampler_run_fast (a model's float32 logits) */
    const int *context;    /* context_len token ids, each in [0, vocab_size) */
    int context_len;
    int prompt_len; /* <= context_len */
    uint32_t step;  /* generation step, 1 for the first */
    uint32_t row;   /* request row in a batch, 0 for a single request */
    /* vocab_size flags: the token is a DRY sequence breaker (its text holds
     * one of DRY_BREAKERS); NULL: no token is. */
    const uint8_t *breaker;
    /* The end-of-generation tokens (min-tokens masks them), n_end of them. */
    const int *end_ids;
    int n_end;
    /* vocab_size flags: the grammar refuses the token here (the grammar
     * stage removes it); and where the grammar stands, in words. NULL when
     * no grammar is on; the grammar stage needs them when one is. */
    const uint8_t *refused;
    const char *grammar_state;
};

/* llama.cpp's default DRY sequence breakers: a repeat never runs across a
 * token whose text holds one of them. */
#define DRY_BREAKERS                                                                               \
    {                                                                                              \
        "\n", ":", "\"", "*"                                                                       \
    }

#define TRACE_GRAMMAR_STATE 160 /* bytes of the grammar's state a trace keeps */

#define TRACE_KEPT   (-1)        /* removed_by of a kept token */
#define TRACE_MASKED STAGE_COUNT /* removed_by of a token whose logit was -inf */

struct trace_row {
    int id;
    int seen;         /* occurrences in the penalty window */
    int removed_by;   /* TRACE_KEPT, a stage, or TRACE_MASKED */
    double logit;     /* as given */
    double adjusted;  /* after shift, penalties and temperature (z') */
    double exp;       /* e^z', not shifted (can overflow to inf for huge logits) */
    double prob;      /* softmax of z' over the whole vocabulary */
    double cum;       /* running sum of prob down the rows */
    double final;     /* prob renormalized over the kept tokens; 0 if removed */
    double cum_final; /* running sum of final down the rows: what u is compared with */
};

struct stage_report {
    enum stage stage;
    int active;          /* the setting does something (T != 1, k > 0, ...) */
    int in;              /* tokens still kept when the stage ran */
    int removed;         /* tokens this stage removed */
    double removed_mass; /* their total prob (the final softmax, as in the rows) */
    /* What a truncating stage saw, in the softmax of the logits at its place
     * in the chain: the top probability, and the value it cut at -- top-k:
     * the k-th probability; top-p: the cumulative sum where it stopped;
     * min-p: the bar min_p * p_max. */
    double p_max;
    double cut;
};

struct choice {
    int id;
    int rank;    /* row index in the trace */
    int sampled; /* 0: greedy (argmax, no u); 1: drawn with u */
    double u;
    double lo, hi; /* the interval of u in [0, 1) that selects this token */
};

struct zid;        /* sampler_rules.h */
struct draws_work; /* draws.h */

struct trace {
    int vocab_size;
    int n_rows;             /* rows filled, best first: all of them, or the top ones (fast path) */
    struct trace_row *rows; /* descending prob, ties to the lower id */
    int *rank_of;           /* rank_of[id]: the row of token id */
    int greedy;             /* T = 0 was in the chain */
    double max_adjusted;    /* largest finite z' */
    double sum_exp;         /* sum of e^z' (unshifted; inf when it overflows) */
    double sum_exp_shifted; /* sum of e^(z' - max): what softmax divides by */
    double entropy;         /* of prob, in nats */
    double entropy_final;   /* of final, in nats */
    int kept_count;
    double kept_mass; /* sum of prob over the kept tokens */
    int penalized;    /* tokens the penalty stage changed */
    int n_stages;
    struct stage_report stages[STAGE_COUNT]; /* in chain order */
    struct choice choice;
    /* Where the grammar stood (sampler_input's grammar_state), "" without one. */
    char grammar_state[TRACE_GRAMMAR_STATE];
    /* Scratch space of sampler_run, allocated by trace_init; not part of the result. */
    double *work_z;
    int *work_count;
    struct zid *work_order;
    struct trace_row *work_rows;
    /* The fast path's per-token state, kept after a run so that any token's
     * row can be looked up (sampler_fast_row); allocated on first use. */
    double *fz;     /* final z' of every token */
    double *fz_pre; /* z' before the temperature, when a cut before it left its p_max for later */
    double *fe;     /* work area: e^(z' - max) where a run needed it (read trace_e) */
    uint8_t *fmark; /* 0 kept, else 1 + the stage that removed it (TRACE_MASKED + 1: masked) */
    uint32_t *fkey; /* order-preserving keys, for radix selection */
    int *fcand;     /* candidate lists */
    int *fcount;    /* penalty counts, zero between runs */
    double *fblock; /* the largest z' of each block of tokens */
    void *fhist;    /* the radix descent's histograms (fast_int.h) */
    struct draws_work *dwork; /* the many draws' work space (draws.h) */
    int fmax_valid;           /* the arrays above hold the last fast run */
    int fvec; /* the vector path the last fast run took (base/vecpath.h), which trace_e takes */
    /* The fast path's first cut, when the temperature divides z' after it
     * and the cut needed no sum of its own (top-k, min-p, top-n-sigma),
     * leaves its p_max (and a cut that is a probability) unnormalized: a
     * pass over the vocabulary at that z', fz_pre, that nothing but a
     * report of the stages reads. 1 + its index in stages, 0: none. */
    int p_max_later;
    int cut_later;      /* its cut is a probability: normalized with p_max */
    double p_max_shift; /* the largest z' there: the sum's shift */
};

/* Fills s with neutral settings, seed 1 and the lesson order: each setting's
 * default in sampling.def (settings.c). */
void sampler_defaults(struct sampler_settings *s);

/* Sets c to a preset order (not PRESET_CUSTOM). */
void chain_preset(struct chain *c, enum preset p);

/* Whether stage st is in the order c. */
int chain_has(const struct chain *c, enum stage st);

/* Checks every setting against its range in sampling.def (settings.c).
 * Returns 0, or -1 with a message naming the setting ("top-p 1.5 is out of
 * range (must be in (0, 1])"). */
int sampler_check(const struct sampler_settings *s, struct err *e);

/* Allocates a trace for vocab_size tokens. Returns 0 or -1 (out of memory). */
int trace_init(struct trace *t, int vocab_size, struct err *e);
void trace_free(struct trace *t);

/* After a run that failed part way (a z' out of range): the trace holds no
 * step -- no rows, nothing kept, the fast path's arrays not valid -- so that
 * nothing reads the half-computed values. */
void trace_invalidate(struct trace *t);

/* What a run keeps of in besides the numbers: where the grammar stood
 * (sampler_run and sampler_run_fast call it). */
void trace_take_input(struct trace *t, const struct sampler_input *in);

/* Runs the chain of s over in and fills t (allocated for in->vocab_size),
 * including the choice with u = sampler_u(seed, step, row, 0).
 * Returns 0, or -1 for a NaN or +inf logit, no finite logit, an id out of
 * range, bad settings. */
int sampler_run(const struct sampler_input *in, const struct sampler_settings *s, struct trace *t,
                struct err *e);

/* The same chain in O(V): no sort of the vocabulary. Selections use a radix
 * descent on the float bits of z' (2048 buckets a level, counts and masses),
 * and only the bucket a threshold falls in is sorted. Fills every statistic,
 * the stage reports, the choice, and the first n_rows rows in rank order
 * (t->n_rows). Same kept set and same token for the same u as sampler_run.
 * in->logits or in->logits_f gives the row. This is the specification the GPU
 * kernels follow, pass for pass. */
int sampler_run_fast(const struct sampler_input *in, const struct sampler_settings *s,
                     struct trace *t, int n_rows, struct err *e);

/* After sampler_run_fast: the row of any token (its prob, cum, kept, final;
 * logit left 0 for the caller) and its rank (0 = the most likely), found in
 * O(V). Returns 0, or -1 for an id out of range. */
int sampler_fast_row(const struct trace *t, int id, struct trace_row *out, int *rank);

/* After sampler_run_fast: e^(z' - max) of token id (in range), the bits the
 * run used (fastexp.h), computed on the spot: the run stores them only
 * where a stage needed them. */
double trace_e(const struct trace *t, int id);
/* The same on a given path: trace_e takes the path of the run. */
VEC_DECLARE_ON(double, trace_e, (const struct trace *t, int id));

/* What stage c of the chain (below t->n_stages) saw: its p_max and its
 * cut, as stages[c] has them, or finished here with the pass that the fast
 * path left for whoever reads them (p_max_later). */
void trace_stage_values(const struct trace *t, int c, double *p_max, double *cut);

/* After sampler_run_fast: the final probability of token id (in range), as
 * its row has it: e^(z' - max) / (kept_mass * sum_exp_shifted) for a kept
 * token, 0 for a removed one. */
double trace_final(const struct trace *t, int id);

/* The value stage a z' left RULE_Z_LIMIT's range at (sampler_range_error):
 * a stage of the chain, or the start (logit + shift). */
#define SAMPLER_AT_START (-1)

/* The one message for a z' out of range, the same from every backend: at
 * `where` (SAMPLER_AT_START, STAGE_PENALTY or STAGE_TEMPERATURE) token id's
 * z' became z (its logit given: logit); for the temperature, zmax is the
 * largest |z'| of a token not masked before the division, which gives the
 * smallest temperature that works. Names the setting; returns -1. */
int sampler_range_error(const struct sampler_settings *s, int where, int id, double logit, double z,
                        double zmax, struct err *e);

/* The same for the temperature stage dividing by T (the setting's, or the
 * step's dynamic one). */
int sampler_t_range_error(const struct sampler_settings *s, double T, int id, double z, double zmax,
                          struct err *e);

/* The one message for a grammar stage that refused all of the kept tokens
 * it saw, from every path. Returns -1. */
int sampler_grammar_error(int kept, struct err *e);

/* Checks in's context against its vocabulary: a prompt no longer than the
 * context, every id in [0, vocab_size). Returns 0, or -1 naming the
 * offender ("context token 9 is not in the vocabulary (0..6)"). */
int sampler_check_context(const struct sampler_input *in, struct err *e);

/* The u of DESIGN.md: Philox4x32-10 keyed by seed, counter (step, row, draw, 0). */
double sampler_u(uint64_t seed, uint32_t step, uint32_t row, uint32_t draw);

/* The tokens that would repeat an n-gram of the context (Hugging Face's
 * no_repeat_ngram_size): each token that followed an earlier occurrence of
 * the context's last n - 1 tokens, prompt included, written into banned
 * (room for context_len ids) in ascending order, each once. Returns how
 * many. */
int sampler_ngram_banned(const struct sampler_input *in, int n, int *banned);

/* DRY (llama.cpp's dry sampler): a token that would extend a repeat of the
 * window's last tokens, and the longest such repeat. */
struct dry_hit {
    int id;
    int len; /* tokens of the repeat it would extend, at least the allowed length */
};

/* The tokens DRY penalizes for in's context under s, each once with its
 * longest repeat, into hits (room for context_len), by ascending id.
 * Returns how many, or -1 when out of memory. */
int sampler_dry_hits(const struct sampler_input *in, const struct sampler_settings *s,
                     struct dry_hit *hits);

/* The penalty DRY subtracts for a repeat of len tokens (llama.cpp's: the
 * exponent len - allowed, capped so that base^exponent stays a float). */
double sampler_dry_penalty(const struct sampler_settings *s, int len);

/* Checks the token ids of s's logit bias and bad words against in's
 * vocabulary. Returns 0, or -1 naming the first one out of it
 * ("logit-bias: token 9 is not in the vocabulary (0..6)"). */
int sampler_check_setting_ids(const struct sampler_input *in, const struct sampler_settings *s,
                              struct err *e);

/* The tokens the bad words remove for in's context (Hugging Face's
 * NoBadWordsLogitsProcessor): the last id of each sequence whose other ids
 * end the context, prompt included, and of every one-token sequence;
 * written into banned (room for BAD_WORDS_MAX) ascending, each once.
 * Returns how many. */
int sampler_bad_words_banned(const struct sampler_input *in, const struct bad_words *w,
                             int *banned);

/* Whether min-tokens masks in's end tokens this step: N is on and fewer
 * than N tokens follow the prompt. */
int sampler_min_tokens_on(const struct sampler_input *in, const struct sampler_settings *s);

/* A stage's own coin (XTC's), apart from every draw's u: Philox4x32-10
 * keyed by seed, counter (step, row, 0, 1 + st). */
double sampler_coin(uint64_t seed, uint32_t step, uint32_t row, enum stage st);

/* The draw rule, a pure function of the trace's final probabilities and u:
 * the first kept row, in rank order, whose cum_final exceeds u. When rounding
 * leaves every cum_final <= u, the last kept row with final > 0. Fills c
 * (sampled = 1) and returns the row index. */
int sampler_draw(const struct trace *t, double u, struct choice *c);

/* ---- the stages and the chain (chain.c), from sampling.def ---------------- */

/* A stage as sampling.def describes it. */
struct stage_info {
    const char *name;         /* "top-k" */
    const char *short_label;  /* "k" */
    int flags;                /* SF_* */
    int place[PRESET_CUSTOM]; /* its place in each preset's order (1 first), 0: not in it */
    const char *removed;      /* the word for a token it removed, NULL: its name */
    const char *cut;          /* its report's cut value in words (one %s), or NULL */
};

/* Every stage, indexed by enum stage. */
extern const struct stage_info STAGES[STAGE_COUNT];

/* Names: a stage's ("top-k"; "masked" for TRACE_MASKED), a preset's
 * ("lesson", "hf", "vllm", "llamacpp", "custom"); "engine"/"lesson";
 * "generated"/"all". */
const char *stage_name(enum stage s);
const char *preset_name(enum preset p);
const char *penalty_formula_name(enum penalty_formula f);
const char *penalty_scope_name(enum penalty_scope s);

/* Whether stage st of s changes anything: one of its activating settings
 * is not at its default (sampling.def), and for top-k also below V. */
int stage_active(const struct sampler_settings *s, enum stage st, int vocab_size);

/* Whether stage st, where it stands in the chain of s, removes tokens (a
 * truncating stage, or temperature 0), or rewrites z' (any other value
 * stage). Neither says whether it is active. */
int stage_cuts(const struct sampler_settings *s, enum stage st);
int stage_rewrites(const struct sampler_settings *s, enum stage st);

/* Parses an order: a preset name or stages separated by commas. */
int chain_parse(const char *value, struct chain *c, struct err *e);

/* Writes the chain as text: "lesson (penalty, temperature, top-k, top-p, min-p)". */
void chain_describe(const struct chain *c, char *buf, size_t n);

/* Writes the chain in short, stage by stage: "pen>T>k>p>min-p". */
void chain_short(const struct chain *c, char *buf, size_t n);

#endif
