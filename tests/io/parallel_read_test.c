/* The parallel reader against the serial one (threads = 1, one chunk per region): identical CSR arrays
 * (values bit for bit) for every Matrix Market variant and the same status and message for every error
 * fixture, with 1, 2 and 7 threads and chunks and stream regions forced down to a few bytes so that many
 * chunks exist on tiny files; values equal to strtod's; PETSc binary round trips, its errors and format
 * detection by content and by extension. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"

#include "core/mem.h"
#include "io/mmio.h"
#include "io/mmio_testing.h"
#include "core/generate.h"
#include "io/petsc_bin.h"

#ifndef IO_DATA_DIR
#error "IO_DATA_DIR must name tests/io/data (set by tests/io/CMakeLists.txt)"
#endif

static char tmpdir[512];

static int group_setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/gs_pread_test_XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    DIR *d = opendir(tmpdir);
    if (d) {
        struct dirent *e;
        char p[1024];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    return rmdir(tmpdir);
}

static const char *tmp_path(const char *name)
{
    static char buf[4][1024];
    static int slot;
    slot = (slot + 1) % 4;
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", tmpdir, name);
    return buf[slot];
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void write_gz(const char *path, const char *text)
{
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, text, (unsigned)strlen(text)), (int)strlen(text));
    assert_int_equal(gzclose(gz), Z_OK);
}

/* The reference (serial, default chunks) and the forced configurations compared with it. */
static const gs_mm_read_options serial = {1, 0, 0};
static const gs_mm_read_options forced[] = {
    {1, 1, 64}, {2, 1, 64}, {7, 1, 64}, {2, 7, 100}, {7, 13, 4096}, {7, 64, 0}, {2, 0, 0}, {7, 0, 0},
};
enum { NFORCED = sizeof forced / sizeof forced[0] };

/* Reads path as a matrix with options o: status, message, CSR. */
typedef struct {
    gs_status st;
    char msg[2048];
    gs_csr A;
} outcome;

static void read_matrix(const char *path, const gs_mm_read_options *o, outcome *out)
{
    gs_error_clear();
    memset(&out->A, 0, sizeof out->A);
    out->st = gs_mm_read_matrix_with(path, o, &out->A, NULL);
    snprintf(out->msg, sizeof out->msg, "%s", gs_error_message());
    gs_error_clear();
}

static void assert_same_csr(const gs_csr *A, const gs_csr *B)
{
    assert_int_equal(A->nrows, B->nrows);
    assert_int_equal(A->ncols, B->ncols);
    assert_int_equal(A->nnz, B->nnz);
    assert_memory_equal(A->rowptr, B->rowptr, ((size_t)A->nrows + 1) * sizeof *A->rowptr);
    assert_memory_equal(A->colind, B->colind, (size_t)A->nnz * sizeof *A->colind);
    assert_memory_equal(A->val, B->val, (size_t)A->nnz * sizeof *A->val); /* bit for bit */
}

/* Every forced configuration gives what the serial reader gives (matrix and vector readers); returns
 * the serial reader's status for the matrix. */
static gs_status check_equivalent(const char *path)
{
    outcome ref, got;
    read_matrix(path, &serial, &ref);
    for (int k = 0; k < NFORCED; k++) {
        read_matrix(path, &forced[k], &got);
        if (got.st != ref.st || strcmp(got.msg, ref.msg) != 0)
            fprintf(stderr, "%s, threads %d chunk %zu block %zu:\n  serial:   %s\n  parallel: %s\n", path,
                    forced[k].threads, forced[k].chunk_bytes, forced[k].block_bytes, ref.msg, got.msg);
        assert_int_equal(got.st, ref.st);
        assert_string_equal(got.msg, ref.msg);
        if (ref.st == GS_OK) assert_same_csr(&ref.A, &got.A);
        gs_csr_free(&got.A);
    }
    gs_csr_free(&ref.A);

    double *x0 = NULL, *x1 = NULL;
    gs_int n0 = 0, n1 = 0;
    gs_error_clear();
    gs_status s0 = gs_mm_read_vector_with(path, &serial, 0, &x0, &n0);
    char m0[2048];
    snprintf(m0, sizeof m0, "%s", gs_error_message());
    for (int k = 0; k < NFORCED; k++) {
        gs_error_clear();
        gs_status s1 = gs_mm_read_vector_with(path, &forced[k], 0, &x1, &n1);
        assert_int_equal(s1, s0);
        assert_string_equal(gs_error_message(), m0);
        if (s0 == GS_OK) {
            assert_int_equal(n1, n0);
            assert_memory_equal(x1, x0, (size_t)n0 * sizeof *x0);
        }
        gs_free(&x1);
    }
    gs_free(&x0);
    gs_error_clear();
    return ref.st;
}

static void test_error_fixtures_same_message(void **state)
{
    (void)state;
    DIR *d = opendir(IO_DATA_DIR);
    assert_non_null(d);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", IO_DATA_DIR, e->d_name);
        check_equivalent(p);
        files++;
    }
    closedir(d);
    assert_true(files >= 40);
}

/* The index limit crossed in a later chunk than the one that starts the file: the same line. */
static void test_index_limit_same_line(void **state)
{
    (void)state;
    const char *sym = "%%MatrixMarket matrix coordinate real symmetric\n5 5 8\n1 1 1\n2 1 1\n% c\n3 1 1\n4 2 1\n"
                      "5 3 1\n5 4 1\n5 5 1\n4 4 1\n";
    const char *diag = "%%MatrixMarket matrix coordinate real symmetric\n5 5 8\n1 1 1\n2 1 1\n% c\n3 1 1\n4 2 1\n"
                       "5 3 1\n2 2 1\n5 5 1\n4 4 1\n";
    write_bytes(tmp_path("limit_sym.mtx"), sym, strlen(sym));
    write_bytes(tmp_path("limit_diag.mtx"), diag, strlen(diag));
    gs_mm_testing_set_index_limit(10);
    gs_csr A;
    GS_ASSERT_FAILS(gs_mm_read_matrix(tmp_path("limit_sym.mtx"), &A, NULL), GS_ERR_IO, "limit_sym.mtx:9: the symmetric expansion");
    GS_ASSERT_FAILS(gs_mm_read_matrix(tmp_path("limit_diag.mtx"), &A, NULL), GS_ERR_IO, "limit_diag.mtx:10: more than 10 entries");
    check_equivalent(tmp_path("limit_sym.mtx"));
    check_equivalent(tmp_path("limit_diag.mtx"));
    gs_mm_testing_set_index_limit(0);
}

/* A matrix of every field and symmetry, with duplicates, comments, blank lines and CRLF endings, plain and
 * gzip-compressed. */
static void test_variants_identical(void **state)
{
    (void)state;
    static const char *fields[] = {"real", "integer", "pattern"};
    static const char *syms[] = {"general", "symmetric", "skew-symmetric"};
    static char text[1 << 20];
    uint64_t seed = 11;
    for (int f = 0; f < 3; f++)
        for (int s = 0; s < 3; s++)
            for (int crlf = 0; crlf < 2; crlf++) {
                if (f == 2 && s == 2) continue; /* pattern skew: every mirrored pair would be (1, -1) */
                const char *eol = crlf ? "\r\n" : "\n";
                const int n = 97, m = 1500;
                size_t len = (size_t)snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate %s %s%s%% c%s\n%s%d %d %d%s",
                                              fields[f], syms[s], eol, eol, eol, n, n, m + n, eol);
                for (int i = 1; i <= n; i++) /* a diagonal (zero for skew), so no row is empty */
                    len += (size_t)snprintf(text + len, sizeof text - len, f == 2 ? "%d %d%s" : "%d %d %s%s", i, i,
                                            f == 2 ? eol : s == 2 ? "0" : f == 1 ? "4" : "4.25", eol);
                for (int k = 0; k < m; k++) {
                    int i = 1 + (int)(gs_test_rand(&seed) * 0.5 * n + 0.5 * n) % n;
                    int j = 1 + (int)(gs_test_rand(&seed) * 0.5 * n + 0.5 * n) % n;
                    if (s != 0 && j >= i) {
                        if (j == i) j = i > 1 ? i - 1 : i; /* skew: off the diagonal */
                        int t = i;
                        i = j > i ? j : i, j = j > t ? t : j;
                        if (i == j) i = i < n ? i + 1 : i, j = i - 1;
                    }
                    if (k % 97 == 0) len += (size_t)snprintf(text + len, sizeof text - len, "%% comment %d%s   %s", k, eol, eol);
                    double v = gs_test_rand(&seed) * 1e3;
                    if (f == 0)
                        len += (size_t)snprintf(text + len, sizeof text - len, k % 3 ? "%d %d %.17g%s" : "  %d\t%d  %.6e %s", i,
                                                j, v, eol);
                    else if (f == 1)
                        len += (size_t)snprintf(text + len, sizeof text - len, "%d %d %d%s", i, j, (int)v, eol);
                    else
                        len += (size_t)snprintf(text + len, sizeof text - len, "%d %d%s", i, j, eol);
                }
                assert_true(len < sizeof text - 100);
                char name[64];
                snprintf(name, sizeof name, "v_%d_%d_%d.mtx", f, s, crlf);
                write_bytes(tmp_path(name), text, len);
                assert_int_equal(check_equivalent(tmp_path(name)), GS_OK);
                snprintf(name, sizeof name, "v_%d_%d_%d.mtx.gz", f, s, crlf);
                write_gz(tmp_path(name), text);
                assert_int_equal(check_equivalent(tmp_path(name)), GS_OK);
                /* and the last line without its newline */
                write_bytes(tmp_path("noeol.mtx"), text, len - strlen(eol));
                assert_int_equal(check_equivalent(tmp_path("noeol.mtx")), GS_OK);
            }
}

/* Row-major files (the in-place assembly) and files just out of that order (the sorting assembly): both
 * against gs_csr_from_coo of the same triplets, with every thread count and chunk size. Empty rows at the
 * start, in the middle and at the end; comments between entries; then an entry pair swapped inside a row, a
 * repeated position (summed), a row out of order, and a symmetric file (mirrored halves). */
static void test_row_major_and_disordered(void **state)
{
    (void)state;
    enum { N = 1003, MAXE = 6 * N };
    static gs_int ri[MAXE], ci[MAXE];
    static double v[MAXE];
    static char text[MAXE * 48 + 256];
    uint64_t seed = 23;
    gs_int m = 0;
    for (gs_int i = 3; i < N - 5; i++) {
        if (i % 17 == 0) continue; /* empty rows in the middle */
        gs_int j = (gs_int)(gs_test_rand(&seed) * 4);
        for (int e = 0; e < 1 + (int)(gs_test_rand(&seed) * 5) && j < N; e++) {
            ri[m] = i, ci[m] = j, v[m] = (gs_test_rand(&seed) - 0.5) * 1e3;
            m++;
            j += 1 + (gs_int)(gs_test_rand(&seed) * 200);
        }
    }
    static gs_int rb[MAXE], cb[MAXE];
    static double vb[MAXE];
    memcpy(rb, ri, sizeof ri), memcpy(cb, ci, sizeof ci), memcpy(vb, v, sizeof v);
    for (int variant = 0; variant < 5; variant++) {
        memcpy(ri, rb, sizeof ri), memcpy(ci, cb, sizeof ci), memcpy(v, vb, sizeof v);
        gs_int mm = m;
        if (variant == 1) { /* two entries of a row swapped */
            gs_int k = m / 2;
            while (ri[k + 1] != ri[k]) k++;
            gs_int tc = ci[k];
            double tv = v[k];
            ci[k] = ci[k + 1], v[k] = v[k + 1], ci[k + 1] = tc, v[k + 1] = tv;
        }
        if (variant == 2) { /* a repeated position right after its first */
            ri[mm] = ri[mm - 1], ci[mm] = ci[mm - 1], v[mm] = 0.5;
            mm++;
        }
        if (variant == 3) { /* the last entry (the last row) first */
            ri[mm] = ri[0], ci[mm] = ci[0], v[mm] = v[0];
            ri[0] = ri[mm - 1], ci[0] = ci[mm - 1], v[0] = v[mm - 1];
            ri[mm - 1] = ri[mm], ci[mm - 1] = ci[mm], v[mm - 1] = v[mm];
        }
        const bool sym = variant == 4; /* the lower triangle of the same entries, mirrored on reading */
        size_t len = (size_t)snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real %s\n%d %d %d\n",
                                      sym ? "symmetric" : "general", N, N, (int)mm);
        for (gs_int k = 0; k < mm; k++) {
            if (sym && ci[k] > ri[k]) ci[k] = ri[k] - ci[k] % (ri[k] + 1); /* into the lower triangle */
            if (k % 101 == 50) len += (size_t)snprintf(text + len, sizeof text - len, "%% between entries\n");
            const size_t at = len;
            len += (size_t)snprintf(text + len, sizeof text - len, k % 5 ? "%d %d %.17g\n" : "%d  %d\t%.6e\n",
                                    (int)ri[k] + 1, (int)ci[k] + 1, v[k]);
            if (k % 5 == 0) v[k] = strtod(strchr(text + at, '\t') + 1, NULL); /* the value as written */
        }
        char name[32];
        snprintf(name, sizeof name, "order_%d.mtx", variant);
        write_bytes(tmp_path(name), text, len);
        assert_int_equal(check_equivalent(tmp_path(name)), GS_OK);

        gs_int *r2 = NULL, *c2 = NULL;
        double *v2 = NULL;
        gs_int n2 = 0;
        GS_ASSERT_OK(GS_MALLOC(r2, 2 * (size_t)mm));
        GS_ASSERT_OK(GS_MALLOC(c2, 2 * (size_t)mm));
        GS_ASSERT_OK(GS_MALLOC(v2, 2 * (size_t)mm));
        for (gs_int k = 0; k < mm; k++) {
            r2[n2] = ri[k], c2[n2] = ci[k], v2[n2++] = v[k];
            if (sym && ri[k] != ci[k]) r2[n2] = ci[k], c2[n2] = ri[k], v2[n2++] = v[k];
        }
        gs_csr ref = {0};
        GS_ASSERT_OK(gs_csr_from_coo(N, N, n2, r2, c2, v2, &ref));
        for (int t = 0; t < NFORCED; t++) {
            outcome got;
            read_matrix(tmp_path(name), &forced[t], &got);
            GS_ASSERT_OK(got.st);
            assert_same_csr(&ref, &got.A);
            gs_csr_free(&got.A);
        }
        gs_csr_free(&ref);
        gs_free(&r2);
        gs_free(&c2);
        gs_free(&v2);
    }
}

/* Real matrices of the repository, plain and .gz. */
static void test_data_matrices_identical(void **state)
{
    (void)state;
    static const char *names[] = {"LFAT5.mtx", "bcsstk01.mtx", "e05r0000.mtx.gz", "plat1919.mtx.gz", "west0497.mtx",
                                  "nos4.mtx"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/matrices/%s", GS_DATA_DIR, names[k]);
        assert_int_equal(check_equivalent(p), GS_OK);
    }
}

/* Every value is strtod's, bit for bit: short decimals (the direct conversion) and long ones. */
static void test_values_equal_strtod(void **state)
{
    (void)state;
    enum { N = 4000 };
    static char text[N * 64 + 256], tok[N][40];
    size_t len = (size_t)snprintf(text, sizeof text, "%%%%MatrixMarket matrix array real general\n%d 1\n", N);
    uint64_t seed = 5;
    static const char *forms[] = {"%.17g", "%.3f", "%.1e", "%.15g", "%.0f", "%.19g", "%.22e", "%g"};
    for (int k = 0; k < N; k++) {
        double mag = pow(10.0, (double)((int)(gs_test_rand(&seed) * 40) - 5));
        double v = gs_test_rand(&seed) * mag;
        snprintf(tok[k], sizeof tok[k], forms[k % 8], v);
        if (k % 50 == 0) snprintf(tok[k], sizeof tok[k], "%s", k % 100 ? "9007199254740993" : "0.1e-22");
        if (k % 77 == 0) snprintf(tok[k], sizeof tok[k], "%s", "+.5E+3");
        len += (size_t)snprintf(text + len, sizeof text - len, "%s\n", tok[k]);
    }
    write_bytes(tmp_path("values.mtx"), text, len);
    for (int t = 0; t < 2; t++) {
        double *x = NULL;
        gs_int n = 0;
        GS_ASSERT_OK(gs_mm_read_vector_with(tmp_path("values.mtx"), t ? &forced[2] : &serial, N, &x, &n));
        for (int k = 0; k < N; k++) {
            double ref = strtod(tok[k], NULL);
            if (memcmp(&ref, &x[k], sizeof ref) != 0) fprintf(stderr, "value %s: %.17g vs %.17g\n", tok[k], x[k], ref);
            assert_memory_equal(&ref, &x[k], sizeof ref);
        }
        gs_free(&x);
    }
    /* the same numbers as the diagonal entries of a coordinate file */
    len = (size_t)snprintf(text, sizeof text, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", N, N, N);
    for (int k = 0; k < N; k++) len += (size_t)snprintf(text + len, sizeof text - len, "%d %d %s\n", k + 1, k + 1, tok[k]);
    write_bytes(tmp_path("values_coo.mtx"), text, len);
    for (int t = 0; t < 2; t++) {
        gs_csr A = {0};
        GS_ASSERT_OK(gs_mm_read_matrix_with(tmp_path("values_coo.mtx"), t ? &forced[2] : &serial, &A, NULL));
        assert_int_equal(A.nnz, N);
        for (int k = 0; k < N; k++) {
            double ref = strtod(tok[k], NULL);
            assert_memory_equal(&ref, &A.val[k], sizeof ref);
        }
        gs_csr_free(&A);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* PETSc binary. */

static void test_petsc_round_trip(void **state)
{
    (void)state;
    gs_csr A = {0}, B = {0}, C = {0};
    char p[1024];
    snprintf(p, sizeof p, "%s/matrices/plat1919.mtx.gz", GS_DATA_DIR);
    GS_ASSERT_OK(gs_mm_read_matrix(p, &A, NULL));
    const char *bin = tmp_path("plat.petsc");
    GS_ASSERT_OK(gs_mm_write_matrix(bin, &A));
    gs_mm_info info;
    for (int t = 0; t < 2; t++) {
        GS_ASSERT_OK(gs_mm_read_matrix_with(bin, t ? &forced[2] : &serial, &B, &info));
        assert_same_csr(&A, &B);
        assert_string_equal(info.format, "petsc");
        gs_csr_free(&B);
    }
    /* by content: the same bytes under a Matrix Market name */
    const char *renamed = tmp_path("plat_petsc.mtx");
    assert_int_equal(rename(bin, renamed), 0);
    GS_ASSERT_OK(gs_mm_read_matrix(renamed, &C, NULL));
    assert_same_csr(&A, &C);
    gs_csr_free(&C);
    /* .bin written too, and read back */
    GS_ASSERT_OK(gs_mm_write_matrix(tmp_path("plat.bin"), &A));
    GS_ASSERT_OK(gs_mm_read_matrix(tmp_path("plat.bin"), &C, NULL));
    assert_same_csr(&A, &C);
    gs_csr_free(&C);

    double x[5] = {1.5, -2.0, 0.0, 1e-300, 3.25}, *y = NULL;
    gs_int n = 0;
    GS_ASSERT_OK(gs_mm_write_vector(tmp_path("x.petsc"), 5, x));
    GS_ASSERT_OK(gs_mm_read_vector(tmp_path("x.petsc"), 5, &y, &n));
    assert_int_equal(n, 5);
    assert_memory_equal(x, y, sizeof x);
    gs_free(&y);
    GS_ASSERT_FAILS(gs_mm_read_vector(tmp_path("x.petsc"), 4, &y, &n), GS_ERR_IO, "length 5; expected length 4");
    GS_ASSERT_FAILS(gs_mm_read_matrix(tmp_path("x.petsc"), &C, NULL), GS_ERR_IO, "found a PETSc binary vector");
    GS_ASSERT_FAILS(gs_mm_read_vector(tmp_path("plat.bin"), 0, &y, &n), GS_ERR_IO, "found a PETSc binary matrix");
    gs_csr_free(&A);
}

/* Big-endian int32 / float64 builders for hand-made files. */
typedef struct {
    unsigned char b[4096];
    size_t n;
} bytes;

static void be32(bytes *o, int64_t v, int width)
{
    for (int k = width - 1; k >= 0; k--) o->b[o->n++] = (unsigned char)((uint64_t)v >> (8 * k));
}

static void be64d(bytes *o, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    be32(o, (int64_t)u, 8);
}

/* The 3 x 3 matrix [[2 -1 0] [-1 2 -1] [0 -1 2]] with integers of `width` bytes. */
static bytes tridiag(int width)
{
    bytes o = {{0}, 0};
    int64_t head[4] = {1211216, 3, 3, 7}, lens[3] = {2, 3, 2}, cols[7] = {0, 1, 0, 1, 2, 1, 2};
    double vals[7] = {2, -1, -1, 2, -1, -1, 2};
    for (int k = 0; k < 4; k++) be32(&o, head[k], width);
    for (int k = 0; k < 3; k++) be32(&o, lens[k], width);
    for (int k = 0; k < 7; k++) be32(&o, cols[k], width);
    for (int k = 0; k < 7; k++) be64d(&o, vals[k]);
    return o;
}

static void expect_bin_error(const char *name, const bytes *o, size_t n, const char *needle)
{
    const char *p = tmp_path(name);
    write_bytes(p, o->b, n);
    gs_csr A;
    GS_ASSERT_FAILS(gs_mm_read_matrix(p, &A, NULL), GS_ERR_IO, needle);
    GS_ASSERT_FAILS(gs_mm_read_matrix(p, &A, NULL), GS_ERR_IO, p);
    assert_null(A.rowptr);
}

static void test_petsc_errors(void **state)
{
    (void)state;
    bytes good = tridiag(4), o;
    gs_csr A = {0};
    write_bytes(tmp_path("t.petsc"), good.b, good.n);
    GS_ASSERT_OK(gs_mm_read_matrix(tmp_path("t.petsc"), &A, NULL));
    assert_int_equal(A.nnz, 7);
    assert_true(A.val[4] == -1.0 && A.colind[4] == 2 && A.rowptr[2] == 5);
    gs_csr_free(&A);
    /* 64-bit indices */
    o = tridiag(8);
    write_bytes(tmp_path("t64.petsc"), o.b, o.n);
    GS_ASSERT_OK(gs_mm_read_matrix(tmp_path("t64.petsc"), &A, NULL));
    assert_int_equal(A.nnz, 7);
    gs_csr_free(&A);

    /* truncated in each section: the section, the bytes needed and present */
    expect_bin_error("cut_header.petsc", &good, 10, "the header (4 32-bit integers) needs 16 bytes from byte 0 on, the file holds only 10");
    expect_bin_error("cut_rows.petsc", &good, 20, "the row lengths need 12 bytes from byte 16 on, the file holds only 4");
    expect_bin_error("cut_cols.petsc", &good, 40, "the column indices need 28 bytes from byte 28 on, the file holds only 12");
    expect_bin_error("cut_vals.petsc", &good, good.n - 1, "the values need 56 bytes from byte 56 on, the file holds only 55");
    /* complex scalars: 16 bytes per value */
    o = good;
    memset(o.b + o.n, 0, 56);
    o.n += 56;
    expect_bin_error("complex.petsc", &o, o.n, "complex");
    /* sizes */
    o = good;
    o.b[7] = 0xFF, o.b[4] = 0xFF, o.b[5] = 0xFF, o.b[6] = 0xFF; /* rows = -1 */
    expect_bin_error("negrows.petsc", &o, o.n, "negative number of rows (-1)");
    o = good;
    o.b[11] = 4; /* 3 x 4 */
    expect_bin_error("nonsquare.petsc", &o, o.n, "found a 3 x 4 PETSc binary matrix; expected a square matrix");
    o = good;
    memset(o.b + 12, 0xFF, 4);
    expect_bin_error("dense.petsc", &o, o.n, "stored dense");
    /* row lengths */
    o = good;
    o.b[19] = 1; /* 1 + 3 + 2 = 6 != 7 */
    expect_bin_error("lens.petsc", &o, o.n, "the row lengths add up to 6; expected 7, the nonzeros of the header");
    o = good;
    memset(o.b + 20, 0xFF, 4); /* row 2 has length -1 */
    expect_bin_error("neglen.petsc", &o, o.n, "row 2 has length -1");
    /* a column out of range */
    o = good;
    o.b[28 + 4 * 4 + 3] = 3; /* entry 5 (row 2) column 3 of 0..2 */
    expect_bin_error("col.petsc", &o, o.n, "row 2 (entry 5 of the file) has column index 3; expected 0..2");
    /* a NaN value */
    o = good;
    o.b[56 + 8] = 0x7F, o.b[56 + 9] = 0xF8;
    expect_bin_error("nan.petsc", &o, o.n, "is NaN; expected a finite number");
    /* by extension: Matrix Market text named .petsc, and a wrong class id */
    const char *mm = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n";
    write_bytes(tmp_path("text.petsc"), mm, strlen(mm));
    GS_ASSERT_FAILS(gs_mm_read_matrix(tmp_path("text.petsc"), &A, NULL), GS_ERR_IO,
                    "found first bytes 25 25 4D 61; expected a PETSc binary matrix (big-endian class id 1211216");
    o = good;
    o.b[3] = 0x51;
    expect_bin_error("classid.bin", &o, o.n, "expected a PETSc binary matrix");
    /* unsorted columns within a row are sorted, repeated ones summed */
    o = good;
    o.b[28 + 3] = 1, o.b[28 + 7] = 0; /* row 1: columns 1, 0 */
    o.b[56 + 7] = 1;                  /* and a different first value */
    write_bytes(tmp_path("unsorted.petsc"), o.b, o.n);
    GS_ASSERT_OK(gs_mm_read_matrix(tmp_path("unsorted.petsc"), &A, NULL));
    assert_int_equal(A.colind[0], 0);
    assert_int_equal(A.colind[1], 1);
    gs_csr_free(&A);
    /* vectors */
    bytes v = {{0}, 0};
    be32(&v, 1211214, 4), be32(&v, 3, 4), be64d(&v, 1.0), be64d(&v, 2.0);
    write_bytes(tmp_path("short.petsc"), v.b, v.n);
    double *x = NULL;
    gs_int n = 0;
    GS_ASSERT_FAILS(gs_mm_read_vector(tmp_path("short.petsc"), 3, &x, &n), GS_ERR_IO,
                    "truncated PETSc binary vector: the values need 24 bytes from byte 8 on, the file holds only 16");
    assert_null(x);
}

/* Reading by rows, as MPI ranks read their parts: every part of a 315-row matrix (not a multiple of the
 * parts) equals those rows of the whole; 64-bit indices; the errors name the file's row and entry; files
 * that cannot be read by rows say so instead of failing. */
static void test_petsc_rows(void **state)
{
    (void)state;
    gs_csr A = {0}, R = {0};
    gs_petsc_header h;
    GS_ASSERT_OK(gs_gen_laplace27(9, 7, 5, &A));
    const char *bin = tmp_path("rows.petsc");
    GS_ASSERT_OK(gs_petsc_write_matrix(bin, &A));
    GS_ASSERT_OK(gs_petsc_matrix_header(bin, &h));
    assert_true(h.by_rows);
    assert_int_equal(h.w, 4);
    assert_int_equal(h.rows, 315);
    assert_int_equal(h.nnz, A.nnz);
    const gs_int cut[] = {0, 79, 79, 158, 237, 315}; /* an empty part among them */
    long long first = 0;
    for (int p = 0; p + 1 < 6; p++) {
        const gs_int lo = cut[p], hi = cut[p + 1];
        gs_int len[320];
        long long nnz = -1;
        for (int i = 0; i < 320; i++) len[i] = -7;
        GS_ASSERT_OK(gs_petsc_read_row_lengths(bin, &h, lo, hi, len, &nnz));
        assert_int_equal(nnz, A.rowptr[hi] - A.rowptr[lo]);
        GS_ASSERT_OK(gs_petsc_read_rows(bin, &h, lo, hi, len, first, &R));
        assert_int_equal(R.nrows, hi - lo);
        assert_int_equal(R.ncols, 315);
        for (gs_int i = 0; i <= hi - lo; i++) assert_int_equal(R.rowptr[i], A.rowptr[lo + i] - A.rowptr[lo]);
        if (R.nnz > 0) {
            assert_memory_equal(R.colind, A.colind + A.rowptr[lo], (size_t)R.nnz * sizeof *R.colind);
            assert_memory_equal(R.val, A.val + A.rowptr[lo], (size_t)R.nnz * sizeof *R.val);
        }
        gs_csr_free(&R);
        first += nnz;
    }
    GS_ASSERT_FAILS(gs_petsc_read_row_lengths(bin, &h, 300, 316, NULL, &first), GS_ERR_ARG, "of a matrix of 315 rows");
    gs_csr_free(&A);

    /* 64-bit indices; a column out of range in the second part names the file's row and entry */
    bytes o = tridiag(8);
    write_bytes(tmp_path("rows64.petsc"), o.b, o.n);
    GS_ASSERT_OK(gs_petsc_matrix_header(tmp_path("rows64.petsc"), &h));
    assert_true(h.by_rows && h.w == 8);
    gs_int len[2];
    long long nnz = 0;
    GS_ASSERT_OK(gs_petsc_read_row_lengths(tmp_path("rows64.petsc"), &h, 1, 3, len, &nnz));
    assert_int_equal(nnz, 5);
    GS_ASSERT_OK(gs_petsc_read_rows(tmp_path("rows64.petsc"), &h, 1, 3, len, 2, &R));
    assert_int_equal(R.colind[0], 0);
    assert_true(R.val[4] == 2.0 && R.colind[4] == 2);
    gs_csr_free(&R);
    o = tridiag(4);
    o.b[28 + 4 * 4 + 3] = 3; /* entry 5 (row 2) column 3 of 0..2 */
    write_bytes(tmp_path("rowscol.petsc"), o.b, o.n);
    GS_ASSERT_OK(gs_petsc_matrix_header(tmp_path("rowscol.petsc"), &h));
    GS_ASSERT_OK(gs_petsc_read_row_lengths(tmp_path("rowscol.petsc"), &h, 1, 3, len, &nnz));
    GS_ASSERT_FAILS(gs_petsc_read_rows(tmp_path("rowscol.petsc"), &h, 1, 3, len, 2, &R), GS_ERR_IO,
                    "row 2 (entry 5 of the file) has column index 3; expected 0..2");
    assert_null(R.rowptr);
    GS_ASSERT_FAILS(gs_petsc_read_rows(tmp_path("rowscol.petsc"), &h, 1, 3, len, 4, &R), GS_ERR_IO,
                    "add up to 9, more than the 7 nonzeros");
    memset(o.b + 20, 0xFF, 4); /* row 2 has length -1 */
    write_bytes(tmp_path("rowslen.petsc"), o.b, o.n);
    GS_ASSERT_OK(gs_petsc_matrix_header(tmp_path("rowslen.petsc"), &h));
    GS_ASSERT_FAILS(gs_petsc_read_row_lengths(tmp_path("rowslen.petsc"), &h, 1, 2, len, &nnz), GS_ERR_IO,
                    "row 2 has length -1");
    /* 64-bit nonzeros beyond what the file could hold, and beyond what bytes can count */
    o = tridiag(8);
    for (int k = 0; k < 8; k++) o.b[24 + k] = k == 0 ? 0x23 : 0xAB;
    write_bytes(tmp_path("rowsnnz.petsc"), o.b, o.n);
    GS_ASSERT_FAILS(gs_petsc_matrix_header(tmp_path("rowsnnz.petsc"), &h), GS_ERR_IO, "the header announces");
    /* a truncated file: the header's sizes against the file's */
    o = tridiag(4);
    write_bytes(tmp_path("rowscut.petsc"), o.b, 40);
    GS_ASSERT_FAILS(gs_petsc_matrix_header(tmp_path("rowscut.petsc"), &h), GS_ERR_IO, "the column indices need");
    /* not a PETSc matrix file: no reading by rows, and no error (the whole-file reader decides) */
    const char *mm = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n";
    write_bytes(tmp_path("text_rows.petsc"), mm, strlen(mm));
    GS_ASSERT_OK(gs_petsc_matrix_header(tmp_path("text_rows.petsc"), &h));
    assert_false(h.by_rows);
    GS_ASSERT_FAILS(gs_petsc_matrix_header(tmp_path("missing_rows.petsc"), &h), GS_ERR_IO, "missing_rows.petsc");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_fixtures_same_message),
        cmocka_unit_test(test_index_limit_same_line),
        cmocka_unit_test(test_variants_identical),
        cmocka_unit_test(test_row_major_and_disordered),
        cmocka_unit_test(test_data_matrices_identical),
        cmocka_unit_test(test_values_equal_strtod),
        cmocka_unit_test(test_petsc_round_trip),
        cmocka_unit_test(test_petsc_errors),
        cmocka_unit_test(test_petsc_rows),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
