/* The report formats and the number formatting every table shares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/catalog.h"
#include "report/report.h"
#include "source/path.h"
#include "source/source.h"
#include "suites.h"
#include "base/utf8.h"

/* Runs the toy lesson's step with the given top-k and returns the report as
 * a malloc'd string in the given format. */
static char *render(const char *lesson, int stepno, enum report_format fmt, int top)
{
    struct catalog cat;
    struct lesson L;
    struct err e;
    ck_assert_int_eq(catalog_open(&cat, TEST_LESSONS, &e), 0);
    ck_assert_msg(catalog_load(&cat, lesson, &L, &e) == 0, "%s", e.msg);
    catalog_close(&cat);
    struct source src;
    ck_assert_msg(source_open(&src, &L, NULL, 0, 0, &e) == 0, "%s", e.msg);
    struct settings s;
    source_step_settings(&src, stepno, &s);
    int *ctx, len;
    ck_assert_int_eq(source_lesson_context(&src, stepno, &ctx, &len, &e), 0);
    struct trace t;
    ck_assert_int_eq(trace_init(&t, L.vocab.n, &e), 0);
    ck_assert_int_eq(source_run_step(&src, stepno, &s, ctx, len, &t, &e), 0);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    struct report r = { .lesson = &L,
                        .source = &src,
                        .step = stepno,
                        .settings = &s,
                        .context = ctx,
                        .context_len = len,
                        .prompt_len = L.prompt_len,
                        .trace = &t,
                        .top = top };
    ck_assert_int_eq(report_write(f, fmt, &r, &e), 0);
    fclose(f);
    trace_free(&t);
    free(ctx);
    source_close(&src);
    lesson_free(&L);
    return buf;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

START_TEST(test_numbers)
{
    char b[32];
    report_number(b, sizeof b, 0.44067, 4);
    ck_assert_str_eq(b, "0.4407");
    report_number(b, sizeof b, 403.428793, 4);
    ck_assert_str_eq(b, "403.4288");
    report_number(b, sizeof b, 485165195.4, 4);
    ck_assert_str_eq(b, "4.852e+08"); /* four significant digits */
    report_logit(b, sizeof b, 2.1, 4);
    ck_assert_str_eq(b, "2.1");
    report_logit(b, sizeof b, 0.2 / 1.2, 4);
    ck_assert_str_eq(b, "0.1667");
    report_logit(b, sizeof b, -4.0, 4);
    ck_assert_str_eq(b, "-4.0");
    report_logit(b, sizeof b, -0.00001, 4);
    ck_assert_str_eq(b, "0.0");
}
END_TEST

START_TEST(test_json_has_the_contract_fields)
{
    char *j = render("top-k", 1, REPORT_JSON, 0);
    const char *keys[] = { "\"vocab_size\": 7", "\"sum_exp\": 18.53123",  "\"settings\": {",
                           "\"top_k\": 3",      "\"context\": [1, 2, 3]", "\"rows\": [",
                           "\"kept_count\": 3", "\"kept_mass\": 0.7525",  "\"choice\": {",
                           "\"u\": 0.40696",    "\"tail\": {\"count\": 0" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_msg(strstr(j, keys[i]) != NULL, "missing %s in\n%s", keys[i], j);
    /* The first row is "on" with its renormalized probability 0.5856. */
    const char *first = strstr(j, "{\"rank\": 1, \"id\": 5, \"token\": \"on\"");
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_nonnull(strstr(first, "\"final\": 0.5855"));
    int depth = 0;
    for (const char *p = j; *p; p++) {
        depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
        ck_assert_int_ge(depth, 0);
    }
    ck_assert_int_eq(depth, 0);
    free(j);
}
END_TEST

START_TEST(test_json_greedy_choice_has_null_u)
{
    char *j = render("toy", 1, REPORT_JSON, 0);
    /* "on" has p 0.4407 in the lesson's table (seed 002); greedy keeps only it. */
    ck_assert_ptr_nonnull(strstr(j, "\"choice\": {\"id\": 5, \"token\": \"on\", \"prob\": 0.4406"));
    ck_assert_ptr_nonnull(
        strstr(j, "\"final\": 1, \"rank\": 1, \"rule\": \"greedy\", \"u\": null}"));
    free(j);
}
END_TEST

START_TEST(test_csv_rows)
{
    char *c = render("toy", 2, REPORT_CSV, 0);
    ck_assert_int_eq(count_lines(c), 8); /* header and 7 rows */
    const char *head =
        "rank,id,token,logit,adjusted,exp,prob,cum,kept,removed_by,final,cum_final,seen\n";
    ck_assert(strncmp(c, head, strlen(head)) == 0);
    ck_assert_ptr_nonnull(strstr(c, "\n1,6,mat,2.5,2.5,12.18249396"));
    free(c);
}
END_TEST

START_TEST(test_top_rows_and_tail)
{
    char *j = render("toy", 1, REPORT_JSON, 2);
    ck_assert_ptr_nonnull(strstr(j, "\"tail\": {\"count\": 5, \"mass\": 0.380"));
    free(j);
    char *t = render("toy", 1, REPORT_TEXT, 2);
    /* The same mass, 0.380..., as a percent in the text (report_percent). */
    ck_assert_ptr_nonnull(strstr(t, "... 5 more tokens hold 38.0"));
    free(t);
}
END_TEST

START_TEST(test_text_table)
{
    char *t = render("toy", 1, REPORT_TEXT, 0);
    ck_assert_ptr_nonnull(strstr(t, "sum of exp: 18.5312"));
    ck_assert_ptr_nonnull(strstr(t, "   1      5  on               2.1      2.1    8.1662  0.4407  "
                                    "0.4407 yes        1.0000\n"));
    ck_assert_ptr_nonnull(strstr(t, "   7      0  [PAD]           -3.2     -3.2    0.0408  0.0022  "
                                    "1.0000 no:greedy  0.0000\n"));
    ck_assert_ptr_nonnull(strstr(t, "choice: \"on\" (id 5): greedy"));
    free(t);
    t = render("penalty", 3, REPORT_TEXT, 0);
    ck_assert_ptr_nonnull(strstr(t, "warning: the lesson's formula raises a negative logit: sat "
                                    "-0.2 -> -0.1667 makes it MORE likely"));
    free(t);
}
END_TEST

START_TEST(test_utf8_helpers)
{
    ck_assert_int_eq(utf8_width("abc"), 3);
    ck_assert_int_eq(utf8_width("\xC3\xA9t\xC3\xA9"), 3); /* été */
    ck_assert_int_eq(utf8_width("\xE4\xB8\xAD"), 2);      /* a wide CJK character */
    char b[64];
    utf8_escape("a\nb\t\x01\xFF", b, sizeof b);
    ck_assert_str_eq(b, "a\\nb\\t\\x01\\xFF");
    utf8_pad("\xC3\xA9", 3, 1, b, sizeof b);
    ck_assert_str_eq(b, "  \xC3\xA9");
    utf8_pad("abcdef", 3, 0, b, sizeof b);
    ck_assert_str_eq(b, "abc");
    uint32_t cp;
    ck_assert_int_eq(utf8_decode("\xE2\x82", 2, &cp), 0); /* truncated */
    ck_assert_int_eq(utf8_decode("\xC0\x80", 2, &cp), 0); /* overlong */
}
END_TEST

Suite *suite_report(void)
{
    Suite *s = suite_create("report");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_numbers);
    tcase_add_test(core, test_json_has_the_contract_fields);
    tcase_add_test(core, test_json_greedy_choice_has_null_u);
    tcase_add_test(core, test_csv_rows);
    tcase_add_test(core, test_top_rows_and_tail);
    tcase_add_test(core, test_text_table);
    tcase_add_test(core, test_utf8_helpers);
    suite_add_tcase(s, core);
    return s;
}
