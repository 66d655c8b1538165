/* suites.h - one Check suite per module; check_main.c runs them all. */
#ifndef LOGITLAB_SUITES_H
#define LOGITLAB_SUITES_H

#include <check.h>

#include "tui/app.h"

Suite *suite_philox(void);
Suite *suite_sampler(void);
Suite *suite_settings(void);
Suite *suite_lessons(void);
Suite *suite_errors(void);
Suite *suite_report(void);
Suite *suite_view(void);
Suite *suite_app(void);
Suite *suite_fast(void);
Suite *suite_real(void);
Suite *suite_config(void);
Suite *suite_backend(void);
Suite *suite_quant(void);
Suite *suite_gguf(void);
Suite *suite_tokenizer(void);
/* The tokenizer suite's case for Gemma 4 (check_tokenizer_gemma4.c). */
TCase *tcase_tokenizer_gemma4(void);
Suite *suite_vocabs(void);
Suite *suite_llama(void);
Suite *suite_nonfinite(void);
Suite *suite_escape(void);
Suite *suite_writes(void);
Suite *suite_parsers(void);
Suite *suite_exercise(void);
Suite *suite_svg(void);
Suite *suite_layout(void);
Suite *suite_headbuild(void);
Suite *suite_stop(void);
Suite *suite_drawstoy(void);
Suite *suite_toybatch(void);
Suite *suite_read(void);
Suite *suite_words(void);
Suite *suite_marks(void);
Suite *suite_llama2c(void);
Suite *suite_vecpath(void);
Suite *suite_softfma(void);
Suite *suite_grammar(void);

/* The lessons directory of the source tree; tests run from the top directory. */
#define TEST_LESSONS "lessons"
/* The full-size lessons' head at a hidden size that the sanitized tests
 * build fast: 512, a round size every scenario's logits fit in (the
 * smallest: france 440, story 440, cat 496, loop 264). */
#define TEST_HIDDEN 512
#define TEST_SOURCE (&(struct app_options){ TEST_HIDDEN, NULL, NULL, NULL, NULL })

/* The message that refuses an order word (chain.c): prefix, then "'word' is
 * not a preset (lesson, hf, vllm, llamacpp) or a stage (penalty, ...)",
 * the stages as sampling.def lists them, so that a new stage changes no
 * test. The string lives until the next call (check_settings.c). */
const char *test_not_an_order(const char *prefix, const char *word);

/* The settings names[i] = values[i] parsed into a patch, as the command
 * line gives them to the app; each must parse. The patch lives until the
 * next call (check_settings.c). */
const struct settings_patch *test_patch(int n, const char *const *names, const char *const *values);

/* real-loop's greedy round: " and the cat sat on the mat" (the ids of the
 * Llama 3 vocabulary the lesson's scenario names), again and again. */
#define TEST_LOOP_ROUND 323, 279, 8415, 7731, 389, 279, 5634

/* Forces the vector path (base/vecpath.h) through LOGITLAB_VECTOR, as a
 * user would, when this CPU runs it: returns 1, else 0 with nothing set
 * (check_vecpath.c). A test that forces one unsets VEC_ENV after. */
int vec_force(int path);

#endif
