/* The cuda backend's private parts, shared by its files (core/backend_cuda.cu: memory, transfers, sparse
 * operators, timers, creation; core/backend_cuda_vec.cu: elementwise kernels, gathers and reductions;
 * core/backend_cuda_mvec.cu: the Krylov-basis products; core/backend_cuda_kstate.cu: the fused CG steps): the backend's state, the grid of the
 * elementwise kernels, the block reduction, and the entry points one file offers the others. Included by
 * those .cu files only. */
#ifndef GS_BACKEND_CUDA_IMPL_H
#define GS_BACKEND_CUDA_IMPL_H

#include <cuda_runtime.h>
#include <cusparse.h>

#include "core/backend.h"
#include "core/mvec_grid.h"
#include "core/spmv_cuda.h"

/* ------------------------------------------------------------------------------------------------ */
/* Backend state.                                                                                    */

#define THREADS 256            /* threads per block of the elementwise kernels and partial sums */
#define RED_MAX_BLOCKS 1024    /* partial sums per reduction (the final stage reduces these) */
#define RED_FINAL_THREADS 1024 /* one block combines the partial sums */
#define RES_CAP_INIT 1024      /* doubles in the result buffer (mdot needs k of them) */
/* doubles in the partial-sum buffer: the reductions' pairs, mdot's row_blocks x k sums */
#define PARTIALS_CAP (2 * RED_MAX_BLOCKS > GS_MDOT_PARTIAL_CAP ? 2 * RED_MAX_BLOCKS : GS_MDOT_PARTIAL_CAP)

enum { MAP_GATHER = 1, MAP_SCATTER = 2 };

/* First invalid index met by a gather/scatter kernel; pos == -1 when none. Lives at the start of the
 * result buffer so that it comes back with every reduction result in the same copy. */
typedef struct {
    int pos, index, len, op;
} map_flag;

#define RES_HEADER 16 /* bytes before the result doubles: sizeof(map_flag), keeps them 8-aligned */
static_assert(sizeof(map_flag) == RES_HEADER, "the result doubles start right after the map flag");

/* Work space blocks (gs_backend_cuda_work_alloc): `live` are handed out, `idle` were given back and wait
 * for reuse; held_bytes = the idle ones' bytes. */
typedef struct {
    void *ptr;
    size_t bytes;
} work_block;

#define WORK_IDLE_MAX 64 /* idle blocks kept at most */

typedef struct {
    work_block *live; /* cap_live entries, nlive used */
    work_block idle[WORK_IDLE_MAX]; /* oldest first */
    int nlive, cap_live, nidle;
    size_t held_bytes, held_cap;
} work_cache;

typedef struct {
    int sm_count;
    bool spmv_own;              /* SpMV by our kernels (else cuSPARSE with spmv_alg) */
    gs_spmv_params spmv_prm;    /* forced shape of our kernels (zeros: chosen per matrix) */
    cusparseSpMVAlg_t spmv_alg;
    char spmv_mode[64];         /* the mode string, as selected */
    char gpu_name[128];         /* device name without the SpMV suffix */
    cudaStream_t stream;
    cusparseHandle_t cusparse;
    double *partials;    /* device, PARTIALS_CAP */
    char *res_dev;       /* device: map_flag + res_cap doubles */
    char *res_host;      /* pinned mirror */
    gs_int res_cap;
    work_cache work;        /* stream-ordered work space kept for reuse (gs_backend_cuda_work_alloc) */
    bool analysis_pool;     /* analysis work space from cudaMallocAsync's pool (gs_backend_cuda_set_analysis_pool) */
    gs_mem_track *mem;      /* the backend's allocation accounting (gs_backend.mem) */
} cuda_ctx;

typedef struct {
    gs_int *rowptr, *colind;
    double *val;
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vx, vy; /* re-pointed at each call (no allocation in spmv) */
    void *buffer;
    bool empty; /* no rows, no columns or no entries: y = beta y without cuSPARSE */
    gs_spmv_plan *own; /* our kernels (then no cuSPARSE descriptors) */
    char desc[48];     /* which cuSPARSE algorithm, for gs_mat_cuda_spmv_describe */
    gs_backend *be;    /* whose allocations the arrays are (their accounting) */
} cuda_mat;

static inline cuda_ctx *ctx_of(const gs_backend *be) { return (cuda_ctx *)be->impl; }
static inline double *res_values(char *res) { return (double *)(res + RES_HEADER); }

static inline unsigned grid_for(const cuda_ctx *c, gs_int n)
{
    long long b = ((long long)n + THREADS - 1) / THREADS;
    long long cap = (long long)c->sm_count * 16; /* enough resident blocks to saturate memory */
    if (b > cap) b = cap;
    return (unsigned)(b < 1 ? 1 : b);
}

/* Grid-stride loop of the elementwise kernels (64-bit index so i + stride cannot overflow). */
#define GRID_STRIDE(i, n)                                                                     \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (long long)(n);    \
         i += (long long)gridDim.x * blockDim.x)

/* ------------------------------------------------------------------------------------------------ */
/* Reductions: stage 1 gives each block a pair of partial results (s0, s1); stage 2, one block,      */
/* combines them. The order of summation depends only on n, so results are reproducible.            */

enum { RED_DOT, RED_DOT2, RED_SSQ, RED_SSQ_SCALED, RED_AMAX };

/* s0 combines by max for RED_AMAX (s1 then counts non-finite entries), by + otherwise */
template <int MODE> static __device__ double combine0(double a, double b)
{
    return MODE == RED_AMAX ? fmax(a, b) : a + b;
}

/* Block-wide reduction of (s0, s1); the result is valid in thread 0. */
template <int MODE> static __device__ void block_reduce(double &s0, double &s1)
{
    __shared__ double sh0[32], sh1[32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    for (int off = 16; off > 0; off >>= 1) {
        s0 = combine0<MODE>(s0, __shfl_down_sync(0xffffffffu, s0, off));
        s1 += __shfl_down_sync(0xffffffffu, s1, off);
    }
    if (lane == 0) {
        sh0[warp] = s0;
        sh1[warp] = s1;
    }
    __syncthreads();
    if (warp == 0) {
        const unsigned nwarps = (blockDim.x + 31u) >> 5;
        /* 0 is the identity of both + and max over absolute values */
        s0 = lane < nwarps ? sh0[lane] : 0.0;
        s1 = lane < nwarps ? sh1[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1) {
            s0 = combine0<MODE>(s0, __shfl_down_sync(0xffffffffu, s0, off));
            s1 += __shfl_down_sync(0xffffffffu, s1, off);
        }
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Entry points between the backend's files.                                                        */

/* backend_cuda.cu: device allocation (retried after the idle work space and the default pool are given
 * back), free; the map flag and m result doubles to the host (a pending bad index reported); y = alpha A x
 * + beta y. */
gs_status gs_cuda_be_alloc(gs_backend *be, void **p, size_t bytes);
void gs_cuda_be_free(gs_backend *be, void *p);
gs_status gs_cuda_be_fetch_results(cuda_ctx *c, gs_int m, double *out);
gs_status gs_cuda_be_spmv(double alpha, const gs_matrix *A, const gs_vector *x, double beta, gs_vector *y);

/* backend_cuda_vec.cu: x[0..n) *= a on the stream; the vector ops of the ops table. */
gs_status gs_cuda_be_scale_n(cuda_ctx *c, gs_int n, double a, double *x);
gs_status gs_cuda_be_set(gs_vector *x, double alpha);
gs_status gs_cuda_be_scale(gs_vector *x, double alpha);
gs_status gs_cuda_be_axpy(double alpha, const gs_vector *x, gs_vector *y);
gs_status gs_cuda_be_axpby(double alpha, const gs_vector *x, double beta, gs_vector *y);
gs_status gs_cuda_be_axpbypcz(double a, const gs_vector *x, double b, const gs_vector *y, double cz, gs_vector *z);
gs_status gs_cuda_be_pointwise_mult(const gs_vector *x, const gs_vector *y, gs_vector *z);
gs_status gs_cuda_be_dot(const gs_vector *x, const gs_vector *y, double *result);
gs_status gs_cuda_be_dot2(const gs_vector *x, const gs_vector *y, const gs_vector *u, const gs_vector *v,
                          double result[2]);
gs_status gs_cuda_be_nrm2(const gs_vector *x, double *result);
gs_status gs_cuda_be_gather(const gs_vector *x, const gs_ivec *idx, gs_vector *y);
gs_status gs_cuda_be_scatter(const gs_vector *x, const gs_ivec *idx, gs_vector *y);

/* backend_cuda_mvec.cu: h = V(:,0:k)' w and y = alpha V(:,0:k) h + beta y. */
gs_status gs_cuda_be_mdot(const gs_mvec *V, gs_int k, const gs_vector *w, double *h);
gs_status gs_cuda_be_mgemv(double alpha, const gs_mvec *V, gs_int k, const double *h, double beta, gs_vector *y);
gs_status gs_cuda_be_mdot2(const gs_mvec *V, gs_int k, const gs_vector *x, const gs_vector *y, double *h);
gs_status gs_cuda_be_mgemv2(const gs_mvec *V, gs_int k, const double *p, double a, gs_vector *x, const double *q,
                            double b, double d, gs_vector *y);

/* backend_cuda_kstate.cu: the fused CG's state and steps. */
gs_status gs_cuda_be_ks_create(gs_backend *be, gs_kstate *ks);
void gs_cuda_be_ks_destroy(gs_kstate *ks);
gs_status gs_cuda_be_ks_begin(gs_kstate *ks, int it, const gs_ks_start *start);
gs_status gs_cuda_be_cg_pq(gs_kstate *ks, int it, const gs_vector *p, const gs_vector *q);
gs_status gs_cuda_be_cg_spmv_pq(gs_kstate *ks, int it, const gs_matrix *A, const gs_vector *p, gs_vector *q);
gs_status gs_cuda_be_cg_update(gs_kstate *ks, int it, gs_vector *x, gs_vector *r, const gs_vector *p,
                               const gs_vector *q, bool rz_is_rr);
gs_status gs_cuda_be_cg_rz(gs_kstate *ks, int it, const gs_vector *r, const gs_vector *z);
gs_status gs_cuda_be_cg_direction(gs_kstate *ks, int it, const gs_vector *z, gs_vector *p);
gs_status gs_cuda_be_ks_mark(gs_kstate *ks, int it);
gs_status gs_cuda_be_ks_record(gs_kstate *ks, int it, gs_krec *rec);

#endif
