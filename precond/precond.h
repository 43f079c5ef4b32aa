/* Preconditioners behind one interface: setup_symbolic(A) (patterns, levels, partitions), then
 * setup_numeric(A) (values, factorization, triangular-solve analysis) as often as A's values change,
 * then apply(r) -> z, which allocates nothing. A is the host CSR (sorted) of the system matrix. */
#ifndef GS_PRECOND_H
#define GS_PRECOND_H

#include <stdbool.h>

#include "cfg/config.h"
#include "core/backend.h"
#include "core/csr.h"
#include "core/report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_pc gs_pc;

typedef struct gs_pc_ops {
    gs_status (*setup_symbolic)(gs_pc *pc, const gs_csr *A);
    gs_status (*setup_numeric)(gs_pc *pc, const gs_csr *A);
    gs_status (*apply)(gs_pc *pc, const gs_vector *r, gs_vector *z);
    void (*destroy)(gs_pc *pc);
    void (*view)(const gs_pc *pc, gs_report *rep); /* keys "preconditioner.<name>" */
} gs_pc_ops;

enum gs_pc_state { GS_PC_CREATED = 0, GS_PC_SYMBOLIC = 1, GS_PC_READY = 2 };

struct gs_pc {
    const gs_pc_ops *ops;
    void *data;
    const char *type;
    gs_backend *be;
    const gs_config *cfg; /* keys "preconditioner.*", "trisolve.*" */
    gs_int n;
    int state;
    bool variable;        /* the operator may change between applications (needs FGMRES) */
    bool identity;        /* apply is z = r (type none): Krylov methods skip it */
    double time_symbolic, time_numeric; /* seconds, filled by the public entry points */
    const gs_matrix *op;  /* the operator A on the backend (gs_pc_set_operator), or NULL */
    const gs_int *row_names; /* row i of A as messages and reports name it (0-based), or NULL: i itself
                              * (gs_pc_set_row_names) */
    /* ||M^{-1} 1||_inf * ||A||_inf after the last numeric setup (NaN/Inf kept; NaN for the identity and
     * before a setup): a cheap stability estimate of the factors, see gs_pc_setup_numeric */
    double stability_estimate;
    bool stability_estimated;    /* the last numeric setup computed it (also when the limit rejected it) */
    gs_vector *est_in, *est_out; /* its work vectors (1 and M^{-1} 1), made by the first numeric setup */
    double *est_host;            /* M^{-1} 1 downloaded */
};

typedef gs_status (*gs_pc_create_fn)(gs_pc *pc);
typedef struct gs_pc_entry {
    const char *name;
    gs_pc_create_fn create;
    const char *help;
} gs_pc_entry;
extern const gs_pc_entry gs_pc_registry[]; /* NULL-name terminated */

gs_status gs_pc_create(const char *type, gs_backend *be, const gs_config *cfg, gs_pc **pc);
gs_status gs_pc_setup_symbolic(gs_pc *pc, const gs_csr *A);
/* The plug-in's numeric setup, then (unless pc->identity) the stability estimate
 * est = ||M^{-1} 1||_inf * ||A||_inf: one application to the ones vector on the backend, one download.
 * With preconditioner.stability_limit > 0, est > limit or a non-finite est is GS_ERR_NUMERIC ("unstable
 * factors: ...") and the preconditioner stays unusable (state GS_PC_SYMBOLIC). */
gs_status gs_pc_setup_numeric(gs_pc *pc, const gs_csr *A);
/* Tells the preconditioner that M (created on its backend from the A given to the following numeric
 * setups, same values) is resident there: a GPU factorization then reads A from M instead of uploading
 * it again. M is only read during the setups and must outlive them. GS_ERR_ARG for another backend or
 * other sizes. */
gs_status gs_pc_set_operator(gs_pc *pc, const gs_matrix *M);
/* The rows of the A given to the following setups are rows names[0], names[1], ... of a larger matrix
 * (0-based; a block of it, or a rank's rows): error messages and reported rows (shifted pivots) name
 * those. names is borrowed, read during the setups, and must outlive them; NULL: A's own numbering. */
void gs_pc_set_row_names(gs_pc *pc, const gs_int *names);
gs_status gs_pc_apply(gs_pc *pc, const gs_vector *r, gs_vector *z);
/* The time of one application z = M^{-1} r: the median of 9, each timed on pc's backend (its work
 * finished at both ends). Over MPI ranks every rank must call it (an application may exchange). */
gs_status gs_pc_apply_time(gs_pc *pc, const gs_vector *r, gs_vector *z, double *seconds);
void gs_pc_view(const gs_pc *pc, gs_report *rep);
void gs_pc_destroy(gs_pc **pc);

/* preconditioner.precision = "single": the factors' values stored in float by the triangular solvers the
 * preconditioners create (gs_trisolve_create_from_config's single). */
bool gs_pc_single_precision(const gs_config *cfg);

/* Built-ins. */
gs_status gs_pc_create_none(gs_pc *pc);
gs_status gs_pc_create_jacobi(gs_pc *pc);

#ifdef __cplusplus
}
#endif
#endif
