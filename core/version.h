/* The version of gpusolve and the facts of the build it runs from: the git commit, the CUDA toolkit and
 * runtime, the build flags (for --version and the reports' provenance). */
#ifndef GS_VERSION_H
#define GS_VERSION_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The git commit the build was configured from ("unknown" outside a git checkout). */
const char *gs_version_commit(void);
/* The build flags as one line: "CMAKE_BUILD_TYPE=Release GS_WITH_CUDA=ON CMAKE_CUDA_ARCHITECTURES=90
 * compiler=GNU 12.2.0". */
void gs_version_build_flags(char *buf, size_t len);
/* The CUDA versions as one line: "CUDA toolkit 12.4, runtime 12040, driver 12080", or "host only build
 * (GS_WITH_CUDA=OFF)". */
void gs_version_cuda(char *buf, size_t len);
/* true when the build has the CUDA backend. */
bool gs_version_with_cuda(void);

#ifdef __cplusplus
}
#endif
#endif
