/* Cooperative interruption: SIGINT/SIGTERM set a flag that long phases poll (the Krylov loops once per
 * iteration, the readers and writers at every buffer and at every system call a signal interrupts); a
 * thread may watch a flag of its own too (gs_interrupt_watch). */
#ifndef GS_SIGNAL_H
#define GS_SIGNAL_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Installs handlers for SIGINT and SIGTERM that only record the signal (no SA_RESTART: a blocking read
 * or write returns EINTR, so a slow pipe cannot hold a run hostage), and ignores SIGPIPE (writing to a
 * pipe or FIFO whose reader has gone fails with EPIPE, which is reported, instead of killing the
 * process). */
void gs_interrupt_install(void);
bool gs_interrupt_requested(void); /* true once a signal arrived */
int gs_interrupt_signal(void);     /* which signal (0 when none) */
/* How many SIGINT/SIGTERM arrived so far: a writer compares it with the count when it started, so a
 * signal that arrives while it writes stops it. */
unsigned gs_interrupt_count(void);
void gs_interrupt_reset(void);
/* "SIGINT", "SIGTERM" or "signal N", for messages. */
const char *gs_interrupt_name(int sig);

/* A second source of interrupts for the calling thread only (the library's gpusolve_interrupt): while
 * one is set, gs_interrupt_requested() is also true when poll(ctx) is. poll must be cheap and safe to call
 * once per iteration; name says what stopped the work ("gpusolve_interrupt"). poll NULL: none. */
void gs_interrupt_watch(bool (*poll)(const void *ctx), const void *ctx, const char *name);
/* The same, exclusive (ranks of a distributed solve): while set, gs_interrupt_requested() answers poll(ctx)
 * alone and the signal flag is not read directly, so that ranks a signal reached at different moments
 * stop together: poll reads gs_interrupt_signal() itself and agrees with the other ranks (it may be
 * collective: gs_interrupt_cause() does not call it). */
void gs_interrupt_watch_agreed(bool (*poll)(const void *ctx), const void *ctx, const char *name);
/* What stopped the work, for messages: "signal N" for a signal, else the watch's name ("" when nothing
 * did). */
const char *gs_interrupt_cause(void);

#ifdef __cplusplus
}
#endif
#endif
