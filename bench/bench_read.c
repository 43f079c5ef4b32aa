/* bench_read: the matrix reader's throughput. Reads FILE (Matrix Market, .gz or PETSc binary) with
 * gs_mm_read_matrix_with after one warm-up read, REPS timed reads per thread count, and prints one line
 * per thread count: "threads T  median S s  MB/s R  rows N  nonzeros Z  bytes B" (MB = 10^6 bytes of the
 * file as stored). No assertions: bench/reader.sh compares the numbers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench_util.h"
#include "core/csr.h"
#include "io/mmio.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int usage(void)
{
    fputs("usage: bench_read FILE [--threads T[,T...]] [--reps R]\n"
          "  T: parsing threads (0 = the OpenMP default), default 1,0; R: timed reads per count, default 5\n",
          stderr);
    return 2;
}

int main(int argc, char **argv)
{
    const char *file = NULL, *tlist = "1,0";
    long reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            tlist = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            if (bench_parse_int("bench_read", argv[++i], "--reps", 1, 1000, &reps) != 0) return 2;
        } else if (!file && argv[i][0] != '-')
            file = argv[i];
        else
            return usage();
    }
    if (!file) return usage();
    struct stat sb;
    if (stat(file, &sb) != 0) {
        perror(file);
        return 3;
    }
    double *t = calloc((size_t)reps, sizeof *t);
    if (!t) return 5;
    char list[256];
    snprintf(list, sizeof list, "%s", tlist);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        long threads = 0;
        if (bench_parse_int("bench_read", tok, "--threads", 0, 4096, &threads) != 0) return 2;
        gs_mm_read_options opt = {(int)threads, 0, 0};
        gs_csr A = {0};
        for (long r = -1; r < reps; r++) { /* r = -1: the warm-up */
            double t0 = now();
            if (gs_mm_read_matrix_with(file, &opt, &A, NULL) != GS_OK) {
                fputs("bench_read: error: ", stderr);
                gs_error_print(stderr);
                return 3;
            }
            if (r >= 0) t[r] = now() - t0;
            if (r + 1 < reps) gs_csr_free(&A);
        }
        double med = bench_median(t, (int)reps);
        printf("threads %ld  median %.4f s  MB/s %.1f  rows %d  nonzeros %d  bytes %lld\n", threads, med,
               (double)sb.st_size / med / 1e6, A.nrows, A.nnz, (long long)sb.st_size);
        gs_csr_free(&A);
    }
    free(t);
    return 0;
}
