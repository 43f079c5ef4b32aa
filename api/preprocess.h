/* The transformation applied to a system before setup and undone after the solve (like a reordering,
 * invisible to the caller): a row permutation from a maximum-weight matching, row and column scalings,
 * and a symmetric reordering of the result,
 *
 *     C = P_r Dr A Dc P_c^T,   i.e.  C_ij = dr[r_i] * a(r_i, c_j) * dc[c_j]      (r, c: new -> old)
 *
 * solved as C y = b~ with b~_i = dr[r_i] b(r_i); then x(c_j) = dc[c_j] y_j; a guess maps to
 * y0_j = x0(c_j) / dc[c_j]. With matching, r = pm o q and c = q (q the symmetric ordering of the
 * matched matrix P_m A); without, r = c = q. */
#ifndef GS_API_PREPROCESS_H
#define GS_API_PREPROCESS_H

#include <stdbool.h>

#include "core/csr.h"
#include "core/report.h"
#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What to apply (resolved: no "auto"). */
typedef enum gs_matching_kind { GS_MATCHING_NONE = 0, GS_MATCHING_MWM } gs_matching_kind;
/* GS_SCALING_MATCHING: the matching's own scaling (matched entries +-1, every other <= 1). */
typedef enum gs_scaling_kind {
    GS_SCALING_NONE = 0,
    GS_SCALING_RUIZ,
    GS_SCALING_ROWCOL,
    GS_SCALING_MATCHING
} gs_scaling_kind;
typedef enum gs_reorder_kind { GS_REORDER_NONE = 0, GS_REORDER_RCM, GS_REORDER_ND } gs_reorder_kind;

typedef struct gs_preprocess {
    gs_matching_kind matching;
    gs_scaling_kind scaling;
    gs_reorder_kind reorder;
} gs_preprocess;

typedef struct gs_transform {
    gs_int n;
    gs_preprocess what;
    gs_int *rowmap, *colmap; /* new -> old; NULL: identity */
    double *dr, *dc;         /* indexed by A's rows / columns; NULL: ones */
    gs_int matched_off_diagonal; /* rows the matching moved (0 without matching) */
    double time_matching, time_scaling, time_reorder, time_apply; /* seconds */
} gs_transform;

/* Names as in the configuration ("none", "mwm", "ruiz", "rowcol", "matching", "rcm", "nd"). */
const char *gs_matching_name(gs_matching_kind k);
const char *gs_scaling_name(gs_scaling_kind k);
const char *gs_reorder_name(gs_reorder_kind k);
/* true when the transformation is the identity (nothing to apply). */
bool gs_preprocess_is_identity(const gs_preprocess *p);
bool gs_preprocess_equal(const gs_preprocess *a, const gs_preprocess *b);

/* Builds the maps and scalings for A (square, sorted rows) and C = the transformed matrix.
 * A structurally singular A with matching: GS_ERR_NUMERIC naming the structural rank. */
gs_status gs_transform_build(const gs_csr *A, const gs_preprocess *what, gs_transform *T, gs_csr *C);
/* bt = the transformed right-hand side (length n, bt != b). */
void gs_transform_rhs(const gs_transform *T, const double *b, double *bt);
/* y0 = the transformed initial guess of x0 (y0 != x0). */
void gs_transform_guess(const gs_transform *T, const double *x0, double *y0);
/* x = the solution of A x = b from y, the solution of C y = b~ (x != y). */
void gs_transform_solution(const gs_transform *T, const double *y, double *x);
void gs_transform_free(gs_transform *T);
/* Report keys system.matching / scaling / reorder (what was applied), system.matched_rows_moved,
 * time.matching / time.scaling / time.reorder. */
gs_status gs_transform_view(const gs_transform *T, gs_report *rep);

#ifdef __cplusplus
}
#endif
#endif
