/* keys.h - the key syntax of --keys for the headless mode and the tests:
 * plain characters stand for themselves, and <Name> for the others:
 * <Space> <Enter> <Esc> <Left> <Right> <Up> <Down> <PgUp> <PgDn> <Home> <End>
 * <Tab> <BS> <lt> (a literal '<'), and <resize WxH>, which resizes the screen.
 */
#ifndef LOGITLAB_KEYS_H
#define LOGITLAB_KEYS_H

#include <stddef.h>

#include "base/err.h"

/* Keys: Unicode code points for text, and these above Unicode for the rest. */
enum key_code {
    AK_NONE = 0,
    AK_SPECIAL = 0x110000,
    AK_LEFT,
    AK_RIGHT,
    AK_UP,
    AK_DOWN,
    AK_PGUP,
    AK_PGDN,
    AK_HOME,
    AK_END,
    AK_ENTER,
    AK_ESC,
    AK_BACKSPACE,
    AK_TAB,
    AK_RESIZE,
};

struct key_event {
    int key; /* a key code (above); AK_RESIZE with w and h for a resize */
    int w, h;
};

/* Parses spec into at most max events. Returns the count, or -1 with a
 * message naming the bad part. */
int keys_parse(const char *spec, struct key_event *out, int max, struct err *e);

/* The name of key for a help screen: "Space", "Left", "q" (a character as
 * itself). */
void keys_name(int key, char *buf, size_t n);

/* Parses "WxH": decimal digits only, each side from 1 to 1000; a size out
 * of range is refused with the limits, never wrapped into range. */
int keys_parse_size(const char *text, int *w, int *h, struct err *e);

#endif
