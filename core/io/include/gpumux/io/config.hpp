// Experiment configuration: one JSON file, parsed strictly (unknown keys and wrong types are
// errors naming the file and the key path), with `--set a.b.c=value` overrides applied to
// the JSON before parsing. See docs/configuration.md for every key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/time.hpp"
#include "gpumux/engine/tuning_spec.hpp"
#include "gpumux/io/byte_sink.hpp"
#include "gpumux/io/workload.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/topology.hpp"

namespace gpumux {

struct DeviceConfig {
  std::string profile;                        ///< name in traces/devices/
  std::optional<std::uint64_t> memory_bytes;  ///< override of the profile's capacity
};

struct ExperimentConfig {
  std::string file;  ///< where it was read from (for messages)
  std::string name;
  std::string description;
  std::string platform = "sim";
  nlohmann::json platform_params = nlohmann::json::object();
  std::uint64_t seed = 1;
  std::vector<DeviceConfig> devices;
  /// Set when the config describes a "cluster" (then `devices` is its expansion, node-major:
  /// device i is on node i / gpus_per_node); unset for a plain "devices" list.
  std::optional<Topology> topology;
  CostOptions cost;
  std::string policy;
  nlohmann::json policy_params = nlohmann::json::object();
  std::vector<JobSpec> jobs;  ///< the whole workload, expanded (files, inline jobs, services,
                              ///< tuning jobs' trial slots)
  /// workload.tuning, in order (their trial slots are in `jobs`).
  std::vector<std::shared_ptr<const TuningSpec>> tuning;
  TimeNs horizon_ns = kTimeNever;
  std::string out_dir;         ///< default: results/<name> (relative: against the repository root)
  std::string out_dir_origin;  ///< names where out_dir came from, for messages ("x.json: out_dir")
  bool replace_results = false;  ///< may replace an earlier gpumux result there (--force)
  std::string result_owner;      ///< recorded in the result's marker: "sweep <name>/<label>"
  bool write_trace = true;       ///< trace.json (Chrome/Perfetto)
  bool write_events = true;  ///< events.jsonl (summaries are computed from the events either way)
  Compression compress = Compression::None;  ///< of events.jsonl and trace.json ("compress")
  /// What the run's result files may put on disk ("max_output_gib"); unset: the default for
  /// the free space of the results file system (output_budget.hpp).
  std::optional<std::uint64_t> max_output_bytes;
  nlohmann::json resolved;  ///< the JSON after overrides (written as config.resolved.json)
  /// Notes for the user found while loading (a deprecated path resolution); the CLI prints
  /// them as warnings. Not an input of the run.
  std::vector<std::string> warnings;
};

/// Applies one "a.b.c=value" override to a JSON document. The value is parsed as JSON when it
/// parses (numbers, true/false, objects), else taken as a string. Array elements are
/// addressed by index ("devices.0.profile"). A null value ("limit=null") removes the key, so
/// the reader uses its default; removing a missing key changes nothing. Throws ConfigError on a bad
/// path, on an assignment that is not valid UTF-8, and on a value or path nested deeper than
/// kMaxJsonDepth.
void apply_override(nlohmann::json& doc, const std::string& assignment, const std::string& file);

/// Loads, overrides, validates and expands a config. `repo_root` resolves relative paths
/// (models, device profiles, workload and arrival files). Throws ConfigError / TraceError.
[[nodiscard]] ExperimentConfig load_experiment(const std::filesystem::path& file,
                                               const std::vector<std::string>& overrides,
                                               const std::filesystem::path& repo_root);

/// The same from the text of a config file (parse_json_text's rules), then `overrides`.
[[nodiscard]] ExperimentConfig parse_experiment_text(std::string_view text, const std::string& file,
                                                     const std::vector<std::string>& overrides,
                                                     const std::filesystem::path& repo_root);

/// The same from an in-memory document (tests, sweeps).
[[nodiscard]] ExperimentConfig parse_experiment(nlohmann::json doc, const std::string& file,
                                                const std::filesystem::path& repo_root);

/// The folder holding gpumux's data: locate_data_root(start, current_executable()).dir
/// (data_root.hpp: $GPUMUX_ROOT, the install beside the program, then a checkout above
/// `start` or above the program). Throws UsageError naming the places searched.
[[nodiscard]] std::filesystem::path find_repo_root(const std::filesystem::path& start);

}  // namespace gpumux
