/* cli.h - the command line: subcommands, options and the usage text.
 *
 * Kept apart from main() so that tests can feed it argument vectors and
 * check every message it gives.
 */
#ifndef LOGITLAB_CLI_H
#define LOGITLAB_CLI_H

#include <stdio.h>

#include "base/err.h"
#include "report/report.h"

#define CLI_MAX_FIND 16

enum cli_action { CLI_RUN, CLI_HELP, CLI_VERSION };

struct options {
    enum cli_action action;
    const char *command; /* "show", "lessons", "tokenize", ..., or NULL */
    const char *lesson;
    int step;
    enum report_format format;
    int top;
    const char *lessons_dir;
    int headless;      /* draw once into a screen buffer and print it as text */
    int width, height; /* --size, for --headless */
    const char *keys;  /* --keys, for --headless */
    int ascii;         /* draw with ASCII only */
    int no_color;
    int big;    /* --big: the view opens in big mode */
    int hidden; /* --hidden-size of a model lesson's head; 0: the lesson's */
    int draws;  /* --draws N: many draws with the step's settings; 0: none */
    int n_find; /* --find TOKEN: rows of these tokens (text or id) */
    const char *find[CLI_MAX_FIND];
    const char *logits;         /* --logits FILE.npy: play captured logits */
    const char *vocab;          /* --vocab FILE: their vocabulary */
    const char *output;         /* -o, --output FILE: where show, generate and export write */
    int force;                  /* --force: replace an existing output file */
    int format_given;           /* --format was on the command line */
    int svg;                    /* --format svg: the view drawn as a picture (show, --headless) */
    const char *config;         /* --config FILE */
    int no_config;              /* --no-config: built-in defaults only */
    int theme;                  /* --theme: an enum theme + 1; 0: the config's */
    int backend;                /* --backend: enum backend_choice (0: auto) */
    const char *model;          /* -m, --model FILE.gguf or NAME: a real model's logits */
    char model_path[4096];      /* the file of --model NAME (Ollama's blob, say) */
    const char *prompt;         /* -p, --prompt TEXT: the model's prompt */
    const char *prompt_file;    /* -f, --prompt-file FILE: the prompt read from FILE */
    int special;                /* --special: special tokens' text in the prompt is theirs */
    int chat;                   /* --chat: the prompt wrapped in the model's chat format */
    int no_bos;                 /* --no-bos: tokenize puts no BOS first, whatever the file says */
    const char *save_logits;    /* --save-logits OUT.npy: show writes the step's logits */
    const char *first_setting;  /* the first setting given, for messages; NULL: none */
    struct settings_patch over; /* the settings given, parsed */
};

/* Parses argv. Every setting is checked on its own here, so that a bad value
 * is reported before any file is read. Returns 0, or -1 with a message that
 * names the option ("--top-p: 1.5 is out of range (must be in (0, 1])"). */
int cli_parse(int argc, char **argv, struct options *o, struct err *e);

/* The --help text. */
void cli_usage(FILE *out);

#endif
