#include <cstdio>
#include <chrono>
#include <cuda_runtime.h>
static double now() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char **argv)
{
  double t = now(); cudaFree(0); printf("context %.2f ms\n", now() - t);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  size_t sz[] = {4u << 20, 40u << 20, 160u << 20};
  void *p[8];
  for (int k = 0; k < 3; ++k) {
    t = now(); for (int i = 0; i < 4; ++i) cudaMalloc(&p[i], sz[k]); double a = now() - t;
    t = now(); for (int i = 0; i < 4; ++i) cudaFree(p[i]); double f = now() - t;
    printf("cudaMalloc %4zu MB: %.3f ms per alloc, cudaFree %.3f ms per free\n", sz[k] >> 20, a / 4, f / 4);
  }
  int mode = argc > 1 ? atoi(argv[1]) : 0;
  cudaMemPool_t pool;
  if (mode == 0) cudaDeviceGetDefaultMemPool(&pool, 0);
  else { cudaMemPoolProps pr = {}; pr.allocType = cudaMemAllocationTypePinned; pr.location.type = cudaMemLocationTypeDevice; pr.location.id = 0; cudaMemPoolCreate(&pool, &pr); }
  unsigned long long keep = 4ull << 30; cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  for (int round = 0; round < 3; ++round)
    for (int k = 0; k < 3; ++k) {
      t = now(); for (int i = 0; i < 4; ++i) cudaMallocFromPoolAsync(&p[i], sz[k], pool, s); cudaStreamSynchronize(s); double a = now() - t;
      t = now(); for (int i = 0; i < 4; ++i) cudaFreeAsync(p[i], s); cudaStreamSynchronize(s); double f = now() - t;
      printf("%s pool round %d %4zu MB: %.3f ms per alloc, %.3f per free (%s)\n", mode ? "own" : "default", round, sz[k] >> 20, a / 4, f / 4, cudaGetErrorString(cudaGetLastError()));
    }
  return 0;
}
