/* app.h - the running program as a model: which lesson and step, the
 * settings, the steps taken, the trace on screen, and what each key does.
 * No curses and no I/O beyond loading lessons: term.c feeds it keys, view.c
 * draws it, and the headless mode and the tests drive it directly.
 */
#ifndef LOGITLAB_APP_H
#define LOGITLAB_APP_H

#include "source/batch.h"
#include "data/catalog.h"
#include "data/config.h"
#include "base/err.h"
#include "data/lesson.h"
#include "core/sampler.h"
#include "core/trace.h"
#include "core/settings.h"
#include "source/gen.h"
#include "source/path.h"
#include "source/source.h"
#include "core/draws.h"
#include "data/keys.h"

/* What the caller must do after a key. */
enum app_flag {
    APP_REDRAW = 1,
    APP_QUIT = 2,
};

enum app_mode {
    MODE_NORMAL,
    MODE_HELP,   /* the key list covers the screen; ?, Space, PgDn: the legend; any other key closes
                    it */
    MODE_PROMPT, /* a ':' command is being typed */
    MODE_ANSWER, /* an exercise answer is being typed */
    MODE_TEXT,   /* the lesson text fills the screen; Up and Down scroll it */
    MODE_FIND,   /* a token to find is being typed */
    MODE_LEGEND, /* the marks and colours explained (L, or ? twice); any key closes it */
    MODE_READ,   /* the whole text, each token by its probability (c; app_read.c) */
};

enum app_end {
    END_NONE,   /* a live step waits for its draw */
    END_LESSON, /* the lesson has no more steps */
    END_STOP,   /* a stop rule fired and the next step would continue the text */
};

#define APP_MAX_HISTORY 1024
#define APP_MSG_MAX     256
/* The bytes the input line holds: any prompt a model's context takes, a
 * context of LESSON_MODEL_CONTEXT tokens (1,280) of at most
 * VOCAB_MAX_TOKEN_BYTES (1,024) each: 1,310,720. The line grows as it is
 * typed; a key past this is refused with a message, never dropped unsaid. */
#define APP_INPUT_LIMIT (LESSON_MODEL_CONTEXT * VOCAB_MAX_TOKEN_BYTES)

/* How lessons that need more than their file are opened. */
struct app_options {
    int hidden;                  /* the hidden size of a model lesson's head; 0: the lesson's */
    const char *vocab;           /* the vocabulary of captured logits; NULL: Llama 3's */
    const struct config *config; /* the user's defaults and key bindings, or NULL */
    struct backend *backend; /* where model lessons run their LM head and the batch; NULL: none */
    const struct model_request *model; /* --model: a real model (data/lesson_model.h), or NULL */
};

struct app_answer {
    int given;
    double value; /* a kept set: how many tokens the answer named */
    int ok;
    int misses;       /* wrong answers so far; the second shows the solution */
    char typed[64];   /* the last answer: the number, or the set's tokens (escaped) */
    char verdict[96]; /* what was wrong with it ("about 0.01 too high", "missing C") */
};

#define APP_ALTS     6  /* the most likely tokens a taken step keeps, for the text view */
#define APP_BRANCHES 16 /* texts the text view keeps to go back to */

/* A step taken: where it was, what it used, what it drew. */
struct app_entry {
    int step; /* lesson step, 1-based */
    int *ctx; /* the context it sampled in (owned) */
    int len;
    struct settings settings;
    int choice;
    int sampled;
    int forced; /* 1: the user's token (:take), not the sampler's */
    double u;
    struct stop_result stop; /* after appending the choice */
    int n_ans;               /* the answers given, for an exercise step */
    struct app_answer *ans;  /* (owned) */
    char *how; /* what the source said of this step (a model's hidden vector), or NULL (owned) */
    /* The token's numbers when it was taken, and the step's most likely
     * tokens, best first: what the text view shows of it. */
    double prob, final;
    int rank; /* 1: the most likely */
    int n_alt;
    struct trace_alt alt[APP_ALTS];
};

/* A text the text view can go back to: the tokens of the steps taken, and
 * which of them were the user's (the rest were drawn, and are drawn again). */
struct app_branch {
    int n;
    int *ids;
    unsigned char *forced;
};

/* The text view (c): the token selected among the steps taken, the
 * alternative selected among its step's most likely tokens (0: the token
 * taken), and the texts kept, the one on screen among them. */
struct app_read {
    int sel, alt; /* sel counts the prompt's predicted tokens first (pre of them) */
    int n_branch, branch;
    struct app_branch b[APP_BRANCHES];
    /* A model's prompt: what the model gave each of its tokens at its
     * position (the logits after the ids before it), computed when the view
     * opens; pre = the prompt's tokens but the first (0: none). */
    struct app_entry *prompt; /* pre entries, owned */
    int pre;
    double prompt_ms; /* what computing them took */
};

struct app {
    struct catalog cat;
    int lesson_index; /* in cat.files, or -1 for a lesson opened by path */
    struct lesson L;
    struct source source; /* runs L: where its steps' logits come from */

    struct settings_patch cli;  /* the command line's settings: over every lesson's */
    struct settings_patch live; /* changed while running; cleared by x and on a new lesson */

    int n_hist;
    struct app_entry hist[APP_MAX_HISTORY];
    int pos;        /* the entry on screen; n_hist means the live step */
    int live_step;  /* the step waiting to be taken (when end == END_NONE) */
    struct gen gen; /* its context, and the stop rule after a step taken there */
    enum app_end end;
    int resume_step; /* after a stop: the next step, when it starts from its own context */

    /* The step on screen, recomputed after every change. */
    struct settings cur;
    struct trace t;
    const int *cur_ctx;
    int cur_len;
    int cur_step;
    int show_u;     /* mark where the seeded u lands on the live step */
    int off_script; /* the live context is not the one the lesson's logits were written for */
    char script_text[160];
    double recompute_us; /* the last recomputation, in microseconds */

    /* Exercises: answers to the asks of the live step. */
    struct app_answer ans[LESSON_MAX_ASK];
    int ask_index;
    int revealed;

    enum app_mode mode;
    /* The input line (':' commands, '/' find, answers): what is typed,
     * terminated, in a buffer that grows (app_input.c); never NULL between
     * app_init and app_free. */
    char *input;
    int input_len;
    int input_cap;   /* bytes allocated for input */
    int input_limit; /* the bytes it may hold: APP_INPUT_LIMIT (a fuzz harness lowers it) */
    char msg[APP_MSG_MAX];
    int msg_warn;
    int scroll;      /* first line of the lesson text on screen */
    int scroll_max;  /* the last scroll that still shows text, set after each drawing */
    int scroll_page; /* lines of text on screen, set after each drawing */
    int try_index;   /* the step's suggestion applied last, -1 for none */
    struct app_options opt;
    struct model_progress progress; /* told how opening a lesson goes (fn NULL: nobody) */
    int keymap[128]; /* a key pressed -> 1 + the action bound to it (config.h); 0: its own */

    /* A token found with '/', and many draws (D), recomputed with the step
     * while they are on: on every step, toy or full size. */
    int find_id; /* -1: none */
    int draws_on;
    struct draws draws;
    int draws_ok;
    /* The step on screen was computed; 0 after a refusal (a z' out of the
     * sampler's range): the trace holds no step then, and the view says so. */
    int step_ok;

    /* The batch view (B): BATCH_ROWS requests sampled together on the
     * backend; the setting keys change only the request selected. */
    int batch_on;
    int batch_sel;
    struct batch batch;

    /* How many draws D makes while draws_on (0: DRAWS_DEFAULT): on a toy
     * step 100, 1,000 and 10,000 in turn, at full size 10,000. */
    int draws_n;

    /* Big mode (b, --big): two panes at a time at double height, for a
     * projector; which two is the view's choice (view_layout.c). */
    int big;

    struct app_read read; /* the text view (c) */
};

/* Opens lesson what (an id, a lesson file, or a .npy file of captured
 * logits; NULL for the first lesson) from the lessons directory dir (NULL:
 * the default search), with the command line's settings (NULL: none;
 * copied). src may be NULL. Returns 0 or -1. */
int app_init(struct app *a, const char *dir, const char *what, const struct settings_patch *cli,
             const struct app_options *src, struct err *e);

/* The same, telling p (NULL: nobody; copied) how opening a lesson goes, now
 * and whenever another opens (':lesson', n, N): a full-size lesson's head
 * takes seconds to build. */
int app_init_progress(struct app *a, const char *dir, const char *what,
                      const struct settings_patch *cli, const struct app_options *src,
                      const struct model_progress *p, struct err *e);

/* Starts the lesson again from its step k (1-based), on the lesson's own
 * path. Returns 0, or -1 with a message when there is no step k. */
int app_start_step(struct app *a, int k, struct err *e);
void app_free(struct app *a);

/* Handles one key; returns APP_* flags. Never fails: problems become a
 * message on the status line. */
int app_key(struct app *a, int key);

/* Runs the command typed at the ':' prompt ("temperature 0.5", "lesson toy"). */
int app_command(struct app *a, const char *line);

/* 1 when the step on screen is an exercise whose solution is still hidden. */
int app_hidden(const struct app *a);

/* The tokens t keeps, by probability, escaped and separated by spaces
 * ("A B C"): the answer to a kept-set ask (app_exercise.c). */
void app_kept_text(const struct app *a, const struct trace *t, char *buf, size_t n);

/* The entry on screen, or NULL for the live step. */
const struct app_entry *app_shown_entry(const struct app *a);

/* Binds the keys of c's [keys] to their actions (none when c is NULL). */
void app_bind_keys(struct app *a, const struct config *c);

/* Line `line` of the help screen: the keys of an action (and of the ones
 * that share its line, and those the configuration binds to them) in keys,
 * and what they do in *help. Returns 1, or 0 past the last line. */
int app_help_line(const struct app *a, int line, char *keys, size_t n, const char **help);

/* The most draws the view makes on one step (:draws N), recomputed with it. */
#define APP_DRAWS_MAX 100000

/* D and ':draws [N|off]' on any step: value "" takes the next count -- on
 * a toy step 100, then 1,000, 10,000 and off; at full size 10,000, then
 * off --, a number that many draws, "off" none. The draws are recomputed
 * with the step while they are on. */
int app_draws(struct app *a, const char *value);

/* The text view (app_read.c): c opens it on the steps taken; its keys
 * move along the tokens, choose an alternative and branch the text there,
 * and go back and forth between the texts kept. */
int app_read_open(struct app *a);
int app_read_key(struct app *a, int key);
void app_read_free(struct app *a);

/* ln p summed over the steps taken (a text's log-probability), their mean,
 * and the perplexity e^-mean; 0 tokens: *n 0 and NANs. */
void app_read_logprob(const struct app *a, int *n, double *sum, double *mean, double *ppl);

/* The token at text view position sel: a predicted prompt token (below
 * a->read.pre; its step is 0), else a step taken. */
const struct app_entry *app_read_entry(const struct app *a, int sel);

/* '/' and ':find TEXT' on any step: the token by its text or #id marked
 * (a full-size step adds its row under the table); "" clears it. */
int app_find(struct app *a, const char *text);

#endif
