/* libFuzzer harness: the .npy reader on any bytes. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct npy a;
    struct err e;
    if (npy_parse(&a, "fuzz.npy", data, size, &e) == 0) {
        size_t n = (size_t)a.rows * (size_t)a.cols;
        for (size_t i = 0; i < n; i++)
            if (!isfinite(a.data[i]))
                abort(); /* accepted logits are finite */
        npy_free(&a);
    } else if (strncmp(e.msg, "fuzz.npy", 8) != 0 && strncmp(e.msg, "out of memory", 13) != 0) {
        abort();
    }
    return 0;
}
