#include "base/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_GAP "..."

/* The printf-style text of fmt in a new buffer (its length in *len), or
 * NULL when memory is short. */
static char *format_new(size_t *len, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, again);
    va_end(again);
    *len = s ? (size_t)n : 0;
    return s;
}

/* Whether byte c continues a UTF-8 character (10xxxxxx). */
static int utf8_continues(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* Puts text (len bytes) into e->msg: whole when it fits; else its first
 * and last parts around ERR_GAP, each cut at a character's boundary, so
 * that a long path in the middle shortens and the reason at the end stays. */
static void put_msg(struct err *e, const char *text, size_t len)
{
    size_t room = sizeof e->msg - 1;
    if (len <= room) {
        memcpy(e->msg, text, len);
        e->msg[len] = '\0';
        return;
    }
    size_t keep = room - (sizeof ERR_GAP - 1);
    size_t head = keep / 2, tail = keep - head;
    while (head > 0 && utf8_continues((unsigned char)text[head]))
        head--;
    size_t from = len - tail;
    while (from < len && utf8_continues((unsigned char)text[from]))
        from++;
    memcpy(e->msg, text, head);
    memcpy(e->msg + head, ERR_GAP, sizeof ERR_GAP - 1);
    memcpy(e->msg + head + sizeof ERR_GAP - 1, text + from, len - from);
    e->msg[head + sizeof ERR_GAP - 1 + len - from] = '\0';
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
    if (!e)
        return -1;
    e->code = code;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    if (n >= 0 && (size_t)n >= sizeof e->msg) {
        size_t len;
        char *full = format_new(&len, fmt, again);
        if (full) /* without memory, the plain cut vsnprintf made stays */
            put_msg(e, full, len);
        free(full);
    }
    va_end(again);
    va_end(ap);
    return -1;
}

void err_prefix(struct err *e, const char *fmt, ...)
{
    if (!e)
        return;
    va_list ap;
    va_start(ap, fmt);
    size_t hlen;
    char *head = format_new(&hlen, fmt, ap);
    va_end(ap);
    size_t olen = strlen(e->msg);
    char *full = head ? malloc(hlen + 2 + olen + 1) : NULL;
    if (!full) { /* without memory, the message stays as it was */
        free(head);
        return;
    }
    memcpy(full, head, hlen);
    memcpy(full + hlen, ": ", 2);
    memcpy(full + hlen + 2, e->msg, olen + 1);
    put_msg(e, full, hlen + 2 + olen);
    free(full);
    free(head);
}

void err_clear(struct err *e)
{
    if (!e)
        return;
    e->code = ERR_NONE;
    e->msg[0] = '\0';
}
