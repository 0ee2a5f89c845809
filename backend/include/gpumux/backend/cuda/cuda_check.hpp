// Checking every CUDA runtime and cuBLAS call: a failure becomes a typed exception naming the
// call and file:line (gpumux::CudaError), and an allocation failure becomes gpumux::OutOfMemory.
// Host code only (never include from .cu files or from CUDA host callbacks, which may not
// throw).
#pragma once

#include <cstdint>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace gpumux {

/// Throws OutOfMemory for cudaErrorMemoryAllocation, CudaError otherwise; clears the error.
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line,
                                   std::uint64_t requested_bytes = 0);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);

inline void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, call, file, line);
}
inline void cublas_check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cublas_error(status, call, file, line);
}

/// "CUDA runtime 13.0, driver 13.0 (580)"-style description of the installed versions.
[[nodiscard]] std::string cuda_versions();

}  // namespace gpumux

#define GPUMUX_CUDA_TRY(call) ::gpumux::cuda_check((call), #call, __FILE__, __LINE__)
#define GPUMUX_CUBLAS_TRY(call) ::gpumux::cublas_check((call), #call, __FILE__, __LINE__)
/// For allocations: an out-of-memory failure reports the requested size.
#define GPUMUX_CUDA_ALLOC_TRY(call, bytes)                                            \
  do {                                                                                \
    const cudaError_t gpumux_status_ = (call);                                        \
    if (gpumux_status_ != cudaSuccess) {                                              \
      ::gpumux::throw_cuda_error(gpumux_status_, #call, __FILE__, __LINE__, (bytes)); \
    }                                                                                 \
  } while (false)
