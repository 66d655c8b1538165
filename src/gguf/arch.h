/* arch.h - the architectures of gguf/arch.def, by name. */
#ifndef LOGITLAB_ARCH_H
#define LOGITLAB_ARCH_H

#include <stddef.h>

enum arch {
#define ARCH(id, name, switches) ARCH_##id,
#include "gguf/arch.def"
#undef ARCH
    ARCH_COUNT
};

struct arch_info {
    const char *name;  /* general.architecture, and its keys' prefix */
    unsigned switches; /* model/llama.h's LLAMA_SW_* */
};

/* The rows of arch.def, in its order. */
extern const struct arch_info ARCHS[ARCH_COUNT];

/* The architecture called name (len bytes, not NUL-terminated), or NULL. */
const struct arch_info *arch_find(const char *name, size_t len);

/* "llama, qwen2 and gemma3": the names, for messages. */
void arch_list(char *buf, size_t n);

#endif
