/* LD_PRELOAD shim (measurement tool, session 13): logs every call of a few CUDA runtime functions with its
 * wall-clock start and duration to API_TRACE_FILE (default api_trace.txt), to see where the host time of
 * an analysis goes (allocations, frees, synchronizations, downloads) between the kernels.
 * build: gcc -O2 -shared -fPIC -o api_trace.so api_trace.c -ldl
 * run:   LD_PRELOAD=./api_trace.so API_TRACE_FILE=t.txt build-gpu/bench/bench_trisolve ...
 * Lines: name start_us dur_us arg (bytes for allocations and copies; the kernel handle for launches,
 * named through the kernel_off lines and `nm -C BINARY`: docs/results/session13/api_trace_summary.py). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int cerr;
typedef void *cstream;
typedef struct { unsigned x, y, z; } dim3_;

static FILE *out;
static double t0;
static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}
static void logc(const char *name, double s, double e, unsigned long long arg)
{
    if (!out) {
        const char *f = getenv("API_TRACE_FILE");
        out = fopen(f ? f : "api_trace.txt", "w");
        if (!out) return;
    }
    if (t0 == 0) t0 = s;
    fprintf(out, "%s %.1f %.1f %llu\n", name, s - t0, e - s, arg);
}
#define REAL2(ARGS, name) typedef cerr (*fn_t) ARGS; static fn_t real = 0; if (!real) real = (fn_t)dlsym(RTLD_NEXT, name)

cerr cudaMalloc(void **p, size_t b)
{
    REAL2((void **, size_t), "cudaMalloc");
    double s = now_us(); cerr r = real(p, b); logc("cudaMalloc", s, now_us(), b); return r;
}
cerr cudaFree(void *p)
{
    REAL2((void *), "cudaFree");
    double s = now_us(); cerr r = real(p); logc("cudaFree", s, now_us(), 0); return r;
}
cerr cudaStreamSynchronize(cstream st)
{
    REAL2((cstream), "cudaStreamSynchronize");
    double s = now_us(); cerr r = real(st); logc("cudaStreamSynchronize", s, now_us(), 0); return r;
}
cerr cudaDeviceSynchronize(void)
{
    REAL2((void), "cudaDeviceSynchronize");
    double s = now_us(); cerr r = real(); logc("cudaDeviceSynchronize", s, now_us(), 0); return r;
}
cerr cudaMemcpyAsync(void *d, const void *sr, size_t b, int k, cstream st)
{
    REAL2((void *, const void *, size_t, int, cstream), "cudaMemcpyAsync");
    double s = now_us(); cerr r = real(d, sr, b, k, st); logc(k == 2 ? "cudaMemcpyAsyncD2H" : "cudaMemcpyAsync", s, now_us(), b); return r;
}
cerr cudaMemsetAsync(void *d, int v, size_t b, cstream st)
{
    REAL2((void *, int, size_t, cstream), "cudaMemsetAsync");
    double s = now_us(); cerr r = real(d, v, b, st); logc("cudaMemsetAsync", s, now_us(), b); return r;
}
/* Kernel launches from <<<>>> go through __cudaLaunchKernel with a handle that the launch stub got once
 * from __cudaGetKernel(&handle, host function): that call is logged as "kernel HANDLE OFFSET" (the
 * function's offset in its binary, for nm), the launches as "launch ... HANDLE". */
cerr __cudaGetKernel(void **k, const void *f)
{
    REAL2((void **, const void *), "__cudaGetKernel");
    cerr r = real(k, f);
    Dl_info di;
    unsigned long long off = 0;
    if (dladdr(f, &di) && di.dli_fbase) off = (unsigned long long)((const char *)f - (const char *)di.dli_fbase);
    if (r == 0) {
        logc("kernel", now_us(), now_us(), (unsigned long long)*k);
        if (out) fprintf(out, "kernel_off %llu %llu\n", (unsigned long long)*k, off);
    }
    return r;
}
cerr __cudaLaunchKernel(void *k, dim3_ g, dim3_ bl, void **a, size_t sh, cstream st)
{
    REAL2((void *, dim3_, dim3_, void **, size_t, cstream), "__cudaLaunchKernel");
    double s = now_us(); cerr r = real(k, g, bl, a, sh, st); logc("launch", s, now_us(), (unsigned long long)k); return r;
}
cerr cudaEventSynchronize(void *ev)
{
    REAL2((void *), "cudaEventSynchronize");
    double s = now_us(); cerr r = real(ev); logc("cudaEventSynchronize", s, now_us(), 0); return r;
}
cerr cudaMallocHost(void **p, size_t b)
{
    REAL2((void **, size_t), "cudaMallocHost");
    double s = now_us(); cerr r = real(p, b); logc("cudaMallocHost", s, now_us(), b); return r;
}
cerr cudaMemcpy(void *d, const void *sr, size_t b, int k)
{
    REAL2((void *, const void *, size_t, int), "cudaMemcpy");
    double s = now_us(); cerr r = real(d, sr, b, k); logc("cudaMemcpy", s, now_us(), b); return r;
}
cerr cudaMemGetInfo(size_t *f, size_t *t)
{
    REAL2((size_t *, size_t *), "cudaMemGetInfo");
    double s = now_us(); cerr r = real(f, t); logc("cudaMemGetInfo", s, now_us(), 0); return r;
}
cerr cudaFreeHost(void *p)
{
    REAL2((void *), "cudaFreeHost");
    double s = now_us(); cerr r = real(p); logc("cudaFreeHost", s, now_us(), 0); return r;
}
cerr cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *f, int bs, size_t sh)
{
    REAL2((int *, const void *, int, size_t), "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    double s = now_us(); cerr r = real(n, f, bs, sh); logc("cudaOccupancy", s, now_us(), 0); return r;
}
