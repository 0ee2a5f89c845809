// Metrics computed from the event log only, so simulated and real runs are summarised by the
// same code: request latency percentiles, SLO attainment, throughput, JCT and makespan, device
// and link utilisation, memory peaks, switch counts, fairness.
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

/// Summary as JSON (summary.json): "run", "jobs" (one object per job), "devices",
/// "inference", "training", "policy_metrics".
[[nodiscard]] nlohmann::json summarize(const EventLog& log, const std::vector<JobSpec>& jobs,
                                       std::size_t device_count);

/// One CSV row per job plus an "ALL" row (summary.csv).
void write_summary_csv(const nlohmann::json& summary, std::ostream& out);

}  // namespace gpumux
