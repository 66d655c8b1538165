/* bench_ui.c - what one keystroke costs in the interactive view: the key,
 * the recomputation of the step, and the drawing of the whole screen into
 * its buffer (what term.c then hands to ncurses). Prints medians. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#include "tui/app.h"
#include "tui/screen.h"
#include "tui/term.h"
#include "tui/view.h"

#define ROUNDS   2001
#define FRAME_US 16667.0 /* one frame at 60 Hz */

/* The terminal ncurses draws on (for /dev/null). */
static struct term TERM;

static void bench(const char *lesson, int w, int h, const char *setup, int rounds)
{
    struct app *a = calloc(1, sizeof *a);
    struct err e;
    if (!a || app_init(a, "lessons", lesson, NULL, NULL, &e) < 0) {
        fprintf(stderr, "bench: %s\n", a ? e.msg : "out of memory");
        exit(1);
    }
    struct screen s;
    struct view_scratch *vs = view_scratch_new();
    if (!vs || screen_init(&s, w, h, 1) < 0)
        exit(1);
    static double key_us[ROUNDS], draw_us[ROUNDS], out_us[ROUNDS], total_us[ROUNDS];
    app_command(a, "temperature 1");
    if (setup)
        app_command(a, setup);
    for (int i = 0; i < rounds; i++) {
        double t0 = bench_now_us();
        app_key(a, (i & 1) ? 'T' : 't'); /* temperature up and down: a recomputation each time */
        double t1 = bench_now_us();
        view_render(a, &s, vs);
        double t2 = bench_now_us();
        term_present(&TERM, &s); /* ncurses works out and writes the changes (to /dev/null here) */
        double t3 = bench_now_us();
        key_us[i] = t1 - t0;
        draw_us[i] = t2 - t1;
        out_us[i] = t3 - t2;
        total_us[i] = t3 - t0;
    }
    double k = bench_median(key_us, rounds), d = bench_median(draw_us, rounds),
           o = bench_median(out_us, rounds);
    double t = bench_median(total_us, rounds);
    char name[64];
    snprintf(name, sizeof name, "%s%s%s", lesson, setup ? " +" : "", setup ? setup : "");
    printf("%-18s %4dx%-3d  key+recompute %6.1f us  view %6.1f us  ncurses %6.1f us  "
           "total %6.1f us  (%.3f of a 60 Hz frame)\n",
           name, w, h, k, d, o, t, t / FRAME_US);
    screen_free(&s);
    view_scratch_free(vs);
    app_free(a);
    free(a);
}

/* ncurses draws for a terminal of the size its LINES and COLUMNS say. */
static void open_terminal(int w, int h)
{
    char cols[16], lines[16];
    snprintf(cols, sizeof cols, "%d", w);
    snprintf(lines, sizeof lines, "%d", h);
    setenv("COLUMNS", cols, 1);
    setenv("LINES", lines, 1);
    FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
    struct err e;
    if (!out || !in || term_open_stream(&TERM, "xterm-256color", out, in, 1, &e) < 0) {
        fprintf(stderr, "bench: cannot start curses on /dev/null\n");
        exit(1);
    }
}

int main(void)
{
    static const struct {
        const char *lesson;
        int w, h;
        const char *setup;
        int rounds;
    } CASES[] = {
        { "toy", 80, 24, NULL, ROUNDS },
        { "toy", 132, 43, NULL, ROUNDS },
        { "penalty", 80, 24, NULL, ROUNDS },
        { "top-p", 200, 60, NULL, ROUNDS },
        /* Full size, 128,256 tokens: the O(V) sampler on the logits of the
         * step (the head's product is done once per context, not per key). */
        { "real-france", 132, 43, NULL, ROUNDS },
        { "real-story", 200, 60, "top-p 0.95", ROUNDS },
        { "real-story", 132, 43, "draws", 201 },
    };
    printf("keystroke: recompute and redraw, medians of %d keystrokes (201 with draws)\n", ROUNDS);
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        open_terminal(CASES[i].w, CASES[i].h);
        bench(CASES[i].lesson, CASES[i].w, CASES[i].h, CASES[i].setup, CASES[i].rounds);
        term_close(&TERM);
    }
    return 0;
}
