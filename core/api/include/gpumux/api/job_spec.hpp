// A job as the workload describes it, before it runs: a training job runs a number of
// iterations; an inference service answers requests that arrive over time. Plain data: the
// parsers are in gpumux/io/workload.hpp, the engine's running state in job_state.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/time.hpp"
#include "gpumux/api/work.hpp"

namespace gpumux {

struct RequestVariability;  // gpumux/model/request_variability.hpp

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

}  // namespace gpumux
