// Predicts how long work takes on a device profile: a roofline per layer (FLOPs against the
// precision's peak times an efficiency and an occupancy factor; bytes against memory
// bandwidth), plus kernel-launch costs. Calibrated per-layer times override the roofline.
// Pure functions of (profile, model, batch): deterministic, thread-compatible.
#pragma once

#include <cstdint>

#include "gpumux/device_profile.hpp"
#include "gpumux/model.hpp"
#include "gpumux/time.hpp"

namespace gpumux {

enum class Pass : std::uint8_t { Forward, Backward, Update };
[[nodiscard]] std::string_view to_string(Pass p) noexcept;

/// Bytes of optimizer state per weight byte (momentum: 1 slot, Adam: 2 slots).
enum class Optimizer : std::uint8_t { Sgd, Momentum, Adam };
[[nodiscard]] std::uint32_t optimizer_slots(Optimizer o) noexcept;
[[nodiscard]] Optimizer parse_optimizer(std::string_view text);  // throws UsageError

struct CostOptions {
  Precision precision = Precision::Fp32;
  /// Extra host-side cost per op dispatched (framework overhead, e.g. PyTorch eager), ns.
  DurationNs framework_overhead_ns = 0;
};

class CostModel {
 public:
  CostModel(const DeviceProfile& profile, CostOptions options)
      : profile_(&profile), options_(options) {}

  /// Device time of one layer for a batch, without launch costs.
  [[nodiscard]] DurationNs layer_compute_ns(const Model& model, std::uint32_t layer,
                                            std::uint32_t batch, Pass pass) const;
  /// Kernels one layer launches in a pass.
  [[nodiscard]] std::uint32_t layer_kernels(const Model& model, std::uint32_t layer,
                                            Pass pass) const noexcept;
  /// Solo duration of an op running `range` in `pass`: sum of layer times plus one launch cost
  /// per kernel plus the framework overhead once. Inference skips aux layers.
  [[nodiscard]] DurationNs op_ns(const Model& model, LayerRange range, std::uint32_t batch,
                                 Pass pass, bool inference) const;
  /// Optimizer update of all weights (one fused elementwise pass over weights and slots).
  [[nodiscard]] DurationNs update_ns(const Model& model, Optimizer optimizer) const;
  /// Fraction of the device an op of `range` can use alone (0, 1]: the GEMM tile occupancy,
  /// FLOP-weighted over its layers. Drives spatial sharing (MPS, concurrent streams).
  [[nodiscard]] double op_demand(const Model& model, LayerRange range, std::uint32_t batch,
                                 Pass pass) const;
  /// Time to copy `bytes` host->device (pinned unless `pageable`), alone on the link.
  [[nodiscard]] DurationNs h2d_ns(std::uint64_t bytes, bool pageable) const noexcept;
  [[nodiscard]] DurationNs d2h_ns(std::uint64_t bytes, bool pageable) const noexcept;

  [[nodiscard]] const DeviceProfile& profile() const noexcept { return *profile_; }
  [[nodiscard]] const CostOptions& options() const noexcept { return options_; }

 private:
  [[nodiscard]] double occupancy(const Layer& layer, std::uint32_t batch) const noexcept;
  const DeviceProfile* profile_;
  CostOptions options_;
};

}  // namespace gpumux
