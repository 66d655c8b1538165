/* libFuzzer harness: the lesson loader on any text. A load either succeeds
 * (then the lesson must run) or fails with a message naming the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/lesson.h"
#include "core/sampler.h"
#include "source/path.h"
#include "source/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct lesson L;
    struct err e;
    if (lesson_load_text(&L, "fuzz.ini", text, &e) == 0) {
        /* A lesson that loads must run: every step, with its own settings. */
        struct source src;
        if (!L.model.on && source_open(&src, &L, NULL, 0, 0, &e) == 0) {
            struct trace t;
            if (trace_init(&t, L.vocab.n, &e) == 0) {
                for (int k = 1; k <= L.n_steps; k++) {
                    int *ctx = NULL, len = 0;
                    struct settings s;
                    source_step_settings(&src, k, &s);
                    if (source_lesson_context(&src, k, &ctx, &len, &e) == 0)
                        source_run_step(&src, k, &s, ctx, len, &t, &e);
                    free(ctx);
                }
                trace_free(&t);
            }
            source_close(&src);
        }
        lesson_free(&L);
    } else if (strncmp(e.msg, "fuzz.ini", 8) != 0) {
        abort(); /* every message names the file */
    }
    free(text);
    return 0;
}
