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

#include "gpumux/cost_model.hpp"
#include "gpumux/enum_names.hpp"
#include "gpumux/json_reader.hpp"
#include "gpumux/registry.hpp"
#include "gpumux/request_variability.hpp"
#include "gpumux/time.hpp"

namespace gpumux {

enum class JobKind : std::uint8_t { Training, Inference };
inline constexpr EnumNames<JobKind, 2> kJobKindNames{
    {{JobKind::Training, "training"}, {JobKind::Inference, "inference"}}};
[[nodiscard]] constexpr std::string_view to_string(JobKind k) noexcept {
  return kJobKindNames.name(k);
}

/// A closed-loop client: the next request is sent `think_ns` after the previous one
/// completes, only during "on" phases of a periodic on/off schedule (PipeSwitch's
/// scheduling-cycle experiment). The Engine generates these arrivals as the run proceeds.
struct ClosedLoop {
  bool enabled = false;
  std::uint64_t count = 0;  ///< max requests; 0 = until end_ns
  DurationNs think_ns = 0;
  TimeNs start_ns = 0;         ///< first request
  TimeNs end_ns = kTimeNever;  ///< no request is sent at or after this time
  DurationNs on_ns = 0;        ///< 0 = always on
  DurationNs off_ns = 0;
  /// The earliest time >= t at which a request may be sent, or kTimeNever.
  [[nodiscard]] TimeNs next_send_time(TimeNs t) const noexcept;
};

struct TrialSlot;  // tuning_spec.hpp

struct JobSpec {
  std::string name;
  JobKind kind = JobKind::Training;
  std::string model;
  std::uint32_t batch = 1;
  TimeNs arrival_ns = 0;
  // training
  std::uint64_t iterations = 0;
  Optimizer optimizer = Optimizer::Momentum;
  // inference
  std::vector<TimeNs> requests_ns;  ///< absolute request arrival times, sorted, >= arrival_ns
  DurationNs slo_ns = 0;            ///< 0 = no SLO
  ClosedLoop closed_loop;           ///< when enabled, requests_ns is empty
  /// Per-request variability of a dynamic model (D38); null = every request is the same.
  /// Shared by copies of the spec; resolved against the model before a run.
  std::shared_ptr<RequestVariability> dynamic;
  // common
  int priority = 0;  ///< larger = more important
  double weight = 1.0;
  std::string tenant;
  DurationNs expected_duration_ns = 0;  ///< user hint (SRTF-style policies); 0 = unknown
  /// Set when the job is a trial slot of a tuning job (tuning_spec.hpp): it does not arrive
  /// from the trace, and its iterations are set when the tuner hands it a trial.
  std::shared_ptr<const TrialSlot> trial;
};

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
