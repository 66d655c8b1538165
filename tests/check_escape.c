/* check_escape.c - control characters never reach a terminal (issue 12, class 3).
 *
 * "escape": the one escaping function (src/base/utf8.c) on each kind of
 * character a terminal obeys: C0 (ESC, BEL), DEL, C1 (U+009B is CSI) and
 * bytes that are not valid UTF-8; text that is none of these passes as it is.
 * "ini": the INI reader refuses a control character in a value, with the
 * file and the line, while the lesson format's own escapes ("\n" in a quoted
 * value) and tabs still load. "report": strings that do not pass the INI
 * reader (a captured file's name as title, a model's token) are escaped by
 * every text format, and JSON writes C1 as \u009b.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "data/catalog.h"
#include "data/config.h"
#include "gguf/gguf.h"
#include "data/lesson.h"
#include "report/report.h"
#include "source/source.h"
#include "suites.h"

#define PATH "lessons/x.ini"

/* A minimal valid lesson; anything appended starts on line 9. */
#define MINIMAL "[lesson]\nid = t\ntitle = T\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1.0 2.0\n"

/* ---- the escaping function -------------------------------------------- */

static void expect_escaped(const char *in, const char *want)
{
    char buf[256];
    size_t n = utf8_escape(in, buf, sizeof buf);
    ck_assert_str_eq(buf, want);
    ck_assert_uint_eq(n, strlen(want));
}

START_TEST(test_controls)
{
    expect_escaped("a\x1b[2Jb", "a\\x1B[2Jb");                /* ESC: the start of every sequence */
    expect_escaped("\x1b]0;title\x07", "\\x1B]0;title\\x07"); /* OSC ... BEL sets the title */
    expect_escaped("\x01\x1f", "\\x01\\x1F");
    expect_escaped("l1\nl2\tx\ry", "l1\\nl2\\tx\\ry");
    expect_escaped("x\x7fy", "x\\x7Fy");
    /* U+009B (CSI) is C2 9B in UTF-8: a terminal reads it as ESC [. */
    expect_escaped("\xc2\x9b?1049h", "\\xC2\\x9B?1049h");
    expect_escaped("\xc2\x80\xc2\x9f", "\\xC2\\x80\\xC2\\x9F"); /* the ends of C1 */
    expect_escaped("\xc2\xa0", "\xc2\xa0");                     /* U+00A0, just after C1, is text */
    ck_assert_int_eq(utf8_cp_is_control(0x1F), 1);
    ck_assert_int_eq(utf8_cp_is_control(0x20), 0);
    ck_assert_int_eq(utf8_cp_is_control(0x7E), 0);
    ck_assert_int_eq(utf8_cp_is_control(0x7F), 1);
    ck_assert_int_eq(utf8_cp_is_control(0x9F), 1);
    ck_assert_int_eq(utf8_cp_is_control(0xA0), 0);
}
END_TEST

/* Unicode's Bidi_Control characters reorder what follows them on the row:
 * a token "\u202E" + "olleh" shows as "hello", and the rest of its row
 * runs backwards. They are escaped as the other controls are (issue 29,
 * part 8); their neighbours (U+200D ZWJ, U+2065, U+206A) stay text. */
START_TEST(test_bidi_controls)
{
    expect_escaped("a\xe2\x80\xaeolleh", "a\\xE2\\x80\\xAEolleh");                  /* U+202E RLO */
    expect_escaped("\xe2\x81\xa6x\xe2\x81\xa9", "\\xE2\\x81\\xA6x\\xE2\\x81\\xA9"); /* LRI, PDI */
    expect_escaped("\xe2\x80\x8e\xe2\x80\x8f", "\\xE2\\x80\\x8E\\xE2\\x80\\x8F");   /* LRM, RLM */
    expect_escaped("\xd8\x9c", "\\xD8\\x9C");                                       /* U+061C ALM */
    const uint32_t on[] = { 0x061C, 0x200E, 0x200F, 0x202A, 0x202E, 0x2066, 0x2069 };
    const uint32_t off[] = { 0x061B, 0x200D, 0x2010, 0x2029, 0x202F, 0x2065, 0x206A };
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        ck_assert_int_eq(utf8_cp_is_control(on[i]), 1);
        ck_assert_int_eq(utf8_cp_is_control(off[i]), 0);
    }
    /* GGUF strings (tensor names, metadata in messages) the same way */
    char buf[64];
    gguf_escape("x\xe2\x80\xaey", 5, buf, sizeof buf);
    ck_assert_str_eq(buf, "x\\xE2\\x80\\xAEy");
}
END_TEST

START_TEST(test_invalid_and_text)
{
    expect_escaped("a\xff"
                   "b",
                   "a\\xFFb");
    expect_escaped("\xe2\x82", "\\xE2\\x82");                   /* a cut character */
    expect_escaped("\xc0\x9b", "\\xC0\\x9B");                   /* an overlong ESC [ */
    expect_escaped("\xed\xa0\x80", "\\xED\\xA0\\x80");          /* a UTF-16 surrogate */
    expect_escaped("\xf4\x90\x80\x80", "\\xF4\\x90\\x80\\x80"); /* past U+10FFFF */
    const char *text = "caf\xc3\xa9 \xe2\x90\xa3Paris \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 "
                       "a\\b \"q\" 100%";
    expect_escaped(text, text);
    /* Escaping twice changes nothing: the reports escape tokens already shown escaped. */
    char once[256], twice[256];
    utf8_escape("\x1b\xc2\x9b\xff", once, sizeof once);
    utf8_escape(once, twice, sizeof twice);
    ck_assert_str_eq(twice, "\\x1B\\xC2\\x9B\\xFF");
}
END_TEST

START_TEST(test_cut_between_escapes)
{
    /* "ab" then the 8 bytes of \xC2\x9B: 6 bytes of room keep "ab" only, never half an escape. */
    char buf[7];
    ck_assert_uint_eq(utf8_escape("ab\xc2\x9b", buf, sizeof buf), 2);
    ck_assert_str_eq(buf, "ab");
}
END_TEST

START_TEST(test_stream_keeps_lines)
{
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&out, &size);
    const char text[] = "l1\n\tl2\x1b[2J\xc2\x9b";
    ck_assert_int_eq(utf8_write_escaped(f, text, sizeof text - 1, UTF8_ESC_KEEP_LINES), 0);
    ck_assert_int_eq(utf8_write_escaped(f, "|\n", 2, 0), 0);
    fclose(f);
    ck_assert_str_eq(out, "l1\n\tl2\\x1B[2J\\xC2\\x9B|\\n");
    free(out);
}
END_TEST

/* The encoder of the input line's keys: each length of UTF-8 at its first
 * and last code point, and no bytes for what is no character. */
START_TEST(test_encode)
{
    static const struct {
        uint32_t cp;
        const char *bytes;
    } CASES[] = { { 0x00, "" },
                  { 0x7F, "\x7f" },
                  { 0x80, "\xc2\x80" },
                  { 0x7FF, "\xdf\xbf" },
                  { 0x800, "\xe0\xa0\x80" },
                  { 0xFFFF, "\xef\xbf\xbf" },
                  { 0x10000, "\xf0\x90\x80\x80" },
                  { 0x10FFFF, "\xf4\x8f\xbf\xbf" } };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char out[4];
        int n = utf8_encode(CASES[i].cp, out);
        ck_assert_int_eq(n, CASES[i].cp ? (int)strlen(CASES[i].bytes) : 1);
        ck_assert_mem_eq(out, CASES[i].bytes, (size_t)n);
        uint32_t back;
        ck_assert_int_eq(utf8_decode(out, (size_t)n, &back), n);
        ck_assert_uint_eq(back, CASES[i].cp);
    }
    char out[4];
    ck_assert_int_eq(utf8_encode(0xD800, out), 0);
    ck_assert_int_eq(utf8_encode(0xDFFF, out), 0);
    ck_assert_int_eq(utf8_encode(0x110000, out), 0);
}
END_TEST

/* A string cut by a byte count loses the character it cut short, and only
 * that: "a中" cut after 2 or 3 bytes is "a"; whole, or ending in bytes that
 * were never a character, it stays. */
START_TEST(test_trim_cut)
{
    ck_assert_uint_eq(utf8_trim_cut("a\xe4\xb8\xad", 4), 4);
    ck_assert_uint_eq(utf8_trim_cut("a\xe4\xb8\xad", 3), 1);
    ck_assert_uint_eq(utf8_trim_cut("a\xe4\xb8\xad", 2), 1);
    ck_assert_uint_eq(utf8_trim_cut("\xf0\x9f\x98", 3), 0);
    ck_assert_uint_eq(utf8_trim_cut("ab", 2), 2);
    ck_assert_uint_eq(utf8_trim_cut("", 0), 0);
    ck_assert_uint_eq(utf8_trim_cut("a\x80\x80", 3), 3);            /* stray continuations */
    ck_assert_uint_eq(utf8_trim_cut("\x80\x80\x80\x80\x80", 5), 5); /* no lead at all */
    ck_assert_uint_eq(utf8_trim_cut("a\xff", 2), 2);                /* never a lead */
}
END_TEST

/* ---- the INI reader ----------------------------------------------------- */

static void expect_refused(const char *text, const char *want)
{
    struct lesson L;
    struct err e = { 0, "" };
    int rc = lesson_load_text(&L, PATH, text, &e);
    if (rc == 0) {
        lesson_free(&L);
        ck_abort_msg("accepted a lesson that should fail with: %s", want);
    }
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_eq(e.code, ERR_USAGE);
}

START_TEST(test_ini_refuses_controls)
{
    expect_refused("[lesson]\nid = t\ntitle = a\x1b[2Jb\n[vocab]\n0 = a\n[step.1]\nlogits = 1\n",
                   PATH ":3: control character U+001B in the value of 'title'");
    expect_refused(MINIMAL "text = x\x1b]0;pwned\x07\n",
                   PATH ":9: control character U+001B in the value of 'text'");
    expect_refused(MINIMAL "note = bell\x07\n",
                   PATH ":9: control character U+0007 in the value of 'note'");
    expect_refused(MINIMAL "note = del\x7f\n",
                   PATH ":9: control character U+007F in the value of 'note'");
    /* On a continuation line, the line named is that one. */
    expect_refused(MINIMAL "text = fine\n  then \xc2\x9b?1049h\n",
                   PATH ":10: control character U+009B in the value of 'text'");
    expect_refused(MINIMAL "text = a\rb\n",
                   PATH ":9: control character U+000D in the value of 'text'");
    /* a bidirectional control too (U+202E, right-to-left override) */
    expect_refused(MINIMAL "text = abc\xe2\x80\xae cba\n",
                   PATH ":9: control character U+202E in the value of 'text'");
    /* The configuration file goes through the same reader. */
    struct config c;
    struct err e = { 0, "" };
    ck_assert_int_eq(config_load_text(&c, "config.ini", "[display]\ntheme = mono\x1b\n", &e), -1);
    ck_assert_str_eq(e.msg, "config.ini:2: control character U+001B in the value of 'theme'");
}
END_TEST

START_TEST(test_ini_keeps_escapes_and_tabs)
{
    /* The lesson format's escapes make control characters on purpose, and a
     * tab is white space: both still load; CRLF line ends too. */
    struct lesson L;
    struct err e = { 0, "" };
    const char *text = "[lesson]\r\nid = t\r\ntitle = a\ttab\r\n[vocab]\r\n0 = a\r\n1 = \"\\n\"\r\n"
                       "[step.1]\r\nlogits = 1.0 2.0\r\nstop = \"\\n\\n\"\r\n";
    ck_assert_msg(lesson_load_text(&L, PATH, text, &e) == 0, "%s", e.msg);
    ck_assert_str_eq(L.title, "a\ttab");
    ck_assert_str_eq(vocab_token(&L.vocab, 1), "\n");
    lesson_free(&L);
}
END_TEST

/* ---- the reports ------------------------------------------------------ */

#define HOSTILE       "\x1b[2J\x1b]0;pwned\x07\x1b[?1049h\xc2\x9b"
#define HOSTILE_SHOWN "\\x1B[2J\\x1B]0;pwned\\x07\\x1B[?1049h\\xC2\\x9B"

static char *replace(char *old, const char *s)
{
    free(old);
    char *n = strdup(s);
    ck_assert_ptr_nonnull(n);
    return n;
}

/* The toy lesson's step 1 with a hostile title, text, note and token "on"
 * (id 5), as a file's name or a model's token could bring them, in fmt. */
static char *render_hostile(enum report_format fmt)
{
    struct catalog cat;
    struct lesson L;
    struct err e;
    ck_assert_int_eq(catalog_open(&cat, TEST_LESSONS, &e), 0);
    ck_assert_msg(catalog_load(&cat, "toy", &L, &e) == 0, "%s", e.msg);
    catalog_close(&cat);
    L.title = replace(L.title, "title " HOSTILE);
    L.text = replace(L.text, "text " HOSTILE);
    L.steps[0].text = replace(L.steps[0].text, "step " HOSTILE);
    L.steps[0].note = replace(L.steps[0].note, "note " HOSTILE);
    ck_assert_int_eq(vocab_set(&L.vocab, 5, "on" HOSTILE, &e), 0);
    struct source src;
    ck_assert_msg(source_open(&src, &L, NULL, 0, 0, &e) == 0, "%s", e.msg);
    struct settings s;
    source_step_settings(&src, 1, &s);
    int *ctx, len;
    ck_assert_int_eq(source_lesson_context(&src, 1, &ctx, &len, &e), 0);
    struct trace t;
    ck_assert_int_eq(trace_init(&t, L.vocab.n, &e), 0);
    ck_assert_int_eq(source_run_step(&src, 1, &s, ctx, len, &t, &e), 0);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    struct report r = { .lesson = &L,
                        .source = &src,
                        .step = 1,
                        .settings = &s,
                        .context = ctx,
                        .context_len = len,
                        .prompt_len = L.prompt_len,
                        .trace = &t };
    if (fmt == REPORT_MARKDOWN)
        report_markdown_title(f, &L);
    ck_assert_int_eq(report_write(f, fmt, &r, &e), 0);
    fclose(f);
    trace_free(&t);
    free(ctx);
    source_close(&src);
    lesson_free(&L);
    return buf;
}

static void assert_no_controls(const char *out, const char *fmt)
{
    ck_assert_msg(strchr(out, '\x1b') == NULL, "%s: a raw ESC in\n%s", fmt, out);
    ck_assert_msg(strchr(out, '\x07') == NULL, "%s: a raw BEL", fmt);
    ck_assert_msg(strstr(out, "\xc2\x9b") == NULL, "%s: a raw U+009B", fmt);
}

START_TEST(test_text_report_escapes)
{
    char *out = render_hostile(REPORT_TEXT);
    assert_no_controls(out, "text");
    const char *want[] = { "toy: title " HOSTILE_SHOWN "\n", "  text " HOSTILE_SHOWN "\n",
                           "  step " HOSTILE_SHOWN "\n", "note: note " HOSTILE_SHOWN "\n",
                           "choice: \"on" HOSTILE_SHOWN "\" (id 5)" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(out, want[i]) != NULL, "missing '%s' in\n%s", want[i], out);
    free(out);
}
END_TEST

START_TEST(test_csv_report_escapes)
{
    char *out = render_hostile(REPORT_CSV);
    assert_no_controls(out, "csv");
    /* "on" ranks first (p 0.4407, the lesson's table); its field needs no quotes. */
    ck_assert_ptr_nonnull(strstr(out, "\n1,5,on" HOSTILE_SHOWN ",2.1,"));
    free(out);
}
END_TEST

START_TEST(test_markdown_report_escapes)
{
    char *out = render_hostile(REPORT_MARKDOWN);
    assert_no_controls(out, "markdown");
    /* Markdown then escapes the backslash and the brackets of the visible form. */
    const char *md = "\\\\x1B\\[2J\\\\x1B\\]0;pwned\\\\x07\\\\x1B\\[?1049h\\\\xC2\\\\x9B";
    char title[256];
    snprintf(title, sizeof title, "# title %s\n", md);
    ck_assert_msg(strstr(out, title) != NULL, "missing '%s' in\n%s", title, out);
    ck_assert_msg(strstr(out, "| 1 | 5 | on\\\\x1B") != NULL, "token row in\n%s", out);
    free(out);
}
END_TEST

START_TEST(test_json_report_escapes)
{
    char *out = render_hostile(REPORT_JSON);
    assert_no_controls(out, "json");
    ck_assert_msg(
        strstr(out, "\"title\": \"title \\u001b[2J\\u001b]0;pwned\\u0007\\u001b[?1049h\\u009b\"") !=
            NULL,
        "title in\n%s", out);
    free(out);
}
END_TEST

Suite *suite_escape(void)
{
    Suite *s = suite_create("escape");
    TCase *tc = tcase_create("escape");
    tcase_add_test(tc, test_controls);
    tcase_add_test(tc, test_bidi_controls);
    tcase_add_test(tc, test_invalid_and_text);
    tcase_add_test(tc, test_cut_between_escapes);
    tcase_add_test(tc, test_stream_keeps_lines);
    tcase_add_test(tc, test_encode);
    tcase_add_test(tc, test_trim_cut);
    suite_add_tcase(s, tc);
    TCase *ti = tcase_create("ini");
    tcase_add_test(ti, test_ini_refuses_controls);
    tcase_add_test(ti, test_ini_keeps_escapes_and_tabs);
    suite_add_tcase(s, ti);
    TCase *tr = tcase_create("report");
    tcase_add_test(tr, test_text_report_escapes);
    tcase_add_test(tr, test_csv_report_escapes);
    tcase_add_test(tr, test_markdown_report_escapes);
    tcase_add_test(tr, test_json_report_escapes);
    suite_add_tcase(s, tr);
    return s;
}
