// What SummaryAccumulator keeps between events (internal to gpumux_io): per job and per
// request, per device busy time, counters. O(jobs + requests + ops in flight + metric
// samples); nothing per event.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "busy_time.hpp"
#include "gpumux/api/events.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux::summary_detail {

struct JobAcc {
  TimeNs arrival = -1, first_start = -1, end = -1;
  std::string status = "unfinished";    ///< the JobEnd label, as written
  std::optional<EndReason> end_reason;  ///< from the JobEnd label; none before it
  std::uint64_t iterations = 0;
  TimeNs gpu_ns = 0;
  std::vector<double> latencies_ms;
  std::uint64_t slo_met = 0;
  std::uint64_t dropped = 0;            ///< requests the policy dropped (RequestDrop)
  std::vector<TimeNs> arrivals;         ///< logged request arrivals
  std::vector<TimeNs> served_arrivals;  ///< arrival times of the served requests
  std::uint64_t in_phase = 0;           ///< closed loop: ended inside the phase it was sent in
};

/// One tuning job (workload.tuning), from its TrialEpoch and TuningEnd events.
struct TuningAcc {
  std::uint64_t epochs = 0;     ///< TrialEpoch events
  std::uint64_t failed = 0;     ///< TrialFailed events
  std::optional<double> best;   ///< best metric reported, in the tuning's mode
  TimeNs first_target = -1;     ///< first report reaching the target
  TimeNs end = -1;              ///< its TuningEnd
  bool target_reached = false;  ///< as the TuningEnd says
};

struct DeviceAcc {
  BusyUnion compute, h2d, d2h;
  std::int64_t mem_now = 0, mem_peak = 0;
  std::uint64_t slices = 0;
};

struct State {
  const std::vector<JobSpec>* jobs = nullptr;
  bool bounded = true;  ///< settle busy time as ops end (streaming); off: keep every piece
  std::vector<JobAcc> acc;
  std::vector<DeviceAcc> devices;
  InFlightOps in_flight;
  std::map<std::string, std::vector<double>, std::less<>> metrics;
  std::uint64_t preemptions = 0, migrations = 0, contexts_started = 0, dropped = 0, aborted = 0;
  TimeNs end_ns = 0, last_job_end = 0;
  std::uint64_t runtime_events = 0;
  std::uint64_t events = 0;
  std::vector<TuningAcc> tuning;  ///< by TuningSpec::index
};

/// The summary's "tuning" section (summary_tuning.cpp): one object per tuning job.
[[nodiscard]] nlohmann::json tuning_section(const State& st);

/// A service's requests (summary_requests.cpp): arrived before the run's end, never served,
/// and unserved with their SLO deadline passed before the end.
struct RequestCounts {
  std::uint64_t arrived = 0, unserved = 0, slo_missed_unserved = 0;
};
/// Counts `spec`'s requests up to `end_ns`; sorts a.served_arrivals.
[[nodiscard]] RequestCounts count_requests(const JobSpec& spec, JobAcc& a, TimeNs end_ns);
/// Number of "on" phases of a closed-loop client that began before `until` (and before the
/// client's end).
[[nodiscard]] std::uint64_t phases_begun(const ClosedLoop& c, TimeNs until);

}  // namespace gpumux::summary_detail
