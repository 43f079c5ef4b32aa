/* gpusolve --inspect: sizes, row lengths, symmetry, diagonal (missing, zero, sign), diagonal dominance
 * |a_ii| vs sum_{j!=i} |a_ij|, bandwidth (natural and after RCM), dependency levels of tril(A) and
 * triu(A), and the advice these facts imply for the choice of solver, preconditioner and trisolve. */
#include "app/inspect.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "app/report_text.h"
#include "app/run.h"
#include "core/mem.h"
#include "core/report.h"
#include "core/signal.h"
#include "core/json.h"
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

static void write_rows(FILE *out, const gs_int *rows, gs_int count)
{
    gs_int shown = count < GS_INSPECT_FIRST_ROWS ? count : GS_INSPECT_FIRST_ROWS;
    for (gs_int r = 0; r < shown; r++) fprintf(out, "%s%d", r ? ", " : "", rows[r]);
    if (count > shown) fputs(", ...", out);
}

/* The first GS_INSPECT_FIRST_ROWS rows as a JSON array, into the report. */
static gs_status report_rows(gs_report *rep, const char *key, const gs_int *rows, gs_int count)
{
    gs_status st = GS_OK;
    gs_int shown = count < GS_INSPECT_FIRST_ROWS ? count : GS_INSPECT_FIRST_ROWS;
    json_t *arr = json_array();
    char *text = NULL;
    for (gs_int r = 0; arr && r < shown; r++)
        if (!gs_json_append(arr, json_integer(rows[r]))) GS_FAIL(GS_ERR_MEM, "out of host memory writing %s", key);
    text = gs_json_text(arr);
    if (!text) GS_FAIL(GS_ERR_MEM, "out of host memory writing %s", key);
    GS_TRY(gs_report_json(rep, key, text));
cleanup:
    json_decref(arr);
    free(text);
    return st;
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
        write_rows(out, f->s.zero_rows, f->s.diag_zero);
        fputc(')', out);
    }
    fprintf(out, ", missing %d", f->s.diag_missing);
    if (f->s.diag_missing) {
        fputs(" (rows ", out);
        write_rows(out, f->s.missing_rows, f->s.diag_missing);
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

/* The facts as one JSON object (members in the order of the text report). */
static gs_status print_json(FILE *out, const char *spec, const gs_mm_info *info, const gs_matrix_facts *f)
{
    gs_status st = GS_OK;
    gs_report *r = NULL;
    const gs_int n = f->s.nrows;
    json_t *advice = json_array();
    char *text = NULL;
    GS_TRY(gs_report_create(&r));
    GS_TRY(gs_app_report_provenance(r, 0));
    GS_TRY(gs_report_string(r, "status", "ok"));
    GS_TRY(gs_report_string(r, "matrix.source", spec));
    if (info) {
        GS_TRY(gs_report_string(r, "matrix.field", info->field));
        GS_TRY(gs_report_string(r, "matrix.symmetry", info->symmetry));
    }
    GS_TRY(gs_report_int(r, "matrix.rows", f->s.nrows));
    GS_TRY(gs_report_int(r, "matrix.cols", f->s.ncols));
    GS_TRY(gs_report_int(r, "matrix.nnz", f->s.nnz));
    GS_TRY(gs_report_int(r, "nnz_per_row.min", f->s.row_nnz_min));
    GS_TRY(gs_report_double(r, "nnz_per_row.avg", f->s.row_nnz_avg));
    GS_TRY(gs_report_int(r, "nnz_per_row.max", f->s.row_nnz_max));
    GS_TRY(gs_report_int(r, "nnz_per_row.empty_rows", f->s.empty_rows));
    GS_TRY(gs_report_double(r, "values.abs_max", f->s.abs_max));
    GS_TRY(gs_report_double(r, "values.abs_min_nonzero", f->s.abs_min_nonzero));
    GS_TRY(gs_report_int(r, "values.explicit_zeros", f->s.explicit_zeros));
    GS_TRY(gs_report_bool(r, "symmetry.structural", f->s.sym_structural));
    GS_TRY(gs_report_bool(r, "symmetry.numerical", f->s.sym_numerical));
    GS_TRY(gs_report_double(r, "symmetry.tolerance", GS_STATS_SYM_TOL));
    GS_TRY(gs_report_int(r, "diagonal.positive", f->s.diag_positive));
    GS_TRY(gs_report_int(r, "diagonal.negative", f->s.diag_negative));
    GS_TRY(gs_report_int(r, "diagonal.zero", f->s.diag_zero));
    GS_TRY(report_rows(r, "diagonal.zero_rows", f->s.zero_rows, f->s.diag_zero));
    GS_TRY(gs_report_int(r, "diagonal.missing", f->s.diag_missing));
    GS_TRY(report_rows(r, "diagonal.missing_rows", f->s.missing_rows, f->s.diag_missing));
    GS_TRY(gs_report_int(r, "dominance.strict", f->s.dominant_strict));
    GS_TRY(gs_report_int(r, "dominance.weak", f->s.dominant_weak));
    GS_TRY(gs_report_int(r, "dominance.not", f->s.dominant_not));
    GS_TRY(gs_report_int(r, "bandwidth.max", f->s.bandwidth));
    GS_TRY(gs_report_int(r, "bandwidth.lower", f->s.bandwidth_lower));
    GS_TRY(gs_report_int(r, "bandwidth.upper", f->s.bandwidth_upper));
    GS_TRY(gs_report_int(r, "bandwidth.rcm", f->bandwidth_rcm));
    GS_TRY(gs_report_int(r, "levels.lower", f->levels_lower));
    GS_TRY(gs_report_int(r, "levels.upper", f->levels_upper));
    GS_TRY(gs_report_double(r, "levels.rows_per_level_lower", f->levels_lower > 0 ? (double)n / f->levels_lower : 0.0));
    GS_TRY(gs_report_double(r, "levels.rows_per_level_upper", f->levels_upper > 0 ? (double)n / f->levels_upper : 0.0));
    for (int a = 0; advice && a < f->nadvice; a++)
        if (!gs_json_append(advice, gs_json_string(f->advice[a]))) GS_FAIL(GS_ERR_MEM, "out of host memory writing the advice");
    text = gs_json_text(advice);
    if (!text) GS_FAIL(GS_ERR_MEM, "out of host memory writing the advice");
    GS_TRY(gs_report_json(r, "advice", text));
    GS_TRY(gs_report_write_json(r, out));
cleanup:
    json_decref(advice);
    free(text);
    gs_report_destroy(&r);
    return st;
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
        GS_TRY(print_json(out, spec, is_gen ? NULL : &info, f));
    else
        print_text(out, spec, is_gen ? NULL : &info, f);
    fflush(out);
cleanup:;
    int code = GS_EXIT_CONVERGED;
    if (st != GS_OK) {
        code = gs_exit_code_for_status(st);
        fputs("gpusolve: error: ", stderr);
        gs_app_error_print(stderr);
        if (json) {
            char *msg = NULL; /* the message outlives the pending error, which building the object may replace */
            if (gs_strprintf(&msg, "%s", gs_error_message()) != GS_OK) gs_error_clear();
            gs_error_clear();
            gs_app_report_error(spec, NULL, NULL, st, msg ? msg : gs_status_name(st), code);
            gs_free(&msg);
        }
        gs_error_clear();
    }
    gs_free(&f);
    gs_csr_free(&A);
    return code;
}
