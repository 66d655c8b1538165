/* lesson_load.h - what the files of the lesson reader share, and nothing
 * outside them includes: the loader that holds a file's entries and its
 * first error, and the readers of values that every section uses.
 *
 * lesson.c reads the file and interprets it in order; lesson_sections.c
 * reads [lesson], [vocab], [model] and [head]; lesson_step.c the steps.
 * Every reader records its error with ld_error and returns -1; running out
 * of memory sets oom instead.
 */
#ifndef LOGITLAB_LESSON_LOAD_H
#define LOGITLAB_LESSON_LOAD_H

#include <limits.h>
#include <stddef.h>

#include "data/ini_file.h"
#include "data/lesson.h"

#define DIGITS_DEFAULT 4
#define DIGITS_MAX     10

/* The entries of the file and what interpreting them found. */
struct loader {
    const char *path;
    int err_line; /* first error found, 0 if none; NO_LINE for a whole-file error */
    struct err err;
    /* The line of each section header, 0 when the file has none. */
    int lesson_line, vocab_line, settings_line, head_line, model_line;
    int step_line[LESSON_MAX_STEPS + 1];
    int oom;
    struct ini_entry *entries;
    int n;
};

#define NO_LINE INT_MAX /* an error about the file as a whole, such as a missing section */

/* Records an error at line, unless one on an earlier line is recorded. */
void ld_error(struct loader *ld, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int ld_all_digits(const char *s);

/* The value of a key as one string: continuation lines joined with a space.
 * sep joins repeated (non-continuation) entries; NULL means a repeat is an
 * error. Returns 1 with *out (malloc'ed), 0 with *out NULL when the key is
 * absent, or -1. */
int ld_collect(struct loader *ld, const char *section, const char *name, const char *sep,
               char **out, int *line);

/* An integer key within lo..hi into *out; *out stays as it is when the key
 * is absent. Returns the key's line, 0 when it is absent, or -1. */
int ld_collect_int(struct loader *ld, const char *section, const char *name, int lo, int hi,
                   int *out);

/* Splits a list of numbers ("-3.2 0.8, 1.2"), checks each, stores the first
 * max of them in out and returns how many there were. */
int ld_parse_numbers(struct loader *ld, int line, const char *what, const char *text, double *out,
                     int max);

/* Strips one pair of surrounding double quotes and processes escapes. */
int ld_unquote(struct loader *ld, int line, const char *value, char *out, size_t n);

/* A list of token ids ("prompt", "context") into *out (malloc'ed) and *len. */
int ld_read_id_list(struct loader *ld, const struct lesson *L, int line, const char *what,
                    const char *text, int **out, int *len);

/* Collects the settings of a section into a list as written and into a
 * patch parsed, checking each against the settings that precede it
 * (lesson-wide ones first). */
int ld_read_settings(struct loader *ld, const char *section, struct settings *check,
                     struct lesson_setting **out, int *count, struct settings_patch *patch);

/* Checks text, settings as typed at the ':' prompt separated by '|'
 * ("temperature 0.8 | seed 2"), against base: every name a setting, every
 * value in range. what names the key in the message ("try: ..."). */
int ld_check_setting_list(struct loader *ld, int line, const char *what,
                          const struct settings *base, const char *text);

/* The [lesson] section's requests (lesson_step.c), each checked against
 * the lesson-wide settings. */
int ld_read_requests(struct loader *ld, struct lesson *L, const struct settings *lesson_set);

/* The sections before the steps (lesson_sections.c). */
int ld_read_lesson_section(struct loader *ld, struct lesson *L);
int ld_read_vocab(struct loader *ld, struct lesson *L);
int ld_read_model(struct loader *ld, struct lesson *L);
int ld_read_head(struct loader *ld, struct lesson *L);

/* Every [step.N], checked against the lesson-wide settings (lesson_step.c). */
int ld_read_steps(struct loader *ld, struct lesson *L, const struct settings *lesson_set);

#endif
