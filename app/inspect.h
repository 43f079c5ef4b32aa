/* gpusolve --inspect: what a matrix's structure says about which solvers and preconditioners fit. */
#ifndef GS_APP_INSPECT_H
#define GS_APP_INSPECT_H

#include <stdbool.h>
#include <stdio.h>

#include "core/csr.h"
#include "core/csr_stats.h"
#include "core/status.h"

#define GS_INSPECT_FIRST_ROWS GS_STATS_FIRST_ROWS /* rows listed for each kind of bad diagonal */
#define GS_INSPECT_MAX_ADVICE 8

/* What --inspect reports: the one-pass facts (core/csr_stats.h), the levels of the triangles, the
 * bandwidth after RCM, and the advice. Row numbers are 1-based, as in a .mtx file. */
typedef struct gs_matrix_facts {
    gs_csr_stats s;
    gs_int bandwidth_rcm;                               /* max |i - j| after reverse Cuthill-McKee */
    gs_int levels_lower, levels_upper;                  /* dependency levels of tril(A) and triu(A) */
    int nadvice;
    char advice[GS_INSPECT_MAX_ADVICE][320];
} gs_matrix_facts;


gs_status gs_matrix_inspect(const gs_csr *A, gs_matrix_facts *f);
/* Reads spec (a .mtx[.gz] path or gen:...), prints its facts as text or one JSON object on out;
 * returns the exit code (0, or that of the read error). */
int gs_app_inspect(const char *spec, bool json, FILE *out);

#endif
