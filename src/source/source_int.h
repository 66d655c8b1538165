/* source_int.h - what the kinds of logit source share with source.c: their
 * operation tables, in the order source.c tries them. A new kind is a file
 * with its table, a line here and a line in source.c's list of kinds. */
#ifndef LOGITLAB_SOURCE_INT_H
#define LOGITLAB_SOURCE_INT_H

#include "source/source.h"

extern const struct source_ops SOURCE_GGUF;     /* kind_gguf.c */
extern const struct source_ops SOURCE_SCENARIO; /* kind_scenario.c */
extern const struct source_ops SOURCE_CAPTURED; /* kind_captured.c */
extern const struct source_ops SOURCE_HEAD;     /* kind_head.c */
extern const struct source_ops SOURCE_TABLE;    /* kind_table.c */

#endif
