/* SIGINT/SIGTERM handlers that only set a flag; the solve loop stops at the next iteration. */
#define _POSIX_C_SOURCE 200809L
#include "core/signal.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) { interrupted = sig; }

void gs_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

bool gs_interrupt_requested(void) { return interrupted != 0; }
int gs_interrupt_signal(void) { return (int)interrupted; }
void gs_interrupt_reset(void) { interrupted = 0; }
