/* The one parser behind options, lesson keys and ':' commands. */
#include <math.h>
#include <string.h>

#include "core/grammar.h"
#include "core/settings.h"
#include "suites.h"

static struct settings S;
static struct err E;

static void setup(void)
{
    settings_defaults(&S);
    err_clear(&E);
}

static int set(const char *name, const char *value)
{
    return settings_set(&S, name, value, &E);
}

const char *test_not_an_order(const char *prefix, const char *word)
{
    static char msg[512];
    snprintf(msg, sizeof msg, "%s'%s' is not a preset (lesson, hf, vllm, llamacpp) or a stage (",
             prefix, word);
    for (int st = 0; st < STAGE_COUNT; st++)
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s%s", st ? ", " : "",
                 STAGES[st].name);
    snprintf(msg + strlen(msg), sizeof msg - strlen(msg), ")");
    return msg;
}

const struct settings_patch *test_patch(int n, const char *const *names, const char *const *values)
{
    static struct settings_patch p;
    settings_patch_clear(&p);
    struct err e;
    for (int i = 0; i < n; i++)
        ck_assert_msg(settings_patch_set(&p, names[i], values[i], &e) == 0, "%s %s: %s", names[i],
                      values[i], e.msg);
    return &p;
}

START_TEST(test_defaults_turn_every_stage_off)
{
    ck_assert_double_eq(S.sampler.temperature, 1.0);
    ck_assert_int_eq(S.sampler.top_k, 0);
    ck_assert_double_eq(S.sampler.top_p, 1.0);
    ck_assert_double_eq(S.sampler.min_p, 0.0);
    ck_assert_double_eq(S.sampler.repetition_penalty, 1.0);
    ck_assert_int_eq(S.sampler.chain.preset, PRESET_LESSON);
    for (int st = 0; st < STAGE_COUNT; st++)
        ck_assert(!stage_active(&S.sampler, (enum stage)st, 100));
}
END_TEST

START_TEST(test_values_are_parsed)
{
    ck_assert_int_eq(set("temperature", "0.5"), 0);
    ck_assert_double_eq(S.sampler.temperature, 0.5);
    ck_assert_int_eq(set("top-k", "40"), 0);
    ck_assert_int_eq(S.sampler.top_k, 40);
    ck_assert_int_eq(set("top-p", "0.95"), 0);
    ck_assert_int_eq(set("min-p", "5e-2"), 0);
    ck_assert_double_eq(S.sampler.min_p, 0.05);
    ck_assert_int_eq(set("repetition-penalty", "1.3"), 0);
    ck_assert_int_eq(set("penalty-formula", "lesson"), 0);
    ck_assert_int_eq(S.sampler.penalty_formula, PENALTY_LESSON);
    ck_assert_int_eq(set("penalty-scope", "all"), 0);
    ck_assert_int_eq(S.sampler.penalty_scope, SCOPE_ALL);
    ck_assert_int_eq(set("penalty-last-n", "64"), 0);
    ck_assert_int_eq(set("presence-penalty", "-0.5"), 0);
    ck_assert_double_eq(S.sampler.presence_penalty, -0.5);
    ck_assert_int_eq(set("seed", "18446744073709551615"), 0);
    ck_assert(S.sampler.seed == UINT64_MAX);
    ck_assert_int_eq(set("max-tokens", "12"), 0);
    ck_assert_int_eq(S.max_tokens, 12);
    ck_assert_int_eq(set("top-k", "off"), 0);
    ck_assert_int_eq(S.sampler.top_k, 0);
    ck_assert_int_eq(set("top-p", "off"), 0);
    ck_assert_double_eq(S.sampler.top_p, 1.0);
}
END_TEST

START_TEST(test_orders)
{
    ck_assert_int_eq(set("order", "vllm"), 0);
    ck_assert_int_eq(S.sampler.chain.preset, PRESET_VLLM);
    ck_assert_int_eq(set("order", "top-k, temperature,penalties"), 0);
    ck_assert_int_eq(S.sampler.chain.preset, PRESET_CUSTOM);
    ck_assert_int_eq(S.sampler.chain.n, 3);
    ck_assert_int_eq(S.sampler.chain.stage[0], STAGE_TOP_K);
    ck_assert_int_eq(S.sampler.chain.stage[2], STAGE_PENALTY);
    char buf[128];
    chain_describe(&S.sampler.chain, buf, sizeof buf);
    ck_assert_str_eq(buf, "custom (top-k, temperature, penalty)");
    ck_assert_int_eq(set("order", "top-k,top-k"), -1);
    ck_assert_str_eq(E.msg, "'top-k,top-k' names top-k twice");
    ck_assert_int_eq(set("order", "top-q"), -1);
    ck_assert_str_eq(E.msg, test_not_an_order("", "top-q"));
    /* The stages it lists are the table's, in its order: the five of the lessons first. */
    ck_assert_ptr_nonnull(strstr(E.msg, "or a stage (penalty, temperature, top-k, top-p, min-p"));
    ck_assert_int_eq(S.sampler.chain.n, 3); /* unchanged by a failed set */
}
END_TEST

START_TEST(test_stop_strings)
{
    ck_assert_int_eq(set("stop", "\\n\\n"), 0);
    ck_assert_str_eq(S.stop[0], "\n\n");
    ck_assert_int_eq(set("stop", "</s>"), 0);
    ck_assert_int_eq(S.n_stop, 2);
    ck_assert_int_eq(set("stop", ""), 0);
    ck_assert_int_eq(S.n_stop, 0);
    ck_assert_int_eq(set("stop", "a\\q"), -1);
    ck_assert_str_eq(E.msg, "unknown escape \\q in 'a\\q' (use \\n \\t \\\\ \\\")");
    /* The escaped character whole: its first byte alone left the message
     * invalid UTF-8 (found by fuzz_cmdline's long run); a control byte is
     * shown as \xNN. */
    ck_assert_int_eq(set("stop", "o\\\xC3\xA9"), -1);
    ck_assert_str_eq(E.msg, "unknown escape \\\xC3\xA9 in 'o\\\xC3\xA9' (use \\n \\t \\\\ \\\")");
    ck_assert_int_eq(set("stop", "o\\\x01"), -1);
    ck_assert_str_eq(E.msg, "unknown escape \\\\x01 in 'o\\\x01' (use \\n \\t \\\\ \\\")");
    char big[STOP_LEN + 2];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ck_assert_int_eq(set("stop", big), -1);
    for (int i = 0; i < STOP_MAX; i++)
        ck_assert_int_eq(set("stop", "z"), 0);
    ck_assert_int_eq(set("stop", "z"), -1);
    ck_assert_str_eq(E.msg, "more than 8 stop strings");
}
END_TEST

START_TEST(test_grammar_settings)
{
    /* One constraint at a time: setting one turns the one before off. */
    ck_assert_int_eq(set("regex", "on the (mat|dog)"), 0);
    ck_assert_int_eq(S.sampler.regex, GRAMMAR_FRONT_REGEX);
    ck_assert_str_eq(S.grammar_text, "on the (mat|dog)");
    ck_assert(stage_active(&S.sampler, STAGE_GRAMMAR, 7));
    ck_assert_int_eq(set("choice", "yes|no"), 0);
    ck_assert_int_eq(S.sampler.regex, 0);
    ck_assert_int_eq(S.sampler.choice, GRAMMAR_FRONT_CHOICE);
    ck_assert_str_eq(S.grammar_text, "yes|no");
    char v[64];
    settings_value(&S, "choice", v, sizeof v);
    ck_assert_str_eq(v, "yes|no");
    settings_value(&S, "regex", v, sizeof v);
    ck_assert_str_eq(v, "off");
    /* A bad one is refused where it is typed, with the place in it, and
     * changes nothing. */
    ck_assert_int_eq(set("regex", "a(b"), -1);
    ck_assert_str_eq(E.msg, "regex at byte 2: unbalanced (");
    ck_assert_int_eq(S.sampler.choice, GRAMMAR_FRONT_CHOICE);
    ck_assert_int_eq(set("json-schema", "{\"type\": 3}"), -1);
    ck_assert_str_eq(E.msg, "json-schema at byte 10: \"type\" must be a string");
    ck_assert_int_eq(set("grammar", "root ::= foo"), -1);
    ck_assert_int_eq(set("choice", "a||b"), -1);
    ck_assert_str_eq(E.msg, "choice 2 of 3 is empty (at byte 2)");
    static char big[GRAMMAR_TEXT_MAX + 2];
    memset(big, 'a', sizeof big - 1);
    ck_assert_int_eq(set("regex", big), -1);
    ck_assert_str_eq(E.msg, "a regular expression of 8193 bytes is too long (at most 8192)");
    ck_assert_int_eq(set("grammar", "root ::= \"a\" | \"b\""), 0);
    ck_assert_int_eq(S.sampler.choice, 0);
    ck_assert_int_eq(set("grammar", "off"), 0);
    ck_assert(!stage_active(&S.sampler, STAGE_GRAMMAR, 7));
    ck_assert_str_eq(S.grammar_text, "");
    /* A patch's constraint replaces the one under it, whatever its kind. */
    struct settings_patch p;
    settings_patch_clear(&p);
    ck_assert_int_eq(settings_patch_set(&p, "json-schema", "{\"type\": \"boolean\"}", &E), 0);
    ck_assert_int_eq(set("regex", "x+"), 0);
    ck_assert_int_eq(settings_patch_apply(&S, &p, &E), 0);
    ck_assert_int_eq(S.sampler.regex, 0);
    ck_assert_int_eq(S.sampler.json_schema, GRAMMAR_FRONT_JSON_SCHEMA);
    ck_assert_str_eq(S.grammar_text, "{\"type\": \"boolean\"}");
    /* The last one typed wins, whatever the table's order of the rows. */
    settings_patch_clear(&p);
    ck_assert_int_eq(settings_patch_set(&p, "regex", "y", &E), 0);
    ck_assert_int_eq(settings_patch_set(&p, "grammar", "root ::= \"x\"", &E), 0);
    ck_assert_int_eq(settings_patch_apply(&S, &p, &E), 0);
    ck_assert_int_eq(S.sampler.grammar, GRAMMAR_FRONT_GBNF);
    ck_assert_int_eq(S.sampler.regex, 0);
    ck_assert_str_eq(S.grammar_text, "root ::= \"x\"");
}
END_TEST

START_TEST(test_out_of_range_messages)
{
    static const struct {
        const char *name, *value, *msg;
    } CASES[] = {
        { "temperature", "-1", "-1 is out of range (must be 0 or more)" },
        { "temperature", "abc", "'abc' is not a number" },
        { "temperature", "nan", "'nan' is not a number (NaN)" },
        { "temperature", "inf", "'inf' is not a finite number" },
        { "temperature", "", "a number is missing" },
        { "top-p", "0", "0 is out of range (must be in (0, 1])" },
        { "top-p", "1.01", "1.01 is out of range (must be in (0, 1])" },
        { "min-p", "-0.1", "-0.1 is out of range (must be in [0, 1])" },
        { "top-k", "-3", "-3 is out of range (must be 0 or more)" },
        { "top-k", "2.5", "'2.5' is not a whole number" },
        { "repetition-penalty", "0", "0 is out of range (must be more than 0)" },
        { "penalty-formula", "hf", "'hf' is not a formula (engine or lesson)" },
        { "penalty-scope", "prompt", "'prompt' is not a scope (generated or all)" },
        { "seed", "-1", "'-1' is not a seed (a whole number 0 to 2^64-1)" },
        { "seed", "18446744073709551616",
          "18446744073709551616 is out of range (a seed is at most 2^64-1)" },
        { "temprature", "1", "'temprature' is not a setting" },
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        err_clear(&E);
        ck_assert_int_eq(set(CASES[i].name, CASES[i].value), -1);
        ck_assert_str_eq(E.msg, CASES[i].msg);
        ck_assert_int_eq(E.code, ERR_USAGE);
    }
}
END_TEST

START_TEST(test_values_read_back)
{
    char buf[64];
    set("temperature", "0.5");
    settings_value(&S, "temperature", buf, sizeof buf);
    ck_assert_str_eq(buf, "0.5");
    settings_value(&S, "top-k", buf, sizeof buf);
    ck_assert_str_eq(buf, "off");
    set("seed", "42");
    settings_value(&S, "seed", buf, sizeof buf);
    ck_assert_str_eq(buf, "42");
    /* Every listed setting reads back into something settings_set accepts. */
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
        ck_assert(settings_known(i->name));
        if (strcmp(i->name, "stop") == 0)
            continue;
        settings_value(&S, i->name, buf, sizeof buf);
        ck_assert_msg(set(i->name, buf) == 0, "%s %s: %s", i->name, buf, E.msg);
    }
}
END_TEST

START_TEST(test_id_lists)
{
    int ids[8];
    ck_assert_int_eq(parse_int_list("1 2, 3", ids, 8, 7, &E), 3);
    ck_assert_int_eq(ids[2], 3);
    ck_assert_int_eq(parse_int_list("", ids, 8, 7, &E), 0);
    ck_assert_int_eq(parse_int_list("1 9", ids, 8, 7, &E), -1);
    ck_assert_str_eq(E.msg, "token id 9 is not in the vocabulary (0..6)");
    ck_assert_int_eq(parse_int_list("1 x", ids, 8, 7, &E), -1);
    ck_assert_str_eq(E.msg, "'1 x' is not a list of token ids");
}
END_TEST

/* A patch holds the settings typed in one place; applied, it changes only
 * those, the last value of each, and adds its stop strings to those under
 * it (an empty stop clearing them), as the settings typed one by one did. */
/* The logit bias and the bad words: parsed, printed back as typed, on
 * and off, and each kind of wrong value refused in one line. */
START_TEST(test_list_settings)
{
    char buf[128];
    ck_assert_int_eq(set("logit-bias", " 2:-inf, 5:1.5 0:-100"), 0);
    ck_assert_int_eq(S.sampler.logit_bias.n, 3);
    ck_assert(S.sampler.logit_bias.bias[0] == -INFINITY);
    ck_assert_double_eq(S.sampler.logit_bias.bias[1], 1.5);
    settings_value(&S, "logit-bias", buf, sizeof buf);
    ck_assert_str_eq(buf, "2:-inf,5:1.5,0:-100");
    ck_assert(stage_active(&S.sampler, STAGE_LOGIT_BIAS, 7));
    settings_value(&S, "logit-bias", buf, 12); /* cut short where it does not fit */
    ck_assert_str_eq(buf, "2:-inf,5...");
    ck_assert_int_eq(set("bad-words", "6;2 5 ;  1,2,3"), 0);
    ck_assert_int_eq(S.sampler.bad_words.n, 3);
    ck_assert_int_eq(S.sampler.bad_words.len[2], 3);
    settings_value(&S, "bad-words", buf, sizeof buf);
    ck_assert_str_eq(buf, "6; 2 5; 1 2 3");
    ck_assert(stage_active(&S.sampler, STAGE_BAD_WORDS, 7));
    ck_assert_int_eq(sampler_check(&S.sampler, &E), 0);
    ck_assert_int_eq(set("logit-bias", "off"), 0);
    ck_assert_int_eq(set("bad-words", ""), 0);
    settings_value(&S, "logit-bias", buf, sizeof buf);
    ck_assert_str_eq(buf, "off");
    ck_assert(!stage_active(&S.sampler, STAGE_LOGIT_BIAS, 7));
    ck_assert(!stage_active(&S.sampler, STAGE_BAD_WORDS, 7));
    static const char *const BAD[][3] = {
        { "logit-bias", "2", "'2' is not ID:BIAS (a token id, ':', a number)" },
        { "logit-bias", "-1:2", "'-1' is not a token id" },
        { "logit-bias", "2:inf",
          "token 2: a bias of +inf is refused (must be between -1e6 and "
          "1e6, or -inf)" },
        { "logit-bias", "2:2e6",
          "token 2: bias 2e6 is out of range (must be between -1e6 and "
          "1e6, or -inf)" },
        { "logit-bias", "2:x", "'x' is not a number" },
        { "logit-bias", "2:1,2:-inf", "token 2 is given twice" },
        { "logit-bias",
          "0:1 1:1 2:1 3:1 4:1 5:1 6:1 7:1 8:1 9:1 10:1 11:1 12:1 13:1 14:1 15:1 16:1",
          "more than 16 tokens" },
        { "bad-words", "1;;2", "'1;;2' has an empty bad word" },
        { "bad-words", "1; x", "bad word 2: ' x' is not a list of token ids" },
        { "bad-words", "1 2 3 4 5 6 7 8 9", "bad word 1: more than 8 token ids" },
        { "bad-words", "0;1;2;3;4;5;6;7;8", "more than 8 bad words" },
    };
    for (size_t k = 0; k < sizeof BAD / sizeof BAD[0]; k++) {
        ck_assert_int_eq(set(BAD[k][0], BAD[k][1]), -1);
        ck_assert_str_eq(E.msg, BAD[k][2]);
    }
    ck_assert_int_eq(S.sampler.logit_bias.n, 0); /* unchanged by a refused value */
}
END_TEST

START_TEST(test_patch_changes_only_its_settings)
{
    ck_assert_int_eq(set("top-k", "3"), 0);
    ck_assert_int_eq(set("stop", "a"), 0);
    struct settings_patch p;
    settings_patch_clear(&p);
    ck_assert_int_eq(settings_patch_set(&p, "temperature", "0.5", &E), 0);
    ck_assert_int_eq(settings_patch_set(&p, "temperature", "0.7", &E), 0);
    ck_assert_int_eq(settings_patch_set(&p, "order", "vllm", &E), 0);
    ck_assert_int_eq(settings_patch_set(&p, "stop", "b", &E), 0);
    ck_assert_int_eq(settings_patch_set(&p, "top-p", "1.5", &E), -1); /* refused, unchanged */
    ck_assert_str_eq(E.msg, "1.5 is out of range (must be in (0, 1])");
    ck_assert_int_eq(settings_patch_apply(&S, &p, &E), 0);
    ck_assert_double_eq(S.sampler.temperature, 0.7);
    ck_assert_int_eq(S.sampler.top_k, 3);
    ck_assert_double_eq(S.sampler.top_p, 1.0);
    ck_assert_int_eq(S.sampler.chain.preset, PRESET_VLLM);
    ck_assert_int_eq(S.n_stop, 2);
    ck_assert_str_eq(S.stop[0], "a");
    ck_assert_str_eq(S.stop[1], "b");
    /* An empty stop, then "c": only "c" is left, the string under it too gone. */
    ck_assert_int_eq(settings_patch_set(&p, "stop", "", &E), 0);
    ck_assert_int_eq(settings_patch_set(&p, "stop", "c", &E), 0);
    ck_assert_int_eq(settings_patch_apply(&S, &p, &E), 0);
    ck_assert_int_eq(S.n_stop, 1);
    ck_assert_str_eq(S.stop[0], "c");
}
END_TEST

START_TEST(test_patch_stop_strings_past_the_limit)
{
    /* Seven under it and two in it: the first eight stay, the other
     * settings are applied, and the caller hears why. */
    char v[16];
    for (int i = 0; i < 7; i++) {
        snprintf(v, sizeof v, "s%d", i);
        ck_assert_int_eq(set("stop", v), 0);
    }
    struct settings_patch p;
    settings_patch_clear(&p);
    ck_assert_int_eq(settings_patch_set(&p, "stop", "x", &E), 0);
    ck_assert_int_eq(settings_patch_set(&p, "stop", "y", &E), 0);
    ck_assert_int_eq(settings_patch_set(&p, "seed", "9", &E), 0);
    ck_assert_int_eq(settings_patch_apply(&S, &p, &E), -1);
    ck_assert_str_eq(E.msg, "more than 8 stop strings");
    ck_assert_int_eq(S.n_stop, 8);
    ck_assert_str_eq(S.stop[7], "x");
    ck_assert_uint_eq(S.sampler.seed, 9);
}
END_TEST

Suite *suite_settings(void)
{
    Suite *s = suite_create("settings");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, setup, NULL);
    tcase_add_test(core, test_defaults_turn_every_stage_off);
    tcase_add_test(core, test_values_are_parsed);
    tcase_add_test(core, test_orders);
    tcase_add_test(core, test_grammar_settings);
    tcase_add_test(core, test_values_read_back);
    tcase_add_test(core, test_id_lists);
    tcase_add_test(core, test_list_settings);
    tcase_add_test(core, test_patch_changes_only_its_settings);
    tcase_add_test(core, test_patch_stop_strings_past_the_limit);
    suite_add_tcase(s, core);
    TCase *errors = tcase_create("errors");
    tcase_add_checked_fixture(errors, setup, NULL);
    tcase_add_test(errors, test_stop_strings);
    tcase_add_test(errors, test_out_of_range_messages);
    suite_add_tcase(s, errors);
    return s;
}
