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
#include "trisolve/trisolve_params.h"

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

/* What a caller chooses beyond the type: the approximate solvers' parameters (ignored by the exact ones),
 * the precision of the stored factor, and each solver's schedule parameters (trisolve_params.h; zero: the
 * solver's rules decide). */
typedef struct gs_trisolve_params {
    int sweeps;            /* jacobi / async-jacobi sweeps */
    const char *block_order; /* "dependency" | "forward" | "backward" */
    bool deterministic;    /* async-jacobi: synchronous sweeps instead */
    bool single;           /* store the factor's values in float (applied with double accumulation), as the
                              caller asks (preconditioner.precision = "single"). Supported by the solvers whose
                              registry entry says so; others refuse it. */
    gs_ts_analysis_params analysis; /* the GPU analysis of levelset and syncfree */
    gs_syncfree_params syncfree;
    gs_tiled_params tiled;
    gs_jacobi_params jacobi;
} gs_trisolve_params;

/* The defaults: 3 sweeps in dependency order, not deterministic, double, every rule deciding. */
gs_trisolve_params gs_trisolve_params_default(void);
/* Set one field by name (trisolve_params.h lists the names): "syncfree.schedule=levels", or key and value
 * apart (value non-NULL). GS_ERR_ARG for an unknown name or a bad value. */
gs_status gs_trisolve_params_set(gs_trisolve_params *prm, const char *key, const char *value);
/* GS_ERR_ARG naming the first field out of range (gs_trisolve_create checks its parameters with it). */
gs_status gs_trisolve_params_check(const gs_trisolve_params *prm);

struct gs_trisolve {
    const gs_trisolve_ops *ops;
    void *data;
    const char *type;     /* registry name */
    const struct gs_trisolve_entry *entry; /* its registry entry (capabilities) */
    gs_backend *be;
    gs_uplo uplo;
    bool unit_diag;
    gs_int n;
    bool analysed;
    bool variable;        /* the result may differ between calls (asynchronous) */
    gs_trisolve_params prm;
};

typedef gs_status (*gs_trisolve_create_fn)(gs_trisolve *ts);

/* Backends, sides and precisions as bit masks of a registry entry's capabilities. */
#define GS_TS_HOST (1u << 0) /* the host backend */
#define GS_TS_CUDA (1u << 1) /* the cuda backend */
#define GS_TS_LOWER (1u << GS_LOWER)
#define GS_TS_UPPER (1u << GS_UPPER)

/* A registered solver and what it can do (registry.c): the front (trisolve.c) decides from these fields,
 * never from a solver's name. Adding a solver = its files and one line here. */
typedef struct gs_trisolve_entry {
    const char *name;                  /* the configuration's trisolve.<side>.type */
    gs_trisolve_create_fn create_host; /* sets ops and data on the host backend; NULL: not available there */
    gs_trisolve_create_fn create_cuda; /* ... on the cuda backend; NULL: not available there */
    const char *help;
    unsigned sides;       /* GS_TS_LOWER | GS_TS_UPPER: the triangles it solves */
    unsigned single;      /* backends on which it stores float factors (gs_trisolve_params.single) */
    unsigned checks_rows; /* backends on which its analysis checks T's rows itself (on the device, with
                             gs_ts_check_rows's messages): gs_trisolve_analyse then checks the header only */
    bool approximate;     /* x approximates T^{-1} b (sweeps, block_order, deterministic apply) */
} gs_trisolve_entry;
extern const gs_trisolve_entry gs_trisolve_registry[]; /* NULL-name terminated */

/* Check T against the conventions above (shape, triangle, diagonal); GS_ERR_ARG / GS_ERR_NUMERIC. */
gs_status gs_trisolve_check_factor(const gs_csr *T, gs_uplo uplo, bool unit_diag);

gs_status gs_trisolve_create(const char *type, gs_backend *be, gs_uplo uplo, bool unit_diag,
                             const gs_trisolve_params *prm, gs_trisolve **ts);
/* Read the type and the approximate solvers' parameters from the config group "trisolve.lower" /
 * "trisolve.upper"; single: the factor's values in float, as the caller (a preconditioner) asks. */
gs_status gs_trisolve_create_from_config(const gs_config *cfg, gs_backend *be, gs_uplo uplo,
                                         bool unit_diag, bool single, gs_trisolve **ts);
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
