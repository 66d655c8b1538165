/* progress.c - the line that says how far a long job has got (progress.h). */
#include "tui/progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"

#define PROGRESS_EVERY_MS 100.0 /* at most ten lines a second */
#define PROGRESS_QUIET_MS 150.0 /* a job shorter than this leaves the screen alone */
#define PROGRESS_GUESS_MS 300.0 /* the time left is guessed from this much of the job on */
#define PROGRESS_BAR_MAX  40    /* cells of the bar on the screen */

/* A time as people read it: ms below a second, else seconds. */
static void say_time(double ms, char *buf, size_t n)
{
    if (ms < 1000.0)
        snprintf(buf, n, "%.0f ms", ms);
    else
        snprintf(buf, n, "%.1f s", ms / 1000.0);
}

void progress_line(const char *what, int done, int total, double elapsed_ms, char *buf, size_t n)
{
    char t[32];
    if (total <= 0 || done >= total) {
        say_time(elapsed_ms, t, sizeof t);
        snprintf(buf, n, "%s: 100%%, in %s", what, t);
        return;
    }
    int pct = done > 0 ? (int)((long long)done * 100 / total) : 0;
    if (done <= 0 || elapsed_ms < PROGRESS_GUESS_MS) {
        snprintf(buf, n, "%s: %d%%", what, pct);
        return;
    }
    double left = elapsed_ms * (double)(total - done) / (double)done;
    if (left < 1000.0)
        snprintf(buf, n, "%s: %d%%, under a second left", what, pct);
    else
        snprintf(buf, n, "%s: %d%%, about %.0f s left", what, pct, left / 1000.0);
}

/* Starts a new job when this call does not continue the one followed. */
static void follow(struct progress_view *pv, const char *what, int done, double now)
{
    int finished = pv->last_total > 0 && pv->last_done >= pv->last_total;
    if (done == 0 || finished || done < pv->last_done || strcmp(what, pv->what) != 0) {
        snprintf(pv->what, sizeof pv->what, "%s", what);
        pv->t0_ms = now;
        pv->shown_ms = -1.0;
    }
}

/* The line over the bottom row of the last frame, a bar after it. */
static void draw(const struct progress_view *pv, const char *line, int done, int total)
{
    struct screen *s = pv->screen;
    int y = s->h - 1;
    screen_fill(s, (struct rect){ 0, y, s->w, 1 }, ' ', COL_STATUS, 0);
    int x = 1 + screen_text(s, 1, y, s->w - 2, line, COL_STATUS, ATTR_BOLD);
    int room = s->w - x - 3 < PROGRESS_BAR_MAX ? s->w - x - 3 : PROGRESS_BAR_MAX;
    if (room >= 8)
        screen_bar(s, x + 2, y, (double)room * done / total, COL_KEPT, 0);
    term_present(pv->term, s);
}

void progress_show(void *arg, const char *what, int done, int total)
{
    struct progress_view *pv = arg;
    double now = clock_ms();
    follow(pv, what, done, now);
    pv->last_done = done;
    pv->last_total = total;
    int last = done >= total;
    int due = pv->shown_ms < 0 || now - pv->shown_ms >= PROGRESS_EVERY_MS;
    char line[PROGRESS_WHAT_MAX + 64];
    progress_line(what, done, total, now - pv->t0_ms, line, sizeof line);
    if (pv->term && pv->screen && pv->screen->cells) {
        if (!last && due && now - pv->t0_ms >= PROGRESS_QUIET_MS) {
            draw(pv, line, done, total);
            pv->shown_ms = now;
        }
        return;
    }
    if (!isatty(STDERR_FILENO) || !(last || due))
        return; /* a pipe or a test gets nothing */
    fprintf(stderr, "\rlogitlab: %s\033[K%s", line, last ? "\n" : "");
    fflush(stderr);
    pv->shown_ms = now;
}
