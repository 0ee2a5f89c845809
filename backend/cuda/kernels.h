/* The CUDA kernels of the "cuda" platform, behind a C-style launch API. This header is the only
 * thing nvcc-compiled code (kernels.cu, C++17) and host code (C++20, host compiler) share:
 * no gpumux C++ header crosses it. Every function enqueues on `stream` and returns the
 * cudaError_t of the launch as an int (0 = cudaSuccess); the caller checks it. */
#ifndef GPUMUX_BACKEND_CUDA_KERNELS_H_
#define GPUMUX_BACKEND_CUDA_KERNELS_H_

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st; /* cudaStream_t is struct CUstream_st* */

/* y[r * n + c] = max(y[r * n + c] + bias[c], 0) over rows x n fp32 values; bias may be NULL. */
int gpumux_bias_relu(float* y, const float* bias, unsigned long long rows, unsigned long long n,
                     struct CUstream_st* stream);

/* One elementwise pass (y = max(0.5 y + 0.1, 0)) over n fp32 values: the memory-bound work of
 * a layer without GEMMs (norm, pool, embedding, elementwise). */
int gpumux_elementwise(float* y, unsigned long long n, struct CUstream_st* stream);

/* Momentum SGD: v = mu v + g; w -= lr v over n fp32 values; with v == NULL plain SGD. */
int gpumux_momentum_update(float* w, const float* g, float* v, unsigned long long n, float lr,
                           float mu, struct CUstream_st* stream);

/* Fills `words` 32-bit words exactly as the host's fill_weights(data, 4 * words, seed,
 * first_word) does (backend/include/gpumux/backend/weight_fill.hpp). */
int gpumux_fill_weights(void* data, unsigned long long words, unsigned long long seed,
                        unsigned long long first_word, struct CUstream_st* stream);

/* A kernel that writes to an address nothing owns: the GPU faults (illegal address) and the
 * context keeps the error. Fault injection for tests (platform_params.fault_at_op). */
int gpumux_fault(struct CUstream_st* stream);

/* An empty kernel (launch-overhead calibration). */
int gpumux_noop(struct CUstream_st* stream);

#ifdef __cplusplus
}
#endif

#endif /* GPUMUX_BACKEND_CUDA_KERNELS_H_ */
