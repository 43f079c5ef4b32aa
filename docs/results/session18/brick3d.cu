// Partitioned sync-free probe (session 18, docs/notes-trisolve.md version 20): the lower factor of a 3D stencil on
// an N^3 grid (-DW=3: 7-point, the default; -DW=13: 27-point) cut into bricks BX x BY x BZ (BX = N: contiguous
// row ranges of the natural order); persistent CTAs take bricks by ticket in corner order (topological for both
// stencils); inside a brick, rows in level order, a lane per row, warps round-robin over 32-row chunks;
// dependencies inside the brick polled in shared memory (volatile), across bricks in global ready values;
// MODE 4: each warp stages its next chunk's row data into shared memory by cp.async (double buffer).
// Build/run on the H100: nvcc -O3 -arch=sm_90 -std=c++17 [-DW=13] -o b3 brick3d.cu && ./b3 N BX BY BZ
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>
#include <algorithm>
#include <numeric>
#include <cmath>
#define T 1024
#ifndef W
#define W 3
#endif
#define EMPTY (-1LL)
__device__ __forceinline__ long long ldg_relaxed(const long long *p) { long long v; asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void stg_relaxed(long long *p, long long v) { asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }

// per position p (brick-major, local level order): col[k*n+p] >= 0 remote position, < 0 local -(li+1), INT_MIN none
template <int MODE, int TPB>
__global__ void __launch_bounds__(TPB) brick_kernel(int n, int nb, const int *__restrict__ boff, const int *__restrict__ col,
    const double *__restrict__ val, const double *__restrict__ dinv, const double *__restrict__ bp,
    long long *ready, double *xp, const unsigned char *__restrict__ remote_use, const int *__restrict__ border, unsigned *ticket, int sx_cap)
{
    extern __shared__ long long sx[];
    __shared__ unsigned tk;
    for (;;) {
    if (threadIdx.x == 0) tk = atomicAdd(ticket, 1u);
    __syncthreads();
    const unsigned t = tk;
    if (t >= (unsigned)nb) break;
    const int b = border[t], p0 = boff[b], rows = boff[b + 1] - p0;
    for (int q = threadIdx.x; q < rows; q += TPB) sx[q] = EMPTY;
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int nchunks = (rows + 31) / 32;
    int ncc[W]; double nv[W], ns = 0, nd = 0; bool nrem = false;
    // MODE & 4: per-warp double buffer in shared memory filled by cp.async one chunk ahead
    constexpr int SB = W * 32 * 4 + W * 32 * 8 + 2 * 32 * 8; // bytes per warp buffer (W*32*4 is a multiple of 16 for W=3? pad)
    constexpr int SBP = (SB + 15) / 16 * 16;
    unsigned char *stg = (unsigned char *)(sx + sx_cap) + (size_t)warp * 2 * SBP;
    auto stage = [&](int c, int buf) {
        const int li = c * 32 + lane; const bool act = c < nchunks && li < rows; const int p = p0 + li;
        unsigned char *B = stg + buf * SBP;
        int *scol = (int *)B; double *sval = (double *)(B + ((W * 32 * 4 + 7) / 8) * 8); double *sbd = sval + W * 32;
        if (act) {
            #pragma unroll
            for (int k = 0; k < W; k++) {
                unsigned d1 = (unsigned)__cvta_generic_to_shared(scol + k * 32 + lane), d2 = (unsigned)__cvta_generic_to_shared(sval + k * 32 + lane);
                asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(d1), "l"(col + (size_t)k * n + p) : "memory");
                asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(d2), "l"(val + (size_t)k * n + p) : "memory");
            }
            unsigned d3 = (unsigned)__cvta_generic_to_shared(sbd + lane), d4 = (unsigned)__cvta_generic_to_shared(sbd + 32 + lane);
            asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(d3), "l"(bp + p) : "memory");
            asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(d4), "l"(dinv + p) : "memory");
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    };
    auto unstage = [&](int c, int buf, int *cc, double *v, double &s, double &d, bool &rem) {
        const int li = c * 32 + lane; const bool act = c < nchunks && li < rows;
        unsigned char *B = stg + buf * SBP;
        int *scol = (int *)B; double *sval = (double *)(B + ((W * 32 * 4 + 7) / 8) * 8); double *sbd = sval + W * 32;
        #pragma unroll
        for (int k = 0; k < W; k++) { cc[k] = act ? scol[k * 32 + lane] : INT_MIN; v[k] = act ? sval[k * 32 + lane] : 0.0; }
        s = act ? sbd[lane] : 0.0; d = act ? sbd[32 + lane] : 0.0; rem = act;
    };
    int it = 0;
    if (MODE & 4) stage(warp, 0);
    auto fetch = [&](int c, int *cc, double *v, double &s, double &d, bool &rem) {
        const int li = c * 32 + lane; const bool act = c < nchunks && li < rows; const int p = p0 + li;
        #pragma unroll
        for (int k = 0; k < W; k++) { cc[k] = act ? __ldg(col + (size_t)k * n + p) : INT_MIN; v[k] = act ? __ldg(val + (size_t)k * n + p) : 0.0; }
        s = act ? __ldg(bp + p) : 0.0; d = act ? __ldg(dinv + p) : 0.0; rem = act ? ((MODE & 1) == 0 ? true : (bool)__ldg(remote_use + p)) : false;
    };
    if (MODE & 2) fetch(warp, ncc, nv, ns, nd, nrem);
    for (int c = warp; c < nchunks; c += TPB / 32) {
        const int li = c * 32 + lane;
        const bool act = li < rows;
        const int p = p0 + li;
        int cc[W]; double v[W]; long long g[W];
        double s = 0, d = 0;
        bool rem = false;
        if (MODE & 4) {
            stage(c + TPB / 32, (it + 1) & 1);
            asm volatile("cp.async.wait_group 1;" ::: "memory");
            __syncwarp();
            unstage(c, it & 1, cc, v, s, d, rem);
            it++;
        } else if (MODE & 2) {
            #pragma unroll
            for (int k = 0; k < W; k++) { cc[k] = ncc[k]; v[k] = nv[k]; }
            s = ns; d = nd; rem = nrem;
            fetch(c + TPB / 32, ncc, nv, ns, nd, nrem);
        } else fetch(c, cc, v, s, d, rem);
        #pragma unroll
        for (int k = 0; k < W; k++) g[k] = cc[k] == INT_MIN ? 0 : EMPTY;
        bool done = !act;
        for (;;) {
            if (!done) {
                #pragma unroll
                for (int k = 0; k < W; k++)
                    if (g[k] == EMPTY) g[k] = cc[k] >= 0 ? ldg_relaxed(ready + cc[k]) : *(volatile long long *)(sx + (-cc[k] - 1));
                bool all = true;
                #pragma unroll
                for (int k = 0; k < W; k++) all &= g[k] != EMPTY;
                if (all) {
                    #pragma unroll
                    for (int k = 0; k < W; k++) if (cc[k] != INT_MIN) s -= v[k] * __longlong_as_double(g[k]);
                    double x = s * d;
                    long long bits = __double_as_longlong(x);
                    *(volatile long long *)(sx + li) = bits;
                    if (rem) stg_relaxed(ready + p, bits);
                    xp[p] = x;
                    done = true;
                }
            }
            if (__all_sync(0xffffffffu, done)) break;
        }
    }
    __syncthreads();
    }
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 100;
    int BX = argc > 2 ? atoi(argv[2]) : 20, BY = argc > 3 ? atoi(argv[3]) : 20, BZ = argc > 4 ? atoi(argv[4]) : 25;
    int n = N * N * N;
    int NBX = (N + BX - 1) / BX, NBY = (N + BY - 1) / BY, NBZ = (N + BZ - 1) / BZ, nb = NBX * NBY * NBZ;
    auto gid = [&](int i, int j, int k) { return (k * N + j) * N + i; };
    auto bid = [&](int i, int j, int k) { return ((k / BZ) * NBY + j / BY) * NBX + i / BX; };
    // order: brick, then level i+j+k, then natural index
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::vector<int> key_b(n), key_l(n);
    auto deps_of = [&](int i, int j, int k, int *d) { // lower-triangular neighbours in increasing natural index
        int nd = 0;
        if (W == 3) {
            if (k > 0) d[nd++] = gid(i, j, k - 1);
            if (j > 0) d[nd++] = gid(i, j - 1, k);
            if (i > 0) d[nd++] = gid(i - 1, j, k);
        } else {
            for (int dk = -1; dk <= 0; dk++) for (int dj = -1; dj <= 1; dj++) for (int di = -1; di <= 1; di++) {
                if (dk == 0 && (dj > 0 || (dj == 0 && di >= 0))) continue;
                int a = i + di, b = j + dj, c = k + dk;
                if (a < 0 || b < 0 || c < 0 || a >= N || b >= N) continue;
                d[nd++] = gid(a, b, c);
            }
        }
        return nd;
    };
    int nlev = 0;
    for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) {
        int g = gid(i, j, k), d[16], nd = deps_of(i, j, k, d), l = 0;
        for (int e = 0; e < nd; e++) l = std::max(l, key_l[d[e]] + 1);
        key_b[g] = bid(i, j, k); key_l[g] = l; nlev = std::max(nlev, l + 1);
    }
    printf("stencil %d-entry lower, %d levels\n", W, nlev);
    std::sort(order.begin(), order.end(), [&](int a, int c) { if (key_b[a] != key_b[c]) return key_b[a] < key_b[c]; if (key_l[a] != key_l[c]) return key_l[a] < key_l[c]; return a < c; });
    std::vector<int> pos(n), boff(nb + 1, 0);
    for (int p = 0; p < n; p++) { pos[order[p]] = p; boff[key_b[order[p]] + 1]++; }
    for (int b = 0; b < nb; b++) boff[b + 1] += boff[b];
    std::vector<int> border(nb); std::iota(border.begin(), border.end(), 0);
    auto corner = [&](int b) { int ib = b % NBX, jb = (b / NBX) % NBY, kb = b / (NBX * NBY); return (long long)kb * BZ * N * N + (long long)jb * BY * N + ib * BX; };
    std::stable_sort(border.begin(), border.end(), [&](int a, int c) { return corner(a) < corner(c); });
    int maxrows = 0; for (int b = 0; b < nb; b++) maxrows = std::max(maxrows, boff[b + 1] - boff[b]);
    std::vector<int> col((size_t)W * n, INT_MIN);
    std::vector<double> val((size_t)W * n, 0.0), dinv(n), bp(n);
    std::vector<unsigned char> ruse(n, 0);
    long long nremote = 0;
    for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) for (int i = 0; i < N; i++) {
        int g = gid(i, j, k), p = pos[g], b = key_b[g];
        int deps[16], nd = deps_of(i, j, k, deps);
        for (int e = 0; e < nd; e++) {
            int q = pos[deps[e]];
            bool local = key_b[deps[e]] == b;
            col[(size_t)e * n + p] = local ? -(q - boff[b]) - 1 : q;
            if (!local) { ruse[q] = 1; nremote++; }
            val[(size_t)e * n + p] = (W == 3 ? -0.15 : -0.035) - 0.001 * e;
        }
        dinv[p] = 1.0 / (1.0 + 0.01 * ((i + 2 * j + 3 * k) % 7));
        bp[p] = 1.0 + 0.001 * (g % 101);
    }
    // host reference in natural order
    std::vector<double> xr(n);
    for (int g = 0; g < n; g++) { int p = pos[g]; double s = bp[p]; for (int e = 0; e < W; e++) { int c = col[(size_t)e * n + p]; if (c == INT_MIN) continue; int q = c >= 0 ? c : boff[key_b[g]] + (-c - 1); s -= val[(size_t)e * n + p] * xr[order[q]]; } xr[g] = s * dinv[p]; }
    int *dboff, *dcol, *dborder; unsigned *dticket; double *dval, *ddinv, *dbp, *dxp; long long *dready; unsigned char *druse;
    cudaMalloc(&dboff, (nb + 1) * 4); cudaMalloc(&dcol, col.size() * 4); cudaMalloc(&dval, val.size() * 8);
    cudaMalloc(&ddinv, n * 8); cudaMalloc(&dbp, n * 8); cudaMalloc(&dxp, n * 8); cudaMalloc(&dready, (size_t)n * 8); cudaMalloc(&druse, n); cudaMalloc(&dborder, nb * 4); cudaMalloc(&dticket, 4); cudaMemcpy(dborder, border.data(), nb * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dboff, boff.data(), (nb + 1) * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dcol, col.data(), col.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dval, val.data(), val.size() * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(ddinv, dinv.data(), n * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(dbp, bp.data(), n * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(druse, ruse.data(), n, cudaMemcpyHostToDevice);
    size_t smem = (size_t)maxrows * 8;
    const size_t SBP = ((W * 32 * 4 + W * 32 * 8 + 2 * 32 * 8) + 15) / 16 * 16;
    printf("N=%d bricks %dx%dx%d (%d CTAs, %d rows max, smem %zu KB), remote entries %lld of %lld\n", N, BX, BY, BZ, nb, maxrows, smem / 1024, nremote, (long long)3 * n - 3LL * N * N);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    auto run = [&](auto kern, int tpb, const char *name) {
        size_t sm2 = smem + (size_t)(tpb / 32) * 2 * SBP;
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm2) != cudaSuccess) { printf("smem too big\n"); return; }
        std::vector<float> ts;
        for (int r = 0; r < 30; r++) {
            cudaMemsetAsync(dready, 0xff, (size_t)n * 8); cudaMemsetAsync(dticket, 0, 4);
            int per = 0; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, kern, tpb, sm2);
            int grid = std::min(nb, per * 132); if (r == 0) printf("  (%d CTAs of %d threads resident)\n", grid, tpb);
            cudaEventRecord(e0);
            kern<<<grid, tpb, sm2>>>(n, nb, dboff, dcol, dval, ddinv, dbp, dready, dxp, druse, dborder, dticket, maxrows);
            cudaEventRecord(e1); cudaEventSynchronize(e1);
            float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 5) ts.push_back(ms);
        }
        std::sort(ts.begin(), ts.end());
        std::vector<double> hx(n); cudaMemcpy(hx.data(), dxp, n * 8, cudaMemcpyDeviceToHost);
        double err = 0; for (int g = 0; g < n; g++) err = std::max(err, fabs(hx[pos[g]] - xr[g]) / fabs(xr[g]));
        printf("  %-30s median %8.1f us  min %8.1f  relerr %.2e  %s\n", name, ts[ts.size() / 2] * 1000, ts[0] * 1000, err, cudaGetErrorString(cudaGetLastError()));
    };
    run(brick_kernel<1, 256>, 256, "8 warps");
    run(brick_kernel<4, 256>, 256, "8 warps, cp.async staged");
    run(brick_kernel<4, 128>, 128, "4 warps, cp.async staged");
    run(brick_kernel<4, 384>, 384, "12 warps, cp.async staged");
    return 0;
}
