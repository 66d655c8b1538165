/* ini_file.h - reading an INI file with inih, strictly and with line numbers.
 *
 * inih calls a handler per "name = value" line (and again for each indented
 * continuation line) but does not say which line that is, splits lines
 * longer than its 200-byte buffer, and accepts unknown or empty sections in
 * silence. This reader hands inih its own line reader so that every entry
 * and every section header carries its line, refuses long lines, checks
 * UTF-8, refuses control characters in values (C0 but the tab, DEL, C1:
 * "path:line: control character U+001B in the value of 'title'"), and asks
 * the caller's rules which sections and keys exist. What it
 * returns is the list of entries, for the caller to interpret with messages
 * of the form "path:line: message".
 */
#ifndef LOGITLAB_INI_FILE_H
#define LOGITLAB_INI_FILE_H

#include <stddef.h>

#include "base/err.h"

#define INI_NAME_MAX 64
#define INI_LINE_MAX 197 /* inih's 200-byte buffer less \r, \n and \0 */

struct ini_entry {
    char section[INI_NAME_MAX];
    char name[INI_NAME_MAX];
    char *value;
    int line;
    int cont; /* an indented continuation of the entry before it */
};

struct ini_section {
    char name[INI_NAME_MAX];
    int line;
};

struct ini_file {
    char *path;
    int n;
    struct ini_entry *entries;
    int n_sections;
    struct ini_section *sections; /* every header, in file order */
};

struct ini_rules {
    size_t max_bytes;                                     /* a larger file is refused */
    int (*section_ok)(const char *name, size_t len);      /* a known section */
    const char *sections_hint;                            /* "lesson, vocab, ..." for messages */
    int (*key_ok)(const char *section, const char *name); /* a known key of that section */
};

/* Whether name (len bytes) is prefix followed by a number from 1 up, with no
 * leading zero: "step.1", "step.12", not "step.0" or "step.x". */
int ini_numbered_section(const char *name, size_t len, const char *prefix);

/* Reads the file at path (or, when text is not NULL, that text, with path
 * only for messages) and checks it against the rules. Returns 0, or -1 with
 * "path:line: message" (or "path: message"); nothing to free on failure. */
int ini_file_load(struct ini_file *f, const char *path, const char *text, const struct ini_rules *r,
                  struct err *e);
void ini_file_free(struct ini_file *f);

/* The line of the first [name] header, or 0. */
int ini_section_line(const struct ini_file *f, const char *name);

/* "path:line: " in front of a message (line 0: "path: "). Returns -1. The
 * message is formatted before e is written, so e->msg may be an argument. */
int ini_error(const struct ini_file *f, int line, struct err *e, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
