#include "gpumux/backend/cuda/cuda_check.hpp"

#include "gpumux/api/errors.hpp"

namespace gpumux {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line,
                      std::uint64_t requested_bytes) {
  (void)cudaGetLastError();  // clear a sticky-free error so later calls are not confused
  const std::string where = std::string(call) + " at " + file + ":" + std::to_string(line);
  if (status == cudaErrorMemoryAllocation) {
    std::size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) free_bytes = 0;
    (void)cudaGetLastError();
    throw OutOfMemory(requested_bytes, free_bytes, "CUDA: " + where);
  }
  throw CudaError("CUDA error " + std::to_string(static_cast<int>(status)) + " (" +
                  cudaGetErrorName(status) + ": " + cudaGetErrorString(status) + ") in " + where);
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  // cuBLAS reports a launch that a faulted context refused as its own status
  // (EXECUTION_FAILED); the context's error (sticky: an earlier op's fault) is the cause, so
  // it is named as every failed runtime call names it.
  const cudaError_t context = cudaGetLastError();
  std::string cause;
  if (context != cudaSuccess) {
    cause = "; the CUDA context reports " + std::string(cudaGetErrorName(context)) + ": " +
            cudaGetErrorString(context);
  }
  throw CudaError("cuBLAS error " + std::to_string(static_cast<int>(status)) + " (" +
                  cublasGetStatusName(status) + ": " + cublasGetStatusString(status) + ") in " +
                  call + " at " + file + ":" + std::to_string(line) + cause);
}

std::string cuda_versions() {
  int runtime = 0, driver = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);
  (void)cudaGetLastError();
  auto text = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return "CUDA runtime " + text(runtime) + ", driver API " + text(driver);
}

}  // namespace gpumux
