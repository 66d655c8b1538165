#include "base/utf8.h"

#include <stdio.h>
#include <string.h>

int utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    *cp = 0xFFFD;
    if (n == 0)
        return 0;
    unsigned c = u[0];
    int len;
    uint32_t v;
    if (c < 0x80)
        return (*cp = c), 1;
    else if ((c >> 5) == 6)
        len = 2, v = c & 0x1F;
    else if ((c >> 4) == 14)
        len = 3, v = c & 0x0F;
    else if ((c >> 3) == 30)
        len = 4, v = c & 0x07;
    else
        return 0;
    if ((size_t)len > n)
        return 0;
    for (int i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (u[i] & 0x3F);
    }
    static const uint32_t MIN[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (v < MIN[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

int utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return 0;
    int n = cp < 0x10000 ? 3 : 4;
    for (int i = n - 1; i > 0; i--, cp >>= 6)
        out[i] = (char)(0x80 | (cp & 0x3F));
    out[0] = (char)((n == 3 ? 0xE0 : 0xF0) | cp);
    return n;
}

size_t utf8_trim_cut(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t lead = len;
    /* The last byte that is not a continuation, at most 3 back: a
     * character is at most 4 bytes. */
    while (lead > 0 && len - lead < 4 && (u[lead - 1] & 0xC0) == 0x80)
        lead--;
    if (lead == 0 || len - lead >= 4)
        return len;
    unsigned c = u[lead - 1];
    size_t want = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    return want > len - lead + 1 ? lead - 1 : len;
}

int utf8_cp_width(uint32_t cp)
{
    if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) ||
        (cp >= 0xFE00 && cp <= 0xFE0F))
        return 0;
    if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
        (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
        (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
        (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1FAFF) ||
        (cp >= 0x20000 && cp <= 0x3FFFD))
        return 2;
    return 1;
}

int utf8_width(const char *s)
{
    int w = 0;
    size_t n = strlen(s);
    while (n > 0) {
        uint32_t cp;
        int len = utf8_decode(s, n, &cp);
        if (len == 0) {
            w += 1;
            len = 1;
        } else {
            w += utf8_cp_width(cp);
        }
        s += len;
        n -= (size_t)len;
    }
    return w;
}

/* The bidirectional formatting characters (Unicode's Bidi_Control): an
 * embedding, override or isolate, or a mark, reorders the text around it,
 * so that a token could make the rest of its row read backwards. */
static int is_bidi_control(uint32_t cp)
{
    return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

int utf8_cp_is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || is_bidi_control(cp);
}

size_t utf8_escape_char(const char *s, size_t len, int flags, char out[UTF8_ESC_MAX], size_t *outn)
{
    static const char HEX[] = "0123456789ABCDEF";
    uint32_t cp;
    int l = utf8_decode(s, len, &cp);
    size_t used = l > 0 ? (size_t)l : 1;
    int keep = (flags & UTF8_ESC_KEEP_LINES) && (cp == '\n' || cp == '\t');
    if (l > 0 && (keep || !utf8_cp_is_control(cp))) {
        memcpy(out, s, used);
        *outn = used;
    } else if (l > 0 && (cp == '\n' || cp == '\t' || cp == '\r')) {
        out[0] = '\\';
        out[1] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
        *outn = 2;
    } else {
        /* Byte by byte, so that the bytes can be read back from the text. */
        size_t k = 0;
        for (size_t i = 0; i < used; i++) {
            unsigned char b = (unsigned char)s[i];
            out[k++] = '\\', out[k++] = 'x', out[k++] = HEX[b >> 4], out[k++] = HEX[b & 15];
        }
        *outn = k;
    }
    return used;
}

size_t utf8_escape(const char *s, char *buf, size_t n)
{
    size_t k = 0, len = strlen(s);
    if (n == 0)
        return 0;
    while (len > 0) {
        char piece[UTF8_ESC_MAX];
        size_t pn, used = utf8_escape_char(s, len, 0, piece, &pn);
        if (k + pn + 1 > n)
            break;
        memcpy(buf + k, piece, pn);
        k += pn;
        s += used;
        len -= used;
    }
    buf[k] = '\0';
    return k;
}

int utf8_write_escaped(FILE *out, const char *s, size_t len, int flags)
{
    while (len > 0) {
        char piece[UTF8_ESC_MAX];
        size_t pn, used = utf8_escape_char(s, len, flags, piece, &pn);
        fwrite(piece, 1, pn, out);
        s += used;
        len -= used;
    }
    return ferror(out) ? -1 : 0;
}

size_t utf8_pad(const char *s, int cols, int right, char *buf, size_t n)
{
    /* Cut to cols columns first. */
    size_t k = 0, len = strlen(s);
    int w = 0;
    char cut[512];
    while (len > 0 && k + 4 < sizeof cut) {
        uint32_t cp;
        int l = utf8_decode(s, len, &cp);
        int cw = l ? utf8_cp_width(cp) : 1;
        if (l == 0)
            l = 1;
        if (w + cw > cols)
            break;
        memcpy(cut + k, s, (size_t)l);
        k += (size_t)l;
        w += cw;
        s += l;
        len -= (size_t)l;
    }
    cut[k] = '\0';
    int pad = cols - w;
    size_t out = 0;
    if (n == 0)
        return 0;
    if (right)
        for (; pad > 0 && out + 1 < n; pad--)
            buf[out++] = ' ';
    for (size_t i = 0; i < k && out + 1 < n; i++)
        buf[out++] = cut[i];
    for (; pad > 0 && out + 1 < n; pad--)
        buf[out++] = ' ';
    buf[out] = '\0';
    return out;
}

size_t utf8_copy(char *dst, size_t n, const char *src)
{
    if (n == 0)
        return 0;
    size_t len = strlen(src);
    if (len >= n) {
        len = n - 1;
        while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
            len--; /* do not split a character */
    }
    memcpy(dst, src, len);
    dst[len] = '\0';
    return len;
}

size_t utf8_append(char *dst, size_t n, const char *src)
{
    size_t have = strlen(dst);
    if (have >= n)
        return have;
    return have + utf8_copy(dst + have, n - have, src);
}
