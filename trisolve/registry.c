/* The triangular solvers by name (the configuration's trisolve.<side>.type), with what each can do: its
 * create function per backend (NULL: not available there), the sides it solves, the backends on which it
 * stores float factors, the backends on which its analysis checks the factor's rows itself, and whether it
 * is approximate. trisolve.c decides from these fields only. A type the schema lists but this table does
 * not fails with GS_ERR_UNSUPPORTED "trisolve type X is not available yet".
 *
 *   auto       picks another solver in analyse() from the factor's levels (auto.c).
 *   reference  sequential substitution; on the cuda backend it downloads b, solves on the host and
 *              uploads x (the oracle, slow by design).
 *   cusparse   cuSPARSE SpSV (cusparse_cuda.cu).
 *   levelset   rows renumbered level by level, HEC storage, chains of thin levels (levelset_ref.c on
 *              the host backend, levelset_cuda.cu on cuda: plan built on the GPU, one persistent
 *              kernel with grid barriers between wide levels).
 *   syncfree   one kernel without barriers, each row waiting on the values it reads (syncfree_cuda.cu), in
 *              one of the schedules its rules choose in its analysis (syncfree_rules.c): rows in level
 *              order, merged levels, or warp runs of linked rows (syncfree_ref.c, merge_ref.c: host
 *              twins); on the host backend the sequential row order is already a valid sync-free
 *              schedule, so it runs the reference substitution there.
 *   jacobi     approximate: trisolve.<side>.sweeps Jacobi sweeps x <- D^{-1}(b - (T - D)x) from
 *              x = D^{-1} b, one fused kernel per sweep (jacobi_ref.c host twin, jacobi_cuda.cu).
 *   async-jacobi  approximate: block-asynchronous Jacobi, rows updated in place in blocks ordered along
 *              the dependency or per block_order; variable (FGMRES) unless deterministic = true,
 *              which runs `jacobi` (jacobi_ref.c: the sequential model on the host; jacobi_cuda.cu).
 *   tiled      TileSpTRSV: rows renumbered by level, 16x16 tiles, a warp per tile row, level-set or
 *              sync-free over tile rows (tiled_ref.c host twin, tiled_cuda.cu; tiled_kernels.h). */
#include "trisolve/trisolve_impl.h"

#define BOTH (GS_TS_HOST | GS_TS_CUDA)
#define SIDES (GS_TS_LOWER | GS_TS_UPPER)

const gs_trisolve_entry gs_trisolve_registry[] = {
    {"auto", gs_trisolve_create_auto, gs_trisolve_create_auto,
     "levelset on the host; syncfree on cuda (cusparse for small factors of few levels)", SIDES, GS_TS_CUDA, BOTH,
     false},
    {"reference", gs_trisolve_create_reference, gs_trisolve_create_reference,
     "sequential substitution (the oracle; on cuda via the host)", SIDES, 0, 0, false},
    {"cusparse", NULL, gs_trisolve_create_cusparse_cuda, "cuSPARSE SpSV (cuda backend only)", SIDES, GS_TS_CUDA, 0,
     false},
    {"levelset", gs_trisolve_create_levelset_host, gs_trisolve_create_levelset_cuda,
     "level scheduling, HEC storage, chains of thin levels in one block, grid barriers", SIDES, GS_TS_CUDA,
     GS_TS_CUDA, false},
    {"syncfree", gs_trisolve_create_reference, gs_trisolve_create_syncfree_cuda,
     "one kernel, no barriers: rows in level order wait on the values they read", SIDES, GS_TS_CUDA, GS_TS_CUDA,
     false},
    {"jacobi", gs_trisolve_create_jacobi_host, gs_trisolve_create_jacobi_cuda,
     "approximate: `sweeps` fused Jacobi sweeps (deterministic)", SIDES, GS_TS_CUDA, 0, true},
    {"async-jacobi", gs_trisolve_create_jacobi_host, gs_trisolve_create_jacobi_cuda,
     "approximate: block-asynchronous Jacobi in place (variable: FGMRES) unless deterministic", SIDES, GS_TS_CUDA,
     0, true},
    {"tiled", gs_trisolve_create_tiled_host, gs_trisolve_create_tiled_cuda,
     "16x16 tiles (TileSpTRSV), level-set or sync-free over tile rows", SIDES, 0, 0, false},
    {NULL, NULL, NULL, NULL, 0, 0, 0, false},
};
