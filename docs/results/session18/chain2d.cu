// Level-set chain probe (session 18, docs/notes-trisolve.md version 20): the 2D 5-point ILU(0)-like L factor in
// the level-set layout (positions, column-major ELL of width 2); one block of 1024 threads walks the 2N-1 levels
// with __syncthreads between them. Variants: how a step gets its row data (plain loads, column indices or all of
// the row staged two levels ahead by cp.async), the L2 prefetch distance, x from a shared-memory ring.
// Build/run on the H100: nvcc -O3 -arch=sm_90 -std=c++17 -o c2 chain2d.cu && ./c2 1024 [flush]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>
#include <algorithm>
#include <cmath>
#define T 1024
#define RING 4096
struct lev { int p0, p1, a, b; };
__device__ __forceinline__ void cpa4(void *dst, const void *src) {
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(src) : "memory");
}
__device__ __forceinline__ void cpa8(void *dst, const void *src) {
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(s), "l"(src) : "memory");
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void waitg() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }
__device__ __forceinline__ void pf(const void *p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }

// STAGE: 0 none (all loads at solve time), 1 cols staged 2 ahead (today's kernel), 2 cols+vals+b+dinv staged 2 ahead
// TOUCH: levels ahead for L2 prefetch (0 none)   RINGX: x from shared ring
template <int STAGE, int TOUCH, bool RINGX>
__global__ void __launch_bounds__(T, 1) walk(int n, int nl, const lev *__restrict__ sched, const int *__restrict__ col,
                                              const double *__restrict__ val, const double *__restrict__ dinv, double *xp)
{
    extern __shared__ __align__(16) unsigned char sm[];
    double *ring = (double *)sm;                       // RING doubles
    int *scol = (int *)(sm + RING * 8);                // [2][2][T]
    double *sval = (double *)(sm + RING * 8 + 2 * 2 * T * 4); // [2][2][T]
    double *sb = sval + 2 * 2 * T;                     // [2][T]
    double *sd = sb + 2 * T;                           // [2][T]
    const int t = threadIdx.x;
    auto row = [&](int l) { if (l >= nl) return -1; lev s = sched[l]; int p = s.p0 + t; return p < s.p1 ? p : -1; };
    auto stage = [&](int l, int buf) {
        int p = row(l);
        if (STAGE >= 1 && p >= 0) {
            for (int k = 0; k < 2; k++) cpa4(scol + (buf * 2 + k) * T + t, col + (size_t)k * n + p);
            if (STAGE >= 2) {
                for (int k = 0; k < 2; k++) cpa8(sval + (buf * 2 + k) * T + t, val + (size_t)k * n + p);
                cpa8(sb + buf * T + t, xp + p);
                cpa8(sd + buf * T + t, dinv + p);
            }
        }
        if (STAGE >= 1) commit();
    };
    if (STAGE >= 1) { stage(0, 0); stage(1, 1); }
    for (int l = 0; l < TOUCH; l++) { int p = row(l); if (p >= 0) { pf(xp + p); pf(dinv + p); pf(col + p); pf(col + n + p); pf(val + p); pf(val + n + p); } }
    for (int l = 0; l < nl; l++) {
        const int buf = l & 1;
        const int p = row(l);
        if (STAGE >= 1) waitg<1>();
        if (p >= 0) {
            int c[2]; double v[2], bb, d;
            if (STAGE >= 1) { c[0] = scol[(buf * 2) * T + t]; c[1] = scol[(buf * 2 + 1) * T + t]; }
            else { c[0] = __ldg(col + p); c[1] = __ldg(col + n + p); }
            if (STAGE >= 2) { v[0] = sval[(buf * 2) * T + t]; v[1] = sval[(buf * 2 + 1) * T + t]; bb = sb[buf * T + t]; d = sd[buf * T + t]; }
            else { v[0] = __ldg(val + p); v[1] = __ldg(val + n + p); bb = __ldcg(xp + p); d = __ldg(dinv + p); }
            const int lo = p - t - RING + T; // positions >= lo are in the ring (chain starts at 0)
            double x0 = 0, x1 = 0;
            if (c[0] >= 0) x0 = RINGX && c[0] >= lo ? ring[c[0] & (RING - 1)] : __ldcg(xp + c[0]);
            if (c[1] >= 0) x1 = RINGX && c[1] >= lo ? ring[c[1] & (RING - 1)] : __ldcg(xp + c[1]);
            double s = bb;
            if (c[0] >= 0) s -= v[0] * x0;
            if (c[1] >= 0) s -= v[1] * x1;
            double xv = s * d;
            if (RINGX) ring[p & (RING - 1)] = xv;
            xp[p] = xv;
        }
        if (STAGE >= 1) stage(l + 2, buf);
        if (TOUCH) { int q = row(l + TOUCH); if (q >= 0) { pf(xp + q); pf(dinv + q); pf(col + q); pf(col + n + q); pf(val + q); pf(val + n + q); } }
        __syncthreads();
    }
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 1024;
    int n = N * N, nl = 2 * N - 1;
    std::vector<lev> sched(nl);
    std::vector<int> pos_of(n); // natural -> position
    int p = 0;
    for (int l = 0; l < nl; l++) {
        sched[l].p0 = p;
        int j0 = std::max(0, l - N + 1), j1 = std::min(l, N - 1);
        for (int j = j0; j <= j1; j++) { int i = l - j; pos_of[j * N + i] = p++; }
        sched[l].p1 = p; sched[l].a = sched[l].b = 0;
    }
    std::vector<int> col(2 * (size_t)n, -1);
    std::vector<double> val(2 * (size_t)n, 0.0), dinv(n), b(n);
    for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) {
        int q = pos_of[j * N + i];
        // entries in column order: (i, j-1) then (i-1, j)  (positions ascending? both in level l-1; (i,j-1) has smaller j -> smaller position)
        if (j > 0) { col[q] = pos_of[(j - 1) * N + i]; val[q] = -0.25; }
        if (i > 0) { int k = j > 0 ? 1 : 0; col[(size_t)k * n + q] = pos_of[j * N + i - 1]; val[(size_t)k * n + q] = -0.25; }
        dinv[q] = 1.0 / (1.0 + 0.001 * ((i * 7 + j) % 13)); b[q] = 1.0 + 0.01 * ((i + 3 * j) % 17);
    }
    // host reference
    std::vector<double> xr(b);
    for (int q = 0; q < n; q++) { double s = b[q]; for (int k = 0; k < 2; k++) if (col[(size_t)k * n + q] >= 0) s -= val[(size_t)k * n + q] * xr[col[(size_t)k * n + q]]; xr[q] = s * dinv[q]; }
    lev *dsched; int *dcol; double *dval, *ddinv, *dxp, *db;
    cudaMalloc(&dsched, nl * sizeof(lev)); cudaMalloc(&dcol, col.size() * 4); cudaMalloc(&dval, val.size() * 8);
    cudaMalloc(&ddinv, n * 8); cudaMalloc(&dxp, n * 8); cudaMalloc(&db, n * 8);
    cudaMemcpy(dsched, sched.data(), nl * sizeof(lev), cudaMemcpyHostToDevice);
    cudaMemcpy(dcol, col.data(), col.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dval, val.data(), val.size() * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(ddinv, dinv.data(), n * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), n * 8, cudaMemcpyHostToDevice);
    // a buffer to flush L2 between runs (optional)
    size_t fl = 128u << 20; char *flush; cudaMalloc(&flush, fl);
    const size_t smem = RING * 8 + 2 * 2 * T * 4 + 2 * 2 * T * 8 + 4 * T * 8;
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    int flushmode = argc > 2 ? atoi(argv[2]) : 0;
    auto run = [&](auto kern, const char *name) {
        cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        std::vector<float> ts;
        for (int r = 0; r < 15; r++) {
            if (flushmode) cudaMemsetAsync(flush, r, fl);
            cudaMemcpyAsync(dxp, db, n * 8, cudaMemcpyDeviceToDevice);
            cudaEventRecord(e0);
            kern<<<1, T, smem>>>(n, nl, dsched, dcol, dval, ddinv, dxp);
            cudaEventRecord(e1); cudaEventSynchronize(e1);
            float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 3) ts.push_back(ms);
        }
        std::sort(ts.begin(), ts.end());
        std::vector<double> hx(n); cudaMemcpy(hx.data(), dxp, n * 8, cudaMemcpyDeviceToHost);
        double err = 0; for (int q = 0; q < n; q++) err = std::max(err, fabs(hx[q] - xr[q]));
        printf("N=%d flush=%d %-34s %8.3f us/level (%.1f us)  maxerr %.2e %s\n", N, flushmode, name, ts[ts.size() / 2] * 1000.0 / nl, ts[ts.size() / 2] * 1000, err, cudaGetErrorString(cudaGetLastError()));
    };
    run(walk<0, 0, false>, "plain loads");
    run(walk<0, 3, false>, "plain + touch 3");
    run(walk<1, 3, false>, "cols staged + touch 3 (today)");
    run(walk<1, 0, false>, "cols staged, no touch");
    run(walk<2, 0, false>, "all staged");
    run(walk<2, 3, false>, "all staged + touch 3");
    run(walk<2, 8, false>, "all staged + touch 8");
    run(walk<2, 8, true>, "all staged + touch 8 + ring");
    run(walk<2, 16, true>, "all staged + touch 16 + ring");
    run(walk<0, 8, true>, "plain + touch 8 + ring");
    return 0;
}
