/* Preconditioners across ranks (dist/pc_dist.h): block Jacobi, z_r = M_r^{-1} r_r; RAS,
 * z_r = (M_r^{-1} R_r r) restricted to the owned rows. M_r is a single-process plug-in built on the rank's
 * local backend (host or cuda): preconditioner.type on the diagonal block, or "ras" with one part and no
 * overlap on the subdomain matrix A(S_r, S_r) (that is, A(S_r, S_r) factored by preconditioner.local, as
 * precond/ras.c factors each subdomain). Its messages name rows by their original index
 * (gs_pc_set_row_names). */
#include "dist/pc_dist.h"

#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "dist/backend_mpi.h"
#include "dist/subdomain.h"

typedef struct dist_pc {
    gs_pc *inner;      /* NULL on a rank that owns no rows */
    gs_config *lcfg;   /* the local plug-in's configuration */
    gs_backend *be, *local;
    bool ras;
    int delta, ranks;
    /* RAS */
    gs_dist_subdomain sub;
    gs_vector *re, *ze; /* R_r r and M_r^{-1} R_r r on the local backend (sub.m) */
    double *ovl, *sendbuf;
    double *rbuf, *rebuf; /* a local backend that is not the host's: r (then z) and R_r r (then M^{-1} R_r r) */
    MPI_Request *req;
    /* over NCCL (on_devices): the exchange and the restriction on the local backend, no host copy */
    bool on_devices;
    gs_ivec *send_ix, *own_pos, *ovl_pos; /* xchg.send_idx, sub.own_pos, sub.ovl_pos */
    gs_vector *sendv, *ovl_dev;           /* the entries sent, the overlap entries received */
    long long nonempty, ext_total, ext_nnz, ext_max; /* over the ranks */
    double time_overlap;                             /* the slowest rank's */
    /* the local factors over the ranks (gs_dist_pc_summarize) */
    bool summed, have_nnz, have_shifts;
    long long nnz_L, nnz_U, shifted;
    long long nnz_A; /* the entries fill_ratio counts per */
    char shifted_rows[16 * 12 + 1];
} dist_pc;

bool gs_dist_pc_supported(const char *type, const char **why)
{
    if (strcmp(type, "auto") == 0) {
        if (why) *why = "\"auto\" is resolved before the preconditioner is made";
        return false;
    }
    return true;
}

gs_status gs_dist_pc_check(const gs_config *cfg, int P)
{
    const char *type = gs_config_string(cfg, "preconditioner.type"), *why = NULL;
    if (!gs_dist_pc_supported(type, &why))
        return GS_ERROR(GS_ERR_UNSUPPORTED, "preconditioner.type = \"%s\" on %d MPI ranks: %s", type, P, why);
    long long B = gs_config_int(cfg, "preconditioner.blocks");
    if ((strcmp(type, "bilu") == 0 || strcmp(type, "bilut") == 0) && B % P != 0)
        return GS_ERROR(GS_ERR_CONFIG,
                        "preconditioner.blocks = %lld on %d MPI ranks: the blocks must be a multiple of the ranks "
                        "(each rank's part is split into blocks / ranks local blocks)",
                        B, P);
    if (strcmp(type, "ras") == 0 && B != P && !gs_config_is_default(cfg, "preconditioner.blocks"))
        return GS_ERROR(GS_ERR_CONFIG,
                        "preconditioner.blocks = %lld with preconditioner.type = \"ras\" on %d MPI ranks: RAS across "
                        "ranks has one subdomain per rank (the %d parts of preconditioner.blocks = %d on one "
                        "process); set preconditioner.blocks = %d or leave it unset",
                        B, P, P, P, P);
    return GS_OK;
}

/* Everything a setup builds (the configuration stays). */
static void release(dist_pc *d)
{
    gs_pc_destroy(&d->inner);
    gs_dist_subdomain_free(&d->sub);
    gs_vec_destroy(&d->re);
    gs_vec_destroy(&d->ze);
    gs_free(&d->ovl);
    gs_free(&d->sendbuf);
    gs_free(&d->rbuf);
    gs_free(&d->rebuf);
    gs_free(&d->req);
    gs_ivec_destroy(&d->send_ix);
    gs_ivec_destroy(&d->own_pos);
    gs_ivec_destroy(&d->ovl_pos);
    gs_vec_destroy(&d->sendv);
    gs_vec_destroy(&d->ovl_dev);
    d->on_devices = false;
}

static gs_status ras_apply_devices(dist_pc *d, const gs_vector *r, gs_vector *z);

/* z = R_own (M^{-1} R r): the overlap entries of r from their owners, the local solve on the subdomain,
 * the owned rows of its solution. Every rank exchanges, also one without rows (it has no partners). On a
 * local backend that is not the host's, r, R_r r, M^{-1} R_r r and z pass through host buffers, unless
 * the ranks exchange over NCCL (ras_apply_devices). */
static gs_status ras_apply(dist_pc *d, const gs_vector *r, gs_vector *z)
{
    if (d->on_devices) return ras_apply_devices(d, r, z);
    const gs_dist_subdomain *s = &d->sub;
    const bool host = d->local->kind == GS_BACKEND_HOST;
    const double *rh = r->data;
    if (!host) {
        GS_CALL(gs_vec_download(r, d->rbuf));
        rh = d->rbuf;
    }
    GS_CALL(gs_backend_mpi_exchange(d->be, &s->xchg, rh, d->ovl, d->sendbuf, d->req));
    if (!d->inner) return GS_OK;
    double *re = host ? d->re->data : d->rebuf;
    for (gs_int i = 0; i < s->n_own; i++) re[s->own_pos[i]] = rh[i];
    for (gs_int k = 0; k < s->n_overlap; k++) re[s->ovl_pos[k]] = d->ovl[k];
    if (!host) GS_CALL(gs_vec_upload(d->re, re));
    GS_CALL(gs_pc_apply(d->inner, d->re, d->ze));
    if (host) {
        for (gs_int i = 0; i < s->n_own; i++) z->data[i] = d->ze->data[s->own_pos[i]];
        return GS_OK;
    }
    GS_CALL(gs_vec_download(d->ze, d->rebuf));
    for (gs_int i = 0; i < s->n_own; i++) d->rbuf[i] = d->rebuf[s->own_pos[i]];
    return gs_vec_upload(z, d->rbuf);
}

/* ras_apply over NCCL: the entries to send gathered, the exchange between the devices, r's owned and
 * overlap entries scattered into R_r r, the local solve, and its owned rows gathered into z, all on the
 * local backend. */
static gs_status ras_apply_devices(dist_pc *d, const gs_vector *r, gs_vector *z)
{
    const gs_dist_subdomain *s = &d->sub;
    gs_vector rl = gs_backend_mpi_local_view(r), zl = gs_backend_mpi_local_view(z);
    if (d->send_ix) GS_CALL(gs_vec_gather(&rl, d->send_ix, d->sendv));
    GS_CALL(gs_backend_mpi_exchange_device(d->be, &s->xchg, d->sendv, d->ovl_dev));
    if (!d->inner) return GS_OK;
    if (d->own_pos) GS_CALL(gs_vec_scatter(&rl, d->own_pos, d->re));
    if (d->ovl_pos) GS_CALL(gs_vec_scatter(d->ovl_dev, d->ovl_pos, d->re));
    GS_CALL(gs_pc_apply(d->inner, d->re, d->ze));
    if (d->own_pos) GS_CALL(gs_vec_gather(d->ze, d->own_pos, &zl));
    return GS_OK;
}

static gs_status dist_apply(gs_pc *pc, const gs_vector *r, gs_vector *z)
{
    dist_pc *d = pc->data;
    if (d->ras) return ras_apply(d, r, z);
    if (!d->inner) return GS_OK;
    gs_vector rl = gs_backend_mpi_local_view(r), zl = gs_backend_mpi_local_view(z);
    return gs_pc_apply(d->inner, &rl, &zl);
}

static void dist_destroy(gs_pc *pc)
{
    dist_pc *d = pc->data;
    if (!d) return;
    release(d);
    gs_config_destroy(&d->lcfg);
    gs_free(&pc->data);
}

/* Rank 0's view: the local plug-in's keys (its own block or subdomain), and for RAS the subdomains'
 * sizes over all ranks under the keys of the single-process RAS. */
static void dist_view(const gs_pc *pc, gs_report *rep)
{
    const dist_pc *d = pc->data;
    gs_report_string(rep, "preconditioner.distributed",
                     d->ras ? "restricted additive Schwarz over the ranks' subdomains (overlap rows from the "
                              "ranks that own them)"
                            : "block Jacobi over the ranks' diagonal blocks");
    if (d->inner && d->inner->ops->view) d->inner->ops->view(d->inner, rep);
    if (d->inner && d->inner->stability_estimated)
        gs_report_double(rep, "preconditioner.stability_estimate", d->inner->stability_estimate);
    if (d->summed && d->have_nnz) {
        gs_report_int(rep, "preconditioner.nnz_L", d->nnz_L);
        gs_report_int(rep, "preconditioner.nnz_U", d->nnz_U);
        gs_report_double(rep, "preconditioner.fill_ratio",
                         d->nnz_A > 0 ? (double)(d->nnz_L + d->nnz_U) / (double)d->nnz_A : 0.0);
    }
    if (d->summed && d->have_shifts) {
        gs_report_int(rep, "preconditioner.pivots_shifted", d->shifted);
        gs_report_string(rep, "preconditioner.shifted_rows", d->shifted_rows);
    }
    if (!d->ras) return;
    gs_report_int(rep, "preconditioner.blocks", d->ranks);
    gs_report_int(rep, "preconditioner.blocks_nonempty", d->nonempty);
    gs_report_int(rep, "preconditioner.overlap", d->delta);
    gs_report_int(rep, "preconditioner.extended_size", d->ext_total);
    gs_report_double(rep, "preconditioner.subdomain_size_avg",
                     d->nonempty > 0 ? (double)d->ext_total / (double)d->nonempty : 0.0);
    gs_report_int(rep, "preconditioner.subdomain_size_max", d->ext_max);
    gs_report_int(rep, "preconditioner.extended_nnz", d->ext_nnz);
    gs_report_double(rep, "preconditioner.time_overlap", d->time_overlap);
}

static const gs_pc_ops dist_pc_ops = {
    .apply = dist_apply,
    .destroy = dist_destroy,
    .view = dist_view,
};

gs_status gs_dist_pc_create(gs_backend *be, const gs_config *cfg, gs_pc **pc)
{
    gs_status st = GS_OK;
    gs_pc *p = NULL;
    dist_pc *d = NULL;
    int rank = 0, P = 1;
    if (!gs_backend_is_mpi(be))
        return GS_ERROR(GS_ERR_ARG, "a preconditioner across ranks needs the distributed backend");
    gs_backend_mpi_rank(be, &rank, &P);
    GS_CALL(gs_dist_pc_check(cfg, P));
    const char *type = gs_config_string(cfg, "preconditioner.type");
    GS_TRY(gs_calloc(&p, 1, sizeof *p));
    GS_TRY(gs_calloc(&d, 1, sizeof *d));
    p->data = d;
    p->ops = &dist_pc_ops;
    p->be = be;
    p->cfg = cfg;
    p->identity = strcmp(type, "none") == 0;
    d->be = be;
    d->local = gs_backend_mpi_local(be);
    d->ranks = P;
    d->ras = strcmp(type, "ras") == 0;
    p->type = d->ras ? "ras" : "bjacobi";
    GS_TRY(gs_config_copy(cfg, &d->lcfg));
    if (strcmp(type, "bilu") == 0 || strcmp(type, "bilut") == 0) {
        char set[64];
        snprintf(set, sizeof set, "preconditioner.blocks=%lld", gs_config_int(cfg, "preconditioner.blocks") / P);
        GS_TRY(gs_config_set(d->lcfg, set));
    }
    if (d->ras) { /* the subdomain is made here; the local plug-in factors it whole */
        d->delta = (int)gs_config_int(cfg, "preconditioner.overlap");
        GS_TRY(gs_config_set(d->lcfg, "preconditioner.blocks=1"));
        GS_TRY(gs_config_set(d->lcfg, "preconditioner.overlap=0"));
    }
    *pc = p;
    return GS_OK;
cleanup:
    if (p) dist_destroy(p);
    gs_free(&p);
    return st;
}

/* RAS: the subdomain (collective), its sizes over the ranks, and the exchange's buffers. */
static gs_status ras_subdomain(dist_pc *d, const gs_dist *dist)
{
    gs_dist_subdomain *s = &d->sub;
    GS_CALL(gs_dist_subdomain_create(dist, d->delta, s));
    long long mine[3] = {s->m, s->A.nnz, s->m > 0}, sum[3];
    double mx[2] = {(double)s->m, s->time_build}, top[2];
    if (MPI_Allreduce(mine, sum, 3, MPI_LONG_LONG, MPI_SUM, dist->comm) != MPI_SUCCESS ||
        MPI_Allreduce(mx, top, 2, MPI_DOUBLE, MPI_MAX, dist->comm) != MPI_SUCCESS)
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: summing the RAS subdomains' sizes failed");
    d->ext_total = sum[0];
    d->ext_nnz = sum[1];
    d->nonempty = sum[2];
    d->ext_max = (long long)top[0];
    d->time_overlap = top[1];
    if (strcmp(gs_backend_mpi_transport(d->be, NULL), "nccl") == 0) { /* device arrays: no host copy */
        const gs_int nsend = s->xchg.send_off[s->xchg.nsend];
        d->on_devices = true;
        if (nsend > 0) {
            GS_CALL(gs_ivec_create(d->local, nsend, s->xchg.send_idx, &d->send_ix));
            GS_CALL(gs_vec_create(d->local, nsend, &d->sendv));
        }
        if (s->n_own > 0) GS_CALL(gs_ivec_create(d->local, s->n_own, s->own_pos, &d->own_pos));
        if (s->n_overlap > 0) {
            GS_CALL(gs_ivec_create(d->local, s->n_overlap, s->ovl_pos, &d->ovl_pos));
            GS_CALL(gs_vec_create(d->local, s->n_overlap, &d->ovl_dev));
        }
        return GS_OK;
    }
    GS_CALL(GS_MALLOC(d->ovl, s->n_overlap + 1));
    if (d->local->kind != GS_BACKEND_HOST) {
        GS_CALL(GS_MALLOC(d->rbuf, s->n_own + 1));
        GS_CALL(GS_MALLOC(d->rebuf, s->m + 1));
    }
    GS_CALL(GS_MALLOC(d->sendbuf, s->xchg.send_off[s->xchg.nsend] + 1));
    GS_CALL(GS_MALLOC(d->req, s->xchg.nrecv + s->xchg.nsend + 1));
    return GS_OK;
}

/* Block Jacobi: the local preconditioner reads the operator's diagonal block (A_own, the same entries as
 * dist->diag) where a factorization on the device can (gs_pc_set_operator). */
static gs_status share_operator(dist_pc *d, const gs_matrix *M)
{
    const gs_matrix *own = gs_mpi_mat_own(M);
    if (d->ras || !d->inner || !own || own->be != d->local) return GS_OK;
    return gs_pc_set_operator(d->inner, own);
}

gs_status gs_dist_pc_setup(gs_pc *pc, const gs_dist *dist, const gs_matrix *M)
{
    dist_pc *d = pc->data;
    release(d);
    pc->state = GS_PC_CREATED;
    pc->n = dist->halo.n_own;
    pc->time_symbolic = pc->time_numeric = 0.0;
    const gs_csr *A = &dist->diag; /* block Jacobi: the diagonal block, rows named by dist->rows */
    const gs_int *names = dist->rows;
    if (d->ras) {
        GS_CALL(ras_subdomain(d, dist));
        A = &d->sub.A;
        names = d->sub.names;
    }
    if (A->nrows > 0) {
        GS_CALL(gs_pc_create(gs_config_string(d->lcfg, "preconditioner.type"), d->local, d->lcfg, &d->inner));
        gs_pc_set_row_names(d->inner, names);
        GS_CALL(share_operator(d, M));
        if (d->ras) {
            GS_CALL(gs_vec_create(d->local, A->nrows, &d->re));
            GS_CALL(gs_vec_create(d->local, A->nrows, &d->ze));
        }
        GS_CALL(gs_pc_setup_symbolic(d->inner, A));
        GS_CALL(gs_pc_setup_numeric(d->inner, A));
        pc->time_symbolic = d->inner->time_symbolic;
        pc->time_numeric = d->inner->time_numeric;
        pc->variable = d->inner->variable;
    }
    if (d->ras) pc->time_symbolic += d->sub.time_build;
    pc->state = GS_PC_READY;
    d->summed = false;
    return GS_OK;
}

/* The local plug-in's factor facts: nnz_L, nnz_U (have[0]), pivots_shifted (have[1]) and the shifted rows
 * (a string of up to 16 comma-separated rows). */
static gs_status local_facts(const dist_pc *d, long long v[3], long long have[2], char *rows, size_t len)
{
    gs_report *r = NULL;
    const gs_report_entry *e;
    rows[0] = '\0';
    if (!d->inner || !d->inner->ops->view) return GS_OK;
    GS_CALL(gs_report_create(&r));
    d->inner->ops->view(d->inner, r);
    if ((e = gs_report_find(r, "preconditioner.nnz_L")) && e->type == GS_REPORT_INT) v[0] = e->i, have[0] = 1;
    if ((e = gs_report_find(r, "preconditioner.nnz_U")) && e->type == GS_REPORT_INT) v[1] = e->i;
    if ((e = gs_report_find(r, "preconditioner.pivots_shifted")) && e->type == GS_REPORT_INT) v[2] = e->i, have[1] = 1;
    if ((e = gs_report_find(r, "preconditioner.shifted_rows")) && e->type == GS_REPORT_STRING && e->s)
        snprintf(rows, len, "%s", e->s);
    gs_report_destroy(&r);
    return GS_OK;
}

gs_status gs_dist_pc_refactor(gs_pc *pc, const gs_dist *dist, const gs_matrix *M)
{
    dist_pc *d = pc->data;
    gs_status st = GS_OK;
    const gs_csr *A = &dist->diag; /* block Jacobi: the diagonal block, its values updated in place */
    if (d->ras) {                  /* the subdomain's rows again (their values come from their owners) */
        gs_dist_subdomain fresh;
        GS_CALL(gs_dist_subdomain_create(dist, d->delta, &fresh)); /* collective */
        gs_csr *S = &d->sub.A;
        const bool same = fresh.A.nrows == S->nrows && fresh.A.nnz == S->nnz &&
                          memcmp(fresh.A.rowptr, S->rowptr, ((size_t)S->nrows + 1) * sizeof *S->rowptr) == 0 &&
                          (S->nnz == 0 || memcmp(fresh.A.colind, S->colind, (size_t)S->nnz * sizeof *S->colind) == 0);
        if (same && S->nnz > 0) memcpy(S->val, fresh.A.val, (size_t)S->nnz * sizeof *S->val);
        gs_dist_subdomain_free(&fresh);
        if (!same) return GS_ERROR(GS_ERR_ARG, "new values: the RAS subdomain has another pattern");
        A = S;
    }
    pc->time_numeric = 0.0;
    if (d->inner) {
        st = share_operator(d, M);
        if (st == GS_OK) st = gs_pc_setup_numeric(d->inner, A);
        pc->time_numeric = d->inner->time_numeric;
    }
    pc->state = st == GS_OK ? GS_PC_READY : GS_PC_SYMBOLIC;
    return st;
}

gs_status gs_dist_pc_summarize(gs_pc *pc, const gs_dist *dist)
{
    enum { ROWS = 16 * 12 + 1 };
    dist_pc *d = pc->data;
    long long mine[5] = {0, 0, 0, 0, 0}, sum[5];
    char rows[ROWS], *all = NULL;
    gs_status st = local_facts(d, mine, mine + 3, rows, sizeof rows);
    if (st == GS_OK && dist->rank == 0) st = GS_MALLOC(all, (size_t)dist->size * ROWS);
    GS_CALL(gs_dist_agree(dist->comm, st));
    if (MPI_Allreduce(mine, sum, 5, MPI_LONG_LONG, MPI_SUM, dist->comm) != MPI_SUCCESS ||
        MPI_Gather(rows, ROWS, MPI_CHAR, all, ROWS, MPI_CHAR, 0, dist->comm) != MPI_SUCCESS) {
        gs_free(&all);
        return GS_ERROR(GS_ERR_INTERNAL, "MPI: summing the local factors' sizes failed");
    }
    d->nnz_L = sum[0];
    d->nnz_U = sum[1];
    d->shifted = sum[2];
    d->have_nnz = sum[3] > 0;
    d->have_shifts = sum[4] > 0;
    /* fill_ratio per entry of A, as one process reports it; RAS with ParILU sweeps: per entry of the
     * subdomains' matrices, as the ParILU engine reports an extended matrix's */
    const bool sweeps = d->ras && strcmp(gs_config_string(d->lcfg, "preconditioner.local"), "parilu") == 0;
    d->nnz_A = sweeps ? d->ext_nnz : dist->nnz_global;
    d->shifted_rows[0] = '\0';
    if (all) { /* the first 16 rows in rank order, as one process lists its blocks' */
        size_t len = 0;
        int count = 0;
        for (int r = 0; r < dist->size; r++) {
            char *list = all + (size_t)r * ROWS, *save = NULL;
            list[ROWS - 1] = '\0';
            for (char *tok = strtok_r(list, ",", &save); tok && count < 16; tok = strtok_r(NULL, ",", &save), count++) {
                int w = snprintf(d->shifted_rows + len, sizeof d->shifted_rows - len, "%s%s", len ? "," : "", tok);
                if (w < 0 || (size_t)w >= sizeof d->shifted_rows - len) break;
                len += (size_t)w;
            }
        }
    }
    gs_free(&all);
    d->summed = true;
    return GS_OK;
}

bool gs_dist_pc_overlap(const gs_pc *pc, gs_int *rows, gs_int *nnz)
{
    const dist_pc *d = pc && pc->ops == &dist_pc_ops ? pc->data : NULL;
    const bool ras = d && d->ras;
    if (rows) *rows = ras ? d->sub.n_overlap : 0;
    if (nnz) *nnz = ras ? d->sub.A.nnz : 0;
    return ras;
}
