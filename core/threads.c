/* device.threads: the OpenMP team size of the host code, and the default it returns to. */
#include "core/threads.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef _OPENMP
/* the team size before the first change (0: not read yet); atomic: handles of the library may set it
 * from several threads */
static _Atomic int default_threads;
#endif

void gs_threads_set(int n)
{
#ifdef _OPENMP
    if (default_threads == 0) default_threads = omp_get_max_threads();
    omp_set_num_threads(n > 0 ? n : default_threads);
#else
    (void)n;
#endif
}

int gs_threads_max(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
