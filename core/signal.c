/* SIGINT/SIGTERM handlers that only record the signal; SIGPIPE ignored so that a broken pipe is a
 * write error (EPIPE) that the writer reports. */
#define _POSIX_C_SOURCE 200809L
#include "core/signal.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t interrupted;
static volatile sig_atomic_t count;

static void on_signal(int sig)
{
    interrupted = sig;
    count++;
}

void gs_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: blocking calls return EINTR and the caller looks at the flag */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, NULL);
}

/* The calling thread's second source (gs_interrupt_watch). */
static _Thread_local struct {
    bool (*poll)(const void *ctx);
    const void *ctx;
    const char *name;
    bool exclusive; /* gs_interrupt_watch_agreed: the signal flag is read by poll only */
} watch;

void gs_interrupt_watch(bool (*poll)(const void *ctx), const void *ctx, const char *name)
{
    watch.poll = poll;
    watch.ctx = ctx;
    watch.name = name ? name : "an interrupt request";
    watch.exclusive = false;
}

void gs_interrupt_watch_agreed(bool (*poll)(const void *ctx), const void *ctx, const char *name)
{
    gs_interrupt_watch(poll, ctx, name);
    watch.exclusive = poll != NULL;
}

bool gs_interrupt_requested(void)
{
    if (watch.exclusive) return watch.poll(watch.ctx);
    return interrupted != 0 || (watch.poll && watch.poll(watch.ctx));
}

const char *gs_interrupt_cause(void)
{
    static _Thread_local char buf[32];
    /* agreed: asked only after a stop (poll is collective: it is not called here) */
    if (interrupted) {
        snprintf(buf, sizeof buf, "signal %d", (int)interrupted);
        return buf;
    }
    if (watch.exclusive) return watch.name;
    return watch.poll && watch.poll(watch.ctx) ? watch.name : "";
}
int gs_interrupt_signal(void) { return (int)interrupted; }
unsigned gs_interrupt_count(void) { return (unsigned)count; }
void gs_interrupt_reset(void) { interrupted = 0; }

const char *gs_interrupt_name(int sig)
{
    static _Thread_local char buf[32]; /* only for an unexpected number */
    if (sig == SIGINT) return "SIGINT";
    if (sig == SIGTERM) return "SIGTERM";
    snprintf(buf, sizeof buf, "signal %d", sig);
    return buf;
}
