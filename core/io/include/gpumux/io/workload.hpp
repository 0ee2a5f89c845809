// Workloads: the jobs of an experiment. A training job runs a number of iterations; an
// inference service answers requests that arrive over time. Jobs come from a JSONL file
// (traces/formats.md) and/or from registered arrival generators named in the config.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/job_spec.hpp"
#include "gpumux/api/registry.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/request_variability.hpp"

namespace gpumux {

/// Parses a job JSONL file strictly. Relative request files resolve against `repo_root`.
/// Throws TraceError "<file>: line N: <key>: <problem>".
[[nodiscard]] std::vector<JobSpec> load_jobs_jsonl(const std::filesystem::path& file,
                                                   const std::filesystem::path& repo_root);

/// The same from the text of a JSONL file (no filesystem access except for request files).
[[nodiscard]] std::vector<JobSpec> parse_jobs_jsonl_text(std::string_view text,
                                                         const std::string& file,
                                                         const std::filesystem::path& repo_root);

/// Reads the fields every job has, by one rule for a JSONL line, a config's workload.jobs and
/// workload.services (docs/configuration.md): name, kind (when `read_kind`; otherwise
/// job.kind is kept), model, batch (default 1), arrival_s (default 0), priority, weight,
/// tenant, expected_duration_s, and slo_ms (inference only). Errors are the reader's.
void read_job_fields(JsonReader& r, JobSpec& job, bool read_kind);

/// Parses one job object (as in a JSONL line or a config's "jobs" array). `where` prefixes
/// error messages.
[[nodiscard]] JobSpec parse_job(const nlohmann::json& j, const std::string& file,
                                const std::string& where, const std::filesystem::path& repo_root);

/// Reads an arrivals CSV (header starting with `arrival_s`); returns seconds, sorted. At most
/// kMaxTraceBytes of a regular file; throws TraceError "<file>: line N: <problem>".
[[nodiscard]] std::vector<double> load_arrivals_csv(const std::filesystem::path& file);
/// The same from the text of an arrivals CSV.
[[nodiscard]] std::vector<double> parse_arrivals_csv_text(std::string_view text,
                                                          const std::string& file);

/// Arrival-time generators (Poisson, gamma, periodic on/off, closed loop, replay) register
/// here. `params` is the generator's config object; times are absolute ns, sorted.
class ArrivalGenerator {
 public:
  virtual ~ArrivalGenerator() = default;
  /// Open-loop arrival times (absolute ns, sorted). `default_start_ns` is the service's
  /// arrival time, used when the generator has no start of its own.
  [[nodiscard]] virtual std::vector<TimeNs> generate(std::mt19937_64& rng,
                                                     TimeNs default_start_ns) const = 0;
  /// Closed-loop generators return their description instead (generate() then returns {}).
  [[nodiscard]] virtual std::optional<ClosedLoop> closed_loop(TimeNs /*default_start_ns*/) const {
    return std::nullopt;
  }
};

struct GeneratorArgs {
  nlohmann::json params;
  std::string file;      ///< config file, for error messages
  std::string key_path;  ///< e.g. "workload.services[0].arrivals"
  std::filesystem::path repo_root;
};

using GeneratorRegistry = Registry<ArrivalGenerator, const GeneratorArgs&>;

#define GPUMUX_REGISTER_GENERATOR(NAME, TYPE, SUMMARY)                    \
  [[maybe_unused]] static const bool gpumux_generator_registered_##TYPE = \
      ::gpumux::GeneratorRegistry::instance().add(                        \
          NAME, SUMMARY,                                                  \
          [](const ::gpumux::GeneratorArgs& a) { return std::make_unique<TYPE>(a); })

/// Validates a workload: unique names, known models, sorted arrivals. Throws TraceError.
void validate_jobs(const std::vector<JobSpec>& jobs, const std::string& file);

}  // namespace gpumux
