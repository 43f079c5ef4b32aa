/* Cooperative interruption: SIGINT/SIGTERM set a flag the Krylov loops poll once per iteration. */
#ifndef GS_SIGNAL_H
#define GS_SIGNAL_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

void gs_interrupt_install(void);   /* install handlers for SIGINT and SIGTERM */
bool gs_interrupt_requested(void); /* true once a signal arrived */
int gs_interrupt_signal(void);     /* which signal (0 when none) */
void gs_interrupt_reset(void);

#ifdef __cplusplus
}
#endif
#endif
