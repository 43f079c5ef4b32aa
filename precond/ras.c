/* Restricted additive Schwarz RAS(delta): z = sum_i R_i,own^T (L_i U_i)^{-1} R_i r, where S_i is METIS
 * part i grown by delta layers of graph neighbours, R_i restricts to S_i, L_i U_i ~ A(S_i, S_i) by
 * ILU(k), ILUT or ParILU sweeps, and only the rows part i owns are written back. All S_i are laid out
 * consecutively in one extended space, so the local solves are ONE block-diagonal L and U solve (HEC
 * paper eq. (4)); with local = "parilu" the extended block-diagonal matrix is factored by one set of
 * ParILU sweeps (precond/parilu.h: the blocks are independent in its equations). */
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "precond/block.h"
#include "precond/ordering.h"
#include "precond/parilu.h"

typedef struct ras_data {
    gs_blockdiag bd;
    gs_parilu *par; /* local = "parilu": the extended block-diagonal matrix factored by ParILU sweeps */
    gs_int nparts; /* requested */
    int seed, overlap;
    gs_partition_kind partition; /* preconditioner.partition */
    gs_int nonempty, smax;
    double savg;
    double time_partition, time_overlap;
} ras_data;

static gs_status ras_symbolic(gs_pc *pc, const gs_csr *A)
{
    gs_status st = GS_OK;
    ras_data *d = pc->data;
    gs_csr G = {0};
    gs_int *part = NULL, *cnt = NULL, *core = NULL, *pid = NULL, *off = NULL, *rows = NULL, *owner = NULL;
    gs_int **sub = NULL, *subn = NULL, *nowned = NULL;
    gs_int n = A->nrows, nb = 0;
    char failmsg[1024] = "";
    gs_status failst = GS_OK;
    gs_int failpart = -1;

    double t0 = gs_wtime();
    GS_TRY(GS_MALLOC(part, n));
    GS_TRY(gs_partition(A, d->nparts, d->partition, d->seed, part));
    d->time_partition = gs_wtime() - t0;

    /* The owned rows of each part, increasing (counting sort by part, stable). */
    t0 = gs_wtime();
    gs_int np = d->nparts < n ? d->nparts : n;
    GS_TRY(GS_CALLOC(cnt, (size_t)np + 1));
    for (gs_int i = 0; i < n; i++) cnt[part[i] + 1]++;
    for (gs_int p = 0; p < np; p++) nb += cnt[p + 1] > 0; /* METIS may leave parts empty: no subdomain */
    GS_TRY(GS_MALLOC(pid, (size_t)nb + 1));
    for (gs_int p = 0, b = 0; p < np; p++)
        if (cnt[p + 1] > 0) pid[b++] = p;
    for (gs_int p = 0; p < np; p++) cnt[p + 1] += cnt[p];
    GS_TRY(GS_MALLOC(core, n));
    {
        gs_int *pos = NULL;
        GS_TRY(GS_MALLOC(pos, (size_t)np + 1));
        memcpy(pos, cnt, ((size_t)np + 1) * sizeof *pos);
        for (gs_int i = 0; i < n; i++) core[pos[part[i]]++] = i;
        gs_free(&pos);
    }

    /* S_i = part i grown by `overlap` layers of A + A^T's graph, in parallel over the parts. */
    GS_TRY(gs_csr_symmetric_graph(A, &G));
    GS_TRY(GS_CALLOC(sub, nb));
    GS_TRY(GS_CALLOC(subn, nb));
    int layers = d->overlap;
#pragma omp parallel for schedule(dynamic)
    for (gs_int b = 0; b < nb; b++) {
        gs_int p = pid[b];
        gs_status sb = gs_grow_overlap(&G, cnt[p + 1] - cnt[p], core + cnt[p], layers, &sub[b], &subn[b]);
        if (sb != GS_OK) {
#pragma omp critical(gs_ras_failure)
            {
                if (failst == GS_OK || b < failpart) {
                    failst = sb;
                    failpart = b;
                    snprintf(failmsg, sizeof failmsg, "%s", gs_error_message());
                }
            }
            gs_error_clear(); /* the message lived in this worker thread's error state */
        }
    }
    if (failst != GS_OK)
        GS_FAIL(failst, "RAS: growing subdomain %d by %d layers: %s", (int)pid[failpart], layers, failmsg);

    /* The extended space: S_0, S_1, ... consecutively; owner[e] = the global row when subdomain b owns
     * it (it is in part pid[b]), -1 for an overlap copy that the restricted prolongation discards. */
    int64_t next = 0;
    for (gs_int b = 0; b < nb; b++) next += subn[b];
    if (next > GS_INT_MAX)
        GS_FAIL(GS_ERR_UNSUPPORTED, "RAS: the extended subdomains hold %lld unknowns, more than 32-bit indices allow",
                (long long)next);
    GS_TRY(GS_MALLOC(off, (size_t)nb + 1));
    GS_TRY(GS_MALLOC(rows, next));
    GS_TRY(GS_MALLOC(owner, next));
    GS_TRY(GS_CALLOC(nowned, n));
    off[0] = 0;
    d->smax = 0;
    for (gs_int b = 0; b < nb; b++) {
        gs_int o = off[b];
        for (gs_int k = 0; k < subn[b]; k++) {
            gs_int g = sub[b][k];
            rows[o + k] = g;
            owner[o + k] = part[g] == pid[b] ? g : -1;
            if (owner[o + k] >= 0) nowned[g]++;
        }
        off[b + 1] = o + subn[b];
        if (subn[b] > d->smax) d->smax = subn[b];
    }
    for (gs_int i = 0; i < n; i++)
        if (nowned[i] != 1)
            GS_FAIL(GS_ERR_INTERNAL, "RAS: row %d is owned by %d subdomains; expected exactly one", (int)i + 1,
                    (int)nowned[i]);
    d->nonempty = nb;
    d->savg = nb > 0 ? (double)next / (double)nb : 0.0;
    d->time_overlap = gs_wtime() - t0;

    if (d->par) gs_parilu_set_row_names(d->par, pc->row_names);
    if (d->par) GS_TRY(gs_parilu_setup_symbolic_blocks(d->par, A, nb, off, rows, owner));
    else GS_TRY(gs_blockdiag_setup_symbolic(&d->bd, pc, A, nb, off, rows, owner));

cleanup:
    if (sub)
        for (gs_int b = 0; b < nb; b++) gs_free(&sub[b]);
    gs_free(&sub);
    gs_free(&subn);
    gs_free(&nowned);
    gs_csr_free(&G);
    gs_free(&part);
    gs_free(&cnt);
    gs_free(&core);
    gs_free(&pid);
    gs_free(&off);
    gs_free(&rows);
    gs_free(&owner);
    return st;
}

static gs_status ras_numeric(gs_pc *pc, const gs_csr *A)
{
    ras_data *d = pc->data;
    if (d->par) {
        GS_CALL(gs_parilu_setup_numeric(d->par, A));
        pc->variable = gs_parilu_variable(d->par);
        return GS_OK;
    }
    return gs_blockdiag_setup_numeric(&d->bd, pc, A);
}

static gs_status ras_apply(gs_pc *pc, const gs_vector *r, gs_vector *z)
{
    ras_data *d = pc->data;
    if (d->par) return gs_parilu_apply(d->par, r, z);
    return gs_blockdiag_apply(&d->bd, r, z);
}

static void ras_destroy(gs_pc *pc)
{
    ras_data *d = pc->data;
    if (d) {
        gs_blockdiag_free(&d->bd);
        gs_parilu_destroy(&d->par);
    }
    gs_free(&pc->data);
}

static void ras_view(const gs_pc *pc, gs_report *rep)
{
    const ras_data *d = pc->data;
    gs_report_int(rep, "preconditioner.blocks", d->nparts);
    gs_report_string(rep, "preconditioner.partition", gs_partition_kind_name(d->partition));
    gs_report_int(rep, "preconditioner.blocks_nonempty", d->nonempty);
    gs_report_int(rep, "preconditioner.overlap", d->overlap);
    gs_report_int(rep, "preconditioner.extended_size", d->bd.next);
    gs_report_double(rep, "preconditioner.subdomain_size_avg", d->savg);
    gs_report_int(rep, "preconditioner.subdomain_size_max", d->smax);
    gs_report_int(rep, "preconditioner.extended_nnz", d->bd.nnz_blocks);
    gs_report_double(rep, "preconditioner.time_partition", d->time_partition);
    gs_report_double(rep, "preconditioner.time_overlap", d->time_overlap);
    if (d->par) gs_parilu_view(d->par, rep, "preconditioner"); /* also local, extended_size, extended_nnz */
    else gs_blockdiag_view(&d->bd, rep, "preconditioner");
}

static const gs_pc_ops ras_ops = {
    .setup_symbolic = ras_symbolic,
    .setup_numeric = ras_numeric,
    .apply = ras_apply,
    .destroy = ras_destroy,
    .view = ras_view,
};

gs_status gs_pc_create_ras(gs_pc *pc)
{
    gs_status st = GS_OK;
    ras_data *d = NULL;
    if (!pc->cfg) return GS_ERROR(GS_ERR_ARG, "RAS: the preconditioner has no configuration");
    const char *local = gs_config_string(pc->cfg, "preconditioner.local");
    gs_block_local lk = GS_BLOCK_ILUK; /* "parilu": the engine's options are still read, unused */
    bool parilu = strcmp(local, "parilu") == 0;
    if (strcmp(local, "ilut") == 0) lk = GS_BLOCK_ILUT;
    else if (strcmp(local, "iluk") != 0 && !parilu)
        return GS_ERROR(GS_ERR_UNSUPPORTED,
                        "RAS: preconditioner.local = \"%s\" is not supported; the subdomains can be factored by "
                        "\"iluk\" (ILU(k), preconditioner.fill_level), \"ilut\" (ILUT, "
                        "preconditioner.drop_tolerance and max_fill) or \"parilu\" (ParILU sweeps, "
                        "preconditioner.sweeps, sweep_type, order, fill_level)",
                        local);
    GS_TRY(gs_calloc(&d, 1, sizeof *d));
    GS_TRY(gs_blockdiag_init(&d->bd, pc->cfg, lk, "RAS"));
    if (parilu) GS_TRY(gs_parilu_create(pc->be, pc->cfg, &d->par));
    d->nparts = (gs_int)gs_config_int(pc->cfg, "preconditioner.blocks");
    d->seed = (int)gs_config_int(pc->cfg, "preconditioner.seed");
    d->partition = gs_partition_kind_of(gs_config_string(pc->cfg, "preconditioner.partition"));
    d->overlap = (int)gs_config_int(pc->cfg, "preconditioner.overlap");
    pc->data = d;
    pc->ops = &ras_ops;
    return GS_OK;
cleanup:
    gs_free(&d);
    return st;
}
