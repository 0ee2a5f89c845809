// A tuning job as configured (workload.tuning, docs/configuration.md): a tuner over a search
// space that trains trials of one model. At parse time each tuning job expands
// into `max_trials` training JobSpecs, its trial slots ("<name>/trial-<k>"), which do not
// arrive from the trace: the engine's TuningDriver (core/engine/src/tuning_driver.hpp) activates a
// slot when the tuner hands over a new trial. Iterations per epoch = ceil(samples_per_epoch /
// batch); a trial's work is measured in epochs of that many iterations.
//
// Immutable after parsing; shared (read-only) by the config, the trial slots and the engine.
// Any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/job_spec.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/engine/learning_curve.hpp"
#include "gpumux/engine/search_space.hpp"
#include "gpumux/engine/tuner.hpp"
#include "gpumux/model/cost_model.hpp"

namespace gpumux {

struct TuningSpec {
  std::size_t index = 0;  ///< position in workload.tuning (seeds its tuner and curves)
  std::string name;
  std::string tuner;                                       ///< TunerRegistry name
  nlohmann::json params = nlohmann::json::object();        ///< the tuner's own params
  nlohmann::json search_space = nlohmann::json::object();  ///< as written
  SearchSpace space;
  MetricMode mode = MetricMode::Max;
  std::optional<double> target;  ///< end the tuning when a report reaches it
  LearningCurveParams curve;     ///< the synthetic learning curves (learning_curve.hpp)
  std::string model;
  std::uint32_t batch = 1;
  Optimizer optimizer = Optimizer::Momentum;
  std::uint64_t samples_per_epoch = 1;  ///< the dataset's size, in samples
  std::uint32_t max_trials = 1;         ///< trial slots
  TimeNs arrival_ns = 0;
  std::string tenant;  ///< of every trial; default: the tuning's name
  std::string file;    ///< config file, for the tuner's error messages
  std::string path;    ///< "workload.tuning[i]"

  [[nodiscard]] std::uint64_t iterations_per_epoch() const noexcept {
    return (samples_per_epoch + batch - 1) / batch;
  }
};

/// Marks a JobSpec as trial slot `slot` of tuning job `tuning` (JobSpec::trial).
struct TrialSlot {
  std::shared_ptr<const TuningSpec> tuning;
  std::uint32_t slot = 0;
};

}  // namespace gpumux
