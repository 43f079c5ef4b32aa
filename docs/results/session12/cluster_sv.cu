// Prototype: level-synchronous lower triangular solve inside ONE thread-block cluster.
// Values move by st.async into the consumer CTA's shared-memory ring, counted on a per-level mbarrier;
// a relaxed cluster barrier per level bounds the skew (ring reuse, two mbarriers).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t e_ = (x); if (e_) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)

__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned mapa(unsigned a, unsigned r) { unsigned d; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(r)); return d; }

struct Plan {
  int n, L, C, T, WR, K, P, tok;
  int *base;        // [L*C] first position of (level, rank)
  int *cnt;         // [L*C]
  int *ebytes;      // [L*C] bytes pushed to rank during level
  int *slot;        // [K*n] window slot of each entry (WR = dummy zero)
  double *val;      // [K*n]
  int *push;        // [P*n] rank<<24 | slot, -1 = none
  double *dinv;     // [n]
  int *perm;        // [n] position -> row
};

template <int K, int P, int TM>
__global__ void __launch_bounds__(TM, 1) cl_solve(Plan pl, const double *b, double *x)
{
  extern __shared__ double win[];  // WR + 1 doubles
  __shared__ alignas(8) unsigned long long mbar[2];
  __shared__ alignas(8) unsigned long long tokw[64];
  cg::cluster_group cl = cg::this_cluster();
  const unsigned rank = cl.block_rank();
  const int t = threadIdx.x, n = pl.n, C = pl.C;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&mbar[0])));
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&mbar[1])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (t == 0) win[pl.WR] = 0.0;
  int *lv = (int *)(win + pl.WR + 1);  // [3 * L]: cnt, base, ebytes of this rank
  for (int l = t; l < pl.L; l += blockDim.x) { lv[l] = pl.cnt[l * C + rank]; lv[pl.L + l] = pl.base[l * C + rank]; lv[2 * pl.L + l] = pl.ebytes[l * C + rank]; }
  __syncthreads();
  if (t == 0) {
    unsigned eb = lv[2 * pl.L];
    asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }" :: "r"(smem_u32(&mbar[0])), "r"(eb) : "memory");
  }
  cl.sync();
  const unsigned win0 = smem_u32(win), mb0 = smem_u32(&mbar[0]);
  // row data of the current level, loaded one level ahead
  int s[K]; double v[K]; int pu[P]; double bi = 0, di = 0; int row = -1;
  auto load = [&](int l, int *s_, double *v_, int *pu_, double &bi_, double &di_, int &row_) {
    int c = lv[l];
    row_ = -1;
    if (pl.T < 0) {  // synthetic: c rows per rank, pushes to self and the next rank
      c = -pl.T;
      if (t < c) {
        int h = (l & 1) * 2 * c;
#pragma unroll
        for (int k = 0; k < K; ++k) { s_[k] = ((l + 1) & 1) * 2 * c + (t + k) % (2 * c); v_[k] = 0.01; }
#pragma unroll
        for (int k = 0; k < P; ++k) pu_[k] = -1;
        pu_[0] = (rank << 24) | (h + t);
        if (P > 1) pu_[1] = (((rank + 1) % C) << 24) | (h + c + t);
        row_ = rank * c + t; bi_ = 1.0; di_ = 0.5;
      }
      return;
    }
    if (t < c) {
      int p = lv[pl.L + l] + t;
#pragma unroll
      for (int k = 0; k < K; ++k) { s_[k] = pl.slot[(size_t)k * n + p]; v_[k] = pl.val[(size_t)k * n + p]; }
#pragma unroll
      for (int k = 0; k < P; ++k) pu_[k] = pl.push[(size_t)k * n + p];
      row_ = pl.perm[p]; bi_ = b[row_]; di_ = pl.dinv[p];
    }
  };
  load(0, s, v, pu, bi, di, row);
  for (int l = 0; l < pl.L; ++l) {
    int s2[K]; double v2[K]; int pu2[P]; double bi2 = 0, di2 = 0; int row2 = -1;
    if (l + 1 < pl.L) load(l + 1, s2, v2, pu2, bi2, di2, row2);
    if (l > 0) {
      unsigned par = ((l - 1) >> 1) & 1, addr = mb0 + 8 * ((l - 1) & 1), done = 0;
      do asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(addr), "r"(par) : "memory");
      while (!done);
    }
    if (row >= 0) {
      double sum = bi;
#pragma unroll
      for (int k = 0; k < K; ++k) sum -= v[k] * win[s[k]];
      double xi = sum * di;
      x[row] = xi;
#pragma unroll
      for (int k = 0; k < P; ++k) if (pu[k] >= 0) {
        unsigned r = (unsigned)pu[k] >> 24, sl = pu[k] & 0xffffff;
        unsigned ra = mapa(win0 + 8 * sl, r), rm = mapa(mb0 + 8 * (l & 1), r);
        unsigned long long bits = __double_as_longlong(xi);
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u64 [%0], %1, [%2];" :: "r"(ra), "l"(bits), "r"(rm) : "memory");
      }
    }
    if (t == 0 && l + 1 < pl.L) {
      unsigned eb = lv[2 * pl.L + l + 1];
      asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }" :: "r"(mb0 + 8 * ((l + 1) & 1)), "r"(eb) : "memory");
    }
    if (pl.tok) {
      __syncthreads();
      if (t < C && l + 1 < pl.L) {
        unsigned ra = mapa(smem_u32(&tokw[(l & 1) * 16 + rank]), t), rm = mapa(mb0 + 8 * (l & 1), t);
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u64 [%0], %1, [%2];" :: "r"(ra), "l"(1ull), "r"(rm) : "memory");
      }
    } else {
      asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
      asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    }
#pragma unroll
    for (int k = 0; k < K; ++k) { s[k] = s2[k]; v[k] = v2[k]; }
#pragma unroll
    for (int k = 0; k < P; ++k) pu[k] = pu2[k];
    bi = bi2; di = di2; row = row2;
  }
  cl.sync();
}

// ---- host: matrices and the plan ----
struct CSR { int n; std::vector<int> rp, ci; std::vector<double> v; };  // strictly lower part + diag separately
static CSR gen(const char *g, int m, std::vector<double> &diag)
{
  CSR A; int n;
  std::vector<int> rp(1, 0), ci; std::vector<double> vv;
  if (!strcmp(g, "poisson3d") || !strcmp(g, "laplace27")) {
    n = m * m * m; bool f27 = !strcmp(g, "laplace27");
    for (int k = 0; k < m; ++k) for (int j = 0; j < m; ++j) for (int i = 0; i < m; ++i) {
      int r = (k * m + j) * m + i;
      for (int dk = -1; dk <= 1; ++dk) for (int dj = -1; dj <= 1; ++dj) for (int di = -1; di <= 1; ++di) {
        int nz = (dk != 0) + (dj != 0) + (di != 0);
        if (nz == 0 || (!f27 && nz > 1)) continue;
        int ii = i + di, jj = j + dj, kk = k + dk;
        if (ii < 0 || jj < 0 || kk < 0 || ii >= m || jj >= m || kk >= m) continue;
        int c = (kk * m + jj) * m + ii;
        if (c < r) { ci.push_back(c); vv.push_back(-1.0 / (f27 ? 14 : 4)); }
      }
      rp.push_back((int)ci.size());
    }
  } else {
    n = m * m;
    for (int j = 0; j < m; ++j) for (int i = 0; i < m; ++i) {
      int r = j * m + i;
      if (j > 0) { ci.push_back(r - m); vv.push_back(-0.3); }
      if (i > 0) { ci.push_back(r - 1); vv.push_back(-0.3); }
      rp.push_back((int)ci.size());
    }
  }
  A.n = n; A.rp = rp; A.ci = ci; A.v = vv;
  diag.assign(n, 1.0);
  for (int r = 0; r < n; ++r) diag[r] = 1.0 + 0.001 * (r % 7);
  return A;
}

int main(int argc, char **argv)
{
  const char *g = argc > 1 ? argv[1] : "poisson3d";
  int m = argc > 2 ? atoi(argv[2]) : 100;
  int C = argc > 3 ? atoi(argv[3]) : 16;
  int T = argc > 4 ? atoi(argv[4]) : 1024;
  int reps = argc > 5 ? atoi(argv[5]) : 50;
  int synth = argc > 6 ? atoi(argv[6]) : 0;
  int tok = argc > 7 ? atoi(argv[7]) : 0;  // rows per rank per level, synthetic protocol floor
  std::vector<double> diag;
  CSR A = gen(g, m, diag);
  int n = A.n;
  // levels
  std::vector<int> lev(n, 0); int L = 0;
  for (int r = 0; r < n; ++r) { int l = 0; for (int e = A.rp[r]; e < A.rp[r + 1]; ++e) l = std::max(l, lev[A.ci[e]] + 1); lev[r] = l; L = std::max(L, l + 1); }
  std::vector<int> lcount(L + 1, 0); for (int r = 0; r < n; ++r) lcount[lev[r] + 1]++;
  for (int l = 0; l < L; ++l) lcount[l + 1] += lcount[l];
  std::vector<int> perm(n), pos(n); { std::vector<int> fill(lcount.begin(), lcount.end() - 1); for (int r = 0; r < n; ++r) { pos[r] = fill[lev[r]]++; perm[pos[r]] = r; } }
  int maxw = 0; for (int l = 0; l < L; ++l) maxw = std::max(maxw, lcount[l + 1] - lcount[l]);
  // ranks: contiguous chunks of each level
  std::vector<int> base(L * C), cnt(L * C), rk(n);
  for (int l = 0; l < L; ++l) { int w = lcount[l + 1] - lcount[l];
    for (int r = 0; r < C; ++r) { int a = (int)((long)w * r / C), b2 = (int)((long)w * (r + 1) / C); base[l * C + r] = lcount[l] + a; cnt[l * C + r] = b2 - a;
      for (int p = lcount[l] + a; p < lcount[l] + b2; ++p) rk[p] = r; } }
  int maxc = *std::max_element(cnt.begin(), cnt.end());
  if (maxc > T) { printf("a level chunk of %d rows > T = %d\n", maxc, T); return 1; }
  // consumers of each position: ranks of rows that read it; last level read per (pos, rank)
  int K = 0; for (int r = 0; r < n; ++r) K = std::max(K, A.rp[r + 1] - A.rp[r]);
  std::vector<std::vector<std::pair<int,int>>> cons(n);  // (rank, last read level)
  for (int p = 0; p < n; ++p) { int r = perm[p];
    for (int e = A.rp[r]; e < A.rp[r + 1]; ++e) { int q = pos[A.ci[e]]; bool f = false;
      for (auto &c : cons[q]) if (c.first == rk[p]) { c.second = std::max(c.second, lev[r]); f = true; }
      if (!f) cons[q].push_back({rk[p], lev[r]}); } }
  int P = 0; for (int q = 0; q < n; ++q) P = std::max(P, (int)cons[q].size());
  // window slots: round robin per rank in production order, checked against the last read
  int WR = 48 * 1024 / 2 * 3 / 2;  // doubles (~144 KB)... adjust below
  WR = 18000;
  std::vector<int> ctr(C, 0); std::vector<std::vector<int>> lastread(C, std::vector<int>(WR, -1));
  std::vector<std::vector<int>> slotof(n);  // parallel to cons
  std::vector<int> eb(L * C, 0);
  for (int q = 0; q < n; ++q) { int lq = lev[perm[q]];
    for (auto &c : cons[q]) { int r = c.first, sl = ctr[r]++ % WR;
      if (lastread[r][sl] > lq - 1) { printf("window of %d too small (rank %d, level %d)\n", WR, r, lq); return 1; }
      lastread[r][sl] = c.second; slotof[q].push_back(sl); eb[lq * C + r] += 8; } }
  std::vector<int> hslot((size_t)K * n, WR), hpush((size_t)P * n, -1); std::vector<double> hval((size_t)K * n, 0.0), hdinv(n);
  for (int p = 0; p < n; ++p) { int r = perm[p], k = 0;
    for (int e = A.rp[r]; e < A.rp[r + 1]; ++e, ++k) { int q = pos[A.ci[e]]; int sl = -1;
      for (size_t c = 0; c < cons[q].size(); ++c) if (cons[q][c].first == rk[p]) sl = slotof[q][c];
      hslot[(size_t)k * n + p] = sl; hval[(size_t)k * n + p] = A.v[e]; }
    hdinv[p] = 1.0 / diag[r];
    for (size_t c = 0; c < cons[p].size(); ++c) hpush[c * n + p] = (cons[p][c].first << 24) | slotof[p][c]; }
  double avgp = 0; for (int q = 0; q < n; ++q) avgp += cons[q].size(); avgp /= n;
  printf("%s m=%d n=%d levels=%d maxwidth=%d K=%d P=%d (avg %.2f) C=%d T=%d WR=%d\n", g, m, n, L, maxw, K, P, avgp, C, T, WR);
  // reference
  std::vector<double> b(n), xr(n);
  for (int i = 0; i < n; ++i) b[i] = 1.0 + (i % 13) * 0.1;
  for (int r = 0; r < n; ++r) { double s = b[r]; for (int e = A.rp[r]; e < A.rp[r + 1]; ++e) s -= A.v[e] * xr[A.ci[e]]; xr[r] = s / diag[r]; }
  // device
  Plan pl; pl.n = n; pl.L = L; pl.C = C; pl.T = T; pl.WR = WR; pl.K = K; pl.P = P;
  auto up = [](auto &vec, auto **d) { CK(cudaMalloc(d, vec.size() * sizeof(vec[0]))); CK(cudaMemcpy(*d, vec.data(), vec.size() * sizeof(vec[0]), cudaMemcpyHostToDevice)); };
  up(base, &pl.base); up(cnt, &pl.cnt); up(eb, &pl.ebytes); up(hslot, &pl.slot); up(hval, &pl.val); up(hpush, &pl.push); up(hdinv, &pl.dinv); up(perm, &pl.perm);
  if (synth) { pl.T = -synth; std::vector<int> e2(L * C, 16 * synth + (tok ? 8 * C : 0)); CK(cudaMemcpy(pl.ebytes, e2.data(), L * C * 4, cudaMemcpyHostToDevice)); pl.WR = 4 * synth; }
  pl.tok = tok;
  if (tok && !synth) for (auto &e : eb) e += 8 * C;
  if (tok && !synth) CK(cudaMemcpy(pl.ebytes, eb.data(), L * C * 4, cudaMemcpyHostToDevice));
  double *db, *dx; up(b, &db); CK(cudaMalloc(&dx, n * 8));
  void (*kern)(Plan, const double *, double *) = nullptr;
  if (K <= 2 && P <= 2) kern = cl_solve<2, 2, 1024>;
  else if (K <= 3 && P <= 3) kern = cl_solve<3, 3, 1024>;
  else if (K <= 3 && P <= 4) kern = cl_solve<3, 4, 1024>;
  else if (K <= 13 && P <= 8 && T <= 256) kern = cl_solve<13, 8, 256>;
  else { printf("no instance for K=%d P=%d\n", K, P); return 1; }
  size_t smem = (WR + 1) * 8 + 12 * (size_t)L;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  cudaLaunchConfig_t cfg = {}; cfg.gridDim = dim3(C); cfg.blockDim = dim3(T); cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeClusterDimension; at[0].val.clusterDim.x = C; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
  cfg.attrs = at; cfg.numAttrs = 1;
  CK(cudaMemset(dx, 0xff, n * 8));
  CK(cudaLaunchKernelEx(&cfg, kern, pl, (const double *)db, dx)); CK(cudaDeviceSynchronize());
  std::vector<double> xg(n); CK(cudaMemcpy(xg.data(), dx, n * 8, cudaMemcpyDeviceToHost));
  double err = 0, nr = 0; for (int i = 0; i < n; ++i) { err = std::max(err, fabs(xg[i] - xr[i])); nr = std::max(nr, fabs(xr[i])); }
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> ts;
  for (int i = 0; i < reps + 5; ++i) { cudaEventRecord(e0); cudaLaunchKernelEx(&cfg, kern, pl, (const double *)db, dx); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); if (i >= 5) ts.push_back(ms); }
  CK(cudaGetLastError());
  std::sort(ts.begin(), ts.end());
  if (synth) printf("SYNTH rows/rank/level %d tok %d: ", synth, tok);
  printf("RESULT %s m=%d C=%d T=%d levels=%d: rel err %.2e, median %.1f us (%.3f us/level), min %.1f\n", g, m, C, T, L, err / nr, ts[ts.size() / 2] * 1e3, ts[ts.size() / 2] * 1e3 / L, ts[0] * 1e3);
  return 0;
}
