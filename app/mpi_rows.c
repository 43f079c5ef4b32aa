/* Rows made where they live (app/mpi_rows.h): each rank generates or reads its contiguous part. */
#include "app/mpi_rows.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "app/app.h"
#include "core/generate.h"
#include "core/mem.h"
#include "io/petsc_bin.h"
#include "precond/ordering.h"

void gs_app_rows_free(gs_app_rows *rows)
{
    gs_csr_free(&rows->mine);
    memset(rows, 0, sizeof *rows);
}

/* Rows lo..hi-1 of a generated matrix. */
static gs_status gen_rows(const char *spec, MPI_Comm comm, gs_app_rows *rows)
{
    gs_app_gen g;
    gs_gen_stencil s;
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    GS_CALL(gs_app_gen_parse(spec, &g));
    GS_CALL(gs_gen_stencil_of(g.name, g.peclet, &s));
    const int64_t n = (int64_t)g.nx * g.ny * g.nz;
    if (n > GS_INT_MAX)
        return GS_ERROR(GS_ERR_ARG,
                        "matrix '%s': %lld unknowns, more than the 32-bit index limit GS_INT_MAX = %d of the global "
                        "row numbers",
                        spec, (long long)n, GS_INT_MAX);
    rows->n_global = (gs_int)n;
    const gs_int lo = gs_partition_contiguous_start(rows->n_global, size, rank),
                 hi = gs_partition_contiguous_start(rows->n_global, size, rank + 1);
    rows->first_row = lo;
    return gs_gen_stencil_rows(&s, g.nx, g.ny, g.nz, lo, hi, &rows->mine);
}

/* Rows lo..hi-1 of a PETSc binary file: the lengths, then (their sums scanned over the ranks) the entries. */
static gs_status petsc_rows(const char *spec, MPI_Comm comm, const gs_petsc_header *h, gs_app_rows *rows)
{
    gs_status st = GS_OK;
    int rank = 0, size = 1;
    gs_int *len = NULL;
    long long nnz = 0, first = 0, total = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    rows->n_global = (gs_int)h->rows;
    const gs_int lo = gs_partition_contiguous_start(rows->n_global, size, rank),
                 hi = gs_partition_contiguous_start(rows->n_global, size, rank + 1);
    rows->first_row = lo;
    st = GS_MALLOC(len, hi - lo + 1);
    if (st == GS_OK) st = gs_petsc_read_row_lengths(spec, h, lo, hi, len, &nnz);
    GS_TRY(gs_dist_agree(comm, st));
    if (MPI_Exscan(&nnz, &first, 1, MPI_LONG_LONG, MPI_SUM, comm) != MPI_SUCCESS ||
        MPI_Allreduce(&nnz, &total, 1, MPI_LONG_LONG, MPI_SUM, comm) != MPI_SUCCESS)
        GS_FAIL(GS_ERR_INTERNAL, "MPI: summing the ranks' row lengths failed");
    if (rank == 0) first = 0; /* MPI_Exscan leaves rank 0's undefined */
    if (total != h->nnz)
        st = GS_ERROR(GS_ERR_IO,
                      "%s: PETSc binary matrix: the row lengths add up to %lld; expected %lld, the nonzeros of the "
                      "header",
                      spec, total, h->nnz);
    if (st == GS_OK) st = gs_petsc_read_rows(spec, h, lo, hi, len, first, &rows->mine);
cleanup:
    gs_free(&len);
    return st;
}

gs_status gs_app_mpi_rows_read(MPI_Comm comm, const char *spec, const gs_config *cfg, gs_app_rows *rows)
{
    gs_status st = GS_OK;
    gs_petsc_header h;
    memset(rows, 0, sizeof *rows);
    memset(&h, 0, sizeof h);
    if (strcmp(gs_config_string(cfg, "preconditioner.partition"), "contiguous") != 0) return GS_OK;
    const bool gen = strncmp(spec, "gen:", 4) == 0;
    if (!gen && !gs_petsc_path(spec)) return GS_OK;
    const double t = gs_wtime();
    if (!gen) { /* every rank looks at the file: read by rows only when all can */
        st = gs_petsc_matrix_header(spec, &h);
        int can = st == GS_OK && h.by_rows, all = 0;
        GS_CALL(gs_dist_agree(comm, st));
        if (MPI_Allreduce(&can, &all, 1, MPI_INT, MPI_LAND, comm) != MPI_SUCCESS)
            return GS_ERROR(GS_ERR_INTERNAL, "MPI: agreeing on reading by rows failed");
        if (!all) return GS_OK;
    }
    rows->used = true;
    st = gen ? gen_rows(spec, comm, rows) : petsc_rows(spec, comm, &h, rows);
    st = gs_dist_agree(comm, st);
    double mine = gs_wtime() - t;
    if (st == GS_OK && MPI_Allreduce(&mine, &rows->time_read, 1, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS)
        st = GS_ERROR(GS_ERR_INTERNAL, "MPI: reducing the read times failed");
    if (st != GS_OK) gs_app_rows_free(rows);
    return st;
}

/* This rank's rows of a vector file: rank 0 reads it whole, then scatters (agreed). */
static gs_status scatter_file(const gs_dist *d, const char *path, double **own)
{
    gs_status st = GS_OK;
    double *whole = NULL;
    if (d->rank == 0) st = gs_system_read_vector(path, d->n_global, &whole);
    if (st == GS_OK) st = GS_MALLOC(*own, d->halo.n_own + 1);
    GS_TRY(gs_dist_agree(d->comm, st));
    st = gs_dist_scatter(d, whole, *own);
cleanup:
    gs_free(&whole);
    return st;
}

gs_status gs_app_mpi_rows_system(const gs_dist *d, const gs_config *cfg, const char *rhs_path, const char *x0_path,
                                 gs_system *sys)
{
    gs_status st = GS_OK;
    const gs_int n = d->halo.n_own, lo = d->displs[d->rank];
    const char *rhs = rhs_path ? rhs_path : gs_config_string(cfg, "system.rhs");
    const char *x0 = x0_path ? x0_path : gs_config_string(cfg, "system.x0");
    const char *xs = gs_config_string(cfg, "system.xstar");
    const uint64_t seed = (uint64_t)gs_config_int(cfg, "system.seed");
    const bool rnd = strcmp(xs, "random") == 0;
    memset(sys, 0, sizeof *sys);
    snprintf(sys->rhs_desc, sizeof sys->rhs_desc, "%s", rhs);
    snprintf(sys->x0_desc, sizeof sys->x0_desc, "%s", x0);
    const bool ones = !rhs_path && strcmp(rhs, "ones") == 0, random = !rhs_path && strcmp(rhs, "random") == 0,
               ax = !rhs_path && strcmp(rhs, "Ax") == 0;
    if (ones || random || ax) {
        st = GS_MALLOC(sys->b, n + 1);
        if (st == GS_OK && ax) st = GS_MALLOC(sys->xstar, n + 1);
        if (st == GS_OK && ones)
            for (gs_int i = 0; i < n; i++) sys->b[i] = 1.0;
        if (st == GS_OK && random)
            for (gs_int i = 0; i < n; i++) sys->b[i] = gs_system_random(seed, (int64_t)lo + i);
        if (st == GS_OK && ax) { /* b = A x*, x* of any column made where it is needed */
            snprintf(sys->rhs_desc, sizeof sys->rhs_desc, "Ax (x* = %s)", xs);
            for (gs_int i = 0; i < n; i++) {
                double sum = 0.0;
                for (gs_int p = d->local.rowptr[i]; p < d->local.rowptr[i + 1]; p++) {
                    const gs_int c = d->local.colind[p], g = c < n ? lo + c : d->halo_cols[c - n];
                    sum += d->local.val[p] * (rnd ? gs_system_random(seed, g) : 1.0);
                }
                sys->b[i] = sum;
                sys->xstar[i] = rnd ? gs_system_random(seed, (int64_t)lo + i) : 1.0;
            }
        }
        GS_TRY(gs_dist_agree(d->comm, st));
    } else {
        GS_TRY(scatter_file(d, rhs, &sys->b));
    }
    if (!x0_path && strcmp(x0, "zero") == 0) {
        GS_TRY(gs_dist_agree(d->comm, GS_CALLOC(sys->x0, n + 1)));
    } else {
        GS_TRY(scatter_file(d, x0, &sys->x0));
    }
    return GS_OK;
cleanup:
    gs_system_free(sys);
    return st;
}
