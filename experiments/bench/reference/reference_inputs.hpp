// Benchmark reference, not a second simulator: the default experiment (training jobs and
// open-loop inference services time-sliced on one GPU) reduced to plain numbers, resolved once
// from a gpumux config with gpumux's own config loader and cost model. The reference loop
// (reference_sim.hpp) then runs on these numbers alone, so its arrivals and op durations are
// gpumux's by construction. Times in ns, sizes in bytes, link rates in bytes/ns.
// Not thread-safe to share while resolving (the ModelCatalog it uses caches); the result is a
// plain value.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "gpumux/api/time.hpp"
#include "gpumux/io/config.hpp"

namespace gpumux::bench {

/// One job in config order (its index is gpumux's JobId).
struct RefJob {
  bool training = true;
  TimeNs arrival_ns = 0;
  std::uint64_t iterations = 0;  ///< training
  /// Solo durations of the whole-model ops gpumux dispatches: training runs forward,
  /// backward and update per iteration; inference runs one forward per request.
  DurationNs forward_ns = 0;
  DurationNs backward_ns = 0;
  DurationNs update_ns = 0;
  std::uint64_t load_bytes = 0;     ///< the weight load at arrival (training: with optimizer state)
  std::vector<TimeNs> requests_ns;  ///< inference: absolute arrival times, sorted
};

struct RefInputs {
  std::vector<RefJob> jobs;
  TimeNs horizon_ns = kTimeNever;
  DurationNs timeslice_ns = 0;       ///< the device's time slice between contexts
  DurationNs context_switch_ns = 0;  ///< the gap while the GPU changes context
  DurationNs h2d_latency_ns = 0;     ///< fixed start-up of a host-to-device copy
  double h2d_bytes_per_ns = 0;       ///< pinned host-to-device link rate
  std::uint32_t depth = 2;           ///< ops each job keeps queued or running on its stream
};

/// Resolves `config` (as load_experiment returns it) for the reference. Supports exactly the
/// shape of experiments/configs/default.json: platform sim, one GPU, policy time_slicing
/// (optional param depth), training jobs and open-loop services with whole-pass ops and no
/// framework-independent start costs; throws std::invalid_argument naming what else it finds.
/// Memory is not modelled: the config must fit on the device (gpumux would reject jobs).
[[nodiscard]] RefInputs resolve_reference_inputs(const ExperimentConfig& config,
                                                 const std::filesystem::path& repo_root);

}  // namespace gpumux::bench
