/* check_writes.c - interrupted writes (issue 12, class 4): an output file
 * is all or nothing, whatever ends the program.
 *
 * "outfile": each test writes into a fresh directory and lists it (every
 * name, dot files included): nothing while the bytes are written, nothing
 * after an abort, a signal, a write past RLIMIT_FSIZE; the whole file after
 * a good close; an existing file never clobbered without force, replaced
 * with it; a 249-byte (and a 255-byte, NAME_MAX) target name written. Each
 * in both ways of making the file: a file without a name (O_TMPFILE) and
 * the named fallback (OUTFILE_NAMED), whose caught signals must still end
 * the process by that signal. "messages": a long path keeps its reason.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/outfile.h"
#include "suites.h"

#define TEXT "# a handout\n\nevery byte or none\n"

struct place {
    char dir[64];
    char path[4200];
};

static void place_new(struct place *p, const char *name)
{
    strcpy(p->dir, "/tmp/logitlab-writes-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(p->dir));
    snprintf(p->path, sizeof p->path, "%s/%s", p->dir, name);
}

/* The names in the directory (but . and ..), sorted and joined by spaces,
 * into out: "" when it is empty. */
static void listing(const struct place *p, char *out, size_t n)
{
    struct dirent **names;
    int k = scandir(p->dir, &names, NULL, alphasort);
    ck_assert_int_ge(k, 0);
    out[0] = '\0';
    for (int i = 0; i < k; i++) {
        const char *s = names[i]->d_name;
        if (strcmp(s, ".") != 0 && strcmp(s, "..") != 0)
            snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? " " : "", s);
        free(names[i]);
    }
    free(names);
}

static void expect_listing(const struct place *p, const char *want)
{
    char got[4096];
    listing(p, got, sizeof got);
    ck_assert_str_eq(got, want);
}

static void expect_content(const char *path, const char *want)
{
    char got[256] = "";
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = '\0';
    fclose(f);
    ck_assert_str_eq(got, want);
}

static void place_free(struct place *p)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p->dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* _i: 0 the default way (O_TMPFILE here, on the test machine's /tmp), 1 the
 * named fallback. */
static enum outfile_how how_of(int i)
{
    return i ? OUTFILE_NAMED : OUTFILE_AUTO;
}

/* ---- outfile ---------------------------------------------------------------- */

/* Written, then closed well: the file, alone. While it is written, the
 * default way shows nothing in the directory; the fallback one name,
 * short (".logitlab-PID-N"), never the target's. */
START_TEST(test_write_then_close)
{
    struct place p;
    place_new(&p, "out.md");
    struct outfile o;
    struct err e = { 0, "" };
    ck_assert_msg(outfile_open_how(&o, p.path, 0, how_of(_i), &e) == 0, "%s", e.msg);
    fputs(TEXT, o.f);
    fflush(o.f);
    char got[4096];
    listing(&p, got, sizeof got);
    if (_i == 0) {
        ck_assert_str_eq(got, "");
    } else {
        char want[64];
        snprintf(want, sizeof want, ".logitlab-%ld-0", (long)getpid());
        ck_assert_str_eq(got, want);
    }
    ck_assert_msg(outfile_close(&o, 1, &e) == 0, "%s", e.msg);
    expect_listing(&p, "out.md");
    expect_content(p.path, TEXT);
    struct stat st;
    ck_assert_int_eq(stat(p.path, &st), 0);
    ck_assert_int_eq(st.st_size, (int)strlen(TEXT));
    place_free(&p);
}
END_TEST

/* Written, then aborted (the command failed): nothing at all. */
START_TEST(test_write_then_abort)
{
    struct place p;
    place_new(&p, "out.md");
    struct outfile o;
    struct err e = { 0, "" };
    ck_assert_int_eq(outfile_open_how(&o, p.path, 0, how_of(_i), &e), 0);
    for (int i = 0; i < 10000; i++)
        fputs(TEXT, o.f);
    ck_assert_int_eq(outfile_close(&o, 0, &e), -1);
    expect_listing(&p, "");
    place_free(&p);
}
END_TEST

/* A legal long name: 249 bytes (the old temporary, name + ".tmp-XXXXXX",
 * passed NAME_MAX) and 255, NAME_MAX itself; 256 is refused at open, by
 * its length. */
START_TEST(test_long_names)
{
    static const int LEN[] = { 249, 255 };
    for (int k = 0; k < 2; k++) {
        char name[256];
        memset(name, 'n', (size_t)LEN[k]);
        name[LEN[k]] = '\0';
        struct place p;
        place_new(&p, name);
        struct outfile o;
        struct err e = { 0, "" };
        ck_assert_msg(outfile_open_how(&o, p.path, 0, how_of(_i), &e) == 0, "%d: %s", LEN[k],
                      e.msg);
        fputs(TEXT, o.f);
        ck_assert_msg(outfile_close(&o, 1, &e) == 0, "%d: %s", LEN[k], e.msg);
        expect_listing(&p, name);
        expect_content(p.path, TEXT);
        /* and over itself, with force (the fallback's rename, or the
         * short temporary link then rename) */
        ck_assert_int_eq(outfile_open_how(&o, p.path, 1, how_of(_i), &e), 0);
        fputs("again\n", o.f);
        ck_assert_msg(outfile_close(&o, 1, &e) == 0, "%d: %s", LEN[k], e.msg);
        expect_listing(&p, name);
        expect_content(p.path, "again\n");
        place_free(&p);
    }
    struct place p;
    char name[257];
    memset(name, 'n', 256);
    name[256] = '\0';
    place_new(&p, name);
    struct outfile o;
    struct err e = { 0, "" };
    ck_assert_int_eq(outfile_open_how(&o, p.path, 0, how_of(_i), &e), -1);
    char want[4400];
    snprintf(want, sizeof want, "%s: a file name longer than 255 bytes", p.path);
    ck_assert_str_eq(e.msg, want);
    expect_listing(&p, "");
    place_free(&p);
}
END_TEST

/* No clobber without force: refused at open when the file is there, and at
 * close when it appeared meanwhile (the file someone else made stays, and
 * no temporary does). */
START_TEST(test_no_clobber)
{
    struct place p;
    place_new(&p, "out.md");
    write_file(p.path, "my notes\n");
    struct outfile o;
    struct err e = { 0, "" };
    char want[4400];
    snprintf(want, sizeof want, "%s exists: add --force to replace it", p.path);
    ck_assert_int_eq(outfile_open_how(&o, p.path, 0, how_of(_i), &e), -1);
    ck_assert_str_eq(e.msg, want);
    ck_assert_int_eq(unlink(p.path), 0);
    ck_assert_int_eq(outfile_open_how(&o, p.path, 0, how_of(_i), &e), 0);
    fputs(TEXT, o.f);
    write_file(p.path, "my notes\n"); /* made while the command worked */
    ck_assert_int_eq(outfile_close(&o, 1, &e), -1);
    ck_assert_str_eq(e.msg, want);
    expect_listing(&p, "out.md");
    expect_content(p.path, "my notes\n");
    place_free(&p);
}
END_TEST

/* With force the file is replaced, whole, and nothing else stays. */
START_TEST(test_force_replaces)
{
    struct place p;
    place_new(&p, "out.md");
    write_file(p.path, "my notes\n");
    struct outfile o;
    struct err e = { 0, "" };
    ck_assert_int_eq(outfile_open_how(&o, p.path, 1, how_of(_i), &e), 0);
    fputs(TEXT, o.f);
    ck_assert_msg(outfile_close(&o, 1, &e) == 0, "%s", e.msg);
    expect_listing(&p, "out.md");
    expect_content(p.path, TEXT);
    /* a failed command with force leaves the old file as it was */
    ck_assert_int_eq(outfile_open_how(&o, p.path, 1, how_of(_i), &e), 0);
    fputs("half", o.f);
    ck_assert_int_eq(outfile_close(&o, 0, &e), -1);
    expect_listing(&p, "out.md");
    expect_content(p.path, TEXT);
    place_free(&p);
}
END_TEST

/* Runs child(path, how) in a new process and returns its wait status. */
static int in_child(const char *path, enum outfile_how how,
                    void (*child)(const char *, enum outfile_how))
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        child(path, how);
        _exit(0);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return status;
}

/* SIGTERM half way through the bytes, with the default action: the default
 * way dies at once; the fallback notes it, goes on to the close, and dies
 * there, after removing its temporary. Exit 7 would say close returned. */
static void child_signalled(const char *path, enum outfile_how how)
{
    struct outfile o;
    struct err e;
    signal(SIGTERM, SIG_DFL);
    if (outfile_open_how(&o, path, 0, how, &e) < 0)
        _exit(5);
    fputs(TEXT, o.f);
    fflush(o.f);
    raise(SIGTERM);
    if (how == OUTFILE_AUTO)
        _exit(6); /* the signal should have ended it */
    fputs(TEXT, o.f);
    outfile_close(&o, 1, &e);
    _exit(7);
}

START_TEST(test_signal_leaves_nothing)
{
    struct place p;
    place_new(&p, "out.md");
    int status = in_child(p.path, how_of(_i), child_signalled);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
    expect_listing(&p, "");
    place_free(&p);
}
END_TEST

/* The same for SIGINT and SIGHUP on the fallback, and the two files of a
 * show with --save-logits and -o: the inner close passes the noted signal
 * on, the outer one raises it. */
static void child_nested(const char *path, enum outfile_how how)
{
    struct outfile outer, inner;
    struct err e;
    char path2[4300];
    snprintf(path2, sizeof path2, "%s.npy", path);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    if (outfile_open_how(&outer, path, 0, how, &e) < 0 ||
        outfile_open_how(&inner, path2, 0, how, &e) < 0)
        _exit(5);
    fputs(TEXT, inner.f);
    raise(SIGHUP);
    raise(SIGINT);
    if (outfile_close(&inner, 1, &e) == 0)
        _exit(6); /* the inner file must not be named after a signal */
    fputs(TEXT, outer.f);
    outfile_close(&outer, 1, &e);
    _exit(7);
}

START_TEST(test_signal_nested_fallback)
{
    struct place p;
    place_new(&p, "out.md");
    int status = in_child(p.path, OUTFILE_NAMED, child_nested);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP, "status %#x", status);
    expect_listing(&p, "");
    place_free(&p);
}
END_TEST

/* An ignored signal stays ignored (nohup): the file is written. */
static void child_ignored(const char *path, enum outfile_how how)
{
    struct outfile o;
    struct err e;
    signal(SIGHUP, SIG_IGN);
    if (outfile_open_how(&o, path, 0, how, &e) < 0)
        _exit(5);
    fputs(TEXT, o.f);
    raise(SIGHUP);
    _exit(outfile_close(&o, 1, &e) == 0 ? 0 : 6);
}

START_TEST(test_ignored_signal)
{
    struct place p;
    place_new(&p, "out.md");
    int status = in_child(p.path, how_of(_i), child_ignored);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    expect_listing(&p, "out.md");
    expect_content(p.path, TEXT);
    place_free(&p);
}
END_TEST

/* A write past the file size limit: with SIGXFSZ's default action the
 * process dies in the write (nothing is left); with it ignored, the write
 * fails and close says so (nothing is left either). */
static void child_too_large(const char *path, enum outfile_how how)
{
    struct outfile o;
    struct err e;
    if (outfile_open_how(&o, path, 0, how, &e) < 0)
        _exit(5);
    struct rlimit lim = { 4096, 4096 };
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
        _exit(8);
    for (int i = 0; i < 1000; i++)
        fputs(TEXT, o.f);
    int rc = outfile_close(&o, 1, &e);
    char want[4400];
    snprintf(want, sizeof want, "%s: writing failed: File too large", path);
    _exit(rc == -1 && strcmp(e.msg, want) == 0 ? 0 : 6);
}

START_TEST(test_too_large)
{
    struct place p;
    place_new(&p, "out.md");
    signal(SIGXFSZ, SIG_DFL);
    int status = in_child(p.path, how_of(_i), child_too_large);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ, "status %#x", status);
    expect_listing(&p, "");
    signal(SIGXFSZ, SIG_IGN);
    status = in_child(p.path, how_of(_i), child_too_large);
    signal(SIGXFSZ, SIG_DFL);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    expect_listing(&p, "");
    place_free(&p);
}
END_TEST

START_TEST(test_bad_targets)
{
    struct outfile o;
    struct err e = { 0, "" };
    ck_assert_int_eq(outfile_open(&o, "", 0, &e), -1);
    ck_assert_str_eq(e.msg, "an empty file name");
    struct place p;
    place_new(&p, "sub/");
    ck_assert_int_eq(outfile_open(&o, p.path, 0, &e), -1);
    char want[4400];
    snprintf(want, sizeof want, "%s: names a directory, not a file", p.path);
    ck_assert_str_eq(e.msg, want);
    snprintf(p.path, sizeof p.path, "%s/none/out.md", p.dir);
    ck_assert_int_eq(outfile_open(&o, p.path, 0, &e), -1);
    snprintf(want, sizeof want, "%s: cannot write there: No such file or directory", p.path);
    ck_assert_str_eq(e.msg, want);
    expect_listing(&p, "");
    place_free(&p);
}
END_TEST

/* ---- messages --------------------------------------------------------------- */

/* A path of 4,000 bytes under a directory that is not there: the message
 * (once cut at 256 bytes, the reason lost) is whole. */
START_TEST(test_long_path_message)
{
    char path[4100] = "/tmp/logitlab-no-such-dir";
    while (strlen(path) < 3990)
        strcat(path, "/abcdefghijklmnopqrstuvwxyz0123456789");
    strcat(path, "/out.md");
    struct outfile o;
    struct err e = { 0, "" };
    ck_assert_int_eq(outfile_open(&o, path, 0, &e), -1);
    char want[4200];
    snprintf(want, sizeof want, "%s: cannot write there: No such file or directory", path);
    ck_assert_str_eq(e.msg, want);
}
END_TEST

/* Whether s is valid UTF-8 (no character cut in two). */
static int valid_utf8(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : 0;
        if (!n)
            return 0;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xC0) != 0x80)
                return 0;
        p += n;
    }
    return 1;
}

/* Longer than any buffer: the start (the culprit) and the end (the reason)
 * stay, the middle goes, "..." says where, and no character is cut. */
START_TEST(test_message_cut_in_the_middle)
{
    size_t n = 3 * ERR_MSG_MAX;
    char *path = malloc(n + 1);
    ck_assert_ptr_nonnull(path);
    strcpy(path, "/home/");
    while (strlen(path) + 2 < n)
        strcat(path, "\xc3\xa9"); /* é, two bytes */
    struct err e = { 0, "" };
    err_set(&e, ERR_USAGE, "%s: cannot write there: %s", path, "Permission denied");
    ck_assert_int_eq(e.code, ERR_USAGE);
    size_t len = strlen(e.msg);
    ck_assert_uint_le(len, ERR_MSG_MAX - 1);
    ck_assert_uint_ge(len, ERR_MSG_MAX - 4);
    ck_assert(strncmp(e.msg, "/home/\xc3\xa9", 8) == 0);
    const char *end = ": cannot write there: Permission denied";
    ck_assert_str_eq(e.msg + len - strlen(end), end);
    ck_assert_ptr_nonnull(strstr(e.msg, "..."));
    ck_assert(valid_utf8(e.msg));
    /* a prefix on top keeps both ends too */
    err_prefix(&e, "--output");
    len = strlen(e.msg);
    ck_assert(strncmp(e.msg, "--output: /home/", 16) == 0);
    ck_assert_str_eq(e.msg + len - strlen(end), end);
    ck_assert(valid_utf8(e.msg));
    /* and a short one is left alone */
    err_set(&e, ERR_SYSTEM, "x.md: %s", "writing failed");
    err_prefix(&e, "--save-logits");
    ck_assert_str_eq(e.msg, "--save-logits: x.md: writing failed");
    free(path);
}
END_TEST

Suite *suite_writes(void)
{
    Suite *s = suite_create("writes");
    TCase *out = tcase_create("outfile");
    tcase_add_loop_test(out, test_write_then_close, 0, 2);
    tcase_add_loop_test(out, test_write_then_abort, 0, 2);
    tcase_add_loop_test(out, test_long_names, 0, 2);
    tcase_add_loop_test(out, test_no_clobber, 0, 2);
    tcase_add_loop_test(out, test_force_replaces, 0, 2);
    tcase_add_loop_test(out, test_signal_leaves_nothing, 0, 2);
    tcase_add_test(out, test_signal_nested_fallback);
    tcase_add_loop_test(out, test_ignored_signal, 0, 2);
    tcase_add_loop_test(out, test_too_large, 0, 2);
    tcase_add_test(out, test_bad_targets);
    suite_add_tcase(s, out);
    TCase *msg = tcase_create("messages");
    tcase_add_test(msg, test_long_path_message);
    tcase_add_test(msg, test_message_cut_in_the_middle);
    suite_add_tcase(s, msg);
    return s;
}
