/* check_errors.c - every bad input is refused with its exact message.
 *
 * A learner who mistypes a lesson key or an option reads one line and must be
 * able to fix the input from it alone, so each case asserts the whole message,
 * file:line or option name included, not only that loading failed.
 *
 * "errors": the lesson loader (lesson_load_text, lesson_load) and the command
 * line (cli_parse). "edge": inputs at a limit, accepted or refused.
 * "fixed": bugs this suite found in src/, kept as regression tests.
 *
 * The tests run under AddressSanitizer and LeakSanitizer: a refused lesson
 * that leaks, or a loader that writes past a buffer, fails the run.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "base/err.h"
#include "data/lesson.h"
#include "core/settings.h"
#include "suites.h"

/* The path the messages name; no file is read. */
#define PATH "lessons/x.ini"

/* A minimal valid lesson, in parts so that a case can change one of them.
 * Line numbers are those of the whole text when the parts are joined. */
#define L_LESSON "[lesson]\nid = t\ntitle = T\n"   /* lines 1-3 */
#define L_VOCAB  "[vocab]\n0 = a\n1 = b\n"         /* lines 4-6 */
#define L_STEP1  "[step.1]\n"                      /* line 7 */
#define L_LOGITS "logits = 1.0 2.0\n"              /* line 8 */
#define MINIMAL  L_LESSON L_VOCAB L_STEP1 L_LOGITS /* anything appended starts on line 9 */

/* The key that starts the long lines built up to LESSON_MAX_LINE bytes and past it. */
#define LONG_LINE_KEY "text = "

/* ---- helpers ----------------------------------------------------------- */

/* Loads text, which must be refused with exactly want; the refused lesson
 * must be left empty, so that a caller has nothing to free. The struct is
 * filled with garbage first: the loader, not the caller, must clear it. */
static void expect_refused(const char *text, const char *want)
{
    static const struct lesson EMPTY;
    struct lesson L;
    struct err e = { 0, "" };
    memset(&L, 0xA5, sizeof L);
    int rc = lesson_load_text(&L, PATH, text, &e);
    if (rc == 0) {
        lesson_free(&L);
        ck_abort_msg("accepted a lesson that should fail with: %s", want);
    }
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(e.code, ERR_USAGE);
    ck_assert_msg(memcmp(&L, &EMPTY, sizeof L) == 0, "a refused lesson must be left empty");
}

/* Loads text, which must be accepted, and frees it. */
static void expect_loaded(const char *text)
{
    struct lesson L;
    struct err e = { 0, "" };
    int rc = lesson_load_text(&L, PATH, text, &e);
    ck_assert_msg(rc == 0, "refused a valid lesson: %s", e.msg);
    lesson_free(&L);
}

/* MINIMAL with one more line (given without its '\n') on line 10, after a
 * text line and before a note, so that it is neither the first nor the last
 * line of the step. want is the message after "lessons/x.ini:10: ". */
static void expect_step_line_refused(const char *line, const char *want)
{
    char text[512], full[ERR_MSG_MAX];
    int n = snprintf(text, sizeof text, MINIMAL "text = hello\n%s\nnote = after\n", line);
    ck_assert(n > 0 && (size_t)n < sizeof text);
    snprintf(full, sizeof full, PATH ":10: %s", want);
    expect_refused(text, full);
}

/* Argument vectors: cli_parse may permute argv and keeps pointers into it,
 * so each word is copied into writable storage that outlives the parse. */
#define ARGS_MAX 160
#define ARG_LEN  64

struct args {
    int argc;
    char *argv[ARGS_MAX + 1];
    char text[ARGS_MAX][ARG_LEN];
};

static void args_make(struct args *a, const char *const *words)
{
    a->argc = 0;
    for (; *words; words++) {
        ck_assert_int_lt(a->argc, ARGS_MAX);
        ck_assert_uint_lt(strlen(*words), ARG_LEN);
        strcpy(a->text[a->argc], *words);
        a->argv[a->argc] = a->text[a->argc];
        a->argc++;
    }
    a->argv[a->argc] = NULL;
}

/* The arguments are kept in static storage: getopt may hold a pointer into
 * the last argv between calls, and it must not point into a dead frame. */
static struct args cli_args;

/* Forgets what glibc's getopt remembers of the last argv, as a fresh process
 * would. (cli_parse now resets it too, with optind = 0; test_bug_cli_parse_twice
 * checks that without this helper.) */
static void getopt_forget(void)
{
    static char prog[] = "logitlab";
    static const struct option none[] = { { NULL, 0, NULL, 0 } };
    char *argv[] = { prog, NULL };
    /* glibc initialises afresh when optind is 0. getopt_long, not getopt: under
     * _POSIX_C_SOURCE getopt is the POSIX one, and the first call fixes the
     * ordering for later ones; cli_parse relies on the GNU permutation. */
    optind = 0;
    (void)getopt_long(1, argv, "", none, NULL);
}

/* Parses words as the next command line of the process, as main() would. */
static int cli_parse_words(const char *const *words, struct options *o, struct err *e)
{
    args_make(&cli_args, words);
    e->code = 0;
    e->msg[0] = '\0';
    return cli_parse(cli_args.argc, cli_args.argv, o, e);
}

/* Parses words as the first command line of the process. */
static int cli_run(const char *const *words, struct options *o, struct err *e)
{
    getopt_forget();
    return cli_parse_words(words, o, e);
}

static void expect_cli_refused(const char *const *words, const char *want)
{
    struct options o;
    struct err e;
    int rc = cli_run(words, &o, &e);
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(e.code, ERR_USAGE);
}

/* CLI_REFUSED("message", "--top-p", "1.5"): argv[0] is the program name. */
#define CLI_REFUSED(want, ...)                                                                     \
    expect_cli_refused((const char *const[]){ "logitlab", __VA_ARGS__, NULL }, want)

/* ---- lesson: syntax ------------------------------------------------------ */

START_TEST(test_lesson_minimal_is_valid)
{
    /* Every case below changes one thing of this lesson, so it must load. */
    expect_loaded(MINIMAL);
}
END_TEST

START_TEST(test_lesson_line_without_equals)
{
    expect_refused(L_LESSON "oops\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":4: expected 'name = value', a [section] or a comment (a line that "
                        "continues a value must be indented)");
}
END_TEST

START_TEST(test_lesson_section_without_bracket)
{
    /* inih would read the next line under [vocab]; the header is the culprit. */
    expect_refused(L_LESSON L_VOCAB "[step.1\n" L_LOGITS,
                   PATH ":7: a section header needs a closing ']'");
}
END_TEST

START_TEST(test_lesson_unknown_section)
{
    expect_refused(MINIMAL "[steps.2]\nlogits = 1 2\n", PATH
                   ":9: unknown section [steps.2] (sections: lesson, vocab, settings, head, model, "
                   "step.1, step.2, ...)");
    /* Steps count from 1. */
    expect_refused(L_LESSON L_VOCAB "[step.0]\n" L_LOGITS, PATH
                   ":7: unknown section [step.0] (sections: lesson, vocab, settings, head, model, "
                   "step.1, step.2, ...)");
    /* inih never reports a header with no keys under it; the loader must. */
    expect_refused(MINIMAL "[extra]\n", PATH
                   ":9: unknown section [extra] (sections: lesson, vocab, settings, head, model, "
                   "step.1, step.2, ...)");
}
END_TEST

START_TEST(test_lesson_unknown_key)
{
    expect_refused(MINIMAL "temprature = 0.5\n", PATH ":9: unknown key 'temprature' in [step.1]");
    expect_refused("[lesson]\nid = t\ntitel = T\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":3: unknown key 'titel' in [lesson]");
    expect_refused(L_LESSON L_VOCAB "[settings]\ntop_p = 0.9\n" L_STEP1 L_LOGITS,
                   PATH ":8: unknown key 'top_p' in [settings]");
    expect_refused(L_LESSON "[vocab]\n0 = a\nx = b\n" L_STEP1 L_LOGITS,
                   PATH ":6: unknown key 'x' in [vocab]");
}
END_TEST

START_TEST(test_lesson_key_before_section)
{
    expect_refused("id = t\n" MINIMAL, PATH ":1: 'id' comes before any [section]");
}
END_TEST

START_TEST(test_lesson_key_given_twice)
{
    expect_refused(MINIMAL "logits = 3.0 4.0\n",
                   PATH ":9: 'logits' is given twice in [step.1] (first on line 8)");
    expect_refused("[lesson]\nid = t\nid = u\ntitle = T\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":3: 'id' is given twice in [lesson] (first on line 2)");
}
END_TEST

START_TEST(test_lesson_line_too_long)
{
    /* A line of 198 bytes would be split by inih's 200-byte buffer. */
    char text[512];
    char line[256];
    size_t key = strlen(LONG_LINE_KEY);
    memcpy(line, LONG_LINE_KEY, key);
    memset(line + key, 'x', LESSON_MAX_LINE + 1 - key);
    line[LESSON_MAX_LINE + 1] = '\0';
    snprintf(text, sizeof text, MINIMAL "%s\n", line);
    expect_refused(text, PATH ":9: line is 198 bytes long; lines are limited to 197 bytes "
                              "(inih's limit)");
}
END_TEST

START_TEST(test_lesson_invalid_utf8)
{
    expect_refused("[lesson]\nid = t\ntitle = T\xff\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":3: the text is not valid UTF-8");
    /* An overlong '/', the classic way to smuggle a path separator. */
    expect_refused(L_LESSON "[vocab]\n0 = \xc0\xaf\n1 = b\n" L_STEP1 L_LOGITS,
                   PATH ":5: the text is not valid UTF-8");
    /* A sequence cut short by the end of the text. */
    expect_refused(MINIMAL "text = \xe2\x82", PATH ":9: the text is not valid UTF-8");
}
END_TEST

/* ---- lesson: [lesson] and [vocab] ---------------------------------------- */

START_TEST(test_lesson_missing_id_or_title)
{
    expect_refused("[lesson]\ntitle = T\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":1: the [lesson] section needs an id");
    expect_refused("[lesson]\nid = t\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":1: the [lesson] section needs a title");
}
END_TEST

START_TEST(test_lesson_bad_id)
{
    /* Ids are typed on the command line and name files: lower case only. */
    expect_refused("[lesson]\nid = Toy\ntitle = T\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":2: id 'Toy' must be 1 to 32 of a-z, 0-9 and '-'");
    expect_refused("[lesson]\nid = my toy\ntitle = T\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":2: id 'my toy' must be 1 to 32 of a-z, 0-9 and '-'");
    expect_refused(
        "[lesson]\nid = abcdefghijklmnopqrstuvwxyz0123456\ntitle = T\n" L_VOCAB L_STEP1 L_LOGITS,
        PATH ":2: id 'abcdefghijklmnopqrstuvwxyz0123456' must be 1 to 32 of a-z, 0-9 "
             "and '-'");
}
END_TEST

START_TEST(test_lesson_missing_vocab)
{
    /* No section, no line to point at: the message names the file. */
    expect_refused(L_LESSON L_STEP1 L_LOGITS,
                   PATH ": the vocabulary is missing: there is no [vocab] section");
    /* An empty section is reported at its header. */
    expect_refused(L_LESSON "[vocab]\n" L_STEP1 L_LOGITS,
                   PATH ":4: [vocab] lists no tokens (write them as 'id = text')");
}
END_TEST

START_TEST(test_lesson_vocab_gap)
{
    expect_refused(L_LESSON "[vocab]\n0 = a\n2 = c\n" L_STEP1 "logits = 1 2 3\n",
                   PATH ":5: the vocabulary has no token 1 (ids must run from 0 to 2)");
}
END_TEST

START_TEST(test_lesson_token_twice)
{
    expect_refused(L_LESSON "[vocab]\n0 = a\n1 = b\n1 = c\n" L_STEP1 L_LOGITS,
                   PATH ":7: token 1 is given twice (first on line 6)");
    /* The same id spelled differently is still the same token. */
    expect_refused(L_LESSON "[vocab]\n0 = a\n1 = b\n01 = c\n" L_STEP1 L_LOGITS,
                   PATH ":7: token 1 is given twice (first on line 6)");
}
END_TEST

START_TEST(test_lesson_bad_vocab_entries)
{
    expect_refused(L_LESSON "[vocab]\n0 = a\n1 =\n" L_STEP1 L_LOGITS,
                   PATH ":6: token 1 has no text");
    expect_refused(L_LESSON "[vocab]\n0 = a\n  b\n1 = c\n" L_STEP1 L_LOGITS,
                   PATH ":6: a token cannot continue on the next line");
    expect_refused(L_LESSON L_VOCAB "5000 = c\n" L_STEP1 L_LOGITS,
                   PATH ":7: token id 5000 is too large (a lesson has at most 4096 tokens)");
    expect_refused(L_LESSON L_VOCAB "eos = 5\n" L_STEP1 L_LOGITS,
                   PATH ":7: eos: 5 is out of range (must be 0 to 1)");
    expect_refused(L_LESSON L_VOCAB "join = maybe\n" L_STEP1 L_LOGITS,
                   PATH ":7: join must be 'space' or 'none', not 'maybe'");
}
END_TEST

/* ---- lesson: steps and their rows ---------------------------------------- */

START_TEST(test_lesson_missing_step1)
{
    expect_refused(L_LESSON L_VOCAB, PATH ": the lesson has no [step.1]");
}
END_TEST

START_TEST(test_lesson_step_gap)
{
    /* The line is that of the header of [step.3], the step that is out of sequence. */
    expect_refused(MINIMAL "[step.3]\nlogits = 1 2\n",
                   PATH ":9: there is no [step.2] (steps are numbered 1, 2, 3, ...)");
    expect_refused(MINIMAL "[step.300]\nlogits = 1 2\n",
                   PATH ":9: [step.300]: a lesson has at most 256 steps");
}
END_TEST

START_TEST(test_lesson_step_without_row)
{
    expect_refused(L_LESSON L_VOCAB L_STEP1 "text = nothing to sample\n",
                   PATH ":7: [step.1] needs logits, probs or hidden");
}
END_TEST

START_TEST(test_lesson_step_with_two_rows)
{
    expect_refused(MINIMAL "probs = 0.5 0.5\n",
                   PATH ":8: [step.1] gives more than one of logits, probs and hidden");
}
END_TEST

START_TEST(test_lesson_logits_count)
{
    expect_refused(L_LESSON L_VOCAB L_STEP1 "logits = 1.0\n",
                   PATH ":8: logits has 1 value, the vocabulary has 2 tokens");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "logits =\n",
                   PATH ":8: logits has 0 values, the vocabulary has 2 tokens");
    /* Too many logits: see test_bug_logits_too_many. */
}
END_TEST

START_TEST(test_lesson_logits_not_numbers)
{
    expect_refused(L_LESSON L_VOCAB L_STEP1 "logits = nan 2.0\n",
                   PATH ":8: logits: value 1 ('nan') is NaN");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "logits = 1.0 inf\n",
                   PATH ":8: logits: value 2 ('inf') is not finite");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "logits = 1.0 -inf\n",
                   PATH ":8: logits: value 2 ('-inf') is not finite");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "logits = 1.0 1e999\n",
                   PATH ":8: logits: value 2 ('1e999') is not finite");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "logits = 1.0 x\n",
                   PATH ":8: logits: 'x' is not a number");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "logits = 1.0 2.0abc\n",
                   PATH ":8: logits: '2.0abc' is not a number");
}
END_TEST

START_TEST(test_lesson_probs)
{
    expect_refused(L_LESSON L_VOCAB L_STEP1 "probs = 0.5 0.4\n",
                   PATH ":8: probs add up to 0.9, not 1");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "probs = 1.5 -0.5\n",
                   PATH ":8: probs: value 1 (1.5) is not in [0, 1]");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "probs = 1.0 -0.0001\n",
                   PATH ":8: probs: value 2 (-0.0001) is not in [0, 1]");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "probs = 1\n",
                   PATH ":8: probs has 1 value, the vocabulary has 2 tokens");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "probs = 0.5 nan\n",
                   PATH ":8: probs: value 2 ('nan') is NaN");
}
END_TEST

START_TEST(test_lesson_hidden_without_head)
{
    expect_refused(L_LESSON L_VOCAB L_STEP1 "hidden = 1 2\n",
                   PATH ":8: hidden needs a [head] section with the LM head's rows");
}
END_TEST

START_TEST(test_lesson_bad_head)
{
    /* Lines 7.. hold the [head]; the step gives a hidden vector for it. */
    expect_refused(L_LESSON L_VOCAB "[head]\nrow.0 = 1 0\n" L_STEP1 "hidden = 1 2\n",
                   PATH ":8: [head] has no row.1 (every token needs a row)");
    expect_refused(L_LESSON L_VOCAB "[head]\nrow.0 = 1 0\nrow.1 = 0 1\nrow.5 = 1 1\n" L_STEP1
                                    "hidden = 1 2\n",
                   PATH ":10: row.5: no token 5 in the vocabulary (0..1)");
    expect_refused(L_LESSON L_VOCAB "[head]\nrow.0 = 1 0\nrow.1 = 0 1 2\n" L_STEP1 "hidden = 1 2\n",
                   PATH ":9: row.1 has 3 weights, the rows before it have 2");
    expect_refused(L_LESSON L_VOCAB "[head]\nrow.0 = 1 0\nrow.1 = 0 1\n" L_STEP1 "hidden = 1 2 3\n",
                   PATH ":11: hidden has 3 values, the head's rows have 2");
    expect_refused(L_LESSON L_VOCAB "[head]\neps = -1\nrow.0 = 1 0\nrow.1 = 0 1\n" L_STEP1
                                    "hidden = 1 2\n",
                   PATH ":8: eps: must be 0 or more");
    expect_refused(L_LESSON L_VOCAB "[head]\nrow.0 =\nrow.1 = 0 1\n" L_STEP1 "hidden = 1 2\n",
                   PATH ":8: row.0 has no weights");
}
END_TEST

/* ---- lesson: settings, context, ask --------------------------------------- */

START_TEST(test_lesson_bad_step_settings)
{
    /* Each message names the key and its line, then says what is wrong. */
    expect_step_line_refused("temperature = -1",
                             "temperature: -1 is out of range (must be 0 or more)");
    expect_step_line_refused("top-p = 1.5", "top-p: 1.5 is out of range (must be in (0, 1])");
    expect_step_line_refused("min-p = 2", "min-p: 2 is out of range (must be in [0, 1])");
    expect_step_line_refused("top-k = -1", "top-k: -1 is out of range (must be 0 or more)");
    expect_step_line_refused("repetition-penalty = 0",
                             "repetition-penalty: 0 is out of range (must be more than 0)");
    expect_step_line_refused("temperature = abc", "temperature: 'abc' is not a number");
    expect_step_line_refused("top-k = 2.5", "top-k: '2.5' is not a whole number");
    expect_step_line_refused("penalty-scope = everything",
                             "penalty-scope: 'everything' is not a scope (generated or all)");
    expect_step_line_refused("seed = -1", "seed: '-1' is not a seed (a whole number 0 to 2^64-1)");
    expect_step_line_refused("digits = 11", "digits: 11 is out of range (must be 0 to 10)");
}
END_TEST

START_TEST(test_lesson_bad_lesson_settings)
{
    /* Lesson-wide settings are checked where they are written, not at the step. */
    expect_refused(L_LESSON L_VOCAB "[settings]\ntop-p = 0\n" L_STEP1 L_LOGITS,
                   PATH ":8: top-p: 0 is out of range (must be in (0, 1])");
}
END_TEST

START_TEST(test_lesson_bad_order)
{
    expect_step_line_refused("order = bogus", test_not_an_order("order: ", "bogus"));
    expect_step_line_refused("order = top-k, top-k", "order: 'top-k, top-k' names top-k twice");
    /* "custom" is what the UI shows for a spelled-out order, not a preset to ask for. */
    expect_step_line_refused("order = custom", test_not_an_order("order: ", "custom"));
}
END_TEST

START_TEST(test_lesson_bad_tries)
{
    expect_step_line_refused("try = temperature -1",
                             "try: temperature: -1 is out of range (must be 0 or more)");
    expect_step_line_refused("try = tempo 1", "try: 'tempo' is not a setting");
    /* Every part of a combined suggestion is checked, not only the first. */
    expect_step_line_refused("try = top-k 2 | top-p 7",
                             "try: top-p: 7 is out of range (must be in (0, 1])");
    /* A setting named twice: the second would silently win (issue 29, part 5). */
    expect_step_line_refused("try = temperature 0.5 | top-k 2 | temperature 2",
                             "try: 'temperature' is given twice");
}
END_TEST

START_TEST(test_lesson_context_outside_vocab)
{
    expect_refused(MINIMAL "context = 0 5\n",
                   PATH ":9: context: token id 5 is not in the vocabulary (0..1)");
    expect_refused(MINIMAL "context = 0 -1\n",
                   PATH ":9: context: '0 -1' is not a list of token ids");
    expect_refused("[lesson]\nid = t\ntitle = T\nprompt = 0 7\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":4: prompt: token id 7 is not in the vocabulary (0..1)");
}
END_TEST

START_TEST(test_lesson_context_without_prompt)
{
    /* Lines: 1-4 [lesson] with a prompt, 5-7 [vocab], 8 [step.1], 9 logits, 10 context. */
    expect_refused("[lesson]\nid = t\ntitle = T\nprompt = 0 1\n" L_VOCAB L_STEP1 L_LOGITS
                   "context = 1 0 1\n",
                   PATH ":10: context must begin with the lesson's prompt");
    /* A context shorter than the prompt cannot begin with it either. */
    expect_refused("[lesson]\nid = t\ntitle = T\nprompt = 0 1\n" L_VOCAB L_STEP1 L_LOGITS
                   "context = 0\n",
                   PATH ":10: context must begin with the lesson's prompt");
}
END_TEST

START_TEST(test_lesson_bad_ask)
{
    expect_refused(MINIMAL "ask = prob zz\n",
                   PATH ":9: ask: 'zz' is not a token of the vocabulary");
    expect_refused(MINIMAL "ask = prob 2\n", PATH ":9: ask: '2' is not a token of the vocabulary");
    expect_refused(MINIMAL "ask = median a\n",
                   PATH ":9: ask: 'median' is not a value to ask for (exp, prob, final, cum, "
                        "adjusted, sum, kept-mass, kept)");
    expect_refused(MINIMAL "ask = prob\n",
                   PATH ":9: ask: 'prob' needs a token (an id or its text)");
    /* The second item of a list is checked too. */
    expect_refused(MINIMAL "ask = prob a, exp zz\n",
                   PATH ":9: ask: 'zz' is not a token of the vocabulary");
}
END_TEST

/* ---- lesson: files ---------------------------------------------------- */

START_TEST(test_lesson_load_missing_file)
{
    static const struct lesson EMPTY;
    struct lesson L;
    struct err e = { 0, "" };
    memset(&L, 0xA5, sizeof L);
    ck_assert_int_eq(lesson_load(&L, "no/such/file.ini", &e), -1);
    ck_assert_str_eq(e.msg, "no/such/file.ini: cannot open: No such file or directory");
    ck_assert_int_eq(e.code, ERR_USAGE);
    ck_assert_msg(memcmp(&L, &EMPTY, sizeof L) == 0, "a refused lesson must be left empty");
}
END_TEST

START_TEST(test_lesson_load_nul_byte)
{
    /* A binary file is refused before inih would stop reading at the NUL. */
    char path[] = "/tmp/logitlab-check-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    static const char text[] = L_LESSON "\0" L_VOCAB L_STEP1 L_LOGITS;
    ssize_t wrote = write(fd, text, sizeof text - 1);
    close(fd);
    ck_assert_int_eq(wrote, (ssize_t)(sizeof text - 1));
    struct lesson L;
    struct err e = { 0, "" };
    int rc = lesson_load(&L, path, &e);
    unlink(path);
    char want[ERR_MSG_MAX];
    snprintf(want, sizeof want, "%s:4: the file holds a NUL byte (is it a text file?)", path);
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_eq(rc, -1);
}
END_TEST

START_TEST(test_lesson_load_directory)
{
    /* fopen() opens a directory; only the read fails. */
    struct lesson L;
    struct err e = { 0, "" };
    ck_assert_int_eq(lesson_load(&L, TEST_LESSONS, &e), -1);
    ck_assert_str_eq(e.msg, TEST_LESSONS ": not a regular file");
}
END_TEST

/* ---- lesson: edges ------------------------------------------------------- */

START_TEST(test_lesson_longest_line_loads)
{
    char text[512];
    char line[256];
    size_t key = strlen(LONG_LINE_KEY);
    memcpy(line, LONG_LINE_KEY, key);
    memset(line + key, 'x', LESSON_MAX_LINE - key);
    line[LESSON_MAX_LINE] = '\0';
    snprintf(text, sizeof text, MINIMAL "%s\n", line);
    expect_loaded(text);
    /* A CR before the LF is not part of the line's length. */
    snprintf(text, sizeof text, MINIMAL "%s\r\n", line);
    expect_loaded(text);
}
END_TEST

START_TEST(test_lesson_accepted_variants)
{
    /* A byte order mark, CRLF line ends, comments, an indented continuation. */
    expect_loaded("\xEF\xBB\xBF" MINIMAL);
    expect_loaded("[lesson]\r\nid = t\r\ntitle = T\r\n[vocab]\r\n0 = a\r\n1 = b\r\n"
                  "[step.1]\r\nlogits = 1.0 2.0\r\n");
    expect_loaded("; a comment\n" L_LESSON L_VOCAB L_STEP1 "logits = 1.0 ; inline\n  2.0\n");
    expect_loaded(L_LESSON "[vocab]\n0 = \"Temp\xc3\xa9rature\"\n1 = b\n" L_STEP1 L_LOGITS);
    expect_loaded(L_LESSON L_VOCAB L_STEP1 "probs = 1 0\n");
    expect_loaded(L_LESSON L_VOCAB "[head]\neps = 1e-6\nrow.0 = 1 0\nrow.1 = 0 1\n" L_STEP1
                                   "hidden = 1 2\n");
    expect_loaded(MINIMAL "ask = prob a, exp 1, sum, kept-mass\n");
}
END_TEST

START_TEST(test_lesson_error_at_first_culprit)
{
    /* Two mistakes: the message is about the first one in the file. */
    expect_refused(L_LESSON "oops\n" L_VOCAB L_STEP1 L_LOGITS "temprature = 1\n",
                   PATH ":4: expected 'name = value', a [section] or a comment (a line that "
                        "continues a value must be indented)");
    expect_refused(L_LESSON L_VOCAB L_STEP1 L_LOGITS "temprature = 1\noops\n",
                   PATH ":9: unknown key 'temprature' in [step.1]");
}
END_TEST

/* ---- command line -------------------------------------------------------- */

START_TEST(test_cli_values_out_of_range)
{
    CLI_REFUSED("--temperature: -1 is out of range (must be 0 or more)", "--temperature", "-1");
    CLI_REFUSED("--top-p: 0 is out of range (must be in (0, 1])", "--top-p", "0");
    CLI_REFUSED("--top-p: 1.5 is out of range (must be in (0, 1])", "--top-p", "1.5");
    CLI_REFUSED("--min-p: -0.1 is out of range (must be in [0, 1])", "--min-p", "-0.1");
    CLI_REFUSED("--min-p: 1.5 is out of range (must be in [0, 1])", "--min-p", "1.5");
    CLI_REFUSED("--top-k: -1 is out of range (must be 0 or more)", "--top-k", "-1");
    CLI_REFUSED("--repetition-penalty: 0 is out of range (must be more than 0)",
                "--repetition-penalty", "0");
    CLI_REFUSED("--step: 0 is out of range (must be 1 to 1048576)", "--step", "0");
    CLI_REFUSED("--top: -1 is out of range (must be 0 to 1073741824)", "--top", "-1");
    CLI_REFUSED("--max-tokens: -1 is out of range (must be 0 or more)", "--max-tokens", "-1");
    CLI_REFUSED("--shift: 1e7 is out of range (must be between -1e6 and 1e6)", "--shift", "1e7");
}
END_TEST

START_TEST(test_cli_values_not_numbers)
{
    CLI_REFUSED("--temperature: 'abc' is not a number", "--temperature", "abc");
    CLI_REFUSED("--temperature: 'nan' is not a number (NaN)", "--temperature", "nan");
    CLI_REFUSED("--temperature: 'inf' is not a finite number", "--temperature", "inf");
    CLI_REFUSED("--top-p: a number is missing", "--top-p", "");
    CLI_REFUSED("--top-k: '3.5' is not a whole number", "--top-k", "3.5");
    CLI_REFUSED("--step: '1x' is not a whole number", "--step", "1x");
    CLI_REFUSED("--seed: '-1' is not a seed (a whole number 0 to 2^64-1)", "--seed", "-1");
    CLI_REFUSED("--seed: 18446744073709551616 is out of range (a seed is at most 2^64-1)", "--seed",
                "18446744073709551616");
}
END_TEST

START_TEST(test_cli_bad_words)
{
    CLI_REFUSED(test_not_an_order("--order: ", "bogus"), "--order", "bogus");
    CLI_REFUSED("--order: 'top-k,top-k' names top-k twice", "--order", "top-k,top-k");
    CLI_REFUSED("--order: an order is empty", "--order", "");
    CLI_REFUSED("--format: 'xml' is not a format (text, csv, json, markdown or svg)", "--format",
                "xml");
    CLI_REFUSED("--penalty-formula: 'x' is not a formula (engine or lesson)", "--penalty-formula",
                "x");
    CLI_REFUSED("--stop: unknown escape \\q in '\\q' (use \\n \\t \\\\ \\\")", "--stop", "\\q");
}
END_TEST

START_TEST(test_cli_unknown_option)
{
    CLI_REFUSED("unknown option '-x' (logitlab --help lists them)", "-x");
    CLI_REFUSED("unknown option '--bogus' (logitlab --help lists them)", "--bogus");
    CLI_REFUSED("unknown option '--bogus' (logitlab --help lists them)", "show", "toy",
                "--bogus=3");
}
END_TEST

START_TEST(test_cli_missing_value)
{
    CLI_REFUSED("option '--top-p' needs a value", "show", "toy", "--top-p");
    CLI_REFUSED("option '--step' needs a value", "--step");
}
END_TEST

START_TEST(test_cli_bad_arguments)
{
    CLI_REFUSED("show needs a lesson: logitlab show LESSON (see logitlab lessons), --model "
                "FILE.gguf or --logits FILE.npy",
                "show");
    CLI_REFUSED("show needs a lesson: logitlab show LESSON (see logitlab lessons), --model "
                "FILE.gguf or --logits FILE.npy",
                "show", "--top-k", "3");
    CLI_REFUSED("one lesson at a time (got 'a' and 'b')", "a", "b");
    CLI_REFUSED("'lessons' takes no argument (got 'x')", "lessons", "x");
}
END_TEST

/* tokenize: a file, one text, and only its own options. */
START_TEST(test_cli_tokenize)
{
    CLI_REFUSED("tokenize needs --model FILE.gguf (a model, or a vocabulary-only file)", "tokenize",
                "-p", "hi");
    CLI_REFUSED("tokenize needs a text: -p TEXT or -f FILE", "tokenize", "-m", "v.gguf");
    CLI_REFUSED("--prompt and --prompt-file are two texts: give one", "tokenize", "-m", "v.gguf",
                "-p", "hi", "-f", "t.txt");
    CLI_REFUSED("'tokenize' takes no argument (got 'toy'): the text goes in -p TEXT or -f FILE",
                "tokenize", "toy", "-m", "v.gguf", "-p", "hi");
    CLI_REFUSED("--chat: tokenize does not take it", "tokenize", "-m", "v.gguf", "-p", "hi",
                "--chat");
    CLI_REFUSED("--top-k: tokenize does not take it", "tokenize", "-m", "v.gguf", "-p", "hi",
                "--top-k", "3");
    CLI_REFUSED("--no-bos: show does not take it", "show", "-m", "v.gguf", "--no-bos");
    struct options o;
    struct err e;
    int rc = cli_run((const char *const[]){ "logitlab", "tokenize", "-m", "v.gguf", "-f", "t.txt",
                                            "--no-bos", "--special", NULL },
                     &o, &e);
    ck_assert_msg(rc == 0, "refused: %s", e.msg);
    ck_assert_str_eq(o.command, "tokenize");
    ck_assert_str_eq(o.model, "v.gguf");
    ck_assert_str_eq(o.prompt_file, "t.txt");
    ck_assert_int_eq(o.no_bos, 1);
    ck_assert_int_eq(o.special, 1);
    ck_assert_ptr_null(o.lesson);
}
END_TEST

START_TEST(test_cli_good_command_line)
{
    struct options o;
    struct err e;
    int rc = cli_run(
        (const char *const[]){ "logitlab", "show", "toy", "--top-k", "3", "--seed", "42", NULL },
        &o, &e);
    ck_assert_msg(rc == 0, "refused: %s", e.msg);
    ck_assert_int_eq(o.action, CLI_RUN);
    ck_assert_str_eq(o.command, "show");
    ck_assert_str_eq(o.lesson, "toy");
    ck_assert_int_eq(o.step, 1);
    ck_assert_int_eq(o.format, REPORT_TEXT);
    ck_assert_str_eq(o.first_setting, "top-k");
    ck_assert_uint_eq(o.over.given, (1u << (setting_find("top-k") - SETTINGS_INFO)) |
                                        (1u << (setting_find("seed") - SETTINGS_INFO)));
    ck_assert_int_eq(o.over.val.sampler.top_k, 3);
    ck_assert_uint_eq(o.over.val.sampler.seed, 42);
}
END_TEST

START_TEST(test_cli_options_before_command)
{
    /* getopt_long permutes: options may come before the command. */
    struct options o;
    struct err e;
    int rc = cli_run((const char *const[]){ "logitlab", "--step", "2", "--format=json", "show",
                                            "toy", "--temperature", "0.5", NULL },
                     &o, &e);
    ck_assert_msg(rc == 0, "refused: %s", e.msg);
    ck_assert_str_eq(o.command, "show");
    ck_assert_str_eq(o.lesson, "toy");
    ck_assert_int_eq(o.step, 2);
    ck_assert_int_eq(o.format, REPORT_JSON);
    ck_assert_str_eq(o.first_setting, "temperature");
    ck_assert_uint_eq(o.over.given, 1u << (setting_find("temperature") - SETTINGS_INFO));
    ck_assert_double_eq(o.over.val.sampler.temperature, 0.5);
}
END_TEST

START_TEST(test_cli_many_settings)
{
    /* A setting given again replaces its value, however often: 100 seeds
     * (the options once held 64 and refused the 65th), the last wins. */
    static char *words[2 * 100 + 2];
    static char values[100][12];
    int n = 0;
    words[n++] = "logitlab";
    for (int i = 0; i < 100; i++) {
        snprintf(values[i], sizeof values[i], "%d", i + 1);
        words[n++] = "--seed";
        words[n++] = values[i];
    }
    words[n] = NULL;
    struct options o;
    struct err e;
    ck_assert_msg(cli_parse(n, words, &o, &e) == 0, "%s", e.msg);
    ck_assert_uint_eq(o.over.val.sampler.seed, 100);
    ck_assert_str_eq(o.first_setting, "seed");
}
END_TEST

/* ---- fixed: bugs found by this suite, kept as regressions ------------------- */

START_TEST(test_bug_logits_too_many)
{
    /* lesson.c allocates V logits and lets parse_numbers write V + 1. */
    expect_refused(L_LESSON L_VOCAB L_STEP1 "logits = 1 2 3\n",
                   PATH ":8: logits has 3 values, the vocabulary has 2 tokens");
    expect_refused(L_LESSON L_VOCAB L_STEP1 "logits = 1 2 3 4\n",
                   PATH ":8: logits has 4 values, the vocabulary has 2 tokens");
}
END_TEST

START_TEST(test_bug_cli_parse_twice)
{
    /* cli_parse once reset getopt with optind = 1, which glibc takes as "go
     * on": its pointer into the previous argv survived, and a parse that
     * stopped inside "-hV" derailed the next one. optind = 0 starts afresh. */
    struct options o;
    struct err e;
    ck_assert_int_eq(cli_run((const char *const[]){ "logitlab", "-hV", NULL }, &o, &e), 0);
    ck_assert_int_eq(o.action, CLI_HELP);
    int rc = cli_parse_words((const char *const[]){ "logitlab", "show", "toy", NULL }, &o, &e);
    ck_assert_msg(rc == 0, "refused: %s", e.msg);
    ck_assert_int_eq(o.action, CLI_RUN);
    ck_assert_str_eq(o.command, "show");
    ck_assert_str_eq(o.lesson, "toy");
    /* The same after an unknown short option, which leaves getopt pointing at
     * the end of "-x", in storage the next argv reuses. */
    getopt_forget();
    ck_assert_int_eq(cli_parse_words((const char *const[]){ "logitlab", "-x", NULL }, &o, &e), -1);
    ck_assert_int_eq(cli_parse_words((const char *const[]){ "logitlab", "--bogus", NULL }, &o, &e),
                     -1);
    ck_assert_str_eq(e.msg, "unknown option '--bogus' (logitlab --help lists them)");
}
END_TEST

START_TEST(test_bug_cli_flag_with_value)
{
    /* glibc reports "--help=x" as '?' with optopt 'h': the message names '-h',
     * an option the user did not type. */
    struct options o;
    struct err e;
    int rc = cli_run((const char *const[]){ "logitlab", "--help=x", NULL }, &o, &e);
    ck_assert_int_eq(rc, -1);
    /* Quoted, as the option the message is about, not the "--help" of its hint. */
    ck_assert_msg(strstr(e.msg, "'--help") != NULL, "message does not name '--help': %s", e.msg);
}
END_TEST

START_TEST(test_bug_penalty_range_message)
{
    /* 1e7 is finite; the message must give the real range, as --shift does. */
    CLI_REFUSED("--presence-penalty: 1e7 is out of range (must be between -1e6 and 1e6)",
                "--presence-penalty", "1e7");
    CLI_REFUSED("--frequency-penalty: -1e7 is out of range (must be between -1e6 and 1e6)",
                "--frequency-penalty", "-1e7");
}
END_TEST

START_TEST(test_bug_int_overflow_message)
{
    /* 99999999999 is "0 or more"; what it is not is an int. */
    CLI_REFUSED("--top-k: 99999999999 is out of range (must be 0 to 2147483647)", "--top-k",
                "99999999999");
}
END_TEST

START_TEST(test_bug_utf8_surrogate)
{
    /* ED A0 80 encodes U+D800, a UTF-16 surrogate: not valid UTF-8. */
    expect_refused("[lesson]\nid = t\ntitle = \xed\xa0\x80\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":3: the text is not valid UTF-8");
}
END_TEST

START_TEST(test_bug_ask_huge_id)
{
    /* atoi("4294967296") wraps to 0 in an int: the ask silently means token 0. */
    expect_refused(MINIMAL "ask = prob 4294967296\n",
                   PATH ":9: ask: '4294967296' is not a token of the vocabulary");
}
END_TEST

START_TEST(test_bug_step_header_line)
{
    /* The line of [step.1] is taken as "first key - 1", wrong after a comment. */
    expect_refused(L_LESSON L_VOCAB L_STEP1 "; why\n\ntext = nothing to sample\n",
                   PATH ":7: [step.1] needs logits, probs or hidden");
    /* A header with no keys under it is a step with no row, not a missing step. */
    expect_refused(L_LESSON L_VOCAB L_STEP1 "[step.2]\n" L_LOGITS,
                   PATH ":7: [step.1] needs logits, probs or hidden");
}
END_TEST

START_TEST(test_bug_hidden_gives_nan)
{
    /* With eps 0, a zero hidden vector divides 0 by 0: a loaded lesson promises
     * finite logits, so the loader refuses it at the hidden line.
     * Lines: [lesson] 1-3, [vocab] 4-6, [head] 7-9, [step.1] 10, hidden 11. */
    expect_refused(L_LESSON L_VOCAB "[head]\nrow.0 = 1 0\nrow.1 = 0 1\n" L_STEP1 "hidden = 0 0\n",
                   PATH ":11: hidden: RMSNorm divides by 0 (an all-zero vector needs eps > 0 in "
                        "[head])");
    /* Weights so large that a dot product overflows. */
    expect_refused(L_LESSON L_VOCAB
                   "[head]\neps = 1\nrow.0 = 1.5e308 1.5e308\nrow.1 = 0 1\n" L_STEP1
                   "hidden = 1 1\n",
                   PATH ":12: hidden: the head gives token 0 a logit that is not finite");
    /* Finite but past the sampler's limit (issue 12): with eps 1 the rms of
     * h = (1, 1) is sqrt(1 + 1), h normalizes to (0.71, 0.71), and token 0
     * gets 2e30 x 1.41 = 2.8e30 > 1e30. */
    expect_refused(L_LESSON L_VOCAB "[head]\neps = 1\nrow.0 = 2e30 2e30\nrow.1 = 0 1\n" L_STEP1
                                    "hidden = 1 1\n",
                   PATH ":12: hidden: the head gives token 0 a logit past the sampler's limit of "
                        "1e30");
}
END_TEST

START_TEST(test_lesson_ambiguities_refused)
{
    /* Two tokens with one text could not be told apart in a table or an ask. */
    expect_refused(L_LESSON "[vocab]\n0 = a\n1 = a\n" L_STEP1 L_LOGITS,
                   PATH ":6: token 1 has the same text as token 0 ('a')");
    /* A setting given twice in one section (stop strings add up instead). */
    expect_refused(MINIMAL "seed = 1\nseed = 2\n",
                   PATH ":10: 'seed' is given twice in [step.1] (first on line 9)");
    expect_loaded(MINIMAL "stop = a\nstop = b\n");
    /* inih drops text after a section header; we refuse it. */
    expect_refused("[lesson] junk\nid = t\ntitle = T\n" L_VOCAB L_STEP1 L_LOGITS,
                   PATH ":1: text after the section header [lesson]");
    expect_loaded("[lesson] ; a comment\nid = t\ntitle = T\n" L_VOCAB L_STEP1 L_LOGITS);
    /* An ask item with a word too many. */
    expect_refused(MINIMAL "ask = prob a b\n", PATH ":9: ask: 'prob a b' has a word too many");
    expect_refused(MINIMAL "ask = sum a\n", PATH ":9: ask: 'sum a' has a word too many");
    /* A line that is all value and no name. */
    expect_refused(MINIMAL "= x\n", PATH ":9: a name is missing before '='");
    /* An inline comment on a continuation line is a comment, whatever the inih version. */
    expect_loaded(L_LESSON L_VOCAB L_STEP1 "logits = 1.0\n  2.0 ; the second logit\n");
}
END_TEST

START_TEST(test_cli_order_with_empty_stage)
{
    CLI_REFUSED("--order: 'top-k,' has an empty stage", "--order", "top-k,");
    CLI_REFUSED("--order: 'top-k,,top-p' has an empty stage", "--order", "top-k,,top-p");
    CLI_REFUSED("option '--pen' is ambiguous (--penalty-formula, --penalty-scope, "
                "--penalty-last-n)",
                "--pen", "1");
}
END_TEST

Suite *suite_errors(void)
{
    Suite *s = suite_create("errors");

    TCase *tc = tcase_create("errors");
    tcase_add_test(tc, test_lesson_minimal_is_valid);
    tcase_add_test(tc, test_lesson_line_without_equals);
    tcase_add_test(tc, test_lesson_section_without_bracket);
    tcase_add_test(tc, test_lesson_unknown_section);
    tcase_add_test(tc, test_lesson_unknown_key);
    tcase_add_test(tc, test_lesson_key_before_section);
    tcase_add_test(tc, test_lesson_key_given_twice);
    tcase_add_test(tc, test_lesson_line_too_long);
    tcase_add_test(tc, test_lesson_invalid_utf8);
    tcase_add_test(tc, test_lesson_missing_id_or_title);
    tcase_add_test(tc, test_lesson_bad_id);
    tcase_add_test(tc, test_lesson_missing_vocab);
    tcase_add_test(tc, test_lesson_vocab_gap);
    tcase_add_test(tc, test_lesson_token_twice);
    tcase_add_test(tc, test_lesson_bad_vocab_entries);
    tcase_add_test(tc, test_lesson_missing_step1);
    tcase_add_test(tc, test_lesson_step_gap);
    tcase_add_test(tc, test_lesson_step_without_row);
    tcase_add_test(tc, test_lesson_step_with_two_rows);
    tcase_add_test(tc, test_lesson_logits_count);
    tcase_add_test(tc, test_lesson_logits_not_numbers);
    tcase_add_test(tc, test_lesson_probs);
    tcase_add_test(tc, test_lesson_hidden_without_head);
    tcase_add_test(tc, test_lesson_bad_head);
    tcase_add_test(tc, test_lesson_bad_step_settings);
    tcase_add_test(tc, test_lesson_bad_lesson_settings);
    tcase_add_test(tc, test_lesson_bad_order);
    tcase_add_test(tc, test_lesson_bad_tries);
    tcase_add_test(tc, test_lesson_context_outside_vocab);
    tcase_add_test(tc, test_lesson_context_without_prompt);
    tcase_add_test(tc, test_lesson_bad_ask);
    tcase_add_test(tc, test_lesson_load_missing_file);
    tcase_add_test(tc, test_lesson_load_nul_byte);
    tcase_add_test(tc, test_lesson_load_directory);
    tcase_add_test(tc, test_cli_values_out_of_range);
    tcase_add_test(tc, test_cli_values_not_numbers);
    tcase_add_test(tc, test_cli_bad_words);
    tcase_add_test(tc, test_cli_unknown_option);
    tcase_add_test(tc, test_cli_missing_value);
    tcase_add_test(tc, test_cli_bad_arguments);
    tcase_add_test(tc, test_cli_tokenize);
    tcase_add_test(tc, test_cli_many_settings);
    tcase_add_test(tc, test_lesson_ambiguities_refused);
    tcase_add_test(tc, test_cli_order_with_empty_stage);
    suite_add_tcase(s, tc);

    TCase *edge = tcase_create("edge");
    tcase_add_test(edge, test_lesson_longest_line_loads);
    tcase_add_test(edge, test_lesson_accepted_variants);
    tcase_add_test(edge, test_lesson_error_at_first_culprit);
    tcase_add_test(edge, test_cli_good_command_line);
    tcase_add_test(edge, test_cli_options_before_command);
    suite_add_tcase(s, edge);

    /* Once bugs, each found by this suite and fixed in src/; kept as regressions. */
    TCase *fixed = tcase_create("fixed");
    tcase_add_test(fixed, test_bug_logits_too_many);
    tcase_add_test(fixed, test_bug_cli_parse_twice);
    tcase_add_test(fixed, test_bug_cli_flag_with_value);
    tcase_add_test(fixed, test_bug_penalty_range_message);
    tcase_add_test(fixed, test_bug_int_overflow_message);
    tcase_add_test(fixed, test_bug_utf8_surrogate);
    tcase_add_test(fixed, test_bug_ask_huge_id);
    tcase_add_test(fixed, test_bug_step_header_line);
    tcase_add_test(fixed, test_bug_hidden_gives_nan);
    suite_add_tcase(s, fixed);
    return s;
}
