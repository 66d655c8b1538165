/* gguf_get.c - questions about an open GGUF file: the typed getters, the
 * arrays, the names of the value types, and the escaping that every string
 * from a file goes through before it is printed. */
#include "gguf/gguf.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "gguf/gguf_int.h"

static const char *const TYPE_NAME[GGUF_T_COUNT] = { "u8",  "i8",  "u16",  "i16",    "u32",
                                                     "i32", "f32", "bool", "string", "array",
                                                     "u64", "i64", "f64" };

const char *gguf_type_name(int type, char *buf, size_t n)
{
    if (type >= 0 && type < GGUF_T_COUNT)
        return TYPE_NAME[type];
    snprintf(buf, n, "type %d", type);
    return buf;
}

/* One code point's worth of s for gguf_escape: its bytes as they are, or
 * their \xNN spelling. Returns the bytes of s it stands for. */
static size_t escape_one(const unsigned char *s, size_t len, char *out, size_t *outn)
{
    static const char HEX[] = "0123456789ABCDEF";
    unsigned c = s[0];
    size_t l = 1;
    uint32_t cp = c;
    if (c >= 0x80) {
        /* A well-formed sequence: the right lead byte, continuation bytes,
         * no overlong form, no surrogate, nothing past U+10FFFF. */
        l = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        int ok = c >= 0xC2 && c <= 0xF4 && len >= l;
        cp = c & (0x3F >> (l - 1));
        for (size_t i = 1; ok && i < l; i++) {
            ok = (s[i] & 0xC0) == 0x80;
            cp = cp << 6 | (s[i] & 0x3F);
        }
        if (ok && ((l == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
                   (l == 4 && (cp < 0x10000 || cp > 0x10FFFF))))
            ok = 0;
        if (!ok)
            l = 1, cp = 0xFFFFFFFF;
    }
    if (cp == '\n' || cp == '\t' || cp == '\r' || cp == '\\') {
        out[0] = '\\';
        out[1] = cp == '\n' ? 'n' : cp == '\t' ? 't' : cp == '\r' ? 'r' : '\\';
        *outn = 2;
    } else if (cp == 0xFFFFFFFF || utf8_cp_is_control(cp)) {
        size_t k = 0;
        for (size_t i = 0; i < l; i++) {
            out[k++] = '\\', out[k++] = 'x';
            out[k++] = HEX[s[i] >> 4], out[k++] = HEX[s[i] & 15];
        }
        *outn = k;
    } else {
        memcpy(out, s, l);
        *outn = l;
    }
    return l;
}

/* Bytes the escaped form of s takes. */
static size_t escaped_len(const unsigned char *s, size_t len)
{
    size_t total = 0;
    char piece[16];
    for (size_t i = 0, pn; i < len; total += pn)
        i += escape_one(s + i, len - i, piece, &pn);
    return total;
}

size_t gguf_escape(const char *s, size_t len, char *buf, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k = 0, i = 0;
    if (n == 0)
        return 0;
    /* Whole when it fits; else pieces while there is room for them and
     * for the "..." that says the rest is missing. */
    int whole = escaped_len(u, len) + 1 <= n;
    while (i < len) {
        char piece[16];
        size_t pn;
        size_t used = escape_one(u + i, len - i, piece, &pn);
        if (!whole && k + pn + 3 + 1 > n) {
            if (k + 4 <= n) {
                memcpy(buf + k, "...", 3);
                k += 3;
            }
            break;
        }
        memcpy(buf + k, piece, pn);
        k += pn;
        i += used;
    }
    buf[k] = '\0';
    return k;
}

/* An integer of type at p as sign and magnitude; 0 when type is not one. */
static int int_at(int type, const unsigned char *p, int *neg, uint64_t *mag)
{
    int64_t s;
    *neg = 0;
    switch (type) {
    case GGUF_T_U8:
        *mag = p[0];
        return 1;
    case GGUF_T_U16:
        *mag = (uint64_t)p[0] | (uint64_t)p[1] << 8;
        return 1;
    case GGUF_T_U32:
        *mag = gguf_le32(p);
        return 1;
    case GGUF_T_U64:
        *mag = gguf_le64(p);
        return 1;
    case GGUF_T_I8:
        s = (int8_t)p[0];
        break;
    case GGUF_T_I16:
        s = (int16_t)(uint16_t)(p[0] | p[1] << 8);
        break;
    case GGUF_T_I32:
        s = (int32_t)gguf_le32(p);
        break;
    case GGUF_T_I64:
        s = (int64_t)gguf_le64(p);
        break;
    default:
        return 0;
    }
    *neg = s < 0;
    *mag = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    return 1;
}

static int outside(int neg, uint64_t mag, uint64_t lo_mag, uint64_t hi)
{
    return neg ? mag > lo_mag : mag > hi;
}

static int range_err(const struct gguf *g, const char *key, const char *elem, int neg, uint64_t mag,
                     uint64_t lo_mag, uint64_t hi, struct err *e)
{
    return err_set(e, ERR_USAGE, "%s: '%s'%s is %s%llu, outside %s%llu to %llu", g->path, key, elem,
                   neg ? "-" : "", (unsigned long long)mag, lo_mag ? "-" : "",
                   (unsigned long long)lo_mag, (unsigned long long)hi);
}

static int type_err(const struct gguf *g, const char *key, const struct gguf_kv *kv,
                    const char *want, struct err *e)
{
    char tb[16];
    return err_set(e, ERR_USAGE, "%s: '%s' has type %s, not %s", g->path, key,
                   gguf_type_name(kv->type, tb, sizeof tb), want);
}

/* An integer in lo_mag (as -lo_mag) .. hi: 1 with neg and mag, 0, -1. */
static int get_int(const struct gguf *g, const char *key, uint64_t lo_mag, uint64_t hi, int *neg,
                   uint64_t *mag, struct err *e)
{
    const struct gguf_kv *kv = gguf_find(g, key);
    if (!kv)
        return 0;
    if (kv->type == GGUF_T_ARRAY || !int_at(kv->type, kv->val, neg, mag))
        return type_err(g, key, kv, "an integer", e);
    if (outside(*neg, *mag, lo_mag, hi))
        return range_err(g, key, "", *neg, *mag, lo_mag, hi, e);
    return 1;
}

int gguf_get_u32(const struct gguf *g, const char *key, uint32_t *v, struct err *e)
{
    int neg;
    uint64_t mag;
    int rc = get_int(g, key, 0, UINT32_MAX, &neg, &mag, e);
    if (rc == 1)
        *v = (uint32_t)mag;
    return rc;
}

int gguf_get_i32(const struct gguf *g, const char *key, int32_t *v, struct err *e)
{
    int neg;
    uint64_t mag;
    int rc = get_int(g, key, (uint64_t)INT32_MAX + 1, INT32_MAX, &neg, &mag, e);
    if (rc == 1)
        *v = neg ? (int32_t)(-(int64_t)mag) : (int32_t)mag;
    return rc;
}

int gguf_get_u64(const struct gguf *g, const char *key, uint64_t *v, struct err *e)
{
    int neg;
    uint64_t mag;
    int rc = get_int(g, key, 0, UINT64_MAX, &neg, &mag, e);
    if (rc == 1)
        *v = mag;
    return rc;
}

int gguf_get_i64(const struct gguf *g, const char *key, int64_t *v, struct err *e)
{
    int neg;
    uint64_t mag;
    int rc = get_int(g, key, (uint64_t)INT64_MAX + 1, INT64_MAX, &neg, &mag, e);
    if (rc == 1)
        *v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return rc;
}

/* A float of type f32 or f64 at p into *v: 0 when it is neither, -1 when
 * an f64 is finite but beyond float's range. */
static int float_at(int type, const unsigned char *p, float *v)
{
    if (type == GGUF_T_F32) {
        uint32_t u = gguf_le32(p);
        memcpy(v, &u, sizeof *v);
        return 1;
    }
    if (type != GGUF_T_F64)
        return 0;
    uint64_t u = gguf_le64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    if (isfinite(d) && fabs(d) > FLT_MAX)
        return -1;
    *v = (float)d;
    return 1;
}

int gguf_get_f32(const struct gguf *g, const char *key, float *v, struct err *e)
{
    const struct gguf_kv *kv = gguf_find(g, key);
    if (!kv)
        return 0;
    int rc = kv->type == GGUF_T_ARRAY ? 0 : float_at(kv->type, kv->val, v);
    if (rc == 0)
        return type_err(g, key, kv, "a float", e);
    if (rc < 0)
        return err_set(e, ERR_USAGE, "%s: '%s' is beyond the range of a float", g->path, key);
    return 1;
}

int gguf_get_bool(const struct gguf *g, const char *key, int *v, struct err *e)
{
    const struct gguf_kv *kv = gguf_find(g, key);
    if (!kv)
        return 0;
    if (kv->type != GGUF_T_BOOL)
        return type_err(g, key, kv, "a bool", e);
    *v = kv->val[0];
    return 1;
}

int gguf_get_str(const struct gguf *g, const char *key, struct gguf_str *v, struct err *e)
{
    const struct gguf_kv *kv = gguf_find(g, key);
    if (!kv)
        return 0;
    if (kv->type != GGUF_T_STRING)
        return type_err(g, key, kv, "a string", e);
    v->len = (size_t)gguf_le64(kv->val);
    v->s = (const char *)kv->val + 8;
    return 1;
}

/* Whether an element type is of class want (see gguf_get_arr_len). */
static int elem_fits(int elem, int want)
{
    if (want == GGUF_T_STRING)
        return elem == GGUF_T_STRING;
    if (want == GGUF_T_F32)
        return elem == GGUF_T_F32 || elem == GGUF_T_F64;
    unsigned char zero[8] = { 0 };
    int neg;
    uint64_t mag;
    return want == GGUF_T_I32 && int_at(elem, zero, &neg, &mag);
}

int gguf_get_arr_len(const struct gguf *g, const char *key, int elem, uint64_t *n, struct err *e)
{
    const struct gguf_kv *kv = gguf_find(g, key);
    if (!kv)
        return 0;
    if (kv->type != GGUF_T_ARRAY)
        return type_err(g, key, kv, "an array", e);
    if (!elem_fits(kv->elem, elem)) {
        char tb[16];
        const char *want = elem == GGUF_T_STRING ? "strings"
                           : elem == GGUF_T_F32  ? "floats"
                                                 : "integers";
        return err_set(e, ERR_USAGE, "%s: '%s' is an array of %s, not of %s", g->path, key,
                       gguf_type_name(kv->elem, tb, sizeof tb), want);
    }
    *n = kv->n;
    return 1;
}

/* The array key of class elem with exactly n elements: 1 and *kvp, 0, -1. */
static int get_arr(const struct gguf *g, const char *key, int elem, size_t n,
                   const struct gguf_kv **kvp, struct err *e)
{
    uint64_t have;
    int rc = gguf_get_arr_len(g, key, elem, &have, e);
    if (rc != 1)
        return rc;
    if (have != n)
        return err_set(e, ERR_USAGE, "%s: '%s' has %llu elements, expected %zu", g->path, key,
                       (unsigned long long)have, n);
    *kvp = gguf_find(g, key);
    return 1;
}

int gguf_get_strs(const struct gguf *g, const char *key, struct gguf_str *out, size_t n,
                  struct err *e)
{
    const struct gguf_kv *kv;
    int rc = get_arr(g, key, GGUF_T_STRING, n, &kv, e);
    if (rc != 1)
        return rc;
    /* The lengths were checked against the file when it was opened. */
    const unsigned char *p = kv->val;
    for (size_t i = 0; i < n; i++) {
        out[i].len = (size_t)gguf_le64(p);
        out[i].s = (const char *)p + 8;
        p += 8 + out[i].len;
    }
    return 1;
}

int gguf_get_f32s(const struct gguf *g, const char *key, float *out, size_t n, struct err *e)
{
    const struct gguf_kv *kv;
    int rc = get_arr(g, key, GGUF_T_F32, n, &kv, e);
    if (rc != 1)
        return rc;
    size_t w = gguf_type_size(kv->elem);
    for (size_t i = 0; i < n; i++)
        if (float_at(kv->elem, kv->val + i * w, &out[i]) < 0)
            return err_set(e, ERR_USAGE, "%s: '%s' element %zu is beyond the range of a float",
                           g->path, key, i);
    return 1;
}

int gguf_get_i32s(const struct gguf *g, const char *key, int32_t *out, size_t n, struct err *e)
{
    const struct gguf_kv *kv;
    int rc = get_arr(g, key, GGUF_T_I32, n, &kv, e);
    if (rc != 1)
        return rc;
    size_t w = gguf_type_size(kv->elem);
    for (size_t i = 0; i < n; i++) {
        int neg;
        uint64_t mag;
        int_at(kv->elem, kv->val + i * w, &neg, &mag);
        if (outside(neg, mag, (uint64_t)INT32_MAX + 1, INT32_MAX)) {
            char el[40];
            snprintf(el, sizeof el, " element %zu", i);
            return range_err(g, key, el, neg, mag, (uint64_t)INT32_MAX + 1, INT32_MAX, e);
        }
        out[i] = neg ? (int32_t)(-(int64_t)mag) : (int32_t)mag;
    }
    return 1;
}
