/* mapfault.c - one line, not a crash, when a mapped file shrinks (mapfault.h).
 * Everything here runs inside a signal handler: no stdio, no malloc, no
 * locale; a line of /proc/self/maps is parsed one byte at a time. */
#define _GNU_SOURCE /* siginfo_t's si_addr, SA_SIGINFO */
#include "base/mapfault.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* One line of /proc/self/maps: "START-END PERMS OFFSET DEV INODE   PATH". */
struct maps_line {
    int field; /* 0 START, 1 END, 2 the spaces after it, 3-6 the four fields after them, 7 PATH */
    int in_space; /* between fields */
    uintptr_t start, end;
    char path[PATH_MAX];
    size_t path_len;
};

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Takes one byte of the line; returns 1 at its end. */
static int maps_byte(struct maps_line *m, char c)
{
    if (c == '\n')
        return 1;
    if (m->field < 2) {
        int d = hex_digit(c);
        if (d >= 0) {
            uintptr_t *v = m->field == 0 ? &m->start : &m->end;
            *v = (*v << 4) | (uintptr_t)d;
        } else {
            m->field++; /* '-' after START, ' ' after END */
            m->in_space = c == ' ';
        }
        return 0;
    }
    if (m->field < 7) {
        if (c == ' ')
            m->in_space = 1;
        else if (m->in_space)
            m->in_space = 0, m->field++;
    }
    if (m->field == 7 && m->path_len + 1 < sizeof m->path)
        m->path[m->path_len++] = (unsigned char)c < 0x20 || c == 0x7F ? '?' : c;
    return 0;
}

/* The path of the file mapped at addr, in m, or 0 when there is none. */
static int find_mapping(uintptr_t addr, struct maps_line *m)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[1024];
    ssize_t n;
    int found = 0;
    memset(m, 0, sizeof *m);
    while (!found && (n = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n && !found; i++) {
            if (!maps_byte(m, buf[i]))
                continue;
            /* A file's mapping has an absolute path ([heap] and the like do not). */
            found = addr >= m->start && addr < m->end && m->path_len > 0 && m->path[0] == '/';
            if (!found)
                memset(m, 0, sizeof *m);
        }
    close(fd);
    return found;
}

int mapfault_report(int fd, const void *addr)
{
    struct maps_line m;
    if (!find_mapping((uintptr_t)addr, &m))
        return 0;
    static const char head[] = "logitlab: ";
    static const char tail[] = ": changed or shrank while in use (the part being read is gone); "
                               "open the file again\n";
    /* One write: a pipe takes it whole, never interleaved with another. */
    char line[sizeof head + sizeof m.path + sizeof tail];
    size_t n = 0;
    memcpy(line, head, sizeof head - 1), n += sizeof head - 1;
    memcpy(line + n, m.path, m.path_len), n += m.path_len;
    memcpy(line + n, tail, sizeof tail - 1), n += sizeof tail - 1;
    ssize_t ignored = write(fd, line, n);
    (void)ignored;
    return 1;
}

static void on_bus(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (mapfault_report(STDERR_FILENO, si->si_addr))
        _exit(MAPFAULT_STATUS);
    signal(sig, SIG_DFL);
    raise(sig);
}

void mapfault_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = on_bus;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGBUS, &sa, NULL);
}
