/* The triangular solvers by name (the configuration's trisolve.<side>.type), with what each can do: its
 * create function per backend (NULL: not available there), the sides it solves, the backends on which it
 * stores float factors, the backends on which its analysis checks the factor's rows itself, and whether it
 * is approximate. trisolve.c decides from these fields only. The lines are in registry.def, which the
 * schema (cfg/schema.c) also reads for the choices of trisolve.<side>.type.
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

#define GS_TS_FIRST(...) {__VA_ARGS__},
#define GS_TS_ENTRY(...) {__VA_ARGS__},
const gs_trisolve_entry gs_trisolve_registry[] = {
#include "trisolve/registry.def"
    {NULL, NULL, NULL, NULL, 0, 0, 0, false},
};
