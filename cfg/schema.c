/* The schema: every configuration key, once, with its type, default, range or choices and help.
 * Validation, --help-config, --print-config and docs/config-keys.md all come from this table. */
#include <math.h>

#include "cfg/config.h"

#define INT_KEY(p, d, lo, hi, h) {p, GS_CFG_INT, d, lo, hi, NULL, h}
#define DBL_KEY(p, d, lo, hi, h) {p, GS_CFG_DOUBLE, d, lo, hi, NULL, h}
#define BOOL_KEY(p, d, h) {p, GS_CFG_BOOL, d, 0, 0, NULL, h}
#define STR_KEY(p, d, h) {p, GS_CFG_STRING, d, 0, 0, NULL, h}
#define CHOICE_KEY(p, d, c, h) {p, GS_CFG_CHOICE, d, 0, 0, c, h}

/* the trisolve types: the names of the registry (trisolve/registry.def), in its order */
#define GS_TS_FIRST(name, ...) name
#define GS_TS_ENTRY(name, ...) "|" name
static const char trisolve_types[] =
#include "trisolve/registry.def"
    ;
#undef GS_TS_FIRST
#undef GS_TS_ENTRY
#define TRISOLVE_TYPES trisolve_types

/* the Krylov methods and the preconditioners: "auto", then the names of their registries */
#define GS_KSP_ENTRY(name, ...) "|" name
static const char solver_types[] = "auto"
#include "solver/registry.def"
    ;
#undef GS_KSP_ENTRY
#define GS_PC_ENTRY(name, ...) "|" name
static const char preconditioner_types[] = "auto"
#include "precond/registry.def"
    ;
#undef GS_PC_ENTRY
#define TRISOLVE_KEYS(side)                                                                       \
    CHOICE_KEY("trisolve." side ".type", "auto", TRISOLVE_TYPES,                                  \
               "triangular solver for the " side " factor (auto picks from the factor's levels)"), \
    INT_KEY("trisolve." side ".sweeps", "3", 0, 100000, "jacobi/async-jacobi: sweeps per solve"), \
    CHOICE_KEY("trisolve." side ".block_order", "dependency", "dependency|forward|backward",      \
               "async-jacobi: order of thread blocks (along the dependency or fixed)"),           \
    BOOL_KEY("trisolve." side ".deterministic", "false",                                          \
             "async-jacobi: synchronous sweeps instead (reproducible)")

const gs_cfg_key gs_cfg_schema[] = {
    /* solver */
    CHOICE_KEY("solver.type", "auto", solver_types,
               "Krylov method (auto: chosen from the matrix, see docs/algorithms.md#automatic-choice)"),
    INT_KEY("solver.restart", "30", 1, 10000, "GMRES/FGMRES restart length m"),
    DBL_KEY("solver.rtol", "1e-8", 0, 1, "stop when ||r|| <= rtol * baseline"),
    DBL_KEY("solver.atol", "0", 0, INFINITY, "stop when ||r|| <= atol"),
    INT_KEY("solver.max_iterations", "1000", 0, 1000000000, "iteration limit"),
    CHOICE_KEY("solver.baseline", "rhs", "rhs|r0", "rtol is relative to ||b|| (rhs) or ||b - A x0|| (r0)"),
    CHOICE_KEY("solver.orthogonalization", "dcgs2", "dcgs2|cgs2|mgs",
               "GMRES: classical Gram-Schmidt twice with the second pass delayed a step (1 reduction), not "
               "delayed (2 reductions), or modified (j reductions)"),
    DBL_KEY("solver.divergence_tolerance", "1e5", 0, INFINITY,
            "stop as diverged when ||r|| > divergence_tolerance * max(||b||, ||r0||) (0: off)"),
    INT_KEY("solver.stagnation_window", "0", 0, 1000000000,
            "stop as stagnated when the residual has not decreased for this many iterations (0: off)"),
    BOOL_KEY("solver.allow_variable_preconditioner", "false",
             "allow a preconditioner that changes between applications with CG/BiCGStab/GMRES"),
    DBL_KEY("solver.projected_limit", "0", 0, INFINITY,
            "stop as stagnated when, at the rate of the last 100 iterations, the tolerance would take more than "
            "projected_limit x max_iterations iterations (0: off)"),
    CHOICE_KEY("solver.fallback", "auto", "auto|none",
               "on a failed solve (zero pivot, unstable factor, breakdown, NaN, divergence, stagnation, iteration "
               "limit) retry with the next stronger rung of the fallback ladder (auto) or stop (none)"),
    DBL_KEY("solver.fallback_budget", "300", 0, INFINITY,
            "fallback: no new attempt starts once this many seconds of setup and solve are spent (0: no limit)"),

    /* preconditioner */
    CHOICE_KEY("preconditioner.type", "auto", preconditioner_types,
               "preconditioner (auto: chosen from the matrix, see docs/algorithms.md#automatic-choice)"),
    INT_KEY("preconditioner.fill_level", "0", 0, 1000000, "ILU(k)/BILU(k)/RAS: level of fill k"),
    DBL_KEY("preconditioner.drop_tolerance", "1e-3", 0, INFINITY,
            "ILUT: drop entries below tau * ||row of A||_2"),
    INT_KEY("preconditioner.max_fill", "10", 0, 1000000000, "ILUT: keep at most p largest entries per row in each of L and U"),
    DBL_KEY("preconditioner.pivot_tolerance", "0.1", 0, 1,
            "ILUTP: exchange the diagonal with column j of the row when pivot_tolerance * |w_j| > |w_i| "
            "(0: no pivoting, ILUT)"),
    BOOL_KEY("preconditioner.milu", "false",
             "ILU(0)/ILU(k)/ILUT/ILUTP on the host: add each row's dropped fill to its diagonal (modified ILU)"),
    INT_KEY("preconditioner.blocks", "16", 1, 100000000, "BILU/BILUT/RAS: number of parts"),
    CHOICE_KEY("preconditioner.partition", "metis", "metis|contiguous",
               "how BILU/BILUT/RAS parts and MPI ranks split the rows: metis (k-way partition of the graph of "
               "A + A'), contiguous (consecutive row ranges of equal size, PETSc's default layout: no partitioning "
               "work; for matrices numbered locally, e.g. grids in natural order; under mpirun every rank then "
               "generates or reads its own rows of a gen: problem or PETSc binary file)"),
    INT_KEY("preconditioner.overlap", "1", 0, 1000, "RAS: layers of graph neighbours added to each part"),
    CHOICE_KEY("preconditioner.local", "iluk", "iluk|ilut|parilu",
               "RAS: factorization of each extended subdomain"),
    CHOICE_KEY("preconditioner.zero_pivot", "error", "error|shift|grow",
               "zero pivot: stop naming the row, shift the pivot and report the rows, or (grow) factor "
               "A + alpha diag(||row of A||_inf) again with alpha = shift, 10 shift, ... until every pivot "
               "|u_ii| >= min_pivot * ||row of A||_inf"),
    DBL_KEY("preconditioner.min_pivot", "1e-8", 0, 1,
            "zero_pivot = grow: the smallest accepted |u_ii| / ||row i of A||_inf"),
    DBL_KEY("preconditioner.stability_limit", "0", 0, INFINITY,
            "reject ILU-family factors whose estimate ||(LU)^-1 1||_inf * ||A||_inf exceeds this (0: never; "
            "the estimate is always reported)"),
    DBL_KEY("preconditioner.shift", "1e-8", 0, INFINITY,
            "zero_pivot = shift: replace a tiny pivot by shift * ||row of A||_inf (sign kept)"),
    CHOICE_KEY("preconditioner.factor_on", "auto", "auto|host|device",
               "ilu0/iluk/ic0: where the numeric factorization runs (auto: on the GPU with the cuda backend)"),
    INT_KEY("preconditioner.seed", "1", 0, 2147483647, "seed for METIS and random task orders"),
    INT_KEY("preconditioner.sweeps", "5", 0, 100000, "ParILU/ParIC: fixed-point sweeps"),
    BOOL_KEY("preconditioner.symmetric", "false", "ParILU: ParIC (symmetric, for CG)"),
    CHOICE_KEY("preconditioner.sweep_type", "synchronous", "synchronous|asynchronous",
               "ParILU: double-buffered (deterministic) or in-place sweeps"),
    CHOICE_KEY("preconditioner.order", "forward", "forward|backward|random", "ParILU: task-list order"),
    BOOL_KEY("preconditioner.diagnostics", "false",
             "ParILU: report ||(A-LU)_S||_F and ||A-LU||_F after every sweep"),
    CHOICE_KEY("preconditioner.precision", "double", "double|single",
               "factor values in double, or in float applied with double accumulation (cuda trisolve types "
               "syncfree, levelset, cusparse, jacobi, async-jacobi, auto)"),

    /* trisolve */
    TRISOLVE_KEYS("lower"),
    TRISOLVE_KEYS("upper"),

    /* system */
    STR_KEY("system.rhs", "ones", "right-hand side: ones | random | Ax | a Matrix Market file path"),
    CHOICE_KEY("system.xstar", "ones", "ones|random", "rhs = Ax: the known solution x*"),
    STR_KEY("system.x0", "zero", "initial guess: zero | a Matrix Market file path"),
    CHOICE_KEY("system.scaling", "auto", "auto|none|ruiz|rowcol|matching",
               "row and column scaling before setup: ruiz (iterated infinity-norm), rowcol (one row then column "
               "pass), matching (the maximum-weight matching's: matched entries +-1, others <= 1); auto: the "
               "matching's where matching is on, else the strategy's choice"),
    CHOICE_KEY("system.matching", "auto", "auto|none|mwm",
               "row permutation before setup: mwm (maximum-weight matching, the largest product of |diagonal| "
               "entries) or none; auto: mwm where the diagonal is zero or weak, when the strategy chooses"),
    CHOICE_KEY("system.reorder", "auto", "auto|none|rcm|nd",
               "symmetric reordering applied before setup: rcm (reverse Cuthill-McKee), nd (METIS nested "
               "dissection); auto: the strategy's choice"),
    INT_KEY("system.seed", "1", 0, 2147483647, "seed for random rhs / x*"),

    /* device */
    CHOICE_KEY("device.backend", "auto", "auto|cuda|host", "where to run (auto: the GPU when present)"),
    INT_KEY("device.id", "0", 0, 1024, "CUDA device number"),
    CHOICE_KEY("device.transport", "auto", "auto|nccl|mpi",
               "between the GPUs of mpirun ranks: nccl (the halo and CG's reductions between the devices, no "
               "host round trip; every rank on a GPU of its own), mpi (through host buffers); auto: nccl where it "
               "can be had; no effect in one process"),
    CHOICE_KEY("device.spmv", "own", "own|cusparse|cusparse-alg1|cusparse-alg2",
               "GPU sparse matrix-vector product: own (gpusolve's kernels, shaped per matrix), cusparse "
               "(cuSPARSE CSR_ALG2, = cusparse-alg2) or cusparse-alg1; no effect on the host backend"),
    INT_KEY("device.threads", "0", 0, 4096,
            "host threads (OpenMP) of the host code: reading matrix files, factorizations, scaling, matching, "
            "matrix statistics, the host backend and triangular solves, GPU staging copies (0: OMP_NUM_THREADS "
            "when set, else one per core; --threads N)"),

    /* output */
    CHOICE_KEY("output.format", "text", "text|json", "report format on stdout (json: one object per run)"),
    STR_KEY("output.history", "", "residual history CSV path (empty: none)"),
    STR_KEY("output.solution", "", "solution Matrix Market path (empty: none)"),
    STR_KEY("output.monitor", "",
            "print iteration, residual, relative residual and time while solving: K (every K-th iteration; 1: "
            "every one), Ns (at most once per N seconds, e.g. 1s), empty: none (--monitor[=K|Ns]); on stdout, "
            "on stderr with output.format = json"),
    BOOL_KEY("output.quiet", "false", "text format: print only the summary line (= output.verbosity -1; -q, --quiet)"),
    INT_KEY("output.verbosity", "0", -1, 2,
            "text report: -1 the summary line only, 0 a screen (matrix, method, where it ran, times, iterations, "
            "true residual, reason), 1 also the setup's facts and the strategy's attempts (-v), 2 everything "
            "(-vv); 1 and up also print errors with their internal trace"),
    {NULL, GS_CFG_INT, NULL, 0, 0, NULL, NULL},
};
