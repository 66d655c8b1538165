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

#include <stdint.h>

#include "base/err.h"

enum stage {
    STAGE_PENALTY,     /* repetition, presence and frequency penalties */
    STAGE_TEMPERATURE, /* z / T; T = 0 is greedy */
    STAGE_TOP_K,
    STAGE_TOP_P,
    STAGE_MIN_P,
    STAGE_COUNT
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

/* All the settings of one sampling step. Defaults (sampler_defaults) turn
 * every stage off: T 1, k 0, p 1, min-p 0, penalties neutral. */
struct sampler_settings {
    double temperature;        /* >= 0; 0 = greedy */
    int top_k;                 /* >= 0; 0 or >= V = off */
    double top_p;              /* (0, 1]; 1 = off */
    double min_p;              /* [0, 1]; 0 = off */
    double repetition_penalty; /* > 0; 1 = off */
    enum penalty_formula penalty_formula;
    enum penalty_scope penalty_scope;
    int penalty_last_n;       /* >= 0; only the last n tokens of the scope count; 0 = all of it */
    double presence_penalty;  /* subtracted once from every seen token */
    double frequency_penalty; /* subtracted once per occurrence */
    double shift;             /* added to every logit before the chain (shows invariance) */
    uint64_t seed;
    struct chain chain;
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
};

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

struct zid; /* sampler_rules.h */

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
    /* Scratch space of sampler_run, allocated by trace_init; not part of the result. */
    double *work_z;
    int *work_count;
    struct zid *work_order;
    struct trace_row *work_rows;
    /* The fast path's per-token state, kept after a run so that any token's
     * row can be looked up (sampler_fast_row); allocated on first use. */
    double *fz;     /* final z' of every token */
    double *fe;     /* e^(z' - max) of every token */
    uint8_t *fmark; /* 0 kept, else 1 + the stage that removed it (TRACE_MASKED + 1: masked) */
    uint32_t *fkey; /* order-preserving keys, for radix selection */
    int *fcand;     /* candidate lists */
    int *fcount;    /* penalty counts, zero between runs */
    double *fblock; /* the largest z' of each block of tokens */
    int fmax_valid; /* the arrays above hold the last fast run */
};

/* Fills s with neutral settings, seed 1 and the lesson order. */
void sampler_defaults(struct sampler_settings *s);

/* Sets c to a preset order (not PRESET_CUSTOM). */
void chain_preset(struct chain *c, enum preset p);

/* Whether stage st is in the order c. */
int chain_has(const struct chain *c, enum stage st);

/* Checks the ranges of DESIGN.md section 2. Returns 0, or -1 with a message
 * naming the setting ("top-p 1.5 is out of range (0, 1]"). */
int sampler_check(const struct sampler_settings *s, struct err *e);

/* Allocates a trace for vocab_size tokens. Returns 0 or -1 (out of memory). */
int trace_init(struct trace *t, int vocab_size, struct err *e);
void trace_free(struct trace *t);

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

/* After sampler_run_fast: the final probability of token id (in range), as
 * its row has it: e^(z' - max) / (kept_mass * sum_exp_shifted) for a kept
 * token, 0 for a removed one. */
double trace_final(const struct trace *t, int id);

/* Checks in's context against its vocabulary: a prompt no longer than the
 * context, every id in [0, vocab_size). Returns 0, or -1 naming the
 * offender ("context token 9 is not in the vocabulary (0..6)"). */
int sampler_check_context(const struct sampler_input *in, struct err *e);

/* The u of DESIGN.md: Philox4x32-10 keyed by seed, counter (step, row, draw, 0). */
double sampler_u(uint64_t seed, uint32_t step, uint32_t row, uint32_t draw);

/* The draw rule, a pure function of the trace's final probabilities and u:
 * the first kept row, in rank order, whose cum_final exceeds u. When rounding
 * leaves every cum_final <= u, the last kept row with final > 0. Fills c
 * (sampled = 1) and returns the row index. */
int sampler_draw(const struct trace *t, double u, struct choice *c);

/* Names: "penalty", "temperature", "top-k", "top-p", "min-p";
 * "lesson", "hf", "vllm", "llamacpp", "custom"; "engine"/"lesson";
 * "generated"/"all". */
const char *stage_name(enum stage s);
const char *preset_name(enum preset p);
const char *penalty_formula_name(enum penalty_formula f);
const char *penalty_scope_name(enum penalty_scope s);

/* Whether stage st of s changes anything. */
int stage_active(const struct sampler_settings *s, enum stage st, int vocab_size);

#endif
