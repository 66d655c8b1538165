#include "data/keys.h"

#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

#define SIZE_MAX_SIDE 1000

/* The names of the keys that are not characters, as --keys writes them. */
static const struct {
    const char *name;
    int key;
} NAMES[] = {
    { "Space", ' ' },       { "Enter", AK_ENTER }, { "Esc", AK_ESC },   { "Left", AK_LEFT },
    { "Right", AK_RIGHT },  { "Up", AK_UP },       { "Down", AK_DOWN }, { "PgUp", AK_PGUP },
    { "PgDn", AK_PGDN },    { "Home", AK_HOME },   { "End", AK_END },   { "Tab", AK_TAB },
    { "BS", AK_BACKSPACE }, { "lt", '<' },
};

void keys_name(int key, char *buf, size_t n)
{
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (NAMES[i].key == key && key != '<') {
            snprintf(buf, n, "%s", NAMES[i].name);
            return;
        }
    if (key > 0x20 && key < 0x7F)
        snprintf(buf, n, "%c", key);
    else
        snprintf(buf, n, "U+%04X", (unsigned)key);
}

/* One side of a size: decimal digits only (no sign, no space), its value
 * capped just above the limit so that no count of digits can overflow. */
static const char *size_side(const char *p, int *out)
{
    const char *start = p;
    int v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        v = v > SIZE_MAX_SIDE ? v : v * 10 + (*p - '0');
    *out = v;
    return p == start ? NULL : p;
}

int keys_parse_size(const char *text, int *w, int *h, struct err *e)
{
    int x, y;
    const char *p = size_side(text, &x);
    if (p && *p == 'x')
        p = size_side(p + 1, &y);
    else
        p = NULL;
    if (!p || *p)
        return err_set(e, ERR_USAGE, "'%s' is not a size such as 80x24", text);
    if (x < 1 || y < 1 || x > SIZE_MAX_SIDE || y > SIZE_MAX_SIDE)
        return err_set(e, ERR_USAGE, "'%s': the width and the height are from 1 to %d", text,
                       SIZE_MAX_SIDE);
    *w = x;
    *h = y;
    return 0;
}

int keys_parse(const char *spec, struct key_event *out, int max, struct err *e)
{
    int n = 0;
    size_t len = strlen(spec);
    const char *p = spec;
    while (*p) {
        if (n == max)
            return err_set(e, ERR_USAGE, "more than %d keys", max);
        if (*p == '<') {
            const char *close = strchr(p, '>');
            if (!close)
                return err_set(e, ERR_USAGE, "'%.20s' has no closing '>'", p);
            char name[40];
            size_t nl = (size_t)(close - p - 1);
            if (nl >= sizeof name)
                return err_set(e, ERR_USAGE, "'%.20s' is not a key", p);
            memcpy(name, p + 1, nl);
            name[nl] = '\0';
            int found = 0;
            for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
                if (strcmp(name, NAMES[i].name) == 0) {
                    out[n++] = (struct key_event){ NAMES[i].key, 0, 0 };
                    found = 1;
                }
            if (!found && strncmp(name, "resize ", 7) == 0) {
                int w, h;
                if (keys_parse_size(name + 7, &w, &h, e) < 0)
                    return -1;
                out[n++] = (struct key_event){ AK_RESIZE, w, h };
                found = 1;
            }
            if (!found)
                return err_set(e, ERR_USAGE,
                               "<%s> is not a key (Space, Enter, Esc, Left, Right, Up, Down, PgUp, "
                               "PgDn, Home, End, Tab, BS, lt, resize WxH)",
                               name);
            p = close + 1;
            continue;
        }
        uint32_t cp;
        int l = utf8_decode(p, len - (size_t)(p - spec), &cp);
        if (l == 0)
            return err_set(e, ERR_USAGE, "the keys are not valid UTF-8");
        out[n++] = (struct key_event){ (int)cp, 0, 0 };
        p += l;
    }
    return n;
}
