// The trial lifecycle every tuning executor shares (trial_per_gpu, fluid, dynamic_fluid,
// fluid_band): a job arrives (rejected on a platform without a GPU) and waits; a placed job's
// ops are kept flowing; a trial paused at its budget leaves its GPU at the iteration end (its
// checkpoint is evicted, Ray Tune pauses by checkpointing); a finished or
// stopped job frees its place; a resumed trial keeps its place if it never left, else waits
// again. After every freeing or waiting change the executor's advance() places jobs.
//
// A trial that does not fit (a load or dispatch of it runs out of device memory) has failed,
// as a trial that errors in Ray Tune: its place is released and it is rejected with the
// allocation's message, which tells its tuner (TuningDriver), and the run goes on. Memory a
// command could not get changes nothing (D21), so nothing is left half placed.
//
// What a derived executor supplies is its placement rule only: where a job runs (home_of),
// forgetting a place (release) and placing waiting jobs (advance). Optional hooks: keep (how a
// placed job's work is dispatched) and on_running_iteration_end (a running trial at an
// iteration boundary, the point where Fluid applies a resize, Fluid Algorithm 2).
//
// Thread rules: a policy object is driven by one engine thread; nothing here is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>

#include "gpumux/api/policy.hpp"

namespace gpumux::policies {

class TrialExecutor : public Policy {
 public:
  void on_job_arrival(Context& ctx, JobId job) override;
  void on_request_arrival(Context& ctx, JobId job, RequestId request) override;
  void on_op_complete(Context& ctx, const OpRecord& r) override;
  void on_iteration_end(Context& ctx, JobId job) override;
  void on_job_finish(Context& ctx, JobId job) override;
  void on_job_resumed(Context& ctx, JobId job) override;

 protected:
  /// `depth`: ops of each placed job queued or in flight on its compute stream.
  explicit TrialExecutor(std::size_t depth) : depth_(depth) {}

  /// Where a placed job runs: the GPUs it holds (one, or its replicas' GPUs when it trains
  /// data-parallel, ReplicaFacet::set_replicas; the storage belongs to the derived executor and
  /// lives as long as the placement) and the compute stream its work is dispatched on (the
  /// primary replica's).
  struct Home {
    std::span<const DeviceId> gpus;
    StreamId compute{};
  };

  /// The job's home, or nullopt when it is not placed (waiting, paused and evicted, done).
  [[nodiscard]] virtual std::optional<Home> home_of(JobId job) = 0;
  /// Forgets the job's place (no-op if it has none); its memory is the caller's business.
  virtual void release(JobId job) = 0;
  /// Places waiting jobs (waiting_) by the executor's rule.
  virtual void advance(Context& ctx) = 0;
  /// Dispatches a placed job's work; default: keep `depth` ops on its home's compute stream.
  virtual void keep(Context& ctx, JobId job);
  /// A placed, unpaused trial ended an iteration. Default: nothing.
  virtual void on_running_iteration_end(Context& /*ctx*/, JobId /*job*/) {}

  /// Runs `place` (the commands that place or feed `job`: loads, replicas, dispatches). When
  /// they run out of device memory and `job` is a trial, the trial fails: release(job), then
  /// Context::reject with the allocation's message; returns false. An ordinary job's
  /// OutOfMemory propagates (the run fails, as for any policy).
  bool run_or_fail(Context& ctx, JobId job, const std::function<void()>& place);
  /// keep(job) under run_or_fail; a failure frees a place, so advance() runs.
  void keep_or_fail(Context& ctx, JobId job);

  [[nodiscard]] std::size_t depth() const noexcept { return depth_; }
  /// For executors that read `depth` among other params after construction.
  void set_depth(std::size_t depth) noexcept { depth_ = depth; }

  std::deque<JobId> waiting_;  ///< arrived or resumed jobs without a place, in arrival order

 private:
  std::size_t depth_;
};

}  // namespace gpumux::policies
