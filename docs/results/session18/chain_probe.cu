// Chain step probe (session 18, docs/notes-trisolve.md version 20): one block walks L levels of W rows, row p reads
// p-W and p-W+1; x through L2 or a shared-memory ring, with or without the global store, or flushed by bulk copies.
// Build/run on the H100: nvcc -O3 -arch=sm_90 -std=c++17 -o cp chain_probe.cu && ./cp W L
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>
#include <algorithm>
#define T 1024
#define R 4096
template <int MODE>
__global__ void __launch_bounds__(T, 1) chain(int L, int W, const double *__restrict__ b, double *x, double a)
{
    __shared__ __align__(16) double ring[R];
    int t = threadIdx.x;
    int p = t;
    for (int l = 0; l < L; l++, p += W) {
        if (t < W) {
            double s = __ldg(b + p);
            if (l > 0) {
                int c0 = p - W, c1 = p - W + 1;
                double x0, x1;
                if (MODE == 0) { x0 = __ldcg(x + c0); x1 = c1 < p - t + 0 ? __ldcg(x + c1) : 0.0; }
                else { x0 = ring[c0 & (R - 1)]; x1 = c1 < p - t ? ring[c1 & (R - 1)] : 0.0; }
                s -= a * x0;
                s -= a * x1;
            }
            double v = s * 0.5;
            if (MODE >= 1) ring[p & (R - 1)] = v;
            if (MODE <= 1) x[p] = v;
            if (MODE == 3) {} 
        }
        if (MODE == 3 && t == 0 && l > 0) {
            // flush previous level [p0-W, p0)
            int q0 = (l - 1) * W;
            unsigned src = (unsigned)__cvta_generic_to_shared(ring + (q0 & (R - 1)));
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(x + q0), "r"(src), "r"(W * 8) : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            asm volatile("cp.async.bulk.wait_group.read 2;" ::: "memory");
        }
        if (MODE == 4 && t == 0) { }
        __syncthreads();
    }
    if (MODE == 3 && t == 0) {
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}
int main(int argc, char **argv)
{
    int W = argc > 1 ? atoi(argv[1]) : 512, L = argc > 2 ? atoi(argv[2]) : 2048;
    size_t n = (size_t)W * L;
    double *b, *x;
    cudaMalloc(&b, n * 8); cudaMalloc(&x, n * 8);
    std::vector<double> hb(n, 1.0);
    cudaMemcpy(b, hb.data(), n * 8, cudaMemcpyHostToDevice);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    auto run = [&](auto kern, const char *name) {
        std::vector<float> ts;
        for (int r = 0; r < 25; r++) {
            cudaEventRecord(e0);
            kern<<<1, T>>>(L, W, b, x, 0.25);
            cudaEventRecord(e1); cudaEventSynchronize(e1);
            float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 5) ts.push_back(ms);
        }
        std::sort(ts.begin(), ts.end());
        std::vector<double> hx(n); cudaMemcpy(hx.data(), x, n * 8, cudaMemcpyDeviceToHost);
        printf("W=%d L=%d %-28s %8.3f us/level (%.1f us) x[n-1]=%.6g err=%s\n", W, L, name, ts[ts.size()/2] * 1000.0 / L, ts[ts.size()/2]*1000, hx[n-1], cudaGetErrorString(cudaGetLastError()));
        cudaMemset(x, 0, n * 8);
    };
    run(chain<0>, "L2 x, st.global");
    run(chain<1>, "smem ring, st.global");
    run(chain<2>, "smem ring, no global");
    run(chain<3>, "smem ring, bulk flush");
    return 0;
}
