/* The process's age, for the reports' time.wall. */
#ifndef GS_PROCESS_H
#define GS_PROCESS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds since the process started (Linux: its start time in /proc/self/stat, 10 ms resolution;
 * elsewhere since the program's constructors ran). */
double gs_process_age(void);

#ifdef __cplusplus
}
#endif

#endif
