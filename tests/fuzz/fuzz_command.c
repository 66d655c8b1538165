/* libFuzzer harness: the ':' prompt. Each input is a few command lines and
 * keys typed into the running app on the toy lesson; nothing may crash and
 * the step on screen must stay consistent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct app a; /* large: kept off the stack */
    static int open;
    struct err e;
    if (!open) {
        const char *dir = getenv("FUZZ_LESSONS"); /* run.sh: the toy lessons alone */
        if (app_init(&a, dir ? dir : "lessons", "toy", 0, NULL, NULL, NULL, &e) < 0)
            abort(); /* run from the top of the source tree */
        open = 1;
    }
    /* Every input starts from the lesson's first step and its own settings
     * (a fresh app costs 8 ms a run; this, a few microseconds). */
    a.mode = MODE_NORMAL;
    app_command(&a, "reset");
    app_command(&a, "step 1");
    /* Lines are commands; a line starting with '!' is keys instead. */
    char line[APP_INPUT_MAX];
    size_t i = 0;
    while (i < size) {
        size_t n = 0;
        while (i < size && data[i] != '\n' && n < sizeof line - 1)
            line[n++] = (char)data[i++];
        line[n] = '\0';
        i++;
        /* Other lessons are the lesson harness's (and a full-size one
         * builds a gigabyte): no lesson commands, no n or N. */
        if (line[0] == '!') {
            for (size_t k = 1; k < n; k++)
                if (line[k] != 'n' && line[k] != 'N')
                    app_key(&a, (unsigned char)line[k]);
        } else if (!strstr(line, "lesson")) {
            app_command(&a, line);
        }
        if (a.mode != MODE_NORMAL)
            app_key(&a, AK_ESC);
    }
    if (a.t.vocab_size != a.L.vocab.n || a.t.kept_count < 1)
        abort();
    return 0;
}
