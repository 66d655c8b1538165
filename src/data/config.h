/* config.h - the user's defaults: $XDG_CONFIG_HOME/logitlab/config.ini
 * (else ~/.config/logitlab/config.ini), or --config FILE.
 *
 *   [display]   theme = default | projector | mono;  ascii = yes | no
 *   [defaults]  order = PRESET;  seed = N     (under every lesson's own settings)
 *   [keys]      ACTION = KEY                  (quit = Q, draws = d, ...)
 *
 * The command line wins over the file, and a lesson's settings over its
 * defaults. A mistake in the file never stops the program: config_load
 * reports it as "path:line: message" and the program starts with the
 * built-in defaults.
 */
#ifndef LOGITLAB_CONFIG_H
#define LOGITLAB_CONFIG_H

#include "base/err.h"
#include "core/settings.h"

enum theme { THEME_MONO, THEME_DEFAULT, THEME_PROJECTOR };

#define CONFIG_MAX_BINDINGS 64

struct binding {
    int key;    /* the key pressed: a code point below 128 */
    int action; /* the action it does: its index in data/actions.def */
    int line;   /* of the configuration file */
};

struct config {
    enum theme theme;
    int ascii;
    struct settings_patch defaults; /* order and seed under every lesson's (none given: zeroed) */
    int n_bindings;
    struct binding bindings[CONFIG_MAX_BINDINGS];
};

/* The key an action has of its own (data/actions.def): ' ' for step, 'q'
 * for quit, a key code of keys.h for the others; 0 for no such action. */
int config_action_key(int action);

/* Fills c with the built-in defaults. */
void config_defaults(struct config *c);

/* Fills c with the built-in defaults, then reads path (NULL: the XDG place;
 * a missing file there is not an error, a missing --config FILE is). On any
 * mistake c keeps the built-in defaults and e says what: the caller warns. */
int config_load(struct config *c, const char *path, struct err *e);

/* The same from text (tests); path names it in messages. */
int config_load_text(struct config *c, const char *path, const char *text, struct err *e);

/* Applies the [defaults] to s (already checked, so this cannot fail). */
void config_apply_defaults(const struct config *c, struct settings *s);

/* Parses a theme name. */
int config_parse_theme(const char *name, enum theme *t, struct err *e);

#endif
