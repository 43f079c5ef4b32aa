/* Helpers of the tests that compare the cuda backend with the host backend (the oracle): the two
 * backends (made by twin_setup), seeded random arrays, NaN-poisoned arrays, and closeness checks with
 * tolerances derived from the length of the sums. */
#ifndef GS_TEST_BACKEND_TWIN_H
#define GS_TEST_BACKEND_TWIN_H

#include <stdint.h>

#include "core/backend.h"
#include "testutil.h"

extern gs_backend *H, *C; /* host and cuda backends, shared by all tests */

extern const gs_int twin_sizes[5]; /* 1, 31, 33, 1000, 100003 */
#define NSIZES 5
#define ELEM_TOL 1e-13 /* elementwise ops: relative to max |reference| */

/* cmocka group setup and teardown: both backends */
int twin_setup(void **state);
int twin_teardown(void **state);

double *rand_array(gs_int n, uint64_t seed); /* entries in [-1, 1) */
double *nan_array(gs_int n);
gs_vector *vec_from(gs_backend *be, gs_int n, const double *data); /* data NULL: contents undefined */
double *download(const gs_vector *v);
/* cuda result vs host result, elementwise, relative to max |host| */
void expect_vec_close(const gs_vector *cv, const gs_vector *hv, const char *what);
/* Two n-term sums, each within (n+1) eps * scale of the exact one (scale = sum of the magnitudes of
 * the terms), differ by at most 2 (n+1) eps * scale (+ a tiny slack for sums that cancel to 0). */
void expect_sum_close(double a, double b, gs_int n, double scale, const char *what);
double abs_dot(gs_int n, const double *x, const double *y); /* sum |x_i y_i| */

/* A fused CG state (gs_kstate) and its vectors x, r, p, q, z on be, filled from data[0..4]. */
typedef struct ks_side {
    gs_kstate *ks;
    gs_vector *x, *r, *p, *q, *z;
} ks_side;
void ks_side_make(ks_side *S, gs_backend *be, gs_int n, double *const data[5]);
void ks_side_free(ks_side *S);

#endif
