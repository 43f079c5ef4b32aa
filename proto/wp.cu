// Prototype: warp-part schedule. Contiguous row ranges (parts) of a lower triangular matrix, each
// solved by ONE warp in local level steps (__syncwarp between steps, recent in-part values through a
// shared-memory ring), cross-part values polled in global memory (value as flag).
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include <algorithm>
#include <cmath>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1);} } while (0)
#define EMPTY (-1LL)

static __device__ __forceinline__ long long ldr(const long long *p) { long long v; asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
static __device__ __forceinline__ void str(long long *p, long long v) { asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }

struct Csr { int n; std::vector<int> rp, ci; std::vector<double> v; };

static Csr gen(const char *kind, int nx, int ny, int nz)
{
    Csr A; A.n = nx * ny * nz; A.rp.push_back(0);
    for (int k = 0; k < nz; k++) for (int j = 0; j < ny; j++) for (int i = 0; i < nx; i++) {
        int r = (k * ny + j) * nx + i;
        std::vector<int> cols;
        if (!strcmp(kind, "27")) {
            for (int dk = -1; dk <= 0; dk++) for (int dj = -1; dj <= 1; dj++) for (int di = -1; di <= 1; di++) {
                int c = ((k + dk) * ny + (j + dj)) * nx + (i + di);
                if (k + dk < 0 || j + dj < 0 || j + dj >= ny || i + di < 0 || i + di >= nx) continue;
                if (c < r) cols.push_back(c);
            }
        } else {
            if (k > 0) cols.push_back(r - nx * ny);
            if (j > 0) cols.push_back(r - nx);
            if (i > 0) cols.push_back(r - 1);
        }
        std::sort(cols.begin(), cols.end());
        for (int c : cols) { A.ci.push_back(c); A.v.push_back(-0.9 / (cols.size() + 0.5) * (1.0 + 0.01 * (c % 7))); }
        A.ci.push_back(r); A.v.push_back(1.0 + 0.1 * (r % 3));
        A.rp.push_back((int)A.ci.size());
    }
    return A;
}

struct Plan { int nparts, nsteps, W, R; std::vector<int> pstep, perm, col; std::vector<double> val, dinv; };

static Plan build(const Csr &A, int P, int R)
{
    Plan pl; int n = A.n; pl.R = R; pl.nparts = (n + P - 1) / P;
    std::vector<int> ll(n), step(n), lane(n);
    pl.W = 0;
    for (int i = 0; i < n; i++) {
        int l = 0, part = i / P, w = 0;
        for (int q = A.rp[i]; q < A.rp[i + 1]; q++) { int j = A.ci[q]; if (j == i) continue; w++; if (j / P == part) l = std::max(l, ll[j] + 1); }
        ll[i] = l; pl.W = std::max(pl.W, w);
    }
    pl.pstep.push_back(0);
    int s = 0;
    for (int p = 0; p < pl.nparts; p++) {
        int r0 = p * P, r1 = std::min(n, r0 + P), maxl = 0;
        for (int i = r0; i < r1; i++) maxl = std::max(maxl, ll[i]);
        std::vector<int> cnt(maxl + 2, 0);
        for (int i = r0; i < r1; i++) cnt[ll[i] + 1]++;
        std::vector<int> stepbase(maxl + 1);
        for (int l = 0; l <= maxl; l++) { stepbase[l] = s; s += (cnt[l + 1] + 31) / 32; }
        std::vector<int> fill(maxl + 1, 0);
        for (int i = r0; i < r1; i++) { int f = fill[ll[i]]++; step[i] = stepbase[ll[i]] + f / 32; lane[i] = f % 32; }
        pl.pstep.push_back(s);
    }
    pl.nsteps = s;
    size_t ns = (size_t)s * 32;
    pl.perm.assign(ns, -1); pl.dinv.assign(ns, 0.0); pl.col.assign(ns * pl.W, 0x7fffffff); pl.val.assign(ns * pl.W, 0.0);
    for (int i = 0; i < n; i++) {
        size_t sl = (size_t)step[i] * 32 + lane[i];
        pl.perm[sl] = i;
        int k = 0;
        for (int q = A.rp[i]; q < A.rp[i + 1]; q++) {
            int j = A.ci[q];
            if (j == i) { pl.dinv[sl] = 1.0 / A.v[q]; continue; }
            int code;
            if (j / P == i / P && step[i] - step[j] <= R - 1) code = -1 - ((step[j] % R) * 32 + lane[j]);
            else code = step[j] * 32 + lane[j];
            pl.col[(size_t)k * ns + sl] = code; pl.val[(size_t)k * ns + sl] = A.v[q]; k++;
        }
    }
    return pl;
}

struct Dev { int nparts, ns; unsigned long long per_solve; const int *pstep, *perm, *col; const double *val, *dinv; long long *ready; unsigned long long *ticket; };

#define WPB 4
__global__ void gather(int ns, const int *__restrict__ perm, const double *__restrict__ b, double *__restrict__ bp)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ns) { int r = perm[i]; bp[i] = r >= 0 ? b[r] : 0.0; }
}
static __device__ __forceinline__ void pf1(const void *p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }
static __device__ __forceinline__ void pf2(const void *p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }
template <int W, int R, int PD, int PL>
__global__ void __launch_bounds__(32 * WPB) wp_kernel(Dev S, const double *__restrict__ b, double *__restrict__ x)
{
    __shared__ double ring_all[WPB][R * 32];
    double *ring = ring_all[threadIdx.x / 32];
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long t = 0;
    if (lane == 0) t = atomicAdd(S.ticket, 1ULL);
    t = __shfl_sync(0xffffffffu, t, 0);
    const unsigned long long solve = t / S.per_solve, first = solve * S.per_solve;
    long long *cur = S.ready + ((solve & 1ULL) ? (size_t)S.ns : 0);
    long long *nxt = S.ready + ((solve & 1ULL) ? 0 : (size_t)S.ns);
    for (;;) {
        const unsigned long long part = t - first;
        if (part >= (unsigned long long)S.nparts) break;
        unsigned long long next = 0;
        if (lane == 0) next = atomicAdd(S.ticket, 1ULL);
        const int s0 = __ldg(S.pstep + part), s1 = __ldg(S.pstep + part + 1);
        // prefetch step s0
        int row, c[W]; double v[W], bi = 0, di = 0;
        {
            size_t sl = (size_t)s0 * 32 + lane;
            row = __ldg(S.perm + sl);
#pragma unroll
            for (int k = 0; k < W; k++) { c[k] = __ldg(S.col + (size_t)k * S.ns + sl); v[k] = __ldg(S.val + (size_t)k * S.ns + sl); }
            if (row >= 0) { bi = __ldg(b + sl); di = __ldg(S.dinv + sl); }
        }
        for (int st = s0; st < s1; st++) {
            const size_t sl = (size_t)st * 32 + lane;
            // next step's data
            int nrow = -1, nc[W]; double nv[W], nbi = 0, ndi = 0;
            if (PD > 0 && st + PD < s1) {
                size_t psl = sl + 32 * PD;
                if (PL == 1) {
                pf1(S.perm + psl); pf1(b + psl); pf1(S.dinv + psl);
#pragma unroll
                for (int k = 0; k < W; k++) { pf1(S.col + (size_t)k * S.ns + psl); pf1(S.val + (size_t)k * S.ns + psl); }
                } else {
                pf2(S.perm + psl); pf2(b + psl); pf2(S.dinv + psl);
#pragma unroll
                for (int k = 0; k < W; k++) { pf2(S.col + (size_t)k * S.ns + psl); pf2(S.val + (size_t)k * S.ns + psl); }
                }
            }
            if (st + 1 < s1) {
                size_t nsl = sl + 32;
                nrow = __ldg(S.perm + nsl);
#pragma unroll
                for (int k = 0; k < W; k++) { nc[k] = __ldg(S.col + (size_t)k * S.ns + nsl); nv[k] = __ldg(S.val + (size_t)k * S.ns + nsl); }
                if (nrow >= 0) { nbi = __ldg(b + nsl); ndi = __ldg(S.dinv + nsl); }
            }
            if (row >= 0) {
                double xv[W];
                unsigned pend = 0;
#pragma unroll
                for (int k = 0; k < W; k++) { xv[k] = 0.0; if (c[k] >= 0 && c[k] != 0x7fffffff) pend |= 1u << k; }
                while (pend) {
                    long long g[W];
#pragma unroll
                    for (int k = 0; k < W; k++) g[k] = (pend >> k) & 1u ? ldr(cur + c[k]) : EMPTY;
#pragma unroll
                    for (int k = 0; k < W; k++) if (((pend >> k) & 1u) && g[k] != EMPTY) { xv[k] = __longlong_as_double(g[k]); pend &= ~(1u << k); }
                }
#pragma unroll
                for (int k = 0; k < W; k++) if (c[k] < 0) xv[k] = ring[-1 - c[k]];
                double s = bi;
#pragma unroll
                for (int k = 0; k < W; k++) if (c[k] != 0x7fffffff) s -= v[k] * xv[k];
                double xr = s * di;
                ring[(st % R) * 32 + lane] = xr;
                long long bits = __double_as_longlong(xr);
                str(cur + sl, bits);
                nxt[sl] = EMPTY;
                x[row] = xr;
            }
            __syncwarp();
            row = nrow; bi = nbi; di = ndi;
#pragma unroll
            for (int k = 0; k < W; k++) { c[k] = nc[k]; v[k] = nv[k]; }
        }
        t = __shfl_sync(0xffffffffu, next, 0);
    }
}

typedef void (*kfn)(Dev, const double *, double *);
template <int R, int PD, int PL> static kfn pickW(int W)
{
    if (W <= 1) return wp_kernel<1, R, PD, PL>;
    if (W <= 2) return wp_kernel<2, R, PD, PL>;
    if (W <= 3) return wp_kernel<3, R, PD, PL>;
    if (W <= 4) return wp_kernel<4, R, PD, PL>;
    if (W <= 8) return wp_kernel<8, R, PD, PL>;
    return wp_kernel<13, R, PD, PL>;
}

// Register pipeline: the static data of step st + D is loaded when step st has been consumed (stage
// st % D, unrolled so that every stage has its own registers).
template <int W, int R, int D, int EXP = 0>
__global__ void __launch_bounds__(32 * WPB) wp2_kernel(Dev S, const double *__restrict__ b, double *__restrict__ x)
{
    __shared__ double ring_all[WPB][R * 32];
    double *ring = ring_all[threadIdx.x / 32];
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long t = 0;
    if (lane == 0) t = atomicAdd(S.ticket, 1ULL);
    t = __shfl_sync(0xffffffffu, t, 0);
    const unsigned long long solve = t / S.per_solve, first = solve * S.per_solve;
    long long *cur = S.ready + ((solve & 1ULL) ? (size_t)S.ns : 0);
    long long *nxt = S.ready + ((solve & 1ULL) ? 0 : (size_t)S.ns);
    for (;;) {
        const unsigned long long part = t - first;
        if (part >= (unsigned long long)S.nparts) break;
        unsigned long long next = 0;
        if (lane == 0) next = atomicAdd(S.ticket, 1ULL);
        const int s0 = __ldg(S.pstep + part), s1 = __ldg(S.pstep + part + 1);
        int row[D], c[D][W];
        double v[D][W], bi[D], di[D], carry = 0.0;
#pragma unroll
        for (int u = 0; u < D; u++) {
            row[u] = -1; bi[u] = 0; di[u] = 0;
            const size_t sl = (size_t)(s0 + u) * 32 + lane;
            if (s0 + u < s1) {
                row[u] = __ldg(S.perm + sl); bi[u] = __ldg(b + sl); di[u] = __ldg(S.dinv + sl);
#pragma unroll
                for (int k = 0; k < W; k++) { c[u][k] = __ldg(S.col + (size_t)k * S.ns + sl); v[u][k] = __ldg(S.val + (size_t)k * S.ns + sl); }
            }
        }
        for (int sb = s0; sb < s1; sb += D) {
#pragma unroll
            for (int u = 0; u < D; u++) {
                const int st = sb + u;
                if (st >= s1) break;
                const size_t sl = (size_t)st * 32 + lane;
                if (row[u] >= 0) {
                    double xv[W];
                    unsigned pend = 0;
#pragma unroll
                    for (int k = 0; k < W; k++) { xv[k] = 0.0; if (c[u][k] >= 0 && c[u][k] != 0x7fffffff) pend |= 1u << k; }
                    while (EXP != 4 && pend) {
                        long long g[W];
#pragma unroll
                        for (int k = 0; k < W; k++) g[k] = (pend >> k) & 1u ? ldr(cur + c[u][k]) : EMPTY;
#pragma unroll
                        for (int k = 0; k < W; k++) if (((pend >> k) & 1u) && g[k] != EMPTY) { xv[k] = __longlong_as_double(g[k]); pend &= ~(1u << k); }
                    }
#pragma unroll
                    for (int k = 0; k < W; k++) if (c[u][k] < 0) xv[k] = EXP == 5 ? carry : ring[-1 - c[u][k]];
                    double s = bi[u];
#pragma unroll
                    for (int k = 0; k < W; k++) if (c[u][k] != 0x7fffffff) s -= v[u][k] * xv[k];
                    double xr = s * di[u];
                    carry = xr;
                    ring[(st % R) * 32 + lane] = xr;
                    long long bits = __double_as_longlong(xr);
                    if (EXP == 2) { cur[sl] = bits; nxt[sl] = EMPTY; x[row[u]] = xr; }
                    else if (EXP == 3) { if (st + 1 == s1) x[row[u]] = xr; }
                    else {
                    str(cur + sl, bits);
                    nxt[sl] = EMPTY;
                    x[row[u]] = xr;
                    }
                }
                if (EXP != 1) __syncwarp();
                row[u] = -1;
                if (st + D < s1) {
                    const size_t q = sl + 32 * D;
                    row[u] = __ldg(S.perm + q); bi[u] = __ldg(b + q); di[u] = __ldg(S.dinv + q);
#pragma unroll
                    for (int k = 0; k < W; k++) { c[u][k] = __ldg(S.col + (size_t)k * S.ns + q); v[u][k] = __ldg(S.val + (size_t)k * S.ns + q); }
                }
            }
        }
        t = __shfl_sync(0xffffffffu, next, 0);
    }
}
template <int D> static kfn pick2(int W)
{
    if (W <= 1) return wp2_kernel<1, 8, D>;
    if (W <= 2) return wp2_kernel<2, 8, D>;
    if (W <= 3) return wp2_kernel<3, 8, D>;
    if (W <= 4) return wp2_kernel<4, 8, D>;
    return wp2_kernel<13, 8, D>;
}

static __device__ __forceinline__ unsigned sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
static __device__ __forceinline__ void cpa4(void *d, const void *s) { asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(sa(d)), "l"(s) : "memory"); }
static __device__ __forceinline__ void cpa8(void *d, const void *s) { asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(sa(d)), "l"(s) : "memory"); }
static __device__ __forceinline__ void cpa16g(void *d, const void *s) { asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa(d)), "l"(s) : "memory"); }
static __device__ __forceinline__ void cpcommit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> static __device__ __forceinline__ void cpwait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// Shared-memory pipeline: static data of step st + D copied (cp.async) when step st is consumed; b and
// the cross-part ready values of step st + D/2 copied then too (16-byte .cg copies: L2, never a stale L1).
template <int W>
struct Stage { long long g[W][32][2]; double val[W][32]; double dinv[32]; double bv[32]; int c[W][32]; int row[32]; };

template <int W, int R, int D>
__global__ void __launch_bounds__(32) wp3_kernel(Dev S, const double *__restrict__ b, double *__restrict__ x)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    Stage<W> *stg = (Stage<W> *)smem_raw;
    double *ring = (double *)(smem_raw + sizeof(Stage<W>) * D);
    constexpr int H = D / 2;
    const unsigned lane = threadIdx.x & 31u;
    unsigned long long t = 0;
    if (lane == 0) t = atomicAdd(S.ticket, 1ULL);
    t = __shfl_sync(0xffffffffu, t, 0);
    const unsigned long long solve = t / S.per_solve, first = solve * S.per_solve;
    long long *cur = S.ready + ((solve & 1ULL) ? (size_t)S.ns : 0);
    long long *nxt = S.ready + ((solve & 1ULL) ? 0 : (size_t)S.ns);
    auto stat = [&](int st) { /* static data of step st into its stage */
        Stage<W> &g = stg[st % D];
        const size_t sl = (size_t)st * 32 + lane;
        cpa4(&g.row[lane], S.perm + sl);
        cpa8(&g.dinv[lane], S.dinv + sl);
#pragma unroll
        for (int k = 0; k < W; k++) { cpa4(&g.c[k][lane], S.col + (size_t)k * S.ns + sl); cpa8(&g.val[k][lane], S.val + (size_t)k * S.ns + sl); }
    };
    auto dyn = [&](int st) { /* b and the cross-part values of step st (its static data is there) */
        Stage<W> &g = stg[st % D];
        const int r = g.row[lane];
        if (r >= 0) {
            cpa8(&g.bv[lane], b + r);
#pragma unroll
            for (int k = 0; k < W; k++) {
                const int c = g.c[k][lane];
                if (c >= 0 && c != 0x7fffffff) cpa16g(&g.g[k][lane][0], cur + (c & ~1));
            }
        }
    };
    for (;;) {
        const unsigned long long part = t - first;
        if (part >= (unsigned long long)S.nparts) break;
        unsigned long long next = 0;
        if (lane == 0) next = atomicAdd(S.ticket, 1ULL);
        const int s0 = __ldg(S.pstep + part), s1 = __ldg(S.pstep + part + 1);
        for (int st = s0; st < s0 + D && st < s1; st++) stat(st);
        cpcommit();
        cpwait<0>();
        for (int h = 0; h < H; h++) {
            if (s0 + h < s1) dyn(s0 + h);
            cpcommit();
        }
        for (int st = s0; st < s1; st++) {
            cpwait<H - 1>();
            Stage<W> &g = stg[st % D];
            const size_t sl = (size_t)st * 32 + lane;
            const int row = g.row[lane];
            if (row >= 0) {
                double xv[W];
                int c[W];
#pragma unroll
                for (int k = 0; k < W; k++) {
                    c[k] = g.c[k][lane];
                    xv[k] = 0.0;
                    if (c[k] >= 0 && c[k] != 0x7fffffff) {
                        long long v = g.g[k][lane][c[k] & 1];
                        while (v == EMPTY) v = ldr(cur + c[k]);
                        xv[k] = __longlong_as_double(v);
                    } else if (c[k] < 0) xv[k] = ring[-1 - c[k]];
                }
                double s = g.bv[lane];
#pragma unroll
                for (int k = 0; k < W; k++) if (c[k] != 0x7fffffff) s -= g.val[k][lane] * xv[k];
                double xr = s * g.dinv[lane];
                ring[(st % R) * 32 + lane] = xr;
                long long bits = __double_as_longlong(xr);
                str(cur + sl, bits);
                nxt[sl] = EMPTY;
                x[row] = xr;
            }
            __syncwarp();
            if (st + H < s1) dyn(st + H);
            if (st + D < s1) stat(st + D);
            cpcommit();
        }
        cpwait<0>();
        t = __shfl_sync(0xffffffffu, next, 0);
    }
}
template <int D> static kfn pick3(int W, size_t *smem)
{
#define P3(WW) { *smem = sizeof(Stage<WW>) * D + 8 * 32 * 8; kfn f = wp3_kernel<WW, 8, D>; cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)*smem); return f; }
    if (W <= 1) P3(1)
    if (W <= 2) P3(2)
    if (W <= 3) P3(3)
    if (W <= 4) P3(4)
    P3(13)
#undef P3
}
static kfn pick(int W, int v)
{
    if (v == 11) return wp2_kernel<1, 8, 8, 1>;
    if (v == 12) return wp2_kernel<1, 8, 8, 2>;
    if (v == 13) return wp2_kernel<1, 8, 8, 3>;
    if (v == 14) return wp2_kernel<1, 8, 16, 0>;
    if (v == 15) return wp2_kernel<1, 8, 8, 4>;
    if (v == 16) return wp2_kernel<1, 8, 8, 5>;
    if (v == 5) return pick2<4>(W);
    if (v == 6) return pick2<8>(W);
    if (v == 7) return pick2<2>(W);
    switch (v) { case 1: return pickW<8, 8, 1>(W); case 2: return pickW<8, 16, 1>(W); case 3: return pickW<8, 16, 2>(W); case 4: return pickW<8, 32, 1>(W); }
    return pickW<8, 0, 1>(W);
}

int main(int argc, char **argv)
{
    const char *kind = argc > 1 ? argv[1] : "2d";
    int N = argc > 2 ? atoi(argv[2]) : 1024;
    int nx = N, ny = N, nz = 1;
    if (!strcmp(kind, "3d") || !strcmp(kind, "27")) nz = N;
    if (!strcmp(kind, "chain")) { nx = N; ny = 1; nz = 1; kind = "2d"; }
    Csr A = gen(kind, nx, ny, nz);
    int n = A.n;
    std::vector<double> b(n), xr(n);
    for (int i = 0; i < n; i++) b[i] = 1.0 + 0.001 * (i % 101);
    for (int i = 0; i < n; i++) { double s = b[i], d = 1; for (int q = A.rp[i]; q < A.rp[i + 1]; q++) { if (A.ci[q] == i) d = A.v[q]; else s -= A.v[q] * xr[A.ci[q]]; } xr[i] = s / d; }
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<int> Ps; for (int a = 3; a < argc; a++) Ps.push_back(atoi(argv[a]));
    if (Ps.empty()) Ps.push_back(32 * nx);
    double *db, *dx; CK(cudaMalloc(&db, n * 8)); CK(cudaMalloc(&dx, n * 8));
    CK(cudaMemcpy(db, b.data(), n * 8, cudaMemcpyHostToDevice));
    for (int P : Ps) {
        const int R = 8;
        Plan pl = build(A, P, R);
        size_t ns = (size_t)pl.nsteps * 32;
        Dev S; S.nparts = pl.nparts; S.ns = (int)ns;
        int *dpstep, *dperm, *dcol; double *dval, *ddinv; long long *ready; unsigned long long *ticket;
        CK(cudaMalloc(&dpstep, pl.pstep.size() * 4)); CK(cudaMalloc(&dperm, ns * 4)); CK(cudaMalloc(&dcol, ns * pl.W * 4));
        CK(cudaMalloc(&dval, ns * pl.W * 8)); CK(cudaMalloc(&ddinv, ns * 8)); CK(cudaMalloc(&ready, 2 * ns * 8)); CK(cudaMalloc(&ticket, 8));
        CK(cudaMemcpy(dpstep, pl.pstep.data(), pl.pstep.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dperm, pl.perm.data(), ns * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dcol, pl.col.data(), ns * pl.W * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dval, pl.val.data(), ns * pl.W * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(ddinv, pl.dinv.data(), ns * 8, cudaMemcpyHostToDevice));
        CK(cudaMemset(ready, 0xff, 2 * ns * 8)); CK(cudaMemset(ticket, 0, 8));
        S.pstep = dpstep; S.perm = dperm; S.col = dcol; S.val = dval; S.dinv = ddinv; S.ready = ready; S.ticket = ticket;
        double *dbp; CK(cudaMalloc(&dbp, ns * 8));
        int maxb = 4;
        int maxsteps = 0; for (int p = 0; p < pl.nparts; p++) maxsteps = std::max(maxsteps, pl.pstep[p + 1] - pl.pstep[p]);
        const char *vs = getenv("V"); int V0 = vs ? atoi(vs) : 0, V1 = vs ? V0 : 16;
        for (int var = V0; var <= V1; var++) {
        kfn f; size_t smem = 0; int tpb = 32 * WPB;
        if (var >= 8 && var <= 10) { tpb = 32; f = var == 8 ? pick3<8>(pl.W, &smem) : var == 9 ? pick3<16>(pl.W, &smem) : pick3<4>(pl.W, &smem); }
        else f = pick(pl.W, var);
        for (int wpsm : {8}) {
            int wpb = tpb / 32;
            int blocks = std::min(std::min((sms * wpsm + wpb - 1) / wpb, sms * maxb), (pl.nparts + wpb - 1) / wpb);
            int warps = blocks * wpb;
            S.per_solve = (unsigned long long)pl.nparts + warps;
            CK(cudaMemset(ticket, 0, 8)); CK(cudaMemset(ready, 0xff, 2 * ns * 8));
            std::vector<float> ts;
            cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
            double maxerr = 0;
            for (int r = 0; r < 60; r++) {
                CK(cudaMemset(dx, 0xff, n * 8));
                cudaEventRecord(e0);
                gather<<<(unsigned)((ns + 255) / 256), 256>>>((int)ns, dperm, db, dbp);
                if (var >= 8 && var <= 10) f<<<blocks, tpb, smem>>>(S, db, dx); else f<<<blocks, tpb>>>(S, dbp, dx);
                CK(cudaGetLastError());
                cudaEventRecord(e1);
                CK(cudaEventSynchronize(e1));
                float ms; cudaEventElapsedTime(&ms, e0, e1);
                if (r >= 10) ts.push_back(ms * 1000);
                if (r == 59) {
                    std::vector<double> xh(n); CK(cudaMemcpy(xh.data(), dx, n * 8, cudaMemcpyDeviceToHost));
                    for (int i = 0; i < n; i++) maxerr = std::max(maxerr, fabs(xh[i] - xr[i]) / (fabs(xr[i]) + 1e-300));
                }
            }
            std::sort(ts.begin(), ts.end());
            printf("v%d %s N=%d P=%d parts=%d steps=%d maxsteps=%d W=%d wpsm=%d warps=%d : median %.1f us  (min %.1f) err %.1e\n", var, kind, N, P, pl.nparts,
                   pl.nsteps, maxsteps, pl.W, wpsm, warps, ts[ts.size() / 2], ts[0], maxerr);
        }}
        cudaFree(dbp);
        cudaFree(dpstep); cudaFree(dperm); cudaFree(dcol); cudaFree(dval); cudaFree(ddinv); cudaFree(ready); cudaFree(ticket);
    }
    return 0;
}
