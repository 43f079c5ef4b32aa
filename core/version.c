/* The build's facts (generated/gs_build_info.h, written by CMake at configure time). */
#include "core/version.h"

#include <stdio.h>

#include "core/backend_cuda.h"
#include "gs_build_info.h"

const char *gs_version_commit(void) { return GS_BUILD_COMMIT; }

bool gs_version_with_cuda(void) { return GS_BUILD_CUDA != 0; }

void gs_version_build_flags(char *buf, size_t len)
{
    snprintf(buf, len, "CMAKE_BUILD_TYPE=%s GS_WITH_CUDA=%s%s%s compiler=%s", GS_BUILD_TYPE[0] ? GS_BUILD_TYPE : "none",
             GS_BUILD_CUDA ? "ON" : "OFF", GS_BUILD_CUDA ? " CMAKE_CUDA_ARCHITECTURES=" : "",
             GS_BUILD_CUDA ? GS_BUILD_CUDA_ARCHS : "", GS_BUILD_COMPILER);
}

void gs_version_cuda(char *buf, size_t len)
{
    if (!GS_BUILD_CUDA) {
        snprintf(buf, len, "host only build (GS_WITH_CUDA=OFF)");
        return;
    }
    int runtime = 0, driver = 0;
    gs_backend_cuda_versions(&runtime, &driver);
    char rt[32] = "unknown", dr[32] = "none (no driver)";
    if (runtime > 0) snprintf(rt, sizeof rt, "%d.%d", runtime / 1000, runtime % 1000 / 10);
    if (driver > 0) snprintf(dr, sizeof dr, "%d.%d", driver / 1000, driver % 1000 / 10);
    snprintf(buf, len, "CUDA toolkit %s, runtime %s, driver %s", GS_BUILD_CUDA_TOOLKIT, rt, dr);
}
