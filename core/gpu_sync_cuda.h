/* Memory accesses at device (GPU) scope for the sync-free kernels (triangular solves, level analysis,
 * GPU factorization): relaxed loads and stores for values other blocks poll, acquire loads and release
 * stores for ready flags. They bypass the non-coherent L1, so a value stored by another SM is seen as
 * soon as it reaches L2; acquire/release order the data published before a flag. Only for *_cuda.cu. */
#ifndef GS_GPU_SYNC_CUDA_H
#define GS_GPU_SYNC_CUDA_H

static __device__ __forceinline__ long long gs_gpu_ld_relaxed(const long long *p)
{
    long long v;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void gs_gpu_st_relaxed(long long *p, long long v)
{
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

static __device__ __forceinline__ int gs_gpu_ld_relaxed(const int *p)
{
    int v;
    asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void gs_gpu_st_relaxed(int *p, int v)
{
    asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

static __device__ __forceinline__ unsigned gs_gpu_ld_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ int gs_gpu_ld_acquire(const int *p)
{
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

static __device__ __forceinline__ void gs_gpu_st_release(unsigned *p, unsigned v)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

static __device__ __forceinline__ void gs_gpu_st_release(int *p, int v)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

#endif
