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
    s->cut_digits = 0;
}

const struct cell *screen_at(const struct screen *s, int x, int y)
{
    if (x < 0 || y < 0 || x >= s->w || y >= s->h)
        return NULL;
    return &s->cells[y * s->w + x];
}

/* Each call of the screen is its context's call with the whole screen as
 * the clip: one copy of the drawing, the same cells either way. */

static struct rect whole(const struct screen *s)
{
    return (struct rect){ 0, 0, s->w, s->h };
}

static struct rect intersect(struct rect a, struct rect b)
{
    int x0 = a.x > b.x ? a.x : b.x, y0 = a.y > b.y ? a.y : b.y;
    int x1 = a.x + a.w < b.x + b.w ? a.x + a.w : b.x + b.w;
    int y1 = a.y + a.h < b.y + b.h ? a.y + a.h : b.y + b.h;
    return (struct rect){ x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0 };
}

/* Sets the cell at (x, y), in screen coordinates, if it lies in clip
 * (which lies in the screen). */
static void put_in(struct screen *s, struct rect clip, int x, int y, uint32_t cp, int color,
                   int attr)
{
    if (x < clip.x || y < clip.y || x >= clip.x + clip.w || y >= clip.y + clip.h)
        return;
    s->cells[y * s->w + x] = (struct cell){ cp, (uint8_t)color, (uint8_t)attr };
}

/* Counts a write cut at (x, y) whose rest (n bytes) holds a digit. */
static void note_cut(struct screen *s, int x, int y, const char *rest, size_t n)
{
    size_t i = 0;
    while (i < n && !(rest[i] >= '0' && rest[i] <= '9'))
        i++;
    if (i == n)
        return;
    if (s->cut_digits++ == 0) {
        s->cut_x = x;
        s->cut_y = y;
    }
}

static int text_in(struct screen *s, struct rect clip, int x, int y, int max, const char *text,
                   int color, int attr)
{
    if (y < clip.y || y >= clip.y + clip.h)
        return 0;
    int right = clip.x + clip.w;
    int limit = max < 0 ? right - x : max;
    if (x + limit > right)
        limit = right - x;
    int used = 0;
    size_t n = strlen(text);
    while (n > 0 && used < limit) {
        uint32_t cp;
        int len = utf8_decode(text, n, &cp);
        if (len == 0) {
            cp = '?';
            len = 1;
        }
        if (utf8_cp_is_control(cp))
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
        if (x + used >= clip.x) {
            put_in(s, clip, x + used, y, cp, color, attr);
            if (w == 2)
                put_in(s, clip, x + used + 1, y, 0, color, attr);
        }
        used += w;
        text += len;
        n -= (size_t)len;
    }
    note_cut(s, x + used, y, text, n);
    return used;
}

static void fill_in(struct screen *s, struct rect clip, struct rect r, uint32_t cp, int color,
                    int attr)
{
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++)
            put_in(s, clip, x, y, cp, color, attr);
}

static void bar_in(struct screen *s, struct rect clip, int x, int y, double len, int color,
                   int attr)
{
    if (!(len > 0.0))
        return;
    int full = (int)len;
    for (int i = 0; i < full; i++)
        put_in(s, clip, x + i, y, screen_glyph(s, 0x2588, '#'), color, attr);
    int eighths = (int)((len - full) * EIGHTHS + 0.5);
    if (eighths >= EIGHTHS)
        put_in(s, clip, x + full, y, screen_glyph(s, 0x2588, '#'), color, attr);
    else if (eighths > 0)
        /* U+258F (one eighth) down to U+2589 (seven eighths). */
        put_in(s, clip, x + full, y,
               s->utf8 ? (uint32_t)(0x2590 - eighths) : (eighths >= 4 ? '#' : '+'), color, attr);
}

static void bar_left_in(struct screen *s, struct rect clip, int x_end, int y, double len, int color,
                        int attr)
{
    if (!(len > 0.0))
        return;
    int full = (int)len;
    for (int i = 1; i <= full; i++)
        put_in(s, clip, x_end - i, y, screen_glyph(s, 0x2588, '#'), color, attr);
    double frac = len - full;
    if (frac >= 0.5)
        put_in(s, clip, x_end - full - 1, y, screen_glyph(s, 0x2590, '+'), color, attr);
}

void screen_put(struct screen *s, int x, int y, uint32_t cp, int color, int attr)
{
    put_in(s, whole(s), x, y, cp, color, attr);
}

uint32_t screen_glyph(const struct screen *s, uint32_t utf8_cp, char ascii)
{
    return s->utf8 ? utf8_cp : (uint32_t)(unsigned char)ascii;
}

int screen_text(struct screen *s, int x, int y, int max, const char *text, int color, int attr)
{
    return text_in(s, whole(s), x, y, max, text, color, attr);
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
    fill_in(s, whole(s), r, cp, color, attr);
}

void screen_bar(struct screen *s, int x, int y, double len, int color, int attr)
{
    bar_in(s, whole(s), x, y, len, color, attr);
}

void screen_bar_left(struct screen *s, int x_end, int y, double len, int color, int attr)
{
    bar_left_in(s, whole(s), x_end, y, len, color, attr);
}

/* ---- a clipped drawing context ----------------------------------------------------- */

struct screen_ctx screen_ctx(struct screen *s, struct rect r)
{
    return (struct screen_ctx){ s, r, intersect(r, whole(s)) };
}

struct screen_ctx ctx_sub(const struct screen_ctx *c, struct rect r)
{
    struct rect at = { c->r.x + r.x, c->r.y + r.y, r.w, r.h };
    return (struct screen_ctx){ c->s, at, intersect(at, c->clip) };
}

int ctx_text(const struct screen_ctx *c, int x, int y, int max, const char *text, int color,
             int attr)
{
    /* max < 0 runs to the rectangle's edge; the clip cuts it where the
     * rectangle leaves the screen. */
    int limit = max < 0 ? c->r.w - x : max;
    return text_in(c->s, c->clip, c->r.x + x, c->r.y + y, limit < 0 ? 0 : limit, text, color, attr);
}

int ctx_printf(const struct screen_ctx *c, int x, int y, int max, int color, int attr,
               const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return ctx_text(c, x, y, max, buf, color, attr);
}

void ctx_put(const struct screen_ctx *c, int x, int y, uint32_t cp, int color, int attr)
{
    put_in(c->s, c->clip, c->r.x + x, c->r.y + y, cp, color, attr);
}

void ctx_fill(const struct screen_ctx *c, struct rect r, uint32_t cp, int color, int attr)
{
    fill_in(c->s, c->clip, (struct rect){ c->r.x + r.x, c->r.y + r.y, r.w, r.h }, cp, color, attr);
}

void ctx_bar(const struct screen_ctx *c, int x, int y, double len, int color, int attr)
{
    bar_in(c->s, c->clip, c->r.x + x, c->r.y + y, len, color, attr);
}

void ctx_bar_left(const struct screen_ctx *c, int x_end, int y, double len, int color, int attr)
{
    bar_left_in(c->s, c->clip, c->r.x + x_end, c->r.y + y, len, color, attr);
}

uint32_t ctx_glyph(const struct screen_ctx *c, uint32_t utf8_cp, char ascii)
{
    return screen_glyph(c->s, utf8_cp, ascii);
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
