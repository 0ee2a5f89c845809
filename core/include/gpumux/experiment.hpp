// Running one experiment end to end: build the platform and the policy named in the config,
// run the Engine, and (optionally) write the results directory. Used by the CLI, sweeps and
// tests alike.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "gpumux/config.hpp"
#include "gpumux/engine.hpp"
#include "gpumux/events.hpp"

namespace gpumux {

struct ExperimentResult {
  RunResult run;
  EventLog log;                  ///< the canonical record
  std::vector<JobSpec> jobs;
  nlohmann::json summary;
  std::string platform_description;
  std::filesystem::path out_dir;  ///< empty when nothing was written
};

/// Checks the names in the config against the registries (policy, platform). Throws
/// ConfigError naming the key and listing the valid names.
void check_registered_names(const ExperimentConfig& config);

/// The absolute results folder of `config` (a relative out_dir is against `repo_root`).
[[nodiscard]] std::filesystem::path result_dir_of(const ExperimentConfig& config,
                                                  const std::filesystem::path& repo_root);

/// Runs `config`. When `write_outputs`, first checks and claims the results folder (an
/// InputError, exit 2, before anything runs: see result_dir.hpp), then writes it so that it
/// appears under its final name only when complete.
[[nodiscard]] ExperimentResult run_experiment(const ExperimentConfig& config,
                                              const std::filesystem::path& repo_root,
                                              bool write_outputs);

}  // namespace gpumux
