/* mapfault.h - a model file that shrinks while it is mapped.
 *
 * The GGUF reader maps a model file instead of reading it (a model is
 * hundreds of megabytes, and most of its pages are never touched). When the
 * file shrinks while it is mapped (truncate, or a smaller file copied over
 * it, as a download manager does), reading a page past its new end raises
 * SIGBUS. That is not a bug in the program but a file that changed, so the
 * learner gets one line naming the file, "changed or shrank while in use",
 * and the status of a system error (3), never a crash.
 *
 * The handler needs no state of its own: the kernel hands it the address
 * that faulted (siginfo's si_addr), and /proc/self/maps says which file is
 * mapped there. Reading /proc takes only open, read and close, which a
 * signal handler may call; the message is written with write. A SIGBUS at
 * an address no file is mapped at is a real crash and is left to the
 * signal's default action (or to the view's crash handler). */
#ifndef LOGITLAB_MAPFAULT_H
#define LOGITLAB_MAPFAULT_H

#include <stddef.h>

/* The status a program ends with after the message: ERR_SYSTEM's. */
#define MAPFAULT_STATUS 3

/* Writes "logitlab: PATH: changed or shrank while in use ..." on fd when
 * addr lies in a file mapped into this process (its path escaped: a byte
 * below 0x20 or 0x7F as '?'), and returns 1; returns 0, writing nothing,
 * when no file is mapped there or /proc cannot be read. Async-signal-safe. */
int mapfault_report(int fd, const void *addr);

/* Catches SIGBUS for the whole process: a fault in a mapped file ends it
 * with mapfault_report's line on standard error and MAPFAULT_STATUS;
 * another SIGBUS ends it as before, by the signal. The interactive view
 * replaces this with its own handler, which restores the terminal first
 * (term.c) and then does the same. */
void mapfault_install(void);

#endif
