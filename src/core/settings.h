/* settings.h - every setting a user can change, by name, with one parser.
 *
 * The same names are command-line options (--top-p 0.9), keys in a lesson
 * step (top-p = 0.9) and `:` commands in the terminal UI (:top-p 0.9), so
 * one function parses all three and they cannot drift apart.
 */
#ifndef LOGITLAB_SETTINGS_H
#define LOGITLAB_SETTINGS_H

#include <stddef.h>

#include "base/err.h"
#include "core/sampler.h"

#define STOP_MAX         8    /* stop strings at once */
#define STOP_LEN         64   /* bytes in one stop string */
#define GRAMMAR_TEXT_MAX 8192 /* bytes of a grammar, schema, regex or choice list */

/* What the shown text does with a stop string that matched (stop-text). */
enum stop_text {
    STOP_TEXT_STRIP, /* the text ends where it begins, as the engines return it */
    STOP_TEXT_KEEP   /* the text ends after it: vLLM's include_stop_str_in_output */
};

struct settings {
    struct sampler_settings sampler;
    int max_tokens; /* stop after this many generated tokens; 0 = no limit */
    int n_stop;
    char stop[STOP_MAX][STOP_LEN + 1]; /* stop strings, matched across token boundaries */
    int stop_text;                     /* an enum stop_text */
    /* The text of the grammar setting that is on (sampler.grammar, .regex,
     * ...: one at a time), "" when none is. */
    char grammar_text[GRAMMAR_TEXT_MAX + 1];
};

/* What a setting's value is (sampling.def's kind). */
enum setting_kind {
    SK_DOUBLE,  /* a number in [lo, hi] */
    SK_INT,     /* a whole number in [lo, hi] */
    SK_ENUM,    /* one of the names of arg ("engine|lesson"), stored as its index */
    SK_SEED,    /* a whole number 0 to 2^64-1 */
    SK_ORDER,   /* a preset or a list of stages (struct chain) */
    SK_STOP,    /* the stop strings (struct settings) */
    SK_BIAS,    /* token ids with a number each (struct logit_bias) */
    SK_WORDS,   /* sequences of token ids (struct bad_words) */
    SK_GRAMMAR, /* a constraint: its front end in the member, its text in struct settings */
};

/* Where a setting is stored: struct sampler_settings, or struct settings
 * (the loop's stop rules). */
enum setting_where { SW_SAMPLER, SW_LOOP };

#define STAGE_NONE (-1) /* the stage of a setting that belongs to none */

/* Flags of a setting; sampling.def says what each means. */
enum {
    SET_OFF_WORD = 1,
    SET_SHOWS_OFF = 2,
    SET_LO_OPEN = 4,
    SET_OFF_AT_V = 8,
    SET_ACTIVATES = 16,
    SET_MODIFIER = 32,
    SET_SUMMARY = 64,
    SET_STATUS_ALWAYS = 128,
    SET_LINE2 = 256,
};

/* A setting as sampling.def describes it. */
struct setting_info {
    const char *name; /* option and key name */
    enum setting_kind kind;
    enum setting_where where;
    int stage; /* enum stage, or STAGE_NONE */
    int flags; /* SET_* */
    double lo, hi, def;
    const char *arg;        /* what the value looks like, for help texts */
    const char *range;      /* the range in words ("in (0, 1]"); ENUM: the noun */
    const char *label;      /* its name in prose */
    const char *status;     /* its label on the status line; NULL: not there */
    const char *status_off; /* the status line's word for it at def, or NULL */
    const char *ladder;     /* the values the keys step through, or NULL */
    const char *help;       /* one line */
    size_t offset;          /* of its member, in the struct of where */
    size_t size;            /* of its member */
};

/* The settings in the order of sampling.def, ended by a NULL name. */
extern const struct setting_info SETTINGS_INFO[];

/* The setting called name, or NULL. */
const struct setting_info *setting_find(const char *name);

/* The first setting that turns stage on (sampling.def's order): the one
 * its name goes with ("top-k 40", "penalty 1.2"), or NULL. */
const struct setting_info *setting_of_stage(int stage);

/* A numeric setting's value in s (DOUBLE, INT, ENUM; 0 for the others). */
double setting_number(const struct setting_info *i, const struct sampler_settings *s);

/* A numeric setting's value in s, wherever it is stored (0 for the others). */
double setting_get(const struct settings *s, const struct setting_info *i);

/* Whether the setting is away from its default in s: on (for top-k, also
 * below vocab_size). Loop settings are never on here. */
int setting_is_on(const struct setting_info *i, const struct sampler_settings *s, int vocab_size);

/* Writes the n-th name of an ENUM setting's list into buf ("" if none). */
void setting_enum_name(const struct setting_info *i, int n, char *buf, size_t size);

/* The grammar setting that is on in s (one at a time: regex, choice,
 * json-schema, grammar), or NULL; its hi is the front end. */
const struct setting_info *settings_grammar_on(const struct settings *s);

/* Neutral settings: every stage off, lesson order, seed 0, no stop rule. */
void settings_defaults(struct settings *s);

/* 1 if name is a setting, else 0. */
int settings_known(const char *name);

/* Parses value for the setting name and stores it in s. Returns 0, or -1 with
 * a message about the value that does not repeat the name ("'abc' is not a
 * number", "1.5 is out of range (0, 1]"): the caller puts the option, key or
 * file:line in front. s is unchanged on error. Stop strings accept the
 * escapes \n \t \\ \" and may be written in double quotes; an empty stop
 * value clears the stop strings. A grammar setting's text is compiled to
 * check it (the message names the place: "regex at byte 5: ...") and turns
 * any other grammar setting off; "off" or "" turns them all off. */
int settings_set(struct settings *s, const char *name, const char *value, struct err *e);

/* Settings given in one place (a lesson, a step, the command line, the
 * keys), parsed once where they were typed and applied at each recompute:
 * each value where struct settings keeps it, and a bit per SETTINGS_INFO
 * row that says it was given. A later value of a setting replaces an
 * earlier one; stop strings add up, and an empty stop clears them, those
 * under the patch too when it is applied. Zeroed by settings_patch_clear. */
struct settings_patch {
    struct settings val;
    uint64_t given;  /* bit i: SETTINGS_INFO[i] */
    int stop_clears; /* an empty stop was given: the stop strings under it go */
};

void settings_patch_clear(struct settings_patch *p);

/* Parses value for the setting name into p, as settings_set does (the same
 * messages). p is unchanged on error. */
int settings_patch_set(struct settings_patch *p, const char *name, const char *value,
                       struct err *e);

/* Puts p's settings over s. Returns 0, or -1 when s's stop strings and p's
 * are more than STOP_MAX together: the first STOP_MAX are kept then, and
 * every other setting is applied. */
int settings_patch_apply(struct settings *s, const struct settings_patch *p, struct err *e);

/* Writes the value of setting name as it would be typed back ("0.5", "off";
 * an order's preset name, "2 strings" for the stop strings). */
void settings_value(const struct settings *s, const char *name, char *buf, size_t n);
void setting_value(const struct settings *s, const struct setting_info *i, char *buf, size_t n);

/* A list of settings as lessons, requests and try lines write them,
 * "name value | name value", at most SETTINGS_LIST_MAX - 1 bytes; "\|"
 * is a '|' inside a value (a regex's or a choice list's). Returns the next
 * part of the list at *cursor, cut out in place with its "\|" made '|',
 * and moves *cursor past it; NULL when the list is done. */
#define SETTINGS_LIST_MAX 1024
char *settings_list_next(char **cursor);

/* Parses "1 2 3" (or "1, 2, 3") into at most max ints in [0, limit).
 * Returns the count, or -1 with a message. */
int parse_int_list(const char *text, int *out, int max, int limit, struct err *e);

/* ---- the list settings (settings_list.c) ---- */

/* Parses a logit bias, "ID:BIAS" items separated by commas or spaces
 * ("2:-inf, 5:1.5"), BIAS a number in [i->lo, i->hi] or -inf, each id once,
 * at most LOGIT_BIAS_MAX; "off" or nothing clears it. -1 with a message. */
int parse_logit_bias(const struct setting_info *i, const char *text, struct logit_bias *out,
                     struct err *e);

/* Parses bad words, sequences separated by ';' of token ids separated by
 * spaces or commas ("6; 2 5"), at most BAD_WORDS_MAX of 1 to BAD_WORD_LEN
 * ids; "off" or nothing clears them. -1 with a message. */
int parse_bad_words(const char *text, struct bad_words *out, struct err *e);

/* The two as they would be typed back ("2:-inf,5:1.5", "6; 2 5"; "off"
 * when empty), cut short with "..." where buf is too small. */
void logit_bias_text(const struct logit_bias *b, char *buf, size_t n);
void bad_words_text(const struct bad_words *w, char *buf, size_t n);

/* A list setting as a direct caller may have filled it: counts in range,
 * ids not negative, biases as parse_logit_bias takes them. */
int check_list_setting(const struct setting_info *i, const void *member, struct err *e);

/* Parses a seed, a whole number 0 to 2^64-1; -1 with a message otherwise. */
int parse_seed(const char *text, uint64_t *out, struct err *e);

/* Parses a finite number the whole of text; -1 with a message otherwise. */
int parse_double(const char *text, double *out, struct err *e);

/* Parses a decimal integer in [lo, hi]; -1 with a message otherwise. */
int parse_int(const char *text, int lo, int hi, int *out, struct err *e);

/* Copies text into out (size n) turning \n \t \\ \" into their bytes.
 * Returns the length, or -1 when it does not fit or has an unknown escape. */
int unescape(const char *text, char *out, size_t n, struct err *e);

#endif
