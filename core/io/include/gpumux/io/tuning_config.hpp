// Reading workload.tuning (docs/configuration.md): a tuning job and its trial slots.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/job_spec.hpp"
#include "gpumux/engine/tuning_spec.hpp"

namespace gpumux {

/// Parses workload.tuning[index] (`path` names it). The tuner is built once with the params
/// to check them. Throws ConfigError naming the file and the key.
[[nodiscard]] std::shared_ptr<const TuningSpec> parse_tuning(const nlohmann::json& j,
                                                             const std::string& file,
                                                             const std::string& path,
                                                             std::size_t index);

/// The tuning job's trial slots: max_trials training jobs "<name>/trial-<k>", k = 0, 1, ...
[[nodiscard]] std::vector<JobSpec> trial_slots(const std::shared_ptr<const TuningSpec>& t);

}  // namespace gpumux
