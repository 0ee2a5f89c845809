// fakecuda: the cuBLAS entry points the layer executor uses. A handle remembers its stream;
// a GEMM is one launch on that stream's compute engine: under Arithmetic::Exact an fp32
// reference (Eigen) of cuBLAS's column-major C = alpha op(A) op(B) + beta C, inputs fp32, bf16
// or fp16 widened to fp32 (so TF32 and half-precision results are fp32-exact, within every
// tolerance the GPU tests allow).
#include <cublas_v2.h>

#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <vector>

#include "fake_state.hpp"

using gpumux::fakecuda::Arithmetic;
using gpumux::fakecuda::FaultKind;
using gpumux::fakecuda::detail::enqueue_work;
using gpumux::fakecuda::detail::state;

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  void* workspace = nullptr;  ///< nullptr: the library's default pool
  std::size_t workspace_bytes = 0;
};

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

float widen(const void* base, cudaDataType type, long long i) {
  if (type == CUDA_R_16BF) {
    std::uint16_t h = 0;
    std::memcpy(&h, static_cast<const std::byte*>(base) + 2 * i, 2);
    const std::uint32_t u = std::uint32_t{h} << 16;
    float f = 0;
    std::memcpy(&f, &u, 4);
    return f;
  }
  if (type == CUDA_R_16F) {  // IEEE 754 binary16: sign, 5-bit exponent (bias 15), 10 bits
    std::uint16_t h = 0;
    std::memcpy(&h, static_cast<const std::byte*>(base) + 2 * i, 2);
    const int exponent = (h >> 10) & 0x1f;
    const float mantissa = static_cast<float>(h & 0x3ff);
    float f = exponent == 0    ? std::ldexp(mantissa, -24)  // subnormal
              : exponent == 31 ? (mantissa == 0 ? INFINITY : NAN)
                               : std::ldexp(1024.0f + mantissa, exponent - 25);
    return (h & 0x8000) != 0 ? -f : f;
  }
  return static_cast<const float*>(base)[i];
}

/// op(X) as a dense (rows x cols) fp32 matrix; X is column-major with leading dimension ld.
Matrix operand(const void* x, cudaDataType type, cublasOperation_t op, int rows, int cols, int ld) {
  Matrix m(rows, cols);
  for (int c = 0; c < cols; ++c) {
    for (int r = 0; r < rows; ++r) {
      const long long i = op == CUBLAS_OP_N ? r + static_cast<long long>(c) * ld
                                            : c + static_cast<long long>(r) * ld;
      m(r, c) = widen(x, type, i);
    }
  }
  return m;
}

struct Gemm {
  cublasOperation_t ta, tb;
  int m, n, k;
  float alpha, beta;
  const void* a;
  cudaDataType at;
  int lda;
  long long sa;
  const void* b;
  cudaDataType bt;
  int ldb;
  long long sb;
  float* c;
  int ldc;
  long long sc;
  int count;

  void operator()() const {
    const std::size_t ea = at == CUDA_R_32F ? 4 : 2, eb = bt == CUDA_R_32F ? 4 : 2;
    for (int i = 0; i < count; ++i) {
      const Matrix ma =
          operand(static_cast<const std::byte*>(a) + i * sa * static_cast<long long>(ea), at, ta, m,
                  k, lda);
      const Matrix mb =
          operand(static_cast<const std::byte*>(b) + i * sb * static_cast<long long>(eb), bt, tb, k,
                  n, ldb);
      Eigen::Map<Matrix, 0, Eigen::OuterStride<>> mc(c + i * sc, m, n, Eigen::OuterStride<>(ldc));
      if (beta == 0.0f) {
        mc.noalias() = alpha * (ma * mb);  // beta 0: C is not read (it may hold NaN)
      } else {
        mc = beta * mc + alpha * (ma * mb);
      }
    }
  }
};

cublasStatus_t enqueue(cublasHandle_t handle, Gemm g, cudaDataType ctype) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (ctype != CUDA_R_32F || g.m < 0 || g.n < 0 || g.k < 0 || g.count < 0) {
    return CUBLAS_STATUS_NOT_SUPPORTED;  // the executor writes fp32 only
  }
  bool exact = false;
  std::uint64_t ns = 0;
  {
    auto& s = state();
    const std::lock_guard<std::mutex> lock(s.mutex);
    exact = s.options.arithmetic == Arithmetic::Exact;
    ns = s.options.kernel_ns;
    const std::uint64_t number = handle->stream == nullptr ? 0 : handle->stream->number;
    s.gemms.push_back(
        gpumux::fakecuda::GemmCall{number, handle->workspace, handle->workspace_bytes});
  }
  std::function<void()> work;
  if (exact) work = g;
  const cudaError_t e = enqueue_work(handle->stream, FaultKind::Launch, std::move(work), ns);
  return e == cudaSuccess ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  // cuBLAS: cublasSetStream "unconditionally resets the cuBLAS library workspace back to the
  // default workspace pool".
  handle->workspace = nullptr;
  handle->workspace_bytes = 0;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, std::size_t bytes) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (workspace == nullptr && bytes != 0) return CUBLAS_STATUS_INVALID_VALUE;
  handle->workspace = workspace;
  handle->workspace_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    default:
      return "CUBLAS_STATUS_UNKNOWN";
  }
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "the library was not initialized";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "the functionality requested is not supported";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "the GPU program failed to execute";
    default:
      return "unknown error";
  }
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t /*compute*/,
                            cublasGemmAlgo_t /*algo*/) {
  const Gemm g{transa,
               transb,
               m,
               n,
               k,
               *static_cast<const float*>(alpha),
               *static_cast<const float*>(beta),
               A,
               Atype,
               lda,
               0,
               B,
               Btype,
               ldb,
               0,
               static_cast<float*>(C),
               ldc,
               0,
               1};
  return enqueue(handle, g, Ctype);
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
    const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t /*compute*/, cublasGemmAlgo_t /*algo*/) {
  const Gemm g{transa,
               transb,
               m,
               n,
               k,
               *static_cast<const float*>(alpha),
               *static_cast<const float*>(beta),
               A,
               Atype,
               lda,
               strideA,
               B,
               Btype,
               ldb,
               strideB,
               static_cast<float*>(C),
               ldc,
               strideC,
               batchCount};
  return enqueue(handle, g, Ctype);
}

}  // extern "C"
