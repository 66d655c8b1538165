#include "base/err.h"

#include <stdio.h>
#include <string.h>

int err_set(struct err *e, int code, const char *fmt, ...)
{
    if (!e)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->code = code;
    return -1;
}

void err_prefix(struct err *e, const char *fmt, ...)
{
    if (!e)
        return;
    char head[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    char old[ERR_MSG_MAX];
    memcpy(old, e->msg, sizeof old);
    /* head, ": ", then as much of the old message as fits. */
    size_t k = strlen(head);
    if (k > sizeof e->msg - 3)
        k = sizeof e->msg - 3;
    memcpy(e->msg, head, k);
    e->msg[k++] = ':';
    e->msg[k++] = ' ';
    size_t rest = strlen(old);
    if (rest > sizeof e->msg - 1 - k)
        rest = sizeof e->msg - 1 - k;
    memcpy(e->msg + k, old, rest);
    e->msg[k + rest] = '\0';
}

void err_clear(struct err *e)
{
    if (!e)
        return;
    e->code = ERR_NONE;
    e->msg[0] = '\0';
}
