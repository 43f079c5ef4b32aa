/* The linear system a run solves: the matrix (file, standard input or generated), b, x0 and the known
 * solution x*; and standard input/output given as "-". */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app.h"
#include "app/run.h"
#include "app/system.h"
#include "core/generate.h"
#include "core/mem.h"
#include "io/mmio.h"

/* gen:NAME:SIZES[:PECLET], parsed strictly: NAME one of the generators; SIZES one positive decimal integer
 * per dimension (poisson2d: NX or NXxNY; the 3D problems: NX for a cube or NXxNYxNZ), nothing else; a
 * Peclet number only for convdiff3d. Anything else is a usage error (exit 2) that says what was expected. */
gs_status gs_app_gen_parse(const char *spec, gs_app_gen *gen)
{
    static const struct {
        const char *name;
        int dims; /* 2: NX or NXxNY; 3: NX or NXxNYxNZ */
        bool peclet;
    } gens[] = {{"poisson2d", 2, false}, {"poisson3d", 3, false}, {"laplace27", 3, false}, {"convdiff3d", 3, true}};
    enum { NGENS = sizeof gens / sizeof gens[0] };
    memset(gen, 0, sizeof *gen);
    if (strncmp(spec, "gen:", 4) != 0) return GS_ERROR(GS_ERR_ARG, "matrix '%s': not a gen:NAME:SIZE generator", spec);
    const char *p = spec + 4, *colon = strchr(p, ':');
    int g = -1;
    for (int k = 0; k < NGENS && colon; k++)
        if ((size_t)(colon - p) == strlen(gens[k].name) && strncmp(p, gens[k].name, (size_t)(colon - p)) == 0) g = k;
    if (!colon)
        return GS_ERROR(GS_ERR_ARG,
                        "matrix '%s': expected gen:NAME:SIZE with NAME one of poisson2d, poisson3d, laplace27, "
                        "convdiff3d and SIZE the grid points per side (e.g. gen:poisson3d:100 or gen:poisson2d:200x100)",
                        spec);
    if (g < 0)
        return GS_ERROR(GS_ERR_ARG,
                        "matrix '%s': unknown generator '%.*s'; expected poisson2d, poisson3d, laplace27 or convdiff3d",
                        spec, (int)(colon - p < 64 ? colon - p : 64), p);
    const char *form = gens[g].dims == 2 ? "NX or NXxNY" : "NX (a cube) or NXxNYxNZ";
    long long size[3] = {0, 0, 0};
    int nd = 0;
    const char *q = colon + 1;
    for (;;) { /* one size per pass: digits only (no sign, no blanks), then 'x', ':' or the end */
        const char *digits = q;
        unsigned long long v = 0;
        bool big = false;
        while (*q >= '0' && *q <= '9') {
            v = 10 * v + (unsigned long long)(*q - '0');
            if (v > (unsigned long long)GS_INT_MAX) big = true, v = (unsigned long long)GS_INT_MAX + 1;
            q++;
        }
        if (q == digits) {
            char found[16] = "the end";
            if (*q) snprintf(found, sizeof found, *q > ' ' && *q < 127 ? "'%c'" : "byte 0x%02x", (unsigned char)*q);
            return GS_ERROR(GS_ERR_ARG,
                            "matrix '%s': expected a size (a positive integer) at character %d, found %s; %s takes %s, "
                            "e.g. %s",
                            spec, (int)(q - spec) + 1, found, gens[g].name, form,
                            gens[g].dims == 2 ? "gen:poisson2d:200x100" : "gen:poisson3d:60x40x20");
        }
        if (nd == 3)
            return GS_ERROR(GS_ERR_ARG, "matrix '%s': more than three sizes; %s takes %s", spec, gens[g].name, form);
        if (big)
            return GS_ERROR(GS_ERR_ARG,
                            "matrix '%s': size %.*s is beyond the 32-bit index limit GS_INT_MAX = %d; expected at most "
                            "%d grid points per side",
                            spec, (int)(q - digits < 40 ? q - digits : 40), digits, (int)GS_INT_MAX, (int)GS_INT_MAX);
        if (v == 0)
            return GS_ERROR(GS_ERR_ARG, "matrix '%s': size number %d is 0; every size must be at least 1", spec,
                            nd + 1);
        size[nd++] = (long long)v;
        if (*q != 'x') break;
        q++;
    }
    if (nd > gens[g].dims || (gens[g].dims == 3 && nd == 2))
        return GS_ERROR(GS_ERR_ARG, "matrix '%s': %s takes %s, found %d sizes", spec, gens[g].name, form, nd);
    double peclet = 1.0;
    if (*q == ':') {
        if (!gens[g].peclet)
            return GS_ERROR(GS_ERR_ARG,
                            "matrix '%s': %s takes no Peclet number (only convdiff3d does: gen:convdiff3d:SIZE:PECLET)",
                            spec, gens[g].name);
        char *end = NULL;
        const char *num = q + 1;
        peclet = (*num == ' ' || *num == '\t' || !*num) ? NAN : strtod(num, &end);
        if (!end || end == num || *end || !isfinite(peclet))
            return GS_ERROR(GS_ERR_ARG,
                            "matrix '%s': the Peclet number after the second ':' is not a finite number; expected e.g. "
                            "gen:convdiff3d:100:20",
                            spec);
    } else if (*q) {
        return GS_ERROR(GS_ERR_ARG, "matrix '%s': unexpected text '%.20s' after the sizes; expected %s%s", spec, q, form,
                        gens[g].peclet ? " then, optionally, :PECLET" : "");
    }
    gen->name = gens[g].name; /* sizes not given are NX's (a 2D grid: one plane) */
    gen->nx = (gs_int)size[0];
    gen->ny = (gs_int)(size[1] ? size[1] : size[0]);
    gen->nz = gens[g].dims == 2 ? 1 : (gs_int)(size[2] ? size[2] : size[0]);
    gen->peclet = peclet;
    return GS_OK;
}

gs_status gs_app_matrix_from_spec(const char *spec, gs_csr *A, bool *is_gen)
{
    gs_app_gen g;
    *is_gen = strncmp(spec, "gen:", 4) == 0;
    if (!*is_gen) return gs_mm_read_matrix(spec, A, NULL);
    GS_CALL(gs_app_gen_parse(spec, &g));
    return gs_gen_by_name(g.name, g.nx, g.ny, g.nz, g.peclet, A);
}

int gs_app_stdio_prepare(gs_app_opts *o)
{
    const char *names[3];
    int n = 0;
    if (o->matrix && strcmp(o->matrix, "-") == 0) names[n++] = "the matrix";
    if (o->rhs_path && strcmp(o->rhs_path, "-") == 0) names[n++] = "-b";
    if (o->x0_path && strcmp(o->x0_path, "-") == 0) names[n++] = "-x";
    if (n > 1) { /* a usage error (with --json, its JSON object too) */
        char msg[256];
        snprintf(msg, sizeof msg,
                 "%s and %s both read standard input ('-'); at most one input can come from standard input, give the "
                 "other as a file",
                 names[0], names[1]);
        return gs_app_usage_error("%s", msg);
    }
    if (!o->solution || strcmp(o->solution, "-") != 0) return 0;
    if (o->json)
        return gs_app_usage_error("%s", "-o - writes the solution to standard output, where --json writes its objects; "
                                        "give -o a file name, or leave out --json");
    /* the solution takes standard output; everything else printed there goes to standard error */
    static char path[32];
    fflush(stdout);
    int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        perror("gpusolve: -o -: cannot set up standard output for the solution");
        return GS_EXIT_DEVICE;
    }
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    o->solution = path;
    return 0;
}

/* A vector from a file, or from standard input ("-"), which a sweep reads once for all its runs. */
gs_status gs_system_read_vector(const char *path, gs_int n, double **x)
{
    static double *stdin_x;
    static gs_int stdin_n;
    gs_int len = 0;
    if (strcmp(path, "-") != 0) return gs_mm_read_vector(path, n, x, &len);
    if (!stdin_x) GS_CALL(gs_mm_read_vector(path, n, &stdin_x, &stdin_n));
    if (stdin_n != n)
        return GS_ERROR(GS_ERR_IO, "%s: found a vector of length %d; expected length %d", "<stdin>", (int)stdin_n,
                        (int)n);
    GS_CALL(GS_MALLOC(*x, n));
    memcpy(*x, stdin_x, (size_t)n * sizeof **x);
    return GS_OK;
}

double gs_system_random(uint64_t seed, int64_t i)
{
    uint64_t z = seed + (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return 2.0 * ((double)(z >> 11) * (1.0 / 9007199254740992.0)) - 1.0;
}

gs_status gs_system_build(const gs_csr *A, const gs_config *cfg, const char *rhs_path, const char *x0_path,
                          gs_system *sys)
{
    gs_status st = GS_OK;
    gs_int n = A->nrows;
    memset(sys, 0, sizeof *sys);
    const char *rhs = rhs_path ? rhs_path : gs_config_string(cfg, "system.rhs");
    const char *x0 = x0_path ? x0_path : gs_config_string(cfg, "system.x0");
    uint64_t seed = (uint64_t)gs_config_int(cfg, "system.seed");
    snprintf(sys->rhs_desc, sizeof sys->rhs_desc, "%s", rhs);
    snprintf(sys->x0_desc, sizeof sys->x0_desc, "%s", x0);

    GS_TRY(GS_MALLOC(sys->b, n));
    if (!rhs_path && strcmp(rhs, "ones") == 0) {
        for (gs_int i = 0; i < n; i++) sys->b[i] = 1.0;
    } else if (!rhs_path && strcmp(rhs, "random") == 0) {
        for (gs_int i = 0; i < n; i++) sys->b[i] = gs_system_random(seed, i);
    } else if (!rhs_path && strcmp(rhs, "Ax") == 0) {
        const char *xs = gs_config_string(cfg, "system.xstar");
        GS_TRY(GS_MALLOC(sys->xstar, n));
        for (gs_int i = 0; i < n; i++) sys->xstar[i] = strcmp(xs, "random") == 0 ? gs_system_random(seed, i) : 1.0;
        gs_csr_spmv(1.0, A, sys->xstar, 0.0, sys->b);
        snprintf(sys->rhs_desc, sizeof sys->rhs_desc, "Ax (x* = %s)", xs);
    } else {
        gs_free(&sys->b);
        GS_TRY(gs_system_read_vector(rhs, n, &sys->b));
    }

    if (!x0_path && strcmp(x0, "zero") == 0) {
        GS_TRY(GS_CALLOC(sys->x0, n));
    } else {
        GS_TRY(gs_system_read_vector(x0, n, &sys->x0));
    }
    return GS_OK;
cleanup:
    gs_system_free(sys);
    return st;
}

void gs_system_free(gs_system *sys)
{
    gs_free(&sys->b);
    gs_free(&sys->x0);
    gs_free(&sys->xstar);
}
