// The layer-level model zoo: Model's derived totals and the strict model-file loader.
#include "gpumux/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <system_error>

#include "gpumux/api/errors.hpp"

namespace gpumux {

Model::Model(std::string name, std::string display_name, std::vector<Layer> layers,
             std::map<std::string, Grouping, std::less<>> groupings, std::uint32_t sequence_length)
    : name_(std::move(name)),
      display_name_(std::move(display_name)),
      layers_(std::move(layers)),
      groupings_(std::move(groupings)),
      sequence_length_(sequence_length) {
  const auto n = static_cast<std::uint32_t>(layers_.size());
  weight_prefix_.assign(n + 1, 0);
  tensor_prefix_.assign(n + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    const Layer& l = layers_[i];
    weight_prefix_[i + 1] = weight_prefix_[i] + l.weight_bytes;
    tensor_prefix_[i + 1] = tensor_prefix_[i] + l.tensors;
    params_ += l.params;
    train_activation_bytes_ += l.output_bytes;
    if (l.aux) continue;  // not run at inference, so not part of the forward work
    for (const GemmShape& g : l.gemms) {
      fwd_macs_ += static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) *
                   static_cast<double>(g.count);
    }
    infer_activation_bytes_ = std::max(infer_activation_bytes_, l.input_bytes + l.output_bytes);
  }
  weight_bytes_ = weight_prefix_[n];

  for (const auto& [gname, g] : groupings_) {
    if (g.starts.empty() || g.starts.front() != 0) {
      throw std::invalid_argument("grouping '" + gname + "' must start at layer 0");
    }
    for (std::size_t i = 1; i < g.starts.size(); ++i) {
      if (g.starts[i] <= g.starts[i - 1] || g.starts[i] >= n) {
        throw std::invalid_argument("grouping '" + gname +
                                    "' must strictly increase below the layer count");
      }
    }
  }
  // The implicit groupings always mean the same thing, whatever the caller passed.
  Grouping per_layer{"per_layer", {}};
  per_layer.starts.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) per_layer.starts.push_back(i);
  groupings_["per_layer"] = std::move(per_layer);
  Grouping whole{"whole", {}};
  if (n > 0) whole.starts.push_back(0);
  groupings_["whole"] = std::move(whole);
  for (auto& [gname, g] : groupings_) g.name = gname;
}

std::uint64_t Model::weight_bytes(LayerRange range) const noexcept {
  const auto n = layer_count();
  const std::uint32_t last = std::min(range.last, n);
  const std::uint32_t first = std::min(range.first, last);
  return weight_prefix_.empty() ? 0 : weight_prefix_[last] - weight_prefix_[first];
}

std::uint64_t Model::tensors(LayerRange range) const noexcept {
  const auto n = layer_count();
  const std::uint32_t last = std::min(range.last, n);
  const std::uint32_t first = std::min(range.first, last);
  return tensor_prefix_.empty() ? 0 : tensor_prefix_[last] - tensor_prefix_[first];
}

const Grouping& Model::grouping(std::string_view name) const {
  auto it = groupings_.find(name);
  if (it == groupings_.end()) {
    std::string valid;
    for (const auto& [gname, g] : groupings_) valid += (valid.empty() ? "" : ", ") + gname;
    throw UsageError("model '" + name_ + "' has no grouping '" + std::string(name) +
                     "'; valid groupings: " + valid);
  }
  return it->second;
}

bool Model::has_grouping(std::string_view name) const noexcept {
  return groupings_.find(name) != groupings_.end();
}

std::vector<std::string> Model::grouping_names() const {
  std::vector<std::string> out;
  out.reserve(groupings_.size());
  for (const auto& [gname, g] : groupings_) out.push_back(gname);
  return out;
}

}  // namespace gpumux
