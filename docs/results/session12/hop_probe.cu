// Probe: one producer->consumer hop between two CTAs of a cluster (ping-pong, 2 hops per round).
// mode 0: global flag (st.release.gpu / ld.acquire.gpu polling)
// mode 1: remote shared store (st.relaxed.cluster after fence? -> st.release.cluster) into the peer's smem, local polling ld.acquire.cluster
// mode 2: st.async with mbarrier complete_tx into peer smem, local mbarrier try_wait
// mode 3: global flag, relaxed.gpu store/poll (value is the flag)
// also: cluster barrier with relaxed arrive (mode 4), __syncthreads loop (mode 5, one CTA)
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ unsigned long long gtime() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned mapa(unsigned a, unsigned r) { unsigned d; asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(r)); return d; }

__global__ void hop(int iters, int mode, unsigned long long *g, unsigned long long *out)
{
  cg::cluster_group cl = cg::this_cluster();
  __shared__ alignas(8) unsigned long long slot[2];
  __shared__ alignas(8) unsigned long long mbar;
  unsigned rank = cl.block_rank();
  unsigned peer = rank ^ 1;
  int t = threadIdx.x;
  if (t == 0) {
    slot[0] = slot[1] = 0;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&mbar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (t == 0 && rank == 0) { g[0] = 0; g[1] = 0; __threadfence(); }
  cl.sync();
  unsigned long long t0 = gtime();
  if (mode == 4) {
    for (int it = 0; it < iters; ++it) {
      asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
      asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    }
  } else if (mode == 5) {
    for (int it = 0; it < iters; ++it) __syncthreads();
  } else if (t == 0) {
    unsigned remote_slot = mapa(smem_u32(&slot[0]), peer);
    unsigned remote_mbar = mapa(smem_u32(&mbar), peer);
    for (int it = 1; it <= iters; ++it) {
      // rank 0 sends odd values, rank 1 even; a rank sends value it after seeing it-1 from peer
      bool mine = ((it & 1) == 1) == (rank == 0);
      if (mine) {
        unsigned long long v = it;
        if (mode == 0) asm volatile("st.release.gpu.global.u64 [%0], %1;" :: "l"(&g[0]), "l"(v) : "memory");
        else if (mode == 3) asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(&g[0]), "l"(v) : "memory");
        else if (mode == 1) asm volatile("st.release.cluster.shared::cluster.u64 [%0], %1;" :: "r"(remote_slot), "l"(v) : "memory");
        else if (mode == 2) asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u64 [%0], %1, [%2];" :: "r"(remote_slot), "l"(v), "r"(remote_mbar) : "memory");
      } else {
        unsigned long long v = 0;
        if (mode == 0) { do asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(&g[0]) : "memory"); while (v != (unsigned long long)it); }
        else if (mode == 3) { do asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(&g[0]) : "memory"); while (v != (unsigned long long)it); }
        else if (mode == 1) { do asm volatile("ld.acquire.cluster.shared::cta.u64 %0, [%1];" : "=l"(v) : "r"(smem_u32(&slot[0])) : "memory"); while (v != (unsigned long long)it); }
        else if (mode == 2) {
          // phase parity: this CTA receives every other value; k-th receive uses parity (k&1)
          int k = (it - 1) / 2;
          unsigned par = k & 1;
          asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], 8; }" :: "r"(smem_u32(&mbar)) : "memory");
          unsigned done = 0;
          do asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(smem_u32(&mbar)), "r"(par) : "memory");
          while (!done);
          v = slot[0];
          if (v != (unsigned long long)it) out[2] = it;
        }
      }
    }
  }
  unsigned long long t1 = gtime();
  if (t == 0 && rank == 0) out[0] = t1 - t0;
}

int main()
{
  unsigned long long *g, *out;
  cudaMalloc(&g, 64); cudaMalloc(&out, 64); cudaMemset(out, 0, 64);
  cudaFuncSetAttribute(hop, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  const char *names[] = {"global release/acquire", "dsmem st.release + local poll", "st.async + mbarrier", "global relaxed", "cluster barrier relaxed arrive", "__syncthreads"};
  int iters = 20000;
  for (int mode = 0; mode < 6; ++mode) for (int T = 32; T <= 1024; T *= 32) {
    int C = mode == 5 ? 1 : 2;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(C); cfg.blockDim = dim3(T);
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = C; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    cudaError_t e = cudaLaunchKernelEx(&cfg, hop, 100, mode, g, out);
    e = e ? e : cudaDeviceSynchronize();
    e = e ? e : cudaLaunchKernelEx(&cfg, hop, iters, mode, g, out);
    e = e ? e : cudaDeviceSynchronize();
    unsigned long long r[3] = {0, 0, 0};
    cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
    double per = (mode >= 4) ? r[0] / (double)iters : r[0] / (double)iters;
    printf("%-32s T=%4d %s ns per %s: %.1f  (bad %llu)\n", names[mode], T, e ? cudaGetErrorString(e) : "ok",
           mode >= 4 ? "barrier" : "hop", per, r[2]);
  }
  return 0;
}
