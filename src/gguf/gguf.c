/* gguf.c - the GGUF reader: the header, the metadata, the tensor
 * descriptors and the data section, each checked before it is used (see
 * gguf.h and doc/gguf.md); then the lookups by name. The typed getters are
 * in gguf_get.c. */
#include "gguf/gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf/gguf_int.h"
#include "model/quant.h"

#define HEADER_BYTES 24
/* The fewest bytes a metadata entry and a tensor descriptor can take: a key
 * of 1 byte, a type and a 1-byte value; a 1-byte name, one dimension, a
 * type and an offset. They bound the counts by the bytes that are left. */
#define MIN_KV_BYTES     (8 + 1 + 4 + 1)
#define MIN_TENSOR_BYTES (8 + 1 + 4 + 8 + 4 + 8)
#define NAME_SHOWN       80 /* bytes of an escaped name in a message */

/* The cursor over the file's bytes. */
struct rd {
    const unsigned char *p;
    size_t size, pos;
    const char *path;
    struct err *e;
};

static size_t left(const struct rd *r)
{
    return r->size - r->pos;
}

/* A name for a message: escaped and cut to NAME_SHOWN bytes. */
static const char *shown(struct gguf_str s, char *buf, size_t n)
{
    gguf_escape(s.s, s.len, buf, n < NAME_SHOWN ? n : NAME_SHOWN);
    return buf;
}

/* ---- reading ----------------------------------------------------------- */

/* "PATH: truncated: WHAT at byte AT needs NEED bytes, N are left". */
static int truncated(const struct rd *r, size_t at, uint64_t need, const char *what)
{
    return err_set(r->e, ERR_USAGE, "%s: truncated: %s at byte %zu needs %llu bytes, %zu %s left",
                   r->path, what, at, (unsigned long long)need, r->size - at,
                   r->size - at == 1 ? "is" : "are");
}

/* Takes a string (u64 length, bytes). -1, with *need the bytes it would
 * take, when it runs past the end; the cursor stays on failure. */
static int take_str(struct rd *r, struct gguf_str *s, uint64_t *need)
{
    if (left(r) < 8) {
        *need = 8;
        return -1;
    }
    uint64_t len = gguf_le64(r->p + r->pos);
    if (len > left(r) - 8) {
        *need = len > UINT64_MAX - 8 ? UINT64_MAX : len + 8;
        return -1;
    }
    s->s = (const char *)r->p + r->pos + 8;
    s->len = (size_t)len;
    r->pos += 8 + (size_t)len;
    return 0;
}

/* The header: magic, version, the two counts, bounded by what follows. */
static int read_header(struct rd *r, uint32_t *version, uint64_t *n_t, uint64_t *n_kv)
{
    if (r->size == 0)
        return err_set(r->e, ERR_USAGE, "%s: empty file (not a GGUF file)", r->path);
    size_t m = r->size < 4 ? r->size : 4;
    if (memcmp(r->p, "GGUF", m) != 0)
        return err_set(r->e, ERR_USAGE, "%s: not a GGUF file (it does not start with \"GGUF\")",
                       r->path);
    if (r->size < HEADER_BYTES)
        return err_set(r->e, ERR_USAGE,
                       "%s: truncated: the header needs %d bytes, the file has %zu", r->path,
                       HEADER_BYTES, r->size);
    uint32_t v = gguf_le32(r->p + 4);
    uint32_t swapped = (v >> 24) | (v >> 8 & 0xFF00) | (v << 8 & 0xFF0000) | (v << 24);
    if (v != 2 && v != 3 && swapped >= 1 && swapped <= 3)
        return err_set(r->e, ERR_USAGE,
                       "%s: a big-endian GGUF file (logitlab reads little-endian ones)", r->path);
    if (v != 2 && v != 3)
        return err_set(r->e, ERR_USAGE,
                       "%s: GGUF version %u is not supported (logitlab reads versions 2 and 3)",
                       r->path, (unsigned)v);
    *version = v;
    *n_t = gguf_le64(r->p + 8);
    *n_kv = gguf_le64(r->p + 16);
    r->pos = HEADER_BYTES;
    /* Refused before anything is allocated for them. */
    size_t rest = left(r);
    if (*n_kv > rest / MIN_KV_BYTES || *n_t > (rest - *n_kv * MIN_KV_BYTES) / MIN_TENSOR_BYTES)
        return err_set(
            r->e, ERR_USAGE,
            "%s: truncated: the header says %llu metadata entries and %llu tensors, more "
            "than the %zu bytes after it can hold",
            r->path, (unsigned long long)*n_kv, (unsigned long long)*n_t, rest);
    if (*n_kv > GGUF_MAX_KV || *n_t > GGUF_MAX_TENSORS)
        return err_set(r->e, ERR_USAGE,
                       "%s: the header says %llu metadata entries and %llu tensors (logitlab reads "
                       "at most %d and %d)",
                       r->path, (unsigned long long)*n_kv, (unsigned long long)*n_t, GGUF_MAX_KV,
                       GGUF_MAX_TENSORS);
    return 0;
}

/* Checks that a bool's byte is 0 or 1. */
static int check_bools(const struct rd *r, const struct gguf_kv *kv, const char *kname)
{
    for (uint64_t i = 0; i < kv->n; i++)
        if (kv->val[i] > 1)
            return err_set(r->e, ERR_USAGE, "%s: '%s'%s holds a bool of value %u (0 or 1)", r->path,
                           kname, kv->type == GGUF_T_ARRAY ? " (an array)" : "",
                           (unsigned)kv->val[i]);
    return 0;
}

/* An array's elements: their type and count, then each string or the
 * whole block of numbers, all inside the file. */
static int read_array(struct rd *r, struct gguf_kv *kv, const char *kname)
{
    if (left(r) < 12)
        return truncated(r, r->pos, 12, "an array's type and count");
    uint32_t elem = gguf_le32(r->p + r->pos);
    uint64_t n = gguf_le64(r->p + r->pos + 4);
    if (elem == GGUF_T_ARRAY)
        return err_set(r->e, ERR_USAGE, "%s: '%s' is an array of arrays (not supported)", r->path,
                       kname);
    if (elem >= GGUF_T_COUNT)
        return err_set(r->e, ERR_USAGE, "%s: '%s' is an array of unknown type %u", r->path, kname,
                       (unsigned)elem);
    r->pos += 12;
    size_t min = elem == GGUF_T_STRING ? 8 : gguf_type_size((int)elem);
    if (n > left(r) / min)
        return err_set(r->e, ERR_USAGE,
                       "%s: truncated: '%s' says %llu elements at byte %zu, the %zu bytes left "
                       "hold at most %zu",
                       r->path, kname, (unsigned long long)n, r->pos, left(r), left(r) / min);
    kv->elem = (int)elem;
    kv->n = n;
    kv->val = r->p + r->pos;
    if (elem != GGUF_T_STRING) {
        r->pos += (size_t)n * min;
        return elem == GGUF_T_BOOL ? check_bools(r, kv, kname) : 0;
    }
    for (uint64_t i = 0; i < n; i++) {
        struct gguf_str s;
        uint64_t need;
        size_t at = r->pos;
        if (take_str(r, &s, &need) < 0) {
            char what[NAME_SHOWN + 64];
            snprintf(what, sizeof what, "string %llu of '%s'", (unsigned long long)i, kname);
            return truncated(r, at, need, what);
        }
    }
    return 0;
}

/* One metadata entry: key, type, value. */
static int read_kv(struct rd *r, size_t i, struct gguf_kv *kv)
{
    char what[NAME_SHOWN + 64], kname[NAME_SHOWN];
    uint64_t need;
    size_t at = r->pos;
    if (take_str(r, &kv->key, &need) < 0) {
        snprintf(what, sizeof what, "the key of metadata entry %zu", i);
        return truncated(r, at, need, what);
    }
    if (kv->key.len == 0)
        return err_set(r->e, ERR_USAGE, "%s: metadata entry %zu has an empty key", r->path, i);
    if (kv->key.len > GGUF_MAX_KEY)
        return err_set(r->e, ERR_USAGE,
                       "%s: metadata entry %zu's key is %zu bytes long (GGUF allows %d)", r->path,
                       i, kv->key.len, GGUF_MAX_KEY);
    shown(kv->key, kname, sizeof kname);
    if (left(r) < 4) {
        snprintf(what, sizeof what, "the type of '%s'", kname);
        return truncated(r, r->pos, 4, what);
    }
    uint32_t type = gguf_le32(r->p + r->pos);
    r->pos += 4;
    if (type >= GGUF_T_COUNT)
        return err_set(r->e, ERR_USAGE, "%s: '%s' has unknown value type %u", r->path, kname,
                       (unsigned)type);
    kv->type = kv->elem = (int)type;
    kv->n = 1;
    size_t start = r->pos;
    kv->val = r->p + start;
    if (type == GGUF_T_ARRAY) {
        if (read_array(r, kv, kname) < 0)
            return -1;
    } else if (type == GGUF_T_STRING) {
        struct gguf_str s;
        if (take_str(r, &s, &need) < 0) {
            snprintf(what, sizeof what, "the value of '%s'", kname);
            return truncated(r, start, need, what);
        }
    } else {
        if (left(r) < gguf_type_size((int)type)) {
            snprintf(what, sizeof what, "the value of '%s'", kname);
            return truncated(r, start, gguf_type_size((int)type), what);
        }
        r->pos += gguf_type_size((int)type);
        if (type == GGUF_T_BOOL && check_bools(r, kv, kname) < 0)
            return -1;
    }
    kv->bytes = r->pos - (size_t)(kv->val - r->p);
    return 0;
}

static int kv_ptr_cmp(const void *a, const void *b)
{
    const struct gguf_kv *x = *(const struct gguf_kv *const *)a;
    const struct gguf_kv *y = *(const struct gguf_kv *const *)b;
    return gguf_str_cmp(x->key, y->key);
}

static int t_name_cmp(const void *a, const void *b)
{
    const struct gguf_tensor *x = *(const struct gguf_tensor *const *)a;
    const struct gguf_tensor *y = *(const struct gguf_tensor *const *)b;
    return gguf_str_cmp(x->name, y->name);
}

/* Every metadata entry, then the index by key (a key twice is refused). */
static int read_kvs(struct rd *r, struct gguf *g, size_t n)
{
    g->kv = calloc(n ? n : 1, sizeof *g->kv);
    g->kv_sorted = calloc(n ? n : 1, sizeof *g->kv_sorted);
    if (!g->kv || !g->kv_sorted)
        return err_set(r->e, ERR_SYSTEM, "%s: out of memory (%zu metadata entries)", r->path, n);
    for (size_t i = 0; i < n; i++) {
        if (read_kv(r, i, &g->kv[i]) < 0)
            return -1;
        g->n_kv = i + 1;
        g->kv_sorted[i] = &g->kv[i];
    }
    qsort(g->kv_sorted, n, sizeof *g->kv_sorted, kv_ptr_cmp);
    for (size_t i = 1; i < n; i++)
        if (gguf_str_cmp(g->kv_sorted[i - 1]->key, g->kv_sorted[i]->key) == 0) {
            char k[NAME_SHOWN];
            return err_set(r->e, ERR_USAGE, "%s: metadata key '%s' appears twice", r->path,
                           shown(g->kv_sorted[i]->key, k, sizeof k));
        }
    return 0;
}

/* general.alignment, when given: a power of two. */
static int read_alignment(struct rd *r, struct gguf *g)
{
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    uint32_t a;
    int got = gguf_get_u32(g, "general.alignment", &a, r->e);
    if (got < 0)
        return -1;
    if (got && (a == 0 || (a & (a - 1)) != 0))
        return err_set(r->e, ERR_USAGE, "%s: general.alignment is %u, not a power of two", r->path,
                       (unsigned)a);
    if (got)
        g->alignment = a;
    return 0;
}

/* One tensor descriptor: name, shape, type, offset; and its size. */
static int read_tensor(struct rd *r, size_t i, struct gguf_tensor *t, uint32_t align)
{
    char what[NAME_SHOWN + 64], tn[NAME_SHOWN];
    uint64_t need;
    size_t at = r->pos;
    if (take_str(r, &t->name, &need) < 0) {
        snprintf(what, sizeof what, "the name of tensor %zu", i);
        return truncated(r, at, need, what);
    }
    if (t->name.len == 0)
        return err_set(r->e, ERR_USAGE, "%s: tensor %zu has an empty name", r->path, i);
    if (t->name.len > GGUF_MAX_NAME)
        return err_set(r->e, ERR_USAGE, "%s: tensor %zu's name is %zu bytes long (GGUF allows %d)",
                       r->path, i, t->name.len, GGUF_MAX_NAME);
    shown(t->name, tn, sizeof tn);
    uint32_t nd = left(r) >= 4 ? gguf_le32(r->p + r->pos) : 0;
    if (left(r) >= 4 && (nd == 0 || nd > GGUF_MAX_DIMS))
        return err_set(r->e, ERR_USAGE, "%s: tensor '%s' has %u dimensions (1 to %d)", r->path, tn,
                       (unsigned)nd, GGUF_MAX_DIMS);
    if (left(r) < 4 + 8 * (size_t)nd + 12) {
        snprintf(what, sizeof what, "the shape, type and offset of tensor '%s'", tn);
        return truncated(r, r->pos, 4 + 8 * (uint64_t)nd + 12, what);
    }
    const unsigned char *p = r->p + r->pos + 4;
    t->n_dims = (int)nd;
    uint64_t count = 1;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) {
        uint64_t ne = d < (int)nd ? gguf_le64(p + 8 * d) : 1;
        if (ne == 0 || ne > INT64_MAX)
            return err_set(r->e, ERR_USAGE, "%s: tensor '%s' has a dimension of %llu", r->path, tn,
                           (unsigned long long)ne);
        if (ne > INT64_MAX / count)
            return err_set(r->e, ERR_USAGE, "%s: tensor '%s' is too large (its size overflows)",
                           r->path, tn);
        count *= ne;
        t->ne[d] = (int64_t)ne;
    }
    t->type = (int)gguf_le32(p + 8 * nd);
    t->offset = gguf_le64(p + 8 * nd + 4);
    r->pos += 4 + 8 * (size_t)nd + 12;
    const struct qtype_info *q = t->type >= 0 ? quant_info(t->type) : NULL;
    char qn[32];
    if (!q)
        return err_set(r->e, ERR_USAGE, "%s: tensor '%s' has type %s; logitlab reads %s", r->path,
                       tn, quant_name(t->type, qn, sizeof qn), quant_supported_list());
    if (t->ne[0] % q->block != 0)
        return err_set(
            r->e, ERR_USAGE,
            "%s: tensor '%s' has rows of %lld values, not a multiple of %s's block of %d", r->path,
            tn, (long long)t->ne[0], q->name, q->block);
    if (count / (uint64_t)q->block > SIZE_MAX / (uint64_t)q->bytes)
        return err_set(r->e, ERR_USAGE, "%s: tensor '%s' is too large (its size overflows)",
                       r->path, tn);
    t->bytes = (size_t)(count / (uint64_t)q->block * (uint64_t)q->bytes);
    if (t->offset % align != 0)
        return err_set(r->e, ERR_USAGE,
                       "%s: tensor '%s' is at offset %llu of the data section, not a multiple of "
                       "the alignment %u",
                       r->path, tn, (unsigned long long)t->offset, (unsigned)align);
    return 0;
}

/* Orders tensors by where their data starts (ties by file order). */
static int t_offset_cmp(const void *a, const void *b)
{
    const struct gguf_tensor *x = *(const struct gguf_tensor *const *)a;
    const struct gguf_tensor *y = *(const struct gguf_tensor *const *)b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return (x > y) - (x < y);
}

/* Names once each, and no two tensors sharing a byte. */
static int check_placement(struct rd *r, struct gguf *g)
{
    size_t n = g->n_tensors;
    char a[NAME_SHOWN], b[NAME_SHOWN];
    qsort(g->t_sorted, n, sizeof *g->t_sorted, t_name_cmp);
    for (size_t i = 1; i < n; i++)
        if (gguf_str_cmp(g->t_sorted[i - 1]->name, g->t_sorted[i]->name) == 0)
            return err_set(r->e, ERR_USAGE, "%s: tensor name '%s' appears twice", r->path,
                           shown(g->t_sorted[i]->name, a, sizeof a));
    const struct gguf_tensor **by_off = malloc((n ? n : 1) * sizeof *by_off);
    if (!by_off)
        return err_set(r->e, ERR_SYSTEM, "%s: out of memory (%zu tensors)", r->path, n);
    memcpy(by_off, g->t_sorted, n * sizeof *by_off);
    qsort(by_off, n, sizeof *by_off, t_offset_cmp);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (by_off[i]->offset - by_off[i - 1]->offset < by_off[i - 1]->bytes)
            rc = err_set(r->e, ERR_USAGE, "%s: tensors '%s' and '%s' overlap in the data section",
                         r->path, shown(by_off[i - 1]->name, a, sizeof a),
                         shown(by_off[i]->name, b, sizeof b));
    free(by_off);
    return rc;
}

/* Every tensor descriptor, then the data section, which starts at the first
 * multiple of the alignment after them; each tensor must lie inside it. */
static int read_tensors(struct rd *r, struct gguf *g, size_t n)
{
    g->tensors = calloc(n ? n : 1, sizeof *g->tensors);
    g->t_sorted = calloc(n ? n : 1, sizeof *g->t_sorted);
    if (!g->tensors || !g->t_sorted)
        return err_set(r->e, ERR_SYSTEM, "%s: out of memory (%zu tensors)", r->path, n);
    for (size_t i = 0; i < n; i++) {
        if (read_tensor(r, i, &g->tensors[i], g->alignment) < 0)
            return -1;
        g->n_tensors = i + 1;
        g->t_sorted[i] = &g->tensors[i];
    }
    /* pos <= size < 2^63 and the alignment < 2^32: no overflow. */
    uint64_t start = ((uint64_t)r->pos + g->alignment - 1) / g->alignment * g->alignment;
    size_t avail = start <= r->size ? r->size - (size_t)start : 0;
    g->data_offset = start <= r->size ? (size_t)start : r->size;
    for (size_t i = 0; i < n; i++) {
        struct gguf_tensor *t = &g->tensors[i];
        char tn[NAME_SHOWN];
        if (t->offset > avail || t->bytes > avail - t->offset)
            return err_set(r->e, ERR_USAGE,
                           "%s: truncated: tensor '%s' needs bytes %llu to %llu of the data "
                           "section, which holds %zu",
                           r->path, shown(t->name, tn, sizeof tn), (unsigned long long)t->offset,
                           (unsigned long long)(t->offset + t->bytes), avail);
        t->data = r->p + g->data_offset + t->offset;
    }
    return check_placement(r, g);
}

static int parse(struct gguf *g, struct err *e)
{
    struct rd r = { g->base, g->size, 0, g->path, e };
    uint64_t n_t = 0, n_kv = 0;
    if (read_header(&r, &g->version, &n_t, &n_kv) < 0)
        return -1;
    if (read_kvs(&r, g, (size_t)n_kv) < 0 || read_alignment(&r, g) < 0)
        return -1;
    return read_tensors(&r, g, (size_t)n_t);
}

static struct gguf *open_common(const char *name, const void *bytes, size_t size, int mapped,
                                struct err *e)
{
    struct gguf *g = calloc(1, sizeof *g);
    size_t n = strlen(name);
    char *path = malloc(n + 1);
    if (!g || !path) {
        if (mapped && size)
            munmap((void *)bytes, size);
        free(g), free(path);
        err_set(e, ERR_SYSTEM, "%s: out of memory", name);
        return NULL;
    }
    memcpy(path, name, n + 1);
    g->path = path;
    g->base = bytes;
    g->size = size;
    g->mapped = mapped && size;
    if (parse(g, e) < 0) {
        gguf_close(g);
        return NULL;
    }
    return g;
}

struct gguf *gguf_open_mem(const char *name, const void *bytes, size_t size, struct err *e)
{
    return open_common(name, size ? bytes : "", size, 0, e);
}

struct gguf *gguf_open(const char *path, struct err *e)
{
    /* O_NONBLOCK: a FIFO must be refused, not waited on. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        err_set(e, errno == ENOMEM ? ERR_SYSTEM : ERR_USAGE, "%s: cannot open: %s", path,
                strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        err_set(e, ERR_USAGE, "%s: not a regular file", path);
        return NULL;
    }
    if ((uint64_t)st.st_size > SIZE_MAX / 2) {
        close(fd);
        err_set(e, ERR_USAGE, "%s: too large to map (%lld bytes)", path, (long long)st.st_size);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    void *p = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : (void *)"";
    int saved = errno;
    close(fd);
    if (p == MAP_FAILED) {
        err_set(e, ERR_SYSTEM, "%s: cannot map %zu bytes: %s", path, size, strerror(saved));
        return NULL;
    }
    return open_common(path, p, size, 1, e);
}

void gguf_close(struct gguf *g)
{
    if (!g)
        return;
    if (g->mapped)
        munmap((void *)g->base, g->size);
    free(g->kv);
    free(g->kv_sorted);
    free(g->tensors);
    free(g->t_sorted);
    free(g->path);
    free(g);
}

/* ---- lookups and getters ----------------------------------------------- */

const struct gguf_kv *gguf_find(const struct gguf *g, const char *key)
{
    struct gguf_kv k = { .key = { key, strlen(key) } };
    const struct gguf_kv *kp = &k;
    if (g->n_kv == 0)
        return NULL;
    const struct gguf_kv **hit = bsearch(&kp, g->kv_sorted, g->n_kv, sizeof kp, kv_ptr_cmp);
    return hit ? *hit : NULL;
}

const struct gguf_tensor *gguf_tensor(const struct gguf *g, const char *name)
{
    struct gguf_tensor t = { .name = { name, strlen(name) } };
    const struct gguf_tensor *tp = &t;
    if (g->n_tensors == 0)
        return NULL;
    const struct gguf_tensor **hit = bsearch(&tp, g->t_sorted, g->n_tensors, sizeof tp, t_name_cmp);
    return hit ? *hit : NULL;
}
