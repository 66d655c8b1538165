/* keys.h - the key syntax of --keys for the headless mode and the tests:
 * plain characters stand for themselves, and <Name> for the others:
 * <Space> <Enter> <Esc> <Left> <Right> <Up> <Down> <PgUp> <PgDn> <Home> <End>
 * <Tab> <BS> <lt> (a literal '<'), and <resize WxH>, which resizes the screen.
 */
#ifndef LOGITLAB_KEYS_H
#define LOGITLAB_KEYS_H

#include "err.h"

struct key_event {
    int key; /* an app key (app.h); AK_RESIZE with w and h for a resize */
    int w, h;
};

/* Parses spec into at most max events. Returns the count, or -1 with a
 * message naming the bad part. */
int keys_parse(const char *spec, struct key_event *out, int max, struct err *e);

/* Parses "WxH" (both at least 1 and at most 1000). */
int keys_parse_size(const char *text, int *w, int *h, struct err *e);

#endif
