/* Test fixture for the Krylov tests: known-solution systems, solve helper, monitor, test preconditioner. */
#include "ksp_fixture.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cfg/config.h"
#include "core/mem.h"

void sys_setup(ksp_sys *s, gs_csr *A, uint64_t seed) { sys_setup_on(s, A, seed, "host"); }

void sys_setup_on(ksp_sys *s, gs_csr *A, uint64_t seed, const char *backend)
{
    memset(s, 0, sizeof *s);
    GS_ASSERT_OK(gs_backend_create(backend, 0, &s->be));
    s->A = *A;
    memset(A, 0, sizeof *A);
    s->n = s->A.nrows;
    GS_ASSERT_OK(GS_MALLOC(s->xstar, s->n));
    GS_ASSERT_OK(GS_MALLOC(s->bh, s->n));
    GS_ASSERT_OK(GS_MALLOC(s->xh, s->n));
    uint64_t st = seed;
    for (gs_int i = 0; i < s->n; i++) s->xstar[i] = 2.0 * gs_test_rand(&st) - 1.0;
    gs_csr_spmv(1.0, &s->A, s->xstar, 0.0, s->bh);
    GS_ASSERT_OK(gs_mat_create(s->be, &s->A, &s->M));
    GS_ASSERT_OK(gs_vec_create(s->be, s->n, &s->b));
    GS_ASSERT_OK(gs_vec_create(s->be, s->n, &s->x));
    GS_ASSERT_OK(gs_vec_upload(s->b, s->bh));
    GS_ASSERT_OK(gs_vec_set(s->x, 0.0));
}

void sys_teardown(ksp_sys *s)
{
    gs_vec_destroy(&s->b);
    gs_vec_destroy(&s->x);
    gs_mat_destroy(&s->M);
    gs_csr_free(&s->A);
    gs_free(&s->xstar);
    gs_free(&s->bh);
    gs_free(&s->xh);
    gs_backend_destroy(&s->be);
}

void sys_set_x(ksp_sys *s, const double *x0)
{
    if (x0) GS_ASSERT_OK(gs_vec_upload(s->x, x0));
    else GS_ASSERT_OK(gs_vec_set(s->x, 0.0));
}

void sys_set_b(ksp_sys *s, const double *b)
{
    memcpy(s->bh, b, (size_t)s->n * sizeof *b);
    GS_ASSERT_OK(gs_vec_upload(s->b, b));
}

double sys_error(ksp_sys *s)
{
    double num = 0.0, den = 0.0;
    GS_ASSERT_OK(gs_vec_download(s->x, s->xh));
    for (gs_int i = 0; i < s->n; i++) {
        num += (s->xh[i] - s->xstar[i]) * (s->xh[i] - s->xstar[i]);
        den += s->xstar[i] * s->xstar[i];
    }
    return sqrt(num / den);
}

double sys_true_resnorm(ksp_sys *s)
{
    double r = -1.0;
    GS_ASSERT_OK(gs_true_residual(s->M, s->b, s->x, &r));
    return r;
}

void sys_setup_growth(ksp_sys *s, gs_int n, const char *backend)
{
    gs_csr A = {0};
    GS_ASSERT_OK(gs_csr_alloc(&A, n, n, n, true));
    double *b = NULL;
    GS_ASSERT_OK(GS_MALLOC(b, n));
    for (gs_int i = 0; i < n; i++) {
        A.rowptr[i + 1] = i + 1;
        A.colind[i] = i;
        A.val[i] = i < n / 2 ? 1.0 : 1e4;
        b[i] = i < n / 2 ? 1.0 : 0.1;
    }
    sys_setup_on(s, &A, 1, backend);
    sys_set_b(s, b);
    sys_set_x(s, NULL);
    gs_free(&b);
}

gs_ksp_params sys_params(double rtol, int max_it)
{
    gs_ksp_params p = {
        .max_iterations = max_it,
        .rtol = rtol,
        .atol = 0.0,
        .baseline = GS_BASELINE_RHS,
        .restart = 30,
        .ortho = GS_ORTHO_CGS2,
        .stagnation_window = 0,
        .allow_variable_pc = false,
    };
    return p;
}

void hist_monitor(void *ctx, int iteration, double resnorm)
{
    ksp_hist *h = ctx;
    if (h->n < (int)(sizeof h->r / sizeof h->r[0])) {
        h->it[h->n] = iteration;
        h->r[h->n] = resnorm;
        h->n++;
    }
    if (h->raise_at > 0 && iteration == h->raise_at) raise(SIGINT);
}

gs_status sys_solve(ksp_sys *s, const char *type, const gs_ksp_params *prm, gs_pc *pc, ksp_hist *hist,
                    gs_solve_result *res)
{
    gs_ksp *ksp = NULL;
    GS_CALL(gs_ksp_create(type, s->be, prm, &ksp));
    if (hist) {
        hist->n = 0;
        gs_ksp_set_monitor(ksp, hist_monitor, hist);
    }
    gs_status st = gs_ksp_solve(ksp, s->M, pc, s->b, s->x, res);
    /* the detail belongs to the solver: a copy that outlives it (the last 16 solves' are kept) */
    static char kept[16][4096];
    static int next;
    if (st == GS_OK && res->detail) {
        snprintf(kept[next], sizeof kept[next], "%s", res->detail);
        res->detail = kept[next];
        next = (next + 1) % 16;
    }
    gs_ksp_destroy(&ksp);
    return st;
}

gs_pc *sys_jacobi(ksp_sys *s)
{
    gs_pc *pc = NULL;
    gs_config *cfg = NULL;
    GS_ASSERT_OK(gs_config_create(&cfg));
    GS_ASSERT_OK(gs_pc_create("jacobi", s->be, cfg, &pc));
    GS_ASSERT_OK(gs_pc_setup_symbolic(pc, &s->A));
    GS_ASSERT_OK(gs_pc_setup_numeric(pc, &s->A));
    pc->cfg = NULL; /* the config is not needed after the setup */
    gs_config_destroy(&cfg);
    return pc;
}

typedef struct test_pc_data {
    gs_vector *dinv;
    double sign;
    int applications, nan_at, fail_at;
} test_pc_data;

static gs_status test_pc_apply(gs_pc *pc, const gs_vector *r, gs_vector *z)
{
    test_pc_data *d = pc->data;
    d->applications++;
    if (d->fail_at > 0 && d->applications == d->fail_at)
        return GS_ERROR(GS_ERR_NUMERIC, "test preconditioner: failure injected at application %d", d->applications);
    GS_CALL(gs_vec_pointwise_mult(d->dinv, r, z));
    double c = d->sign * (pc->variable ? 1.0 + 0.5 * sin((double)d->applications) : 1.0);
    if (d->nan_at > 0 && d->applications == d->nan_at) c = NAN;
    GS_CALL(gs_vec_scale(z, c));
    return GS_OK;
}

static void test_pc_destroy(gs_pc *pc)
{
    test_pc_data *d = pc->data;
    if (d) gs_vec_destroy(&d->dinv);
    gs_free(&pc->data);
}

static const gs_pc_ops test_pc_ops = {
    .setup_symbolic = NULL,
    .setup_numeric = NULL,
    .apply = test_pc_apply,
    .destroy = test_pc_destroy,
    .view = NULL,
};

gs_pc *sys_test_pc(ksp_sys *s, double sign, bool variable, int nan_at, int fail_at)
{
    gs_pc *pc = NULL;
    test_pc_data *d = NULL;
    double *diag = NULL;
    GS_ASSERT_OK(gs_calloc(&pc, 1, sizeof *pc));
    GS_ASSERT_OK(gs_calloc(&d, 1, sizeof *d));
    GS_ASSERT_OK(GS_MALLOC(diag, s->n));
    gs_csr_diagonal(&s->A, diag, NULL, NULL);
    for (gs_int i = 0; i < s->n; i++) diag[i] = diag[i] != 0.0 ? 1.0 / diag[i] : 1.0;
    GS_ASSERT_OK(gs_vec_create(s->be, s->n, &d->dinv));
    GS_ASSERT_OK(gs_vec_upload(d->dinv, diag));
    gs_free(&diag);
    d->sign = sign;
    d->nan_at = nan_at;
    d->fail_at = fail_at;
    pc->ops = &test_pc_ops;
    pc->data = d;
    pc->type = variable ? "test-variable-jacobi" : "test-jacobi";
    pc->be = s->be;
    pc->n = s->n;
    pc->state = GS_PC_READY;
    pc->variable = variable;
    return pc;
}

int test_pc_applications(const gs_pc *pc) { return ((const test_pc_data *)pc->data)->applications; }

void print_result(const char *what, const gs_solve_result *res)
{
    printf("  %-40s %-22s it=%4d  res=%.3e  (%s)\n", what, gs_reason_name(res->reason), res->iterations,
           res->resnorm, res->detail);
}
