// SwitchFlow's policy class, its parameters and its records of jobs and GPUs. switchflow.cpp
// holds the notes, the hooks, the per-GPU token and the CPU versions; placement.cpp the device
// each job runs on and the moves of its state there.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_runner.hpp"

namespace gpumux::policies::switchflow {

enum class SubgraphScope : std::uint8_t { Iteration, Pass };
inline constexpr EnumNames<SubgraphScope, 2> kSubgraphNames{
    {{SubgraphScope::Iteration, "iteration"}, {SubgraphScope::Pass, "pass"}}};

/// What a placement attempt did.
enum class MoveResult : std::uint8_t { Moved, Wait, NoFit };

class SwitchFlow final : public Policy {
 public:
  static const ParamSpecs& param_specs();

  explicit SwitchFlow(const PolicyArgs& args);
  [[nodiscard]] std::string_view name() const noexcept override { return "switchflow"; }

  void on_start(Context& ctx) override;

  void on_job_arrival(Context& ctx, JobId) override;
  void on_request_arrival(Context& ctx, JobId job, RequestId) override;
  void on_op_complete(Context& ctx, const OpRecord& r) override;
  void on_request_complete(Context& ctx, JobId, RequestId) override;
  void on_iteration_end(Context& ctx, JobId) override;
  void on_job_finish(Context& ctx, JobId job) override;
  void on_timer(Context& ctx, TimerId, std::uint64_t tag) override;

 private:
  struct Info {
    std::uint64_t seq = 0;          ///< arrival order
    std::optional<DeviceId> where;  ///< the device whose version runs its subgraphs
    bool engine_knows = false;      ///< the engine's job.device == where
    bool moving = false;            ///< a migrate/load into `where` is in flight
    bool migrating = false;         ///< that copy is a migrate() (else a load from the host)
    DeviceId move_from{};
    TimeNs move_start_ns = 0;
    std::optional<DeviceId> evict_from;  ///< stale copy to free once its ops are done
    std::set<DeviceId> no_fit;           ///< devices it did not fit on (until memory frees)
    TimeNs last_busy_ns = 0;
    TimeNs last_grant_ns = -1;
    std::map<DeviceId, StreamId> cpu_streams;
  };
  struct Gpu {
    StreamId compute{}, load{}, evac{};
    std::optional<JobId> holder;  ///< the token: whose subgraph is in flight
    bool preempted = false;       ///< the holder was told to stop
    TimeNs preempt_ns = 0;
  };

  // ---- reconcile: placement, tokens, dispatch ------------------------------------------------

  void reconcile(Context& ctx);

  /// Notices copies into `where` that ended (from the residency, whatever the hook order).
  void settle_moves(Context& ctx);

  [[nodiscard]] static bool busy(const Context& ctx, JobId j);

  /// Whether a job still claims its GPU against lower priorities.
  [[nodiscard]] bool present(const Context& ctx, JobId j);

  [[nodiscard]] std::vector<JobId> active_by_priority(const Context& ctx);

  /// The device every active job should run on: the first in the ranking that it fits on and
  /// that no present job of higher priority claims (a CPU is never claimed: I2).
  [[nodiscard]] std::map<JobId, std::optional<DeviceId>> desired_devices(Context& ctx);

  /// One placement round, lowest priority first (so displaced jobs start leaving before the
  /// jobs that displace them need the memory). Returns whether the desired placement changed.
  bool place_jobs(Context& ctx);

  /// Whether memory on `d` is about to be freed by a job leaving it.
  [[nodiscard]] bool freeing(DeviceId d, const std::map<JobId, std::optional<DeviceId>>& desired);

  MoveResult move(Context& ctx, JobId j, DeviceId to,
                  const std::map<JobId, std::optional<DeviceId>>& desired);

  /// Drops the job's queued work on `device` (its issued ops finish).
  void stop_compute(Context& ctx, JobId j, DeviceId device);

  /// Frees stale copies of jobs that were re-placed before running where they were.
  void finish_evictions(Context& ctx);

  // ---- the per-GPU token -------------------------------------------------------------------

  void preempt_holder(Context& ctx, Gpu& g);

  void schedule_gpu(Context& ctx, DeviceId d);

  [[nodiscard]] static bool resident_here(const Context& ctx, JobId j, DeviceId d);

  /// Jobs with work on GPU `d`, in token order: priority, then those whose state is already
  /// there (a job still being copied in is next only when nothing of its class or above can
  /// run: the GPU then waits for the copy), then least recently served, then arrival.
  [[nodiscard]] std::vector<JobId> waiting_jobs(const Context& ctx, DeviceId d);

  /// Dispatches the rest of the job's current subgraph (its executor's ready queue).
  void dispatch_subgraph(Context& ctx, JobId j, StreamId stream);

  /// Nothing runs on GPU `d` and every waiting job lacks memory for its activations: move the
  /// lowest-priority one down the ranking; with nowhere to go, it waits for the other jobs
  /// there to free memory, or is rejected when they are all stuck the same way.
  void break_memory_deadlock(Context& ctx, DeviceId d, const std::vector<JobId>& no_room);

  // ---- CPU versions (no token) ---------------------------------------------------------------

  void pump_cpu(Context& ctx, JobId j);

  // ---- bookkeeping ---------------------------------------------------------------------------

  void arm_idle_timers(Context& ctx);

  void memory_freed(DeviceId d);

  void forget(JobId j);

  void reject(Context& ctx, JobId j, const std::string& reason);

  SubgraphScope scope_ = SubgraphScope::Iteration;
  std::uint32_t layers_per_op_ = 1;
  std::uint32_t in_flight_ = 2;
  bool migrate_ = true;
  DurationNs return_idle_ns_ = -1;

  std::vector<DeviceId> ranked_;
  std::vector<Gpu> gpus_;  ///< by device index (unused entries for CPUs)
  std::map<JobId, Info> jobs_;
  std::set<TimeNs> idle_timers_;
};

}  // namespace gpumux::policies::switchflow
