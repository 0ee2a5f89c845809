// Real CPU execution of model layers with Eigen (SwitchFlow's CPU version of a subgraph): the
// CPU device of platforms "emulated" and "cuda" runs its compute ops through this, so their
// durations are real. The layer-to-GEMM mapping is in layer_plan.hpp and is the same as the
// CUDA layer executor's, which the GPU tests check numerically against these primitives.
//
// Thread rules: a CpuExecutor owns scratch buffers and is used by one thread at a time (the
// emulated device keeps one per worker thread). The free functions are thread-safe.
// Eigen runs single-threaded here (no OpenMP), so concurrent CPU ops scale over cores.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

namespace cpu {

// Dense row-major fp32 primitives (Eigen maps over raw pointers; no allocation).
/// y (rows x n) = x (rows x k) * w (k x n)
void gemm(const float* x, const float* w, float* y, std::size_t rows, std::size_t k, std::size_t n);
/// dx (rows x k) = dy (rows x n) * w^T
void gemm_dx(const float* dy, const float* w, float* dx, std::size_t rows, std::size_t k,
             std::size_t n);
/// dw (k x n) = x^T * dy
void gemm_dw(const float* x, const float* dy, float* dw, std::size_t rows, std::size_t k,
             std::size_t n);
/// y[r][c] = max(y[r][c] + bias[c], 0); bias may be null (no bias).
void bias_relu(float* y, const float* bias, std::size_t rows, std::size_t n);
/// v = mu * v + g; w -= lr * v. With v == nullptr: plain SGD, w -= lr * g.
void momentum_update(float* w, const float* g, float* v, std::size_t n, float lr, float mu);

}  // namespace cpu

class CpuExecutor {
 public:
  /// `region_bytes`: size of each scratch operand region (X, Y/dY, dX, W); larger operands
  /// are processed in chunks.
  explicit CpuExecutor(std::size_t region_bytes = std::size_t{16} << 20);

  /// Runs `range` of `model` in `pass` at `batch` (see layer_plan.hpp). `weights` are the
  /// model's weights as laid out in a host weight store (layer i at the sum of the weight
  /// bytes of the layers before it), `weight_bytes` long; a store shorter than the model wraps
  /// around. Null weights use scratch weights. Returns false when `cancel` became true (checked
  /// between GEMM chunks), true when the work is done.
  bool run(const Model& model, LayerRange range, Pass pass, std::uint32_t batch, bool inference,
           const std::byte* weights, std::size_t weight_bytes,
           const std::atomic<bool>* cancel = nullptr);

  /// Floating-point operations executed so far (2 per multiply-add; a statistic).
  [[nodiscard]] double flops() const noexcept { return flops_; }

 private:
  bool forward_layer(const Model& model, std::uint32_t layer, std::uint32_t batch, const float* w,
                     std::size_t w_elems, const std::atomic<bool>* cancel);
  bool backward_layer(const Model& model, std::uint32_t layer, std::uint32_t batch, const float* w,
                      std::size_t w_elems, const std::atomic<bool>* cancel);
  /// What every pass over a GEMM reads: its input x, its output y (dy going backward) and
  /// its weights (GEMM i of a group at w + i * w_stride).
  struct GemmOperands {
    float* x;
    float* y;
    const float* w;
    std::size_t w_stride;
  };
  /// Calls `per_gemm(g, rows, chunking, operands)` for each GEMM of `l` (false stops, and is
  /// returned); a layer without GEMMs runs `elementwise_sweeps` elementwise passes instead.
  template <class PerGemm>
  bool for_each_gemm(const Layer& l, std::uint32_t batch, std::uint64_t elementwise_sweeps,
                     const float* w, std::size_t w_elems, PerGemm&& per_gemm);
  void update_layer(const float* w, std::size_t w_elems);
  void elementwise(std::uint64_t elems);
  const float* weights_for(const GemmShape& g, const float* w, std::size_t w_elems,
                           std::size_t* stride);
  std::vector<float>& region(std::vector<float>& v, std::size_t elems, std::uint64_t seed);

  std::size_t region_elems_;
  std::vector<float> x_, y_, dx_, w_, g_;
  std::vector<float> upd_w_, upd_g_, upd_v_;
  double flops_ = 0;
};

}  // namespace gpumux
