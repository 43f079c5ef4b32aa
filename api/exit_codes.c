/* Mapping of statuses and solve reasons to the documented exit codes. */
#include "api/exit_codes.h"

int gs_exit_code_for_status(gs_status st)
{
    switch (st) {
    case GS_OK: return GS_EXIT_CONVERGED;
    case GS_ERR_ARG:
    case GS_ERR_CONFIG:
    case GS_ERR_UNSUPPORTED: return GS_EXIT_USAGE;
    case GS_ERR_IO: return GS_EXIT_INPUT;
    case GS_ERR_NUMERIC: return GS_EXIT_NUMERICAL;
    case GS_ERR_MEM:
    case GS_ERR_DEVICE_MEM:
    case GS_ERR_CUDA:
    case GS_ERR_CUSPARSE:
    case GS_ERR_CUBLAS:
    case GS_ERR_METIS:
    case GS_ERR_NO_DEVICE: return GS_EXIT_DEVICE;
    case GS_ERR_INTERRUPTED: return GS_EXIT_INTERRUPTED;
    case GS_ERR_INTERNAL: return GS_EXIT_INTERNAL;
    }
    return GS_EXIT_INTERNAL;
}

int gs_exit_code_for_reason(gs_reason r)
{
    switch (r) {
    case GS_CONVERGED_RTOL:
    case GS_CONVERGED_ATOL:
    case GS_CONVERGED_ZERO_RHS: return GS_EXIT_CONVERGED;
    case GS_DIVERGED_MAX_IT:
    case GS_DIVERGED_STAGNATION: return GS_EXIT_NOT_CONVERGED;
    case GS_DIVERGED_DTOL: return GS_EXIT_NOT_CONVERGED;
    case GS_DIVERGED_BREAKDOWN:
    case GS_DIVERGED_NAN:
    case GS_DIVERGED_PC_FAILED:
    case GS_DIVERGED_INDEFINITE: return GS_EXIT_NUMERICAL;
    case GS_DIVERGED_INTERRUPTED: return GS_EXIT_INTERRUPTED;
    case GS_REASON_NONE: return GS_EXIT_INTERNAL;
    }
    return GS_EXIT_INTERNAL;
}

const char *gs_exit_class_name(int code)
{
    switch (code) {
    case GS_EXIT_CONVERGED: return "converged";
    case GS_EXIT_NOT_CONVERGED: return "not_converged";
    case GS_EXIT_USAGE: return "usage";
    case GS_EXIT_INPUT: return "input";
    case GS_EXIT_NUMERICAL: return "numerical";
    case GS_EXIT_DEVICE: return "device";
    case GS_EXIT_INTERRUPTED: return "interrupted";
    case GS_EXIT_INTERNAL: return "internal";
    }
    return "unknown";
}
