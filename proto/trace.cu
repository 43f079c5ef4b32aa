// Standalone probe (not part of the build): a sync-free solve of a layered lower triangle (L levels of
// W rows, k dependencies per row in the level before, modes s/a/c/r as scripts/layered_mtx.py) with the
// polling structure of sf_chunk (persistent warps, a ticket per 32 rows, relaxed loads of ready values,
// warp-wide rounds), instrumented with %globaltimer: when each row's warp starts polling and when the
// row publishes, and in which round.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cuda_runtime.h>

#define EMPTY (-1LL)
#define KMAX 16
template <int LD> static __device__ __forceinline__ long long ldr(const long long *p) {
  long long v;
  if (LD == 0) asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else if (LD == 1) asm volatile("ld.volatile.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else if (LD == 2) asm volatile("ld.global.cg.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else asm volatile("ld.global.cg.b64 %0, [%1];" : "=l"(v) : "l"(p));
  return v; }
static __device__ __forceinline__ void str(long long *p, long long v) {
  asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory"); }
static __device__ __forceinline__ unsigned long long gt() {
  unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }

template <int K, int LD>
__global__ void __launch_bounds__(128) solve(int n, int k, const int *__restrict__ col, const double *__restrict__ b,
    long long *ready, unsigned long long *ticket, unsigned long long *tstart, unsigned long long *tpub, int *rounds, int trace)
{
  const unsigned lane = threadIdx.x & 31u;
  const unsigned long long nch = (n + 31) / 32;
  unsigned long long t = 0;
  if (lane == 0) t = atomicAdd(ticket, 1ULL);
  t = __shfl_sync(~0u, t, 0);
  while (t < nch) {
    unsigned long long next = 0;
    if (lane == 0) next = atomicAdd(ticket, 1ULL);
    const int p = (int)(t * 32 + lane);
    const bool active = p < n;
    int c[K]; double xv[K]; unsigned pend = 0; double bi = 0;
#pragma unroll
    for (int q = 0; q < K; q++) { c[q] = -1; xv[q] = 0; }
    if (active) {
      bi = b[p];
#pragma unroll
      for (int q = 0; q < K; q++) if (q < k) { c[q] = col[(size_t)q * n + p]; if (c[q] >= 0) pend |= 1u << q; }
    }
    bool done = !active; int r = 0;
    if (trace && active) tstart[p] = gt();
    for (;;) {
      if (!done) {
        long long got[K];
#pragma unroll
        for (int q = 0; q < K; q++) got[q] = (pend >> q) & 1u ? ldr<LD>(ready + c[q]) : EMPTY;
#pragma unroll
        for (int q = 0; q < K; q++) if (((pend >> q) & 1u) && got[q] != EMPTY) { xv[q] = __longlong_as_double(got[q]); pend &= ~(1u << q); }
        r++;
        if (pend == 0) {
          double s = bi;
#pragma unroll
          for (int q = 0; q < K; q++) if (c[q] >= 0) s -= xv[q];
          s *= 0.1;
          if (trace) { tpub[p] = gt(); rounds[p] = r; }
          str(ready + p, __double_as_longlong(s));
          done = true;
        }
      }
      if (__all_sync(~0u, done)) break;
    }
    t = __shfl_sync(~0u, next, 0);
  }
}


// Warp-shared polls: the warp's dependencies lie in [lo, lo + 64): each lane loads lo + lane and
// lo + 32 + lane (2 loads per round instead of k), and takes its k values by shuffles.
template <int K>
__global__ void __launch_bounds__(128) solve_win(int n, int k, const int *__restrict__ col, const double *__restrict__ b,
    long long *ready, unsigned long long *ticket, unsigned long long *tstart, unsigned long long *tpub, int *rounds, int trace, int *bad)
{
  const unsigned lane = threadIdx.x & 31u;
  const unsigned long long nch = (n + 31) / 32;
  unsigned long long t = 0;
  if (lane == 0) t = atomicAdd(ticket, 1ULL);
  t = __shfl_sync(~0u, t, 0);
  while (t < nch) {
    unsigned long long next = 0;
    if (lane == 0) next = atomicAdd(ticket, 1ULL);
    const int p = (int)(t * 32 + lane);
    const bool active = p < n;
    int c[K]; double xv[K]; unsigned pend = 0; double bi = 0;
    int mn = 0x7fffffff, mx = -1;
#pragma unroll
    for (int q = 0; q < K; q++) { c[q] = -1; xv[q] = 0; }
    if (active) {
      bi = b[p];
#pragma unroll
      for (int q = 0; q < K; q++) if (q < k) { c[q] = col[(size_t)q * n + p]; if (c[q] >= 0) { pend |= 1u << q; mn = min(mn, c[q]); mx = max(mx, c[q]); } }
    }
#pragma unroll
    for (int o = 16; o; o >>= 1) { mn = min(mn, __shfl_xor_sync(~0u, mn, o)); mx = max(mx, __shfl_xor_sync(~0u, mx, o)); }
    const int lo = mn;
    if (mx >= 0 && mx - lo >= 64) { if (lane == 0) atomicAdd(bad, 1); }
    bool done = !active; int r = 0;
    if (trace && active) tstart[p] = gt();
    for (;;) {
      long long v0 = EMPTY, v1 = EMPTY;
      if (mx >= 0) {
        if (lo + (int)lane <= mx) v0 = ldr<0>(ready + lo + lane);
        if (lo + 32 + (int)lane <= mx) v1 = ldr<0>(ready + lo + 32 + lane);
      }
#pragma unroll
      for (int q = 0; q < K; q++) {
        const int off = c[q] >= 0 ? c[q] - lo : 0;
        const long long a0 = __shfl_sync(~0u, v0, off & 31), a1 = __shfl_sync(~0u, v1, off & 31);
        const long long g = off < 32 ? a0 : a1;
        if (!done && ((pend >> q) & 1u) && g != EMPTY) { xv[q] = __longlong_as_double(g); pend &= ~(1u << q); }
      }
      if (!done) {
        r++;
        if (pend == 0) {
          double s = bi;
#pragma unroll
          for (int q = 0; q < K; q++) if (c[q] >= 0) s -= xv[q];
          s *= 0.1;
          if (trace) { tpub[p] = gt(); rounds[p] = r; }
          str(ready + p, __double_as_longlong(s));
          done = true;
        }
      }
      if (__all_sync(~0u, done)) break;
    }
    t = __shfl_sync(~0u, next, 0);
  }
}

// Lean rounds: addresses computed once; a lane with one pending value polls only that one.
template <int K>
__global__ void __launch_bounds__(128) solve_lean(int n, int k, const int *__restrict__ col, const double *__restrict__ b,
    long long *ready, unsigned long long *ticket, unsigned long long *tstart, unsigned long long *tpub, int *rounds, int trace)
{
  const unsigned lane = threadIdx.x & 31u;
  const unsigned long long nch = (n + 31) / 32;
  unsigned long long t = 0;
  if (lane == 0) t = atomicAdd(ticket, 1ULL);
  t = __shfl_sync(~0u, t, 0);
  while (t < nch) {
    unsigned long long next = 0;
    if (lane == 0) next = atomicAdd(ticket, 1ULL);
    const int p = (int)(t * 32 + lane);
    const bool active = p < n;
    const long long *a[K]; double xv[K]; unsigned pend = 0; double bi = 0; int c[K];
#pragma unroll
    for (int q = 0; q < K; q++) { c[q] = -1; xv[q] = 0; a[q] = ready; }
    if (active) {
      bi = b[p];
#pragma unroll
      for (int q = 0; q < K; q++) if (q < k) { c[q] = col[(size_t)q * n + p]; if (c[q] >= 0) { pend |= 1u << q; a[q] = ready + c[q]; } }
    }
    bool done = !active; int r = 0;
    if (trace && active) tstart[p] = gt();
    for (;;) {
      if (!done) {
        if (__popc(pend) == 1) {
          const long long *ap = ready;
#pragma unroll
          for (int q = 0; q < K; q++) if ((pend >> q) & 1u) ap = a[q];
          const long long g = ldr<0>(ap);
          if (g != EMPTY) {
#pragma unroll
            for (int q = 0; q < K; q++) if ((pend >> q) & 1u) xv[q] = __longlong_as_double(g);
            pend = 0;
          }
        } else {
          long long got[K];
#pragma unroll
          for (int q = 0; q < K; q++) got[q] = (pend >> q) & 1u ? ldr<0>(a[q]) : EMPTY;
#pragma unroll
          for (int q = 0; q < K; q++) if (((pend >> q) & 1u) && got[q] != EMPTY) { xv[q] = __longlong_as_double(got[q]); pend &= ~(1u << q); }
        }
        r++;
        if (pend == 0) {
          double s = bi;
#pragma unroll
          for (int q = 0; q < K; q++) if (c[q] >= 0) s -= xv[q];
          s *= 0.1;
          if (trace) { tpub[p] = gt(); rounds[p] = r; }
          str(ready + p, __double_as_longlong(s));
          done = true;
        }
      }
      if (__all_sync(~0u, done)) break;
    }
    t = __shfl_sync(~0u, next, 0);
  }
}
static void columns(char mode, int r, int k, int W, std::vector<int> &out) {
  out.clear();
  if (mode == 'o') { out.push_back(r); return; } // the fresh one; the stale ones are added in main
  for (int t = 0; t < k; t++) {
    int c;
    if (mode == 'c') c = ((r - k / 2 + t) % W + W) % W;
    else if (mode == 'a') c = (r & ~31) + ((r + t) & 31);
    else if (mode == 's') c = (r + t * (W / k)) % W;
    else c = (((r + t * (W / k)) % W) & ~31) + ((r + t) & 31);
    out.push_back(c);
  }
  std::sort(out.begin(), out.end()); out.erase(std::unique(out.begin(), out.end()), out.end());
}

int main(int argc, char **argv) {
  int L = atoi(argv[1]), W = atoi(argv[2]), k = atoi(argv[3]); char mode = argv[4][0];
  int wpsm = argc > 5 ? atoi(argv[5]) : 8;
  int ld = argc > 6 ? atoi(argv[6]) : 0;
  int n = L * W, kw = k;
  std::vector<int> col((size_t)kw * n, -1), tmp;
  for (int l = 1; l < L; l++) for (int r = 0; r < W; r++) {
    columns(mode, r, k, W, tmp);
    for (size_t q = 0; q < tmp.size(); q++) col[q * n + (size_t)l * W + r] = (l - 1) * W + tmp[q];
    if (mode == 'o' && l > 1) // k - 1 rows of level 0, solved long before
      for (int q = 1; q < k; q++) col[(size_t)q * n + (size_t)l * W + r] = (r + q) % W;
  }
  std::vector<double> hb(n, 1.0);
  int *dcol; double *db; long long *dready; unsigned long long *dt, *ts, *tp; int *dr;
  cudaMalloc(&dcol, sizeof(int) * col.size()); cudaMemcpy(dcol, col.data(), sizeof(int) * col.size(), cudaMemcpyHostToDevice);
  cudaMalloc(&db, 8 * n); cudaMemcpy(db, hb.data(), 8 * n, cudaMemcpyHostToDevice);
  cudaMalloc(&dready, 8 * n); cudaMalloc(&dt, 8); cudaMalloc(&ts, 8 * n); cudaMalloc(&tp, 8 * n); cudaMalloc(&dr, 4 * n);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int blocks = sms * wpsm / 4;
  decltype(&solve<4, 0>) tab[3][4] = {{solve<4, 0>, solve<4, 1>, solve<4, 2>, solve<4, 3>},
                                      {solve<8, 0>, solve<8, 1>, solve<8, 2>, solve<8, 3>},
                                      {solve<16, 0>, solve<16, 1>, solve<16, 2>, solve<16, 3>}};
  auto kern = tab[k <= 4 ? 0 : k <= 8 ? 1 : 2][ld < 4 ? ld : 0];
  auto kwin = k <= 4 ? solve_win<4> : k <= 8 ? solve_win<8> : solve_win<16>;
  auto kex = k <= 1 ? solve<1, 0> : k <= 2 ? solve<2, 0> : k <= 4 ? solve<4, 0> : k <= 9 ? solve<9, 0> : solve<16, 0>;
  auto klean = k <= 4 ? solve_lean<4> : k <= 8 ? solve_lean<8> : k <= 9 ? solve_lean<9> : solve_lean<16>;
  int *dbad; cudaMalloc(&dbad, 4); cudaMemset(dbad, 0, 4);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> times;
  for (int rep = 0; rep < 30; rep++) {
    int trace = rep == 29;
    cudaMemset(dready, 0xFF, 8 * n); cudaMemset(dt, 0, 8);
    cudaEventRecord(e0);
    if (ld == 4) kwin<<<blocks, 128>>>(n, k, dcol, db, dready, dt, ts, tp, dr, trace, dbad);
    else if (ld == 5) kex<<<blocks, 128>>>(n, k, dcol, db, dready, dt, ts, tp, dr, trace);
    else if (ld == 6) klean<<<blocks, 128>>>(n, k, dcol, db, dready, dt, ts, tp, dr, trace);
    else kern<<<blocks, 128>>>(n, k, dcol, db, dready, dt, ts, tp, dr, trace);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); if (!trace) times.push_back(ms * 1000);
  }
  if (cudaGetLastError() != cudaSuccess) { printf("error\n"); return 1; }
  { int hbad = 0; cudaMemcpy(&hbad, dbad, 4, cudaMemcpyDeviceToHost); if (hbad) printf("  (window too wide in %d chunks: results wrong)\n", hbad); }
  { // check the values against a host solve
    std::vector<long long> hv(n); cudaMemcpy(hv.data(), dready, 8 * n, cudaMemcpyDeviceToHost);
    std::vector<double> xr(n); double md = 0;
    for (int p = 0; p < n; p++) { double s = 1.0; for (int q = 0; q < kw; q++) { int c = col[(size_t)q * n + p]; if (c >= 0) s -= xr[c]; } xr[p] = s * 0.1;
      double g; memcpy(&g, &hv[p], 8); md = std::max(md, std::abs(g - xr[p])); }
    printf("  max |x - host| = %.2e\n", md); }
  std::sort(times.begin(), times.end());
  std::vector<unsigned long long> hs(n), hp(n); std::vector<int> hr(n);
  cudaMemcpy(hs.data(), ts, 8 * n, cudaMemcpyDeviceToHost); cudaMemcpy(hp.data(), tp, 8 * n, cudaMemcpyDeviceToHost);
  cudaMemcpy(hr.data(), dr, 4 * n, cudaMemcpyDeviceToHost);
  unsigned long long t0 = *std::min_element(hs.begin(), hs.end());
  // timer resolution: smallest nonzero difference among sorted publish times
  std::vector<unsigned long long> sp(hp); std::sort(sp.begin(), sp.end());
  unsigned long long res = ~0ULL; for (int i = 1; i < n; i++) if (sp[i] > sp[i - 1]) res = std::min(res, sp[i] - sp[i - 1]);
  // per row: delay after its last dependency; late start; rounds; per chunk lane spread
  std::vector<double> delay, late, spread, lvl;
  long long rsum = 0, latecount = 0;
  for (int l = 1; l < L; l++) for (int r = 0; r < W; r++) {
    int p = l * W + r; unsigned long long mx = 0;
    for (int q = 0; q < kw; q++) { int c = col[(size_t)q * n + p]; if (c >= 0) mx = std::max(mx, hp[c]); }
    delay.push_back((double)(hp[p] - mx));
    if (hs[p] > mx) { latecount++; late.push_back((double)(hs[p] - mx)); }
    rsum += hr[p];
  }
  for (int ch = 0; ch < n / 32; ch++) {
    unsigned long long a = ~0ULL, z = 0;
    for (int j = 0; j < 32; j++) { a = std::min(a, hp[ch * 32 + j]); z = std::max(z, hp[ch * 32 + j]); }
    spread.push_back((double)(z - a));
  }
  for (int l = 0; l < L; l++) { unsigned long long z = 0; for (int r = 0; r < W; r++) z = std::max(z, hp[l * W + r]); lvl.push_back((double)(z - t0)); }
  auto pct = [](std::vector<double> v, double f) { if (v.empty()) return 0.0; std::sort(v.begin(), v.end()); return v[(size_t)(f * (v.size() - 1))]; };
  printf("ld=%d L=%d W=%d k=%d mode=%c wpsm=%d: median %.1f us (%.3f us/level); traced run levels done at %.1f us; timer res %llu ns\n",
         ld, L, W, k, mode, wpsm, times[times.size() / 2], times[times.size() / 2] / L, lvl.back() / 1000, res);
  printf("  delay after last dep (ns): p10 %.0f p50 %.0f p90 %.0f p99 %.0f max %.0f; rounds/row %.2f\n",
         pct(delay, .1), pct(delay, .5), pct(delay, .9), pct(delay, .99), pct(delay, 1), (double)rsum / delay.size());
  printf("  warp started after its last dep: %.2f%% of rows (p50 %.0f ns); lane spread of a chunk's publications (ns): p50 %.0f p90 %.0f max %.0f\n",
         100.0 * latecount / delay.size(), pct(late, .5), pct(spread, .5), pct(spread, .9), pct(spread, 1));
  // level-to-level increments
  std::vector<double> inc; for (int l = 1; l < L; l++) inc.push_back(lvl[l] - lvl[l - 1]);
  printf("  level completion increments (ns): p10 %.0f p50 %.0f p90 %.0f\n", pct(inc, .1), pct(inc, .5), pct(inc, .9));
  return 0;
}
