// Shared fixtures of the unit tests (defined in unit_fixtures.cpp): temporary folders, a
// hand-written model and device profile, and a throw-away repository root holding them, so
// config and workload tests do not depend on the real zoo or the real device profiles.
//
// Thread rules: test-thread only. Folders made here are removed when the test process exits.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"

namespace gpumux::fixtures {

/// A fresh empty folder under the system's temporary folder; `tag` goes into its name.
[[nodiscard]] std::filesystem::path make_temp_dir(const std::string& tag);
/// Writes `text` to `path`, creating its parent folders.
void write_file(const std::filesystem::path& path, const std::string& text);
/// A three-layer model (conv, BatchNorm, linear) with hand-summed totals, named `name`.
[[nodiscard]] nlohmann::json model_json(const std::string& name);
/// A GPU device profile with round numbers, named `name`.
[[nodiscard]] nlohmann::json profile_json(const std::string& name);
/// A repository root with traces/models/{small,tiny}.json, traces/devices/{gpu-a,gpu-b}.json,
/// traces/arrivals/steady.csv and traces/workloads/mixed.jsonl.
[[nodiscard]] std::filesystem::path make_repo(const std::string& tag);

/// Writes `doc` to a fresh temporary file named `file_name` and loads it with `load(path)`;
/// returns the TraceError's message without its "<path>: " prefix ("(file not named) ..." when
/// the message does not start with the path, "(no error)" when loading succeeds).
template <class Load>
[[nodiscard]] std::string trace_error(const nlohmann::json& doc, const std::string& file_name,
                                      Load load) {
  const auto path = make_temp_dir("trace_error") / file_name;
  write_file(path, doc.dump());
  try {
    (void)load(path);
  } catch (const TraceError& e) {
    const std::string msg = e.what();
    const std::string prefix = path.string() + ": ";
    return msg.rfind(prefix, 0) == 0 ? msg.substr(prefix.size()) : "(file not named) " + msg;
  }
  return "(no error)";
}

}  // namespace gpumux::fixtures
