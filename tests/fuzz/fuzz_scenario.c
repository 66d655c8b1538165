/* libFuzzer harness: the scenario loader on any text, against the Llama 3
 * vocabulary (read once from data/). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct vocab v;
    static int loaded;
    struct err e;
    if (!loaded) {
        if (vocab_load(&v, "data/llama3-vocab.bin", &e) < 0)
            abort(); /* run from the top of the source tree */
        loaded = 1;
    }
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct scenario s;
    if (scenario_load_text(&s, "fuzz.ini", text, &v, &e) == 0) {
        /* Every context finds a blend. */
        const struct blend *b = scenario_blend(&s, s.prompt, s.prompt_len);
        if (!b || b->n < 1)
            abort();
        scenario_free(&s);
    } else if (strncmp(e.msg, "fuzz.ini", 8) != 0) {
        abort();
    }
    free(text);
    return 0;
}
