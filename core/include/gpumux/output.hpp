// Writing a run's results directory atomically: everything goes to a temporary sibling
// directory that is renamed into place only when complete, so a killed or failed run never
// leaves a directory that looks finished.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/events.hpp"
#include "gpumux/workload.hpp"

namespace gpumux {

struct RunOutputs {
  nlohmann::json resolved_config;
  nlohmann::json run_info;  ///< git revision, platform description, seed, build flags
  const EventLog* log = nullptr;
  const std::vector<JobSpec>* jobs = nullptr;
  std::size_t device_count = 1;
  bool write_trace = true;
  bool write_events = true;
};

/// Writes config.resolved.json, events.jsonl, summary.json, summary.csv, trace.json and
/// run.json into `dir` (replacing it). Returns the summary.
nlohmann::json write_run_outputs(const std::filesystem::path& dir, const RunOutputs& outputs);

/// Writes the Chrome/Perfetto trace: one track per device stream and one per job.
void write_chrome_trace(const EventLog& log, const std::vector<JobSpec>& jobs, std::ostream& out);

/// Writes `content` to `file` atomically (temporary file + rename).
void write_file_atomic(const std::filesystem::path& file, const std::string& content);

/// Build and source provenance compiled into the binary.
[[nodiscard]] nlohmann::json build_info();

}  // namespace gpumux
