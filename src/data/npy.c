#include "data/npy.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/readfile.h"

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

/* The value of 'key' in the header dict, as the text after its colon. */
static const char *dict_value(const char *hdr, const char *key)
{
    char quoted[32];
    for (int q = 0; q < 2; q++) {
        snprintf(quoted, sizeof quoted, q ? "\"%s\"" : "'%s'", key);
        const char *p = strstr(hdr, quoted);
        if (p) {
            p += strlen(quoted);
            while (isspace((unsigned char)*p))
                p++;
            if (*p != ':')
                return NULL;
            p++;
            while (isspace((unsigned char)*p))
                p++;
            return p;
        }
    }
    return NULL;
}

/* The magic string, the version and the header's length: the header is
 * the *hlen bytes from *off, ending in a newline. */
static int read_preamble(const char *path, const unsigned char *buf, size_t len, size_t *off,
                         size_t *hlen, struct err *e)
{
    if (len < MAGIC_LEN + 4 || memcmp(buf, MAGIC, MAGIC_LEN) != 0)
        return err_set(e, ERR_USAGE, "%s: not a .npy file (it does not start with \\x93NUMPY)",
                       path);
    int major = buf[6];
    if (major == 1) {
        *hlen = buf[8] | (size_t)buf[9] << 8;
        *off = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return err_set(e, ERR_USAGE, "%s: truncated header", path);
        *hlen = buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        *off = 12;
    } else {
        return err_set(e, ERR_USAGE, "%s: .npy format version %d is not supported (1 to 3)", path,
                       major);
    }
    if (*hlen > 65536 || *off + *hlen > len)
        return err_set(e, ERR_USAGE, "%s: truncated header (it says %zu bytes)", path, *hlen);
    if (*hlen == 0 || buf[*off + *hlen - 1] != '\n')
        return err_set(e, ERR_USAGE,
                       "%s: malformed header (%zu bytes that do not end in a newline)", path,
                       *hlen);
    return 0;
}

/* The dtype, from 'descr': float32 (*esize 4) or float16 (*esize 2, *half 1). */
static int read_descr(const char *path, const char *hdr, int *esize, int *half, struct err *e)
{
    const char *v = dict_value(hdr, "descr");
    char descr[16] = "";
    if (v && (*v == '\'' || *v == '"')) {
        char q = *v++;
        size_t n = strcspn(v, "'\"");
        if (v[n] == q && n < sizeof descr) {
            memcpy(descr, v, n);
            descr[n] = '\0';
        }
    }
    if (!descr[0])
        return err_set(e, ERR_USAGE, "%s: the header has no 'descr' (the dtype)", path);
    if (strcmp(descr, "<f4") == 0) {
        *esize = 4;
        return 0;
    }
    if (strcmp(descr, "<f2") == 0) {
        *esize = 2;
        *half = 1;
        return 0;
    }
    return err_set(e, ERR_USAGE,
                   "%s: dtype '%s' is not supported (little-endian float32 '<f4' or float16 "
                   "'<f2'; save with logits.float().numpy())",
                   path, descr);
}

/* 'fortran_order' must be there, and False. */
static int check_order(const char *path, const char *hdr, struct err *e)
{
    const char *v = dict_value(hdr, "fortran_order");
    if (!v)
        return err_set(e, ERR_USAGE, "%s: the header has no 'fortran_order'", path);
    if (strncmp(v, "False", 5) != 0)
        return err_set(e, ERR_USAGE,
                       "%s: the array is in Fortran order; save it in C order "
                       "(numpy.ascontiguousarray)",
                       path);
    return 0;
}

/* 'shape': [V] or [steps, V] within the limits, into a->rows and a->cols;
 * *nd is how many dimensions it has. */
static int read_shape(struct npy *a, const char *path, const char *hdr, int *nd, struct err *e)
{
    const char *v = dict_value(hdr, "shape");
    if (!v || *v != '(')
        return err_set(e, ERR_USAGE, "%s: the header has no 'shape'", path);
    long dims[3];
    *nd = 0;
    const char *p = v + 1;
    for (;;) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (*p == ')')
            break;
        char *end;
        errno = 0;
        long d = strtol(p, &end, 10);
        if (end == p || errno || d < 0 || *nd == 3)
            return err_set(e, ERR_USAGE, "%s: cannot read the shape '%.40s'", path, v);
        dims[(*nd)++] = d;
        p = end;
    }
    if (*nd < 1 || *nd > 2)
        return err_set(e, ERR_USAGE, "%s: shape has %d dimensions; logits are [V] or [steps, V]",
                       path, *nd);
    long rows = *nd == 2 ? dims[0] : 1, cols = *nd == 2 ? dims[1] : dims[0];
    if (rows < 1 || cols < 2 || rows > NPY_MAX_ROWS || cols > NPY_MAX_COLS)
        return err_set(e, ERR_USAGE,
                       "%s: shape (%ld, %ld) is not one of logits (1 to %d steps of 2 to %d "
                       "tokens)",
                       path, rows, cols, NPY_MAX_ROWS, NPY_MAX_COLS);
    a->rows = (int)rows;
    a->cols = (int)cols;
    return 0;
}

/* The dtype, the order and the shape from the header's dict. */
static int read_dict(struct npy *a, const char *path, const char *hdr, int *esize, int *half,
                     int *nd, struct err *e)
{
    if (read_descr(path, hdr, esize, half, e) < 0 || check_order(path, hdr, e) < 0 ||
        read_shape(a, path, hdr, nd, e) < 0)
        return -1;
    return 0;
}

/* The values after the header into a->data as float32 (a->rows and a->cols
 * are set); every one must be finite. */
static int read_values(struct npy *a, const char *path, const unsigned char *p, int half, int nd,
                       struct err *e)
{
    size_t count = (size_t)a->rows * (size_t)a->cols;
    a->data = malloc(count * sizeof *a->data);
    if (!a->data)
        return err_set(e, ERR_SYSTEM, "out of memory for %zu logits", count);
    for (size_t i = 0; i < count; i++) {
        float x;
        if (half) {
            x = npy_half((unsigned short)(p[2 * i] | p[2 * i + 1] << 8));
        } else {
            uint32_t bits = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                            (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
            memcpy(&x, &bits, sizeof x);
        }
        if (!isfinite(x)) {
            int row = (int)(i / (size_t)a->cols), col = (int)(i % (size_t)a->cols);
            npy_free(a);
            if (row || (nd == 2))
                return err_set(e, ERR_USAGE, "%s: step %d, token %d: the logit is %s", path,
                               row + 1, col,
                               isnan(x) ? "NaN"
                               : x > 0  ? "+inf"
                                        : "-inf");
            return err_set(e, ERR_USAGE, "%s: token %d: the logit is %s", path, col,
                           isnan(x) ? "NaN"
                           : x > 0  ? "+inf"
                                    : "-inf");
        }
        a->data[i] = x;
    }
    return 0;
}

int npy_parse(struct npy *a, const char *path, const unsigned char *buf, size_t len, struct err *e)
{
    memset(a, 0, sizeof *a);
    size_t hlen = 0, off = 0;
    if (read_preamble(path, buf, len, &off, &hlen, e) < 0)
        return -1;
    char *hdr = malloc(hlen + 1);
    if (!hdr)
        return err_set(e, ERR_SYSTEM, "out of memory");
    memcpy(hdr, buf + off, hlen);
    hdr[hlen] = '\0';
    int esize = 0, half = 0, nd = 0;
    int rc = read_dict(a, path, hdr, &esize, &half, &nd, e);
    free(hdr);
    if (rc < 0)
        return -1;
    size_t count = (size_t)a->rows * (size_t)a->cols, data = off + hlen;
    if (len - data < count * (size_t)esize) {
        err_set(e, ERR_USAGE, "%s: truncated: the shape needs %zu bytes of data, the file has %zu",
                path, count * (size_t)esize, len - data);
        a->rows = a->cols = 0;
        return -1;
    }
    return read_values(a, path, buf + data, half, nd, e);
}

int npy_load(struct npy *a, const char *path, struct err *e)
{
    memset(a, 0, sizeof *a);
    FILE *f = readfile_open(path, e); /* a FIFO or a directory is refused, not waited on */
    if (!f)
        return -1;
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return err_set(e, ERR_USAGE, "%s: cannot seek", path);
    }
    long size = ftell(f);
    rewind(f);
    if (size < 0 || (size_t)size > NPY_MAX_BYTES) {
        fclose(f);
        return err_set(e, ERR_USAGE, "%s: %s", path,
                       size < 0 ? "cannot tell its size"
                                : "larger than 1 GiB (at most 256 steps are played)");
    }
    unsigned char *buf = malloc((size_t)size + 1);
    if (!buf) {
        fclose(f);
        return err_set(e, ERR_SYSTEM, "out of memory reading %s", path);
    }
    size_t got = fread(buf, 1, (size_t)size, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != (size_t)size) {
        free(buf);
        return err_set(e, ERR_USAGE, "%s: read error", path);
    }
    int rc = npy_parse(a, path, buf, got, e);
    free(buf);
    return rc;
}

void npy_free(struct npy *a)
{
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
