// Where a model's layers lie in device memory when calibration and warm-up run them outside
// an arena the Engine placed: per layer its weights, gradients and momentum (3x the weight
// bytes, each layer 256-byte aligned), then one activation region.
//
// Thread rules: immutable after construction.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpumux/backend/cuda/cuda_layer_executor.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

class TrainingLayout {
 public:
  explicit TrainingLayout(const Model& model) : model_(&model), offset_(model.layer_count() + 1) {
    for (std::uint32_t i = 0; i < model.layer_count(); ++i) {
      offset_[i + 1] = offset_[i] + ((model.layer(i).weight_bytes * 3 + 255) & ~std::uint64_t{255});
    }
  }
  /// Bytes of the weight region (at least 256).
  [[nodiscard]] std::uint64_t weight_region_bytes() const noexcept {
    return std::max<std::uint64_t>(offset_.back(), 256);
  }
  /// Layer `i`'s memory for a weight region at `weights` and activations at `activations`;
  /// without `training`, no gradients or momentum.
  [[nodiscard]] LayerMemory layer(std::uint32_t i, std::byte* weights, std::byte* activations,
                                  std::uint64_t activation_bytes, bool training) const noexcept {
    LayerMemory lm;
    const std::uint64_t wb = model_->layer(i).weight_bytes;
    std::byte* base = weights + offset_[i];
    lm.weights = wb > 0 ? base : nullptr;
    lm.weight_bytes = wb;
    lm.grads = wb > 0 && training ? base + wb : nullptr;
    lm.slots = wb > 0 && training ? base + 2 * wb : nullptr;
    lm.activations = activations;
    lm.activation_bytes = activation_bytes;
    return lm;
  }

 private:
  const Model* model_;
  std::vector<std::uint64_t> offset_;
};

}  // namespace gpumux
