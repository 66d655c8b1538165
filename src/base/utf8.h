/* utf8.h - the little UTF-8 the tables and the screen need: decoding one
 * code point, display width in terminal columns, and escaping for display.
 * Self-contained so that output does not depend on the process locale.
 */
#ifndef LOGITLAB_UTF8_H
#define LOGITLAB_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Decodes the code point at s (at most n bytes). Returns its length in bytes
 * (1 to 4), or 0 for an invalid or truncated sequence (then *cp = 0xFFFD). */
int utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Encodes code point cp into out. Returns its length (1 to 4), or 0 when
 * cp is no character: a surrogate (U+D800..U+DFFF) or past U+10FFFF,
 * which no valid UTF-8 holds. */
int utf8_encode(uint32_t cp, char out[4]);

/* The length of s (len bytes) without the character its end cuts short: a
 * lead byte at the end whose continuation bytes are missing goes, with the
 * ones it has, as when a byte count cut the string there (vsnprintf).
 * Anything else stays as it is. */
size_t utf8_trim_cut(const char *s, size_t len);

/* Terminal columns of code point cp: 0 for combining marks, 2 for wide
 * East Asian characters and most emoji, 1 otherwise. */
int utf8_cp_width(uint32_t cp);

/* Terminal columns of the string s (invalid bytes count as 1). */
int utf8_width(const char *s);

/* Escaping for display. Every string that comes from a file or an argument
 * passes through here before it reaches a terminal or a text file, so that
 * no byte of it can drive the terminal: a control character is one of C0
 * (U+0000..U+001F), DEL (U+007F), C1 (U+0080..U+009F, which terminals
 * read as ESC sequences too: U+009B is CSI), or a bidirectional control
 * (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), which would
 * reorder the rest of a row. Its visible form is \n, \t or
 * \r for those three, else \xNN for each of its bytes ("\x1B", "\xC2\x9B",
 * "\xE2\x80\xAE" for U+202E);
 * a byte that is not part of valid UTF-8 is \xNN as well. Everything else,
 * the backslash included, stays as it is, so escaping twice changes
 * nothing. */

/* 1 if cp is a control character (C0, DEL, C1 or a bidirectional control). */
int utf8_cp_is_control(uint32_t cp);

#define UTF8_ESC_MAX        16 /* bytes of one character's escaped form, at most */
#define UTF8_ESC_KEEP_LINES 1  /* flag: \n and \t stay as they are (a stream of text) */

/* One character of s (len > 0 bytes) as it is displayed: its bytes, or
 * their escaped form, in out (not terminated); *outn gets their count.
 * Returns how many bytes of s it stands for (1 to 4). */
size_t utf8_escape_char(const char *s, size_t len, int flags, char out[UTF8_ESC_MAX], size_t *outn);

/* Copies s into buf for display on one line, escaped as above, cut at a
 * character when it does not fit. Returns the length. */
size_t utf8_escape(const char *s, char *buf, size_t n);

/* Writes len bytes of s to out escaped (flags: UTF8_ESC_KEEP_LINES or 0).
 * Returns 0, or -1 when the stream has an error. */
int utf8_write_escaped(FILE *out, const char *s, size_t len, int flags);

/* Writes s padded with spaces (or cut) to exactly cols columns into buf;
 * right-aligned when right is set. Returns the length. */
size_t utf8_pad(const char *s, int cols, int right, char *buf, size_t n);

/* Copies src into dst (size n, always terminated), cutting at a character
 * boundary when it does not fit. Returns the length copied. */
size_t utf8_copy(char *dst, size_t n, const char *src);

/* Appends src to the string in dst (size n) the same way. */
size_t utf8_append(char *dst, size_t n, const char *src);

#endif
