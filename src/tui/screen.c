#include "tui/screen.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

#define EIGHTHS 8

int screen_init(struct screen *s, int w, int h, int utf8)
{
    memset(s, 0, sizeof *s);
    if (w < 1 || h < 1)
        return -1;
    s->cells = calloc((size_t)w * (size_t)h, sizeof *s->cells);
    if (!s->cells)
        return -1;
    s->w = w;
    s->h = h;
    s->utf8 = utf8;
    screen_clear(s);
    return 0;
}

void screen_free(struct screen *s)
{
    free(s->cells);
    memset(s, 0, sizeof *s);
}

void screen_clear(struct screen *s)
{
    for (int i = 0; i < s->w * s->h; i++)
        s->cells[i] = (struct cell){ ' ', COL_DEFAULT, 0 };
}

static struct cell *cell_at(struct screen *s, int x, int y)
{
    if (x < 0 || y < 0 || x >= s->w || y >= s->h)
        return NULL;
    return &s->cells[y * s->w + x];
}

const struct cell *screen_at(const struct screen *s, int x, int y)
{
    if (x < 0 || y < 0 || x >= s->w || y >= s->h)
        return NULL;
    return &s->cells[y * s->w + x];
}

void screen_put(struct screen *s, int x, int y, uint32_t cp, int color, int attr)
{
    struct cell *c = cell_at(s, x, y);
    if (c)
        *c = (struct cell){ cp, (uint8_t)color, (uint8_t)attr };
}

uint32_t screen_glyph(const struct screen *s, uint32_t utf8_cp, char ascii)
{
    return s->utf8 ? utf8_cp : (uint32_t)(unsigned char)ascii;
}

int screen_text(struct screen *s, int x, int y, int max, const char *text, int color, int attr)
{
    if (y < 0 || y >= s->h)
        return 0;
    int limit = max < 0 ? s->w - x : max;
    if (x + limit > s->w)
        limit = s->w - x;
    int used = 0;
    size_t n = strlen(text);
    while (n > 0 && used < limit) {
        uint32_t cp;
        int len = utf8_decode(text, n, &cp);
        if (len == 0) {
            cp = '?';
            len = 1;
        }
        if (cp < 0x20 || cp == 0x7F)
            cp = '?';
        if (!s->utf8 && cp >= 0x80)
            cp = '?';
        int w = utf8_cp_width(cp);
        if (w == 0) { /* combining marks are dropped: a cell holds one code point */
            text += len;
            n -= (size_t)len;
            continue;
        }
        if (used + w > limit)
            break;
        if (x + used >= 0) {
            screen_put(s, x + used, y, cp, color, attr);
            if (w == 2)
                screen_put(s, x + used + 1, y, 0, color, attr);
        }
        used += w;
        text += len;
        n -= (size_t)len;
    }
    return used;
}

int screen_printf(struct screen *s, int x, int y, int max, int color, int attr, const char *fmt,
                  ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return screen_text(s, x, y, max, buf, color, attr);
}

void screen_fill(struct screen *s, struct rect r, uint32_t cp, int color, int attr)
{
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            screen_put(s, x, y, cp, color, attr);
}

void screen_bar(struct screen *s, int x, int y, double len, int color, int attr)
{
    if (!(len > 0.0))
        return;
    int full = (int)len;
    for (int i = 0; i < full; i++)
        screen_put(s, x + i, y, screen_glyph(s, 0x2588, '#'), color, attr);
    int eighths = (int)((len - full) * EIGHTHS + 0.5);
    if (eighths >= EIGHTHS)
        screen_put(s, x + full, y, screen_glyph(s, 0x2588, '#'), color, attr);
    else if (eighths > 0)
        /* U+258F (one eighth) down to U+2589 (seven eighths). */
        screen_put(s, x + full, y,
                   s->utf8 ? (uint32_t)(0x2590 - eighths) : (eighths >= 4 ? '#' : '+'), color,
                   attr);
}

void screen_bar_left(struct screen *s, int x_end, int y, double len, int color, int attr)
{
    if (!(len > 0.0))
        return;
    int full = (int)len;
    for (int i = 1; i <= full; i++)
        screen_put(s, x_end - i, y, screen_glyph(s, 0x2588, '#'), color, attr);
    double frac = len - full;
    if (frac >= 0.5)
        screen_put(s, x_end - full - 1, y, screen_glyph(s, 0x2590, '+'), color, attr);
}

size_t screen_row_text(const struct screen *s, int y, char *buf, size_t n)
{
    size_t k = 0;
    if (n == 0)
        return 0;
    size_t last_nonblank = 0;
    for (int x = 0; x < s->w; x++) {
        uint32_t cp = s->cells[y * s->w + x].cp;
        if (cp == 0)
            continue; /* right half of a wide character */
        char tmp[4];
        int len;
        if (cp < 0x80) {
            tmp[0] = (char)cp;
            len = 1;
        } else if (cp < 0x800) {
            tmp[0] = (char)(0xC0 | (cp >> 6));
            tmp[1] = (char)(0x80 | (cp & 0x3F));
            len = 2;
        } else if (cp < 0x10000) {
            tmp[0] = (char)(0xE0 | (cp >> 12));
            tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
            tmp[2] = (char)(0x80 | (cp & 0x3F));
            len = 3;
        } else {
            tmp[0] = (char)(0xF0 | (cp >> 18));
            tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
            tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
            tmp[3] = (char)(0x80 | (cp & 0x3F));
            len = 4;
        }
        if (k + (size_t)len + 1 > n)
            break;
        memcpy(buf + k, tmp, (size_t)len);
        k += (size_t)len;
        if (cp != ' ')
            last_nonblank = k;
    }
    buf[last_nonblank] = '\0';
    return last_nonblank;
}

void screen_dump(const struct screen *s, FILE *out)
{
    size_t n = (size_t)s->w * 4 + 1;
    char *buf = malloc(n);
    if (!buf)
        return;
    for (int y = 0; y < s->h; y++) {
        screen_row_text(s, y, buf, n);
        fprintf(out, "%s\n", buf);
    }
    free(buf);
}
