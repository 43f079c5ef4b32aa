/* The host tiled solver (tiled_ref.c) against the reference on the whole case suite (random with empty
 * rows and a dense row, bidiagonal chain, diagonal, identity, mixed levels, 3D Poisson and real-matrix
 * triangles; lower and upper, unit and non-unit; n not a multiple of 16) plus a factor that uses every
 * tile format, and the tile plan's invariants:
 *  - perm sorts the rows by level (stable), the tiles hold exactly the off-diagonal entries of
 *    T(perm, perm) (reconstructed entry by entry), formats follow the documented thresholds, local
 *    indices and offsets are in range, 1/diagonal is right;
 *  - tile levels are the exact longest-path levels of the tile rows, level_rows sorts them, chains
 *    partition the levels as specified; the statistics match the arrays; expected plans of the
 *    special cases (bidiagonal, diagonal, identity, the format case);
 *  - the variant rule and the parameter that forces a variant (tiled.variant; a bad value refused), the
 *    view keys;
 *  - re-analysis (new values, new pattern), tiny orders, and an allocation failure at every point of
 *    analyse;
 *  - the plan built by one thread and by four is the same, array by array. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/generate.h"
#include "core/mem.h"
#include "testutil.h"
#include "tiled_cases.h"
#include "tri_cases.h"
#include "trisolve/tiled_kernels.h"
#include "trisolve/levelset_kernels.h"
#include "trisolve/trisolve_impl.h"

/* the suite plus the format case on both sides, unit and non-unit */
static void build_cases(tri_suite *S)
{
    GS_ASSERT_OK(tri_suite_build(S, true));
    for (int side = 0; side < 2; side++)
        for (int unit = 0; unit < 2; unit++) {
            gs_csr T = {0};
            char name[32];
            snprintf(name, sizeof name, "formats%d", TILED_FMT_N);
            GS_ASSERT_OK(tiled_format_case((gs_uplo)side, unit != 0, &T));
            GS_ASSERT_OK(tri_suite_add(S, name, (gs_uplo)side, unit != 0, &T));
        }
}

/* Append the entries of tile tl (tile row I, local -> positions) to the COO triplets; check the tile's
 * local structure on the way. */
/* one reconstructed entry; zero values are skipped (a dense tile cannot tell a stored zero from
 * padding, so all formats are compared on their nonzero values; counts are checked separately) */
static void push_entry(gs_int *ri, gs_int *ci, double *v, gs_int *cnt, gs_int r, gs_int c, double x)
{
    if (x == 0.0) return;
    ri[*cnt] = r;
    ci[*cnt] = c;
    v[(*cnt)++] = x;
}

static void unpack_tile(const gs_tl_plan *P, const gs_tile *tl, gs_int I, bool diagonal, gs_int *ri,
                        gs_int *ci, double *v, gs_int *cnt)
{
    const uint8_t *ix = P->idx + tl->idx_off;
    const double *vv = P->val + tl->val_off;
    gs_int base_r = I * GS_TILE, base_c = tl->col * GS_TILE;
    assert_true(tl->idx_off >= 0 && tl->val_off >= 0);
    int fmt = tl->fmt;
    if (!diagonal && fmt == GS_TILE_COO) {
        assert_true(tl->idx_off + tl->nnz <= P->idx_len && tl->val_off + tl->nnz <= P->val_len);
        for (int k = 0; k < tl->nnz; k++) {
            if (k > 0) assert_true(ix[k] > ix[k - 1]); /* row-major, distinct */
            push_entry(ri, ci, v, cnt, base_r + (ix[k] >> 4), base_c + (ix[k] & 15), vv[k]);
        }
    } else if (!diagonal && fmt == GS_TILE_DENSE) {
        assert_true(tl->val_off + GS_TILE * GS_TILE <= P->val_len);
        for (int c = 0; c < GS_TILE; c++)
            for (int r = 0; r < GS_TILE; r++)
                push_entry(ri, ci, v, cnt, base_r + r, base_c + c, vv[c * GS_TILE + r]);
    } else if (diagonal && fmt == GS_DTILE_DENSE) {
        assert_true(tl->val_off + GS_DTILE_PACKED <= P->val_len);
        for (int c = 0; c < GS_TILE; c++)
            for (int r = c + 1; r < GS_TILE; r++) {
                push_entry(ri, ci, v, cnt, base_r + r, base_c + c, vv[15 * c - c * (c - 1) / 2 + (r - c - 1)]);
            }
    } else if (fmt == GS_TILE_CSR) { /* == GS_DTILE_CSR */
        assert_true(tl->idx_off + GS_TILE + tl->nnz <= P->idx_len && tl->val_off + tl->nnz <= P->val_len);
        assert_int_equal(ix[0], 0);
        for (int r = 0; r < GS_TILE; r++) {
            int end = r == GS_TILE - 1 ? tl->nnz : ix[r + 1];
            assert_true(ix[r] <= end && end <= tl->nnz);
            for (int k = ix[r]; k < end; k++) {
                int c = ix[GS_TILE + k];
                assert_true(c >= 0 && c < GS_TILE);
                if (k > ix[r]) assert_true(c > ix[GS_TILE + k - 1]);
                if (diagonal) assert_true(c < r);
                push_entry(ri, ci, v, cnt, base_r + r, base_c + c, vv[k]);
            }
        }
    } else {
        assert_true(diagonal && fmt == GS_DTILE_DIA);
        assert_int_equal(tl->nnz, 0);
    }
}

/* the documented thresholds of tiled_kernels.h */
static int expected_fmt(int nnz)
{
    if (nnz <= GS_TILE_COO_MAX) return GS_TILE_COO;
    return nnz >= GS_TILE_DENSE_MIN ? GS_TILE_DENSE : GS_TILE_CSR;
}

static int expected_dfmt(int nnz)
{
    if (nnz == 0) return GS_DTILE_DIA;
    return nnz >= GS_DTILE_DENSE_MIN ? GS_DTILE_DENSE : GS_DTILE_CSR;
}

static void check_plan(const tri_case *c, const gs_tl_plan *P)
{
    const gs_csr *T = &c->T;
    gs_int n = T->nrows, nt = (n + 15) / 16;
    gs_int *lev = NULL, *pos = NULL, *ri = NULL, *ci = NULL, *tlev = NULL, *seen = NULL;
    double *v = NULL;
    gs_csr B = {0}, R = {0};
    assert_int_equal(P->n, n);
    assert_int_equal(P->nt, nt);

    /* perm: a permutation sorting the rows by level, stable */
    GS_ASSERT_OK(GS_MALLOC(lev, n));
    GS_ASSERT_OK(GS_MALLOC(pos, n));
    assert_int_equal(P->row_levels, gs_csr_levels(T, c->uplo == GS_LOWER, lev));
    for (gs_int i = 0; i < n; i++) pos[i] = -1;
    for (gs_int p = 0; p < n; p++) {
        gs_int i = P->perm[p];
        assert_true(i >= 0 && i < n);
        assert_int_equal(pos[i], -1);
        pos[i] = p;
        if (p > 0) {
            gs_int i0 = P->perm[p - 1];
            assert_true(lev[i0] < lev[i] || (lev[i0] == lev[i] && i0 < i));
        }
    }

    /* the tiles hold exactly the off-diagonal entries of B = T(perm, perm) (nonzero values compared:
     * a dense tile cannot tell a stored zero from padding), and B is lower triangular */
    GS_ASSERT_OK(gs_csr_permute(T, P->perm, &B));
    assert_int_equal(P->tile_ptr[0], 0);
    assert_int_equal(P->tile_ptr[nt], P->ntiles);
    gs_int nnz_off = 0, fmts[3] = {0, 0, 0}, dfmts[3] = {0, 0, 0}, maxt = 0;
    int64_t idx_used = 0, val_used = 0;
    for (gs_int I = 0; I < nt; I++) {
        assert_true(P->tile_ptr[I + 1] >= P->tile_ptr[I]);
        if (P->tile_ptr[I + 1] - P->tile_ptr[I] > maxt) maxt = P->tile_ptr[I + 1] - P->tile_ptr[I];
        for (gs_int t = P->tile_ptr[I]; t < P->tile_ptr[I + 1]; t++) {
            const gs_tile *tl = &P->tiles[t];
            assert_true(tl->col >= 0 && tl->col < I); /* strictly left of the diagonal tile */
            if (t > P->tile_ptr[I]) assert_true(tl->col > P->tiles[t - 1].col);
            assert_true(tl->nnz >= 1 && tl->nnz <= 256);
            assert_int_equal(tl->fmt, expected_fmt(tl->nnz));
            fmts[tl->fmt]++;
            nnz_off += tl->nnz;
            idx_used += tl->fmt == GS_TILE_COO ? tl->nnz : tl->fmt == GS_TILE_CSR ? 16 + tl->nnz : 0;
            val_used += tl->fmt == GS_TILE_DENSE ? 256 : tl->nnz;
        }
        const gs_tile *d = &P->diag[I];
        assert_int_equal(d->col, I);
        assert_true(d->nnz <= GS_DTILE_PACKED);
        assert_int_equal(d->fmt, expected_dfmt(d->nnz));
        dfmts[d->fmt]++;
        nnz_off += d->nnz;
        idx_used += d->fmt == GS_DTILE_CSR ? 16 + d->nnz : 0;
        val_used += d->fmt == GS_DTILE_DENSE ? GS_DTILE_PACKED : d->fmt == GS_DTILE_CSR ? d->nnz : 0;
    }
    assert_int_equal(nnz_off, P->nnz_offdiag);
    assert_int_equal(nnz_off, T->nnz - (c->unit ? 0 : n));
    assert_true(idx_used == P->idx_len && val_used == P->val_len); /* offsets tile the pools exactly */
    for (int f = 0; f < 3; f++) {
        assert_int_equal(fmts[f], P->fmt_count[f]);
        assert_int_equal(dfmts[f], P->diag_count[f]);
    }
    assert_int_equal(maxt, P->max_tiles_per_row);

    GS_ASSERT_OK(GS_MALLOC(ri, nnz_off));
    GS_ASSERT_OK(GS_MALLOC(ci, nnz_off));
    GS_ASSERT_OK(GS_MALLOC(v, nnz_off));
    gs_int cnt = 0;
    for (gs_int I = 0; I < nt; I++) {
        for (gs_int t = P->tile_ptr[I]; t < P->tile_ptr[I + 1]; t++)
            unpack_tile(P, &P->tiles[t], I, false, ri, ci, v, &cnt);
        unpack_tile(P, &P->diag[I], I, true, ri, ci, v, &cnt);
    }
    for (gs_int k = 0; k < cnt; k++) assert_true(ri[k] < n && ci[k] < ri[k]);
    GS_ASSERT_OK(gs_csr_from_coo(n, n, cnt, ri, ci, v, &R));
    assert_int_equal(R.nnz, cnt); /* no entry twice */
    gs_int k = 0;
    for (gs_int p = 0; p < n; p++) {
        double diag = 1.0;
        gs_int kr = R.rowptr[p];
        for (gs_int q = B.rowptr[p]; q < B.rowptr[p + 1]; q++) {
            assert_true(B.colind[q] <= p);
            if (B.colind[q] == p) {
                diag = B.val[q];
                continue;
            }
            if (B.val[q] == 0.0) continue;
            assert_true(kr < R.rowptr[p + 1]);
            assert_int_equal(R.colind[kr], B.colind[q]);
            assert_true(R.val[kr] == B.val[q]);
            kr++;
            k++;
        }
        assert_int_equal(kr, R.rowptr[p + 1]);
        assert_true(P->dinv[p] == (c->unit ? 1.0 : 1.0 / diag));
    }
    assert_int_equal(k, R.nnz);

    /* tile levels: exact longest paths; level_rows sorted by level, increasing within a level */
    GS_ASSERT_OK(GS_MALLOC(tlev, nt));
    GS_ASSERT_OK(GS_CALLOC(seen, nt));
    assert_int_equal(P->level_ptr[0], 0);
    assert_int_equal(P->level_ptr[P->nlevels], nt);
    gs_int widest = 0;
    for (gs_int l = 0; l < P->nlevels; l++) {
        assert_true(P->level_ptr[l + 1] > P->level_ptr[l]);
        if (P->level_ptr[l + 1] - P->level_ptr[l] > widest) widest = P->level_ptr[l + 1] - P->level_ptr[l];
        for (gs_int w = P->level_ptr[l]; w < P->level_ptr[l + 1]; w++) {
            gs_int I = P->level_rows[w];
            assert_true(I >= 0 && I < nt);
            assert_int_equal(seen[I], 0);
            seen[I] = 1;
            tlev[I] = l;
            if (w > P->level_ptr[l]) assert_true(P->level_rows[w - 1] < I);
        }
    }
    assert_int_equal(widest, P->max_level_rows);
    for (gs_int I = 0; I < nt; I++) {
        gs_int need = 0;
        for (gs_int t = P->tile_ptr[I]; t < P->tile_ptr[I + 1]; t++) {
            assert_true(tlev[P->tiles[t].col] < tlev[I]);
            if (tlev[P->tiles[t].col] + 1 > need) need = tlev[P->tiles[t].col] + 1;
        }
        assert_int_equal(tlev[I], need);
    }

    /* chains: consecutive, covering; single = only thin levels and maximal; multi = one wide level */
    assert_int_equal(P->chain_ptr[0], 0);
    assert_int_equal(P->chain_ptr[P->nchains], P->nlevels);
    gs_int singles = 0, multis = 0;
    for (gs_int ch = 0; ch < P->nchains; ch++) {
        gs_int l0 = P->chain_ptr[ch], l1 = P->chain_ptr[ch + 1], w = 0;
        assert_true(l1 > l0);
        for (gs_int l = l0; l < l1; l++)
            if (P->level_ptr[l + 1] - P->level_ptr[l] > w) w = P->level_ptr[l + 1] - P->level_ptr[l];
        assert_int_equal(P->chain_max_rows[ch], w);
        if (P->chain_single[ch]) {
            singles++;
            assert_true(w <= P->chain_rows);
            if (ch > 0) assert_false(P->chain_single[ch - 1]);
        } else {
            multis++;
            assert_int_equal(l1 - l0, 1);
            assert_true(w > P->chain_rows);
        }
    }
    assert_int_equal(singles, P->single_chains);
    assert_int_equal(multis, P->multi_chains);

    gs_free(&lev);
    gs_free(&pos);
    gs_free(&ri);
    gs_free(&ci);
    gs_free(&v);
    gs_free(&tlev);
    gs_free(&seen);
    gs_csr_free(&B);
    gs_csr_free(&R);
}

static void test_plan_invariants(void **state)
{
    tri_suite S;
    build_cases(&S);
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        gs_tl_plan P;
        GS_ASSERT_OK(gs_tl_plan_build(&c->T, c->uplo, c->unit, GS_TL_CHAIN_TILE_ROWS, &P));
        check_plan(c, &P);
        gs_int nt = P.nt;
        if (strncmp(c->name, "bidiagonal5000/", 15) == 0) {
            /* one chain of 5000 rows in natural order: tile row I reads the last row of tile row I-1 */
            for (gs_int p = 0; p < 5000; p++) assert_int_equal(P.perm[p], c->uplo == GS_LOWER ? p : 4999 - p);
            assert_int_equal(nt, 313);
            assert_int_equal(P.ntiles, 312);
            assert_int_equal(P.fmt_count[GS_TILE_COO], 312);
            assert_int_equal(P.diag_count[GS_DTILE_CSR], 313); /* 15 in-tile entries, 7 in the last */
            assert_int_equal(P.diag[312].nnz, 7);
            assert_int_equal(P.nlevels, 313);
            assert_int_equal(P.nchains, 1);
            assert_int_equal(gs_tl_variant_rule(&P), GS_TL_SYNCFREE); /* even one chain: see the rule */
        }
        if (strncmp(c->name, "diagonal1000/", 13) == 0 || strncmp(c->name, "identity", 8) == 0) {
            assert_int_equal(P.ntiles, 0);
            assert_int_equal(P.nlevels, 1);
            assert_int_equal(P.diag_count[GS_DTILE_DIA], nt);
            assert_int_equal(P.nonempty_diag, c->unit ? 0 : nt);
            assert_int_equal(gs_tl_variant_rule(&P), GS_TL_LEVELSET);
        }
        if (strncmp(c->name, "formats", 7) == 0) {
            assert_int_equal(nt, 7);
            assert_int_equal(P.row_levels, 23);
            assert_int_equal(P.nlevels, 7);
            assert_int_equal(P.ntiles, 10);
            assert_int_equal(P.fmt_count[GS_TILE_DENSE], 3);
            assert_int_equal(P.fmt_count[GS_TILE_CSR], 3);
            assert_int_equal(P.fmt_count[GS_TILE_COO], 4);
            assert_int_equal(P.diag_count[GS_DTILE_DIA], 5);
            assert_int_equal(P.diag_count[GS_DTILE_CSR], 1);
            assert_int_equal(P.diag_count[GS_DTILE_DENSE], 1);
            assert_int_equal(P.diag[4].fmt, GS_DTILE_DENSE);
            assert_int_equal(P.diag[4].nnz, 120);
            assert_int_equal(P.diag[5].fmt, GS_DTILE_CSR);
            assert_int_equal(P.diag[5].nnz, 8);
            assert_int_equal(P.nonempty_diag, c->unit ? 2 : 7);
        }
        gs_tl_plan_free(&P);
        assert_null(P.tiles);
        assert_null(P.perm);
    }
    tri_suite_free(&S);
}

/* tiled (host backend) vs reference through the public API, for each tiled.variant (auto, forced): x
 * poisoned, solved twice (bit-identical), the reported variant as forced. */
static void test_matches_reference(void **state)
{
    static const char *const variants[] = {NULL, "levelset", "syncfree"};
    static const gs_tiled_force force[] = {GS_TILED_AUTO, GS_TILED_LEVELSET, GS_TILED_SYNCFREE};
    gs_backend *be = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    tri_suite S;
    build_cases(&S);
    for (int vi = 0; vi < 3; vi++) {
        gs_trisolve_params prm = gs_trisolve_params_default();
        prm.tiled.variant = force[vi];
        for (int k = 0; k < S.n; k++) {
            const tri_case *c = &S.c[k];
            gs_int n = c->T.nrows;
            gs_trisolve *ref = NULL, *tl = NULL;
            gs_vector *b = NULL, *xr = NULL, *x = NULL;
            double *x1 = NULL;
            GS_ASSERT_OK(GS_MALLOC(x1, n));
            GS_ASSERT_OK(gs_vec_create(be, n, &b));
            GS_ASSERT_OK(gs_vec_create(be, n, &xr));
            GS_ASSERT_OK(gs_vec_create(be, n, &x));
            tri_rhs(n, (uint64_t)k + 31, b->data);
            GS_ASSERT_OK(gs_trisolve_create("reference", be, c->uplo, c->unit, NULL, &ref));
            GS_ASSERT_OK(gs_trisolve_create("tiled", be, c->uplo, c->unit, &prm, &tl));
            GS_ASSERT_OK(gs_trisolve_analyse(ref, &c->T));
            GS_ASSERT_OK(gs_trisolve_analyse(tl, &c->T));
            gs_test_poison(n, xr->data);
            GS_ASSERT_OK(gs_trisolve_solve(ref, b, xr));
            for (int rep = 0; rep < 2; rep++) {
                gs_test_poison(n, x->data);
                GS_ASSERT_OK(gs_trisolve_solve(tl, b, x));
                double e = gs_test_rel_diff(n, x->data, xr->data);
                if (!(e <= TRI_TOL)) fprintf(stderr, "%s: tiled vs reference %.3e\n", c->name, e);
                assert_true(e <= TRI_TOL);
                assert_true(tri_residual(&c->T, c->unit, x->data, b->data) < 1e-14);
                if (rep == 0) memcpy(x1, x->data, (size_t)n * sizeof(double));
                else assert_memory_equal(x1, x->data, (size_t)n * sizeof(double));
            }
            gs_report *rep = NULL;
            GS_ASSERT_OK(gs_report_create(&rep));
            gs_trisolve_view(tl, rep, "t");
            const gs_report_entry *e = gs_report_find(rep, "t.variant");
            assert_non_null(e);
            if (variants[vi]) assert_string_equal(e->s, variants[vi]);
            e = gs_report_find(rep, "t.variant_forced");
            assert_non_null(e);
            assert_true(e->i != 0 || variants[vi] == NULL);
            gs_report_destroy(&rep);
            gs_trisolve_destroy(&ref);
            gs_trisolve_destroy(&tl);
            gs_vec_destroy(&b);
            gs_vec_destroy(&xr);
            gs_vec_destroy(&x);
            gs_free(&x1);
        }
    }
    tri_suite_free(&S);
    gs_backend_destroy(&be);
}

/* The rule on synthetic statistics, and the forced variants. */
static void test_variant_rule(void **state)
{
    gs_tl_plan P;
    memset(&P, 0, sizeof P);
    P.nt = 1000;
    P.nlevels = 1;
    P.nchains = 1;
    assert_int_equal(gs_tl_variant_rule(&P), GS_TL_LEVELSET); /* no dependencies */
    P.nlevels = 100; /* 10 tile rows per level */
    assert_int_equal(gs_tl_variant_rule(&P), GS_TL_SYNCFREE); /* one chain of thin levels */
    P.nchains = 7;
    P.nt = 100000; /* wide levels (bayer10: 7 launches, sync-free 3x faster) */
    assert_int_equal(gs_tl_variant_rule(&P), GS_TL_SYNCFREE);
    P.nlevels = 1; /* wide, no dependencies: one plain launch */
    P.nchains = 1;
    assert_int_equal(gs_tl_variant_rule(&P), GS_TL_LEVELSET);
    P.nlevels = 100;
    P.nchains = 7; /* the rule's choice below: syncfree */
    assert_string_equal(gs_tl_variant_name(GS_TL_LEVELSET), "levelset");
    assert_string_equal(gs_tl_variant_name(GS_TL_SYNCFREE), "syncfree");

    bool forced = true;
    assert_int_equal(gs_tl_choose_variant(&P, GS_TILED_AUTO, &forced), GS_TL_SYNCFREE);
    assert_false(forced);
    assert_int_equal(gs_tl_choose_variant(&P, GS_TILED_LEVELSET, &forced), GS_TL_LEVELSET);
    assert_true(forced);
    P.nlevels = 1;
    assert_int_equal(gs_tl_choose_variant(&P, GS_TILED_SYNCFREE, &forced), GS_TL_SYNCFREE);
    assert_true(forced);
    assert_int_equal(gs_tl_choose_variant(&P, GS_TILED_AUTO, &forced), GS_TL_LEVELSET);
    assert_false(forced);

    /* a bad value is refused at creation with its name */
    gs_backend *be = NULL;
    gs_trisolve *ts = NULL;
    gs_trisolve_params prm = gs_trisolve_params_default();
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    prm.tiled.variant = (gs_tiled_force)7;
    GS_ASSERT_FAILS(gs_trisolve_create("tiled", be, GS_LOWER, false, &prm, &ts), GS_ERR_ARG, "tiled.variant is 7");
    assert_null(ts);
    GS_ASSERT_FAILS(gs_trisolve_params_set(&prm, "tiled.variant", "sync-free"), GS_ERR_ARG,
                    "tiled.variant = 'sync-free'");
    gs_backend_destroy(&be);
}

/* View keys of the format case: the plan statistics as reported. */
static void test_view(void **state)
{
    gs_backend *be = NULL;
    gs_trisolve *ts = NULL;
    gs_csr T = {0};
    gs_report *rep = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    GS_ASSERT_OK(tiled_format_case(GS_UPPER, false, &T));
    GS_ASSERT_OK(gs_trisolve_create("tiled", be, GS_UPPER, false, NULL, &ts));
    GS_ASSERT_OK(gs_trisolve_analyse(ts, &T));
    GS_ASSERT_OK(gs_report_create(&rep));
    gs_trisolve_view(ts, rep, "trisolve.upper");
    static const struct {
        const char *key;
        long long v;
    } ints[] = {{"tile_size", 16},     {"tile_rows", 7},       {"tiles", 28},          {"nonempty_tiles", 17},
                {"offdiag_tiles", 10}, {"tiles_coo", 4},       {"tiles_csr", 3},       {"tiles_dense", 3},
                {"diag_tiles_dia", 5}, {"diag_tiles_csr", 1},  {"diag_tiles_dense", 1}, {"tile_levels", 7},
                {"row_levels", 23},    {"max_tiles_per_tile_row", 3}, {"max_tile_rows_per_level", 1},
                {"chains", 1},         {"single_block_chains", 1}, {"multi_block_levels", 0}};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        char key[128];
        snprintf(key, sizeof key, "trisolve.upper.%s", ints[k].key);
        const gs_report_entry *e = gs_report_find(rep, key);
        if (!e || e->i != ints[k].v) fprintf(stderr, "%s: expected %lld\n", key, ints[k].v);
        assert_non_null(e);
        assert_int_equal(e->i, ints[k].v);
    }
    const gs_report_entry *e = gs_report_find(rep, "trisolve.upper.variant");
    assert_non_null(e);
    assert_string_equal(e->s, "syncfree"); /* 7 tile levels: the rule picks sync-free */
    assert_string_equal(gs_report_find(rep, "trisolve.upper.type")->s, "tiled");
    assert_non_null(gs_report_find(rep, "trisolve.upper.analysis_time"));
    assert_non_null(gs_report_find(rep, "trisolve.upper.implementation"));
    e = gs_report_find(rep, "trisolve.upper.storage_bytes");
    assert_non_null(e);
    assert_true(e->i > 3 * 256 * 8);
    gs_report_destroy(&rep);
    gs_trisolve_destroy(&ts);
    gs_csr_free(&T);
    gs_backend_destroy(&be);
}

/* Re-analysis with new values (same pattern), then a new pattern of another order; tiny orders. */
static void test_reanalyse_and_small(void **state)
{
    gs_backend *be = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    tri_check_reanalyse(be, "tiled", GS_UPPER, 0.0);

    /* orders around the tile size, both sides; n = 0 analyses and solves nothing */
    static const gs_int sizes[] = {0, 1, 2, 15, 16, 17, 31, 33, 48};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int side = 0; side < 2; side++) {
            gs_int n = sizes[s];
            gs_csr A = {0};
            gs_trisolve *ref = NULL, *tl = NULL;
            gs_vector *vb = NULL, *vx = NULL, *vr = NULL;
            GS_ASSERT_OK(tri_random(n, 4, (gs_uplo)side, side == 1, 77 + (uint64_t)s, &A));
            GS_ASSERT_OK(gs_trisolve_create("tiled", be, (gs_uplo)side, side == 1, NULL, &tl));
            GS_ASSERT_OK(gs_trisolve_create("reference", be, (gs_uplo)side, side == 1, NULL, &ref));
            GS_ASSERT_OK(gs_trisolve_analyse(tl, &A));
            GS_ASSERT_OK(gs_trisolve_analyse(ref, &A));
            GS_ASSERT_OK(gs_vec_create(be, n, &vb));
            GS_ASSERT_OK(gs_vec_create(be, n, &vx));
            GS_ASSERT_OK(gs_vec_create(be, n, &vr));
            tri_rhs(n, 9, vb->data);
            gs_test_poison(n, vx->data);
            GS_ASSERT_OK(gs_trisolve_solve(tl, vb, vx));
            GS_ASSERT_OK(gs_trisolve_solve(ref, vb, vr));
            if (n > 0) assert_true(gs_test_rel_diff(n, vx->data, vr->data) <= TRI_TOL);
            gs_vec_destroy(&vb);
            gs_vec_destroy(&vx);
            gs_vec_destroy(&vr);
            gs_trisolve_destroy(&tl);
            gs_trisolve_destroy(&ref);
            gs_csr_free(&A);
        }
    gs_backend_destroy(&be);
}

/* The k-th allocation of analyse fails, for every k: GS_ERR_MEM, not analysed, no crash; then a
 * successful analyse solves correctly. (Leaks show up in the sanitizer build.) */
static void test_allocation_failures(void **state)
{
    gs_backend *be = NULL;
    GS_ASSERT_OK(gs_backend_create("host", 0, &be));
    gs_csr T = {0};
    GS_ASSERT_OK(tiled_format_case(GS_LOWER, false, &T));
    tri_check_alloc_failures(be, "tiled", &T, GS_LOWER, false, 10);
    gs_csr_free(&T);
    gs_backend_destroy(&be);
}

/* Two plans of the same factor are the same, array by array. */
static void assert_same_plan(const gs_tl_plan *A, const gs_tl_plan *B)
{
    assert_int_equal(A->n, B->n);
    assert_int_equal(A->ntiles, B->ntiles);
    assert_int_equal(A->idx_len, B->idx_len);
    assert_int_equal(A->val_len, B->val_len);
    assert_int_equal(A->nlevels, B->nlevels);
    assert_int_equal(A->max_tiles_per_row, B->max_tiles_per_row);
    assert_memory_equal(A->perm, B->perm, (size_t)A->n * sizeof *A->perm);
    assert_memory_equal(A->dinv, B->dinv, (size_t)A->n * sizeof *A->dinv);
    assert_memory_equal(A->tile_ptr, B->tile_ptr, ((size_t)A->nt + 1) * sizeof *A->tile_ptr);
    if (A->ntiles > 0) assert_memory_equal(A->tiles, B->tiles, (size_t)A->ntiles * sizeof *A->tiles);
    assert_memory_equal(A->diag, B->diag, (size_t)A->nt * sizeof *A->diag);
    if (A->idx_len > 0) assert_memory_equal(A->idx, B->idx, (size_t)A->idx_len);
    if (A->val_len > 0) assert_memory_equal(A->val, B->val, (size_t)A->val_len * sizeof *A->val);
    assert_memory_equal(A->level_ptr, B->level_ptr, ((size_t)A->nlevels + 1) * sizeof *A->level_ptr);
    assert_memory_equal(A->level_rows, B->level_rows, (size_t)A->nt * sizeof *A->level_rows);
    for (int f = 0; f < 3; f++) {
        assert_int_equal(A->fmt_count[f], B->fmt_count[f]);
        assert_int_equal(A->diag_count[f], B->diag_count[f]);
    }
}

/* The plan's passes over the tile rows run in parallel above 500000 entries: the plan built by one
 * thread and by several is the same, on every suite case that large (the two wide levels) and on 3D
 * Poisson 60^3 triangles (dynamic chunks of tile rows taken out of order). Without OpenMP, both builds
 * are the sequential one. */
static void test_plan_threads(void **state)
{
    (void)state;
    tri_suite S;
    GS_ASSERT_OK(tri_suite_build(&S, true));
    gs_csr A = {0};
    GS_ASSERT_OK(gs_gen_poisson3d(60, 60, 60, &A));
    for (int side = 0; side < 2; side++) {
        gs_csr T = {0};
        GS_ASSERT_OK(side == 0 ? gs_csr_lower(&A, true, &T) : gs_csr_upper(&A, true, &T));
        GS_ASSERT_OK(tri_suite_add(&S, "poisson3d_60", (gs_uplo)side, false, &T));
    }
    gs_csr_free(&A);
    int large = 0;
    for (int k = 0; k < S.n; k++) {
        const tri_case *c = &S.c[k];
        if (c->T.nnz <= 500000) continue;
        large++;
        gs_tl_plan P1, P4;
#ifdef _OPENMP
        int saved = omp_get_max_threads();
        omp_set_num_threads(1);
#endif
        GS_ASSERT_OK(gs_tl_plan_build(&c->T, c->uplo, c->unit, GS_TL_CHAIN_TILE_ROWS, &P1));
#ifdef _OPENMP
        omp_set_num_threads(4);
#endif
        GS_ASSERT_OK(gs_tl_plan_build(&c->T, c->uplo, c->unit, GS_TL_CHAIN_TILE_ROWS, &P4));
#ifdef _OPENMP
        omp_set_num_threads(saved);
#endif
        assert_same_plan(&P1, &P4);
        gs_tl_plan_free(&P1);
        gs_tl_plan_free(&P4);
    }
    assert_true(large >= (gs_test_quick() ? 2 : 3)); /* quick: the suite has no 300001-row case */
    tri_suite_free(&S);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_invariants),   cmocka_unit_test(test_matches_reference),
        cmocka_unit_test(test_variant_rule),      cmocka_unit_test(test_view),
        cmocka_unit_test(test_reanalyse_and_small), cmocka_unit_test(test_allocation_failures),
        cmocka_unit_test(test_plan_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
