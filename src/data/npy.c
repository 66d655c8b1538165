#include "data/npy.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/readfile.h"
#include "core/sampler_rules.h"

#define MAGIC     "\x93NUMPY"
#define MAGIC_LEN 6

float npy_half(unsigned short h)
{
    int sign = h >> 15, ex = (h >> 10) & 0x1f, man = h & 0x3ff;
    float v;
    if (ex == 0)
        v = ldexpf((float)man, -24); /* subnormal: man x 2^-24 */
    else if (ex == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf((float)(man | 0x400), ex - 25);
    return sign ? -v : v;
}

/* ---- the header: a Python dict literal ------------------------------------ */

/* The header is "an ASCII string which contains a Python literal expression
 * of a dictionary" (NumPy's format spec) with exactly the keys 'descr' (a
 * string), 'fortran_order' (True or False) and 'shape' (a tuple of
 * non-negative ints). It is read as such a literal, token by token, and
 * anything else is refused: looking keys up as substrings would accept
 * '(1 128256)' as a shape or find 'descr' inside another value. */
struct dict {
    const char *path;
    const char *p, *end; /* the header's text, its final newline left out */
    char descr[16];
    int fortran, nd, have; /* have: the keys given, a bit each */
    long long dims[3];
    char shape_text[48]; /* the shape as written, for messages */
};

enum { HAVE_DESCR = 1, HAVE_ORDER = 2, HAVE_SHAPE = 4 };

static void skip_space(struct dict *d)
{
    while (d->p < d->end &&
           (*d->p == ' ' || *d->p == '\t' || *d->p == '\n' || *d->p == '\r' || *d->p == '\f'))
        d->p++;
}

/* Up to n - 1 bytes of the header from p as they stand, for a message:
 * dict_parse has refused any byte that is not printable ASCII or a space,
 * so an excerpt cannot carry a control character to the terminal. */
static const char *excerpt(const struct dict *d, const char *p, char *buf, size_t n)
{
    size_t len = (size_t)(d->end - p);
    if (len > n - 1)
        len = n - 1;
    memcpy(buf, p, len);
    while (len > 0 && isspace((unsigned char)buf[len - 1]))
        len--; /* the padding */
    buf[len] = '\0';
    return buf;
}

static int syntax(struct dict *d, struct err *e, const char *what)
{
    char near[24];
    if (d->p == d->end)
        return err_set(e, ERR_USAGE, "%s: malformed header: %s at its end", d->path, what);
    return err_set(e, ERR_USAGE, "%s: malformed header: %s at '%s'", d->path, what,
                   excerpt(d, d->p, near, sizeof near));
}

/* A quoted string without escapes (NumPy writes none) into out (n bytes). */
static int dict_string(struct dict *d, char *out, size_t n, struct err *e)
{
    if (d->p == d->end || (*d->p != '\'' && *d->p != '"'))
        return syntax(d, e, "a quoted string expected");
    char q = *d->p++;
    const char *s = d->p;
    while (d->p < d->end && *d->p != q && *d->p != '\\')
        d->p++;
    if (d->p == d->end || *d->p != q)
        return syntax(d, e, "a string with an escape or no closing quote");
    size_t len = (size_t)(d->p - s);
    d->p++;
    if (len >= n) /* longer than any key or dtype this reader knows */
        len = n - 1;
    memcpy(out, s, len);
    out[len] = '\0';
    return 0;
}

/* True or False, as a whole word. */
static int dict_bool(struct dict *d, int *out, struct err *e)
{
    const char *s = d->p;
    while (d->p < d->end && (isalnum((unsigned char)*d->p) || *d->p == '_'))
        d->p++;
    size_t len = (size_t)(d->p - s);
    if (len == 4 && memcmp(s, "True", 4) == 0)
        *out = 1;
    else if (len == 5 && memcmp(s, "False", 5) == 0)
        *out = 0;
    else {
        /* Show the word, or what stands there instead of one. */
        while (len == 0 && d->p < d->end && *d->p && !strchr(",} \t", *d->p))
            d->p++;
        size_t show = (size_t)(d->p - s) + 1;
        char word[24];
        return err_set(e, ERR_USAGE, "%s: the header's 'fortran_order' is '%s', not True or False",
                       d->path, excerpt(d, s, word, show < sizeof word ? show : sizeof word));
    }
    return 0;
}

/* One dimension: decimal digits, no sign, no leading zero (as Python has
 * it), capped above any limit so that it cannot overflow. */
static int dict_dim(struct dict *d, long long *out)
{
    const char *s = d->p;
    long long v = 0;
    while (d->p < d->end && isdigit((unsigned char)*d->p)) {
        v = v > (1LL << 40) ? v : v * 10 + (*d->p - '0');
        d->p++;
    }
    if (d->p == s || (*s == '0' && d->p - s > 1))
        return -1;
    *out = v;
    return 0;
}

/* A tuple of dimensions: "()", "(V,)" or "(a, b)", with an optional
 * trailing comma after the last of two or more; "(V)" is a number. */
static int dict_shape(struct dict *d, struct err *e)
{
    const char *s = d->p;
    if (d->p == d->end || *d->p != '(')
        return syntax(d, e, "a shape tuple '(...)' expected");
    d->p++;
    int ok = 1, comma = 0;
    d->nd = 0;
    for (skip_space(d); ok && d->p < d->end && *d->p != ')';) {
        long long v;
        ok = dict_dim(d, &v) == 0;
        if (ok && d->nd < 3)
            d->dims[d->nd] = v;
        d->nd += ok;
        skip_space(d);
        comma = ok && d->p < d->end && *d->p == ',';
        ok = ok && d->p < d->end && (comma || *d->p == ')');
        d->p += comma;
        skip_space(d);
    }
    ok = ok && d->p < d->end && (d->nd != 1 || comma);
    /* The shape as written, to its closing parenthesis, for messages. */
    const char *rp = memchr(s, ')', (size_t)(d->end - s));
    size_t written = rp ? (size_t)(rp - s) + 1 : (size_t)(d->end - s);
    excerpt(d, s, d->shape_text,
            written + 1 < sizeof d->shape_text ? written + 1 : sizeof d->shape_text);
    if (ok) {
        d->p++;
        return 0;
    }
    return err_set(e, ERR_USAGE, "%s: the shape '%s' is not a tuple of non-negative integers",
                   d->path, d->shape_text);
}

/* One "key: value" of the dict. */
static int dict_item(struct dict *d, struct err *e)
{
    char key[32];
    if (dict_string(d, key, sizeof key, e) < 0)
        return -1;
    int bit = strcmp(key, "descr") == 0           ? HAVE_DESCR
              : strcmp(key, "fortran_order") == 0 ? HAVE_ORDER
              : strcmp(key, "shape") == 0         ? HAVE_SHAPE
                                                  : 0;
    if (!bit)
        return err_set(e, ERR_USAGE,
                       "%s: the header has a key '%s' (a .npy header has descr, fortran_order "
                       "and shape)",
                       d->path, key);
    if (d->have & bit)
        return err_set(e, ERR_USAGE, "%s: the header gives '%s' twice", d->path, key);
    d->have |= bit;
    skip_space(d);
    if (d->p == d->end || *d->p != ':')
        return syntax(d, e, "':' expected");
    d->p++;
    skip_space(d);
    if (bit == HAVE_DESCR && d->p < d->end && *d->p != '\'' && *d->p != '"')
        return err_set(e, ERR_USAGE,
                       "%s: the header's 'descr' is not a string (a structured dtype is not "
                       "supported: save plain float32 logits)",
                       d->path);
    return bit == HAVE_DESCR   ? dict_string(d, d->descr, sizeof d->descr, e)
           : bit == HAVE_ORDER ? dict_bool(d, &d->fortran, e)
                               : dict_shape(d, e);
}

/* The whole dict: "{" items separated by commas (one may trail) "}", then
 * nothing but the padding. */
static int dict_parse(struct dict *d, struct err *e)
{
    for (const char *q = d->p; q < d->end; q++)
        if ((*q < 0x20 || *q > 0x7E) && *q != '\t' && *q != '\n' && *q != '\r' && *q != '\f')
            return err_set(e, ERR_USAGE,
                           "%s: the header holds byte 0x%02X (a .npy header is printable ASCII)",
                           d->path, (unsigned char)*q);
    skip_space(d);
    if (d->p == d->end || *d->p != '{')
        return syntax(d, e, "a dictionary '{...}' expected");
    d->p++;
    for (;;) {
        skip_space(d);
        if (d->p == d->end)
            return err_set(e, ERR_USAGE, "%s: malformed header: the dictionary has no closing '}'",
                           d->path);
        if (*d->p == '}')
            break;
        if (dict_item(d, e) < 0)
            return -1;
        skip_space(d);
        if (d->p < d->end && *d->p == ',')
            d->p++;
        else if (d->p < d->end && *d->p != '}')
            return syntax(d, e, "',' or '}' expected");
    }
    d->p++;
    skip_space(d);
    if (d->p != d->end)
        return syntax(d, e, "text after the dictionary");
    return 0;
}

/* The magic string, the version and the header's length: the header is
 * the *hlen bytes from *off, ending in a newline. buf holds at least the
 * first 12 bytes of a file of len bytes (all of them when it is shorter). */
static int read_preamble(const char *path, const unsigned char *buf, size_t len, size_t *off,
                         size_t *hlen, struct err *e)
{
    if (len < MAGIC_LEN + 4 || memcmp(buf, MAGIC, MAGIC_LEN) != 0)
        return err_set(e, ERR_USAGE, "%s: not a .npy file (it does not start with \\x93NUMPY)",
                       path);
    int major = buf[6], minor = buf[7];
    if (major < 1 || major > 3 || minor != 0)
        return err_set(e, ERR_USAGE, "%s: .npy format version %d.%d is not supported (1.0 to 3.0)",
                       path, major, minor);
    if (major == 1) {
        *hlen = buf[8] | (size_t)buf[9] << 8;
        *off = 10;
    } else {
        if (len < 12)
            return err_set(e, ERR_USAGE, "%s: truncated header", path);
        *hlen = buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        *off = 12;
    }
    if (*hlen > 65536 || *off + *hlen > len)
        return err_set(e, ERR_USAGE, "%s: truncated header (it says %zu bytes)", path, *hlen);
    return 0;
}

/* What the dict says, checked: the dtype into a->esize and a->half, the
 * shape into a->rows, a->cols and a->nd. */
static int check_dict(struct npy *a, const struct dict *d, struct err *e)
{
    const char *path = d->path;
    if (!(d->have & HAVE_DESCR))
        return err_set(e, ERR_USAGE, "%s: the header has no 'descr' (the dtype)", path);
    if (!(d->have & HAVE_ORDER))
        return err_set(e, ERR_USAGE, "%s: the header has no 'fortran_order'", path);
    if (!(d->have & HAVE_SHAPE))
        return err_set(e, ERR_USAGE, "%s: the header has no 'shape'", path);
    a->half = strcmp(d->descr, "<f2") == 0;
    if (!a->half && strcmp(d->descr, "<f4") != 0)
        return err_set(e, ERR_USAGE,
                       "%s: dtype '%s' is not supported (little-endian float32 '<f4' or float16 "
                       "'<f2'; save with logits.float().numpy())",
                       path, d->descr);
    if (d->fortran)
        return err_set(e, ERR_USAGE,
                       "%s: the array is in Fortran order; save it in C order "
                       "(numpy.ascontiguousarray)",
                       path);
    if (d->nd < 1 || d->nd > 2)
        return err_set(e, ERR_USAGE, "%s: shape has %d dimensions; logits are [V] or [steps, V]",
                       path, d->nd);
    long long rows = d->nd == 2 ? d->dims[0] : 1, cols = d->dims[d->nd - 1];
    if (rows < 1 || cols < 2 || rows > NPY_MAX_ROWS || cols > NPY_MAX_COLS)
        return err_set(e, ERR_USAGE,
                       "%s: shape %s is not one of logits (1 to %d steps of 2 to %d tokens)", path,
                       d->shape_text, NPY_MAX_ROWS, NPY_MAX_COLS);
    a->esize = a->half ? 2 : 4;
    a->nd = d->nd;
    a->rows = (int)rows;
    a->cols = (int)cols;
    return 0;
}

/* The header of a file of size bytes, whose first bytes are at head (the
 * preamble and the whole header when the file has them): every field, and
 * that the data the shape needs is exactly what the file holds after it.
 * Nothing beyond the header is read, so no claim costs memory. */
static int read_header(struct npy *a, const char *path, const unsigned char *head, size_t size,
                       struct err *e)
{
    size_t hlen = 0, off = 0;
    if (read_preamble(path, head, size, &off, &hlen, e) < 0)
        return -1;
    if (hlen == 0 || head[off + hlen - 1] != '\n')
        return err_set(e, ERR_USAGE,
                       "%s: malformed header (%zu bytes that do not end in a newline)", path, hlen);
    struct dict d = { .path = path,
                      .p = (const char *)head + off,
                      .end = (const char *)head + off + hlen - 1 };
    if (dict_parse(&d, e) < 0 || check_dict(a, &d, e) < 0)
        return -1;
    size_t need = (size_t)a->rows * (size_t)a->cols * (size_t)a->esize;
    a->data_off = off + hlen;
    if (size - a->data_off != need)
        return err_set(e, ERR_USAGE, "%s: %s: the shape needs %zu bytes of data, the file has %zu",
                       path, size - a->data_off < need ? "truncated" : "trailing data", need,
                       size - a->data_off);
    return 0;
}

/* ---- the data -------------------------------------------------------------- */

/* Row r of little-endian values, whose bytes are at src, into dst as
 * floats. src may lie inside dst's own row, at its start (float32) or in
 * its upper half (float16): value i is read before float i is stored, and
 * float i never reaches a value after it, so one buffer does for both.
 * Every value must be finite. */
static int convert_row(const struct npy *a, const char *path, int r, const unsigned char *src,
                       float *dst, struct err *e)
{
    for (int i = 0; i < a->cols; i++) {
        float x;
        if (a->half) {
            x = npy_half((unsigned short)(src[2 * i] | src[2 * i + 1] << 8));
        } else {
            const unsigned char *p = src + 4 * (size_t)i;
            uint32_t bits =
                (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
            memcpy(&x, &bits, sizeof x);
        }
        if (!isfinite(x)) {
            const char *what = isnan(x) ? "NaN" : x > 0 ? "+inf" : "-inf";
            if (r || a->nd == 2)
                return err_set(e, ERR_USAGE, "%s: step %d, token %d: the logit is %s", path, r + 1,
                               i, what);
            return err_set(e, ERR_USAGE, "%s: token %d: the logit is %s", path, i, what);
        }
        if (!rule_z_in_range(x)) { /* the sampler would refuse the step */
            if (r || a->nd == 2)
                return err_set(e, ERR_USAGE,
                               "%s: step %d, token %d: the logit %g is past the sampler's limit "
                               "of 1e30",
                               path, r + 1, i, (double)x);
            return err_set(e, ERR_USAGE,
                           "%s: token %d: the logit %g is past the sampler's limit of 1e30", path,
                           i, (double)x);
        }
        dst[i] = x;
    }
    return 0;
}

static int alloc_data(struct npy *a, struct err *e)
{
    size_t count = (size_t)a->rows * (size_t)a->cols;
    a->data = malloc(count * sizeof *a->data);
    if (!a->data)
        return err_set(e, ERR_SYSTEM, "out of memory for %zu logits", count);
    return 0;
}

int npy_parse(struct npy *a, const char *path, const unsigned char *buf, size_t len, struct err *e)
{
    memset(a, 0, sizeof *a);
    if (read_header(a, path, buf, len, e) < 0 || alloc_data(a, e) < 0) {
        npy_free(a);
        return -1;
    }
    size_t row_bytes = (size_t)a->cols * (size_t)a->esize;
    for (int r = 0; r < a->rows; r++)
        if (convert_row(a, path, r, buf + a->data_off + (size_t)r * row_bytes,
                        a->data + (size_t)r * (size_t)a->cols, e) < 0) {
            npy_free(a);
            return -1;
        }
    return 0;
}

int npy_open(struct npy *a, const char *path, struct err *e)
{
    memset(a, 0, sizeof *a);
    FILE *f = readfile_open(path, e); /* a FIFO or a directory is refused, not waited on */
    if (!f)
        return -1;
    struct stat st;
    int known = fstat(fileno(f), &st) == 0 && st.st_size >= 0;
    if (!known || (unsigned long long)st.st_size > NPY_MAX_BYTES) {
        fclose(f);
        return err_set(e, ERR_USAGE, "%s: %s", path,
                       !known ? "cannot tell its size"
                              : "larger than 1 GiB (at most 256 steps are played)");
    }
    /* The preamble, then the header it announces: at most 64 KiB. */
    size_t size = (size_t)st.st_size, want = size < 12 ? size : 12, off = 0, hlen = 0;
    unsigned char pre[12], *head = NULL;
    int rc = fread(pre, 1, want, f) == want ? read_preamble(path, pre, size, &off, &hlen, e)
                                            : err_set(e, ERR_USAGE, "%s: read error", path);
    /* A header shorter than the 12 bytes read already (version 1's
     * preamble is 10) is all in them. */
    size_t hsize = off + hlen > want ? off + hlen : want;
    if (rc == 0 && !(head = malloc(hsize)))
        rc = err_set(e, ERR_SYSTEM, "out of memory reading %s", path);
    if (rc == 0) {
        memcpy(head, pre, want);
        if (fread(head + want, 1, hsize - want, f) != hsize - want)
            rc = err_set(e, ERR_USAGE, "%s: read error", path);
    }
    rc = rc == 0 ? read_header(a, path, head, size, e) : -1;
    free(head);
    if (rc < 0 || fseek(f, (long)a->data_off, SEEK_SET) != 0) {
        fclose(f);
        memset(a, 0, sizeof *a);
        return rc < 0 ? -1 : err_set(e, ERR_USAGE, "%s: cannot seek", path);
    }
    a->file = f;
    a->path = path;
    return 0;
}

int npy_read(struct npy *a, struct err *e)
{
    if (alloc_data(a, e) < 0) {
        npy_free(a);
        return -1;
    }
    /* Each row's bytes go straight into the row's own floats (the upper
     * half for float16) and are converted there: no second copy. */
    size_t row_bytes = (size_t)a->cols * (size_t)a->esize;
    for (int r = 0; r < a->rows; r++) {
        float *row = a->data + (size_t)r * (size_t)a->cols;
        unsigned char *src = (unsigned char *)row + ((size_t)a->cols * sizeof *row - row_bytes);
        if (fread(src, 1, row_bytes, a->file) != row_bytes) {
            err_set(e, ERR_USAGE, "%s: read error", a->path);
            npy_free(a);
            return -1;
        }
        if (convert_row(a, a->path, r, src, row, e) < 0) {
            npy_free(a);
            return -1;
        }
    }
    fclose(a->file);
    a->file = NULL;
    return 0;
}

int npy_load(struct npy *a, const char *path, struct err *e)
{
    if (npy_open(a, path, e) < 0)
        return -1;
    return npy_read(a, e);
}

void npy_free(struct npy *a)
{
    if (a->file)
        fclose(a->file);
    free(a->data);
    memset(a, 0, sizeof *a);
}

int npy_write(FILE *out, const float *data, int rows, int cols, struct err *e)
{
    char dict[128];
    if (rows == 1)
        snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }",
                 cols);
    else
        snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }",
                 rows, cols);
    /* The header, padded with spaces to a multiple of 64 bytes with its
     * newline, as NumPy writes it, so the data start aligned. */
    size_t len = strlen(dict), total = 10 + len + 1;
    size_t pad = (64 - total % 64) % 64;
    unsigned char head[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0 };
    size_t hlen = len + pad + 1;
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    int ok = fwrite(head, 1, sizeof head, out) == sizeof head && fputs(dict, out) >= 0;
    for (size_t i = 0; ok && i < pad; i++)
        ok = fputc(' ', out) != EOF;
    ok = ok && fputc('\n', out) != EOF;
    /* Little-endian floats: this machine's order, checked once. */
    const uint32_t one = 1;
    if (*(const unsigned char *)&one != 1)
        return err_set(e, ERR_SYSTEM, "writing .npy on a big-endian machine is not supported");
    size_t n = (size_t)rows * (size_t)cols;
    ok = ok && fwrite(data, sizeof *data, n, out) == n;
    return ok ? 0 : err_set(e, ERR_SYSTEM, "writing the .npy file failed");
}
