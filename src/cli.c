#include "cli.h"

#include <getopt.h>
#include <string.h>

#include "backend/backend.h"
#include "data/config.h"
#include "core/draws.h"
#include "data/keys.h"
#include "model/model.h"
#include "core/settings.h"

#define OPT_SETTING_BASE 1000

enum {
    OPT_HELP = 'h',
    OPT_VERSION = 'V',
    OPT_STEP = 256,
    OPT_FORMAT,
    OPT_TOP,
    OPT_LESSONS_DIR,
    OPT_HEADLESS,
    OPT_SIZE,
    OPT_KEYS,
    OPT_ASCII,
    OPT_NO_COLOR,
    OPT_HIDDEN,
    OPT_DRAWS,
    OPT_FIND,
    OPT_LOGITS,
    OPT_VOCAB,
    OPT_OUTPUT = 'o',
    OPT_FORCE = 257 + 32,
    OPT_CONFIG,
    OPT_NO_CONFIG,
    OPT_THEME,
    OPT_BACKEND,
};

void cli_usage(FILE *out)
{
    fprintf(out,
            "Usage: logitlab [OPTIONS] [LESSON]\n"
            "       logitlab show LESSON [--step N] [--format text|csv|json] [--top N] [SETTINGS]\n"
            "       logitlab generate LESSON [SETTINGS]\n"
            "       logitlab export LESSON [-o FILE] [--force] [SETTINGS]\n"
            "       logitlab lessons\n"
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
            "\n"
            "LESSON is a lesson id (see 'logitlab lessons') or the path of a lesson file.\n"
            "\n"
            "Options:\n"
            "  --step N             the step of the lesson to show (default 1)\n"
            "  --format FORMAT      text (default), csv, json or markdown\n"
            "  -o, --output FILE    write to FILE instead of standard output; an existing\n"
            "                       file is left alone unless --force is given\n"
            "  --force              replace the file of --output\n"
            "  --top N              write only the N most likely rows (default: all; 20 for\n"
            "                       a full-size vocabulary)\n"
            "  --draws N            show: draw N times with the step's settings and count\n"
            "                       the tokens against their probabilities (full size)\n"
            "  --find TOKEN         show: also the row of TOKEN (text or id), wherever it\n"
            "                       ranks; may be repeated\n"
            "  --logits FILE.npy    play logits captured from a model: float32 or float16,\n"
            "                       shape [V] or [steps, V]; instead of a LESSON\n"
            "  --vocab FILE         the vocabulary of those logits (default: Llama 3's,\n"
            "                       data/llama3-vocab.bin)\n"
            "  --hidden-size N      the hidden size of a full-size lesson's LM head\n"
            "                       (default 4096; smaller is faster)\n"
            "  --lessons-dir DIR    read lessons from DIR (default: $LOGITLAB_LESSONS, else\n"
            "                       beside the program, the installed share directory,\n"
            "                       ./lessons)\n"
            "  --headless           run the interactive view without a terminal and print\n"
            "                       its last screen as text (for tests and handouts)\n"
            "  --size WxH           the screen size for --headless (default 80x24)\n"
            "  --keys KEYS          keys for --headless: characters, and <Space> <Enter>\n"
            "                       <Esc> <Left> <Right> <Up> <Down> <PgUp> <PgDn> <Home>\n"
            "                       <End> <Tab> <BS> <lt> <resize WxH>\n"
            "  --ascii              draw with ASCII only (also when the locale is not UTF-8)\n"
            "  --no-color           no colours (also when NO_COLOR is set)\n"
            "  --theme NAME         default, projector (high contrast) or mono\n"
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
    fprintf(out, "\n"
                 "The chain runs in the order given by --order (default 'lesson': penalty,\n"
                 "temperature, top-k, top-p, min-p), then draws u in [0, 1) from Philox4x32-10\n"
                 "keyed by the seed and takes the first token, in descending probability, whose\n"
                 "cumulative kept probability exceeds u. Same seed, same token.\n"
                 "\n"
                 "Exit status: 0 success, 2 bad option or input, 3 system failure.\n"
                 "Examples:\n"
                 "  logitlab show toy --step 1 --temperature 0.5\n"
                 "  logitlab show top-k --seed 42 --format json\n"
                 "  logitlab show penalty --step 2 --penalty-formula engine\n");
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

int cli_parse(int argc, char **argv, struct options *o, struct err *e)
{
    static struct option longs[64];
    int n = 0;
    longs[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
    longs[n++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
    longs[n++] = (struct option){ "step", required_argument, NULL, OPT_STEP };
    longs[n++] = (struct option){ "format", required_argument, NULL, OPT_FORMAT };
    longs[n++] = (struct option){ "top", required_argument, NULL, OPT_TOP };
    longs[n++] = (struct option){ "lessons-dir", required_argument, NULL, OPT_LESSONS_DIR };
    longs[n++] = (struct option){ "headless", no_argument, NULL, OPT_HEADLESS };
    longs[n++] = (struct option){ "size", required_argument, NULL, OPT_SIZE };
    longs[n++] = (struct option){ "keys", required_argument, NULL, OPT_KEYS };
    longs[n++] = (struct option){ "ascii", no_argument, NULL, OPT_ASCII };
    longs[n++] = (struct option){ "no-color", no_argument, NULL, OPT_NO_COLOR };
    longs[n++] = (struct option){ "hidden-size", required_argument, NULL, OPT_HIDDEN };
    longs[n++] = (struct option){ "draws", required_argument, NULL, OPT_DRAWS };
    longs[n++] = (struct option){ "find", required_argument, NULL, OPT_FIND };
    longs[n++] = (struct option){ "logits", required_argument, NULL, OPT_LOGITS };
    longs[n++] = (struct option){ "vocab", required_argument, NULL, OPT_VOCAB };
    longs[n++] = (struct option){ "output", required_argument, NULL, OPT_OUTPUT };
    longs[n++] = (struct option){ "force", no_argument, NULL, OPT_FORCE };
    longs[n++] = (struct option){ "config", required_argument, NULL, OPT_CONFIG };
    longs[n++] = (struct option){ "no-config", no_argument, NULL, OPT_NO_CONFIG };
    longs[n++] = (struct option){ "theme", required_argument, NULL, OPT_THEME };
    longs[n++] = (struct option){ "backend", required_argument, NULL, OPT_BACKEND };
    for (int i = 0; SETTINGS_INFO[i].name; i++)
        longs[n++] =
            (struct option){ SETTINGS_INFO[i].name, required_argument, NULL, OPT_SETTING_BASE + i };
    longs[n] = (struct option){ NULL, 0, NULL, 0 };

    memset(o, 0, sizeof *o);
    o->step = 1;
    o->width = 80;
    o->height = 24;
    struct settings check;
    settings_defaults(&check);
    opterr = 0;
    optind = 0; /* glibc: 0 starts afresh, forgetting any earlier argv */
    int c;
    while ((c = getopt_long(argc, argv, ":hVo:", longs, NULL)) != -1) {
        switch (c) {
        case OPT_HELP:
            o->action = CLI_HELP;
            return 0;
        case OPT_VERSION:
            o->action = CLI_VERSION;
            return 0;
        case OPT_STEP:
            if (parse_int(optarg, 1, 1 << 20, &o->step, e) < 0)
                return err_prefix(e, "--step"), -1;
            break;
        case OPT_FORMAT:
            if (report_parse_format(optarg, &o->format, e) < 0)
                return err_prefix(e, "--format"), -1;
            o->format_given = 1;
            break;
        case OPT_TOP:
            if (parse_int(optarg, 0, 1 << 30, &o->top, e) < 0)
                return err_prefix(e, "--top"), -1;
            break;
        case OPT_LESSONS_DIR:
            o->lessons_dir = optarg;
            break;
        case OPT_HEADLESS:
            o->headless = 1;
            break;
        case OPT_SIZE:
            if (keys_parse_size(optarg, &o->width, &o->height, e) < 0)
                return err_prefix(e, "--size"), -1;
            break;
        case OPT_KEYS:
            o->keys = optarg;
            break;
        case OPT_ASCII:
            o->ascii = 1;
            break;
        case OPT_NO_COLOR:
            o->no_color = 1;
            break;
        case OPT_HIDDEN:
            if (parse_int(optarg, 8, MODEL_MAX_HIDDEN, &o->hidden, e) < 0)
                return err_prefix(e, "--hidden-size"), -1;
            if (o->hidden % 8 != 0)
                return err_set(e, ERR_USAGE, "--hidden-size: %d is not a multiple of 8", o->hidden);
            break;
        case OPT_DRAWS:
            if (parse_int(optarg, 1, DRAWS_MAX, &o->draws, e) < 0)
                return err_prefix(e, "--draws"), -1;
            break;
        case OPT_FIND:
            if (o->n_find == CLI_MAX_FIND)
                return err_set(e, ERR_USAGE, "--find: at most %d tokens", CLI_MAX_FIND);
            o->find[o->n_find++] = optarg;
            break;
        case OPT_LOGITS:
            o->logits = optarg;
            break;
        case OPT_VOCAB:
            o->vocab = optarg;
            break;
        case OPT_OUTPUT:
            o->output = optarg;
            break;
        case OPT_FORCE:
            o->force = 1;
            break;
        case OPT_CONFIG:
            o->config = optarg;
            break;
        case OPT_NO_CONFIG:
            o->no_config = 1;
            break;
        case OPT_THEME: {
            enum theme t;
            if (config_parse_theme(optarg, &t, e) < 0)
                return err_prefix(e, "--theme"), -1;
            o->theme = (int)t + 1;
            break;
        }
        case OPT_BACKEND: {
            enum backend_choice b;
            if (backend_parse(optarg, &b, e) < 0)
                return err_prefix(e, "--backend"), -1;
            o->backend = (int)b;
            break;
        }
        case ':':
            return err_set(e, ERR_USAGE, "option '%s' needs a value", argv[optind - 1]);
        case '?':
            return unknown_option(argv[optind - 1], longs, e);
        default: {
            int i = c - OPT_SETTING_BASE;
            const char *name = SETTINGS_INFO[i].name;
            if (settings_set(&check, name, optarg, e) < 0)
                return err_prefix(e, "--%s", name), -1;
            if (o->n_over == MAX_OVERRIDES)
                return err_set(e, ERR_USAGE, "more than %d settings on the command line",
                               MAX_OVERRIDES);
            o->over[o->n_over++] = (struct override){ name, optarg };
        }
        }
    }
    int rest = argc - optind;
    char **args = argv + optind;
    if (rest > 0 && (strcmp(args[0], "show") == 0 || strcmp(args[0], "lessons") == 0 ||
                     strcmp(args[0], "generate") == 0 || strcmp(args[0], "export") == 0)) {
        o->command = args[0];
        args++, rest--;
    }
    if (o->command && strcmp(o->command, "lessons") == 0) {
        if (rest > 0)
            return err_set(e, ERR_USAGE, "'lessons' takes no argument (got '%s')", args[0]);
        return 0;
    }
    if (o->command && rest == 0 && !o->logits)
        return err_set(e, ERR_USAGE,
                       "%s needs a lesson: logitlab %s LESSON (see logitlab lessons), or "
                       "--logits FILE.npy",
                       o->command, o->command);
    if (rest > 0 && o->logits)
        return err_set(e, ERR_USAGE, "--logits plays its own file: drop the lesson '%s'", args[0]);
    if (o->vocab && !o->logits)
        return err_set(e, ERR_USAGE, "--vocab goes with --logits FILE.npy");
    if ((o->output || o->force) && (!o->command || strcmp(o->command, "lessons") == 0))
        return err_set(e, ERR_USAGE, "--%s goes with show, generate or export",
                       o->output ? "output" : "force");
    if (o->force && !o->output)
        return err_set(e, ERR_USAGE, "--force replaces the file of --output FILE: give one");
    if (o->command && strcmp(o->command, "export") == 0 && o->format_given &&
        o->format != REPORT_MARKDOWN)
        return err_set(e, ERR_USAGE, "export writes Markdown: drop --format or say markdown");
    if (rest > 1)
        return err_set(e, ERR_USAGE, "one lesson at a time (got '%s' and '%s')", args[0], args[1]);
    o->lesson = rest ? args[0] : NULL;
    if (o->command && (o->headless || o->keys))
        return err_set(e, ERR_USAGE, "--headless and --keys go with the interactive view, not '%s'",
                       o->command);
    if (o->keys && !o->headless)
        return err_set(e, ERR_USAGE, "--keys needs --headless");
    if (o->config && o->no_config)
        return err_set(e, ERR_USAGE, "--config and --no-config contradict each other");
    return 0;
}
