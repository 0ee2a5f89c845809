// How an executor (Eigen on the CPU, cuBLAS on the GPU) maps a layer of the model zoo onto
// real work. Shared so both run exactly the same GEMMs.
//
// Forward, per GemmShape {m, n, k, count} of the layer: `count` GEMMs
//   Y (rows x n) = X (rows x k) * W (k x n),  rows = m * batch,
// then a fused bias + ReLU over Y. Backward: the two gradient GEMMs per shape,
//   dX (rows x k) = dY (rows x n) * W^T,   dW (k x n) = X^T (k x rows) * dY (rows x n).
// Update: momentum SGD over the layer's weights (w -= lr * (v = mu * v + g)). A layer without
// GEMMs (norm, pool, embedding, elementwise) runs one elementwise pass over its output
// (output_bytes * batch / 4 elements), twice in backward.
//
// Operands that do not fit the executor's scratch regions are processed in row chunks (and
// chunks of the `count` batch), which keeps the FLOPs and the bytes touched the same.
// W comes from the layer's own weights when they hold at least k * n elements (all `count`
// GEMMs share them unless they hold count * k * n); otherwise (attention score GEMMs, whose
// operands are activations) from a scratch weight buffer.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "gpumux/model/model.hpp"

namespace gpumux {

struct GemmChunking {
  std::uint64_t rows_chunk = 1;
  std::uint64_t count_chunk = 1;
};

/// Chunks so that count_chunk * rows_chunk * max(k, n) <= region_elems (at least one row).
[[nodiscard]] inline GemmChunking plan_gemm(std::uint64_t rows, std::uint64_t k, std::uint64_t n,
                                            std::uint64_t count, std::uint64_t region_elems) {
  const std::uint64_t width = std::max<std::uint64_t>({k, n, 1});
  GemmChunking c;
  c.rows_chunk =
      std::clamp<std::uint64_t>(region_elems / width, 1, std::max<std::uint64_t>(rows, 1));
  c.count_chunk = std::clamp<std::uint64_t>(region_elems / (c.rows_chunk * width), 1,
                                            std::max<std::uint64_t>(count, 1));
  return c;
}

/// Walks a GEMM's (count x rows) space in the chunks `c` plans, calling `chunk(c0, cn, rn)`:
/// GEMMs c0 .. c0+cn-1, rn rows each. False, stopping, once `cancel` (may be null) is set.
template <class Chunk>
bool walk_chunks(const GemmShape& g, std::uint64_t rows, const GemmChunking& c,
                 const std::atomic<bool>* cancel, Chunk&& chunk) {
  for (std::uint64_t c0 = 0; c0 < g.count; c0 += c.count_chunk) {
    const std::uint64_t cn = std::min(c.count_chunk, g.count - c0);
    for (std::uint64_t r0 = 0; r0 < rows; r0 += c.rows_chunk) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) return false;
      chunk(c0, cn, std::min(c.rows_chunk, rows - r0));
    }
  }
  return true;
}

/// Whether a layer runs in a pass (aux heads are skipped at inference).
[[nodiscard]] inline bool layer_runs(const Layer& layer, bool inference) noexcept {
  return !(inference && layer.aux);
}

/// Elements of an elementwise pass over a layer's output at `batch` (fp32).
[[nodiscard]] inline std::uint64_t elementwise_elems(const Layer& layer, std::uint32_t batch) {
  return layer.output_bytes / 4 * batch;
}

/// Optimizer hyper-parameters of the update kernels (fixed: the work, not the result, matters).
inline constexpr float kLearningRate = 1e-4f;
inline constexpr float kMomentum = 0.9f;

}  // namespace gpumux
