// The summary's "tuning" section (summary format 4; trials_failed since format 6,
// docs/metrics.md): per tuning job, from its trials' events only (JobArrival, OpEnd,
// TrialEpoch, TrialFailed, TuningEnd).
#include "gpumux/api/time.hpp"
#include "gpumux/engine/tuning_spec.hpp"
#include "summary_state.hpp"

namespace gpumux::summary_detail {

nlohmann::json tuning_section(const State& st) {
  const std::vector<JobSpec>& jobs = *st.jobs;
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t t = 0; t < st.tuning.size(); ++t) {
    const TuningSpec* spec = nullptr;
    std::uint64_t started = 0;
    DurationNs gpu_ns = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      if (!jobs[j].trial || jobs[j].trial->tuning->index != t) continue;
      spec = jobs[j].trial->tuning.get();
      if (st.acc[j].arrival >= 0) ++started;
      gpu_ns += st.acc[j].gpu_ns;
    }
    if (spec == nullptr) continue;
    const TuningAcc& a = st.tuning[t];
    const nlohmann::json none(nullptr);
    out.push_back(
        {{"name", spec->name},
         {"tuner", spec->tuner},
         {"mode", std::string(kMetricModeNames.name(spec->mode))},
         {"trials_started", started},
         {"trials_failed", a.failed},
         {"epochs", a.epochs},
         {"best_metric", a.best ? nlohmann::json(*a.best) : none},
         {"target", spec->target ? nlohmann::json(*spec->target) : none},
         {"target_reached", a.first_target >= 0},
         {"time_to_target_s", a.first_target >= 0
                                  ? nlohmann::json(ns_to_seconds(a.first_target - spec->arrival_ns))
                                  : none},
         {"makespan_s",
          a.end >= 0 ? nlohmann::json(ns_to_seconds(a.end - spec->arrival_ns)) : none},
         {"gpu_time_s", ns_to_seconds(gpu_ns)}});
  }
  return out;
}

}  // namespace gpumux::summary_detail
