// For the serving-engine tests (test_serving_engine.cpp, test_serving_requests.cpp): a small
// policy, "test_serving_batcher", that loads each service whole and dispatches its oldest
// waiting requests as one batch of `Plan::batch` requests whenever the service has nothing in
// flight; it can hold a request back (a timer) or drop it, and records what the Context says.
// Also: the ops and request events of a run's log, and the per-request work the engine draws.
//
// Thread rules: test thread only (the plan and the records are globals the policy reads).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/policy.hpp"
#include "gpumux/io/experiment.hpp"
#include "gpumux/model/model.hpp"

namespace gpumux::test {

/// What the batcher does in the next run.
struct ServingPlan {
  std::uint32_t batch = 1;  ///< requests per dispatch
  /// When not empty: the k-th dispatch serves sizes[k % size] requests, without waiting for
  /// the service's batch in flight (batches pipeline on the stream); `batch` is then unused.
  std::vector<std::uint32_t> sizes;
  std::vector<bool> drop;           ///< per request id: drop it at its arrival
  std::vector<DurationNs> hold_ns;  ///< per request id: serve it this long after arrival
  bool probe_refusals = false;      ///< try refused drop_request calls (counted)
  std::function<void(Context&, JobId)> at_arrival;  ///< reads the cost model while it lives
};

/// What the batcher saw in the last run.
struct ServingSeen {
  std::size_t refused = 0;                 ///< drop_request calls refused with PolicyError
  std::size_t refusals_changed_state = 0;  ///< refused calls after which a count had moved
  std::vector<TimeNs> deadlines;           ///< request_deadline per request id
  std::vector<TimeNs> arrivals;            ///< request_arrival per request id
  std::vector<DurationNs> batch_window;    ///< batch_times(job, batch).samples() at the end
  std::uint64_t batch_window_added = 0;
  std::vector<DurationNs> request_window;  ///< request_times(job).samples() at the end
  /// batch_times(job, size).samples() at the end, for each of ServingPlan::sizes.
  std::map<std::uint32_t, std::vector<DurationNs>> size_windows;
  std::map<std::string, DurationNs> costs;  ///< filled by ServingPlan::at_arrival
};

extern ServingPlan g_plan;
extern ServingSeen g_seen;

/// One inference service (arrival 0) on `model` at `batch` samples per request.
[[nodiscard]] nlohmann::json serving_service(const std::string& model, int batch,
                                             const std::vector<double>& requests_s);

/// Runs `service` alone under the batcher on one V100 (seed `seed`); clears g_seen first.
[[nodiscard]] ExperimentResult run_batcher(const nlohmann::json& service, std::uint64_t seed = 7);

/// A compute op of job 0 as its OpEnd logged it.
struct LoggedOp {
  LayerRange layers;
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  [[nodiscard]] DurationNs duration_ns() const noexcept { return end_ns - start_ns; }
};
[[nodiscard]] std::vector<LoggedOp> forward_ops(const ExperimentResult& r);
/// RequestEnd times by request id (requests never served are absent).
[[nodiscard]] std::map<std::uint64_t, TimeNs> request_ends(const ExperimentResult& r);

/// The work the engine draws for job `job`'s requests, in arrival order: the same generator
/// (request_sources.cpp: mt19937_64 seeded by the job's member of the RequestVariability
/// stream, gpumux/api/seed.hpp) and the same
/// distribution, resolved against `model`.
[[nodiscard]] std::vector<std::uint32_t> drawn_work(const nlohmann::json& dynamic,
                                                    const Model& model, std::uint64_t seed,
                                                    std::size_t job, std::size_t count);

}  // namespace gpumux::test
