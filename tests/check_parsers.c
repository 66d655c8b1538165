/* check_parsers.c - hostile inputs to the readers (issue 12, classes 5 and 7).
 *
 * Class 5, memory before refusal: a .npy header is checked whole (against
 * the file's size and the vocabulary too) before its data is read, and an
 * accepted file is read into its final float array with no second copy.
 * Class 7, strict parsers: text and binary vocabularies, .npy headers as
 * the Python dict literal NumPy's format defines, sizes that overflow,
 * empty 'try' alternatives, duplicate keys in the configuration file and
 * duplicate lesson ids in one directory.
 *
 * Every bad file is written into a fresh temporary directory and read the
 * way the program reads it; each refusal is asserted as its exact one-line
 * message, with the file (and the line where there is one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/catalog.h"
#include "data/config.h"
#include "data/keys.h"
#include "data/lesson.h"
#include "data/npy.h"
#include "data/vocab.h"
#include "suites.h"

/* ---- a temporary directory ----------------------------------------------- */

static char DIR_[64];
static char PATH_[4][128]; /* the last few paths put() made */
static int path_next;

static void tmp_setup(void)
{
    snprintf(DIR_, sizeof DIR_, "/tmp/logitlab-parsers-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(DIR_));
}

static void tmp_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", DIR_);
    ck_assert_int_eq(system(cmd), 0);
}

/* Writes len bytes to DIR_/name; returns the path (valid for four calls). */
static const char *put(const char *name, const void *bytes, size_t len)
{
    char *path = PATH_[path_next++ % 4];
    snprintf(path, sizeof PATH_[0], "%s/%s", DIR_, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

static const char *put_text(const char *name, const char *text)
{
    return put(name, text, strlen(text));
}

/* The message, with the temporary directory written as "DIR". */
static const char *relative(const char *msg)
{
    static char buf[ERR_MSG_MAX + 64];
    size_t n = strlen(DIR_), k = 0;
    for (const char *p = msg; *p && k + 4 < sizeof buf;)
        if (strncmp(p, DIR_, n) == 0) {
            memcpy(buf + k, "DIR", 3);
            k += 3;
            p += n;
        } else {
            buf[k++] = *p++;
        }
    buf[k] = '\0';
    return buf;
}

/* ---- text and binary vocabularies ---------------------------------------- */

static void vocab_refused(const char *text, size_t len, const char *want)
{
    struct vocab v;
    struct err e;
    const char *path = put("v.txt", text, len);
    ck_assert_int_eq(vocab_load(&v, path, &e), -1);
    ck_assert_str_eq(relative(e.msg), want);
    ck_assert_ptr_null(strchr(e.msg, '\n')); /* one line, whatever the file holds */
    ck_assert_ptr_null(strchr(e.msg, '\033'));
}

/* \xNN takes exactly two hex digits (README, data/README.md): before the
 * fix, "\x4" took the newline as its second digit (every later id moved
 * up by one) and sscanf's %2x took "-1" and " 5". */
START_TEST(test_vocab_escapes)
{
    const char *want = "DIR/v.txt:2: \\x takes exactly two hex digits (such as \\x0A)";
    vocab_refused("a\nb\\x4\nc\nd\n", 12, want);
    vocab_refused("a\nb\\x-1\nc\n", 10, want);
    vocab_refused("a\nb\\x 5\nc\n", 10, want);
    vocab_refused("a\nb\\xg0\nc\n", 10, want);
    vocab_refused("a\nb\\x4", 6, want); /* cut by the end of the file */
    /* A backslash at the end of a line: one line of message, not two (the
     * old "unknown escape \" followed by the newline itself). */
    vocab_refused("a\nb\\\nc\n", 7,
                  "DIR/v.txt:2: the line ends in a backslash (a backslash is \\\\)");
    vocab_refused("a\nb\\", 4, "DIR/v.txt:2: the line ends in a backslash (a backslash is \\\\)");
    vocab_refused("a\nb\\q\n", 6, "DIR/v.txt:2: unknown escape \\q (use \\n \\t \\\\ \\xNN)");
    vocab_refused("a\n\\\033[2J\n", 7,
                  "DIR/v.txt:2: unknown escape: a backslash before byte 0x1B (use \\n \\t \\\\ "
                  "\\xNN)");
    /* The good escapes, and the ids after them where they belong. */
    struct vocab v;
    struct err e;
    const char *path = put_text("ok.txt", "\\x41\\x4a\nt\\tn\\n\n\\\\\nlast\n");
    ck_assert_msg(vocab_load(&v, path, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(v.n, 4);
    size_t len;
    ck_assert_str_eq(vocab_token(&v, 0), "AJ");
    const char *b = vocab_bytes(&v, 1, &len);
    ck_assert_uint_eq(len, 4);
    ck_assert_mem_eq(b, "t\tn\n", 4);
    b = vocab_bytes(&v, 2, &len);
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(b[0], '\\');
    ck_assert_str_eq(vocab_token(&v, 3), "last");
    vocab_free(&v);
}
END_TEST

/* A CRLF file: one carriage return before each newline (and before the
 * end of the file) ends the line; it is not a byte of the token, which
 * before the fix ended in \r every one. A token's own CR is \x0D. */
START_TEST(test_vocab_crlf)
{
    struct vocab v;
    struct err e;
    const char *path = put_text("crlf.txt", "a\r\nb\\x0D\r\nc\rd\r\n\r\ne\r");
    ck_assert_msg(vocab_load(&v, path, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(v.n, 5);
    size_t len;
    const char *b = vocab_bytes(&v, 0, &len);
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(b[0], 'a');
    b = vocab_bytes(&v, 1, &len);
    ck_assert_uint_eq(len, 2);
    ck_assert_mem_eq(b, "b\r", 2);
    b = vocab_bytes(&v, 2, &len); /* a CR inside a line stays */
    ck_assert_uint_eq(len, 3);
    ck_assert_mem_eq(b, "c\rd", 3);
    vocab_bytes(&v, 3, &len);
    ck_assert_uint_eq(len, 0);
    b = vocab_bytes(&v, 4, &len);
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(b[0], 'e');
    vocab_free(&v);
}
END_TEST

/* LLVOCAB1 with 3 tokens "a" "b" "c" and first special id first. */
static const char *binary_vocab(unsigned first)
{
    unsigned char d[20 + 16 + 3] = "LLVOCAB1";
    const unsigned fields[7] = { 3, first, 3, 0, 1, 2, 3 };
    for (int i = 0; i < 7; i++)
        for (int k = 0; k < 4; k++)
            d[8 + 4 * i + k] = (unsigned char)(fields[i] >> (8 * k));
    memcpy(d + 36, "abc", 3);
    return put("v.bin", d, sizeof d);
}

/* The first-special field is an id from 0 to the count (the count: none
 * special). 0xFFFFFFFF was taken as -1: every token special. */
START_TEST(test_vocab_binary_fields)
{
    struct vocab v;
    struct err e;
    ck_assert_int_eq(vocab_load(&v, binary_vocab(0xFFFFFFFFu), &e), -1);
    ck_assert_str_eq(relative(e.msg), "DIR/v.bin: the first special id is 4294967295, out of range "
                                      "(0 to 3, the count of tokens: none special)");
    ck_assert_int_eq(vocab_load(&v, binary_vocab(4), &e), -1);
    ck_assert_str_eq(relative(e.msg), "DIR/v.bin: the first special id is 4, out of range (0 to 3, "
                                      "the count of tokens: none special)");
    ck_assert_msg(vocab_load(&v, binary_vocab(3), &e) == 0, "%s", e.msg);
    ck_assert_int_eq(v.first_special, 3);
    vocab_free(&v);
    ck_assert_msg(vocab_load(&v, binary_vocab(2), &e) == 0, "%s", e.msg);
    ck_assert_int_eq(v.first_special, 2);
    vocab_free(&v);
}
END_TEST

/* ---- .npy headers ----------------------------------------------------------- */

/* A .npy file of version major.0 with header dict (padded with spaces to a
 * newline, the whole preamble a multiple of 64 bytes as NumPy writes it)
 * and n bytes of data; into buf, its length returned. */
static size_t npy_file(unsigned char *buf, int major, const char *dict, const void *data, size_t n)
{
    size_t pre = major == 1 ? 10 : 12, len = strlen(dict);
    size_t hlen = len + 1 + (64 - (pre + len + 1) % 64) % 64;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    for (size_t k = 0; k < pre - 8; k++)
        buf[8 + k] = (unsigned char)(hlen >> (8 * k));
    memset(buf + pre, ' ', hlen - 1);
    memcpy(buf + pre, dict, len);
    buf[pre + hlen - 1] = '\n';
    if (n)
        memcpy(buf + pre + hlen, data, n);
    return pre + hlen + n;
}

static const float F3[3] = { 1.5f, -2.0f, 0.25f };

/* dict over three floats, refused the same way from memory and from a
 * file: with want, and nothing left allocated or open. */
static void header_refused(const char *dict, const char *want)
{
    unsigned char buf[512];
    size_t n = npy_file(buf, 1, dict, F3, sizeof F3);
    struct npy a;
    struct err e;
    ck_assert_int_eq(npy_parse(&a, "x.npy", buf, n, &e), -1);
    ck_assert_str_eq(e.msg, want);
    ck_assert_ptr_null(a.data);
    const char *path = put("x.npy", buf, n);
    ck_assert_int_eq(npy_load(&a, path, &e), -1);
    char full[ERR_MSG_MAX + 8];
    snprintf(full, sizeof full, "DIR/%s", want);
    ck_assert_str_eq(relative(e.msg), full);
    ck_assert_ptr_null(a.data);
    ck_assert_ptr_null(a.file);
}

/* The same, for the file only: want after "DIR/". */
static void npy_refused(const char *dict, const void *data, size_t n, const char *want)
{
    unsigned char buf[512];
    size_t len = npy_file(buf, 1, dict, data, n);
    struct npy a;
    struct err e;
    const char *path = put("x.npy", buf, len);
    ck_assert_int_eq(npy_load(&a, path, &e), -1);
    ck_assert_str_eq(relative(e.msg), want);
    ck_assert_ptr_null(a.data);
    ck_assert_ptr_null(a.file);
}

#define H(shape)       "{'descr': '<f4', 'fortran_order': False, 'shape': " shape ", }"
#define NOT_A_TUPLE(s) "x.npy: the shape '" s "' is not a tuple of non-negative integers"

START_TEST(test_npy_header_dict)
{
    /* What the old substring search read as a shape: separators skipped,
     * a sign taken by strtol. */
    header_refused(H("(1 3)"), NOT_A_TUPLE("(1 3)"));
    header_refused(H("(1,,,3,,)"), NOT_A_TUPLE("(1,,,3,,)"));
    header_refused(H("(+3,)"), NOT_A_TUPLE("(+3,)"));
    header_refused(H("(3)"), NOT_A_TUPLE("(3)")); /* a number in parentheses, not a tuple */
    header_refused(H("(03,)"), NOT_A_TUPLE("(03,)"));
    header_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3,}", NOT_A_TUPLE("(3,}"));
    /* Only True and False; "Falsey" began with "False". */
    header_refused("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3,)}",
                   "x.npy: the header's 'fortran_order' is 'Falsey', not True or False");
    header_refused("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}",
                   "x.npy: the header's 'fortran_order' is '0', not True or False");
    /* The dtype is the value of the key descr, not the first "'descr'" in
     * the text: this '<f8' file was read as float32. */
    header_refused("{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": (3,), "
                   "\"note\": \"'descr': '<f4'\"}",
                   "x.npy: the header has a key 'note' (a .npy header has descr, fortran_order "
                   "and shape)");
    header_refused("{\"descr\": \"'descr': '<f4'\", 'fortran_order': False, 'shape': (3,)}",
                   "x.npy: dtype ''descr': '<f4'' is not supported (little-endian float32 '<f4' or "
                   "float16 '<f2'; save with logits.float().numpy())");
    header_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'shape': (3,)}",
                   "x.npy: the header gives 'shape' twice");
    header_refused("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}",
                   "x.npy: the header's 'descr' is not a string (a structured dtype is not "
                   "supported: save plain float32 logits)");
    header_refused("{'descr': '<f4', 'fortran_order': False 'shape': (3,)}",
                   "x.npy: malformed header: ',' or '}' expected at ''shape': (3,)}'");
    header_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3,),",
                   "x.npy: malformed header: the dictionary has no closing '}'");
    header_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)",
                   "x.npy: malformed header: the dictionary has no closing '}'");
    header_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x",
                   "x.npy: malformed header: text after the dictionary at 'x'");
    header_refused("'descr': '<f4', 'fortran_order': False, 'shape': (3,)",
                   "x.npy: malformed header: a dictionary '{...}' expected at ''descr': '<f4', "
                   "'fortra'");
    header_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), \033[2J}",
                   "x.npy: the header holds byte 0x1B (a .npy header is printable ASCII)");
    header_refused("{'fortran_order': False, 'shape': (3,)}",
                   "x.npy: the header has no 'descr' (the dtype)");
    /* Shapes are reported as written: (0,) was "(1, 0)". */
    header_refused(H("(0,)"), "x.npy: shape (0,) is not one of logits (1 to 256 steps of 2 to "
                              "4194304 tokens)");
    header_refused(H("(99999999999999999999999,)"),
                   "x.npy: shape (99999999999999999999999,) is not one of logits (1 to 256 "
                   "steps of 2 to 4194304 tokens)");
    header_refused(H("()"), "x.npy: shape has 0 dimensions; logits are [V] or [steps, V]");
}
END_TEST

/* What the format allows is read: either quote, no trailing comma, spaces
 * anywhere between tokens, a trailing comma after two dimensions, and
 * versions 2.0 and 3.0 (a 4-byte header length). */
START_TEST(test_npy_header_good)
{
    static const char *const DICTS[] = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
        "{\"shape\": (1, 3), \"descr\": \"<f4\", \"fortran_order\": False}",
        "  {  'descr' :'<f4','fortran_order':False , 'shape' : ( 1 , 3 , ) ,}  ",
    };
    unsigned char buf[512];
    struct npy a;
    struct err e;
    for (int major = 1; major <= 3; major++)
        for (size_t i = 0; i < sizeof DICTS / sizeof DICTS[0]; i++) {
            size_t n = npy_file(buf, major, DICTS[i], F3, sizeof F3);
            ck_assert_msg(npy_parse(&a, "x.npy", buf, n, &e) == 0, "%s: %s", DICTS[i], e.msg);
            ck_assert_int_eq(a.rows, 1);
            ck_assert_int_eq(a.cols, 3);
            ck_assert_mem_eq(a.data, F3, sizeof F3);
            npy_free(&a);
            const char *path = put("ok.npy", buf, n);
            ck_assert_msg(npy_load(&a, path, &e) == 0, "%s: %s", DICTS[i], e.msg);
            ck_assert_mem_eq(a.data, F3, sizeof F3);
            npy_free(&a);
        }
    /* Headers of 0 and 1 bytes, shorter than the preamble of version 2
     * that the file reader reads first. */
    static const char TINY[][14] = { "\x93NUMPY\x01\x00\x00\x00"
                                     "abcd",
                                     "\x93NUMPY\x01\x00\x01\x00\nabc" };
    static const char *const TINY_WANT[] = {
        "DIR/t.npy: malformed header (0 bytes that do not end in a newline)",
        "DIR/t.npy: malformed header: a dictionary '{...}' expected at its end",
    };
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(npy_load(&a, put("t.npy", TINY[i], 14), &e), -1);
        ck_assert_str_eq(relative(e.msg), TINY_WANT[i]);
    }
    /* A version 1.1 does not exist. */
    size_t n = npy_file(buf, 1, DICTS[0], F3, sizeof F3);
    buf[7] = 1;
    ck_assert_int_eq(npy_parse(&a, "x.npy", buf, n, &e), -1);
    ck_assert_str_eq(e.msg, "x.npy: .npy format version 1.1 is not supported (1.0 to 3.0)");
}
END_TEST

/* float16 through the file reader, which converts each row in place in
 * the final array: 1.0 0x3C00, -2.0 0xC000, 65504 0x7BFF, 2^-24 0x0001,
 * -0.5 0xB800, 0.0 0x0000 (two steps of three). */
START_TEST(test_npy_half_in_place)
{
    const unsigned short h[6] = { 0x3C00, 0xC000, 0x7BFF, 0x0001, 0xB800, 0x0000 };
    unsigned char buf[512];
    size_t n =
        npy_file(buf, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3)}", h, sizeof h);
    struct npy a;
    struct err e;
    ck_assert_msg(npy_load(&a, put("h.npy", buf, n), &e) == 0, "%s", e.msg);
    ck_assert_int_eq(a.rows, 2);
    ck_assert_int_eq(a.cols, 3);
    const float want[6] = { 1.0f, -2.0f, 65504.0f, ldexpf(1.0f, -24), -0.5f, 0.0f };
    ck_assert_mem_eq(a.data, want, sizeof want);
    npy_free(&a);
    /* A NaN (0x7E00) in step 2 is found there. */
    const unsigned short nan[6] = { 0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x7E00, 0x3C00 };
    npy_refused("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3)}", nan, sizeof nan,
                "DIR/x.npy: step 2, token 1: the logit is NaN");
}
END_TEST

/* ---- class 5: the header before the data ------------------------------------ */

/* A text vocabulary of n tokens t0 t1 ... */
static const char *vocab_of(int n)
{
    char text[256] = "";
    for (int i = 0; i < n; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "t%d\n", i);
    return put_text("v.txt", text);
}

START_TEST(test_npy_header_first)
{
    unsigned char buf[512];
    struct lesson L;
    struct err e;
    /* V = 4 against a vocabulary of 3, with a NaN in the data: the V is
     * refused from the header alone. Before, the whole data was read and
     * converted first, and the NaN was what it said. */
    const float nan4[4] = { 1.0f, NAN, 2.0f, 3.0f };
    size_t n = npy_file(buf, 1, H("(4,)"), nan4, sizeof nan4);
    char npy_path[128];
    snprintf(npy_path, sizeof npy_path, "%s", put("v4.npy", buf, n));
    ck_assert_int_eq(lesson_from_npy(&L, npy_path, vocab_of(3), &e), -1);
    ck_assert_str_eq(relative(e.msg), "DIR/v4.npy: 4 logits a step, but the vocabulary "
                                      "DIR/v.txt has 3 tokens (give the model's with --vocab "
                                      "FILE)");
    /* With the right vocabulary the data are read, and the NaN found. */
    ck_assert_int_eq(lesson_from_npy(&L, npy_path, vocab_of(4), &e), -1);
    ck_assert_str_eq(relative(e.msg), "DIR/v4.npy: token 1: the logit is NaN");
    /* More data than the shape needs: the file is not what its header
     * says (before, the rest was ignored). */
    npy_refused(H("(3,)"), nan4, sizeof nan4,
                "DIR/x.npy: trailing data: the shape needs 12 bytes of data, the file has 16");
    /* A header that claims 1 GiB of data in a file that holds 12 bytes:
     * refused from the sizes, before anything is allocated. */
    npy_refused(H("(256, 1048576)"), F3, sizeof F3,
                "DIR/x.npy: truncated: the shape needs 1073741824 bytes of data, the file has 12");
}
END_TEST

/* The peak resident memory (VmHWM) above what the process holds now, in
 * bytes, since reset_peak(). */
static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs("5", f) >= 0, 1); /* 5: resets the peak to the current size */
    ck_assert_int_eq(fclose(f), 0);
}

static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    ck_assert_ptr_nonnull(f);
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0)
            kb = strtol(line + n, NULL, 10);
    fclose(f);
    ck_assert_int_ge(kb, 0);
    return kb;
}

/* rows x V logits as a file of dtype half or float32 (every value 0.5 and
 * a different last one per row); returns its size in bytes. */
static size_t big_npy(const char *name, int rows, int V, int half, char *path, size_t pn)
{
    char dict[128];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }",
             half ? "<f2" : "<f4", rows, V);
    unsigned char head[256];
    size_t hn = npy_file(head, 1, dict, NULL, 0), es = half ? 2 : 4;
    snprintf(path, pn, "%s/%s", DIR_, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(head, 1, hn, f), hn);
    unsigned char *row = malloc((size_t)V * es);
    ck_assert_ptr_nonnull(row);
    for (int r = 0; r < rows; r++) {
        for (int i = 0; i < V; i++) {
            unsigned v = half ? (i == V - 1 ? 0x3C00u + (unsigned)r : 0x3800u)
                              : (i == V - 1 ? 0x3F800000u + (unsigned)r : 0x3F000000u);
            for (size_t k = 0; k < es; k++)
                row[(size_t)i * es + k] = (unsigned char)(v >> (8 * k));
        }
        ck_assert_uint_eq(fwrite(row, 1, (size_t)V * es, f), (size_t)V * es);
    }
    free(row);
    ck_assert_int_eq(fclose(f), 0);
    return hn + (size_t)rows * (size_t)V * es;
}

/* An accepted file costs its data's final size (4 bytes a logit) and no
 * more: the README's figure. Before, the whole file was read into a buffer
 * and converted into a second one: twice a float32 file's size, three
 * times a float16's. The sanitizer's shadow adds an eighth of each, and
 * its allocator a little: the bound leaves room for that and no more. */
START_TEST(test_npy_memory)
{
    const int rows = 64, V = 128256;
    char path[128];
    for (int half = 0; half <= 1; half++) {
        size_t size = big_npy(half ? "h.npy" : "f.npy", rows, V, half, path, sizeof path);
        size_t floats = (size_t)rows * (size_t)V * sizeof(float);
        struct npy a;
        struct err e;
        reset_peak();
        long before = status_kb("VmRSS:");
        ck_assert_msg(npy_load(&a, path, &e) == 0, "%s", e.msg);
        long peak = status_kb("VmHWM:") - before;
        ck_assert_float_eq(a.data[(size_t)(rows - 1) * (size_t)V + (size_t)V - 1],
                           half ? 1.0f + (rows - 1) / 1024.0f : 1.0f + ldexpf(rows - 1, -23));
        ck_assert_float_eq(a.data[5], 0.5f);
        npy_free(&a);
        long bound = (long)(floats * 5 / 4 / 1024) + 4096;
        ck_assert_msg(peak < bound,
                      "%s: %zu bytes of file, %zu of floats: %ld KiB at peak (at most %ld)",
                      half ? "float16" : "float32", size, floats, peak, bound);
    }
    /* A header that claims 1 GiB of a short file costs nothing. */
    unsigned char buf[512];
    size_t n = npy_file(buf, 1, H("(256, 1048576)"), F3, sizeof F3);
    const char *p = put("claim.npy", buf, n);
    struct npy a;
    struct err e;
    reset_peak();
    long before = status_kb("VmRSS:");
    ck_assert_int_eq(npy_load(&a, p, &e), -1);
    ck_assert_int_lt(status_kb("VmHWM:") - before, 1024);
}
END_TEST

/* ---- sizes, try, the configuration file, the lessons directory ------------- */

/* "WxH" in decimal digits, each side 1 to 1000. %d let 4294967376 wrap
 * round to 80 (and 4294967320 to 24): a size that overflowed was 80x24. */
START_TEST(test_sizes)
{
    struct err e;
    int w = 7, h = 7;
    static const char *const BAD[] = { " 80x24", "+80x24", "80x 24", "80x24 ",  "80X24",
                                       "x24",    "80x",    "-1x24",  "80x24x1", "" };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "'%s' is not a size such as 80x24", BAD[i]);
        ck_assert_int_eq(keys_parse_size(BAD[i], &w, &h, &e), -1);
        ck_assert_str_eq(e.msg, want);
    }
    ck_assert_int_eq(keys_parse_size("4294967376x4294967320", &w, &h, &e), -1);
    ck_assert_str_eq(e.msg, "'4294967376x4294967320': the width and the height are from 1 to 1000");
    ck_assert_int_eq(keys_parse_size("99999999999999999999x24", &w, &h, &e), -1);
    ck_assert_str_eq(e.msg,
                     "'99999999999999999999x24': the width and the height are from 1 to 1000");
    ck_assert_int_eq(keys_parse_size("1001x24", &w, &h, &e), -1);
    ck_assert_str_eq(e.msg, "'1001x24': the width and the height are from 1 to 1000");
    ck_assert_int_eq(keys_parse_size("0x24", &w, &h, &e), -1);
    ck_assert_str_eq(e.msg, "'0x24': the width and the height are from 1 to 1000");
    ck_assert_int_eq(w, 7); /* nothing is written on failure */
    ck_assert_int_eq(keys_parse_size("1000x1", &w, &h, &e), 0);
    ck_assert_int_eq(w, 1000);
    ck_assert_int_eq(h, 1);
    ck_assert_int_eq(keys_parse_size("0080x024", &w, &h, &e), 0);
    ck_assert_int_eq(w, 80);
    ck_assert_int_eq(h, 24);
    /* <resize WxH> in a key script goes through the same parser. */
    struct key_event ev[4];
    ck_assert_int_eq(keys_parse("a<resize 4294967376x24>", ev, 4, &e), -1);
    ck_assert_str_eq(e.msg, "'4294967376x24': the width and the height are from 1 to 1000");
    ck_assert_int_eq(keys_parse("<resize 132x43>q", ev, 4, &e), 2);
    ck_assert_int_eq(ev[0].key, AK_RESIZE);
    ck_assert_int_eq(ev[0].w, 132);
    ck_assert_int_eq(ev[0].h, 43);
}
END_TEST

#define LESSON_HEAD "[lesson]\nid = x\ntitle = X\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\n"

/* 'try' takes settings separated by '|'; an empty one is refused (strtok
 * skipped it: "try = |" was a suggestion of nothing). */
START_TEST(test_try_empty)
{
    static const char *const TRIES[] = { "|", "top-k 1 |", "| top-k 1", "top-k 1 || top-p 0.5",
                                         "top-k 1 |  | top-p 0.5" };
    for (size_t i = 0; i < sizeof TRIES / sizeof TRIES[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, LESSON_HEAD "try = %s\n", TRIES[i]);
        struct lesson L;
        struct err e;
        ck_assert_int_eq(lesson_load(&L, put_text("x.ini", text), &e), -1);
        ck_assert_str_eq(relative(e.msg), "DIR/x.ini:9: try: an empty setting");
    }
    struct lesson L;
    struct err e;
    ck_assert_msg(
        lesson_load(&L, put_text("x.ini", LESSON_HEAD "try = top-k 1 | top-p 0.5\n"), &e) == 0,
        "%s", e.msg);
    ck_assert_int_eq(L.steps[0].n_try, 1);
    lesson_free(&L);
}
END_TEST

/* A key given twice in the configuration file is refused as a lesson
 * refuses it (the second value silently won before). */
START_TEST(test_config_duplicates)
{
    struct config c;
    struct err e;
    const char *path = put_text("c.ini", "[display]\ntheme = mono\nascii = yes\ntheme = default\n");
    ck_assert_int_eq(config_load(&c, path, &e), -1);
    ck_assert_str_eq(relative(e.msg),
                     "DIR/c.ini:4: 'theme' is given twice in [display] (first on line 2)");
    ck_assert_int_eq(c.theme, THEME_DEFAULT); /* none of the file applies */
    ck_assert_int_eq(c.ascii, 0);
    /* The same section twice is one section. */
    path = put_text("c.ini", "[keys]\nquit = Q\n[display]\nascii = yes\n[keys]\nquit = X\n");
    ck_assert_int_eq(config_load(&c, path, &e), -1);
    ck_assert_str_eq(relative(e.msg),
                     "DIR/c.ini:6: 'quit' is given twice in [keys] (first on line 2)");
    ck_assert_int_eq(c.n_bindings, 0);
    /* One key in two sections is two keys. */
    path = put_text("c.ini", "[defaults]\nseed = 4\n[keys]\nquit = Q\n");
    ck_assert_msg(config_load(&c, path, &e) == 0, "%s", e.msg);
}
END_TEST

static const char *lesson_file(const char *name, const char *id)
{
    char text[256];
    snprintf(text, sizeof text,
             "[lesson]\nid = %s\ntitle = %s\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\n", id,
             name);
    return put_text(name, text);
}

/* Two files with one id: an id would name either, and show took the first
 * in silence while lessons listed both. catalog_open reads every id once
 * (and finding an id uses them) and refuses the second file by name. */
START_TEST(test_catalog_duplicate_ids)
{
    lesson_file("01-a.ini", "same");
    lesson_file("02-other.ini", "other");
    char second[128];
    snprintf(second, sizeof second, "%s", lesson_file("03-b.ini", "same"));
    struct catalog cat;
    struct err e;
    ck_assert_int_eq(catalog_open(&cat, DIR_, &e), -1);
    ck_assert_str_eq(relative(e.msg), "DIR/03-b.ini: lesson id 'same' is also DIR/01-a.ini's");
    /* Without the duplicate, each id finds its file; an unreadable file is
     * kept, named when the id asked for is not found. */
    ck_assert_int_eq(unlink(second), 0);
    put_text("00-broken.ini", "[lesson]\ntitle = no id\n");
    ck_assert_msg(catalog_open(&cat, DIR_, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(cat.n, 3);
    ck_assert_int_eq(catalog_find(&cat, "same"), 1);
    ck_assert_int_eq(catalog_find(&cat, "other"), 2);
    ck_assert_int_eq(catalog_find(&cat, "none"), -1);
    struct lesson L;
    ck_assert_int_eq(catalog_load(&cat, "other", &L, &e), 0);
    ck_assert_str_eq(L.title, "02-other.ini");
    lesson_free(&L);
    ck_assert_int_eq(catalog_load(&cat, "none", &L, &e), -1);
    ck_assert_str_eq(relative(e.msg), "no lesson 'none' in DIR (and DIR/00-broken.ini: the "
                                      "[lesson] section needs an id)");
    catalog_close(&cat);
}
END_TEST

Suite *suite_parsers(void)
{
    Suite *s = suite_create("parsers");
    TCase *vocab = tcase_create("vocab");
    tcase_add_checked_fixture(vocab, tmp_setup, tmp_teardown);
    tcase_add_test(vocab, test_vocab_escapes);
    tcase_add_test(vocab, test_vocab_crlf);
    tcase_add_test(vocab, test_vocab_binary_fields);
    suite_add_tcase(s, vocab);
    TCase *npy = tcase_create("npy");
    tcase_add_checked_fixture(npy, tmp_setup, tmp_teardown);
    tcase_add_test(npy, test_npy_header_dict);
    tcase_add_test(npy, test_npy_header_good);
    tcase_add_test(npy, test_npy_half_in_place);
    tcase_add_test(npy, test_npy_header_first);
    tcase_add_test(npy, test_npy_memory);
    tcase_set_timeout(npy, 60);
    suite_add_tcase(s, npy);
    TCase *other = tcase_create("other");
    tcase_add_checked_fixture(other, tmp_setup, tmp_teardown);
    tcase_add_test(other, test_sizes);
    tcase_add_test(other, test_try_empty);
    tcase_add_test(other, test_config_duplicates);
    tcase_add_test(other, test_catalog_duplicate_ids);
    suite_add_tcase(s, other);
    return s;
}
