// Warp-run ("segment scan") sync-free probe (session 19, docs/notes-trisolve.md version 21): the lower factor of a
// stencil (-DSTEN=2: a bidiagonal chain, 5: 2D 5-point, 7: 3D 7-point, 27: 3D 27-point; synthetic diagonally
// dominant values) cut into SEGMENTS: runs of consecutive rows each reading the row before it (and nothing else
// at or after the run's start), cut into ceil(len/P) nearly equal pieces. A warp solves a segment: every row's
// entries outside the segment are polled (ready values), then the in-segment recurrence x_i = c_i - a_i x_{i-1}
// (c_i = (b_i - outside sum) / d_i, a_i = l_{i,i-1} / d_i) is solved by composing affine maps: RMAX consecutive
// rows per lane serially, then a Kogge-Stone scan over the lanes. Segments are taken by ticket in the order of
// their level in the segment graph (deadlock free: a segment only reads segments of smaller level).
// MODE (4th argument): 0 = every lane polls its pending values, the polling loop warp-uniform (__any_sync:
// the fast one); 1 = each lane spins on its values one by one (divergent); 2/3 = a flag per segment (polled by
// one lane per dependency segment, 3 with __nanosleep), then the values; 4 = one value per dependency segment
// first, then 0; 5 = 0 with __nanosleep(100) after an unsuccessful round. PF=1: next ticket taken ahead.
// x is reset by a memset inside the timed region (ready values); the flags use an epoch.
// Build/run on the H100: nvcc -O3 -arch=sm_90 -std=c++17 -DSTEN=7 -DRMAX=1 -o ss segscan.cu && ./ss N P WARPS_PER_SM MODE
// (N: grid points per side, or chain length for STEN=2; P: rows per segment at most, <= 32*RMAX).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>
#include <algorithm>
#include <cmath>
#ifndef STEN
#define STEN 7
#endif
#if STEN == 2
#define K 1
#elif STEN == 5
#define K 2
#elif STEN == 7
#define K 3
#else
#define K 13
#endif
#ifndef RMAX
#define RMAX 4
#endif
#define EMPTY (-1LL)
#ifndef PF
#define PF 0
#endif
#ifndef FLAGS
#define FLAGS 1
#endif
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
__device__ __forceinline__ long long ldg_relaxed(const long long *p) { long long v; asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ unsigned ld_acquire(const unsigned *p) { unsigned v; asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_release(unsigned *p, unsigned v) { asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ unsigned ld_relaxed32(const unsigned *p) { unsigned v; asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void stg_relaxed32(unsigned *p, unsigned v) { asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void stg_relaxed(long long *p, long long v) { asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }

// positions p: segments in ticket order, rows of a segment consecutive. col[k*n+p]: position of an outside
// dependency or -1; val likewise; asub[p] = l(r,r-1)/d_r when r-1 is in the segment else 0; cinv[p] = 1/d_r.
template <int MODE>
__global__ void __launch_bounds__(256) seg_kernel(int n, int nseg, const int *__restrict__ soff, const int *__restrict__ col,
    const double *__restrict__ val, const double *__restrict__ asub, const double *__restrict__ dinv, const double *__restrict__ bp,
    long long *x, unsigned *ticket, const int *__restrict__ sdoff, const int *__restrict__ sdep, unsigned *flag, unsigned epoch, int fs, long long *clk, long long *trace)
{
    const int lane = threadIdx.x & 31;
    long long c0 = clock64(), g0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    unsigned tn = 0;
    if (PF && lane == 0) tn = atomicAdd(ticket, 1u);
    for (;;) {
        unsigned t = 0;
        if (PF) {
            t = __shfl_sync(0xffffffffu, tn, 0);
            if (lane == 0 && t < (unsigned)nseg) tn = atomicAdd(ticket, 1u);
        } else {
            if (lane == 0) t = atomicAdd(ticket, 1u);
            t = __shfl_sync(0xffffffffu, t, 0);
        }
        if (t >= (unsigned)nseg) {
            if (lane == 0 && t == (unsigned)nseg) { long long g1; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1)); clk[0] = clock64() - c0; clk[1] = g1 - g0; }
            return;
        }
        const int p0 = soff[t], len = soff[t + 1] - p0;
        const int R = (len + 31) >> 5;
        const int my0 = lane * R;
        double c[RMAX], a[RMAX], dv[RMAX];
        long long v[RMAX][K];
        int cc[RMAX][K];
        double w[RMAX][K];
#pragma unroll
        for (int j = 0; j < RMAX; j++) {
            const int li = my0 + j;
            const bool act = j < R && li < len;
            const int p = p0 + li;
            c[j] = act ? __ldg(bp + p) : 0.0;
            a[j] = act ? __ldg(asub + p) : 0.0;
            dv[j] = act ? __ldg(dinv + p) : 0.0;
#pragma unroll
            for (int k = 0; k < K; k++) {
                cc[j][k] = act ? __ldg(col + (size_t)k * n + p) : -1;
                w[j][k] = act ? __ldg(val + (size_t)k * n + p) : 0.0;
            }
        }
        if (MODE >= 2) {
            const int d0 = sdoff[t], nd = sdoff[t + 1] - d0;
            for (int i = lane; i < nd; i += 32) {
                const unsigned *f = flag + (size_t)sdep[d0 + i] * fs;
                while (ld_relaxed32(f) != epoch) { if (MODE == 3) __nanosleep(40); }
            }
            __syncwarp();
            __threadfence();
        }
        if (MODE == 4) { // poll one value (the last row) of every segment this one reads, then everything
            const int d0 = sdoff[t], nd = sdoff[t + 1] - d0;
            for (int i0 = 0; i0 < nd; i0 += 32) {
                const long long *f = i0 + lane < nd ? x + (soff[sdep[d0 + i0 + lane] + 1] - 1) : nullptr;
                for (;;) {
                    const bool pend = f && ldg_relaxed(f) == EMPTY;
                    if (!__any_sync(0xffffffffu, pend)) break;
                }
            }
        }
#pragma unroll
        for (int j = 0; j < RMAX; j++)
#pragma unroll
            for (int k = 0; k < K; k++) v[j][k] = cc[j][k] >= 0 ? ldg_relaxed(x + cc[j][k]) : 0LL;
        if (MODE == 0 || MODE == 4 || MODE == 5) {
            for (;;) {
                bool pend = false;
#pragma unroll
                for (int j = 0; j < RMAX; j++)
#pragma unroll
                    for (int k = 0; k < K; k++)
                        if (v[j][k] == EMPTY) { v[j][k] = ldg_relaxed(x + cc[j][k]); pend = true; }
                if (!__any_sync(0xffffffffu, pend)) break;
                if (MODE == 5) __nanosleep(100);
            }
        } else if (MODE == 1) {
#pragma unroll
            for (int j = 0; j < RMAX; j++)
#pragma unroll
                for (int k = 0; k < K; k++)
                    while (v[j][k] == EMPTY) v[j][k] = ldg_relaxed(x + cc[j][k]);
        }
        long long ts0 = clock64(), gt0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(gt0));
        // rows: c_j = (b - sum) / d ; map x -> alpha x + beta with alpha = -a, beta = c
        double A = 1.0, B = 0.0;
#pragma unroll
        for (int j = 0; j < RMAX; j++) {
            const int li = my0 + j;
            const bool act = j < R && li < len;
            double s = c[j];
#pragma unroll
            for (int k = 0; k < K; k++) s -= w[j][k] * __longlong_as_double(v[j][k]);
            c[j] = s * dv[j];
            if (act) { B = -a[j] * B + c[j]; A = -a[j] * A; }
        }
        // inclusive scan over lanes of (A, B): compose (lane i-off) then (lane i)
        if (len > R)
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const double Ao = __shfl_up_sync(0xffffffffu, A, off), Bo = __shfl_up_sync(0xffffffffu, B, off);
            if (lane >= off) { B = A * Bo + B; A = A * Ao; }
        }
        long long ts1 = clock64();
        double xin = __shfl_up_sync(0xffffffffu, B, 1);
        if (lane == 0 || len <= R) xin = 0.0;
#pragma unroll
        for (int j = 0; j < RMAX; j++) {
            const int li = my0 + j;
            if (j < R && li < len) {
                xin = c[j] - a[j] * xin;
                long long bits = __double_as_longlong(xin);
                stg_relaxed(x + p0 + li, bits);
            }
        }
        if (trace && lane == 0 && t < 4096) { long long ts2 = clock64(); trace[4 * t] = ts1 - ts0; trace[4 * t + 1] = ts2 - ts0; trace[4 * t + 2] = gt0; }
        if (MODE >= 2) {
            __threadfence();
            __syncwarp();
            if (lane == 0) stg_relaxed32(flag + (size_t)t * fs, epoch);
        }
    }
}

int main(int argc, char **argv)
{
    const int N = argc > 1 ? atoi(argv[1]) : 100, P = argc > 2 ? atoi(argv[2]) : 128, G = argc > 3 ? atoi(argv[3]) : 8, MODE = argc > 4 ? atoi(argv[4]) : 2, FS = argc > 5 ? atoi(argv[5]) : 32;
    const int reps = 50;
    const bool two = STEN == 5, one = STEN == 2;
    const int nx = N, ny = one ? 1 : N, nz = two || one ? 1 : N;
    const int n = nx * ny * nz;
    // lower factor in CSR (strict part), columns ascending
    std::vector<int> rp(n + 1, 0), ci;
    std::vector<double> cv, diag(n), b(n);
    srand(7);
    auto urand = [] { return rand() / (double)RAND_MAX; };
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                const int r = i + nx * (j + ny * k);
                std::vector<int> cols;
                if (STEN == 27) {
                    for (int dk = -1; dk <= 0; dk++)
                        for (int dj = -1; dj <= 1; dj++)
                            for (int di = -1; di <= 1; di++) {
                                const int ii = i + di, jj = j + dj, kk = k + dk;
                                if (ii < 0 || jj < 0 || kk < 0 || ii >= nx || jj >= ny || kk >= nz) continue;
                                const int q = ii + nx * (jj + ny * kk);
                                if (q < r) cols.push_back(q);
                            }
                } else {
                    if (k > 0) cols.push_back(r - nx * ny);
                    if (j > 0) cols.push_back(r - nx);
                    if (i > 0) cols.push_back(r - 1);
                }
                std::sort(cols.begin(), cols.end());
                for (int q : cols) { ci.push_back(q); cv.push_back(-(0.5 + 0.5 * urand()) / (double)(cols.size() + 1)); }
                rp[r + 1] = (int)ci.size();
                diag[r] = 1.0 + 0.2 * urand();
                b[r] = urand() - 0.3;
            }
    // host reference
    std::vector<double> xr(n);
    for (int r = 0; r < n; r++) {
        double s = b[r];
        for (int q = rp[r]; q < rp[r + 1]; q++) s -= cv[q] * xr[ci[q]];
        xr[r] = s / diag[r];
    }
    // segments: a run = consecutive rows r whose dependency set contains r-1 and whose other dependencies lie
    // before the run's start; runs longer than P are cut into ceil(len/P) nearly equal pieces
    std::vector<int> seg_of(n), sstart;
    {
        std::vector<int> runs;
        int s = 0;
        for (int r = 0; r < n; r++) {
            bool join = false;
            if (r > 0) {
                bool link = false, ok = true;
                for (int q = rp[r]; q < rp[r + 1]; q++) {
                    if (ci[q] == r - 1) link = true;
                    else if (ci[q] >= s) ok = false;
                }
                join = link && ok;
            }
            if (!join) { s = r; runs.push_back(r); }
        }
        runs.push_back(n);
        for (size_t u = 0; u + 1 < runs.size(); u++) {
            const int len = runs[u + 1] - runs[u], pieces = (len + P - 1) / P;
            for (int q = 0; q < pieces; q++) sstart.push_back(runs[u] + (int)((long long)len * q / pieces));
        }
        for (size_t g = 0; g < sstart.size(); g++)
            for (int r = sstart[g]; r < (g + 1 < sstart.size() ? sstart[g + 1] : n); r++) seg_of[r] = (int)g;
    }
    const int nseg = (int)sstart.size();
    sstart.push_back(n);
    std::vector<int> slev(nseg, 0);
    int nlev = 0;
    for (int g = 0; g < nseg; g++) {
        int l = 0;
        for (int r = sstart[g]; r < sstart[g + 1]; r++)
            for (int q = rp[r]; q < rp[r + 1]; q++)
                if (ci[q] < sstart[g]) l = std::max(l, slev[seg_of[ci[q]]] + 1);
        slev[g] = l;
        nlev = std::max(nlev, l + 1);
    }
    std::vector<int> order(nseg);
    for (int g = 0; g < nseg; g++) order[g] = g;
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return slev[x] < slev[y]; });
    std::vector<int> pos(n), soff(nseg + 1, 0), perm(n);
    {
        int p = 0;
        for (int t = 0; t < nseg; t++) {
            const int g = order[t];
            soff[t] = p;
            for (int r = sstart[g]; r < sstart[g + 1]; r++) { pos[r] = p; perm[p] = r; p++; }
        }
        soff[nseg] = p;
    }
    std::vector<int> tick(nseg);
    for (int t = 0; t < nseg; t++) tick[order[t]] = t;
    std::vector<int> sdoff(nseg + 1, 0), sdep;
    for (int t = 0; t < nseg; t++) {
        const int g = order[t];
        std::vector<int> ds;
        for (int r = sstart[g]; r < sstart[g + 1]; r++)
            for (int q = rp[r]; q < rp[r + 1]; q++)
                if (ci[q] < sstart[g]) ds.push_back(tick[seg_of[ci[q]]]);
        std::sort(ds.begin(), ds.end());
        ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
        for (int d : ds) sdep.push_back(d);
        sdoff[t + 1] = (int)sdep.size();
    }
    int maxext = 0;
    std::vector<int> col((size_t)K * n, -1);
    std::vector<double> val((size_t)K * n, 0.0), asub(n, 0.0), dinv(n), bp(n);
    for (int p = 0; p < n; p++) {
        const int r = perm[p], g = seg_of[r];
        int e = 0;
        for (int q = rp[r]; q < rp[r + 1]; q++) {
            if (ci[q] == r - 1 && ci[q] >= sstart[g]) { asub[p] = cv[q] / diag[r]; continue; }
            if (e >= K) { printf("row %d has more than K outside entries\n", r); return 1; }
            col[(size_t)e * n + p] = pos[ci[q]];
            val[(size_t)e * n + p] = cv[q];
            e++;
        }
        maxext = std::max(maxext, e);
        dinv[p] = 1.0 / diag[r];
        bp[p] = b[r];
    }
    int maxlen = 0;
    for (int g = 0; g < nseg; g++) maxlen = std::max(maxlen, sstart[g + 1] - sstart[g]);
    if (maxlen > 32 * RMAX) { printf("segment longer than 32*RMAX\n"); return 1; }
    printf("STEN %d N %d n %d P %d: %d segments (max %d rows), %d segment levels, max outside %d\n", STEN, N, n, P, nseg, maxlen, nlev, maxext);

    int *d_soff, *d_col; double *d_val, *d_asub, *d_dinv, *d_bp; long long *d_x; unsigned *d_t;
    CK(cudaMalloc(&d_soff, (nseg + 1) * 4)); CK(cudaMalloc(&d_col, (size_t)K * n * 4)); CK(cudaMalloc(&d_val, (size_t)K * n * 8));
    CK(cudaMalloc(&d_asub, n * 8)); CK(cudaMalloc(&d_dinv, n * 8)); CK(cudaMalloc(&d_bp, n * 8)); CK(cudaMalloc(&d_x, n * 8)); CK(cudaMalloc(&d_t, 4));
    CK(cudaMemcpy(d_soff, soff.data(), (nseg + 1) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_col, col.data(), (size_t)K * n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_val, val.data(), (size_t)K * n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_asub, asub.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_dinv, dinv.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_bp, bp.data(), n * 8, cudaMemcpyHostToDevice));
    int *d_sdoff, *d_sdep; unsigned *d_flag;
    CK(cudaMalloc(&d_sdoff, (nseg + 1) * 4)); CK(cudaMalloc(&d_sdep, (sdep.size() + 1) * 4)); CK(cudaMalloc(&d_flag, (size_t)nseg * 4 * FS));
    CK(cudaMemcpy(d_sdoff, sdoff.data(), (nseg + 1) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_sdep, sdep.data(), sdep.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(d_flag, 0, (size_t)nseg * 4 * FS));
    printf("  segment dependencies: %.2f per segment\n", sdep.size() / (double)nseg);
    long long *d_clk; CK(cudaMalloc(&d_clk, 16));
    long long *d_trace; CK(cudaMalloc(&d_trace, 4096 * 32)); CK(cudaMemset(d_trace, 0, 4096 * 32));
    int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int warps = sms * G, blocks = (warps * 32 + 255) / 256; // G >= 8: every SM gets a block
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    std::vector<float> ts;
    for (int it = 0; it < reps + 5; it++) {
        CK(cudaEventRecord(e0));
        if (MODE < 2 || MODE >= 4) CK(cudaMemsetAsync(d_x, 0xff, n * 8));
        CK(cudaMemsetAsync(d_t, 0, 4));
        auto kern = MODE == 5 ? seg_kernel<5> : MODE == 4 ? seg_kernel<4> : MODE == 0 ? seg_kernel<0> : MODE == 1 ? seg_kernel<1> : MODE == 2 ? seg_kernel<2> : seg_kernel<3>;
        kern<<<blocks, 256>>>(n, nseg, d_soff, d_col, d_val, d_asub, d_dinv, d_bp, d_x, d_t, d_sdoff, d_sdep, d_flag, (unsigned)(it + 1), FS, d_clk, d_trace);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaGetLastError());
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
        if (it >= 5) ts.push_back(ms * 1000.f);
    }
    std::sort(ts.begin(), ts.end());
    long long hclk[2]; CK(cudaMemcpy(hclk, d_clk, 16, cudaMemcpyDeviceToHost));
    {
        std::vector<long long> tr(4 * 4096); CK(cudaMemcpy(tr.data(), d_trace, 4096 * 32, cudaMemcpyDeviceToHost));
        const int m = std::min(nseg, 4096);
        std::vector<long long> a1, a2, gap;
        for (int t = 1; t < m; t++) { a1.push_back(tr[4 * t]); a2.push_back(tr[4 * t + 1]); gap.push_back(tr[4 * t + 2] - tr[4 * (t - 1) + 2]); }
        std::sort(a1.begin(), a1.end()); std::sort(a2.begin(), a2.end()); std::sort(gap.begin(), gap.end());
        printf("  trace (median over %d segments): poll->scan done %lld cycles, poll->stores issued %lld cycles, poll-to-poll of consecutive tickets %lld ns\n", m - 1, a1[a1.size() / 2], a2[a2.size() / 2], gap[gap.size() / 2]);
    }
    printf("  last warp: %lld cycles in %lld ns = %.0f MHz\n", hclk[0], hclk[1], hclk[0] * 1e3 / hclk[1]);
    std::vector<double> xp(n);
    CK(cudaMemcpy(xp.data(), d_x, n * 8, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (int p = 0; p < n; p++) { const double dd = xp[p] - xr[perm[p]]; num += dd * dd; den += xr[perm[p]] * xr[perm[p]]; }
    printf("  warps/SM %d: median %.1f us (min %.1f), %.3f us per segment level, rel_err %.2e\n", G, ts[ts.size() / 2], ts[0], ts[ts.size() / 2] / nlev, sqrt(num / den));
    return 0;
}
