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

#include "app.h"
#include "catalog.h"
#include "cli.h"
#include "keys.h"
#include "screen.h"
#include "term.h"
#include "view.h"
#include "err.h"
#include "lesson.h"
#include "report.h"
#include "sampler.h"
#include "settings.h"
#include "source.h"

#define HEADLESS_MAX_KEYS 4096
#define TUI_POLL_MS       250 /* how often the loop looks at the stop flag */

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

static int cmd_show(const struct options *o, const char *what, struct err *e)
{
    struct catalog cat;
    if (catalog_open(&cat, o->lessons_dir, e) < 0)
        return -1;
    struct lesson L;
    int rc = catalog_load(&cat, what, &L, e);
    catalog_close(&cat);
    if (rc < 0)
        return -1;
    if (o->step > L.n_steps) {
        err_set(e, ERR_USAGE, "--step %d: lesson '%s' has %d step%s", o->step, L.id, L.n_steps,
                L.n_steps == 1 ? "" : "s");
        lesson_free(&L);
        return -1;
    }
    struct settings s;
    source_step_settings(&L, o->step, &s);
    for (int i = 0; i < o->n_over; i++)
        if (settings_set(&s, o->over[i].name, o->over[i].value, e) < 0) {
            err_prefix(e, "--%s", o->over[i].name);
            lesson_free(&L);
            return -1;
        }
    int *ctx = NULL, len = 0;
    struct trace t;
    rc = source_lesson_context(&L, o->step, &ctx, &len, e);
    if (rc == 0)
        rc = trace_init(&t, L.vocab.n, e);
    if (rc == 0) {
        rc = source_run_step(&L, o->step, &s, ctx, len, &t, e);
        if (rc == 0) {
            int *next = malloc((size_t)(len + 1) * sizeof *next);
            if (!next) {
                rc = err_set(e, ERR_SYSTEM, "out of memory");
            } else {
                if (len)
                    memcpy(next, ctx, (size_t)len * sizeof *next);
                next[len] = t.choice.id;
                struct report r = {
                    .lesson = &L,
                    .step = o->step,
                    .settings = &s,
                    .context = ctx,
                    .context_len = len,
                    .prompt_len = L.prompt_len,
                    .trace = &t,
                    .stop = stop_check(&s, &L.vocab, next, len + 1, L.prompt_len),
                    .top = o->top,
                };
                rc = report_write(stdout, o->format, &r, e);
                free(next);
            }
        }
        trace_free(&t);
    }
    free(ctx);
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
    if (app_init(a, o->lessons_dir, o->lesson, o->n_over, names, values, e) < 0)
        return -1;
    if (o->step > 1 && app_start_step(a, o->step, e) < 0) {
        app_free(a);
        return -1;
    }
    return 0;
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
    struct screen s;
    int utf8 = !o->ascii && term_locale_utf8();
    int rc = screen_init(&s, o->width, o->height, utf8);
    for (int i = 0; rc == 0 && i < n; i++) {
        if (events[i].key == AK_RESIZE) {
            screen_free(&s);
            rc = screen_init(&s, events[i].w, events[i].h, utf8);
        }
        /* As if drawn after every key: scrolling knows how much text there is. */
        view_measure(&a, s.w, s.h, &a.scroll_page, &a.scroll_max);
        if (app_key(&a, events[i].key) & APP_QUIT)
            break;
    }
    if (rc < 0) {
        app_free(&a);
        return err_set(e, ERR_SYSTEM, "out of memory for the screen");
    }
    view_render(&a, &s);
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
    term_install_signals();
    if (term_open(!o->no_color, e) < 0) {
        app_free(&a);
        return -1;
    }
    int utf8 = !o->ascii && term_locale_utf8();
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
            view_render(&a, &s);
            term_present(&s);
            view_measure(&a, s.w, s.h, &a.scroll_page, &a.scroll_max);
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
    if (rc == 0) {
        if (o.command && strcmp(o.command, "lessons") == 0) {
            rc = cmd_lessons(&o, &e);
        } else if (o.command) {
            rc = cmd_show(&o, o.lesson, &e);
        } else if (o.headless) {
            rc = cmd_headless(&o, &e);
        } else {
            rc = cmd_tui(&o, &e);
        }
    }
    if (rc < 0) {
        fprintf(stderr, "logitlab: %s\n", e.msg);
        return e.code ? e.code : ERR_USAGE;
    }
    return rc; /* 0, or 128 + the signal that ended the interactive view */
}
