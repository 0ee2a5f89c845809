// Predicts how long work takes on a device profile: a roofline per layer (FLOPs against the
// precision's peak times an efficiency and an occupancy factor; bytes against memory
// bandwidth), plus kernel-launch costs. Calibrated per-layer times override the roofline.
// Pure functions of (profile, model, batch): deterministic, thread-compatible.
#pragma once

#include <cstdint>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/api/work.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

struct CostOptions {
  Precision precision = Precision::Fp32;
  /// Host-side framework cost per kernel launched (e.g. PyTorch eager dispatch before the
  /// driver launch), ns. An op takes at least its kernels x (this + launch_ns) of host time.
  DurationNs framework_overhead_ns = 0;
};

/// How one op's kernels use the device: what kernel-level sharing (SimDevice) needs.
/// Durations in ns; the residual sums in ns^2.
struct OpKernels {
  std::uint32_t kernels = 0;  ///< kernels launched
  DurationNs gpu_ns = 0;      ///< device busy time alone: kernel time plus launch_ns per kernel
  DurationNs host_ns = 0;     ///< host time to launch them: (framework + launch_ns) per kernel
  /// Over the op's kernels that fill every SM (duration d, w waves of d / w, f of them full:
  /// a partial last wave leaves SMs free): sum (f d / w)^2 / 2 and sum f (d / w)^2 / 2.
  /// Divided by the op's duration, the first is the mean time a kernel arriving at a random
  /// instant waits until SMs free up (the running kernel's full waves retire: equal priority
  /// cannot pass a kernel still dispatching); the second the wait for the running wave only
  /// (what a higher-priority kernel waits). Kernels of layers without GEMMs are memory-bound
  /// grids of many small blocks: they block for their whole duration, and their waves are
  /// taken as too short to matter (0 in the second sum).
  double full_residual_ns2 = 0;
  double full_wave_residual_ns2 = 0;
  /// Solo duration: the slower of the device and the host launching its kernels.
  [[nodiscard]] DurationNs solo_ns() const noexcept { return gpu_ns > host_ns ? gpu_ns : host_ns; }
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
  /// Solo duration of an op running `range` in `pass`: op_kernels(...).solo_ns(), i.e. the
  /// larger of (layer times plus one launch cost per kernel, none for calibrated layer times,
  /// which were measured with their launches) and (the host's per-kernel framework plus
  /// launch cost). Inference skips aux layers.
  [[nodiscard]] DurationNs op_ns(const Model& model, LayerRange range, std::uint32_t batch,
                                 Pass pass, bool inference) const;
  /// The kernels of that op (Forward or Backward; Update: use update_kernels).
  [[nodiscard]] OpKernels op_kernels(const Model& model, LayerRange range, std::uint32_t batch,
                                     Pass pass, bool inference) const;
  /// Optimizer update of all weights (one fused elementwise pass over weights and slots),
  /// device time including one launch per layer with weights; no framework cost.
  [[nodiscard]] DurationNs update_ns(const Model& model, Optimizer optimizer) const;
  /// The update's kernels: one per layer with weights, each a memory-bound pass.
  [[nodiscard]] OpKernels update_kernels(const Model& model, Optimizer optimizer) const;
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
  /// The profile's measured per-layer times of (model, batch, pass), or nullptr. Throws
  /// TraceError when their count is not the model's layer count.
  [[nodiscard]] const std::vector<DurationNs>* calibrated_times(const Model& model,
                                                                std::uint32_t batch,
                                                                Pass pass) const;
  [[nodiscard]] double occupancy(const Layer& layer, std::uint32_t batch) const noexcept;
  /// GEMM output tiles of a layer (one thread block each); negative for a layer without GEMMs.
  [[nodiscard]] double tiles(const Layer& layer, std::uint32_t batch) const noexcept;
  const DeviceProfile* profile_;
  CostOptions options_;
};

}  // namespace gpumux
