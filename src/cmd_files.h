/* cmd_files.h - commands of the command line that read files but run no
 * lesson: `logitlab lessons`. Above every layer, beside main.c and cli.c.
 */
#ifndef LOGITLAB_CMD_FILES_H
#define LOGITLAB_CMD_FILES_H

#include "base/err.h"
#include "cli.h"

/* Prints "logitlab: ", what, msg with its control characters escaped
 * (utf8.h: a message quotes names from files and from the command line),
 * then tail, on standard error. */
void cmd_say(const char *what, const char *msg, const char *tail);

/* `logitlab lessons`: each lesson's id and title, a line each; a lesson
 * that cannot be read is named on standard error and counted in e. */
int cmd_lessons(const struct options *o, struct err *e);

#endif
