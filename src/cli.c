#include "cli.h"

#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/outfile.h"
#include "base/readfile.h"
#include "data/model_find.h"
#include "data/config.h"
#include "core/draws.h"
#include "data/keys.h"
#include "model/model.h"
#include "core/settings.h"
#include "source/source.h"

/* The --help text, in four parts (each under the length a function may have). */
static void usage_commands(FILE *out)
{
    fprintf(out,
            "Usage: logitlab [OPTIONS] [LESSON]\n"
            "       logitlab show LESSON [--step N] [--format FORMAT] [--top N] [SETTINGS]\n"
            "       logitlab generate LESSON [SETTINGS]\n"
            "       logitlab export LESSON [-o FILE] [--force] [SETTINGS]\n"
            "       logitlab lessons\n"
            "       logitlab models\n"
            "       logitlab tokenize -m FILE.gguf (-p TEXT | -f FILE) [--special] [--no-bos]\n"
            "       logitlab [show|generate|export] --model FILE.gguf [-p TEXT] [OPTIONS]\n"
            "\n"
            "logitlab shows how a language model turns its last hidden vector into the next\n"
            "token: the LM head, logits, exponentials, probabilities, cumulative sums,\n"
            "temperature, top-k, top-p, min-p, penalties, the seeded draw and the stop rules.\n"
            "\n"
            "Without a command it opens LESSON (default: the first) in the terminal, where\n"
            "every setting is live; press ? there for the keys.\n"
            "\n"
            "Commands:\n"
            "  show LESSON    print one step of a lesson as a table, without curses\n"
            "  generate LESSON  run the loop from the prompt with the settings given,\n"
            "                 printing the text as it grows, until a stop rule fires\n"
            "  export LESSON  every step of a lesson as one Markdown handout, exercises as\n"
            "                 worksheets with the answers at the end\n"
            "  lessons        list the lessons (id and title) in teaching order\n"
            "  models         list the models of Ollama, LM Studio and llama.cpp (-m NAME\n"
            "                 opens one): architecture, weight type, size, whether\n"
            "                 logitlab runs it, and whose it is\n"
            "  tokenize       print the ids the model's tokenizer gives the text, on one\n"
            "                 line; the file may hold a vocabulary only (any architecture)\n"
            "\n"
            "LESSON is a lesson id (see 'logitlab lessons') or the path of a lesson file.\n"
            "\n"
            "Options:\n");
}

static void usage_options(FILE *out)
{
    fprintf(out, "  --step N             show, the view: the step to show (default 1)\n"
                 "  --format FORMAT      text (default), csv, json or markdown (export: markdown)\n"
                 "                       or svg: show and --headless draw the view as an SVG\n"
                 "                       picture in the theme's colours (for slides)\n"
                 "  -o, --output FILE    write to FILE instead of standard output; an existing\n"
                 "                       file is left alone unless --force is given\n"
                 "  --force              replace the file of --output (or --save-logits)\n"
                 "  --top N              show, export: write only the N most likely rows;\n"
                 "                       generate (json, markdown): each token's N most likely\n"
                 "                       alternatives (default 5, at most 20)\n"
                 "                       (default: all, 20 for a full-size vocabulary; at most\n"
                 "                       4096)\n"
                 "  --draws N            show: draw N times with the step's settings and count\n"
                 "                       the tokens against their probabilities\n"
                 "  --find TOKEN         show: also the row of TOKEN (text or id), wherever it\n"
                 "                       ranks; may be repeated\n"
                 "  --logits FILE.npy    play logits captured from a model: float32 or float16,\n"
                 "                       shape [V] or [steps, V]; instead of a LESSON (a .npy\n"
                 "                       file by its content, whatever its name)\n"
                 "  --vocab FILE         the vocabulary of those logits (default: Llama 3's,\n"
                 "                       data/llama3-vocab.bin)\n");
}

static void usage_model(FILE *out)
{
    fprintf(out, "  -m, --model FILE.gguf  a real model (GGUF: Llama 2 and 3, Mistral, SmolLM,\n"
                 "                       Qwen 2.5 and 3, Phi-3, Gemma 3): its tokenizer, its\n"
                 "                       forward pass and its LM head give the logits; alone, or\n"
                 "                       with a full-size lesson to run that lesson's prompt. Or\n"
                 "                       NAME: Ollama's NAME[:TAG], or a file's name in LM\n"
                 "                       Studio's or llama.cpp's folders ('logitlab models')\n"
                 "  -p, --prompt TEXT    the model's prompt (default: the lesson's)\n"
                 "  -f, --prompt-file FILE  the prompt read from FILE, byte for byte\n"
                 "  --special            special tokens' text in the prompt (<|eot_id|>) is\n"
                 "                       those tokens; otherwise it is plain text\n"
                 "  --no-bos             tokenize: no BOS first, even where the file asks for\n"
                 "                       one (with neither --special: llama.cpp's tokenizer\n"
                 "                       tests, add_special and parse_special both off)\n"
                 "  --chat               wrap the prompt in the model's chat format (a user\n"
                 "                       turn, then the assistant's header)\n"
                 "  --save-logits FILE.npy  show: write the step's logits as float32 .npy,\n"
                 "                       what --logits reads\n"
                 "  --grammar-file FILE  a GBNF grammar read from FILE (--grammar's, below)\n"
                 "  --json-schema-file FILE  a JSON schema read from FILE (--json-schema's)\n"
                 "  --hidden-size N      the hidden size of a full-size lesson's LM head\n"
                 "                       (default 4096; smaller is faster)\n"
                 "  --lessons-dir DIR    read lessons from DIR (default: $LOGITLAB_LESSONS, else\n"
                 "                       beside the program, the installed share directory,\n"
                 "                       ./lessons)\n"
                 "  --headless           run the interactive view without a terminal and print\n"
                 "                       its last screen as text (for tests and handouts)\n"
                 "  --size WxH           the screen size for --headless and --format svg\n"
                 "                       (default 80x24; a picture: 120x40)\n"
                 "  --keys KEYS          keys for --headless: characters, and <Space> <Enter>\n"
                 "                       <Esc> <Left> <Right> <Up> <Down> <PgUp> <PgDn> <Home>\n"
                 "                       <End> <Tab> <BS> <lt> <resize WxH>\n"
                 "  --ascii              draw with ASCII only (also when the locale is not UTF-8)\n"
                 "  --no-color           no colours (also when NO_COLOR is set)\n"
                 "  --theme NAME         default, projector (high contrast) or mono\n"
                 "  --big                big mode: two panes at a time at the whole height, for\n"
                 "                       a projector (the key b goes on to the next two)\n"
                 "  --config FILE        read defaults from FILE (default:\n"
                 "                       $XDG_CONFIG_HOME/logitlab/config.ini)\n"
                 "  --no-config          read no configuration file\n"
                 "  --backend NAME       where the LM head and the batch run: auto (default: the\n"
                 "                       GPU when a CUDA device is usable, else the CPU), cpu,\n"
                 "                       or cuda (an error when no device can be used)\n"
                 "  -h, --help           show this help and exit\n"
                 "  -V, --version        show the version and exit\n"
                 "\n"
                 "Settings (each is also a key in a lesson step; the command line wins):\n");
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
        char lhs[64];
        snprintf(lhs, sizeof lhs, "--%s %s", i->name, i->arg);
        fprintf(out, "  %-34s %s\n", lhs, i->help);
    }
}

static void usage_rest(FILE *out)
{
    fprintf(out, "\n"
                 "The chain runs in the order given by --order (default 'lesson': penalty,\n"
                 "temperature, top-k, top-p, min-p), then draws u in [0, 1) from Philox4x32-10\n"
                 "keyed by the seed and takes the first token, in descending probability, whose\n"
                 "cumulative kept probability exceeds u. Same seed, same token.\n"
                 "\n"
                 "An option that the command would not use is refused, not ignored.\n"
                 "Exit status: 0 success, 2 bad option or input, 3 system failure.\n"
                 "Examples:\n"
                 "  logitlab show toy --step 1 --temperature 0.5\n"
                 "  logitlab show top-k --seed 42 --format json\n"
                 "  logitlab show penalty --step 2 --penalty-formula engine\n"
                 "  logitlab -m Llama-3.2-1B-Instruct-Q8_0.gguf -p \"The capital of France is\"\n");
}

void cli_usage(FILE *out)
{
    usage_commands(out);
    usage_options(out);
    usage_model(out);
    usage_rest(out);
}

/* Explains why getopt refused arg: an unknown or ambiguous long option, a
 * value given to an option that takes none, or an unknown short option. */
static int unknown_option(const char *arg, const struct option *longs, struct err *e)
{
    if (strncmp(arg, "--", 2) != 0)
        return err_set(e, ERR_USAGE, "unknown option '%s' (logitlab --help lists them)", arg);
    const char *name = arg + 2;
    size_t len = strcspn(name, "=");
    int matches = 0, exact = -1;
    char list[160] = "";
    for (int i = 0; longs[i].name; i++)
        if (strncmp(longs[i].name, name, len) == 0) {
            if (strlen(longs[i].name) == len)
                exact = i;
            if (matches++ < 4)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s--%s",
                         matches > 1 ? ", " : "", longs[i].name);
        }
    if ((exact >= 0 || matches == 1) && name[len] == '=')
        return err_set(e, ERR_USAGE, "option '--%.*s' takes no value", (int)len, name);
    if (matches > 1 && exact < 0)
        return err_set(e, ERR_USAGE, "option '--%.*s' is ambiguous (%s%s)", (int)len, name, list,
                       matches > 4 ? ", ..." : "");
    return err_set(e, ERR_USAGE, "unknown option '--%.*s' (logitlab --help lists them)", (int)len,
                   name);
}

/* ---- the options: each a name, whether it takes a value, and what it does ---- */

static int opt_help(struct options *o, const char *arg, struct err *e)
{
    (void)arg;
    (void)e;
    o->action = CLI_HELP;
    return 0;
}

static int opt_version(struct options *o, const char *arg, struct err *e)
{
    (void)arg;
    (void)e;
    o->action = CLI_VERSION;
    return 0;
}

static int opt_step(struct options *o, const char *arg, struct err *e)
{
    return parse_int(arg, 1, 1 << 20, &o->step, e);
}

/* svg is the view drawn as a picture (screen_svg.h), not a report: it
 * leaves the report's format alone and sends show to the view (main.c). */
static int opt_format(struct options *o, const char *arg, struct err *e)
{
    o->format_given = 1;
    o->svg = strcmp(arg, "svg") == 0;
    if (o->svg || report_parse_format(arg, &o->format, e) == 0)
        return 0;
    return err_set(e, ERR_USAGE, "'%s' is not a format (text, csv, json, markdown or svg)", arg);
}

static int opt_top(struct options *o, const char *arg, struct err *e)
{
    if (parse_int(arg, 0, 1 << 30, &o->top, e) < 0)
        return -1;
    /* A full-size step ranks at most this many rows: more would be cut
     * without a word (and CSV has no tail row to say so). */
    if (o->top > SOURCE_MAX_ROWS)
        return err_set(e, ERR_USAGE, "%d is more than %d, the most rows a step ranks", o->top,
                       SOURCE_MAX_ROWS);
    return 0;
}

static int opt_size(struct options *o, const char *arg, struct err *e)
{
    return keys_parse_size(arg, &o->width, &o->height, e);
}

static int opt_hidden(struct options *o, const char *arg, struct err *e)
{
    if (parse_int(arg, 8, MODEL_MAX_HIDDEN, &o->hidden, e) < 0)
        return -1;
    if (o->hidden % 8 != 0)
        return err_set(e, ERR_USAGE, "%d is not a multiple of 8", o->hidden);
    return 0;
}

static int opt_draws(struct options *o, const char *arg, struct err *e)
{
    return parse_int(arg, 1, DRAWS_MAX, &o->draws, e);
}

static int opt_find(struct options *o, const char *arg, struct err *e)
{
    if (o->n_find == CLI_MAX_FIND)
        return err_set(e, ERR_USAGE, "at most %d tokens", CLI_MAX_FIND);
    if (!*arg)
        return err_set(e, ERR_USAGE, "an empty token (give its text, or #ID for an id)");
    o->find[o->n_find++] = arg;
    return 0;
}

static int opt_theme(struct options *o, const char *arg, struct err *e)
{
    enum theme t;
    if (config_parse_theme(arg, &t, e) < 0)
        return -1;
    o->theme = (int)t + 1;
    return 0;
}

/* A constraint read from a file, as the setting of that name takes it
 * (llama.cpp's --grammar-file, --json-schema-file); its errors name the
 * file before the place in it. */
static int constraint_file(struct options *o, const char *setting, const char *path, struct err *e)
{
    char *text;
    size_t len;
    if (readfile(path, GRAMMAR_TEXT_MAX, &text, &len, e) < 0)
        return -1;
    int rc = 0;
    if (strlen(text) != len)
        rc = err_set(e, ERR_USAGE, "%s holds a NUL byte", path);
    else if (len == 0)
        rc = err_set(e, ERR_USAGE, "%s is empty", path);
    else if (settings_patch_set(&o->over, setting, text, e) < 0)
        rc = (err_prefix(e, "%s", path), -1);
    free(text);
    if (rc == 0 && !o->first_setting)
        o->first_setting = setting;
    return rc;
}

static int opt_grammar_file(struct options *o, const char *arg, struct err *e)
{
    return constraint_file(o, "grammar", arg, e);
}

static int opt_schema_file(struct options *o, const char *arg, struct err *e)
{
    return constraint_file(o, "json-schema", arg, e);
}

static int opt_backend(struct options *o, const char *arg, struct err *e)
{
    enum backend_choice b;
    if (backend_parse(arg, &b, e) < 0)
        return -1;
    o->backend = (int)b;
    return 0;
}

/* An option that only sets a flag or keeps its value: where, in struct
 * options (a flag: an int set to 1; a value: the const char * it points to). */
#define FLAG(field)  offsetof(struct options, field), 1
#define VALUE(field) offsetof(struct options, field), 0

/* The commands, as bits: which of them take an option. IN_VIEW is the
 * interactive view (no command), in a terminal or --headless; IN_PICTURE
 * the view drawn as an SVG picture (show or --headless with --format svg). */
enum {
    IN_VIEW = 1,
    IN_SHOW = 2,
    IN_GENERATE = 4,
    IN_EXPORT = 8,
    IN_LESSONS = 16,
    IN_PICTURE = 32,
    IN_TOKENIZE = 64,
    IN_MODELS = 128,
};
#define IN_WRITERS (IN_SHOW | IN_GENERATE | IN_EXPORT) /* those that write a report */
#define IN_RUNS    (IN_VIEW | IN_WRITERS | IN_PICTURE) /* those that run a lesson */
#define IN_DRAWN   (IN_VIEW | IN_PICTURE)              /* those that draw the view */
#define IN_ALL     (IN_RUNS | IN_LESSONS | IN_MODELS)

/* What an option's value names, when it must not be empty. */
enum { ANY_TEXT, A_FILE, A_DIR };

static const struct cli_option {
    const char *name;
    int has_arg;
    int (*apply)(struct options *o, const char *arg, struct err *e); /* NULL: the field below */
    size_t field;
    int flag;
    char short_name; /* 'h', 'V', 'o', or 0 */
    unsigned takes;  /* the commands that take it (IN_*); the others refuse it */
    int names;       /* ANY_TEXT, or A_FILE / A_DIR: an empty value is refused */
} OPTIONS[] = {
    { "help", no_argument, opt_help, 0, 0, 'h', IN_ALL | IN_TOKENIZE, ANY_TEXT },
    { "version", no_argument, opt_version, 0, 0, 'V', IN_ALL | IN_TOKENIZE, ANY_TEXT },
    { "step", required_argument, opt_step, 0, 0, 0, IN_DRAWN | IN_SHOW, ANY_TEXT },
    { "format", required_argument, opt_format, 0, 0, 0, IN_WRITERS | IN_PICTURE, ANY_TEXT },
    { "top", required_argument, opt_top, 0, 0, 0, IN_SHOW | IN_EXPORT | IN_GENERATE, ANY_TEXT },
    { "lessons-dir", required_argument, NULL, VALUE(lessons_dir), 0, IN_ALL, A_DIR },
    { "headless", no_argument, NULL, FLAG(headless), 0, IN_DRAWN, ANY_TEXT },
    { "size", required_argument, opt_size, 0, 0, 0, IN_DRAWN, ANY_TEXT },
    { "keys", required_argument, NULL, VALUE(keys), 0, IN_DRAWN, ANY_TEXT },
    { "ascii", no_argument, NULL, FLAG(ascii), 0, IN_DRAWN, ANY_TEXT },
    { "no-color", no_argument, NULL, FLAG(no_color), 0, IN_DRAWN, ANY_TEXT },
    { "hidden-size", required_argument, opt_hidden, 0, 0, 0, IN_RUNS, ANY_TEXT },
    { "draws", required_argument, opt_draws, 0, 0, 0, IN_SHOW, ANY_TEXT },
    { "find", required_argument, opt_find, 0, 0, 0, IN_SHOW, ANY_TEXT },
    { "logits", required_argument, NULL, VALUE(logits), 0, IN_RUNS, A_FILE },
    { "vocab", required_argument, NULL, VALUE(vocab), 0, IN_RUNS, A_FILE },
    { "output", required_argument, NULL, VALUE(output), 'o', IN_WRITERS, A_FILE },
    { "force", no_argument, NULL, FLAG(force), 0, IN_WRITERS, ANY_TEXT },
    { "config", required_argument, NULL, VALUE(config), 0, IN_RUNS, A_FILE },
    { "no-config", no_argument, NULL, FLAG(no_config), 0, IN_RUNS, ANY_TEXT },
    { "theme", required_argument, opt_theme, 0, 0, 0, IN_DRAWN, ANY_TEXT },
    { "big", no_argument, NULL, FLAG(big), 0, IN_DRAWN, ANY_TEXT },
    { "backend", required_argument, opt_backend, 0, 0, 0, IN_RUNS, ANY_TEXT },
    { "model", required_argument, NULL, VALUE(model), 'm', IN_RUNS | IN_TOKENIZE, A_FILE },
    { "prompt", required_argument, NULL, VALUE(prompt), 'p', IN_RUNS | IN_TOKENIZE, ANY_TEXT },
    { "prompt-file", required_argument, NULL, VALUE(prompt_file), 'f', IN_RUNS | IN_TOKENIZE,
      A_FILE },
    { "special", no_argument, NULL, FLAG(special), 0, IN_RUNS | IN_TOKENIZE, ANY_TEXT },
    { "no-bos", no_argument, NULL, FLAG(no_bos), 0, IN_TOKENIZE, ANY_TEXT },
    { "chat", no_argument, NULL, FLAG(chat), 0, IN_RUNS, ANY_TEXT },
    { "save-logits", required_argument, NULL, VALUE(save_logits), 0, IN_SHOW, A_FILE },
    { "grammar-file", required_argument, opt_grammar_file, 0, 0, 0, IN_RUNS, A_FILE },
    { "json-schema-file", required_argument, opt_schema_file, 0, 0, 0, IN_RUNS, A_FILE },
};
#define N_OPTIONS ((int)(sizeof OPTIONS / sizeof OPTIONS[0]))

#define OPT_BASE 1000 /* getopt's val of long option n: OPT_BASE + n, past every short one */

/* getopt_long's table: the options above, then every setting of
 * sampling.def (--top-p ...). */
static void long_options(struct option *longs)
{
    int n = 0;
    for (int i = 0; i < N_OPTIONS; i++, n++)
        longs[n] = (struct option){ OPTIONS[i].name, OPTIONS[i].has_arg, NULL, OPT_BASE + n };
    for (int i = 0; SETTINGS_INFO[i].name; i++, n++)
        longs[n] = (struct option){ SETTINGS_INFO[i].name, required_argument, NULL, OPT_BASE + n };
    longs[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* Applies option number c (long_options' order) with its value arg; a setting
 * is parsed into the options' patch, a later value replacing an earlier. */
static int apply_option(struct options *o, int c, const char *arg, struct err *e)
{
    if (c < N_OPTIONS) {
        const struct cli_option *op = &OPTIONS[c];
        int rc = 0;
        if (op->names != ANY_TEXT && !*arg)
            rc = err_set(e, ERR_USAGE, "an empty %s name",
                         op->names == A_DIR ? "directory" : "file");
        else if (op->apply)
            rc = op->apply(o, arg, e);
        else if (op->flag)
            *(int *)((char *)o + op->field) = 1;
        else
            *(const char **)((char *)o + op->field) = arg;
        if (rc < 0)
            err_prefix(e, "--%s", op->name);
        return rc;
    }
    const char *name = SETTINGS_INFO[c - N_OPTIONS].name;
    if (settings_patch_set(&o->over, name, arg, e) < 0)
        return err_prefix(e, "--%s", name), -1;
    if (!o->first_setting)
        o->first_setting = name;
    return 0;
}

/* The long option of a short one ('o' is --output, 'm' --model, 'p' --prompt). */
static int short_option(int c)
{
    for (int i = 0; i < N_OPTIONS; i++)
        if (OPTIONS[i].short_name == c)
            return i;
    return -1;
}

/* The command among the words after the options, and whether it has the
 * lesson it needs; the words left are the lesson's. */
static int find_command(struct options *o, int *rest, char ***args, struct err *e)
{
    char **w = *args;
    if (*rest > 0 && (strcmp(w[0], "show") == 0 || strcmp(w[0], "lessons") == 0 ||
                      strcmp(w[0], "generate") == 0 || strcmp(w[0], "export") == 0 ||
                      strcmp(w[0], "tokenize") == 0 || strcmp(w[0], "models") == 0)) {
        o->command = w[0];
        (*args)++;
        (*rest)--;
        w++;
    }
    if (o->command && (strcmp(o->command, "lessons") == 0 || strcmp(o->command, "models") == 0)) {
        if (*rest > 0)
            return err_set(e, ERR_USAGE, "'%s' takes no argument (got '%s')", o->command, w[0]);
        return 0;
    }
    if (o->command && strcmp(o->command, "tokenize") == 0) {
        if (*rest > 0)
            return err_set(e, ERR_USAGE,
                           "'tokenize' takes no argument (got '%s'): the text goes in -p TEXT or "
                           "-f FILE",
                           w[0]);
        return 0;
    }
    if (o->command && *rest == 0 && !o->logits && !o->model)
        return err_set(e, ERR_USAGE,
                       "%s needs a lesson: logitlab %s LESSON (see logitlab lessons), "
                       "--model FILE.gguf or --logits FILE.npy",
                       o->command, o->command);
    if (*rest > 0 && o->logits)
        return err_set(e, ERR_USAGE, "--logits plays its own file: drop the lesson '%s'", w[0]);
    if (o->logits && o->model)
        return err_set(e, ERR_USAGE, "--logits and --model are two sources of logits: give one");
    return 0;
}

/* Where the output goes, and what goes with --logits. */
static int check_output(const struct options *o, struct err *e)
{
    if (o->vocab && !o->logits)
        return err_set(e, ERR_USAGE, "--vocab goes with --logits FILE.npy");
    if ((o->output || o->force) && (!o->command || strcmp(o->command, "lessons") == 0))
        return err_set(e, ERR_USAGE, "--%s goes with show, generate or export",
                       o->output ? "output" : "force");
    if ((o->prompt || o->prompt_file || o->special || o->chat) && !o->model)
        return err_set(e, ERR_USAGE, "--%s goes with --model FILE.gguf",
                       o->prompt        ? "prompt"
                       : o->prompt_file ? "prompt-file"
                       : o->special     ? "special"
                                        : "chat");
    if (o->prompt && o->prompt_file)
        return err_set(e, ERR_USAGE, "--prompt and --prompt-file are two prompts: give one");
    if (o->save_logits && (!o->command || strcmp(o->command, "show") != 0 || !o->model))
        return err_set(e, ERR_USAGE, "--save-logits goes with show --model FILE.gguf");
    /* Each output its own file: one would replace the other. */
    if (o->output && o->save_logits && outfile_same(o->output, o->save_logits))
        return err_set(e, ERR_USAGE,
                       "--save-logits: '%s' is the file of --output too: give each its own",
                       o->save_logits);
    if (o->force && !o->output && !o->save_logits)
        return err_set(
            e, ERR_USAGE,
            "--force replaces the file of --output FILE or --save-logits FILE: give one");
    if (o->svg && o->command && strcmp(o->command, "show") != 0)
        return err_set(e, ERR_USAGE,
                       "--format svg draws the view: it goes with show or --headless");
    /* (another command refuses the two by name: check_takes) */
    if ((o->draws || o->n_find) && o->command && strcmp(o->command, "show") == 0 && !o->svg &&
        !report_writes_extras(o->format))
        return err_set(e, ERR_USAGE, "--%s: the %s report has no place for it (text or json)",
                       o->draws ? "draws" : "find", report_format_name(o->format));
    if (o->command && strcmp(o->command, "export") == 0 && o->format_given &&
        o->format != REPORT_MARKDOWN)
        return err_set(e, ERR_USAGE, "export writes Markdown: drop --format or say markdown");
    if (o->top > 0 && o->command && strcmp(o->command, "generate") == 0 &&
        o->format != REPORT_JSON && o->format != REPORT_MARKDOWN)
        return err_set(e, ERR_USAGE,
                       "--top: generate gives each token's alternatives in json and markdown");
    return 0;
}

/* What goes only with the interactive view, or contradicts itself. */
static int check_view(const struct options *o, struct err *e)
{
    if (o->command && (o->headless || o->keys))
        return err_set(e, ERR_USAGE, "--headless and --keys go with the interactive view, not '%s'",
                       o->command);
    if (o->keys && !o->headless)
        return err_set(e, ERR_USAGE, "--keys needs --headless");
    if (o->svg && !o->command && !o->headless)
        return err_set(e, ERR_USAGE,
                       "--format svg needs --headless (or show): a terminal shows the view itself");
    if (o->config && o->no_config)
        return err_set(e, ERR_USAGE, "--config and --no-config contradict each other");
    return 0;
}

/* The command of o as an IN_* bit, and its name in messages. */
static unsigned command_bit(const struct options *o, const char **name)
{
    const char *command = o->command;
    if (o->svg && (!command || strcmp(command, "show") == 0)) {
        *name = command ? "show --format svg" : "--headless --format svg";
        return IN_PICTURE;
    }
    static const struct {
        const char *word;
        unsigned bit;
    } COMMANDS[] = {
        { "show", IN_SHOW },       { "generate", IN_GENERATE }, { "export", IN_EXPORT },
        { "lessons", IN_LESSONS }, { "tokenize", IN_TOKENIZE }, { "models", IN_MODELS },
    };
    for (size_t i = 0; command && i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(command, COMMANDS[i].word) == 0) {
            *name = COMMANDS[i].word;
            return COMMANDS[i].bit;
        }
    *name = "the interactive view";
    return IN_VIEW;
}

static int option_index(const char *name)
{
    for (int i = 0; i < N_OPTIONS; i++)
        if (strcmp(OPTIONS[i].name, name) == 0)
            return i;
    return -1;
}

/* Every option given is one its command takes (the table's takes column;
 * a setting goes with every command that runs a lesson): an option that
 * would do nothing is refused by name, not ignored. */
static int check_takes(const struct options *o, const unsigned char *given, struct err *e)
{
    const char *name;
    unsigned bit = command_bit(o, &name);
    for (int i = 0; i < N_OPTIONS; i++)
        if (given[i] && !(OPTIONS[i].takes & bit))
            return err_set(e, ERR_USAGE, "--%s: %s does not take it", OPTIONS[i].name, name);
    if (o->first_setting && !(bit & IN_RUNS))
        return err_set(e, ERR_USAGE, "--%s: %s does not take it", o->first_setting, name);
    if (given[option_index("size")] && !o->headless && !o->svg)
        return err_set(e, ERR_USAGE, "--size needs --headless (a terminal has its own size)");
    return 0;
}

/* tokenize: a file and one text, and only the options it takes. */
static int check_tokenize(const struct options *o, const unsigned char *given, struct err *e)
{
    if (check_takes(o, given, e) < 0)
        return -1;
    if (!o->model)
        return err_set(e, ERR_USAGE,
                       "tokenize needs --model FILE.gguf (a model, or a vocabulary-only file)");
    if (o->prompt && o->prompt_file)
        return err_set(e, ERR_USAGE, "--prompt and --prompt-file are two texts: give one");
    if (!o->prompt && !o->prompt_file)
        return err_set(e, ERR_USAGE, "tokenize needs a text: -p TEXT or -f FILE");
    return 0;
}

int cli_parse(int argc, char **argv, struct options *o, struct err *e)
{
    struct option longs[N_OPTIONS + 64];
    long_options(longs);
    memset(o, 0, sizeof *o);
    o->step = 1;
    o->width = 80;
    o->height = 24;
    settings_patch_clear(&o->over);
    opterr = 0;
    optind = 0; /* glibc: 0 starts afresh, forgetting any earlier argv */
    unsigned char given[N_OPTIONS] = { 0 };
    int c;
    while ((c = getopt_long(argc, argv, ":hVo:m:p:f:", longs, NULL)) != -1) {
        if (c == ':')
            return err_set(e, ERR_USAGE, "option '%s' needs a value", argv[optind - 1]);
        if (c == '?')
            return unknown_option(argv[optind - 1], longs, e);
        c = c >= OPT_BASE ? c - OPT_BASE : short_option(c);
        if (apply_option(o, c, optarg, e) < 0)
            return -1;
        if (c < N_OPTIONS)
            given[c] = 1;
        if (o->action != CLI_RUN)
            return 0;
    }
    int rest = argc - optind;
    char **args = argv + optind;
    if (find_command(o, &rest, &args, e) < 0)
        return -1;
    /* -m NAME: a file, or a model by its manager's name (data/model_find.h) */
    if (o->model && model_find(o->model, o->model_path, sizeof o->model_path, e) < 0)
        return err_prefix(e, "--model"), -1;
    if (o->model)
        o->model = o->model_path;
    if (o->command && (strcmp(o->command, "lessons") == 0 || strcmp(o->command, "models") == 0))
        return check_takes(o, given, e);
    if (o->command && strcmp(o->command, "tokenize") == 0)
        return check_tokenize(o, given, e);
    if (check_output(o, e) < 0)
        return -1;
    if (rest > 1)
        return err_set(e, ERR_USAGE, "one lesson at a time (got '%s' and '%s')", args[0], args[1]);
    o->lesson = rest ? args[0] : NULL;
    if (check_view(o, e) < 0)
        return -1;
    if (o->svg && !given[option_index("size")]) {
        o->width = 120; /* a slide's picture: the size README recommends */
        o->height = 40;
    }
    if (o->no_color)
        o->theme = THEME_MONO + 1; /* whatever --theme says, as the terminal does */
    return check_takes(o, given, e);
}
