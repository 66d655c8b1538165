/* The user's configuration file: good, bad, and under the command line. */
#include <string.h>

#include "tui/app.h"
#include "data/config.h"
#include "suites.h"

START_TEST(test_good_file)
{
    struct config c;
    struct err e;
    ck_assert_int_eq(config_load_text(&c, "c.ini",
                                      "[display]\ntheme = projector\nascii = yes\n"
                                      "[defaults]\norder = vllm\nseed = 42\n"
                                      "[keys]\nquit = Q\ndraws = d\n",
                                      &e),
                     0);
    ck_assert_int_eq(c.theme, THEME_PROJECTOR);
    ck_assert_int_eq(c.ascii, 1);
    ck_assert_int_eq(c.n_bindings, 2);
    ck_assert_int_eq(c.bindings[0].key, 'Q');
    ck_assert_int_eq(config_action_key(c.bindings[0].action), 'q');
    ck_assert_int_eq(c.bindings[1].key, 'd');
    ck_assert_int_eq(config_action_key(c.bindings[1].action), 'D');
    struct settings s;
    settings_defaults(&s);
    config_apply_defaults(&c, &s);
    ck_assert_int_eq(s.sampler.chain.preset, PRESET_VLLM);
    ck_assert_uint_eq(s.sampler.seed, 42);
}
END_TEST

/* Every mistake names the file and line, and none of the file applies. */
static void refused(const char *text, const char *want)
{
    struct config c;
    struct err e;
    ck_assert_int_eq(config_load_text(&c, "c.ini", text, &e), -1);
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_eq(c.theme, THEME_DEFAULT);
    ck_assert_int_eq(c.n_bindings, 0);
    ck_assert_uint_eq(c.defaults.given, 0);
}

START_TEST(test_bad_files)
{
    refused("[display]\ntheme = neon\n",
            "c.ini:2: 'neon' is not a theme (default, projector or mono)");
    refused("[defaults]\nseed = 42\n[display]\nascii = maybe\n",
            "c.ini:4: ascii is yes or no, not 'maybe'");
    refused("[defaults]\norder = fastest\n", test_not_an_order("c.ini:2: order: ", "fastest"));
    refused("[defaults]\ntemperature = 0.5\n", "c.ini:2: unknown key 'temperature' in [defaults]");
    refused("[keys]\nquit = <Esc>\n",
            "c.ini:2: quit: '<Esc>' is not one key (a printable ASCII character, such as Q or d)");
    refused("[keys]\nfly = f\n", "c.ini:2: unknown key 'fly' in [keys]");
    /* two actions on one key: the last silently won (issue 29, part 5) */
    refused("[keys]\nquit = Q\nback = j\nstep = Q\n",
            "c.ini:4: step: 'Q' is bound to quit already (line 2)");
    refused("[colours]\ntheme = mono\n",
            "c.ini:1: unknown section [colours] (sections: display, defaults, keys)");
}
END_TEST

START_TEST(test_defaults_lie_under_the_lessons)
{
    struct config c;
    struct err e;
    ck_assert_int_eq(config_load_text(&c, "c.ini", "[defaults]\nseed = 42\n[keys]\nquit = Q\n", &e),
                     0);
    static struct app a;
    const struct app_options src = { 0, NULL, &c, NULL, NULL };
    /* The toy lesson sets no seed: the config's applies. */
    ck_assert_msg(app_init(&a, TEST_LESSONS, "toy", NULL, &src, &e) == 0, "%s", e.msg);
    ck_assert_uint_eq(a.cur.sampler.seed, 42);
    /* Q quits now, and q still does. */
    ck_assert_int_eq(app_key(&a, 'Q') & APP_QUIT, APP_QUIT);
    ck_assert_int_eq(app_key(&a, 'q') & APP_QUIT, APP_QUIT);
    app_free(&a);
    /* The top-k lesson sets seed 7 for its numbers: the lesson wins. */
    ck_assert_int_eq(app_init(&a, TEST_LESSONS, "top-k", NULL, &src, &e), 0);
    ck_assert_uint_eq(a.cur.sampler.seed, 7);
    app_free(&a);
    /* And the command line wins over both. */
    const char *names[] = { "seed" }, *values[] = { "3" };
    ck_assert_int_eq(app_init(&a, TEST_LESSONS, "toy", test_patch(1, names, values), &src, &e), 0);
    ck_assert_uint_eq(a.cur.sampler.seed, 3);
    app_free(&a);
}
END_TEST

Suite *suite_config(void)
{
    Suite *s = suite_create("config");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_good_file);
    tcase_add_test(core, test_bad_files);
    tcase_add_test(core, test_defaults_lie_under_the_lessons);
    suite_add_tcase(s, core);
    return s;
}
