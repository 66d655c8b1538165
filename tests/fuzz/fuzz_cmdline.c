/* libFuzzer harness: the ':' command line alone (app_command), on the toy
 * lessons, with no line length but the input's.
 *
 * The first byte of an input picks the lesson (bits 0 to 4: among the
 * lessons of FUZZ_LESSONS, default lessons/, whose ids start neither with
 * real- nor with trained-: those open a model, seconds, and
 * fuzz_command.c and fuzz_editor.c have them) and the screen (bits 6 and
 * 7: 80x24, 100x30, 120x40, 200x60; bit 5: ASCII glyphs). The rest is
 * lines, each handed whole to app_command as ':' hands it what was typed
 * (a NUL ends a command early, as it ends a C string). A line that opens
 * a lesson runs only when it names one of the toy lessons by its id;
 * "draws" runs up to 1,000 draws (more is the same loop, longer).
 *
 * After each command: the step's settings (and each batch request's) are
 * within the ranges sampling.def gives them and pass sampler_check; the
 * stop strings fit; the trace is the lesson's, with a kept token when the
 * step was computed; the message is shorter than its buffer, and valid
 * UTF-8 whenever the command was (no cut through a character); and the
 * screen drawn shows only characters a terminal shows. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "tui/app.h"
#include "tui/view.h"

#define FUZZ_HIDDEN    512 /* tests/suites.h's TEST_HIDDEN */
#define MAX_TOY        64
#define FUZZ_DRAWS_MAX 1000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int SIZES[4][2] = { { 80, 24 }, { 100, 30 }, { 120, 40 }, { 200, 60 } };

struct fuzz {
    struct catalog cat;
    char id[MAX_TOY][64]; /* the toy lessons' ids */
    int n_toy;
    struct app app;
    struct view_scratch *vs;
    struct screen screen[8]; /* each size, in UTF-8 and in ASCII */
};

static struct fuzz *fuzz_setup(void)
{
    struct fuzz *f = calloc(1, sizeof *f);
    struct err e;
    const char *dir = getenv("FUZZ_LESSONS");
    if (!f || catalog_open(&f->cat, dir ? dir : "lessons", &e) < 0 || !(f->vs = view_scratch_new()))
        abort();
    for (int i = 0; i < f->cat.n && f->n_toy < MAX_TOY; i++) {
        char id[64];
        if (lesson_peek_id(f->cat.files[i], id, &e) < 0)
            abort();
        if (strncmp(id, "real-", 5) != 0 && strncmp(id, "trained-", 8) != 0)
            snprintf(f->id[f->n_toy++], sizeof f->id[0], "%s", id);
    }
    struct app_options opt = { FUZZ_HIDDEN, NULL, NULL, NULL, NULL };
    if (f->n_toy == 0 || app_init(&f->app, f->cat.dir, f->id[0], NULL, &opt, &e) < 0) {
        fprintf(stderr, "fuzz_cmdline: no toy lesson opens (run from the top of the tree)\n");
        abort();
    }
    for (int i = 0; i < 8; i++)
        if (screen_init(&f->screen[i], SIZES[i % 4][0], SIZES[i % 4][1], i < 4) < 0)
            abort();
    return f;
}

/* 1 if s is valid UTF-8. */
static int valid_utf8(const char *s)
{
    size_t len = strlen(s);
    while (len > 0) {
        uint32_t cp;
        int l = utf8_decode(s, len, &cp);
        if (l <= 0)
            return 0;
        s += l;
        len -= (size_t)l;
    }
    return 1;
}

/* Every cell is something a terminal shows (fuzz_command.c's rule). */
__attribute__((no_sanitize("coverage", "address"))) static void check_screen(const struct screen *s)
{
    for (int k = 0; k < s->w * s->h; k++) {
        uint32_t cp = s->cells[k].cp;
        if (cp - 0x20 < 0x5F)
            continue;
        if ((cp > 0 && cp < 0x20) || (cp >= 0x7F && cp < 0xA0) || (cp >= 0xD800 && cp < 0xE000) ||
            cp > 0x10FFFF || s->cells[k].color >= COL_COUNT)
            abort();
    }
}

/* Every numeric setting in its range, the sampler's check passed, the
 * stop strings within their room. */
static void check_settings(const struct settings *s)
{
    struct err e;
    for (const struct setting_info *i = SETTINGS_INFO; i->name; i++) {
        if (i->kind != SK_DOUBLE && i->kind != SK_INT && i->kind != SK_ENUM)
            continue;
        double v = setting_get(s, i);
        if (!(v >= i->lo && v <= i->hi) || ((i->flags & SET_LO_OPEN) && v == i->lo))
            abort();
    }
    if (sampler_check(&s->sampler, &e) < 0 || s->n_stop < 0 || s->n_stop > STOP_MAX)
        abort();
    for (int k = 0; k < s->n_stop; k++)
        if (!memchr(s->stop[k], '\0', sizeof s->stop[k]))
            abort();
}

/* After a command: the invariants of the header. */
static void check_app(struct fuzz *f, struct app *a, const char *line, struct screen *s)
{
    if (!memchr(a->msg, '\0', sizeof a->msg) || (valid_utf8(line) && !valid_utf8(a->msg)))
        abort();
    check_settings(&a->cur);
    for (int r = 0; a->batch_on && r < a->batch.n; r++)
        check_settings(&a->batch.row[r].set);
    if (a->t.vocab_size != a->L.vocab.n || (a->step_ok && a->t.kept_count < 1))
        abort();
    view_render(a, s, f->vs);
    check_screen(s);
    if (a->mode != MODE_NORMAL)
        a->mode = MODE_NORMAL; /* :help */
}

/* Whether line may run: a lesson only by a toy lesson's id, at most
 * FUZZ_DRAWS_MAX draws. The name and value as app_command reads them. */
static int allowed(const struct fuzz *f, const char *line)
{
    char name[48] = "";
    int off = 0;
    while (*line == ' ' || *line == ':')
        line++;
    if (sscanf(line, "%47s %n", name, &off) < 1)
        return 1;
    const char *value = off ? line + off : "";
    size_t vl = strlen(value);
    while (vl > 0 && value[vl - 1] == ' ')
        vl--;
    if (strcmp(name, "draws") == 0)
        return strtol(value, NULL, 10) <= FUZZ_DRAWS_MAX;
    if (strcmp(name, "lesson") != 0)
        return 1;
    for (int i = 0; i < f->n_toy; i++)
        if (strlen(f->id[i]) == vl && memcmp(f->id[i], value, vl) == 0)
            return 1;
    return 0;
}

/* Back at the picked lesson's step 1 with its own settings. */
static void fresh(struct fuzz *f, struct app *a, int lesson)
{
    struct err e;
    if (strcmp(a->L.id, f->id[lesson]) != 0) {
        char cmd[96];
        snprintf(cmd, sizeof cmd, "lesson %s", f->id[lesson]);
        app_command(a, cmd);
        if (strcmp(a->L.id, f->id[lesson]) != 0)
            abort();
    }
    if (a->batch_on) {
        batch_free(&a->batch);
        a->batch_on = 0;
    }
    a->mode = MODE_NORMAL;
    a->draws_on = 0;
    a->find_id = -1;
    settings_patch_clear(&a->live);
    a->try_index = -1;
    a->scroll = 0;
    if (app_start_step(a, 1, &e) < 0)
        abort();
    a->msg[0] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fuzz *f;
    if (!f)
        f = fuzz_setup();
    if (size == 0)
        return 0;
    struct app *a = &f->app;
    fresh(f, a, (data[0] & 31) % f->n_toy);
    struct screen *s = &f->screen[(data[0] >> 6) + ((data[0] & 32) ? 4 : 0)];
    char *line = malloc(size);
    if (!line)
        abort();
    for (size_t at = 1; at < size;) {
        size_t n = 0;
        while (at < size && data[at] != '\n')
            line[n++] = (char)data[at++];
        line[n] = '\0';
        at++;
        if (!allowed(f, line))
            continue;
        a->msg[0] = '\0'; /* as the input line clears it for the command (app_submit_input) */
        if (app_command(a, line) & APP_QUIT)
            break;
        check_app(f, a, line, s);
    }
    free(line);
    return 0;
}
