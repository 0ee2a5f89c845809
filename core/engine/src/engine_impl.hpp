// EngineImpl: the Context (and its facets) policies talk to and the DeviceObserver devices
// report to.
// It validates commands, keeps the op/dependency table, contexts, streams and timers, and
// runs each job's state machine; the rest lives in classes it owns as plain members:
//   EngineEvents    (engine_events.hpp)   typed emitters over the event stream
//   HookQueue       (hook_queue.hpp)      policy hooks, delivered one at a time, never nested
//   Placement       (placement.hpp)       device memory, residency and layer offsets
//   RequestSources  (request_sources.hpp) job/request arrivals, open and closed loop
//   TuningDriver    (tuning_driver.hpp)   tuning jobs: tuners, trial slots, their decisions
//   ServingState    (serving_state.hpp)   execution-time windows, sequence-length variants
//   progress::      (job_progress.hpp)    cursor arithmetic, byte counts, cost estimates
// None of them knows EngineImpl. engine.cpp holds the run and the device notifications,
// engine_commands.cpp the policy commands, engine_dispatch.cpp dispatch (batches of
// requests), engine_serving.cpp dynamic services' batches, serving queries and drops.
//
// Re-entrancy: devices report completions synchronously (sometimes from inside a command a
// policy is issuing, e.g. preempt() reporting the ops it dropped). State changes are applied
// at once, so the policy always sees a consistent view; hook calls are queued.
//
// Internal to gpumux_engine. Thread rules: runtime thread only.
#pragma once

#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "clock_stall_guard.hpp"
#include "engine_events.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/engine/engine.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/op_cost_memo.hpp"
#include "hook_queue.hpp"
#include "job_progress.hpp"
#include "op_info.hpp"
#include "op_table.hpp"
#include "placement.hpp"
#include "request_sources.hpp"
#include "serving_state.hpp"
#include "tuning_driver.hpp"

namespace gpumux {

// The facets are bases before Context, so they exist when Context is given them.
class EngineImpl final : public MemoryFacet,
                         public ServingFacet,
                         public ReplicaFacet,
                         public StreamFacet,
                         public DeviceObserver,
                         public Context {
 public:
  EngineImpl(Platform& platform, Policy& policy, std::vector<JobSpec> jobs,
             const ModelSource& models, EngineOptions options);

  RunResult run();
  const EventLog& log() const noexcept { return events_.stream().log(); }
  EventLog take_log() noexcept { return events_.stream().take_log(); }
  EventStream& events() noexcept { return events_.stream(); }
  const std::vector<JobSpec>& jobs() const noexcept { return specs_; }

  // DeviceObserver
  void on_op_started(OpId op, TimeNs when_ns) override;
  void on_op_finished(const OpRecord& record) override;
  [[nodiscard]] bool is_complete(OpId op) const noexcept override {
    return ops_.complete(index_of(op));
  }
  void on_device_note(DeviceId device, TimeNs when_ns, std::string_view what,
                      std::int64_t value) override {
    events_.device_note(device, when_ns, what, value);
  }

  // Context: queries
  [[nodiscard]] TimeNs now() const noexcept override { return runtime_.now(); }
  [[nodiscard]] std::size_t device_count() const noexcept override { return devices_.size(); }
  [[nodiscard]] const DeviceProfile& device(DeviceId id) const override {
    check_device(id, "device");
    return devices_[index_of(id)]->profile();
  }
  [[nodiscard]] const CostModel& cost(DeviceId id) const override {
    check_device(id, "cost");
    return costs_[index_of(id)];
  }
  [[nodiscard]] std::span<const JobId> arrived_jobs() const noexcept override {
    return sources_.arrived();
  }
  [[nodiscard]] std::span<const DeviceId> gpus() const noexcept override { return gpus_; }
  [[nodiscard]] JobView job(JobId id) const override {
    check_job(id, "job");
    return JobView(states_[index_of(id)]);
  }
  [[nodiscard]] std::uint32_t ops_in_flight(JobId id, DeviceId device) const override {
    check_job(id, "ops_in_flight");
    check_device(device, "ops_in_flight");
    return JobView(states_[index_of(id)]).ops_in_flight(device);
  }
  [[nodiscard]] MemoryStats stats(DeviceId id) const override {
    check_device(id, "memory");
    return placement_.stats(id);
  }
  [[nodiscard]] std::size_t queued(StreamId s) const override {
    check_stream(s, "queued");
    return devices_[index_of(streams_[index_of(s)].device)]->queued(s);
  }
  [[nodiscard]] std::size_t in_flight(StreamId s) const override {
    check_stream(s, "in_flight");
    return devices_[index_of(streams_[index_of(s)].device)]->in_flight(s);
  }
  [[nodiscard]] DeviceId device_of(StreamId s) const override {
    check_stream(s, "device_of");
    return streams_[index_of(s)].device;
  }
  [[nodiscard]] ContextId default_context(DeviceId id) const override {
    check_device(id, "default_context");
    return ContextId{static_cast<std::uint32_t>(index_of(id))};
  }
  [[nodiscard]] TimeNs request_arrival(RequestId r) const override {
    if (!sources_.known(r)) fail("request_arrival", "unknown request");
    return sources_.arrival_ns(r);
  }
  [[nodiscard]] std::size_t request_count() const noexcept override { return sources_.count(); }
  [[nodiscard]] JobId request_job(RequestId r) const override {
    if (!sources_.known(r)) fail("request_job", "unknown request");
    return sources_.job_of(r);
  }
  [[nodiscard]] DurationNs estimate_next_ns(JobId job, DeviceId device,
                                            std::uint32_t layers) const override {
    check_job(job, "estimate_next_ns");
    check_device(device, "estimate_next_ns");
    return progress::estimate_next_ns(states_[index_of(job)], cost_memos_[index_of(device)],
                                      layers);
  }
  [[nodiscard]] DurationNs estimate_unit_ns(JobId job, DeviceId device) const override {
    check_job(job, "estimate_unit_ns");
    check_device(device, "estimate_unit_ns");
    return progress::estimate_unit_ns(states_[index_of(job)], cost_memos_[index_of(device)]);
  }
  [[nodiscard]] DurationNs estimate_allreduce_ns(JobId job,
                                                 std::span<const DeviceId> gpus) const override {
    check_job(job, "estimate_allreduce_ns");
    for (const DeviceId d : gpus) check_device(d, "estimate_allreduce_ns");
    return allreduce_ns(states_[index_of(job)], std::vector<DeviceId>(gpus.begin(), gpus.end()),
                        "estimate_allreduce_ns");
  }
  [[nodiscard]] std::uint64_t load_bytes(JobId job, LayerRange range) const override {
    check_job(job, "load_bytes");
    return progress::load_bytes(states_[index_of(job)], range);
  }
  [[nodiscard]] std::uint64_t ephemeral_bytes(JobId job) const override {
    check_job(job, "ephemeral_bytes");
    return progress::ephemeral_bytes(states_[index_of(job)]);
  }
  [[nodiscard]] std::uint64_t persistent_bytes(JobId job) const override {
    check_job(job, "persistent_bytes");
    return progress::persistent_bytes(states_[index_of(job)]);
  }
  [[nodiscard]] bool fits(JobId job, DeviceId device) const override {
    check_job(job, "fits");
    check_device(device, "fits");
    return placement_.fits(states_[index_of(job)], device);
  }
  [[nodiscard]] bool fits_after(JobId job, DeviceId device,
                                std::uint64_t reserve_bytes) const override {
    check_job(job, "fits_after");
    check_device(device, "fits_after");
    return placement_.fits_after(states_[index_of(job)], device, reserve_bytes);
  }
  [[nodiscard]] std::mt19937_64& rng() noexcept override { return rng_; }
  [[nodiscard]] TimeNs request_deadline(RequestId r) const override {
    if (!sources_.known(r)) fail("request_deadline", "unknown request");
    return sources_.deadline_of(r);
  }
  [[nodiscard]] const ExecTimeWindow& batch_times(JobId job,
                                                  std::uint32_t requests) const override {
    check_job(job, "batch_times");
    return serving_.batch_times(index_of(job), requests);
  }
  [[nodiscard]] const ExecTimeWindow& request_times(JobId job) const override {
    check_job(job, "request_times");
    return serving_.request_times(index_of(job));
  }
  [[nodiscard]] DurationNs estimate_batch_ns(JobId job, DeviceId device,
                                             std::uint32_t requests) const override;

  // Context: commands (engine_commands.cpp)
  ContextId create_context(DeviceId device, ContextOptions options, ContextStart start,
                           std::optional<JobId> build) override;
  StreamId create_stream(ContextId ctx, StreamOptions options) override;
  OpHandle dispatch(JobId job, StreamId stream, DispatchOptions options) override;
  OpHandle load(JobId job, StreamId copy_stream, LayerRange range, LoadOptions options) override;
  void evict(JobId job, DeviceId device) override;
  OpHandle migrate(JobId job, DeviceId to, StreamId copy_stream) override;
  std::size_t preempt(JobId job, PreemptMode mode) override;
  void set_replicas(JobId job, std::span<const StreamId> compute_streams) override;
  OpHandle resize(JobId job, std::span<const StreamId> compute_streams) override;
  OpHandle delay(JobId job, StreamId stream, DurationNs duration_ns) override;
  TimerId set_timer(DurationNs delay_ns, std::uint64_t tag) override;
  void cancel_timer(TimerId id) override;
  void reject(JobId job, std::string_view reason) override;
  void drop_request(RequestId r, std::string_view reason) override;
  void record(std::string_view metric, double value) override;

 private:
  struct ContextInfo {
    DeviceId device{};
    ContextOptions options;
    OpId start_op{};
    bool has_start_op = false;
  };
  struct StreamInfo {
    DeviceId device{};
    ContextId context{};
  };

  // validation helpers
  [[noreturn]] void fail(const std::string& command, const std::string& problem) const {
    throw PolicyError(std::string(policy_.name()), command, problem);
  }
  // Inlined range checks; the message is built out of line (policies call these per op).
  [[noreturn, gnu::cold, gnu::noinline]] void fail_unknown(const char* command, const char* what,
                                                           std::uint64_t id) const {
    fail(command, std::string("unknown ") + what + " " + std::to_string(id));
  }
  void check_job(JobId id, const char* command) const {
    if (index_of(id) >= states_.size()) [[unlikely]]
      fail_unknown(command, "job", raw(id));
  }
  void check_device(DeviceId id, const char* command) const {
    if (index_of(id) >= devices_.size()) [[unlikely]]
      fail_unknown(command, "device", raw(id));
  }
  void check_stream(StreamId id, const char* command) const {
    if (index_of(id) >= streams_.size()) [[unlikely]]
      fail_unknown(command, "stream", raw(id));
  }
  JobState& active_job(JobId id, const char* command);
  bool is_gpu(DeviceId d) const noexcept { return placement_.is_gpu(d); }

  /// Numbers `spec` (sets its id), logs and submits it (no copy of the spec on the way).
  OpId new_op(OpSpec& spec, const OpInfo& info);
  void add_dep(OpSpec& spec, OpId dep, const char* command) const;
  /// Refuses a handle naming an op that was never issued (it would be waited for forever).
  void check_issued(const std::vector<OpHandle>& after, const char* command) const;
  /// Makes `spec` wait for the start-up (process, context) of `stream`'s context, if any.
  void add_context_dep(OpSpec& spec, StreamId stream, const char* command) const;

  /// One op of a dispatch (engine_batching.cpp builds the list): what it runs, at what batch.
  struct OpPiece {
    const Model* model = nullptr;
    LayerRange layers{};
    std::uint32_t batch = 1;  ///< samples
  };
  /// The ops a dispatch of `s` at its cursor issues (D38): one, over `range` at the unit's
  /// batch, unless the service is dynamic, whose batch's members decide what runs (the deepest
  /// exit, the longest input; a compacting model's exits split it into shrinking pieces).
  /// Past the batch's deepest exit an op runs no layer (the pass goes on, empty, so a policy
  /// that issues a pass group by group need not know where its batch exits).
  void plan_pieces(JobState& s, LayerRange range, std::uint32_t members, std::vector<OpPiece>& out);
  // dispatch's parts (engine_dispatch.cpp)
  /// A dynamic service's dispatch: the planned pieces, chained.
  OpHandle dispatch_planned(JobState& s, StreamId stream, DeviceId device,
                            const DispatchOptions& options, LayerRange range,
                            std::uint32_t members);
  /// A training unit serves no requests (refuses options.requests > 1); returns 1.
  std::uint32_t training_unit(const JobState& s, const DispatchOptions& options) const;
  /// The requests the inference unit at the cursor serves (checked).
  [[gnu::always_inline]] std::uint32_t batch_of(const JobState& s,
                                                const DispatchOptions& options) const;
  /// Refuses a dispatch whose layers are not on `device` or whose batch cannot use the
  /// activations held while another batch runs.
  [[gnu::always_inline]] void check_dispatch_memory(const JobState& s, DeviceId device,
                                                    LayerRange needed, std::uint32_t members) const;
  /// A compute op's spec with its dependencies: the context's start, the job's last op, the
  /// loads of `needed`, the policy's `after`.
  [[gnu::always_inline]] OpSpec compute_spec(const JobState& s, StreamId stream, DeviceId device,
                                             LayerRange needed,
                                             const DispatchOptions& options) const;
  /// Fills `spec` with `piece`'s shape and cost and submits it; moves the cursor by
  /// `advance_layers` (0: a planned batch's earlier piece). A `replica` op (data parallelism)
  /// does not move the job's completed cursor when it ends. Returns the op.
  [[gnu::always_inline]] OpId issue_compute(JobState& s, OpSpec& spec, const OpPiece& piece,
                                            DurationNs setup_ns, std::uint32_t advance_layers,
                                            std::uint32_t members, bool replica = false);
  /// Solo time of one request's drawn work at the service's batch, on `device`.
  DurationNs request_solo_ns(const JobState& s, std::uint32_t work, DeviceId device);

  // data parallelism (engine_replicas.cpp; the replicated dispatch in engine_dispatch.cpp)
  /// Checks `streams` as a job's replicas (set_replicas, resize); returns their GPUs.
  std::vector<DeviceId> check_replicas(const JobState& s, std::span<const StreamId> streams,
                                       const char* command) const;
  /// Makes `streams` (checked) the job's replicas: width, per-GPU batch, all-reduce time.
  void apply_replicas(JobState& s, std::span<const StreamId> streams,
                      const std::vector<DeviceId>& devices);
  /// The ring all-reduce of the job's gradients over `devices`, ns (0 for one GPU).
  DurationNs allreduce_ns(const JobState& s, const std::vector<DeviceId>& devices,
                          const char* command) const;
  /// A dispatch of a job on several GPUs: the op on every replica (and, for the update pass,
  /// the all-reduce before it and the barrier after it).
  OpHandle dispatch_replicated(JobState& s, StreamId stream, const DispatchOptions& options,
                               LayerRange range);
  /// A host op of `duration_ns` with `purpose` on `stream` for job `s`, waiting for `deps`
  /// (through zero-length barriers when they are more than an op may wait for).
  OpId host_op(JobState& s, StreamId stream, OpPurpose purpose, DurationNs duration_ns,
               std::span<const OpId> deps, const Cursor& before, const Cursor& after,
               bool ends_unit);
  /// Forgets the job's latest op on every replica (its ops were aborted).
  static void forget_last_ops(JobState& s) noexcept;

  // the job state machine (engine.cpp)
  /// The unit of `s` that op record `r` ends is complete: a training iteration, or a batch of
  /// `requests` requests (the oldest pending ones).
  void complete_unit(JobState& s, const OpRecord& r, std::uint32_t requests);
  void finish_job(JobState& s, EndReason how, std::string_view detail = {});
  /// Ends a tuning trial as stopped (TuningDriver): its ops aborted, then finish_job; a slot
  /// that never arrived just ends (no hook: the policy never saw it).
  void stop_trial(JobState& s);
  /// Aborts every op of `s` in flight (as reject does); it loses its unfinished unit.
  void abort_job_ops(JobState& s);
  void rewind(JobState& s, const OpInfo& info, bool lose_unit);
  /// Throws the TraceError (exit 2) of a run whose clock cannot advance (ClockStallGuard):
  /// names the zero-length op, its job's model (file) and the device profile.
  [[noreturn, gnu::cold]] void fail_stalled_clock(const OpInfo& info) const;

  Platform& platform_;
  Runtime& runtime_;
  Policy& policy_;
  const ModelSource& models_;
  EngineOptions options_;
  std::vector<Device*> devices_;
  std::vector<DeviceId> gpus_;  // the GPU devices, in order (Context::gpus)
  std::vector<CostModel> costs_;
  mutable std::vector<OpCostMemo> cost_memos_;  // per device, over costs_ (dispatch hot path)

  std::vector<JobSpec> specs_;
  std::vector<JobState> states_;  // by job id; sized once (sources_ keeps a span)
  EngineEvents events_;
  HookQueue hooks_;
  Placement placement_;
  RequestSources sources_;
  TuningDriver tuning_;
  mutable ServingState serving_;
  std::vector<OpPiece> pieces_;              // plan_pieces' output, reused
  std::vector<std::uint32_t> work_scratch_;  // plan_pieces' members' work, reused
  std::vector<ContextInfo> contexts_;
  std::vector<StreamInfo> streams_;
  OpTable<OpInfo> ops_;          // finished ops are released: memory O(ops in flight)
  std::vector<TimerId> timers_;  // engine timer id -> runtime timer id
  std::vector<bool> timer_live_;
  std::mt19937_64 rng_;
  std::size_t done_jobs_ = 0;
  ClockStallGuard stall_guard_;
  bool in_abort_ = false;  // inside Device::abort(): its Aborted reports are the kill itself
};

}  // namespace gpumux
