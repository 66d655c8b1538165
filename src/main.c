/* main.c - options, subcommands and wiring. The only place that prints a
 * fatal error and picks the exit status:
 *   0  success
 *   2  bad usage or bad input (an option, a lesson file, a step)
 *   3  a system failure (out of memory, a write error)
 */
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "backend/backend.h"
#include "data/catalog.h"
#include "cli.h"
#include "cmd_files.h"
#include "data/config.h"
#include "data/keys.h"
#include "tui/screen.h"
#include "tui/term.h"
#include "tui/view.h"
#include "tui/progress.h"
#include "base/err.h"
#include "data/lesson.h"
#include "data/lesson_model.h"
#include "data/npy.h"
#include "report/report.h"
#include "core/sampler.h"
#include "core/settings.h"
#include "source/path.h"
#include "source/source.h"
#include "core/draws.h"
#include "base/utf8.h"
#include "base/outfile.h"
#include "base/readfile.h"
#include "base/mapfault.h"
#include "base/vecpath.h"
#include "gguf/tokenizer.h"

#define HEADLESS_MAX_KEYS 4096

/* What every command runs with: the command line, the user's
 * configuration (read once in main() before anything else, only read after
 * that), and where the LM head and the batch run (--backend). */
struct session {
    const struct options *o;
    struct config config;
    struct backend backend;
    char config_warning[APP_MSG_MAX];  /* what was wrong with the file, or "" */
    struct model_request model;        /* --model and how its prompt is encoded */
    char *prompt_buf;                  /* --prompt-file's bytes (owned) */
    char prompt_from[ERR_MSG_MAX / 2]; /* "--prompt-file F", which names it in messages */
    struct progress_view progress;     /* how far a long job got (tui/progress.h) */
};
#define TUI_POLL_MS 250 /* how often the loop looks at the stop flag */

/* A write error on the command's output (path, or NULL for standard
 * output), with the reason errno gives. */
static int write_failed(const char *path, struct err *e)
{
    int why = errno;
    return err_set(e, ERR_SYSTEM, "%s: %s", path ? path : "standard output",
                   why ? strerror(why) : "write error");
}

static void close_lesson(struct lesson *L, struct source *src)
{
    source_close(src);
    lesson_free(L);
}

/* Loads the lesson of the command line (an id, a file, or --logits FILE.npy)
 * and makes it ready to run, ranking at least the rows --top asks for. */
static int load_lesson(struct session *ss, const char *what, struct lesson *L, struct source *src,
                       struct err *e)
{
    const struct options *o = ss->o;
    int rows = o->top > SOURCE_FAST_ROWS ? o->top : SOURCE_FAST_ROWS;
    if (rows > SOURCE_MAX_ROWS)
        rows = SOURCE_MAX_ROWS;
    struct catalog cat;
    if (catalog_open(&cat, o->lessons_dir, e) < 0)
        return -1;
    int rc = catalog_load_any(&cat, o->logits ? o->logits : what, o->vocab,
                              o->model ? &ss->model : NULL, L, e);
    catalog_close(&cat);
    if (rc < 0)
        return -1;
    char warning[LESSON_MODEL_WARNING];
    if (lesson_model_warning(L, warning, sizeof warning))
        cmd_say("warning: ", warning, "");
    if (source_open_progress(src, L, &ss->config, o->hidden, rows,
                             &(struct model_progress){ progress_show, &ss->progress }, e) < 0) {
        lesson_free(L);
        return -1;
    }
    if (source_use_backend(src, &ss->backend, e) < 0)
        return close_lesson(L, src), -1;
    return 0;
}

/* The settings of step k with the command line's on top. */
static int step_settings(const struct options *o, const struct source *src, int k,
                         struct settings *s, struct err *e)
{
    source_step_settings(src, k, s);
    if (settings_patch_apply(s, &o->over, e) < 0)
        return err_prefix(e, "--stop"), -1; /* the one that can add up too far */
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

/* --save-logits: the step's logits as float32 .npy into lf, which the
 * caller opened before the run and keeps only when all of it succeeded. */
static int save_logits(const struct options *o, const struct source *src, struct outfile *lf,
                       struct err *e)
{
    const float *row = source_last_logits_f(src, o->step);
    if (!row)
        return err_set(e, ERR_USAGE, "--save-logits: this step has no float logits");
    return npy_write(lf->f, row, 1, src->L->vocab.n, e);
}

/* Opens -o and --save-logits before anything runs, so that a file that
 * cannot be written stops the command first. */
static int open_outputs(const struct options *o, struct outfile *of, struct outfile *lf,
                        struct err *e)
{
    if (outfile_open(of, o->output, o->force, e) < 0)
        return -1;
    if (o->save_logits && outfile_open(lf, o->save_logits, o->force, e) < 0) {
        err_prefix(e, "--save-logits");
        outfile_close(of, 0, NULL);
        return -1;
    }
    return 0;
}

static int cmd_show(struct session *ss, const char *what, struct err *e)
{
    const struct options *o = ss->o;
    struct lesson L;
    struct source src;
    if (load_lesson(ss, what, &L, &src, e) < 0)
        return -1;
    if (o->step > L.n_steps) {
        err_set(e, ERR_USAGE, "--step %d: lesson '%s' has %d step%s", o->step, L.id, L.n_steps,
                L.n_steps == 1 ? "" : "s");
        close_lesson(&L, &src);
        return -1;
    }
    int fast = source_is_fast(&src);
    /* A toy step lists every token already: nothing to find. */
    if (!fast && o->n_find) {
        err_set(e, ERR_USAGE, "--find goes with a full-size lesson (real-france, ...) or --logits");
        close_lesson(&L, &src);
        return -1;
    }
    struct settings s;
    int found[CLI_MAX_FIND];
    struct outfile of, lf;
    if (step_settings(o, &src, o->step, &s, e) < 0 || find_ids(o, &L, found, e) < 0 ||
        open_outputs(o, &of, &lf, e) < 0) {
        close_lesson(&L, &src);
        return -1;
    }
    int *ctx = NULL, len = 0, rc;
    struct trace t;
    rc = source_lesson_context(&src, o->step, &ctx, &len, e);
    if (rc == 0)
        rc = trace_init(&t, L.vocab.n, e);
    if (rc == 0) {
        rc = source_run_step(&src, o->step, &s, ctx, len, &t, e);
        if (rc == 0 && o->save_logits)
            rc = save_logits(o, &src, &lf, e);
        struct draws_hist hist;
        struct draws draws;
        int with_hist = fast && L.vocab.n >= 1000; /* a few tokens are all in the table */
        if (rc == 0 && with_hist)
            draws_histogram(&t, 16, &hist);
        if (rc == 0 && o->draws) {
            /* A toy step's draws read its rows, as the TUI's do (app.c). */
            int rows = o->top > 0 ? o->top : REPORT_FAST_TOP;
            uint32_t step = source_draw_step(&L, len);
            rc = fast ? draws_run(&t, s.sampler.seed, step, o->draws, rows, &draws, e)
                      : draws_run_rows(&t, s.sampler.seed, step, o->draws, rows, &draws, e);
        }
        struct report r = {
            .lesson = &L,
            .source = &src,
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
            rc = stop_after(&s, &L.vocab, ctx, len, L.prompt_len, t.choice.id, &r.stop, e);
        if (rc == 0)
            rc = report_write(of.f, o->format, &r, e);
        trace_free(&t);
    }
    /* Both files or neither: a failed run leaves no new file. */
    if (o->save_logits && outfile_close(&lf, rc == 0, e) < 0)
        rc = -1;
    if (outfile_close(&of, rc == 0, rc == 0 ? e : NULL) < 0)
        rc = -1;
    free(ctx);
    close_lesson(&L, &src);
    return rc;
}

/* The loop: each step's settings (the command line's over the lesson's),
 * the sampler, the token appended, the text streamed (text format), until a
 * stop rule fires or the lesson's steps run out. s gets the last step's. */
static int run_loop(const struct options *o, struct source *src, struct gen *g, struct trace *t,
                    struct settings *s, FILE *out, struct gen_steps *rec, struct err *e)
{
    for (int k = 1; k <= src->L->n_steps; k++) {
        if (step_settings(o, src, k, s, e) < 0 ||
            source_run_step(src, k, s, g->ids, g->len, t, e) < 0 ||
            gen_append(g, t->choice.id, s, e) < 0 || gen_steps_add(rec, t, e) < 0)
            return -1;
        if (o->format == REPORT_TEXT && gen_stream(g, out, 0) < 0)
            return write_failed(o->output, e);
        if (g->stop.rule != STOP_NONE)
            break;
    }
    if (o->format == REPORT_TEXT && gen_stream(g, out, 1) < 0)
        return write_failed(o->output, e);
    return 0;
}

/* A model computes any step, so its run goes as far as --max-tokens (the
 * command line's, or the lesson's) asks, past the lesson's own steps. */
static int grow_to_max_tokens(const struct options *o, struct source *src, struct lesson *L,
                              struct err *e)
{
    struct settings s;
    if (!L->model.gguf || step_settings(o, src, 1, &s, e) < 0)
        return 0; /* a bad setting is reported by the loop, at its step */
    return s.max_tokens > L->n_steps ? lesson_model_grow(L, s.max_tokens, e) : 0;
}

/* generate: the loop run from the prompt, reported in the format asked for
 * (text streams as it grows). */
static int cmd_generate(struct session *ss, const char *what, struct err *e)
{
    const struct options *o = ss->o;
    struct lesson L;
    struct source src;
    if (load_lesson(ss, what, &L, &src, e) < 0)
        return -1;
    if (grow_to_max_tokens(o, &src, &L, e) < 0) {
        close_lesson(&L, &src);
        return -1;
    }
    struct outfile of;
    struct trace t = { 0 };
    struct gen g = { 0 };
    struct settings s;
    struct gen_steps rec; /* each token's numbers, for JSON and Markdown */
    gen_steps_init(&rec, o->top);
    source_step_settings(&src, 1, &s);
    struct gen_report gr = { .lesson = &L, .settings = &s, .gen = &g, .steps = &rec };
    int rc = outfile_open(&of, o->output, o->force, e);
    int opened = rc == 0;
    if (rc == 0)
        rc = trace_init(&t, L.vocab.n, e);
    if (rc == 0)
        rc = gen_start(&g, &L.vocab, L.prompt, L.prompt_len, L.prompt_len, e);
    if (rc == 0)
        rc = report_gen_begin(of.f, o->format, &gr, e);
    if (rc == 0)
        rc = run_loop(o, &src, &g, &t, &s, of.f, &rec, e);
    if (rc == 0)
        rc = report_gen_end(of.f, o->format, &gr, e);
    if (rc < 0 && g.streamed > 0 && !of.path)
        putchar('\n'); /* the error goes on a line of its own */
    if (opened && outfile_close(&of, rc == 0, e) < 0)
        rc = -1;
    gen_free(&g), gen_steps_free(&rec), trace_free(&t);
    close_lesson(&L, &src);
    return rc;
}

/* export: every step of a lesson on its own path, as one Markdown document;
 * exercise steps as worksheets, their answers gathered for the end. The
 * path is walked once; the page shows each step with the command line's
 * settings over the lesson's. */
static int cmd_export(struct session *ss, const char *what, struct err *e)
{
    const struct options *o = ss->o;
    struct lesson L;
    struct source src;
    if (load_lesson(ss, what, &L, &src, e) < 0)
        return -1;
    struct outfile of;
    if (outfile_open(&of, o->output, o->force, e) < 0) {
        close_lesson(&L, &src);
        return -1;
    }
    char *answers = NULL;
    size_t answers_len = 0;
    FILE *ans = open_memstream(&answers, &answers_len);
    struct source_path path;
    struct trace t = { 0 };
    int rc = ans ? 0 : err_set(e, ERR_SYSTEM, "out of memory");
    if (rc == 0)
        rc = source_path_start(&path, &src, e);
    if (rc == 0 && (rc = trace_init(&t, L.vocab.n, e)) < 0)
        source_path_free(&path);
    if (rc == 0) {
        report_markdown_title(of.f, &L);
        for (int more = 1; rc == 0 && more;) {
            int k = path.step;
            struct settings s;
            rc = step_settings(o, &src, k, &s, e);
            if (rc == 0)
                rc = source_run_step(&src, k, &s, path.g.ids, path.g.len, &t, e);
            struct report r = { .lesson = &L,
                                .source = &src,
                                .step = k,
                                .settings = &s,
                                .context = path.g.ids,
                                .context_len = path.g.len,
                                .prompt_len = L.prompt_len,
                                .trace = &t,
                                .top = o->top,
                                .heading = 2 };
            if (rc == 0)
                rc = stop_after(&s, &L.vocab, path.g.ids, path.g.len, L.prompt_len, t.choice.id,
                                &r.stop, e);
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
    close_lesson(&L, &src);
    return rc;
}

/* Opens the app on the lesson, settings and step of the command line. */
static int open_app(struct session *ss, struct app *a, struct err *e)
{
    const struct options *o = ss->o;
    struct app_options opt = { o->hidden, o->vocab, &ss->config, &ss->backend,
                               o->model ? &ss->model : NULL };
    struct model_progress shown = { progress_show, &ss->progress };
    if (app_init_progress(a, o->lessons_dir, o->logits ? o->logits : o->lesson, &o->over, &opt,
                          &shown, e) < 0)
        return -1;
    if (o->step > 1 && app_start_step(a, o->step, e) < 0) {
        app_free(a);
        return -1;
    }
    a->big = o->big;             /* the first two panes; b goes on */
    if (ss->config_warning[0]) { /* the first thing on the screen says what was wrong */
        memcpy(a->msg, ss->config_warning, sizeof a->msg);
        a->msg_warn = 1;
    }
    return 0;
}

/* Box-drawing and blocks, unless --ascii, the config or the locale says no. */
static int want_utf8(const struct session *ss)
{
    return !ss->o->ascii && !ss->config.ascii && term_locale_utf8();
}

/* The app and its view's scratch, both large, on the heap; the app opened
 * on the command line's lesson. Returns 0, or -1 with nothing to free. */
static int open_view(struct session *ss, struct app **a, struct view_scratch **vs, struct err *e)
{
    *a = malloc(sizeof **a);
    *vs = view_scratch_new();
    int rc = *a && *vs ? open_app(ss, *a, e) : err_set(e, ERR_SYSTEM, "out of memory for the view");
    if (rc < 0) {
        free(*a);
        view_scratch_free(*vs);
        *a = NULL;
        *vs = NULL;
    }
    return rc;
}

static void close_view(struct app *a, struct view_scratch *vs)
{
    app_free(a);
    free(a);
    view_scratch_free(vs);
}

/* Hands the keys of --keys to the app, a screen of --size (or of a
 * <resize>) drawn after each as the terminal would. Returns 0 or -1. */
static int play_keys(struct session *ss, struct app *a, struct view_scratch *vs,
                     const struct key_event *events, int n, struct screen *s, struct err *e)
{
    int utf8 = want_utf8(ss);
    if (screen_init(s, ss->o->width, ss->o->height, utf8) < 0)
        return err_set(e, ERR_SYSTEM, "out of memory for the screen");
    for (int i = 0; i < n; i++) {
        if (events[i].key == AK_RESIZE) {
            screen_free(s);
            if (screen_init(s, events[i].w, events[i].h, utf8) < 0)
                return err_set(e, ERR_SYSTEM, "out of memory for the screen");
        }
        /* As if drawn after every key: scrolling knows how much text there is. */
        view_measure(a, s->w, s->h, &a->scroll_page, &a->scroll_max, vs);
        if (app_key(a, events[i].key) & APP_QUIT)
            break;
    }
    return 0;
}

/* Runs the interactive view without a terminal: the keys of --keys, then the
 * last screen printed as text, or with --format svg as a picture. */
static int cmd_headless(struct session *ss, struct err *e)
{
    const struct options *o = ss->o;
    struct key_event *events = malloc(HEADLESS_MAX_KEYS * sizeof *events);
    if (!events)
        return err_set(e, ERR_SYSTEM, "out of memory for the keys");
    int n = 0;
    if (o->keys && (n = keys_parse(o->keys, events, HEADLESS_MAX_KEYS, e)) < 0) {
        free(events);
        return err_prefix(e, "--keys"), -1;
    }
    struct app *a;
    struct view_scratch *vs;
    int rc = open_view(ss, &a, &vs, e);
    struct screen s = { 0 };
    if (rc == 0)
        rc = play_keys(ss, a, vs, events, n, &s, e);
    if (rc == 0) {
        s.picture = o->svg;
        view_render(a, &s, vs);
        if (o->svg) /* o->theme: the command line's (mono with --no-color, cli.c), else 0 */
            screen_write_svg(&s, term_palette(o->theme ? o->theme - 1u : ss->config.theme), stdout);
        else
            screen_dump(&s, stdout);
        if (fflush(stdout) != 0 || ferror(stdout))
            rc = write_failed(NULL, e);
    }
    screen_free(&s);
    if (a)
        close_view(a, vs);
    free(events);
    return rc;
}

/* The terminal loop: the screen redrawn after every change, keys handed to
 * the app, until it quits or a stop signal comes. Returns 0 or -1. */
static int run_terminal(struct session *ss, const struct term *t, struct app *a,
                        struct view_scratch *vs, struct err *e)
{
    int utf8 = want_utf8(ss), rc = 0, w = 0, h = 0, dirty = 1;
    struct screen s = { 0 };
    ss->progress.term = t; /* a lesson opened from the view shows its progress over s */
    ss->progress.screen = &s;
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
        /* Keys already waiting (a paste) go in before the next drawing. */
        int key = term_key(t, dirty ? 0 : TUI_POLL_MS);
        if (dirty && key == AK_NONE) {
            view_render(a, &s, vs);
            term_present(t, &s);
            view_measure(a, s.w, s.h, &a->scroll_page, &a->scroll_max, vs);
            dirty = 0;
            continue;
        }
        if (term_stop_signal())
            break;
        if (key == AK_NONE)
            continue;
        if (app_key(a, key) & APP_QUIT)
            break;
        dirty = 1;
    }
    ss->progress.term = NULL;
    ss->progress.screen = NULL;
    screen_free(&s);
    return rc;
}

/* The interactive view in the terminal. */
static int cmd_tui(struct session *ss, struct err *e)
{
    const struct options *o = ss->o;
    struct app *a;
    struct view_scratch *vs;
    if (open_view(ss, &a, &vs, e) < 0)
        return -1;
    term_install_signals();
    enum theme theme = o->theme ? (enum theme)(o->theme - 1) : ss->config.theme;
    if (o->no_color)
        theme = THEME_MONO;
    struct term t;
    int rc = term_open(&t, (int)theme, e);
    if (rc == 0) {
        rc = run_terminal(ss, &t, a, vs, e);
        term_close(&t);
    }
    close_view(a, vs);
    int sig = term_stop_signal();
    if (rc == 0 && sig)
        return 128 + sig; /* the shell's convention for "ended by a signal" */
    return rc;
}

/* Reads the user's configuration: a file named with --config must be
 * right; a mistake in the usual one is a warning, and the built-in
 * defaults are used. Returns 0 or -1. */
static int read_config(struct session *ss, struct err *e)
{
    const struct options *o = ss->o;
    if (o->no_config) {
        config_defaults(&ss->config);
        return 0;
    }
    struct err ce;
    if (config_load(&ss->config, o->config, &ce) == 0)
        return 0;
    if (o->config)
        return err_set(e, ERR_USAGE, "%s", ce.msg);
    cmd_say("warning: ", ce.msg, " (the built-in defaults are used)");
    snprintf(ss->config_warning, sizeof ss->config_warning, "%.200s (built-in defaults used)",
             ce.msg);
    return 0;
}

/* --prompt-file: the prompt's bytes, kept for the session. */
static int read_prompt(struct session *ss, struct err *e)
{
    size_t len;
    if (readfile(ss->o->prompt_file, TOK_MAX_TEXT, &ss->prompt_buf, &len, e) < 0)
        return err_prefix(e, "--prompt-file"), -1;
    if (strlen(ss->prompt_buf) != len)
        return err_set(e, ERR_USAGE, "--prompt-file: %s holds a NUL byte", ss->o->prompt_file);
    ss->model.prompt = ss->prompt_buf;
    snprintf(ss->prompt_from, sizeof ss->prompt_from, "--prompt-file %s", ss->o->prompt_file);
    ss->model.prompt_from = ss->prompt_from;
    return 0;
}

/* Runs the command of the command line. */
static int run_command(struct session *ss, struct err *e)
{
    const struct options *o = ss->o;
    if (o->prompt_file && read_prompt(ss, e) < 0)
        return -1;
    if (o->command && strcmp(o->command, "lessons") == 0)
        return cmd_lessons(o, e);
    if (o->command && strcmp(o->command, "models") == 0)
        return cmd_models(e);
    if (o->command && strcmp(o->command, "tokenize") == 0) {
        const char *text = ss->model.prompt ? ss->model.prompt : o->prompt;
        return cmd_tokenize(o, text, strlen(text), e);
    }
    /* --logits is a .npy file whatever its name (catalog_load_any knows it
     * by its content): anything else, a lesson file or id included, is
     * refused here by name, as the .npy reader says, for the cost of a
     * header. */
    struct npy header = { 0 }; /* npy_free takes one never opened */
    if (o->logits && npy_open(&header, o->logits, e) < 0)
        return -1;
    npy_free(&header);
    if (backend_open(&ss->backend, (enum backend_choice)o->backend, e) < 0)
        return -1;
    int rc;
    if (o->command && strcmp(o->command, "export") == 0)
        rc = cmd_export(ss, o->lesson, e);
    else if (o->command && strcmp(o->command, "generate") == 0)
        rc = cmd_generate(ss, o->lesson, e);
    else if (o->command && !o->svg)
        rc = cmd_show(ss, o->lesson, e);
    else if (o->headless || o->svg) /* show --format svg: the view's first screen of the step */
        rc = cmd_headless(ss, e);
    else
        rc = cmd_tui(ss, e);
    backend_close(&ss->backend);
    return rc;
}

/* The last step of every command: what is still buffered for standard
 * output written and the stream closed, so that a write error (a full
 * disk, /dev/full) is never lost behind a status of 0. A reader that went
 * away (EPIPE) is not an error: it wanted no more. */
static int close_stdout(struct err *e)
{
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int why = errno;
    if (fclose(stdout) != 0 && !bad)
        bad = 1, why = errno;
    if (!bad || why == EPIPE)
        return 0;
    return err_set(e, ERR_SYSTEM, "standard output: %s", why ? strerror(why) : "write error");
}

/* After the options: help; else the vector path, then the version or a configured command. */
static int run_main(const struct options *o, struct err *e)
{
    if (o->action == CLI_HELP)
        return cmd_help(e);
    int path = vec_path_check(e); /* else the loops would take the best path quietly */
    if (path < 0)
        return -1;
    if (o->action == CLI_VERSION)
        return cmd_version(path);
    struct session ss = {
        .o = o, .model = { o->model, o->prompt, o->special, o->chat, progress_show, NULL }
    };
    ss.model.progress_arg = &ss.progress; /* one line for every long job */
    ss.model.prompt_from = o->prompt ? "--prompt" : NULL;
    int rc = read_config(&ss, e);
    if (rc == 0)
        rc = run_command(&ss, e);
    free(ss.prompt_buf);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o;
    struct err e = { 0, "" };
    setlocale(LC_ALL, ""); /* UTF-8 tokens and block characters when the locale has them */
    /* but numbers stay C's: files, options and JSON write 0.9, never 0,9 (strtod, printf) */
    setlocale(LC_NUMERIC, "C");
    /* A closed pipe ends the program quietly, as it ends cat, even when the
     * parent ignored SIGPIPE (`show | head -1` is not an error). */
    signal(SIGPIPE, SIG_DFL);
    mapfault_install(); /* a model file that shrinks under its mapping: one line, status 3 */
    int rc = cli_parse(argc, argv, &o, &e);
    if (rc == 0)
        rc = run_main(&o, &e);
    if (rc >= 0 && close_stdout(&e) < 0)
        rc = -1;
    if (rc < 0) {
        cmd_say("", e.msg, "");
        return e.code ? e.code : ERR_USAGE;
    }
    return rc; /* 0, or 128 + the signal that ended the interactive view */
}
