// Probe: cost of one level step inside a thread-block cluster on Hopper.
// mode 0: barrier only; 1: barrier + dependent global (L2) read of a value another CTA wrote;
// 2: barrier + dependent DSMEM read of a value another CTA wrote; 3: like 1 with k reads.
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ void carrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cwait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

__global__ void probe(int iters, int mode, int k, double *buf, int n, unsigned long long *out)
{
  cg::cluster_group cl = cg::this_cluster();
  __shared__ double win[2][1024];
  unsigned rank = cl.block_rank();
  unsigned C = cl.num_blocks();
  int t = threadIdx.x;
  int gid = rank * blockDim.x + t;
  int tot = C * blockDim.x;
  double v = 1.0;
  win[0][t] = 1.0; win[1][t] = 1.0;
  buf[gid] = 1.0; buf[n + gid] = 1.0;
  cl.sync();
  unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (int it = 0; it < iters; ++it) {
    int cur = it & 1, nxt = cur ^ 1;
    if (mode == 1 || mode == 3) {
      double s = 0;
      for (int j = 0; j < k; ++j) {
        int src = (gid + (j + 1) * blockDim.x + 7) % tot;   // another CTA
        s += __ldcg(&buf[cur * n + src]);
      }
      v = s * 0.5 + 1.0;
      buf[nxt * n + gid] = v;
    } else if (mode == 2) {
      double s = 0;
      for (int j = 0; j < k; ++j) {
        unsigned r = (rank + 1 + j) % C;
        double *rw = cl.map_shared_rank(&win[cur][0], r);
        s += rw[(t + 7 * j) % blockDim.x];
      }
      v = s * 0.5 + 1.0;
      win[nxt][t] = v;
    }
    carrive();
    cwait();
  }
  unsigned long long t1; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (t == 0 && rank == 0) out[0] = t1 - t0;
  if (v == 12345.0) out[1] = 1;
}

int main()
{
  double *buf; unsigned long long *out;
  int n = 16 * 1024;
  cudaMalloc(&buf, 2 * n * sizeof(double));
  cudaMalloc(&out, 2 * sizeof(unsigned long long));
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  int iters = 20000;
  printf("clock %d kHz; ns per level step (clock64 of CTA 0, %d steps)\n", clk, iters);
  printf("%4s %5s %-22s %s\n", "C", "T", "mode", "ns/step");
  const char *names[] = {"barrier", "barrier+L2 read(s)", "barrier+DSMEM read(s)", "barrier+L2 reads"};
  int Cs[] = {1, 2, 4, 8, 16};
  int Ts[] = {128, 1024};
  for (int ci = 0; ci < 5; ++ci)
    for (int ti = 0; ti < 2; ++ti)
      for (int mode = 0; mode < 3; ++mode)
        for (int k = 1; k <= (mode ? 8 : 1); k *= (mode ? 8 : 2)) {
          int C = Cs[ci], T = Ts[ti];
          cudaLaunchConfig_t cfg = {};
          cfg.gridDim = dim3(C); cfg.blockDim = dim3(T);
          cudaLaunchAttribute at[1];
          at[0].id = cudaLaunchAttributeClusterDimension;
          at[0].val.clusterDim.x = C; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
          cfg.attrs = at; cfg.numAttrs = 1;
          cudaError_t e = cudaLaunchKernelEx(&cfg, probe, 200, mode, k, buf, n, out);
          e = e ? e : cudaDeviceSynchronize();
          e = e ? e : cudaLaunchKernelEx(&cfg, probe, iters, mode, k, buf, n, out);
          e = e ? e : cudaDeviceSynchronize();
          unsigned long long cyc = 0;
          cudaMemcpy(&cyc, out, sizeof cyc, cudaMemcpyDeviceToHost);
          if (e) { printf("%4d %5d %-22s k=%d error %s\n", C, T, names[mode], k, cudaGetErrorString(e)); cudaGetLastError(); continue; }
          printf("%4d %5d %-22s k=%d %8.1f\n", C, T, names[mode], k, cyc / (double)iters);
        }
  return 0;
}
