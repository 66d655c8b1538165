/* main.c - options, subcommands and wiring. The only place that prints a
 * fatal error and picks the exit status:
 *   0  success
 *   2  bad usage or bad input (an option, a lesson file, a step)
 *   3  a system failure (out of memory, a write error)
 */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "backend/backend.h"
#include "data/catalog.h"
#include "cli.h"
#include "data/config.h"
#include "data/keys.h"
#include "tui/screen.h"
#include "tui/term.h"
#include "tui/view.h"
#include "base/err.h"
#include "data/lesson.h"
#include "report/report.h"
#include "core/sampler.h"
#include "core/settings.h"
#include "source/source.h"
#include "core/draws.h"
#include "base/utf8.h"
#include "base/outfile.h"

#define HEADLESS_MAX_KEYS 4096

/* The user's configuration, read once in main() before anything else and
 * only read after that. */
static struct config CONFIG;
/* Where the LM head and the batch run (--backend), opened once in main. */
static struct backend BACKEND;
static char config_warning[APP_MSG_MAX];
#define TUI_POLL_MS 250 /* how often the loop looks at the stop flag */

#ifndef LOGITLAB_VERSION
#define LOGITLAB_VERSION "0.1.0"
#endif

static int cmd_lessons(const struct options *o, struct err *e)
{
    struct catalog cat;
    if (catalog_open(&cat, o->lessons_dir, e) < 0)
        return -1;
    int bad = 0;
    for (int i = 0; i < cat.n; i++) {
        struct lesson L;
        struct err le;
        if (lesson_load(&L, cat.files[i], &le) < 0) {
            fprintf(stderr, "logitlab: %s\n", le.msg);
            bad++;
            continue;
        }
        printf("%-14s %s\n", L.id, L.title);
        lesson_free(&L);
    }
    catalog_close(&cat);
    if (bad)
        return err_set(e, ERR_USAGE, "%d lesson file%s could not be read", bad,
                       bad == 1 ? "" : "s");
    return 0;
}

/* Loads the lesson of the command line (an id, a file, or --logits FILE.npy)
 * and makes it ready to run, ranking at least the rows --top asks for. */
static int load_lesson(const struct options *o, const char *what, struct lesson *L, struct err *e)
{
    int rows = o->top > SOURCE_FAST_ROWS ? o->top : SOURCE_FAST_ROWS;
    if (rows > SOURCE_MAX_ROWS)
        rows = SOURCE_MAX_ROWS;
    struct catalog cat;
    if (catalog_open(&cat, o->lessons_dir, e) < 0)
        return -1;
    int rc = catalog_load_any(&cat, o->logits ? o->logits : what, o->vocab, L, e);
    catalog_close(&cat);
    if (rc < 0)
        return -1;
    L->config = &CONFIG;
    if (source_open(L, o->hidden, rows, e) < 0 || source_use_backend(L, &BACKEND, e) < 0) {
        lesson_free(L);
        return -1;
    }
    return 0;
}

/* The settings of step k with the command line's on top. */
static int step_settings(const struct options *o, const struct lesson *L, int k, struct settings *s,
                         struct err *e)
{
    source_step_settings(L, k, s);
    for (int i = 0; i < o->n_over; i++)
        if (settings_set(s, o->over[i].name, o->over[i].value, e) < 0)
            return err_prefix(e, "--%s", o->over[i].name), -1;
    return 0;
}

/* --find: token ids from their text ("␣Paris", " Paris") or their number. */
static int find_ids(const struct options *o, const struct lesson *L, int *ids, struct err *e)
{
    for (int i = 0; i < o->n_find; i++) {
        int id = vocab_lookup(&L->vocab, o->find[i]);
        if (id < 0)
            return err_set(e, ERR_USAGE,
                           "--find '%s': no such token (give its text, with \u2423 or a space "
                           "for a leading space, or #ID for an id from 0 to %d)",
                           o->find[i], L->vocab.n - 1);
        ids[i] = id;
    }
    return 0;
}

/* The stop rules after choice is appended to ctx. Returns 0 or -1. */
static int stop_after(const struct settings *s, const struct lesson *L, const int *ctx, int len,
                      int choice, struct stop_result *out, struct err *e)
{
    int *next = malloc((size_t)(len + 1) * sizeof *next);
    if (!next)
        return err_set(e, ERR_SYSTEM, "out of memory");
    if (len)
        memcpy(next, ctx, (size_t)len * sizeof *next);
    next[len] = choice;
    *out = stop_check(s, &L->vocab, next, len + 1, L->prompt_len);
    free(next);
    return 0;
}

static int cmd_show(const struct options *o, const char *what, struct err *e)
{
    struct lesson L;
    if (load_lesson(o, what, &L, e) < 0)
        return -1;
    if (o->step > L.n_steps) {
        err_set(e, ERR_USAGE, "--step %d: lesson '%s' has %d step%s", o->step, L.id, L.n_steps,
                L.n_steps == 1 ? "" : "s");
        lesson_free(&L);
        return -1;
    }
    int fast = source_is_fast(&L);
    if (!fast && (o->draws || o->n_find)) {
        err_set(e, ERR_USAGE, "--%s goes with a full-size lesson (real-france, ...) or --logits",
                o->draws ? "draws" : "find");
        lesson_free(&L);
        return -1;
    }
    struct settings s;
    int found[CLI_MAX_FIND];
    struct outfile of;
    if (step_settings(o, &L, o->step, &s, e) < 0 || find_ids(o, &L, found, e) < 0 ||
        outfile_open(&of, o->output, o->force, e) < 0) {
        lesson_free(&L);
        return -1;
    }
    int *ctx = NULL, len = 0, rc;
    struct trace t;
    rc = source_lesson_context(&L, o->step, &ctx, &len, e);
    if (rc == 0)
        rc = trace_init(&t, L.vocab.n, e);
    if (rc == 0) {
        rc = source_run_step(&L, o->step, &s, ctx, len, &t, e);
        static struct draws_hist hist;
        static struct draws draws;
        int with_hist = fast && L.vocab.n >= 1000; /* a few tokens are all in the table */
        if (rc == 0 && with_hist)
            draws_histogram(&t, 16, &hist);
        if (rc == 0 && o->draws) {
            rc = draws_run(&t, s.sampler.seed, source_draw_step(&L, len), o->draws,
                           o->top > 0 ? o->top : REPORT_FAST_TOP, &draws, e);
        }
        struct report r = {
            .lesson = &L,
            .step = o->step,
            .settings = &s,
            .context = ctx,
            .context_len = len,
            .prompt_len = L.prompt_len,
            .trace = &t,
            .top = o->top,
            .hist = with_hist ? &hist : NULL,
            .draws = o->draws ? &draws : NULL,
            .n_find = o->n_find,
            .find = found,
        };
        if (rc == 0)
            rc = stop_after(&s, &L, ctx, len, t.choice.id, &r.stop, e);
        if (rc == 0)
            rc = report_write(of.f, o->format, &r, e);
        trace_free(&t);
    }
    if (outfile_close(&of, rc == 0, e) < 0)
        rc = -1;
    free(ctx);
    lesson_free(&L);
    return rc;
}

/* Writes the new text of a stream: the bytes of the context from *done on
 * that end on a whole character (a character split across tokens waits for
 * its last byte). */
static void stream_text(FILE *out, const struct vocab *v, const int *ids, int n, int final,
                        size_t *done, char **buf, size_t *cap)
{
    size_t need = vocab_detok(v, ids, n, NULL, 0) + 1;
    if (need > *cap) {
        char *b = realloc(*buf, need);
        if (!b)
            return;
        *buf = b;
        *cap = need;
    }
    size_t len = vocab_detok(v, ids, n, *buf, *cap);
    size_t ready = final ? len : vocab_complete_prefix(*buf, len);
    /* Whole characters, newlines and tabs as they are; any other control
     * byte, and a byte that can never be part of a character, as \xNN. */
    for (size_t i = *done; i < ready;) {
        uint32_t cp;
        int cl = utf8_decode(*buf + i, ready - i, &cp);
        if (cl > 0 && (cp >= 0x20 || cp == '\n' || cp == '\t') && cp != 0x7F) {
            fwrite(*buf + i, 1, (size_t)cl, out);
            i += (size_t)cl;
        } else {
            fprintf(out, "\\x%02X", (unsigned char)(*buf)[i]);
            i++;
        }
    }
    if (ready > *done) {
        fflush(out);
        *done = ready;
    }
}

/* generate: the loop, from the prompt, with the settings of the command line
 * over the lesson's, until a stop rule fires. */
static int cmd_generate(const struct options *o, const char *what, struct err *e)
{
    struct lesson L;
    if (load_lesson(o, what, &L, e) < 0)
        return -1;
    int cap = L.prompt_len + L.n_steps + 1, len = L.prompt_len, rc = 0;
    int *ctx = malloc((size_t)cap * sizeof *ctx);
    struct trace t;
    if (!ctx || trace_init(&t, L.vocab.n, e) < 0) {
        free(ctx);
        lesson_free(&L);
        return ctx ? -1 : err_set(e, ERR_SYSTEM, "out of memory");
    }
    if (len)
        memcpy(ctx, L.prompt, (size_t)len * sizeof *ctx);
    char *text = NULL;
    size_t text_cap = 0, done = 0;
    struct outfile of;
    if (outfile_open(&of, o->output, o->force, e) < 0) {
        trace_free(&t);
        free(ctx);
        lesson_free(&L);
        return -1;
    }
    FILE *out = of.f;
    if (o->format == REPORT_TEXT) {
        /* The prompt first, then each token's text as it is drawn. */
        if (L.prompt_len)
            stream_text(out, &L.vocab, ctx, len, 0, &done, &text, &text_cap);
        else if (L.prompt_text)
            fputs(L.prompt_text, out);
    }
    struct stop_result stop = { STOP_NONE, 0 };
    struct settings s;
    int k;
    for (k = 1; k <= L.n_steps && rc == 0; k++) {
        rc = step_settings(o, &L, k, &s, e);
        if (rc == 0)
            rc = source_run_step(&L, k, &s, ctx, len, &t, e);
        if (rc < 0)
            break;
        ctx[len++] = t.choice.id;
        if (o->format == REPORT_TEXT)
            stream_text(out, &L.vocab, ctx, len, 0, &done, &text, &text_cap);
        stop = stop_check(&s, &L.vocab, ctx, len, L.prompt_len);
        if (stop.rule != STOP_NONE)
            break;
    }
    if (rc == 0) {
        char why[160];
        stop_describe(&stop, &s, &L.vocab, why, sizeof why);
        int gen = len - L.prompt_len;
        if (stop.rule == STOP_NONE)
            snprintf(why, sizeof why, "no stop rule fired: the lesson's %d steps ran out",
                     L.n_steps);
        if (o->format == REPORT_TEXT) {
            stream_text(out, &L.vocab, ctx, len, 1, &done, &text, &text_cap);
            fprintf(out, "\n[%d token%s; %s%s]\n", gen, gen == 1 ? "" : "s",
                    stop.rule == STOP_NONE ? "" : "stopped by ", why);
        } else {
            fprintf(out, "{\"lesson\": \"%s\", \"generated\": [", L.id);
            for (int i = L.prompt_len; i < len; i++)
                fprintf(out, "%s%d", i > L.prompt_len ? ", " : "", ctx[i]);
            fprintf(out, "], \"stop\": \"%s\"}\n", why);
        }
    }
    if (rc < 0 && done > 0 && !of.path)
        putchar('\n'); /* the error goes on a line of its own */
    if (outfile_close(&of, rc == 0, e) < 0)
        rc = -1;
    free(text);
    trace_free(&t);
    free(ctx);
    lesson_free(&L);
    return rc;
}

/* export: every step of a lesson on its own path, as one Markdown document;
 * exercise steps as worksheets, their answers gathered for the end. The
 * path is walked once; the page shows each step with the command line's
 * settings over the lesson's. */
static int cmd_export(const struct options *o, const char *what, struct err *e)
{
    struct lesson L;
    if (load_lesson(o, what, &L, e) < 0)
        return -1;
    struct outfile of;
    if (outfile_open(&of, o->output, o->force, e) < 0) {
        lesson_free(&L);
        return -1;
    }
    char *answers = NULL;
    size_t answers_len = 0;
    FILE *ans = open_memstream(&answers, &answers_len);
    struct source_path path;
    struct trace t = { 0 };
    int rc = ans ? 0 : err_set(e, ERR_SYSTEM, "out of memory");
    if (rc == 0)
        rc = source_path_start(&path, &L, e);
    if (rc == 0 && (rc = trace_init(&t, L.vocab.n, e)) < 0)
        source_path_free(&path);
    if (rc == 0) {
        report_markdown_title(of.f, &L);
        for (int more = 1; rc == 0 && more;) {
            int k = path.step;
            struct settings s;
            rc = step_settings(o, &L, k, &s, e);
            if (rc == 0)
                rc = source_run_step(&L, k, &s, path.ctx, path.len, &t, e);
            struct report r = { .lesson = &L,
                                .step = k,
                                .settings = &s,
                                .context = path.ctx,
                                .context_len = path.len,
                                .prompt_len = L.prompt_len,
                                .trace = &t,
                                .top = o->top,
                                .heading = 2 };
            if (rc == 0)
                rc = stop_after(&s, &L, path.ctx, path.len, t.choice.id, &r.stop, e);
            if (rc == 0)
                rc = report_write(of.f, REPORT_MARKDOWN, &r, e);
            if (rc == 0)
                report_markdown_answers(ans, &r);
            if (rc == 0 && (more = source_path_next(&path, e)) < 0)
                rc = -1;
        }
        source_path_free(&path);
    }
    if (ans && fclose(ans) != 0 && rc == 0)
        rc = err_set(e, ERR_SYSTEM, "out of memory");
    if (rc == 0 && answers_len > 0) {
        fprintf(of.f, "## Answers\n\n");
        fwrite(answers, 1, answers_len, of.f);
    }
    free(answers);
    trace_free(&t);
    if (outfile_close(&of, rc == 0, e) < 0)
        rc = -1;
    lesson_free(&L);
    return rc;
}

/* Opens the app on the lesson, settings and step of the command line. */
static int open_app(const struct options *o, struct app *a, struct err *e)
{
    const char *names[MAX_OVERRIDES], *values[MAX_OVERRIDES];
    for (int i = 0; i < o->n_over; i++) {
        names[i] = o->over[i].name;
        values[i] = o->over[i].value;
    }
    if (app_init(a, o->lessons_dir, o->logits ? o->logits : o->lesson, o->n_over, names, values,
                 &(struct app_source){ o->hidden, o->vocab, &CONFIG, &BACKEND }, e) < 0)
        return -1;
    if (o->step > 1 && app_start_step(a, o->step, e) < 0) {
        app_free(a);
        return -1;
    }
    if (config_warning[0]) /* the first thing on the screen says what was wrong */
        memcpy(a->msg, config_warning, sizeof a->msg), a->msg_warn = 1;
    return 0;
}

/* Box-drawing and blocks, unless --ascii, the config or the locale says no. */
static int want_utf8(const struct options *o)
{
    return !o->ascii && !CONFIG.ascii && term_locale_utf8();
}

/* Runs the interactive view without a terminal: the keys of --keys, then the
 * last screen printed as text. */
static int cmd_headless(const struct options *o, struct err *e)
{
    static struct key_event events[HEADLESS_MAX_KEYS];
    int n = 0;
    if (o->keys && (n = keys_parse(o->keys, events, HEADLESS_MAX_KEYS, e)) < 0)
        return err_prefix(e, "--keys"), -1;
    static struct app a; /* large: kept off the stack */
    if (open_app(o, &a, e) < 0)
        return -1;
    struct view_scratch *vs = view_scratch_new(); /* large: kept off the stack */
    if (!vs) {
        app_free(&a);
        return err_set(e, ERR_SYSTEM, "out of memory for the view");
    }
    struct screen s;
    int utf8 = want_utf8(o);
    int rc = screen_init(&s, o->width, o->height, utf8);
    for (int i = 0; rc == 0 && i < n; i++) {
        if (events[i].key == AK_RESIZE) {
            screen_free(&s);
            rc = screen_init(&s, events[i].w, events[i].h, utf8);
        }
        /* As if drawn after every key: scrolling knows how much text there is. */
        view_measure(&a, s.w, s.h, &a.scroll_page, &a.scroll_max, vs);
        if (app_key(&a, events[i].key) & APP_QUIT)
            break;
    }
    if (rc < 0) {
        view_scratch_free(vs);
        app_free(&a);
        return err_set(e, ERR_SYSTEM, "out of memory for the screen");
    }
    view_render(&a, &s, vs);
    view_scratch_free(vs);
    screen_dump(&s, stdout);
    screen_free(&s);
    app_free(&a);
    return fflush(stdout) == 0 ? 0 : err_set(e, ERR_SYSTEM, "writing the screen failed");
}

/* The interactive view: keys in, the screen redrawn after every change. */
static int cmd_tui(const struct options *o, struct err *e)
{
    static struct app a; /* large: kept off the stack */
    if (open_app(o, &a, e) < 0)
        return -1;
    struct view_scratch *vs = view_scratch_new(); /* large: kept off the stack */
    if (!vs) {
        app_free(&a);
        return err_set(e, ERR_SYSTEM, "out of memory for the view");
    }
    term_install_signals();
    enum theme theme = o->theme ? (enum theme)(o->theme - 1) : CONFIG.theme;
    if (o->no_color)
        theme = THEME_MONO;
    if (term_open((int)theme, e) < 0) {
        view_scratch_free(vs);
        app_free(&a);
        return -1;
    }
    int utf8 = want_utf8(o);
    struct screen s = { 0 };
    int rc = 0, w = 0, h = 0, dirty = 1;
    for (;;) {
        int nw, nh;
        term_size(&nw, &nh);
        if (nw != w || nh != h || !s.cells) {
            screen_free(&s);
            if (screen_init(&s, nw > 0 ? nw : 1, nh > 0 ? nh : 1, utf8) < 0) {
                rc = err_set(e, ERR_SYSTEM, "out of memory for a %dx%d screen", nw, nh);
                break;
            }
            w = nw;
            h = nh;
            dirty = 1;
        }
        if (dirty) {
            view_render(&a, &s, vs);
            term_present(&s);
            view_measure(&a, s.w, s.h, &a.scroll_page, &a.scroll_max, vs);
            dirty = 0;
        }
        int key = term_key(TUI_POLL_MS);
        if (term_stop_signal())
            break;
        if (key == AK_NONE)
            continue;
        int flags = app_key(&a, key);
        if (flags & APP_QUIT)
            break;
        dirty = 1;
    }
    term_close();
    view_scratch_free(vs);
    screen_free(&s);
    app_free(&a);
    int sig = term_stop_signal();
    if (rc == 0 && sig)
        return 128 + sig; /* the shell's convention for "ended by a signal" */
    return rc;
}

int main(int argc, char **argv)
{
    struct options o;
    struct err e = { 0, "" };
    setlocale(LC_ALL, ""); /* UTF-8 tokens and block characters when the locale has them */
    int rc = cli_parse(argc, argv, &o, &e);
    if (rc == 0 && o.action == CLI_HELP) {
        cli_usage(stdout);
        return 0;
    }
    if (rc == 0 && o.action == CLI_VERSION) {
        printf("logitlab %s\n", LOGITLAB_VERSION);
        return 0;
    }
    if (rc == 0 && !o.no_config) {
        struct err ce;
        if (config_load(&CONFIG, o.config, &ce) < 0) {
            if (o.config) /* a file asked for by name must be right */
                rc = err_set(&e, ERR_USAGE, "%s", ce.msg);
            else {
                fprintf(stderr, "logitlab: warning: %s (the built-in defaults are used)\n", ce.msg);
                snprintf(config_warning, sizeof config_warning, "%.200s (built-in defaults used)",
                         ce.msg);
            }
        }
    } else if (rc == 0) {
        config_defaults(&CONFIG);
    }
    int need_backend = !(o.command && strcmp(o.command, "lessons") == 0);
    if (rc == 0 && need_backend)
        rc = backend_open(&BACKEND, (enum backend_choice)o.backend, &e);
    if (rc == 0) {
        if (o.command && strcmp(o.command, "lessons") == 0) {
            rc = cmd_lessons(&o, &e);
        } else if (o.command && strcmp(o.command, "export") == 0) {
            rc = cmd_export(&o, o.lesson, &e);
        } else if (o.command && strcmp(o.command, "generate") == 0) {
            rc = cmd_generate(&o, o.lesson, &e);
        } else if (o.command) {
            rc = cmd_show(&o, o.lesson, &e);
        } else if (o.headless) {
            rc = cmd_headless(&o, &e);
        } else {
            rc = cmd_tui(&o, &e);
        }
    }
    backend_close(&BACKEND);
    if (rc < 0) {
        fprintf(stderr, "logitlab: %s\n", e.msg);
        return e.code ? e.code : ERR_USAGE;
    }
    return rc; /* 0, or 128 + the signal that ended the interactive view */
}
