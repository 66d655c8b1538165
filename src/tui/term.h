/* term.h - the terminal: the one part of logitlab that talks to ncurses.
 *
 * It starts and restores the terminal, turns keys into app keys, copies a
 * screen buffer to the terminal, and makes sure the terminal is restored on
 * every way out: quit, Ctrl-C, SIGTERM, SIGHUP, a fatal error and a crash.
 */
#ifndef LOGITLAB_TERM_H
#define LOGITLAB_TERM_H

#include <stdio.h>

#include "base/err.h"
#include "tui/screen.h"
#include "tui/screen_svg.h"

/* An open terminal: how it shows colours, and curses' screen of it. */
struct term {
    int use_color;
    int projector; /* the high-contrast theme: bright colours on black, all bold */
    void *screen;  /* curses' SCREEN, freed on close */
    int tty;       /* opened on the controlling terminal (term_open), whose size can be asked */
};

/* Starts curses on the controlling terminal in theme (config.h: 0 mono, 1
 * the default colours, 2 the projector's high contrast), colours only when
 * the terminal has them and NO_COLOR is not set. */
int term_open(struct term *t, int theme, struct err *e);

/* Starts curses writing to out and reading from in as a terminal of type
 * termtype (NULL: $TERM): what the benchmark uses to time ncurses' part. */
int term_open_stream(struct term *t, const char *termtype, FILE *out, FILE *in, int theme,
                     struct err *e);

/* The colours of theme (0 mono, 1 default, 2 projector) for a picture:
 * the 256-colour indices the terminal is given, as xterm shows them, on a
 * white page (the projector's: black, all bold, nothing dim). */
struct svg_palette term_palette(int theme);

/* Restores the terminal. Safe to call more than once and when not open. */
void term_close(struct term *t);

/* The terminal's size now. */
void term_size(int *w, int *h);

/* Waits up to timeout_ms for a key: an app key (app.h), AK_RESIZE after a
 * resize, or AK_NONE on a timeout or an interruption. On a timeout t's
 * terminal is asked its size, so that a resize whose signal curses missed
 * is still seen (AK_RESIZE). */
int term_key(const struct term *t, int timeout_ms);

/* Shows screen s (of the terminal's size). */
void term_present(const struct term *t, const struct screen *s);

/* The signal that asked the program to end (SIGINT, SIGTERM, SIGHUP), or 0. */
int term_stop_signal(void);

/* Installs the handlers: stop signals set a flag; crash signals restore the
 * terminal, say what happened, and end the program with the same signal. */
void term_install_signals(void);

/* 1 if the locale's character set is UTF-8. */
int term_locale_utf8(void);

#endif
