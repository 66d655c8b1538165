/* bench_ui.c - what one keystroke costs in the interactive view: the key,
 * the recomputation of the step, and the drawing of the whole screen into
 * its buffer (what term.c then hands to ncurses). Prints medians. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "screen.h"
#include "term.h"
#include "view.h"

#define ROUNDS 2001
#define FRAME_US 16667.0 /* one frame at 60 Hz */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static void bench(const char *lesson, int w, int h)
{
    struct app *a = calloc(1, sizeof *a);
    struct err e;
    if (!a || app_init(a, "lessons", lesson, 0, NULL, NULL, &e) < 0) {
        fprintf(stderr, "bench: %s\n", a ? e.msg : "out of memory");
        exit(1);
    }
    struct screen s;
    if (screen_init(&s, w, h, 1) < 0)
        exit(1);
    static double key_us[ROUNDS], draw_us[ROUNDS], out_us[ROUNDS], total_us[ROUNDS];
    app_command(a, "temperature 1");
    for (int i = 0; i < ROUNDS; i++) {
        double t0 = now_us();
        app_key(a, (i & 1) ? 'T' : 't'); /* temperature up and down: a recomputation each time */
        double t1 = now_us();
        view_render(a, &s);
        double t2 = now_us();
        term_present(&s); /* ncurses works out and writes the changes (to /dev/null here) */
        double t3 = now_us();
        key_us[i] = t1 - t0;
        draw_us[i] = t2 - t1;
        out_us[i] = t3 - t2;
        total_us[i] = t3 - t0;
    }
    double k = median(key_us, ROUNDS), d = median(draw_us, ROUNDS), o = median(out_us, ROUNDS);
    double t = median(total_us, ROUNDS);
    printf("%-12s %4dx%-3d  key+recompute %6.1f us  view %6.1f us  ncurses %6.1f us  "
           "total %6.1f us  (%.3f of a 60 Hz frame)\n",
           lesson, w, h, k, d, o, t, t / FRAME_US);
    screen_free(&s);
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
    if (!out || !in || term_open_stream("xterm-256color", out, in, 1, &e) < 0) {
        fprintf(stderr, "bench: cannot start curses on /dev/null\n");
        exit(1);
    }
}

int main(void)
{
    static const struct {
        const char *lesson;
        int w, h;
    } CASES[] = { { "toy", 80, 24 }, { "toy", 132, 43 }, { "penalty", 80, 24 }, { "top-p", 200, 60 } };
    printf("keystroke: recompute and redraw, medians of %d keystrokes\n", ROUNDS);
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        open_terminal(CASES[i].w, CASES[i].h);
        bench(CASES[i].lesson, CASES[i].w, CASES[i].h);
        term_close();
    }
    return 0;
}
