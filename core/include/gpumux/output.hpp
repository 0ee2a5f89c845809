// A run's result files: config.resolved.json, events.jsonl, summary.json, summary.csv,
// trace.json and run.json, written through a ResultWriter (result_dir.hpp), which makes the
// folder appear under its final name only when complete and never replaces a user's files.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/events.hpp"
#include "gpumux/result_writer.hpp"
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
  nlohmann::json identity;  ///< merged into the folder's marker (config fingerprint, version)
};

/// Writes the result files through `writer` and commits the folder. Returns the summary.
/// Throws gpumux::Error on a write failure (nothing appears under the final name).
nlohmann::json write_run_outputs(ResultWriter& writer, const RunOutputs& outputs);

/// Writes the Chrome/Perfetto trace: one track per device stream and one per job.
void write_chrome_trace(const EventLog& log, const std::vector<JobSpec>& jobs, std::ostream& out);

/// Build and source provenance compiled into the binary.
[[nodiscard]] nlohmann::json build_info();

}  // namespace gpumux
