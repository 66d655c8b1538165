/* gguf_int.h - what the GGUF reader's two files share (gguf.c reads and
 * checks a file, gguf_get.c answers questions about it): little-endian
 * loads that need no alignment, the sizes of the value types, the order of
 * names. Not for other modules. */
#ifndef LOGITLAB_GGUF_INT_H
#define LOGITLAB_GGUF_INT_H

#include <stdint.h>
#include <string.h>

#include "gguf/gguf.h"

static inline uint32_t gguf_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t gguf_le64(const unsigned char *p)
{
    return (uint64_t)gguf_le32(p) | (uint64_t)gguf_le32(p + 4) << 32;
}

/* Bytes of one value of a scalar type; 0 for strings, arrays and unknown
 * types (their size varies). */
static inline size_t gguf_type_size(int type)
{
    switch (type) {
    case GGUF_T_U8:
    case GGUF_T_I8:
    case GGUF_T_BOOL:
        return 1;
    case GGUF_T_U16:
    case GGUF_T_I16:
        return 2;
    case GGUF_T_U32:
    case GGUF_T_I32:
    case GGUF_T_F32:
        return 4;
    case GGUF_T_U64:
    case GGUF_T_I64:
    case GGUF_T_F64:
        return 8;
    default:
        return 0;
    }
}

/* Byte order, then length: the order of the lookup indexes. */
static inline int gguf_str_cmp(struct gguf_str a, struct gguf_str b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.s, b.s, n) : 0;
    return c ? c : (a.len > b.len) - (a.len < b.len);
}

#endif
