/* BILU(k) and BILUT: z = P^T U^{-1} L^{-1} P r with P numbering METIS part 0's rows first, then part
 * 1's, ..., and L U ~ the block diagonal of P A P^T (couplings between parts dropped), every block
 * factored by ILU(k) or ILUT in parallel and the blocks solved as ONE triangular system each
 * (equation (4) of the HEC paper). Also the block-diagonal engine that RAS reuses (precond/block.h). */
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "precond/block.h"
#include "precond/ordering.h"

/* ------------------------------------------------------------------------------------------------
 * The block-diagonal engine
 * ------------------------------------------------------------------------------------------------ */

/* The error state is thread-local: a task that fails on a worker thread leaves its message there.
 * The lowest failing block's status and message are copied out so the caller can re-raise them
 * deterministically, and the worker's state is cleared for its next task. */
typedef struct par_failure {
    gs_int block;
    gs_status st;
    char msg[1024];
} par_failure;

static void par_failure_record(par_failure *f, gs_int b, gs_status st)
{
#pragma omp critical(gs_block_failure)
    {
        if (f->st == GS_OK || b < f->block) {
            f->block = b;
            f->st = st;
            snprintf(f->msg, sizeof f->msg, "%s", gs_error_message());
        }
    }
    gs_error_clear();
}

gs_status gs_blockdiag_init(gs_blockdiag *bd, const gs_config *cfg, gs_block_local local, const char *name)
{
    if (!cfg) return GS_ERROR(GS_ERR_ARG, "%s: the preconditioner has no configuration", name);
    memset(bd, 0, sizeof *bd);
    bd->local = local;
    bd->name = name;
    /* every block is an ILU(k) or ILUT: the zero-pivot policy (grow included) and MILU apply per block */
    GS_CALL(gs_factor_opts_from_config(cfg, &bd->opts));
    bd->opts.perm_tol = 0.0;
    return GS_OK;
}

void gs_blockdiag_free(gs_blockdiag *bd)
{
    if (!bd) return;
    for (gs_int b = 0; b < bd->nblocks; b++) {
        if (bd->blk) gs_csr_free(&bd->blk[b]);
        if (bd->src) gs_free(&bd->src[b]);
        if (bd->Lb) gs_csr_free(&bd->Lb[b]);
        if (bd->Ub) gs_csr_free(&bd->Ub[b]);
    }
    gs_free(&bd->blk);
    gs_free(&bd->src);
    gs_free(&bd->Lb);
    gs_free(&bd->Ub);
    gs_free(&bd->off);
    gs_free(&bd->rows);
    gs_free(&bd->names);
    gs_csr_free(&bd->L);
    gs_csr_free(&bd->U);
    gs_trisolve_destroy(&bd->tl);
    gs_trisolve_destroy(&bd->tu);
    gs_ivec_destroy(&bd->gather);
    gs_ivec_destroy(&bd->scatter);
    gs_vec_destroy(&bd->xe);
    gs_vec_destroy(&bd->ye);
    /* keep the options; forget the sizes */
    bd->n = bd->nnz_A = bd->nblocks = bd->next = bd->nnz_blocks = 0;
    memset(&bd->info, 0, sizeof bd->info);
    bd->time_extract = bd->time_symbolic = bd->time_factor = bd->time_analyse = 0;
}

/* Block b's matrix A(S_b, S_b) with src[e] = position in A of its entry e. loc[] is -1 everywhere on
 * entry and on exit; loc[g] = local index of global row g while the block is built. Because S_b is
 * increasing, local column order follows global column order: each row comes out sorted. */
static gs_status extract_block(const gs_csr *A, gs_int m, const gs_int *S, gs_int *loc, gs_csr *B, gs_int **src)
{
    gs_status st = GS_OK;
    for (gs_int k = 0; k < m; k++) loc[S[k]] = k;
    int64_t cnt = 0;
    for (gs_int k = 0; k < m; k++)
        for (gs_int p = A->rowptr[S[k]]; p < A->rowptr[S[k] + 1]; p++) cnt += loc[A->colind[p]] >= 0;
    GS_TRY(gs_csr_alloc(B, m, m, (gs_int)cnt, true));
    GS_TRY(GS_MALLOC(*src, cnt));
    gs_int q = 0;
    for (gs_int k = 0; k < m; k++) {
        for (gs_int p = A->rowptr[S[k]]; p < A->rowptr[S[k] + 1]; p++) {
            gs_int j = loc[A->colind[p]];
            if (j < 0) continue;
            B->colind[q] = j;
            B->val[q] = A->val[p];
            (*src)[q] = p;
            q++;
        }
        B->rowptr[k + 1] = q;
    }
cleanup:
    for (gs_int k = 0; k < m; k++) loc[S[k]] = -1;
    return st;
}

static gs_status check_layout(const gs_blockdiag *bd, const gs_csr *A, gs_int nblocks, const gs_int *off,
                              const gs_int *rows, const gs_int *owner)
{
    if (A->nrows != A->ncols)
        return GS_ERROR(GS_ERR_ARG, "%s: the matrix is %d x %d; a square matrix is required", bd->name,
                        (int)A->nrows, (int)A->ncols);
    if (!A->val) return GS_ERROR(GS_ERR_ARG, "%s: the matrix has no values", bd->name);
    if (!gs_csr_is_sorted(A))
        return GS_ERROR(GS_ERR_ARG, "%s: the matrix columns must be sorted without duplicates in every row",
                        bd->name);
    if (nblocks < 0 || !off || off[0] != 0)
        return GS_ERROR(GS_ERR_ARG, "%s: invalid block layout (%d blocks)", bd->name, (int)nblocks);
    gs_int n = A->nrows;
    for (gs_int b = 0; b < nblocks; b++) {
        if (off[b + 1] <= off[b])
            return GS_ERROR(GS_ERR_ARG, "%s: block %d is empty or the offsets decrease (%d, %d)", bd->name,
                            (int)b, (int)off[b], (int)off[b + 1]);
        for (gs_int e = off[b]; e < off[b + 1]; e++) {
            if (rows[e] < 0 || rows[e] >= n)
                return GS_ERROR(GS_ERR_ARG, "%s: block %d holds row %d, outside 0..%d", bd->name, (int)b,
                                (int)rows[e], (int)n - 1);
            if (e > off[b] && rows[e] <= rows[e - 1])
                return GS_ERROR(GS_ERR_ARG, "%s: the rows of block %d are not strictly increasing (%d after %d)",
                                bd->name, (int)b, (int)rows[e], (int)rows[e - 1]);
            if (owner && owner[e] != -1 && owner[e] != rows[e])
                return GS_ERROR(GS_ERR_ARG, "%s: extended unknown %d (row %d) writes back to row %d", bd->name,
                                (int)e, (int)rows[e], (int)owner[e]);
        }
    }
    return GS_OK;
}

gs_status gs_blockdiag_setup_symbolic(gs_blockdiag *bd, gs_pc *pc, const gs_csr *A, gs_int nblocks,
                                      const gs_int *off, const gs_int *rows, const gs_int *owner)
{
    gs_status st = GS_OK;
    gs_int *loc = NULL;
    par_failure fail = {.block = -1, .st = GS_OK};

    gs_blockdiag_free(bd);
    GS_TRY(check_layout(bd, A, nblocks, off, rows, owner));
    gs_int n = A->nrows, next = off[nblocks];
    bd->n = n;
    bd->nnz_A = A->nnz;
    bd->next = next;
    GS_TRY(GS_MALLOC(bd->off, (size_t)nblocks + 1));
    memcpy(bd->off, off, ((size_t)nblocks + 1) * sizeof *off);
    GS_TRY(GS_MALLOC(bd->rows, next));
    if (next > 0) memcpy(bd->rows, rows, (size_t)next * sizeof *rows);
    if (pc->row_names) {
        GS_TRY(GS_MALLOC(bd->names, next));
        for (gs_int e = 0; e < next; e++) bd->names[e] = pc->row_names[rows[e]];
    }
    const gs_int *names = bd->names ? bd->names : bd->rows;
    GS_TRY(GS_CALLOC(bd->blk, nblocks));
    GS_TRY(GS_CALLOC(bd->src, nblocks));
    GS_TRY(GS_CALLOC(bd->Lb, nblocks));
    GS_TRY(GS_CALLOC(bd->Ub, nblocks));
    bd->nblocks = nblocks; /* from here on gs_blockdiag_free walks the per-block arrays */

    /* A(S_b, S_b) for every block, with the map to A's values that setup_numeric refreshes from. */
    double t0 = gs_wtime();
    GS_TRY(GS_MALLOC(loc, n));
    for (gs_int i = 0; i < n; i++) loc[i] = -1;
    int64_t nnzb = 0;
    for (gs_int b = 0; b < nblocks; b++) {
        GS_TRY(extract_block(A, off[b + 1] - off[b], rows + off[b], loc, &bd->blk[b], &bd->src[b]));
        nnzb += bd->blk[b].nnz;
    }
    if (nnzb > GS_INT_MAX)
        GS_FAIL(GS_ERR_UNSUPPORTED, "%s: the blocks hold %lld entries, more than 32-bit indices allow", bd->name,
                (long long)nnzb);
    bd->nnz_blocks = (gs_int)nnzb;
    bd->time_extract = gs_wtime() - t0;

    /* ILU(k): the fill pattern of each block, once (ILUT's pattern depends on the values). */
    t0 = gs_wtime();
    if (bd->local == GS_BLOCK_ILUK) {
        int k = bd->opts.fill_level;
#pragma omp parallel for schedule(dynamic)
        for (gs_int b = 0; b < nblocks; b++) {
            gs_status sb = gs_iluk_symbolic(&bd->blk[b], k, &bd->Lb[b], &bd->Ub[b]);
            if (sb != GS_OK) par_failure_record(&fail, b, sb);
        }
        if (fail.st != GS_OK)
            GS_FAIL(fail.st, "%s: symbolic ILU(%d) of block %d (%d rows, first global row %d): %s", bd->name, k,
                    (int)fail.block, (int)(off[fail.block + 1] - off[fail.block]), (int)names[off[fail.block]] + 1,
                    fail.msg);
    }
    bd->time_symbolic = gs_wtime() - t0;

    if (next > 0) {
        GS_TRY(gs_ivec_create(pc->be, next, bd->rows, &bd->gather));
        if (owner) GS_TRY(gs_ivec_create(pc->be, next, owner, &bd->scatter));
        GS_TRY(gs_vec_create(pc->be, next, &bd->xe));
        GS_TRY(gs_vec_create(pc->be, next, &bd->ye));
        const bool single = gs_pc_single_precision(pc->cfg);
        GS_TRY(gs_trisolve_create_from_config(pc->cfg, pc->be, GS_LOWER, true, single, &bd->tl));
        GS_TRY(gs_trisolve_create_from_config(pc->cfg, pc->be, GS_UPPER, false, single, &bd->tu));
        pc->variable = bd->tl->variable || bd->tu->variable;
    }

cleanup:
    gs_free(&loc);
    if (st != GS_OK) gs_blockdiag_free(bd);
    return st;
}

/* Factor block b from A's current values. */
static gs_status factor_block(gs_blockdiag *bd, const gs_csr *A, gs_int b, gs_factor_info *info)
{
    gs_csr *B = &bd->blk[b];
    const gs_int *src = bd->src[b];
    for (gs_int e = 0; e < B->nnz; e++) B->val[e] = A->val[src[e]];
    gs_factor_opts o = bd->opts;
    o.row_offset = 0;
    o.row_names = (bd->names ? bd->names : bd->rows) + bd->off[b]; /* messages name the original row */
    memset(info, 0, sizeof *info);
    info->first_shifted = -1;
    if (bd->local == GS_BLOCK_ILUK) {
        GS_CALL(gs_ilu_numeric(B, &o, &bd->Lb[b], &bd->Ub[b], info));
    } else {
        gs_csr_free(&bd->Lb[b]);
        gs_csr_free(&bd->Ub[b]);
        GS_CALL(gs_ilut(B, &o, &bd->Lb[b], &bd->Ub[b], info));
    }
    gs_int m = bd->off[b + 1] - bd->off[b];
    if (bd->Lb[b].nrows != m || bd->Ub[b].nrows != m || !bd->Lb[b].val || !bd->Ub[b].val)
        return GS_ERROR(GS_ERR_INTERNAL, "%s: the factors of block %d are not %d x %d with values", bd->name,
                        (int)b, (int)m, (int)m);
    return GS_OK;
}

/* T = diag(T_0, T_1, ...) over the extended space: block b's rows and columns shifted by off[b]. */
static gs_status assemble(const gs_blockdiag *bd, const gs_csr *Tb, gs_csr *T)
{
    gs_status st = GS_OK;
    int64_t nnz = 0;
    for (gs_int b = 0; b < bd->nblocks; b++) nnz += Tb[b].nnz;
    if (nnz > GS_INT_MAX)
        return GS_ERROR(GS_ERR_UNSUPPORTED, "%s: the factor has %lld entries, more than 32-bit indices allow",
                        bd->name, (long long)nnz);
    gs_csr_free(T);
    GS_TRY(gs_csr_alloc(T, bd->next, bd->next, (gs_int)nnz, true));
    gs_int q = 0;
    for (gs_int b = 0; b < bd->nblocks; b++) {
        const gs_csr *B = &Tb[b];
        gs_int o = bd->off[b];
        for (gs_int i = 0; i < B->nrows; i++) {
            for (gs_int p = B->rowptr[i]; p < B->rowptr[i + 1]; p++) {
                T->colind[q] = B->colind[p] + o;
                T->val[q] = B->val[p];
                q++;
            }
            T->rowptr[o + i + 1] = q;
        }
    }
cleanup:
    return st;
}

gs_status gs_blockdiag_setup_numeric(gs_blockdiag *bd, gs_pc *pc, const gs_csr *A)
{
    gs_status st = GS_OK;
    gs_factor_info *infos = NULL;
    par_failure fail = {.block = -1, .st = GS_OK};

    if (A->nrows != bd->n || A->nnz != bd->nnz_A)
        return GS_ERROR(GS_ERR_ARG,
                        "%s: numeric setup with a %d-row matrix of %d nonzeros after a symbolic setup with %d rows "
                        "and %d nonzeros; the pattern must not change (run setup_symbolic again)",
                        bd->name, (int)A->nrows, (int)A->nnz, (int)bd->n, (int)bd->nnz_A);
    if (!A->val) return GS_ERROR(GS_ERR_ARG, "%s: the matrix has no values", bd->name);
    gs_int nb = bd->nblocks;

    double t0 = gs_wtime();
    GS_TRY(GS_CALLOC(infos, nb));
#pragma omp parallel for schedule(dynamic)
    for (gs_int b = 0; b < nb; b++) {
        gs_status sb = factor_block(bd, A, b, &infos[b]);
        if (sb != GS_OK) par_failure_record(&fail, b, sb);
    }
    if (fail.st != GS_OK)
        GS_FAIL(fail.st, "%s: factorization of block %d (%d rows): %s", bd->name, (int)fail.block,
                (int)(bd->off[fail.block + 1] - bd->off[fail.block]), fail.msg);

    /* totals; shifted rows are listed in block order */
    memset(&bd->info, 0, sizeof bd->info);
    bd->info.first_shifted = -1;
    for (gs_int b = 0; b < nb; b++) {
        const gs_factor_info *ib = &infos[b];
        for (gs_int s = 0; s < ib->nshifted && s < 16; s++) {
            if (bd->info.nshifted + s < 16) bd->info.shifted_rows[bd->info.nshifted + s] = ib->shifted_rows[s];
        }
        if (ib->nshifted > 0 && bd->info.first_shifted < 0) bd->info.first_shifted = ib->first_shifted;
        bd->info.nshifted += ib->nshifted;
    }
    GS_TRY(assemble(bd, bd->Lb, &bd->L));
    GS_TRY(assemble(bd, bd->Ub, &bd->U));
    bd->info.nnz_L = bd->L.nnz;
    bd->info.nnz_U = bd->U.nnz;
    bd->time_factor = gs_wtime() - t0;

    t0 = gs_wtime();
    if (bd->next > 0) {
        GS_TRY(gs_trisolve_analyse(bd->tl, &bd->L));
        GS_TRY(gs_trisolve_analyse(bd->tu, &bd->U));
        pc->variable = bd->tl->variable || bd->tu->variable;
    }
    bd->time_analyse = gs_wtime() - t0;

cleanup:
    gs_free(&infos);
    return st;
}

gs_status gs_blockdiag_apply(gs_blockdiag *bd, const gs_vector *r, gs_vector *z)
{
    if (bd->next == 0) return GS_OK;
    /* x_e = R_g r;  y_e = L^{-1} x_e;  x_e = U^{-1} y_e;  z = R_s^T x_e */
    GS_CALL(gs_vec_gather(r, bd->gather, bd->xe));
    GS_CALL(gs_trisolve_solve(bd->tl, bd->xe, bd->ye));
    GS_CALL(gs_trisolve_solve(bd->tu, bd->ye, bd->xe));
    GS_CALL(gs_vec_scatter(bd->xe, bd->scatter ? bd->scatter : bd->gather, z));
    return GS_OK;
}

static void view_key_int(gs_report *rep, const char *prefix, const char *name, long long v)
{
    char key[160];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK) gs_report_int(rep, key, v);
}

static void view_key_double(gs_report *rep, const char *prefix, const char *name, double v)
{
    char key[160];
    if (gs_report_keyf(key, sizeof key, "%s.%s", prefix, name) == GS_OK) gs_report_double(rep, key, v);
}

void gs_blockdiag_view(const gs_blockdiag *bd, gs_report *rep, const char *prefix)
{
    char key[160];
    if (gs_report_keyf(key, sizeof key, "%s.local", prefix) == GS_OK)
        gs_report_string(rep, key, bd->local == GS_BLOCK_ILUK ? "iluk" : "ilut");
    if (bd->local == GS_BLOCK_ILUK) view_key_int(rep, prefix, "fill_level", bd->opts.fill_level);
    else {
        view_key_double(rep, prefix, "drop_tolerance", bd->opts.drop_tol);
        view_key_int(rep, prefix, "max_fill", bd->opts.max_fill);
    }
    if (!bd->L.rowptr) return; /* not factored yet */
    view_key_int(rep, prefix, "nnz_L", bd->L.nnz);
    view_key_int(rep, prefix, "nnz_U", bd->U.nnz);
    view_key_double(rep, prefix, "fill_ratio",
                    bd->nnz_A > 0 ? ((double)bd->L.nnz + (double)bd->U.nnz) / (double)bd->nnz_A : 0.0);
    /* same keys as the ilu plug-ins: the count and the first (up to 16) rows, 1-based, of the
     * original matrix */
    view_key_int(rep, prefix, "pivots_shifted", bd->info.nshifted);
    char rows[16 * 12 + 1] = "";
    size_t len = 0;
    gs_int shown = bd->info.nshifted < 16 ? bd->info.nshifted : 16;
    for (gs_int t = 0; t < shown; t++) {
        int w = snprintf(rows + len, sizeof rows - len, "%s%d", t ? "," : "", (int)bd->info.shifted_rows[t] + 1);
        if (w < 0 || (size_t)w >= sizeof rows - len) break;
        len += (size_t)w;
    }
    if (gs_report_keyf(key, sizeof key, "%s.shifted_rows", prefix) == GS_OK) gs_report_string(rep, key, rows);
    view_key_double(rep, prefix, "time_extract", bd->time_extract);
    view_key_double(rep, prefix, "time_factor_symbolic", bd->time_symbolic);
    view_key_double(rep, prefix, "time_factor_numeric", bd->time_factor);
    view_key_double(rep, prefix, "time_trisolve_analysis", bd->time_analyse);
    if (bd->tl) gs_trisolve_view(bd->tl, rep, "trisolve.lower");
    if (bd->tu) gs_trisolve_view(bd->tu, rep, "trisolve.upper");
}

/* ------------------------------------------------------------------------------------------------
 * BILU(k) / BILUT
 * ------------------------------------------------------------------------------------------------ */

typedef struct bilu_data {
    gs_blockdiag bd;
    gs_int nparts; /* requested */
    int seed;
    gs_partition_kind partition; /* preconditioner.partition */
    gs_int nonempty, bmin, bmax, dropped;
    double time_partition;
} bilu_data;

static gs_status bilu_symbolic(gs_pc *pc, const gs_csr *A)
{
    gs_status st = GS_OK;
    bilu_data *d = pc->data;
    gs_int *part = NULL, *cnt = NULL, *perm = NULL, *off = NULL;
    gs_int n = A->nrows;

    double t0 = gs_wtime();
    GS_TRY(GS_MALLOC(part, n));
    GS_TRY(gs_partition(A, d->nparts, d->partition, d->seed, part));
    d->time_partition = gs_wtime() - t0;

    /* Part ids lie below min(nparts, n) (nparts >= n gives part[i] = i). Counting sort, stable: rows
     * of a part keep their original order, so perm (new -> old) numbers part 0 first, then 1, ... */
    gs_int np = d->nparts < n ? d->nparts : n;
    GS_TRY(GS_CALLOC(cnt, (size_t)np + 1));
    for (gs_int i = 0; i < n; i++) cnt[part[i] + 1]++;
    d->nonempty = 0;
    d->bmin = n;
    d->bmax = 0;
    for (gs_int p = 0; p < np; p++) {
        gs_int s = cnt[p + 1];
        if (s == 0) continue; /* METIS may leave a part empty: it gets no block */
        d->nonempty++;
        if (s < d->bmin) d->bmin = s;
        if (s > d->bmax) d->bmax = s;
    }
    if (d->nonempty == 0) d->bmin = 0;
    GS_TRY(GS_MALLOC(off, (size_t)d->nonempty + 1));
    off[0] = 0;
    for (gs_int p = 0, b = 0; p < np; p++)
        if (cnt[p + 1] > 0) {
            off[b + 1] = off[b] + cnt[p + 1];
            b++;
        }
    for (gs_int p = 0; p < np; p++) cnt[p + 1] += cnt[p]; /* cnt[p] = first position of part p */
    GS_TRY(GS_MALLOC(perm, n));
    for (gs_int i = 0; i < n; i++) perm[cnt[part[i]]++] = i;

    GS_TRY(gs_blockdiag_setup_symbolic(&d->bd, pc, A, d->nonempty, off, perm, NULL));
    d->dropped = A->nnz - d->bd.nnz_blocks;

cleanup:
    gs_free(&part);
    gs_free(&cnt);
    gs_free(&perm);
    gs_free(&off);
    return st;
}

static gs_status bilu_numeric(gs_pc *pc, const gs_csr *A)
{
    bilu_data *d = pc->data;
    return gs_blockdiag_setup_numeric(&d->bd, pc, A);
}

static gs_status bilu_apply(gs_pc *pc, const gs_vector *r, gs_vector *z)
{
    bilu_data *d = pc->data;
    return gs_blockdiag_apply(&d->bd, r, z);
}

static void bilu_destroy(gs_pc *pc)
{
    bilu_data *d = pc->data;
    if (d) gs_blockdiag_free(&d->bd);
    gs_free(&pc->data);
}

static void bilu_view(const gs_pc *pc, gs_report *rep)
{
    const bilu_data *d = pc->data;
    gs_report_int(rep, "preconditioner.blocks", d->nparts);
    gs_report_string(rep, "preconditioner.partition", gs_partition_kind_name(d->partition));
    gs_report_int(rep, "preconditioner.blocks_nonempty", d->nonempty);
    gs_report_int(rep, "preconditioner.block_size_min", d->bmin);
    gs_report_int(rep, "preconditioner.block_size_max", d->bmax);
    gs_report_int(rep, "preconditioner.dropped_couplings", d->dropped);
    gs_report_double(rep, "preconditioner.time_partition", d->time_partition);
    gs_blockdiag_view(&d->bd, rep, "preconditioner");
}

static const gs_pc_ops bilu_ops = {
    .setup_symbolic = bilu_symbolic,
    .setup_numeric = bilu_numeric,
    .apply = bilu_apply,
    .destroy = bilu_destroy,
    .view = bilu_view,
};

static gs_status bilu_create(gs_pc *pc, gs_block_local local, const char *name)
{
    gs_status st = GS_OK;
    bilu_data *d = NULL;
    GS_TRY(gs_calloc(&d, 1, sizeof *d));
    GS_TRY(gs_blockdiag_init(&d->bd, pc->cfg, local, name));
    d->nparts = (gs_int)gs_config_int(pc->cfg, "preconditioner.blocks");
    d->seed = (int)gs_config_int(pc->cfg, "preconditioner.seed");
    d->partition = gs_partition_kind_of(gs_config_string(pc->cfg, "preconditioner.partition"));
    pc->data = d;
    pc->ops = &bilu_ops;
    return GS_OK;
cleanup:
    gs_free(&d);
    return st;
}

gs_status gs_pc_create_bilu(gs_pc *pc) { return bilu_create(pc, GS_BLOCK_ILUK, "BILU"); }

gs_status gs_pc_create_bilut(gs_pc *pc) { return bilu_create(pc, GS_BLOCK_ILUT, "BILUT"); }
