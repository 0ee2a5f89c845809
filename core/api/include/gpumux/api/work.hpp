// The words work is described in, shared by the contracts (ops, jobs, views) and the models
// that time them: a half-open range of a model's layers, a pass, a training job's optimizer.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpumux/api/enum_names.hpp"

namespace gpumux {

/// Half-open range of layer indices [first, last).
struct LayerRange {
  std::uint32_t first = 0;
  std::uint32_t last = 0;
  [[nodiscard]] std::uint32_t size() const noexcept { return last - first; }
  [[nodiscard]] bool empty() const noexcept { return last <= first; }
  [[nodiscard]] bool contains(std::uint32_t layer) const noexcept {
    return layer >= first && layer < last;
  }
  friend bool operator==(const LayerRange&, const LayerRange&) = default;
};

enum class Pass : std::uint8_t { Forward, Backward, Update };
inline constexpr EnumNames<Pass, 3> kPassNames{
    {{Pass::Forward, "forward"}, {Pass::Backward, "backward"}, {Pass::Update, "update"}}};
[[nodiscard]] constexpr std::string_view to_string(Pass p) noexcept {
  return kPassNames.name(p);
}

/// Bytes of optimizer state per weight byte (momentum: 1 slot, Adam: 2 slots).
enum class Optimizer : std::uint8_t { Sgd, Momentum, Adam };
[[nodiscard]] std::uint32_t optimizer_slots(Optimizer o) noexcept;
inline constexpr EnumNames<Optimizer, 3> kOptimizerNames{
    {{Optimizer::Sgd, "sgd"}, {Optimizer::Momentum, "momentum"}, {Optimizer::Adam, "adam"}}};
[[nodiscard]] Optimizer parse_optimizer(std::string_view text);  // throws UsageError

}  // namespace gpumux
