/* Triangular solvers behind one interface: analyse(T) once (again when values change), then
 * solve(b) -> x many times. T is a host CSR with sorted columns holding only its triangle:
 *   lower: entries j <= i;  upper: entries j >= i.
 *   unit_diag: the diagonal is 1 and must NOT be stored; otherwise every row must store its diagonal
 *   (a missing or zero diagonal is GS_ERR_NUMERIC naming the row).
 * x = T^{-1} b. b and x are distinct vectors on the trisolve's backend. */
#ifndef GS_TRISOLVE_H
#define GS_TRISOLVE_H

#include <stdbool.h>

#include "cfg/config.h"
#include "core/backend.h"
#include "core/csr.h"
#include "core/report.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_uplo { GS_LOWER = 0, GS_UPPER = 1 } gs_uplo;

typedef struct gs_trisolve gs_trisolve;

typedef struct gs_trisolve_ops {
    gs_status (*analyse)(gs_trisolve *ts, const gs_csr *T);
    gs_status (*solve)(gs_trisolve *ts, const gs_vector *b, gs_vector *x);
    void (*destroy)(gs_trisolve *ts);
    /* diagnostics as "<prefix>.<name>" (levels, chains, analysis time, ...) */
    void (*view)(const gs_trisolve *ts, gs_report *rep, const char *prefix);
    /* Optional (NULL: gs_trisolve_analyse_dev downloads T and calls analyse): analyse a factor that is
     * already in the device memory of the cuda backend, with analyse's checks and messages. */
    gs_status (*analyse_dev)(gs_trisolve *ts, const gs_csr_dev *T);
} gs_trisolve_ops;

/* Parameters of the approximate solvers (ignored by exact ones). */
typedef struct gs_trisolve_params {
    int sweeps;            /* jacobi / async-jacobi sweeps */
    const char *block_order; /* "dependency" | "forward" | "backward" */
    bool deterministic;    /* async-jacobi: synchronous sweeps instead */
    bool single;           /* store the factor's values in float (applied with double accumulation);
                              preconditioner.precision = "single". Supported by the cuda solvers syncfree,
                              levelset, cusparse, jacobi, async-jacobi and auto; others refuse it. */
} gs_trisolve_params;

struct gs_trisolve {
    const gs_trisolve_ops *ops;
    void *data;
    const char *type;     /* registry name */
    gs_backend *be;
    gs_uplo uplo;
    bool unit_diag;
    gs_int n;
    bool analysed;
    bool variable;        /* the result may differ between calls (asynchronous) */
    gs_trisolve_params prm;
};

typedef gs_status (*gs_trisolve_create_fn)(gs_trisolve *ts);
typedef struct gs_trisolve_entry {
    const char *name;
    gs_trisolve_create_fn create;
    const char *help;
} gs_trisolve_entry;
extern const gs_trisolve_entry gs_trisolve_registry[]; /* NULL-name terminated */

/* Check T against the conventions above (shape, triangle, diagonal); GS_ERR_ARG / GS_ERR_NUMERIC. */
gs_status gs_trisolve_check_factor(const gs_csr *T, gs_uplo uplo, bool unit_diag);

gs_status gs_trisolve_create(const char *type, gs_backend *be, gs_uplo uplo, bool unit_diag,
                             const gs_trisolve_params *prm, gs_trisolve **ts);
/* Read type and params from the config group "trisolve.lower" / "trisolve.upper". */
gs_status gs_trisolve_create_from_config(const gs_config *cfg, gs_backend *be, gs_uplo uplo,
                                         bool unit_diag, gs_trisolve **ts);
gs_status gs_trisolve_analyse(gs_trisolve *ts, const gs_csr *T);
/* gs_trisolve_analyse for a factor in the device memory of ts's backend (which must be cuda), e.g. the
 * factors of a GPU factorization: solvers with an analyse_dev op read it there (same checks, same
 * messages); the others get a host copy (downloaded here) through analyse. */
gs_status gs_trisolve_analyse_dev(gs_trisolve *ts, const gs_csr_dev *T);
gs_status gs_trisolve_solve(gs_trisolve *ts, const gs_vector *b, gs_vector *x);
void gs_trisolve_view(const gs_trisolve *ts, gs_report *rep, const char *prefix);
void gs_trisolve_destroy(gs_trisolve **ts);

#ifdef __cplusplus
}
#endif
#endif
