// Running one experiment end to end: build the platform and the policy named in the config,
// run the Engine, and (optionally) write the results directory. Used by the CLI, sweeps and
// tests alike.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "gpumux/api/events.hpp"
#include "gpumux/engine/engine.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux {

struct ExperimentResult {
  RunResult run;
  EventLog log;  ///< the canonical record, when kept (see run_experiment); else empty
  std::vector<JobSpec> jobs;
  nlohmann::json summary;
  std::string platform_description;
  std::filesystem::path out_dir;  ///< empty when nothing was written
};

/// Checks the names in the config against the registries (policy, platform). Throws
/// ConfigError naming the key and listing the valid names.
void check_registered_names(const ExperimentConfig& config);

/// Refuses, with a TraceError (exit 2) naming the model file, the job and the profiles, a job
/// whose unit of work (a training iteration: forward, backward and update; an inference
/// batch: the forward pass) takes 0 ns on every one of `profiles`: its FLOPs, bytes and
/// launch costs are all zero there, and the simulated clock would never advance. Costs that
/// come out zero only in combination (a zero-cost device beside others) are caught while the
/// run goes (the engine's clock guard). run_experiment calls it on virtual-time platforms.
void check_costs_advance(const ExperimentConfig& config, const ModelCatalog& models,
                         const std::vector<DeviceProfile>& profiles);

/// The absolute results folder of `config` (a relative out_dir is against `repo_root`).
[[nodiscard]] std::filesystem::path result_dir_of(const ExperimentConfig& config,
                                                  const std::filesystem::path& repo_root);

/// Runs `config`. When `write_outputs`, first checks and claims the results folder (an
/// InputError, exit 2, before anything runs: see result_dir.hpp), then writes it so that it
/// appears under its final name only when complete: events.jsonl and trace.json are streamed
/// while the run goes, the summary is accumulated from the events. The event log is kept in
/// ExperimentResult::log only without outputs (tests read it).
[[nodiscard]] ExperimentResult run_experiment(const ExperimentConfig& config,
                                              const std::filesystem::path& repo_root,
                                              bool write_outputs);
/// As above; `keep_log` says whether ExperimentResult::log holds the events (memory grows
/// with the run's events when it does).
[[nodiscard]] ExperimentResult run_experiment(const ExperimentConfig& config,
                                              const std::filesystem::path& repo_root,
                                              bool write_outputs, bool keep_log);
/// As above; `observer` (may be null) also sees every event, after the result sinks, on the
/// runtime thread: the CLI's heartbeat. It cannot change the run or its outputs.
[[nodiscard]] ExperimentResult run_experiment(const ExperimentConfig& config,
                                              const std::filesystem::path& repo_root,
                                              bool write_outputs, bool keep_log,
                                              EventSink* observer);

}  // namespace gpumux
