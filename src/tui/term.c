/* term.c - the only file that includes ncurses. */
#define NCURSES_WIDECHAR 1
#include "tui/term.h"

#include <langinfo.h>
#include <locale.h>
#include <ncurses.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/mapfault.h"
#include "data/keys.h"

#define ESC_DELAY_MS 25
#define COLORS_RICH  256

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t is_open;

int term_locale_utf8(void)
{
    const char *cs = nl_langinfo(CODESET);
    return cs && strcmp(cs, "UTF-8") == 0;
}

/* Colours by role (screen.h), readable on light and dark backgrounds and
 * told apart without red/green: blue for kept, vermillion for negative,
 * orange for the draw (the drawn token and the seeded u that drew it),
 * reddish purple for the thresholds (COL_THRESHOLD) (after
 * Okabe and Ito; the marks themselves are in marks.def). The 256-colour
 * tables are also the pictures' colours (term_palette). */
static const short RICH[COL_COUNT] = {
    [COL_DEFAULT] = -1,  [COL_TITLE] = 25,   [COL_KEPT] = 32,       [COL_NEG] = 166,
    [COL_REMOVED] = 244, [COL_CHOSEN] = 214, [COL_THRESHOLD] = 162, [COL_ACCENT] = 30,
    [COL_WARN] = 166,    [COL_GOOD] = 29,    [COL_STATUS] = -1,
};
/* For a projector: the brightest colours, on black, where a washed-out
 * image loses the pale ones. The accent (what renormalizing added, beside
 * the kept bar's cyan) is a light green, not a second cyan. */
static const short BRIGHT[COL_COUNT] = {
    [COL_DEFAULT] = 15,  [COL_TITLE] = 51,   [COL_KEPT] = 45,       [COL_NEG] = 202,
    [COL_REMOVED] = 250, [COL_CHOSEN] = 226, [COL_THRESHOLD] = 201, [COL_ACCENT] = 120,
    [COL_WARN] = 196,    [COL_GOOD] = 46,    [COL_STATUS] = 15,
};
/* A picture of the default theme, whose text and page are the terminal's
 * own colours, needs some: black on white, which prints and projects. */
#define PAGE_INK   16  /* xterm's black */
#define PAGE_PAPER 231 /* xterm's white */
/* A pane's title is drawn in reverse video: its text takes the pair's
 * background, which on a terminal's own (dark) background would be black
 * on dark blue. The default theme gives the title its own white, as the
 * pictures have it (their reverse text is the white page). */
#define TITLE_PAPER_RICH  PAGE_PAPER
#define TITLE_PAPER_BASIC COLOR_WHITE

/* The colour xterm's default palette gives 256-colour index n: sixteen
 * system colours, a 6 x 6 x 6 cube from 16 (levels 0, 95, 135, ..., 255),
 * 24 greys from 232 (8, 18, ..., 238). Most terminals use the same. */
static uint32_t xterm_rgb(int n)
{
    static const uint32_t SYSTEM[16] = {
        0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
        0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
    };
    if (n < 16)
        return SYSTEM[n < 0 ? 0 : n];
    if (n >= 232) {
        uint32_t g = 8 + 10 * (uint32_t)(n - 232);
        return g << 16 | g << 8 | g;
    }
    int i = n - 16, level[3] = { i / 36, i / 6 % 6, i % 6 };
    uint32_t rgb = 0;
    for (int k = 0; k < 3; k++)
        rgb = rgb << 8 | (uint32_t)(level[k] ? 55 + 40 * level[k] : 0);
    return rgb;
}

struct svg_palette term_palette(int theme)
{
    struct svg_palette p = { .bg = xterm_rgb(PAGE_PAPER) };
    const short *fg = theme == 2 ? BRIGHT : RICH;
    for (int c = 0; c < COL_COUNT; c++)
        p.fg[c] = xterm_rgb(theme == 0 || fg[c] < 0 ? PAGE_INK : fg[c]);
    if (theme == 2) { /* as term_present draws it: on black, all bold, nothing dim */
        p.bg = xterm_rgb(COLOR_BLACK);
        p.all_bold = 1;
        p.no_dim = 1;
    }
    return p;
}

/* The colour pairs of the terminal's theme, by role. */
static void init_colors(const struct term *t)
{
    static const short BASIC[COL_COUNT] = {
        [COL_DEFAULT] = -1,
        [COL_TITLE] = COLOR_BLUE,
        [COL_KEPT] = COLOR_BLUE,
        [COL_NEG] = COLOR_RED,
        [COL_REMOVED] = -1,
        [COL_CHOSEN] = COLOR_YELLOW,
        [COL_THRESHOLD] = COLOR_MAGENTA,
        [COL_ACCENT] = COLOR_CYAN,
        [COL_WARN] = COLOR_RED,
        [COL_GOOD] = COLOR_GREEN,
        [COL_STATUS] = -1,
    };
    static const short BRIGHT_BASIC[COL_COUNT] = {
        [COL_DEFAULT] = COLOR_WHITE,     [COL_TITLE] = COLOR_CYAN,    [COL_KEPT] = COLOR_CYAN,
        [COL_NEG] = COLOR_RED,           [COL_REMOVED] = COLOR_WHITE, [COL_CHOSEN] = COLOR_YELLOW,
        [COL_THRESHOLD] = COLOR_MAGENTA, [COL_ACCENT] = COLOR_GREEN,  [COL_WARN] = COLOR_RED,
        [COL_GOOD] = COLOR_GREEN,        [COL_STATUS] = COLOR_WHITE,
    };
    start_color();
    use_default_colors();
    int rich = COLORS >= COLORS_RICH;
    const short *fg = t->projector ? (rich ? BRIGHT : BRIGHT_BASIC) : rich ? RICH : BASIC;
    short bg = t->projector ? COLOR_BLACK : -1;
    if (t->projector) {
        init_pair((short)COL_DEFAULT + COL_COUNT, fg[COL_DEFAULT], bg);
        bkgd((chtype)COLOR_PAIR(COL_DEFAULT + COL_COUNT));
    }
    for (int c = 1; c < COL_COUNT; c++)
        init_pair((short)c, fg[c], bg);
    if (!t->projector)
        init_pair((short)COL_TITLE, fg[COL_TITLE], rich ? TITLE_PAPER_RICH : TITLE_PAPER_BASIC);
}

/* What both ways of opening share once curses has a screen. */
static void setup(struct term *t, int theme)
{
    int color = theme != 0;
    t->projector = theme == 2;
    is_open = 1;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    set_escdelay(ESC_DELAY_MS);
    curs_set(0);
    const char *no_color = getenv("NO_COLOR");
    t->use_color = color && has_colors() && !(no_color && no_color[0]);
    if (t->use_color)
        init_colors(t);
}

int term_open(struct term *t, int theme, struct err *e)
{
    memset(t, 0, sizeof *t);
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return err_set(e, ERR_USAGE,
                       "the interactive view needs a terminal (use 'logitlab show' or --headless)");
    /* newterm, unlike initscr, returns NULL instead of exiting on a bad TERM. */
    SCREEN *sc = newterm(NULL, stdout, stdin);
    if (!sc)
        return err_set(e, ERR_USAGE, "cannot use this terminal (TERM=%s): try TERM=xterm",
                       getenv("TERM") ? getenv("TERM") : "unset");
    t->screen = sc;
    t->tty = 1;
    set_term(sc);
    setup(t, theme);
    return 0;
}

int term_open_stream(struct term *t, const char *termtype, FILE *out, FILE *in, int theme,
                     struct err *e)
{
    memset(t, 0, sizeof *t);
    SCREEN *sc = newterm(termtype, out, in);
    if (!sc)
        return err_set(e, ERR_SYSTEM, "cannot start curses for TERM=%s",
                       termtype ? termtype : "$TERM");
    t->screen = sc;
    set_term(sc);
    setup(t, theme);
    return 0;
}

void term_close(struct term *t)
{
    if (!is_open)
        return;
    is_open = 0;
    curs_set(1);
    endwin();
    if (t->screen) {
        delscreen(t->screen);
        t->screen = NULL;
    }
}

void term_size(int *w, int *h)
{
    getmaxyx(stdscr, *h, *w);
}

/* A resize whose SIGWINCH curses never handled: one that came while the
 * program was starting, before curses had its handler (tmux, resizing a
 * window, sets the pane's size a moment later). The terminal's own size
 * against curses' idea of it; on a difference curses takes the new size and
 * the next screen is painted whole. */
static int size_drifted(const struct term *t)
{
    struct winsize ws;
    if (!t->tty || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0 ||
        (ws.ws_row == LINES && ws.ws_col == COLS))
        return 0;
    resizeterm(ws.ws_row, ws.ws_col);
    clearok(curscr, TRUE);
    return 1;
}

int term_key(const struct term *t, int timeout_ms)
{
    wint_t ch;
    timeout(timeout_ms);
    int rc = get_wch(&ch);
    if (rc == ERR)
        return size_drifted(t) ? AK_RESIZE : AK_NONE;
    if (rc == KEY_CODE_YES) {
        switch (ch) {
        case KEY_LEFT:
            return AK_LEFT;
        case KEY_RIGHT:
            return AK_RIGHT;
        case KEY_UP:
            return AK_UP;
        case KEY_DOWN:
            return AK_DOWN;
        case KEY_PPAGE:
            return AK_PGUP;
        case KEY_NPAGE:
            return AK_PGDN;
        case KEY_HOME:
            return AK_HOME;
        case KEY_END:
            return AK_END;
        case KEY_ENTER:
            return AK_ENTER;
        case KEY_BACKSPACE:
            return AK_BACKSPACE;
        case KEY_RESIZE:
            /* The terminal kept what it could of the old screen, cropped
             * or scrolled its own way (tmux drops the top rows when a pane
             * gets shorter), which curses does not know: paint the next
             * screen whole rather than as changes to the old one. */
            clearok(curscr, TRUE);
            return AK_RESIZE;
        default:
            return AK_NONE;
        }
    }
    switch (ch) {
    case '\n':
    case '\r':
        return AK_ENTER;
    case 27:
        return AK_ESC;
    case 127:
    case 8:
        return AK_BACKSPACE;
    case '\t':
        return AK_TAB;
    default:
        return (int)ch;
    }
}

static attr_t curses_attr(int attr)
{
    attr_t a = A_NORMAL;
    if (attr & ATTR_BOLD)
        a |= A_BOLD;
    if (attr & ATTR_DIM)
        a |= A_DIM;
    if (attr & ATTR_REVERSE)
        a |= A_REVERSE;
    if (attr & ATTR_UNDERLINE)
        a |= A_UNDERLINE;
    return a;
}

void term_present(const struct term *t, const struct screen *s)
{
    int w, h;
    getmaxyx(stdscr, h, w);
    for (int y = 0; y < s->h && y < h; y++)
        for (int x = 0; x < s->w && x < w; x++) {
            const struct cell *c = screen_at(s, x, y);
            if (c->cp == 0)
                continue; /* right half of a wide character */
            wchar_t wc[2] = { (wchar_t)c->cp, 0 };
            cchar_t cc;
            short pair = t->use_color ? (short)c->color : 0;
            if (t->projector && pair == COL_DEFAULT)
                pair = COL_DEFAULT + COL_COUNT; /* white on black, not the terminal's own */
            attr_t at = curses_attr(c->attr) | (t->projector ? A_BOLD : 0);
            if (t->projector)
                at &= ~(attr_t)A_DIM; /* dim text vanishes on a projector */
            setcchar(&cc, wc, at, pair, NULL);
            mvadd_wch(y, x, &cc); /* ERR in the bottom-right corner is harmless */
        }
    refresh();
}

int term_stop_signal(void)
{
    return stop_signal;
}

static void on_stop(int sig)
{
    stop_signal = sig;
}

static void on_crash(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    /* Restore the terminal first: a learner must not be left with a dead
     * screen. endwin is not async-signal-safe, but the process is about to
     * die either way and this is the only chance. */
    if (is_open) {
        is_open = 0;
        endwin();
    }
    /* A model file that shrank under its mapping is the file's doing, not
     * a crash: one line naming it (mapfault.h). */
    if (sig == SIGBUS && mapfault_report(STDERR_FILENO, si->si_addr))
        _exit(MAPFAULT_STATUS);
    static const char msg[] = "\nlogitlab: crashed (signal). The terminal was restored.\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    signal(sig, SIG_DFL);
    raise(sig);
}

void term_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_RESETHAND | SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
    sigaction(SIGILL, &sa, NULL);
    sigaction(SIGABRT, &sa, NULL);
}
