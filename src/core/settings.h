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

#define STOP_MAX 8  /* stop strings at once */
#define STOP_LEN 64 /* bytes in one stop string */

struct settings {
    struct sampler_settings sampler;
    int max_tokens; /* stop after this many generated tokens; 0 = no limit */
    int n_stop;
    char stop[STOP_MAX][STOP_LEN + 1]; /* stop strings, matched across token boundaries */
};

struct setting_info {
    const char *name; /* option and key name */
    const char *arg;  /* what the value looks like, for help texts */
    const char *help; /* one line */
};

/* The settings in the order help texts list them, ended by a NULL name. */
extern const struct setting_info SETTINGS_INFO[];

/* Neutral settings: every stage off, lesson order, seed 0, no stop rule. */
void settings_defaults(struct settings *s);

/* 1 if name is a setting, else 0. */
int settings_known(const char *name);

/* Parses value for the setting name and stores it in s. Returns 0, or -1 with
 * a message about the value that does not repeat the name ("'abc' is not a
 * number", "1.5 is out of range (0, 1]"): the caller puts the option, key or
 * file:line in front. s is unchanged on error. Stop strings accept the
 * escapes \n \t \\ \" and may be written in double quotes; an empty stop
 * value clears the stop strings. */
int settings_set(struct settings *s, const char *name, const char *value, struct err *e);

/* Parses an order: a preset name or stages separated by commas. */
int settings_parse_order(const char *value, struct chain *c, struct err *e);

/* Writes the chain as text: "lesson (penalty, temperature, top-k, top-p, min-p)". */
void chain_describe(const struct chain *c, char *buf, size_t n);

/* Writes the value of setting name as it would be typed back ("0.5", "off"). */
void settings_value(const struct settings *s, const char *name, char *buf, size_t n);

/* Parses "1 2 3" (or "1, 2, 3") into at most max ints in [0, limit).
 * Returns the count, or -1 with a message. */
int parse_int_list(const char *text, int *out, int max, int limit, struct err *e);

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
