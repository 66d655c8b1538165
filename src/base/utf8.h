/* utf8.h - the little UTF-8 the tables and the screen need: decoding one
 * code point, display width in terminal columns, and escaping for display.
 * Self-contained so that output does not depend on the process locale.
 */
#ifndef LOGITLAB_UTF8_H
#define LOGITLAB_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Decodes the code point at s (at most n bytes). Returns its length in bytes
 * (1 to 4), or 0 for an invalid or truncated sequence (then *cp = 0xFFFD). */
int utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Terminal columns of code point cp: 0 for combining marks, 2 for wide
 * East Asian characters and most emoji, 1 otherwise. */
int utf8_cp_width(uint32_t cp);

/* Terminal columns of the string s (invalid bytes count as 1). */
int utf8_width(const char *s);

/* Copies s into buf for display on one line: control characters become
 * \n, \t, \r or \xNN and invalid bytes \xNN. Returns the length. */
size_t utf8_escape(const char *s, char *buf, size_t n);

/* Writes s padded with spaces (or cut) to exactly cols columns into buf;
 * right-aligned when right is set. Returns the length. */
size_t utf8_pad(const char *s, int cols, int right, char *buf, size_t n);

/* Copies src into dst (size n, always terminated), cutting at a character
 * boundary when it does not fit. Returns the length copied. */
size_t utf8_copy(char *dst, size_t n, const char *src);

/* Appends src to the string in dst (size n) the same way. */
size_t utf8_append(char *dst, size_t n, const char *src);

#endif
