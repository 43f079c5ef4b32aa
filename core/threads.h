/* The number of host threads: the OpenMP team of the host code (factorizations, scaling, matching, the
 * host backend's kernels, staging copies) and its helper threads, set by device.threads. */
#ifndef GS_THREADS_H
#define GS_THREADS_H

#ifdef __cplusplus
extern "C" {
#endif

/* n > 0: at most n host threads from now on (on the calling thread's OpenMP team); n == 0: the
 * default again (OMP_NUM_THREADS when set, else one per core). */
void gs_threads_set(int n);
/* The host threads a parallel region started now would use (1 without OpenMP). */
int gs_threads_max(void);

#ifdef __cplusplus
}
#endif
#endif
