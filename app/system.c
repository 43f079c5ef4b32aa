/* The linear system a run solves: the matrix (file or generated), b, x0 and the known solution x*. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/system.h"
#include "core/generate.h"
#include "core/mem.h"
#include "io/mmio.h"

gs_status gs_app_matrix_from_spec(const char *spec, gs_csr *A, bool *is_gen)
{
    *is_gen = strncmp(spec, "gen:", 4) == 0;
    if (!*is_gen) return gs_mm_read_matrix(spec, A, NULL);
    char name[32];
    long nx = 0, ny = 0, nz = 0;
    double peclet = 1.0;
    const char *p = spec + 4, *colon = strchr(p, ':');
    if (!colon || (size_t)(colon - p) >= sizeof name)
        return GS_ERROR(GS_ERR_ARG, "matrix '%s': expected gen:NAME:NX[xNY[xNZ]][:PECLET], e.g. gen:poisson3d:100",
                        spec);
    memcpy(name, p, (size_t)(colon - p));
    name[colon - p] = '\0';
    char *end;
    nx = strtol(colon + 1, &end, 10);
    if (*end == 'x') ny = strtol(end + 1, &end, 10);
    if (*end == 'x') nz = strtol(end + 1, &end, 10);
    if (*end == ':') peclet = strtod(end + 1, &end);
    if (*end != '\0' || nx <= 0 || ny < 0 || nz < 0 || nx > GS_INT_MAX || ny > GS_INT_MAX || nz > GS_INT_MAX)
        return GS_ERROR(GS_ERR_ARG, "matrix '%s': expected gen:NAME:NX[xNY[xNZ]][:PECLET] with positive sizes",
                        spec);
    return gs_gen_by_name(name, (gs_int)nx, (gs_int)ny, (gs_int)nz, peclet, A);
}

/* Deterministic uniform numbers in [-1, 1) (splitmix64). */
static double rand_pm1(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return 2.0 * ((double)(z >> 11) * (1.0 / 9007199254740992.0)) - 1.0;
}

gs_status gs_system_build(const gs_csr *A, const gs_config *cfg, const char *rhs_path, const char *x0_path,
                          gs_system *sys)
{
    gs_status st = GS_OK;
    gs_int n = A->nrows;
    memset(sys, 0, sizeof *sys);
    const char *rhs = rhs_path ? rhs_path : gs_config_string(cfg, "system.rhs");
    const char *x0 = x0_path ? x0_path : gs_config_string(cfg, "system.x0");
    uint64_t seed = (uint64_t)gs_config_int(cfg, "system.seed");
    snprintf(sys->rhs_desc, sizeof sys->rhs_desc, "%s", rhs);
    snprintf(sys->x0_desc, sizeof sys->x0_desc, "%s", x0);

    GS_TRY(GS_MALLOC(sys->b, n));
    if (!rhs_path && strcmp(rhs, "ones") == 0) {
        for (gs_int i = 0; i < n; i++) sys->b[i] = 1.0;
    } else if (!rhs_path && strcmp(rhs, "random") == 0) {
        for (gs_int i = 0; i < n; i++) sys->b[i] = rand_pm1(&seed);
    } else if (!rhs_path && strcmp(rhs, "Ax") == 0) {
        const char *xs = gs_config_string(cfg, "system.xstar");
        GS_TRY(GS_MALLOC(sys->xstar, n));
        for (gs_int i = 0; i < n; i++) sys->xstar[i] = strcmp(xs, "random") == 0 ? rand_pm1(&seed) : 1.0;
        gs_csr_spmv(1.0, A, sys->xstar, 0.0, sys->b);
        snprintf(sys->rhs_desc, sizeof sys->rhs_desc, "Ax (x* = %s)", xs);
    } else {
        gs_int len = 0;
        gs_free(&sys->b);
        GS_TRY(gs_mm_read_vector(rhs, n, &sys->b, &len));
    }

    if (!x0_path && strcmp(x0, "zero") == 0) {
        GS_TRY(GS_CALLOC(sys->x0, n));
    } else {
        gs_int len = 0;
        GS_TRY(gs_mm_read_vector(x0, n, &sys->x0, &len));
    }
    return GS_OK;
cleanup:
    gs_system_free(sys);
    return st;
}

void gs_system_free(gs_system *sys)
{
    gs_free(&sys->b);
    gs_free(&sys->x0);
    gs_free(&sys->xstar);
}
