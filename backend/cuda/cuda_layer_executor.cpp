#include "gpumux/backend/cuda/cuda_layer_executor.hpp"

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "gpumux/api/errors.hpp"
#include "gpumux/backend/cuda/cuda_check.hpp"
#include "gpumux/backend/layer_plan.hpp"
#include "gpumux/backend/weight_fill.hpp"
#include "gpumux/model/model.hpp"
#include "kernels.h"

namespace gpumux {

namespace {

int to_int(std::uint64_t v, const char* what) {
  if (v > 0x7fffffffull) {
    throw CudaError(std::string("cuBLAS dimension out of range: ") + what + " = " +
                    std::to_string(v));
  }
  return static_cast<int>(v);
}

/// The GEMMs' input type and cuBLAS compute type for `p` (accumulation is fp32 throughout).
std::pair<cudaDataType_t, cublasComputeType_t> cublas_types(Precision p) noexcept {
  switch (p) {
    case Precision::Tf32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case Precision::Bf16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case Precision::Fp16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case Precision::Fp32:
      break;
  }
  return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
}

#define GPUMUX_KERNEL_TRY(call) \
  ::gpumux::cuda_check(static_cast<cudaError_t>(call), #call, __FILE__, __LINE__)

}  // namespace

CudaLayerExecutor::CudaLayerExecutor(int ordinal, CudaExecutorOptions options)
    : ordinal_(ordinal), options_(options) {
  GPUMUX_CUDA_TRY(cudaSetDevice(ordinal_));
  std::tie(input_type_, compute_) = cublas_types(options_.precision);
  GPUMUX_CUBLAS_TRY(cublasCreate(&handle_));
  try {
    if (options_.precision == Precision::Tf32) {
      GPUMUX_CUBLAS_TRY(cublasSetMathMode(handle_, CUBLAS_TF32_TENSOR_OP_MATH));
    }
    // Five equal regions, each a multiple of 256 bytes.
    region_bytes_ = (options_.workspace_bytes / 5) & ~std::uint64_t{255};
    if (region_bytes_ < (std::uint64_t{1} << 20)) region_bytes_ = std::uint64_t{1} << 20;
    workspace_ = DeviceBuffer(static_cast<std::size_t>(region_bytes_ * 5));
    auto* base = static_cast<std::byte*>(workspace_.data());
    x_ = base;
    dy_ = base + region_bytes_;
    w_ = base + 2 * region_bytes_;
    y_ = base + 3 * region_bytes_;
    dx_ = base + 4 * region_bytes_;
    // Inputs and outputs start finite in every precision.
    GPUMUX_KERNEL_TRY(gpumux_fill_weights(base, workspace_.size() / 4, 0x5eedull, 0, nullptr));
    GPUMUX_CUDA_TRY(cudaDeviceSynchronize());
  } catch (...) {
    cublasDestroy(handle_);
    throw;
  }
}

CudaLayerExecutor::~CudaLayerExecutor() {
  if (handle_ != nullptr) (void)cublasDestroy(handle_);
}

void CudaLayerExecutor::unbind_stream() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (handle_ != nullptr) (void)cublasSetStream(handle_, nullptr);
}

void CudaLayerExecutor::prepare_stream(cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stream_workspaces_.count(stream) == 0) {
    stream_workspaces_.emplace(stream, DeviceBuffer(kCublasWorkspaceBytes));
  }
}

std::size_t CudaLayerExecutor::stream_workspace_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stream_workspaces_.size() * kCublasWorkspaceBytes;
}

void CudaLayerExecutor::bind_locked(cudaStream_t stream) {
  auto it = stream_workspaces_.find(stream);
  if (it == stream_workspaces_.end()) {
    it = stream_workspaces_.emplace(stream, DeviceBuffer(kCublasWorkspaceBytes)).first;
  }
  GPUMUX_CUBLAS_TRY(cublasSetStream(handle_, stream));  // resets to the default pool
  GPUMUX_CUBLAS_TRY(cublasSetWorkspace(handle_, it->second.data(), kCublasWorkspaceBytes));
}

std::size_t CudaLayerExecutor::input_bytes() const noexcept {
  return input_type_ == CUDA_R_32F ? 4 : 2;
}

void CudaLayerExecutor::gemm_locked(cublasOperation_t ta, cublasOperation_t tb, std::uint64_t m,
                                    std::uint64_t n, std::uint64_t k, const void* a,
                                    std::uint64_t lda, std::uint64_t stride_a, const void* b,
                                    std::uint64_t ldb, std::uint64_t stride_b, float* c,
                                    std::uint64_t ldc, std::uint64_t stride_c, std::uint64_t count,
                                    float beta, cudaStream_t stream) {
  bind_locked(stream);
  const float alpha = 1.0f;
  if (count == 1) {
    GPUMUX_CUBLAS_TRY(cublasGemmEx(handle_, ta, tb, to_int(m, "m"), to_int(n, "n"), to_int(k, "k"),
                                   &alpha, a, input_type_, to_int(lda, "lda"), b, input_type_,
                                   to_int(ldb, "ldb"), &beta, c, CUDA_R_32F, to_int(ldc, "ldc"),
                                   compute_, CUBLAS_GEMM_DEFAULT));
    return;
  }
  GPUMUX_CUBLAS_TRY(cublasGemmStridedBatchedEx(
      handle_, ta, tb, to_int(m, "m"), to_int(n, "n"), to_int(k, "k"), &alpha, a, input_type_,
      to_int(lda, "lda"), static_cast<long long>(stride_a), b, input_type_, to_int(ldb, "ldb"),
      static_cast<long long>(stride_b), &beta, c, CUDA_R_32F, to_int(ldc, "ldc"),
      static_cast<long long>(stride_c), to_int(count, "count"), compute_, CUBLAS_GEMM_DEFAULT));
}

// Row-major operands as cuBLAS's column-major ones: a row-major (r x c) matrix is a
// column-major (c x r) matrix with leading dimension c.
//   Y = X W      ->  Y^T (n x rows) = W^T (n x k) X^T (k x rows)
//   dX = dY W^T  ->  dX^T (k x rows) = (W^T)^T (k x n) dY^T (n x rows)
//   dW = X^T dY  ->  dW^T (n x k) = dY^T (n x rows) (X^T)^T (rows x k)
void CudaLayerExecutor::gemm(const void* x, const void* w, float* y, std::uint64_t rows,
                             std::uint64_t k, std::uint64_t n, cudaStream_t stream,
                             std::uint64_t count, std::uint64_t x_stride, std::uint64_t w_stride,
                             std::uint64_t y_stride) {
  std::lock_guard<std::mutex> lock(mutex_);
  gemm_locked(CUBLAS_OP_N, CUBLAS_OP_N, n, rows, k, w, n, w_stride, x, k, x_stride, y, n, y_stride,
              count, 0.0f, stream);
}

void CudaLayerExecutor::gemm_dx(const void* dy, const void* w, float* dx, std::uint64_t rows,
                                std::uint64_t k, std::uint64_t n, cudaStream_t stream,
                                std::uint64_t count, std::uint64_t dy_stride,
                                std::uint64_t w_stride, std::uint64_t dx_stride) {
  std::lock_guard<std::mutex> lock(mutex_);
  gemm_locked(CUBLAS_OP_T, CUBLAS_OP_N, k, rows, n, w, n, w_stride, dy, n, dy_stride, dx, k,
              dx_stride, count, 0.0f, stream);
}

void CudaLayerExecutor::gemm_dw(const void* x, const void* dy, float* dw, std::uint64_t rows,
                                std::uint64_t k, std::uint64_t n, cudaStream_t stream,
                                std::uint64_t count, std::uint64_t x_stride,
                                std::uint64_t dy_stride) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t eb = input_bytes();
  const auto* xb = static_cast<const std::byte*>(x);
  const auto* dyb = static_cast<const std::byte*>(dy);
  // Shared weights: the gradients of the `count` GEMMs add up (beta = 1 after the first).
  for (std::uint64_t c = 0; c < count; ++c) {
    gemm_locked(CUBLAS_OP_N, CUBLAS_OP_T, n, k, rows, dyb + c * dy_stride * eb, n, 0,
                xb + c * x_stride * eb, k, 0, dw, n, 0, 1, c == 0 ? 0.0f : 1.0f, stream);
  }
}

void CudaLayerExecutor::bias_relu(float* y, const float* bias, std::uint64_t rows, std::uint64_t n,
                                  cudaStream_t stream) {
  GPUMUX_KERNEL_TRY(gpumux_bias_relu(y, bias, rows, n, stream));
}

void CudaLayerExecutor::momentum(float* w, const float* g, float* v, std::uint64_t n,
                                 cudaStream_t stream) {
  GPUMUX_KERNEL_TRY(gpumux_momentum_update(w, g, v, n, kLearningRate, kMomentum, stream));
}

const std::byte* CudaLayerExecutor::weights_for(const GemmShape& g, const LayerMemory& mem,
                                                std::uint64_t* stride) const {
  const std::uint64_t kn = g.k * g.n;
  const std::uint64_t avail = mem.weights != nullptr ? mem.weight_bytes / input_bytes() : 0;
  if (avail >= kn) {
    *stride = avail >= kn * g.count ? kn : 0;
    return mem.weights;
  }
  if (kn * input_bytes() > region_bytes_) {
    throw CudaError("a GEMM needs " + std::to_string(kn) +
                    " scratch weight elements, more than the workspace region holds; raise "
                    "platform_params.workspace_mib");
  }
  *stride = 0;
  return w_;
}

void CudaLayerExecutor::elementwise_locked(std::uint64_t elems, cudaStream_t stream) {
  const std::uint64_t region = region_bytes_ / 4;
  for (std::uint64_t done = 0; done < elems; done += region) {
    GPUMUX_KERNEL_TRY(
        gpumux_elementwise(reinterpret_cast<float*>(y_), std::min(region, elems - done), stream));
  }
}

void CudaLayerExecutor::forward(const Model& model, std::uint32_t layer, std::uint32_t batch,
                                const LayerMemory& mem, cudaStream_t stream) {
  const Layer& l = model.layer(layer);
  std::lock_guard<std::mutex> lock(mutex_);
  if (l.gemms.empty()) {
    elementwise_locked(elementwise_elems(l, batch), stream);
    return;
  }
  const std::size_t eb = input_bytes();
  const std::uint64_t region = region_bytes_ / 4;  // fp32 elements (inputs are at most 4 B)
  for (const GemmShape& g : l.gemms) {
    const std::uint64_t rows = g.m * batch;
    const GemmChunking c = plan_gemm(rows, g.k, g.n, g.count, region);
    std::uint64_t w_stride = 0;
    const std::byte* w = weights_for(g, mem, &w_stride);
    // The bias: the last n fp32 values of the layer's weights, if it has that many.
    const float* bias = nullptr;
    if (mem.weights != nullptr && mem.weight_bytes / 4 >= g.n) {
      bias = reinterpret_cast<const float*>(mem.weights) + (mem.weight_bytes / 4 - g.n);
    }
    const std::uint64_t y_bytes = c.count_chunk * c.rows_chunk * g.n * 4;
    float* y = reinterpret_cast<float*>(
        mem.activations != nullptr && mem.activation_bytes >= y_bytes ? mem.activations : y_);
    walk_chunks(g, rows, c, nullptr, [&](std::uint64_t c0, std::uint64_t cn, std::uint64_t rn) {
      gemm_locked(CUBLAS_OP_N, CUBLAS_OP_N, g.n, rn, g.k, w + c0 * w_stride * eb, g.n, w_stride, x_,
                  g.k, rn * g.k, y, g.n, rn * g.n, cn, 0.0f, stream);
      GPUMUX_KERNEL_TRY(gpumux_bias_relu(y, bias, cn * rn, g.n, stream));
    });
  }
}

void CudaLayerExecutor::backward(const Model& model, std::uint32_t layer, std::uint32_t batch,
                                 const LayerMemory& mem, cudaStream_t stream) {
  const Layer& l = model.layer(layer);
  std::lock_guard<std::mutex> lock(mutex_);
  if (l.gemms.empty()) {
    elementwise_locked(2 * elementwise_elems(l, batch), stream);
    return;
  }
  const std::size_t eb = input_bytes();
  const std::uint64_t region = region_bytes_ / 4;
  for (const GemmShape& g : l.gemms) {
    const std::uint64_t rows = g.m * batch;
    const GemmChunking c = plan_gemm(rows, g.k, g.n, g.count, region);
    std::uint64_t w_stride = 0;
    const std::byte* w = weights_for(g, mem, &w_stride);
    const std::uint64_t kn = g.k * g.n;
    float* dw = mem.grads != nullptr && mem.weight_bytes / 4 >= kn
                    ? reinterpret_cast<float*>(mem.grads)
                    : reinterpret_cast<float*>(kn <= region ? y_ : dx_);
    if (kn > region && (mem.grads == nullptr || mem.weight_bytes / 4 < kn)) {
      throw CudaError("backward of layer " + l.name + " needs a gradient buffer of " +
                      std::to_string(kn) + " floats: give the layer a training layout");
    }
    auto* dx = reinterpret_cast<float*>(dx_);
    bool first = true;  // the first chunk overwrites dW, the others add to it
    walk_chunks(g, rows, c, nullptr, [&](std::uint64_t c0, std::uint64_t cn, std::uint64_t rn) {
      // dX = dY W^T
      gemm_locked(CUBLAS_OP_T, CUBLAS_OP_N, g.k, rn, g.n, w + c0 * w_stride * eb, g.n, w_stride,
                  dy_, g.n, rn * g.n, dx, g.k, rn * g.k, cn, 0.0f, stream);
      // dW += X^T dY summed over the chunk's GEMMs (as the Eigen executor does): their rows
      // are contiguous in X and dY, so one GEMM over the stacked cn * rn rows does it, not
      // cn launches (7172 per MobileNet-v2 backward pass otherwise: the sum of
      // `count` over the GEMMs of traces/models/mobilenet_v2.json).
      gemm_locked(CUBLAS_OP_N, CUBLAS_OP_T, g.n, g.k, cn * rn, dy_, g.n, 0, x_, g.k, 0, dw, g.n, 0,
                  1, first ? 0.0f : 1.0f, stream);
      first = false;
    });
  }
}

void CudaLayerExecutor::update(const LayerMemory& mem, cudaStream_t stream) {
  if (mem.weights == nullptr || mem.weight_bytes < 4) return;
  std::uint64_t n = mem.weight_bytes / 4;
  const float* g = reinterpret_cast<const float*>(mem.grads);
  if (g == nullptr) {  // no gradient region: read scratch gradients
    n = std::min(n, region_bytes_ / 4);
    g = reinterpret_cast<const float*>(dx_);
  }
  GPUMUX_KERNEL_TRY(gpumux_momentum_update(reinterpret_cast<float*>(mem.weights), g,
                                           reinterpret_cast<float*>(mem.slots), n, kLearningRate,
                                           kMomentum, stream));
}

}  // namespace gpumux
