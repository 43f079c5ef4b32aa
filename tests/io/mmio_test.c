/* Matrix Market I/O: one test per malformed-input class (status, file, line and
 * key words of the message), every field x symmetry on hand-made files with
 * known CSR, .gz input, real matrices, write/read round trips, atomic writes,
 * allocation failures. */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "testutil.h"

#include "core/mem.h"
#include "io/mmio.h"
#include "io/mmio_testing.h"

#ifndef IO_DATA_DIR
#error "IO_DATA_DIR must name tests/io/data (set by tests/io/CMakeLists.txt)"
#endif

static char tmpdir[512];

static int group_setup(void **state) {
  (void)state;
  const char *base = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/gs_io_test_XXXXXX",
           base && *base ? base : "/tmp");
  return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  DIR *d = opendir(tmpdir);
  if (d) {
    struct dirent *e;
    char p[1024];
    while ((e = readdir(d)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
        continue;
      snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
      if (unlink(p) != 0)
        rmdir(p);
    }
    closedir(d);
  }
  return rmdir(tmpdir);
}

/* Path of a fixture in tests/io/data (a static buffer per slot, so two may be
 * used at once). */
static const char *fixture(const char *name) {
  static char buf[4][1024];
  static int slot;
  slot = (slot + 1) % 4;
  snprintf(buf[slot], sizeof buf[slot], "%s/%s", IO_DATA_DIR, name);
  return buf[slot];
}

static const char *tmpfile_path(const char *name) {
  static char buf[4][1024];
  static int slot;
  slot = (slot + 1) % 4;
  snprintf(buf[slot], sizeof buf[slot], "%s/%s", tmpdir, name);
  return buf[slot];
}

static const char *data_matrix(const char *name) {
  static char buf[1024];
  snprintf(buf, sizeof buf, "%s/matrices/%s", GS_DATA_DIR, name);
  return buf;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
  assert_int_equal(fclose(f), 0);
}

static void write_gz(const char *path, const char *text) {
  gzFile gz = gzopen(path, "wb");
  assert_non_null(gz);
  assert_int_equal(gzwrite(gz, text, (unsigned)strlen(text)),
                   (int)strlen(text));
  assert_int_equal(gzclose(gz), Z_OK);
}

/* Number of files in the temporary folder whose name contains ".tmp."
 * (left-over partial output). */
static int leftover_temps(void) {
  int n = 0;
  DIR *d = opendir(tmpdir);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strstr(e->d_name, ".tmp."))
      n++;
  closedir(d);
  return n;
}

/* Number of open file descriptors (every reader and writer path must close what
 * it opened). */
static int open_fds(void) {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  if (!d)
    return -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.')
      n++;
  closedir(d);
  return n;
}

/* The matrix reader fails with GS_ERR_IO, a message starting "PATH:LINE: " and
 * holding every key, and leaves A zeroed. */
static void check_matrix_error(const char *path, int line,
                               const char *const *keys) {
  char where[1200];
  snprintf(where, sizeof where, "%s:%d: ", path, line);
  gs_csr A;
  GS_ASSERT_FAILS(gs_mm_read_matrix(path, &A, NULL), GS_ERR_IO, where);
  assert_null(A.rowptr);
  assert_null(A.colind);
  assert_null(A.val);
  assert_int_equal(A.nnz, 0);
  for (; *keys; keys++)
    GS_ASSERT_FAILS(gs_mm_read_matrix(path, &A, NULL), GS_ERR_IO, *keys);
}

static void check_vector_error(const char *path, gs_int expected_n, int line,
                               const char *const *keys) {
  char where[1200];
  snprintf(where, sizeof where, "%s:%d: ", path, line);
  double *x = (double *)&where; /* must be reset to NULL */
  gs_int n = -1;
  GS_ASSERT_FAILS(gs_mm_read_vector(path, expected_n, &x, &n), GS_ERR_IO,
                  where);
  assert_null(x);
  assert_int_equal(n, 0);
  for (; *keys; keys++)
    GS_ASSERT_FAILS(gs_mm_read_vector(path, expected_n, &x, &n), GS_ERR_IO,
                    *keys);
}

#define MATRIX_ERROR(path, line, ...)                                          \
  check_matrix_error((path), (line), (const char *const[]){__VA_ARGS__, NULL})
#define VECTOR_ERROR(path, expected_n, line, ...)                              \
  check_vector_error((path), (expected_n), (line),                             \
                     (const char *const[]){__VA_ARGS__, NULL})

/* ------------------------------------------------------------------------------------------------
 */
/* One test per error class. */

static void test_error_empty_file(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("empty.mtx"), 1, "the file is empty",
               "expected the banner line");
  VECTOR_ERROR(fixture("empty.mtx"), 0, 1, "the file is empty",
               "expected the banner line");
}

static void test_error_banner_missing(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("no_banner.mtx"), 1, "found '3 3 1'",
               "expected the banner line",
               "%%MatrixMarket matrix coordinate real general");
}

static void test_error_banner_garbled(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("bad_format.mtx"), 1, "found format 'coordinat'",
               "expected 'coordinate' or 'array'");
  MATRIX_ERROR(fixture("short_banner.mtx"), 1, "has 4 words", "expected 5");
  MATRIX_ERROR(fixture("wrong_object.mtx"), 1, "found object 'vector'",
               "expected 'matrix'");
}

static void test_error_complex_unsupported(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("complex.mtx"), 1, "field 'complex' is not supported",
               "expected 'real', 'integer' or 'pattern'");
  VECTOR_ERROR(fixture("complex.mtx"), 0, 1, "'complex' is not supported");
}

static void test_error_hermitian_unsupported(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("hermitian.mtx"), 1,
               "symmetry 'hermitian' is not supported",
               "expected 'general', 'symmetric' or 'skew-symmetric'");
}

static void test_error_nonsquare(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("nonsquare.mtx"), 3, "found a 4 x 3 matrix",
               "expected a square matrix");
}

static void test_error_size_line_missing(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("size_missing.mtx"), 4, "end of file after the header",
               "expected the size line 'rows columns entries'");
}

static void test_error_size_line_garbled(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("size_garbled.mtx"), 3,
               "found size line '3 3' with 2 numbers",
               "expected 3: 'rows columns entries'");
  MATRIX_ERROR(fixture("size_x.mtx"), 2, "found 'x' for the number of columns",
               "expected non-negative integers");
  MATRIX_ERROR(fixture("size_notnumber.mtx"), 2,
               "found 'many' for the number of entries",
               "expected non-negative integers");
  MATRIX_ERROR(fixture("size_negative.mtx"), 2,
               "negative number of entries (-2)",
               "expected non-negative integers");
  /* an array vector's size line has two numbers */
  VECTOR_ERROR(fixture("nonsquare.mtx"), 0, 3, "found a 4 x 3 matrix",
               "expected a vector");
}

static void test_error_fewer_entries(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("too_few.mtx"), 6,
               "end of file after 2 of the 3 entries declared on line 2",
               "expected 1 more entry");
  VECTOR_ERROR(fixture("vec_too_few.mtx"), 4, 6,
               "end of file after 3 of the 4 values declared on line 2",
               "expected 1 more value");
}

static void test_error_more_entries(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("too_many.mtx"), 6, "found another entry '3 3 3.0'",
               "after the 2 declared on line 2",
               "expected the end of the file");
  VECTOR_ERROR(fixture("vec_too_many.mtx"), 0, 5, "found another value '3'",
               "expected the end of the file");
}

static void test_error_index_zero(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("row_zero.mtx"), 4, "row index 0", "expected 1..3",
               "start at 1");
  MATRIX_ERROR(fixture("col_zero.mtx"), 4, "column index 0", "expected 1..3");
}

static void test_error_index_negative(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("row_negative.mtx"), 4, "row index '-2' is negative",
               "expected 1..3");
}

static void test_error_index_beyond(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("col_beyond.mtx"), 5,
               "column index '4' is beyond the size 3", "expected 1..3");
  MATRIX_ERROR(fixture("row_beyond_huge.mtx"), 3,
               "row index '99999999999999999999999' is beyond",
               "expected 1..3");
  MATRIX_ERROR(fixture("index_text.mtx"), 3,
               "column index 'b' is not an integer", "expected an integer");
}

static void test_error_value_not_numeric(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("value_text.mtx"), 4, "value 'two' is not a number",
               "expected a real number");
  MATRIX_ERROR(fixture("value_comma.mtx"), 3, "value '1,5' is not a number");
  MATRIX_ERROR(fixture("value_missing.mtx"), 4,
               "found entry '2 2' with 2 numbers",
               "expected 'row column value'");
  MATRIX_ERROR(fixture("int_not_integer.mtx"), 3,
               "value '1.5' is not an integer", "field 'integer'");
}

static void test_error_value_nan_inf(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("value_nan.mtx"), 3, "value 'nan' is not finite",
               "expected a finite real number");
  MATRIX_ERROR(fixture("value_inf.mtx"), 4, "value '-Inf' is not finite",
               "expected a finite");
  MATRIX_ERROR(fixture("value_overflow.mtx"), 3,
               "value '1e999' overflows a double", "expected a finite");
}

static void test_error_extra_tokens(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("extra_token.mtx"), 4,
               "found extra text '7.0' after the entry",
               "expected only 'row column value'");
  VECTOR_ERROR(fixture("vec_extra.mtx"), 0, 3,
               "found extra text '2' after the value",
               "expected one value per line");
}

static void test_error_beyond_32bit(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("rows_over_32bit.mtx"), 2,
               "found 3000000000 rows on the size line, beyond the 32-bit "
               "index limit 2147483647",
               "expected at most 2147483647 rows");
  MATRIX_ERROR(fixture("nnz_over_32bit.mtx"), 2,
               "found 2147483648 entries on the size line, beyond the 32-bit "
               "index limit",
               "expected at most 2147483647 entries");
}

/* The symmetric expansion check, reached with a lowered limit (the real one
 * needs 2^31 entries). */
static void test_error_symmetric_expansion_beyond_limit(void **state) {
  (void)state;
  const char *path = tmpfile_path("sym_expand.mtx");
  write_file(path,
             "%%MatrixMarket matrix coordinate real symmetric\n"
             "8 8 6\n"
             "1 1 1\n"                      /* line 3: diagonal, counted once */
             "2 1 1\n3 1 1\n4 1 1\n5 1 1\n" /* lines 4-7: 1 + 8 = 9 entries */
             "6 1 1\n");                    /* line 8: 11 > 10 */
  gs_mm_testing_set_index_limit(10);
  MATRIX_ERROR(path, 8, "symmetric expansion", "exceeds 10 entries",
               "32-bit index limit");
  gs_mm_testing_set_index_limit(11);
  gs_csr A;
  GS_ASSERT_OK(
      gs_mm_read_matrix(path, &A, NULL)); /* 1 + 2*5 = 11 fits exactly */
  assert_int_equal(A.nnz, 11);
  gs_csr_free(&A);
}

static int restore_index_limit(void **state) {
  (void)state;
  gs_mm_testing_set_index_limit(0);
  return 0;
}

static void test_error_truncated(void **state) {
  (void)state;
  /* cut in the middle of the last value, no final newline */
  MATRIX_ERROR(fixture("truncated.mtx"), 5, "value '1.5e' is not a number",
               "is the file truncated?");

  /* a gzip stream cut in half */
  char text[200000];
  size_t len =
      (size_t)snprintf(text, sizeof text,
                       "%%%%MatrixMarket matrix coordinate real general\n"
                       "3000 3000 3000\n");
  uint64_t seed = 7;
  for (int i = 1; i <= 3000; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, "%d %d %.17g\n", i,
                            i, gs_test_rand(&seed));
  const char *full = tmpfile_path("full.mtx.gz");
  write_gz(full, text);
  gs_csr A;
  GS_ASSERT_OK(gs_mm_read_matrix(full, &A, NULL));
  assert_int_equal(A.nnz, 3000);
  gs_csr_free(&A);

  FILE *f = fopen(full, "rb");
  assert_non_null(f);
  static unsigned char gzbytes[200000];
  size_t nz = fread(gzbytes, 1, sizeof gzbytes, f);
  fclose(f);
  assert_true(nz > 1000);
  const char *cut = tmpfile_path("cut.mtx.gz");
  f = fopen(cut, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(gzbytes, 1, nz / 2, f), nz / 2);
  fclose(f);
  char where[1100];
  snprintf(where, sizeof where, "%s:", cut);
  GS_ASSERT_FAILS(gs_mm_read_matrix(cut, &A, NULL), GS_ERR_IO, where);
  GS_ASSERT_FAILS(gs_mm_read_matrix(cut, &A, NULL), GS_ERR_IO, "truncated");
  GS_ASSERT_FAILS(gs_mm_read_matrix(cut, &A, NULL), GS_ERR_IO,
                  "expected a complete");
  assert_null(A.rowptr);
}

static void test_error_skew_diagonal(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("skew_diag.mtx"), 4,
               "diagonal entry (3,3) = '4.0' in a skew-symmetric matrix",
               "expected the diagonal to be zero or absent");
}

static void test_error_mixed_triangles(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("mixed_triangles.mtx"), 5,
               "entry (1,3) lies above the diagonal but line 3",
               "one triangle only");
}

static void test_error_array_matrix(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("array_matrix.mtx"), 1, "found format 'array'",
               "expected 'coordinate'");
}

static void test_error_binary(void **state) {
  (void)state;
  MATRIX_ERROR(fixture("binary.mtx"), 3, "NUL byte", "expected a text file");
}

static void test_error_not_found(void **state) {
  (void)state;
  const char *path = tmpfile_path("does_not_exist.mtx");
  gs_csr A;
  GS_ASSERT_FAILS(gs_mm_read_matrix(path, &A, NULL), GS_ERR_IO, path);
  GS_ASSERT_FAILS(gs_mm_read_matrix(path, &A, NULL), GS_ERR_IO,
                  strerror(ENOENT));
  GS_ASSERT_FAILS(gs_mm_read_matrix(path, &A, NULL), GS_ERR_IO,
                  "cannot open for reading");
  double *x;
  gs_int n;
  GS_ASSERT_FAILS(gs_mm_read_vector(path, 3, &x, &n), GS_ERR_IO,
                  strerror(ENOENT));
  /* a path through a regular file */
  char through[1100];
  snprintf(through, sizeof through, "%s/x", data_matrix("LFAT5.mtx"));
  GS_ASSERT_FAILS(gs_mm_read_matrix(through, &A, NULL), GS_ERR_IO,
                  strerror(ENOTDIR));
  /* a folder is not a file */
  GS_ASSERT_FAILS(gs_mm_read_matrix(tmpdir, &A, NULL), GS_ERR_IO,
                  "is a folder");
}

static void test_error_unreadable(void **state) {
  (void)state;
  const char *path = tmpfile_path("unreadable.mtx");
  write_file(path,
             "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n");
  assert_int_equal(chmod(path, 0), 0);
  FILE *probe = fopen(path, "r");
  if (probe) { /* root reads anything: nothing to test here */
    fclose(probe);
    unlink(path);
    skip();
  }
  gs_csr A;
  GS_ASSERT_FAILS(gs_mm_read_matrix(path, &A, NULL), GS_ERR_IO,
                  strerror(EACCES));
  unlink(path);
}

/* A size line declaring 2*10^9 entries over a one-entry file: rejected at the
 * end of the file without the 32 GB the declaration asks for (address space
 * limited to what we use + 512 MiB). */
static void test_error_hostile_nnz(void **state) {
  (void)state;
  struct rlimit old;
  assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
  long pages = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f || fscanf(f, "%ld", &pages) != 1) {
    if (f)
      fclose(f);
    skip();
  }
  fclose(f);
  rlim_t now = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE);
  struct rlimit lim = old;
  lim.rlim_cur = now + ((rlim_t)512 << 20);
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur)
    lim.rlim_cur = old.rlim_cur;
  assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
  gs_csr A;
  gs_error_clear();
  gs_status st = gs_mm_read_matrix(fixture("hostile_nnz.mtx"), &A, NULL);
  char msg[1100];
  snprintf(msg, sizeof msg, "%s", gs_error_message());
  gs_error_clear();
  assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
  if (st != GS_ERR_IO)
    fprintf(stderr, "got %s: %s\n", gs_status_name(st), msg);
  assert_int_equal(st, GS_ERR_IO);
  assert_non_null(strstr(msg, "hostile_nnz.mtx:3: "));
  assert_non_null(strstr(msg, "end of file after 1 of the 2000000000 entries"));
}

/* Every malformed fixture, read as a matrix and as a vector, leaves no
 * descriptor open. */
static void test_errors_close_files(void **state) {
  (void)state;
  int fds = open_fds();
  assert_true(fds > 0);
  DIR *d = opendir(IO_DATA_DIR);
  assert_non_null(d);
  struct dirent *e;
  int files = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    gs_csr A;
    double *x = NULL;
    gs_int n;
    const char *path = fixture(e->d_name);
    gs_status st = gs_mm_read_matrix(path, &A, NULL);
    gs_error_clear();
    if (st == GS_OK)
      gs_csr_free(&A);
    st = gs_mm_read_vector(path, 0, &x, &n);
    gs_error_clear();
    if (st == GS_OK)
      gs_free(&x);
    files++;
  }
  closedir(d);
  assert_true(files >= 40);
  assert_int_equal(open_fds(), fds);
}

static void test_error_vector_length(void **state) {
  (void)state;
  VECTOR_ERROR(fixture("vec_len5.mtx"), 7, 3, "found a vector of length 5",
               "expected length 7");
  VECTOR_ERROR(fixture("vec_two_cols.mtx"), 0, 2, "found a 3 x 2 array",
               "expected a vector (n x 1");
  VECTOR_ERROR(fixture("vec_symmetric.mtx"), 0, 1,
               "symmetry 'symmetric' for a vector", "expected 'general'");
  VECTOR_ERROR(fixture("vec_array_pattern.mtx"), 0, 1, "'array pattern'",
               "coordinate");
  VECTOR_ERROR(data_matrix("cage5.mtx"), 37, 14, "found a 37 x 37 matrix",
               "expected a vector");
  VECTOR_ERROR(data_matrix("LFAT5.mtx"), 14, 1,
               "symmetry 'symmetric' for a vector", "expected 'general'");
  /* the right length, or no expectation, reads it */
  double *x = NULL;
  gs_int n = 0;
  GS_ASSERT_OK(gs_mm_read_vector(fixture("vec_len5.mtx"), 5, &x, &n));
  assert_int_equal(n, 5);
  for (int i = 0; i < 5; i++)
    assert_true(x[i] == i + 1);
  gs_free(&x);
}

/* ------------------------------------------------------------------------------------------------
 */
/* Valid input. */

typedef struct mm_case {
  const char *text;
  const char *field, *symmetry;
  long long entries;
  gs_int nnz;
  gs_int rowptr[4];
  gs_int col[8];
  double val[8];
} mm_case;

static void check_csr(const gs_csr *A, gs_int n, gs_int nnz,
                      const gs_int *rowptr, const gs_int *col,
                      const double *val) {
  assert_int_equal(A->nrows, n);
  assert_int_equal(A->ncols, n);
  assert_int_equal(A->nnz, nnz);
  assert_non_null(A->val);
  for (gs_int i = 0; i <= n; i++)
    assert_int_equal(A->rowptr[i], rowptr[i]);
  for (gs_int k = 0; k < nnz; k++) {
    assert_int_equal(A->colind[k], col[k]);
    if (A->val[k] != val[k])
      fail_msg("val[%d] = %.17g, expected %.17g", (int)k, A->val[k], val[k]);
  }
}

static void test_field_symmetry_combinations(void **state) {
  (void)state;
  static const mm_case cases[] = {
      {"%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1.5\n2 1 "
       "-2\n3 2 3.25\n3 3 4\n",
       "real",
       "general",
       4,
       4,
       {0, 1, 2, 4},
       {0, 0, 1, 2},
       {1.5, -2, 3.25, 4}},
      {"%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1.5\n2 1 "
       "-2\n3 2 3.25\n3 3 4\n",
       "real",
       "symmetric",
       4,
       6,
       {0, 2, 4, 6},
       {0, 1, 0, 2, 1, 2},
       {1.5, -2, -2, 3.25, 3.25, 4}},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 -2\n3 "
       "1 0.5\n3 2 3.25\n",
       "real",
       "skew-symmetric",
       3,
       6,
       {0, 2, 4, 6},
       {1, 2, 0, 2, 0, 1},
       {2, -0.5, -2, -3.25, 0.5, 3.25}},
      {"%%MatrixMarket matrix coordinate integer general\n3 3 4\n1 1 7\n2 1 "
       "-2\n3 2 3\n3 3 +4\n",
       "integer",
       "general",
       4,
       4,
       {0, 1, 2, 4},
       {0, 0, 1, 2},
       {7, -2, 3, 4}},
      {"%%MatrixMarket matrix coordinate integer symmetric\n3 3 4\n1 1 7\n2 1 "
       "-2\n3 2 3\n3 3 4\n",
       "integer",
       "symmetric",
       4,
       6,
       {0, 2, 4, 6},
       {0, 1, 0, 2, 1, 2},
       {7, -2, -2, 3, 3, 4}},
      {"%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 4\n2 1 "
       "-2\n3 1 5\n3 2 3\n2 2 0\n",
       "integer",
       "skew-symmetric",
       4,
       7,
       {0, 2, 5, 7},
       {1, 2, 0, 1, 2, 0, 1},
       {2, -5, -2, 0, -3, 5, 3}},
      {"%%MatrixMarket matrix coordinate pattern general\n3 3 4\n1 1\n2 1\n3 "
       "2\n3 3\n",
       "pattern",
       "general",
       4,
       4,
       {0, 1, 2, 4},
       {0, 0, 1, 2},
       {1, 1, 1, 1}},
      {"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 4\n1 1\n2 1\n3 "
       "2\n3 3\n",
       "pattern",
       "symmetric",
       4,
       6,
       {0, 2, 4, 6},
       {0, 1, 0, 2, 1, 2},
       {1, 1, 1, 1, 1, 1}},
      {"%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 3\n2 1\n3 "
       "1\n3 2\n",
       "pattern",
       "skew-symmetric",
       3,
       6,
       {0, 2, 4, 6},
       {1, 2, 0, 2, 0, 1},
       {-1, -1, 1, -1, 1, 1}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const char *path = tmpfile_path("combo.mtx");
    write_file(path, cases[c].text);
    gs_csr A;
    gs_mm_info info;
    memset(&info, 0x5a, sizeof info);
    GS_ASSERT_OK(gs_mm_read_matrix(path, &A, &info));
    assert_true(gs_csr_is_sorted(&A));
    check_csr(&A, 3, cases[c].nnz, cases[c].rowptr, cases[c].col, cases[c].val);
    assert_string_equal(info.field, cases[c].field);
    assert_string_equal(info.symmetry, cases[c].symmetry);
    assert_int_equal(info.nrows, 3);
    assert_int_equal(info.ncols, 3);
    assert_int_equal(info.entries_in_file, cases[c].entries);
    gs_csr_free(&A);
    /* info may be NULL */
    GS_ASSERT_OK(gs_mm_read_matrix(path, &A, NULL));
    assert_int_equal(A.nnz, cases[c].nnz);
    gs_csr_free(&A);
  }
}

static void test_duplicates_summed_zeros_kept(void **state) {
  (void)state;
  const char *path = tmpfile_path("dups.mtx");
  write_file(path, "%%MatrixMarket matrix coordinate real symmetric\n"
                   "3 3 6\n"
                   "1 1 1.0\n"
                   "2 1 1.0\n"
                   "2 2 0.0\n" /* explicit zero kept */
                   "1 1 2.5\n" /* duplicate diagonal summed */
                   "2 1 2.0\n" /* duplicate off-diagonal summed on both sides */
                   "3 3 0\n");
  gs_csr A;
  GS_ASSERT_OK(gs_mm_read_matrix(path, &A, NULL));
  const gs_int rowptr[] = {0, 2, 4, 5};
  const gs_int col[] = {0, 1, 0, 1, 2};
  const double val[] = {3.5, 3.0, 3.0, 0.0, 0.0};
  check_csr(&A, 3, 5, rowptr, col, val);
  gs_csr_free(&A);
}

/* CRLF, trailing blanks, comments and blank lines between entries, upper-case
 * banner words, leading blanks, number forms (+3, .5, 1E2, -0), an
 * upper-triangle-only symmetric file, no final newline. */
static void test_tolerant_layout(void **state) {
  (void)state;
  const char *path = tmpfile_path("layout.mtx");
  write_file(path, "%%MatrixMarket MATRIX Coordinate REAL Symmetric\r\n"
                   "% comment\r\n"
                   "\r\n"
                   "   3 3   4 \t\r\n"
                   "% comment between entries\r\n"
                   "1 1 +3\t \r\n"
                   "\r\n"
                   "  1 2 .5\r\n"
                   "%\r\n"
                   "2 3\t1E2   \r\n"
                   "3 3 -0");
  gs_csr A;
  gs_mm_info info;
  GS_ASSERT_OK(gs_mm_read_matrix(path, &A, &info));
  const gs_int rowptr[] = {0, 2, 4, 6};
  const gs_int col[] = {0, 1, 0, 2, 1, 2};
  const double val[] = {3, 0.5, 0.5, 100, 100, 0};
  check_csr(&A, 3, 6, rowptr, col, val);
  assert_string_equal(info.symmetry, "symmetric");
  gs_csr_free(&A);
}

static void test_gz_reading(void **state) {
  (void)state;
  const char *text = "%%MatrixMarket matrix coordinate real general\n% gz\n3 3 "
                     "4\n1 1 1.5\n2 1 -2\n"
                     "3 2 3.25\n3 3 4\n";
  const gs_int rowptr[] = {0, 1, 2, 4};
  const gs_int col[] = {0, 0, 1, 2};
  const double val[] = {1.5, -2, 3.25, 4};
  /* by name and by content: zlib recognises the gzip header whatever the file
   * is called */
  const char *names[] = {"small.mtx.gz", "compressed_without_suffix.mtx"};
  for (int k = 0; k < 2; k++) {
    const char *path = tmpfile_path(names[k]);
    write_gz(path, text);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fgetc(f), 0x1f); /* really compressed */
    fclose(f);
    gs_csr A;
    GS_ASSERT_OK(gs_mm_read_matrix(path, &A, NULL));
    check_csr(&A, 3, 4, rowptr, col, val);
    gs_csr_free(&A);
  }
  /* a vector too */
  const char *vpath = tmpfile_path("vec.mtx.gz");
  write_gz(vpath,
           "%%MatrixMarket matrix array real general\n3 1\n1\n-2.5\n3e-3\n");
  double *x;
  gs_int n;
  GS_ASSERT_OK(gs_mm_read_vector(vpath, 3, &x, &n));
  assert_int_equal(n, 3);
  assert_true(x[0] == 1 && x[1] == -2.5 && x[2] == 3e-3);
  gs_free(&x);
}

static void check_transpose_equal(const gs_csr *A) {
  gs_csr T;
  GS_ASSERT_OK(gs_csr_transpose(A, &T));
  assert_int_equal(T.nnz, A->nnz);
  assert_memory_equal(T.rowptr, A->rowptr,
                      ((size_t)A->nrows + 1) * sizeof(gs_int));
  assert_memory_equal(T.colind, A->colind, (size_t)A->nnz * sizeof(gs_int));
  assert_memory_equal(T.val, A->val, (size_t)A->nnz * sizeof(double));
  gs_csr_free(&T);
}

static double csr_get(const gs_csr *A, gs_int i, gs_int j) {
  for (gs_int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
    if (A->colind[k] == j)
      return A->val[k];
  return NAN;
}

static void test_real_matrices(void **state) {
  (void)state;
  gs_csr A;
  gs_mm_info info;

  GS_ASSERT_OK(gs_mm_read_matrix(data_matrix("LFAT5.mtx"), &A, &info));
  assert_int_equal(A.nrows, 14);
  assert_int_equal(A.nnz, 46); /* 14 diagonal + 2 x 16 mirrored */
  assert_int_equal(info.entries_in_file, 30);
  assert_string_equal(info.field, "real");
  assert_string_equal(info.symmetry, "symmetric");
  assert_true(gs_csr_is_sorted(&A));
  check_transpose_equal(&A);
  gs_csr_free(&A);

  GS_ASSERT_OK(gs_mm_read_matrix(data_matrix("e05r0000.mtx.gz"), &A, &info));
  assert_int_equal(A.nrows, 236);
  assert_int_equal(A.nnz, 5856);
  assert_string_equal(info.symmetry, "general");
  assert_true(csr_get(&A, 6, 0) ==
              strtod("-5.3333331478961e-01", NULL)); /* first entry "7 1 ..." */
  gs_csr_free(&A);

  GS_ASSERT_OK(gs_mm_read_matrix(data_matrix("gr_30_30.mtx"), &A, &info));
  assert_int_equal(A.nrows, 900);
  assert_int_equal(A.nnz, 7744);
  assert_int_equal(info.entries_in_file, 4322);
  assert_string_equal(info.field, "integer");
  for (gs_int k = 0; k < A.nnz; k++)
    assert_true(A.val[k] == floor(A.val[k]));
  assert_true(csr_get(&A, 0, 0) == 8.0);
  check_transpose_equal(&A);
  gs_csr_free(&A);

  GS_ASSERT_OK(gs_mm_read_matrix(data_matrix("plat1919.mtx.gz"), &A, &info));
  assert_int_equal(A.nrows, 1919);
  assert_int_equal(A.nnz, 32399);
  gs_csr_free(&A);

  GS_ASSERT_OK(gs_mm_read_matrix(data_matrix("bcsstk01.mtx"), &A, NULL));
  assert_int_equal(A.nrows, 48);
  assert_int_equal(A.nnz, 400);
  gs_csr_free(&A);

  GS_ASSERT_OK(gs_mm_read_matrix(data_matrix("cage5.mtx"), &A, NULL));
  assert_int_equal(A.nrows, 37);
  assert_int_equal(A.nnz, 233);
  gs_csr_free(&A);
}

static void test_vector_reading(void **state) {
  (void)state;
  double *x;
  gs_int n;
  /* coordinate n x 1: missing entries 0, repeated ones summed */
  const char *cpath = tmpfile_path("cvec.mtx");
  write_file(cpath, "%%MatrixMarket matrix coordinate real general\n5 1 3\n2 1 "
                    "1.5\n% c\n4 1 -2\n2 1 0.5\n");
  GS_ASSERT_OK(gs_mm_read_vector(cpath, 5, &x, &n));
  assert_int_equal(n, 5);
  const double want[] = {0, 2, 0, -2, 0};
  for (int i = 0; i < 5; i++)
    assert_true(x[i] == want[i]);
  gs_free(&x);
  /* column index must be 1 */
  const char *bad = tmpfile_path("cvec_bad.mtx");
  write_file(bad,
             "%%MatrixMarket matrix coordinate real general\n5 1 1\n2 2 1.5\n");
  VECTOR_ERROR(bad, 0, 3, "column index '2' is beyond the size 1",
               "expected 1..1");
  /* integer array */
  const char *ipath = tmpfile_path("ivec.mtx");
  write_file(ipath,
             "%%MatrixMarket matrix array integer general\n3 1\n1\n\n-7\n42\n");
  GS_ASSERT_OK(gs_mm_read_vector(ipath, 0, &x, &n));
  assert_int_equal(n, 3);
  assert_true(x[0] == 1 && x[1] == -7 && x[2] == 42);
  gs_free(&x);
}

/* ------------------------------------------------------------------------------------------------
 */
/* Writing. */

/* An n x n test matrix with empty rows, one dense row and values of every
 * magnitude. */
static void make_matrix(gs_int n, uint64_t seed, gs_csr *A) {
  gs_int cap = 12 * n + n;
  gs_int *ri = malloc((size_t)cap * sizeof *ri),
         *ci = malloc((size_t)cap * sizeof *ci);
  double *v = malloc((size_t)cap * sizeof *v);
  assert_true(ri && ci && v);
  gs_int nnz = 0;
  for (gs_int i = 0; i < n; i++) {
    if (i % 7 == 3)
      continue; /* empty row */
    int per = i == n / 2 ? n : 1 + (int)(gs_test_rand(&seed) * 10);
    for (int k = 0; k < per && nnz < cap; k++) {
      ri[nnz] = i;
      ci[nnz] = i == n / 2 ? k : (gs_int)(gs_test_rand(&seed) * n);
      double mag = pow(10.0, -300 + 600 * gs_test_rand(&seed));
      v[nnz] = (gs_test_rand(&seed) < 0.5 ? -1 : 1) * mag * gs_test_rand(&seed);
      if (k == 0)
        v[nnz] = 1.0 / 3.0;
      nnz++;
    }
  }
  GS_ASSERT_OK(gs_csr_from_coo(n, n, nnz, ri, ci, v, A));
  free(ri);
  free(ci);
  free(v);
}

static void assert_csr_identical(const gs_csr *A, const gs_csr *B) {
  assert_int_equal(A->nrows, B->nrows);
  assert_int_equal(A->ncols, B->ncols);
  assert_int_equal(A->nnz, B->nnz);
  assert_memory_equal(A->rowptr, B->rowptr,
                      ((size_t)A->nrows + 1) * sizeof(gs_int));
  assert_memory_equal(A->colind, B->colind, (size_t)A->nnz * sizeof(gs_int));
  assert_memory_equal(A->val, B->val,
                      (size_t)A->nnz * sizeof(double)); /* bit for bit */
}

static void test_roundtrip_vector(void **state) {
  (void)state;
  enum { N = 1000 };
  double *x = malloc(N * sizeof *x);
  assert_non_null(x);
  uint64_t seed = 11;
  for (int i = 0; i < N; i++)
    x[i] = (gs_test_rand(&seed) - 0.5) *
           pow(10.0, -300 + 600 * gs_test_rand(&seed));
  const double special[] = {0.1,      1.0 / 3.0, -0.0,
                            0.0,      5e-324,    DBL_MAX,
                            -DBL_MIN, 1e22,      123456789012345680.0};
  for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
    x[k] = special[k];
  const char *names[] = {"x.mtx", "x.mtx.gz"};
  for (int t = 0; t < 2; t++) {
    const char *path = tmpfile_path(names[t]);
    GS_ASSERT_OK(gs_mm_write_vector(path, N, x));
    double *y = NULL;
    gs_int n = 0;
    GS_ASSERT_OK(gs_mm_read_vector(path, N, &y, &n));
    assert_int_equal(n, N);
    assert_memory_equal(x, y, N * sizeof *x);
    gs_free(&y);
  }
  /* the .gz one is compressed */
  FILE *f = fopen(tmpfile_path("x.mtx.gz"), "rb");
  assert_non_null(f);
  assert_int_equal(fgetc(f), 0x1f);
  assert_int_equal(fgetc(f), 0x8b);
  fclose(f);
  assert_int_equal(leftover_temps(), 0);
  free(x);
}

static void test_roundtrip_matrix(void **state) {
  (void)state;
  gs_csr A, B;
  make_matrix(203, 5, &A);
  const char *names[] = {"A.mtx", "A.mtx.gz"};
  for (int t = 0; t < 2; t++) {
    const char *path = tmpfile_path(names[t]);
    GS_ASSERT_OK(gs_mm_write_matrix(path, &A));
    gs_mm_info info;
    GS_ASSERT_OK(gs_mm_read_matrix(path, &B, &info));
    assert_string_equal(info.field, "real");
    assert_string_equal(info.symmetry, "general");
    assert_int_equal(info.entries_in_file, A.nnz);
    assert_csr_identical(&A, &B);
    gs_csr_free(&B);
  }
  /* a real matrix through write and read */
  gs_csr C;
  GS_ASSERT_OK(gs_mm_read_matrix(data_matrix("plat1919.mtx.gz"), &C, NULL));
  GS_ASSERT_OK(gs_mm_write_matrix(tmpfile_path("plat.mtx"), &C));
  GS_ASSERT_OK(gs_mm_read_matrix(tmpfile_path("plat.mtx"), &B, NULL));
  assert_csr_identical(&C, &B);
  gs_csr_free(&B);
  gs_csr_free(&C);
  /* pattern (no values): written as pattern, read back as ones */
  double *saved = A.val;
  A.val = NULL;
  GS_ASSERT_OK(gs_mm_write_matrix(tmpfile_path("P.mtx"), &A));
  A.val = saved;
  gs_mm_info info;
  GS_ASSERT_OK(gs_mm_read_matrix(tmpfile_path("P.mtx"), &B, &info));
  assert_string_equal(info.field, "pattern");
  assert_int_equal(B.nnz, A.nnz);
  assert_memory_equal(B.colind, A.colind, (size_t)A.nnz * sizeof(gs_int));
  for (gs_int k = 0; k < B.nnz; k++)
    assert_true(B.val[k] == 1.0);
  gs_csr_free(&B);
  gs_csr_free(&A);
  assert_int_equal(leftover_temps(), 0);
}

static void test_write_atomic(void **state) {
  (void)state;
  const double x[3] = {1, 2, 3}, y[2] = {4, 5};
  const char *path = tmpfile_path("atomic.mtx");
  GS_ASSERT_OK(gs_mm_write_vector(path, 3, x));
  GS_ASSERT_OK(gs_mm_write_vector(path, 2, y)); /* replaces */
  double *z;
  gs_int n;
  GS_ASSERT_OK(gs_mm_read_vector(path, 0, &z, &n));
  assert_int_equal(n, 2);
  assert_true(z[0] == 4 && z[1] == 5);
  gs_free(&z);

  /* a write that fails half way (file size limit: EFBIG) leaves the old file as
   * it was and no temporary file, plain and compressed */
  gs_csr big;
  make_matrix(3000, 4, &big);
  const char *gzpath = tmpfile_path("atomic.mtx.gz");
  GS_ASSERT_OK(gs_mm_write_vector(gzpath, 2, y));
  struct rlimit old_fsize, lim;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old_fsize), 0);
  lim = old_fsize;
  lim.rlim_cur = 16384;
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
  gs_error_clear();
  gs_status st_plain = gs_mm_write_matrix(path, &big);
  char msg_plain[1200];
  snprintf(msg_plain, sizeof msg_plain, "%s", gs_error_message());
  gs_error_clear();
  gs_status st_gz = gs_mm_write_matrix(gzpath, &big);
  char msg_gz[1200];
  snprintf(msg_gz, sizeof msg_gz, "%s", gs_error_message());
  gs_error_clear();
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old_fsize), 0);
  signal(SIGXFSZ, old_handler);
  gs_csr_free(&big);
  assert_int_equal(st_plain, GS_ERR_IO);
  assert_non_null(strstr(msg_plain, path));
  assert_non_null(strstr(msg_plain, strerror(EFBIG)));
  assert_int_equal(st_gz, GS_ERR_IO);
  assert_non_null(strstr(msg_gz, gzpath));
  assert_int_equal(leftover_temps(), 0);
  const char *kept[] = {path, gzpath};
  for (int t = 0; t < 2; t++) {
    GS_ASSERT_OK(gs_mm_read_vector(kept[t], 2, &z, &n));
    assert_true(z[0] == 4 && z[1] == 5);
    gs_free(&z);
  }

  /* non-finite values are written (a diverged solve's output) but refused when
   * read back */
  const double bad[3] = {1, NAN, -INFINITY};
  const char *nanpath = tmpfile_path("nan.mtx");
  GS_ASSERT_OK(gs_mm_write_vector(nanpath, 3, bad));
  VECTOR_ERROR(nanpath, 3, 5, "is not finite", "expected a finite real number");

  /* missing folder */
  char missing[1100];
  snprintf(missing, sizeof missing, "%s/no_such_folder/x.mtx", tmpdir);
  GS_ASSERT_FAILS(gs_mm_write_vector(missing, 3, x), GS_ERR_IO, missing);
  GS_ASSERT_FAILS(gs_mm_write_vector(missing, 3, x), GS_ERR_IO,
                  strerror(ENOENT));

  /* the rename fails (the target is a folder): the temporary file is removed,
   * the folder kept */
  const char *folder = tmpfile_path("a_folder.mtx");
  assert_int_equal(mkdir(folder, 0755), 0);
  gs_csr A;
  make_matrix(40, 3, &A);
  GS_ASSERT_FAILS(gs_mm_write_matrix(folder, &A), GS_ERR_IO, strerror(EISDIR));
  struct stat sb;
  assert_int_equal(stat(folder, &sb), 0);
  assert_true(S_ISDIR(sb.st_mode));
  assert_int_equal(rmdir(folder), 0);
  assert_int_equal(leftover_temps(), 0);

  /* an invalid matrix is refused before any file is created */
  const char *never = tmpfile_path("never.mtx");
  A.colind[0] = A.ncols;
  GS_ASSERT_FAILS(gs_mm_write_matrix(never, &A), GS_ERR_ARG, "outside");
  assert_int_equal(access(never, F_OK), -1);
  gs_csr_free(&A);
  assert_int_equal(leftover_temps(), 0);
}

/* Every allocation of a read or a write fails in turn: GS_ERR_MEM, no output,
 * nothing leaked (the sanitizer build checks the leaks). */
static void test_allocation_failures(void **state) {
  (void)state;
  int fds = open_fds();
  int failures = 0;
  for (long k = 1;; k++) {
    gs_csr A;
    gs_error_clear();
    gs_alloc_fail_at(k);
    gs_status st = gs_mm_read_matrix(data_matrix("LFAT5.mtx"), &A, NULL);
    gs_alloc_fail_at(0);
    gs_error_clear();
    if (st == GS_OK) {
      assert_int_equal(A.nnz, 46);
      gs_csr_free(&A);
      break;
    }
    assert_int_equal(st, GS_ERR_MEM);
    assert_null(A.rowptr);
    failures++;
    assert_true(k < 100);
  }
  assert_true(failures >= 3); /* buffer, triplets, CSR */

  for (long k = 1;; k++) {
    double *x = NULL;
    gs_int n = 0;
    gs_error_clear();
    gs_alloc_fail_at(k);
    gs_status st = gs_mm_read_vector(fixture("vec_len5.mtx"), 5, &x, &n);
    gs_alloc_fail_at(0);
    gs_error_clear();
    if (st == GS_OK) {
      gs_free(&x);
      break;
    }
    assert_int_equal(st, GS_ERR_MEM);
    assert_null(x);
    assert_true(k < 100);
  }

  gs_csr A;
  make_matrix(30, 9, &A);
  const char *path = tmpfile_path("alloc.mtx");
  for (long k = 1;; k++) {
    gs_error_clear();
    gs_alloc_fail_at(k);
    gs_status st = gs_mm_write_matrix(path, &A);
    gs_alloc_fail_at(0);
    gs_error_clear();
    if (st == GS_OK)
      break;
    assert_int_equal(st, GS_ERR_MEM);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(leftover_temps(), 0);
    assert_true(k < 100);
  }
  gs_csr_free(&A);
  assert_int_equal(open_fds(), fds);
}

/* A larger file (10^5 rows, ~7*10^5 entries, gzip'ed and plain): many buffer
 * refills and triplet growths; the result must match what was written. */
static void test_large_file(void **state) {
  (void)state;
  const gs_int n = 100000;
  gs_int nnz = 0;
  gs_int *ri = malloc(7 * (size_t)n * sizeof *ri),
         *ci = malloc(7 * (size_t)n * sizeof *ci);
  double *v = malloc(7 * (size_t)n * sizeof *v);
  assert_true(ri && ci && v);
  uint64_t seed = 3;
  for (gs_int i = 0; i < n; i++) {
    const gs_int off[7] = {-300, -17, -1, 0, 1, 17, 300};
    for (int k = 0; k < 7; k++) {
      gs_int j = i + off[k];
      if (j < 0 || j >= n)
        continue;
      ri[nnz] = i;
      ci[nnz] = j;
      v[nnz] = k == 3 ? 6.0 : -gs_test_rand(&seed);
      nnz++;
    }
  }
  gs_csr A, B;
  GS_ASSERT_OK(gs_csr_from_coo(n, n, nnz, ri, ci, v, &A));
  free(ri);
  free(ci);
  free(v);
  const char *names[] = {"big.mtx", "big.mtx.gz"};
  for (int t = 0; t < 2; t++) {
    const char *path = tmpfile_path(names[t]);
    GS_ASSERT_OK(gs_mm_write_matrix(path, &A));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    GS_ASSERT_OK(gs_mm_read_matrix(path, &B, NULL));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("read %s: %d rows, %d entries in %.3f s\n", names[t], (int)n,
           (int)B.nnz,
           (double)(t1.tv_sec - t0.tv_sec) +
               1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    assert_csr_identical(&A, &B);
    gs_csr_free(&B);
    unlink(path);
  }
  gs_csr_free(&A);
}


/* ------------------------------------------------------------------------------------------------
 */
/* Encodings, values and sizes that prove the file unusable. */

static void test_byte_order_marks(void **state) {
  (void)state;
  const char *p = tmpfile_path("bom.mtx");
  write_file(p, "\xEF\xBB\xBF%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n");
  MATRIX_ERROR(p, 1, "UTF-8 byte-order mark", "'%%MatrixMarket' as the very first bytes");
  VECTOR_ERROR(p, 0, 1, "byte-order mark");
  /* UTF-16 (FF FE, then every character followed by a NUL byte) */
  const char *q = tmpfile_path("utf16.mtx");
  FILE *f = fopen(q, "wb");
  assert_non_null(f);
  const char *text = "%%MatrixMarket matrix coordinate real general\n";
  fputc(0xFF, f);
  fputc(0xFE, f);
  for (const char *c = text; *c; c++) {
    fputc(*c, f);
    fputc(0, f);
  }
  assert_int_equal(fclose(f), 0);
  MATRIX_ERROR(q, 1, "UTF-16");
  /* the same compressed */
  const char *g = tmpfile_path("bom.mtx.gz");
  write_gz(g, "\xEF\xBB\xBF%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n");
  MATRIX_ERROR(g, 1, "byte-order mark");
}

static void test_underflow_read_as_zero(void **state) {
  (void)state;
  const char *p = tmpfile_path("underflow.mtx");
  write_file(p, "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 2\n1 2 1e-400\n2 1 -0.0\n2 2 3\n");
  gs_csr A = {0};
  GS_ASSERT_OK(gs_mm_read_matrix(p, &A, NULL));
  assert_int_equal(A.nnz, 4); /* kept as explicit zeros */
  assert_true(A.val[1] == 0.0);
  gs_csr_free(&A);
  /* a subnormal value is kept as it is */
  write_file(p, "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e-310\n");
  GS_ASSERT_OK(gs_mm_read_matrix(p, &A, NULL));
  assert_true(A.val[0] > 0.0 && A.val[0] < 1e-300);
  gs_csr_free(&A);
}

static void test_more_rows_than_entries(void **state) {
  (void)state;
  const char *p = tmpfile_path("fewer_entries_than_rows.mtx");
  write_file(p, "%%MatrixMarket matrix coordinate real general\n2147483647 2147483647 1\n1 1 1.0\n");
  MATRIX_ERROR(p, 2, "declares 2147483647 rows but the file stores only 1 entry",
               "at least 2147483646 rows hold no entry", "singular");
  /* symmetric: the mirrored halves count */
  write_file(p, "%%MatrixMarket matrix coordinate real symmetric\n4 4 2\n2 1 1\n3 3 1\n");
  MATRIX_ERROR(p, 2, "stores only 3 entries", "counting both mirrored halves");
  write_file(p, "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n3 3 1\n");
  gs_csr A = {0};
  GS_ASSERT_OK(gs_mm_read_matrix(p, &A, NULL)); /* 3 entries for 3 rows: read (row 1..3 covered) */
  gs_csr_free(&A);
  /* a vector may miss entries: they are 0 */
  double *x = NULL;
  gs_int n = 0;
  write_file(p, "%%MatrixMarket matrix coordinate real general\n5 1 1\n3 1 2.5\n");
  GS_ASSERT_OK(gs_mm_read_vector(p, 5, &x, &n));
  assert_true(x[2] == 2.5 && x[0] == 0.0);
  gs_free(&x);
}

static void test_gz_members_and_trailing_bytes(void **state) {
  (void)state;
  /* two gzip members one after the other (cat a.gz b.gz) read as one text */
  const char *a = tmpfile_path("part_a.gz"), *b = tmpfile_path("part_b.gz");
  write_gz(a, "%%MatrixMarket matrix coordinate real general\n2 2 2\n");
  write_gz(b, "1 1 1.5\n2 2 2.5\n");
  const char *cat = tmpfile_path("members.mtx.gz");
  FILE *out = fopen(cat, "wb");
  assert_non_null(out);
  for (int k = 0; k < 2; k++) {
    FILE *in = fopen(k ? b : a, "rb");
    assert_non_null(in);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
  }
  /* then bytes that are not gzip: ignored, as gzip and zlib do */
  fputs("trailing garbage\n", out);
  assert_int_equal(fclose(out), 0);
  gs_csr A = {0};
  GS_ASSERT_OK(gs_mm_read_matrix(cat, &A, NULL));
  assert_int_equal(A.nrows, 2);
  assert_true(A.val[0] == 1.5 && A.val[1] == 2.5);
  gs_csr_free(&A);
  /* corrupt compressed data: a message, not garbage text */
  FILE *f = fopen(cat, "r+b");
  assert_non_null(f);
  fseek(f, 12, SEEK_SET);
  for (int k = 0; k < 8; k++) fputc(0xFF, f);
  fclose(f);
  gs_error_clear();
  assert_int_equal(gs_mm_read_matrix(cat, &A, NULL), GS_ERR_IO);
  assert_non_null(strstr(gs_error_message(), "members.mtx.gz"));
  gs_error_clear();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_error_empty_file),
      cmocka_unit_test(test_error_banner_missing),
      cmocka_unit_test(test_error_banner_garbled),
      cmocka_unit_test(test_error_complex_unsupported),
      cmocka_unit_test(test_error_hermitian_unsupported),
      cmocka_unit_test(test_error_nonsquare),
      cmocka_unit_test(test_error_size_line_missing),
      cmocka_unit_test(test_error_size_line_garbled),
      cmocka_unit_test(test_error_fewer_entries),
      cmocka_unit_test(test_error_more_entries),
      cmocka_unit_test(test_error_index_zero),
      cmocka_unit_test(test_error_index_negative),
      cmocka_unit_test(test_error_index_beyond),
      cmocka_unit_test(test_error_value_not_numeric),
      cmocka_unit_test(test_error_value_nan_inf),
      cmocka_unit_test(test_error_extra_tokens),
      cmocka_unit_test(test_error_beyond_32bit),
      cmocka_unit_test_teardown(test_error_symmetric_expansion_beyond_limit,
                                restore_index_limit),
      cmocka_unit_test(test_error_truncated),
      cmocka_unit_test(test_error_skew_diagonal),
      cmocka_unit_test(test_error_mixed_triangles),
      cmocka_unit_test(test_error_array_matrix),
      cmocka_unit_test(test_error_binary),
      cmocka_unit_test(test_error_not_found),
      cmocka_unit_test(test_error_unreadable),
      cmocka_unit_test(test_error_hostile_nnz),
      cmocka_unit_test(test_error_vector_length),
      cmocka_unit_test(test_errors_close_files),
      cmocka_unit_test(test_field_symmetry_combinations),
      cmocka_unit_test(test_duplicates_summed_zeros_kept),
      cmocka_unit_test(test_tolerant_layout),
      cmocka_unit_test(test_gz_reading),
      cmocka_unit_test(test_real_matrices),
      cmocka_unit_test(test_vector_reading),
      cmocka_unit_test(test_roundtrip_vector),
      cmocka_unit_test(test_roundtrip_matrix),
      cmocka_unit_test(test_write_atomic),
      cmocka_unit_test(test_allocation_failures),
      cmocka_unit_test(test_large_file),
      cmocka_unit_test(test_byte_order_marks),
      cmocka_unit_test(test_underflow_read_as_zero),
      cmocka_unit_test(test_more_rows_than_entries),
      cmocka_unit_test(test_gz_members_and_trailing_bytes),
  };
  return cmocka_run_group_tests_name("io_mmio", tests, group_setup,
                                     group_teardown);
}
