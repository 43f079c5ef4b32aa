// Hop probe (session 18, docs/notes-trisolve.md version 20): a 3D 7-point lower factor on an N^3 grid in level
// order, ALL row data in shared memory, one CTA of 8 or 32 warps (a lane per row, warps round-robin over 32-row
// chunks); the dependency values polled in shared memory (MODE 0) or in global memory (MODE 1, ld.relaxed.gpu);
// timed inside the kernel (%globaltimer). N <= 15 (shared memory).
// Build/run on the H100: nvcc -O3 -arch=sm_90 -std=c++17 -o hop hop.cu && ./hop N
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>
#include <algorithm>
#include <numeric>
#include <cmath>
#define W 3
#define EMPTY (-1LL)
__device__ __forceinline__ long long ldg_relaxed(const long long *p) { long long v; asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void stg_relaxed(long long *p, long long v) { asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ unsigned long long gtime() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }

template <int MODE, int TPB>
__global__ void __launch_bounds__(TPB, 1) hop_kernel(int n, const int *__restrict__ col, const double *__restrict__ val,
    const double *__restrict__ dinv, const double *__restrict__ bp, long long *ready, double *xp, unsigned long long *tm)
{
    extern __shared__ __align__(16) unsigned char sm[];
    int *scol = (int *)sm;                         // W*n
    double *sval = (double *)(sm + ((W * n * 4 + 15) / 16) * 16); // W*n
    double *sb = sval + W * n, *sd = sb + n;
    long long *sx = (long long *)(sd + n);
    for (int q = threadIdx.x; q < W * n; q += TPB) { scol[q] = col[q]; sval[q] = val[q]; }
    for (int q = threadIdx.x; q < n; q += TPB) { sb[q] = bp[q]; sd[q] = dinv[q]; sx[q] = EMPTY; }
    __syncthreads();
    unsigned long long t0 = gtime();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nchunks = (n + 31) / 32;
    for (int c = warp; c < nchunks; c += TPB / 32) {
        const int p = c * 32 + lane;
        const bool act = p < n;
        int cc[W]; double v[W]; long long g[W]; double s = 0, d = 0;
        #pragma unroll
        for (int k = 0; k < W; k++) { cc[k] = act ? scol[k * n + p] : -1; v[k] = act ? sval[k * n + p] : 0.0; g[k] = cc[k] < 0 ? 0 : EMPTY; }
        if (act) { s = sb[p]; d = sd[p]; }
        bool done = !act;
        for (;;) {
            if (!done) {
                #pragma unroll
                for (int k = 0; k < W; k++)
                    if (g[k] == EMPTY) g[k] = MODE == 0 ? *(volatile long long *)(sx + cc[k]) : ldg_relaxed(ready + cc[k]);
                bool all = true;
                #pragma unroll
                for (int k = 0; k < W; k++) all &= g[k] != EMPTY;
                if (all) {
                    #pragma unroll
                    for (int k = 0; k < W; k++) if (cc[k] >= 0) s -= v[k] * __longlong_as_double(g[k]);
                    double x = s * d;
                    long long bits = __double_as_longlong(x);
                    if (MODE == 0) *(volatile long long *)(sx + p) = bits; else stg_relaxed(ready + p, bits);
                    done = true;
                }
            }
            if (__all_sync(0xffffffffu, done)) break;
        }
    }
    __syncthreads();
    unsigned long long t1 = gtime();
    for (int q = threadIdx.x; q < n; q += TPB) xp[q] = MODE == 0 ? __longlong_as_double(sx[q]) : __longlong_as_double(ready[q]);
    if (threadIdx.x == 0) tm[0] = t1 - t0;
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 14;
    int n = N * N * N, nl = 3 * N - 2;
    auto gid = [&](int i, int j, int k) { return (k * N + j) * N + i; };
    std::vector<int> order(n); std::iota(order.begin(), order.end(), 0);
    std::vector<int> lev(n);
    for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) lev[gid(i, j, k)] = i + j + k;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return lev[a] < lev[b]; });
    std::vector<int> pos(n); for (int p = 0; p < n; p++) pos[order[p]] = p;
    std::vector<int> col((size_t)W * n, -1); std::vector<double> val((size_t)W * n, 0), dinv(n), bp(n);
    for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) {
        int g = gid(i, j, k), p = pos[g], e = 0;
        if (k > 0) { col[e * n + p] = pos[gid(i, j, k - 1)]; val[e++ * n + p] = -0.15; }
        if (j > 0) { col[e * n + p] = pos[gid(i, j - 1, k)]; val[e++ * n + p] = -0.16; }
        if (i > 0) { col[e * n + p] = pos[gid(i - 1, j, k)]; val[e++ * n + p] = -0.17; }
        dinv[p] = 1.0 / (1.0 + 0.01 * ((i + 2 * j + 3 * k) % 7)); bp[p] = 1.0 + 0.001 * (g % 101);
    }
    std::vector<double> xr(n);
    for (int p = 0; p < n; p++) { double s = bp[p]; for (int e = 0; e < W; e++) if (col[e * n + p] >= 0) s -= val[e * n + p] * xr[col[e * n + p]]; xr[p] = s * dinv[p]; }
    int *dcol; double *dval, *ddinv, *dbp, *dxp; long long *dready; unsigned long long *dtm;
    cudaMalloc(&dcol, col.size() * 4); cudaMalloc(&dval, val.size() * 8); cudaMalloc(&ddinv, n * 8); cudaMalloc(&dbp, n * 8);
    cudaMalloc(&dxp, n * 8); cudaMalloc(&dready, n * 8); cudaMalloc(&dtm, 8);
    cudaMemcpy(dcol, col.data(), col.size() * 4, cudaMemcpyHostToDevice); cudaMemcpy(dval, val.data(), val.size() * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(ddinv, dinv.data(), n * 8, cudaMemcpyHostToDevice); cudaMemcpy(dbp, bp.data(), n * 8, cudaMemcpyHostToDevice);
    size_t smem = ((W * n * 4 + 15) / 16) * 16 + (size_t)W * n * 8 + 3 * (size_t)n * 8;
    auto run = [&](auto kern, int tpb, const char *name) {
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess) { printf("smem %zu too big\n", smem); return; }
        std::vector<double> ts;
        for (int r = 0; r < 21; r++) {
            cudaMemset(dready, 0xff, n * 8);
            kern<<<1, tpb, smem>>>(n, dcol, dval, ddinv, dbp, dready, dxp, dtm);
            unsigned long long t; cudaMemcpy(&t, dtm, 8, cudaMemcpyDeviceToHost); if (r) ts.push_back(t * 1e-3);
        }
        std::sort(ts.begin(), ts.end());
        std::vector<double> hx(n); cudaMemcpy(hx.data(), dxp, n * 8, cudaMemcpyDeviceToHost);
        double err = 0; for (int p = 0; p < n; p++) err = std::max(err, fabs(hx[p] - xr[p]) / fabs(xr[p]));
        printf("N=%d n=%d levels=%d %-26s %8.2f us  %.3f us/level  relerr %.1e %s\n", N, n, nl, name, ts[ts.size() / 2], ts[ts.size() / 2] / nl, err, cudaGetErrorString(cudaGetLastError()));
    };
    run(hop_kernel<0, 1024>, 1024, "smem values, 32 warps");
    run(hop_kernel<1, 1024>, 1024, "global values, 32 warps");
    run(hop_kernel<0, 256>, 256, "smem values, 8 warps");
    run(hop_kernel<1, 256>, 256, "global values, 8 warps");
    return 0;
}
