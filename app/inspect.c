/* gpusolve --inspect: sizes, row lengths, symmetry, diagonal (missing, zero, sign), diagonal dominance
 * |a_ii| vs sum_{j!=i} |a_ij|, bandwidth (natural and after RCM), dependency levels of tril(A) and
 * triu(A), and the advice these facts imply for the choice of solver, preconditioner and trisolve. */
#include "app/inspect.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "app/app.h"
#include "core/mem.h"
#include "core/report.h"
#include "core/signal.h"
#include "io/mmio.h"
#include "precond/ordering.h"

static void advise(gs_matrix_facts *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void advise(gs_matrix_facts *f, const char *fmt, ...)
{
    if (f->nadvice >= GS_INSPECT_MAX_ADVICE) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->advice[f->nadvice++], sizeof f->advice[0], fmt, ap);
    va_end(ap);
}

/* The advice: each line names what was found and what to set. */
static void make_advice(gs_matrix_facts *f)
{
    gs_int n = f->s.nrows;
    gs_int bad = f->s.diag_missing + f->s.diag_zero;
    if (f->s.empty_rows > 0)
        advise(f, "%d empty row%s (first: %d): the matrix is singular; no preconditioner will fix that",
               f->s.empty_rows, f->s.empty_rows == 1 ? "" : "s", f->s.first_empty_row);
    if (bad > 0)
        advise(f,
               "zero or missing diagonal entries in %d row%s (first: row %d): ILU(0)/IC(0)/Jacobi will fail "
               "there; use preconditioner.zero_pivot = \"shift\" or ilut (its fill may create the pivot), or "
               "permute rows onto the diagonal (a symmetric reordering such as rcm cannot)",
               bad, bad == 1 ? "" : "s",
               f->s.diag_missing ? (f->s.diag_zero && f->s.zero_rows[0] < f->s.missing_rows[0] ? f->s.zero_rows[0] : f->s.missing_rows[0])
                               : f->s.zero_rows[0]);
    if (f->s.sym_numerical && bad == 0 && f->s.diag_negative == 0)
        advise(f, "symmetric with positive diagonal (possibly SPD): try solver.type = \"cg\" with "
                  "preconditioner.type = \"ic0\" (or \"parilu\" with symmetric = true)");
    else if (f->s.sym_numerical && bad == 0 && f->s.diag_negative == n)
        advise(f, "symmetric with every diagonal entry negative (possibly negative definite): CG and IC(0) need "
                  "a positive definite matrix, so solve with -A and -b, or use gmres/fgmres or bicgstab");
    else if (f->s.sym_numerical && f->s.diag_negative > 0)
        advise(f, "symmetric with %d negative and %d positive diagonal entries: indefinite, so CG and IC(0) "
                  "will likely fail; use gmres/fgmres or bicgstab",
               f->s.diag_negative, f->s.diag_positive);
    else if (!f->s.sym_numerical)
        advise(f, "%s: use gmres, fgmres or bicgstab (CG needs a symmetric positive definite matrix) with an "
                  "ILU-family preconditioner (ilu0, iluk, ilut, bilu, ras)",
               f->s.sym_structural ? "structurally but not numerically symmetric" : "not symmetric");
    if (n > 0 && f->s.dominant_not == 0 && f->s.dominant_strict > 0)
        advise(f, "diagonally dominant in every row: Jacobi-type approximate triangular solves (trisolve type "
                  "jacobi/async-jacobi, few sweeps) and ParILU sweeps should converge fast");
    else if (n > 0 && f->s.dominant_not > n / 2)
        advise(f, "%.0f%% of rows are not diagonally dominant: approximate triangular solves (jacobi, "
                  "async-jacobi) may need many sweeps; compare them with an exact solver (levelset, syncfree)",
               100.0 * f->s.dominant_not / n);
    if (n >= 1000) {
        gs_int lev = f->levels_lower > f->levels_upper ? f->levels_lower : f->levels_upper;
        double per = lev > 0 ? (double)n / lev : 0.0;
        if (per < 32)
            advise(f, "%d dependency levels for %d rows (%.1f rows per level): level-set triangular solves have "
                      "little parallelism; try syncfree, jacobi/async-jacobi, or bilu/ras with more blocks",
                   lev, n, per);
        else if (per >= 1000)
            advise(f, "%d dependency levels for %d rows (%.0f rows per level): wide levels, level-set triangular "
                      "solves parallelize well",
                   lev, n, per);
    }
    if (n >= 1000 && f->bandwidth_rcm > 0 && f->bandwidth_rcm * 2 <= f->s.bandwidth)
        advise(f, "bandwidth %d, %d after RCM: system.reorder = \"rcm\" makes it banded, which usually lowers "
                  "ILU(k)/ILUT fill (it may add dependency levels)",
               f->s.bandwidth, f->bandwidth_rcm);
}

gs_status gs_matrix_inspect(const gs_csr *A, gs_matrix_facts *f)
{
    gs_status st = GS_OK;
    gs_int *perm = NULL, *iperm = NULL;
    memset(f, 0, sizeof *f);
    GS_CALL(gs_csr_stats_compute(A, &f->s));
    gs_int n = A->nrows;
    f->levels_lower = gs_csr_levels(A, true, NULL);
    f->levels_upper = gs_csr_levels(A, false, NULL);
    if (f->levels_lower < 0 || f->levels_upper < 0)
        GS_FAIL(GS_ERR_MEM, "inspect: out of host memory computing the levels of %d rows", n);

    /* bandwidth after RCM: max |p(i) - p(j)| with p the new position of each old row */
    if (n > 0) {
        GS_TRY(GS_MALLOC(perm, n));
        GS_TRY(GS_MALLOC(iperm, n));
        GS_TRY(gs_rcm(A, perm));
        gs_perm_invert(n, perm, iperm);
        for (gs_int i = 0; i < n; i++)
            for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
                gs_int d = iperm[i] - iperm[A->colind[k]];
                if (d < 0) d = -d;
                if (d > f->bandwidth_rcm) f->bandwidth_rcm = d;
            }
    }
    make_advice(f);
cleanup:
    gs_free(&perm);
    gs_free(&iperm);
    return st;
}

/* ---------------------------------------------------------------------------------------------- */
/* output                                                                                         */

static void write_rows(FILE *out, const gs_int *rows, gs_int count, bool json)
{
    gs_int shown = count < GS_INSPECT_FIRST_ROWS ? count : GS_INSPECT_FIRST_ROWS;
    if (json) fputc('[', out);
    for (gs_int r = 0; r < shown; r++) fprintf(out, "%s%d", r ? ", " : "", rows[r]);
    if (json) fputc(']', out);
    else if (count > shown) fputs(", ...", out);
}

static void print_text(FILE *out, const char *spec, const gs_mm_info *info, const gs_matrix_facts *f)
{
    gs_int n = f->s.nrows;
    double pn = n > 0 ? 100.0 / n : 0.0;
    fprintf(out, "matrix          %s\n", spec);
    if (info) fprintf(out, "file            %s %s\n", info->field, info->symmetry);
    fprintf(out, "size            %d x %d, %d nonzeros (%.3g%% dense)\n", f->s.nrows, f->s.ncols, f->s.nnz,
            n > 0 ? 100.0 * f->s.nnz / ((double)n * n) : 0.0);
    fprintf(out, "nnz per row     min %d, avg %.2f, max %d; empty rows %d\n", f->s.row_nnz_min, f->s.row_nnz_avg,
            f->s.row_nnz_max, f->s.empty_rows);
    fprintf(out, "values          max |a_ij| %.3e, min nonzero |a_ij| %.3e, explicit zeros %d\n", f->s.abs_max,
            f->s.abs_min_nonzero, f->s.explicit_zeros);
    fprintf(out, "symmetry        structural %s, numerical %s\n", f->s.sym_structural ? "yes" : "no",
            f->s.sym_numerical ? "yes" : "no");
    fprintf(out, "diagonal        positive %d, negative %d, zero %d", f->s.diag_positive, f->s.diag_negative,
            f->s.diag_zero);
    if (f->s.diag_zero) {
        fputs(" (rows ", out);
        write_rows(out, f->s.zero_rows, f->s.diag_zero, false);
        fputc(')', out);
    }
    fprintf(out, ", missing %d", f->s.diag_missing);
    if (f->s.diag_missing) {
        fputs(" (rows ", out);
        write_rows(out, f->s.missing_rows, f->s.diag_missing, false);
        fputc(')', out);
    }
    fputc('\n', out);
    fprintf(out, "dominance       strictly %d (%.1f%%), weakly %d (%.1f%%), not %d (%.1f%%)   [|a_ii| vs sum_j!=i |a_ij|]\n",
            f->s.dominant_strict, pn * f->s.dominant_strict, f->s.dominant_weak, pn * f->s.dominant_weak, f->s.dominant_not,
            pn * f->s.dominant_not);
    fprintf(out, "bandwidth       %d (lower %d, upper %d); after RCM %d\n", f->s.bandwidth, f->s.bandwidth_lower,
            f->s.bandwidth_upper, f->bandwidth_rcm);
    fprintf(out, "levels          lower triangle %d (%.1f rows per level), upper triangle %d (%.1f rows per level)\n",
            f->levels_lower, f->levels_lower > 0 ? (double)n / f->levels_lower : 0.0, f->levels_upper,
            f->levels_upper > 0 ? (double)n / f->levels_upper : 0.0);
    for (int a = 0; a < f->nadvice; a++) fprintf(out, "%s%s\n", a ? "                " : "advice          ", f->advice[a]);
    if (f->nadvice == 0) fputs("advice          none: nothing unusual in the structure\n", out);
}

static void print_json(FILE *out, const char *spec, const gs_mm_info *info, const gs_matrix_facts *f)
{
    gs_int n = f->s.nrows;
    fputs("{\"gpusolve\":{\"version\":", out);
    gs_json_write_string(out, GS_VERSION);
    fputs("},\"status\":\"ok\",\"matrix\":{\"source\":", out);
    gs_json_write_string(out, spec);
    if (info) {
        fputs(",\"field\":", out);
        gs_json_write_string(out, info->field);
        fputs(",\"symmetry\":", out);
        gs_json_write_string(out, info->symmetry);
    }
    fprintf(out, ",\"rows\":%d,\"cols\":%d,\"nnz\":%d}", f->s.nrows, f->s.ncols, f->s.nnz);
    fprintf(out, ",\"nnz_per_row\":{\"min\":%d,\"avg\":%.17g,\"max\":%d,\"empty_rows\":%d}", f->s.row_nnz_min,
            f->s.row_nnz_avg, f->s.row_nnz_max, f->s.empty_rows);
    fprintf(out, ",\"values\":{\"abs_max\":%.17g,\"abs_min_nonzero\":%.17g,\"explicit_zeros\":%d}", f->s.abs_max,
            f->s.abs_min_nonzero, f->s.explicit_zeros);
    fprintf(out, ",\"symmetry\":{\"structural\":%s,\"numerical\":%s,\"tolerance\":%g}",
            f->s.sym_structural ? "true" : "false", f->s.sym_numerical ? "true" : "false", GS_STATS_SYM_TOL);
    fprintf(out, ",\"diagonal\":{\"positive\":%d,\"negative\":%d,\"zero\":%d,\"zero_rows\":", f->s.diag_positive,
            f->s.diag_negative, f->s.diag_zero);
    write_rows(out, f->s.zero_rows, f->s.diag_zero, true);
    fprintf(out, ",\"missing\":%d,\"missing_rows\":", f->s.diag_missing);
    write_rows(out, f->s.missing_rows, f->s.diag_missing, true);
    fputc('}', out);
    fprintf(out, ",\"dominance\":{\"strict\":%d,\"weak\":%d,\"not\":%d}", f->s.dominant_strict, f->s.dominant_weak,
            f->s.dominant_not);
    fprintf(out, ",\"bandwidth\":{\"max\":%d,\"lower\":%d,\"upper\":%d,\"rcm\":%d}", f->s.bandwidth, f->s.bandwidth_lower,
            f->s.bandwidth_upper, f->bandwidth_rcm);
    fprintf(out, ",\"levels\":{\"lower\":%d,\"upper\":%d,\"rows_per_level_lower\":%.17g,\"rows_per_level_upper\":%.17g}",
            f->levels_lower, f->levels_upper, f->levels_lower > 0 ? (double)n / f->levels_lower : 0.0,
            f->levels_upper > 0 ? (double)n / f->levels_upper : 0.0);
    fputs(",\"advice\":[", out);
    for (int a = 0; a < f->nadvice; a++) {
        if (a) fputc(',', out);
        gs_json_write_string(out, f->advice[a]);
    }
    fputs("]}\n", out);
}

int gs_app_inspect(const char *spec, bool json, FILE *out)
{
    gs_status st = GS_OK;
    gs_csr A = {0};
    gs_mm_info info;
    bool is_gen = strncmp(spec, "gen:", 4) == 0;
    gs_matrix_facts *f = NULL;
    gs_error_clear();
    if (is_gen)
        GS_TRY(gs_app_matrix_from_spec(spec, &A, &is_gen));
    else
        GS_TRY(gs_mm_read_matrix(spec, &A, &info));
    GS_TRY(GS_CALLOC(f, 1));
    GS_TRY(gs_matrix_inspect(&A, f));
    if (gs_interrupt_requested()) GS_FAIL(GS_ERR_INTERRUPTED, "interrupted by signal %d", gs_interrupt_signal());
    if (json)
        print_json(out, spec, is_gen ? NULL : &info, f);
    else
        print_text(out, spec, is_gen ? NULL : &info, f);
    fflush(out);
cleanup:;
    int code = GS_EXIT_CONVERGED;
    if (st != GS_OK) {
        code = gs_exit_code_for_status(st);
        fputs("gpusolve: error: ", stderr);
        gs_error_print(stderr);
        if (json) {
            fputs("{\"gpusolve\":{\"version\":", out);
            gs_json_write_string(out, GS_VERSION);
            fputs("},\"status\":\"error\",\"matrix\":{\"source\":", out);
            gs_json_write_string(out, spec);
            fputs("},\"error\":{\"status\":", out);
            gs_json_write_string(out, gs_status_name(gs_error_status()));
            fputs(",\"message\":", out);
            gs_json_write_string(out, gs_error_message());
            fprintf(out, "},\"exit_code\":%d}\n", code);
            fflush(out);
        }
        gs_error_clear();
    }
    gs_free(&f);
    gs_csr_free(&A);
    return code;
}
