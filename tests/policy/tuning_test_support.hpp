// For the tuning executors' tests (test_fluid_*.cpp, test_dynamic_fluid.cpp): a small
// random-search tuning config, the tuning's end time and each trial's span from the events.
// Times in ns.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/events.hpp"
#include "test_support.hpp"

namespace gpumux::test {

/// `trials` random-search trials of fluid_cifar_alexnet (batch 4, 2 iterations per epoch) for
/// up to `epochs` epochs each, arriving at 0, on `gpus` V100s under `policy`.
inline nlohmann::json random_search_config(const std::string& policy, std::size_t gpus, int trials,
                                           int epochs) {
  const nlohmann::json tuning = {{"name", "rs"},
                                 {"tuner", "random_search"},
                                 {"params", {{"num_samples", trials}, {"max_epochs", epochs}}},
                                 {"search_space", {{"lr", {{"loguniform", {1e-4, 1.0}}}}}},
                                 {"model", "fluid_cifar_alexnet"},
                                 {"batch", 4},
                                 {"samples_per_epoch", 8},
                                 {"max_trials", trials},
                                 {"arrival_s", 0.0}};
  return make_config(policy, {{"tuning", nlohmann::json::array({tuning})}},
                     std::vector<std::string>(gpus, "v100-pcie3x16"));
}

/// When the (first) tuning job ended; -1 if it did not.
inline TimeNs tuning_end(const ExperimentResult& r) {
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::TuningEnd) return e.t_ns;
  }
  return -1;
}

struct Span {
  TimeNs start = -1, end = -1;
  std::uint16_t device = 0;
};

/// Each job's first compute-op start and last compute-op end, and the device it last started on.
inline std::map<std::uint32_t, Span> spans(const ExperimentResult& r) {
  std::map<std::uint32_t, Span> out;
  for (const Event& e : r.log.events()) {
    if (e.op_kind != OpKind::Compute) continue;
    if (e.kind == EventKind::OpStart) {
      Span& s = out[e.job];
      if (s.start < 0) s.start = e.t_ns;
      s.device = e.device;
    }
    if (e.kind == EventKind::OpEnd) out[e.job].end = e.t_ns;
  }
  return out;
}

}  // namespace gpumux::test
