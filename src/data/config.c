#include "data/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data/ini_file.h"
#include "data/keys.h"

#define CONFIG_MAX_BYTES (64 << 10)

/* The actions keys can be bound to, by name, in data/actions.def's order,
 * with the key each has of its own. */
static const struct {
    const char *name;
    int key;
} ACTIONS[] = {
#define ACTION(name, key, ...) { name, key },
#include "data/actions.def"
#undef ACTION
    { NULL, 0 },
};

int config_action_key(int action)
{
    return action >= 0 && action < (int)(sizeof ACTIONS / sizeof ACTIONS[0]) - 1
               ? ACTIONS[action].key
               : 0;
}

static int section_ok(const char *name, size_t len)
{
    static const char *const S[] = { "display", "defaults", "keys" };
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++)
        if (strlen(S[i]) == len && strncmp(S[i], name, len) == 0)
            return 1;
    return 0;
}

static int action_of(const char *name)
{
    for (int i = 0; ACTIONS[i].name; i++)
        if (strcmp(ACTIONS[i].name, name) == 0)
            return i;
    return -1;
}

static int key_ok(const char *section, const char *name)
{
    if (strcmp(section, "display") == 0)
        return strcmp(name, "theme") == 0 || strcmp(name, "ascii") == 0;
    if (strcmp(section, "defaults") == 0)
        return strcmp(name, "order") == 0 || strcmp(name, "seed") == 0;
    return action_of(name) >= 0;
}

static const struct ini_rules RULES = {
    .max_bytes = CONFIG_MAX_BYTES,
    .section_ok = section_ok,
    .sections_hint = "display, defaults, keys",
    .key_ok = key_ok,
};

int config_parse_theme(const char *name, enum theme *t, struct err *e)
{
    if (strcmp(name, "default") == 0)
        *t = THEME_DEFAULT;
    else if (strcmp(name, "projector") == 0)
        *t = THEME_PROJECTOR;
    else if (strcmp(name, "mono") == 0)
        *t = THEME_MONO;
    else
        return err_set(e, ERR_USAGE, "'%s' is not a theme (default, projector or mono)", name);
    return 0;
}

void config_defaults(struct config *c)
{
    memset(c, 0, sizeof *c);
    c->theme = THEME_DEFAULT;
}

static int fail(struct config *c, const struct ini_file *f, int line, struct err *e,
                const char *msg)
{
    config_defaults(c); /* a mistake anywhere: none of the file applies */
    /* Room for the longest message a setting gives (an unknown order names every stage). */
    return ini_error(f, line, e, "%.400s", msg);
}

/* The line where entry i's key was first given in its section, or 0 when
 * this is the first time: a second value would silently win over the
 * first, so it is refused, as in a lesson file. */
static int given_before(const struct ini_file *f, int i)
{
    const struct ini_entry *en = &f->entries[i];
    for (int j = 0; j < i; j++)
        if (!f->entries[j].cont && strcmp(f->entries[j].section, en->section) == 0 &&
            strcmp(f->entries[j].name, en->name) == 0)
            return f->entries[j].line;
    return 0;
}

/* A [keys] entry: action = KEY, one printable key, not bound already. */
static int bind_key(struct config *c, const struct ini_file *f, const struct ini_entry *en,
                    struct err *e)
{
    char msg[2 * ERR_MSG_MAX];
    struct err ve;
    struct key_event ev[2];
    int n = keys_parse(en->value, ev, 2, &ve);
    if (n != 1 || ev[0].key <= 0x20 || ev[0].key >= 0x7F) {
        snprintf(msg, sizeof msg,
                 "%s: '%s' is not one key (a printable ASCII character, such as Q or d)", en->name,
                 en->value);
        return fail(c, f, en->line, e, msg);
    }
    /* One action a key: the last would silently win. */
    for (int i = 0; i < c->n_bindings; i++)
        if (c->bindings[i].key == ev[0].key) {
            snprintf(msg, sizeof msg, "%s: '%s' is bound to %s already (line %d)", en->name,
                     en->value, ACTIONS[c->bindings[i].action].name, c->bindings[i].line);
            return fail(c, f, en->line, e, msg);
        }
    if (c->n_bindings == CONFIG_MAX_BINDINGS)
        return fail(c, f, en->line, e, "too many key bindings");
    c->bindings[c->n_bindings++] = (struct binding){ ev[0].key, action_of(en->name), en->line };
    return 0;
}

static int interpret(struct config *c, const struct ini_file *f, struct err *e)
{
    for (int i = 0; i < f->n; i++) {
        const struct ini_entry *en = &f->entries[i];
        char msg[2 * ERR_MSG_MAX];
        struct err ve;
        if (en->cont)
            return fail(c, f, en->line, e, "a value here fits on one line");
        int first = given_before(f, i);
        if (first) {
            snprintf(msg, sizeof msg, "'%s' is given twice in [%s] (first on line %d)", en->name,
                     en->section, first);
            return fail(c, f, en->line, e, msg);
        }
        if (strcmp(en->section, "display") == 0 && strcmp(en->name, "theme") == 0) {
            if (config_parse_theme(en->value, &c->theme, &ve) < 0)
                return fail(c, f, en->line, e, ve.msg);
        } else if (strcmp(en->section, "display") == 0) {
            if (strcmp(en->value, "yes") == 0)
                c->ascii = 1;
            else if (strcmp(en->value, "no") == 0)
                c->ascii = 0;
            else {
                snprintf(msg, sizeof msg, "ascii is yes or no, not '%s'", en->value);
                return fail(c, f, en->line, e, msg);
            }
        } else if (strcmp(en->section, "defaults") == 0) {
            if (settings_patch_set(&c->defaults, en->name, en->value, &ve) < 0) {
                snprintf(msg, sizeof msg, "%s: %s", en->name, ve.msg);
                return fail(c, f, en->line, e, msg);
            }
        } else if (bind_key(c, f, en, e) < 0) {
            return -1;
        }
    }
    return 0;
}

int config_load_text(struct config *c, const char *path, const char *text, struct err *e)
{
    config_defaults(c);
    struct ini_file f;
    if (ini_file_load(&f, path, text, &RULES, e) < 0)
        return -1;
    int rc = interpret(c, &f, e);
    ini_file_free(&f);
    return rc;
}

int config_load(struct config *c, const char *path, struct err *e)
{
    config_defaults(c);
    char where[4096];
    if (!path) {
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        if (xdg && xdg[0] == '/')
            snprintf(where, sizeof where, "%s/logitlab/config.ini", xdg);
        else if (home && home[0])
            snprintf(where, sizeof where, "%s/.config/logitlab/config.ini", home);
        else
            return 0;
        struct stat st;
        if (stat(where, &st) != 0)
            return 0; /* no file: the built-in defaults */
        path = where;
    }
    return config_load_text(c, path, NULL, e);
}

void config_apply_defaults(const struct config *c, struct settings *s)
{
    struct err e; /* order and seed: nothing that adds up */
    settings_patch_apply(s, &c->defaults, &e);
}
