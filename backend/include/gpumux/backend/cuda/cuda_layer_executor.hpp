// Executes model layers on a GPU for real: each layer's GEMM shapes (layer_plan.hpp, the same
// mapping as the Eigen CpuExecutor) through cuBLAS on the weights that crossed PCIe into the
// arena, plus a fused bias + ReLU kernel; backward = the two gradient GEMMs; update = a
// momentum-SGD kernel over the layer's weights.
//
// Precision: fp32 (CUBLAS_COMPUTE_32F), tf32 (fp32 data, CUBLAS_COMPUTE_32F_FAST_TF32: tensor
// cores), bf16 or fp16 (GEMM inputs of that type, fp32 outputs and accumulation: tensor cores).
// In bf16/fp16 the layer's weight bytes are read as 16-bit values (the stores are filled so that
// every view is finite, see weight_fill.hpp); outputs, gradients and the update stay fp32.
//
// Operands (documented simplifications)
//   - W: the layer's weights at its arena offset when they hold k*n elements (shared by the
//     `count` GEMMs unless they hold count*k*n); otherwise (attention scores, whose operands
//     are activations) a scratch weight region.
//   - X and dY (GEMM inputs) come from read-only scratch regions filled once with
//     fill_weights: layer i's real input would be layer i-1's output only for a chain of
//     same-shaped GEMMs, which a conv net's implicit GEMMs are not. Y goes to the job's
//     activation region when it fits (else a scratch region); dX to a scratch region; dW to the
//     layer's gradient region (training layout: weights, gradients, optimizer slots).
//   - Operands larger than a scratch region are processed in row (and count) chunks: same FLOPs.
//   - Scratch regions are shared by all streams of the device: concurrent ops race on values,
//     never on memory outside the regions.
//
// cuBLAS workspace: each stream gets its own (kCublasWorkspaceBytes, allocated by
// prepare_stream or at the stream's first GEMM), bound after every cublasSetStream, which resets
// the handle to the default pool. cuBLAS guide, "Results reproducibility": concurrent streams
// sharing one handle's default workspace give non-deterministic results; a separate workspace
// per stream (cublasSetWorkspace) is the documented remedy.
//
// Thread rules: all methods are thread-safe (a mutex serialises the cuBLAS handle, which is
// re-bound to each call's stream and its workspace); they only enqueue work and never
// synchronise (prepare_stream and a stream's first GEMM may cudaMalloc). Workspaces stay
// allocated until the executor goes (a reused stream handle reuses its workspace). The
// executor's GPU must be current on the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "gpumux/backend/cuda/cuda_arena.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

struct CudaExecutorOptions {
  Precision precision = Precision::Fp32;
  /// Device scratch for X, dY, Y, dX and scratch weights (five equal regions).
  std::size_t workspace_bytes = std::size_t{640} << 20;
};

/// Each stream's cuBLAS workspace: 32 MiB, the size the cuBLAS API reference recommends for
/// cublasSetWorkspace on Hopper (4 MiB before Hopper), so one size serves every GPU we target.
inline constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

/// Where one layer's memory lives on the device (any pointer may be null: scratch is used).
struct LayerMemory {
  std::byte* weights = nullptr;
  std::uint64_t weight_bytes = 0;
  std::byte* grads = nullptr;  ///< weight_bytes of fp32 gradients (training)
  std::byte* slots = nullptr;  ///< weight_bytes of momentum (training, 1+ optimizer slots)
  std::byte* activations = nullptr;
  std::uint64_t activation_bytes = 0;
};

class CudaLayerExecutor {
 public:
  /// Creates a cuBLAS handle and the workspace on GPU `ordinal`. Throws CudaError /
  /// OutOfMemory.
  CudaLayerExecutor(int ordinal, CudaExecutorOptions options);
  ~CudaLayerExecutor();
  CudaLayerExecutor(const CudaLayerExecutor&) = delete;
  CudaLayerExecutor& operator=(const CudaLayerExecutor&) = delete;

  [[nodiscard]] Precision precision() const noexcept { return options_.precision; }
  /// Bytes of one GEMM input element (4 for fp32/tf32, 2 for bf16/fp16).
  [[nodiscard]] std::size_t input_bytes() const noexcept;

  /// Enqueue one layer on `stream`.
  void forward(const Model& model, std::uint32_t layer, std::uint32_t batch, const LayerMemory& mem,
               cudaStream_t stream);
  void backward(const Model& model, std::uint32_t layer, std::uint32_t batch,
                const LayerMemory& mem, cudaStream_t stream);
  void update(const LayerMemory& mem, cudaStream_t stream);
  /// Allocates `stream`'s cuBLAS workspace now (at set-up) rather than at its first GEMM.
  /// Throws OutOfMemory / CudaError.
  void prepare_stream(cudaStream_t stream);
  /// Device bytes of the per-stream cuBLAS workspaces allocated so far.
  [[nodiscard]] std::size_t stream_workspace_bytes();

  /// Binds the cuBLAS handle to the default stream again: call before destroying the streams
  /// it was used on.
  void unbind_stream() noexcept;

  // Row-major primitives on device pointers (what the numerics tests compare with
  // cpu::gemm & co.). Inputs (x, w, dy) are in the executor's precision, outputs fp32.
  // `count` GEMMs with element strides between consecutive ones (0 = shared operand).
  /// y = x * w; x: rows x k, w: k x n, y: rows x n.
  void gemm(const void* x, const void* w, float* y, std::uint64_t rows, std::uint64_t k,
            std::uint64_t n, cudaStream_t stream, std::uint64_t count = 1,
            std::uint64_t x_stride = 0, std::uint64_t w_stride = 0, std::uint64_t y_stride = 0);
  /// dx = dy * w^T; dy: rows x n, w: k x n, dx: rows x k.
  void gemm_dx(const void* dy, const void* w, float* dx, std::uint64_t rows, std::uint64_t k,
               std::uint64_t n, cudaStream_t stream, std::uint64_t count = 1,
               std::uint64_t dy_stride = 0, std::uint64_t w_stride = 0,
               std::uint64_t dx_stride = 0);
  /// dw (+)= x^T * dy, summed over the `count` GEMMs (shared weights); dw: k x n.
  void gemm_dw(const void* x, const void* dy, float* dw, std::uint64_t rows, std::uint64_t k,
               std::uint64_t n, cudaStream_t stream, std::uint64_t count = 1,
               std::uint64_t x_stride = 0, std::uint64_t dy_stride = 0);
  void bias_relu(float* y, const float* bias, std::uint64_t rows, std::uint64_t n,
                 cudaStream_t stream);
  void momentum(float* w, const float* g, float* v, std::uint64_t n, cudaStream_t stream);

 private:
  // Unlocked versions (callers hold mutex_).
  void gemm_locked(cublasOperation_t ta, cublasOperation_t tb, std::uint64_t m, std::uint64_t n,
                   std::uint64_t k, const void* a, std::uint64_t lda, std::uint64_t stride_a,
                   const void* b, std::uint64_t ldb, std::uint64_t stride_b, float* c,
                   std::uint64_t ldc, std::uint64_t stride_c, std::uint64_t count, float beta,
                   cudaStream_t stream);
  [[nodiscard]] const std::byte* weights_for(const GemmShape& g, const LayerMemory& mem,
                                             std::uint64_t* stride) const;
  void elementwise_locked(std::uint64_t elems, cudaStream_t stream);
  /// Binds the handle to `stream` and to its own workspace (allocated on first use).
  void bind_locked(cudaStream_t stream);

  int ordinal_;
  CudaExecutorOptions options_;
  cublasHandle_t handle_ = nullptr;
  cudaDataType_t input_type_ = CUDA_R_32F;
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  DeviceBuffer workspace_;
  std::uint64_t region_bytes_ = 0;
  std::byte* x_ = nullptr;  // GEMM inputs, read-only after the fill
  std::byte* dy_ = nullptr;
  std::byte* w_ = nullptr;  // scratch weights
  std::byte* y_ = nullptr;  // outputs
  std::byte* dx_ = nullptr;
  std::map<cudaStream_t, DeviceBuffer> stream_workspaces_;  // guarded by mutex_
  std::mutex mutex_;
};

}  // namespace gpumux
