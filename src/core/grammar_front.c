/* grammar_front.c - one entry for the four front ends, as a setting names
 * them: the settings check a constraint with it when it is typed, and the
 * source compiles it with it when a step needs the mask. */
#include <stdlib.h>
#include <string.h>

#include "core/grammar.h"

/* The choices of "yes|no|maybe", each a slice of text. */
static int from_choices(const char *text, size_t len, struct grammar **out, struct err *e)
{
    int n = 1;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '|';
    const char **s = malloc((size_t)n * sizeof *s);
    size_t *sl = malloc((size_t)n * sizeof *sl);
    int rc = -1;
    if (!s || !sl) {
        err_set(e, ERR_SYSTEM, "out of memory for %d choices", n);
        goto done;
    }
    size_t start = 0;
    for (int k = 0; k < n; k++) {
        const char *bar = memchr(text + start, '|', len - start);
        size_t end = bar ? (size_t)(bar - text) : len;
        if (end == start) {
            err_set(e, ERR_USAGE, "choice %d of %d is empty (at byte %zu)", k + 1, n, start);
            goto done;
        }
        s[k] = text + start;
        sl[k] = end - start;
        start = end + 1;
    }
    rc = grammar_from_choices(s, sl, n, out, e);
done:
    free(s);
    free(sl);
    return rc;
}

int grammar_from_front(int f, const char *text, size_t len, struct grammar **out, struct err *e)
{
    switch (f) {
    case GRAMMAR_FRONT_GBNF:
        return grammar_from_gbnf(text, len, out, e);
    case GRAMMAR_FRONT_JSON_SCHEMA:
        return grammar_from_json_schema(text, len, out, e);
    case GRAMMAR_FRONT_REGEX:
        return grammar_from_regex(text, len, out, e);
    case GRAMMAR_FRONT_CHOICE:
        return from_choices(text, len, out, e);
    default:
        return err_set(e, ERR_USAGE, "no grammar front end %d", f);
    }
}
