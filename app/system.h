/* The system a run solves: b, x0 and (for rhs = "Ax") the known solution, in the matrix's numbering. */
#ifndef GS_APP_SYSTEM_H
#define GS_APP_SYSTEM_H

#include "cfg/config.h"
#include "core/csr.h"

typedef struct gs_system {
    double *b, *x0, *xstar; /* xstar NULL unless rhs = "Ax" */
    char rhs_desc[256], x0_desc[256];
} gs_system;

/* b from system.rhs (ones | random | Ax | file) or rhs_path; x0 from system.x0 (zero | file) or x0_path. */
gs_status gs_system_build(const gs_csr *A, const gs_config *cfg, const char *rhs_path, const char *x0_path,
                          gs_system *sys);
void gs_system_free(gs_system *sys);

#endif
