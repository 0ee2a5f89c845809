// Metrics computed from the event log only, so simulated and real runs are summarised by the
// same code: request latency percentiles, SLO attainment and goodput, throughput, JCT and
// makespan, job outcomes (rejected, never started), device and link utilisation, memory peaks,
// switch counts, fairness. docs/metrics.md defines every value.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/events.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux {

/// What happened to a job, in one word (summary.json's "outcome" and the keys of
/// "jobs_overall" / "training"): it finished, was rejected, ran and was still running or
/// waiting at the end (unfinished), arrived but nothing of it ever ran (never_started), or the
/// run ended before its arrival (not_arrived).
enum class JobOutcome : std::uint8_t {
  Finished,
  Rejected,
  Unfinished,
  NeverStarted,
  NotArrived,
  Stopped  ///< a tuning trial its tuner stopped (EndReason::Stopped)
};
/// One name table serves to_string and the summary's keys.
inline constexpr std::array<std::pair<JobOutcome, std::string_view>, 6> kJobOutcomeNames{{
    {JobOutcome::Finished, "finished"},
    {JobOutcome::Rejected, "rejected"},
    {JobOutcome::Unfinished, "unfinished"},
    {JobOutcome::NeverStarted, "never_started"},
    {JobOutcome::NotArrived, "not_arrived"},
    {JobOutcome::Stopped, "stopped"},
}};
[[nodiscard]] constexpr std::string_view to_string(JobOutcome o) noexcept {
  for (const auto& [v, name] : kJobOutcomeNames) {
    if (v == o) return name;
  }
  return "?";
}

/// Nearest-rank percentile (p in [0, 100]) of unsorted samples; 0 for none.
[[nodiscard]] double percentile(std::vector<double> samples, double p);
/// Jain's fairness index of non-negative shares; 1 for none.
[[nodiscard]] double jain_index(const std::vector<double>& shares);

/// Version of the summary's contents. A sweep re-runs a point whose summary was made with
/// another version (run_fingerprint.cpp), so figures never mix old and new metrics. Bump it
/// when summary.json or summary.csv gain, lose or change a value.
// 3: finish, late and drop rates, latency CDF (D38); 4: tuning jobs ("tuning", "stopped");
// 5: training.samples_per_s renamed samples_per_s_over_run, summary.csv quoted (RFC 4180) with
// identity columns and fixed numbers, its ALL row moved to summary_run.csv (docs/outputs.md);
// 6: tuning[].trials_failed, and "non_finite" when a number could not be written
inline constexpr int kSummaryFormat = 6;

namespace summary_detail {
struct State;
}

/// The summary computed as events arrive (an EventSink): feed every event of a run in emission
/// order, then finish(). Memory is O(jobs + requests + ops in flight + policy-metric samples),
/// not O(events): per-device busy time is settled up to the earliest op still in flight, so a
/// run's summary needs no event log. Runtime thread only.
class SummaryAccumulator final : public EventSink {
 public:
  /// `jobs` must outlive the accumulator. `bounded` settles busy time as ops end, which needs
  /// the Engine's order (every op's OpSubmit before its OpEnd, submissions in time order);
  /// without it every busy piece is kept (exact for events in any order).
  SummaryAccumulator(const std::vector<JobSpec>& jobs, std::size_t device_count,
                     bool bounded = true);
  ~SummaryAccumulator() override;
  SummaryAccumulator(const SummaryAccumulator&) = delete;
  SummaryAccumulator& operator=(const SummaryAccumulator&) = delete;

  void on_event(const Event& e) override;
  /// summary.json's content (see summarize). Once.
  [[nodiscard]] nlohmann::json finish();

  /// Busy-time pieces not yet settled (tests: stays small while a run streams).
  [[nodiscard]] std::size_t open_busy_pieces() const noexcept;
  /// Intervals that started before the settled point (0 for the Engine's streams).
  [[nodiscard]] std::uint64_t late_intervals() const noexcept;

 private:
  std::unique_ptr<summary_detail::State> s_;
  bool finished_ = false;
};

/// Summary as JSON (summary.json): "run", "jobs" (one object per job), "devices",
/// "inference", "training", "jobs_overall", "fairness", "policy_metrics". Values that do not
/// exist (latency of no request, a rate over no time) are null, never 0. Feeds the log to a
/// SummaryAccumulator (unbounded: a log read from a file may be in any order).
[[nodiscard]] nlohmann::json summarize(const EventLog& log, const std::vector<JobSpec>& jobs,
                                       std::size_t device_count);

}  // namespace gpumux
