/* app_input.c - the input line that ':' commands, '/' find and exercise
 * answers are typed on. Its buffer grows as it is typed, so that it holds
 * any prompt a model's context takes (e opens it with the model's whole
 * prompt); a key past APP_INPUT_LIMIT, or one the memory cannot hold, is
 * refused with a message, never dropped unsaid. It is edited a whole UTF-8
 * character at a time and handed over whole on Enter.
 */
#include "tui/app_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

#define INPUT_FIRST 128 /* bytes allocated first: every command name and setting fits */

int app_input_init(struct app *a, struct err *e)
{
    a->input = malloc(INPUT_FIRST);
    if (!a->input)
        return err_set(e, ERR_SYSTEM, "out of memory for the input line");
    a->input[0] = '\0';
    a->input_len = 0;
    a->input_cap = INPUT_FIRST;
    a->input_limit = APP_INPUT_LIMIT;
    return 0;
}

void app_input_free(struct app *a)
{
    free(a->input);
    a->input = NULL;
    a->input_len = a->input_cap = 0;
}

void app_input_clear(struct app *a)
{
    a->input_len = 0;
    a->input[0] = '\0';
}

/* Room for more bytes after the line and its terminator, doubling, so that
 * a line typed key by key costs time in proportion to its length. Returns
 * 0, or -1 with the message line saying so (the line stays as it was). */
static int reserve(struct app *a, size_t more)
{
    size_t need = (size_t)a->input_len + more + 1;
    if (need <= (size_t)a->input_cap)
        return 0;
    size_t cap = (size_t)a->input_cap;
    while (cap < need && cap <= INT_MAX / 2)
        cap *= 2;
    char *p = cap >= need ? realloc(a->input, cap) : NULL;
    if (!p) {
        app_msg(a, 1, "out of memory for the input line: %zu more bytes were not added to its %d",
                more, a->input_len);
        return -1;
    }
    a->input = p;
    a->input_cap = (int)cap;
    return 0;
}

int app_input_append(struct app *a, const char *s, size_t n)
{
    if (reserve(a, n) < 0)
        return -1;
    memcpy(a->input + a->input_len, s, n);
    a->input_len += (int)n;
    a->input[a->input_len] = '\0';
    return 0;
}

/* A character typed: added whole, or refused with a message that says why. */
static void type_char(struct app *a, int key)
{
    char buf[4];
    int n = utf8_encode((uint32_t)key, buf);
    if (n == 0) {
        app_msg(a, 1, "U+%04X is not a character (a UTF-16 surrogate): not added", key);
        return;
    }
    if (a->input_len + n > a->input_limit) {
        app_msg(a, 1, "the input line holds %d bytes: the key was not added (Enter, Esc)",
                a->input_limit);
        return;
    }
    app_input_append(a, buf, (size_t)n);
}

/* Back over one UTF-8 character: its continuation bytes and its lead. */
static void erase_char(struct app *a)
{
    while (a->input_len > 0 && ((unsigned char)a->input[a->input_len - 1] & 0xC0) == 0x80)
        a->input_len--;
    if (a->input_len > 0)
        a->input_len--;
    a->input[a->input_len] = '\0';
}

int app_key_input(struct app *a, int key, int (*submit)(struct app *))
{
    if (key == AK_ESC) {
        a->mode = MODE_NORMAL;
        a->msg[0] = '\0';
        return APP_REDRAW;
    }
    if (key == AK_ENTER)
        return submit(a);
    if (key == AK_BACKSPACE)
        erase_char(a);
    else if (key >= 0x20 && key < AK_SPECIAL && key != 0x7F)
        type_char(a, key);
    return APP_REDRAW;
}

int app_submit_input(struct app *a, int (*run)(struct app *, const char *))
{
    /* run gets a copy: what it does may open the line again (a command
     * that asks for more) and write over it. */
    char *line = malloc((size_t)a->input_len + 1);
    if (!line) {
        app_msg(a, 1, "out of memory: the line of %d bytes was not run (Enter again, Esc drops it)",
                a->input_len);
        return APP_REDRAW;
    }
    memcpy(line, a->input, (size_t)a->input_len + 1);
    a->mode = MODE_NORMAL;
    a->msg[0] = '\0';
    int flags = run(a, line);
    free(line);
    return flags;
}

int app_submit_command(struct app *a)
{
    return app_submit_input(a, app_command);
}

void app_open_prompt(struct app *a, const char *prefill, const char *more)
{
    a->mode = MODE_PROMPT;
    a->msg[0] = '\0';
    app_input_clear(a);
    /* All or nothing: a prefill cut short would run as another command. */
    if (app_input_append(a, prefill, strlen(prefill)) < 0 ||
        (more && app_input_append(a, more, strlen(more)) < 0))
        app_input_clear(a);
}
