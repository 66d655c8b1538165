/* check_main.c - the one test runner: every suite, one line of totals.
 * CK_FORK=no runs the tests in this process (handy under a debugger). */
#include <stdlib.h>

#include "suites.h"

int main(void)
{
    SRunner *sr = srunner_create(suite_philox());
    srunner_add_suite(sr, suite_sampler());
    srunner_add_suite(sr, suite_settings());
    srunner_add_suite(sr, suite_lessons());
    srunner_add_suite(sr, suite_errors());
    srunner_add_suite(sr, suite_report());
    srunner_add_suite(sr, suite_view());
    srunner_add_suite(sr, suite_app());
    srunner_add_suite(sr, suite_fast());
    srunner_add_suite(sr, suite_real());
    srunner_add_suite(sr, suite_config());
    srunner_add_suite(sr, suite_backend());
    srunner_add_suite(sr, suite_quant());
    srunner_add_suite(sr, suite_gguf());
    srunner_add_suite(sr, suite_tokenizer());
    srunner_add_suite(sr, suite_vocabs());
    srunner_add_suite(sr, suite_llama());
    srunner_add_suite(sr, suite_nonfinite());
    srunner_add_suite(sr, suite_escape());
    srunner_add_suite(sr, suite_writes());
    srunner_add_suite(sr, suite_parsers());
    srunner_add_suite(sr, suite_exercise());
    srunner_add_suite(sr, suite_svg());
    srunner_add_suite(sr, suite_layout());
    srunner_add_suite(sr, suite_headbuild());
    srunner_add_suite(sr, suite_stop());
    srunner_add_suite(sr, suite_drawstoy());
    srunner_add_suite(sr, suite_toybatch());
    srunner_add_suite(sr, suite_read());
    srunner_add_suite(sr, suite_words());
    srunner_add_suite(sr, suite_marks());
    srunner_add_suite(sr, suite_llama2c());
    srunner_add_suite(sr, suite_vecpath());
    srunner_add_suite(sr, suite_softfma());
    srunner_add_suite(sr, suite_grammar());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
