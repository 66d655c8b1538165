/* main.c - options, subcommands and wiring. The only place that prints a
 * fatal error and picks the exit status:
 *   0  success
 *   2  bad usage or bad input (an option, a lesson file, a step)
 *   3  a system failure (out of memory, a write error)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "err.h"
#include "lesson.h"
#include "report.h"
#include "sampler.h"
#include "settings.h"
#include "source.h"

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

int main(int argc, char **argv)
{
    struct options o;
    struct err e = { 0, "" };
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
        } else {
            /* Until the terminal UI exists, a bare lesson (or none) is shown as a table. */
            const char *what = o.lesson ? o.lesson : "lm-head";
            rc = cmd_show(&o, what, &e);
        }
    }
    if (rc < 0) {
        fprintf(stderr, "logitlab: %s\n", e.msg);
        return e.code ? e.code : ERR_USAGE;
    }
    return 0;
}
