// Helpers for gpumux tests: building configs in code, running them, and checking the
// invariants every policy must keep (the conformance suite uses these; so do the realtime
// tests on the emulated platform).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/io/experiment.hpp"

namespace gpumux::test {

[[nodiscard]] std::filesystem::path source_dir();

/// A config document with defaults filled in: name, platform sim, one V100 (plus extra
/// devices when given), the named policy, and the workload given.
[[nodiscard]] nlohmann::json make_config(const std::string& policy, nlohmann::json workload,
                                         std::vector<std::string> devices = {"v100-pcie3x16"});

/// Parses and runs a config document in memory (no results directory).
[[nodiscard]] ExperimentResult run_config(const nlohmann::json& doc);

/// The standard small traces every policy must handle (traces/workloads/small_*.jsonl).
[[nodiscard]] std::vector<std::string> standard_traces();

/// Checks the invariants on a run's events; returns the violations (empty = conformant):
/// every job finishes or is rejected with a reason; no compute op starts before its weights
/// are loaded on that device or before the job's previous compute op ended (a data-parallel
/// job's: its previous one on that device); device memory
/// never exceeds capacity; time never goes back per stream; ops end after they start.
[[nodiscard]] std::vector<std::string> check_invariants(const ExperimentResult& result,
                                                        const std::vector<std::uint64_t>& capacity,
                                                        const std::vector<bool>& is_cpu,
                                                        bool virtual_time);

/// events.jsonl of a run, as a string.
[[nodiscard]] std::string events_jsonl(const ExperimentResult& result);

}  // namespace gpumux::test
