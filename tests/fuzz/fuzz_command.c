/* libFuzzer harness: the ':' prompt and the keys, on every lesson, drawn.
 *
 * The first byte of an input picks the lesson (bits 3 to 7: values 0 to 27
 * among the toy lessons of FUZZ_LESSONS, default lessons/, 28 to 31 among
 * its full-size ones, real-*), the screen size (bits 0 and 1: 80x24,
 * 120x40, 40x12 below the minimum, 200x60) and UTF-8 or ASCII glyphs (bit
 * 2). The rest is lines: a line is a ':' command, a line that starts with
 * '!' is keys (see key_of). The keys go in as the headless mode plays them
 * (the screen measured before each, so that scrolling knows how much text
 * there is), and the screen is drawn after every line, before the line's
 * end closes an open prompt, help or answer: any state a key reaches is the
 * end of a line in some input, so every screen is drawn without paying for
 * a drawing per key (most of a run's time). Every cell drawn must be a
 * character a terminal shows, never a control.
 *
 * Opening a lesson is the costly part (a full-size lesson builds a head of
 * 128,256 x 512, the hidden size the sanitized tests use: 2 to 4 s under
 * the sanitizers), so each lesson's app is opened the first time an input
 * picks it and kept for the whole process; every input starts it again
 * from step 1 with the lesson's own settings. A full-size step on a new
 * context costs a product of the head (0.6 to 1.2 s here), so on those
 * lessons an input stays on step 1's context (no key or command that takes
 * a step or moves: allowed, press), whose logits the source keeps, and is
 * cut after FUZZ_REAL_ACTIONS commands and keys. FUZZ_TOY=1 in the
 * environment maps every first byte onto the toy lessons, for the long runs
 * (a full-size input costs about a second). The apps have no
 * backend, so the batch view (eight products a step, 7 s to open) only
 * says that it needs one: its drawing is check_backend.c's test. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "tui/view.h"

#define FUZZ_HIDDEN       512 /* tests/suites.h's TEST_HIDDEN: a size every scenario fits */
#define FUZZ_LESSONS      64
#define FUZZ_REAL_ACTIONS 16
#define FUZZ_LINE_MAX     128 /* bytes of one line of an input: a command or a run of keys */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct opened {
    struct app *app; /* NULL until an input picks the lesson */
    char id[64];     /* the lesson it must stay on */
    int real;        /* a full-size lesson (its id starts with real-) */
};

struct fuzz {
    struct catalog cat;
    struct opened lesson[FUZZ_LESSONS];
    int n_toy, n_real;
    int toy[FUZZ_LESSONS], real[FUZZ_LESSONS]; /* indexes into cat.files */
    struct view_scratch *vs;
    struct screen screen[8]; /* each size, in UTF-8 and in ASCII */
};

static const int SIZES[4][2] = { { 80, 24 }, { 120, 40 }, { 40, 12 }, { 200, 60 } };

static struct fuzz *fuzz_setup(void)
{
    struct fuzz *f = calloc(1, sizeof *f);
    struct err e;
    const char *dir = getenv("FUZZ_LESSONS");
    if (!f || catalog_open(&f->cat, dir ? dir : "lessons", &e) < 0 || f->cat.n == 0 ||
        !(f->vs = view_scratch_new())) {
        fprintf(stderr, "fuzz_command: no lessons (run from the top of the source tree)\n");
        abort();
    }
    for (int i = 0; i < f->cat.n && i < FUZZ_LESSONS; i++) {
        struct opened *o = &f->lesson[i];
        if (lesson_peek_id(f->cat.files[i], o->id, &e) < 0) {
            fprintf(stderr, "fuzz_command: %s\n", e.msg);
            abort();
        }
        o->real = strncmp(o->id, "real-", 5) == 0;
        if (o->real)
            f->real[f->n_real++] = i;
        else
            f->toy[f->n_toy++] = i;
    }
    for (int i = 0; i < 8; i++)
        if (screen_init(&f->screen[i], SIZES[i % 4][0], SIZES[i % 4][1], i < 4) < 0)
            abort();
    return f;
}

/* The app of lesson i, opened on first use with the harness's options. */
static struct opened *lesson_app(struct fuzz *f, int i)
{
    struct opened *o = &f->lesson[i];
    if (o->app)
        return o;
    struct err e;
    struct app_options opt = { FUZZ_HIDDEN, NULL, NULL, NULL, NULL };
    if (!(o->app = malloc(sizeof *o->app)) ||
        app_init(o->app, f->cat.dir, f->cat.files[i], NULL, &opt, &e) < 0) {
        fprintf(stderr, "fuzz_command: %s\n", e.msg);
        abort();
    }
    if (strcmp(o->app->L.id, o->id) != 0)
        abort();
    return o;
}

/* Back to the state app_init left, without the cost of opening the lesson:
 * no batch view, no many draws, no token found, the lesson's own settings,
 * step 1 with nothing taken. A key or command that went to another lesson
 * (the net under the filters below) opens this one again. */
static void fresh(struct fuzz *f, struct opened *o, int i)
{
    struct app *a = o->app;
    struct err e;
    if (strcmp(a->L.id, o->id) != 0) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "lesson %s", f->cat.files[i]);
        app_command(a, cmd);
        if (strcmp(a->L.id, o->id) != 0)
            abort();
    }
    if (a->batch_on) {
        batch_free(&a->batch);
        a->batch_on = 0;
    }
    a->mode = MODE_NORMAL;
    a->input_len = 0;
    a->input[0] = '\0';
    a->draws_on = 0;
    a->find_id = -1;
    settings_patch_clear(&a->live);
    a->try_index = -1;
    a->scroll = 0;
    if (app_start_step(a, 1, &e) < 0)
        abort();
    a->msg[0] = '\0';
}

/* Every cell is something a terminal shows: no C0 or C1 control, no DEL,
 * no surrogate, nothing past U+10FFFF (0 is the right half of a wide
 * character). A check, not code under test: left out of the coverage
 * tracing and of ASan's checks (the cells are the screen's own), which
 * would cost more than the drawing. */
__attribute__((no_sanitize("coverage", "address"))) static void check_screen(const struct screen *s)
{
    for (int k = 0; k < s->w * s->h; k++) {
        uint32_t cp = s->cells[k].cp;
        if (cp - 0x20 < 0x5F)
            continue; /* printable ASCII, the common case */
        if ((cp > 0 && cp < 0x20) || (cp >= 0x7F && cp < 0xA0) || (cp >= 0xD800 && cp < 0xE000) ||
            cp > 0x10FFFF || s->cells[k].color >= COL_COUNT)
            abort();
    }
}

/* Draws the app as the terminal loop does after a change. */
static void draw(struct fuzz *f, struct app *a, const struct screen *s)
{
    view_render(a, (struct screen *)s, f->vs);
    check_screen(s);
    view_measure(a, s->w, s->h, &a->scroll_page, &a->scroll_max, f->vs);
}

/* The key a byte of a '!' line stands for: 0x01-0x0C the special keys
 * (Left ... Tab, 0x09 Enter), 0x1B Esc, 0x0D a resize, bytes from 0x80 the
 * code point of that value (C1 controls included), 0xFE and 0xFF a wide
 * and an astral character; the rest themselves. */
static int key_of(uint8_t b)
{
    if (b >= 0x01 && b <= 0x0C)
        return AK_LEFT + (b - 0x01);
    if (b == 0x0D)
        return AK_RESIZE;
    if (b == 0x1B)
        return AK_ESC;
    if (b == 0xFE)
        return 0x4E2D;
    if (b == 0xFF)
        return 0x1F600;
    return b;
}

/* Whether a command may run: none that opens another lesson (each lesson is
 * another input's, opened once), and on a full-size lesson none that moves
 * to another context (:step, :take: a product of the head each). */
static int allowed(const struct opened *o, const char *line)
{
    if (strstr(line, "lesson"))
        return 0;
    if (!o->real)
        return 1;
    while (*line == ' ' || *line == ':')
        line++;
    return strncmp(line, "step", 4) != 0 && strncmp(line, "take", 4) != 0;
}

/* One key as the terminal hands it over, with allowed's rules: in the
 * normal mode no n or N, and on a full-size lesson no key that moves to
 * another context (Space, Enter, w, Left, Right, Home); a command typed
 * at the ':' prompt is checked when Enter sends it. Returns app_key's
 * flags. */
static int press(const struct opened *o, struct app *a, int key)
{
    if (a->mode == MODE_NORMAL && (key == 'n' || key == 'N'))
        return 0;
    if (a->mode == MODE_NORMAL && o->real &&
        (key == ' ' || key == AK_ENTER || key == 'w' || key == AK_LEFT || key == AK_RIGHT ||
         key == AK_HOME))
        return 0;
    if (a->mode == MODE_PROMPT && key == AK_ENTER && !allowed(o, a->input))
        key = AK_ESC;
    return app_key(a, key);
}

/* The lesson the first byte picks (the header), or -1 when the directory
 * has none of that kind. */
static int pick(const struct fuzz *f, uint8_t b)
{
    int v = b >> 3;
    if (v < 28 || getenv("FUZZ_TOY"))
        return f->n_toy ? f->toy[v % f->n_toy] : -1;
    return f->n_real ? f->real[(v - 28) % f->n_real] : -1;
}

/* Runs the lines of an input on a, drawing after each line. */
static void play(struct fuzz *f, const struct opened *o, const uint8_t *data, size_t size,
                 int shape, int budget)
{
    struct app *a = o->app;
    char line[FUZZ_LINE_MAX];
    int quit = 0;
    for (size_t at = 0; at < size && !quit && budget > 0;) {
        size_t n = 0;
        while (at < size && data[at] != '\n' && n < sizeof line - 1)
            line[n++] = (char)data[at++];
        line[n] = '\0';
        at++;
        if (line[0] == '!') {
            for (size_t k = 1; k < n && !quit && budget-- > 0; k++) {
                int key = key_of((uint8_t)line[k]);
                if (key == AK_RESIZE)
                    shape = (shape & 4) | ((shape + 1) & 3);
                const struct screen *s = &f->screen[shape];
                view_measure(a, s->w, s->h, &a->scroll_page, &a->scroll_max, f->vs);
                quit = press(o, a, key) & APP_QUIT;
            }
        } else if (allowed(o, line)) {
            budget--;
            quit = app_command(a, line) & APP_QUIT;
        }
        draw(f, a, &f->screen[shape]);
        if (a->mode != MODE_NORMAL && a->mode != MODE_TEXT) {
            press(o, a, AK_ESC);
            draw(f, a, &f->screen[shape]);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fuzz *f;
    if (!f)
        f = fuzz_setup();
    int i = size > 0 ? pick(f, data[0]) : -1;
    if (i < 0)
        return 0;
    int shape = (data[0] & 3) | ((data[0] & 4) ? 4 : 0);
    struct opened *o = lesson_app(f, i);
    struct app *a = o->app;
    fresh(f, o, i);
    draw(f, a, &f->screen[shape]);
    play(f, o, data + 1, size - 1, shape, o->real ? FUZZ_REAL_ACTIONS : INT_MAX);
    /* The step on screen is the lesson's: a row for every token, one kept. */
    if (a->t.vocab_size != a->L.vocab.n || a->t.kept_count < 1)
        abort();
    return 0;
}
