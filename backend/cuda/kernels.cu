// Kernels of the "cuda" platform. nvcc sees only this file and kernels.h (C++17).
#include <cstdint>

#include <cuda_runtime.h>

#include "kernels.h"

namespace {

constexpr unsigned kThreads = 256;

unsigned blocks_for(unsigned long long n) {
  const unsigned long long b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 4096ull ? (b == 0 ? 1ull : b) : 4096ull);  // grid-stride
}

__global__ void bias_relu_kernel(float* y, const float* bias, unsigned long long rows,
                                 unsigned long long n) {
  const unsigned long long total = rows * n;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < total; i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    float v = y[i];
    if (bias != nullptr) v += bias[i % n];
    y[i] = v > 0.0f ? v : 0.0f;
  }
}

__global__ void elementwise_kernel(float* y, unsigned long long n) {
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const float v = 0.5f * y[i] + 0.1f;
    y[i] = v > 0.0f ? v : 0.0f;
  }
}

__global__ void momentum_kernel(float* w, const float* g, float* v, unsigned long long n, float lr,
                                float mu) {
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    if (v != nullptr) {
      const float vi = mu * v[i] + g[i];
      v[i] = vi;
      w[i] -= lr * vi;
    } else {
      w[i] -= lr * g[i];
    }
  }
}

// Same integer recipe as backend/src/weight_fill.cpp.
__device__ unsigned long long splitmix64(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ unsigned dual(unsigned r) {
  const unsigned exps = ((118u + ((r >> 7) & 3u)) << 7) | ((118u + ((r >> 23) & 3u)) << 23);
  return (r & 0x807f807fu) | exps;
}

__global__ void fill_kernel(unsigned* out, unsigned long long words, unsigned long long seed,
                            unsigned long long first_word) {
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < words; i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const unsigned long long w = first_word + i;
    const unsigned long long r = splitmix64(seed ^ ((w >> 1) * 0xd1b54a32d192ed03ull));
    out[i] = dual(static_cast<unsigned>((w & 1ull) != 0 ? r >> 32 : r));
  }
}

__global__ void noop_kernel() {}

int status() {
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

extern "C" int gpumux_bias_relu(float* y, const float* bias, unsigned long long rows,
                                unsigned long long n, CUstream_st* stream) {
  if (rows * n == 0) return 0;
  bias_relu_kernel<<<blocks_for(rows * n), kThreads, 0, stream>>>(y, bias, rows, n);
  return status();
}

extern "C" int gpumux_elementwise(float* y, unsigned long long n, CUstream_st* stream) {
  if (n == 0) return 0;
  elementwise_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, n);
  return status();
}

extern "C" int gpumux_momentum_update(float* w, const float* g, float* v, unsigned long long n,
                                      float lr, float mu, CUstream_st* stream) {
  if (n == 0) return 0;
  momentum_kernel<<<blocks_for(n), kThreads, 0, stream>>>(w, g, v, n, lr, mu);
  return status();
}

extern "C" int gpumux_fill_weights(void* data, unsigned long long words, unsigned long long seed,
                                   unsigned long long first_word, CUstream_st* stream) {
  if (words == 0) return 0;
  fill_kernel<<<blocks_for(words), kThreads, 0, stream>>>(static_cast<unsigned*>(data), words, seed,
                                                          first_word);
  return status();
}

// Writes through an address no allocation holds: an illegal-address fault, which leaves the
// context with a sticky error (platform_params.fault_at_op, the no-hang test).
__global__ void fault_kernel(int* nowhere) {
  *nowhere = 1;
}

extern "C" int gpumux_fault(CUstream_st* stream) {
  fault_kernel<<<1, 1, 0, stream>>>(reinterpret_cast<int*>(std::uintptr_t{16}));
  return status();
}

extern "C" int gpumux_noop(CUstream_st* stream) {
  noop_kernel<<<1, 1, 0, stream>>>();
  return status();
}
