// The Engine: pulls jobs and requests from the workload, calls the policy's hooks on the
// runtime thread, validates and applies the commands they issue, turns device completions
// into job progress, and emits every event. It knows nothing of CUDA or of virtual time: the
// same Engine drives "sim", "emulated" and "cuda".
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "gpumux/api/event_stream.hpp"
#include "gpumux/api/events.hpp"
#include "gpumux/api/job_spec.hpp"
#include "gpumux/api/platform.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/topology.hpp"

namespace gpumux {

struct EngineOptions {
  TimeNs horizon_ns = kTimeNever;  ///< stop at this time; unfinished jobs end as "horizon"
  CostOptions cost;
  std::uint64_t seed = 1;
  /// The cluster's links (a config's "cluster", D39), for data-parallel jobs' all-reduce.
  /// Absent (a plain devices list): one node, its GPU-to-GPU link each profile's peer link.
  std::optional<Topology> topology;
};

struct RunResult {
  TimeNs end_ns = 0;
  std::uint64_t runtime_events = 0;  ///< callbacks the runtime executed
  std::size_t jobs_finished = 0;
  std::size_t jobs_rejected = 0;
  std::size_t jobs_unfinished = 0;  ///< cut by the horizon
};

class EngineImpl;

class Engine {
 public:
  /// `platform`, `policy` and `models` must outlive the Engine.
  Engine(Platform& platform, Policy& policy, std::vector<JobSpec> jobs, const ModelSource& models,
         EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Runs the experiment to completion (or the horizon). Throws PolicyError, OutOfMemory
  /// (uncaught by the policy), CudaError.
  RunResult run();
  /// Sends every event, as it is emitted, to `sink` too (before run(); `sink` must outlive
  /// it). A sink's exception (a write error) ends the run.
  void add_sink(EventSink& sink);
  /// Whether the events are also kept in memory for log() / take_log() (default: yes; before
  /// run()). Off, the run's memory does not grow with its events.
  void keep_log(bool keep) noexcept;
  [[nodiscard]] const EventLog& log() const noexcept;
  /// Moves the event log out (after run()).
  [[nodiscard]] EventLog take_log() noexcept;
  [[nodiscard]] const std::vector<JobSpec>& jobs() const noexcept;

 private:
  std::unique_ptr<EngineImpl> impl_;
};

}  // namespace gpumux
