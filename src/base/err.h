/* err.h - one error value threaded through every function that can fail.
 *
 * Functions that can fail return 0 on success or -1 on failure and fill a
 * struct err that the caller owns. Only main() prints an error and exits,
 * after the terminal is restored. Messages are one line, without a trailing
 * newline, and name the culprit: "lessons/x.ini:12: unknown key ...".
 */
#ifndef LOGITLAB_ERR_H
#define LOGITLAB_ERR_H

#include <stdarg.h>

enum err_code {
    ERR_NONE = 0,
    ERR_USAGE = 2,  /* bad option, bad lesson, bad input file: exit status 2 */
    ERR_SYSTEM = 3, /* out of memory, I/O failure: exit status 3 */
};

/* Room for a path as long as Linux allows (PATH_MAX, 4096 bytes) and the
 * reason after it. A longer message loses its middle (see err_set). */
#define ERR_MSG_MAX (4096 + 1024)

struct err {
    int code;
    char msg[ERR_MSG_MAX];
};

/* Sets code and a printf-style message. Returns -1 so that callers can
 * write `return err_set(e, ERR_USAGE, "...")`. e may be NULL. A message
 * longer than the buffer keeps its beginning and its end with "..." between
 * them (cut between UTF-8 characters): the culprit named first and the
 * reason given last both survive a very long path in the middle. */
int err_set(struct err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Puts "prefix: " in front of the message already in e, shortened in its
 * middle as err_set does when the two do not fit. */
void err_prefix(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears e. */
void err_clear(struct err *e);

#endif
