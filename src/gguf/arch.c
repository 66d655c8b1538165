#include "gguf/arch.h"

#include <stdio.h>
#include <string.h>

#include "model/llama.h"

const struct arch_info ARCHS[ARCH_COUNT] = {
#define ARCH(id, nm, sw) [ARCH_##id] = { .name = nm, .switches = sw },
#include "gguf/arch.def"
#undef ARCH
};

const struct arch_info *arch_find(const char *name, size_t len)
{
    for (int i = 0; i < ARCH_COUNT; i++)
        if (strlen(ARCHS[i].name) == len && memcmp(ARCHS[i].name, name, len) == 0)
            return &ARCHS[i];
    return NULL;
}

void arch_list(char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < ARCH_COUNT && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s",
                              i == 0                ? ""
                              : i == ARCH_COUNT - 1 ? " and "
                                                    : ", ",
                              ARCHS[i].name);
}
