// Metrics computed from the event log only, so simulated and real runs are summarised by the
// same code: request latency percentiles, SLO attainment and goodput, throughput, JCT and
// makespan, job outcomes (rejected, never started), device and link utilisation, memory peaks,
// switch counts, fairness. docs/metrics.md defines every value.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/events.hpp"
#include "gpumux/workload.hpp"

namespace gpumux {

/// Nearest-rank percentile (p in [0, 100]) of unsorted samples; 0 for none.
[[nodiscard]] double percentile(std::vector<double> samples, double p);
/// Jain's fairness index of non-negative shares; 1 for none.
[[nodiscard]] double jain_index(const std::vector<double>& shares);

/// Version of the summary's contents. A sweep re-runs a point whose summary was made with
/// another version (run_fingerprint.cpp), so figures never mix old and new metrics. Bump it
/// when summary.json or summary.csv gain, lose or change a value.
inline constexpr int kSummaryFormat = 2;

/// Summary as JSON (summary.json): "run", "jobs" (one object per job), "devices",
/// "inference", "training", "jobs_overall", "fairness", "policy_metrics". Values that do not
/// exist (latency of no request, a rate over no time) are null, never 0.
[[nodiscard]] nlohmann::json summarize(const EventLog& log, const std::vector<JobSpec>& jobs,
                                       std::size_t device_count);

/// One CSV row per job plus an "ALL" row (summary.csv).
void write_summary_csv(const nlohmann::json& summary, std::ostream& out);

}  // namespace gpumux
