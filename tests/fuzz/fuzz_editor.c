/* libFuzzer harness: the input line's editor (src/tui/app_input.c) and its
 * drawing (view.c's draw_input), key by key, in each of its three modes.
 *
 * The first byte of an input sets the scene. Bits 0 to 2, the line and
 * the lesson it is opened on: 0 ':' on toy, 1 '/' on toy, 2 'a' (an
 * answer, a number) on exercise-1, 3 'a' (a kept set) on exercise-2, 4 'e'
 * on trained-next (the line opens on "prompt " and the model's prompt), 5
 * ':' and 6 '/' on trained-next, 7 'S' on toy (the line opens on "seed ").
 * Bits 3 and 4: the screen's width at the start, of 80, 97, 120 and 211
 * columns (24 rows); bit 5: an ASCII screen; bits 6 and 7: the bytes the
 * line holds (a->input_limit): APP_INPUT_LIMIT, 16, 100 or 700, so that
 * inputs of a few kilobytes reach the refusal.
 *
 * The rest are keys: 0x00 Enter, 0x01 Backspace, 0x02 Esc, 0x03 a resize
 * (the next width), 0x04 to 0x07 Left, Right, Tab and Home (which the
 * line ignores), 0x0E and the next byte a surrogate (U+D800 + the byte),
 * 0x0F U+10FFFF, other bytes below 0x80 themselves (controls, which the
 * line ignores, and ASCII); from 0x80, a whole UTF-8 sequence is its code
 * point (C1 controls, bidirectional controls, combining marks, wide and
 * astral characters), and a byte that starts none is the code point of
 * its value (U+0080 to U+00FF).
 *
 * After every key the harness's own copy of what the line must hold (the
 * prefill, characters typed, whole characters erased) is compared with
 * the line byte for byte: the line stays valid UTF-8 and its length is
 * what was typed less what was erased; a key refused for the limit leaves
 * the line as it was and says so in the message line. The screen is drawn
 * after each resize and at the end: any state a key reaches is the end of
 * a shorter input, and drawing the whole screen (its lesson text wrapped,
 * its panes) after every key would cost most of a run. Every cell is a
 * character a terminal shows, the cursor is within the row, and the cells
 * between the sign (and the mark '…' or '<' that text is hidden to the
 * left) and the cursor are the end of the line as drawn. On Enter, what the command saw is checked
 * where it can be: '/' finds the token of exactly what was typed, and ":prompt TEXT" on
 * trained-next makes TEXT the model's prompt, byte for byte (a TEXT of up to PROMPT_RUN_MAX bytes,
 * PROMPT_RUNS_MAX times an input; past these, and on a line that names "lesson" or "draws", Enter
 * is Esc: slow, and other harnesses' work).
 *
 * The lessons come from FUZZ_LESSONS (default lessons/), run from the top
 * of the source tree; trained-next needs data/stories260K.gguf (`make`
 * builds it): without it, the scenes on trained-next are skipped, said
 * once on stderr. Each lesson is opened once and started again from step
 * 1 for every input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "tui/app.h"
#include "tui/view.h"

#define FUZZ_HIDDEN 512 /* tests/suites.h's TEST_HIDDEN */
#define N_SCENES    8
#define N_LESSONS   4
#define N_WIDTHS    4
#define ROWS        24
/* The longest prompt Enter runs on trained-next, and how many prompts an
 * input runs: the model reads a new prompt whole (0.3 to 0.4 s for 300
 * tokens under the sanitizers, 5 ms for a few), most of a run's time, so
 * past these the line is closed with Esc instead. 160 bytes is past where
 * the old line cut (120 of a prompt); check_app.c runs 607. */
#define PROMPT_RUN_MAX  160
#define PROMPT_RUNS_MAX 2

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { TOY, EX1, EX2, TRAINED };

static const char *const LESSON_ID[N_LESSONS] = { "toy", "exercise-1", "exercise-2",
                                                  "trained-next" };

/* Each scene: its lesson, the key that opens its line, the mode it opens. */
static const struct {
    int lesson, key;
    enum app_mode mode;
} SCENE[N_SCENES] = { { TOY, ':', MODE_PROMPT },     { TOY, '/', MODE_FIND },
                      { EX1, 'a', MODE_ANSWER },     { EX2, 'a', MODE_ANSWER },
                      { TRAINED, 'e', MODE_PROMPT }, { TRAINED, ':', MODE_PROMPT },
                      { TRAINED, '/', MODE_FIND },   { TOY, 'S', MODE_PROMPT } };

static const int WIDTHS[N_WIDTHS] = { 80, 97, 120, 211 };
static const int LIMITS[4] = { APP_INPUT_LIMIT, 16, 100, 700 };

struct fuzz {
    struct app app[N_LESSONS];
    int open[N_LESSONS];                /* 1: opened, -1: failed to open (its scenes are skipped) */
    char *prompt;                       /* trained-next's own prompt text */
    struct screen screen[2 * N_WIDTHS]; /* each width, in UTF-8 and in ASCII */
    struct view_scratch *vs;
};

/* What the line must hold, kept by the harness: a->input's model. */
struct shadow {
    char *text;
    size_t len, cap;
};

static struct fuzz *fuzz_setup(void)
{
    struct fuzz *f = calloc(1, sizeof *f);
    if (!f || !(f->vs = view_scratch_new()))
        abort();
    for (int i = 0; i < 2 * N_WIDTHS; i++)
        if (screen_init(&f->screen[i], WIDTHS[i % N_WIDTHS], ROWS, i < N_WIDTHS) < 0)
            abort();
    return f;
}

/* The app of lesson i, opened on first use; NULL when it does not open. */
static struct app *lesson_app(struct fuzz *f, int i)
{
    if (f->open[i])
        return f->open[i] > 0 ? &f->app[i] : NULL;
    const char *dir = getenv("FUZZ_LESSONS");
    struct app_options opt = { FUZZ_HIDDEN, NULL, NULL, NULL, NULL };
    struct err e;
    if (app_init(&f->app[i], dir ? dir : "lessons", LESSON_ID[i], NULL, &opt, &e) < 0) {
        if (i != TRAINED) {
            fprintf(stderr, "fuzz_editor: %s (run from the top of the source tree)\n", e.msg);
            abort();
        }
        fprintf(stderr, "fuzz_editor: %s: its scenes are skipped (make builds the model)\n", e.msg);
        f->open[i] = -1;
        return NULL;
    }
    f->open[i] = 1;
    if (i == TRAINED && !(f->prompt = strdup(f->app[i].L.prompt_text)))
        abort();
    return &f->app[i];
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

/* The cells s (len bytes) takes as the screen draws it (text_in in
 * screen.c, with the input line's escapes): into cells, at most max;
 * returns how many it takes in all. */
static size_t cells_of(const char *s, size_t len, int utf8, uint32_t *cells, size_t max)
{
    size_t n = 0;
    while (len > 0) {
        char piece[UTF8_ESC_MAX];
        size_t pn, used = utf8_escape_char(s, len, 0, piece, &pn);
        for (size_t k = 0; k < pn;) {
            uint32_t cp;
            int l = utf8_decode(piece + k, pn - k, &cp);
            if (l <= 0)
                abort(); /* an escape is ASCII, and what is not escaped is valid */
            k += (size_t)l;
            if (!utf8 && cp >= 0x80)
                cp = '?';
            int w = utf8_cp_width(cp);
            for (int c = 0; c < w; c++, n++)
                if (n < max)
                    cells[n] = c ? 0 : cp;
        }
        s += used;
        len -= used;
    }
    return n;
}

/* The bottom row as the input line: the sign, the mark when the line is
 * wider than the room, then the line's last cells up to the cursor. */
static void check_input_row(const struct app *a, const struct screen *s)
{
    const struct cell *row = &s->cells[(ROWS - 1) * s->w];
    int sign = a->mode == MODE_ANSWER ? 2 : 1, cursor = -1;
    for (int x = 0; x < s->w; x++)
        if (row[x].attr & ATTR_REVERSE)
            cursor = x;
    if (cursor < sign || cursor >= s->w || row[cursor].cp != ' ')
        abort();
    uint32_t *want = malloc(((size_t)a->input_len * 16 + 1) * sizeof *want);
    if (!want)
        abort();
    size_t n = cells_of(a->input, (size_t)a->input_len, s->utf8, want, (size_t)a->input_len * 16);
    int room = s->w - sign - 1, marked = (long)n > room;
    if (marked && row[sign].cp != (s->utf8 ? 0x2026 : '<'))
        abort();
    /* All of a line that fits; else as much of its end as fits after the
     * mark: the character left out is one that does not, at most 12
     * cells (U+202E escaped as \xE2\x80\xAE). */
    size_t shown = (size_t)(cursor - sign - marked);
    if (shown > n || (!marked && shown != n) || (marked && (long)shown + 12 <= room - 1))
        abort();
    for (size_t k = 0; k < shown; k++)
        if (row[sign + marked + (int)k].cp != want[n - shown + k])
            abort();
    free(want);
}

/* Draws a on screen s and checks it. */
static void draw(struct fuzz *f, struct app *a, struct screen *s)
{
    view_render(a, s, f->vs);
    check_screen(s);
    if (a->mode == MODE_PROMPT || a->mode == MODE_FIND || a->mode == MODE_ANSWER)
        check_input_row(a, s);
}

/* 1 if s (len bytes) is valid UTF-8. */
static int valid_utf8(const char *s, size_t len)
{
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

/* Room in sh for len bytes, 4 more and the terminator. */
static void shadow_room(struct shadow *sh, size_t len)
{
    if (len + 5 > sh->cap) {
        sh->cap = 2 * (len + 5);
        if (!(sh->text = realloc(sh->text, sh->cap)))
            abort();
    }
}

static void shadow_set(struct shadow *sh, const char *text, size_t len)
{
    shadow_room(sh, len);
    memcpy(sh->text, text, len);
    sh->len = len;
    sh->text[len] = '\0';
}

/* The line is the shadow, byte for byte, and valid UTF-8. */
static void check_line(const struct app *a, const struct shadow *sh)
{
    if ((size_t)a->input_len != sh->len || memcmp(a->input, sh->text, sh->len + 1) != 0 ||
        a->input_len > a->input_cap - 1 || !valid_utf8(a->input, sh->len))
        abort();
}

/* Opens the scene's line (again), starting the exercise over when it is
 * done; the shadow becomes what the line opened with. Returns 0, or -1
 * when the line does not open. */
static int open_line(struct app *a, int scene, struct shadow *sh)
{
    if (a->mode != MODE_NORMAL)
        a->mode = MODE_NORMAL; /* :help or an Esc'd answer: back to the step */
    struct err e;
    if (SCENE[scene].mode == MODE_ANSWER && !app_hidden(a) && app_start_step(a, 1, &e) < 0)
        abort();
    app_key(a, SCENE[scene].key);
    if (a->mode != SCENE[scene].mode)
        return -1;
    if (!valid_utf8(a->input, (size_t)a->input_len))
        abort();
    if (SCENE[scene].key == 'e' &&
        (strncmp(a->input, "prompt ", 7) != 0 || strcmp(a->input + 7, a->L.prompt_text) != 0))
        abort(); /* e opens on the whole prompt */
    shadow_set(sh, a->input, (size_t)a->input_len);
    return 0;
}

/* The value of ":prompt VALUE" as the command reads it, into out; 0 when
 * line is not that command. */
static int prompt_value(const char *line, struct shadow *out)
{
    while (*line == ' ' || *line == ':')
        line++;
    if (strncmp(line, "prompt", 6) != 0 || (line[6] && line[6] != ' '))
        return 0;
    line += 6;
    while (*line == ' ' || *line == '\t' || *line == '\n' || *line == '\v' || *line == '\f' ||
           *line == '\r')
        line++;
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == ' ')
        n--;
    shadow_set(out, line, n);
    return 1;
}

/* Enter: what the command saw, where the harness can tell. runs counts
 * the prompts run in this input. */
static void enter(struct app *a, int scene, const struct shadow *sh, struct shadow *tmp, int *runs)
{
    enum app_mode mode = a->mode;
    int is_prompt = mode == MODE_PROMPT && prompt_value(sh->text, tmp);
    if (mode == MODE_PROMPT &&
        (strstr(sh->text, "lesson") || strstr(sh->text, "draws") ||
         (is_prompt && (tmp->len > PROMPT_RUN_MAX || ++*runs > PROMPT_RUNS_MAX))))
        return; /* another lesson, many draws, a long prompt: another harness's, or slow */
    int before = a->find_id;
    app_key(a, AK_ENTER);
    /* '/' finds the token of all that was typed; one not found leaves the last found. */
    int id = sh->len ? vocab_lookup(&a->L.vocab, sh->text) : -1;
    if (mode == MODE_FIND && a->find_id != (id < 0 && sh->len ? before : id))
        abort();
    int tokens;
    if (is_prompt && SCENE[scene].lesson == TRAINED &&
        sscanf(a->msg, "prompt: %d tokens;", &tokens) == 1 &&
        (strcmp(a->L.prompt_text, tmp->text) != 0 || tokens != a->L.prompt_len))
        abort();
}

/* The key byte at data[*at] stands for (the header), or -1 for none. */
static int key_of(const uint8_t *data, size_t size, size_t *at)
{
    uint8_t b = data[(*at)++];
    static const int LOW[8] = { AK_ENTER, AK_BACKSPACE, AK_ESC, AK_RESIZE,
                                AK_LEFT,  AK_RIGHT,     AK_TAB, AK_HOME };
    if (b < 8)
        return LOW[b];
    if (b == 0x0E)
        return *at < size ? 0xD800 + data[(*at)++] : -1;
    if (b == 0x0F)
        return 0x10FFFF;
    if (b < 0x80)
        return b;
    uint32_t cp;
    int l = utf8_decode((const char *)data + *at - 1, size - (*at - 1), &cp);
    if (l > 0)
        *at += (size_t)l - 1;
    return l > 0 ? (int)cp : b;
}

/* The shadow after a key typed into the line, as the line must take it:
 * a character added when it is one and fits, whole characters erased. */
static void expect_key(const struct app *a, int key, struct shadow *sh)
{
    char buf[4];
    if (key == AK_BACKSPACE) {
        while (sh->len > 0 && ((unsigned char)sh->text[sh->len - 1] & 0xC0) == 0x80)
            sh->len--;
        if (sh->len > 0)
            sh->len--;
        sh->text[sh->len] = '\0';
        return;
    }
    if (key < 0x20 || key == 0x7F || key >= AK_SPECIAL)
        return;
    int n = utf8_encode((uint32_t)key, buf);
    if (n == 0 || sh->len + (size_t)n > (size_t)a->input_limit)
        return;
    shadow_room(sh, sh->len);
    memcpy(sh->text + sh->len, buf, (size_t)n);
    sh->len += (size_t)n;
    sh->text[sh->len] = '\0';
}

/* Starts lesson app a afresh for an input: step 1, nothing typed, the
 * lesson's own prompt. */
static void fresh(struct fuzz *f, struct app *a, int lesson, int limit)
{
    struct err e;
    if (a->batch_on) {
        batch_free(&a->batch);
        a->batch_on = 0;
    }
    a->mode = MODE_NORMAL;
    a->find_id = -1;
    a->draws_on = 0;
    a->try_index = -1;
    a->scroll = 0;
    settings_patch_clear(&a->live);
    a->input_len = 0;
    a->input[0] = '\0';
    a->input_limit = limit;
    if (lesson == TRAINED && strcmp(a->L.prompt_text, f->prompt) != 0) {
        char *cmd = malloc(strlen(f->prompt) + 8);
        if (!cmd)
            abort();
        sprintf(cmd, "prompt %s", f->prompt);
        app_command(a, cmd);
        free(cmd);
        if (strcmp(a->L.prompt_text, f->prompt) != 0)
            abort();
    }
    if (app_start_step(a, 1, &e) < 0)
        abort();
    a->msg[0] = '\0';
}

/* One key: typed, and the line compared with the shadow. */
static void play_key(struct app *a, int scene, int key, struct shadow *sh, struct shadow *tmp,
                     int *runs)
{
    if (key == AK_ENTER)
        enter(a, scene, sh, tmp, runs);
    else
        app_key(a, key);
    if (key == AK_ENTER || key == AK_ESC || a->mode != SCENE[scene].mode) {
        if (open_line(a, scene, sh) < 0)
            abort(); /* the scene's key opens its line on every step it reaches */
    } else {
        int was = (int)sh->len;
        expect_key(a, key, sh);
        int refused = key >= 0x20 && key < AK_SPECIAL && key != 0x7F && (int)sh->len == was;
        if (refused && !strstr(a->msg, "the input line holds") && !strstr(a->msg, "surrogate"))
            abort(); /* a key refused without a word */
    }
    check_line(a, sh);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fuzz *f;
    if (!f)
        f = fuzz_setup();
    if (size == 0)
        return 0;
    int scene = data[0] & 7, lesson = SCENE[scene].lesson, width = (data[0] >> 3) & 3;
    int ascii = (data[0] >> 5) & 1;
    struct app *a = lesson_app(f, lesson);
    if (!a)
        return 0;
    fresh(f, a, lesson, LIMITS[data[0] >> 6]);
    struct shadow sh = { NULL, 0, 0 }, tmp = { NULL, 0, 0 };
    int runs = 0;
    if (open_line(a, scene, &sh) < 0)
        abort(); /* each scene's line opens on a fresh lesson */
    for (size_t at = 1; at < size;) {
        int key = key_of(data, size, &at);
        if (key < 0)
            break;
        if (key == AK_RESIZE)
            width = (width + 1) % N_WIDTHS;
        play_key(a, scene, key, &sh, &tmp, &runs);
        if (key == AK_RESIZE)
            draw(f, a, &f->screen[width + (ascii ? N_WIDTHS : 0)]);
    }
    draw(f, a, &f->screen[width + (ascii ? N_WIDTHS : 0)]);
    free(sh.text);
    free(tmp.text);
    return 0;
}
