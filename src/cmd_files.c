/* cmd_files.c - the commands that read files but run no lesson (cmd_files.h),
 * and the one way a message reaches standard error. */
#include "cmd_files.h"

#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "data/catalog.h"
#include "data/lesson.h"

/* Every message main prints goes through here: "logitlab: ", what, the
 * message with its control characters escaped (utf8.h; a message quotes
 * names from files and from the command line), then tail. */
void cmd_say(const char *what, const char *msg, const char *tail)
{
    fprintf(stderr, "logitlab: %s", what);
    utf8_write_escaped(stderr, msg, strlen(msg), 0);
    fprintf(stderr, "%s\n", tail);
}

int cmd_lessons(const struct options *o, struct err *e)
{
    struct catalog cat;
    if (catalog_open(&cat, o->lessons_dir, e) < 0)
        return -1;
    int bad = 0;
    for (int i = 0; i < cat.n; i++) {
        struct lesson L;
        struct err le;
        if (lesson_load(&L, cat.files[i], &le) < 0) {
            cmd_say("", le.msg, "");
            bad++;
            continue;
        }
        char id[4 * sizeof L.id];
        utf8_escape(L.id, id, sizeof id);
        printf("%-14s ", id);
        utf8_write_escaped(stdout, L.title, strlen(L.title), 0);
        putchar('\n');
        lesson_free(&L);
    }
    catalog_close(&cat);
    if (bad)
        return err_set(e, ERR_USAGE, "%d lesson file%s could not be read", bad,
                       bad == 1 ? "" : "s");
    return 0;
}
